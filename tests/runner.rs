//! GPU tests of the runner, with hand-written WGSL and reflections, so they
//! do not depend on the translator.
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, f32s, gpu, u32s};
use msl2wgsl::reflect::{
    Access, Argument, ArgumentKind, BufferInfo, FunctionReflection, Stage, WgslBinding,
};
use msl2wgsl::runner::{run_compute, run_compute_with_max_groups, Dispatch, RunError};
use std::collections::BTreeMap;

/// The dispatch uniform as the translator declares it.
const DISPATCH_STRUCT: &str =
    "struct Dispatch { grid_size: vec4<u32>, group_offset: vec4<u32>, threadgroups: vec4<u32> }";

/// `output[i] = input[i] * scale + offset` for threads inside the grid.
const SCALE: &str = "
struct Params { scale: f32, offset: f32 }
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;
@group(1) @binding(0) var<uniform> dispatch: Dispatch;

@compute @workgroup_size(64)
fn scale(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let gid = (wg + dispatch.group_offset.xyz) * vec3<u32>(64u, 1u, 1u) + lid;
    if any(gid >= dispatch.grid_size.xyz) { return; }
    output[gid.x] = input[gid.x] * params.scale + params.offset;
}
";

/// Writes `y * 1000 + x + 1` at each thread's linear grid position, and
/// after the grid: threadgroups.xy and grid_size.xy.
const PROBE: &str = "
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> dispatch: Dispatch;

@compute @workgroup_size(4, 2, 1)
fn probe(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let gid = (wg + dispatch.group_offset.xyz) * vec3<u32>(4u, 2u, 1u) + lid;
    let grid = dispatch.grid_size.xyz;
    if any(gid >= grid) { return; }
    out[(gid.z * grid.y + gid.y) * grid.x + gid.x] = gid.y * 1000u + gid.x + 1u;
    if all(gid == vec3<u32>(0u)) {
        let n = grid.x * grid.y * grid.z;
        out[n] = dispatch.threadgroups.x;
        out[n + 1u] = dispatch.threadgroups.y;
        out[n + 2u] = grid.x;
        out[n + 3u] = grid.y;
    }
}
";

fn wgsl(body: &str) -> String {
    format!("{DISPATCH_STRUCT}\n{body}")
}

fn buffer_arg(
    name: &str,
    index: u32,
    binding: Option<u32>,
    access: Access,
    data_size: u32,
    is_pointer: bool,
) -> Argument {
    Argument {
        name: name.into(),
        kind: ArgumentKind::Buffer,
        index,
        access,
        active: binding.is_some(),
        binding: binding.map(|b| WgslBinding {
            group: 0,
            binding: b,
        }),
        buffer: Some(BufferInfo {
            alignment: 4,
            data_size,
            data_type: if is_pointer { "float" } else { "Params" }.into(),
            is_pointer,
            struct_type: None,
            array_type: None,
            binding_type: msl2wgsl::reflect::BufferBindingType::ReadOnlyStorage,
            binding_size: None,
        }),
        threadgroup: None,
        texture: None,
        sampler: None,
        members: Vec::new(),
    }
}

fn kernel(
    name: &str,
    size: [u32; 3],
    arguments: Vec<Argument>,
    dispatch: WgslBinding,
) -> FunctionReflection {
    FunctionReflection {
        name: name.into(),
        wgsl_entry_point: name.into(),
        stage: Stage::Kernel,
        workgroup_size: Some(size),
        arguments,
        builtins: Vec::new(),
        dispatch_binding: Some(dispatch),
        uses_barriers: false,
        required_features: Vec::new(),
        required_limits: Default::default(),
        simd_groups: None,
        constexpr_samplers: Vec::new(),
        vertex_attributes: Vec::new(),
        vertex_stride: 0,
        varyings: Vec::new(),
        color_outputs: Vec::new(),
        function_constants: Vec::new(),
        stitchable: None,
        point_sprite: None,
        stage_input: None,
        draw_parameters_binding: None,
        vertex_dispatch: None,
    }
}

fn scale_function() -> FunctionReflection {
    kernel(
        "scale",
        [64, 1, 1],
        vec![
            buffer_arg("input", 0, Some(0), Access::Read, 4, true),
            buffer_arg("output", 1, Some(1), Access::ReadWrite, 4, true),
            buffer_arg("params", 2, Some(2), Access::Read, 8, false),
            // Declared but never used by the kernel.
            buffer_arg("unused", 5, None, Access::Read, 4, true),
        ],
        WgslBinding {
            group: 1,
            binding: 0,
        },
    )
}

