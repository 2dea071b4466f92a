//! More forms found in machine-learning kernel libraries: `nullptr` passed
//! for a pointer parameter (directly, through `?:` with a constant
//! condition, through a pointer variable or a default argument), which
//! gives the callee a translation where that parameter is known to be null;
//! the kernels run on the GPU against a CPU reference.
// Without the runner the GPU tests are left out.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{assert_error, first_code};
use msl2wgsl::diagnostics::Code;

/// A reduction that uses threadgroup scratch memory only when it has more
/// than one simdgroup's worth of partial results, and is handed `nullptr`
/// otherwise (`kSize == 0 ? nullptr : mem`); a helper that tests its
/// optional pointer with `!= nullptr`, `if (p)` and `p ?:`; a pointer
/// variable initialised to `nullptr` by a constant `?:`; a default
/// argument `= nullptr` forwarded to another helper.
const NULL_ARGUMENTS: &str = r#"
template <int N>
struct Reducer {
  static constant constexpr const int tgp_size = N > 1 ? N : 0;
  static constant constexpr const bool uses_tgp = N > 1;
  static void run(device const float* in, device float* out,
                  threadgroup float* scratch, uint lid) {
    float v = in[lid] * 2.0f;
    if (uses_tgp) {
      threadgroup float* slot = scratch + lid;
      slot[0] = v;
      threadgroup_barrier(mem_flags::mem_threadgroup);
      v = scratch[0] + scratch[N - 1];
    }
    out[lid] = v;
  }
};

float bias_of(thread const int* bias) {
  return bias ? float(bias[0]) : -1.0f;
}

void write_pair(device float* out, thread const int* bias, uint lid, float v) {
  if (bias != nullptr) {
    out[lid] = v + float(*bias);
  } else {
    out[lid] = v + 100.0f;
  }
  if (!bias) {
    out[lid] += 1000.0f;
  }
  out[lid] += bias_of(bias) * 10000.0f;
}

void scaled(device float* out, uint lid, float v, thread const int* bias = nullptr) {
  write_pair(out, bias, lid, v * 3.0f);
}

template <int N>
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint lid [[thread_position_in_threadgroup]]) {
  using R = Reducer<N>;
  threadgroup float mem[R::tgp_size == 0 ? 1 : R::tgp_size];
  R::run(in, out, R::tgp_size == 0 ? nullptr : mem, lid);
  int three = 3;
  thread const int* p = N > 1 ? &three : nullptr;
  write_pair(out + 4, p, lid, in[lid]);
  write_pair(out + 8, nullptr, lid, in[lid]);
  scaled(out + 12, lid, in[lid]);
  scaled(out + 16, lid, in[lid], &three);
}
template [[host_name("k1")]] kernel void k<1>(device const float*, device float*, uint);
template [[host_name("k4")]] kernel void k<4>(device const float*, device float*, uint);
"#;

/// What `write_pair` stores for `v` with bias `b` (`None`: null).
fn pair(v: f32, b: Option<i32>) -> f32 {
    match b {
        Some(b) => v + b as f32 + b as f32 * 10000.0,
        None => v + 100.0 + 1000.0 - 10000.0,
    }
}

#[cfg(feature = "runner")]
#[test]
fn null_pointer_arguments_specialise_the_callee_on_gpu() {
    let input = [1.5f32, -2.0, 4.25, 8.0];
    for (entry, n) in [("k1", 1usize), ("k4", 4)] {
        let Some(got) = common::source::run_body_f32s(
            NULL_ARGUMENTS,
            entry,
            (4, 4),
            vec![(0, common::f32_bytes(&input)), (1, vec![0u8; 20 * 4])],
            1,
        ) else {
            return;
        };
        for (i, &x) in input.iter().enumerate() {
            let reduced = if n > 1 {
                input[0] * 2.0 + input[n - 1] * 2.0
            } else {
                x * 2.0
            };
            let bias = (n > 1).then_some(3);
            let want = [
                reduced,
                pair(x, bias),
                pair(x, None),
                pair(x * 3.0, None),
                pair(x * 3.0, Some(3)),
            ];
            for (j, w) in want.iter().enumerate() {
                assert_eq!(got[j * 4 + i], *w, "{entry}: out[{}]", j * 4 + i);
            }
        }
    }
}

