//! Tests of function-like macros, `#`, `##`, variadic macros and the other
//! features beyond object-like macros: output, origin map and diagnostics.

use super::tests::{heads, origin, pp, render, run, run_file, run_named, run_with, TempDir};
use super::*;
use crate::diagnostics::Severity;

/// `s` without any whitespace, to compare expansions whose spacing C leaves
/// to the implementation.
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect()
}

/// Asserts that the code lines of `src` (after the definitions) expand to
/// `expected`, ignoring whitespace.
fn expands(src: &str, expected: &str) {
    assert_eq!(squeeze(&pp(src)), squeeze(expected), "for {src:?}");
}

/// The diagnostics of a run that must fail: the first line of each, and
/// all notes.
fn failure(src: &str) -> (Vec<String>, Vec<String>) {
    match run_named("main.metal", src, &Options::default()) {
        Ok(r) => panic!("expected errors, got {:?}", r.text),
        Err((diags, map)) => {
            let notes = diags.iter().flat_map(|d| d.notes.clone()).collect();
            (heads(&diags, &map), notes)
        }
    }
}

#[test]
fn function_like_macros_substitute_their_arguments() {
    let r = run("#define ADD(a, b) ((a) + (b))\nint x = ADD(1, 2);\n");
    assert_eq!(r.text, "\nint x = ((1) + (2));\n");
    assert_eq!(
        pp("#define Z() 0\n#define ONE(a) [a]\nZ() ONE(x) ONE() ONE( )\n"),
        "\n\n0 [x] [] []\n"
    );
    expands("#define P(a, b) a|b\nP(,) P(1,) P(,2)\n", "| 1| |2");
}

#[test]
fn a_name_without_parenthesis_is_not_invoked() {
    let src = "#define F(x) <x>\nint F; F = 1; F\n(2) F /* c */ (3)\n";
    assert_eq!(pp(src), "\nint F; F = 1; <2> <3>\n\n");
    let src = "#define F(x) x\nF\nint y;\n";
    assert_eq!(pp(src), "\nF\nint y;\n");
}

#[test]
fn arguments_may_span_lines_and_later_lines_keep_their_numbers() {
    let src = "#define F(a, b) a + b\nx = F(1,\n      2) * 3;\ny;\n";
    let r = run(src);
    assert_eq!(r.text, "\nx = 1 + 2 * 3;\n\ny;\n");
    assert_eq!(origin(&r, "y", 0), ("main.metal".into(), 4, 1));
    assert_eq!(origin(&r, "* 3", 0), ("main.metal".into(), 3, 10));
    assert_eq!(origin(&r, "1 + 2", 0), ("main.metal".into(), 2, 5));
    let loc = r.map.locate(crate::source_map::Span::new(5, 10)).unwrap();
    let file = r.map.file(loc.file);
    assert_eq!(&file.text[loc.range], "F(1,\n      2)");
}

#[test]
fn nested_parentheses_and_commas_stay_in_one_argument() {
    expands(
        "#define F(a, b) a + b\nF((1, 2), g(3, 4))\n",
        "(1, 2) + g(3, 4)",
    );
    // Only parentheses group: brackets and braces do not.
    let (heads, _) = failure("#define F(a, b) a + b\nF([1, 2], 3)\n");
    assert_eq!(
        heads,
        ["main.metal:2:1: error: macro `F` requires 2 arguments, but 3 given"]
    );
}

#[test]
fn arguments_are_expanded_before_substitution() {
    expands(
        "#define ONE 1\n#define ID(x) x\nID(ONE) ID(ID(2)) ID(ID)\n",
        "1 2 ID",
    );
    // An object-like macro can name a function-like one whose `(` follows.
    expands("#define G F\n#define F(x) <x>\nG(1) G\n", "<1> F");
}

