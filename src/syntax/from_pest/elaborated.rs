//! Typedefs of elaborated type specifiers: `typedef struct S S;`.
//!
//! C headers shared with Metal declare the typedef before the struct
//! (`typedef struct Node Node; struct Node { .. };`), which declares the
//! tag `S` as an incomplete type. Program-scope declarations are analysed
//! in order here, so such a typedef is moved after the definition it names;
//! one whose tag is never defined declares only an incomplete type, which
//! nothing can use by value, and is dropped.

use super::*;
use std::cell::RefCell;

thread_local! {
    /// Where the typedefs of elaborated names of this unit start.
    static NOTED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Forgets the typedefs noted (once per translation unit).
pub(super) fn reset() {
    NOTED.with(|n| n.borrow_mut().clear());
}

/// Whether a `typedef_decl` pair names its type with `struct`/`enum`.
pub(super) fn names_tag(pair: &Pair<Rule>) -> bool {
    let Some(ty) = pair.clone().into_inner().next() else {
        return false;
    };
    ty.into_inner()
        .filter(|p| p.as_rule() == Rule::base_type)
        .any(|b| {
            b.into_inner()
                .next()
                .is_some_and(|k| k.as_rule() == Rule::elaborated_kw)
        })
}

/// Remembers `alias`, a typedef of an elaborated name.
pub(super) fn note(alias: &Alias) {
    NOTED.with(|n| n.borrow_mut().push(alias.span.start));
}

/// Whether `item` defines the type `name`.
fn defines(item: &Item, name: &str) -> bool {
    match item {
        Item::Struct(s) => s.name.name == name,
        Item::Enum(e) => e.name.iter().chain(e.tag.iter()).any(|n| n.name == name),
        Item::Alias(a) => a.name.name == name,
        Item::Template(TemplateDecl {
            item: Templated::Struct(s),
            ..
        }) => s.decl.name.name == name && !s.forward,
        _ => false,
    }
}

/// Moves each noted typedef after the definition of the type it names when
/// that comes later, and drops those whose type is never defined.
pub(super) fn reorder(items: &mut Vec<Item>) {
    let noted = NOTED.with(|n| std::mem::take(&mut *n.borrow_mut()));
    if noted.is_empty() {
        return;
    }
    let mut i = 0;
    while i < items.len() {
        let target = match &items[i] {
            Item::Alias(a) if noted.contains(&a.span.start) && a.ty.path.len() == 1 => {
                a.ty.path[0].clone()
            }
            _ => {
                i += 1;
                continue;
            }
        };
        if items[..i].iter().any(|it| defines(it, &target)) {
            i += 1;
            continue;
        }
        let alias = items.remove(i);
        if let Some(at) = items[i..].iter().position(|it| defines(it, &target)) {
            // Placed after its definition: met again there, and kept.
            items.insert(i + at + 1, alias);
        }
    }
}
