//! msl2wgsl: Metal Shading Language → WGSL.
pub mod diagnostics;
pub mod preprocess;
pub mod source_map;
