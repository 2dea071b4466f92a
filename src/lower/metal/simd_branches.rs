//! SIMD-group functions inside branches, under the 32-lane emulation.
//!
//! Metal: the threads of a SIMD group that take a branch are its active
//! lanes there; `if (simdgroup_index == 0) { t = simd_sum(x[lane]); }`
//! reduces over the first SIMD group only, and ML kernels are full of it.
//!
//! WGSL: the emulation's exchanges wait at `workgroupBarrier`s, which every
//! thread must reach, so they cannot sit in a branch only some threads take.
//!
//! Mapping: such an `if` runs on every thread, both branches in turn, with
//! `metal_active` narrowed to the threads that take each: their memory
//! effects are the only ones performed and the exchanges leave the other
//! lanes out, as Metal does. Inside such a *narrowed region* every
//! statement that neither calls a SIMD-group function nor waits at a
//! barrier runs under `if (metal_active)`, so a thread changes its own
//! variables only where Metal runs it; a statement that does call one runs
//! on every thread and afterwards puts back, where the thread is inactive,
//! the variables it wrote. `break`, `continue` and `return` that leave a
//! predicated loop (`simd_loops`) or the kernel become per-thread flags
//! that narrow activity. Kernels are lowered this way only when the plain
//! lowering put an exchange in non-uniform control flow
//! (`passes::simd_uniformity`).

use crate::lower::ctx::function::FnCtx;
use crate::lower::metal::invocation::ACTIVE;
use crate::lower::stdlib::simd::bin;
use crate::lower::{Lowerer, Result};
use crate::sema::callgraph;
use crate::source_map::Span;
use crate::syntax::ast::{self, Stmt, StmtKind};
use crate::types::Type;
use naga::{BinaryOperator as Bo, Expression, Handle, Statement};

/// A function's predication state while it is lowered.
#[derive(Debug, Default)]
pub(in crate::lower) struct Predication {
    /// Narrowed regions around the statement being lowered.
    pub narrowed: usize,
    /// Inside `if (metal_active)` around a statement without jumps: its
    /// own statements need no guard of their own.
    pub guarded: bool,
    /// The predicated loops around it, innermost last.
    pub loops: Vec<PredicatedLoop>,
    /// The kernel's "this thread has returned" flag, once a `return` in a
    /// narrowed region needed it.
    pub returned: Option<Handle<naga::LocalVariable>>,
    /// The number of the last vote of a predicated loop (`simd_loops`).
    pub votes: Option<Handle<naga::LocalVariable>>,
    /// In a helper whose body is one narrowed region (`simd_helpers`): the
    /// activity it was called with, put back when it ends.
    pub entry_active: Option<Handle<naga::LocalVariable>>,
    /// That helper's result, which its `return`s store.
    pub result: Option<Handle<naga::LocalVariable>>,
}

/// A loop that runs on every thread until none iterates
/// (`simd_loops`).
#[derive(Debug, Clone, Copy)]
pub(in crate::lower) struct PredicatedLoop {
    /// The thread still iterates: no `break`, and the condition held.
    pub running: Handle<naga::LocalVariable>,
    /// The thread took `continue` in this iteration.
    pub skipping: Handle<naga::LocalVariable>,
    /// `FnCtx::loops` and `breakables` in its body: a `break` or
    /// `continue` with these counts leaves this loop.
    pub depth: (usize, usize),
}

/// Variables a statement writes: (where, a copy's local).
type Saved = Vec<(Handle<Expression>, Handle<naga::LocalVariable>)>;

impl Lowerer<'_, '_> {
    /// Whether this function's statements take the predicated lowering.
    pub(in crate::lower) fn predicating(&self) -> bool {
        self.entry.simd_if_conversion && self.emulates_simd() && self.entry.predicated
    }

