//! Lambda expressions (C++11 [expr.prim.lambda], which Metal accepts):
//! generic lambdas passed to function templates and called with
//! `integral_constant`s (MLX's `const_for_loop` and `dispatch_bool`, in its
//! NAX kernels), captures by reference and by value, `mutable`, explicit
//! capture lists, lambdas called where written; each against a CPU
//! reference on the adapter's GPU (lavapipe in CI). Refused forms are
//! located errors.

mod common;

use common::source::assert_error;
#[cfg(feature = "runner")]
use common::source::run_floats;

/// MLX's `integral_constant` and its compile-time loop and boolean
/// dispatch, written here in their shape (both sources below use them).
#[cfg(feature = "runner")]
const COMPILE_TIME_HELPERS: &str = r#"
template <typename T, T v> struct integral_constant {
  static constexpr constant T value = v;
  constexpr operator T() const { return v; }
};
template <int V> using Int = integral_constant<int, V>;
template <bool B> using bool_constant = integral_constant<bool, B>;
using true_type = bool_constant<true>;
using false_type = bool_constant<false>;

template <int start, int stop, int step, typename F>
void const_for_loop(F f) {
  if constexpr (start < stop) {
    constexpr auto idx = Int<start>{};
    f(idx);
    const_for_loop<start + step, stop, step, F>(f);
  }
}

template <typename F>
void dispatch_bool(bool v, F f) {
  if (v) { f(true_type{}); } else { f(false_type{}); }
}
"#;

/// A generic lambda called with `Int<0>` .. `Int<3>` and with
/// `true_type`/`false_type`, writing captured locals by reference; a
/// `constexpr` local used in the body as a constant.
#[cfg(feature = "runner")]
const COMPILE_TIME_LOOPS: &str = r#"
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  float acc[4] = {0, 0, 0, 0};
  float x = in[gid];
  constexpr int N = 3;
  const_for_loop<0, 4, 1>([&](auto i) {
    float scaled[N + 1];
    scaled[N] = x * float(i.value + N);
    acc[i.value] = scaled[N];
  });
  float sign = 0.0f;
  dispatch_bool(x > 0.0f, [&](auto positive) {
    dispatch_bool(x > 2.0f, [&](auto large) {
      if constexpr (positive.value) {
        sign = large.value ? 2.0f : 1.0f;
      } else {
        sign = -1.0f;
      }
    });
  });
  out[gid] = acc[0] + acc[1] * 10.0f + acc[2] * 100.0f + acc[3] * 1000.0f + sign;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn generic_lambdas_run_in_compile_time_loops() {
    let xs: Vec<f32> = (0..32).map(|i| i as f32 * 0.5 - 4.0).collect();
    let source = format!("{COMPILE_TIME_HELPERS}{COMPILE_TIME_LOOPS}");
    let Some(got) = run_floats(&source, &xs) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        let acc = |k: f32| x * (k + 3.0);
        let sign = match x {
            x if x > 2.0 => 2.0,
            x if x > 0.0 => 1.0,
            _ => -1.0,
        };
        let want = acc(0.0) + acc(1.0) * 10.0 + acc(2.0) * 100.0 + acc(3.0) * 1000.0 + sign;
        assert_eq!(got[i], want, "x = {x}");
    }
}

/// Captures: a closure passed by value still refers to what it captured
/// by reference; `[=]` and `mutable` copies; an explicit list; a buffer
/// pointer; a lambda called where it is written.
#[cfg(feature = "runner")]
const CAPTURES: &str = r#"
template <typename F> float twice(F f, float v) { return f(f(v)); }
struct Acc { float total; void add(float v) { total += v; } };
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  float x = in[gid];
  int calls = 0;
  auto inc = [&](float v) { calls++; return v + x; };
  float a = twice(inc, 1.0f);
  float b = [&]() { return x * 3.0f; }();
  int copy = 5;
  auto m = [=]() mutable { copy += 1; return copy; };
  int c1 = m();
  int c2 = m();
  Acc acc{0.0f};
  auto adder = [&acc, x](float w) { acc.add(w * x); };
  adder(1.0f);
  adder(2.0f);
  auto next = [&](uint i) -> float { return in[(i + 1) % 32]; };
  out[gid] = a + b * 10.0f + float(calls) * 100.0f + float(c1 + c2 + copy) * 1000.0f
      + acc.total * 10000.0f + next(gid) * 100000.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn captures_by_reference_and_by_value_run() {
    let xs: Vec<f32> = (0..32).map(|i| i as f32 * 0.5 - 4.0).collect();
    let Some(got) = run_floats(CAPTURES, &xs) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        let next = xs[(i + 1) % 32];
        // twice(inc, 1) = 1 + 2x with two calls; m() copies: 6, 7, and 5
        // left outside; acc = 1x + 2x.
        let want = (1.0 + 2.0 * x) + 30.0 * x + 200.0 + 18_000.0 + 30_000.0 * x + next * 100_000.0;
        assert_eq!(got[i], want, "x = {x}");
    }
}

