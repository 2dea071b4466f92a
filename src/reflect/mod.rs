//! The reflection model: what Metal's `MTLComputePipelineReflection` /
//! `MTLArgument` would say about each function, plus where each resource is
//! bound in the emitted WGSL. Serialised as JSON by `msl2wgsl reflect`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod drill;
pub use drill::{array_type, struct_type};

/// The WGSL `override` (a `bool`, `false` unless the pipeline sets it) of
/// kernels with [`FunctionReflection::uses_barriers`]: `true` promises that
/// every thread the dispatch launches lies inside Metal's grid
/// (`dispatchThreadgroups`, or a `dispatchThreads` grid that is a whole
/// number of threadgroups in every dimension). Measured on an H200, the
/// per-store test it removes cost a tiled matmul 7 % (BENCHMARKS.md).
pub const WHOLE_GRID_OVERRIDE: &str = "metal_whole_grid";

/// The WGSL `override` (a `u32`, 1 unless the pipeline sets it) of
/// fragment functions that call `get_sample_position` or
/// `get_num_samples`: the render pipeline's sample count
/// (`multisample.count`), which Metal knows from the render target and WGSL
/// cannot ask. A host rendering with more than one sample sets it where
/// the module declares it.
pub const SAMPLE_COUNT_OVERRIDE: &str = "metal_sample_count";

/// Version of the JSON schema; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// The kind of a Metal function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Stage {
    /// `kernel`
    Kernel,
    /// `vertex`
    Vertex,
    /// `fragment`
    Fragment,
}

/// A WGSL `@group(g) @binding(b)` pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WgslBinding {
    /// `@group`
    pub group: u32,
    /// `@binding`
    pub binding: u32,
}

/// What kind of Metal argument-table entry an argument occupies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ArgumentKind {
    /// `[[buffer(n)]]`
    Buffer,
    /// `[[texture(n)]]`
    Texture,
    /// `[[sampler(n)]]`
    Sampler,
    /// `[[threadgroup(n)]]`
    ThreadgroupMemory,
}

/// How a function may access a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// `const device`, `constant`
    Read,
    /// Written only.
    Write,
    /// `device`
    ReadWrite,
}

/// Buffer details, in Metal's layout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BufferInfo {
    /// Alignment of the pointee type in bytes (`bufferAlignment`).
    pub alignment: u32,
    /// Size of the pointee type in bytes (`bufferDataSize`); for a `T*` this
    /// is one element, and the buffer holds any number of them.
    pub data_size: u32,
    /// The MSL spelling of the pointee type (`bufferDataType`).
    pub data_type: String,
    /// True for `T*` arguments (an array of elements), false for `T&`.
    pub is_pointer: bool,
    /// The pointee's members, when it is a struct (`bufferStructType`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub struct_type: Option<StructType>,
    /// The pointee's element, when it is an array (`bufferPointerType`'s array).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array_type: Option<ArrayType>,
    /// How the WGSL binds it: `var<uniform>` or `var<storage>`.
    pub binding_type: BufferBindingType,
    /// The bytes a host must bind when that is fixed for a `T*`
    /// (`bufferBindingSize`): a `constant T*` that the kernel reads at
    /// constant indices only is a uniform of the elements it reads,
    /// `elements × data_size` bytes. `None`: a `T&` (`data_size`), or a
    /// pointer to any number of elements.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding_size: Option<u32>,
}

/// How a buffer argument is bound in the WGSL, named as WebGPU's
/// `GPUBufferBindingType` names it (the `type` of a bind group layout
/// entry's `buffer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferBindingType {
    /// `var<uniform>`: a `constant` buffer of fixed size whose layout WGSL's
    /// uniform rules allow.
    Uniform,
    /// `var<storage, read_write>`: a `device` buffer.
    Storage,
    /// `var<storage, read>`: `const device` buffers, the other `constant` ones.
    ReadOnlyStorage,
}

/// A struct in Metal's layout (`MTLStructType`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StructType {
    /// The struct's MSL name.
    pub name: String,
    /// Members in declaration order.
    pub members: Vec<StructMember>,
}

