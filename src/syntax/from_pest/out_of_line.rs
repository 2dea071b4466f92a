//! Member functions and constructors defined after their struct:
//! `float S::len() const { .. }`, `S::S(float x) : a(x) {}`.
//!
//! A member function declared without a body in its struct is remembered
//! here (with `static` and `const`, which the definition need not repeat);
//! its definition later becomes the same free functions as an in-struct
//! definition would (see `members`).

use super::members::{constructor, member_items, member_parts, MemberParts};
use super::*;
use crate::diagnostics::Code;
use std::cell::RefCell;
use std::collections::HashMap;

/// A member function declared in its struct without a body.
struct Declared {
    name: String,
    is_static: bool,
    is_const: bool,
    /// The address space after the parameters, if any.
    this_space: Option<AddressSpace>,
    /// Defined in the struct: only its `static` matters here.
    has_body: bool,
}

thread_local! {
    /// Struct name → its bodiless member declarations.
    static DECLARED: RefCell<HashMap<String, Vec<Declared>>> = RefCell::new(HashMap::new());
}

/// Forgets every declaration (once per translation unit).
pub(super) fn reset() {
    DECLARED.with(|d| d.borrow_mut().clear());
}

/// The static member functions of struct `s` declared so far.
pub(super) fn declared_statics(s: &str) -> Vec<String> {
    DECLARED.with(|d| {
        d.borrow()
            .get(s)
            .map(|list| {
                list.iter()
                    .filter(|m| m.is_static)
                    .map(|m| m.name.clone())
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// Remembers `parts`, a member function of `s` (see [`Declared`]).
pub(super) fn declare(s: &Ident, parts: &MemberParts) {
    DECLARED.with(|d| {
        d.borrow_mut()
            .entry(s.name.clone())
            .or_default()
            .push(Declared {
                name: parts.name.name.clone(),
                is_static: parts.is_static,
                is_const: parts.is_const,
                this_space: parts.this_space.map(|s| s.0),
                has_body: parts.body.is_some(),
            })
    });
}

/// Whether a `member_def` pair defines a member of a namespace
/// (`float4 N::f(float4 c) { .. }`) rather than of a struct: it then
/// declares its name in that namespace itself (see [`definition`]).
pub(super) fn defines_namespace_member(pair: &Pair<Rule>) -> bool {
    pair.as_rule() == Rule::member_def
        && pair
            .clone()
            .into_inner()
            .find(|p| p.as_rule() == Rule::member_owner)
            .and_then(|p| p.into_inner().next())
            .is_some_and(|owner| namespace_owner(owner.as_str()))
}

/// A qualifier that names a namespace and no struct with member declarations.
fn namespace_owner(name: &str) -> bool {
    !DECLARED.with(|d| d.borrow().contains_key(name)) && super::namespaces::is_namespace(name)
}

/// `float S::len() const { .. }`: the free functions of that member;
/// `float4 N::f(float4 c) { .. }`: the function `f` of namespace `N`.
pub(super) fn definition(pair: Pair<Rule>) -> Result<Vec<Item>> {
    let parts = member_parts(pair)?;
    let owner = parts.owner.clone().expect("member_def names its struct");
    if namespace_owner(&owner.name) {
        return namespace_member(parts, &owner);
    }
    let parts = declared_parts(parts, &owner)?;
    let mut items = member_items(&owner, parts)?;
    super::members::qualify_static_calls(&mut items, &owner.name, &declared_statics(&owner.name));
    Ok(items)
}

/// The definition of a function declared in namespace `owner`, declared
/// there (so it meets its prototype, and its renaming if it has one).
fn namespace_member(parts: MemberParts, owner: &Ident) -> Result<Vec<Item>> {
    if parts.is_const || parts.this_space.is_some() {
        let at = parts.this_space.map_or(parts.name.span, |(_, at)| at);
        return Err(Error::coded(
            Code::OutOfLineDefinition,
            at,
            format!(
                "`{}` is a namespace: its function `{}` has no object, so no `const` or address space after its parameters",
                owner.name, parts.name.name
            ),
        ));
    }
    let mut item = Item::Function(FunctionDecl {
        stage: None,
        attributes: Vec::new(),
        ret: parts.ret,
        name: parts.name,
        params: parts.params,
        body: parts.body,
        span: parts.span,
    });
    let levels = super::namespaces::enter(Some(&owner.name));
    let declared = super::namespaces::declare(&mut item);
    super::namespaces::leave(levels);
    declared?;
    Ok(vec![item])
}

/// `parts` of `owner` with `static` taken from its declaration in the
/// struct, which must exist.
fn declared_parts(mut parts: MemberParts, owner: &Ident) -> Result<MemberParts> {
    let declared = DECLARED.with(|d| {
        d.borrow().get(&owner.name).map(|list| {
            list.iter()
                .filter(|m| m.name == parts.name.name && !m.has_body)
                .filter(|m| m.this_space == parts.this_space.map(|s| s.0))
                .map(|m| (m.is_static, m.is_const))
                .collect::<Vec<_>>()
        })
    });
    let Some(declared) = declared else {
        return Err(Error::coded(
            Code::OutOfLineDefinition,
            owner.span,
            format!(
                "`{}` is not a struct with member declarations; an out-of-line member definition needs `{}` declared in its struct first",
                owner.name, parts.name.name
            ),
        ));
    };
    if declared.is_empty() {
        return Err(Error::coded(
            Code::OutOfLineDefinition,
            parts.name.span,
            format!(
                "out-of-line definition of `{}` does not match any declaration in `{}`",
                parts.name.name, owner.name
            ),
        ));
    }
    let Some(&(is_static, _)) = declared.iter().find(|(_, c)| *c == parts.is_const) else {
        let want = if parts.is_const { "non-const" } else { "const" };
        return Err(Error::coded(
            Code::OutOfLineDefinition,
            parts.name.span,
            format!(
                "out-of-line definition of `{}` differs in `const` from its declaration in `{}` (declared {want})",
                parts.name.name, owner.name
            ),
        ));
    };
    parts.is_static = is_static;
    Ok(parts)
}

/// Whether a `template_decl` pair defines a member of a struct template.
pub(super) fn is_template_member(pair: &Pair<Rule>) -> bool {
    pair.clone().into_inner().any(|p| {
        matches!(
            p.as_rule(),
            Rule::template_member_def | Rule::template_ctor_def
        )
    })
}

/// `template <typename T> T P<T>::get() const { .. }`: the member joins
/// the members of struct template `P` (declared earlier in `items`), which
/// are instantiated with it. The definition must name the template's
/// parameters as the struct template does, in order (`P<T>`).
/// `template <> T P<float>::get() const { .. }` is an explicit
/// specialisation of that member (`member_specialization`).
pub(super) fn template_definition(pair: Pair<Rule>, items: &mut [Item]) -> Result<()> {
    let mut params = Vec::new();
    let mut def = None;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::template_param => params.push(super::template_param(p)?.name.name),
            Rule::template_member_def | Rule::template_ctor_def => def = Some(p),
            _ => {}
        }
    }
    let def = def.expect("a member definition");
    let owner_pair = def
        .clone()
        .into_inner()
        .find(|p| p.as_rule() == Rule::template_owner)
        .expect("an owner");
    let mut owner_inner = owner_pair.into_inner();
    let owner = ident(owner_inner.next().unwrap());
    let owner_args = owner_inner.next().unwrap();
    let args: Vec<String> = owner_args
        .clone()
        .into_inner()
        .map(|a| a.as_str().trim().to_string())
        .collect();
    let Some(template) = items.iter_mut().rev().find_map(|item| match item {
        Item::Template(TemplateDecl {
            params: tparams,
            item: Templated::Struct(st),
            ..
        }) if st.decl.name.name == owner.name && st.specialization.is_none() => {
            Some((tparams.clone(), st))
        }
        _ => None,
    }) else {
        return Err(Error::coded(
            Code::Template,
            owner.span,
            format!(
                "`{}` is not a struct template declared before this definition",
                owner.name
            ),
        ));
    };
    let (template_params, st) = template;
    if params.is_empty() && def.as_rule() == Rule::template_member_def {
        return super::member_specialization::specialize(
            &owner,
            &template_params,
            owner_args,
            def,
            st,
        );
    }
    let tparams: Vec<String> = template_params
        .iter()
        .map(|p| p.name.name.clone())
        .collect();
    if args != tparams || params != tparams {
        return Err(Error::coded(
            Code::Template,
            owner.span,
            format!(
                "an out-of-line member of `{}` must be written `template <{}> ... {}<{}>::member`, with the template's own parameter names",
                owner.name,
                tparams.join(", "),
                owner.name,
                tparams.join(", ")
            ),
        ));
    }
    let new_items = if def.as_rule() == Rule::template_ctor_def {
        let ctor = def.into_inner().nth(1).unwrap();
        vec![Item::Function(constructor(&owner, ctor)?)]
    } else {
        let parts = declared_parts(member_parts(def)?, &owner)?;
        member_items(&owner, parts)?
    };
    st.members.extend(new_items);
    Ok(())
}

/// `S::S(params) : inits { body }`: the constructor `S::S`.
pub(super) fn constructor_definition(pair: Pair<Rule>) -> Result<Vec<Item>> {
    let mut inner = pair.into_inner();
    let owner = ident(inner.next().unwrap().into_inner().next().unwrap());
    let ctor = inner.next().unwrap();
    if let Some(end) = ctor
        .clone()
        .into_inner()
        .find(|x| x.as_rule() == Rule::fn_declaration_end)
    {
        return Err(Error::coded(
            Code::Syntax,
            span_of(&end),
            format!("expected the body of constructor `{0}::{0}`", owner.name),
        ));
    }
    Ok(vec![Item::Function(constructor(&owner, ctor)?)])
}
