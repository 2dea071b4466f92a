//! GPU tests of the texture shapes and sample options WGSL has no binding
//! or argument of, against CPU references of Metal's semantics:
//! `texture1d_array` (a 2-D array of height 1), cube textures read and
//! written face by face (2-D arrays of 6 layers), texel offsets that are not
//! constant (folded into the coordinate) and `min_lod_clamp` (an explicit,
//! clamped LOD).
#![cfg(feature = "runner")]

mod common;

use common::{f32s, gpu};
use msl2wgsl::runner::{run_kernel_resources, Dispatch, Outputs, Resources, TextureData};
use msl2wgsl::Options;
use wgpu::TextureFormat as F;

fn run(
    source: &str,
    entry: &str,
    options: &Options,
    grid: [u32; 3],
    resources: &Resources,
) -> Option<Outputs> {
    let gpu = gpu()?;
    let dispatch = Dispatch::Threads {
        grid,
        threadgroup: [grid[0], grid[1], grid[2]],
    };
    match run_kernel_resources(
        gpu,
        "shapes.metal",
        source,
        options,
        entry,
        &dispatch,
        resources,
    ) {
        Ok(out) => Some(out),
        // Texture atomics are wgpu's `texture-atomic` feature (not on GL).
        Err(msl2wgsl::runner::RunError::MissingFeature { feature, .. })
            if feature == "texture-atomic" =>
        {
            common::skip::missing_feature(gpu, &feature);
            None
        }
        Err(e) => panic!("`{entry}`: {e}"),
    }
}

fn resources(buffers: Vec<(u32, Vec<u8>)>, textures: Vec<(u32, TextureData)>) -> Resources {
    Resources {
        buffers: buffers.into_iter().collect(),
        textures: textures.into_iter().collect(),
        ..Default::default()
    }
}

