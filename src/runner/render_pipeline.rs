//! Render pipelines made from a library's vertex and fragment functions,
//! used as a Metal host uses `MTLRenderPipelineState` and
//! `MTLRenderCommandEncoder`: each stage's resources set by Metal index
//! (`setVertexBuffer:offset:atIndex:`, `setFragmentTexture:atIndex:`, ...),
//! then `drawPrimitives` into the caller's colour targets.

use super::arguments::{self, ArgumentTable, Resolved};
use super::interface::{Interface, UsedBinding};
use super::points::{self, Primitive};
use super::render::RenderTarget;
use super::vertex_input::{DirectLayout, VertexDescriptor};
use super::{render_targets, resources, vertex_input, Gpu, RunError};
use crate::reflect::{FunctionReflection, Stage};
use crate::Library;
use std::collections::BTreeMap;

/// A vertex and a fragment function of a [`Library`] with the formats of
/// their colour targets (Metal's `MTLRenderPipelineState`), drawing
/// triangle lists, or points with a vertex function writing
/// `[[point_size]]` ([`RenderCommand::draw`]), with Metal's default state:
/// no depth test, no culling, no blending, one sample.
pub struct RenderPipeline {
    vertex: FunctionReflection,
    fragment: FunctionReflection,
    /// The fragment function's interface.
    fragment_interface: Interface,
    /// The `[[stage_in]]`'s vertex buffers, in slot order.
    stage_in: Vec<DirectLayout>,
    /// What each primitive type is drawn with: triangles unless the
    /// fragment function reads `[[point_coord]]`, points if the vertex
    /// function has a point-sprite entry point.
    drawn: Vec<(Primitive, Drawn)>,
    /// The function constant values it was made with: they decide which
    /// conditional arguments exist.
    constants: BTreeMap<u32, f64>,
}

impl std::fmt::Debug for RenderPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderPipeline")
            .field("vertex", &self.vertex.name)
            .field("fragment", &self.fragment.name)
            .finish_non_exhaustive()
    }
}

impl RenderPipeline {
    /// The pipeline of `vertex` and `fragment` (MSL names) of `library`,
    /// drawing into targets of `formats` (`[[color(n)]]` into
    /// `formats[n]`). A `[[stage_in]]` is read from the buffer given to
    /// [`RenderCommand::set_stage_in_buffer`], laid out as the reflection's
    /// `vertexAttributes` say ([`RenderPipeline::with_vertex_descriptor`]
    /// spreads it over several buffers); it must meet WebGPU's 4-byte
    /// alignment.
    pub fn new(
        gpu: &Gpu,
        library: &Library,
        vertex: &str,
        fragment: &str,
        formats: &[wgpu::TextureFormat],
    ) -> Result<RenderPipeline, RunError> {
        Self::with_constants(gpu, library, [vertex, fragment], formats, &BTreeMap::new())
    }

    /// [`RenderPipeline::new`] with `[[function_constant(n)]]` values by
    /// index for both functions (`true`/`false` as 1/0); values for
    /// constants a function does not read are ignored.
    pub fn with_constants(
        gpu: &Gpu,
        library: &Library,
        [vertex, fragment]: [&str; 2],
        formats: &[wgpu::TextureFormat],
        constants: &BTreeMap<u32, f64>,
    ) -> Result<RenderPipeline, RunError> {
        Self::with_vertex_descriptor(gpu, library, [vertex, fragment], formats, constants, None)
    }

