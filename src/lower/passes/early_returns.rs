//! A kernel's early `return` before a barrier, as WGSL takes it.
//!
//! Metal: a thread that has returned no longer takes part in the
//! threadgroup's barriers; the threads still running wait for each other.
//! Kernels rely on it everywhere: `if (gid >= n) return;` and then a
//! reduction through threadgroup memory (MLX), or SPIRV-Cross's
//! tessellation-control kernels, whose surplus threads return between two
//! barriers. (The specification asks every thread of the threadgroup to
//! reach a barrier; what a program can rely on is that the threads which
//! run on reach the same barriers the same number of times, and a program
//! that breaks this has no defined meaning in Metal either.)
//!
//! WGSL: a barrier must be in uniform control flow; after a `return` that
//! depends on the thread nothing is (Tint refuses the module: "'workgroupBarrier'
//! must only be called from uniform control flow"), and Vulkan leaves a
//! barrier that only some invocations reach undefined.
//!
//! Mapping: a kernel with barriers already performs every effect on
//! memory other threads see (stores into buffers and threadgroup memory,
//! atomics, texture writes, also in the helpers it calls) only where the
//! private `metal_active` holds, so that threads outside a ragged grid can
//! run along to every barrier (`lower::metal::invocation`). Such a `return`
//! becomes `metal_active = false`: the thread runs on to the kernel's end
//! with no effect other threads can see, and the emulated SIMD groups leave
//! it out as an inactive lane, as Metal leaves a returned thread out. It
//! waits at the barriers the running threads reach: where Tint takes their
//! control flow as uniform, every thread, returned or not, takes the same
//! path to them. In a helper the kernel calls, the same: the value is kept
//! in a local, and where the helper ends the thread gets back the activity
//! it was called with and the kept value. A `return` inside a loop stays (a returned thread could
//! otherwise iterate on where the loop's only way out was that `return`),
//! and so do those Tint takes as uniform already (`if (group >= groups)
//! return;`: the whole threadgroup leaves at once) and those after which no
//! barrier can run.

use super::ir_walk::visit;
use super::simd_uniformity::nonuniform_returns;
use naga::{Block, Expression, Function, Handle, Literal, Module, Span, Statement};
use std::collections::HashSet;

/// Turns each `return` of kernel `f` that Tint takes as non-uniform and
/// after which a barrier may run (outside loops) into `active = false`
/// (`active`: the kernel's `metal_active`). True if one was.
///
/// `waiting`: the functions that wait at a barrier (themselves or in a
/// callee), [`Waiting`]'s.
pub(in crate::lower) fn return_by_inactivity(
    f: &mut Function,
    module: &Module,
    active: Handle<naga::GlobalVariable>,
    waiting: &HashSet<Handle<Function>>,
) -> bool {
    let mut convert = Convert {
        waiting,
        nonuniform: None,
        active,
        result: None,
        keeps_values: false,
        converted: false,
    };
    if !convert.any_candidate(&f.body, false) {
        return false;
    }
    convert.nonuniform = Some(nonuniform_returns(f, module));
    let mut body = std::mem::take(&mut f.body);
    convert.block(&mut body, false, &mut f.expressions);
    f.body = body;
    convert.converted
}

/// Turns each `return` of helper `f` (one a kernel with barriers calls,
/// so its effects are predicated too) that Tint takes as non-uniform and
/// after which a barrier may run (outside loops) into inactivity, as in a
/// kernel: its value is kept in a local, `metal_active` is `false` until the
/// helper ends, and every `return` left (the last one, those in loops, those
/// Tint takes as uniform) gives the activity the helper was called with back
/// and returns the kept value where the thread had returned. True if one
/// was.
pub(in crate::lower) fn helper_return_by_inactivity(
    f: &mut Function,
    module: &Module,
    active: Handle<naga::GlobalVariable>,
    waiting: &HashSet<Handle<Function>>,
) -> bool {
    let mut convert = Convert {
        waiting,
        nonuniform: None,
        active,
        result: None,
        keeps_values: f.result.is_some(),
        converted: false,
    };
    if !convert.any_candidate(&f.body, false) {
        return false;
    }
    let nonuniform = nonuniform_returns(f, module);
    if nonuniform.is_empty() {
        return false;
    }
    convert.nonuniform = Some(nonuniform);
    let bool_ty = module.global_variables[active].ty;
    let local = |f: &mut Function, name: &str, ty| {
        f.local_variables.append(
            naga::LocalVariable {
                name: Some(name.into()),
                ty,
                init: None,
            },
            Span::UNDEFINED,
        )
    };
    convert.result = f
        .result
        .as_ref()
        .map(|r| r.ty)
        .map(|ty| local(f, "metal_result", ty));
    let mut body = std::mem::take(&mut f.body);
    convert.block(&mut body, false, &mut f.expressions);
    if !convert.converted {
        f.body = body;
        return false;
    }
    let entry = local(f, "metal_entry_active", bool_ty);
    let restore = Restore {
        active,
        entry,
        result: convert.result,
    };
    let mut prologue = Block::new();
    let now = restore.load_global(&mut f.expressions, &mut prologue);
    let pointer = f
        .expressions
        .append(Expression::LocalVariable(entry), Span::UNDEFINED);
    prologue.push(
        Statement::Store {
            pointer,
            value: now,
        },
        Span::UNDEFINED,
    );
    restore.returns(&mut body, &mut f.expressions);
    if !matches!(body.last(), Some(Statement::Return { .. })) {
        restore.reactivate(&mut f.expressions, &mut body);
    }
    prologue.append(&mut body);
    f.body = prologue;
    true
}