    /// Lowers `s` the predicated way, if that applies (see the module);
    /// `None` if the plain lowering must take it.
    pub(in crate::lower) fn predicated_stmt(
        &mut self,
        fx: &mut FnCtx,
        s: &Stmt,
    ) -> Option<Result<()>> {
        if !self.predicating() {
            return None;
        }
        let narrowed = fx.pred.narrowed > 0;
        match &s.kind {
            StmtKind::If {
                cond,
                then,
                otherwise,
                is_constexpr: false,
            } if self.needs_every_thread(s, narrowed) && self.can_predicate_branches(fx, s) => {
                Some(self.predicated_if(fx, cond, then, otherwise.as_deref(), s.span))
            }
            StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::DoWhile { .. }
                if self.entry.predicated_loops.contains(&span_key(s.span)) =>
            {
                Some(self.predicated_loop(fx, s))
            }
            StmtKind::Break | StmtKind::Continue => {
                let l = *fx.pred.loops.last()?;
                let brk = matches!(s.kind, StmtKind::Break);
                // A `continue` in a `switch` still leaves the loop's
                // iteration; a `break` there leaves the `switch`.
                let ours = if brk {
                    l.depth == (fx.loops, fx.breakables)
                } else {
                    l.depth.0 == fx.loops
                };
                ours.then(|| {
                    self.leave_iteration(fx, l, brk, s.span);
                    Ok(())
                })
            }
            StmtKind::Return(value)
                if narrowed
                    && self.returns_by_flag(fx)
                    && (value.is_none() || fx.pred.entry_active.is_some()) =>
            {
                Some(self.return_by_flag(fx, value.as_ref(), s.span))
            }
            _ if !narrowed || fx.pred.guarded => None,
            StmtKind::Empty
            | StmtKind::StaticAssert(_)
            | StmtKind::Alias(_)
            | StmtKind::LocalType(_)
            | StmtKind::Decl(_)
            | StmtKind::Block(_) => None,
            _ if self.needs_every_thread(s, true) => Some(self.on_every_thread(fx, s)),
            _ => Some(self.guarded(fx, s)),
        }
    }

    /// Whether `s` must run on every thread: it calls a SIMD-group
    /// function (in narrowed regions: or waits at a barrier).
    pub(in crate::lower) fn needs_every_thread(&self, s: &Stmt, barriers: bool) -> bool {
        let key = (s.span.start, s.span.end, barriers, self.matrix_fragments());
        if let Some(&known) = self.global.every_thread.borrow().get(&key) {
            return known;
        }
        let block = ast::Block {
            stmts: vec![s.clone()],
            span: s.span,
        };
        let needs = callgraph::reaches(self.program, &block, &|n| {
            crate::lower::stdlib::Builtin::function(n).map(|b| {
                b.needs_subgroups() || self.matrix_exchange(b) || (barriers && b.is_barrier())
            })
        });
        self.global.every_thread.borrow_mut().insert(key, needs);
        needs
    }

    /// A `return` leaves a helper function on the thread alone, so helpers
    /// keep branches with one unpredicated, unless their `return`s go by
    /// flag (`simd_helpers`); nor are `switch`es that call SIMD-group
    /// functions predicated.
    fn can_predicate_branches(&self, fx: &FnCtx, s: &Stmt) -> bool {
        !has(s, &|s| match s.kind {
            StmtKind::Switch { .. } => self.needs_every_thread(s, true),
            StmtKind::Return(_) => !fx.kernel && fx.pred.entry_active.is_none(),
            _ => false,
        })
    }

    /// `return` in a narrowed region of a kernel or helper whose whole body
    /// is one (so that a thread that returned runs nothing after it but
    /// exchanges), outside plain loops and `switch`es (whose exit it would
    /// also have to be).
    fn returns_by_flag(&self, fx: &FnCtx) -> bool {
        let depth = fx.pred.loops.last().map_or((0, 0), |l| l.depth);
        let whole_body = (fx.kernel && self.entry.narrow_body) || fx.pred.entry_active.is_some();
        whole_body && depth == (fx.loops, fx.breakables)
    }

    /// `if (cond) then else otherwise` on every thread, each branch with
    /// activity narrowed to the threads that take it.
    pub(in crate::lower) fn predicated_if(
        &mut self,
        fx: &mut FnCtx,
        cond: &ast::Expr,
        then: &Stmt,
        otherwise: Option<&Stmt>,
        span: Span,
    ) -> Result<()> {
        let c = self.scalar_condition(fx, cond)?;
        // A condition known at translation time (`if (kNeedsReduction)`):
        // the same on every thread, and the branch not taken is not
        // translated (it may use a pointer known to be null there).
        if let Some(taken) = self.known_truth(fx, c) {
            if let Some(taken) = if taken { Some(then) } else { otherwise } {
                fx.open();
                let lowered = self.stmt(fx, taken);
                let block = fx.close();
                lowered?;
                fx.push(Statement::Block(block), span);
            }
            return Ok(());
        }
        let outer = self.keep_activity(fx, span)?;
        let outer_now = load_local(fx, outer, span);
        let taken = bin(fx, Bo::LogicalAnd, outer_now, c, span);
        self.set_private(fx, ACTIVE, &Type::BOOL, taken, span);
        self.narrowed_block(fx, then)?;
        if let Some(o) = otherwise {
            let outer_now = load_local(fx, outer, span);
            let not_c = fx.add(
                Expression::Unary {
                    op: naga::UnaryOperator::LogicalNot,
                    expr: c,
                },
                span,
            );
            let other = bin(fx, Bo::LogicalAnd, outer_now, not_c, span);
            self.set_private(fx, ACTIVE, &Type::BOOL, other, span);
            self.narrowed_block(fx, o)?;
        }
        self.reactivate(fx, outer, span);
        Ok(())
    }

