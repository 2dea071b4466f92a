//! Inputs the fuzzers found (fixtures/fuzz/): each must translate or be
//! refused with located diagnostics, never with an internal compiler error.

use msl2wgsl::{decode_source, Library, Options};
use std::path::Path;

/// Translates `path` and returns the rendered failure, if any.
fn translate(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).unwrap();
    let name = path.display().to_string();
    let text = match decode_source(&name, bytes) {
        Ok(text) => text,
        Err(failure) => return Some(failure.render()),
    };
    Library::from_source(&name, &text, &Options::default())
        .err()
        .map(|f| f.render())
}

#[test]
fn no_fuzz_regression_is_an_internal_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fuzz");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "metal") {
            if let Some(rendered) = translate(&path) {
                assert!(
                    !rendered.contains("internal compiler error"),
                    "{}:\n{rendered}",
                    path.display()
                );
                // Every refusal points at a line of the input.
                assert!(
                    rendered.contains(".metal:"),
                    "{}:\n{rendered}",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked > 0,
        "no fuzz regressions found in {}",
        dir.display()
    );
}

/// Found by the fuzzer: two kernels named `transpose4` reached naga as
/// conflicting entry points.
#[test]
fn a_second_stage_function_with_the_same_name_is_a_redefinition() {
    let src = "kernel void k(device float* a [[buffer(0)]]) { a[0] = 1; }\n\
               kernel void k(device int* a [[buffer(0)]]) { a[0] = 1; }\n";
    let failure = Library::from_source("dup.metal", src, &Options::default()).unwrap_err();
    let rendered = failure.render();
    assert!(
        rendered.contains("dup.metal:2:13: error: redefinition of the stage function `k`"),
        "{rendered}"
    );
}
