//! Stable diagnostic codes, "did you mean" hints, and the diagnostic
//! options of the command line (`--error-format`, `--color`, `-Werror`,
//! `-w`); the codes are documented in docs/DIAGNOSTICS.md.

use msl2wgsl::diagnostics::{Code, Diagnostic};
use msl2wgsl::{Library, Options};
#[cfg(feature = "cli")]
use std::process::{Command, Output, Stdio};

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// The diagnostics of a source that must fail.
fn diagnostics(body: &str) -> Vec<Diagnostic> {
    match Library::from_source("t.metal", &format!("{PRELUDE}{body}"), &Options::default()) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.diagnostics.0,
    }
}

/// A kernel whose body is `stmt`.
fn kernel(stmt: &str) -> String {
    format!("kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {{\n{stmt}\n}}\n")
}

#[test]
fn every_code_is_documented_and_every_documented_code_exists() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/DIAGNOSTICS.md"))
        .expect("docs/DIAGNOSTICS.md");
    // Table rows: `| E0301 | meaning | example |`.
    let rows: Vec<(&str, Vec<&str>)> = doc
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let code = *cells.get(1)?;
            let well_formed = code.len() == 5
                && (code.starts_with('E') || code.starts_with('W'))
                && code[1..].bytes().all(|b| b.is_ascii_digit());
            well_formed.then_some((code, cells))
        })
        .collect();
    for code in Code::ALL {
        let row = rows.iter().find(|(c, _)| *c == code.as_str());
        let Some((_, cells)) = row else {
            panic!("{code} is not in docs/DIAGNOSTICS.md");
        };
        assert!(
            cells.len() >= 4 && !cells[2].is_empty(),
            "{code} has no meaning documented"
        );
    }
    for (code, _) in &rows {
        assert!(
            Code::ALL.iter().any(|c| c.as_str() == *code),
            "docs/DIAGNOSTICS.md documents {code}, which is not a code"
        );
    }
}

