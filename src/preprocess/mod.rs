//! The C preprocessor MSL sources go through before parsing.
//!
//! A first cut of C's preprocessor, enough for shader sources:
//!
//! - comments (`//`, `/* */`) and backslash-newline splices;
//! - `#include "file"` (the including file's folder, then `-I` folders) and
//!   `#include <file>` (`-I` folders), `#pragma once`; the Metal standard
//!   headers (`<metal_stdlib>`, any `<metal_*>`, `<simd/simd.h>`) include
//!   nothing, since the compiler knows the library;
//! - object-like macros (`#define`, `#undef`, `##`), `__LINE__`, `__FILE__`,
//!   the predefined `__METAL_VERSION__` (320), `__METAL__` and
//!   `__METAL_MACOS__`, then the `-D` options;
//! - `#if`, `#ifdef`, `#ifndef`, `#elif`, `#elifdef`, `#elifndef`, `#else`,
//!   `#endif` with C integer expressions, `defined` and `__has_include`;
//! - `#error`, `#warning`; `#line` and other pragmas are ignored.
//!
//! Function-like macros are refused with an error for now.
//!
//! The output keeps the line structure: a directive, a skipped line or a
//! comment leaves its newlines behind. Every output byte's origin goes into
//! the [`SourceMap`], so later diagnostics point at what the user wrote.
//!
//! The parts: `lexer` (logical lines, tokens), `macros` (table, expansion),
//! `expr` (`#if` arithmetic), `engine` (the file loop and output),
//! `directive` and `include` (the directives).

mod directive;
mod engine;
mod expr;
mod include;
mod lexer;
mod macros;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_errors;

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
/// output byte is recorded with [`SourceMap::push_segment`]. Warnings
/// (`#warning`, macro redefinitions) are dropped; use
/// [`preprocess_with_warnings`] to get them.
pub fn preprocess(
    map: &mut SourceMap,
    main: FileId,
    options: &Options,
) -> Result<String, Vec<Diagnostic>> {
    preprocess_with_warnings(map, main, options).map(|(text, _)| text)
}

/// Like [`preprocess`], but also returns the warnings.
///
/// On failure the list holds every error and warning found, in order (at
/// least one is an error); nothing is recorded in the map's segments then.
pub fn preprocess_with_warnings(
    map: &mut SourceMap,
    main: FileId,
    options: &Options,
) -> Result<(String, Vec<Diagnostic>), Vec<Diagnostic>> {
    engine::Engine::new(options).run(map, main)
}
