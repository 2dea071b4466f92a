//! C++ declarations: namespaces, `static_assert`, and the located errors
//! for C++ features Metal does not have.

mod common;

use msl2wgsl::{Library, Options};

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/fixtures/declarations/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn translate(name: &str) -> Library {
    Library::from_source(name, &fixture(name), &Options::default())
        .unwrap_or_else(|f| panic!("{name}:\n{}", f.render()))
}

/// Translates `body` after a two-line prelude; it must fail.
fn fails(body: &str) -> String {
    let src = format!("{PRELUDE}{body}");
    match Library::from_source("t.metal", &src, &Options::default()) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.render(),
    }
}

/// Asserts the first diagnostic is `t.metal:LINE:COL: error: MESSAGE...`,
/// where LINE:COL is where the first `at` starts in `body`.
fn assert_error(body: &str, at: &str, message: &str) {
    let offset = body
        .find(at)
        .unwrap_or_else(|| panic!("`{at}` not in the test source"));
    let before = &body[..offset];
    let line = before.matches('\n').count() + 3;
    let col = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    let text = fails(body);
    let want = format!("t.metal:{line}:{col}: error: {message}");
    assert!(
        text.lines().next().unwrap_or_default().starts_with(&want),
        "want `{want}`\n got:\n{text}"
    );
}

#[test]
fn namespace_members_keep_their_names_and_kernels_their_entry_point() {
    let wgsl = translate("namespaces.metal").wgsl().to_string();
    for want in [
        "fn twice(",
        "fn add(",
        "fn hidden(",
        "fn ns_kernel(",
        "struct Pair",
    ] {
        assert!(wgsl.contains(want), "missing {want}:\n{wgsl}");
    }
}

