//! C++ namespaces, resolved while the AST is built.
//!
//! Metal looks functions up by their unqualified name (`newFunctionWithName:`
//! takes `"add"` for `namespace k { kernel void add(...) }`), and WGSL has no
//! namespaces, so members are kept at program scope under their own names:
//! `namespace a { ... }` is flattened and a qualified name `a::f` is checked
//! against the members declared so far and written as `f`.
//!
//! When a second namespace declares a function, constant or alias whose
//! name is taken, it is renamed to its qualified name (`b::f`, `::f` for the
//! global namespace), and names resolve to it as C++ looks them up: `b::f`,
//! unqualified `f` inside `b` (innermost namespace first), `f` after
//! `using namespace b;` or `using b::f;`. An unqualified name that two
//! used namespaces declare is ambiguous. Structs, enums and entry points
//! keep one name (Metal finds kernels by their unqualified name), so those
//! clashes stay errors. A local variable with the name of a renamed member
//! declared in an enclosing namespace is not told apart from it.

use super::*;
use crate::diagnostics::Code;
use crate::preprocess::metal_stdlib;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

/// Namespaces seen so far in one translation unit.
#[derive(Default)]
struct Namespaces {
    /// The enclosing named namespaces, outermost first.
    current: Vec<String>,
    /// Qualified namespace name (`a::b`) → names declared in it.
    members: HashMap<String, HashSet<String>>,
    /// Name → the namespace that declared it (`""`: the global one).
    owner: HashMap<String, String>,
    /// Namespaces named by `using namespace`: their nested namespaces are
    /// found unqualified too (kept to the end of the unit: a simplification
    /// of C++'s block scoping that accepts every valid program).
    used: Vec<String>,
    /// The first error met while rewriting names (`path` cannot fail).
    error: Option<Error>,
    /// (namespace, name) → the program-scope name of a member renamed
    /// because another namespace declared its name first.
    renamed: HashMap<(String, String), String>,
    /// (namespace, name) → program-scope name made visible there by a
    /// using-declaration `using b::f;`.
    using_names: HashMap<(String, String), String>,
    /// (namespace, name) of the functions and function templates declared.
    functions: HashSet<(String, String)>,
    /// `using namespace metal;` was seen: unqualified lookup finds the
    /// standard library's namespace, user additions to it included.
    uses_metal: bool,
    /// The struct whose definition is being built: its name is found in
    /// its own body before it is declared.
    defining: Option<String>,
}

thread_local! {
    static NAMESPACES: RefCell<Namespaces> = RefCell::new(Namespaces::default());
}

/// Forgets every namespace: called before each translation unit.
pub(super) fn reset() {
    NAMESPACES.with(|n| *n.borrow_mut() = Namespaces::default());
}

/// The first error recorded while names were rewritten.
pub(super) fn take_error() -> Option<Error> {
    NAMESPACES.with(|n| n.borrow_mut().error.take())
}

/// Enters `namespace a::b {`; returns how many levels to leave afterwards.
pub(super) fn enter(name: Option<&str>) -> usize {
    let Some(name) = name else { return 0 };
    NAMESPACES.with(|n| {
        let mut n = n.borrow_mut();
        let parts: Vec<String> = name.split("::").map(|s| s.trim().to_string()).collect();
        for part in &parts {
            n.current.push(part.clone());
            let key = n.current.join("::");
            n.members.entry(key).or_default();
        }
        parts.len()
    })
}

/// `using namespace a;`: remembers `a` (resolved from the current
/// namespace outwards) when it is a user namespace.
pub(super) fn using_namespace(name: &str) {
    NAMESPACES.with(|n| {
        let mut n = n.borrow_mut();
        let name = name.trim_start_matches("::");
        n.uses_metal |= name == "metal";
        let found = (0..=n.current.len()).rev().find_map(|i| {
            let mut key = n.current[..i].join("::");
            if !key.is_empty() {
                key.push_str("::");
            }
            key.push_str(name);
            n.members.contains_key(&key).then_some(key)
        });
        if let Some(key) = found {
            n.used.push(key);
        }
    });
}

