//! Walks over naga IR that several lowering passes share: every statement
//! of a block (nested ones included, in order), and every function an
//! entry point or function reaches through calls.

use naga::{Block, Function, Handle, Module, Statement};
use std::collections::HashSet;

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

/// The functions `function` calls, directly or not.
pub(crate) fn callees(function: &Function, module: &Module) -> HashSet<Handle<Function>> {
    let mut found = HashSet::new();
    let mut todo = vec![];
    visit(&function.body, &mut |s, _| {
        if let Statement::Call { function, .. } = s {
            todo.push(*function);
        }
    });
    while let Some(h) = todo.pop() {
        if found.insert(h) {
            visit(&module.functions[h].body, &mut |s, _| {
                if let Statement::Call { function, .. } = s {
                    todo.push(*function);
                }
            });
        }
    }
    found
}
