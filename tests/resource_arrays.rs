//! Arrays of textures and samplers (entry-point arguments and argument
//! buffer members) run on the GPU against CPU references: elements picked
//! by constant and by run-time index (a `switch` over the elements), the
//! array passed to helpers, an element held in a variable; samplers whose
//! comparison use is found through helpers; the fragment layer index.
#![cfg(feature = "runner")]

mod common;

use common::{f32s, gpu};
use msl2wgsl::reflect::{ArgumentKind, SamplerDescriptor};
use msl2wgsl::runner::{
    default_sampler, run_kernel_resources, ArgumentBuffer, Dispatch, Outputs, Resources,
    TextureData,
};
use msl2wgsl::{Library, Options};
use wgpu::TextureFormat as F;

/// Texel `(x, y)` of texture `t`: distinct in every texture and texel.
fn texel(t: u32, x: u32, y: u32) -> f32 {
    (t * 100 + y * 10 + x) as f32
}

/// A 4×4 `r32float` texture of [`texel`]s; texture `t` is `4 + t` wide
/// (its width tells which texture a size query read).
fn texture(t: u32) -> TextureData {
    let (w, h) = (4 + t, 4);
    let data = (0..w * h)
        .flat_map(|k| texel(t, k % w, k / w).to_le_bytes())
        .collect();
    TextureData::new_2d(F::R32Float, w, h, data)
}

fn run(source: &str, entry: &str, resources: &Resources, threads: u32) -> Option<Outputs> {
    let gpu = gpu()?;
    let dispatch = Dispatch::Threads {
        grid: [threads, 1, 1],
        threadgroup: [threads, 1, 1],
    };
    Some(
        run_kernel_resources(
            gpu,
            "arrays.metal",
            source,
            &Options::default(),
            entry,
            &dispatch,
            resources,
        )
        .unwrap_or_else(|e| panic!("{entry}: {e}")),
    )
}

const PICK: &str = r#"
#include <metal_stdlib>
using namespace metal;

// The array passed whole, then indexed at run time in the helper.
static float read_from(array<texture2d<float>, 4> ts, uint i, uint2 p) {
    return ts[i].read(p).x;
}

// One element passed: the helper sees a plain texture.
static float width_of(texture2d<float> t) {
    return float(t.get_width());
}

kernel void pick(array<texture2d<float>, 4> ts [[texture(0)]],
                 texture2d<float> more[2] [[texture(4)]],
                 device float4* out [[buffer(0)]],
                 constant int* which [[buffer(1)]],
                 uint gid [[thread_position_in_grid]]) {
    uint2 p = uint2(gid % 4, gid / 4 % 4);
    int i = which[gid];
    float constant_pick = ts[2].read(p).x + more[1].read(p).x;
    float runtime_pick = ts[i].read(p).x;
    float through_helper = read_from(ts, uint(3 - i), p);
    float element_passed = width_of(ts[i]) + 10.0 * width_of(more[i & 1]);
    texture2d<float> held = ts[(i + 1) & 3];
    out[gid] = float4(constant_pick, runtime_pick, through_helper,
                      element_passed + 100.0 * held.read(p).x);
}
"#;

