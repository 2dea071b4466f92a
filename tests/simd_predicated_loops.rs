//! SIMD-group functions in loops and branches whose control depends on the
//! thread, under the 32-lane emulation: ML kernels' shapes (a looped
//! RMS-norm row reduction, an SDPA-vector key loop starting at the SIMD
//! group's index, a block scan whose bound a helper computes) and loops
//! left by `break`, `continue` and an early `return`, against CPU models
//! of Apple's 32-lane SIMD groups. On lavapipe (8-lane subgroups) the
//! adapter's subgroups give other results, so these tests fail wherever
//! the translation falls back to them (W0410) instead of predicating.
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

/// `body` translates under the explicit emulation without a warning
/// (none fell back to the adapter's subgroups); its WGSL.
fn emulated_wgsl(body: &str) -> String {
    let options = Options {
        simd: SimdGroups::Emulated32,
        ..Options::default()
    };
    let lib = Library::from_source("t.metal", &format!("{PRELUDE}{body}"), &options)
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert_eq!(lib.warnings(), "");
    lib.wgsl().to_string()
}

/// Small integers (exact in `f32` sums) in `lo..=hi`.
fn integers(n: usize, seed: i64, lo: i64, hi: i64) -> Vec<i64> {
    (0..n as i64)
        .map(|i| (i * 37 + seed * 11 + (i * i) % 13) % (hi - lo + 1) + lo)
        .collect()
}

