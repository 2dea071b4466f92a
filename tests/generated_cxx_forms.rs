//! C++ forms of machine-generated MSL (SPIRV-Cross's and Tint's output,
//! issue #18) beyond `generated_forms.rs`: variadic gather wrappers whose
//! return type is `decltype(declval<Tex>().gather(..))`, `component`
//! parameters, `METAL_CONST_ARG`, and one overload per address space of a
//! texture reference. Each runs on the GPU against a CPU reference, or is
//! checked for the diagnostic it must give.
// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::translate_body;
#[cfg(feature = "runner")]
use common::source::PRELUDE;

/// SPIRV-Cross's swizzled gather in the shape it writes: an alias template
/// naming `gather`'s return type through `declval`, a variadic wrapper
/// whose trailing pack is forwarded before the component, a `component`
/// parameter under `METAL_CONST_ARG`, `switch`es over it and over the
/// swizzle, and the same wrapper for `device` and `thread` references
/// (the `thread` one is the one a parameter binds to).
const GATHER_WRAPPERS: &str = r#"
enum class swz : uint { none = 0, zero, one, red, green, blue, alpha };

template<typename Tex, typename... Tp>
using GatherReturn = decltype(declval<Tex>().gather(declval<sampler>(), declval<Tp>()...));

template<typename Tex, typename... Ts>
inline GatherReturn<Tex, Ts...> gather_swizzled(const thread Tex& t, sampler s, uint sw, component c, Ts... params) METAL_CONST_ARG(c)
{
    if (sw)
    {
        switch (swz((sw >> (uint(c) * 8)) & 0xFF))
        {
            case swz::none: break;
            case swz::zero: return GatherReturn<Tex, Ts...>(0, 0, 0, 0);
            case swz::one: return GatherReturn<Tex, Ts...>(1, 1, 1, 1);
            case swz::red: return t.gather(s, params..., component::x);
            case swz::green: return t.gather(s, params..., component::y);
            case swz::blue: return t.gather(s, params..., component::z);
            case swz::alpha: return t.gather(s, params..., component::w);
        }
    }
    switch (c)
    {
        case component::x: return t.gather(s, params..., component::x);
        case component::y: return t.gather(s, params..., component::y);
        case component::z: return t.gather(s, params..., component::z);
        case component::w: return t.gather(s, params..., component::w);
    }
}

template<typename Tex, typename... Ts>
inline GatherReturn<Tex, Ts...> gather_swizzled(const device Tex& t, sampler s, uint sw, component c, Ts... params) METAL_CONST_ARG(c)
{
    return GatherReturn<Tex, Ts...>(-1.0f);
}

kernel void gathers(texture2d<float> t [[texture(0)]], constant uint& sw [[buffer(0)]],
                    device float4* out [[buffer(1)]], uint i [[thread_position_in_grid]])
{
    constexpr sampler near(filter::nearest, address::clamp_to_edge);
    float2 uv = float2(float(i % 3u + 1u), float(i / 3u + 1u)) / 4.0f;
    out[3 * i] = gather_swizzled(t, near, 0u, component::y, uv);
    out[3 * i + 1] = gather_swizzled(t, near, sw, component::x, uv, int2(1, 0));
    out[3 * i + 2] = gather_swizzled(t, near, sw, component::z, uv) + gather_swizzled(t, near, sw, component::y, uv);
}
"#;

/// The 4x4 RGBA8 texture's byte of channel `c` at (`x`, `y`).
fn texel_byte(x: i32, y: i32, c: usize) -> u8 {
    ((y * 4 + x) as usize * 13 + c * 61 + 7) as u8
}

/// `gather` of channel `c` at the footprint whose top-left texel is
/// (`x0`, `y0`), clamped to the edge: Metal's order (i0, j1), (i1, j1),
/// (i1, j0), (i0, j0).
fn gather(x0: i32, y0: i32, c: usize) -> [f32; 4] {
    let at = |x: i32, y: i32| texel_byte(x.clamp(0, 3), y.clamp(0, 3), c) as f32 / 255.0;
    [
        at(x0, y0 + 1),
        at(x0 + 1, y0 + 1),
        at(x0 + 1, y0),
        at(x0, y0),
    ]
}

