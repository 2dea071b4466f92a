//! Pixel-checked renders of translated vertex/fragment pairs: expected
//! images are computed here; the tolerance is one 8-bit step (the targets
//! are rgba8unorm; interpolation and quantisation may round either way).
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, game, gpu};
use msl2wgsl::runner::{render_library, RenderResources, RenderTarget, TextureData};
use msl2wgsl::{Library, Options, Target};

fn library(name: &str) -> Library {
    let path = format!("{}/fixtures/render/{name}", env!("CARGO_MANIFEST_DIR"));
    let opts = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    Library::from_file(path, &opts).unwrap_or_else(|f| panic!("{}", f.render()))
}

fn q(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// Compares pixel `(x, y)` of an rgba8 image with `want` (one 8-bit step).
fn assert_pixel(img: &TextureData, x: u32, y: u32, want: [u8; 4], what: &str) {
    let k = ((y * img.width + x) * 4) as usize;
    let got = &img.data[k..k + 4];
    for c in 0..4 {
        assert!(
            got[c].abs_diff(want[c]) <= 1,
            "{what}: pixel ({x}, {y}) is {got:?}, want {want:?}"
        );
    }
}

#[test]
fn fullscreen_triangle_with_uv_gradient_and_tint() {
    let Some(gpu) = gpu() else { return };
    let lib = library("fullscreen.metal");
    let mut r = RenderResources::new(16, 16, 3);
    let tint = [1.0f32, 0.5, 1.0, 1.0];
    r.fragment_buffers.insert(0, f32_bytes(&tint));
    let img = &render_library(gpu, &lib, "fullscreen_vertex", "gradient_fragment", &r).unwrap()[0];
    for y in 0..16 {
        for x in 0..16 {
            let (u, v) = ((x as f32 + 0.5) / 16.0, (y as f32 + 0.5) / 16.0);
            assert_pixel(
                img,
                x,
                y,
                [q(u * tint[0]), q(v * tint[1]), q(0.25 * tint[2]), 255],
                "gradient",
            );
        }
    }
}

/// Barycentric coordinates of pixel centre `(x, y)` of a `size`² target in the
/// NDC triangle `p`, if the centre is inside with a margin of one pixel.
fn barycentric(p: [[f32; 2]; 3], x: u32, y: u32, size: u32) -> Option<[f32; 3]> {
    let px = (x as f32 + 0.5) / size as f32 * 2.0 - 1.0;
    let py = 1.0 - (y as f32 + 0.5) / size as f32 * 2.0;
    let area = |a: [f32; 2], b: [f32; 2], c: [f32; 2]| {
        (b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1])
    };
    let total = area(p[0], p[1], p[2]);
    let w = [
        area([px, py], p[1], p[2]) / total,
        area(p[0], [px, py], p[2]) / total,
        area(p[0], p[1], [px, py]) / total,
    ];
    let margin = 2.0 / size as f32;
    w.iter().all(|v| *v > margin).then_some(w)
}

fn triangle_vertices() -> ([[f32; 2]; 3], [[f32; 4]; 3], Vec<u8>) {
    let p = [[-0.9f32, -0.9], [0.9, -0.9], [0.0, 0.9]];
    let c = [
        [1.0f32, 0.0, 0.0, 1.0],
        [0.0, 1.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, 1.0],
    ];
    // [[stage_in]]: float2 position @0, float4 color @8; stride 24.
    let bytes = (0..3)
        .flat_map(|i| f32_bytes(&[p[i][0], p[i][1], c[i][0], c[i][1], c[i][2], c[i][3]]))
        .collect();
    (p, c, bytes)
}

