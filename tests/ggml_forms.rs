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
    let failure = Library::from_source("t.metal", source, &Options::default())
        .err()
        .expect("an error");
    let text = failure.render();
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
