//! Calls lowered in place: a function that returns a struct holding
//! pointers (a constructor, `S S::S(..) { S this; ..; return this; }`, or
//! any other) cannot be a WGSL function, since no WGSL value holds a
//! pointer; its body is lowered where it is called, its parameters bound
//! to the arguments as a call would pass them (pointers keeping their root
//! and index), with names of its own (the caller's locals are not visible)
//! and its struct's static constants in scope. The object it returns at
//! its end is the call's value (`metal/pointer_objects.rs`); a `return`
//! anywhere else is refused (E0407).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Arg, Local, Value};
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{FunctionDecl, StmtKind};
use crate::types::Type;
use naga::{Expression, Statement};

impl Lowerer<'_, '_> {
    /// A call of user function `f` (index `index`) that returns struct of
    /// places `ret` (a constructor): its body is lowered here, its
    /// parameters bound to `args` (each with its parameter type); the
    /// object it returns at its end is the call's value. A `return`
    /// anywhere else is refused where it is written.
    pub(in crate::lower) fn inline_call(
        &mut self,
        fx: &mut FnCtx,
        f: &FunctionDecl,
        ret: &Type,
        args: Vec<(Type, Arg)>,
        span: Span,
    ) -> Result<Value> {
        let body = f.body.as_ref().expect("definitions have bodies");
        let Some((last, rest)) = body.stmts.split_last() else {
            return Err(self.place_struct_value_error(ret, span));
        };
        let StmtKind::Return(Some(result)) = &last.kind else {
            return Err(self.place_struct_value_error(ret, f.ret.span));
        };
        let owner = (f.name.name.rsplit_once("::"))
            .map(|(owner, _)| owner.to_string())
            .filter(|owner| self.program.symbols.contains_key(owner));
        let frame = fx.enter_inline(owner);
        self.enter_class_scope(fx);
        let result = (|| {
            for (p, (pty, arg)) in f.params.iter().zip(args) {
                let local = self.inline_parameter(fx, &pty, arg)?;
                declare_inline_parameter(fx, p.name.as_ref(), local)?;
            }
            self.rebind_reassigned_pointers(fx, body)?;
            self.stmts(fx, rest)?;
            let v = self.expr(fx, result)?;
            self.same_aggregate(v, ret, result.span)
        })();
        fx.leave_inline(frame);
        result.map(Value::Agg)
    }

    /// What a parameter of type `pty` of a body lowered in place stands
    /// for, bound to argument `a`: as a call would pass it, but without
    /// any WGSL parameter (pointers keep their root and index).
    pub(in crate::lower) fn inline_parameter(
        &mut self,
        fx: &mut FnCtx,
        pty: &Type,
        a: Arg,
    ) -> Result<Local> {
        let a = self.base_argument(fx, pty, a)?;
        let span = a.span;
        if let Some(target) = self.place_struct_target(pty) {
            let agg = self.same_aggregate(a.value, &target, span)?;
            return Ok(match pty {
                Type::Pointer(_) => Local::Agg(agg),
                _ => Local::Agg(self.copy_aggregate(fx, agg, "parameter", span)?),
            });
        }
        match pty {
            Type::Pointer(pp) => {
                // A `const T&` binds a temporary too: a copy.
                if pp.is_reference && pp.is_const && matches!(a.value, Value::Rv(..)) {
                    return self.inline_value_parameter(fx, &pp.pointee, a, true);
                }
                let v = self.member_read(fx, a.value, span)?;
                Ok(match self.bind_member(fx, v, pp, span)? {
                    Value::Ptr(p) => Local::Ptr(p),
                    Value::Place(p) => Local::Ref(p),
                    Value::Bytes(b) => Local::Bytes(b),
                    _ => unreachable!("a pointer or reference binds a pointer or place"),
                })
            }
            Type::Texture(_) | Type::Sampler { .. } => {
                let (h, t) = self.load(fx, a.value, span)?;
                Ok(Local::Value(h, t))
            }
            _ => self.inline_value_parameter(fx, pty, a, false),
        }
    }

    /// A by-value parameter of a body lowered in place: a local holding
    /// the argument converted to `ty`.
    fn inline_value_parameter(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        a: Arg,
        is_const: bool,
    ) -> Result<Local> {
        let (h, t) = self.load(fx, a.value, a.span)?;
        let h = self.convert(fx, h, &t, ty, false, a.span)?;
        let th = self.naga_type(ty, a.span)?;
        let var = fx.local("parameter", th, a.span);
        let pointer = fx.add(Expression::LocalVariable(var), a.span);
        fx.push(Statement::Store { pointer, value: h }, a.span);
        Ok(Local::Var {
            var,
            ty: ty.clone(),
            is_const,
        })
    }
}

/// Declares parameter `name` of a body lowered in place as `local` (what
/// its argument stands for); a parameter named twice is an error, as in a
/// call.
pub(in crate::lower) fn declare_inline_parameter(
    fx: &mut FnCtx,
    name: Option<&crate::syntax::ast::Ident>,
    local: Local,
) -> Result<()> {
    match name {
        Some(n) if !fx.declare(&n.name, local) => Err(Error::coded(
            Code::Redefinition,
            n.span,
            format!("redefinition of parameter `{}`", n.name),
        )),
        _ => Ok(()),
    }
}
