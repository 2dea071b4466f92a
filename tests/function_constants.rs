//! Function constants (`[[function_constant(n)]]`, `is_function_constant_defined`)
//! as WGSL `override`s: translation, reflection, diagnostics, and runs with
//! different constant values on the GPU.

// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

#[cfg(feature = "runner")]
use msl2wgsl::runner::{run_compute_resources, Dispatch, Resources, RunError};
use msl2wgsl::{Library, Options};
use std::collections::BTreeMap;

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// A kernel specialised by a required `bool` and `float`, and an optional
/// `int` with a default computed through `is_function_constant_defined`.
const SCALE: &str = "
constant bool use_fast_path [[function_constant(0)]];
constant float scale [[function_constant(1)]];
constant int bias_value [[function_constant(7)]];
constant bool has_bias = is_function_constant_defined(bias_value);
constant int bias = has_bias ? bias_value : 100;

float fast(float x) { return x * scale; }

kernel void scale_kernel(device const float* in [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         uint id [[thread_position_in_grid]]) {
    float v = in[id];
    if (use_fast_path) {
        v = fast(v);
    } else {
        v = v + scale;
    }
    out[id] = v + float(bias);
}

kernel void plain(device float* out [[buffer(0)]], uint id [[thread_position_in_grid]]) {
    out[id] = 1.0;
}
";

fn library(body: &str) -> Library {
    let src = format!("{PRELUDE}{body}");
    Library::from_source("t.metal", &src, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()))
}

/// Runs kernel `f` of `lib` over `n` threads in threadgroups of its own
/// size.
#[cfg(feature = "runner")]
fn run_threads(
    gpu: &msl2wgsl::runner::Gpu,
    lib: &Library,
    f: &msl2wgsl::reflect::FunctionReflection,
    n: u32,
    resources: &Resources,
) -> Result<msl2wgsl::runner::Outputs, RunError> {
    let dispatch = Dispatch::Threads {
        grid: [n, 1, 1],
        threadgroup: f.workgroup_size.unwrap(),
    };
    run_compute_resources(gpu, lib.wgsl(), f, &dispatch, resources)
}

/// What `scale_kernel` computes for `x`.
#[cfg(feature = "runner")]
fn reference(x: f32, fast: bool, scale: f32, bias: Option<i32>) -> f32 {
    let v = if fast { x * scale } else { x + scale };
    v + bias.unwrap_or(100) as f32
}

#[test]
fn function_constants_become_overrides_with_metal_indices() {
    let lib = library(SCALE);
    let wgsl = lib.wgsl();
    // Required: a zero default all the same, so that a WebGPU pipeline
    // can be made without constants (reflection still says `required`).
    assert!(
        wgsl.contains("@id(0) override use_fast_path: bool = bool();"),
        "{wgsl}"
    );
    assert!(
        wgsl.contains("@id(1) override scale: f32 = f32();"),
        "{wgsl}"
    );
    // Optional: a zero default and the companion flag.
    assert!(
        wgsl.contains("@id(7) override bias_value: i32 = "),
        "{wgsl}"
    );
    assert!(
        wgsl.contains("@id(65535) override bias_value_is_defined: bool = false;"),
        "{wgsl}"
    );
    // The emitted WGSL re-parses and validates (the library checks it too).
    let module = naga::front::wgsl::parse_str(wgsl).expect("parses");
    naga::valid::Validator::new(Default::default(), naga::valid::Capabilities::all())
        .validate(&module)
        .expect("validates");
}

#[test]
fn reflection_lists_the_constants_each_function_reads() {
    let lib = library(SCALE);
    let f = lib.function("scale_kernel").unwrap();
    let json = serde_json::to_value(f).unwrap();
    let constants = json["functionConstants"].as_array().expect("listed");
    let summary: Vec<(String, u64, String, bool)> = constants
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["index"].as_u64().unwrap(),
                c["dataType"].as_str().unwrap().to_string(),
                c["required"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("use_fast_path".into(), 0, "bool".into(), true),
            ("scale".into(), 1, "float".into(), true),
            ("bias_value".into(), 7, "int".into(), false),
        ]
    );
    assert_eq!(constants[2]["definedId"], 65535);
    assert!(constants[0].get("definedId").is_none());
    // A function reading none has no list.
    let plain = serde_json::to_value(lib.function("plain").unwrap()).unwrap();
    assert!(plain.get("functionConstants").is_none());
}

