//! The one place that decides which GPU tests a backend cannot run, and
//! says so: every skip prints `SKIP on BACKEND: TEST: reason` to the
//! process's stderr, which the test harness does not capture, so a skip is
//! never silent, and appends it to the file `MSL2WGSL_SKIP_LOG` names, if
//! any (for runners that capture the process's stderr). TESTING.md
//! ("Backends") lists them.
//!
//! Two kinds: the device lacks an optional feature the test needs
//! ([`missing_feature`]: subgroups, 64-bit integers, ...), or the backend
//! cannot do what the test checks ([`Limit`], decided here by backend).
//! A result a backend gets *wrong* is no skip: it has a reproducer in
//! `tests/gl_known_defects.rs` that asserts the wrong result.

use msl2wgsl::runner::Gpu;
use std::io::Write;

/// What a test needs that some backend cannot do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// One texture sampled with two samplers in one shader: GL samples
    /// through combined texture-sampler units, and wgpu's GL backend
    /// refuses the pipeline ("A image was used with multiple samplers").
    TextureWithSeveralSamplers,
    /// A dispatch the runner's timeout interrupts: wgpu's GL backend on
    /// llvmpipe runs the work inside `queue.submit`, so it has finished
    /// before there is anything to wait for.
    GpuTimeout,
    /// A depth texture sampled without comparison: naga's GLSL writer
    /// emits GLSL that does not compile (`gl_known_defects.rs`,
    /// `depth_texture_sampled_without_comparison`).
    DepthSample,
    /// `textureLoad` of a depth texture: naga's GLSL writer refuses it
    /// ("WGSL `textureLoad` from depth textures is not supported in GLSL").
    DepthLoad,
    /// `[[flat]]` varyings, which take the first vertex's value in Metal
    /// and WGSL: GL takes the last one (`gl_known_defects.rs`,
    /// `flat_varyings_take_the_first_vertex`).
    FlatFirstVertex,
    /// Dual-source blending: wgpu's GL backend leaves its blend state on
    /// the shared context, and later draws of other tests with several
    /// colour attachments come out wrong (`gl_known_defects.rs`,
    /// `dual_source_blending_leaks_into_the_next_pipeline`).
    DualSourceBlending,
    /// A cube texture viewed as a 2-D array of its faces (cube textures
    /// read or written texel by texel): wgpu's GL backend makes every
    /// square 2-D texture of 6n layers a cube map when it creates it, and
    /// a 2-D array view of that reads nothing.
    CubeFacesAsArray,
}

impl Limit {
    /// Why `backend` cannot run a test that needs `self`; `None` if it can.
    fn on(self, backend: wgpu::Backend) -> Option<&'static str> {
        if backend != wgpu::Backend::Gl {
            return None;
        }
        Some(match self {
            Limit::TextureWithSeveralSamplers => {
                "one texture with several samplers (GL combines texture and sampler; wgpu refuses)"
            }
            Limit::GpuTimeout => {
                "the runner's GPU timeout (wgpu's GL backend runs the work inside submit)"
            }
            Limit::DepthSample => {
                "a depth texture sampled without comparison (naga's GLSL: textureLod(sampler2DShadow, vec2, ...)); known defect"
            }
            Limit::DepthLoad => {
                "textureLoad of a depth texture (naga's GLSL writer does not support it)"
            }
            Limit::FlatFirstVertex => {
                "flat varyings (GL takes the last vertex's value, WGSL the first); known defect"
            }
            Limit::DualSourceBlending => {
                "dual-source blending (wgpu's GL leaves its blend state to the next tests' draws); known defect"
            }
            Limit::CubeFacesAsArray => {
                "a cube texture viewed as a 2-D array (wgpu's GL creates square 2-D textures of 6n layers as cube maps)"
            }
        })
    }
}

/// The name of `backend` as `WGPU_BACKEND` spells it.
pub fn backend_name(backend: wgpu::Backend) -> String {
    match backend {
        wgpu::Backend::Gl => "gl".into(),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// Prints the skip line for the running test.
fn print_skip(gpu: &Gpu, reason: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    let line = format!(
        "SKIP on {}: {test}: {reason}\n",
        backend_name(gpu.backend())
    );
    // Straight to the process's stderr: the harness captures `eprintln!`.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    // A runner that captures the whole process's output (cargo-nextest runs
    // each test in a process of its own and shows only failures' output)
    // would hide it: `.ci/run` names a file here and prints it after the
    // pass, so that a skip is never silent.
    if let Some(path) = std::env::var_os(SKIP_LOG_VAR) {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| file.write_all(line.as_bytes()));
        if let Err(e) = appended {
            panic!("{SKIP_LOG_VAR}: cannot record a skip: {e}");
        }
    }
}

/// A file every skip line is also appended to, when set.
pub const SKIP_LOG_VAR: &str = "MSL2WGSL_SKIP_LOG";

/// True (after printing why) if the test GPU's backend cannot run a test
/// that needs `limit`; false without a GPU (the test then skips by itself).
pub fn skip(limit: Limit) -> bool {
    let Some(gpu) = super::gpu() else {
        return false;
    };
    match limit.on(gpu.backend()) {
        Some(reason) => {
            print_skip(gpu, reason);
            true
        }
        None => false,
    }
}

/// Prints the skip line of a test that needs `feature` (wgpu's name:
/// `subgroup`, `shader-int64`, ...), which `gpu` lacks.
pub fn missing_feature(gpu: &Gpu, feature: &str) {
    print_skip(gpu, &format!("the device lacks `{feature}`"));
}

/// Prints the skip line of a comparison the running test leaves out
/// because `what` meets a known defect of the backend (`why`, naming its
/// reproducer in `tests/gl_known_defects.rs`).
pub fn known_defect(gpu: &Gpu, what: &str, why: &str) {
    print_skip(gpu, &format!("{what}: {why}"));
}
