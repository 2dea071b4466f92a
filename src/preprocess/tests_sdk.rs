//! Tests of what clang (and the Metal compiler) accept beyond C's
//! preprocessor: `#import`, `#include_next`, `-include`, the provided SDK
//! headers, Metal's predefined macros, `_Pragma`, and directives inside
//! macro arguments.

use super::tests::{heads, pp, render, run, run_file, run_named, run_with, TempDir};
use super::*;
use crate::diagnostics::{Code, Severity};

/// `s` without any whitespace.
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect()
}

/// Preprocesses the file at `path`, which must succeed.
fn ok_file(path: &std::path::Path, options: &Options) -> super::tests::Run {
    run_file(path, options).unwrap_or_else(|(d, m)| panic!("{}", render(&d, &m)))
}

/// The first lines and codes of the errors of a run of `path` that must fail.
fn errors_of(path: &std::path::Path, options: &Options) -> Vec<(String, Option<Code>)> {
    match run_file(path, options) {
        Ok(r) => panic!("expected errors, got {:?}", r.text),
        Err((diags, map)) => {
            let errors: Vec<&Diagnostic> = diags
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .collect();
            let heads = heads(
                &errors.iter().map(|d| (*d).clone()).collect::<Vec<_>>(),
                &map,
            );
            heads
                .into_iter()
                .zip(errors.iter().map(|d| Some(d.code)))
                .collect()
        }
    }
}

#[test]
fn import_reads_a_file_once_per_translation_unit() {
    let dir = TempDir::new("import");
    dir.write("h.h", "int h;\n");
    dir.write("sub/g.h", "#import \"../h.h\"\nint g;\n");
    let main = dir.write(
        "main.metal",
        "#import \"h.h\"\n#import \"h.h\"\n#import \"sub/g.h\"\n#include \"h.h\"\n",
    );
    let r = ok_file(&main, &Options::default());
    // Imported twice (once by another path), then included: one copy.
    assert_eq!(r.text.matches("int h;").count(), 1, "{:?}", r.text);
    assert_eq!(squeeze(&r.text), "inth;intg;");
    assert!(r.warnings.is_empty(), "{}", render(&r.warnings, &r.map));
}

#[test]
fn import_skips_a_file_already_included() {
    let dir = TempDir::new("import-after");
    dir.write("h.h", "int h;\n");
    let main = dir.write(
        "main.metal",
        "#include \"h.h\"\n#include \"h.h\"\n#import \"h.h\"\n",
    );
    // Without a guard `#include` reads it each time; `#import` then skips it.
    let r = ok_file(&main, &Options::default());
    assert_eq!(r.text.matches("int h;").count(), 2, "{:?}", r.text);
    // `#import` of the Metal headers reads what `#include` does, once.
    let text = pp("#import <metal_stdlib>\n#import <metal_stdlib>\n#import <simd/simd.h>\nx\n");
    assert_eq!(
        text.matches("struct __metal_integral_constant").count(),
        1,
        "{text}"
    );
    assert!(text.ends_with("\n\n\nx\n"), "{text:?}");
}

#[test]
fn include_next_goes_on_after_the_current_folder() {
    let dir = TempDir::new("next");
    dir.write("a/x.h", "int a;\n#include_next <x.h>\n");
    dir.write("b/x.h", "int b;\n#include_next \"x.h\"\n");
    dir.write("c/x.h", "int c;\n");
    let main = dir.write("main.metal", "#include <x.h>\n");
    let options = Options {
        include_dirs: vec![dir.0.join("a"), dir.0.join("b"), dir.0.join("c")],
        ..Options::default()
    };
    let r = ok_file(&main, &options);
    assert_eq!(squeeze(&r.text), "inta;intb;intc;");
    assert!(r.warnings.is_empty(), "{}", render(&r.warnings, &r.map));
    // `__has_include_next` asks the same search.
    dir.write(
        "a/y.h",
        "#if __has_include_next(<x.h>) && !__has_include_next(<y.h>)\nyes\n#endif\n",
    );
    let main = dir.write("main2.metal", "#include <y.h>\n");
    assert_eq!(squeeze(&ok_file(&main, &options).text), "yes");
}

#[test]
fn include_next_past_the_last_folder_finds_the_sdk_header_or_fails() {
    let dir = TempDir::new("next-sdk");
    dir.write(
        "inc/TargetConditionals.h",
        "#define WRAPPED 1\n#include_next <TargetConditionals.h>\n",
    );
    dir.write("inc/only.h", "#include_next <only.h>\n");
    let main = dir.write(
        "main.metal",
        "#include <TargetConditionals.h>\nWRAPPED TARGET_OS_OSX\n",
    );
    let options = Options {
        include_dirs: vec![dir.0.join("inc")],
        ..Options::default()
    };
    assert_eq!(ok_file(&main, &options).text.trim(), "1 1");
    let main = dir.write("main2.metal", "#include <only.h>\n");
    let errors = errors_of(&main, &options);
    let header = dir.0.join("inc/only.h").display().to_string();
    assert_eq!(
        errors,
        [(
            format!("{header}:1:15: error: 'only.h' file not found"),
            Some(Code::IncludeNotFound)
        )]
    );
}