#[test]
fn stage_in_triangle_with_interpolated_and_flat_colours() {
    if common::skip(common::Limit::FlatFirstVertex) {
        return;
    }
    let Some(gpu) = gpu() else { return };
    let lib = library("triangle.metal");
    let (p, c, bytes) = triangle_vertices();
    let mut r = RenderResources::new(32, 32, 3);
    r.vertex_buffers.insert(0, bytes);
    let smooth = &render_library(gpu, &lib, "triangle_vertex", "smooth_fragment", &r).unwrap()[0];
    let flat = &render_library(gpu, &lib, "triangle_vertex", "flat_fragment", &r).unwrap()[0];
    let mut inside = 0;
    for y in 0..32 {
        for x in 0..32 {
            let Some(w) = barycentric(p, x, y, 32) else {
                continue;
            };
            inside += 1;
            let mix: Vec<u8> = (0..4)
                .map(|k| q(w[0] * c[0][k] + w[1] * c[1][k] + w[2] * c[2][k]))
                .collect();
            assert_pixel(
                smooth,
                x,
                y,
                [mix[0], mix[1], mix[2], mix[3]],
                "interpolated",
            );
            // WebGPU's and Metal's provoking vertex is the first one.
            assert_pixel(flat, x, y, [255, 0, 0, 255], "flat");
        }
    }
    assert!(inside > 100, "the triangle covers {inside} checked pixels");
    assert_pixel(smooth, 0, 0, [0, 0, 0, 0], "outside the triangle");
}

#[test]
fn instanced_quads_from_instance_id() {
    let Some(gpu) = gpu() else { return };
    let lib = library("triangle.metal");
    let colors = [
        [1.0f32, 0.0, 0.0, 1.0],
        [0.0, 1.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, 1.0],
        [1.0, 1.0, 1.0, 1.0],
    ];
    let mut r = RenderResources::new(8, 8, 6);
    r.instance_count = 4;
    r.vertex_buffers
        .insert(0, colors.iter().flat_map(|c| f32_bytes(c)).collect());
    let img = &render_library(gpu, &lib, "quad_vertex", "quad_fragment", &r).unwrap()[0];
    for (i, c) in colors.iter().enumerate() {
        // Instance i covers the quadrant (i % 2, i / 2), top-left first.
        let (qx, qy) = ((i % 2) as u32 * 4, (i / 2) as u32 * 4);
        for (x, y) in [(qx + 1, qy + 1), (qx + 2, qy + 2)] {
            assert_pixel(
                img,
                x,
                y,
                [q(c[0]), q(c[1]), q(c[2]), q(c[3])],
                &format!("instance {i}"),
            );
        }
    }
}

#[test]
fn textured_quad_with_constexpr_sampler() {
    let Some(gpu) = gpu() else { return };
    let lib = library("textured.metal");
    let texels: Vec<u8> = (0..16u32)
        .flat_map(|k| [(k * 16) as u8, 255 - (k * 16) as u8, (k * 7) as u8, 255])
        .collect();
    let mut r = RenderResources::new(8, 8, 6);
    r.textures.insert(
        0,
        TextureData::new_2d(wgpu::TextureFormat::Rgba8Unorm, 4, 4, texels.clone()),
    );
    let img = &render_library(gpu, &lib, "quad", "textured", &r).unwrap()[0];
    for y in 0..8 {
        for x in 0..8 {
            // Nearest sampling: each texel covers 2×2 pixels.
            let k = (((y / 2) * 4 + x / 2) * 4) as usize;
            assert_pixel(
                img,
                x,
                y,
                [texels[k], texels[k + 1], texels[k + 2], 255],
                "texel",
            );
        }
    }
}

#[test]
fn discard_fragment_leaves_the_clear_colour() {
    let Some(gpu) = gpu() else { return };
    let lib = library("fullscreen.metal");
    let mut r = RenderResources::new(32, 32, 3);
    r.targets = vec![RenderTarget {
        format: wgpu::TextureFormat::Rgba8Unorm,
        clear: [0.0, 0.0, 1.0, 1.0],
    }];
    let img = &render_library(gpu, &lib, "fullscreen_vertex", "checker_fragment", &r).unwrap()[0];
    for y in 0..32 {
        for x in 0..32 {
            let discarded = (x / 8 + y / 8) % 2 == 1;
            let want = if discarded {
                [0, 0, 255, 255]
            } else {
                [255, q(0.5), 0, 255]
            };
            assert_pixel(
                img,
                x,
                y,
                want,
                if discarded { "discarded" } else { "kept" },
            );
        }
    }
}