#[test]
#[cfg(feature = "runner")]
fn kernel_runs_with_different_constant_values() {
    let Some(gpu) = common::gpu() else { return };
    let lib = library(SCALE);
    let f = lib.function("scale_kernel").unwrap();
    let n = 67u32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
    let settings: [(bool, f32, Option<i32>); 3] = [
        (true, 3.0, None),
        (false, -1.5, Some(-7)),
        (true, 0.25, Some(2)),
    ];
    for (fast, scale, bias) in settings {
        let mut constants = BTreeMap::from([(0, f64::from(u8::from(fast))), (1, f64::from(scale))]);
        if let Some(b) = bias {
            constants.insert(7, f64::from(b));
        }
        let resources = Resources {
            buffers: BTreeMap::from([(0, common::f32_bytes(&input)), (1, vec![0; 4 * n as usize])]),
            constants,
            ..Default::default()
        };
        let out = run_threads(gpu, &lib, f, n, &resources).unwrap_or_else(|e| panic!("{e}"));
        let got = common::f32s(&out.buffers[&1]);
        let want: Vec<f32> = input
            .iter()
            .map(|&x| reference(x, fast, scale, bias))
            .collect();
        assert_eq!(got, want, "fast={fast} scale={scale} bias={bias:?}");
    }
}

#[test]
#[cfg(feature = "runner")]
fn a_required_constant_without_a_value_is_refused_before_running() {
    let lib = library(SCALE);
    let f = lib.function("scale_kernel").unwrap();
    let Some(gpu) = common::gpu() else { return };
    let resources = Resources {
        buffers: BTreeMap::from([(0, vec![0; 16]), (1, vec![0; 16])]),
        constants: BTreeMap::from([(0, 1.0)]),
        ..Default::default()
    };
    let err = run_threads(gpu, &lib, f, 4, &resources).unwrap_err();
    assert!(
        matches!(&err, RunError::MissingFunctionConstant { name, index: 1, .. } if name == "scale"),
        "{err}"
    );
}

#[test]
#[cfg(feature = "runner")]
fn values_for_constants_a_function_does_not_read_are_ignored() {
    let Some(gpu) = common::gpu() else { return };
    let lib = library(SCALE);
    let f = lib.function("plain").unwrap();
    let resources = Resources {
        buffers: BTreeMap::from([(0, vec![0; 16])]),
        constants: BTreeMap::from([(0, 1.0), (1, 2.0), (42, 3.0)]),
        ..Default::default()
    };
    let out = run_threads(gpu, &lib, f, 4, &resources).unwrap();
    assert_eq!(common::f32s(&out.buffers[&0]), vec![1.0; 4]);
}

/// A normalisation in MLX's shape: whether a weight buffer applies, and
/// an offset, are required function constants the host always sets.
const NORM_LIKE: &str = "
constant bool has_w [[function_constant(20)]];
constant int offset [[function_constant(21)]];

kernel void norm_like(const device float* x [[buffer(0)]],
                      const device float* w [[buffer(1)]],
                      device float* out [[buffer(2)]],
                      uint i [[thread_position_in_grid]]) {
    float v = x[i] + float(offset);
    if (has_w) {
        v *= w[i];
    }
    out[i] = v;
}
";

/// Creating a pipeline from the WGSL with no pipeline constants succeeds
/// (wgpu refuses an override with neither a default nor a value), and a
/// host that sets the constants computes with its values. Run through
/// wgpu directly: the runner itself refuses to run without a required
/// constant, as Metal refuses to make the function.
#[test]
#[cfg(feature = "runner")]
fn required_constants_let_a_pipeline_be_made_without_constants() {
    use common::wgsl::{dispatch, Bound};
    use msl2wgsl::reflect::DispatchParams;
    use msl2wgsl::wgpu::BufferUsages;
    let Some(gpu) = common::gpu() else { return };
    let lib = library(NORM_LIKE);
    let f = lib.function("norm_like").unwrap();
    assert!(f.function_constants.iter().all(|c| c.required));
    let wg = f.workgroup_size.unwrap();
    let n = wg[0] * 2;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
    let w: Vec<f32> = (0..n).map(|i| 1.0 + (i % 5) as f32).collect();
    let (xb, wb) = (common::f32_bytes(&x), common::f32_bytes(&w));
    let zeros = vec![0u8; 4 * n as usize];
    let params = DispatchParams {
        grid_size: [n, 1, 1],
        group_offset: [0; 3],
        threadgroups: [2, 1, 1],
    }
    .to_bytes();
    let binding = |k: usize| f.arguments[k].binding.expect("bound").binding;
    let mut buffers = vec![
        Bound {
            binding: binding(0),
            contents: &xb,
            usage: BufferUsages::STORAGE,
        },
        Bound {
            binding: binding(1),
            contents: &wb,
            usage: BufferUsages::STORAGE,
        },
        Bound {
            binding: binding(2),
            contents: &zeros,
            usage: BufferUsages::STORAGE,
        },
    ];
    if let Some(d) = f.dispatch_binding {
        buffers.push(Bound {
            binding: d.binding,
            contents: &params,
            usage: BufferUsages::UNIFORM,
        });
    }
    let entry = &f.wgsl_entry_point;
    // Unset: the pipeline is made and runs (the values are zero).
    let out = dispatch(gpu, lib.wgsl(), entry, &[], &buffers, [2, 1, 1]);
    assert_eq!(common::f32s(&out[2]), x, "unset constants");
    // Set: the host's values.
    for (has_w, offset) in [(true, 3), (false, -2)] {
        let constants = [
            ("20", f64::from(u8::from(has_w))),
            ("21", f64::from(offset)),
        ];
        let out = dispatch(gpu, lib.wgsl(), entry, &constants, &buffers, [2, 1, 1]);
        let want: Vec<f32> = (0..n as usize)
            .map(|i| {
                let v = x[i] + offset as f32;
                if has_w {
                    v * w[i]
                } else {
                    v
                }
            })
            .collect();
        assert_eq!(
            common::f32s(&out[2]),
            want,
            "has_w = {has_w}, offset = {offset}"
        );
    }
}

