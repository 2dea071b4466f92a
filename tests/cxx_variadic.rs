//! Variadic templates (C++11 [temp.variadic]) and the template arguments
//! real MSL passes that are not plain values: template and function
//! parameter packs, their expansion in calls, braced lists and template
//! argument lists, `sizeof...`, recursion over a pack ended by an
//! overload, fold expressions (C++17, which clang accepts in Metal),
//! variadic struct templates and member function templates; atomics,
//! pointers and textures as template arguments. GPU tests run kernels that
//! use them and compare with a CPU reference computed here.

// Without the runner the GPU tests are compiled out, and the sources and
// helpers only they use are unused.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use common::source::{assert_error, first_code, translate_body};
use msl2wgsl::diagnostics::Code;

/// Function templates over packs: recursion with a base-case overload,
/// `sizeof...` of both kinds of pack, a non-type pack in a braced list,
/// expansion of a call pattern (`sq(xs)...`), left, right and binary folds.
const FUNCTIONS: &str = r#"
template <typename T>
T total(T a) { return a; }
template <typename T, typename... Rest>
T total(T a, Rest... rest) { return a + T(total(rest...)); }

template <typename... Ts>
uint count_of(Ts... xs) { return sizeof...(Ts) * 10 + sizeof...(xs); }

template <int... Ns>
int sum_ns() {
  int v[] = {Ns...};
  int s = 0;
  for (uint i = 0; i < sizeof...(Ns); i++) s += v[i] * int(i + 1);
  return s;
}

template <typename... Ts> float fold_sum(Ts... xs) { return (0.0f + ... + float(xs)); }
template <typename... Ts> bool all_positive(Ts... xs) { return (... && (xs > 0)); }
template <typename... Ts> bool any_negative(Ts... xs) { return ((xs < 0) || ...); }
template <typename... Ts> float right_sub(Ts... xs) { return (xs - ...); }
template <typename... Ts> float left_sub(Ts... xs) { return (... - xs); }
template <typename... Ts> float right_sub_init(Ts... xs) { return (xs - ... - 100.0f); }

inline float sq(float x) { return x * x; }
template <typename... Ts>
float sum_sq(Ts... xs) { return total(sq(xs)...); }

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  float x = in[gid];
  device float* o = out + gid * 8;
  o[0] = total(x, 1.0f, 2);
  o[1] = float(count_of(1, x, 2u, short(4)));
  o[2] = float(sum_ns<5, -2, 3>());
  o[3] = fold_sum(x, 2, 3u) + (all_positive(x, 1) ? 100.0f : 0.0f)
       + (any_negative(1, x) ? 1000.0f : 0.0f) + (all_positive() ? 7.0f : 0.0f);
  o[4] = right_sub(x, 4.0f, 1.0f);
  o[5] = left_sub(x, 4.0f, 1.0f);
  o[6] = right_sub_init(x, 4.0f, 1.0f);
  o[7] = sum_sq(x, 2.0f, -3.0f);
}
"#;

fn functions_reference(x: f32) -> [f32; 8] {
    let flag = |c: bool, v: f32| if c { v } else { 0.0 };
    [
        x + (1.0 + 2.0),
        (4 * 10 + 4) as f32,
        (5 - 2 * 2 + 3 * 3) as f32,
        (0.0 + x + 2.0 + 3.0) + flag(x > 0.0, 100.0) + flag(x < 0.0, 1000.0) + 7.0,
        x - (4.0 - 1.0),
        (x - 4.0) - 1.0,
        x - (4.0 - (1.0 - 100.0)),
        x * x + (4.0 + 9.0),
    ]
}

/// A pack's explicit elements come first and deduction adds the rest
/// (`sum_all<int>(x, 2.5f)`: `Ts` is `int, float`, and `x` converts).
const EXPLICIT_PACKS: &str = r#"
template <typename... Ts> float sum_all(Ts... xs) { return (0.0f + ... + float(xs)); }
template <typename... Ts> uint count(Ts... xs) { return sizeof...(Ts); }
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  out[gid] = sum_all<int>(in[gid], 2.5f) + float(count<int, int>(1, 2, 3.0f)) * 10.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn explicit_pack_elements_are_extended_by_deduction() {
    let xs = inputs();
    let Some(got) = run_floats(EXPLICIT_PACKS, &xs, 1) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(got[i], (x as i32) as f32 + 2.5 + 30.0, "x = {x}");
    }
}

