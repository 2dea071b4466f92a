//! Buffers and textures on the GPU: checking the user's bytes against an
//! argument, uploading them, and reading them back; plus the error-scope
//! wrapper every wgpu call of the runner goes through.

use super::interface::{BindingKind, BufferBinding, UsedBinding};
use super::{Gpu, RunError, TextureData};
use crate::reflect::Argument;
use wgpu::util::DeviceExt;

/// Runs `f` with wgpu's validation, out-of-memory and internal errors caught,
/// returning the first one as a [`RunError::Gpu`].
///
/// Error scopes are per thread in wgpu, so several threads may share one
/// [`Gpu`] (tests do).
pub(crate) fn scoped<T>(gpu: &Gpu, f: impl FnOnce() -> T) -> Result<T, RunError> {
    gpu.check_lost()?;
    let filters = [
        wgpu::ErrorFilter::Validation,
        wgpu::ErrorFilter::OutOfMemory,
        wgpu::ErrorFilter::Internal,
    ];
    let guards: Vec<_> = filters
        .iter()
        .map(|f| gpu.device.push_error_scope(*f))
        .collect();
    let value = f();
    // Scopes pop in reverse order of pushing.
    let mut first = None;
    for guard in guards.into_iter().rev() {
        if let Some(error) = pollster::block_on(guard.pop()) {
            first.get_or_insert(error);
        }
    }
    match first {
        Some(error) => Err(RunError::Gpu(error.to_string())),
        None => gpu.check_lost().map(|()| value),
    }
}

/// How long the runner waits for the GPU unless told otherwise:
/// `MSL2WGSL_GPU_TIMEOUT_S` seconds, 120 by default (software
/// rasterizers are slow; a kernel that loops forever must still end the
/// run).
pub(crate) fn default_gpu_timeout() -> std::time::Duration {
    let seconds = std::env::var("MSL2WGSL_GPU_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(120.0);
    std::time::Duration::from_secs_f64(seconds)
}

/// Waits for the device's submitted work, at most [`Gpu::timeout`].
pub(crate) fn wait_for_gpu(gpu: &Gpu) -> Result<(), RunError> {
    let timeout = gpu.timeout();
    let result = gpu.device.poll(wgpu::PollType::Wait {
        submission_index: None,
        timeout: Some(timeout),
    });
    gpu.check_lost()?;
    match result {
        Ok(_) => Ok(()),
        Err(wgpu::PollError::Timeout) => Err(timed_out(timeout)),
        Err(e) => Err(RunError::Gpu(e.to_string())),
    }
}

fn timed_out(timeout: std::time::Duration) -> RunError {
    RunError::Gpu(format!(
        "the GPU did not finish within {timeout:?} (a kernel that never ends?); \
         `MSL2WGSL_GPU_TIMEOUT_S` or `Gpu::with_timeout` sets the limit"
    ))
}

/// Checks the bytes given for a buffer argument: present if the argument is
/// active, and then at least one element (`T*`) or the whole type (`T&`)
/// long. An inactive argument may be given anything, as in Metal.
pub(crate) fn check_argument<'a>(
    arg: &Argument,
    stage: crate::reflect::Stage,
    bytes: Option<&'a Vec<u8>>,
) -> Result<Option<&'a Vec<u8>>, RunError> {
    let Some(bytes) = bytes else {
        if arg.active {
            return Err(RunError::MissingBuffer {
                name: arg.name.clone(),
                index: arg.index,
                stage,
            });
        }
        return Ok(None);
    };
    if let Some(info) = arg.buffer.as_ref().filter(|_| arg.active) {
        if (bytes.len() as u64) < u64::from(info.data_size) {
            return Err(RunError::BufferTooSmall {
                name: arg.name.clone(),
                index: arg.index,
                len: bytes.len(),
                needed: info.data_size.into(),
            });
        }
    }
    Ok(Some(bytes))
}

/// The size of the wgpu buffer for `len` user bytes: a multiple of 4 (wgpu
/// copies and storage bindings need it), at least 4, and at least the
/// binding's minimum size (the tail the user did not give is zero).
pub(crate) fn padded_size(len: usize, min_size: u64) -> u64 {
    (len as u64).max(min_size).max(4).next_multiple_of(4)
}

