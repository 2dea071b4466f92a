//! The C++ and Metal library semantics that ML kernels (MLX's shapes)
//! need of analysis: struct template specialisations shared by several
//! instances, a class hidden by a function of its name, `numeric_limits`'
//! NaNs and constants, `atomic_thread_fence` with a `thread_scope`, an
//! overload set across `metal` and the global namespace, static member
//! constants that name each other, and the refusal of Metal 4's tensor
//! operations framework.
//!
//! Every source here is written for these tests in the shapes those
//! kernels use; GPU tests compare with a CPU reference.

// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{translate_body, PRELUDE};
use msl2wgsl::diagnostics::Code;
use msl2wgsl::{Library, Options};

// ---------------------------------------------------------------------
// 1. Partial specialisations reached from several instances.

/// A trait with a partial specialisation for `vec<T, 2>` and one for a
/// struct template, used by a second trait's alias and `static_assert`s
/// from two helper-template instances (FFT-style storage traits).
const STORAGE_TRAITS: &str = "\
template <typename T>
struct cplx;
template <typename T>
struct cplx {
  T re;
  T im;
};
template <typename S>
struct Storage {
  using scalar = S;
};
template <typename T>
struct Storage<vec<T, 2>> {
  using scalar = T;
};
template <typename T>
struct Storage<cplx<T>> {
  using scalar = T;
};
template <typename In, typename Out>
struct IO {
  using scalar = typename Storage<In>::scalar;
  static_assert(metal::is_same_v<scalar, typename Storage<Out>::scalar>, \"one scalar type\");
  static_assert(sizeof(In) <= 16, \"small\");
};
float get(float v) { return v; }
float get(float2 v) { return v.x; }
template <typename In, typename Out>
float first(device In* a, uint i) {
  using scalar = typename IO<In, Out>::scalar;
  scalar s = scalar(get(a[i]));
  return float(s) * 2.0f;
}
template <typename In, typename Out>
[[kernel]] void run(device In* in [[buffer(0)]], device float* out [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
  out[i] = first<In, Out>(in, i);
}
template [[host_name(\"f2\")]] [[kernel]] void run<float2, float2>(device float2*, device float*, uint);
template [[host_name(\"f1\")]] [[kernel]] void run<float, float2>(device float*, device float*, uint);
";

#[test]
fn a_specialisation_two_instances_need_is_instantiated_once() {
    let lib = translate_body(STORAGE_TRAITS);
    let names: Vec<&str> = lib.function_names();
    assert_eq!(names, ["f2", "f1"]);
}

#[cfg(feature = "runner")]
#[test]
fn a_specialisation_two_instances_need_computes() {
    use common::{f32_bytes, f32s};
    let n = 8usize;
    let input: Vec<f32> = (0..2 * n).map(|k| k as f32 * 0.5 - 1.0).collect();
    let Some(out) = common::source::run_body(
        STORAGE_TRAITS,
        "f2",
        (n as u32, 4),
        vec![(0, f32_bytes(&input)), (1, vec![0; n * 4])],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..n).map(|i| input[2 * i] * 2.0).collect();
    assert_eq!(f32s(&out[&1]), want, "float2 input");
    let Some(out) = common::source::run_body(
        STORAGE_TRAITS,
        "f1",
        (2 * n as u32, 4),
        vec![(0, f32_bytes(&input)), (1, vec![0; 2 * n * 4])],
    ) else {
        return;
    };
    let want: Vec<f32> = input.iter().map(|x| x * 2.0).collect();
    assert_eq!(f32s(&out[&1]), want, "float input");
}

// ---------------------------------------------------------------------
// 2. A class and a function of one name.

/// A union, a helper that returns it, and a kernel of the union's name
/// (C++ lets the function hide the class; `union bits` still names it).
const HIDDEN_UNION: &str = "\
union bits {
  uint2 val;
  uchar4 bytes[2];
};
bits make(uint2 v) {
  bits b;
  b.val = v;
  return b;
}
struct pair { uint a; uint b; };
uint pair(uint x) { return x + 1; }
[[kernel]] void bits(device const uint* in [[buffer(0)]], device uchar* out [[buffer(1)]],
                     device uint* sums [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  union bits b = make(uint2(in[2 * i], in[2 * i + 1]));
  for (int k = 0; k < 4; ++k) {
    out[8 * i + k] = b.bytes[0][k];
    out[8 * i + 4 + k] = b.bytes[1][k];
  }
  struct pair p = {in[2 * i], pair(in[2 * i + 1])};
  sums[i] = p.a + p.b;
}
";

#[test]
fn a_kernel_keeps_its_name_next_to_a_class_of_that_name() {
    let lib = translate_body(HIDDEN_UNION);
    let f = lib.function("bits").expect("the kernel");
    assert_eq!(f.wgsl_entry_point, "bits");
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("fn bits("), "{wgsl}");
    // WGSL has one namespace: the classes are named apart.
    assert!(wgsl.contains("struct bits_union {"), "{wgsl}");
    assert!(wgsl.contains("struct pair_struct {"), "{wgsl}");
    assert!(wgsl.contains("fn pair("), "{wgsl}");
}

#[cfg(feature = "runner")]
#[test]
fn a_union_hidden_by_a_kernel_of_its_name_still_works() {
    use common::u32s;
    let n = 4usize;
    let input: Vec<u32> = (0..2 * n as u32)
        .map(|k| k.wrapping_mul(0x9e37_79b9) ^ 0x0102_0304)
        .collect();
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
    let Some(out) = common::source::run_body(
        HIDDEN_UNION,
        "bits",
        (n as u32, 4),
        vec![(0, bytes.clone()), (1, vec![0; 8 * n]), (2, vec![0; 4 * n])],
    ) else {
        return;
    };
    assert_eq!(
        out[&1], bytes,
        "the union's bytes are the words' little-endian bytes"
    );
    let want: Vec<u32> = (0..n)
        .map(|i| input[2 * i].wrapping_add(input[2 * i + 1]).wrapping_add(1))
        .collect();
    assert_eq!(u32s(&out[&2]), want);
}

// ---------------------------------------------------------------------
// 3. numeric_limits.

#[test]
fn numeric_limits_constants_follow_cpp() {
    // Evaluated at translation: a false one fails with E0328.
    let body = "\
static_assert(numeric_limits<float>::digits == 24 && numeric_limits<half>::digits == 11, \"digits\");
static_assert(numeric_limits<bfloat>::digits == 8 && numeric_limits<int>::digits == 31, \"digits\");
static_assert(numeric_limits<uint>::digits == 32 && numeric_limits<uchar>::digits10 == 2, \"digits\");
static_assert(numeric_limits<float>::digits10 == 6 && numeric_limits<float>::max_digits10 == 9, \"digits10\");
static_assert(numeric_limits<half>::max_exponent == 16 && numeric_limits<half>::min_exponent == -13, \"exponents\");
static_assert(numeric_limits<float>::max_exponent10 == 38 && numeric_limits<float>::min_exponent10 == -37, \"exponent10\");
static_assert(numeric_limits<float>::has_quiet_NaN && numeric_limits<half>::has_infinity, \"has\");
static_assert(!numeric_limits<int>::has_infinity && numeric_limits<int>::is_integer, \"int\");
static_assert(numeric_limits<uint>::is_modulo && !numeric_limits<int>::is_modulo, \"modulo\");
static_assert(numeric_limits<float>::round_error() == 0.5f && numeric_limits<int>::round_error() == 0, \"round_error\");
static_assert(numeric_limits<float>::denorm_min() * 8388608.0f == numeric_limits<float>::min(), \"denorm_min\");
static_assert(numeric_limits<float>::radix == 2 && numeric_limits<short>::is_signed, \"radix\");
static_assert(numeric_limits<float>::infinity() > numeric_limits<float>::max(), \"infinity\");
static_assert(numeric_limits<float>::quiet_NaN() != numeric_limits<float>::quiet_NaN(), \"NaN\");
kernel void k(device float* o [[buffer(0)]]) { o[0] = 1.0f; }
";
    translate_body(body);
    let wrong = "static_assert(numeric_limits<half>::digits == 10, \"digits\");\nkernel void k(device float* o [[buffer(0)]]) { o[0] = 1.0f; }\n";
    assert_eq!(common::source::first_code(wrong), Code::StaticAssertFailed);
}

#[test]
fn numeric_limits_members_used_wrongly_are_located() {
    let body = "kernel void k(device float* o [[buffer(0)]]) { o[0] = numeric_limits<float>::has_infinity(); }\n";
    common::source::assert_error(
        body,
        "numeric_limits",
        0,
        "`numeric_limits<T>::has_infinity` is not supported",
    );
    let body = "kernel void k(device float* o [[buffer(0)]]) { o[0] = numeric_limits<float>::quiet_NaN; }\n";
    common::source::assert_error(
        body,
        "numeric_limits",
        0,
        "`numeric_limits<T>::quiet_NaN` is a function: call it",
    );
}

/// MLX's sort initialises with a NaN through a trait's static constant.
const LIMITS_KERNEL: &str = "\
template <typename T, typename = void>
struct Init {
  static constexpr constant T v = numeric_limits<T>::max();
};
template <typename T>
struct Init<T, metal::enable_if_t<metal::is_floating_point_v<T>>> {
  static constexpr constant T v = metal::numeric_limits<T>::quiet_NaN();
};
kernel void limits(device float* f [[buffer(0)]], device uint* u [[buffer(1)]],
                   device int* n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  float x = f[i];
  f[i] = isnan(x) ? Init<float>::v : x;
  u[0] = isnan(Init<float>::v) ? 1u : 0u;
  u[1] = isnan(numeric_limits<float>::signaling_NaN()) ? 1u : 0u;
  u[2] = isnan(float(numeric_limits<half>::quiet_NaN())) ? 1u : 0u;
  u[3] = isinf(float(numeric_limits<bfloat>::infinity())) ? 1u : 0u;
  u[4] = Init<uint>::v;
  u[5] = as_type<uint>(float(numeric_limits<half>::denorm_min()));
  u[6] = as_type<uint>(float(numeric_limits<half>::round_error()));
  n[0] = numeric_limits<float>::digits + numeric_limits<long>::digits10;
  n[1] = numeric_limits<bool>::is_integer ? numeric_limits<char>::digits : -1;
}
";

#[cfg(feature = "runner")]
#[test]
fn numeric_limits_nans_and_constants_on_the_gpu() {
    use common::{f32_bytes, f32s, u32s};
    let input = [1.5f32, f32::NAN, -2.0, f32::NAN];
    let Some(out) = common::source::run_body(
        LIMITS_KERNEL,
        "limits",
        (4, 4),
        vec![
            (0, f32_bytes(&input)),
            (1, vec![0; 7 * 4]),
            (2, vec![0; 2 * 4]),
        ],
    ) else {
        return;
    };
    let f = f32s(&out[&0]);
    assert_eq!(f[0], 1.5);
    assert_eq!(f[2], -2.0);
    assert!(f[1].is_nan() && f[3].is_nan(), "{f:?}");
    let u = u32s(&out[&1]);
    // half's smallest subnormal is 2^-24; round_error is 0.5.
    let denorm = 2f32.powi(-24).to_bits();
    assert_eq!(u, [1, 1, 1, 1, u32::MAX, denorm, 0.5f32.to_bits()]);
    let n: Vec<i32> = out[&2]
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(n, [24 + 18, 7]);
}

// ---------------------------------------------------------------------
// 4. atomic_thread_fence with a thread_scope.

/// A scope constant declared as MLX declares `thread_scope_system`.
const SCOPE_CONSTANT: &str = "\
namespace metal {
constexpr constant metal::thread_scope my_system_scope = static_cast<thread_scope>(3);
}
";

#[test]
fn fences_become_the_barrier_of_their_flags() {
    let body = format!(
        "{SCOPE_CONSTANT}\
kernel void k(device uint* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {{
  threadgroup uint t[64];
  t[i % 64] = i;
  atomic_thread_fence(mem_flags::mem_threadgroup, memory_order_seq_cst, thread_scope_threadgroup);
  o[i] = t[i % 64];
  atomic_thread_fence(mem_flags::mem_device, memory_order_release, metal::my_system_scope);
}}
"
    );
    let lib = translate_body(&body);
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("workgroupBarrier()"), "{wgsl}");
    assert!(wgsl.contains("storageBarrier()"), "{wgsl}");
    let warnings = lib.warnings();
    assert!(
        warnings.contains("warning: `atomic_thread_fence` with `thread_scope_system` orders memory only among the threads of one threadgroup in WGSL"),
        "{warnings}"
    );
    assert_eq!(lib.warning_diagnostics().0[0].code(), Code::FenceNarrowed);
    // The threadgroup fence alone warns about nothing.
    assert_eq!(lib.warning_diagnostics().0.len(), 1, "{warnings}");
}

#[test]
fn a_fence_in_a_fragment_function_is_refused() {
    let body = "fragment float4 f() {\n  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_device);\n  return float4(1.0);\n}\n";
    common::source::assert_error(
        body,
        "atomic_thread_fence",
        0,
        "`atomic_thread_fence` with `thread_scope_device` has no WebGPU equivalent in a fragment function",
    );
    assert_eq!(common::source::first_code(body), Code::NoWebGpuEquivalent);
    let body = "kernel void k(device int* o [[buffer(0)]]) {\n  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, 9);\n}\n";
    common::source::assert_error(body, "9", 0, "expected a thread scope");
}

/// A kernel that fences on a grid that is no multiple of the threadgroup:
/// the threads outside the grid must reach the barrier too.
#[cfg(feature = "runner")]
#[test]
fn a_fenced_kernel_computes_on_a_partial_threadgroup() {
    use common::u32s;
    let body = format!(
        "{SCOPE_CONSTANT}\
kernel void k(device const uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {{
  uint v = in[i] * 3u + 1u;
  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, metal::my_system_scope);
  out[i] = v;
  atomic_thread_fence(mem_flags::mem_device | mem_flags::mem_threadgroup, memory_order_seq_cst, thread_scope_threadgroup);
}}
"
    );
    let n = 100usize;
    let input: Vec<u32> = (0..n as u32).map(|k| k * 7 + 2).collect();
    let Some(out) = common::source::run_body(
        &body,
        "k",
        (n as u32, 64),
        vec![
            (0, input.iter().flat_map(|v| v.to_le_bytes()).collect()),
            (1, vec![0; 4 * n]),
        ],
    ) else {
        return;
    };
    let want: Vec<u32> = input.iter().map(|v| v * 3 + 1).collect();
    assert_eq!(u32s(&out[&1]), want);
}

// ---------------------------------------------------------------------
// 5. An overload set across `metal` and the global namespace.

const SHUFFLE_OVERLOADS: &str = "\
namespace metal {
inline bfloat simd_shuffle_down(bfloat data, ushort delta) {
  return as_type<bfloat>(__metal_simd_shuffle_down(as_type<ushort>(data), delta));
}
}
// Two user overloads that tie for a `uint` argument: the library's exact
// match is called.
uchar simd_shuffle_down(uchar d, ushort delta) { return d; }
char simd_shuffle_down(char d, ushort delta) { return d; }
template <typename U>
struct IndexVal {
  uint index;
  U val;
};
template <typename U>
IndexVal<U> simd_shuffle_down(IndexVal<U> data, ushort delta) {
  return IndexVal<U>{simd_shuffle_down(data.index, delta), simd_shuffle_down(data.val, delta)};
}
kernel void shuffle(device const float* in [[buffer(0)]], device uint* idx [[buffer(1)]],
                    device float* val [[buffer(2)]], device uint* width [[buffer(3)]],
                    uint i [[thread_position_in_grid]], uint w [[threads_per_simdgroup]]) {
  IndexVal<float> p{i, in[i]};
  p = simd_shuffle_down(p, 1);
  idx[i] = p.index;
  val[i] = p.val + float(simd_shuffle_down(bfloat(2.0f), 2));
  width[0] = w;
}
";

#[test]
fn a_global_overload_joins_metals_after_using_namespace() {
    let lib = translate_body(SHUFFLE_OVERLOADS);
    assert_eq!(lib.function_names(), ["shuffle"]);
    // Without `using namespace metal;` the two declarations stay apart,
    // and WGSL's one scope cannot hold both names.
    let src = format!(
        "#include <metal_stdlib>\n{}",
        SHUFFLE_OVERLOADS
            .replace(
                "IndexVal<U>{simd_shuffle_down",
                "IndexVal<U>{metal::simd_shuffle_down"
            )
            .replace(
                ", simd_shuffle_down(data.val",
                ", metal::simd_shuffle_down(data.val"
            )
    );
    let err = match Library::from_source("t.metal", &src, &Options::default()) {
        Ok(_) => panic!("expected the namespaces to clash"),
        Err(f) => f.render(),
    };
    assert!(
        err.contains(
            "`simd_shuffle_down` is declared in namespace `metal` and in the global namespace"
        ),
        "{err}"
    );
}

#[cfg(feature = "runner")]
#[test]
fn a_global_overload_joins_metals_on_the_gpu() {
    use common::{f32_bytes, f32s, u32s};
    let n = 64usize;
    let input: Vec<f32> = (0..n).map(|k| k as f32 * 0.25).collect();
    let Some(out) = common::source::run_body(
        SHUFFLE_OVERLOADS,
        "shuffle",
        (n as u32, 64),
        vec![
            (0, f32_bytes(&input)),
            (1, vec![0; 4 * n]),
            (2, vec![0; 4 * n]),
            (3, vec![0; 4]),
        ],
    ) else {
        return;
    };
    let w = u32s(&out[&3])[0] as usize;
    assert!(w > 0 && n.is_multiple_of(w), "SIMD width {w}");
    let (idx, val) = (u32s(&out[&1]), f32s(&out[&2]));
    for i in 0..n {
        // The upper lanes keep their own value (MSL §6.9.2).
        let from = if i % w + 1 < w { i + 1 } else { i };
        assert_eq!(idx[i], from as u32, "index of thread {i}");
        assert_eq!(val[i], input[from] + 2.0, "value of thread {i}");
    }
}

// ---------------------------------------------------------------------
// 6b. bfloat overloads a user adds to Metal's namespaces (MLX's
// bf16_math.h): `float` converts to `bfloat` only explicitly (MSL §2.1),
// so a `float` argument still calls the library's function.

/// The user's `precise::rsqrt(bfloat)` answers 42 so that the test sees
/// which function each call reached; declared in `metal` first, as MLX
/// does, it is renamed (the name is taken).
const BFLOAT_OVERLOADS: &str = "\
namespace metal {
bfloat rsqrt(bfloat x) { return static_cast<bfloat>(7.0f); }
namespace precise {
bfloat rsqrt(bfloat x) { return static_cast<bfloat>(42.0f); }
}
}
[[kernel]] void norms(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                      device float* user [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  out[i] = metal::precise::rsqrt(in[i] + 0.5f);
  user[i] = float(metal::precise::rsqrt(bfloat(in[i]))) + float(metal::rsqrt(bfloat(in[i])));
}
";

#[test]
fn a_float_argument_does_not_reach_a_users_bfloat_overload() {
    let lib = translate_body(BFLOAT_OVERLOADS);
    assert_eq!(lib.function_names(), ["norms"]);
}

#[cfg(feature = "runner")]
#[test]
fn a_float_argument_calls_the_library_on_the_gpu() {
    use common::{f32_bytes, f32s};
    let n = 64usize;
    let input: Vec<f32> = (0..n).map(|k| 1.0 + k as f32 * 0.75).collect();
    let Some(out) = common::source::run_body(
        BFLOAT_OVERLOADS,
        "norms",
        (n as u32, 64),
        vec![
            (0, f32_bytes(&input)),
            (1, vec![0; 4 * n]),
            (2, vec![0; 4 * n]),
        ],
    ) else {
        return;
    };
    let (got, user) = (f32s(&out[&1]), f32s(&out[&2]));
    for i in 0..n {
        let x = input[i] + 0.5;
        let want = (1.0 / f64::from(x).sqrt()) as f32;
        // `precise::rsqrt` and WGSL's `inverseSqrt`: within 2 ULP.
        let ulp = f32::from_bits(want.to_bits() + 1) - want;
        assert!(
            (got[i] - want).abs() <= 2.0 * ulp,
            "rsqrt({x}) = {} not {want}",
            got[i]
        );
        assert_eq!(user[i], 42.0 + 7.0, "the bfloat calls of thread {i}");
    }
}

// ---------------------------------------------------------------------
// 7. Static member constants that name each other.

#[test]
fn static_members_name_their_struct_s_other_members() {
    let body = "\
#define CONST static constant constexpr const
struct Plain {
  CONST int A = 6;
  CONST int B = A + 2;
};
template <int M, int R>
struct Tiles {};
template <>
struct Tiles<6, 3> {
  CONST int OUT = 6;
  CONST int FILTER = 3;
  CONST int IN = OUT + FILTER - 1;
  CONST float table[IN] = {1, 2, 3, 4, 5, 6, 7, 8};
};
template <int M>
struct Gen {
  CONST int A = M;
  CONST int B = A * 2;
};
constant int A = 100;
static_assert(Plain::B == 8 && Tiles<6, 3>::IN == 8 && Gen<5>::B == 10, \"members first\");
kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  o[i] = Tiles<6, 3>::table[i % Tiles<6, 3>::IN] + float(Plain::B + Gen<4>::B + A);
}
";
    translate_body(body);
}

// ---------------------------------------------------------------------
// 8. MetalPerformancePrimitives.

#[test]
fn the_tensor_operations_framework_is_refused_at_its_include() {
    // Its matmul2d is provided (tests/tensor_ops.rs); convolution2d is not.
    let body = "#include <MetalPerformancePrimitives/MPPTensorOpsConvolution2d.h>\nkernel void k(device float* o [[buffer(0)]]) { o[0] = 1.0f; }\n";
    common::source::assert_error(
        body,
        "<MetalPerformancePrimitives",
        0,
        "`<MetalPerformancePrimitives/MPPTensorOpsConvolution2d.h>` declares MetalPerformancePrimitives' tensor operations",
    );
    assert_eq!(common::source::first_code(body), Code::NoWebGpuEquivalent);
    let src = format!("{PRELUDE}{body}");
    let f = Library::from_source("t.metal", &src, &Options::default()).unwrap_err();
    assert_eq!(f.diagnostics.0.len(), 1, "{}", f.render());
}
