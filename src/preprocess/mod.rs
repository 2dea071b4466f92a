//! The C preprocessor MSL sources go through before parsing.
//!
//! C's preprocessor, as the Metal compiler runs it:
//!
//! - comments (`//`, `/* */`) and backslash-newline splices;
//! - `#include "file"` (the including file's folder, then `-I` folders) and
//!   `#include <file>` (`-I` folders), `#pragma once`; clang's `#import`
//!   (a file at most once per translation unit), `#include_next` and
//!   forced includes ([`Options::forced_includes`], `-include FILE`); the
//!   Metal standard headers (`<metal_stdlib>`, any `<metal_*>`) include
//!   nothing, since the compiler knows the library, and the Apple SDK
//!   headers shaders include (`<TargetConditionals.h>`, `<simd/simd.h>`)
//!   are provided where no file of that name is found (`sdk`);
//! - object-like and function-like macros (`#define`, `#undef`, `-D`):
//!   variadic ones with `__VA_ARGS__`, `__VA_OPT__` and GNU's `, ##
//!   __VA_ARGS__`, `#` and `##`, arguments on several lines, C's rescanning
//!   rules; `__LINE__`, `__FILE__`, `__COUNTER__`, and the predefined
//!   `__METAL_VERSION__` (320), `__METAL__`, `__METAL_MACOS__` or
//!   `__METAL_IOS__` ([`Platform`]) and `<metal_stdlib>`'s `METAL_FUNC`;
//!   directives between the lines of a macro's arguments are run there,
//!   as clang does;
//! - `#if`, `#ifdef`, `#ifndef`, `#elif`, `#elifdef`, `#elifndef`, `#else`,
//!   `#endif` with C integer expressions, `defined`, `__has_include`, and
//!   the other `__has_*` tests (all 0);
//! - `#error`, `#warning`, `#line` (changes `__LINE__` and `__FILE__`),
//!   `#pragma once`, `push_macro`, `pop_macro`, `message`; other pragmas are
//!   ignored (with a warning when clang would not know them); `_Pragma("...")`
//!   is a `#pragma`.
//!
//! Errors in included files carry "in file included from" notes, errors in
//! macro expansions "in expansion of macro" notes. Include depth, macro
//! nesting and the size of one expansion are limited, with diagnostics.
//!
//! The output keeps the line structure: a directive, a skipped line or a
//! comment leaves its newlines behind; the newlines of a macro invocation
//! spread over several lines follow its expansion. Every output byte's
//! origin goes into the [`SourceMap`], so later diagnostics point at what
//! the user wrote; an expansion maps to the whole invocation.
//!
//! The parts: `lexer` (logical lines, tokens), `macros` (the table),
//! `define` (parsing definitions), `subst` (arguments, `#`, `##`), `expand`
//! (rescanning), `text` (code lines), `expr` (`#if` arithmetic), `engine`
//! (the file loop and output), `directive`, `include` and `control` (the
//! directives), `sdk` (the provided SDK headers).

mod control;
mod define;
mod directive;
mod engine;
mod expand;
mod expr;
mod include;
mod lexer;
mod macros;
pub(crate) mod metal_stdlib;
mod performance_primitives;
mod sdk;
mod subst;
pub(crate) mod swiftui;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_errors;
#[cfg(test)]
mod tests_macros;
#[cfg(test)]
mod tests_sdk;
mod text;

use crate::diagnostics::Diagnostic;
use crate::source_map::{FileId, SourceMap};
use std::path::PathBuf;

/// What the command line (`-D`, `-I`, `-include`) or the API passes to the
/// preprocessor.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `-D NAME[=VALUE]`, in order; a missing value means `1`.
    pub defines: Vec<(String, Option<String>)>,
    /// `-I DIR`, searched in order for `#include "..."` and `<...>`.
    pub include_dirs: Vec<PathBuf>,
    /// `-include FILE`, in order: each is read as if `#include "FILE"`
    /// stood before the first line of the main file (after the `-D`
    /// definitions), so it is looked up in the current folder first, then
    /// in the `-I` folders. A file that is not found is an error.
    pub forced_includes: Vec<PathBuf>,
    /// In-memory headers, `(name, text)`: `#include "name"` (or `<name>`)
    /// reads `text` when no file of that name is found next to the
    /// including file or in the `-I` folders. For hosts without a file
    /// system (the WebAssembly playground's header tab).
    pub virtual_files: Vec<(String, String)>,
    /// Which of `__METAL_MACOS__` and `__METAL_IOS__` is defined.
    pub platform: Platform,
}

/// The platform a shader is compiled for, as the Metal compiler's predefined
/// macros tell it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Platform {
    /// macOS: `__METAL_MACOS__` is 1.
    #[default]
    MacOs,
    /// iOS (and iPadOS): `__METAL_IOS__` is 1.
    Ios,
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