#[test]
fn common_kinds_have_specific_codes() {
    let cases: &[(&str, Code)] = &[
        ("kernel void k() { int x = y; }\n", Code::UndeclaredIdentifier),
        ("kernel void k() { flaot4 v; }\n", Code::UnknownType),
        ("kernel void k() { float x = lenght(float2(1)); }\n", Code::UndeclaredFunction),
        ("float f(float a) { return a; }\nkernel void k() { float x = f(1.0f, 2.0f); }\n", Code::NoMatchingOverload),
        ("float f(float a) { return a; }\nfloat f(half a) { return a; }\nkernel void k() { float x = f(1); }\n", Code::AmbiguousCall),
        ("int f(int n) { return 1 + f(n - 1); }\nkernel void k(device int* o [[buffer(0)]]) { o[0] = f(3); }\n", Code::Recursion),
        ("kernel void k(device float* o [[bufer(0)]]) { o[0] = 1; }\n", Code::InvalidAttribute),
        ("kernel void k() { float4 v = float3(1); }\n", Code::TypeMismatch),
        ("kernel void k() { int x = 1; int x = 2; }\n", Code::Redefinition),
        ("kernel void k() { int x = 0x1ffffffffffffffff; }\n", Code::LiteralOutOfRange),
        ("kernel void k() { throw 1; }\n", Code::NotInMetal),
        ("#include \"missing_header.h\"\n", Code::IncludeNotFound),
        ("#error stop here\n", Code::ErrorDirective),
        ("#endif\n", Code::Conditional),
        ("#define F(a, b) a\nint x = F(1);\n", Code::MacroExpansion),
        ("kernel void k() { float x = ; }\n", Code::Syntax),
        (&format!("kernel void k() {{ int x = {}1{}; }}\n", "(".repeat(300), ")".repeat(300)), Code::NestingTooDeep),
    ];
    let mut wrong = Vec::new();
    for (body, want) in cases {
        let d = &diagnostics(body)[0];
        if d.code() != *want {
            wrong.push(format!(
                "{body:?}: want {want}, got {} ({})",
                d.code(),
                d.message
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn preprocessor_diagnostics_have_specific_codes() {
    let errors: &[(&str, Code)] = &[
        ("#define 1X 2\n", Code::MacroDefinition),
        ("#if 1 +\n#endif\n", Code::ConditionExpression),
        ("#if 1\n", Code::Conditional),
        ("#line x\n", Code::MalformedDirective),
    ];
    for (body, want) in errors {
        let d = &diagnostics(body)[0];
        assert_eq!(d.code(), *want, "{body:?}: {}", d.message);
    }
    let lib = Library::from_source(
        "t.metal",
        "#warning careful\n#define N 1\n#define N 2\n#pragma whatever\n",
        &Options::default(),
    )
    .unwrap();
    let codes: Vec<Code> = lib
        .warning_diagnostics()
        .0
        .iter()
        .map(|d| d.code())
        .collect();
    assert_eq!(
        codes,
        [
            Code::WarningDirective,
            Code::MacroRedefined,
            Code::PragmaIgnored
        ]
    );
}

#[test]
fn every_pipeline_diagnostic_has_a_specific_code() {
    for body in [
        "kernel void k() { break; }\n",
        "kernel void k() { float x = ; }\n",
        "#line x\n",
    ] {
        for d in diagnostics(body) {
            assert!(
                !Code::GENERIC.contains(&d.code()),
                "{body:?}: {} has the generic code {}",
                d.message,
                d.code()
            );
        }
    }
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The compiler makes every diagnostic name a code where it is made
/// (`sema::Error::coded`, `syntax::Error::coded`, the `Diagnostic`
/// constructors all take one); this checks that no site names a generic
/// one. `E0200` (the parser's "expected ..., found ...") belongs to
/// `src/syntax` alone.
#[test]
fn no_source_site_uses_a_generic_code() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    assert!(files.len() > 50, "{} files", files.len());
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut found = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "src/diagnostics/code.rs" {
            continue; // the table itself, and `Code::GENERIC`
        }
        let text = std::fs::read_to_string(path).unwrap();
        let mut names: Vec<String> = Code::GENERIC.iter().map(|c| format!("{c:?}")).collect();
        if !rel.starts_with("src/syntax/") {
            names.push(format!("{:?}", Code::Syntax));
        }
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for name in &names {
                let needle = format!("Code::{name}");
                let mut from = 0;
                while let Some(at) = code[from..].find(&needle) {
                    let end = from + at + needle.len();
                    if !code[end..].starts_with(is_ident) {
                        found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
                    }
                    from = end;
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "diagnostics made with a generic code (give each a specific one, docs/DIAGNOSTICS.md):\n{}",
        found.join("\n")
    );
}

#[test]
fn representative_diagnostics_have_their_codes() {
    let errors: &[(&str, Code)] = &[
        ("#line x\n", Code::MalformedDirective),
        ("#include\n", Code::MalformedDirective),
        ("#pragmaa once\n", Code::UnknownDirective),
        ("int a;\n/* no end", Code::UnterminatedComment),
        ("constant int z = 1 / 0;\n", Code::ConstantEvaluation),
        ("struct S { int a; };\nkernel void k(device int* o [[buffer(0)]]) { S s; o[0] = s + 1; }\n", Code::InvalidOperands),
        ("kernel void k(device float* o [[buffer(0)]]) { o[0] = as_type<float>(half(1)); }\n", Code::InvalidConversion),
        ("kernel void k(device float4* o [[buffer(0)]]) { o[0] = float4(1, 2); }\n", Code::InvalidInitializer),
        ("kernel void k() { const int c = 1; c = 2; }\n", Code::NotAssignable),
        ("kernel void k() { device int x = 0; }\n", Code::AddressSpace),
        ("kernel int k() { return 1; }\n", Code::EntryPointSignature),
        ("kernel void k(device float* o [[buffer(64)]]) { o[0] = 1; }\n", Code::InvalidAttributeArgument),
        ("kernel void k(device float* a [[buffer(0)]], device float* b [[buffer(0)]]) { a[0] = b[0]; }\n", Code::InvalidAttributeArgument),
        ("kernel void k(device atomic_uint* a [[buffer(0)]]) { atomic_fetch_add_explicit(a, 1u, 7); }\n", Code::InvalidBuiltinArgument),
        ("kernel void k(texture2d<float, access::read> t [[texture(0)]]) { t.write(float4(0), uint2(0)); }\n", Code::TextureUsage),
        ("kernel void k() { break; }\n", Code::ControlFlow),
        ("void f() {}\nkernel void k() { int y = f; }\n", Code::WrongKind),
        ("template <typename T> T f(T a) { return a; }\nkernel void k() { int y = f<int, int>(1); }\n", Code::Template),
        ("struct S { void m; };\n", Code::InvalidType),
        ("struct C { const device float* p; C(const device float* q) thread : p(q) {} };\nkernel void k(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]], device float* o [[buffer(2)]]) { C c(a); c.p = b; o[0] = *c.p; }\n", Code::PointerMember),
        ("static_assert(sizeof(float) == 2, \"no\");\n", Code::StaticAssertFailed),
        ("constexpr sampler s(filter::cubic);\nkernel void k(texture2d<float> t [[texture(0)]], device float4* o [[buffer(0)]]) { o[0] = t.sample(s, float2(0)); }\n", Code::InvalidSampler),
        ("constexpr sampler s(coord::pixel, mip_filter::linear);\nkernel void k(texture2d<float> t [[texture(0)]], device float4* o [[buffer(0)]]) { o[0] = t.sample(s, float2(0)); }\n", Code::InvalidSampler),
        ("kernel void k() { discard_fragment(); }\n", Code::WrongStage),
        ("_Pragma(x)\n", Code::MalformedDirective),
        ("namespace a { int f() { return 1; } }\nnamespace b { int f() { return 2; } }\nusing namespace a;\nusing namespace b;\nkernel void k(device int* o [[buffer(0)]]) { o[0] = f(); }\n", Code::AmbiguousName),
        ("kernel void k(device float* o [[buffer(0)]]) { int n = 2; float a[n]; o[0] = a[0]; }\n", Code::NotConstant),
        ("constant int n [[function_constant(0)]];\nstruct S { float a[n]; };\nkernel void k(device S* s [[buffer(0)]]) { s->a[0] = 1; }\n", Code::FunctionConstantWithoutValue),
        ("kernel void k(device int* o [[buffer(0)]]) { float x = 1; o[0] = reinterpret_cast<int>(x); }\n", Code::InvalidConversion),
        ("kernel void k(device int* o [[buffer(0)]]) { const int c; o[0] = c; }\n", Code::InvalidInitializer),
        ("kernel void k(float id [[thread_position_in_grid]]) {}\n", Code::EntryPointSignature),
        ("kernel void k() { threadgroup_barrier(1); }\n", Code::InvalidBuiltinArgument),
        ("kernel void k(texture2d_ms<float> t [[texture(0)]], sampler s [[sampler(0)]], device float4* o [[buffer(0)]]) { o[0] = t.sample(s, float2(0)); }\n", Code::TextureUsage),
        ("void f() { return 1; }\nkernel void k() { f(); }\n", Code::ControlFlow),
        ("kernel void k(device int* o [[buffer(0)]]) { switch (o[0]) { default: break; default: break; } }\n", Code::ControlFlow),
        ("kernel void k(device float* o [[buffer(0)]]) { float x = float; o[0] = x; }\n", Code::WrongKind),
        ("kernel void k(device float* o [[buffer(0)]]) { vec<float, 5> v; o[0] = v[0]; }\n", Code::InvalidType),
        ("kernel void k(texture2d<bool> t [[texture(0)]]) {}\n", Code::InvalidType),
        ("kernel void k(device int* o [[buffer(0)]]) { o[0] = sizeof(void); }\n", Code::InvalidType),
        ("struct S { float x; float len() const; };\nfloat S::size() const { return x; }\n", Code::OutOfLineDefinition),
        ("kernel void k(device int* o [[buffer(0)]]) { o[0] = 1 << ; }\n", Code::Syntax),
    ];
    let mut wrong = Vec::new();
    for (body, want) in errors {
        let source = format!("{PRELUDE}{body}");
        match Library::from_source("t.metal", &source, &Options::default()) {
            Ok(_) => wrong.push(format!("{body:?}: want {want}, but it translates")),
            Err(f) => {
                let d = &f.diagnostics.0[0];
                if d.code() != *want {
                    wrong.push(format!(
                        "{body:?}: want {want}, got {} ({})",
                        d.code(),
                        d.message
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Warnings too.
    let lib = Library::from_source(
        "t.metal",
        &format!("{PRELUDE}#pragma message(\"hello\")\n#ifdef A\n#endif C\nkernel void k(device float* o, device float* p [[buffer(0)]]) {{ o[0] = p[0]; }}\n"),
        &Options::default(),
    )
    .unwrap();
    let codes: Vec<Code> = lib
        .warning_diagnostics()
        .0
        .iter()
        .map(|d| d.code())
        .collect();
    assert_eq!(
        codes,
        [
            Code::PragmaMessage,
            Code::ExtraTokens,
            Code::ImplicitBufferIndex
        ]
    );
    // Indexing threadgroup memory of a length not given: translated at dispatch.
    let lib = Library::from_source(
        "t.metal",
        &format!("{PRELUDE}kernel void k(threadgroup float* t [[threadgroup(0)]], device float* o [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {{ o[0] = t[i]; }}\n"),
        &Options::default(),
    )
    .unwrap();
    let codes: Vec<Code> = lib
        .warning_diagnostics()
        .0
        .iter()
        .map(|d| d.code())
        .collect();
    assert_eq!(codes, [Code::ThreadgroupLengthAtDispatch]);
    // A function constant's value needed at translation and not given:
    // the kernel waits for it.
    let lib = Library::from_source(
        "t.metal",
        &format!("{PRELUDE}constant int n [[function_constant(0)]];\nkernel void k(device float* o [[buffer(0)]]) {{ float a[n]; a[0] = 1; o[0] = a[0]; }}\n"),
        &Options::default(),
    )
    .unwrap();
    let codes: Vec<Code> = lib
        .warning_diagnostics()
        .0
        .iter()
        .map(|d| d.code())
        .collect();
    assert_eq!(codes, [Code::FunctionLeftForConstants]);
    // A value that does not fit the constant's type.
    let mut options = Options::default();
    options.function_constants.set(
        msl2wgsl::ConstantKey::Name("n".into()),
        msl2wgsl::ConstantValue::Text("x".into()),
    );
    let failure = Library::from_source(
        "t.metal",
        &format!("{PRELUDE}constant int n [[function_constant(0)]];\nkernel void k(device int* o [[buffer(0)]]) {{ o[0] = n; }}\n"),
        &options,
    )
    .unwrap_err();
    assert_eq!(
        failure.diagnostics.0[0].code(),
        Code::InvalidFunctionConstantValue
    );
}

#[test]
fn did_you_mean_notes() {
    let cases = [
        (
            kernel("float value = 1;\no[i] = valeu;"),
            "did you mean `value`?",
        ),
        (
            "kernel void k() { flaot4 v; }\n".to_string(),
            "did you mean `float4`?",
        ),
        (
            "struct Particle { float x; };\nkernel void k() { Particel p; }\n".to_string(),
            "did you mean `Particle`?",
        ),
        (
            kernel("o[i] = lenght(float2(1));"),
            "did you mean `length`?",
        ),
        (
            "float scale(float a) { return a; }\n".to_string() + &kernel("o[i] = scael(1.0f);"),
            "did you mean `scale`?",
        ),
        (
            "kernel void k(device float* o [[bufer(0)]]) { o[0] = 1; }\n".to_string(),
            "did you mean `buffer`?",
        ),
        // Made in a struct template's instance, on a later analysis round
        // (hints are found once an error is known to be reported).
        (
            "template <typename T> struct Box { T v; flaot w; };\n".to_string()
                + &kernel("Box<float> b; b.v = 1.0f; o[i] = b.v;"),
            "did you mean `float`?",
        ),
        // The same in a texture type's name.
        (
            "kernel void k(textur2d<float> t [[texture(0)]]) {}\n".to_string(),
            "did you mean `texture2d`?",
        ),
    ];
    for (body, note) in cases {
        let d = &diagnostics(&body)[0];
        assert!(
            d.notes.iter().any(|n| n == note),
            "{body}: {:?} {:?}",
            d.message,
            d.notes
        );
    }
    // Attributes of vertex functions and of their output structs.
    let d = &diagnostics(
        "struct V { float4 p [[position]]; };\nvertex V vs(uint v [[vertex_idd]]) { V o; o.p = float4(0); return o; }\n",
    )[0];
    assert_eq!(d.code(), Code::InvalidAttribute);
    assert_eq!(d.notes, ["did you mean `vertex_id`?"]);
    let d = &diagnostics(
        "struct V { float4 p [[postion]]; };\nvertex V vs() { V o; o.p = float4(0); return o; }\n",
    )[0];
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("`[[postion]]`") && n.contains("did you mean `position`?")),
        "{:?}",
        d.notes
    );
    // A misspelt attribute that leaves valid MSL is a warning.
    let lib = Library::from_source(
        "t.metal",
        &format!("{PRELUDE}struct V {{ float4 p [[position]]; float4 c [[flatt]]; }};\nvertex V vs() {{ V o; o.p = float4(0); o.c = o.p; return o; }}\n"),
        &Options::default(),
    )
    .unwrap();
    let w = &lib.warning_diagnostics().0;
    assert!(
        w.len() == 1
            && w[0].code() == Code::AttributeIgnored
            && w[0].notes == ["did you mean `flat`?"],
        "{w:?}"
    );
    // `--entry` names a function that does not exist.
    let options = Options {
        entries: vec!["main_kernal".into()],
        ..Options::default()
    };
    let f =
        Library::from_source("t.metal", "kernel void main_kernel() {}\n", &options).unwrap_err();
    let d = &f.diagnostics.0[0];
    assert_eq!(d.code(), Code::UnknownEntryPoint);
    assert_eq!(d.notes, ["did you mean `main_kernel`?"]);
    // Nothing close: no hint.
    let d = &diagnostics(&kernel("o[i] = completely_unrelated;"))[0];
    assert!(d.notes.is_empty(), "{:?}", d.notes);
}

#[cfg(feature = "cli")] // runs the command-line binary
fn msl2wgsl(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_msl2wgsl"));
    command.args(args).current_dir(dir).stdin(Stdio::null());
    command.env_remove("NO_COLOR");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("cannot start msl2wgsl")
}

#[cfg(feature = "cli")]
fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[cfg(feature = "cli")] // runs the command-line binary
#[test]
fn every_error_is_printed_up_to_the_error_limit() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (0..4)
        .map(|i| format!("kernel void k{i}(device float* d [[buffer(0)]]) {{ d[0] = u{i}; }}\n"))
        .collect();
    let broken = format!("{PRELUDE}kernel void s(device float* d [[buffer(0)]]) {{ float x = d[0]\n d[0] = x; }}\n{body}");
    std::fs::write(dir.path().join("k.metal"), &broken).unwrap();
    // Human: every error, in source order, the `;` one first.
    let out = msl2wgsl(dir.path(), &["k.metal", "--color", "never"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with("k.metal:")).collect();
    assert_eq!(heads.len(), 5, "{text}");
    assert_eq!(
        heads[0],
        "k.metal:3:62: error: expected ';' at end of declaration [E0200]"
    );
    assert!(
        heads[4].starts_with("k.metal:8:56: error: use of undeclared identifier `u3`"),
        "{text}"
    );
    // JSON, limited: two errors, then E0008.
    let out = msl2wgsl(
        dir.path(),
        &["k.metal", "--error-format", "json", "--error-limit", "2"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let objects: Vec<serde_json::Value> = stderr(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let codes: Vec<&str> = objects
        .iter()
        .map(|o| o["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["E0200", "E0301", "E0008"]);
    assert_eq!(
        (objects[0]["line"].as_u64(), objects[0]["column"].as_u64()),
        (Some(3), Some(62))
    );
    assert_eq!(
        objects[2]["message"],
        "too many errors emitted, stopping now"
    );
    // 0: no limit.
    let out = msl2wgsl(
        dir.path(),
        &["k.metal", "--error-format", "json", "--error-limit", "0"],
        &[],
    );
    assert_eq!(stderr(&out).lines().count(), 5);
}

#[cfg(feature = "cli")] // runs the command-line binary
#[test]
fn json_diagnostics_one_object_per_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("h.h"),
        "float helper() { return missing_name; }\n",
    )
    .unwrap();
    let src = format!(
        "{PRELUDE}#include \"h.h\"\n{}",
        kernel("o[i] = helper() + valeu;")
    );
    std::fs::write(dir.path().join("k.metal"), &src).unwrap();
    let out = msl2wgsl(dir.path(), &["--error-format", "json", "k.metal"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    let objects: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(!objects.is_empty(), "{text}");
    let first = &objects[0];
    assert_eq!(first["severity"], "error");
    assert_eq!(first["code"], "E0301");
    assert_eq!(first["file"], "h.h");
    assert_eq!(
        (first["line"].as_u64(), first["column"].as_u64()),
        (Some(1), Some(25))
    );
    assert_eq!(
        (first["endLine"].as_u64(), first["endColumn"].as_u64()),
        (Some(1), Some(37))
    );
    assert_eq!(first["span"]["start"].as_u64(), Some(24));
    assert_eq!(first["span"]["end"].as_u64(), Some(36));
    assert_eq!(first["includedFrom"][0]["file"], "k.metal");
    assert_eq!(first["includedFrom"][0]["line"].as_u64(), Some(3));
    assert!(first["notes"].is_array());
    // A file that cannot be read is a JSON object too.
    let out = msl2wgsl(dir.path(), &["--error-format", "json", "nope.metal"], &[]);
    let v: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    assert_eq!(
        (v["code"].as_str(), v["file"].is_null()),
        (Some("E0001"), true)
    );
    // run takes it too (translation fails before any GPU is needed); it
    // exists only with the runner feature.
    if cfg!(feature = "runner") {
        // run takes it too (translation fails before any GPU is needed).
        let out = msl2wgsl(
            dir.path(),
            &[
                "run",
                "k.metal",
                "--entry",
                "k",
                "--grid",
                "1",
                "--error-format",
                "json",
            ],
            &[],
        );
        let v: serde_json::Value =
            serde_json::from_str(stderr(&out).lines().next().unwrap_or("")).unwrap();
        assert_eq!(v["code"], "E0301");
    }
    // reflect takes it too.
    let out = msl2wgsl(
        dir.path(),
        &["reflect", "--error-format", "json", "k.metal"],
        &[],
    );
    assert!(stderr(&out).starts_with('{'), "{}", stderr(&out));
}

/// The codes reach the command line's JSON: a preprocessor error, a
/// lowering warning, and a command-level error.
#[cfg(feature = "cli")] // runs the command-line binary
#[test]
fn json_output_carries_specific_codes() {
    let dir = tempfile::tempdir().unwrap();
    let codes = |args: &[&str]| -> Vec<String> {
        let out = msl2wgsl(dir.path(), args, &[]);
        stderr(&out)
            .lines()
            .map(|l| {
                let v: serde_json::Value =
                    serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
                v["code"].as_str().unwrap_or_default().to_string()
            })
            .collect()
    };
    std::fs::write(dir.path().join("l.metal"), "#line x\n").unwrap();
    assert_eq!(codes(&["--error-format", "json", "l.metal"]), ["E0108"]);
    std::fs::write(
        dir.path().join("w.metal"),
        "kernel void k(device float* o, device float* p [[buffer(0)]]) { o[0] = p[0]; }\n",
    )
    .unwrap();
    assert_eq!(codes(&["--error-format", "json", "w.metal"]), ["W0404"]);
    let out = dir.path().join("missing-folder/out.wgsl");
    let out = out.to_str().unwrap();
    assert_eq!(
        codes(&["--error-format", "json", "w.metal", "-w", "-o", out]),
        ["E0004"]
    );
}

/// A vertex function that translates with one warning (`[[point_size]]`
/// dropped: with a `[[stage_in]]` it gets no point-sprite entry point).
#[cfg(feature = "cli")]
const WARNS: &str = "#include <metal_stdlib>
using namespace metal;
struct V { float4 p [[position]]; float s [[point_size]]; };
struct A { float4 p [[attribute(0)]]; };
vertex V vs(A a [[stage_in]]) { V o; o.p = a.p; o.s = 1; return o; }
";

#[cfg(feature = "cli")] // runs the command-line binary
#[test]
fn werror_makes_warnings_errors_and_w_silences_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.metal"), WARNS).unwrap();
    let plain = msl2wgsl(dir.path(), &["w.metal", "-o", "w.wgsl"], &[]);
    assert_eq!(plain.status.code(), Some(0), "{}", stderr(&plain));
    assert!(
        stderr(&plain).contains("warning:") && stderr(&plain).contains("[W0401]"),
        "{}",
        stderr(&plain)
    );
    std::fs::remove_file(dir.path().join("w.wgsl")).unwrap();

    let strict = msl2wgsl(dir.path(), &["-Werror", "w.metal", "-o", "w.wgsl"], &[]);
    assert_eq!(strict.status.code(), Some(1));
    let text = stderr(&strict);
    assert!(
        text.contains("w.metal:3:") && text.contains(": error: ") && text.contains("[W0401]"),
        "{text}"
    );
    assert!(text.contains("because of `-Werror`"), "{text}");
    assert!(
        !dir.path().join("w.wgsl").exists(),
        "-o written despite -Werror"
    );

    let quiet = msl2wgsl(dir.path(), &["-w", "w.metal"], &[]);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(stderr(&quiet), "");
}

#[cfg(feature = "cli")] // runs the command-line binary
#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.metal"), kernel("o[i] = nope;")).unwrap();
    let has_escape = |out: &Output| stderr(out).contains('\x1b');
    // stderr is a pipe here: auto means no colour.
    assert!(!has_escape(&msl2wgsl(dir.path(), &["b.metal"], &[])));
    let always = msl2wgsl(dir.path(), &["--color", "always", "b.metal"], &[]);
    assert!(has_escape(&always));
    assert!(
        stderr(&always).contains("\x1b[1;31merror:"),
        "{:?}",
        stderr(&always)
    );
    let never = msl2wgsl(
        dir.path(),
        &["--color", "never", "b.metal"],
        &[("NO_COLOR", "")],
    );
    assert!(!has_escape(&never));
    let no_color = msl2wgsl(
        dir.path(),
        &["--color", "auto", "b.metal"],
        &[("NO_COLOR", "1")],
    );
    assert!(!has_escape(&no_color));
    // Colour never reaches JSON.
    let json = msl2wgsl(
        dir.path(),
        &["--color", "always", "--error-format", "json", "b.metal"],
        &[],
    );
    assert!(!has_escape(&json));
}
