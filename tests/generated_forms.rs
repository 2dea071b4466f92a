//! Forms that machine-generated MSL uses (SPIRV-Cross's and Tint's output,
//! naga's MSL backend; issue #18): `__restrict`, references to arrays,
//! references to textures, `(void)` casts and `void` conditionals, casts to
//! Metal's type templates, functional casts to `unsigned`, threadgroup
//! references with and without `[[threadgroup(n)]]`. Each runs on the GPU
//! against a CPU reference, or is checked for the diagnostic it must give.
// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{first_code, translate_body, PRELUDE};
use msl2wgsl::diagnostics::Code;

#[cfg(feature = "runner")]
use common::source::run_body as run;

/// SPIRV-Cross's `spvArrayCopy*` shape: references to arrays, deduced
/// template arguments, writes through the reference reaching the caller's
/// array, and a two-dimensional one.
const ARRAY_REFERENCES: &str = r#"
template<typename T, uint N>
inline void copy_array(thread T (&dst)[N], thread const T (&src)[N]) {
    for (uint i = 0; i < N; i++) { dst[i] = src[i]; }
}
float sum4(thread const float (&a)[4]) { return a[0] + a[1] + a[2] + a[3]; }
void fill(thread int (&m)[2][3], int base) {
    for (int r = 0; r < 2; r++) for (int c = 0; c < 3; c++) m[r][c] = base + 10 * r + c;
}
kernel void array_refs(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float a[4] = {1.0f, 2.0f, float(i), 0.5f};
    float b[4];
    copy_array(b, a);
    int m[2][3];
    fill(m, int(i));
    out[i] = sum4(b) + float(m[1][2]);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn references_to_arrays_alias_the_callers_array() {
    let n = 32u32;
    let Some(out) = run(
        ARRAY_REFERENCES,
        "array_refs",
        (n, 16),
        vec![(0, vec![0; 4 * n as usize])],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..n)
        .map(|i| (1.0 + 2.0 + i as f32 + 0.5) + (i as i32 + 10 + 2) as f32)
        .collect();
    assert_eq!(common::f32s(&out[&0]), want);
}

/// `__restrict` after `*` and `&` and before the name, as SPIRV-Cross
/// writes it on buffer arguments and helper parameters.
const RESTRICT: &str = r#"
struct Params { float scale; float bias; };
void accumulate(thread float& __restrict acc, device const float* __restrict__ in, uint i) {
    acc += in[i];
}
kernel void restricted(device const float* __restrict in [[buffer(0)]],
                       device float* __restrict out [[buffer(1)]],
                       constant Params& __restrict p [[buffer(2)]],
                       uint i [[thread_position_in_grid]]) {
    float acc = p.bias;
    accumulate(acc, in, i);
    out[i] = acc * p.scale;
}
"#;

#[test]
#[cfg(feature = "runner")]
fn restrict_qualifiers_change_nothing() {
    let n = 16u32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.75 - 3.0).collect();
    let Some(out) = run(
        RESTRICT,
        "restricted",
        (n, 16),
        vec![
            (0, common::f32_bytes(&input)),
            (1, vec![0; 4 * n as usize]),
            (2, common::f32_bytes(&[2.0, 0.25])),
        ],
    ) else {
        return;
    };
    let want: Vec<f32> = input.iter().map(|x| (0.25 + x) * 2.0).collect();
    assert_eq!(common::f32s(&out[&1]), want);
}