// ---- diagnostics ----------------------------------------------------------

/// Asserts that translating `body` (after the two-line prelude, so line
/// numbers start at 3) fails first with `t.metal:LINE:COL: error: MESSAGE...`.
fn assert_error(body: &str, line: usize, col: usize, message: &str) {
    let src = format!("{PRELUDE}{body}");
    let text = match Library::from_source("t.metal", &src, &Options::default()) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.render(),
    };
    let first = text.lines().next().unwrap_or_default();
    let want = format!("t.metal:{line}:{col}: error: {message}");
    assert!(first.starts_with(&want), "want `{want}`\n got:\n{text}");
}

const USE: &str = "kernel void k(device float* o [[buffer(0)]]) { o[0] = 1; }\n";

#[test]
fn matrix_function_constant_is_refused() {
    assert_error(
        &format!("constant float2x2 v [[function_constant(0)]];\n{USE}"),
        3,
        1,
        "function constants of type `float2x2` are not supported: WGSL overrides are scalars",
    );
}

#[test]
fn long_vector_function_constant_is_refused() {
    assert_error(
        &format!("constant long2 v [[function_constant(0)]];\n{USE}"),
        3,
        1,
        "function constants of type `long2` are not supported: WGSL overrides cannot be 64-bit",
    );
}

#[test]
fn function_constant_without_index_is_refused() {
    assert_error(
        &format!("constant int v [[function_constant]];\n{USE}"),
        3,
        18,
        "`[[function_constant(n)]]` needs one index",
    );
}

#[test]
fn function_constant_index_out_of_range_is_refused() {
    assert_error(
        &format!("constant int v [[function_constant(70000)]];\n{USE}"),
        3,
        36,
        "a function constant index must be an integer from 0 to 65535",
    );
}

#[test]
fn duplicate_function_constant_index_is_refused() {
    assert_error(
        &format!(
            "constant int a [[function_constant(3)]];\nconstant int b [[function_constant(3)]];\n{USE}"
        ),
        4,
        18,
        "function constant index 3 is already used by `a`",
    );
}

#[test]
fn initialized_function_constant_is_refused() {
    assert_error(
        &format!("constant int v [[function_constant(0)]] = 4;\n{USE}"),
        3,
        43,
        "function constant `v` cannot have an initializer: the host sets its value",
    );
}

/// An array size or a `case` label needs the value at translation: without
/// one the kernel waits for it (W0415, `function_constants_specialized.rs`
/// has the runs), saying how to give it, and its half-made bindings are
/// not left in the WGSL.
#[test]
fn function_constant_as_array_size_or_case_label_waits_for_its_value() {
    for (body, line, col) in [
        (
            "constant int n [[function_constant(0)]];\n\
             kernel void k(device float* o [[buffer(0)]]) {\n  float a[n];\n  a[0] = 1;\n  o[0] = a[0];\n}\n",
            5,
            11,
        ),
        (
            "constant int n [[function_constant(0)]];\n\
             kernel void k(device int* o [[buffer(0)]]) {\n  switch (o[0]) {\n    case n: o[1] = 1; break;\n    default: break;\n  }\n}\n",
            6,
            10,
        ),
    ] {
        let lib = library(body);
        let warnings = lib.warnings();
        assert!(
            warnings.starts_with(&format!("t.metal:{line}:{col}: warning: `k` is left out of the WGSL: the value of function constant `n` is needed here at translation")),
            "{warnings}"
        );
        assert!(warnings.contains("`--function-constant NAME=VALUE`"), "{warnings}");
        assert!(lib.function("k").unwrap().awaits_function_constants());
        assert!(!lib.wgsl().contains("var"), "{}", lib.wgsl());
    }
}

#[test]
fn is_function_constant_defined_needs_a_function_constant() {
    assert_error(
        "constant int n = 3;\n\
         kernel void k(device float* o [[buffer(0)]]) {\n  o[0] = is_function_constant_defined(n) ? 1 : 0;\n}\n",
        5,
        39,
        "`n` is not a function constant",
    );
}

