//! Conformance oracles (issue #18, TESTING.md "Round-trip oracles"): a
//! WGSL program runs as it is through raw wgpu, and the MSL another
//! compiler made of it runs through msl2wgsl; every buffer must agree.
//!
//! - `fill`, `program`, `wgsl_run`, `compare`: independent of msl2wgsl:
//!   buffers with deterministic contents from the WGSL types, execution of
//!   WGSL through wgpu, comparison (floats within WGSL's precision table
//!   where the program calls approximate builtins, bytes elsewhere).
//! - `translated`: the MSL side, through the library and the runner.
//! - `tint`: Tint's end-to-end tests (WGSL next to Tint's MSL).
//! - `naga_msl`: MSL made by naga's MSL backend.
#![allow(dead_code)] // each test binary uses a different part

pub mod compare;
pub mod fill;
pub mod naga_msl;
pub mod program;
pub mod roundtrip;
pub mod tally;
pub mod tint;
pub mod translated;
pub mod wgsl_run;
