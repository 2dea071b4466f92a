//! `numeric_limits<T>` of `<metal_limits>` for Metal's scalar types,
//! evaluated natively (the built-in headers are empty); for a vector type,
//! C++'s primary template (every member 0 or `false`), which
//! `<metal_limits>` does not specialize.
//!
//! Metal's `numeric_limits` has the members of C++'s ([numeric.limits]):
//! - the functions `min()`, `max()`, `lowest()`, `epsilon()`,
//!   `round_error()`, `infinity()`, `quiet_NaN()`, `signaling_NaN()` and
//!   `denorm_min()`, each the constant expression of its value in `T`;
//! - the constants `is_specialized`, `is_signed`, `is_integer`,
//!   `is_exact`, `is_bounded`, `is_modulo`, `has_infinity`,
//!   `has_quiet_NaN`, `has_signaling_NaN`, `digits`, `digits10`,
//!   `max_digits10`, `radix`, `min_exponent`, `min_exponent10`,
//!   `max_exponent` and `max_exponent10`.
//!
//! `half` is IEEE binary16 and `bfloat` has `float`'s 8 exponent bits with
//! 8 significant bits; the integer types are two's complement of their
//! Metal size. No literal spells an infinity or a NaN, so those values are
//! the bits of a `float` one reinterpreted (`as_type<float>(0x7fc00000u)`)
//! and converted to `T` (a `float` NaN or infinity converts to the same in
//! `half` and `bfloat`); the WebGPU dialect keeps such bit patterns out of
//! WGSL constant expressions (`lower/passes/browser_dialect.rs`).

use super::{Error, Program, Result};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{self, CastKind, Expr, ExprKind, LiteralSuffix, TemplateArg};
use crate::types::{Scalar, Type};

/// The bits of `float`'s positive infinity.
const FLOAT_INFINITY_BITS: u64 = 0x7f80_0000;
/// The bits of the quiet NaN `__builtin_nanf("")` gives.
const FLOAT_QUIET_NAN_BITS: u64 = 0x7fc0_0000;
/// The bits of the signaling NaN `__builtin_nansf("")` gives.
const FLOAT_SIGNALING_NAN_BITS: u64 = 0x7fa0_0000;

/// The format of a floating-point scalar type, as `numeric_limits` reports it.
struct FloatFormat {
    /// Significant bits, the implicit one included (`digits`).
    digits: i64,
    /// `max_exponent`: one more than the largest power of 2 that is finite.
    max_exponent: i64,
    /// `min_exponent`: one more than the exponent of the smallest normal.
    min_exponent: i64,
}

impl FloatFormat {
    fn of(s: Scalar) -> FloatFormat {
        match s {
            Scalar::Half => FloatFormat {
                digits: 11,
                max_exponent: 16,
                min_exponent: -13,
            },
            Scalar::BFloat => FloatFormat {
                digits: 8,
                max_exponent: 128,
                min_exponent: -125,
            },
            _ => FloatFormat {
                digits: 24,
                max_exponent: 128,
                min_exponent: -125,
            },
        }
    }

    /// The largest finite value: (2 - 2^(1-digits)) * 2^(max_exponent-1).
    fn max(&self) -> f64 {
        (2.0 - 2f64.powi(1 - self.digits as i32)) * 2f64.powi(self.max_exponent as i32 - 1)
    }

    /// The smallest positive normal value.
    fn min(&self) -> f64 {
        2f64.powi(self.min_exponent as i32 - 1)
    }

    /// The distance from 1 to the next value.
    fn epsilon(&self) -> f64 {
        2f64.powi(1 - self.digits as i32)
    }

    /// The smallest positive subnormal value.
    fn denorm_min(&self) -> f64 {
        2f64.powi(self.min_exponent as i32 - self.digits as i32)
    }

    /// `digits10`: decimal digits that survive a round trip through the type.
    fn digits10(&self) -> i64 {
        ((self.digits - 1) as f64 * std::f64::consts::LOG10_2).floor() as i64
    }

