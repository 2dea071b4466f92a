//! GPU times of the `fixtures/ml` kernels (BENCHMARKS.md, "ML kernels"),
//! with `examples/gpu_bench`'s harness: wgpu timestamp queries around each
//! dispatch, the median of ITERATIONS dispatches, pipeline creation and
//! uploads not timed. The kernels written for any SIMD-group width run
//! twice, with Apple's 32 lanes emulated and on the adapter's subgroups,
//! which on lavapipe (8 lanes) is the emulation's cost.
//!
//!     cargo test --release --test ml_kernels -- --ignored --nocapture gpu_times

#[path = "../../examples/gpu_bench/harness.rs"]
#[allow(dead_code)] // the ML rows use part of the harness
mod harness;

use super::common::ml::{fixture, i32_bytes, options, u32_bytes, uniform, Elem};
use harness::{grid, translate_options, Bench};
use msl2wgsl::runner::Gpu;
use msl2wgsl::SimdGroups;

/// Dispatches timed per kernel.
const ITERATIONS: usize = 20;

/// One row of the table: a kernel instance, how it is dispatched, its
/// buffers in argument order, and the bytes it must move (for GB/s).
struct Case {
    label: String,
    file: &'static str,
    entry: String,
    simd: SimdGroups,
    threadgroup: [u32; 3],
    groups: [u32; 3],
    buffers: Vec<Vec<u8>>,
    bytes: f64,
}

/// Times `case`, printing a table row: median µs and GB/s.
fn time(bench: &Bench, case: &Case) -> anyhow::Result<()> {
    let (name, text) = fixture(case.file);
    let translated = translate_options(
        &name,
        &text,
        &case.entry,
        case.threadgroup,
        options(case.simd),
    )?;
    let buffers: Vec<_> = case.buffers.iter().map(|b| bench.input(b)).collect();
    let refs: Vec<&_> = buffers.iter().collect();
    let size = case.threadgroup;
    let params = grid([0, 1, 2].map(|d| case.groups[d] * size[d]), size);
    let label: &'static str = Box::leak(case.label.clone().into_boxed_str());
    let ns = bench.time(&translated.kernel(label, params, &refs))?;
    println!(
        "| {} | {:?} | {:.1} | {:.3} |",
        case.label,
        case.simd,
        ns / 1e3,
        case.bytes / ns
    );
    Ok(())
}

/// The rows of BENCHMARKS.md's "ML kernels" table.
fn cases(width: u32) -> Vec<Case> {
    let mut cases = softmax_cases();
    cases.extend(any_width_cases(width));
    cases.extend(other_cases());
    cases
}

/// The softmax in each type (written for 32 lanes: emulated only).
fn softmax_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let (rows, n) = (64usize, 1024usize);
    let x = uniform(rows * n, 1, -4.0, 4.0);
    for elem in [Elem::F32, Elem::F16, Elem::Bf16] {
        cases.push(Case {
            label: format!("softmax {rows}×{n} {}", elem.suffix()),
            file: "softmax.metal",
            entry: format!("block_softmax_{}", elem.suffix()),
            simd: SimdGroups::Emulated32,
            threadgroup: [256, 1, 1],
            groups: [rows as u32, 1, 1],
            buffers: vec![
                elem.encode(&x),
                vec![0; rows * n * elem.size()],
                i32_bytes(&[n as i32]),
            ],
            bytes: (2 * rows * n * elem.size()) as f64,
        });
    }
    cases
}

/// The kernels written for any SIMD-group width, each emulated and on
/// the adapter's `width`-lane subgroups.
fn any_width_cases(width: u32) -> Vec<Case> {
    let mut any_width = Vec::new();
    for simd in [SimdGroups::Emulated32, SimdGroups::Native] {
        let lanes = if simd == SimdGroups::Native {
            width
        } else {
            32
        };
        any_width.extend(norm_cases(simd));
        any_width.extend(product_cases(simd, lanes));
    }
    any_width.sort_by(|a, b| a.label.cmp(&b.label));
    any_width
}

