//! The `[[stage_in]]` of a vertex function as wgpu vertex buffers.
//!
//! The caller gives the vertices as a Metal host would, in the buffers its
//! vertex descriptor names ([`VertexDescriptor`]); without one, in buffer
//! 0 with the `[[attribute(n)]]` members packed tightly, in attribute
//! order (the reflection's `offset`s and `vertex_stride`). WebGPU
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

/// Where a Metal host's vertex descriptor (`MTLVertexDescriptor`) puts
/// the `[[attribute(n)]]` members of a vertex function's `[[stage_in]]`:
/// each attribute in one of the vertex buffers, by Metal buffer index
/// (the vertex function's argument table, which its `[[buffer(n)]]`
/// arguments share), at a byte offset, and each buffer's stride.
///
/// [`VertexDescriptor::packed`] makes the usual ones; without one the
/// runner reads every attribute from buffer 0, tightly packed in attribute
/// order (the reflection's `offset`s and `vertexStride`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VertexDescriptor {
    /// By `[[attribute(n)]]` index: the buffer and offset it is read from.
    pub attributes: BTreeMap<u32, VertexAttributeDescriptor>,
    /// By Metal buffer index: bytes from one vertex to the next.
    pub strides: BTreeMap<u32, u64>,
}

/// One attribute of a [`VertexDescriptor`] (`MTLVertexAttributeDescriptor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexAttributeDescriptor {
    /// The Metal buffer index it is read from (`bufferIndex`).
    pub buffer_index: u32,
    /// Its byte offset in a vertex of that buffer (`offset`).
    pub offset: u64,
}

impl VertexDescriptor {
    /// The descriptor that reads `[[attribute(n)]]` from buffer
    /// `buffer_of[n]` (buffer 0 for attributes not listed), the attributes
    /// of each buffer tightly packed in attribute order, each taking the
    /// bytes of its MSL type (`float3` 12, `uchar3` 3): Xcode's templates
    /// lay positions and texture coordinates out so, one per buffer.
    pub fn packed(
        function: &FunctionReflection,
        buffer_of: &BTreeMap<u32, u32>,
    ) -> Result<VertexDescriptor, RunError> {
        let mut descriptor = VertexDescriptor::default();
        for (attribute, len) in packed_lengths(function)? {
            let buffer_index = buffer_of.get(&attribute.index).copied().unwrap_or(0);
            let stride = descriptor.strides.entry(buffer_index).or_insert(0);
            descriptor.attributes.insert(
                attribute.index,
                VertexAttributeDescriptor {
                    buffer_index,
                    offset: *stride,
                },
            );
            *stride += len;
        }
        Ok(descriptor)
    }
}

/// One vertex buffer of a draw: its layout and its bytes, re-laid out.
#[derive(Debug)]
pub(crate) struct VertexInput {
    /// Bytes per vertex in `data` (a multiple of 4).
    pub stride: u64,
    /// One per `[[attribute(n)]]` it holds, at `@location(n)`.
    pub attributes: Vec<wgpu::VertexAttribute>,
    /// The vertices (at least 4 bytes, as wgpu buffers need).
    pub data: Vec<u8>,
}

/// One attribute, resolved: where it is in the host's vertex, how many of
/// its bytes are there, and where it goes in the uploaded one.
struct Placed<'a> {
    attribute: &'a VertexAttribute,
    format: wgpu::VertexFormat,
    /// Its offset in the host's vertex.
    host_offset: u64,
    /// Bytes available in the host's vertex (its MSL type's).
    packed_len: u64,
    /// Its offset in the uploaded vertex.
    offset: u64,
}

/// The attributes one vertex buffer holds, placed.
struct BufferPlan<'a> {
    buffer_index: u32,
    /// Bytes per vertex as the host lays them out.
    host_stride: u64,
    placed: Vec<Placed<'a>>,
}

impl BufferPlan<'_> {
    /// Bytes per vertex in the uploaded buffer.
    fn gpu_stride(&self) -> u64 {
        self.placed
            .iter()
            .map(|p| p.offset + p.format.size())
            .max()
            .unwrap_or(0)
            .next_multiple_of(4)
            .max(4)
    }
}

