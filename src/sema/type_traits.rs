//! The subset of Metal's `<metal_type_traits>` and `<metal_limits>` that
//! templates use, evaluated natively (the built-in headers are empty):
//! - value traits `is_same`, `is_floating_point`, `is_integral`,
//!   `is_signed`, `is_unsigned`, `is_arithmetic`, `is_scalar`, `is_vector`,
//!   as `X<T>::value` and `X_v<T>`; as in C++, the classification traits are
//!   true for scalar types only (`is_floating_point_v<float4>` is false);
//! - type traits `enable_if<C, T>::type` / `enable_if_t`, `conditional` /
//!   `conditional_t`, and the identities `remove_cv_t`, `remove_const_t`,
//!   `remove_volatile_t` (our value types carry no cv-qualifiers);
//! - `numeric_limits<T>::max()`, `min()`, `lowest()`, `epsilon()` and
//!   `infinity()` for Metal's scalar types.
//!
//! `enable_if` with a false condition is a located error naming the
//! condition: without overloaded templates, that is where C++ would report
//! that no candidate remains.

use super::templates::type_arg_as_expr;
use super::{consteval, Error, Program, Result};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{self, CastKind, Expr, ExprKind, LiteralSuffix, TemplateArg};
use crate::types::{Scalar, Type};

/// A value trait's name without `metal::`, `_v` or `::value`.
fn value_trait(path: &[String]) -> Option<&str> {
    let parts: Vec<&str> = path
        .iter()
        .map(String::as_str)
        .skip_while(|p| *p == "metal")
        .collect();
    let name = match parts.as_slice() {
        [n] => n.strip_suffix("_v")?,
        [n, "value"] => n,
        _ => return None,
    };
    matches!(
        name,
        "is_same"
            | "is_floating_point"
            | "is_integral"
            | "is_signed"
            | "is_unsigned"
            | "is_arithmetic"
            | "is_scalar"
            | "is_vector"
    )
    .then_some(name)
}

