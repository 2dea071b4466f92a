//! Library calls are resolved as C++ resolves them, once: user functions
//! (overloads, templates, member functions) first, then the one table of
//! builtins, whose families decide what a kernel needs. A user helper that
//! is merely named like a SIMD-group function (`quad_area`, `simd_foo`), or
//! even named exactly like one (`simd_sum`), is the user's code: it turns
//! no subgroup feature on and computes what the user wrote. The WebGPU
//! dialect is applied to the IR, so it cannot rewrite a user identifier.

mod common;

use msl2wgsl::{Library, Options, SimdGroups, Target};

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// Native subgroups: the WGSL text tests below look at subgroup builtins.
fn translate(body: &str, target: Target) -> Result<Library, String> {
    let options = Options {
        target,
        simd: SimdGroups::Native,
        ..Options::default()
    };
    Library::from_source("t.metal", &format!("{PRELUDE}{body}"), &options).map_err(|f| f.render())
}

fn library(body: &str, target: Target) -> Library {
    translate(body, target).unwrap_or_else(|e| panic!("translation failed:\n{e}"))
}

/// Asserts that kernel `k` of `body` uses no subgroup operation, built-in
/// or feature, in either dialect.
fn assert_no_subgroups(body: &str) {
    for target in [Target::WebGpu, Target::Wgpu] {
        let lib = library(body, target);
        let wgsl = lib.wgsl();
        assert!(!wgsl.contains("enable subgroups"), "{target:?}:\n{wgsl}");
        assert!(!wgsl.contains("subgroup"), "{target:?}:\n{wgsl}");
        let f = lib.function("k").expect("kernel `k`");
        assert!(
            !f.required_features
                .iter()
                .any(|x| x.starts_with("subgroup")),
            "{target:?}: {:?}",
            f.required_features
        );
    }
}

/// A user helper named like a quad-group function.
const QUAD_AREA: &str = "float quad_area(float w, float h) { return w * h; }\nkernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = quad_area(a[i], 2.0f) + 1.0f;\n}\n";

/// A user helper named like a SIMD-group function, called from another
/// helper (the call graph follows it).
const SIMD_FOO: &str = "int simd_foo(int x) { return x * x; }\nint twice(int x) { return simd_foo(x) + simd_foo(x); }\nkernel void k(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = twice(a[i]);\n}\n";

/// A user function with a builtin's very name: C++ lookup finds the
/// user's `simd_sum` (a non-template exact match), so does the translator.
const USER_SIMD_SUM: &str = "float simd_sum(float x) { return x * 3.0f; }\nkernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = simd_sum(a[i]);\n}\n";

/// A user function template and a member function with builtin names.
const USER_TEMPLATE_AND_MEMBER: &str = "template <typename T> T quad_sum(T x) { return x + T(1); }\nstruct Acc {\n  float v;\n  float simd_max(float x) const { return v > x ? v : x; }\n  float simd_min(float x) const { return simd_max(x) - 1.0f; }\n};\nkernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  Acc acc = {5.0f};\n  a[i] = quad_sum(a[i]) + acc.simd_min(a[i]);\n}\n";

#[test]
fn a_helper_named_quad_area_is_not_a_quad_function() {
    assert_no_subgroups(QUAD_AREA);
}

#[test]
fn a_helper_named_simd_foo_is_not_a_simd_function() {
    assert_no_subgroups(SIMD_FOO);
}

#[test]
fn a_user_simd_sum_is_the_users() {
    assert_no_subgroups(USER_SIMD_SUM);
}

#[test]
fn user_templates_and_members_with_builtin_names_are_the_users() {
    assert_no_subgroups(USER_TEMPLATE_AND_MEMBER);
}

