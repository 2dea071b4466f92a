//! Alias templates (C++11 [temp.alias]): `template <typename T> using
//! elem_t = typename Traits<T>::type;`. A use `elem_t<float>` *is* the
//! aliased type with the arguments put in for the parameters
//! ([temp.alias]/2), dependent ones included, so each use is replaced by
//! that type where it is written, in every declaration of the unit, and the
//! alias templates themselves are dropped: what follows (template
//! instantiation, deduction, lowering) sees only the types they stand for.
//!
//! A member of a plain alias of a template instance (`using true_type =
//! bool_constant<true>;` … `true_type::value`) is likewise written as the
//! member of the instance (`integral_constant<bool, true>::value`), which
//! is how the rest of the compiler finds members of instances.

use super::paths::{self, PathUse, Visitor};
use super::*;
use crate::diagnostics::Code;
use crate::sema::subst::{Replacement, Subst};
use std::collections::HashMap;

/// Deepest nesting of alias templates expanding into one another (as deep
/// as template instantiation may go).
const MAX_DEPTH: usize = 64;

/// One alias template: its parameters and the aliased type.
struct AliasTemplate {
    params: Vec<TemplateParam>,
    alias: Alias,
}

/// Replaces each use of an alias template in `items` by the type it
/// stands for, and removes the alias templates.
pub(super) fn expand(items: &mut Vec<Item>) -> Result<()> {
    let mut aliases = HashMap::new();
    let mut instances = HashMap::new();
    for i in items.iter() {
        if let Item::Alias(a) = i {
            let t = &a.ty;
            if !t.args.is_empty() && t.ptr_ops.is_empty() && t.space.is_none() && a.array.is_empty()
            {
                instances.insert(a.name.name.clone(), t.clone());
            }
        }
    }
    take_alias_templates(items, &mut aliases);
    if aliases.is_empty() && instances.is_empty() {
        return Ok(());
    }
    let mut expander = Expander {
        aliases: &aliases,
        instances: &instances,
        error: None,
    };
    for item in items.iter_mut() {
        paths::item(item, &mut expander);
    }
    expander.error.map_or(Ok(()), Err)
}

struct Expander<'a> {
    aliases: &'a HashMap<String, AliasTemplate>,
    /// Plain aliases of template instances: name → the instance as written.
    instances: &'a HashMap<String, TypeSpec>,
    /// The first error (a walk cannot stop).
    error: Option<Error>,
}

impl Visitor for Expander<'_> {
    fn path(&mut self, path: &mut Vec<String>, at: Span, how: PathUse) {
        // A use without arguments (`elem_t x;`, `elem_t(x)`): C++ needs
        // them, even where every parameter has a default (`elem_t<>`).
        let Some((a, _)) = self.alias_of(path) else {
            return;
        };
        let name = &a.alias.name.name;
        if how == PathUse::Type && self.error.is_none() {
            self.error = Some(Error::coded(
                Code::Template,
                at,
                format!("alias template `{name}` needs template arguments: `{name}<..>`"),
            ));
        }
    }

    fn ty(&mut self, t: &mut TypeSpec) {
        for _ in 0..MAX_DEPTH {
            match self.expand_type(t) {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    self.error.get_or_insert(e);
                    return;
                }
            }
        }
        self.error.get_or_insert(Error::coded(
            Code::LimitExceeded,
            t.span,
            format!("alias templates nest deeper than {MAX_DEPTH} levels here"),
        ));
    }

    fn expr(&mut self, e: &mut Expr) {
        // `true_type::value`: a member of the instance an alias names.
        if let ExprKind::Name(path) = &e.kind {
            if let Some(target) = self.instance_member(path) {
                e.kind = ExprKind::Templated(target.path, target.args);
            }
        }
    }

    fn templated(&mut self, path: &mut Vec<String>, args: &mut Vec<TemplateArg>, at: Span) {
        // `elem_t<T>(x)`, `elem_t<T>{..}`, `elem_t<T>::value`: a type
        // without qualifiers or declarators can stand where the name is.
        let mut t = TypeSpec {
            path: path.clone(),
            args: std::mem::take(args),
            name_span: at,
            span: at,
            ..TypeSpec::default()
        };
        self.ty(&mut t);
        if t.ptr_ops.is_empty() && t.space.is_none() && !t.is_const {
            *path = t.path;
            *args = t.args;
        } else {
            self.error.get_or_insert(Error::coded(
                Code::Template,
                at,
                format!(
                    "`{}` stands for a pointer, reference or qualified type here; use it in a declaration",
                    path.join("::")
                ),
            ));
        }
    }
}

