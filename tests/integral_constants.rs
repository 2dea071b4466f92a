//! Structs that stand for numbers (issue #17, GEMM libraries' strides):
//! an `integral_constant`-like struct template with a conversion function
//! and `constexpr` operator templates on pairs of constants. Mixed with
//! `short`/`int` operands, no operator template can be deduced (C++
//! [temp.deduct]: such a template is no candidate), so the built-in
//! operator takes the struct through its conversion function
//! ([over.match.oper], [over.built]); in conditions a struct with
//! `operator bool()` is contextually converted ([conv]/4). The kernels run
//! on the GPU against a CPU reference.
// Without the runner the GPU tests are left out.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{assert_error, first_code};
use msl2wgsl::diagnostics::Code;

/// Compile-time integers and the operators on two of them.
const CONSTANTS: &str = r#"
template <typename T, T v>
struct konst {
  static constexpr constant T value = v;
  using value_type = T;
  using type = konst;
  constexpr operator value_type() const thread noexcept { return value; }
};

template <int N>
using Int = konst<int, N>;

template <typename T, T tv, typename U, U uv>
constexpr auto operator*(konst<T, tv>, konst<U, uv>) {
  constexpr auto r = tv * uv;
  return konst<decltype(r), r>{};
}
template <typename T, T tv, typename U, U uv>
constexpr auto operator+(konst<T, tv>, konst<U, uv>) {
  constexpr auto r = tv + uv;
  return konst<decltype(r), r>{};
}
template <typename T, T tv, typename U, U uv>
constexpr auto operator<(konst<T, tv>, konst<U, uv>) {
  constexpr bool r = tv < uv;
  return konst<bool, r>{};
}
"#;

/// A register tile loaded with strides that may be constants or run-time
/// integers (a member function template), and arithmetic mixing both.
const TILE: &str = r#"
template <typename T, short R, short C>
struct Tile {
  T v[R * C];

