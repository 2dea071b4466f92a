//! Running one kernel: Metal's dispatch semantics on top of wgpu.
//!
//! WGSL always runs whole workgroups, and one `dispatch_workgroups` is
//! limited per dimension. The translator therefore reads the grid from a
//! synthetic uniform ([`DispatchParams`]): the runner fills it with the grid in
//! threads, so threads past a ragged `dispatchThreads` grid can skip their
//! work, and with the first threadgroup of each part when a large dispatch
//! is split into several.

use super::bind::{bind_all, Binding, Bound, Created, Inputs, Slot};
use super::interface::Interface;
use super::resources::{self, Readback};
use super::{Gpu, Outputs, Resources, RunError, TextureData, Translation};
use crate::reflect::{DispatchParams, FunctionReflection, SamplerDescriptor, Stage};
use crate::stage_in::StageInRegion;
use std::collections::BTreeMap;

/// A dispatch, with the meaning Metal gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// `dispatchThreads`: `grid` counts threads and need not be a multiple
    /// of the threadgroup size; threads past it do not run.
    Threads {
        /// Threads per grid.
        grid: [u32; 3],
        /// Threads per threadgroup.
        threadgroup: [u32; 3],
    },
    /// `dispatchThreadgroups`: `groups` whole threadgroups.
    Threadgroups {
        /// Threadgroups per grid.
        groups: [u32; 3],
        /// Threads per threadgroup.
        threadgroup: [u32; 3],
    },
}

impl Dispatch {
    /// Threads per threadgroup.
    pub fn threadgroup(&self) -> [u32; 3] {
        match *self {
            Dispatch::Threads { threadgroup, .. } | Dispatch::Threadgroups { threadgroup, .. } => {
                threadgroup
            }
        }
    }

    /// Threadgroups per grid (for `Threads`, rounded up). Assumes a
    /// threadgroup with no zero dimension.
    pub fn groups(&self) -> [u32; 3] {
        match *self {
            Dispatch::Threads { grid, threadgroup } => {
                std::array::from_fn(|d| grid[d].div_ceil(threadgroup[d].max(1)))
            }
            Dispatch::Threadgroups { groups, .. } => groups,
        }
    }

    /// The grid in threads, or `None` if it overflows `u32`.
    pub fn grid_threads(&self) -> Option<[u32; 3]> {
        match *self {
            Dispatch::Threads { grid, .. } => Some(grid),
            Dispatch::Threadgroups {
                groups,
                threadgroup,
            } => {
                let sizes = [0, 1, 2].map(|d| groups[d].checked_mul(threadgroup[d]));
                match sizes {
                    [Some(x), Some(y), Some(z)] => Some([x, y, z]),
                    _ => None,
                }
            }
        }
    }
}

/// Translates `entry` of `source` (threadgroup size and entry list as
/// `options` say), without caching; see [`Gpu::translate`] for the cached
/// form.
pub fn translate_kernel(
    source_name: &str,
    source: &str,
    options: &crate::Options,
    entry: &str,
) -> Result<Translation, RunError> {
    let library = crate::Library::from_source(source_name, source, options)?;
    let function = library
        .function(entry)
        .ok_or_else(|| RunError::UnknownEntry(entry.to_string()))?
        .clone();
    // A vertex function without a `[[position]]` output runs as a kernel does.
    if function.stage != Stage::Kernel && function.vertex_dispatch.is_none() {
        return Err(RunError::NotAKernel(entry.to_string()));
    }
    if let Some(missing) = missing_threadgroup_length(&function) {
        return Err(RunError::InvalidDispatch(missing));
    }
    Ok(Translation {
        wgsl: library.wgsl().to_string(),
        function,
        warnings: library.warnings(),
        warning_diagnostics: library.warning_diagnostics().clone(),
        source_map: library.source_map().clone(),
    })
}