/// Variadic struct templates (a recursive one ended by a partial
/// specialisation), `S<Ts...>` in a template argument list, a member
/// function template with a pack, and a pack expanded in a braced list.
const STRUCTS: &str = r#"
template <typename... Ts>
struct Count { static constant constexpr uint value = sizeof...(Ts); };
template <typename T, typename... Ts>
struct Widest {
  static constant constexpr uint value =
      sizeof(T) > Widest<Ts...>::value ? sizeof(T) : Widest<Ts...>::value;
};
template <typename T>
struct Widest<T> { static constant constexpr uint value = sizeof(T); };

struct Acc {
  float bias;
  template <typename... Args>
  float sum(Args... a) const { return (bias + ... + float(a)); }
};

template <typename... Ts>
uint describe(Ts... xs) { return Count<Ts...>::value * 100 + Widest<Ts...>::value; }
template <typename... Ts>
float4 make4(Ts... xs) { return float4{float(xs)...}; }

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  float x = in[gid];
  Acc a{0.5f};
  float4 v = make4(x, 1, 2u, half(3));
  device float* o = out + gid * 4;
  o[0] = float(describe(x, short(1), 2));
  o[1] = float(describe(char(1), short(2)));
  o[2] = a.sum(x, 2, 3u);
  o[3] = v.x + v.y * 10.0f + v.z * 100.0f + v.w * 1000.0f;
}
"#;

fn structs_reference(x: f32) -> [f32; 4] {
    [304.0, 202.0, 0.5 + x + 2.0 + 3.0, x + 10.0 + 200.0 + 3000.0]
}

/// A variadic struct template whose member function takes the pack
/// (`float dot(Ts... xs) const`) and sizes its array member with
/// `sizeof...`; a pack after a first parameter.
const PACK_MEMBERS: &str = r#"
template <typename... Ts>
struct Weights {
  float w[sizeof...(Ts)];
  float dot(Ts... xs) const {
    float v[] = {float(xs)...};
    float s = 0;
    for (uint i = 0; i < sizeof...(Ts); i++) s += w[i] * v[i];
    return s;
  }
};
template <typename T, typename... Rest>
struct Head { using type = T; static constant constexpr uint rest = sizeof...(Rest); };
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  Weights<float, int, half> w{{1.0f, 2.0f, 3.0f}};
  typename Head<int, float, float>::type h = 5;
  out[gid] = w.dot(in[gid], 2, half(0.5h)) + float(h) + float(Head<int, float>::rest) * 100.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn variadic_struct_members_take_the_pack() {
    let xs = inputs();
    let Some(got) = run_floats(PACK_MEMBERS, &xs, 1) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(got[i], x + 4.0 + 1.5 + 5.0 + 100.0, "x = {x}");
    }
}

/// Packs deduced from struct template arguments: `Tuple<Ts...>`,
/// `Tuple<T, Ts...>` and a non-type pack `Dims<Ns...>`.
const PACK_DEDUCTION: &str = r#"
template <typename... Ts> struct Tuple { float v[sizeof...(Ts)]; };
template <int... Ns> struct Dims { static constant constexpr int count = sizeof...(Ns); };
template <typename... Ts>
float total(Tuple<Ts...> t) { float s = 0; for (uint i = 0; i < sizeof...(Ts); i++) s += t.v[i]; return s; }
template <typename T, typename... Ts> uint rest_of(Tuple<T, Ts...> t) { return sizeof...(Ts); }
template <int... Ns> int volume(Dims<Ns...> d) { return (Ns * ...); }
template <int... Ns, int... Ms>
int zip_mul(Dims<Ns...> a, Dims<Ms...> b) { return (0 + ... + (Ns * Ms)); }
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  Tuple<float, int, half> t{{in[gid], 2.0f, 3.0f}};
  Dims<2, 3, 4> d;
  Dims<5, 6, 7> e;
  out[gid] = total(t) + float(rest_of(t)) * 10.0f + float(volume(d)) * 100.0f
           + float(zip_mul(d, e)) * 1000.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn packs_deduced_from_struct_template_arguments() {
    let xs = inputs();
    let Some(got) = run_floats(PACK_DEDUCTION, &xs, 1) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        let zip = (2 * 5 + 3 * 6 + 4 * 7) as f32;
        assert_eq!(got[i], x + 5.0 + 20.0 + 2400.0 + zip * 1000.0, "x = {x}");
    }
}