/// One struct member (`MTLStructMember`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StructMember {
    /// Name.
    pub name: String,
    /// Byte offset in Metal's layout.
    pub offset: u32,
    /// `struct`, `array`, or the MSL type (`float3`, `packed_float3`, `char`...).
    pub data_type: String,
    /// Size in bytes in Metal's layout.
    pub size: u32,
    /// For struct members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub struct_type: Option<StructType>,
    /// For array members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array_type: Option<ArrayType>,
    /// In an argument buffer: the member's `[[id(n)]]`, given or assigned
    /// (`MTLStructMember.argumentIndex`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argument_index: Option<u32>,
}

/// An array (`MTLArrayType`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArrayType {
    /// `struct`, `array` or the element's MSL type.
    pub element_type: String,
    /// Number of elements.
    pub array_length: u32,
    /// Bytes between elements.
    pub stride: u32,
    /// For arrays of structs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element_struct_type: Option<StructType>,
    /// For arrays of arrays.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element_array_type: Option<Box<ArrayType>>,
}

/// One argument of a function, as `MTLArgument` describes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    /// The parameter's name in the MSL source.
    pub name: String,
    /// Buffer, texture, sampler or threadgroup memory.
    #[serde(rename = "type")]
    pub kind: ArgumentKind,
    /// The Metal index (`[[buffer(n)]]` etc.).
    pub index: u32,
    /// Access the function may make.
    pub access: Access,
    /// Whether the function uses the argument at all.
    pub active: bool,
    /// Where it is bound in the WGSL, if it is a WGSL resource.
    pub binding: Option<WgslBinding>,
    /// Present for buffers.
    pub buffer: Option<BufferInfo>,
    /// Present for threadgroup memory.
    pub threadgroup: Option<ThreadgroupInfo>,
    /// Present for textures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub texture: Option<TextureInfo>,
    /// Present for samplers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampler: Option<SamplerInfo>,
    /// For an argument buffer (a buffer whose struct holds textures,
    /// samplers or pointers, MSL §2.13): each resource member as an argument
    /// of its own, `index` its `[[id(n)]]` (one per element of an array of
    /// resources, `name` `m[k]`), `binding` where the WGSL binds it. The
    /// argument's own `binding` holds the plain-data members, if any.
    #[serde(
        rename = "argumentBufferMembers",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub members: Vec<Argument>,
}

/// How a texture is bound in the WGSL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TextureBinding {
    /// `texture_*<f32|i32|u32>`: sampled or read with `textureLoad`.
    Sampled,
    /// `texture_depth_*`.
    Depth,
    /// `texture_storage_*<format, access>`.
    Storage,
    /// `var<storage> t: array<u32>`: a `texture_buffer`'s texels as words
    /// (`storageFormat` says how they are encoded).
    Buffer,
}

/// Texture details (`textureType`, `textureDataType`, storage format).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TextureInfo {
    /// Metal's texture type, as `MTLTextureType` names it without the
    /// prefix: `type1D`, `type1DArray`, `type2D`, `type2DArray`,
    /// `type2DMultisample`, `type3D`, `typeCube`, `typeCubeArray`,
    /// `typeTextureBuffer`.
    pub texture_type: String,
    /// The MSL component type (`float`, `half`, `int`, `uint`, `short`, `ushort`).
    pub data_type: String,
    /// WGSL view dimension: `1d`, `2d`, `2d-array`, `3d`, `cube`,
    /// `cube-array`; `buffer` for a texel buffer (a storage buffer).
    pub view_dimension: String,
    /// Sampled, depth or storage binding.
    pub binding_kind: TextureBinding,
    /// WGSL sample type of sampled textures: `float`, `sint`, `uint`, `depth`.
    pub sample_type: String,
    /// Multisampled (`texture2d_ms`, `depth2d_ms`).
    pub multisampled: bool,
    /// The texel format of a storage texture, as wgpu names it (`rgba8unorm`, `r32float`, ...).
    pub storage_format: Option<String>,
}

