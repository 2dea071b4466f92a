//! Metal's argument table on wgpu: the caller's own buffers, textures and
//! samplers set by Metal index (`setBuffer:offset:atIndex:`,
//! `setTexture:atIndex:`, `setSamplerState:atIndex:`), matched to the
//! bindings a pipeline's WGSL uses when a command is encoded.

use super::interface::{BindingKind, BufferBinding, Interface, TextureClass, UsedBinding};
use super::{placeholders, samplers, Gpu, RunError};
use crate::reflect::{ArgumentKind, FunctionReflection};
use std::collections::BTreeMap;

/// The resources set for one function, by Metal index, borrowed for as
/// long as the command that uses them is being encoded.
#[derive(Clone, Debug, Default)]
pub struct ArgumentTable<'r> {
    buffers: BTreeMap<u32, (&'r wgpu::Buffer, u64)>,
    textures: BTreeMap<u32, &'r wgpu::Texture>,
    samplers: BTreeMap<u32, &'r wgpu::Sampler>,
    /// The stage-in region (`setStageInRegion`) of a kernel that reads it.
    stage_in_region: Option<crate::stage_in::StageInRegion>,
}

impl<'r> ArgumentTable<'r> {
    /// `[[buffer(index)]]` reads `buffer` from byte `offset` on. Checked
    /// against `function`'s reflection now (an active argument must get at
    /// least its type's size, Metal's `bufferDataSize`) and against the
    /// WGSL binding when the command is encoded (usage, offset alignment).
    pub fn set_buffer(
        &mut self,
        function: &FunctionReflection,
        index: u32,
        buffer: &'r wgpu::Buffer,
        offset: u64,
    ) -> Result<(), RunError> {
        let arg = function
            .arguments
            .iter()
            .find(|a| a.kind == ArgumentKind::Buffer && a.index == index);
        if let Some(arg) = arg.filter(|a| a.active) {
            let len = buffer.size().saturating_sub(offset);
            let needed = arg.buffer.as_ref().map_or(0, |b| u64::from(b.data_size));
            if len < needed || offset > buffer.size() {
                return Err(RunError::BufferTooSmall {
                    name: arg.name.clone(),
                    index,
                    len: len as usize,
                    needed,
                });
            }
        }
        self.buffers.insert(index, (buffer, offset));
        Ok(())
    }

    /// The buffer set at `index`, with its offset.
    pub(crate) fn buffer(&self, index: u32) -> Option<(&'r wgpu::Buffer, u64)> {
        self.buffers.get(&index).copied()
    }

    /// `[[texture(index)]]` is `texture`, viewed with the dimension the
    /// argument's type needs (storage textures see mip level 0).
    pub fn set_texture(&mut self, index: u32, texture: &'r wgpu::Texture) {
        self.textures.insert(index, texture);
    }

    /// `[[sampler(index)]]` is `sampler`.
    pub fn set_sampler(&mut self, index: u32, sampler: &'r wgpu::Sampler) {
        self.samplers.insert(index, sampler);
    }

    /// `setStageInRegion:`: a kernel's `[[grid_origin]]`/`[[grid_size]]`,
    /// and the origin its `[[stage_in]]` elements start at.
    pub fn set_stage_in_region(&mut self, region: crate::stage_in::StageInRegion) {
        self.stage_in_region = Some(region);
    }

    /// The stage-in region set, if any.
    pub(crate) fn stage_in_region(&self) -> Option<crate::stage_in::StageInRegion> {
        self.stage_in_region
    }

    /// The object of every binding `interface` uses, checked; the dispatch
    /// uniform is left for the caller ([`Resolved::Dispatch`]). `constants`
    /// (the pipeline's function constant values) decide which conditional
    /// arguments exist: one switched off gets a placeholder, whatever is set.
    pub(crate) fn resolve(
        &self,
        gpu: &Gpu,
        function: &FunctionReflection,
        interface: &Interface,
        constants: &BTreeMap<u32, f64>,
    ) -> Result<Vec<(UsedBinding, Resolved<'r>)>, RunError> {
        super::resources::check_required_limits(gpu, function)?;
        interface
            .bindings
            .iter()
            .map(|used| Ok((*used, self.resolve_one(gpu, function, used, constants)?)))
            .collect()
    }

