//! Running one kernel: Metal's dispatch semantics on top of wgpu.
//!
//! WGSL always runs whole workgroups, and one `dispatch_workgroups` is
//! limited per dimension. The translator therefore reads the grid from a
//! synthetic uniform ([`DispatchParams`]): the runner fills it with the grid in
//! threads, so threads past a ragged `dispatchThreads` grid can skip their
//! work, and with the first threadgroup of each part when a large dispatch
//! is split into several.

use super::interface::{BufferBinding, Interface, UsedBinding};
use super::resources::{self, Readback};
use super::{Gpu, RunError, Translation};
use crate::reflect::{
    Argument, ArgumentKind, DispatchParams, FunctionReflection, Stage, WgslBinding,
};
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
    if function.stage != Stage::Kernel {
        return Err(RunError::NotAKernel(entry.to_string()));
    }
    Ok(Translation {
        wgsl: library.wgsl().to_string(),
        function,
        warnings: library.warnings(),
    })
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
    let size = Some(dispatch.threadgroup());
    let translation = gpu.translate(source_name, source, options, entry, size)?;
    run_compute(
        gpu,
        &translation.wgsl,
        &translation.function,
        dispatch,
        buffers,
    )
}

/// Runs a translated kernel once.
///
/// `wgsl` must have been translated for the dispatch's threadgroup size
/// (`function.workgroup_size`). `buffers` maps Metal buffer indices to the
/// bytes of each buffer, laid out as a Metal host would write them. Returns
/// every buffer argument that was given bytes, read back after the dispatch
/// (same length as given).
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
    let max_groups = max_groups.clamp(1, gpu.limits.max_compute_workgroups_per_dimension);
    check_dispatch(gpu, function, dispatch)?;
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
    if plan.parts.len() > 1 && !uses_dispatch_uniform(function, &interface) {
        return Err(RunError::Shader(format!(
            "the dispatch needs {} parts (over {max_groups} threadgroups in a dimension), \
             but the kernel does not read the dispatch uniform",
            plan.parts.len()
        )));
    }
    let args = bind_arguments(function, &interface, buffers)?;
    let outputs = resources::scoped(gpu, || {
        execute(gpu, wgsl, function, &interface, &plan, &args)
    })??;
    let mut result = BTreeMap::new();
    for bound in &args {
        result.insert(bound.arg.index, bound.bytes.to_vec());
    }
    result.extend(outputs);
    Ok(result)
}

/// The device-independent and limit checks of a dispatch.
fn check_dispatch(
    gpu: &Gpu,
    function: &FunctionReflection,
    dispatch: &Dispatch,
) -> Result<(), RunError> {
    let invalid = |msg: String| Err(RunError::InvalidDispatch(msg));
    let Some(size) = function
        .workgroup_size
        .filter(|_| function.stage == Stage::Kernel)
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
struct Part {
    /// The first threadgroup of this part.
    offset: [u32; 3],
    /// Threadgroups in this part.
    count: [u32; 3],
}

/// How a dispatch is split into parts no larger than the device allows.
#[derive(Debug)]
struct Plan {
    /// The grid in threads.
    grid: [u32; 3],
    /// All threadgroups.
    groups: [u32; 3],
    /// The parts, in x-fastest order.
    parts: Vec<Part>,
}

impl Plan {
    fn new(dispatch: &Dispatch, max_groups: u32) -> Result<Plan, RunError> {
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
}

/// True if the entry point reads the dispatch uniform.
fn uses_dispatch_uniform(function: &FunctionReflection, interface: &Interface) -> bool {
    function
        .dispatch_binding
        .is_some_and(|d| interface.bindings.iter().any(|b| same(b, d)))
}

fn same(used: &UsedBinding, binding: WgslBinding) -> bool {
    used.group == binding.group && used.binding == binding.binding
}

/// A buffer argument with its bytes, and where the shader binds it.
struct BoundArgument<'a> {
    arg: &'a Argument,
    bytes: &'a [u8],
    /// `None` when the shader does not use it (it is then not uploaded).
    used: Option<UsedBinding>,
}

/// Matches the buffers given to the function's arguments and the bindings
/// the shader uses; every binding must be an argument or the dispatch
/// uniform.
fn bind_arguments<'a>(
    function: &'a FunctionReflection,
    interface: &Interface,
    buffers: &'a BTreeMap<u32, Vec<u8>>,
) -> Result<Vec<BoundArgument<'a>>, RunError> {
    let mut out = Vec::new();
    for arg in &function.arguments {
        // Threadgroup memory has no binding: its length is in the WGSL.
        if arg.kind == ArgumentKind::ThreadgroupMemory {
            continue;
        }
        if arg.kind != ArgumentKind::Buffer {
            if arg.active {
                return Err(RunError::Unsupported(format!(
                    "argument `{}` ({:?}) in the runner",
                    arg.name, arg.kind
                )));
            }
            continue;
        }
        let Some(bytes) = resources::check_argument(arg, buffers.get(&arg.index))? else {
            continue;
        };
        let used = arg
            .binding
            .and_then(|b| interface.bindings.iter().find(|u| same(u, b)).copied());
        out.push(BoundArgument { arg, bytes, used });
    }
    for used in &interface.bindings {
        let binding = to_binding(used);
        let known = out
            .iter()
            .any(|a| a.used.is_some_and(|u| same(&u, binding)))
            || function.dispatch_binding == Some(binding);
        if !known {
            return Err(RunError::Shader(format!(
                "the WGSL uses @group({}) @binding({}), which is neither a buffer argument \
                 given bytes nor the dispatch uniform",
                used.group, used.binding
            )));
        }
    }
    Ok(out)
}

