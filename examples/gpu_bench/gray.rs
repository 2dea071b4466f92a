//! 8-bit data: RGBA8 pixels (`uchar4`) to 8-bit luma (`uchar`) with
//! integer weights, checked exactly. msl2wgsl holds 8-bit buffers as u32
//! word views: `grayscale` (one pixel and one byte store per thread)
//! becomes a quad exchange whose first lane stores the whole word (the
//! harness translates with native SIMD groups, so subgroups may be used:
//! `lower/metal/byte_stores.rs`), an atomic AND/OR pair per byte without
//! subgroups; `grayscale4` (four pixels per
//! thread, one `uchar4` store) is the same algorithm as the hand-written
//! WGSL, which has no byte stores and so packs four lumas into a `u32`.
//! `grayscale` has a twin of its own algorithm too: one pixel per thread,
//! the four lumas of a quad gathered by `quadBroadcast` and stored as one
//! plain `u32` by the quad's first lane, written knowing what the
//! translator must check at run time (that the quad holds four
//! neighbouring, active pixels of one word; else it falls back to atomics,
//! so its words are `atomic<u32>`).
//! Bandwidth counts 4 bytes read and 1 byte written per pixel.

use super::harness::{check_exact, grid, print_rows, translate, Bench, Kernel, Row};

/// The luma both hand-written kernels use (the MSL's `luma`).
const LUMA_WGSL: &str = "
fn luma(p: u32) -> u32 {
    let r = p & 0xffu;
    let g = (p >> 8u) & 0xffu;
    let b = (p >> 16u) & 0xffu;
    return (77u * r + 150u * g + 29u * b + 128u) >> 8u;
}
";

const HAND_WGSL: &str = "
struct Size { quads: u32, rows: u32 }
@group(0) @binding(0) var<storage, read> rgba: array<u32>;
@group(0) @binding(1) var<storage, read_write> gray: array<u32>;
@group(0) @binding(2) var<uniform> size: Size;
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= size.quads || gid.y >= size.rows) { return; }
    let q = gid.y * size.quads + gid.x;
    let p = q * 4u;
    gray[q] = luma(rgba[p]) | (luma(rgba[p + 1u]) << 8u)
        | (luma(rgba[p + 2u]) << 16u) | (luma(rgba[p + 3u]) << 24u);
}";

/// One pixel per thread, the quad's lumas combined into one word (the
/// `grayscale` algorithm, hand-written): a 16-wide workgroup row holds four
/// whole quads of neighbouring pixels, and subgroups are made of
/// consecutive invocations, so each quad is four pixels of one word.
/// (Tint would need `enable subgroups;`, which naga 30 refuses.)
const HAND_WGSL_QUAD: &str = "
@group(0) @binding(0) var<storage, read> rgba: array<u32>;
@group(0) @binding(1) var<storage, read_write> gray: array<u32>;
@group(0) @binding(2) var<uniform> width: u32;
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * width + gid.x;
    let v = luma(rgba[i]);
    let word = quadBroadcast(v, 0u) | (quadBroadcast(v, 1u) << 8u)
        | (quadBroadcast(v, 2u) << 16u) | (quadBroadcast(v, 3u) << 24u);
    if ((i & 3u) == 0u) {
        gray[i >> 2u] = word;
    }
}";

/// The CPU conversion.
fn reference(rgba: &[u8]) -> Vec<u8> {
    rgba.chunks_exact(4)
        .map(|p| {
            let [r, g, b] = [p[0], p[1], p[2]].map(u32::from);
            ((77 * r + 150 * g + 29 * b + 128) >> 8) as u8
        })
        .collect()
}

/// Times the conversion of a `w` × `h` image (`w` a multiple of 4).
pub fn run(bench: &Bench, w: u32, h: u32) -> anyhow::Result<()> {
    anyhow::ensure!(w.is_multiple_of(4), "image width: a multiple of 4");
    let pixels = u64::from(w) * u64::from(h);
    println!(
        "\nRGBA8 to 8-bit gray: {w}x{h} ({:.1} MiB in, {:.1} MiB out)",
        (pixels * 4) as f64 / 1048576.0,
        pixels as f64 / 1048576.0
    );
    let source = include_str!("../../fixtures/bench/grayscale.metal");
    let one = translate("grayscale.metal", source, "grayscale", [16, 16, 1], &[])?;
    let four = translate("grayscale.metal", source, "grayscale4", [16, 16, 1], &[])?;
    let image: Vec<u8> = (0..pixels * 4)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let want = reference(&image);
    let rgba = bench.input(&image);
    let width = bench.input(bytemuck::bytes_of(&w));
    let size = bench.input(bytemuck::cast_slice(&[w / 4, h]));
    let gray = bench.output(pixels);
    let quads = grid([w / 4, h, 1], [16, 16, 1]);
    let pixels_grid = grid([w, h, 1], [16, 16, 1]);
    let one_pixel = [
        one.kernel(
            "translated grayscale (1 px, uchar)",
            pixels_grid,
            &[&rgba, &gray, &width],
        ),
        Kernel {
            name: "hand-written WGSL (1 px, quad-combined u32 store)",
            wgsl: format!("{LUMA_WGSL}{HAND_WGSL_QUAD}"),
            entry: "main".into(),
            groups: pixels_grid.threadgroups,
            buffers: vec![(0, &rgba), (1, &gray), (2, &width)],
            dispatch: None,
            constants: Vec::new(),
        },
    ];
    let four_pixels = [
        four.kernel(
            "translated grayscale4 (4 px, uchar4)",
            quads,
            &[&rgba, &gray, &width],
        ),
        Kernel {
            name: "hand-written WGSL (4 px, u32 store)",
            wgsl: format!("{LUMA_WGSL}{HAND_WGSL}"),
            entry: "main".into(),
            groups: quads.threadgroups,
            buffers: vec![(0, &rgba), (1, &gray), (2, &size)],
            dispatch: None,
            constants: Vec::new(),
        },
    ];
    for kernels in [&one_pixel, &four_pixels] {
        let mut rows = Vec::new();
        for kernel in kernels {
            let ns = bench.time(kernel)?;
            check_exact(kernel.name, &bench.read_bytes(&gray)?, &want)?;
            bench.clear(&gray)?;
            rows.push(Row {
                name: kernel.name,
                ns,
                work: pixels as f64 * 5.0,
            });
        }
        print_rows(&rows, "GB/s", 1);
    }
    Ok(())
}
