//! Shapes that used to send a kernel to the adapter's subgroups (W0410)
//! and that the 32-lane emulation now takes (issues #17/#18), against CPU
//! models of Apple's 32-lane SIMD groups: a GEMV-style helper that returns
//! early for rows past the end and reduces with `simd_shuffle_down` (MLX's
//! `GEMVKernel::run`), a value-returning helper that returns early on some
//! lanes, SIMD-group calls in `||`/`&&`/`?:` operands (SPIRV-Cross's
//! `spvSubgroupAllEqual`), and a helper whose loop bound comes from its
//! (uniform) arguments. On lavapipe (8-lane subgroups) the adapter's
//! subgroups give other results, so these tests fail wherever the
//! translation falls back to them instead of emulating.
#![cfg(feature = "runner")]

mod common;

use common::f32_bytes;
use common::source::{run_body, PRELUDE};
use msl2wgsl::{Library, Options, SimdGroups};

fn i32_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `body` translates under the explicit emulation without a warning
/// (nothing fell back to the adapter's subgroups), and without the
/// `subgroups` extension.
fn emulated_wgsl(body: &str) -> String {
    let options = Options {
        simd: SimdGroups::Emulated32,
        ..Options::default()
    };
    let lib = Library::from_source("t.metal", &format!("{PRELUDE}{body}"), &options)
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert_eq!(lib.warnings(), "");
    let wgsl = lib.wgsl().to_string();
    assert!(!wgsl.contains("enable subgroups"), "{wgsl}");
    wgsl
}

/// Small integers (exact in `f32` sums) in `lo..=hi`.
fn integers(n: usize, seed: i64, lo: i64, hi: i64) -> Vec<i64> {
    (0..n as i64)
        .map(|i| (i * 37 + seed * 11 + (i * i) % 13) % (hi - lo + 1) + lo)
        .collect()
}

/// MLX's GEMV shape: each SIMD group takes `SM` rows, `SN` lanes a row;
/// a helper returns early for rows past the end, accumulates its columns,
/// reduces the row's lanes with halving `simd_shuffle_down`s (16 lanes a
/// row: the first lane reads lanes 8 apart, beyond an 8-lane subgroup),
/// and skips a threadgroup reduction whose memory is `nullptr` under a
/// constant condition.
const GEMV_ROWS: &str = r#"
template <int SM, int SN, int TN, int BN>
struct Rows {
  static constant constexpr bool needs_tgp_reduction = BN > 1;
  static void run(device const float* mat, device const float* vec, device float* out,
                  constant int& n_rows, constant int& n_cols, threadgroup float* tgp,
                  uint tg, uint sg, uint lane) {
    const int thrM = lane / SN;
    const int thrN = lane % SN;
    const int row = (int(tg) * 2 + int(sg)) * SM + thrM;
    if (row >= n_rows)
      return;
    float result = 0;
    for (int k = thrN * TN; k < n_cols; k += SN * TN) {
      for (int t = 0; t < TN; t++) {
        result += mat[row * n_cols + k + t] * vec[k + t];
      }
    }
    for (ushort sn = SN / 2; sn >= 1; sn >>= 1) {
      result += simd_shuffle_down(result, sn);
    }
    if (needs_tgp_reduction) {
      threadgroup float* mine = tgp + sg;
      if (thrN == 0) {
        mine[0] = result;
        threadgroup_barrier(mem_flags::mem_none);
      }
    }
    if (thrN == 0) {
      out[row] = result;
    }
  }
};

kernel void gemv_rows(device const float* mat [[buffer(0)]], device const float* vec [[buffer(1)]],
                      device float* out [[buffer(2)]], constant int& n_rows [[buffer(3)]],
                      constant int& n_cols [[buffer(4)]],
                      uint tg [[threadgroup_position_in_grid]],
                      uint sg [[simdgroup_index_in_threadgroup]],
                      uint lane [[thread_index_in_simdgroup]]) {
  using K = Rows<2, 16, 4, 1>;
  threadgroup float tgp[1];
  K::run(mat, vec, out, n_rows, n_cols, K::needs_tgp_reduction ? tgp : nullptr, tg, sg, lane);
}
"#;

