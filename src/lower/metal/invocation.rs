//! Per-invocation state that the kernel prologue computes and any function
//! can read (WGSL built-ins only reach the entry point): whether this thread
//! is inside Metal's grid, and its SIMD-group lane and width.

use crate::lower::ctx::entry::Feature;
use crate::lower::ctx::function::FnCtx;
use crate::lower::Lowerer;
use crate::source_map::Span;
use crate::types::{Scalar, Type};
use naga::{Expression, Handle, Statement};

/// Private global names.
pub(in crate::lower) const ACTIVE: &str = "metal_active";
pub(in crate::lower) const SIMD_LANE: &str = "metal_simd_lane";
pub(in crate::lower) const SIMD_SIZE: &str = "metal_simd_size";

impl Lowerer<'_, '_> {
    /// The `var<private>` named `name`, created on first use.
    pub(in crate::lower) fn private_global(
        &mut self,
        name: &'static str,
        ty: &Type,
    ) -> Handle<naga::GlobalVariable> {
        if let Some(g) = self.global.privates.get(name) {
            return *g;
        }
        let ty = self
            .naga_type(ty, Span::default())
            .expect("scalar types lower");
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(name.into()),
                space: naga::AddressSpace::Private,
                binding: None,
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            naga::Span::UNDEFINED,
        );
        self.global.privates.insert(name, g);
        g
    }

    pub(in crate::lower) fn load_private(
        &mut self,
        fx: &mut FnCtx,
        name: &'static str,
        ty: &Type,
        span: Span,
    ) -> Handle<Expression> {
        let g = self.private_global(name, ty);
        let p = fx.add(Expression::GlobalVariable(g), span);
        fx.add(Expression::Load { pointer: p }, span)
    }

    /// Sets a private global (in the prologue).
    pub(in crate::lower) fn set_private(
        &mut self,
        fx: &mut FnCtx,
        name: &'static str,
        ty: &Type,
        value: Handle<Expression>,
        span: Span,
    ) {
        let g = self.private_global(name, ty);
        let p = fx.add(Expression::GlobalVariable(g), span);
        fx.push(Statement::Store { pointer: p, value }, span);
    }

    /// In a kernel with barriers, `true` for threads inside Metal's grid;
    /// `None` when every running thread is inside it.
    pub(in crate::lower) fn active(
        &mut self,
        fx: &mut FnCtx,
        span: Span,
    ) -> Option<Handle<Expression>> {
        self.entry
            .predicated
            .then(|| self.load_private(fx, ACTIVE, &Type::BOOL, span))
    }

    /// This thread's lane in its SIMD-group (`thread_index_in_simdgroup`).
    pub(in crate::lower) fn simd_lane(&mut self, fx: &mut FnCtx, span: Span) -> Handle<Expression> {
        if !self.emulates_simd() {
            self.require_feature(crate::lower::ctx::entry::Feature::Subgroup);
        }
        self.load_private(fx, SIMD_LANE, &Type::UINT, span)
    }

    /// The SIMD-group width (`threads_per_simdgroup`).
    pub(in crate::lower) fn simd_size(&mut self, fx: &mut FnCtx, span: Span) -> Handle<Expression> {
        if !self.emulates_simd() {
            self.require_feature(crate::lower::ctx::entry::Feature::Subgroup);
        }
        self.load_private(fx, SIMD_SIZE, &Type::Scalar(Scalar::UInt), span)
    }

    /// Records a wgpu feature the kernel being lowered needs.
    pub(in crate::lower) fn require_feature(&mut self, feature: Feature) {
        self.entry.features.insert(feature);
    }

    /// Pushes a statement with a side effect on memory other threads see; in
    /// a kernel with barriers, only threads inside the grid perform it.
    pub(in crate::lower) fn push_effect(
        &mut self,
        fx: &mut FnCtx,
        stmt: Statement,
        pointer: Option<Handle<Expression>>,
        span: Span,
    ) {
        let shared = pointer.is_none_or(|p| points_to_shared_memory(fx, p));
        match self.active(fx, span).filter(|_| shared) {
            Some(active) => {
                let mut accept = naga::Block::new();
                accept.push(stmt, Self::span(span));
                fx.push(
                    Statement::If {
                        condition: active,
                        accept,
                        reject: naga::Block::new(),
                    },
                    span,
                );
            }
            None => fx.push(stmt, span),
        }
    }
}