/// MLX's looped RMS norm: each threadgroup normalises `rows_per_group`
/// rows (fewer in the last one), one element per thread; SIMD sums meet in
/// threadgroup memory and the first SIMD group reduces them.
const RMS_ROWS: &str = r#"
kernel void rms_rows(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                     device float* sums [[buffer(2)]],
                     constant uint& n_rows [[buffer(3)]], constant uint& rows_per_group [[buffer(4)]],
                     uint gid [[threadgroup_position_in_grid]], uint lid [[thread_position_in_threadgroup]],
                     uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {
  constexpr uint AXIS = 128;
  threadgroup float partial[32];
  threadgroup float total[1];
  uint row_end = gid * rows_per_group + rows_per_group;
  if (row_end > n_rows) {
    row_end = n_rows;
  }
  for (uint row = gid * rows_per_group; row < row_end; ++row) {
    float v = x[row * AXIS + lid];
    float s = simd_sum(v * v);
    if (sg == 0) {
      partial[lane] = 0;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane == 0) {
      partial[sg] = s;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
      s = simd_sum(partial[lane]);
      if (lane == 0) {
        total[0] = s;
        sums[row] = s;
      }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    y[row * AXIS + lid] = v * rsqrt(total[0] / AXIS + 1e-5f);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
}
"#;

#[test]
fn looped_rms_norm_reduces_each_row_over_32_lane_groups() {
    let wgsl = emulated_wgsl(RMS_ROWS);
    // Its loop is uniform: no vote, no cost beyond the branches'.
    assert!(!wgsl.contains("metal_simd_vote"), "{wgsl}");
    let (n_rows, per_group, axis) = (7usize, 3usize, 128usize);
    let x: Vec<f32> = integers(n_rows * axis, 1, -5, 5)
        .iter()
        .map(|v| *v as f32)
        .collect();
    let Some(out) = run_body(
        RMS_ROWS,
        "rms_rows",
        (3 * axis as u32, axis as u32),
        vec![
            (0, f32_bytes(&x)),
            (1, vec![0; n_rows * axis * 4]),
            (2, vec![0; n_rows * 4]),
            (3, (n_rows as u32).to_le_bytes().to_vec()),
            (4, (per_group as u32).to_le_bytes().to_vec()),
        ],
    ) else {
        return;
    };
    let (y, sums) = (common::f32s(&out[&1]), common::f32s(&out[&2]));
    for row in 0..n_rows {
        let xs = &x[row * axis..(row + 1) * axis];
        let want: f32 = xs.iter().map(|v| v * v).sum();
        assert_eq!(sums[row], want, "row {row}");
        let inv = 1.0 / (f64::from(want) / axis as f64 + 1e-5).sqrt();
        for (i, v) in xs.iter().enumerate() {
            let exact = f64::from(*v) * inv;
            let got = f64::from(y[row * axis + i]);
            // `rsqrt` within 2 ULP, the product rounded once more.
            let bound = exact.abs() * 4.0 * f64::from(f32::EPSILON);
            assert!(
                (got - exact).abs() <= bound,
                "row {row} [{i}]: {got} vs {exact}"
            );
        }
    }
}

/// SDPA-vector's key loop: SIMD group `sg` takes keys `sg, sg + BN, ...`
/// (a trip count that differs between SIMD groups) and scores only the
/// keys its mask keeps, with a 32-lane dot product (`simd_sum`).
const SDPA_KEYS: &str = r#"
kernel void sdpa_keys(device const float* q [[buffer(0)]], device const float* keys [[buffer(1)]],
                      device const int* mask [[buffer(2)]], device float* out [[buffer(3)]],
                      constant int& N [[buffer(4)]],
                      uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
  constexpr int BN = 4;
  constexpr int PER_LANE = 2;
  float k[PER_LANE];
  float max_score = -1e30f;
  float sum_score = 0;
  float used = 0;
  for (int i = sg; i < N; i += BN) {
    bool use_key = mask[i] != 0;
    if (use_key) {
      for (int j = 0; j < PER_LANE; j++) {
        k[j] = keys[(i * 32 + int(lane)) * PER_LANE + j];
      }
      float score = 0;
      for (int j = 0; j < PER_LANE; j++) {
        score += q[lane * PER_LANE + j] * k[j];
      }
      score = simd_sum(score);
      max_score = max(max_score, score);
      sum_score += score;
      used += 1;
    }
  }
  if (lane == 0) {
    out[sg * 3] = max_score;
    out[sg * 3 + 1] = sum_score;
    out[sg * 3 + 2] = used;
  }
}
"#;

#[test]
fn sdpa_key_loop_from_the_simd_group_index_scores_over_32_lanes() {
    let wgsl = emulated_wgsl(SDPA_KEYS);
    assert_eq!(wgsl.matches("workgroupUniformLoad").count(), 1, "{wgsl}");
    let (n, per_lane) = (10usize, 2usize);
    let q: Vec<f32> = integers(32 * per_lane, 2, -3, 3)
        .iter()
        .map(|v| *v as f32)
        .collect();
    let keys: Vec<f32> = integers(n * 32 * per_lane, 3, -4, 4)
        .iter()
        .map(|v| *v as f32)
        .collect();
    let mask: Vec<i32> = (0..n as i32).map(|i| i32::from(i % 3 != 1)).collect();
    let Some(out) = run_body(
        SDPA_KEYS,
        "sdpa_keys",
        (128, 128),
        vec![
            (0, f32_bytes(&q)),
            (1, f32_bytes(&keys)),
            (2, i32_bytes(&mask)),
            (3, vec![0; 4 * 3 * 4]),
            (4, (n as i32).to_le_bytes().to_vec()),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&3]);
    for sg in 0..4 {
        let (mut max, mut sum, mut used) = (-1e30f32, 0f32, 0f32);
        for i in (sg..n).step_by(4).filter(|i| mask[*i] != 0) {
            let score: f32 = (0..32 * per_lane)
                .map(|e| q[e] * keys[i * 32 * per_lane + e])
                .sum();
            max = max.max(score);
            sum += score;
            used += 1.0;
        }
        assert_eq!(
            &got[sg * 3..sg * 3 + 3],
            &[max, sum, used],
            "SIMD group {sg}"
        );
    }
}

/// MLX's contiguous scan: blocks of the threadgroup's width, whose count a
/// helper computes; a 32-lane exclusive scan per SIMD group, the last lane
/// (31) publishing the group's total, the first group scanning those.
const BLOCK_SCAN: &str = r#"
inline uint ceildiv(uint a, uint b) { return (a + b - 1) / b; }
kernel void block_scan(device const int* x [[buffer(0)]], device int* out [[buffer(1)]],
                       constant uint& n [[buffer(2)]],
                       uint3 lid [[thread_position_in_threadgroup]], uint3 lsize [[threads_per_threadgroup]],
                       uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {
  constexpr uint simd_size = 32;
  threadgroup int sums[32];
  int prefix = 0;
  for (uint r = 0; r < ceildiv(n, lsize.x); r++) {
    uint i = r * lsize.x + lid.x;
    int v = i < n ? x[i] : 0;
    int before = simd_prefix_exclusive_sum(v);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane == simd_size - 1) {
      sums[sg] = before + v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
      int p = simd_prefix_exclusive_sum(sums[lane]);
      sums[lane] = p;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    int inclusive = prefix + sums[sg] + before + v;
    if (i < n) {
      out[i] = inclusive;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid.x == lsize.x - 1) {
      sums[0] = inclusive;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    prefix = sums[0];
  }
}
"#;

#[test]
fn block_scan_with_a_helper_bound_scans_32_lane_groups() {
    let wgsl = emulated_wgsl(BLOCK_SCAN);
    // `ceildiv(n, lsize.x)` is as uniform as its arguments: the loop stays
    // plain.
    assert!(!wgsl.contains("metal_simd_vote"), "{wgsl}");
    let n = 300usize;
    let x: Vec<i32> = integers(n, 4, -9, 9).iter().map(|v| *v as i32).collect();
    let Some(out) = run_body(
        BLOCK_SCAN,
        "block_scan",
        (128, 128),
        vec![
            (0, i32_bytes(&x)),
            (1, vec![0; n * 4]),
            (2, (n as u32).to_le_bytes().to_vec()),
        ],
    ) else {
        return;
    };
    let want: Vec<i32> = x
        .iter()
        .scan(0, |acc, v| {
            *acc += v;
            Some(*acc)
        })
        .collect();
    assert_eq!(i32s(&out[&1]), want);
}

/// Lanes leave a loop on their own: an early `return`, `continue` past
/// the SIMD sum, `break` once a lane's total passes its own threshold.
const JUMPS: &str = r#"
kernel void jumps(device const int* x [[buffer(0)]], device int* out [[buffer(1)]],
                  constant int& n [[buffer(2)]], uint tid [[thread_position_in_grid]]) {
  out[tid] = -1;
  if (x[tid] < -40) {
    return;
  }
  int acc = 0;
  for (int i = 0; i < n; i++) {
    int v = x[(tid + uint(i) * 7) % 256];
    if (v % 3 == 0) {
      continue;
    }
    int s = simd_sum(v);
    acc += s;
    if (acc > 200 + int(tid % 32) * 10) {
      break;
    }
  }
  out[tid] = acc;
}
"#;

/// [`JUMPS`] on 32-lane SIMD groups: each iteration's sum is over the
/// lanes that have not returned, broken out or continued.
fn jumps_reference(x: &[i32], n: i32) -> Vec<i32> {
    let mut out = vec![-1; x.len()];
    for group in x
        .chunks(32)
        .enumerate()
        .map(|(g, c)| g * 32..g * 32 + c.len())
    {
        let alive: Vec<usize> = group.clone().filter(|t| x[*t] >= -40).collect();
        let mut running: Vec<bool> = vec![true; alive.len()];
        let mut acc = vec![0; alive.len()];
        for i in 0..n {
            let v: Vec<i32> = alive
                .iter()
                .map(|t| x[(t + i as usize * 7) % 256])
                .collect();
            let takes: Vec<bool> = (0..alive.len())
                .map(|l| running[l] && v[l] % 3 != 0)
                .collect();
            let s: i32 = (0..alive.len()).filter(|l| takes[*l]).map(|l| v[l]).sum();
            for l in (0..alive.len()).filter(|l| takes[*l]) {
                acc[l] += s;
                if acc[l] > 200 + (alive[l] % 32) as i32 * 10 {
                    running[l] = false;
                }
            }
        }
        for (l, t) in alive.iter().enumerate() {
            out[*t] = acc[l];
        }
    }
    out
}

#[test]
fn break_continue_and_early_return_narrow_the_lanes_of_each_sum() {
    let wgsl = emulated_wgsl(JUMPS);
    assert!(wgsl.contains("metal_returned"), "{wgsl}");
    let x: Vec<i32> = integers(256, 5, -50, 50)
        .iter()
        .map(|v| *v as i32)
        .collect();
    let n = 12;
    let want = jumps_reference(&x, n);
    // The model itself: some lanes return, some break, sums differ.
    assert!(want.contains(&-1) && want.iter().any(|v| *v > 200));
    let Some(out) = run_body(
        JUMPS,
        "jumps",
        (256, 128),
        vec![
            (0, i32_bytes(&x)),
            (1, vec![0; 256 * 4]),
            (2, n.to_le_bytes().to_vec()),
        ],
    ) else {
        return;
    };
    assert_eq!(i32s(&out[&1]), want);
}

/// A `do`/`while` loop each lane leaves when its own value runs out: the
/// maximum is over the lanes still in the loop.
const DO_WHILE: &str = r#"
kernel void shrink(device const int* x [[buffer(0)]], device int* out [[buffer(1)]],
                   uint tid [[thread_position_in_grid]]) {
  int v = x[tid];
  int k = 0;
  do {
    v = simd_max(v) - int(tid % 5) - 1;
    k++;
  } while (v > 0 && k < 8);
  out[tid] = v * 16 + k;
}
"#;

fn do_while_reference(x: &[i32]) -> Vec<i32> {
    let mut out = vec![0; x.len()];
    for (g, chunk) in x.chunks(32).enumerate() {
        let mut v = chunk.to_vec();
        let mut k = vec![0; chunk.len()];
        let mut running = vec![true; chunk.len()];
        while running.iter().any(|r| *r) {
            let m = (0..v.len())
                .filter(|l| running[*l])
                .map(|l| v[l])
                .max()
                .unwrap();
            let still: Vec<usize> = (0..v.len()).filter(|l| running[*l]).collect();
            for l in still {
                v[l] = m - ((g * 32 + l) % 5) as i32 - 1;
                k[l] += 1;
                running[l] = v[l] > 0 && k[l] < 8;
            }
        }
        for l in 0..v.len() {
            out[g * 32 + l] = v[l] * 16 + k[l];
        }
    }
    out
}

#[test]
fn do_while_lanes_leave_one_by_one() {
    emulated_wgsl(DO_WHILE);
    let x: Vec<i32> = integers(128, 6, -3, 12).iter().map(|v| *v as i32).collect();
    let want = do_while_reference(&x);
    let Some(out) = run_body(
        DO_WHILE,
        "shrink",
        (128, 64),
        vec![(0, i32_bytes(&x)), (1, vec![0; 128 * 4])],
    ) else {
        return;
    };
    assert_eq!(i32s(&out[&1]), want);
}

/// An early `return` that depends on the thread, then a SIMD-group
/// function: the lanes that returned take no part in it.
const AFTER_RETURN: &str = r#"
kernel void after_return(device int* a [[buffer(0)]], constant uint& n [[buffer(1)]],
                         uint i [[thread_position_in_grid]]) {
  if (i >= n) {
    return;
  }
  a[i] = simd_max(a[i]);
}
"#;

#[test]
fn lanes_that_returned_early_take_no_part() {
    emulated_wgsl(AFTER_RETURN);
    let x: Vec<i32> = integers(64, 7, -20, 20).iter().map(|v| *v as i32).collect();
    let n = 40;
    let Some(out) = run_body(
        AFTER_RETURN,
        "after_return",
        (64, 64),
        vec![(0, i32_bytes(&x)), (1, (n as u32).to_le_bytes().to_vec())],
    ) else {
        return;
    };
    let want: Vec<i32> = (0..64)
        .map(|i| {
            if i >= n {
                return x[i];
            }
            let g = i / 32 * 32;
            *x[g..(g + 32).min(n)].iter().max().unwrap()
        })
        .collect();
    // The second SIMD group's maximum is over its 8 threads that stayed.
    assert_ne!(want[32], *x[32..64].iter().max().unwrap());
    assert_eq!(i32s(&out[&0]), want);
}

/// A loop whose trip count depends on the lane, inside a branch that one
/// SIMD group skips: each iteration sums over the lanes still in it.
const LOOP_IN_BRANCH: &str = r#"
kernel void loop_in_branch(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]],
                           uint lane [[thread_index_in_simdgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]]) {
  int v = a[i];
  if (sg != 1) {
    for (uint j = lane % 4; j < 4; j++) {
      v = simd_sum(v) % 1000;
    }
  }
  a[i] = v;
}
"#;

#[test]
fn a_loop_from_the_lane_inside_a_branch_sums_the_lanes_still_iterating() {
    emulated_wgsl(LOOP_IN_BRANCH);
    let x: Vec<i32> = integers(96, 8, -30, 30).iter().map(|v| *v as i32).collect();
    let mut want = x.clone();
    for (sg, group) in want.chunks_mut(32).enumerate().filter(|(sg, _)| *sg != 1) {
        // Iteration k: the lanes that start at lane % 4 < 4 - k.
        for k in 0..4 {
            let takes = |l: usize| l % 4 < 4 - k;
            let s: i32 = (0..32).filter(|l| takes(*l)).map(|l| group[l]).sum();
            (0..32)
                .filter(|l| takes(*l))
                .for_each(|l| group[l] = s % 1000);
        }
        assert_ne!(group[0], x[sg * 32]);
    }
    let Some(out) = run_body(
        LOOP_IN_BRANCH,
        "loop_in_branch",
        (96, 96),
        vec![(0, i32_bytes(&x))],
    ) else {
        return;
    };
    assert_eq!(i32s(&out[&0]), want);
}

/// A branch holding a `switch` without SIMD-group calls before its sum:
/// the `switch` runs on the branch's threads only.
const SWITCH_IN_BRANCH: &str = r#"
kernel void switch_in_branch(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]],
                             uint lane [[thread_index_in_simdgroup]]) {
  int v = a[i];
  if (lane % 3 != 0) {
    switch (lane & 1) {
      case 0: v = v * 2; break;
      default: v = v + 100;
    }
    v = simd_sum(v);
  }
  a[i] = v;
}
"#;

#[test]
fn a_switch_in_a_predicated_branch_runs_on_its_threads_only() {
    emulated_wgsl(SWITCH_IN_BRANCH);
    let x: Vec<i32> = integers(64, 9, -30, 30).iter().map(|v| *v as i32).collect();
    let mut want = x.clone();
    for group in want.chunks_mut(32) {
        let takes = |l: usize| !l.is_multiple_of(3);
        let v = |l: usize| {
            if l & 1 == 0 {
                group[l] * 2
            } else {
                group[l] + 100
            }
        };
        let s: i32 = (0..32).filter(|l| takes(*l)).map(v).sum();
        (0..32).filter(|l| takes(*l)).for_each(|l| group[l] = s);
    }
    let Some(out) = run_body(
        SWITCH_IN_BRANCH,
        "switch_in_branch",
        (64, 64),
        vec![(0, i32_bytes(&x))],
    ) else {
        return;
    };
    assert_eq!(i32s(&out[&0]), want);
}

/// A quantised GEMV's row loop in a helper (MLX's `fp_qmv_impl` shape):
/// SIMD group `sg` owns rows `4 * sg ..`, leaves early when it has none
/// and stops at the matrix's last row (`row < 4 && out_row + row < n`, a
/// bound that differs between SIMD groups), summing each row over its 32
/// lanes. The helper's loop is predicated as a kernel's would be.
const HELPER_ROWS: &str = r#"
template <int R>
METAL_FUNC void row_sums(const device float* x, device float* y, const constant int& n,
                         const constant int& k, uint sg, uint lane) {
  float result[R] = {0};
  const int out_row = int(sg) * R;
  if (out_row >= n) {
    return;
  }
  for (int row = 0; row < R && out_row + row < n; row++) {
    for (int i = int(lane); i < k; i += 32) {
      result[row] += x[(out_row + row) * k + i];
    }
    result[row] = simd_sum(result[row]);
    if (lane == 0) {
      y[out_row + row] = result[row];
    }
  }
}

kernel void helper_rows(const device float* x [[buffer(0)]], device float* y [[buffer(1)]],
                        const constant int& n [[buffer(2)]], const constant int& k [[buffer(3)]],
                        uint sg [[simdgroup_index_in_threadgroup]],
                        uint lane [[thread_index_in_simdgroup]]) {
  row_sums<4>(x, y, n, k, sg, lane);
}
"#;

#[test]
fn a_helpers_row_loop_with_a_simd_group_bound_is_predicated() {
    let wgsl = emulated_wgsl(HELPER_ROWS);
    assert!(
        wgsl.contains("metal_running"),
        "the helper's loop is predicated"
    );
    // 4 SIMD groups of 32 lanes; 10 rows: groups 0 and 1 take 4 each,
    // group 2 the last 2, group 3 none.
    let (n, k) = (10usize, 70usize);
    let x: Vec<f32> = integers(n * k, 3, -9, 9)
        .iter()
        .map(|v| *v as f32)
        .collect();
    let Some(out) = run_body(
        HELPER_ROWS,
        "helper_rows",
        (128, 128),
        vec![
            (0, f32_bytes(&x)),
            (1, f32_bytes(&vec![-1.0; n + 4])),
            (2, (n as i32).to_le_bytes().to_vec()),
            (3, (k as i32).to_le_bytes().to_vec()),
        ],
    ) else {
        return;
    };
    let y = common::f32s(&out[&1]);
    for row in 0..n {
        let want: f32 = x[row * k..(row + 1) * k].iter().sum();
        assert_eq!(y[row], want, "row {row}");
    }
    assert_eq!(&y[n..], &[-1.0; 4], "no row past the last is written");
}

/// A helper's loop whose trip count differs between the lanes of one SIMD
/// group (`lane & 3`): in iteration `j` only the lanes with more than `j`
/// iterations take part in `simd_max`, as on Apple's GPUs.
const HELPER_LANE_LOOP: &str = r#"
int spread(int v, uint n) {
  for (uint j = 0; j < n; j++) {
    v = simd_max(v);
  }
  return v;
}

kernel void lane_loop(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]],
                      uint lane [[thread_index_in_simdgroup]]) {
  a[i] = spread(a[i], lane & 3);
}
"#;

