//! Checks on the characters of the input itself.

use super::{Code, Diagnostic};
use crate::source_map::Span;

/// An error at the first NUL byte of the translation unit, if any: MSL
/// source is text, and a NUL usually means a binary file or a corrupted
/// one was given (clang ignores them with a warning; a translator whose
/// output must match Metal's meaning refuses them instead).
pub fn nul_byte(text: &str) -> Option<Diagnostic> {
    let at = text.find('\0')?;
    Some(Diagnostic::error(
        Code::NulByte,
        "NUL byte (0x00) in source: MSL source files are text",
        Span::new(at, at + 1),
    ))
}
