//! `#line` (and GNU's `# N "file"`) and `#pragma`.

use super::directive::Dir;
use super::engine::Engine;
use super::lexer::{Kind, Token};
use super::macros::Expanded;
use crate::source_map::SourceMap;

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
    /// `#line N ["file"]` with operands `args` (macro-expanded first): the
    /// next line is line `N` (of `file`) for `__LINE__` and `__FILE__`.
    pub(crate) fn line_control(&mut self, map: &mut SourceMap, d: &Dir, args: &[Token]) {
        if args.is_empty() {
            let msg = "#line directive requires a positive integer argument";
            self.error(d.head_loc(), msg);
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
                self.error(loc, "invalid filename for #line directive");
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
                self.error(loc, "#line directive requires a simple digit sequence");
                None
            }
            _ => {
                let msg = "#line directive requires a positive integer argument";
                self.error(loc, msg);
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
                self.warn(d.whole_loc(), text);
            }
            word if KNOWN_PRAGMAS.contains(&word) => {}
            _ => self.warn(d.tok_loc(first), "unknown pragma ignored"),
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
                self.warn(d.whole_loc(), msg);
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
