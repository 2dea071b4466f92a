//! Matching what the caller gives (buffers, textures, samplers by Metal
//! index) to the arguments of the reflection and the bindings the WGSL
//! uses, with every check made before the GPU is touched; then creating the
//! GPU object of each binding.

use super::interface::{BindingKind, Interface, TextureClass, UsedBinding};
use super::placeholders;
use super::samplers::{self, SamplerPlan};
use super::textures::check_texture;
use super::{resources, ArgumentBuffer, Gpu, Outputs, RunError, TextureData};
use crate::reflect::{
    Access, Argument, ArgumentKind, FunctionReflection, SamplerDescriptor, TextureBinding,
    TextureInfo, WgslBinding,
};
use std::collections::BTreeMap;

/// What the caller gives, borrowed.
#[derive(Clone, Copy)]
pub(crate) struct Inputs<'a> {
    pub buffers: &'a BTreeMap<u32, Vec<u8>>,
    pub textures: &'a BTreeMap<u32, TextureData>,
    pub samplers: &'a BTreeMap<u32, SamplerDescriptor>,
    /// Function constant values by Metal index: they decide which
    /// conditional arguments exist.
    pub constants: &'a BTreeMap<u32, f64>,
    /// The resources of argument buffers, by `[[buffer(n)]]`.
    pub argument_buffers: &'a BTreeMap<u32, ArgumentBuffer>,
    /// The viewport's size in pixels, for a point-sprite entry point.
    pub viewport: Option<[u32; 2]>,
    /// The stage-in region of a kernel (`setStageInRegion`).
    pub stage_in_region: Option<crate::stage_in::StageInRegion>,
    /// The draw's base vertex and base instance, for a vertex function
    /// that reads them (or one run as a compute dispatch).
    pub draw_parameters: Option<crate::reflect::DrawParameters>,
}

/// Where a resource the caller gives is found: a Metal index of the
/// function, or an `[[id(n)]]` of the argument buffer at `[[buffer(owner)]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    /// The argument buffer's index, for its members.
    pub owner: Option<u32>,
    /// `[[buffer(n)]]`/`[[texture(n)]]`, or the member's `[[id(n)]]`.
    pub index: u32,
}

/// A buffer argument with its bytes, and where the shader binds it.
pub(crate) struct BoundBuffer<'a> {
    pub arg: &'a Argument,
    /// Where the caller gave it.
    pub key: Key,
    pub bytes: &'a [u8],
    /// `None` when the shader does not use it (it is then not uploaded).
    pub used: Option<UsedBinding>,
}

/// A texture argument with its texture, and where the shader binds it.
pub(crate) struct BoundTexture<'a> {
    pub arg: &'a Argument,
    /// Where the caller gave it.
    pub key: Key,
    pub data: &'a TextureData,
    /// `None` when the shader does not use it (it is then not uploaded).
    pub used: Option<UsedBinding>,
    /// A storage texture the kernel may write: returned after the run.
    pub read_back: bool,
}

/// A sampler (argument or `constexpr`) the shader uses.
pub(crate) struct BoundSampler {
    pub used: UsedBinding,
    pub plan: SamplerPlan,
}

/// Everything bound to one run.
pub(crate) struct Bound<'a> {
    pub buffers: Vec<BoundBuffer<'a>>,
    pub textures: Vec<BoundTexture<'a>>,
    pub samplers: Vec<BoundSampler>,
    /// The dispatch uniform, if the shader reads it.
    pub dispatch: Option<UsedBinding>,
    /// A point-sprite entry point's viewport uniform and the size it holds.
    pub viewport: Option<(UsedBinding, [u32; 2])>,
    /// A kernel's stage-in region uniform and the region it holds.
    pub stage_in_region: Option<(UsedBinding, crate::stage_in::StageInRegion)>,
    /// A vertex function's draw-parameters uniform and what it holds.
    pub draw_parameters: Option<(UsedBinding, crate::reflect::DrawParameters)>,
    /// Conditional arguments the constants switch off that the WGSL still
    /// binds: each gets a placeholder (`super::placeholders`).
    pub placeholders: Vec<(&'a Argument, UsedBinding)>,
}

fn same(used: &UsedBinding, binding: WgslBinding) -> bool {
    used.group == binding.group && used.binding == binding.binding
}

fn find_used(interface: &Interface, binding: Option<WgslBinding>) -> Option<UsedBinding> {
    let binding = binding?;
    interface
        .bindings
        .iter()
        .find(|u| same(u, binding))
        .copied()
}