fn f32_texels(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn formats(list: &[(u32, &str)]) -> Options {
    Options {
        texture_formats: list.iter().map(|(i, f)| (*i, f.to_string())).collect(),
        ..Default::default()
    }
}

/// Filtering of unorm8 texels happens in 8-bit fixed point on common
/// hardware, so a filtered value may be off by one 1/255 step.
const FILTER_TOLERANCE: f32 = 1.0 / 255.0 + 1e-6;

const ROWS: &str = r#"
#include <metal_stdlib>
using namespace metal;

float4 fetch(texture1d_array<float, access::read> t, uint x, uint row) { return t.read(x, row); }

kernel void rows(texture1d_array<float, access::read> t [[texture(0)]],
                 texture1d_array<float> s [[texture(1)]],
                 texture1d_array<float, access::write> o [[texture(2)]],
                 texture1d_array<float> p [[texture(3)]],
                 device float4* out [[buffer(0)]],
                 uint2 gid [[thread_position_in_grid]]) {
    constexpr sampler lin(filter::linear, address::clamp_to_edge);
    constexpr sampler px(coord::pixel, filter::nearest);
    uint i = gid.y * t.get_width() + gid.x;
    float4 v = fetch(t, gid.x, gid.y);
    out[4 * i] = v;
    out[4 * i + 1] = s.sample(lin, (float(gid.x) + 0.75f) / float(s.get_width()), gid.y);
    out[4 * i + 2] = p.sample(px, float(gid.x) + 0.5f, gid.y);
    out[4 * i + 3] = float4(t.get_width(), t.get_array_size(), s.get_array_size(), s.get_width(0));
    o.write(v * 2.0f, gid.x, gid.y);
}
"#;

#[test]
fn texture1d_array_reads_samples_writes_and_sizes() {
    let (w, layers) = (4u32, 3u32);
    let texel = |x: u32, l: u32| [x as f32, l as f32, 10.0 + x as f32, 1.0];
    let read = f32_texels((0..layers).flat_map(|l| (0..w).flat_map(move |x| texel(x, l))));
    let image: Vec<u8> = (0..w * layers)
        .flat_map(|k| {
            [
                (k * 37) as u8,
                (k * 11 + 5) as u8,
                (255 - k * 20) as u8,
                255,
            ]
        })
        .collect();
    let res = resources(
        vec![(0, vec![0; (w * layers * 4 * 16) as usize])],
        vec![
            (
                0,
                TextureData::new_1d_array(F::Rgba32Float, w, layers, 1, read),
            ),
            (
                1,
                TextureData::new_1d_array(F::Rgba8Unorm, w, layers, 1, image.clone()),
            ),
            (
                3,
                TextureData::new_1d_array(F::Rgba8Unorm, w, layers, 1, image.clone()),
            ),
            (
                2,
                TextureData::new_1d_array(
                    F::Rgba32Float,
                    w,
                    layers,
                    1,
                    vec![0; (w * layers * 16) as usize],
                ),
            ),
        ],
    );
    let Some(out) = run(
        ROWS,
        "rows",
        &formats(&[(2, "rgba32float")]),
        [w, layers, 1],
        &res,
    ) else {
        return;
    };
    let got = f32s(&out.buffers[&0]);
    let unorm = |x: u32, l: u32, c: usize| image[(4 * (l * w + x)) as usize + c] as f32 / 255.0;
    for l in 0..layers {
        for x in 0..w {
            let i = ((l * w + x) * 16) as usize;
            assert_eq!(&got[i..i + 4], &texel(x, l), "read ({x}, {l})");
            // u = (x + 0.75) / w: texel x weighs 0.75, x + 1 (clamped) 0.25.
            let x1 = (x + 1).min(w - 1);
            for c in 0..4 {
                let want = 0.75 * unorm(x, l, c) + 0.25 * unorm(x1, l, c);
                assert!(
                    (got[i + 4 + c] - want).abs() <= FILTER_TOLERANCE,
                    "linear sample ({x}, {l}) channel {c}: got {}, want {want}",
                    got[i + 4 + c]
                );
                // Nearest: the texel itself, its unorm8 decoded within an
                // f32 rounding (Vulkan allows the conversion that much).
                assert!(
                    (got[i + 8 + c] - unorm(x, l, c)).abs() <= 1e-6,
                    "pixel sample ({x}, {l}) channel {c}: got {}, want {}",
                    got[i + 8 + c],
                    unorm(x, l, c)
                );
            }
            assert_eq!(
                &got[i + 12..i + 16],
                &[w as f32, layers as f32, layers as f32, w as f32]
            );
        }
    }
    let written = f32s(&out.textures[&2].data);
    assert_eq!(out.textures[&2].dimension, wgpu::TextureDimension::D1);
    for l in 0..layers {
        for x in 0..w {
            let i = ((l * w + x) * 4) as usize;
            let want = texel(x, l).map(|v| v * 2.0);
            assert_eq!(&written[i..i + 4], &want, "written ({x}, {l})");
        }
    }
}

const FACES: &str = r#"
#include <metal_stdlib>
using namespace metal;

kernel void faces(texturecube<float, access::read> c [[texture(0)]],
                  texturecube_array<float, access::read> ca [[texture(1)]],
                  texturecube<float, access::write> w [[texture(2)]],
                  device float4* out [[buffer(0)]],
                  uint3 gid [[thread_position_in_grid]]) {
    uint i = (gid.z * 2 + gid.y) * 2 + gid.x;
    float4 v = c.read(gid.xy, gid.z, 0);
    out[3 * i] = v;
    out[3 * i + 1] = ca.read(gid.xy, gid.z, 1);
    out[3 * i + 2] = float4(c.get_width(), c.get_height(), ca.get_array_size(), ca.get_width(0));
    w.write(v + 1.0f, gid.xy, gid.z);
}
"#;

#[test]
fn cube_textures_read_and_written_face_by_face() {
    if common::skip(common::Limit::CubeFacesAsArray) {
        return;
    }
    let cube = |layer: u32, x: u32, y: u32| [layer as f32, x as f32, y as f32, 0.5];
    let faces =
        |n: u32| {
            f32_texels((0..n).flat_map(move |l| {
                (0..2).flat_map(move |y| (0..2).flat_map(move |x| cube(l, x, y)))
            }))
        };
    let res = resources(
        vec![(0, vec![0; 6 * 4 * 3 * 16])],
        vec![
            (
                0,
                TextureData::new_2d_array(F::Rgba32Float, [2, 2, 6], 1, faces(6)),
            ),
            (
                1,
                TextureData::new_2d_array(F::Rgba32Float, [2, 2, 12], 1, faces(12)),
            ),
            (
                2,
                TextureData::new_2d_array(F::Rgba32Float, [2, 2, 6], 1, vec![0; 6 * 4 * 16]),
            ),
        ],
    );
    let Some(out) = run(
        FACES,
        "faces",
        &formats(&[(2, "rgba32float")]),
        [2, 2, 6],
        &res,
    ) else {
        return;
    };
    let got = f32s(&out.buffers[&0]);
    let written = f32s(&out.textures[&2].data);
    for face in 0..6 {
        for y in 0..2 {
            for x in 0..2 {
                let k = ((face * 2 + y) * 2 + x) as usize;
                let i = k * 12;
                assert_eq!(
                    &got[i..i + 4],
                    &cube(face, x, y),
                    "cube face {face} ({x}, {y})"
                );
                // Face `face` of cube 1 is layer 6 + face.
                assert_eq!(
                    &got[i + 4..i + 8],
                    &cube(6 + face, x, y),
                    "cube 1 face {face}"
                );
                assert_eq!(&got[i + 8..i + 12], &[2.0, 2.0, 2.0, 2.0]);
                assert_eq!(
                    &written[k * 4..k * 4 + 4],
                    &cube(face, x, y).map(|v| v + 1.0)
                );
            }
        }
    }
}

/// An 8-bit RGBA test image.
fn image(w: u32, h: u32, layers: u32) -> Vec<u8> {
    (0..w * h * layers)
        .flat_map(|k| {
            let (x, y, l) = (k % w, (k / w) % h, k / (w * h));
            [
                (x * 37 + y * 11 + l * 90) as u8,
                (y * 53 + x * 7) as u8,
                (x * y * 13 + 40 + l * 3) as u8,
                255,
            ]
        })
        .collect()
}

/// A texel coordinate through a WebGPU (and Metal) address mode.
fn address(i: i32, n: i32, mode: &str) -> i32 {
    match mode {
        "repeat" => i.rem_euclid(n),
        _ => i.clamp(0, n - 1),
    }
}

/// Metal's sampling of layer `l` of `data` (4×4×layers rgba8unorm) at LOD
/// 0 with a texel offset: the offset moves the footprint's texels.
fn sample_offset(
    data: &[u8],
    [u, v]: [f32; 2],
    l: usize,
    [ox, oy]: [i32; 2],
    mode: &str,
    linear: bool,
) -> [f32; 4] {
    let texel = |x: i32, y: i32| -> [f32; 4] {
        let (x, y) = (address(x + ox, 4, mode), address(y + oy, 4, mode));
        std::array::from_fn(|c| data[l * 64 + (4 * (y * 4 + x)) as usize + c] as f32 / 255.0)
    };
    if !linear {
        return texel((u * 4.0).floor() as i32, (v * 4.0).floor() as i32);
    }
    let (x, y) = (u * 4.0 - 0.5, v * 4.0 - 0.5);
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let (x0, y0) = (x0 as i32, y0 as i32);
    let (a, b, c, d) = (
        texel(x0, y0),
        texel(x0 + 1, y0),
        texel(x0, y0 + 1),
        texel(x0 + 1, y0 + 1),
    );
    std::array::from_fn(|k| {
        (a[k] * (1.0 - fx) + b[k] * fx) * (1.0 - fy) + (c[k] * (1.0 - fx) + d[k] * fx) * fy
    })
}

const OFFSETS: &str = r#"
#include <metal_stdlib>
using namespace metal;

struct Probe { float2 uv; int2 offset; };

kernel void offsets(texture2d<float> t [[texture(0)]],
                    texture2d_array<float> a [[texture(1)]],
                    texture2d<float> l [[texture(2)]],
                    device const Probe* probes [[buffer(0)]],
                    device float4* out [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
    constexpr sampler near(filter::nearest, address::clamp_to_edge);
    constexpr sampler lin(filter::linear, address::repeat);
    Probe p = probes[i];
    int2 off = p.offset;
    out[5 * i] = t.sample(near, p.uv, off);
    out[5 * i + 1] = l.sample(lin, p.uv, int2(off.x, -off.y));
    out[5 * i + 2] = a.sample(lin, p.uv, 1, off);
    out[5 * i + 3] = l.gather(lin, p.uv, off, component::x);
    out[5 * i + 4] = l.sample(lin, p.uv, int2(1, -2));
}
"#;

#[test]
fn texel_offsets_that_are_not_constant() {
    let base = image(4, 4, 1);
    let layers = image(4, 4, 2);
    let s = [0.125f32, 0.25, 0.5, 0.875, 0.0, 1.0];
    let offs = [[0, 0], [1, 0], [-1, 2], [3, -3], [-2, -1]];
    let probes: Vec<([f32; 2], [i32; 2])> = s
        .iter()
        .flat_map(|u| s.iter().map(move |v| [*u, *v]))
        .enumerate()
        .map(|(k, uv)| (uv, offs[k % offs.len()]))
        .collect();
    let n = probes.len();
    let bytes: Vec<u8> = probes
        .iter()
        .flat_map(|(uv, o)| {
            let mut b = f32_texels(*uv);
            b.extend(o.iter().flat_map(|v| v.to_le_bytes()));
            b
        })
        .collect();
    let res = resources(
        vec![(0, bytes), (1, vec![0; n * 5 * 16])],
        vec![
            (0, TextureData::new_2d(F::Rgba8Unorm, 4, 4, base.clone())),
            (
                1,
                TextureData::new_2d_array(F::Rgba8Unorm, [4, 4, 2], 1, layers.clone()),
            ),
            (2, TextureData::new_2d(F::Rgba8Unorm, 4, 4, base.clone())),
        ],
    );
    let Some(out) = run(
        OFFSETS,
        "offsets",
        &Options::default(),
        [n as u32, 1, 1],
        &res,
    ) else {
        return;
    };
    let got = f32s(&out.buffers[&1]);
    for (i, (uv, [ox, oy])) in probes.iter().enumerate() {
        let wants = [
            sample_offset(&base, *uv, 0, [*ox, *oy], "clamp", false),
            sample_offset(&base, *uv, 0, [*ox, -*oy], "repeat", true),
            sample_offset(&layers, *uv, 1, [*ox, *oy], "repeat", true),
            gather_red(&base, *uv, [*ox, *oy]),
            sample_offset(&base, *uv, 0, [1, -2], "repeat", true),
        ];
        for (k, want) in wants.iter().enumerate() {
            let at = (i * 5 + k) * 4;
            for c in 0..4 {
                assert!(
                    (got[at + c] - want[c]).abs() <= FILTER_TOLERANCE,
                    "probe {uv:?} offset ({ox}, {oy}) result {k} channel {c}: got {}, want {}",
                    got[at + c],
                    want[c]
                );
            }
        }
    }
}

/// `gather(.., component::x)` with an offset, repeat addressing: the red
/// components of the bilinear footprint in Metal's order (i0, j1), (i1, j1),
/// (i1, j0), (i0, j0).
fn gather_red(data: &[u8], [u, v]: [f32; 2], [ox, oy]: [i32; 2]) -> [f32; 4] {
    let red = |x: i32, y: i32| {
        let (x, y) = (address(x + ox, 4, "repeat"), address(y + oy, 4, "repeat"));
        data[(4 * (y * 4 + x)) as usize] as f32 / 255.0
    };
    let (x0, y0) = (
        (u * 4.0 - 0.5).floor() as i32,
        (v * 4.0 - 0.5).floor() as i32,
    );
    [
        red(x0, y0 + 1),
        red(x0 + 1, y0 + 1),
        red(x0 + 1, y0),
        red(x0, y0),
    ]
}

const CLAMPS: &str = r#"
#include <metal_stdlib>
using namespace metal;

struct Probe { float clamp; float bias; float2 gradient; };

kernel void clamps(texture2d<float> t [[texture(0)]],
                   device const Probe* probes [[buffer(0)]],
                   device float4* out [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
    constexpr sampler s(filter::nearest, mip_filter::linear);
    Probe p = probes[i];
    float2 uv = float2(0.3f, 0.6f);
    out[4 * i] = t.sample(s, uv, min_lod_clamp(p.clamp));
    out[4 * i + 1] = t.sample(s, uv, bias(p.bias), min_lod_clamp(p.clamp));
    out[4 * i + 2] = t.sample(s, uv, gradient2d(p.gradient, p.gradient.yx), min_lod_clamp(p.clamp));
    out[4 * i + 3] = t.sample(s, uv, bias(p.bias));
}
"#;

#[test]
fn min_lod_clamp_raises_the_level() {
    // 8×8, 4 levels; level k is one colour, so a sample is the blend of the
    // two levels around its LOD (linear mip filter).
    let colour = |k: u32| {
        [
            (k * 80) as u8,
            (200 - k * 60) as u8,
            (k * 20 + 7) as u8,
            255,
        ]
    };
    let mut data = Vec::new();
    for k in 0..4 {
        let side = 8 >> k;
        for _ in 0..side * side {
            data.extend(colour(k));
        }
    }
    let at_lod = |lod: f32| -> [f32; 4] {
        let lod = lod.clamp(0.0, 3.0);
        let (k, f) = (lod.floor() as u32, lod.fract());
        let (a, b) = (colour(k), colour((k + 1).min(3)));
        std::array::from_fn(|c| (a[c] as f32 * (1.0 - f) + b[c] as f32 * f) / 255.0)
    };
    // (clamp, bias, gradient's length in texels = 2^lod)
    let probes: Vec<[f32; 3]> = vec![
        [0.0, 0.25, 0.0],
        [0.5, 0.25, 1.0],
        [1.25, -1.0, 2.5],
        [2.0, 1.5, 0.5],
        [0.75, 1.75, 1.5],
        [3.5, 0.0, 0.0],
    ];
    let bytes: Vec<u8> = probes
        .iter()
        .flat_map(|[c, b, g]| f32_texels([*c, *b, 2f32.powf(*g) / 8.0, 0.0]))
        .collect();
    let n = probes.len();
    let res = resources(
        vec![(0, bytes), (1, vec![0; n * 4 * 16])],
        vec![(0, TextureData::new_2d_mips(F::Rgba8Unorm, 8, 8, 4, data))],
    );
    let Some(out) = run(
        CLAMPS,
        "clamps",
        &Options::default(),
        [n as u32, 1, 1],
        &res,
    ) else {
        return;
    };
    let got = f32s(&out.buffers[&1]);
    // The LOD's fraction weighs the two levels in fixed point (8 bits on
    // common hardware): half a step of each 1/255 texel difference more.
    let tolerance = 2.0 / 255.0 + 1e-6;
    for (i, [clamp, bias, g]) in probes.iter().enumerate() {
        let wants = [
            at_lod(clamp.max(0.0)),
            at_lod(bias.max(*clamp)),
            at_lod(g.max(*clamp)),
            at_lod(*bias),
        ];
        for (k, want) in wants.iter().enumerate() {
            let at = (i * 4 + k) * 4;
            for c in 0..4 {
                assert!(
                    (got[at + c] - want[c]).abs() <= tolerance,
                    "probe {i} (clamp {clamp}, bias {bias}, lod {g}) result {k} channel {c}: got {}, want {}",
                    got[at + c],
                    want[c]
                );
            }
        }
    }
}

const SCALAR_GRADIENTS: &str = r#"
#include <metal_stdlib>
using namespace metal;

kernel void scalar_gradients(texture2d<float> t [[texture(0)]],
                             device const float* steps [[buffer(0)]],
                             device float4* out [[buffer(1)]],
                             uint i [[thread_position_in_grid]]) {
    constexpr sampler s(filter::nearest, mip_filter::linear);
    float g = steps[i];
    float2 uv = float2(0.6f, 0.3f);
    // Scalars convert to the constructor's `float2` parameters, one
    // replicated in both lanes, an `int` too.
    out[3 * i] = t.sample(s, uv, gradient2d(g, g));
    out[3 * i + 1] = t.sample(s, uv, gradient2d(float2(g), g));
    out[3 * i + 2] = t.sample(s, uv, gradient2d(1, 1));
}
"#;

/// `gradient2d(5.0, 8.0)` (as SPIR-V Cross writes a 1-D texture's
/// gradients sampled as 2-D): each scalar is a `float2` of it, so the LOD
/// is that of the gradient `(g, g)`, whose length is `g·√2` of the width.
#[test]
fn gradients_given_as_scalars_are_replicated_vectors() {
    let colour = |k: u32| {
        [
            (k * 70) as u8,
            (210 - k * 50) as u8,
            (k * 30 + 5) as u8,
            255,
        ]
    };
    let mut data = Vec::new();
    for k in 0..4 {
        let side = 8 >> k;
        for _ in 0..side * side {
            data.extend(colour(k));
        }
    }
    let at_lod = |lod: f32| -> [f32; 4] {
        let lod = lod.clamp(0.0, 3.0);
        let (k, f) = (lod.floor() as u32, lod.fract());
        let (a, b) = (colour(k), colour((k + 1).min(3)));
        std::array::from_fn(|c| (a[c] as f32 * (1.0 - f) + b[c] as f32 * f) / 255.0)
    };
    // The LODs the `(g, g)` gradient should give: whole levels, as a
    // GPU's LOD from gradients is the formula's only up to its own
    // approximations (lavapipe's fraction is off by 0.05 at 1.25).
    let lods = [-1.0f32, 0.0, 1.0, 2.0, 3.0, 4.0];
    let steps: Vec<f32> = lods
        .iter()
        .map(|l| 2f32.powf(*l) / (8.0 * 2f32.sqrt()))
        .collect();
    let bytes: Vec<u8> = steps.iter().flat_map(|g| g.to_le_bytes()).collect();
    let n = steps.len();
    let res = resources(
        vec![(0, bytes), (1, vec![0; n * 3 * 16])],
        vec![(0, TextureData::new_2d_mips(F::Rgba8Unorm, 8, 8, 4, data))],
    );
    let Some(out) = run(
        SCALAR_GRADIENTS,
        "scalar_gradients",
        &Options::default(),
        [n as u32, 1, 1],
        &res,
    ) else {
        return;
    };
    let got = f32s(&out.buffers[&1]);
    let tolerance = 2.0 / 255.0 + 1e-6;
    for (i, (lod, g)) in lods.iter().zip(&steps).enumerate() {
        // `(1, 1)`: 8·√2 texels, past the last level (3).
        let wants = [at_lod(*lod), at_lod(*lod), at_lod(3.0)];
        for (k, want) in wants.iter().enumerate() {
            let at = (i * 3 + k) * 4;
            for c in 0..4 {
                assert!(
                    (got[at + c] - want[c]).abs() <= tolerance,
                    "step {g} result {k} channel {c}: got {}, want {}",
                    got[at + c],
                    want[c]
                );
            }
        }
    }
}

const CUBE_GRADIENT_VALUES: &str = r#"
#include <metal_stdlib>
using namespace metal;

// A helper returning the gradient, as SPIR-V Cross's `spvGradientCube`
// does: `gradientcube` is a type, constructed from its two derivatives.
static inline gradientcube along_face(float g) {
    return gradientcube(float3(g, 0.0f, 0.0f), float3(0.0f, g, 0.0f));
}

kernel void cube_gradients(texturecube<float> t [[texture(0)]],
                           device const float* steps [[buffer(0)]],
                           device float4* out [[buffer(1)]],
                           uint i [[thread_position_in_grid]]) {
    constexpr sampler s(filter::nearest, mip_filter::linear);
    gradientcube g = along_face(steps[i]);
    out[i] = t.sample(s, float3(0.0f, 0.0f, 1.0f), g);
}
"#;

/// `gradientcube` as a value a helper returns: the sample uses its
/// derivatives. Toward +Z the face coordinate is `(x / z + 1) / 2`, so a
/// step `g` in `x` (or `y`) moves `g / 2` of the face, `4·g` texels of an
/// 8×8 face: the LOD is `log2(4·g)`.
#[test]
fn cube_gradients_returned_by_helpers_set_the_lod() {
    let colour = |k: u32| {
        [
            (k * 60 + 10) as u8,
            (220 - k * 50) as u8,
            (k * 25) as u8,
            255,
        ]
    };
    let mut data = Vec::new();
    for k in 0..4 {
        let side = 8 >> k;
        for _face in 0..6 {
            for _ in 0..side * side {
                data.extend(colour(k));
            }
        }
    }
    let lods = [-1.0f32, 0.0, 1.0, 2.0, 3.0, 4.0];
    let steps: Vec<f32> = lods.iter().map(|l| 2f32.powf(*l) / 4.0).collect();
    let bytes: Vec<u8> = steps.iter().flat_map(|g| g.to_le_bytes()).collect();
    let n = steps.len();
    let res = resources(
        vec![(0, bytes), (1, vec![0; n * 16])],
        vec![(
            0,
            TextureData::new_2d_array(F::Rgba8Unorm, [8, 8, 6], 4, data),
        )],
    );
    let Some(out) = run(
        CUBE_GRADIENT_VALUES,
        "cube_gradients",
        &Options::default(),
        [n as u32, 1, 1],
        &res,
    ) else {
        return;
    };
    let got = f32s(&out.buffers[&1]);
    for (i, lod) in lods.iter().enumerate() {
        let k = lod.clamp(0.0, 3.0) as u32;
        let want = colour(k).map(|c| c as f32 / 255.0);
        for c in 0..4 {
            assert!(
                (got[4 * i + c] - want[c]).abs() <= 1.0 / 255.0 + 1e-6,
                "LOD {lod} channel {c}: got {}, want {}",
                got[4 * i + c],
                want[c]
            );
        }
    }
}

const ATOMICS: &str = r#"
#include <metal_stdlib>
using namespace metal;

void add_one(texture2d<uint, access::read_write> bins, uint2 at) {
    bins.atomic_fetch_add(at, uint4(1));
}

void count(texture2d<uint, access::read_write> bins, uint v) {
    add_one(bins, uint2(v % 4, v / 4 % 2));
}

kernel void histogram(texture2d<uint, access::read_write> bins [[texture(0)]],
                      texture2d<int, access::read_write> signed_bins [[texture(1)]],
                      device const uint* values [[buffer(0)]],
                      uint i [[thread_position_in_grid]]) {
    uint v = values[i];
    count(bins, v);
    bins.atomic_fetch_max(uint2(v % 4, 2), uint4(v));
    bins.atomic_fetch_sub(uint2(v % 4, 3), uint4(2));
    int s = int(v) - 20;
    signed_bins.atomic_fetch_min(uint2(v % 4, 0), int4(s));
    signed_bins.atomic_fetch_xor(uint2(v % 4, 1), int4(int(v) << 3));
    signed_bins.atomic_fetch_and(uint2(v % 4, 2), int4(~(1 << (v % 5))));
    signed_bins.atomic_fetch_or(uint2(v % 4, 3), int4(1 << (v % 7)));
}
"#;

#[test]
fn texture_atomics_with_wgpu() {
    let values: Vec<u32> = (0..64u32).map(|k| (k * 37 + 11) % 41).collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut signed_start = vec![0i32; 16];
    for x in 0..4 {
        signed_start[x] = 1000; // min starts high
        signed_start[8 + x] = -1; // and starts all ones
    }
    let signed_bytes: Vec<u8> = signed_start.iter().flat_map(|v| v.to_le_bytes()).collect();
    let res = resources(
        vec![(0, bytes)],
        vec![
            (0, TextureData::new_2d(F::R32Uint, 4, 4, vec![0; 64])),
            (1, TextureData::new_2d(F::R32Sint, 4, 4, signed_bytes)),
        ],
    );
    let Some(out) = run(ATOMICS, "histogram", &Options::default(), [64, 1, 1], &res) else {
        return;
    };
    let got: Vec<u32> = common::u32s(&out.textures[&0].data);
    let got_signed: Vec<i32> = common::u32s(&out.textures[&1].data)
        .into_iter()
        .map(|v| v as i32)
        .collect();
    let mut want = vec![0u32; 16];
    let mut want_signed = signed_start.clone();
    for &v in &values {
        let x = (v % 4) as usize;
        want[((v / 4 % 2) * 4) as usize + x] += 1;
        want[8 + x] = want[8 + x].max(v);
        want[12 + x] = want[12 + x].wrapping_sub(2);
        want_signed[x] = want_signed[x].min(v as i32 - 20);
        want_signed[4 + x] ^= (v as i32) << 3;
        want_signed[8 + x] &= !(1 << (v % 5));
        want_signed[12 + x] |= 1 << (v % 7);
    }
    assert_eq!(got, want, "uint bins");
    assert_eq!(got_signed, want_signed, "int bins");
}

const TEXELS: &str = r#"
#include <metal_stdlib>
using namespace metal;

float4 first(texture_buffer<float> b) { return b.read(0); }

kernel void texels(texture_buffer<float> src [[texture(0)]],
                   texture_buffer<float, access::write> dst [[texture(1)]],
                   texture_buffer<uint, access::read_write> counts [[texture(2)]],
                   texture_buffer<half> halves [[texture(3)]],
                   texture_buffer<int, access::read> ints [[texture(4)]],
                   device float4* out [[buffer(0)]],
                   uint i [[thread_position_in_grid]]) {
    float4 c = i == 0 ? first(src) : src.read(i);
    out[3 * i] = c;
    out[3 * i + 1] = float4(halves.read(i)) + float4(src.get_width(), dst.get_width(), counts.get_width(), 0);
    out[3 * i + 2] = float4(ints.read(i));
    dst.write(c.zyxw * 0.5f, i);
    uint4 n = counts.read(i);
    counts.write(n + uint4(i, 1, 2, 3), i);
}
"#;

#[test]
fn texel_buffers_in_several_formats() {
    let n = 6u32;
    let rgba: Vec<u8> = (0..n * 4).map(|k| (k * 23 + 9) as u8).collect();
    let halves: Vec<f32> = (0..n * 4).map(|k| k as f32 * 0.375 - 2.0).collect();
    let half_bytes: Vec<u8> = halves
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
        .collect();
    let counts: Vec<u32> = (0..n * 2).map(|k| k * 100).collect();
    let count_bytes: Vec<u8> = counts.iter().flat_map(|v| v.to_le_bytes()).collect();
    let ints: Vec<i32> = (0..n as i32).map(|k| k * -7 + 3).collect();
    let int_bytes: Vec<u8> = ints.iter().flat_map(|v| v.to_le_bytes()).collect();
    let res = resources(
        vec![(0, vec![0; (n * 3 * 16) as usize])],
        vec![
            (0, TextureData::new_1d(F::Rgba8Unorm, n, rgba.clone())),
            (
                1,
                TextureData::new_1d(F::Bgra8Unorm, n, vec![0; (n * 4) as usize]),
            ),
            (2, TextureData::new_1d(F::Rg32Uint, n, count_bytes)),
            (3, TextureData::new_1d(F::Rgba16Float, n, half_bytes)),
            (4, TextureData::new_1d(F::R32Sint, n, int_bytes)),
        ],
    );
    let options = formats(&[
        (1, "bgra8unorm"),
        (2, "rg32uint"),
        (3, "rgba16float"),
        (4, "r32sint"),
    ]);
    let Some(out) = run(TEXELS, "texels", &options, [n, 1, 1], &res) else {
        return;
    };
    let got = f32s(&out.buffers[&0]);
    let dst = &out.textures[&1].data;
    let counts_after = common::u32s(&out.textures[&2].data);
    for i in 0..n as usize {
        let unorm: [f32; 4] = std::array::from_fn(|c| rgba[4 * i + c] as f32 / 255.0);
        assert_eq!(&got[12 * i..12 * i + 4], &unorm, "rgba8unorm texel {i}");
        let w = n as f32;
        let want: [f32; 4] = std::array::from_fn(|c| halves[4 * i + c] + [w, w, w, 0.0][c]);
        assert_eq!(
            &got[12 * i + 4..12 * i + 8],
            &want,
            "rgba16float texel {i} and widths"
        );
        // r32sint: (v, 0, 0, 1).
        assert_eq!(
            &got[12 * i + 8..12 * i + 12],
            &[ints[i] as f32, 0.0, 0.0, 1.0],
            "r32sint texel {i}"
        );
        // Written as bgra8unorm: bytes B, G, R, A of zyxw * 0.5, that is
        // x, y, z, w of the texel halved (rounding a tie either way).
        for c in 0..4 {
            let want = unorm[c] * 0.5 * 255.0;
            assert!(
                (dst[4 * i + c] as f32 - want).abs() <= 0.5 + 1e-3,
                "bgra8unorm texel {i} byte {c}: got {}, want {want}",
                dst[4 * i + c]
            );
        }
        assert_eq!(
            &counts_after[2 * i..2 * i + 2],
            &[counts[2 * i] + i as u32, counts[2 * i + 1] + 1],
            "rg32uint texel {i}"
        );
    }
}

const CLAMPED_FRAGMENTS: &str = r#"
#include <metal_stdlib>
using namespace metal;

struct VOut { float4 pos [[position]]; };
struct Params { float scale; float clamp; float bias; float pad; };

vertex VOut cover(uint vid [[vertex_id]]) {
    float2 p = float2((vid << 1) & 2, vid & 2);
    VOut o;
    o.pos = float4(p * 2.0 - 1.0, 0.0, 1.0);
    return o;
}

constexpr sampler s(filter::nearest, mip_filter::linear, address::repeat);

fragment float4 clamped(VOut in [[stage_in]], constant Params& p [[buffer(0)]],
                        texture2d<float> t [[texture(0)]]) {
    return t.sample(s, in.pos.xy / 8.0f * p.scale, min_lod_clamp(p.clamp));
}

fragment float4 biased(VOut in [[stage_in]], constant Params& p [[buffer(0)]],
                       texture2d<float> t [[texture(0)]]) {
    return t.sample(s, in.pos.xy / 8.0f * p.scale, bias(p.bias), min_lod_clamp(p.clamp));
}
"#;

/// In fragment functions the LOD is implicit: `min_lod_clamp` computes it
/// from the coordinate's derivatives. 16×16 texture, 8×8 target, the
/// coordinate `pos / 8 × scale`: `2 × scale` texels per pixel, LOD
/// `1 + log2(scale)`.
#[test]
fn min_lod_clamp_in_fragment_functions() {
    use msl2wgsl::runner::{render_library, RenderResources};
    let Some(gpu) = gpu() else { return };
    let options = Options {
        target: msl2wgsl::Target::Wgpu,
        ..Options::default()
    };
    let lib = msl2wgsl::Library::from_source("clamped.metal", CLAMPED_FRAGMENTS, &options)
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let colour = |k: u32| {
        [
            (k * 60) as u8,
            (250 - k * 50) as u8,
            (k * 30 + 5) as u8,
            255,
        ]
    };
    let mut data = Vec::new();
    for k in 0..5 {
        let side = 16 >> k;
        for _ in 0..side * side {
            data.extend(colour(k));
        }
    }
    let at_lod = |lod: f32| -> [f32; 4] {
        let lod = lod.clamp(0.0, 4.0);
        let (k, f) = (lod.floor() as u32, lod.fract());
        let (a, b) = (colour(k), colour((k + 1).min(4)));
        std::array::from_fn(|c| (a[c] as f32 * (1.0 - f) + b[c] as f32 * f) / 255.0)
    };
    // (scale, clamp, bias)
    for [scale, clamp, bias] in [
        [0.5f32, 0.0, 0.5],
        [0.5, 1.5, -1.0],
        [2.0, 1.0, 0.5],
        [1.0, 2.25, 0.5],
        [1.0, 0.0, 0.75],
    ] {
        let mut r = RenderResources::new(8, 8, 3);
        r.fragment_buffers
            .insert(0, f32_texels([scale, clamp, bias, 0.0]));
        r.textures.insert(
            0,
            TextureData::new_2d_mips(F::Rgba8Unorm, 16, 16, 5, data.clone()),
        );
        let lod = 1.0 + scale.log2();
        for (fragment, want) in [
            ("clamped", at_lod(lod.max(clamp))),
            ("biased", at_lod((lod + bias).max(clamp))),
        ] {
            let img = &render_library(gpu, &lib, "cover", fragment, &r)
                .unwrap_or_else(|e| panic!("{fragment}: {e}"))[0];
            for (k, pixel) in img.data.chunks(4).enumerate() {
                for c in 0..4 {
                    // The LOD fraction's fixed point and unorm8 output
                    // rounding: two steps of 1/255 at most.
                    let got = pixel[c] as f32 / 255.0;
                    assert!(
                        (got - want[c]).abs() <= 2.0 / 255.0 + 1e-6,
                        "{fragment} scale {scale} clamp {clamp} bias {bias}: pixel {k} channel {c} is {got}, want {}",
                        want[c]
                    );
                }
            }
        }
    }
}
