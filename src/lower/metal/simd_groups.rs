//! Metal's 32-wide SIMD groups on adapters of any subgroup width.
//!
//! Metal: a threadgroup is split into SIMD groups of `threads_per_simdgroup`
//! threads, 32 on every Apple GPU, in order of `thread_index_in_threadgroup`
//! (MSL §4.4.1); real kernels hard-code the 32 (`simd_shuffle_down(x, 16)`,
//! `simd_sum` over 32 partial sums, `lane < 32` index math).
//!
//! WGSL: subgroups have the adapter's width (`subgroup_size`: 8 on lavapipe,
//! 32 on NVIDIA, 32 or 64 on AMD, 8 to 32 on Intel; none on wgpu's GL
//! backend), so native subgroup operations give Apple's results only where
//! the adapter runs 32 lanes.
//!
//! Mapping ([`SimdGroups`]): with `Emulated32` a kernel's SIMD-group
//! functions exchange values through threadgroup memory: each thread stores
//! its operand at its `thread_index_in_threadgroup`, waits at a
//! `workgroupBarrier`, reads its 32-lane group's slots, and waits again
//! before the slots are reused. The lane is the index modulo 32, as on
//! Apple GPUs. A barrier must be reached by the whole threadgroup, so the
//! calls must sit in threadgroup-uniform control flow (Tint reports the
//! WGSL otherwise): where they do not, the branches (`simd_branches`) and
//! loops (`simd_loops`) around them run on every thread with the other
//! lanes inactive; threads outside a ragged grid, or inactive there, run
//! along predicated and feed each operation its identity. `Native` keeps
//! WGSL's subgroup operations, for adapters with 32-lane subgroups and for
//! code written to be width-agnostic; vertex and fragment functions always
//! use it (their stages have no threadgroup memory).

use crate::lower::ctx::entry::EntryStage;
use crate::lower::ctx::function::FnCtx;
use crate::lower::stdlib::simd::{bin, select};
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::types::{Scalar, Type};
use naga::{
    BinaryOperator as Bo, Block, CollectiveOperation as Co, Expression, GatherMode, Handle,
    MathFunction, Statement, SubgroupOperation as Op,
};

/// How Metal's SIMD-group functions are lowered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SimdGroups {
    /// `Emulated32`, except where the adapter is known to run 32-lane
    /// subgroups: the runner picks `Native` there, a translation without an
    /// adapter (the CLI, `Library::from_source`) takes `Emulated32`.
    #[default]
    Auto,
    /// 32-lane SIMD groups in threadgroup memory: Apple's results on every
    /// adapter, in kernels, for calls in threadgroup-uniform control flow.
    Emulated32,
    /// WGSL subgroups of the adapter's width (the `subgroup` feature):
    /// Apple's results where the adapter's subgroups are 32 wide, and for
    /// code that reads `threads_per_simdgroup` instead of assuming 32.
    Native,
}

impl SimdGroups {
    /// The mode a translation without an adapter uses.
    pub fn resolved(self) -> SimdGroups {
        match self {
            SimdGroups::Auto => SimdGroups::Emulated32,
            mode => mode,
        }
    }

    /// The name reflection and the command line use.
    pub fn as_str(self) -> &'static str {
        match self {
            SimdGroups::Auto => "auto",
            SimdGroups::Emulated32 => "emulated32",
            SimdGroups::Native => "native",
        }
    }
}

/// Apple's SIMD-group width.
pub(in crate::lower) const WIDTH: u32 = 32;

/// Private global: this thread's `thread_index_in_threadgroup`.
pub(in crate::lower) const THREAD_INDEX: &str = "metal_thread_index";
/// Private global: the threads in this threadgroup (the workgroup size).
pub(in crate::lower) const THREADS: &str = "metal_threadgroup_threads";

impl Lowerer<'_, '_> {
    /// Whether the function being lowered emulates 32-lane SIMD groups.
    pub(in crate::lower) fn emulates_simd(&self) -> bool {
        self.settings.simd == SimdGroups::Emulated32
            && !self.entry.native_simd
            && !matches!(self.entry.stage, EntryStage::Vertex | EntryStage::Fragment)
    }

