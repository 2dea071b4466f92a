//! Drawing with a vertex and a fragment function, as a Metal host program
//! would with a render pipeline and one `drawPrimitives` call.
//!
//! Both functions live in one WGSL module. Vertex functions bind their
//! arguments in `@group(0)` and fragment functions in `@group(1)` (as the
//! reflection says), so the pipeline layout is the union of what each entry
//! point uses, each binding visible to the stage(s) using it. A `constexpr
//! sampler` both stages use may sit at one binding; it is then one sampler.

use super::bind::{bind_all, Binding, Bound, Inputs, Slot};
use super::interface::{Interface, UsedBinding};
use super::points;
use super::resources::{self, TextureStaging};
use super::samplers::SamplerPlan;
use super::vertex_input::{self, VertexDescriptor, VertexInput};
use super::{render_targets, Gpu, RunError, TextureData};
use crate::reflect::{DrawParameters, FunctionReflection, SamplerDescriptor, Stage};
use std::collections::BTreeMap;
use wgpu::util::DeviceExt;

/// One colour attachment of a draw.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderTarget {
    /// Its texel format (a renderable colour format a [`TextureData`] may
    /// have; float and normalised formats for `float`/`half` outputs, `sint`
    /// ones for `int`, `uint` ones for `uint`).
    pub format: wgpu::TextureFormat,
    /// The colour it is cleared to before the draw (Metal's `clearColor`
    /// with `MTLLoadActionClear`), in the format's value range.
    pub clear: [f64; 4],
}

impl Default for RenderTarget {
    /// rgba8unorm cleared to transparent black.
    fn default() -> Self {
        RenderTarget {
            format: wgpu::TextureFormat::Rgba8Unorm,
            clear: [0.0; 4],
        }
    }
}

impl RenderTarget {
    /// The default targets of a fragment function: one per colour index
    /// up to its highest `[[color(m)]]` (at least one), each cleared to
    /// zero, rgba8unorm for `float`/`half` outputs (and for indices without
    /// an output), rgba8sint for signed and rgba8uint for unsigned integer
    /// ones.
    pub fn defaults_for(fragment: &FunctionReflection) -> Vec<RenderTarget> {
        let count = fragment
            .color_outputs
            .iter()
            .map(|o| o.index as usize + 1)
            .max()
            .unwrap_or(1);
        (0..count)
            .map(|index| {
                let output = fragment
                    .color_outputs
                    .iter()
                    .find(|o| o.index as usize == index);
                let kind = output.and_then(|o| render_targets::output_kind(&o.data_type));
                let format = match kind {
                    Some(naga::ScalarKind::Sint) => wgpu::TextureFormat::Rgba8Sint,
                    Some(naga::ScalarKind::Uint) => wgpu::TextureFormat::Rgba8Uint,
                    _ => wgpu::TextureFormat::Rgba8Unorm,
                };
                RenderTarget {
                    format,
                    clear: [0.0; 4],
                }
            })
            .collect()
    }
}