#[test]
fn argument_conditional_on_a_derived_constant_is_refused() {
    assert_error(
        "constant bool has_b [[function_constant(0)]];\n\
         constant bool no_b = has_b && true;\n\
         kernel void k(device float* o [[buffer(0), function_constant(no_b)]]) { o[0] = 1; }\n",
        5,
        62,
        "arguments conditional on `no_b`, a constant computed from function constants, are not supported yet",
    );
}

#[test]
fn argument_conditional_on_a_plain_constant_is_refused() {
    assert_error(
        "constant bool has_b = true;\n\
         kernel void k(device float* o [[buffer(0), function_constant(has_b)]]) { o[0] = 1; }\n",
        4,
        62,
        "`has_b` is not a scalar function constant",
    );
}

#[test]
fn conditional_builtin_argument_is_refused() {
    assert_error(
        "constant bool has_b [[function_constant(0)]];\n\
         kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid, function_constant(has_b)]]) { o[i] = 1; }\n",
        4,
        80,
        "conditional arguments other than buffers, textures and samplers",
    );
}

/// The condition on a parameter of an ordinary function (Apple's samples
/// repeat the entry point's attributes on helpers) has no effect.
#[test]
fn condition_on_a_helper_parameter_is_accepted() {
    let lib = library(
        "constant bool has_b [[function_constant(0)]];\n\
         float get(constant float& b [[function_constant(has_b)]]) { return has_b ? b : 0.0; }\n\
         kernel void k(device float* o [[buffer(0)]], constant float& b [[buffer(1), function_constant(has_b)]]) { o[0] = get(b); }\n",
    );
    assert!(
        lib.wgsl().contains("@id(0) override has_b: bool = bool();"),
        "{}",
        lib.wgsl()
    );
}

// ---- conditional arguments ----------------------------------------------

/// A kernel with a conditional buffer and a conditional texture, each read
/// only behind its constant, and a conditional sampler-free texture read
/// whose constant is an integer (nonzero: present), named with `::` as
/// Apple's samples do.
const CONDITIONAL: &str = "
constant bool has_bias [[function_constant(0)]];
constant bool has_weights [[function_constant(1)]];
constant uint mode [[function_constant(2)]];

kernel void cond(device const float* in [[buffer(0)]],
                 device float* out [[buffer(1)]],
                 constant float& bias [[buffer(2), function_constant(has_bias)]],
                 texture2d<float> weights [[function_constant(has_weights), texture(0)]],
                 device const float* extra [[buffer(3), function_constant(::mode)]],
                 uint id [[thread_position_in_grid]]) {
    float v = in[id] * 2.0;
    if (has_bias) {
        v += bias;
    }
    if (has_weights) {
        v *= weights.read(uint2(id % 4, 0)).r;
    }
    switch (mode) {
        case 0: break;
        default: v -= extra[id % 2]; break;
    }
    out[id] = v;
}
";

/// What `cond` computes for element `id` of `x`.
#[cfg(feature = "runner")]
fn conditional_reference(
    id: usize,
    x: f32,
    bias: Option<f32>,
    weights: Option<&[f32]>,
    extra: Option<&[f32]>,
) -> f32 {
    let mut v = x * 2.0;
    if let Some(b) = bias {
        v += b;
    }
    if let Some(w) = weights {
        v *= w[id % 4];
    }
    if let Some(e) = extra {
        v -= e[id % 2];
    }
    v
}

#[test]
fn reflection_names_the_constant_of_each_conditional_argument() {
    let lib = library(CONDITIONAL);
    let f = lib.function("cond").unwrap();
    let json = serde_json::to_value(f).unwrap();
    let constants = json["functionConstants"].as_array().expect("listed");
    let arguments: Vec<(String, serde_json::Value)> = constants
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["arguments"].clone(),
            )
        })
        .collect();
    assert_eq!(
        arguments,
        vec![
            (
                "has_bias".into(),
                serde_json::json!([{"name": "bias", "type": "buffer", "index": 2}])
            ),
            (
                "has_weights".into(),
                serde_json::json!([{"name": "weights", "type": "texture", "index": 0}])
            ),
            (
                "mode".into(),
                serde_json::json!([{"name": "extra", "type": "buffer", "index": 3}])
            ),
        ]
    );
    // The arguments keep their bindings and are used (behind the constant).
    let by_name = |n: &str| f.arguments.iter().find(|a| a.name == n).unwrap();
    for name in ["bias", "weights", "extra"] {
        assert!(by_name(name).active, "{name}");
        assert!(by_name(name).binding.is_some(), "{name}");
    }
    // Metal's `isActive` once specialised.
    let on = BTreeMap::from([(0, 1.0), (1, 0.0), (2, 3.0)]);
    assert!(f.argument_active(by_name("bias"), &on));
    assert!(!f.argument_active(by_name("weights"), &on));
    assert!(f.argument_active(by_name("extra"), &on));
    assert!(f.argument_active(by_name("in"), &on));
    assert_eq!(
        f.argument_condition(by_name("bias")).unwrap().name,
        "has_bias"
    );
    assert!(f.argument_condition(by_name("out")).is_none());
}

