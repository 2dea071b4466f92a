//! Still more forms of machine-learning kernel libraries (MLX's kernels,
//! issue #17): a function calling itself in tail position (an index walker
//! that carries its overflow into another step of itself, Euclid's `gcd`);
//! `*` of two SIMD-group matrices. The kernels run on the GPU against a CPU
//! reference; what stays refused is located.
// Without the runner the GPU tests are left out.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{assert_error, translate_body};

// ---- tail recursion ----------------------------------------------------

/// A walker over a strided row that steps `n` elements, wrapping at the
/// row's end: the overflow is carried by a call of `advance` to itself as
/// the last thing it does (plain, and through `this->`, in a class
/// template); a free function returning a call of itself (`gcd`), one that
/// calls itself and then `return;`s, and a function template doing the
/// same with a `constant` pointer passed on unchanged.
const TAIL_CALLS: &str = r#"
template <typename IdxT>
struct RowWalker {
  int pos = 0;
  IdxT at = 0;
  int wraps = 0;

  void advance(int n, constant const int* len, constant const int* stride) thread {
    pos += n;
    at += IdxT(n) * IdxT(stride[0]);
    if (pos >= len[0]) {
      int over = pos - len[0];
      pos = 0;
      at = 0;
      wraps += 1;
      if (over > 0) {
        advance(over, len, stride);
      }
    }
  }

  void advance_twice(int n, constant const int* len, constant const int* stride) thread {
    if (n <= 0) {
      return;
    }
    advance(1, len, stride);
    this->advance_twice(n - 1, len, stride);
  }
};

uint gcd(uint a, uint b) {
  if (b == 0) {
    return a;
  }
  return gcd(b, a % b);
}

void count_down(thread int& total, int k) {
  total += k;
  if (k > 0) {
    count_down(total, k - 1);
    return;
  }
}

template <typename T>
T sum_digits(T x, T acc, constant const int* base) {
  if (x == 0) {
    return acc;
  } else {
    return sum_digits(x / T(base[0]), acc + x % T(base[0]), base);
  }
}

kernel void walk(constant const int* len [[buffer(0)]],
                 constant const int* stride [[buffer(1)]],
                 device int* out [[buffer(2)]],
                 uint tid [[thread_position_in_grid]]) {
  RowWalker<long> w;
  w.advance(int(tid) * 3, len, stride);
  out[tid * 8 + 0] = w.pos;
  out[tid * 8 + 1] = int(w.at);
  out[tid * 8 + 2] = w.wraps;
  RowWalker<int> v;
  v.advance_twice(int(tid), len, stride);
  out[tid * 8 + 3] = v.pos;
  out[tid * 8 + 4] = v.wraps;
  out[tid * 8 + 5] = int(gcd(tid * 12u + 18u, 30u + tid));
  int total = 0;
  count_down(total, int(tid));
  out[tid * 8 + 6] = total;
  out[tid * 8 + 7] = int(sum_digits(uint(tid * 977u + 5u), 0u, len));
}
"#;

