//! End-to-end tests of the preprocessor through `Library::from_source`:
//! headers shared with host code, macro-generated kernels, and diagnostics
//! inside headers and macro expansions.

#[cfg(feature = "runner")]
mod common;

use msl2wgsl::preprocess::Platform;
use msl2wgsl::{Library, Options};

/// The folder of this test's fixtures.
fn dir() -> String {
    format!("{}/fixtures/preprocess", env!("CARGO_MANIFEST_DIR"))
}

/// Translates fixture `name` (named by its path, so that quoted includes
/// find the headers next to it).
fn translate(name: &str, options: &Options) -> Library {
    let path = format!("{}/{name}", dir());
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Library::from_source(&path, &src, options).unwrap_or_else(|e| panic!("{name}:\n{e}"))
}

/// The rendered diagnostics of a source that must fail, named `name` in the
/// fixtures folder.
fn failure(name: &str, src: &str) -> String {
    let path = format!("{}/{name}", dir());
    match Library::from_source(&path, src, &Options::default()) {
        Ok(lib) => panic!("expected errors, got:\n{}", lib.wgsl()),
        Err(e) => e.render(),
    }
}

#[test]
fn a_kernel_uses_a_header_shared_with_host_code() {
    let lib = translate("shared_kernel.metal", &Options::default());
    let f = lib.function("scale_offset").expect("scale_offset");
    let indices: Vec<(&str, u32)> = f
        .arguments
        .iter()
        .filter(|a| a.name != "id")
        .map(|a| (a.name.as_str(), a.index))
        .collect();
    assert_eq!(indices, [("input", 0), ("output", 1), ("params", 2)]);
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("fn scale_offset"), "{wgsl}");
    // `#pragma once`: the struct is declared once.
    assert_eq!(wgsl.matches("struct Params").count(), 1, "{wgsl}");
    // `ELEMENT_COUNT` and `GAIN_SHIFT` reached the code.
    assert!(wgsl.contains("256"), "{wgsl}");
    assert!(lib.warnings().is_empty(), "{}", lib.warnings());
}

#[test]
fn the_platform_macro_follows_the_option() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
               #if defined(__METAL_IOS__)\n#define NAME ios_kernel\n\
               #elif defined(__METAL_MACOS__)\n#define NAME mac_kernel\n#endif\n\
               kernel void NAME(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = 1.0f; }\n";
    let mac = Library::from_source("p.metal", src, &Options::default()).expect("mac");
    assert!(mac.function("mac_kernel").is_some());
    let mut options = Options::default();
    options.preprocess.platform = Platform::Ios;
    let ios = Library::from_source("p.metal", src, &options).expect("ios");
    assert!(ios.function("ios_kernel").is_some());
}

#[test]
fn one_macro_instantiates_a_kernel_per_type() {
    let lib = translate("elementwise.metal", &Options::default());
    let wgsl = lib.wgsl();
    for op in ["add", "mul", "max"] {
        for ty in ["float", "int", "uint", "half"] {
            let name = format!("{op}_{ty}");
            assert!(lib.function(&name).is_some(), "{name} missing");
            assert!(
                wgsl.contains(&format!("fn {name}(")),
                "{name} not in\n{wgsl}"
            );
        }
    }
    assert_eq!(lib.function_names().len(), 12);
    assert!(wgsl.contains("enable f16;"), "the half kernels need f16");
}