/// A helper's activity given back where it returns.
struct Restore {
    active: Handle<naga::GlobalVariable>,
    /// The activity it was called with.
    entry: Handle<naga::LocalVariable>,
    /// The value its converted `return`s kept.
    result: Option<Handle<naga::LocalVariable>>,
}

impl Restore {
    /// Rewrites every `return` of `block` (nested ones too).
    fn returns(&self, block: &mut Block, expressions: &mut naga::Arena<Expression>) {
        let old = std::mem::take(block);
        for (mut s, span) in old.span_into_iter() {
            match s {
                Statement::Return { value } => {
                    let value = match (value, self.result) {
                        (Some(v), Some(result)) => {
                            // Where the thread returned before, its value is kept.
                            let mut keep = Block::new();
                            let pointer =
                                expressions.append(Expression::LocalVariable(result), span);
                            keep.push(Statement::Store { pointer, value: v }, span);
                            let active = self.load_global(expressions, block);
                            let condition = active;
                            block.push(
                                Statement::If {
                                    condition,
                                    accept: keep,
                                    reject: Block::new(),
                                },
                                span,
                            );
                            self.reactivate(expressions, block);
                            Some(load(expressions, block, Expression::LocalVariable(result)))
                        }
                        (value, _) => {
                            self.reactivate(expressions, block);
                            value
                        }
                    };
                    block.push(Statement::Return { value }, span);
                    continue;
                }
                Statement::Block(ref mut b) => self.returns(b, expressions),
                Statement::If {
                    ref mut accept,
                    ref mut reject,
                    ..
                } => {
                    self.returns(accept, expressions);
                    self.returns(reject, expressions);
                }
                Statement::Switch { ref mut cases, .. } => {
                    for c in cases.iter_mut() {
                        self.returns(&mut c.body, expressions);
                    }
                }
                Statement::Loop {
                    ref mut body,
                    ref mut continuing,
                    ..
                } => {
                    self.returns(body, expressions);
                    self.returns(continuing, expressions);
                }
                _ => {}
            }
            block.push(s, span);
        }
    }

    /// `metal_active = entry;` at the end of `block`.
    fn reactivate(&self, expressions: &mut naga::Arena<Expression>, block: &mut Block) {
        let value = load(expressions, block, Expression::LocalVariable(self.entry));
        let pointer = expressions.append(Expression::GlobalVariable(self.active), Span::UNDEFINED);
        block.push(Statement::Store { pointer, value }, Span::UNDEFINED);
    }

    /// `metal_active`, loaded at the end of `block`.
    fn load_global(
        &self,
        expressions: &mut naga::Arena<Expression>,
        block: &mut Block,
    ) -> Handle<Expression> {
        load(expressions, block, Expression::GlobalVariable(self.active))
    }
}

/// A load through `pointer` (a variable), emitted at the end of `block`.
fn load(
    expressions: &mut naga::Arena<Expression>,
    block: &mut Block,
    pointer: Expression,
) -> Handle<Expression> {
    let pointer = expressions.append(pointer, Span::UNDEFINED);
    let value = expressions.append(Expression::Load { pointer }, Span::UNDEFINED);
    let i = value.index() as u32;
    block.push(
        Statement::Emit(naga::Range::from_index_range(i..i + 1, expressions)),
        Span::UNDEFINED,
    );
    value
}

struct Convert<'a> {
    /// The functions that wait at a barrier, themselves or in a callee.
    waiting: &'a HashSet<Handle<Function>>,
    /// The spans of the `return`s Tint takes as non-uniform.
    nonuniform: Option<HashSet<(usize, usize)>>,
    active: Handle<naga::GlobalVariable>,
    /// In a helper: the local its converted `return`s store their value in
    /// (`None` in a kernel, or a helper without a result).
    result: Option<Handle<naga::LocalVariable>>,
    /// A `return` with a value can be converted (into [`Convert::result`]).
    keeps_values: bool,
    converted: bool,
}

