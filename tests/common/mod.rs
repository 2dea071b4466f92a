//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different part

#[cfg(feature = "runner")]
pub mod game;
#[cfg(feature = "runner")]
pub mod ml;
#[cfg(feature = "runner")]
pub mod skip;
#[cfg(feature = "runner")]
#[allow(unused_imports)] // each test binary uses a different part
pub use skip::{skip, Limit};
pub mod source;
#[cfg(feature = "runner")]
pub mod wgsl;

#[cfg(feature = "runner")]
use msl2wgsl::runner::Gpu;
#[cfg(feature = "runner")]
use std::sync::OnceLock;

/// The GPU shared by every test of one test binary, or `None` (with a note
/// on stderr) when this machine has no adapter.
///
/// With `MSL2WGSL_REQUIRE_GPU=1` a missing adapter is a test failure
/// instead, so CI on a GPU machine cannot silently skip everything.
#[cfg(feature = "runner")]
pub fn gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Option<Gpu>> = OnceLock::new();
    let gpu = GPU.get_or_init(|| match Gpu::new() {
        Ok(gpu) => {
            eprintln!("note: running on {}", gpu.adapter_line());
            Some(gpu)
        }
        Err(e) => {
            if require_gpu() {
                panic!("MSL2WGSL_REQUIRE_GPU=1 but no GPU is usable: {e}");
            }
            None
        }
    });
    if gpu.is_none() {
        eprintln!(
            "note: skipping a GPU test: no adapter (set MSL2WGSL_REQUIRE_GPU=1 to fail instead)"
        );
    }
    gpu.as_ref()
}

/// True when `MSL2WGSL_REQUIRE_GPU=1`.
pub fn require_gpu() -> bool {
    std::env::var("MSL2WGSL_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// Little-endian bytes of `f32`s.
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// `f32`s from little-endian bytes (a trailing partial element is dropped).
pub fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// `u32`s from little-endian bytes (a trailing partial element is dropped).
pub fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// True when a GPU adapter is usable (always false without the runner).
pub fn has_gpu() -> bool {
    #[cfg(feature = "runner")]
    return gpu().is_some();
    #[cfg(not(feature = "runner"))]
    return false;
}