/// An expansion nested in another's pattern expands its own pack:
/// `sum_all(dot_with(float(Ns), Ms...)...)` is a sum over `Ns` of sums
/// over `Ms`, whose lengths may differ.
const NESTED: &str = r#"
template <int... Ns> struct I { static constant constexpr int n = sizeof...(Ns); };
template <typename... Ts> float sum_all(Ts... xs) { return (0.0f + ... + float(xs)); }
template <typename... Ys> float dot_with(float x, Ys... ys) { return (0.0f + ... + (x * float(ys))); }
template <int... Ns, int... Ms>
float nested(I<Ns...> a, I<Ms...> b) { return sum_all(dot_with(float(Ns), Ms...)...); }
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  I<1, 2> a;
  I<3, 4, 5> b;
  out[gid] = nested(a, b) + in[gid];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn nested_expansions_expand_their_own_packs() {
    let xs = inputs();
    let Some(got) = run_floats(NESTED, &xs, 1) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(got[i], (1.0 + 2.0) * (3.0 + 4.0 + 5.0) + x, "x = {x}");
    }
}

/// `constexpr` variadic function templates and folds where a constant is
/// needed: a program-scope constant, a local `constexpr`, a vector size,
/// `static_assert`, a static member.
const CONSTANTS: &str = r#"
template <typename T> constexpr T sum(T x) { return x; }
template <typename T, typename... Us> constexpr auto sum(T x, Us... us) { return x + sum(us...); }
template <int... Ns> struct Seq { static constant constexpr int total = (Ns + ... + 0); };
constant constexpr int kTotal = sum(1, 2, 3);
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  constexpr int local = sum(4, 5);
  vec<float, sum(1, 2)> v(1.0f, 2.0f, in[gid]);
  static_assert(Seq<1, 2, 3>::total == 6, "a fold over a non-type pack");
  out[gid] = float(kTotal + local) * 10.0f + v.z + float(Seq<4, 5>::total) * 100.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn constexpr_variadic_templates_are_constants() {
    let xs = inputs();
    let Some(got) = run_floats(CONSTANTS, &xs, 1) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(got[i], 150.0 + x + 900.0, "x = {x}");
    }
}

/// Inputs with both signs and fractions that every operation keeps exact.
fn inputs() -> Vec<f32> {
    (0..32).map(|i| (i as f32 - 13.0) * 0.25).collect()
}

/// Runs kernel `k` of `body` over one thread per input, `per` outputs each.
#[cfg(feature = "runner")]
fn run_floats(body: &str, xs: &[f32], per: usize) -> Option<Vec<f32>> {
    let out = common::source::run_body(
        body,
        "k",
        (xs.len() as u32, 16),
        vec![(0, common::f32_bytes(xs)), (1, vec![0; 4 * per * xs.len()])],
    )?;
    Some(common::f32s(&out[&1]))
}

#[test]
fn each_pack_instantiation_is_one_helper() {
    let wgsl = translate_body(FUNCTIONS).wgsl().to_string();
    // The recursion ends in the non-variadic overload, not an empty pack.
    assert!(wgsl.contains("fn total_float_P1_int("), "{wgsl}");
    assert!(wgsl.contains("fn total_int("), "{wgsl}");
    assert!(!wgsl.contains("fn total_int_P0"), "{wgsl}");
}

#[cfg(feature = "runner")]
#[test]
fn variadic_function_templates_match_cpu() {
    let xs = inputs();
    let Some(got) = run_floats(FUNCTIONS, &xs, 8) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(&got[i * 8..i * 8 + 8], &functions_reference(x), "x = {x}");
    }
}

#[cfg(feature = "runner")]
#[test]
fn variadic_struct_and_member_templates_match_cpu() {
    let xs = inputs();
    let Some(got) = run_floats(STRUCTS, &xs, 4) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(&got[i * 4..i * 4 + 4], &structs_reference(x), "x = {x}");
    }
}