/// A constant that only conditions an argument (the body never reads it)
/// is still one the function needs: Metal decides with it whether the
/// argument exists.
#[test]
fn a_constant_only_conditioning_an_argument_is_listed() {
    let lib = library(
        "constant bool has_b [[function_constant(5)]];\n\
         kernel void k(device float* o [[buffer(0)]], device float* b [[buffer(1), function_constant(has_b)]]) { o[0] = 1; }\n",
    );
    let f = lib.function("k").unwrap();
    let json = serde_json::to_value(f).unwrap();
    assert_eq!(json["functionConstants"][0]["name"], "has_b");
    assert_eq!(json["functionConstants"][0]["arguments"][0]["name"], "b");
    assert!(
        lib.wgsl().contains("@id(5) override has_b: bool = bool();"),
        "{}",
        lib.wgsl()
    );
    // Per-function WGSL keeps the override too (the runner sets it).
    let one = lib.function_wgsl("k").unwrap();
    assert!(
        one.contains("@id(5) override has_b: bool = bool();"),
        "{one}"
    );
}

#[test]
#[cfg(feature = "runner")]
fn conditional_arguments_run_with_and_without_their_resources() {
    use msl2wgsl::runner::TextureData;
    let Some(gpu) = common::gpu() else { return };
    let lib = library(CONDITIONAL);
    let f = lib.function("cond").unwrap();
    let n = 37u32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 2.0).collect();
    let weights = [0.5f32, 2.0, -1.0, 4.0];
    let extra = [1.5f32, -0.75];
    let bias = 3.25f32;
    for (has_bias, has_weights, mode) in [
        (false, false, 0u32),
        (true, false, 0),
        (false, true, 7),
        (true, true, 1),
    ] {
        let constants = BTreeMap::from([
            (0, f64::from(u8::from(has_bias))),
            (1, f64::from(u8::from(has_weights))),
            (2, f64::from(mode)),
        ]);
        // Only the arguments that exist are given, as a Metal host would.
        let mut buffers =
            BTreeMap::from([(0, common::f32_bytes(&input)), (1, vec![0; 4 * n as usize])]);
        if has_bias {
            buffers.insert(2, common::f32_bytes(&[bias]));
        }
        if mode != 0 {
            buffers.insert(3, common::f32_bytes(&extra));
        }
        let mut textures = BTreeMap::new();
        if has_weights {
            let data = TextureData::new_2d(
                wgpu::TextureFormat::R32Float,
                4,
                1,
                common::f32_bytes(&weights),
            );
            textures.insert(0, data);
        }
        let resources = Resources {
            buffers,
            textures,
            constants,
            ..Default::default()
        };
        let out = run_threads(gpu, &lib, f, n, &resources).unwrap_or_else(|e| panic!("{e}"));
        let got = common::f32s(&out.buffers[&1]);
        let want: Vec<f32> = input
            .iter()
            .enumerate()
            .map(|(id, &x)| {
                conditional_reference(
                    id,
                    x,
                    has_bias.then_some(bias),
                    has_weights.then_some(&weights[..]),
                    (mode != 0).then_some(&extra[..]),
                )
            })
            .collect();
        assert_eq!(
            got, want,
            "has_bias={has_bias} has_weights={has_weights} mode={mode}"
        );
        // A switched-off argument is not an output.
        assert_eq!(out.buffers.contains_key(&2), has_bias);
    }
}

#[test]
#[cfg(feature = "runner")]
fn an_existing_conditional_argument_still_needs_its_resource() {
    let Some(gpu) = common::gpu() else { return };
    let lib = library(CONDITIONAL);
    let f = lib.function("cond").unwrap();
    let resources = Resources {
        buffers: BTreeMap::from([(0, vec![0; 16]), (1, vec![0; 16])]),
        constants: BTreeMap::from([(0, 1.0), (1, 0.0), (2, 0.0)]),
        ..Default::default()
    };
    let err = run_threads(gpu, &lib, f, 4, &resources).unwrap_err();
    assert!(
        matches!(&err, RunError::MissingBuffer { name, index: 2, .. } if name == "bias"),
        "{err}"
    );
}

