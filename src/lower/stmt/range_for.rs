//! Range-based `for` over fixed-size arrays (C++11 [stmt.ranged]).
//!
//! `for (T x : a) body` runs `body` once per element of `a` in order, with
//! `x` declared from the element (`auto x` a copy, `thread auto& x` the
//! element itself). Over an array `a` of `N` elements that is
//! `for (uint i = 0; i < N; ++i) { T x = a[i]; body }`, which is how it is
//! lowered: WGSL has no such loop. C++ evaluates `a` once; here it is
//! evaluated per element, which differs only for a range expression with
//! side effects (a call), so those are refused.

use super::super::{Error, Lowerer, Result};
use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::source_map::Span;
use crate::syntax::ast::{
    self, BinaryOp, Declarator, Expr, ExprKind, Ident, Init, LiteralSuffix, Stmt, StmtKind,
    TypeSpec, UnaryOp, VarDecl,
};
use crate::types::Type;

/// The hidden index variable; `__` names are reserved to the implementation
/// in C++, so no source declares it.
const INDEX: &str = "__range_for_index";

impl Lowerer<'_, '_> {
    /// `for (ty name : range) body`.
    pub(super) fn range_for(
        &mut self,
        fx: &mut FnCtx,
        ty: &TypeSpec,
        name: &Ident,
        range: &Expr,
        body: &Stmt,
        span: Span,
    ) -> Result<()> {
        if has_call(range) {
            return Err(Error::coded(
                Code::Unsupported,
                range.span,
                "a range-based `for` over the result of a call is not supported; store the array in a variable first",
            ));
        }
        let count = match self.type_of(fx, range)? {
            Type::Array(_, n) => n,
            Type::Pointer(p) if p.is_reference && matches!(p.pointee, Type::Array(..)) => {
                let Type::Array(_, n) = p.pointee else {
                    unreachable!("matched")
                };
                n
            }
            other => {
                return Err(Error::coded(
                    Code::Unsupported,
                    range.span,
                    format!(
                        "range-based `for` is supported over arrays only, not `{}`",
                        self.program.display(&other)
                    ),
                ))
            }
        };
        let at = |kind| Expr { kind, span };
        let index = || at(ExprKind::Name(vec![INDEX.to_owned()]));
        let uint = |value| {
            at(ExprKind::Int {
                value,
                suffix: LiteralSuffix::Unsigned,
                non_decimal: false,
            })
        };
        let declare = |ty: TypeSpec, name: Ident, init: Expr| Stmt {
            kind: StmtKind::Decl(VarDecl {
                ty,
                declarators: vec![Declarator {
                    name,
                    array: Vec::new(),
                    init: Some(Init::Expr(init)),
                    attributes: Vec::new(),
                    span,
                }],
                span,
            }),
            span,
        };
        let init = declare(
            uint_type(span),
            Ident {
                name: INDEX.to_owned(),
                span,
            },
            uint(0),
        );
        let cond = at(ExprKind::Binary(
            BinaryOp::Lt,
            Box::new(index()),
            Box::new(uint(u64::from(count))),
        ));
        let step = at(ExprKind::Unary(UnaryOp::PreInc, Box::new(index())));
        let element = at(ExprKind::Index(Box::new(range.clone()), Box::new(index())));
        let body = Stmt {
            kind: StmtKind::Block(ast::Block {
                stmts: vec![declare(ty.clone(), name.clone(), element), body.clone()],
                span: body.span,
            }),
            span: body.span,
        };
        self.for_loop(fx, Some(&init), Some(&cond), Some(&step), &body, span)
    }
}

/// `uint`, written.
fn uint_type(span: Span) -> TypeSpec {
    TypeSpec {
        is_const: false,
        is_constexpr: false,
        space: None,
        path: vec!["uint".to_owned()],
        args: Vec::new(),
        ptr_ops: Vec::new(),
        name_span: span,
        span,
    }
}

/// Whether evaluating `e` may call a function (the cases a range
/// expression takes: names, members, subscripts, operators).
fn has_call(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call(..) => true,
        ExprKind::Member(a, _, _) | ExprKind::Unary(_, a) | ExprKind::Cast(_, _, a) => has_call(a),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => has_call(a) || has_call(b),
        ExprKind::Ternary(a, b, c) => has_call(a) || has_call(b) || has_call(c),
        _ => false,
    }
}
