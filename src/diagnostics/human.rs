//! The human format: `FILE:LINE:COL: error: MESSAGE [CODE]`, the source
//! line, a caret line, then `note:` lines; coloured like clang's when
//! asked to.

use super::{Diagnostic, Severity};
use crate::source_map::SourceMap;

/// Whether to colour the output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    /// No escape sequences (files, pipes, `NO_COLOR`).
    #[default]
    Plain,
    /// ANSI colours as clang uses them: bold location and message, red
    /// errors, magenta warnings, a green caret.
    Color,
}

/// ANSI escape sequences.
mod ansi {
    pub const BOLD: &str = "\x1b[1m";
    pub const RED: &str = "\x1b[1;31m";
    pub const MAGENTA: &str = "\x1b[1;35m";
    pub const GREEN: &str = "\x1b[1;32m";
    pub const CYAN: &str = "\x1b[1;36m";
    pub const RESET: &str = "\x1b[0m";
}

impl Style {
    /// `text` wrapped in `escape` ... reset, or as is without colour.
    fn paint(self, escape: &str, text: &str) -> String {
        match self {
            Style::Plain => text.to_string(),
            Style::Color => format!("{escape}{text}{}", ansi::RESET),
        }
    }
}

/// Renders one diagnostic, with its code after the message if `with_code`.
pub(super) fn render(d: &Diagnostic, map: &SourceMap, style: Style, with_code: bool) -> String {
    let severity = match d.severity {
        Severity::Error => style.paint(ansi::RED, "error:"),
        Severity::Warning => style.paint(ansi::MAGENTA, "warning:"),
    };
    let headline = match with_code {
        true => format!("{} [{}]", d.message, d.code()),
        false => d.message.clone(),
    };
    let headline = style.paint(ansi::BOLD, &headline);
    let mut out = String::new();
    let mut notes: Vec<String> = Vec::new();
    match d.location(map) {
        Some(loc) => {
            let file = map.file(loc.file);
            let (line, col) = file.line_col(loc.range.start);
            // `#line` sets the shown name and line; the excerpt is physical.
            let (name, shown) = file.presumed_line(loc.range.start);
            let place = style.paint(ansi::BOLD, &format!("{name}:{shown}:{col}:"));
            out += &format!("{place} {severity} {headline}\n");
            let text = file.line_text(line);
            let gutter = line.to_string();
            let pad = " ".repeat(gutter.len());
            let (shown, caret) = excerpt(text, col, loc.range.len());
            out += &format!("{gutter} | {shown}\n");
            out += &format!("{pad} | {}\n", style.paint(ansi::GREEN, &caret));
            // Errors found after preprocessing in an included file get the
            // include chain the preprocessor gives its own errors.
            notes.extend(
                map.include_chain(loc.file)
                    .iter()
                    .map(|l| {
                        let f = map.file(l.file);
                        format!(
                            "in file included from {}:{}",
                            f.name,
                            f.line_col(l.range.start).0
                        )
                    })
                    .filter(|n| !d.notes.contains(n)),
            );
        }
        None => out += &format!("msl2wgsl: {severity} {headline}\n"),
    }
    for note in d.notes.iter().chain(&notes) {
        out += &format!("{} {note}\n", style.paint(ansi::CYAN, "note:"));
    }
    out
}

/// Characters of a source line shown around the caret: a generated or
/// minified line can be megabytes long, and a diagnostic must stay readable.
pub(super) const EXCERPT_CHARS: usize = 120;

/// The part of `text` to show for a span of `len` bytes at 1-based column
/// `col`, and the caret line under it. Lines longer than [`EXCERPT_CHARS`]
/// are cut to a window around the column, with `...` where text was left
/// out, as rustc does.
pub(super) fn excerpt(text: &str, col: usize, len: usize) -> (String, String) {
    let chars: Vec<char> = text.chars().collect();
    let at = (col - 1).min(chars.len());
    let (start, end) = if chars.len() <= EXCERPT_CHARS {
        (0, chars.len())
    } else {
        let start = at.saturating_sub(EXCERPT_CHARS / 2);
        let end = (start + EXCERPT_CHARS).min(chars.len());
        (end.saturating_sub(EXCERPT_CHARS).min(start), end)
    };
    let before = if start > 0 { "..." } else { "" };
    let after = if end < chars.len() { "..." } else { "" };
    // Control characters (a NUL, an escape) would corrupt the terminal or
    // hide the caret's target: shown as U+FFFD, one column each.
    let window: String = chars[start..end]
        .iter()
        .map(|&c| {
            if c.is_control() && c != '\t' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect();
    let indent: String = before
        .chars()
        .chain(chars[start..at].iter().copied())
        // Tabs stay tabs so that the caret lines up however they render.
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let width = len.clamp(1, (end + 1).saturating_sub(at).max(1));
    (
        format!("{before}{window}{after}"),
        format!("{indent}{}", "^".repeat(width)),
    )
}
