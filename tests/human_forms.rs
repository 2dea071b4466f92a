//! Forms that hand-written MSL of the corpus uses (issue 16): shader
//! logging (`<metal_logging>`), additions to `namespace metal`, and the
//! statement and declaration forms below. Each runs on the GPU against a
//! CPU reference, or is refused with a located diagnostic.

// Without the runner the GPU tests are compiled out, and the sources and
// helpers only they use are unused.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use common::source::{assert_error, translate_body, PRELUDE};

/// Runs kernel `entry` of `body` (after the prelude) over `n` threads in
/// threadgroups of 16 with `buffers`, or `None` without a GPU.
#[cfg(feature = "runner")]
fn run(
    body: &str,
    entry: &str,
    n: u32,
    buffers: Vec<(u32, Vec<u8>)>,
) -> Option<std::collections::BTreeMap<u32, Vec<u8>>> {
    common::source::run_body(body, entry, (n, 16), buffers)
}

/// Logging calls of every shape: `os_log_default`, a program-scope
/// `os_log` (also through an alias in a namespace, as MLX declares it),
/// in a kernel and in a helper function template.
const LOGGING: &str = r#"
#include <metal_logging>
namespace lib {
using os_log = metal::os_log;
}
constant os_log logger("com.example", "kernels");
constant lib::os_log other("com.example" ".more", "helpers");
template <typename T>
T twice(T x) {
    if (x < T(0)) {
        other.log_error("negative input %d", int(x));
    }
    return x * T(2);
}
kernel void logged(device const float* a [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
    os_log_default.log("thread %u of %s", i, "logged");
    metal::os_log_default.log_info("info");
    logger.log_debug("a[%u] = %f", i, a[i]);
    out[i] = twice(a[i]) + 1.0f;
}
"#;

#[test]
fn logging_calls_are_dropped_with_a_warning() {
    let lib = translate_body(LOGGING);
    let warnings = lib.warnings();
    assert_eq!(warnings.matches("was dropped").count(), 4, "{warnings}");
    let codes: Vec<_> = lib
        .warning_diagnostics()
        .0
        .iter()
        .map(|d| d.code())
        .collect();
    assert_eq!(codes, vec![msl2wgsl::diagnostics::Code::LoggingDropped; 4]);
    assert!(warnings.contains("`log_debug` was dropped"), "{warnings}");
}

#[cfg(feature = "runner")]
#[test]
fn logging_kernel_computes_as_without_the_log() {
    let a: Vec<f32> = (0..32).map(|i| i as f32 * 0.75 - 8.0).collect();
    let Some(out) = run(
        LOGGING,
        "logged",
        32,
        vec![
            (0, common::f32_bytes(&a)),
            (1, common::f32_bytes(&[0.0; 32])),
        ],
    ) else {
        return;
    };
    let want: Vec<f32> = a.iter().map(|x| x * 2.0 + 1.0).collect();
    assert_eq!(common::f32s(&out[&1]), want);
}

#[test]
fn string_literal_outside_a_logging_call_is_refused() {
    assert_error(
        "kernel void k(device float* o [[buffer(0)]]) {\n    o[0] = \"abc\" ? 1.0f : 0.0f;\n}\n",
        "\"abc\"",
        0,
        "string literals have no WGSL equivalent",
    );
}

/// A source that adds its own members to `namespace metal` (MLX's
/// `bfloat16_t`, `metal::` math overloads) still reaches the standard
/// library's members as `metal::...`.
const METAL_NAMESPACE: &str = r#"
namespace metal {
inline float scaled(float x) { return x * 3.0f; }
}
kernel void extended(device float* out [[buffer(0)]],
                     uint i [[thread_position_in_grid]]) {
    float big = metal::numeric_limits<float>::max();
    out[i] = metal::scaled(float(i)) + metal::min(big, 0.5f);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn user_members_of_namespace_metal_beside_the_library() {
    let Some(out) = run(
        METAL_NAMESPACE,
        "extended",
        16,
        vec![(0, common::f32_bytes(&[0.0; 16]))],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..16).map(|i| i as f32 * 3.0 + 0.5).collect();
    assert_eq!(common::f32s(&out[&0]), want);
}

/// `(void)x;` (an unused parameter), `static_cast<void>(f())` (a call kept
/// for its effect), and local aliases `using T = ..;`, `typedef .. T;`,
/// scoped to their block, also in a template with a dependent type.
const STATEMENT_FORMS: &str = r#"
template <typename T>
T accumulate(device T* acc, uint i, T x) {
    using Acc = T;
    typedef vec<Acc, 2> Pair;
    Pair p = Pair(x, Acc(1));
    acc[i] += p.x * p.y;
    return acc[i];
}
kernel void statements(device float* a [[buffer(0)]],
                       device int* b [[buffer(1)]],
                       uint i [[thread_position_in_grid]],
                       uint lid [[thread_position_in_threadgroup]]) {
    (void)lid;
    static_cast<void>(accumulate(a, i, 0.5f));
    {
        using T = int;
        T k = T(i) * 3;
        b[i] = k;
    }
    {
        typedef float T;
        T f = T(i) / 2;
        a[i] += f;
    }
}
"#;

#[cfg(feature = "runner")]
#[test]
fn void_casts_and_local_aliases() {
    let a: Vec<f32> = (0..32).map(|i| i as f32).collect();
    let Some(out) = run(
        STATEMENT_FORMS,
        "statements",
        32,
        vec![(0, common::f32_bytes(&a)), (1, vec![0; 128])],
    ) else {
        return;
    };
    let want_a: Vec<f32> = a.iter().map(|x| x + 0.5 + x / 2.0).collect();
    let want_b: Vec<u32> = (0..32).map(|i| i * 3).collect();
    assert_eq!(common::f32s(&out[&0]), want_a);
    assert_eq!(common::u32s(&out[&1]), want_b);
}

#[test]
fn local_alias_ends_with_its_block() {
    assert_error(
        "kernel void k(device float* o [[buffer(0)]]) {\n    { using T = float; o[0] = T(1); }\n    T x = 2;\n    o[1] = x;\n}\n",
        "T x",
        0,
        "unknown type name `T`",
    );
}

/// `is_null_texture(t)`: a bound WebGPU texture is never null.
const NULL_TEXTURE: &str = r#"
kernel void null_check(texture2d<float, access::read> t [[texture(0)]],
                       device float* out [[buffer(0)]],
                       uint i [[thread_position_in_grid]]) {
    out[i] = is_null_texture(t) ? -1.0f : t.read(uint2(i, 0)).r;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn is_null_texture_of_a_bound_texture_is_false() {
    use msl2wgsl::runner::{run_kernel_resources, Dispatch, Resources, TextureData};
    let Some(gpu) = common::gpu() else {
        return;
    };
    let texels: Vec<u8> = (0..8u8).flat_map(|i| [i * 30, 0, 0, 255]).collect();
    let resources = Resources {
        buffers: [(0, vec![0u8; 32])].into_iter().collect(),
        textures: [(
            0,
            TextureData::new_2d(wgpu::TextureFormat::Rgba8Unorm, 8, 1, texels),
        )]
        .into_iter()
        .collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let src = format!("{PRELUDE}{NULL_TEXTURE}");
    let out = run_kernel_resources(
        gpu,
        "t.metal",
        &src,
        &msl2wgsl::Options::default(),
        "null_check",
        &Dispatch::Threads {
            grid: [8, 1, 1],
            threadgroup: [8, 1, 1],
        },
        &resources,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = common::f32s(&out.buffers[&0]);
    for (i, g) in got.iter().enumerate() {
        let want = (i * 30) as f32 / 255.0;
        assert!((g - want).abs() < 1e-6, "texel {i}: {g} (want {want})");
    }
}

#[test]
fn is_null_texture_takes_a_texture() {
    assert_error(
        "kernel void k(device float* o [[buffer(0)]]) {\n    o[0] = is_null_texture(o[1]) ? 1.0f : 0.0f;\n}\n",
        "o[1]",
        0,
        "`is_null_texture` takes a texture",
    );
}

/// Vertex attributes of three 8- and 16-bit components, which no WebGPU
/// vertex format reads exactly: `half3` as `float16x4` (8 bytes, Metal's
/// `sizeof(half3)`) and `uchar3` as `uint8x4`.
const NARROW_ATTRIBUTES: &str = r#"
struct VertexIn {
    float2 position [[attribute(0)]];
    half3 color [[attribute(1)]];
    uchar3 weights [[attribute(2)]];
};
struct VertexOut {
    float4 position [[position]];
    float4 color;
};
vertex VertexOut narrow_vertex(VertexIn in [[stage_in]]) {
    VertexOut out;
    out.position = float4(in.position, 0.0, 1.0);
    uint total = uint(in.weights.x) + uint(in.weights.y) + uint(in.weights.z);
    out.color = float4(float3(in.color), float(total) / 255.0);
    return out;
}
fragment float4 narrow_fragment(VertexOut in [[stage_in]]) {
    return in.color;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn half3_and_uchar3_vertex_attributes() {
    use msl2wgsl::runner::{render_library, RenderResources};
    let Some(gpu) = common::gpu() else {
        return;
    };
    let options = msl2wgsl::Options {
        half: msl2wgsl::library::HalfMode::F32,
        ..msl2wgsl::Options::default()
    };
    let src = format!("{PRELUDE}{NARROW_ATTRIBUTES}");
    let lib = msl2wgsl::Library::from_source("t.metal", &src, &options)
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let attributes = &lib.function("narrow_vertex").unwrap().vertex_attributes;
    let formats: Vec<(&str, u32)> = attributes
        .iter()
        .map(|a| (a.format.as_str(), a.offset))
        .collect();
    assert_eq!(
        formats,
        [("float32x2", 0), ("float16x4", 8), ("uint8x4", 16)]
    );
    // A triangle covering the whole target, every vertex the same colour.
    let color = [0.25f32, 0.5, 0.75];
    let weights = [10u8, 20, 30];
    let mut bytes = Vec::new();
    for p in [[-1.0f32, -1.0], [3.0, -1.0], [-1.0, 3.0]] {
        bytes.extend(common::f32_bytes(&p));
        for c in color.iter().chain([&0.0]) {
            bytes.extend(half::f16::from_f32(*c).to_le_bytes());
        }
        bytes.extend(weights.iter().chain([&0]));
    }
    let mut r = RenderResources::new(4, 4, 3);
    r.vertex_buffers.insert(0, bytes);
    let img = &render_library(gpu, &lib, "narrow_vertex", "narrow_fragment", &r).unwrap()[0];
    let q = |v: f32| (v * 255.0).round() as u8;
    let total: u32 = weights.iter().map(|w| u32::from(*w)).sum();
    let want = [q(color[0]), q(color[1]), q(color[2]), total as u8];
    for px in img.data.chunks(4) {
        for c in 0..4 {
            assert!(px[c].abs_diff(want[c]) <= 1, "{px:?}, want {want:?}");
        }
    }
}

/// A vertex function returning a bare `float4` (its position) and a
/// fragment function reading it as `float4 p [[stage_in]]` (the window
/// position) and returning a scalar `half` (`[[color(0)]]` of a
/// one-component target).
const BARE_STAGES: &str = r#"
vertex float4 bare_vertex(uint vid [[vertex_id]]) {
    float2 corner = float2(float((vid << 1) & 2), float(vid & 2));
    return float4(corner * 2.0 - 1.0, 0.0, 1.0);
}
fragment half bare_fragment(float4 position [[stage_in]]) {
    return half(position.x / 128.0 + position.y / 16.0);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn bare_position_stage_in_and_scalar_fragment_result() {
    use msl2wgsl::runner::{render_library, RenderResources, RenderTarget};
    let Some(gpu) = common::gpu() else {
        return;
    };
    let options = msl2wgsl::Options {
        half: msl2wgsl::library::HalfMode::F32,
        ..msl2wgsl::Options::default()
    };
    let src = format!("{PRELUDE}{BARE_STAGES}");
    let lib = msl2wgsl::Library::from_source("t.metal", &src, &options)
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let mut r = RenderResources::new(8, 8, 3);
    r.targets = vec![RenderTarget {
        // One component, renderable on every backend (GL has no
        // renderable R32Float without an extension).
        format: wgpu::TextureFormat::R8Unorm,
        clear: [0.0; 4],
    }];
    let img = &render_library(gpu, &lib, "bare_vertex", "bare_fragment", &r).unwrap()[0];
    for y in 0..8 {
        for x in 0..8 {
            // Pixel centres; every value is exact in half, and the 8-bit
            // target rounds it to the nearest of 255 steps.
            let want = ((x as f32 + 0.5) / 128.0 + (y as f32 + 0.5) / 16.0) * 255.0;
            let got = f32::from(img.data[y * 8 + x]);
            assert!(
                (got - want).abs() <= 0.5,
                "pixel ({x}, {y}): {got} against {want}"
            );
        }
    }
}

/// `using namespace` in a function body, `make_scalar<T>::type` in an
/// `enable_if` default, and `simd::` library calls (headers shared with C++).
const LOOKUP_FORMS: &str = r#"
namespace lib {
namespace detail {
inline float bias() { return 0.25f; }
}
template <typename T, typename _E = typename enable_if<is_floating_point<typename make_scalar<T>::type>::value>::type>
T half_of(T v) { return v * typename make_scalar<T>::type(0.5); }
}
kernel void lookups(device float* out [[buffer(0)]],
                    uint i [[thread_position_in_grid]]) {
    using namespace lib::detail;
    float2 v = lib::half_of(float2(float(i), 2.0f));
    out[i] = simd::length(v) + simd::max(bias(), 0.0f) + make_scalar_t<float3>(1);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn function_scope_using_namespace_make_scalar_and_simd_calls() {
    let Some(out) = run(
        LOOKUP_FORMS,
        "lookups",
        16,
        vec![(0, common::f32_bytes(&[0.0; 16]))],
    ) else {
        return;
    };
    let got = common::f32s(&out[&0]);
    for (i, g) in got.iter().enumerate() {
        let (x, y) = (i as f32 * 0.5, 1.0f32);
        let want = (x * x + y * y).sqrt() + 0.25 + 1.0;
        assert!((g - want).abs() < 1e-5, "{i}: {g}, want {want}");
    }
}

#[test]
fn framebuffer_fetch_struct_argument_is_refused() {
    assert_error(
        "struct GBuffer { half4 albedo [[color(1)]]; float depth [[color(2)]]; };\nstruct In { float4 position [[position]]; };\nfragment half4 light(In in [[stage_in]], GBuffer gbuffer) {\n    return gbuffer.albedo * half(gbuffer.depth);\n}\n",
        "GBuffer gbuffer",
        0,
        "`gbuffer` reads the render targets in the fragment function (framebuffer fetch",
    );
}

/// `m.columns[i]` (the matrix's column array), and C casts to the
/// fixed-width names `(uint32_t)x`, `(int16_t)y` before a name or a call.
const MATRIX_COLUMNS_AND_CASTS: &str = r#"
kernel void columns(device const float4x4* m [[buffer(0)]],
                    device float* out [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
    float4x4 t = m[0];
    t.columns[1][2] = 100.0f;
    float3 v = t.columns[i % 4].xyz;
    uint32_t k = (uint32_t)metal::ceil(v.y) + (uint32_t)i;
    int16_t s = (int16_t)v.x;
    out[i] = float(k) + float(s) + t.columns[1][2];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn matrix_columns_member_and_fixed_width_casts() {
    let m: Vec<f32> = (0..16).map(|k| k as f32 * 1.25 + 0.5).collect();
    let Some(out) = run(
        MATRIX_COLUMNS_AND_CASTS,
        "columns",
        8,
        vec![
            (0, common::f32_bytes(&m)),
            (1, common::f32_bytes(&[0.0; 8])),
        ],
    ) else {
        return;
    };
    let mut t = m.clone();
    t[4 + 2] = 100.0;
    let want: Vec<f32> = (0..8)
        .map(|i| {
            let col = &t[(i % 4) * 4..(i % 4) * 4 + 4];
            let k = col[1].ceil() as u32 + i as u32;
            let s = col[0] as i16;
            k as f32 + f32::from(s) + 100.0
        })
        .collect();
    assert_eq!(common::f32s(&out[&1]), want);
}

/// Range-based `for` over arrays: a program-scope constant table's row
/// (MLX's `for (auto r : rotations[i % 2])`), elements by reference, and
/// nested loops.
const RANGE_FOR: &str = r#"
constant constexpr uint rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
kernel void ranges(device uint* out [[buffer(0)]],
                   uint i [[thread_position_in_grid]]) {
    uint x = i;
    for (int round = 0; round < 3; ++round) {
        for (auto r : rotations[round % 2]) {
            x = (x << r) | (x >> (32 - r));
            x ^= r + i;
        }
    }
    uint v[3] = {i, i + 1, i + 2};
    for (thread auto& e : v) {
        e *= 2;
    }
    uint total = 0;
    for (uint a : v) {
        for (const uint b : v) {
            total += a * b;
        }
    }
    out[i] = x + total;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn range_based_for_over_arrays() {
    let Some(out) = run(RANGE_FOR, "ranges", 32, vec![(0, vec![0; 128])]) else {
        return;
    };
    let rotations = [[13u32, 15, 26, 6], [17, 29, 16, 24]];
    let want: Vec<u32> = (0..32u32)
        .map(|i| {
            let mut x = i;
            for round in 0..3 {
                for r in rotations[round % 2] {
                    x = x.rotate_left(r);
                    x ^= r + i;
                }
            }
            let v = [2 * i, 2 * (i + 1), 2 * (i + 2)];
            let total: u32 = v.iter().map(|a| v.iter().map(|b| a * b).sum::<u32>()).sum();
            x.wrapping_add(total)
        })
        .collect();
    assert_eq!(common::u32s(&out[&0]), want);
}

#[test]
fn range_based_for_needs_an_array() {
    assert_error(
        "kernel void k(device float* o [[buffer(0)]]) {\n    float4 v = 1.0f;\n    for (float x : v) { o[0] += x; }\n}\n",
        "v) {",
        0,
        "range-based `for` is supported over arrays only, not `float4`",
    );
}

/// `sampler s;` in a function: Metal's default sampler (normalized
/// coordinates, `clamp_to_edge`, `nearest`).
const DEFAULT_SAMPLER: &str = r#"
kernel void default_sampler(texture2d<float> t [[texture(0)]],
                            device float* out [[buffer(0)]],
                            uint i [[thread_position_in_grid]]) {
    sampler s;
    float u = float(i) * 0.3f - 0.35f;
    out[i] = t.sample(s, float2(u, 0.5f), level(0)).r;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn default_constructed_sampler() {
    use msl2wgsl::runner::{run_kernel_resources, Dispatch, Resources, TextureData};
    let Some(gpu) = common::gpu() else {
        return;
    };
    let texels = vec![51u8, 0, 0, 255, 204, 0, 0, 255];
    let resources = Resources {
        buffers: [(0, vec![0u8; 32])].into_iter().collect(),
        textures: [(
            0,
            TextureData::new_2d(wgpu::TextureFormat::Rgba8Unorm, 2, 1, texels),
        )]
        .into_iter()
        .collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let src = format!("{PRELUDE}{DEFAULT_SAMPLER}");
    let out = run_kernel_resources(
        gpu,
        "t.metal",
        &src,
        &msl2wgsl::Options::default(),
        "default_sampler",
        &Dispatch::Threads {
            grid: [8, 1, 1],
            threadgroup: [8, 1, 1],
        },
        &resources,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = common::f32s(&out.buffers[&0]);
    for (i, g) in got.iter().enumerate() {
        // Nearest texel of u, clamped to the edge texels.
        let u = i as f32 * 0.3 - 0.35;
        let texel = ((u * 2.0).floor() as i32).clamp(0, 1);
        let want = [51.0f32, 204.0][texel as usize] / 255.0;
        assert!((g - want).abs() < 1e-6, "u = {u}: {g}, want {want}");
    }
}

/// Spaces around `::` (`filter:: linear`, `metal :: min`), as C++ allows.
const SPACED_SCOPES: &str = r#"
namespace lib { inline float twice(float x) { return 2.0f * x; } }
kernel void spaced(texture2d<float> t [[texture(0)]],
                   device float* out [[buffer(0)]],
                   uint i [[thread_position_in_grid]]) {
    constexpr sampler s(coord::normalized, address:: clamp_to_edge, filter:: nearest);
    float u = (float(i) + 0.5f) / 2.0f;
    out[i] = lib :: twice(metal :: min(t.sample(s, float2(u, 0.5f), level(0)).r, 0.5f));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn spaces_around_scope_operators() {
    use msl2wgsl::runner::{run_kernel_resources, Dispatch, Resources, TextureData};
    let Some(gpu) = common::gpu() else {
        return;
    };
    let texels = vec![51u8, 0, 0, 255, 204, 0, 0, 255];
    let resources = Resources {
        buffers: [(0, vec![0u8; 8])].into_iter().collect(),
        textures: [(
            0,
            TextureData::new_2d(wgpu::TextureFormat::Rgba8Unorm, 2, 1, texels),
        )]
        .into_iter()
        .collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let src = format!("{PRELUDE}{SPACED_SCOPES}");
    let out = run_kernel_resources(
        gpu,
        "t.metal",
        &src,
        &msl2wgsl::Options::default(),
        "spaced",
        &Dispatch::Threads {
            grid: [2, 1, 1],
            threadgroup: [2, 1, 1],
        },
        &resources,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = common::f32s(&out.buffers[&0]);
    let want = [2.0 * (51.0f32 / 255.0), 2.0 * 0.5];
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{got:?}, want {want:?}");
    }
}

/// `float3(color)` of a `float4` (Apple's samples write it): the leading
/// components, converted as any vector constructor converts.
const TRUNCATING_CONSTRUCTORS: &str = r#"
kernel void trunc(device float4* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float4 c = o[i];
  float3 a = float3(c) * 2.0f;
  int2 b = int2(c);
  half2 h = half2(float3(c));
  o[i] = float4(a.xy + float2(h), a.z, float(b.x + b.y));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn vector_constructors_of_longer_vectors_take_the_leading_components() {
    let input: Vec<f32> = (0..64).map(|v| v as f32 * 0.75 - 20.0).collect();
    let Some(out) = run(
        TRUNCATING_CONSTRUCTORS,
        "trunc",
        16,
        vec![(0, common::f32_bytes(&input))],
    ) else {
        return;
    };
    let got = common::f32s(&out[&0]);
    for (i, c) in input.chunks(4).enumerate() {
        // Every input is a multiple of 0.25, exact in half; int() truncates.
        let want = [
            c[0] * 2.0 + c[0],
            c[1] * 2.0 + c[1],
            c[2] * 2.0,
            (c[0] as i32 + c[1] as i32) as f32,
        ];
        assert_eq!(&got[i * 4..i * 4 + 4], &want, "[{i}]");
    }
}

/// References that are no WGSL pointer: `constant G& g = table[j]` of a
/// program-scope `constant` array (a WGSL `const`, read through a copy),
/// and `device H& h = buf[i]` of a buffer of `half` data (a word view,
/// written through the reference).
const REFERENCE_FORMS: &str = r#"
struct G { float w; float o; };
constant G taps[3] = { {0.25f, -1.0f}, {0.5f, 0.0f}, {0.25f, 1.0f} };
constant uint kTaps = 3;
struct H { half2 edge; half inside; half pad; };
kernel void refs(device float* o [[buffer(0)]], device H* h [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
  float t = 0;
  for (uint j = 0; j < ::kTaps; ++j) {
    constant G& g = ::taps[j];
    t += g.w * (g.o + float(i));
  }
  o[i] = t;
  device H& e = h[i];
  e.edge = half2(float(i), 0.5f);
  e.inside = e.edge.x + 1.0h;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn references_to_constant_tables_and_half_buffers_match_cpu_reference() {
    let Some(out) = run(
        REFERENCE_FORMS,
        "refs",
        16,
        vec![(0, vec![0u8; 64]), (1, vec![0xFFu8; 16 * 8])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&0]);
    for (i, g) in got.iter().enumerate() {
        let x = i as f32;
        let want = 0.25 * (x - 1.0) + 0.5 * x + 0.25 * (x + 1.0);
        assert_eq!(*g, want, "o[{i}]");
    }
    let half = |bits: u16| half::f16::from_bits(bits).to_f32();
    for (i, e) in out[&1].chunks(8).enumerate() {
        let word = |k: usize| u16::from_le_bytes([e[k], e[k + 1]]);
        assert_eq!(half(word(0)), i as f32, "edge.x[{i}]");
        assert_eq!(half(word(2)), 0.5, "edge.y[{i}]");
        assert_eq!(half(word(4)), i as f32 + 1.0, "inside[{i}]");
        // The padding keeps its bytes: only the members are written.
        assert_eq!(word(6), 0xFFFF, "pad[{i}]");
    }
}
