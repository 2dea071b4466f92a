//! `constexpr` functions evaluated at translation time where a constant is
//! needed (array sizes, `static_assert`, template arguments, program-scope
//! constants). The body must be C++11's `{ return expr; }`: the arguments'
//! values replace the parameters in a copy of `expr`, which is evaluated.
//! Elsewhere the function is an ordinary helper.

use super::consteval::{self, ConstValue};
use super::subst::{Replacement, Subst};
use super::{Error, Program, Result, Symbol};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind, FunctionDecl, LiteralSuffix, StmtKind};
use crate::types::Scalar;
use std::cell::Cell;
use std::collections::HashMap;

/// Deepest nesting of constexpr calls (C++ compilers allow 512; a shader
/// needing more is surely recursing by mistake).
const MAX_DEPTH: u32 = 64;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static FOLDING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` evaluating calls of functions that are not `constexpr` too:
/// the initializer of a program-scope `constant` (SPIR-V Cross's `constant
/// int _38 = spvSMod(c, d);` for a specialization constant operation),
/// which Metal's compiler folds from the inlined body where C++ would
/// initialize dynamically. Array sizes, template arguments and
/// `static_assert` keep C++'s rule (`constexpr` functions only).
pub fn folding_initializer<T>(f: impl FnOnce() -> T) -> T {
    let outer = FOLDING.replace(true);
    let result = f();
    FOLDING.set(outer);
    result
}

/// Whether calls of functions that are not `constexpr` are evaluated (see
/// [`folding_initializer`]).
pub fn folding() -> bool {
    FOLDING.get()
}

/// Whether a call of `f` is evaluated here.
fn evaluable(f: &FunctionDecl) -> bool {
    f.ret.is_constexpr || (FOLDING.get() && f.body.is_some())
}

/// The value of `callee(args)` when `callee` names a `constexpr` function;
/// `None` when it does not (a constructor, or not constant at all).
pub fn call(program: &Program, callee: &Expr, args: &[Expr]) -> Option<Result<ConstValue>> {
    // `get_pack_factor<bits, 8>()`: a template with explicit arguments.
    if let ExprKind::Templated(path, explicit) = &callee.kind {
        return template_call(program, &path.join("::"), explicit, callee.span, args);
    }
    let ExprKind::Name(path) = &callee.kind else {
        return None;
    };
    let Some(Symbol::Functions(list)) = program.symbols.get(path.last()?) else {
        return template_call(program, path.last()?, &[], callee.span, args);
    };
    let f = list
        .iter()
        .map(|&i| program.functions[i])
        .find(|f| evaluable(f) && accepts(f, args.len()))?;
    Some(call_function(program, f, callee.span, args))
}

/// `sum(1, 2, 3)` of a `constexpr` function template: its arguments
/// given (`explicit`) or deduced from the values' types, a template without a function
/// parameter pack preferred to one with ([temp.deduct.partial]/11).
fn template_call(
    program: &Program,
    name: &str,
    explicit: &[crate::syntax::ast::TemplateArg],
    span: Span,
    args: &[Expr],
) -> Option<Result<ConstValue>> {
    let templates = program.function_templates(name);
    if templates.is_empty() {
        return None;
    }
    let values = match args
        .iter()
        .map(|a| consteval::eval(program, a))
        .collect::<Result<Vec<_>>>()
    {
        Ok(v) => v,
        Err(e) => return Some(Err(e)),
    };
    let types: Vec<_> = values
        .iter()
        .map(|v| super::templates::CallArg::value(v.ty(), span))
        .collect();
    let mut candidates: Vec<_> = templates
        .iter()
        .map(|&t| program.templates[t])
        .filter(|t| {
            let f = super::templates::template_function(t);
            evaluable(f) && accepts(f, args.len())
        })
        .collect();
    candidates.sort_by_key(|t| {
        let f = super::templates::template_function(t);
        f.params.iter().any(|p| p.pack)
    });
    for t in candidates {
        let Ok(bound) = program.template_arguments(t, explicit, &types, span) else {
            continue;
        };
        let ident = super::templates::template_function(t).name.clone();
        return Some(
            program
                .instantiate(t, &bound, ident)
                .and_then(|f| call_function(program, &f, span, args)),
        );
    }
    None
}

