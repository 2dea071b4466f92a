//! The reference-formula language of conformance cases: a C-like expression
//! evaluated on the CPU once per output element.
//!
//! Grammar, loosest binding first (as in C):
//!
//! ```text
//! expr    := or ('?' expr ':' expr)?
//! or      := and ('||' and)*
//! and     := eq ('&&' eq)*
//! eq      := rel (('==' | '!=') rel)*
//! rel     := add (('<' | '<=' | '>' | '>=') add)*
//! add     := mul (('+' | '-') mul)*
//! mul     := unary (('*' | '/' | '%') unary)*
//! unary   := ('-' | '+' | '!') unary | primary
//! primary := NUMBER | 'i' | 'pi' | 'b' INDEX '[' expr ']' | NAME '(' expr (',' expr)* ')'
//!          | '(' expr ')'
//! ```
//!
//! See `fixtures/cases/README.md` for the typing rules.

use super::data::{ElemType, Value};

/// A parsed formula.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A literal.
    Number(Value),
    /// The element index `i`.
    Index,
    /// `b<N>[index]`: element of input buffer N.
    Buffer(u32, Box<Expr>),
    /// A unary operator.
    Unary(char, Box<Expr>),
    /// A binary operator (`+`, `<=`, `&&`, ...).
    Binary(&'static str, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A function call.
    Call(String, Vec<Expr>),
}

/// Where a formula reads buffers from.
pub trait Buffers {
    /// Element `k` of buffer `index`, or an error naming what is wrong.
    fn element(&self, index: u32, k: i64) -> Result<Value, String>;
}

const BINARY_LEVELS: &[&[&str]] = &[
    &["||"],
    &["&&"],
    &["==", "!="],
    &["<=", ">=", "<", ">"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl Expr {
    /// Parses a formula.
    pub fn parse(text: &str) -> Result<Expr, String> {
        let mut p = Parser { text, pos: 0 };
        let e = p.expr()?;
        p.skip_space();
        if p.pos < text.len() {
            return Err(p.error("unexpected text"));
        }
        Ok(e)
    }

    /// Evaluates for element `i`. With `float` set (the expected type is a
    /// float type) every number, `i` and buffer element becomes a float;
    /// otherwise integers stay integers until an operand is a float.
    /// Indices inside `b<N>[...]` are always evaluated with integers.
    pub fn eval(&self, i: i64, float: bool, buffers: &dyn Buffers) -> Result<Value, String> {
        let promote = |v: Value| if float { Value::Float(v.as_f64()) } else { v };
        Ok(match self {
            Expr::Number(v) => promote(*v),
            Expr::Index => promote(Value::Int(i)),
            Expr::Buffer(n, index) => {
                let k = match index.eval(i, false, buffers)? {
                    Value::Int(k) => k,
                    Value::Float(f) => {
                        return Err(format!("b{n}[{f}]: the index is not an integer"))
                    }
                };
                promote(buffers.element(*n, k)?)
            }
            Expr::Unary(op, a) => unary(*op, a.eval(i, float, buffers)?),
            Expr::Binary(op, a, b) => {
                binary(op, a.eval(i, float, buffers)?, b.eval(i, float, buffers)?)?
            }
            Expr::Select(c, a, b) => {
                if c.eval(i, float, buffers)?.truthy() {
                    a.eval(i, float, buffers)?
                } else {
                    b.eval(i, float, buffers)?
                }
            }
            Expr::Call(name, args) => {
                let values = args
                    .iter()
                    .map(|a| a.eval(i, float, buffers))
                    .collect::<Result<Vec<_>, _>>()?;
                call(name, &values)?
            }
        })
    }

    /// Evaluates for element `i` and converts to `ty`.
    pub fn eval_as(&self, i: i64, ty: ElemType, buffers: &dyn Buffers) -> Result<Value, String> {
        ty.convert(self.eval(i, ty.is_float(), buffers)?)
    }
}

fn unary(op: char, v: Value) -> Value {
    match (op, v) {
        ('-', Value::Int(x)) => Value::Int(x.wrapping_neg()),
        ('-', Value::Float(x)) => Value::Float(-x),
        ('!', v) => Value::Int(i64::from(!v.truthy())),
        (_, v) => v,
    }
}

fn binary(op: &str, a: Value, b: Value) -> Result<Value, String> {
    let bool_value = |c: bool| Value::Int(i64::from(c));
    match op {
        "&&" => return Ok(bool_value(a.truthy() && b.truthy())),
        "||" => return Ok(bool_value(a.truthy() || b.truthy())),
        _ => {}
    }
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return Ok(match op {
            "+" => Value::Int(x.wrapping_add(y)),
            "-" => Value::Int(x.wrapping_sub(y)),
            "*" => Value::Int(x.wrapping_mul(y)),
            "/" | "%" if y == 0 => return Err("integer division by zero".into()),
            "/" => Value::Int(x.wrapping_div(y)),
            "%" => Value::Int(x.wrapping_rem(y)),
            _ => bool_value(compare(op, x.cmp(&y))),
        });
    }
    let (x, y) = (a.as_f64(), b.as_f64());
    Ok(match op {
        "+" => Value::Float(x + y),
        "-" => Value::Float(x - y),
        "*" => Value::Float(x * y),
        "/" => Value::Float(x / y),
        "%" => Value::Float(x % y),
        _ => match x.partial_cmp(&y) {
            Some(ordering) => bool_value(compare(op, ordering)),
            // Every comparison with NaN is false, except `!=`.
            None => bool_value(op == "!="),
        },
    })
}

fn compare(op: &str, ordering: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        "==" => ordering == Equal,
        "!=" => ordering != Equal,
        "<" => ordering == Less,
        "<=" => ordering != Greater,
        ">" => ordering == Greater,
        _ => ordering != Less,
    }
}

