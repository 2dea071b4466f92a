//! MetalPerformancePrimitives' `matmul2d` run by one SIMD group on
//! cooperative tensors (`<MetalPerformancePrimitives/MetalPerformancePrimitives.h>`,
//! as MLX's NAX kernels use it): products against a CPU matmul, on the
//! adapter's GPU (lavapipe's 8-lane subgroups in CI, so through the
//! 32-lane emulation), with the operands placed in the cooperative tensors
//! by the element order MLX's `BaseNAXFrag::get_coord` documents for
//! Apple's GPUs.
//!
//! The inputs are multiples of 1/16 below 2 in magnitude, exact in `half`
//! and `bfloat`; their products and every partial sum are exact in `float`,
//! so any order of summation gives the exact product and the results are
//! compared for equality.
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, f32s};
use msl2wgsl::diagnostics::Code;
use msl2wgsl::runner::{run_kernel, Dispatch};
use msl2wgsl::Options;
use std::collections::BTreeMap;

/// One matmul2d case: the descriptor's arguments and the element types.
struct Case {
    m: usize,
    n: usize,
    k: usize,
    transpose_left: bool,
    transpose_right: bool,
    accumulate: bool,
    /// The left and right operands' element type (`float`, `half`, `bfloat`).
    input: &'static str,
}

/// Two SIMD groups, each running the case on its own matrices.
const GROUPS: usize = 2;

/// The kernel: each SIMD group loads its operands (stored row-major in
/// their stored shapes) into the cooperative tensors element by element,
/// runs the operation and stores the destination.
fn kernel(c: &Case) -> String {
    let (rows_a, cols_a) = if c.transpose_left {
        (c.k, c.m)
    } else {
        (c.m, c.k)
    };
    let (rows_b, cols_b) = if c.transpose_right {
        (c.n, c.k)
    } else {
        (c.k, c.n)
    };
    let mode = if c.accumulate {
        "multiply_accumulate"
    } else {
        "multiply"
    };
    format!(
        r#"#include <metal_stdlib>
#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>
using namespace metal;

// Element i of lane l's part of a 16x16 block: (column, row).
short2 coord(ushort l, int i) {{
    const short q = l >> 2;
    const short row = ((q & 4) | ((l >> 1) & 3)) + (i >> 2) * 8;
    const short col = ((q & 2) | (l & 1)) * 4 + i % 4;
    return short2(col, row);
}}

template <typename T, typename Tensor>
void load(thread Tensor& t, device const float* src, int rows, int cols, ushort l) {{
    for (int b = 0; b < (rows / 16) * (cols / 16); b++) {{
        const int br = b / (cols / 16);
        const int bc = b % (cols / 16);
        for (int i = 0; i < 8; i++) {{
            const short2 rc = coord(l, i);
            t[b * 8 + i] = T(src[(br * 16 + rc.y) * cols + bc * 16 + rc.x]);
        }}
    }}
}}

template <typename Tensor>
void store(thread Tensor& t, device float* dst, int rows, int cols, ushort l) {{
    for (int b = 0; b < (rows / 16) * (cols / 16); b++) {{
        const int br = b / (cols / 16);
        const int bc = b % (cols / 16);
        for (int i = 0; i < 8; i++) {{
            const short2 rc = coord(l, i);
            dst[(br * 16 + rc.y) * cols + bc * 16 + rc.x] = float(t[b * 8 + i]);
        }}
    }}
}}

kernel void mm(device const float* a [[buffer(0)]],
               device const float* b [[buffer(1)]],
               device float* c [[buffer(2)]],
               ushort lane [[thread_index_in_simdgroup]],
               ushort group [[simdgroup_index_in_threadgroup]]) {{
    constexpr auto desc = mpp::tensor_ops::matmul2d_descriptor(
        {m}, {n}, {k}, {tl}, {tr}, true,
        mpp::tensor_ops::matmul2d_descriptor::mode::{mode});
    mpp::tensor_ops::matmul2d<desc, metal::execution_simdgroup> op;
    auto ta = op.template get_left_input_cooperative_tensor<{input}, {input}, float>();
    auto tb = op.template get_right_input_cooperative_tensor<{input}, {input}, float>();
    auto tc = op.template get_destination_cooperative_tensor<
        metal::remove_addrspace_t<decltype(ta)>, metal::remove_addrspace_t<decltype(tb)>, float>();
    load<{input}>(ta, a + group * {size_a}, {rows_a}, {cols_a}, lane);
    load<{input}>(tb, b + group * {size_b}, {rows_b}, {cols_b}, lane);
    load<float>(tc, c + group * {size_c}, {m}, {n}, lane);
    op.run(ta, tb, tc);
    store(tc, c + group * {size_c}, {m}, {n}, lane);
}}
"#,
        m = c.m,
        n = c.n,
        k = c.k,
        tl = c.transpose_left,
        tr = c.transpose_right,
        input = c.input,
        size_a = c.m * c.k,
        size_b = c.k * c.n,
        size_c = c.m * c.n,
    )
}

/// Multiples of 1/16 in [-2, 2), deterministic.
fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(977);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x % 64) as f32 / 16.0 - 2.0
        })
        .collect()
}