/// Everything a draw binds and draws into, by Metal index.
#[derive(Clone, Debug)]
pub struct RenderResources {
    /// The vertex function's `[[buffer(n)]]` arguments: raw bytes in
    /// Metal's layout. When the function has a `[[stage_in]]`, they also
    /// hold its vertices, where `vertex_descriptor` says.
    pub vertex_buffers: BTreeMap<u32, Vec<u8>>,
    /// Which of `vertex_buffers` hold the `[[stage_in]]` attributes, and
    /// where (Metal's `MTLRenderPipelineDescriptor.vertexDescriptor`);
    /// `None` reads them all from buffer 0, tightly packed in attribute
    /// order as the reflection's attribute offsets and `vertex_stride` say.
    pub vertex_descriptor: Option<VertexDescriptor>,
    /// The fragment function's `[[buffer(n)]]` arguments.
    pub fragment_buffers: BTreeMap<u32, Vec<u8>>,
    /// The resources of the vertex function's argument buffers, by
    /// `[[buffer(n)]]` (their data is in `vertex_buffers[n]`).
    pub vertex_argument_buffers: BTreeMap<u32, super::ArgumentBuffer>,
    /// The resources of the fragment function's argument buffers, by
    /// `[[buffer(n)]]` (their data is in `fragment_buffers[n]`).
    pub fragment_argument_buffers: BTreeMap<u32, super::ArgumentBuffer>,
    /// `[[texture(n)]]` of either function (a texture given once serves
    /// both stages' argument `n`).
    pub textures: BTreeMap<u32, TextureData>,
    /// `[[sampler(n)]]` of either function; one given none gets
    /// [`super::default_sampler`]. `constexpr sampler`s come from the
    /// reflection.
    pub samplers: BTreeMap<u32, SamplerDescriptor>,
    /// Width of every target in pixels.
    pub width: u32,
    /// Height of every target in pixels.
    pub height: u32,
    /// Vertices drawn (`vertexCount`): triangles' corners, or points.
    pub vertex_count: u32,
    /// What the vertices draw (the `MTLPrimitiveType` of `drawPrimitives`):
    /// a triangle list, or points, each a square `[[point_size]]` pixels
    /// across drawn by the vertex function's point-sprite entry point.
    pub primitive: super::Primitive,
    /// Instances drawn (`instanceCount`).
    pub instance_count: u32,
    /// The first vertex drawn (`vertexStart`): the first `[[vertex_id]]`,
    /// and the `[[base_vertex]]` of this non-indexed draw.
    pub vertex_start: u32,
    /// The first instance drawn (`baseInstance`): the first
    /// `[[instance_id]]`, and `[[base_instance]]`.
    pub base_instance: u32,
    /// The colour attachments, by `[[color(m)]]` index.
    pub targets: Vec<RenderTarget>,
    /// `[[function_constant(n)]]` values for both functions (one
    /// `MTLFunctionConstantValues` serves both, as in Metal).
    pub constants: BTreeMap<u32, f64>,
}

impl RenderResources {
    /// A draw of `vertex_count` vertices, one instance, into one default
    /// [`RenderTarget`] of `width` × `height`, with nothing bound.
    pub fn new(width: u32, height: u32, vertex_count: u32) -> RenderResources {
        RenderResources {
            vertex_buffers: BTreeMap::new(),
            vertex_descriptor: None,
            fragment_buffers: BTreeMap::new(),
            vertex_argument_buffers: BTreeMap::new(),
            fragment_argument_buffers: BTreeMap::new(),
            textures: BTreeMap::new(),
            samplers: BTreeMap::new(),
            width,
            height,
            vertex_count,
            primitive: super::Primitive::Triangle,
            instance_count: 1,
            vertex_start: 0,
            base_instance: 0,
            targets: vec![RenderTarget::default()],
            constants: BTreeMap::new(),
        }
    }
}

impl Default for RenderResources {
    /// [`RenderResources::new`] with a zero size and no vertices: set
    /// `width`, `height` and `vertex_count` before drawing.
    fn default() -> Self {
        Self::new(0, 0, 0)
    }
}

/// [`render`] with the functions of a [`crate::Library`], by MSL name. The
/// library must have been translated with [`crate::Target::Wgpu`] (the
/// WGSL is compiled by wgpu).
pub fn render_library(
    gpu: &Gpu,
    library: &crate::Library,
    vertex: &str,
    fragment: &str,
    resources: &RenderResources,
) -> Result<Vec<TextureData>, RunError> {
    // What the device lacks (`shader-f16`, `shader-int64`) is emulated: translate again.
    let origin = library.origin();
    let emulated;
    let awaits = [vertex, fragment]
        .iter()
        .filter_map(|f| library.function(f))
        .any(|f| f.awaits_function_constants());
    let library = match (gpu.fitted_options(&origin.options), awaits) {
        (None, false) => library,
        (fitted, _) => {
            // Specialised with the constant values the functions need at
            // translation (W0415), where they need some.
            let options = fitted.unwrap_or_else(|| origin.options.clone());
            emulated = super::constants::specialized_library(
                &origin.name,
                &origin.text,
                &options,
                &[vertex, fragment],
                &resources.constants,
            )?;
            &emulated
        }
    };
    let v = super::stage_function(library, vertex, Stage::Vertex)?;
    let f = super::stage_function(library, fragment, Stage::Fragment)?;
    render(gpu, library.wgsl(), v, f, resources)
}

