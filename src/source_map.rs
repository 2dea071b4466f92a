//! Source files and the map from the preprocessed translation unit back to them.
//!
//! Every later stage works on one preprocessed text (the *translation unit*) and
//! carries [`Span`]s into it. Diagnostics must point at the line the user wrote,
//! so the preprocessor records, for every piece of its output, where it came
//! from; [`SourceMap::locate`] turns a `Span` back into a file, line and column.

use std::ops::Range;

/// A byte range in the preprocessed translation unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The span covering `range`.
    pub fn new(start: usize, end: usize) -> Self {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The span as a `usize` range.
    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Identifies one file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// One source file as the user wrote it.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Name shown in diagnostics (the path as given, or `<stdin>`).
    pub name: String,
    /// The full text.
    pub text: String,
    line_starts: Vec<usize>,
    /// The `#include` that first read this file, for "in file included
    /// from" notes.
    included_from: Option<Location>,
    /// `#line` directives, in file order: from this byte offset on, line
    /// numbers shift by the delta and the file is shown under the name.
    line_marks: Vec<LineMark>,
}

/// What one `#line N ["name"]` directive changes.
#[derive(Debug, Clone)]
struct LineMark {
    from: usize,
    delta: i64,
    name: Option<String>,
}

impl SourceFile {
    fn new(name: String, text: String) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            name,
            text,
            line_starts,
            included_from: None,
            line_marks: Vec::new(),
        }
    }

    /// The file name and 1-based line diagnostics show for `offset`: the
    /// physical ones, or what the last `#line` directive before it says.
    pub fn presumed_line(&self, offset: usize) -> (&str, usize) {
        let line = self.line_col(offset).0;
        let Some(mark) = self.line_marks.iter().rev().find(|m| m.from <= offset) else {
            return (&self.name, line);
        };
        let name = self
            .line_marks
            .iter()
            .rev()
            .filter(|m| m.from <= offset)
            .find_map(|m| m.name.as_deref())
            .unwrap_or(&self.name);
        (name, (line as i64 + mark.delta).max(1) as usize)
    }

    /// 1-based line and column (columns count bytes, as clang does) of `offset`.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        (line + 1, offset - self.line_starts[line] + 1)
    }

    /// The text of 1-based line `line`, without its newline.
    pub fn line_text(&self, line: usize) -> &str {
        let start = self.line_starts[line - 1];
        let end = self
            .line_starts
            .get(line)
            .map(|e| e - 1)
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches('\r')
    }
}

/// A place in an original source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file.
    pub file: FileId,
    /// Byte range in that file.
    pub range: Range<usize>,
}

/// One piece of the translation unit and where it came from.
///
/// When `output` and `source` have the same length the bytes correspond one to
/// one (text copied from a file); otherwise the output is a macro expansion and
/// every byte of it maps to the whole `source` range (the macro's invocation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Range in the translation unit.
    pub output: Range<usize>,
    /// The file the text came from.
    pub file: FileId,
    /// Range in that file.
    pub source: Range<usize>,
}

/// A top-level macro expansion in the translation unit: diagnostics about
/// its text get an "expanded from macro" note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expansion {
    /// Range of the expansion in the translation unit.
    pub output: Range<usize>,
    /// The macro invoked.
    pub name: String,
    /// Where it was `#define`d (`FILE:LINE:COL`); `None` for `-D` and
    /// predefined macros.
    pub defined_at: Option<String>,
}

impl Expansion {
    /// The note for a diagnostic inside this expansion, as clang words it
    /// (clang points the note at the definition; here it names it).
    pub fn note(&self) -> String {
        match &self.defined_at {
            Some(at) => format!("expanded from macro `{}` defined at {at}", self.name),
            None => format!("expanded from macro `{}`", self.name),
        }
    }
}

/// All files read for one translation and the translation unit's origin map.
#[derive(Debug, Default, Clone)]
pub struct SourceMap {
    files: Vec<SourceFile>,
    segments: Vec<Segment>,
    /// Top-level macro expansions, in translation-unit order.
    expansions: Vec<Expansion>,
}

impl SourceMap {
    /// Records that translation-unit bytes `output` are the expansion of
    /// macro `name` (defined at `defined_at`). Expansions must be pushed in
    /// increasing `output` order.
    pub fn push_expansion(
        &mut self,
        output: Range<usize>,
        name: impl Into<String>,
        defined_at: Option<String>,
    ) {
        if output.is_empty() {
            return;
        }
        self.expansions.push(Expansion {
            output,
            name: name.into(),
            defined_at,
        });
    }

    /// The macro expansion that translation-unit byte `offset` is part of.
    pub fn expansion_at(&self, offset: usize) -> Option<&Expansion> {
        let after = self
            .expansions
            .partition_point(|e| e.output.start <= offset);
        let e = self.expansions.get(after.checked_sub(1)?)?;
        e.output.contains(&offset).then_some(e)
    }

    /// Records `#line`: from byte `from` of `file` on, lines shift by
    /// `delta` and, with `name`, the file is shown under that name.
    pub fn add_line_mark(&mut self, file: FileId, from: usize, delta: i64, name: Option<String>) {
        self.files[file.0 as usize]
            .line_marks
            .push(LineMark { from, delta, name });
    }

    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file and returns its id.
    pub fn add_file(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push(SourceFile::new(name.into(), text.into()));
        FileId(self.files.len() as u32 - 1)
    }

