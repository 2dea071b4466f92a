//! No translated kernel exceeds a WebGPU default limit silently: for every
//! fixture (`fixtures/**/*.metal`) and every corpus file that
//! `tests/corpus/pass.txt` lists (when `../shared/corpus` is present), each
//! function's own WGSL (`Library::function_wgsl`) is parsed again and its
//! bindings per stage, workgroup memory and workgroup size counted here,
//! independently of the translator's `library/limits.rs`; whatever is over
//! a default must have a `requiredLimits` entry at least as large in the
//! function's reflection and a warning.

use msl2wgsl::diagnostics::Code;
use msl2wgsl::reflect::FunctionReflection;
use msl2wgsl::{Library, Options};
use naga::{AddressSpace, ImageClass, TypeInner};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// WebGPU's defaults (`GPUSupportedLimits`) of the limits counted here.
const DEFAULTS: &[(&str, u64)] = &[
    ("maxStorageBuffersPerShaderStage", 8),
    ("maxUniformBuffersPerShaderStage", 12),
    ("maxSampledTexturesPerShaderStage", 16),
    ("maxStorageTexturesPerShaderStage", 4),
    ("maxSamplersPerShaderStage", 16),
    ("maxComputeWorkgroupStorageSize", 16384),
    ("maxComputeInvocationsPerWorkgroup", 256),
    ("maxComputeWorkgroupSizeX", 256),
    ("maxComputeWorkgroupSizeY", 256),
    ("maxComputeWorkgroupSizeZ", 64),
];

/// What the WGSL of one entry point needs, by limit name.
fn needs(wgsl: &str) -> BTreeMap<&'static str, u64> {
    let module = naga::front::wgsl::parse_str(wgsl).expect("the function's WGSL parses");
    let mut n: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut add = |name: &'static str, v: u64| *n.entry(name).or_default() += v;
    for (_, g) in module.global_variables.iter() {
        let inner = &module.types[g.ty].inner;
        match (g.space, inner) {
            (AddressSpace::Storage { .. }, _) => add("maxStorageBuffersPerShaderStage", 1),
            (AddressSpace::Uniform, _) => add("maxUniformBuffersPerShaderStage", 1),
            (AddressSpace::WorkGroup, t) => add(
                "maxComputeWorkgroupStorageSize",
                u64::from(t.size(module.to_ctx())).next_multiple_of(16),
            ),
            (
                _,
                TypeInner::Image {
                    class: ImageClass::Storage { .. },
                    ..
                },
            ) => add("maxStorageTexturesPerShaderStage", 1),
            (_, TypeInner::Image { .. }) => add("maxSampledTexturesPerShaderStage", 1),
            (_, TypeInner::Sampler { .. }) => add("maxSamplersPerShaderStage", 1),
            _ => {}
        }
    }
    if let Some(e) = module.entry_points.first() {
        if e.stage == naga::ShaderStage::Compute {
            let [x, y, z] = e.workgroup_size.map(u64::from);
            add("maxComputeInvocationsPerWorkgroup", x * y * z);
            add("maxComputeWorkgroupSizeX", x);
            add("maxComputeWorkgroupSizeY", y);
            add("maxComputeWorkgroupSizeZ", z);
        }
    }
    n
}

/// The problems of `library` (translated from `file`): a default exceeded
/// with no `requiredLimits` entry that covers it, or with no warning.
fn unreported(file: &str, library: &Library) -> Vec<String> {
    let warned = library
        .warning_diagnostics()
        .0
        .iter()
        .any(|d| matches!(d.code(), Code::DefaultLimitExceeded | Code::LargeArray));
    unreported_in(
        file,
        library.functions(),
        &|name| library.function_wgsl(name),
        warned,
    )
}

/// [`unreported`] of `functions`, whose WGSL `wgsl_of` gives (`None`:
/// translated when dispatched), `warned` if the translation warned of a
/// limit.
fn unreported_in(
    file: &str,
    functions: &[FunctionReflection],
    wgsl_of: &dyn Fn(&str) -> Option<String>,
    warned: bool,
) -> Vec<String> {
    let mut problems = Vec::new();
    for f in functions {
        let Some(wgsl) = wgsl_of(&f.name) else {
            continue;
        };
        for (limit, need) in needs(&wgsl) {
            let default = DEFAULTS.iter().find(|(l, _)| *l == limit).unwrap().1;
            if need <= default {
                continue;
            }
            let required = f.required_limits.get(limit).copied();
            if required.is_none_or(|r| r < need) || !warned {
                problems.push(format!(
                    "{file} `{}`: needs {need} of `{limit}` (default {default}); \
                     requiredLimits has {required:?}, warned: {warned}",
                    f.name
                ));
            }
        }
    }
    problems
}