impl Convert<'_> {
    /// Whether `block` has a `return` outside loops after which a barrier
    /// may run (`after`: one may run after `block`). Loops are not entered.
    fn any_candidate(&self, block: &Block, after: bool) -> bool {
        block.iter().enumerate().any(|(i, s)| {
            let later = after || block.iter().skip(i + 1).any(|s| self.waits(s));
            match s {
                Statement::Return { value } => after && self.takes(value),
                Statement::Block(b) => self.any_candidate(b, later),
                Statement::If { accept, reject, .. } => {
                    self.any_candidate(accept, later) || self.any_candidate(reject, later)
                }
                Statement::Switch { cases, .. } => {
                    cases.iter().any(|c| self.any_candidate(&c.body, later))
                }
                _ => false,
            }
        })
    }

    /// Converts the candidate `return`s of `block` (see
    /// [`Convert::any_candidate`]).
    fn block(&mut self, block: &mut Block, after: bool, expressions: &mut naga::Arena<Expression>) {
        let waits: Vec<bool> = block.iter().map(|s| self.waits(s)).collect();
        let mut ended = None;
        for (i, (s, span)) in block.span_iter_mut().enumerate() {
            let later = after || waits[i + 1..].iter().any(|&w| w);
            match s {
                Statement::Return { value }
                    if after
                        && self.takes(value)
                        && span.as_ref().is_some_and(|span| self.is_nonuniform(span)) =>
                {
                    let off = self.deactivate(expressions);
                    *s = match (*value, self.result) {
                        (None, _) => off,
                        (Some(value), Some(result)) => {
                            let pointer = expressions
                                .append(Expression::LocalVariable(result), Span::UNDEFINED);
                            let mut both = Block::new();
                            both.push(Statement::Store { pointer, value }, Span::UNDEFINED);
                            both.push(off, Span::UNDEFINED);
                            Statement::Block(both)
                        }
                        (Some(_), None) => unreachable!("a result local where values are kept"),
                    };
                    self.converted = true;
                    // What followed the `return` never ran.
                    ended = Some(i + 1);
                    break;
                }
                Statement::Block(b) => self.block(b, later, expressions),
                Statement::If { accept, reject, .. } => {
                    self.block(accept, later, expressions);
                    self.block(reject, later, expressions);
                }
                Statement::Switch { cases, .. } => {
                    for c in cases.iter_mut() {
                        self.block(&mut c.body, later, expressions);
                    }
                }
                _ => {}
            }
        }
        if let Some(end) = ended {
            block.cull(end..);
        }
    }

    /// Whether a `return` of `value` can become inactivity here: in a
    /// helper with a result, through [`Convert::result`].
    fn takes(&self, value: &Option<Handle<Expression>>) -> bool {
        value.is_none() || self.keeps_values
    }

    fn is_nonuniform(&self, span: &Span) -> bool {
        let set = self
            .nonuniform
            .as_ref()
            .expect("computed before converting");
        span.to_range()
            .is_some_and(|r| set.contains(&(r.start, r.end)))
    }

    /// `metal_active = false`.
    fn deactivate(&self, expressions: &mut naga::Arena<Expression>) -> Statement {
        let pointer = expressions.append(Expression::GlobalVariable(self.active), Span::UNDEFINED);
        let value = expressions.append(Expression::Literal(Literal::Bool(false)), Span::UNDEFINED);
        Statement::Store { pointer, value }
    }

    /// Whether `s` may wait at a barrier (itself or in a function it calls).
    fn waits(&self, s: &Statement) -> bool {
        let mut found = is_barrier(s, self.waiting);
        let mut check = |s: &Statement, _| found |= is_barrier(s, self.waiting);
        match s {
            Statement::Block(b) => visit(b, &mut check),
            Statement::If { accept, reject, .. } => {
                visit(accept, &mut check);
                visit(reject, &mut check);
            }
            Statement::Switch { cases, .. } => {
                cases.iter().for_each(|c| visit(&c.body, &mut check))
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                visit(body, &mut check);
                visit(continuing, &mut check);
            }
            _ => {}
        }
        found
    }
}

/// A barrier, or a call of a function that waits at one.
fn is_barrier(s: &Statement, waiting: &HashSet<Handle<Function>>) -> bool {
    match s {
        Statement::ControlBarrier(_) | Statement::WorkGroupUniformLoad { .. } => true,
        Statement::Call { function, .. } => waiting.contains(function),
        _ => false,
    }
}

/// Which functions wait at a barrier, themselves or in a function they
/// call, remembered over the kernels of a module (a function's calls do not
/// change once it is lowered; a barrier a pass takes out later leaves it
/// taken as waiting, which only makes the passes look at more).
#[derive(Debug, Default)]
pub(in crate::lower) struct Waiting {
    known: std::collections::HashMap<Handle<Function>, bool>,
}

impl Waiting {
    /// The functions of `reached` that wait.
    pub(in crate::lower) fn among(
        &mut self,
        module: &Module,
        reached: &HashSet<Handle<Function>>,
    ) -> HashSet<Handle<Function>> {
        (reached.iter().copied())
            .filter(|&h| self.waits(module, h))
            .collect()
    }

    fn waits(&mut self, module: &Module, h: Handle<Function>) -> bool {
        if let Some(&known) = self.known.get(&h) {
            return known;
        }
        let mut direct = false;
        let mut called = Vec::new();
        visit(&module.functions[h].body, &mut |s, _| match s {
            Statement::ControlBarrier(_) | Statement::WorkGroupUniformLoad { .. } => direct = true,
            Statement::Call { function, .. } => called.push(*function),
            _ => {}
        });
        // MSL has no recursion: the walk ends.
        let waits = direct || called.into_iter().any(|c| self.waits(module, c));
        self.known.insert(h, waits);
        waits
    }
}