/// The CPU twin of `RowWalker::advance`: (pos, at, wraps).
fn advance(state: (i64, i64, i64), n: i64, len: i64, stride: i64) -> (i64, i64, i64) {
    let (mut pos, mut at, mut wraps) = state;
    pos += n;
    at += n * stride;
    if pos >= len {
        let over = pos - len;
        pos = 0;
        at = 0;
        wraps += 1;
        if over > 0 {
            return advance((pos, at, wraps), over, len, stride);
        }
    }
    (pos, at, wraps)
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn sum_digits(x: u32, base: u32) -> u32 {
    if x == 0 {
        0
    } else {
        x % base + sum_digits(x / base, base)
    }
}

#[cfg(feature = "runner")]
#[test]
fn tail_calls_run_as_loops_on_gpu() {
    // GL loses a struct's updates made through a pointer parameter in such
    // a loop (`gl_known_defects.rs`).
    if let Some(gpu) = common::gpu() {
        if gpu.backend() == wgpu::Backend::Gl {
            common::skip::known_defect(
                gpu,
                "tail calls as loops updating a struct through a pointer",
                "GL loses the updates (gl_known_defects.rs, loop_updating_a_struct_through_a_pointer_parameter)",
            );
            return;
        }
    }
    let (len, stride) = (5i32, 2i32);
    let n = 16u32;
    let Some(out) = common::source::run_body(
        TAIL_CALLS,
        "walk",
        (n, 16),
        vec![
            (0, len.to_le_bytes().to_vec()),
            (1, stride.to_le_bytes().to_vec()),
            (2, vec![0u8; 8 * 4 * n as usize]),
        ],
    ) else {
        return;
    };
    let got: Vec<i32> = out[&2]
        .chunks(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    for tid in 0..n as i64 {
        let (pos, at, wraps) = advance((0, 0, 0), tid * 3, len as i64, stride as i64);
        let mut twice = (0, 0, 0);
        for _ in 0..tid {
            twice = advance(twice, 1, len as i64, stride as i64);
        }
        let t = tid as u32;
        let want = [
            pos,
            at,
            wraps,
            twice.0,
            twice.2,
            gcd(t * 12 + 18, 30 + t) as i64,
            tid * (tid + 1) / 2,
            sum_digits(t * 977 + 5, len as u32) as i64,
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(
                got[tid as usize * 8 + k] as i64,
                *w,
                "thread {tid}, value {k}"
            );
        }
    }
}

/// The WGSL has no recursion: the tail calls became loops.
#[test]
fn tail_calls_become_loops() {
    let lib = translate_body(TAIL_CALLS);
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("loop {"), "{wgsl}");
    assert!(!wgsl.contains("gcd(b"), "{wgsl}");
}

/// A call of a function to itself whose result is used (`1 + f(n - 1)`) is
/// not a tail call: it stays refused, at the call.
#[test]
fn recursion_outside_tail_position_is_refused() {
    let src = r#"
int depth(int n) {
  if (n == 0) {
    return 0;
  }
  return 1 + depth(n - 1);
}
kernel void k(device int* out [[buffer(0)]]) { out[0] = depth(3); }
"#;
    assert_error(
        src,
        "depth(n - 1)",
        0,
        "recursive function calls are not allowed in Metal",
    );
}

/// A tail call that moves a pointer argument (`p + 1`) cannot reassign the
/// WGSL argument that carries it: refused, at the call.
#[test]
fn tail_call_moving_a_pointer_is_refused() {
    let src = r#"
int last(device const int* p, int n) {
  if (n == 1) {
    return p[0];
  }
  return last(p + 1, n - 1);
}
kernel void k(device const int* in [[buffer(0)]], device int* out [[buffer(1)]]) {
  out[0] = last(in, 4);
}
"#;
    assert_error(
        src,
        "last(p + 1, n - 1)",
        0,
        "recursive function calls are not allowed in Metal",
    );
}

// ---- one-element vectors -----------------------------------------------

/// A fragment descriptor whose per-row vector type has as many elements as
/// a fragment has rows per thread, which is 1 (`vec<T, 1>`, clang's
/// one-element `ext_vector_type`), beside one of 2: constructed from a
/// scalar, computed with, converted to and from its element.
const ONE_ELEMENT_VECTORS: &str = r#"
template <typename T, int kRows, int kCols>
struct FragLayout {
  static constant constexpr const int kElemRows = kRows / 8;
  static constant constexpr const int kElemCols = kCols / 4;
  typedef vec<T, kElemRows> row_frag_type;
  typedef vec<T, kElemCols> col_frag_type;
};

kernel void frags(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                  uint tid [[thread_position_in_grid]]) {
  using L = FragLayout<float, 8, 8>;
  L::row_frag_type r = in[tid];
  L::col_frag_type c = L::col_frag_type(in[tid], 2.0f);
  r = r * 3.0f + L::row_frag_type(1.0f);
  vec<half, 1> h = vec<half, 1>(r);
  out[tid * 3 + 0] = r;
  out[tid * 3 + 1] = float(h) + c.y;
  out[tid * 3 + 2] = dot(c, c) + r;
}
"#;

#[cfg(feature = "runner")]
#[test]
fn one_element_vectors_compute_as_their_element_on_gpu() {
    let input = [0.5f32, -1.25, 3.0, 10.0];
    let Some(got) = common::source::run_body_f32s(
        ONE_ELEMENT_VECTORS,
        "frags",
        (4, 4),
        vec![(0, common::f32_bytes(&input)), (1, vec![0u8; 12 * 4])],
        1,
    ) else {
        return;
    };
    for (i, &x) in input.iter().enumerate() {
        let r = x * 3.0 + 1.0;
        // Every value here is exact in `half`.
        let want = [r, r + 2.0, x * x + 4.0 + r];
        assert_eq!(&got[i * 3..i * 3 + 3], &want, "thread {i}");
    }
}

// ---- explicit specialisations of members of struct templates -----------

/// A mover between buffers whose members the code specialises for some
/// argument lists after the struct template (`template <> bool
/// Mover<float, float>::out_of_range(..)`, the defaults completing the
/// list; a parameter renamed; one overload of two; all four arguments
/// given); other instances keep the template's own members.
const MEMBER_SPECIALISATIONS: &str = r#"
template <typename in_T, typename out_T, int step = 0, bool packed = false>
struct Mover {
  const device in_T* src;
  device out_T* dst;
  int n;

  Mover(const device in_T* s, device out_T* d, int n_) : src(s), dst(d), n(n_) {}

  bool out_of_range(uint i) const thread {
    return int(i) >= n;
  }
  void move(uint i) const thread {
    dst[i] = out_T(src[i]) + out_T(step);
  }
  void move(uint i, float scale) const thread {
    dst[i] = out_T(float(src[i]) * scale);
  }
};

template <>
bool Mover<float, float>::out_of_range(uint idx) const thread {
  return int(idx) >= n / 2;
}

template <>
void Mover<float, float>::move(uint i) const thread {
  dst[i] = src[i] * 10.0f;
}

template <>
void Mover<float, float, /*step=*/1, /*packed=*/true>::move(uint i) const thread {
  dst[i] = src[i] * -1.0f;
}

template <typename A, typename B, int S, bool P>
kernel void mv(const device A* in [[buffer(0)]], device B* out [[buffer(1)]],
               device B* scaled [[buffer(2)]], uint tid [[thread_position_in_grid]]) {
  Mover<A, B, S, P> m(in, out, 8);
  if (m.out_of_range(tid)) {
    out[tid] = B(-7);
  } else {
    m.move(tid);
  }
  Mover<A, B, S, P> s(in, scaled, 8);
  s.move(tid, 0.5f);
}
template [[host_name("ff")]] kernel void mv<float, float, 0, false>(const device float*, device float*, device float*, uint);
template [[host_name("ff1p")]] kernel void mv<float, float, 1, true>(const device float*, device float*, device float*, uint);
template [[host_name("ff1")]] kernel void mv<float, float, 1, false>(const device float*, device float*, device float*, uint);
template [[host_name("fi")]] kernel void mv<float, int, 0, false>(const device float*, device int*, device int*, uint);
"#;

#[cfg(feature = "runner")]
#[test]
fn member_specialisations_replace_the_template_members_on_gpu() {
    let input = [1.5f32, -2.0, 4.0, 8.25, 3.0, -1.0, 6.5, 0.5];
    for entry in ["ff", "ff1p", "ff1", "fi"] {
        let Some(out) = common::source::run_body(
            MEMBER_SPECIALISATIONS,
            entry,
            (8, 8),
            vec![
                (0, common::f32_bytes(&input)),
                (1, vec![0u8; 32]),
                (2, vec![0u8; 32]),
            ],
        ) else {
            return;
        };
        for (i, &x) in input.iter().enumerate() {
            // (moved, scaled) as the instance's members compute them.
            let (moved, scaled) = match entry {
                "ff" if i >= 4 => (-7.0, x * 0.5),
                "ff" => (x * 10.0, x * 0.5),
                "ff1p" => (-x, x * 0.5),
                "ff1" => (x + 1.0, x * 0.5),
                _ => ((x as i32) as f32, ((x * 0.5) as i32) as f32),
            };
            let read = |b: &[u8]| -> f32 {
                let w: [u8; 4] = b[i * 4..i * 4 + 4].try_into().unwrap();
                if entry == "fi" {
                    i32::from_le_bytes(w) as f32
                } else {
                    f32::from_le_bytes(w)
                }
            };
            assert_eq!(read(&out[&1]), moved, "{entry}: out[{i}]");
            assert_eq!(read(&out[&2]), scaled, "{entry}: scaled[{i}]");
        }
    }
}

/// A specialisation of a member the template does not define is located.
#[test]
fn specialising_an_unknown_member_is_located() {
    let src = r#"
template <typename T, int N = 1>
struct Box {
  T v;
  T get() const thread { return v; }
};
template <>
float Box<float>::get(int k) const thread { return v * k; }
kernel void k(device float* out [[buffer(0)]]) { Box<float> b{2.0f}; out[0] = b.get(); }
"#;
    assert_error(
        src,
        "get(int k)",
        0,
        "explicit specialisation of `get` does not match any member function `get` of `Box` with 1 parameter(s)",
    );
}

// ---- decltype(local)::member in constants --------------------------------

/// A tile whose per-thread row count is a static member; the kernel sizes
/// its accumulators by `decltype(tile)::kRowsPerThread` read into a
/// `constexpr` local (and through a pointer to the tile).
const DECLTYPE_CONSTANTS: &str = r#"
template <typename T, int kTileRows, int kFragRows>
struct Tile {
  static constant constexpr const short kRowsPerThread = kTileRows * kFragRows;
  T vals[kTileRows * kFragRows];
};

kernel void rows(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                 uint tid [[thread_position_in_grid]]) {
  Tile<float, 2, 3> tile;
  thread Tile<float, 2, 3>* tp = &tile;
  constexpr short kRowsPT = decltype(tile)::kRowsPerThread;
  constexpr int kTwice = 2 * decltype(tp)::kRowsPerThread;
  float max_score[kRowsPT];
  float sum_score[kTwice] = {0};
  for (short i = 0; i < kRowsPT; i++) {
    tile.vals[i] = in[tid] * float(i + 1);
    max_score[i] = tile.vals[i];
    sum_score[2 * i] = tile.vals[i] + 1.0f;
  }
  float total = 0.0f;
  for (int i = 0; i < kTwice; i++) {
    total += sum_score[i];
  }
  out[tid * 2] = max_score[kRowsPT - 1];
  out[tid * 2 + 1] = total + float(kTwice);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn decltype_members_size_arrays_on_gpu() {
    let input = [1.0f32, -0.5, 2.25, 4.0];
    let Some(got) = common::source::run_body_f32s(
        DECLTYPE_CONSTANTS,
        "rows",
        (4, 4),
        vec![(0, common::f32_bytes(&input)), (1, vec![0u8; 8 * 4])],
        1,
    ) else {
        return;
    };
    for (t, &x) in input.iter().enumerate() {
        let rows = 6;
        let total: f32 = (1..=rows).map(|i| x * i as f32 + 1.0).sum();
        assert_eq!(got[t * 2], x * rows as f32, "thread {t}: max_score");
        assert_eq!(got[t * 2 + 1], total + 12.0, "thread {t}: total");
    }
}

// ---- `*` of SIMD-group matrices ------------------------------------------

/// A Winograd-style transform of a filter tile: `(G * g) * Gt` with
/// `operator*` of `simdgroup_matrix` (Metal's `<metal_simdgroup_matrix>`
/// defines it as `simdgroup_multiply` into a new matrix), the tile `g`
/// written lane by lane through `thread_elements()`, the result read back
/// the same way and through a store.
const MATRIX_PRODUCTS: &str = r#"
#include <metal_simdgroup_matrix>
kernel void transform(device const float* gm [[buffer(0)]],
                      device const float* gt [[buffer(1)]],
                      device float* out [[buffer(2)]],
                      uint lane [[thread_index_in_simdgroup]]) {
  simdgroup_matrix<float, 8, 8> G, Gt;
  simdgroup_load(G, gm);
  simdgroup_load(Gt, gt);
  simdgroup_matrix<float, 8, 8> g;
  g.thread_elements()[0] = float(int(lane % 5) - 2);
  g.thread_elements()[1] = float(int(lane * 7 % 9) - 4);
  simdgroup_matrix<float, 8, 8> g_out = (G * g) * Gt;
  simdgroup_store(g_out, out);
  out[64 + lane * 2] = g_out.thread_elements()[0];
  out[64 + lane * 2 + 1] = g_out.thread_elements()[1];
  simdgroup_store(G * Gt, out + 128);
}
"#;

/// Lane `L`'s elements of an 8×8 SIMD-group matrix: row
/// `4·L₄ + 2·L₂ + L₁`, columns `4·L₃ + 2·L₀` and the next (the layout MLX's
/// `BaseMMAFrag::get_coord` documents).
fn lane_slots(lane: usize) -> (usize, usize) {
    let bit = |i: usize| (lane >> i) & 1;
    let row = 4 * bit(4) + 2 * bit(2) + bit(1);
    let col = 4 * bit(3) + 2 * bit(0);
    (row, col)
}

fn product8(a: &[f32], b: &[f32]) -> Vec<f32> {
    (0..64)
        .map(|i| (0..8).map(|k| a[i / 8 * 8 + k] * b[k * 8 + i % 8]).sum())
        .collect()
}

#[cfg(feature = "runner")]
#[test]
fn matrix_products_by_operator_on_gpu() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use msl2wgsl::Options;
    let Some(gpu) = common::gpu() else {
        return;
    };
    // Small integers: every product and sum is exact in `f32`.
    let g_m: Vec<f32> = (0..64).map(|i| ((i * 5 + 3) % 7) as f32 - 3.0).collect();
    let g_t: Vec<f32> = (0..64).map(|i| ((i * 3 + 1) % 5) as f32 - 2.0).collect();
    let mut g = vec![0.0f32; 64];
    for lane in 0..32 {
        let (r, c) = lane_slots(lane);
        g[r * 8 + c] = (lane % 5) as f32 - 2.0;
        g[r * 8 + c + 1] = (lane * 7 % 9) as f32 - 4.0;
    }
    let want = product8(&product8(&g_m, &g), &g_t);
    let want_gg = product8(&g_m, &g_t);
    // Natively only on 32-lane subgroups: `thread_elements()` is Apple's
    // 32-lane layout.
    for simd in common::ml::modes(false) {
        let options = Options {
            simd,
            ..Options::default()
        };
        let src = format!("{}{MATRIX_PRODUCTS}", common::source::PRELUDE);
        let buffers = [
            (0, common::f32_bytes(&g_m)),
            (1, common::f32_bytes(&g_t)),
            (2, vec![0u8; 192 * 4]),
        ]
        .into_iter()
        .collect();
        let dispatch = Dispatch::Threadgroups {
            groups: [1, 1, 1],
            threadgroup: [32, 1, 1],
        };
        let out = run_kernel(
            gpu,
            "t.metal",
            &src,
            &options,
            "transform",
            &dispatch,
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{simd:?}: {e}"));
        let got = common::f32s(&out[&2]);
        assert_eq!(&got[..64], &want[..], "{simd:?}: (G * g) * Gt stored");
        for lane in 0..32 {
            let (r, c) = lane_slots(lane);
            let pair = [want[r * 8 + c], want[r * 8 + c + 1]];
            assert_eq!(
                &got[64 + lane * 2..66 + lane * 2],
                &pair,
                "{simd:?}: lane {lane}"
            );
        }
        assert_eq!(&got[128..], &want_gg[..], "{simd:?}: G * Gt");
    }
}

/// `*` of matrices of different element types is refused, located.
#[test]
fn matrix_product_of_mixed_types_is_located() {
    let src = r#"
#include <metal_simdgroup_matrix>
kernel void k(device float* out [[buffer(0)]]) {
  simdgroup_float8x8 a = make_filled_simdgroup_matrix<float, 8, 8>(1.0f);
  simdgroup_half8x8 b = make_filled_simdgroup_matrix<half, 8, 8>(1.0h);
  simdgroup_float8x8 c = a * b;
  simdgroup_store(c, out);
}
"#;
    assert_error(src, "a * b", 0, "invalid operands to binary `*`");
}

// ---- reading a thread object as another type ---------------------------

/// An 8-bit float held as the byte it is stored in (a struct of one
/// `uint8_t`, as ML libraries declare `fp8` types), read from a byte
/// variable through a pointer cast; a `float` read as its bits and back; a
/// `half2` read as one `uint`.
const THREAD_PUNNING: &str = r#"
struct fp8_e4m3 {
  uint8_t bits;
  float value() const thread {
    uint sign = (bits >> 7) & 1;
    uint exp = (bits >> 3) & 15;
    uint man = bits & 7;
    float v = exp == 0 ? float(man) / 8.0f * exp2(-6.0f)
                       : (1.0f + float(man) / 8.0f) * exp2(float(exp) - 7.0f);
    return sign == 1 ? -v : v;
  }
};

struct FromFP8 {
  float operator()(uint8_t x) thread {
    return (*(thread fp8_e4m3*)(&x)).value();
  }
};

kernel void pun(device const uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                uint tid [[thread_position_in_grid]]) {
  uint8_t byte = uint8_t(in[tid]);
  out[tid * 4] = as_type<uint>(FromFP8{}(byte));
  float f = float(in[tid]) * 0.75f;
  uint bits = *(thread uint*)&f;
  out[tid * 4 + 1] = bits;
  uint word = in[tid] * 2654435761u;
  float back = *((thread float*)(&word));
  out[tid * 4 + 2] = as_type<uint>(back);
  half2 pair = half2(half(tid), half(-2.5h));
  out[tid * 4 + 3] = *(thread uint*)&pair;
}
"#;

/// The `fp8` value of `byte` (e4m3: 1 sign, 4 exponent bits of bias 7, 3
/// mantissa bits).
fn fp8_value(byte: u8) -> f32 {
    let (sign, exp, man) = (byte >> 7, (byte >> 3) & 15, byte & 7);
    let v = if exp == 0 {
        man as f32 / 8.0 * 2f32.powi(-6)
    } else {
        (1.0 + man as f32 / 8.0) * 2f32.powi(exp as i32 - 7)
    };
    if sign == 1 {
        -v
    } else {
        v
    }
}

#[cfg(feature = "runner")]
#[test]
fn thread_objects_read_as_other_types_on_gpu() {
    let input: Vec<u32> = vec![0x00, 0x38, 0x41, 0xb5, 0x7e, 0x09, 0xc0, 0x23];
    let Some(out) = common::source::run_body(
        THREAD_PUNNING,
        "pun",
        (8, 8),
        vec![
            (0, common::ml::u32_bytes(&input)),
            (1, vec![0u8; 8 * 4 * 4]),
        ],
    ) else {
        return;
    };
    let got = common::u32s(&out[&1]);
    for (t, &x) in input.iter().enumerate() {
        let pair = (half::f16::from_f32(t as f32).to_bits() as u32)
            | ((half::f16::from_f32(-2.5).to_bits() as u32) << 16);
        let want = [
            fp8_value(x as u8).to_bits(),
            (x as f32 * 0.75).to_bits(),
            x.wrapping_mul(2654435761),
            pair,
        ];
        assert_eq!(&got[t * 4..t * 4 + 4], &want, "thread {t}");
    }
}

/// A read of a thread object as a type of another size stays refused.
#[test]
fn thread_object_read_as_a_wider_type_is_refused() {
    let src = r#"
kernel void k(device uint* out [[buffer(0)]]) {
  ushort h = 3;
  out[0] = *(thread uint*)&h;
}
"#;
    assert_error(
        src,
        "(thread uint*)&h",
        0,
        "cannot reinterpret this `ushort*` as `uint*`",
    );
}

/// A write through such a pointer is refused where it is written.
#[test]
fn thread_object_written_as_another_type_is_refused() {
    let src = r#"
kernel void k(device float* out [[buffer(0)]]) {
  float f = 1.0f;
  *(thread uint*)&f = 3u;
  out[0] = f;
}
"#;
    assert_error(src, "*(thread uint*)&f", 0, "expression is not assignable");
}

// ---- a library function beside user overloads of its name -----------------

/// User overloads of `metal::precise::log` for a struct type (as ML
/// libraries add them for their own 16-bit floats) beside a call of the
/// library's `log` whose argument calls a user function: the user attempt
/// is dropped, and the library call computes from the argument.
const LIBRARY_BESIDE_USER_OVERLOADS: &str = r#"
struct brain16 {
  ushort bits;
};
namespace metal {
namespace precise {
inline brain16 log(brain16 x) {
  return brain16{ushort(x.bits + 1)};
}
}
}
struct Norm {
  float2 operator()(float2 v) thread {
    return float2(metal::precise::sqrt(v.x * v.x + v.y * v.y), 0.0f);
  }
};
kernel void logs(device const float2* in [[buffer(0)]], device float* out [[buffer(1)]],
                 uint tid [[thread_position_in_grid]]) {
  out[tid] = metal::precise::log(Norm{}(in[tid]).x);
  out[tid + 4] = float(metal::precise::log(brain16{ushort(tid)}).bits);
}
"#;

#[cfg(feature = "runner")]
#[test]
fn library_function_beside_user_overloads_on_gpu() {
    let input = [3.0f32, 4.0, 1.0, 0.0, 0.6, 0.8, 5.0, 12.0];
    let Some(got) = common::source::run_body_f32s(
        LIBRARY_BESIDE_USER_OVERLOADS,
        "logs",
        (4, 4),
        vec![(0, common::f32_bytes(&input)), (1, vec![0u8; 8 * 4])],
        1,
    ) else {
        return;
    };
    for t in 0..4 {
        let norm = (input[2 * t].powi(2) + input[2 * t + 1].powi(2)).sqrt();
        // `precise::log`: within 1 ULP of ln (norms 5, 1, 1, 13).
        let want = norm.ln();
        assert!(
            (got[t] - want).abs() <= f32::EPSILON * want.abs().max(1.0),
            "thread {t}: {} vs {want}",
            got[t]
        );
        assert_eq!(got[t + 4], (t + 1) as f32, "thread {t}: the user overload");
    }
}

// ---- INFINITY, NAN ----------------------------------------------------

/// MSL's `INFINITY`, `HUGE_VALF` and `NAN` (MSL §6.5), in the shape of a
/// reduction's `min` that propagates NaN (`static_cast<T>(NAN)` in a
/// template) and an initial value of `-INFINITY`.
const NAN_MIN: &str = r#"
struct MinOp {
  template <typename T>
  T operator()(T a, T b) thread {
    if (metal::isnan(a) || metal::isnan(b)) {
      return static_cast<T>(NAN);
    }
    return a < b ? a : b;
  }
};

kernel void nan_min(const device float* x [[buffer(0)]],
                    device float* out [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
  MinOp op;
  constexpr float top = INFINITY;
  float m = top;
  for (int k = 0; k < 4; k++) {
    m = op(m, x[i * 4 + k]);
  }
  out[i * 3] = m;
  out[i * 3 + 1] = -HUGE_VALF;
  out[i * 3 + 2] = NAN;
}
"#;

#[test]
#[cfg(feature = "runner")]
fn infinity_and_nan_macros_on_gpu() {
    let n = 8usize;
    let mut x: Vec<f32> = (0..n * 4).map(|k| ((k * 7) % 9) as f32 - 4.0).collect();
    x[4 * 3 + 2] = f32::NAN;
    x[4 * 6] = f32::NAN;
    let Some(got) = common::source::run_body_f32s(
        NAN_MIN,
        "nan_min",
        (n as u32, 8),
        vec![(0, common::f32_bytes(&x)), (1, vec![0u8; 12 * n])],
        1,
    ) else {
        return;
    };
    for i in 0..n {
        let row = &x[i * 4..i * 4 + 4];
        let want = match row.iter().any(|v| v.is_nan()) {
            true => f32::NAN,
            false => row.iter().fold(f32::INFINITY, |a, &b| a.min(b)),
        };
        let m = got[i * 3];
        assert!(
            (want.is_nan() && m.is_nan()) || m == want,
            "thread {i}: {m} want {want}"
        );
        assert_eq!(got[i * 3 + 1], f32::NEG_INFINITY, "thread {i}");
        assert!(got[i * 3 + 2].is_nan(), "thread {i}");
    }
}