/// The RMS and layer norms of 64 rows of 1024 in `simd` mode.
fn norm_cases(simd: SimdGroups) -> Vec<Case> {
    let (rows, n) = (64usize, 1024usize);
    let f32 = Elem::F32;
    let x = uniform(rows * n, 1, -4.0, 4.0);
    let w = uniform(n, 2, 0.5, 1.5);
    let mut cases = Vec::new();
    cases.push(Case {
        label: format!("RMS norm {rows}×{n} float32"),
        file: "norms.metal",
        entry: "rms_loopedfloat32".into(),
        simd,
        threadgroup: [256, 1, 1],
        groups: [rows as u32, 1, 1],
        buffers: vec![
            f32.encode(&x),
            f32.encode(&w),
            vec![0; rows * n * 4],
            f32.encode(&[1e-5]),
            u32_bytes(&[n as u32]),
            u32_bytes(&[1]),
        ],
        bytes: (2 * rows * n * 4) as f64,
    });
    cases.push(Case {
        label: format!("layer norm {rows}×{n} float32"),
        file: "norms.metal",
        entry: "layer_norm_loopedfloat32".into(),
        simd,
        threadgroup: [256, 1, 1],
        groups: [rows as u32, 1, 1],
        buffers: vec![
            f32.encode(&x),
            f32.encode(&w),
            f32.encode(&w),
            vec![0; rows * n * 4],
            f32.encode(&[1e-5]),
            u32_bytes(&[n as u32]),
        ],
        bytes: (2 * rows * n * 4) as f64,
    });
    cases
}

/// GEMV and the quantised products of a 1024 × 1024 matrix in `simd` mode,
/// with `lanes`-lane SIMD groups.
fn product_cases(simd: SimdGroups, lanes: u32) -> Vec<Case> {
    let f32 = Elem::F32;
    // Each SIMD group takes its rows, so rows per threadgroup follow the
    // width.
    let per_group = |threads: u32, rows_per_simd_group: u32| threads / lanes * rows_per_simd_group;
    let mut cases = Vec::new();
    let (m, k) = (1024usize, 1024usize);
    cases.push(Case {
        label: format!("GEMV {m}×{k} float32"),
        file: "gemv.metal",
        entry: "gemv_float32".into(),
        simd,
        threadgroup: [128, 1, 1],
        groups: [(m as u32).div_ceil(per_group(128, 2)), 1, 1],
        buffers: vec![
            f32.encode(&uniform(m * k, 3, -1.0, 1.0)),
            f32.encode(&uniform(k, 4, -1.0, 1.0)),
            vec![0; m * 4],
            i32_bytes(&[k as i32]),
            i32_bytes(&[m as i32]),
        ],
        bytes: (m * k * 4) as f64,
    });
    for (bits, block) in [(4usize, 18usize), (8, 34)] {
        cases.push(Case {
            label: format!("ggml q{bits}_0 × float32 vector, {m}×{k}"),
            file: "quantized.metal",
            entry: format!("mul_mm_q{bits}_0_float32"),
            simd,
            threadgroup: [64, 1, 1],
            groups: [(m as u32).div_ceil(per_group(64, 2)), 1, 1],
            buffers: vec![
                vec![0; m * k / 32 * block],
                f32.encode(&uniform(k, 5, -1.0, 1.0)),
                vec![0; m * 4],
                i32_bytes(&[k as i32]),
                i32_bytes(&[m as i32]),
            ],
            bytes: (m * k / 32 * block) as f64,
        });
    }
    cases.push(Case {
        label: format!("MLX affine 4-bit (groups of 32) × float32 vector, {m}×{k}"),
        file: "quantized.metal",
        entry: "affine_qmm_float32_gs_32_b_4".into(),
        simd,
        threadgroup: [64, 1, 1],
        groups: [(m as u32).div_ceil(per_group(64, 1)), 1, 1],
        buffers: vec![
            vec![0; m * k / 2],
            f32.encode(&uniform(m * k / 32, 6, 0.01, 0.1)),
            f32.encode(&uniform(m * k / 32, 7, -0.1, 0.1)),
            f32.encode(&uniform(k, 8, -1.0, 1.0)),
            vec![0; m * 4],
            i32_bytes(&[k as i32]),
            i32_bytes(&[m as i32]),
        ],
        bytes: (m * k / 2 + m * k / 32 * 8) as f64,
    });
    cases
}

