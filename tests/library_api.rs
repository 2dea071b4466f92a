//! The library as a Rust host uses it: the naga IR for
//! `wgpu::ShaderSource::Naga`, the `wgpu` re-export, `from_file` with any
//! path type, and diagnostics that name the library's options.

mod common;

use msl2wgsl::{naga, Library, Options, Target};

const SCALE: &str = r#"
#include <metal_stdlib>
using namespace metal;

kernel void scale(device const float* input [[buffer(0)]],
                  device float* output [[buffer(1)]],
                  uint id [[thread_position_in_grid]]) {
    output[id] = input[id] * 3.0 + 0.5;
}
"#;

/// `from_file` takes a `&str`, a `String` and a `PathBuf` alike.
#[test]
fn from_file_takes_any_path_type() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("scale.metal");
    std::fs::write(&path, SCALE).expect("the shader is written");
    let as_str = path.to_str().expect("a UTF-8 temporary path");
    let owned: String = as_str.into();
    let options = Options::default();
    for library in [
        Library::from_file(as_str, &options),
        Library::from_file(owned, &options),
        Library::from_file(&path, &options),
        Library::from_file(path.clone(), &options),
    ] {
        let library = library.expect("the file translates");
        assert_eq!(library.function_names(), ["scale"]);
    }
}

/// The IR has one entry point per function, in the order of `functions()`,
/// and its `ModuleInfo` is that of the same module.
#[test]
fn module_gives_the_validated_ir() {
    let options = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    let library = Library::from_source("scale.metal", SCALE, &options).unwrap();
    let (module, info) = library.module();
    assert_eq!(module.entry_points.len(), library.functions().len());
    assert_eq!(module.entry_points[0].name, library.functions()[0].name);
    assert_eq!(module.entry_points[0].stage, naga::ShaderStage::Compute);
    // The IR writes the same WGSL as the library gives.
    let text = naga::back::wgsl::write_string(module, info, naga::back::wgsl::WriterFlags::empty())
        .unwrap();
    assert!(
        library.wgsl().contains(&text),
        "the IR's WGSL:\n{text}\nthe library's:\n{}",
        library.wgsl()
    );
}

/// A wgpu host builds a compute pipeline from `ShaderSource::Naga`, with
/// the bindings reflection gives, and gets what the kernel computes.
#[cfg(feature = "runner")]
#[test]
fn naga_ir_runs_as_a_wgpu_compute_pipeline() {
    use msl2wgsl::wgpu;
    use wgpu::util::DeviceExt;

    let Some(gpu) = common::gpu() else { return };
    let options = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    let library = Library::from_source("scale.metal", SCALE, &options).unwrap();
    let function = library.function("scale").unwrap();
    let (module, info) = library.module();
    let device = gpu.device();
    let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("scale"),
        source: wgpu::ShaderSource::Naga(std::borrow::Cow::Owned(module.clone())),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("scale"),
        layout: None,
        module: &shader,
        entry_point: Some(&module.entry_points[0].name),
        compilation_options: Default::default(),
        cache: None,
    });
    let n = 256u32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 7.0).collect();
    let input_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("input"),
        contents: &common::f32_bytes(&input),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let output_buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("output"),
        size: u64::from(n) * 4,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let binding_of = |index: u32| {
        function
            .arguments
            .iter()
            .find(|a| a.index == index)
            .and_then(|a| a.binding)
            .expect("the buffer has a WGSL binding")
    };
    let (input_at, output_at) = (binding_of(0), binding_of(1));
    assert_eq!(input_at.group, output_at.group);
    let workgroup = function.workgroup_size.expect("a kernel's workgroup size")[0];
    // The dispatch uniform (Metal's grid), bound when the entry point reads
    // it: the `ModuleInfo` says which globals an entry point uses.
    let groups = n.div_ceil(workgroup);
    let dispatch = msl2wgsl::reflect::DispatchParams {
        grid_size: [n, 1, 1],
        group_offset: [0; 3],
        threadgroups: [groups, 1, 1],
    };
    let dispatch_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("dispatch"),
        contents: &dispatch.to_bytes(),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let dispatch_used = function.dispatch_binding.is_some_and(|at| {
        module.global_variables.iter().any(|(handle, global)| {
            global.binding
                == Some(naga::ResourceBinding {
                    group: at.group,
                    binding: at.binding,
                })
                && !info.get_entry_point(0)[handle].is_empty()
        })
    });
    let mut entries = vec![
        wgpu::BindGroupEntry {
            binding: input_at.binding,
            resource: input_buffer.as_entire_binding(),
        },
        wgpu::BindGroupEntry {
            binding: output_at.binding,
            resource: output_buffer.as_entire_binding(),
        },
    ];
    if let (true, Some(at)) = (dispatch_used, function.dispatch_binding) {
        assert_eq!(at.group, input_at.group);
        entries.push(wgpu::BindGroupEntry {
            binding: at.binding,
            resource: dispatch_buffer.as_entire_binding(),
        });
    }
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(input_at.group),
        entries: &entries,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(input_at.group, &group, &[]);
        pass.dispatch_workgroups(groups, 1, 1);
    }
    gpu.queue().submit([encoder.finish()]);
    let output = common::f32s(&gpu.read_buffer(&output_buffer).unwrap());
    let expected: Vec<f32> = input.iter().map(|x| x * 3.0 + 0.5).collect();
    assert_eq!(output, expected);
}

