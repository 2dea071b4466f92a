//! C++ initialization forms: aggregate initialization with brace elision
//! ([dcl.init.aggr]), braced lists as call arguments, functional casts and
//! return values, and the constructors of packed vectors.

// Without the runner the GPU tests are compiled out, and the sources and
// helpers only they use are unused.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use msl2wgsl::{Library, Options};

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// Generated code's array wrapper: a struct holding a C array.
const WRAPPERS: &str = r#"
template<typename T, size_t N>
struct tint_array {
    T elements[N];
};

// An array wrapper with element access, as cross-compilers emit.
template<typename T, size_t Num>
struct spvUnsafeArray {
    T elements[Num ? Num : 1];
    thread T& operator[](size_t pos) thread { return elements[pos]; }
    const thread T& operator[](size_t pos) const thread { return elements[pos]; }
};
"#;

fn source(body: &str) -> String {
    format!("{PRELUDE}{WRAPPERS}{body}")
}

/// The first diagnostic of translating `body`, which must fail.
fn first_error(body: &str) -> String {
    match Library::from_source("t.metal", &source(body), &Options::default()) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.render().lines().next().unwrap_or_default().to_string(),
    }
}

/// `t.metal:LINE:COL:` of the first `at` in `body`.
fn location(body: &str, at: &str) -> String {
    let full = source(body);
    let offset = full
        .find(at)
        .unwrap_or_else(|| panic!("`{at}` not in the test source"));
    let before = &full[..offset];
    let line = before.matches('\n').count() + 1;
    let col = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("t.metal:{line}:{col}:")
}

