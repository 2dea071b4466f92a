//! The command line's forced includes: clang's `-include FILE` and
//! `--include FILE`, read before the first line of the input and looked up
//! in the current folder first.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A kernel that needs the prelude's `Frame` and `GAIN`.
const KERNEL: &str =
    "kernel void apply(device float* a [[buffer(0)]], constant Frame& f [[buffer(1)]],
                  uint i [[thread_position_in_grid]])
{
    a[i] = a[i] * f.scale * GAIN;
}
";

/// The prelude the kernel needs.
const PRELUDE: &str = "#include <metal_stdlib>
using namespace metal;
#define GAIN 3.0f
struct Frame { float scale; };
";

/// A folder holding `prelude.h` and `k.metal`, removed when dropped.
struct Project(PathBuf);

impl Project {
    fn new(tag: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("msl2wgsl-cli-include-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("inc")).expect("temp dir");
        std::fs::write(dir.join("prelude.h"), PRELUDE).expect("prelude");
        std::fs::write(dir.join("k.metal"), KERNEL).expect("kernel");
        Project(dir)
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs msl2wgsl in `dir` with `args`.
fn msl2wgsl(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_msl2wgsl"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("cannot start msl2wgsl")
}

/// Asserts that `out` succeeded and printed WGSL with the kernel.
fn translated(out: &Output, what: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("fn apply"), "{what}: {stdout}");
}

#[test]
fn dash_include_reads_a_file_of_the_current_folder_first() {
    let p = Project::new("dash");
    translated(
        &msl2wgsl(&p.0, &["-include", "prelude.h", "k.metal"]),
        "-include",
    );
    translated(
        &msl2wgsl(&p.0, &["k.metal", "--include", "prelude.h"]),
        "--include",
    );
    translated(
        &msl2wgsl(&p.0, &["--include=prelude.h", "k.metal"]),
        "--include=",
    );
    // Without it the kernel does not translate.
    let out = msl2wgsl(&p.0, &["k.metal"]);
    assert_eq!(out.status.code(), Some(1));
    // `reflect` takes it too.
    let out = msl2wgsl(&p.0, &["reflect", "k.metal", "-include", "prelude.h"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"apply\""));
}

#[test]
fn dash_include_falls_back_on_the_include_path_and_repeats() {
    let p = Project::new("path");
    std::fs::rename(p.0.join("prelude.h"), p.0.join("inc/prelude.h")).expect("move");
    std::fs::write(p.0.join("inc/gain.h"), "#undef GAIN\n#define GAIN 5.0f\n").expect("gain");
    let out = msl2wgsl(
        &p.0,
        &[
            "-I",
            "inc",
            "-include",
            "prelude.h",
            "-include",
            "gain.h",
            "k.metal",
        ],
    );
    translated(&out, "-I inc -include x2");
    // In order: the second one's GAIN wins.
    assert!(String::from_utf8_lossy(&out.stdout).contains("5f"));
}

#[test]
fn a_missing_forced_include_is_a_located_error() {
    let p = Project::new("missing");
    let out = msl2wgsl(&p.0, &["-include", "nope.h", "k.metal"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("<built-in>:1:10: error: 'nope.h' file not found [E0101]"),
        "{stderr}"
    );
}
