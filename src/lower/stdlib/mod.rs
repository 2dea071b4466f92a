//! The metal_stdlib functions and constants this version translates
//! (MSL §6; mapping doc §6).

pub(in crate::lower) mod as_type;
pub(in crate::lower) mod atomics;
pub(in crate::lower) mod integer;
pub(in crate::lower) mod math;
pub(in crate::lower) mod quad;
pub(in crate::lower) mod simd;
pub(in crate::lower) mod texture_ops;
pub(in crate::lower) mod textures;

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval::ConstValue;
use crate::sema::conversions;
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind};
use crate::types::{Scalar, Type};
use naga::{Expression, Handle, MathFunction as Mf};

/// Which argument types a function takes and what it returns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// All arguments float, same type; returns that type.
    Float,
    /// All arguments numeric, same type; returns that type.
    Numeric,
    /// Integer arguments; returns that type.
    Integer,
    /// Float vectors; returns the element scalar (dot, length, distance).
    FloatToScalar,
}

fn math(name: &str) -> Option<(Mf, usize, Shape)> {
    use Shape::*;
    Some(match name {
        "abs" => (Mf::Abs, 1, Numeric),
        "fabs" => (Mf::Abs, 1, Float),
        "min" => (Mf::Min, 2, Numeric),
        "fmin" => (Mf::Min, 2, Float),
        "max" => (Mf::Max, 2, Numeric),
        "fmax" => (Mf::Max, 2, Float),
        "clamp" => (Mf::Clamp, 3, Numeric),
        "saturate" => (Mf::Saturate, 1, Float),
        "mix" => (Mf::Mix, 3, Float),
        "sign" => (Mf::Sign, 1, Float),
        "step" => (Mf::Step, 2, Float),
        "smoothstep" => (Mf::SmoothStep, 3, Float),
        "fma" => (Mf::Fma, 3, Float),
        "sqrt" => (Mf::Sqrt, 1, Float),
        "rsqrt" => (Mf::InverseSqrt, 1, Float),
        "sin" => (Mf::Sin, 1, Float),
        "cos" => (Mf::Cos, 1, Float),
        "tan" => (Mf::Tan, 1, Float),
        "asin" => (Mf::Asin, 1, Float),
        "acos" => (Mf::Acos, 1, Float),
        "atan" => (Mf::Atan, 1, Float),
        "atan2" => (Mf::Atan2, 2, Float),
        "sinh" => (Mf::Sinh, 1, Float),
        "cosh" => (Mf::Cosh, 1, Float),
        "tanh" => (Mf::Tanh, 1, Float),
        "asinh" => (Mf::Asinh, 1, Float),
        "acosh" => (Mf::Acosh, 1, Float),
        "atanh" => (Mf::Atanh, 1, Float),
        "exp" => (Mf::Exp, 1, Float),
        "exp2" => (Mf::Exp2, 1, Float),
        "log" => (Mf::Log, 1, Float),
        "log2" => (Mf::Log2, 1, Float),
        "pow" | "powr" => (Mf::Pow, 2, Float),
        "floor" => (Mf::Floor, 1, Float),
        "ceil" => (Mf::Ceil, 1, Float),
        "trunc" => (Mf::Trunc, 1, Float),
        "rint" => (Mf::Round, 1, Float),
        "dot" => (Mf::Dot, 2, FloatToScalar),
        "length" => (Mf::Length, 1, FloatToScalar),
        "distance" => (Mf::Distance, 2, FloatToScalar),
        "normalize" => (Mf::Normalize, 1, Float),
        "cross" => (Mf::Cross, 2, Float),
        "reflect" => (Mf::Reflect, 2, Float),
        "refract" => (Mf::Refract, 3, Float),
        "faceforward" => (Mf::FaceForward, 3, Float),
        "popcount" => (Mf::CountOneBits, 1, Integer),
        "clz" => (Mf::CountLeadingZeros, 1, Integer),
        "ctz" => (Mf::CountTrailingZeros, 1, Integer),
        "reverse_bits" => (Mf::ReverseBits, 1, Integer),
        _ => return None,
    })
}

