//! llama.cpp's (ggml's) Metal kernel idioms (issue #17): kernel templates
//! instantiated through a name for a specialisation's function type
//! (`typedef decltype(f<float4, 1>) f_t;` then `template
//! [[host_name("...")]] kernel f_t f<float, 1>;`), and `dot` of scalars,
//! which ggml's row norms call when the element type is `float`. The
//! kernels are written here in ggml's shape and run against a CPU
//! reference with Apple's 32-lane SIMD groups.
// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

use msl2wgsl::{Library, Options};

/// An RMS norm over rows, one threadgroup a row, for `float` and `float4`
/// elements, with ggml's byte-addressed rows and instantiation idiom.
const ROW_NORM: &str = r#"
#include <metal_stdlib>
using namespace metal;
static inline float dot(float x, float y) {
    return x*y;
}
typedef struct { int32_t ne00; int32_t ne00_t; uint64_t nb1; float eps; } norm_args;

template <typename T, short F>
kernel void kernel_row_norm_impl(
        constant norm_args & args,
        device const char * src0,
        device       char * dst,
        threadgroup float * shmem_f32 [[threadgroup(0)]],
        uint3   tgpig[[threadgroup_position_in_grid]],
        ushort3 tpitg[[thread_position_in_threadgroup]],
        ushort  sgitg[[simdgroup_index_in_threadgroup]],
        ushort  tiisg[[thread_index_in_simdgroup]],
        ushort3   ntg[[threads_per_threadgroup]]) {
    if (sgitg == 0) {
        shmem_f32[tiisg] = 0.0f;
    }
    device const T * x = (device const T *) (src0 + tgpig.x*args.nb1);
    float sumf = 0.0f;
    for (int i = tpitg.x; i < args.ne00_t; i += ntg.x) {
        sumf += dot(x[i], x[i]);
    }
    sumf = simd_sum(sumf);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tiisg == 0) {
        shmem_f32[sgitg] = sumf;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    sumf = shmem_f32[tiisg];
    sumf = simd_sum(sumf);
    const float scale = 1.0f/sqrt(sumf/args.ne00 + args.eps);
    device T * y = (device T *) (dst + tgpig.x*args.nb1);
    for (int i = tpitg.x; i < args.ne00_t; i += ntg.x) {
        if (F == 1) {
            y[i] = x[i]*scale;
        }
        if (F == 2) {
            y[i] = x[i]*scale*2.0f;
        }
    }
}

typedef decltype(kernel_row_norm_impl<float4, 1>) kernel_row_norm_t;

template [[host_name("kernel_row_norm_f32")]]     kernel kernel_row_norm_t kernel_row_norm_impl<float, 1>;
template [[host_name("kernel_row_norm_f32_4")]]   kernel kernel_row_norm_t kernel_row_norm_impl<float4, 1>;
template [[host_name("kernel_row_norm_x2_f32")]]  kernel kernel_row_norm_t kernel_row_norm_impl<float, 2>;
"#;

fn options() -> Options {
    Options {
        threadgroup_memory: vec![(0, 32 * 4)],
        ..Options::default()
    }
}

#[test]
fn instantiations_through_a_decltype_function_type_are_entry_points() {
    let library = Library::from_source("norm.metal", ROW_NORM, &options())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let names = library.function_names();
    for name in [
        "kernel_row_norm_f32",
        "kernel_row_norm_f32_4",
        "kernel_row_norm_x2_f32",
    ] {
        assert!(names.contains(&name), "{name} not in {names:?}");
    }
}

#[test]
fn an_instantiation_without_parameters_needs_a_function_type() {
    let source = "#include <metal_stdlib>\nusing namespace metal;\ntemplate <typename T>\nkernel void k(device T* a [[buffer(0)]]) { a[0] = T(1); }\ntemplate [[host_name(\"k_f\")]] kernel float k<float>;\n";
    let text = match Library::from_source("t.metal", source, &Options::default()) {
        Ok(_) => panic!("an instantiation through `float` translated"),
        Err(failure) => failure.render(),
    };
    assert!(
        text.starts_with("t.metal:5:38: error: an explicit instantiation without parameters needs a function type here"),
        "{text}"
    );
}

