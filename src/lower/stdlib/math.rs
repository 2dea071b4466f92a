//! The metal_stdlib math that `mod.rs`'s table of one-to-one
//! `MathFunction`s does not cover (MSL §6.2–6.7; mapping doc §6.1–6.4):
//! polyfills built from WGSL builtins and bit operations, and the functions
//! that return a second result through a reference or pointer argument.
//!
//! Integer functions live in `integer.rs`. Precision: WGSL has no
//! `precise`/`fast` distinction; each polyfill is chosen so that its error is
//! what the WGSL accuracy table gives its builtins, which is about Metal's
//! fast-math accuracy (MSL §8). Classification functions test bits, because
//! naga's WGSL writer rejects `IsNan`/`IsInf` and `x != x` may be folded
//! away under WGSL's finite-math assumption.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::stdlib::{ieee, Builtin};
use crate::lower::types::vector_size;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::conversions;
use crate::source_map::Span;
use crate::syntax::ast::Expr;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, MathFunction as Mf, ScalarKind};

type H = Handle<Expression>;

/// Which element types a library function's operands take.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(in crate::lower) enum Kind {
    /// `half` or `float` (integer scalars convert to `float`).
    Float,
    /// Integers of any width.
    Integer,
    /// Integers or floats.
    Numeric,
}

/// Appends the expressions of a polyfill, all with the call's span.
pub(in crate::lower) struct Ir<'f> {
    pub fx: &'f mut FnCtx,
    pub span: Span,
}

impl Ir<'_> {
    pub fn add(&mut self, e: Expression) -> H {
        self.fx.add(e, self.span)
    }

    pub fn bin(&mut self, op: Bo, left: H, right: H) -> H {
        self.add(Expression::Binary { op, left, right })
    }

    /// A `MathFunction` of one to four arguments.
    pub fn math(&mut self, fun: Mf, args: &[H]) -> H {
        self.add(Expression::Math {
            fun,
            arg: args[0],
            arg1: args.get(1).copied(),
            arg2: args.get(2).copied(),
            arg3: args.get(3).copied(),
        })
    }

    /// `condition ? accept : reject`, componentwise for vector conditions.
    pub fn select(&mut self, condition: H, accept: H, reject: H) -> H {
        self.add(Expression::Select {
            condition,
            accept,
            reject,
        })
    }

    /// Reinterprets the bits (WGSL `bitcast`).
    pub fn bitcast(&mut self, expr: H, kind: ScalarKind) -> H {
        self.add(Expression::As {
            expr,
            kind,
            convert: None,
        })
    }

    /// Converts the value to another scalar type.
    pub fn cast(&mut self, expr: H, to: naga::Scalar) -> H {
        self.add(Expression::As {
            expr,
            kind: to.kind,
            convert: Some(to.width),
        })
    }

    pub fn neg(&mut self, expr: H) -> H {
        self.add(Expression::Unary {
            op: naga::UnaryOperator::Negate,
            expr,
        })
    }

    /// A literal, splatted to `size` components when `size > 1`.
    pub fn lit(&mut self, lit: Literal, size: u8) -> H {
        let value = self.add(Expression::Literal(lit));
        if size == 1 {
            return value;
        }
        self.add(Expression::Splat {
            size: vector_size(size),
            value,
        })
    }

    pub fn u32(&mut self, v: u32, size: u8) -> H {
        self.lit(Literal::U32(v), size)
    }

    pub fn i32(&mut self, v: i32, size: u8) -> H {
        self.lit(Literal::I32(v), size)
    }

    /// A `half` or `float` constant.
    pub fn float(&mut self, v: f64, s: Scalar, size: u8) -> H {
        let lit = match s {
            Scalar::Half => Literal::F16(half::f16::from_f64(v)),
            _ => Literal::F32(v as f32),
        };
        self.lit(lit, size)
    }

    /// The bits of the `f32` value of `x` (`half` widens exactly first).
    pub fn float_bits(&mut self, x: H, s: Scalar) -> H {
        let wide = if s == Scalar::Half {
            self.cast(x, naga::Scalar::F32)
        } else {
            x
        };
        self.bitcast(wide, ScalarKind::Uint)
    }
}

/// The number of components of a scalar or vector type.
pub(in crate::lower) fn size_of(ty: &Type) -> u8 {
    ty.vector_size().unwrap_or(1)
}