#[test]
fn include_next_in_the_main_file_warns_and_searches_from_the_start() {
    let dir = TempDir::new("next-main");
    dir.write("inc/x.h", "int x;\n");
    let main = dir.write("main.metal", "#include_next <x.h>\n");
    let options = Options {
        include_dirs: vec![dir.0.join("inc")],
        ..Options::default()
    };
    let r = ok_file(&main, &options);
    assert_eq!(squeeze(&r.text), "intx;");
    let name = main.display().to_string();
    assert_eq!(
        heads(&r.warnings, &r.map),
        [format!(
            "{name}:1:1: warning: #include_next in primary source file"
        )]
    );
}

#[test]
fn forced_includes_come_before_the_first_line() {
    let dir = TempDir::new("forced");
    dir.write("pre/prelude.h", "#define N 3\nconstant int pre = N;\n");
    dir.write(
        "second.h",
        "#ifndef N\n#error N missing\n#endif\nint second;\n",
    );
    let main = dir.write("main.metal", "int x = N;\n");
    let options = Options {
        defines: vec![("N".into(), Some("2".into()))],
        include_dirs: vec![dir.0.join("pre")],
        // A name the include path finds, then an absolute one.
        forced_includes: vec!["prelude.h".into(), dir.0.join("second.h")],
        ..Options::default()
    };
    let r = ok_file(&main, &options);
    // In order, after `-D` (whose N the prelude redefines), before line 1.
    assert_eq!(squeeze(&r.text), "constantintpre=3;intsecond;intx=3;");
    let main_name = main.display().to_string();
    assert_eq!(super::tests::origin(&r, "x", 0), (main_name, 1, 5));
    assert_eq!(
        heads(&r.warnings, &r.map),
        [format!(
            "{}:1:9: warning: 'N' macro redefined",
            dir.0.join("pre/prelude.h").display()
        )]
    );
}

#[test]
fn a_missing_forced_include_is_a_located_error() {
    let dir = TempDir::new("forced-missing");
    dir.write("bad.h", "#error from the prelude\n");
    let main = dir.write("main.metal", "int x;\n");
    let options = Options {
        forced_includes: vec!["no-such-prelude.h".into(), dir.0.join("bad.h")],
        ..Options::default()
    };
    let Err((diags, map)) = run_file(&main, &options) else {
        panic!("must fail");
    };
    let bad = dir.0.join("bad.h").display().to_string();
    assert_eq!(
        heads(&diags, &map),
        [
            "<built-in>:1:10: error: 'no-such-prelude.h' file not found".to_string(),
            format!("{bad}:1:1: error: from the prelude"),
        ]
    );
    assert_eq!(diags[0].code, Code::IncludeNotFound);
    assert_eq!(diags[1].notes, ["in file included from <built-in>:2"]);
}

#[test]
fn target_conditionals_follows_the_platform() {
    let src = "#include <TargetConditionals.h>\n\
               TARGET_OS_MAC TARGET_OS_OSX TARGET_OS_IPHONE TARGET_OS_IOS \
               TARGET_OS_SIMULATOR TARGET_OS_MACCATALYST TARGET_CPU_ARM64 TARGET_CPU_X86_64\n";
    assert_eq!(run(src).text.trim(), "1 1 0 0 0 0 0 0");
    let ios = Options {
        platform: Platform::Ios,
        ..Options::default()
    };
    assert_eq!(run_with(src, &ios).text.trim(), "1 0 1 1 0 0 0 0");
    // Each value only where nothing defined it before (a host's -D).
    let simulator = Options {
        defines: vec![("TARGET_OS_SIMULATOR".into(), None)],
        ..ios
    };
    let src = "#import <TargetConditionals.h>\n#include \"TargetConditionals.h\"\n\
               #if TARGET_OS_IPHONE && TARGET_OS_SIMULATOR && __has_include(<TargetConditionals.h>)\nsim\n#endif\n";
    let r = run_with(src, &simulator);
    assert_eq!(r.text.trim(), "sim");
    assert!(r.warnings.is_empty(), "{}", render(&r.warnings, &r.map));
}