/// Whether `name`, looked up from the current namespace outwards, is a
/// user namespace declared so far (`float4 N::f(float4 c) { .. }` defines
/// a member of namespace `N`, not of a struct).
pub(super) fn is_namespace(name: &str) -> bool {
    NAMESPACES.with(|n| {
        let n = n.borrow();
        (0..=n.current.len()).rev().any(|i| {
            let mut key = n.current[..i].join("::");
            if !key.is_empty() {
                key.push_str("::");
            }
            key.push_str(name);
            n.members.contains_key(&key)
        })
    })
}

/// Starts building the definition of struct `name`; returns what
/// [`end_struct`] restores.
pub(super) fn begin_struct(name: Option<String>) -> Option<String> {
    NAMESPACES.with(|n| std::mem::replace(&mut n.borrow_mut().defining, name))
}

/// Ends a definition begun by [`begin_struct`].
pub(super) fn end_struct(outer: Option<String>) {
    NAMESPACES.with(|n| n.borrow_mut().defining = outer);
}

/// Leaves `levels` namespaces entered by [`enter`].
pub(super) fn leave(levels: usize) {
    NAMESPACES.with(|n| {
        let mut n = n.borrow_mut();
        let keep = n.current.len() - levels;
        n.current.truncate(keep);
    });
}

/// Records the names `item` declares in the current namespace; a name that
/// another namespace already declared renames `item` when it can be (see
/// the module documentation), else is an error.
pub(super) fn declare(item: &mut Item) -> Result<()> {
    for name in declared_names(item) {
        let renamed = NAMESPACES.with(|n| {
            let mut n = n.borrow_mut();
            let here = n.current.join("::");
            let function = is_function(item);
            if function {
                n.functions.insert((here.clone(), name.name.clone()));
            }
            if function
                && (overloads_metal(&n, &here, &name.name) || joins_operators(&n, &name.name))
            {
                n.members.entry(here).or_default().insert(name.name.clone());
                return Ok(None);
            }
            let taken = n.owner.get(&name.name).is_some_and(|o| *o != here)
                || n.renamed.contains_key(&(here.clone(), name.name.clone()));
            if taken && renamable(item) {
                let new = format!("{here}::{}", name.name);
                n.renamed.insert((here.clone(), name.name.clone()), new.clone());
                n.members.entry(here).or_default().insert(name.name.clone());
                return Ok(Some(new));
            }
            if let Some(other) = n.owner.get(&name.name).filter(|o| **o != here) {
                return Err(Error::coded(
                    Code::Redefinition,
                    name.span,
                    format!(
                        "`{}` is declared in {} and in {}: namespace members share one program scope in WGSL, so their names must differ",
                        name.name,
                        describe(other),
                        describe(&here)
                    ),
                ));
            }
            n.owner.insert(name.name.clone(), here.clone());
            n.members.entry(here).or_default().insert(name.name.clone());
            Ok(None)
        })?;
        if let Some(new) = renamed {
            rename(item, &name.name, &new);
        }
    }
    Ok(())
}

/// Whether `item` declares a function or a function template.
fn is_function(item: &Item) -> bool {
    matches!(
        item,
        Item::Function(_)
            | Item::Template(TemplateDecl {
                item: Templated::Function(_),
                ..
            })
    )
}

/// Whether a function `name` declared in namespace `here` joins one
/// overload set with the functions of that name in the other of `metal`
/// and the global namespace. After `using namespace metal;` (at global
/// scope, as MSL sources write it) unqualified lookup finds both
/// namespaces' declarations together ([namespace.udir]) and overload
/// resolution picks among them (MLX declares `simd_shuffle_down` for its
/// own struct next to the ones it adds to `metal` for `bfloat`), so the
/// two share the one program-scope name.
fn overloads_metal(n: &Namespaces, here: &str, name: &str) -> bool {
    let other = match here {
        "" => "metal",
        "metal" => "",
        _ => return false,
    };
    n.uses_metal
        && n.owner.get(name).is_some_and(|o| o == other)
        && n.functions.contains(&(other.to_string(), name.to_string()))
}

/// Whether an operator function `name` (`operator+`) joins the overloads
/// another namespace declared: C++ finds operators by argument-dependent
/// lookup in every namespace of their operands, so the overloads of one
/// operator form one set here, where overload resolution picks among them
/// by their parameter types.
fn joins_operators(n: &Namespaces, name: &str) -> bool {
    name.starts_with("operator")
        && n.owner
            .get(name)
            .is_some_and(|o| n.functions.contains(&(o.clone(), name.to_string())))
}

