//! The `[[stage_in]]` of a vertex function as a wgpu vertex buffer.
//!
//! The caller gives the vertices as a Metal host would with a vertex
//! descriptor that packs the `[[attribute(n)]]` members tightly, in
//! attribute order (the reflection's `offset`s and `vertex_stride`). WebGPU
//! wants every attribute at a multiple of 4 bytes and a stride that is a
//! multiple of 4, which tight packing breaks (`uchar2` then `float`), so the
//! runner copies the vertices into such a layout before uploading them.

use super::interface::Interface;
use super::RunError;
use crate::reflect::{FunctionReflection, VertexAttribute};
use std::collections::BTreeMap;
use wgpu::VertexFormat as V;

/// Vertex formats by the names wgpu's serde gives them, with the kind of
/// value the shader receives.
const FORMATS: &[(&str, V)] = &[
    ("uint8", V::Uint8),
    ("uint8x2", V::Uint8x2),
    ("uint8x4", V::Uint8x4),
    ("sint8", V::Sint8),
    ("sint8x2", V::Sint8x2),
    ("sint8x4", V::Sint8x4),
    ("unorm8", V::Unorm8),
    ("unorm8x2", V::Unorm8x2),
    ("unorm8x4", V::Unorm8x4),
    ("snorm8", V::Snorm8),
    ("snorm8x2", V::Snorm8x2),
    ("snorm8x4", V::Snorm8x4),
    ("uint16", V::Uint16),
    ("uint16x2", V::Uint16x2),
    ("uint16x4", V::Uint16x4),
    ("sint16", V::Sint16),
    ("sint16x2", V::Sint16x2),
    ("sint16x4", V::Sint16x4),
    ("unorm16", V::Unorm16),
    ("unorm16x2", V::Unorm16x2),
    ("unorm16x4", V::Unorm16x4),
    ("snorm16", V::Snorm16),
    ("snorm16x2", V::Snorm16x2),
    ("snorm16x4", V::Snorm16x4),
    ("float16", V::Float16),
    ("float16x2", V::Float16x2),
    ("float16x4", V::Float16x4),
    ("float32", V::Float32),
    ("float32x2", V::Float32x2),
    ("float32x3", V::Float32x3),
    ("float32x4", V::Float32x4),
    ("uint32", V::Uint32),
    ("uint32x2", V::Uint32x2),
    ("uint32x3", V::Uint32x3),
    ("uint32x4", V::Uint32x4),
    ("sint32", V::Sint32),
    ("sint32x2", V::Sint32x2),
    ("sint32x3", V::Sint32x3),
    ("sint32x4", V::Sint32x4),
    ("unorm10-10-10-2", V::Unorm10_10_10_2),
    ("unorm8x4-bgra", V::Unorm8x4Bgra),
];

/// The vertex format wgpu names `name` (`float32x3`, `uint8x4`, ...).
pub fn vertex_format(name: &str) -> Option<wgpu::VertexFormat> {
    FORMATS.iter().find(|f| f.0 == name).map(|f| f.1)
}

/// The kind of value a format gives the shader: integers stay integers,
/// everything else (normalised, float) arrives as floating point.
fn format_kind(name: &str) -> naga::ScalarKind {
    if name.starts_with("uint") {
        naga::ScalarKind::Uint
    } else if name.starts_with("sint") {
        naga::ScalarKind::Sint
    } else {
        naga::ScalarKind::Float
    }
}

/// The vertex buffer of a draw: its layout and its bytes, re-laid out.
#[derive(Debug)]
pub(crate) struct VertexInput {
    /// Bytes per vertex in `data` (a multiple of 4).
    pub stride: u64,
    /// One per `[[attribute(n)]]`, at `@location(n)`.
    pub attributes: Vec<wgpu::VertexAttribute>,
    /// The vertices (at least 4 bytes, as wgpu buffers need).
    pub data: Vec<u8>,
}

/// One attribute, resolved: where it is in the packed vertex, how many of
/// its bytes are there, and where it goes in the uploaded one.
struct Placed<'a> {
    attribute: &'a VertexAttribute,
    format: wgpu::VertexFormat,
    /// Bytes available in the packed vertex, up to the next attribute.
    packed_len: u64,
    /// Its offset in the uploaded vertex.
    offset: u64,
}

