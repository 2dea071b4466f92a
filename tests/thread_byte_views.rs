//! Bytes and 16-bit halves of `thread` objects made of 32-bit integers
//! (`metal/thread_view_parts.rs`): quantised weights loaded from a buffer
//! into a `uint32_t`, a `uint4` or a struct holding a `uint32_t` array,
//! viewed as `uint8_t`, `char` or `ushort` and decoded with a scale and a
//! bias in a helper that takes the view, as MLX's quantised kernels do;
//! writes through such views, read back as whole words; views passed to
//! helpers; and a view still refused, where it is written. Each kernel
//! runs on the GPU against a CPU reference.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use common::source::{assert_error, first_code};
use msl2wgsl::diagnostics::Code;

#[cfg(feature = "runner")]
use common::source::run_body;

/// Rows of weights each thread accumulates.
const ROWS: usize = 4;
/// Threads (columns of blocks) per kernel.
const THREADS: usize = 8;

/// Quantised matrix-vector products in MLX's shape: per row, a block of
/// packed weights is loaded into a thread object, viewed as bytes and
/// decoded (`scale * q + bias`, 4 or 8 bits a value) by `qouter`, which
/// accumulates `x * w` into `result`. Three objects: a `uint32_t`, a
/// struct of a `uint32_t` array (loaded through a cast device pointer),
/// and a `uint4`. Then signed bytes (`char`) of an `int` array and
/// 16-bit halves (`ushort`) of a `uint2`.
const QUANTISED: &str = r#"
template <typename U, int values_per_thread, int bits>
inline void qouter(const thread uint8_t* w, U x, U scale, U bias,
                   thread U* result) {
  if (bits == 4) {
    U s[2] = {scale, scale / 16.0f};
    for (int i = 0; i < (values_per_thread / 2); i++) {
      result[2 * i] += x * (s[0] * (w[i] & 0x0f) + bias);
      result[2 * i + 1] += x * (s[1] * (w[i] & 0xf0) + bias);
    }
  } else if (bits == 8) {
    for (int i = 0; i < values_per_thread; i++) {
      result[i] += x * (scale * w[i] + bias);
    }
  }
}

inline void signed_outer(const thread char* w, float x, float scale,
                         thread float* result) {
  for (int i = 0; i < 8; i++) {
    result[i] += x * (scale * w[i]);
  }
}

inline void half_words(const thread ushort* h, float scale, float bias,
                       thread float* result) {
  for (int i = 0; i < 4; i++) {
    result[i] += scale * h[i] + bias;
  }
}

typedef struct {
  uint32_t wi[2];
} vec_w;

kernel void q4_word(const device uint32_t* ws [[buffer(0)]],
                    const device float* xs [[buffer(1)]],
                    const device float* scales [[buffer(2)]],
                    const device float* biases [[buffer(3)]],
                    device float* y [[buffer(4)]],
                    uint tid [[thread_position_in_grid]],
                    uint n [[threads_per_grid]]) {
  thread uint32_t w_local;
  thread float result[8] = {0};
  for (uint r = 0; r < 4; r++) {
    w_local = ws[r * n + tid];
    qouter<float, 8, 4>((thread uint8_t*)&w_local, xs[r], scales[r * n + tid],
                        biases[r * n + tid], result);
  }
  for (int k = 0; k < 8; k++) y[tid * 8 + k] = result[k];
}

kernel void q8_struct(const device uint32_t* w [[buffer(0)]],
                      const device float* xs [[buffer(1)]],
                      const device float* scales [[buffer(2)]],
                      const device float* biases [[buffer(3)]],
                      device float* y [[buffer(4)]],
                      uint tid [[thread_position_in_grid]],
                      uint n [[threads_per_grid]]) {
  const device uint32_t* ws = w + 2 * tid;
  thread vec_w w_local;
  thread float result[8] = {0};
  for (uint r = 0; r < 4; r++) {
    w_local = *((const device vec_w*)ws);
    qouter<float, 8, 8>((thread uint8_t*)&w_local, xs[r], scales[r * n + tid],
                        biases[r * n + tid], result);
    ws += 2 * n;
  }
  for (int k = 0; k < 8; k++) y[tid * 8 + k] = result[k];
}