#[cfg(feature = "runner")]
#[test]
fn namespace_kernel_matches_cpu_reference() {
    use common::{f32_bytes, f32s};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let Some(gpu) = common::gpu() else { return };
    let input: Vec<f32> = (0..64).map(|i| i as f32 * 0.5 - 3.0).collect();
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, f32_bytes(&input)), (1, vec![0u8; 64 * 4])]
        .into_iter()
        .collect();
    let out = run_kernel(
        gpu,
        "namespaces.metal",
        &fixture("namespaces.metal"),
        &Options::default(),
        "ns_kernel",
        &Dispatch::Threads {
            grid: [64, 1, 1],
            threadgroup: [32, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // twice(a) + add(kScale, kOffset), then + hidden(0).
    let want: Vec<f32> = input.iter().map(|x| x * 2.0 + (2.0 + 3.0) + 1.0).collect();
    assert_eq!(f32s(&out[&1]), want);
}

#[test]
fn unknown_namespace_member_is_located() {
    assert_error(
        "namespace a { constant int k = 1; }\nkernel void f(device int* o [[buffer(0)]]) { o[0] = a::missing; }\n",
        "a::missing",
        "no member named `missing` in namespace `a`",
    );
}

#[test]
fn same_struct_name_in_two_namespaces_is_refused() {
    // Functions, constants and aliases may repeat a name (see cpp_front.rs);
    // structs keep one program-scope name.
    assert_error(
        "namespace a { struct P { float x; }; }\nnamespace b { struct P { float y; }; }\n",
        "P { float y",
        "`P` is declared in namespace `a` and in namespace `b`",
    );
}

#[test]
fn using_declaration_of_unknown_member_is_located() {
    assert_error(
        "namespace a { constant int k = 1; }\nusing a::nope;\n",
        "a::nope",
        "no member named `nope` in namespace `a`",
    );
}

#[test]
fn static_assert_passes_at_program_and_function_scope() {
    let src = format!(
        "{PRELUDE}constant int N = 4;\nstatic_assert(N * 2 == 8, \"eight\");\nenum E {{ A = 3 }};\nstatic_assert(A == 3);\n\
         kernel void k(device int* o [[buffer(0)]]) {{ static_assert(N > 0, \"positive\"); o[0] = N; }}\n"
    );
    Library::from_source("t.metal", &src, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
}

#[test]
fn failing_static_assert_at_program_scope_carries_its_message() {
    assert_error(
        "constant int N = 3;\nstatic_assert(N % 2 == 0, \"N must be even\");\n",
        "static_assert",
        "static assertion failed: N must be even",
    );
}

#[test]
fn failing_static_assert_at_function_scope_is_located() {
    assert_error(
        "kernel void k(device int* o [[buffer(0)]]) {\n  static_assert(sizeof_is_not_here == 1, \"x\");\n}\n",
        "sizeof_is_not_here",
        "static assertion expression is not an integral constant expression",
    );
    assert_error(
        "kernel void k(device int* o [[buffer(0)]]) {\n  static_assert(1 > 2, \"order\");\n}\n",
        "static_assert",
        "static assertion failed: order",
    );
}

#[test]
fn throw_is_not_supported_in_metal() {
    assert_error(
        "kernel void k(device int* o [[buffer(0)]]) {\n  if (o[0] < 0) throw 1;\n}\n",
        "throw",
        "exceptions (`throw`) are not supported in Metal",
    );
}

#[test]
fn try_is_not_supported_in_metal() {
    assert_error(
        "kernel void k(device int* o [[buffer(0)]]) {\n  try { o[0] = 1; } catch (...) {}\n}\n",
        "try",
        "exceptions (`try`) are not supported in Metal",
    );
}

#[test]
fn new_is_not_supported_in_metal() {
    assert_error(
        "kernel void k(device int* o [[buffer(0)]]) {\n  thread int* p = new int;\n}\n",
        "new",
        "`new` is not supported in Metal",
    );
}

#[test]
fn delete_is_not_supported_in_metal() {
    assert_error(
        "kernel void k(device int* o [[buffer(0)]]) {\n  delete o;\n}\n",
        "delete",
        "`delete` is not supported in Metal",
    );
}

#[test]
fn function_pointers_are_not_supported_in_metal() {
    assert_error(
        "float g(float x) { return x; }\nkernel void k(device float* o [[buffer(0)]]) {\n  float (*fp)(float) = g;\n}\n",
        "float (*fp)",
        "function pointers are not supported in Metal",
    );
}

#[test]
fn sizeof_in_constant_contexts_uses_metal_layout() {
    let wgsl = translate("sizeof.metal").wgsl().to_string();
    // `sizeof(float4) / sizeof(float)` sized the array.
    assert!(wgsl.contains("array<f32, 4>"), "{wgsl}");
}

#[test]
fn failing_sizeof_static_assert_is_located() {
    assert_error(
        "static_assert(sizeof(float3) == 12, \"packed?\");\n",
        "static_assert",
        "static assertion failed: packed?",
    );
}

#[cfg(feature = "runner")]
#[test]
fn sizeof_and_alignof_match_metal_on_the_gpu() {
    use common::u32s;
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let Some(gpu) = common::gpu() else { return };
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, vec![0u8; 8 * 4])].into_iter().collect();
    let out = run_kernel(
        gpu,
        "sizeof.metal",
        &fixture("sizeof.metal"),
        &Options::default(),
        "sizes",
        &Dispatch::Threads {
            grid: [1, 1, 1],
            threadgroup: [1, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // Metal's sizes: Particle {float3 @0, float @16, half2 @20} padded to
    // 32 with 16-byte alignment; float2 8; packed_float3 12; half 2;
    // float3x3 three 16-byte columns; float[4] 16.
    assert_eq!(u32s(&out[&0]), vec![32, 16, 8, 12, 2, 48, 16, 4]);
}

#[test]
fn constexpr_functions_size_arrays_and_template_arguments() {
    let wgsl = translate("constexpr.metal").wgsl().to_string();
    assert!(wgsl.contains("array<f32, 4>"), "{wgsl}");
    assert!(wgsl.contains("fn first_of_4_("), "{wgsl}");
}

#[test]
fn failing_constexpr_static_assert_is_located() {
    assert_error(
        "constexpr int sq(int x) { return x * x; }\nstatic_assert(sq(3) == 10, \"nine\");\n",
        "static_assert",
        "static assertion failed: nine",
    );
}

#[cfg(feature = "runner")]
#[test]
fn default_arguments_and_constexpr_match_cpu_reference() {
    use common::{f32_bytes, f32s};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let Some(gpu) = common::gpu() else { return };
    let input: Vec<f32> = (0..32).map(|i| i as f32 * 0.25 - 2.0).collect();
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, f32_bytes(&input)), (1, vec![0u8; 32 * 4])]
        .into_iter()
        .collect();
    let out = run_kernel(
        gpu,
        "constexpr.metal",
        &fixture("constexpr.metal"),
        &Options::default(),
        "defaults",
        &Dispatch::Threads {
            grid: [32, 1, 1],
            threadgroup: [32, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<f32> = input
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let (a, b, c) = (x * 2.0 + 0.5, x * 3.0 + 0.5, x * 1.0 - 1.0);
            a + b + c + 3.0 + 16.0 + 4.0 + (i * i) as f32
        })
        .collect();
    assert_eq!(f32s(&out[&1]), want);
}

/// A file of two translation units pasted together: every redefinition
/// hides the earlier one from there on (a `W0300` warning each), so each
/// kernel computes what its unit computes alone.
#[cfg(feature = "runner")]
#[test]
fn pasted_translation_units_keep_their_own_definitions() {
    use common::{f32_bytes, f32s};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let src = fixture("pasted_units.metal");
    let lib = translate("pasted_units.metal");
    let warnings = lib.warnings();
    for name in ["Params", "Pair", "kBias", "scale"] {
        assert!(
            warnings.contains(&format!(
                "warning: redefinition of `{name}`: the new definition hides the earlier one"
            )),
            "{name}: {warnings}"
        );
    }
    let line = src.lines().position(|l| l.contains("int shift;")).unwrap();
    assert!(
        warnings.contains(&format!(
            "pasted_units.metal:{line}:8: warning: redefinition of `Params`"
        )),
        "{warnings}"
    );
    let Some(gpu) = common::gpu() else { return };
    let input: Vec<f32> = (0..32).map(|i| i as f32 * 0.75 - 5.0).collect();
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, f32_bytes(&input)), (1, vec![0u8; 32 * 4])]
        .into_iter()
        .collect();
    let dispatch = Dispatch::Threads {
        grid: [32, 1, 1],
        threadgroup: [32, 1, 1],
    };
    let run = |entry: &str| {
        let out = run_kernel(
            gpu,
            "pasted_units.metal",
            &src,
            &Options::default(),
            entry,
            &dispatch,
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{entry}: {e}"));
        f32s(&out[&1])
    };
    let first: Vec<f32> = input.iter().map(|x| (x + 1.0) * 2.0 + 1.0).collect();
    let second: Vec<f32> = input
        .iter()
        .map(|x| ((x - 2.0) + 3.0) * 0.25 + 0.5 - 4.0)
        .collect();
    assert_eq!(run("first"), first);
    assert_eq!(run("second"), second);
}

/// Overloads are not redefinitions: no warning, both callable.
#[test]
fn overloads_are_not_redefinitions() {
    let src = format!(
        "{PRELUDE}float f(float x) {{ return x; }}\nfloat f(int x) {{ return float(x) + 1.0f; }}\n\
         kernel void k(device float* o [[buffer(0)]]) {{ o[0] = f(1.0f) + f(2); }}\n"
    );
    let lib = Library::from_source("t.metal", &src, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert_eq!(lib.warnings(), "");
}
