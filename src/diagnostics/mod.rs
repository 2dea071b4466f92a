//! Diagnostics in the compiler convention: `FILE:LINE:COL: error: MESSAGE`,
//! followed by the source line and a caret under the offending text.

mod code;
mod human;
pub mod input;
mod json;
pub mod suggest;

pub use code::Code;
pub use human::Style;

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
    /// The stable code, chosen where the diagnostic is made
    /// (docs/DIAGNOSTICS.md).
    pub code: Code,
}

impl Diagnostic {
    /// A diagnostic of kind `code` and `severity` pointing at `place`.
    pub fn new(severity: Severity, code: Code, message: impl Into<String>, place: Place) -> Self {
        debug_assert_eq!(
            code.is_warning(),
            severity == Severity::Warning,
            "a {severity} made with code {code}: errors have `E` codes, warnings `W` codes"
        );
        Diagnostic {
            severity,
            message: message.into(),
            place,
            notes: Vec::new(),
            code,
        }
    }

    /// An error of kind `code` at `span`.
    pub fn error(code: Code, message: impl Into<String>, span: Span) -> Self {
        Self::new(Severity::Error, code, message, Place::Unit(span))
    }

    /// An error of kind `code` at a place in an original file (used before
    /// the translation unit exists, by the preprocessor).
    pub fn error_in_file(code: Code, message: impl Into<String>, location: Location) -> Self {
        Self::new(Severity::Error, code, message, Place::File(location))
    }

    /// A warning of kind `code` at `span`.
    pub fn warning(code: Code, message: impl Into<String>, span: Span) -> Self {
        Self::new(Severity::Warning, code, message, Place::Unit(span))
    }

    /// A warning of kind `code` at a place in an original file.
    pub fn warning_in_file(code: Code, message: impl Into<String>, location: Location) -> Self {
        Self::new(Severity::Warning, code, message, Place::File(location))
    }

    /// An error of kind `code` with no location (e.g. a file that cannot be
    /// read).
    pub fn unlocated(code: Code, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, message, Place::None)
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

    /// Renders the diagnostic in the classic form, without colour or
    /// code: `FILE:LINE:COL: severity: message`, then the source line and
    /// a caret line, then notes.
    pub fn render(&self, map: &SourceMap) -> String {
        human::render(self, map, Style::Plain, false)
    }

    /// Renders the diagnostic as the command line shows it: in `style`,
    /// and with its code after the message (`... [E0301]`).
    pub fn render_styled(&self, map: &SourceMap, style: Style) -> String {
        human::render(self, map, style, true)
    }

    /// The diagnostic as one line of JSON (`--error-format json`; fields:
    /// docs/DIAGNOSTICS.md).
    pub fn to_json(&self, map: &SourceMap) -> String {
        json::render(self, map)
    }

    /// Replaces the code.
    pub fn with_code(mut self, code: Code) -> Self {
        self.code = code;
        self
    }

    /// The diagnostic's code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// Makes a warning an error (`-Werror`), saying so in a note.
    pub fn promote_to_error(mut self) -> Self {
        if self.severity == Severity::Warning {
            self.severity = Severity::Error;
            self.notes
                .push("this warning is an error because of `-Werror`".into());
        }
        self
    }
}

/// How diagnostics are written (`--error-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// The compiler convention with source excerpts.
    #[default]
    Human,
    /// One JSON object per line.
    Json,
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

    /// Renders all of them in `format` (and, for humans, `style`).
    pub fn render_as(&self, map: &SourceMap, format: Format, style: Style) -> String {
        match format {
            Format::Human => self.0.iter().map(|d| d.render_styled(map, style)).collect(),
            Format::Json => self.0.iter().map(|d| d.to_json(map) + "\n").collect(),
        }
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
        let (shown, caret) = super::human::excerpt(&line, 5001, 1);
        assert!(
            shown.starts_with("...") && shown.ends_with("..."),
            "{shown}"
        );
        assert!(shown.chars().count() <= super::human::EXCERPT_CHARS + 6);
        let at = caret.find('^').unwrap();
        assert_eq!(shown.chars().nth(at), Some('X'), "{shown}\n{caret}");
        // Short lines are shown whole.
        let (shown, caret) = super::human::excerpt("int x = y;", 9, 1);
        assert_eq!(
            (shown.as_str(), caret.as_str()),
            ("int x = y;", "        ^")
        );
        // Near the end of a long line the window ends there, without `...`.
        let (shown, caret) = super::human::excerpt(&line, 10001, 1);
        assert!(shown.starts_with("...") && !shown.ends_with("..."));
        assert_eq!(shown.chars().nth(caret.find('^').unwrap()), Some('b'));
    }

    #[test]
    fn renders_file_line_col_and_caret() {
        let mut map = SourceMap::new();
        map.add_file("k.metal", "kernel void f() {\n  foo = 1;\n}\n");
        let d = Diagnostic::error(
            Code::UndeclaredIdentifier,
            "use of undeclared identifier `foo`",
            Span::new(20, 23),
        );
        let text = d.render(&map);
        assert!(
            text.starts_with("k.metal:2:3: error: use of undeclared identifier `foo`\n"),
            "{text}"
        );
        assert!(text.contains("2 |   foo = 1;\n  |   ^^^\n"), "{text}");
        // The command line's form adds the code; colour only when asked.
        let plain = d.render_styled(&map, Style::Plain);
        assert!(
            plain.starts_with("k.metal:2:3: error: use of undeclared identifier `foo` [E0301]\n")
        );
        let coloured = d.render_styled(&map, Style::Color);
        assert!(coloured.contains("\x1b[1;31merror:\x1b[0m") && coloured.contains("\x1b[1;32m"));
    }

    #[test]
    fn control_characters_are_shown_as_replacement_characters() {
        let mut map = SourceMap::new();
        map.add_file("k.metal", "int a;\0 int b;\n");
        let text = Diagnostic::error(Code::NulByte, "NUL", Span::new(6, 7)).render(&map);
        assert!(
            text.contains("1 | int a;\u{FFFD} int b;\n  |       ^\n"),
            "{text:?}"
        );
    }
}
