//! `#line` (and GNU's `# N "file"`), `#pragma` and the `_Pragma("...")`
//! operator.

use super::directive::Dir;
use super::engine::Engine;
use super::expand::{ExpandError, Feed};
use super::lexer::{tokenize, Kind, LogicalLine, Token};
use super::macros::Expanded;
use crate::diagnostics::Code;
use crate::source_map::{FileId, SourceMap};
use std::ops::Range;

/// The message for a `_Pragma` without its operand.
const PRAGMA_OPERAND: &str = "_Pragma takes a parenthesized string literal";

/// Whether `t` is the `_Pragma` operator.
pub(crate) fn is_pragma_operator(t: &Expanded) -> bool {
    t.tok.kind == Kind::Ident && &*t.tok.text == "_Pragma"
}

/// Reads the operand of the `_Pragma` at `at` from `feed`: `(`, a string
/// literal, `)`. Returns the literal.
pub(crate) fn pragma_operand(at: &Expanded, feed: &mut dyn Feed) -> Result<Expanded, ExpandError> {
    let bad = || ExpandError::new(PRAGMA_OPERAND, at.loc.clone());
    let mut take = |ok: &dyn Fn(&Expanded) -> bool| match feed.peek() {
        Some(t) if ok(t) => Ok(feed.next().expect("peeked")),
        _ => Err(bad()),
    };
    take(&|t| &*t.tok.text == "(")?;
    let literal = take(&|t| t.tok.kind == Kind::Str)?;
    take(&|t| &*t.tok.text == ")")?;
    Ok(literal)
}

/// Takes the `_Pragma("...")` operators out of the expansion `toks`,
/// returning their string literals in order.
pub(crate) fn take_pragma_operators(
    toks: &mut Vec<Expanded>,
) -> Result<Vec<Expanded>, ExpandError> {
    if !toks.iter().any(is_pragma_operator) {
        return Ok(Vec::new());
    }
    let mut kept = Vec::with_capacity(toks.len());
    let mut literals = Vec::new();
    let mut rest = std::mem::take(toks).into_iter().peekable();
    while let Some(t) = Iterator::next(&mut rest) {
        if is_pragma_operator(&t) {
            literals.push(pragma_operand(&t, &mut rest)?);
        } else {
            kept.push(t);
        }
    }
    *toks = kept;
    Ok(literals)
}

/// Pragma namespaces clang (or the Metal compiler) knows; they change
/// nothing in the translation, so they are ignored silently. Others get an
/// "unknown pragma ignored" warning, as in clang.
const KNOWN_PRAGMAS: &[&str] = &[
    "clang",
    "GCC",
    "STDC",
    "METAL",
    "unroll",
    "nounroll",
    "pack",
    "mark",
    "region",
    "endregion",
    "diagnostic",
    "optimize",
    "loop",
    "fp_contract",
    "redefine_extname",
    "comment",
    "ident",
];

