//! 8- and 16-bit integers (`char`, `uchar`, `short`, `ushort` and their
//! vectors) outside buffers: held in 32-bit values, sign- or zero-extended,
//! and truncated whenever C++ would produce a value of the narrow type
//! (conversions to it, and arithmetic on narrow *vectors*, which Clang's
//! vector model does not promote).

use crate::lower::ctx::function::FnCtx;
use crate::lower::types::vector_size;
use crate::lower::Lowerer;
use crate::source_map::Span;
use crate::types::{Scalar, Type};
use naga::{Expression, Handle, Literal};

/// `char`, `uchar`, `short`, `ushort`.
pub(in crate::lower) fn is_narrow(s: Scalar) -> bool {
    matches!(
        s,
        Scalar::Char | Scalar::UChar | Scalar::Short | Scalar::UShort
    )
}

/// True if every value of `from` is a value of the narrow type `to`.
pub(in crate::lower) fn fits(from: Scalar, to: Scalar) -> bool {
    let bits = |s: Scalar| s.size() * 8;
    match (from.is_signed_integer(), to.is_signed_integer()) {
        _ if from == Scalar::Bool => true,
        _ if !from.is_integer() => false,
        (false, false) => bits(from) <= bits(to),
        (false, true) => bits(from) < bits(to),
        (true, true) => bits(from) <= bits(to),
        (true, false) => false,
    }
}

impl Lowerer<'_, '_> {
    /// Wraps a 32-bit value (scalar or vector) to the narrow type of `ty`.
    pub(in crate::lower) fn truncate(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Handle<Expression> {
        let s = ty.element_scalar().expect("a narrow scalar or vector");
        let bits = s.size() * 8;
        let size = ty.vector_size().unwrap_or(1);
        if s.is_signed_integer() {
            // extractBits on a signed value sign-extends the field.
            let offset = fx.add(Expression::Literal(Literal::U32(0)), span);
            let count = fx.add(Expression::Literal(Literal::U32(bits)), span);
            return fx.add(
                Expression::Math {
                    fun: naga::MathFunction::ExtractBits,
                    arg: h,
                    arg1: Some(offset),
                    arg2: Some(count),
                    arg3: None,
                },
                span,
            );
        }
        let mut mask = fx.add(Expression::Literal(Literal::U32((1u32 << bits) - 1)), span);
        if size > 1 {
            mask = fx.add(
                Expression::Splat {
                    size: vector_size(size),
                    value: mask,
                },
                span,
            );
        }
        fx.add(
            Expression::Binary {
                op: naga::BinaryOperator::And,
                left: h,
                right: mask,
            },
            span,
        )
    }
}
