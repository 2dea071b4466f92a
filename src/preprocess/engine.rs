//! The driver: reads files line by line, keeps the include and conditional
//! stacks, and writes the translation unit together with its origin map.
//!
//! Included files are pushed on an explicit stack instead of being handled
//! by recursion, so even the deepest accepted include chain cannot overflow
//! the native stack.

use super::define::parse_definition;
use super::include::Found;
use super::lexer::{read_line, tokenize, Kind, LogicalLine};
use super::macros::{would_paste, Macro, Macros};
use super::Options;
use crate::diagnostics::{Code, Diagnostic, Place, Severity};
use crate::source_map::{FileId, Location, SourceMap};
use std::collections::HashSet;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The name of the buffer holding the `-include` directives (clang's).
pub(crate) const FORCED_INCLUDES: &str = "<built-in>";

/// One open `#if` group.
pub(crate) struct Cond {
    /// The opening directive, for "unterminated conditional directive".
    pub loc: Location,
    /// Whether a branch has been taken (or must count as taken, in skipped
    /// code), so later branches are skipped.
    pub taken: bool,
    /// Whether the current branch is live.
    pub active: bool,
    /// Whether the code around the group is live.
    pub parent_live: bool,
    /// Whether `#else` has been seen.
    pub seen_else: bool,
}

/// A file being read.
pub(crate) struct FileState {
    /// The file.
    pub id: FileId,
    /// Its text, cloned out of the map so that the map can take the files
    /// this one includes while it is being read.
    pub text: Rc<str>,
    /// Where the next logical line starts.
    pub pos: usize,
    /// Its folder, searched first by `#include "..."` (none for a header
    /// the preprocessor provides).
    pub dir: Option<PathBuf>,
    /// How it was found, for `#include_next`.
    pub found: Found,
    /// Its canonical path, for `#pragma once` (none for `<stdin>`).
    pub canonical: Option<PathBuf>,
    /// Its open `#if` groups (a group never spans files).
    pub conds: Vec<Cond>,
    /// What `#line` added to its line numbers.
    pub line_delta: i64,
    /// Its name as `#line` set it, for `__FILE__`.
    pub presumed: Option<String>,
    /// "in file included from FILE:LINE" notes, innermost first.
    pub included_from: Rc<[String]>,
}

/// The preprocessor's whole state for one translation unit.
pub(crate) struct Engine<'o> {
    /// The caller's options.
    pub options: &'o Options,
    /// The macro table.
    pub macros: Macros,
    /// The translation unit being written.
    pub out: Emitter,
    /// Errors and warnings, in the order found.
    pub diags: Vec<Diagnostic>,
    /// Canonical paths of files that said `#pragma once` or were
    /// `#import`ed: later includes skip them.
    pub once: HashSet<PathBuf>,
    /// Canonical paths of every file read so far, for `#import`.
    pub entered: HashSet<PathBuf>,
    /// The files being read, innermost last.
    pub stack: Vec<FileState>,
}

impl<'o> Engine<'o> {
    /// A preprocessor with the predefined macros and the `-D` options applied.
    pub fn new(options: &'o Options) -> Self {
        let mut engine = Engine {
            options,
            macros: Macros::predefined(options.platform),
            out: Emitter::default(),
            diags: Vec::new(),
            once: HashSet::new(),
            entered: HashSet::new(),
            stack: Vec::new(),
        };
        for (name, value) in &options.defines {
            engine.command_line_define(name, value.as_deref());
        }
        engine
    }

    /// Applies `-D name[=value]` (no value means `1`); `name` may have a
    /// parameter list, as in `-D 'F(x)=x+1'`.
    fn command_line_define(&mut self, name: &str, value: Option<&str>) {
        let line = format!("{name} {}", value.unwrap_or("1"));
        let toks = tokenize(&line);
        let name_ok = toks.first().is_some_and(|t| {
            t.kind == Kind::Ident
                && (t.range.end == name.len() || line[t.range.end..].starts_with('('))
        });
        if !name_ok {
            let msg = format!("macro name must be an identifier: '{name}'");
            self.diags
                .push(Diagnostic::unlocated(Code::MacroDefinition, msg));
            return;
        }
        match parse_definition(&line, &toks) {
            Ok(def) => {
                let id = line[toks[0].range.clone()].to_string();
                self.macros.define(id, Macro::User(Rc::new(def)), None);
            }
            Err((msg, _)) => {
                let msg = format!("{msg} (-D {name})");
                self.diags
                    .push(Diagnostic::unlocated(Code::MacroDefinition, msg));
            }
        }
    }

