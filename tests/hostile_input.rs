//! Hostile input: every one gets a located diagnostic (or translates),
//! never a crash, a stack overflow or a runaway in time or memory.

use msl2wgsl::diagnostics::{Code, Diagnostic, Severity};
use msl2wgsl::{Library, Options};
use std::time::{Duration, Instant};

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

fn translate(body: &str) -> Result<Library, msl2wgsl::Failure> {
    Library::from_source("t.metal", &format!("{PRELUDE}{body}"), &Options::default())
}

/// The first diagnostic of a source that must fail, with its rendering.
fn first_error(body: &str) -> (Diagnostic, String) {
    match translate(body) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => (f.diagnostics.0[0].clone(), f.render()),
    }
}

/// Asserts the first error has `code` and is located at `t.metal:LINE:COL`.
fn assert_error_at(body: &str, code: Code, line: usize, col: usize, words: &str) {
    let (d, text) = first_error(body);
    assert_eq!(d.code(), code, "{text}");
    let want = format!("t.metal:{line}:{col}: error: ");
    assert!(
        text.starts_with(&want) && text.contains(words),
        "want `{want}...{words}`, got:\n{text}"
    );
}

fn kernel(stmt: &str) -> String {
    format!("kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {{\n{stmt}\n}}\n")
}

#[test]
fn nul_byte_is_a_located_error_naming_the_byte() {
    assert_error_at(
        &kernel("  o[i] = 1;\0"),
        Code::NulByte,
        4,
        12,
        "NUL byte (0x00)",
    );
    // In an included file too.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("h.h"), "constant float c = 1;\n\0\n").unwrap();
    let mut options = Options::default();
    options
        .preprocess
        .include_dirs
        .push(dir.path().to_path_buf());
    let f = Library::from_source("t.metal", "#include \"h.h\"\n", &options).unwrap_err();
    assert!(
        f.render().contains("h.h:2:1: error: NUL byte"),
        "{}",
        f.render()
    );
}

#[test]
fn empty_input_is_an_empty_module() {
    // Like an empty .metal file in Xcode: a library with no functions.
    for text in ["", "\n\n", "// nothing here\n", "#define X 1\n"] {
        let lib = Library::from_source("e.metal", text, &Options::default())
            .unwrap_or_else(|f| panic!("{text:?}: {}", f.render()));
        assert!(lib.function_names().is_empty());
        assert_eq!(lib.wgsl().trim(), "", "{text:?}");
    }
}

#[test]
fn literals_out_of_range_are_located_errors() {
    let col = "  o[i] = ".len() + 1;
    for (literal, words) in [
        (
            "1e39f",
            "out of range for `float` (the largest is 3.40282347e38)",
        ),
        ("1e400", "out of range for `float`"),
        ("3.4028236e38f", "out of range for `float`"),
        ("70000.0h", "out of range for `half` (the largest is 65504)"),
        ("99999999999999999999", "is too large"),
        ("0x1ffffffffffffffff", "is too large"),
    ] {
        assert_error_at(
            &kernel(&format!("  o[i] = {literal};")),
            Code::LiteralOutOfRange,
            4,
            col,
            words,
        );
    }
    // The largest values are fine.
    for literal in ["3.4028235e38f", "65504.0h", "1e-50f", "0xffffffffu"] {
        translate(&kernel(&format!("  o[i] = {literal};")))
            .unwrap_or_else(|f| panic!("{literal}: {}", f.render()));
    }
}

#[test]
fn huge_arrays_are_located_errors_with_the_limit() {
    let use_a = "\n  a[i] = 1; o[i] = a[0];";
    let cases = [
        (
            "  threadgroup float a[1u << 31];",
            "over the limit of 2147483647 bytes",
        ),
        ("  float a[1u << 31];", "over the limit of 2147483647 bytes"),
        (
            "  threadgroup float a[8193];",
            "Metal allows at most 32768 bytes of threadgroup memory",
        ),
    ];
    for (decl, words) in cases {
        let col = decl.find(" a[").unwrap() + 2;
        assert_error_at(
            &kernel(&format!("{decl}{use_a}")),
            Code::LimitExceeded,
            4,
            col,
            words,
        );
    }
}

