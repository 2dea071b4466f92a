//! Error recovery: report every syntax error of a file, not just the first,
//! as clang does.
//!
//! The grammar is one pest parse of the whole text, which stops at its
//! first error. Recovery repairs the text and parses again, keeping every
//! byte offset (so spans stay right): a missing `;` is written over the
//! whitespace after the token it follows (clang's fix-it), and anything
//! else blanks the top-level declaration the error is in (clang skips to
//! the next declaration likewise). The next parse then reports the next
//! error, until one succeeds or the limit is reached.

use super::semicolon;
use super::tokens::{tokens, Kind, Tok};
use super::{ast, Error};
use crate::diagnostics::Code;
use crate::source_map::Span;

/// What a recovering parse found.
#[derive(Debug)]
pub struct Recovered {
    /// The translation unit of the repaired text, when the errors (if any)
    /// could all be recovered from within the limit.
    pub unit: Option<ast::TranslationUnit>,
    /// Every syntax error, in the order found (source order).
    pub errors: Vec<Error>,
    /// The names that declarations left out to recover would have declared
    /// (their words outside function bodies): semantic errors about them
    /// are not the user's.
    pub left_out_names: Vec<String>,
}

/// Parses `text`, recovering from errors; stops after `limit` errors
/// (`None`: no limit), having found one more if there is one, so that the
/// caller can say the limit was reached.
pub fn parse_recovering(text: &str, limit: Option<usize>) -> Recovered {
    let mut text = text.to_string();
    let mut recovered = Recovered {
        unit: None,
        errors: Vec::new(),
        left_out_names: Vec::new(),
    };
    loop {
        let error = match super::parse_once(&text) {
            Ok(unit) => {
                recovered.unit = Some(unit);
                return recovered;
            }
            Err(e) => e,
        };
        let repair = repair(&text, &error);
        if recovered.errors.contains(&error.error) {
            // The repair did not move the parse on.
            return recovered;
        }
        recovered.errors.push(error.error);
        let full = limit.is_some_and(|l| recovered.errors.len() > l);
        match repair {
            Some(Repair::Semicolon(at)) if !full => text.replace_range(at..at + 1, ";"),
            Some(Repair::LeaveOut(range)) if !full => {
                recovered
                    .left_out_names
                    .extend(declared_words(&text, range.clone()));
                blank(&mut text, range);
            }
            _ => return recovered,
        }
    }
}

/// A parse error, and what the parser's position was when pest stopped
/// (for the missing-`;` test), if it was pest.
pub(super) struct Failed {
    /// The error as reported.
    pub error: Error,
    /// A `;` found missing (then `error` says so).
    pub semicolon: Option<usize>,
}

impl From<Error> for Failed {
    fn from(error: Error) -> Self {
        Failed {
            error,
            semicolon: None,
        }
    }
}

/// How to change the text to parse on past an error.
enum Repair {
    /// Write a `;` over the whitespace byte at this offset.
    Semicolon(usize),
    /// Blank this range (a top-level declaration).
    LeaveOut(std::ops::Range<usize>),
}

/// The repair for `failed` in `text`, if one can move the parse on.
fn repair(text: &str, failed: &Failed) -> Option<Repair> {
    if let Some(at) = failed.semicolon {
        if text.as_bytes().get(at).is_some_and(u8::is_ascii_whitespace) {
            return Some(Repair::Semicolon(at));
        }
    }
    let range = declaration_around(text, &tokens(text), failed.error.span.start as usize);
    text[range.clone()]
        .bytes()
        .any(|b| !b.is_ascii_whitespace())
        .then_some(Repair::LeaveOut(range))
}

/// The words of the declaration at `range` that may name what it
/// declares: all of them up to the body of a function, but keywords.
fn declared_words(text: &str, range: std::ops::Range<usize>) -> Vec<String> {
    let declaration = &text[range];
    let toks = tokens(declaration);
    let body = toks
        .iter()
        .enumerate()
        .position(|(i, t)| t.is(b'{') && toks[..i].iter().any(|p| p.is(b')')))
        .unwrap_or(toks.len());
    toks[..body]
        .iter()
        .filter(|t| t.kind == Kind::Word)
        .map(|t| t.text(declaration))
        .filter(|w| !semicolon::is_reserved_word(w))
        .map(str::to_string)
        .collect()
}

/// Replaces the bytes of `range` by spaces, keeping its line breaks.
fn blank(text: &mut String, range: std::ops::Range<usize>) {
    let spaces: String = text[range.clone()]
        .bytes()
        .map(|b| if b == b'\n' { '\n' } else { ' ' })
        .collect();
    text.replace_range(range, &spaces);
}