/// The pipeline API (`ComputePipeline::with_constants`, buffers set by
/// Metal index) leaves a switched-off argument unset too.
#[test]
#[cfg(feature = "runner")]
fn compute_pipeline_binds_placeholders_for_switched_off_arguments() {
    use msl2wgsl::runner::ComputePipeline;
    use wgpu::util::DeviceExt;
    let Some(gpu) = common::gpu() else { return };
    let lib = library(CONDITIONAL);
    let n = 8u32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
    let bias = -1.25f32;
    for has_bias in [false, true] {
        let constants = BTreeMap::from([(0, f64::from(u8::from(has_bias))), (1, 0.0), (2, 0.0)]);
        let pipeline = ComputePipeline::with_constants(gpu, &lib, "cond", &constants).unwrap();
        let make = |bytes: &[u8]| {
            gpu.device()
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: None,
                    contents: bytes,
                    usage: wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::UNIFORM
                        | wgpu::BufferUsages::COPY_SRC,
                })
        };
        let a = make(&common::f32_bytes(&input));
        let out = make(&vec![0; 4 * n as usize]);
        let b = make(&common::f32_bytes(&[bias]));
        let mut command = pipeline.encoder();
        command
            .set_buffer(0, &a, 0)
            .unwrap()
            .set_buffer(1, &out, 0)
            .unwrap();
        if has_bias {
            command.set_buffer(2, &b, 0).unwrap();
        }
        command
            .dispatch_threads(gpu, [n, 1, 1], [64, 1, 1])
            .unwrap();
        let got = common::f32s(&gpu.read_buffer(&out).unwrap());
        let want: Vec<f32> = input
            .iter()
            .enumerate()
            .map(|(id, &x)| conditional_reference(id, x, has_bias.then_some(bias), None, None))
            .collect();
        assert_eq!(got, want, "has_bias={has_bias}");
    }
}

/// An argument conditional on the negation of a function constant, through
/// two derived constants, as Apple's samples write them.
const NEGATED: &str = "
constant bool per_primitive [[function_constant(1)]];
constant bool use_resources = !per_primitive;
constant bool use_resources_too = use_resources;

kernel void neg(device float* out [[buffer(0)]],
                device const float* resources [[buffer(1), function_constant(use_resources_too)]],
                uint id [[thread_position_in_grid]]) {
    float v = float(id);
    if (use_resources) {
        v += resources[id % 3];
    }
    out[id] = v;
}
";

#[test]
#[cfg(feature = "runner")]
fn argument_conditional_on_a_negated_constant_exists_when_it_is_false() {
    let Some(gpu) = common::gpu() else { return };
    let lib = library(NEGATED);
    let f = lib.function("neg").unwrap();
    let json = serde_json::to_value(f).unwrap();
    assert_eq!(
        json["functionConstants"][0]["arguments"],
        serde_json::json!([{"name": "resources", "type": "buffer", "index": 1, "whenFalse": true}])
    );
    let resources_arg = f.arguments.iter().find(|a| a.name == "resources").unwrap();
    let n = 10u32;
    let extra = [0.5f32, 1.0, -2.0];
    for per_primitive in [false, true] {
        let constants = BTreeMap::from([(1, f64::from(u8::from(per_primitive)))]);
        assert_eq!(f.argument_active(resources_arg, &constants), !per_primitive);
        let mut buffers = BTreeMap::from([(0, vec![0; 4 * n as usize])]);
        if !per_primitive {
            buffers.insert(1, common::f32_bytes(&extra));
        }
        let resources = Resources {
            buffers,
            constants,
            ..Default::default()
        };
        let out = run_threads(gpu, &lib, f, n, &resources).unwrap_or_else(|e| panic!("{e}"));
        let want: Vec<f32> = (0..n)
            .map(|id| {
                id as f32
                    + if per_primitive {
                        0.0
                    } else {
                        extra[id as usize % 3]
                    }
            })
            .collect();
        assert_eq!(
            common::f32s(&out.buffers[&0]),
            want,
            "per_primitive={per_primitive}"
        );
    }
}

// ---- vector function constants -------------------------------------------

/// Vector constants, one required and one optional with a default.
const VECTORS: &str = "
constant uint2 tile [[function_constant(3)]];
constant float3 tint [[function_constant(4)]];
constant bool has_tint = is_function_constant_defined(tint);
constant float3 colour = has_tint ? tint : float3(1.0, 2.0, 3.0);

kernel void vec_k(device float* out [[buffer(0)]], uint id [[thread_position_in_grid]]) {
    uint2 cell = uint2(id % tile.x, id / tile.x);
    float3 c = colour * float(cell.y * tile.y + cell.x);
    out[id] = c.x + c.y * 10.0 + c.z * 100.0;
}
";

#[test]
fn vector_constants_are_one_override_per_component() {
    let lib = library(VECTORS);
    let wgsl = lib.wgsl();
    assert!(
        wgsl.contains("@id(3) override tile_x: u32 = u32();"),
        "{wgsl}"
    );
    assert!(wgsl.contains("@id(4) override tint_x: f32 = "), "{wgsl}");
    let f = lib.function("vec_k").unwrap();
    let json = serde_json::to_value(f).unwrap();
    let constants = json["functionConstants"].as_array().unwrap();
    assert_eq!(constants[0]["name"], "tile");
    assert_eq!(constants[0]["dataType"], "uint2");
    assert_eq!(constants[1]["dataType"], "float3");
    let ids = |c: &serde_json::Value| -> Vec<u64> {
        c["componentIds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let (tile, tint) = (ids(&constants[0]), ids(&constants[1]));
    assert_eq!((tile.len(), tile[0]), (2, 3));
    assert_eq!((tint.len(), tint[0]), (3, 4));
    // Every component and the defined flag have their own id.
    let mut all: Vec<u64> = tile.iter().chain(&tint).copied().collect();
    all.push(constants[1]["definedId"].as_u64().unwrap());
    let count = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), count, "{all:?}");
    for (k, id) in tile.iter().enumerate().skip(1) {
        let name = ["x", "y"][k];
        assert!(
            wgsl.contains(&format!("@id({id}) override tile_{name}: u32 = u32();")),
            "{wgsl}"
        );
    }
}