/// Draws `resources.vertex_count` vertices × `resources.instance_count`
/// instances as a triangle list (or, with [`super::Primitive::Point`], as
/// points: the vertex function's point-sprite entry point draws 6 vertices
/// per point, with the targets' size as the viewport) with the vertex
/// function `vertex` and the fragment function `fragment` of `wgsl`, into
/// `resources.targets` (cleared first), and returns each target's image in
/// target order.
///
/// The pipeline is Metal's default render pipeline: no depth or stencil
/// attachment (a `[[depth]]` output is dropped), no culling, clockwise front faces (`[[front_facing]]`), no blending
/// (see below for dual-source outputs), one sample, a viewport covering
/// the targets.
///
/// Everything that can be checked is checked before anything is drawn: the
/// stages, features, the size against the device, the `[[stage_in]]`
/// vertices (each vertex buffer the descriptor names, buffer 0 without
/// one, must hold its stride × `vertex_count` bytes), buffers and textures of both functions as [`super::run_compute`]
/// checks them, one target per colour output with a format holding the
/// output's kind of value, and the WGSL against the reflection. A fragment
/// function with a second source (`[[color(0), index(1)]]`) needs wgpu's
/// `DUAL_SOURCE_BLENDING` and blends `src0 × src1 + dst × (1 − src1)`.
pub fn render(
    gpu: &Gpu,
    wgsl: &str,
    vertex: &FunctionReflection,
    fragment: &FunctionReflection,
    resources: &RenderResources,
) -> Result<Vec<TextureData>, RunError> {
    check_stage(vertex, Stage::Vertex, "vertex")?;
    check_stage(fragment, Stage::Fragment, "fragment")?;
    // Points are drawn by the vertex function's point-sprite entry point.
    let drawn = points::drawn_function(vertex, resources.primitive)?;
    let vertex = &drawn;
    points::check_point_coord(fragment, resources.primitive)?;
    let vertices = points::vertices_drawn(resources.primitive, resources.vertex_count)?;
    check_draw_range(resources)?;
    gpu.check_features(&vertex.required_features)?;
    gpu.check_features(&fragment.required_features)?;
    check_size(gpu, resources)?;
    super::pipeline_constants(vertex, &resources.constants)?;
    super::pipeline_constants(fragment, &resources.constants)?;
    let stages = [
        (vertex.wgsl_entry_point.as_str(), naga::ShaderStage::Vertex),
        (
            fragment.wgsl_entry_point.as_str(),
            naga::ShaderStage::Fragment,
        ),
    ];
    let Ok([vi, fi]) = <[Interface; 2]>::try_from(Interface::of_entries(wgsl, &stages)?) else {
        unreachable!("of_entries describes every entry asked for")
    };
    // Vertex buffers hold every vertex up to the last drawn.
    let input = vertex_input::plan(
        vertex,
        &vi,
        resources.vertex_descriptor.as_ref(),
        &resources.vertex_buffers,
        resources.vertex_start + resources.vertex_count,
    )?;
    let targets = render_targets::plan(gpu, fragment, &fi, &resources.targets)?;
    let writes_depth = fi.output_builtins.contains(&naga::BuiltIn::FragDepth);
    let inputs = |buffers, argument_buffers| Inputs {
        buffers,
        textures: &resources.textures,
        samplers: &resources.samplers,
        constants: &resources.constants,
        argument_buffers,
        viewport: None,
        stage_in_region: None,
        draw_parameters: Some(DrawParameters {
            base_vertex: resources.vertex_start,
            base_instance: resources.base_instance,
        }),
    };
    let vertex_inputs = Inputs {
        viewport: Some([resources.width, resources.height]),
        ..inputs(
            &resources.vertex_buffers,
            &resources.vertex_argument_buffers,
        )
    };
    let fragment_inputs = inputs(
        &resources.fragment_buffers,
        &resources.fragment_argument_buffers,
    );
    let vertex_bound = bind_all(gpu, vertex, &vi, vertex_inputs)?;
    let fragment_bound = bind_all(gpu, fragment, &fi, fragment_inputs)?;
    check_shared(&vertex_bound, &fragment_bound)?;
    let draw = Draw {
        wgsl,
        vertex,
        fragment,
        resources,
        vertices,
        input,
        targets,
        writes_depth,
        vertex_bound,
        fragment_bound,
    };
    resources::scoped(gpu, || draw.execute(gpu))?
}

