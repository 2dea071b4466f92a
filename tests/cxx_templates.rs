//! C++ template features of real MSL beyond plain function and struct
//! templates: alias templates (`template <typename T> using acc_t =
//! typename Traits<T>::type;`, C++ [temp.alias]) and non-type parameters of
//! a dependent type (`template <typename T, T v> struct integral_constant`),
//! with `bool_constant`/`true_type` traits built from them; `noexcept`.
//! GPU tests run kernels that use them and compare with a CPU reference
//! computed here.

// Without the runner the GPU tests are compiled out, and the sources and
// helpers only they use are unused.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

#[cfg(feature = "runner")]
use common::source::run_floats;
use common::source::{assert_error, translate_body};

/// Alias templates over dependent types, defaults, pointers, namespaces,
/// nested aliases, members of an alias's type, and casts through one.
const ALIASES: &str = r#"
template <typename T> struct Traits { using acc = T; static constant constexpr int lanes = 1; };
template <> struct Traits<half> { using acc = float; static constant constexpr int lanes = 2; };
template <> struct Traits<short> { using acc = int; static constant constexpr int lanes = 3; };

template <typename T>
using acc_t = typename Traits<remove_cv_t<T>>::acc;
template <typename T, int N = 4>
using vec_t = vec<T, N>;
template <typename T>
using dptr = device T*;
template <typename T>
using traits_t = Traits<T>;

namespace lib {
template <typename T> using pair_t = vec_t<T, 2>;
template <typename T> using acc4_t = vec_t<acc_t<T>>;
}

// `T` is deduced through the alias (`vec_t<T>` is `vec<T, 4>`).
template <typename T>
acc_t<T> sum4(vec_t<T> v) {
  acc_t<T> s = 0;
  for (int i = 0; i < 4; i++) s += acc_t<T>(v[i]) * acc_t<T>(traits_t<T>::lanes);
  return s;
}

template <typename T>
lib::acc4_t<T> widen(vec_t<T> v) { return lib::acc4_t<T>(v); }

kernel void k(dptr<const half4> h [[buffer(0)]], dptr<const short4> s [[buffer(1)]],
              dptr<float> out [[buffer(2)]], dptr<int> iout [[buffer(3)]],
              uint gid [[thread_position_in_grid]]) {
  lib::pair_t<float> p = lib::pair_t<float>(0.5f, float(gid));
  const acc_t<const half> a = sum4(h[gid]);
  out[gid] = a + p.x * p.y + widen(h[gid]).w + float(sizeof(vec_t<half, 3>));
  iout[gid] = sum4(s[gid]) + int(sizeof(typename traits_t<short>::acc));
}
"#;

#[test]
fn alias_templates_stand_for_their_types() {
    let wgsl = translate_body(ALIASES).wgsl().to_string();
    // One instance per deduced `T`, with the aliased types.
    assert!(wgsl.contains("fn sum4_half(v: vec4<f16>) -> f32"), "{wgsl}");
    assert!(wgsl.contains("fn sum4_short("), "{wgsl}");
    assert!(wgsl.contains("-> vec4<f32>"), "{wgsl}");
}

#[cfg(feature = "runner")]
#[test]
fn alias_templates_run() {
    const N: usize = 32;
    let halves: Vec<[f32; 4]> = (0..N)
        .map(|i| {
            let b = i as f32 * 0.25;
            [b, b + 1.0, b - 2.0, 0.5 * b]
        })
        .collect();
    let shorts: Vec<[i16; 4]> = (0..N)
        .map(|i| {
            let b = i as i16 * 300;
            [b, -b, b + 7, 1000 - b]
        })
        .collect();
    let h_bytes: Vec<u8> = halves
        .iter()
        .flatten()
        .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
        .collect();
    let s_bytes: Vec<u8> = shorts
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let Some(out) = common::source::run_body(
        ALIASES,
        "k",
        (N as u32, 16),
        vec![
            (0, h_bytes),
            (1, s_bytes),
            (2, vec![0; 4 * N]),
            (3, vec![0; 4 * N]),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&2]);
    let igot: Vec<i32> = out[&3]
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for i in 0..N {
        // The inputs are exact in half; sums of them are exact in float.
        let sum: f32 = halves[i].iter().map(|v| v * 2.0).sum();
        let want = sum + 0.5 * i as f32 + halves[i][3] + 8.0;
        assert_eq!(got[i], want, "float [{i}]");
        // `short` accumulates in `int` (no 16-bit wrap), times 3 lanes.
        let isum: i32 = shorts[i].iter().map(|v| i32::from(*v) * 3).sum();
        assert_eq!(igot[i], isum + 4, "int [{i}]");
    }
}

