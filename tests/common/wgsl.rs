//! Running a hand-written WGSL compute module as it is, with no translator
//! in between: reduced reproducers of backend defects (the WGSL is right,
//! what a backend computes from it is not).

use msl2wgsl::runner::Gpu;
use wgpu::util::DeviceExt;

/// One buffer of [`dispatch`]: its `@group(0)` binding, its contents and
/// its usage (`COPY_SRC` is added: every buffer is read back).
pub struct Bound<'a> {
    /// `@binding` in group 0.
    pub binding: u32,
    /// Initial contents.
    pub contents: &'a [u8],
    /// `STORAGE` or `UNIFORM`.
    pub usage: wgpu::BufferUsages,
}

/// Runs the compute entry point `entry` of `wgsl` as `groups` workgroups,
/// with pipeline-overridable `constants` and `buffers` bound in group 0;
/// returns each buffer's contents afterwards, in the order given.
pub fn dispatch(
    gpu: &Gpu,
    wgsl: &str,
    entry: &str,
    constants: &[(&str, f64)],
    buffers: &[Bound],
    groups: [u32; 3],
) -> Vec<Vec<u8>> {
    let device = gpu.device();
    let made: Vec<wgpu::Buffer> = buffers
        .iter()
        .map(|b| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: b.contents,
                usage: b.usage | wgpu::BufferUsages::COPY_SRC,
            })
        })
        .collect();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("reproducer"),
        source: wgpu::ShaderSource::Wgsl(wgsl.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("reproducer"),
        layout: None,
        module: &module,
        entry_point: Some(entry),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            ..Default::default()
        },
        cache: None,
    });
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .zip(&made)
        .map(|(b, buffer)| wgpu::BindGroupEntry {
            binding: b.binding,
            resource: buffer.as_entire_binding(),
        })
        .collect();
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
    }
    gpu.queue().submit([encoder.finish()]);
    made.iter()
        .map(|b| gpu.read_buffer(b).expect("the buffer reads back"))
        .collect()
}

/// Runs `@compute fn main` of `wgsl` over `threads` invocations
/// (`@workgroup_size(64)`), with `data` bound read-write as
/// `@group(0) @binding(0) var<storage, read_write> data: array<u32>`;
/// returns the buffer afterwards.
pub fn run_words(gpu: &Gpu, wgsl: &str, data: &[u32], threads: u32) -> Vec<u32> {
    let bytes: Vec<u8> = data.iter().flat_map(|w| w.to_le_bytes()).collect();
    let buffers = [Bound {
        binding: 0,
        contents: &bytes,
        usage: wgpu::BufferUsages::STORAGE,
    }];
    let out = dispatch(
        gpu,
        wgsl,
        "main",
        &[],
        &buffers,
        [threads.div_ceil(64), 1, 1],
    );
    super::u32s(&out[0])
}

/// How [`render_rgba8`] reads the attachments back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadBack {
    /// Copies recorded after the pass in the same command encoder (as the
    /// runner does).
    SameEncoder,
    /// [`Gpu::read_texture`] after the draw was submitted.
    Later,
}

/// Draws `vertices` vertices with `@vertex fn vs` and `@fragment fn fs` of
/// `wgsl` into `targets` cleared `rgba8unorm` colour attachments of
/// `size`² (`size` a multiple of 64); returns each attachment's texels.
pub fn render_rgba8(
    gpu: &Gpu,
    wgsl: &str,
    vertices: u32,
    targets: u32,
    size: u32,
    read_back: ReadBack,
) -> Vec<Vec<u8>> {
    render_rgba8_blended(gpu, wgsl, vertices, targets, size, read_back, None)
}

/// [`render_rgba8`] with `blend` on every target.
pub fn render_rgba8_blended(
    gpu: &Gpu,
    wgsl: &str,
    vertices: u32,
    targets: u32,
    size: u32,
    read_back: ReadBack,
    blend: Option<wgpu::BlendState>,
) -> Vec<Vec<u8>> {
    let device = gpu.device();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("reproducer"),
        source: wgpu::ShaderSource::Wgsl(wgsl.into()),
    });
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let textures: Vec<wgpu::Texture> = (0..targets)
        .map(|_| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some("target"),
                size: wgpu::Extent3d {
                    width: size,
                    height: size,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
                view_formats: &[],
            })
        })
        .collect();
    let views: Vec<wgpu::TextureView> = textures
        .iter()
        .map(|t| t.create_view(&Default::default()))
        .collect();
    let color_targets: Vec<Option<wgpu::ColorTargetState>> = (0..targets)
        .map(|_| {
            Some(wgpu::ColorTargetState {
                format,
                blend,
                write_mask: wgpu::ColorWrites::ALL,
            })
        })
        .collect();
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("reproducer"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &color_targets,
        }),
        multiview_mask: None,
        cache: None,
    });
    let attachments: Vec<Option<wgpu::RenderPassColorAttachment>> = views
        .iter()
        .map(|view| {
            Some(wgpu::RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                    store: wgpu::StoreOp::Store,
                },
            })
        })
        .collect();
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: None,
            color_attachments: &attachments,
            ..Default::default()
        });
        pass.set_pipeline(&pipeline);
        pass.draw(0..vertices, 0..1);
    }
    if read_back == ReadBack::Later {
        gpu.queue().submit([encoder.finish()]);
        return (textures.iter())
            .map(|t| gpu.read_texture(t).expect("the target reads back").data)
            .collect();
    }
    let bytes = u64::from(size * size * 4);
    let buffers: Vec<wgpu::Buffer> = (textures.iter())
        .map(|texture| {
            let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("read back"),
                size: bytes,
                usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            encoder.copy_texture_to_buffer(
                texture.as_image_copy(),
                wgpu::TexelCopyBufferInfo {
                    buffer: &buffer,
                    layout: wgpu::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(size * 4),
                        rows_per_image: None,
                    },
                },
                texture.size(),
            );
            buffer
        })
        .collect();
    gpu.queue().submit([encoder.finish()]);
    (buffers.iter())
        .map(|b| gpu.read_buffer(b).expect("the copy reads back"))
        .collect()
}

/// The error creating a compute pipeline for `@compute fn main` of `wgsl`
/// raises, if any (validation and the backend's own shader compiler).
pub fn compute_pipeline_error(gpu: &Gpu, wgsl: &str) -> Option<String> {
    let device = gpu.device();
    // The backend's shader compiler reports through `Internal`.
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("reproducer"),
        source: wgpu::ShaderSource::Wgsl(wgsl.into()),
    });
    let _pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("reproducer"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let validation = pollster::block_on(validation.pop());
    let internal = pollster::block_on(internal.pop());
    validation.or(internal).map(|e| e.to_string())
}