/// `function` must be of `stage`; render functions read no dispatch
/// uniform.
fn check_stage(function: &FunctionReflection, stage: Stage, name: &str) -> Result<(), RunError> {
    if function.stage != stage {
        return Err(RunError::WrongStage {
            name: function.name.clone(),
            expected: name.to_string(),
        });
    }
    if function.vertex_dispatch.is_some() {
        return Err(RunError::Shader(format!(
            "vertex function `{}` has no `[[position]]` output (rasterization disabled): \
             it runs as a compute dispatch (`run_vertex_dispatch`), not in a render pipeline",
            function.name
        )));
    }
    if function.dispatch_binding.is_some() {
        return Err(RunError::Shader(format!(
            "{name} function `{}` has a dispatch uniform, which only kernels have",
            function.name
        )));
    }
    Ok(())
}

/// The draw's vertices and instances, counted from its first, must be
/// numbered within `u32` (and, for points, their sprites' six vertices each).
fn check_draw_range(resources: &RenderResources) -> Result<(), RunError> {
    let last_vertex = resources.vertex_start.checked_add(resources.vertex_count);
    let last_instance = resources
        .base_instance
        .checked_add(resources.instance_count);
    let sprites = last_vertex.map(|n| points::vertices_drawn(resources.primitive, n));
    if last_instance.is_none() || !matches!(sprites, Some(Ok(_))) {
        return Err(RunError::InvalidRender(format!(
            "vertices {} + {} and instances {} + {} do not fit in 32-bit indices",
            resources.vertex_start,
            resources.vertex_count,
            resources.base_instance,
            resources.instance_count
        )));
    }
    Ok(())
}

/// The targets must have a size the device can create.
fn check_size(gpu: &Gpu, resources: &RenderResources) -> Result<(), RunError> {
    let max = gpu.limits.max_texture_dimension_2d;
    let (w, h) = (resources.width, resources.height);
    if w == 0 || h == 0 || w > max || h > max {
        return Err(RunError::InvalidRender(format!(
            "a {w}x{h} target; each side must be between 1 and {max}"
        )));
    }
    Ok(())
}

/// Where the two stages use the same binding it must be the same sampler
/// (a `constexpr sampler` both use); anything else is a collision.
fn check_shared(vertex: &Bound<'_>, fragment: &Bound<'_>) -> Result<(), RunError> {
    let fragment_points = points(fragment);
    for (at, v) in points(vertex) {
        for (_, f) in fragment_points.iter().filter(|(p, _)| *p == at) {
            let same = matches!((v, f), (Some(v), Some(f))
                if v.descriptor == f.descriptor && v.binding_type == f.binding_type);
            if !same {
                return Err(collision(at));
            }
        }
    }
    Ok(())
}

