//! Function constants specialised at translation (`Options::function_constants`,
//! `--function-constant`): constants as array sizes and `case` labels, a
//! function waiting for their values (W0415) and the runner translating it
//! with its pipeline's values, the diagnostics (E0336, E0337), and vector
//! and 64-bit constants given at translation. GPU results are compared with
//! CPU references computed here.

// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

#[cfg(feature = "runner")]
use msl2wgsl::runner::{
    run_compute_resources, run_kernel_resources, ComputePipeline, Dispatch, Resources, RunError,
};
use msl2wgsl::{ConstantKey, ConstantValue, FunctionConstantValues, Library, Options};
#[cfg(feature = "runner")]
use std::collections::BTreeMap;

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// Sums each tile of `tile_size` inputs through a threadgroup array of
/// that size (one threadgroup per tile; threads stride over the tile).
const TILES: &str = "
constant int tile_size [[function_constant(0)]];

kernel void reduce_tiles(device const float* in [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         uint tid [[thread_position_in_threadgroup]],
                         uint group [[threadgroup_position_in_grid]],
                         uint threads [[threads_per_threadgroup]]) {
    threadgroup float scratch[tile_size];
    for (uint i = tid; i < uint(tile_size); i += threads) {
        scratch[i] = in[group * tile_size + i] * float(i + 1);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0) {
        float sum = 0.0f;
        for (int i = 0; i < tile_size; ++i) {
            sum += scratch[i];
        }
        out[group] = sum;
    }
}
";

/// Classifies values with a `switch` whose labels are function constants.
const CLASSIFY: &str = "
constant int special [[function_constant(2)]];
constant int next_special = special + 1;

kernel void classify(device const int* in [[buffer(0)]],
                     device int* out [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    int v = in[i];
    switch (v) {
        case special: out[i] = 1000; break;
        case next_special: out[i] = 2000; break;
        case -1: out[i] = -5; break;
        default: out[i] = v * 3; break;
    }
}
";

/// A row length that defaults to 4 when the host sets none, sizing a
/// thread-local array.
const ROWS: &str = "
constant int width_value [[function_constant(3)]];
constant int width = is_function_constant_defined(width_value) ? width_value : 4;

kernel void weigh_rows(device const float* in [[buffer(0)]],
                       device float* out [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    float row[width];
    for (int k = 0; k < width; ++k) {
        row[k] = in[i * width + k];
    }
    float s = 0.0f;
    for (int k = 0; k < width; ++k) {
        s += row[k] * float(k + 1);
    }
    out[i] = s;
}
";

fn translate(body: &str, options: &Options) -> Result<Library, msl2wgsl::Failure> {
    Library::from_source("t.metal", &format!("{PRELUDE}{body}"), options)
}

fn library(body: &str, options: &Options) -> Library {
    translate(body, options).unwrap_or_else(|f| panic!("{}", f.render()))
}

/// Options giving `values` (as the command line gives them: text).
fn given(values: &[(&str, &str)]) -> Options {
    let mut constants = FunctionConstantValues::default();
    for (name, value) in values {
        let value = match *value {
            "undefined" => ConstantValue::Undefined,
            v => ConstantValue::Text(v.to_string()),
        };
        constants.set(ConstantKey::Name(name.to_string()), value);
    }
    Options {
        function_constants: constants,
        ..Options::default()
    }
}

/// What `reduce_tiles` computes for the tiles of `input`.
fn tile_sums(input: &[f32], tile: usize) -> Vec<f32> {
    input
        .chunks(tile)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0.0f32, |s, (i, x)| s + x * (i + 1) as f32)
        })
        .collect()
}

/// What `classify` computes for `v`.
fn classify(v: i32, special: i32) -> i32 {
    match v {
        v if v == special => 1000,
        v if v == special + 1 => 2000,
        -1 => -5,
        v => v * 3,
    }
}

/// What `weigh_rows` computes for the rows of `input`.
fn row_weights(input: &[f32], width: usize) -> Vec<f32> {
    input
        .chunks(width)
        .map(|r| {
            r.iter()
                .enumerate()
                .fold(0.0f32, |s, (k, x)| s + x * (k + 1) as f32)
        })
        .collect()
}

// ---- translation -----------------------------------------------------------

