//! The integer constant expressions of `#if` and `#elif`.
//!
//! The tokens arrive macro-expanded (with `defined` operands left alone). The
//! evaluator follows C: values are `intmax_t` or `uintmax_t` (here `i64` and
//! `u64`, an unsigned operand making the operation unsigned), `&&`, `||` and
//! `?:` evaluate only the operand they need, so `0 && 1 / 0` is no error.

use super::lexer::Kind;
use super::macros::Expanded;
use std::ops::Range;

/// What an expression asks about its surroundings.
pub(crate) trait Env {
    /// Whether `name` is a macro.
    fn is_defined(&self, name: &str) -> bool;
    /// Whether `#include` (or, with `next`, `#include_next`) of `name`
    /// would find a file.
    fn has_include(&self, name: &str, angled: bool, next: bool) -> bool;
}

/// An error: the message and the file range it is about.
pub(crate) type ExprError = (String, Range<usize>);

type Result<T> = std::result::Result<T, ExprError>;

/// A value of the preprocessor's integer arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Value {
    /// The bits, as signed.
    pub v: i64,
    /// Whether the value has an unsigned type.
    pub unsigned: bool,
}

impl Value {
    /// A signed value (the type of comparisons and logical operators).
    fn int(v: i64) -> Self {
        Value { v, unsigned: false }
    }

    /// 1 for true, 0 for false.
    fn truth(b: bool) -> Self {
        Value::int(b as i64)
    }
}

/// How deeply parentheses and unary operators may nest, so that a hostile
/// expression cannot overflow the stack.
const MAX_NESTING: usize = 256;

/// Evaluates the expanded tokens of an `#if`; `end` is the file offset where
/// the expression ends, for "expected value" errors. `toks` must not be empty.
pub(crate) fn evaluate(toks: &[Expanded], env: &dyn Env, end: usize) -> Result<Value> {
    let mut p = Parser {
        toks,
        pos: 0,
        env,
        end,
        depth: 0,
    };
    let v = p.conditional(true)?;
    match p.peek() {
        Some(t) => Err(bad_operator(t)),
        None => Ok(v),
    }
}

/// The error for a token where a binary operator should be.
fn bad_operator(t: &Expanded) -> ExprError {
    let msg = "token is not a valid binary operator in a preprocessor subexpression";
    (msg.to_string(), t.loc.clone())
}

/// The binary operators, by spelling: precedence (higher binds tighter).
fn precedence(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}