#[test]
fn capturing_this_is_refused_where_written() {
    let body = "struct S {\n  float v;\n  float get() { auto f = [this]() { return v; }; return f(); }\n};\nkernel void k(device float* o [[buffer(0)]]) {\n  S s{1.0f};\n  o[0] = s.get();\n}\n";
    assert_error(
        body,
        "this]",
        0,
        "a lambda capturing `this`, `*this` or an initialized name (`x = e`) is not supported",
    );
}

#[test]
fn a_lambda_moving_a_pointer_it_copied_is_refused() {
    let body = "kernel void k(device float* o [[buffer(0)]]) {\n  device float* p = o;\n  auto f = [=]() mutable { p += 1; *p = 2.0f; };\n  f();\n  *p = 1.0f;\n}\n";
    assert_error(
        body,
        "p += 1",
        0,
        "a lambda that moves a pointer it captures by value is not supported",
    );
}

#[test]
fn init_captures_are_refused_where_written() {
    let body = "kernel void k(device float* o [[buffer(0)]]) {\n  float x = o[0];\n  auto f = [y = x]() { return y; };\n  o[0] = f();\n}\n";
    assert_error(
        body,
        "y = x",
        0,
        "a lambda capturing `this`, `*this` or an initialized name (`x = e`) is not supported",
    );
}

/// The scale both sources below choose in nested `dispatch_bool(K > 2)`,
/// `dispatch_bool(K % 2 == 0)` lambdas: `(big ? 2 : 1) + (even ? 0.5 : 0)`.
#[cfg(feature = "runner")]
fn dispatched_scale(k: i32) -> f32 {
    let big = if k > 2 { 2.0 } else { 1.0 };
    let even = if k % 2 == 0 { 0.5 } else { 0.0 };
    big + even
}

