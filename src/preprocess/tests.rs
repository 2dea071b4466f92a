//! Tests of what the preprocessor accepts: output text and origin map.
//! (Errors are in `tests_errors.rs`; the helpers here serve both.)

use super::*;
use crate::diagnostics::Severity;
use crate::source_map::Span;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A successful run: the output, the map and the warnings.
pub(super) struct Run {
    pub text: String,
    pub map: SourceMap,
    pub warnings: Vec<Diagnostic>,
}

/// Preprocesses `src` as `name` with `options`. On success, checks that the
/// segments cover the whole output, in order, without gaps.
pub(super) fn run_named(
    name: &str,
    src: &str,
    options: &Options,
) -> Result<Run, (Vec<Diagnostic>, SourceMap)> {
    let mut map = SourceMap::new();
    let main = map.add_file(name, src);
    match preprocess_with_warnings(&mut map, main, options) {
        Ok((text, warnings)) => {
            let mut at = 0;
            for s in map.segments() {
                assert_eq!(s.output.start, at, "gap or overlap in {:?}", map.segments());
                at = s.output.end;
            }
            assert_eq!(at, text.len(), "segments do not cover the output");
            Ok(Run {
                text,
                map,
                warnings,
            })
        }
        Err(diags) => Err((diags, map)),
    }
}

/// Preprocesses `src` (named `main.metal`), which must succeed.
pub(super) fn run(src: &str) -> Run {
    run_with(src, &Options::default())
}

/// Preprocesses `src` with `options`, which must succeed.
pub(super) fn run_with(src: &str, options: &Options) -> Run {
    match run_named("main.metal", src, options) {
        Ok(r) => r,
        Err((diags, map)) => panic!("{}", render(&diags, &map)),
    }
}

/// The output of preprocessing `src`.
pub(super) fn pp(src: &str) -> String {
    run(src).text
}

/// All diagnostics rendered.
pub(super) fn render(diags: &[Diagnostic], map: &SourceMap) -> String {
    diags.iter().map(|d| d.render(map)).collect()
}

/// The first line of each rendered diagnostic (`FILE:LINE:COL: error: MSG`).
pub(super) fn heads(diags: &[Diagnostic], map: &SourceMap) -> Vec<String> {
    let first = |d: &Diagnostic| d.render(map).lines().next().unwrap_or("").to_string();
    diags.iter().map(first).collect()
}

/// Where the `nth` occurrence of `needle` in the output came from:
/// (file name, line, column).
pub(super) fn origin(r: &Run, needle: &str, nth: usize) -> (String, usize, usize) {
    let (at, _) = r
        .text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle:?} not in {:?}", r.text));
    let loc = r
        .map
        .locate(Span::new(at, at + needle.len()))
        .expect("located");
    let file = r.map.file(loc.file);
    let (line, col) = file.line_col(loc.range.start);
    (file.name.clone(), line, col)
}

/// A folder under the system's temporary folder, removed when dropped.
pub(super) struct TempDir(pub PathBuf);