#[test]
fn two_colour_attachments() {
    let Some(gpu) = gpu() else { return };
    let lib = library("fullscreen.metal");
    let mut r = RenderResources::new(16, 16, 3);
    r.targets = RenderTarget::defaults_for(lib.function("two_targets").unwrap());
    assert_eq!(r.targets.len(), 2);
    let imgs = render_library(gpu, &lib, "fullscreen_vertex", "two_targets", &r).unwrap();
    for y in 0..16 {
        for x in 0..16 {
            let (u, v) = ((x as f32 + 0.5) / 16.0, (y as f32 + 0.5) / 16.0);
            assert_pixel(&imgs[0], x, y, [q(u), q(v), 255, 255], "attachment 0");
            assert_pixel(
                &imgs[1],
                x,
                y,
                [if u > 0.5 { 255 } else { 0 }, 0, 0, 255],
                "attachment 1",
            );
        }
    }
}

#[test]
fn hello_triangle_sample_renders() {
    let Some(gpu) = gpu() else { return };
    let lib = library("hello_triangle.metal");
    // AAPLVertex { float2 position; float4 color; }: 32 bytes (color at 16).
    let verts = [
        ([250.0f32, -250.0], [1.0f32, 0.0, 0.0, 1.0]),
        ([-250.0, -250.0], [0.0, 1.0, 0.0, 1.0]),
        ([0.0, 250.0], [0.0, 0.0, 1.0, 1.0]),
    ];
    let mut bytes = Vec::new();
    for (p, c) in verts {
        bytes.extend(f32_bytes(&p));
        bytes.extend([0u8; 8]);
        bytes.extend(f32_bytes(&c));
    }
    let mut r = RenderResources::new(32, 32, 3);
    r.vertex_buffers.insert(0, bytes);
    r.vertex_buffers.insert(
        1,
        [600u32, 600].iter().flat_map(|v| v.to_le_bytes()).collect(),
    );
    let img = &render_library(gpu, &lib, "vertexShader", "fragmentShader", &r).unwrap()[0];
    // NDC = pixels / (viewport / 2): vertices at ±0.833; the centre pixel mixes all three.
    let p = [
        [250.0 / 300.0, -250.0 / 300.0],
        [-250.0 / 300.0, -250.0 / 300.0],
        [0.0, 250.0 / 300.0],
    ];
    let w = barycentric(p, 16, 16, 32).expect("the centre is inside");
    assert_pixel(img, 16, 16, [q(w[0]), q(w[1]), q(w[2]), 255], "centre");
}

/// A fullscreen triangle whose clip distances cut away the left half
/// (`x < 0`) and the bottom quarter (`y < -0.5`); the scalar form cuts the
/// left half only.
const CLIPPED: &str = r#"
#include <metal_stdlib>
using namespace metal;
struct Clipped { float4 position [[position]]; float clip[2] [[clip_distance]]; };
struct ClippedOne { float4 position [[position]]; float clip [[clip_distance]]; };
static float4 corner(uint vid) {
    float2 p = float2(vid == 1 ? 3.0 : -1.0, vid == 2 ? 3.0 : -1.0);
    return float4(p, 0.0, 1.0);
}
vertex Clipped clipped_vertex(uint vid [[vertex_id]]) {
    Clipped o;
    o.position = corner(vid);
    o.clip[0] = o.position.x;
    o.clip[1] = o.position.y + 0.5;
    return o;
}
vertex ClippedOne clipped_one_vertex(uint vid [[vertex_id]]) {
    ClippedOne o;
    o.position = corner(vid);
    o.clip = o.position.x;
    return o;
}
fragment float4 white() { return float4(1.0); }
"#;