/// Sampler argument details.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplerInfo {
    /// A comparison sampler (`sampler_comparison`), used with `sample_compare`.
    pub comparison: bool,
}

/// A `constexpr sampler`: a sampler the host creates from this descriptor.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConstexprSampler {
    /// Its name in the MSL source.
    pub name: String,
    /// Where it is bound in the WGSL.
    pub binding: WgslBinding,
    /// The descriptor.
    pub descriptor: SamplerDescriptor,
}

/// A sampler descriptor, in `wgpu::SamplerDescriptor`'s terms (strings as
/// wgpu's serde names them: `clamp-to-edge`, `repeat`, `mirror-repeat`,
/// `clamp-to-border`; `nearest`, `linear`; `never`, `less`, ...).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplerDescriptor {
    /// `s_address`.
    pub address_mode_u: String,
    /// `t_address`.
    pub address_mode_v: String,
    /// `r_address`.
    pub address_mode_w: String,
    /// `mag_filter`.
    pub mag_filter: String,
    /// `min_filter`.
    pub min_filter: String,
    /// `mip_filter` (`none` is nearest with the LOD clamped to 0).
    pub mipmap_filter: String,
    /// `lod_clamp` minimum.
    pub lod_min_clamp: f32,
    /// `lod_clamp` maximum.
    pub lod_max_clamp: f32,
    /// `compare_func`, for comparison samplers.
    pub compare: Option<String>,
    /// `max_anisotropy`.
    pub anisotropy_clamp: u16,
    /// `border_color` with `clamp_to_border` (`transparent-black`,
    /// `opaque-black`, `opaque-white`), or `zero` for `clamp_to_zero`.
    pub border_color: Option<String>,
}

/// Threadgroup-memory details (`threadgroupMemoryAlignment`, `threadgroupMemoryDataSize`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadgroupInfo {
    /// Alignment of the element type in bytes.
    pub alignment: u32,
    /// Bytes the translation was made for: the length the host gave, or,
    /// for a pointer used only as one object (`*p`, `p->m`, `p[0]`),
    /// `sizeof(T)` in Metal's layout. `None` (JSON `null`) when the kernel
    /// needs a length and none was given: Metal sets it at dispatch, and the
    /// kernel is translated only then (W0406).
    pub data_size: Option<u32>,
}