/// Template template parameters (`template <typename> class Op`): given
/// explicitly, by default, deduced from an `Op<T>` or `V<T, 3>` argument,
/// of a struct template; and alias templates with parameter packs.
const TEMPLATE_TEMPLATES: &str = r#"
template <typename T> struct Twice { static T apply(T x) { return x * T(2); } };
template <typename T> struct Negate { static T apply(T x) { return -x; } };
template <typename T, int N> struct Small {
  vec<T, N> v;
  T sum() const { T s = 0; for (int i = 0; i < N; i++) s += v[i]; return s; }
};
template <typename T> struct Box { T value; };

template <template <typename> class Op, typename T>
T apply(T x) { return Op<T>::apply(x); }
template <template <typename> class Op, template <typename> class Then = Twice, typename T>
T apply_both(T x) { return Then<T>::apply(Op<T>::apply(x)); }
template <typename T, template <typename, int> class V>
T total(V<T, 3> s) { return s.sum() + T(100); }
template <template <typename> class B, typename T>
T unbox(B<T> b) { return b.value; }
template <template <typename> class Op>
struct Pipeline { static float run(float x) { return Op<float>::apply(x) + 1.0f; } };

template <typename... Ts> struct make_void { typedef void type; };
template <typename... Ts> using void_t = typename make_void<Ts...>::type;
template <typename... Ts> using vec_of = vec<float, sizeof...(Ts)>;
template <typename... Ts> void_t<Ts...> ignore(Ts... xs) {}

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  float x = in[gid];
  Small<float, 3> s{float3(x, 1.0f, 2.0f)};
  Box<int> b{int(gid)};
  vec_of<int, short> two = vec_of<int, short>(x, 1.0f);
  ignore(x, b);
  out[gid] = apply<Twice>(x) + apply<Negate>(x) * 10.0f + apply_both<Negate>(x) + total(s)
           + float(unbox(b)) + Pipeline<Negate>::run(x) + two.y * 1000.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn template_template_parameters_match_cpu() {
    let xs = inputs();
    let Some(got) = run_floats(TEMPLATE_TEMPLATES, &xs, 1) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        let want = 2.0 * x - 10.0 * x - 2.0 * x + (x + 103.0) + i as f32 + (1.0 - x) + 1000.0;
        assert_eq!(got[i], want, "x = {x}");
    }
}

#[test]
fn a_template_template_argument_must_be_a_struct_template() {
    let body = "template <typename T> struct Twice { static T apply(T x) { return x * T(2); } };\n\
                template <template <typename> class Op, typename T> T apply(T x) { return Op<T>::apply(x); }\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = apply<float>(1.0f); }\n";
    assert_error(
        body,
        "float>(1.0f)",
        0,
        "template template parameter `Op` needs the name of a struct template",
    );
    assert_eq!(first_code(body), Code::Template);
}

/// Member alias templates: of a plain struct (`Traits::pair<float>`,
/// `typename Traits::template rebind<int>`), used unqualified inside a
/// struct template (naming its parameter `T` too), and of a struct
/// template's instance inside another template (`typename S::template
/// rebind<float>`).
const MEMBER_ALIASES: &str = r#"
template <typename T> struct Box { T value; };
struct Traits {
  template <typename U> using rebind = Box<U>;
  template <typename U> using pair = vec<U, 2>;
};
template <typename T> struct Cell {
  T value;
  template <typename U> using rebind = Cell<U>;
  template <typename U> using with = vec<T, sizeof(U)>;
  rebind<float> widen() const { return rebind<float>{float(value) * 0.5f}; }
  with<short> twice() const { return with<short>(value, value * 2); }
};
template <typename S>
float widened(S s) { typename S::template rebind<float> c = s.widen(); return c.value; }

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  typename Traits::template rebind<int> b{int(gid)};
  Traits::pair<float> p = Traits::pair<float>(in[gid], 2.0f);
  Cell<int> c{int(gid) * 3};
  out[gid] = float(b.value) + p.x * p.y + widened(c) + float(c.twice().y);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn member_alias_templates_match_cpu() {
    let xs = inputs();
    let Some(got) = run_floats(MEMBER_ALIASES, &xs, 1) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        let g = i as f32;
        let want = g + x * 2.0 + (3.0 * g) * 0.5 + 6.0 * g;
        assert_eq!(got[i], want, "x = {x}");
    }
}

