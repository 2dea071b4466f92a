//! Structs declared in a function body (C++ [class.local]).
//!
//! A local struct is a program-scope struct named after the function being
//! lowered ([`ast::local_type_name`]: `f::S`, an instance's own
//! `f_float_4::S`), so each template instance has its own type, with
//! Metal's layout like any struct. Its members are what they are where it
//! is declared: template arguments are already substituted in the body,
//! the block's local aliases and local structs before it are substituted
//! by [`Lowerer::stmts`], and the function's `constexpr` locals it names
//! (`W_T wi[tn * bytes_per_pack];`) are replaced by their values here.
//!
//! Analysis borrows the translation unit, so, as for a struct template's
//! instance, the first lowering that meets a local struct records it as
//! pending (`sema::struct_templates`): it is appended to the translation
//! unit and the next round finds it declared. The struct's own
//! declaration span tells it apart from another local struct of the same
//! name in a function of the same name (`f::S@1`).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval::ConstValue;
use crate::sema::struct_templates::PendingInstance;
use crate::sema::subst::{Replacement, Subst};
use crate::sema::Symbol;
use crate::source_map::Span;
use crate::syntax::ast::{self, Item, LocalType, UNNAMED_LOCAL_TYPE};
use crate::syntax::from_pest::paths::PathUse;
use std::collections::HashMap;

impl Lowerer<'_, '_> {
    /// Declares local struct `t` (on the next analysis round, the first
    /// time) and its objects; returns what its names stand for in the rest
    /// of the block.
    pub(in crate::lower) fn local_type(
        &mut self,
        fx: &mut FnCtx,
        t: &LocalType,
    ) -> Result<HashMap<String, Replacement>> {
        let written = &t.decl.name;
        // `struct { .. };` declares nothing (clang warns so).
        if written.name == UNNAMED_LOCAL_TYPE && t.objects.is_none() {
            return Ok(HashMap::new());
        }
        let name = self.local_type_name(fx, t);
        self.require_local_type(&name, t)?;
        let ty = ast::TypeSpec {
            path: vec![name],
            name_span: written.span,
            span: written.span,
            ..Default::default()
        };
        let map: HashMap<String, Replacement> = std::iter::once(written)
            .chain(t.tag.as_ref())
            .map(|n| (n.name.clone(), Replacement::Type(ty.clone())))
            .collect();
        if let Some(objects) = &t.objects {
            let mut objects = objects.clone();
            Subst::new(&map).ty(&mut objects.ty);
            self.declaration(fx, &objects)?;
        }
        Ok(map)
    }

    /// The program-scope name of local struct `t` in the function being
    /// lowered: the first of `f::S`, `f::S@1`, .. that no other
    /// declaration has taken.
    fn local_type_name(&self, fx: &FnCtx, t: &LocalType) -> String {
        let function = fx.function.name.as_deref().unwrap_or_default();
        let spans = self.global.struct_spans.get_or_init(|| {
            self.tu
                .items
                .iter()
                .filter_map(|item| match item {
                    Item::Struct(s) => Some((s.name.name.clone(), s.span)),
                    _ => None,
                })
                .collect()
        });
        let pending = self.program.pending.borrow();
        let declared_at = |name: &str| {
            spans
                .get(name)
                .copied()
                .or_else(|| pending.get(name).map(|p: &PendingInstance| p.span))
        };
        // WGSL names it after this name: `f_unnamed`, not an escaped `(unnamed struct)`.
        let written = match t.decl.name.name.as_str() {
            UNNAMED_LOCAL_TYPE => "unnamed",
            n => n,
        };
        (0..)
            .map(|k| ast::local_type_name(function, written, k))
            .find(|name| declared_at(name).is_none_or(|at| at == t.decl.span))
            .expect("some ordinal is free")
    }

    /// Checks that local struct `t` is declared as `name`; the first time,
    /// records it for the next analysis round and fails.
    fn require_local_type(&self, name: &str, t: &LocalType) -> Result<()> {
        match self.program.symbols.get(name) {
            Some(Symbol::Type(_)) => return Ok(()),
            // Its declaration failed: that error says why.
            _ if self.program.struct_names.contains(name) => {
                return Err(Error::coded(
                    Code::Template,
                    t.decl.name.span,
                    format!("local struct `{name}` could not be declared"),
                ))
            }
            _ => {}
        }
        if !self.program.pending.borrow_mut().asked_before(name) {
            let items = self.local_type_items(name, t)?;
            self.program.pending.borrow_mut().push(PendingInstance {
                name: name.to_string(),
                at: None,
                items,
                span: t.decl.span,
            });
        }
        Err(Error::coded(
            Code::Template,
            t.decl.name.span,
            format!("local struct `{name}` is declared on the next analysis round"),
        ))
    }