    /// A local holding `metal_active` as it is now.
    pub(in crate::lower) fn keep_activity(
        &mut self,
        fx: &mut FnCtx,
        span: Span,
    ) -> Result<Handle<naga::LocalVariable>> {
        let b = self.naga_type(&Type::BOOL, span)?;
        let outer = fx.local("metal_outer_active", b, span);
        let now = self.load_private(fx, ACTIVE, &Type::BOOL, span);
        store_local(fx, outer, now, span);
        Ok(outer)
    }

    /// Sets `metal_active` back to `outer`, less the threads that left the
    /// innermost predicated loop's iteration or the kernel meanwhile.
    pub(in crate::lower) fn reactivate(
        &mut self,
        fx: &mut FnCtx,
        outer: Handle<naga::LocalVariable>,
        span: Span,
    ) {
        let mut active = load_local(fx, outer, span);
        if let Some(l) = fx.pred.loops.last().copied() {
            let running = load_local(fx, l.running, span);
            let skipping = load_local(fx, l.skipping, span);
            let not_skipping = not(fx, skipping, span);
            active = bin(fx, Bo::LogicalAnd, active, running, span);
            active = bin(fx, Bo::LogicalAnd, active, not_skipping, span);
        }
        active = self.unless_returned(fx, active, span);
        self.set_private(fx, ACTIVE, &Type::BOOL, active, span);
    }

    /// `active && !returned`, where the kernel has the flag.
    pub(in crate::lower) fn unless_returned(
        &mut self,
        fx: &mut FnCtx,
        active: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        match fx.pred.returned {
            Some(r) => {
                let returned = load_local(fx, r, span);
                let stays = not(fx, returned, span);
                bin(fx, Bo::LogicalAnd, active, stays, span)
            }
            None => active,
        }
    }

    /// Lowers `s` as a narrowed region.
    fn narrowed_block(&mut self, fx: &mut FnCtx, s: &Stmt) -> Result<()> {
        fx.pred.narrowed += 1;
        let guarded = std::mem::replace(&mut fx.pred.guarded, false);
        fx.open();
        let lowered = self.stmt(fx, s);
        let block = fx.close();
        fx.pred.narrowed -= 1;
        fx.pred.guarded = guarded;
        lowered?;
        fx.push(Statement::Block(block), s.span);
        Ok(())
    }

    /// `if (metal_active) { s }`: `s` neither exchanges nor waits, so the
    /// threads Metal does not run here skip it. Its statements are guarded
    /// again only where one may leave by a flag (the ones after it must
    /// then see the narrowed activity).
    fn guarded(&mut self, fx: &mut FnCtx, s: &Stmt) -> Result<()> {
        let active = self.load_private(fx, ACTIVE, &Type::BOOL, s.span);
        let jumps = has(s, &|s| {
            matches!(
                s.kind,
                StmtKind::Break | StmtKind::Continue | StmtKind::Return(_)
            )
        });
        let guarded = std::mem::replace(&mut fx.pred.guarded, !jumps);
        fx.open();
        let lowered = self.plain_stmt(fx, s);
        let accept = fx.close();
        fx.pred.guarded = guarded;
        lowered?;
        fx.push(
            Statement::If {
                condition: active,
                accept,
                reject: naga::Block::new(),
            },
            s.span,
        );
        Ok(())
    }

