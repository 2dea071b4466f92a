//! The C preprocessor MSL sources go through before parsing.
//! (Stub: replaced by the real implementation.)

use crate::diagnostics::Diagnostic;
use crate::source_map::{FileId, SourceMap};
use std::path::PathBuf;

/// What the command line (`-D`, `-I`) or the API passes to the preprocessor.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `-D NAME[=VALUE]`, in order; a missing value means `1`.
    pub defines: Vec<(String, Option<String>)>,
    /// `-I DIR`, searched in order for `#include "..."` and `<...>`.
    pub include_dirs: Vec<PathBuf>,
}

/// Preprocesses `main` (already in `map`) into one translation unit.
///
/// Files that `#include` reads are added to `map`, and the origin of every
/// output byte is recorded with [`SourceMap::push_segment`].
pub fn preprocess(
    map: &mut SourceMap,
    main: FileId,
    _options: &Options,
) -> Result<String, Vec<Diagnostic>> {
    let text = map.file(main).text.clone();
    map.push_segment(0..text.len(), main, 0..text.len());
    Ok(text)
}