    /// [`RenderPipeline::with_constants`] reading the `[[stage_in]]` as
    /// `descriptor` says (Metal's `vertexDescriptor`): each attribute from
    /// the vertex buffer at its `buffer_index`, set with
    /// [`RenderCommand::set_vertex_buffer`] (or, for buffer 0,
    /// [`RenderCommand::set_stage_in_buffer`]). `None` reads them all from
    /// buffer 0, tightly packed in attribute order.
    pub fn with_vertex_descriptor(
        gpu: &Gpu,
        library: &Library,
        [vertex, fragment]: [&str; 2],
        formats: &[wgpu::TextureFormat],
        constants: &BTreeMap<u32, f64>,
        descriptor: Option<&VertexDescriptor>,
    ) -> Result<RenderPipeline, RunError> {
        // The library's WGSL may be for WebGPU; wgpu compiles wgpu's dialect.
        let origin = library.origin();
        let mut options = origin.options.clone();
        options.entries = vec![vertex.to_string(), fragment.to_string()];
        options.target = crate::Target::Wgpu;
        options.half = gpu.half_mode(options.half);
        options.wide_integers = gpu.wide_integers(options.wide_integers);
        // Specialised with the constant values the functions need at
        // translation (W0415), where they need some.
        let library = super::constants::specialized_library(
            &origin.name,
            &origin.text,
            &options,
            &[vertex, fragment],
            constants,
        )?;
        let v = stage_function(&library, vertex, Stage::Vertex)?;
        let f = stage_function(&library, fragment, Stage::Fragment)?;
        gpu.check_features(&v.required_features)?;
        gpu.check_features(&f.required_features)?;
        // Triangles, unless the fragment function reads `[[point_coord]]`
        // (which only points write); points with a point-sprite entry point.
        let mut primitives = Vec::new();
        if points::check_point_coord(f, Primitive::Triangle).is_ok() {
            primitives.push(Primitive::Triangle);
        }
        if v.point_sprite.is_some() {
            primitives.push(Primitive::Point);
        }
        if primitives.is_empty() {
            points::check_point_coord(f, Primitive::Triangle)?;
        }
        let drawn_functions = primitives
            .iter()
            .map(|&p| points::drawn_function(v, p))
            .collect::<Result<Vec<_>, _>>()?;
        let mut stages: Vec<(&str, naga::ShaderStage)> = drawn_functions
            .iter()
            .map(|d| (d.wgsl_entry_point.as_str(), naga::ShaderStage::Vertex))
            .collect();
        stages.push((f.wgsl_entry_point.as_str(), naga::ShaderStage::Fragment));
        let mut interfaces = Interface::of_entries(library.wgsl(), &stages)?;
        let fragment_interface = interfaces
            .pop()
            .expect("of_entries describes every entry asked for");
        if fragment_interface
            .output_builtins
            .contains(&naga::BuiltIn::FragDepth)
        {
            return Err(RunError::Unsupported(format!(
                "a fragment function writing [[depth]] (`{}`) in the pipeline helpers, which \
                 attach no depth target",
                f.name
            )));
        }
        let stage_in = vertex_input::direct_layout(v, &interfaces[0], descriptor)?;
        let targets: Vec<RenderTarget> = formats
            .iter()
            .map(|&format| RenderTarget {
                format,
                clear: [0.0; 4],
            })
            .collect();
        let color_states = render_targets::plan(gpu, f, &fragment_interface, &targets)?;
        let stage_constants = [
            super::pipeline_constants(v, constants)?,
            super::pipeline_constants(f, constants)?,
        ];
        let mut drawn = Vec::new();
        for ((primitive, function), interface) in
            primitives.into_iter().zip(drawn_functions).zip(interfaces)
        {
            let pipeline = resources::scoped(gpu, || {
                let stages = Stages {
                    wgsl: library.wgsl(),
                    functions: [&function, f],
                    constants: &stage_constants,
                };
                create(gpu, &stages, &stage_in, &color_states)
            })?;
            let draw = Drawn {
                function,
                interface,
                pipeline,
            };
            drawn.push((primitive, draw));
        }
        Ok(RenderPipeline {
            vertex: v.clone(),
            fragment: f.clone(),
            fragment_interface,
            stage_in,
            drawn,
            constants: constants.clone(),
        })
    }

    /// What `primitive` is drawn with.
    fn drawn(&self, primitive: Primitive) -> Result<&Drawn, RunError> {
        if let Some((_, d)) = self.drawn.iter().find(|(p, _)| *p == primitive) {
            return Ok(d);
        }
        points::check_point_coord(&self.fragment, primitive)?;
        points::drawn_function(&self.vertex, primitive)?;
        unreachable!("the pipeline has every primitive its functions can draw")
    }

