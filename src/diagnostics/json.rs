//! The JSON format (`--error-format json`): one object per diagnostic, on
//! one line, for editors and scripts. Fields: docs/DIAGNOSTICS.md.

use super::Diagnostic;
use crate::source_map::{Location, SourceMap};
use serde_json::{json, Map, Value};

/// One diagnostic as a line of JSON (no newline).
pub(super) fn render(d: &Diagnostic, map: &SourceMap) -> String {
    let mut object = Map::new();
    object.insert("severity".into(), json!(d.severity.to_string()));
    object.insert("code".into(), json!(d.code().as_str()));
    object.insert("message".into(), json!(d.message));
    let location = d.location(map);
    let chain = location
        .as_ref()
        .map(|l| map.include_chain(l.file))
        .unwrap_or_default();
    let chain_notes: Vec<String> = chain.iter().map(|l| include_note(map, l)).collect();
    match &location {
        Some(loc) => object.extend(place(map, loc)),
        None => {
            for key in ["file", "line", "column", "endLine", "endColumn", "span"] {
                object.insert(key.into(), Value::Null);
            }
        }
    }
    // The include chain has fields of its own; the preprocessor's notes
    // saying the same are not repeated.
    let notes: Vec<Value> = d
        .notes
        .iter()
        .filter(|n| !chain_notes.contains(n))
        .map(|n| json!(n))
        .collect();
    object.insert("notes".into(), Value::Array(notes));
    if !chain.is_empty() {
        let included: Vec<Value> = chain.iter().map(|l| Value::Object(place(map, l))).collect();
        object.insert("includedFrom".into(), Value::Array(included));
    }
    Value::Object(object).to_string()
}

/// `file`, `line`, `column`, `endLine`, `endColumn` (1-based; the end is
/// just past the last byte) and `span` (byte offsets in the file).
fn place(map: &SourceMap, loc: &Location) -> Map<String, Value> {
    let file = map.file(loc.file);
    let (line, column) = file.line_col(loc.range.start);
    let (end_line, end_column) = file.line_col(loc.range.end.max(loc.range.start));
    let mut object = Map::new();
    object.insert("file".into(), json!(file.name));
    object.insert("line".into(), json!(line));
    object.insert("column".into(), json!(column));
    object.insert("endLine".into(), json!(end_line));
    object.insert("endColumn".into(), json!(end_column));
    object.insert(
        "span".into(),
        json!({ "start": loc.range.start, "end": loc.range.end }),
    );
    object
}

/// The preprocessor's note for one `#include` of a chain.
fn include_note(map: &SourceMap, loc: &Location) -> String {
    let f = map.file(loc.file);
    format!(
        "in file included from {}:{}",
        f.name,
        f.line_col(loc.range.start).0
    )
}

#[cfg(test)]
mod tests {
    use super::super::{Code, Diagnostic};
    use crate::source_map::{Location, SourceMap, Span};
    use serde_json::Value;

    #[test]
    fn located_diagnostic_has_every_field() {
        let mut map = SourceMap::new();
        map.add_file("k.metal", "kernel void f() {\n  foo = 1;\n}\n");
        let d = Diagnostic::error(
            Code::UndeclaredIdentifier,
            "use of undeclared identifier `foo`",
            Span::new(20, 23),
        )
        .with_note("did you mean `for`?");
        let v: Value = serde_json::from_str(&d.to_json(&map)).unwrap();
        assert_eq!(v["severity"], "error");
        assert_eq!(v["code"], "E0301");
        assert_eq!(v["file"], "k.metal");
        assert_eq!(
            (v["line"].as_u64(), v["column"].as_u64()),
            (Some(2), Some(3))
        );
        assert_eq!(
            (v["endLine"].as_u64(), v["endColumn"].as_u64()),
            (Some(2), Some(6))
        );
        assert_eq!(
            (v["span"]["start"].as_u64(), v["span"]["end"].as_u64()),
            (Some(20), Some(23))
        );
        assert_eq!(v["notes"][0], "did you mean `for`?");
        assert!(v.get("includedFrom").is_none());
    }

    #[test]
    fn include_chain_and_unlocated() {
        let mut map = SourceMap::new();
        let main = map.add_file("m.metal", "\n#include \"h.h\"\n");
        let header = map.add_file("h.h", "bad\n");
        map.set_included_from(
            header,
            Location {
                file: main,
                range: 1..9,
            },
        );
        let d = Diagnostic::error_in_file(
            Code::UnknownType,
            "oops",
            Location {
                file: header,
                range: 0..3,
            },
        )
        .with_note("in file included from m.metal:2");
        let v: Value = serde_json::from_str(&d.to_json(&map)).unwrap();
        assert_eq!(v["file"], "h.h");
        assert_eq!(v["notes"].as_array().map(Vec::len), Some(0));
        assert_eq!(v["includedFrom"][0]["file"], "m.metal");
        assert_eq!(v["includedFrom"][0]["line"], 2);
        let d = Diagnostic::unlocated(Code::Unreadable, "x");
        let v: Value = serde_json::from_str(&d.to_json(&map)).unwrap();
        assert!(v["file"].is_null() && v["span"].is_null());
        assert_eq!(v["code"], "E0001");
    }
}
