//! GPU times of the `fixtures/ml` kernels (BENCHMARKS.md, "ML kernels"),
//! with `examples/gpu_bench`'s harness: wgpu timestamp queries around each
//! dispatch, the median of ITERATIONS dispatches, pipeline creation and
//! uploads not timed.
//!
//! Each kernel (a [`Case`], one per table row) runs translated with the
//! adapter's own subgroups (`SimdGroups::Native`), translated with Apple's
//! 32 lanes emulated (`SimdGroups::Emulated32`), and, where it has one, as
//! its hand-written WGSL twin in `fixtures/bench/ml` (the same algorithm,
//! threadgroup shape, data layout and work per thread, written as a person
//! porting it to WGSL would: `subgroupAdd`/`subgroupMax` and workgroup
//! memory), the reference of the ratios. Kernels written for exactly 32
//! lanes (softmax, arg-max, scan, the GEMM's `thread_elements()` stores)
//! run natively only where the adapter's subgroups are 32 wide. Every
//! output is checked against the CPU reference and bounds of
//! `tests/ml_kernels.rs` before its time is printed: a wrong result fails
//! the run (the other rows still run and print first).
//!
//!     cargo test --release --test ml_kernels -- --ignored --nocapture gpu_times
//!
//! Environment: `ML_BENCH_ONLY=TEXT` keeps the rows whose label contains
//! TEXT; sizes (defaults for a large GPU: several MB per buffer)
//! `ML_BENCH_ROWS` (4096) × `ML_BENCH_COLS` (4096, at most 4096: the
//! softmax holds a row in one threadgroup) for the softmax, norms,
//! arg-max and scan; `ML_BENCH_MATRIX` (8192) for the GEMV and the
//! quantised products (a square matrix times a vector); `ML_BENCH_GEMM`
//! (2048, a multiple of 64) for the GEMM; `ML_BENCH_COPY` (256) for the
//! strided copy's cube; `ML_BENCH_ITERATIONS` (20).

#[path = "../../examples/gpu_bench/harness.rs"]
#[allow(dead_code)] // the ML rows use part of the harness
mod harness;

use super::common::ml::{
    assert_rounded_within, fixture, i32_bytes, options, u32_bytes, uniform, Elem,
};
use harness::{grid, translate_options, Bench, Kernel};
use msl2wgsl::runner::Gpu;
use msl2wgsl::wgpu;
use msl2wgsl::{Options, SimdGroups};
use std::cell::OnceCell;
use std::path::PathBuf;

/// How a kernel uses SIMD groups, which decides the modes it runs in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lanes {
    /// Reads `threads_per_simdgroup`/`simdgroups_per_threadgroup`: right on
    /// subgroups of any width.
    Any,
    /// Written for Apple's 32 lanes (partials sized and read by lane, or
    /// the 32-lane `thread_elements()` layout): natively only on 32-lane
    /// subgroups.
    Apple32,
    /// No SIMD-group functions: one translated row.
    None,
}

/// Panics unless an output (its bytes) matches the CPU reference; the
/// `&str` names the run.
type Check = Box<dyn Fn(&str, &[u8])>;

/// One row of the table: a kernel, how it is dispatched, its buffers in
/// argument order (the twin binds buffer `i` at binding `i`), the one it
/// writes, how that is checked, and the work the algorithm must do: bytes
/// it must move (GB/s), or for the GEMM floating-point operations
/// (GFLOP/s).
struct Case {
    label: String,
    file: &'static str,
    entry: String,
    lanes: Lanes,
    threadgroup: [u32; 3],
    /// Threadgroups to dispatch for SIMD groups of the given width.
    groups: Box<dyn Fn(u32) -> [u32; 3]>,
    buffers: Vec<Vec<u8>>,
    /// The argument the kernel writes (its buffer starts zeroed).
    output: usize,
    check: Check,
    /// The hand-written twin: a file of `fixtures/bench/ml` (entry `main`)
    /// and the pipeline constants it needs.
    twin: Option<(&'static str, Vec<(&'static str, f64)>)>,
    /// Bytes moved, or operations where `flop`.
    work: f64,
    flop: bool,
}

