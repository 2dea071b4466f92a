//! Function constants (`[[function_constant(n)]]`, `is_function_constant_defined`)
//! as WGSL `override`s: translation, reflection, diagnostics, and runs with
//! different constant values on the GPU.

mod common;

#[cfg(feature = "runner")]
use msl2wgsl::runner::{run_compute_resources, Dispatch, Resources, RunError};
use msl2wgsl::{Library, Options};
#[cfg(feature = "runner")]
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
    assert!(
        wgsl.contains("@id(0) override use_fast_path: bool;"),
        "{wgsl}"
    );
    assert!(wgsl.contains("@id(1) override scale: f32;"), "{wgsl}");
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
        let dispatch = Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: f.workgroup_size.unwrap(),
        };
        let out = run_compute_resources(gpu, lib.wgsl(), f, &dispatch, &resources)
            .unwrap_or_else(|e| panic!("{e}"));
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
    let dispatch = Dispatch::Threads {
        grid: [4, 1, 1],
        threadgroup: f.workgroup_size.unwrap(),
    };
    let err = run_compute_resources(gpu, lib.wgsl(), f, &dispatch, &resources).unwrap_err();
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
    let dispatch = Dispatch::Threads {
        grid: [4, 1, 1],
        threadgroup: f.workgroup_size.unwrap(),
    };
    let out = run_compute_resources(gpu, lib.wgsl(), f, &dispatch, &resources).unwrap();
    assert_eq!(common::f32s(&out.buffers[&0]), vec![1.0; 4]);
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
fn vector_function_constant_is_refused() {
    assert_error(
        &format!("constant float2 v [[function_constant(0)]];\n{USE}"),
        3,
        1,
        "function constants of type `float2` are not supported: WGSL overrides are scalars",
    );
}

#[test]
fn long_function_constant_is_refused() {
    assert_error(
        &format!("constant long v [[function_constant(0)]];\n{USE}"),
        3,
        1,
        "function constants of type `long` are not supported: WGSL overrides cannot be 64-bit",
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

#[test]
fn function_constant_as_array_size_is_refused() {
    assert_error(
        "constant int n [[function_constant(0)]];\n\
         kernel void k(device float* o [[buffer(0)]]) {\n  float a[n];\n  a[0] = 1;\n  o[0] = a[0];\n}\n",
        5,
        11,
        "`n` is set when the pipeline is created (a function constant), so it is not a compile-time constant here",
    );
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
fn conditional_argument_is_refused() {
    assert_error(
        "constant bool has_b [[function_constant(0)]];\n\
         kernel void k(device float* o [[buffer(0), function_constant(has_b)]]) { o[0] = 1; }\n",
        4,
        44,
        "conditional arguments (`[[function_constant(name)]]` on an argument) are not supported yet",
    );
}