/// SPIRV-Cross's and Tint's array wrapper shape over atomics: an array
/// struct template with `operator[]` per address space (the `constant`
/// one is never used, so never instantiated), in `threadgroup` and
/// `device` memory, and a helper template deducing an atomic pointee.
const ATOMICS: &str = r#"
template <typename T, size_t N>
struct Bins {
  const constant T& operator[](size_t i) const constant { return slots[i]; }
  device T& operator[](size_t i) device { return slots[i]; }
  const thread T& operator[](size_t i) const thread { return slots[i]; }
  threadgroup T& operator[](size_t i) threadgroup { return slots[i]; }
  T slots[N];
};
struct Totals { uint seen; Bins<atomic_uint, 4> bins; };

template <typename A, typename V>
void bump(device A* a, V v) { atomic_fetch_add_explicit(a, v, memory_order_relaxed); }

kernel void hist(device const uint* in [[buffer(0)]], device Totals* totals [[buffer(1)]],
                 uint gid [[thread_position_in_grid]],
                 uint lid [[thread_position_in_threadgroup]]) {
  threadgroup Bins<atomic_uint, 4> local;
  if (lid < 4) atomic_store_explicit(&local[lid], 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  atomic_fetch_add_explicit(&local[in[gid] % 4], 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid < 4) bump(&totals->bins[lid], atomic_load_explicit(&local[lid], memory_order_relaxed));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn atomics_as_template_arguments_count_on_the_gpu() {
    let input: Vec<u32> = (0..64u32).map(|i| (i * 7 + i / 5) % 11).collect();
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
    let Some(out) = common::source::run_body(
        ATOMICS,
        "hist",
        (64, 16),
        vec![(0, bytes), (1, vec![0; 4 * 5])],
    ) else {
        return;
    };
    let got = common::u32s(&out[&1]);
    let mut want = [0u32; 5];
    for v in &input {
        want[1 + (*v % 4) as usize] += 1;
    }
    assert_eq!(got, want);
}

/// Pointers to `device`, `constant` and `threadgroup` memory as deduced
/// and explicit template arguments, also behind `const thread P&`, and
/// matched by partial specialisations (`Elem<device T*>`).
const POINTERS: &str = r#"
template <typename P> struct Elem;
template <typename T> struct Elem<device T*> { using type = T; static constant constexpr int scale = 1; };
template <typename T> struct Elem<constant T*> { using type = T; static constant constexpr int scale = 2; };
template <typename P>
typename Elem<P>::type at(P p, uint i) { return p[i] * typename Elem<P>::type(Elem<P>::scale); }
template <typename P>
float first(const thread P& p) { return p[0]; }
template <typename P, typename T>
void put(P p, uint i, T v) { p[i] = v; }

kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              constant float* scale [[buffer(2)]],
              uint gid [[thread_position_in_grid]],
              uint lid [[thread_position_in_threadgroup]]) {
  threadgroup float tg[16];
  tg[lid] = in[gid] + 1.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float v = at(in, gid) * at<constant float*>(scale, gid % 2) + tg[15 - lid] + first(in);
  put(out, gid, v);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn pointers_as_template_arguments_match_cpu() {
    let xs = inputs();
    let scale = [2.0f32, -3.0];
    let Some(out) = common::source::run_body(
        POINTERS,
        "k",
        (xs.len() as u32, 16),
        vec![
            (0, common::f32_bytes(&xs)),
            (1, vec![0; 4 * xs.len()]),
            (2, common::f32_bytes(&scale)),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, &x) in xs.iter().enumerate() {
        let group = i / 16 * 16;
        let mirror = xs[group + 15 - i % 16] + 1.0;
        assert_eq!(got[i], x * 2.0 * scale[i % 2] + mirror + xs[0], "i = {i}");
    }
}

/// `packed_float3` as a deduced and an explicit template argument, and as
/// a struct template's.
const PACKED: &str = r#"
template <typename T> struct Holder { T v; };
template <typename T> float3 widen(T x) { return float3(x); }
kernel void k(device const packed_float3* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  Holder<packed_float3> h{in[gid]};
  out[gid] = widen(h.v).y + widen<packed_float3>(in[gid]).z * 10.0f + float(sizeof(h));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn packed_vectors_as_template_arguments_match_cpu() {
    // Three floats per thread.
    let xs: Vec<f32> = (0..96).map(|i| (i as f32 - 40.0) * 0.25).collect();
    let Some(out) = common::source::run_body(
        PACKED,
        "k",
        (32, 16),
        vec![(0, common::f32_bytes(&xs)), (1, vec![0; 4 * 32])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (i, g) in got.iter().enumerate() {
        let want = xs[3 * i + 1] + xs[3 * i + 2] * 10.0 + 12.0;
        assert_eq!(*g, want, "element {i}");
    }
}

/// `matrix<T, C, R>` as a type, and its element type and sizes deduced
/// from matrix arguments (SPIRV-Cross's `spvFMulMatrixMatrix` shape).
const MATRICES: &str = r#"
template <typename T, int C, int R, int K>
matrix<T, K, R> mat_mul(matrix<T, C, R> l, matrix<T, K, C> r) {
  matrix<T, K, R> res;
  for (int i = 0; i < K; i++) {
    vec<T, R> acc(0);
    for (int j = 0; j < C; j++) acc += l[j] * r[i][j];
    res[i] = acc;
  }
  return res;
}
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  float x = in[gid];
  float2x3 a = float2x3(float3(1.0f, 2.0f, x), float3(4.0f, 5.0f, 6.0f));
  float3x2 b = float3x2(float2(1.0f, x), float2(0.0f, 1.0f), float2(2.0f, 3.0f));
  float3x3 m = mat_mul(a, b);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) out[gid * 9 + i * 3 + j] = m[i][j];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn matrix_template_arguments_are_deduced() {
    let xs = inputs();
    let Some(got) = run_floats(MATRICES, &xs, 9) else {
        return;
    };
    for (t, &x) in xs.iter().enumerate() {
        let a = [[1.0, 2.0, x], [4.0, 5.0, 6.0]];
        let b = [[1.0, x], [0.0, 1.0], [2.0, 3.0]];
        for i in 0..3 {
            for r in 0..3 {
                let want: f32 = (0..2).map(|j| a[j][r] * b[i][j]).sum();
                assert_eq!(got[t * 9 + i * 3 + r], want, "x = {x}, m[{i}][{r}]");
            }
        }
    }
}

/// Helper templates over textures, one of them variadic: each instance is
/// specialised per texture like a helper taking a texture parameter.
#[cfg(feature = "runner")]
const TEXTURES: &str = r#"
#include <metal_stdlib>
using namespace metal;
template <typename Tex>
float4 fetch_scaled(Tex t, uint2 p, float s) { return t.read(p) * s; }
template <typename Tex, typename... Parts>
void store_sum(Tex t, uint2 p, Parts... parts) { t.write((parts + ...), p); }
kernel void k(texture2d<float, access::read> src [[texture(0)]],
              texture2d<float, access::write> dst [[texture(1)]],
              uint2 gid [[thread_position_in_grid]]) {
  store_sum(dst, gid, fetch_scaled(src, gid, 2.0f), float4(1.0f),
            float4(float(gid.x), float(gid.y), 0.0f, 0.0f));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn textures_as_template_arguments_match_cpu() {
    use msl2wgsl::runner::{run_kernel_resources, Dispatch, Resources, TextureData};
    use wgpu::TextureFormat as F;
    let Some(gpu) = common::gpu() else {
        return;
    };
    let (w, h) = (4u32, 4u32);
    let texels: Vec<f32> = (0..w * h * 4).map(|i| i as f32 * 0.5 - 3.0).collect();
    let resources = Resources {
        textures: [
            (
                0,
                TextureData::new_2d(F::Rgba32Float, w, h, common::f32_bytes(&texels)),
            ),
            (
                1,
                TextureData::new_2d(F::Rgba32Float, w, h, vec![0; (w * h * 16) as usize]),
            ),
        ]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let options = msl2wgsl::Options {
        texture_formats: [(1, "rgba32float".to_string())].into_iter().collect(),
        ..Default::default()
    };
    let dispatch = Dispatch::Threads {
        grid: [w, h, 1],
        threadgroup: [w, h, 1],
    };
    let out = run_kernel_resources(
        gpu, "t.metal", TEXTURES, &options, "k", &dispatch, &resources,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = common::f32s(&out.textures[&1].data);
    for y in 0..h {
        for x in 0..w {
            let i = ((y * w + x) * 4) as usize;
            let extra = [x as f32, y as f32, 0.0, 0.0];
            let want: Vec<f32> = (0..4)
                .map(|c| texels[i + c] * 2.0 + 1.0 + extra[c])
                .collect();
            assert_eq!(&got[i..i + 4], &want[..], "texel ({x}, {y})");
        }
    }
}

#[test]
fn sizeof_pack_of_a_name_that_is_no_pack_is_refused() {
    let body = "template <typename T> uint n(T x) { return sizeof...(T); }\n\
                kernel void k(device uint* o [[buffer(0)]]) { o[0] = n(1.0f); }\n";
    assert_error(body, "sizeof...(T)", 0, "`T` is not a parameter pack");
    assert_eq!(first_code(body), Code::Template);
}

#[test]
fn pack_expansion_outside_a_variadic_template_is_refused() {
    let body = "float f(float a) { return a; }\n\
                kernel void k(device float* o [[buffer(0)]]) { float x = 1.0f; o[0] = f(x...); }\n";
    assert_error(
        body,
        "x...",
        0,
        "this pack expansion (`...`) names no parameter pack",
    );
    let fold =
        "kernel void k(device float* o [[buffer(0)]]) { float x = 1.0f; o[0] = (x + ...); }\n";
    assert_error(
        fold,
        "(x + ...)",
        0,
        "this fold expression names no parameter pack",
    );
    assert_eq!(first_code(body), Code::Template);
    assert_eq!(first_code(fold), Code::Template);
}

#[test]
fn a_binary_fold_with_two_operators_is_refused() {
    let body = "template <typename... Ts> float f(Ts... xs) { return (0.0f + ... - xs); }\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = f(1.0f); }\n";
    assert_error(
        body,
        "- xs",
        0,
        "the operators of a binary fold expression must be the same",
    );
    assert_eq!(first_code(body), Code::Syntax);
}

#[test]
fn packs_of_different_lengths_expanded_together_are_refused() {
    let body = "template <int... Ns> struct I { static constant constexpr int n = 0; };\n\
                template <int... Ns, int... Ms> int zip_mul(I<Ns...> a, I<Ms...> b) { return (0 + ... + (Ns * Ms)); }\n\
                kernel void k(device int* o [[buffer(0)]]) { I<1, 2> a; I<3, 4, 5> b; o[0] = zip_mul(a, b); }\n";
    assert_error(
        body,
        "(0 + ...",
        0,
        "packs expanded together have different lengths: `Ns` has 2 element(s), `Ms` has 3",
    );
    assert_eq!(first_code(body), Code::Template);
}

#[test]
fn sizeof_pack_needs_sizeof() {
    let body = "template <typename... Ts> uint f(Ts... xs) { return alignof...(Ts); }\n\
                kernel void k(device uint* o [[buffer(0)]]) { o[0] = f(1.0f); }\n";
    assert_error(
        body,
        "alignof",
        0,
        "expected `sizeof` before `...`, found `alignof`",
    );
    assert_eq!(first_code(body), Code::Syntax);
}

#[test]
fn a_pack_expanded_into_nested_braced_lists_is_refused() {
    let body = "struct P { float a; };\n\
                template <typename... Ts> float f(Ts... xs) { P ps[] = { {float(xs)}... }; return ps[0].a; }\n\
                kernel void k(device float* o [[buffer(0)]]) { o[0] = f(1.0f); }\n";
    assert_error(
        body,
        "...",
        2,
        "expanding a pack into nested braced lists is not supported yet",
    );
    assert_eq!(first_code(body), Code::Unsupported);
}

/// A helper template instantiated to return a texture (SPIRV-Cross's
/// `spvTextureCast` shape): located, not a crash.
#[test]
fn a_function_returning_a_texture_is_refused() {
    let body = "template <typename T, typename U> T cast_to(U img) { return reinterpret_cast<thread const T&>(img); }\n\
                kernel void k(texture2d<uint, access::read_write> t [[texture(0)]], uint2 gid [[thread_position_in_grid]]) {\n\
                  cast_to<texture2d<int, access::read_write>>(t).write(int4(1), gid);\n\
                }\n";
    assert_error(
        body,
        "T cast_to",
        0,
        "functions returning `texture2d<int, access::read_write>` are not supported yet",
    );
    assert_eq!(first_code(body), Code::Unsupported);
    let plain = "texture2d<float> same(texture2d<float> t) { return t; }\n\
                 kernel void k(texture2d<float> t [[texture(0)]], device float4* o [[buffer(0)]]) { o[0] = same(t).read(uint2(0)); }\n";
    assert_error(
        plain,
        "texture2d<float> same",
        0,
        "functions returning `texture2d<float>` are not supported yet",
    );
}

/// Explicit instantiations of overloaded kernel templates (MLX's
/// `instantiate_kernel` of its two `block_masked_gemm`s): each names the
/// overload whose template parameters take its arguments; a
/// `static_assert` in the body holds for each instance's arguments.
const OVERLOADED_KERNELS: &str = r#"
template <typename T, typename M, int N>
[[kernel]] void scale(device T* out [[buffer(0)]], const device M* mask [[buffer(1)]],
                      uint gid [[thread_position_in_grid]]) {
  static_assert(N % 2 == 0, "N must be even");
  out[gid] = mask[gid] ? out[gid] * T(N) : T(0);
}
template <typename T, int N, bool unused = false>
[[kernel]] void scale(device T* out [[buffer(0)]], const device bool* mask [[buffer(1)]],
                      uint gid [[thread_position_in_grid]]) {
  static_assert(N > 0, "N must be positive");
  out[gid] = out[gid] + T(N);
}
template [[host_name("scale_masked")]] [[kernel]] decltype(scale<float, bool, 4>) scale<float, bool, 4>;
template [[host_name("scale_plain")]] [[kernel]] decltype(scale<float, 3>) scale<float, 3>;
"#;

#[cfg(feature = "runner")]
#[test]
fn explicit_instantiations_pick_their_overload() {
    let xs = inputs();
    let mask: Vec<u8> = (0..xs.len()).map(|i| u8::from(i % 3 != 0)).collect();
    let run = |entry: &str| {
        common::source::run_body(
            OVERLOADED_KERNELS,
            entry,
            (xs.len() as u32, 16),
            vec![(0, common::f32_bytes(&xs)), (1, mask.clone())],
        )
        .map(|out| common::f32s(&out[&0]))
    };
    let (Some(masked), Some(plain)) = (run("scale_masked"), run("scale_plain")) else {
        return;
    };
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(
            masked[i],
            if mask[i] != 0 { x * 4.0 } else { 0.0 },
            "i = {i}"
        );
        assert_eq!(plain[i], x + 3.0, "i = {i}");
    }
}

#[test]
fn a_static_assert_in_a_template_holds_per_instance() {
    let body = OVERLOADED_KERNELS.replace("scale<float, bool, 4>", "scale<float, bool, 3>");
    assert_error(
        &body,
        "static_assert(N % 2",
        0,
        "static assertion failed: N must be even",
    );
    let none = OVERLOADED_KERNELS.replace("scale<float, 3>", "scale<float, float, float>");
    assert_error(
        &none,
        "scale<float, float, float>;",
        0,
        "no overload of function template `scale` takes these template arguments",
    );
    assert_eq!(first_code(&none), Code::Template);
}

#[test]
fn an_explicit_instantiation_matching_several_overloads_is_refused() {
    let body = "template <typename T> [[kernel]] void f(device T* o [[buffer(0)]]) { o[0] = T(1); }\n\
                template <typename T> [[kernel]] void f(device T* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = T(2); }\n\
                template [[host_name(\"f1\")]] [[kernel]] decltype(f<float>) f<float>;\n";
    assert_error(
        body,
        "f<float>;",
        0,
        "explicit instantiation of `f` matches several of its overloads",
    );
    assert_eq!(first_code(body), Code::Unsupported);
}
