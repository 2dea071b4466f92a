//! The Metal-style host helpers: pipelines made from a library's
//! functions, the caller's own wgpu objects set by Metal index only, and
//! the results read back and compared with a CPU reference.
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, f32s, gpu};
use msl2wgsl::reflect::BindingMap;
use msl2wgsl::runner::{ComputePipeline, Gpu, RenderPipeline, RunError};
use msl2wgsl::{Library, Options};
use wgpu::util::DeviceExt;

/// A per-threadgroup sum through threadgroup memory whose length the host
/// sets, over a ragged grid; the arguments are deliberately out of index
/// order.
const REDUCE: &str = r#"
#include <metal_stdlib>
using namespace metal;
struct Params { uint n; float scale; };
kernel void reduce(device float* sums [[buffer(2)]],
                   const device float* input [[buffer(0)]],
                   constant Params& p [[buffer(1)]],
                   threadgroup float* tile [[threadgroup(0)]],
                   uint gid [[thread_position_in_grid]],
                   uint lid [[thread_position_in_threadgroup]],
                   uint tg [[threadgroup_position_in_grid]],
                   uint width [[threads_per_threadgroup]]) {
    tile[lid] = input[gid] * p.scale;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    // The last threadgroup of a ragged grid is smaller (Metal's
    // non-uniform threadgroups), so halve by rounding up.
    for (uint count = width; count > 1; ) {
        uint half_count = (count + 1) / 2;
        if (lid + half_count < count) { tile[lid] += tile[lid + half_count]; }
        count = half_count;
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid == 0) { sums[tg] = tile[0]; }
}
"#;

fn storage(gpu: &Gpu, label: &str, bytes: &[u8]) -> wgpu::Buffer {
    gpu.device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
        })
}

/// A buffer for a `constant` argument: the translator binds it as
/// `var<uniform>` or `var<storage, read>` (reflection's `bindingType`
/// says which), so it gets both usages.
fn constant(gpu: &Gpu, bytes: &[u8]) -> wgpu::Buffer {
    gpu.device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::UNIFORM,
        })
}

/// Small integers times 0.5: every partial sum is exact in f32, so any
/// summation order gives the CPU's result.
/// The library's options: WGSL needs a length for the threadgroup pointer
/// at translation, so the library gets one; each dispatch sets its own.
fn reduce_options() -> Options {
    Options {
        threadgroup_memory: vec![(0, 256)],
        ..Options::default()
    }
}

fn reduce_input(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 7) as f32).collect()
}

fn expected_sums(input: &[f32], scale: f32, width: usize) -> Vec<f32> {
    input
        .chunks(width)
        .map(|c| c.iter().map(|x| x * scale).sum())
        .collect()
}

fn params(n: u32, scale: f32) -> Vec<u8> {
    let mut bytes = n.to_le_bytes().to_vec();
    bytes.extend(scale.to_le_bytes());
    bytes
}

/// Runs `reduce` of `library` over `n` inputs with threadgroups of `width`.
fn run_reduce(gpu: &Gpu, library: &Library, n: usize, width: u32) -> Result<Vec<f32>, RunError> {
    let pipeline = ComputePipeline::new(gpu, library, "reduce")?;
    let input = reduce_input(n);
    let groups = n.div_ceil(width as usize);
    let a = storage(gpu, "input", &f32_bytes(&input));
    let p = constant(gpu, &params(n as u32, 0.5));
    let sums = storage(gpu, "sums", &vec![0xff; groups * 4]);
    let mut command = pipeline.encoder();
    command
        .set_buffer(0, &a, 0)?
        .set_buffer(1, &p, 0)?
        .set_buffer(2, &sums, 0)?
        .set_threadgroup_memory_length(0, width * 4)?;
    command.dispatch_threads(gpu, [n as u32, 1, 1], [width, 1, 1])?;
    Ok(f32s(&gpu.read_buffer(&sums)?))
}

#[test]
fn compute_pipeline_binds_by_metal_index_and_sizes_threadgroup_memory() {
    let Some(gpu) = gpu() else { return };
    let library = Library::from_source("reduce.metal", REDUCE, &reduce_options()).unwrap();
    let n = 1000;
    let input = reduce_input(n);
    // The same pipeline at two threadgroup sizes (and memory lengths): each
    // is translated for its own @workgroup_size and workgroup array.
    for width in [64u32, 128] {
        let got = run_reduce(gpu, &library, n, width).unwrap();
        assert_eq!(
            got,
            expected_sums(&input, 0.5, width as usize),
            "width {width}"
        );
    }
}