/// Matches the inputs to the function's arguments and the bindings the
/// shader uses; every used binding must be an argument given a resource, a
/// sampler, or the dispatch uniform.
pub(crate) fn bind_all<'a>(
    gpu: &Gpu,
    function: &'a FunctionReflection,
    interface: &Interface,
    inputs: Inputs<'a>,
) -> Result<Bound<'a>, RunError> {
    resources::check_required_limits(gpu, function)?;
    let mut bound = Bound {
        buffers: Vec::new(),
        textures: Vec::new(),
        samplers: Vec::new(),
        dispatch: find_used(interface, function.dispatch_binding),
        viewport: None,
        stage_in_region: None,
        draw_parameters: None,
        placeholders: Vec::new(),
    };
    if let Some(used) = super::points::viewport_used(function, interface) {
        let size = inputs.viewport.ok_or_else(|| {
            RunError::InvalidRender(format!(
                "`{}` draws point sprites, which need the viewport size",
                function.name
            ))
        })?;
        bound.viewport = Some((used, size));
    }
    let region_binding = (function.stage_input.as_ref()).and_then(|s| s.region_binding);
    if let Some(used) = find_used(interface, region_binding) {
        let region = inputs.stage_in_region.ok_or_else(|| {
            RunError::InvalidDispatch(format!(
                "`{}` reads the stage-in region, which was not given",
                function.name
            ))
        })?;
        bound.stage_in_region = Some((used, region));
    }
    if let Some(used) = find_used(interface, function.draw_parameters_binding) {
        let draw = inputs.draw_parameters.ok_or_else(|| {
            RunError::InvalidRender(format!(
                "`{}` reads the draw's base vertex and base instance, which were not given",
                function.name
            ))
        })?;
        bound.draw_parameters = Some((used, draw));
    }
    for arg in &function.arguments {
        bind_argument(gpu, function, arg, interface, inputs, None, &mut bound)?;
        if !arg.members.is_empty() {
            bind_members(gpu, function, arg, interface, inputs, &mut bound)?;
        }
    }
    for constexpr in &function.constexpr_samplers {
        let Some(used) = find_used(interface, Some(constexpr.binding)) else {
            continue;
        };
        let comparison = sampler_binding(&constexpr.name, &used)?;
        let plan = samplers::plan(gpu, &constexpr.name, &constexpr.descriptor, comparison)?;
        bound.samplers.push(BoundSampler { used, plan });
    }
    check_all_claimed(interface, &bound)?;
    Ok(bound)
}

/// Binds one argument (or member of the argument buffer at `owner`, from
/// `inputs`' maps) to what the caller gives.
fn bind_argument<'a>(
    gpu: &Gpu,
    function: &'a FunctionReflection,
    arg: &'a Argument,
    interface: &Interface,
    inputs: Inputs<'a>,
    owner: Option<u32>,
    bound: &mut Bound<'a>,
) -> Result<(), RunError> {
    let key = Key {
        owner,
        index: arg.index,
    };
    if placeholders::switched_off(function, arg, inputs.constants) {
        bind_switched_off(arg, interface, inputs, bound);
        return Ok(());
    }
    match arg.kind {
        // Threadgroup memory has no binding: its length is in the WGSL.
        ArgumentKind::ThreadgroupMemory => {}
        // An argument buffer whose members are all resources has no data
        // binding: its bytes, if given, come back unchanged.
        ArgumentKind::Buffer if !arg.members.is_empty() && arg.binding.is_none() => {
            if let Some(bytes) = inputs.buffers.get(&arg.index) {
                bound.buffers.push(BoundBuffer {
                    arg,
                    key,
                    bytes,
                    used: None,
                });
            }
        }
        ArgumentKind::Buffer => {
            let given = inputs.buffers.get(&arg.index);
            if let Some(bytes) = resources::check_argument(arg, function.stage, given)? {
                let used = find_used(interface, arg.binding);
                bound.buffers.push(BoundBuffer {
                    arg,
                    key,
                    bytes,
                    used,
                });
            }
        }
        ArgumentKind::Texture => {
            if let Some(t) = bind_texture(arg, key, function.stage, interface, inputs.textures)? {
                bound.textures.push(t);
            }
        }
        ArgumentKind::Sampler => {
            if let Some(used) = find_used(interface, arg.binding) {
                let plan = plan_sampler_argument(gpu, arg, used, inputs.samplers)?;
                bound.samplers.push(BoundSampler { used, plan });
            }
        }
    }
    Ok(())
}