#[test]
fn a_given_constant_is_folded_and_has_no_override() {
    let lib = library(TILES, &given(&[("tile_size", "16")]));
    let wgsl = lib.wgsl();
    assert!(!wgsl.contains("override tile_size"), "{wgsl}");
    assert!(wgsl.contains("array<f32, 16>"), "{wgsl}");
    let f = lib.function("reduce_tiles").unwrap();
    assert!(!f.awaits_function_constants());
    assert!(
        f.function_constants.is_empty(),
        "{:?}",
        f.function_constants
    );
    // By index, as `MTLFunctionConstantValues` takes it too.
    let mut options = Options::default();
    options
        .function_constants
        .set(ConstantKey::Index(0), ConstantValue::Number(24.0));
    assert!(library(TILES, &options).wgsl().contains("array<f32, 24>"));
}

#[test]
fn case_labels_from_constants_are_folded() {
    let lib = library(CLASSIFY, &given(&[("special", "-7")]));
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("case -7"), "{wgsl}");
    assert!(wgsl.contains("case -6"), "{wgsl}");
    assert!(!wgsl.contains("override"), "{wgsl}");
}

/// Without a value the function waits for one: left out of the WGSL with
/// W0415 at the use, and reflection says which constant it needs.
#[test]
fn a_function_needing_an_ungiven_constant_waits_for_it() {
    let both =
        format!("{TILES}\nkernel void plain(device float* o [[buffer(0)]]) {{ o[0] = 1.0f; }}\n");
    let lib = library(&both, &Options::default());
    assert_eq!(lib.function_names(), ["reduce_tiles", "plain"]);
    let f = lib.function("reduce_tiles").unwrap();
    assert!(f.awaits_function_constants());
    let json = serde_json::to_value(f).unwrap();
    assert_eq!(
        json["functionConstants"],
        serde_json::json!([{"name": "tile_size", "index": 0, "dataType": "int",
                            "required": true, "neededAtTranslation": true}])
    );
    assert!(!lib.wgsl().contains("reduce_tiles"), "{}", lib.wgsl());
    assert!(lib.wgsl().contains("fn plain"), "{}", lib.wgsl());
    assert!(lib.function_wgsl("plain").is_some());
    assert!(lib.function_wgsl("reduce_tiles").is_none());
    let warnings = lib.warnings();
    assert!(
        warnings.starts_with("t.metal:11:31: warning: `reduce_tiles` is left out of the WGSL: the value of function constant `tile_size` is needed here at translation"),
        "{warnings}"
    );
    assert_eq!(lib.warning_diagnostics().0[0].code.as_str(), "W0415");
    assert!(
        warnings.contains("`--function-constant NAME=VALUE`")
            && warnings.contains("`Options::function_constants`"),
        "{warnings}"
    );
}

/// `is_function_constant_defined` is folded too: given as `undefined`,
/// the default sizes the array.
#[test]
fn an_undefined_constant_takes_the_default_of_its_derived_constant() {
    let lib = library(ROWS, &given(&[("width_value", "undefined")]));
    assert!(lib.wgsl().contains("array<f32, 4>"), "{}", lib.wgsl());
    let lib = library(ROWS, &given(&[("width_value", "6")]));
    assert!(lib.wgsl().contains("array<f32, 6>"), "{}", lib.wgsl());
    // Neither: the kernel waits for the constant the query asks about.
    let lib = library(ROWS, &Options::default());
    let f = lib.function("weigh_rows").unwrap();
    assert_eq!(f.function_constants[0].name, "width_value");
    assert!(f.function_constants[0].needed_at_translation && !f.function_constants[0].required);
}

// ---- diagnostics -------------------------------------------------------------

/// Asserts that translating `body` with `options` fails first with
/// `t.metal:LINE:COL: error: MESSAGE... [CODE]`.
fn assert_error(body: &str, options: &Options, line: usize, col: usize, message: &str, code: &str) {
    let failure = match translate(body, options) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f,
    };
    let text = failure.render();
    let first = text.lines().next().unwrap_or_default();
    let want = format!("t.metal:{line}:{col}: error: {message}");
    assert!(first.starts_with(&want), "want `{want}`\n got:\n{text}");
    assert_eq!(failure.diagnostics.0[0].code.as_str(), code, "{text}");
}