#[test]
fn compute_pipeline_dispatch_threadgroups() {
    let Some(gpu) = gpu() else { return };
    let source = r#"
        kernel void fill(device uint* out [[buffer(3)]],
                         uint2 gid [[thread_position_in_grid]],
                         uint2 grid [[threads_per_grid]]) {
            out[gid.y * grid.x + gid.x] = gid.x * 1000u + gid.y;
        }"#;
    let library = Library::from_source("fill.metal", source, &Options::default()).unwrap();
    let pipeline = ComputePipeline::new(gpu, &library, "fill").unwrap();
    let (w, h) = (12u32, 6u32);
    let out = storage(gpu, "out", &vec![0; (w * h * 4) as usize]);
    let mut command = pipeline.encoder();
    command.set_buffer(3, &out, 0).unwrap();
    command
        .dispatch_threadgroups(gpu, [3, 2, 1], [4, 3, 1])
        .unwrap();
    let got = common::u32s(&gpu.read_buffer(&out).unwrap());
    let want: Vec<u32> = (0..h)
        .flat_map(|y| (0..w).map(move |x| x * 1000 + y))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn binding_map_override_still_runs_through_the_helpers() {
    let Some(gpu) = gpu() else { return };
    let map = BindingMap::from_json(
        r#"{"reduce": {"buffer": {"0": {"group": 2, "binding": 9},
                                  "2": {"group": 1, "binding": 0}}}}"#,
    )
    .unwrap();
    let options = Options {
        binding_map: map,
        ..reduce_options()
    };
    let library = Library::from_source("reduce.metal", REDUCE, &options).unwrap();
    let f = library.function("reduce").unwrap();
    let binding = |index: u32| {
        let arg = f
            .arguments
            .iter()
            .find(|a| a.index == index && a.buffer.is_some());
        arg.and_then(|a| a.binding).map(|b| (b.group, b.binding))
    };
    assert_eq!(binding(0), Some((2, 9)));
    assert_eq!(binding(2), Some((1, 0)));
    assert!(library.wgsl().contains("@group(2) @binding(9)"));
    let n = 300;
    let got = run_reduce(gpu, &library, n, 32).unwrap();
    assert_eq!(got, expected_sums(&reduce_input(n), 0.5, 32));
}

#[test]
fn helper_errors_name_the_argument() {
    let Some(gpu) = gpu() else { return };
    let library = Library::from_source("reduce.metal", REDUCE, &reduce_options()).unwrap();
    let pipeline = ComputePipeline::new(gpu, &library, "reduce").unwrap();
    // `constant Params&` needs all 8 bytes.
    let short = constant(gpu, &[0; 4]);
    let mut command = pipeline.encoder();
    let e = command.set_buffer(1, &short, 0).unwrap_err();
    assert!(
        matches!(&e, RunError::BufferTooSmall { name, index: 1, needed: 8, .. } if name == "p"),
        "{e}"
    );
    let e = command.set_threadgroup_memory_length(0, 100).unwrap_err();
    assert!(e.to_string().contains("multiple of 16"), "{e}");
    // Buffer 0 is never set.
    let p = constant(gpu, &params(4, 1.0));
    let sums = storage(gpu, "sums", &[0; 16]);
    command.set_buffer(1, &p, 0).unwrap();
    command.set_buffer(2, &sums, 0).unwrap();
    command.set_threadgroup_memory_length(0, 64 * 4).unwrap();
    let e = command
        .dispatch_threads(gpu, [4, 1, 1], [64, 1, 1])
        .unwrap_err();
    assert!(
        matches!(&e, RunError::MissingBuffer { name, index: 0, .. } if name == "input"),
        "{e}"
    );
    // A uniform-only buffer where the WGSL binds storage.
    let wrong = gpu
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("uniform only"),
            contents: &[0; 64],
            usage: wgpu::BufferUsages::UNIFORM,
        });
    command.set_buffer(0, &wrong, 0).unwrap();
    let e = command
        .dispatch_threads(gpu, [4, 1, 1], [64, 1, 1])
        .unwrap_err();
    assert!(e.to_string().contains("STORAGE"), "{e}");
    let e = ComputePipeline::new(gpu, &library, "nope").unwrap_err();
    assert!(matches!(e, RunError::UnknownEntry(_)), "{e}");
}