/// A helper that dereferences a pointer parameter without testing it,
/// called with `nullptr`: the use is located, with the call's context.
#[test]
fn dereferencing_a_null_pointer_parameter_is_located() {
    let body = r#"
float first(thread const float* p) { return p[0] + 1.0f; }
kernel void k(device float* out [[buffer(0)]]) { out[0] = first(nullptr); }
"#;
    let text = assert_error(
        body,
        "p[0]",
        0,
        "this pointer is null here: it cannot be dereferenced, indexed or offset",
    );
    assert_eq!(first_code(body), Code::InvalidOperands);
    assert!(text.contains("`nullptr` for a pointer parameter"), "{text}");
}

/// `*p` and `p + 1` of a pointer known to be null are refused the same way.
#[test]
fn null_pointer_dereference_and_arithmetic_are_located() {
    let deref = r#"
float first(thread const float* p) { return *p; }
kernel void k(device float* out [[buffer(0)]]) { out[0] = first(nullptr); }
"#;
    assert_error(deref, "*p", 0, "this pointer is null here");
    let offset = r#"
float second(thread const float* p) { thread const float* q = p + 1; return q[0]; }
kernel void k(device float* out [[buffer(0)]]) { out[0] = second(nullptr); }
"#;
    assert_error(offset, "p + 1", 0, "this pointer is null here");
}

/// A pointer variable that starts null cannot later be made to point at
/// memory: its object is fixed at translation time.
#[test]
fn pointing_a_null_pointer_variable_at_memory_is_refused() {
    let body = r#"
kernel void k(device float* out [[buffer(0)]]) {
  float x = 2.0f;
  thread float* p = nullptr;
  p = &x;
  out[0] = 1.0f;
}
"#;
    assert_error(
        body,
        "p = &x",
        0,
        "`p` is null from its declaration (or from every call of this specialisation); it cannot be made to point at memory later",
    );
    assert_eq!(first_code(body), Code::Unsupported);
}

/// `nullptr` where a value is needed keeps its refusal.
#[test]
fn null_pointer_as_a_value_is_still_refused() {
    let body = r#"
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  thread float* p = i > 0 ? nullptr : &out[0];
  out[0] = 1.0f;
}
"#;
    assert_error(body, "nullptr", 0, "a null pointer is not supported here");
}

/// A program-scope `constant` scalar passed for a `const constant int&`
/// parameter that elsewhere takes a buffer (MLX's sort passes a named zero
/// for a stride), and a temporary bound to a `const thread` reference.
const CONSTANT_REFERENCES: &str = r#"
constant constexpr const int zero_stride = 0;
float pick(device const float* in, const constant int& stride, const thread float& scale, uint i) {
  return in[i * stride] * scale;
}
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              const constant int& stride [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  out[i] = pick(in, zero_stride, in[i] + 1.0f, i) + pick(in, stride, 2.0f, i) * 100.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn constant_scalars_bind_constant_references_on_gpu() {
    let input = [1.5f32, -2.0, 4.25, 8.0, 0.5, 3.0, -1.0, 2.5];
    let Some(got) = common::source::run_body_f32s(
        CONSTANT_REFERENCES,
        "k",
        (4, 4),
        vec![
            (0, common::f32_bytes(&input)),
            (1, vec![0u8; 16]),
            (2, 2i32.to_le_bytes().to_vec()),
        ],
        1,
    ) else {
        return;
    };
    for i in 0..4 {
        let want = input[0] * (input[i] + 1.0) + input[i * 2] * 2.0 * 100.0;
        assert_eq!(got[i], want, "out[{i}]");
    }
}

/// A helper looping over `x[i]` of a `thread float*` given either one
/// local (`&sum`, `N = 1`) or a local array (`N = 3`); a member function
/// template taking `thread U*` called with a local array and with a pointer
/// into one (`vals + 1`), which forwards it to another helper.
const THREAD_ARRAYS: &str = r#"
template <int N = 1>
void scale_all(thread float* x, float by) {
  for (int i = 0; i < N; i++) {
    x[i] = x[i] * by + float(i);
  }
}
float total(thread const float* v, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) {
    s += v[i] * float(i + 1);
  }
  return s;
}
template <typename U>
struct ArgMax {
  template <int N>
  uint best_of(thread U* vals, uint offset) thread {
    uint best = offset;
    U v = vals[0];
    for (int i = 1; i < N; i++) {
      if (vals[i] > v) {
        v = vals[i];
        best = offset + i;
      }
    }
    vals[0] = v;
    return best;
  }
};
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  float sum = in[i];
  scale_all(&sum, 2.0f);
  float three[3] = {in[i], in[i] + 1.0f, in[i] * 3.0f};
  scale_all<3>(three, 0.5f);
  ArgMax<float> op;
  float vals[4] = {in[i], -in[i], in[i] * in[i], 1.0f};
  uint at = op.template best_of<4>(vals, 10);
  uint tail = op.template best_of<3>(vals + 1, 20);
  out[4 * i + 0] = sum;
  out[4 * i + 1] = total(three, 3);
  out[4 * i + 2] = float(at) + vals[0] * 100.0f;
  out[4 * i + 3] = float(tail) + vals[1] * 100.0f + total(vals + 2, 2) * 1000.0f;
}
"#;

