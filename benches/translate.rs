//! Translation benchmark: MSL → WGSL time, against naga doing the work
//! downstream of our front end on the WGSL we emitted.
//!
//! `cargo bench --bench translate` measures, with criterion,
//!
//! * `fixtures/<name>`: every `fixtures/*.metal` that translates;
//! * `generated/<lines>`: deterministic programs of about 1k, 10k and 100k
//!   lines (structs, helpers with loops and vector math, kernels);
//! * `long_expression/<terms>`: one statement `a[0] = 1.0f + 1.0f + ...`;
//!
//! each as `ours` (`Library::from_source`: preprocess, parse, analysis,
//! lowering, naga validation, naga's WGSL writer and the re-parse check) and
//! `naga` (naga's WGSL front end + validator + WGSL writer on
//! `library.wgsl()`: what the same program costs a WGSL user).
//!
//! It then prints a table (`scaling`): ours and naga per size, in ms and µs
//! per input line, and the ratio ours/naga, timed in the same run (median
//! of a few runs), to show the cost grows linearly with the input.
//! `cargo bench --bench translate -- scaling` prints only the table; any
//! other filter skips it.

mod common;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use msl2wgsl::{Library, Options};
use naga::valid::{Capabilities, ValidationFlags, Validator};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Sizes of the generated programs, in lines.
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
/// Terms of the long expressions.
const TERMS: [usize; 3] = [1_000, 10_000, 100_000];
/// Terms up to which criterion measures the long expression (above, only
/// the table times it: naga alone takes seconds there).
const CRITERION_TERMS: usize = 10_000;

fn translate(name: &str, text: &str) -> Library {
    match Library::from_source(name, text, &Options::default()) {
        Ok(library) => library,
        Err(failure) => panic!("{name} does not translate:\n{failure}"),
    }
}

/// The WGSL naga's front end accepts: it rejects `enable subgroups;`, which
/// the WebGPU target puts first when a shader uses subgroups.
fn naga_input(library: &Library) -> String {
    let wgsl = library.wgsl();
    wgsl.strip_prefix("enable subgroups;\n")
        .unwrap_or(wgsl)
        .to_string()
}

/// naga's WGSL front end, validator and WGSL writer on `wgsl`.
fn naga_roundtrip(wgsl: &str) -> String {
    let module = naga::front::wgsl::parse_str(wgsl).expect("our WGSL parses");
    let info = Validator::new(ValidationFlags::all(), Capabilities::all())
        .validate(&module)
        .expect("our WGSL validates");
    naga::back::wgsl::write_string(&module, &info, naga::back::wgsl::WriterFlags::empty())
        .expect("naga writes WGSL")
}

/// The fixtures that translate, sorted by name.
fn fixtures() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "metal"))
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let name = path.file_stem()?.to_string_lossy().into_owned();
            let library =
                Library::from_source(&path.display().to_string(), &text, &Options::default())
                    .ok()?;
            // Both sides must work for a comparison.
            naga::front::wgsl::parse_str(&naga_input(&library)).ok()?;
            Some((name, text))
        })
        .collect()
}

/// Measures `ours` and `naga` for one program in `group`.
fn compare(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: &str,
    name: &str,
    text: &str,
) {
    let wgsl = naga_input(&translate(name, text));
    group.bench_with_input(BenchmarkId::new("ours", id), text, |b, text| {
        b.iter(|| translate(name, black_box(text)))
    });
    group.bench_with_input(BenchmarkId::new("naga", id), &wgsl, |b, wgsl| {
        b.iter(|| naga_roundtrip(black_box(wgsl)))
    });
}

fn bench_fixtures(c: &mut Criterion) {
    let mut group = c.benchmark_group("fixtures");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(600));
    for (name, text) in fixtures() {
        compare(&mut group, &name, &format!("{name}.metal"), &text);
    }
    group.finish();
}

fn bench_generated(c: &mut Criterion) {
    let mut group = c.benchmark_group("generated");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(200));
    for lines in SIZES {
        let text = common::program(lines);
        group
            .throughput(Throughput::Elements(text.lines().count() as u64))
            .measurement_time(Duration::from_millis(if lines >= 100_000 {
                1
            } else {
                1500
            }));
        compare(&mut group, &lines.to_string(), "generated.metal", &text);
    }
    group.finish();
}

fn bench_long_expression(c: &mut Criterion) {
    let mut group = c.benchmark_group("long_expression");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(1000));
    for terms in TERMS.into_iter().filter(|&t| t <= CRITERION_TERMS) {
        let text = common::long_expression(terms);
        compare(&mut group, &terms.to_string(), "sum.metal", &text);
    }
    group.finish();
}

/// Median wall time of `runs` calls of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// One row of the table: `ours` and `naga` on `text` of `units` units.
fn row(label: &str, units: usize, unit: &str, name: &str, text: &str) {
    let runs = if units >= 100_000 { 3 } else { 7 };
    let wgsl = naga_input(&translate(name, text));
    let ours = median(runs, || drop(black_box(translate(name, black_box(text)))));
    let naga = median(runs, || drop(black_box(naga_roundtrip(black_box(&wgsl)))));
    let per = |d: Duration| d.as_secs_f64() * 1e6 / units as f64;
    println!(
        "{label:<16} {units:>7} {unit:<5} {:>10.1} {:>9.2} {:>10.1} {:>9.2} {:>7.2}",
        ours.as_secs_f64() * 1e3,
        per(ours),
        naga.as_secs_f64() * 1e3,
        per(naga),
        ours.as_secs_f64() / naga.as_secs_f64(),
    );
}

/// The scaling table; see the module documentation.
fn scaling() {
    println!();
    println!(
        "{:<16} {:>13} {:>10} {:>9} {:>10} {:>9} {:>7}",
        "scaling", "size", "ours ms", "ours µs/u", "naga ms", "naga µs/u", "ratio"
    );
    for lines in SIZES {
        let text = common::program(lines);
        row(
            "generated",
            text.lines().count(),
            "lines",
            "generated.metal",
            &text,
        );
    }
    for terms in TERMS {
        row(
            "long_expression",
            terms,
            "terms",
            "sum.metal",
            &common::long_expression(terms),
        );
    }
    println!("(u: a line of the generated programs, a term of the long expressions)");
}

/// Criterion's options that take a value as the next argument.
const VALUED: [&str; 14] = [
    "--save-baseline",
    "--baseline",
    "--baseline-lenient",
    "--load-baseline",
    "--profile-time",
    "--sample-size",
    "--warm-up-time",
    "--measurement-time",
    "--nresamples",
    "--noise-threshold",
    "--confidence-level",
    "--significance-level",
    "--output-format",
    "--color",
];

/// The benchmark filter among criterion's arguments, if any.
fn filter(args: &[String]) -> Option<&str> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if VALUED.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            return Some(arg);
        }
    }
    None
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Criterion runs each benchmark once without `--bench` (`cargo test
    // --benches`), and `--profile-time` is for profilers: no table then.
    let benchmarking = args.iter().any(|a| a == "--bench")
        && !args.iter().any(|a| a.starts_with("--profile-time"));
    let filter = filter(&args);
    let mut criterion = Criterion::default().configure_from_args();
    if filter.is_none_or(|f| f != "scaling") {
        bench_fixtures(&mut criterion);
        bench_generated(&mut criterion);
        bench_long_expression(&mut criterion);
        criterion.final_summary();
    }
    if benchmarking && filter.is_none_or(|f| f == "scaling") {
        scaling();
    }
}
