//! Lines of code (not directives): macro expansion and output.
//!
//! A function-like macro's `(` and arguments may be on later lines, so code
//! is handled in *chunks*: a logical line plus whatever lines an invocation
//! had to read to find its `)`. Text outside invocations is copied byte for
//! byte; an invocation is replaced by its expansion, mapped to the
//! invocation's range. The newlines of lines an invocation swallowed are
//! written at the end of its last line, so later lines keep their numbers.
//!
//! As in clang, directives may stand between the lines of a macro's
//! arguments (`#if`/`#else`/`#endif` choosing an argument, say): reading
//! the arguments stops at the directive, the directive is run, and the
//! invocation is read again from its name, now past the directive (and
//! past the lines it skips). Only the include directives are refused
//! there. `_Pragma("...")`, written out or produced by a macro, runs as a
//! `#pragma` and leaves nothing in the output.

use super::control::{is_pragma_operator, pragma_operand, take_pragma_operators};
use super::engine::{pad, Engine};
use super::expand::{expand_invocation, invocable, ExpandError, Feed, Site};
use super::lexer::{read_line, tokenize, LogicalLine, Token};
use super::macros::{join, Expanded, Tok};
use crate::diagnostics::Code;
use crate::diagnostics::Diagnostic;
use crate::source_map::{FileId, Location, SourceMap};
use std::rc::Rc;

/// How much reading an invocation again (after a directive inside its
/// arguments) may cost in all, in tokens read plus bytes expanded.
pub(crate) const MAX_REREAD: usize = 1 << 22;

/// A logical line and its tokens.
struct Line {
    line: LogicalLine,
    toks: Vec<Token>,
}

/// The lines of one chunk, read on demand, and a cursor over their tokens.
pub(crate) struct Chunk<'t> {
    /// The file's text.
    text: &'t str,
    /// The file offset after the last line read.
    pos: usize,
    lines: Vec<Line>,
    /// The next token: (line, index).
    cur: (usize, usize),
    /// The end of the last token taken: (line, text offset, file offset).
    last: (usize, usize, usize),
    /// The next token, built by `peek`.
    peeked: Option<Expanded>,
    /// Reading stopped at a directive.
    stopped_at_directive: bool,
    /// Whether the lines read next are live code (a directive read inside
    /// an invocation's arguments may start skipping them).
    live: bool,
    /// How many tokens have been taken, counting those taken again after
    /// a rewind.
    taken: usize,
}

impl<'t> Chunk<'t> {
    /// A chunk starting with `first`, a line of file text `text`.
    fn new(text: &'t str, first: LogicalLine) -> Self {
        let pos = first.raw.end;
        let toks = tokenize(&first.text);
        Chunk {
            text,
            pos,
            lines: vec![Line { line: first, toks }],
            cur: (0, 0),
            last: (0, 0, 0),
            peeked: None,
            stopped_at_directive: false,
            live: true,
            taken: 0,
        }
    }

    /// Reads the next live line of the file into the chunk (skipped lines
    /// before it leave only their newlines); false at the end of the file
    /// or at a directive, which the engine must run first.
    fn read_more(&mut self) -> bool {
        loop {
            let Some(line) = read_line(self.text, self.pos) else {
                return false;
            };
            if line.is_directive() {
                self.stopped_at_directive = true;
                return false;
            }
            self.pos = line.raw.end;
            if !self.live {
                self.push_blank(&line);
                continue;
            }
            let toks = tokenize(&line.text);
            self.lines.push(Line { line, toks });
            return true;
        }
    }

    /// Adds `line` to the chunk as its newlines only.
    fn push_blank(&mut self, line: &LogicalLine) {
        let line = line.blanked(self.text);
        self.lines.push(Line {
            line,
            toks: Vec::new(),
        });
    }

    /// Where the cursor stands, to come back to with [`Chunk::rewind`].
    fn position(&self) -> ((usize, usize), (usize, usize, usize)) {
        (self.cur, self.last)
    }

    /// Goes back to `at`, keeping the lines read since.
    fn rewind(&mut self, at: ((usize, usize), (usize, usize, usize))) {
        (self.cur, self.last) = at;
        self.peeked = None;
        self.stopped_at_directive = false;
    }

    /// Moves the cursor past exhausted lines (reading more if `more`);
    /// false when no token is left.
    fn settle(&mut self, more: bool) -> bool {
        loop {
            let (l, i) = self.cur;
            if i < self.lines[l].toks.len() {
                return true;
            }
            if l + 1 < self.lines.len() || (more && self.read_more()) {
                self.cur = (l + 1, 0);
                continue;
            }
            return false;
        }
    }