#[test]
fn a_constant_sizing_a_struct_member_needs_a_value() {
    let body = "constant int n [[function_constant(0)]];\n\
                struct S { float a[n]; };\n\
                kernel void k(device S* s [[buffer(0)]]) { s->a[0] = 1.0f; }\n";
    assert_error(
        body,
        &Options::default(),
        4,
        20,
        "the value of function constant `n` is needed here at translation, and none was given",
        "E0336",
    );
    let text = translate(body, &Options::default()).unwrap_err().render();
    assert!(text.contains("`--function-constant NAME=VALUE`"), "{text}");
    // Given, the struct has that many elements.
    let lib = library(body, &given(&[("n", "3")]));
    assert!(lib.wgsl().contains("array<f32, 3>"), "{}", lib.wgsl());
}

#[test]
fn an_undefined_constant_has_no_value_at_translation() {
    assert_error(
        TILES,
        &given(&[("tile_size", "undefined")]),
        11,
        31,
        "function constant `tile_size` is undefined (given as `undefined`), so it has no value here",
        "E0336",
    );
}

#[test]
fn a_value_that_does_not_fit_the_declared_type_is_refused() {
    assert_error(
        TILES,
        &given(&[("tile_size", "2.5")]),
        4,
        14,
        "the value given for function constant `tile_size` (`tile_size=2.5`) is not an integer, as `int` needs",
        "E0337",
    );
    let mut options = Options::default();
    options
        .function_constants
        .set(ConstantKey::Index(0), ConstantValue::Number(2.5));
    assert_error(
        TILES,
        &options,
        4,
        14,
        "the value given for function constant `tile_size` (`0=2.5`) is not an integer, as `int` needs",
        "E0337",
    );
    assert_error(
        "constant uchar u [[function_constant(1)]];\nkernel void k(device uchar* o [[buffer(0)]]) { o[0] = u; }\n",
        &given(&[("u", "256")]),
        3,
        16,
        "the value given for function constant `u` (`u=256`) is out of the range of `uchar`",
        "E0337",
    );
    assert_error(
        "constant uint2 v [[function_constant(1)]];\nkernel void k(device uint* o [[buffer(0)]]) { o[0] = v.x; }\n",
        &given(&[("v", "1,2,3")]),
        3,
        16,
        "the value given for function constant `v` (`v=1,2,3`) has 3 component(s), but `v` has 2",
        "E0337",
    );
    assert_error(
        "constant bool b [[function_constant(1)]];\nkernel void k(device uint* o [[buffer(0)]]) { o[0] = b; }\n",
        &given(&[("b", "yes")]),
        3,
        15,
        "the value given for function constant `b` (`b=yes`) is not a `bool` (`true`, `false`, 1 or 0)",
        "E0337",
    );
}

/// MSL §5.8.1: "You don't initialize function constants in the Metal
/// function source", so an initializer stays refused, saying so.
#[test]
fn an_initializer_on_a_function_constant_is_refused_as_metal_refuses_it() {
    let text = translate(
        "constant int v [[function_constant(0)]] = 4;\nkernel void k(device int* o [[buffer(0)]]) { o[0] = v; }\n",
        &Options::default(),
    )
    .unwrap_err()
    .render();
    assert!(
        text.starts_with("t.metal:3:43: error: function constant `v` cannot have an initializer"),
        "{text}"
    );
    assert!(
        text.contains("Metal does not initialize function constants in the source (MSL §5.8.1)"),
        "{text}"
    );
    assert!(
        text.contains("is_function_constant_defined(v) ? v : DEFAULT"),
        "{text}"
    );
}

// ---- on the GPU ----------------------------------------------------------------