#[test]
fn a_helpers_loop_with_a_trip_count_per_lane_takes_the_lanes_still_iterating() {
    emulated_wgsl(HELPER_LANE_LOOP);
    let n = 64usize;
    let a: Vec<i32> = integers(n, 5, -50, 50).iter().map(|v| *v as i32).collect();
    let Some(out) = run_body(
        HELPER_LANE_LOOP,
        "lane_loop",
        (n as u32, n as u32),
        vec![(0, i32_bytes(&a))],
    ) else {
        return;
    };
    // Apple's 32-lane groups: iteration `j` reduces over the lanes whose
    // `lane & 3` exceeds `j`, and only they take the maximum.
    let mut want = a.clone();
    for group in want.chunks_mut(32) {
        for j in 0..3 {
            let active = |l: usize| (l & 3) > j;
            let Some(m) = (0..32).filter(|&l| active(l)).map(|l| group[l]).max() else {
                continue;
            };
            for (l, v) in group.iter_mut().enumerate() {
                if active(l) {
                    *v = m;
                }
            }
        }
    }
    assert_eq!(i32s(&out[&0]), want);
}

/// A statement run on every thread (here an `if constexpr`, as templates
/// write it) that some lanes leave by `break`: what they wrote before
/// leaving stays, and they leave the loop for good. (The values a
/// statement writes used to be put back wherever the thread was inactive
/// as it *ended*, which undid a leaving lane's writes and its "still
/// iterating" flag, so it came back in the next iteration.) Its inner
/// loop, whose trip count differs between lanes, votes on every thread,
/// also on those that left: their vote count is never put back.
const LEAVING_INSIDE_A_STATEMENT: &str = r#"
kernel void leave(device const int* in [[buffer(0)]], device int* out [[buffer(1)]],
                  uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
  int x = 0;
  int y = 0;
  for (int k = 0; k < 4; k++) {
    if constexpr (sizeof(int) == 4) {
      x = in[i] * (k + 1);
      if (int(lane) < k * 8) break;
      y += simd_sum(x);
      for (int j = 0; j < int(lane & 1); j++) {
        y += simd_max(x) * 100;
      }
    }
  }
  out[i] = x + y * 1000;
}
"#;