#[test]
fn large_arrays_are_warnings() {
    let warnings = |decl: &str| {
        let lib = translate(&kernel(&format!("{decl}\n  a[i] = 1; o[i] = a[0];")))
            .unwrap_or_else(|f| panic!("{decl}: {}", f.render()));
        lib.warning_diagnostics().0.clone()
    };
    for decl in [
        "  threadgroup float a[8192];",
        "  float a[2049];",
        "  float a[1u << 20];",
    ] {
        let w = warnings(decl);
        assert!(
            w.len() == 1 && w[0].code() == Code::LargeArray && w[0].severity == Severity::Warning,
            "{decl}: {w:?}"
        );
    }
    // At the guaranteed sizes: nothing to say.
    for decl in ["  threadgroup float a[4096];", "  float a[2048];"] {
        assert!(warnings(decl).is_empty(), "{decl}");
    }
}

/// Deeply nested input of every shape: a located E0201, never a crash.
#[test]
fn deep_nesting_is_a_diagnostic_never_a_stack_overflow() {
    let n = 20_000;
    // Expression trees are allowed to be deep (a 100,000-term sum
    // translates): past the limit (131,072) they are refused too.
    let deep = 140_000;
    let cases = [
        (
            "parentheses",
            format!("  o[i] = {}1{};", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "blocks",
            format!("  {}o[i] = 1;{}", "{".repeat(n), "}".repeat(n)),
        ),
        (
            "conditionals",
            format!("  o[i] = {}1{};", "i ? ".repeat(n), " : 2".repeat(n)),
        ),
        (
            "conditional chain",
            format!("  o[i] = {}2;", "i == 1 ? 1 : ".repeat(n)),
        ),
        (
            "else-if chain",
            format!("  {}o[i] = 2;", "if (i == 1) o[i] = 1; else ".repeat(n)),
        ),
        (
            "unbraced loops",
            format!("  {}o[i] = 2;", "for (int j = 0; j < 1; j++) ".repeat(n)),
        ),
        (
            "unbraced ifs",
            format!("  {}o[i] = 2;", "if (i) ".repeat(n)),
        ),
        (
            "prefix operators",
            format!("  o[i] = {}1;", "- ".repeat(deep)),
        ),
        (
            "flat sum",
            format!("  o[i] = {};", vec!["o[0]"; deep + 1].join(" + ")),
        ),
        (
            "assignments",
            format!("  float x; {}1; o[i] = x;", "x = ".repeat(deep)),
        ),
        (
            "template arguments",
            format!("  {}int{} x;", "vec<".repeat(n), ">".repeat(n)),
        ),
    ];
    for (what, stmt) in cases {
        let (d, text) = first_error(&kernel(&stmt));
        assert_eq!(d.code(), Code::NestingTooDeep, "{what}:\n{text}");
        assert!(text.starts_with("t.metal:4:"), "{what}:\n{text}");
    }
}

#[test]
fn nesting_within_the_limits_translates() {
    let cases = [
        format!("  o[i] = {}1{};", "(".repeat(60), ")".repeat(60)),
        format!("  {}o[i] = 2;", "if (i == 1) o[i] = 1; else ".repeat(100)),
        format!("  {}o[i] = 2;", "for (int j = 0; j < 1; j++) ".repeat(40)),
        format!("  o[i] = {}2;", "i == 1 ? 1 : ".repeat(200)),
    ];
    for stmt in cases {
        translate(&kernel(&stmt)).unwrap_or_else(|f| panic!("{}", f.render()));
    }
}

/// clang's limits (`-fbracket-depth` 256, `-ftemplate-depth` 1024), which
/// generated code reaches (Tint nests 126 brackets for deeply nested WGSL,
/// 65 `tint_array`s for nested arrays): every kind of bracket and of
/// instantiation at the limit translates on the library's own thread,
/// and one past it is a located error.
#[test]
fn clangs_nesting_limits_translate_and_one_past_them_is_located() {
    let within = 256 - 1; // the kernel's body `{` is one level
    let calls = format!(
        "float f(float x) {{ return x + 1.0f; }}\n{}",
        kernel(&format!(
            "  o[i] = {}0.0f{};",
            "f(".repeat(within),
            ")".repeat(within)
        ))
    );
    let indices = kernel(&format!(
        "  o[i] = {}0{};",
        "o[uint(".repeat(within / 2),
        ")]".repeat(within / 2)
    ));
    let parens = kernel(&format!(
        "  o[i] = {}1{};",
        "(".repeat(within),
        ")".repeat(within)
    ));
    for source in [&calls, &indices, &parens] {
        translate(source).unwrap_or_else(|f| panic!("{}", f.render()));
    }
    let past = kernel(&format!(
        "  o[i] = {}1{};",
        "(".repeat(256),
        ")".repeat(256)
    ));
    assert_error_at(
        &past,
        Code::NestingTooDeep,
        4,
        265,
        "the limit is 256 levels",
    );

    let recursion = |n: usize| {
        format!(
            "template <int N> int depth() {{ return depth<N - 1>() + 1; }}\n\
             template <> int depth<0>() {{ return 0; }}\n{}",
            kernel(&format!("  o[i] = float(depth<{n}>());"))
        )
    };
    translate(&recursion(1023)).unwrap_or_else(|f| panic!("{}", f.render()));
    let (d, text) = first_error(&recursion(1030));
    assert_eq!(d.code(), Code::LimitExceeded, "{text}");
    assert!(text.contains("exceeds the limit of 1024"), "{text}");
    assert!(text.starts_with("t.metal:3:"), "{text}");

    let nested = |n: usize| {
        format!(
            "template <typename T, uint N> struct arr {{ T e[N]; }};\n{}",
            kernel(&format!(
                "  {}float{} a;\n  o[i] = 0.0f;",
                "arr<".repeat(n),
                ", 1>".repeat(n)
            ))
        )
    };
    // Each level is a struct around an array: two levels of WGSL
    // composites, of which Tint accepts 255.
    translate(&nested(127)).unwrap_or_else(|f| panic!("{}", f.render()));
    let (d, text) = first_error(&nested(128));
    assert_eq!(d.code(), Code::LimitExceeded, "{text}");
    assert!(
        text.contains("nests composite types 256 deep, over the 255 levels"),
        "{text}"
    );
    assert!(text.starts_with("t.metal:5:"), "{text}");
    let (d, text) = first_error(&nested(258));
    assert_eq!(d.code(), Code::LimitExceeded, "{text}");
    assert!(text.contains("exceeds the limit of 256"), "{text}");
    assert!(text.starts_with("t.metal:5:"), "{text}");
}

#[cfg(feature = "cli")] // runs the command-line binary
#[test]
fn deep_nesting_through_the_command_line() {
    // The binary's main thread has a small stack; translation must not use it.
    let dir = tempfile::tempdir().unwrap();
    for (name, stmt) in [
        (
            "p.metal",
            format!("o[i] = {}1{};", "(".repeat(20_000), ")".repeat(20_000)),
        ),
        (
            "b.metal",
            format!("{}o[i] = 1;{}", "{".repeat(20_000), "}".repeat(20_000)),
        ),
    ] {
        std::fs::write(dir.path().join(name), kernel(&stmt)).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_msl2wgsl"))
            .arg(dir.path().join(name))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("{name}:2:")) && err.contains("[E0201]"),
            "{err}"
        );
    }
}