/// The tile kernel through `ComputePipeline::with_constants`, as a Metal
/// host makes a pipeline from `makeFunction(name:constantValues:)`: the
/// library left the kernel out, and each pipeline translates it with its
/// own tile size.
#[test]
#[cfg(feature = "runner")]
fn threadgroup_array_sized_by_a_constant_runs_with_two_values() {
    use wgpu::util::DeviceExt;
    let Some(gpu) = common::gpu() else { return };
    let lib = library(TILES, &Options::default());
    assert!(lib
        .function("reduce_tiles")
        .unwrap()
        .awaits_function_constants());
    let groups = 5u32;
    for tile in [16u32, 24] {
        let input: Vec<f32> = (0..groups * tile).map(|i| (i % 7) as f32 - 2.5).collect();
        let constants = BTreeMap::from([(0, f64::from(tile))]);
        let pipeline = ComputePipeline::with_constants(gpu, &lib, "reduce_tiles", &constants)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!pipeline.function().awaits_function_constants());
        let make = |bytes: &[u8]| {
            gpu.device()
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: None,
                    contents: bytes,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                })
        };
        let a = make(&common::f32_bytes(&input));
        let out = make(&vec![0; 4 * groups as usize]);
        let mut command = pipeline.encoder();
        command
            .set_buffer(0, &a, 0)
            .unwrap()
            .set_buffer(1, &out, 0)
            .unwrap();
        command
            .dispatch_threadgroups(gpu, [groups, 1, 1], [8, 1, 1])
            .unwrap();
        let got = common::f32s(&gpu.read_buffer(&out).unwrap());
        assert_eq!(got, tile_sums(&input, tile as usize), "tile={tile}");
    }
    // Without the value, Metal's missing required constant.
    let err = ComputePipeline::new(gpu, &lib, "reduce_tiles").unwrap_err();
    assert!(
        matches!(&err, RunError::MissingFunctionConstant { name, index: 0, .. } if name == "tile_size"),
        "{err}"
    );
}

/// The `switch` kernel through `run_kernel_resources`, which translates
/// it for each value set given.
#[test]
#[cfg(feature = "runner")]
fn switch_with_constant_case_labels_runs_with_two_values() {
    let Some(gpu) = common::gpu() else { return };
    let source = format!("{PRELUDE}{CLASSIFY}");
    let input: Vec<i32> = (-3..37).collect();
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
    let n = input.len() as u32;
    for special in [5, 30] {
        let resources = Resources {
            buffers: BTreeMap::from([(0, bytes.clone()), (1, vec![0; bytes.len()])]),
            constants: BTreeMap::from([(2, f64::from(special))]),
            ..Default::default()
        };
        let dispatch = Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [16, 1, 1],
        };
        let out = run_kernel_resources(
            gpu,
            "classify.metal",
            &source,
            &Options::default(),
            "classify",
            &dispatch,
            &resources,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let got: Vec<i32> = common::u32s(&out.buffers[&1])
            .into_iter()
            .map(|w| w as i32)
            .collect();
        let want: Vec<i32> = input.iter().map(|&v| classify(v, special)).collect();
        assert_eq!(got, want, "special={special}");
    }
}

/// An optional constant the host may leave unset: its derived default
/// sizes the array then.
#[test]
#[cfg(feature = "runner")]
fn optional_constant_sizes_an_array_with_and_without_a_value() {
    let Some(gpu) = common::gpu() else { return };
    let source = format!("{PRELUDE}{ROWS}");
    let rows = 9u32;
    for width in [None, Some(6u32)] {
        let w = width.unwrap_or(4);
        let input: Vec<f32> = (0..rows * w).map(|i| i as f32 * 0.25 - 1.0).collect();
        let mut constants = BTreeMap::new();
        if let Some(w) = width {
            constants.insert(3, f64::from(w));
        }
        let resources = Resources {
            buffers: BTreeMap::from([
                (0, common::f32_bytes(&input)),
                (1, vec![0; 4 * rows as usize]),
            ]),
            constants,
            ..Default::default()
        };
        let dispatch = Dispatch::Threads {
            grid: [rows, 1, 1],
            threadgroup: [4, 1, 1],
        };
        let out = run_kernel_resources(
            gpu,
            "rows.metal",
            &source,
            &Options::default(),
            "weigh_rows",
            &dispatch,
            &resources,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            common::f32s(&out.buffers[&1]),
            row_weights(&input, w as usize),
            "width={width:?}"
        );
    }
}