/// True if `pointer` leads into a buffer or threadgroup memory.
pub(in crate::lower) fn points_to_shared_memory(
    fx: &FnCtx,
    mut pointer: Handle<Expression>,
) -> bool {
    loop {
        match *fx.expr(pointer) {
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                pointer = base
            }
            Expression::GlobalVariable(_) => return true,
            _ => return false,
        }
    }
}

impl Lowerer<'_, '_> {
    /// Gives each fragment function that reads the SIMD lane or width
    /// (`simd_shuffle_up`'s edge test, `simd_is_first`, ...), itself or in
    /// a helper, the adapter's subgroup built-ins and stores them into the
    /// privates those reads load, before its body: a kernel's prologue sets
    /// them, and without this a fragment function read lane 0 everywhere.
    pub(in crate::lower) fn set_fragment_simd_privates(&mut self) {
        let lane = self.global.privates.get(SIMD_LANE).copied();
        let size = self.global.privates.get(SIMD_SIZE).copied();
        if lane.is_none() && size.is_none() {
            return;
        }
        let module = &mut self.global.module;
        for i in 0..module.entry_points.len() {
            if module.entry_points[i].stage != naga::ShaderStage::Fragment {
                continue;
            }
            // The entry point and every function it calls, directly or not.
            let ep = &module.entry_points[i].function;
            let callees = crate::lower::passes::ir_walk::callees(ep, module);
            let loads = |global: Option<Handle<naga::GlobalVariable>>| {
                std::iter::once(ep)
                    .chain(callees.iter().map(|h| &module.functions[*h]))
                    .any(|f| {
                        f.expressions
                            .iter()
                            .any(|(_, e)| matches!(*e, Expression::GlobalVariable(g) if Some(g) == global))
                    })
            };
            let (reads_lane, reads_size) = (loads(lane), loads(size));
            let u32_ty = module.types.insert(
                naga::Type {
                    name: None,
                    inner: naga::TypeInner::Scalar(naga::Scalar::U32),
                },
                naga::Span::UNDEFINED,
            );
            let f = &mut module.entry_points[i].function;
            let mut prologue = naga::Block::new();
            for (read, global, builtin, name) in [
                (
                    reads_lane,
                    lane,
                    naga::BuiltIn::SubgroupInvocationId,
                    "metal_subgroup_lane",
                ),
                (
                    reads_size,
                    size,
                    naga::BuiltIn::SubgroupSize,
                    "metal_subgroup_size",
                ),
            ] {
                let (true, Some(g)) = (read, global) else {
                    continue;
                };
                // The function's own `[[thread_index_in_simdgroup]]`, if it
                // has one (a built-in is one argument at most).
                let given = f
                    .arguments
                    .iter()
                    .position(|a| a.binding == Some(naga::Binding::BuiltIn(builtin)));
                let index = match given {
                    Some(i) => i as u32,
                    None => {
                        f.arguments.push(naga::FunctionArgument {
                            name: Some(name.into()),
                            ty: u32_ty,
                            binding: Some(naga::Binding::BuiltIn(builtin)),
                        });
                        f.arguments.len() as u32 - 1
                    }
                };
                let value = f
                    .expressions
                    .append(Expression::FunctionArgument(index), naga::Span::UNDEFINED);
                let pointer = f
                    .expressions
                    .append(Expression::GlobalVariable(g), naga::Span::UNDEFINED);
                prologue.push(Statement::Store { pointer, value }, naga::Span::UNDEFINED);
            }
            f.body.splice(0..0, prologue);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Metal runs only the threads of a `dispatchThreads` grid, so a ragged
    //! edge threadgroup has fewer threads; WGSL runs whole workgroups. A
    //! thread outside Metal's grid may return at once, unless the kernel
    //! has a barrier, which every thread of the workgroup must reach: then
    //! it runs along with `metal_active` false, and its effects on memory
    //! other threads see are skipped. Its grid position is Metal's:
    //! (threadgroup + offset) * threadgroup size + position in threadgroup.

    use super::ACTIVE;
    use crate::lower::metal::ir_eval::{entry, global, lower_msl, statements, Eval, V};
    use crate::lower::HalfMode;
    use naga::{Expression, Handle, Statement};

    const BARRIER_KERNEL: &str = "\
        void put(device uint* o, uint i, uint v) { o[i] = v; }\n\
        kernel void k(device uint* out [[buffer(0)]], uint gid [[thread_position_in_grid]],\n\
                      uint lid [[thread_position_in_threadgroup]]) {\n\
            threadgroup uint t[64];\n\
            t[lid] = gid;\n\
            threadgroup_barrier(mem_flags::mem_threadgroup);\n\
            out[gid] = t[63 - lid];\n\
            put(out, gid + 1, 7);\n\
        }\n";

    const PLAIN_KERNEL: &str = "\
        kernel void k(device uint* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {\n\
            out[gid] = gid;\n\
        }\n";

    fn uint3(v: [u32; 3]) -> V {
        V::Vec(v.iter().map(|x| V::U(*x)).collect())
    }

    /// The values of the prologue's inputs: WGSL's built-ins and the
    /// dispatch uniform (grid size, threadgroup offset, threadgroups).
    fn dispatch_inputs<'a>(
        module: &'a naga::Module,
        f: &'a naga::Function,
        local: [u32; 3],
        group: [u32; 3],
        grid: [u32; 3],
        offset: [u32; 3],
    ) -> impl Fn(Handle<Expression>) -> Option<V> + 'a {
        let dispatch = global(module, "metal_dispatch");
        move |h| match f.expressions[h] {
            Expression::FunctionArgument(i) => match f.arguments[i as usize].name.as_deref() {
                Some("local_id") => Some(uint3(local)),
                Some("group_id") => Some(uint3(group)),
                other => panic!("argument {other:?}"),
            },
            Expression::Load { pointer } => match f.expressions[pointer] {
                Expression::AccessIndex { base, index }
                    if f.expressions[base] == Expression::GlobalVariable(dispatch) =>
                {
                    Some(uint3([grid, offset, [1, 1, 1]][index as usize]))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether `h` loads the `metal_active` private.
    fn loads_active(module: &naga::Module, f: &naga::Function, h: Handle<Expression>) -> bool {
        let active = global(module, ACTIVE);
        matches!(f.expressions[h], Expression::Load { pointer }
            if f.expressions[pointer] == Expression::GlobalVariable(active))
    }

    /// The global a pointer expression leads into, if any.
    fn root_global(
        f: &naga::Function,
        p: Handle<Expression>,
    ) -> Option<Handle<naga::GlobalVariable>> {
        use crate::lower::passes::ir_walk::pointer_root;
        match f.expressions[pointer_root(&f.expressions, p)] {
            Expression::GlobalVariable(g) => Some(g),
            _ => None,
        }
    }

    /// Checks that every store into a buffer or threadgroup memory in
    /// `block` is guarded by `metal_active`, and that no barrier is.
    fn check_guards(
        module: &naga::Module,
        f: &naga::Function,
        block: &naga::Block,
        guarded: bool,
    ) -> usize {
        let mut stores = 0;
        for s in block.iter() {
            match *s {
                Statement::Store { pointer, .. } => {
                    let shared = root_global(f, pointer).is_some_and(|g| {
                        matches!(
                            module.global_variables[g].space,
                            naga::AddressSpace::Storage { .. } | naga::AddressSpace::WorkGroup
                        )
                    });
                    if shared {
                        assert!(guarded, "an unguarded store into shared memory");
                        stores += 1;
                    }
                }
                Statement::ControlBarrier(_) | Statement::MemoryBarrier(_) => {
                    assert!(!guarded, "a barrier only active threads reach")
                }
                Statement::If {
                    condition,
                    ref accept,
                    ref reject,
                } => {
                    let active = loads_active(module, f, condition);
                    stores += check_guards(module, f, accept, guarded || active);
                    stores += check_guards(module, f, reject, guarded);
                }
                Statement::Block(ref b) => stores += check_guards(module, f, b, guarded),
                _ => {}
            }
        }
        stores
    }

    #[test]
    fn a_kernel_with_a_barrier_predicates_its_effects_instead_of_returning() {
        let lowered = lower_msl(BARRIER_KERNEL, HalfMode::F16);
        assert!(lowered.functions[0].uses_barriers);
        let module = &lowered.module;
        let active = global(module, ACTIVE);
        assert_eq!(
            module.global_variables[active].space,
            naga::AddressSpace::Private
        );
        let f = entry(module, "k");
        let before_barrier: Vec<_> = statements(&f.body)
            .into_iter()
            .take_while(|s| !matches!(s, Statement::ControlBarrier(_)))
            .collect();
        assert!(
            before_barrier.len() < statements(&f.body).len(),
            "no barrier"
        );
        assert!(
            !before_barrier
                .iter()
                .any(|s| matches!(s, Statement::Return { .. })),
            "a thread returns before the barrier"
        );
        // `t[lid] = gid` and `out[gid] = ...` in the kernel, `o[i] = v` in the helper.
        assert_eq!(check_guards(module, f, &f.body, false), 2);
        assert_eq!(module.functions.len(), 1);
        for (_, helper) in module.functions.iter() {
            assert_eq!(check_guards(module, helper, &helper.body, false), 1);
        }
    }

    #[test]
    fn metal_active_is_true_exactly_inside_metal_s_grid() {
        let lowered = lower_msl(BARRIER_KERNEL, HalfMode::F16);
        let module = &lowered.module;
        let f = entry(module, "k");
        let active = global(module, ACTIVE);
        let value = statements(&f.body)
            .into_iter()
            .find_map(|s| match *s {
                Statement::Store { pointer, value }
                    if f.expressions[pointer] == Expression::GlobalVariable(active) =>
                {
                    Some(value)
                }
                _ => None,
            })
            .expect("the prologue sets metal_active");
        // The default threadgroup of a kernel with a 1-D position: 64x1x1.
        assert_eq!(module.entry_points[0].workgroup_size, [64, 1, 1]);
        let grid = [100, 3, 1];
        for (local, group, offset) in [
            ([0, 0, 0], [0, 0, 0], [0, 0, 0]),
            ([35, 0, 0], [1, 0, 0], [0, 0, 0]),
            ([36, 0, 0], [1, 0, 0], [0, 0, 0]),
            ([63, 0, 0], [1, 0, 0], [0, 0, 0]),
            ([3, 0, 0], [0, 2, 0], [0, 0, 0]),
            ([3, 0, 0], [0, 3, 0], [0, 0, 0]),
            ([3, 0, 0], [0, 0, 0], [0, 2, 0]),
            ([3, 0, 0], [0, 1, 0], [0, 2, 0]),
            ([40, 0, 0], [0, 0, 0], [1, 0, 0]),
            ([0, 0, 0], [0, 0, 1], [0, 0, 0]),
        ] {
            let position: Vec<u32> = (0..3)
                .map(|d| (group[d] + offset[d]) * [64, 1, 1][d] + local[d])
                .collect();
            let inside = (0..3).all(|d| position[d] < grid[d]);
            let inputs = dispatch_inputs(module, f, local, group, grid, offset);
            // `metal_whole_grid`: a host sets it only when every launched
            // thread is inside; set, it makes every thread active.
            for whole in [false, true] {
                let leaf = |h| match f.expressions[h] {
                    Expression::Override(_) => Some(V::B(whole)),
                    _ => inputs(h),
                };
                let got = Eval {
                    function: f,
                    leaf: &leaf,
                }
                .eval(value)
                .b();
                let want = inside || whole;
                assert_eq!(
                    got, want,
                    "position {position:?} in grid {grid:?}, whole {whole}"
                );
            }
        }
    }

    #[test]
    fn a_kernel_without_a_barrier_returns_outside_the_grid() {
        let lowered = lower_msl(PLAIN_KERNEL, HalfMode::F16);
        assert!(!lowered.functions[0].uses_barriers);
        let module = &lowered.module;
        assert!(module
            .global_variables
            .iter()
            .all(|(_, g)| g.name.as_deref() != Some(ACTIVE)));
        let f = entry(module, "k");
        let (condition, accept) = f
            .body
            .iter()
            .find_map(|s| match s {
                Statement::If {
                    condition, accept, ..
                } => Some((*condition, accept)),
                _ => None,
            })
            .expect("a grid guard");
        assert!(matches!(
            accept.iter().next(),
            Some(Statement::Return { value: None })
        ));
        let grid = [100, 1, 1];
        for (local, group) in [
            ([35, 0, 0], [1, 0, 0]),
            ([36, 0, 0], [1, 0, 0]),
            ([0, 0, 0], [2, 0, 0]),
        ] {
            let leaf = dispatch_inputs(module, f, local, group, grid, [0, 0, 0]);
            let outside = Eval {
                function: f,
                leaf: &leaf,
            }
            .eval(condition)
            .b();
            assert_eq!(
                outside,
                group[0] * 64 + local[0] >= 100,
                "{local:?} {group:?}"
            );
        }
    }
}
