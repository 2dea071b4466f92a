//! SIMD-group matrices (`simdgroup_float8x8` and friends, MSL §6.7): GEMM
//! tiles against CPU matrix products, the load/store forms
//! (`elements_per_row`, `matrix_origin`, `transpose_matrix`), and
//! `thread_elements()` against the per-lane layout MLX and Philip Turner
//! document, on the adapter's GPU (lavapipe in CI).
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, f32s};
use msl2wgsl::runner::{run_kernel, Dispatch};
use msl2wgsl::{Options, SimdGroups};
use std::collections::BTreeMap;

const PRELUDE: &str =
    "#include <metal_stdlib>\n#include <metal_simdgroup_matrix>\nusing namespace metal;\n";

/// Runs `entry` of `body` with `buffers`; `None` without a GPU.
fn run(
    body: &str,
    entry: &str,
    options: &Options,
    dispatch: Dispatch,
    buffers: &[(u32, Vec<u8>)],
) -> Option<BTreeMap<u32, Vec<u8>>> {
    let gpu = common::gpu()?;
    let source = format!("{PRELUDE}{body}");
    let buffers: BTreeMap<u32, Vec<u8>> = buffers.iter().cloned().collect();
    let out = run_kernel(gpu, "m.metal", &source, options, entry, &dispatch, &buffers)
        .unwrap_or_else(|e| panic!("{entry}: {e}"));
    Some(out)
}

/// One SIMD group.
fn one_simd_group() -> Dispatch {
    Dispatch::Threadgroups {
        groups: [1, 1, 1],
        threadgroup: [32, 1, 1],
    }
}

/// Values that vary in sign and magnitude, deterministic.
fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(12345);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x % 2001) as f32 / 1000.0 - 1.0
        })
        .collect()
}

/// `a (m×k) * b (k×n) + c`, row-major, in `f64`, with the bound on the
/// error of an `f32` evaluation with `k` roundings per element:
/// `k·ε·(Σ|a||b| + |c|)` (Higham's γ_k, first order).
fn matmul_reference(
    a: &[f32],
    b: &[f32],
    c: Option<&[f32]>,
    m: usize,
    n: usize,
    k: usize,
) -> Vec<(f64, f64)> {
    let eps = f64::from(f32::EPSILON);
    (0..m * n)
        .map(|i| {
            let (r, col) = (i / n, i % n);
            let init = c.map_or(0.0, |c| f64::from(c[i]));
            let mut exact = init;
            let mut magnitude = init.abs();
            for j in 0..k {
                let p = f64::from(a[r * k + j]) * f64::from(b[j * n + col]);
                exact += p;
                magnitude += p.abs();
            }
            (
                exact,
                (k as f64 + 1.0) * eps * magnitude + f64::from(f32::MIN_POSITIVE),
            )
        })
        .collect()
}

fn assert_close(got: &[f32], want: &[(f64, f64)], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, (w, bound))) in got.iter().zip(want).enumerate() {
        assert!(
            (f64::from(*g) - w).abs() <= *bound,
            "{what}: element {i}: got {g}, want {w} (bound {bound})"
        );
    }
}

const GEMM8: &str = r#"
kernel void gemm8(device const float* a [[buffer(0)]],
                  device const float* b [[buffer(1)]],
                  device const float* c [[buffer(2)]],
                  device float* d [[buffer(3)]],
                  device float* e [[buffer(4)]]) {
    simdgroup_float8x8 ma, mb, mc, md;
    simdgroup_load(ma, a);
    simdgroup_load(mb, b, 8);
    simdgroup_load(mc, c, 8, ulong2(0, 0), false);
    simdgroup_multiply_accumulate(md, ma, mb, mc);
    simdgroup_store(md, d, 8);
    simdgroup_matrix<float, 8, 8> me;
    simdgroup_multiply(me, ma, mb);
    simdgroup_store(me, e);
}
"#;

#[test]
fn an_8x8_tile_is_a_times_b_plus_c() {
    let (a, b, c) = (values(64, 1), values(64, 2), values(64, 3));
    let Some(out) = run(
        GEMM8,
        "gemm8",
        &Options::default(),
        one_simd_group(),
        &[
            (0, f32_bytes(&a)),
            (1, f32_bytes(&b)),
            (2, f32_bytes(&c)),
            (3, vec![0; 256]),
            (4, vec![0; 256]),
        ],
    ) else {
        return;
    };
    assert_close(
        &f32s(&out[&3]),
        &matmul_reference(&a, &b, Some(&c), 8, 8, 8),
        "a*b+c",
    );
    assert_close(
        &f32s(&out[&4]),
        &matmul_reference(&a, &b, None, 8, 8, 8),
        "a*b",
    );
}