#[test]
#[cfg(feature = "runner")]
fn row_norms_instantiated_through_the_alias_match_the_cpu() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else { return };
    let (rows, cols) = (3usize, 96usize);
    let x: Vec<f32> = (0..rows * cols)
        .map(|k| ((k * 37 % 101) as f32 - 50.0) / 16.0)
        .collect();
    let eps = 1e-5f32;
    for (entry, width, factor) in [
        ("kernel_row_norm_f32", 1usize, 1.0f32),
        ("kernel_row_norm_f32_4", 4, 1.0),
        ("kernel_row_norm_x2_f32", 1, 2.0),
    ] {
        let mut args = Vec::new();
        args.extend((cols as i32).to_le_bytes());
        args.extend(((cols / width) as i32).to_le_bytes());
        args.extend(((cols * 4) as u64).to_le_bytes());
        args.extend(eps.to_le_bytes());
        args.extend([0u8; 4]);
        let buffers = [
            (0, args),
            (1, common::f32_bytes(&x)),
            (2, vec![0u8; rows * cols * 4]),
        ]
        .into_iter()
        .collect();
        let dispatch = Dispatch::Threadgroups {
            groups: [rows as u32, 1, 1],
            threadgroup: [64, 1, 1],
        };
        let out = run_kernel(
            gpu,
            "norm.metal",
            ROW_NORM,
            &options(),
            entry,
            &dispatch,
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{entry}: {e}"));
        let got = common::f32s(&out[&2]);
        for r in 0..rows {
            let row = &x[r * cols..(r + 1) * cols];
            let mean = row.iter().map(|v| (v * v) as f64).sum::<f64>() / cols as f64;
            let scale = 1.0 / (mean + eps as f64).sqrt();
            for c in 0..cols {
                let want = row[c] as f64 * scale * factor as f64;
                let have = got[r * cols + c] as f64;
                // Sums in another order, `sqrt` (correctly rounded in
                // WGSL's and Metal's tables alike) and a division: a few
                // ulps of the result, bounded generously by 1e-5 relative.
                assert!(
                    (have - want).abs() <= 1e-5 * want.abs().max(1e-3),
                    "{entry} [{r}][{c}]: {have} vs {want}"
                );
            }
        }
    }
}

/// A q8_0 matrix-vector product in ggml's shape: 34-byte blocks of a
/// `half` scale and 32 `int8_t`s, whose member array decays to a pointer
/// in pointer arithmetic and in an initialisation; two rows a threadgroup,
/// one SIMD group a row.
const Q8_MATVEC: &str = r#"
#include <metal_stdlib>
using namespace metal;
#define QK8_0 32
typedef struct {
    half   d;
    int8_t qs[QK8_0];
} block_q8_0;
typedef struct { int32_t ne00; int32_t ne01; uint64_t nb01; } mv_args;

kernel void kernel_mul_mv_q8_0_f32(
        constant mv_args & args,
        device const char * src0,
        device const float * src1,
        device       float * dst,
        uint3  tgpig[[threadgroup_position_in_grid]],
        ushort tiisg[[thread_index_in_simdgroup]],
        ushort sgitg[[simdgroup_index_in_threadgroup]]) {
    const int nb = args.ne00/QK8_0;
    const int r0 = tgpig.x*2 + sgitg;
    device const block_q8_0 * x = (device const block_q8_0 *) (src0 + r0*args.nb01);
    float sumf = 0.0f;
    for (int ib = tiisg/4; ib < nb; ib += 8) {
        const short il = tiisg%4;
        device const int8_t * qs = x[ib].qs + il*8;
        device const int8_t * all = x[ib].qs;
        float sumq = 0.f;
        for (short i = 0; i < 8; ++i) {
            sumq += qs[i] * src1[ib*QK8_0 + il*8 + i];
        }
        sumq += (il == 0) ? 0.0f * all[31] : 0.0f;
        sumf += sumq*x[ib].d;
    }
    const float tot = simd_sum(sumf);
    if (tiisg == 0 && r0 < args.ne01) {
        dst[r0] = tot;
    }
}
"#;