    fn resolve_one(
        &self,
        gpu: &Gpu,
        function: &FunctionReflection,
        used: &UsedBinding,
        constants: &BTreeMap<u32, f64>,
    ) -> Result<Resolved<'r>, RunError> {
        let at = |b: Option<crate::reflect::WgslBinding>| {
            b.is_some_and(|b| b.group == used.group && b.binding == used.binding)
        };
        if at(function.dispatch_binding)
            || at(function.point_sprite.as_ref().map(|s| s.viewport_binding))
        {
            return Ok(Resolved::Dispatch);
        }
        if at(function.stage_input.as_ref().and_then(|s| s.region_binding)) {
            let region = self.stage_in_region.ok_or_else(|| {
                RunError::InvalidDispatch(format!(
                    "`{}` reads the stage-in region, which was not set (`set_stage_in_region`)",
                    function.name
                ))
            })?;
            let bytes = region.to_bytes();
            return Ok(Resolved::OwnedBuffer(super::resources::uniform(
                gpu,
                "stage-in region",
                &bytes,
            )));
        }
        // `RenderCommand`'s draws start at vertex 0 and instance 0, which
        // are then the base vertex and base instance.
        if at(function.draw_parameters_binding) {
            let bytes = crate::reflect::DrawParameters::default().to_bytes();
            return Ok(Resolved::OwnedBuffer(super::resources::uniform(
                gpu,
                "draw parameters",
                &bytes,
            )));
        }
        if let Some(arg) = function.arguments.iter().find(|a| at(a.binding)) {
            if placeholders::switched_off(function, arg, constants) {
                return placeholder(gpu, arg, used);
            }
            let (name, index) = (arg.name.clone(), arg.index);
            return match arg.kind {
                ArgumentKind::Buffer => {
                    let Some(&(buffer, offset)) = self.buffers.get(&index) else {
                        let stage = function.stage;
                        return Err(RunError::MissingBuffer { name, index, stage });
                    };
                    if let Some(copy) = uniform_copy(gpu, used, buffer, offset)? {
                        return Ok(Resolved::OwnedBuffer(copy));
                    }
                    check_buffer(gpu, used, buffer, offset, &name, index)?;
                    Ok(Resolved::Buffer(buffer, offset))
                }
                ArgumentKind::Texture => {
                    let Some(texture) = self.textures.get(&index) else {
                        let stage = function.stage;
                        return Err(RunError::MissingTexture { name, index, stage });
                    };
                    let view = texture_view(used, texture)
                        .map_err(|why| RunError::TextureMismatch { name, index, why })?;
                    Ok(Resolved::View(view))
                }
                ArgumentKind::Sampler => match self.samplers.get(&index) {
                    Some(sampler) => Ok(Resolved::Sampler(sampler)),
                    None => Err(RunError::InvalidSampler {
                        name,
                        why: format!("no sampler set at index {index}"),
                    }),
                },
                ArgumentKind::ThreadgroupMemory => Err(RunError::Shader(format!(
                    "threadgroup argument `{name}` has a WGSL binding"
                ))),
            };
        }
        if let Some(c) = function
            .constexpr_samplers
            .iter()
            .find(|c| at(Some(c.binding)))
        {
            let comparison = matches!(used.kind, BindingKind::Sampler { comparison: true });
            let plan = samplers::plan(gpu, &c.name, &c.descriptor, comparison)?;
            return Ok(Resolved::OwnedSampler(
                gpu.device.create_sampler(&plan.descriptor),
            ));
        }
        Err(RunError::Shader(format!(
            "`{}` uses @group({}) @binding({}), which is neither an argument, a constexpr \
             sampler, nor the dispatch uniform",
            function.name, used.group, used.binding
        )))
    }
}

/// The placeholder of a conditional argument the constants switch off.
fn placeholder<'r>(
    gpu: &Gpu,
    arg: &crate::reflect::Argument,
    used: &UsedBinding,
) -> Result<Resolved<'r>, RunError> {
    Ok(match arg.kind {
        ArgumentKind::Texture => Resolved::View(placeholders::texture(gpu, arg, used)?.0),
        ArgumentKind::Sampler => {
            let comparison = matches!(used.kind, BindingKind::Sampler { comparison: true });
            let plan = samplers::plan(gpu, &arg.name, &samplers::default_sampler(), comparison)?;
            Resolved::OwnedSampler(gpu.device.create_sampler(&plan.descriptor))
        }
        _ => Resolved::OwnedBuffer(placeholders::buffer(gpu, used)),
    })
}