/// The contents of string literal `s` (quotes removed, `\"` and `\\`
/// unescaped).
fn unquote(s: &str) -> String {
    let inner = s.strip_prefix('"').and_then(|s| s.strip_suffix('"'));
    let mut out = String::new();
    let mut chars = inner.unwrap_or(s).chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some(n @ ('"' | '\\'))) => {
                out.push(n);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

impl Engine<'_> {
    /// Runs `_Pragma(literal)` in file `file`: the literal, destringized,
    /// is a `#pragma` line.
    pub(crate) fn pragma_operator(&mut self, file: FileId, literal: &Expanded) {
        let text = unquote(&literal.tok.text);
        let loc = &literal.loc;
        // Written out, the literal's contents are at its place in the file;
        // from a macro, everything is at the invocation.
        let within: Range<usize> = match loc.len() == literal.tok.text.len() && loc.len() >= 2 {
            true => loc.start + 1..loc.end - 1,
            false => loc.clone(),
        };
        let line = LogicalLine::synthetic(text, within);
        let toks = tokenize(&line.text);
        let d = Dir {
            file,
            line: &line,
            args: &toks,
            head: 0..0,
        };
        self.pragma(&d);
    }

    /// `#line N ["file"]` with operands `args` (macro-expanded first): the
    /// next line is line `N` (of `file`) for `__LINE__` and `__FILE__`.
    pub(crate) fn line_control(&mut self, map: &mut SourceMap, d: &Dir, args: &[Token]) {
        if args.is_empty() {
            let msg = "#line directive requires a positive integer argument";
            self.error_coded(Code::MalformedDirective, d.head_loc(), msg);
            return;
        }
        let Some((toks, _)) = self.expand_args(map, d, args, false) else {
            return;
        };
        let Some(line) = self.line_number(d, &toks) else {
            return;
        };
        let presumed = match toks.get(1) {
            Some(t) if t.tok.kind == Kind::Str => Some(unquote(&t.tok.text)),
            Some(t) => {
                let loc = crate::source_map::Location {
                    file: d.file,
                    range: t.loc.clone(),
                };
                self.error_coded(
                    Code::MalformedDirective,
                    loc,
                    "invalid filename for #line directive",
                );
                return;
            }
            None => None,
        };
        // The line after the directive (splices included) gets number `line`.
        let next = map.file(d.file).line_col(d.line.raw.end).0 as i64;
        // Diagnostics after preprocessing show the same presumed place.
        map.add_line_mark(d.file, d.line.raw.end, line - next, presumed.clone());
        let top = self.stack.last_mut().expect("a file is being read");
        top.line_delta = line - next;
        if presumed.is_some() {
            top.presumed = presumed;
        }
    }

    /// The line number `#line` sets: a plain digit sequence.
    fn line_number(&mut self, d: &Dir, toks: &[Expanded]) -> Option<i64> {
        let first = toks.first()?;
        let digits = &first.tok.text;
        let value = digits
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| digits.parse::<i64>().ok())
            .flatten()
            .filter(|&n| n <= i64::from(i32::MAX));
        let loc = crate::source_map::Location {
            file: d.file,
            range: first.loc.clone(),
        };
        match (first.tok.kind, value) {
            (Kind::Number, Some(n)) => Some(n),
            (Kind::Number, None) => {
                self.error_coded(
                    Code::MalformedDirective,
                    loc,
                    "#line directive requires a simple digit sequence",
                );
                None
            }
            _ => {
                let msg = "#line directive requires a positive integer argument";
                self.error_coded(Code::MalformedDirective, loc, msg);
                None
            }
        }
    }

    /// `#pragma`: `once`, `push_macro`/`pop_macro`, `message`; others are
    /// ignored.
    pub(crate) fn pragma(&mut self, d: &Dir) {
        let Some(first) = d.args.first() else {
            return;
        };
        match d.text(first) {
            "once" => {
                if let Some(path) = self.current().canonical.clone() {
                    self.once.insert(path);
                }
            }
            word @ ("push_macro" | "pop_macro") => self.push_pop_macro(d, word),
            "message" => {
                let text: String = d.args[1..]
                    .iter()
                    .filter(|t| t.kind == Kind::Str)
                    .map(|t| unquote(d.text(t)))
                    .collect();
                self.warn_coded(Code::PragmaMessage, d.whole_loc(), text);
            }
            word if KNOWN_PRAGMAS.contains(&word) => {}
            _ => self.warn_coded(
                Code::PragmaIgnored,
                d.tok_loc(first),
                "unknown pragma ignored",
            ),
        }
    }

    /// `#pragma push_macro("NAME")` and `#pragma pop_macro("NAME")`.
    fn push_pop_macro(&mut self, d: &Dir, word: &str) {
        let name = match &d.args[1..] {
            [open, name, close]
                if d.text(open) == "(" && name.kind == Kind::Str && d.text(close) == ")" =>
            {
                unquote(d.text(name))
            }
            _ => {
                let msg = format!("pragma {word} requires a parenthesized string");
                self.warn_coded(Code::PragmaIgnored, d.whole_loc(), msg);
                return;
            }
        };
        if word == "push_macro" {
            self.macros.push(&name);
        } else {
            self.macros.pop(&name);
        }
    }
}
