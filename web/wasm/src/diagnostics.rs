//! Diagnostics as structured objects the page can place: severity, message,
//! 1-based line and column (and end), notes, and the compiler's rendering.

use msl2wgsl::diagnostics::{Code, Diagnostic, Severity};
use msl2wgsl::source_map::SourceMap;
use serde::Serialize;

/// One diagnostic, as JavaScript sees it. Columns count UTF-16 code units
/// (what JavaScript string indices count), 1-based; `rendered` keeps the
/// compiler's own text (byte columns, as clang prints them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsDiagnostic {
    /// `"error"` or `"warning"`.
    pub severity: &'static str,
    /// The message, one line.
    pub message: String,
    /// The stable diagnostic code (`E0301`, `W0401`; `docs/DIAGNOSTICS.md`).
    pub code: Option<String>,
    /// The file it points into (the source's name, or an included file); none
    /// when unlocated.
    pub file: Option<String>,
    /// 1-based line of the start; none when unlocated.
    pub line: Option<usize>,
    /// 1-based column of the start.
    pub column: Option<usize>,
    /// 1-based line of the end (exclusive position), when the extent is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<usize>,
    /// 1-based column of the end (exclusive), when the extent is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<usize>,
    /// `note:` lines.
    pub notes: Vec<String>,
    /// `FILE:LINE:COL: severity: message`, the source excerpt and the notes.
    pub rendered: String,
}

fn severity_name(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// The note the page shows instead of the translator's first note of a
/// `W0406` (threadgroup length set at dispatch), which tells CLI, library
/// and runner users how to give the length: on the page it is a field.
const PAGE_THREADGROUP_MEMORY_NOTE: &str = "Metal sets the length at dispatch; WGSL fixes it at \
     translation: enter `N=BYTES` (N: the `[[threadgroup(N)]]` index) in this page's \
     Threadgroup memory field";

/// `d` with its host-specific notes (keyed by the diagnostic's code) as the
/// page words them.
fn for_the_page(d: &Diagnostic) -> Diagnostic {
    let mut d = d.clone();
    if d.code() == Code::ThreadgroupLengthAtDispatch && !d.notes.is_empty() {
        d.notes[0] = PAGE_THREADGROUP_MEMORY_NOTE.to_string();
    }
    d
}

/// A diagnostic of a failed translation, located through `map`.
pub fn from_diagnostic(d: &Diagnostic, map: &SourceMap) -> JsDiagnostic {
    let d = &for_the_page(d);
    let mut out = JsDiagnostic {
        severity: severity_name(d.severity),
        message: d.message.clone(),
        code: Some(d.code().as_str().to_string()),
        file: None,
        line: None,
        column: None,
        end_line: None,
        end_column: None,
        notes: d.notes.clone(),
        rendered: d.render(map),
    };
    if let Some(location) = d.location(map) {
        let file = map.file(location.file);
        let (line, column) = utf16_line_col(file, location.range.start);
        let (end_line, end_column) = utf16_line_col(file, location.range.end);
        out.file = Some(file.name.clone());
        out.line = Some(line);
        out.column = Some(column);
        out.end_line = Some(end_line);
        out.end_column = Some(end_column);
    }
    out
}

/// 1-based line and UTF-16 column of byte `offset` in `file`.
fn utf16_line_col(file: &msl2wgsl::source_map::SourceFile, offset: usize) -> (usize, usize) {
    let (line, byte_column) = file.line_col(offset);
    (line, utf16_column(file.line_text(line), byte_column))
}

/// The UTF-16 column of 1-based byte column `byte_column` of `line`.
fn utf16_column(line: &str, byte_column: usize) -> usize {
    let mut end = (byte_column - 1).min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].encode_utf16().count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_utf16_units() {
        // "é" is two bytes and one UTF-16 unit; "😀" four bytes and two units.
        assert_eq!(utf16_column("\u{e9}x", 3), 2);
        assert_eq!(utf16_column("\u{1f600}x", 5), 3);
        assert_eq!(utf16_column("ab", 9), 3);
    }

    #[test]
    fn the_threadgroup_length_note_names_the_page_field() {
        let mut map = SourceMap::new();
        map.add_file("k.metal", "int x;\n");
        let span = msl2wgsl::source_map::Span::new(0, 3);
        let mut d =
            Diagnostic::warning(Code::ThreadgroupLengthAtDispatch, "length not known", span);
        d.notes = vec![
            "pass `--threadgroup-memory 0=BYTES` to the CLI".into(),
            "second".into(),
        ];
        let js = from_diagnostic(&d, &map);
        assert!(
            js.notes[0].contains("Threadgroup memory field"),
            "{:?}",
            js.notes
        );
        assert!(
            !js.rendered.contains("--threadgroup-memory"),
            "{}",
            js.rendered
        );
        assert_eq!(js.notes[1], "second");
    }

    #[test]
    fn failure_diagnostics_carry_their_extent() {
        let mut map = SourceMap::new();
        map.add_file("k.metal", "int x;\nint y = ;\n");
        let d = Diagnostic::error(
            msl2wgsl::diagnostics::Code::Syntax,
            "expected an expression",
            msl2wgsl::source_map::Span::new(15, 16),
        );
        let js = from_diagnostic(&d, &map);
        assert_eq!((js.line, js.column), (Some(2), Some(9)));
        assert_eq!((js.end_line, js.end_column), (Some(2), Some(10)));
        assert_eq!(js.severity, "error");
        assert!(js
            .rendered
            .starts_with("k.metal:2:9: error: expected an expression"));
    }
}
