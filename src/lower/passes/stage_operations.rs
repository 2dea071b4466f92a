//! Operations a WGSL shader stage forbids, reported where the MSL asked
//! for them.
//!
//! Metal lets vertex and fragment functions call `simdgroup_barrier`,
//! `atomic_thread_fence` and (vertex functions) the SIMD-group functions.
//! WGSL allows barriers only in compute shaders and subgroup operations
//! only in compute and fragment shaders (WGSL §17.11, §17.13), and naga's
//! validator rejects a module that breaks this without saying where. This
//! check walks each vertex and fragment entry point and the functions it
//! calls, and refuses the first such statement at its span.

use crate::diagnostics::{Code, Diagnostic};
use crate::source_map::Span;
use naga::{Function, Handle, Module, ShaderStage, Statement};
use std::collections::HashSet;

/// What a stage forbids, for the message.
#[derive(Clone, Copy)]
enum Forbidden {
    Barrier,
    Subgroup,
}

/// The first barrier or subgroup operation that an entry point's stage
/// forbids, as a located E0402; `Ok` when there is none.
pub(crate) fn check(module: &Module) -> Result<(), Diagnostic> {
    for ep in &module.entry_points {
        let subgroups_forbidden = match ep.stage {
            ShaderStage::Vertex => true,
            ShaderStage::Fragment => false,
            _ => continue,
        };
        let mut walk = Walk {
            module,
            subgroups_forbidden,
            seen: HashSet::new(),
        };
        if let Some((what, span)) = walk.function(&ep.function) {
            return Err(refusal(what, ep.stage, span));
        }
    }
    Ok(())
}

struct Walk<'m> {
    module: &'m Module,
    subgroups_forbidden: bool,
    seen: HashSet<Handle<Function>>,
}

impl Walk<'_> {
    /// The first forbidden statement of `f`, in order, a call's callee
    /// searched where the call stands.
    fn function(&mut self, f: &Function) -> Option<(Forbidden, naga::Span)> {
        let mut found = None;
        super::ir_walk::visit(&f.body, &mut |s, span| {
            if found.is_none() {
                found = self.statement(s, span);
            }
        });
        found
    }

    fn statement(&mut self, s: &Statement, span: naga::Span) -> Option<(Forbidden, naga::Span)> {
        match s {
            Statement::ControlBarrier(_)
            | Statement::MemoryBarrier(_)
            | Statement::WorkGroupUniformLoad { .. } => Some((Forbidden::Barrier, span)),
            Statement::SubgroupBallot { .. }
            | Statement::SubgroupCollectiveOperation { .. }
            | Statement::SubgroupGather { .. }
                if self.subgroups_forbidden =>
            {
                Some((Forbidden::Subgroup, span))
            }
            Statement::Call { function, .. } => {
                if !self.seen.insert(*function) {
                    return None;
                }
                let f = &self.module.functions[*function];
                // A helper's statement is located inside the helper; the
                // call is where the entry point reaches it.
                self.function(f)
                    .map(|(what, inner)| (what, if inner.is_defined() { inner } else { span }))
            }
            _ => None,
        }
    }
}

fn refusal(what: Forbidden, stage: ShaderStage, span: naga::Span) -> Diagnostic {
    let stage = match stage {
        ShaderStage::Vertex => "vertex",
        _ => "fragment",
    };
    let (message, note) = match what {
        Forbidden::Barrier => (
            format!("barriers and memory fences have no WebGPU equivalent in a {stage} function"),
            "WGSL allows barriers only in compute shaders, whose invocations share a workgroup; move the synchronised work into a kernel",
        ),
        Forbidden::Subgroup => (
            format!("SIMD-group functions have no WebGPU equivalent in a {stage} function"),
            "WGSL allows subgroup operations only in compute and fragment shaders: compute the value in a kernel, or in the fragment function",
        ),
    };
    let r = span.to_range().unwrap_or(0..0);
    let mut d = Diagnostic::error(Code::NoWebGpuEquivalent, message, Span::new(r.start, r.end));
    d.notes.push(note.into());
    d
}