    /// `max_digits10`: decimal digits that tell every two values apart.
    fn max_digits10(&self) -> i64 {
        (1.0 + self.digits as f64 * std::f64::consts::LOG10_2).ceil() as i64
    }
}

impl Program<'_> {
    /// `numeric_limits<T>::max()` as the constant expression it stands for;
    /// `None` when `callee` is not a `numeric_limits` member.
    pub fn numeric_limit_call(&self, callee: &Expr) -> Result<Option<Expr>> {
        let ExprKind::Templated(path, args) = &callee.kind else {
            return Ok(None);
        };
        let Some(which) = limits_member(path) else {
            return Ok(None);
        };
        match self.limits_type(args, callee.span)? {
            Limits::Scalar(s) => function(s, which, callee.span).map(Some),
            Limits::Vector(ts) => unspecialized_function(ts, which, callee.span).map(Some),
        }
    }

    /// `numeric_limits<T>::digits`, `numeric_limits<T>::has_infinity`, ...
    /// (a constant, not a call) as its literal; `None` when `path` is not
    /// a `numeric_limits` member.
    pub(super) fn numeric_limit_constant(
        &self,
        path: &[String],
        args: &[TemplateArg],
        span: Span,
    ) -> Result<Option<Expr>> {
        let Some(which) = limits_member(path) else {
            return Ok(None);
        };
        match self.limits_type(args, span)? {
            Limits::Scalar(s) => constant(s, which, span).map(Some),
            Limits::Vector(_) => unspecialized_constant(which, span).map(Some),
        }
    }

    /// The type `numeric_limits<T>` is instantiated for.
    fn limits_type(&self, args: &[TemplateArg], span: Span) -> Result<Limits> {
        let [arg] = args else {
            return Err(Error::coded(
                Code::Template,
                span,
                "`numeric_limits` takes one type: `numeric_limits<T>`",
            ));
        };
        let arg_span = match arg {
            TemplateArg::Type(t) => t.span,
            TemplateArg::Expr(e) => e.span,
        };
        let ty = match arg {
            TemplateArg::Type(ts) => self.resolve_type(ts)?,
            TemplateArg::Expr(_) => {
                return Err(Error::coded(
                    Code::WrongKind,
                    arg_span,
                    "expected a type, found a value",
                ))
            }
        };
        match (ty, arg) {
            (Type::Scalar(s), _) => Ok(Limits::Scalar(s)),
            (Type::Vector(..), TemplateArg::Type(ts)) => Ok(Limits::Vector(ts.clone())),
            _ => Err(Error::coded(
                Code::Template,
                arg_span,
                "`numeric_limits` is defined for scalar and vector types only",
            )),
        }
    }
}

/// What `numeric_limits<T>` is instantiated for.
enum Limits {
    /// A scalar type: one of `<metal_limits>`'s specializations.
    Scalar(Scalar),
    /// A vector type (spelled so): C++'s primary template, which
    /// `<metal_limits>` does not specialize for vectors.
    Vector(ast::TypeSpec),
}

/// `numeric_limits<T>::which()` of the primary template ([numeric.limits]:
/// every member of a type without a specialization is 0 or false): `T()`,
/// the zero vector, spelled `static_cast<T>(0)`. SPIRV-Cross's clustered
/// subgroup `min`/`max` return `numeric_limits<T>::max()` of a vector `T`
/// for an inactive lane.
fn unspecialized_function(ts: ast::TypeSpec, which: &str, span: Span) -> Result<Expr> {
    if function(Scalar::Float, which, span).is_err() {
        return Err(unknown_member(which, span));
    }
    let zero = mk(
        ExprKind::Int {
            value: 0,
            suffix: LiteralSuffix::None,
            non_decimal: false,
        },
        span,
    );
    Ok(mk(
        ExprKind::Cast(CastKind::Static, ts, Box::new(zero)),
        span,
    ))
}