/// A library translated with the value runs as any other; the reflection
/// of one that waits is refused by `run_compute_resources`, which has no
/// source to translate it from.
#[test]
#[cfg(feature = "runner")]
fn a_library_translated_with_values_runs_from_its_wgsl() {
    let Some(gpu) = common::gpu() else { return };
    let special = 11;
    let lib = library(CLASSIFY, &given(&[("special", "11")]));
    let f = lib.function("classify").unwrap();
    let input: Vec<i32> = (0..32).collect();
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
    let resources = Resources {
        buffers: BTreeMap::from([(0, bytes.clone()), (1, vec![0; bytes.len()])]),
        ..Default::default()
    };
    let dispatch = Dispatch::Threads {
        grid: [32, 1, 1],
        threadgroup: f.workgroup_size.unwrap(),
    };
    let out = run_compute_resources(gpu, lib.wgsl(), f, &dispatch, &resources)
        .unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<i32> = common::u32s(&out.buffers[&1])
        .into_iter()
        .map(|w| w as i32)
        .collect();
    let want: Vec<i32> = input.iter().map(|&v| classify(v, special)).collect();
    assert_eq!(got, want);
    let waiting = library(CLASSIFY, &Options::default());
    let f = waiting.function("classify").unwrap();
    let err = run_compute_resources(gpu, waiting.wgsl(), f, &dispatch, &resources).unwrap_err();
    assert!(
        matches!(&err, RunError::NeedsSpecialization { constants, .. } if constants == &["special"]),
        "{err}"
    );
}

/// Vector and 64-bit constants given at translation: text for the
/// vector's components, a 64-bit value beyond 2^32 exactly.
const VECTOR_AND_WIDE: &str = "
constant uint2 grid_shape [[function_constant(3)]];
constant ulong seed [[function_constant(4)]];

kernel void shaped(device uint2* out [[buffer(0)]], uint id [[thread_position_in_grid]]) {
    uint cells[grid_shape.x];
    for (uint k = 0; k < grid_shape.x; ++k) {
        cells[k] = k * grid_shape.y;
    }
    ulong v = seed * ulong(id + 1) + ulong(cells[id % grid_shape.x]);
    out[id] = as_type<uint2>(v);
}
";

#[test]
#[cfg(feature = "runner")]
fn vector_and_wide_constants_given_at_translation() {
    let Some(gpu) = common::gpu() else { return };
    if !gpu.features().contains(wgpu::Features::SHADER_INT64) {
        common::skip::missing_feature(gpu, "shader-int64");
        return;
    }
    let seed: u64 = 0x1_2345_6789_abcd;
    let mut options = given(&[("grid_shape", "3,7"), ("seed", &format!("{seed:#x}"))]);
    options.target = msl2wgsl::Target::Wgpu;
    let lib = library(VECTOR_AND_WIDE, &options);
    assert!(lib.wgsl().contains("array<u32, 3>"), "{}", lib.wgsl());
    assert!(!lib.wgsl().contains("override"), "{}", lib.wgsl());
    let f = lib.function("shaped").unwrap();
    let n = 10u32;
    let resources = Resources {
        buffers: BTreeMap::from([(0, vec![0; 8 * n as usize])]),
        ..Default::default()
    };
    let dispatch = Dispatch::Threads {
        grid: [n, 1, 1],
        threadgroup: f.workgroup_size.unwrap(),
    };
    let out = run_compute_resources(gpu, lib.wgsl(), f, &dispatch, &resources)
        .unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<u32> = (0..n)
        .flat_map(|id| {
            let v = seed
                .wrapping_mul(u64::from(id) + 1)
                .wrapping_add(u64::from((id % 3) * 7));
            [v as u32, (v >> 32) as u32]
        })
        .collect();
    assert_eq!(common::u32s(&out.buffers[&0]), want);
}

// ---- the command line ------------------------------------------------------------

