//! The macro table and the expansion of object-like macros.
//!
//! Expansion keeps a stack of the macros being expanded; a name on the stack
//! is not expanded again (C's rule that a macro is not replaced inside its own
//! replacement). The stack is explicit rather than recursion, so a long chain
//! of macros cannot overflow the native stack.

use super::lexer::{is_ident_continue, tokenize, Kind, Token};
use crate::source_map::SourceFile;
use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;

/// One token of a macro body or of an expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tok {
    /// Its kind.
    pub kind: Kind,
    /// Its spelling.
    pub text: String,
    /// Whether whitespace precedes it.
    pub space_before: bool,
}

/// What a macro name stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Macro {
    /// `#define NAME body`: the body's tokens.
    Object(Rc<[Tok]>),
    /// `__LINE__`: the line of the invocation.
    Line,
    /// `__FILE__`: the name of the file of the invocation.
    File,
}

/// A token after expansion, with the file range it stands for: its own
/// range, or the range of the outermost macro invocation that produced it.
#[derive(Clone, Debug)]
pub(crate) struct Expanded {
    /// The token.
    pub tok: Tok,
    /// Where it comes from in the current file.
    pub loc: Range<usize>,
}

/// Where an expansion happens: the file and the invocation's range in it.
pub(crate) struct Site<'a> {
    /// The file being read.
    pub file: &'a SourceFile,
    /// The outermost invocation.
    pub loc: Range<usize>,
}

/// One macro being expanded.
struct Frame {
    name: String,
    body: Rc<[Tok]>,
    pos: usize,
}

/// The defined macros.
#[derive(Debug, Default)]
pub(crate) struct Macros {
    table: HashMap<String, Macro>,
}

impl Macros {
    /// The table with the predefined macros of the Metal compiler.
    pub fn predefined() -> Self {
        let mut m = Macros::default();
        m.define("__LINE__".into(), Macro::Line);
        m.define("__FILE__".into(), Macro::File);
        for (name, value) in [
            ("__METAL_VERSION__", "320"),
            ("__METAL__", "1"),
            ("__METAL_MACOS__", "1"),
        ] {
            let body = body_from(value, &tokenize(value)).unwrap_or_default();
            m.define(name.into(), Macro::Object(body.into()));
        }
        m
    }

    /// Defines `name`, returning its previous definition.
    pub fn define(&mut self, name: String, m: Macro) -> Option<Macro> {
        self.table.insert(name, m)
    }

    /// Removes `name` (nothing happens when it is not defined).
    pub fn undef(&mut self, name: &str) {
        self.table.remove(name);
    }

    /// Whether `name` is a macro.
    pub fn is_defined(&self, name: &str) -> bool {
        self.table.contains_key(name)
    }

    /// Fully expands the invocation of macro `name` at `site`, appending the
    /// result to `out`. In `#if` mode the operand of `defined` is left alone.
    pub fn expand(&self, name: &str, site: &Site, if_mode: bool, out: &mut Vec<Expanded>) {
        let mut frames = Vec::new();
        // Whitespace before an expanded name goes before its first token.
        let mut pending_space = false;
        self.invoke(name, site, false, &mut frames, out);
        while let Some(top) = frames.last_mut() {
            let Some(tok) = top.body.get(top.pos).cloned() else {
                frames.pop();
                continue;
            };
            top.pos += 1;
            let space_before = tok.space_before || std::mem::take(&mut pending_space);
            if self.expandable(&tok, &frames, if_mode, out) {
                pending_space =
                    self.invoke(&tok.text, site, space_before, &mut frames, out) && space_before;
            } else {
                let tok = Tok {
                    space_before,
                    ..tok
                };
                out.push(Expanded {
                    tok,
                    loc: site.loc.clone(),
                });
            }
        }
    }

    /// Starts expanding `name`: pushes a frame (and returns true), or emits a
    /// built-in's value.
    fn invoke(
        &self,
        name: &str,
        site: &Site,
        space_before: bool,
        frames: &mut Vec<Frame>,
        out: &mut Vec<Expanded>,
    ) -> bool {
        let (kind, text) = match self.table.get(name) {
            Some(Macro::Object(body)) => {
                frames.push(Frame {
                    name: name.to_string(),
                    body: Rc::clone(body),
                    pos: 0,
                });
                return true;
            }
            Some(Macro::Line) => {
                let line = site.file.line_col(site.loc.start).0;
                (Kind::Number, line.to_string())
            }
            Some(Macro::File) => (Kind::Str, quote(&site.file.name)),
            None => (Kind::Ident, name.to_string()),
        };
        let tok = Tok {
            kind,
            text,
            space_before,
        };
        out.push(Expanded {
            tok,
            loc: site.loc.clone(),
        });
        false
    }

    /// Whether `tok` names a macro that may be expanded here.
    fn expandable(&self, tok: &Tok, frames: &[Frame], if_mode: bool, out: &[Expanded]) -> bool {
        tok.kind == Kind::Ident
            && self.is_defined(&tok.text)
            && !frames.iter().any(|f| f.name == tok.text)
            && !(if_mode && after_defined(out))
    }
}

/// Whether the next identifier is the operand of `defined` (`defined X` or
/// `defined ( X`), which must not be expanded.
pub(crate) fn after_defined(out: &[Expanded]) -> bool {
    let text = |i: usize| {
        out.get(out.len().wrapping_sub(i))
            .map(|e| e.tok.text.as_str())
    };
    text(1) == Some("defined") || (text(1) == Some("(") && text(2) == Some("defined"))
}

/// A string literal spelling `s`.
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('"');
    q
}

/// Builds a macro body from the tokens `toks` of `text`, applying `##`.
/// Fails with the index of a `##` at either end of the body.
pub(crate) fn body_from(text: &str, toks: &[Token]) -> Result<Vec<Tok>, usize> {
    let mut body: Vec<Tok> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let spelling = &text[t.range.clone()];
        if spelling == "##" {
            // Pasting happens before rescanning, so it can be done once, here.
            let (Some(last), Some(next)) = (body.last_mut(), toks.get(i + 1)) else {
                return Err(i);
            };
            last.text.push_str(&text[next.range.clone()]);
            last.kind = tokenize(&last.text).first().map_or(Kind::Punct, |t| t.kind);
            i += 2;
            continue;
        }
        body.push(Tok {
            kind: t.kind,
            text: spelling.to_string(),
            space_before: t.space_before && !body.is_empty(),
        });
        i += 1;
    }
    Ok(body)
}

/// Whether writing byte `b` right after byte `a` could join two tokens into
/// one (`-` `-` into `--`, `a` `b` into `ab`, `1` `.` into `1.`).
pub(crate) fn would_paste(a: u8, b: u8) -> bool {
    const OPS: &[u8] = b"+-*/%<>=!&|^.:#";
    (is_ident_continue(a) && is_ident_continue(b))
        || (a.is_ascii_digit() && b == b'.')
        || (a == b'.' && b.is_ascii_digit())
        || (OPS.contains(&a) && OPS.contains(&b))
}

/// Spells expanded tokens as text, with a space where the source had one or
/// where two tokens would otherwise run together.
pub(crate) fn join(toks: &[Expanded]) -> String {
    let mut s = String::new();
    for e in toks {
        let t = &e.tok;
        let paste = match (s.as_bytes().last(), t.text.as_bytes().first()) {
            (Some(&a), Some(&b)) => would_paste(a, b),
            _ => false,
        };
        if !s.is_empty() && (t.space_before || paste) {
            s.push(' ');
        }
        s.push_str(&t.text);
    }
    s
}