#[test]
fn matrices_need_no_subgroups_without_thread_elements() {
    // Native subgroups of a width other than 32 (the runner passes
    // lavapipe's 8 as `Options::subgroup_width`): every thread holds the
    // whole matrix, which gives Metal's result at any width, and the WGSL
    // uses no subgroup operation at all.
    let options = Options {
        simd: SimdGroups::Native,
        ..Options::default()
    };
    let wgsl = msl2wgsl::Library::from_source("m.metal", &format!("{PRELUDE}{GEMM8}"), &options)
        .unwrap_or_else(|f| panic!("{}", f.render()))
        .wgsl()
        .to_string();
    assert!(!wgsl.contains("subgroup"), "{wgsl}");
    let (a, b, c) = (values(64, 8), values(64, 9), values(64, 10));
    let Some(out) = run(
        GEMM8,
        "gemm8",
        &options,
        one_simd_group(),
        &[
            (0, f32_bytes(&a)),
            (1, f32_bytes(&b)),
            (2, f32_bytes(&c)),
            (3, vec![0; 256]),
            (4, vec![0; 256]),
        ],
    ) else {
        return;
    };
    assert_close(
        &f32s(&out[&3]),
        &matmul_reference(&a, &b, Some(&c), 8, 8, 8),
        "native",
    );
}

