//! Locals initialized from a function: `auto do_gemm = gemm_loop<T, 64>;`
//! (MLX's gather kernels), `auto f = &twice;`.
//!
//! Such a local holds a pointer to a function known where it is written;
//! WGSL has no function pointers, so the local is not made: its later
//! uses in the block are written as the function itself, and calling it
//! is calling the function (C++ [expr.call]/1). A local that the block
//! assigns another function to, or whose name a nested declaration takes,
//! is refused where that happens, as it would no longer stand for one
//! function.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::subst::Replacement;
use crate::syntax::ast::{Expr, ExprKind, Init, Stmt, StmtKind, SwitchItem, UnaryOp, VarDecl};
use std::collections::HashMap;

impl Lowerer<'_, '_> {
    /// `name → the function` for `auto name = f;` (or `f<..>`, `&f`),
    /// checked against `rest`, the statements after it in its block;
    /// `None` when `v` declares anything else.
    pub(super) fn function_name_local(
        &self,
        fx: &FnCtx,
        v: &VarDecl,
        rest: &[Stmt],
    ) -> Result<Option<HashMap<String, Replacement>>> {
        let ([d], true, true) = (
            v.declarators.as_slice(),
            v.ty.path == ["auto"],
            v.ty.ptr_ops.is_empty(),
        ) else {
            return Ok(None);
        };
        let Some(Init::Expr(init)) = &d.init else {
            return Ok(None);
        };
        if !d.array.is_empty() {
            return Ok(None);
        }
        let function = match &init.kind {
            ExprKind::Unary(UnaryOp::AddrOf, inner) => inner.as_ref(),
            _ => init,
        };
        if !self.names_function(fx, function) {
            return Ok(None);
        }
        let name = &d.name.name;
        if let Some(at) = rest.iter().find_map(|s| reassigned(s, name)) {
            return Err(Error::coded(
                Code::Unsupported,
                at,
                format!("`{name}` holds the function it was initialized with: a local holding a function is not supported where it is changed or its name is declared again"),
            )
            .note("WGSL has no function pointers: the local is the function it is initialized with"));
        }
        Ok(Some(
            [(name.clone(), Replacement::Value(function.clone()))]
                .into_iter()
                .collect(),
        ))
    }

    /// Whether `e` names a function or a function template's instance
    /// (and no local, which would hide it).
    fn names_function(&self, fx: &FnCtx, e: &Expr) -> bool {
        let path = match &e.kind {
            ExprKind::Name(p) | ExprKind::Templated(p, _) => p,
            _ => return false,
        };
        if matches!(path.as_slice(), [n] if fx.lookup(n).is_some()) {
            return false;
        }
        let canonical = self.program.canonical_path(path);
        let name = canonical.as_deref().unwrap_or(path).join("::");
        let function = matches!(
            self.program.symbols.get(&name),
            Some(crate::sema::Symbol::Functions(_))
        );
        match &e.kind {
            ExprKind::Name(_) => function,
            _ => !self.program.function_templates(&name).is_empty(),
        }
    }
}

/// Where `s` assigns to `name` or declares `name` again, if it does (an
/// assignment inside a larger expression is left to the function it
/// becomes, which cannot be assigned).
fn reassigned(s: &Stmt, name: &str) -> Option<crate::source_map::Span> {
    let named = |e: &Expr| matches!(&e.kind, ExprKind::Name(p) if p.len() == 1 && p[0] == name);
    let within = |stmts: &[Stmt]| stmts.iter().find_map(|s| reassigned(s, name));
    let within_one = |s: &Stmt| reassigned(s, name);
    match &s.kind {
        StmtKind::Decl(v) => v
            .declarators
            .iter()
            .find(|d| d.name.name == name)
            .map(|d| d.name.span),
        StmtKind::Expr(Expr {
            kind: ExprKind::Assign(_, target, _),
            ..
        }) if named(target) => Some(target.span),
        StmtKind::Block(b) => within(&b.stmts),
        StmtKind::If {
            then, otherwise, ..
        } => within_one(then).or_else(|| otherwise.as_deref().and_then(within_one)),
        StmtKind::For { init, body, .. } => init
            .as_deref()
            .and_then(within_one)
            .or_else(|| within_one(body)),
        StmtKind::RangeFor { name: n, body, .. } => (n.name == name)
            .then_some(n.span)
            .or_else(|| within_one(body)),
        StmtKind::While { body, .. } | StmtKind::DoWhile { body, .. } => within_one(body),
        StmtKind::Switch { items, .. } => items.iter().find_map(|i| match i {
            SwitchItem::Stmt(s) => within_one(s),
            SwitchItem::Label(..) => None,
        }),
        _ => None,
    }
}