/// Whether `item` can live under another program-scope name.
fn renamable(item: &Item) -> bool {
    match item {
        Item::Function(f) => f.stage.is_none(),
        Item::Global(_) | Item::Alias(_) => true,
        Item::Template(t) => matches!(t.item, Templated::Alias(_)),
        _ => false,
    }
}

/// Gives the declaration of `old` in `item` the name `new`.
fn rename(item: &mut Item, old: &str, new: &str) {
    let names: Vec<&mut Ident> = match item {
        Item::Function(f) => vec![&mut f.name],
        Item::Alias(a) => vec![&mut a.name],
        Item::Template(t) => match &mut t.item {
            Templated::Alias(a) => vec![&mut a.name],
            _ => Vec::new(),
        },
        Item::Global(g) => g.declarators.iter_mut().map(|d| &mut d.name).collect(),
        _ => Vec::new(),
    };
    for name in names.into_iter().filter(|n| n.name == old) {
        name.name = new.to_string();
    }
}

/// `using b::f;`: makes `b::f` (as resolved in `resolved`) visible
/// unqualified in the current namespace.
pub(super) fn using_declaration(resolved: &[String], written: &str) {
    let Some(last) = written.rsplit("::").next() else {
        return;
    };
    NAMESPACES.with(|n| {
        let mut n = n.borrow_mut();
        let here = n.current.join("::");
        let target = resolved.join("::");
        if target != last.trim() {
            n.using_names
                .insert((here, last.trim().to_string()), target);
        }
    });
}

/// An unqualified `name` as C++ finds it: a using-declaration or a member
/// of the innermost enclosing namespace, then the namespaces named by
/// `using namespace`; `None` when nothing is found.
fn unqualified(n: &mut Namespaces, name: &str, absolute: bool, span: Span) -> Option<String> {
    let scopes: Vec<String> = if absolute {
        vec![String::new()]
    } else {
        (0..=n.current.len())
            .rev()
            .map(|i| n.current[..i].join("::"))
            .collect()
    };
    for scope in &scopes {
        let key = (scope.clone(), name.to_string());
        if let Some(r) = n.using_names.get(&key).or_else(|| n.renamed.get(&key)) {
            return Some(r.clone());
        }
        if n.members.get(scope).is_some_and(|m| m.contains(name)) {
            return Some(name.to_string());
        }
    }
    if absolute {
        return None;
    }
    let mut found: Vec<(String, String)> = Vec::new();
    for used in &n.used {
        let key = (used.clone(), name.to_string());
        let target = match n.renamed.get(&key) {
            Some(r) => r.clone(),
            None if n.members.get(used).is_some_and(|m| m.contains(name)) => name.to_string(),
            None => continue,
        };
        if !found.iter().any(|(_, t)| *t == target) {
            found.push((used.clone(), target));
        }
    }
    if found.len() > 1 && n.error.is_none() {
        let places: Vec<String> = found
            .iter()
            .map(|(ns, _)| format!("`{ns}::{name}`"))
            .collect();
        n.error = Some(Error::coded(
            Code::AmbiguousName,
            span,
            format!(
                "reference to `{name}` is ambiguous: it could be {}",
                places.join(" or ")
            ),
        ));
    }
    found.into_iter().next().map(|(_, t)| t)
}

fn describe(ns: &str) -> String {
    if ns.is_empty() {
        "the global namespace".to_string()
    } else {
        format!("namespace `{ns}`")
    }
}

