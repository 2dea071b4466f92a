//! WebGPU's default limits: a function that needs more gets a warning
//! (W0405) naming the limit and the arguments, and a `requiredLimits`
//! entry in its reflection; the runner requests the adapter's limits and
//! refuses, naming the limit, what the adapter cannot meet.

mod common;

use msl2wgsl::diagnostics::Code;
use msl2wgsl::{Library, Options};

/// Nine `const device float*` inputs, one output and two `constant`
/// scalars (the issue's kernel): the scalars are uniforms now, but the ten
/// pointers are still ten storage buffers, over WebGPU's default of 8.
const TEN_STORAGE: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void sum9(const device float* a0 [[buffer(0)]], const device float* a1 [[buffer(1)]],
                 const device float* a2 [[buffer(2)]], const device float* a3 [[buffer(3)]],
                 const device float* a4 [[buffer(4)]], const device float* a5 [[buffer(5)]],
                 const device float* a6 [[buffer(6)]], const device float* a7 [[buffer(7)]],
                 const device float* a8 [[buffer(8)]], device float* out [[buffer(9)]],
                 constant float& scale [[buffer(10)]], constant uint& n [[buffer(11)]],
                 uint tid [[thread_position_in_grid]]) {
    if (tid >= n) return;
    out[tid] = (a0[tid] + a1[tid] + a2[tid] + a3[tid] + a4[tid] + a5[tid] + a6[tid]
                + a7[tid] + a8[tid]) * scale;
}
"#;

