//! Runs translated kernels on a GPU through wgpu, with Metal's dispatch
//! semantics.
//!
//! The pieces:
//! - [`Gpu`]: one adapter, device and queue, chosen the way wgpu's own tools
//!   choose them (`WGPU_BACKEND`, `WGPU_ADAPTER_NAME`), with the adapter's full
//!   limits and every optional feature the translator may use.
//! - [`run_compute`]: binds raw buffers by Metal index, dispatches a kernel as
//!   `dispatchThreads` or `dispatchThreadgroups` would (see [`Dispatch`]), and
//!   reads every buffer back.
//! - [`run_compute_resources`]: the same with textures ([`TextureData`]) and
//!   samplers too, and every storage texture read back.
//! - [`run_kernel`], [`run_kernel_resources`]: translate an MSL source for the
//!   dispatch's threadgroup size (cached per source, entry and size), then run it.
//! - [`render`], [`render_library`]: draw with a vertex and a fragment
//!   function into offscreen colour targets ([`RenderResources`]) and read
//!   the images back; triangles, or Metal's points ([`Primitive::Point`],
//!   drawn by a vertex function's point-sprite entry point).
//! - [`run_vertex_dispatch`]: run a vertex function without a
//!   `[[position]]` output (rasterization disabled), translated into a
//!   compute entry point, for a draw ([`VertexDraw`]).
//! - [`render_effect`], [`render_effect_library`]: apply a `[[stitchable]]`
//!   SwiftUI effect to an image ([`EffectResources`]).
//! - [`ComputePipeline`], [`RenderPipeline`]: Metal's host model on the
//!   caller's own wgpu objects: pipelines from a [`crate::Library`]'s
//!   functions, resources set by Metal index ([`ComputeCommand::set_buffer`],
//!   [`RenderCommand::set_fragment_texture`], ...), `dispatch_threads`,
//!   `dispatch_threadgroups`, `draw_primitives` and `draw` (points too).
//! - [`conformance`]: declarative test cases (an MSL file plus a TOML file)
//!   and the `msl2wgsl test` driver.

mod arguments;
mod bind;
mod compute;
pub mod conformance;
mod constants;
mod device;
mod effect;
mod interface;
mod pipeline;
mod placeholders;
mod points;
mod render;
mod render_pipeline;
mod render_targets;
mod resources;
mod samplers;
mod textures;
mod vertex_input;

pub use arguments::ArgumentTable;
pub use compute::{
    run_compute, run_compute_resources, run_compute_with_max_groups, run_kernel,
    run_kernel_resources, run_vertex_dispatch, translate_kernel, translate_kernel_specialized,
    Dispatch, VertexDraw,
};
pub use constants::{is_whole_grid, pipeline_constants, specialized_library};
pub use device::{Gpu, Translation};
pub use effect::{
    effect_argument_position, effect_resources, render_effect, render_effect_library,
    EffectResources, EffectValue, EFFECT_VERTEX,
};
pub use pipeline::{ComputeCommand, ComputePipeline};
pub use points::Primitive;
pub use render::{render, render_library, RenderResources, RenderTarget};
pub use render_pipeline::{stage_function, RenderCommand, RenderPipeline};
pub use samplers::{default_sampler, DEFAULT_COMPARE};
pub use textures::{texture_format, texture_format_name, TextureData};
pub use vertex_input::{vertex_format, VertexAttributeDescriptor, VertexDescriptor};

use crate::reflect::SamplerDescriptor;
use crate::Failure;
use std::collections::BTreeMap;
use std::fmt;

