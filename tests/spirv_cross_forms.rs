//! Forms of SPIR-V Cross's MSL output (issue #18), in own sources of the
//! same shapes: tessellation control shaders as kernels writing Metal's
//! tessellation factor structs, post-tessellation vertex functions (refused:
//! WebGPU has no tessellation), struct templates whose primary template is
//! only forward-declared before its specialisations, references to pointer
//! variables as parameters (`device T* thread & p`), and constant indexes
//! past a buffer struct's trailing one-element array. Each runs on the GPU
//! against a CPU reference, or is checked for the diagnostic it must give.
// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{assert_error, fails, first_code, translate_body};
use msl2wgsl::diagnostics::Code;

#[cfg(feature = "runner")]
use common::source::run_body as run;

/// A tessellation control shader as SPIR-V Cross emits it: a kernel, one
/// threadgroup per patch, whose first thread writes the patch's factors
/// into `MTLQuadTessellationFactorsHalf`/`MTLTriangleTessellationFactorsHalf`
/// buffers (structs `<metal_stdlib>` declares), beside a per-patch output.
const TESS_FACTORS: &str = r#"
static_assert(sizeof(MTLQuadTessellationFactorsHalf) == 12, "quad factors");
static_assert(sizeof(MTLTriangleTessellationFactorsHalf) == 8, "triangle factors");
struct main0_patchOut { float3 vFoo; };
kernel void tess_factors(uint id [[thread_index_in_threadgroup]],
                         uint patch [[threadgroup_position_in_grid]],
                         device main0_patchOut* spvPatchOut [[buffer(27)]],
                         device MTLQuadTessellationFactorsHalf* quad [[buffer(26)]],
                         device MTLTriangleTessellationFactorsHalf* tri [[buffer(25)]]) {
    device main0_patchOut& patchOut = spvPatchOut[patch];
    if (id == 0) {
        quad[patch].insideTessellationFactor[0] = half(patch) + half(0.5);
        quad[patch].insideTessellationFactor[1] = half(patch) * half(2.0);
        for (uint e = 0; e < 4; e++) {
            quad[patch].edgeTessellationFactor[e] = half(patch + e) * half(0.25);
        }
        for (uint e = 0; e < 3; e++) {
            tri[patch].edgeTessellationFactor[e] = half(e) + half(patch);
        }
        tri[patch].insideTessellationFactor = half(7.0) - half(patch);
        patchOut.vFoo = float3(float(patch));
    }
}
"#;

/// The little-endian bytes of binary16 values.
#[cfg(feature = "runner")]
fn half_bytes(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
        .collect()
}

#[test]
#[cfg(feature = "runner")]
fn tessellation_factor_kernels_write_the_tessellators_layout() {
    let patches = 6u32;
    let Some(out) = run(
        TESS_FACTORS,
        "tess_factors",
        (patches * 4, 4),
        vec![
            (27, vec![0; 16 * patches as usize]),
            (26, vec![0xEE; 12 * patches as usize]),
            (25, vec![0xEE; 8 * patches as usize]),
        ],
    ) else {
        return;
    };
    // Each value is exact in binary16, so no rounding is involved.
    let mut quad = Vec::new();
    let mut tri = Vec::new();
    let mut patch_out = Vec::new();
    for p in 0..patches {
        let p = p as f32;
        quad.extend((0..4).map(|e| (p + e as f32) * 0.25));
        quad.extend([p + 0.5, p * 2.0]);
        tri.extend((0..3).map(|e| e as f32 + p));
        tri.push(7.0 - p);
        patch_out.extend([p, p, p, 0.0]);
    }
    assert_eq!(out[&26], half_bytes(&quad), "quad factors");
    assert_eq!(out[&25], half_bytes(&tri), "triangle factors");
    let got = common::f32s(&out[&27]);
    for (i, (g, w)) in got.iter().zip(&patch_out).enumerate() {
        // The fourth float of each `float3` is padding.
        if i % 4 != 3 {
            assert_eq!(g, w, "patch output {i}");
        }
    }
}

#[test]
fn a_source_may_declare_its_own_tessellation_factor_struct() {
    // A user declaration of the same name is the one used (here with
    // `float`s: 24 bytes).
    translate_body(
        "struct MTLQuadTessellationFactorsHalf { float edgeTessellationFactor[4]; float insideTessellationFactor[2]; };\n\
         static_assert(sizeof(MTLQuadTessellationFactorsHalf) == 24, \"own\");\n\
         kernel void k(device MTLQuadTessellationFactorsHalf* t [[buffer(0)]]) { t[0].insideTessellationFactor[1] = 1.0f; }\n",
    );
}

