//! "expected ';'": the parser stops at the token after a missing `;`, which
//! is often on the next line; clang reports the error just past the token
//! the `;` belongs after, and names what the `;` ends. A `;` is taken to be
//! missing at the end of a line (or before a `}`) when inserting one there
//! lets the parse get past the statement after it.

use super::tokens::{Kind, Tok};
use super::{MslParser, Rule};
use pest::Parser as _;

/// A `;` that the text needs at byte `at` (the end of the token before
/// the parse error), with clang's message for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct MissingSemicolon {
    /// Where the `;` goes: just past the previous token.
    pub at: usize,
    /// `expected ';' at end of declaration`, `... after struct`, ...
    pub message: String,
}

/// The missing `;` that explains a parse error at `pos`, if one does.
pub(super) fn diagnose(text: &str, toks: &[Tok], pos: usize) -> Option<MissingSemicolon> {
    let prev = toks.iter().rposition(|t| t.end <= pos)?;
    let before = toks[prev];
    // Only a token that can end a declaration or statement can have a `;`
    // missing after it.
    let ends_something = matches!(before.kind, Kind::Word | Kind::Literal)
        || before.is(b')')
        || before.is(b']')
        || before.is(b'}');
    // The parse must get past the statement after the `;` too: otherwise
    // the `;` only moves the error (`float a b;` is not `float a; b;`).
    let next_end = toks[prev + 1..]
        .iter()
        .find(|t| t.is(b';') || t.is(b'{') || t.is(b'}'))
        .map_or(text.len(), |t| t.start);
    // A `;` is missing at the end of a line (or before a `}`): in the
    // middle of one, an insertion that parses usually hides another
    // mistake (`(T)x` with `T` not known as a type parses as `(T); x`).
    let at_line_end = text[before.end..pos].contains('\n') || text[pos..].starts_with('}');
    if !ends_something || !at_line_end || !fixed_by_semicolon(text, before.end, next_end) {
        return None;
    }
    Some(MissingSemicolon {
        at: before.end,
        message: format!("expected ';' {}", what_it_ends(text, toks, prev)),
    })
}

/// Whether the parse gets past byte `pos` of `text` once a `;` is inserted
/// at `at` (before `pos`).
fn fixed_by_semicolon(text: &str, at: usize, pos: usize) -> bool {
    let patched = format!("{};{}", &text[..at], &text[at..]);
    match MslParser::parse(Rule::translation_unit, &patched) {
        Ok(_) => true,
        Err(e) => {
            let reached = match e.location {
                pest::error::InputLocation::Pos(p) => p,
                pest::error::InputLocation::Span((s, _)) => s,
            };
            reached > pos + 1
        }
    }
}

/// Where the statement or declaration ending with token `last` starts
/// (a token index): after the `;`, `{`, `}` or unclosed `(` before it.
fn statement_start(toks: &[Tok], last: usize) -> usize {
    let mut depth = 0usize;
    let mut i = last + 1;
    while i > 0 {
        i -= 1;
        let t = toks[i];
        match t.kind {
            Kind::Punct(b')' | b']') => depth += 1,
            Kind::Punct(b'(' | b'[') if depth == 0 => return i + 1,
            Kind::Punct(b'(' | b'[') => depth -= 1,
            // The body of the struct (or the initializer list) that the
            // `;` would follow is part of the declaration.
            Kind::Punct(b'}') if depth == 0 && i == last => i = matching_open(toks, i),
            Kind::Punct(b'{' | b'}' | b';') if depth == 0 => return i + 1,
            _ => {}
        }
    }
    0
}

/// The `{` that the `}` at token `close` closes (0 if none).
fn matching_open(toks: &[Tok], close: usize) -> usize {
    let mut depth = 0usize;
    for i in (0..close).rev() {
        if toks[i].is(b'}') {
            depth += 1;
        } else if toks[i].is(b'{') {
            if depth == 0 {
                return i;
            }
            depth -= 1;
        }
    }
    0
}

/// What encloses a statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    /// Program or namespace scope.
    TopLevel,
    /// A struct, class or union body.
    Record,
    /// A function body.
    Function,
}

/// The scope of the statement starting at token `start`.
fn scope_of(text: &str, toks: &[Tok], start: usize) -> Scope {
    let mut depth = 0usize;
    for i in (0..start).rev() {
        if toks[i].is(b'}') {
            depth += 1;
        } else if toks[i].is(b'{') {
            if depth > 0 {
                depth -= 1;
                continue;
            }
            let head_start = match i {
                0 => 0,
                _ => statement_start(toks, i - 1),
            };
            let head = &toks[head_start..i];
            let word = |w: &str| head.iter().any(|t| t.text(text) == w);
            if word("namespace") {
                return scope_of(text, toks, head_start);
            }
            let record = ["struct", "class", "union"].into_iter().any(word);
            return match record && !head.iter().any(|t| t.is(b'(')) {
                true => Scope::Record,
                false => Scope::Function,
            };
        }
    }
    Scope::TopLevel
}

