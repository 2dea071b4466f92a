//! The directives: conditionals, `#define`, `#undef`, `#error`, `#warning`
//! (`#include`, `#import` and `#include_next` live in `include.rs`, `#line`,
//! `#pragma` and `_Pragma` in `control.rs`).

use super::define::parse_definition;
use super::engine::{Cond, Engine};
use super::expand::{expand_all, ExpandedArgs};
use super::expr;
use super::include::{IfEnv, IncludeKind, FEATURE_TESTS};
use super::lexer::{tokenize, Kind, LogicalLine, Token};
use super::macros::{Expanded, Macro, Tok};
use crate::diagnostics::Code;
use crate::diagnostics::{Diagnostic, Severity};
use crate::source_map::{FileId, Location, SourceMap};
use std::ops::Range;
use std::rc::Rc;

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
            "define" => self.define(map, &d),
            "undef" => self.undef(&d),
            "include" => self.include(map, &d, IncludeKind::Include),
            "import" => self.include(map, &d, IncludeKind::Import),
            "include_next" => self.include(map, &d, IncludeKind::Next),
            "error" => self.report(&d, Severity::Error),
            "warning" => self.report(&d, Severity::Warning),
            "pragma" => self.pragma(&d),
            "line" => self.line_control(map, &d, d.args),
            // `# 12 "file" flags` is the GNU spelling of `#line`.
            _ if name.kind == Kind::Number => self.line_control(map, &d, &toks[1..]),
            _ => self.error_coded(
                Code::UnknownDirective,
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
                    self.error_coded(
                        crate::diagnostics::Code::Conditional,
                        d.head_loc(),
                        "#endif without #if",
                    );
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
            self.error_coded(
                crate::diagnostics::Code::Conditional,
                d.head_loc(),
                format!("#{word} without #if"),
            );
            return;
        };
        if cond.seen_else {
            cond.active = false;
            self.error_coded(
                crate::diagnostics::Code::Conditional,
                d.head_loc(),
                format!("#{word} after #else"),
            );
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
            self.error_coded(
                crate::diagnostics::Code::Conditional,
                d.head_loc(),
                "#else without #if",
            );
            return;
        };
        if cond.seen_else {
            cond.active = false;
            self.error_coded(
                crate::diagnostics::Code::Conditional,
                d.head_loc(),
                "#else after #else",
            );
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
            self.warn_coded(
                Code::ExtraTokens,
                loc,
                format!("extra tokens at end of {what} directive"),
            );
        }
    }

    /// Whether the macro named by `#ifdef`-like directive `d` is defined;
    /// `None` (after an error) when the name is missing or malformed.
    fn test_defined(&mut self, d: &Dir) -> Option<bool> {
        let name = self.macro_name(d)?;
        let name = d.text(name);
        let defined = self.macros.is_defined(name) || FEATURE_TESTS.contains(&name);
        Some(defined)
    }

    /// The macro name that `d` starts with, or an error.
    fn macro_name<'t>(&mut self, d: &Dir<'t>) -> Option<&'t Token> {
        let Some(t) = d.args.first() else {
            self.error_coded(
                crate::diagnostics::Code::MacroDefinition,
                d.head_loc(),
                "macro name missing",
            );
            return None;
        };
        if t.kind != Kind::Ident {
            self.error_coded(
                crate::diagnostics::Code::MacroDefinition,
                d.tok_loc(t),
                "macro name must be an identifier",
            );
            return None;
        }
        if d.text(t) == "defined" {
            self.error_coded(
                crate::diagnostics::Code::MacroDefinition,
                d.tok_loc(t),
                "'defined' cannot be used as a macro name",
            );
            return None;
        }
        Some(t)
    }

    /// Evaluates the expression of `#if` or `#elif` (`what`); false after an error.
    fn eval(&mut self, map: &SourceMap, d: &Dir, what: &str) -> bool {
        if d.args.is_empty() {
            self.error_coded(
                Code::ConditionExpression,
                d.head_loc(),
                format!("{what} with no expression"),
            );
            return false;
        }
        let Some((toks, invoked)) = self.expand_args(map, d, d.args, true) else {
            return false;
        };
        let end = d.line.file_offset(d.args_range().end);
        let value = {
            let top = self.current();
            let env = IfEnv {
                macros: &self.macros,
                dir: top.dir.as_deref(),
                found: top.found,
                options: self.options,
            };
            expr::evaluate(&toks, &env, end)
        };
        let (message, range) = match value {
            Ok(v) => return v.v != 0,
            Err(e) => e,
        };
        let inside = |r: &Range<usize>| r.start <= range.start && range.end <= r.end;
        let notes = invoked
            .iter()
            .filter(|(_, r)| inside(r))
            .map(|(name, _)| format!("in expansion of macro `{name}`"));
        let loc = Location {
            file: d.file,
            range: range.clone(),
        };
        let mut diag = Diagnostic::error_in_file(Code::ConditionExpression, message, loc);
        diag.notes.extend(notes);
        self.push_located(diag);
        false
    }

    /// Operands `args` of `d`, macro-expanded (in `#if` mode the operands of
    /// `defined` are kept); `None` after reporting a failed expansion.
    pub(crate) fn expand_args(
        &mut self,
        map: &SourceMap,
        d: &Dir,
        args: &[Token],
        if_mode: bool,
    ) -> Option<ExpandedArgs> {
        let toks = args
            .iter()
            .map(|t| Expanded {
                tok: Tok::new(t.kind, d.text(t), t.space_before),
                loc: d.line.file_range(t.range.clone()),
            })
            .collect();
        let result = {
            let site = self.site(map, d.file);
            expand_all(&self.macros, &site, if_mode, toks)
        };
        result.map_err(|e| self.expand_error(d.file, e)).ok()
    }

    /// `#define NAME body` or `#define NAME(params) body`.
    fn define(&mut self, map: &SourceMap, d: &Dir) {
        let Some(name_tok) = self.macro_name(d) else {
            return;
        };
        let name = d.text(name_tok);
        let def = match parse_definition(&d.line.text, d.args) {
            Ok(def) => def,
            Err((msg, i)) => {
                self.error_coded(
                    crate::diagnostics::Code::MacroDefinition,
                    d.tok_loc(&d.args[i]),
                    msg,
                );
                return;
            }
        };
        let name_loc = d.tok_loc(name_tok);
        let file = map.file(d.file);
        let (line, col) = file.line_col(name_loc.range.start);
        let at = format!("{}:{line}:{col}", file.name);
        let new = Macro::User(Rc::new(def));
        if let Some(old) = self.macros.define(name.to_string(), new.clone(), Some(at)) {
            if old != new {
                self.warn_coded(
                    crate::diagnostics::Code::MacroRedefined,
                    name_loc,
                    format!("'{name}' macro redefined"),
                );
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
            self.warn_coded(
                Code::ExtraTokens,
                loc,
                "extra tokens at end of #undef directive",
            );
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
            Severity::Error => self.error_coded(
                crate::diagnostics::Code::ErrorDirective,
                d.whole_loc(),
                message,
            ),
            Severity::Warning => self.warn_coded(
                crate::diagnostics::Code::WarningDirective,
                d.whole_loc(),
                message,
            ),
        }
    }
}
