//! Kernels in the shapes ML libraries write them (`fixtures/ml`: MLX-style
//! templates instantiated by `[[host_name]]` macros, `METAL_FUNC` helpers,
//! `simd_sum`/`simd_max` with threadgroup reductions, SIMD-group matrices,
//! ggml's and MLX's quantised layouts), run on the adapter's GPU (lavapipe
//! in CI) for `float`, `half` and `bfloat` against CPU references in `f64`.
//!
//! Tolerances: the kernels accumulate in `float`; each bound counts the
//! roundings on the way (`U` = 2^-24 per `+`, `*`, conversion) and gives
//! library functions the looser of Metal's single-precision table with
//! fast math off and WGSL's accuracy table, since the translation runs
//! WGSL's functions: `exp(x)` ≤ max(4, 3 + 2|x|) ulp (Metal's 4, WGSL's
//! 3 + 2|x|), `rsqrt` ≤ 2 ulp (both), `1/x` ≤ 2.5 ulp (WGSL; Metal's
//! precise division is correctly rounded); one ulp is at most 2U
//! relative; first order in U. SIMD-group sums are exact summations in
//! an order the test does not fix, so sums get γ bounds: a sum of k terms
//! in any order is within (k−1)·U·Σ|term| of the exact sum. `half` and
//! `bfloat` results are checked as the final round-to-nearest-even of a
//! `float` result inside the bound (`assert_rounded_within`).
//!
//! SIMD widths: every kernel runs with Apple's 32-lane SIMD groups
//! (`SimdGroups::Emulated32`, what the runner picks on lavapipe's 8-lane
//! subgroups); the kernels written for any width (norms, GEMV, quantised
//! products) also run on the adapter's subgroups (`SimdGroups::Native`).
#![cfg(feature = "runner")]

mod common;

use common::ml::{
    assert_rounded_within, i32_bytes, modes, run, u32_bytes, uniform, Elem, ELEMS, U,
};
use common::{f32_bytes, u32s};
use msl2wgsl::runner::Dispatch;
use msl2wgsl::SimdGroups;

/// `groups` threadgroups of `threads` threads (`dispatchThreadgroups`).
fn groups(groups: [u32; 3], threads: u32) -> Dispatch {
    Dispatch::Threadgroups {
        groups,
        threadgroup: [threads, 1, 1],
    }
}

/// `exp(x)`: at most 4 ulp in Metal with fast math off, 3 + 2|x| ulp in
/// WGSL, whose `exp` the translation calls.
fn exp_ulp(x: f64) -> f64 {
    f64::max(4.0, 3.0 + 2.0 * x.abs())
}
/// `rsqrt`: at most 2 ulp (WGSL's `inverseSqrt`).
const RSQRT_ULP: f64 = 2.0;
/// `1/x`: at most 2.5 ulp (WGSL's division; Metal's is correctly rounded).
const DIV_ULP: f64 = 2.5;

// --- softmax -------------------------------------------------------------

/// Row softmax in `f64` and, per element, the bound on a `float` evaluation
/// as `softmax_single_row` does it.
fn softmax_reference(x: &[f64], rows: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut exact, mut bound) = (Vec::new(), Vec::new());
    for row in x.chunks(n).take(rows) {
        let max = row.iter().cloned().fold(f64::MIN, f64::max);
        let spread = row.iter().map(|v| max - v).fold(0.0, f64::max);
        let sum: f64 = row.iter().map(|v| (v - max).exp()).sum();
        // x - max rounds (an argument error of U·|x - max|, relative in
        // exp), each exp and 1/sum errs by their ulps, the sum of n
        // positive terms by (n - 1)·U, the last product by U; exp's error
        // enters both numerator and sum.
        let rel = U
            * (2.0 * spread + 2.0 * 2.0 * exp_ulp(spread) + (n as f64 - 1.0) + 2.0 * DIV_ULP + 1.0);
        for v in row {
            let e = (v - max).exp() / sum;
            exact.push(e);
            bound.push(e * rel + f64::from(f32::MIN_POSITIVE));
        }
    }
    (exact, bound)
}