#[test]
#[cfg(feature = "runner")]
fn kernel_runs_with_vector_constants() {
    let Some(gpu) = common::gpu() else { return };
    let lib = library(VECTORS);
    let f = lib.function("vec_k").unwrap();
    let ids = |name: &str| -> Vec<u32> {
        let c = f
            .function_constants
            .iter()
            .find(|c| c.name == name)
            .unwrap();
        c.component_ids.iter().map(|&i| u32::from(i)).collect()
    };
    let n = 24u32;
    for (tile, tint) in [([4u32, 3u32], None), ([5, 2], Some([0.5f32, -1.0, 2.0]))] {
        let mut constants: BTreeMap<u32, f64> = ids("tile")
            .into_iter()
            .zip(tile)
            .map(|(i, v)| (i, f64::from(v)))
            .collect();
        if let Some(t) = tint {
            constants.extend(
                ids("tint")
                    .into_iter()
                    .zip(t)
                    .map(|(i, v)| (i, f64::from(v))),
            );
        }
        let resources = Resources {
            buffers: BTreeMap::from([(0, vec![0; 4 * n as usize])]),
            constants,
            ..Default::default()
        };
        let out = run_threads(gpu, &lib, f, n, &resources).unwrap_or_else(|e| panic!("{e}"));
        let colour = tint.unwrap_or([1.0, 2.0, 3.0]);
        let want: Vec<f32> = (0..n)
            .map(|id| {
                let (x, y) = (id % tile[0], id / tile[0]);
                let k = (y * tile[1] + x) as f32;
                colour[0] * k + colour[1] * k * 10.0 + colour[2] * k * 100.0
            })
            .collect();
        assert_eq!(
            common::f32s(&out.buffers[&0]),
            want,
            "tile={tile:?} tint={tint:?}"
        );
    }
}

#[test]
#[cfg(feature = "runner")]
fn a_vector_constant_missing_a_component_is_refused() {
    let Some(gpu) = common::gpu() else { return };
    let lib = library(VECTORS);
    let f = lib.function("vec_k").unwrap();
    let resources = Resources {
        buffers: BTreeMap::from([(0, vec![0; 16])]),
        constants: BTreeMap::from([(3, 4.0)]),
        ..Default::default()
    };
    let err = run_threads(gpu, &lib, f, 4, &resources).unwrap_err();
    assert!(
        matches!(&err, RunError::MissingFunctionConstant { name, .. } if name == "tile"),
        "{err}"
    );
}

// ---- conditional arguments of render functions ----------------------------

/// A full-screen triangle whose fragment function multiplies a tint by a
/// conditional texture's texel (a 2×2 tile) when `has_map` is set.
const TINTED: &str = "
struct VOut { float4 pos [[position]]; };
vertex VOut cover(uint vid [[vertex_id]]) {
    float2 p = float2((vid << 1) & 2, vid & 2);
    VOut o;
    o.pos = float4(p * 2.0 - 1.0, 0.0, 1.0);
    return o;
}
constant bool has_map [[function_constant(0)]];
fragment float4 tinted(VOut in [[stage_in]],
                       constant float4& tint [[buffer(0)]],
                       texture2d<float> map [[texture(0), function_constant(has_map)]]) {
    float4 c = tint;
    if (has_map) {
        c *= map.read(uint2(in.pos.xy) % 2);
    }
    return c;
}
";