/// Binds the members of argument buffer `arg` to the resources the caller
/// gives for it, by `[[id(n)]]`.
fn bind_members<'a>(
    gpu: &Gpu,
    function: &'a FunctionReflection,
    arg: &'a Argument,
    interface: &Interface,
    inputs: Inputs<'a>,
    bound: &mut Bound<'a>,
) -> Result<(), RunError> {
    static NONE: std::sync::OnceLock<ArgumentBuffer> = std::sync::OnceLock::new();
    let given = inputs
        .argument_buffers
        .get(&arg.index)
        .unwrap_or_else(|| NONE.get_or_init(ArgumentBuffer::default));
    let member_inputs = Inputs {
        buffers: &given.buffers,
        textures: &given.textures,
        samplers: &given.samplers,
        ..inputs
    };
    for m in &arg.members {
        bind_argument(
            gpu,
            function,
            m,
            interface,
            member_inputs,
            Some(arg.index),
            bound,
        )
        .map_err(|e| match e {
            RunError::MissingBuffer { name, index, stage }
            | RunError::MissingTexture { name, index, stage } => RunError::MissingMember {
                name,
                id: index,
                buffer: arg.index,
                stage,
            },
            other => other,
        })?;
    }
    Ok(())
}

/// A conditional argument that does not exist under the constants: the
/// caller's resource, if any, is neither needed nor uploaded (a buffer comes
/// back unchanged, as in Metal), and the WGSL's binding, if it uses one,
/// gets a placeholder.
fn bind_switched_off<'a>(
    arg: &'a Argument,
    interface: &Interface,
    inputs: Inputs<'a>,
    bound: &mut Bound<'a>,
) {
    if let (ArgumentKind::Buffer, Some(bytes)) = (arg.kind, inputs.buffers.get(&arg.index)) {
        bound.buffers.push(BoundBuffer {
            arg,
            key: Key {
                owner: None,
                index: arg.index,
            },
            bytes,
            used: None,
        });
    }
    if let Some(used) = find_used(interface, arg.binding) {
        bound.placeholders.push((arg, used));
    }
}

/// The sampler of a sampler argument the shader uses: the caller's
/// descriptor, or the default.
fn plan_sampler_argument(
    gpu: &Gpu,
    arg: &Argument,
    used: UsedBinding,
    given: &BTreeMap<u32, SamplerDescriptor>,
) -> Result<SamplerPlan, RunError> {
    let comparison = sampler_binding(&arg.name, &used)?;
    if arg
        .sampler
        .as_ref()
        .is_some_and(|s| s.comparison != comparison)
    {
        return Err(RunError::Shader(format!(
            "sampler `{}`: the WGSL and the reflection disagree on whether it is a \
             comparison sampler",
            arg.name
        )));
    }
    let desc = given.get(&arg.index).cloned();
    let desc = desc.unwrap_or_else(samplers::default_sampler);
    samplers::plan(gpu, &arg.name, &desc, comparison)
}

/// Whether a used sampler binding is a `sampler_comparison`.
fn sampler_binding(name: &str, used: &UsedBinding) -> Result<bool, RunError> {
    match used.kind {
        BindingKind::Sampler { comparison } => Ok(comparison),
        _ => Err(RunError::Shader(format!(
            "sampler `{name}` is bound at @binding({}), which the WGSL declares as another \
             kind of resource",
            used.binding
        ))),
    }
}

/// Checks a texture argument's texture, and how the WGSL declares it.
fn bind_texture<'a>(
    arg: &'a Argument,
    key: Key,
    stage: crate::reflect::Stage,
    interface: &Interface,
    textures: &'a BTreeMap<u32, TextureData>,
) -> Result<Option<BoundTexture<'a>>, RunError> {
    let Some(data) = textures.get(&arg.index) else {
        if arg.active {
            return Err(RunError::MissingTexture {
                name: arg.name.clone(),
                index: arg.index,
                stage,
            });
        }
        return Ok(None);
    };
    let Some(info) = &arg.texture else {
        return Err(RunError::Shader(format!(
            "texture argument `{}` has no texture details in the reflection",
            arg.name
        )));
    };
    let used = find_used(interface, arg.binding);
    // An inactive argument's texture is checked too if the WGSL binds it
    // after all: it is uploaded then.
    if arg.active || used.is_some() {
        check_texture(arg, info, data)?;
    }
    if let Some(used) = &used {
        check_texture_binding(arg, info, used)?;
    }
    let read_back = matches!(
        info.binding_kind,
        TextureBinding::Storage | TextureBinding::Buffer
    ) && arg.access != Access::Read;
    Ok(Some(BoundTexture {
        arg,
        key,
        data,
        used,
        read_back,
    }))
}