#[test]
fn a_macro_is_not_replaced_inside_its_own_expansion() {
    expands("#define f(x) x f\nf(1)(2)\n", "1 f(2)");
    expands("#define foo(x) bar x\nfoo(foo) (2)\n", "bar foo (2)");
    expands("#define f(a) a*g\n#define g(a) f(a)\nf(2)(9)\n", "2*9*g");
    expands("#define R(x) R(x + 1)\nR(0)\n", "R(0 + 1)");
}

#[test]
fn stringizing_spells_the_argument() {
    let src = "#define S(x) #x\nS(a + b) S(  a   +b ) S(\"q\\n\") S('\"') S() S(@\\n)\n";
    assert_eq!(
        pp(src),
        "\n\"a + b\" \"a +b\" \"\\\"q\\\\n\\\"\" \"'\\\"'\" \"\" \"@\\n\"\n"
    );
    // `#` is only an operator in function-like macros.
    assert_eq!(pp("#define H # x\nH\n"), "\n# x\n");
}

#[test]
fn pasting_joins_tokens_before_rescanning() {
    let defs = "#define CAT(a, b) a ## b\n#define XCAT(a, b) CAT(a, b)\n#define ONE 1\n\
                #define AB done\n";
    expands(
        &format!("{defs}CAT(x, 1) CAT(, y) CAT(x,) [CAT(,)] CAT(+, =) CAT(1, .5f)\n"),
        "x1 y x [] += 1.5f",
    );
    expands(
        &format!("{defs}CAT(ONE, 2) XCAT(ONE, 2) CAT(A, B)\n"),
        "ONE2 12 done",
    );
    assert_eq!(pp("#define CAT a ## b\nint CAT = 1;\n"), "\nint ab = 1;\n");
    expands(
        "#define C3(a, b, c) a ## b ## c\nC3(x, , z) C3(, , z)\n",
        "xz z",
    );
}

#[test]
fn variadic_macros() {
    let src = "#define debug(...) fprintf(stderr, __VA_ARGS__)\n\
               #define showlist(...) puts(#__VA_ARGS__)\n\
               #define report(test, ...) ((test)?puts(#test): printf(__VA_ARGS__))\n\
               debug(\"Flag\");\n\
               debug(\"X = %d\\n\", x);\n\
               showlist(The first, second, and third items.);\n\
               report(x>y, \"x is %d but y is %d\", x, y);\n";
    let expected = "fprintf(stderr, \"Flag\");\nfprintf(stderr, \"X = %d\\n\", x);\n\
                    puts(\"The first, second, and third items.\");\n\
                    ((x>y)?puts(\"x>y\"): printf(\"x is %d but y is %d\", x, y));";
    expands(src, expected);
    expands("#define N(args...) k(args)\nN(1, 2) N()\n", "k(1, 2) k()");
    expands(
        "#define G(fmt, ...) h(fmt, ## __VA_ARGS__)\nG(a) G(a, b, c)\n",
        "h(a) h(a, b, c)",
    );
}

#[test]
fn va_opt_appears_only_with_variable_arguments() {
    let src = "#define F(...) f(0 __VA_OPT__(,) __VA_ARGS__)\n\
               #define G(X, ...) f(0, X __VA_OPT__(,) __VA_ARGS__)\n\
               #define SDEF(sname, ...) S sname __VA_OPT__(= { __VA_ARGS__ })\n\
               #define EMP\n\
               F(a, b, c) F() F(EMP) G(a, b, c) G(a, ) G(a) SDEF(foo); SDEF(bar, 1, 2);\n";
    expands(
        src,
        "f(0, a, b, c) f(0) f(0) f(0, a, b, c) f(0, a) f(0, a) S foo; S bar = { 1, 2 };",
    );
}