#[test]
fn lanes_leaving_inside_a_statement_on_every_thread_keep_what_they_wrote() {
    emulated_wgsl(LEAVING_INSIDE_A_STATEMENT);
    let n = 64usize;
    let a: Vec<i32> = integers(n, 7, -9, 9).iter().map(|v| *v as i32).collect();
    let Some(out) = run_body(
        LEAVING_INSIDE_A_STATEMENT,
        "leave",
        (n as u32, n as u32),
        vec![(0, i32_bytes(&a)), (1, vec![0; 4 * n])],
    ) else {
        return;
    };
    // Apple's 32-lane groups: in iteration `k` the lanes `8k..32` sum.
    let mut want = vec![0; n];
    for (g, group) in a.chunks(32).enumerate() {
        for lane in 0..32 {
            let (mut x, mut y) = (0, 0);
            for k in 0..4 {
                x = group[lane] * (k as i32 + 1);
                if lane < k * 8 {
                    break;
                }
                let x_of = |l: usize| group[l] * (k as i32 + 1);
                y += (8 * k..32).map(x_of).sum::<i32>();
                // The odd lanes still iterating take the inner loop once.
                if lane % 2 == 1 {
                    y += (8 * k..32).filter(|l| l % 2 == 1).map(x_of).max().unwrap() * 100;
                }
            }
            want[g * 32 + lane] = x + y * 1000;
        }
    }
    assert_eq!(i32s(&out[&1]), want);
}