/// The WGSL type of a texture binding must be what the reflection says.
fn check_texture_binding(
    arg: &Argument,
    info: &TextureInfo,
    used: &UsedBinding,
) -> Result<(), RunError> {
    let disagree = |what: &str| {
        Err(RunError::Shader(format!(
            "texture `{}` [[texture({})]]: the WGSL and the reflection disagree on its {what}",
            arg.name, arg.index
        )))
    };
    if info.binding_kind == TextureBinding::Buffer {
        // A texel buffer is a storage buffer of words.
        return match used.kind {
            BindingKind::Buffer(super::interface::BufferBinding::Storage { .. }) => Ok(()),
            _ => disagree("kind of resource"),
        };
    }
    let BindingKind::Texture {
        class,
        view_dimension,
    } = used.kind
    else {
        return disagree("kind of resource");
    };
    let kind = match class {
        TextureClass::Sampled { .. } => TextureBinding::Sampled,
        TextureClass::Depth { .. } => TextureBinding::Depth,
        TextureClass::Storage { .. } => TextureBinding::Storage,
    };
    if kind != info.binding_kind {
        return disagree("binding kind");
    }
    if view_dimension_name(view_dimension) != info.view_dimension {
        return disagree("view dimension");
    }
    Ok(())
}

/// WebGPU's name of a view dimension, as the reflection spells it.
fn view_dimension_name(d: wgpu::TextureViewDimension) -> &'static str {
    use wgpu::TextureViewDimension as V;
    match d {
        V::D1 => "1d",
        V::D2 => "2d",
        V::D2Array => "2d-array",
        V::Cube => "cube",
        V::CubeArray => "cube-array",
        V::D3 => "3d",
    }
}

/// Every binding the shader uses must have been claimed.
fn check_all_claimed(interface: &Interface, bound: &Bound<'_>) -> Result<(), RunError> {
    for used in &interface.bindings {
        let is = |u: &Option<UsedBinding>| {
            u.is_some_and(|u| u.group == used.group && u.binding == used.binding)
        };
        let known = bound.buffers.iter().any(|b| is(&b.used))
            || bound.textures.iter().any(|t| is(&t.used))
            || bound.samplers.iter().any(|s| is(&Some(s.used)))
            || bound.placeholders.iter().any(|(_, p)| is(&Some(*p)))
            || is(&bound.dispatch)
            || is(&bound.viewport.map(|(u, _)| u))
            || is(&bound.stage_in_region.map(|(u, _)| u))
            || is(&bound.draw_parameters.map(|(u, _)| u));
        if !known {
            return Err(RunError::Shader(format!(
                "the WGSL uses @group({}) @binding({}), which is neither an argument given \
                 a resource, a sampler, nor the dispatch uniform",
                used.group, used.binding
            )));
        }
    }
    Ok(())
}

/// The GPU object at one binding.
pub(crate) enum Slot {
    /// An argument's buffer.
    Buffer(wgpu::Buffer),
    /// The dispatch uniform: a new buffer for each part of the dispatch.
    Dispatch,
    /// A texture's view.
    Texture(wgpu::TextureView),
    /// A sampler.
    Sampler(wgpu::Sampler),
}

/// One binding of the pipeline: where, its layout type and its object.
pub(crate) struct Binding {
    pub used: UsedBinding,
    pub ty: wgpu::BindingType,
    pub slot: Slot,
}

/// The GPU objects of one run.
pub(crate) struct Created {
    /// Every binding, sorted by group and binding.
    pub bindings: Vec<Binding>,
    /// Buffers to read back: where the caller gave it, buffer, the user's
    /// length.
    pub buffers: Vec<(Key, wgpu::Buffer, usize)>,
    /// Storage textures to read back: where the caller gave it, texture,
    /// its data's shape.
    pub textures: Vec<(Key, wgpu::Texture, TextureData)>,
    /// Texel buffers (`texture_buffer`) to read back: where the caller gave
    /// it, the buffer of its texels, its data's shape.
    pub texel_buffers: Vec<(Key, wgpu::Buffer, TextureData)>,
}