/// Every binding of one stage, with the sampler made there if it is one.
fn points<'b>(bound: &'b Bound<'_>) -> Vec<((u32, u32), Option<&'b SamplerPlan>)> {
    let at = |u: UsedBinding| (u.group, u.binding);
    let buffers = bound.buffers.iter().filter_map(|b| b.used);
    let textures = bound.textures.iter().filter_map(|t| t.used);
    let placeholders = bound.placeholders.iter().map(|(_, u)| *u);
    let samplers = bound.samplers.iter().map(|s| (at(s.used), Some(&s.plan)));
    buffers
        .chain(textures)
        .chain(placeholders)
        .map(|u| (at(u), None))
        .chain(samplers)
        .collect()
}

fn collision((group, binding): (u32, u32)) -> RunError {
    RunError::Shader(format!(
        "the vertex and the fragment function both use @group({group}) @binding({binding}) \
         for different resources"
    ))
}

/// The format of the scratch depth target.
const SCRATCH_DEPTH: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// A draw whose inputs have all been checked.
struct Draw<'a> {
    wgsl: &'a str,
    vertex: &'a FunctionReflection,
    fragment: &'a FunctionReflection,
    resources: &'a RenderResources,
    /// WebGPU vertices per instance (6 per point).
    vertices: u32,
    /// One per vertex buffer the `[[stage_in]]` reads, in slot order.
    input: Vec<VertexInput>,
    targets: Vec<wgpu::ColorTargetState>,
    /// The fragment function writes `[[depth]]`, which wgpu accepts only
    /// with a depth attachment; Metal drops it without one, so the draw
    /// gets a scratch depth target that neither tests nor is read.
    writes_depth: bool,
    vertex_bound: Bound<'a>,
    fragment_bound: Bound<'a>,
}

/// A binding with the stages that use it.
struct StageBinding {
    binding: Binding,
    visibility: wgpu::ShaderStages,
}