#[cfg(feature = "runner")]
fn msl2wgsl(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_msl2wgsl"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// `--function-constant` specialises a translation; `run --constant`
/// translates a kernel that needs the value with it.
#[test]
#[cfg(feature = "runner")]
fn command_line_specialises_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tiles.metal"), format!("{PRELUDE}{TILES}")).unwrap();
    let out = msl2wgsl(
        dir.path(),
        &["tiles.metal", "--function-constant", "tile_size=12"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("array<f32, 12>") && stdout.contains("fn reduce_tiles"),
        "{stdout}"
    );
    // By index, and a bad value: a located error.
    let out = msl2wgsl(
        dir.path(),
        &["tiles.metal", "--function-constant", "0=twelve"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("tiles.metal:4:14: error: the value given for function constant `tile_size` (`0=twelve`) is not an integer"), "{stderr}");
    // Not a name nor an index: a usage error.
    let out = msl2wgsl(dir.path(), &["tiles.metal", "--function-constant", "1x=3"]);
    assert_eq!(out.status.code(), Some(2));
    // Without: the kernel waits for it, with the warning saying how.
    let out = msl2wgsl(dir.path(), &["tiles.metal"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: `reduce_tiles` is left out of the WGSL"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("reduce_tiles"));
    let out = msl2wgsl(dir.path(), &["reflect", "tiles.metal"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("\"neededAtTranslation\": true"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    if !common::has_gpu() {
        return;
    }
    let (tile, groups) = (12usize, 3usize);
    let input: Vec<f32> = (0..tile * groups).map(|i| (i % 5) as f32 + 0.5).collect();
    std::fs::write(dir.path().join("in.bin"), common::f32_bytes(&input)).unwrap();
    let out = msl2wgsl(
        dir.path(),
        &[
            "run",
            "tiles.metal",
            "--entry",
            "reduce_tiles",
            "--threadgroups",
            "3",
            "--threadgroup",
            "4",
            "--buffer",
            "0=in.bin",
            "--buffer",
            "1=zeros:12",
            "--constant",
            "0=12",
            "--read",
            "1=out.bin",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = common::f32s(&std::fs::read(dir.path().join("out.bin")).unwrap());
    assert_eq!(got, tile_sums(&input, tile));
}

/// A fragment function whose local array a constant sizes, drawn through
/// `render_library` with two values.
const TAPS: &str = "
struct VOut { float4 pos [[position]]; };
vertex VOut cover(uint vid [[vertex_id]]) {
    float2 p = float2((vid << 1) & 2, vid & 2);
    VOut o;
    o.pos = float4(p * 2.0 - 1.0, 0.0, 1.0);
    return o;
}
constant int taps [[function_constant(5)]];
fragment float4 summed(VOut in [[stage_in]], constant float* w [[buffer(0)]]) {
    float acc[taps];
    for (int k = 0; k < taps; ++k) {
        acc[k] = w[k];
    }
    float s = 0.0f;
    for (int k = 0; k < taps; ++k) {
        s += acc[k];
    }
    return float4(s, float(taps) / 8.0f, 0.0f, 1.0f);
}
";

#[test]
#[cfg(feature = "runner")]
fn fragment_function_with_a_constant_sized_array_draws_with_two_values() {
    use msl2wgsl::runner::{render_library, RenderResources};
    let Some(gpu) = common::gpu() else { return };
    let options = Options {
        target: msl2wgsl::Target::Wgpu,
        ..Options::default()
    };
    let lib = library(TAPS, &options);
    assert!(lib.function("summed").unwrap().awaits_function_constants());
    let weights = [0.1f32, 0.2, 0.15, 0.05];
    for taps in [2usize, 4] {
        let mut r = RenderResources::new(4, 4, 3);
        r.fragment_buffers.insert(0, common::f32_bytes(&weights));
        r.constants.insert(5, taps as f64);
        let img =
            &render_library(gpu, &lib, "cover", "summed", &r).unwrap_or_else(|e| panic!("{e}"))[0];
        let sum: f32 = weights[..taps].iter().sum();
        let want = [
            (sum * 255.0).round() as u8,
            (taps as f32 / 8.0 * 255.0).round() as u8,
            0,
            255,
        ];
        for px in img.data.chunks(4) {
            for c in 0..4 {
                assert!(
                    px[c].abs_diff(want[c]) <= 1,
                    "taps={taps}: component {c} is {}, want {}",
                    px[c],
                    want[c]
                );
            }
        }
    }
}

/// A conditional argument whose constant is given at translation exists
/// or not as the value says, as in a Metal function made with it: absent,
/// it is inactive and needs no buffer.
const OPTIONAL_BIAS: &str = "
constant bool has_bias [[function_constant(0)]];
constant bool no_bias = !has_bias;

kernel void biased(device const float* in [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   constant float& bias [[buffer(2), function_constant(has_bias)]],
                   device const float* fallback [[buffer(3), function_constant(no_bias)]],
                   uint id [[thread_position_in_grid]]) {
    float v = in[id];
    if (has_bias) {
        v += bias;
    } else {
        v -= fallback[0];
    }
    out[id] = v;
}
";

#[test]
#[cfg(feature = "runner")]
fn conditional_arguments_of_a_constant_given_at_translation() {
    let Some(gpu) = common::gpu() else { return };
    let n = 8u32;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 1.5).collect();
    for has_bias in [false, true] {
        let lib = library(
            OPTIONAL_BIAS,
            &given(&[("has_bias", &has_bias.to_string())]),
        );
        let f = lib.function("biased").unwrap();
        let active = |name: &str| f.arguments.iter().find(|a| a.name == name).unwrap().active;
        assert_eq!((active("bias"), active("fallback")), (has_bias, !has_bias));
        assert!(
            f.function_constants.is_empty(),
            "{:?}",
            f.function_constants
        );
        let mut buffers =
            BTreeMap::from([(0, common::f32_bytes(&input)), (1, vec![0; 4 * n as usize])]);
        match has_bias {
            true => buffers.insert(2, common::f32_bytes(&[0.25])),
            false => buffers.insert(3, common::f32_bytes(&[2.0])),
        };
        let resources = Resources {
            buffers,
            ..Default::default()
        };
        let dispatch = Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: f.workgroup_size.unwrap(),
        };
        let out = run_compute_resources(gpu, lib.wgsl(), f, &dispatch, &resources)
            .unwrap_or_else(|e| panic!("{e}"));
        let want: Vec<f32> = input
            .iter()
            .map(|x| if has_bias { x + 0.25 } else { x - 2.0 })
            .collect();
        assert_eq!(common::f32s(&out.buffers[&1]), want, "has_bias={has_bias}");
    }
}

/// `msl2wgsl render --constant` translates a fragment function that needs
/// the value with it.
#[test]
#[cfg(feature = "runner")]
fn command_line_renders_with_a_constant_sized_array() {
    use msl2wgsl::runner::TextureData;
    if !common::has_gpu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("taps.metal"), format!("{PRELUDE}{TAPS}")).unwrap();
    let weights = [0.1f32, 0.2, 0.15, 0.05];
    std::fs::write(dir.path().join("w.bin"), common::f32_bytes(&weights)).unwrap();
    let out = msl2wgsl(
        dir.path(),
        &[
            "render",
            "taps.metal",
            "--vertex",
            "cover",
            "--fragment",
            "summed",
            "--size",
            "4x4",
            "--vertex-count",
            "3",
            "--fragment-buffer",
            "0=w.bin",
            "--constant",
            "5=3",
            "-o",
            "out.png",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let img = TextureData::from_png(dir.path().join("out.png")).unwrap();
    let sum: f32 = weights[..3].iter().sum();
    let want = [
        (sum * 255.0).round() as u8,
        (3.0f32 / 8.0 * 255.0).round() as u8,
        0,
        255,
    ];
    for px in img.data.chunks(4) {
        for c in 0..4 {
            assert!(
                px[c].abs_diff(want[c]) <= 1,
                "component {c} is {}, want {}",
                px[c],
                want[c]
            );
        }
    }
}

/// A given constant is a constant everywhere C++ wants one: a template
/// argument, `if constexpr`, a `static_assert`, and an attribute argument
/// (MSL §5.8.1.4: a binding index).
#[test]
fn a_given_constant_is_a_template_argument_and_decides_if_constexpr() {
    let body = "
constant int lanes [[function_constant(0)]];
constant bool fast [[function_constant(1)]];
constant int slot [[function_constant(2)]];
template <int N> struct Acc { float v[N]; };
static_assert(lanes > 1, \"two lanes at least\");
kernel void k(device float* o [[buffer(slot)]], uint i [[thread_position_in_grid]]) {
    Acc<lanes> a;
    for (int k = 0; k < lanes; ++k) { a.v[k] = float(k); }
    if constexpr (fast) {
        o[i] = a.v[lanes - 1];
    } else {
        o[i] = a.v[0] * 2.0f;
    }
}
";
    let lib = library(
        body,
        &given(&[("lanes", "3"), ("fast", "true"), ("slot", "4")]),
    );
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("array<f32, 3>"), "{wgsl}");
    assert!(!wgsl.contains("override"), "{wgsl}");
    let f = lib.function("k").unwrap();
    assert_eq!(f.arguments[0].index, 4);
    // `static_assert` sees the value too.
    let text = translate(
        body,
        &given(&[("lanes", "1"), ("fast", "false"), ("slot", "0")]),
    )
    .unwrap_err()
    .render();
    assert!(text.contains("two lanes at least"), "{text}");
}