/// [`translate_kernel`] specialised with the function constant values
/// `values` (by Metal index) that the kernel needs at translation (W0415),
/// as Metal specialises a function when the host makes it.
pub fn translate_kernel_specialized(
    source_name: &str,
    source: &str,
    options: &crate::Options,
    entry: &str,
    values: &BTreeMap<u32, f64>,
) -> Result<Translation, RunError> {
    let boxed = super::constants::specialize(options, values, |options| {
        translate_kernel(source_name, source, options, entry).map(Box::new)
    })?;
    Ok(*boxed)
}

/// What to set before dispatching a kernel that indexes threadgroup
/// memory of a length not given (its WGSL waits for it: W0406).
fn missing_threadgroup_length(function: &FunctionReflection) -> Option<String> {
    let arg = function.arguments.iter().find(|a| {
        a.threadgroup
            .as_ref()
            .is_some_and(|t| t.data_size.is_none())
    })?;
    Some(format!(
        "kernel `{}` needs the length of its threadgroup memory `{}` [[threadgroup({})]]: \
         set it with `set_threadgroup_memory_length` (`--threadgroup-memory {}=BYTES`)",
        function.name, arg.name, arg.index, arg.index
    ))
}

/// Translates `entry` of `source` for the dispatch's threadgroup size
/// (cached in `gpu`), then runs it with [`run_compute`].
///
/// `options.entries` and `options.threadgroup_size` are ignored: the entry
/// and the dispatch decide them.
pub fn run_kernel(
    gpu: &Gpu,
    source_name: &str,
    source: &str,
    options: &crate::Options,
    entry: &str,
    dispatch: &Dispatch,
    buffers: &BTreeMap<u32, Vec<u8>>,
) -> Result<BTreeMap<u32, Vec<u8>>, RunError> {
    let translation = gpu.translate(
        source_name,
        source,
        &one_part_options(gpu, options, dispatch),
        entry,
        Some(dispatch.threadgroup()),
    )?;
    run_compute(
        gpu,
        &translation.wgsl,
        &translation.function,
        dispatch,
        buffers,
    )
}

/// `options` with [`crate::Options::one_part_dispatch`] set where the
/// runner will not split `dispatch` into parts on `gpu`.
pub(crate) fn one_part_options(
    gpu: &Gpu,
    options: &crate::Options,
    dispatch: &Dispatch,
) -> crate::Options {
    let max_groups = gpu.limits.max_compute_workgroups_per_dimension;
    let mut options = options.clone();
    options.one_part_dispatch |=
        Plan::new(dispatch, max_groups).is_ok_and(|plan| plan.parts.len() <= 1);
    options
}

/// [`run_kernel`] with textures and samplers: translates, then runs with
/// [`run_compute_resources`]. `options.texture_formats` gives the formats of
/// storage textures.
pub fn run_kernel_resources(
    gpu: &Gpu,
    source_name: &str,
    source: &str,
    options: &crate::Options,
    entry: &str,
    dispatch: &Dispatch,
    resources: &Resources,
) -> Result<Outputs, RunError> {
    // Specialised with the constant values a function needs at
    // translation (array sizes, `case` labels, ...).
    let translation = gpu.translate_specialized(
        source_name,
        source,
        &one_part_options(gpu, options, dispatch),
        entry,
        Some(dispatch.threadgroup()),
        &resources.constants,
    )?;
    run_compute_resources(
        gpu,
        &translation.wgsl,
        &translation.function,
        dispatch,
        resources,
    )
}

/// Runs a translated kernel once.
///
/// `wgsl` must have been translated for the dispatch's threadgroup size
/// (`function.workgroup_size`). `buffers` maps Metal buffer indices to the
/// bytes of each buffer, laid out as a Metal host would write them. Returns
/// every buffer argument that was given bytes, read back after the dispatch
/// (same length as given). A kernel with active texture arguments needs
/// [`run_compute_resources`].
///
/// Everything that can be checked is checked before anything is dispatched:
/// features, sizes against the device limits, missing and too-small buffers.
pub fn run_compute(
    gpu: &Gpu,
    wgsl: &str,
    function: &FunctionReflection,
    dispatch: &Dispatch,
    buffers: &BTreeMap<u32, Vec<u8>>,
) -> Result<BTreeMap<u32, Vec<u8>>, RunError> {
    let max_groups = gpu.limits.max_compute_workgroups_per_dimension;
    run_compute_with_max_groups(gpu, wgsl, function, dispatch, buffers, max_groups)
}

