//! Diagnostics in the compiler convention: `FILE:LINE:COL: error: MESSAGE`,
//! followed by the source line and a caret under the offending text.

use crate::source_map::{Location, SourceMap, Span};
use std::fmt;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The input cannot be translated.
    Error,
    /// Translated, but something was approximated or assumed.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// What a diagnostic points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// Nowhere in particular (an unreadable file, a bad option).
    None,
    /// A span of the preprocessed translation unit.
    Unit(Span),
    /// A range of an original file.
    File(Location),
}

/// One message for the user, located in the translation unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The message, one line, starting lower case (rustc/clang style).
    pub message: String,
    /// Where it points.
    pub place: Place,
    /// Extra `note:` lines.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(message: impl Into<String>, span: Span) -> Self {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            place: Place::Unit(span),
            notes: Vec::new(),
        }
    }

    /// An error at a place in an original file (used before the translation
    /// unit exists, by the preprocessor).
    pub fn error_in_file(message: impl Into<String>, location: Location) -> Self {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            place: Place::File(location),
            notes: Vec::new(),
        }
    }

    /// A warning at `span`.
    pub fn warning(message: impl Into<String>, span: Span) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Self::error(message, span)
        }
    }

    /// An error with no location (e.g. a file that cannot be read).
    pub fn unlocated(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            place: Place::None,
            notes: Vec::new(),
        }
    }

    /// Adds a `note:` line.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Where the user wrote the text this diagnostic is about.
    pub fn location(&self, map: &SourceMap) -> Option<Location> {
        match &self.place {
            Place::None => None,
            Place::Unit(span) => map.locate(*span),
            Place::File(loc) => Some(loc.clone()),
        }
    }

    /// Renders the diagnostic: `FILE:LINE:COL: severity: message`, then the
    /// source line and a caret line, then notes.
    pub fn render(&self, map: &SourceMap) -> String {
        let mut out = String::new();
        match self.location(map) {
            Some(loc) => {
                let file = map.file(loc.file);
                let (line, col) = file.line_col(loc.range.start);
                out += &format!(
                    "{}:{}:{}: {}: {}\n",
                    file.name, line, col, self.severity, self.message
                );
                let text = file.line_text(line);
                let gutter = line.to_string();
                let pad = " ".repeat(gutter.len());
                let (shown, caret) = excerpt(text, col, loc.range.len());
                out += &format!("{gutter} | {shown}\n");
                out += &format!("{pad} | {caret}\n");
            }
            None => out += &format!("msl2wgsl: {}: {}\n", self.severity, self.message),
        }
        for note in &self.notes {
            out += &format!("note: {note}\n");
        }
        out
    }
}

/// Characters of a source line shown around the caret: a generated or
/// minified line can be megabytes long, and a diagnostic must stay readable.
const EXCERPT_CHARS: usize = 120;

/// The part of `text` to show for a span of `len` bytes at 1-based column
/// `col`, and the caret line under it. Lines longer than [`EXCERPT_CHARS`]
/// are cut to a window around the column, with `...` where text was left
/// out, as rustc does.
fn excerpt(text: &str, col: usize, len: usize) -> (String, String) {
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
    let window: String = chars[start..end].iter().collect();
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

/// The diagnostics of one translation, in the order found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// True when at least one is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }

    /// Renders all of them, in order.
    pub fn render(&self, map: &SourceMap) -> String {
        self.0.iter().map(|d| d.render(map)).collect()
    }

    /// Appends one.
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    /// The errors only.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| d.severity == Severity::Error)
    }

    /// The warnings only.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| d.severity == Severity::Warning)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_around_the_caret() {
        let line = format!("{}X{}", "a".repeat(5000), "b".repeat(5000));
        let (shown, caret) = super::excerpt(&line, 5001, 1);
        assert!(
            shown.starts_with("...") && shown.ends_with("..."),
            "{shown}"
        );
        assert!(shown.chars().count() <= super::EXCERPT_CHARS + 6);
        let at = caret.find('^').unwrap();
        assert_eq!(shown.chars().nth(at), Some('X'), "{shown}\n{caret}");
        // Short lines are shown whole.
        let (shown, caret) = super::excerpt("int x = y;", 9, 1);
        assert_eq!(
            (shown.as_str(), caret.as_str()),
            ("int x = y;", "        ^")
        );
        // Near the end of a long line the window ends there, without `...`.
        let (shown, caret) = super::excerpt(&line, 10001, 1);
        assert!(shown.starts_with("...") && !shown.ends_with("..."));
        assert_eq!(shown.chars().nth(caret.find('^').unwrap()), Some('b'));
    }

    #[test]
    fn renders_file_line_col_and_caret() {
        let mut map = SourceMap::new();
        map.add_file("k.metal", "kernel void f() {\n  foo = 1;\n}\n");
        let d = Diagnostic::error("use of undeclared identifier `foo`", Span::new(20, 23));
        let text = d.render(&map);
        assert!(
            text.starts_with("k.metal:2:3: error: use of undeclared identifier `foo`\n"),
            "{text}"
        );
        assert!(text.contains("2 |   foo = 1;\n  |   ^^^\n"), "{text}");
    }
}