/// A pointer variable captured by reference and moved in the body (`x +=
/// 32`, MLX's quantized NAX GEMMs moving their `const device T* x`
/// kernel parameter inside nested `dispatch_bool` lambdas): the caller's
/// pointer moves, as read after the lambdas return and by later calls
/// (`const_for_loop` copies the closure into each call: the copies refer
/// to the same pointer).
#[cfg(feature = "runner")]
const MOVED_POINTER: &str = r#"
kernel void k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
              constant int& K [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
  x += gid;
  float acc = 0.0f;
  dispatch_bool(K > 2, [&](auto big) {
    dispatch_bool(K % 2 == 0, [&](auto even) {
      for (int k = 0; k < K; k++) {
        float scale = (big.value ? 2.0f : 1.0f) + (even.value ? 0.5f : 0.0f);
        acc += x[0] * scale;
        x += 32;
      }
    });
  });
  float after = x[0];
  const_for_loop<0, 2, 1>([&](auto i) { x += 32 * (i.value + 1); });
  auto back = [&]() { x -= 16; };
  back();
  back();
  out[gid] = acc + after * 1000.0f + x[0] * 100000.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn a_pointer_captured_by_reference_moves_the_callers() {
    let source = format!("{COMPILE_TIME_HELPERS}{MOVED_POINTER}");
    for k in [3i32, 4] {
        let n = 32usize;
        let steps = k as usize + 3;
        let xs: Vec<f32> = (0..n * steps).map(|i| (i % 5) as f32 - 2.0).collect();
        let out = common::source::run_body(
            &source,
            "k",
            (n as u32, 16),
            vec![
                (0, common::f32_bytes(&xs)),
                (1, vec![0; 4 * n]),
                (2, k.to_le_bytes().to_vec()),
            ],
        );
        let Some(out) = out else {
            return;
        };
        let got = common::f32s(&out[&1]);
        let scale = dispatched_scale(k);
        for (g, &got) in got.iter().enumerate() {
            let k = k as usize;
            let acc: f32 = (0..k).map(|s| xs[g + 32 * s] * scale).sum();
            // After the loop: K steps; then 32 + 64, then back 2 * 16.
            let after = xs[g + 32 * k];
            let last = xs[g + 32 * k + 96 - 32];
            let want = acc + after * 1000.0 + last * 100_000.0;
            assert_eq!(got, want, "K = {k}, thread {g}");
        }
    }
}

/// In a member function: the lambda calls the object's member function
/// templates unqualified and uses its static constants (MLX's NAX tiles:
/// `frag_at<idx_row.value, idx_col.value>()` inside nested
/// `const_for_loop`s); a static member named through a parameter object
/// (`pos.value`) is a template argument; a `const` local and a
/// `constant` buffer's value are captured by `const` reference.
#[cfg(feature = "runner")]
const MEMBER_LAMBDAS: &str = r#"
template <bool Positive, int Scale> float pick(float x) { return Positive ? x * float(Scale) : -x; }

struct Tile {
  static constexpr constant int kN = 2;
  float v[4];
  template <int i, int j> thread float& at() thread { return v[i * kN + j]; }
  template <int i, int j> const thread float& at() const thread { return v[i * kN + j]; }
  void fill(float x) {
    const_for_loop<0, kN, 1>([&](auto r) {
      const_for_loop<0, kN, 1>([&](auto c) {
        at<r.value, c.value>() = x * float(r.value * 10 + c.value) + float(kN);
      });
    });
  }
};

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              constant float& bias [[buffer(2)]],
              uint gid [[thread_position_in_grid]]) {
  Tile t;
  const float x = in[gid];
  t.fill(x);
  float r = 0.0f;
  dispatch_bool(x > 0.0f, [&](auto pos) { r = pick<pos.value, 3>(x) + bias; });
  out[gid] = t.v[0] + t.v[1] * 10.0f + t.v[2] * 100.0f + t.v[3] * 1000.0f + r * 10000.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn lambdas_in_member_functions_reach_the_object() {
    let xs: Vec<f32> = (0..32).map(|i| i as f32 * 0.5 - 4.0).collect();
    let source = format!("{COMPILE_TIME_HELPERS}{MEMBER_LAMBDAS}");
    let out = common::source::run_body(
        &source,
        "k",
        (32, 16),
        vec![
            (0, common::f32_bytes(&xs)),
            (1, vec![0; 4 * 32]),
            (2, common::f32_bytes(&[0.25])),
        ],
    );
    let Some(out) = out else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, &x) in xs.iter().enumerate() {
        let v = |r: f32, c: f32| x * (r * 10.0 + c) + 2.0;
        let r = if x > 0.0 { x * 3.0 } else { -x } + 0.25;
        let want = v(0.0, 0.0)
            + v(0.0, 1.0) * 10.0
            + v(1.0, 0.0) * 100.0
            + v(1.0, 1.0) * 1000.0
            + r * 10_000.0;
        assert_eq!(got[i], want, "x = {x}");
    }
}

/// MLX's quantized NAX GEMMs (`fp_quantized_nax.h`, `quantized_nax.h`):
/// a block loader holding a device and a threadgroup pointer, made before
/// nested `dispatch_bool` lambdas that capture it by reference, its
/// `const` `load()` and its `next()` (which moves its device pointer)
/// called in a loop in the inner lambda, which also moves the kernel's
/// `x`. The caller's loader and pointer move: after the lambdas, and
/// through a lambda called twice.
#[cfg(feature = "runner")]
const CAPTURED_LOADER: &str = r#"
struct Loader {
  const device float* src;
  threadgroup float* dst;
  int stride;
  Loader(const device float* src_, threadgroup float* dst_, int stride_, uint lid)
      : src(src_ + lid), dst(dst_ + lid), stride(stride_) {}
  void load() const { *dst = *src; }
  void next() { src += stride; }
};

