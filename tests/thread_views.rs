//! `thread` objects seen through pointers to the types they are made of
//! (`metal/thread_views.rs`): an MLX-style tile of `vec<T, 2>` fragments
//! read and written through a `thread T*` its member function returns,
//! pointer arithmetic and casts back on the view, matrix columns and
//! nested arrays, a vector's components passed to `thread T*` helpers;
//! and the views WGSL cannot give, refused where written.
//! Also the C++ scope rules MLX's attention tiles lean on around them: a
//! member alias template naming the struct's constants, and static member
//! function templates calling each other unqualified. Each kernel runs on
//! the GPU against a CPU reference.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{fails, first_code};
use msl2wgsl::diagnostics::Code;

#[cfg(feature = "runner")]
use common::source::run_body_f32s;

/// An MLX-shaped tile: `vec<T, 2>` fragments, viewed as `T*` by `elems()`
/// (and its `const` twin), scaled element by element, then changed
/// through a pointer variable moved along the view, and read back through
/// the view and through the fragments.
const TILE: &str = r#"
template <typename T, int kFrags>
struct Tile {
  typedef vec<T, 2> frag_type;
  static constant constexpr const int kElems = kFrags * 2;
  frag_type frags[kFrags] = {frag_type(0)};
  thread T* elems() thread { return reinterpret_cast<thread T*>(frags); }
  const thread T* elems() const thread {
    return reinterpret_cast<const thread T*>(frags);
  }
};

template <typename T, int N>
T total(const thread Tile<T, N>& t) {
  T s = 0;
  for (short i = 0; i < Tile<T, N>::kElems; ++i) {
    s += t.elems()[i];
  }
  return s;
}

kernel void tile_view(const device float* in [[buffer(0)]],
                      device float* out [[buffer(1)]],
                      uint tid [[thread_position_in_grid]]) {
  Tile<float, 4> t;
  for (short i = 0; i < 4; ++i) {
    t.frags[i] = float2(in[tid * 8 + 2 * i], in[tid * 8 + 2 * i + 1]);
  }
  for (short i = 0; i < Tile<float, 4>::kElems; ++i) {
    t.elems()[i] *= float(i + 1);
  }
  thread float* p = t.elems() + tid % 3;
  p[0] += 100.0f;
  p += 2;
  *(p + 1) = -float(tid);
  // Back to the fragments' own type: the fragment holding element 4.
  thread float2* f = reinterpret_cast<thread float2*>(t.elems() + 4);
  f->y += 0.5f;
  for (short i = 0; i < 4; ++i) {
    out[tid * 9 + 2 * i] = t.frags[i].x;
    out[tid * 9 + 2 * i + 1] = t.elems()[2 * i + 1];
  }
  out[tid * 9 + 8] = total(t);
}
"#;

fn tile_reference(input: &[f32], threads: usize) -> Vec<f32> {
    let mut out = Vec::new();
    for tid in 0..threads {
        let mut e: Vec<f32> = input[tid * 8..tid * 8 + 8].to_vec();
        for (i, x) in e.iter_mut().enumerate() {
            *x *= (i + 1) as f32;
        }
        let p = tid % 3;
        e[p] += 100.0;
        e[p + 3] = -(tid as f32);
        e[5] += 0.5;
        let sum: f32 = e.iter().sum();
        out.extend_from_slice(&e);
        out.push(sum);
    }
    out
}

#[test]
#[cfg(feature = "runner")]
fn a_tile_of_fragments_is_read_and_written_as_elements() {
    let threads = 6;
    let input: Vec<f32> = (0..threads * 8).map(|i| i as f32 * 0.25 - 3.0).collect();
    let Some(got) = run_body_f32s(
        TILE,
        "tile_view",
        (threads as u32, threads as u32),
        vec![
            (0, common::f32_bytes(&input)),
            (1, vec![0; threads * 9 * 4]),
        ],
        1,
    ) else {
        return;
    };
    // WGSL's `f32` `+` and `*` are correctly rounded, and the reference
    // adds in the kernel's order: the results are exact.
    assert_eq!(got, tile_reference(&input, threads));
}