fn translate(source: &str) -> Library {
    Library::from_source("limits.metal", source, &Options::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn ten_storage_buffers_warn_and_require_the_limit() {
    let library = translate(TEN_STORAGE);
    let f = library.function("sum9").unwrap();
    assert_eq!(
        f.required_limits.get("maxStorageBuffersPerShaderStage"),
        Some(&10),
        "{:?}",
        f.required_limits
    );
    assert_eq!(f.required_limits.len(), 1, "{:?}", f.required_limits);
    let warnings = &library.warning_diagnostics().0;
    assert_eq!(warnings.len(), 1, "{}", library.warnings());
    let w = &warnings[0];
    assert_eq!(w.code(), Code::DefaultLimitExceeded);
    assert_eq!(
        w.message,
        "`sum9` needs 10 storage buffers, over WebGPU's default `maxStorageBuffersPerShaderStage` of 8"
    );
    assert!(
        w.notes[0].starts_with("the storage buffers: `a0` [[buffer(0)]]")
            && w.notes[0].contains("`out` [[buffer(9)]]"),
        "{:?}",
        w.notes
    );
    assert!(!w.notes[0].contains("scale"), "{:?}", w.notes);
    // Located at the ninth storage buffer, the first past the default.
    let text = library.warnings();
    assert!(text.contains("limits.metal:8:18:"), "{text}");
    // The reflection JSON carries it for the host.
    let json = serde_json::to_value(f).unwrap();
    assert_eq!(
        json["requiredLimits"]["maxStorageBuffersPerShaderStage"],
        10
    );
    assert_eq!(json["arguments"][10]["buffer"]["bindingType"], "uniform");
    assert_eq!(
        json["arguments"][0]["buffer"]["bindingType"],
        "read-only-storage"
    );
    assert_eq!(json["arguments"][9]["buffer"]["bindingType"], "storage");
}

#[test]
fn a_kernel_within_the_defaults_has_no_required_limits() {
    let source = TEN_STORAGE
        .replace("+ a7[tid] + a8[tid]", "")
        .replace(
            "const device float* a7 [[buffer(7)]],\n                 const device float* a8 [[buffer(8)]], ",
            "",
        );
    let library = translate(&source);
    let f = library.function("sum9").unwrap();
    assert!(f.required_limits.is_empty(), "{:?}", f.required_limits);
    assert!(library.warnings().is_empty(), "{}", library.warnings());
    let json = serde_json::to_value(f).unwrap();
    assert!(json.get("requiredLimits").is_none(), "{json}");
}

#[test]
fn workgroup_size_over_the_default_invocations_is_reported() {
    let source = r#"
#include <metal_stdlib>
using namespace metal;
kernel void wide(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
    out[tid] = float(tid);
}
"#;
    let options = Options {
        threadgroup_size: Some([512, 1, 1]),
        ..Options::default()
    };
    let library = Library::from_source("wide.metal", source, &options).unwrap();
    let f = library.function("wide").unwrap();
    assert_eq!(
        f.required_limits.get("maxComputeInvocationsPerWorkgroup"),
        Some(&512)
    );
    assert_eq!(
        f.required_limits.get("maxComputeWorkgroupSizeX"),
        Some(&512)
    );
    let codes: Vec<Code> = library
        .warning_diagnostics()
        .0
        .iter()
        .map(|d| d.code())
        .collect();
    assert_eq!(
        codes,
        [Code::DefaultLimitExceeded, Code::DefaultLimitExceeded]
    );
}

/// Workgroup memory: one variable over 16 KiB has its own warning (W0402);
/// two below it that add up to more get W0405. Both need the limit.
#[test]
fn workgroup_memory_in_all_over_the_default() {
    let kernel = |decls: &str, uses: &str| {
        format!(
            "#include <metal_stdlib>\nusing namespace metal;\n\
             kernel void k(device float* out [[buffer(0)]], uint t [[thread_position_in_grid]]) {{\n\
             {decls}\n{uses}\nthreadgroup_barrier(mem_flags::mem_threadgroup);\n}}\n"
        )
    };
    let one = kernel(
        "threadgroup float a[5000];",
        "a[t] = 1.0; out[t] = a[4999 - t];",
    );
    let library = translate(&one);
    let f = library.function("k").unwrap();
    assert_eq!(
        f.required_limits.get("maxComputeWorkgroupStorageSize"),
        Some(&20000)
    );
    let codes: Vec<Code> = library
        .warning_diagnostics()
        .0
        .iter()
        .map(|d| d.code())
        .collect();
    assert_eq!(codes, [Code::LargeArray]);
    let two = kernel(
        "threadgroup float a[3000]; threadgroup float b[3000];",
        "a[t] = 1.0; b[t] = 2.0; out[t] = a[2999 - t] + b[t];",
    );
    let library = translate(&two);
    let f = library.function("k").unwrap();
    assert_eq!(
        f.required_limits.get("maxComputeWorkgroupStorageSize"),
        Some(&24000)
    );
    let w = &library.warning_diagnostics().0;
    assert_eq!(w.len(), 1, "{}", library.warnings());
    assert_eq!(w[0].code(), Code::DefaultLimitExceeded);
    assert!(
        w[0].message.contains("24000 bytes of workgroup memory"),
        "{}",
        w[0].message
    );
    assert_eq!(w[0].notes[0], "the threadgroup variables: `a`, `b`");
    assert!(
        library.warnings().contains("limits.metal:4:19:"),
        "{}",
        library.warnings()
    );
}

#[cfg(feature = "runner")]
mod gpu {
    use super::*;
    use common::{f32_bytes, f32s, gpu};
    use msl2wgsl::runner::{run_compute, run_kernel, Dispatch, RunError};
    use std::collections::BTreeMap;

    fn buffers(n: u32) -> BTreeMap<u32, Vec<u8>> {
        let mut b: BTreeMap<u32, Vec<u8>> = (0..9)
            .map(|k| {
                (
                    k,
                    f32_bytes(&(0..n).map(|i| (i + k) as f32).collect::<Vec<_>>()),
                )
            })
            .collect();
        b.insert(9, vec![0; n as usize * 4]);
        b.insert(10, 0.5f32.to_le_bytes().to_vec());
        b.insert(11, n.to_le_bytes().to_vec());
        b
    }

    /// The runner's device has the adapter's limits (lavapipe's allow more
    /// than 8 storage buffers), so the kernel runs.
    #[test]
    fn ten_storage_buffer_kernel_runs_on_the_adapters_limits() {
        let Some(gpu) = gpu() else { return };
        if gpu.limits().max_storage_buffers_per_shader_stage < 10 {
            return;
        }
        let n = 70;
        let dispatch = Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [32, 1, 1],
        };
        let out = run_kernel(
            gpu,
            "limits.metal",
            TEN_STORAGE,
            &Options::default(),
            "sum9",
            &dispatch,
            &buffers(n),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        // (9 i + 0 + 1 + ... + 8) / 2
        let expected: Vec<f32> = (0..n).map(|i| (9 * i + 36) as f32 * 0.5).collect();
        assert_eq!(f32s(&out[&9]), expected);
    }

    /// A limit the adapter cannot meet is refused before wgpu sees the
    /// pipeline, naming the limit.
    #[test]
    fn a_limit_the_adapter_lacks_is_refused_by_name() {
        let Some(gpu) = gpu() else { return };
        let options = Options {
            threadgroup_size: Some([32, 1, 1]),
            ..Options::default()
        };
        let library = Library::from_source("limits.metal", TEN_STORAGE, &options).unwrap();
        let mut function = library.function("sum9").unwrap().clone();
        let beyond = u64::from(gpu.limits().max_storage_buffers_per_shader_stage) + 1;
        function
            .required_limits
            .insert("maxStorageBuffersPerShaderStage".into(), beyond);
        let dispatch = Dispatch::Threads {
            grid: [32, 1, 1],
            threadgroup: [32, 1, 1],
        };
        let err = run_compute(gpu, library.wgsl(), &function, &dispatch, &buffers(32)).unwrap_err();
        let RunError::InvalidDispatch(message) = &err else {
            panic!("{err:?}")
        };
        assert!(
            message.contains(&format!(
                "`sum9` needs maxStorageBuffersPerShaderStage of {beyond}"
            )),
            "{message}"
        );
    }
}

/// Kernels of one template: `float` tiles of 64 × 68 take 17,408 bytes,
/// `half` ones 8,704 in Metal, and 128 × 68 `half`s 17,408 (the WGSL holds
/// `half` as `f32`, the same WGSL type as the `float` instance's, but
/// Metal's limit counts Metal's bytes). The instance at 128 × 68 `float`s
/// (34,816 bytes) is over the 32 KiB every Metal GPU family allows: Metal
/// compiles it but makes no pipeline of it.
const TILES: &str = r#"
#include <metal_stdlib>
using namespace metal;
template <typename T, int R>
kernel void tile(const device T* in [[buffer(0)]], device T* out [[buffer(1)]],
                 uint t [[thread_index_in_threadgroup]], uint g [[threadgroup_position_in_grid]]) {
  threadgroup T tiles[R * 68];
  tiles[t] = in[g * 64 + t];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[g * 64 + t] = tiles[63 - t] + T(R);
}
template [[host_name("tile_float")]] kernel void tile<float, 64>(const device float*, device float*, uint, uint);
template [[host_name("tile_half")]] kernel void tile<half, 64>(const device half*, device half*, uint, uint);
template [[host_name("tile_half_wide")]] kernel void tile<half, 128>(const device half*, device half*, uint, uint);
template [[host_name("tile_float_wide")]] kernel void tile<float, 128>(const device float*, device float*, uint, uint);
"#;

/// `half` held as `f32` (the command line's default): the `half` tiles
/// then have the WGSL types of the `float` ones.
fn half_as_f32() -> Options {
    Options {
        half: msl2wgsl::library::HalfMode::F32,
        ..Options::default()
    }
}

#[test]
fn a_kernel_over_metals_threadgroup_memory_is_left_out_with_a_warning() {
    let library = Library::from_source("limits.metal", TILES, &half_as_f32())
        .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = library
        .functions()
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["tile_float", "tile_half", "tile_half_wide"]);
    assert!(
        !library.wgsl().contains("tile_float_wide"),
        "{}",
        library.wgsl()
    );
    let left_out: Vec<_> = library
        .warning_diagnostics()
        .0
        .iter()
        .filter(|w| w.code() == Code::KernelOverThreadgroupMemory)
        .collect();
    assert_eq!(left_out.len(), 1, "{}", library.warnings());
    let w = left_out[0];
    assert_eq!(
        w.message,
        "`tile_float_wide` needs 34816 bytes of threadgroup memory; Metal allows at most 32768 bytes of threadgroup memory, and makes no pipeline of it"
    );
    assert!(
        w.notes
            .iter()
            .any(|n| n == "its threadgroup variables: `tiles` (34816 bytes)"),
        "{:?}",
        w.notes
    );
    // Located at the variable, in the template's body.
    let text = w.render(library.source_map());
    assert!(text.starts_with("limits.metal:7:17: warning: "), "{text}");
}

#[test]
fn a_kernel_over_metals_threadgroup_memory_is_an_error_where_asked_for_or_alone() {
    let asked = Options {
        entries: vec!["tile_float_wide".into(), "tile_half".into()],
        ..half_as_f32()
    };
    let alone = TILES
        .lines()
        .filter(|l| {
            !l.contains("host_name(\"tile_float\")") && !l.contains("host_name(\"tile_half")
        })
        .collect::<Vec<_>>()
        .join("\n");
    for (source, options) in [(TILES, asked), (alone.as_str(), half_as_f32())] {
        let failure = Library::from_source("limits.metal", source, &options).unwrap_err();
        let errors: Vec<_> = failure.diagnostics.errors().collect();
        assert_eq!(errors.len(), 1, "{}", failure.render());
        assert_eq!(errors[0].code(), Code::LimitExceeded);
        assert!(
            errors[0]
                .message
                .starts_with("`tile_float_wide` needs 34816 bytes"),
            "{}",
            failure.render()
        );
    }
}