kernel void q4_vector(const device uint4* ws [[buffer(0)]],
                      const device float* xs [[buffer(1)]],
                      const device float* scales [[buffer(2)]],
                      const device float* biases [[buffer(3)]],
                      device float* y [[buffer(4)]],
                      uint tid [[thread_position_in_grid]],
                      uint n [[threads_per_grid]]) {
  uint4 w_local;
  float result[32] = {0};
  for (uint r = 0; r < 4; r++) {
    w_local = ws[r * n + tid];
    qouter<float, 32, 4>((thread uint8_t*)&w_local, xs[r], scales[r * n + tid],
                         biases[r * n + tid], result);
  }
  for (int k = 0; k < 32; k++) y[tid * 32 + k] = result[k];
}

kernel void signed_and_halves(const device uint32_t* ws [[buffer(0)]],
                              const device float* xs [[buffer(1)]],
                              const device float* scales [[buffer(2)]],
                              const device float* biases [[buffer(3)]],
                              device float* y [[buffer(4)]],
                              uint tid [[thread_position_in_grid]],
                              uint n [[threads_per_grid]]) {
  int packed[2];
  uint2 halves;
  float result[12] = {0};
  for (uint r = 0; r < 4; r++) {
    packed[0] = int(ws[(r * n + tid) * 2]);
    packed[1] = int(ws[(r * n + tid) * 2 + 1]);
    halves = uint2(ws[(r * n + tid) * 2 + 1], ws[(r * n + tid) * 2]);
    float scale = scales[r * n + tid];
    signed_outer((thread char*)packed, xs[r], scale, result);
    half_words((const thread ushort*)&halves, scale, biases[r * n + tid],
               result + 8);
  }
  for (int k = 0; k < 12; k++) y[tid * 12 + k] = result[k];
}
"#;

/// Pseudo-random words, the same on every run.
fn words(n: usize, seed: u32) -> Vec<u32> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            x ^ (x >> 13)
        })
        .collect()
}

/// Byte `k` of `ws`, as Metal lays words out (little-endian).
fn byte(ws: &[u32], k: usize) -> u8 {
    ws[k / 4].to_le_bytes()[k % 4]
}

/// Inputs per (row, thread): `x` per row, a scale and a bias per block.
/// Multiples of 1/4 and 1/2: every product and sum of the kernels is
/// exact in `f32`, so contraction into `fma` cannot change a result.
fn inputs() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let xs = (0..ROWS).map(|r| r as f32 * 0.5 - 0.75).collect();
    let scales = (0..ROWS * THREADS)
        .map(|i| ((i * 7) % 5 + 1) as f32 * 0.25)
        .collect();
    let biases = (0..ROWS * THREADS)
        .map(|i| -(((i * 3) % 4) as f32) * 0.5)
        .collect();
    (xs, scales, biases)
}

/// `qouter`'s decoding on the CPU: the `values` values of `bits` bits
/// (4 or 8) of the block `w`, in the kernel's order and precision.
fn qouter(w: &[u32], bits: u32, values: usize, (x, scale, bias): (f32, f32, f32), out: &mut [f32]) {
    if bits == 4 {
        let s = [scale, scale / 16.0];
        for i in 0..values / 2 {
            let b = byte(w, i);
            out[2 * i] += x * (s[0] * f32::from(b & 0x0f) + bias);
            out[2 * i + 1] += x * (s[1] * f32::from(b & 0xf0) + bias);
        }
    } else {
        for (i, o) in out.iter_mut().enumerate().take(values) {
            *o += x * (scale * f32::from(byte(w, i)) + bias);
        }
    }
}

/// The reference of a kernel whose thread `t` decodes, per row `r`, the
/// `words_per_block` words of block `r * THREADS + t` of `ws`.
fn quantised_reference(ws: &[u32], words_per_block: usize, bits: u32, values: usize) -> Vec<f32> {
    let (xs, scales, biases) = inputs();
    let mut y = Vec::new();
    for t in 0..THREADS {
        let mut result = vec![0.0f32; values];
        for (r, &x) in xs.iter().enumerate() {
            let block = r * THREADS + t;
            let w = &ws[block * words_per_block..(block + 1) * words_per_block];
            let params = (x, scales[block], biases[block]);
            qouter(w, bits, values, params, &mut result);
        }
        y.extend(result);
    }
    y
}