impl Program<'_> {
    fn trait_arg_type(&self, a: &TemplateArg) -> Result<Type> {
        match a {
            TemplateArg::Type(ts) => self.resolve_type(ts),
            TemplateArg::Expr(e) => Err(Error::coded(
                Code::WrongKind,
                e.span,
                "expected a type, found a value",
            )),
        }
    }

    fn trait_arg_bool(&self, a: &TemplateArg) -> Result<bool> {
        let e = match a {
            TemplateArg::Type(ts) => type_arg_as_expr(ts),
            TemplateArg::Expr(e) => e.clone(),
        };
        let v = consteval::eval(self, &e)?;
        v.as_f64()
            .map(|f| f != 0.0)
            .ok_or_else(|| Error::coded(Code::NotConstant, e.span, "expected a `bool` constant"))
    }

    /// `is_same_v<T, U>`, `is_floating_point<T>::value`, ...: `None` when
    /// `path` is no value trait.
    fn trait_value(
        &self,
        path: &[String],
        args: &[TemplateArg],
        span: Span,
    ) -> Result<Option<bool>> {
        let Some(name) = value_trait(path) else {
            return Ok(None);
        };
        let arity = if name == "is_same" { 2 } else { 1 };
        if args.len() != arity {
            return Err(Error::coded(
                Code::Template,
                span,
                format!(
                    "`{name}` takes {arity} template argument(s), {} given",
                    args.len()
                ),
            ));
        }
        let ty = self.trait_arg_type(&args[0])?;
        let scalar = match ty {
            Type::Scalar(s) => Some(s),
            _ => None,
        };
        Ok(Some(match name {
            "is_same" => ty == self.trait_arg_type(&args[1])?,
            "is_floating_point" => scalar.is_some_and(Scalar::is_float),
            "is_integral" => scalar.is_some_and(|s| s.is_integer() || s == Scalar::Bool),
            "is_signed" => scalar.is_some_and(|s| s.is_float() || s.is_signed_integer()),
            "is_unsigned" => scalar
                .is_some_and(|s| s == Scalar::Bool || (s.is_integer() && !s.is_signed_integer())),
            "is_arithmetic" | "is_scalar" => scalar.is_some(),
            "is_vector" => matches!(ty, Type::Vector(..)),
            _ => unreachable!("listed in value_trait"),
        }))
    }

    /// `decltype(e)` outside a function body: `e` must be a constant
    /// expression (a literal, a program-scope constant, ...).
    pub(super) fn decltype_type(&self, ts: &ast::TypeSpec) -> Result<Type> {
        let Some(TemplateArg::Expr(e)) = ts.args.first() else {
            unreachable!("decltype holds its operand")
        };
        consteval::eval(self, e).map(|v| v.ty()).map_err(|_| {
            Error::coded(
                Code::Unsupported,
                e.span,
                "`decltype` of this expression is supported in function bodies only (local declarations and template arguments)",
            )
        })
    }

    /// `enable_if_t<C, T>`, `conditional_t<C, A, B>`, ... (`name` without
    /// `metal::`); `None` when `name` is no type trait.
    pub(super) fn trait_type(&self, name: &str, args: &[TemplateArg]) -> Result<Option<Type>> {
        let name = name.strip_suffix("::type").map_or_else(
            || name.strip_suffix("_t").unwrap_or("").to_string(),
            str::to_string,
        );
        match (name.as_str(), args) {
            ("enable_if", [cond, rest @ ..]) if rest.len() <= 1 => {
                if !self.trait_arg_bool(cond)? {
                    return Err(Error::coded(
                        Code::Template,
                        ast_arg_span(cond),
                        "`enable_if` condition is false: no type named `type` in `enable_if<false>`",
                    )
                    .note("this template is not viable for these template arguments"));
                }
                match rest {
                    [t] => self.trait_arg_type(t).map(Some),
                    _ => Ok(Some(Type::Void)),
                }
            }
            ("conditional", [cond, a, b]) => {
                let chosen = if self.trait_arg_bool(cond)? { a } else { b };
                self.trait_arg_type(chosen).map(Some)
            }
            ("remove_cv" | "remove_const" | "remove_volatile", [t]) => {
                self.trait_arg_type(t).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// A templated name in an expression: a value trait as `true`/`false`,
    /// a struct template member (`Traits<float>::value`) as the instance's
    /// member name; `None` for anything else.
    pub fn templated_expr(
        &self,
        path: &[String],
        args: &[TemplateArg],
        span: Span,
    ) -> Result<Option<Expr>> {
        if let Some(v) = self.trait_value(path, args, span)? {
            return Ok(Some(Expr {
                kind: ExprKind::Bool(v),
                span,
            }));
        }
        Ok(self.struct_template_path(path, args, span)?.map(|p| Expr {
            kind: ExprKind::Name(p),
            span,
        }))
    }

    /// `numeric_limits<T>::max()` as the constant expression it stands for;
    /// `None` when `callee` is not a `numeric_limits` member.
    pub fn numeric_limit_call(&self, callee: &Expr) -> Result<Option<Expr>> {
        let ExprKind::Templated(path, args) = &callee.kind else {
            return Ok(None);
        };
        let parts: Vec<&str> = path
            .iter()
            .map(String::as_str)
            .skip_while(|p| *p == "metal")
            .collect();
        let ["numeric_limits", which] = parts.as_slice() else {
            return Ok(None);
        };
        let span = callee.span;
        let [arg] = args.as_slice() else {
            return Err(Error::coded(
                Code::Template,
                span,
                "`numeric_limits` takes one type: `numeric_limits<T>`",
            ));
        };
        let Type::Scalar(s) = self.trait_arg_type(arg)? else {
            return Err(Error::coded(
                Code::Template,
                ast_arg_span(arg),
                "`numeric_limits` is defined for scalar types only",
            ));
        };
        limit(s, which, span).map(Some)
    }
}

fn ast_arg_span(a: &TemplateArg) -> Span {
    match a {
        TemplateArg::Type(t) => t.span,
        TemplateArg::Expr(e) => e.span,
    }
}

/// `numeric_limits<s>::which()`.
fn limit(s: Scalar, which: &str, span: Span) -> Result<Expr> {
    let mk = |kind| Expr { kind, span };
    let float = |v: f64| {
        let suffix = if s == Scalar::Half {
            LiteralSuffix::Half
        } else {
            LiteralSuffix::Float
        };
        let lit = mk(ExprKind::Float {
            value: v.abs(),
            suffix,
        });
        if v < 0.0 {
            mk(ExprKind::Unary(ast::UnaryOp::Neg, Box::new(lit)))
        } else {
            lit
        }
    };
    if s.is_float() {
        let (max, min, eps) = match s {
            Scalar::Half => (65504.0, 6.103515625e-5, 9.765625e-4),
            _ => (
                f32::MAX as f64,
                f32::MIN_POSITIVE as f64,
                f32::EPSILON as f64,
            ),
        };
        return Ok(match which {
            "max" => float(max),
            "min" => float(min),
            "lowest" => float(-max),
            "epsilon" => float(eps),
            // No literal spells infinity: the bits of a float infinity,
            // converted to the type (exact for half too).
            "infinity" => {
                let bits = mk(ExprKind::Int {
                    value: 0x7f80_0000,
                    suffix: LiteralSuffix::Unsigned,
                    non_decimal: true,
                });
                let inf = mk(ExprKind::Cast(
                    CastKind::AsType,
                    super::struct_templates::named_type("float", span),
                    Box::new(bits),
                ));
                mk(ExprKind::Cast(
                    CastKind::Static,
                    super::struct_templates::named_type(s.name(), span),
                    Box::new(inf),
                ))
            }
            _ => return Err(unknown_limit(which, span)),
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
        "epsilon" => 0,
        "infinity" => 0,
        _ => return Err(unknown_limit(which, span)),
    };
    Ok(int_constant(v, s, span))
}

fn unknown_limit(which: &str, span: Span) -> Error {
    Error::coded(
        Code::Unsupported,
        span,
        format!("`numeric_limits<T>::{which}` is not supported; use `max`, `min`, `lowest`, `epsilon` or `infinity`"),
    )
}

/// `static_cast<s>(v)`, spelled so that no literal overflows its own type
/// (`INT_MIN` is `-2147483647 - 1`).
fn int_constant(v: i128, s: Scalar, span: Span) -> Expr {
    let mk = |kind| Expr { kind, span };
    if s == Scalar::Bool {
        return mk(ExprKind::Bool(v != 0));
    }
    let unsigned = !s.is_signed_integer();
    let suffix = match (unsigned, s.size()) {
        (true, 8) => LiteralSuffix::UnsignedLong,
        (true, _) => LiteralSuffix::Unsigned,
        (false, 8) => LiteralSuffix::Long,
        (false, _) => LiteralSuffix::None,
    };
    let lit = |n: u64| {
        mk(ExprKind::Int {
            value: n,
            suffix,
            non_decimal: false,
        })
    };
    let value = if v < 0 {
        let magnitude = (-v - 1) as u64;
        let neg = mk(ExprKind::Unary(ast::UnaryOp::Neg, Box::new(lit(magnitude))));
        mk(ExprKind::Binary(
            ast::BinaryOp::Sub,
            Box::new(neg),
            Box::new(lit(1)),
        ))
    } else {
        lit(v as u64)
    };
    mk(ExprKind::Cast(
        CastKind::Static,
        super::struct_templates::named_type(s.name(), span),
        Box::new(value),
    ))
}