/// Everything about one translated function.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionReflection {
    /// The function's MSL name.
    pub name: String,
    /// Its entry point name in the WGSL (differs if the name is reserved).
    pub wgsl_entry_point: String,
    /// Kernel, vertex or fragment.
    pub stage: Stage,
    /// `@workgroup_size` the kernel was translated for.
    pub workgroup_size: Option<[u32; 3]>,
    /// Its arguments that occupy Metal argument-table slots, in source order.
    pub arguments: Vec<Argument>,
    /// Its built-in input arguments (`[[thread_position_in_grid]]`,
    /// `[[vertex_id]]`, ...), in source order: they take no slot, so Metal's
    /// reflection lists them apart from the resources.
    pub builtins: Vec<BuiltinArgument>,
    /// The synthetic uniform carrying Metal's dispatch geometry; the host must
    /// fill it with a [`DispatchParams`] (kernels only).
    pub dispatch_binding: Option<WgslBinding>,
    /// True if the kernel contains a barrier (or SIMD-group functions run
    /// by the 32-lane emulation, which waits at barriers, or element stores
    /// combined by quads, which every thread must reach): WGSL launches
    /// whole workgroups, so the threads past a `dispatchThreads` grid run
    /// too, to the barriers, with every store they would make skipped. Such
    /// a kernel's module declares the `bool` override
    /// [`WHOLE_GRID_OVERRIDE`]: a host that knows every launched thread is
    /// inside the grid sets it to `true`, and the driver drops the per-store
    /// test.
    pub uses_barriers: bool,
    /// wgpu features the WGSL needs (`"shader-f16"`, ...).
    pub required_features: Vec<String>,
    /// The WebGPU limits the function needs above their defaults, by their
    /// WebGPU names (`maxStorageBuffersPerShaderStage`, ...): pass them as
    /// `requiredLimits` when creating the device. Empty when the defaults do.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub required_limits: BTreeMap<String, u64>,
    /// For a function that uses SIMD-group functions: how its SIMD groups
    /// run, `"emulated32"` (Apple's 32 lanes in threadgroup memory, on any
    /// adapter) or `"native"` (the adapter's subgroups).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simd_groups: Option<String>,
    /// The `constexpr sampler`s the function uses, with their bindings.
    pub constexpr_samplers: Vec<ConstexprSampler>,
    /// Vertex functions: the `[[stage_in]]` attributes, as the runner lays
    /// them out in vertex buffer 0 (tightly packed, in attribute order).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vertex_attributes: Vec<VertexAttribute>,
    /// Bytes per vertex of that layout (0 without `[[stage_in]]`).
    #[serde(skip_serializing_if = "is_zero")]
    pub vertex_stride: u32,
    /// Vertex outputs / fragment inputs passed between the stages, with the
    /// locations that link them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub varyings: Vec<Varying>,
    /// Fragment functions: the colour attachments written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub color_outputs: Vec<ColorOutput>,
    /// The function constants (`[[function_constant(n)]]`) the function
    /// reads, by index: WGSL `override`s the pipeline sets.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub function_constants: Vec<FunctionConstantReflection>,
    /// `[[stitchable]]` functions: the SwiftUI effect this fragment entry
    /// point applies and how its arguments are passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stitchable: Option<Stitchable>,
    /// Vertex functions writing `[[point_size]]`: the entry point that
    /// draws each point as Metal does, a `point_size`-pixel square.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point_sprite: Option<PointSprite>,
    /// Kernels with a `[[stage_in]]`: its attributes, where they are read
    /// from, and where the kernel reads the stage-in region.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage_input: Option<crate::stage_in::StageInputReflection>,
    /// Vertex functions that read `[[base_vertex]]` or `[[base_instance]]`,
    /// and every vertex function run as a compute dispatch: the synthetic
    /// uniform holding the draw's base vertex and base instance, which the
    /// host fills with [`DrawParameters::to_bytes`] for each draw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draw_parameters_binding: Option<WgslBinding>,
    /// A vertex function without a `[[position]]` output (`vertex void`,
    /// Metal's rasterization-disabled pipelines): a WebGPU vertex stage
    /// cannot write storage buffers or textures, so its WGSL entry point is
    /// `@compute`, run for a draw as [`VertexDispatch`] says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vertex_dispatch: Option<VertexDispatch>,
}

/// `@binding` (in `@group(0)`) of the draw-parameters uniform
/// ([`DrawParameters`]): in the synthetic range (192 to 255), below the
/// stage-in region's 255.
pub const DRAW_PARAMETERS_BINDING: u32 = 254;

/// The contents of the draw-parameters uniform (16 bytes, little endian):
/// what Metal gives a vertex function as `[[base_vertex]]` and
/// `[[base_instance]]`. A non-indexed draw (`drawPrimitives`) has its
/// `vertexStart` as base vertex; an indexed one its `baseVertex`. Both
/// are already included in `[[vertex_id]]` and `[[instance_id]]`, as in
/// WGSL's `vertex_index` and `instance_index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DrawParameters {
    /// `[[base_vertex]]`.
    pub base_vertex: u32,
    /// `[[base_instance]]`.
    pub base_instance: u32,
}

impl DrawParameters {
    /// Size of the uniform in bytes.
    pub const SIZE: usize = 16;

    /// The uniform's bytes: `base_vertex`, `base_instance`, two unused words.
    pub fn to_bytes(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[0..4].copy_from_slice(&self.base_vertex.to_le_bytes());
        out[4..8].copy_from_slice(&self.base_instance.to_le_bytes());
        out
    }
}