fn check_softmax(elem: Elem, rows: usize, n: usize, threads: u32, seed: u32) {
    let x = elem.quantise(&uniform(rows * n, seed, -6.0, 6.0));
    let entry = format!("block_softmax_{}", elem.suffix());
    let Some(out) = run(
        "softmax.metal",
        &entry,
        SimdGroups::Emulated32,
        groups([rows as u32, 1, 1], threads),
        vec![
            (0, elem.encode(&x)),
            (1, vec![0; rows * n * elem.size()]),
            (2, i32_bytes(&[n as i32])),
        ],
    ) else {
        return;
    };
    let got = elem.decode(&out[&1]);
    let (exact, bound) = softmax_reference(&x, rows, n);
    assert_rounded_within(&format!("{entry} n {n}"), elem, &got, &exact, &bound);
}

#[test]
fn softmax_rows_match_in_every_type() {
    for elem in ELEMS {
        // 256 threads × 4 reads: eight 32-lane SIMD groups per row.
        check_softmax(elem, 4, 1024, 256, 1);
    }
}

#[test]
fn softmax_of_ragged_rows_and_small_threadgroups() {
    // A row that ends inside a thread's reads, and threadgroups of two
    // SIMD groups (the other 30 partial slots hold the identities).
    check_softmax(Elem::F32, 3, 1000, 256, 2);
    check_softmax(Elem::Bf16, 2, 256, 64, 3);
}

#[test]
fn softmax_written_for_32_lanes_needs_the_emulation_on_other_widths() {
    // The kernel sizes its partial arrays by 32 and reads them by lane: on
    // subgroups of another width natively, the first SIMD group folds only
    // some of the partials. The emulation is what makes it right there.
    let Some(gpu) = common::gpu() else { return };
    let info = gpu.info();
    let subgroups = gpu.features().contains(msl2wgsl::wgpu::Features::SUBGROUP);
    if !subgroups || (info.subgroup_min_size == 32 && info.subgroup_max_size == 32) {
        eprintln!("SKIP: the adapter's subgroups are 32 lanes wide (or absent)");
        return;
    }
    let (rows, n) = (2usize, 1024usize);
    let x = uniform(rows * n, 4, -6.0, 6.0);
    let out = common::ml::run(
        "softmax.metal",
        "block_softmax_float32",
        SimdGroups::Native,
        groups([rows as u32, 1, 1], 256),
        vec![
            (0, Elem::F32.encode(&x)),
            (1, vec![0; rows * n * 4]),
            (2, i32_bytes(&[n as i32])),
        ],
    )
    .expect("a GPU");
    let got = Elem::F32.decode(&out[&1]);
    let (exact, bound) = softmax_reference(&x, rows, n);
    let wrong = (0..got.len())
        .filter(|&i| (got[i] - exact[i]).abs() > bound[i])
        .count();
    assert!(
        wrong > 0,
        "{}-lane subgroups gave Apple's results",
        info.subgroup_max_size
    );
}

// --- norms ---------------------------------------------------------------

const EPS: f64 = 1e-5;

fn rms_reference(x: &[f64], w: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut exact, mut bound) = (Vec::new(), Vec::new());
    // The sum of n squares (non-negative terms) errs by (n + 1)·U relative,
    // the division and the `+ eps` by U each; rsqrt halves its argument's
    // relative error and adds its own; two more products.
    let rel_inv = 0.5 * (n as f64 + 3.0) * U + RSQRT_ULP * 2.0 * U;
    let rel = rel_inv + 2.0 * U;
    let eps = f64::from(EPS as f32);
    for row in x.chunks(n) {
        let inv = 1.0 / (row.iter().map(|v| v * v).sum::<f64>() / n as f64 + eps).sqrt();
        for (v, wi) in row.iter().zip(w) {
            let e = wi * v * inv;
            exact.push(e);
            bound.push(e.abs() * rel + f64::from(f32::MIN_POSITIVE));
        }
    }
    (exact, bound)
}

