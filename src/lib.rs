//! msl2wgsl: Metal Shading Language → WGSL, proven on GPUs through wgpu.
//!
//! Stages, each using only those below it: `runner` (wgpu, behind the
//! default `runner` feature) → [`library`] → [`lower`] (into a
//! `naga::Module`) → [`reflect`] (the `MTLArgument`-style model lowering
//! fills in) → [`layout`] (Metal's sizes and offsets) → [`sema`] →
//! [`syntax`] → [`preprocess`] → [`types`], [`diagnostics`], [`source_map`].
//! [`build`] translates a folder of shaders in a build script.
#![forbid(unsafe_code)]
pub mod build;
pub mod diagnostics;
pub mod layout;
pub mod library;
pub mod lower;
pub mod preprocess;
pub mod reflect;
#[cfg(feature = "runner")]
pub mod runner;
pub mod sema;
pub mod source_map;
pub mod stage_in;
pub mod syntax;
pub mod types;

/// The naga version the IR of [`Library::module`] is built with.
pub use naga;
/// The wgpu version the runner is built with: a host that uses
/// `msl2wgsl::wgpu` needs no version of its own to keep in step.
#[cfg(feature = "runner")]
pub use wgpu;

#[cfg(not(target_arch = "wasm32"))]
pub use library::TRANSLATION_STACK;
pub use library::{
    decode_source, ByteStores, ConstantKey, ConstantValue, ErrorLimit, Failure,
    FunctionConstantValues, Library, Options, SimdGroups, Target, UniformLayout,
};