/// `left · right (+ c)` for one SIMD group's matrices, `a` and `b` stored
/// in their stored shapes.
fn reference(case: &Case, a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
    let (m, n, k) = (case.m, case.n, case.k);
    let left = |r: usize, j: usize| match case.transpose_left {
        true => a[j * m + r],
        false => a[r * k + j],
    };
    let right = |j: usize, col: usize| match case.transpose_right {
        true => b[col * k + j],
        false => b[j * n + col],
    };
    (0..m * n)
        .map(|i| {
            let (r, col) = (i / n, i % n);
            let start = if case.accumulate {
                f64::from(c[i])
            } else {
                0.0
            };
            let sum = (0..k).fold(start, |s, j| {
                s + f64::from(left(r, j)) * f64::from(right(j, col))
            });
            sum as f32
        })
        .collect()
}

/// Runs `case` on two SIMD groups and checks every element exactly.
fn check(case: &Case) {
    let Some(gpu) = common::gpu() else {
        return;
    };
    let (a, b) = (
        values(GROUPS * case.m * case.k, 1),
        values(GROUPS * case.k * case.n, 2),
    );
    // Without accumulation the destination's old values must not count.
    let c = match case.accumulate {
        true => values(GROUPS * case.m * case.n, 3),
        false => vec![1.0e30; GROUPS * case.m * case.n],
    };
    let buffers: BTreeMap<u32, Vec<u8>> =
        [(0, f32_bytes(&a)), (1, f32_bytes(&b)), (2, f32_bytes(&c))]
            .into_iter()
            .collect();
    let dispatch = Dispatch::Threadgroups {
        groups: [1, 1, 1],
        threadgroup: [32 * GROUPS as u32, 1, 1],
    };
    let source = kernel(case);
    let out = run_kernel(
        gpu,
        "mm.metal",
        &source,
        &Options::default(),
        "mm",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = f32s(&out[&2]);
    let (sa, sb, sc) = (case.m * case.k, case.k * case.n, case.m * case.n);
    for g in 0..GROUPS {
        let want = reference(
            case,
            &a[g * sa..][..sa],
            &b[g * sb..][..sb],
            &c[g * sc..][..sc],
        );
        for (i, (x, y)) in got[g * sc..][..sc].iter().zip(&want).enumerate() {
            assert_eq!(
                x,
                y,
                "SIMD group {g}, row {}, column {}",
                i / case.n,
                i % case.n
            );
        }
    }
}

#[test]
fn mlx_nax_shape_accumulates_16x32x16() {
    check(&Case {
        m: 16,
        n: 32,
        k: 16,
        transpose_left: false,
        transpose_right: false,
        accumulate: true,
        input: "float",
    });
}

#[test]
fn transposed_right_operand_in_half() {
    check(&Case {
        m: 16,
        n: 32,
        k: 16,
        transpose_left: false,
        transpose_right: true,
        accumulate: true,
        input: "half",
    });
}

#[test]
fn transposed_left_operand_in_bfloat_without_accumulation() {
    check(&Case {
        m: 32,
        n: 16,
        k: 32,
        transpose_left: true,
        transpose_right: false,
        accumulate: false,
        input: "bfloat",
    });
}

#[test]
fn both_transposed_over_several_blocks_of_k() {
    check(&Case {
        m: 32,
        n: 32,
        k: 48,
        transpose_left: true,
        transpose_right: true,
        accumulate: true,
        input: "half",
    });
}

const PRELUDE: &str = "#include <metal_stdlib>\n#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\nusing namespace metal;\n";

/// The rendered diagnostics of translating `body` after [`PRELUDE`].
fn errors(body: &str) -> (String, Code) {
    let src = format!("{PRELUDE}{body}");
    match msl2wgsl::Library::from_source("t.metal", &src, &Options::default()) {
        Ok(_) => panic!("expected an error"),
        Err(f) => (f.render(), f.diagnostics.0[0].code()),
    }
}

#[test]
fn a_scope_other_than_one_simd_group_is_refused() {
    let (text, code) = errors(
        "kernel void k(device float* o [[buffer(0)]]) {
    constexpr auto d = mpp::tensor_ops::matmul2d_descriptor(16, 16, 16);
    mpp::tensor_ops::matmul2d<d, metal::execution_simdgroups<4>> op;
    auto t = op.get_destination_cooperative_tensor<float, float, float>();
    o[0] = t[0];
}
",
    );
    assert_eq!(code, Code::StaticAssertFailed, "{text}");
    assert!(
        text.contains("msl2wgsl runs matmul2d by one SIMD group (execution_simdgroup) only"),
        "{text}"
    );
    // At the assertion in the provided header (the instantiation's place
    // is not given: no diagnostic here says where an instance was made).
    assert!(
        text.starts_with("<sdk>/MetalPerformancePrimitives/MetalPerformancePrimitives.h:"),
        "{text}"
    );
}

#[test]
fn dimensions_that_are_not_multiples_of_16_are_refused() {
    let (text, code) = errors(
        "kernel void k(device float* o [[buffer(0)]]) {
    constexpr auto d = mpp::tensor_ops::matmul2d_descriptor(8, 16, 16);
    mpp::tensor_ops::matmul2d<d, metal::execution_simdgroup> op;
    auto t = op.get_destination_cooperative_tensor<float, float, float>();
    o[0] = t[0];
}
",
    );
    assert_eq!(code, Code::StaticAssertFailed, "{text}");
    assert!(text.contains("m, n and k known multiples of 16"), "{text}");
}