/// Every `.metal` file under `dir`, sorted.
fn metal_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "metal") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The default options for wgpu's dialect, which naga parses again (the
/// browser's enables `subgroups`, which naga does not); the bindings and
/// limits are the same.
fn wgpu_options() -> Options {
    Options {
        target: msl2wgsl::Target::Wgpu,
        ..Options::default()
    }
}

/// Translates each file with the default options on two threads; returns
/// the problems and how many translated.
fn audit(files: &[(String, PathBuf)]) -> (Vec<String>, usize) {
    let chunks: Vec<_> = files.chunks(files.len().div_ceil(2).max(1)).collect();
    let results: Vec<(Vec<String>, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                s.spawn(move || {
                    let (mut problems, mut translated) = (Vec::new(), 0);
                    for (name, path) in chunk.iter() {
                        // Inputs that fail here (errors, or options that
                        // tests/corpus/options.tsv gives) have no WGSL to check.
                        let Ok(library) = Library::from_file(path, &wgpu_options()) else {
                            continue;
                        };
                        translated += 1;
                        problems.extend(unreported(name, &library));
                    }
                    (problems, translated)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    results
        .into_iter()
        .fold((Vec::new(), 0), |(mut p, n), (q, m)| {
            p.extend(q);
            (p, n + m)
        })
}

#[test]
fn fixtures_exceed_no_default_limit_silently() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<_> = metal_files(&root.join("fixtures"))
        .into_iter()
        .map(|p| (p.strip_prefix(root).unwrap().display().to_string(), p))
        .collect();
    let (problems, translated) = audit(&files);
    eprintln!(
        "limits audit: {translated} of {} fixtures translated",
        files.len()
    );
    assert!(translated > 50, "only {translated} fixtures translated");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn corpus_exceeds_no_default_limit_silently() {
    // Third-party WGSL is checked by ../shared/tools/corpus-rate; the
    // suite's dump (`MSL2WGSL_DUMP_WGSL`, which .ci/run checks with Tint and
    // the driver) is for the project's own tests, whose output must all
    // pass (tests/corpus.rs does the same). The fixtures test of this
    // binary may lose its dumps with it: other test files dump those too.
    std::env::remove_var(msl2wgsl::library::dump::DUMP_VAR);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = std::env::var_os("MSL2WGSL_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/corpus"));
    if !corpus.is_dir() {
        assert!(
            !std::env::var("MSL2WGSL_REQUIRE_CORPUS").is_ok_and(|v| v == "1"),
            "MSL2WGSL_REQUIRE_CORPUS=1 but {} is absent",
            corpus.display()
        );
        eprintln!(
            "note: skipping the corpus limits audit: {} is absent",
            corpus.display()
        );
        return;
    }
    let list = std::fs::read_to_string(root.join("tests/corpus/pass.txt")).unwrap();
    let files: Vec<_> = list
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| (l.to_string(), corpus.join(l)))
        .collect();
    let (problems, translated) = audit(&files);
    eprintln!(
        "limits audit: {translated} of {} corpus files translated with the default options",
        files.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The audit itself finds a kernel over a default (the check fails
/// without it): ten storage buffers, which the translator reports.
#[test]
fn the_audit_counts_storage_buffers() {
    let source = r#"
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* a0 [[buffer(0)]], device float* a1 [[buffer(1)]],
              device float* a2 [[buffer(2)]], device float* a3 [[buffer(3)]],
              device float* a4 [[buffer(4)]], device float* a5 [[buffer(5)]],
              device float* a6 [[buffer(6)]], device float* a7 [[buffer(7)]],
              device float* a8 [[buffer(8)]], uint i [[thread_position_in_grid]]) {
    a0[i] = a1[i] + a2[i] + a3[i] + a4[i] + a5[i] + a6[i] + a7[i] + a8[i];
}
"#;
    let library = Library::from_source("k.metal", source, &wgpu_options()).unwrap();
    let wgsl = library.function_wgsl("k").unwrap();
    assert_eq!(needs(&wgsl)["maxStorageBuffersPerShaderStage"], 9);
    assert!(unreported("k.metal", &library).is_empty());
    // Without its requiredLimits entry, or without the warning, the
    // audit reports it.
    let mut stripped = library.functions().to_vec();
    stripped[0].required_limits.clear();
    let wgsl_of = |name: &str| library.function_wgsl(name);
    let found = unreported_in("k.metal", &stripped, &wgsl_of, true);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("maxStorageBuffersPerShaderStage"),
        "{found:?}"
    );
    let found = unreported_in("k.metal", library.functions(), &wgsl_of, false);
    assert_eq!(found.len(), 1, "{found:?}");
}
