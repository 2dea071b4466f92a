//! C++14 variable templates with explicit and partial specialisations, used
//! in expressions, `static_assert`, `enable_if` and template arguments; each
//! kernel runs on the GPU against a CPU reference, and the errors are
//! located. Comparisons that look like template-ids (`i < n >> 1`) stay
//! comparisons.
// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{assert_error, translate_body};

/// Runs kernel `entry` of `body` (after the prelude) over `n` threads in
/// threadgroups of 16 with `buffers`, or `None` without a GPU.
#[cfg(feature = "runner")]
fn run(
    body: &str,
    entry: &str,
    n: u32,
    buffers: Vec<(u32, Vec<u8>)>,
) -> Option<std::collections::BTreeMap<u32, Vec<u8>>> {
    common::source::run_body(body, entry, (n, 16), buffers)
}

/// Primary, partial and explicit specialisations; a recursive non-type
/// variable template; a variable template of the parameter's type; uses in
/// `enable_if`, `static_assert`, a struct template argument and a ternary.
const TRAITS: &str = r#"
template <typename T> struct cplx { T re; T im; };
template <typename T> constant constexpr bool is_cplx_v = false;
template <typename T> constant constexpr bool is_cplx_v<cplx<T>> = true;
template <> static constexpr constant bool is_cplx_v<int> = true;
template <int N> constant constexpr int fact_v = N * fact_v<N - 1>;
template <> constant constexpr int fact_v<0> = 1;
template <typename T> constant constexpr T half_v = T(1) / T(2);
template <typename A, typename B>
constexpr constant bool both_v = is_cplx_v<A> && is_cplx_v<B>;
static_assert(is_cplx_v<cplx<float>> && !is_cplx_v<float>, "partial");
static_assert(fact_v<5> == 120, "recursive");
static_assert(both_v<cplx<int>, int> && !both_v<float, int>, "nested");
template <bool B> struct pick { static constant constexpr int value = 10; };
template <> struct pick<true> { static constant constexpr int value = 20; };
template <typename T, typename = enable_if_t<!is_cplx_v<T>>>
T scaled(T x) { return x * half_v<T>; }
kernel void traits(device const float* in [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
  float c = is_cplx_v<int> ? 1.0f : 0.0f;
  out[i] = scaled(in[i]) + c + float(fact_v<3>) + float(pick<is_cplx_v<cplx<half>>>::value)
         + float(half_v<int>);
}
"#;

#[test]
fn variable_templates_translate() {
    let lib = translate_body(TRAITS);
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("fn traits("), "{wgsl}");
}