fn call(name: &str, args: &[Value]) -> Result<Value, String> {
    let float1 = |f: fn(f64) -> f64| -> Result<Value, String> {
        match args {
            [a] => Ok(Value::Float(f(a.as_f64()))),
            _ => Err(format!("{name}() takes 1 argument, not {}", args.len())),
        }
    };
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("{name}() takes {n} arguments, not {}", args.len()))
        }
    };
    match name {
        "sqrt" => float1(f64::sqrt),
        "sin" => float1(f64::sin),
        "cos" => float1(f64::cos),
        "exp" => float1(f64::exp),
        "log" => float1(f64::ln),
        "float" => float1(|x| x),
        "floor" | "ceil" | "abs" | "int" => {
            arity(1)?;
            Ok(match (name, args[0]) {
                ("abs", Value::Int(x)) => Value::Int(x.wrapping_abs()),
                (_, Value::Int(x)) => Value::Int(x),
                ("floor", Value::Float(x)) => Value::Float(x.floor()),
                ("ceil", Value::Float(x)) => Value::Float(x.ceil()),
                ("abs", Value::Float(x)) => Value::Float(x.abs()),
                (_, Value::Float(x)) if x.is_nan() => return Err("int(NaN)".into()),
                (_, Value::Float(x)) => Value::Int(x as i64),
            })
        }
        "min" | "max" => {
            arity(2)?;
            let less = binary("<", args[0], args[1])?.truthy();
            let pick_first = less == (name == "min");
            let chosen = if pick_first { args[0] } else { args[1] };
            // Mixed int/float operands give a float, as arithmetic does.
            Ok(match (args[0], args[1]) {
                (Value::Int(_), Value::Int(_)) => chosen,
                _ => Value::Float(chosen.as_f64()),
            })
        }
        "pow" => {
            arity(2)?;
            Ok(Value::Float(args[0].as_f64().powf(args[1].as_f64())))
        }
        "clamp" => {
            arity(3)?;
            let low = call("max", &args[..2])?;
            call("min", &[low, args[2]])
        }
        _ => Err(format!("unknown function `{name}`")),
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, what: &str) -> String {
        format!("{what} at column {} of `{}`", self.pos + 1, self.text)
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn skip_space(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    /// Consumes `token` if it comes next.
    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(&format!("expected `{token}`")))
        }
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let cond = self.binary(0)?;
        if !self.eat("?") {
            return Ok(cond);
        }
        let a = self.expr()?;
        self.expect(":")?;
        let b = self.expr()?;
        Ok(Expr::Select(Box::new(cond), Box::new(a), Box::new(b)))
    }

    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        if level == BINARY_LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        'more: loop {
            for &op in BINARY_LEVELS[level] {
                // `<` must not eat the first half of `<=`, nor `!` of `!=`
                // be taken for a unary operator: operators are tried longest first.
                if self.eat(op) {
                    let right = self.binary(level + 1)?;
                    left = Expr::Binary(op, Box::new(left), Box::new(right));
                    continue 'more;
                }
            }
            return Ok(left);
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        for op in ['-', '+', '!'] {
            self.skip_space();
            if self.rest().starts_with(op) && !self.rest().starts_with("!=") {
                self.pos += 1;
                return Ok(Expr::Unary(op, Box::new(self.unary()?)));
            }
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, String> {
        self.skip_space();
        if self.eat("(") {
            let e = self.expr()?;
            self.expect(")")?;
            return Ok(e);
        }
        let rest = self.rest();
        let first = rest
            .chars()
            .next()
            .ok_or_else(|| self.error("unexpected end"))?;
        if first.is_ascii_digit() || first == '.' {
            return self.number();
        }
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(self.error("expected a number, `i`, a buffer or a function"));
        }
        let name = &rest[..len];
        self.pos += len;
        if name == "i" {
            return Ok(Expr::Index);
        }
        if name == "pi" {
            return Ok(Expr::Number(Value::Float(std::f64::consts::PI)));
        }
        if let Some(n) = name.strip_prefix('b').and_then(|n| n.parse::<u32>().ok()) {
            self.expect("[")?;
            let index = self.expr()?;
            self.expect("]")?;
            return Ok(Expr::Buffer(n, Box::new(index)));
        }
        self.expect("(")?;
        let mut args = vec![self.expr()?];
        while self.eat(",") {
            args.push(self.expr()?);
        }
        self.expect(")")?;
        Ok(Expr::Call(name.to_string(), args))
    }

    fn number(&mut self) -> Result<Expr, String> {
        let rest = self.rest();
        let bytes = rest.as_bytes();
        let mut len = 0;
        let mut float = false;
        while len < bytes.len() {
            let c = bytes[len];
            let exponent_sign =
                (c == b'+' || c == b'-') && len > 0 && matches!(bytes[len - 1], b'e' | b'E');
            if c.is_ascii_digit() || exponent_sign {
                len += 1;
            } else if c == b'.' || c == b'e' || c == b'E' {
                float = true;
                len += 1;
            } else {
                break;
            }
        }
        let text = &rest[..len];
        let value = if float {
            text.parse::<f64>().map(Value::Float).ok()
        } else {
            text.parse::<i64>().map(Value::Int).ok()
        };
        let value = value.ok_or_else(|| self.error(&format!("bad number `{text}`")))?;
        self.pos += len;
        Ok(Expr::Number(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Test;
    impl Buffers for Test {
        fn element(&self, index: u32, k: i64) -> Result<Value, String> {
            match index {
                0 => Ok(Value::Int(k * 10)),
                1 => Ok(Value::Float(k as f64 + 0.5)),
                _ => Err(format!("no buffer {index}")),
            }
        }
    }

    fn eval(text: &str, i: i64, float: bool) -> Result<Value, String> {
        Expr::parse(text)?.eval(i, float, &Test)
    }

    #[test]
    fn precedence_and_types() {
        assert_eq!(eval("1 + 2 * 3", 0, false), Ok(Value::Int(7)));
        assert_eq!(eval("(1 + 2) * 3", 0, false), Ok(Value::Int(9)));
        assert_eq!(eval("i / 2", 7, false), Ok(Value::Int(3)));
        assert_eq!(eval("i / 2", 7, true), Ok(Value::Float(3.5)));
        assert_eq!(eval("-7 / 2", 0, false), Ok(Value::Int(-3)));
        assert_eq!(eval("-7 % 3", 0, false), Ok(Value::Int(-1)));
        assert_eq!(eval("i / 2.0", 7, false), Ok(Value::Float(3.5)));
        assert_eq!(eval("2 - 3 - 4", 0, false), Ok(Value::Int(-5)));
        assert_eq!(eval("1.5e1 + 1e-1", 0, true), Ok(Value::Float(15.1)));
        assert_eq!(eval("--3", 0, false), Ok(Value::Int(3)));
    }

    #[test]
    fn comparisons_and_select() {
        assert_eq!(eval("i < 3 ? 1 : 2", 2, false), Ok(Value::Int(1)));
        assert_eq!(
            eval("i <= 3 && i != 3 ? 1 : i >= 4 ? 2 : 3", 3, false),
            Ok(Value::Int(3))
        );
        assert_eq!(eval("i >= 4 || !(i == 1)", 1, false), Ok(Value::Int(0)));
        assert_eq!(
            eval("i % 2 == 0 ? b0[i] : -b0[i]", 3, true),
            Ok(Value::Float(-30.0))
        );
    }

    #[test]
    fn buffers_and_functions() {
        assert_eq!(
            eval("b0[i + 1] + b1[i / 2]", 4, false),
            Ok(Value::Float(52.5))
        );
        // Indices stay integers in float formulas.
        assert_eq!(eval("b1[i / 2]", 5, true), Ok(Value::Float(2.5)));
        assert_eq!(
            eval("sqrt(16) + abs(-2) + min(3, i) + max(1, 2)", 1, false),
            Ok(Value::Float(9.0))
        );
        assert_eq!(
            eval("abs(-2) + min(3, i) + max(1, 2)", 1, false),
            Ok(Value::Int(5))
        );
        assert_eq!(
            eval("floor(2.7) + floor(3)", 0, false),
            Ok(Value::Float(5.0))
        );
        assert_eq!(eval("clamp(i, 2, 4)", 9, false), Ok(Value::Int(4)));
        assert_eq!(eval("int(b1[i])", 2, false), Ok(Value::Int(2)));
        let Ok(Value::Float(x)) = eval("sin(pi / 2) + cos(0) + exp(0)", 0, true) else {
            panic!()
        };
        assert!((x - 3.0).abs() < 1e-12);
    }

    #[test]
    fn errors() {
        assert!(Expr::parse("1 +").is_err());
        assert!(Expr::parse("(1").is_err());
        assert!(Expr::parse("1 2").is_err());
        assert!(Expr::parse("b0 + 1").is_err());
        assert!(eval("nope(1)", 0, false).is_err());
        assert!(eval("1 / 0", 0, false).is_err());
        assert_eq!(eval("1 / 0", 0, true), Ok(Value::Float(f64::INFINITY)));
        assert!(eval("b7[0]", 0, false).is_err());
        assert!(eval("b0[1.5]", 0, false).is_err());
        assert!(eval("sqrt(1, 2)", 0, false).is_err());
    }

    #[test]
    fn converts_to_the_expected_type() {
        let e = Expr::parse("i * 100").unwrap();
        assert_eq!(e.eval_as(3, ElemType::Uchar, &Test), Ok(Value::Int(44)));
        assert_eq!(e.eval_as(3, ElemType::Half, &Test), Ok(Value::Float(300.0)));
        let e = Expr::parse("b1[i] * 2").unwrap();
        assert_eq!(e.eval_as(1, ElemType::Int, &Test), Ok(Value::Int(3)));
    }
}