/// The vertex buffers for `function`'s `[[stage_in]]`, laid out as
/// `descriptor` says (or tightly packed in buffer 0), from `buffers`, with
/// `vertex_count` vertices; empty without `[[stage_in]]`.
pub(crate) fn plan(
    function: &FunctionReflection,
    interface: &Interface,
    descriptor: Option<&VertexDescriptor>,
    buffers: &BTreeMap<u32, Vec<u8>>,
    vertex_count: u32,
) -> Result<Vec<VertexInput>, RunError> {
    check_locations(function, interface)?;
    if function.vertex_attributes.is_empty() {
        return Ok(Vec::new());
    }
    let mut inputs = Vec::new();
    for buffer in place(function, descriptor)? {
        let index = buffer.buffer_index;
        let Some(bytes) = buffers.get(&index) else {
            let names: Vec<String> = buffer
                .placed
                .iter()
                .map(|p| {
                    format!(
                        "`{}` [[attribute({})]]",
                        p.attribute.name, p.attribute.index
                    )
                })
                .collect();
            return Err(RunError::InvalidRender(format!(
                "the [[stage_in]] of `{}` reads {} from vertex buffer {index}, which was not \
                 given",
                function.name,
                names.join(", ")
            )));
        };
        let stride = buffer.host_stride;
        let needed = stride * u64::from(vertex_count);
        if (bytes.len() as u64) < needed {
            return Err(RunError::InvalidRender(format!(
                "vertex buffer {index} has {} bytes, but {vertex_count} vertices of {stride} \
                 bytes need {needed}",
                bytes.len()
            )));
        }
        let gpu_stride = buffer.gpu_stride();
        inputs.push(VertexInput {
            stride: gpu_stride,
            attributes: wgpu_attributes(&buffer.placed),
            data: repack(&buffer.placed, bytes, stride, gpu_stride, vertex_count),
        });
    }
    Ok(inputs)
}

/// One vertex buffer layout of a pipeline whose stage-in is bound from
/// the caller's own buffers: its Metal buffer index, stride and attributes.
pub(crate) type DirectLayout = (u32, u64, Vec<wgpu::VertexAttribute>);

