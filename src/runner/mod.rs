//! Runs translated kernels on a GPU through wgpu, with Metal's dispatch
//! semantics.
//!
//! The pieces:
//! - [`Gpu`]: one adapter, device and queue, chosen the way wgpu's own tools
//!   choose them (`WGPU_BACKEND`, `WGPU_ADAPTER_NAME`), with the adapter's full
//!   limits and every optional feature the translator may use.
//! - [`run_compute`]: binds raw buffers by Metal index, dispatches a kernel as
//!   `dispatchThreads` or `dispatchThreadgroups` would (see [`Dispatch`]), and
//!   reads every buffer back.
//! - [`run_kernel`]: translates an MSL source for the dispatch's threadgroup
//!   size (cached per source, entry and size), then runs it.
//! - [`conformance`]: declarative test cases (an MSL file plus a TOML file)
//!   and the `msl2wgsl test` driver.

mod compute;
pub mod conformance;
mod device;
mod interface;
mod resources;

pub use compute::{
    run_compute, run_compute_with_max_groups, run_kernel, translate_kernel, Dispatch,
};
pub use device::{Gpu, Translation};

use crate::Failure;
use std::fmt;

/// Everything that can stop a kernel from running, or its results from being
/// read back.
#[derive(Debug)]
pub enum RunError {
    /// No adapter was found at all (no driver, or `WGPU_BACKEND` excluded it).
    NoAdapter(String),
    /// `WGPU_ADAPTER_NAME` matched none of the adapters.
    AdapterNotFound {
        /// The requested (sub)string.
        wanted: String,
        /// Names of the adapters that exist.
        available: Vec<String>,
    },
    /// The adapter refused to create a device.
    RequestDevice(String),
    /// The kernel needs a wgpu feature the device lacks.
    MissingFeature {
        /// The feature as the reflection spells it (`"shader-f16"`).
        feature: String,
        /// [`Gpu::adapter_line`] of the device.
        adapter: String,
    },
    /// The reflection names a feature wgpu does not know.
    UnknownFeature(String),
    /// The MSL source did not translate.
    Translate(Box<Failure>),
    /// The translation has no function of that name.
    UnknownEntry(String),
    /// The function exists but is not a kernel.
    NotAKernel(String),
    /// The dispatch cannot run (bad size, over the device limits, ...).
    InvalidDispatch(String),
    /// An active buffer argument was given no bytes.
    MissingBuffer {
        /// The argument's name.
        name: String,
        /// Its Metal index.
        index: u32,
    },
    /// A buffer is shorter than the argument's type.
    BufferTooSmall {
        /// The argument's name.
        name: String,
        /// Its Metal index.
        index: u32,
        /// Bytes given.
        len: usize,
        /// Bytes needed.
        needed: u64,
    },
    /// A buffer is larger than the device can bind.
    BufferTooLarge {
        /// The argument's name.
        name: String,
        /// Its Metal index.
        index: u32,
        /// Bytes given (after padding).
        len: u64,
        /// The device's limit.
        limit: u64,
    },
    /// The WGSL and its reflection disagree, or the WGSL does not compile:
    /// a translator bug, or hand-written input that is wrong.
    Shader(String),
    /// The runner does not support this yet (textures, ...).
    Unsupported(String),
    /// wgpu reported an error while creating resources or running.
    Gpu(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::NoAdapter(why) => write!(f, "no GPU adapter found: {why}"),
            RunError::AdapterNotFound { wanted, available } => write!(
                f,
                "WGPU_ADAPTER_NAME={wanted:?} matches no adapter (available: {})",
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                }
            ),
            RunError::RequestDevice(why) => write!(f, "cannot create a device: {why}"),
            RunError::MissingFeature { feature, adapter } => write!(
                f,
                "the kernel needs the wgpu feature `{feature}`, which the device lacks ({adapter})"
            ),
            RunError::UnknownFeature(name) => write!(f, "unknown wgpu feature `{name}`"),
            RunError::Translate(failure) => write!(f, "{}", failure.render().trim_end()),
            RunError::UnknownEntry(name) => write!(f, "no function named `{name}`"),
            RunError::NotAKernel(name) => write!(f, "`{name}` is not a kernel function"),
            RunError::InvalidDispatch(why) => write!(f, "invalid dispatch: {why}"),
            RunError::MissingBuffer { name, index } => write!(
                f,
                "no buffer given for argument `{name}` [[buffer({index})]]"
            ),
            RunError::BufferTooSmall {
                name,
                index,
                len,
                needed,
            } => write!(
                f,
                "buffer for argument `{name}` [[buffer({index})]] has {len} bytes, \
                 but its type needs at least {needed}"
            ),
            RunError::BufferTooLarge {
                name,
                index,
                len,
                limit,
            } => write!(
                f,
                "buffer for argument `{name}` [[buffer({index})]] has {len} bytes, \
                 over the device's binding limit of {limit}"
            ),
            RunError::Shader(why) => write!(f, "shader: {why}"),
            RunError::Unsupported(what) => write!(f, "{what} is not supported yet"),
            RunError::Gpu(why) => write!(f, "GPU error: {why}"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<Failure> for RunError {
    fn from(failure: Failure) -> Self {
        RunError::Translate(Box::new(failure))
    }
}
