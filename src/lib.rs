//! msl2wgsl: Metal Shading Language → WGSL.
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

pub use library::{Failure, Library, Options, Target};