/// MLX's split-K NAX GEMM in small: a kernel that returns early on its
/// threadgroup's position (through an `int(..)` conversion, which calls
/// no function object) chooses, with `dispatch_bool` on a condition that
/// differs between SIMD groups, an `auto` helper whose K loop lets the
/// "unaligned" SIMD groups without output skip its iterations, that
/// returns early where they have none, and whose remainder loop runs
/// after that `return`. Every SIMD group's sums are over its own 32 lanes.
const SPLIT_K_LOOP: &str = r#"
template <typename T, T v> struct integral_constant {
  static constexpr constant T value = v;
  constexpr operator T() const { return v; }
};
template <typename F>
void dispatch_bool(bool v, F f) {
  if (v) { f(integral_constant<bool, true>{}); } else { f(integral_constant<bool, false>{}); }
}

template <bool aligned, bool aligned_k>
auto k_loop(const device int* a, int k_len, int iters, int rows) {
  int acc = 0;
  const bool has_output = rows > 0;
  for (int k0 = 0; k0 < iters; k0++) {
    threadgroup_barrier(mem_flags::mem_none);
    if constexpr (!aligned) {
      if (!has_output) continue;
    }
    for (int k1 = 0; k1 < 8; k1 += 4) {
      acc += simd_sum(a[k0 * 8 + k1]);
    }
  }
  if constexpr (!aligned_k) {
    simdgroup_barrier(mem_flags::mem_none);
    if constexpr (!aligned) {
      if (!has_output) return acc;
    }
    const int rem = k_len - iters * 8;
    for (int k1 = 0; k1 < rem; k1 += 4) {
      acc += simd_max(a[iters * 8 + k1]) * 100;
    }
  }
  return acc;
}