#[test]
#[cfg(feature = "runner")]
fn fragment_function_draws_with_and_without_its_conditional_texture() {
    use msl2wgsl::runner::{render_library, RenderResources, TextureData};
    let Some(gpu) = common::gpu() else { return };
    let options = Options {
        target: msl2wgsl::Target::Wgpu,
        ..Options::default()
    };
    let lib = Library::from_source("t.metal", &format!("{PRELUDE}{TINTED}"), &options)
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let tint = [1.0f32, 0.5, 0.25, 1.0];
    let texels: [[u8; 4]; 4] = [
        [255, 255, 255, 255],
        [128, 64, 255, 255],
        [0, 255, 128, 255],
        [64, 128, 0, 255],
    ];
    let size = 4u32;
    for has_map in [false, true] {
        let mut r = RenderResources::new(size, size, 3);
        r.fragment_buffers.insert(0, common::f32_bytes(&tint));
        r.constants.insert(0, f64::from(u8::from(has_map)));
        if has_map {
            let bytes = texels.iter().flatten().copied().collect();
            let map = TextureData::new_2d(wgpu::TextureFormat::Rgba8Unorm, 2, 2, bytes);
            r.textures.insert(0, map);
        }
        let img =
            &render_library(gpu, &lib, "cover", "tinted", &r).unwrap_or_else(|e| panic!("{e}"))[0];
        for y in 0..size {
            for x in 0..size {
                let texel = texels[((y % 2) * 2 + x % 2) as usize];
                let k = ((y * size + x) * 4) as usize;
                for c in 0..4 {
                    let m = if has_map {
                        f32::from(texel[c]) / 255.0
                    } else {
                        1.0
                    };
                    let want = (tint[c] * m * 255.0).round() as u8;
                    let got = img.data[k + c];
                    assert!(
                        got.abs_diff(want) <= 1,
                        "has_map={has_map}: pixel ({x}, {y}) component {c} is {got}, want {want}"
                    );
                }
            }
        }
    }
}

/// 64-bit function constants: two `u32` overrides each, a required
/// `ulong` and `long` and an optional `long` with a default.
const WIDE: &str = "
constant ulong seed [[function_constant(2)]];
constant long offset [[function_constant(3)]];
constant long step_value [[function_constant(4)]];
constant long step = is_function_constant_defined(step_value) ? step_value : 5;

kernel void wide_k(device uint2* out [[buffer(0)]], uint id [[thread_position_in_grid]]) {
    ulong v = seed * ulong(id + 1) + ulong(offset + step * long(id));
    out[id] = as_type<uint2>(v);
}
";

fn wide_library(target: msl2wgsl::Target) -> Library {
    let src = format!("{PRELUDE}{WIDE}");
    let options = Options {
        target,
        ..Options::default()
    };
    Library::from_source("t.metal", &src, &options).unwrap_or_else(|f| panic!("{}", f.render()))
}

#[test]
fn wide_constants_are_two_word_overrides() {
    let lib = wide_library(msl2wgsl::Target::Wgpu);
    let wgsl = lib.wgsl();
    assert!(
        wgsl.contains("@id(2) override seed: u32 = u32();"),
        "{wgsl}"
    );
    let f = lib.function("wide_k").unwrap();
    let seed = f
        .function_constants
        .iter()
        .find(|c| c.name == "seed")
        .unwrap();
    assert_eq!(seed.data_type, "ulong");
    let high = seed.high_id.expect("a high word");
    assert!(
        wgsl.contains(&format!("@id({high}) override seed_hi: u32 = u32();")),
        "{wgsl}"
    );
    let step = f
        .function_constants
        .iter()
        .find(|c| c.name == "step_value")
        .unwrap();
    assert!(!step.required && step.defined_id.is_some() && step.high_id.is_some());
    // `--target webgpu`: `long` is 32 bits (W0411), so is the constant.
    let narrow = wide_library(msl2wgsl::Target::WebGpu);
    let f = narrow.function("wide_k").unwrap();
    assert!(f.function_constants.iter().all(|c| c.high_id.is_none()));
    let warnings = narrow.warnings();
    assert!(
        warnings.contains("computed in 32 bits on WebGPU"),
        "{warnings}"
    );
}

#[test]
#[cfg(feature = "runner")]
fn kernel_runs_with_wide_constants() {
    let Some(gpu) = common::gpu() else { return };
    if !gpu
        .features()
        .contains(msl2wgsl::wgpu::Features::SHADER_INT64)
    {
        common::skip::missing_feature(gpu, "shader-int64");
        return;
    }
    let lib = wide_library(msl2wgsl::Target::Wgpu);
    let f = lib.function("wide_k").unwrap();
    let n = 16u32;
    let seed: u64 = 0x1_0000_0003;
    let offset: i64 = -7;
    for step in [None, Some(-3i64 << 33)] {
        let mut constants = BTreeMap::from([(2, seed as f64), (3, offset as f64)]);
        if let Some(s) = step {
            constants.insert(4, s as f64);
        }
        let resources = Resources {
            buffers: BTreeMap::from([(0, vec![0; 8 * n as usize])]),
            constants,
            ..Default::default()
        };
        let out = run_threads(gpu, &lib, f, n, &resources).unwrap_or_else(|e| panic!("{e}"));
        let want: Vec<u32> = (0..n)
            .flat_map(|id| {
                let s = step.unwrap_or(5);
                let v = seed
                    .wrapping_mul(u64::from(id) + 1)
                    .wrapping_add(offset.wrapping_add(s.wrapping_mul(i64::from(id))) as u64);
                [v as u32, (v >> 32) as u32]
            })
            .collect();
        assert_eq!(common::u32s(&out.buffers[&0]), want, "step={step:?}");
    }
}