/// "takes 1 argument" / "takes 3 arguments".
pub(in crate::lower) fn arity_error(name: &str, arity: usize, given: usize, span: Span) -> Error {
    let s = if arity == 1 { "" } else { "s" };
    Error::coded(
        Code::NoMatchingOverload,
        span,
        format!("`{name}` takes {arity} argument{s}, {given} given"),
    )
}

impl Lowerer<'_, '_> {
    /// A math, relational, geometric or matrix builtin that is not one
    /// naga `MathFunction`: the polyfills of this file.
    pub(in crate::lower) fn math_library_call(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        use Builtin as B;
        let (h, ty) = match b {
            B::Copysign | B::Fdim | B::Divide | B::Nextafter => {
                self.float_pair(fx, b, args, span)?
            }
            B::Fmin | B::Fmax => self.nan_avoiding_min_max(fx, b, args, span)?,
            B::Ilogb => self.ilogb(fx, args, span)?,
            B::Ldexp => self.ldexp(fx, args, span)?,
            B::Frexp => self.frexp(fx, args, span)?,
            B::Modf | B::Sincos => self.split_result(fx, b, args, span)?,
            B::Exp10 | B::Log10 => self.exp_log10(fx, b, args, span)?,
            B::Sinpi | B::Cospi | B::Tanpi => self.trig_pi(fx, b, args, span)?,
            B::Min3 | B::Max3 | B::Median3 | B::Fmin3 | B::Fmax3 | B::Fmedian3 => {
                self.three_way(fx, b, args, span)?
            }
            B::Isnan | B::Isinf | B::Isfinite | B::Isnormal | B::Signbit => {
                self.classify(fx, b, args, span)?
            }
            B::Isordered | B::Isunordered => self.ordered(fx, b, args, span)?,
            B::LengthSquared | B::DistanceSquared => self.squared_length(fx, b, args, span)?,
            B::Determinant | B::Transpose => self.matrix_function(fx, b, args, span)?,
            _ => unreachable!("`{}` is not a math polyfill", b.name()),
        };
        Ok(Value::Rv(h, ty))
    }

    /// The error for an argument of a type `name` has no overload for.
    pub(in crate::lower) fn no_overload(&self, name: &str, ty: &Type, span: Span) -> Error {
        Error::coded(
            Code::NoMatchingOverload,
            span,
            format!(
                "no matching function for call to `{name}` with an argument of type `{}`",
                self.program.display(ty)
            ),
        )
    }

    /// The type the operands of `name` convert to: the vector shape and
    /// element type of its vector operands (all alike, as C++ has no implicit
    /// vector conversions), else the common type of the scalars.
    pub(in crate::lower) fn operand_type(
        &self,
        name: &str,
        vals: &[(H, Type)],
        kind: Kind,
        span: Span,
    ) -> Result<Type> {
        let mut vector: Option<&Type> = None;
        let mut elem: Option<Scalar> = None;
        for (_, t) in vals {
            let Some(s) = t.element_scalar().filter(|_| t.is_scalar_or_vector()) else {
                return Err(self.no_overload(name, t, span));
            };
            if s == Scalar::Bool {
                return Err(self.no_overload(name, t, span));
            }
            if let Type::Vector(..) = t {
                if vector.is_some_and(|v| v != t) {
                    return Err(self.no_overload(name, t, span));
                }
                vector = Some(t);
            }
            // Scalars of one type keep it (`addsat(uchar, uchar)` is uchar);
            // mixed scalars meet in the usual arithmetic conversions.
            elem = Some(match elem {
                Some(e) if e != s => conversions::arithmetic(e, s),
                _ => s,
            });
        }
        let bad = || self.no_overload(name, &vals[0].1, span);
        let mut elem = match vector {
            Some(v) => v.element_scalar().unwrap(),
            None => elem.ok_or_else(bad)?,
        };
        match kind {
            Kind::Float if !elem.is_float() => {
                if vector.is_some() {
                    return Err(bad());
                }
                elem = Scalar::Float;
            }
            Kind::Integer if !elem.is_integer() => return Err(bad()),
            _ => {}
        }
        Ok(Type::vector(elem, vector.map_or(1, size_of)))
    }