/// The sizes of the rows, from the environment.
struct Sizes {
    rows: usize,
    cols: usize,
    matrix: usize,
    gemm: usize,
    copy: usize,
}

/// `ML_BENCH_{name}` as a number, or `default`.
fn env_size(name: &str, default: usize) -> usize {
    match std::env::var(format!("ML_BENCH_{name}")) {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|e| panic!("ML_BENCH_{name}={text}: {e}")),
        Err(_) => default,
    }
}

impl Sizes {
    fn from_env() -> Sizes {
        let sizes = Sizes {
            rows: env_size("ROWS", 4096),
            cols: env_size("COLS", 4096),
            matrix: env_size("MATRIX", 8192),
            gemm: env_size("GEMM", 2048),
            copy: env_size("COPY", 256),
        };
        assert!(
            sizes.cols <= 4096,
            "ML_BENCH_COLS: at most 4096 (a softmax row in 1024 threads)"
        );
        assert!(
            sizes.matrix.is_multiple_of(64),
            "ML_BENCH_MATRIX: a multiple of 64 (whole quantised blocks and groups)"
        );
        assert!(
            sizes.gemm.is_multiple_of(64),
            "ML_BENCH_GEMM: a multiple of 64"
        );
        assert!(
            sizes.copy.is_multiple_of(8),
            "ML_BENCH_COPY: a multiple of 8"
        );
        sizes
    }
}

/// A check of `elem` results against a reference (`exact`, `bound`)
/// computed on first use (once for the runs of one row).
fn rounded_check(
    label: &str,
    elem: Elem,
    reference: impl Fn() -> (Vec<f64>, Vec<f64>) + 'static,
) -> Check {
    let label = label.to_string();
    let cell = OnceCell::new();
    Box::new(move |run, bytes| {
        let (exact, bound) = cell.get_or_init(&reference);
        let got = elem.decode(bytes);
        assert_rounded_within(&format!("{label}, {run}"), elem, &got, exact, bound);
    })
}

/// One timed run of a row.
struct Timed {
    name: String,
    ns: f64,
}

/// The text of a twin in `fixtures/bench/ml`, as naga takes it: without
/// `enable subgroups;`, which naga 30's WGSL front end rejects (Tint and
/// the WebGPU spec require it; the reduction twin of
/// `examples/gpu_bench/reduce.rs` leaves it out, `benches/translate.rs`
/// strips it the same way).
fn twin_wgsl(file: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/bench/ml")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.replacen("enable subgroups;\n", "", 1)
}

/// What the adapter's subgroups allow.
struct Adapter {
    /// The subgroup width when the adapter has subgroups.
    subgroups: Option<u32>,
    /// Whether its subgroups are exactly 32 wide (as the runner decides).
    native_32: bool,
    /// The subgroup width where it is fixed, which the runner passes to the
    /// translation (`Options::subgroup_width`: per-lane SIMD-group matrix
    /// fragments on native 32-lane subgroups).
    fixed_width: Option<u32>,
}

