//! Compute pipelines made from a library's kernel, used as a Metal host
//! uses `MTLComputePipelineState` and `MTLComputeCommandEncoder`: the
//! caller's buffers, textures and samplers set by Metal index, threadgroup
//! memory lengths set by index, `dispatchThreads` and
//! `dispatchThreadgroups` with Metal's meaning.
//!
//! WGSL fixes the workgroup size and the size of every workgroup array in
//! the module, while Metal chooses both at dispatch. A [`ComputePipeline`]
//! therefore translates its kernel again (once, then cached) for each
//! threadgroup size and set of threadgroup-memory lengths it is dispatched
//! with.

use super::arguments::{self, ArgumentTable, Resolved};
use super::compute::{check_dispatch, uses_dispatch_uniform, Plan};
use super::interface::{Interface, UsedBinding};
use super::{resources, Dispatch, Gpu, RunError, TextureData};
use crate::reflect::{FunctionReflection, Stage};
use crate::Library;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// What a kernel's WGSL depends on beyond its source: the threadgroup size
/// and the threadgroup-memory lengths by index.
/// Threadgroup size, `[[threadgroup(n)]]` lengths, whether the dispatch
/// launches only threads inside the grid
/// ([`is_whole_grid`](super::constants::is_whole_grid)), which kernels with
/// barriers compile into their pipeline, and whether it is split into
/// parts (a translation of one part reads no group offset).
type VariantKey = ([u32; 3], Vec<(u32, u32)>, bool, bool);

/// One translation of the kernel, compiled.
struct Variant {
    function: FunctionReflection,
    interface: Interface,
    pipeline: wgpu::ComputePipeline,
}

/// A kernel of a [`Library`], ready to dispatch (Metal's
/// `MTLComputePipelineState`).
pub struct ComputePipeline {
    library: crate::library::Origin,
    function: FunctionReflection,
    constants: BTreeMap<u32, f64>,
    variants: Mutex<HashMap<VariantKey, Arc<Variant>>>,
}

impl std::fmt::Debug for ComputePipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComputePipeline")
            .field("function", &self.function.name)
            .finish_non_exhaustive()
    }
}

impl ComputePipeline {
    /// The kernel `name` of `library`. Fails if there is no such function,
    /// it is not a kernel, it needs a feature `gpu` lacks, or it reads a
    /// required function constant (see [`ComputePipeline::with_constants`]).
    pub fn new(gpu: &Gpu, library: &Library, name: &str) -> Result<ComputePipeline, RunError> {
        Self::with_constants(gpu, library, name, &BTreeMap::new())
    }

    /// [`ComputePipeline::new`] with `[[function_constant(n)]]` values by
    /// index (Metal's `makeFunction(name:constantValues:)`; `true`/`false`
    /// as 1/0). Values for constants the kernel does not read are ignored.
    pub fn with_constants(
        gpu: &Gpu,
        library: &Library,
        name: &str,
        constants: &BTreeMap<u32, f64>,
    ) -> Result<ComputePipeline, RunError> {
        let mut function = library
            .function(name)
            .ok_or_else(|| RunError::UnknownEntry(name.to_string()))?;
        // A kernel waiting for function constant values at translation
        // (W0415): its reflection comes from a translation with them.
        let specialized;
        if function.awaits_function_constants() {
            let origin = library.origin();
            specialized = gpu.translate_specialized(
                &origin.name,
                &origin.text,
                &origin.options,
                name,
                None,
                constants,
            )?;
            function = &specialized.function;
        }
        if function.stage != Stage::Kernel {
            return Err(RunError::NotAKernel(name.to_string()));
        }
        // Every variant is translated again for `gpu` (`Gpu::translate`),
        // with `half` as `f32` where the device lacks `shader-f16`.
        // and 64-bit integers in 32 bits where it lacks `shader-int64`.
        let options = &library.origin().options;
        let emulated = |feature: &str| match feature {
            "shader-f16" => gpu.half_mode(options.half) != options.half,
            "shader-int64" => gpu.wide_integers(options.wide_integers) != options.wide_integers,
            _ => false,
        };
        let required: Vec<String> = (function.required_features.iter())
            .filter(|f| !emulated(f.as_str()))
            .cloned()
            .collect();
        gpu.check_features(&required)?;
        // Checked now, so that a missing required constant fails here.
        super::pipeline_constants(function, constants)?;
        Ok(ComputePipeline {
            library: library.origin().clone(),
            function: function.clone(),
            constants: constants.clone(),
            variants: Mutex::new(HashMap::new()),
        })
    }

