//! Walks over naga IR that several lowering passes share: every statement
//! of a block (nested ones included, in order), every function an entry
//! point or function reaches through calls, and the variable a pointer's
//! access chain starts from.

use naga::{Arena, Block, Expression, Function, Handle, Module, Statement};
use std::collections::HashSet;

/// The expression the access chain of pointer `p` starts from (a local,
/// global or argument for the pointers naga allows), through its
/// `Access`/`AccessIndex` steps.
pub(crate) fn pointer_root(
    expressions: &Arena<Expression>,
    mut p: Handle<Expression>,
) -> Handle<Expression> {
    while let Expression::Access { base, .. } | Expression::AccessIndex { base, .. } =
        expressions[p]
    {
        p = base;
    }
    p
}

/// Calls `f` on every statement of `block`, nested ones included.
pub(crate) fn visit(block: &Block, f: &mut impl FnMut(&Statement, naga::Span)) {
    for (s, span) in block.span_iter() {
        f(s, *span);
        match s {
            Statement::Block(b) => visit(b, f),
            Statement::If { accept, reject, .. } => {
                visit(accept, f);
                visit(reject, f);
            }
            Statement::Switch { cases, .. } => cases.iter().for_each(|c| visit(&c.body, f)),
            Statement::Loop {
                body, continuing, ..
            } => {
                visit(body, f);
                visit(continuing, f);
            }
            _ => {}
        }
    }
}

/// Calls `f` on every statement of `block`, nested ones included, to
/// change it in place (not the blocks it holds: `f` sees those next).
pub(crate) fn visit_mut(block: &mut Block, f: &mut impl FnMut(&mut Statement)) {
    for s in block.iter_mut() {
        f(s);
        match s {
            Statement::Block(b) => visit_mut(b, f),
            Statement::If { accept, reject, .. } => {
                visit_mut(accept, f);
                visit_mut(reject, f);
            }
            Statement::Switch { cases, .. } => {
                cases.iter_mut().for_each(|c| visit_mut(&mut c.body, f))
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                visit_mut(body, f);
                visit_mut(continuing, f);
            }
            _ => {}
        }
    }
}

/// The functions `function` calls, directly or not.
pub(crate) fn callees(function: &Function, module: &Module) -> HashSet<Handle<Function>> {
    let mut found = HashSet::new();
    let mut todo = direct_callees(function);
    while let Some(h) = todo.pop() {
        if found.insert(h) {
            todo.extend(direct_callees(&module.functions[h]));
        }
    }
    found
}

/// The functions `function` calls itself, in the order of its calls.
pub(crate) fn direct_callees(function: &Function) -> Vec<Handle<Function>> {
    let mut found = Vec::new();
    visit(&function.body, &mut |s, _| {
        if let Statement::Call { function, .. } = s {
            found.push(*function);
        }
    });
    found
}