"#;

const SPLIT_K_KERNEL: &str = r#"
kernel void split_k(device const int* a [[buffer(0)]], device int* out [[buffer(1)]],
                    constant int& k_len [[buffer(2)]],
                    uint3 tg [[threadgroup_position_in_grid]],
                    uint sg [[simdgroup_index_in_threadgroup]],
                    uint i [[thread_position_in_grid]]) {
  if (int(tg.x) >= 2) {
    return;
  }
  const int rows = int(sg) - 1;
  int acc = -1;
  dispatch_bool(k_len % 8 == 0, [&](auto aligned_k) {
    dispatch_bool(rows == 1, [&](auto aligned) {
      acc = k_loop<aligned.value, aligned_k.value>(a + 64 * sg, k_len, k_len / 8, rows);
    });
  });
  out[i] = acc;
}
"#;

/// What [`SPLIT_K_LOOP`]'s `k_loop` returns to SIMD group `sg` (`rows =
/// sg - 1`, reading `a` from `64 * sg`) on Apple's 32-lane groups, for a
/// `k_len` that is no multiple of 8. Every lane of a SIMD group reads the
/// same element, so a sum over its 32 lanes is 32 times it and a maximum
/// is it; the groups without output (`rows <= 0`) return 0.
fn k_loop_model(a: &[i32], sg: usize, k_len: i32) -> i32 {
    assert_ne!(k_len % 8, 0, "the model is of the unaligned K loop");
    let rows = sg as i32 - 1;
    if rows <= 0 {
        return 0;
    }
    let base = &a[64 * sg..];
    let iters = k_len / 8;
    let mut acc = 0;
    for k0 in 0..iters {
        for k1 in [0, 4] {
            acc += 32 * base[(k0 * 8 + k1) as usize];
        }
    }
    for k1 in (0..k_len - iters * 8).step_by(4) {
        acc += base[(iters * 8 + k1) as usize] * 100;
    }
    acc
}