/// Runs kernel `entry` of [`QUANTISED`] over [`THREADS`] threads with
/// weights `ws`, giving `per_thread` results a thread.
#[cfg(feature = "runner")]
fn run_quantised(entry: &str, ws: &[u32], per_thread: usize) -> Option<Vec<f32>> {
    let (xs, scales, biases) = inputs();
    let w_bytes = ws.iter().flat_map(|w| w.to_le_bytes()).collect();
    let out = run_body(
        QUANTISED,
        entry,
        (THREADS as u32, THREADS as u32),
        vec![
            (0, w_bytes),
            (1, common::f32_bytes(&xs)),
            (2, common::f32_bytes(&scales)),
            (3, common::f32_bytes(&biases)),
            (4, vec![0; THREADS * per_thread * 4]),
        ],
    )?;
    Some(common::f32s(&out[&4]))
}

#[test]
#[cfg(feature = "runner")]
fn four_bit_weights_in_a_word_are_decoded_through_a_byte_view() {
    let ws = words(ROWS * THREADS, 1);
    let Some(got) = run_quantised("q4_word", &ws, 8) else {
        return;
    };
    assert_eq!(got, quantised_reference(&ws, 1, 4, 8));
}

#[test]
#[cfg(feature = "runner")]
fn eight_bit_weights_in_a_struct_of_words_are_decoded_through_a_byte_view() {
    let ws = words(ROWS * THREADS * 2, 2);
    let Some(got) = run_quantised("q8_struct", &ws, 8) else {
        return;
    };
    assert_eq!(got, quantised_reference(&ws, 2, 8, 8));
}

#[test]
#[cfg(feature = "runner")]
fn four_bit_weights_in_a_uint4_are_decoded_through_a_byte_view() {
    let ws = words(ROWS * THREADS * 4, 3);
    let Some(got) = run_quantised("q4_vector", &ws, 32) else {
        return;
    };
    assert_eq!(got, quantised_reference(&ws, 4, 4, 32));
}

#[test]
#[cfg(feature = "runner")]
fn signed_bytes_and_16_bit_halves_of_words_are_read_through_views() {
    let ws = words(ROWS * THREADS * 2, 4);
    let Some(got) = run_quantised("signed_and_halves", &ws, 12) else {
        return;
    };
    let (xs, scales, biases) = inputs();
    let mut want = Vec::new();
    for t in 0..THREADS {
        let mut result = [0.0f32; 12];
        for (r, &x) in xs.iter().enumerate() {
            let block = r * THREADS + t;
            let w = [ws[block * 2], ws[block * 2 + 1]];
            for (i, o) in result.iter_mut().take(8).enumerate() {
                // `char` is signed: the byte sign-extended.
                *o += x * (scales[block] * f32::from(byte(&w, i) as i8));
            }
            // `halves` is (w[1], w[0]); half `i` is bits (i % 2) * 16 of
            // its word `i / 2`.
            let halves = [w[1], w[0]];
            for i in 0..4 {
                let h = (halves[i / 2] >> ((i % 2) * 16)) & 0xffff;
                result[8 + i] += scales[block] * h as f32 + biases[block];
            }
        }
        want.extend(result);
    }
    assert_eq!(got, want);
}

/// Writes through byte and 16-bit views: a constant and a run-time index,
/// a compound assignment that wraps, a pointer moved by `*p++`, a helper
/// that writes through a `thread uint8_t*` it moves itself, signed bytes
/// of an `int` array, and halves of a `uint4`; each object read back as
/// its words.
const WRITES: &str = r#"
inline void put_bytes(thread uint8_t* dst, uint first, uint count) {
  for (uint i = 0; i < count; i++) {
    *dst++ = uint8_t(first + i);
  }
}

inline void negate_byte(thread char* c, int i) { c[i] = -c[i]; }

