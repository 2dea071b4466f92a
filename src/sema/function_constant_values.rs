//! Function constants specialised at translation: the values a host gives
//! when it makes a function (Metal's `makeFunction(name:constantValues:)`
//! with `MTLFunctionConstantValues`, by index or by name), given to the
//! translator as [`FunctionConstantValues`] (`Options::function_constants`,
//! the command line's `--function-constant NAME=VALUE`).
//!
//! A constant given a value is folded as an ordinary constant wherever it
//! is read: in array sizes, `case` labels, `if constexpr`, template
//! arguments, attribute arguments, and in code (no `override` is emitted
//! for it). Constants given none stay WGSL `override`s set at pipeline
//! creation (`sema::function_constants`), except where a value is needed at
//! translation: lowering then leaves the function out of the WGSL until one
//! is given (W0415, see `lower::lower`), and reflection lists the constants
//! it waits for (`neededAtTranslation`). A constant given as
//! [`ConstantValue::Undefined`] is one the host leaves unset:
//! `is_function_constant_defined` is `false` for it at translation (MSL
//! §5.8.1: an unset constant behaves as if `is_function_constant_defined`
//! were false).

use super::consteval::ConstValue;
use super::{Error, Program, Result, Symbol};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{self, ExprKind};
use crate::types::{Scalar, Type};

/// Which function constant a value is for: its `[[function_constant(n)]]`
/// index or its name, as `MTLFunctionConstantValues` takes them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConstantKey {
    /// `n` of `[[function_constant(n)]]`.
    Index(u16),
    /// The constant's MSL name.
    Name(String),
}

impl std::fmt::Display for ConstantKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConstantKey::Index(n) => write!(f, "{n}"),
            ConstantKey::Name(name) => f.write_str(name),
        }
    }
}

/// A value given to a function constant at translation.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstantValue {
    /// A number (`true`/`false` as 1/0), converted to the constant's
    /// declared scalar type; it must fit an integer type exactly. Exact for
    /// 64-bit integers up to 2^53 in magnitude (use text beyond).
    Number(f64),
    /// Text read as the constant's declared type, as the command line gives
    /// it: `true`/`false`/`1`/`0` for `bool`, a decimal or `0x` integer,
    /// a decimal float, and a vector's components separated by commas
    /// (`4,3`).
    Text(String),
    /// The host sets no value: `is_function_constant_defined` is `false`.
    Undefined,
}

/// The values of function constants given at translation, in the order
/// given (a later value for the same constant wins, as a later
/// `setConstantValue` does). Values for constants the source does not
/// declare are ignored, as Metal ignores them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FunctionConstantValues(pub Vec<(ConstantKey, ConstantValue)>);

impl FunctionConstantValues {
    /// Sets the constant `key` to `value` (`set_constant_value`).
    pub fn set(&mut self, key: ConstantKey, value: ConstantValue) -> &mut Self {
        self.0.push((key, value));
        self
    }

    /// True when no value is given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value given for the constant `name` at `index`, if any, with
    /// the key it was given under.
    pub fn get(&self, name: &str, index: u16) -> Option<&(ConstantKey, ConstantValue)> {
        self.0.iter().rev().find(|(k, _)| match k {
            ConstantKey::Index(n) => *n == index,
            ConstantKey::Name(n) => n == name,
        })
    }
}

/// What the translation knows of a function constant's value.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Given {
    /// Nothing: the pipeline sets it (a WGSL `override`).
    #[default]
    No,
    /// The host leaves it unset.
    Undefined,
    /// Its value, of the declared type.
    Value(ConstValue),
}

/// How a user gives a value, for messages.
pub const HOW_TO_GIVE: &str = "give its value at translation: `--function-constant NAME=VALUE` (or `INDEX=VALUE`) on the command line, `Options::function_constants` in the API; the runner's pipelines translate a function with the constant values they are given";