/// Everything bound to a kernel, by Metal index.
#[derive(Clone, Debug, Default)]
pub struct Resources {
    /// `[[buffer(n)]]`: raw bytes in Metal's layout.
    pub buffers: BTreeMap<u32, Vec<u8>>,
    /// `[[texture(n)]]`: every active texture argument needs one.
    pub textures: BTreeMap<u32, TextureData>,
    /// `[[sampler(n)]]`: a sampler argument given none gets
    /// [`default_sampler`]. `constexpr sampler`s come from the reflection.
    pub samplers: BTreeMap<u32, SamplerDescriptor>,
    /// `[[function_constant(n)]]` values (`MTLFunctionConstantValues`),
    /// converted to each constant's type by wgpu; every required constant
    /// the kernel reads needs one (see [`pipeline_constants`]).
    pub constants: BTreeMap<u32, f64>,
    /// The resources of the argument buffer at `[[buffer(n)]]`, by `n`
    /// (its plain data, in Metal's layout of the whole struct, is
    /// `buffers[n]`).
    pub argument_buffers: BTreeMap<u32, ArgumentBuffer>,
    /// The stage-in region (`setStageInRegion`) of a kernel with a
    /// `[[stage_in]]`, `[[grid_origin]]` or `[[grid_size]]`. `None`: origin 0
    /// and the dispatch's grid in threads as the size. The `[[stage_in]]`'s
    /// buffers are `buffers[n]` at the descriptor's buffer indices, as
    /// Metal binds them.
    pub stage_in_region: Option<crate::stage_in::StageInRegion>,
}

/// What an argument buffer (MSL §2.13) refers to, by each member's
/// `[[id(n)]]` (the `index` of the reflection's `argumentBufferMembers`;
/// an array's element `k` is at its id plus `k`): what Metal's host
/// encodes into it (`MTLArgumentEncoder.setBuffer/setTexture/setSampler
/// atIndex:`, or the resource IDs a Metal 3 host writes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArgumentBuffer {
    /// Pointer members: raw bytes in Metal's layout.
    pub buffers: BTreeMap<u32, Vec<u8>>,
    /// Texture members.
    pub textures: BTreeMap<u32, TextureData>,
    /// Sampler members; one given none gets [`default_sampler`].
    pub samplers: BTreeMap<u32, SamplerDescriptor>,
}

/// What a kernel run gives back, by Metal index.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outputs {
    /// Every buffer that was given, after the dispatch (same length).
    pub buffers: BTreeMap<u32, Vec<u8>>,
    /// Every storage texture argument that may be written (`access::write`
    /// or `read_write`), mip level 0 with all its layers, after the dispatch.
    pub textures: BTreeMap<u32, TextureData>,
    /// The same for the members of each argument buffer, by its
    /// `[[buffer(n)]]` and their `[[id(n)]]` (no samplers).
    pub argument_buffers: BTreeMap<u32, ArgumentBuffer>,
}

impl Outputs {
    /// Records `bytes` of the buffer at `key`.
    pub(crate) fn insert_buffer(&mut self, key: bind::Key, bytes: Vec<u8>) {
        match key.owner {
            None => self.buffers.insert(key.index, bytes),
            Some(n) => self
                .argument_buffers
                .entry(n)
                .or_default()
                .buffers
                .insert(key.index, bytes),
        };
    }

    /// Records the texture at `key`.
    pub(crate) fn insert_texture(&mut self, key: bind::Key, data: TextureData) {
        match key.owner {
            None => self.textures.insert(key.index, data),
            Some(n) => self
                .argument_buffers
                .entry(n)
                .or_default()
                .textures
                .insert(key.index, data),
        };
    }
}

