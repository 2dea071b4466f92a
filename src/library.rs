//! The library API: runs every stage on one MSL source and keeps the result,
//! like an `MTLLibrary` holding `MTLFunction`s.

use crate::diagnostics::Diagnostics;
use crate::preprocess;
use crate::reflect::FunctionReflection;
use crate::source_map::SourceMap;
use std::path::Path;

/// Which WGSL dialect to emit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// Only WGSL that browsers accept.
    #[default]
    WebGpu,
    /// May use wgpu's native extensions.
    Wgpu,
}

/// Translation options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `-D`/`-I`.
    pub preprocess: preprocess::Options,
    /// Only these functions (all kernel/vertex/fragment functions when empty).
    pub entries: Vec<String>,
    /// `@workgroup_size` for every kernel; `None` picks the documented default.
    pub threadgroup_size: Option<[u32; 3]>,
    /// WGSL dialect.
    pub target: Target,
}

/// A translation that failed: the diagnostics and the files they point into.
#[derive(Debug)]
pub struct Failure {
    /// Errors (and any warnings found before them).
    pub diagnostics: Diagnostics,
    /// The files read.
    pub source_map: SourceMap,
}

impl Failure {
    /// The diagnostics rendered in the compiler convention.
    pub fn render(&self) -> String {
        self.diagnostics.render(&self.source_map)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Failure {}

/// A translated MSL source: the WGSL module and each function's reflection.
#[derive(Debug)]
pub struct Library {
    wgsl: String,
    functions: Vec<FunctionReflection>,
    warnings: Diagnostics,
    source_map: SourceMap,
}

impl Library {
    /// Translates `source`; `name` is the file name used in diagnostics.
    pub fn from_source(name: &str, source: &str, options: &Options) -> Result<Library, Failure> {
        let _ = (name, source, options);
        unimplemented!("in progress")
    }

    /// Reads and translates a file.
    pub fn from_file(path: &Path, options: &Options) -> Result<Library, Failure> {
        let _ = (path, options);
        unimplemented!("in progress")
    }

    /// The WGSL module with every translated function.
    pub fn wgsl(&self) -> &str {
        &self.wgsl
    }

    /// Every translated function, in source order.
    pub fn functions(&self) -> &[FunctionReflection] {
        &self.functions
    }

    /// The function named `name` (its MSL name).
    pub fn function(&self, name: &str) -> Option<&FunctionReflection> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// Warnings, rendered in the compiler convention (empty if none).
    pub fn warnings(&self) -> String {
        self.warnings.render(&self.source_map)
    }
}