impl TempDir {
    /// A new, empty folder with a name no other test uses.
    pub fn new(tag: &str) -> Self {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("msl2wgsl-pp-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    /// Writes `text` to `rel` inside the folder and returns its path.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Preprocesses the file at `path` (named by its path, so its folder is
/// searched for quoted includes).
pub(super) fn run_file(
    path: &Path,
    options: &Options,
) -> Result<Run, (Vec<Diagnostic>, SourceMap)> {
    let src = std::fs::read_to_string(path).expect("read main");
    run_named(&path.display().to_string(), &src, options)
}

/// Whether `#if expr` takes its first branch.
fn holds(expr: &str) -> bool {
    let text = pp(&format!("#if {expr}\nyes\n#else\nno\n#endif\n"));
    text.contains("yes")
}

#[test]
fn plain_text_is_copied_with_an_exact_map() {
    let src = "kernel void f(device float* a [[buffer(0)]]) {\n  a[0] = 1.0f;\n}\n";
    let r = run(src);
    assert_eq!(r.text, src);
    assert_eq!(r.map.segments().len(), 1);
    assert_eq!(origin(&r, "a[0]", 0), ("main.metal".into(), 2, 3));
}

#[test]
fn line_comments_are_removed() {
    let r = run("int a; // one\nint b; // two\n");
    assert_eq!(r.text, "int a; \nint b; \n");
    assert_eq!(origin(&r, "b", 0), ("main.metal".into(), 2, 5));
}

#[test]
fn block_comments_keep_the_line_structure() {
    let r = run("int a; /* x\n y */ int b;\nint c; /* z */ int d;\n");
    assert_eq!(r.text.lines().count(), 3);
    assert_eq!(r.text.lines().nth(2), Some("int c;   int d;"));
    assert_eq!(origin(&r, "b", 0), ("main.metal".into(), 2, 11));
    assert_eq!(origin(&r, "d", 0), ("main.metal".into(), 3, 20));
}

#[test]
fn comment_markers_inside_literals_are_text() {
    let src = "s = \"a // b /* c */\"; c = '/'; d = '\\''; e = 1'000; // gone\n";
    let r = run(src);
    assert_eq!(
        r.text,
        "s = \"a // b /* c */\"; c = '/'; d = '\\''; e = 1'000; \n"
    );
}

#[test]
fn splices_join_lines_and_keep_the_line_count() {
    let r = run("int ab\\\ncd = 1;\nint e;\n");
    assert_eq!(r.text, "int abcd = 1;\n\nint e;\n");
    assert_eq!(origin(&r, "cd", 0), ("main.metal".into(), 2, 1));
    assert_eq!(origin(&r, "e", 0), ("main.metal".into(), 3, 5));
    let r = run("#define A 1 + \\\n  2\nint x = A;\n");
    assert_eq!(r.text, "\n\nint x = 1 + 2;\n");
    let r = run("#define X 1 /* a\n b */ + 2\nX\n");
    assert_eq!(r.text, "\n\n1 + 2\n");
}

#[test]
fn crlf_line_endings_are_accepted() {
    let r = run("#define A 1\r\nA\r\n#if A\r\nyes\r\n#endif\r\n");
    assert_eq!(r.text, "\n1\r\n\nyes\r\n\n");
}

#[test]
fn metal_system_headers_include_their_class_templates_once() {
    let src = "#include <metal_stdlib>\n#include <metal_math>\n#include <simd/simd.h>\n\
               #include <metal_anything_new>\n#include \"metal_stdlib\"\nusing namespace metal;\n";
    let text = pp(src);
    // The first `<metal_*>` reads `<metal_type_traits>`' templates; the
    // others, and `<simd/simd.h>`, include nothing.
    assert_eq!(
        text.matches("struct __metal_integral_constant").count(),
        1,
        "{text}"
    );
    assert!(text.starts_with("\n"), "{text:?}");
    assert!(
        text.ends_with("\n\n\n\n\nusing namespace metal;\n"),
        "{text:?}"
    );
    // Without one, nothing is read.
    assert_eq!(pp("#include <simd/simd.h>\nx\n"), "\nx\n");
}

#[test]
fn quoted_include_reads_the_including_folder_and_maps_back() {
    let dir = TempDir::new("quoted");
    dir.write("common.h", "// shared\nconstant int K = 3;\n");
    let main = dir.write("main.metal", "#include \"common.h\"\nint x = K;\n");
    let r =
        run_file(&main, &Options::default()).unwrap_or_else(|e| panic!("{}", render(&e.0, &e.1)));
    assert_eq!(r.text, "\n\nconstant int K = 3;\nint x = K;\n");
    let (file, line, col) = origin(&r, "K", 0);
    assert!(file.ends_with("common.h"), "{file}");
    assert_eq!((line, col), (2, 14));
    let (file, line, col) = origin(&r, "x", 0);
    assert_eq!((file, line, col), (main.display().to_string(), 2, 5));
}

#[test]
fn includes_search_the_include_dirs() {
    let dir = TempDir::new("dirs");
    dir.write("inc/a.h", "int a;\n");
    dir.write("inc/sub/b.h", "#include \"c.h\"\nint b;\n");
    dir.write("inc/sub/c.h", "int c;\n");
    let main = dir.write("src/main.metal", "#include \"a.h\"\n#include <sub/b.h>\n");
    let options = Options {
        include_dirs: vec![dir.0.join("inc")],
        ..Options::default()
    };
    let r = run_file(&main, &options).unwrap_or_else(|e| panic!("{}", render(&e.0, &e.1)));
    assert_eq!(r.text, "\nint a;\n\n\nint c;\nint b;\n");
    assert!(origin(&r, "c", 0).0.ends_with("c.h"));
}

#[test]
fn virtual_files_are_included_by_name() {
    let options = Options {
        virtual_files: vec![(
            "MyTypes.h".into(),
            "#pragma once\nstruct P { float x; };\n".into(),
        )],
        ..Options::default()
    };
    let r = run_with(
        "#include \"MyTypes.h\"\n#include \"MyTypes.h\"\nP p;\n",
        &options,
    );
    // `#pragma once` holds for them too: the struct comes once.
    assert_eq!(r.text.matches("struct P").count(), 1, "{}", r.text);
    assert!(r.text.ends_with("P p;\n"));
    assert_eq!(origin(&r, "struct", 0).0, "MyTypes.h");
    // A name not given is still not found.
    let missing = run_named("main.metal", "#include \"Other.h\"\n", &options);
    assert!(missing.is_err());
}

#[test]
fn pragma_once_includes_a_file_once() {
    let dir = TempDir::new("once");
    dir.write("once.h", "#pragma once\nint once;\n");
    dir.write("twice.h", "int twice;\n");
    let main = dir.write(
        "main.metal",
        "#include \"once.h\"\n#include \"once.h\"\n#include \"twice.h\"\n#include \"twice.h\"\n",
    );
    let r =
        run_file(&main, &Options::default()).unwrap_or_else(|e| panic!("{}", render(&e.0, &e.1)));
    assert_eq!(r.text.matches("int once;").count(), 1);
    assert_eq!(r.text.matches("int twice;").count(), 2);
}

#[test]
fn other_pragmas_and_line_directives_are_ignored() {
    let src = "#pragma clang diagnostic push\n#pragma METAL internals : enable\n#line 10\n\
               # 3 \"x.metal\"\n#\nint x;\n";
    assert_eq!(pp(src), "\n\n\n\n\nint x;\n");
}

#[test]
fn include_through_a_macro() {
    let dir = TempDir::new("macro-include");
    dir.write("a.h", "int a;\n");
    let main = dir.write("main.metal", "#define HEADER \"a.h\"\n#include HEADER\n");
    let r =
        run_file(&main, &Options::default()).unwrap_or_else(|e| panic!("{}", render(&e.0, &e.1)));
    assert_eq!(r.text, "\n\nint a;\n");
}

#[test]
fn define_and_undef() {
    let r = run("#define N 4\nint a[N];\n#undef N\nint b[N];\n");
    assert_eq!(r.text, "\nint a[4];\n\nint b[N];\n");
}

#[test]
fn expansion_is_recursive_but_not_self_referential() {
    assert_eq!(
        pp("#define A B + 1\n#define B A * 2\nA\n"),
        "\n\nA * 2 + 1\n"
    );
    assert_eq!(pp("#define foo foo\nfoo\n"), "\nfoo\n");
    assert_eq!(
        pp("#define X Y\n#define Y Z\n#define Z 7\nX\n"),
        "\n\n\n7\n"
    );
}

#[test]
fn expansion_skips_strings_longer_identifiers_and_numbers() {
    let src = "#define x 9\n#define e 7\nint xy = 1e5 + x + 0x1e + e; s = \"x\"; c = 'x';\n";
    assert_eq!(
        pp(src),
        "\n\nint xy = 1e5 + 9 + 0x1e + 7; s = \"x\"; c = 'x';\n"
    );
}

#[test]
fn expansions_never_paste_onto_their_neighbours() {
    assert_eq!(pp("#define NEG -1\nint a = -NEG;\n"), "\nint a = - -1;\n");
    assert_eq!(pp("#define EMPTY\na-EMPTY-b\n"), "\na- -b\n");
    assert_eq!(pp("#define P + +\nP\n"), "\n+ +\n");
}

#[test]
fn hash_hash_pastes_in_object_like_macros() {
    assert_eq!(pp("#define CAT a ## b\nint CAT = 1;\n"), "\nint ab = 1;\n");
}

#[test]
fn predefined_macros() {
    assert_eq!(
        pp("__METAL_VERSION__ __METAL__ __METAL_MACOS__\n"),
        "320 1 1\n"
    );
    assert!(holds("__METAL_VERSION__ >= 300 && defined(__METAL__)"));
    assert!(!holds("defined(__HAVE_NATIVE_FLOAT16__)"));
    assert_eq!(pp("\n__LINE__ __FILE__\n"), "\n2 \"main.metal\"\n");
    assert_eq!(pp("__cplusplus\n"), "201402L\n");
    assert!(holds("__cplusplus >= 201402L"));
}

#[test]
fn command_line_defines_come_after_predefined_ones() {
    let options = Options {
        defines: vec![
            ("A".into(), None),
            ("B".into(), Some("2+3".into())),
            ("__METAL_VERSION__".into(), Some("300".into())),
            ("EMPTY".into(), Some(String::new())),
        ],
        ..Options::default()
    };
    assert_eq!(
        run_with("A B __METAL_VERSION__ [EMPTY]\n", &options).text,
        "1 2+3 300 []\n"
    );
}

#[test]
fn conditionals_choose_one_branch_and_keep_lines() {
    let src = "#if 0\na\n#elif 1\nb\n#elif 1\nc\n#else\nd\n#endif\ne\n";
    let r = run(src);
    assert_eq!(r.text, "\n\n\nb\n\n\n\n\n\ne\n");
    assert_eq!(origin(&r, "e", 0), ("main.metal".into(), 10, 1));
    let nested = "#if 1\n#if 0\nx\n#else\ny\n#endif\n#else\n#if 1\nz\n#endif\n#endif\n";
    assert_eq!(pp(nested).trim(), "y");
}

#[test]
fn ifdef_ifndef_and_defined() {
    let src = "#define F\n#ifdef F\na\n#endif\n#ifndef F\nb\n#endif\n#ifndef G\nc\n#endif\n";
    assert_eq!(pp(src).split_whitespace().collect::<Vec<_>>(), ["a", "c"]);
    assert!(holds(
        "defined __METAL__ && defined(__METAL__) && !defined NOPE"
    ));
    let src = "#ifdef NOPE\na\n#elifdef __METAL__\nb\n#endif\n#if 0\n#elifndef NOPE\nc\n#endif\n";
    assert_eq!(pp(src).split_whitespace().collect::<Vec<_>>(), ["b", "c"]);
}

#[test]
fn if_expressions_follow_c() {
    let true_exprs = [
        "1 + 2 * 3 == 7",
        "(1 + 2) * 3 == 9",
        "10 / 3 == 3 && 10 % 3 == 1 && -7 / 2 == -3",
        "1 - 2 - 3 == -4",
        "2 + 3 * 4 - 6 / 2 == 11",
        "-1 < 0",
        "-1 > 0u",
        "1 << 4 == 16 && 256 >> 4 == 16 && -16 >> 2 == -4",
        "0x10 == 16 && 0XfF == 255 && 010 == 8 && 0b101 == 5",
        "10u == 10 && 10UL == 10 && 7ll == 7 && 1'000 == 1000",
        "18446744073709551615 == -1",
        "'a' == 97 && '\\n' == 10 && '\\x41' == 65 && '\\0' == 0",
        "~0 == -1 && !0 && !!5 && +3 == 3 && -(-3) == 3",
        "(3 & 5) == 1 && (3 | 5) == 7 && (3 ^ 5) == 6",
        "1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3 && 1 != 2",
        "1 ? 2 : 0",
        "0 ? 0 : 0 ? 0 : 3",
        "1 || 1 / 0",
        "!(0 && 1 % 0)",
        "0 ? 1 / 0 : 1",
        "NOT_A_MACRO == 0",
        "true && !false",
        "__has_include(<metal_stdlib>) && !__has_include(\"nope_9f2.h\")",
        "!__has_feature(cxx_whatever) && !__has_attribute(x)",
    ];
    for e in true_exprs {
        assert!(holds(e), "{e}");
    }
    for e in [
        "0",
        "1 > 2",
        "2 - 2",
        "1 && 0",
        "0 || 0",
        "-1 > 0",
        "1 ? 0 : 1",
    ] {
        assert!(!holds(e), "{e}");
    }
}

#[test]
fn macros_in_if_expressions_are_expanded_first() {
    let src = "#define V 3\n#define W V + 1\n#if W == 4 && W * 2 == 5\nok\n#endif\n";
    assert_eq!(pp(src).trim(), "ok");
    let src = "#define HAS defined(X)\n#define X 0\n#if HAS && defined X\nok\n#endif\n";
    assert_eq!(pp(src).trim(), "ok");
}

#[test]
fn skipped_code_ignores_what_live_code_would_reject() {
    let src = "#if 0\n#define F(x) x\n#foo\n#error no\n#include \"missing.h\"\ndon't\n\
               #if 1/0\n#endif\n#endif\nok\n";
    assert_eq!(pp(src).trim(), "ok");
}

#[test]
fn warning_directive_is_a_located_warning() {
    let r = run("int a;\n#warning careful here\n");
    assert_eq!(r.warnings.len(), 1);
    assert_eq!(r.warnings[0].severity, Severity::Warning);
    let head = heads(&r.warnings, &r.map);
    assert_eq!(head, ["main.metal:2:1: warning: careful here"]);
    let mut map = SourceMap::new();
    let main = map.add_file("main.metal", "#warning w\nint a;\n");
    assert_eq!(
        preprocess(&mut map, main, &Options::default()).unwrap(),
        "\nint a;\n"
    );
}

#[test]
fn redefinition_warns_only_when_the_body_changes() {
    let r = run("#define A 1\n#define A 1\n#define A  1\n#define A 2\nA\n");
    assert_eq!(r.text.trim(), "2");
    let head = heads(&r.warnings, &r.map);
    assert_eq!(head, ["main.metal:4:9: warning: 'A' macro redefined"]);
}

#[test]
fn tokens_after_an_expansion_map_to_their_columns() {
    let r = run("#define N 42\nint a = N; int b;\n");
    assert_eq!(r.text, "\nint a = 42; int b;\n");
    assert_eq!(origin(&r, "b", 0), ("main.metal".into(), 2, 16));
    assert_eq!(origin(&r, "42", 0), ("main.metal".into(), 2, 9));
    let loc = r.map.locate(Span::new(9, 11)).unwrap();
    assert_eq!(
        loc.range.len(),
        1,
        "the expansion maps to the invocation `N`"
    );
}

#[test]
fn an_expansion_spanning_lines_keeps_later_lines_aligned() {
    let r = run("#define LONG a + b + c\nx = LONG;\ny;\n");
    assert_eq!(r.text, "\nx = a + b + c;\ny;\n");
    assert_eq!(origin(&r, "y", 0), ("main.metal".into(), 3, 1));
}