/// The vertex buffer for `function`'s `[[stage_in]]`, from `buffers[0]`,
/// with `vertex_count` vertices; `None` without `[[stage_in]]`.
pub(crate) fn plan(
    function: &FunctionReflection,
    interface: &Interface,
    buffers: &BTreeMap<u32, Vec<u8>>,
    vertex_count: u32,
) -> Result<Option<VertexInput>, RunError> {
    check_locations(function, interface)?;
    if function.vertex_attributes.is_empty() {
        return Ok(None);
    }
    let placed = place(function)?;
    let stride = u64::from(function.vertex_stride);
    let Some(bytes) = buffers.get(&0) else {
        return Err(RunError::InvalidRender(format!(
            "the [[stage_in]] of `{}` reads its vertices from vertex buffer 0, which was not \
             given",
            function.name
        )));
    };
    let needed = stride * u64::from(vertex_count);
    if (bytes.len() as u64) < needed {
        return Err(RunError::InvalidRender(format!(
            "vertex buffer 0 has {} bytes, but {vertex_count} vertices of {stride} bytes \
             need {needed}",
            bytes.len()
        )));
    }
    let gpu_stride = placed
        .iter()
        .map(|p| p.offset + p.format.size())
        .max()
        .unwrap_or(0)
        .next_multiple_of(4)
        .max(4);
    let data = repack(&placed, bytes, stride, gpu_stride, vertex_count);
    let attributes = wgpu_attributes(&placed);
    Ok(Some(VertexInput {
        stride: gpu_stride,
        attributes,
        data,
    }))
}

/// The vertex buffer layout for `function`'s `[[stage_in]]` when the
/// host's tightly packed vertices can be bound as they are (each attribute
/// at a multiple of 4 bytes, no 3-component 8- or 16-bit format, a stride
/// that is a multiple of 4); `None` without `[[stage_in]]`. The pipeline
/// helpers bind the caller's own buffer, so they cannot repack it as
/// [`plan`] does.
pub(crate) fn direct_layout(
    function: &FunctionReflection,
    interface: &Interface,
) -> Result<Option<(u64, Vec<wgpu::VertexAttribute>)>, RunError> {
    check_locations(function, interface)?;
    if function.vertex_attributes.is_empty() {
        return Ok(None);
    }
    let placed = place(function)?;
    let stride = u64::from(function.vertex_stride);
    let direct = stride % 4 == 0
        && placed
            .iter()
            .all(|p| p.offset == u64::from(p.attribute.offset) && p.packed_len == p.format.size());
    if !direct {
        return Err(RunError::Unsupported(format!(
            "a [[stage_in]] of `{}` whose packed vertex ({stride} bytes) does not meet \
             WebGPU's 4-byte alignment, bound from the caller's buffer",
            function.name
        )));
    }
    let attributes = wgpu_attributes(&placed);
    Ok(Some((stride, attributes)))
}

/// The wgpu attribute of each placed attribute, at `@location(n)` for
/// `[[attribute(n)]]`.
fn wgpu_attributes(placed: &[Placed<'_>]) -> Vec<wgpu::VertexAttribute> {
    placed
        .iter()
        .map(|p| wgpu::VertexAttribute {
            format: p.format,
            offset: p.offset,
            shader_location: p.attribute.index,
        })
        .collect()
}

/// Every `@location` the WGSL vertex entry point reads needs an attribute
/// of that index whose format gives the input's kind of value.
fn check_locations(function: &FunctionReflection, interface: &Interface) -> Result<(), RunError> {
    for input in &interface.inputs {
        let attribute = function
            .vertex_attributes
            .iter()
            .find(|a| a.index == input.location);
        let Some(attribute) = attribute else {
            return Err(RunError::Shader(format!(
                "the WGSL of `{}` reads @location({}), which no [[attribute]] of the \
                 reflection supplies",
                function.name, input.location
            )));
        };
        if format_kind(&attribute.format) != input.kind {
            return Err(RunError::Shader(format!(
                "attribute `{}` [[attribute({})]] has format {}, which cannot feed the \
                 WGSL input's {:?} values",
                attribute.name, attribute.index, attribute.format, input.kind
            )));
        }
    }
    Ok(())
}

/// Resolves the formats and gives each attribute its place in the
/// uploaded vertex: in offset order, each at the next multiple of 4.
fn place(function: &FunctionReflection) -> Result<Vec<Placed<'_>>, RunError> {
    let mut attributes: Vec<&VertexAttribute> = function.vertex_attributes.iter().collect();
    attributes.sort_by_key(|a| (a.offset, a.index));
    let stride = u64::from(function.vertex_stride);
    let mut placed = Vec::with_capacity(attributes.len());
    let mut cursor = 0u64;
    for (i, attribute) in attributes.iter().enumerate() {
        let format = vertex_format(&attribute.format).ok_or_else(|| {
            RunError::Shader(format!(
                "attribute `{}` has vertex format `{}`, which wgpu does not have",
                attribute.name, attribute.format
            ))
        })?;
        let start = u64::from(attribute.offset);
        let end = attributes
            .get(i + 1)
            .map_or(stride, |next| u64::from(next.offset));
        if start >= end || end > stride {
            return Err(RunError::Shader(format!(
                "attribute `{}` at offset {start} does not fit in the {stride}-byte vertex \
                 before the next attribute",
                attribute.name
            )));
        }
        let offset = cursor.next_multiple_of(4);
        cursor = offset + format.size();
        placed.push(Placed {
            attribute,
            format,
            packed_len: (end - start).min(format.size()),
            offset,
        });
    }
    Ok(placed)
}