#[test]
fn an_error_in_a_header_names_the_include_chain() {
    let text = failure(
        "uses_broken.metal",
        "#include <metal_stdlib>\n\n#include \"broken_header.h\"\n",
    );
    let header = format!("{}/broken_header.h", dir());
    let main = format!("{}/uses_broken.metal", dir());
    assert!(
        text.starts_with(&format!(
            "{header}:4:26: error: macro `PAIR` requires 2 arguments, but 1 given"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("note: macro `PAIR` defined at {header}:2:9")),
        "{text}"
    );
    assert!(
        text.contains(&format!("note: in file included from {main}:3")),
        "{text}"
    );
}

#[test]
fn macro_errors_are_located_at_the_invocation() {
    let src = "#define SQUARE(x) ((x) * (x))\n#define TWICE(x) SQUARE(x, x)\n\
               kernel void k(device float* a [[buffer(0)]]) {\n    a[0] = TWICE(a[1]);\n}\n";
    let text = failure("m.metal", src);
    let main = format!("{}/m.metal", dir());
    assert!(
        text.starts_with(&format!(
            "{main}:4:12: error: macro `SQUARE` requires 1 argument, but 2 given"
        )),
        "{text}"
    );
    assert!(
        text.contains("note: in expansion of macro `TWICE`"),
        "{text}"
    );
    let src = "#define LOAD(p, i) p[i]\nkernel void k(device float* a [[buffer(0)]]) {\n    a[0] = LOAD(a,\n";
    let text = failure("u.metal", src);
    assert!(
        text.starts_with(&format!(
            "{}/u.metal:3:12: error: unterminated argument list invoking macro `LOAD`",
            dir()
        )),
        "{text}"
    );
}

#[test]
fn later_errors_in_expansions_point_at_the_invocation() {
    let src = "#define USE(x) x + undefined_name\n\
               kernel void k(device float* a [[buffer(0)]]) {\n    a[0] = USE(\n        a[1]);\n}\n";
    let text = failure("late.metal", src);
    let main = format!("{}/late.metal", dir());
    assert!(text.starts_with(&format!("{main}:3:12: error:")), "{text}");
    assert!(text.contains("undefined_name"), "{text}");
}

/// A new empty folder under the system's temporary folder.
fn temp_dir(tag: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!(
        "msl2wgsl-preprocess-{tag}-{}-{n}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Translates the file `path`, which must succeed.
fn translate_file(path: &std::path::Path, options: &Options) -> Library {
    Library::from_file(path, options).unwrap_or_else(|e| panic!("{}:\n{e}", path.display()))
}

#[test]
fn a_forced_include_supplies_a_prelude() {
    let dir = temp_dir("forced");
    let prelude = dir.join("prelude.metal");
    std::fs::write(
        &prelude,
        "#include <metal_stdlib>\nusing namespace metal;\n#define GAIN 3.0f\n\
         struct Frame { float scale; };\n",
    )
    .unwrap();
    let main = dir.join("k.metal");
    std::fs::write(
        &main,
        "kernel void apply(device float* a [[buffer(0)]], constant Frame& f [[buffer(1)]],\n\
         uint i [[thread_position_in_grid]]) { a[i] = a[i] * f.scale * GAIN; }\n",
    )
    .unwrap();
    let mut options = Options::default();
    options.preprocess.forced_includes = vec![prelude];
    let lib = translate_file(&main, &options);
    let f = lib.function("apply").expect("apply");
    assert_eq!(f.arguments.iter().filter(|a| a.name == "f").count(), 1);
    assert!(lib.wgsl().contains("3f"), "{}", lib.wgsl());
    // Without the option, `Frame` is unknown.
    assert!(Library::from_file(&main, &Options::default()).is_err());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_header_imported_twice_is_declared_once() {
    let dir = temp_dir("import");
    std::fs::write(dir.join("types.h"), "struct Pair { float a; float b; };\n").unwrap();
    let main = dir.join("k.metal");
    std::fs::write(
        &main,
        "#import <metal_stdlib>\n#import \"types.h\"\n#import \"types.h\"\n\
         kernel void sum(device Pair* p [[buffer(0)]], uint i [[thread_position_in_grid]]) \
         { p[i].a = p[i].a + p[i].b; }\n",
    )
    .unwrap();
    let lib = translate_file(&main, &Options::default());
    assert_eq!(
        lib.wgsl().matches("struct Pair").count(),
        1,
        "{}",
        lib.wgsl()
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sdk_headers_pragma_operators_and_directives_in_arguments() {
    let src = "#include <metal_stdlib>\n#include <TargetConditionals.h>\n#include <simd/simd.h>\n\
               using namespace metal;\n#define UNROLL _Pragma(\"unroll\")\n#define KERNEL(name, body) \\\n\
               kernel void name(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) body\n\
               KERNEL(\n#if TARGET_OS_IPHONE\nphone_kernel,\n#else\nmac_kernel,\n#endif\n\
               { UNROLL for (int k = 0; k < 2; k++) { a[i] += 1.0f; } })\n";
    let mac = Library::from_source("sdk.metal", src, &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(mac.function_names(), ["mac_kernel"]);
    let mut options = Options::default();
    options.preprocess.platform = Platform::Ios;
    let ios = Library::from_source("sdk.metal", src, &options).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ios.function_names(), ["phone_kernel"]);
    assert!(ios.warnings().is_empty(), "{}", ios.warnings());
}

/// GPU runs of the two fixtures, compared with the CPU.
#[cfg(feature = "runner")]
mod gpu_runs {
    use super::common::{f32_bytes, f32s, gpu, u32s};
    use super::{dir, Options};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;

    /// Runs `entry` of fixture `name` over `threads` threads; `None` without
    /// a GPU.
    fn run(
        name: &str,
        entry: &str,
        threads: u32,
        buffers: Vec<(u32, Vec<u8>)>,
    ) -> Option<BTreeMap<u32, Vec<u8>>> {
        let gpu = gpu()?;
        let path = format!("{}/{name}", dir());
        let src = std::fs::read_to_string(&path).expect("fixture");
        let dispatch = Dispatch::Threads {
            grid: [threads, 1, 1],
            threadgroup: [64, 1, 1],
        };
        let buffers = buffers.into_iter().collect();
        let out = run_kernel(
            gpu,
            &path,
            &src,
            &Options::default(),
            entry,
            &dispatch,
            &buffers,
        );
        Some(out.unwrap_or_else(|e| panic!("{entry}: {e}")))
    }

    #[test]
    fn shared_header_kernel_matches_cpu() {
        let n = 256usize;
        let input: Vec<f32> = (0..n * 4).map(|i| i as f32 * 0.25 - 7.0).collect();
        // `Params` in Metal's layout: color, offset, scale, count (32 bytes).
        let params = f32_bytes(&[1.0, 2.0, 3.0, 4.0, 0.5, -0.5, 2.0]);
        let params = [params, 200u32.to_le_bytes().to_vec()].concat();
        let buffers = vec![(0, f32_bytes(&input)), (1, vec![0; n * 16]), (2, params)];
        let Some(out) = run("shared_kernel.metal", "scale_offset", n as u32, buffers) else {
            return;
        };
        let got = f32s(&out[&1]);
        let add = [1.0 + 1.0, 2.0 - 1.0, 3.0, 4.0];
        for (i, g) in got.iter().enumerate() {
            let want = if i / 4 < 200 {
                input[i] * 2.0 + add[i % 4]
            } else {
                0.0
            };
            assert_eq!(*g, want, "output[{i}]");
        }
    }

    #[test]
    fn macro_generated_kernels_match_cpu() {
        let n = 1000u32;
        let a: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2654435761) >> 7).collect();
        let b: Vec<u32> = (0..n).map(|i| (i * 7919) % 1000).collect();
        let bytes = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let buffers = || {
            vec![
                (0, bytes(&a)),
                (1, bytes(&b)),
                (2, vec![0; n as usize * 4]),
                (3, n.to_le_bytes().to_vec()),
            ]
        };
        type Op = fn(u32, u32) -> u32;
        let cases: [(&str, Op); 3] = [
            ("add_uint", |x, y| x.wrapping_add(y)),
            ("mul_int", |x, y| (x as i32).wrapping_mul(y as i32) as u32),
            ("max_uint", |x, y| x.max(y)),
        ];
        for (entry, op) in cases {
            let Some(out) = run("elementwise.metal", entry, 1024, buffers()) else {
                return;
            };
            let want: Vec<u32> = a.iter().zip(&b).map(|(&x, &y)| op(x, y)).collect();
            assert_eq!(u32s(&out[&2]), want, "{entry}");
        }
        let fa: Vec<f32> = a.iter().map(|&x| x as f32 * 1e-3).collect();
        let fb: Vec<f32> = b.iter().map(|&x| x as f32 * 0.5).collect();
        let mut fbufs = buffers();
        (fbufs[0].1, fbufs[1].1) = (f32_bytes(&fa), f32_bytes(&fb));
        let Some(out) = run("elementwise.metal", "mul_float", 1024, fbufs) else {
            return;
        };
        let want: Vec<f32> = fa.iter().zip(&fb).map(|(x, y)| x * y).collect();
        assert_eq!(f32s(&out[&2]), want, "mul_float");
    }
}