#[test]
fn the_c_standard_example_3_redefinition_and_rescanning() {
    // C11 §6.10.3.5 EXAMPLE 3.
    let src = "#define x 3\n#define f(a) f(x * (a))\n#undef x\n#define x 2\n#define g f\n\
               #define z z[0]\n#define h g(~\n#define m(a) a(w)\n#define w 0,1\n\
               #define t(a) a\n#define p() int\n#define q(x) x\n#define r(x,y) x ## y\n\
               #define str(x) # x\n\
               f(y+1) + f(f(z)) % t(t(g)(0) + t)(1);\n\
               g(x+(3,4)-w) | h 5) & m\n(f)^m(m);\n\
               p() i[q()] = { q(1), r(2,3), r(4,), r(,5), r(,) };\n\
               char c[2][6] = { str(hello), str() };\n";
    let expected = "f(2 * (y+1)) + f(2 * (f(2 * (z[0])))) % f(2 * (0)) + t(1);\n\
                    f(2 * (2+(3,4)-0,1)) | f(2 * (~ 5)) & f(2 * (0,1))^m(0,1);\n\
                    int i[] = { 1, 23, 4, 5, };\nchar c[2][6] = { \"hello\", \"\" };";
    expands(src, expected);
}

#[test]
fn the_c_standard_example_4_stringizing_and_pasting() {
    // C11 §6.10.3.5 EXAMPLE 4.
    let src = "#define str(s) # s\n#define xstr(s) str(s)\n\
               #define debug(s, t) printf(\"x\" # s \"= %d, x\" # t \"= %s\", \\\n x ## s, x ## t)\n\
               #define INCFILE(n) vers ## n\n#define glue(a, b) a ## b\n\
               #define xglue(a, b) glue(a, b)\n#define HIGHLOW \"hello\"\n\
               #define LOW LOW \", world\"\n\
               debug(1, 2);\n\
               fputs(str(strncmp(\"abc\\0d\", \"abc\", '\\4') // this goes away\n == 0) str(: @\\n), s);\n\
               xstr(INCFILE(2).h)\nglue(HIGH, LOW);\nxglue(HIGH, LOW)\n";
    let expected = "printf(\"x\" \"1\" \"= %d, x\" \"2\" \"= %s\", x1, x2);\n\
                    fputs(\"strncmp(\\\"abc\\\\0d\\\", \\\"abc\\\", '\\\\4') == 0\" \": @\\n\", s);\n\
                    \"vers2.h\"\n\"hello\";\n\"hello\" \", world\"";
    expands(src, expected);
}

#[test]
fn function_like_macros_in_if_expressions() {
    let src =
        "#define VER(a, b) ((a) * 100 + (b))\n#if VER(3, 2) == 302 && !defined(VER2)\nok\n#endif\n";
    assert_eq!(pp(src).trim(), "ok");
    let src = "#define F(x) x\n#if F\nno\n#else\nok\n#endif\n";
    assert_eq!(pp(src).trim(), "ok");
}

#[test]
fn command_line_function_like_macros() {
    let options = Options {
        defines: vec![("SQ(x)".into(), Some("((x)*(x))".into()))],
        ..Options::default()
    };
    assert_eq!(run_with("SQ(3)\n", &options).text, "((3)*(3))\n");
}

#[test]
fn line_directives_change_line_and_file() {
    let src = "#line 100 \"foo.metal\"\n__LINE__ __FILE__\n\n__LINE__\n";
    assert_eq!(pp(src), "\n100 \"foo.metal\"\n\n102\n");
    assert_eq!(
        pp("#line 7\n\n__LINE__ __FILE__\n"),
        "\n\n8 \"main.metal\"\n"
    );
    assert_eq!(pp("# 50 \"x.h\" 1\n__LINE__ __FILE__\n"), "\n50 \"x.h\"\n");
    assert_eq!(pp("#define N 20\n#line N\n__LINE__\n"), "\n\n20\n");
    let r = run("#line 5\nint a;\n");
    assert_eq!(origin(&r, "a", 0), ("main.metal".into(), 2, 5));
}

#[test]
fn counter_and_feature_tests() {
    assert_eq!(pp("__COUNTER__ __COUNTER__ __COUNTER__\n"), "0 1 2\n");
    let src =
        "#if defined(__has_include) && !__has_attribute(x) && !__has_feature(y)\nok\n#endif\n\
               #ifdef __has_builtin\nok2\n#endif\n";
    assert_eq!(squeeze(&pp(src)), "okok2");
}