/// Named constants of `metal_math` (MSL Table 6.5).
pub(in crate::lower) fn constant(name: &str) -> Option<ConstValue> {
    use std::f64::consts as c;
    let f = |v: f64| Some(ConstValue::Float(v as f32 as f64, Scalar::Float));
    match name {
        "M_PI_F" => f(c::PI),
        "M_PI_2_F" => f(c::FRAC_PI_2),
        "M_PI_4_F" => f(c::FRAC_PI_4),
        "M_1_PI_F" => f(c::FRAC_1_PI),
        "M_2_PI_F" => f(c::FRAC_2_PI),
        "M_2_SQRTPI_F" => f(c::FRAC_2_SQRT_PI),
        "M_E_F" => f(c::E),
        "M_LOG2E_F" => f(c::LOG2_E),
        "M_LOG10E_F" => f(c::LOG10_E),
        "M_LN2_F" => f(c::LN_2),
        "M_LN10_F" => f(c::LN_10),
        "M_SQRT2_F" => f(c::SQRT_2),
        "M_SQRT1_2_F" => f(c::FRAC_1_SQRT_2),
        "MAXFLOAT" | "FLT_MAX" => f(f32::MAX as f64),
        "FLT_MIN" => f(f32::MIN_POSITIVE as f64),
        "FLT_EPSILON" => f(f32::EPSILON as f64),
        "INT_MAX" => Some(ConstValue::Int(i32::MAX as i64, Scalar::Int)),
        "INT_MIN" => Some(ConstValue::Int(i32::MIN as i64, Scalar::Int)),
        "UINT_MAX" => Some(ConstValue::Int(u32::MAX as i64, Scalar::UInt)),
        _ => None,
    }
}

/// Library functions whose result is one of their (already rounded)
/// operands, or an integer no larger than one: nothing to round.
fn returns_an_operand(name: &str) -> bool {
    matches!(
        name,
        "abs"
            | "fabs"
            | "min"
            | "max"
            | "fmin"
            | "fmax"
            | "clamp"
            | "saturate"
            | "select"
            | "floor"
            | "ceil"
            | "trunc"
            | "rint"
            | "round"
            | "sign"
            | "copysign"
            | "step"
    ) || name.starts_with("simd_shuffle")
        || name.starts_with("simd_broadcast")
        || name.starts_with("quad_shuffle")
        || name.starts_with("quad_broadcast")
}

impl Lowerer<'_, '_> {
    pub(in crate::lower) fn stdlib_constant(
        &mut self,
        fx: &mut FnCtx,
        v: ConstValue,
        span: Span,
    ) -> Value {
        self.const_value(fx, &v, span)
    }

    /// A call to a library function; `None` if `name` is not one. With
    /// `half` as `f32`, a `half` result is computed in `f32` and rounded once.
    pub(in crate::lower) fn library_call(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        Ok(match self.library_call_unrounded(fx, name, args, span)? {
            Some(Value::Rv(h, ty)) if !returns_an_operand(name) => {
                Some(Value::Rv(self.round_half_value(fx, h, &ty, span), ty))
            }
            other => other,
        })
    }

