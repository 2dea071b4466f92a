//! `static_assert(cond, "message")` (C++11), checked where it is declared:
//! at program and namespace scope while the program table is built, at
//! function scope while the function is lowered.

use super::consteval::{self, ConstValue};
use super::{Error, Program, Result};
use crate::diagnostics::Code;
use crate::syntax::ast::StaticAssert;

/// Evaluates the condition as a constant expression; a false one is an
/// error at the declaration carrying the message, as clang reports it.
pub fn check(program: &Program, assert: &StaticAssert) -> Result<()> {
    let value = consteval::eval(program, &assert.cond).map_err(|e| {
        Error::coded(
            Code::NotConstant,
            e.span,
            format!(
                "static assertion expression is not an integral constant expression: {}",
                e.message
            ),
        )
    })?;
    if truth(&value) {
        return Ok(());
    }
    let message = match &assert.message {
        Some(m) => format!("static assertion failed: {m}"),
        None => "static assertion failed".to_string(),
    };
    Err(Error::coded(Code::StaticAssertFailed, assert.span, message))
}

/// C++'s contextual conversion to `bool` of a scalar constant.
fn truth(value: &ConstValue) -> bool {
    match value {
        ConstValue::Bool(b) => *b,
        ConstValue::Int(v, _) => *v != 0,
        ConstValue::Float(v, _) => *v != 0.0,
        ConstValue::Composite(..) => true,
    }
}