/// The GEMM, arg-max, scan and copy.
fn other_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let (rows, n) = (64usize, 1024usize);
    let f32 = Elem::F32;
    let x = uniform(rows * n, 1, -4.0, 4.0);
    let g = 128usize;
    cases.push(Case {
        label: format!("GEMM {g}³ float32, 64×64 tiles"),
        file: "gemm.metal",
        entry: "gemm_float32".into(),
        simd: SimdGroups::Emulated32,
        threadgroup: [128, 1, 1],
        groups: [(g / 64) as u32, (g / 64) as u32, 1],
        buffers: vec![
            f32.encode(&uniform(g * g, 9, -1.0, 1.0)),
            f32.encode(&uniform(g * g, 10, -1.0, 1.0)),
            vec![0; g * g * 4],
            i32_bytes(&[g as i32, g as i32, g as i32, g as i32, g as i32, g as i32]),
        ],
        bytes: (3 * g * g * 4) as f64,
    });
    cases.push(Case {
        label: format!("argmax {rows}×{n} float32"),
        file: "arg_reduce.metal",
        entry: "argmax_float32".into(),
        simd: SimdGroups::Emulated32,
        threadgroup: [128, 1, 1],
        groups: [rows as u32, 1, 1],
        buffers: vec![f32.encode(&x), vec![0; rows * 4], u32_bytes(&[n as u32])],
        bytes: (rows * n * 4) as f64,
    });
    cases.push(Case {
        label: format!("inclusive scan {rows}×{n} float32"),
        file: "scan.metal",
        entry: "scan_inclusive_sum_float32".into(),
        simd: SimdGroups::Emulated32,
        threadgroup: [256, 1, 1],
        groups: [rows as u32, 1, 1],
        buffers: vec![
            f32.encode(&x),
            vec![0; rows * n * 4],
            u32_bytes(&[n as u32]),
        ],
        bytes: (2 * rows * n * 4) as f64,
    });
    // A transpose of a 64 × 64 × 64 array: axes (2, 1, 0).
    let c = 64usize;
    let strides: Vec<u8> = [1i64, c as i64, (c * c) as i64]
        .iter()
        .flat_map(|s| s.to_le_bytes())
        .collect();
    cases.push(Case {
        label: format!("strided copy {c}³ float32 (transpose)"),
        file: "copy.metal",
        entry: "copy_g_float32_float32".into(),
        simd: SimdGroups::Auto,
        threadgroup: [8, 8, 4],
        groups: [(c / 8) as u32, (c / 8) as u32, (c / 4) as u32],
        buffers: vec![
            f32.encode(&uniform(c * c * c, 11, -1.0, 1.0)),
            vec![0; c * c * c * 4],
            i32_bytes(&[c as i32, c as i32, c as i32]),
            strides,
            i32_bytes(&[3]),
        ],
        bytes: (2 * c * c * c * 4) as f64,
    });
    cases
}

#[test]
#[ignore = "a benchmark: prints BENCHMARKS.md's ML-kernel rows (run with --ignored --nocapture)"]
fn gpu_times() {
    let gpu = Gpu::new().expect("a GPU");
    if !gpu
        .features()
        .contains(msl2wgsl::wgpu::Features::TIMESTAMP_QUERY)
    {
        eprintln!("SKIP: the adapter has no timestamp queries");
        return;
    }
    let width = gpu.info().subgroup_max_size;
    println!("adapter: {}; subgroups {width} wide", gpu.adapter_line());
    println!("| kernel | SIMD groups | median µs | GB/s |");
    println!("| --- | --- | ---: | ---: |");
    let bench = Bench {
        gpu,
        iterations: ITERATIONS,
    };
    let only = std::env::var("ML_BENCH_ONLY").unwrap_or_default();
    for case in cases(width) {
        if case.label.contains(only.as_str()) {
            time(&bench, &case).unwrap_or_else(|e| panic!("{}: {e}", case.label));
        }
    }
}