    /// Preprocesses `main` and everything it includes.
    pub fn run(
        mut self,
        map: &mut SourceMap,
        main: FileId,
    ) -> Result<(String, Vec<Diagnostic>), Vec<Diagnostic>> {
        let path = PathBuf::from(&map.file(main).name);
        let canonical = std::fs::canonicalize(&path).ok();
        self.entered.extend(canonical.clone());
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let no_chain = || Rc::from([]);
        self.push_file(map, main, Some(dir), canonical, no_chain(), Found::Primary);
        if let Some(forced) = self.forced_includes() {
            let id = map.add_file(FORCED_INCLUDES, forced);
            // Quoted names in it are looked up in the current folder first.
            let cwd = Some(PathBuf::new());
            self.push_file(map, id, cwd, None, no_chain(), Found::Primary);
        }
        while let Some(top) = self.stack.last_mut() {
            let (id, text) = (top.id, Rc::clone(&top.text));
            match read_line(&text, top.pos) {
                Some(line) => {
                    top.pos = line.raw.end;
                    self.line(map, id, &text, line);
                }
                None => self.close_file(),
            }
        }
        if self.diags.iter().any(|d| d.severity == Severity::Error) {
            return Err(self.diags);
        }
        Ok((self.out.finish(map), self.diags))
    }

    /// The `-include` options as a buffer of `#include "FILE"` lines, read
    /// before the main file's first line (clang's `<built-in>` buffer);
    /// `None` without any. A name that cannot be spelt in quotes is an error.
    fn forced_includes(&mut self) -> Option<String> {
        let forced = &self.options.forced_includes;
        if forced.is_empty() {
            return None;
        }
        let mut text = String::new();
        for path in forced {
            let name = path.display().to_string();
            if name.contains(['"', '\n', '\r']) {
                let msg = format!("cannot include '{name}': the name holds a quote or a newline");
                let d = Diagnostic::unlocated(Code::IncludeNotFound, msg);
                self.diags.push(d);
                continue;
            }
            text.push_str(&format!("#include \"{name}\"\n"));
        }
        Some(text)
    }

    /// Starts reading file `id`, whose folder is `dir`, found as `found`.
    pub fn push_file(
        &mut self,
        map: &SourceMap,
        id: FileId,
        dir: Option<PathBuf>,
        canonical: Option<PathBuf>,
        included_from: Rc<[String]>,
        found: Found,
    ) {
        self.stack.push(FileState {
            id,
            text: Rc::from(map.file(id).text.as_str()),
            pos: 0,
            dir,
            found,
            canonical,
            conds: Vec::new(),
            line_delta: 0,
            presumed: None,
            included_from,
        });
    }

    /// Finishes the innermost file: its open groups are errors.
    fn close_file(&mut self) {
        let Some(top) = self.stack.last_mut() else {
            return;
        };
        for cond in std::mem::take(&mut top.conds) {
            self.error_coded(
                crate::diagnostics::Code::Conditional,
                cond.loc,
                "unterminated conditional directive",
            );
        }
        self.stack.pop();
    }

    /// The innermost file.
    pub fn current(&self) -> &FileState {
        self.stack.last().expect("a file is being read")
    }

    /// The innermost file's open groups.
    pub fn conds_mut(&mut self) -> &mut Vec<Cond> {
        &mut self.stack.last_mut().expect("a file is being read").conds
    }

    /// Whether the current line is in live (not skipped) code.
    pub fn live(&self) -> bool {
        self.stack
            .last()
            .and_then(|f| f.conds.last())
            .is_none_or(|c| c.active)
    }

    /// Records an error of kind `code`.
    pub fn error_coded(
        &mut self,
        code: crate::diagnostics::Code,
        loc: Location,
        message: impl Into<String>,
    ) {
        self.push_located(Diagnostic::error_in_file(code, message, loc));
    }

    /// Records a warning of kind `code`.
    pub fn warn_coded(
        &mut self,
        code: crate::diagnostics::Code,
        loc: Location,
        message: impl Into<String>,
    ) {
        self.push_located(Diagnostic::warning_in_file(code, message, loc));
    }