fn layer_norm_reference(x: &[f64], w: &[f64], b: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut exact, mut bound) = (Vec::new(), Vec::new());
    let nf = n as f64;
    let eps = f64::from(EPS as f32);
    for row in x.chunks(n) {
        let mean = row.iter().sum::<f64>() / nf;
        let abs_sum: f64 = row.iter().map(|v| v.abs()).sum();
        let squares: f64 = row.iter().map(|v| (v - mean) * (v - mean)).sum();
        let inv = 1.0 / (squares / nf + eps).sqrt();
        // The mean's error (a sum of n terms, then a division).
        let mean_err = (nf - 1.0) * U * abs_sum / nf + U * mean.abs();
        // The variance's relative error: each difference and square rounds,
        // the sum of n non-negative terms, the division, the `+ eps`; and
        // the squares around the GPU's mean exceed the exact ones by
        // n·mean_err².
        let rel_var = (nf + 5.0) * U + nf * mean_err * mean_err / squares;
        let rel_inv = 0.5 * rel_var + RSQRT_ULP * 2.0 * U;
        for ((v, wi), bi) in row.iter().zip(w).zip(b) {
            let d = v - mean;
            let y = d * inv;
            let e = wi * y + bi;
            exact.push(e);
            // (x - mean) carries the mean's error plus one rounding, the
            // product with inv inv's error plus one rounding, then w·y + b.
            let y_err = mean_err * inv + d.abs() * inv * (rel_inv + 2.0 * U);
            bound.push(wi.abs() * y_err + U * (2.0 * (wi * y).abs() + bi.abs()) + 1e-30);
        }
    }
    (exact, bound)
}

#[test]
fn rms_norm_matches_with_32_lanes_and_the_adapters_subgroups() {
    let (rows, n) = (3usize, 1000usize);
    for simd in modes(true) {
        for elem in ELEMS {
            let x = elem.quantise(&uniform(rows * n, 11, -3.0, 3.0));
            let w = elem.quantise(&uniform(n, 12, 0.5, 1.5));
            let entry = format!("rms_looped{}", elem.suffix());
            let Some(out) = run(
                "norms.metal",
                &entry,
                simd,
                groups([rows as u32, 1, 1], 128),
                vec![
                    (0, elem.encode(&x)),
                    (1, elem.encode(&w)),
                    (2, vec![0; rows * n * elem.size()]),
                    (3, f32_bytes(&[EPS as f32])),
                    (4, u32_bytes(&[n as u32])),
                    (5, u32_bytes(&[1])),
                ],
            ) else {
                return;
            };
            let (exact, bound) = rms_reference(&x, &w, n);
            let got = elem.decode(&out[&2]);
            assert_rounded_within(&format!("{entry} {simd:?}"), elem, &got, &exact, &bound);
        }
    }
}

#[test]
fn layer_norm_matches_with_32_lanes_and_the_adapters_subgroups() {
    let (rows, n) = (2usize, 768usize);
    for simd in modes(true) {
        for elem in ELEMS {
            // An offset mean, so that subtracting it matters.
            let x = elem.quantise(&uniform(rows * n, 21, 1.0, 5.0));
            let w = elem.quantise(&uniform(n, 22, -1.5, 1.5));
            let b = elem.quantise(&uniform(n, 23, -0.5, 0.5));
            let entry = format!("layer_norm_looped{}", elem.suffix());
            let Some(out) = run(
                "norms.metal",
                &entry,
                simd,
                groups([rows as u32, 1, 1], 256),
                vec![
                    (0, elem.encode(&x)),
                    (1, elem.encode(&w)),
                    (2, elem.encode(&b)),
                    (3, vec![0; rows * n * elem.size()]),
                    (4, f32_bytes(&[EPS as f32])),
                    (5, u32_bytes(&[n as u32])),
                ],
            ) else {
                return;
            };
            let (exact, bound) = layer_norm_reference(&x, &w, &b, n);
            let got = elem.decode(&out[&3]);
            assert_rounded_within(&format!("{entry} {simd:?}"), elem, &got, &exact, &bound);
        }
    }
}

// --- products ------------------------------------------------------------

/// `Σ terms` and its γ bound for a `float` evaluation of `depth` roundings
/// deep: `(depth + 1)·U·Σ|term|`.
fn dot_bound(terms: impl Iterator<Item = f64>, depth: usize) -> (f64, f64) {
    let (mut sum, mut magnitude) = (0.0, 0.0);
    for t in terms {
        sum += t;
        magnitude += t.abs();
    }
    (sum, (depth as f64 + 1.0) * U * magnitude + 1e-30)
}

/// Threadgroups enough for a kernel that gives each of its 32-lane SIMD
/// groups `rows_per_simd_group` rows (narrower SIMD groups need fewer; the
/// surplus threadgroups find no rows).
fn row_groups(rows: usize, threads: u32, rows_per_simd_group: usize) -> u32 {
    rows.div_ceil(threads as usize / 32 * rows_per_simd_group) as u32
}