/// A library error that names a command-line flag names the library's
/// option too: a Rust host has no flags to pass.
#[test]
fn library_errors_name_the_library_options() {
    let cases: [(&str, Options, &str); 3] = [
        (
            "kernel void k(texture2d<float, access::read_write> t [[texture(0)]],
                           uint2 id [[thread_position_in_grid]]) {
                 t.write(t.read(id) * 2.0, id);
             }",
            Options {
                texture_formats: vec![(0, "rgba8unorm".into())],
                ..Options::default()
            },
            "`Options::texture_formats`",
        ),
        (
            "kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
                 out[i] = simd_sum(i);
                 simdgroup_barrier(mem_flags::mem_device);
             }",
            Options {
                simd: msl2wgsl::SimdGroups::Native,
                ..Options::default()
            },
            "`Target::Wgpu`",
        ),
        (
            "[[max_total_threads_per_threadgroup(32)]]
             kernel void k(device float* out [[buffer(0)]],
                           uint id [[thread_position_in_grid]]) { out[id] = 1.0; }",
            Options {
                threadgroup_size: Some([64, 1, 1]),
                ..Options::default()
            },
            "`Options::threadgroup_size`",
        ),
    ];
    for (body, options, option) in cases {
        let source = format!("#include <metal_stdlib>\nusing namespace metal;\n{body}\n");
        let failure = Library::from_source("k.metal", &source, &options)
            .expect_err("the kernel needs an option");
        let text = failure.render();
        assert!(text.contains(option), "{option} not named in:\n{text}");
    }
}

/// The build-script helper writes WGSL and reflection per shader, keeping
/// sub-folders, and asks Cargo to rerun for the folder, every shader and
/// every file they include (also through another header).
#[test]
fn build_helper_translates_a_folder_with_rerun_lines() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (src, out) = (dir.path().join("shaders"), dir.path().join("out"));
    std::fs::create_dir_all(src.join("filters")).unwrap();
    std::fs::write(
        src.join("types.h"),
        "#include \"limits.h\"\nstruct P { float x; };\n",
    )
    .unwrap();
    std::fs::write(src.join("limits.h"), "#define SCALE 2.0\n").unwrap();
    std::fs::write(src.join("notes.txt"), "not a shader").unwrap();
    std::fs::write(
        src.join("double.metal"),
        "#include \"types.h\"\nkernel void twice(device P* p [[buffer(0)]], uint i [[thread_position_in_grid]]) { p[i].x *= SCALE; }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("filters/negate.metal"),
        "kernel void negate(device float* v [[buffer(0)]], uint i [[thread_position_in_grid]]) { v[i] = -v[i]; }\n",
    )
    .unwrap();
    let mut cargo = Vec::new();
    let done = msl2wgsl::build::translate_dir_to(&src, &out, &Options::default(), &mut cargo)
        .expect("the folder translates");
    assert_eq!(done.len(), 2);
    let wgsl = std::fs::read_to_string(out.join("double.wgsl")).unwrap();
    assert!(wgsl.contains("fn twice"), "{wgsl}");
    let nested = std::fs::read_to_string(out.join("filters/negate.wgsl")).unwrap();
    assert!(nested.contains("fn negate"), "{nested}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("double.json")).unwrap()).unwrap();
    assert_eq!(json["functions"][0]["name"], "twice");
    assert!(!out.join("notes.wgsl").exists());
    let lines = String::from_utf8(cargo).unwrap();
    let rerun: Vec<&str> = lines
        .lines()
        .filter_map(|l| l.strip_prefix("cargo:rerun-if-changed="))
        .collect();
    for path in [
        src.clone(),
        src.join("double.metal"),
        src.join("types.h"),
        src.join("limits.h"),
        src.join("filters/negate.metal"),
    ] {
        let path = path.display().to_string();
        assert!(rerun.contains(&path.as_str()), "{path} not in:\n{lines}");
    }
    // The headers are dependencies of the shader that includes them only.
    let double = done
        .iter()
        .find(|t| t.source.ends_with("double.metal"))
        .unwrap();
    assert_eq!(double.dependencies.len(), 3, "{:?}", double.dependencies);
    let negate = done
        .iter()
        .find(|t| t.source.ends_with("negate.metal"))
        .unwrap();
    assert_eq!(negate.dependencies, [src.join("filters/negate.metal")]);
}