    /// How SIMD-group functions are lowered here, for the helper
    /// specialisation key: 0 native, 1 emulated, 2 emulated with branches
    /// converted.
    pub(in crate::lower) fn simd_key(&self) -> u8 {
        match (self.emulates_simd(), self.entry.simd_if_conversion) {
            (false, _) => 0,
            (true, false) => 1,
            (true, true) => 2,
        }
    }

    /// The first emulated SIMD-group function of the kernel `function` (or of
    /// a helper it calls) in non-uniform control flow, as an error. The
    /// helpers the kernel calls are then the last try's
    /// ([`Lowerer::forget_stale`]): a helper cached from an earlier try
    /// may call the function whose loop the next try predicates.
    pub(in crate::lower) fn check_simd_uniformity(
        &mut self,
        function: &naga::Function,
    ) -> Result<()> {
        let found = crate::lower::passes::simd_uniformity::first_nonuniform_exchange(
            function,
            &self.global.module,
            &self.global.simd_exchange_spans,
        );
        if found.is_some() {
            let reached = crate::lower::passes::ir_walk::callees(function, &self.global.module);
            self.global.last_tried.extend(reached);
        }
        match found {
            None => Ok(()),
            Some(r) => Err(crate::lower::Error::coded(
                crate::diagnostics::Code::SimdNonUniform,
                Span::new(r.start, r.end),
                "this SIMD-group function may run in non-uniform control flow, where 32-lane \
                 SIMD groups cannot be emulated",
            )
            .note(
                "the emulation waits at threadgroup barriers, which every thread of the \
                 threadgroup must reach; the condition, loop or early `return` around it \
                 depends on the thread",
            )
            .note(
                "use the adapter's subgroups instead (`--simd native`, `SimdGroups::Native`): \
                 Apple's results where they are 32 lanes wide",
            )),
        }
    }

    /// The prologue's SIMD lane (index mod 32) and width (32) when emulating;
    /// also kept in privates for the helper functions.
    pub(in crate::lower) fn emulated_lane_and_size(
        &mut self,
        fx: &mut FnCtx,
        index: Handle<Expression>,
        wg: [u32; 3],
        span: Span,
    ) -> (Handle<Expression>, Handle<Expression>) {
        use crate::lower::metal::invocation::{SIMD_LANE, SIMD_SIZE};
        let threads = wg.iter().product::<u32>();
        self.global.simd_scratch_threads = self.global.simd_scratch_threads.max(threads);
        let mask = self.u32_lit(fx, WIDTH - 1, span);
        let lane = bin(fx, Bo::And, index, mask, span);
        let size = self.u32_lit(fx, WIDTH, span);
        let total = self.u32_lit(fx, threads, span);
        self.set_private(fx, SIMD_LANE, &Type::UINT, lane, span);
        self.set_private(fx, SIMD_SIZE, &Type::UINT, size, span);
        self.set_private(fx, THREAD_INDEX, &Type::UINT, index, span);
        self.set_private(fx, THREADS, &Type::UINT, total, span);
        (lane, size)
    }