fn to_binding(used: &UsedBinding) -> WgslBinding {
    WgslBinding {
        group: used.group,
        binding: used.binding,
    }
}

/// An uploaded argument: what it is, and its GPU buffer.
type Uploaded<'a> = (&'a BoundArgument<'a>, wgpu::Buffer);

/// Creates the pipeline and buffers, dispatches every part and reads the
/// arguments back. Runs inside an error scope.
fn execute(
    gpu: &Gpu,
    wgsl: &str,
    function: &FunctionReflection,
    interface: &Interface,
    plan: &Plan,
    args: &[BoundArgument<'_>],
) -> Result<BTreeMap<u32, Vec<u8>>, RunError> {
    let layouts = bind_group_layouts(gpu, interface);
    let pipeline = create_pipeline(gpu, wgsl, function, &layouts);
    let mut uploaded: Vec<Uploaded> = Vec::new();
    for bound in args {
        if let Some(used) = &bound.used {
            let buffer = resources::upload_argument(gpu, bound.arg, bound.bytes, used)?;
            uploaded.push((bound, buffer));
        }
    }
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        for part in &plan.parts {
            let params = DispatchParams {
                grid_size: plan.grid,
                group_offset: part.offset,
                threadgroups: plan.groups,
            };
            let uniform = resources::uniform(gpu, "dispatch", &params.to_bytes());
            let groups = bind_groups(gpu, &layouts, interface, &uploaded, &uniform);
            for (group, bind_group) in groups.iter().enumerate() {
                pass.set_bind_group(group as u32, bind_group, &[]);
            }
            let [x, y, z] = part.count;
            pass.dispatch_workgroups(x, y, z);
        }
    }
    let reads: Vec<Readback> = uploaded
        .iter()
        .map(|(bound, buffer)| Readback {
            index: bound.arg.index,
            buffer,
            len: bound.bytes.len(),
        })
        .collect();
    let staging = resources::stage_readbacks(gpu, &mut encoder, &reads);
    gpu.queue.submit([encoder.finish()]);
    let lens: Vec<usize> = reads.iter().map(|r| r.len).collect();
    let bytes = resources::map_readbacks(gpu, &staging, &lens)?;
    Ok(reads.iter().map(|r| r.index).zip(bytes).collect())
}

/// The compute pipeline, with an explicit layout: exactly the bindings the
/// entry point uses.
fn create_pipeline(
    gpu: &Gpu,
    wgsl: &str,
    function: &FunctionReflection,
    layouts: &[wgpu::BindGroupLayout],
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
            compilation_options: Default::default(),
            cache: None,
        })
}

/// The bind groups of one part: each used binding gets its argument's
/// buffer, or else (it can only be the dispatch uniform, as
/// `bind_arguments` checked) this part's `uniform`.
fn bind_groups(
    gpu: &Gpu,
    layouts: &[wgpu::BindGroupLayout],
    interface: &Interface,
    uploaded: &[Uploaded<'_>],
    uniform: &wgpu::Buffer,
) -> Vec<wgpu::BindGroup> {
    let buffer_for = |b: &UsedBinding| {
        uploaded
            .iter()
            .find(|(a, _)| a.used.is_some_and(|u| same(&u, to_binding(b))))
            .map_or(uniform, |(_, buffer)| buffer)
    };
    layouts
        .iter()
        .enumerate()
        .map(|(group, layout)| {
            let entries: Vec<wgpu::BindGroupEntry> = interface
                .bindings
                .iter()
                .filter(|b| b.group == group as u32)
                .map(|b| wgpu::BindGroupEntry {
                    binding: b.binding,
                    resource: buffer_for(b).as_entire_binding(),
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

/// One bind group layout per group up to the highest one used (a gap gets
/// an empty layout).
fn bind_group_layouts(gpu: &Gpu, interface: &Interface) -> Vec<wgpu::BindGroupLayout> {
    let count = interface
        .bindings
        .iter()
        .map(|b| b.group + 1)
        .max()
        .unwrap_or(0);
    (0..count)
        .map(|group| {
            let entries: Vec<wgpu::BindGroupLayoutEntry> = interface
                .bindings
                .iter()
                .filter(|b| b.group == group)
                .map(|b| wgpu::BindGroupLayoutEntry {
                    binding: b.binding,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: match b.kind {
                            BufferBinding::Uniform => wgpu::BufferBindingType::Uniform,
                            BufferBinding::Storage { read_only } => {
                                wgpu::BufferBindingType::Storage { read_only }
                            }
                        },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
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