/// The vertex buffer layouts for `function`'s `[[stage_in]]` laid out as
/// `descriptor` says (or tightly packed in buffer 0) when the host's
/// vertices can be bound as they are (each attribute at a multiple of 4
/// bytes, no 3-component 8- or 16-bit format, strides that are multiples
/// of 4); empty without `[[stage_in]]`. The pipeline helpers bind the
/// caller's own buffers, so they cannot repack them as [`plan`] does.
pub(crate) fn direct_layout(
    function: &FunctionReflection,
    interface: &Interface,
    descriptor: Option<&VertexDescriptor>,
) -> Result<Vec<DirectLayout>, RunError> {
    check_locations(function, interface)?;
    if function.vertex_attributes.is_empty() {
        return Ok(Vec::new());
    }
    let mut layouts = Vec::new();
    for buffer in place(function, descriptor)? {
        let stride = buffer.host_stride;
        let direct = stride % 4 == 0
            && buffer
                .placed
                .iter()
                .all(|p| p.offset == p.host_offset && p.packed_len == p.format.size());
        if !direct {
            return Err(RunError::Unsupported(format!(
                "a [[stage_in]] of `{}` whose vertex in buffer {} ({stride} bytes) does not \
                 meet WebGPU's 4-byte alignment, bound from the caller's buffer",
                function.name, buffer.buffer_index
            )));
        }
        let attributes = wgpu_attributes(&buffer.placed);
        layouts.push((buffer.buffer_index, stride, attributes));
    }
    Ok(layouts)
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

/// Each attribute in offset order with the bytes its MSL type takes in
/// the reflection's tightly packed vertex (up to the next attribute).
fn packed_lengths(function: &FunctionReflection) -> Result<Vec<(&VertexAttribute, u64)>, RunError> {
    let mut attributes: Vec<&VertexAttribute> = function.vertex_attributes.iter().collect();
    attributes.sort_by_key(|a| (a.offset, a.index));
    let stride = u64::from(function.vertex_stride);
    let mut out = Vec::with_capacity(attributes.len());
    for (i, attribute) in attributes.iter().enumerate() {
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
        out.push((*attribute, end - start));
    }
    Ok(out)
}

/// Resolves the formats and groups the attributes by the buffer that
/// holds them (in buffer index order), giving each its place in the
/// uploaded vertex: in host offset order, each at the next multiple of 4.
fn place<'f>(
    function: &'f FunctionReflection,
    descriptor: Option<&VertexDescriptor>,
) -> Result<Vec<BufferPlan<'f>>, RunError> {
    let packed;
    let descriptor = match descriptor {
        Some(d) => d,
        None => {
            packed = VertexDescriptor::packed(function, &BTreeMap::new())?;
            &packed
        }
    };
    let mut buffers: BTreeMap<u32, Vec<(&VertexAttribute, u64, u64)>> = BTreeMap::new();
    for (attribute, len) in packed_lengths(function)? {
        let Some(at) = descriptor.attributes.get(&attribute.index) else {
            return Err(RunError::InvalidRender(format!(
                "the vertex descriptor places no [[attribute({})]] (`{}` of `{}`)",
                attribute.index, attribute.name, function.name
            )));
        };
        let entry = buffers.entry(at.buffer_index).or_default();
        entry.push((attribute, at.offset, len));
    }
    let mut plans = Vec::with_capacity(buffers.len());
    for (buffer_index, mut attributes) in buffers {
        let Some(&host_stride) = descriptor.strides.get(&buffer_index) else {
            return Err(RunError::InvalidRender(format!(
                "the vertex descriptor gives vertex buffer {buffer_index} no stride"
            )));
        };
        attributes.sort_by_key(|&(a, offset, _)| (offset, a.index));
        let mut placed = Vec::with_capacity(attributes.len());
        let mut cursor = 0u64;
        for (attribute, host_offset, len) in attributes {
            let format = vertex_format(&attribute.format).ok_or_else(|| {
                RunError::Shader(format!(
                    "attribute `{}` has vertex format `{}`, which wgpu does not have",
                    attribute.name, attribute.format
                ))
            })?;
            if host_offset + len > host_stride {
                return Err(RunError::InvalidRender(format!(
                    "attribute `{}` ({len} bytes at offset {host_offset}) does not fit in \
                     the {host_stride}-byte vertex of buffer {buffer_index}",
                    attribute.name
                )));
            }
            let offset = cursor.next_multiple_of(4);
            cursor = offset + format.size();
            placed.push(Placed {
                attribute,
                format,
                host_offset,
                packed_len: len.min(format.size()),
                offset,
            });
        }
        plans.push(BufferPlan {
            buffer_index,
            host_stride,
            placed,
        });
    }
    Ok(plans)
}

