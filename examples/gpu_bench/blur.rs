//! 3 × 3 box blur of a row-major `f32` image with clamp-to-edge borders,
//! one output pixel per thread in 16 × 16 threadgroups. Checked against a
//! CPU blur summing in the same order: pixels lie in [0, 1], so nine
//! additions and the scale by 1/9 round by at most a few units in the last
//! place; the tolerance is 2e-6 (absolute). Bandwidth counts each pixel
//! read once and written once (8 bytes), what caches make of the 9 taps.

use super::harness::{check_f32, grid, print_rows, translate, Bench, Kernel, Row};

const HAND_WGSL: &str = "
struct Size { w: u32, h: u32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> size: Size;
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= size.w || gid.y >= size.h) { return; }
    let w = i32(size.w);
    let h = i32(size.h);
    var acc = 0.0;
    for (var dy = -1; dy <= 1; dy++) {
        let y = clamp(i32(gid.y) + dy, 0, h - 1);
        for (var dx = -1; dx <= 1; dx++) {
            let x = clamp(i32(gid.x) + dx, 0, w - 1);
            acc += src[u32(y * w + x)];
        }
    }
    dst[gid.y * size.w + gid.x] = acc * (1.0 / 9.0);
}";

/// The CPU blur, summing taps in the kernels' order.
fn reference(src: &[f32], w: usize, h: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            let mut acc = 0.0f32;
            for sy in [y.saturating_sub(1), y, (y + 1).min(h - 1)] {
                for sx in [x.saturating_sub(1), x, (x + 1).min(w - 1)] {
                    acc += src[sy * w + sx];
                }
            }
            out[y * w + x] = acc * (1.0 / 9.0);
        }
    }
    out
}

/// Times the blur of a `w` × `h` image.
pub fn run(bench: &Bench, w: u32, h: u32) -> anyhow::Result<()> {
    let pixels = u64::from(w) * u64::from(h);
    println!(
        "\n3x3 box blur: {w}x{h} f32 image ({:.1} MiB)",
        (pixels * 4) as f64 / 1048576.0
    );
    let source = include_str!("../../fixtures/bench/box_blur.metal");
    let t = translate("box_blur.metal", source, "box_blur", [16, 16, 1], &[])?;
    let image: Vec<f32> = (0..pixels)
        .map(|i| ((i * 7919) % 1024) as f32 / 1023.0)
        .collect();
    let want = reference(&image, w as usize, h as usize);
    let src = bench.input(bytemuck::cast_slice(&image));
    let size = bench.input(bytemuck::cast_slice(&[w, h]));
    let dst = bench.output(pixels * 4);
    let params = grid([w, h, 1], [16, 16, 1]);
    let kernels = [
        t.kernel("translated box_blur", params, &[&src, &dst, &size]),
        Kernel {
            name: "hand-written WGSL (3x3 box)",
            wgsl: HAND_WGSL.into(),
            entry: "main".into(),
            groups: params.threadgroups,
            buffers: vec![(0, &src), (1, &dst), (2, &size)],
            dispatch: None,
            constants: Vec::new(),
        },
    ];
    let mut rows = Vec::new();
    for kernel in &kernels {
        let ns = bench.time(kernel)?;
        check_f32(kernel.name, &bench.read_f32(&dst)?, &want, 2e-6)?;
        bench.clear(&dst)?;
        rows.push(Row {
            name: kernel.name,
            ns,
            work: pixels as f64 * 8.0,
        });
    }
    print_rows(&rows, "GB/s", 1);
    Ok(())
}