/// Times every run of `case` (native, emulated, twin), checking each
/// output, and prints its rows: median µs, GB/s and the ratio to the twin.
fn time(bench: &Bench, adapter: &Adapter, case: &Case) -> anyhow::Result<()> {
    let inputs: Vec<wgpu::Buffer> = case.buffers.iter().map(|b| bench.input(b)).collect();
    let out_bytes = case.buffers[case.output].len() as u64;
    // A fresh zeroed output per run, so one cannot pass on another's results.
    let output = || {
        bench.gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: out_bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    };
    // Times `kernel`, then checks what it wrote to `out`.
    // wgpu's validation errors (a buffer over the adapter's binding limit)
    // are only logged by the runner's device: caught here, they fail the
    // run with wgpu's message.
    let run = |name: String, kernel: Kernel, out: &wgpu::Buffer| -> anyhow::Result<Timed> {
        let scope = bench
            .gpu
            .device()
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let ns = bench.time(&kernel)?;
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(anyhow::Error::new(error).context(name));
        }
        (case.check)(&name, &bench.read_bytes(out)?);
        Ok(Timed { name, ns })
    };
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let (name, text) = fixture(case.file);
    let mut modes = Vec::new();
    let mut skipped = None;
    match case.lanes {
        Lanes::None => modes.push((SimdGroups::Auto, 32, "translated".to_string())),
        Lanes::Any | Lanes::Apple32 => {
            match adapter.subgroups {
                Some(width) if case.lanes == Lanes::Any || adapter.native_32 => modes.push((
                    SimdGroups::Native,
                    width,
                    format!("translated, native subgroups ({width} lanes)"),
                )),
                Some(width) => {
                    skipped = Some(format!("native: skipped (subgroups are {width} wide)"))
                }
                None => skipped = Some("native: skipped (no subgroups)".to_string()),
            }
            modes.push((
                SimdGroups::Emulated32,
                32,
                "translated, 32 lanes emulated".to_string(),
            ));
        }
    }
    let mut rows = Vec::new();
    for (simd, width, what) in modes {
        let options = Options {
            subgroup_width: adapter.fixed_width,
            ..options(simd)
        };
        let translated = translate_options(&name, &text, &case.entry, case.threadgroup, options)?;
        bench.gpu.check_features(&translated.required_features)?;
        let size = case.threadgroup;
        let groups = (case.groups)(width);
        let params = grid([0, 1, 2].map(|d| groups[d] * size[d]), size);
        let label = leak(format!("{} ({what})", case.label));
        let out = output();
        let refs: Vec<&wgpu::Buffer> = (0..inputs.len())
            .map(|i| if i == case.output { &out } else { &inputs[i] })
            .collect();
        rows.push(run(what, translated.kernel(label, params, &refs), &out)?);
    }
    let mut reference = None;
    if let Some((file, constants)) = &case.twin {
        let wgsl = twin_wgsl(file);
        match adapter.subgroups {
            None if wgsl.contains("subgroup") => {
                println!("| | hand-written: skipped (no subgroups) | | | |");
            }
            _ => {
                let width = adapter.subgroups.unwrap_or(32);
                let label = leak(format!("{} (hand-written)", case.label));
                let out = output();
                let kernel = Kernel {
                    name: label,
                    wgsl,
                    entry: "main".into(),
                    groups: (case.groups)(width),
                    buffers: (0..inputs.len())
                        .map(|i| (i as u32, if i == case.output { &out } else { &inputs[i] }))
                        .collect(),
                    dispatch: None,
                    constants: constants.clone(),
                };
                let timed = run("hand-written WGSL".to_string(), kernel, &out)?;
                reference = Some(timed.ns);
                rows.push(timed);
            }
        }
    }
    let mut first = true;
    let mut label = || match std::mem::take(&mut first) {
        true => case.label.as_str(),
        false => "",
    };
    if let Some(line) = skipped {
        println!("| {} | {line} | | | |", label());
    }
    for row in &rows {
        let ratio = match reference {
            Some(base) => format!("{:.2}", row.ns / base),
            None => "–".to_string(),
        };
        let mark = match reference == Some(row.ns) && row.name.starts_with("hand") {
            true => " (ref)",
            false => "",
        };
        let unit = if case.flop { "GFLOP/s" } else { "GB/s" };
        println!(
            "| {} | {}{mark} | {:.1} | {:.3} {unit} | {ratio} |",
            label(),
            row.name,
            row.ns / 1e3,
            case.work / row.ns
        );
    }
    Ok(())
}

/// The table being timed: the rows whose label contains `only`
/// (`ML_BENCH_ONLY`), each made, timed by `time` and dropped in turn.
struct Table<'a> {
    only: &'a str,
    time: &'a mut dyn FnMut(Case),
}

impl Table<'_> {
    /// Times the row `label`, made by `build`, when it is kept: the data of
    /// rows left out (hundreds of MB at the default sizes) is never made,
    /// and a row's is freed before the next is made.
    fn add(&mut self, label: String, build: impl FnOnce(String) -> Case) {
        if label.contains(self.only) {
            (self.time)(build(label));
        }
    }
}