/// Uploads an argument's bytes into a new buffer usable for `binding`.
pub(crate) fn upload_argument(
    gpu: &Gpu,
    arg: &Argument,
    bytes: &[u8],
    binding: &UsedBinding,
) -> Result<wgpu::Buffer, RunError> {
    let size = padded_size(bytes.len(), binding.min_size);
    // Uniform types are sized in multiples of 16 on some backends (D3D12
    // constant buffers); the tail is zeros the shader never reads.
    let size = match binding.kind {
        BindingKind::Buffer(BufferBinding::Uniform) => size.next_multiple_of(16),
        _ => size,
    };
    let (usage, limit) = match binding.kind {
        BindingKind::Buffer(BufferBinding::Uniform) => (
            wgpu::BufferUsages::UNIFORM,
            gpu.limits.max_uniform_buffer_binding_size,
        ),
        _ => (
            wgpu::BufferUsages::STORAGE,
            gpu.limits.max_storage_buffer_binding_size,
        ),
    };
    let limit = limit.min(gpu.limits.max_buffer_size);
    if size > limit {
        return Err(RunError::BufferTooLarge {
            name: arg.name.clone(),
            index: arg.index,
            len: size,
            limit,
        });
    }
    let mut contents = bytes.to_vec();
    contents.resize(size as usize, 0);
    Ok(gpu
        .device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(&arg.name),
            contents: &contents,
            usage: usage | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        }))
}

/// Creates a uniform buffer holding `bytes`.
pub(crate) fn uniform(gpu: &Gpu, label: &str, bytes: &[u8]) -> wgpu::Buffer {
    gpu.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytes,
            usage: wgpu::BufferUsages::UNIFORM,
        })
}

/// A GPU buffer to read back after the dispatch: its Metal index, the
/// buffer, and how many bytes the user gave.
pub(crate) struct Readback<'a> {
    /// Where the caller gave it.
    pub key: super::bind::Key,
    /// The buffer holding the argument.
    pub buffer: &'a wgpu::Buffer,
    /// The user's length (the buffer may be longer).
    pub len: usize,
}

/// A mappable buffer of `size` bytes that copies can fill.
fn staging_buffer(gpu: &Gpu, size: u64) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Records copies of every buffer in `reads` into mappable staging buffers;
/// returns the staging buffers in the same order.
pub(crate) fn stage_readbacks(
    gpu: &Gpu,
    encoder: &mut wgpu::CommandEncoder,
    reads: &[Readback<'_>],
) -> Vec<wgpu::Buffer> {
    reads
        .iter()
        .map(|read| {
            let staging = staging_buffer(gpu, read.buffer.size());
            encoder.copy_buffer_to_buffer(read.buffer, 0, &staging, 0, read.buffer.size());
            staging
        })
        .collect()
}

/// The aspect copies of `format` go through: the depth of depth formats.
fn copy_aspect(format: wgpu::TextureFormat) -> wgpu::TextureAspect {
    if format.is_depth_stencil_format() {
        wgpu::TextureAspect::DepthOnly
    } else {
        wgpu::TextureAspect::All
    }
}

fn extent([width, height, layers]: [u32; 3]) -> wgpu::Extent3d {
    wgpu::Extent3d {
        width,
        height,
        depth_or_array_layers: layers,
    }
}

/// Creates a texture shaped like `data` and fills every level with its
/// texels, with the usages in `extra` (storage, atomic) beside sampling
/// and copies. depth32float cannot be a copy
/// destination in WebGPU, so it is filled by render passes recorded into
/// `encoder` (see [`fill_depth`]); everything else by `write_texture`.
pub(crate) fn upload_texture(
    gpu: &Gpu,
    encoder: &mut wgpu::CommandEncoder,
    label: &str,
    data: &TextureData,
    extra: wgpu::TextureUsages,
) -> wgpu::Texture {
    use wgpu::TextureUsages as U;
    let by_render = data.format == wgpu::TextureFormat::Depth32Float;
    let mut usage = U::TEXTURE_BINDING | U::COPY_SRC | extra;
    usage |= if by_render {
        U::RENDER_ATTACHMENT
    } else {
        U::COPY_DST
    };
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: extent([data.width, data.height, data.layers]),
        mip_level_count: data.mip_levels,
        sample_count: data.sample_count,
        dimension: data.dimension,
        format: data.format,
        usage,
        view_formats: &[],
    });
    if by_render {
        fill_depth(gpu, encoder, &texture, data);
    } else {
        write_levels(gpu, &texture, data);
    }
    texture
}

