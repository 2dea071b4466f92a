//! The metal_stdlib functions and constants this version translates
//! (MSL §6; mapping doc §6).
//!
//! A library call is resolved once, to a [`Builtin`] of the one table in
//! `builtin.rs`, and lowered by matching on it: [`Lowerer::library_call`]
//! dispatches by [`Family`] to the file that implements it.

pub(in crate::lower) mod as_type;
pub(in crate::lower) mod atomics;
pub(in crate::lower) mod ballot;
pub(in crate::lower) mod builtin;
pub(in crate::lower) mod fence;
pub(in crate::lower) mod ieee;
pub(in crate::lower) mod integer;
pub(in crate::lower) mod math;
pub(in crate::lower) mod pack;
pub(in crate::lower) mod quad;
pub(in crate::lower) mod simd;
pub(in crate::lower) mod texture_atomics;
pub(in crate::lower) mod texture_ops;
pub(in crate::lower) mod textures;

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval::ConstValue;
use crate::sema::conversions;
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind};
use crate::types::{Scalar, Type};
use naga::{Expression, Handle, MathFunction as Mf};

pub(in crate::lower) use builtin::{Builtin, Family};

/// Which argument types a function takes and what it returns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// All arguments float, same type; returns that type.
    Float,
    /// All arguments numeric, same type; returns that type.
    Numeric,
    /// Float vectors; returns the element scalar (dot, length, distance).
    FloatToScalar,
}

/// The builtins that are one naga `MathFunction`: the function, the number
/// of arguments and their shape.
fn direct_math(b: Builtin) -> Option<(Mf, usize, Shape)> {
    use Builtin as B;
    use Shape::*;
    Some(match b {
        B::Abs => (Mf::Abs, 1, Numeric),
        B::Fabs => (Mf::Abs, 1, Float),
        B::Min => (Mf::Min, 2, Numeric),
        B::Max => (Mf::Max, 2, Numeric),
        B::Clamp => (Mf::Clamp, 3, Numeric),
        B::Saturate => (Mf::Saturate, 1, Float),
        B::Mix => (Mf::Mix, 3, Float),
        B::Sign => (Mf::Sign, 1, Float),
        B::Step => (Mf::Step, 2, Float),
        B::Smoothstep => (Mf::SmoothStep, 3, Float),
        B::Fma => (Mf::Fma, 3, Float),
        B::Sqrt => (Mf::Sqrt, 1, Float),
        B::Rsqrt => (Mf::InverseSqrt, 1, Float),
        B::Sin => (Mf::Sin, 1, Float),
        B::Cos => (Mf::Cos, 1, Float),
        B::Tan => (Mf::Tan, 1, Float),
        B::Asin => (Mf::Asin, 1, Float),
        B::Acos => (Mf::Acos, 1, Float),
        B::Atan => (Mf::Atan, 1, Float),
        B::Atan2 => (Mf::Atan2, 2, Float),
        B::Sinh => (Mf::Sinh, 1, Float),
        B::Cosh => (Mf::Cosh, 1, Float),
        B::Tanh => (Mf::Tanh, 1, Float),
        B::Asinh => (Mf::Asinh, 1, Float),
        B::Acosh => (Mf::Acosh, 1, Float),
        B::Atanh => (Mf::Atanh, 1, Float),
        B::Exp => (Mf::Exp, 1, Float),
        B::Exp2 => (Mf::Exp2, 1, Float),
        B::Log => (Mf::Log, 1, Float),
        B::Log2 => (Mf::Log2, 1, Float),
        B::Pow | B::Powr => (Mf::Pow, 2, Float),
        B::Floor => (Mf::Floor, 1, Float),
        B::Ceil => (Mf::Ceil, 1, Float),
        B::Trunc => (Mf::Trunc, 1, Float),
        B::Rint => (Mf::Round, 1, Float),
        B::Dot => (Mf::Dot, 2, FloatToScalar),
        B::Length => (Mf::Length, 1, FloatToScalar),
        B::Distance => (Mf::Distance, 2, FloatToScalar),
        B::Normalize => (Mf::Normalize, 1, Float),
        B::Cross => (Mf::Cross, 2, Float),
        B::Reflect => (Mf::Reflect, 2, Float),
        B::Refract => (Mf::Refract, 3, Float),
        B::Faceforward => (Mf::FaceForward, 3, Float),
        _ => return None,
    })
}