/// [`run_compute`] with textures and samplers.
///
/// Each active `[[texture(n)]]` argument needs `resources.textures[n]`, of
/// the argument's view dimension and a format its WGSL type accepts (a
/// storage texture exactly the reflected storage format); storage views
/// show mip level 0. depth32float textures are filled by a render pass
/// (WebGPU cannot copy into them), which clamps their values to [0, 1].
/// Multisampled textures are not supported yet. Each used `[[sampler(n)]]` gets
/// `resources.samplers[n]` or [`super::default_sampler`]; comparison samplers
/// without a compare function use [`super::DEFAULT_COMPARE`]. Each used
/// `constexpr sampler` is made from its reflected descriptor.
///
/// Returns every buffer given and every storage texture argument that may
/// be written (mip level 0, all layers).
pub fn run_compute_resources(
    gpu: &Gpu,
    wgsl: &str,
    function: &FunctionReflection,
    dispatch: &Dispatch,
    resources: &Resources,
) -> Result<Outputs, RunError> {
    let inputs = Inputs {
        buffers: &resources.buffers,
        textures: &resources.textures,
        samplers: &resources.samplers,
        constants: &resources.constants,
        argument_buffers: &resources.argument_buffers,
        viewport: None,
        stage_in_region: resources.stage_in_region,
        draw_parameters: None,
    };
    let max_groups = gpu.limits.max_compute_workgroups_per_dimension;
    let constants = super::pipeline_constants(function, &resources.constants)?;
    run(
        gpu, wgsl, function, dispatch, inputs, &constants, max_groups,
    )
}

/// A draw of a vertex function run as a compute dispatch (Metal's
/// `drawPrimitives:vertexStart:vertexCount:instanceCount:baseInstance:`
/// with rasterization disabled).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VertexDraw {
    /// The first vertex (`vertexStart`): the first `[[vertex_id]]` and the
    /// `[[base_vertex]]`.
    pub vertex_start: u32,
    /// Vertices drawn (`vertexCount`).
    pub vertex_count: u32,
    /// The first instance (`baseInstance`): the first `[[instance_id]]`
    /// and the `[[base_instance]]`.
    pub base_instance: u32,
    /// Instances drawn (`instanceCount`).
    pub instance_count: u32,
}

/// Runs a vertex function without a `[[position]]` output (translated into
/// a compute entry point, [`crate::reflect::VertexDispatch`]) for `draw`:
/// one thread per vertex and instance, `[[vertex_id]]` from
/// `draw.vertex_start`, `[[instance_id]]` from `draw.base_instance`. Its
/// `[[stage_in]]` attributes are read from `resources.buffers` at the
/// buffer indices the reflection's `stage_input` gives (vertex `v` at
/// element `v` of a per-vertex buffer, counted from the buffer's start as
/// Metal does). Returns what [`run_compute_resources`] returns: every
/// buffer given, and the storage textures it may write.
pub fn run_vertex_dispatch(
    gpu: &Gpu,
    wgsl: &str,
    function: &FunctionReflection,
    draw: &VertexDraw,
    resources: &Resources,
) -> Result<Outputs, RunError> {
    let Some(vertex) = function.vertex_dispatch.as_ref() else {
        return Err(RunError::InvalidDispatch(format!(
            "`{}` is not a vertex function run as a compute dispatch (one without a `[[position]]` output)",
            function.name
        )));
    };
    let fits = |start: u32, count: u32| start.checked_add(count).is_some();
    if !fits(draw.vertex_start, draw.vertex_count) || !fits(draw.base_instance, draw.instance_count)
    {
        return Err(RunError::InvalidDispatch(format!(
            "vertices {} + {} and instances {} + {} do not fit in 32-bit indices",
            draw.vertex_start, draw.vertex_count, draw.base_instance, draw.instance_count
        )));
    }
    let dispatch = Dispatch::Threads {
        grid: [draw.vertex_count, draw.instance_count, 1],
        threadgroup: vertex.threadgroup_size,
    };
    let inputs = Inputs {
        buffers: &resources.buffers,
        textures: &resources.textures,
        samplers: &resources.samplers,
        constants: &resources.constants,
        argument_buffers: &resources.argument_buffers,
        viewport: None,
        stage_in_region: None,
        draw_parameters: Some(crate::reflect::DrawParameters {
            base_vertex: draw.vertex_start,
            base_instance: draw.base_instance,
        }),
    };
    let max_groups = gpu.limits.max_compute_workgroups_per_dimension;
    let constants = super::pipeline_constants(function, &resources.constants)?;
    run(
        gpu, wgsl, function, &dispatch, inputs, &constants, max_groups,
    )
}