/// Copies `count` packed vertices of `stride` bytes into vertices of
/// `gpu_stride` bytes laid out as `placed` says. An attribute whose format
/// is wider than its packed bytes (WebGPU has no 3-component 8- and 16-bit
/// formats, so `uchar3` or `half3` are read as 4 components) gets the
/// missing bytes as zeros.
fn repack(
    placed: &[Placed<'_>],
    packed: &[u8],
    stride: u64,
    gpu_stride: u64,
    count: u32,
) -> Vec<u8> {
    let mut out = vec![0u8; (gpu_stride * u64::from(count)).max(4) as usize];
    for v in 0..u64::from(count) {
        for p in placed {
            let from = (v * stride + u64::from(p.attribute.offset)) as usize;
            let to = (v * gpu_stride + p.offset) as usize;
            let len = p.packed_len as usize;
            out[to..to + len].copy_from_slice(&packed[from..from + len]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reflect::Stage;

    fn attribute(name: &str, index: u32, format: &str, offset: u32) -> VertexAttribute {
        VertexAttribute {
            name: name.into(),
            index,
            data_type: String::new(),
            format: format.into(),
            offset,
        }
    }

    fn vertex(attributes: Vec<VertexAttribute>, stride: u32) -> FunctionReflection {
        FunctionReflection {
            name: "v".into(),
            wgsl_entry_point: "v".into(),
            stage: Stage::Vertex,
            workgroup_size: None,
            arguments: Vec::new(),
            builtins: Vec::new(),
            dispatch_binding: None,
            uses_barriers: false,
            required_features: Vec::new(),
            constexpr_samplers: Vec::new(),
            vertex_attributes: attributes,
            vertex_stride: stride,
            varyings: Vec::new(),
            color_outputs: Vec::new(),
            function_constants: Vec::new(),
            stitchable: None,
        }
    }

    fn no_inputs() -> Interface {
        Interface {
            workgroup_size: [0; 3],
            bindings: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            output_builtins: Vec::new(),
        }
    }

    #[test]
    fn tightly_packed_vertices_are_realigned() {
        // uchar2 at 0, float at 2, uchar3 (read as uint8x4) at 6: 9 bytes.
        let f = vertex(
            vec![
                attribute("a", 0, "uint8x2", 0),
                attribute("b", 1, "float32", 2),
                attribute("c", 2, "uint8x4", 6),
            ],
            9,
        );
        let packed: Vec<u8> = (0..18).collect();
        let buffers = BTreeMap::from([(0, packed)]);
        let input = plan(&f, &no_inputs(), &buffers, 2).unwrap().unwrap();
        assert_eq!(input.stride, 12);
        let offsets: Vec<_> = input.attributes.iter().map(|a| a.offset).collect();
        assert_eq!(offsets, [0, 4, 8]);
        assert_eq!(
            input.data,
            [0, 1, 0, 0, 2, 3, 4, 5, 6, 7, 8, 0, 9, 10, 0, 0, 11, 12, 13, 14, 15, 16, 17, 0]
        );
    }

    #[test]
    fn bad_inputs_are_errors() {
        let f = vertex(vec![attribute("p", 0, "float32x2", 0)], 8);
        let short = BTreeMap::from([(0, vec![0u8; 20])]);
        let err = plan(&f, &no_inputs(), &short, 3).unwrap_err();
        assert!(err.to_string().contains("need 24"), "{err}");
        let err = plan(&f, &no_inputs(), &BTreeMap::new(), 3).unwrap_err();
        assert!(matches!(err, RunError::InvalidRender(_)));
        let unknown = vertex(vec![attribute("p", 0, "float32x5", 0)], 8);
        assert!(plan(&unknown, &no_inputs(), &short, 1).is_err());
        let overlapping = vertex(vec![attribute("p", 0, "float32", 8)], 8);
        assert!(plan(&overlapping, &no_inputs(), &short, 1).is_err());
        let mut reads_uint = no_inputs();
        reads_uint.inputs.push(super::super::interface::StageIo {
            location: 0,
            blend_src: None,
            kind: naga::ScalarKind::Uint,
            width: 4,
        });
        assert!(plan(&f, &reads_uint, &short, 1).is_err());
        reads_uint.inputs[0].location = 1;
        assert!(plan(&f, &reads_uint, &short, 1).is_err());
        assert_eq!(vertex_format("unorm8x4-bgra"), Some(V::Unorm8x4Bgra));
    }
}
