//! SIMD-group functions in the operands of `&&`, `||` and `?:`, under the
//! 32-lane emulation.
//!
//! Metal: `simd_all(v) || !simd_any(v)` (SPIRV-Cross's
//! `spvSubgroupAllEqual`) evaluates `simd_any` only on the lanes where
//! `simd_all` is false; `c ? simd_sum(x) : 0` sums over the lanes where
//! `c` holds. Those lanes are the active ones of the exchange.
//!
//! WGSL: a short-circuiting operand is a branch, and the emulation's
//! exchanges wait at `workgroupBarrier`s, which every thread must reach.
//!
//! Mapping: where an operand calls a SIMD-group function, it is evaluated
//! on every thread with `metal_active` narrowed to the threads C++
//! evaluates it on, then activity is put back and the operands' values
//! are combined without branching (`a || b`, `select`). Only operands that
//! write no variable are taken so (an assignment there would run on the
//! threads C++ skips); the others keep their branch.

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::metal::invocation::ACTIVE;
use crate::lower::metal::simd_branches::{load_local, not};
use crate::lower::stdlib::simd::bin;
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{BinaryOp, Expr, ExprKind, Stmt, StmtKind, UnaryOp};
use crate::types::Type;
use naga::{BinaryOperator as Bo, Expression, Handle};

impl Lowerer<'_, '_> {
    /// Whether the operand `e` is evaluated on every thread with narrowed
    /// activity (see the module): it calls a SIMD-group function that is
    /// emulated here and writes no variable.
    pub(in crate::lower) fn narrows_operand(&self, e: &Expr) -> bool {
        if !(self.emulates_simd() && self.entry.predicated) || writes_variable(e) {
            return false;
        }
        let s = Stmt {
            kind: StmtKind::Expr(e.clone()),
            span: e.span,
        };
        self.needs_every_thread(&s, false)
    }

    /// `a && b` or `a || b` of the `bool` `a` (already evaluated) whose
    /// right operand `b` narrows: `b` on every thread, with activity
    /// narrowed to the threads where `a` does not decide.
    pub(in crate::lower) fn narrowed_logical(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        a: Handle<Expression>,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        let and = op == BinaryOp::LogicalAnd;
        let evaluates = if and { a } else { not(fx, a, span) };
        let hb =
            self.with_narrowed_activity(fx, evaluates, span, |l, fx| l.scalar_condition(fx, b))?;
        let op = if and { Bo::LogicalAnd } else { Bo::LogicalOr };
        Ok(Value::Rv(bin(fx, op, a, hb, span), Type::BOOL))
    }

    /// The operands of `c ? a : b` (`c` a `bool`, evaluated), each on
    /// every thread with activity narrowed to the threads that choose it.
    pub(in crate::lower) fn narrowed_operands(
        &mut self,
        fx: &mut FnCtx,
        c: Handle<Expression>,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<(Value, Value)> {
        let va = self.with_narrowed_activity(fx, c, span, |l, fx| l.expr(fx, a))?;
        let not_c = not(fx, c, span);
        let vb = self.with_narrowed_activity(fx, not_c, span, |l, fx| l.expr(fx, b))?;
        Ok((va, vb))
    }

    /// Runs `lower` with `metal_active` narrowed to the active threads
    /// where `when` holds, then puts the activity back.
    fn with_narrowed_activity<T>(
        &mut self,
        fx: &mut FnCtx,
        when: Handle<Expression>,
        span: Span,
        lower: impl FnOnce(&mut Self, &mut FnCtx) -> Result<T>,
    ) -> Result<T> {
        let outer = self.keep_activity(fx, span)?;
        let now = load_local(fx, outer, span);
        let narrowed = bin(fx, Bo::LogicalAnd, now, when, span);
        self.set_private(fx, ACTIVE, &Type::BOOL, narrowed, span);
        let lowered = lower(self, fx);
        let now = load_local(fx, outer, span);
        self.set_private(fx, ACTIVE, &Type::BOOL, now, span);
        lowered
    }
}

/// Whether evaluating `e` assigns, increments or decrements a variable.
fn writes_variable(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Assign(..) | ExprKind::PostIncDec(..) => true,
        ExprKind::Unary(UnaryOp::PreInc | UnaryOp::PreDec, _) => true,
        ExprKind::Unary(_, a) | ExprKind::Member(a, _, _) | ExprKind::Cast(_, _, a) => {
            writes_variable(a)
        }
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
            writes_variable(a) || writes_variable(b)
        }
        ExprKind::Ternary(a, b, c) => {
            writes_variable(a) || writes_variable(b) || writes_variable(c)
        }
        ExprKind::Comma(items) => items.iter().any(writes_variable),
        ExprKind::Call(_, args) => args.iter().any(writes_variable),
        _ => false,
    }
}