    /// The kernel's reflection (as the library translated it).
    pub fn function(&self) -> &FunctionReflection {
        &self.function
    }

    /// A command encoder for this pipeline with nothing set.
    pub fn encoder<'r>(&self) -> ComputeCommand<'_, 'r> {
        ComputeCommand {
            pipeline: self,
            arguments: ArgumentTable::default(),
            threadgroup_memory: BTreeMap::new(),
        }
    }

    /// The translation for `key`, compiled once.
    fn variant(&self, gpu: &Gpu, key: VariantKey) -> Result<Arc<Variant>, RunError> {
        let mut variants = self
            .variants
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(hit) = variants.get(&key) {
            return Ok(hit.clone());
        }
        let mut options = self.library.options.clone();
        options.one_part_dispatch |= !key.3;
        let mut memory: BTreeMap<u32, u32> = options.threadgroup_memory.iter().copied().collect();
        memory.extend(key.1.iter().copied());
        options.threadgroup_memory = memory.into_iter().collect();
        let translation = gpu.translate_specialized(
            &self.library.name,
            &self.library.text,
            &options,
            &self.function.name,
            Some(key.0),
            &self.constants,
        )?;
        let function = translation.function.clone();
        let interface = Interface::of(&translation.wgsl, &function.wgsl_entry_point)?;
        let constants = super::pipeline_constants(&function, &self.constants)?;
        let constants =
            super::constants::with_whole_grid(&function, &interface.overrides, key.2, &constants);
        let pipeline = resources::scoped(gpu, || {
            let module = gpu
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&function.name),
                    source: wgpu::ShaderSource::Wgsl(translation.wgsl.as_str().into()),
                });
            gpu.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&function.name),
                    layout: None,
                    module: &module,
                    entry_point: Some(&function.wgsl_entry_point),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &super::constants::as_wgpu(&constants),
                        ..Default::default()
                    },
                    cache: None,
                })
        })?;
        let variant = Arc::new(Variant {
            function,
            interface,
            pipeline,
        });
        variants.insert(key, variant.clone());
        Ok(variant)
    }
}

/// The state of one compute command (Metal's
/// `MTLComputeCommandEncoder`): what is set, by Metal index. Each dispatch
/// is submitted to the queue at once; wgpu orders it after earlier
/// submissions, as a Metal command buffer orders its encoders.
#[derive(Debug)]
pub struct ComputeCommand<'p, 'r> {
    pipeline: &'p ComputePipeline,
    arguments: ArgumentTable<'r>,
    threadgroup_memory: BTreeMap<u32, u32>,
}