    /// A statement that exchanges or waits, on every thread: the variables
    /// it writes are put back where the thread was inactive as it began.
    /// (Not where it is inactive as it ends: a thread that leaves by
    /// `break`, `continue` or `return` inside it (by flag) keeps what it
    /// wrote before, and the flags themselves; its statements after that
    /// are guarded or put back on their own.)
    fn on_every_thread(&mut self, fx: &mut FnCtx, s: &Stmt) -> Result<()> {
        let locals_before = fx.local_count();
        fx.open();
        let lowered = self.plain_stmt(fx, s);
        let block = fx.close();
        lowered?;
        let written = written_roots(fx, &block, locals_before);
        // Every thread counts every vote, inactive or not (`simd_loops`).
        let written: Vec<_> = (written.into_iter())
            .filter(|&r| !matches!(*fx.expr(r), Expression::LocalVariable(l) if Some(l) == fx.pred.votes))
            .collect();
        let saved = self.save(fx, &written, s.span)?;
        let began_active =
            (!saved.is_empty()).then(|| self.load_private(fx, ACTIVE, &Type::BOOL, s.span));
        fx.push(Statement::Block(block), s.span);
        if let Some(active) = began_active {
            let inactive = not(fx, active, s.span);
            self.restore(fx, &saved, inactive, s.span);
        }
        Ok(())
    }

    /// Copies what the pointers `roots` point to into new locals.
    fn save(&mut self, fx: &mut FnCtx, roots: &[Handle<Expression>], span: Span) -> Result<Saved> {
        let mut saved = Vec::new();
        for &p in roots {
            let ty = match *fx.expr(p) {
                Expression::LocalVariable(l) => fx.local_type(l),
                Expression::FunctionArgument(i) => {
                    let t = fx.argument_type(i);
                    // Per-thread memory only: another thread's is not ours
                    // to put back.
                    match self.global.module.types[t].inner {
                        naga::TypeInner::Pointer {
                            base,
                            space: naga::AddressSpace::Function | naga::AddressSpace::Private,
                        } => base,
                        _ => continue,
                    }
                }
                _ => continue,
            };
            let copy = fx.local("metal_saved", ty, span);
            let value = fx.add(Expression::Load { pointer: p }, span);
            store_local(fx, copy, value, span);
            saved.push((p, copy));
        }
        Ok(saved)
    }

    /// Puts the saved values back where `when` holds.
    fn restore(&mut self, fx: &mut FnCtx, saved: &Saved, when: Handle<Expression>, span: Span) {
        fx.open();
        for &(p, copy) in saved {
            let value = load_local(fx, copy, span);
            fx.push(Statement::Store { pointer: p, value }, span);
        }
        let accept = fx.close();
        fx.push(
            Statement::If {
                condition: when,
                accept,
                reject: naga::Block::new(),
            },
            span,
        );
    }

    /// `break` (the thread stops iterating) or `continue` (it sits out the
    /// rest of this iteration) of a predicated loop.
    fn leave_iteration(&mut self, fx: &mut FnCtx, l: PredicatedLoop, brk: bool, span: Span) {
        let flag = if brk { l.running } else { l.skipping };
        let value = fx.add(Expression::Literal(naga::Literal::Bool(!brk)), span);
        store_local(fx, flag, value, span);
        let off = fx.add(Expression::Literal(naga::Literal::Bool(false)), span);
        self.set_private(fx, ACTIVE, &Type::BOOL, off, span);
    }

    /// `return` (of `value`, from a helper) in a narrowed region: an
    /// active thread keeps the value and sits out the rest of the kernel or
    /// helper; an inactive one (whose Metal thread never got here) is left
    /// as it is.
    fn return_by_flag(
        &mut self,
        fx: &mut FnCtx,
        value: Option<&ast::Expr>,
        span: Span,
    ) -> Result<()> {
        let returned = match fx.pred.returned {
            Some(r) => r,
            None => {
                let b = self
                    .naga_type(&Type::BOOL, span)
                    .expect("bool has a naga type");
                // Zero-initialised: false.
                let r = fx.local("metal_returned", b, span);
                fx.pred.returned = Some(r);
                r
            }
        };
        // A value that calls a SIMD-group function is computed on every
        // thread (its exchanges leave the inactive ones out); any other
        // only where the thread returns.
        let exchanges = value.is_some_and(|v| {
            let s = Stmt {
                kind: StmtKind::Expr(v.clone()),
                span: v.span,
            };
            self.needs_every_thread(&s, true)
        });
        let early = if exchanges {
            Some(self.returned_value(fx, value, span)?)
        } else {
            None
        };
        let active = self.load_private(fx, ACTIVE, &Type::BOOL, span);
        fx.open();
        let kept = match early {
            Some(v) => Ok(v),
            None => self.returned_value(fx, value, span),
        }
        .and_then(|v| match v {
            Some(v) if fx.pred.entry_active.is_some() => {
                let result = self.flag_result(fx, span)?;
                store_local(fx, result, v, span);
                Ok(())
            }
            _ => Ok(()),
        });
        let yes = fx.add(Expression::Literal(naga::Literal::Bool(true)), span);
        store_local(fx, returned, yes, span);
        let accept = fx.close();
        kept?;
        fx.push(
            Statement::If {
                condition: active,
                accept,
                reject: naga::Block::new(),
            },
            span,
        );
        let off = fx.add(Expression::Literal(naga::Literal::Bool(false)), span);
        self.set_private(fx, ACTIVE, &Type::BOOL, off, span);
        Ok(())
    }
}