/// The mathematical constants of `metal_math` (MSL §6.5), by the name
/// between `M_` and the type suffix: `M_PI_F` is a `float`, `M_PI_H` a
/// `half`.
const MATH_CONSTANTS: [(&str, f64); 13] = {
    use std::f64::consts as c;
    [
        ("E", c::E),
        ("LOG2E", c::LOG2_E),
        ("LOG10E", c::LOG10_E),
        ("LN2", c::LN_2),
        ("LN10", c::LN_10),
        ("PI", c::PI),
        ("PI_2", c::FRAC_PI_2),
        ("PI_4", c::FRAC_PI_4),
        ("1_PI", c::FRAC_1_PI),
        ("2_PI", c::FRAC_2_PI),
        ("2_SQRTPI", c::FRAC_2_SQRT_PI),
        ("SQRT2", c::SQRT_2),
        ("SQRT1_2", c::FRAC_1_SQRT_2),
    ]
};

/// Named constants of `metal_math` and `metal_types` (MSL §6.5: the
/// mathematical constants and the `float` and `half` limits), as values of
/// their type.
pub(crate) fn constant(name: &str) -> Option<ConstValue> {
    let f = |v: f64| Some(ConstValue::Float(v as f32 as f64, Scalar::Float));
    let h = |v: f64| {
        Some(ConstValue::Float(
            half::f16::from_f64(v).to_f64(),
            Scalar::Half,
        ))
    };
    if let Some(rest) = name.strip_prefix("M_") {
        let value = |stem: &str| MATH_CONSTANTS.iter().find(|(n, _)| *n == stem).map(|c| c.1);
        if let Some(v) = rest.strip_suffix("_F").and_then(value) {
            return f(v);
        }
        if let Some(v) = rest.strip_suffix("_H").and_then(value) {
            return h(v);
        }
    }
    match name {
        "MAXFLOAT" | "FLT_MAX" => f(f32::MAX as f64),
        // MSL §6.5: `float` infinity and a quiet NaN (lowered through
        // their bits: WGSL has no literal for either).
        "INFINITY" | "HUGE_VALF" => f(f64::INFINITY),
        "NAN" => f(f64::NAN),
        "HUGE_VALH" => h(f64::INFINITY),
        "FLT_MIN" => f(f32::MIN_POSITIVE as f64),
        "FLT_EPSILON" => f(f32::EPSILON as f64),
        "MAXHALF" | "HALF_MAX" => h(half::f16::MAX.to_f64()),
        "HALF_MIN" => h(half::f16::MIN_POSITIVE.to_f64()),
        "HALF_EPSILON" => h(half::f16::EPSILON.to_f64()),
        "INT_MAX" => Some(ConstValue::Int(i32::MAX as i64, Scalar::Int)),
        "INT_MIN" => Some(ConstValue::Int(i32::MIN as i64, Scalar::Int)),
        "UINT_MAX" => Some(ConstValue::Int(u32::MAX as i64, Scalar::UInt)),
        "FP_ILOGB0" => Some(ConstValue::Int(ieee::FP_ILOGB0 as i64, Scalar::Int)),
        "FP_ILOGBNAN" => Some(ConstValue::Int(ieee::FP_ILOGBNAN as i64, Scalar::Int)),
        _ => {
            let name = name.strip_prefix("metal::").unwrap_or(name);
            fence::scope_constant(name).or_else(|| gather_component(name))
        }
    }
}