#[test]
fn the_platform_option_picks_the_predefined_macro() {
    let src = "#if defined(__METAL_IOS__) && !defined(__METAL_MACOS__)\nios\n#else\nmac\n#endif\n";
    assert_eq!(pp(src).trim(), "mac");
    let options = Options {
        platform: Platform::Ios,
        ..Options::default()
    };
    assert_eq!(run_with(src, &options).text.trim(), "ios");
}

#[test]
fn pragmas() {
    let src = "#define X 1\n#pragma push_macro(\"X\")\n#undef X\n#define X 2\nX\n\
               #pragma pop_macro(\"X\")\nX\n#pragma clang diagnostic push\n#pragma unroll\n";
    let r = run(src);
    assert_eq!(squeeze(&r.text), "21");
    assert!(r.warnings.is_empty(), "{}", render(&r.warnings, &r.map));
    let r = run("#pragma weird thing\n#pragma message(\"hello\")\n");
    assert_eq!(
        heads(&r.warnings, &r.map),
        [
            "main.metal:1:9: warning: unknown pragma ignored",
            "main.metal:2:1: warning: hello",
        ]
    );
}

#[test]
fn definitions_and_redefinitions() {
    let r = run("#define F(a) a\n#define F(a) a\n#define F(b) b\nF(1)\n");
    assert_eq!(r.text.trim(), "1");
    assert_eq!(
        heads(&r.warnings, &r.map),
        ["main.metal:3:9: warning: 'F' macro redefined"]
    );
}

#[test]
fn wrong_argument_counts_are_located_errors() {
    let (heads, notes) = failure("#define F(a, b) a\nx F(1, 2, 3);\n");
    assert_eq!(
        heads,
        ["main.metal:2:3: error: macro `F` requires 2 arguments, but 3 given"]
    );
    assert_eq!(notes, ["macro `F` defined at main.metal:1:9"]);
    let (heads, _) = failure("#define F(a, b) a\nF(1)\n#define Z() 0\nZ(1)\n");
    assert_eq!(
        heads,
        [
            "main.metal:2:1: error: macro `F` requires 2 arguments, but 1 given",
            "main.metal:4:1: error: macro `Z` requires 0 arguments, but 1 given",
        ]
    );
    let (heads, _) = failure("#define V(a, b, ...) a\nV(1)\n");
    assert_eq!(
        heads,
        ["main.metal:2:1: error: macro `V` requires at least 2 arguments, but 1 given"]
    );
}

#[test]
fn errors_inside_expansions_name_the_macro() {
    let (heads, notes) = failure("#define F(a, b) a\n#define G F(1)\nint G;\n");
    assert_eq!(
        heads,
        ["main.metal:3:5: error: macro `F` requires 2 arguments, but 1 given"]
    );
    assert_eq!(
        notes,
        [
            "in expansion of macro `G`",
            "macro `F` defined at main.metal:1:9"
        ]
    );
    let (heads, notes) = failure("#define C(a, b) a ## b\n  C(+, a)\n");
    assert_eq!(
        heads,
        ["main.metal:2:3: error: pasting \"+\" and \"a\" does not give a valid preprocessing token"]
    );
    assert_eq!(notes, ["in expansion of macro `C`"]);
    let (heads, notes) = failure("#define BAD 1 +\n#if 2 * BAD\n#endif\n");
    assert_eq!(
        heads,
        ["main.metal:2:12: error: expected value in expression"]
    );
    assert_eq!(notes, ["in expansion of macro `BAD`"]);
}