    /// The program-scope declarations of local struct `t` named `name`:
    /// its nested structs and member aliases (renamed `name::m`), then the
    /// struct, then its `static_assert`s; the function's constants it
    /// names replaced by their values.
    fn local_type_items(&self, name: &str, t: &LocalType) -> Result<Vec<Item>> {
        let written = &t.decl.name.name;
        let mut map = local_constants(&t.decl, &t.members);
        let own = ast::TypeSpec {
            path: vec![name.to_string()],
            name_span: t.decl.name.span,
            span: t.decl.name.span,
            ..Default::default()
        };
        map.insert(written.clone(), Replacement::Type(own));
        let subst = Subst::new(&map);
        let rename = |member: &mut String| {
            *member = crate::sema::struct_templates::rename_member(member, written, name);
        };
        let (mut ahead, mut after) = (Vec::new(), Vec::new());
        for item in &t.members {
            let mut item = item.clone();
            match &mut item {
                Item::Struct(s) => {
                    rename(&mut s.name.name);
                    subst.struct_members(s);
                    ahead.push(item);
                }
                Item::Alias(a) => {
                    rename(&mut a.name.name);
                    subst.ty(&mut a.ty);
                    a.array.iter_mut().flatten().for_each(|e| subst.expr(e));
                    ahead.push(item);
                }
                Item::StaticAssert(a) => {
                    subst.expr(&mut a.cond);
                    after.push(item);
                }
                // `S::get`, `S::S`, `S::get@device`: the struct's own.
                Item::Function(f) => {
                    rename(&mut f.name.name);
                    subst.function(f);
                    after.push(item);
                }
                Item::Template(tp) => {
                    if let ast::Templated::Function(f) = &mut tp.item {
                        rename(&mut f.name.name);
                        subst.function(f);
                    }
                    after.push(item);
                }
                _ => {
                    return Err(Error::coded(
                        Code::InvalidType,
                        t.decl.span,
                        "a struct declared in a function cannot have static data members",
                    ))
                }
            }
        }
        let mut decl = t.decl.clone();
        decl.name.name = name.to_string();
        subst.struct_members(&mut decl);
        ahead.push(Item::Struct(decl));
        ahead.extend(after);
        Ok(ahead)
    }
}

/// The `constexpr` locals of the function being lowered that struct `decl`
/// and its member declarations name, as their values.
fn local_constants(decl: &ast::StructDecl, members: &[Item]) -> HashMap<String, Replacement> {
    let mut names = Vec::new();
    let mut visit = |path: &mut Vec<String>, at: Span, _: PathUse| {
        if let [n] = path.as_slice() {
            names.push((n.clone(), at));
        }
    };
    crate::syntax::from_pest::paths::struct_decl(&mut decl.clone(), &mut visit);
    for m in members {
        crate::syntax::from_pest::paths::item(&mut m.clone(), &mut visit);
    }
    names
        .into_iter()
        .filter_map(|(n, at)| {
            let value = crate::sema::constexpr_body::local(&n)?;
            Some((n, Replacement::Value(value_expr(&value, at)?)))
        })
        .collect()
}

/// A scalar constant as an expression of exactly its type.
pub(in crate::lower) fn value_expr(v: &ConstValue, span: Span) -> Option<ast::Expr> {
    match *v {
        ConstValue::Bool(b) => Some(crate::sema::templates::value_expr(
            b as i64,
            crate::types::Scalar::Bool,
            span,
        )),
        ConstValue::Int(n, s) => Some(crate::sema::templates::value_expr(n, s, span)),
        ConstValue::Float(x, s) => {
            let literal = ast::Expr {
                kind: ast::ExprKind::Float {
                    value: x,
                    suffix: ast::LiteralSuffix::None,
                },
                span,
            };
            let ty = ast::TypeSpec {
                path: vec![s.name().to_string()],
                name_span: span,
                span,
                ..Default::default()
            };
            Some(ast::Expr {
                kind: ast::ExprKind::Cast(ast::CastKind::Static, ty, Box::new(literal)),
                span,
            })
        }
        ConstValue::Composite(..) => None,
    }
}
