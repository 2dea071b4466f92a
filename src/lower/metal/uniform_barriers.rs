//! A kernel's barriers in the uniform control flow WGSL requires of them,
//! where Metal's program reaches them in shapes WGSL refuses (the passes
//! are in `lower::passes`, run on the lowered kernel and its helpers):
//!
//! - an early `return` that depends on the thread, before a barrier:
//!   `passes::early_returns`.

use crate::lower::metal::invocation::ACTIVE;
use crate::lower::passes::early_returns;
use crate::lower::Lowerer;

impl Lowerer<'_, '_> {
    /// Rewrites the lowered kernel `function` (one with barriers, so
    /// predicated: `metal::invocation`) so that Tint finds its barriers in
    /// uniform control flow where Metal's program allows it.
    pub(in crate::lower) fn barriers_in_uniform_control_flow(
        &mut self,
        function: &mut naga::Function,
    ) {
        if let Some(&active) = self.global.privates.get(ACTIVE) {
            early_returns::return_by_inactivity(function, &self.global.module, active);
        }
    }
}
