//! Calls of functions that return references or pointers, lowered in place.
//!
//! Metal: a function may return a reference or pointer into memory its
//! caller can reach: an element of an array member of the object
//! (`thread frag_type& frag_at(short i, short j) thread { return
//! val_frags[i * kTileCols + j]; }`, MLX's GEMM tiles), of a reference
//! parameter, or of a buffer (`device float& at(device float* p, uint i) {
//! return p[i]; }`). Its result is read, written, indexed and passed by
//! reference (`MMAFrag_t::load(frag_at(i, j), ..)`, `frag_at(i, j)[k] =
//! v`).
//!
//! WGSL: no function returns a pointer, and a storage pointer is no
//! function parameter.
//!
//! Mapping: the call's body is lowered where it is called, as a call
//! would run it (its parameters bound to the arguments, each evaluated
//! once, with names of its own; `metal/inlined_calls.rs`), and the
//! expression its final `return` gives, a place or a pointer known at
//! translation time, is the call's value. A `const` member function binds
//! its object in place (it cannot change it), so the reference it returns
//! is into the caller's object, not a copy. What cannot be expressed so is
//! refused where it is written (E0401): a `return` before the end of the
//! body (the returned object could depend on run-time control flow), or a
//! returned expression that is not one place (`c ? a : b` between two
//! objects). A member function returning a reference that cannot be
//! lowered so stays a call returning the referenced value, as before (it
//! can be read, not written).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Arg, Local, Place, Value};
use crate::lower::metal::inlined_calls::declare_inline_parameter;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{FunctionDecl, Stmt, StmtKind, SwitchItem};
use crate::syntax::members::RETURNS_REFERENCE;
use crate::types::{AddressSpace, Pointer, Type};

/// What a function returning a reference or pointer returns.
pub(in crate::lower) struct ReturnedPlace {
    /// The returned type (a reference for a member function whose
    /// declaration lost its `&`, see `syntax::from_pest::members`).
    pub ty: Pointer,
    /// A member function returning a reference: when its body cannot be
    /// lowered in place it stays a call returning the value.
    pub member: bool,
}

/// Why a body cannot be lowered in place, with where.
enum NotInPlace {
    /// A `return` before the end of the body.
    EarlyReturn(Span),
    /// The final `return` gives no single place or pointer.
    NotAPlace(Span),
}

impl Lowerer<'_, '_> {
    /// What user function `f` returns by reference or pointer, when its
    /// calls are lowered in place; `None` for a function that returns a
    /// value, an `auto` one, or one whose calls return one of their
    /// reference arguments (`cxx/functions.rs`).
    pub(in crate::lower) fn returned_place(
        &self,
        f: &FunctionDecl,
    ) -> Result<Option<ReturnedPlace>> {
        if f.body.is_none() || super::functions::is_auto(&f.ret) {
            return Ok(None);
        }
        if f.attributes.iter().any(|a| a.name == RETURNS_REFERENCE) {
            let pointee = self.program.resolve_type(&f.ret)?;
            return Ok(Some(ReturnedPlace {
                ty: Pointer {
                    space: AddressSpace::Thread,
                    pointee,
                    is_const: f.ret.is_const,
                    is_reference: true,
                },
                member: true,
            }));
        }
        match self.program.resolve_type(&f.ret)? {
            Type::Pointer(pp) if self.returned_parameter(f).is_none() => Ok(Some(ReturnedPlace {
                ty: *pp,
                member: false,
            })),
            _ => Ok(None),
        }
    }

