//! The conformance cases (`fixtures/cases`) in headless Chromium's WebGPU
//! (SwiftShader, no GPU), against the same cases on wgpu.
//!
//!     MSL2WGSL_BROWSER=1 cargo test --test browser_conformance -- --nocapture
//!
//! Without `MSL2WGSL_BROWSER=1` the test checks nothing; with it, a missing
//! node, Chromium or `web/node_modules` fails the test. Every case must pass
//! in the browser, and a case whose expectations are all exact must read
//! back the same bytes as on wgpu (when a wgpu adapter is available).

#![cfg(feature = "runner")]

use msl2wgsl::runner::conformance::browser::{self, BrowserRunner};
use msl2wgsl::runner::conformance::{collect_cases, prepare_case};
use msl2wgsl::runner::Gpu;
use std::path::{Path, PathBuf};

#[test]
fn cases_pass_in_the_browser_as_on_wgpu() {
    if std::env::var_os("MSL2WGSL_BROWSER").is_none_or(|v| v != "1") {
        eprintln!("MSL2WGSL_BROWSER=1 is not set: the browser is not run");
        return;
    }
    let cases = collect_cases(&[Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cases")]);
    let prepared: Vec<_> = cases
        .iter()
        .map(|c| prepare_case(c).unwrap_or_else(|e| panic!("{}: {e}", c.display())))
        .collect();
    let jobs: Vec<_> = prepared
        .iter()
        .map(|p| browser::job(p).unwrap_or_else(|e| panic!("{}: {e}", p.path().display())))
        .collect();
    let results = browser::run_in_browser(&BrowserRunner::default(), &jobs)
        .unwrap_or_else(|e| panic!("the browser runner failed: {e}"));
    println!("browser adapter: {}", results.adapter);
    println!("browser features: {}", results.features.join(", "));
    let gpu = Gpu::new().ok();
    let mut failures = Vec::new();
    for p in &prepared {
        let name: PathBuf = p.path().to_path_buf();
        let result = &results.results[&name.display().to_string()];
        let outputs = match browser::outputs(p, result).and_then(|o| p.check(&o).map(|_| o)) {
            Ok(outputs) => outputs,
            Err(e) => {
                failures.push(format!("{}: {e}", name.display()));
                continue;
            }
        };
        if result.used_f32_half {
            println!("{}: ran with half as f32 (no shader-f16)", name.display());
        }
        let Some(gpu) = gpu.as_ref().filter(|_| p.is_exact()) else {
            continue;
        };
        match p.run_on(gpu) {
            Ok(native) if native == outputs => {}
            Ok(native) => {
                for (index, bytes) in &native {
                    if outputs.get(index) != Some(bytes) {
                        failures.push(format!(
                            "{}: buffer {index}: the browser's bytes differ from wgpu's",
                            name.display()
                        ));
                    }
                }
            }
            Err(e) => failures.push(format!("{}: on wgpu: {e}", name.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    println!("{} cases passed in the browser", prepared.len());
}
