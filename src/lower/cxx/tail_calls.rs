//! Tail recursion: a function that calls itself as the last thing it does
//! (`void next(int n) { ...; if (extra > 0) { next(extra); } }`,
//! `return gcd(b, a % b);`).
//!
//! Metal: recursion is not allowed (MSL §2.1, C++ restrictions), yet the
//! Metal compiler accepts a call of a function to itself in tail position,
//! which it turns into a jump back to the function's start (LLVM's
//! tail-call elimination runs before the check), and MLX's
//! `LoopedElemToLoc::next` relies on it.
//!
//! WGSL: no recursion at all (§ "Function calls": the call graph must be
//! acyclic).
//!
//! Mapping: C++'s own meaning of such a call is "evaluate the arguments,
//! then start the function over with them as its parameters, and return
//! what that returns". So the body is lowered inside a `loop`; a tail call
//! of the function to itself, with the same specialisation (`ArgKey`s),
//! evaluates its arguments, stores each into its by-value parameter's local
//! copy, and `continue`s; the end of the body returns. Arguments passed as
//! pointers must be the function's own unchanged (a WGSL argument cannot be
//! reassigned): `this` of a member function calling itself on its object,
//! a buffer pointer passed on as it came. Any other recursive call is
//! refused (E0306) as before.

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::{ArgKey, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{Block, Expr, ExprKind, Stmt, StmtKind};
use crate::types::Type;
use naga::{Expression, Handle, Statement};
use std::collections::{HashMap, HashSet};

/// The function being built may call itself in tail position.
#[derive(Default)]
pub(in crate::lower) struct TailRecursion {
    /// The user function (index) and specialisation being built.
    pub function: Option<(usize, Vec<ArgKey>)>,
    /// Spans of the calls in tail position that may name the function.
    pub calls: HashSet<(u32, u32)>,
    /// The local copy of each by-value argument (by argument index).
    pub copies: HashMap<u32, Handle<naga::LocalVariable>>,
    /// A tail call was lowered as a jump: the body must become a loop.
    pub taken: bool,
}

impl TailRecursion {
    /// Whether the call at `span` of user function `index` specialised for
    /// `keys` is a call in tail position of the function being built to
    /// itself.
    pub(in crate::lower) fn is_self_call(
        &self,
        (index, keys): (usize, &[ArgKey]),
        span: Span,
    ) -> bool {
        self.function
            .as_ref()
            .is_some_and(|(i, k)| *i == index && k == keys)
            && self.calls.contains(&(span.start, span.end))
    }
}

/// The spans of the calls in tail position in `body` of a function, by a
/// name (`f(..)`, `f<T>(..)`, `ns::f(..)`) or through `this->`, which may
/// be calls of the function itself (overload resolution, at the call,
/// tells): the expression of a `return`, and, in a `void` function, an
/// expression statement that ends the body or is followed by `return;`.
/// Loops and `switch`es are not entered: a call there is followed by more
/// of the loop.
pub(in crate::lower) fn tail_calls(body: &Block, void: bool) -> HashSet<(u32, u32)> {
    let mut found = HashSet::new();
    block_tail(&body.stmts, true, void, &mut found);
    found
}

fn block_tail(stmts: &[Stmt], at_end: bool, void: bool, found: &mut HashSet<(u32, u32)>) {
    for (i, s) in stmts.iter().enumerate() {
        let rest_is_return = match stmts.get(i + 1..) {
            Some([]) => at_end,
            Some([next, ..]) => matches!(next.kind, StmtKind::Return(None)),
            None => false,
        };
        stmt_tail(s, rest_is_return, void, found);
    }
}

fn stmt_tail(s: &Stmt, at_end: bool, void: bool, found: &mut HashSet<(u32, u32)>) {
    match &s.kind {
        StmtKind::Return(Some(e)) => call_named(e, found),
        StmtKind::Expr(e) if at_end && void => call_named(e, found),
        StmtKind::Block(b) => block_tail(&b.stmts, at_end, void, found),
        StmtKind::If {
            then, otherwise, ..
        } => {
            stmt_tail(then, at_end, void, found);
            if let Some(o) = otherwise {
                stmt_tail(o, at_end, void, found);
            }
        }
        _ => {}
    }
}

/// Records `e` if it is a call by a name, or of a member of `this`.
fn call_named(e: &Expr, found: &mut HashSet<(u32, u32)>) {
    let ExprKind::Call(callee, _) = &e.kind else {
        return;
    };
    let named = match &callee.kind {
        ExprKind::Name(_) | ExprKind::Templated(..) => true,
        // The parser writes `this->f` as `this.f` (`this` is the object).
        ExprKind::Member(object, _, _) => {
            matches!(&object.kind, ExprKind::Name(p) if p.len() == 1 && p[0] == "this")
        }
        _ => false,
    };
    if named {
        found.insert((e.span.start, e.span.end));
    }
}

impl Lowerer<'_, '_> {
    /// A tail call ([`TailRecursion::is_self_call`]) with `arguments`
    /// (WGSL values, one per argument of the helper), returning `ret`: the
    /// jump back to the function's start (the value is a placeholder of
    /// the result type, never used: the block ends there); `None` when an
    /// argument cannot be passed that way.
    pub(in crate::lower) fn tail_call(
        &mut self,
        fx: &mut FnCtx,
        arguments: &[Handle<Expression>],
        ret: &Type,
        span: Span,
    ) -> Result<Option<Value>> {
        // In a region narrowed to some threads (`simd_branches`), both
        // sides of a branch run on every thread: a jump there would be
        // taken by all of them.
        if fx.pred.narrowed > 0 {
            return Ok(None);
        }
        let tail = &fx.tail;
        // Every argument either is the function's own, unchanged, or has a
        // local copy to receive the new value.
        let mut stores = Vec::new();
        for (i, &value) in arguments.iter().enumerate() {
            let i = i as u32;
            if matches!(*fx.expr(value), Expression::FunctionArgument(j) if j == i) {
                continue;
            }
            let Some(&copy) = tail.copies.get(&i) else {
                return Ok(None);
            };
            stores.push((copy, value));
        }
        for (copy, value) in stores {
            let pointer = fx.add(Expression::LocalVariable(copy), span);
            fx.push(Statement::Store { pointer, value }, span);
        }
        fx.push(Statement::Continue, span);
        fx.tail.taken = true;
        if *ret == Type::Void {
            return Ok(Some(Value::Void));
        }
        let ty = self.naga_type(ret, span)?;
        Ok(Some(Value::Rv(
            fx.add(Expression::ZeroValue(ty), span),
            ret.clone(),
        )))
    }

    /// Lowers `body` (statements of the function `fx` builds, which is user
    /// function `index` for `keys`) and its end; inside a
    /// `loop` when one of its tail calls was lowered as a jump.
    pub(in crate::lower) fn body_with_tail_calls(
        &mut self,
        fx: &mut FnCtx,
        (index, keys): (usize, &[ArgKey]),
        body: &Block,
    ) -> Result<()> {
        let calls = tail_calls(body, fx.return_type == Type::Void);

        if calls.is_empty() {
            self.stmts(fx, &body.stmts)?;
            return self.finish_body(fx, body.span);
        }
        fx.tail.function = Some((index, keys.to_vec()));
        fx.tail.calls = calls;
        fx.open();
        self.stmts(fx, &body.stmts)?;
        self.finish_body(fx, body.span)?;
        let block = fx.close();
        if !fx.tail.taken {
            fx.splice(block);
            return Ok(());
        }
        fx.push(
            Statement::Loop {
                body: block,
                continuing: naga::Block::new(),
                break_if: None,
            },
            body.span,
        );
        // Never reached (the loop only returns), but naga wants a value
        // returned at the end of a function that returns one.
        self.finish_body(fx, body.span)
    }
}
