//! Word views that need no atomics: buffers of sub-word data (`uchar4`,
//! `half2`, `short2`, structs of them) whose kernel only ever stores whole
//! elements, each a whole number of aligned words.
//!
//! Metal: any element of a `device uchar4*` may be written by its own
//! thread; elements are disjoint memory locations (C++).
//!
//! WGSL: a buffer of 8- or 16-bit data is a word view (`word_views.rs`),
//! and a view that takes sub-word stores holds `atomic<u32>` so that a
//! byte store leaves the neighbouring bytes of its word, which another
//! invocation may be writing, alone. When every store writes whole words
//! nobody's bytes share a word with anybody else's store, and plain `u32`
//! words do: the word store is a plain store rather than `atomicStore`, and
//! loads are plain loads (BENCHMARKS.md `grayscale4`).
//!
//! Mapping: a `device` pointer parameter whose element size is a multiple
//! of 4 bytes (so each element starts on a word), used in the kernel only
//! as `buffer[index]`, and written only as the whole target of an
//! assignment `buffer[index] = value` (or `op=`). Anything that could write
//! part of an element or let the pointer escape keeps atomic words: a
//! member or component store (`buffer[i].x = v`), `++`/`--`, `&`, passing
//! an element (or a part of one) to a function, which may take a
//! reference, a member call on it, binding a reference or pointer local to
//! it, pointer arithmetic or any bare use of the pointer, and range-based
//! `for` (whose expressions the visitor does not see).

use crate::sema::callgraph::visit_expr;
use crate::syntax::ast::{self, ExprKind, Init, StmtKind, UnaryOp};
use crate::types::{Structs, Type};

/// Whether kernel `body` stores into the buffer parameter `name`, a
/// pointer to `element`, only whole elements, each stored as whole words.
pub(in crate::lower) fn only_whole_word_stores(
    body: &ast::Block,
    name: &str,
    element: &Type,
    structs: &Structs,
) -> bool {
    if !stored_as_whole_words(element, structs)
        || body.stmts.iter().any(crate::sema::callgraph::has_range_for)
    {
        return false;
    }
    let mut names = 0usize;
    let mut indexed = 0usize;
    let mut partial = false;
    crate::sema::callgraph::visit_block(body, &mut |e| {
        names += usize::from(is_name(e, name));
        indexed += usize::from(indexes(e, name).is_some());
        partial |= may_write_part(e, name);
    });
    let mut bound = false;
    for_each_decl(&body.stmts, &mut |d| {
        // A reference or pointer local, or a constructor's arguments (which
        // may bind a reference member), could write part of an element.
        bound |= d.declarators.iter().any(|x| match &x.init {
            Some(Init::Expr(_)) if d.ty.ptr_ops.is_empty() => false,
            Some(i) => init_mentions(i, name),
            None => false,
        });
    });
    names == indexed && !partial && !bound
}

/// Whether a value of type `ty` at a word-aligned byte place is stored as
/// whole words, as `word_views.rs`'s `bytes_store` writes it: 4-byte
/// scalars, aligned vectors whose bytes fill whole words (`uchar4`,
/// `half2`, `float3`), and arrays and structs made only of those at
/// word-aligned offsets. Everything else takes some sub-word field store.
pub(in crate::lower) fn stored_as_whole_words(ty: &Type, structs: &Structs) -> bool {
    match ty {
        Type::Scalar(s) => s.size() == 4,
        Type::Vector(s, n) => s.size() <= 4 && (s.size() * u32::from(*n)) % 4 == 0,
        Type::Array(element, _) => stored_as_whole_words(element, structs),
        Type::Struct(id) if !structs.get(*id).is_union => {
            let offsets = crate::layout::struct_layout(*id, structs).offsets;
            structs
                .get(*id)
                .members
                .iter()
                .zip(offsets)
                .all(|(m, at)| at % 4 == 0 && stored_as_whole_words(&m.ty, structs))
        }
        _ => false,
    }
}

/// `name` itself.
fn is_name(e: &ast::Expr, name: &str) -> bool {
    matches!(&e.kind, ExprKind::Name(p) if p.len() == 1 && p[0] == name)
}

/// The index of `name[index]`.
fn indexes<'a>(e: &'a ast::Expr, name: &str) -> Option<&'a ast::Expr> {
    match &e.kind {
        ExprKind::Index(base, index) if is_name(base, name) => Some(index),
        _ => None,
    }
}

/// Whether `e` names `name` anywhere.
fn mentions(e: &ast::Expr, name: &str) -> bool {
    let mut found = false;
    visit_expr(e, &mut |x| found |= is_name(x, name));
    found
}

fn init_mentions(i: &Init, name: &str) -> bool {
    let mut found = false;
    crate::sema::callgraph::visit_init(i, &mut |x| found |= is_name(x, name));
    found
}

/// Whether expression `e` (not its operands) may write part of an element
/// of `name` or hand one to code that might.
fn may_write_part(e: &ast::Expr, name: &str) -> bool {
    match &e.kind {
        ExprKind::Assign(_, target, _) => {
            mentions(target, name)
                && indexes(target, name).is_none_or(|index| mentions(index, name))
        }
        ExprKind::PostIncDec(_, target)
        | ExprKind::Unary(UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::AddrOf, target) => {
            mentions(target, name)
        }
        // A conversion (`uint(x)`, `float4(v)`) takes values; any other
        // callee may take a reference, and a member call is on an object.
        ExprKind::Call(callee, args) => {
            mentions(callee, name)
                || (!is_conversion(callee) && args.iter().any(|a| mentions(a, name)))
        }
        // A braced list may initialise a reference member.
        ExprKind::InitList(items) | ExprKind::BraceConstruct(_, items) => {
            items.iter().any(|i| init_mentions(i, name))
        }
        _ => false,
    }
}

/// Whether `callee` names a Metal scalar or vector type.
fn is_conversion(callee: &ast::Expr) -> bool {
    let ExprKind::Name(path) = &callee.kind else {
        return false;
    };
    let Some(last) = path.last() else {
        return false;
    };
    const SCALARS: &[&str] = &[
        "bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half",
        "float", "bfloat",
    ];
    let scalar = last.trim_end_matches(['2', '3', '4']);
    SCALARS.contains(&scalar) && last.len() <= scalar.len() + 1
}

/// Calls `f` with every local declaration of `stmts`, at any depth.
fn for_each_decl<'a>(stmts: &'a [ast::Stmt], f: &mut dyn FnMut(&'a ast::VarDecl)) {
    for s in stmts {
        for_each_decl_in(s, f);
    }
}

fn for_each_decl_in<'a>(s: &'a ast::Stmt, f: &mut dyn FnMut(&'a ast::VarDecl)) {
    match &s.kind {
        StmtKind::Decl(d) => f(d),
        StmtKind::LocalType(t) => t.objects.iter().for_each(f),
        StmtKind::Block(b) => for_each_decl(&b.stmts, f),
        StmtKind::If {
            then, otherwise, ..
        } => {
            for_each_decl_in(then, f);
            if let Some(o) = otherwise {
                for_each_decl_in(o, f);
            }
        }
        StmtKind::For { init, body, .. } => {
            if let Some(i) = init {
                for_each_decl_in(i, f);
            }
            for_each_decl_in(body, f);
        }
        StmtKind::While { body, .. } | StmtKind::DoWhile { body, .. } => for_each_decl_in(body, f),
        StmtKind::Switch { items, .. } => {
            for item in items {
                if let ast::SwitchItem::Stmt(s) = item {
                    for_each_decl_in(s, f);
                }
            }
        }
        _ => {}
    }
}