kernel void byte_writes(const device uint* in [[buffer(0)]],
                        device uint* out [[buffer(1)]],
                        uint tid [[thread_position_in_grid]]) {
  uint w = in[tid];
  thread uchar* b = (thread uchar*)&w;
  b[tid % 4] = uchar(tid * 17);
  b[(tid + 1) % 4] += 200;
  thread uchar* p = b + 2;
  *p++ = 0x5a;
  *p = *p ^ 0xff;

  uint words[3] = {in[tid + 8], in[tid + 16], in[tid + 24]};
  put_bytes((thread uint8_t*)words + tid % 5, tid, 6);

  int iv[2] = {int(in[tid + 32]), -1};
  thread char* c = (thread char*)iv;
  c[5] = char(-2 - int(tid));
  negate_byte(c, int(tid % 8));

  uint4 v = uint4(in[tid + 40], 0u, 7u, 0xffffffffu);
  thread ushort* h = (thread ushort*)&v;
  h[3] = ushort(0xbeef);
  h[tid % 8] -= 1;

  out[tid * 10] = w;
  for (uint i = 0; i < 3; i++) out[tid * 10 + 1 + i] = words[i];
  out[tid * 10 + 4] = uint(iv[0]);
  out[tid * 10 + 5] = uint(iv[1]);
  for (uint i = 0; i < 4; i++) out[tid * 10 + 6 + i] = v[i];
}
"#;

