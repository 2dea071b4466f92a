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

/// Turns every parameter `T* thread & p` its function never rebinds into
/// `T* p`, in functions, function templates and struct templates' members.
pub fn pass_by_value(tu: &mut TranslationUnit) {
    tu.items.iter_mut().for_each(item);
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
    for p in &mut f.params {
        if !is_pointer_reference(&p.ty) {
            continue;
        }
        if p.name.as_ref().is_some_and(|n| rebinds(body, &n.name)) {
            continue;
        }
        p.ty.ptr_ops.pop();
    }
}

/// `T* thread &` (with any qualifiers on `T` and on the pointer).
pub(super) fn is_pointer_reference(ts: &TypeSpec) -> bool {
    matches!(
        ts.ptr_ops.as_slice(),
        [
            PtrOp::Pointer {
                space: Some(AddressSpace::Thread),
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
