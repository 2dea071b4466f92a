//! The opt-in WGSL dump: with `MSL2WGSL_DUMP_WGSL=DIR` set, every module the
//! library emits is written to `DIR/<hash>.wgsl`, beside `DIR/<hash>.json`
//! saying how to make a pipeline of each entry point ([`Sidecar`]).
//!
//! The dump lets outside checkers see exactly what the translator produced
//! over a whole test run: `web/tint-check.mjs` (Tint, through Dawn) and
//! `tests/dumped_pipelines.rs` (the wgpu driver) make every pipeline.
//! A module translated for wgpu's dialect is also written in the WebGPU
//! dialect when it validates as such (`loweredForWgpu` in its sidecar): most
//! GPU tests translate for wgpu, and browsers should take their code too.
//! The hash covers both files, so identical modules are written once; each
//! file is written to a temporary name and renamed, so parallel tests never
//! expose a half-written file.

use super::Target;
use crate::reflect::{FunctionReflection, Stage};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The variable naming the dump folder.
pub const DUMP_VAR: &str = "MSL2WGSL_DUMP_WGSL";

/// What a checker needs to make the pipelines of one dumped module.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sidecar {
    /// `"webgpu"` or `"wgpu"`: the dialect (only `webgpu` modules are
    /// meant for browsers).
    pub target: String,
    /// True for the WebGPU text of a module lowered for wgpu (`target` is
    /// then `webgpu`): the same code a WebGPU translation would mostly give.
    #[serde(default)]
    pub lowered_for_wgpu: bool,
    /// True if the translator warned that the module exceeds what WebGPU
    /// guarantees (workgroup or thread memory; `src/library/limits.rs`):
    /// devices may refuse it, and drivers may take very long to compile it.
    #[serde(default)]
    pub over_limits: bool,
    /// True if a kernel waits at a barrier in control flow Tint takes as
    /// non-uniform (the translator warned: W0418): browsers refuse the
    /// module, as the warning said.
    #[serde(default)]
    pub nonuniform_barrier: bool,
    /// WebGPU features the module needs (`shader-f16`, ...).
    pub features: Vec<String>,
    /// One per entry point of the module.
    pub entry_points: Vec<EntryPipeline>,
}

/// How to make a pipeline of one entry point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryPipeline {
    /// The MSL name.
    pub name: String,
    /// The WGSL entry point.
    pub wgsl_entry_point: String,
    /// `compute`, `vertex` or `fragment`.
    pub stage: String,
    /// Pipeline-overridable constants that have no default, by `@id`, with
    /// a value (0) so the pipeline can be made.
    pub constants: BTreeMap<String, f64>,
    /// Vertex stages: the `[[stage_in]]` buffer (at most one), laid out as
    /// WebGPU wants it (4-byte aligned attributes).
    pub vertex_buffers: Vec<VertexBufferLayout>,
    /// Fragment stages: one colour target per attachment index (`None` for
    /// a gap).
    pub targets: Vec<Option<ColorTarget>>,
    /// Fragment stages: a WGSL module with one `@vertex` entry point
    /// `stub_vertex` writing every `@location` the fragment reads.
    pub stub_vertex: Option<String>,
}

/// A `GPUVertexBufferLayout`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VertexBufferLayout {
    /// Bytes per vertex.
    pub array_stride: u32,
    /// The attributes.
    pub attributes: Vec<VertexAttributeLayout>,
}

/// A `GPUVertexAttribute`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VertexAttributeLayout {
    /// WebGPU's vertex format name.
    pub format: String,
    /// Byte offset in the vertex.
    pub offset: u32,
    /// `@location`.
    pub shader_location: u32,
}

/// A `GPUColorTargetState`, reduced to what the output type decides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ColorTarget {
    /// A texture format whose kind and component count suit the output.
    pub format: String,
    /// True for dual-source blending (`@blend_src`): blend with `src1`.
    pub dual_source: bool,
}

/// Writes `wgsl` and its sidecar if [`DUMP_VAR`] is set; failures are
/// reported on stderr, never to the caller (the dump is a test aid).
pub fn maybe_dump(
    wgsl: &str,
    module: &naga::Module,
    functions: &[FunctionReflection],
    target: Target,
) {
    let Some(dir) = std::env::var_os(DUMP_VAR) else {
        return;
    };
    write_dump(Path::new(&dir), wgsl, sidecar(module, functions, target));
    // Most GPU tests run wgpu's dialect; where the same module is also valid
    // WebGPU (no wgpu-only extension), its WebGPU text is checked too.
    if target == Target::Wgpu {
        if let Ok((text, _)) = super::emit::wgsl(module, Target::WebGpu) {
            let mut webgpu = sidecar(module, functions, Target::WebGpu);
            webgpu.lowered_for_wgpu = true;
            write_dump(Path::new(&dir), &text, webgpu);
        }
    }
}

/// Writes one module and its sidecar, named by their hash.
fn write_dump(dir: &Path, wgsl: &str, sidecar: Sidecar) {
    let json = serde_json::to_string_pretty(&sidecar).unwrap_or_default();
    let name = format!("{:016x}", fnv1a(&[wgsl.as_bytes(), json.as_bytes()]));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| write_atomically(dir, &format!("{name}.json"), &json))
        .and_then(|()| write_atomically(dir, &format!("{name}.wgsl"), wgsl));
    if let Err(e) = written {
        eprintln!("msl2wgsl: cannot dump WGSL to '{}': {e}", dir.display());
    }
}

