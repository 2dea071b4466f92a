//! Helper functions that return early around SIMD-group functions, under
//! the 32-lane emulation.
//!
//! Metal: a thread that leaves a helper early (`if (row >= n) return;`,
//! MLX's GEMV kernels) takes no part in the SIMD-group functions after the
//! `return`; the lanes still in the helper are the active ones there.
//!
//! WGSL: the emulation's exchanges wait at `workgroupBarrier`s, which every
//! thread must reach, so no thread may leave before them.
//!
//! Mapping: when the kernel is predicated (`simd_branches`), a helper that
//! calls SIMD-group functions or waits at barriers and has a `return`
//! before its end, none of them inside a loop or `switch`, is lowered as
//! one narrowed region: each `return` sets a "returned" flag (keeping the
//! returned value in a local) and turns the thread inactive, so it runs
//! nothing after it but the exchanges, which leave it out; the helper's end
//! puts back the activity it was called with and returns the kept value.

use crate::lower::ctx::function::FnCtx;
use crate::lower::metal::invocation::ACTIVE;
use crate::lower::metal::simd_branches::{has, load_local};
use crate::lower::{Lowerer, Result};
use crate::syntax::ast::{Block, Stmt, StmtKind};
use crate::types::Type;
use naga::Statement;

impl Lowerer<'_, '_> {
    /// Whether the helper with `body` is lowered as one narrowed region
    /// (see the module).
    pub(in crate::lower) fn helper_returns_by_flag(&self, body: &Block) -> bool {
        // Asked for every helper lowered: the body is copied into a
        // statement only where the cheap tests leave it a candidate.
        if !(self.predicating() && has_early_return(body)) {
            return false;
        }
        let whole = Stmt {
            kind: StmtKind::Block(body.clone()),
            span: body.span,
        };
        !has(&whole, &|s| loop_or_switch(s) && has(s, &is_return))
            && self.needs_every_thread(&whole, true)
    }

    /// Lowers the helper body `body` as one narrowed region whose `return`s
    /// go by flag, ending it with the activity put back and the kept
    /// value returned.
    pub(in crate::lower) fn helper_body_by_flag(
        &mut self,
        fx: &mut FnCtx,
        body: &Block,
    ) -> Result<()> {
        let span = body.span;
        let entry = self.keep_activity(fx, span)?;
        fx.pred.entry_active = Some(entry);
        if fx.return_type != Type::Void {
            self.flag_result(fx, span)?;
        }
        fx.pred.narrowed += 1;
        let lowered = self.stmts(fx, &body.stmts);
        fx.pred.narrowed -= 1;
        lowered?;
        let active = load_local(fx, entry, span);
        self.set_private(fx, ACTIVE, &Type::BOOL, active, span);
        let value = fx.pred.result.map(|r| load_local(fx, r, span));
        fx.push(Statement::Return { value }, span);
        Ok(())
    }

    /// The local a helper lowered by flag keeps its returned value in,
    /// made on first use: an `auto` helper's type is known only once its
    /// first `return` is lowered.
    pub(in crate::lower) fn flag_result(
        &mut self,
        fx: &mut FnCtx,
        span: crate::source_map::Span,
    ) -> Result<naga::Handle<naga::LocalVariable>> {
        if let Some(r) = fx.pred.result {
            return Ok(r);
        }
        let ty = self.naga_type(&fx.return_type.clone(), span)?;
        // Zero-initialised: what falling off the end returns.
        let r = fx.local("metal_result", ty, span);
        fx.pred.result = Some(r);
        Ok(r)
    }
}

/// A `return` before the helper's last statement, or inside its last one.
fn has_early_return(body: &Block) -> bool {
    let Some((last, before)) = body.stmts.split_last() else {
        return false;
    };
    before.iter().any(|s| has(s, &is_return)) || (!is_return(last) && has(last, &is_return))
}

fn is_return(s: &Stmt) -> bool {
    matches!(s.kind, StmtKind::Return(_))
}

fn loop_or_switch(s: &Stmt) -> bool {
    matches!(
        s.kind,
        StmtKind::For { .. }
            | StmtKind::While { .. }
            | StmtKind::DoWhile { .. }
            | StmtKind::RangeFor { .. }
            | StmtKind::Switch { .. }
    )
}