#[cfg(feature = "runner")]
#[test]
fn variable_templates_match_cpu_reference() {
    let n = 32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 1.5 - 7.0).collect();
    let Some(out) = run(
        TRAITS,
        "traits",
        n as u32,
        vec![(0, common::f32_bytes(&input)), (1, vec![0; n * 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, x) in input.iter().enumerate() {
        // half_v<int> is 1 / 2 == 0 in integers.
        let want = x * 0.5 + 1.0 + 6.0 + 20.0 + 0.0;
        assert_eq!(got[i], want, "[{i}]");
    }
}

/// `<` and `>` that read as comparisons: `i < n >> 1`, `f(a < b, c > d)`,
/// `a < b && c > (e)`.
const COMPARISONS: &str = r#"
static int add(bool a, bool b) { return int(a) + int(b); }
kernel void cmp(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  uint n = 32;
  uint a = i, b = 10, c = i, d = 20, e = 5;
  out[i] = (i < n >> 1 ? 100 : 0) + add(a < b, c > d) + (a < b && c > (e) ? 1000 : 0);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn comparisons_are_not_template_ids() {
    let n = 32;
    let Some(out) = run(COMPARISONS, "cmp", n, vec![(0, vec![0; n as usize * 4])]) else {
        return;
    };
    let got = common::u32s(&out[&0]);
    for i in 0..n {
        let want = if i < 16 { 100 } else { 0 }
            + u32::from(i < 10)
            + u32::from(i > 20)
            + if i < 10 && i > 5 { 1000 } else { 0 };
        assert_eq!(got[i as usize], want, "[{i}]");
    }
}

#[test]
fn comparisons_translate() {
    translate_body(COMPARISONS);
}

#[test]
fn recursion_without_a_base_case_hits_the_depth_limit() {
    let body = "template <int N> constant constexpr int f_v = f_v<N + 1>;\n\
                kernel void k(device int* o [[buffer(0)]]) { o[0] = f_v<0>; }\n";
    assert_error(
        body,
        "f_v<N + 1>",
        0,
        "template instantiation depth exceeds the limit of 1024 (instantiating variable template `f_v`)",
    );
}

#[test]
fn specialisation_needs_a_primary_template() {
    let body = "template <> constant constexpr bool is_v<float> = true;\n";
    assert_error(
        body,
        "is_v",
        0,
        "`is_v` is not a variable template: a specialisation needs the primary template declared before it",
    );
}

#[test]
fn too_many_arguments_are_located() {
    let body = "template <typename T> constant constexpr bool is_v = false;\n\
                kernel void k(device int* o [[buffer(0)]]) { o[0] = is_v<int, float>; }\n";
    assert_error(
        body,
        "is_v<int, float>",
        0,
        "too many template arguments for `is_v`: it has 1 template parameter(s), 2 given",
    );
}

/// The template forms around variable templates in real headers: explicit
/// specialisations of function templates, an unnamed `enable_if_t<.., bool>`
/// value parameter with `&&` in its argument, `static_assert` and `int
/// constant n` (address space after the type) in a struct template,
/// `inline static` members.
const FORMS: &str = r#"
template <typename T> constant constexpr bool is_small_v = sizeof(T) < 4;
template <typename U>
struct PerThread {
  static_assert(sizeof(U) <= 8, "too large");
  static constexpr int constant n = 8 / sizeof(U);
  inline static constexpr constant int twice = 2 * sizeof(U);
};
template <typename U, typename T> U cast_to(T v) { return static_cast<U>(v); }
template <> float cast_to<float, int>(int v) { return float(v) + 0.5f; }
template <> inline bool cast_to<bool>(float v) { return v > 100.0f; }
template <typename T, enable_if_t<!is_small_v<T> && sizeof(T) == 4, bool> = true>
T bump(T x) { return x + T(1); }
kernel void forms(device const float* in [[buffer(0)]],
                  device float* out [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
  float x = in[i];
  out[i] = cast_to<float>(int(i)) + cast_to<float>(uint(i)) + float(cast_to<bool>(x))
         + float(PerThread<short>::n) + float(PerThread<float>::twice) + bump(x);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn template_forms_match_cpu_reference() {
    let n = 32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 9.0).collect();
    let Some(out) = run(
        FORMS,
        "forms",
        n as u32,
        vec![(0, common::f32_bytes(&input)), (1, vec![0; n * 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, x) in input.iter().enumerate() {
        // The specialisations: `cast_to<float, int>` adds 0.5, `cast_to<bool,
        // float>` compares; `cast_to<float, uint>` is the primary.
        let want =
            (i as f32 + 0.5) + i as f32 + f32::from(u8::from(*x > 100.0)) + 4.0 + 8.0 + (x + 1.0);
        assert_eq!(got[i], want, "[{i}]");
    }
}

#[test]
fn template_forms_translate() {
    translate_body(FORMS);
}

#[test]
fn a_static_assert_in_a_struct_template_is_checked_per_instance() {
    let body = "template <typename U> struct S { static_assert(sizeof(U) <= 2, \"too large\"); static constexpr int constant n = 1; };\n\
                kernel void k(device int* o [[buffer(0)]]) { o[0] = S<short>::n + S<float>::n; }\n";
    let text = common::source::fails(body);
    assert!(text.contains("too large"), "{text}");
}

#[test]
fn a_specialisation_without_template_is_refused() {
    let body = "template <typename T> T f(T x) { return x; }\n\
                int f<int>(int x) { return x + 1; }\n";
    assert_error(
        body,
        "f<int>",
        0,
        "explicit specialisation of `f` needs `template <>` before it",
    );
}

/// `if constexpr`: the discarded branch (`x.re` on a `float`) is never
/// instantiated.
const IF_CONSTEXPR: &str = r#"
template <typename T> struct cplx { T re; T im; };
template <typename T> constant constexpr bool is_cplx_v = false;
template <typename T> constant constexpr bool is_cplx_v<cplx<T>> = true;
template <typename T> float real_part(T x) {
  if constexpr (is_cplx_v<T>) {
    return x.re;
  } else if constexpr (is_integral_v<T>) {
    return float(x) * 10.0f;
  } else {
    return x;
  }
}
kernel void parts(device const float* in [[buffer(0)]],
                  device float* out [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
  cplx<float> c = {in[i], 1.0f};
  out[i] = real_part(c) + real_part(in[i]) + real_part(int(i));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn if_constexpr_discards_the_other_branch_on_the_gpu() {
    let n = 32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let Some(out) = run(
        IF_CONSTEXPR,
        "parts",
        n as u32,
        vec![(0, common::f32_bytes(&input)), (1, vec![0; n * 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, x) in input.iter().enumerate() {
        assert_eq!(got[i], x + x + i as f32 * 10.0, "[{i}]");
    }
}

#[test]
fn if_constexpr_translates() {
    translate_body(IF_CONSTEXPR);
}

/// `instantiate_kernel`-style explicit instantiations: `decltype(f<T>)` as
/// the declared type and a host name of adjacent string literals.
const DECLTYPE_INSTANCES: &str = r#"
#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;
template <typename T, int N>
[[kernel]] void scale(device const T* in [[buffer(0)]],
                      device T* out [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
  out[i] = in[i] * T(N);
}
instantiate_kernel("scale_" "float" "_3", scale, float, 3)
instantiate_kernel("scale_int_5", scale, int, 5)
"#;

#[test]
fn decltype_instantiations_are_entry_points_named_by_host_name() {
    let lib = translate_body(DECLTYPE_INSTANCES);
    assert_eq!(lib.function_names(), vec!["scale_float_3", "scale_int_5"]);
}

#[cfg(feature = "runner")]
#[test]
fn decltype_instantiations_run_on_the_gpu() {
    let n = 32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 - 3.0).collect();
    let Some(out) = run(
        DECLTYPE_INSTANCES,
        "scale_float_3",
        n as u32,
        vec![(0, common::f32_bytes(&input)), (1, vec![0; n * 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, x) in input.iter().enumerate() {
        assert_eq!(got[i], x * 3.0, "[{i}]");
    }
}

/// Member function templates (called on an object and as `operator()`),
/// constructor templates that compete with plain constructors (an
/// `enable_if` default argument removes a candidate), and a conversion
/// function, which parses and is never called implicitly.
const MEMBER_TEMPLATES: &str = r#"
struct Add {
  template <typename T> T operator()(T x, T y) const { return x + y; }
  template <typename T> T twice(T x) const { return x + x; }
};
template <typename T> struct Box {
  T v;
  Box(T x) : v(x) {}
  template <typename U, typename = enable_if_t<is_integral_v<U>>> Box(U x) : v(T(x) * T(2)) {}
  template <typename U> U scaled(U k) const { return U(v) * k; }
  constexpr operator float() const thread { return float(v); }
};
kernel void members(device const float* in [[buffer(0)]],
                    device float* out [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
  Add add;
  Box<float> b(in[i]);
  Box<float> c(int(i));
  out[i] = add.twice(in[i]) + add(1.0f, 2.0f) + b.v + c.v + b.scaled(int(3));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn member_templates_match_cpu_reference() {
    let n = 32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.75 - 4.0).collect();
    let Some(out) = run(
        MEMBER_TEMPLATES,
        "members",
        n as u32,
        vec![(0, common::f32_bytes(&input)), (1, vec![0; n * 4])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, x) in input.iter().enumerate() {
        // `Box<float>(int)` takes the constructor template (v = 2 * i);
        // `scaled<int>` truncates v to int first.
        let want = 2.0 * x + 3.0 + x + 2.0 * i as f32 + (*x as i32 * 3) as f32;
        assert_eq!(got[i], want, "[{i}]");
    }
}

#[test]
fn member_templates_translate() {
    translate_body(MEMBER_TEMPLATES);
}
