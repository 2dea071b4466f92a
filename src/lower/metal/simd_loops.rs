//! SIMD-group functions inside loops whose trip count depends on the
//! thread, under the 32-lane emulation.
//!
//! Metal: `for (i = simd_gid; i < n; i += 32) { s = simd_sum(...); }`
//! iterates a different number of times in each SIMD group; within the
//! group the lanes still iterating are the active ones of each exchange.
//!
//! WGSL: the emulation's exchanges wait at `workgroupBarrier`s, which every
//! thread of the workgroup must reach the same number of times.
//!
//! Mapping: such a loop (one an earlier try left an exchange of in
//! non-uniform control flow) runs on every thread until no thread of the
//! threadgroup still iterates. Each iteration first narrows `metal_active`
//! to the threads whose condition holds and that have not left it (`break`,
//! `return`), then decides whether to go on with a threadgroup-wide vote
//! whose result every thread reads through `workgroupUniformLoad`, so the
//! loop's exit is uniform (Tint's analysis sees it). The body is a narrowed
//! region (`simd_branches`): only active threads change their variables or
//! memory, `continue` sits the thread out until the next iteration.

use crate::lower::ctx::function::FnCtx;
use crate::lower::metal::invocation::ACTIVE;
use crate::lower::metal::simd_branches::{load_local, store_local, PredicatedLoop};
use crate::lower::metal::simd_groups::THREAD_INDEX;
use crate::lower::stdlib::simd::bin;
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{self, Stmt, StmtKind};
use crate::types::Type;
use naga::{BinaryOperator as Bo, Block, Expression, Handle, Statement};

/// A loop's parts: (init, condition, step, body, condition before the body).
type LoopParts<'s> = (
    Option<&'s Stmt>,
    Option<&'s ast::Expr>,
    Option<&'s ast::Expr>,
    &'s Stmt,
    bool,
);

fn parts(s: &Stmt) -> Option<LoopParts<'_>> {
    match &s.kind {
        StmtKind::For {
            init,
            cond,
            step,
            body,
        } => Some((init.as_deref(), cond.as_ref(), step.as_ref(), body, true)),
        StmtKind::While { cond, body } => Some((None, Some(cond), None, body, true)),
        StmtKind::DoWhile { body, cond } => Some((None, Some(cond), None, body, false)),
        _ => None,
    }
}

impl Lowerer<'_, '_> {
    /// Lowers the `for`, `while` or `do` loop `s` on every thread (see the
    /// module).
    pub(in crate::lower) fn predicated_loop(&mut self, fx: &mut FnCtx, s: &Stmt) -> Result<()> {
        let (init, cond, step, body, cond_first) = parts(s).expect("a loop");
        let span = s.span;
        fx.open();
        if let Some(init) = init {
            self.stmt(fx, init)?;
        }
        let outer = self.keep_activity(fx, span)?;
        let b = self.naga_type(&Type::BOOL, span)?;
        let running = fx.local("metal_running", b, span);
        let skipping = fx.local("metal_skipping", b, span);
        let yes = fx.add(Expression::Literal(naga::Literal::Bool(true)), span);
        store_local(fx, running, yes, span);
        let no = fx.add(Expression::Literal(naga::Literal::Bool(false)), span);
        store_local(fx, skipping, no, span);
        let frame = PredicatedLoop {
            running,
            skipping,
            depth: (fx.loops, fx.breakables),
        };

        fx.open();
        let mut go = self.still_iterating(fx, outer, running, span);
        if let (true, Some(c)) = (cond_first, cond) {
            let c = self.scalar_condition(fx, c)?;
            go = bin(fx, Bo::LogicalAnd, go, c, span);
        }
        store_local(fx, running, go, span);
        self.set_private(fx, ACTIVE, &Type::BOOL, go, span);
        let any = self.any_thread(fx, go, span)?;
        let mut stop = Block::new();
        stop.push(Statement::Break, Self::span(span));
        fx.push(
            Statement::If {
                condition: any,
                accept: Block::new(),
                reject: stop,
            },
            span,
        );
        fx.pred.loops.push(frame);
        let lowered = self.iteration(fx, body);
        let body = fx.close();
        let continuing = match lowered {
            Ok(()) => self.continuing(
                fx,
                (outer, frame),
                step,
                (!cond_first).then_some(cond).flatten(),
                span,
            ),
            Err(e) => Err(e),
        };
        fx.pred.loops.pop();
        let continuing = continuing?;
        fx.push(
            Statement::Loop {
                body,
                continuing,
                break_if: None,
            },
            span,
        );
        self.reactivate(fx, outer, span);
        let whole = fx.close();
        fx.push(Statement::Block(whole), span);
        Ok(())
    }