/// The fastest of `runs` translations of a `terms`-operand sum.
fn time_sum(terms: usize, runs: usize) -> Duration {
    let sum = vec!["o[0]"; terms].join(" + ");
    let source = format!("{PRELUDE}{}", kernel(&format!("  o[i] = {sum};")));
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            let lib = Library::from_source("t.metal", &source, &Options::default());
            let elapsed = start.elapsed();
            assert!(lib.is_ok(), "{terms} terms");
            elapsed
        })
        .min()
        .unwrap()
}

/// Translation time grows linearly with the size of an expression, and a
/// 100,000-term expression translates in seconds.
///
/// Not flaky by design: each size takes the fastest of three runs (load on
/// the machine only slows runs down), and the bound is loose: 16 times
/// the terms may take up to 100 times as long, where linear growth gives
/// 16 (about 30 measured in a debug build, whose deep recursion touches
/// more stack per term) and quadratic growth 256. Past the depth limit a
/// sum is refused, quickly.
#[test]
fn translation_time_is_linear_in_expression_size() {
    time_sum(100, 1); // warm up (first-use initialisation)
    let small = time_sum(1_000, 3);
    let large = time_sum(16_000, 3);
    let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-3);
    assert!(
        ratio < 100.0,
        "1k terms: {small:?}, 16k terms: {large:?} (ratio {ratio:.1})"
    );
    let huge = time_sum(100_000, 1);
    assert!(
        huge < large * 20 + Duration::from_secs(5),
        "100k terms took {huge:?}"
    );
    let start = Instant::now();
    let (d, _) = first_error(&kernel(&format!(
        "  o[i] = {};",
        vec!["o[0]"; 140_000].join(" + ")
    )));
    assert_eq!(d.code(), Code::NestingTooDeep);
    let refused = start.elapsed();
    assert!(
        refused < huge * 2 + Duration::from_secs(5),
        "140k terms refused in {refused:?}"
    );
}