    /// The vertex function's reflection.
    pub fn vertex_function(&self) -> &FunctionReflection {
        &self.vertex
    }

    /// The fragment function's reflection.
    pub fn fragment_function(&self) -> &FunctionReflection {
        &self.fragment
    }

    /// A command encoder for this pipeline with nothing set.
    pub fn encoder<'r>(&self) -> RenderCommand<'_, 'r> {
        RenderCommand {
            pipeline: self,
            vertex: ArgumentTable::default(),
            fragment: ArgumentTable::default(),
            stage_in: None,
        }
    }
}

/// The function `name` of `library`, which must be of `stage` (a render
/// stage): Metal's `newFunctionWithName:` followed by the check a pipeline
/// descriptor makes.
pub fn stage_function<'l>(
    library: &'l Library,
    name: &str,
    stage: Stage,
) -> Result<&'l FunctionReflection, RunError> {
    let function = library
        .function(name)
        .ok_or_else(|| RunError::UnknownEntry(name.to_string()))?;
    if function.stage != stage {
        let expected = match stage {
            Stage::Kernel => "kernel",
            Stage::Vertex => "vertex",
            Stage::Fragment => "fragment",
        };
        return Err(RunError::WrongStage {
            name: name.to_string(),
            expected: expected.to_string(),
        });
    }
    Ok(function)
}

/// The vertex entry point drawing one primitive type, with its pipeline.
struct Drawn {
    /// The vertex function's reflection with that entry point.
    function: FunctionReflection,
    interface: Interface,
    pipeline: wgpu::RenderPipeline,
}

/// The WGSL of a pipeline's two functions and their constants.
struct Stages<'a> {
    wgsl: &'a str,
    functions: [&'a FunctionReflection; 2],
    constants: &'a [Vec<(String, f64)>; 2],
}

/// The wgpu pipeline, its layout derived from the WGSL.
fn create(
    gpu: &Gpu,
    stages: &Stages<'_>,
    stage_in: &[DirectLayout],
    targets: &[wgpu::ColorTargetState],
) -> wgpu::RenderPipeline {
    let [vertex, fragment] = stages.functions;
    let wgsl = stages.wgsl;
    let [vertex_constants, fragment_constants] = stages
        .constants
        .each_ref()
        .map(|c| super::constants::as_wgpu(c));
    let module = gpu
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&vertex.name),
            source: wgpu::ShaderSource::Wgsl(wgsl.into()),
        });
    let buffers: Vec<Option<wgpu::VertexBufferLayout>> = stage_in
        .iter()
        .map(|(_, stride, attributes)| {
            Some(wgpu::VertexBufferLayout {
                array_stride: *stride,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes,
            })
        })
        .collect();
    let targets: Vec<Option<wgpu::ColorTargetState>> = targets.iter().cloned().map(Some).collect();
    gpu.device
        .create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(&vertex.name),
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some(&vertex.wgsl_entry_point),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &vertex_constants,
                    ..Default::default()
                },
                buffers: &buffers,
            },
            primitive: wgpu::PrimitiveState {
                front_face: wgpu::FrontFace::Cw,
                ..Default::default()
            },
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some(&fragment.wgsl_entry_point),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &fragment_constants,
                    ..Default::default()
                },
                targets: &targets,
            }),
            multiview_mask: None,
            cache: None,
        })
}

/// The state of one render command (Metal's `MTLRenderCommandEncoder`):
/// each stage's resources by Metal index. Each draw is submitted at once.
#[derive(Debug)]
pub struct RenderCommand<'p, 'r> {
    pipeline: &'p RenderPipeline,
    vertex: ArgumentTable<'r>,
    fragment: ArgumentTable<'r>,
    stage_in: Option<&'r wgpu::Buffer>,
}

