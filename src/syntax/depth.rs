//! Nesting limits checked on the parse tree before the AST is built.
//!
//! The AST builder and every later stage recurse once per nesting level,
//! so input nested deeply without brackets (which `check_nesting` already
//! limits) could exhaust any stack: 20 000 nested `?:` did. The parse tree
//! is walked here without recursion, and three kinds of depth are limited:
//! - the WGSL brace levels statements become: naga's WGSL parser (and
//!   so the check of our own output) allows 127. Measured on naga's
//!   writer: a `for` becomes 3 levels (`loop`, its condition's `if`, the
//!   body), `while`, `do` and `switch` 2, `if` (and each `else if` of a
//!   chain) and a block inside a block 1;
//! - conditional operators `?:` inside one another (a chain
//!   `a ? b : c ? d : e` nests too);
//! - the depth of expression trees: `a + b + ... + z` is flat in the
//!   parse tree but as deep as it has operands in the AST, and each level
//!   costs lowering about 8 KiB of stack in a debug build;
//! - any nesting of the grammar at all, as a last line of defence.

use super::{Error, Rule};
use crate::diagnostics::Code;
use crate::source_map::Span;
use pest::iterators::{Pair, Pairs};

/// WGSL brace levels statements may need (127 less the function's own
/// body and the levels the kernel prologue adds).
pub const MAX_STATEMENT_LEVELS: usize = 120;
/// `?:` nested in one another.
pub const MAX_CONDITIONAL_DEPTH: usize = 256;
/// Depth of an expression tree (operators applied to the results of
/// operators): a flat sum of 100,000 terms must translate (issue #9), and
/// at about 8 KiB of stack per level in a debug build the translation
/// thread's 1 GiB stack holds 131,072 levels.
#[cfg(not(target_arch = "wasm32"))]
pub const MAX_EXPRESSION_DEPTH: usize = 131_072;
/// On wasm32 translation runs without a thread of its own, and the
/// engine's native stack bounds recursion: V8 (node 20, Chromium) runs out
/// between 2,000 and 3,000 levels of a flat sum, and a stack overflow
/// there is a JavaScript exception, not a diagnostic.
#[cfg(target_arch = "wasm32")]
pub const MAX_EXPRESSION_DEPTH: usize = 1_024;
/// Grammar rules nested in one another (64 levels of brackets need about
/// 700, 256 about 2,800; each level costs the builder a few kilobytes of
/// stack).
#[cfg(not(target_arch = "wasm32"))]
pub const MAX_RULE_DEPTH: usize = 16_384;
/// On wasm32, within the engine's stack.
#[cfg(target_arch = "wasm32")]
pub const MAX_RULE_DEPTH: usize = 4096;

/// What a parse-tree node counts towards: WGSL brace levels, or `?:`
/// nesting.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Levels(usize),
    Conditional,
    /// A flat chain of operators that becomes this many AST levels.
    Chain(usize),
    Other,
}

/// `parent` is the rule of the enclosing node, if any.
fn kind(pair: &Pair<Rule>, parent: Option<Rule>) -> Kind {
    match pair.as_rule() {
        Rule::for_stmt => Kind::Levels(3),
        Rule::while_stmt | Rule::do_stmt | Rule::switch_stmt => Kind::Levels(2),
        Rule::if_stmt => Kind::Levels(1),
        Rule::block if parent == Some(Rule::block) => Kind::Levels(1),
        // A `cond_expr` without `?` is just its operand.
        Rule::cond_expr if pair.clone().into_inner().nth(1).is_some() => Kind::Conditional,
        // `a + b + c`: operands and operators alternate.
        Rule::binary_expr | Rule::shift_expr => Kind::Chain(pair.clone().into_inner().count() / 2),
        // Prefix or postfix operators around one operand; `a, b, c`.
        Rule::unary_expr | Rule::postfix_expr | Rule::expr => {
            Kind::Chain(pair.clone().into_inner().count().saturating_sub(1))
        }
        _ => Kind::Other,
    }
}

