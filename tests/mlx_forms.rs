//! Forms found in machine-learning kernel libraries: `static_assert` over the
//! arithmetic of a struct template (its constructors and `operator`
//! templates evaluated at translation time), and constexpr functions whose
//! bodies declare locals, branch and assign, used as array sizes; the
//! kernels run on the GPU against a CPU reference.
// Without the runner the GPU tests are left out.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

#[cfg(feature = "runner")]
use common::source::PRELUDE;
use common::source::{assert_error, translate_body};

/// A pair with constructors and a templated `operator*`/`operator+`,
/// checked by `static_assert` on `half` and `float` instances; a constexpr
/// function with locals, `if` and a compound assignment sizes an array.
const PAIRS: &str = r#"
template <typename T>
struct duo {
  T a;
  T b;
  constexpr duo(T x, T y) thread : a(x), b(y) {};
  constexpr duo() thread : a(0), b(0) {};
};
template <typename T>
constexpr duo<T> operator*(duo<T> p, duo<T> q) {
  return {p.a * q.a - p.b * q.b, p.a * q.b + p.b * q.a};
}
template <typename T>
constexpr duo<T> operator+(duo<T> p, duo<T> q) {
  auto s = p.a + q.a;
  duo<T> r;
  r.a = s;
  r.b = p.b;
  r.b += q.b;
  return r;
}
static_assert((duo<half>{1.0h, 2.0h} * duo<half>{3.0h, 4.0h}).a == -5.0h, "product");
static_assert((duo<float>{1.5f, -2.0f} + duo<float>(0.5f, 3.0f)).b == 1.0f, "sum");
constexpr int lanes_for(int n) {
  int r = 1;
  if (n > 4) {
    r = n / 2;
  } else {
    r = n;
  }
  r *= 3;
  return r;
}
static_assert(lanes_for(8) == 12 && lanes_for(2) == 6, "statements");
kernel void fill(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  thread float acc[lanes_for(8)];
  for (int j = 0; j < lanes_for(8); j++) {
    acc[j] = float(j) * 0.5f;
  }
  float s = 0.0f;
  for (int j = 0; j < lanes_for(8); j++) {
    s += acc[j];
  }
  out[i] = s + float(i);
}
"#;

#[test]
fn struct_operator_static_asserts_translate() {
    let lib = translate_body(PAIRS);
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("array<f32, 12>"), "{wgsl}");
}

/// A false assertion over the same arithmetic is reported with its message.
#[test]
fn false_struct_operator_assert_is_reported() {
    let body = PAIRS.replace("== -5.0h, \"product\"", "== 5.0h, \"product\"");
    assert_error(
        &body,
        "static_assert((duo<half>",
        0,
        "static assertion failed: product",
    );
}

/// A constructor's member initializers, not member order, give the value.
#[test]
fn constructor_initializers_are_evaluated() {
    let body = r#"
struct flip {
  int hi;
  int lo;
  constexpr flip(int x, int y) thread : hi(y), lo(x) {};
};
static_assert(flip{1, 2}.hi == 2 && flip(3, 4).lo == 3, "ctor");
kernel void k(device int* o [[buffer(0)]]) { o[0] = 1; }
"#;
    translate_body(body);
    let wrong = body.replace("hi == 2", "hi == 1");
    assert_error(&wrong, "static_assert", 0, "static assertion failed: ctor");
}

#[cfg(feature = "runner")]
#[test]
fn constexpr_sized_array_matches_cpu_reference() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else {
        return;
    };
    let n = 32u32;
    let src = format!("{PRELUDE}{PAIRS}");
    let out = run_kernel(
        gpu,
        "t.metal",
        &src,
        &msl2wgsl::Options::default(),
        "fill",
        &Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [16, 1, 1],
        },
        &[(0, vec![0u8; n as usize * 4])].into_iter().collect(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = common::f32s(&out[&0]);
    // lanes_for(8): 8 > 4, so 8 / 2 = 4, times 3.
    let lanes = 12;
    let sum: f32 = (0..lanes).map(|j| j as f32 * 0.5).sum();
    assert_eq!(got.len(), n as usize);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, sum + i as f32, "[{i}]");
    }
}

