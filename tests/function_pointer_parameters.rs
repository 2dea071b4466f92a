//! Template parameters of function pointer type given a function's name
//! (`template <typename T, PairFunc<T> f> .. f(x, y)`, instantiated with
//! `radix2<float>`), as MLX's FFT picks its codelets: the call is resolved
//! at translation, as Metal resolves it. Run on the GPU against a CPU
//! reference; function pointers that would exist at run time are refused
//! (E0402), located. With them, clang's `__builtin_ctz` and friends.
// Without the runner the GPU tests are left out.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::assert_error;

/// Two-point codelets chosen by a template argument, passed on through a
/// second template and a macro, as an FFT's radix steps are.
const CODELETS: &str = r#"
template <typename T>
using PairFunc = void (*)(thread vec<T, 2>*, thread vec<T, 2>*);

template <typename T>
void swap_pair(thread vec<T, 2>* x, thread vec<T, 2>* y) {
  y[0] = x[1];
  y[1] = x[0];
}

template <typename T>
void sum_diff(thread vec<T, 2>* x, thread vec<T, 2>* y) {
  y[0] = x[0] + x[1];
  y[1] = x[0] - x[1];
}

void scale_first(thread float2* x, thread float2* y) {
  y[0] = x[0] * 3.0;
  y[1] = x[1];
}

template <typename T, int n, PairFunc<T> f>
void apply(thread vec<T, 2>* x, thread vec<T, 2>* y) {
  for (int i = 0; i < n; i++) {
    f(x, y);
    x[0] = y[0];
    x[1] = y[1];
  }
}

template <typename T, int radix, PairFunc<T> f>
void steps(thread vec<T, 2>* x, thread vec<T, 2>* y) {
  constexpr short power = __builtin_ctz(radix);
  for (int s = 0; s < power; s++) {
    apply<T, 1, f>(x, y);
  }
}

#define STEP(radix, func) steps<float, radix, func<float>>(x, y)

kernel void codelets(const device float2* in [[buffer(0)]],
                     device float2* out [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
  float2 x[2] = {in[2 * i], in[2 * i + 1]};
  float2 y[2];
  STEP(4, sum_diff);
  apply<float, 1, swap_pair<float>>(x, y);
  apply<float, 1, &scale_first>(x, y);
  out[2 * i] = y[0];
  out[2 * i + 1] = y[1] + float2(__builtin_popcount(i), __builtin_clz(i + 1));
}
"#;

#[test]
#[cfg(feature = "runner")]
fn calls_through_function_template_arguments_on_gpu() {
    let n = 16usize;
    let x: Vec<f32> = (0..n * 4).map(|k| ((k * 5) % 7) as f32 - 3.0).collect();
    let Some(got) = common::source::run_body_f32s(
        CODELETS,
        "codelets",
        (n as u32, 16),
        vec![(0, common::f32_bytes(&x)), (1, vec![0u8; 16 * n])],
        1,
    ) else {
        return;
    };
    for i in 0..n {
        let mut a = [x[4 * i], x[4 * i + 1]];
        let mut b = [x[4 * i + 2], x[4 * i + 3]];
        // __builtin_ctz(4) = 2 steps of sum_diff.
        for _ in 0..2 {
            let s = [a[0] + b[0], a[1] + b[1]];
            let d = [a[0] - b[0], a[1] - b[1]];
            (a, b) = (s, d);
        }
        (a, b) = (b, a);
        a = [a[0] * 3.0, a[1] * 3.0];
        let u = i as u32;
        let want = [
            a[0],
            a[1],
            b[0] + u.count_ones() as f32,
            b[1] + (u + 1).leading_zeros() as f32,
        ];
        assert_eq!(&got[4 * i..4 * i + 4], &want, "thread {i}");
    }
}

/// A variable of function pointer type would be called through at run
/// time: refused where its type is written.
#[test]
fn a_function_pointer_variable_is_refused() {
    let body = r#"
using UnaryFunc = float (*)(float);
float twice(float v) { return 2.0 * v; }
kernel void k(device float* out [[buffer(0)]]) {
  UnaryFunc f = twice;
  out[0] = f(out[0]);
}
"#;
    assert_error(
        body,
        "UnaryFunc f",
        0,
        "a function pointer (`R (*)(..)`) has no WebGPU equivalent: WGSL has no function pointers or indirect calls",
    );
    assert_eq!(
        common::source::first_code(body),
        msl2wgsl::diagnostics::Code::NoWebGpuEquivalent
    );
}

/// A function pointer parameter given something other than a function.
#[test]
fn a_function_parameter_given_a_value_is_located() {
    let body = r#"
using UnaryFunc = float (*)(float);
template <UnaryFunc f>
float call(float v) { return f(v); }
kernel void k(device float* out [[buffer(0)]]) {
  out[0] = call<3>(out[0]);
}
"#;
    assert_error(
        body,
        "3>",
        0,
        "template parameter `f` has a function pointer type: it needs the name of a function",
    );
}

/// Locals initialized from a function (`auto do_gemm = gemm_loop<..>;`,
/// as MLX's gather kernels pick a loop): each stands for the function it
/// holds, so calling it calls that function, resolved at translation.
const FUNCTION_LOCALS: &str = r#"
float twice(float v) { return 2.0 * v; }
template <int N> float times(float v) { return float(N) * v; }
template <typename T, bool Neg> T maybe_neg(T v) { return Neg ? -v : v; }

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint id [[thread_position_in_grid]]) {
  auto f = twice;
  auto g = times<3>;
  auto h = &times<4>;
  float x = in[id];
  float s = f(x) + g(x) * 10.0f;
  {
    auto n = maybe_neg<float, true>;
    s += h(n(x)) * 100.0f;
  }
  out[id] = s;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn locals_holding_functions_on_gpu() {
    let threads = 4usize;
    let input: Vec<f32> = (0..threads).map(|i| i as f32 * 0.5 + 0.25).collect();
    let Some(got) = common::source::run_floats(FUNCTION_LOCALS, &input) else {
        return;
    };
    for (i, &x) in input.iter().enumerate() {
        // Quarters times small integers: exact in `f32`.
        let want = 2.0 * x + 3.0 * x * 10.0 + 4.0 * -x * 100.0;
        assert_eq!(got[i], want, "thread {i}");
    }
}

/// A local holding a function that is given another one, or whose name a
/// nested declaration takes, would not stand for one function: refused
/// where that happens.
#[test]
fn a_local_holding_a_function_changed_or_hidden_is_located() {
    let changed = r#"
float twice(float v) { return 2.0 * v; }
float thrice(float v) { return 3.0 * v; }
kernel void k(device float* out [[buffer(0)]]) {
  auto f = twice;
  if (out[0] > 0) {
    f = thrice;
  }
  out[0] = f(out[0]);
}
"#;
    assert_error(
        changed,
        "f = thrice",
        0,
        "`f` holds the function it was initialized with: a local holding a function is not supported where it is changed or its name is declared again",
    );
    let hidden = r#"
float twice(float v) { return 2.0 * v; }
kernel void k(device float* out [[buffer(0)]]) {
  auto f = twice;
  for (int i = 0; i < 2; i++) {
    float f = out[i];
    out[i] = f;
  }
}
"#;
    assert_error(hidden, "f = out", 0, "`f` holds the function");
}