/// A recursive-descent parser that evaluates as it parses. `live` is false
/// inside an operand whose value is not needed.
struct Parser<'a> {
    toks: &'a [Expanded],
    pos: usize,
    env: &'a dyn Env,
    end: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    /// The current token.
    fn peek(&self) -> Option<&'a Expanded> {
        self.toks.get(self.pos)
    }

    /// The current token's spelling.
    fn peek_text(&self) -> Option<&'a str> {
        self.peek().map(|t| &*t.tok.text)
    }

    /// Where the current token is (the end of the expression after the last).
    fn here(&self) -> Range<usize> {
        self.peek().map_or(self.end..self.end, |t| t.loc.clone())
    }

    /// Consumes `text` or fails with `message`.
    fn expect(&mut self, text: &str, message: &str) -> Result<()> {
        if self.peek_text() != Some(text) {
            return Err((message.to_string(), self.here()));
        }
        self.pos += 1;
        Ok(())
    }

    /// Counts one level of nesting.
    fn nest(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            let msg = "preprocessor expression nested too deeply";
            return Err((msg.to_string(), self.here()));
        }
        Ok(())
    }

    /// `a ? b : c` (right-associative) over a binary expression.
    fn conditional(&mut self, live: bool) -> Result<Value> {
        let cond = self.binary(1, live)?;
        if self.peek_text() != Some("?") {
            return Ok(cond);
        }
        self.pos += 1;
        self.nest()?;
        let yes = cond.v != 0;
        let a = self.conditional(live && yes)?;
        self.expect(":", "expected ':' in preprocessor expression")?;
        let b = self.conditional(live && !yes)?;
        self.depth -= 1;
        let v = if yes { a.v } else { b.v };
        Ok(Value {
            v,
            unsigned: a.unsigned || b.unsigned,
        })
    }

    /// Binary operators of precedence `min` and tighter, by precedence climbing.
    fn binary(&mut self, min: u8, live: bool) -> Result<Value> {
        let mut lhs = self.unary(live)?;
        while let Some(op) = self.peek() {
            let Some(prec) = precedence(&op.tok.text).filter(|&p| p >= min) else {
                break;
            };
            self.pos += 1;
            let op_text = &*op.tok.text;
            let rhs_live = match op_text {
                "&&" => live && lhs.v != 0,
                "||" => live && lhs.v == 0,
                _ => live,
            };
            let rhs = self.binary(prec + 1, rhs_live)?;
            lhs = apply(op_text, lhs, rhs, live).map_err(|m| (m.to_string(), op.loc.clone()))?;
        }
        Ok(lhs)
    }

    /// `! ~ - +` and primaries.
    fn unary(&mut self, live: bool) -> Result<Value> {
        let Some(op @ ("!" | "~" | "-" | "+")) = self.peek_text() else {
            return self.primary(live);
        };
        self.pos += 1;
        self.nest()?;
        let v = self.unary(live)?;
        self.depth -= 1;
        Ok(match op {
            "!" => Value::truth(v.v == 0),
            "~" => Value { v: !v.v, ..v },
            "-" => Value {
                v: v.v.wrapping_neg(),
                ..v
            },
            _ => v,
        })
    }

    /// Numbers, characters, identifiers and parenthesized expressions.
    fn primary(&mut self, live: bool) -> Result<Value> {
        let Some(t) = self.peek() else {
            return Err(("expected value in expression".to_string(), self.here()));
        };
        self.pos += 1;
        let located = |m: String| (m, t.loc.clone());
        match t.tok.kind {
            Kind::Number => parse_number(&t.tok.text).map_err(located),
            Kind::Char => parse_char(&t.tok.text).map_err(located),
            Kind::Ident => self.identifier(t),
            Kind::Punct if &*t.tok.text == "(" => {
                self.nest()?;
                let v = self.conditional(live)?;
                match self.peek() {
                    Some(c) if &*c.tok.text == ")" => self.pos += 1,
                    Some(c) => return Err(bad_operator(c)),
                    None => {
                        let msg = "expected ')' in preprocessor expression";
                        return Err((msg.to_string(), self.here()));
                    }
                }
                self.depth -= 1;
                Ok(v)
            }
            _ => {
                let msg = "invalid token at start of a preprocessor expression";
                Err(located(msg.to_string()))
            }
        }
    }

    /// An identifier: `defined`, `true`/`false` (C++), `__has_include`, other
    /// `__has_*` feature tests (all false), or anything else (0).
    fn identifier(&mut self, t: &Expanded) -> Result<Value> {
        let name = &*t.tok.text;
        match name {
            "defined" => self.defined(),
            "true" => Ok(Value::int(1)),
            "false" => Ok(Value::int(0)),
            "__has_include" => self.has_include(false),
            "__has_include_next" => self.has_include(true),
            _ if name.starts_with("__has_") && self.peek_text() == Some("(") => {
                self.skip_group()?;
                Ok(Value::int(0))
            }
            _ => Ok(Value::int(0)),
        }
    }

    /// The operand of `defined`: `X` or `( X )`.
    fn defined(&mut self) -> Result<Value> {
        let paren = self.peek_text() == Some("(");
        if paren {
            self.pos += 1;
        }
        let name = match self.peek() {
            Some(n) if n.tok.kind == Kind::Ident => &*n.tok.text,
            _ => return Err(("macro name missing".to_string(), self.here())),
        };
        self.pos += 1;
        if paren {
            self.expect(")", "missing ')' after 'defined'")?;
        }
        Ok(Value::truth(self.env.is_defined(name)))
    }

    /// `__has_include("file")` or `__has_include(<file>)` (with `next`,
    /// `__has_include_next`).
    fn has_include(&mut self, next: bool) -> Result<Value> {
        self.expect("(", "missing '(' after '__has_include'")?;
        let (name, angled) = match self.peek() {
            Some(s) if s.tok.kind == Kind::Str => {
                self.pos += 1;
                (s.tok.text.trim_matches('"').to_string(), false)
            }
            Some(s) if &*s.tok.text == "<" => {
                self.pos += 1;
                let mut name = String::new();
                while let Some(p) = self.peek().filter(|p| &*p.tok.text != ">") {
                    name.push_str(&p.tok.text);
                    self.pos += 1;
                }
                self.expect(">", "expected '>'")?;
                (name, true)
            }
            _ => {
                let msg = "expected \"FILENAME\" or <FILENAME>";
                return Err((msg.to_string(), self.here()));
            }
        };
        self.expect(")", "missing ')' after '__has_include'")?;
        Ok(Value::truth(self.env.has_include(&name, angled, next)))
    }

    /// Skips a balanced parenthesized group starting at the current `(`.
    fn skip_group(&mut self) -> Result<()> {
        let mut depth = 0usize;
        while let Some(t) = self.peek() {
            self.pos += 1;
            match &*t.tok.text {
                "(" => depth += 1,
                ")" if depth == 1 => return Ok(()),
                ")" => depth -= 1,
                _ => {}
            }
        }
        let msg = "expected ')' in preprocessor expression";
        Err((msg.to_string(), self.here()))
    }
}