/// A matrix seen as its columns, a vector as its components, and a nested
/// array of vectors as its scalars and as its vectors.
const LAYERS: &str = r#"
kernel void layers(const device float* in [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   uint tid [[thread_position_in_grid]]) {
  float4x4 m = float4x4(0.0f);
  thread float4* cols = reinterpret_cast<thread float4*>(&m);
  for (uint c = 0; c < 4; ++c) {
    cols[c] = float4(in[c], in[c + 4], in[c + 8], in[c + 12]) + float(tid);
  }
  thread float* ms = (thread float*)&m;
  ms[tid % 16] *= 2.0f;
  float2 a[2][2] = {{float2(1, 2), float2(3, 4)}, {float2(5, 6), float2(7, 8)}};
  thread float* s = reinterpret_cast<thread float*>(a);
  s[tid % 8] += 10.0f;
  thread float2* v = reinterpret_cast<thread float2*>(s + 2);
  v[1] = v[1].yx;
  float4 q = float4(0.5f, 1.5f, 2.5f, 3.5f);
  thread float* qs = reinterpret_cast<thread float*>(&q);
  qs[(tid + 1) % 4] = -1.0f;
  for (uint i = 0; i < 16; ++i) out[tid * 28 + i] = m[i / 4][i % 4];
  for (uint i = 0; i < 8; ++i) out[tid * 28 + 16 + i] = a[i / 4][(i / 2) % 2][i % 2];
  for (uint i = 0; i < 4; ++i) out[tid * 28 + 24 + i] = q[i];
}
"#;

fn layers_reference(input: &[f32], threads: usize) -> Vec<f32> {
    let mut out = Vec::new();
    for tid in 0..threads {
        // Column-major: column c holds in[c], in[c + 4], ...
        let mut m: Vec<f32> = (0..16)
            .map(|i| input[(i % 4) * 4 + i / 4] + tid as f32)
            .collect();
        m[tid % 16] *= 2.0;
        let mut a: Vec<f32> = (1..=8).map(|x| x as f32).collect();
        a[tid % 8] += 10.0;
        a.swap(4, 5);
        let mut q = vec![0.5, 1.5, 2.5, 3.5];
        q[(tid + 1) % 4] = -1.0;
        out.extend(m);
        out.extend(a);
        out.extend(q);
    }
    out
}

#[test]
#[cfg(feature = "runner")]
fn matrices_vectors_and_nested_arrays_are_viewed_as_their_parts() {
    let threads = 20;
    let input: Vec<f32> = (0..16).map(|i| i as f32 * 1.5 + 1.0).collect();
    let Some(got) = run_body_f32s(
        LAYERS,
        "layers",
        (threads as u32, threads as u32),
        vec![
            (0, common::f32_bytes(&input)),
            (1, vec![0; threads * 28 * 4]),
        ],
        1,
    ) else {
        return;
    };
    assert_eq!(got, layers_reference(&input, threads));
}

/// MLX's attention fragments: a member alias template whose vector size
/// is a static constant of the struct, deduced through in a static member
/// function template that calls its sibling template unqualified.
const FRAGMENTS: &str = r#"
template <typename T, int kRows_, int kCols_>
struct Frag {
  static constant constexpr const int kRows = kRows_;
  static constant constexpr const int kElems = (kRows * kCols_) / 32;
  typedef vec<T, kElems> frag_type;
  template <typename U>
  using dtype_frag_t = typename metal::vec<U, kElems>;

  template <typename A, typename B>
  static void mad(thread frag_type& d, thread dtype_frag_t<A>& a,
                  thread dtype_frag_t<B>& b) {
    frag_type p = frag_type(a) * frag_type(b);
    add(d, p);
  }
  template <typename U>
  static void add(thread frag_type& d, thread U& p) {
    d += frag_type(p);
  }
};

kernel void fragments(const device float* in [[buffer(0)]],
                      device float* out [[buffer(1)]],
                      uint tid [[thread_position_in_grid]]) {
  float2 d = float2(in[tid], 1.0f);
  half2 a = half2(half(tid), 2.0h);
  float2 b = float2(3.0f, in[tid]);
  Frag<float, 8, 8>::mad(d, a, b);
  out[2 * tid] = d.x;
  out[2 * tid + 1] = d.y;
}
"#;

#[test]
#[cfg(feature = "runner")]
fn member_alias_templates_and_static_templates_deduce_in_class_scope() {
    let threads = 16;
    let input: Vec<f32> = (0..threads).map(|i| i as f32 * 0.5 - 2.0).collect();
    let Some(got) = run_body_f32s(
        FRAGMENTS,
        "fragments",
        (threads as u32, threads as u32),
        vec![
            (0, common::f32_bytes(&input)),
            (1, vec![0; threads * 2 * 4]),
        ],
        1,
    ) else {
        return;
    };
    let want: Vec<f32> = (0..threads)
        .flat_map(|t| [input[t] + t as f32 * 3.0, 1.0 + 2.0 * input[t]])
        .collect();
    assert_eq!(got, want);
}

/// `using tile_t = decltype(tile);` names the local's struct type, whose
/// members then size a loop.
const DECLTYPE_ALIAS: &str = r#"
template <int N>
struct Acc {
  static constant constexpr const int kCount = N;
  float v[N];
};
kernel void decltype_alias(device float* out [[buffer(0)]],
                           uint tid [[thread_position_in_grid]]) {
  Acc<3> acc;
  using acc_t = decltype(acc);
  for (int i = 0; i < acc_t::kCount; ++i) acc.v[i] = float(tid * 10 + uint(i));
  float s = 0;
  for (int i = 0; i < acc_t::kCount; ++i) s += acc.v[i];
  out[tid] = s;
}
"#;

#[test]
#[cfg(feature = "runner")]
fn a_local_alias_of_decltype_names_the_locals_type() {
    let Some(got) = run_body_f32s(
        DECLTYPE_ALIAS,
        "decltype_alias",
        (8, 8),
        vec![(0, vec![0; 32])],
        0,
    ) else {
        return;
    };
    let want: Vec<f32> = (0..8).map(|t| (t * 30 + 3) as f32).collect();
    assert_eq!(got, want);
}

#[test]
fn views_that_thread_memory_cannot_give_are_refused_where_written() {
    // A 3-component vector's fourth slot is padding, which WGSL has not.
    let body = "kernel void k(device float* o [[buffer(0)]]) {\n\
                float3 v[2] = {float3(1), float3(2)};\n\
                thread float* f = reinterpret_cast<thread float*>(v);\n\
                o[0] = f[5]; }\n";
    let rendered = fails(body);
    assert!(
        rendered.contains(
            "cannot reinterpret this `float3*` as `float*`: a pointer into thread memory"
        ),
        "{rendered}"
    );
    assert!(rendered.contains(":5:"), "located at the cast: {rendered}");
    // Another scalar type of the same size.
    let body = "kernel void k(device uint* o [[buffer(0)]]) {\n\
                int2 v = int2(1, 2);\n\
                thread uint* u = (thread uint*)&v;\n\
                o[0] = u[1]; }\n";
    assert_eq!(first_code(body), Code::InvalidConversion);
    // A vector made of an array's scalars.
    let body = "kernel void k(device float* o [[buffer(0)]]) {\n\
                float a[4] = {1, 2, 3, 4};\n\
                thread float2* v = reinterpret_cast<thread float2*>(a);\n\
                o[0] = v[1].x; }\n";
    assert_eq!(first_code(body), Code::InvalidConversion);
}

/// MLX's attention rows (`NAXTile::row_reduce`): a `thread T*` helper
/// given `&vptr[i * 2]` of `vptr = (thread T*)(&vals)`, a view of a
/// `vec<T, 2>` (or `float4`) reference parameter's components, reducing
/// into them; and a local vector passed as `(thread float*)&v` and at an
/// offset, scaled in place.
#[cfg(feature = "runner")]
const VECTOR_ROWS: &str = r#"
struct MaxOp { static float apply(float a, float b) { return max(a, b); } };
struct MulOp { static float apply(float a, float b) { return a * b; } };

template <typename Op>
void row_reduce(thread const float2& in, thread float* reduced) {
  reduced[0] = Op::apply(reduced[0], in[0]);
  reduced[1] = Op::apply(reduced[1], in[1]);
}
template <typename Op>
void row_bin_op(thread float* vals, thread float* rows) {
  vals[0] = Op::apply(vals[0], rows[0]);
  vals[1] = Op::apply(vals[1], rows[1]);
}

template <typename Op, int N>
void reduce_rows(thread float2 (&in)[N / 2], thread vec<float, N>& vals) {
  auto vptr = (thread float*)(&vals);
  for (short i = 0; i < N / 2; ++i) {
    row_reduce<Op>(in[i], &vptr[i * 2]);
  }
}

kernel void rows(const device float* in [[buffer(0)]],
                 device float* out [[buffer(1)]],
                 uint tid [[thread_position_in_grid]]) {
  float2 a[1] = {float2(in[tid], in[tid] * -2.0f)};
  float2 b[2] = {float2(in[tid] + 1.0f, 3.0f), float2(-in[tid], 0.25f)};
  vec<float, 2> m2 = vec<float, 2>(0.5f);
  float4 m4 = float4(1.0f, -1.0f, 2.0f, 0.0f);
  reduce_rows<MaxOp, 2>(a, m2);
  reduce_rows<MaxOp, 4>(b, m4);
  float scale[4] = {2.0f, 3.0f, 4.0f, 5.0f};
  row_bin_op<MulOp>((thread float*)(&m4), scale);
  row_bin_op<MulOp>(&((thread float*)(&m4))[2], scale + 2);
  out[tid * 6 + 0] = m2.x;
  out[tid * 6 + 1] = m2.y;
  for (int i = 0; i < 4; ++i) out[tid * 6 + 2 + i] = m4[i];
}
"#;

#[cfg(feature = "runner")]
fn vector_rows_reference(input: &[f32], threads: usize) -> Vec<f32> {
    let mut out = Vec::new();
    for &x in &input[..threads] {
        let m2 = [0.5f32.max(x), 0.5f32.max(-2.0 * x)];
        let b = [x + 1.0, 3.0, -x, 0.25];
        let m4 = [1.0f32, -1.0, 2.0, 0.0];
        let mut m4: Vec<f32> = m4.iter().zip(b).map(|(m, b)| m.max(b)).collect();
        for (m, s) in m4.iter_mut().zip([2.0, 3.0, 4.0, 5.0]) {
            *m *= s;
        }
        out.extend(m2);
        out.extend(m4);
    }
    out
}

#[test]
#[cfg(feature = "runner")]
fn vector_components_are_passed_to_thread_pointer_parameters() {
    let threads = 16;
    let input: Vec<f32> = (0..threads).map(|i| i as f32 * 0.75 - 5.0).collect();
    let Some(got) = run_body_f32s(
        VECTOR_ROWS,
        "rows",
        (threads as u32, threads as u32),
        vec![
            (0, common::f32_bytes(&input)),
            (1, vec![0; threads * 6 * 4]),
        ],
        1,
    ) else {
        return;
    };
    assert_eq!(got, vector_rows_reference(&input, threads));
}