/// [`run_compute`] with a lower per-dimension workgroup limit, so tests can
/// exercise split dispatches with small grids. `max_groups` is clamped to
/// the device's limit.
#[doc(hidden)]
pub fn run_compute_with_max_groups(
    gpu: &Gpu,
    wgsl: &str,
    function: &FunctionReflection,
    dispatch: &Dispatch,
    buffers: &BTreeMap<u32, Vec<u8>>,
    max_groups: u32,
) -> Result<BTreeMap<u32, Vec<u8>>, RunError> {
    static NO_TEXTURES: BTreeMap<u32, TextureData> = BTreeMap::new();
    static NO_SAMPLERS: BTreeMap<u32, SamplerDescriptor> = BTreeMap::new();
    static NO_CONSTANTS: BTreeMap<u32, f64> = BTreeMap::new();
    static NO_ARGUMENT_BUFFERS: BTreeMap<u32, super::ArgumentBuffer> = BTreeMap::new();
    let inputs = Inputs {
        buffers,
        textures: &NO_TEXTURES,
        samplers: &NO_SAMPLERS,
        constants: &NO_CONSTANTS,
        argument_buffers: &NO_ARGUMENT_BUFFERS,
        viewport: None,
        stage_in_region: None,
        draw_parameters: None,
    };
    let constants = super::pipeline_constants(function, &BTreeMap::new())?;
    run(
        gpu, wgsl, function, dispatch, inputs, &constants, max_groups,
    )
    .map(|out| out.buffers)
}

/// Checks everything, then binds and dispatches.
fn run(
    gpu: &Gpu,
    wgsl: &str,
    function: &FunctionReflection,
    dispatch: &Dispatch,
    inputs: Inputs<'_>,
    constants: &[(String, f64)],
    max_groups: u32,
) -> Result<Outputs, RunError> {
    let max_groups = max_groups.clamp(1, gpu.limits.max_compute_workgroups_per_dimension);
    check_dispatch(gpu, function, dispatch)?;
    super::arguments::check_given_indices(function, &inputs)?;
    gpu.check_features(&function.required_features)?;
    let interface = Interface::of(wgsl, &function.wgsl_entry_point)?;
    if interface.workgroup_size != dispatch.threadgroup() {
        return Err(RunError::Shader(format!(
            "the WGSL entry point has @workgroup_size{:?} but the dispatch's threadgroup is {:?}",
            interface.workgroup_size,
            dispatch.threadgroup()
        )));
    }
    let plan = Plan::new(dispatch, max_groups)?;
    // Without `setStageInRegion`, the region is the whole grid.
    let inputs = Inputs {
        stage_in_region: inputs.stage_in_region.or(Some(StageInRegion {
            origin: [0; 3],
            size: plan.grid,
        })),
        ..inputs
    };
    if plan.parts.len() > 1 && !uses_dispatch_uniform(function, &interface) {
        return Err(RunError::Shader(format!(
            "the dispatch needs {} parts (over {max_groups} threadgroups in a dimension), \
             but the kernel does not read the dispatch uniform",
            plan.parts.len()
        )));
    }
    let bound = bind_all(gpu, function, &interface, inputs)?;
    let constants = super::constants::with_whole_grid(
        function,
        &interface.overrides,
        super::constants::is_whole_grid(dispatch),
        constants,
    );
    let read = resources::scoped(gpu, || {
        execute(gpu, wgsl, function, &plan, &bound, &constants)
    })??;
    Ok(bound.outputs(read))
}