/// What `ArgMax::best_of<n>` returns for `vals` from `offset`, and the
/// best value it stores in `vals[0]`.
fn best_of(vals: &[f32], offset: u32) -> (u32, f32) {
    let mut best = (offset, vals[0]);
    for (i, &v) in vals.iter().enumerate().skip(1) {
        if v > best.1 {
            best = (offset + i as u32, v);
        }
    }
    best
}

#[cfg(feature = "runner")]
#[test]
fn thread_arrays_and_single_objects_pass_as_pointers_on_gpu() {
    let input = [1.5f32, -2.0, 4.25, 0.5];
    let Some(got) = common::source::run_body_f32s(
        THREAD_ARRAYS,
        "k",
        (4, 4),
        vec![(0, common::f32_bytes(&input)), (1, vec![0u8; 64])],
        1,
    ) else {
        return;
    };
    for (i, &x) in input.iter().enumerate() {
        let three: Vec<f32> = [x, x + 1.0, x * 3.0]
            .iter()
            .enumerate()
            .map(|(j, v)| v * 0.5 + j as f32)
            .collect();
        let total = |v: &[f32]| -> f32 {
            v.iter()
                .enumerate()
                .fold(0.0, |s, (j, &e)| s + e * (j + 1) as f32)
        };
        let mut vals = [x, -x, x * x, 1.0];
        let (at, best) = best_of(&vals, 10);
        vals[0] = best;
        let (tail, best_tail) = best_of(&vals[1..], 20);
        vals[1] = best_tail;
        let want = [
            x * 2.0,
            total(&three),
            at as f32 + vals[0] * 100.0,
            tail as f32 + vals[1] * 100.0 + total(&vals[2..]) * 1000.0,
        ];
        for (j, w) in want.iter().enumerate() {
            assert_eq!(got[4 * i + j], *w, "out[{}]", 4 * i + j);
        }
    }
}

/// A constant index other than 0 of a pointer to one object is outside it.
#[test]
fn a_constant_index_past_a_single_object_is_located() {
    let body = r#"
float second(thread float* x) { return x[1]; }
kernel void k(device float* out [[buffer(0)]]) { float s = 1.0f; out[0] = second(&s); }
"#;
    assert_error(
        body,
        "1]",
        0,
        "this index is outside the single object the pointer points to",
    );
    assert_eq!(first_code(body), Code::IndexOutOfBounds);
}