/// A `static_assert` in a struct template's body names the struct's own
/// member alias and static constant unqualified; each instance checks it.
const MEMBER_ASSERT: &str = r#"
template <typename S> struct elem_of { using type = S; };
template <typename S> struct elem_of<vec<S, 2>> { using type = S; };
template <typename A, typename B>
struct io_pair {
  using elem = typename elem_of<A>::type;
  static constant constexpr int width = sizeof(A);
  static_assert(is_same_v<elem, typename elem_of<B>::type>, "same element");
  static_assert(width <= 16, "narrow");
};
kernel void k(device float* o [[buffer(0)]]) {
  io_pair<float2, float> p;
  o[0] = float(sizeof(p)) + 1.0f;
}
"#;

#[test]
fn struct_scope_assert_names_members() {
    translate_body(MEMBER_ASSERT);
    let wrong = MEMBER_ASSERT.replace("io_pair<float2, float>", "io_pair<float2, int>");
    assert_error(
        &wrong,
        "static_assert(is_same_v",
        0,
        "static assertion failed: same element",
    );
}

/// Function-scope `constexpr` constants size `thread` and `threadgroup`
/// arrays, one derived from a template parameter, one `const`.
const LOCAL_SIZES: &str = r#"
template <int D>
void partial_sums(device float* out, uint i) {
  constexpr int per = D / 4;
  thread float part[per];
  for (int j = 0; j < per; j++) {
    part[j] = float(i * per + j);
  }
  float s = 0.0f;
  for (int j = 0; j < per; j++) {
    s += part[j];
  }
  out[i] = s;
}
kernel void sums(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  constexpr int WIDTH = 16;
  const int twice = WIDTH * 2;
  threadgroup float tile[WIDTH];
  thread int lanes[twice];
  lanes[i % twice] = int(i);
  tile[i % WIDTH] = float(i);
  partial_sums<8>(out, i);
  out[i] += float(lanes[i % twice]);
}
"#;

#[test]
fn local_constants_size_arrays() {
    let lib = translate_body(LOCAL_SIZES);
    let wgsl = lib.wgsl();
    assert!(
        wgsl.contains("array<f32, 2>") && wgsl.contains("array<i32, 32>"),
        "{wgsl}"
    );
}

#[cfg(feature = "runner")]
#[test]
fn local_constant_arrays_match_cpu_reference() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else {
        return;
    };
    let n = 32u32;
    let src = format!("{PRELUDE}{LOCAL_SIZES}");
    let out = run_kernel(
        gpu,
        "t.metal",
        &src,
        &msl2wgsl::Options::default(),
        "sums",
        &Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [16, 1, 1],
        },
        &[(0, vec![0u8; n as usize * 4])].into_iter().collect(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = common::f32s(&out[&0]);
    let per = 8 / 4;
    assert_eq!(got.len(), n as usize);
    for (i, g) in got.iter().enumerate() {
        let s: f32 = (0..per).map(|j| (i * per + j) as f32).sum();
        assert_eq!(*g, s + i as f32, "[{i}]");
    }
}

/// A kernel template's own attribute names its template parameter; the
/// explicit instantiation's threadgroup limit is the instance's value.
const ATTRIBUTE_PARAM: &str = r#"
template <typename T, int BM>
[[kernel, max_total_threads_per_threadgroup(BM * 32)]] void scale(
    device T* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  o[i] = o[i] * T(BM);
}
template [[host_name("scale_f3")]] [[kernel]] void scale<float, 3>(
    device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]);
"#;

#[test]
fn kernel_template_attribute_names_parameter() {
    translate_body(ATTRIBUTE_PARAM);
    // A limit of 1 * 32 threads caps the translation's threadgroup.
    let one = ATTRIBUTE_PARAM.replace("scale<float, 3>", "scale<float, 1>");
    let lib = translate_body(&one);
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("@workgroup_size(32, 1, 1)"), "{wgsl}");
}

#[cfg(feature = "runner")]
#[test]
fn kernel_template_attribute_matches_cpu_reference() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else {
        return;
    };
    let n = 32u32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 3.0).collect();
    let src = format!("{PRELUDE}{ATTRIBUTE_PARAM}");
    let out = run_kernel(
        gpu,
        "t.metal",
        &src,
        &msl2wgsl::Options::default(),
        "scale_f3",
        &Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [16, 1, 1],
        },
        &[(0, common::f32_bytes(&input))].into_iter().collect(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = common::f32s(&out[&0]);
    assert_eq!(got.len(), input.len());
    for (i, (g, x)) in got.iter().zip(&input).enumerate() {
        assert_eq!(*g, x * 3.0, "[{i}]");
    }
}