#[test]
fn tessellator_inputs_are_refused_where_they_are_declared() {
    let body = "struct main0_out { float4 gl_Position [[position]]; };\n\
                [[ patch(quad, 4) ]] vertex main0_out main0(float2 uv [[position_in_patch]], uint pid [[patch_id]]) {\n\
                \x20   main0_out out = {};\n\
                \x20   out.gl_Position = float4(uv, float(pid), 1.0);\n\
                \x20   return out;\n\
                }\n";
    assert_error(
        body,
        "position_in_patch",
        0,
        "`[[position_in_patch]]` (an input of the post-tessellation vertex function `main0`, `[[patch]]`) has no WebGPU equivalent",
    );
    assert_eq!(first_code(body), Code::NoWebGpuEquivalent);
    // The same with only the patch's index.
    let body = body
        .replace("float2 uv [[position_in_patch]], ", "")
        .replace("uv", "float2(0.5)");
    assert_error(
        &body,
        "patch_id",
        0,
        "`[[patch_id]]` (an input of the post-tessellation vertex function `main0`, `[[patch]]`) has no WebGPU equivalent",
    );
}

#[test]
fn a_patch_function_without_tessellator_inputs_is_a_vertex_function() {
    // It reads nothing only the tessellator gives, so it reads as the
    // vertex function it is.
    let library = translate_body(
        "struct main0_out { float4 gl_Position [[position]]; };\n\
         [[ patch(triangle, 0) ]] vertex main0_out main0() {\n\
         \x20   main0_out out = {};\n\
         \x20   out.gl_Position = float4(1.0);\n\
         \x20   return out;\n\
         }\n",
    );
    assert!(library.wgsl().contains("@vertex"), "{}", library.wgsl());
}

#[test]
fn patch_control_points_are_refused_where_they_are_named() {
    let body = "struct main0_in { float3 pos [[attribute(0)]]; };\n\
                struct main0_patchIn { patch_control_point<main0_in> gl_in; };\n\
                struct main0_out { float4 gl_Position [[position]]; };\n\
                [[ patch(triangle, 3) ]] vertex main0_out main0(main0_patchIn patchIn [[stage_in]], float3 uvw [[position_in_patch]]) {\n\
                \x20   main0_out out = {};\n\
                \x20   out.gl_Position = float4(patchIn.gl_in[0].pos * uvw.x, 1.0);\n\
                \x20   return out;\n\
                }\n";
    assert_error(
        body,
        "patch_control_point",
        0,
        "`patch_control_point<T>` (the control points of a post-tessellation vertex function) has no WebGPU equivalent",
    );
    assert_eq!(first_code(body), Code::NoWebGpuEquivalent);
}

/// SPIR-V Cross's `spvClustered*Detail` and `SpvHalfTypeSelector` shapes:
/// the primary template declared (`template <...> struct S;`), then full
/// and partial specialisations, then (or never) the primary's definition,
/// which recurses into the specialisations through a member template.
const FORWARD_PRIMARY: &str = r#"
template <uint N, uint offset>
struct BitCount;

template <>
struct BitCount<1, 0>
{
    template <typename T>
    static T op(T x) { return x & T(1); }
};

template <uint offset>
struct BitCount<1, offset>
{
    template <typename T>
    static T op(T x) { return (x >> T(offset)) & T(1); }
};

template <uint N, uint offset>
struct BitCount
{
    template <typename T>
    static T op(T x) { return BitCount<N / 2, offset>::op(x) + BitCount<N / 2, offset + N / 2>::op(x); }
};

template <typename F> struct HalfOf;
template <> struct HalfOf<float> { using H = half; };
template <uint N> struct HalfOf<vec<float, N>> { using H = vec<half, N>; };
template <typename F, typename H = typename HalfOf<F>::H>
F through_half(F x)
{
    H h = H(x);
    return F(h);
}

kernel void forward_primary(device uint* bits [[buffer(0)]], device float2* rounded [[buffer(1)]],
                            uint i [[thread_position_in_grid]]) {
    bits[i] = BitCount<8, 0>::op(bits[i]);
    rounded[i] = through_half(rounded[i]) + float2(through_half(rounded[i].x));
}
"#;