#[test]
fn gemv_matches_with_32_lanes_and_the_adapters_subgroups() {
    // 100 rows: the last SIMD group's second row is past the matrix.
    let (m, k) = (101usize, 300usize);
    for simd in modes(true) {
        for elem in ELEMS {
            let a = elem.quantise(&uniform(m * k, 31, -1.0, 1.0));
            let x = elem.quantise(&uniform(k, 32, -1.0, 1.0));
            let entry = format!("gemv_{}", elem.suffix());
            let Some(out) = run(
                "gemv.metal",
                &entry,
                simd,
                groups([row_groups(m, 128, 2), 1, 1], 128),
                vec![
                    (0, elem.encode(&a)),
                    (1, elem.encode(&x)),
                    (2, vec![0; m * elem.size()]),
                    (3, i32_bytes(&[k as i32])),
                    (4, i32_bytes(&[m as i32])),
                ],
            ) else {
                return;
            };
            let (exact, bound): (Vec<f64>, Vec<f64>) = (0..m)
                .map(|r| dot_bound((0..k).map(|j| a[r * k + j] * x[j]), k))
                .unzip();
            let got = elem.decode(&out[&2]);
            assert_rounded_within(&format!("{entry} {simd:?}"), elem, &got, &exact, &bound);
        }
    }
}

/// Runs `gemm_{type}{suffix}` (tiles of `tile`²) on A (m × k) · B (k × n)
/// with ragged edges against the CPU product.
fn check_gemm(elem: Elem, suffix: &str, tile: usize, (m, n, k): (usize, usize, usize)) {
    let Some(gpu) = common::ml::patient_gpu() else {
        return;
    };
    let a = elem.quantise(&uniform(m * k, 41, -1.0, 1.0));
    let b = elem.quantise(&uniform(k * n, 42, -1.0, 1.0));
    let entry = format!("gemm_{}{suffix}", elem.suffix());
    let params = i32_bytes(&[m as i32, n as i32, k as i32, k as i32, n as i32, n as i32]);
    let (exact, bound): (Vec<f64>, Vec<f64>) = (0..m * n)
        .map(|i| {
            let (r, c) = (i / n, i % n);
            dot_bound((0..k).map(|j| a[r * k + j] * b[j * n + c]), k)
        })
        .unzip();
    // The accumulators are stored in Apple's 32-lane layout: natively only
    // on 32-lane subgroups (per-lane fragments exchanged by shuffles there).
    for simd in common::ml::modes(false) {
        let out = common::ml::run_on(
            gpu,
            "gemm.metal",
            &entry,
            simd,
            groups([n.div_ceil(tile) as u32, m.div_ceil(tile) as u32, 1], 128),
            vec![
                (0, elem.encode(&a)),
                (1, elem.encode(&b)),
                (2, vec![0; m * n * elem.size()]),
                (3, params.clone()),
            ],
        );
        let got = elem.decode(&out[&2]);
        assert_rounded_within(&format!("{entry} ({simd:?})"), elem, &got, &exact, &bound);
    }
}

#[test]
fn gemm_64x64_tiles_of_simdgroup_matrices_match_in_float() {
    // Two tiles across, one down, ragged: M = 60, N = 100, K = 40 (two
    // full BK slices and a half one).
    check_gemm(Elem::F32, "", 64, (60, 100, 40));
}

#[test]
fn gemm_32x32_tiles_match_in_half_and_bfloat() {
    for elem in [Elem::F16, Elem::Bf16] {
        check_gemm(elem, "_bm32_bn32", 32, (40, 50, 24));
    }
}

#[test]
fn gemm_64x64_tiles_match_in_half_and_bfloat() {
    for elem in [Elem::F16, Elem::Bf16] {
        check_gemm(elem, "", 64, (60, 100, 40));
    }
}

// --- quantised products --------------------------------------------------