/// `numeric_limits<T>::which` of the primary template: `false` or 0.
fn unspecialized_constant(which: &str, span: Span) -> Result<Expr> {
    match constant(Scalar::Float, which, span)?.kind {
        ExprKind::Bool(_) => Ok(mk(ExprKind::Bool(false), span)),
        _ => Ok(int_constant(0, Scalar::Int, span)),
    }
}

/// The member a `numeric_limits<T>::member` path names.
fn limits_member(path: &[String]) -> Option<&str> {
    let parts: Vec<&str> = path
        .iter()
        .map(String::as_str)
        .skip_while(|p| *p == "metal")
        .collect();
    match parts.as_slice() {
        ["numeric_limits", which] => Some(which),
        _ => None,
    }
}

/// The member functions, for messages.
const FUNCTIONS: &str = "`min`, `max`, `lowest`, `epsilon`, `round_error`, `infinity`, `quiet_NaN`, `signaling_NaN` or `denorm_min`";

/// `numeric_limits<s>::which()`.
fn function(s: Scalar, which: &str, span: Span) -> Result<Expr> {
    if s.is_float() {
        let f = FloatFormat::of(s);
        return Ok(match which {
            "max" => float_literal(s, f.max(), span),
            "min" => float_literal(s, f.min(), span),
            "lowest" => float_literal(s, -f.max(), span),
            "epsilon" => float_literal(s, f.epsilon(), span),
            "round_error" => float_literal(s, 0.5, span),
            "denorm_min" => float_literal(s, f.denorm_min(), span),
            "infinity" => float_bits(s, FLOAT_INFINITY_BITS, span),
            "quiet_NaN" => float_bits(s, FLOAT_QUIET_NAN_BITS, span),
            "signaling_NaN" => float_bits(s, FLOAT_SIGNALING_NAN_BITS, span),
            _ => return Err(unknown_member(which, span)),
        });
    }
    let bits = s.size() * 8;
    let (lo, hi): (i128, i128) = match s {
        Scalar::Bool => (0, 1),
        _ if s.is_signed_integer() => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
        _ => (0, (1i128 << bits) - 1),
    };
    let v = match which {
        "max" => hi,
        "min" | "lowest" => lo,
        // C++ gives 0 for what an integer type does not have.
        "epsilon" | "round_error" | "infinity" | "quiet_NaN" | "signaling_NaN" | "denorm_min" => 0,
        _ => return Err(unknown_member(which, span)),
    };
    Ok(int_constant(v, s, span))
}

/// `numeric_limits<s>::which` (a static data member).
fn constant(s: Scalar, which: &str, span: Span) -> Result<Expr> {
    let float = s.is_float().then(|| FloatFormat::of(s));
    let integer = !s.is_float();
    let value_bits = s.size() as i64 * 8;
    let boolean = |b| Ok(mk(ExprKind::Bool(b), span));
    let int = |n: i64| Ok(int_constant(n as i128, Scalar::Int, span));
    match which {
        "is_specialized" | "is_bounded" => boolean(true),
        "is_signed" => boolean(s.is_float() || s.is_signed_integer()),
        "is_integer" | "is_exact" => boolean(integer),
        // Unsigned arithmetic wraps; signed overflow is undefined (C++).
        "is_modulo" => boolean(integer && s != Scalar::Bool && !s.is_signed_integer()),
        "has_infinity" | "has_quiet_NaN" | "has_signaling_NaN" => boolean(float.is_some()),
        "radix" => int(2),
        "digits" => int(match &float {
            Some(f) => f.digits,
            None if s == Scalar::Bool => 1,
            None if s.is_signed_integer() => value_bits - 1,
            None => value_bits,
        }),
        "digits10" => int(match &float {
            Some(f) => f.digits10(),
            None if s == Scalar::Bool => 0,
            None => {
                let digits = value_bits - i64::from(s.is_signed_integer());
                (digits as f64 * std::f64::consts::LOG10_2).floor() as i64
            }
        }),
        "max_digits10" => int(float.as_ref().map_or(0, FloatFormat::max_digits10)),
        "min_exponent" => int(float.as_ref().map_or(0, |f| f.min_exponent)),
        "max_exponent" => int(float.as_ref().map_or(0, |f| f.max_exponent)),
        // The powers of ten of the smallest normal and of the largest value.
        "min_exponent10" => int(float.as_ref().map_or(0, |f| f.min().log10().ceil() as i64)),
        "max_exponent10" => int(float.as_ref().map_or(0, |f| f.max().log10().floor() as i64)),
        _ if function(s, which, span).is_ok() => Err(Error::coded(
            Code::WrongKind,
            span,
            format!("`numeric_limits<T>::{which}` is a function: call it, `numeric_limits<T>::{which}()`"),
        )),
        _ => Err(unknown_member(which, span)),
    }
}

