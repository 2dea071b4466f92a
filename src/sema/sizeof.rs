//! `sizeof` and `alignof` in Metal's layout ([`crate::layout::metal`]):
//! `sizeof(float3)` is 16, as on the host side of a Metal program; and
//! clang's `__is_empty(T)`, which is written like them.

use super::consteval::{self, ConstValue};
use super::{Error, Program, Result};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{ExprKind, SizeOperand, TypeQuery, TypeSpec};
use crate::types::{Scalar, Type};

/// The value of `sizeof(operand)` or `alignof(operand)`, a `size_t`, or
/// of `__is_empty(operand)`, a `bool`. `local` gives the type of a
/// variable in scope (none at program scope).
pub fn eval(
    program: &Program,
    query: TypeQuery,
    operand: &SizeOperand,
    span: Span,
    local: &dyn Fn(&str) -> Option<Type>,
) -> Result<ConstValue> {
    let ty = operand_type(program, operand, local)?;
    if matches!(ty, Type::Void) && query != TypeQuery::IsEmpty {
        return Err(Error::coded(
            Code::InvalidType,
            span,
            "invalid application of `sizeof` to `void`",
        ));
    }
    let value = match query {
        TypeQuery::Size => crate::layout::metal(&ty, &program.structs).size,
        TypeQuery::Align => program.true_align(&ty),
        TypeQuery::IsEmpty => return Ok(ConstValue::Bool(program.is_empty_class(&ty))),
    };
    Ok(ConstValue::Int(i64::from(value), Scalar::UInt))
}

/// The operand's type: a type, a variable, or a constant expression.
fn operand_type(
    program: &Program,
    operand: &SizeOperand,
    local: &dyn Fn(&str) -> Option<Type>,
) -> Result<Type> {
    match operand {
        SizeOperand::Type(ts) => {
            if let Some(name) = plain_name(ts) {
                if let Some(ty) = local(name) {
                    return Ok(ty);
                }
            }
            program.resolve_type(ts).or_else(|err| {
                // A program-scope constant parses as a type name too.
                if plain_name(ts).is_some() && program.symbols.contains_key(&ts.name()) {
                    constant_type(program, &ts.path, ts.span)
                } else {
                    Err(err)
                }
            })
        }
        SizeOperand::Expr(e) => match &e.kind {
            ExprKind::Name(path) if path.len() == 1 && local(&path[0]).is_some() => {
                Ok(local(&path[0]).expect("checked"))
            }
            _ => consteval::eval(program, e).map(|v| v.ty()).map_err(|_| {
                Error::coded(
                    Code::Unsupported,
                    e.span,
                    "`sizeof` of this expression is not supported yet; write its type, `sizeof(T)`",
                )
            }),
        },
    }
}

fn constant_type(program: &Program, path: &[String], span: Span) -> Result<Type> {
    let e = crate::syntax::ast::Expr {
        kind: ExprKind::Name(path.to_vec()),
        span,
    };
    consteval::eval(program, &e).map(|v| v.ty())
}

/// `x` written alone (no pointer, address space or template arguments).
fn plain_name(ts: &TypeSpec) -> Option<&str> {
    match ts.path.as_slice() {
        [name] if ts.ptr_ops.is_empty() && ts.args.is_empty() && ts.space.is_none() => Some(name),
        _ => None,
    }
}