#[test]
#[cfg(feature = "runner")]
fn specialisations_after_a_forward_declared_primary_template() {
    let n = 64u32;
    let bits: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2654435761) >> 7).collect();
    // Values exact in binary16.
    let rounded: Vec<f32> = (0..2 * n).map(|k| k as f32 * 0.125 - 3.0).collect();
    let Some(out) = run(
        FORWARD_PRIMARY,
        "forward_primary",
        (n, 16),
        vec![
            (0, bits.iter().flat_map(|b| b.to_le_bytes()).collect()),
            (1, common::f32_bytes(&rounded)),
        ],
    ) else {
        return;
    };
    let want_bits: Vec<u32> = bits.iter().map(|b| (b & 0xff).count_ones()).collect();
    assert_eq!(common::u32s(&out[&0]), want_bits);
    let want: Vec<f32> = rounded
        .chunks(2)
        .flat_map(|v| [v[0] + v[0], v[1] + v[0]])
        .collect();
    assert_eq!(common::f32s(&out[&1]), want);
}

#[test]
fn a_forward_declared_primary_alone_cannot_be_instantiated() {
    let text = fails(
        "template <typename T> struct Only;\n\
         template <> struct Only<float> { static constant constexpr int value = 1; };\n\
         kernel void k(device int* o [[buffer(0)]]) { o[0] = Only<int>::value; }\n",
    );
    assert!(
        text.contains("implicit instantiation of undefined template `Only<int>`"),
        "{text}"
    );
}

#[test]
fn a_specialisation_still_needs_a_declared_primary() {
    assert_error(
        "template <> struct Nothing<float> { float x; };\n",
        "Nothing",
        0,
        "`Nothing` is not a struct template: a specialisation needs the primary template declared before it",
    );
}

