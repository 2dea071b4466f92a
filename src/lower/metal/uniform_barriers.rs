//! A kernel's barriers in the uniform control flow WGSL requires of them,
//! where Metal's program reaches them in shapes WGSL refuses (the passes
//! are in `lower::passes`, run on the lowered kernel and its helpers):
//!
//! - an early `return` that depends on the thread, before a barrier, in
//!   the kernel or a helper it calls: `passes::early_returns`;
//! - a branch on a threadgroup value read between two barriers:
//!   `passes::uniform_loads`;
//! - `threadgroup_barrier(mem_flags::mem_none)` in non-uniform control
//!   flow: `passes::execution_barriers`.

use crate::diagnostics::Code;
use crate::lower::metal::invocation::ACTIVE;
use crate::lower::passes::ir_walk::callees;
use crate::lower::passes::{early_returns, execution_barriers, simd_uniformity, uniform_loads};
use crate::lower::{Error, Lowerer};
use crate::source_map::Span;

/// What the passes remember over the kernels of one module.
#[derive(Debug, Default)]
pub(in crate::lower) struct UniformityMemo {
    waiting: early_returns::Waiting,
    /// Helpers whose early returns were looked at.
    returns_done: std::collections::HashSet<naga::Handle<naga::Function>>,
    /// Functions without a threadgroup read between barriers.
    without_uniform_loads: std::collections::HashSet<naga::Handle<naga::Function>>,
    /// Helpers' varying results, for W0418.
    results: simd_uniformity::ResultMemo,
}

impl Lowerer<'_, '_> {
    /// Rewrites the lowered kernel `function` (one with barriers, so
    /// predicated: `metal::invocation`) so that Tint finds its barriers in
    /// uniform control flow where Metal's program allows it.
    pub(in crate::lower) fn barriers_in_uniform_control_flow(
        &mut self,
        function: &mut naga::Function,
    ) {
        let global = &mut self.global;
        let reached = callees(function, &global.module);
        if let Some(&active) = global.privates.get(ACTIVE) {
            let memo = &mut global.uniformity;
            let waiting = memo.waiting.among(&global.module, &reached);
            let module = &mut global.module;
            // A helper's returns once: shared helpers are lowered once.
            for &h in &waiting {
                if memo.returns_done.insert(h) {
                    let mut helper = std::mem::take(&mut module.functions[h]);
                    early_returns::helper_return_by_inactivity(
                        &mut helper,
                        module,
                        active,
                        &waiting,
                    );
                    module.functions[h] = helper;
                }
            }
            early_returns::return_by_inactivity(function, module, active, &waiting);
        }
        let without = &mut global.uniformity.without_uniform_loads;
        uniform_loads::workgroup_uniform_loads(function, &mut global.module, &reached, without);
        if !global.execution_barrier_spans.is_empty() {
            // A source range shared with a barrier that orders memory (one
            // macro expanding to both) is never taken for one without.
            let execution_only = (global.execution_barrier_spans.iter())
                .filter(|s| {
                    !global.fenced_barrier_spans.contains(s)
                        && !global.simd_exchange_spans.contains(s)
                })
                .copied()
                .collect();
            execution_barriers::drop_nonuniform(function, &mut global.module, &execution_only);
        }
        if !self.settings.native_extensions {
            self.warn_nonuniform_barrier(function);
        }
    }

    /// W0418 at the first barrier of `function` (a kernel's) that Tint will
    /// still find in non-uniform control flow, or at the call of a helper
    /// that waits at one there.
    fn warn_nonuniform_barrier(&mut self, function: &naga::Function) {
        let memo = &self.global.uniformity.results;
        let found = simd_uniformity::first_nonuniform_wait(function, &self.global.module, memo);
        let Some(r) = found else {
            return;
        };
        self.global.warnings.push(
            Error::coded(
                Code::BarrierNonUniform,
                Span::new(r.start, r.end),
                "a barrier is reached here in control flow that may depend on the thread, \
                 which WebGPU refuses: browsers will reject the module",
            )
            .note(
                "WGSL requires every thread of the workgroup to reach each barrier together; \
                 a branch, loop or early `return` around it depends on the thread",
            )
            .note(
                "make the condition the same on every thread (read it from a `constant` buffer, \
                 or from threadgroup memory between two barriers), or move the barrier out of it",
            ),
        );
    }
}