/// Times the rows of BENCHMARKS.md's "ML kernels" table whose label
/// contains `only`, in order.
fn time_cases(sizes: &Sizes, only: &str, time: &mut dyn FnMut(Case)) {
    let mut table = Table { only, time };
    softmax_cases(sizes, &mut table);
    norm_cases(sizes, &mut table);
    product_cases(sizes, &mut table);
    other_cases(sizes, &mut table);
}

/// The softmax in each type (written for 32 lanes; the twin, in `float`,
/// for any width).
fn softmax_cases(sizes: &Sizes, table: &mut Table) {
    let (rows, n) = (sizes.rows, sizes.cols);
    // Four values per thread, whole 32-lane SIMD groups.
    let threads = (n.div_ceil(4).div_ceil(32) * 32) as u32;
    for elem in [Elem::F32, Elem::F16, Elem::Bf16] {
        let label = format!("softmax {rows}×{n} {}", elem.suffix());
        table.add(label, |label| {
            let x = elem.quantise(&uniform(rows * n, 1, -4.0, 4.0));
            let buffers = vec![
                elem.encode(&x),
                vec![0; rows * n * elem.size()],
                i32_bytes(&[n as i32]),
            ];
            Case {
                check: rounded_check(&label, elem, move || super::softmax_reference(&x, rows, n)),
                label,
                file: "softmax.metal",
                entry: format!("block_softmax_{}", elem.suffix()),
                lanes: Lanes::Apple32,
                threadgroup: [threads, 1, 1],
                groups: Box::new(move |_| [rows as u32, 1, 1]),
                buffers,
                output: 1,
                twin: (elem == Elem::F32)
                    .then(|| ("softmax.wgsl", vec![("WG", f64::from(threads))])),
                work: (2 * rows * n * elem.size()) as f64,
                flop: false,
            }
        });
    }
}

/// The RMS and layer norms, `float`.
fn norm_cases(sizes: &Sizes, table: &mut Table) {
    let (rows, n) = (sizes.rows, sizes.cols);
    let f32 = Elem::F32;
    let x = f32.quantise(&uniform(rows * n, 1, -4.0, 4.0));
    let w = f32.quantise(&uniform(n, 2, 0.5, 1.5));
    let b = f32.quantise(&uniform(n, 3, -0.5, 0.5));
    let eps = super::EPS as f32;
    let label = format!("RMS norm {rows}×{n} float32");
    table.add(label, |label| Case {
        check: rounded_check(&label, f32, {
            let (x, w) = (x.clone(), w.clone());
            move || super::rms_reference(&x, &w, n)
        }),
        label,
        file: "norms.metal",
        entry: "rms_loopedfloat32".into(),
        lanes: Lanes::Any,
        threadgroup: [256, 1, 1],
        groups: Box::new(move |_| [rows as u32, 1, 1]),
        buffers: vec![
            f32.encode(&x),
            f32.encode(&w),
            vec![0; rows * n * 4],
            eps.to_le_bytes().to_vec(),
            u32_bytes(&[n as u32]),
            u32_bytes(&[1]),
        ],
        output: 2,
        twin: Some(("rms_norm.wgsl", Vec::new())),
        work: (2 * rows * n * 4) as f64,
        flop: false,
    });
    let label = format!("layer norm {rows}×{n} float32");
    table.add(label, |label| Case {
        check: rounded_check(&label, f32, {
            let (x, w, b) = (x.clone(), w.clone(), b.clone());
            move || super::layer_norm_reference(&x, &w, &b, n)
        }),
        label,
        file: "norms.metal",
        entry: "layer_norm_loopedfloat32".into(),
        lanes: Lanes::Any,
        threadgroup: [256, 1, 1],
        groups: Box::new(move |_| [rows as u32, 1, 1]),
        buffers: vec![
            f32.encode(&x),
            f32.encode(&w),
            f32.encode(&b),
            vec![0; rows * n * 4],
            eps.to_le_bytes().to_vec(),
            u32_bytes(&[n as u32]),
        ],
        output: 3,
        twin: Some(("layer_norm.wgsl", Vec::new())),
        work: (2 * rows * n * 4) as f64,
        flop: false,
    });
}

