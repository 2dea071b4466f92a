//! Tiled matrix multiply C = A × B of n × n row-major `f32` matrices with
//! 16 × 16 tiles of A and B in threadgroup memory, one element of C per
//! thread. Checked exactly against a CPU product: the entries are
//! multiples of 1/8 in [-1, 1], so every product is a multiple of 1/64 and
//! every partial sum (below 2^24 / 64 in magnitude for n < 2^18) is exact
//! in `f32` whatever the order or fusing. GFLOP/s counts 2n³ operations.

use super::harness::{check_exact, grid, print_rows, translate, Bench, Kernel, Row};

const HAND_WGSL: &str = "
const TILE: u32 = 16u;
struct Dims { m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;
var<workgroup> a_tile: array<array<f32, TILE>, TILE>;
var<workgroup> b_tile: array<array<f32, TILE>, TILE>;
@compute @workgroup_size(TILE, TILE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    var acc = 0.0;
    for (var t = 0u; t < dims.k; t += TILE) {
        let ak = t + lid.x;
        let bk = t + lid.y;
        var av = 0.0;
        if (row < dims.m && ak < dims.k) { av = a[row * dims.k + ak]; }
        var bv = 0.0;
        if (bk < dims.k && col < dims.n) { bv = b[bk * dims.n + col]; }
        a_tile[lid.y][lid.x] = av;
        b_tile[lid.y][lid.x] = bv;
        workgroupBarrier();
        for (var k = 0u; k < TILE; k++) {
            acc = fma(a_tile[lid.y][k], b_tile[k][lid.x], acc);
        }
        workgroupBarrier();
    }
    if (row < dims.m && col < dims.n) { c[row * dims.n + col] = acc; }
}";

/// A deterministic n × n matrix of multiples of 1/8 in [-1, 1].
fn matrix(n: u32, seed: u32) -> Vec<f32> {
    (0..n * n)
        .map(|i| (i.wrapping_mul(2654435761).wrapping_add(seed) >> 16) % 17)
        .map(|v| (v as f32 - 8.0) / 8.0)
        .collect()
}

/// The CPU product, row by row (i-k-j order, which vectorises).
fn reference(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; n * n];
    for (c_row, a_row) in c.chunks_exact_mut(n).zip(a.chunks_exact(n)) {
        for (&x, b_row) in a_row.iter().zip(b.chunks_exact(n)) {
            for (out, &y) in c_row.iter_mut().zip(b_row) {
                *out += x * y;
            }
        }
    }
    c
}

/// Times the product of two `n` × `n` matrices, with the translated
/// kernel's WGSL edited by hand in each `.wgsl` file of `variants` (entry
/// `matmul_tiled`, the translated bindings) after the two kernels: how one
/// finds what part of the translation costs.
pub fn run(bench: &Bench, n: u32, variants: Option<&std::path::Path>) -> anyhow::Result<()> {
    println!("\nmatrix multiply: {n}x{n} f32, 16x16 tiles");
    let source = include_str!("../../fixtures/bench/matmul_tiled.metal");
    let t = translate(
        "matmul_tiled.metal",
        source,
        "matmul_tiled",
        [16, 16, 1],
        &[],
    )?;
    let (a, b) = (matrix(n, 1), matrix(n, 7));
    let want = reference(&a, &b, n as usize);
    let (buf_a, buf_b) = (
        bench.input(bytemuck::cast_slice(&a)),
        bench.input(bytemuck::cast_slice(&b)),
    );
    let dims = bench.input(bytemuck::cast_slice(&[n, n, n, 0]));
    let buf_c = bench.output(u64::from(n * n) * 4);
    let params = grid([n, n, 1], [16, 16, 1]);
    let mut edited = Vec::new();
    if let Some(dir) = variants {
        let mut files: Vec<_> = std::fs::read_dir(dir)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        files.retain(|p| p.extension().is_some_and(|e| e == "wgsl"));
        files.sort();
        for file in files {
            let name = file.file_stem().unwrap_or_default().to_string_lossy();
            // Row names are `&'static`; a few file names live until exit.
            let name: &'static str = Box::leak(name.into_owned().into_boxed_str());
            edited.push((name, std::fs::read_to_string(&file)?));
        }
    }
    let mut kernels = vec![
        t.kernel(
            "translated matmul_tiled",
            params,
            &[&buf_a, &buf_b, &buf_c, &dims],
        ),
        Kernel {
            name: "hand-written WGSL (16x16 tiles)",
            wgsl: HAND_WGSL.into(),
            entry: "main".into(),
            groups: params.threadgroups,
            buffers: vec![(0, &buf_a), (1, &buf_b), (2, &buf_c), (3, &dims)],
            dispatch: None,
            constants: Vec::new(),
        },
    ];
    for (name, wgsl) in edited {
        let dispatch = wgsl.contains("metal_dispatch");
        // Hand-edited variants may have dropped the overrides.
        let constants = t
            .constants(&params)
            .into_iter()
            .filter(|(name, _)| wgsl.contains(&format!("override {name}")))
            .collect();
        kernels.push(Kernel {
            name,
            wgsl,
            entry: "matmul_tiled".into(),
            groups: params.threadgroups,
            buffers: vec![(0, &buf_a), (1, &buf_b), (2, &buf_c), (3, &dims)],
            dispatch: dispatch.then_some((192, params)),
            constants,
        });
    }
    let mut rows = Vec::new();
    for kernel in &kernels {
        let ns = bench.time(kernel)?;
        check_exact(kernel.name, &bench.read_f32(&buf_c)?, &want)?;
        bench.clear(&buf_c)?;
        rows.push(Row {
            name: kernel.name,
            ns,
            work: 2.0 * f64::from(n).powi(3),
        });
    }
    print_rows(&rows, "GFLOP/s", 1);
    Ok(())
}