#[test]
#[cfg(feature = "runner")]
fn variadic_gather_wrappers_forward_their_pack_and_component() {
    use msl2wgsl::runner::{run_kernel_resources, Dispatch, Resources, TextureData};
    let Some(gpu) = common::gpu() else { return };
    let bytes: Vec<u8> = (0..16)
        .flat_map(|k| (0..4).map(move |c| texel_byte(k % 4, k / 4, c)))
        .collect();
    // x -> green, y -> zero, z -> alpha, w -> one.
    let sw: u32 = 4 | (1 << 8) | (6 << 16) | (2 << 24);
    let resources = Resources {
        buffers: [(0, sw.to_le_bytes().to_vec()), (1, vec![0u8; 9 * 3 * 16])]
            .into_iter()
            .collect(),
        textures: [(
            0,
            TextureData::new_2d(wgpu::TextureFormat::Rgba8Unorm, 4, 4, bytes),
        )]
        .into_iter()
        .collect(),
        samplers: Default::default(),
        constants: Default::default(),
        argument_buffers: Default::default(),
        stage_in_region: None,
    };
    let dispatch = Dispatch::Threads {
        grid: [9, 1, 1],
        threadgroup: [9, 1, 1],
    };
    let src = format!("{PRELUDE}{GATHER_WRAPPERS}");
    let out = run_kernel_resources(
        gpu,
        "t.metal",
        &src,
        &msl2wgsl::Options::default(),
        "gathers",
        &dispatch,
        &resources,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = common::f32s(&out.buffers[&1]);
    for i in 0..9i32 {
        // uv at the corner between texels x0 and x0 + 1: the footprint
        // starts at (x0, y0).
        let (x0, y0) = (i % 3, i / 3);
        let plain = gather(x0, y0, 1);
        let offset_green = gather(x0 + 1, y0, 1);
        let alpha = gather(x0, y0, 3);
        let wants = [plain, offset_green, alpha];
        for (k, want) in wants.iter().enumerate() {
            for c in 0..4 {
                let g = got[((3 * i as usize) + k) * 4 + c];
                assert!(
                    (g - want[c]).abs() <= 1e-6,
                    "thread {i} result {k} channel {c}: got {g}, want {}",
                    want[c]
                );
            }
        }
    }
}

#[test]
fn declval_names_a_texture_member_functions_type() {
    // `a` is a `float` (a depth texture samples one value) and `b` a
    // `half4`: either type wrong fails to translate.
    translate_body(
        "template<typename Tex, typename... Tp>\n\
         using SampleReturn = decltype(declval<Tex>().sample(declval<sampler>(), declval<Tp>()...));\n\
         template<typename Tex>\n\
         using Width = decltype(declval<Tex>().get_width());\n\
         kernel void k(depth2d<float> d [[texture(0)]], texture2d<half> h [[texture(1)]],\n\
                       device float* o [[buffer(0)]]) {\n\
             constexpr sampler s;\n\
             SampleReturn<depth2d<float>, float2> a = d.sample(s, float2(0.5f));\n\
             SampleReturn<texture2d<half>, float2> b = h.sample(s, float2(0.5f));\n\
             Width<depth2d<float>> w = d.get_width();\n\
             o[0] = a + float(b.w) + float(w);\n\
         }\n",
    );
}

/// SPIRV-Cross's zero-initialisation of threadgroup memory: `sizeof` of a
/// `threadgroup` variable, written through a byte pointer with character
/// literals (`'\0'`); and character literals as values of type `char`.
const CHARACTERS: &str = r#"
kernel void chars(device int* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    threadgroup float vals[4];
    threadgroup uchar* bytes = (threadgroup uchar*)&vals;
    if (i == 0) {
        for (uint k = 0; k < sizeof(vals); k++) bytes[k] = '\0';
        bytes[3] = '\x3f';
        bytes[2] = '\200';
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    char c = 'a' + char(i);
    int escapes = '\n' + '\'' + '\\' + int('\xff');
    o[i] = int(c - 'A') + 1000 * int(vals[i % 4u]) + 100000 * int(sizeof(vals)) + 10000000 * escapes;
}
"#;

#[test]
#[cfg(feature = "runner")]
fn character_literals_and_sizeof_a_threadgroup_variable() {
    let Some(out) = common::source::run_body(CHARACTERS, "chars", (8, 8), vec![(0, vec![0; 32])])
    else {
        return;
    };
    let escapes = 10 + 39 + 92 - 1;
    for (i, got) in common::u32s(&out[&0]).into_iter().enumerate() {
        let one = if i % 4 == 0 { 1 } else { 0 };
        let want = (32 + i as i32) + 1000 * one + 100000 * 16 + 10000000 * escapes;
        assert_eq!(got as i32, want, "[{i}]");
    }
}

#[test]
fn character_literals_outside_char_are_located() {
    common::source::assert_error(
        "kernel void k(device int* o [[buffer(0)]]) { o[0] = 'é'; }\n",
        "'é'",
        0,
        "character literal 'é' does not fit in `char`",
    );
}

/// SPIRV-Cross's `spvArrayCopyFromConstantToStack(thread T (&dst)[N],
/// constant T (&src)[N])` given a program-scope `constant` array (a WGSL
/// `const`) and an array member of a `constant` buffer: the `const`
/// reference binds to a copy.
const CONSTANT_ARRAY_REFERENCES: &str = r#"
template<typename T, uint N>
inline void copy_from_constant(thread T (&dst)[N], constant T (&src)[N]) {
    for (uint i = 0; i < N; i++) { dst[i] = src[i]; }
}
float weigh(constant float (&w)[3], float x) { return w[0] + w[1] * x + w[2] * x * x; }
constant float4 table[2] = { float4(10.0f, 11.0f, 12.0f, 13.0f), float4(20.0f) };
struct Params { float scale; float weights[3]; };
kernel void const_refs(constant Params& p [[buffer(0)]], device float* out [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    float4 rows[2];
    copy_from_constant(rows, table);
    float w[3];
    copy_from_constant(w, p.weights);
    out[i] = rows[i % 2u][i % 4u] + p.scale * weigh(p.weights, float(i)) + w[i % 3u];
}
"#;

#[test]
#[cfg(feature = "runner")]
fn constant_arrays_bind_to_const_references() {
    let params = common::f32_bytes(&[0.5, 1.0, 2.0, 3.0]);
    let Some(got) = common::source::run_body_f32s(
        CONSTANT_ARRAY_REFERENCES,
        "const_refs",
        (8, 8),
        vec![(0, params), (1, vec![0; 32])],
        1,
    ) else {
        return;
    };
    let table = [[10.0f32, 11.0, 12.0, 13.0], [20.0; 4]];
    let weights = [1.0f32, 2.0, 3.0];
    for (i, g) in got.iter().enumerate() {
        let x = i as f32;
        let want = table[i % 2][i % 4]
            + 0.5 * (weights[0] + weights[1] * x + weights[2] * x * x)
            + weights[i % 3];
        assert_eq!(*g, want, "[{i}]");
    }
}

/// SPIRV-Cross's descriptor arrays: a local array of buffer pointers
/// initialized from the stage's buffers and read with constant indices.
const POINTER_ARRAYS: &str = r#"
struct Block { float4 v; };
kernel void pointer_arrays(constant Block* b0 [[buffer(0)]], constant Block* b1 [[buffer(1)]],
                           device float4* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    constant Block* blocks[] = { b0, b1 };
    device float4* outs[1] = { out };
    outs[0][i] = blocks[1]->v * float(i) + blocks[0][0].v;
}
"#;

#[test]
#[cfg(feature = "runner")]
fn local_arrays_of_buffer_pointers() {
    let b0 = common::f32_bytes(&[1.0, 2.0, 3.0, 4.0]);
    let b1 = common::f32_bytes(&[10.0, 20.0, 30.0, 40.0]);
    let Some(got) = common::source::run_body_f32s(
        POINTER_ARRAYS,
        "pointer_arrays",
        (4, 4),
        vec![(0, b0), (1, b1), (2, vec![0; 64])],
        2,
    ) else {
        return;
    };
    for (k, g) in got.iter().enumerate() {
        let (i, c) = ((k / 4) as f32, k % 4);
        let want = 10.0 * (c as f32 + 1.0) * i + (c as f32 + 1.0);
        assert_eq!(*g, want, "[{k}]");
    }
}

#[test]
fn pointer_arrays_need_every_pointer() {
    common::source::assert_error(
        "kernel void k(device float* a [[buffer(0)]]) {\n    device float* ps[2] = { a };\n    ps[0][0] = 1.0f;\n}\n",
        "{ a }",
        0,
        "`ps` has 2 pointers and 1 initializers",
    );
}