/// The `;` error for a pest failure at `pos`, if a missing `;` explains it.
pub(super) fn missing_semicolon(text: &str, pos: usize) -> Option<Failed> {
    let toks = tokens(text);
    let missing = semicolon::diagnose(text, &toks, pos)?;
    Some(Failed {
        error: Error::coded(
            Code::Syntax,
            Span::new(missing.at, missing.at + 1),
            missing.message,
        ),
        semicolon: Some(missing.at),
    })
}

/// The byte range of the top-level declaration (at program or namespace
/// scope) that byte `pos` is in; to the end of the text if it does not end.
fn declaration_around(text: &str, toks: &[Tok], pos: usize) -> std::ops::Range<usize> {
    let ends = declaration_ends(text, toks);
    let start = ends
        .iter()
        .copied()
        .filter(|&e| e <= pos)
        .max()
        .unwrap_or(0);
    let end = ends
        .iter()
        .copied()
        .find(|&e| e > pos)
        .unwrap_or(text.len());
    start..end
}

/// An open `{` while looking for declaration ends.
struct Open {
    /// A namespace's (or `extern "C"`'s) braces: declarations inside are
    /// top-level ones.
    scope: bool,
    /// The token index of the `{`.
    at: usize,
}

/// The byte offsets where top-level declarations end: after a `;` outside
/// brackets, after the `}` of a function body or namespace, and at the
/// braces that open a namespace.
fn declaration_ends(text: &str, toks: &[Tok]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    let mut parens = 0usize;
    let mut head = 0usize;
    for (i, t) in toks.iter().enumerate() {
        let in_body = open.iter().any(|o| !o.scope);
        match t.kind {
            Kind::Punct(b'{') => {
                let scope = !in_body && parens == 0 && opens_scope(text, &toks[head..i]);
                open.push(Open { scope, at: i });
                if scope {
                    ends.push(t.end);
                    head = i + 1;
                }
            }
            Kind::Punct(b'}') => {
                let Some(closed) = open.pop() else { continue };
                let outermost = !open.iter().any(|o| !o.scope);
                let function = !closed.scope && is_function_head(&toks[head..closed.at]);
                if outermost && parens == 0 && (closed.scope || function) {
                    ends.push(t.end);
                    head = i + 1;
                }
            }
            _ if in_body => {}
            Kind::Punct(b'(' | b'[') => parens += 1,
            Kind::Punct(b')' | b']') => parens = parens.saturating_sub(1),
            Kind::Punct(b';') if parens == 0 => {
                ends.push(t.end);
                head = i + 1;
            }
            _ => {}
        }
    }
    ends
}

/// Whether the tokens before a `{` make it a namespace's (or a linkage
/// specification's) braces.
fn opens_scope(text: &str, head: &[Tok]) -> bool {
    match head.first().map(|t| t.text(text)) {
        Some("namespace") => true,
        Some("extern") => head.get(1).is_some_and(|t| t.kind == Kind::Literal),
        _ => false,
    }
}

/// Whether the tokens before a `{` make it a function body (a `)` and no
/// `=`), whose `}` ends the declaration (a struct's needs its `;`).
fn is_function_head(head: &[Tok]) -> bool {
    head.iter().any(|t| t.is(b')')) && !head.iter().any(|t| t.is(b'='))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(text: &str, limit: Option<usize>) -> Vec<(u32, String)> {
        parse_recovering(text, limit)
            .errors
            .into_iter()
            .map(|e| (e.span.start, e.message))
            .collect()
    }

    #[test]
    fn declaration_ends_skip_bodies_but_not_namespaces() {
        let text =
            "struct S { int a; }; void f() { if (x) { y; } } namespace n { int b; } int c[] = {1};";
        let ends: Vec<&str> = declaration_ends(text, &tokens(text))
            .into_iter()
            .map(|e| &text[..e])
            .map(|s| s.rsplit(' ').next().unwrap_or(s))
            .collect();
        assert_eq!(ends, ["};", "}", "{", "b;", "}", "{1};"]);
    }

    #[test]
    fn every_declaration_is_parsed_after_an_error() {
        let text = "void f() { x = ; }\nvoid g() { float y = 1.0\n y = 2; }\nvoid h() { ) }\nvoid ok() {}\n";
        let found = messages(text, None);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(found[0].0, 15);
        assert_eq!(found[1], (43, "expected ';' at end of declaration".into()));
        assert_eq!(found[2].0, 65);
        let recovered = parse_recovering(text, None);
        // Their names and parameters, not their bodies' words.
        assert_eq!(recovered.left_out_names, ["f", "h"]);
        // `g` was repaired, `ok` parsed: `f` and `h` were left out.
        assert_eq!(recovered.unit.map(|u| u.items.len()), Some(2));
        // One more than the limit is found, and no unit is returned.
        let limited = parse_recovering(text, Some(1));
        assert_eq!((limited.errors.len(), limited.unit.is_none()), (2, true));
    }
}
