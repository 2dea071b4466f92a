//! What MLX's steel GEMM kernels need beyond their C++ forms, in the
//! shapes they use it: a branch on a variable a helper took as
//! `thread const int&` sums 32 lanes (the analysis that keeps it uniform,
//! `gemm_loop`'s tile sizes, is unit-tested in `passes/simd_uniformity`);
//! `ReadVector`-style aligned byte structs copied between
//! device and threadgroup views a whole word at a time (`load_unsafe`);
//! the instances of one kernel template sharing their `threadgroup`
//! arrays, and helpers that come out the same for several instances
//! emitted once. Each kernel runs on the GPU against a CPU reference; the
//! WGSL is checked for the form where the form is the point (the bytes
//! would be the same without it, but not the size or the speed).
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::PRELUDE;
use msl2wgsl::diagnostics::Code;
use msl2wgsl::{Library, Options, SimdGroups};

#[cfg(feature = "runner")]
use common::source::run_body;

fn translate(body: &str, simd: SimdGroups) -> Result<Library, msl2wgsl::Failure> {
    let options = Options {
        simd,
        ..Options::default()
    };
    Library::from_source("t.metal", &format!("{PRELUDE}{body}"), &options)
}

/// A helper reads its `thread const int&` argument; the kernel then
/// branches on the variable it passed, and sums its SIMD group in the
/// branch. The branch is uniform: the helper cannot have changed the
/// variable.
const CONST_REFERENCE: &str = r#"
int twice(thread const int& v) { return v * 2; }
void keep_thread(thread int& v, uint t) { v += int(t % 2); }

kernel void const_reference(const device float* in [[buffer(0)]],
                            device float* out [[buffer(1)]],
                            constant int& n [[buffer(2)]],
                            uint tid [[thread_position_in_grid]]) {
  int m = n;
  int d = twice(m);
  float v = in[tid];
  if (m == 16) {
    v = simd_sum(v);
  }
  out[tid] = v + float(d);
}

kernel void written_reference(const device float* in [[buffer(0)]],
                              device float* out [[buffer(1)]],
                              constant int& n [[buffer(2)]],
                              uint tid [[thread_position_in_grid]]) {
  int m = n;
  keep_thread(m, tid);
  float v = in[tid];
  if (m == 16) {
    v = simd_sum(v);
  }
  out[tid] = v;
}
"#;

#[test]
#[cfg(feature = "runner")]
fn a_const_reference_argument_branch_sums_32_lanes() {
    let src = CONST_REFERENCE.replace("kernel void written_reference", "void unused");
    let input: Vec<f32> = (0..64).map(|i| (i % 7) as f32 - 2.0).collect();
    for n in [16i32, 3] {
        let Some(out) = run_body(
            &src,
            "const_reference",
            (64, 64),
            vec![
                (0, common::f32_bytes(&input)),
                (1, vec![0; 64 * 4]),
                (2, n.to_le_bytes().to_vec()),
            ],
        ) else {
            return;
        };
        let got = common::f32s(&out[&1]);
        // Apple's SIMD groups: 32 lanes, threads 0..32 and 32..64.
        let want: Vec<f32> = (0..64)
            .map(|i| {
                let v = match n {
                    16 => input[i / 32 * 32..i / 32 * 32 + 32].iter().sum(),
                    _ => input[i],
                };
                v + 2.0 * n as f32
            })
            .collect();
        assert_eq!(got, want, "n = {n}");
    }
}

/// MLX's `BlockLoader::load_unsafe`: rows of an aligned byte struct copied
/// from a `device` view into a `threadgroup` view, and out again through
/// another thread's row; and a struct of `half`s, `short`s and bytes.
const CHUNKS: &str = r#"
struct alignas(16) Chunk { uchar v[16]; };
struct alignas(8) Mixed { half h[2]; short s; uchar b[2]; };

