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
        // The operations WGSL's constant expressions may use are constant
        // when all their operands are.
        ref e @ (Expression::Compose { .. }
        | Expression::Access { .. }
        | Expression::AccessIndex { .. }
        | Expression::Splat { .. }
        | Expression::Swizzle { .. }
        | Expression::Unary { .. }
        | Expression::Binary { .. }
        | Expression::Select { .. }
        | Expression::Relational { .. }
        | Expression::Math { .. }
        | Expression::As { .. }) => {
            let mut constant = true;
            crate::lower::passes::operands::for_each(e, |o| {
                constant = constant && is_constant_tree(fx, o)
            });
            constant
        }
        // Values of the running shader: loads, image operations,
        // derivatives, variables, arguments, results.
        _ => false,
    }
}

/// The lanes of a constant expression (one for a scalar), computed as WGSL
/// computes them when the shader is created, with the kind of its scalars.
/// A lane that WGSL rejects there (a non-finite float, an integer that
/// overflows or divides by zero) is a NaN or an infinity. `None`: not a
/// constant, or not one this evaluator follows.
fn creation_lanes(
    module: &naga::Module,
    exprs: &naga::Arena<Expression>,
    h: Handle<Expression>,
    depth: u32,
) -> Option<(naga::Scalar, Vec<f64>)> {
    use naga::{Scalar as S, ScalarKind as K};
    if depth > 64 {
        return None;
    }
    let sub = |h| creation_lanes(module, exprs, h, depth + 1);
    Some(match exprs[h] {
        Expression::Literal(l) => match l {
            Literal::F32(v) => (S::F32, vec![v.into()]),
            Literal::F16(v) => (S::F16, vec![v.to_f64()]),
            Literal::I32(v) => (S::I32, vec![v.into()]),
            Literal::U32(v) => (S::U32, vec![v.into()]),
            _ => return None,
        },
        Expression::Constant(c) => creation_lanes(
            module,
            &module.global_expressions,
            module.constants[c].init,
            depth + 1,
        )?,
        Expression::ZeroValue(ty) => match module.types[ty].inner {
            naga::TypeInner::Scalar(s) => (s, vec![0.0]),
            naga::TypeInner::Vector { size, scalar } => (scalar, vec![0.0; size as usize]),
            _ => return None,
        },
        Expression::Splat { size, value } => {
            let (s, v) = sub(value)?;
            (s, vec![*v.first()?; size as usize])
        }
        Expression::Compose { ty, ref components } => {
            let naga::TypeInner::Vector { scalar, .. } = module.types[ty].inner else {
                return None;
            };
            let mut lanes = Vec::new();
            for &c in components {
                lanes.extend(sub(c)?.1);
            }
            (scalar, lanes)
        }
        Expression::Unary {
            op: naga::UnaryOperator::Negate,
            expr,
        } => {
            let (s, v) = sub(expr)?;
            (s, v.into_iter().map(|x| fit(s, -x)).collect())
        }
        Expression::As {
            expr,
            kind,
            convert: Some(width),
        } => {
            let (_, v) = sub(expr)?;
            let s = S { kind, width };
            let lanes = v.into_iter().map(|x| match kind {
                // Float to integer conversions truncate (and WGSL clamps).
                K::Sint => x.trunc().clamp(i32::MIN as f64, i32::MAX as f64),
                K::Uint => x.trunc().clamp(0.0, u32::MAX as f64),
                _ => fit(s, x),
            });
            (s, lanes.collect())
        }
        Expression::Binary { op, left, right } => binary_lanes(op, sub(left)?, sub(right)?)?,
        Expression::Math {
            fun,
            arg,
            arg1,
            arg2: None,
            ..
        } => {
            use naga::MathFunction as Mf;
            let (s, a) = sub(arg)?;
            let b = match arg1 {
                Some(h) => Some(sub(h)?.1),
                None => None,
            };
            let f: fn(f64, f64) -> f64 = match fun {
                Mf::Sqrt => |x, _| x.sqrt(),
                Mf::InverseSqrt => |x, _| 1.0 / x.sqrt(),
                Mf::Log => |x, _| x.ln(),
                Mf::Log2 => |x, _| x.log2(),
                Mf::Exp => |x, _| x.exp(),
                Mf::Exp2 => |x, _| x.exp2(),
                Mf::Pow => |x, y| x.powf(y),
                Mf::Asin => |x, _| x.asin(),
                Mf::Acos => |x, _| x.acos(),
                Mf::Acosh => |x, _| x.acosh(),
                Mf::Atanh => |x, _| x.atanh(),
                Mf::Sinh => |x, _| x.sinh(),
                Mf::Cosh => |x, _| x.cosh(),
                _ => return None,
            };
            if s.kind != K::Float || b.as_ref().is_some_and(|b| b.len() != a.len()) {
                return None;
            }
            let lanes = a
                .iter()
                .enumerate()
                .map(|(i, x)| fit(s, f(*x, b.as_ref().map_or(0.0, |b| b[i]))));
            (s, lanes.collect())
        }
        _ => return None,
    })
}