/// A shader that does not translate fails the build with its diagnostics,
/// and Cargo still reruns when it or its headers change.
#[test]
fn build_helper_reports_failures_and_still_tracks_them() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (src, out) = (dir.path().join("shaders"), dir.path().join("out"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("bad.h"), "#define BROKEN undeclared_name\n").unwrap();
    std::fs::write(
        src.join("bad.metal"),
        "#include \"bad.h\"\nkernel void k(device float* v [[buffer(0)]]) { v[0] = BROKEN; }\n",
    )
    .unwrap();
    let mut cargo = Vec::new();
    let error = msl2wgsl::build::translate_dir_to(&src, &out, &Options::default(), &mut cargo)
        .expect_err("the shader does not translate");
    let text = format!("{error:?}");
    assert!(text.contains("bad.metal:2:"), "{text}");
    assert!(text.contains("undeclared_name"), "{text}");
    let lines = String::from_utf8(cargo).unwrap();
    for file in ["bad.metal", "bad.h"] {
        let line = format!("cargo:rerun-if-changed={}", src.join(file).display());
        assert!(lines.contains(&line), "{line} not in:\n{lines}");
    }
}

/// Vertex and fragment functions whose bodies return on every path get no
/// unreachable `return T();` after them (browsers warn for each); one that
/// may fall off its end keeps it. The pair still draws what it says.
#[cfg(feature = "runner")]
#[test]
fn stage_functions_end_without_an_unreachable_return() {
    use msl2wgsl::runner::{render_library, RenderResources};
    const SOURCE: &str = r#"
#include <metal_stdlib>
using namespace metal;
struct V { float4 position [[position]]; float2 uv; };
vertex V cover(uint vid [[vertex_id]]) {
    float2 p = float2(vid == 1 ? 3.0 : -1.0, vid == 2 ? 3.0 : -1.0);
    V out;
    out.position = float4(p, 0.0, 1.0);
    out.uv = p * 0.5 + 0.5;
    return out;
}
fragment float4 halves(V in [[stage_in]]) {
    if (in.position.x < 8.0) {
        return float4(1.0, 0.0, 0.0, 1.0);
    } else {
        return float4(0.0, 1.0, 0.0, 1.0);
    }
}
fragment float4 maybe(V in [[stage_in]]) {
    if (in.position.x < 8.0) {
        return float4(1.0);
    }
}
"#;
    let library = Library::from_source("halves.metal", SOURCE, &Options::default()).unwrap();
    let body = |name: &str| {
        library
            .function_wgsl(name)
            .expect("the function translates")
    };
    for name in ["cover", "halves"] {
        let wgsl = body(name);
        assert!(
            !wgsl.contains("return V();") && !wgsl.contains("return vec4<f32>();"),
            "{name} ends in an unreachable return:\n{wgsl}"
        );
    }
    assert!(body("maybe").contains("return vec4<f32>();"));
    let Some(gpu) = common::gpu() else { return };
    let resources = RenderResources::new(16, 16, 3);
    let image = &render_library(gpu, &library, "cover", "halves", &resources).unwrap()[0];
    for (x, want) in [
        (0u32, [255u8, 0, 0, 255]),
        (7, [255, 0, 0, 255]),
        (8, [0, 255, 0, 255]),
        (15, [0, 255, 0, 255]),
    ] {
        let k = ((5 * image.width + x) * 4) as usize;
        assert_eq!(image.data[k..k + 4], want, "pixel ({x}, 5)");
    }
}