#[test]
fn builtins_are_still_found_through_user_helpers() {
    // `quad_area` is the user's, and calls the library's `simd_sum`.
    let body = "float quad_area(float w) { return simd_sum(w); }\nkernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = quad_area(a[i]);\n}\n";
    let lib = library(body, Target::WebGpu);
    assert!(
        lib.wgsl().starts_with("enable subgroups;"),
        "{}",
        lib.wgsl()
    );
    assert!(lib.wgsl().contains("subgroupAdd("), "{}", lib.wgsl());
    let f = lib.function("k").unwrap();
    assert!(
        f.required_features.iter().any(|x| x == "subgroup"),
        "{:?}",
        f.required_features
    );
    // Qualified with `metal::`, the library's function is meant, even
    // where a user function of the same name exists.
    let body = "float simd_sum(float x) { return x * 3.0f; }\nkernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = metal::simd_sum(a[i]);\n}\n";
    let lib = library(body, Target::WebGpu);
    assert!(lib.wgsl().contains("subgroupAdd("), "{}", lib.wgsl());
}

#[test]
fn a_user_threadgroup_barrier_is_no_barrier() {
    // The user's overload is what C++ picks for an `int` argument; the
    // kernel has no barrier, so threads outside a ragged grid return early
    // (no `metal_active` predication) and nothing waits.
    let body = "void threadgroup_barrier(device int* p) { p[0] += 1; }\nkernel void k(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  if (i == 0) { threadgroup_barrier(a); }\n}\n";
    let lib = library(body, Target::WebGpu);
    let wgsl = lib.wgsl();
    assert!(!wgsl.contains("workgroupBarrier"), "{wgsl}");
    assert!(!wgsl.contains("metal_active"), "{wgsl}");
    // The library's barrier, through a user helper, does predicate.
    let body = "void sync() { threadgroup_barrier(mem_flags::mem_threadgroup); }\nkernel void k(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = 1;\n  sync();\n}\n";
    let wgsl = library(body, Target::WebGpu).wgsl().to_string();
    assert!(wgsl.contains("workgroupBarrier()"), "{wgsl}");
    assert!(wgsl.contains("metal_active"), "{wgsl}");
}

#[test]
fn simdgroup_barrier_lowers_to_a_subgroup_barrier() {
    // Reached through a user helper: the kernel needs subgroups and the
    // subgroup barrier, and threads outside a ragged grid run along.
    let body = "void sync_simd() { simdgroup_barrier(mem_flags::mem_none); }\nkernel void k(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = 1;\n  sync_simd();\n}\n";
    let lib = library(body, Target::Wgpu);
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("subgroupBarrier();"), "{wgsl}");
    assert!(!wgsl.contains("workgroupBarrier"), "{wgsl}");
    assert!(wgsl.contains("metal_active"), "{wgsl}");
    let f = lib.function("k").unwrap();
    for feature in ["subgroup", "subgroup-barrier"] {
        assert!(
            f.required_features.iter().any(|x| x == feature),
            "{feature}: {:?}",
            f.required_features
        );
    }
    // WebGPU has no subgroup barrier: one that orders memory is a located
    // error, not a wrong module (the 32-lane emulation waits for the
    // threadgroup instead); one with `mem_none` orders nothing and is left
    // out.
    let options = Options {
        simd: SimdGroups::Native,
        ..Options::default()
    };
    let source = format!("{PRELUDE}{body}");
    let wgsl = Library::from_source("t.metal", &source, &options)
        .unwrap_or_else(|f| panic!("{}", f.render()))
        .wgsl()
        .to_string();
    assert!(!wgsl.contains("Barrier"), "{wgsl}");
    let source = source.replace("mem_none", "mem_threadgroup");
    let failure = Library::from_source("t.metal", &source, &options).expect_err("an error");
    let d = &failure.diagnostics.0[0];
    assert!(
        d.message
            .contains("`simdgroup_barrier` has no WebGPU equivalent"),
        "{}",
        failure.render()
    );
    assert_eq!(d.code(), msl2wgsl::diagnostics::Code::NoWebGpuEquivalent);
}