/// Threadgroups for `rows` rows when each of a threadgroup's `threads /
/// width` SIMD groups takes `per_simd_group` rows.
fn row_groups(rows: usize, threads: u32, per_simd_group: u32) -> Box<dyn Fn(u32) -> [u32; 3]> {
    Box::new(move |width| {
        let per_group = threads.div_ceil(width) * per_simd_group;
        [(rows as u32).div_ceil(per_group), 1, 1]
    })
}

/// GEMV and the quantised products of a square matrix and a vector,
/// `float`.
fn product_cases(sizes: &Sizes, table: &mut Table) {
    let f32 = Elem::F32;
    let (m, k) = (sizes.matrix, sizes.matrix);
    let x = f32.quantise(&uniform(k, 4, -1.0, 1.0));
    let label = format!("GEMV {m}×{k} float32");
    table.add(label, |label| {
        let a = f32.quantise(&uniform(m * k, 3, -1.0, 1.0));
        Case {
            label: label.clone(),
            file: "gemv.metal",
            entry: "gemv_float32".into(),
            lanes: Lanes::Any,
            threadgroup: [128, 1, 1],
            groups: row_groups(m, 128, 2),
            buffers: vec![
                f32.encode(&a),
                f32.encode(&x),
                vec![0; m * 4],
                i32_bytes(&[k as i32]),
                i32_bytes(&[m as i32]),
            ],
            output: 2,
            check: rounded_check(&label, f32, {
                let x = x.clone();
                move || {
                    (0..m)
                        .map(|r| super::dot_bound((0..k).map(|j| a[r * k + j] * x[j]), k))
                        .unzip()
                }
            }),
            twin: Some(("gemv.wgsl", Vec::new())),
            work: (m * k * 4) as f64,
            flop: false,
        }
    });
    for (bits, block) in [(4u32, 18usize), (8, 34)] {
        let label = format!("ggml q{bits}_0 × float32 vector, {m}×{k}");
        table.add(label, |label| {
            let (blocks, w) = super::ggml_blocks(m, k, bits, 50 + bits);
            let x = x.clone();
            Case {
                label: label.clone(),
                file: "quantized.metal",
                entry: format!("mul_mm_q{bits}_0_float32"),
                lanes: Lanes::Any,
                threadgroup: [64, 1, 1],
                groups: row_groups(m, 64, 2),
                buffers: vec![
                    blocks,
                    f32.encode(&x),
                    vec![0; m * 4],
                    i32_bytes(&[k as i32]),
                    i32_bytes(&[m as i32]),
                ],
                output: 2,
                check: rounded_check(&label, f32, move || {
                    // Within a block: 32 terms and the scale; across blocks: nb.
                    let depth = 32 + 1 + k / 32;
                    super::qmm_reference(&w, &x, m, k, 1, depth, |c, r, j| {
                        (w[r * k + j] * x[c * k + j]).abs()
                    })
                }),
                twin: Some((
                    if bits == 4 { "q4_0.wgsl" } else { "q8_0.wgsl" },
                    Vec::new(),
                )),
                work: (m * k / 32 * block + k * 4 + m * 4) as f64,
                flop: false,
            }
        });
    }
    let label = format!("MLX affine 4-bit (groups of 32) × float32 vector, {m}×{k}");
    table.add(label, |label| {
        let (words, scales, biases, w) = super::affine_weights(f32, m, k, 32, 4, 60);
        Case {
            label: label.clone(),
            file: "quantized.metal",
            entry: "affine_qmm_float32_gs_32_b_4".into(),
            lanes: Lanes::Any,
            threadgroup: [64, 1, 1],
            groups: row_groups(m, 64, 1),
            buffers: vec![
                u32_bytes(&words),
                f32.encode(&scales),
                f32.encode(&biases),
                f32.encode(&x),
                vec![0; m * 4],
                i32_bytes(&[k as i32]),
                i32_bytes(&[m as i32]),
            ],
            output: 4,
            check: rounded_check(&label, f32, move || {
                // Σq·x and Σx over a group, scale and bias, then groups.
                let depth = 32 + 2 + k / 32;
                super::qmm_reference(&w, &x, m, k, 1, depth, |c, r, j| {
                    let g = (r * k + j) / 32;
                    let xj = x[c * k + j].abs();
                    (w[r * k + j] - biases[g]).abs() * xj + biases[g].abs() * xj
                })
            }),
            twin: None,
            work: (m * k / 2 + m * k / 32 * 8 + k * 4 + m * 4) as f64,
            flop: false,
        }
    });
}

