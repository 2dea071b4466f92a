//! Template parameters of function pointer type (`template <typename T>
//! using RadixFunc = void (*)(thread T*, thread T*);` …
//! `template <typename T, RadixFunc<T> f> void step(..) { f(x, y); }`),
//! given the name of a function or of a function template instance
//! (`step<float, radix2<float>>`), as MLX's FFT picks its radix codelets.
//!
//! Metal resolves such a call at compile time. WGSL has no function
//! pointers, but none is needed: the argument is a
//! [`TemplateValue::Function`], and the instantiation writes the function's
//! name wherever the parameter is named, so `f(x, y)` is an ordinary call
//! of `radix2<float>` (resolved, specialised and checked as any other).
//! A function pointer anywhere else (a variable, a parameter, a member)
//! would be called through at run time, which WGSL cannot do (E0402).

use super::templates::TemplateValue;
use super::{Error, Program, Result};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{self, ExprKind, PtrOp, TemplateArg, Templated, UnaryOp};

/// The error for a function pointer type written where a value of it
/// would exist at run time.
pub(super) fn function_pointer_type(span: Span) -> Error {
    Error::coded(
        Code::NoWebGpuEquivalent,
        span,
        "a function pointer (`R (*)(..)`) has no WebGPU equivalent: WGSL has no function pointers or indirect calls",
    )
    .note("a template parameter of function pointer type, given a function's name (`template <F f> .. f(x)`, `g<radix2<float>>`), is supported: the call is resolved at translation, as Metal resolves it; a port passes the function so, or switches over an index to call one of several")
}

impl Program<'_> {
    /// True when template parameter `p` has a function pointer type.
    pub(super) fn is_function_parameter(&self, p: &ast::TemplateParam) -> bool {
        matches!(&p.kind, ast::TemplateParamKind::Value(ty, _)
            if ty.ptr_ops.last() == Some(&PtrOp::Function) || self.names_function_pointer(ty))
    }

    /// True when `ts` names a plain alias of a function pointer type.
    pub(super) fn names_function_pointer(&self, ts: &ast::TypeSpec) -> bool {
        ts.ptr_ops.is_empty()
            && ts.args.is_empty()
            && !self.function_pointer_aliases.is_empty()
            && self.function_pointer_aliases.contains(&ts.path.join("::"))
    }

    /// The function that template argument `a` names, for parameter `p`
    /// of function pointer type: a function (`radix2`), a function template
    /// instance (`radix2<float>`), or its address (`&radix2<float>`).
    pub(super) fn function_argument(
        &self,
        p: &ast::TemplateParam,
        a: &TemplateArg,
    ) -> Result<TemplateValue> {
        let named = match a {
            TemplateArg::Type(ts)
                if ts.ptr_ops.is_empty() && ts.space.is_none() && !ts.is_const =>
            {
                Some((ts.path.clone(), ts.args.clone(), ts.span))
            }
            TemplateArg::Expr(e) => named_function(e),
            TemplateArg::Type(_) => None,
        };
        let span = match a {
            TemplateArg::Type(ts) => ts.span,
            TemplateArg::Expr(e) => e.span,
        };
        let not_a_function = || {
            Error::coded(
                Code::Template,
                span,
                format!(
                    "template parameter `{}` has a function pointer type: it needs the name of a function",
                    p.name.name
                ),
            )
        };
        let Some((path, args, _)) = named else {
            return Err(not_a_function());
        };
        let name = path.join("::");
        let last = path.last().cloned().unwrap_or_default();
        if args.is_empty()
            && self
                .functions
                .iter()
                .any(|f| f.name.name == name || f.name.name == last)
        {
            return Ok(TemplateValue::Function(path, Vec::new()));
        }
        let template = self.templates.iter().find(|t| {
            matches!(&t.item, Templated::Function(f) if (f.name.name == name || f.name.name == last) && t.params.len() >= args.len())
        });
        let Some(t) = template else {
            return Err(not_a_function());
        };
        let mut values = Vec::new();
        for (q, a) in t.params.iter().zip(&args) {
            values.push(self.explicit_value(q, a)?);
        }
        Ok(TemplateValue::Function(path, values))
    }

    /// The expression naming the function of `path` instantiated with
    /// `values` (`radix2<float>`), put in for a function parameter.
    pub(super) fn function_expr(
        &self,
        path: &[String],
        values: &[TemplateValue],
        span: Span,
    ) -> Result<ast::Expr> {
        if values.is_empty() {
            return Ok(ast::Expr {
                kind: ExprKind::Name(path.to_vec()),
                span,
            });
        }
        let mut args = Vec::new();
        for v in values {
            args.push(match v {
                TemplateValue::Type(ty) => TemplateArg::Type(self.type_spec_of(ty, span)?),
                TemplateValue::Value(n, s) => {
                    TemplateArg::Expr(super::templates::value_expr(*n, *s, span))
                }
                TemplateValue::Function(p, vs) => TemplateArg::Expr(self.function_expr(p, vs, span)?),
                TemplateValue::Template(t) => TemplateArg::Type(ast::TypeSpec {
                    path: t.split("::").map(str::to_string).collect(),
                    name_span: span,
                    span,
                    ..Default::default()
                }),
                TemplateValue::Object(..) => match self.replacement(v, span)? {
                    super::subst::Replacement::Object { whole, .. } => TemplateArg::Expr(whole),
                    _ => unreachable!("an object stays one"),
                },
                TemplateValue::Pack(_) => {
                    return Err(Error::coded(
                        Code::Template,
                        span,
                        "a function template instance with a parameter pack cannot be a template argument here",
                    ))
                }
            });
        }
        Ok(ast::Expr {
            kind: ExprKind::Templated(path.to_vec(), args),
            span,
        })
    }
}

/// The path and template arguments of the function that `e` names
/// (`f`, `f<float>`, `&f<float>`), with its span.
fn named_function(e: &ast::Expr) -> Option<(Vec<String>, Vec<TemplateArg>, Span)> {
    match &e.kind {
        ExprKind::Name(path) => Some((path.clone(), Vec::new(), e.span)),
        ExprKind::Templated(path, args) => Some((path.clone(), args.clone(), e.span)),
        ExprKind::Unary(UnaryOp::AddrOf, inner) => named_function(inner),
        _ => None,
    }
}