#[test]
fn a_user_header_wins_over_the_provided_one() {
    let dir = TempDir::new("sdk-user");
    dir.write("inc/TargetConditionals.h", "#define TARGET_OS_OSX 7\n");
    dir.write("inc/simd/simd.h", "int user_simd;\n");
    let main = dir.write(
        "main.metal",
        "#include <TargetConditionals.h>\n#include <simd/simd.h>\nTARGET_OS_OSX\n",
    );
    let options = Options {
        include_dirs: vec![dir.0.join("inc")],
        ..Options::default()
    };
    assert_eq!(squeeze(&ok_file(&main, &options).text), "intuser_simd;7");
    // Without it, the provided ones: `<simd/simd.h>` adds nothing.
    let r = run_named(
        "main.metal",
        "#include <simd/simd.h>\n#include <TargetConditionals.h>\n#ifdef __TARGETCONDITIONALS__\nok\n#endif\n",
        &Options::default(),
    )
    .unwrap_or_else(|(d, m)| panic!("{}", render(&d, &m)));
    assert_eq!(r.text.trim(), "ok");
}

#[test]
fn framework_headers_are_not_provided() {
    // A host API header stays missing.
    let dir = TempDir::new("framework");
    let main = dir.write(
        "main.metal",
        "#include <metal_stdlib>\n#include <Metal/Metal.h>\n",
    );
    let name = main.display().to_string();
    assert_eq!(
        errors_of(&main, &Options::default()),
        [(
            format!("{name}:2:10: error: 'Metal/Metal.h' file not found"),
            Some(Code::IncludeNotFound)
        )]
    );
}

#[test]
fn tensor_operations_framework_is_refused_at_its_include() {
    let dir = TempDir::new("mpp");
    let main = dir.write(
        "main.metal",
        "#include <metal_stdlib>\n  #include <MetalPerformancePrimitives/MPPTensorOpsConvolution2d.h>\n",
    );
    let name = main.display().to_string();
    let errors = errors_of(&main, &Options::default());
    assert_eq!(errors.len(), 1, "{errors:?}");
    let (head, code) = &errors[0];
    assert_eq!(*code, Some(Code::NoWebGpuEquivalent));
    assert!(
        head.starts_with(&format!(
            "{name}:2:12: error: `<MetalPerformancePrimitives/MPPTensorOpsConvolution2d.h>` declares MetalPerformancePrimitives' tensor operations on `metal::tensor` operands"
        )),
        "{head}"
    );
    // `__has_include` says the refused header is absent, so a fallback
    // path works; the umbrella header (matmul2d) is there.
    let probe = dir.write(
        "probe.metal",
        "#if __has_include(<MetalPerformancePrimitives/MPPTensorOpsConvolution2d.h>)\nyes\n#else\nno\n#endif\n\
         #if __has_include(<MetalPerformancePrimitives/MetalPerformancePrimitives.h>)\nyes\n#else\nno\n#endif\n",
    );
    let text = ok_file(&probe, &Options::default()).text;
    assert_eq!(text.split_whitespace().collect::<Vec<_>>(), ["no", "yes"]);
    // A user's own header of that name wins, as every SDK header.
    let own = dir.write(
        "MetalPerformancePrimitives/MPPTensorOpsConvolution2d.h",
        "own\n",
    );
    assert!(own.is_file());
    let with_dir = Options {
        include_dirs: vec![main.parent().expect("folder").to_path_buf()],
        ..Options::default()
    };
    let text = ok_file(&main, &with_dir).text;
    assert_eq!(text.lines().last(), Some("own"), "{text:?}");
}

#[test]
fn the_matmul_header_is_provided() {
    let dir = TempDir::new("mpp-matmul");
    let main = dir.write(
        "main.metal",
        "#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\n",
    );
    let text = ok_file(&main, &Options::default()).text;
    assert!(text.contains("struct matmul2d_descriptor"), "{text}");
}

#[test]
fn metal_predefined_macros() {
    // `METAL_FUNC` as `<metal_stdlib>` defines it (only its text is
    // checked here).
    assert_eq!(
        pp("METAL_FUNC float f();\n"),
        "inline __attribute__((__always_inline__)) float f();\n"
    );
    let src = "#if __METAL_VERSION__ >= 320 && __METAL__ && defined(METAL_FUNC)\nok\n#endif\n\
               #if defined(__HAVE_RAYTRACING__) || defined(__HAVE_MESH__)\nbad\n#endif\n\
               #if __HAVE_BFLOAT__\nbf\n#endif\n";
    assert_eq!(squeeze(&pp(src)), "okbf");
    // A header's `#ifndef METAL_FUNC` fallback keeps the real definition.
    let r = run("#ifndef METAL_FUNC\n#define METAL_FUNC inline\n#endif\nMETAL_FUNC\n");
    assert_eq!(r.text.trim(), "inline __attribute__((__always_inline__))");
}