    /// `outer && running && !returned`: the thread may iterate again.
    fn still_iterating(
        &mut self,
        fx: &mut FnCtx,
        outer: Handle<naga::LocalVariable>,
        running: Handle<naga::LocalVariable>,
        span: Span,
    ) -> Handle<Expression> {
        let o = load_local(fx, outer, span);
        let r = load_local(fx, running, span);
        let go = bin(fx, Bo::LogicalAnd, o, r, span);
        self.unless_returned(fx, go, span)
    }

    /// The body, as a narrowed region.
    fn iteration(&mut self, fx: &mut FnCtx, body: &Stmt) -> Result<()> {
        fx.pred.narrowed += 1;
        let guarded = std::mem::replace(&mut fx.pred.guarded, false);
        fx.open();
        let lowered = self.stmt(fx, body);
        let block = fx.close();
        fx.pred.narrowed -= 1;
        fx.pred.guarded = guarded;
        lowered?;
        fx.push(Statement::Block(block), body.span);
        Ok(())
    }

    /// The continuing block: the threads that sat out this iteration come
    /// back, then the step runs (a `do` loop's condition decides whether
    /// the thread goes on).
    fn continuing(
        &mut self,
        fx: &mut FnCtx,
        (outer, frame): (Handle<naga::LocalVariable>, PredicatedLoop),
        step: Option<&ast::Expr>,
        last_cond: Option<&ast::Expr>,
        span: Span,
    ) -> Result<Block> {
        fx.open();
        let no = fx.add(Expression::Literal(naga::Literal::Bool(false)), span);
        store_local(fx, frame.skipping, no, span);
        let active = self.still_iterating(fx, outer, frame.running, span);
        self.set_private(fx, ACTIVE, &Type::BOOL, active, span);
        fx.pred.narrowed += 1;
        let lowered = self.step_and_condition(fx, step, last_cond, frame, span);
        fx.pred.narrowed -= 1;
        let block = fx.close();
        lowered.map(|_| block)
    }

    fn step_and_condition(
        &mut self,
        fx: &mut FnCtx,
        step: Option<&ast::Expr>,
        last_cond: Option<&ast::Expr>,
        frame: PredicatedLoop,
        span: Span,
    ) -> Result<()> {
        if let Some(step) = step {
            let stmt = Stmt {
                kind: StmtKind::Expr(step.clone()),
                span: step.span,
            };
            self.stmt(fx, &stmt)?;
        }
        if let Some(c) = last_cond {
            let c = self.scalar_condition(fx, c)?;
            let active = self.load_private(fx, ACTIVE, &Type::BOOL, span);
            let go = bin(fx, Bo::LogicalAnd, active, c, span);
            store_local(fx, frame.running, go, span);
        }
        Ok(())
    }