/// Refuses a parse tree nested beyond the limits above, at the first node
/// that goes over one.
pub fn check(pairs: Pairs<Rule>) -> Result<(), Error> {
    // The enclosing nodes: where each ends, its rule and what it counts.
    let mut open: Vec<(usize, Rule, Kind)> = Vec::new();
    let (mut levels, mut conditionals, mut chain) = (0usize, 0usize, 0usize);
    for pair in pairs.flatten() {
        let span = pair.as_span();
        while open.last().is_some_and(|(end, _, _)| *end <= span.start()) {
            match open.pop().map(|(_, _, k)| k) {
                Some(Kind::Levels(n)) => levels -= n,
                Some(Kind::Conditional) => conditionals -= 1,
                Some(Kind::Chain(n)) => chain -= n,
                _ => {}
            }
        }
        let k = kind(&pair, open.last().map(|(_, r, _)| *r));
        match k {
            Kind::Levels(n) => levels += n,
            Kind::Conditional => conditionals += 1,
            Kind::Chain(n) => chain += n,
            Kind::Other => {}
        }
        open.push((span.end(), pair.as_rule(), k));
        let over = if levels > MAX_STATEMENT_LEVELS {
            Some(format!(
                "statements nested too deeply: WGSL allows 127 levels of braces, and this nesting needs more than {MAX_STATEMENT_LEVELS}"
            ))
        } else if conditionals > MAX_CONDITIONAL_DEPTH {
            Some(format!(
                "conditional operators nested too deeply (the limit is {MAX_CONDITIONAL_DEPTH} levels of `?:`)"
            ))
        } else if chain + open.len() > MAX_EXPRESSION_DEPTH {
            Some(format!(
                "expression too deep: more than {MAX_EXPRESSION_DEPTH} operators applied one to the result of another"
            ))
        } else if open.len() > MAX_RULE_DEPTH {
            Some("expression or statement nested too deeply".to_string())
        } else {
            None
        };
        if let Some(message) = over {
            let at = span.start();
            let end = (at + 1).min(span.end()).max(at);
            let mut error = Error::coded(Code::NestingTooDeep, Span::new(at, end), message);
            if levels > MAX_STATEMENT_LEVELS {
                error.message +=
                    " (a `for` takes 3, `while`, `do` and `switch` 2, `if` and each `else if` 1)";
            }
            return Err(error);
        }
    }
    Ok(())
}

/// Right-nested constructs a WebAssembly build lets through before pest:
/// `?:`, `if`/`else`/loops without braces, assignment chains.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub const MAX_UNBRACED_CHAIN: usize = 256;

/// Counts, on the raw text, how many right-nesting constructs follow one
/// another without a brace or the end of a statement between them (a `;`
/// followed by `else` continues an `if`/`else` chain), and refuses more
/// than `limit`.
///
/// pest's parser recurses once per level of such nesting. Natively the
/// translation thread's stack absorbs thousands of levels and the exact
/// limits are checked on the parse tree ([`check`]); in WebAssembly the
/// engine's native stack (V8: about 1 MB) runs out first, as a JavaScript
/// `RangeError` rather than a diagnostic, so this conservative scan runs
/// before the parser there.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn check_unbraced_chains(text: &str, limit: usize) -> Result<(), Error> {
    let bytes = text.as_bytes();
    let mut chain = 0usize;
    // `;` inside parentheses (a `for` header) ends nothing.
    let mut parens = 0usize;
    let mut i = 0;
    let refuse = |at: usize, chain: &mut usize| -> Result<(), Error> {
        *chain += 1;
        if *chain <= limit {
            return Ok(());
        }
        Err(Error::coded(
            Code::NestingTooDeep,
            Span::new(at, at + 1),
            format!(
                "statements or `?:` nested too deeply for this build (the limit is {limit} \
                 unbraced levels in WebAssembly)"
            ),
        ))
    };
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'{' | b'}' => chain = 0,
            b'(' => parens += 1,
            b')' => parens = parens.saturating_sub(1),
            b';' if parens == 0 => {
                let rest = text[i + 1..].trim_start();
                let continues = rest.starts_with("else")
                    && !rest[4..].starts_with(|c: char| c.is_alphanumeric() || c == '_');
                if !continues {
                    chain = 0;
                }
            }
            b'"' => {
                // Skip a string literal (attribute arguments).
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += 1;
                }
            }
            b'?' => refuse(i, &mut chain)?,
            b'=' => {
                let before = if i > 0 { bytes[i - 1] } else { b' ' };
                let after = bytes.get(i + 1).copied().unwrap_or(b' ');
                let comparison = after == b'=' || matches!(before, b'=' | b'!' | b'<' | b'>');
                if !comparison {
                    refuse(i, &mut chain)?;
                }
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                if matches!(&text[start..i], "if" | "else" | "for" | "while" | "do") {
                    refuse(start, &mut chain)?;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod unbraced_chain_tests {
    use super::check_unbraced_chains;

    fn deepest_allowed(text: &str) -> bool {
        check_unbraced_chains(text, 8).is_ok()
    }

    #[test]
    fn chains_longer_than_the_limit_are_refused() {
        assert!(!deepest_allowed(&format!(
            "x = {}1{};",
            "c ? ".repeat(9),
            " : 2".repeat(9)
        )));
        assert!(!deepest_allowed(&"if (c) ".repeat(9)));
        assert!(!deepest_allowed(&"if (c) x = 1; else ".repeat(5)));
        assert!(!deepest_allowed(&format!("{}1;", "x = ".repeat(9))));
        assert!(!deepest_allowed(&"for (;;) ".repeat(9)));
    }

    #[test]
    fn ordinary_code_is_not_a_chain() {
        // Statements, braces and comparisons end or do not start a chain.
        assert!(deepest_allowed(&"if (a == b) { x = 1; } ".repeat(100)));
        assert!(deepest_allowed(&"x = y <= z; ".repeat(100)));
        assert!(deepest_allowed(&"elsewhere = 1; ".repeat(100)));
        assert!(deepest_allowed(
            "[[host_name(\"a=b?c\")]] kernel void k() {}"
        ));
    }
}