/// The device-independent and limit checks of a dispatch.
pub(crate) fn check_dispatch(
    gpu: &Gpu,
    function: &FunctionReflection,
    dispatch: &Dispatch,
) -> Result<(), RunError> {
    let invalid = |msg: String| Err(RunError::InvalidDispatch(msg));
    let Some(size) = function
        .workgroup_size
        .filter(|_| function.stage == Stage::Kernel || function.vertex_dispatch.is_some())
    else {
        return Err(RunError::NotAKernel(function.name.clone()));
    };
    let tg = dispatch.threadgroup();
    if size != tg {
        return invalid(format!(
            "the kernel was translated for threadgroup size {size:?}, not {tg:?}"
        ));
    }
    if tg.contains(&0) {
        return invalid(format!("threadgroup size {tg:?} has a zero dimension"));
    }
    let l = &gpu.limits;
    let per_dim = [
        l.max_compute_workgroup_size_x,
        l.max_compute_workgroup_size_y,
        l.max_compute_workgroup_size_z,
    ];
    let total = tg.iter().map(|&x| u64::from(x)).product::<u64>();
    if total > u64::from(l.max_compute_invocations_per_workgroup)
        || (0..3).any(|d| tg[d] > per_dim[d])
    {
        return invalid(format!(
            "threadgroup size {tg:?} is over the device's limits ({} threads, at most {per_dim:?})",
            l.max_compute_invocations_per_workgroup
        ));
    }
    let Some(grid) = dispatch.grid_threads() else {
        return invalid("the grid has more than 2^32 threads in a dimension".into());
    };
    if grid.contains(&0) {
        return invalid(format!("zero-sized grid {grid:?}"));
    }
    Ok(())
}

/// One `dispatch_workgroups` of a (possibly split) dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Part {
    /// The first threadgroup of this part.
    pub offset: [u32; 3],
    /// Threadgroups in this part.
    pub count: [u32; 3],
}

/// How a dispatch is split into parts no larger than the device allows.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The grid in threads.
    pub grid: [u32; 3],
    /// All threadgroups.
    pub groups: [u32; 3],
    /// The parts, in x-fastest order.
    pub parts: Vec<Part>,
}

impl Plan {
    pub(crate) fn new(dispatch: &Dispatch, max_groups: u32) -> Result<Plan, RunError> {
        let grid = dispatch
            .grid_threads()
            .ok_or_else(|| RunError::InvalidDispatch("grid overflows u32".into()))?;
        let groups = dispatch.groups();
        let chunks = groups.map(|n| {
            (0..n.div_ceil(max_groups))
                .map(|k| (k * max_groups, (n - k * max_groups).min(max_groups)))
                .collect::<Vec<_>>()
        });
        let mut parts = Vec::new();
        for &(oz, cz) in &chunks[2] {
            for &(oy, cy) in &chunks[1] {
                for &(ox, cx) in &chunks[0] {
                    parts.push(Part {
                        offset: [ox, oy, oz],
                        count: [cx, cy, cz],
                    });
                }
            }
        }
        Ok(Plan {
            grid,
            groups,
            parts,
        })
    }