/// FNV-1a, 64 bits, over the parts in order: stable across runs and
/// versions, unlike `DefaultHasher`.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in parts.iter().flat_map(|p| p.iter()) {
        h = (h ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Writes `DIR/name` through a temporary file unique to this thread, then
/// renames it: an existing file (same hash, same contents) is replaced
/// whole.
fn write_atomically(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    let path = dir.join(name);
    if path.exists() {
        return Ok(());
    }
    let temp = dir.join(format!(
        ".{name}.{}.{:?}.tmp",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&temp, text)?;
    std::fs::rename(&temp, &path)
}

/// The sidecar of a module whose entry points are `functions` (the same
/// order as `module.entry_points`).
fn sidecar(module: &naga::Module, functions: &[FunctionReflection], target: Target) -> Sidecar {
    let mut features: Vec<String> = functions
        .iter()
        .flat_map(|f| f.required_features.iter().cloned())
        .collect();
    features.sort();
    features.dedup();
    let entry_points = functions
        .iter()
        .zip(&module.entry_points)
        .map(|(f, e)| entry_pipeline(module, e, f))
        .collect();
    Sidecar {
        target: match target {
            Target::WebGpu => "webgpu",
            Target::Wgpu => "wgpu",
        }
        .to_string(),
        lowered_for_wgpu: false,
        over_limits: !super::limits::check(module).is_empty(),
        nonuniform_barrier: crate::lower::passes::simd_uniformity::any_nonuniform_barrier(module),
        features,
        entry_points,
    }
}

fn entry_pipeline(
    module: &naga::Module,
    entry: &naga::EntryPoint,
    f: &FunctionReflection,
) -> EntryPipeline {
    let constants = f
        .function_constants
        .iter()
        .filter(|c| c.required)
        // A vector constant is one override per component, a 64-bit one
        // one per word.
        .flat_map(|c| match c.component_ids.as_slice() {
            [] => std::iter::once(c.index).chain(c.high_id).collect(),
            ids => ids.to_vec(),
        })
        .map(|id| (id.to_string(), 0.0))
        .collect();
    EntryPipeline {
        name: f.name.clone(),
        wgsl_entry_point: f.wgsl_entry_point.clone(),
        // The WGSL stage: a vertex function run as a compute dispatch
        // (`vertexDispatch`, rasterization disabled) is a compute entry point.
        stage: match f.stage {
            Stage::Kernel => "compute",
            Stage::Vertex if f.vertex_dispatch.is_some() => "compute",
            Stage::Vertex => "vertex",
            Stage::Fragment => "fragment",
        }
        .to_string(),
        constants,
        vertex_buffers: vertex_buffers(f),
        targets: color_targets(f),
        stub_vertex: (f.stage == Stage::Fragment)
            .then(|| super::stub_vertex::wgsl(module, entry))
            .flatten(),
    }
}

/// The `[[stage_in]]` buffer: the reflection's attributes in order, each at
/// the next multiple of 4 bytes (what `msl2wgsl render` repacks to).
fn vertex_buffers(f: &FunctionReflection) -> Vec<VertexBufferLayout> {
    if f.vertex_attributes.is_empty() {
        return Vec::new();
    }
    let mut offset = 0;
    let mut attributes = Vec::new();
    for a in &f.vertex_attributes {
        attributes.push(VertexAttributeLayout {
            format: a.format.clone(),
            offset,
            shader_location: a.index,
        });
        offset += vertex_format_size(&a.format).next_multiple_of(4);
    }
    vec![VertexBufferLayout {
        array_stride: offset.max(4),
        attributes,
    }]
}

/// Bytes of a vertex format named as WebGPU names it.
fn vertex_format_size(format: &str) -> u32 {
    if format == "unorm10-10-10-2" || format == "unorm8x4-bgra" {
        return 4;
    }
    let digits: String = format.chars().filter(|c| c.is_ascii_digit()).collect();
    let (bits, count) = match format.split_once('x') {
        Some((base, n)) => (
            base.trim_start_matches(|c: char| c.is_ascii_alphabetic()),
            n.parse().unwrap_or(1),
        ),
        None => (digits.as_str(), 1),
    };
    bits.parse::<u32>().unwrap_or(32) / 8 * count
}

/// One colour target per `[[color(m)]]`: float outputs get a blendable float
/// format, integer ones an integer format, with as many components as the
/// output has when that is 1, 2 or 4 (else 1: a shader may write more
/// components than the target keeps, not fewer).
fn color_targets(f: &FunctionReflection) -> Vec<Option<ColorTarget>> {
    let count = f
        .color_outputs
        .iter()
        .map(|c| c.index + 1)
        .max()
        .unwrap_or(0);
    let mut targets = vec![None; count as usize];
    for c in &f.color_outputs {
        let ty = c.data_type.as_str();
        let components = ty.chars().last().and_then(|d| d.to_digit(10)).unwrap_or(1);
        let channels = match components {
            2 => "rg",
            4 => "rgba",
            _ => "r",
        };
        let kind = if ty.starts_with("int") || ty.starts_with("short") || ty.starts_with("char") {
            "32sint"
        } else if ty.starts_with('u') {
            "32uint"
        } else {
            "16float"
        };
        let target = &mut targets[c.index as usize];
        let dual_source = c.blend_src.is_some() || target.is_some();
        *target = Some(ColorTarget {
            format: format!("{channels}{kind}"),
            dual_source,
        });
    }
    targets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_format_sizes() {
        assert_eq!(vertex_format_size("float32x3"), 12);
        assert_eq!(vertex_format_size("uint8x2"), 2);
        assert_eq!(vertex_format_size("float16"), 2);
        assert_eq!(vertex_format_size("sint32"), 4);
        assert_eq!(vertex_format_size("unorm8x4-bgra"), 4);
    }

    #[test]
    fn hash_is_stable() {
        assert_eq!(fnv1a(&[b"a"]), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(&[b"a", b"b"]), fnv1a(&[b"ab"]));
    }
}