/// The GEMM, arg-max, scan and copy.
fn other_cases(sizes: &Sizes, table: &mut Table) {
    let f32 = Elem::F32;
    let g = sizes.gemm;
    let label = format!("GEMM {g}³ float32, 64×64 tiles");
    table.add(label, |label| {
        let a = f32.quantise(&uniform(g * g, 9, -1.0, 1.0));
        let b = f32.quantise(&uniform(g * g, 10, -1.0, 1.0));
        Case {
            label: label.clone(),
            file: "gemm.metal",
            entry: "gemm_float32".into(),
            lanes: Lanes::Apple32,
            threadgroup: [128, 1, 1],
            groups: Box::new(move |_| [(g / 64) as u32, (g / 64) as u32, 1]),
            buffers: vec![
                f32.encode(&a),
                f32.encode(&b),
                vec![0; g * g * 4],
                i32_bytes(&[g as i32; 6]),
            ],
            output: 2,
            check: rounded_check(&label, f32, move || {
                // Bᵀ, so that both factors of a dot product are read in
                // order (g³ terms: 2048³ takes the CPU seconds).
                let bt: Vec<f64> = (0..g * g).map(|i| b[i % g * g + i / g]).collect();
                (0..g * g)
                    .map(|i| {
                        let (r, c) = (i / g, i % g);
                        let (a, bt) = (&a[r * g..][..g], &bt[c * g..][..g]);
                        super::dot_bound(a.iter().zip(bt).map(|(x, y)| x * y), g)
                    })
                    .unzip()
            }),
            twin: Some(("gemm.wgsl", Vec::new())),
            work: (2 * g * g * g) as f64,
            flop: true,
        }
    });

    let (rows, n) = (sizes.rows, sizes.cols);
    let x = || f32.quantise(&uniform(rows * n, 1, -4.0, 4.0));
    let label = format!("argmax {rows}×{n} float32");
    table.add(label, |label| {
        let x = x();
        let want: Vec<u32> = x
            .chunks(n)
            .map(|row| {
                let best = row.iter().cloned().fold(f64::MIN, f64::max);
                row.iter().position(|&v| v == best).unwrap() as u32
            })
            .collect();
        Case {
            label: label.clone(),
            file: "arg_reduce.metal",
            entry: "argmax_float32".into(),
            lanes: Lanes::Apple32,
            threadgroup: [128, 1, 1],
            groups: Box::new(move |_| [rows as u32, 1, 1]),
            buffers: vec![f32.encode(&x), vec![0; rows * 4], u32_bytes(&[n as u32])],
            output: 1,
            check: Box::new(move |run, bytes| {
                let got: Vec<u32> = bytemuck::pod_collect_to_vec(bytes);
                assert_eq!(got, want, "{label}, {run}");
            }),
            twin: None,
            work: (rows * n * 4 + rows * 4) as f64,
            flop: false,
        }
    });

    let label = format!("inclusive scan {rows}×{n} float32");
    table.add(label, |label| {
        let x = x();
        Case {
            buffers: vec![
                f32.encode(&x),
                vec![0; rows * n * 4],
                u32_bytes(&[n as u32]),
            ],
            check: rounded_check(&label, f32, move || {
                let (mut exact, mut bound) = (Vec::new(), Vec::new());
                for row in x.chunks(n) {
                    let (mut sum, mut magnitude) = (0.0, 0.0);
                    for (j, v) in row.iter().enumerate() {
                        sum += v;
                        magnitude += v.abs();
                        exact.push(sum);
                        bound.push((j as f64 + 1.0) * super::U * magnitude + 1e-30);
                    }
                }
                (exact, bound)
            }),
            label,
            file: "scan.metal",
            entry: "scan_inclusive_sum_float32".into(),
            lanes: Lanes::Apple32,
            threadgroup: [256, 1, 1],
            groups: Box::new(move |_| [rows as u32, 1, 1]),
            output: 1,
            twin: None,
            work: (2 * rows * n * 4) as f64,
            flop: false,
        }
    });

    // A transpose of a c × c × c array: axes (2, 1, 0).
    let c = sizes.copy;
    let label = format!("strided copy {c}³ float32 (transpose)");
    table.add(label, |label| {
        let shape = [c as i32; 3];
        let strides = [1i64, c as i64, (c * c) as i64];
        let src = f32.quantise(&uniform(c * c * c, 11, -1.0, 1.0));
        Case {
            label: label.clone(),
            file: "copy.metal",
            entry: "copy_g_float32_float32".into(),
            lanes: Lanes::None,
            threadgroup: [8, 8, 4],
            groups: Box::new(move |_| [(c / 8) as u32, (c / 8) as u32, (c / 4) as u32]),
            buffers: vec![
                f32.encode(&src),
                vec![0; c * c * c * 4],
                i32_bytes(&shape),
                strides.iter().flat_map(|s| s.to_le_bytes()).collect(),
                i32_bytes(&[3]),
            ],
            output: 1,
            check: Box::new(move |run, bytes| {
                let got = f32.decode(bytes);
                for (i, g) in got.iter().enumerate() {
                    let want = src[super::elem_to_loc(i as i64, &shape, &strides) as usize];
                    assert_eq!(*g, want, "{label}, {run}: element {i}");
                }
            }),
            twin: None,
            work: (2 * c * c * c * 4) as f64,
            flop: false,
        }
    });
}