    /// Token `i` of line `l`, located in the file.
    fn token(&self, l: usize, i: usize) -> Expanded {
        let Line { line, toks } = &self.lines[l];
        let t = &toks[i];
        // A line break before a token counts as whitespace.
        let space_before = t.space_before || (i == 0 && l > 0);
        Expanded {
            tok: Tok::new(t.kind, &line.text[t.range.clone()], space_before),
            loc: line.file_range(t.range.clone()),
        }
    }

    /// Takes the token at the cursor (which must be settled).
    fn take(&mut self) -> Expanded {
        self.peeked = None;
        self.taken += 1;
        let (l, i) = self.cur;
        let e = self.token(l, i);
        self.last = (l, self.lines[l].toks[i].range.end, e.loc.end);
        self.cur = (l, i + 1);
        e
    }

    /// The next token of the lines already read, with its position.
    fn next_local(&mut self) -> Option<(Expanded, usize, usize)> {
        if !self.settle(false) {
            return None;
        }
        let (l, i) = self.cur;
        let start = self.lines[l].toks[i].range.start;
        Some((self.take(), l, start))
    }
}

impl Feed for Chunk<'_> {
    fn peek(&mut self) -> Option<&Expanded> {
        if self.peeked.is_none() && self.settle(true) {
            self.peeked = Some(self.token(self.cur.0, self.cur.1));
        }
        self.peeked.as_ref()
    }

    fn next(&mut self) -> Option<Expanded> {
        self.settle(true).then(|| self.take())
    }

    fn end_note(&self) -> Option<String> {
        self.stopped_at_directive
            .then(|| "an include directive cannot appear inside macro arguments".to_string())
    }
}

/// How much of a chunk has been written: up to `off` in line `line`, with
/// the newlines of swallowed lines still to write.
#[derive(Default)]
struct Written {
    line: usize,
    off: usize,
    deferred: Vec<usize>,
}