  template <typename SX, typename SY>
  void load(const device T* src, SX str_x, SY str_y) thread {
    for (short i = 0; i < R; i++) {
      for (short j = 0; j < C; j++) {
        v[i * C + j] = src[i * str_x + j * str_y];
      }
    }
  }
  template <typename SX>
  void store(device T* dst, SX str_x) const thread {
    for (short i = 0; i < R; i++) {
      for (short j = 0; j < C; j++) {
        dst[i * str_x + j] = v[i * C + j];
      }
    }
  }
};

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              device int* probe [[buffer(2)]], uint id [[thread_position_in_grid]]) {
  const device float* src = in + id * 16;
  Tile<float, 2, 3> a;
  a.load(src, Int<4>{}, Int<1>{});
  Tile<float, 2, 3> b;
  int ld = 5;
  b.load(src, ld, Int<2>{});
  Tile<float, 2, 3> c;
  for (short e = 0; e < 6; e++) {
    c.v[e] = a.v[e] * 10.0f + b.v[e];
  }
  c.store(out + id * 8, Int<4>{});
  constexpr auto s = Int<2>{} * Int<3>{} + Int<1>{};
  constexpr auto lt = Int<2>{} < Int<3>{};
  short i = short(id);
  int mixed = i * Int<3>{} + Int<5>{} * int(id) - s;
  int neg = -Int<4>{};
  neg -= Int<1>{};
  probe[id * 4 + 0] = s;
  probe[id * 4 + 1] = mixed;
  probe[id * 4 + 2] = neg + (Int<2>{} < i ? 100 : 0);
  probe[id * 4 + 3] = lt ? int(id) : -1;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn constant_strides_mixed_with_integers_on_gpu() {
    let threads = 4usize;
    let input: Vec<f32> = (0..threads * 16).map(|i| i as f32 * 0.5 - 7.0).collect();
    let body = format!("{CONSTANTS}{TILE}");
    let Some(out) = common::source::run_body(
        &body,
        "k",
        (threads as u32, threads as u32),
        vec![
            (0, common::f32_bytes(&input)),
            (1, vec![0u8; threads * 8 * 4]),
            (2, vec![0u8; threads * 4 * 4]),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    let probe: Vec<i32> = out[&2]
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    for id in 0..threads {
        let src = &input[id * 16..];
        let mut want = [0.0f32; 8];
        for i in 0..2 {
            for j in 0..3 {
                let a = src[i * 4 + j];
                let b = src[i * 5 + j * 2];
                want[i * 4 + j] = a * 10.0 + b;
            }
        }
        assert_eq!(&got[id * 8..id * 8 + 8], &want, "tile of thread {id}");
        let i = id as i32;
        let want_probe = [7, i * 3 + 5 * i - 7, -5 + if 2 < i { 100 } else { 0 }, i];
        assert_eq!(
            &probe[id * 4..id * 4 + 4],
            &want_probe,
            "probes of thread {id}"
        );
    }
}

/// Masks that are structs with `operator bool()` (one per address space
/// the object may be in), read from a buffer, copied, and tested in `if`,
/// `!`, `&&` and `?:`, and converted to `float`.
const MASKS: &str = r#"
struct Always {
  char pad;
  constexpr operator bool() thread { return true; }
  constexpr operator bool() const device { return true; }
};

struct Flag {
  int bits;
  operator bool() const thread { return bits != 0; }
  operator bool() const device { return bits != 0; }
};

template <typename M>
float masked(const device M* masks, uint id, float x) {
  auto m = masks[id];
  if (!m) {
    return -1.0f;
  }
  float scale = float(m);
  return m ? x * scale + 1.0f : 0.0f;
}

kernel void k(device const Flag* flags [[buffer(0)]], device const Always* always [[buffer(1)]],
              device float* out [[buffer(2)]], uint id [[thread_position_in_grid]]) {
  float x = float(id);
  out[id * 3 + 0] = masked(flags, id, x);
  out[id * 3 + 1] = masked(always, id, x);
  Flag f = flags[id];
  out[id * 3 + 2] = (f && flags[id]) ? 2.0f : 3.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn struct_conditions_through_operator_bool_on_gpu() {
    let threads = 6usize;
    let bits: Vec<i32> = (0..threads as i32).map(|i| i % 3 - 1).collect();
    let Some(out) = common::source::run_body(
        MASKS,
        "k",
        (threads as u32, threads as u32),
        vec![
            (0, common::ml::i32_bytes(&bits)),
            (1, vec![0u8; threads * 4]),
            (2, vec![0u8; threads * 3 * 4]),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&2]);
    for id in 0..threads {
        let x = id as f32;
        let on = bits[id] != 0;
        let want = [
            if on { x + 1.0 } else { -1.0 },
            x + 1.0,
            if on { 2.0 } else { 3.0 },
        ];
        assert_eq!(&got[id * 3..id * 3 + 3], &want, "thread {id}");
    }
}

/// A struct without a conversion function: no operator template applies
/// and the built-in operator cannot take it.
#[test]
fn operator_without_viable_candidate_is_located_and_lists_candidates() {
    let body = format!(
        "{CONSTANTS}{}",
        r#"
struct Opaque { int x; };
kernel void k(device int* out [[buffer(0)]], uint id [[thread_position_in_grid]]) {
  short i = short(id);
  Opaque o = {3};
  out[id] = i * o;
}
"#
    );
    let text = assert_error(
        &body,
        "i * o",
        0,
        "no viable `operator*` for operands of type `short` and `Opaque`",
    );
    assert!(
        text.contains(
            "note: candidate template `operator*<T, tv, U, uv>` ignored: the argument for parameter 1 does not have its form, from which `T` is deduced"
        ),
        "{text}"
    );
    assert_eq!(first_code(&body), Code::NoMatchingOverload);
}

/// Two candidates neither of which takes the operands: each is a note.
#[test]
fn operator_with_several_rejected_candidates_lists_each() {
    let body = r#"
struct A { int x; };
struct B { int y; };
struct C { int z; };
A operator+(A a, A b) { return A{a.x + b.x}; }
B operator+(B a, B b) { return B{a.y + b.y}; }
template <typename T> T operator+(T a, C c) { return a; }
kernel void k(device int* out [[buffer(0)]], uint id [[thread_position_in_grid]]) {
  A a = {1};
  B b = {2};
  A r = a + b;
  out[id] = r.x;
}
"#;
    let text = assert_error(
        body,
        "a + b",
        0,
        "no viable `operator+` for operands of type `A` and `B`",
    );
    for want in [
        "candidate function `A operator+(A, A)` not viable: no known conversion from `B` to `A` for argument 2",
        "candidate function `B operator+(B, B)` not viable: no known conversion from `A` to `B` for argument 1",
        "candidate template `operator+`",
    ] {
        assert!(text.contains(want), "missing `{want}` in:\n{text}");
    }
}

/// A struct with conversion functions to two arithmetic types is not
/// converted for a built-in operator (C++ finds the built-in candidates
/// ambiguous): the operator is refused where it is written.
#[test]
fn two_arithmetic_conversions_are_refused() {
    let body = r#"
struct Two {
  operator int() const thread { return 1; }
  operator float() const thread { return 2.0f; }
};
kernel void k(device float* out [[buffer(0)]], uint id [[thread_position_in_grid]]) {
  Two t;
  out[id] = t * 2.0f;
}
"#;
    assert_error(body, "t * 2.0f", 0, "invalid operands to binary `*`");
}

/// A function template whose parameters name a struct template without
/// its defaulted last argument (`Acc<T, N>`), called with instances that
/// write it (`Acc<float, 4, Frag<float>>`): the arguments both write
/// deduce `T` and `N` ([temp.deduct.type]).
const DEFAULTED: &str = r#"
template <typename T>
struct Frag {
  static T twice(T x) { return x + x; }
};

template <typename T, int N, typename F = Frag<T>>
struct Acc {
  T v[N];
};

template <typename T, typename U, int N>
void madd(thread Acc<T, N>& d, thread Acc<U, N>& a, thread Acc<U, N>& b) {
  for (short i = 0; i < N; i++) {
    d.v[i] += Frag<T>::twice(T(a.v[i] * b.v[i]));
  }
}
"#;

const DEFAULTED_KERNEL: &str = r#"
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint id [[thread_position_in_grid]]) {
  Acc<float, 4, Frag<float>> d;
  Acc<int, 4, Frag<int>> a;
  Acc<int, 4> b;
  for (short i = 0; i < 4; i++) {
    d.v[i] = in[id * 4 + i];
    a.v[i] = i + 1;
    b.v[i] = int(id);
  }
  madd(d, a, b);
  for (short i = 0; i < 4; i++) {
    out[id * 4 + i] = d.v[i];
  }
}
"#;

#[cfg(feature = "runner")]
#[test]
fn deduction_through_defaulted_struct_arguments_on_gpu() {
    let threads = 4usize;
    let input: Vec<f32> = (0..threads * 4).map(|i| i as f32 * 0.5).collect();
    let body = format!("{DEFAULTED}{DEFAULTED_KERNEL}");
    let Some(out) = common::source::run_body(
        &body,
        "k",
        (threads as u32, threads as u32),
        vec![
            (0, common::f32_bytes(&input)),
            (1, vec![0u8; threads * 4 * 4]),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for id in 0..threads {
        for i in 0..4 {
            // Small integers: exact in `float`.
            let want = input[id * 4 + i] + 2.0 * ((i + 1) * id) as f32;
            assert_eq!(got[id * 4 + i], want, "element {i} of thread {id}");
        }
    }
}

/// Epilogue operations in the shape of a GEMM library's: static member
/// functions called through an object (`op.apply(x, c)`), alone or beside
/// a non-static overload ([class.static]/2: the object is not passed).
const EPILOGUES: &str = r#"
struct Add {
  static float apply(float x) { return x; }
  static float apply(float x, float c) { return x + c; }
};

struct Axpby {
  float alpha;
  float beta;
  static float apply(float x) { return x; }
  float apply(float x, float c) const thread { return alpha * x + beta * c; }
};

template <typename Op>
void finish(thread float* acc, const device float* c, const thread Op& op) {
  for (short k = 0; k < 2; k++) {
    acc[k] = op.apply(acc[k], c[k]) + op.apply(1.0f);
  }
}

kernel void k(device const float* c [[buffer(0)]], device float* out [[buffer(1)]],
              uint id [[thread_position_in_grid]]) {
  float a[2] = {float(id), float(id) + 0.5f};
  float b[2] = {float(id), float(id) + 0.5f};
  const Add add = {};
  const Axpby axpby = {2.0f, 0.25f};
  finish(a, c + id * 2, add);
  finish(b, c + id * 2, axpby);
  out[id * 4 + 0] = a[0];
  out[id * 4 + 1] = a[1];
  out[id * 4 + 2] = b[0];
  out[id * 4 + 3] = b[1];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn static_members_called_through_objects_on_gpu() {
    let threads = 4usize;
    let c: Vec<f32> = (0..threads * 2).map(|i| i as f32 * 4.0 - 6.0).collect();
    let Some(out) = common::source::run_body(
        EPILOGUES,
        "k",
        (threads as u32, threads as u32),
        vec![(0, common::f32_bytes(&c)), (1, vec![0u8; threads * 4 * 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for id in 0..threads {
        let mut want = [0.0f32; 4];
        for k in 0..2 {
            let x = id as f32 + 0.5 * k as f32;
            let ck = c[id * 2 + k];
            // Quarters and small integers: exact in `f32`.
            want[k] = x + ck + 1.0;
            want[2 + k] = 2.0 * x + 0.25 * ck + 1.0;
        }
        assert_eq!(&got[id * 4..id * 4 + 4], &want, "thread {id}");
    }
}

/// Metal's own `integral_constant` family (`<metal_type_traits>`) beside a
/// source's look-alike in its namespace (MLX's `mlx::steel`): distinct
/// types, so overloads on them differ; inside the namespace the unqualified
/// names are the source's, `metal::` names are Metal's, and after `using
/// namespace metal;` at global scope the unqualified names are Metal's.
const METAL_AND_OWN_CONSTANTS: &str = r#"
namespace mine {
template <typename T, T v>
struct integral_constant {
  static constexpr constant T value = v;
  using value_type = T;
  using type = integral_constant;
  constexpr operator value_type() const thread { return value; }
};
template <bool B> using bool_constant = integral_constant<bool, B>;
using true_type = bool_constant<true>;

float which(true_type) { return 1.0f; }
float which(metal::true_type) { return 2.0f; }
template <bool B> float flag(metal::bool_constant<B>) { return B ? 10.0f : 20.0f; }
template <bool B> float flag(bool_constant<B>) { return B ? 30.0f : 40.0f; }
}

kernel void k(device float* out [[buffer(0)]], uint id [[thread_position_in_grid]]) {
  out[id * 6 + 0] = mine::which(mine::true_type{});
  out[id * 6 + 1] = mine::which(metal::true_type{});
  out[id * 6 + 2] = mine::which(true_type{});
  out[id * 6 + 3] = mine::flag(metal::bool_constant<false>{}) + mine::flag(mine::true_type{});
  constexpr auto seven = integral_constant<int, 7>{};
  out[id * 6 + 4] = float(seven) + float(metal::integral_constant<uint, 5>::value) * 10.0f
      + float(false_type::value) + float(true_type{}()) * 100.0f;
  out[id * 6 + 5] = float(is_same_v<integral_constant<int, 7>::value_type, int>)
      + float(is_same_v<bool_constant<true>::type, true_type>) * 10.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn metals_own_integral_constants_beside_a_sources_own_on_gpu() {
    let threads = 2usize;
    let Some(got) = common::source::run_body_f32s(
        METAL_AND_OWN_CONSTANTS,
        "k",
        (threads as u32, threads as u32),
        vec![(0, vec![0u8; threads * 6 * 4])],
        0,
    ) else {
        return;
    };
    for id in 0..threads {
        let want = [1.0, 2.0, 2.0, 20.0 + 30.0, 7.0 + 50.0 + 100.0, 11.0];
        assert_eq!(&got[id * 6..id * 6 + 6], &want, "thread {id}");
    }
}

#[test]
fn metals_integral_constant_needs_the_standard_library() {
    // Without `#include <metal_stdlib>` Metal declares nothing.
    let src =
        "kernel void k(device float* o [[buffer(0)]]) { o[0] = float(metal::true_type::value); }";
    let Err(e) = msl2wgsl::Library::from_source("t.metal", src, &msl2wgsl::Options::default())
    else {
        panic!("translated without the standard library");
    };
    assert!(e.render().contains("t.metal:1:"), "{}", e.render());
}

/// Objects of `integral_constant`s as template arguments: converted by
/// their `constexpr` conversion function (C++ [temp.arg.nontype]/2), which
/// returns the static member its type fixes, not the object. In generic
/// lambdas (MLX's `const_for_loop`) the object is a parameter, or a
/// captured one used only as a template argument.
const CONVERTED_ARGUMENTS: &str = r#"
template <typename T, T v> struct konst {
  static constexpr constant T value = v;
  constexpr operator T() const { return value; }
};
struct Tile {
  float e[4];
  template <int i> thread float& at() thread { return e[i]; }
};
template <int N> float get() { return float(N); }
template <typename F> void call_with_two(F f) { f(konst<int, 2>{}); }
template <typename F> void call_with_three(F f) { f(metal::integral_constant<short, 3>{}); }

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint id [[thread_position_in_grid]]) {
  Tile t = {{in[id * 4], in[id * 4 + 1], in[id * 4 + 2], in[id * 4 + 3]}};
  auto one = konst<int, 1>{};
  auto three = metal::integral_constant<int, 3>{};
  float s = get<one>() + t.template at<three>() * 10.0f;
  call_with_two([&](auto a) {
    t.template at<a>() += 100.0f;
    call_with_three([&](auto b) { s += t.template at<a>() * 1000.0f + get<b>(); });
  });
  out[id] = s;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn objects_of_constants_as_template_arguments_on_gpu() {
    let threads = 4usize;
    let input: Vec<f32> = (0..threads * 4).map(|i| i as f32 * 0.25).collect();
    let Some(got) = common::source::run_floats(CONVERTED_ARGUMENTS, &input) else {
        return;
    };
    for id in 0..threads {
        let e = &input[id * 4..id * 4 + 4];
        // Quarters times powers of ten stay exact in `f32`.
        let want = 1.0 + e[3] * 10.0 + (e[2] + 100.0) * 1000.0 + 3.0;
        assert_eq!(got[id], want, "thread {id}");
    }
}

#[test]
fn an_object_whose_conversion_reads_it_is_no_template_argument() {
    // The conversion function returns a data member: not a constant.
    let body = r#"
struct Runtime { int n; constexpr operator int() const { return n; } };
template <int N> float get() { return float(N); }
kernel void k(device float* o [[buffer(0)]]) {
  Runtime r = {3};
  o[0] = get<r>();
}
"#;
    assert_eq!(first_code(body), Code::NotConstant);
}

/// An array subscript that is an `integral_constant` (MLX's NAX fragments
/// index `src[idx_row * Int<4>{} + idx_col]`): the built-in subscript
/// takes it through its conversion function ([over.built]).
const CONSTANT_SUBSCRIPTS: &str = r#"
template <typename T, T v> struct konst {
  static constexpr constant T value = v;
  constexpr operator T() const { return value; }
};
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint id [[thread_position_in_grid]]) {
  float a[3] = {in[id], in[id] * 2.0f, in[id] * 4.0f};
  auto two = konst<int, 2>{};
  out[id] = a[two] + a[metal::integral_constant<short, 1>{}] * 10.0f + in[konst<uint, 0>{}] * 100.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn integral_constants_as_subscripts_on_gpu() {
    let threads = 4usize;
    let input: Vec<f32> = (0..threads).map(|i| i as f32 + 0.5).collect();
    let Some(got) = common::source::run_floats(CONSTANT_SUBSCRIPTS, &input) else {
        return;
    };
    for (i, &x) in input.iter().enumerate() {
        let want = 4.0 * x + 2.0 * x * 10.0 + input[0] * 100.0;
        assert_eq!(got[i], want, "thread {i}");
    }
}