/// Everything that can stop a kernel from running, or its results from being
/// read back.
#[derive(Debug)]
pub enum RunError {
    /// No adapter was found at all (no driver, or `WGPU_BACKEND` excluded it).
    NoAdapter(String),
    /// `WGPU_ADAPTER_NAME` matched none of the adapters.
    AdapterNotFound {
        /// The requested (sub)string.
        wanted: String,
        /// Names of the adapters that exist.
        available: Vec<String>,
    },
    /// The adapter refused to create a device.
    RequestDevice(String),
    /// The shader (or the draw) needs a wgpu feature the device lacks.
    MissingFeature {
        /// The feature as the reflection spells it (`"shader-f16"`).
        feature: String,
        /// [`Gpu::adapter_line`] of the device.
        adapter: String,
    },
    /// The reflection names a feature wgpu does not know.
    UnknownFeature(String),
    /// The MSL source did not translate.
    Translate(Box<Failure>),
    /// The translation has no function of that name.
    UnknownEntry(String),
    /// The function exists but is not a kernel.
    NotAKernel(String),
    /// The function exists but is not of the stage its place needs.
    WrongStage {
        /// The function's name.
        name: String,
        /// The stage needed: `vertex` or `fragment`.
        expected: String,
    },
    /// The dispatch cannot run (bad size, over the device limits, ...).
    InvalidDispatch(String),
    /// The draw cannot run: a zero or too large target, vertex data
    /// shorter than the draw reads, colour targets that do not fit the
    /// fragment function's outputs, ...
    InvalidRender(String),
    /// An active buffer argument was given no bytes.
    MissingBuffer {
        /// The argument's name.
        name: String,
        /// Its Metal index.
        index: u32,
        /// The stage of the function whose argument it is (a draw has two
        /// argument tables).
        stage: crate::reflect::Stage,
    },
    /// A buffer is shorter than the argument's type.
    BufferTooSmall {
        /// The argument's name.
        name: String,
        /// Its Metal index.
        index: u32,
        /// Bytes given.
        len: usize,
        /// Bytes needed.
        needed: u64,
    },
    /// A buffer is larger than the device can bind.
    BufferTooLarge {
        /// The argument's name.
        name: String,
        /// Its Metal index.
        index: u32,
        /// Bytes given (after padding).
        len: u64,
        /// The device's limit.
        limit: u64,
    },
    /// An active texture argument was given no texture.
    MissingTexture {
        /// The argument's name.
        name: String,
        /// Its Metal index.
        index: u32,
        /// The stage of the function whose argument it is.
        stage: crate::reflect::Stage,
    },
    /// A member of an argument buffer that the function uses was given no
    /// buffer or texture ([`ArgumentBuffer`]).
    MissingMember {
        /// The member's name (`args.tex`, `args.ts[2]`).
        name: String,
        /// Its `[[id(n)]]`.
        id: u32,
        /// The argument buffer's `[[buffer(n)]]`.
        buffer: u32,
        /// The stage of the function whose argument it is.
        stage: crate::reflect::Stage,
    },
    /// A texture does not fit its argument (format, shape, size), or is
    /// inconsistent in itself.
    TextureMismatch {
        /// The argument's name.
        name: String,
        /// Its Metal index.
        index: u32,
        /// What is wrong.
        why: String,
    },
    /// A sampler descriptor names something wgpu does not have.
    InvalidSampler {
        /// The argument's or `constexpr sampler`'s name.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// A PNG file could not be read, decoded, encoded or written.
    Image(String),
    /// The WGSL and its reflection disagree, or the WGSL does not compile:
    /// a translator bug, or hand-written input that is wrong.
    Shader(String),
    /// The runner does not support this yet (multisampled textures, ...).
    Unsupported(String),
    /// wgpu reported an error while creating resources or running.
    Gpu(String),
    /// A required function constant (one no `is_function_constant_defined`
    /// asks about) was given no value.
    MissingFunctionConstant {
        /// The function reading it.
        function: String,
        /// The constant's name.
        name: String,
        /// `n` of `[[function_constant(n)]]`.
        index: u32,
    },
    /// The function needs function constant values at translation (W0415)
    /// and was given WGSL without it: run it through an API that
    /// translates it with the values ([`run_kernel_resources`],
    /// [`ComputePipeline`], [`render_library`]).
    NeedsSpecialization {
        /// The function.
        function: String,
        /// The constants it needs values of.
        constants: Vec<String>,
    },
}

/// Which argument table a render stage's argument is in (`the vertex
/// function's `), for the messages that name one; empty for kernels,
/// which have one.
fn whose(stage: crate::reflect::Stage) -> &'static str {
    match stage {
        crate::reflect::Stage::Kernel => "",
        crate::reflect::Stage::Vertex => "the vertex function's ",
        crate::reflect::Stage::Fragment => "the fragment function's ",
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::NoAdapter(why) => write!(f, "no GPU adapter found: {why}"),
            RunError::AdapterNotFound { wanted, available } => write!(
                f,
                "WGPU_ADAPTER_NAME={wanted:?} matches no adapter (available: {})",
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                }
            ),
            RunError::RequestDevice(why) => write!(f, "cannot create a device: {why}"),
            RunError::MissingFeature { feature, adapter } => write!(
                f,
                "the shader needs the wgpu feature `{feature}`, which the device lacks ({adapter})"
            ),
            RunError::UnknownFeature(name) => write!(f, "unknown wgpu feature `{name}`"),
            RunError::Translate(failure) => write!(f, "{}", failure.render().trim_end()),
            RunError::UnknownEntry(name) => write!(f, "no function named `{name}`"),
            RunError::NotAKernel(name) => write!(f, "`{name}` is not a kernel function"),
            RunError::WrongStage { name, expected } => {
                write!(f, "`{name}` is not a {expected} function")
            }
            RunError::InvalidDispatch(why) => write!(f, "invalid dispatch: {why}"),
            RunError::InvalidRender(why) => write!(f, "invalid render: {why}"),
            RunError::MissingBuffer { name, index, stage } => write!(
                f,
                "no buffer given for {}argument `{name}` [[buffer({index})]]",
                whose(*stage)
            ),
            RunError::BufferTooSmall {
                name,
                index,
                len,
                needed,
            } => write!(
                f,
                "buffer for argument `{name}` [[buffer({index})]] has {len} bytes, \
                 but its type needs at least {needed}"
            ),
            RunError::BufferTooLarge {
                name,
                index,
                len,
                limit,
            } => write!(
                f,
                "buffer for argument `{name}` [[buffer({index})]] has {len} bytes, \
                 over the device's binding limit of {limit}"
            ),
            RunError::MissingTexture { name, index, stage } => write!(
                f,
                "no texture given for {}argument `{name}` [[texture({index})]]",
                whose(*stage)
            ),
            RunError::MissingMember {
                name,
                id,
                buffer,
                stage,
            } => write!(
                f,
                "nothing given for member `{name}` [[id({id})]] of {}argument buffer \
                 [[buffer({buffer})]] (its `ArgumentBuffer`, by id)",
                whose(*stage)
            ),
            RunError::TextureMismatch { name, index, why } => write!(
                f,
                "texture for argument `{name}` [[texture({index})]]: {why}"
            ),
            RunError::InvalidSampler { name, why } => write!(f, "sampler `{name}`: {why}"),
            RunError::Image(why) => write!(f, "image: {why}"),
            RunError::Shader(why) => write!(f, "shader: {why}"),
            RunError::Unsupported(what) => write!(f, "{what} is not supported yet"),
            RunError::Gpu(why) => write!(f, "GPU error: {why}"),
            RunError::MissingFunctionConstant {
                function,
                name,
                index,
            } => write!(
                f,
                "`{function}` needs a value for function constant `{name}` [[function_constant({index})]]"
            ),
            RunError::NeedsSpecialization {
                function,
                constants,
            } => write!(
                f,
                "`{function}` needs the values of function constants `{}` when it is translated: \
                 translate it with them (`Options::function_constants`), or run it through \
                 `run_kernel_resources`, a `ComputePipeline` or `render_library`, which do",
                constants.join("`, `")
            ),
        }
    }
}

impl std::error::Error for RunError {}

impl From<Failure> for RunError {
    fn from(failure: Failure) -> Self {
        RunError::Translate(Box::new(failure))
    }
}