#[test]
fn split_k_gemm_shape_is_predicated_per_simd_group() {
    let source = format!("{SPLIT_K_LOOP}{SPLIT_K_KERNEL}");
    emulated_wgsl(&source);
    // Three threadgroups of four SIMD groups: the third returns at once.
    // SIMD groups 0 and 1 have no output, 2 is aligned, 3 is not.
    let (n, k_len) = (384usize, 20i32);
    let a: Vec<i32> = integers(4 * 64, 9, -9, 9)
        .iter()
        .map(|v| *v as i32)
        .collect();
    let Some(out) = run_body(
        &source,
        "split_k",
        (n as u32, 128),
        vec![
            (0, i32_bytes(&a)),
            (1, i32_bytes(&vec![7; n])),
            (2, k_len.to_le_bytes().to_vec()),
        ],
    ) else {
        return;
    };
    let mut want = vec![7; n];
    for (i, w) in want.iter_mut().enumerate().take(256) {
        *w = k_loop_model(&a, (i % 128) / 32, k_len);
    }
    assert_eq!(i32s(&out[&1]), want);
}

/// The helper of [`HELPER_LANE_LOOP`] called twice: each call's loop
/// votes whether to go on through one shared threadgroup word, never
/// reset, so the second call's votes must be numbered after the first's
/// (numbered from zero again, every thread left the second loop at once).
const HELPER_LOOP_TWICE: &str = r#"
int spread(int v, uint n) {
  for (uint j = 0; j < n; j++) {
    v = simd_max(v);
  }
  return v;
}

