//! C++ namespaces, resolved while the AST is built.
//!
//! Metal looks functions up by their unqualified name (`newFunctionWithName:`
//! takes `"add"` for `namespace k { kernel void add(...) }`), and WGSL has no
//! namespaces, so members are kept at program scope under their own names:
//! `namespace a { ... }` is flattened and a qualified name `a::f` is checked
//! against the members declared so far and written as `f`. Two namespaces
//! declaring the same name would then clash, so that is refused with a
//! located error naming both.

use super::*;
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

/// Leaves `levels` namespaces entered by [`enter`].
pub(super) fn leave(levels: usize) {
    NAMESPACES.with(|n| {
        let mut n = n.borrow_mut();
        let keep = n.current.len() - levels;
        n.current.truncate(keep);
    });
}

/// Records the names `item` declares in the current namespace; a name that
/// another namespace already declared is an error.
pub(super) fn declare(item: &Item) -> Result<()> {
    for name in declared_names(item) {
        NAMESPACES.with(|n| {
            let mut n = n.borrow_mut();
            let here = n.current.join("::");
            if let Some(other) = n.owner.get(&name.name).filter(|o| **o != here) {
                return Err(Error {
                    span: name.span,
                    message: format!(
                        "`{}` is declared in {} and in {}: namespace members share one program scope in WGSL, so their names must differ",
                        name.name,
                        describe(other),
                        describe(&here)
                    ),
                });
            }
            n.owner.insert(name.name.clone(), here.clone());
            if !here.is_empty() {
                n.members.entry(here).or_default().insert(name.name.clone());
            }
            Ok(())
        })?;
    }
    Ok(())
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
        Item::Function(f) if f.body.is_some() => vec![f.name.clone()],
        Item::Global(g) => g.declarators.iter().map(|d| d.name.clone()).collect(),
        Item::Enum(e) => e
            .name
            .iter()
            .chain(e.tag.iter())
            .cloned()
            .chain(e.enumerators.iter().map(|(n, _)| n.clone()))
            .collect(),
        Item::Template(t) => match &t.item {
            Templated::Function(f) => vec![f.name.clone()],
            Templated::Struct(s) => vec![s.name.clone()],
        },
        _ => Vec::new(),
    }
}

/// Removes a leading user-namespace qualifier from `parts` (`a::b::f` →
/// `f`), looking in the enclosing namespaces first as C++ does. Paths that
/// start with no user namespace (`metal::`, `S::N`) are left alone.
pub(super) fn resolve(mut parts: Vec<String>, absolute: bool, span: Span) -> Vec<String> {
    if parts.len() < 2 {
        return parts;
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
                if !members.contains(&parts[len]) && n.error.is_none() {
                    n.error = Some(Error {
                        span,
                        message: format!("no member named `{}` in namespace `{key}`", parts[len]),
                    });
                }
                return parts.split_off(len);
            }
        }
        parts
    })
}