/// Constant indices pick one binding; run-time ones a `switch` around the
/// read, the size query, the helper call and each use of a variable.
#[test]
fn elements_chosen_by_constant_and_run_time_index() {
    let lib = Library::from_source("arrays.metal", PICK, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert!(lib.wgsl().contains("switch"), "{}", lib.wgsl());
    let threads = 32u32;
    let which: Vec<i32> = (0..threads).map(|g| ((g * 7 + g / 5) % 4) as i32).collect();
    let resources = Resources {
        buffers: [
            (0, vec![0u8; threads as usize * 16]),
            (1, which.iter().flat_map(|v| v.to_le_bytes()).collect()),
        ]
        .into_iter()
        .collect(),
        textures: (0..6).map(|t| (t, texture(t))).collect(),
        ..Default::default()
    };
    let Some(out) = run(PICK, "pick", &resources, threads) else {
        return;
    };
    let got = f32s(&out.buffers[&0]);
    for g in 0..threads {
        let (x, y) = (g % 4, g / 4 % 4);
        let i = which[g as usize] as u32;
        let width = |t: u32| (4 + t) as f32;
        let want = [
            texel(2, x, y) + texel(5, x, y),
            texel(i, x, y),
            texel(3 - i, x, y),
            width(i) + 10.0 * width(4 + (i & 1)) + 100.0 * texel((i + 1) & 3, x, y),
        ];
        // Every value is an integer below 2^24: exact in f32.
        assert_eq!(
            &got[4 * g as usize..4 * g as usize + 4],
            &want,
            "thread {g}, index {i}"
        );
    }
}

/// Each element is an argument of its own in reflection, at the array's
/// index plus its position and the binding that index gives.
#[test]
fn reflection_lists_each_element() {
    let lib = Library::from_source("arrays.metal", PICK, &Options::default()).unwrap();
    let f = lib.function("pick").expect("pick");
    let textures: Vec<(String, u32, u32)> = f
        .arguments
        .iter()
        .filter(|a| a.kind == ArgumentKind::Texture)
        .map(|a| (a.name.clone(), a.index, a.binding.expect("bound").binding))
        .collect();
    let want: Vec<(String, u32, u32)> = (0..4)
        .map(|k| (format!("ts[{k}]"), k, 64 + k))
        .chain((0..2).map(|k| (format!("more[{k}]"), 4 + k, 68 + k)))
        .collect();
    assert_eq!(textures, want);
}

const SAMPLED: &str = r#"
#include <metal_stdlib>
using namespace metal;

struct Materials {
    array<texture2d<float>, 3> ts [[id(0)]];
    array<sampler, 2> ss [[id(3)]];
};

kernel void sampled(constant Materials& m [[buffer(0)]],
                    device float* out [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
    uint i = gid % 3;
    uint j = gid / 3 % 2;
    float2 uv = float2(1.1, (float(gid % 4) + 0.5) / 4.0);
    // Two indices: nested `switch`es; the same index twice: one.
    out[2 * gid] = m.ts[i].sample(m.ss[j], uv, level(0)).x;
    out[2 * gid + 1] = m.ts[i].sample(m.ss[i & 1], uv, level(0)).x
                     + 1000.0 * float(m.ts[i].get_width());
}
"#;

/// Textures and samplers of an argument buffer, both chosen at run time:
/// the sampler's address mode shows which sampler sampled.
#[test]
fn argument_buffer_textures_and_samplers_chosen_at_run_time() {
    // Every texture is sampled with both samplers (the `switch`es hold
    // each pairing), which GL's combined texture-sampler units cannot do.
    if common::skip(common::Limit::TextureWithSeveralSamplers) {
        return;
    }
    let threads = 24u32;
    let repeat = SamplerDescriptor {
        address_mode_u: "repeat".into(),
        ..default_sampler()
    };
    let members = ArgumentBuffer {
        textures: (0..3).map(|t| (t, texture(t))).collect(),
        samplers: [(3, default_sampler()), (4, repeat)].into_iter().collect(),
        ..Default::default()
    };
    let resources = Resources {
        buffers: [(0, vec![0u8; 64]), (1, vec![0u8; threads as usize * 8])]
            .into_iter()
            .collect(),
        argument_buffers: [(0, members)].into_iter().collect(),
        ..Default::default()
    };
    let Some(out) = run(SAMPLED, "sampled", &resources, threads) else {
        return;
    };
    let got = f32s(&out.buffers[&1]);
    for g in 0..threads {
        let (i, j, y) = (g % 3, g / 3 % 2, g % 4);
        let w = 4 + i;
        // u = 1.1, nearest: clamp-to-edge reads the last column, repeat
        // the column at 0.1 (column 0 for widths up to 9).
        let at = |sampler: u32| match sampler {
            0 => texel(i, w - 1, y),
            _ => texel(i, 0, y),
        };
        let want = [at(j), at(i & 1) + 1000.0 * w as f32];
        assert_eq!(
            &got[2 * g as usize..2 * g as usize + 2],
            &want,
            "thread {g}"
        );
    }
}

const COMPARED: &str = r#"
#include <metal_stdlib>
using namespace metal;

// Tint's shape: the module's resources gathered in a struct of places.
struct Vars {
    depth2d<float> d;
    sampler shadow;
};

static float shadowed(depth2d<float> d, sampler s, float2 uv, float ref) {
    return d.sample_compare(s, uv, ref);
}

// Passed on to a helper that compares: a comparison sampler too.
static float through(Vars v, float2 uv) {
    return shadowed(v.d, v.shadow, uv, 0.5);
}

static float plain(texture2d<float> t, sampler s, float2 uv) {
    return t.sample(s, uv, level(0)).x;
}

kernel void compared(depth2d<float> d [[texture(0)]],
                     texture2d<float> c [[texture(1)]],
                     sampler shadow [[sampler(0)]],
                     sampler linear [[sampler(1)]],
                     device float2* out [[buffer(0)]],
                     uint i [[thread_position_in_grid]]) {
    Vars v = Vars{d, shadow};
    float2 uv = float2(float(i % 4) + 0.5, float(i / 4) + 0.5) / 4.0;
    out[i] = float2(through(v, uv), plain(c, linear, uv));
}
"#;

/// `sampler` arguments used with `sample_compare` only inside helpers
/// (through a struct of places, as Tint writes them) are WGSL
/// `sampler_comparison`s; another passed to `sample` stays a `sampler`.
#[test]
fn sampler_compared_in_a_helper_is_a_comparison_sampler() {
    let lib = Library::from_source("compared.metal", COMPARED, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let f = lib.function("compared").expect("compared");
    let comparison: Vec<(String, bool)> = f
        .arguments
        .iter()
        .filter_map(|a| Some((a.name.clone(), a.sampler.as_ref()?.comparison)))
        .collect();
    assert_eq!(
        comparison,
        [("shadow".to_string(), true), ("linear".to_string(), false)]
    );
    let depth: Vec<f32> = (0..16).map(|k| k as f32 / 16.0).collect();
    let shadow = SamplerDescriptor {
        compare: Some("less".into()),
        ..default_sampler()
    };
    let resources = Resources {
        buffers: [(0, vec![0u8; 16 * 8])].into_iter().collect(),
        textures: [
            (
                0,
                TextureData::new_2d(
                    F::Depth32Float,
                    4,
                    4,
                    depth.iter().flat_map(|v| v.to_le_bytes()).collect(),
                ),
            ),
            (1, texture(0)),
        ]
        .into_iter()
        .collect(),
        samplers: [(0, shadow), (1, default_sampler())].into_iter().collect(),
        ..Default::default()
    };
    let Some(out) = run(COMPARED, "compared", &resources, 16) else {
        return;
    };
    let got = f32s(&out.buffers[&0]);
    for (i, d) in depth.iter().enumerate() {
        let (x, y) = (i as u32 % 4, i as u32 / 4);
        // `less`: the reference 0.5 passes where it is below the stored depth.
        let want = [if 0.5 < *d { 1.0 } else { 0.0 }, texel(0, x, y)];
        assert_eq!(&got[2 * i..2 * i + 2], &want, "texel {i}");
    }
}

/// MSL 3.2's `memory_coherence_device` texture parameter translates as the
/// default threadgroup coherence (only device-scope fences, narrowed with
/// W0409, could tell them apart).
#[test]
fn a_device_coherent_texture_reads() {
    const SOURCE: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void coherent(texture2d<uint, access::read, memory_coherence_device> t [[texture(0)]],
                     device uint* out [[buffer(0)]],
                     uint i [[thread_position_in_grid]]) {
    out[i] = t.read(uint2(i % 4, i / 4)).x;
}
"#;
    let values: Vec<u32> = (0..16).map(|k| k * 3 + 1).collect();
    let resources = Resources {
        buffers: [(0, vec![0u8; 64])].into_iter().collect(),
        textures: [(
            0,
            TextureData::new_2d(
                F::R32Uint,
                4,
                4,
                values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ),
        )]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let Some(out) = run(SOURCE, "coherent", &resources, 16) else {
        return;
    };
    assert_eq!(common::u32s(&out.buffers[&0]), values);
}

const BUFFERS: &str = r#"
#include <metal_stdlib>
using namespace metal;

struct Sources {
    array<device float*, 3> bufs [[id(0)]];
};

// An element passed to a helper chosen at run time: a `switch` around the call.
static float at(device float* b, uint i) {
    return b[i];
}

kernel void gather(device Sources& s [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
    out[i] = s.bufs[1][i] + 10.0 * at(s.bufs[i % 3], i);
    // A pointer variable holding an element: each statement using it
    // runs in a `switch` on the index it holds.
    device float* held = s.bufs[(i + 1) % 3];
    out[i] += 100.0 * held[i];
}
"#;

/// `array<device float*, N>` in an argument buffer: its elements are
/// buffers (the element type keeps its pointer), by constant index, passed
/// to a helper by run-time index, and held in a pointer variable.
#[test]
fn argument_buffer_array_of_buffers() {
    let n = 12u32;
    let data = |b: u32| -> Vec<f32> { (0..n).map(|k| (b * 100 + k) as f32).collect() };
    let members = ArgumentBuffer {
        buffers: (0..3).map(|b| (b, common::f32_bytes(&data(b)))).collect(),
        ..Default::default()
    };
    let resources = Resources {
        buffers: [(0, vec![0u8; 24]), (1, vec![0u8; 4 * n as usize])]
            .into_iter()
            .collect(),
        argument_buffers: [(0, members)].into_iter().collect(),
        ..Default::default()
    };
    let Some(out) = run(BUFFERS, "gather", &resources, n) else {
        return;
    };
    let got = f32s(&out.buffers[&1]);
    for i in 0..n {
        let want = data(1)[i as usize]
            + 10.0 * data(i % 3)[i as usize]
            + 100.0 * data((i + 1) % 3)[i as usize];
        assert_eq!(got[i as usize], want, "thread {i}");
    }
}