#[test]
fn alias_templates_need_arguments() {
    let body = "template <typename T> using ptr_t = device T*;\n\
                template <typename T, int N> using v_t = vec<T, N>;\n\
                kernel void k(device float* o [[buffer(0)]]) { v_t<float> x = 1.0f; o[0] = x.x; }\n";
    assert_error(
        body,
        "v_t<float> x",
        0,
        "too few template arguments for alias template `v_t`: `N` has no default",
    );
    let body = "template <typename T> using v4_t = vec<T, 4>;\n\
                kernel void k(device float* o [[buffer(0)]]) { v4_t<float, 2> x = 1.0f; o[0] = x.x; }\n";
    assert_error(
        body,
        "2> x",
        0,
        "too many template arguments for alias template `v4_t`: it takes 1",
    );
    let body = "template <typename T> using v4_t = vec<T, 4>;\n\
                kernel void k(device float* o [[buffer(0)]]) { v4_t x = 1.0f; o[0] = x.x; }\n";
    assert_error(
        body,
        "v4_t x",
        0,
        "alias template `v4_t` needs template arguments: `v4_t<..>`",
    );
    let body = "template <int N> using fv_t = vec<float, N>;\n\
                kernel void k(device float* o [[buffer(0)]]) { fv_t<float> x = 1.0f; o[0] = x.x; }\n";
    assert_error(
        body,
        "float> x",
        0,
        "template argument 1 of alias template `fv_t` must be a constant (parameter `N`)",
    );
}

/// `template <typename T, T v> struct integral_constant` as MLX's steel
/// headers write it, with `bool_constant` as an alias template, traits that
/// derive from it, and `::value` in constant contexts.
const CONSTANTS: &str = r#"
namespace steel {
template <typename T, T v>
struct integral_constant {
  static constexpr constant T value = v;
  using value_type = T;
  using type = integral_constant;
  METAL_FUNC constexpr operator value_type() const thread noexcept { return value; }
};
template <bool B>
using bool_constant = integral_constant<bool, B>;
using true_type = bool_constant<true>;
using false_type = bool_constant<false>;
template <int val>
using Int = integral_constant<int, val>;

template <class T>
struct is_wide : bool_constant<(sizeof(T) > 2)> {};
// The argument parses as a type (a name with template arguments).
template <class T>
struct is_big : bool_constant<is_wide<T>::value> {};
}

template <typename T>
T scale(T x) {
  if (steel::is_big<T>::value) {
    return x * T(steel::Int<3>::value);
  }
  return x + T(steel::integral_constant<short, -2>::value);
}

// `noexcept` promises nothing Metal could break.
float twice(float x) noexcept(true) { return 2.0f * x; }

