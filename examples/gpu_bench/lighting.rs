//! A lighting fragment shader (`fixtures/bench/lighting.metal`: 32 point
//! lights in a `constant` struct) drawn over a full-screen triangle,
//! translated with its lights as `var<uniform>` and as `var<storage>`,
//! next to the same shader hand-written with a uniform. Each pixel is
//! checked against a CPU evaluation: the 8-bit result must be within one
//! step of the exact colour (half a step for rounding to `rgba8unorm`,
//! the rest for `f32` error, which is far below it here).

use super::harness::Bench;
use msl2wgsl::runner::TextureData;
use msl2wgsl::wgpu;
use msl2wgsl::{Library, Options, Target, UniformLayout};
use wgpu::util::DeviceExt;

const LIGHTS: usize = 32;

const HAND_WGSL: &str = "
struct Light { position: vec4<f32>, color: vec4<f32> }
struct Lights { light: array<Light, 32>, ambient: vec4<f32> }
struct Varyings { @builtin(position) position: vec4<f32>, @location(0) uv: vec2<f32> }
@group(0) @binding(0) var<uniform> l: Lights;
@vertex
fn vs(@builtin(vertex_index) vid: u32) -> Varyings {
    let p = vec2<f32>(f32((vid << 1u) & 2u), f32(vid & 2u));
    return Varyings(vec4<f32>(p * 2.0 - 1.0, 0.0, 1.0), p);
}
@fragment
fn fs(v: Varyings) -> @location(0) vec4<f32> {
    let n = normalize(vec3<f32>(v.uv - 0.5, 1.0));
    let p = vec3<f32>(v.uv, 0.0);
    var c = l.ambient.rgb;
    for (var i = 0; i < 32; i++) {
        let d = l.light[i].position.xyz - p;
        let attenuation = 1.0 / (1.0 + dot(d, d));
        c += l.light[i].color.rgb * max(dot(n, normalize(d)), 0.0) * attenuation;
    }
    return vec4<f32>(c, 1.0);
}";

/// The lights, as the `Lights` struct's floats (its layout has no padding).
fn lights() -> Vec<f32> {
    let mut data = Vec::with_capacity(LIGHTS * 8 + 4);
    for i in 0..LIGHTS {
        let a = i as f32 * 0.7;
        data.extend([
            a.cos() * 0.8 + 0.5,
            a.sin() * 0.8 + 0.5,
            0.3 + 0.02 * i as f32,
            1.0,
        ]);
        data.extend([
            0.02 + 0.001 * i as f32,
            0.015,
            0.03 - 0.0005 * i as f32,
            0.0,
        ]);
    }
    data.extend([0.05, 0.04, 0.03, 0.0]);
    data
}

/// The colour the shader computes at `uv`, in f64.
fn shade(l: &[f32], uv: [f64; 2]) -> [f64; 3] {
    let norm = |v: [f64; 3]| {
        let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        v.map(|x| x / len)
    };
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let n = norm([uv[0] - 0.5, uv[1] - 0.5, 1.0]);
    let f = |i: usize| f64::from(l[i]);
    let mut c = [f(LIGHTS * 8), f(LIGHTS * 8 + 1), f(LIGHTS * 8 + 2)];
    for i in 0..LIGHTS {
        let d = [f(i * 8) - uv[0], f(i * 8 + 1) - uv[1], f(i * 8 + 2)];
        let attenuation = 1.0 / (1.0 + dot(d, d));
        let lambert = dot(n, norm(d)).max(0.0) * attenuation;
        for (k, ck) in c.iter_mut().enumerate() {
            *ck += f(i * 8 + 4 + k) * lambert;
        }
    }
    c
}

/// Fails unless every pixel is within one 8-bit step of the exact colour.
fn check(name: &str, image: &TextureData, l: &[f32]) -> anyhow::Result<()> {
    let (w, h) = (image.width as usize, image.height as usize);
    for (i, px) in image.data.chunks_exact(4).enumerate() {
        let (x, y) = (i % w, i / w);
        // Pixel centres; framebuffer y runs down, clip-space y up.
        let uv = [
            (x as f64 + 0.5) / w as f64,
            1.0 - (y as f64 + 0.5) / h as f64,
        ];
        let want = shade(l, uv);
        for (k, &wk) in want.iter().enumerate() {
            let exact = wk.clamp(0.0, 1.0) * 255.0;
            anyhow::ensure!(
                (f64::from(px[k]) - exact).abs() <= 1.0,
                "{name}: pixel ({x}, {y}) channel {k}: {} against {exact:.3} of 255",
                px[k]
            );
        }
    }
    Ok(())
}

