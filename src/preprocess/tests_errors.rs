//! Tests of the preprocessor's diagnostics: each error, located.

use super::tests::{heads, render, run, run_file, run_named, TempDir};
use super::*;
use crate::diagnostics::Severity;

/// The diagnostics of a run that must fail, as `FILE:LINE:COL: error: MSG` lines.
fn fail_with(src: &str, options: &Options) -> Vec<String> {
    match run_named("main.metal", src, options) {
        Ok(r) => panic!("expected errors, got {:?}", r.text),
        Err((diags, map)) => {
            assert!(map.segments().is_empty(), "no segments after a failure");
            heads(&diags, &map)
        }
    }
}

/// The diagnostics of a run that must fail.
fn fail(src: &str) -> Vec<String> {
    fail_with(src, &Options::default())
}

/// Asserts that `src` fails with exactly one error, `expected` (without the
/// `main.metal:` prefix).
fn one_error(src: &str, expected: &str) {
    assert_eq!(fail(src), [format!("main.metal:{expected}")], "for {src:?}");
}

#[test]
fn a_space_before_the_parenthesis_makes_an_object_like_macro() {
    // `#define H (x)` is object-like: the space makes `(x)` the body.
    assert_eq!(run("#define H (x)\nH\n").text, "\n(x)\n");
    assert_eq!(run("#if 1\n#else\n#define F(x\n#endif\n").text, "\n\n\n\n");
}

#[test]
fn error_directive_is_a_located_error() {
    one_error("int a;\n  #error stop here\n", "2:3: error: stop here");
    one_error("#error\n", "1:1: error: #error");
}

#[test]
fn unknown_directives_are_errors() {
    one_error(
        "\n#foo bar\n",
        "2:1: error: invalid preprocessing directive '#foo'",
    );
    one_error(
        "#assert x\n",
        "1:1: error: invalid preprocessing directive '#assert'",
    );
}

#[test]
fn unbalanced_conditionals() {
    one_error(
        "#if 1\nint x;\n",
        "1:1: error: unterminated conditional directive",
    );
    one_error(
        "#ifdef X\n#else\n",
        "1:1: error: unterminated conditional directive",
    );
    one_error("#else\n", "1:1: error: #else without #if");
    one_error("x\n#endif\n", "2:1: error: #endif without #if");
    one_error("#elif 1\n", "1:1: error: #elif without #if");
    one_error(
        "#if 1\n#else\n#else\n#endif\n",
        "3:1: error: #else after #else",
    );
    one_error(
        "#if 1\n#else\n#elif 1\n#endif\n",
        "3:1: error: #elif after #else",
    );
}

#[test]
fn a_conditional_does_not_span_files() {
    let dir = TempDir::new("cond-span");
    dir.write("open.h", "#if 1\n");
    let main = dir.write("main.metal", "#include \"open.h\"\n#endif\n");
    let (diags, map) = run_file(&main, &Options::default()).err().expect("fails");
    let heads = heads(&diags, &map);
    assert_eq!(heads.len(), 2, "{heads:?}");
    assert!(heads[0].ends_with("open.h:1:1: error: unterminated conditional directive"));
    assert!(heads[1].ends_with("main.metal:2:1: error: #endif without #if"));
}

#[test]
fn division_by_zero_is_located_at_the_operator() {
    one_error(
        "#if 1 / 0\n#endif\n",
        "1:7: error: division by zero in preprocessor expression",
    );
    one_error(
        "#if 5 % (2 - 2)\n#endif\n",
        "1:7: error: remainder by zero in preprocessor expression",
    );
    one_error(
        "#if 0\n#elif 1 / 0\n#endif\n",
        "2:9: error: division by zero in preprocessor expression",
    );
}

#[test]
fn macro_names_are_checked() {
    one_error("#define\n", "1:1: error: macro name missing");
    one_error("#ifdef\n#endif\n", "1:1: error: macro name missing");
    one_error("#undef\n", "1:1: error: macro name missing");
    one_error(
        "#define 3 x\n",
        "1:9: error: macro name must be an identifier",
    );
    one_error(
        "#define defined 1\n",
        "1:9: error: 'defined' cannot be used as a macro name",
    );
    one_error(
        "#define A ## b\n",
        "1:11: error: '##' cannot appear at either end of a macro expansion",
    );
    one_error(
        "#define A b ##\n",
        "1:13: error: '##' cannot appear at either end of a macro expansion",
    );
}

#[test]
fn malformed_if_expressions() {
    let cases = [
        ("#if\n", "1:1: error: #if with no expression"),
        ("#if 0\n#elif\n", "2:1: error: #elif with no expression"),
        ("#if 1 +\n", "1:8: error: expected value in expression"),
        (
            "#if 1 2\n",
            "1:7: error: token is not a valid binary operator in a preprocessor subexpression",
        ),
        (
            "#if (1\n",
            "1:7: error: expected ')' in preprocessor expression",
        ),
        (
            "#if \"s\"\n",
            "1:5: error: invalid token at start of a preprocessor expression",
        ),
        (
            "#if 1.5\n",
            "1:5: error: floating point literal in preprocessor expression",
        ),
        (
            "#if 12abc\n",
            "1:5: error: invalid suffix 'abc' on integer constant",
        ),
        (
            "#if 09\n",
            "1:5: error: invalid digit '9' in octal constant",
        ),
        (
            "#if defined(X\n",
            "1:14: error: missing ')' after 'defined'",
        ),
        ("#if defined\n", "1:12: error: macro name missing"),
        (
            "#if 1 ? 2\n",
            "1:10: error: expected ':' in preprocessor expression",
        ),
    ];
    for (src, expected) in cases {
        one_error(&format!("{src}#endif\n"), expected);
    }
}