/// `metal::component`'s enumerators (`component::x` .. `w`, the channel a
/// `gather` reads), `int`-valued like the other `<metal_texture>` enums
/// (sema gives `component` the type `int`): a wrapper takes one as a
/// parameter and passes it on (`t.gather(s, p, c)` where `c` is constant
/// once the wrapper is inlined, or a `switch` over it picks a literal).
fn gather_component(name: &str) -> Option<ConstValue> {
    let channel = name.strip_prefix("component::")?;
    let index = ["x", "y", "z", "w"].iter().position(|c| *c == channel)?;
    Some(ConstValue::Int(index as i64, Scalar::Int))
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

    /// A call to a library function: `name` is what C++ lookup left
    /// unresolved (no user function, overload, template or object of that
    /// name), resolved here once to a [`Builtin`]; `None` if it is none.
    /// With `half` as `f32`, a `half` result is computed in `f32` and
    /// rounded once.
    pub(in crate::lower) fn library_call(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        if let Some(v) = self.metal_getter(fx, name, args, span)? {
            return Ok(Some(v));
        }
        if let Some(v) = self.bitwise_float_intrinsic(fx, name, args, span)? {
            return Ok(Some(v));
        }
        let (name, args) = metal_intrinsic(name, args);
        let Some(b) = Builtin::function(name) else {
            return Ok(None);
        };
        Ok(Some(match self.builtin_call(fx, b, args, span)? {
            Value::Rv(h, ty) if !b.returns_an_operand() => {
                Value::Rv(self.round_float_value(fx, h, &ty, span), ty)
            }
            other => other,
        }))
    }

    /// `__metal_get_simdgroup_size(T())` and
    /// `__metal_get_thread_index_in_simdgroup(T())`: `<metal_stdlib>`'s
    /// intrinsics for the SIMD-group width and lane, of the type of the
    /// (otherwise unused) argument.
    fn metal_getter(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        let lane = match name {
            n if n == SIMD_STATE_INTRINSICS[0] => false,
            n if n == SIMD_STATE_INTRINSICS[1] => true,
            _ => return Ok(None),
        };
        let [arg] = args else {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{name}` takes 1 argument, {} given", args.len()),
            ));
        };
        let (_, ty) = self.rvalue(fx, arg)?;
        if !matches!(ty, Type::Scalar(s) if s.is_integer()) {
            return Err(self.no_overload(name, &ty, arg.span));
        }
        let h = if lane {
            self.simd_lane(fx, span)
        } else {
            self.simd_size(fx, span)
        };
        let h = self.convert(fx, h, &Type::UINT, &ty, true, span)?;
        Ok(Some(Value::Rv(h, ty)))
    }

    /// `__metal_simd_and/or/xor` (and the quad forms) of a float operand,
    /// which the intrinsic accepts though the library functions take
    /// integers: the reduction of the bit patterns (`as_type` to the
    /// unsigned type of the same size and back).
    fn bitwise_float_intrinsic(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        let Some(function) = name.strip_prefix("__metal_") else {
            return Ok(None);
        };
        let bitwise = [
            "simd_and", "simd_or", "simd_xor", "quad_and", "quad_or", "quad_xor",
        ];
        let ([arg], true) = (args, bitwise.contains(&function)) else {
            return Ok(None);
        };
        let ty = self.type_of(fx, arg)?;
        let Some(s) = ty.element_scalar().filter(|s| s.is_float()) else {
            return Ok(None);
        };
        let bits = ty.with_scalar(if s == Scalar::Float {
            Scalar::UInt
        } else {
            Scalar::UShort
        });
        let named = |ty: &Type| crate::syntax::ast::TypeSpec {
            is_const: false,
            is_constexpr: false,
            space: None,
            path: vec![self.program.display(ty)],
            args: Vec::new(),
            ptr_ops: Vec::new(),
            name_span: span,
            span,
        };
        let mk = |kind| Expr { kind, span };
        let cast = |to: &Type, e: Expr| {
            mk(ExprKind::Cast(
                crate::syntax::ast::CastKind::AsType,
                named(to),
                Box::new(e),
            ))
        };
        // The library function itself: a user overload of its name (the
        // header's own `simd_xor(bfloat)`) is what calls this intrinsic.
        let operand = cast(&bits, arg.clone());
        match self.library_call(fx, function, &[operand], span)? {
            Some(Value::Rv(h, t)) => self.as_type(fx, h, &t, &ty, span).map(Some),
            other => Ok(other),
        }
    }

    /// Lowers a call of the library function `b`, by its family.
    fn builtin_call(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        if b == Builtin::IsNullTexture {
            return self.is_null_texture(fx, args, span);
        }
        match b.family() {
            Family::Simd => self.simd_call(fx, b, args, span),
            Family::Quad => self.quad_call(fx, b, args, span),
            Family::SimdMatrix => self.simdgroup_matrix_call(fx, b, args, span),
            Family::Atomic => self.atomic_call(fx, b, args, span),
            Family::Integer => self.integer_library_call(fx, b, args, span),
            Family::Barrier => match b {
                Builtin::SimdgroupBarrier => self.simdgroup_barrier(fx, args, span),
                _ => self.threadgroup_barrier(fx, args, span),
            },
            Family::Derivative => self.derivative(fx, b, args, span),
            Family::Pack => self.pack_call(fx, b, args, span),
            Family::Fragment => {
                if !fx.fragment {
                    return Err(Error::coded(
                        Code::WrongStage,
                        span,
                        format!("`{}` is only available in fragment functions", b.name()),
                    ));
                }
                match b {
                    Builtin::GetSamplePosition => self.sample_position(fx, args, span),
                    Builtin::GetNumSamples => self.num_samples(fx, args, span),
                    _ => {
                        fx.push(naga::Statement::Kill, span);
                        Ok(Value::Void)
                    }
                }
            }
            // `Builtin::function` never resolves a texture member.
            Family::Texture => unreachable!("`{}` is a texture member", b.name()),
            Family::Math | Family::Relational | Family::Geometric | Family::Matrix => {
                self.math_call(fx, b, args, span)
            }
        }
    }

    /// Math, relational, geometric and matrix functions.
    fn math_call(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        match b {
            Builtin::All | Builtin::Any => return self.relational(fx, b, args, span),
            Builtin::Select => return self.select_call(fx, args, span),
            Builtin::Fmod => {
                let (a, c, ty) = self.two_floats(fx, b, args, span)?;
                return Ok(Value::Rv(
                    fx.add(
                        Expression::Binary {
                            op: naga::BinaryOperator::Modulo,
                            left: a,
                            right: c,
                        },
                        span,
                    ),
                    ty,
                ));
            }
            Builtin::Round => return self.round(fx, args, span),
            Builtin::Fract => return self.fract(fx, args, span),
            _ => {}
        }
        let Some((fun, arity, shape)) = direct_math(b) else {
            return self.math_library_call(fx, b, args, span);
        };
        let name = b.name();
        if args.len() != arity {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{name}` takes {arity} argument(s), {} given", args.len()),
            ));
        }
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.rvalue(fx, a)?);
        }
        let ty = self.common_argument_type(b, &vals, shape, span)?;
        // The geometric functions that return a vector take vectors only
        // (MSL §6.7; naga and WGSL have no scalar forms).
        let vectors_only = matches!(
            b,
            Builtin::Normalize | Builtin::Reflect | Builtin::Refract | Builtin::Faceforward
        );
        if vectors_only && ty.vector_size().unwrap_or(1) < 2 {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{name}` takes vectors, not scalars"),
            ));
        }
        let mut hs = Vec::new();
        for (i, (h, t)) in vals.iter().enumerate() {
            // `refract(Tn i, Tn n, T eta)`: the ratio stays a scalar.
            let target = match (b, i) {
                (Builtin::Refract, 2) => Type::Scalar(ty.element_scalar().unwrap()),
                _ => ty.clone(),
            };
            hs.push(self.convert(fx, *h, t, &target, false, span)?);
        }
        // `mix(x, y, a)` also accepts a scalar `a`; naga does too, but the splat is harmless.
        let result_ty = if shape == Shape::FloatToScalar {
            Type::Scalar(ty.element_scalar().unwrap())
        } else {
            ty.clone()
        };
        if fun == Mf::Cross && ty.vector_size() != Some(3) {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                "`cross` takes 3-component vectors",
            ));
        }
        let math = |arg| Expression::Math {
            fun,
            arg,
            arg1: hs.get(1).copied(),
            arg2: hs.get(2).copied(),
            arg3: None,
        };
        let mut h = fx.add(math(hs[0]), span);
        // `sqrt(-1.0)`, `exp(1000.0)` of constants: WGSL would reject the
        // module, Metal computes them; so does the GPU, at run time.
        if self.rejected_at_creation(fx, h) {
            let arg = self.at_run_time(fx, hs[0], &ty, span)?;
            h = fx.add(math(arg), span);
        }
        // abs(char(-128)) wraps back into the narrow type, as in Metal.
        let h = self.narrow_result(fx, h, &result_ty, span);
        Ok(Value::Rv(h, result_ty))
    }

    /// The type all arguments convert to: the vector shape if any argument is
    /// a vector, its element type, else the usual arithmetic conversions.
    fn common_argument_type(
        &self,
        b: Builtin,
        vals: &[(Handle<Expression>, Type)],
        shape: Shape,
        span: Span,
    ) -> Result<Type> {
        let name = b.name();
        let bad = |t: &Type| {
            Error::coded(
                Code::NoMatchingOverload,
                span,
                format!(
                    "no matching function for call to `{name}` with an argument of type `{}`",
                    self.program.display(t)
                ),
            )
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
            Shape::Numeric if elem == Scalar::Bool => return Err(bad(&vals[0].1)),
            _ => {}
        }
        if shape == Shape::FloatToScalar
            && size == 1
            && !matches!(b, Builtin::Length | Builtin::Distance)
        {
            return Err(bad(&vals[0].1));
        }
        Ok(Type::vector(elem, size))
    }

    fn two_floats(
        &mut self,
        fx: &mut FnCtx,
        function: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(Handle<Expression>, Handle<Expression>, Type)> {
        let [a, b] = args else {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                "expected 2 arguments",
            ));
        };
        let va = self.rvalue(fx, a)?;
        let vb = self.rvalue(fx, b)?;
        let ty =
            self.common_argument_type(function, &[va.clone(), vb.clone()], Shape::Float, span)?;
        let a = self.convert(fx, va.0, &va.1, &ty, false, span)?;
        let b = self.convert(fx, vb.0, &vb.1, &ty, false, span)?;
        Ok((a, b, ty))
    }

    fn one_float(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(Handle<Expression>, Type)> {
        let [a] = args else {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{}` takes 1 argument", b.name()),
            ));
        };
        let v = self.rvalue(fx, a)?;
        let ty = self.common_argument_type(b, std::slice::from_ref(&v), Shape::Float, span)?;
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
        let (x, ty) = self.one_float(fx, Builtin::Round, args, span)?;
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
        let (x, ty) = self.one_float(fx, Builtin::Fract, args, span)?;
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
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let [a] = args else {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{}` takes 1 argument", b.name()),
            ));
        };
        let (h, t) = self.condition(fx, a)?;
        if t == Type::BOOL {
            return Ok(Value::Rv(h, t));
        }
        let fun = if b == Builtin::All {
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
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                "`select` takes 3 arguments",
            ));
        };
        let (ha, ta) = self.rvalue(fx, a)?;
        let (hb, tb) = self.rvalue(fx, b)?;
        let ty = self.common_type(&ta, &tb, span)?;
        let ha = self.convert(fx, ha, &ta, &ty, false, span)?;
        let hb = self.convert(fx, hb, &tb, &ty, false, span)?;
        let (hc, tc) = self.condition(fx, c)?;
        if tc.vector_size() != Some(1) && tc.vector_size() != ty.vector_size() {
            return Err(Error::coded(
                Code::NoMatchingOverload,
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
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        if !fx.fragment {
            return Err(Error::coded(
                Code::WrongStage,
                span,
                format!("`{}` is only available in fragment functions", b.name()),
            ));
        }
        let (x, ty) = self.one_float(fx, b, args, span)?;
        let axis = match b {
            Builtin::Dfdx => naga::DerivativeAxis::X,
            Builtin::Dfdy => naga::DerivativeAxis::Y,
            _ => naga::DerivativeAxis::Width,
        };
        // WGSL takes derivatives of `f32` values only: a `half` one is
        // taken in `f32` and rounded back.
        let wide = Type::vector(Scalar::Float, ty.vector_size().unwrap_or(1));
        let x = self.convert(fx, x, &ty, &wide, true, span)?;
        let d = fx.add(
            Expression::Derivative {
                axis,
                ctrl: naga::DerivativeControl::None,
                expr: x,
            },
            span,
        );
        Ok(Value::Rv(self.convert(fx, d, &wide, &ty, true, span)?, ty))
    }

    /// `threadgroup_barrier(mem_flags)` (`simdgroup_barrier` is in `simd.rs`).
    fn threadgroup_barrier(&mut self, fx: &mut FnCtx, args: &[Expr], span: Span) -> Result<Value> {
        let [flags] = args else {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                "`threadgroup_barrier` takes one `mem_flags` argument",
            ));
        };
        let mut set = naga::Barrier::empty();
        collect_mem_flags(flags, &mut set)?;
        let key = (span.start as usize, span.end as usize);
        if set.is_empty() {
            // mem_none still synchronises execution; naga prints nothing for
            // an empty set. Where it runs in non-uniform control flow it
            // goes (`passes::execution_barriers`).
            set = naga::Barrier::WORK_GROUP;
            self.global.execution_barrier_spans.insert(key);
        } else {
            self.global.fenced_barrier_spans.insert(key);
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
                _ => {
                    return Err(Error::coded(
                        Code::InvalidBuiltinArgument,
                        e.span,
                        "expected a `mem_flags` value",
                    ))
                }
            }
            Ok(())
        }
        _ => Err(Error::coded(
            Code::InvalidBuiltinArgument,
            e.span,
            "expected a `mem_flags` value",
        )),
    }
}

/// The intrinsics that read the SIMD-group width and lane
/// (`Lowerer::metal_getter`).
pub(in crate::lower) const SIMD_STATE_INTRINSICS: [&str; 2] = [
    "__metal_get_simdgroup_size",
    "__metal_get_thread_index_in_simdgroup",
];

/// `<metal_stdlib>`'s intrinsics, which headers that overload the library
/// for their own types call (MLX's `bf16_math.h`): `__metal_NAME(args)` is
/// the library function `NAME` (`__metal_fabs` is `fabs`), and a trailing
/// math-mode argument (`__METAL_FAST_MATH__`, a `bool`) is dropped, since
/// the translation has one math mode.
fn metal_intrinsic<'a>(name: &'a str, args: &'a [Expr]) -> (&'a str, &'a [Expr]) {
    let Some(function) = name.strip_prefix("__metal_") else {
        return (name, args);
    };
    match args.split_last() {
        Some((last, rest))
            if function != "select"
                && matches!(last.kind, crate::syntax::ast::ExprKind::Bool(_)) =>
        {
            (function, rest)
        }
        _ => (function, args),
    }
}

/// The library's word on `name` for [`crate::sema::callgraph::reaches`]: `wanted`, or
/// where it is not, whether the library has a function of that name at all
/// (`Some(false)`) or none (`None`: a call of it may be a function
/// object's).
pub(in crate::lower) fn library_answer(name: &str, wanted: bool) -> Option<bool> {
    (wanted || Builtin::function(name).is_some()).then_some(wanted)
}
