//! References to pointer variables as parameters: `void f(device T*
//! thread & p)` (C++ [dcl.ref]; SPIR-V Cross passes its output pointers
//! so). The callee reads and writes through `p` exactly as through a copy
//! of the caller's pointer; only rebinding `p` (`p = q`, `p++`, `&p`)
//! would reach the caller's variable. So a parameter the function never
//! rebinds is passed as the pointer itself, by value, which lowering
//! already handles; one that is rebound keeps its reference and is
//! refused where its type is resolved ([`super::Program::resolve_type`]).
//! Rebinding through another reference to the same variable needs another
//! such parameter, which is checked too (C++ has no other way to rebind a
//! caller's `thread` pointer).

use super::callgraph::any_expr;
use crate::syntax::ast::{
    AddressSpace, Block, ExprKind, FunctionDecl, Item, PtrOp, Templated, TranslationUnit, TypeSpec,
    UnaryOp,
};
use std::collections::HashSet;

/// Turns every parameter `T* thread & p` its function never rebinds into
/// `T* p`, in functions, function templates and struct templates' members.
/// A function rebinds `p` where it assigns it, increments it, takes its
/// address, or passes it on to a parameter that is rebound (of a function
/// of that name: overloads are not told apart), found to a fixed point.
pub fn pass_by_value(tu: &mut TranslationUnit) {
    let rebound = rebound_parameters(&tu.items);
    REBOUND.with(|r| *r.borrow_mut() = rebound);
    tu.items.iter_mut().for_each(item);
}

thread_local! {
    /// The rebound pointer reference parameters of the translation unit
    /// being translated, as (function name, parameter position), for
    /// [`function`] on template instances.
    static REBOUND: std::cell::RefCell<HashSet<(String, usize)>> = Default::default();
}

fn item(item: &mut Item) {
    match item {
        Item::Function(f) => function(f),
        Item::Template(t) => match &mut t.item {
            Templated::Function(f) => function(f),
            Templated::Struct(st) => st.members.iter_mut().for_each(self::item),
            Templated::Variable(_) | Templated::Alias(_) => {}
        },
        _ => {}
    }
}

pub(super) fn function(f: &mut FunctionDecl) {
    let Some(body) = &f.body else {
        return;
    };
    let rebound = REBOUND.with(|r| {
        let r = r.borrow();
        (0..f.params.len())
            .map(|k| r.contains(&(f.name.name.clone(), k)))
            .collect::<Vec<_>>()
    });
    for (k, p) in f.params.iter_mut().enumerate() {
        if !is_pointer_reference(&p.ty) {
            continue;
        }
        if rebound[k] || p.name.as_ref().is_some_and(|n| rebinds(body, &n.name)) {
            continue;
        }
        p.ty.ptr_ops.pop();
    }
}

/// Every function (plain, template, member of a struct template) of `items`.
fn functions(items: &[Item]) -> Vec<&FunctionDecl> {
    let mut out = Vec::new();
    for i in items {
        match i {
            Item::Function(f) => out.push(f),
            Item::Template(t) => match &t.item {
                Templated::Function(f) => out.push(f),
                Templated::Struct(st) => out.extend(functions(&st.members)),
                Templated::Variable(_) | Templated::Alias(_) => {}
            },
            _ => {}
        }
    }
    out
}

/// The pointer reference parameters that their functions rebind, as
/// (function name, position): directly, or by passing them on to one.
fn rebound_parameters(items: &[Item]) -> HashSet<(String, usize)> {
    let fns = functions(items);
    let mut rebound = HashSet::new();
    loop {
        let before = rebound.len();
        for f in &fns {
            let Some(body) = &f.body else { continue };
            for (k, p) in f.params.iter().enumerate() {
                let Some(name) = p.name.as_ref().filter(|_| is_pointer_reference(&p.ty)) else {
                    continue;
                };
                let key = (f.name.name.clone(), k);
                if rebound.contains(&key) {
                    continue;
                }
                if rebinds(body, &name.name) || passes_to_rebound(body, &name.name, &rebound) {
                    rebound.insert(key);
                }
            }
        }
        if rebound.len() == before {
            return rebound;
        }
    }
}