#[test]
fn gemv_helper_returning_early_reduces_each_row_over_16_lanes() {
    emulated_wgsl(GEMV_ROWS);
    // Two threadgroups of two SIMD groups of two rows: 8 row slots, the
    // last (lanes 16..31 of the last SIMD group) past the end.
    let (n_rows, n_cols) = (7usize, 40usize);
    let mat: Vec<f32> = integers(n_rows * n_cols, 3, -4, 4)
        .iter()
        .map(|v| *v as f32)
        .collect();
    let vec: Vec<f32> = integers(n_cols, 5, -3, 3)
        .iter()
        .map(|v| *v as f32)
        .collect();
    let sentinel = -12345.0f32;
    let Some(out) = run_body(
        GEMV_ROWS,
        "gemv_rows",
        (128, 64),
        vec![
            (0, f32_bytes(&mat)),
            (1, f32_bytes(&vec)),
            (2, f32_bytes(&[sentinel; 8])),
            (3, (n_rows as i32).to_le_bytes().to_vec()),
            (4, (n_cols as i32).to_le_bytes().to_vec()),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&2]);
    for row in 0..n_rows {
        let want: f32 = (0..n_cols).map(|k| mat[row * n_cols + k] * vec[k]).sum();
        assert_eq!(got[row], want, "row {row}");
    }
    assert_eq!(got[7], sentinel, "the row past the end is not written");
}

/// A value-returning helper that returns early on the lanes at or past
/// `count`: its SIMD sums and prefix sums run over the lanes that stayed.
const MASKED_SUM: &str = r#"
int masked(device const int* x, uint i, uint lane, uint count) {
  if (lane >= count) {
    return -1;
  }
  int v = x[i];
  int total = simd_sum(v);
  return total * 1000 + simd_prefix_exclusive_sum(v);
}

kernel void masked_sum(device const int* x [[buffer(0)]], device const uint* counts [[buffer(1)]],
                       device int* out [[buffer(2)]], uint i [[thread_position_in_grid]],
                       uint lane [[thread_index_in_simdgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]]) {
  out[i] = masked(x, i, lane, counts[sg]);
}
"#;

#[test]
fn helper_returning_early_on_some_lanes_sums_over_the_rest() {
    emulated_wgsl(MASKED_SUM);
    let x: Vec<i32> = integers(128, 2, -9, 9).iter().map(|v| *v as i32).collect();
    let counts = [32u32, 5, 0, 17];
    let Some(out) = run_body(
        MASKED_SUM,
        "masked_sum",
        (128, 128),
        vec![
            (0, i32_bytes(&x)),
            (1, u32_bytes(&counts)),
            (2, vec![0; 128 * 4]),
        ],
    ) else {
        return;
    };
    let want: Vec<i32> = (0..128)
        .map(|i| {
            let (g, lane) = (i / 32, i % 32);
            let count = counts[g] as usize;
            if lane >= count {
                return -1;
            }
            let lanes = &x[g * 32..g * 32 + count];
            let total: i32 = lanes.iter().sum();
            let prefix: i32 = lanes[..lane].iter().sum();
            total * 1000 + prefix
        })
        .collect();
    assert_eq!(i32s(&out[&2]), want);
}

/// SIMD-group calls in the right operand of `||` and `&&` and in the
/// operands of `?:` (SPIRV-Cross's `spvSubgroupAllEqual` is the first).
const OPERANDS: &str = r#"
inline bool all_equal(bool value) {
  return simd_all(value) || !simd_any(value);
}

kernel void operands(device const int* x [[buffer(0)]], device int* out [[buffer(1)]],
                     uint i [[thread_position_in_grid]],
                     uint lane [[thread_index_in_simdgroup]]) {
  int v = x[i];
  bool p = v > 0;
  int r = all_equal(p) ? 1 : 0;
  r += ((lane < 16) && simd_any(v > 5)) ? 10 : 0;
  r += 100 * ((lane & 1) != 0 ? simd_sum(v) : simd_max(v));
  out[i] = r;
}
"#;