/// How to run a vertex function translated into a compute entry point
/// ([`FunctionReflection::vertex_dispatch`]) for a draw of `vertexCount`
/// vertices from `vertexStart` and `instanceCount` instances from
/// `baseInstance`: dispatch threads (Metal's `dispatchThreads`, with the
/// [`DispatchParams`] uniform at `dispatch_binding`) over a grid of
/// `(vertexCount, instanceCount, 1)` in threadgroups of `threadgroup_size`
/// (the `workgroup_size`), with the [`DrawParameters`] `(vertexStart,
/// baseInstance)`. Thread `(x, y)` is vertex `vertexStart + x` of instance
/// `baseInstance + y`; threads past the grid do nothing. Its `[[stage_in]]`
/// attributes are read from storage buffers at the Metal buffer indices
/// `stage_input` gives, step function `threadPositionInGridX` (alias
/// `perVertex`) by vertex, `threadPositionInGridY` (alias `perInstance`)
/// by instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VertexDispatch {
    /// Threads per threadgroup.
    pub threadgroup_size: [u32; 3],
    /// What the grid's dimensions count: `["vertexCount", "instanceCount", "1"]`.
    pub grid: [&'static str; 3],
}

/// The varying name (`Varying::name`) of `[[point_coord]]`: not an
/// identifier, so no member name can take its location.
pub const POINT_COORD_VARYING: &str = "[[point_coord]]";

/// How to draw Metal's points (`MTLPrimitiveTypePoint`) with a vertex
/// function that writes `[[point_size]]`: WebGPU's points are one pixel,
/// so [`PointSprite::entry_point`] draws each point as a square of two
/// triangles.
///
/// Draw it as a triangle list of `vertices_per_point` × the point count
/// vertices (no culling): vertex `v` is corner `v % 6` of point
/// `v / 6`, whose index the function sees as its `[[vertex_id]]`
/// (`[[instance_id]]` is the instance, as in Metal). The square is
/// centred on the point's `[[position]]` and `point_size` pixels across
/// (clamped to [1, [`PointSprite::max_point_size`]]), which needs the
/// viewport's size in pixels: two little-endian `f32`s (width, height) in
/// the uniform at [`PointSprite::viewport_binding`]. A fragment
/// function's `[[point_coord]]` is the varying at
/// [`PointSprite::point_coord_location`], (0, 0) at the point's top-left
/// corner and (1, 1) at its bottom-right.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PointSprite {
    /// The WGSL entry point drawing point sprites (the plain one,
    /// [`FunctionReflection::wgsl_entry_point`], draws one-pixel points or
    /// other primitives, with `point_size` unused).
    pub entry_point: String,
    /// The Metal primitive type it draws: `point` (`MTLPrimitiveTypePoint`).
    pub primitive: String,
    /// The WebGPU primitive topology to draw it with: `triangle-list`.
    pub topology: String,
    /// Vertices drawn per point: 6.
    pub vertices_per_point: u32,
    /// The viewport-size uniform (`vec2<f32>`, 8 bytes).
    pub viewport_binding: WgslBinding,
    /// The largest point size drawn, in pixels (Apple GPUs' limit).
    pub max_point_size: f32,
    /// The `@location` of `[[point_coord]]`, when a fragment function of
    /// the library reads it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point_coord_location: Option<u32>,
}

/// How SwiftUI applies a `[[stitchable]]` function, which its signature
/// tells: `half4 f(float2 position, half4 color, args...)`,
/// `float2 f(float2 position, args...)`,
/// `half4 f(float2 position, SwiftUI::Layer layer, args...)`, or
/// `half4 f(float2 position, args...)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EffectKind {
    /// `View.colorEffect`: a new colour from the pixel's position and colour.
    ColorEffect,
    /// `View.distortionEffect`: the position to take the pixel's colour from.
    DistortionEffect,
    /// `View.layerEffect`: a colour from samples of the whole layer.
    LayerEffect,
    /// `Shader` as a `ShapeStyle`: a fill colour from the position alone.
    ShapeStyle,
}

