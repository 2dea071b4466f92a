//! Expressions WGSL evaluates when the shader is created. WGSL is stricter
//! with those than at run time (a constant shift that drops set bits is an
//! error, where Metal discards them), and naga's constant evaluator has
//! gaps, so lowering recognises constant operands and shapes them.

use crate::lower::ctx::function::FnCtx;
use crate::lower::{Lowerer, Span};
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal};

impl Lowerer<'_, '_> {
    /// `a << s` of two 32-bit constants, computed here. WGSL makes a
    /// constant left shift that drops set bits a shader-creation error
    /// (Tint enforces it: `0xFFFFFFFFu << 4`), where C++ and Metal simply
    /// discard them.
    pub(in crate::lower) fn fold_left_shift(
        &mut self,
        fx: &mut FnCtx,
        a: Handle<Expression>,
        amount: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Option<Handle<Expression>> {
        let literals = (
            self.constant_literal(fx, a),
            self.constant_literal(fx, amount),
        );
        if let (Some(v), Some(Literal::U32(s))) = literals {
            let folded = match v {
                Literal::U32(v) => Literal::U32(v.wrapping_shl(s & 31)),
                Literal::I32(v) => Literal::I32(v.wrapping_shl(s & 31)),
                _ => return None,
            };
            return Some(fx.add(Expression::Literal(folded), span));
        }
        // Other constant operands (`(k + 1) << n`) stay a WGSL constant
        // expression: clear the bits that would be shifted out first, on the
        // bits of the value, so the shift cannot overflow.
        let signed = match ty.element_scalar() {
            Some(Scalar::Int) => true,
            Some(Scalar::UInt) => false,
            _ => return None,
        };
        if !(is_constant_tree(fx, a) && is_constant_tree(fx, amount)) {
            return None;
        }
        let bits = |fx: &mut FnCtx, h, kind| {
            fx.add(
                Expression::As {
                    expr: h,
                    kind,
                    convert: None,
                },
                span,
            )
        };
        let word = if signed {
            bits(fx, a, naga::ScalarKind::Uint)
        } else {
            a
        };
        let mut ones = fx.add(Expression::Literal(Literal::U32(u32::MAX)), span);
        if let Type::Vector(_, n) = *ty {
            ones = fx.add(
                Expression::Splat {
                    size: crate::lower::types::vector_size(n),
                    value: ones,
                },
                span,
            );
        }
        let kept = fx.add(
            Expression::Binary {
                op: Bo::ShiftRight,
                left: ones,
                right: amount,
            },
            span,
        );
        let masked = fx.add(
            Expression::Binary {
                op: Bo::And,
                left: word,
                right: kept,
            },
            span,
        );
        let shifted = fx.add(
            Expression::Binary {
                op: Bo::ShiftLeft,
                left: masked,
                right: amount,
            },
            span,
        );
        Some(if signed {
            bits(fx, shifted, naga::ScalarKind::Sint)
        } else {
            shifted
        })
    }

    /// The literal `h` is, directly or as a module constant.
    pub(in crate::lower) fn constant_literal(
        &self,
        fx: &FnCtx,
        h: Handle<Expression>,
    ) -> Option<Literal> {
        match *fx.expr(h) {
            Expression::Literal(l) => Some(l),
            Expression::Unary {
                op: naga::UnaryOperator::Negate,
                expr,
            } => match self.constant_literal(fx, expr)? {
                Literal::I32(v) => Some(Literal::I32(v.wrapping_neg())),
                _ => None,
            },
            Expression::Constant(c) => {
                match self.global.module.global_expressions[self.global.module.constants[c].init] {
                    Expression::Literal(l) => Some(l),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// True if `h` is made only of literals and module constants: WGSL
/// evaluates it when the shader is created.
pub(in crate::lower) fn is_constant_tree(fx: &FnCtx, h: Handle<Expression>) -> bool {
    match *fx.expr(h) {
        Expression::Literal(_) | Expression::Constant(_) | Expression::ZeroValue(_) => true,
        // Anything else is constant when it has operands and all are (a
        // `Load` has its pointer, never constant).
        ref e => {
            let operands = crate::lower::ctx::function::operands(e);
            !operands.is_empty() && operands.into_iter().all(|o| is_constant_tree(fx, o))
        }
    }
}