/// One render pipeline to time: WGSL, entry points, the lights' binding.
struct Shader {
    name: &'static str,
    wgsl: String,
    vertex: String,
    fragment: String,
    binding: wgpu::naga::ResourceBinding,
}

/// The lighting shader translated with `layout` for its `constant` struct.
fn translated(name: &'static str, layout: UniformLayout) -> anyhow::Result<Shader> {
    let source = include_str!("../../fixtures/bench/lighting.metal");
    let options = Options {
        target: Target::Wgpu,
        uniform_layout: layout,
        ..Options::default()
    };
    let library = Library::from_source("lighting.metal", source, &options)
        .map_err(|e| anyhow::anyhow!("lighting.metal: translation failed:\n{}", e.render()))?;
    let entry = |f: &str| {
        library
            .function(f)
            .map(|r| r.wgsl_entry_point.clone())
            .ok_or_else(|| anyhow::anyhow!("no function {f}"))
    };
    let argument = library
        .function("shade")
        .and_then(|f| f.arguments.first())
        .and_then(|a| a.binding)
        .ok_or_else(|| anyhow::anyhow!("shade's lights have no binding"))?;
    Ok(Shader {
        name,
        wgsl: library.wgsl().to_string(),
        vertex: entry("fullscreen")?,
        fragment: entry("shade")?,
        binding: wgpu::naga::ResourceBinding {
            group: argument.group,
            binding: argument.binding,
        },
    })
}

/// Median GPU time of drawing `shader` into `target`, and the image.
fn time(
    bench: &Bench,
    shader: &Shader,
    lights: &wgpu::Buffer,
    target: &wgpu::Texture,
) -> anyhow::Result<(f64, TextureData)> {
    let device = bench.gpu.device();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(shader.name),
        source: wgpu::ShaderSource::Wgsl(shader.wgsl.as_str().into()),
    });
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(shader.name),
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some(&shader.vertex),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some(&shader.fragment),
            compilation_options: Default::default(),
            targets: &[Some(target.format().into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(shader.binding.group),
        entries: &[wgpu::BindGroupEntry {
            binding: shader.binding.binding,
            resource: lights.as_entire_binding(),
        }],
    });
    let view = target.create_view(&Default::default());
    let ns = bench.median_render_ns(&view, |pass| {
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(shader.binding.group, &bind_group, &[]);
        pass.draw(0..3, 0..1);
    })?;
    Ok((ns, bench.gpu.read_texture(target)?))
}

/// Times the lighting shader over a `width` × `height` target.
pub fn run(bench: &Bench, width: u32, height: u32) -> anyhow::Result<()> {
    println!("\nlighting fragment shader: {width}x{height}, {LIGHTS} lights");
    let data = lights();
    let lights = bench
        .gpu
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("lights"),
            contents: bytemuck::cast_slice(&data),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::UNIFORM,
        });
    let target = bench.gpu.device().create_texture(&wgpu::TextureDescriptor {
        label: Some("lighting"),
        size: wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let shaders = [
        translated("translated, constant as var<uniform>", UniformLayout::Wgsl)?,
        translated("translated, constant as var<storage>", UniformLayout::None)?,
        Shader {
            name: "hand-written WGSL, var<uniform>",
            wgsl: HAND_WGSL.into(),
            vertex: "vs".into(),
            fragment: "fs".into(),
            binding: wgpu::naga::ResourceBinding {
                group: 0,
                binding: 0,
            },
        },
    ];
    anyhow::ensure!(
        shaders[0].wgsl.contains("var<uniform>") && !shaders[1].wgsl.contains("var<uniform>"),
        "the two translations should bind the lights as uniform and as storage"
    );
    let mut rows = Vec::new();
    for shader in &shaders {
        let (ns, image) = time(bench, shader, &lights, &target)?;
        check(shader.name, &image, &data)?;
        rows.push(super::harness::Row {
            name: shader.name,
            ns,
            work: f64::from(width) * f64::from(height),
        });
    }
    super::harness::print_rows(&rows, "Gpixel/s", 2);
    Ok(())
}