/// Conversion functions ([class.conv.fct]) used by casts and implicit
/// conversions: `static_cast<float>(c)`, `float(c)`, `float2(c)`,
/// `float f = c;`, `return c;`, and `static_cast<int>(c)` through the only
/// scalar one; `is_convertible_v` of scalar and vector types, checked by
/// `static_assert` and choosing a branch.
const CONVERSIONS: &str = r#"
struct Cplx {
  float re;
  float im;
  constexpr operator float() const thread { return re; }
  constexpr operator float2() const thread { return float2(re, im); }
};
struct Level {
  half v;
  operator half() const thread { return v * 2.0h; }
};
static_assert(is_convertible_v<int, float>, "scalar");
static_assert(is_convertible_v<float, float4>, "broadcast");
static_assert(!is_convertible_v<float4, float>, "narrowing vector");
static_assert(!is_convertible_v<float2, half2>, "vector types");
static_assert(is_convertible_v<Cplx, Cplx>, "itself");
template <typename T>
float widen(T x) {
  if (is_convertible_v<T, float4>) {
    return 1000.0f;
  }
  return 0.0f;
}
float as_float(Cplx c) { return c; }
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  Cplx c = {in[i], in[i] * 3.0f};
  float f = c;
  float2 both = float2(c);
  Level l = {half(in[i])};
  out[6 * i + 0] = static_cast<float>(c);
  out[6 * i + 1] = float(c) + f;
  out[6 * i + 2] = both.y;
  out[6 * i + 3] = as_float(c);
  out[6 * i + 4] = float(static_cast<int>(l));
  out[6 * i + 5] = widen(in[i]) + widen(both);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn conversion_functions_and_is_convertible_on_gpu() {
    let input = [1.5f32, -2.25, 4.0, 0.75];
    let Some(got) = common::source::run_body_f32s(
        CONVERSIONS,
        "k",
        (4, 4),
        vec![(0, common::f32_bytes(&input)), (1, vec![0u8; 96])],
        1,
    ) else {
        return;
    };
    for (i, &x) in input.iter().enumerate() {
        // The inputs are exact in `half`; `int(2x)` truncates toward zero.
        let want = [x, 2.0 * x, 3.0 * x, x, ((2.0 * x) as i32) as f32, 1000.0];
        for (j, w) in want.iter().enumerate() {
            assert_eq!(got[6 * i + j], *w, "out[{}]", 6 * i + j);
        }
    }
}

/// `is_convertible_v` from a struct to another type would need overload
/// resolution over its conversion functions and constructors: refused
/// where it is written, not answered wrongly.
#[test]
fn is_convertible_of_a_struct_to_another_type_is_located() {
    let body = r#"
struct S { float x; };
static_assert(is_convertible_v<S, float>, "s");
kernel void k(device float* out [[buffer(0)]]) { out[0] = 1.0f; }
"#;
    assert_error(
        body,
        "is_convertible_v<S",
        0,
        "static assertion expression is not an integral constant expression: `is_convertible` from `S` to `float` is not evaluated at translation time",
    );
}