/// `(void)x` discards a value; `c ? f() : (void)0` as a statement runs
/// `f()` only where `c` holds (SPIRV-Cross's helper-invocation guards).
const VOID_FORMS: &str = r#"
void store(device uint* out, uint i, uint v) { out[i] = v; }
kernel void void_forms(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    (void)i;
    (void)0;
    out[i] = 1u;
    (i % 3u == 0u) ? store(out, i, 100u + i) : (void)0;
    i % 3u == 1u ? (void)0 : (void)(out[i] += 7u);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn void_casts_and_void_conditionals() {
    let n = 24u32;
    let Some(out) = run(
        VOID_FORMS,
        "void_forms",
        (n, 8),
        vec![(0, vec![0; 4 * n as usize])],
    ) else {
        return;
    };
    let want: Vec<u32> = (0..n)
        .map(|i| {
            let v = if i % 3 == 0 { 100 + i } else { 1 };
            if i % 3 == 1 {
                v
            } else {
                v + 7
            }
        })
        .collect();
    assert_eq!(common::u32s(&out[&0]), want);
}

#[test]
fn a_conditional_with_one_void_operand_needs_two() {
    let body = "void f() {}\nkernel void k(device uint* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { uint x = i > 1u ? (f(), (void)0) : o[i]; o[i] = x; }\n";
    assert_eq!(first_code(body), Code::WrongKind);
}

/// C-style casts to `vec<T, N>` (SPIRV-Cross's subgroup helpers), and
/// functional casts to `unsigned` and `signed` (naga's bounds checks).
const TYPE_CASTS: &str = r#"
template<int N>
vec<int, N> truncate_all(vec<float, N> v) { return (vec<int, N>)v; }
kernel void type_casts(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float4 v = float4(float(i) * 1.5f, -2.75f, 3.5f, 0.0f);
    int4 t = truncate_all(v);
    vec<float, 2> w = (vec<float, 2>)int2(t.xy);
    uint u = unsigned(signed(i) - 3);
    out[i] = t.x + t.y + int(w.x) + int(u % 5u) + signed(unsigned(2));
}
"#;

#[test]
#[cfg(feature = "runner")]
fn casts_to_type_templates_and_unsigned() {
    let n = 16u32;
    let Some(out) = run(
        TYPE_CASTS,
        "type_casts",
        (n, 16),
        vec![(0, vec![0; 4 * n as usize])],
    ) else {
        return;
    };
    let want: Vec<i32> = (0..n)
        .map(|i| {
            let x = (i as f32 * 1.5) as i32;
            let u = (i as i32 - 3) as u32;
            x + -2 + x + (u % 5) as i32 + 2
        })
        .collect();
    let got: Vec<i32> = common::u32s(&out[&0]).iter().map(|&w| w as i32).collect();
    assert_eq!(got, want);
}

/// naga's MSL passes each `var<workgroup>` as `threadgroup T& name` with
/// no attribute; with `[[threadgroup(n)]]` a reference is one object too.
/// Unattributed ones take the first indices the others leave free.
const THREADGROUP_REFERENCES: &str = r#"
struct Tile { float v[8]; };
kernel void tg_refs(device float* out [[buffer(0)]],
                    threadgroup float& total,
                    threadgroup Tile& tile [[threadgroup(0)]],
                    uint li [[thread_index_in_threadgroup]],
                    uint gi [[thread_position_in_grid]]) {
    tile.v[li] = float(gi) * 0.5f;
    if (li == 0) { total = 0.0f; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (li == 0) { for (uint k = 0; k < 8; k++) { total += tile.v[k]; } }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gi] = total - tile.v[7 - li];
}
"#;

#[test]
fn unattributed_threadgroup_references_take_free_indices() {
    use msl2wgsl::reflect::ArgumentKind;
    let lib = translate_body(THREADGROUP_REFERENCES);
    let f = lib.function("tg_refs").expect("tg_refs");
    let index_of = |name: &str| {
        let a = f.arguments.iter().find(|a| a.name == name).unwrap();
        assert_eq!(a.kind, ArgumentKind::ThreadgroupMemory, "{name}");
        a.index
    };
    assert_eq!((index_of("tile"), index_of("total")), (0, 1));
}

#[test]
#[cfg(feature = "runner")]
fn threadgroup_references_share_one_object() {
    let n = 32u32;
    let Some(out) = run(
        THREADGROUP_REFERENCES,
        "tg_refs",
        (n, 8),
        vec![(0, vec![0; 4 * n as usize])],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..n)
        .map(|gi| {
            let group = gi / 8 * 8;
            let total: f32 = (group..group + 8).map(|g| g as f32 * 0.5).sum();
            total - (group + 7 - gi % 8) as f32 * 0.5
        })
        .collect();
    assert_eq!(common::f32s(&out[&0]), want);
}

#[test]
fn threadgroup_references_outside_kernels_still_need_a_kernel() {
    let body = "fragment float4 f(threadgroup float& x) { return float4(x); }\n";
    assert!(msl2wgsl::Library::from_source(
        "t.metal",
        &format!("{PRELUDE}{body}"),
        &msl2wgsl::Options::default()
    )
    .is_err());
}

/// A reference to a texture is the texture: helper parameters
/// (`thread texture2d<float>&`, `const thread ... &`) and Tint's
/// `const_cast<T thread &>(t)`.
const TEXTURE_REFERENCES: &str = r#"
float fetch(thread texture2d<float>& t, uint2 c) { return t.read(c).x; }
float fetch_const(const thread texture2d<float>& t, uint2 c) { return t.read(c).x; }
kernel void tex_refs(texture2d<float> tex [[texture(0)]], device float* out [[buffer(0)]],
                     uint i [[thread_position_in_grid]]) {
    uint2 c = uint2(i % 4u, i / 4u);
    float a = fetch(tex, c);
    float b = fetch_const(tex, uint2(3u, 3u) - c);
    float d = const_cast<texture2d<float> thread &>(tex).read(c).x;
    out[i] = a + 10.0f * b + 100.0f * d;
}
"#;

#[test]
#[cfg(feature = "runner")]
fn references_to_textures_pass_the_texture() {
    use msl2wgsl::runner::{run_kernel_resources, Dispatch, Resources, TextureData};
    let Some(gpu) = common::gpu() else { return };
    let texels: Vec<f32> = (0..16).map(|k| k as f32 * 0.25 + 1.0).collect();
    let resources = Resources {
        buffers: [(0, vec![0u8; 64])].into_iter().collect(),
        textures: [(
            0,
            TextureData::new_2d(
                wgpu::TextureFormat::R32Float,
                4,
                4,
                common::f32_bytes(&texels),
            ),
        )]
        .into_iter()
        .collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let dispatch = Dispatch::Threads {
        grid: [16, 1, 1],
        threadgroup: [16, 1, 1],
    };
    let src = format!("{PRELUDE}{TEXTURE_REFERENCES}");
    let out = run_kernel_resources(
        gpu,
        "t.metal",
        &src,
        &msl2wgsl::Options::default(),
        "tex_refs",
        &dispatch,
        &resources,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<f32> = (0..16usize)
        .map(|i| {
            let (x, y) = (i % 4, i / 4);
            let mirrored = (3 - y) * 4 + (3 - x);
            texels[i] + 10.0 * texels[mirrored] + 100.0 * texels[i]
        })
        .collect();
    assert_eq!(common::f32s(&out.buffers[&0]), want);
}

#[test]
fn pointers_to_textures_are_still_refused() {
    let body = "void f(thread texture2d<float>* t) {}\nkernel void k() {}\n";
    assert_eq!(first_code(body), Code::InvalidType);
}

#[test]
fn a_texture_converts_only_to_its_own_type() {
    let body =
        "kernel void k(texture2d<float> t [[texture(0)]], device float* o [[buffer(0)]]) {\n\
        o[0] = const_cast<texture2d<uint> thread &>(t).read(uint2(0)).x; }\n";
    assert_eq!(first_code(body), Code::InvalidConversion);
}

/// 64-bit values where the translation works in 32-bit words were
/// internal errors, then refused on WebGPU; now WebGPU holds them in 32
/// bits (`tests/wide_integers.rs`), with the one W0411 warning.
#[test]
fn sixty_four_bit_values_in_word_views_translate_on_webgpu() {
    let bits =
        "kernel void k(device uint2* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n\
        o[i] = as_type<uint2>(as_type<ulong>(uint2(i, 1u))); }\n";
    let bytes = "struct S { uchar a[4]; ulong b[4]; };\n\
        kernel void k(device S& s [[buffer(0)]], device uint* o [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n\
        o[i] = uint(s.b[i]); s.b[i] = ulong(i); }\n";
    for body in [bits, bytes] {
        let library = translate_body(body);
        let codes: Vec<Code> = library
            .warning_diagnostics()
            .0
            .iter()
            .map(|d| d.code())
            .collect();
        assert_eq!(codes, [Code::WideIntegerNarrowed], "{body}");
    }
}

/// SPIRV-Cross's integer `sign`: a user template kept to integers by
/// `enable_if<is_integral<T>::value>` (true for integer vectors in Metal)
/// beside `metal::sign`, which the float calls still reach.
const INTEGER_SIGN: &str = r#"
template<typename T, typename E = typename enable_if<is_integral<T>::value>::type>
inline T sign(T x) { return select(select(select(x, T(0), x == T(0)), T(1), x > T(0)), T(-1), x < T(0)); }
kernel void signs(device const int4* in [[buffer(0)]], device int4* out [[buffer(1)]],
                  device float4* fout [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    out[i] = sign(in[i]) + int4(sign(in[i].w));
    fout[i] = sign(float4(in[i]) * 0.5f);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn user_templates_named_like_a_library_function_leave_it_the_rest() {
    let n = 8u32;
    let ints: Vec<i32> = (0..4 * n as i32).map(|k| (k * 7) % 11 - 5).collect();
    let bytes: Vec<u8> = ints.iter().flat_map(|v| v.to_le_bytes()).collect();
    let Some(out) = run(
        INTEGER_SIGN,
        "signs",
        (n, 8),
        vec![
            (0, bytes),
            (1, vec![0; 16 * n as usize]),
            (2, vec![0; 16 * n as usize]),
        ],
    ) else {
        return;
    };
    let got: Vec<i32> = common::u32s(&out[&1]).iter().map(|&w| w as i32).collect();
    let want: Vec<i32> = ints
        .chunks(4)
        .flat_map(|v| v.iter().map(move |x| x.signum() + v[3].signum()))
        .collect();
    assert_eq!(got, want);
    let want_f: Vec<f32> = ints
        .iter()
        .map(|&x| (x as f32 * 0.5).signum() * (x != 0) as i32 as f32)
        .collect();
    assert_eq!(common::f32s(&out[&2]), want_f);
}

#[test]
fn metal_classification_traits_hold_for_vectors() {
    translate_body(
        "static_assert(is_integral_v<int4> && is_integral<ushort2>::value, \"\");\n\
         static_assert(is_floating_point_v<half3> && is_signed_v<float2> && is_unsigned_v<uint4>, \"\");\n\
         static_assert(is_arithmetic_v<char2> && is_scalar_v<uint> && !is_scalar_v<float2>, \"\");\n\
         static_assert(!is_integral_v<float4> && !is_floating_point_v<int2>, \"\");\n\
         kernel void k(device uint* o [[buffer(0)]]) { o[0] = 1u; }\n",
    );
}

/// SPIRV-Cross's stores into std140 arrays of padded vectors:
/// `(device float2&)a[i] = v` writes the first components of a vector
/// lvalue, in buffers (plain and byte-addressed) and in thread memory.
const VECTOR_PREFIX_REFERENCES: &str = r#"
struct Std140 { float4 v[4]; uint4 u[2]; };
struct Mixed { uchar tag; float4 w; };
kernel void prefix_refs(device Std140& s [[buffer(0)]], device Mixed& m [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
    if (i != 0) { return; }
    (device float2&)s.v[1] = float2(5.0f, 6.0f);
    (device float&)s.v[2] = 7.0f;
    (device float3&)s.v[3] = float3(8.0f, 9.0f, 10.0f);
    uint4 t = s.u[0];
    (thread uint&)t = 40u;
    (device uint&)s.u[1] = t.x + t.y;
    float2 r = reinterpret_cast<device const float2&>(s.v[0]);
    s.v[0].w = r.x + r.y;
    (device float2&)m.w = float2(r.y, 3.0f);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn references_to_the_first_components_of_a_vector() {
    let floats: Vec<f32> = (0..16).map(|k| k as f32 + 0.5).collect();
    let uints: Vec<u32> = (100..108).collect();
    let mut s = common::f32_bytes(&floats);
    s.extend(uints.iter().flat_map(|u| u.to_le_bytes()));
    let mut m = vec![9u8; 16];
    m.extend(common::f32_bytes(&[-1.0, -2.0, -3.0, -4.0]));
    let Some(out) = run(
        VECTOR_PREFIX_REFERENCES,
        "prefix_refs",
        (1, 1),
        vec![(0, s), (1, m)],
    ) else {
        return;
    };
    let mut want_f = floats.clone();
    want_f[4..6].copy_from_slice(&[5.0, 6.0]);
    want_f[8] = 7.0;
    want_f[12..15].copy_from_slice(&[8.0, 9.0, 10.0]);
    want_f[3] = floats[0] + floats[1];
    let mut want_u = uints.clone();
    want_u[4] = 40 + uints[1];
    let got = &out[&0];
    assert_eq!(common::f32s(&got[..64]), want_f);
    assert_eq!(common::u32s(&got[64..]), want_u);
    let got_m = &out[&1];
    assert_eq!(got_m[0], 9, "the byte beside the vector is kept");
    assert_eq!(common::f32s(&got_m[16..]), [floats[1], 3.0, -3.0, -4.0]);
}

/// With wgpu's 64-bit integers a `ulong` in a byte-addressed buffer is
/// refused as not handled yet (its bytes are read as 32-bit words).
#[test]
fn sixty_four_bit_values_in_word_views_on_wgpu_are_not_supported_yet() {
    let options = msl2wgsl::Options {
        target: msl2wgsl::Target::Wgpu,
        ..Default::default()
    };
    let body = "struct S { uchar a[4]; ulong b[4]; };\n\
        kernel void k(device S& s [[buffer(0)]], device uint* o [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n\
        o[i] = uint(s.b[i]); }\n";
    let src = format!("{PRELUDE}{body}");
    let Err(f) = msl2wgsl::Library::from_source("t.metal", &src, &options) else {
        panic!("expected an error");
    };
    assert_eq!(
        f.diagnostics.0[0].code(),
        Code::Unsupported,
        "{}",
        f.render()
    );
}

/// The walks that find how a function uses a name (here: which samplers
/// compare, so that WGSL declares them `sampler_comparison`) look inside
/// range-based `for` bodies too.
#[test]
fn a_comparison_inside_a_range_for_makes_a_comparison_sampler() {
    let lib = translate_body(
        "fragment float4 f(depth2d<float> d [[texture(0)]], sampler s [[sampler(0)]]) {\n\
           float2 uvs[2] = {float2(0.25f), float2(0.75f)};\n\
           float t = 0.0f;\n\
           for (float2 uv : uvs) { t += d.sample_compare(s, uv, 0.5f); }\n\
           return float4(t);\n\
         }\n",
    );
    assert!(lib.wgsl().contains("sampler_comparison"), "{}", lib.wgsl());
}