#[test]
#[cfg(feature = "runner")]
fn a_q8_matvec_reads_block_member_arrays_through_decayed_pointers() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else { return };
    let (rows, cols) = (4usize, 128usize);
    let blocks = cols / 32;
    let mut matrix = Vec::new();
    let mut want = vec![0f64; rows];
    let v: Vec<f32> = (0..cols)
        .map(|k| ((k * 7 % 23) as f32 - 11.0) / 8.0)
        .collect();
    for (r, want_r) in want.iter_mut().enumerate() {
        for b in 0..blocks {
            let d = half::f16::from_f32(0.125 * (1 + (r + b) % 3) as f32);
            matrix.extend(d.to_le_bytes());
            let mut block_sum = 0f64;
            for i in 0..32 {
                let q = ((r * 31 + b * 17 + i * 5) % 255) as i32 - 127;
                matrix.push(q as i8 as u8);
                block_sum += q as f64 * v[b * 32 + i] as f64;
            }
            *want_r += block_sum * d.to_f64();
        }
    }
    let mut args = Vec::new();
    args.extend((cols as i32).to_le_bytes());
    args.extend((rows as i32).to_le_bytes());
    args.extend(((blocks * 34) as u64).to_le_bytes());
    let buffers = [
        (0, args),
        (1, matrix),
        (2, common::f32_bytes(&v)),
        (3, vec![0u8; rows * 4]),
    ]
    .into_iter()
    .collect();
    let dispatch = Dispatch::Threadgroups {
        groups: [(rows / 2) as u32, 1, 1],
        threadgroup: [64, 1, 1],
    };
    let entry = "kernel_mul_mv_q8_0_f32";
    let out = run_kernel(
        gpu,
        "q8.metal",
        Q8_MATVEC,
        &Options::default(),
        entry,
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{entry}: {e}"));
    let got = common::f32s(&out[&3]);
    for r in 0..rows {
        // Products of small integers and multiples of 1/8 are exact in
        // f32; the sums are exact too (well under 2^24 eighths).
        assert_eq!(got[r] as f64, want[r], "row {r}");
    }
}

/// A k-quant block's packed 6-bit scales, read through a helper taking
/// `device const uchar*` (the member array decays for the argument), and
/// its quants as `uint16_t`s through a cast of the member array.
const KQUANT_SCALES: &str = r#"
#include <metal_stdlib>
using namespace metal;
typedef struct {
    half d;
    uint8_t scales[12];
    uint8_t qs[64];
} block_k;

static inline uchar2 scale_pair(int j, device const uchar * q) {
    return j < 4 ? uchar2(q[j] & 63, q[j + 4] & 63)
                 : uchar2((q[j + 4] & 0xF) | ((q[j - 4] & 0xc0) >> 2),
                          (q[j + 4] >> 4) | ((q[j] & 0xc0) >> 2));
}