    /// Whether `go` holds on any thread of the threadgroup, as a value
    /// uniform across it: the threads for which it holds raise a shared
    /// word to this vote's number (`atomicMax`, so no reset is needed), the
    /// first thread copies the word out after a barrier, and every thread
    /// reads the copy with `workgroupUniformLoad`.
    fn any_thread(
        &mut self,
        fx: &mut FnCtx,
        go: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let u = self.naga_type(&Type::UINT, span)?;
        let epoch = match fx.pred.votes {
            Some(v) => v,
            None => {
                // Zero-initialised; the same on every thread, as every
                // vote is reached by all.
                let v = fx.local("metal_vote_number", u, span);
                fx.pred.votes = Some(v);
                v
            }
        };
        let last = load_local(fx, epoch, span);
        let one = self.u32_lit(fx, 1, span);
        let number = bin(fx, Bo::Add, last, one, span);
        store_local(fx, epoch, number, span);
        let (raised, copy) = self.vote_words();
        let raised = fx.add(Expression::GlobalVariable(raised), span);
        let mut raise = Block::new();
        raise.push(
            Statement::Atomic {
                pointer: raised,
                fun: naga::AtomicFunction::Max,
                value: number,
                result: None,
            },
            Self::span(span),
        );
        fx.push(
            Statement::If {
                condition: go,
                accept: raise,
                reject: Block::new(),
            },
            span,
        );
        fx.push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP), span);
        self.global
            .simd_exchange_spans
            .insert((span.start as usize, span.end as usize));
        fx.uses_barrier = true;
        let index = self.load_private(fx, THREAD_INDEX, &Type::UINT, span);
        let zero = self.u32_lit(fx, 0, span);
        let first = bin(fx, Bo::Equal, index, zero, span);
        let copy = fx.add(Expression::GlobalVariable(copy), span);
        fx.open();
        let word = fx.add(Expression::Load { pointer: raised }, span);
        fx.push(
            Statement::Store {
                pointer: copy,
                value: word,
            },
            span,
        );
        let accept = fx.close();
        fx.push(
            Statement::If {
                condition: first,
                accept,
                reject: Block::new(),
            },
            span,
        );
        let result = fx.add_result(Expression::WorkGroupUniformLoadResult { ty: u }, span);
        fx.push(
            Statement::WorkGroupUniformLoad {
                pointer: copy,
                result,
            },
            span,
        );
        Ok(bin(fx, Bo::Equal, result, number, span))
    }

    /// The threadgroup words of [`Lowerer::any_thread`]: the atomic one the
    /// voters raise and the plain copy read uniformly.
    fn vote_words(&mut self) -> (Handle<naga::GlobalVariable>, Handle<naga::GlobalVariable>) {
        if let Some(words) = self.global.simd_vote {
            return words;
        }
        let atomic = self.global.module.types.insert(
            naga::Type {
                name: None,
                inner: naga::TypeInner::Atomic(naga::Scalar::U32),
            },
            naga::Span::UNDEFINED,
        );
        let plain = self.global.module.types.insert(
            naga::Type {
                name: None,
                inner: naga::TypeInner::Scalar(naga::Scalar::U32),
            },
            naga::Span::UNDEFINED,
        );
        let mut word = |name: &str, ty| {
            self.global.module.global_variables.append(
                naga::GlobalVariable {
                    name: Some(name.into()),
                    space: naga::AddressSpace::WorkGroup,
                    binding: None,
                    ty,
                    init: None,
                    memory_decorations: Default::default(),
                },
                naga::Span::UNDEFINED,
            )
        };
        let words = (
            word("metal_simd_vote", atomic),
            word("metal_simd_vote_copy", plain),
        );
        self.global.simd_vote = Some(words);
        words
    }
}

/// The innermost `for`, `while` or `do` loop of `body` around `at` that is
/// not in `taken`, by span.
pub(in crate::lower) fn loop_around(
    body: &ast::Block,
    at: Span,
    taken: &std::collections::HashSet<(usize, usize)>,
) -> Option<(usize, usize)> {
    fn walk(
        s: &Stmt,
        at: Span,
        taken: &std::collections::HashSet<(usize, usize)>,
        found: &mut Option<(usize, usize)>,
    ) {
        if !(s.span.start <= at.start && at.end <= s.span.end) {
            return;
        }
        let key = crate::lower::metal::simd_branches::span_key(s.span);
        if parts(s).is_some() && !taken.contains(&key) {
            *found = Some(key);
        }
        match &s.kind {
            StmtKind::Block(b) => b.stmts.iter().for_each(|s| walk(s, at, taken, found)),
            StmtKind::If {
                then, otherwise, ..
            } => {
                walk(then, at, taken, found);
                if let Some(o) = otherwise {
                    walk(o, at, taken, found);
                }
            }
            StmtKind::For { body, .. }
            | StmtKind::While { body, .. }
            | StmtKind::DoWhile { body, .. }
            | StmtKind::RangeFor { body, .. } => walk(body, at, taken, found),
            StmtKind::Switch { items, .. } => items.iter().for_each(|i| {
                if let ast::SwitchItem::Stmt(s) = i {
                    walk(s, at, taken, found)
                }
            }),
            _ => {}
        }
    }
    let mut found = None;
    body.stmts
        .iter()
        .for_each(|s| walk(s, at, taken, &mut found));
    found
}

/// [`loop_around`] in the helper whose body holds `at` (a plain function or
/// a function template: an instance's statements keep the template's
/// spans). A helper's loop is then predicated wherever the kernel's
/// lowering meets it, as MLX's `fp_qmv_impl` needs: its row loop ends at a
/// bound that depends on the SIMD group (`out_row + row < out_vec_size`).
pub(in crate::lower) fn helper_loop_around(
    program: &crate::sema::Program<'_>,
    at: Span,
    taken: &std::collections::HashSet<(usize, usize)>,
) -> Option<(usize, usize)> {
    let templates = program.templates.iter().filter_map(|t| match &t.item {
        ast::Templated::Function(f) => Some(f),
        _ => None,
    });
    program
        .functions
        .iter()
        .copied()
        .chain(templates)
        .filter_map(|f| f.body.as_ref())
        .filter(|b| b.span.start <= at.start && at.end <= b.span.end)
        .find_map(|b| loop_around(b, at, taken))
}