    /// The dispatch uniform of one part.
    pub(crate) fn params(&self, part: &Part) -> DispatchParams {
        DispatchParams {
            grid_size: self.grid,
            group_offset: part.offset,
            threadgroups: self.groups,
        }
    }
}

/// True if the entry point reads the dispatch uniform.
pub(crate) fn uses_dispatch_uniform(function: &FunctionReflection, interface: &Interface) -> bool {
    function.dispatch_binding.is_some_and(|d| {
        interface
            .bindings
            .iter()
            .any(|b| b.group == d.group && b.binding == d.binding)
    })
}

/// Creates the pipeline and resources, dispatches every part and reads the
/// buffers and storage textures back. Runs inside an error scope.
fn execute(
    gpu: &Gpu,
    wgsl: &str,
    function: &FunctionReflection,
    plan: &Plan,
    bound: &Bound<'_>,
    constants: &[(String, f64)],
) -> Result<Outputs, RunError> {
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let created = bound.create(gpu, &mut encoder)?;
    let layouts = bind_group_layouts(gpu, &created.bindings);
    let pipeline = create_pipeline(gpu, wgsl, function, &layouts, constants);
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        for part in &plan.parts {
            let params = plan.params(part);
            let uniform = resources::uniform(gpu, "dispatch", &params.to_bytes());
            let groups = bind_groups(gpu, &layouts, &created.bindings, &uniform);
            for (group, bind_group) in groups.iter().enumerate() {
                pass.set_bind_group(group as u32, bind_group, &[]);
            }
            let [x, y, z] = part.count;
            pass.dispatch_workgroups(x, y, z);
        }
    }
    read_back(gpu, encoder, &created)
}

/// Copies every buffer and storage texture to be read back, submits, and
/// collects the bytes.
fn read_back(
    gpu: &Gpu,
    mut encoder: wgpu::CommandEncoder,
    created: &Created,
) -> Result<Outputs, RunError> {
    let reads: Vec<Readback> = created
        .buffers
        .iter()
        .map(|(key, buffer, len)| Readback {
            key: *key,
            buffer,
            len: *len,
        })
        .chain(
            created
                .texel_buffers
                .iter()
                .map(|(key, buffer, shape)| Readback {
                    key: *key,
                    buffer,
                    len: shape.data.len(),
                }),
        )
        .collect();
    let mut staging = resources::stage_readbacks(gpu, &mut encoder, &reads);
    let mut lens: Vec<usize> = reads.iter().map(|r| r.len).collect();
    let texture_staging: Vec<_> = created
        .textures
        .iter()
        .map(|(_, texture, shape)| resources::stage_texture(gpu, &mut encoder, texture, shape))
        .collect();
    for t in &texture_staging {
        staging.push(t.buffer.clone());
        lens.push(t.size);
    }
    gpu.queue.submit([encoder.finish()]);
    let mut bytes = resources::map_readbacks(gpu, &staging, &lens)?.into_iter();
    let mut out = Outputs::default();
    let buffers = created.buffers.len();
    for (read, b) in reads[..buffers].iter().zip(bytes.by_ref()) {
        out.insert_buffer(read.key, b);
    }
    for ((key, _, shape), b) in created.texel_buffers.iter().zip(bytes.by_ref()) {
        out.insert_texture(
            *key,
            TextureData {
                data: b,
                ..shape.clone()
            },
        );
    }
    for (((key, _, shape), t), b) in created.textures.iter().zip(&texture_staging).zip(bytes) {
        out.insert_texture(*key, resources::unpad_texture(shape, t, &b));
    }
    Ok(out)
}