/// Array parameters in `constant`/`device` memory without `[[buffer(n)]]`
/// (`constant const int64_t strides[3]`, as MLX's `rope` and depthwise
/// convolutions write them): C++ adjusts them to pointers, and Metal gives
/// them the next free buffer indices (2, 3 here).
const ARRAY_PARAMS: &str = r#"
kernel void gather(const device float* in [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   constant const int64_t strides[2],
                   constant const int& bias,
                   uint2 tid [[thread_position_in_grid]]) {
  out[tid.y * 4 + tid.x] = in[tid.y * strides[0] + tid.x * strides[1]] + float(bias);
}
"#;

#[test]
fn array_parameters_are_buffers() {
    let library = msl2wgsl::Library::from_source(
        "t.metal",
        &format!("#include <metal_stdlib>\nusing namespace metal;\n{ARRAY_PARAMS}"),
        &msl2wgsl::Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let f = library.function("gather").expect("reflected");
    let strides = f.arguments.iter().find(|a| a.name == "strides").unwrap();
    assert_eq!(strides.index, 2);
    assert_eq!(
        strides.buffer.as_ref().map(|b| b.data_type.as_str()),
        Some("long")
    );
}

#[cfg(feature = "runner")]
#[test]
fn array_parameters_match_cpu_reference() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else {
        return;
    };
    let src = format!("{PRELUDE}{ARRAY_PARAMS}");
    let input: Vec<f32> = (0..64).map(|v| v as f32 * 1.5).collect();
    // Column-major reads of a 4 x 4 block: strides {1, 8}, 8 bytes each.
    let strides: Vec<u8> = [1i64, 8].iter().flat_map(|s| s.to_le_bytes()).collect();
    let out = run_kernel(
        gpu,
        "t.metal",
        &src,
        &msl2wgsl::Options::default(),
        "gather",
        &Dispatch::Threads {
            grid: [4, 4, 1],
            threadgroup: [4, 4, 1],
        },
        &[
            (0, bytemuck::cast_slice(&input).to_vec()),
            (1, vec![0u8; 64]),
            (2, strides),
            (3, 5i32.to_le_bytes().to_vec()),
        ]
        .into_iter()
        .collect(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = common::f32s(&out[&1]);
    for y in 0..4usize {
        for x in 0..4usize {
            assert_eq!(got[y * 4 + x], input[y + x * 8] + 5.0, "({x}, {y})");
        }
    }
}

/// `kSize == 0 ? nullptr : memory` (MLX's GEMV): with a constant condition
/// only the operand chosen is evaluated, so the `nullptr` of the other
/// instance needs no WGSL value; in a local's initialiser and as a
/// template function's argument.
const NULL_OPERANDS: &str = r#"
template <int N>
float last(device const float* p) { return N == 0 ? 0.0f : p[N - 1]; }
template <int N>
kernel void pick(device const float* a [[buffer(0)]],
                 device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
  device const float* p = N > 0 ? a : nullptr;
  out[i] = N > 0 ? p[i] + last<N>(N > 1 ? a + 1 : nullptr) : -1.0f;
}
template [[host_name("pick2")]] kernel void pick<2>(device const float*, device float*, uint);
"#;

#[cfg(feature = "runner")]
#[test]
fn constant_conditions_choose_over_nullptr() {
    let a: Vec<f32> = (0..8).map(|v| v as f32 * 0.25 + 1.0).collect();
    let Some(got) = common::source::run_body_f32s(
        NULL_OPERANDS,
        "pick2",
        (8, 8),
        vec![(0, common::f32_bytes(&a)), (1, vec![0u8; 32])],
        1,
    ) else {
        return;
    };
    for (i, g) in got.iter().enumerate() {
        // last<2>(a + 1) is (a + 1)[1].
        assert_eq!(*g, a[i] + a[2], "[{i}]");
    }
}

/// Struct-scope names as MLX's steel kernels use them: static constants in
/// a member alias's template arguments (a lone name too), in a member
/// array's size and in a static member function's body; `S::A::N`,
/// `S::A::f(..)` and `typename A::type` through member alias `A`; a
/// vector type named through an alias in a default member initializer.
const STRUCT_SCOPE: &str = r#"
#define STEEL_CONST static constant constexpr const
template <typename T, int R, int C>
struct Frag {
  STEEL_CONST int kElems = 2;
  typedef vec<T, kElems> frag_type;
  static short2 coord(ushort lane) { return short2(lane % C, lane / C); }
};
template <typename T, short BM, short BK>
struct Loader { STEEL_CONST short n = BM * BK; };
template <typename T, short BM, short BK, bool transpose, class F_ = Frag<T, 4, 8>>
struct Kernel {
  STEEL_CONST short pad = 16 / sizeof(T);
  STEEL_CONST short rows = BM + 1;
  using loader_t = Loader<T, transpose ? BK : BM, transpose ? BM + pad : BK + pad>;
  using small_t = Loader<T, 1, rows>;
  using F_t = F_;
  typedef typename F_t::frag_type frag_type;
  frag_type acc[rows] = {frag_type(0)};
  T weights[pad];
  static T total() { return T(loader_t::n + small_t::n + rows * 100); }
};
kernel void scope(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  using K = Kernel<float, 3, 5, false>;
  K k;
  k.acc[i % 4] = float2(float(i), 2.0f);
  short2 c = K::F_t::coord(ushort(i));
  out[i] = K::total() + float(K::loader_t::n) * 1000.0f + k.acc[i % 4].x + k.acc[(i + 1) % 4].y
         + float(c.x * 10 + c.y) * 0.5f + float(sizeof(K));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn struct_scope_names_match_cpu_reference() {
    let Some(got) =
        common::source::run_body_f32s(STRUCT_SCOPE, "scope", (8, 8), vec![(0, vec![0u8; 32])], 0)
    else {
        return;
    };
    // pad = 16 / 4 = 4, rows = 4; loader_t = Loader<float, 3, 9> (n = 27);
    // small_t = Loader<float, 1, 4> (n = 4); total = 27 + 4 + 400;
    // acc[(i + 1) % 4] is zero (the default), so its .y is 0;
    // coord = (i % 8, i / 8); sizeof(K) = 4 float2 + 4 floats = 48.
    for (i, g) in got.iter().enumerate() {
        let coord = (i % 8) as f32 * 10.0 + (i / 8) as f32;
        let want = 431.0 + 27.0 * 1000.0 + i as f32 + coord * 0.5 + 48.0;
        assert_eq!(*g, want, "[{i}]");
    }
}

/// Operator functions called by name (`return operator>(b, a);`, as MLX's
/// complex.h writes `operator<`), templates and plain ones.
const OPERATORS_BY_NAME: &str = r#"
template <typename T> struct C { T re; T im; };
template <typename T> bool operator>(C<T> a, C<T> b) { return a.re > b.re || (a.re == b.re && a.im > b.im); }
template <typename T> bool operator<(C<T> a, C<T> b) { return operator>(b, a); }
struct V { float x; };
bool operator==(V a, V b) { return a.x == b.x; }
kernel void ops(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  C<float> a = {o[i], 1.0f}, b = {2.0f, 0.0f};
  V v = {o[i]}, w = {2.0f};
  o[i] = float(a < b) + 2.0f * float(operator==(v, w)) + 4.0f * float(operator>(a, b));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn operators_called_by_name_match_cpu_reference() {
    let x: Vec<f32> = (0..8).map(|v| v as f32 * 0.5).collect();
    let Some(got) = common::source::run_body_f32s(
        OPERATORS_BY_NAME,
        "ops",
        (8, 8),
        vec![(0, common::f32_bytes(&x))],
        0,
    ) else {
        return;
    };
    for (i, (g, x)) in got.iter().zip(&x).enumerate() {
        let (a, b) = ((*x, 1.0f32), (2.0f32, 0.0f32));
        let greater = |p: (f32, f32), q: (f32, f32)| p.0 > q.0 || (p.0 == q.0 && p.1 > q.1);
        let want = f32::from(u8::from(greater(b, a)))
            + 2.0 * f32::from(u8::from(*x == 2.0))
            + 4.0 * f32::from(u8::from(greater(a, b)));
        assert_eq!(*g, want, "[{i}]");
    }
}

/// Array parameters of helpers in `constant`/`device` memory are pointers,
/// as C++ adjusts them (MLX's `elem_to_loc_2<IdxT>(uint2, constant const
/// int64_t strides[2])`, called with a kernel's pointer argument).
const ARRAY_PARAMETERS_OF_HELPERS: &str = r#"
template <typename IdxT = int64_t>
IdxT loc2(uint2 elem, constant const int64_t strides[2]) {
  return elem.x * IdxT(strides[1]) + elem.y * IdxT(strides[0]);
}
float total(device const float values[4], int n) {
  float t = 0;
  for (int k = 0; k < n; k++) t += values[k];
  return t;
}
kernel void strided(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
                    constant const int64_t* strides [[buffer(2)]],
                    uint2 index [[thread_position_in_grid]], uint2 dim [[threads_per_grid]]) {
  uint at = loc2<uint>(index, strides);
  out[index.y * dim.x + index.x] = a[at] + total(a + at, 2);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn array_parameters_of_helpers_are_pointers() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else { return };
    let a: Vec<f32> = (0..40).map(|v| v as f32).collect();
    let strides: Vec<u8> = [8i64, 1].iter().flat_map(|s| s.to_le_bytes()).collect();
    let buffers = [
        (0, common::f32_bytes(&a)),
        (1, vec![0u8; 4 * 8 * 4]),
        (2, strides),
    ]
    .into_iter()
    .collect();
    let src = format!("{PRELUDE}{ARRAY_PARAMETERS_OF_HELPERS}");
    let dispatch = Dispatch::Threads {
        grid: [4, 4, 1],
        threadgroup: [4, 4, 1],
    };
    let options = msl2wgsl::Options::default();
    let out = run_kernel(
        gpu, "t.metal", &src, &options, "strided", &dispatch, &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = common::f32s(&out[&1]);
    for y in 0..4usize {
        for x in 0..4usize {
            let at = x + y * 8;
            assert_eq!(got[y * 4 + x], a[at] + a[at] + a[at + 1], "({x}, {y})");
        }
    }
}

/// Implicit conversions through converting constructors ([class.conv.ctor],
/// MLX's `complex_t(T real)`): in `return`, initialisation, arguments and
/// assignment, and `static_cast`; an `explicit` constructor converts
/// nothing implicitly, only in a cast.
const CONVERTING_CONSTRUCTORS: &str = r#"
template <typename T> struct complex_t {
  T real; T imag;
  constexpr complex_t(T r, T i) : real(r), imag(i) {}
  constexpr complex_t(T r) : real(r), imag(T(1)) {}
};
complex_t<float> half_of(float x) { return x * 0.5f; }
complex_t<float> add(complex_t<float> a, complex_t<float> b) {
  return complex_t<float>(a.real + b.real, a.imag + b.imag);
}
kernel void conv(device float2* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  complex_t<float> c = half_of(float(i));
  complex_t<float> d = add(c, 3.0f);
  complex_t<float> e = 2.0f;
  e = e.real + d.real;
  complex_t<float> s = static_cast<complex_t<float>>(4.0f);
  o[i] = float2(e.real + s.real - 4.0f, c.imag + d.imag + e.imag + s.imag - 1.0f);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn converting_constructors_match_cpu_reference() {
    let Some(got) = common::source::run_body_f32s(
        CONVERTING_CONSTRUCTORS,
        "conv",
        (8, 8),
        vec![(0, vec![0u8; 64])],
        0,
    ) else {
        return;
    };
    for i in 0..8 {
        // c = (i/2, 1); d = c + (3, 1) = (i/2 + 3, 2); e = (2 + i/2 + 3, 1).
        let c = i as f32 * 0.5;
        assert_eq!(got[2 * i], 2.0 + c + 3.0, "real[{i}]");
        assert_eq!(got[2 * i + 1], 1.0 + 2.0 + 1.0, "imag[{i}]");
    }
}

#[test]
fn explicit_constructors_do_not_convert_implicitly() {
    assert_error(
        "struct Meters { float v; explicit Meters(float x) : v(x) {} };\nkernel void k(device float* o [[buffer(0)]]) {\n  Meters m = 2.0f;\n  o[0] = m.v;\n}\n",
        "2.0f",
        0,
        "cannot convert `float` to `Meters`",
    );
    translate_body(
        "struct Meters { float v; explicit Meters(float x) : v(x) {} };\nkernel void k(device float* o [[buffer(0)]]) {\n  Meters m = static_cast<Meters>(2.0f);\n  o[0] = m.v;\n}\n",
    );
}

/// A braced list passed where one overload of a function template takes a
/// template parameter and another a fixed type (MLX's `elem_to_loc(IdxT,
/// ..)` and `elem_to_loc(uint3, ..)`): a list deduces nothing, so the fixed
/// `uint3` overload is called.
const LIST_FOR_TEMPLATE_OVERLOADS: &str = r#"
template <typename IdxT = int64_t>
IdxT loc(IdxT elem, constant const int* strides) { return elem * IdxT(strides[0]) + IdxT(1000); }
template <typename IdxT = int64_t>
IdxT loc(uint3 elem, constant const int* strides) {
  return IdxT(elem.x) * IdxT(strides[0]) + IdxT(elem.y) * IdxT(strides[1]) + IdxT(elem.z);
}
kernel void lists(device int* out [[buffer(0)]], constant const int* strides [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
  out[i] = loc<int>({2 * i, i, 7u}, strides) + loc<int>(int(i), strides);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn braced_lists_choose_the_overload_with_a_fixed_type() {
    let strides: Vec<u8> = [10i32, 100].iter().flat_map(|s| s.to_le_bytes()).collect();
    let Some(out) = common::source::run_body(
        LIST_FOR_TEMPLATE_OVERLOADS,
        "lists",
        (8, 8),
        vec![(0, vec![0u8; 32]), (1, strides)],
    ) else {
        return;
    };
    let got: Vec<i32> = out[&0]
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for (i, g) in got.iter().enumerate() {
        let i = i as i32;
        assert_eq!(*g, (2 * i * 10 + i * 100 + 7) + (i * 10 + 1000), "[{i}]");
    }
}

/// `static constexpr constant U init = static_cast<U>(0);` for a struct
/// `U` (MLX's scans over `complex64_t`): the cast calls the constructor in
/// the constant evaluator.
const CONSTANT_STRUCT_CASTS: &str = r#"
template <typename T> struct cx {
  T re; T im;
  constexpr cx(T r) : re(r), im(T(0)) {}
  constexpr cx(T r, T i) : re(r), im(i) {}
};
template <typename U> struct CumSum { static constexpr constant U init = static_cast<U>(2); };
kernel void casts(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  o[i] = CumSum<cx<float>>::init.re + CumSum<cx<float>>::init.im * 10.0f + float(CumSum<int>::init) * float(i);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn static_casts_to_structs_in_constants_match_cpu_reference() {
    let Some(got) = common::source::run_body_f32s(
        CONSTANT_STRUCT_CASTS,
        "casts",
        (8, 8),
        vec![(0, vec![0u8; 32])],
        0,
    ) else {
        return;
    };
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, 2.0 + 2.0 * i as f32, "[{i}]");
    }
}

/// A member function template calling another member function template of
/// its struct unqualified (MLX's `simd_exclusive_scan` calling
/// `simd_scan` inside `CumSum<U>`).
const SIBLING_MEMBER_TEMPLATES: &str = r#"
template <typename U> struct Sum {
  static constexpr constant U init = static_cast<U>(1);
  template <typename T> T twice(T v) thread { return v + v; }
  template <typename T> T four(T v) thread { return twice(twice(v)) + T(init); }
};
kernel void members(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  Sum<int> s;
  o[i] = s.four(float(i) * 0.5f);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn member_templates_call_sibling_member_templates() {
    let Some(got) = common::source::run_body_f32s(
        SIBLING_MEMBER_TEMPLATES,
        "members",
        (8, 8),
        vec![(0, vec![0u8; 32])],
        0,
    ) else {
        return;
    };
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, 4.0 * (i as f32 * 0.5) + 1.0, "[{i}]");
    }
}

/// A static data member named through an object (`op.init`, as MLX's
/// reductions read their operator's identity).
const STATIC_MEMBERS_THROUGH_OBJECTS: &str = r#"
template <typename U> struct And { static constexpr constant bool init = true; static constexpr constant int k = 7; };
struct Mx { static constexpr constant float init = -1.5f; };
kernel void statics(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  And<bool> op; Mx m;
  o[i] = (op.init ? float(op.k) : 0.0f) + m.init * float(i);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn static_members_named_through_objects_match_cpu_reference() {
    let Some(got) = common::source::run_body_f32s(
        STATIC_MEMBERS_THROUGH_OBJECTS,
        "statics",
        (8, 8),
        vec![(0, vec![0u8; 32])],
        0,
    ) else {
        return;
    };
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, 7.0 - 1.5 * i as f32, "[{i}]");
    }
}

/// `constexpr` function templates called with explicit template arguments
/// where a constant is needed (MLX's `get_pack_factor<bits, 8>()` in a
/// struct's static constant and an array size).
const CONSTEXPR_TEMPLATE_CALLS: &str = r#"
template <int bits, int wsize = 8>
inline constexpr short get_pack_factor() { return (bits == 3 || bits == 5) ? 8 : (bits == 6 ? 4 : wsize / bits); }
template <int bits> struct L { static constant constexpr const short pf = get_pack_factor<bits, 8>(); float v[pf]; };
kernel void packs(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  constexpr short a = get_pack_factor<4>();
  float scratch[get_pack_factor<3>()];
  L<2> l;
  scratch[i % 8] = float(i);
  o[i] = float(a) * 100.0f + float(L<6>::pf) * 10.0f + float(sizeof(l)) + scratch[i % 8];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn constexpr_templates_with_explicit_arguments_are_constants() {
    let Some(got) = common::source::run_body_f32s(
        CONSTEXPR_TEMPLATE_CALLS,
        "packs",
        (8, 8),
        vec![(0, vec![0u8; 32])],
        0,
    ) else {
        return;
    };
    // get_pack_factor<4>() = 2, <6> = 4, L<2>::pf = 4 floats = 16 bytes.
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, 200.0 + 40.0 + 16.0 + i as f32, "[{i}]");
    }
}

/// A pointer declared without an initializer and assigned in a loop (MLX's
/// row reductions: `const device T* row; ... row = in + loop.location();`):
/// the first assignment fixes the buffer it points into.
const POINTERS_ASSIGNED_LATER: &str = r#"
float total(const device float* p, int n) { float t = 0; for (int k = 0; k < n; k++) t += p[k]; return t; }
kernel void rows(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
  const device float* row;
  float acc = 0;
  for (uint r = 0; r < 3; r++) {
    row = in + i * 3 + r;
    acc += total(row, 2);
  }
  out[i] = acc + row[0] * 100.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn pointers_assigned_after_their_declaration_match_cpu_reference() {
    let x: Vec<f32> = (0..32).map(|v| v as f32 * 0.5).collect();
    let Some(got) = common::source::run_body_f32s(
        POINTERS_ASSIGNED_LATER,
        "rows",
        (8, 8),
        vec![(0, common::f32_bytes(&x)), (1, vec![0u8; 32])],
        1,
    ) else {
        return;
    };
    for (i, g) in got.iter().enumerate() {
        let acc: f32 = (0..3).map(|r| x[i * 3 + r] + x[i * 3 + r + 1]).sum();
        assert_eq!(*g, acc + x[i * 3 + 2] * 100.0, "[{i}]");
    }
}

/// `And<>`: a struct template with every argument defaulted (MLX's
/// reduction operators); a bare `And` still needs its arguments.
const EMPTY_TEMPLATE_ARGUMENTS: &str = r#"
template <typename U = float, int N = 3> struct Acc { static constexpr constant int n = N; U v[N]; };
kernel void defaults(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  Acc<> a;
  a.v[2] = float(i);
  o[i] = float(Acc<>::n) * 10.0f + float(sizeof(a)) + a.v[2];
}
"#;

#[cfg(feature = "runner")]
#[test]
fn empty_template_argument_lists_take_the_defaults() {
    let Some(got) = common::source::run_body_f32s(
        EMPTY_TEMPLATE_ARGUMENTS,
        "defaults",
        (8, 8),
        vec![(0, vec![0u8; 32])],
        0,
    ) else {
        return;
    };
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, 30.0 + 12.0 + i as f32, "[{i}]");
    }
    assert_error(
        "template <typename U = float> struct Acc { U v; };\nkernel void k(device float* o [[buffer(0)]]) { Acc a; o[0] = a.v; }\n",
        "Acc a",
        0,
        "use of struct template `Acc` requires template arguments",
    );
}

/// `uniform<T>` and `make_uniform(x)` (a value every thread shares, a hint
/// to Metal's compiler), as MLX's GEMV loops write their bounds.
const UNIFORM_VALUES: &str = r#"
kernel void bounds(device float* o [[buffer(0)]], constant int& n [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
  constexpr const uniform<int> stride = make_uniform(4);
  const uniform<int> size = make_uniform(n);
  const uniform<int> iters = size / stride;
  const uniform<int> rest = size - iters * stride;
  o[i] = float(iters) * 10.0f + float(rest) + float(i);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn uniform_values_are_their_types() {
    let Some(got) = common::source::run_body_f32s(
        UNIFORM_VALUES,
        "bounds",
        (8, 8),
        vec![(0, vec![0u8; 32]), (1, 11i32.to_le_bytes().to_vec())],
        0,
    ) else {
        return;
    };
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, 20.0 + 3.0 + i as f32, "[{i}]");
    }
}

/// Member function templates called unqualified with explicit template
/// arguments from inside their struct, from static (MLX's GEMV:
/// `load_unsafe<AccT>(in_vec, v_coeff, bn);`) and non-static members.
const UNQUALIFIED_MEMBER_TEMPLATES: &str = r#"
template <typename T> struct K {
  T scale;
  template <typename U> static void load(device T* p, U v) { p[1] = T(v) * T(2); }
  template <int N> T times(T x) const { return x * T(N) + scale; }
  static void run(device T* p) { load<int>(p, 3); }
  T twice(T x) const { return times<2>(x); }
};
kernel void members(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  if (i == 0) { K<float>::run(o); }
  K<float> k = {0.5f};
  o[2 + i] = k.twice(float(i));
}
"#;

#[cfg(feature = "runner")]
#[test]
fn member_templates_called_unqualified_with_explicit_arguments() {
    let Some(got) = common::source::run_body_f32s(
        UNQUALIFIED_MEMBER_TEMPLATES,
        "members",
        (8, 8),
        vec![(0, vec![0u8; 40])],
        0,
    ) else {
        return;
    };
    assert_eq!(got[1], 6.0);
    for i in 0..8 {
        assert_eq!(got[2 + i], i as f32 * 2.0 + 0.5, "[{i}]");
    }
}

/// A `thread` array parameter is the caller's array (C++ adjusts it to a
/// pointer): a helper's writes reach the caller (MLX's `load_unsafe(src,
/// thread U dst[TN], ..)`); before, the array was copied in and the writes
/// were lost.
const ARRAY_PARAMETERS_WRITTEN: &str = r#"
void fill(thread float dst[4], float v) { for (int k = 0; k < 4; k++) dst[k] = v + float(k); }
template <typename U, int TN>
void load(const device float* src, thread U dst[TN], const int offset = 0) {
  for (int t = 0; t < TN; t++) dst[t] = static_cast<U>(src[offset + t]);
}
float sum4(const thread float v[4]) { return v[0] + v[1] + v[2] + v[3]; }
kernel void arrays(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float a[4] = {0, 0, 0, 0};
  fill(a, float(i));
  float b[4];
  load<float, 4>(o, b, 8);
  half c[4];
  load(o, c, 8);
  o[i] = a[0] + a[3] * 10.0f + sum4(b) * 100.0f + float(c[3]) * 1000.0f;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn thread_array_parameters_write_the_callers_array() {
    let mut x = vec![0.0f32; 12];
    x[8..12].copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
    let Some(got) = common::source::run_body_f32s(
        ARRAY_PARAMETERS_WRITTEN,
        "arrays",
        (8, 8),
        vec![(0, common::f32_bytes(&x))],
        0,
    ) else {
        return;
    };
    for (i, g) in got[..8].iter().enumerate() {
        let v = i as f32;
        // `load(o, c, 8)` deduces `U = half` and `TN = 4` from `c`.
        assert_eq!(*g, v + (v + 3.0) * 10.0 + 10.0 * 100.0 + 4000.0, "[{i}]");
    }
}

/// `threadgroup float sums[32] = {0};` (MLX's layer norm): an all-zero
/// initializer is what WebGPU's workgroup memory starts with, so it is
/// accepted; any other initializer stays refused.
const ZEROED_THREADGROUP_MEMORY: &str = r#"
kernel void zeroed(device float* o [[buffer(0)]], uint lid [[thread_position_in_threadgroup]]) {
  threadgroup float sums[32] = {0};
  threadgroup int n = 0;
  if (lid < 16) sums[lid] = float(lid) + 1.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  o[lid] = sums[31 - lid] + float(n);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn zero_initialised_threadgroup_memory_is_accepted() {
    let Some(got) = common::source::run_body_f32s(
        ZEROED_THREADGROUP_MEMORY,
        "zeroed",
        (32, 32),
        vec![(0, vec![0xFFu8; 128])],
        0,
    ) else {
        return;
    };
    for (lid, g) in got.iter().enumerate() {
        // Slots 16..31 are never written: they hold the zeros.
        let want = if lid < 16 {
            0.0
        } else {
            (31 - lid) as f32 + 1.0
        };
        assert_eq!(*g, want, "[{lid}]");
    }
    assert_error(
        "kernel void k(device float* o [[buffer(0)]]) { threadgroup float s[4] = {1}; o[0] = s[0]; }\n",
        "{1}",
        0,
        "`threadgroup` variables cannot have an initializer",
    );
}