/// Writes every mip level of `data` into `texture`. `write_texture` takes
/// tightly packed rows (only buffer copies need 256-byte rows).
fn write_levels(gpu: &Gpu, texture: &wgpu::Texture, data: &TextureData) {
    let texel = data.texel_size().unwrap_or(1);
    for level in 0..data.mip_levels {
        let size = data.mip_extent(level);
        gpu.queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture,
                mip_level: level,
                origin: wgpu::Origin3d::ZERO,
                aspect: copy_aspect(data.format),
            },
            &data.data[data.mip_range(level)],
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(size[0] * texel),
                rows_per_image: Some(size[1]),
            },
            extent(size),
        );
    }
}

/// Draws one triangle over the whole target; the fragment shader writes
/// the depth it loads from an r32float copy of the data.
const DEPTH_FILL: &str = "
@group(0) @binding(0) var source: texture_2d<f32>;

@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    // (-1,-1), (3,-1), (-1,3): covers the viewport without a diagonal seam.
    let p = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(p * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs(@builtin(position) p: vec4<f32>) -> @builtin(frag_depth) f32 {
    return textureLoad(source, vec2<u32>(p.xy), 0).x;
}
";

/// Fills every level and layer of a depth32float texture with the values
/// of `data`, one render pass each. Values outside [0, 1] come out clamped
/// to it (the viewport's depth range), where Metal's `replaceRegion` would
/// keep them: a limit of this way of filling.
fn fill_depth(
    gpu: &Gpu,
    encoder: &mut wgpu::CommandEncoder,
    texture: &wgpu::Texture,
    data: &TextureData,
) {
    let (pipeline, layout) = depth_fill_pipeline(gpu);
    for level in 0..data.mip_levels {
        for layer in 0..data.mip_extent(level)[2] {
            // wgpu keeps the source alive until the pass has run.
            let bind_group = depth_source(gpu, &layout, data, level, layer);
            let target = texture.create_view(&wgpu::TextureViewDescriptor {
                dimension: Some(wgpu::TextureViewDimension::D2),
                base_mip_level: level,
                mip_level_count: Some(1),
                base_array_layer: layer,
                array_layer_count: Some(1),
                ..Default::default()
            });
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("depth fill"),
                color_attachments: &[],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &target,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(0.0),
                        store: wgpu::StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                ..Default::default()
            });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.draw(0..3, 0..1);
        }
    }
}

/// An r32float texture holding one layer of one level of `data`, bound
/// for [`DEPTH_FILL`].
fn depth_source(
    gpu: &Gpu,
    layout: &wgpu::BindGroupLayout,
    data: &TextureData,
    level: u32,
    layer: u32,
) -> wgpu::BindGroup {
    let [width, height, _] = data.mip_extent(level);
    let layer_len = width as usize * height as usize * 4;
    let start = data.mip_range(level).start + layer as usize * layer_len;
    let source = TextureData::new_2d(
        wgpu::TextureFormat::R32Float,
        width,
        height,
        data.data[start..start + layer_len].to_vec(),
    );
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("depth source"),
        size: extent([width, height, 1]),
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: source.format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    write_levels(gpu, &texture, &source);
    let view = texture.create_view(&Default::default());
    gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("depth source"),
        layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::TextureView(&view),
        }],
    })
}