/// Runs kernel `entry` of `body` over `threads` threads with buffer 0 of
/// `out_bytes` zero bytes; buffer 0 afterwards.
#[cfg(feature = "runner")]
fn run(body: &str, entry: &str, threads: u32, out_bytes: usize) -> Option<Vec<u8>> {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let gpu = common::gpu()?;
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, vec![0u8; out_bytes])].into_iter().collect();
    let out = run_kernel(
        gpu,
        "t.metal",
        &source(body),
        &Options::default(),
        entry,
        &Dispatch::Threads {
            grid: [threads, 1, 1],
            threadgroup: [threads, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    Some(out[&0].clone())
}

const ELISION: &str = r#"
struct S { int a; float b; };

kernel void elide(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    int k = int(i);
    tint_array<int, 4> a = {k, k + 1, k + 2, k + 3};
    tint_array<int, 4> b = tint_array<int, 4>{k * 2, 5};
    tint_array<tint_array<int, 3>, 2> c = tint_array<tint_array<int, 3>, 2>{1, 2, 3, 4, 5, k};
    tint_array<S, 2> d = tint_array<S, 2>{S{k, 0.5f}, S{3, float(k)}};
    tint_array<S, 2> e = {k, 1.5f, 7};
    tint_array<float2x3, 2> m = tint_array<float2x3, 2>{float3(float(k), 1.0f, 2.0f),
        float3(3.0f, 4.0f, 5.0f), float3(6.0f, 7.0f, 8.0f), float3(9.0f, 10.0f, float(k))};
    device float* o = out + i * 24;
    for (int j = 0; j < 4; ++j) { o[j] = float(a.elements[j]); }
    for (int j = 0; j < 4; ++j) { o[4 + j] = float(b.elements[j]); }
    for (int r = 0; r < 2; ++r) {
        for (int j = 0; j < 3; ++j) { o[8 + r * 3 + j] = float(c.elements[r].elements[j]); }
    }
    o[14] = float(d.elements[0].a) + d.elements[0].b;
    o[15] = float(d.elements[1].a) * 10.0f + d.elements[1].b;
    o[16] = float(e.elements[0].a) + e.elements[0].b;
    o[17] = float(e.elements[1].a) + e.elements[1].b;
    o[18] = m.elements[0][0].x;
    o[19] = m.elements[0][1].z;
    o[20] = m.elements[1][0].y;
    o[21] = m.elements[1][1].z;
    float sum = 0.0f;
    for (int n = 0; n < 2; ++n) {
        for (int col = 0; col < 2; ++col) { sum += dot(m.elements[n][col], float3(1.0f)); }
    }
    o[22] = sum;
    o[23] = -1.0f;
}
"#;

/// What `elide` writes for thread `k`.
fn elision_reference(k: f32) -> Vec<f32> {
    let mut o = vec![k, k + 1.0, k + 2.0, k + 3.0];
    o.extend([k * 2.0, 5.0, 0.0, 0.0]);
    o.extend([1.0, 2.0, 3.0, 4.0, 5.0, k]);
    o.extend([k + 0.5, 30.0 + k]);
    o.extend([k + 1.5, 7.0]);
    o.extend([k, 5.0, 7.0, k]);
    o.extend([2.0 * k + 55.0, -1.0]);
    o
}

#[cfg(feature = "runner")]
#[test]
fn brace_elision_in_local_aggregates_matches_cpu_reference() {
    let Some(out) = run(ELISION, "elide", 4, 4 * 24 * 4) else {
        return;
    };
    let want: Vec<f32> = (0..4).flat_map(|k| elision_reference(k as f32)).collect();
    assert_eq!(common::f32s(&out), want);
}

const CONSTANTS: &str = r#"
constant tint_array<int, 4> K = {1, 2, 3, 4};
constant tint_array<tint_array<int, 2>, 2> K2 = tint_array<tint_array<int, 2>, 2>{5, 6, 7};
constant spvUnsafeArray<float, 3> F = spvUnsafeArray<float, 3>({0.5, 1.5, 2.5});
constant tint_array<float2x2, 1> M = {float2(1.0f, 2.0f), float2(3.0f, 4.0f)};

kernel void consts(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    device float* o = out + i * 8;
    o[0] = float(K.elements[i]);
    o[1] = float(K2.elements[i / 2].elements[i % 2]);
    o[2] = F.elements[i % 3];
    o[3] = M.elements[0][i / 2][i % 2];
    spvUnsafeArray<float, 2> local = spvUnsafeArray<float, 2>({float(i), 8.0f});
    o[4] = local[0] + local[1];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn brace_elision_and_functional_casts_in_constants_match_cpu_reference() {
    let Some(out) = run(CONSTANTS, "consts", 4, 4 * 8 * 4) else {
        return;
    };
    let k = [1.0, 2.0, 3.0, 4.0];
    let k2 = [5.0, 6.0, 7.0, 0.0];
    let f = [0.5, 1.5, 2.5];
    let want: Vec<f32> = (0..4)
        .flat_map(|i| {
            [
                k[i],
                k2[i],
                f[i % 3],
                (i + 1) as f32,
                i as f32 + 8.0,
                0.0,
                0.0,
                0.0,
            ]
        })
        .collect();
    assert_eq!(common::f32s(&out), want);
}

const BRACED_VALUES: &str = r#"
struct P { float x; float y; };

P make(float a, float b) { return {a * 2.0f, b + 1.0f}; }
P none() { return {}; }
float2 pair(float a) { return {a, -a}; }
tint_array<int, 3> three(int a) { return {a, a + 1}; }

kernel void values(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float f = float(i);
    spvUnsafeArray<float, 4> arr = spvUnsafeArray<float, 4>({f, f + 1.0f, 2.0f, 3.0f});
    P p = make(f, 3.0f);
    P z = none();
    float2 q = pair(f);
    tint_array<int, 3> t = three(int(i));
    device float* o = out + i * 13;
    for (int j = 0; j < 4; ++j) { o[j] = arr[j]; }
    o[4] = p.x;
    o[5] = p.y;
    o[6] = z.x + z.y;
    o[7] = q.y;
    o[8] = float(t.elements[0]);
    o[9] = float(t.elements[1]);
    o[10] = float(t.elements[2]);
    o[11] = P({f, 2.0f}).y;
    o[12] = P(p).x + tint_array<int, 3>(t).elements[1];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn braced_returns_and_functional_casts_match_cpu_reference() {
    let Some(out) = run(BRACED_VALUES, "values", 4, 4 * 13 * 4) else {
        return;
    };
    let want: Vec<f32> = (0..4)
        .flat_map(|i| {
            let f = i as f32;
            [
                f,
                f + 1.0,
                2.0,
                3.0,
                f * 2.0,
                4.0,
                0.0,
                -f,
                f,
                f + 1.0,
                0.0,
                2.0,
                // P(p).x + t.elements[1]: copies.
                f * 2.0 + f + 1.0,
            ]
        })
        .collect();
    assert_eq!(common::f32s(&out), want);
}

#[test]
fn excess_elements_after_brace_elision_are_located() {
    let body = "kernel void k(device int* o [[buffer(0)]]) {\n    tint_array<int, 2> a = {1, 2, 30};\n    o[0] = a.elements[0];\n}\n";
    let err = first_error(body);
    let want = format!(
        "{} error: excess elements in initializer of `tint_array<int,2>`",
        location(body, "30")
    );
    assert!(err.starts_with(&want), "want `{want}`\n got `{err}`");
}

#[test]
fn excess_elements_in_a_constant_are_located() {
    let body = "constant tint_array<tint_array<int, 2>, 2> K = {1, 2, 3, 4, 50};\nkernel void k(device int* o [[buffer(0)]]) { o[0] = K.elements[0].elements[0]; }\n";
    let err = first_error(body);
    let want = format!(
        "{} error: excess elements in initializer of `tint_array<tint_array<int,2>,2>`",
        location(body, "50")
    );
    assert!(err.starts_with(&want), "want `{want}`\n got `{err}`");
}

const PACKED: &str = r#"
struct Out { packed_float3 p; float w; packed_int2 n; packed_uint3 u; float tail; };

kernel void pk(device Out* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float f = float(i);
    float3 v = float3(f, 1.0f, 2.0f);
    out[i].p = packed_float3(v + float3(0.5f, f, 1.0f));
    packed_float3 local = packed_float3(f, f * 2.0f, 1.0f);
    out[i].w = local.x + local.y + local.z;
    out[i].n = packed_int2(int(i), -3);
    out[i].u = packed_uint3(uint2(i, 7u), 9u);
    out[i].tail = float4(packed_float4(packed_float3(v), 4.0f)).w + float3(packed_float3(v)).z;
    device packed_float3* q = &out[i].p;
    (*q).y = (*q).y + packed_float3(10.0f).x;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn packed_vector_constructors_match_cpu_reference() {
    // Packed members: 12 + 4 + 8 + 12 + 4 bytes, no padding.
    let Some(out) = run(PACKED, "pk", 4, 4 * 40) else {
        return;
    };
    let words = common::u32s(&out);
    for i in 0..4usize {
        let w = &words[i * 10..i * 10 + 10];
        let f = i as f32;
        let floats = |r: std::ops::Range<usize>| -> Vec<f32> {
            w[r].iter().map(|b| f32::from_bits(*b)).collect()
        };
        assert_eq!(
            floats(0..4),
            [f + 0.5, 11.0 + f, 3.0, 3.0 * f + 1.0],
            "thread {i}"
        );
        assert_eq!(w[4..6], [i as u32, (-3i32) as u32], "thread {i}");
        assert_eq!(w[6..9], [i as u32, 7, 9], "thread {i}");
        assert_eq!(floats(9..10), [6.0], "thread {i}");
    }
}

#[test]
fn every_packed_vector_type_has_constructors() {
    for scalar in [
        "char", "uchar", "short", "ushort", "int", "uint", "half", "float",
    ] {
        for n in 2..=4 {
            let body = format!(
                "kernel void k(device packed_{scalar}{n}* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {{\n    o[i] = packed_{scalar}{n}({scalar}{n}({scalar}(1)));\n    o[i + 1] = packed_{scalar}{n}({scalar}(2));\n}}\n"
            );
            let lib = Library::from_source("t.metal", &source(&body), &Options::default())
                .unwrap_or_else(|f| panic!("packed_{scalar}{n}:\n{}", f.render()));
            assert!(lib.wgsl().contains("fn k("), "packed_{scalar}{n}");
        }
    }
}

const LIST_ARGUMENTS: &str = r#"
struct P { float x; float y; };

float sum(P p) { return p.x + p.y; }
float ends(tint_array<float, 3> a) { return a.elements[0] + a.elements[2]; }
float scaled(float k, float2 v) { return k * v.y; }
namespace geo { float area(P p) { return p.x * p.y; } }

kernel void lists(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float f = float(i);
    device float* o = out + i * 4;
    o[0] = sum({f, 2.0f});
    o[1] = ends({f, 1.0f, 5.0f});
    o[2] = scaled(3.0f, {1.0f, f});
    o[3] = geo::area({f, 4.0f});
}
"#;

#[cfg(feature = "runner")]
#[test]
fn braced_list_arguments_match_cpu_reference() {
    let Some(out) = run(LIST_ARGUMENTS, "lists", 4, 4 * 4 * 4) else {
        return;
    };
    let want: Vec<f32> = (0..4)
        .flat_map(|i| {
            let f = i as f32;
            [f + 2.0, f + 5.0, 3.0 * f, 4.0 * f]
        })
        .collect();
    assert_eq!(common::f32s(&out), want);
}

#[test]
fn braced_list_for_overloads_of_different_types_is_refused_at_the_list() {
    let body = "struct P { float x; float y; };\nstruct Q { int a; int b; };\nfloat g(P p) { return p.x; }\nfloat g(Q q) { return float(q.a); }\nkernel void k(device float* o [[buffer(0)]]) { o[0] = g({1, 2}); }\n";
    let err = first_error(body);
    let want = format!(
        "{} error: the overloads of `g` take `P` and `Q` here",
        location(body, "{1, 2}")
    );
    assert!(err.starts_with(&want), "want `{want}`\n got `{err}`");
}

#[test]
fn braced_list_for_a_function_template_is_refused_at_the_list() {
    let body = "template <typename T> T first(tint_array<T, 2> a) { return a.elements[0]; }\nkernel void k(device float* o [[buffer(0)]]) { o[0] = first({1.0f, 2.0f}); }\n";
    let err = first_error(body);
    let want = format!(
        "{} error: a braced list as an argument of function template `first`, whose parameter there depends on the template's parameters, is not supported",
        location(body, "{1.0f")
    );
    assert!(err.starts_with(&want), "want `{want}`\n got `{err}`");
}

/// A braced list for a parameter of a function template whose type names
/// none of the template's parameters (MLX's `elem_to_loc_2_nd<IdxT>({N *
/// index.x, index.y, index.z}, ...)`): the list initializes that type.
const TEMPLATE_LIST_ARGUMENTS: &str = r#"
template <typename IdxT = int>
vec<IdxT, 2> loc2(uint3 elem, int stride) {
    return vec<IdxT, 2>(IdxT(elem.x) * IdxT(stride), IdxT(elem.y + elem.z));
}
template <typename T>
T weighted(float2 w, T a, T b) { return T(w.x) * a + T(w.y) * b; }

kernel void template_lists(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    auto l = loc2<int>({2 * i, i, 7u}, 3);
    out[i * 2] = float(l.x + l.y);
    out[i * 2 + 1] = weighted({0.5f, 2.0f}, float(i), 1.0f);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn braced_lists_for_non_dependent_template_parameters_match_cpu_reference() {
    let Some(out) = run(TEMPLATE_LIST_ARGUMENTS, "template_lists", 4, 4 * 2 * 4) else {
        return;
    };
    let want: Vec<f32> = (0..4)
        .flat_map(|i| {
            let f = i as f32;
            [(2 * i * 3 + i + 7) as f32, 0.5 * f + 2.0]
        })
        .collect();
    assert_eq!(common::f32s(&out), want);
}

const PAREN_CONSTANTS: &str = r#"
constant half3 kLuma(0.25f, 0.5f, 0.125f);
constant float2x2 kRot(float2(0.0f, 1.0f), float2(-1.0f, 0.0f));
constant float3 kSplat(2.0f);

kernel void parens(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float3 c = float3(float(i), 2.0f, 4.0f);
    out[i * 3] = dot(float3(kLuma), c);
    out[i * 3 + 1] = (kRot * float2(float(i), 1.0f)).x;
    out[i * 3 + 2] = kSplat.z;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn parenthesized_vector_and_matrix_constants_match_cpu_reference() {
    let Some(out) = run(PAREN_CONSTANTS, "parens", 4, 4 * 3 * 4) else {
        return;
    };
    let want: Vec<f32> = (0..4)
        .flat_map(|i| {
            let f = i as f32;
            // Column-major: kRot * (f, 1) = f * (0, 1) + 1 * (-1, 0).
            [0.25 * f + 1.0 + 0.5, -1.0, 2.0]
        })
        .collect();
    assert_eq!(common::f32s(&out), want);
}

#[test]
fn parenthesized_vector_constant_with_wrong_arguments_is_located() {
    let body = "constant float3 k(1.0f, 2.0f);\nkernel void f(device float* o [[buffer(0)]]) { o[0] = k.x; }\n";
    let err = first_error(body);
    let want = format!(
        "{} error: invalid arguments to a `float3` constructor",
        location(body, "(1.0f, 2.0f)")
    );
    assert!(err.starts_with(&want), "want `{want}`\n got `{err}`");
}

const PACKED_CONSTANTS: &str = r#"
struct S { packed_float3 p; float w; };
constant packed_float3 K = packed_float3(1.0f, 2.0f, 3.0f);
constant S KS = {packed_float3(4.0f), 5.0f};
constant S KS2 = {6.0f, 7.0f, 8.0f, 9.0f};

kernel void pc(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i * 3] = K[i % 3];
    out[i * 3 + 1] = KS.p[i % 3] + KS.w;
    out[i * 3 + 2] = KS2.p[i % 3] * KS2.w;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn packed_vector_constants_match_cpu_reference() {
    let Some(out) = run(PACKED_CONSTANTS, "pc", 4, 4 * 3 * 4) else {
        return;
    };
    let want: Vec<f32> = (0..4)
        .flat_map(|i| [[1.0, 2.0, 3.0][i % 3], 9.0, [6.0, 7.0, 8.0][i % 3] * 9.0])
        .collect();
    assert_eq!(common::f32s(&out), want);
}