impl Draw<'_> {
    /// Creates everything, draws and reads the targets back. Runs inside
    /// an error scope.
    fn execute(&self, gpu: &Gpu) -> Result<Vec<TextureData>, RunError> {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        let vertex = self.vertex_bound.create(gpu, &mut encoder)?;
        let fragment = self.fragment_bound.create(gpu, &mut encoder)?;
        let bindings = merge(vertex.bindings, fragment.bindings);
        let layouts = bind_group_layouts(gpu, &bindings);
        let groups = bind_groups(gpu, &layouts, &bindings);
        let pipeline = self.create_pipeline(gpu, &layouts);
        let vertex_buffers: Vec<wgpu::Buffer> = self
            .input
            .iter()
            .map(|input| {
                gpu.device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("stage_in"),
                        contents: &input.data,
                        usage: wgpu::BufferUsages::VERTEX,
                    })
            })
            .collect();
        let targets = self.create_targets(gpu);
        let views: Vec<wgpu::TextureView> = targets
            .iter()
            .map(|(t, _)| t.create_view(&Default::default()))
            .collect();
        let depth = self.writes_depth.then(|| self.scratch_depth(gpu));
        {
            let mut pass = self.begin_pass(&mut encoder, &views, depth.as_ref());
            pass.set_pipeline(&pipeline);
            for (group, bind_group) in groups.iter().enumerate() {
                pass.set_bind_group(group as u32, bind_group, &[]);
            }
            for (slot, buffer) in vertex_buffers.iter().enumerate() {
                pass.set_vertex_buffer(slot as u32, buffer.slice(..));
            }
            let r = self.resources;
            let first = points::vertices_drawn(r.primitive, r.vertex_start).unwrap_or(0);
            let instances = r.base_instance..r.base_instance.saturating_add(r.instance_count);
            pass.draw(first..first + self.vertices, instances);
        }
        read_back(gpu, encoder, &targets)
    }

    /// One texture per target, the size of the draw, readable by copies.
    fn create_targets(&self, gpu: &Gpu) -> Vec<(wgpu::Texture, TextureData)> {
        let r = self.resources;
        r.targets
            .iter()
            .map(|target| {
                let shape = TextureData::new_2d(target.format, r.width, r.height, Vec::new());
                let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
                    label: Some("render target"),
                    size: wgpu::Extent3d {
                        width: r.width,
                        height: r.height,
                        depth_or_array_layers: 1,
                    },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format: target.format,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
                    view_formats: &[],
                });
                (texture, shape)
            })
            .collect()
    }

    /// The depth target of a fragment function writing `[[depth]]`.
    fn scratch_depth(&self, gpu: &Gpu) -> wgpu::TextureView {
        let r = self.resources;
        let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("scratch depth"),
            size: wgpu::Extent3d {
                width: r.width,
                height: r.height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: SCRATCH_DEPTH,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        texture.create_view(&Default::default())
    }

    /// The render pass, every target cleared to its colour and stored.
    fn begin_pass<'p>(
        &self,
        encoder: &'p mut wgpu::CommandEncoder,
        views: &[wgpu::TextureView],
        depth: Option<&wgpu::TextureView>,
    ) -> wgpu::RenderPass<'p> {
        let attachments: Vec<Option<wgpu::RenderPassColorAttachment>> = views
            .iter()
            .zip(&self.resources.targets)
            .map(|(view, target)| {
                let [r, g, b, a] = target.clear;
                Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a }),
                        store: wgpu::StoreOp::Store,
                    },
                })
            })
            .collect();
        encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some(&self.fragment.name),
            color_attachments: &attachments,
            depth_stencil_attachment: depth.map(|view| wgpu::RenderPassDepthStencilAttachment {
                view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            ..Default::default()
        })
    }

    /// The render pipeline, with an explicit layout.
    fn create_pipeline(
        &self,
        gpu: &Gpu,
        layouts: &[wgpu::BindGroupLayout],
    ) -> wgpu::RenderPipeline {
        let device = &gpu.device;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&self.vertex.name),
            source: wgpu::ShaderSource::Wgsl(self.wgsl.into()),
        });
        let layout_refs: Vec<Option<&wgpu::BindGroupLayout>> = layouts.iter().map(Some).collect();
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(&self.vertex.name),
            bind_group_layouts: &layout_refs,
            immediate_size: 0,
        });
        let buffers: Vec<Option<wgpu::VertexBufferLayout>> = self
            .input
            .iter()
            .map(|input| {
                Some(wgpu::VertexBufferLayout {
                    array_stride: input.stride,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &input.attributes,
                })
            })
            .collect();
        let targets: Vec<Option<wgpu::ColorTargetState>> =
            self.targets.iter().cloned().map(Some).collect();
        // Checked in `render`, before anything was created.
        let constants =
            |f| super::pipeline_constants(f, &self.resources.constants).unwrap_or_default();
        let (vertex_constants, fragment_constants) =
            (constants(self.vertex), constants(self.fragment));
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(&self.vertex.name),
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some(&self.vertex.wgsl_entry_point),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &super::constants::as_wgpu(&vertex_constants),
                    ..Default::default()
                },
                buffers: &buffers,
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::TriangleList,
                // MTLRenderCommandEncoder's default winding.
                front_face: wgpu::FrontFace::Cw,
                cull_mode: None,
                ..Default::default()
            },
            depth_stencil: self.writes_depth.then(|| wgpu::DepthStencilState {
                format: SCRATCH_DEPTH,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Always),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some(&self.fragment.wgsl_entry_point),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &super::constants::as_wgpu(&fragment_constants),
                    ..Default::default()
                },
                targets: &targets,
            }),
            multiview_mask: None,
            cache: None,
        })
    }
}

