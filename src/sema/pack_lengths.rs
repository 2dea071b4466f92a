//! Packs expanded together must have as many elements each ([temp.variadic]/8):
//! `f(xs * ys...)` with `xs` of 2 elements and `ys` of 3 is ill-formed. The
//! substitution (`subst`) expands a pattern once per element, so the
//! lengths are checked before it, where the pattern is.

use super::subst::Replacement;
use super::{Error, Result};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind, FunctionDecl};
use crate::syntax::from_pest::paths::{self, PathUse, Visitor};
use std::collections::HashMap;

/// Checks every expansion in `f` against the packs of `map`.
pub(super) fn check(f: &FunctionDecl, map: &HashMap<String, Replacement>) -> Result<()> {
    let mut lengths: HashMap<String, usize> = map
        .iter()
        .filter_map(|(n, r)| match r {
            Replacement::Pack(e) => Some((n.clone(), e.len())),
            _ => None,
        })
        .collect();
    if lengths.is_empty() {
        return Ok(());
    }
    // A function parameter pack has its type's pack's length.
    for p in f.params.iter().filter(|p| p.pack) {
        let mut ty = p.ty.clone();
        let named = named_packs(&lengths, |v| paths::ty(&mut ty, v));
        if let (Some(name), Some((_, n))) = (&p.name, named.first()) {
            lengths.insert(name.name.clone(), *n);
        }
    }
    let mut check = Check {
        lengths: &lengths,
        error: None,
    };
    let mut f = f.clone();
    paths::function(&mut f, &mut check);
    check.error.map_or(Ok(()), Err)
}

/// The packs of `lengths` that the paths `walk` visits name, with their
/// lengths, each once.
fn named_packs(
    lengths: &HashMap<String, usize>,
    walk: impl FnOnce(&mut paths::Visit),
) -> Vec<(String, usize)> {
    let mut named: Vec<(String, usize)> = Vec::new();
    let visit = |path: &mut Vec<String>, _: Span, _: PathUse| {
        if let [one] = path.as_slice() {
            if let Some(&n) = lengths.get(one) {
                if !named.iter().any(|(m, _)| m == one) {
                    named.push((one.clone(), n));
                }
            }
        }
    };
    walk(&mut super::subst::OwnPacks(visit));
    named
}

struct Check<'l> {
    lengths: &'l HashMap<String, usize>,
    error: Option<Error>,
}

impl Visitor for Check<'_> {
    fn path(&mut self, _: &mut Vec<String>, _: Span, _: PathUse) {}

    fn expr(&mut self, e: &mut Expr) {
        // Of a binary fold the parser cannot tell which operand is the
        // pattern (`subst`): each is checked.
        let patterns: Vec<&Expr> = match &e.kind {
            ExprKind::PackExpansion(p) => vec![p],
            ExprKind::Fold { pattern, init, .. } => {
                std::iter::once(&**pattern).chain(init.as_deref()).collect()
            }
            _ => return,
        };
        for p in patterns {
            let mut probe = p.clone();
            let named = named_packs(self.lengths, |v| paths::expr(&mut probe, v));
            self.same_lengths(&named, e.span);
        }
    }
}

impl Check<'_> {
    fn same_lengths(&mut self, named: &[(String, usize)], span: Span) {
        if let [(a, n), rest @ ..] = named {
            if let Some((b, m)) = rest.iter().find(|(_, m)| m != n) {
                self.error.get_or_insert(Error::coded(
                    Code::Template,
                    span,
                    format!(
                        "packs expanded together have different lengths: `{a}` has {n} element(s), `{b}` has {m}"
                    ),
                ));
            }
        }
    }
}