/// A textured fullscreen triangle: the vertex function reads its positions
/// from `[[buffer(0)]]` by vertex id, the fragment function samples a
/// texture with a sampler the host sets and scales by its own
/// `[[buffer(0)]]`: the same Metal index in both stages.
const TEXTURED: &str = r#"
#include <metal_stdlib>
using namespace metal;
struct VOut { float4 position [[position]]; float2 uv; };
vertex VOut vs(uint vid [[vertex_id]], const device float2* corners [[buffer(0)]]) {
    VOut o;
    float2 p = corners[vid];
    o.position = float4(p, 0.0, 1.0);
    o.uv = float2(p.x * 0.5 + 0.5, 0.5 - p.y * 0.5);
    return o;
}
fragment float4 fs(VOut in [[stage_in]], texture2d<float> tex [[texture(0)]],
                   sampler s [[sampler(0)]], constant float& scale [[buffer(0)]]) {
    return tex.sample(s, in.uv) * scale;
}
"#;

fn texture(gpu: &Gpu, size: u32, usage: wgpu::TextureUsages) -> wgpu::Texture {
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
}

#[test]
fn render_pipeline_binds_each_stage_by_metal_index() {
    let Some(gpu) = gpu() else { return };
    let library = Library::from_source("textured.metal", TEXTURED, &Options::default()).unwrap();
    let pipeline = RenderPipeline::new(
        gpu,
        &library,
        "vs",
        "fs",
        &[wgpu::TextureFormat::Rgba8Unorm],
    )
    .unwrap();
    // 2x2 texels, even values so that halving them is exact in unorm8.
    let texels: [[u8; 4]; 4] = [
        [200, 0, 0, 255],
        [0, 100, 0, 255],
        [0, 0, 40, 255],
        [20, 60, 80, 255],
    ];
    let source = texture(
        gpu,
        2,
        wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
    );
    gpu.queue().write_texture(
        source.as_image_copy(),
        texels.as_flattened(),
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(8),
            rows_per_image: Some(2),
        },
        source.size(),
    );
    let sampler = gpu
        .device()
        .create_sampler(&wgpu::SamplerDescriptor::default());
    let corners = storage(
        gpu,
        "corners",
        &f32_bytes(&[-1.0, -1.0, -1.0, 3.0, 3.0, -1.0]),
    );
    let scale = constant(gpu, &0.5f32.to_le_bytes());
    let target = texture(
        gpu,
        4,
        wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
    );
    let view = target.create_view(&Default::default());
    let mut command = pipeline.encoder();
    command.set_vertex_buffer(0, &corners, 0).unwrap();
    command
        .set_fragment_buffer(0, &scale, 0)
        .unwrap()
        .set_fragment_texture(0, &source)
        .set_fragment_sampler(0, &sampler);
    command
        .draw_primitives(gpu, &[&view], Some(wgpu::Color::BLACK), 3, 1)
        .unwrap();
    let image = gpu.read_texture(&target).unwrap();
    for y in 0..4usize {
        for x in 0..4usize {
            let texel = texels[(y / 2) * 2 + x / 2];
            let want: Vec<u8> = texel.iter().map(|&c| c / 2 + c % 2).collect();
            let at = (y * 4 + x) * 4;
            let got = &image.data[at..at + 4];
            // unorm8 conversion rounds to nearest; 255 * 0.5 = 127.5 may
            // land on either side (WebGPU allows the conversion 0.6 ULP).
            for c in 0..4 {
                assert!(
                    got[c].abs_diff(want[c]) <= 1 && (c == 3 || got[c] == want[c]),
                    "pixel ({x}, {y}) channel {c}: got {got:?}, want {want:?}"
                );
            }
        }
    }
}