#[test]
#[ignore = "a benchmark: prints BENCHMARKS.md's ML-kernel rows (run with --ignored --nocapture)"]
fn gpu_times() {
    let gpu = Gpu::new().expect("a GPU");
    if !gpu.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
        eprintln!("SKIP: the adapter has no timestamp queries");
        return;
    }
    let info = gpu.info();
    let adapter = Adapter {
        subgroups: gpu
            .features()
            .contains(wgpu::Features::SUBGROUP)
            .then_some(info.subgroup_max_size),
        native_32: gpu.simd_groups(SimdGroups::Auto) == SimdGroups::Native,
        fixed_width: gpu.subgroup_width(),
    };
    let sizes = Sizes::from_env();
    let iterations = env_size("ITERATIONS", 20);
    println!(
        "adapter: {}; subgroups {}–{} wide; median of {iterations} dispatches",
        gpu.adapter_line(),
        info.subgroup_min_size,
        info.subgroup_max_size
    );
    println!("| kernel | run | median µs | throughput | × ref |");
    println!("| --- | --- | ---: | ---: | ---: |");
    let bench = Bench { gpu, iterations };
    let only = std::env::var("ML_BENCH_ONLY").unwrap_or_default();
    // A row that fails (a wrong result, an error) is reported and the
    // others still run; the test fails at the end.
    let mut failed = Vec::new();
    time_cases(&sizes, &only, &mut |case| {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            time(&bench, &adapter, &case)
        }));
        match result {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                println!("| {} | FAILED: {e:#} | | | |", case.label);
                failed.push(case.label.clone());
            }
            Err(_) => {
                println!("| {} | FAILED (the panic above) | | | |", case.label);
                failed.push(case.label.clone());
            }
        }
    });
    assert!(failed.is_empty(), "rows failed: {failed:?}");
}

#[test]
fn hand_written_twins_are_valid_wgsl() {
    // Without a GPU: naga parses and validates every twin as the bench
    // hands it to wgpu, and each file carries `enable subgroups;` exactly
    // when it uses subgroup operations (as Tint requires).
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/bench/ml");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".wgsl"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 7, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(dir.join(&file)).unwrap();
        let wgsl = twin_wgsl(&file);
        assert_eq!(
            text.starts_with("enable subgroups;\n"),
            wgsl.contains("subgroupAdd") || wgsl.contains("subgroupMax"),
            "{file}"
        );
        let module = naga::front::wgsl::parse_str(&wgsl)
            .unwrap_or_else(|e| panic!("{file}:\n{}", e.emit_to_string(&wgsl)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{file}: {e:?}"));
    }
}