/// Copies `count` host vertices of `stride` bytes into vertices of
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
            let from = (v * stride + p.host_offset) as usize;
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
            required_limits: Default::default(),
            simd_groups: None,
            constexpr_samplers: Vec::new(),
            vertex_attributes: attributes,
            vertex_stride: stride,
            varyings: Vec::new(),
            color_outputs: Vec::new(),
            function_constants: Vec::new(),
            stitchable: None,
            point_sprite: None,
            stage_input: None,
            draw_parameters_binding: None,
            vertex_dispatch: None,
        }
    }

    fn no_inputs() -> Interface {
        Interface {
            workgroup_size: [0; 3],
            bindings: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            output_builtins: Vec::new(),
            overrides: Vec::new(),
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
        let input = plan(&f, &no_inputs(), None, &buffers, 2).unwrap().remove(0);
        assert_eq!(input.stride, 12);
        let offsets: Vec<_> = input.attributes.iter().map(|a| a.offset).collect();
        assert_eq!(offsets, [0, 4, 8]);
        assert_eq!(
            input.data,
            [0, 1, 0, 0, 2, 3, 4, 5, 6, 7, 8, 0, 9, 10, 0, 0, 11, 12, 13, 14, 15, 16, 17, 0]
        );
    }

    #[test]
    fn a_descriptor_spreads_the_attributes_over_buffers() {
        // float3 and uchar2 in buffer 0, float2 in buffer 1 (packed: 22 bytes).
        let f = vertex(
            vec![
                attribute("p", 0, "float32x3", 0),
                attribute("t", 1, "float32x2", 12),
                attribute("c", 2, "uint8x2", 20),
            ],
            22,
        );
        let d = VertexDescriptor::packed(&f, &BTreeMap::from([(1, 1)])).unwrap();
        assert_eq!(d.strides, BTreeMap::from([(0, 14), (1, 8)]));
        let at = |a: u32| (d.attributes[&a].buffer_index, d.attributes[&a].offset);
        assert_eq!([at(0), at(1), at(2)], [(0, 0), (1, 0), (0, 12)]);
        let buffers = BTreeMap::from([(0, (0..28).collect()), (1, (100..116).collect())]);
        let inputs = plan(&f, &no_inputs(), Some(&d), &buffers, 2).unwrap();
        assert_eq!(inputs.len(), 2);
        // Buffer 0: the uchar2 moves from 12 to 12 (already aligned) of 16.
        assert_eq!(inputs[0].stride, 16);
        let mut want: Vec<u8> = (0..14).chain([0, 0]).collect();
        want.extend((14..28).chain([0, 0]));
        assert_eq!(inputs[0].data, want);
        assert_eq!(inputs[1].stride, 8);
        assert_eq!(inputs[1].data, (100..116).collect::<Vec<u8>>());
        let locations: Vec<_> = inputs[1]
            .attributes
            .iter()
            .map(|a| a.shader_location)
            .collect();
        assert_eq!(locations, [1]);
        // A buffer the descriptor names must be given.
        let err = plan(
            &f,
            &no_inputs(),
            Some(&d),
            &BTreeMap::from([(0, vec![0; 28])]),
            2,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("`t` [[attribute(1)]] from vertex buffer 1"),
            "{err}"
        );
        // Every attribute needs a place, every buffer a stride.
        let mut partial = d.clone();
        partial.attributes.remove(&2);
        assert!(plan(&f, &no_inputs(), Some(&partial), &buffers, 2).is_err());
        let mut strideless = d.clone();
        strideless.strides.remove(&1);
        assert!(plan(&f, &no_inputs(), Some(&strideless), &buffers, 2).is_err());
        let mut short = d;
        short.strides.insert(1, 4);
        assert!(plan(&f, &no_inputs(), Some(&short), &buffers, 2).is_err());
    }

    #[test]
    fn bad_inputs_are_errors() {
        let f = vertex(vec![attribute("p", 0, "float32x2", 0)], 8);
        let short = BTreeMap::from([(0, vec![0u8; 20])]);
        let err = plan(&f, &no_inputs(), None, &short, 3).unwrap_err();
        assert!(err.to_string().contains("need 24"), "{err}");
        let err = plan(&f, &no_inputs(), None, &BTreeMap::new(), 3).unwrap_err();
        assert!(matches!(err, RunError::InvalidRender(_)));
        let unknown = vertex(vec![attribute("p", 0, "float32x5", 0)], 8);
        assert!(plan(&unknown, &no_inputs(), None, &short, 1).is_err());
        let overlapping = vertex(vec![attribute("p", 0, "float32", 8)], 8);
        assert!(plan(&overlapping, &no_inputs(), None, &short, 1).is_err());
        let mut reads_uint = no_inputs();
        reads_uint.inputs.push(super::super::interface::StageIo {
            location: 0,
            blend_src: None,
            kind: naga::ScalarKind::Uint,
            width: 4,
        });
        assert!(plan(&f, &reads_uint, None, &short, 1).is_err());
        reads_uint.inputs[0].location = 1;
        assert!(plan(&f, &reads_uint, None, &short, 1).is_err());
        assert_eq!(vertex_format("unorm8x4-bgra"), Some(V::Unorm8x4Bgra));
    }
}
