//! Variable templates (C++14 [temp.pre]/1) with explicit and partial
//! specialisations ([temp.spec.partial]): `template <typename T> constant
//! constexpr bool is_complex_v = false;`, `template <typename T> constant
//! constexpr bool is_complex_v<complex_t<T>> = true;`.
//!
//! A use `is_complex_v<U>` (after substitution, so its arguments are
//! concrete) picks the primary template or the most specialised matching
//! specialisation exactly as a struct template does (see
//! [`super::struct_templates`]), substitutes the bound parameters into the
//! initializer and converts it to the declared type. A constant initializer
//! is evaluated here, once per use, so a recursive variable template
//! (`fact_v<N> = N * fact_v<N - 1>`) is bounded by
//! [`MAX_INSTANTIATION_DEPTH`] like recursive function templates; an
//! initializer that is not constant stays an expression for lowering.

use super::subst::Subst;
use super::templates::{value_expr, MAX_INSTANTIATION_DEPTH};
use super::{consteval, Error, Program, Result};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{self, CastKind, Expr, ExprKind, Init, TemplateArg, Templated};
use std::collections::HashMap;

/// The variable a variable template declares.
pub(super) fn variable_of(t: &ast::TemplateDecl) -> &ast::VariableTemplate {
    match &t.item {
        Templated::Variable(v) => v,
        _ => unreachable!("a variable template"),
    }
}

impl<'a> Program<'a> {
    /// Records a variable template or one of its specialisations.
    pub(super) fn declare_variable_template(&mut self, t: &'a ast::TemplateDecl) -> Result<()> {
        let v = variable_of(t);
        let name = &v.name;
        if self.symbols.contains_key(&name.name) || self.struct_templates.contains_key(&name.name) {
            return Err(Error::coded(
                Code::Redefinition,
                name.span,
                format!("redefinition of `{}` as a variable template", name.name),
            ));
        }
        let list = self.var_templates.entry(name.name.clone()).or_default();
        let has_primary = list.iter().any(|u| variable_of(u).specialization.is_none());
        match &v.specialization {
            None if has_primary => {
                return Err(Error::coded(
                    Code::Redefinition,
                    name.span,
                    format!("redefinition of variable template `{}`", name.name),
                ))
            }
            None if t.params.is_empty() => {
                return Err(Error::coded(
                    Code::Template,
                    name.span,
                    "a variable template needs at least one template parameter",
                ))
            }
            Some(_) if !has_primary => {
                return Err(Error::coded(
                    Code::Template,
                    name.span,
                    format!(
                        "`{}` is not a variable template: a specialisation needs the primary template declared before it",
                        name.name
                    ),
                ))
            }
            _ => {}
        }
        list.push(t);
        Ok(())
    }

    /// `is_complex_v<float>` as the expression its instance stands for (a
    /// literal when the initializer is constant); `None` when `path` names
    /// no variable template.
    pub(super) fn variable_template_expr(
        &self,
        path: &[String],
        args: &[TemplateArg],
        span: Span,
    ) -> Result<Option<Expr>> {
        let name = path.join("::");
        let Some(templates) = self.var_templates.get(&name) else {
            return Ok(None);
        };
        let primary = templates
            .iter()
            .find(|t| variable_of(t).specialization.is_none())
            .expect("specialisations follow their primary template");
        let values = self.class_template_arguments(primary, args, span)?;
        let (t, bound) = self.choose_specialization(&name, templates, &values, span)?;
        let v = variable_of(t);
        let mut map = HashMap::new();
        for (p, value) in t.params.iter().zip(&bound) {
            map.insert(p.name.name.clone(), self.replacement(value, p.span)?);
        }
        let subst = Subst::new(&map);
        let mut ty = v.ty.clone();
        subst.ty(&mut ty);
        let mut init = v.init.clone();
        subst.init(&mut init);
        let converted = converted(ty, init, span);
        self.evaluated(&name, converted, span).map(Some)
    }

    /// `e` as a literal when it is a constant integer or `bool` (evaluated
    /// under the instantiation depth limit); else `e` itself.
    fn evaluated(&self, name: &str, e: Expr, span: Span) -> Result<Expr> {
        let depth = self.var_template_depth.get();
        if depth >= MAX_INSTANTIATION_DEPTH {
            return Err(Error::coded(
                Code::LimitExceeded,
                span,
                format!(
                    "template instantiation depth exceeds the limit of {MAX_INSTANTIATION_DEPTH} (instantiating variable template `{name}`)"
                ),
            ));
        }
        self.var_template_depth.set(depth + 1);
        let value = consteval::eval(self, &e);
        self.var_template_depth.set(depth);
        match value {
            Ok(consteval::ConstValue::Bool(b)) => {
                Ok(value_expr(b as i64, crate::types::Scalar::Bool, span))
            }
            Ok(consteval::ConstValue::Int(n, s)) => Ok(value_expr(n, s, span)),
            Err(err) if err.code == Code::LimitExceeded => Err(err),
            _ => Ok(e),
        }
    }
}

/// The initializer converted to the declared type: `static_cast<T>(e)`, or
/// `(T){..}` for a braced list.
fn converted(mut ty: ast::TypeSpec, init: Init, span: Span) -> Expr {
    // The instance is a value: `constexpr`, `const` and the address space
    // say where a variable lives, not what the value is.
    ty.is_const = false;
    ty.is_constexpr = false;
    ty.space = None;
    let (kind, inner) = match init {
        Init::Expr(e) => (CastKind::Static, e),
        Init::List(items, s) => (
            CastKind::CStyle,
            Expr {
                kind: ExprKind::InitList(items),
                span: s,
            },
        ),
        Init::Paren(mut args, s) => (
            CastKind::Static,
            if args.len() == 1 {
                args.remove(0)
            } else {
                Expr {
                    kind: ExprKind::Comma(args),
                    span: s,
                }
            },
        ),
        Init::Designated(_, _, s) => (
            CastKind::CStyle,
            Expr {
                kind: ExprKind::InitList(Vec::new()),
                span: s,
            },
        ),
    };
    Expr {
        kind: ExprKind::Cast(kind, ty, Box::new(inner)),
        span,
    }
}
