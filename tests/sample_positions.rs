//! `get_sample_position` and `get_num_samples` (lower/metal/sample_positions.rs):
//! Metal's default sample pattern, for the count the host gives through the
//! `metal_sample_count` override. The GPU test renders one 4-sample pixel
//! with per-sample shading and has every sample write what the functions
//! say beside where the rasteriser really put it (the fractional part of
//! its `[[position]]`), so it checks the table against Apple's documented
//! defaults and against the driver's standard 4-sample pattern.

// Without the runner the GPU tests are compiled out, and the sources and
// helpers only they use are unused.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use msl2wgsl::{Library, Options};

const SOURCE: &str = r#"
#include <metal_stdlib>
using namespace metal;

struct VertexOut {
    float4 position [[position]];
};

// One triangle over the whole target.
vertex VertexOut cover(uint vid [[vertex_id]])
{
    float2 p = float2(float((vid << 1) & 2u), float(vid & 2u));
    VertexOut out;
    out.position = float4(p * 2.0f - 1.0f, 0.0f, 1.0f);
    return out;
}

// Each sample of pixel (0, 0) writes its table position and where it is.
fragment float4 positions(VertexOut in [[stage_in]],
                          uint sample [[sample_id]],
                          device float4* out [[buffer(0)]])
{
    if (uint(in.position.x) == 0u && uint(in.position.y) == 0u) {
        out[sample] = float4(get_sample_position(sample), fract(in.position.xy));
        out[8] = float4(float(get_num_samples()));
    }
    return float4(1.0f);
}
"#;

/// Apple's `getDefaultSamplePositions(sampleCount: 4)`.
const METAL_4: [[f32; 2]; 4] = [
    [0.375, 0.125],
    [0.875, 0.375],
    [0.125, 0.625],
    [0.625, 0.875],
];

fn library() -> Library {
    Library::from_source("sample_positions.metal", SOURCE, &Options::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_count_is_an_override_that_defaults_to_one_sample() {
    let library = library();
    let wgsl = library.wgsl();
    assert!(
        wgsl.contains(&format!(
            "override {}: u32 = 1u;",
            msl2wgsl::reflect::SAMPLE_COUNT_OVERRIDE
        )),
        "{wgsl}"
    );
}

#[test]
fn outside_fragment_functions_they_are_an_error() {
    let source = "kernel void k(device float2* o [[buffer(0)]]) { o[0] = get_sample_position(0); }";
    let e = Library::from_source("k.metal", source, &Options::default())
        .err()
        .expect("a kernel cannot ask for sample positions");
    let text = e.to_string();
    assert!(
        text.contains("k.metal:1:") && text.contains("only available in fragment functions"),
        "{text}"
    );
}

#[cfg(feature = "runner")]
mod gpu {
    use super::{common, library, METAL_4};
    use wgpu::util::DeviceExt;

    /// Renders the 1×1, 4-sample target with `count` as the override and
    /// returns the nine `float4`s the fragment function wrote.
    fn render(count: u32) -> Option<Vec<[f32; 4]>> {
        let gpu = common::gpu()?;
        let library = library();
        let fragment = library.function("positions").expect("reflected");
        let binding = fragment.arguments[0].binding.expect("buffer 0 is bound");
        let device = gpu.device();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(library.wgsl().into()),
        });
        let zeros = vec![0u8; 9 * 16];
        let out = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: &zeros,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: None,
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: binding.binding,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: false },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &[wgpu::BindGroupEntry {
                binding: binding.binding,
                resource: out.as_entire_binding(),
            }],
        });
        // Fragment functions' buffers are in a later group than 0.
        let mut groups = vec![None; binding.group as usize];
        groups.push(Some(&layout));
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &groups,
            immediate_size: 0,
        });
        let format = wgpu::TextureFormat::Rgba8Unorm;
        let constants = [(msl2wgsl::reflect::SAMPLE_COUNT_OVERRIDE, f64::from(count))];
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: None,
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("cover"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("positions"),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    ..Default::default()
                },
                targets: &[Some(format.into())],
            }),
            primitive: Default::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState {
                count: 4,
                ..Default::default()
            },
            multiview_mask: None,
            cache: None,
        });
        let target = device.create_texture(&wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d {
                width: 1,
                height: 1,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 4,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        let view = target.create_view(&Default::default());
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: zeros.len() as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: None,
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(binding.group, &group, &[]);
            pass.draw(0..3, 0..1);
        }
        encoder.copy_buffer_to_buffer(&out, 0, &readback, 0, zeros.len() as u64);
        gpu.queue().submit([encoder.finish()]);
        let slice = readback.slice(..);
        slice.map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("polled");
        let bytes = slice.get_mapped_range().expect("mapped").to_vec();
        Some(
            bytemuck::cast_slice::<u8, f32>(&bytes)
                .chunks_exact(4)
                .map(|c| [c[0], c[1], c[2], c[3]])
                .collect(),
        )
    }

    #[test]
    fn four_samples_have_metal_s_default_positions() {
        let Some(got) = render(4) else {
            return;
        };
        for (sample, want) in METAL_4.iter().enumerate() {
            let [x, y, at_x, at_y] = got[sample];
            assert_eq!([x, y], *want, "sample {sample}: the table");
            // WebGPU's standard 4-sample pattern is Metal's default.
            assert_eq!([at_x, at_y], *want, "sample {sample}: the rasteriser");
        }
        assert_eq!(got[8], [4.0; 4], "get_num_samples");
    }
}
