//! msl2wgsl: Metal Shading Language → WGSL.
pub mod diagnostics;
pub mod syntax;
pub mod library;
pub mod preprocess;
pub mod reflect;
pub mod source_map;

pub use library::{Failure, Library, Options, Target};
