//! Parsing: pest (`grammar.pest`) → [`ast`] with spans.

pub mod ast;
mod depth;
pub(crate) mod from_pest;
mod recovery;
mod semicolon;
mod tokens;

pub use from_pest::members;
pub use recovery::{parse_recovering, Recovered};

use crate::diagnostics::Code;
use crate::source_map::Span;
use pest::Parser as _;

/// The pest parser generated from `grammar.pest`.
#[derive(pest_derive::Parser)]
#[grammar = "../grammar.pest"]
pub(crate) struct MslParser;

/// Deepest bracket nesting accepted: clang's default (`-fbracket-depth`,
/// 256), which Tint's output of deeply nested WGSL reaches (126 levels of
/// `{` and `(`). Deeper input would exhaust the stack of the
/// recursive-descent parser, so it is refused with a diagnostic first; the
/// translation thread's 1 GiB stack holds this depth with room to spare
/// (tests/hostile_input.rs runs it in a debug build). Statements have
/// their own, lower limit (WGSL's braces: `depth::MAX_STATEMENT_LEVELS`).
#[cfg(not(target_arch = "wasm32"))]
pub const MAX_NESTING_DEPTH: usize = 256;
/// On wasm32 translation runs on the engine's stack, which bounds
/// recursion (see `depth::MAX_EXPRESSION_DEPTH`): the former limit stays.
#[cfg(target_arch = "wasm32")]
pub const MAX_NESTING_DEPTH: usize = 64;

/// A syntax error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// Where.
    pub span: Span,
    /// Message, rustc/clang style.
    pub message: String,
    /// The stable code, chosen where the error is made (docs/DIAGNOSTICS.md).
    pub code: crate::diagnostics::Code,
}

impl Error {
    /// An error of kind `code` at `span`: every diagnostic names its stable
    /// code where it is made (docs/DIAGNOSTICS.md).
    pub fn coded(code: crate::diagnostics::Code, span: Span, message: impl Into<String>) -> Self {
        Error {
            span,
            message: message.into(),
            code,
        }
    }
}

/// Parses a preprocessed translation unit; the first syntax error is the
/// error ([`parse_recovering`] finds them all). The parser recurses once
/// per bracket level, up to 100 KiB of stack each in a debug build: input
/// nested up to [`MAX_NESTING_DEPTH`] needs tens of MiB, which the
/// library's translation thread has (call it there, or on a thread of at
/// least 64 MiB).
pub fn parse(text: &str) -> Result<ast::TranslationUnit, Error> {
    parse_once(text).map_err(|f| f.error)
}

/// One parse of `text`, stopping at its first error.
fn parse_once(text: &str) -> Result<ast::TranslationUnit, recovery::Failed> {
    check_nesting(text)?;
    #[cfg(target_arch = "wasm32")]
    depth::check_unbraced_chains(text, depth::MAX_UNBRACED_CHAIN)?;
    let pairs = MslParser::parse(Rule::translation_unit, text).map_err(|e| {
        let pos = match e.location {
            pest::error::InputLocation::Pos(p) => p,
            pest::error::InputLocation::Span((s, _)) => s,
        };
        // A missing `;` is said as clang says it, where clang says it.
        recovery::missing_semicolon(text, pos).unwrap_or_else(|| describe(e, text).into())
    })?;
    depth::check(pairs.clone())?;
    Ok(from_pest::translation_unit(pairs)?)
}

/// Refuses bracket nesting deeper than [`MAX_NESTING_DEPTH`].
fn check_nesting(text: &str) -> Result<(), Error> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING_DEPTH {
                    return Err(Error::coded(
                        Code::NestingTooDeep,
                        Span::new(i, i + 1),
                        format!(
                            "brackets nested too deeply (the limit is {MAX_NESTING_DEPTH} levels)"
                        ),
                    ));
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// A rule's meaning in words, for "expected ..." messages.
fn rule_words(rule: Rule) -> Option<&'static str> {
    use Rule::*;
    Some(match rule {
        EOI => "end of file",
        ident | path | name | attr_name => "an identifier",
        type_spec | base_type | cast_type_spec | builtin_type_name | multiword_type => "a type",
        expr | assign_expr | cond_expr | binary_expr | unary_expr | postfix_expr | shift_expr
        | attr_arg | paren_expr | float_lit | int_lit | bool_lit | cast_call | templated_name
        | brace_construct | prefix_op | c_cast => "an expression",
        block => "`{`",
        statement | decl_stmt | expr_stmt | empty_stmt | if_stmt | for_stmt | while_stmt
        | do_stmt | switch_stmt | break_stmt | continue_stmt | return_stmt => "a statement",
        init_list => "`{`",
        call_args | paren_init => "`(`",
        index | array_suffix => "`[`",
        member => "`.`",
        arrow => "`->`",
        attributes => "`[[`",
        assign_op => "`=`",
        op_lor | op_land | op_bor | op_bxor | op_band | op_eq | op_ne | op_le | op_ge | op_shl
        | op_shr | op_lt | op_gt | op_add | op_sub | op_mul | op_div | op_mod => "an operator",
        ptr_op | pointer | reference => "`*` or `&`",
        template_args => "`<`",
        struct_decl | struct_kw => "`struct`",
        function_def | global_decl | using_namespace | using_alias | typedef_decl | empty_decl => {
            "a declaration"
        }
        fn_declaration_end => "`;`",
        case_label | case_kw | default_kw => "`case` or `default`",
        else_kw => "`else`",
        while_kw => "`while`",
        param | param_list => "a parameter",
        member_decl => "a member declaration",
        cv => "`const`",
        address_space => "an address space",
        fn_specifier => "a function specifier",
        _ => return None,
    })
}

/// Turns a pest error into a located message in words.
fn describe(err: pest::error::Error<Rule>, text: &str) -> Error {
    let pos = match err.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    let mut expected: Vec<&str> = match &err.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => {
            positives.iter().filter_map(|r| rule_words(*r)).collect()
        }
        pest::error::ErrorVariant::CustomError { .. } => Vec::new(),
    };
    expected.sort();
    expected.dedup();
    let found = token_at(text, pos);
    let wanted = match expected.len() {
        0 => "something else".to_string(),
        1 => expected[0].to_string(),
        n => format!("{} or {}", expected[..n - 1].join(", "), expected[n - 1]),
    };
    let span = Span::new(
        pos,
        (pos + found.len())
            .max(pos + 1)
            .min(text.len().max(pos + 1)),
    );
    let found_words = if found.is_empty() {
        "end of file".to_string()
    } else {
        format!("`{found}`")
    };
    Error::coded(
        Code::Syntax,
        span,
        format!("expected {wanted}, found {found_words}"),
    )
}

/// The token starting at `pos`, for "found `x`".
fn token_at(text: &str, pos: usize) -> &str {
    let rest = &text[pos.min(text.len())..];
    let first = match rest.chars().next() {
        Some(c) => c,
        None => return "",
    };
    let len = if first.is_alphanumeric() || first == '_' {
        rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len())
    } else {
        first.len_utf8()
    };
    &rest[..len]
}

#[cfg(test)]
mod tests;