    /// Lowers `args` (exactly `arity` of them) and converts them to their
    /// common operand type.
    pub(in crate::lower) fn operands(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        arity: usize,
        kind: Kind,
        span: Span,
    ) -> Result<(Vec<H>, Type)> {
        if args.len() != arity {
            return Err(arity_error(name, arity, args.len(), span));
        }
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.rvalue(fx, a)?);
        }
        let ty = self.operand_type(name, &vals, kind, span)?;
        let mut hs = Vec::new();
        for (h, t) in &vals {
            hs.push(self.convert(fx, *h, t, &ty, false, span)?);
        }
        Ok((hs, ty))
    }

    /// Converts an offset or bit count argument (a `uint` parameter, which
    /// any scalar converts to implicitly) to `uint`.
    pub(in crate::lower) fn uint_argument(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        arg: &Expr,
    ) -> Result<H> {
        let (h, t) = self.rvalue(fx, arg)?;
        match t {
            Type::Scalar(_) => self.convert(fx, h, &t, &Type::UINT, false, arg.span),
            _ => Err(self.no_overload(name, &t, arg.span)),
        }
    }

    /// `copysign`, `fdim` and `divide`: two float operands.
    fn float_pair(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let (hs, ty) = self.operands(fx, name, args, 2, Kind::Float, span)?;
        let (x, y) = (hs[0], hs[1]);
        let s = ty.element_scalar().unwrap();
        let n = size_of(&ty);
        let mut ir = Ir { fx, span };
        let h = match b {
            Builtin::Copysign => copysign(&mut ir, x, y, s, n),
            Builtin::Nextafter if s == Scalar::Half => self.nextafter_half(&mut ir, x, y, n),
            Builtin::Nextafter => nextafter(&mut ir, x, y, s, n),
            // `x <= y` rather than `x > y`: a NaN operand gives NaN, as C's fdim does.
            Builtin::Fdim => {
                let diff = ir.bin(Bo::Subtract, x, y);
                let zero = ir.float(0.0, s, n);
                let below = ir.bin(Bo::LessEqual, x, y);
                ir.select(below, zero, diff)
            }
            _ => ir.bin(Bo::Divide, x, y),
        };
        Ok((h, ty))
    }

    /// `ldexp(x, k)`: `k` is an `int` (or `intN` of `x`'s size).
    fn ldexp(&mut self, fx: &mut FnCtx, args: &[Expr], span: Span) -> Result<(H, Type)> {
        let [x, k] = args else {
            return Err(arity_error("ldexp", 2, args.len(), span));
        };
        let (x, ty) = self.operands(fx, "ldexp", std::slice::from_ref(x), 1, Kind::Float, span)?;
        let (kh, kt) = self.rvalue(fx, k)?;
        let n = size_of(&ty);
        let ok = kt.element_scalar().is_some_and(Scalar::is_integer)
            && matches!(kt.vector_size(), Some(m) if m == 1 || m == n);
        if !ok {
            return Err(self.no_overload("ldexp", &kt, k.span));
        }
        let exp_ty = Type::vector(Scalar::Int, n);
        // An unsigned exponent vector is converted explicitly: naga's
        // `ldexp` takes `i32` exponents only.
        let exp = self.convert(fx, kh, &kt, &exp_ty, kt.vector_size() == Some(n), k.span)?;
        let h = Ir { fx, span }.math(Mf::Ldexp, &[x[0], exp]);
        Ok((h, ty))
    }

    /// The lvalue an output argument (`T& r` or `&r`) writes to, and its type.
    fn output_argument(&mut self, fx: &mut FnCtx, name: &str, arg: &Expr) -> Result<(Value, Type)> {
        let place = match self.expr(fx, arg)? {
            Value::Ptr(p) => self.element_value(fx, &p, arg.span),
            v => v,
        };
        let lanes = |s: Option<Scalar>, comps: &[u8]| Type::vector(s.unwrap(), comps.len() as u8);
        let (ty, writable) = match &place {
            Value::Place(p) => (p.ty.clone(), p.writable),
            Value::Bytes(b) => (b.ty.unpacked(), b.writable),
            Value::Swizzle(p, comps) => (lanes(p.ty.element_scalar(), comps), p.writable),
            Value::BytesSwizzle(b, comps) => (lanes(b.ty.element_scalar(), comps), b.writable),
            _ => {
                return Err(Error::coded(
                    Code::InvalidBuiltinArgument,
                    arg.span,
                    format!(
                    "`{name}` writes its last argument: it must be a variable or a pointer to one"
                ),
                ))
            }
        };
        if !writable {
            return Err(Error::coded(
                Code::NotAssignable,
                arg.span,
                format!("`{name}` cannot write its result to a read-only location"),
            ));
        }
        Ok((place, ty))
    }

    /// `frexp(x, e)`: returns the mantissa in [0.5, 1) and stores the
    /// exponent in `e` (an `int` or `intN` of `x`'s size).
    fn frexp(&mut self, fx: &mut FnCtx, args: &[Expr], span: Span) -> Result<(H, Type)> {
        let [x, e] = args else {
            return Err(arity_error("frexp", 2, args.len(), span));
        };
        let (x, ty) = self.operands(fx, "frexp", std::slice::from_ref(x), 1, Kind::Float, span)?;
        let (target, target_ty) = self.output_argument(fx, "frexp", e)?;
        let n = size_of(&ty);
        let exp_ty = Type::vector(Scalar::Int, n);
        let fits = target_ty.element_scalar().is_some_and(Scalar::is_integer)
            && target_ty.vector_size() == Some(n);
        if !fits {
            return Err(Error::coded(
                Code::TypeMismatch,
                e.span,
                format!(
                    "`frexp` stores the exponent of a `{}` in an `{}`, not in a `{}`",
                    self.program.display(&ty),
                    self.program.display(&exp_ty),
                    self.program.display(&target_ty)
                ),
            ));
        }
        let size = (n > 1).then(|| vector_size(n));
        self.global
            .module
            .generate_predeclared_type(naga::PredeclaredType::FrexpResult {
                size,
                scalar: naga::Scalar::F32,
            });
        let half = ty.element_scalar() == Some(Scalar::Half);
        let mut ir = Ir { fx, span };
        // naga types the exponent of a half `frexp` as i16 (WGSL says i32),
        // so halves are split as floats: exact both ways, and exact for
        // subnormal halves too.
        let wide = if half {
            ir.cast(x[0], naga::Scalar::F32)
        } else {
            x[0]
        };
        let result = ir.math(Mf::Frexp, &[wide]);
        let mut fract = ir.add(Expression::AccessIndex {
            base: result,
            index: 0,
        });
        if half {
            fract = ir.cast(fract, naga::Scalar::F16);
        }
        let exp = ir.add(Expression::AccessIndex {
            base: result,
            index: 1,
        });
        self.store(fx, &target, exp, &exp_ty, span)?;
        Ok((fract, ty))
    }

    /// `modf(x, i)` (fraction returned, integral part stored) and
    /// `sincos(x, c)` (sine returned, cosine stored): the stored value has
    /// the type of the returned one.
    fn split_result(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let [x, out] = args else {
            return Err(arity_error(name, 2, args.len(), span));
        };
        let (xh, xt) = self.rvalue(fx, x)?;
        let (target, ty) = self.output_argument(fx, name, out)?;
        // The reference parameter fixes the overload (`half modf(half, thread
        // half&)`, ...): `x` converts to its type, a scalar also to a vector.
        if !ty.is_scalar_or_vector() || !ty.element_scalar().is_some_and(Scalar::is_float) {
            return Err(self.no_overload(name, &ty, out.span));
        }
        if !matches!(xt, Type::Scalar(s) if s != Scalar::Bool) && xt != ty {
            return Err(self.no_overload(name, &xt, x.span));
        }
        let xh = self.convert(fx, xh, &xt, &ty, false, x.span)?;
        let mut ir = Ir { fx, span };
        let (ret, stored) = if b == Builtin::Modf {
            let scalar = self.naga_scalar(ty.element_scalar().unwrap());
            let n = size_of(&ty);
            let size = (n > 1).then(|| vector_size(n));
            let result = ir.math(Mf::Modf, &[xh]);
            let fract = ir.add(Expression::AccessIndex {
                base: result,
                index: 0,
            });
            let whole = ir.add(Expression::AccessIndex {
                base: result,
                index: 1,
            });
            self.global
                .module
                .generate_predeclared_type(naga::PredeclaredType::ModfResult { size, scalar });
            (fract, whole)
        } else {
            (ir.math(Mf::Sin, &[xh]), ir.math(Mf::Cos, &[xh]))
        };
        self.store(fx, &target, stored, &ty, span)?;
        Ok((ret, ty))
    }

    /// `exp10(x) = exp2(x * log2(10))`, `log10(x) = log2(x) * log10(2)`:
    /// Metal's own fast-math definitions (mapping doc §6.1).
    fn exp_log10(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let (hs, ty) = self.operands(fx, name, args, 1, Kind::Float, span)?;
        let s = ty.element_scalar().unwrap();
        let n = size_of(&ty);
        let mut ir = Ir { fx, span };
        let h = if b == Builtin::Exp10 {
            let k = ir.float(std::f64::consts::LOG2_10, s, n);
            let y = ir.bin(Bo::Multiply, hs[0], k);
            ir.math(Mf::Exp2, &[y])
        } else {
            let k = ir.float(std::f64::consts::LOG10_2, s, n);
            let y = ir.math(Mf::Log2, &[hs[0]]);
            ir.bin(Bo::Multiply, y, k)
        };
        Ok((h, ty))
    }

    /// `sinpi`, `cospi`, `tanpi`: the argument is first reduced exactly by
    /// whole periods, so large arguments keep WGSL's accuracy on [-π, π]
    /// and `sinpi(n)`, `cospi(n + 0.5)` are exactly zero.
    fn trig_pi(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let (hs, ty) = self.operands(fx, name, args, 1, Kind::Float, span)?;
        let x = hs[0];
        let s = ty.element_scalar().unwrap();
        let n = size_of(&ty);
        let mut ir = Ir { fx, span };
        let pi = ir.float(std::f64::consts::PI, s, n);
        let h = if b == Builtin::Tanpi {
            // r = x - round(x) is exact and in [-0.5, 0.5]: tan has period π.
            let k = ir.math(Mf::Round, &[x]);
            let r = ir.bin(Bo::Subtract, x, k);
            let a = ir.bin(Bo::Multiply, r, pi);
            ir.math(Mf::Tan, &[a])
        } else {
            let r = reduce_period_two(&mut ir, x, s, n);
            let half = ir.float(0.5, s, n);
            let t = if b == Builtin::Sinpi {
                // sin(πr) = sin(π(±1 - r)); ±1 - r is exact for |r| > 0.5.
                let abs = ir.math(Mf::Abs, &[r]);
                let far = ir.bin(Bo::Greater, abs, half);
                let sign = ir.math(Mf::Sign, &[r]);
                let mirrored = ir.bin(Bo::Subtract, sign, r);
                ir.select(far, mirrored, r)
            } else {
                // cos(πr) = sin(π(0.5 - |r|)).
                let abs = ir.math(Mf::Abs, &[r]);
                ir.bin(Bo::Subtract, half, abs)
            };
            let a = ir.bin(Bo::Multiply, t, pi);
            ir.math(Mf::Sin, &[a])
        };
        Ok((h, ty))
    }

    /// `min3`, `max3`, `median3` (any numeric type) and their `f` forms (float).
    fn three_way(
        &mut self,
        fx: &mut FnCtx,
        function: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        use Builtin as B;
        let name = function.name();
        let kind = if matches!(function, B::Fmin3 | B::Fmax3 | B::Fmedian3) {
            Kind::Float
        } else {
            Kind::Numeric
        };
        let (hs, ty) = self.operands(fx, name, args, 3, kind, span)?;
        let (a, b, c) = (hs[0], hs[1], hs[2]);
        let (s, n) = (ty.element_scalar().unwrap(), size_of(&ty));
        let mut ir = Ir { fx, span };
        let h = match function {
            // fmin(fmin(a, b), c): a NaN operand is skipped, as by `fmin`.
            B::Fmin3 | B::Fmax3 => {
                let fun = if function == B::Fmin3 {
                    Mf::Min
                } else {
                    Mf::Max
                };
                let m = ieee::nan_avoiding(&mut ir, fun, a, b, s, n);
                ieee::nan_avoiding(&mut ir, fun, m, c, s, n)
            }
            B::Min3 => {
                let m = ir.math(Mf::Min, &[a, b]);
                ir.math(Mf::Min, &[m, c])
            }
            B::Max3 => {
                let m = ir.math(Mf::Max, &[a, b]);
                ir.math(Mf::Max, &[m, c])
            }
            _ => {
                // max(min(a, b), min(max(a, b), c))
                let lo = ir.math(Mf::Min, &[a, b]);
                let hi = ir.math(Mf::Max, &[a, b]);
                let m = ir.math(Mf::Min, &[hi, c]);
                ir.math(Mf::Max, &[lo, m])
            }
        };
        Ok((h, ty))
    }

    /// `isnan`, `isinf`, `isfinite`, `isnormal`, `signbit`: tests on the
    /// bits of the `f32` value; `bool` or `boolN` results. A `half` is
    /// widened first (exact, but a NaN's sign may not survive: NVIDIA's
    /// conversion drops it, so `signbit` of a negative half NaN can be false).
    fn classify(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let (hs, ty) = self.operands(fx, name, args, 1, Kind::Float, span)?;
        let s = ty.element_scalar().unwrap();
        let n = size_of(&ty);
        let mut ir = Ir { fx, span };
        let bits = ir.float_bits(hs[0], s);
        let h = if b == Builtin::Signbit {
            let max_positive = ir.u32(0x7fff_ffff, n);
            ir.bin(Bo::Greater, bits, max_positive)
        } else {
            let mask = ir.u32(0x7fff_ffff, n);
            let magnitude = ir.bin(Bo::And, bits, mask);
            classify_magnitude(&mut ir, b, magnitude, s, n)
        };
        Ok((h, ty.with_scalar(Scalar::Bool)))
    }

    /// `isordered(x, y)`: neither is NaN; `isunordered`: either is.
    fn ordered(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let (hs, ty) = self.operands(fx, name, args, 2, Kind::Float, span)?;
        let s = ty.element_scalar().unwrap();
        let n = size_of(&ty);
        let mut ir = Ir { fx, span };
        let mut nan = Vec::new();
        for h in hs {
            let bits = ir.float_bits(h, s);
            let mask = ir.u32(0x7fff_ffff, n);
            let magnitude = ir.bin(Bo::And, bits, mask);
            nan.push(classify_magnitude(&mut ir, Builtin::Isnan, magnitude, s, n));
        }
        let either = ir.bin(Bo::InclusiveOr, nan[0], nan[1]);
        let h = if b == Builtin::Isunordered {
            either
        } else {
            ir.add(Expression::Unary {
                op: naga::UnaryOperator::LogicalNot,
                expr: either,
            })
        };
        Ok((h, ty.with_scalar(Scalar::Bool)))
    }

    /// `length_squared(x) = dot(x, x)`, `distance_squared(x, y) =
    /// length_squared(x - y)`; scalars square.
    fn squared_length(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let arity = if b == Builtin::LengthSquared { 1 } else { 2 };
        let (hs, ty) = self.operands(fx, name, args, arity, Kind::Float, span)?;
        let mut ir = Ir { fx, span };
        let d = if arity == 2 {
            ir.bin(Bo::Subtract, hs[0], hs[1])
        } else {
            hs[0]
        };
        let h = if size_of(&ty) > 1 {
            ir.math(Mf::Dot, &[d, d])
        } else {
            ir.bin(Bo::Multiply, d, d)
        };
        Ok((h, Type::Scalar(ty.element_scalar().unwrap())))
    }

    /// `determinant(m)` of a square matrix and `transpose(m)`.
    fn matrix_function(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let [m] = args else {
            return Err(arity_error(name, 1, args.len(), span));
        };
        let (h, ty) = self.rvalue(fx, m)?;
        let Type::Matrix {
            scalar,
            columns,
            rows,
        } = ty
        else {
            return Err(self.no_overload(name, &ty, m.span));
        };
        let mut ir = Ir { fx, span };
        if b == Builtin::Transpose {
            let t = Type::Matrix {
                scalar,
                columns: rows,
                rows: columns,
            };
            return Ok((ir.math(Mf::Transpose, &[h]), t));
        }
        if columns != rows {
            return Err(self.no_overload(name, &ty, m.span));
        }
        Ok((ir.math(Mf::Determinant, &[h]), Type::Scalar(scalar)))
    }
}