#[test]
fn clip_distances_cut_the_primitive() {
    let Some(gpu) = gpu() else { return };
    let opts = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    let lib = Library::from_source("clipped.metal", CLIPPED, &opts)
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let f = lib.function("clipped_vertex").unwrap();
    assert_eq!(f.required_features, ["clip-distances"]);
    assert!(
        lib.wgsl().contains("enable clip_distances;"),
        "{}",
        lib.wgsl()
    );
    let r = RenderResources::new(16, 16, 3);
    let two = &render_library(gpu, &lib, "clipped_vertex", "white", &r).unwrap()[0];
    let one = &render_library(gpu, &lib, "clipped_one_vertex", "white", &r).unwrap()[0];
    for y in 0..16 {
        for x in 0..16 {
            // Pixel centres in NDC; no centre lies on a clip plane.
            let (nx, ny) = ((x as f32 + 0.5) / 8.0 - 1.0, 1.0 - (y as f32 + 0.5) / 8.0);
            let kept = |inside: bool| if inside { [255; 4] } else { [0; 4] };
            assert_pixel(two, x, y, kept(nx > 0.0 && ny > -0.5), "two distances");
            assert_pixel(one, x, y, kept(nx > 0.0), "one distance");
        }
    }
}

#[test]
fn dual_source_blending_with_index_1() {
    if common::skip(common::Limit::DualSourceBlending) {
        return;
    }
    let Some(gpu) = gpu() else { return };
    let src = r#"
        #include <metal_stdlib>
        using namespace metal;
        struct Out { float4 color [[position]]; };
        vertex Out v(uint vid [[vertex_id]]) {
            Out o; o.color = float4(vid == 1 ? 3.0 : -1.0, vid == 2 ? 3.0 : -1.0, 0.0, 1.0); return o;
        }
        struct Blend { float4 src0 [[color(0), index(0)]]; float4 src1 [[color(0), index(1)]]; };
        fragment Blend f() { Blend b; b.src0 = float4(1.0, 1.0, 0.0, 1.0); b.src1 = float4(0.5, 0.25, 0.5, 1.0); return b; }
    "#;
    let opts = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    let lib = Library::from_source("blend.metal", src, &opts)
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert_eq!(
        lib.function("f").unwrap().required_features,
        ["dual-source-blending"]
    );
    let mut r = RenderResources::new(4, 4, 3);
    r.targets = vec![RenderTarget {
        format: wgpu::TextureFormat::Rgba8Unorm,
        clear: [0.2, 0.4, 1.0, 1.0],
    }];
    let img = &render_library(gpu, &lib, "v", "f", &r).unwrap()[0];
    // src0 × src1 + dst × (1 − src1), per channel.
    let (s0, s1, dst) = (
        [1.0f32, 1.0, 0.0, 1.0],
        [0.5f32, 0.25, 0.5, 1.0],
        [0.2f32, 0.4, 1.0, 1.0],
    );
    let want: Vec<u8> = (0..4)
        .map(|c| q(s0[c] * s1[c] + dst[c] * (1.0 - s1[c])))
        .collect();
    for y in 0..4 {
        for x in 0..4 {
            assert_pixel(
                img,
                x,
                y,
                [want[0], want[1], want[2], want[3]],
                "dual-source blend",
            );
        }
    }
}

