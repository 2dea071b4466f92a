//! The directives: conditionals, `#define`, `#undef`, `#error`, `#warning`,
//! `#pragma` and `#line` (`#include` lives in `include.rs`).

use super::engine::{Cond, Engine};
use super::expr;
use super::include::IfEnv;
use super::lexer::{tokenize, Kind, LogicalLine, Token};
use super::macros::{after_defined, body_from, Expanded, Macro, Site, Tok};
use crate::diagnostics::Severity;
use crate::source_map::{FileId, Location, SourceMap};
use std::ops::Range;

/// A directive line, split into its parts.
pub(crate) struct Dir<'a> {
    /// The file it is in.
    pub file: FileId,
    /// The line.
    pub line: &'a LogicalLine,
    /// The tokens after the directive name.
    pub args: &'a [Token],
    /// Text range of `#` through the directive name.
    pub head: Range<usize>,
}

impl<'a> Dir<'a> {
    /// The spelling of `t`.
    pub fn text(&self, t: &Token) -> &'a str {
        &self.line.text[t.range.clone()]
    }

    /// The file location of text range `r`.
    pub fn loc_of(&self, r: Range<usize>) -> Location {
        Location {
            file: self.file,
            range: self.line.file_range(r),
        }
    }

    /// The file location of token `t`.
    pub fn tok_loc(&self, t: &Token) -> Location {
        self.loc_of(t.range.clone())
    }

    /// The location of `#` through the directive name.
    pub fn head_loc(&self) -> Location {
        self.loc_of(self.head.clone())
    }

    /// The text range of the arguments (empty at the end of the head if none).
    pub fn args_range(&self) -> Range<usize> {
        match (self.args.first(), self.args.last()) {
            (Some(f), Some(l)) => f.range.start..l.range.end,
            _ => self.head.end..self.head.end,
        }
    }

    /// The location of the whole directive.
    pub fn whole_loc(&self) -> Location {
        self.loc_of(self.head.start..self.args_range().end)
    }
}