impl Program<'_> {
    /// The value given at translation for the function constant `name`
    /// (index `index`, of scalar type `ty` with `components` components),
    /// declared at `span`.
    pub(super) fn given_function_constant(
        &self,
        name: &str,
        index: u16,
        ty: Scalar,
        components: u8,
        span: Span,
    ) -> Result<Given> {
        let Some((key, value)) = self.given_constants.get(name, index) else {
            return Ok(Given::No);
        };
        let declared = match components {
            1 => Type::Scalar(ty),
            n => Type::Vector(ty, n),
        };
        let bad = |why: String| {
            Error::coded(
                Code::InvalidFunctionConstantValue,
                span,
                format!(
                    "the value given for function constant `{name}` (`{key}={}`) {why}",
                    shown(value)
                ),
            )
            .note(format!(
                "`{name}` is declared `{}` here",
                self.display(&declared)
            ))
        };
        let parts: Vec<ConstValue> = match value {
            ConstantValue::Undefined => return Ok(Given::Undefined),
            ConstantValue::Number(v) if components == 1 => {
                vec![number(*v, ty).map_err(bad)?]
            }
            ConstantValue::Number(_) => {
                return Err(bad(format!(
                "is one number, but `{name}` has {components} components: give them as text, `x,y`"
            )))
            }
            ConstantValue::Text(text) => {
                let items: Vec<&str> = text.split(',').map(str::trim).collect();
                if items.len() != usize::from(components) {
                    return Err(bad(format!(
                        "has {} component(s), but `{name}` has {components}",
                        items.len()
                    )));
                }
                items
                    .iter()
                    .map(|t| parse(t, ty))
                    .collect::<std::result::Result<_, _>>()
                    .map_err(bad)?
            }
        };
        Ok(Given::Value(match components {
            1 => parts.into_iter().next().expect("one component"),
            _ => ConstValue::Composite(declared, parts),
        }))
    }

    /// The value of function constant `i` read at `span` where the
    /// translation needs it (an array size, a `case` label, ...): its given
    /// value, else an error saying how to give one (the function waits for
    /// it, W0415).
    pub(super) fn function_constant_value(&self, i: usize, span: Span) -> Result<ConstValue> {
        let c = &self.function_constants[i];
        match &c.given {
            Given::Value(v) => Ok(v.clone()),
            Given::Undefined => Err(Error::coded(
                Code::FunctionConstantWithoutValue,
                span,
                format!("function constant `{}` is undefined (given as `undefined`), so it has no value here", c.name),
            )),
            Given::No => {
                self.needed_constants.borrow_mut().insert(i);
                Err(Error::coded(
                    Code::FunctionConstantWithoutValue,
                    span,
                    format!("the value of function constant `{}` is needed here at translation, and none was given", c.name),
                )
                .note("array sizes, `case` labels, template and attribute arguments and `if constexpr` need values known when the WGSL is written, which a WGSL `override` is not")
                .note(HOW_TO_GIVE))
            }
        }
    }

    /// The value of `name`, a constant computed from function constants
    /// (spec constant `j`), read at `span` where the translation needs it.
    pub(super) fn spec_constant_value(
        &self,
        j: usize,
        name: &str,
        span: Span,
    ) -> Result<ConstValue> {
        let c = &self.spec_constants[j];
        let value = super::consteval::eval(self, c.init).map_err(|e| match e.code {
            Code::FunctionConstantWithoutValue => Error::coded(
                e.code,
                span,
                format!("`{name}` is computed from function constants, whose values are needed here at translation: {}", e.message),
            )
            .note(HOW_TO_GIVE),
            _ => e,
        })?;
        match &c.ty {
            Type::Scalar(s) => super::consteval::convert_scalar(&value, *s).ok_or_else(|| {
                Error::coded(
                    Code::NotConstant,
                    span,
                    format!("`{name}` cannot be computed here"),
                )
            }),
            _ => Ok(value),
        }
    }

    /// `is_function_constant_defined(name)` where the translation needs
    /// its value: true for a constant given a value, false for one given as
    /// undefined, else an error (the function waits for the value).
    pub(super) fn is_defined_value(&self, args: &[ast::Expr], span: Span) -> Result<ConstValue> {
        let i = match args {
            [ast::Expr {
                kind: ExprKind::Name(path),
                ..
            }] if path.len() == 1 => match self.symbols.get(&path[0]) {
                Some(Symbol::FunctionConstant(i)) => *i,
                _ => {
                    return Err(Error::coded(
                        Code::InvalidBuiltinArgument,
                        args[0].span,
                        format!(
                            "`{}` is not a function constant (`[[function_constant(n)]]`)",
                            path[0]
                        ),
                    ))
                }
            },
            _ => {
                return Err(Error::coded(
                    Code::InvalidBuiltinArgument,
                    span,
                    format!(
                        "`{}` takes the name of a function constant",
                        super::function_constants::IS_DEFINED
                    ),
                ))
            }
        };
        let c = &self.function_constants[i];
        match c.given {
            Given::Value(_) => Ok(ConstValue::Bool(true)),
            Given::Undefined => Ok(ConstValue::Bool(false)),
            Given::No => {
                self.needed_constants.borrow_mut().insert(i);
                Err(Error::coded(
                    Code::FunctionConstantWithoutValue,
                    span,
                    format!("whether function constant `{}` is defined is needed here at translation, and no value (nor `undefined`) was given", c.name),
                )
                .note(HOW_TO_GIVE))
            }
        }
    }
}