fn probe_function() -> FunctionReflection {
    kernel(
        "probe",
        [4, 2, 1],
        vec![buffer_arg("out", 0, Some(0), Access::ReadWrite, 4, true)],
        WgslBinding {
            group: 0,
            binding: 1,
        },
    )
}

/// Input `i * 0.5`, output full of -1, scale 2, offset 1; `extra` bytes
/// appended to the input to check lengths are kept.
fn scale_buffers(n: usize, out_len: usize, extra: usize) -> BTreeMap<u32, Vec<u8>> {
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let mut input = f32_bytes(&input);
    input.extend(std::iter::repeat_n(0xAB, extra));
    BTreeMap::from([
        (0, input),
        (1, f32_bytes(&vec![-1.0; out_len])),
        (2, f32_bytes(&[2.0, 1.0])),
        (5, vec![1, 2, 3]),
    ])
}

fn check_scale(out: &BTreeMap<u32, Vec<u8>>, n: usize, out_len: usize) {
    let values = f32s(&out[&1]);
    assert_eq!(values.len(), out_len);
    for (i, v) in values.iter().enumerate() {
        let want = if i < n { i as f32 + 1.0 } else { -1.0 };
        assert_eq!(*v, want, "output[{i}]");
    }
}

#[test]
fn ragged_grid_leaves_bytes_past_the_grid_untouched() {
    let Some(gpu) = gpu() else { return };
    let buffers = scale_buffers(1000, 1024, 2);
    let dispatch = Dispatch::Threads {
        grid: [1000, 1, 1],
        threadgroup: [64, 1, 1],
    };
    let out = run_compute(gpu, &wgsl(SCALE), &scale_function(), &dispatch, &buffers).unwrap();
    check_scale(&out, 1000, 1024);
    // Every buffer comes back, with exactly the length given.
    assert_eq!(out[&0], buffers[&0]);
    assert_eq!(out[&0].len(), 4002);
    assert_eq!(out[&5], vec![1, 2, 3]);
    assert_eq!(out.len(), 4);
}

#[test]
fn threadgroups_dispatch_runs_whole_groups() {
    let Some(gpu) = gpu() else { return };
    let dispatch = Dispatch::Threadgroups {
        groups: [3, 2, 1],
        threadgroup: [4, 2, 1],
    };
    let (w, h) = (12, 4);
    let buffers = BTreeMap::from([(0, vec![0u8; (w * h + 4) * 4])]);
    let out = run_compute(gpu, &wgsl(PROBE), &probe_function(), &dispatch, &buffers).unwrap();
    let values = u32s(&out[&0]);
    for y in 0..h {
        for x in 0..w {
            assert_eq!(values[y * w + x], (y * 1000 + x + 1) as u32, "({x}, {y})");
        }
    }
    assert_eq!(&values[w * h..], &[3, 2, 12, 4]);
}

#[test]
fn split_dispatch_covers_the_whole_grid() {
    let Some(gpu) = gpu() else { return };
    // 11 x 15 threadgroups, at most 4 per dimension and part: 3 x 4 parts.
    let (w, h) = (41usize, 30usize);
    let dispatch = Dispatch::Threads {
        grid: [w as u32, h as u32, 1],
        threadgroup: [4, 2, 1],
    };
    let buffers = BTreeMap::from([(0, vec![0u8; (w * h + 4) * 4])]);
    let out =
        run_compute_with_max_groups(gpu, &wgsl(PROBE), &probe_function(), &dispatch, &buffers, 4)
            .unwrap();
    let values = u32s(&out[&0]);
    for y in 0..h {
        for x in 0..w {
            assert_eq!(values[y * w + x], (y * 1000 + x + 1) as u32, "({x}, {y})");
        }
    }
    // Every part sees the whole dispatch's threadgroups and grid.
    assert_eq!(&values[w * h..], &[11, 15, 41, 30]);

    // And in one dimension, with a ragged end: 16 groups in 6 parts.
    let buffers = scale_buffers(1000, 1030, 0);
    let dispatch = Dispatch::Threads {
        grid: [1000, 1, 1],
        threadgroup: [64, 1, 1],
    };
    let out =
        run_compute_with_max_groups(gpu, &wgsl(SCALE), &scale_function(), &dispatch, &buffers, 3)
            .unwrap();
    check_scale(&out, 1000, 1030);
}