/// SPIR-V Cross's tessellation control helpers: the output pointer passed
/// by reference to a `thread` pointer variable (`device T* thread &`), read
/// and written through, never rebound.
const POINTER_REFERENCES: &str = r#"
struct main0_out { float4 gl_Position; float weight; };
void write_in_func(device main0_out* thread & gl_out, thread uint& gl_InvocationID,
                   const device float* thread & gl_in) {
    gl_out[gl_InvocationID].gl_Position = float4(gl_in[gl_InvocationID], 1.0, 2.0, 3.0);
    gl_out[gl_InvocationID].weight = gl_in[gl_InvocationID] * 2.0;
}
kernel void pointer_refs(uint gl_InvocationID [[thread_index_in_threadgroup]],
                         uint gl_PrimitiveID [[threadgroup_position_in_grid]],
                         device main0_out* spvOut [[buffer(0)]],
                         const device float* spvIn [[buffer(1)]]) {
    device main0_out* gl_out = &spvOut[gl_PrimitiveID * 4];
    const device float* gl_in = &spvIn[gl_PrimitiveID * 4];
    write_in_func(gl_out, gl_InvocationID, gl_in);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn references_to_pointer_variables_pass_the_pointer() {
    let patches = 5u32;
    let input: Vec<f32> = (0..4 * patches).map(|i| i as f32 * 1.5 - 4.0).collect();
    let Some(out) = run(
        POINTER_REFERENCES,
        "pointer_refs",
        (4 * patches, 4),
        vec![
            (0, vec![0; 32 * 4 * patches as usize]),
            (1, common::f32_bytes(&input)),
        ],
    ) else {
        return;
    };
    // `main0_out` is 32 bytes: a float4, a float and 12 bytes of padding.
    let got = common::f32s(&out[&0]);
    for (k, x) in input.iter().enumerate() {
        let o = &got[8 * k..8 * k + 5];
        assert_eq!(o, [*x, 1.0, 2.0, 3.0, x * 2.0], "element {k}");
    }
}

/// SPIR-V Cross declares runtime-sized arrays as a buffer struct's trailing
/// one-element array and indexes them with constants past 0: in typed
/// buffers (an array of structs, of vectors) and in buffers held as words
/// (`uchar`).
const TRAILING_CONSTANT_INDEXES: &str = r#"
struct T_1 { float b; };
struct SSBO1 { T_1 foo[1]; };
struct SSBO2 { float4 out_data[1]; };
struct SSBO3 { uint n; uchar bytes[1]; };
kernel void trailing(device SSBO1& _9 [[buffer(0)]], device SSBO2& _4 [[buffer(1)]],
                     device SSBO3& _3 [[buffer(2)]]) {
    _9.foo[10].b = 40.0;
    _9.foo[0].b = 1.0;
    _4.out_data[2] = float4(1.0, 2.0, 3.0, 4.0);
    _4.out_data[1] = _4.out_data[2] * 2.0;
    _3.bytes[6] = uchar(0xab);
    _3.bytes[0] = uchar(_3.n);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn constant_indexes_past_a_trailing_one_element_array() {
    let Some(out) = run(
        TRAILING_CONSTANT_INDEXES,
        "trailing",
        (1, 1),
        vec![
            (0, vec![0; 4 * 12]),
            (1, vec![0; 16 * 3]),
            (2, [7u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0].to_vec()),
        ],
    ) else {
        return;
    };
    let mut foo = vec![0.0f32; 12];
    foo[10] = 40.0;
    foo[0] = 1.0;
    assert_eq!(common::f32s(&out[&0]), foo);
    let data = [0.0, 0.0, 0.0, 0.0, 2.0, 4.0, 6.0, 8.0, 1.0, 2.0, 3.0, 4.0];
    assert_eq!(common::f32s(&out[&1]), data);
    // `bytes` starts at offset 4: element 6 is byte 10.
    let mut bytes = [7u8, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0];
    bytes[10] = 0xab;
    assert_eq!(out[&2], bytes);
}

#[test]
fn a_constant_index_past_an_inner_typed_array_is_still_refused() {
    // Not the last member: WGSL refuses the index, and Metal's result
    // would be another member's bytes.
    let body = "struct S { float4 a[1]; float b; };\n\
                kernel void k(device S& s [[buffer(0)]]) { s.a[1] = float4(1.0); }\n";
    assert_error(body, "1] =", 0, "index 1 is past the end of `float4[1]`");
}

/// Program-scope constants computed by inline (not `constexpr`) functions,
/// as SPIR-V Cross writes a specialization constant operation (`constant
/// int m = spvSMod(c, d);`): Metal's compiler folds the inlined body, so
/// the constant has the value the function computes; `select` included.
const FOLDED_CONSTANTS: &str = r#"
template<typename Tx, typename Ty>
inline Tx floor_mod(Tx x, Ty y)
{
    Tx r = x - y * (x / y);
    return select(Tx(r + y), r, r == 0 || (x >= 0) == (y >= 0));
}

inline uint scaled(uint v, uint k) { uint t = v * k; if (t > 100u) { t -= 100u; } return t; }

constant int a = -7;
constant int b = 3;
constant int m1 = floor_mod(a, b);
constant int m2 = floor_mod(-a, -b);
constant int m3 = floor_mod(a * 2, -b - 2);
constant uint s1 = scaled(uint(b), 40u);
constant int2 pick = select(int2(a, b), int2(b, a), bool2(true, false));

kernel void k(device int* out [[buffer(0)]]) {
    out[0] = m1; out[1] = m2; out[2] = m3; out[3] = int(s1);
    out[4] = pick.x; out[5] = pick.y;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn constants_computed_by_inline_functions_are_folded() {
    let Some(out) = run(FOLDED_CONSTANTS, "k", (1, 1), vec![(0, vec![0; 6 * 4])]) else {
        return;
    };
    // SPIR-V's OpSMod: the remainder takes the divisor's sign.
    let smod = |x: i32, y: i32| x.rem_euclid(y) + if y < 0 && x.rem_euclid(y) != 0 { y } else { 0 };
    let scaled = |v: u32, k: u32| if v * k > 100 { v * k - 100 } else { v * k };
    let want = [
        smod(-7, 3),
        smod(7, -3),
        smod(-14, -5),
        scaled(3, 40) as i32,
        // `c ? b : a` by lane: b.x, then a.y.
        3,
        3,
    ];
    assert_eq!(
        common::u32s(&out[&0])
            .iter()
            .map(|&v| v as i32)
            .collect::<Vec<_>>(),
        want
    );
}

#[test]
fn array_sizes_still_need_constexpr_functions() {
    // C++ [expr.const]: only a program-scope constant's initializer is
    // folded; an array size calls `constexpr` functions only.
    let body = "inline int twice(int n) { return 2 * n; }\nkernel void k(device int* out [[buffer(0)]]) { int a[twice(2)] = {}; out[0] = a[0]; }\n";
    assert_eq!(first_code(body), Code::NotConstant, "{}", fails(body));
}