/// A value of `s` as WGSL holds it: floats rounded to their width,
/// integers out of range rejected (a NaN).
fn fit(s: naga::Scalar, v: f64) -> f64 {
    use naga::ScalarKind as K;
    match (s.kind, s.width) {
        (K::Float, 2) => half::f16::from_f64(v).to_f64(),
        (K::Float, _) => v as f32 as f64,
        (K::Sint, _) if v.is_finite() && !(i32::MIN as f64..=i32::MAX as f64).contains(&v) => {
            f64::NAN
        }
        (K::Uint, _) if v.is_finite() && !(0.0..=u32::MAX as f64).contains(&v) => f64::NAN,
        _ => v,
    }
}

/// The lanes of `a op b` (arithmetic only), a scalar operand applying to
/// every lane of a vector one.
fn binary_lanes(
    op: Bo,
    (s, a): (naga::Scalar, Vec<f64>),
    (t, b): (naga::Scalar, Vec<f64>),
) -> Option<(naga::Scalar, Vec<f64>)> {
    if s != t || a.is_empty() || b.is_empty() {
        return None;
    }
    let n = a.len().max(b.len());
    let lane = |v: &[f64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
    let float = s.kind == naga::ScalarKind::Float;
    let mut lanes = Vec::with_capacity(n);
    for i in 0..n {
        let (x, y) = (lane(&a, i), lane(&b, i));
        let r = match op {
            Bo::Add => x + y,
            Bo::Subtract => x - y,
            Bo::Multiply => x * y,
            Bo::Divide if float => x / y,
            Bo::Divide if y == 0.0 => f64::NAN,
            Bo::Divide => (x / y).trunc(),
            Bo::Modulo if float => x % y,
            Bo::Modulo if y == 0.0 => f64::NAN,
            Bo::Modulo => x % y,
            _ => return None,
        };
        lanes.push(fit(s, r));
    }
    Some((s, lanes))
}

impl Lowerer<'_, '_> {
    /// True if WGSL would evaluate `left op right` when the shader is
    /// created and reject the module for its value: `0.0 / 0.0`,
    /// `1.0 / 0.0`, `INT_MAX + 1`, `1 / 0`. Metal computes these (NaNs,
    /// infinities; the integer cases are undefined behaviour). naga rejects
    /// an integer division by a constant zero in the IR already, so this is
    /// asked before the operation is built.
    pub(in crate::lower) fn binary_rejected_at_creation(
        &self,
        fx: &FnCtx,
        op: Bo,
        left: Handle<Expression>,
        right: Handle<Expression>,
    ) -> bool {
        let lanes = |h| creation_lanes(&self.global.module, &fx.function.expressions, h, 0);
        let (Some(a), Some(b)) = (lanes(left), lanes(right)) else {
            return false;
        };
        binary_lanes(op, a, b).is_some_and(|(_, lanes)| lanes.iter().any(|v| !v.is_finite()))
    }

    /// True if WGSL would evaluate `h` when the shader is created and
    /// reject the module for its value (`sqrt(-1.0)`, `exp(1000.0)`).
    pub(in crate::lower) fn rejected_at_creation(&self, fx: &FnCtx, h: Handle<Expression>) -> bool {
        creation_lanes(&self.global.module, &fx.function.expressions, h, 0)
            .is_some_and(|(_, lanes)| lanes.iter().any(|v| !v.is_finite()))
    }

    /// `h` (of type `ty`) read back from a local variable: the same value,
    /// which WGSL computes at run time (a `Load` is never constant).
    pub(in crate::lower) fn at_run_time(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> crate::lower::Result<Handle<Expression>> {
        let ty_h = self.naga_type(ty, span)?;
        let var = fx.local("metal_run_time", ty_h, span);
        let pointer = fx.add(Expression::LocalVariable(var), span);
        fx.push(naga::Statement::Store { pointer, value: h }, span);
        Ok(fx.add(Expression::Load { pointer }, span))
    }

    /// A non-finite float constant (`f`, of scalar `s`), made at run time
    /// from its bits: WGSL has no literal for it, and rejects a constant
    /// expression that yields one.
    pub(in crate::lower) fn non_finite_constant(
        &mut self,
        fx: &mut FnCtx,
        f: f64,
        s: Scalar,
        span: Span,
    ) -> crate::lower::Result<Handle<Expression>> {
        // A `half` beyond binary16's range is an infinity already, also where
        // `half` travels as `f32` (`HalfMode::F32`).
        let f = match s {
            Scalar::Half => half::f16::from_f64(f).to_f64(),
            _ => f,
        };
        let bits = fx.add(
            Expression::Literal(Literal::U32((f as f32).to_bits())),
            span,
        );
        let bits = self.at_run_time(fx, bits, &Type::UINT, span)?;
        let mut value = fx.add(
            Expression::As {
                expr: bits,
                kind: naga::ScalarKind::Float,
                convert: None,
            },
            span,
        );
        let target = self.naga_scalar(s);
        if target.width != 4 {
            value = fx.add(
                Expression::As {
                    expr: value,
                    kind: naga::ScalarKind::Float,
                    convert: Some(target.width),
                },
                span,
            );
        }
        Ok(value)
    }
}