#[test]
fn missing_and_too_small_buffers_are_errors() {
    let Some(gpu) = gpu() else { return };
    let dispatch = Dispatch::Threads {
        grid: [10, 1, 1],
        threadgroup: [64, 1, 1],
    };
    let function = scale_function();
    let mut buffers = scale_buffers(10, 10, 0);
    buffers.remove(&0);
    let err = run_compute(gpu, &wgsl(SCALE), &function, &dispatch, &buffers).unwrap_err();
    assert!(
        matches!(&err, RunError::MissingBuffer { name, index: 0, .. } if name == "input"),
        "{err}"
    );
    assert!(err.to_string().contains("`input` [[buffer(0)]]"), "{err}");

    let mut buffers = scale_buffers(10, 10, 0);
    buffers.insert(2, f32_bytes(&[2.0]));
    let err = run_compute(gpu, &wgsl(SCALE), &function, &dispatch, &buffers).unwrap_err();
    assert!(
        matches!(
            err,
            RunError::BufferTooSmall {
                index: 2,
                len: 4,
                needed: 8,
                ..
            }
        ),
        "{err}"
    );

    let mut buffers = scale_buffers(10, 10, 0);
    buffers.insert(1, vec![0; 3]);
    let err = run_compute(gpu, &wgsl(SCALE), &function, &dispatch, &buffers).unwrap_err();
    assert!(
        matches!(err, RunError::BufferTooSmall { index: 1, .. }),
        "{err}"
    );

    // An inactive argument needs no buffer.
    let mut buffers = scale_buffers(10, 10, 0);
    buffers.remove(&5);
    assert!(run_compute(gpu, &wgsl(SCALE), &function, &dispatch, &buffers).is_ok());
}

#[test]
fn bad_dispatches_are_errors() {
    let Some(gpu) = gpu() else { return };
    let buffers = scale_buffers(10, 10, 0);
    let run = |function: &FunctionReflection, dispatch: Dispatch| {
        run_compute(gpu, &wgsl(SCALE), function, &dispatch, &buffers).unwrap_err()
    };
    let function = scale_function();
    let threads = |grid: [u32; 3], threadgroup: [u32; 3]| Dispatch::Threads { grid, threadgroup };

    let err = run(&function, threads([10, 1, 1], [32, 1, 1]));
    assert!(matches!(err, RunError::InvalidDispatch(_)), "{err}");
    let err = run(&function, threads([0, 1, 1], [64, 1, 1]));
    assert!(err.to_string().contains("zero-sized grid"), "{err}");

    let mut huge = function.clone();
    let too_many = gpu.limits().max_compute_invocations_per_workgroup + 1;
    huge.workgroup_size = Some([too_many, 1, 1]);
    let err = run(&huge, threads([10, 1, 1], [too_many, 1, 1]));
    assert!(
        err.to_string().contains("over the device's limits"),
        "{err}"
    );
}

#[test]
fn features_and_interface_mismatches_are_errors() {
    let Some(gpu) = gpu() else { return };
    let buffers = scale_buffers(10, 10, 0);
    let dispatch = Dispatch::Threads {
        grid: [10, 1, 1],
        threadgroup: [64, 1, 1],
    };

    let mut function = scale_function();
    function.required_features = vec!["no-such-feature".into()];
    let err = run_compute(gpu, &wgsl(SCALE), &function, &dispatch, &buffers).unwrap_err();
    assert!(matches!(err, RunError::UnknownFeature(_)), "{err}");

    let candidates = [
        "wgpu-ray-query",
        "wgpu-mesh-shader",
        "wgpu-shader-f64",
        "shader-f16",
    ];
    let missing = candidates
        .iter()
        .find(|name| gpu.check_features(&[name.to_string()]).is_err());
    if let Some(name) = missing {
        function.required_features = vec![name.to_string()];
        let err = run_compute(gpu, &wgsl(SCALE), &function, &dispatch, &buffers).unwrap_err();
        assert!(matches!(err, RunError::MissingFeature { .. }), "{err}");
        assert!(err.to_string().contains(name), "{err}");
    }

    // The reflection forgets the dispatch uniform the WGSL uses.
    let mut function = scale_function();
    function.dispatch_binding = None;
    let err = run_compute(gpu, &wgsl(SCALE), &function, &dispatch, &buffers).unwrap_err();
    assert!(matches!(err, RunError::Shader(_)), "{err}");

    // WGSL translated for another size than the reflection claims.
    let mut function = scale_function();
    function.workgroup_size = Some([32, 1, 1]);
    let dispatch = Dispatch::Threads {
        grid: [10, 1, 1],
        threadgroup: [32, 1, 1],
    };
    let err = run_compute(gpu, &wgsl(SCALE), &function, &dispatch, &buffers).unwrap_err();
    assert!(err.to_string().contains("@workgroup_size"), "{err}");
}

