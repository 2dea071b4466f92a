//! What the 32-lane emulation's predicated loops cost
//! (`fixtures/bench/simd_loop.metal`): SDPA-vector's key loop starting at
//! the SIMD group's index, which the translation runs on every thread
//! until a threadgroup vote finds none iterating, against the same keys by
//! a loop whose trip count every thread shares (plain lowering). Both are
//! translated with `SimdGroups::Emulated32` and checked exactly (small
//! integers) against a CPU reference.

use super::harness::{check_exact, grid, print_rows, translate_simd, Bench, Kernel, Row};
use msl2wgsl::SimdGroups;

const BN: u32 = 4;
const PER_LANE: u32 = 2;

/// Times `groups` threadgroups of 128 threads, each scoring `keys` keys.
pub fn run(bench: &Bench, groups: u32, keys: u32) -> anyhow::Result<()> {
    println!("\nSIMD-group key loop: {groups} threadgroups × {keys} keys, 32-lane emulation");
    anyhow::ensure!(
        keys.is_multiple_of(BN),
        "the key count must be a multiple of {BN}"
    );
    let source = include_str!("../../fixtures/bench/simd_loop.metal");
    let small = |i: u32, m: u32| ((i.wrapping_mul(2654435761) >> 7) % m) as f32 - (m / 2) as f32;
    let q: Vec<f32> = (0..groups * 32 * PER_LANE).map(|i| small(i, 5)).collect();
    let k: Vec<f32> = (0..keys * 32 * PER_LANE).map(|i| small(i + 7, 7)).collect();
    let row = (32 * PER_LANE) as usize;
    let want: Vec<f32> = (0..groups as usize)
        .flat_map(|g| {
            let (q, k) = (&q, &k);
            (0..BN as usize).map(move |sg| {
                (sg..keys as usize)
                    .step_by(BN as usize)
                    .map(|i| {
                        (0..row)
                            .map(|e| q[g * row + e] * k[i * row + e])
                            .sum::<f32>()
                    })
                    .sum()
            })
        })
        .collect();
    let (buf_q, buf_k) = (
        bench.input(bytemuck::cast_slice(&q)),
        bench.input(bytemuck::cast_slice(&k)),
    );
    let buf_n = bench.input(&(keys as i32).to_le_bytes());
    let buf_out = bench.output(u64::from(groups * BN) * 4);
    let params = grid([groups * 128, 1, 1], [128, 1, 1]);
    let translated = |entry| {
        translate_simd(
            "simd_loop.metal",
            source,
            entry,
            [128, 1, 1],
            &[],
            SimdGroups::Emulated32,
        )
    };
    let (strided, uniform) = (translated("keys_strided")?, translated("keys_uniform")?);
    anyhow::ensure!(strided.wgsl.contains("workgroupUniformLoad"));
    anyhow::ensure!(!uniform.wgsl.contains("workgroupUniformLoad"));
    let buffers = [&buf_q, &buf_k, &buf_out, &buf_n];
    let kernels: [Kernel; 2] = [
        uniform.kernel("uniform loop (plain)", params, &buffers),
        strided.kernel("loop from simd_gid (predicated)", params, &buffers),
    ];
    let mut rows = Vec::new();
    for kernel in &kernels {
        let ns = bench.time(kernel)?;
        let got: Vec<f32> = bytemuck::pod_collect_to_vec(&bench.read_bytes(&buf_out)?);
        check_exact(kernel.name, &got, &want)?;
        bench.clear(&buf_out)?;
        rows.push(Row {
            name: kernel.name,
            ns,
            // Keys per ns × 1000: millions per second.
            work: f64::from(groups) * f64::from(keys) * 1e3,
        });
    }
    print_rows(&rows, "Mkeys/s", 0);
    Ok(())
}
