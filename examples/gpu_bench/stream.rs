//! The stream kernel: Apple's `add_arrays` translated by msl2wgsl (one
//! float per thread, Metal's ragged-grid guard and dispatch uniform
//! included), the same add hand-written in WGSL (one `f32` per thread), and
//! the best hand-written stream add (`vec4<f32>` per thread) with its
//! translated twin (`add_arrays4`, one `float4` per thread). Bandwidth
//! counts the bytes the algorithm must move: two reads and one write per
//! element.

use super::harness::{grid, print_rows, translate, Bench, Kernel, Row};

const SCALAR_WGSL: &str = "
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = id.x + id.y * n.x * 256u;
    if (i < arrayLength(&c)) { c[i] = a[i] + b[i]; }
}";

const VEC4_WGSL: &str = "
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = id.x + id.y * n.x * 256u;
    if (i < arrayLength(&c)) { c[i] = a[i] + b[i]; }
}";

/// Workgroups of 256 covering `threads` on a 2-D grid (one dimension holds
/// at most 65535).
fn split(threads: u32) -> [u32; 3] {
    let groups = threads.div_ceil(256);
    [groups.min(65535), groups.div_ceil(65535), 1]
}

/// Times `c = a + b` over `elements` floats (a multiple of 4; at most
/// 65535 × 256 for the 1-D translated kernel).
pub fn run(bench: &Bench, elements: u32) -> anyhow::Result<()> {
    anyhow::ensure!(
        elements.is_multiple_of(4),
        "ELEMENTS must be a multiple of 4"
    );
    let source = include_str!("../../fixtures/add_arrays.metal");
    let t = translate("add_arrays.metal", source, "add_arrays", [256, 1, 1], &[])?;
    let source4 = include_str!("../../fixtures/bench/add_arrays4.metal");
    let t4 = translate(
        "add_arrays4.metal",
        source4,
        "add_arrays4",
        [256, 1, 1],
        &[],
    )?;
    let bytes = u64::from(elements) * 4;
    let a: Vec<f32> = (0..elements).map(|i| (i % 1024) as f32).collect();
    let (buf_a, buf_b) = (
        bench.input(bytemuck::cast_slice(&a)),
        bench.input(bytemuck::cast_slice(&a)),
    );
    let buf_c = bench.output(bytes);
    let hand = |name, wgsl: &str, threads| Kernel {
        name,
        wgsl: wgsl.into(),
        entry: "main".into(),
        groups: split(threads),
        buffers: vec![(0, &buf_a), (1, &buf_b), (2, &buf_c)],
        dispatch: None,
        constants: Vec::new(),
    };
    let kernels = [
        t.kernel(
            "translated add_arrays (f32/thread)",
            grid([elements, 1, 1], [256, 1, 1]),
            &[&buf_a, &buf_b, &buf_c],
        ),
        hand("hand-written WGSL (f32/thread)", SCALAR_WGSL, elements),
        t4.kernel(
            "translated add_arrays4 (float4/thread)",
            grid([elements / 4, 1, 1], [256, 1, 1]),
            &[&buf_a, &buf_b, &buf_c],
        ),
        hand("hand-written WGSL (vec4/thread)", VEC4_WGSL, elements / 4),
    ];
    println!(
        "{elements} elements ({} MiB per buffer), median of {} dispatches",
        bytes >> 20,
        bench.iterations
    );
    let mut rows = Vec::new();
    for kernel in &kernels {
        let ns = bench.time(kernel)?;
        let out = bench.read_f32(&buf_c)?;
        let wrong = (0..a.len()).filter(|&i| out[i] != 2.0 * a[i]).count();
        anyhow::ensure!(wrong == 0, "{}: {wrong} wrong results", kernel.name);
        rows.push(Row {
            name: kernel.name,
            ns,
            work: (3 * bytes) as f64,
        });
        bench.clear(&buf_c)?;
    }
    print_rows(&rows, "GB/s", 1);
    Ok(())
}