impl<'r> ComputeCommand<'_, 'r> {
    /// `setBuffer:offset:atIndex:`, checked against the reflection (see
    /// [`ArgumentTable::set_buffer`]).
    pub fn set_buffer(
        &mut self,
        index: u32,
        buffer: &'r wgpu::Buffer,
        offset: u64,
    ) -> Result<&mut Self, RunError> {
        let function = &self.pipeline.function;
        self.arguments.set_buffer(function, index, buffer, offset)?;
        Ok(self)
    }

    /// `setTexture:atIndex:`.
    pub fn set_texture(&mut self, index: u32, texture: &'r wgpu::Texture) -> &mut Self {
        self.arguments.set_texture(index, texture);
        self
    }

    /// `setSamplerState:atIndex:`.
    pub fn set_sampler(&mut self, index: u32, sampler: &'r wgpu::Sampler) -> &mut Self {
        self.arguments.set_sampler(index, sampler);
        self
    }

    /// `setStageInRegion:`: the region a kernel's `[[grid_origin]]` and
    /// `[[grid_size]]` give, whose origin is added to each thread's
    /// position before its `[[stage_in]]` is fetched. Unset: origin 0 and
    /// the dispatch's grid. The `[[stage_in]]`'s buffers are set with
    /// [`ComputeCommand::set_buffer`] at the descriptor's buffer indices.
    pub fn set_stage_in_region(&mut self, region: crate::stage_in::StageInRegion) -> &mut Self {
        self.arguments.set_stage_in_region(region);
        self
    }

    /// `setThreadgroupMemoryLength:atIndex:`: the bytes of the
    /// `[[threadgroup(index)]]` argument. Metal requires a multiple of 16.
    pub fn set_threadgroup_memory_length(
        &mut self,
        index: u32,
        length: u32,
    ) -> Result<&mut Self, RunError> {
        if !length.is_multiple_of(16) {
            return Err(RunError::InvalidDispatch(format!(
                "threadgroup memory length {length} at index {index} is not a multiple of 16"
            )));
        }
        self.threadgroup_memory.insert(index, length);
        Ok(self)
    }

    /// `dispatchThreads:threadsPerThreadgroup:`: `grid` threads, which need
    /// not be a multiple of `threadgroup`.
    pub fn dispatch_threads(
        &self,
        gpu: &Gpu,
        grid: [u32; 3],
        threadgroup: [u32; 3],
    ) -> Result<(), RunError> {
        self.dispatch(gpu, &Dispatch::Threads { grid, threadgroup })
    }

    /// `dispatchThreadgroups:threadsPerThreadgroup:`.
    pub fn dispatch_threadgroups(
        &self,
        gpu: &Gpu,
        groups: [u32; 3],
        threadgroup: [u32; 3],
    ) -> Result<(), RunError> {
        self.dispatch(
            gpu,
            &Dispatch::Threadgroups {
                groups,
                threadgroup,
            },
        )
    }

    fn dispatch(&self, gpu: &Gpu, dispatch: &Dispatch) -> Result<(), RunError> {
        let memory = self.threadgroup_memory.iter().map(|(&i, &n)| (i, n));
        let whole = super::constants::is_whole_grid(dispatch);
        let max_groups = gpu.limits.max_compute_workgroups_per_dimension;
        let plan = Plan::new(dispatch, max_groups)?;
        let split = plan.parts.len() > 1;
        let key = (dispatch.threadgroup(), memory.collect(), whole, split);
        check_threadgroup_memory(gpu, &self.pipeline.function, &self.threadgroup_memory)?;
        let variant = self.pipeline.variant(gpu, key)?;
        check_dispatch(gpu, &variant.function, dispatch)?;
        if plan.parts.len() > 1 && !uses_dispatch_uniform(&variant.function, &variant.interface) {
            return Err(RunError::InvalidDispatch(format!(
                "{} threadgroups exceed the device's {max_groups} per dimension, and the \
                 kernel does not read the dispatch uniform that splitting needs",
                plan.groups.iter().max().copied().unwrap_or(0)
            )));
        }
        let mut arguments = self.arguments.clone();
        if arguments.stage_in_region().is_none() {
            arguments.set_stage_in_region(crate::stage_in::StageInRegion {
                origin: [0; 3],
                size: plan.grid,
            });
        }
        let resolved = arguments.resolve(
            gpu,
            &variant.function,
            &variant.interface,
            &self.pipeline.constants,
        )?;
        resources::scoped(gpu, || encode(gpu, &variant, &plan, &resolved))?
    }
}

