//! `constant` buffers as `var<uniform>` against `var<storage, read>`: a
//! depthwise 1-D convolution whose 64 float4 weights every thread reads at
//! the same place (`fixtures/bench/conv_weights.metal`), translated both
//! ways (`UniformLayout::Wgsl`, the default, and `UniformLayout::None`),
//! next to the same loop hand-written with a uniform. Inputs and weights
//! are multiples of 1/8 in [-1, 1], so each of the 64 products is a
//! multiple of 1/64 and every partial sum is exact in `f32`: results are
//! compared exactly.

use super::harness::{check_exact, grid, print_rows, translate_options, Bench, Kernel, Row};
use msl2wgsl::{Options, UniformLayout};

const TAPS: usize = 64;

const HAND_WGSL: &str = "
struct Weights { tap: array<vec4<f32>, 64> }
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> k: Weights;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = id.x + id.y * n.x * 256u;
    if (i >= arrayLength(&y)) { return; }
    var acc = vec4<f32>(0.0);
    for (var t = 0u; t < 64u; t++) {
        acc = fma(x[i + t], k.tap[t], acc);
    }
    y[i] = acc;
}";

/// `count` multiples of 1/8 in [-1, 1].
fn eighths(count: usize, seed: u32) -> Vec<f32> {
    (0..count as u32)
        .map(|i| (i.wrapping_mul(2654435761).wrapping_add(seed) >> 16) % 17)
        .map(|v| (v as f32 - 8.0) / 8.0)
        .collect()
}

/// The CPU convolution, channel by channel.
fn reference(x: &[f32], w: &[f32], outputs: usize) -> Vec<f32> {
    let mut y = vec![0.0f32; outputs * 4];
    for (i, out) in y.chunks_exact_mut(4).enumerate() {
        for t in 0..TAPS {
            for (c, o) in out.iter_mut().enumerate() {
                *o += x[(i + t) * 4 + c] * w[t * 4 + c];
            }
        }
    }
    y
}

/// Times the convolution producing `outputs` float4s (at most 65535 × 256).
pub fn run(bench: &Bench, outputs: u32) -> anyhow::Result<()> {
    println!("\nconstant weights: {outputs} float4 outputs, {TAPS} taps");
    let source = include_str!("../../fixtures/bench/conv_weights.metal");
    let translated = |layout| {
        let options = Options {
            uniform_layout: layout,
            ..Options::default()
        };
        translate_options(
            "conv_weights.metal",
            source,
            "conv_weights",
            [256, 1, 1],
            options,
        )
    };
    let (uniform, storage) = (
        translated(UniformLayout::Wgsl)?,
        translated(UniformLayout::None)?,
    );
    anyhow::ensure!(
        uniform.wgsl.contains("var<uniform> k") && !storage.wgsl.contains("var<uniform> k"),
        "the two translations should bind the weights as uniform and as storage"
    );
    let n = outputs as usize;
    let x = eighths((n + TAPS) * 4, 3);
    let w = eighths(TAPS * 4, 11);
    let want = reference(&x, &w, n);
    let (buf_x, buf_w) = (
        bench.input(bytemuck::cast_slice(&x)),
        bench.input(bytemuck::cast_slice(&w)),
    );
    let buf_y = bench.output(u64::from(outputs) * 16);
    let params = grid([outputs, 1, 1], [256, 1, 1]);
    let kernels = [
        uniform.kernel(
            "translated, constant as var<uniform>",
            params,
            &[&buf_x, &buf_y, &buf_w],
        ),
        storage.kernel(
            "translated, constant as var<storage>",
            params,
            &[&buf_x, &buf_y, &buf_w],
        ),
        Kernel {
            name: "hand-written WGSL, var<uniform>",
            wgsl: HAND_WGSL.into(),
            entry: "main".into(),
            groups: params.threadgroups,
            buffers: vec![(0, &buf_x), (1, &buf_y), (2, &buf_w)],
            dispatch: None,
            constants: Vec::new(),
        },
    ];
    let mut rows = Vec::new();
    for kernel in &kernels {
        let ns = bench.time(kernel)?;
        check_exact(kernel.name, &bench.read_f32(&buf_y)?, &want)?;
        bench.clear(&buf_y)?;
        rows.push(Row {
            name: kernel.name,
            ns,
            work: 2.0 * 4.0 * TAPS as f64 * f64::from(outputs),
        });
    }
    print_rows(&rows, "GFLOP/s", 2);
    Ok(())
}
