//! Integer `/` and `%`, written so that every WGSL consumer computes WGSL's
//! values, not only the ones that implement its rules for these operators.
//!
//! **Metal** (C++): integer division truncates toward zero and `a % b` has
//! the sign of `a`, with `(a / b) * b + a % b == a`; division or remainder
//! by zero, and `INT_MIN / -1` (and so `INT_MIN % -1`), are undefined
//! behaviour.
//!
//! **WGSL** defines every case: the same truncating results, and for the
//! cases C++ leaves undefined `e1 / 0` is `e1`, `MIN / -1` is `MIN`, and
//! `e1 % 0` and `MIN % -1` are `0`.
//!
//! **Backends**: naga's SPIR-V writer implements those rules (its wrapped
//! `naga_div`/`naga_mod` functions), but its GLSL writer, which wgpu's GL
//! backend uses, prints WGSL's `/` and `%` as GLSL's. GLSL leaves division
//! by zero unspecified and `%` with a negative operand undefined; llvmpipe
//! computes an unsigned remainder there (`-47 % 9 == 2`).
//!
//! **Mapping**: the divisor becomes `1` where WGSL's special cases apply,
//! `d = select(b, 1, b == 0 | (a == MIN & b == -1))`, which yields WGSL's
//! value for both operators in those cases (`a / 1 == a`, and `a % 1 == 0`
//! below; the special case `MIN / -1 == MIN` is `MIN / 1`). Signed `%` is
//! then `a - d * (a / d)`, which GLSL defines for negative operands;
//! unsigned `%` stays `a % d`, which it defines. A constant divisor other
//! than `0` (and `-1` when signed) needs no guard, and a division of two
//! constants is left alone: WGSL evaluates it when the shader is created.

use crate::lower::ctx::function::FnCtx;
use crate::lower::types::vector_size;
use crate::lower::Lowerer;
use crate::source_map::Span;
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, ScalarKind};

/// What is known of an operand when the translation runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Known {
    /// Its value is computed at run time (or it is a constant this module
    /// does not look into).
    RunTime,
    /// A constant with no lane equal to `0` or `-1`.
    SafeDivisor,
    /// Another constant.
    Constant,
}

/// The lanes of `h` when it is a literal, a splat of one or a vector of
/// literals (what the lowering builds for constant operands), as `i128`.
fn literal_lanes(fx: &FnCtx, h: Handle<Expression>) -> Option<Vec<i128>> {
    let lane = |h| match *fx.expr(h) {
        Expression::Literal(Literal::I32(v)) => Some(i128::from(v)),
        Expression::Literal(Literal::U32(v)) => Some(i128::from(v)),
        Expression::Literal(Literal::I64(v)) => Some(i128::from(v)),
        Expression::Literal(Literal::U64(v)) => Some(i128::from(v)),
        _ => None,
    };
    match *fx.expr(h) {
        // `-7` is a negated literal.
        Expression::Unary {
            op: naga::UnaryOperator::Negate,
            expr,
        } => Some(literal_lanes(fx, expr)?.into_iter().map(|v| -v).collect()),
        Expression::Literal(_) => Some(vec![lane(h)?]),
        Expression::Splat { value, .. } => Some(vec![lane(value)?]),
        Expression::Compose { ref components, .. } => components.iter().map(|&c| lane(c)).collect(),
        _ => None,
    }
}

/// Classifies operand `h`; `-1` only matters for a signed division.
fn known(fx: &FnCtx, h: Handle<Expression>, signed: bool) -> Known {
    match literal_lanes(fx, h) {
        None => Known::RunTime,
        Some(lanes) if lanes.iter().any(|&v| v == 0 || (signed && v == -1)) => Known::Constant,
        Some(_) => Known::SafeDivisor,
    }
}

/// The literal `v` of the integer scalar `s`.
fn int_literal(s: naga::Scalar, v: i64) -> Literal {
    match (s.kind, s.width) {
        (ScalarKind::Sint, 8) => Literal::I64(v),
        (ScalarKind::Uint, 8) => Literal::U64(v as u64),
        (ScalarKind::Sint, _) => Literal::I32(v as i32),
        _ => Literal::U32(v as u32),
    }
}

impl Lowerer<'_, '_> {
    /// `a / b` or `a % b` (`op`) of integer operands of naga scalar `s` and
    /// `size` lanes (1 for a scalar), with WGSL's values on every backend.
    pub(in crate::lower) fn integer_division(
        &mut self,
        fx: &mut FnCtx,
        op: Bo,
        (a, b): (Handle<Expression>, Handle<Expression>),
        (s, size): (naga::Scalar, u8),
        span: Span,
    ) -> Handle<Expression> {
        let signed = s.kind == ScalarKind::Sint;
        let bin =
            |fx: &mut FnCtx, op, left, right| fx.add(Expression::Binary { op, left, right }, span);
        let divisor = known(fx, b, signed);
        if divisor != Known::RunTime && known(fx, a, signed) != Known::RunTime {
            return bin(fx, op, a, b);
        }
        let d = match divisor {
            Known::SafeDivisor => b,
            _ => self.guarded_divisor(fx, (a, b), (s, size), span),
        };
        if !(signed && op == Bo::Modulo) {
            return bin(fx, op, a, d);
        }
        let quotient = bin(fx, Bo::Divide, a, d);
        let product = bin(fx, Bo::Multiply, d, quotient);
        bin(fx, Bo::Subtract, a, product)
    }

    /// `select(b, 1, b == 0 | (a == MIN & b == -1))` (without the second
    /// test when unsigned).
    fn guarded_divisor(
        &mut self,
        fx: &mut FnCtx,
        (a, b): (Handle<Expression>, Handle<Expression>),
        (s, size): (naga::Scalar, u8),
        span: Span,
    ) -> Handle<Expression> {
        let constant = |fx: &mut FnCtx, v: i64| {
            let h = fx.add(Expression::Literal(int_literal(s, v)), span);
            match size {
                1 => h,
                n => fx.add(
                    Expression::Splat {
                        size: vector_size(n),
                        value: h,
                    },
                    span,
                ),
            }
        };
        let bin =
            |fx: &mut FnCtx, op, left, right| fx.add(Expression::Binary { op, left, right }, span);
        let zero = constant(fx, 0);
        let mut special = bin(fx, Bo::Equal, b, zero);
        if s.kind == ScalarKind::Sint {
            let min = match s.width {
                8 => i64::MIN,
                _ => i64::from(i32::MIN),
            };
            let min = constant(fx, min);
            let minus_one = constant(fx, -1);
            let a_min = bin(fx, Bo::Equal, a, min);
            let b_minus_one = bin(fx, Bo::Equal, b, minus_one);
            let overflow = bin(fx, Bo::And, a_min, b_minus_one);
            special = bin(fx, Bo::InclusiveOr, special, overflow);
        }
        let one = constant(fx, 1);
        fx.add(
            Expression::Select {
                condition: special,
                accept: one,
                reject: b,
            },
            span,
        )
    }
}