impl Engine<'_> {
    /// Handles directive line `line` (its newlines are already written).
    pub(crate) fn directive(&mut self, map: &mut SourceMap, file: FileId, line: &LogicalLine) {
        let toks = tokenize(&line.text);
        // `#` alone is the null directive.
        let Some(name) = toks.get(1) else { return };
        let d = Dir {
            file,
            line,
            args: &toks[2..],
            head: toks[0].range.start..name.range.end,
        };
        let word = d.text(name);
        if self.conditional(map, &d, word) || !self.live() {
            return;
        }
        match word {
            "define" => self.define(&d),
            "undef" => self.undef(&d),
            "include" => self.include(map, &d),
            "error" => self.report(&d, Severity::Error),
            "warning" => self.report(&d, Severity::Warning),
            "pragma" => self.pragma(&d),
            // Line control changes nothing here: the map already knows every
            // byte's origin. `# 12 "file"` is the GNU spelling of `#line`.
            "line" => {}
            _ if name.kind == Kind::Number => {}
            _ => self.error(
                d.head_loc(),
                format!("invalid preprocessing directive '#{word}'"),
            ),
        }
    }

    /// Handles the conditional directives (in live and skipped code alike);
    /// false when `word` is not one.
    fn conditional(&mut self, map: &SourceMap, d: &Dir, word: &str) -> bool {
        match word {
            "if" => self.open_group(d, |e| e.eval(map, d, "#if")),
            "ifdef" => self.open_group(d, |e| e.test_defined(d) == Some(true)),
            "ifndef" => self.open_group(d, |e| e.test_defined(d) == Some(false)),
            "elif" | "elifdef" | "elifndef" => self.elif(map, d, word),
            "else" => self.else_(d),
            "endif" => {
                self.extra_tokens(d, "#endif");
                if self.conds_mut().pop().is_none() {
                    self.error(d.head_loc(), "#endif without #if");
                }
            }
            _ => return false,
        }
        true
    }

    /// Opens a group; `test` decides the first branch when the code is live.
    fn open_group(&mut self, d: &Dir, test: impl FnOnce(&mut Self) -> bool) {
        let parent_live = self.live();
        let active = parent_live && test(self);
        let loc = d.head_loc();
        self.conds_mut().push(Cond {
            loc,
            taken: active || !parent_live,
            active,
            parent_live,
            seen_else: false,
        });
    }

    /// `#elif`, `#elifdef`, `#elifndef`.
    fn elif(&mut self, map: &SourceMap, d: &Dir, word: &str) {
        let Some(cond) = self.conds_mut().last_mut() else {
            self.error(d.head_loc(), format!("#{word} without #if"));
            return;
        };
        if cond.seen_else {
            cond.active = false;
            self.error(d.head_loc(), format!("#{word} after #else"));
            return;
        }
        let taken = cond.taken;
        let value = !taken
            && match word {
                "elif" => self.eval(map, d, "#elif"),
                "elifdef" => self.test_defined(d) == Some(true),
                _ => self.test_defined(d) == Some(false),
            };
        if let Some(cond) = self.conds_mut().last_mut() {
            cond.active = value;
            cond.taken |= value;
        }
    }

    /// `#else`.
    fn else_(&mut self, d: &Dir) {
        let Some(cond) = self.conds_mut().last_mut() else {
            self.error(d.head_loc(), "#else without #if");
            return;
        };
        if cond.seen_else {
            cond.active = false;
            self.error(d.head_loc(), "#else after #else");
            return;
        }
        cond.active = !cond.taken;
        cond.taken = true;
        cond.seen_else = true;
        self.extra_tokens(d, "#else");
    }

    /// Warns about tokens after a directive that takes none (only where the
    /// enclosing code is live, as in clang).
    fn extra_tokens(&mut self, d: &Dir, what: &str) {
        let parent_live = self.current().conds.last().is_none_or(|c| c.parent_live);
        if !d.args.is_empty() && parent_live {
            let loc = d.loc_of(d.args_range());
            self.warn(loc, format!("extra tokens at end of {what} directive"));
        }
    }

    /// Whether the macro named by `#ifdef`-like directive `d` is defined;
    /// `None` (after an error) when the name is missing or malformed.
    fn test_defined(&mut self, d: &Dir) -> Option<bool> {
        let name = self.macro_name(d)?;
        let defined = self.macros.is_defined(d.text(name));
        Some(defined)
    }

    /// The macro name that `d` starts with, or an error.
    fn macro_name<'t>(&mut self, d: &Dir<'t>) -> Option<&'t Token> {
        let Some(t) = d.args.first() else {
            self.error(d.head_loc(), "macro name missing");
            return None;
        };
        if t.kind != Kind::Ident {
            self.error(d.tok_loc(t), "macro name must be an identifier");
            return None;
        }
        if d.text(t) == "defined" {
            self.error(d.tok_loc(t), "'defined' cannot be used as a macro name");
            return None;
        }
        Some(t)
    }

    /// Evaluates the expression of `#if` or `#elif` (`what`); false after an error.
    fn eval(&mut self, map: &SourceMap, d: &Dir, what: &str) -> bool {
        if d.args.is_empty() {
            self.error(d.head_loc(), format!("{what} with no expression"));
            return false;
        }
        let toks = self.expand_args(map, d, true);
        let end = d.line.file_offset(d.args_range().end);
        let env = IfEnv {
            macros: &self.macros,
            dir: &self.current().dir,
            include_dirs: &self.options.include_dirs,
        };
        match expr::evaluate(&toks, &env, end) {
            Ok(v) => v.v != 0,
            Err((message, range)) => {
                let loc = Location {
                    file: d.file,
                    range,
                };
                self.error(loc, message);
                false
            }
        }
    }

    /// The arguments of `d`, macro-expanded (in `#if` mode the operands of
    /// `defined` are kept).
    pub(crate) fn expand_args(&self, map: &SourceMap, d: &Dir, if_mode: bool) -> Vec<Expanded> {
        let mut out = Vec::new();
        for t in d.args {
            let text = d.text(t);
            let loc = d.line.file_range(t.range.clone());
            if t.kind == Kind::Ident
                && self.macros.is_defined(text)
                && !(if_mode && after_defined(&out))
            {
                let first = out.len();
                let site = Site {
                    file: map.file(d.file),
                    loc,
                };
                self.macros.expand(text, &site, if_mode, &mut out);
                if let Some(e) = out.get_mut(first) {
                    e.tok.space_before = t.space_before;
                }
                continue;
            }
            let tok = Tok {
                kind: t.kind,
                text: text.to_string(),
                space_before: t.space_before,
            };
            out.push(Expanded { tok, loc });
        }
        out
    }

    /// `#define NAME body`; function-like macros are refused for now.
    fn define(&mut self, d: &Dir) {
        let Some(name_tok) = self.macro_name(d) else {
            return;
        };
        let name = d.text(name_tok);
        let rest = &d.args[1..];
        if let Some(paren) = rest.first().filter(|p| !p.space_before && d.text(p) == "(") {
            let loc = d.loc_of(name_tok.range.start..paren.range.end);
            self.error(loc, "function-like macros are not supported yet");
            return;
        }
        let body = match body_from(&d.line.text, rest) {
            Ok(body) => body,
            Err(i) => {
                let msg = "'##' cannot appear at either end of a macro expansion";
                self.error(d.tok_loc(&rest[i]), msg);
                return;
            }
        };
        let new = Macro::Object(body.into());
        if let Some(old) = self.macros.define(name.to_string(), new.clone()) {
            if old != new {
                self.warn(d.tok_loc(name_tok), format!("'{name}' macro redefined"));
            }
        }
    }

    /// `#undef NAME`.
    fn undef(&mut self, d: &Dir) {
        let Some(name_tok) = self.macro_name(d) else {
            return;
        };
        self.macros.undef(d.text(name_tok));
        if let (Some(first), Some(last)) = (d.args.get(1), d.args.last()) {
            let loc = d.loc_of(first.range.start..last.range.end);
            self.warn(loc, "extra tokens at end of #undef directive");
        }
    }

    /// `#error` and `#warning`: the rest of the line is the message.
    fn report(&mut self, d: &Dir, severity: Severity) {
        let r = d.args_range();
        let message = match d.line.text[r].trim() {
            "" if severity == Severity::Error => "#error".to_string(),
            "" => "#warning".to_string(),
            m => m.to_string(),
        };
        match severity {
            Severity::Error => self.error(d.whole_loc(), message),
            Severity::Warning => self.warn(d.whole_loc(), message),
        }
    }

    /// `#pragma once`; other pragmas are ignored.
    fn pragma(&mut self, d: &Dir) {
        if d.args.first().is_some_and(|t| d.text(t) == "once") {
            if let Some(path) = self.current().canonical.clone() {
                self.once.insert(path);
            }
        }
    }
}