/// The render pipeline of [`DEPTH_FILL`] and its bind group layout (an
/// unfilterable float texture: r32float is not filterable everywhere).
fn depth_fill_pipeline(gpu: &Gpu) -> (wgpu::RenderPipeline, wgpu::BindGroupLayout) {
    let device = &gpu.device;
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("depth fill"),
        source: wgpu::ShaderSource::Wgsl(DEPTH_FILL.into()),
    });
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("depth fill"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: false },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        }],
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("depth fill"),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("depth fill"),
        layout: Some(&pipeline_layout),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: Some(wgpu::DepthStencilState {
            format: wgpu::TextureFormat::Depth32Float,
            depth_write_enabled: Some(true),
            depth_compare: Some(wgpu::CompareFunction::Always),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[],
        }),
        multiview_mask: None,
        cache: None,
    });
    (pipeline, layout)
}

/// Where a texture's level 0 was copied for reading back.
pub(crate) struct TextureStaging {
    /// The mappable buffer.
    pub buffer: wgpu::Buffer,
    /// Its size.
    pub size: usize,
    /// Bytes per row in `buffer` (a multiple of 256, as buffer copies need).
    padded_row: usize,
}

/// Records a copy of `texture`'s level 0 (all layers), shaped like `data`,
/// into a mappable buffer.
pub(crate) fn stage_texture(
    gpu: &Gpu,
    encoder: &mut wgpu::CommandEncoder,
    texture: &wgpu::Texture,
    data: &TextureData,
) -> TextureStaging {
    let size = data.mip_extent(0);
    let row = size[0] * data.texel_size().unwrap_or(1);
    let padded_row = row.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let total = padded_row as usize * size[1] as usize * size[2] as usize;
    let buffer = staging_buffer(gpu, total as u64);
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: copy_aspect(data.format),
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded_row),
                rows_per_image: Some(size[1]),
            },
        },
        extent(size),
    );
    TextureStaging {
        buffer,
        size: total,
        padded_row: padded_row as usize,
    }
}

/// Level 0 of `shape` from the mapped bytes of its staging buffer, with the
/// row padding removed.
pub(crate) fn unpad_texture(
    shape: &TextureData,
    staging: &TextureStaging,
    bytes: &[u8],
) -> TextureData {
    let size = shape.mip_extent(0);
    let row = size[0] as usize * shape.texel_size().unwrap_or(1) as usize;
    let texels: Vec<u8> = bytes
        .chunks(staging.padded_row)
        .flat_map(|padded| &padded[..row])
        .copied()
        .collect();
    let mut out = shape.clone();
    out.mip_levels = 1;
    out.data = texels;
    out
}

/// Maps every staging buffer (after the submission that filled them) and
/// returns the first `len` bytes of each.
pub(crate) fn map_readbacks(
    gpu: &Gpu,
    staging: &[wgpu::Buffer],
    lens: &[usize],
) -> Result<Vec<Vec<u8>>, RunError> {
    let (sender, receiver) = std::sync::mpsc::channel();
    for (i, buffer) in staging.iter().enumerate() {
        let sender = sender.clone();
        buffer.map_async(wgpu::MapMode::Read, .., move |result| {
            // The receiver outlives every callback: it is only dropped after
            // the poll below has run them all.
            let _ = sender.send((i, result));
        });
    }
    drop(sender);
    wait_for_gpu(gpu)?;
    let deadline = std::time::Instant::now() + gpu.timeout();
    // Another thread polling the same device may run these callbacks after
    // our poll returned, so wait for each one rather than only looking.
    for _ in 0..staging.len() {
        let (_, result) = loop {
            match receiver.recv_timeout(std::time::Duration::from_millis(10)) {
                Ok(message) => break message,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    gpu.check_lost()?;
                    if std::time::Instant::now() > deadline {
                        return Err(timed_out(gpu.timeout()));
                    }
                    gpu.device
                        .poll(wgpu::PollType::Poll)
                        .map_err(|e| RunError::Gpu(e.to_string()))?;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(RunError::Gpu("a readback buffer was never mapped".into()));
                }
            }
        };
        result.map_err(|e| RunError::Gpu(format!("cannot map a buffer for reading: {e}")))?;
    }
    let mut out = Vec::with_capacity(staging.len());
    for (buffer, &len) in staging.iter().zip(lens) {
        let view = buffer
            .get_mapped_range(..)
            .map_err(|e| RunError::Gpu(format!("cannot read a mapped buffer: {e}")))?;
        out.push(view[..len].to_vec());
        drop(view);
        buffer.unmap();
    }
    Ok(out)
}

