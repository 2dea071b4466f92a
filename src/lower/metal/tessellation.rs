//! Tessellation.
//!
//! **Metal**: a tessellation pipeline is a compute kernel that writes each
//! patch's factors (`device MTLQuadTessellationFactorsHalf*`, declared by
//! `<metal_stdlib>`: `sema/tessellation.rs`) and a post-tessellation vertex
//! function, marked `[[patch(quad, 4)]]` or `[[patch(triangle, 3)]]`, that
//! the fixed-function tessellator runs once per generated vertex with
//! `[[position_in_patch]]`, `[[patch_id]]` and the patch's control points
//! (`patch_control_point<T>` in its `[[stage_in]]`).
//!
//! **WGSL**: WebGPU has no tessellation stage.
//!
//! **Mapping**: the factor-writing kernel is an ordinary kernel and
//! translates. A `[[patch]]` function that reads nothing of the
//! tessellator (only `[[stage_in]]` attributes, or nothing) is the vertex
//! function it reads as; one with a tessellator input (`[[position_in_patch]]`,
//! `[[patch_id]]`) is refused (E0402) at that argument, as is
//! `patch_control_point<T>` where it is named.

use crate::diagnostics::Code;
use crate::lower::{Error, Result};
use crate::syntax::ast;

/// The arguments only the tessellator gives a post-tessellation vertex
/// function.
const TESSELLATOR_INPUTS: &[&str] = &["position_in_patch", "patch_id"];

/// Refuses `f` when it is a post-tessellation vertex function reading an
/// input only the tessellator gives.
pub(in crate::lower) fn refuse_tessellator_inputs(f: &ast::FunctionDecl) -> Result<()> {
    if !f.attributes.iter().any(|a| a.name == "patch") {
        return Ok(());
    }
    let Some(input) = f
        .params
        .iter()
        .flat_map(|p| &p.attributes)
        .find(|a| TESSELLATOR_INPUTS.contains(&a.name.as_str()))
    else {
        return Ok(());
    };
    Err(Error::coded(
        Code::NoWebGpuEquivalent,
        input.span,
        format!(
            "`[[{}]]` (an input of the post-tessellation vertex function `{}`, `[[patch]]`) has no WebGPU equivalent: WebGPU has no tessellation",
            input.name, f.name.name
        ),
    )
    .note("a kernel that computes tessellation factors (`device MTLQuadTessellationFactorsHalf*`) translates; the tessellator's inputs to a post-tessellation vertex function do not"))
}