/// A complex-number struct template in the shape of MLX's: a converting
/// constructor template constrained by `enable_if` in a default template
/// argument that names the struct's own parameter and a variable template
/// with a partial specialisation, behind `&&` (whose right operand is not
/// evaluated when the left is false); copying `cx<float>(c)` takes the
/// implicit copy constructor, not the template. A `short` index into a
/// `threadgroup` pointer parameter.
const CONSTRAINED_CONSTRUCTORS: &str = r#"
template <typename T> struct cx;
template <typename T> static constexpr constant bool is_cx_v = false;
template <typename T> static constexpr constant bool is_cx_v<cx<T>> = true;
template <typename T>
struct cx {
  T re;
  T im;
  constexpr cx(T a, T b) thread : re(a), im(b) {}
  template <typename U, typename = typename enable_if<!is_cx_v<U> && is_convertible_v<U, T>>::type>
  constexpr cx(U x) thread : re(static_cast<T>(x)), im(static_cast<T>(1)) {}
};
float pick(const threadgroup float* xs, short at, short back) {
  return xs[at] + xs[back - at - 1] * 100.0f;
}
kernel void k(device const int* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_threadgroup]]) {
  threadgroup float t[8];
  t[i] = float(i) + 0.5f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  cx<float> c(in[i]);
  cx<float> d = cx<float>(c);
  d.im += 2.0f;
  out[3 * i + 0] = c.re + c.im * 10.0f;
  out[3 * i + 1] = d.re + d.im * 10.0f;
  out[3 * i + 2] = pick(t + 1, short(i % 4), short(6));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn constrained_constructor_templates_and_short_indices_on_gpu() {
    let input = [3i32, -7, 12, 0, 5, 9, -1, 2];
    let Some(got) = common::source::run_body_f32s(
        CONSTRAINED_CONSTRUCTORS,
        "k",
        (8, 8),
        vec![(0, common::ml::i32_bytes(&input)), (1, vec![0u8; 96])],
        1,
    ) else {
        return;
    };
    let t = |j: usize| j as f32 + 0.5;
    for (i, &x) in input.iter().enumerate() {
        let at = i % 4;
        let want = [
            x as f32 + 10.0,
            x as f32 + 30.0,
            t(1 + at) + t(1 + 6 - at - 1) * 100.0,
        ];
        for (j, w) in want.iter().enumerate() {
            assert_eq!(got[3 * i + j], *w, "out[{}]", 3 * i + j);
        }
    }
}

/// A conversion function template constrained by `enable_if`, declared once
/// per address space of the object as MLX's `complex_t` does (`const
/// thread`, `const device`): `static_cast<U>(c)` deduces `U` from the
/// target and picks the member for where the object is.
const CONVERSION_TEMPLATES: &str = r#"
template <typename T>
struct cx {
  T re;
  T im;
  template <typename U, typename = typename enable_if<is_convertible_v<T, U>>::type>
  constexpr operator U() const thread { return static_cast<U>(re); }
  template <typename U, typename = typename enable_if<is_convertible_v<T, U>>::type>
  constexpr operator U() const device { return static_cast<U>(re + im); }
};
template <typename U, typename T>
U cast_to(T v) { return static_cast<U>(v); }
kernel void k(device const float* in [[buffer(0)]], device cx<float>* pairs [[buffer(1)]],
              device float* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  cx<float> c = {in[i] * 2.0f, 1.0f};
  out[4 * i + 0] = float(cast_to<uchar>(c));
  out[4 * i + 1] = float(static_cast<int>(c));
  out[4 * i + 2] = static_cast<float>(pairs[i]);
  out[4 * i + 3] = float(static_cast<half>(pairs[i]));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn conversion_function_templates_by_object_space_on_gpu() {
    let input = [1.5f32, 7.25, 20.0, 3.0];
    let pairs = [0.5f32, 0.25, -3.0, 1.0, 8.0, 0.5, 2.0, -2.0];
    let Some(got) = common::source::run_body_f32s(
        CONVERSION_TEMPLATES,
        "k",
        (4, 4),
        vec![
            (0, common::f32_bytes(&input)),
            (1, common::f32_bytes(&pairs)),
            (2, vec![0u8; 64]),
        ],
        2,
    ) else {
        return;
    };
    for (i, &x) in input.iter().enumerate() {
        // The inputs double to exact small integers plus halves, which
        // `uchar` and `int` truncate; the sums are exact in `half`.
        let sum = pairs[2 * i] + pairs[2 * i + 1];
        let want = [
            ((2.0 * x) as u8) as f32,
            ((2.0 * x) as i32) as f32,
            sum,
            sum,
        ];
        for (j, w) in want.iter().enumerate() {
            assert_eq!(got[4 * i + j], *w, "out[{}]", 4 * i + j);
        }
    }
}

/// Out-of-line redeclarations of static data members initialized in their
/// class (`constexpr const float W<3>::t[2];`, as MLX's Winograd transforms
/// are written after the struct template's specialisation) declare nothing
/// new.
const STATIC_MEMBER_REDECLARATIONS: &str = r#"
template <int A> struct W { static constant constexpr const float t[2] = {1.0f * A, 2.0f * A}; };
struct V { static constant constexpr const float t[2] = {0.25f, 0.5f}; };
constant constexpr const float V::t[2];
constant constexpr const float W<3>::t[2];
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = W<3>::t[i % 2] + V::t[(i + 1) % 2];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn static_member_redeclarations_on_gpu() {
    let Some(got) = common::source::run_body_f32s(
        STATIC_MEMBER_REDECLARATIONS,
        "k",
        (4, 4),
        vec![(0, vec![0u8; 16])],
        0,
    ) else {
        return;
    };
    assert_eq!(got, [3.5, 6.25, 3.5, 6.25]);
}

/// `coherent(system)` memory (kept coherent with the CPU while a dispatch
/// runs, as MLX's fences spin on it) has no WebGPU equivalent.
#[test]
fn coherent_memory_is_refused_where_written() {
    let body = r#"
kernel void k(volatile coherent(system) device uint* t [[buffer(0)]]) { t[0] = 1; }
"#;
    assert_error(
        body,
        "coherent(system)",
        0,
        "`coherent(system)` memory is not supported: WebGPU keeps no memory coherent with the CPU and other devices while a dispatch runs",
    );
    assert_eq!(first_code(body), Code::NoWebGpuEquivalent);
    let device = body.replace("system", "device");
    assert_error(
        &device,
        "coherent(device)",
        0,
        "`coherent(device)` memory is not supported: WebGPU keeps no memory coherent between threadgroups",
    );
}

/// Pointer variables initialized with an array, which decays to a pointer
/// to its first element: a `threadgroup` tile (as MLX's attention kernel
/// names its shared-memory blocks) and a local array, then offset and
/// passed on.
const ARRAY_POINTER_VARIABLES: &str = r#"
float sum2(thread const float* v) { return v[0] + v[1]; }
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_threadgroup]]) {
  threadgroup float tile[8];
  threadgroup float* t = tile;
  t[i] = in[i] * 2.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float local[3] = {in[i], 10.0f, 100.0f};
  thread float* q = local;
  q += 1;
  out[i] = t[(i + 1) % 8] + sum2(q) + q[-1];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn array_pointer_variables_on_gpu() {
    let input = [1.5f32, -2.0, 4.25, 0.5, 3.0, 7.0, -1.25, 2.5];
    let Some(got) = common::source::run_body_f32s(
        ARRAY_POINTER_VARIABLES,
        "k",
        (8, 8),
        vec![(0, common::f32_bytes(&input)), (1, vec![0u8; 32])],
        1,
    ) else {
        return;
    };
    for (i, &x) in input.iter().enumerate() {
        let want = input[(i + 1) % 8] * 2.0 + 110.0 + x;
        assert_eq!(got[i], want, "out[{i}]");
    }
}

/// Functions returning one of their reference parameters (`thread cx<T>&
/// operator+=(thread cx<T>& a, cx<T> b) { ..; return a; }`, as MLX's
/// complex.h declares them per address space): the call is that argument,
/// used as a statement, read (`(c += d).im`) and assigned through
/// (`bump(v, 1.0f) *= 2.0f`).
const REFERENCE_RESULTS: &str = r#"
template <typename T> struct cx { T re; T im; };
template <typename T>
constexpr thread cx<T>& operator+=(thread cx<T>& a, cx<T> b) { a.re += b.re; a.im += b.im; return a; }
template <typename T>
constexpr device cx<T>& operator+=(device cx<T>& a, cx<T> b) { a.re += b.re; a.im += b.im; return a; }
thread float& bump(thread float& x, float by) {
  if (by < 0.0f) { return x; }
  x += by;
  return x;
}
kernel void k(device const float* in [[buffer(0)]], device cx<float>* acc [[buffer(1)]], device float* out [[buffer(2)]],
              uint i [[thread_position_in_grid]]) {
  cx<float> c = {in[i], 1.0f};
  cx<float> d = {2.0f, 3.0f};
  c += d;
  float im = (c += d).im;
  acc[i] += c;
  float v = in[i];
  bump(v, 1.0f) *= 2.0f;
  bump(v, -1.0f) += 0.5f;
  out[3 * i + 0] = c.re;
  out[3 * i + 1] = im;
  out[3 * i + 2] = v;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn functions_returning_a_reference_parameter_on_gpu() {
    let input = [1.5f32, -2.0, 4.25, 0.5];
    let acc = [10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0];
    let Some(out) = common::source::run_body(
        REFERENCE_RESULTS,
        "k",
        (4, 4),
        vec![
            (0, common::f32_bytes(&input)),
            (1, common::f32_bytes(&acc)),
            (2, vec![0u8; 48]),
        ],
    ) else {
        return;
    };
    let (got, sums) = (common::f32s(&out[&2]), common::f32s(&out[&1]));
    for (i, &x) in input.iter().enumerate() {
        let (re, im) = (x + 4.0, 7.0);
        let want = [re, im, (x + 1.0) * 2.0 + 0.5];
        for (j, w) in want.iter().enumerate() {
            assert_eq!(got[3 * i + j], *w, "out[{}]", 3 * i + j);
        }
        assert_eq!(sums[2 * i], acc[2 * i] + re, "acc[{i}].re");
        assert_eq!(sums[2 * i + 1], acc[2 * i + 1] + im, "acc[{i}].im");
    }
}