#[test]
fn an_error_in_a_macro_in_if_points_at_the_invocation() {
    one_error(
        "#define BAD 1 +\n#if 2 * BAD\n#endif\n",
        "2:12: error: expected value in expression",
    );
    one_error(
        "#define Z 0\n#if 1 / Z\n#endif\n",
        "2:7: error: division by zero in preprocessor expression",
    );
}

#[test]
fn missing_include_names_the_file_and_the_folders() {
    let (diags, map) = run_named(
        "main.metal",
        "#include \"nope_xyz.h\"\n",
        &Options::default(),
    )
    .err()
    .expect("fails");
    assert_eq!(
        heads(&diags, &map),
        ["main.metal:1:10: error: 'nope_xyz.h' file not found"]
    );
    assert_eq!(diags[0].notes, ["searched: ."]);
    let dir = TempDir::new("missing");
    let options = Options {
        include_dirs: vec![dir.0.clone()],
        ..Options::default()
    };
    let (diags, map) = run_named("main.metal", "#include <nope.h>\n", &options)
        .err()
        .expect("fails");
    assert_eq!(
        heads(&diags, &map),
        ["main.metal:1:10: error: 'nope.h' file not found"]
    );
    assert_eq!(diags[0].notes, [format!("searched: {}", dir.0.display())]);
    let (diags, _) = run_named("main.metal", "#include <nope.h>\n", &Options::default())
        .err()
        .expect("fails");
    assert!(diags[0].notes[0].starts_with("no include folders were searched"));
}

#[test]
fn malformed_includes() {
    let expected = "error: expected \"FILENAME\" or <FILENAME>";
    one_error("#include\n", &format!("1:1: {expected}"));
    one_error("#include foo\n", &format!("1:10: {expected}"));
    one_error("#include 3\n", &format!("1:10: {expected}"));
    one_error("#include <a.h\n", &format!("1:10: {expected}"));
    one_error("#include \"\"\n", "1:10: error: empty filename");
}

#[test]
fn include_depth_is_limited_without_overflowing_the_stack() {
    let dir = TempDir::new("depth");
    dir.write("self.h", "int x;\n#include \"self.h\"\n");
    let main = dir.write("main.metal", "#include \"self.h\"\n");
    let (diags, map) = run_file(&main, &Options::default()).err().expect("fails");
    let heads = heads(&diags, &map);
    assert_eq!(heads.len(), 1, "{heads:?}");
    assert!(
        heads[0].ends_with("self.h:2:10: error: #include nested too deeply"),
        "{heads:?}"
    );
}

#[test]
fn errors_in_included_files_are_located_there() {
    let dir = TempDir::new("err-in-header");
    dir.write("inc.h", "int x;\n#error from header\n");
    let main = dir.write("main.metal", "\n#include \"inc.h\"\n");
    let (diags, map) = run_file(&main, &Options::default()).err().expect("fails");
    let heads = heads(&diags, &map);
    assert_eq!(heads.len(), 1);
    assert!(
        heads[0].ends_with("inc.h:2:1: error: from header"),
        "{heads:?}"
    );
    assert!(render(&diags, &map).contains("2 | #error from header"));
}

#[test]
fn unterminated_block_comment() {
    one_error(
        "int a; /* x\nint b;\n",
        "1:8: error: unterminated /* comment",
    );
}

#[test]
fn several_errors_are_collected_in_order_with_warnings() {
    let found = fail("#error a\n#warning w\n#error b\n#foo\n");
    assert_eq!(
        found,
        [
            "main.metal:1:1: error: a",
            "main.metal:2:1: warning: w",
            "main.metal:3:1: error: b",
            "main.metal:4:1: error: invalid preprocessing directive '#foo'",
        ]
    );
}

#[test]
fn bad_command_line_defines_are_unlocated_errors() {
    for (name, value, message) in [
        ("1X", "1", "macro name must be an identifier: '1X'"),
        ("A B", "1", "macro name must be an identifier: 'A B'"),
        (
            "F(x",
            "1",
            "expected ',' or ')' in macro parameter list (-D F(x)",
        ),
        (
            "G",
            "a ##",
            "'##' cannot appear at either end of a macro expansion (-D G)",
        ),
    ] {
        let options = Options {
            defines: vec![(name.into(), Some(value.into()))],
            ..Options::default()
        };
        assert_eq!(
            fail_with("x\n", &options),
            [format!("msl2wgsl: error: {message}")]
        );
    }
}

#[test]
fn extra_tokens_are_warnings() {
    let r = run("#if 1\n#else junk\n#endif junk\n#undef X Y\n#include <metal_stdlib> z\n");
    let found = heads(&r.warnings, &r.map);
    assert_eq!(
        found,
        [
            "main.metal:2:7: warning: extra tokens at end of #else directive",
            "main.metal:3:8: warning: extra tokens at end of #endif directive",
            "main.metal:4:10: warning: extra tokens at end of #undef directive",
            "main.metal:5:25: warning: extra tokens at end of #include directive",
        ]
    );
    assert!(r.warnings.iter().all(|w| w.severity == Severity::Warning));
}