#[test]
fn pragma_operator_runs_as_a_pragma() {
    let src = "#define X 1\n_Pragma(\"push_macro(\\\"X\\\")\")\n#undef X\nX\n\
               _Pragma(\"pop_macro(\\\"X\\\")\") X\n";
    let r = run(src);
    assert_eq!(squeeze(&r.text), "X1");
    assert!(r.warnings.is_empty(), "{}", render(&r.warnings, &r.map));
    // From a macro, with `#`: nothing is left in the output.
    let src = "#define DO_PRAGMA(x) _Pragma(#x)\n#define UNROLL DO_PRAGMA(unroll)\n\
               UNROLL for (;;) {}\n_Pragma(\"message(\\\"hello\\\")\") int y;\n";
    let r = run(src);
    assert_eq!(squeeze(&r.text), "for(;;){}inty;");
    assert_eq!(
        heads(&r.warnings, &r.map),
        ["main.metal:4:10: warning: hello"]
    );
    let r = run("_Pragma(\"weird\")\n");
    assert_eq!(
        heads(&r.warnings, &r.map),
        ["main.metal:1:10: warning: unknown pragma ignored"]
    );
}

#[test]
fn pragma_operator_once_in_a_header() {
    let dir = TempDir::new("pragma-op");
    dir.write("h.h", "_Pragma(\"once\")\nint h;\n");
    let main = dir.write("main.metal", "#include \"h.h\"\n#include \"h.h\"\n");
    let r = ok_file(&main, &Options::default());
    assert_eq!(squeeze(&r.text), "inth;");
}

#[test]
fn a_malformed_pragma_operator_is_a_located_error() {
    let Err((diags, map)) = run_named(
        "main.metal",
        "int a;\n_Pragma(unroll)\n",
        &Options::default(),
    ) else {
        panic!("must fail");
    };
    assert_eq!(
        heads(&diags, &map),
        ["main.metal:2:1: error: _Pragma takes a parenthesized string literal"]
    );
    assert_eq!(diags[0].code, Code::MalformedDirective);
    let Err((diags, map)) = run_named(
        "main.metal",
        "#define P _Pragma\nP x\n",
        &Options::default(),
    ) else {
        panic!("must fail");
    };
    assert_eq!(
        heads(&diags, &map),
        ["main.metal:2:1: error: _Pragma takes a parenthesized string literal"]
    );
}

#[test]
fn conditionals_inside_macro_arguments() {
    let src = "#define F(a, b) [a|b]\nint v = F(\n#ifdef WIDE\n  4,\n#else\n  2,\n#endif\n  1);\nint w;\n";
    let r = run(src);
    assert_eq!(squeeze(&r.text), "intv=[2|1];intw;");
    // The line structure is kept: `int w;` is still on line 9.
    assert_eq!(r.text.lines().count(), 9, "{:?}", r.text);
    assert_eq!(
        super::tests::origin(&r, "w", 0),
        ("main.metal".to_string(), 9, 5)
    );
    let wide = Options {
        defines: vec![("WIDE".into(), None)],
        ..Options::default()
    };
    assert_eq!(squeeze(&run_with(src, &wide).text), "intv=[4|1];intw;");
}

#[test]
fn other_directives_inside_macro_arguments() {
    // `#define` runs before the arguments are expanded; `__COUNTER__` is not
    // counted twice by the second reading.
    let src = "#define F(a, b) a b\nF(__COUNTER__ Y,\n#define Y 7\n#if 1\n__COUNTER__\n#endif\n)\n";
    assert_eq!(squeeze(&pp(src)), "071");
    // An expansion that had started before the directive is read again
    // from the start, with `__COUNTER__` where it was.
    let src = "#define G(a) a\n#define H() __COUNTER__ G\nH()(\n#if 1\n5\n#endif\n) __COUNTER__\n";
    assert_eq!(squeeze(&pp(src)), "051");
    // Several invocations, nested groups, an `#elif`.
    let src = "#define G(a) <a>\nG(\n#if 0\nno\n#elif 1\n#if 1\nyes\n#endif\n#endif\n) G(z)\n";
    assert_eq!(squeeze(&pp(src)), "<yes><z>");
}

#[test]
fn directives_inside_arguments_cannot_cost_quadratic_time() {
    let mut src = String::from("#define F(a) a\nF(");
    src.push_str(&"x ".repeat(20_000));
    src.push('\n');
    src.push_str(&"#if 1\n#endif\n".repeat(5_000));
    src.push_str(")\nint after;\n");
    let start = std::time::Instant::now();
    let Err((diags, map)) = run_named("main.metal", &src, &Options::default()) else {
        panic!("must fail");
    };
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    assert_eq!(
        heads(&diags, &map),
        ["main.metal:2:1: error: too many directives inside the arguments of macro `F`"]
    );
    // An include directive in skipped lines of the arguments is no error.
    let src = "#define F(a) a\nF(1\n#if 0\n#include \"missing.h\"\n#endif\n)\n";
    assert_eq!(squeeze(&pp(src)), "1");
}