/// The key a loop's span has in `EntryCtx::predicated_loops`.
pub(in crate::lower) fn span_key(span: Span) -> (usize, usize) {
    (span.start as usize, span.end as usize)
}

pub(in crate::lower) fn load_local(
    fx: &mut FnCtx,
    l: Handle<naga::LocalVariable>,
    span: Span,
) -> Handle<Expression> {
    let p = fx.add(Expression::LocalVariable(l), span);
    fx.add(Expression::Load { pointer: p }, span)
}

pub(in crate::lower) fn store_local(
    fx: &mut FnCtx,
    l: Handle<naga::LocalVariable>,
    value: Handle<Expression>,
    span: Span,
) {
    let pointer = fx.add(Expression::LocalVariable(l), span);
    fx.push(Statement::Store { pointer, value }, span);
}

pub(in crate::lower) fn not(
    fx: &mut FnCtx,
    e: Handle<Expression>,
    span: Span,
) -> Handle<Expression> {
    fx.add(
        Expression::Unary {
            op: naga::UnaryOperator::LogicalNot,
            expr: e,
        },
        span,
    )
}

/// Whether `s` is or holds a statement `wanted` picks (called functions'
/// bodies are not looked into).
pub(in crate::lower) fn has(s: &Stmt, wanted: &dyn Fn(&Stmt) -> bool) -> bool {
    if wanted(s) {
        return true;
    }
    match &s.kind {
        StmtKind::Block(b) => b.stmts.iter().any(|s| has(s, wanted)),
        StmtKind::If {
            then, otherwise, ..
        } => has(then, wanted) || otherwise.as_deref().is_some_and(|o| has(o, wanted)),
        StmtKind::For { init, body, .. } => {
            init.as_deref().is_some_and(|i| has(i, wanted)) || has(body, wanted)
        }
        StmtKind::While { body, .. }
        | StmtKind::DoWhile { body, .. }
        | StmtKind::RangeFor { body, .. } => has(body, wanted),
        StmtKind::Switch { items, .. } => items.iter().any(|i| match i {
            ast::SwitchItem::Stmt(s) => has(s, wanted),
            _ => false,
        }),
        _ => false,
    }
}

/// The locals (declared before `locals_before`) and pointer arguments
/// that `block` stores to or hands to a call, as pointer expressions.
fn written_roots(fx: &FnCtx, block: &naga::Block, locals_before: usize) -> Vec<Handle<Expression>> {
    let mut roots = Vec::new();
    let mut note = |p: Handle<Expression>| {
        if let Some(r) = root(fx, p) {
            let keep = match *fx.expr(r) {
                Expression::LocalVariable(l) => l.index() < locals_before,
                Expression::FunctionArgument(_) => true,
                _ => false,
            };
            if keep && !roots.contains(&r) {
                roots.push(r);
            }
        }
    };
    crate::lower::passes::ir_walk::visit(block, &mut |s, _| match s {
        Statement::Store { pointer, .. } => note(*pointer),
        Statement::Call { arguments, .. } => arguments.iter().for_each(|a| note(*a)),
        _ => {}
    });
    roots
}

/// The local variable or argument a pointer expression starts from.
fn root(fx: &FnCtx, p: Handle<Expression>) -> Option<Handle<Expression>> {
    let root = crate::lower::passes::ir_walk::pointer_root(&fx.function.expressions, p);
    matches!(
        fx.expr(root),
        Expression::LocalVariable(_) | Expression::FunctionArgument(_)
    )
    .then_some(root)
}