/// [`WRITES`] on the CPU, on the objects' little-endian bytes.
fn writes_reference(input: &[u32]) -> Vec<u32> {
    let to_bytes = |ws: &[u32]| -> Vec<u8> { ws.iter().flat_map(|w| w.to_le_bytes()).collect() };
    let to_words = |bs: &[u8]| -> Vec<u32> {
        bs.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    let mut out = Vec::new();
    for t in 0..THREADS {
        let mut b = to_bytes(&[input[t]]);
        b[t % 4] = (t * 17) as u8;
        b[(t + 1) % 4] = b[(t + 1) % 4].wrapping_add(200);
        b[2] = 0x5a;
        b[3] ^= 0xff;
        out.extend(to_words(&b));

        let mut w = to_bytes(&[input[t + 8], input[t + 16], input[t + 24]]);
        for i in 0..6 {
            w[t % 5 + i] = (t + i) as u8;
        }
        out.extend(to_words(&w));

        let mut c = to_bytes(&[input[t + 32], u32::MAX]);
        c[5] = (-2 - t as i32) as i8 as u8;
        c[t % 8] = (c[t % 8] as i8).wrapping_neg() as u8;
        out.extend(to_words(&c));

        let mut v = to_bytes(&[input[t + 40], 0, 7, u32::MAX]);
        v[6..8].copy_from_slice(&0xbeefu16.to_le_bytes());
        let k = 2 * (t % 8);
        let h = u16::from_le_bytes([v[k], v[k + 1]]).wrapping_sub(1);
        v[k..k + 2].copy_from_slice(&h.to_le_bytes());
        out.extend(to_words(&v));
    }
    out
}

#[test]
#[cfg(feature = "runner")]
fn writes_through_byte_and_half_views_change_only_their_bits() {
    let input = words(48, 5);
    let in_bytes = input.iter().flat_map(|w| w.to_le_bytes()).collect();
    let Some(out) = run_body(
        WRITES,
        "byte_writes",
        (THREADS as u32, THREADS as u32),
        vec![(0, in_bytes), (1, vec![0; THREADS * 10 * 4])],
    ) else {
        return;
    };
    assert_eq!(common::u32s(&out[&1]), writes_reference(&input));
}

/// A view of another thread object (a `float2` array as `float`s) is
/// passed to a helper the same way.
const FLOAT_VIEW: &str = r#"
inline float pair_sum(const thread float* p) { return p[0] + p[1]; }
kernel void float_view(const device float* in [[buffer(0)]],
                       device float* out [[buffer(1)]],
                       uint tid [[thread_position_in_grid]]) {
  float2 a[2] = {float2(in[tid], 2.0f), float2(4.0f, in[tid + 8])};
  thread float* s = reinterpret_cast<thread float*>(a);
  out[tid] = pair_sum(s + tid % 3);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn a_view_of_float_vectors_is_passed_to_a_helper() {
    let input: Vec<f32> = (0..16).map(|i| i as f32 * 0.5 + 1.0).collect();
    let Some(out) = run_body(
        FLOAT_VIEW,
        "float_view",
        (THREADS as u32, THREADS as u32),
        vec![(0, common::f32_bytes(&input)), (1, vec![0; THREADS * 4])],
    ) else {
        return;
    };
    let want: Vec<f32> = (0..THREADS)
        .map(|t| {
            let a = [input[t], 2.0, 4.0, input[t + 8]];
            a[t % 3] + a[t % 3 + 1]
        })
        .collect();
    assert_eq!(common::f32s(&out[&1]), want);
}

#[test]
fn byte_views_of_other_thread_objects_are_refused_where_written() {
    // A `float`'s bytes: only 32-bit integer words are split into bytes.
    let body = "kernel void k(device uint* o [[buffer(0)]]) {\n\
                float f = 1.5f;\n\
                thread uchar* b = (thread uchar*)&f;\n\
                o[0] = b[3]; }\n";
    let text = assert_error(
        body,
        "(thread uchar*)&f",
        0,
        "cannot reinterpret this `float*` as `uchar*`: a pointer into thread memory",
    );
    assert!(text.contains("32-bit integer words only"), "{text}");
    assert_eq!(first_code(body), Code::InvalidConversion);
    // A 3-component vector's words: the fourth is padding.
    let body = "kernel void k(device uint* o [[buffer(0)]]) {\n\
                uint3 v = uint3(1, 2, 3);\n\
                thread uchar* b = (thread uchar*)&v;\n\
                o[0] = b[3]; }\n";
    assert_error(
        body,
        "(thread uchar*)&v",
        0,
        "cannot reinterpret this `uint3*` as `uchar*`",
    );
}

/// 3-bit weights decoded into a local array by a helper whose output
/// parameter is a deduced by-value `W` (the array decays to a `thread
/// float*`, [temp.deduct.call]/2) that the helper moves along the caller's
/// array; the packed bytes come from a device pointer, or from a byte view
/// of a `uint2` that the helper moves too.
const DEQUANTIZE: &str = r#"
template <typename U, int N, typename P, typename W>
inline void dequantize3(P w, U scale, U bias, W w_local) {
  for (int g = 0; g < N / 8; g++) {
    uint packed = uint(w[0]) | (uint(w[1]) << 8) | (uint(w[2]) << 16);
    for (int j = 0; j < 8; j++) {
      w_local[j] = U((packed >> (3 * j)) & 0x7) * scale + bias;
    }
    w_local += 8;
    w += 3;
  }
}

kernel void dequantize(const device uint8_t* ws [[buffer(0)]],
                       const device uint2* words [[buffer(1)]],
                       device float* out [[buffer(2)]],
                       uint tid [[thread_position_in_grid]]) {
  float w_dq[16];
  dequantize3<float, 16>(ws + tid * 6, 0.5f, -1.0f, w_dq);
  uint2 w_local = words[tid];
  float w_view[16];
  dequantize3<float, 16>((const thread uint8_t*)&w_local, 0.25f, 2.0f, w_view);
  for (int i = 0; i < 16; i++) {
    out[tid * 32 + i] = w_dq[i];
    out[tid * 32 + 16 + i] = w_view[i];
  }
}
"#;

/// The 16 3-bit values of the 6 bytes `b`, scaled and biased.
fn dequantize3(b: &[u8], scale: f32, bias: f32) -> Vec<f32> {
    let mut out = Vec::new();
    for g in b.chunks_exact(3) {
        let packed = u32::from(g[0]) | u32::from(g[1]) << 8 | u32::from(g[2]) << 16;
        for j in 0..8 {
            out.push(((packed >> (3 * j)) & 7) as f32 * scale + bias);
        }
    }
    out
}

#[test]
#[cfg(feature = "runner")]
fn a_deduced_output_pointer_moves_along_the_callers_array() {
    let bytes: Vec<u8> = words(THREADS * 6 / 4, 6)
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let pairs = words(THREADS * 2, 7);
    let pair_bytes = pairs.iter().flat_map(|w| w.to_le_bytes()).collect();
    let Some(out) = run_body(
        DEQUANTIZE,
        "dequantize",
        (THREADS as u32, THREADS as u32),
        vec![
            (0, bytes.clone()),
            (1, pair_bytes),
            (2, vec![0; THREADS * 32 * 4]),
        ],
    ) else {
        return;
    };
    let mut want = Vec::new();
    for t in 0..THREADS {
        want.extend(dequantize3(&bytes[t * 6..t * 6 + 6], 0.5, -1.0));
        let view: Vec<u8> = pairs[2 * t..2 * t + 2]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        want.extend(dequantize3(&view[..6], 0.25, 2.0));
    }
    assert_eq!(common::f32s(&out[&2]), want);
}