kernel void twice(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]],
                  uint lane [[thread_index_in_simdgroup]]) {
  int v = spread(a[i], lane & 3);
  a[i] = spread(v * 2 - lane, (lane >> 2) & 3);
}
"#;

#[test]
fn a_helpers_predicated_loop_called_twice_iterates_both_times() {
    emulated_wgsl(HELPER_LOOP_TWICE);
    let n = 64usize;
    let a: Vec<i32> = integers(n, 11, -50, 50).iter().map(|v| *v as i32).collect();
    let Some(out) = run_body(
        HELPER_LOOP_TWICE,
        "twice",
        (n as u32, n as u32),
        vec![(0, i32_bytes(&a))],
    ) else {
        return;
    };
    // Apple's 32-lane groups: in iteration `j` of a call, the lanes whose
    // trip count exceeds `j` take the maximum over themselves.
    fn spread(group: &mut [i32], trips: impl Fn(usize) -> usize) {
        for j in 0..3 {
            let active = |l: usize| trips(l) > j;
            let Some(m) = (0..32).filter(|&l| active(l)).map(|l| group[l]).max() else {
                continue;
            };
            for (l, v) in group.iter_mut().enumerate() {
                if active(l) {
                    *v = m;
                }
            }
        }
    }
    let mut want = a.clone();
    for group in want.chunks_mut(32) {
        spread(group, |l| l & 3);
        for (l, v) in group.iter_mut().enumerate() {
            *v = *v * 2 - l as i32;
        }
        spread(group, |l| (l >> 2) & 3);
    }
    assert_eq!(i32s(&out[&0]), want);
}

/// MLX's gather NAX GEMM in small: the split-K helper of
/// [`SPLIT_K_LOOP`] called through a local holding its instance (`auto
/// do_loop = k_loop<..>;`), in a loop whose trip count differs between
/// SIMD groups. The tries predicate the kernel's loop first and the
/// helper's loops next, so the helpers an earlier try lowered (the
/// lambdas' call operators) are lowered again with them.
const GATHER_KERNEL: &str = r#"
kernel void gather(device const int* a [[buffer(0)]], device int* out [[buffer(1)]],
                   constant int& k_len [[buffer(2)]],
                   uint sg [[simdgroup_index_in_threadgroup]],
                   uint i [[thread_position_in_grid]]) {
  const int rows = int(sg) - 1;
  int acc = 0;
  for (int r = 0; r < int(sg % 2) + 1; r++) {
    dispatch_bool(k_len % 8 == 0, [&](auto aligned_k) {
      dispatch_bool(rows == 1, [&](auto aligned) {
        auto do_loop = k_loop<aligned.value, aligned_k.value>;
        acc += do_loop(a + 64 * sg, k_len, k_len / 8, rows) * (r + 1);
      });
    });
  }
  out[i] = acc;
}
"#;

#[test]
fn gather_gemm_shape_through_a_function_local_is_predicated_per_simd_group() {
    let source = format!("{SPLIT_K_LOOP}{GATHER_KERNEL}");
    emulated_wgsl(&source);
    let (n, k_len) = (128usize, 20i32);
    let a: Vec<i32> = integers(4 * 64, 4, -9, 9)
        .iter()
        .map(|v| *v as i32)
        .collect();
    let Some(out) = run_body(
        &source,
        "gather",
        (n as u32, 128),
        vec![
            (0, i32_bytes(&a)),
            (1, vec![0; 4 * n]),
            (2, k_len.to_le_bytes().to_vec()),
        ],
    ) else {
        return;
    };
    let want: Vec<i32> = (0..n)
        .map(|i| {
            let sg = i / 32;
            let once = k_loop_model(&a, sg, k_len);
            (0..(sg % 2) as i32 + 1).map(|r| once * (r + 1)).sum()
        })
        .collect();
    assert_eq!(i32s(&out[&1]), want);
}