// The benchmark's program generator (its long-expression half is unused here).
#[allow(dead_code)]
#[path = "../benches/common/mod.rs"]
mod generated;

/// Translation time grows linearly with the number of functions: the
/// benchmark's generated programs (structs, helpers with loops and vector
/// math, kernels) at 8 times the size may take at most 30 times as long
/// (linear: 8; the quadratic call-graph walk this guards against: 64, and
/// 61 s instead of 2.7 s at 110k lines). Fastest of three runs each.
#[test]
fn translation_time_is_linear_in_program_size() {
    let time = |lines: usize| {
        let source = generated::program(lines);
        (0..3)
            .map(|_| {
                let start = Instant::now();
                let lib = Library::from_source("g.metal", &source, &Options::default());
                let elapsed = start.elapsed();
                assert!(lib.is_ok(), "{lines} lines");
                elapsed
            })
            .min()
            .unwrap()
    };
    time(100); // warm up
    let small = time(500);
    let large = time(4_000);
    let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-3);
    assert!(
        ratio < 30.0,
        "500 lines: {small:?}, 4000 lines: {large:?} (ratio {ratio:.1})"
    );
}

/// A kernel computing `depth` nested calls of one `kind` (see
/// `NESTED_KINDS`), `copies` times over.
fn nested_calls(kind: &str, depth: usize, copies: usize) -> String {
    let (decls, setup, call, inner, result) = NESTED_KINDS
        .iter()
        .find(|k| k.0 == kind)
        .map(|k| (k.1, k.2, k.3, k.4, k.5))
        .expect("a kind of call");
    let mut e = inner.to_string();
    for _ in 0..depth {
        e = call.replace('@', &e);
    }
    let mut body = format!("  float x = o[i];\n{setup}");
    for c in 0..copies {
        body.push_str(&format!("  o[i + {c}] = {};\n", result.replace('@', &e)));
    }
    format!("{decls}{}", kernel(&body))
}

/// Kinds of nested calls: (name, declarations, set-up, one level with `@`
/// for the level inside, the innermost expression, the stored result).
const NESTED_KINDS: &[(&str, &str, &str, &str, &str, &str)] = &[
    (
        "function",
        "float f(float a) { return a * 2.0f; }\n",
        "",
        "f(@)",
        "x",
        "@",
    ),
    (
        "overloaded functions",
        "float f(float a) { return a * 2.0f; }\nint f(int a) { return a + 1; }\n",
        "",
        "f(@)",
        "x",
        "@",
    ),
    (
        "function template",
        "template <typename T> T f(T a) { return a * T(2); }\n",
        "",
        "f(@)",
        "x",
        "@",
    ),
    (
        "template beside a function",
        "template <typename T> T f(T a) { return a * T(2); }\nfloat f(float a) { return a + 1.0f; }\n",
        "",
        "f(@)",
        "x",
        "@",
    ),
    (
        "member function",
        "struct S { float k; float f(float a) const { return a * k; } };\n",
        "  S s; s.k = 2.0f;\n",
        "s.f(@)",
        "x",
        "@",
    ),
    (
        "overloaded member function",
        "struct S { float k; float f(float a) const { return a * k; } int f(int a) const { return a; } };\n",
        "  S s; s.k = 2.0f;\n",
        "s.f(@)",
        "x",
        "@",
    ),
    (
        "non-const member function",
        "struct S { float k; float f(float a) { k += a; return k; } };\n",
        "  S s; s.k = 2.0f;\n",
        "s.f(@)",
        "x",
        "@",
    ),
    (
        "static member function",
        "struct S { float k; static float f(float a) { return a * 2.0f; } };\n",
        "",
        "S::f(@)",
        "x",
        "@",
    ),
    (
        "member function chain",
        "struct S { float v; S g(float a) const { S r; r.v = v + a; return r; } };\n",
        "  S s; s.v = x;\n",
        "@.g(x)",
        "s",
        "(@).v",
    ),
    (
        "overloaded constructor",
        "struct S { float v; S(float a) : v(a) {} S(int a) : v(float(a)) {} };\nfloat g(S s) { return s.v; }\n",
        "",
        "g(S(@))",
        "x",
        "@",
    ),
    (
        "member operator",
        "struct S { float v; S operator+(S o) const { S r; r.v = v + o.v; return r; } };\n",
        "  S s; s.v = x;\n",
        "(@ + s)",
        "s",
        "(@).v",
    ),
    (
        "free operator",
        "struct S { float v; };\nS operator+(S a, S b) { S r; r.v = a.v + b.v; return r; }\n",
        "  S s; s.v = x;\n",
        "(s + @)",
        "s",
        "(@).v",
    ),
    (
        "built-in operator beside an overload",
        "struct S { float v; };\nS operator+(S a, S b) { S r; r.v = a.v + b.v; return r; }\n",
        "",
        "(@ + x)",
        "x",
        "@",
    ),
    (
        "built-in subscript beside operator[]",
        "struct S { float v[4]; float operator[](int j) const { return v[j]; } };\n",
        "  int a[4] = {0, 1, 2, 3};\n",
        "a[@]",
        "int(i) & 3",
        "float(@)",
    ),
];