#[test]
fn render_pipeline_reads_stage_in_from_the_hosts_buffer() {
    let Some(gpu) = gpu() else { return };
    let source = r#"
        #include <metal_stdlib>
        using namespace metal;
        struct In { float2 position [[attribute(0)]]; float4 color [[attribute(1)]]; };
        struct Out { float4 position [[position]]; float4 color [[flat]]; };
        vertex Out vs(In v [[stage_in]]) {
            Out o; o.position = float4(v.position, 0.0, 1.0); o.color = v.color; return o;
        }
        fragment float4 fs(Out in [[stage_in]]) { return in.color; }
    "#;
    let library = Library::from_source("stage_in.metal", source, &Options::default()).unwrap();
    let pipeline = RenderPipeline::new(
        gpu,
        &library,
        "vs",
        "fs",
        &[wgpu::TextureFormat::Rgba8Unorm],
    )
    .unwrap();
    assert_eq!(pipeline.vertex_function().vertex_stride, 24);
    // One vertex: float2 then float4, as a Metal vertex descriptor packs them.
    let vertex = |x: f32, y: f32| [x, y, 0.0, 1.0, 0.0, 1.0];
    let vertices: Vec<f32> = [vertex(-1.0, -1.0), vertex(-1.0, 3.0), vertex(3.0, -1.0)].concat();
    let buffer = gpu
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("vertices"),
            contents: &f32_bytes(&vertices),
            usage: wgpu::BufferUsages::VERTEX,
        });
    let target = texture(
        gpu,
        2,
        wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
    );
    let view = target.create_view(&Default::default());
    let mut command = pipeline.encoder();
    let e = command
        .draw_primitives(gpu, &[&view], None, 3, 1)
        .unwrap_err();
    assert!(e.to_string().contains("stage-in buffer"), "{e}");
    command.set_stage_in_buffer(&buffer);
    command
        .draw_primitives(gpu, &[&view], Some(wgpu::Color::BLACK), 3, 1)
        .unwrap();
    let image = gpu.read_texture(&target).unwrap();
    assert_eq!(image.data, [0, 255, 0, 255].repeat(4));
}

/// A kernel and a fragment function reading function constants, which
/// Metal sets when the function is made from the library.
const CONSTANTS: &str = r#"
#include <metal_stdlib>
using namespace metal;
constant float scale [[function_constant(0)]];
constant bool negate [[function_constant(1)]];
kernel void scaled(device float* data [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float v = data[i] * scale;
    data[i] = negate ? -v : v;
}
struct V { float4 position [[position]]; };
vertex V cover(uint vid [[vertex_id]]) {
    V o; o.position = float4(vid == 1 ? 3.0 : -1.0, vid == 2 ? 3.0 : -1.0, 0.0, 1.0); return o;
}
fragment float4 shade() { return float4(scale, negate ? 1.0 : 0.0, 0.0, 1.0); }
"#;

#[test]
fn pipelines_take_function_constant_values() {
    let Some(gpu) = gpu() else { return };
    let library = Library::from_source("constants.metal", CONSTANTS, &Options::default()).unwrap();
    let e = ComputePipeline::new(gpu, &library, "scaled").unwrap_err();
    assert!(e.to_string().contains("scale"), "{e}");
    for (scale, negate) in [(2.0f32, false), (0.5, true)] {
        let values = [(0, f64::from(scale)), (1, f64::from(u8::from(negate)))].into();
        let pipeline = ComputePipeline::with_constants(gpu, &library, "scaled", &values).unwrap();
        let input = [1.0f32, -3.0, 8.0, 0.25];
        let data = storage(gpu, "data", &f32_bytes(&input));
        let mut command = pipeline.encoder();
        command.set_buffer(0, &data, 0).unwrap();
        command.dispatch_threads(gpu, [4, 1, 1], [4, 1, 1]).unwrap();
        let want: Vec<f32> = input
            .iter()
            .map(|v| if negate { -v * scale } else { v * scale })
            .collect();
        assert_eq!(f32s(&gpu.read_buffer(&data).unwrap()), want);
    }
    let values = [(0, 0.5), (1, 1.0)].into();
    let format = [wgpu::TextureFormat::Rgba8Unorm];
    let pipeline =
        RenderPipeline::with_constants(gpu, &library, ["cover", "shade"], &format, &values)
            .unwrap();
    let target = texture(
        gpu,
        2,
        wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
    );
    let view = target.create_view(&Default::default());
    pipeline
        .encoder()
        .draw_primitives(gpu, &[&view], Some(wgpu::Color::BLACK), 3, 1)
        .unwrap();
    let image = gpu.read_texture(&target).unwrap();
    for pixel in image.data.chunks_exact(4) {
        // 0.5 in unorm8 is 127.5: either neighbour is a correct rounding.
        assert!(
            pixel[0].abs_diff(128) <= 1 && pixel[1..] == [255, 0, 255],
            "{pixel:?}"
        );
    }
}
