//! Argument substitution: a macro's replacement list with its parameters
//! replaced, `#` stringized and `##` pasted (C 6.10.3.1–6.10.3.3).
//!
//! The replacement list is first cut into groups (a token, an argument, a
//! stringized argument, a `__VA_OPT__`), remembering which groups a `##`
//! joins; an argument is taken as written next to `##` and fully expanded
//! elsewhere. Then the groups are joined, pasting the last token of one onto
//! the first of the next where a `##` stands between them. An empty group is
//! C's "placemarker": pasting with it leaves the other side alone.

use super::expand::ExpandError;
use super::lexer::{tokenize, Kind};
use super::macros::{Def, Expanded, Item, Tok};
use std::ops::Range;

type Result<T> = std::result::Result<T, ExpandError>;

/// The expanded form of argument `i`, computed by the expander.
pub(crate) type ExpandArg<'a> = dyn FnMut(usize) -> Result<Vec<Expanded>> + 'a;

/// What one invocation supplies to substitution.
pub(crate) struct Invocation<'a, 'f> {
    /// The macro.
    pub def: &'a Def,
    /// The arguments as written, one per parameter.
    pub raw: &'a [Vec<Expanded>],
    /// Expands an argument (memoised by the caller).
    pub expanded: &'a mut ExpandArg<'f>,
    /// Where the tokens of the body are said to come from.
    pub loc: Range<usize>,
}

/// One piece of the replacement list after substitution.
struct Group {
    toks: Vec<Expanded>,
    /// A `##` stands between this group and the previous one.
    paste_left: bool,
    /// The group is the variable arguments (for GNU's `, ## __VA_ARGS__`).
    va_args: bool,
}

/// The replacement list of `inv.def` with the arguments substituted.
pub(crate) fn substitute(inv: &mut Invocation) -> Result<Vec<Expanded>> {
    let items = &inv.def.items;
    let groups = groups(inv, items)?;
    join_groups(groups, &inv.loc)
}

/// Cuts `items` into groups, substituting arguments.
fn groups(inv: &mut Invocation, items: &[Item]) -> Result<Vec<Group>> {
    let mut out = Vec::with_capacity(items.len());
    let mut paste = false;
    for (k, item) in items.iter().enumerate() {
        let operand = paste || matches!(items.get(k + 1), Some(Item::Paste));
        let (mut toks, space_before, va_args) = match item {
            Item::Paste => {
                paste = true;
                continue;
            }
            Item::Tok(t) => (vec![body_tok(t, &inv.loc)], t.space_before, false),
            Item::Param {
                index,
                space_before,
            } => {
                let toks = match operand {
                    true => inv.raw[*index].clone(),
                    false => (inv.expanded)(*index)?,
                };
                let def = inv.def;
                let va_args = def.variadic && *index + 1 == def.params.len();
                (toks, *space_before, va_args)
            }
            Item::Stringize {
                index,
                space_before,
            } => (
                vec![stringize(&inv.raw[*index], &inv.loc)],
                *space_before,
                false,
            ),
            Item::VaOpt {
                items,
                space_before,
            } => (va_opt(inv, items)?, *space_before, false),
        };
        if let Some(first) = toks.first_mut() {
            first.tok.space_before = space_before;
        }
        out.push(Group {
            toks,
            paste_left: paste,
            va_args,
        });
        paste = false;
    }
    Ok(out)
}

/// A token of the body, said to come from `loc`.
fn body_tok(t: &Tok, loc: &Range<usize>) -> Expanded {
    Expanded {
        tok: t.clone(),
        loc: loc.clone(),
    }
}

/// `__VA_OPT__(items)`: the substituted items when the variable arguments
/// expand to something, nothing otherwise.
fn va_opt(inv: &mut Invocation, items: &[Item]) -> Result<Vec<Expanded>> {
    let va = inv.def.params.len() - 1;
    if (inv.expanded)(va)?.is_empty() {
        return Ok(Vec::new());
    }
    let groups = groups(inv, items)?;
    join_groups(groups, &inv.loc)
}

/// Joins the groups, pasting where `##` says.
fn join_groups(groups: Vec<Group>, loc: &Range<usize>) -> Result<Vec<Expanded>> {
    let mut out: Vec<Expanded> = Vec::new();
    // How many tokens at the end of `out` the previous group (merged with
    // the groups pasted onto it) produced; 0 means a placemarker.
    let mut last_len = 0;
    for g in groups {
        let len = g.toks.len();
        if !g.paste_left {
            last_len = len;
            out.extend(g.toks);
            continue;
        }
        let after_comma = last_len > 0 && out.last().is_some_and(|e| &*e.tok.text == ",");
        if g.va_args && after_comma {
            // GNU: `, ## __VA_ARGS__` drops the comma when there are no
            // variable arguments, and pastes nothing otherwise.
            if len == 0 {
                out.pop();
            }
            last_len = len;
            out.extend(g.toks);
            continue;
        }
        let mut rest = g.toks.into_iter();
        if last_len == 0 {
            last_len = len;
        } else if let Some(first) = rest.next() {
            let left = out.pop().expect("the previous group's last token");
            out.push(paste(left, first, loc)?);
            last_len += rest.len();
        }
        out.extend(rest);
    }
    Ok(out)
}

/// Pastes `left` and `right` into one token, which must be valid.
fn paste(left: Expanded, right: Expanded, loc: &Range<usize>) -> Result<Expanded> {
    let text = format!("{}{}", left.tok.text, right.tok.text);
    let toks = tokenize(&text);
    match toks.as_slice() {
        [t] if t.range == (0..text.len()) => Ok(Expanded {
            tok: Tok::new(t.kind, text, left.tok.space_before),
            loc: loc.clone(),
        }),
        _ => Err(ExpandError::new(
            format!(
                "pasting \"{}\" and \"{}\" does not give a valid preprocessing token",
                left.tok.text, right.tok.text
            ),
            loc.clone(),
        )),
    }
}

/// `#arg`: the argument's spelling as a string literal, with one space
/// wherever it had whitespace, and `"` and `\` escaped inside its literals.
fn stringize(arg: &[Expanded], loc: &Range<usize>) -> Expanded {
    let mut s = String::from("\"");
    for (i, e) in arg.iter().enumerate() {
        if i > 0 && e.tok.space_before {
            s.push(' ');
        }
        match e.tok.kind {
            Kind::Str | Kind::Char => {
                for c in e.tok.text.chars() {
                    if c == '"' || c == '\\' {
                        s.push('\\');
                    }
                    s.push(c);
                }
            }
            _ => s.push_str(&e.tok.text),
        }
    }
    s.push('"');
    Expanded {
        tok: Tok::new(Kind::Str, s, false),
        loc: loc.clone(),
    }
}