    /// The file with id `id`.
    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    /// Records that `file` was read for the `#include` at `directive`
    /// (only the first time: a file included twice shares its id).
    pub fn set_included_from(&mut self, file: FileId, directive: Location) {
        let f = &mut self.files[file.0 as usize];
        f.included_from = f.included_from.take().or(Some(directive));
    }

    /// The `#include` directives that led to `file`, innermost first
    /// (empty for the main file).
    pub fn include_chain(&self, file: FileId) -> Vec<Location> {
        let mut chain = Vec::new();
        let mut at = file;
        // Each file is visited once, so a malformed map cannot loop.
        while let Some(loc) = &self.file(at).included_from {
            if chain.len() >= self.files.len() {
                break;
            }
            chain.push(loc.clone());
            at = loc.file;
        }
        chain
    }

    /// Every file, in the order read (the main file first): a build script
    /// names each in `cargo:rerun-if-changed`.
    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        (0u32..).zip(&self.files).map(|(i, f)| (FileId(i), f))
    }

    /// Looks a file up by the name it was added under.
    pub fn find_file(&self, name: &str) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.name == name)
            .map(|i| FileId(i as u32))
    }

    /// Records that translation-unit bytes `output` came from `source` in `file`.
    /// Segments must be pushed in increasing `output` order.
    pub fn push_segment(&mut self, output: Range<usize>, file: FileId, source: Range<usize>) {
        if output.is_empty() {
            return;
        }
        debug_assert!(self
            .segments
            .last()
            .is_none_or(|s| s.output.end <= output.start));
        self.segments.push(Segment {
            output,
            file,
            source,
        });
    }

    /// The recorded segments, in translation-unit order.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Maps a translation-unit offset to a file and an offset in it.
    fn locate_offset(&self, offset: usize) -> Option<(FileId, usize, bool)> {
        if self.segments.is_empty() {
            return None;
        }
        let idx = match self
            .segments
            .binary_search_by(|s| s.output.start.cmp(&offset))
        {
            Ok(i) => i,
            Err(0) => 0,
            Err(i) => i - 1,
        };
        let seg = &self.segments[idx];
        let exact = seg.output.len() == seg.source.len();
        if exact {
            let delta = offset
                .saturating_sub(seg.output.start)
                .min(seg.output.len());
            Some((seg.file, seg.source.start + delta, true))
        } else {
            Some((seg.file, seg.source.start, false))
        }
    }

    /// Maps a translation-unit span back to where the user wrote it.
    ///
    /// Without segments (no preprocessing happened) the span is taken to be in
    /// the first file.
    pub fn locate(&self, span: Span) -> Option<Location> {
        if self.segments.is_empty() {
            if self.files.is_empty() {
                return None;
            }
            return Some(Location {
                file: FileId(0),
                range: span.range(),
            });
        }
        let (file, start, exact) = self.locate_offset(span.start as usize)?;
        if !exact {
            let seg = self
                .segments
                .iter()
                .find(|s| s.file == file && s.source.start == start)?;
            return Some(Location {
                file,
                range: seg.source.clone(),
            });
        }
        let end = match self.locate_offset((span.end as usize).max(span.start as usize + 1) - 1) {
            Some((f, e, _)) if f == file && e >= start => e + 1,
            _ => start + 1,
        };
        Some(Location {
            file,
            range: start..end.max(start),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based() {
        let mut map = SourceMap::new();
        let f = map.add_file("a.metal", "ab\ncd\n");
        assert_eq!(map.file(f).line_col(0), (1, 1));
        assert_eq!(map.file(f).line_col(4), (2, 2));
        assert_eq!(map.file(f).line_text(2), "cd");
    }

    #[test]
    fn segments_map_back_into_their_file() {
        let mut map = SourceMap::new();
        let a = map.add_file("a.metal", "0123456789");
        let b = map.add_file("b.h", "abcdef");
        map.push_segment(0..4, a, 0..4);
        map.push_segment(4..8, b, 2..6);
        map.push_segment(8..20, a, 5..7);
        let loc = map.locate(Span::new(5, 7)).unwrap();
        assert_eq!((loc.file, loc.range), (b, 3..5));
        let loc = map.locate(Span::new(10, 12)).unwrap();
        assert_eq!((loc.file, loc.range), (a, 5..7));
    }

    #[test]
    fn expansions_are_found_by_offset() {
        let mut map = SourceMap::new();
        map.push_expansion(4..9, "A", Some("a.metal:1:9".into()));
        map.push_expansion(12..14, "B", None);
        let name = |at| map.expansion_at(at).map(|e| e.name.as_str());
        assert_eq!(
            [name(3), name(4), name(8), name(9), name(13)],
            [None, Some("A"), Some("A"), None, Some("B")]
        );
        assert_eq!(
            map.expansion_at(5).map(Expansion::note).as_deref(),
            Some("expanded from macro `A` defined at a.metal:1:9")
        );
    }

    #[test]
    fn include_chains_go_outwards() {
        let mut map = SourceMap::new();
        let main = map.add_file("main.metal", "#include \"a.h\"\n");
        let a = map.add_file("a.h", "#include \"b.h\"\n");
        let b = map.add_file("b.h", "int x;\n");
        let at = |file, range| Location { file, range };
        map.set_included_from(a, at(main, 0..8));
        map.set_included_from(b, at(a, 0..8));
        map.set_included_from(b, at(main, 0..8));
        assert_eq!(map.include_chain(b), [at(a, 0..8), at(main, 0..8)]);
        assert!(map.include_chain(main).is_empty());
    }
}
