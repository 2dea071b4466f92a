//! The Tint round trip (TESTING.md, "Round-trip oracles"): for Tint's
//! end-to-end tests with a compute entry point whose bindings are buffers,
//! the WGSL source runs as it is and Tint's MSL of it runs through
//! msl2wgsl, on the same GPU with the same buffer contents; every buffer
//! must agree.
//!
//! `cargo test` runs a fixed sample; the whole campaign, with counts:
//! `MSL2WGSL_ORACLE_FULL=1 cargo test --release --test tint_roundtrip -- --nocapture`.
//! Without `../shared/corpus` the test is skipped with a note, unless
//! `MSL2WGSL_REQUIRE_CORPUS=1`.
#![cfg(feature = "runner")]

mod common;
mod oracle;

use oracle::roundtrip::{quietly, Outcome};
use oracle::tally::Tally;
use oracle::tint;
use std::time::Instant;

/// Every `SAMPLE_STRIDE`-th test file is in the default sample.
const SAMPLE_STRIDE: usize = 12;

/// Differences that are not msl2wgsl's, by file and entry point, with the
/// reason (TESTING.md lists them).
const EXPLAINED: &[(&str, &str)] = &[
    (
        "buffer/uniform/std140/array/mat2x3_f16/dynamic_index_via_ptr.wgsl f",
        OOB_COLUMN,
    ),
    (
        "buffer/uniform/std140/array/mat2x3_f32/dynamic_index_via_ptr.wgsl f",
        OOB_COLUMN,
    ),
    (
        "buffer/uniform/std140/array/mat2x4_f16/dynamic_index_via_ptr.wgsl f",
        OOB_COLUMN,
    ),
    (
        "buffer/uniform/std140/array/mat2x4_f32/dynamic_index_via_ptr.wgsl f",
        OOB_COLUMN,
    ),
    ("bug/tint/744.wgsl main", RACE_AND_OOB),
];

/// Differences on wgpu's GL backend only, by file and entry point, with
/// the reason: there the *WGSL* side is wrong (TESTING.md "Backends",
/// known defect 6). Each one found prints a `SKIP on gl:` line.
const EXPLAINED_ON_GL: &[(&str, &str)] = &[(
    "buffer/uniform/std140/array/mat2x2_f32/to_builtin.wgsl f",
    GL_STD140_MATRIX,
)];

/// Why the Tint WGSL of a uniform `mat2x2` array computes wrong on GL.
const GL_STD140_MATRIX: &str =
    "the WGSL's `var<uniform> u: array<mat2x2<f32>, 4>` is read with std140 strides on GL \
     (naga's GLSL writer; gl_known_defects.rs \
     `uniform_matrices_of_two_row_columns_take_std140_strides`); the translation binds it as \
     storage and reads the right bytes";

/// Why `bug/tint/744.wgsl` differs.
const RACE_AND_OOB: &str = "with these contents (aShape.y = 7, outShape.y = 0) the test reads \
     past its 8-element arrays (WGSL's reads give 0 under robustBufferAccess2, Tint's MSL \
     clamps) and two invocations store different values to one element (a race)";

/// Why the `mat2xN` `dynamic_index_via_ptr` tests differ.
const OOB_COLUMN: &str =
    "Tint's test indexes column 2 of a mat2xN in a uniform buffer; WGSL lets an \
     out-of-bounds read return any value of the buffer (wgpu leaves buffer bounds to \
     robustBufferAccess2 and reads the next matrix), Tint's MSL clamps the index";

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

#[test]
fn tint_msl_matches_its_wgsl() {
    let Some(root) = tint::root() else {
        assert!(
            !env_flag("MSL2WGSL_REQUIRE_CORPUS"),
            "MSL2WGSL_REQUIRE_CORPUS=1 but ../shared/corpus is absent"
        );
        eprintln!("note: skipping the Tint round trip: ../shared/corpus is absent");
        return;
    };
    let Some(gpu) = common::gpu() else { return };
    let on_gl = gpu.backend() == wgpu::Backend::Gl;
    let full = env_flag("MSL2WGSL_ORACLE_FULL");
    let filter = std::env::var("MSL2WGSL_ORACLE_FILTER").unwrap_or_default();
    let start = Instant::now();
    let files: Vec<_> = tint::tests(&root)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| full || !filter.is_empty() || i % SAMPLE_STRIDE == 0)
        .map(|(_, f)| f)
        .filter(|f| f.display().to_string().contains(&filter))
        .collect();
    let mut tally = Tally::default();
    let mut unexplained = Vec::new();
    let (mut candidates, mut compared) = (0, 0);
    for (n, file) in files.iter().enumerate() {
        if n % 200 == 199 {
            eprintln!(
                "... {} of {} files, {:.0} s",
                n + 1,
                files.len(),
                start.elapsed().as_secs_f64()
            );
        }
        for record in quietly(|| tint::check(gpu, &root, file)) {
            let case = format!("{} {}", record.file, record.entry);
            match record.outcome {
                Outcome::NotCandidate(why) => tally.add(&format!("not a candidate: {why}"), case),
                Outcome::Skipped(why, detail) => {
                    candidates += 1;
                    tally.add(&format!("skipped: {why}"), format!("{case}: {detail}"));
                }
                Outcome::Equal => {
                    candidates += 1;
                    compared += 1;
                    tally.add("compared: equal", case);
                }
                Outcome::Differ(d) => {
                    candidates += 1;
                    compared += 1;
                    let explained = EXPLAINED
                        .iter()
                        .chain(on_gl.then_some(EXPLAINED_ON_GL).into_iter().flatten())
                        .find(|(f, _)| case == *f)
                        .map(|(_, why)| *why);
                    if on_gl && EXPLAINED_ON_GL.iter().any(|(f, _)| case == *f) {
                        common::skip::known_defect(gpu, &case, "the WGSL side: known defect 6");
                    }
                    match explained {
                        Some(why) => tally.add(&format!("compared: differ ({why})"), case),
                        None => {
                            tally.add("compared: differ (unexplained)", format!("{case}: {d}"));
                            unexplained.push(format!("{case}: {d}"));
                        }
                    }
                }
            }
        }
    }
    eprintln!(
        "tint round trip: {} files, {} entry points; {candidates} candidates, {compared} compared, \
         {} equal, {} differ; {:.1} s\n{}",
        files.len(),
        tally.total(),
        tally.count("compared: equal"),
        compared - tally.count("compared: equal"),
        start.elapsed().as_secs_f64(),
        tally.report(true)
    );
    assert!(
        unexplained.is_empty(),
        "unexplained differences:\n{}",
        unexplained.join("\n")
    );
}