/// Whether `body` passes `name` whole to a rebound parameter.
fn passes_to_rebound(body: &Block, name: &str, rebound: &HashSet<(String, usize)>) -> bool {
    any_expr(body, &|e| {
        let ExprKind::Call(callee, args) = &e.kind else {
            return false;
        };
        let callee = match &callee.kind {
            ExprKind::Name(p) | ExprKind::Templated(p, _) => p.join("::"),
            _ => return false,
        };
        args.iter().enumerate().any(|(j, a)| {
            matches!(&a.kind, ExprKind::Name(p) if p.len() == 1 && p[0] == name)
                && rebound.contains(&(callee.clone(), j))
        })
    })
}

/// `T* thread &`, `T*&` (with any qualifiers on `T` and on the pointer):
/// a reference to a pointer variable, which is in `thread` memory where
/// no space is written.
pub(crate) fn is_pointer_reference(ts: &TypeSpec) -> bool {
    matches!(
        ts.ptr_ops.as_slice(),
        [
            PtrOp::Pointer {
                space: Some(AddressSpace::Thread) | None,
                ..
            },
            PtrOp::Reference
        ]
    )
}

/// Whether `body` assigns `name`, increments or decrements it, or takes
/// its address (conservatively: a local of the same name counts too).
fn rebinds(body: &Block, name: &str) -> bool {
    let is_name = |e: &crate::syntax::ast::Expr| matches!(&e.kind, ExprKind::Name(p) if p.len() == 1 && p[0] == name);
    any_expr(body, &|e| match &e.kind {
        ExprKind::Assign(_, target, _) | ExprKind::PostIncDec(_, target) => is_name(target),
        ExprKind::Unary(UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::AddrOf, target) => {
            is_name(target)
        }
        _ => false,
    })
}

/// The pointer names `body` passes whole to a parameter that is a
/// reference to a pointer (`device T*& p`) of some function or function
/// template of the callee's name: the callee may move them, so they are
/// variables even where `body` itself never assigns them.
pub fn bound_names(
    program: &super::Program,
    body: &Block,
) -> Vec<(String, crate::source_map::Span)> {
    let mut names = Vec::new();
    super::callgraph::visit_block(body, &mut |e| {
        let ExprKind::Call(callee, args) = &e.kind else {
            return;
        };
        let path = match &callee.kind {
            ExprKind::Name(p) | ExprKind::Templated(p, _) => p.join("::"),
            _ => return,
        };
        let functions = match program.symbols.get(&path) {
            Some(super::Symbol::Functions(list)) => {
                list.iter().map(|&i| program.functions[i]).collect()
            }
            _ => Vec::new(),
        };
        let templates = program.template_names.get(&path).into_iter().flatten();
        let candidates = functions
            .into_iter()
            .chain(templates.map(|&i| super::templates::template_function(program.templates[i])));
        for f in candidates.filter(|f| takes_count(f, args.len())) {
            for (p, a) in f.params.iter().zip(args) {
                if !is_pointer_reference(&p.ty) {
                    continue;
                }
                if let ExprKind::Name(n) = &a.kind {
                    if let [name] = n.as_slice() {
                        names.push((name.clone(), a.span));
                    }
                }
            }
        }
    });
    names
}

/// Whether `f` may be called with `n` arguments (defaults and packs
/// considered loosely: a name passed to one that may not is not moved).
fn takes_count(f: &FunctionDecl, n: usize) -> bool {
    let required = f
        .params
        .iter()
        .filter(|p| p.default.is_none() && !p.pack)
        .count();
    n >= required && (n <= f.params.len() || f.params.iter().any(|p| p.pack))
}