#[test]
fn unterminated_invocations_are_located_errors() {
    let (heads, _) = failure("#define F(a) a\nint x;\nF(1,\n2\n");
    assert_eq!(
        heads,
        ["main.metal:3:1: error: unterminated argument list invoking macro `F`"]
    );
    let (heads, notes) = failure("#define F(a) a\nF(1\n#include <metal_stdlib>\n)\n");
    assert_eq!(
        heads[0],
        "main.metal:2:1: error: unterminated argument list invoking macro `F`"
    );
    assert_eq!(
        notes,
        ["an include directive cannot appear inside macro arguments"]
    );
    let (heads, _) = failure("#define F(a) a\n#if F(1\n#endif\n");
    assert_eq!(
        heads,
        ["main.metal:2:5: error: unterminated argument list invoking macro `F`"]
    );
}

#[test]
fn malformed_definitions() {
    for (src, expected) in [
        (
            "#define F(a, a) a\n",
            "1:14: error: duplicate macro parameter name 'a'",
        ),
        (
            "#define F(a\n",
            "1:11: error: missing ')' in macro parameter list",
        ),
        ("#define F(1) x\n", "1:11: error: expected a parameter name"),
        (
            "#define F(a b) x\n",
            "1:13: error: expected ',' or ')' in macro parameter list",
        ),
        (
            "#define F(..., a) x\n",
            "1:14: error: missing ')' after '...'",
        ),
        (
            "#define S(x) #y\n",
            "1:14: error: '#' is not followed by a macro parameter",
        ),
        (
            "#define F(x) ## x\n",
            "1:14: error: '##' cannot appear at either end of a macro expansion",
        ),
        (
            "#define F(x) x ##\n",
            "1:16: error: '##' cannot appear at either end of a macro expansion",
        ),
        (
            "#define V(...) __VA_OPT__ x\n",
            "1:16: error: missing '(' after '__VA_OPT__'",
        ),
        (
            "#define V(...) __VA_OPT__(x\n",
            "1:16: error: unterminated '__VA_OPT__'",
        ),
        (
            "#define V(...) __VA_OPT__(__VA_OPT__())\n",
            "1:27: error: '__VA_OPT__' cannot be nested",
        ),
        (
            "#define F(__VA_ARGS__) x\n",
            "1:11: error: '__VA_ARGS__' can only appear in the expansion of a variadic macro",
        ),
    ] {
        let (heads, _) = failure(src);
        assert_eq!(heads, [format!("main.metal:{expected}")], "for {src:?}");
    }
}

#[test]
fn line_directive_errors() {
    for (src, expected) in [
        (
            "#line\n",
            "1:1: error: #line directive requires a positive integer argument",
        ),
        (
            "#line x\n",
            "1:7: error: #line directive requires a positive integer argument",
        ),
        (
            "#line 12a\n",
            "1:7: error: #line directive requires a simple digit sequence",
        ),
        (
            "#line 3 x\n",
            "1:9: error: invalid filename for #line directive",
        ),
    ] {
        let (heads, _) = failure(src);
        assert_eq!(heads, [format!("main.metal:{expected}")], "for {src:?}");
    }
}

#[test]
fn expansion_size_is_limited() {
    // Each level doubles: 2^30 tokens if nothing stopped it.
    let mut src: String = (0..30)
        .map(|i| format!("#define A{i} A{} A{}\n", i + 1, i + 1))
        .collect();
    src.push_str("int x = A0;\n");
    let (heads, notes) = failure(&src);
    assert_eq!(
        heads,
        ["main.metal:31:9: error: macro expansion larger than 1 MiB"]
    );
    assert!(
        notes.iter().any(|n| n == "in expansion of macro `A0`"),
        "{notes:?}"
    );
    // The same through arguments, which are expanded before substitution.
    let nested = (0..25).fold("1".to_string(), |acc, _| format!("D({acc})"));
    let (heads, _) = failure(&format!("#define D(x) x x\n{nested}\n"));
    assert_eq!(
        heads,
        ["main.metal:2:1: error: macro expansion larger than 1 MiB"]
    );
}

