//! Metal's tessellation types.
//!
//! A tessellation pipeline in Metal is a compute kernel that writes each
//! patch's tessellation factors into a buffer, then a post-tessellation
//! vertex function (`[[patch(quad, 4)]] vertex`) that reads the patch's
//! control points (`patch_control_point<T>`). The factors are plain structs
//! of `half`s, which `<metal_stdlib>` declares as the Metal framework lays
//! them out for the tessellator (`MTLQuadTessellationFactorsHalf`,
//! `MTLTriangleTessellationFactorsHalf`): a kernel writing them is an
//! ordinary kernel, translated as one (SPIR-V Cross emits tessellation
//! control shaders so). WebGPU has no tessellation stage, so what only the
//! tessellator gives a post-tessellation function is refused (E0402): here
//! `patch_control_point`, in `lower/metal/tessellation.rs` the
//! `[[position_in_patch]]` and `[[patch_id]]` arguments.

use super::{Error, Program};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{MemberDef, Scalar, StructDef, StructId, Type};

/// The tessellation factor structs `<metal_stdlib>` declares: name, edge
/// factors, inside factors (`1` is a plain `half`, more an array). Their
/// layout is the tessellator's: `half`s with no padding (12 bytes for a
/// quad, 8 for a triangle, both 2-aligned).
const FACTOR_STRUCTS: &[(&str, u32, u32)] = &[
    ("MTLQuadTessellationFactorsHalf", 4, 2),
    ("MTLTriangleTessellationFactorsHalf", 3, 1),
];

/// Adds the tessellation factor structs to `program.structs`; a source
/// declaring a struct of the same name uses its own ([`Program::symbols`]
/// is looked up first).
pub(super) fn register(program: &mut Program<'_>) {
    for &(name, edges, inside) in FACTOR_STRUCTS {
        let half = Type::Scalar(Scalar::Half);
        let factors = |n: u32| match n {
            1 => half.clone(),
            n => Type::Array(Box::new(half.clone()), n),
        };
        let member = |name: &str, ty: Type| MemberDef {
            name: name.into(),
            ty,
            span: Span::default(),
            id: None,
        };
        let id = program.structs.push(StructDef {
            name: name.into(),
            members: vec![
                member("edgeTessellationFactor", factors(edges)),
                member("insideTessellationFactor", factors(inside)),
            ],
            span: Span::default(),
            is_union: false,
            bases: Vec::new(),
            pod: true,
            min_align: 1,
            packed: false,
        });
        program.builtin_structs.push(id);
    }
}

impl Program<'_> {
    /// The Metal-declared struct named `name` (a tessellation factor
    /// struct), if it is one.
    pub(super) fn builtin_struct(&self, name: &str) -> Option<StructId> {
        self.builtin_structs
            .iter()
            .copied()
            .find(|id| self.structs.get(*id).name == name)
    }
}

/// `patch_control_point<T>`: the control points of a post-tessellation
/// vertex function's patch, which WebGPU (without tessellation) has no
/// stage to give.
pub(super) fn patch_control_point(ts: &ast::TypeSpec) -> Error {
    Error::coded(
        Code::NoWebGpuEquivalent,
        ts.name_span,
        "`patch_control_point<T>` (the control points of a post-tessellation vertex function) has no WebGPU equivalent: WebGPU has no tessellation",
    )
    .note("a kernel that computes tessellation factors (`device MTLQuadTessellationFactorsHalf*`) translates; the post-tessellation vertex function does not")
}