/// Bytes of ggml's `block_q4_0`/`block_q8_0` rows and the weights they
/// decode to: `d · (q - 8)` with q4_0's weight j in the low nibble of byte
/// j and weight j + 16 in its high nibble; `d · q` for q8_0's signed bytes.
fn ggml_blocks(rows: usize, k: usize, bits: u32, seed: u32) -> (Vec<u8>, Vec<f64>) {
    let (mut bytes, mut weights) = (Vec::new(), vec![0.0; rows * k]);
    let scales = uniform(rows * k / 32, seed, 0.01, 0.1);
    let qs = uniform(rows * k, seed + 1, 0.0, 1.0);
    for (block, &d) in scales.iter().enumerate() {
        let d = half::f16::from_f64(d);
        bytes.extend(d.to_le_bytes());
        let base = block * 32;
        let q = |j: usize| (qs[base + j] * f64::from(1u32 << bits)) as i32;
        if bits == 4 {
            for j in 0..16 {
                let (lo, hi) = (q(j), q(j + 16));
                bytes.push((lo | (hi << 4)) as u8);
                weights[base + j] = d.to_f64() * f64::from(lo - 8);
                weights[base + j + 16] = d.to_f64() * f64::from(hi - 8);
            }
        } else {
            for j in 0..32 {
                let v = q(j) - 128;
                bytes.push(v as i8 as u8);
                weights[base + j] = d.to_f64() * f64::from(v);
            }
        }
    }
    (bytes, weights)
}

/// MLX's affine layout: words of `32 / bits` weights (low bits first), a
/// scale and bias of `elem` per group; the weights they decode to.
fn affine_weights(
    elem: Elem,
    rows: usize,
    k: usize,
    group: usize,
    bits: u32,
    seed: u32,
) -> (Vec<u32>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let qs = uniform(rows * k, seed, 0.0, 1.0);
    let scales = elem.quantise(&uniform(rows * k / group, seed + 1, 0.005, 0.05));
    let biases = elem.quantise(&uniform(rows * k / group, seed + 2, -0.5, 0.5));
    let per_word = (32 / bits) as usize;
    let mut words = vec![0u32; rows * k / per_word];
    let mut weights = vec![0.0; rows * k];
    for i in 0..rows * k {
        let q = (qs[i] * f64::from(1u32 << bits)) as u32;
        words[i / per_word] |= q << ((i % per_word) as u32 * bits);
        weights[i] = scales[i / group] * f64::from(q) + biases[i / group];
    }
    (words, scales, biases, weights)
}

/// Y = X·Wᵀ for `cols` rows of X, with the bound of `dot_bound` over
/// `depth` roundings; `magnitude(r, j)` is what one term contributes to
/// the error (|w·x| for ggml; |s·q·x| + |b·x| for MLX's split sum).
fn qmm_reference(
    w: &[f64],
    x: &[f64],
    m: usize,
    k: usize,
    cols: usize,
    depth: usize,
    magnitude: impl Fn(usize, usize, usize) -> f64,
) -> (Vec<f64>, Vec<f64>) {
    (0..cols * m)
        .map(|i| {
            let (c, r) = (i / m, i % m);
            let exact: f64 = (0..k).map(|j| w[r * k + j] * x[c * k + j]).sum();
            let size: f64 = (0..k).map(|j| magnitude(c, r, j)).sum();
            (exact, (depth as f64 + 1.0) * U * size + 1e-30)
        })
        .unzip()
}

#[test]
fn ggml_q4_0_and_q8_0_products_match() {
    // 37 rows of 256 weights (8 blocks each), 3 rows of X.
    let (m, k, cols) = (37usize, 256usize, 3usize);
    for simd in modes(true) {
        for elem in ELEMS {
            // The adapter's subgroups for `float` only: the same kernel.
            if simd == SimdGroups::Native && elem != Elem::F32 {
                continue;
            }
            for bits in [4, 8] {
                let (blocks, w) = ggml_blocks(m, k, bits, 50 + bits);
                let x = elem.quantise(&uniform(cols * k, 51, -1.0, 1.0));
                let entry = format!("mul_mm_q{bits}_0_{}", elem.suffix());
                let Some(out) = run(
                    "quantized.metal",
                    &entry,
                    simd,
                    groups([row_groups(m, 64, 2), cols as u32, 1], 64),
                    vec![
                        (0, blocks),
                        (1, elem.encode(&x)),
                        (2, vec![0; cols * m * elem.size()]),
                        (3, i32_bytes(&[k as i32])),
                        (4, i32_bytes(&[m as i32])),
                    ],
                ) else {
                    return;
                };
                // Within a block: 32 terms and the scale; across blocks: nb.
                let depth = 32 + 1 + k / 32;
                let (exact, bound) = qmm_reference(&w, &x, m, k, cols, depth, |c, r, j| {
                    (w[r * k + j] * x[c * k + j]).abs()
                });
                let got = elem.decode(&out[&2]);
                assert_rounded_within(&format!("{entry} {simd:?}"), elem, &got, &exact, &bound);
            }
        }
    }
}

