//! SIMD-group functions inside branches, under the 32-lane emulation.
//!
//! Metal: the threads of a SIMD group that take a branch are its active
//! lanes there; `if (simdgroup_index == 0) { t = simd_sum(x[lane]); }`
//! reduces over the first SIMD group only, and ML kernels are full of it.
//!
//! WGSL: the emulation's exchanges wait at `workgroupBarrier`s, which every
//! thread must reach, so they cannot sit in a branch only some threads take.
//!
//! Mapping: such an `if` (whose branches call SIMD-group functions and hold
//! no loop, `return`, `break` or `continue`) runs on every thread, both
//! branches in turn, with `metal_active` narrowed to the threads that take
//! each: their memory effects are the only ones performed and the
//! exchanges leave the other lanes out, as Metal does. Each thread's local
//! variables are saved before and put back afterwards where the thread did
//! not take the branch, so every thread ends with the values its own path
//! gave. Kernels are lowered this way only when the plain lowering put an
//! exchange in non-uniform control flow (`passes::simd_uniformity`).

use crate::lower::ctx::function::FnCtx;
use crate::lower::metal::invocation::ACTIVE;
use crate::lower::stdlib::simd::bin;
use crate::lower::{Lowerer, Result};
use crate::sema::callgraph;
use crate::source_map::Span;
use crate::syntax::ast::{self, Stmt, StmtKind};
use crate::types::Type;
use naga::{BinaryOperator as Bo, Expression, Handle, Statement};

/// Snapshots of local variables: (variable, its copy).
type Saved = Vec<(Handle<naga::LocalVariable>, Handle<naga::LocalVariable>)>;

impl Lowerer<'_, '_> {
    /// Lowers `if (cond) then else otherwise` on every thread with
    /// narrowed activity, if that applies (see the module); `false` if the
    /// ordinary lowering must take it.
    pub(in crate::lower) fn predicated_if(
        &mut self,
        fx: &mut FnCtx,
        cond: &ast::Expr,
        then: &Stmt,
        otherwise: Option<&Stmt>,
        span: Span,
    ) -> Result<bool> {
        if !(self.entry.simd_if_conversion && self.emulates_simd() && self.entry.predicated) {
            return Ok(false);
        }
        let branches: Vec<&Stmt> = std::iter::once(then).chain(otherwise).collect();
        if !branches.iter().any(|s| self.reaches_simd(s)) || branches.iter().any(|s| jumps(s)) {
            return Ok(false);
        }
        let c = self.scalar_condition(fx, cond)?;
        let outer = self.load_private(fx, ACTIVE, &Type::BOOL, span);
        let before = self.save_locals(fx, span)?;
        let taken = bin(fx, Bo::LogicalAnd, outer, c, span);
        self.set_private(fx, ACTIVE, &Type::BOOL, taken, span);
        self.branch_block(fx, then)?;
        let not_c = fx.add(
            Expression::Unary {
                op: naga::UnaryOperator::LogicalNot,
                expr: c,
            },
            span,
        );
        match otherwise {
            None => self.restore_locals(fx, &before, Some(not_c), span),
            Some(o) => {
                let after_then = self.save_locals_of(fx, &before, span)?;
                self.restore_locals(fx, &before, None, span);
                let other = bin(fx, Bo::LogicalAnd, outer, not_c, span);
                self.set_private(fx, ACTIVE, &Type::BOOL, other, span);
                self.branch_block(fx, o)?;
                self.restore_locals(fx, &after_then, Some(c), span);
            }
        }
        self.set_private(fx, ACTIVE, &Type::BOOL, outer, span);
        Ok(true)
    }

    fn reaches_simd(&self, s: &Stmt) -> bool {
        let block = ast::Block {
            stmts: vec![s.clone()],
            span: s.span,
        };
        callgraph::reaches(self.program, &block, &|n| {
            crate::lower::stdlib::Builtin::function(n)
                .is_some_and(|b| b.needs_subgroups() || self.matrix_exchange(b))
        })
    }

    fn branch_block(&mut self, fx: &mut FnCtx, s: &Stmt) -> Result<()> {
        fx.open();
        let lowered = self.stmt(fx, s);
        let block = fx.close();
        lowered?;
        fx.push(Statement::Block(block), s.span);
        Ok(())
    }

    /// Copies every local variable declared so far.
    fn save_locals(&mut self, fx: &mut FnCtx, span: Span) -> Result<Saved> {
        let locals: Vec<_> = fx.local_variables().collect();
        let pairs = locals.into_iter().map(|l| (l, l)).collect::<Saved>();
        self.save_locals_of(fx, &pairs, span)
    }

    /// Copies the variables of `of` (their first element) again.
    fn save_locals_of(&mut self, fx: &mut FnCtx, of: &Saved, span: Span) -> Result<Saved> {
        let mut saved = Vec::new();
        for &(l, _) in of {
            let ty = fx.local_type(l);
            let copy = fx.local("metal_saved", ty, span);
            let from = fx.add(Expression::LocalVariable(l), span);
            let to = fx.add(Expression::LocalVariable(copy), span);
            let value = fx.add(Expression::Load { pointer: from }, span);
            fx.push(Statement::Store { pointer: to, value }, span);
            saved.push((l, copy));
        }
        Ok(saved)
    }

    /// Puts the saved values back, where `when` holds (everywhere: `None`).
    fn restore_locals(
        &mut self,
        fx: &mut FnCtx,
        saved: &Saved,
        when: Option<Handle<Expression>>,
        span: Span,
    ) {
        fx.open();
        for &(l, copy) in saved {
            let from = fx.add(Expression::LocalVariable(copy), span);
            let to = fx.add(Expression::LocalVariable(l), span);
            let value = fx.add(Expression::Load { pointer: from }, span);
            fx.push(Statement::Store { pointer: to, value }, span);
        }
        let block = fx.close();
        match when {
            None => fx.push(Statement::Block(block), span),
            Some(condition) => fx.push(
                Statement::If {
                    condition,
                    accept: block,
                    reject: naga::Block::new(),
                },
                span,
            ),
        }
    }
}

/// Whether `s` holds a loop or a jump out of it: running it on a thread
/// that did not take it could then run away or leave early.
fn jumps(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Block(b) => b.stmts.iter().any(jumps),
        StmtKind::If {
            then, otherwise, ..
        } => jumps(then) || otherwise.as_deref().is_some_and(jumps),
        StmtKind::Switch { .. }
        | StmtKind::For { .. }
        | StmtKind::While { .. }
        | StmtKind::DoWhile { .. }
        | StmtKind::Return(_)
        | StmtKind::Break
        | StmtKind::Continue => true,
        _ => false,
    }
}