    fn library_call_unrounded(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        if let Some(v) = self.subgroup_call(fx, name, args, span)? {
            return Ok(Some(v));
        }
        if let Some(v) = self.atomic_call(fx, name, args, span)? {
            return Ok(Some(v));
        }
        if let Some(v) = self.math_library_call(fx, name, args, span)? {
            return Ok(Some(v));
        }
        match name {
            "discard_fragment" => {
                if !fx.fragment {
                    return Err(Error::new(
                        span,
                        "`discard_fragment` is only available in fragment functions",
                    ));
                }
                fx.push(naga::Statement::Kill, span);
                return Ok(Some(Value::Void));
            }
            "dfdx" | "dfdy" | "fwidth" => return self.derivative(fx, name, args, span).map(Some),
            "threadgroup_barrier" | "simdgroup_barrier" => {
                return self.barrier(fx, name, args, span).map(Some)
            }
            "all" | "any" => return self.relational(fx, name, args, span).map(Some),
            "select" => return self.select_call(fx, args, span).map(Some),
            "fmod" => {
                let (a, b, ty) = self.two_floats(fx, args, span)?;
                return Ok(Some(Value::Rv(
                    fx.add(
                        Expression::Binary {
                            op: naga::BinaryOperator::Modulo,
                            left: a,
                            right: b,
                        },
                        span,
                    ),
                    ty,
                )));
            }
            "round" => return self.round(fx, args, span).map(Some),
            "fract" => return self.fract(fx, args, span).map(Some),
            _ => {}
        }
        let Some((fun, arity, shape)) = math(name) else {
            return Ok(None);
        };
        if args.len() != arity {
            return Err(Error::new(
                span,
                format!("`{name}` takes {arity} argument(s), {} given", args.len()),
            ));
        }
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.rvalue(fx, a)?);
        }
        let ty = self.common_argument_type(name, &vals, shape, span)?;
        let mut hs = Vec::new();
        for (h, t) in &vals {
            hs.push(self.convert(fx, *h, t, &ty, false, span)?);
        }
        // `mix(x, y, a)` also accepts a scalar `a`; naga does too, but the splat is harmless.
        let result_ty = if shape == Shape::FloatToScalar {
            Type::Scalar(ty.element_scalar().unwrap())
        } else {
            ty.clone()
        };
        if fun == Mf::Cross && ty.vector_size() != Some(3) {
            return Err(Error::new(span, "`cross` takes 3-component vectors"));
        }
        let expr = Expression::Math {
            fun,
            arg: hs[0],
            arg1: hs.get(1).copied(),
            arg2: hs.get(2).copied(),
            arg3: None,
        };
        // abs(char(-128)) wraps back into the narrow type, as in Metal.
        let h = fx.add(expr, span);
        let h = self.narrow_result(fx, h, &result_ty, span);
        Ok(Some(Value::Rv(h, result_ty)))
    }

    /// The type all arguments convert to: the vector shape if any argument is
    /// a vector, its element type, else the usual arithmetic conversions.
    fn common_argument_type(
        &self,
        name: &str,
        vals: &[(Handle<Expression>, Type)],
        shape: Shape,
        span: Span,
    ) -> Result<Type> {
        let bad = |t: &Type| {
            Error::new(
                span,
                format!(
                    "no matching function for call to `{name}` with an argument of type `{}`",
                    self.program.display(t)
                ),
            )
            .with_code(crate::diagnostics::Code::NoMatchingOverload)
        };
        let mut size = 1;
        let mut elem: Option<Scalar> = None;
        for (_, t) in vals {
            match t {
                Type::Scalar(_) | Type::Vector(..) => {}
                _ => return Err(bad(t)),
            }
            let n = t.vector_size().unwrap();
            if n > 1 {
                if size > 1 && size != n {
                    return Err(bad(t));
                }
                size = n;
            }
            let s = t.element_scalar().unwrap();
            elem = Some(match (elem, n > 1) {
                (None, _) => s,
                (Some(_), true) => s,
                (Some(e), false) if size > 1 => e,
                (Some(e), false) => conversions::arithmetic(e, s),
            });
        }
        let mut elem = elem.unwrap_or(Scalar::Float);
        if let Some((_, t)) = vals.iter().find(|(_, t)| t.vector_size().unwrap_or(1) > 1) {
            elem = t.element_scalar().unwrap();
        }
        match shape {
            Shape::Float | Shape::FloatToScalar if !elem.is_float() => {
                if vals.iter().any(|(_, t)| matches!(t, Type::Vector(..))) {
                    return Err(bad(&vals[0].1));
                }
                elem = Scalar::Float;
            }
            Shape::Integer if !elem.is_integer() => return Err(bad(&vals[0].1)),
            Shape::Numeric if elem == Scalar::Bool => return Err(bad(&vals[0].1)),
            _ => {}
        }
        if shape == Shape::FloatToScalar && size == 1 && name != "length" && name != "distance" {
            return Err(bad(&vals[0].1));
        }
        Ok(Type::vector(elem, size))
    }

    fn two_floats(
        &mut self,
        fx: &mut FnCtx,
        args: &[Expr],
        span: Span,
    ) -> Result<(Handle<Expression>, Handle<Expression>, Type)> {
        let [a, b] = args else {
            return Err(Error::new(span, "expected 2 arguments"));
        };
        let va = self.rvalue(fx, a)?;
        let vb = self.rvalue(fx, b)?;
        let ty =
            self.common_argument_type("fmod", &[va.clone(), vb.clone()], Shape::Float, span)?;
        let a = self.convert(fx, va.0, &va.1, &ty, false, span)?;
        let b = self.convert(fx, vb.0, &vb.1, &ty, false, span)?;
        Ok((a, b, ty))
    }

    fn one_float(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<(Handle<Expression>, Type)> {
        let [a] = args else {
            return Err(Error::new(span, format!("`{name}` takes 1 argument")));
        };
        let v = self.rvalue(fx, a)?;
        let ty = self.common_argument_type(name, std::slice::from_ref(&v), Shape::Float, span)?;
        Ok((self.convert(fx, v.0, &v.1, &ty, false, span)?, ty))
    }

    fn splat_const(
        &mut self,
        fx: &mut FnCtx,
        v: f64,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let s = ty.element_scalar().unwrap();
        let Value::Rv(h, t) = self.const_value(fx, &ConstValue::Float(v, s), span) else {
            unreachable!()
        };
        self.convert(fx, h, &t, ty, false, span)
    }

    /// MSL `round` rounds halfway cases away from zero; WGSL's to even.
    fn round(&mut self, fx: &mut FnCtx, args: &[Expr], span: Span) -> Result<Value> {
        let (x, ty) = self.one_float(fx, "round", args, span)?;
        let math = |fx: &mut FnCtx, fun, arg| {
            fx.add(
                Expression::Math {
                    fun,
                    arg,
                    arg1: None,
                    arg2: None,
                    arg3: None,
                },
                span,
            )
        };
        let t = math(fx, Mf::Trunc, x);
        let sign = math(fx, Mf::Sign, x);
        let diff = fx.add(
            Expression::Binary {
                op: naga::BinaryOperator::Subtract,
                left: x,
                right: t,
            },
            span,
        );
        let dist = math(fx, Mf::Abs, diff);
        let half = self.splat_const(fx, 0.5, &ty, span)?;
        let away = fx.add(
            Expression::Binary {
                op: naga::BinaryOperator::GreaterEqual,
                left: dist,
                right: half,
            },
            span,
        );
        let up = fx.add(
            Expression::Binary {
                op: naga::BinaryOperator::Add,
                left: t,
                right: sign,
            },
            span,
        );
        Ok(Value::Rv(
            fx.add(
                Expression::Select {
                    condition: away,
                    accept: up,
                    reject: t,
                },
                span,
            ),
            ty,
        ))
    }

    /// MSL `fract` is in [0, 1); WGSL's may round up to 1.0.
    fn fract(&mut self, fx: &mut FnCtx, args: &[Expr], span: Span) -> Result<Value> {
        let (x, ty) = self.one_float(fx, "fract", args, span)?;
        let f = fx.add(
            Expression::Math {
                fun: Mf::Fract,
                arg: x,
                arg1: None,
                arg2: None,
                arg3: None,
            },
            span,
        );
        let below_one = if ty.element_scalar() == Some(Scalar::Half) {
            1.0 - 2f64.powi(-11)
        } else {
            1.0 - 2f64.powi(-24)
        };
        let limit = self.splat_const(fx, below_one, &ty, span)?;
        Ok(Value::Rv(
            fx.add(
                Expression::Math {
                    fun: Mf::Min,
                    arg: f,
                    arg1: Some(limit),
                    arg2: None,
                    arg3: None,
                },
                span,
            ),
            ty,
        ))
    }

    fn relational(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let [a] = args else {
            return Err(Error::new(span, format!("`{name}` takes 1 argument")));
        };
        let (h, t) = self.condition(fx, a)?;
        if t == Type::BOOL {
            return Ok(Value::Rv(h, t));
        }
        let fun = if name == "all" {
            naga::RelationalFunction::All
        } else {
            naga::RelationalFunction::Any
        };
        Ok(Value::Rv(
            fx.add(Expression::Relational { fun, argument: h }, span),
            Type::BOOL,
        ))
    }

    /// `select(a, b, c)` is `c ? b : a`, componentwise.
    fn select_call(&mut self, fx: &mut FnCtx, args: &[Expr], span: Span) -> Result<Value> {
        let [a, b, c] = args else {
            return Err(Error::new(span, "`select` takes 3 arguments"));
        };
        let (ha, ta) = self.rvalue(fx, a)?;
        let (hb, tb) = self.rvalue(fx, b)?;
        let ty = self.common_type(&ta, &tb, span)?;
        let ha = self.convert(fx, ha, &ta, &ty, false, span)?;
        let hb = self.convert(fx, hb, &tb, &ty, false, span)?;
        let (hc, tc) = self.condition(fx, c)?;
        if tc.vector_size() != Some(1) && tc.vector_size() != ty.vector_size() {
            return Err(Error::new(
                c.span,
                "`select` condition must be a scalar or match the operands' size",
            ));
        }
        Ok(Value::Rv(
            fx.add(
                Expression::Select {
                    condition: hc,
                    accept: hb,
                    reject: ha,
                },
                span,
            ),
            ty,
        ))
    }

    /// `dfdx`, `dfdy`, `fwidth` (MSL §6.10.1): fragment functions only.
    fn derivative(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        if !fx.fragment {
            return Err(Error::new(
                span,
                format!("`{name}` is only available in fragment functions"),
            ));
        }
        let (x, ty) = self.one_float(fx, name, args, span)?;
        let axis = match name {
            "dfdx" => naga::DerivativeAxis::X,
            "dfdy" => naga::DerivativeAxis::Y,
            _ => naga::DerivativeAxis::Width,
        };
        Ok(Value::Rv(
            fx.add(
                Expression::Derivative {
                    axis,
                    ctrl: naga::DerivativeControl::None,
                    expr: x,
                },
                span,
            ),
            ty,
        ))
    }

    /// `threadgroup_barrier(mem_flags)` and `simdgroup_barrier(mem_flags)`.
    fn barrier(&mut self, fx: &mut FnCtx, name: &str, args: &[Expr], span: Span) -> Result<Value> {
        let [flags] = args else {
            return Err(Error::new(
                span,
                format!("`{name}` takes one `mem_flags` argument"),
            ));
        };
        let mut set = naga::Barrier::empty();
        collect_mem_flags(flags, &mut set)?;
        if name == "simdgroup_barrier" {
            return Err(Error::new(span, "`simdgroup_barrier` is not supported yet")
                .with_code(crate::diagnostics::Code::Unsupported));
        }
        if set.is_empty() {
            // mem_none still synchronises execution; naga prints nothing for an empty set.
            set = naga::Barrier::WORK_GROUP;
        }
        fx.uses_barrier = true;
        fx.push(naga::Statement::ControlBarrier(set), span);
        Ok(Value::Void)
    }
}

fn collect_mem_flags(e: &Expr, set: &mut naga::Barrier) -> Result<()> {
    match &e.kind {
        ExprKind::Binary(crate::syntax::ast::BinaryOp::BitOr, a, b) => {
            collect_mem_flags(a, set)?;
            collect_mem_flags(b, set)
        }
        ExprKind::Name(path) => {
            match path.last().map(String::as_str) {
                Some("mem_none") => {}
                Some("mem_threadgroup") => *set |= naga::Barrier::WORK_GROUP,
                Some("mem_device") => *set |= naga::Barrier::STORAGE,
                Some("mem_texture") => *set |= naga::Barrier::TEXTURE,
                Some("mem_threadgroup_imageblock") => *set |= naga::Barrier::WORK_GROUP,
                _ => return Err(Error::new(e.span, "expected a `mem_flags` value")),
            }
            Ok(())
        }
        _ => Err(Error::new(e.span, "expected a `mem_flags` value")),
    }
}