#[test]
fn mlx_affine_4_and_8_bit_products_match() {
    let (m, k, cols) = (21usize, 512usize, 2usize);
    for simd in modes(true) {
        for elem in ELEMS {
            if simd == SimdGroups::Native && elem != Elem::F32 {
                continue;
            }
            for (group, bits) in [(32usize, 4u32), (64, 8)] {
                let (words, scales, biases, w) = affine_weights(elem, m, k, group, bits, 60);
                let x = elem.quantise(&uniform(cols * k, 61, -1.0, 1.0));
                let entry = format!("affine_qmm_{}_gs_{group}_b_{bits}", elem.suffix());
                let Some(out) = run(
                    "quantized.metal",
                    &entry,
                    simd,
                    groups([row_groups(m, 64, 1), cols as u32, 1], 64),
                    vec![
                        (0, u32_bytes(&words)),
                        (1, elem.encode(&scales)),
                        (2, elem.encode(&biases)),
                        (3, elem.encode(&x)),
                        (4, vec![0; cols * m * elem.size()]),
                        (5, i32_bytes(&[k as i32])),
                        (6, i32_bytes(&[m as i32])),
                    ],
                ) else {
                    return;
                };
                // Σq·x and Σx over a group, scale and bias, then groups.
                let depth = group + 2 + k / group;
                let (exact, bound) = qmm_reference(&w, &x, m, k, cols, depth, |c, r, j| {
                    let g = (r * k + j) / group;
                    let xj = x[c * k + j].abs();
                    (w[r * k + j] - biases[g]).abs() * xj + biases[g].abs() * xj
                });
                let got = elem.decode(&out[&4]);
                assert_rounded_within(&format!("{entry} {simd:?}"), elem, &got, &exact, &bound);
            }
        }
    }
}

// --- copy, arg-reduce, scan ------------------------------------------------

/// Where element `elem` of a contiguous array of `shape` is found in a
/// view with `strides` (MLX's `elem_to_loc`).
fn elem_to_loc(mut elem: i64, shape: &[i32], strides: &[i64]) -> i64 {
    let mut loc = 0;
    for (s, st) in shape.iter().zip(strides).rev() {
        loc += elem % i64::from(*s) * st;
        elem /= i64::from(*s);
    }
    loc
}

#[test]
fn strided_copies_through_elem_to_loc_match() {
    // A 4-D view of a contiguous 6 × 5 × 4 × 7 source (strides 140, 28,
    // 7, 1): its axes permuted to (2, 0, 3, 1), every other element of
    // axis 3, and axis 1 broadcast (stride 0) to 5.
    let src_dims = [6i64, 5, 4, 7];
    let src_len: i64 = src_dims.iter().product();
    let shape = [4i32, 6, 4, 5];
    let strides = [7i64, 140, 2, 0];
    let dst_len: usize = shape.iter().map(|&s| s as usize).product();
    let values = uniform(src_len as usize, 71, -100.0, 100.0);
    let cases = [
        (Elem::F32, Elem::F32),
        (Elem::F32, Elem::F16),
        (Elem::F32, Elem::Bf16),
        (Elem::F16, Elem::F16),
        (Elem::Bf16, Elem::F32),
    ];
    for (from, to) in cases {
        let src = from.quantise(&values);
        let entry = format!("copy_g_{}_{}", from.suffix(), to.suffix());
        let strides_bytes: Vec<u8> = strides.iter().flat_map(|s| s.to_le_bytes()).collect();
        // The grid: the last dimension, the one before, the rest.
        let grid = [
            shape[3] as u32,
            shape[2] as u32,
            (shape[0] * shape[1]) as u32,
        ];
        let Some(out) = run(
            "copy.metal",
            &entry,
            SimdGroups::Auto,
            Dispatch::Threads {
                grid,
                threadgroup: [8, 4, 2],
            },
            vec![
                (0, from.encode(&src)),
                (1, vec![0; dst_len * to.size()]),
                (2, i32_bytes(&shape)),
                (3, strides_bytes),
                (5, i32_bytes(&[4])),
            ],
        ) else {
            return;
        };
        let got = to.decode(&out[&1]);
        for (i, g) in got.iter().enumerate() {
            let want = to.round(src[elem_to_loc(i as i64, &shape, &strides) as usize]);
            assert_eq!(*g, want, "{entry}: element {i}");
        }
    }
}