/// Applies binary operator `op`. `live` says whether the result is needed
/// (division by zero is only an error then).
fn apply(op: &str, a: Value, b: Value, live: bool) -> std::result::Result<Value, &'static str> {
    let unsigned = a.unsigned || b.unsigned;
    let (ua, ub) = (a.v as u64, b.v as u64);
    let compare = |ord: std::cmp::Ordering| {
        let real = if unsigned { ua.cmp(&ub) } else { a.v.cmp(&b.v) };
        Value::truth(real == ord)
    };
    let arith = |v: i64| Value { v, unsigned };
    Ok(match op {
        "||" => Value::truth(a.v != 0 || b.v != 0),
        "&&" => Value::truth(a.v != 0 && b.v != 0),
        "|" => arith(a.v | b.v),
        "^" => arith(a.v ^ b.v),
        "&" => arith(a.v & b.v),
        "==" => Value::truth(a.v == b.v),
        "!=" => Value::truth(a.v != b.v),
        "<" => compare(std::cmp::Ordering::Less),
        ">" => compare(std::cmp::Ordering::Greater),
        "<=" => Value::truth(compare(std::cmp::Ordering::Greater).v == 0),
        ">=" => Value::truth(compare(std::cmp::Ordering::Less).v == 0),
        "<<" | ">>" => shift(op == "<<", a, b),
        "+" => arith(a.v.wrapping_add(b.v)),
        "-" => arith(a.v.wrapping_sub(b.v)),
        "*" => arith(a.v.wrapping_mul(b.v)),
        "/" | "%" => return divide(op == "/", a, b, live),
        _ => unreachable!("not a binary operator: {op}"),
    })
}

/// `a << b` or `a >> b`; the result has the left operand's type.
fn shift(left: bool, a: Value, b: Value) -> Value {
    let amount = u32::try_from(b.v).ok().filter(|&n| n < 64);
    let v = match (amount, left, a.unsigned) {
        (Some(n), true, _) => a.v.wrapping_shl(n),
        (Some(n), false, true) => ((a.v as u64) >> n) as i64,
        (Some(n), false, false) => a.v >> n,
        // Out-of-range shifts are undefined in C; give the natural limit.
        (None, false, false) if a.v < 0 => -1,
        (None, _, _) => 0,
    };
    Value { v, ..a }
}