/// Refuses threadgroup memory over the device's workgroup storage limit,
/// naming the argument (wgpu would only say the pipeline is invalid).
fn check_threadgroup_memory(
    gpu: &Gpu,
    function: &FunctionReflection,
    lengths: &BTreeMap<u32, u32>,
) -> Result<(), RunError> {
    let limit = gpu.limits.max_compute_workgroup_storage_size;
    let total: u64 = lengths.values().map(|&n| u64::from(n)).sum();
    if total <= u64::from(limit) {
        return Ok(());
    }
    let largest = lengths.iter().max_by_key(|(_, &n)| n);
    let named = largest.and_then(|(&index, &n)| {
        let arg = function.arguments.iter().find(|a| {
            a.kind == crate::reflect::ArgumentKind::ThreadgroupMemory && a.index == index
        })?;
        Some(format!(
            " (the largest, `{}` [[threadgroup({index})]], has {n})",
            arg.name
        ))
    });
    Err(RunError::InvalidDispatch(format!(
        "threadgroup memory of {total} bytes{} is over the device's \
         maxComputeWorkgroupStorageSize of {limit}",
        named.unwrap_or_default()
    )))
}

/// Records every part of the dispatch and submits it.
fn encode(
    gpu: &Gpu,
    variant: &Variant,
    plan: &Plan,
    resolved: &[(UsedBinding, Resolved<'_>)],
) -> Result<(), RunError> {
    let refs: Vec<(UsedBinding, &Resolved<'_>)> = resolved.iter().map(|(u, r)| (*u, r)).collect();
    let layout_of = |group| variant.pipeline.get_bind_group_layout(group);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&variant.pipeline);
        for part in &plan.parts {
            let params = plan.params(part);
            let uniform = resources::uniform(gpu, "dispatch", &params.to_bytes());
            let groups = arguments::bind_groups(gpu, layout_of, &refs, Some(&uniform))?;
            for (group, bind_group) in groups.iter().enumerate() {
                pass.set_bind_group(group as u32, bind_group, &[]);
            }
            let [x, y, z] = part.count;
            pass.dispatch_workgroups(x, y, z);
        }
    }
    gpu.queue.submit([encoder.finish()]);
    Ok(())
}

impl Gpu {
    /// The bytes of `buffer` (which needs `COPY_SRC` usage) after all work
    /// submitted so far: what a Metal host reads through `contents()`.
    pub fn read_buffer(&self, buffer: &wgpu::Buffer) -> Result<Vec<u8>, RunError> {
        let len = usize::try_from(buffer.size())
            .map_err(|_| RunError::Gpu("the buffer is larger than this host's memory".into()))?;
        let staging = resources::scoped(self, || {
            let mut encoder = self.device.create_command_encoder(&Default::default());
            let reads = [resources::Readback {
                key: super::bind::Key {
                    owner: None,
                    index: 0,
                },
                buffer,
                len,
            }];
            let staging = resources::stage_readbacks(self, &mut encoder, &reads);
            self.queue.submit([encoder.finish()]);
            staging
        })?;
        let mut bytes = resources::map_readbacks(self, &staging, &[len])?;
        Ok(bytes.remove(0))
    }

    /// Mip level 0 (all layers) of a 2-D `texture` (which needs `COPY_SRC`
    /// usage) after all work submitted so far, as Metal's `getBytes` gives
    /// it: rows without padding.
    pub fn read_texture(&self, texture: &wgpu::Texture) -> Result<TextureData, RunError> {
        let size = texture.size();
        let layers = size.depth_or_array_layers;
        let shape = TextureData::new_2d_array(
            texture.format(),
            [size.width, size.height, layers],
            1,
            Vec::new(),
        );
        if shape.texel_size().is_none() || texture.dimension() != wgpu::TextureDimension::D2 {
            return Err(RunError::Unsupported(format!(
                "reading back a {:?} {:?} texture",
                texture.dimension(),
                texture.format()
            )));
        }
        let staged = resources::scoped(self, || {
            let mut encoder = self.device.create_command_encoder(&Default::default());
            let staged = resources::stage_texture(self, &mut encoder, texture, &shape);
            self.queue.submit([encoder.finish()]);
            staged
        })?;
        let bytes =
            resources::map_readbacks(self, std::slice::from_ref(&staged.buffer), &[staged.size])?;
        Ok(resources::unpad_texture(&shape, &staged, &bytes[0]))
    }
}