/// A `[[stitchable]]` function as a SwiftUI effect.
///
/// Its fragment entry point reads `@builtin(position)` (pixel centres, in
/// pixels from the top left: user-space points at one pixel per point),
/// the layer as [`Stitchable::layer_texture`] (the view's pixels, with a
/// linear clamp-to-edge `constexpr` sampler), the value arguments from the
/// argument buffer [`Stitchable::argument_buffer`] (a uniform), each array
/// from its own `[[buffer(n)]]` and each image from its `[[texture(n)]]`,
/// all also listed in the function's `arguments`; it calls
/// [`Stitchable::function`] and writes colour attachment 0.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stitchable {
    /// Which effect the signature makes it.
    pub kind: EffectKind,
    /// The WGSL name of the function itself (callable as an ordinary
    /// function: the entry point has the MSL name).
    pub function: String,
    /// `[[texture(n)]]` of the layer (0); `None` for shape styles.
    pub layer_texture: Option<u32>,
    /// `[[buffer(n)]]` of the uniform holding the value arguments and the
    /// arrays' counts (0); `None` when there are none.
    pub argument_buffer: Option<u32>,
    /// Bytes of the argument buffer (a multiple of 16).
    pub argument_buffer_size: u32,
    /// The arguments after the fixed ones, as SwiftUI's `Shader.Argument`s
    /// are listed (an array and its count are one).
    pub arguments: Vec<EffectArgument>,
}

/// What kind of `Shader.Argument` an effect argument takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EffectArgumentKind {
    /// A scalar or vector (`.float`, `.float2`..`.float4`, `.color`,
    /// `.boundingRect`): in the argument buffer.
    Value,
    /// `.floatArray`: `device const float*` and its `int` element count.
    FloatArray,
    /// `.colorArray`: `device const half4*` and its `int` element count.
    ColorArray,
    /// `.data`: `device const T*` (other `T`) and its `int` size in bytes.
    Data,
    /// `.image`: a `texture2d<half>`.
    Image,
}

/// One argument of an effect.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EffectArgument {
    /// The parameter's name (the pointer's, for arrays).
    pub name: String,
    /// How it is passed.
    pub kind: EffectArgumentKind,
    /// The parameter's MSL type (the pointee's, for arrays).
    pub data_type: String,
    /// Values: the type the argument buffer holds it as (`half` as `float`,
    /// `halfN` as `floatN`; `int`, `uint` and `float` types as they are).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stored_as: Option<String>,
    /// Values: its byte offset in the argument buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// Values with a default argument: its components.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<f64>>,
    /// Arrays: `[[buffer(n)]]` of the elements (bytes in Metal's layout).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<u32>,
    /// Arrays: the count parameter's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count_name: Option<String>,
    /// Arrays: the byte offset of the count (an `int`) in the argument buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count_offset: Option<u32>,
    /// Arrays: bytes of one element (`count` is the bytes given divided by
    /// it; `.data` counts bytes, so this is 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count_unit: Option<u32>,
    /// Images: `[[texture(n)]]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub texture: Option<u32>,
}

/// One function constant a function reads (`MTLFunctionConstant`). In the
/// WGSL it is `@id(index) override name: T`; the pipeline sets it with the
/// key `"index"` in `wgpu::PipelineCompilationOptions::constants`. A vector
/// constant is one override per component, at [`Self::component_ids`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionConstantReflection {
    /// The constant's MSL name.
    pub name: String,
    /// `n` of `[[function_constant(n)]]`, also the WGSL `@id`.
    pub index: u16,
    /// Its MSL type (`bool`, `int`, `float`, ...).
    pub data_type: String,
    /// True unless `is_function_constant_defined` asks about it: a host
    /// must then set it, as Metal requires (the runner refuses to run
    /// without it). Its override defaults to zero all the same, so that a
    /// pipeline can be made without constants.
    pub required: bool,
    /// Optional constants: `@id` of the `bool` override that
    /// `is_function_constant_defined` reads; set it to `true` whenever the
    /// value is set (it defaults to `false`, the value to zero).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defined_id: Option<u16>,
    /// Vector constants (`uint2`, `float4`, `bool3`...): the `@id` of each
    /// component's `override` (named `name_x`, `name_y`, ...), `index`
    /// first. WGSL overrides are scalars, so a host sets each component at
    /// its id (the first at `index`, as for a scalar). Empty for scalars.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub component_ids: Vec<u16>,
    /// 64-bit constants (`long`, `ulong`): the `@id` of the `u32` override
    /// (`name_hi`) holding the upper 32 bits; the lower 32 bits are set at
    /// `index` (WGSL overrides cannot be 64-bit). `None` otherwise, and
    /// with `--target webgpu`, where `long` is 32 bits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub high_id: Option<u16>,
    /// The function's conditional arguments that this constant switches on
    /// (`[[buffer(n), function_constant(name)]]`): in Metal they exist only
    /// when the constant is true (nonzero), and a specialised function
    /// reports them inactive otherwise. The WGSL binds them whatever the
    /// value (a binding cannot depend on an override), so a host must bind
    /// something there, which the function does not read when the constant
    /// is false (the runner binds a placeholder).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<ConditionalArgument>,
    /// The function needs the constant's value when it is translated (an
    /// array size, a `case` label, a template argument...) and none was
    /// given: the function is not in the WGSL (warning W0415) until it is
    /// translated with one ([`FunctionReflection::awaits_function_constants`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub needed_at_translation: bool,
}