/// The byte-in/byte-out runner refuses a buffer at an index the kernel
/// has no argument for, naming the indices it has; the same buffers
/// without it run.
#[cfg(feature = "runner")]
#[test]
fn run_kernel_refuses_a_buffer_the_kernel_does_not_have() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let Some(gpu) = common::gpu() else { return };
    let dispatch = Dispatch::Threads {
        grid: [4, 1, 1],
        threadgroup: [64, 1, 1],
    };
    let input = common::f32_bytes(&[1.0, 2.0, 3.0, 4.0]);
    let mut buffers: BTreeMap<u32, Vec<u8>> = [(0, input), (1, vec![0; 16])].into();
    let run = |buffers: &BTreeMap<u32, Vec<u8>>| {
        let options = Options::default();
        run_kernel(
            gpu,
            "scale.metal",
            SCALE,
            &options,
            "scale",
            &dispatch,
            buffers,
        )
    };
    let out = run(&buffers).expect("the kernel runs");
    assert_eq!(common::f32s(&out[&1]), [3.5, 6.5, 9.5, 12.5]);
    buffers.insert(7, vec![0; 16]);
    let error = run(&buffers).expect_err("no [[buffer(7)]]").to_string();
    assert!(
        error.contains("`scale` has no [[buffer(7)]] argument")
            && error.contains("its buffer arguments are [[buffer(0)]], [[buffer(1)]]"),
        "{error}"
    );
}

/// What WebGPU itself lacks has the code E0402 (no WebGPU equivalent),
/// not E0401 (not handled by this translator): a port must be redesigned,
/// not waited for.
#[test]
fn features_webgpu_lacks_are_e0402() {
    let cases = [
        (
            // Framebuffer fetch through the `[[stage_in]]` struct.
            "struct In { float4 p [[position]]; float4 dst [[color(0)]]; };
             fragment float4 blend(In in [[stage_in]]) { return in.dst * 0.5; }",
            "framebuffer fetch",
        ),
        (
            // A vertex function run as a compute dispatch (rasterization
            // disabled) still may not wait at a barrier.
            "vertex void capture(uint vid [[vertex_id]], device float* out [[buffer(0)]]) {
                 out[vid] = float(vid);
                 threadgroup_barrier(mem_flags::mem_device);
             }",
            "no WebGPU equivalent in vertex function",
        ),
    ];
    for (body, what) in cases {
        let source = format!("#include <metal_stdlib>\nusing namespace metal;\n{body}\n");
        let failure = Library::from_source("k.metal", &source, &Options::default())
            .expect_err("WebGPU cannot do it");
        let first = &failure.diagnostics.0[0];
        assert_eq!(first.code().as_str(), "E0402", "{}", failure.render());
        assert!(failure.render().contains(what), "{}", failure.render());
    }
}

/// `Options::one_part_dispatch`: kernels read no `group_offset` from the
/// dispatch uniform (and declare no override for it: any override makes
/// wgpu process overrides, which rejects some valid modules).
#[test]
fn one_part_dispatches_read_no_group_offset() {
    let source = "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = 1.0f; }";
    let translate = |one_part_dispatch| {
        let options = msl2wgsl::Options {
            one_part_dispatch,
            ..msl2wgsl::Options::default()
        };
        msl2wgsl::Library::from_source("k.metal", source, &options)
            .unwrap()
            .wgsl()
            .to_string()
    };
    assert!(translate(false).contains("metal_dispatch.group_offset"));
    let one_part = translate(true);
    assert!(
        !one_part.contains("metal_dispatch.group_offset"),
        "{one_part}"
    );
    assert!(!one_part.contains("override"), "{one_part}");
}
