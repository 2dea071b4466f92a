//! Metal features outside ray tracing that WebGPU has no equivalent of, by
//! the types that name them: mesh shading (`mesh<..>`, `mesh_grid_properties`,
//! `object_data`; MSL §5.2.3), imageblocks and tile memory (`imageblock<..>`,
//! MSL §5.6) and rasterization rate maps (`rasterization_rate_map_data`,
//! MSL §6.15), pull-model interpolation (`interpolant<T, P>`)
//! and 64-bit atomics (`atomic_ulong`, `atomic_long`), indirect command
//! buffers (`command_buffer`, `render_command`, `compute_command`; MSL §6.16),
//! sparse textures' `sparse_color<T>` (MSL §6.12.14) and the pixel data types
//! (`rgba8unorm<half4>`, ...; MSL §2.7). A type of these is refused where it is written (E0402), with
//! what a port does instead, rather than reported as an unknown type.

use super::Error;
use crate::diagnostics::Code;
use crate::syntax::ast;

/// Each type, why WebGPU cannot express it, and what a port does instead.
const TYPES: &[(&str, &str, &str)] = &[
    ("mesh", MESH, MESH_PORT),
    ("mesh_grid_properties", MESH, MESH_PORT),
    ("object_data", MESH, MESH_PORT),
    ("imageblock", IMAGEBLOCK, IMAGEBLOCK_PORT),
    ("rasterization_rate_map_data", RATE_MAP, RATE_MAP_PORT),
    ("rasterization_rate_map_decoder", RATE_MAP, RATE_MAP_PORT),
    ("interpolant", PULL_INTERPOLATION, PULL_INTERPOLATION_PORT),
    ("atomic_ulong", ATOMIC_64, ATOMIC_64_PORT),
    ("atomic_long", ATOMIC_64, ATOMIC_64_PORT),
    ("command_buffer", INDIRECT_COMMANDS, INDIRECT_COMMANDS_PORT),
    ("render_command", INDIRECT_COMMANDS, INDIRECT_COMMANDS_PORT),
    ("compute_command", INDIRECT_COMMANDS, INDIRECT_COMMANDS_PORT),
    ("sparse_color", SPARSE, SPARSE_PORT),
];

/// The pixel data types (MSL §2.7, "Pixel Data Types"): a value stored in a
/// texture's pixel format and converted to and from its ALU type (the
/// template argument) on every load and store. Apple's samples declare
/// explicit imageblocks with them.
const PIXEL_TYPES: &[&str] = &[
    "r8unorm",
    "r8snorm",
    "r16unorm",
    "r16snorm",
    "rg8unorm",
    "rg8snorm",
    "rg16unorm",
    "rg16snorm",
    "rgba8unorm",
    "srgba8unorm",
    "rgba8snorm",
    "rgba16unorm",
    "rgba16snorm",
    "rgb10a2",
    "rg11b10f",
    "rgb9e5",
];

const MESH: &str = "WebGPU has no mesh shading";
const MESH_PORT: &str =
    "write the vertices and indices from a kernel into buffers, then draw them with a vertex function";
const IMAGEBLOCK: &str = "WebGPU exposes no tile memory (imageblocks)";
const IMAGEBLOCK_PORT: &str =
    "keep the per-pixel data in render targets, or in `threadgroup` memory of a kernel";
const PULL_INTERPOLATION: &str = "WGSL fixes how each fragment input is interpolated where it is declared, and has no interpolation at a chosen sample or offset";
const PULL_INTERPOLATION_PORT: &str = "declare the input with the sampling it needs (`[[centroid_perspective]]`, `[[sample_no_perspective]]`, ...), one input per sampling";
const ATOMIC_64: &str = "WebGPU has no 64-bit integers, so no 64-bit atomics";
const ATOMIC_64_PORT: &str = "keep the value in an `atomic_uint` where 32 bits suffice";
const INDIRECT_COMMANDS: &str =
    "WebGPU has no indirect command buffers: a shader cannot encode draws or dispatches";
const INDIRECT_COMMANDS_PORT: &str = "write each command's arguments (vertex count, instance count, ...) into a buffer from a kernel and issue `drawIndirect`/`drawIndexedIndirect` or `dispatchWorkgroupsIndirect` on the host, one call per command (a zero count skips it)";
const SPARSE: &str = "WebGPU has no sparse (partially resident) textures";
const SPARSE_PORT: &str = "bind a fully resident texture (or the resident mip levels only) and `sample` it; every texel of a WebGPU texture is resident";
const PIXEL: &str = "WGSL has no type kept in a pixel format and converted on every load and store";
const PIXEL_PORT: &str = "keep tile data in render targets of that format (see `imageblock`); in a buffer, store a `uint` and convert it with `unpack_unorm4x8_to_float`/`pack_float_to_unorm4x8` (and their `snorm`, `unorm2x16` forms)";
const RATE_MAP: &str = "WebGPU has no variable rasterization rates";
const RATE_MAP_PORT: &str = "render at one rate (or into smaller targets that are upscaled)";