/// `copysign(x, y)`: `x`'s magnitude with `y`'s sign bit.
fn copysign(ir: &mut Ir, x: H, y: H, s: Scalar, n: u8) -> H {
    if s == Scalar::Half {
        // naga cannot bitcast f16 without 16-bit integers: negate |x| instead,
        // reading y's sign from its exact f32 widening.
        let bits = ir.float_bits(y, s);
        let max_positive = ir.u32(0x7fff_ffff, n);
        let negative = ir.bin(Bo::Greater, bits, max_positive);
        let abs = ir.math(Mf::Abs, &[x]);
        let neg = ir.neg(abs);
        return ir.select(negative, neg, abs);
    }
    let xb = ir.bitcast(x, ScalarKind::Uint);
    let yb = ir.bitcast(y, ScalarKind::Uint);
    let magnitude_mask = ir.u32(0x7fff_ffff, n);
    let sign_mask = ir.u32(0x8000_0000, n);
    let magnitude = ir.bin(Bo::And, xb, magnitude_mask);
    let sign = ir.bin(Bo::And, yb, sign_mask);
    let bits = ir.bin(Bo::InclusiveOr, magnitude, sign);
    ir.bitcast(bits, ScalarKind::Float)
}

/// `nextafter(x, y)`: the next value of `x`'s type after `x` toward `y`, as
/// one step of the bit pattern (of the `float` bits, or of the upper half
/// for `bfloat`): up in magnitude when `y` lies away from zero, down
/// otherwise; from zero the smallest subnormal of `y`'s sign; `y` when
/// equal; NaN when either is NaN.
fn nextafter(ir: &mut Ir, x: H, y: H, s: Scalar, n: u8) -> H {
    let step = if s == Scalar::BFloat { 0x1_0000 } else { 1 };
    let xb = ir.bitcast(x, ScalarKind::Uint);
    let yb = ir.bitcast(y, ScalarKind::Uint);
    let unit = ir.u32(step, n);
    let zero = ir.float(0.0, s, n);
    let below = ir.bin(Bo::Less, x, y);
    let positive = ir.bin(Bo::Greater, x, zero);
    let away = ir.bin(Bo::Equal, below, positive);
    let up = ir.bin(Bo::Add, xb, unit);
    let down = ir.bin(Bo::Subtract, xb, unit);
    let stepped = ir.select(away, up, down);
    let sign_mask = ir.u32(0x8000_0000, n);
    let y_sign = ir.bin(Bo::And, yb, sign_mask);
    let from_zero = ir.bin(Bo::InclusiveOr, y_sign, unit);
    let is_zero = ir.bin(Bo::Equal, x, zero);
    let bits = ir.select(is_zero, from_zero, stepped);
    let next = ir.bitcast(bits, ScalarKind::Float);
    let equal = ir.bin(Bo::Equal, x, y);
    let next = ir.select(equal, y, next);
    let x_nan = ir.bin(Bo::NotEqual, x, x);
    let y_nan = ir.bin(Bo::NotEqual, y, y);
    let nan = ir.bin(Bo::InclusiveOr, x_nan, y_nan);
    let sum = ir.bin(Bo::Add, x, y);
    ir.select(nan, sum, next)
}