static_assert(steel::true_type::value && !steel::false_type::value, "bool_constant");
static_assert(steel::integral_constant<uint, 7u>::value == 7u, "uint constant");

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              device const half* hin [[buffer(2)]], device half* hout [[buffer(3)]],
              uint gid [[thread_position_in_grid]]) {
  typename steel::Int<5>::value_type five = steel::Int<5>::value;
  out[gid] = twice(scale(in[gid])) + float(five);
  hout[gid] = scale(hin[gid]);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn integral_constants_of_dependent_type_run() {
    const N: usize = 32;
    let xs: Vec<f32> = (0..N).map(|i| i as f32 * 0.5 - 4.0).collect();
    let hs: Vec<f32> = (0..N).map(|i| i as f32 * 0.25 - 2.0).collect();
    let h_bytes: Vec<u8> = hs
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
        .collect();
    let Some(out) = common::source::run_body(
        CONSTANTS,
        "k",
        (N as u32, 16),
        vec![
            (0, common::f32_bytes(&xs)),
            (1, vec![0; 4 * N]),
            (2, h_bytes),
            (3, vec![0; 2 * N]),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    let hgot: Vec<f32> = out[&3]
        .chunks(2)
        .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
        .collect();
    for i in 0..N {
        // `float` is wide: times 3, twice, plus 5; `half` is not: minus 2
        // (exact).
        assert_eq!(got[i], xs[i] * 3.0 * 2.0 + 5.0, "float [{i}]");
        assert_eq!(hgot[i], hs[i] - 2.0, "half [{i}]");
    }
}

#[test]
fn integral_constant_arguments_are_checked_against_their_type() {
    let body = "template <typename T, T v> struct ic { static constexpr constant T value = v; };\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = float(ic<float, 1>::value); }\n";
    assert_error(
        body,
        "T v>",
        0,
        "`float` cannot be the type of a template parameter; use an integer type",
    );
}

/// `op.template f<N>(..)`: explicit template arguments of member function
/// templates (MLX's `op.template reduce_many<N_READS>(best, vals, offset)`),
/// through `->` too, with `N` not deducible from the arguments.
const MEMBER_TEMPLATES: &str = r#"
struct MaxOp {
  float bias;
  template <int N>
  float reduce_many(float best, float4 vals) const {
    for (int i = 0; i < N; i++) best = max(best, vals[i]);
    return best + bias;
  }
  template <typename U, int K = 2>
  U scaled(U x) const { return x * U(K); }
};

template <typename Op, int N_READS>
float run(thread const Op& op, float4 vals) {
  return op.template reduce_many<N_READS>(-1000.0f, vals);
}

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  float4 vals;
  for (int i = 0; i < 4; i++) vals[i] = in[4 * gid + i];
  MaxOp op{0.5f};
  thread MaxOp* p = &op;
  // `op`'s type is not dependent here: C++ needs no `template` keyword.
  out[gid] = run<MaxOp, 3>(op, vals) + p->template scaled<float, 3>(vals[3])
             + op.scaled<float>(1.0f);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn member_templates_with_explicit_arguments_run() {
    const N: usize = 32;
    let xs: Vec<f32> = (0..4 * N)
        .map(|i| ((i * 37) % 23) as f32 * 0.5 - 3.0)
        .collect();
    let Some(got) = run_floats(MEMBER_TEMPLATES, &xs) else {
        return;
    };
    for i in 0..N {
        let v = &xs[4 * i..4 * i + 4];
        // The first three only (`N_READS` = 3), then `K` = 3 and the default 2.
        let best = v[..3].iter().fold(-1000.0f32, |a, b| a.max(*b)) + 0.5;
        assert_eq!(got[i], best + v[3] * 3.0 + 2.0, "[{i}]");
    }
}

#[test]
fn explicit_arguments_need_a_member_template() {
    let body = "struct S { float f(float x) const { return x; } };\n\
                kernel void k(device float* o [[buffer(0)]]) { S s; o[0] = s.template f<2>(1.0f); }\n";
    assert_error(
        body,
        "f<2>",
        0,
        "`f` in `S` is not a member function template, so it takes no template arguments",
    );
}

/// `auto` return types, deduced from the first `return` (C++14
/// [dcl.spec.auto]): plain functions, templates whose type depends on the
/// arguments, member functions, `void` without a value.
const AUTO_RETURNS: &str = r#"
auto half_of(float x) { return x * 0.5f; }

template <typename T, typename U>
constexpr auto mul(T a, U b) {
  auto r = a * b;
  return r;
}

struct Acc {
  float total;
  auto scaled(int k) const { return total * float(k); }
};

auto store(device float* o, uint i, float v) {
  o[i] = v;
  return;
}

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              device int* iout [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
  Acc a{in[gid]};
  // `mul(float2, float)` is a `float2`; `mul(int, int)` an `int`.
  float2 v = mul(float2(in[gid], 1.0f), 2.0f);
  store(out, gid, half_of(v.x) + v.y + a.scaled(3));
  iout[gid] = mul(int(gid), 7);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn auto_return_types_run() {
    const N: usize = 32;
    let xs: Vec<f32> = (0..N).map(|i| i as f32 * 0.75 - 5.0).collect();
    let Some(out) = common::source::run_body(
        AUTO_RETURNS,
        "k",
        (N as u32, 16),
        vec![
            (0, common::f32_bytes(&xs)),
            (1, vec![0; 4 * N]),
            (2, vec![0; 4 * N]),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    let igot: Vec<i32> = out[&2]
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for i in 0..N {
        assert_eq!(got[i], xs[i] * 2.0 * 0.5 + 2.0 + xs[i] * 3.0, "[{i}]");
        assert_eq!(igot[i], 7 * i as i32, "int [{i}]");
    }
}

#[test]
fn auto_return_types_are_deduced() {
    let wgsl = translate_body(AUTO_RETURNS).wgsl().to_string();
    assert!(wgsl.contains("-> vec2<f32>"), "{wgsl}");
    assert!(wgsl.contains("-> i32"), "{wgsl}");
    let body = "auto pair(float x) { return {x, x}; }\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = 1.0f; pair(o[0]); }\n";
    assert_error(
        body,
        "{x, x}",
        0,
        "cannot deduce an `auto` return type from a braced list",
    );
}

/// Default arguments of function templates, which may use the template's
/// parameters (`T k = T(2)`), and of member function templates.
const TEMPLATE_DEFAULTS: &str = r#"
template <typename T, int N = 2>
T scale(T x, T k = T(N) + T(1), int extra = N) { return x * k + T(extra); }

struct Op {
  template <typename T>
  T shift(T x, T by = T(10)) const { return x + by; }
};

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  Op op;
  float x = in[gid];
  out[gid] = scale(x) + scale<float, 4>(x, 0.5f) + op.shift(x) + op.shift(x, 1.0f);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn default_arguments_of_function_templates_run() {
    const N: usize = 32;
    let xs: Vec<f32> = (0..N).map(|i| i as f32 * 0.5 - 6.0).collect();
    let Some(got) = run_floats(TEMPLATE_DEFAULTS, &xs) else {
        return;
    };
    for i in 0..N {
        let x = xs[i];
        let want = (x * 3.0 + 2.0) + (x * 0.5 + 4.0) + (x + 10.0) + (x + 1.0);
        assert_eq!(got[i], want, "[{i}]");
    }
}

/// Multi-statement `constexpr` functions with loops (`for`, `while`,
/// `do`, `break`, `continue`, `++`) evaluated at translation time where a
/// constant is needed: array sizes, template arguments, `static_assert`;
/// called with run-time arguments, they are ordinary functions.
const CONSTEXPR_LOOPS: &str = r#"
constexpr int tri(int n) {
  int s = 0;
  for (int i = 1; i <= n; ++i) {
    if (i % 5 == 0) continue;
    s += i;
  }
  return s;
}
constexpr uint log2_ceil(uint x) {
  uint r = 0;
  while ((1u << r) < x) r++;
  return r;
}
constexpr int first_square_above(int n) {
  int k = 0;
  do { k++; } while (k * k <= n);
  return k;
}
constexpr int doublings(int x) {
  int steps = 0;
  for (;;) {
    if (x > 100) break;
    x *= 2;
    steps += 1;
  }
  return steps;
}
static_assert(tri(10) == 40, "1..10 without 5 and 10");
static_assert(log2_ceil(37u) == 6u && first_square_above(15) == 4, "loops");
static_assert(doublings(3) == 6, "3 -> 192 in six doublings");

template <int N> struct Table { float v[N]; };

kernel void k(device const int* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  Table<int(log2_ceil(37u))> t;
  float arr[tri(4)];
  for (int i = 0; i < tri(4); i++) arr[i] = float(i);
  t.v[5] = arr[9];
  out[gid] = float(sizeof(t) / 4) + t.v[5] + float(first_square_above(in[gid]))
             + float(doublings(in[gid]));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn constexpr_functions_with_loops_run() {
    const N: usize = 32;
    let xs: Vec<i32> = (0..N as i32).map(|i| i * 7 + 1).collect();
    let bytes: Vec<u8> = xs.iter().flat_map(|v| v.to_le_bytes()).collect();
    let Some(out) = common::source::run_body(
        CONSTEXPR_LOOPS,
        "k",
        (N as u32, 16),
        vec![(0, bytes), (1, vec![0; 4 * N])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    let first_square_above = |n: i32| {
        let mut k = 0;
        loop {
            k += 1;
            if k * k > n {
                return k;
            }
        }
    };
    let doublings = |mut x: i32| {
        let mut steps = 0;
        while x <= 100 {
            x *= 2;
            steps += 1;
        }
        steps
    };
    for i in 0..N {
        let want = 6.0 + 9.0 + first_square_above(xs[i]) as f32 + doublings(xs[i]) as f32;
        assert_eq!(got[i], want, "[{i}]");
    }
}

#[test]
fn runaway_constexpr_loops_are_stopped() {
    let body = "constexpr int forever(int x) { while (x > 0) { x += 1; } return x; }\n\
                static_assert(forever(1) > 0, \"never\");\n";
    let text = common::source::fails(body);
    assert!(
        text.contains("constexpr evaluation takes too many steps"),
        "{text}"
    );
}

/// Operator overloads (plain and templates) declared in several namespaces
/// form one overload set, as argument-dependent lookup finds them in C++.
const NAMESPACE_OPERATORS: &str = r#"
namespace a {
struct V { float x; };
V operator+(V p, V q) { return V{p.x + q.x}; }
}
namespace b {
template <typename T> struct W { T x; };
template <typename T> W<T> operator+(W<T> p, W<T> q) { return W<T>{p.x * q.x}; }
}
struct G { float x; };
G operator+(G p, G q) { return G{p.x - q.x}; }

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  a::V v{in[gid]};
  b::W<float> w{in[gid]};
  G g{in[gid]};
  out[gid] = (v + v).x + (w + w).x + (g + G{1.0f}).x;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn operators_of_several_namespaces_run() {
    const N: usize = 32;
    let xs: Vec<f32> = (0..N).map(|i| i as f32 * 0.5 - 3.0).collect();
    let Some(got) = run_floats(NAMESPACE_OPERATORS, &xs) else {
        return;
    };
    for i in 0..N {
        let x = xs[i];
        assert_eq!(got[i], (x + x) + (x * x) + (x - 1.0), "[{i}]");
    }
}

/// `decltype(x)::member`: a static member of an object's struct type (MLX's
/// `decltype(Ctile)::kElemsPerTile`), also through a reference.
const DECLTYPE_MEMBERS: &str = r#"
template <typename T, int N>
struct Tile {
  static constant constexpr int kElems = N * 2;
  T v[N * 2];
};

template <typename TileT>
float total(thread TileT& t) {
  float s = 0.0f;
  for (int i = 0; i < decltype(t)::kElems; i++) s += float(t.v[i]);
  return s;
}

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  Tile<float, 3> t;
  for (short i = 0; i < decltype(t)::kElems; i++) t.v[i] = in[gid] * float(i);
  out[gid] = total(t);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn decltype_members_run() {
    const N: usize = 32;
    let xs: Vec<f32> = (0..N).map(|i| i as f32 * 0.25 - 2.0).collect();
    let Some(got) = run_floats(DECLTYPE_MEMBERS, &xs) else {
        return;
    };
    for i in 0..N {
        // Six elements: x * (0 + 1 + ... + 5), summed in order.
        let want = (0..6).fold(0.0f32, |s, k| s + xs[i] * k as f32);
        assert_eq!(got[i], want, "[{i}]");
    }
}

/// A conditional expression as a template argument (MLX's
/// `BlockLoader<T, transpose_a ? BK : BM, ..>`), in a dependent context.
const CONDITIONAL_ARGUMENTS: &str = r#"
template <typename T, int N>
struct Tile { T v[N]; };

template <bool wide, int A, int B>
float fill(float x) {
  using tile_t = Tile<float, wide ? A : B>;
  tile_t t;
  float s = 0.0f;
  for (int i = 0; i < int(sizeof(tile_t) / 4); i++) { t.v[i] = x; s += t.v[i]; }
  return s;
}

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  out[gid] = fill<true, 3, 5>(in[gid]) + 10.0f * fill<false, 3, 5>(in[gid]);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn conditional_template_arguments_run() {
    const N: usize = 32;
    let xs: Vec<f32> = (0..N).map(|i| i as f32 - 8.0).collect();
    let Some(got) = run_floats(CONDITIONAL_ARGUMENTS, &xs) else {
        return;
    };
    for i in 0..N {
        // Three elements, then five (exact: small integers).
        assert_eq!(got[i], 3.0 * xs[i] + 10.0 * 5.0 * xs[i], "[{i}]");
    }
}

/// A parameter defaulted to an empty braced list (MLX's
/// `LoopAlignment<M, N, K> l = {}`): the parameter's type value-initialized.
const BRACED_DEFAULTS: &str = r#"
template <bool A, bool B>
struct Alignment { int pad; };

struct Offset { float x; float y; };

template <bool A, bool B>
float apply(float v, Alignment<A, B> l = {}, Offset o = {2.0f}) {
  return v * (A ? 2.0f : 1.0f) + float(l.pad) + o.x + o.y;
}

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  out[gid] = apply<true, false>(in[gid]) + apply<false, true>(in[gid], Alignment<false, true>{5});
}
"#;

#[cfg(feature = "runner")]
#[test]
fn braced_default_arguments_run() {
    const N: usize = 32;
    let xs: Vec<f32> = (0..N).map(|i| i as f32 * 0.5 - 7.0).collect();
    let Some(got) = run_floats(BRACED_DEFAULTS, &xs) else {
        return;
    };
    for i in 0..N {
        let x = xs[i];
        assert_eq!(got[i], (x * 2.0 + 0.0 + 2.0) + (x + 5.0 + 2.0), "[{i}]");
    }
}

/// A by-value template parameter given an array deduces the pointer the
/// array decays to ([temp.deduct.call]/2), in the array's own address
/// space: a helper that writes through it (without moving it) fills the
/// caller's local array, and one given a threadgroup array writes the
/// threadgroup memory the other threads read after the barrier.
const DECAYED_ARRAYS: &str = r#"
template <typename W, typename T>
inline void fill_squares(W out, T base, int n) {
  for (int i = 0; i < n; i++) {
    out[i] = base + T(i * i);
  }
}

kernel void decayed(device float* out [[buffer(0)]],
                    uint tid [[thread_position_in_grid]],
                    uint lid [[thread_index_in_threadgroup]]) {
  float local[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  fill_squares(local, float(tid), 4);
  threadgroup float shared[32];
  fill_squares(shared + 4 * (lid % 8), float(lid), 4);
  threadgroup int counts[8];
  if (lid == 0) {
    fill_squares(counts, 100, 8);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (int i = 0; i < 4; i++) {
    out[tid * 9 + i] = local[i];
    out[tid * 9 + 4 + i] = shared[4 * ((lid + 1) % 8) + i];
  }
  out[tid * 9 + 8] = float(counts[lid % 8]);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn a_by_value_parameter_given_an_array_writes_through_to_it() {
    const THREADS: usize = 8;
    let Some(out) = common::source::run_body(
        DECAYED_ARRAYS,
        "decayed",
        (THREADS as u32, THREADS as u32),
        vec![(0, vec![0; THREADS * 9 * 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&0]);
    for t in 0..THREADS {
        let row = &got[t * 9..t * 9 + 9];
        let neighbour = (t + 1) % 8;
        let want: Vec<f32> = (0..4)
            .map(|i| (t + i * i) as f32)
            .chain((0..4).map(|i| (neighbour + i * i) as f32))
            .chain([(100 + t * t) as f32])
            .collect();
        assert_eq!(row, &want[..], "thread {t}");
    }
}

/// A template parameter of struct type (C++20, as MetalPerformancePrimitives'
/// `matmul2d<descriptor, scope>` takes), its members sizing an array and
/// choosing a branch; enums declared in a struct (scoped, as the
/// descriptor's `mode`, and unscoped); `decltype` inside another template
/// argument (`remove_addrspace_t<decltype(x)>`).
#[cfg(feature = "runner")]
const STRUCT_PARAMETERS: &str = r#"
struct Shape {
  enum class kind { sum, product };
  enum side { left = 2, right = 5 };
  int n;
  bool doubled;
  kind op;
  constexpr Shape(int n_, bool doubled_ = false, kind op_ = kind::sum)
      : n(n_), doubled(doubled_), op(op_) {}
};

template <Shape S>
struct Fold {
  float v[S.n];
  float run(float x) {
    for (int i = 0; i < S.n; i++) { v[i] = x + float(i); }
    float r = S.op == Shape::kind::product ? 1.0f : 0.0f;
    for (int i = 0; i < S.n; i++) { r = S.op == Shape::kind::product ? r * v[i] : r + v[i]; }
    return S.doubled ? 2.0f * r : r;
  }
};

template <typename T> struct Twice { T run(T x) { return x + x; } };

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  constexpr auto sums = Shape(3);
  constexpr Shape products(2, true, Shape::kind::product);
  Fold<sums> a;
  Fold<products> b;
  Fold<Shape(4, false, Shape::kind::sum)> c;
  float x = in[gid];
  Twice<metal::remove_addrspace_t<decltype(x)>> t;
  out[gid] = a.run(x) + 100.0f * b.run(x) + float(sizeof(c)) + t.run(x)
      + float(Shape::right - Shape::left);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn struct_template_parameters_and_nested_enums_run() {
    const N: usize = 32;
    let xs: Vec<f32> = (0..N).map(|i| i as f32 * 0.5 - 4.0).collect();
    let Some(got) = run_floats(STRUCT_PARAMETERS, &xs) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        let sums = x + (x + 1.0) + (x + 2.0);
        let products = 2.0 * (x * (x + 1.0));
        let want = sums + 100.0 * products + 16.0 + (x + x) + 3.0;
        assert_eq!(got[i], want, "[{i}] x = {x}");
    }
}

#[test]
fn a_struct_template_argument_must_be_a_constant_of_its_type() {
    let body = "struct Shape { int n; };\nstruct Other { int n; };\ntemplate <Shape S> struct Fold { float v[S.n]; };\nkernel void k(device float* o [[buffer(0)]]) {\n  constexpr Other d{2};\n  Fold<d> f;\n  o[0] = f.v[0];\n}\n";
    assert_error(
        body,
        "d> f",
        0,
        "template argument for `S` is a `Other`, not a `Shape`",
    );
    let body = "struct Shape { float w; };\ntemplate <Shape S> struct Fold { float v[2]; };\nkernel void k(device float* o [[buffer(0)]]) {\n  constexpr Shape d{2.0f};\n  Fold<d> f;\n  o[0] = f.v[0];\n}\n";
    assert_error(
        body,
        "d> f",
        0,
        "`Shape` cannot be the type of a template parameter here: only a struct of integer, `bool` and enum members can",
    );
}

/// A `static_assert` in a struct naming the struct's static constants, and
/// a plain struct's member alias template reached through a template's
/// member alias (`typename Frag_t::template elems_t<T>`, as MLX's NAX tiles
/// name their fragment type).
#[cfg(feature = "runner")]
const FRAGMENT_ALIASES: &str = r#"
struct Frag {
  static constexpr constant short kRows = 2;
  static constexpr constant short kCols = 2;
  static constexpr constant short kElems = 4;
  static_assert(kRows * kCols == kElems, "fragment shape");
  template <typename U>
  using elems_t = typename metal::vec<U, kElems>;
};

template <typename T, class Frag_ = Frag>
struct Tile {
  using Frag_t = Frag_;
  typedef typename Frag_t::template elems_t<T> frag_type;
  frag_type v;
};

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  Tile<float> t;
  t.v = float4(in[gid], 2.0f, 3.0f, 4.0f);
  Tile<half> h;
  h.v = half4(t.v);
  out[gid] = t.v.x * t.v.w + float(h.v.z) + float(sizeof(h));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn member_alias_templates_through_member_aliases_run() {
    let xs: Vec<f32> = (0..32).map(|i| i as f32 - 8.0).collect();
    let Some(got) = run_floats(FRAGMENT_ALIASES, &xs) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(got[i], x * 4.0 + 3.0 + 8.0, "[{i}]");
    }
}

#[test]
fn a_static_assert_in_a_struct_sees_its_constants() {
    let body = "struct Frag {\n  static constexpr constant short kRows = 2;\n  static constexpr constant short kElems = 3;\n  static_assert(kRows * 2 == kElems, \"fragment shape\");\n};\nkernel void k(device float* o [[buffer(0)]]) { o[0] = float(Frag::kElems); }\n";
    assert_error(
        body,
        "static_assert(kRows",
        0,
        "static assertion failed: fragment shape",
    );
}

/// Long vectors (`vec<T, 8>`, clang's `ext_vector_type(8)`, which MLX's
/// NAX fragments use): splatted from a scalar, indexed, passed by
/// reference to a template deducing `T` from `vec<T, 8>`.
#[cfg(feature = "runner")]
const LONG_VECTORS: &str = r#"
template <typename U> using frag_t = typename metal::vec<U, 8>;
template <typename T, typename P>
void load(thread frag_t<T>& dst, P src) {
  for (int i = 0; i < 8; i++) { dst[i] = static_cast<T>(src[i]) + dst[i]; }
}
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  frag_t<half> f = frag_t<half>(1);
  load(f, in + (gid & ~7u));
  frag_t<float> g = frag_t<float>(0.5f);
  load(g, in + (gid & ~7u));
  out[gid] = float(f[gid % 8]) + g[7 - gid % 8] * 100.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn long_vectors_run() {
    let xs: Vec<f32> = (0..32).map(|i| i as f32 * 0.25).collect();
    let Some(got) = run_floats(LONG_VECTORS, &xs) else {
        return;
    };
    for i in 0..32 {
        let base = i & !7;
        let f = xs[base + i % 8] + 1.0;
        let g = xs[base + 7 - i % 8] + 0.5;
        assert_eq!(got[i], f + g * 100.0, "[{i}]");
    }
}

#[test]
fn arithmetic_on_long_vectors_is_a_located_error() {
    let body = "kernel void k(device float* o [[buffer(0)]]) {\n  vec<float, 8> a = vec<float, 8>(1.0f);\n  vec<float, 8> b = a + a;\n  o[0] = b[0];\n}\n";
    let text = assert_error(
        body,
        "a + a",
        0,
        "invalid operands to binary `+` on a pointer",
    );
    assert!(
        text.contains("a long vector (`vec<T, N>`, N > 4) is held as an array"),
        "{text}"
    );
}