impl Bound<'_> {
    /// Creates (and fills) every buffer, texture and sampler the shader
    /// uses; depth textures record their fill into `encoder`.
    pub(crate) fn create(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<Created, RunError> {
        let mut out = Created {
            bindings: Vec::new(),
            buffers: Vec::new(),
            textures: Vec::new(),
            texel_buffers: Vec::new(),
        };
        for b in &self.buffers {
            let Some(used) = b.used else { continue };
            let buffer = resources::upload_argument(gpu, b.arg, b.bytes, &used)?;
            out.buffers.push((b.key, buffer.clone(), b.bytes.len()));
            let ty = buffer_type(&used);
            out.bindings.push(Binding {
                used,
                ty,
                slot: Slot::Buffer(buffer),
            });
        }
        for t in &self.textures {
            let Some(used) = t.used else { continue };
            if matches!(used.kind, BindingKind::Buffer(_)) {
                // A texel buffer: its texels are the buffer's bytes.
                let buffer = resources::upload_argument(gpu, t.arg, &t.data.data, &used)?;
                if t.read_back {
                    out.texel_buffers
                        .push((t.key, buffer.clone(), t.data.clone()));
                }
                let ty = buffer_type(&used);
                out.bindings.push(Binding {
                    used,
                    ty,
                    slot: Slot::Buffer(buffer),
                });
                continue;
            }
            out.bindings
                .push(create_texture(gpu, encoder, t, used, &mut out.textures));
        }
        for s in &self.samplers {
            out.bindings.push(Binding {
                used: s.used,
                ty: wgpu::BindingType::Sampler(s.plan.binding_type),
                slot: Slot::Sampler(gpu.device.create_sampler(&s.plan.descriptor)),
            });
        }
        for (arg, used) in &self.placeholders {
            out.bindings.push(placeholder(gpu, arg, *used)?);
        }
        if let Some((used, size)) = self.viewport {
            out.bindings.push(Binding {
                used,
                ty: buffer_type(&used),
                slot: Slot::Buffer(super::points::viewport_buffer(gpu, size)),
            });
        }
        if let Some((used, region)) = self.stage_in_region {
            let buffer = resources::uniform(gpu, "stage-in region", &region.to_bytes());
            out.bindings.push(Binding {
                used,
                ty: buffer_type(&used),
                slot: Slot::Buffer(buffer),
            });
        }
        if let Some((used, draw)) = self.draw_parameters {
            let buffer = resources::uniform(gpu, "draw parameters", &draw.to_bytes());
            out.bindings.push(Binding {
                used,
                ty: buffer_type(&used),
                slot: Slot::Buffer(buffer),
            });
        }
        if let Some(used) = self.dispatch {
            let ty = buffer_type(&used);
            out.bindings.push(Binding {
                used,
                ty,
                slot: Slot::Dispatch,
            });
        }
        out.bindings.sort_by_key(|b| (b.used.group, b.used.binding));
        Ok(out)
    }

    /// The run's results: every buffer given and every storage texture that
    /// may be written, the ones the shader used as read back in `read`.
    pub(crate) fn outputs(&self, read: Outputs) -> Outputs {
        let mut out = Outputs::default();
        for b in &self.buffers {
            out.insert_buffer(b.key, b.bytes.to_vec());
        }
        for t in self.textures.iter().filter(|t| t.read_back) {
            let mut level0 = t.data.clone();
            level0.data.truncate(t.data.mip_len(0));
            level0.mip_levels = 1;
            out.insert_texture(t.key, level0);
        }
        out.buffers.extend(read.buffers);
        out.textures.extend(read.textures);
        for (n, ab) in read.argument_buffers {
            let mine = out.argument_buffers.entry(n).or_default();
            mine.buffers.extend(ab.buffers);
            mine.textures.extend(ab.textures);
        }
        out
    }
}