/// The device's value of a WebGPU limit that reflection's `requiredLimits`
/// may name (`src/library/limits.rs`), or `None` for a name it does not know.
fn device_limit(limits: &wgpu::Limits, name: &str) -> Option<u64> {
    let value = match name {
        "maxStorageBuffersPerShaderStage" => limits.max_storage_buffers_per_shader_stage,
        "maxUniformBuffersPerShaderStage" => limits.max_uniform_buffers_per_shader_stage,
        "maxSampledTexturesPerShaderStage" => limits.max_sampled_textures_per_shader_stage,
        "maxStorageTexturesPerShaderStage" => limits.max_storage_textures_per_shader_stage,
        "maxSamplersPerShaderStage" => limits.max_samplers_per_shader_stage,
        "maxComputeWorkgroupStorageSize" => limits.max_compute_workgroup_storage_size,
        "maxComputeInvocationsPerWorkgroup" => limits.max_compute_invocations_per_workgroup,
        "maxComputeWorkgroupSizeX" => limits.max_compute_workgroup_size_x,
        "maxComputeWorkgroupSizeY" => limits.max_compute_workgroup_size_y,
        "maxComputeWorkgroupSizeZ" => limits.max_compute_workgroup_size_z,
        _ => return None,
    };
    Some(u64::from(value))
}

/// Refuses a function whose `requiredLimits` the device cannot meet (the
/// device has the adapter's limits), naming the limit, before wgpu refuses
/// the pipeline with a less specific message.
pub(crate) fn check_required_limits(
    gpu: &Gpu,
    function: &crate::reflect::FunctionReflection,
) -> Result<(), RunError> {
    for (name, &needed) in &function.required_limits {
        let Some(has) = device_limit(&gpu.limits, name) else {
            continue;
        };
        if needed > has {
            let message = format!(
                "`{}` needs {name} of {needed}, but this adapter allows {has}",
                function.name
            );
            return Err(match function.stage {
                crate::reflect::Stage::Kernel => RunError::InvalidDispatch(message),
                _ => RunError::InvalidRender(message),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reflect::{Access, ArgumentKind, BufferInfo, Stage};

    fn arg(active: bool, data_size: u32, is_pointer: bool) -> Argument {
        Argument {
            name: "data".into(),
            kind: ArgumentKind::Buffer,
            index: 3,
            access: Access::ReadWrite,
            active,
            binding: None,
            buffer: Some(BufferInfo {
                alignment: 4,
                data_size,
                data_type: "float".into(),
                is_pointer,
                struct_type: None,
                array_type: None,
                binding_type: crate::reflect::BufferBindingType::ReadOnlyStorage,
                binding_size: None,
            }),
            threadgroup: None,
            texture: None,
            sampler: None,
            members: Vec::new(),
        }
    }

    #[test]
    fn padding() {
        assert_eq!(padded_size(0, 0), 4);
        assert_eq!(padded_size(5, 4), 8);
        assert_eq!(padded_size(8, 16), 16);
        assert_eq!(padded_size(4002, 4), 4004);
    }

    #[test]
    fn argument_checks() {
        let eight = vec![0u8; 8];
        assert!(matches!(
            check_argument(&arg(true, 4, true), Stage::Kernel, None),
            Err(RunError::MissingBuffer { index: 3, .. })
        ));
        assert!(matches!(
            check_argument(&arg(false, 4, true), Stage::Kernel, None),
            Ok(None)
        ));
        assert!(matches!(
            check_argument(&arg(true, 16, false), Stage::Kernel, Some(&eight)),
            Err(RunError::BufferTooSmall {
                len: 8,
                needed: 16,
                ..
            })
        ));
        assert!(check_argument(&arg(true, 8, true), Stage::Kernel, Some(&eight)).is_ok());
        assert!(check_argument(&arg(false, 16, false), Stage::Kernel, Some(&eight)).is_ok());
    }
}
