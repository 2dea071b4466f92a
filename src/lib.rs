//! msl2wgsl: Metal Shading Language → WGSL, proven on GPUs through wgpu.
//!
//! Stages, each using only those below it: `runner` (wgpu, behind the
//! default `runner` feature) → [`library`] → [`lower`] (into a
//! `naga::Module`) → [`reflect`] (the `MTLArgument`-style model lowering
//! fills in) → [`layout`] (Metal's sizes and offsets) → [`sema`] →
//! [`syntax`] → [`preprocess`] → [`types`], [`diagnostics`], [`source_map`].
#![forbid(unsafe_code)]
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
pub mod syntax;
pub mod types;

pub use library::{decode_source, Failure, Library, Options, Target};