/// A conditional argument: one a function constant switches on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionalArgument {
    /// The argument's name (as in [`Argument::name`]).
    pub name: String,
    /// Buffer, texture or sampler.
    #[serde(rename = "type")]
    pub kind: ArgumentKind,
    /// Its Metal index.
    pub index: u32,
    /// The argument exists when the constant is false (zero) instead: its
    /// condition is a constant computed as the negation of this one
    /// (`constant bool no_b = !b;` ... `function_constant(no_b)`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub when_false: bool,
}

impl FunctionReflection {
    /// True for a function left out of the WGSL until it is translated
    /// with values for the function constants it needs at translation
    /// (those [`FunctionConstantReflection::needed_at_translation`]; W0415).
    /// Its reflection has only its name, stage and those constants.
    pub fn awaits_function_constants(&self) -> bool {
        self.function_constants
            .iter()
            .any(|c| c.needed_at_translation)
    }

    /// The function constant that switches `argument` on (or off, for a
    /// [`ConditionalArgument::when_false`] one), if it is a conditional
    /// argument (`[[buffer(n), function_constant(b)]]`).
    pub fn argument_condition(&self, argument: &Argument) -> Option<&FunctionConstantReflection> {
        self.function_constants.iter().find(|c| {
            c.arguments
                .iter()
                .any(|a| a.kind == argument.kind && a.index == argument.index)
        })
    }

    /// Metal's `isActive` for `argument` once the function is specialised
    /// with `constants` (values by Metal index, as the runner takes them):
    /// used by the function ([`Argument::active`]) and, for a conditional
    /// argument, with its constant set and nonzero.
    pub fn argument_active(&self, argument: &Argument, constants: &BTreeMap<u32, f64>) -> bool {
        argument.active && self.argument_exists(argument, constants)
    }

    /// False for a conditional argument whose condition does not hold
    /// under `constants` (its constant is zero or unset, or nonzero for a
    /// [`ConditionalArgument::when_false`] one): Metal's function then has
    /// no such argument.
    pub fn argument_exists(&self, argument: &Argument, constants: &BTreeMap<u32, f64>) -> bool {
        let Some(c) = self.argument_condition(argument) else {
            return true;
        };
        let when_false = c
            .arguments
            .iter()
            .any(|a| a.kind == argument.kind && a.index == argument.index && a.when_false);
        let set = constants
            .get(&u32::from(c.index))
            .is_some_and(|v| *v != 0.0);
        set != when_false
    }
}

