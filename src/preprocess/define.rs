//! Parsing a macro definition: the parameter list of a function-like macro
//! and the replacement list, with `#`, `##` and `__VA_OPT__` resolved into
//! [`Item`]s once, when the macro is defined.

use super::lexer::{Kind, Token};
use super::macros::{Def, Item, Tok};

/// A malformed definition: the message and the index of the token (of those
/// passed to [`parse_definition`]) it is about.
pub(crate) type DefineError = (String, usize);

type Result<T> = std::result::Result<T, DefineError>;

/// The tokens of a definition and the text they index into.
struct Parser<'a> {
    text: &'a str,
    toks: &'a [Token],
}

/// Parses a definition: `toks[0]` is the (already checked) macro name, then
/// either the body or, when `(` follows the name without a space, the
/// parameter list and the body.
pub(crate) fn parse_definition(text: &str, toks: &[Token]) -> Result<Def> {
    let p = Parser { text, toks };
    let function = toks
        .get(1)
        .is_some_and(|t| !t.space_before && p.spell(1) == "(");
    let (params, variadic, body) = if function {
        p.params(2)?
    } else {
        (Vec::new(), false, 1)
    };
    let def = Def {
        function,
        params,
        variadic,
        items: Vec::new(),
    };
    let items = p.items(&def, body, toks.len(), false)?;
    Ok(Def { items, ..def })
}

impl Parser<'_> {
    /// The spelling of token `i` (empty past the end).
    fn spell(&self, i: usize) -> &str {
        self.toks.get(i).map_or("", |t| &self.text[t.range.clone()])
    }

    /// The index to blame for a problem at `i`, which may be past the end.
    fn at(&self, i: usize) -> usize {
        i.min(self.toks.len().saturating_sub(1))
    }

    /// An error about token `i`.
    fn err<T>(&self, message: impl Into<String>, i: usize) -> Result<T> {
        Err((message.into(), self.at(i)))
    }

    /// The parameter list starting at token `i` (after `(`): the names,
    /// whether the macro is variadic, and where the body starts.
    fn params(&self, mut i: usize) -> Result<(Vec<String>, bool, usize)> {
        let mut params: Vec<String> = Vec::new();
        if self.spell(i) == ")" {
            return Ok((params, false, i + 1));
        }
        loop {
            let Some(t) = self.toks.get(i) else {
                return self.err("missing ')' in macro parameter list", i);
            };
            let name = self.spell(i).to_string();
            let mut variadic = name == "...";
            if variadic {
                params.push("__VA_ARGS__".into());
            } else if t.kind != Kind::Ident {
                return self.err("expected a parameter name", i);
            } else if name == "__VA_ARGS__" {
                let msg = "'__VA_ARGS__' can only appear in the expansion of a variadic macro";
                return self.err(msg, i);
            } else if params.contains(&name) {
                return self.err(format!("duplicate macro parameter name '{name}'"), i);
            } else {
                params.push(name);
            }
            i += 1;
            // GNU's named variable arguments: `#define F(args...)`.
            if !variadic && self.spell(i) == "..." {
                variadic = true;
                i += 1;
            }
            match self.spell(i) {
                ")" => return Ok((params, variadic, i + 1)),
                _ if i >= self.toks.len() => {
                    return self.err("missing ')' in macro parameter list", i)
                }
                _ if variadic => return self.err("missing ')' after '...'", i),
                "," => i += 1,
                _ => return self.err("expected ',' or ')' in macro parameter list", i),
            }
        }
    }

    /// The items of tokens `from..to`; `in_va_opt` inside `__VA_OPT__( )`.
    fn items(&self, def: &Def, from: usize, to: usize, in_va_opt: bool) -> Result<Vec<Item>> {
        const AT_END: &str = "'##' cannot appear at either end of a macro expansion";
        let mut items = Vec::new();
        let mut i = from;
        while i < to {
            let t = &self.toks[i];
            let s = self.spell(i);
            let space_before = t.space_before && i > from;
            if s == "##" {
                if items.is_empty() {
                    return self.err(AT_END, i);
                }
                items.push(Item::Paste);
                i += 1;
                continue;
            }
            let (item, next) = match def.function {
                true => self.function_item(def, i, to, space_before, in_va_opt)?,
                false => (None, i + 1),
            };
            let tok = || Item::Tok(Tok::new(t.kind, s, space_before));
            items.push(item.unwrap_or_else(tok));
            i = next;
        }
        if items.last() == Some(&Item::Paste) {
            return self.err(AT_END, to - 1);
        }
        Ok(items)
    }

    /// The item of a function-like macro's body at token `i` when it is a
    /// parameter, `#`, or `__VA_OPT__` (`None` for a plain token), and the
    /// index after it.
    fn function_item(
        &self,
        def: &Def,
        i: usize,
        to: usize,
        space_before: bool,
        in_va_opt: bool,
    ) -> Result<(Option<Item>, usize)> {
        let param = |j: usize| {
            let t = self.toks.get(j).filter(|_| j < to)?;
            let name = &self.text[t.range.clone()];
            (t.kind == Kind::Ident)
                .then(|| def.params.iter().position(|p| p == name))
                .flatten()
        };
        let s = self.spell(i);
        if let Some(index) = param(i) {
            return Ok((
                Some(Item::Param {
                    index,
                    space_before,
                }),
                i + 1,
            ));
        }
        if s == "#" {
            let Some(index) = param(i + 1) else {
                return self.err("'#' is not followed by a macro parameter", i);
            };
            return Ok((
                Some(Item::Stringize {
                    index,
                    space_before,
                }),
                i + 2,
            ));
        }
        if s == "__VA_OPT__" && def.variadic {
            if in_va_opt {
                return self.err("'__VA_OPT__' cannot be nested", i);
            }
            let close = self.va_opt_close(i, to)?;
            let items = self.items(def, i + 2, close, true)?;
            return Ok((
                Some(Item::VaOpt {
                    items,
                    space_before,
                }),
                close + 1,
            ));
        }
        Ok((None, i + 1))
    }

    /// The index of the `)` that closes `__VA_OPT__(` at token `i`.
    fn va_opt_close(&self, i: usize, to: usize) -> Result<usize> {
        if self.spell(i + 1) != "(" || i + 1 >= to {
            return self.err("missing '(' after '__VA_OPT__'", i);
        }
        let mut depth = 0usize;
        for j in i + 1..to {
            match self.spell(j) {
                "(" => depth += 1,
                ")" if depth == 1 => return Ok(j),
                ")" => depth -= 1,
                _ => {}
            }
        }
        self.err("unterminated '__VA_OPT__'", i)
    }
}