fn unknown_member(which: &str, span: Span) -> Error {
    Error::coded(
        Code::Unsupported,
        span,
        format!(
            "`numeric_limits<T>::{which}` is not supported; the functions are {FUNCTIONS}, \
             the constants `is_signed`, `is_integer`, `has_infinity`, `digits`, `max_exponent` and the rest of C++'s"
        ),
    )
}

fn mk(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

/// A literal of floating-point type `s` with the value `v` (exact in `s`).
fn float_literal(s: Scalar, v: f64, span: Span) -> Expr {
    let suffix = match s {
        Scalar::Half => LiteralSuffix::Half,
        Scalar::BFloat => LiteralSuffix::BFloat,
        _ => LiteralSuffix::Float,
    };
    let lit = mk(
        ExprKind::Float {
            value: v.abs(),
            suffix,
        },
        span,
    );
    if v < 0.0 {
        mk(ExprKind::Unary(ast::UnaryOp::Neg, Box::new(lit)), span)
    } else {
        lit
    }
}

/// `static_cast<s>(as_type<float>(bits))`: a `float` value no literal
/// spells, in `s`.
fn float_bits(s: Scalar, bits: u64, span: Span) -> Expr {
    let bits = mk(
        ExprKind::Int {
            value: bits,
            suffix: LiteralSuffix::Unsigned,
            non_decimal: true,
        },
        span,
    );
    let value = mk(
        ExprKind::Cast(
            CastKind::AsType,
            super::struct_templates::named_type("float", span),
            Box::new(bits),
        ),
        span,
    );
    mk(
        ExprKind::Cast(
            CastKind::Static,
            super::struct_templates::named_type(s.name(), span),
            Box::new(value),
        ),
        span,
    )
}

/// `static_cast<s>(v)`, spelled so that no literal overflows its own type
/// (`INT_MIN` is `-2147483647 - 1`).
fn int_constant(v: i128, s: Scalar, span: Span) -> Expr {
    if s == Scalar::Bool {
        return mk(ExprKind::Bool(v != 0), span);
    }
    let unsigned = !s.is_signed_integer();
    let suffix = match (unsigned, s.size()) {
        (true, 8) => LiteralSuffix::UnsignedLong,
        (true, _) => LiteralSuffix::Unsigned,
        (false, 8) => LiteralSuffix::Long,
        (false, _) => LiteralSuffix::None,
    };
    let lit = |n: u64| {
        mk(
            ExprKind::Int {
                value: n,
                suffix,
                non_decimal: false,
            },
            span,
        )
    };
    let value = if v < 0 {
        let magnitude = (-v - 1) as u64;
        let neg = mk(
            ExprKind::Unary(ast::UnaryOp::Neg, Box::new(lit(magnitude))),
            span,
        );
        mk(
            ExprKind::Binary(ast::BinaryOp::Sub, Box::new(neg), Box::new(lit(1))),
            span,
        )
    } else {
        lit(v as u64)
    };
    mk(
        ExprKind::Cast(
            CastKind::Static,
            super::struct_templates::named_type(s.name(), span),
            Box::new(value),
        ),
        span,
    )
}