#[test]
fn the_browser_dialect_leaves_user_names_alone() {
    // naga writes a ballot without a predicate as `subgroupBallot()`, which
    // the dialect used to patch in the text, hitting any name ending so.
    let body = "uint my_subgroupBallot() { return 7u; }\nkernel void k(device uint* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = my_subgroupBallot() + (quad_any(a[i] > 1u) ? 1u : 0u);\n}\n";
    let wgsl = library(body, Target::WebGpu).wgsl().to_string();
    assert!(wgsl.contains("fn my_subgroupBallot() -> u32"), "{wgsl}");
    assert!(wgsl.contains("my_subgroupBallot()"), "{wgsl}");
    assert!(!wgsl.contains("my_subgroupBallot(true)"), "{wgsl}");
    // The library's ballot has its predicate (WGSL requires one).
    assert!(wgsl.contains("= subgroupBallot(("), "{wgsl}");
    assert!(!wgsl.contains("= subgroupBallot()"), "{wgsl}");
    // The variable the dialect adds for non-finite constants does not
    // collide with a user function of its name.
    let body = "float msl2wgsl_runtime_zero(float x) { return x + 1.0f; }\nkernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = min(msl2wgsl_runtime_zero(a[i]), as_type<float>(0x7f800000u));\n}\n";
    let wgsl = library(body, Target::WebGpu).wgsl().to_string();
    assert!(naga::front::wgsl::parse_str(&wgsl).is_ok(), "{wgsl}");
    assert!(wgsl.contains("fn msl2wgsl_runtime_zero("), "{wgsl}");
}

#[cfg(feature = "runner")]
mod gpu {
    //! The user's helpers compute the user's results on the GPU.

    use super::common::{f32_bytes, f32s, gpu, u32s};
    use super::*;
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;

    /// Runs kernel `k` of `body` over `input.len()` threads (threadgroups of
    /// 64, the last one ragged), with `input` as buffer 0; returns it.
    fn run(body: &str, input: Vec<u8>, n: u32) -> Option<Vec<u8>> {
        let gpu = gpu()?;
        let dispatch = Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [64, 1, 1],
        };
        let buffers = BTreeMap::from([(0, input)]);
        let source = format!("{PRELUDE}{body}");
        let out = run_kernel(
            gpu,
            "t.metal",
            &source,
            &Options::default(),
            "k",
            &dispatch,
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        Some(out[&0].clone())
    }

    const N: u32 = 100;

    fn floats() -> Vec<f32> {
        (0..N).map(|i| i as f32 * 0.5 - 7.0).collect()
    }

    #[test]
    fn quad_area_computes_the_users_result() {
        let Some(out) = run(QUAD_AREA, f32_bytes(&floats()), N) else {
            return;
        };
        let want: Vec<f32> = floats().iter().map(|x| x * 2.0 + 1.0).collect();
        assert_eq!(f32s(&out), want);
    }

    #[test]
    fn simd_foo_computes_the_users_result() {
        let input: Vec<i32> = (0..N as i32).map(|i| i - 40).collect();
        let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
        let Some(out) = run(SIMD_FOO, bytes, N) else {
            return;
        };
        let want: Vec<u32> = input.iter().map(|x| (2 * x * x) as u32).collect();
        assert_eq!(u32s(&out), want);
    }

    #[test]
    fn a_user_simd_sum_computes_the_users_result() {
        let Some(out) = run(USER_SIMD_SUM, f32_bytes(&floats()), N) else {
            return;
        };
        let want: Vec<f32> = floats().iter().map(|x| x * 3.0).collect();
        assert_eq!(f32s(&out), want);
    }

    #[test]
    fn user_templates_and_members_compute_the_users_results() {
        let Some(out) = run(USER_TEMPLATE_AND_MEMBER, f32_bytes(&floats()), N) else {
            return;
        };
        let want: Vec<f32> = floats()
            .iter()
            .map(|&x| (x + 1.0) + (if 5.0 > x { 5.0 } else { x } - 1.0))
            .collect();
        assert_eq!(f32s(&out), want);
    }
}