kernel void k(device const float* w [[buffer(0)]], device const float* x [[buffer(1)]],
              device float* out [[buffer(2)]], constant int& K [[buffer(3)]],
              uint lid [[thread_position_in_threadgroup]],
              uint gid [[thread_position_in_grid]]) {
  threadgroup float tile[16];
  Loader loader(w, tile, 16, lid);
  x += gid;
  float acc = 0.0f;
  dispatch_bool(K > 2, [&](auto big) {
    dispatch_bool(K % 2 == 0, [&](auto even) {
      for (int k = 0; k < K; k++) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        loader.load();
        threadgroup_barrier(mem_flags::mem_threadgroup);
        float scale = (big.value ? 2.0f : 1.0f) + (even.value ? 0.5f : 0.0f);
        acc += tile[(lid + 1) % 16] * scale + x[0] * 10.0f;
        x += 32;
        loader.next();
      }
    });
  });
  auto step = [&]() { loader.next(); };
  step();
  step();
  threadgroup_barrier(mem_flags::mem_threadgroup);
  loader.load();
  out[gid] = acc + tile[lid] * 1000.0f + x[0] * 100000.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn an_object_holding_pointers_captured_by_reference_moves_the_callers() {
    let source = format!("{COMPILE_TIME_HELPERS}{CAPTURED_LOADER}");
    for k in [3i32, 4] {
        let n = 32usize;
        let ku = k as usize;
        let ws: Vec<f32> = (0..16 * (ku + 3)).map(|i| (i % 7) as f32 - 3.0).collect();
        let xs: Vec<f32> = (0..n * (ku + 1)).map(|i| (i % 5) as f32 - 2.0).collect();
        let out = common::source::run_body(
            &source,
            "k",
            (n as u32, 16),
            vec![
                (0, common::f32_bytes(&ws)),
                (1, common::f32_bytes(&xs)),
                (2, vec![0; 4 * n]),
                (3, k.to_le_bytes().to_vec()),
            ],
        );
        let Some(out) = out else {
            return;
        };
        let got = common::f32s(&out[&2]);
        let scale = dispatched_scale(k);
        for (g, &got) in got.iter().enumerate() {
            let lid = g % 16;
            let acc: f32 = (0..ku)
                .map(|s| ws[(lid + 1) % 16 + 16 * s] * scale + xs[g + 32 * s] * 10.0)
                .sum();
            // The loader moved K times in the loop and twice after it.
            let loaded = ws[lid + 16 * (ku + 2)];
            let want = acc + loaded * 1000.0 + xs[g + 32 * ku] * 100_000.0;
            assert_eq!(got, want, "K = {k}, thread {g}");
        }
    }
}

/// MLX's NAX kernels choose a form with `dispatch_bool` on a condition
/// that differs between SIMD groups (`sgp_sm != SM`), and the lambda's
/// body calls SIMD-group functions, here also in a helper's loop that
/// some SIMD groups `continue`. Under the 32-lane emulation the branch in
/// `dispatch_bool` is predicated like any other: the call operator the
/// helper calls through its function-object parameter is followed.
#[cfg(feature = "runner")]
const SIMD_GROUP_DISPATCH: &str = r#"
float looped(float s, int n, bool has) {
  float acc = 0.0f;
  for (int k = 0; k < n; k++) {
    threadgroup_barrier(mem_flags::mem_none);
    if (!has) continue;
    acc += simd_sum(s * float(k + 1));
  }
  return acc;
}

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint sg [[simdgroup_index_in_threadgroup]],
              uint i [[thread_position_in_grid]]) {
  float s = in[i];
  float t = 0.0f;
  dispatch_bool(sg % 2 == 1, [&](auto odd) {
    if constexpr (odd.value) {
      s = simd_sum(s);
    } else {
      s = simd_max(s);
    }
    t = looped(in[i], 3, odd.value);
  });
  out[i] = s + t * 1000.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn simd_group_functions_in_lambdas_chosen_per_simd_group_on_gpu() {
    let source = format!("{COMPILE_TIME_HELPERS}{SIMD_GROUP_DISPATCH}");
    // The emulation takes it whole: no fallback to the adapter's subgroups.
    let options = msl2wgsl::Options {
        simd: msl2wgsl::SimdGroups::Emulated32,
        ..msl2wgsl::Options::default()
    };
    let lib = msl2wgsl::Library::from_source(
        "t.metal",
        &format!("{}{source}", common::source::PRELUDE),
        &options,
    )
    .unwrap_or_else(|f| panic!("{}", f.render()));
    assert_eq!(lib.warnings(), "");
    let threads = 128usize;
    // Small integers: every sum is exact in `f32`.
    let xs: Vec<f32> = (0..threads).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let Some(got) = common::source::run_body_f32s(
        &source,
        "k",
        (threads as u32, 64),
        vec![(0, common::f32_bytes(&xs)), (1, vec![0u8; threads * 4])],
        1,
    ) else {
        return;
    };
    for (g, lanes) in xs.chunks(32).enumerate() {
        let odd = (g % 2) == 1;
        let sum: f32 = lanes.iter().sum();
        let max = lanes.iter().copied().fold(f32::MIN, f32::max);
        for l in 0..32 {
            let s = if odd { sum } else { max };
            let t = if odd { sum * (1.0 + 2.0 + 3.0) } else { 0.0 };
            assert_eq!(got[g * 32 + l], s + t * 1000.0, "SIMD group {g}, lane {l}");
        }
    }
}