/// The value of `f(args)`, `f` a `constexpr` function.
fn call_function(
    program: &Program,
    f: &FunctionDecl,
    span: Span,
    args: &[Expr],
) -> Result<ConstValue> {
    let values = args
        .iter()
        .map(|a| consteval::eval(program, a))
        .collect::<Result<Vec<_>>>()?;
    let scalar = |v: &ConstValue| !matches!(v, ConstValue::Composite(..));
    if is_single_return(f) && values.iter().all(scalar) {
        return evaluate(program, f, args, span);
    }
    // Statement bodies (C++14) and struct arguments: run by the interpreter.
    super::constexpr_body::call(program, f, values, span)
}

fn is_single_return(f: &FunctionDecl) -> bool {
    let body = f.body.as_ref().map(|b| b.stmts.as_slice()).unwrap_or(&[]);
    matches!(body, [s] if matches!(s.kind, StmtKind::Return(Some(_))))
}

fn accepts(f: &FunctionDecl, n: usize) -> bool {
    if f.params.iter().any(|p| p.pack) {
        return n
            >= f.params
                .iter()
                .filter(|p| !p.pack && p.default.is_none())
                .count();
    }
    n <= f.params.len() && f.params[n..].iter().all(|p| p.default.is_some())
}

fn evaluate(program: &Program, f: &FunctionDecl, args: &[Expr], span: Span) -> Result<ConstValue> {
    let body = f.body.as_ref().map(|b| b.stmts.as_slice()).unwrap_or(&[]);
    let [stmt] = body else {
        return Err(unsupported_body(f));
    };
    let StmtKind::Return(Some(result)) = &stmt.kind else {
        return Err(unsupported_body(f));
    };
    let mut map = HashMap::new();
    for (i, p) in f.params.iter().enumerate() {
        let arg = args
            .get(i)
            .or(p.default.as_ref())
            .expect("accepts() checked");
        let ty = program.resolve_type(&p.ty)?;
        let value = consteval::convert(&consteval::eval(program, arg)?, &ty, arg.span, program)?;
        let literal = literal(&value, arg.span).ok_or_else(|| {
            Error::coded(
                Code::Unsupported,
                arg.span,
                "only scalar arguments are supported in constexpr calls",
            )
        })?;
        if let Some(name) = &p.name {
            map.insert(name.name.clone(), Replacement::Value(literal));
        }
    }
    let mut body = result.clone();
    Subst::new(&map).expr(&mut body);
    let depth = DEPTH.with(|d| d.get());
    if depth >= MAX_DEPTH {
        return Err(Error::coded(
            Code::LimitExceeded,
            span,
            format!("constexpr evaluation nested deeper than {MAX_DEPTH} calls"),
        ));
    }
    DEPTH.with(|d| d.set(depth + 1));
    let value = consteval::eval(program, &body);
    DEPTH.with(|d| d.set(depth));
    match declared_return(program, f)? {
        Some(ret) => consteval::convert(&value?, &ret, span, program),
        None => value,
    }
}

/// The return type `f` declares; `None` for `auto`, deduced from the
/// returned value.
pub(super) fn declared_return(
    program: &Program,
    f: &FunctionDecl,
) -> Result<Option<crate::types::Type>> {
    let ts = &f.ret;
    if ts.path.len() == 1 && ts.path[0] == "auto" && ts.args.is_empty() && ts.ptr_ops.is_empty() {
        return Ok(None);
    }
    program.resolve_type(ts).map(Some)
}

fn unsupported_body(f: &FunctionDecl) -> Error {
    Error::coded(
        Code::Unsupported,
        f.name.span,
        format!(
            "constexpr function `{}` is evaluated at translation time only when its body is `{{ return expression; }}`",
            f.name.name
        ),
    )
}

/// A literal expression of a scalar constant, keeping its type.
fn literal(v: &ConstValue, span: Span) -> Option<Expr> {
    Some(match *v {
        ConstValue::Bool(b) => Expr {
            kind: ExprKind::Bool(b),
            span,
        },
        ConstValue::Int(i, s) => super::templates::value_expr(i, s, span),
        ConstValue::Float(value, s) => {
            let lit = Expr {
                kind: ExprKind::Float {
                    value: value.abs(),
                    suffix: if s == Scalar::Half {
                        LiteralSuffix::Half
                    } else {
                        LiteralSuffix::Float
                    },
                },
                span,
            };
            if value < 0.0 {
                Expr {
                    kind: ExprKind::Unary(crate::syntax::ast::UnaryOp::Neg, Box::new(lit)),
                    span,
                }
            } else {
                lit
            }
        }
        ConstValue::Composite(..) => return None,
    })
}