    /// Records `d`, adding the include chain of the file it points into.
    pub fn push_located(&mut self, mut d: Diagnostic) {
        if let Place::File(loc) = &d.place {
            // The innermost reading of the file: one included twice is on
            // the stack twice.
            let reading = self.stack.iter().rev().find(|f| f.id == loc.file);
            if let Some(f) = reading {
                d.notes.extend(f.included_from.iter().cloned());
            }
        }
        self.diags.push(d);
    }

    /// Handles one logical line of file `file`, whose text is `text`.
    fn line(&mut self, map: &mut SourceMap, file: FileId, text: &str, line: LogicalLine) {
        if let Some(at) = line.unterminated_comment {
            let loc = Location {
                file,
                range: at..at + 2,
            };
            self.error_coded(Code::UnterminatedComment, loc, "unterminated /* comment");
        }
        if line.is_directive() {
            // The newlines first: an `#include` pushes a file, whose text must
            // come after them.
            self.blank(file, text, &line);
            self.directive(map, file, &line);
        } else if self.live() {
            self.text(map, file, line);
        } else {
            self.blank(file, text, &line);
        }
    }

    /// Writes only the newlines of `line`, keeping the line structure.
    fn blank(&mut self, file: FileId, text: &str, line: &LogicalLine) {
        for (i, _) in text[line.raw.clone()].match_indices('\n') {
            self.out.copy(file, line.raw.start + i, "\n");
        }
    }
}

/// Surrounds an expansion with spaces where it would otherwise join the
/// tokens next to it (`-M` with `M` = `-1` must not become `--1`).
pub(crate) fn pad(prev: Option<u8>, text: String, next: Option<u8>) -> String {
    let pastes =
        |a: Option<u8>, b: Option<u8>| matches!((a, b), (Some(a), Some(b)) if would_paste(a, b));
    let (first, last) = (text.bytes().next(), text.bytes().last());
    if text.is_empty() {
        return if pastes(prev, next) { " ".into() } else { text };
    }
    let mut s = String::with_capacity(text.len() + 2);
    if pastes(prev, first) {
        s.push(' ');
    }
    s.push_str(&text);
    if pastes(last, next) {
        s.push(' ');
    }
    s
}

/// One recorded piece of the output, before it goes into the map.
struct Piece {
    output: Range<usize>,
    file: FileId,
    source: Range<usize>,
    /// Copied text (byte for byte) rather than a macro expansion.
    exact: bool,
}

/// The translation unit being written and the origin of each of its pieces.
#[derive(Default)]
pub(crate) struct Emitter {
    text: String,
    pieces: Vec<Piece>,
    /// Top-level macro expansions: output range, macro name, definition.
    expansions: Vec<(Range<usize>, String, Option<String>)>,
}

impl Emitter {
    /// Appends `s`, copied from file `file` at offset `from`. Pieces that
    /// continue the previous one merge with it, keeping the map small.
    pub fn copy(&mut self, file: FileId, from: usize, s: &str) {
        if s.is_empty() {
            return;
        }
        let start = self.text.len();
        self.text.push_str(s);
        let end = self.text.len();
        if let Some(last) = self.pieces.last_mut() {
            if last.exact
                && last.file == file
                && last.output.end == start
                && last.source.end == from
            {
                last.output.end = end;
                last.source.end = from + s.len();
                return;
            }
        }
        self.pieces.push(Piece {
            output: start..end,
            file,
            source: from..from + s.len(),
            exact: true,
        });
    }

    /// Appends the expansion `s` of the macro invocation at `invocation`;
    /// `from` names the macro and where it was defined, for the notes of
    /// later stages' diagnostics.
    pub fn expansion(
        &mut self,
        file: FileId,
        invocation: Range<usize>,
        s: &str,
        from: Option<(String, Option<String>)>,
    ) {
        let start = self.text.len();
        self.text.push_str(s);
        if let Some((name, defined_at)) = from {
            self.expansions
                .push((start..self.text.len(), name, defined_at));
        }
        self.pieces.push(Piece {
            output: start..self.text.len(),
            file,
            source: invocation,
            exact: false,
        });
    }

    /// The last byte written.
    pub fn last_byte(&self) -> Option<u8> {
        self.text.as_bytes().last().copied()
    }

    /// Records the pieces in `map` and returns the text.
    pub fn finish(self, map: &mut SourceMap) -> String {
        for p in self.pieces {
            map.push_segment(p.output, p.file, p.source);
        }
        for (output, name, defined_at) in self.expansions {
            map.push_expansion(output, name, defined_at);
        }
        self.text
    }
}