/// `x - 2 * round(x / 2)`, in [-1, 1] and exact: halving and doubling are
/// exact, and the difference is a multiple of `ulp(x)` below 1 in magnitude.
fn reduce_period_two(ir: &mut Ir, x: H, s: Scalar, n: u8) -> H {
    let half = ir.float(0.5, s, n);
    let two = ir.float(2.0, s, n);
    let halved = ir.bin(Bo::Multiply, x, half);
    let k = ir.math(Mf::Round, &[halved]);
    let whole = ir.bin(Bo::Multiply, k, two);
    ir.bin(Bo::Subtract, x, whole)
}

/// The test `b` on the magnitude bits (`bits & 0x7fffffff`) of an `f32`
/// (or a widened `half`).
fn classify_magnitude(ir: &mut Ir, b: Builtin, magnitude: H, s: Scalar, n: u8) -> H {
    let inf = ir.u32(0x7f80_0000, n);
    match b {
        Builtin::Isnan => ir.bin(Bo::Greater, magnitude, inf),
        Builtin::Isinf => ir.bin(Bo::Equal, magnitude, inf),
        Builtin::Isfinite => ir.bin(Bo::Less, magnitude, inf),
        _ => {
            // Normal: smallest normal <= magnitude < inf, as one unsigned
            // comparison that wraps the values below the smallest normal.
            // A widened half's smallest normal is 2^-14 (f32 bits 0x38800000).
            let min_normal = if s == Scalar::Half {
                0x3880_0000
            } else {
                0x0080_0000
            };
            let low = ir.u32(min_normal, n);
            let range = ir.u32(0x7f80_0000 - min_normal, n);
            let offset = ir.bin(Bo::Subtract, magnitude, low);
            ir.bin(Bo::Less, offset, range)
        }
    }
}