/// The end of clang's message: what the `;` after token `last` ends.
fn what_it_ends(text: &str, toks: &[Tok], last: usize) -> String {
    let start = statement_start(toks, last);
    let words: Vec<&str> = toks[start..=last]
        .iter()
        .filter(|t| t.kind == Kind::Word)
        .map(|t| t.text(text))
        .collect();
    let first = words
        .iter()
        .copied()
        .find(|w| *w != "typedef")
        .unwrap_or("");
    let after = |what: &str| format!("after {what}");
    match first {
        "struct" | "class" | "union" | "enum" if toks[last].is(b'}') => after(first),
        "return" | "break" | "continue" | "goto" => after(&format!("{first} statement")),
        "do" => after("do/while statement"),
        "static_assert" => after("static_assert"),
        "using" if words.get(1) == Some(&"namespace") => after("namespace name"),
        "using" => after("alias declaration"),
        _ => match scope_of(text, toks, start) {
            Scope::TopLevel => after("top level declarator"),
            Scope::Record => "at end of declaration list".into(),
            Scope::Function if is_declaration(text, &toks[start..=last]) => {
                "at end of declaration".into()
            }
            Scope::Function => after("expression"),
        },
    }
}

/// Words that may start a declaration before its type.
const DECLARATION_PREFIXES: &[&str] = &[
    "const",
    "constexpr",
    "static",
    "thread",
    "device",
    "constant",
    "threadgroup",
    "threadgroup_imageblock",
    "volatile",
    "unsigned",
    "signed",
    "typename",
];

/// Whether a statement inside a function body declares a variable: it
/// starts with a type (a built-in one, or a name followed by the declared
/// name, possibly through `*`, `&` or `::`).
fn is_declaration(text: &str, stmt: &[Tok]) -> bool {
    let mut words = stmt
        .iter()
        .skip_while(|t| t.kind == Kind::Word && DECLARATION_PREFIXES.contains(&t.text(text)));
    let Some(first) = words.next() else {
        return false;
    };
    if first.kind != Kind::Word {
        return false;
    }
    if is_builtin_type(first.text(text)) {
        return true;
    }
    // `S s`, `S* p`, `S& r`, `ns::S s`, `vec<float, 4> v`: a name, then
    // (past pointers, references and template arguments) another name.
    let rest: Vec<&Tok> = words.collect();
    let mut i = 0;
    while rest.get(i).is_some_and(|t| t.is(b':')) && rest.get(i + 1).is_some_and(|t| t.is(b':')) {
        i += 3;
    }
    if rest.get(i).is_some_and(|t| t.is(b'<')) {
        match rest[i..].iter().position(|t| t.is(b'>')) {
            Some(close) => i += close + 1,
            None => return false,
        }
    }
    while rest.get(i).is_some_and(|t| t.is(b'*') || t.is(b'&')) {
        i += 1;
    }
    rest.get(i).is_some_and(|t| t.kind == Kind::Word)
}

/// Whether `word` is a keyword, a built-in type name or a number: words
/// that never name what a declaration declares.
pub(super) fn is_reserved_word(word: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "kernel",
        "vertex",
        "fragment",
        "struct",
        "class",
        "union",
        "enum",
        "typedef",
        "using",
        "namespace",
        "template",
        "typename",
        "inline",
        "extern",
        "return",
        "operator",
    ];
    word.starts_with(|c: char| c.is_ascii_digit())
        || KEYWORDS.contains(&word)
        || DECLARATION_PREFIXES.contains(&word)
        || is_builtin_type(word)
}

/// Whether `word` names a built-in type (scalars, vectors, matrices,
/// textures, samplers, atomics).
fn is_builtin_type(word: &str) -> bool {
    const SCALARS: &[&str] = &[
        "bool",
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "half",
        "float",
        "bfloat",
        "double",
        "size_t",
        "ptrdiff_t",
    ];
    let base = word.trim_start_matches("packed_");
    let scalar = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == 'x');
    SCALARS.contains(&scalar)
        || matches!(word, "void" | "auto" | "sampler")
        || [
            "texture", "depth", "atomic", "simd_", "vec", "matrix", "array",
        ]
        .iter()
        .any(|p| word.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::super::tokens::tokens;
    use super::*;

    fn message(text: &str) -> Option<(usize, String)> {
        let pos = match MslParser::parse(Rule::translation_unit, text) {
            Ok(_) => return None,
            Err(e) => match e.location {
                pest::error::InputLocation::Pos(p) => p,
                pest::error::InputLocation::Span((s, _)) => s,
            },
        };
        diagnose(text, &tokens(text), pos).map(|m| (m.at, m.message))
    }

    #[test]
    fn names_what_the_semicolon_ends() {
        let cases = [
            (
                "void f() { float x = 1.0\n x = 2.0; }",
                24,
                "at end of declaration",
            ),
            ("void f() { S s\n s.a = 1; }", 14, "at end of declaration"),
            ("void f() { x = 1\n y = 2; }", 16, "after expression"),
            ("float f() { return 1.0\n}", 22, "after return statement"),
            ("struct S { float a; }\nvoid f() {}", 21, "after struct"),
            (
                "struct S { float a\n float b; };",
                18,
                "at end of declaration list",
            ),
            (
                "constant float k = 1.0\nvoid f() {}",
                22,
                "after top level declarator",
            ),
        ];
        for (text, at, what) in cases {
            assert_eq!(
                message(text),
                Some((at, format!("expected ';' {what}"))),
                "{text}"
            );
        }
        // A missing `,` is not a missing `;`, nor is a `;` that only moves
        // the error to the next token.
        assert_eq!(message("void f(int a int b) {}"), None);
        assert_eq!(message("struct S { float a b; };"), None);
        // Mid-line, a `;` that makes the text parse is not the likely fix.
        assert_eq!(message("void f() { float y = (T)x;\n}"), None);
        assert_eq!(
            message("void f() { float y = 1.0 }"),
            Some((24, "expected ';' at end of declaration".into()))
        );
    }
}