/// A built-in input argument of a function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BuiltinArgument {
    /// The parameter's name.
    pub name: String,
    /// The attribute as written (`thread_position_in_grid`, `position`).
    pub attribute: String,
    /// Its MSL type (`uint2`, `float4`, ...).
    pub data_type: String,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// One `[[attribute(n)]]` member of a vertex function's `[[stage_in]]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VertexAttribute {
    /// The member's name.
    pub name: String,
    /// `n` of `[[attribute(n)]]`, also its `@location`.
    pub index: u32,
    /// MSL type (`float3`, `half4`, `uchar4`, ...).
    pub data_type: String,
    /// The `wgpu::VertexFormat` reading it, as wgpu names it (`float32x3`, `float16x4`, `uint8x4`...).
    pub format: String,
    /// Byte offset in the tightly packed vertex.
    pub offset: u32,
}

/// A value passed from the vertex to the fragment stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Varying {
    /// The key that links the stages: `[[user(name)]]` or the member name.
    pub name: String,
    /// Its `@location`.
    pub location: u32,
    /// MSL type.
    pub data_type: String,
    /// `perspective`, `linear` or `flat`, with `centroid`/`sample` if given.
    pub interpolation: String,
}

/// A fragment function's colour output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ColorOutput {
    /// `m` of `[[color(m)]]` (0 for a bare return value): the attachment.
    pub index: u32,
    /// `[[index(i)]]` for dual-source blending.
    pub blend_src: Option<u32>,
    /// MSL type (`float4`, `half4`, `int4`, `uint4`).
    pub data_type: String,
}

/// The contents of the synthetic dispatch uniform (48 bytes, little endian),
/// which gives the WGSL Metal's view of the grid.
///
/// A dispatch too large for one WebGPU dispatch is split; each part gets its
/// own `group_offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DispatchParams {
    /// `threads_per_grid`: the grid in threads (dispatchThreads' size, or
    /// threadgroups × threadgroup size).
    pub grid_size: [u32; 3],
    /// The first threadgroup of this (partial) dispatch.
    pub group_offset: [u32; 3],
    /// `threadgroups_per_grid` of the whole dispatch.
    pub threadgroups: [u32; 3],
}

impl DispatchParams {
    /// Size of the uniform in bytes.
    pub const SIZE: usize = 48;

    /// The uniform's bytes: three `vec4<u32>`, the fourth lane unused.
    pub fn to_bytes(&self) -> [u8; 48] {
        let mut out = [0u8; 48];
        let vecs = [self.grid_size, self.group_offset, self.threadgroups];
        for (v, vec) in vecs.iter().enumerate() {
            for (c, x) in vec.iter().enumerate() {
                let at = v * 16 + c * 4;
                out[at..at + 4].copy_from_slice(&x.to_le_bytes());
            }
        }
        out
    }
}

/// The JSON document `msl2wgsl reflect` prints.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReflectionDocument<'a> {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// One entry per function.
    pub functions: Vec<&'a FunctionReflection>,
}

/// A user binding map (`--binding-map map.json`): per function (MSL name),
/// per resource kind, per Metal index, the WGSL binding to use instead of
/// the default scheme. JSON:
/// `{"k": {"buffer": {"0": {"group": 1, "binding": 3}}, "texture": {}, "sampler": {}}}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct BindingMap(pub BTreeMap<String, FunctionBindings>);

/// One function's binding overrides.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionBindings {
    /// `[[buffer(n)]]`
    #[serde(default)]
    pub buffer: BTreeMap<u32, WgslBinding>,
    /// `[[texture(n)]]`
    #[serde(default)]
    pub texture: BTreeMap<u32, WgslBinding>,
    /// `[[sampler(n)]]`
    #[serde(default)]
    pub sampler: BTreeMap<u32, WgslBinding>,
}

impl BindingMap {
    /// Parses the JSON form.
    pub fn from_json(text: &str) -> Result<BindingMap, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// The override for `function`'s resource `kind` at Metal `index`.
    pub fn get(&self, function: &str, kind: ArgumentKind, index: u32) -> Option<WgslBinding> {
        let f = self.0.get(function)?;
        match kind {
            ArgumentKind::Buffer => f.buffer.get(&index).copied(),
            ArgumentKind::Texture => f.texture.get(&index).copied(),
            ArgumentKind::Sampler => f.sampler.get(&index).copied(),
            ArgumentKind::ThreadgroupMemory => None,
        }
    }
}