/// `C = A * B` for 64×64 by 32 matrices, 32×32 per threadgroup of 4 SIMD
/// groups, each SIMD group a strip of 8 rows; the K-slices of A and B are
/// staged in threadgroup memory.
const GEMM_TILED: &str = r#"
constant uint M = 64, N = 64, K = 32;
kernel void gemm_tiled(device const float* A [[buffer(0)]],
                       device const float* B [[buffer(1)]],
                       device float* C [[buffer(2)]],
                       uint2 group [[threadgroup_position_in_grid]],
                       uint t [[thread_index_in_threadgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float As[32 * 8];
    threadgroup float Bs[8 * 32];
    uint row0 = group.y * 32, col0 = group.x * 32;
    simdgroup_float8x8 acc[4];
    for (int j = 0; j < 4; ++j) {
        acc[j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    }
    for (uint k0 = 0; k0 < K; k0 += 8) {
        for (uint i = t; i < 256; i += 128) {
            As[i] = A[(row0 + i / 8) * K + k0 + i % 8];
            Bs[i] = B[(k0 + i / 32) * N + col0 + i % 32];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        simdgroup_float8x8 a;
        simdgroup_load(a, As, 8, ulong2(0, sg * 8));
        for (int j = 0; j < 4; ++j) {
            simdgroup_float8x8 b;
            simdgroup_load(b, &Bs[0], 32, ulong2(j * 8, 0));
            simdgroup_multiply_accumulate(acc[j], a, b, acc[j]);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    for (int j = 0; j < 4; ++j) {
        simdgroup_store(acc[j], C + (row0 + sg * 8) * N + col0 + j * 8, N);
    }
}
"#;

#[test]
fn a_tiled_gemm_through_threadgroup_memory_matches_the_cpu() {
    let (m, n, k) = (64, 64, 32);
    let (a, b) = (values(m * k, 4), values(k * n, 5));
    let Some(out) = run(
        GEMM_TILED,
        "gemm_tiled",
        &Options::default(),
        Dispatch::Threadgroups {
            groups: [2, 2, 1],
            threadgroup: [128, 1, 1],
        },
        &[
            (0, f32_bytes(&a)),
            (1, f32_bytes(&b)),
            (2, vec![0; m * n * 4]),
        ],
    ) else {
        return;
    };
    assert_close(
        &f32s(&out[&2]),
        &matmul_reference(&a, &b, None, m, n, k),
        "C",
    );
}

const TRANSFERS: &str = r#"
kernel void transfers(device const float* src [[buffer(0)]],
                      device float* plain [[buffer(1)]],
                      device float* transposed [[buffer(2)]],
                      device float* stored_transposed [[buffer(3)]],
                      threadgroup float* scratch [[threadgroup(0)]]) {
    simdgroup_float8x8 m;
    // An 8×8 block of the 16-wide source at column 4, row 8.
    simdgroup_load(m, src, 16, ulong2(4, 8));
    simdgroup_store(m, plain, 8);
    // Read column-major: element (r, c) at src[(2 + c) * 16 + 5 + r].
    simdgroup_load(m, src, 16, ulong2(2, 5), true);
    simdgroup_store(m, transposed, 8);
    // Through threadgroup memory, stored transposed at an origin.
    simdgroup_load(m, src, 16);
    simdgroup_store(m, scratch, 16, ulong2(8, 1), true);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_load(m, scratch + 8 * 16 + 1, 16, ulong2(0, 0));
    simdgroup_store(m, stored_transposed, 8);
}
"#;

#[test]
fn elements_per_row_origin_and_transpose_address_the_source() {
    let src: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let options = Options {
        threadgroup_memory: [(0, 16 * 16 * 4)].into_iter().collect(),
        ..Options::default()
    };
    let Some(out) = run(
        TRANSFERS,
        "transfers",
        &options,
        one_simd_group(),
        &[
            (0, f32_bytes(&src)),
            (1, vec![0; 256]),
            (2, vec![0; 256]),
            (3, vec![0; 256]),
        ],
    ) else {
        return;
    };
    let at = |r: usize, c: usize| src[r * 16 + c];
    let plain: Vec<f32> = (0..64).map(|i| at(8 + i / 8, 4 + i % 8)).collect();
    let transposed: Vec<f32> = (0..64).map(|i| at(2 + i % 8, 5 + i / 8)).collect();
    // Stored transposed at origin (x 8, y 1): element (r, c) went to
    // scratch[(8 + c) * 16 + 1 + r], which reads back from row 8, column 1
    // as the transpose.
    let stored: Vec<f32> = (0..64).map(|i| at(i % 8, i / 8)).collect();
    assert_eq!(f32s(&out[&1]), plain, "origin");
    assert_eq!(f32s(&out[&2]), transposed, "transposed load");
    assert_eq!(f32s(&out[&3]), stored, "transposed store");
}

/// Row and first column of lane `lane`'s two elements, as MLX's
/// `BaseMMAFrag::get_coord` and Philip Turner's `morton_order` describe
/// Apple's layout.
fn documented_layout(lane: usize) -> (usize, usize) {
    let quad = lane / 4;
    let row = (quad & 4) + (lane / 2) % 4;
    let col = (quad & 2) * 2 + (lane % 2) * 2;
    (row, col)
}

const ELEMENTS: &str = r#"
kernel void elements(device const float* src [[buffer(0)]],
                     device float2* mine [[buffer(1)]],
                     device float* rebuilt [[buffer(2)]],
                     uint lane [[thread_index_in_simdgroup]]) {
    simdgroup_float8x8 m;
    simdgroup_load(m, src);
    mine[lane] = m.thread_elements();
    // Each lane rewrites its own two elements; the product with the
    // identity shows the matrix they make together.
    simdgroup_float8x8 w = simdgroup_float8x8(0.0f);
    w.thread_elements()[0] = float(lane * 2);
    w.thread_elements()[1] = float(lane * 2 + 1);
    simdgroup_float8x8 r;
    simdgroup_multiply(r, w, simdgroup_float8x8(1.0f));
    simdgroup_store(r, rebuilt);
}
"#;

#[test]
fn thread_elements_follow_apples_lane_layout() {
    let src: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let options = Options {
        simd: SimdGroups::Emulated32,
        ..Options::default()
    };
    let Some(out) = run(
        ELEMENTS,
        "elements",
        &options,
        one_simd_group(),
        &[(0, f32_bytes(&src)), (1, vec![0; 256]), (2, vec![0; 256])],
    ) else {
        return;
    };
    let mine = f32s(&out[&1]);
    let mut rebuilt = vec![0f32; 64];
    for lane in 0..32 {
        let (row, col) = documented_layout(lane);
        let want = [src[row * 8 + col], src[row * 8 + col + 1]];
        assert_eq!(&mine[lane * 2..lane * 2 + 2], &want, "lane {lane}");
        rebuilt[row * 8 + col] = (lane * 2) as f32;
        rebuilt[row * 8 + col + 1] = (lane * 2 + 1) as f32;
    }
    assert_eq!(
        f32s(&out[&2]),
        rebuilt,
        "matrix written through thread_elements"
    );
}

const HALF_GEMM: &str = r#"
kernel void half_gemm(device const half* a [[buffer(0)]],
                      device const half* b [[buffer(1)]],
                      device half* d [[buffer(2)]]) {
    simdgroup_half8x8 ma, mb, md;
    simdgroup_load(ma, a);
    simdgroup_load(mb, b);
    simdgroup_multiply_accumulate(md, ma, mb, make_filled_simdgroup_matrix<half, 8, 8>(0.5h));
    simdgroup_store(md, d);
}
"#;

#[test]
fn half_matrices_hold_halves() {
    // Small integers and halves: every product and sum is exact in half.
    let a: Vec<f32> = (0..64).map(|i| ((i * 7) % 9) as f32 - 4.0).collect();
    let b: Vec<f32> = (0..64).map(|i| ((i * 5) % 7) as f32 * 0.5 - 1.5).collect();
    let halves = |v: &[f32]| -> Vec<u8> {
        v.iter()
            .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
            .collect()
    };
    let Some(out) = run(
        HALF_GEMM,
        "half_gemm",
        &Options::default(),
        one_simd_group(),
        &[(0, halves(&a)), (1, halves(&b)), (2, vec![0; 128])],
    ) else {
        return;
    };
    let got: Vec<f32> = out[&2]
        .chunks_exact(2)
        .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
        .collect();
    let c = vec![0.5f32; 64];
    let want: Vec<f32> = matmul_reference(&a, &b, Some(&c), 8, 8, 8)
        .iter()
        .map(|(w, _)| *w as f32)
        .collect();
    assert_eq!(got, want);
}

#[test]
fn simdgroup_matrix_types_are_checked() {
    // Refused where an object of it is made: a class template may name
    // one in a `typedef` its instance never uses (`tests/steel_forms.rs`).
    common::source::assert_error(
        "kernel void k() { simdgroup_matrix<int, 8, 8> m; }\n",
        "m;",
        0,
        "`simdgroup_matrix` holds `float`, `half` or `bfloat`, not `int`",
    );
    common::source::assert_error(
        "kernel void k() { simdgroup_matrix<float, 4, 4> m; }\n",
        "simdgroup_matrix",
        0,
        "`simdgroup_matrix<T, 4, 4>`: Metal's SIMD-group matrices are 8×8",
    );
    common::source::assert_error(
        "kernel void k(device half* p [[buffer(0)]]) { simdgroup_float8x8 m; simdgroup_load(m, p); }\n",
        "p);",
        0,
        "`simdgroup_load` of a `float` matrix takes a `const device float*` or `const threadgroup float*`, not `device half*`",
    );
    common::source::assert_error(
        "kernel void k() { threadgroup float x; simdgroup_float8x8 m; simdgroup_load(m, &x); }\n",
        "&x",
        0,
        "`simdgroup_load` needs a pointer into a buffer or an array here",
    );
    common::source::assert_error(
        "kernel void k() { simdgroup_float8x8 m; m.elements(); }\n",
        "elements",
        0,
        "`simdgroup_matrix<float, 8, 8>` has no member function `elements`",
    );
}

const BFLOAT_GEMM: &str = r#"
kernel void bfloat_gemm(device const bfloat* a [[buffer(0)]],
                        device const bfloat* b [[buffer(1)]],
                        device bfloat* d [[buffer(2)]],
                        device float* f [[buffer(3)]]) {
    simdgroup_bfloat8x8 ma, mb, md;
    simdgroup_load(ma, a);
    simdgroup_load(mb, b);
    simdgroup_multiply_accumulate(md, ma, mb, simdgroup_bfloat8x8(bfloat(2.0f)));
    simdgroup_store(md, d);
    // Rounded to bfloat once per element: 1 + 2^-9 is not a bfloat.
    simdgroup_bfloat8x8 one = make_filled_simdgroup_matrix<bfloat, 8, 8>(bfloat(1.0f));
    simdgroup_bfloat8x8 tiny = simdgroup_bfloat8x8(bfloat(1.0f / 4096.0f));
    simdgroup_multiply_accumulate(md, tiny, one, one);
    f[0] = float(md.thread_elements()[0]);
}
"#;

#[test]
fn bfloat_matrices_round_to_bfloat() {
    let a: Vec<f32> = (0..64).map(|i| ((i * 7) % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..64).map(|i| ((i * 3) % 5) as f32 - 2.0).collect();
    let bfloats = |v: &[f32]| -> Vec<u8> {
        v.iter()
            .flat_map(|x| half::bf16::from_f32(*x).to_le_bytes())
            .collect()
    };
    let Some(out) = run(
        BFLOAT_GEMM,
        "bfloat_gemm",
        &Options::default(),
        one_simd_group(),
        &[
            (0, bfloats(&a)),
            (1, bfloats(&b)),
            (2, vec![0; 128]),
            (3, vec![0; 4]),
        ],
    ) else {
        return;
    };
    let got: Vec<f32> = out[&2]
        .chunks_exact(2)
        .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
        .collect();
    // Small integers: every sum is exact in bfloat; the diagonal gets 2.
    let mut identity2 = vec![0f32; 64];
    for i in 0..8 {
        identity2[i * 9] = 2.0;
    }
    let want: Vec<f32> = matmul_reference(&a, &b, Some(&identity2), 8, 8, 8)
        .iter()
        .map(|(w, _)| *w as f32)
        .collect();
    assert_eq!(got, want);
    // Lane 0's first element: 1 + 1/4096 rounds to 1 in bfloat.
    assert_eq!(f32s(&out[&3]), vec![1.0]);
}

/// MLX's way: each lane loads its own two elements (at the documented
/// coordinates) into a `vec<T, 2>` fragment and writes it through
/// `reinterpret_cast<thread frag&>(m.thread_elements())`; helpers take the
/// matrices by reference; the result is read back per lane.
const FRAGMENTS: &str = r#"
typedef vec<float, 2> frag;

short2 coord(ushort lane) {
    short qid = lane / 4;
    short fm = (qid & 4) + ((lane / 2) % 4);
    short fn = (qid & 2) * 2 + (lane % 2) * 2;
    return short2(fn, fm);
}

template <typename T>
struct Fragment {
    simdgroup_matrix<T, 8, 8> m;
    void set(frag f) { reinterpret_cast<thread frag&>(m.thread_elements()) = f; }
};

void mma(thread simdgroup_float8x8& d, const thread simdgroup_float8x8& a,
         const thread simdgroup_float8x8& b) {
    simdgroup_multiply_accumulate(d, a, b, d);
}

kernel void fragments(device const float* a [[buffer(0)]],
                      device const float* b [[buffer(1)]],
                      device float* d [[buffer(2)]],
                      ushort lane [[thread_index_in_simdgroup]]) {
    short2 at = coord(lane);
    Fragment<float> fa, fb;
    fa.set(frag(a[at.y * 8 + at.x], a[at.y * 8 + at.x + 1]));
    fb.set(frag(b[at.y * 8 + at.x], b[at.y * 8 + at.x + 1]));
    simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    mma(acc, fa.m, fb.m);
    frag mine = reinterpret_cast<thread frag&>(acc.thread_elements());
    d[at.y * 8 + at.x] = mine.x;
    d[at.y * 8 + at.x + 1] = mine.y;
}
"#;

#[test]
fn fragments_written_per_lane_multiply_as_one_matrix() {
    let (a, b) = (values(64, 6), values(64, 7));
    let Some(out) = run(
        FRAGMENTS,
        "fragments",
        &Options::default(),
        one_simd_group(),
        &[(0, f32_bytes(&a)), (1, f32_bytes(&b)), (2, vec![0; 256])],
    ) else {
        return;
    };
    assert_close(
        &f32s(&out[&2]),
        &matmul_reference(&a, &b, None, 8, 8, 8),
        "fragments",
    );
}

/// Small integers in `lo..=hi`, deterministic: every product and sum of
/// the tests below is exact in `f32`, whatever the order or fusing.
fn integers(n: usize, seed: u32, lo: i32, hi: i32) -> Vec<f32> {
    values(n, seed)
        .iter()
        .map(|v| (lo + ((v + 1.0) * 1000.0) as i32 % (hi - lo + 1)) as f32)
        .collect()
}

/// `a (8×8) * b (8×8) + c`, row-major, exactly (integer inputs).
fn product(a: &[f32], b: &[f32], c: Option<&[f32]>) -> Vec<f32> {
    (0..64)
        .map(|i| {
            let (r, col) = (i / 8, i % 8);
            let init = c.map_or(0.0, |c| c[i]);
            (0..8).fold(init, |s, k| s + a[r * 8 + k] * b[k * 8 + col])
        })
        .collect()
}

fn transposed(m: &[f32]) -> Vec<f32> {
    (0..64).map(|i| m[(i % 8) * 8 + i / 8]).collect()
}

const CHAIN: &str = r#"
kernel void chain(device const float* a [[buffer(0)]],
                  device const float* b [[buffer(1)]],
                  device const float* c [[buffer(2)]],
                  device float* out [[buffer(3)]],
                  threadgroup float* scratch [[threadgroup(0)]],
                  uint lane [[thread_index_in_simdgroup]]) {
    simdgroup_float8x8 ma, mb, mc;
    // Columns 8 to 15 of the 8×16 `a`; `b` read transposed.
    simdgroup_load(ma, a, 16, ulong2(8, 0));
    simdgroup_load(mb, b, 8, ulong2(0, 0), true);
    simdgroup_load(mc, c);
    // Results that are also operands, one after another.
    simdgroup_multiply_accumulate(mc, ma, mb, mc);
    simdgroup_multiply(mc, mc, ma);
    simdgroup_multiply_accumulate(mc, ma, mc, mc);
    simdgroup_store(mc, out);
    // Stored transposed at an origin in threadgroup memory, read back
    // transposed from there: the matrix again.
    simdgroup_store(mc, scratch, 16, ulong2(1, 8), true);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 back;
    simdgroup_load(back, scratch, 16, ulong2(1, 8), true);
    simdgroup_store(back, out + 64);
    for (uint i = lane; i < 256; i += 32) {
        out[128 + i] = scratch[i];
    }
}
"#;

#[test]
fn chained_products_whose_results_are_operands() {
    // Non-symmetric integer matrices: a lane that took another lane's
    // share, or a row for a column, changes the result.
    let a = integers(128, 11, -3, 3);
    let (b, c) = (integers(64, 12, -3, 3), integers(64, 13, -3, 3));
    let options = Options {
        threadgroup_memory: [(0, 256 * 4)].into_iter().collect(),
        ..Options::default()
    };
    let Some(out) = run(
        CHAIN,
        "chain",
        &options,
        one_simd_group(),
        &[
            (0, f32_bytes(&a)),
            (1, f32_bytes(&b)),
            (2, f32_bytes(&c)),
            (3, vec![0; 384 * 4]),
        ],
    ) else {
        return;
    };
    let ma: Vec<f32> = (0..64).map(|i| a[(i / 8) * 16 + 8 + i % 8]).collect();
    let mb = transposed(&b);
    let step1 = product(&ma, &mb, Some(&c));
    let step2 = product(&step1, &ma, None);
    let step3 = product(&ma, &step2, Some(&step2));
    assert_ne!(step3, transposed(&step3), "a symmetric result shows less");
    let got = f32s(&out[&3]);
    assert_eq!(&got[..64], &step3[..], "the chain");
    assert_eq!(&got[64..128], &step3[..], "stored and loaded transposed");
    // Element (r, c) stored transposed at origin (x 1, y 8), 16 per row:
    // scratch[(1 + c) * 16 + 8 + r].
    for (i, v) in step3.iter().enumerate() {
        let (r, col) = (i / 8, i % 8);
        assert_eq!(
            got[128 + (1 + col) * 16 + 8 + r],
            *v,
            "element ({r}, {col})"
        );
    }
}

const LANE_WRITTEN: &str = r#"
kernel void lane_written(device const float* a [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         uint lane [[thread_index_in_simdgroup]]) {
    simdgroup_float8x8 x, y, r;
    simdgroup_load(y, a);
    // Each lane writes its own share of `x` before any product.
    x.thread_elements()[0] = float(int(lane) - 7);
    x.thread_elements()[1] = float(int(lane * 3 % 11) - 5);
    simdgroup_multiply(r, x, y);
    simdgroup_store(r, out);
    simdgroup_multiply_accumulate(r, y, x, simdgroup_float8x8(3.0f));
    simdgroup_store(r, out + 64);
    simdgroup_multiply(r, simdgroup_float8x8(2.0f), y);
    simdgroup_store(r, out + 128);
}
"#;

#[test]
fn matrices_written_through_thread_elements_multiply_on_either_side() {
    let y = integers(64, 14, -4, 4);
    let Some(out) = run(
        LANE_WRITTEN,
        "lane_written",
        &Options::default(),
        one_simd_group(),
        &[(0, f32_bytes(&y)), (1, vec![0; 192 * 4])],
    ) else {
        return;
    };
    let mut x = vec![0f32; 64];
    for lane in 0..32 {
        let (row, col) = documented_layout(lane);
        x[row * 8 + col] = lane as f32 - 7.0;
        x[row * 8 + col + 1] = (lane * 3 % 11) as f32 - 5.0;
    }
    let mut diagonal3 = vec![0f32; 64];
    for i in 0..8 {
        diagonal3[i * 9] = 3.0;
    }
    let got = f32s(&out[&1]);
    assert_eq!(&got[..64], &product(&x, &y, None)[..], "x * y");
    assert_eq!(
        &got[64..128],
        &product(&y, &x, Some(&diagonal3))[..],
        "y * x + 3I"
    );
    let twice: Vec<f32> = y.iter().map(|v| 2.0 * v).collect();
    assert_eq!(&got[128..], &twice[..], "2I * y");
}

/// Two SIMD groups; only the second multiplies, inside an `if` on the
/// SIMD-group index, as kernels that give SIMD groups different roles do.
const BRANCH: &str = r#"
kernel void branch(device const float* a [[buffer(0)]],
                   device const float* b [[buffer(1)]],
                   device float* out [[buffer(2)]],
                   uint sg [[simdgroup_index_in_threadgroup]]) {
    simdgroup_float8x8 ma, mb;
    simdgroup_load(ma, a + sg * 64);
    simdgroup_load(mb, b);
    simdgroup_float8x8 md = make_filled_simdgroup_matrix<float, 8, 8>(1.0f);
    if (sg == 1) {
        simdgroup_multiply_accumulate(md, ma, mb, md);
    }
    simdgroup_store(md, out + sg * 64);
}
"#;

#[test]
fn a_product_in_one_simd_groups_branch() {
    let (a, b) = (integers(128, 15, -3, 3), integers(64, 16, -3, 3));
    let options = Options {
        simd: SimdGroups::Emulated32,
        ..Options::default()
    };
    let Some(out) = run(
        BRANCH,
        "branch",
        &options,
        Dispatch::Threadgroups {
            groups: [1, 1, 1],
            threadgroup: [64, 1, 1],
        },
        &[
            (0, f32_bytes(&a)),
            (1, f32_bytes(&b)),
            (2, vec![0; 128 * 4]),
        ],
    ) else {
        return;
    };
    let got = f32s(&out[&2]);
    assert_eq!(&got[..64], &[1.0; 64][..], "the first SIMD group's ones");
    let ones = vec![1f32; 64];
    assert_eq!(&got[64..], &product(&a[64..], &b, Some(&ones))[..]);
}

#[test]
fn native_subgroups_hold_fragments_only_where_32_wide() {
    // The translation cannot see the adapter: with `--simd native`, a lane
    // holds its two elements only where the host says the subgroups are 32
    // wide; otherwise each thread holds whole matrices, right at any width
    // (`matrices_need_no_subgroups_without_thread_elements` runs that on
    // lavapipe's 8 lanes).
    let wgsl = |simd, subgroup_width| {
        let options = Options {
            simd,
            subgroup_width,
            target: msl2wgsl::Target::Wgpu,
            ..Options::default()
        };
        msl2wgsl::Library::from_source("m.metal", &format!("{PRELUDE}{GEMM8}"), &options)
            .unwrap_or_else(|f| panic!("{}", f.render()))
            .wgsl()
            .to_string()
    };
    let whole = "array<vec2<f32>, 32>";
    let native32 = wgsl(SimdGroups::Native, Some(32));
    assert!(native32.contains("subgroupShuffle"), "{native32}");
    assert!(!native32.contains(whole), "{native32}");
    for width in [None, Some(8), Some(64)] {
        let native = wgsl(SimdGroups::Native, width);
        assert!(native.contains(whole), "{width:?}: {native}");
        assert!(!native.contains("subgroup"), "{width:?}: {native}");
    }
    let emulated = wgsl(SimdGroups::Emulated32, Some(8));
    assert!(emulated.contains("metal_simd_exchange"), "{emulated}");
    assert!(!emulated.contains(whole), "{emulated}");
}

#[test]
fn matrices_in_vertex_and_fragment_functions_are_refused() {
    // A lane's share needs the lane, which only kernels' translations know.
    common::source::assert_error(
        "fragment float4 f(device const float* a [[buffer(0)]]) {\n    simdgroup_float8x8 m;\n    simdgroup_load(m, a);\n    return float4(m.thread_elements()[0]);\n}\n",
        "simdgroup_load",
        0,
        "SIMD-group matrices are translated in kernels only, not in a fragment function",
    );
    common::source::assert_error(
        "vertex float4 v(device const float* a [[buffer(0)]]) {\n    simdgroup_float8x8 m = simdgroup_float8x8(2.0f);\n    return float4(m.thread_elements()[0]);\n}\n",
        "simdgroup_float8x8(2",
        0,
        "SIMD-group matrices are translated in kernels only, not in a vertex function",
    );
}

/// A product in a `switch` on a value that depends on the thread (case 0
/// for every thread here, but the translation cannot tell): the 32-lane
/// emulation cannot take it (it predicates branches and loops, not
/// `switch` cases), so under `SimdGroups::Auto` the kernel falls back to
/// the adapter's subgroups (W0410).
const FALLBACK: &str = r#"
kernel void fallback(device const float* a [[buffer(0)]],
                     device const float* b [[buffer(1)]],
                     device float* d [[buffer(2)]],
                     uint lid [[thread_index_in_threadgroup]]) {
    simdgroup_float8x8 ma, mb;
    simdgroup_load(ma, a);
    simdgroup_load(mb, b);
    simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(1.0f);
    switch (lid >= 1000u ? 1u : 0u) {
        case 0u: simdgroup_multiply_accumulate(acc, ma, mb, acc); break;
        default: break;
    }
    simdgroup_store(acc, d);
}
"#;

#[test]
fn a_kernel_falling_back_to_narrow_subgroups_holds_whole_matrices() {
    // Per-lane fragments would need 32-lane subgroups there; where their
    // width is not known to be 32 (lavapipe's are 8), the module is
    // lowered again with whole matrices, right at any width.
    let (a, b) = (integers(64, 17, -3, 3), integers(64, 18, -3, 3));
    let Some(out) = run(
        FALLBACK,
        "fallback",
        &Options::default(),
        one_simd_group(),
        &[(0, f32_bytes(&a)), (1, f32_bytes(&b)), (2, vec![0; 64 * 4])],
    ) else {
        return;
    };
    assert_eq!(f32s(&out[&2]), product(&a, &b, Some(&[1.0; 64])));
    let wgsl = |subgroup_width| {
        let options = Options {
            subgroup_width,
            target: msl2wgsl::Target::Wgpu,
            ..Options::default()
        };
        let library =
            msl2wgsl::Library::from_source("m.metal", &format!("{PRELUDE}{FALLBACK}"), &options)
                .unwrap_or_else(|f| panic!("{}", f.render()));
        (library.wgsl().to_string(), library.warnings())
    };
    let whole = "array<vec2<f32>, 32>";
    for width in [None, Some(8)] {
        // Whole matrices need no subgroups: no fallback, no warning.
        let (wgsl, warnings) = wgsl(width);
        assert!(wgsl.contains(whole), "{width:?}: {wgsl}");
        assert!(!wgsl.contains("subgroup"), "{width:?}: {wgsl}");
        assert!(warnings.is_empty(), "{width:?}: {warnings}");
    }
    // Known 32-lane subgroups keep the per-lane fragments, shuffled
    // natively in the kernel that falls back.
    let (native32, warnings) = wgsl(Some(32));
    assert!(!native32.contains(whole), "{native32}");
    assert!(native32.contains("subgroupShuffle"), "{native32}");
    assert!(
        warnings.contains("uses the adapter's subgroups"),
        "{warnings}"
    );
}

/// A filled matrix stored from a kernel that also has a barrier (so the
/// module declares an `override`) into a buffer indexed by a uniform:
/// naga 30's override processing folded `vec2(v, v).x` itself and left its
/// SPIR-V writer without the index expression, a panic in pipeline creation
/// on adapters with bounds-checked buffers (lavapipe). The translation
/// folds the access first; this pipeline is made and run.
#[test]
fn filled_matrices_store_from_kernels_with_barriers() {
    let body =
        "kernel void filled(device float* o [[buffer(0)]], constant uint& stride [[buffer(1)]],
                   uint lid [[thread_index_in_threadgroup]]) {
  threadgroup float t[32];
  t[lid] = float(lid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  simdgroup_store(make_filled_simdgroup_matrix<float, 8, 8>(1.5f), o, ulong(stride));
  if (lid == 0) { o[64] = t[31]; }
}
";
    let Some(got) = common::source::run_body_f32s(
        body,
        "filled",
        (32, 32),
        vec![(0, vec![0u8; 65 * 4]), (1, 8u32.to_le_bytes().to_vec())],
        0,
    ) else {
        return;
    };
    assert!(got[..64].iter().all(|v| *v == 1.5), "{got:?}");
    assert_eq!(got[64], 31.0);
}

/// A function template whose parameters are `simdgroup_matrix<U, 8, 8>`
/// (MLX's `dtype_mat_t<U>`): `U` is deduced from the matrices passed.
const DEDUCED: &str = r#"
template <typename U, typename V>
void mad(thread simdgroup_matrix<U, 8, 8>& d, thread simdgroup_matrix<V, 8, 8>& a,
         thread simdgroup_matrix<V, 8, 8>& b, thread simdgroup_matrix<U, 8, 8>& c) {
    simdgroup_multiply_accumulate(d, a, b, c);
}
kernel void deduced(device const float* a [[buffer(0)]],
                    device const float* b [[buffer(1)]],
                    device const float* c [[buffer(2)]],
                    device float* d [[buffer(3)]]) {
    simdgroup_float8x8 ma, mb, mc, md;
    simdgroup_load(ma, a);
    simdgroup_load(mb, b);
    simdgroup_load(mc, c);
    mad(md, ma, mb, mc);
    simdgroup_store(md, d);
}
"#;

#[test]
fn template_arguments_are_deduced_from_simdgroup_matrices() {
    let (a, b, c) = (values(64, 4), values(64, 5), values(64, 6));
    let Some(out) = run(
        DEDUCED,
        "deduced",
        &Options::default(),
        one_simd_group(),
        &[
            (0, f32_bytes(&a)),
            (1, f32_bytes(&b)),
            (2, f32_bytes(&c)),
            (3, vec![0; 256]),
        ],
    ) else {
        return;
    };
    assert_close(
        &f32s(&out[&3]),
        &matmul_reference(&a, &b, Some(&c), 8, 8, 8),
        "deduced a*b+c",
    );
}