    /// A call of user function `f` (index `index`), which returns `ret`,
    /// with `args` (each with its parameter type): its body lowered here,
    /// and the place or pointer it returns. `Ok(None)` for a member
    /// function whose body cannot be lowered so (nothing is lowered then);
    /// an error for any other function.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::lower) fn call_returning_place(
        &mut self,
        fx: &mut FnCtx,
        index: usize,
        f: &FunctionDecl,
        name: &str,
        ret: &ReturnedPlace,
        args: &[Arg],
        span: Span,
    ) -> Result<Option<Value>> {
        let body = f.body.as_ref().expect("definitions have bodies");
        let shape = match body.stmts.split_last() {
            Some((last, rest)) => match (&last.kind, first_return(rest)) {
                (StmtKind::Return(Some(e)), None) => Ok((rest, e)),
                (StmtKind::Return(Some(_)), Some(at)) => Err(NotInPlace::EarlyReturn(at)),
                _ => Err(NotInPlace::EarlyReturn(
                    first_return(&body.stmts).unwrap_or(f.ret.span),
                )),
            },
            None => Err(NotInPlace::NotAPlace(f.ret.span)),
        };
        let (rest, result) = match shape {
            Ok(shape) => shape,
            Err(_) if ret.member => return Ok(None),
            Err(why) => return Err(self.not_in_place(f, ret, why)),
        };
        if self.global.in_progress.contains(&index) {
            return Err(Error::coded(
                Code::Recursion,
                span,
                "recursive function calls are not allowed in Metal",
            ));
        }
        let mark = fx.mark();
        let args = self.completed_arguments(fx, f, name, args.to_vec(), span)?;
        let owner = self.function_owner(index, &f.name.name);
        self.global.in_progress.push(index);
        let frame = fx.enter_inline(owner);
        self.enter_class_scope(fx);
        let value = (|| {
            for (p, (pty, arg)) in f.params.iter().zip(args) {
                let local = self.bound_parameter(fx, p.name.as_ref(), &pty, arg)?;
                declare_inline_parameter(fx, p.name.as_ref(), local)?;
            }
            self.rebind_reassigned_pointers(fx, body)?;
            self.stmts(fx, rest)?;
            let v = self.expr(fx, result)?;
            Ok(self.returned_binding(fx, v, &ret.ty, result.span))
        })();
        fx.leave_inline(frame);
        self.global.in_progress.pop();
        match value? {
            Some(v) => Ok(Some(v)),
            None if ret.member => {
                fx.rewind(mark);
                Ok(None)
            }
            None => Err(self.not_in_place(f, ret, NotInPlace::NotAPlace(result.span))),
        }
    }

    /// Parameter `name` of type `pty` of a body lowered in place, bound to
    /// `arg`: a member function's `const` object is the caller's object
    /// itself, read-only; anything else as `metal/inlined_calls.rs` binds
    /// it.
    fn bound_parameter(
        &mut self,
        fx: &mut FnCtx,
        name: Option<&crate::syntax::ast::Ident>,
        pty: &Type,
        arg: Arg,
    ) -> Result<Local> {
        if name.is_some_and(|n| n.name == "this") && matches!(pty, Type::Struct(_)) {
            match arg.value {
                Value::Place(p) if p.ty.unpacked() == pty.unpacked() => {
                    return Ok(Local::Ref(Place {
                        writable: false,
                        ..p
                    }))
                }
                Value::Bytes(mut b) if b.ty.unpacked() == pty.unpacked() => {
                    b.writable = false;
                    return Ok(Local::Bytes(b));
                }
                _ => {}
            }
        }
        self.inline_parameter(fx, pty, arg)
    }

    /// `v`, the value of a returned expression, as the call's value of type
    /// `ty`; `None` when it is no place or pointer known at translation
    /// time (or of another type).
    fn returned_binding(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        ty: &Pointer,
        span: Span,
    ) -> Option<Value> {
        if ty.is_reference {
            return match v {
                Value::Place(p) if p.ty.unpacked() == ty.pointee.unpacked() => {
                    Some(Value::Place(Place {
                        writable: p.writable && !ty.is_const,
                        ..p
                    }))
                }
                Value::Bytes(mut b) if b.ty.unpacked() == ty.pointee.unpacked() => {
                    b.writable &= !ty.is_const;
                    Some(Value::Bytes(b))
                }
                _ => None,
            };
        }
        match v {
            Value::Null(_) => Some(Value::Null(Some(ty.clone()))),
            v @ (Value::Ptr(_) | Value::Place(_) | Value::Bytes(_)) => {
                self.bind_member(fx, v, ty, span).ok()
            }
            _ => None,
        }
    }

    /// The error for a call of `f` whose body cannot be lowered in place.
    fn not_in_place(&self, f: &FunctionDecl, ret: &ReturnedPlace, why: NotInPlace) -> Error {
        let what = if ret.ty.is_reference {
            "reference"
        } else {
            "pointer"
        };
        let shown = self
            .program
            .display(&Type::Pointer(Box::new(ret.ty.clone())));
        let name = &f.name.name;
        match why {
            NotInPlace::EarlyReturn(at) => Error::coded(
                Code::Unsupported,
                at,
                format!("a `return` before the end of `{name}`, which returns a {what} (`{shown}`), is not supported"),
            )
            .note(format!("WGSL functions cannot return a {what}: each call of `{name}` is translated in place, and the {what} it returns must be the expression of the `return` that ends its body; compute the choice into an index and return one place (`return v[c ? i : j];`)")),
            NotInPlace::NotAPlace(at) => Error::coded(
                Code::Unsupported,
                at,
                format!("`{name}` returns a {what} (`{shown}`), but this expression is not one object known at translation time"),
            )
            .note(format!("WGSL functions cannot return a {what}: each call of `{name}` is translated in place, and what it returns must be one variable, buffer or parameter (or an element or member of one), not a choice between objects made at run time (`c ? a : b`); index one array instead (`v[c ? i : j]`)")),
        }
    }
}

/// Where the first `return` among `stmts` (nested included) is.
fn first_return(stmts: &[Stmt]) -> Option<Span> {
    stmts.iter().find_map(|s| match &s.kind {
        StmtKind::Return(_) => Some(s.span),
        StmtKind::Block(b) => first_return(&b.stmts),
        StmtKind::If {
            then, otherwise, ..
        } => first_return(std::slice::from_ref(then)).or_else(|| {
            otherwise
                .as_deref()
                .and_then(|o| first_return(std::slice::from_ref(o)))
        }),
        StmtKind::For { body, .. }
        | StmtKind::RangeFor { body, .. }
        | StmtKind::While { body, .. }
        | StmtKind::DoWhile { body, .. } => first_return(std::slice::from_ref(body)),
        StmtKind::Switch { items, .. } => items.iter().find_map(|item| match item {
            SwitchItem::Stmt(s) => first_return(std::slice::from_ref(s)),
            _ => None,
        }),
        _ => None,
    })
}