/// `a / b` or `a % b`.
fn divide(div: bool, a: Value, b: Value, live: bool) -> std::result::Result<Value, &'static str> {
    let unsigned = a.unsigned || b.unsigned;
    if b.v == 0 {
        if !live {
            return Ok(Value { v: 0, unsigned });
        }
        return Err(if div {
            "division by zero in preprocessor expression"
        } else {
            "remainder by zero in preprocessor expression"
        });
    }
    let v = match (unsigned, div) {
        (true, true) => ((a.v as u64) / (b.v as u64)) as i64,
        (true, false) => ((a.v as u64) % (b.v as u64)) as i64,
        (false, true) => a.v.wrapping_div(b.v),
        (false, false) => a.v.wrapping_rem(b.v),
    };
    Ok(Value { v, unsigned })
}

/// Parses an integer literal: decimal, `0x` hex, `0b` binary or octal, with
/// `'` separators and `u`/`l`/`ll` suffixes.
pub(crate) fn parse_number(text: &str) -> std::result::Result<Value, String> {
    let clean: String = text.chars().filter(|&c| c != '\'').collect();
    let lower = clean.to_ascii_lowercase();
    let (radix, skip) = if lower.starts_with("0x") {
        (16, 2)
    } else if lower.starts_with("0b") {
        (2, 2)
    } else if lower.starts_with('0') {
        (8, 1)
    } else {
        (10, 0)
    };
    let body = &lower[skip..];
    let digit_len = body
        .bytes()
        .take_while(|b| {
            if radix == 16 {
                b.is_ascii_hexdigit()
            } else {
                b.is_ascii_digit()
            }
        })
        .count();
    let (digits, suffix) = body.split_at(digit_len);
    let float = suffix.starts_with('.')
        || (radix == 16 && suffix.starts_with('p'))
        || (radix <= 10 && suffix.starts_with('e'));
    if float {
        return Err("floating point literal in preprocessor expression".into());
    }
    if !matches!(suffix, "" | "u" | "l" | "ul" | "lu" | "ll" | "ull" | "llu")
        || (digits.is_empty() && skip == 2)
    {
        let original = &clean[skip + digit_len..];
        let shown = if digits.is_empty() && skip == 2 {
            &clean[1..]
        } else {
            original
        };
        return Err(format!("invalid suffix '{shown}' on integer constant"));
    }
    let mut value: u64 = 0;
    for d in digits.chars() {
        let Some(n) = d.to_digit(radix) else {
            let base = if radix == 8 { "octal" } else { "binary" };
            return Err(format!("invalid digit '{d}' in {base} constant"));
        };
        value = value
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(n)))
            .ok_or("integer literal is too large to be represented in any integer type")?;
    }
    Ok(Value {
        v: value as i64,
        unsigned: suffix.contains('u') || value > i64::MAX as u64,
    })
}

/// Parses a character literal: one character or one simple, octal or hex escape.
pub(crate) fn parse_char(text: &str) -> std::result::Result<Value, String> {
    let bad = || "invalid character literal in preprocessor expression".to_string();
    let inner = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .ok_or_else(bad)?;
    let mut chars = inner.chars();
    let v = match (chars.next(), chars.as_str()) {
        (Some('\\'), rest) => escape(rest).ok_or_else(bad)?,
        (Some(c), "") => c as i64,
        _ => return Err(bad()),
    };
    Ok(Value::int(v))
}

/// The value of escape sequence `rest` (the text after the backslash).
fn escape(rest: &str) -> Option<i64> {
    let simple = match rest {
        "n" => Some(10),
        "t" => Some(9),
        "r" => Some(13),
        "a" => Some(7),
        "b" => Some(8),
        "f" => Some(12),
        "v" => Some(11),
        "\\" | "'" | "\"" | "?" => rest.chars().next().map(|c| c as i64),
        _ => None,
    };
    if simple.is_some() {
        return simple;
    }
    if let Some(hex) = rest.strip_prefix('x') {
        return i64::from_str_radix(hex, 16).ok();
    }
    if (1..=3).contains(&rest.len()) {
        return i64::from_str_radix(rest, 8).ok();
    }
    None
}
