//! Signed `/` and `%` by run-time divisors (`fixtures/bench/int_divide.metal`,
//! sixteen of each per thread): what the translator's divisor guard and its
//! `a - d * (a / d)` remainder (correct on GL too) cost against the plain
//! WGSL operators, which naga's SPIR-V writer guards by itself. Checked
//! exactly against Rust's truncating division, which is C++'s.

use super::harness::{check_exact, grid, print_rows, translate, Bench, Kernel, Row};

const HAND_WGSL: &str = "
@group(0) @binding(0) var<storage, read> a: array<i32>;
@group(0) @binding(1) var<storage, read> b: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<i32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = id.x + id.y * n.x * 256u;
    if (i >= arrayLength(&out)) { return; }
    let x = a[i];
    var acc = 0;
    for (var k = 1; k <= 16; k++) {
        let d = b[i] + k;
        acc += x % d + x / d;
    }
    out[i] = acc;
}";

/// Times `elements` threads (at most 65535 × 256).
pub fn run(bench: &Bench, elements: u32) -> anyhow::Result<()> {
    println!("\ninteger division: {elements} threads, 16 quotients and remainders each");
    let source = include_str!("../../fixtures/bench/int_divide.metal");
    let t = translate("int_divide.metal", source, "int_divide", [256, 1, 1], &[])?;
    let hash = |i: u32, s: u32| i.wrapping_mul(2654435761).wrapping_add(s) >> 8;
    let a: Vec<i32> = (0..elements)
        .map(|i| (hash(i, 1) % 2_000_001) as i32 - 1_000_000)
        .collect();
    // Divisors b + k for k in 1..=16 never reach 0: b is in [3, 99] or
    // in [-99, -20].
    let b: Vec<i32> = (0..elements)
        .map(|i| match hash(i, 5) % 2 {
            0 => 3 + (hash(i, 9) % 97) as i32,
            _ => -20 - (hash(i, 9) % 80) as i32,
        })
        .collect();
    let want: Vec<i32> = a
        .iter()
        .zip(&b)
        .map(|(&x, &bi)| (1..=16).map(|k| x % (bi + k) + x / (bi + k)).sum())
        .collect();
    let (buf_a, buf_b) = (
        bench.input(bytemuck::cast_slice(&a)),
        bench.input(bytemuck::cast_slice(&b)),
    );
    let buf_out = bench.output(u64::from(elements) * 4);
    let params = grid([elements, 1, 1], [256, 1, 1]);
    let kernels = [
        t.kernel("translated int_divide", params, &[&buf_a, &buf_b, &buf_out]),
        Kernel {
            name: "hand-written WGSL (plain / and %)",
            wgsl: HAND_WGSL.into(),
            entry: "main".into(),
            groups: params.threadgroups,
            buffers: vec![(0, &buf_a), (1, &buf_b), (2, &buf_out)],
            dispatch: None,
            constants: Vec::new(),
        },
    ];
    // GPU_BENCH_ROUNDS times the pair again, alternating, to tell a slow
    // kernel from a slow moment of the GPU (the anomaly of BENCHMARKS.md).
    let rounds: usize = std::env::var("GPU_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    for round in 0..rounds.max(1) {
        let mut rows = Vec::new();
        for kernel in &kernels {
            let ns = bench.time(kernel)?;
            let got: Vec<i32> = bytemuck::pod_collect_to_vec(&bench.read_bytes(&buf_out)?);
            check_exact(kernel.name, &got, &want)?;
            bench.clear(&buf_out)?;
            rows.push(Row {
                name: kernel.name,
                ns,
                work: 32.0 * f64::from(elements),
            });
        }
        if rounds > 1 {
            println!("round {}", round + 1);
        }
        print_rows(&rows, "Gop/s", 1);
    }
    Ok(())
}