/// The object of one binding.
#[derive(Debug)]
pub(crate) enum Resolved<'r> {
    /// A caller's buffer from an offset.
    Buffer(&'r wgpu::Buffer, u64),
    /// A uniform copy of a caller's buffer made without `UNIFORM` usage.
    OwnedBuffer(wgpu::Buffer),
    /// A view of a caller's texture.
    View(wgpu::TextureView),
    /// A caller's sampler.
    Sampler(&'r wgpu::Sampler),
    /// A `constexpr sampler`, made from its descriptor.
    OwnedSampler(wgpu::Sampler),
    /// The command's uniform: a kernel's dispatch geometry, or a
    /// point-sprite entry point's viewport size.
    Dispatch,
}

impl Resolved<'_> {
    /// The bind group resource, `uniform` standing for the dispatch uniform.
    pub(crate) fn resource<'a>(
        &'a self,
        uniform: Option<&'a wgpu::Buffer>,
    ) -> Result<wgpu::BindingResource<'a>, RunError> {
        Ok(match self {
            Resolved::Buffer(buffer, offset) => {
                wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer,
                    offset: *offset,
                    size: None,
                })
            }
            Resolved::OwnedBuffer(buffer) => buffer.as_entire_binding(),
            Resolved::View(view) => wgpu::BindingResource::TextureView(view),
            Resolved::Sampler(sampler) => wgpu::BindingResource::Sampler(sampler),
            Resolved::OwnedSampler(sampler) => wgpu::BindingResource::Sampler(sampler),
            Resolved::Dispatch => uniform
                .ok_or_else(|| {
                    RunError::Shader("a render function reads the dispatch uniform".into())
                })?
                .as_entire_binding(),
        })
    }
}

/// For a `var<uniform>` binding given a buffer without `UNIFORM` usage (a
/// Metal host makes one kind of buffer; WGSL's `constant` arguments may be
/// uniforms or storage): a uniform buffer holding a copy of the bytes the
/// binding reads, copied now (queue order puts the copy after the caller's
/// earlier writes and before the command's dispatch). `None` when the
/// buffer can be bound as it is, or cannot be copied (the usage check then
/// names what it lacks).
fn uniform_copy(
    gpu: &Gpu,
    used: &UsedBinding,
    buffer: &wgpu::Buffer,
    offset: u64,
) -> Result<Option<wgpu::Buffer>, RunError> {
    let usage = buffer.usage();
    let copyable = usage.contains(wgpu::BufferUsages::COPY_SRC)
        && offset.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT)
        && buffer.size().saturating_sub(offset) >= used.min_size;
    if used.kind != BindingKind::Buffer(BufferBinding::Uniform)
        || usage.contains(wgpu::BufferUsages::UNIFORM)
        || !copyable
    {
        return Ok(None);
    }
    let len = used.min_size.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
    let len = len.min(buffer.size() - offset) & !(wgpu::COPY_BUFFER_ALIGNMENT - 1);
    let copy = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("uniform copy"),
        size: used.min_size.next_multiple_of(16),
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, offset, &copy, 0, len);
    gpu.queue.submit([encoder.finish()]);
    Ok(Some(copy))
}

/// A buffer must have the usage its WGSL binding needs, an offset the
/// device can bind at, and the bytes the WGSL type needs past the offset.
fn check_buffer(
    gpu: &Gpu,
    used: &UsedBinding,
    buffer: &wgpu::Buffer,
    offset: u64,
    name: &str,
    index: u32,
) -> Result<(), RunError> {
    let (usage, alignment, what) = match used.kind {
        BindingKind::Buffer(BufferBinding::Uniform) => (
            wgpu::BufferUsages::UNIFORM,
            gpu.limits.min_uniform_buffer_offset_alignment,
            "UNIFORM",
        ),
        _ => (
            wgpu::BufferUsages::STORAGE,
            gpu.limits.min_storage_buffer_offset_alignment,
            "STORAGE",
        ),
    };
    let invalid = |why: String| {
        Err(RunError::InvalidDispatch(format!(
            "buffer for argument `{name}` [[buffer({index})]]: {why}"
        )))
    };
    if !buffer.usage().contains(usage) {
        return invalid(format!(
            "the WGSL binds it as {what}, which its usage lacks"
        ));
    }
    if !offset.is_multiple_of(u64::from(alignment)) {
        return invalid(format!(
            "offset {offset} is not a multiple of the device's {alignment}-byte alignment"
        ));
    }
    let len = buffer.size().saturating_sub(offset);
    if len < used.min_size {
        return Err(RunError::BufferTooSmall {
            name: name.to_string(),
            index,
            len: len as usize,
            needed: used.min_size,
        });
    }
    Ok(())
}