/// The placeholder binding of a switched-off conditional argument.
fn placeholder(gpu: &Gpu, arg: &Argument, used: UsedBinding) -> Result<Binding, RunError> {
    Ok(match arg.kind {
        ArgumentKind::Texture => {
            let (view, format) = placeholders::texture(gpu, arg, &used)?;
            let BindingKind::Texture {
                class,
                view_dimension,
            } = used.kind
            else {
                unreachable!("placeholders::texture accepts only textures")
            };
            Binding {
                used,
                ty: texture_type(gpu, class, view_dimension, format),
                slot: Slot::Texture(view),
            }
        }
        ArgumentKind::Sampler => {
            let comparison = sampler_binding(&arg.name, &used)?;
            let plan = samplers::plan(gpu, &arg.name, &samplers::default_sampler(), comparison)?;
            Binding {
                used,
                ty: wgpu::BindingType::Sampler(plan.binding_type),
                slot: Slot::Sampler(gpu.device.create_sampler(&plan.descriptor)),
            }
        }
        _ => Binding {
            used,
            ty: buffer_type(&used),
            slot: Slot::Buffer(placeholders::buffer(gpu, &used)),
        },
    })
}

fn buffer_type(used: &UsedBinding) -> wgpu::BindingType {
    let ty = match used.kind {
        BindingKind::Buffer(super::interface::BufferBinding::Storage { read_only }) => {
            wgpu::BufferBindingType::Storage { read_only }
        }
        _ => wgpu::BufferBindingType::Uniform,
    };
    wgpu::BindingType::Buffer {
        ty,
        has_dynamic_offset: false,
        min_binding_size: None,
    }
}

/// Uploads a texture and makes its view: all levels and layers for
/// sampling, level 0 for storage (WGSL storage textures have one level).
fn create_texture(
    gpu: &Gpu,
    encoder: &mut wgpu::CommandEncoder,
    t: &BoundTexture<'_>,
    used: UsedBinding,
    read_backs: &mut Vec<(Key, wgpu::Texture, TextureData)>,
) -> Binding {
    let BindingKind::Texture {
        class,
        view_dimension,
    } = used.kind
    else {
        unreachable!("check_texture_binding accepted only textures");
    };
    let storage = matches!(class, TextureClass::Storage { .. });
    // A `texture1d_array` is a 2-D array of height 1 in the WGSL: its 1D
    // rows are uploaded as one (read back, they copy out the same way).
    let rows;
    let data = if t.data.dimension == wgpu::TextureDimension::D1
        && view_dimension == wgpu::TextureViewDimension::D2Array
    {
        rows = TextureData {
            dimension: wgpu::TextureDimension::D2,
            ..t.data.clone()
        };
        &rows
    } else {
        t.data
    };
    let mut usage = wgpu::TextureUsages::empty();
    if storage {
        usage |= wgpu::TextureUsages::STORAGE_BINDING;
    }
    if matches!(class, TextureClass::Storage { access } if access == wgpu::StorageTextureAccess::Atomic)
    {
        usage |= wgpu::TextureUsages::STORAGE_ATOMIC;
    }
    let texture = resources::upload_texture(gpu, encoder, &t.arg.name, data, usage);
    let view = texture.create_view(&wgpu::TextureViewDescriptor {
        label: Some(&t.arg.name),
        dimension: Some(view_dimension),
        mip_level_count: storage.then_some(1),
        ..Default::default()
    });
    if t.read_back {
        read_backs.push((t.key, texture, t.data.clone()));
    }
    Binding {
        used,
        ty: texture_type(gpu, class, view_dimension, t.data.format),
        slot: Slot::Texture(view),
    }
}

/// The layout type of a texture binding. A float texture is declared
/// filterable only if its format is on this device, so that unfilterable
/// formats (r32float without `float32-filterable`) can still be loaded and
/// sampled with non-filtering samplers.
fn texture_type(
    gpu: &Gpu,
    class: TextureClass,
    view_dimension: wgpu::TextureViewDimension,
    format: wgpu::TextureFormat,
) -> wgpu::BindingType {
    use wgpu::TextureSampleType as S;
    match class {
        TextureClass::Sampled { kind, multi } => {
            let sample_type = match kind {
                naga::ScalarKind::Sint => S::Sint,
                naga::ScalarKind::Uint => S::Uint,
                _ => S::Float {
                    filterable: format.sample_type(None, Some(gpu.features()))
                        == Some(S::Float { filterable: true }),
                },
            };
            wgpu::BindingType::Texture {
                sample_type,
                view_dimension,
                multisampled: multi,
            }
        }
        TextureClass::Depth { multi } => wgpu::BindingType::Texture {
            sample_type: S::Depth,
            view_dimension,
            multisampled: multi,
        },
        TextureClass::Storage { access } => wgpu::BindingType::StorageTexture {
            access,
            format,
            view_dimension,
        },
    }
}