impl Engine<'_> {
    /// Writes the code line `first` of file `file` (and any lines a macro
    /// invocation in it reads), expanding macros.
    pub(crate) fn text(&mut self, map: &mut SourceMap, file: FileId, first: LogicalLine) {
        let text = Rc::clone(&self.current().text);
        let mut chunk = Chunk::new(&text, first);
        let mut w = Written::default();
        while let Some((name, l, start)) = chunk.next_local() {
            let name_start = name.loc.start;
            let mut out = Vec::new();
            let operator = is_pragma_operator(&name);
            // The macro, for the notes of later stages' diagnostics: named
            // before the invocation (its arguments may `#undef` it).
            let mut from = None;
            let result = if operator {
                pragma_operand(&name, &mut chunk).map(|literal| {
                    out.push(literal);
                    true
                })
            } else if invocable(&self.macros, false, &name, &[]) {
                let at = self.macros.get(&name.tok.text).and_then(|e| e.at.clone());
                from = Some((name.tok.text.to_string(), at));
                self.invoke(map, file, name, &mut chunk, &mut out)
            } else {
                continue;
            };
            let pragmas = match result {
                Ok(false) => continue,
                Ok(true) if operator => Some(std::mem::take(&mut out)),
                Ok(true) => match take_pragma_operators(&mut out) {
                    Ok(pragmas) => Some(pragmas),
                    Err(e) => {
                        // As for a `_Pragma` written out: not the macro's fault.
                        let loc = Location { file, range: e.loc };
                        self.error_coded(Code::MalformedDirective, loc, e.message);
                        None
                    }
                },
                Err(e) if operator => {
                    let loc = Location { file, range: e.loc };
                    self.error_coded(Code::MalformedDirective, loc, e.message);
                    None
                }
                Err(e) => {
                    self.expand_error(file, e);
                    None
                }
            };
            if let Some(pragmas) = pragmas {
                self.write_upto(file, &chunk, &mut w, l, start);
                let (end_line, end_off, end) = chunk.last;
                let next = chunk.lines[end_line].line.text.as_bytes().get(end_off);
                let s = pad(self.out.last_byte(), join(&out), next.copied());
                self.out.expansion(file, name_start..end, &s, from);
                for literal in &pragmas {
                    self.pragma_operator(file, literal);
                }
            }
            let end_line = chunk.last.0;
            for swallowed in &chunk.lines[l..end_line] {
                w.deferred.extend(&swallowed.line.newlines);
            }
            (w.line, w.off) = (end_line, chunk.last.1);
        }
        let last = chunk.lines.len() - 1;
        let len = chunk.lines[last].line.text.len();
        self.write_upto(file, &chunk, &mut w, last, len);
        self.end_line(file, &chunk.lines[last].line, &mut w);
        for l in &chunk.lines[1..] {
            if let Some(at) = l.line.unterminated_comment {
                self.error_coded(
                    Code::UnterminatedComment,
                    Location {
                        file,
                        range: at..at + 2,
                    },
                    "unterminated /* comment",
                );
            }
        }
        self.stack.last_mut().expect("a file is being read").pos = chunk.pos;
    }

    /// Expands the invocation of macro `name` (just taken from `chunk`)
    /// into `out`. When its arguments run into a directive, runs the
    /// directive and reads the invocation again.
    fn invoke(
        &mut self,
        map: &mut SourceMap,
        file: FileId,
        name: Expanded,
        chunk: &mut Chunk,
        out: &mut Vec<Expanded>,
    ) -> Result<bool, ExpandError> {
        let at = chunk.position();
        let state = self.macros.expansion_state();
        let mut spent = 0usize;
        loop {
            let taken = chunk.taken;
            let result = {
                let site = self.site(map, file);
                expand_invocation(&self.macros, &site, false, name.clone(), chunk, out)
            };
            if result.is_ok() || !chunk.stopped_at_directive {
                return result;
            }
            // Each reading costs what it read and expanded; many directives
            // after long arguments must not cost quadratic time.
            spent += chunk.taken - taken + (self.macros.expansion_state().1 - state.1);
            if spent > MAX_REREAD {
                let msg = format!(
                    "too many directives inside the arguments of macro `{}`",
                    name.tok.text
                );
                return Err(ExpandError::new(msg, name.loc.clone()));
            }
            if !self.directive_in_arguments(map, file, chunk) {
                return result;
            }
            out.clear();
            chunk.rewind(at);
            self.macros.restore_expansion_state(state);
        }
    }

    /// Runs the directive at which `chunk` stopped reading, inside a macro
    /// invocation's arguments; false (nothing done) for the include
    /// directives, which cannot stand there.
    fn directive_in_arguments(
        &mut self,
        map: &mut SourceMap,
        file: FileId,
        chunk: &mut Chunk,
    ) -> bool {
        let Some(line) = read_line(chunk.text, chunk.pos) else {
            return false;
        };
        let toks = tokenize(&line.text);
        let word = toks.get(1).map(|t| &line.text[t.range.clone()]);
        if self.live() && matches!(word, Some("include" | "import" | "include_next")) {
            return false;
        }
        chunk.pos = line.raw.end;
        chunk.push_blank(&line);
        self.directive(map, file, &line);
        chunk.live = self.live();
        true
    }

    /// The current file as an expansion sees it.
    pub(crate) fn site<'a>(&'a self, map: &'a SourceMap, file: FileId) -> Site<'a> {
        let f = map.file(file);
        let top = self.current();
        Site {
            file: f,
            line_delta: top.line_delta,
            name: top.presumed.as_deref().unwrap_or(&f.name),
        }
    }

    /// Copies the chunk's text from where `w` stands up to text offset `off`
    /// of line `line`, ending the lines in between.
    fn write_upto(
        &mut self,
        file: FileId,
        chunk: &Chunk,
        w: &mut Written,
        line: usize,
        off: usize,
    ) {
        while w.line < line {
            let l = &chunk.lines[w.line].line;
            self.copy(file, l, w.off, l.text.len());
            self.end_line(file, l, w);
            (w.line, w.off) = (w.line + 1, 0);
        }
        self.copy(file, &chunk.lines[line].line, w.off, off);
        w.off = off;
    }

    /// Writes the newlines that end line `l` (after those it swallowed).
    fn end_line(&mut self, file: FileId, l: &LogicalLine, w: &mut Written) {
        for at in std::mem::take(&mut w.deferred)
            .into_iter()
            .chain(l.newlines.iter().copied())
        {
            self.out.copy(file, at, "\n");
        }
    }

    /// Copies text `from..to` of `line` unchanged.
    fn copy(&mut self, file: FileId, line: &LogicalLine, from: usize, to: usize) {
        for (piece, at) in line.pieces(from..to) {
            self.out.copy(file, at, &line.text[piece]);
        }
    }

    /// Reports a failed expansion in file `file`.
    pub(crate) fn expand_error(&mut self, file: FileId, e: ExpandError) {
        let loc = Location { file, range: e.loc };
        let mut d = Diagnostic::error_in_file(Code::MacroExpansion, e.message, loc);
        d.notes = e.notes;
        self.push_located(d);
    }
}
