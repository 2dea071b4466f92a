//! The subset of Metal's `<metal_type_traits>` and `<metal_limits>` that
//! templates use, evaluated natively (the built-in headers are empty):
//! - value traits `is_same`, `is_floating_point`, `is_integral`,
//!   `is_signed`, `is_unsigned`, `is_arithmetic`, `is_scalar`, `is_vector`,
//!   as `X<T>::value` and `X_v<T>`; unlike C++'s, Metal's classification
//!   traits hold for vectors too (MSL §6.x, "Type traits": `is_integral<T>`
//!   "checks if T is an integral scalar or vector type"; SPIRV-Cross's
//!   integer `sign` template, constrained so, is called with `int4`), except
//!   `is_scalar`;
//! - type traits `enable_if<C, T>::type` / `enable_if_t`, `conditional` /
//!   `conditional_t`, and the identities `remove_cv_t`, `remove_const_t`,
//!   `remove_volatile_t` (our value types carry no cv-qualifiers),
//!   `remove_addrspace_t` (nor address spaces), and
//!   `make_scalar<T>::type` / `make_scalar_t` (a vector's component type);
//! - `numeric_limits<T>` for Metal's scalar types (in [`super::numeric_limits`]).
//!
//! `enable_if` with a false condition is a located error naming the
//! condition: without overloaded templates, that is where C++ would report
//! that no candidate remains.

use super::templates::type_arg_as_expr;
use super::{consteval, Error, Program, Result};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{self, Expr, ExprKind, TemplateArg};
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
            | "is_convertible"
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

/// `is_convertible<From, To>` ([meta.rel]) where it needs no overload
/// resolution: any scalar converts to any scalar and is broadcast to any
/// vector (MSL §2.12); a vector converts only to its own type (conversions
/// between vector types are explicit); any type to itself. `None` for a
/// struct to another type, or another type to a struct.
fn implicitly_convertible(from: &Type, to: &Type) -> Option<bool> {
    if from == to {
        return Some(true);
    }
    match (from, to) {
        (Type::Scalar(_), Type::Scalar(_) | Type::Vector(..)) => Some(true),
        (Type::Vector(..), Type::Scalar(_) | Type::Vector(..)) => Some(false),
        _ => None,
    }
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
        let arity = if matches!(name, "is_same" | "is_convertible") {
            2
        } else {
            1
        };
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
            Type::Scalar(s) | Type::Vector(s, _) => Some(s),
            _ => None,
        };
        Ok(Some(match name {
            "is_same" => ty == self.trait_arg_type(&args[1])?,
            "is_convertible" => {
                let to = self.trait_arg_type(&args[1])?;
                implicitly_convertible(&ty, &to).ok_or_else(|| {
                    Error::coded(
                        Code::NotConstant,
                        span,
                        format!(
                            "`is_convertible` from `{}` to `{}` is not evaluated at translation time",
                            self.display(&ty),
                            self.display(&to)
                        ),
                    )
                    .note("only scalar and vector types, and a type to itself, are classified; a struct's converting constructors and conversion operators are not")
                })?
            }
            "is_floating_point" => scalar.is_some_and(Scalar::is_float),
            "is_integral" => scalar.is_some_and(|s| s.is_integer() || s == Scalar::Bool),
            "is_signed" => scalar.is_some_and(|s| s.is_float() || s.is_signed_integer()),
            "is_unsigned" => scalar
                .is_some_and(|s| s == Scalar::Bool || (s.is_integer() && !s.is_signed_integer())),
            "is_arithmetic" => scalar.is_some(),
            "is_scalar" => matches!(ty, Type::Scalar(_)),
            "is_vector" => matches!(ty, Type::Vector(..)),
            _ => unreachable!("listed in value_trait"),
        }))
    }

    /// `decltype(e)` outside a function body: `e` must be a constant
    /// expression (a literal, a program-scope constant, ...) or an
    /// unevaluated `declval<T>()` form (`super::unevaluated`).
    pub(super) fn decltype_type(&self, ts: &ast::TypeSpec) -> Result<Type> {
        let Some(TemplateArg::Expr(e)) = ts.args.first() else {
            unreachable!("decltype holds its operand")
        };
        if let Some(ty) = self.unevaluated_type(e) {
            return Ok(ty);
        }
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
            // `<metal_type_traits>`' `remove_addrspace`: a type here never
            // holds its address space (that is the declaration's).
            ("remove_cv" | "remove_const" | "remove_volatile" | "remove_addrspace", [t]) => {
                self.trait_arg_type(t).map(Some)
            }
            // `<metal_type_traits>`: the component type of a scalar or vector.
            ("make_scalar", [t]) => match self.trait_arg_type(t)? {
                ty @ Type::Scalar(_) => Ok(Some(ty)),
                Type::Vector(s, _) | Type::Packed(s, _) => Ok(Some(Type::Scalar(s))),
                other => Err(Error::coded(
                    Code::Template,
                    ast_arg_span(t),
                    format!(
                        "`make_scalar` needs a scalar or vector type, not `{}`",
                        self.display(&other)
                    ),
                )),
            },
            _ => Ok(None),
        }
    }

    /// A templated name in an expression: a variable template's instance
    /// (see [`super::variable_templates`]), a value trait as `true`/`false`,
    /// a struct template member (`Traits<float>::value`) as the instance's
    /// member name; `None` for anything else.
    pub fn templated_expr(
        &self,
        path: &[String],
        args: &[TemplateArg],
        span: Span,
    ) -> Result<Option<Expr>> {
        if let Some(e) = self.variable_template_expr(path, args, span)? {
            return Ok(Some(e));
        }
        if let Some(v) = self.trait_value(path, args, span)? {
            return Ok(Some(Expr {
                kind: ExprKind::Bool(v),
                span,
            }));
        }
        if let Some(e) = self.numeric_limit_constant(path, args, span)? {
            return Ok(Some(e));
        }
        Ok(self.struct_template_path(path, args, span)?.map(|p| Expr {
            kind: ExprKind::Name(p),
            span,
        }))
    }
}

fn ast_arg_span(a: &TemplateArg) -> Span {
    match a {
        TemplateArg::Type(t) => t.span,
        TemplateArg::Expr(e) => e.span,
    }
}
