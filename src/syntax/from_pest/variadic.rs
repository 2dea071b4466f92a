//! Variadic templates (`template <typename T, typename... Ts>`, C++11
//! [temp.variadic]) are read by `template_decl` and expanded where they are
//! instantiated (`sema::subst`). One whose declaration uses a form that
//! rule does not read (a pack expansion in a base clause, `struct S :
//! Ts...`) may still be one a shader never uses, so such a declaration is
//! skipped (the grammar's `variadic_template` reads it to its end without
//! building it) and only a use of its name is refused, where it is written
//! ([`check`]), unless another declaration that is not variadic has that
//! name.

use super::paths::{self, PathUse};
use super::*;
use crate::diagnostics::Code;
use std::cell::RefCell;

thread_local! {
    /// Name → where its parameter pack is, of each skipped declaration.
    static SKIPPED: RefCell<Vec<(String, Span)>> = const { RefCell::new(Vec::new()) };
}

/// Forgets the skipped declarations: called before each translation unit.
pub(super) fn reset() {
    SKIPPED.with(|s| s.borrow_mut().clear());
}

/// Skips a `variadic_template` declaration, remembering its name.
pub(super) fn skip(pair: Pair<Rule>) {
    let mut pack = None;
    let mut name = None;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::pack_ellipsis if pack.is_none() => pack = Some(span_of(&p)),
            Rule::variadic_head => name = declared_name(p.as_str()),
            _ => {}
        }
    }
    if let (Some(name), Some(pack)) = (name, pack) {
        SKIPPED.with(|s| s.borrow_mut().push((name, pack)));
    }
}

/// The name a declaration's text declares: `S` of `struct S`, `A` of
/// `using A = ..`, `f` of `R f(Ts... xs)`.
fn declared_name(head: &str) -> Option<String> {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let all = words(head);
    match all.first().map(String::as_str) {
        Some("struct" | "class" | "union" | "using") => all.get(1).cloned(),
        _ => words(&head[..head.find('(')?]).pop(),
    }
}

/// Refuses the first use of a skipped variadic template in `items`.
pub(super) fn check(items: &mut [Item]) -> Result<()> {
    let skipped = SKIPPED.with(|s| std::mem::take(&mut *s.borrow_mut()));
    if skipped.is_empty() {
        return Ok(());
    }
    let declared_otherwise = |name: &str| {
        items.iter().any(|i| match i {
            Item::Function(f) => f.name.name == name,
            Item::Struct(s) => s.name.name == name,
            Item::Alias(a) => a.name.name == name,
            Item::Template(t) => match &t.item {
                Templated::Function(f) => f.name.name == name,
                Templated::Struct(s) => s.decl.name.name == name,
                Templated::Variable(v) => v.name.name == name,
                Templated::Alias(a) => a.name.name == name,
            },
            _ => false,
        })
    };
    let refused: Vec<(String, Span)> = skipped
        .into_iter()
        .filter(|(name, _)| !declared_otherwise(name))
        .collect();
    let mut first: Option<Error> = None;
    let mut visit = |path: &mut Vec<String>, at: Span, _: PathUse| {
        let Some(last) = path.last() else { return };
        if first.is_some() {
            return;
        }
        if let Some((name, _)) = refused.iter().find(|(n, _)| n == last) {
            first = Some(Error::coded(
                Code::Unsupported,
                at,
                format!(
                    "`{name}` is a variadic template whose declaration uses a form not supported yet (such as a pack expansion in a base clause, `struct S : Ts...`)"
                ),
            ));
        }
    };
    for item in items.iter_mut() {
        paths::item(item, &mut visit);
    }
    first.map_or(Ok(()), Err)
}