#[test]
fn xcode_game_template_draws_from_two_vertex_buffers() {
    let lib = library("game/Shaders.metal");
    let descriptor = game::descriptor(&lib);
    assert_eq!(
        descriptor.strides,
        std::collections::BTreeMap::from([(0, 12), (1, 8)])
    );
    // The fragment function declares the uniforms but never reads them.
    let fragment = lib.function("fragmentShader").unwrap();
    let uniforms = fragment.arguments.iter().find(|a| a.name == "uniforms");
    assert!(!uniforms.unwrap().active);
    let Some(gpu) = gpu() else { return };
    let (positions, uvs) = game::quad();
    let mut r = RenderResources::new(game::SIZE, game::SIZE, 6);
    r.vertex_buffers.insert(0, positions);
    r.vertex_buffers.insert(1, uvs);
    r.vertex_buffers.insert(2, game::uniforms());
    r.vertex_descriptor = Some(descriptor);
    r.textures.insert(0, game::colour_map());
    let img = &render_library(gpu, &lib, "vertexShader", "fragmentShader", &r).unwrap()[0];
    game::check(&img.data, "render_library");

    // A missing vertex buffer names the attributes it should hold.
    r.vertex_buffers.remove(&1);
    let err = render_library(gpu, &lib, "vertexShader", "fragmentShader", &r).unwrap_err();
    assert!(
        err.to_string()
            .contains("`texCoord` [[attribute(1)]] from vertex buffer 1"),
        "{err}"
    );
}

/// The same draw through the pipeline helpers: each vertex buffer set by
/// its Metal index, as `setVertexBuffer:offset:atIndex:` does.
#[test]
fn render_command_binds_one_vertex_buffer_per_metal_index() {
    use msl2wgsl::runner::RenderPipeline;
    use wgpu::util::DeviceExt;
    let Some(gpu) = gpu() else { return };
    let lib = library("game/Shaders.metal");
    let descriptor = game::descriptor(&lib);
    let pipeline = RenderPipeline::with_vertex_descriptor(
        gpu,
        &lib,
        ["vertexShader", "fragmentShader"],
        &[wgpu::TextureFormat::Rgba8Unorm],
        &Default::default(),
        Some(&descriptor),
    )
    .unwrap();
    let buffer = |bytes: &[u8], usage| {
        gpu.device()
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytes,
                usage,
            })
    };
    let (positions, uvs) = game::quad();
    let positions = buffer(&positions, wgpu::BufferUsages::VERTEX);
    let uvs = buffer(&uvs, wgpu::BufferUsages::VERTEX);
    let uniforms = buffer(&game::uniforms(), wgpu::BufferUsages::UNIFORM);
    let map = game::colour_map();
    let texture = |size: u32, usage| {
        gpu.device().create_texture(&wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d {
                width: size,
                height: size,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage,
            view_formats: &[],
        })
    };
    let colour_map = texture(
        game::TEXELS,
        wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
    );
    gpu.queue().write_texture(
        colour_map.as_image_copy(),
        &map.data,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(4 * game::TEXELS),
            rows_per_image: Some(game::TEXELS),
        },
        colour_map.size(),
    );
    let target = texture(
        game::SIZE,
        wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
    );
    let view = target.create_view(&Default::default());
    let mut command = pipeline.encoder();
    command.set_vertex_buffer(0, &positions, 0).unwrap();
    command.set_vertex_buffer(2, &uniforms, 0).unwrap();
    command.set_fragment_texture(0, &colour_map);
    let err = command
        .draw_primitives(gpu, &[&view], Some(wgpu::Color::TRANSPARENT), 6, 1)
        .unwrap_err();
    assert!(err.to_string().contains("vertex buffer 1"), "{err}");
    command.set_vertex_buffer(1, &uvs, 0).unwrap();
    command
        .draw_primitives(gpu, &[&view], Some(wgpu::Color::TRANSPARENT), 6, 1)
        .unwrap();
    game::check(&gpu.read_texture(&target).unwrap().data, "RenderCommand");
}