#[test]
fn kernel_without_dispatch_uniform_runs_unsplit() {
    let Some(gpu) = gpu() else { return };
    let wgsl = "
        @group(0) @binding(0) var<storage, read_write> data: array<u32>;
        @compute @workgroup_size(8)
        fn fill(@builtin(global_invocation_id) g: vec3<u32>) { data[g.x] = g.x * 3u; }";
    let mut function = kernel(
        "fill",
        [8, 1, 1],
        vec![buffer_arg("data", 0, Some(0), Access::ReadWrite, 4, true)],
        WgslBinding {
            group: 0,
            binding: 1,
        },
    );
    function.dispatch_binding = Some(WgslBinding {
        group: 0,
        binding: 1,
    });
    let buffers = BTreeMap::from([(0, vec![0u8; 64 * 4])]);
    let dispatch = Dispatch::Threadgroups {
        groups: [8, 1, 1],
        threadgroup: [8, 1, 1],
    };
    let out = run_compute(gpu, wgsl, &function, &dispatch, &buffers).unwrap();
    assert_eq!(u32s(&out[&0]), (0..64).map(|i| i * 3).collect::<Vec<u32>>());
    // Splitting would need the uniform: refused rather than wrong.
    let err =
        run_compute_with_max_groups(gpu, wgsl, &function, &dispatch, &buffers, 2).unwrap_err();
    assert!(err.to_string().contains("dispatch uniform"), "{err}");
}

/// The host API (`ComputePipeline`, `run_kernel`-style helpers) needs
/// nothing for arguments the kernel never uses, however they are declared
/// (`constant T&`, a texture, a sampler: Metal's `isActive` is false and
/// Metal needs no binding for them), and still refuses to dispatch
/// without one it reads.
#[test]
fn the_pipeline_helpers_need_nothing_for_inactive_arguments() {
    use msl2wgsl::runner::ComputePipeline;
    use msl2wgsl::{Library, Options};
    use wgpu::util::DeviceExt;
    let Some(gpu) = gpu() else { return };
    let source = r#"
        #include <metal_stdlib>
        using namespace metal;
        kernel void k(device float* out [[buffer(0)]],
                      constant float4x4& unused [[buffer(1)]],
                      constant float& scale [[buffer(2)]],
                      texture2d<float> unused_texture [[texture(0)]],
                      sampler unused_sampler [[sampler(0)]],
                      uint i [[thread_position_in_grid]]) {
            out[i] = scale * float(i);
        }"#;
    let library = Library::from_source("k.metal", source, &Options::default()).unwrap();
    let active: Vec<bool> = library
        .function("k")
        .unwrap()
        .arguments
        .iter()
        .map(|a| a.active)
        .collect();
    assert_eq!(active, [true, false, true, false, false]);
    let pipeline = ComputePipeline::new(gpu, &library, "k").unwrap();
    let buffer = |bytes: &[u8], usage| {
        gpu.device()
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytes,
                usage,
            })
    };
    let out = buffer(
        &[0; 16],
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    );
    let usage = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE;
    let scale = buffer(&2.0f32.to_le_bytes(), usage);
    let mut command = pipeline.encoder();
    command.set_buffer(0, &out, 0).unwrap();
    let err = command
        .dispatch_threads(gpu, [4, 1, 1], [4, 1, 1])
        .unwrap_err();
    assert!(
        matches!(&err, RunError::MissingBuffer { name, index: 2, .. } if name == "scale"),
        "{err}"
    );
    command.set_buffer(2, &scale, 0).unwrap();
    command.dispatch_threads(gpu, [4, 1, 1], [4, 1, 1]).unwrap();
    assert_eq!(f32s(&gpu.read_buffer(&out).unwrap()), [0.0, 2.0, 4.0, 6.0]);
}