#[test]
fn expansion_nesting_is_limited() {
    let mut src: String = (1..100)
        .map(|i| format!("#define N{i} N{} y\n", i - 1))
        .collect();
    src.push_str("#define N0 x\nN99\n");
    let (heads, notes) = failure(&src);
    assert_eq!(
        heads,
        ["main.metal:101:1: error: macro expansion nested more than 64 levels deep"]
    );
    assert!(notes.len() <= 9, "{notes:?}");
    // Chains in tail position do not nest.
    let mut src: String = (1..200)
        .map(|i| format!("#define T{i} T{}\n", i - 1))
        .collect();
    src.push_str("#define T0 ok\nT199\n");
    assert_eq!(pp(&src).trim(), "ok");
}

#[test]
fn errors_in_included_files_name_the_include_chain() {
    let dir = TempDir::new("chain");
    dir.write("inner.h", "int y;\n#error deep\n");
    dir.write("outer.h", "int x;\n\n#include \"inner.h\"\n");
    let main = dir.write("main.metal", "#include \"outer.h\"\n");
    let (diags, map) = run_file(&main, &Options::default()).err().expect("fails");
    let heads = heads(&diags, &map);
    assert!(heads[0].ends_with("inner.h:2:1: error: deep"), "{heads:?}");
    let outer = dir.0.join("outer.h").display().to_string();
    assert_eq!(
        diags[0].notes,
        [
            format!("in file included from {outer}:3"),
            format!("in file included from {}:1", main.display()),
        ]
    );
    assert_eq!(diags[0].severity, Severity::Error);
}

#[test]
fn macros_defined_in_headers_are_noted_where_defined() {
    let dir = TempDir::new("def-note");
    dir.write("m.h", "\n#define PAIR(a, b) a, b\n");
    let main = dir.write("main.metal", "#include \"m.h\"\nPAIR(1)\n");
    let (diags, map) = run_file(&main, &Options::default()).err().expect("fails");
    let heads = heads(&diags, &map);
    assert!(
        heads[0].ends_with("main.metal:2:1: error: macro `PAIR` requires 2 arguments, but 1 given")
    );
    let header = dir.0.join("m.h").display().to_string();
    assert_eq!(
        diags[0].notes,
        [format!("macro `PAIR` defined at {header}:2:9")]
    );
}

#[test]
fn many_large_expansions_are_limited_in_total() {
    // 2^16 tokens each (with the replacements on the way, under the limit of
    // one expansion), but thirty of them are not.
    let mut src: String = (0..16)
        .map(|i| format!("#define B{i} B{} B{}\n", i + 1, i + 1))
        .collect();
    src.push_str("#define B16 xxx\n");
    src.push_str(&"B0\n".repeat(30));
    let (heads, _) = failure(&src);
    assert_eq!(heads.len(), 1, "{heads:?}");
    assert!(
        heads[0].ends_with("error: macro expansions exceed 16 MiB in total"),
        "{heads:?}"
    );
}

#[test]
fn deeply_nested_arguments_are_limited_without_overflowing_the_stack() {
    let nested = (0..200).fold("1".to_string(), |acc, _| format!("ID({acc})"));
    let (heads, _) = failure(&format!("#define ID(x) x\n{nested}\n"));
    assert_eq!(
        heads,
        ["main.metal:2:190: error: macro expansion nested more than 64 levels deep"]
    );
    let nested = (0..60).fold("1".to_string(), |acc, _| format!("ID({acc})"));
    assert_eq!(pp(&format!("#define ID(x) x\n{nested}\n")).trim(), "1");
}

#[test]
fn looking_for_the_parenthesis_stops_at_directives() {
    let src = "#define F(x) <x>\nF\n#define Y 1\n(Y)\nF // c\n\n/* c */ (2)\n";
    let r = run(src);
    assert_eq!(r.text, "\nF\n\n(1)\n<2>\n\n\n");
    assert_eq!(origin(&r, "(1)", 0), ("main.metal".into(), 4, 1));
}

#[test]
fn line_inside_a_multi_line_invocation_is_the_invocation_line() {
    let src = "#define F(x, y) x y\nF(__LINE__,\n  __LINE__)\n__LINE__\n";
    assert_eq!(pp(src), "\n2 2\n\n4\n");
}