/// A fragment function whose `switch` returns in every case, `default`
/// included, ends without an unreachable `return vec4<f32>();` (browsers
/// warn for each); one without a `default` may fall off the switch and
/// keeps it. Both draw what they say: bands of 4 pixels by `x / 4`.
#[test]
fn a_switch_returning_in_every_case_ends_the_function() {
    const SOURCE: &str = r#"
#include <metal_stdlib>
using namespace metal;
struct V { float4 position [[position]]; };
vertex V cover(uint vid [[vertex_id]]) {
    V out;
    out.position = float4(vid == 1 ? 3.0 : -1.0, vid == 2 ? 3.0 : -1.0, 0.0, 1.0);
    return out;
}
fragment float4 bands(V in [[stage_in]]) {
    switch (int(in.position.x) / 4) {
    case 0:
        return float4(1.0, 0.0, 0.0, 1.0);
    case 1:
    case 2:
        return float4(0.0, 1.0, 0.0, 1.0);
    default:
        return float4(0.0, 0.0, 1.0, 1.0);
    }
}
fragment float4 partial(V in [[stage_in]]) {
    switch (int(in.position.x) / 4) {
    case 0:
        return float4(1.0, 0.0, 0.0, 1.0);
    case 1:
    case 2:
        return float4(0.0, 1.0, 0.0, 1.0);
    }
    return float4(0.0, 0.0, 1.0, 1.0);
}
"#;
    let opts = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    let lib = Library::from_source("bands.metal", SOURCE, &opts).unwrap();
    let bands = lib.function_wgsl("bands").unwrap();
    assert!(!bands.contains("return vec4<f32>();"), "{bands}");
    let returns = |wgsl: &str| wgsl.matches("return ").count();
    assert_eq!(returns(&bands), 3, "one per case:\n{bands}");
    let partial = lib.function_wgsl("partial").unwrap();
    assert!(
        partial.contains("return vec4(0f, 0f, 1f, 1f);")
            || partial.contains("return vec4<f32>(0f, 0f, 1f, 1f);"),
        "{partial}"
    );
    let Some(gpu) = gpu() else { return };
    let r = RenderResources::new(16, 4, 3);
    for fragment in ["bands", "partial"] {
        let img = &render_library(gpu, &lib, "cover", fragment, &r).unwrap()[0];
        for x in 0..16 {
            let want = match x / 4 {
                0 => [255, 0, 0, 255],
                1 | 2 => [0, 255, 0, 255],
                _ => [0, 0, 255, 255],
            };
            assert_pixel(img, x, 1, want, fragment);
        }
    }
}

/// A fragment function's `[[render_target_array_index]]` (as an argument
/// and as a `[[stage_in]]` member) reads 0, with W0401: a WebGPU render
/// pass draws into one layer, and the vertex function's choice of another
/// is dropped (W0401 too).
#[test]
fn the_fragment_layer_index_reads_zero() {
    const SOURCE: &str = r#"
#include <metal_stdlib>
using namespace metal;
struct V {
    float4 position [[position]];
    uint layer [[render_target_array_index]];
    float shade;
};
vertex V cover(uint vid [[vertex_id]]) {
    V out;
    out.position = float4(vid == 1 ? 3.0 : -1.0, vid == 2 ? 3.0 : -1.0, 0.0, 1.0);
    out.layer = 2;
    out.shade = 0.5;
    return out;
}
fragment float4 layered(V in [[stage_in]], ushort layer [[render_target_array_index]]) {
    return float4(in.layer == 0 ? 1.0 : 0.0, float(layer) + 0.25, in.shade, 1.0);
}
"#;
    let opts = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    let lib = Library::from_source("layers.metal", SOURCE, &opts).unwrap();
    let codes: Vec<_> = (lib.warning_diagnostics().0.iter())
        .map(|d| d.code().as_str())
        .collect();
    assert_eq!(codes, ["W0401"; 3]);
    let warnings = lib.warnings();
    assert!(
        warnings.contains("`layer` reads as 0 (WebGPU has no layered rendering"),
        "{warnings}"
    );
    let Some(gpu) = gpu() else { return };
    let r = RenderResources::new(4, 4, 3);
    let img = &render_library(gpu, &lib, "cover", "layered", &r).unwrap()[0];
    for (x, y) in [(0, 0), (3, 1), (2, 3)] {
        assert_pixel(img, x, y, [255, q(0.25), q(0.5), 255], "layer 0");
    }
}