kernel void copy_chunks(const device uchar* in [[buffer(0)]],
                        device uchar* out [[buffer(1)]],
                        uint tid [[thread_position_in_grid]],
                        uint lid [[thread_position_in_threadgroup]]) {
  threadgroup uchar staged[16 * 32];
  *((threadgroup Chunk*)(&staged[lid * 16])) = *((const device Chunk*)(&in[tid * 16]));
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint from = (lid + 1) % 32;
  *((device Chunk*)(&out[tid * 16])) = *((threadgroup Chunk*)(&staged[from * 16]));
}

kernel void copy_mixed(const device uint* in [[buffer(0)]],
                       device uint* out [[buffer(1)]],
                       uint tid [[thread_position_in_grid]]) {
  Mixed m = *((const device Mixed*)(in + 2 * tid));
  m.s += 1;
  m.b[1] ^= uchar(0xff);
  *((device Mixed*)(out + 2 * tid)) = m;
}
"#;

#[test]
fn aligned_byte_structs_are_copied_as_whole_words() {
    let lib = translate(CHUNKS, SimdGroups::default()).unwrap_or_else(|f| panic!("{}", f.render()));
    let wgsl = lib.wgsl();
    // One store per word, no clear-and-set pair per byte.
    assert!(
        !wgsl.contains("atomicAnd") && !wgsl.contains("atomicOr"),
        "{wgsl}"
    );
}

#[test]
#[cfg(feature = "runner")]
fn aligned_byte_structs_keep_every_byte() {
    let threads = 64usize;
    let input: Vec<u8> = (0..threads * 16).map(|i| (i * 7 + i / 16) as u8).collect();
    let Some(out) = run_body(
        CHUNKS,
        "copy_chunks",
        (threads as u32, 32),
        vec![(0, input.clone()), (1, vec![0; threads * 16])],
    ) else {
        return;
    };
    let want: Vec<u8> = (0..threads)
        .flat_map(|t| {
            let from = t / 32 * 32 + (t % 32 + 1) % 32;
            input[from * 16..from * 16 + 16].to_vec()
        })
        .collect();
    assert_eq!(out[&1], want);

    // Two halves (finite, so their bits survive f16 arithmetic untouched),
    // a short and two bytes per thread.
    let mut words = Vec::new();
    for t in 0..threads as u32 {
        let h0 = 0x3c00u32 + t; // 1.0 and up
        let h1 = 0xc000u32 + 3 * t; // -2.0 and down
        words.push(h0 | (h1 << 16));
        words.push((0x7ff0 + t) | ((t * 5 % 256) << 16) | ((t * 11 % 256) << 24));
    }
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let Some(out) = run_body(
        CHUNKS,
        "copy_mixed",
        (threads as u32, 32),
        vec![(0, bytes), (1, vec![0; threads * 8])],
    ) else {
        return;
    };
    let want: Vec<u32> = (0..threads)
        .flat_map(|t| {
            let (w0, w1) = (words[2 * t], words[2 * t + 1]);
            let s = ((w1 & 0xffff) as u16 as i16).wrapping_add(1) as u16 as u32;
            let b1 = ((w1 >> 24) & 0xff) ^ 0xff;
            [w0, s | (w1 & 0x00ff_0000) | (b1 << 24)]
        })
        .collect();
    assert_eq!(common::u32s(&out[&1]), want);
}

/// Two instances of one kernel template: each stages its rows in the same
/// `threadgroup` array through a loader struct holding pointers (the
/// loader's member functions are specialised for the memory they reach),
/// and a member function of the kernel's class template that does not
/// depend on the argument that differs.
const INSTANCES: &str = r#"
struct Loader {
  const device float* src;
  threadgroup float* dst;
  void load(uint lid) const { dst[lid] = src[lid] * 2.0f; }
};

template <bool Flip>
struct Pass {
  static float scale(float x) { return x * 0.5f + 1.0f; }
};