/// The refusal of `ts` when it names one of these types and the program
/// does not declare it itself (the caller looks its own names up first).
pub(super) fn refusal(name: &str, ts: &ast::TypeSpec) -> Option<Error> {
    let short = name.strip_prefix("metal::").unwrap_or(name);
    if PIXEL_TYPES.contains(&short) {
        return Some(
            Error::coded(
                Code::NoWebGpuEquivalent,
                ts.name_span,
                format!("`{short}` (a pixel data type) has no WebGPU equivalent: {PIXEL}"),
            )
            .note(format!("a port does this instead: {PIXEL_PORT}")),
        );
    }
    let (_, feature, port) = TYPES.iter().find(|(t, _, _)| *t == short)?;
    Some(
        Error::coded(
            Code::NoWebGpuEquivalent,
            ts.name_span,
            format!("`{short}` has no WebGPU equivalent: {feature}"),
        )
        .note(format!("a port does this instead: {port}")),
    )
}

/// The refusal of a sparse texture function (`t.sparse_sample(..)`,
/// `t.sparse_read(..)`, ...), located at the call.
pub(crate) fn sparse_refusal(method: &str, span: crate::source_map::Span) -> Error {
    Error::coded(
        Code::NoWebGpuEquivalent,
        span,
        format!("`{method}` has no WebGPU equivalent: {SPARSE}"),
    )
    .note(format!("a port does this instead: {SPARSE_PORT}"))
}

/// The refusal of a fragment function's `[[threadgroup(n)]]` argument
/// (located at the attribute): Metal allows it in render pipelines with tile
/// shading, where the fragments of a tile share the tile's threadgroup memory
/// with its tile kernels (MSL §4.4).
pub(crate) fn fragment_threadgroup_refusal(span: crate::source_map::Span) -> Error {
    Error::coded(
        Code::NoWebGpuEquivalent,
        span,
        format!("a `[[threadgroup(n)]]` argument of a fragment function (threadgroup memory of a tile-shading render pipeline) has no WebGPU equivalent: {IMAGEBLOCK}"),
    )
    .note("a port does this instead: compute the per-tile data (a light list, say) in a kernel into a `device` buffer indexed by tile, and read it in the fragment function through a `[[buffer(n)]]` argument")
}

/// Why a pointer held in buffer memory (a GPU address: SPIR-V Cross's
/// translation of Vulkan's buffer device addresses) cannot be translated.
pub(crate) const POINTER_IN_BUFFER: &str = "a pointer stored in buffer memory (a buffer's GPU address) has no WebGPU equivalent: WGSL reaches memory only through the variables it declares";
/// What a port does instead of storing pointers in buffers.
pub(crate) const POINTER_IN_BUFFER_PORT: &str = "a port does this instead: bind each buffer as a `[[buffer(n)]]` argument (or an argument buffer member) and store offsets into it";
/// Why textures or samplers held in buffer memory (a descriptor heap read
/// through a `device` pointer, "bindless" resources) cannot be translated.
pub(crate) const RESOURCE_IN_BUFFER: &str = "textures and samplers held in buffer memory (a bindless descriptor heap) have no WebGPU equivalent: WebGPU binds each texture and sampler by itself";
/// What a port does instead of a descriptor heap.
pub(crate) const RESOURCE_IN_BUFFER_PORT: &str = "a port does this instead: bind the textures as an `array<texture2d<float>, N>` argument (or argument buffer member) of a size known when compiling";

/// The function attributes that make a function a stage WebGPU lacks.
const STAGES: &[(&str, &str, &str)] = &[
    ("mesh", MESH, MESH_PORT),
    ("object", MESH, MESH_PORT),
    (
        "intersection",
        "WebGPU has no ray tracing",
        "trace rays in a kernel of your own (for example over a bounding-volume hierarchy in buffers)",
    ),
];

/// The refusal of function `f` when an attribute makes it a mesh, object
/// or intersection function; `None` otherwise.
pub fn stage_refusal(f: &ast::FunctionDecl) -> Option<Error> {
    f.attributes.iter().find_map(|a| {
        let (stage, feature, port) = STAGES.iter().find(|(s, _, _)| *s == a.name)?;
        Some(
            Error::coded(
                Code::NoWebGpuEquivalent,
                a.span,
                format!(
                    "`{}` is a `[[{stage}]]` function, which has no WebGPU equivalent: {feature}",
                    f.name.name
                ),
            )
            .note(format!("a port does this instead: {port}")),
        )
    })
}