#[test]
fn arg_min_and_max_match_with_ties_to_the_first_index() {
    let (rows, n) = (5usize, 777usize);
    for elem in ELEMS {
        // Few distinct values: many ties, which the smaller index wins.
        let x: Vec<f64> = uniform(rows * n, 81, -20.0, 20.0)
            .iter()
            .map(|v| v.round())
            .collect();
        for op in ["argmin", "argmax"] {
            let entry = format!("{op}_{}", elem.suffix());
            let Some(out) = run(
                "arg_reduce.metal",
                &entry,
                SimdGroups::Emulated32,
                groups([rows as u32, 1, 1], 128),
                vec![
                    (0, elem.encode(&x)),
                    (1, vec![0; rows * 4]),
                    (2, u32_bytes(&[n as u32])),
                ],
            ) else {
                return;
            };
            let got = u32s(&out[&1]);
            for (r, row) in x.chunks(n).enumerate() {
                let best = row
                    .iter()
                    .cloned()
                    .fold(row[0], if op == "argmin" { f64::min } else { f64::max });
                let want = row.iter().position(|&v| v == best).unwrap() as u32;
                assert_eq!(got[r], want, "{entry} row {r}");
            }
        }
    }
}

#[test]
fn inclusive_and_exclusive_scans_match() {
    // Rows of 1000 in threadgroups of 64 × 4 reads: four chunks, the last
    // ragged.
    let (rows, n) = (2usize, 1000usize);
    for elem in ELEMS {
        let x = elem.quantise(&uniform(rows * n, 91, -1.0, 1.0));
        for inclusive in [true, false] {
            let kind = if inclusive { "inclusive" } else { "exclusive" };
            let entry = format!("scan_{kind}_sum_{}", elem.suffix());
            let Some(out) = run(
                "scan.metal",
                &entry,
                SimdGroups::Emulated32,
                groups([rows as u32, 1, 1], 64),
                vec![
                    (0, elem.encode(&x)),
                    (1, vec![0; rows * n * elem.size()]),
                    (2, u32_bytes(&[n as u32])),
                ],
            ) else {
                return;
            };
            let (mut exact, mut bound) = (Vec::new(), Vec::new());
            for row in x.chunks(n) {
                let (mut sum, mut magnitude) = (0.0, 0.0);
                for (j, v) in row.iter().enumerate() {
                    if inclusive {
                        sum += v;
                        magnitude += v.abs();
                    }
                    // A sum of j + 1 (or j) terms, partial sums of disjoint
                    // parts added in some order.
                    exact.push(sum);
                    bound.push((j as f64 + 1.0) * U * magnitude + 1e-30);
                    if !inclusive {
                        sum += v;
                        magnitude += v.abs();
                    }
                }
            }
            let got = elem.decode(&out[&1]);
            assert_rounded_within(&entry, elem, &got, &exact, &bound);
        }
    }
    // Integers: exact.
    let x: Vec<i32> = (0..(rows * n) as i32).map(|i| (i * 37) % 23 - 11).collect();
    let Some(out) = run(
        "scan.metal",
        "scan_inclusive_sum_int32",
        SimdGroups::Emulated32,
        groups([rows as u32, 1, 1], 64),
        vec![
            (0, i32_bytes(&x)),
            (1, vec![0; rows * n * 4]),
            (2, u32_bytes(&[n as u32])),
        ],
    ) else {
        return;
    };
    let got = u32s(&out[&1]);
    for (r, row) in x.chunks(n).enumerate() {
        let mut sum = 0i32;
        for (j, v) in row.iter().enumerate() {
            sum += v;
            assert_eq!(got[r * n + j] as i32, sum, "int scan row {r} element {j}");
        }
    }
}

#[path = "ml_kernels/bench.rs"]
mod bench;