/// Both stages' bindings, each once, visible to the stages using it (a
/// shared one was checked to be the same sampler).
fn merge(vertex: Vec<Binding>, fragment: Vec<Binding>) -> Vec<StageBinding> {
    let mut out: Vec<StageBinding> = vertex
        .into_iter()
        .map(|binding| StageBinding {
            binding,
            visibility: wgpu::ShaderStages::VERTEX,
        })
        .collect();
    for binding in fragment {
        let (g, b) = (binding.used.group, binding.used.binding);
        match out
            .iter_mut()
            .find(|s| s.binding.used.group == g && s.binding.used.binding == b)
        {
            Some(shared) => shared.visibility |= wgpu::ShaderStages::FRAGMENT,
            None => out.push(StageBinding {
                binding,
                visibility: wgpu::ShaderStages::FRAGMENT,
            }),
        }
    }
    out.sort_by_key(|s| (s.binding.used.group, s.binding.used.binding));
    out
}

/// One bind group layout per group up to the highest one used (a gap gets
/// an empty layout: a vertex function without resources leaves group 0
/// empty).
fn bind_group_layouts(gpu: &Gpu, bindings: &[StageBinding]) -> Vec<wgpu::BindGroupLayout> {
    let count = bindings
        .iter()
        .map(|s| s.binding.used.group + 1)
        .max()
        .unwrap_or(0);
    (0..count)
        .map(|group| {
            let entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
                .iter()
                .filter(|s| s.binding.used.group == group)
                .map(|s| wgpu::BindGroupLayoutEntry {
                    binding: s.binding.used.binding,
                    visibility: s.visibility,
                    ty: s.binding.ty,
                    count: None,
                })
                .collect();
            gpu.device
                .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: None,
                    entries: &entries,
                })
        })
        .collect()
}

/// The bind groups, one per layout.
fn bind_groups(
    gpu: &Gpu,
    layouts: &[wgpu::BindGroupLayout],
    bindings: &[StageBinding],
) -> Vec<wgpu::BindGroup> {
    layouts
        .iter()
        .enumerate()
        .map(|(group, layout)| {
            let entries: Vec<wgpu::BindGroupEntry> = bindings
                .iter()
                .filter(|s| s.binding.used.group == group as u32)
                .map(|s| wgpu::BindGroupEntry {
                    binding: s.binding.used.binding,
                    resource: slot_resource(&s.binding.slot),
                })
                .collect();
            gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout,
                entries: &entries,
            })
        })
        .collect()
}

fn slot_resource(slot: &Slot) -> wgpu::BindingResource<'_> {
    match slot {
        Slot::Buffer(buffer) => buffer.as_entire_binding(),
        Slot::Texture(view) => wgpu::BindingResource::TextureView(view),
        Slot::Sampler(sampler) => wgpu::BindingResource::Sampler(sampler),
        // check_stage refused reflections with a dispatch uniform.
        Slot::Dispatch => unreachable!("render functions have no dispatch uniform"),
    }
}

/// Copies every target into a mappable buffer, submits, and returns the
/// images with the copies' row padding removed.
fn read_back(
    gpu: &Gpu,
    mut encoder: wgpu::CommandEncoder,
    targets: &[(wgpu::Texture, TextureData)],
) -> Result<Vec<TextureData>, RunError> {
    let staging: Vec<TextureStaging> = targets
        .iter()
        .map(|(texture, shape)| resources::stage_texture(gpu, &mut encoder, texture, shape))
        .collect();
    gpu.queue.submit([encoder.finish()]);
    let buffers: Vec<wgpu::Buffer> = staging.iter().map(|s| s.buffer.clone()).collect();
    let lens: Vec<usize> = staging.iter().map(|s| s.size).collect();
    let bytes = resources::map_readbacks(gpu, &buffers, &lens)?;
    Ok(targets
        .iter()
        .zip(&staging)
        .zip(&bytes)
        .map(|(((_, shape), s), b)| resources::unpad_texture(shape, s, b))
        .collect())
}