template <int Scale, bool Flip>
[[kernel]] void scaled(const device float* in [[buffer(0)]],
                       device float* out [[buffer(1)]],
                       uint tid [[thread_position_in_grid]],
                       uint lid [[thread_position_in_threadgroup]],
                       uint tg [[threadgroup_position_in_grid]]) {
  threadgroup float rows[64];
  Loader l = {in + tg * 64, rows};
  l.load(lid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint j = Flip ? 63 - lid : lid;
  out[tid] = Pass<Flip>::scale(rows[j]) * float(Scale);
}

template [[host_name("scaled_2")]] [[kernel]] void scaled<2, false>(
    const device float*, device float*, uint, uint, uint);
template [[host_name("scaled_3")]] [[kernel]] void scaled<3, true>(
    const device float*, device float*, uint, uint, uint);
"#;

#[test]
fn template_instances_share_threadgroup_memory_and_equal_helpers() {
    let lib =
        translate(INSTANCES, SimdGroups::default()).unwrap_or_else(|f| panic!("{}", f.render()));
    let wgsl = lib.wgsl();
    assert_eq!(wgsl.matches("var<workgroup>").count(), 1, "{wgsl}");
    // One loader specialisation for the shared array, one `scale` for
    // both `Pass<false>` and `Pass<true>`.
    assert_eq!(wgsl.matches("_load(").count(), 3, "{wgsl}");
    assert_eq!(wgsl.matches("_scale(").count(), 3, "{wgsl}");
}

#[test]
#[cfg(feature = "runner")]
fn template_instances_sharing_memory_compute_their_own_results() {
    let n = 128usize;
    let input: Vec<f32> = (0..n).map(|i| (i % 19) as f32 * 0.25 - 1.0).collect();
    for (entry, scale, flip) in [("scaled_2", 2.0f32, false), ("scaled_3", 3.0, true)] {
        let Some(out) = run_body(
            INSTANCES,
            entry,
            (n as u32, 64),
            vec![(0, common::f32_bytes(&input)), (1, vec![0; n * 4])],
        ) else {
            return;
        };
        let want: Vec<f32> = (0..n)
            .map(|t| {
                let lid = t % 64;
                let j = if flip { 63 - lid } else { lid };
                ((input[t / 64 * 64 + j] * 2.0) * 0.5 + 1.0) * scale
            })
            .collect();
        assert_eq!(common::f32s(&out[&1]), want, "{entry}");
    }
}

/// MLX's attention tiles: a fragment class template names the SIMD-group
/// matrix of its element type in a `typedef`, and is also instantiated
/// for `bool` masks, whose instance never makes such a matrix.
const MASK_TILE: &str = r#"
template <typename T>
struct Frag {
  typedef simdgroup_matrix<T, 8, 8> mat_type;
  typedef vec<T, 2> frag_type;
  frag_type v;
};

kernel void masked(const device float* in [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   uint tid [[thread_position_in_grid]]) {
  Frag<bool> mask;
  mask.v = bool2(tid % 2 == 0, tid % 3 == 0);
  Frag<float> x;
  x.v = float2(in[2 * tid], in[2 * tid + 1]);
  out[tid] = (mask.v.x ? x.v.x : 0.0f) + (mask.v.y ? x.v.y : 0.0f);
}
"#;

#[test]
fn a_matrix_typedef_of_an_unused_element_type_is_only_a_name() {
    translate(MASK_TILE, SimdGroups::default()).unwrap_or_else(|f| panic!("{}", f.render()));
    // Made, it is refused where it is declared.
    let body = MASK_TILE.replace("frag_type v;", "frag_type v;\n  mat_type m;");
    let Err(f) = translate(&body, SimdGroups::default()) else {
        panic!("a bool matrix is refused");
    };
    let d = &f.diagnostics.0[0];
    assert_eq!(d.code(), Code::InvalidType, "{}", f.render());
    assert!(
        d.message
            .contains("`simdgroup_matrix` holds `float`, `half` or `bfloat`, not `bool`"),
        "{}",
        f.render()
    );
    assert!(
        f.render().starts_with("t.metal:"),
        "located: {}",
        f.render()
    );
}

#[test]
#[cfg(feature = "runner")]
fn a_bool_fragment_beside_a_matrix_typedef_runs() {
    let input: Vec<f32> = (0..24).map(|i| i as f32 * 0.5).collect();
    let Some(out) = run_body(
        MASK_TILE,
        "masked",
        (12, 12),
        vec![(0, common::f32_bytes(&input)), (1, vec![0; 12 * 4])],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..12)
        .map(|t| {
            let a = if t % 2 == 0 { input[2 * t] } else { 0.0 };
            let b = if t % 3 == 0 { input[2 * t + 1] } else { 0.0 };
            a + b
        })
        .collect();
    assert_eq!(common::f32s(&out[&1]), want);
}

/// MLX's attention fragments move a pointer by a product of
/// `integral_constant`s (`src += off_x * str_x`): the offset is the
/// constant's value, through its conversion function.
const CONSTANT_OFFSETS: &str = r#"
template <typename T, T v>
struct konst {
  static constexpr constant T value = v;
  using value_type = T;
  constexpr operator value_type() const thread { return value; }
};
template <typename T, T a, typename U, U b>
constexpr auto operator*(konst<T, a>, konst<U, b>) { return konst<int, a * b>{}; }
template <int val> using Int = konst<int, val>;

template <typename SrcPtr, typename StrX, typename OffX>
void load(SrcPtr src, thread float* dst, StrX str_x, OffX off_x) {
  src += off_x * str_x;
  dst[0] = src[0];
}

kernel void offsets(const device float* in [[buffer(0)]],
                    device float* out [[buffer(1)]],
                    uint tid [[thread_position_in_grid]]) {
  float d[1];
  load(in + tid, d, Int<2>{}, Int<3>{});
  out[tid] = d[0];
  load(in + tid, d, 2, 1);
  out[tid] += 100.0f * d[0];
}
"#;

#[test]
#[cfg(feature = "runner")]
fn a_pointer_moves_by_integral_constants() {
    let input: Vec<f32> = (0..16).map(|i| i as f32).collect();
    let Some(out) = run_body(
        CONSTANT_OFFSETS,
        "offsets",
        (8, 8),
        vec![(0, common::f32_bytes(&input)), (1, vec![0; 8 * 4])],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..8)
        .map(|t| input[t + 6] + 100.0 * input[t + 2])
        .collect();
    assert_eq!(common::f32s(&out[&1]), want);
}

/// MLX's `tile_matmad(C, A, B, C)`: one object passed for two reference
/// parameters (WGSL refuses two pointer arguments to one variable where
/// one is written). The callee sees one object: a write through `c` is
/// seen through `d`, as in C++.
const ALIASED: &str = r#"
struct Tile { float2 v[2]; };
void madd(thread Tile& d, thread const Tile& a, thread const Tile& b, thread Tile& c) {
  for (int i = 0; i < 2; i++) {
    d.v[i] = a.v[i] * b.v[i] + c.v[i];
    c.v[1 - i] += 1.0f;
  }
}
kernel void aliased(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                    uint tid [[thread_position_in_grid]]) {
  Tile p = {{float2(in[tid]), float2(1.0f)}};
  Tile a = {{float2(2.0f), float2(3.0f)}};
  madd(p, a, a, p);
  out[2 * tid] = p.v[0].x + p.v[0].y;
  out[2 * tid + 1] = p.v[1].x;
}
"#;

#[test]
fn one_object_for_two_reference_parameters_is_passed_once() {
    let lib =
        translate(ALIASED, SimdGroups::default()).unwrap_or_else(|f| panic!("{}", f.render()));
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("madd((&p), (&a));"), "{wgsl}");
}

#[test]
#[cfg(feature = "runner")]
fn one_object_for_two_reference_parameters_sees_its_own_writes() {
    let input: Vec<f32> = (0..8).map(|i| i as f32 - 3.0).collect();
    let Some(out) = run_body(
        ALIASED,
        "aliased",
        (8, 8),
        vec![(0, common::f32_bytes(&input)), (1, vec![0; 16 * 4])],
    ) else {
        return;
    };
    // i = 0: p.v[0] = 2*2 + in, then p.v[1] = 1 + 1; i = 1: p.v[1] =
    // 3*3 + 2, then p.v[0] += 1.
    let want: Vec<f32> = input
        .iter()
        .flat_map(|&x| [2.0 * (5.0 + x), 11.0])
        .collect();
    assert_eq!(common::f32s(&out[&1]), want);
}

/// MLX's attention tiles call their fragment type's static member
/// function templates through a member alias: `MMAFrag_t::template
/// row_reduce<Op>(frag_at(i, j), &vals[i])` inside `MMATile<T, ..,
/// MMAFrag_t_ = ..>` with `using MMAFrag_t = MMAFrag_t_;`. The template
/// arguments are the member function's, not the enclosing template's
/// (`Tile<N / 2>::f` would be); a static member function template is also
/// called by its qualified name, with or without `template`.
const MEMBER_ALIAS_TEMPLATE_CALL: &str = r#"
struct MaxOp { static float apply(float a, float b) { return max(a, b); } };
struct SumOp { static float apply(float a, float b) { return a + b; } };
struct Frag {
  template <typename Op>
  static void reduce(thread const float4& f, thread float* out) {
    out[0] = Op::apply(Op::apply(f.x, f.y), Op::apply(f.z, f.w));
  }
};
template <typename T, int N, class Frag_ = Frag> struct Tile {
  using Frag_t = Frag_;
  float4 frags[N];
  thread float4& frag_at(int i) thread { return frags[i]; }
  template <typename Op> void row_reduce(thread T vals[N]) thread {
    for (int i = 0; i < N; i++) { Frag_t::template reduce<Op>(frag_at(i), &vals[i]); }
  }
  template <typename Op> void row_reduce_plain(thread T vals[N]) thread {
    for (int i = 0; i < N; i++) { Frag_t::reduce<Op>(frag_at(i), &vals[i]); }
  }
};
kernel void member_alias_template_call(const device float4* in [[buffer(0)]],
                                       device float* out [[buffer(1)]],
                                       uint tid [[thread_position_in_grid]]) {
  Tile<float, 2> t;
  t.frags[0] = in[tid * 2];
  t.frags[1] = in[tid * 2 + 1];
  float maxes[2];
  float sums[2];
  t.template row_reduce<MaxOp>(maxes);
  t.template row_reduce_plain<SumOp>(sums);
  float direct[1];
  Frag::template reduce<SumOp>(t.frags[1], direct);
  float plain[1];
  Frag::reduce<MaxOp>(t.frags[0], plain);
  out[tid * 6] = maxes[0];
  out[tid * 6 + 1] = maxes[1];
  out[tid * 6 + 2] = sums[0];
  out[tid * 6 + 3] = sums[1];
  out[tid * 6 + 4] = direct[0];
  out[tid * 6 + 5] = plain[0];
}
"#;

#[test]
#[cfg(feature = "runner")]
fn member_function_templates_called_through_a_member_alias() {
    let input: Vec<f32> = (0..64 * 8).map(|i| ((i * 37) % 23) as f32 - 11.0).collect();
    let Some(out) = common::source::run_body_f32s(
        MEMBER_ALIAS_TEMPLATE_CALL,
        "member_alias_template_call",
        (64, 64),
        vec![(0, common::f32_bytes(&input)), (1, vec![0; 64 * 6 * 4])],
        1,
    ) else {
        return;
    };
    let max = |f: &[f32]| f[0].max(f[1]).max(f[2].max(f[3]));
    let sum = |f: &[f32]| (f[0] + f[1]) + (f[2] + f[3]);
    for t in 0..64 {
        let (a, b) = (&input[t * 8..t * 8 + 4], &input[t * 8 + 4..t * 8 + 8]);
        let expected = [max(a), max(b), sum(a), sum(b), sum(b), max(a)];
        assert_eq!(&out[t * 6..t * 6 + 6], &expected, "thread {t}");
    }
}