/// How the user wrote `value`, for messages.
fn shown(value: &ConstantValue) -> String {
    match value {
        ConstantValue::Number(v) => v.to_string(),
        ConstantValue::Text(t) => t.clone(),
        ConstantValue::Undefined => "undefined".into(),
    }
}

/// `v` as a value of scalar type `ty`: an integer type takes only whole
/// numbers in its range.
fn number(v: f64, ty: Scalar) -> std::result::Result<ConstValue, String> {
    match ty {
        Scalar::Bool => Ok(ConstValue::Bool(v != 0.0)),
        s if s.is_float() => Ok(super::consteval::convert_scalar(
            &ConstValue::Float(v, Scalar::Float),
            s,
        )
        .expect("floats convert")),
        s => {
            if v.fract() != 0.0 || !v.is_finite() {
                return Err(format!("is not an integer, as `{}` needs", scalar_name(s)));
            }
            integer(v as i128, s)
        }
    }
}

/// `v` as an integer of type `s`, if it is in its range.
fn integer(v: i128, s: Scalar) -> std::result::Result<ConstValue, String> {
    let bits = s.size() * 8;
    let (min, max) = match s.is_signed_integer() {
        true => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
        false => (0, (1i128 << bits) - 1),
    };
    if v < min || v > max {
        return Err(format!("is out of the range of `{}`", scalar_name(s)));
    }
    Ok(ConstValue::Int(v as i64, s))
}

/// Text `t` as a value of scalar type `ty`.
fn parse(t: &str, ty: Scalar) -> std::result::Result<ConstValue, String> {
    let not = |what: &str| format!("is not {what}");
    match ty {
        Scalar::Bool => match t {
            "true" | "1" => Ok(ConstValue::Bool(true)),
            "false" | "0" => Ok(ConstValue::Bool(false)),
            _ => Err(not("a `bool` (`true`, `false`, 1 or 0)")),
        },
        s if s.is_float() => t
            .parse::<f64>()
            .map(|v| number(v, s).expect("floats convert"))
            .map_err(|_| not(&format!("a `{}` number", scalar_name(s)))),
        s => {
            let (negative, digits) = match t.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, t),
            };
            let magnitude = match digits
                .strip_prefix("0x")
                .or_else(|| digits.strip_prefix("0X"))
            {
                Some(hex) => i128::from_str_radix(hex, 16),
                None => digits.parse::<i128>(),
            }
            .map_err(|_| not(&format!("an integer, as `{}` needs", scalar_name(s))))?;
            integer(if negative { -magnitude } else { magnitude }, s)
        }
    }
}

/// The MSL name of scalar type `s`.
fn scalar_name(s: Scalar) -> &'static str {
    s.name()
}