/// The view of `texture` that binding `used` needs.
fn texture_view(used: &UsedBinding, texture: &wgpu::Texture) -> Result<wgpu::TextureView, String> {
    let BindingKind::Texture {
        class,
        view_dimension,
    } = used.kind
    else {
        return Err("the WGSL binding is not a texture".into());
    };
    let storage = matches!(class, TextureClass::Storage { .. });
    let usage = if storage {
        wgpu::TextureUsages::STORAGE_BINDING
    } else {
        wgpu::TextureUsages::TEXTURE_BINDING
    };
    if !texture.usage().contains(usage) {
        return Err(format!("its usage lacks {usage:?}"));
    }
    Ok(texture.create_view(&wgpu::TextureViewDescriptor {
        dimension: Some(view_dimension),
        mip_level_count: storage.then_some(1),
        ..Default::default()
    }))
}

/// Bind groups `0..count` for `pipeline_layout_of(group)`, each with the
/// resolved bindings of that group (a gap gets an empty group).
pub(crate) fn bind_groups(
    gpu: &Gpu,
    layout_of: impl Fn(u32) -> wgpu::BindGroupLayout,
    resolved: &[(UsedBinding, &Resolved<'_>)],
    uniform: Option<&wgpu::Buffer>,
) -> Result<Vec<wgpu::BindGroup>, RunError> {
    let count = resolved.iter().map(|(u, _)| u.group + 1).max().unwrap_or(0);
    (0..count)
        .map(|group| {
            let entries = resolved
                .iter()
                .filter(|(u, _)| u.group == group)
                .map(|(u, r)| {
                    Ok(wgpu::BindGroupEntry {
                        binding: u.binding,
                        resource: r.resource(uniform)?,
                    })
                })
                .collect::<Result<Vec<_>, RunError>>()?;
            Ok(gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &layout_of(group),
                entries: &entries,
            }))
        })
        .collect()
}

/// Refuses resources given at indices where `function` has no argument of
/// that kind (`run --buffer 7=...` for a kernel without `[[buffer(7)]]`,
/// most often a typo), naming the indices it has. One function's table is
/// meant: a Metal argument table shared between pipelines may hold more.
pub(crate) fn check_given_indices(
    function: &FunctionReflection,
    inputs: &super::bind::Inputs<'_>,
) -> Result<(), RunError> {
    let given = [
        (
            ArgumentKind::Buffer,
            inputs.buffers.keys().copied().collect(),
        ),
        (
            ArgumentKind::Texture,
            inputs.textures.keys().copied().collect(),
        ),
        (
            ArgumentKind::Sampler,
            inputs.samplers.keys().copied().collect::<Vec<u32>>(),
        ),
    ];
    for (kind, indices) in &given {
        let attribute = match kind {
            ArgumentKind::Buffer => "buffer",
            ArgumentKind::Texture => "texture",
            ArgumentKind::Sampler => "sampler",
            ArgumentKind::ThreadgroupMemory => "threadgroup",
        };
        let has: Vec<u32> = function
            .arguments
            .iter()
            .filter(|a| a.kind == *kind)
            .map(|a| a.index)
            .collect();
        let Some(stray) = indices.iter().find(|i| !has.contains(i)) else {
            continue;
        };
        let list = match has.is_empty() {
            true => format!("it has no [[{attribute}(n)]] argument"),
            false => {
                let names: Vec<String> = has
                    .iter()
                    .map(|i| format!("[[{attribute}({i})]]"))
                    .collect();
                format!("its {attribute} arguments are {}", names.join(", "))
            }
        };
        return Err(RunError::InvalidDispatch(format!(
            "`{}` has no [[{attribute}({stray})]] argument; {list}",
            function.name
        )));
    }
    Ok(())
}