impl<'r> RenderCommand<'_, 'r> {
    /// `setVertexBuffer:offset:atIndex:`.
    pub fn set_vertex_buffer(
        &mut self,
        index: u32,
        buffer: &'r wgpu::Buffer,
        offset: u64,
    ) -> Result<&mut Self, RunError> {
        let function = &self.pipeline.vertex;
        self.vertex.set_buffer(function, index, buffer, offset)?;
        Ok(self)
    }

    /// `setFragmentBuffer:offset:atIndex:`.
    pub fn set_fragment_buffer(
        &mut self,
        index: u32,
        buffer: &'r wgpu::Buffer,
        offset: u64,
    ) -> Result<&mut Self, RunError> {
        let function = &self.pipeline.fragment;
        self.fragment.set_buffer(function, index, buffer, offset)?;
        Ok(self)
    }

    /// `setVertexTexture:atIndex:`.
    pub fn set_vertex_texture(&mut self, index: u32, texture: &'r wgpu::Texture) -> &mut Self {
        self.vertex.set_texture(index, texture);
        self
    }

    /// `setFragmentTexture:atIndex:`.
    pub fn set_fragment_texture(&mut self, index: u32, texture: &'r wgpu::Texture) -> &mut Self {
        self.fragment.set_texture(index, texture);
        self
    }

    /// `setVertexSamplerState:atIndex:`.
    pub fn set_vertex_sampler(&mut self, index: u32, sampler: &'r wgpu::Sampler) -> &mut Self {
        self.vertex.set_sampler(index, sampler);
        self
    }

    /// `setFragmentSamplerState:atIndex:`.
    pub fn set_fragment_sampler(&mut self, index: u32, sampler: &'r wgpu::Sampler) -> &mut Self {
        self.fragment.set_sampler(index, sampler);
        self
    }

    /// The vertices of the vertex function's `[[stage_in]]` in vertex
    /// buffer 0 (what a Metal host's vertex descriptor points at), needs
    /// `VERTEX` usage; it takes the place of a buffer 0 set with
    /// [`RenderCommand::set_vertex_buffer`].
    pub fn set_stage_in_buffer(&mut self, buffer: &'r wgpu::Buffer) -> &mut Self {
        self.stage_in = Some(buffer);
        self
    }

    /// `drawPrimitives:vertexStart:vertexCount:instanceCount:` with triangle
    /// lists, into `targets` (one view per colour target of the pipeline,
    /// in order), each cleared to `clear` first or loaded if `None`.
    pub fn draw_primitives(
        &self,
        gpu: &Gpu,
        targets: &[&wgpu::TextureView],
        clear: Option<wgpu::Color>,
        vertex_count: u32,
        instance_count: u32,
    ) -> Result<(), RunError> {
        self.draw(
            gpu,
            Primitive::Triangle,
            targets,
            clear,
            vertex_count,
            instance_count,
        )
    }

    /// `drawPrimitives:vertexStart:vertexCount:instanceCount:` with
    /// `primitive`: [`Primitive::Point`] draws `vertex_count` points, each
    /// a square `[[point_size]]` pixels across in the viewport of the first
    /// target's size (Metal's default viewport), with the vertex
    /// function's point-sprite entry point.
    pub fn draw(
        &self,
        gpu: &Gpu,
        primitive: Primitive,
        targets: &[&wgpu::TextureView],
        clear: Option<wgpu::Color>,
        vertex_count: u32,
        instance_count: u32,
    ) -> Result<(), RunError> {
        let p = self.pipeline;
        let drawn = p.drawn(primitive)?;
        let vertices = points::vertices_drawn(primitive, vertex_count)?;
        let vertex_buffers = self.stage_in_buffers()?;
        let mut resolved =
            self.vertex
                .resolve(gpu, &drawn.function, &drawn.interface, &p.constants)?;
        let fragment =
            self.fragment
                .resolve(gpu, &p.fragment, &p.fragment_interface, &p.constants)?;
        check_disjoint(&resolved, &fragment)?;
        // A constexpr sampler both stages use is one binding.
        for (used, r) in fragment {
            let at = |(u, _): &(UsedBinding, Resolved<'_>)| {
                (u.group, u.binding) == (used.group, used.binding)
            };
            if !resolved.iter().any(at) {
                resolved.push((used, r));
            }
        }
        resources::scoped(gpu, || {
            let draw = EncodedDraw {
                resolved: &resolved,
                vertex_buffers: &vertex_buffers,
                targets,
                clear,
            };
            self.encode(gpu, drawn, &draw, vertices, instance_count)
        })?
    }

    /// The buffer of each vertex buffer slot the `[[stage_in]]` reads,
    /// with its offset: set with `set_stage_in_buffer` (buffer 0) or
    /// `set_vertex_buffer` at the descriptor's buffer index.
    fn stage_in_buffers(&self) -> Result<Vec<(&'r wgpu::Buffer, u64)>, RunError> {
        let p = self.pipeline;
        let mut out = Vec::with_capacity(p.stage_in.len());
        for &(index, _, _) in &p.stage_in {
            let set = match (index, self.stage_in) {
                (0, Some(buffer)) => Some((buffer, 0)),
                _ => self.vertex.buffer(index),
            };
            let Some(set) = set else {
                return Err(RunError::InvalidRender(format!(
                    "`{}` has a [[stage_in]] read from vertex buffer {index}, and no stage-in \
                     buffer was set there (`set_vertex_buffer({index}, ..)`{})",
                    p.vertex.name,
                    if index == 0 {
                        " or `set_stage_in_buffer`"
                    } else {
                        ""
                    }
                )));
            };
            out.push(set);
        }
        Ok(out)
    }

    fn encode(
        &self,
        gpu: &Gpu,
        drawn: &Drawn,
        draw: &EncodedDraw<'_, '_>,
        vertex_count: u32,
        instance_count: u32,
    ) -> Result<(), RunError> {
        let refs: Vec<(UsedBinding, &Resolved<'_>)> =
            draw.resolved.iter().map(|(u, r)| (*u, r)).collect();
        let (targets, clear) = (draw.targets, draw.clear);
        let pipeline = &drawn.pipeline;
        // The point-sprite viewport: the first target's size.
        let viewport = targets.first().map(|view| {
            let t = view.texture();
            points::viewport_buffer(gpu, [t.width(), t.height()])
        });
        let groups = arguments::bind_groups(
            gpu,
            |g| pipeline.get_bind_group_layout(g),
            &refs,
            viewport.as_ref(),
        )?;
        let load = clear.map_or(wgpu::LoadOp::Load, wgpu::LoadOp::Clear);
        let attachments: Vec<Option<wgpu::RenderPassColorAttachment>> = targets
            .iter()
            .map(|view| {
                Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load,
                        store: wgpu::StoreOp::Store,
                    },
                })
            })
            .collect();
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some(&self.pipeline.fragment.name),
                color_attachments: &attachments,
                ..Default::default()
            });
            pass.set_pipeline(pipeline);
            for (group, bind_group) in groups.iter().enumerate() {
                pass.set_bind_group(group as u32, bind_group, &[]);
            }
            for (slot, (buffer, offset)) in draw.vertex_buffers.iter().enumerate() {
                pass.set_vertex_buffer(slot as u32, buffer.slice(offset..));
            }
            pass.draw(0..vertex_count, 0..instance_count);
        }
        gpu.queue.submit([encoder.finish()]);
        Ok(())
    }
}

/// What one draw binds and draws into.
struct EncodedDraw<'a, 'r> {
    resolved: &'a [(UsedBinding, Resolved<'r>)],
    vertex_buffers: &'a [(&'r wgpu::Buffer, u64)],
    targets: &'a [&'a wgpu::TextureView],
    clear: Option<wgpu::Color>,
}

/// The two stages may share a binding only for the same `constexpr`
/// sampler; otherwise the binding map put two resources in one place.
fn check_disjoint(
    vertex: &[(UsedBinding, Resolved<'_>)],
    fragment: &[(UsedBinding, Resolved<'_>)],
) -> Result<(), RunError> {
    for (v, resolved) in vertex {
        let shared = fragment
            .iter()
            .any(|(f, _)| f.group == v.group && f.binding == v.binding);
        if shared && !matches!(resolved, Resolved::OwnedSampler(_)) {
            return Err(RunError::Shader(format!(
                "the vertex and the fragment function both use @group({}) @binding({})",
                v.group, v.binding
            )));
        }
    }
    Ok(())
}