    /// The threadgroup array through which operands of naga type `ty` are
    /// exchanged; sized for the largest threadgroup once lowering ends
    /// ([`Lowerer::size_simd_scratch`]).
    fn simd_scratch(&mut self, ty: Handle<naga::Type>) -> Handle<naga::GlobalVariable> {
        if let Some(g) = self.global.simd_scratch.get(&ty) {
            return *g;
        }
        let placeholder = self.scratch_array(ty, 1);
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some("metal_simd_exchange".into()),
                space: naga::AddressSpace::WorkGroup,
                binding: None,
                ty: placeholder,
                init: None,
                memory_decorations: Default::default(),
            },
            naga::Span::UNDEFINED,
        );
        self.global.simd_scratch.insert(ty, g);
        g
    }

    fn scratch_array(&mut self, base: Handle<naga::Type>, n: u32) -> Handle<naga::Type> {
        let stride = self.global.module.types[base]
            .inner
            .size(self.global.module.to_ctx());
        self.global.module.types.insert(
            naga::Type {
                name: None,
                inner: naga::TypeInner::Array {
                    base,
                    size: naga::ArraySize::Constant(std::num::NonZeroU32::new(n).expect("n > 0")),
                    stride,
                },
            },
            naga::Span::UNDEFINED,
        )
    }

    /// Gives every exchange array one slot per thread of the largest
    /// threadgroup that uses it.
    pub(in crate::lower) fn size_simd_scratch(&mut self) {
        let n = self.global.simd_scratch_threads.max(1);
        let scratch: Vec<_> = self
            .global
            .simd_scratch
            .iter()
            .map(|(t, g)| (*t, *g))
            .collect();
        for (ty, g) in scratch {
            let array = self.scratch_array(ty, n);
            self.global.module.global_variables[g].ty = array;
        }
    }

    /// Stores `value` in this thread's slot and waits for the threadgroup;
    /// returns the exchange array and the first slot of this SIMD group.
    pub(in crate::lower) fn publish(
        &mut self,
        fx: &mut FnCtx,
        value: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<(Handle<Expression>, Handle<Expression>)> {
        let t = self.naga_type(ty, span)?;
        let g = self.simd_scratch(t);
        let array = fx.add(Expression::GlobalVariable(g), span);
        let index = self.load_private(fx, THREAD_INDEX, &Type::UINT, span);
        let slot = fx.add(Expression::Access { base: array, index }, span);
        fx.push(
            Statement::Store {
                pointer: slot,
                value,
            },
            span,
        );
        fx.push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP), span);
        (self.global.simd_exchange_spans).insert((span.start as usize, span.end as usize));
        let lane = self.simd_lane(fx, span);
        let base = bin(fx, Bo::Subtract, index, lane, span);
        fx.uses_barrier = true;
        Ok((array, base))
    }

    /// Waits until every thread has read the exchange array.
    pub(in crate::lower) fn retire(&mut self, fx: &mut FnCtx, span: Span) {
        fx.push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP), span);
    }

    /// The value in slot `base + lane` (clamped into the array).
    pub(in crate::lower) fn read_slot(
        &mut self,
        fx: &mut FnCtx,
        array: Handle<Expression>,
        base: Handle<Expression>,
        lane: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let index = bin(fx, Bo::Add, base, lane, span);
        let p = fx.add(Expression::Access { base: array, index }, span);
        fx.add(Expression::Load { pointer: p }, span)
    }

    /// `SubgroupGather` over 32 emulated lanes.
    pub(in crate::lower) fn emulated_gather(
        &mut self,
        fx: &mut FnCtx,
        mode: GatherMode,
        argument: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if ty.element_scalar() == Some(Scalar::Bool) {
            let words = ty.with_scalar(Scalar::UInt);
            let w = self.bool_words(fx, argument, ty, true, span)?;
            let r = self.emulated_gather(fx, mode, w, &words, span)?;
            return self.bool_words(fx, r, &words, false, span);
        }
        let (array, base) = self.publish(fx, argument, ty, span)?;
        let lane = self.simd_lane(fx, span);
        let source = match mode {
            // With every lane of a group present, the first is lane 0
            // (predicated kernels find the first active lane themselves).
            GatherMode::BroadcastFirst => self.u32_lit(fx, 0, span),
            GatherMode::Broadcast(l) | GatherMode::Shuffle(l) => l,
            GatherMode::ShuffleDown(d) => bin(fx, Bo::Add, lane, d, span),
            GatherMode::ShuffleUp(d) => bin(fx, Bo::Subtract, lane, d, span),
            GatherMode::ShuffleXor(m) => bin(fx, Bo::ExclusiveOr, lane, m, span),
            GatherMode::QuadBroadcast(i) => {
                let not3 = self.u32_lit(fx, !3, span);
                let quad = bin(fx, Bo::And, lane, not3, span);
                bin(fx, Bo::Add, quad, i, span)
            }
            GatherMode::QuadSwap(d) => {
                let m = match d {
                    naga::Direction::X => 1,
                    naga::Direction::Y => 2,
                    naga::Direction::Diagonal => 3,
                };
                let m = self.u32_lit(fx, m, span);
                bin(fx, Bo::ExclusiveOr, lane, m, span)
            }
        };
        // Lanes outside the group wrap into it: Metal leaves those reads
        // undefined and the callers that keep their own value select it.
        let mask = self.u32_lit(fx, WIDTH - 1, span);
        let source = bin(fx, Bo::And, source, mask, span);
        let source = self.clamp_to_threadgroup(fx, base, source, span);
        let value = self.read_slot(fx, array, base, source, span);
        let t = self.naga_type(ty, span)?;
        let result = fx.local("metal_simd_value", t, span);
        let result = fx.add(Expression::LocalVariable(result), span);
        fx.push(
            Statement::Store {
                pointer: result,
                value,
            },
            span,
        );
        self.retire(fx, span);
        Ok(fx.add(Expression::Load { pointer: result }, span))
    }

    /// `lane`, limited to the last thread of a short last group.
    pub(in crate::lower) fn clamp_to_threadgroup(
        &mut self,
        fx: &mut FnCtx,
        base: Handle<Expression>,
        lane: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let count = self.group_count(fx, base, span);
        let one = self.u32_lit(fx, 1, span);
        let last = bin(fx, Bo::Subtract, count, one, span);
        fx.add(
            Expression::Math {
                fun: MathFunction::Min,
                arg: lane,
                arg1: Some(last),
                arg2: None,
                arg3: None,
            },
            span,
        )
    }

    /// The threads of this SIMD group: 32, or fewer in the last group of a
    /// threadgroup whose size is not a multiple of 32.
    fn group_count(
        &mut self,
        fx: &mut FnCtx,
        base: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let threads = self.load_private(fx, THREADS, &Type::UINT, span);
        let left = bin(fx, Bo::Subtract, threads, base, span);
        let width = self.u32_lit(fx, WIDTH, span);
        fx.add(
            Expression::Math {
                fun: MathFunction::Min,
                arg: left,
                arg1: Some(width),
                arg2: None,
                arg3: None,
            },
            span,
        )
    }

    /// `SubgroupCollectiveOperation` over 32 emulated lanes: a fold of the
    /// group's slots in lane order (the whole group, or the lanes below).
    pub(in crate::lower) fn emulated_collective(
        &mut self,
        fx: &mut FnCtx,
        op: Op,
        collective_op: Co,
        argument: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if ty.element_scalar() == Some(Scalar::Bool) {
            // Votes: 0/1 words, as `bool` has no memory layout to exchange.
            let words = ty.with_scalar(Scalar::UInt);
            let w = self.bool_words(fx, argument, ty, true, span)?;
            let op = match op {
                Op::All => Op::And,
                Op::Any => Op::Or,
                op => op,
            };
            let r = self.emulated_collective(fx, op, collective_op, w, &words, span)?;
            return self.bool_words(fx, r, &words, false, span);
        }
        let (array, base) = self.publish(fx, argument, ty, span)?;
        let lane = self.simd_lane(fx, span);
        let end = match collective_op {
            Co::Reduce => self.group_count(fx, base, span),
            Co::InclusiveScan => {
                let one = self.u32_lit(fx, 1, span);
                bin(fx, Bo::Add, lane, one, span)
            }
            Co::ExclusiveScan => lane,
        };
        let t = self.naga_type(ty, span)?;
        let identity = self.identity(fx, op, ty, span)?;
        let acc = fx.local("metal_simd_fold", t, span);
        let acc = fx.add(Expression::LocalVariable(acc), span);
        fx.push(
            Statement::Store {
                pointer: acc,
                value: identity,
            },
            span,
        );
        self.fold_slots(fx, op, (array, base, end), acc, ty, span)?;
        self.retire(fx, span);
        Ok(fx.add(Expression::Load { pointer: acc }, span))
    }

    /// `acc = acc op slot[base + j]` for `j` in `0..end`, `slots` being
    /// (array, base, end).
    fn fold_slots(
        &mut self,
        fx: &mut FnCtx,
        op: Op,
        slots: (Handle<Expression>, Handle<Expression>, Handle<Expression>),
        acc: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<()> {
        let (array, base, end) = slots;
        let u = self.naga_type(&Type::UINT, span)?;
        let j = fx.local("metal_simd_lane_j", u, span);
        let j = fx.add(Expression::LocalVariable(j), span);
        let zero = self.u32_lit(fx, 0, span);
        fx.push(
            Statement::Store {
                pointer: j,
                value: zero,
            },
            span,
        );
        fx.open();
        let jv = fx.add(Expression::Load { pointer: j }, span);
        let done = bin(fx, Bo::GreaterEqual, jv, end, span);
        let mut accept = Block::new();
        accept.push(Statement::Break, naga::Span::new(span.start, span.end));
        fx.push(
            Statement::If {
                condition: done,
                accept,
                reject: Block::new(),
            },
            span,
        );
        let item = self.read_slot(fx, array, base, jv, span);
        let so_far = fx.add(Expression::Load { pointer: acc }, span);
        let next = self.fold(fx, op, so_far, item, ty, span);
        fx.push(
            Statement::Store {
                pointer: acc,
                value: next,
            },
            span,
        );
        let body = fx.close();
        fx.open();
        let jv = fx.add(Expression::Load { pointer: j }, span);
        let one = self.u32_lit(fx, 1, span);
        let next_j = bin(fx, Bo::Add, jv, one, span);
        fx.push(
            Statement::Store {
                pointer: j,
                value: next_j,
            },
            span,
        );
        let continuing = fx.close();
        fx.push(
            Statement::Loop {
                body,
                continuing,
                break_if: None,
            },
            span,
        );
        Ok(())
    }

    /// `bool` values as 0/1 `uint`s (`to_words`), or those back as `bool`s.
    fn bool_words(
        &mut self,
        fx: &mut FnCtx,
        value: Handle<Expression>,
        ty: &Type,
        to_words: bool,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if to_words {
            return Ok(fx.add(
                Expression::As {
                    expr: value,
                    kind: naga::ScalarKind::Uint,
                    convert: Some(4),
                },
                span,
            ));
        }
        let t = self.naga_type(ty, span)?;
        let zero = fx.add(Expression::ZeroValue(t), span);
        Ok(bin(fx, Bo::NotEqual, value, zero, span))
    }

    /// `a op b` for one step of a fold.
    fn fold(
        &mut self,
        fx: &mut FnCtx,
        op: Op,
        a: Handle<Expression>,
        b: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Handle<Expression> {
        let math = |fx: &mut FnCtx, fun| {
            fx.add(
                Expression::Math {
                    fun,
                    arg: a,
                    arg1: Some(b),
                    arg2: None,
                    arg3: None,
                },
                span,
            )
        };
        let is_bool = ty.element_scalar() == Some(Scalar::Bool);
        match op {
            Op::Add => bin(fx, Bo::Add, a, b, span),
            Op::Mul => bin(fx, Bo::Multiply, a, b, span),
            Op::Min => math(fx, MathFunction::Min),
            Op::Max => math(fx, MathFunction::Max),
            Op::All => bin(fx, Bo::LogicalAnd, a, b, span),
            Op::Any => bin(fx, Bo::LogicalOr, a, b, span),
            Op::And if is_bool => bin(fx, Bo::LogicalAnd, a, b, span),
            Op::Or if is_bool => bin(fx, Bo::LogicalOr, a, b, span),
            Op::And => bin(fx, Bo::And, a, b, span),
            Op::Or => bin(fx, Bo::InclusiveOr, a, b, span),
            Op::Xor => bin(fx, Bo::ExclusiveOr, a, b, span),
        }
    }

    /// `subgroupBallot(predicate)` over 32 emulated lanes: bit `l` of the
    /// first word for lane `l`; the other words are 0.
    pub(in crate::lower) fn emulated_ballot(
        &mut self,
        fx: &mut FnCtx,
        predicate: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let lane = self.simd_lane(fx, span);
        let one = self.u32_lit(fx, 1, span);
        let zero = self.u32_lit(fx, 0, span);
        let bit = bin(fx, Bo::ShiftLeft, one, lane, span);
        let mine = select(fx, predicate, bit, zero, span);
        let word = self.emulated_collective(fx, Op::Or, Co::Reduce, mine, &Type::UINT, span)?;
        let v4 = self.naga_type(&Type::Vector(Scalar::UInt, 4), span)?;
        Ok(fx.add(
            Expression::Compose {
                ty: v4,
                components: vec![word, zero, zero, zero],
            },
            span,
        ))
    }
}