kernel void k_scales(device const block_k * x [[buffer(0)]],
                     device float * out [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    uchar2 sc = scale_pair(i % 8, x[i / 8].scales);
    device const uint16_t * q = (device const uint16_t *)x[i / 8].qs + 2 * (i % 4);
    out[2 * i] = float(sc.x) + float(sc.y) * 256.0f;
    out[2 * i + 1] = float(q[0]);
}
"#;

#[test]
#[cfg(feature = "runner")]
fn block_member_arrays_decay_for_pointer_parameters_and_casts() {
    let blocks = 3usize;
    let mut bytes = Vec::new();
    for b in 0..blocks {
        bytes.extend(half::f16::from_f32(1.0 + b as f32).to_le_bytes());
        bytes.extend((0..76).map(|k| ((b * 89 + k * 53 + 7) % 256) as u8));
    }
    let n = (blocks * 8) as u32;
    let Some(out) = common::source::run_body(
        KQUANT_SCALES
            .split_once("using namespace metal;\n")
            .unwrap()
            .1,
        "k_scales",
        (n, 8),
        vec![(0, bytes.clone()), (1, vec![0u8; 8 * n as usize])],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for i in 0..n as usize {
        let block = &bytes[(i / 8) * 78..(i / 8 + 1) * 78];
        let q = &block[2..14];
        let j = i % 8;
        let (x, y) = if j < 4 {
            (q[j] & 63, q[j + 4] & 63)
        } else {
            (
                (q[j + 4] & 0xF) | ((q[j - 4] & 0xc0) >> 2),
                (q[j + 4] >> 4) | ((q[j] & 0xc0) >> 2),
            )
        };
        let at = 14 + 4 * (i % 4);
        let word = u16::from_le_bytes([block[at], block[at + 1]]);
        assert_eq!(got[2 * i], x as f32 + y as f32 * 256.0, "scales of {i}");
        assert_eq!(got[2 * i + 1], word as f32, "quants of {i}");
    }
}

/// ggml's `get_rows` shape: a kernel template taking its dequantiser as a
/// template parameter of function pointer type, instantiated through the
/// `decltype` alias with a function template's name.
const GET_ROWS: &str = r#"
#include <metal_stdlib>
using namespace metal;
typedef struct {
    half    d;
    uint8_t qs[16];
} block_q4;

template <typename type4x4>
void dequantize_q4(device const block_q4 * xb, short il, thread type4x4 & reg) {
    float4x4 r;
    for (int i = 0; i < 16; i++) {
        const uint8_t b = xb->qs[i];
        const float q = il ? float(b >> 4) : float(b & 15);
        r[i / 4][i % 4] = (q - 8.0f) * float(xb->d);
    }
    reg = (type4x4) r;
}

template <typename block_q, short nl, void (*dequantize_func)(device const block_q *, short, thread float4x4 &)>
kernel void kernel_get_rows_q(
        device const void * src0,
        device       float * dst,
        uint tgpig [[threadgroup_position_in_grid]],
        uint tiitg [[thread_index_in_threadgroup]],
        uint tptg  [[threads_per_threadgroup]]) {
    for (int ind = tiitg; ind < 2*nl; ind += tptg) {
        float4x4 temp;
        dequantize_func(((device const block_q *) src0) + tgpig*2 + ind/nl, ind%nl, temp);
        *(((device float4x4 *) dst) + tgpig*2*nl + ind) = temp;
    }
}

typedef decltype(kernel_get_rows_q<block_q4, 2, dequantize_q4>) get_rows_q_t;
template [[host_name("kernel_get_rows_q4")]] kernel get_rows_q_t kernel_get_rows_q<block_q4, 2, dequantize_q4>;
"#;

#[test]
#[cfg(feature = "runner")]
fn a_dequantiser_passed_as_a_function_pointer_template_parameter_runs() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else { return };
    let rows = 3usize;
    let mut blocks = Vec::new();
    let mut want = Vec::new();
    for b in 0..rows * 2 {
        let d = half::f16::from_f32(0.25 * (1 + b % 4) as f32);
        blocks.extend(d.to_le_bytes());
        let qs: Vec<u8> = (0..16)
            .map(|i| ((b * 37 + i * 11 + 5) % 256) as u8)
            .collect();
        blocks.extend(&qs);
        for il in 0..2 {
            for q in &qs {
                let v = if il == 1 { q >> 4 } else { q & 15 };
                want.push((v as f32 - 8.0) * d.to_f32());
            }
        }
    }
    let buffers = [(0, blocks), (1, vec![0u8; rows * 64 * 4])]
        .into_iter()
        .collect();
    let dispatch = Dispatch::Threadgroups {
        groups: [rows as u32, 1, 1],
        threadgroup: [2, 1, 1],
    };
    let entry = "kernel_get_rows_q4";
    let out = run_kernel(
        gpu,
        "rows.metal",
        GET_ROWS,
        &Options::default(),
        entry,
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{entry}: {e}"));
    // Small integers times a power-of-two multiple of 1/4: exact.
    assert_eq!(common::f32s(&out[&1]), want);
}