#[test]
fn simd_calls_in_logical_and_conditional_operands_run_on_the_lanes_that_evaluate_them() {
    emulated_wgsl(OPERANDS);
    // Group 0 all positive, group 1 none, groups 2 and 3 mixed.
    let mut x: Vec<i32> = integers(128, 4, -9, 9).iter().map(|v| *v as i32).collect();
    x[..32].iter_mut().for_each(|v| *v = v.abs() + 1);
    x[32..64].iter_mut().for_each(|v| *v = -v.abs());
    // Group 3: only lanes 16.. have values above 5.
    x[96..112].iter_mut().for_each(|v| *v = (*v).min(5));
    x[120] = 9;
    // Group 2: mixed, with a value above 5 below lane 16.
    (x[64], x[65], x[67]) = (3, -3, 7);
    let Some(out) = run_body(
        OPERANDS,
        "operands",
        (128, 128),
        vec![(0, i32_bytes(&x)), (1, vec![0; 128 * 4])],
    ) else {
        return;
    };
    let want: Vec<i32> = (0..128)
        .map(|i| {
            let (g, lane) = (i / 32, i % 32);
            let group = &x[g * 32..g * 32 + 32];
            let all = group.iter().all(|v| *v > 0);
            let any = group.iter().any(|v| *v > 0);
            let mut r = i32::from(all || !any);
            // `simd_any` over the lanes below 16, which alone evaluate it.
            if lane < 16 && group[..16].iter().any(|v| *v > 5) {
                r += 10;
            }
            let odd = group.iter().skip(1).step_by(2);
            let even = group.iter().step_by(2);
            r += 100
                * if lane % 2 == 1 {
                    odd.sum::<i32>()
                } else {
                    *even.max().unwrap()
                };
            r
        })
        .collect();
    assert_eq!(i32s(&out[&1]), want);
    // Group 3 has a value above 5, but only where `&&` skips `simd_any`.
    assert!(x[96..128].iter().any(|v| *v > 5) && x[96..112].iter().all(|v| *v <= 5));
}

/// A helper whose chunk loop starts at the threadgroup's index and steps
/// by the threadgroup count, both passed in: uniform across the
/// threadgroup, as Tint finds it through the call's arguments.
const CHUNKS: &str = r#"
void chunk_sums(device const int* x, device int* out, int n_chunks, uint tg, uint n_tg,
                uint lane, uint sg) {
  for (int chunk = int(tg); chunk < n_chunks; chunk += int(n_tg)) {
    int s = simd_sum(x[chunk * 64 + sg * 32 + lane]);
    if (lane == 0) {
      out[chunk * 2 + sg] = s;
    }
  }
}

kernel void chunks(device const int* x [[buffer(0)]], device int* out [[buffer(1)]],
                   constant int& n_chunks [[buffer(2)]],
                   uint tg [[threadgroup_position_in_grid]],
                   uint n_tg [[threadgroups_per_grid]],
                   uint lane [[thread_index_in_simdgroup]],
                   uint sg [[simdgroup_index_in_threadgroup]]) {
  chunk_sums(x, out, n_chunks, tg, n_tg, lane, sg);
}
"#;

#[test]
fn helper_loop_bounded_by_uniform_arguments_sums_32_lane_groups() {
    let wgsl = emulated_wgsl(CHUNKS);
    // Its loop is uniform: no threadgroup-wide vote.
    assert!(!wgsl.contains("metal_simd_vote"), "{wgsl}");
    let n_chunks = 5usize;
    let x: Vec<i32> = integers(n_chunks * 64, 6, -50, 50)
        .iter()
        .map(|v| *v as i32)
        .collect();
    let Some(out) = run_body(
        CHUNKS,
        "chunks",
        (128, 64),
        vec![
            (0, i32_bytes(&x)),
            (1, vec![0; n_chunks * 2 * 4]),
            (2, (n_chunks as i32).to_le_bytes().to_vec()),
        ],
    ) else {
        return;
    };
    let want: Vec<i32> = x.chunks(32).map(|c| c.iter().sum()).collect();
    assert_eq!(i32s(&out[&1]), want);
}
