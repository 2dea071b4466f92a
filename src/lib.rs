//! msl2wgsl: Metal Shading Language → WGSL.
pub mod diagnostics;
pub mod layout;
pub mod lower;
pub mod types;
pub mod syntax;
pub mod library;
pub mod preprocess;
pub mod sema;
pub mod reflect;
#[cfg(feature = "runner")]
pub mod runner;
pub mod source_map;

pub use library::{Failure, Library, Options, Target};