impl Expander<'_> {
    /// The alias template `path` names, and how many of its parts name it:
    /// `elem_t` (1) or a member alias template `S::rebind` (2), with
    /// members of the aliased type after them.
    fn alias_of(&self, path: &[String]) -> Option<(&AliasTemplate, usize)> {
        (1..=path.len())
            .rev()
            .find_map(|n| Some((self.aliases.get(&path[..n].join("::"))?, n)))
    }

    /// Replaces `t` by what the alias template it names stands for;
    /// whether it named one.
    fn expand_type(&self, t: &mut TypeSpec) -> Result<bool> {
        if t.args.is_empty() {
            if let Some(target) = self.instance_member(&t.path) {
                t.path = target.path;
                t.args = target.args;
                return Ok(true);
            }
        }
        let Some((a, used)) = self.alias_of(&t.path) else {
            return Ok(false);
        };
        if t.args.is_empty() {
            // Reported by `path` (a bare name may be a variable).
            return Ok(false);
        }
        let map = arguments(a, &t.args, t)?;
        let mut new = a.alias.ty.clone();
        Subst::new(&map).ty(&mut new);
        // `elem_t<T>::value_type`: a member of the aliased type.
        if t.path.len() > used {
            if !new.ptr_ops.is_empty() {
                return Err(Error::coded(
                    Code::Template,
                    t.name_span,
                    format!(
                        "`{}<..>` is a pointer or reference type, which has no members",
                        t.path[..used].join("::")
                    ),
                ));
            }
            new.path.extend(t.path[used..].iter().cloned());
        }
        new.is_const |= t.is_const;
        new.is_constexpr |= t.is_constexpr;
        if t.space.is_some() {
            new.space = t.space;
        }
        new.ptr_ops.extend(t.ptr_ops.iter().copied());
        new.name_span = t.name_span;
        new.span = t.span;
        *t = new;
        Ok(true)
    }
}

impl Expander<'_> {
    /// `A::m` where `A` is a plain alias of a template instance (also a
    /// member alias, `S::A::m`): the instance's path and arguments with `m`
    /// after them.
    fn instance_member(&self, path: &[String]) -> Option<TypeSpec> {
        (1..path.len()).rev().find_map(|k| {
            let target = self.instances.get(&path[..k].join("::"))?;
            let mut t = target.clone();
            t.path.extend(path[k..].iter().cloned());
            Some(t)
        })
    }
}