/// The compute pipeline, with an explicit layout: exactly the bindings the
/// entry point uses.
fn create_pipeline(
    gpu: &Gpu,
    wgsl: &str,
    function: &FunctionReflection,
    layouts: &[wgpu::BindGroupLayout],
    constants: &[(String, f64)],
) -> wgpu::ComputePipeline {
    let module = gpu
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&function.name),
            source: wgpu::ShaderSource::Wgsl(wgsl.into()),
        });
    let layout_refs: Vec<Option<&wgpu::BindGroupLayout>> = layouts.iter().map(Some).collect();
    let pipeline_layout = gpu
        .device
        .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(&function.name),
            bind_group_layouts: &layout_refs,
            immediate_size: 0,
        });
    gpu.device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&function.name),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some(&function.wgsl_entry_point),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: &super::constants::as_wgpu(constants),
                ..Default::default()
            },
            cache: None,
        })
}

/// The bind groups of one part: each binding gets its object, the dispatch
/// uniform this part's `uniform`.
fn bind_groups(
    gpu: &Gpu,
    layouts: &[wgpu::BindGroupLayout],
    bindings: &[Binding],
    uniform: &wgpu::Buffer,
) -> Vec<wgpu::BindGroup> {
    layouts
        .iter()
        .enumerate()
        .map(|(group, layout)| {
            let entries: Vec<wgpu::BindGroupEntry> = bindings
                .iter()
                .filter(|b| b.used.group == group as u32)
                .map(|b| wgpu::BindGroupEntry {
                    binding: b.used.binding,
                    resource: slot_resource(&b.slot, uniform),
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

fn slot_resource<'a>(slot: &'a Slot, uniform: &'a wgpu::Buffer) -> wgpu::BindingResource<'a> {
    match slot {
        Slot::Buffer(buffer) => buffer.as_entire_binding(),
        Slot::Dispatch => uniform.as_entire_binding(),
        Slot::Texture(view) => wgpu::BindingResource::TextureView(view),
        Slot::Sampler(sampler) => wgpu::BindingResource::Sampler(sampler),
    }
}

/// One bind group layout per group up to the highest one used (a gap gets
/// an empty layout).
fn bind_group_layouts(gpu: &Gpu, bindings: &[Binding]) -> Vec<wgpu::BindGroupLayout> {
    let count = bindings.iter().map(|b| b.used.group + 1).max().unwrap_or(0);
    (0..count)
        .map(|group| {
            let entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
                .iter()
                .filter(|b| b.used.group == group)
                .map(|b| wgpu::BindGroupLayoutEntry {
                    binding: b.used.binding,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: b.ty,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_geometry() {
        let d = Dispatch::Threads {
            grid: [1000, 3, 1],
            threadgroup: [64, 2, 1],
        };
        assert_eq!(d.groups(), [16, 2, 1]);
        assert_eq!(d.grid_threads(), Some([1000, 3, 1]));
        let d = Dispatch::Threadgroups {
            groups: [4, 2, 1],
            threadgroup: [64, 1, 1],
        };
        assert_eq!(d.groups(), [4, 2, 1]);
        assert_eq!(d.grid_threads(), Some([256, 2, 1]));
        let d = Dispatch::Threadgroups {
            groups: [1 << 20, 1, 1],
            threadgroup: [1 << 12, 1, 1],
        };
        assert_eq!(d.grid_threads(), None);
    }

    #[test]
    fn split_plan() {
        let d = Dispatch::Threads {
            grid: [40, 30, 1],
            threadgroup: [4, 2, 1],
        };
        let plan = Plan::new(&d, 4).unwrap();
        assert_eq!(plan.groups, [10, 15, 1]);
        assert_eq!(plan.parts.len(), 3 * 4);
        assert_eq!(
            plan.parts[0],
            Part {
                offset: [0, 0, 0],
                count: [4, 4, 1]
            }
        );
        assert_eq!(
            plan.parts[2],
            Part {
                offset: [8, 0, 0],
                count: [2, 4, 1]
            }
        );
        assert_eq!(
            plan.parts[11],
            Part {
                offset: [8, 12, 0],
                count: [2, 3, 1]
            }
        );
        let total: u32 = plan
            .parts
            .iter()
            .map(|p| p.count.iter().product::<u32>())
            .sum();
        assert_eq!(total, 150);
    }
}