fn declared_names(item: &Item) -> Vec<Ident> {
    match item {
        Item::Alias(a) => vec![a.name.clone()],
        Item::Struct(s) => vec![s.name.clone()],
        // A prototype declares the name too: `N::f` may name a function
        // whose definition is in another file of the library (E0333 says so).
        Item::Function(f) => vec![f.name.clone()],
        Item::Global(g) => g.declarators.iter().map(|d| d.name.clone()).collect(),
        Item::Enum(e) => e
            .name
            .iter()
            .chain(e.tag.iter())
            .cloned()
            .chain(
                e.enumerators
                    .iter()
                    .filter(|_| !e.scoped)
                    .map(|(n, _)| n.clone()),
            )
            .collect(),
        Item::Template(t) => match &t.item {
            Templated::Function(f) => vec![f.name.clone()],
            Templated::Struct(s) => vec![s.decl.name.clone()],
            Templated::Variable(v) => vec![v.name.clone()],
            Templated::Alias(a) => vec![a.name.clone()],
        },
        _ => Vec::new(),
    }
}

/// Removes a leading user-namespace qualifier from `parts` (`a::b::f` →
/// `f`), looking in the enclosing namespaces first as C++ does. Paths that
/// start with no user namespace (`metal::`, `S::N`) are left alone.
pub(super) fn resolve(mut parts: Vec<String>, absolute: bool, span: Span) -> Vec<String> {
    if let Some(provided) = metal_library_name(&parts, span) {
        return provided;
    }
    if parts.len() < 2 {
        return NAMESPACES.with(|n| {
            let mut n = n.borrow_mut();
            if n.renamed.is_empty() && n.using_names.is_empty() {
                return parts;
            }
            match parts
                .first()
                .and_then(|p| unqualified(&mut n, p, absolute, span))
            {
                Some(r) => vec![r],
                None => parts,
            }
        });
    }
    NAMESPACES.with(|n| {
        let mut n = n.borrow_mut();
        let scopes: Vec<String> = if absolute {
            vec![String::new()]
        } else {
            (0..=n.current.len())
                .rev()
                .map(|i| n.current[..i].join("::"))
                .chain(n.used.iter().cloned())
                .collect()
        };
        for scope in scopes {
            // The longest namespace prefix wins: `a::b::f` before `a::b`.
            for len in (1..parts.len()).rev() {
                let prefix = parts[..len].join("::");
                let key = if scope.is_empty() {
                    prefix
                } else {
                    format!("{scope}::{prefix}")
                };
                let Some(members) = n.members.get(&key) else {
                    continue;
                };
                // A source that adds to `namespace metal` (MLX's `bfloat16_t`)
                // still names the standard library's own members as
                // `metal::numeric_limits`: they are not among its members.
                if !members.contains(&parts[len]) && (key == "metal" || key.starts_with("metal::"))
                {
                    return parts;
                }
                if !members.contains(&parts[len]) && n.error.is_none() {
                    n.error = Some(Error::coded(
                        Code::UnknownMember,
                        span,
                        format!("no member named `{}` in namespace `{key}`", parts[len]),
                    ));
                }
                let mut rest = parts.split_off(len);
                if let Some(r) = n.renamed.get(&(key.clone(), rest[0].clone())) {
                    rest[0] = r.clone();
                }
                return rest;
            }
        }
        parts
    })
}

/// `metal::integral_constant` (and the rest of the `metal` class templates
/// `<metal_stdlib>` provides as text, see [`metal_stdlib`]) as its
/// program-scope name `__metal_integral_constant`; also the unqualified
/// name after `using namespace metal;` (or inside `namespace metal`) when
/// no declaration of the source's own is found first, as C++'s lookup
/// prefers an enclosing namespace's member to one a using-directive
/// nominates. `None` when `parts` names none of them, or the header was
/// not included.
fn metal_library_name(parts: &[String], span: Span) -> Option<Vec<String>> {
    let (name, rest, qualified) = match parts {
        [metal, name, rest @ ..] if metal == "metal" => (name, rest, true),
        [name, rest @ ..] => (name, rest, false),
        [] => return None,
    };
    let provided = metal_stdlib::program_scope_name(name)?;
    NAMESPACES.with(|n| {
        let mut n = n.borrow_mut();
        if !n.owner.contains_key(&provided) {
            return None;
        }
        if !qualified {
            let in_metal = n.current.first().is_some_and(|c| c == "metal");
            let own = n.defining.as_ref() == Some(name)
                || unqualified(&mut n, name, false, span).is_some();
            if own || !(n.uses_metal || in_metal) {
                return None;
            }
        }
        Some(
            std::iter::once(provided)
                .chain(rest.iter().cloned())
                .collect(),
        )
    })
}