/// The fastest of `runs` translations of `source` (which must translate),
/// each given 20 s (a runaway fails the test instead of hanging it).
fn fastest(source: &str, runs: usize, what: &str) -> Duration {
    (0..runs)
        .map(|_| {
            let (send, receive) = std::sync::mpsc::channel();
            let body = source.to_string();
            std::thread::spawn(move || {
                let start = Instant::now();
                let lib = translate(&body).map_err(|f| f.render());
                let _ = send.send((start.elapsed(), lib.err()));
            });
            match receive.recv_timeout(Duration::from_secs(20)) {
                Ok((elapsed, None)) => elapsed,
                Ok((_, Some(error))) => panic!("{what}:\n{error}"),
                Err(_) => panic!("{what}: no translation after 20 s"),
            }
        })
        .min()
        .unwrap()
}

/// Calls nested 30 deep translate at once, whatever the callee: overload
/// resolution and template deduction rank arguments lowered once, never
/// lowered again for the chosen candidate (which made the time double
/// with each level: 37 s at 18 levels). A release build takes about 10 ms
/// each; the bound is for a debug build on a loaded machine.
#[test]
fn nested_calls_translate_at_once() {
    for (kind, ..) in NESTED_KINDS {
        let elapsed = fastest(&nested_calls(kind, 30, 1), 3, kind);
        assert!(
            elapsed < Duration::from_secs(2),
            "{kind}, 30 deep: {elapsed:?}"
        );
    }
}

/// Each call is lowered once: the WGSL calls the helper once per call in
/// the source, and the losing overload is not called.
#[test]
fn nested_overloaded_calls_are_lowered_once() {
    for kind in [
        "function",
        "overloaded functions",
        "template beside a function",
    ] {
        let source = nested_calls(kind, 30, 1);
        fastest(&source, 1, kind);
        let wgsl = translate(&source)
            .unwrap_or_else(|f| panic!("{}", f.render()))
            .wgsl()
            .to_string();
        let calls = wgsl.matches("= f(").count();
        assert_eq!(calls, 30, "{kind}:\n{wgsl}");
        assert!(!wgsl.contains("= f_1("), "{kind}:\n{wgsl}");
    }
}

/// Translation time grows linearly with the depth of nested calls: 4 times
/// the depth (12 and 48 levels, 20 such expressions in a kernel) may take
/// at most 12 times as long, where linear growth gives 4, quadratic 16 and
/// the exponential growth this guards against 2^36. Fastest of five runs
/// each.
#[test]
fn translation_time_is_linear_in_call_depth() {
    for kind in [
        "overloaded functions",
        "function template",
        "overloaded member function",
        "member operator",
        "built-in operator beside an overload",
    ] {
        fastest(&nested_calls(kind, 4, 1), 1, kind); // warm up
        let shallow = fastest(&nested_calls(kind, 12, 20), 5, kind);
        let deep = fastest(&nested_calls(kind, 48, 20), 5, kind);
        let ratio = deep.as_secs_f64() / shallow.as_secs_f64().max(1e-3);
        assert!(
            ratio < 12.0,
            "{kind}: 12 deep {shallow:?}, 48 deep {deep:?} (ratio {ratio:.1})"
        );
    }
}