/// Parameter name → argument of a use of `a` with arguments `args` (the
/// parameters' defaults filling in the rest).
fn arguments(
    a: &AliasTemplate,
    args: &[TemplateArg],
    at: &TypeSpec,
) -> Result<HashMap<String, Replacement>> {
    let name = &a.alias.name.name;
    if args.len() > a.params.len() && !a.params.iter().any(|p| p.pack) {
        return Err(Error::coded(
            Code::Template,
            template_arg_span(&args[a.params.len()]),
            format!(
                "too many template arguments for alias template `{name}`: it takes {}",
                a.params.len()
            ),
        ));
    }
    let mut map = HashMap::new();
    for (i, p) in a.params.iter().enumerate() {
        if p.pack {
            let rest = args.get(i..).unwrap_or_default();
            map.insert(p.name.name.clone(), pack_argument(rest));
            break;
        }
        let replacement = match (&p.kind, args.get(i)) {
            (TemplateParamKind::Template(_), Some(TemplateArg::Type(ts)))
                if ts.args.is_empty() && ts.ptr_ops.is_empty() =>
            {
                Replacement::Template(ts.path.clone())
            }
            (TemplateParamKind::Template(Some(default)), None) => {
                Replacement::Template(default.clone())
            }
            (TemplateParamKind::Type(_), Some(TemplateArg::Type(ts))) => {
                Replacement::Type(ts.clone())
            }
            (TemplateParamKind::Type(Some(default)), None) => {
                // A default may name the earlier parameters.
                let mut d = default.clone();
                Subst::new(&map).ty(&mut d);
                Replacement::Type(d)
            }
            (TemplateParamKind::Value(..), Some(TemplateArg::Expr(e))) => {
                Replacement::Value(e.clone())
            }
            // A name (`N`, `is_integral<T>::value`) parses as a type; here
            // it is a constant's (unless it is one of the language's types).
            (TemplateParamKind::Value(..), Some(TemplateArg::Type(ts)))
                if ts.ptr_ops.is_empty()
                    && !ts.is_const
                    && ts.space.is_none()
                    && crate::types::builtin_type(&ts.name()).is_none() =>
            {
                Replacement::Value(crate::sema::templates::type_arg_as_expr(ts))
            }
            (TemplateParamKind::Value(_, Some(default)), None) => {
                let mut d = default.clone();
                Subst::new(&map).expr(&mut d);
                Replacement::Value(d)
            }
            (_, Some(arg)) => {
                let expected = match p.kind {
                    TemplateParamKind::Type(_) => "a type",
                    TemplateParamKind::Value(..) => "a constant",
                    TemplateParamKind::Template(_) => "a struct template",
                };
                return Err(Error::coded(
                    Code::Template,
                    template_arg_span(arg),
                    format!(
                        "template argument {} of alias template `{name}` must be {expected} (parameter `{}`)",
                        i + 1,
                        p.name.name
                    ),
                ));
            }
            (_, None) => {
                return Err(Error::coded(
                    Code::Template,
                    at.span,
                    format!(
                        "too few template arguments for alias template `{name}`: `{}` has no default",
                        p.name.name
                    ),
                ));
            }
        };
        map.insert(p.name.name.clone(), replacement);
    }
    Ok(map)
}

/// What an alias template's parameter pack stands for: its arguments; or,
/// given exactly another template's unexpanded pack (`A<Ts...>` inside a
/// variadic template), that pack's name, so that the alias's own
/// expansions (`Tp...`) become expansions of it (`Ts...`).
fn pack_argument(rest: &[TemplateArg]) -> Replacement {
    if let [TemplateArg::Expr(e)] = rest {
        match &e.kind {
            ExprKind::TypePackExpansion(ts) => return Replacement::Type((**ts).clone()),
            ExprKind::PackExpansion(e) => return Replacement::Value((**e).clone()),
            _ => {}
        }
    }
    Replacement::Pack(
        rest.iter()
            .map(|a| match a {
                TemplateArg::Type(ts) => Replacement::Type(ts.clone()),
                TemplateArg::Expr(e) => Replacement::Value(e.clone()),
            })
            .collect(),
    )
}

/// Removes the alias templates from `items` (and the member alias
/// templates from struct templates' members) into `aliases`, by name.
fn take_alias_templates(items: &mut Vec<Item>, aliases: &mut HashMap<String, AliasTemplate>) {
    items.retain_mut(|i| match i {
        Item::Template(TemplateDecl {
            params,
            item: Templated::Alias(alias),
            ..
        }) => {
            // `using M = S<T>[n];`: a use stands for `metal::array<S<T>, n>`
            // (the same layout), which a type can spell.
            let mut alias = alias.clone();
            if !alias.array.is_empty() {
                let dims = std::mem::take(&mut alias.array);
                alias.ty = super::declarators::array_of(alias.ty, dims);
            }
            // A struct's member alias template stays declared too: a use
            // through a member alias of a template instance
            // (`NAXFrag_t::template dtype_frag_t<T>`) is resolved once the
            // instance is known (`sema::struct_templates`).
            let member = alias.name.name.contains("::");
            aliases.insert(
                alias.name.name.clone(),
                AliasTemplate {
                    params: params.clone(),
                    alias,
                },
            );
            member
        }
        // A struct template's stay its members too, for uses of an
        // instance's (`typename S::template rebind<U>` in a template,
        // `sema::struct_templates`).
        Item::Template(TemplateDecl {
            item: Templated::Struct(st),
            ..
        }) => {
            let mut members = st.members.clone();
            take_alias_templates(&mut members, aliases);
            true
        }
        _ => true,
    });
}
