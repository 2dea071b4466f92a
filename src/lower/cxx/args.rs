//! Call arguments, lowered exactly once.
//!
//! Overload resolution and template argument deduction need each argument's
//! type; passing it needs a value, a place (a `thread` reference, a `device`
//! buffer element) or a pointer, depending on the chosen parameter. So every
//! argument is lowered once, to an [`Arg`]: its [`Value`] as the expression
//! gave it (a place stays a place, a pointer a pointer) and the type that
//! ranking and deduction see. Candidates are ranked on those types and the
//! chosen one adapts the values to its parameters
//! (`functions::Lowerer::argument`). Nothing is lowered twice and nothing in
//! a scratch block that is thrown away, so nested calls cost time linear in
//! their depth, and candidates that lose leave no helper specialisations,
//! required features or warnings behind.
//!
//! An argument that every candidate takes by value is loaded as soon as it
//! is lowered (before the next argument is evaluated, as before); one that
//! some candidate takes by reference stays a place until the call is
//! resolved.
//!
//! Operator overloads need the type of an operand before they know whether
//! a user function or the built-in operator applies. The operand is lowered
//! once; when the built-in operator applies after all, the lowered value is
//! left with the function context ([`FnCtx::keep_lowered`]) and the built-in
//! lowering picks it up instead of lowering the operand again
//! ([`FnCtx::take_lowered`], at the top of `Lowerer::expr`). Only the right
//! operand of `&&` and `||`, which the built-in operator may not evaluate,
//! is still typed in a scratch block (when a free `operator&&` or
//! `operator||` is declared), as are `auto` and `decltype` (deduce.rs).

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::contains_atomic;
use crate::lower::ctx::value::Value;
pub(in crate::lower) use crate::lower::ctx::value::{arg_type, Arg};
use crate::lower::{Lowerer, Result};
use crate::sema::Symbol;
use crate::syntax::ast::{Expr, FunctionDecl, PtrOp};
use crate::types::Type;
use std::borrow::Borrow;

impl Lowerer<'_, '_> {
    /// Lowers one argument; `load`: every candidate takes it by value.
    pub(in crate::lower) fn lower_arg(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
        load: bool,
    ) -> Result<Arg> {
        let value = self.expr(fx, e)?;
        let arg = Arg {
            ty: arg_type(&value),
            value,
            span: e.span,
        };
        if load {
            self.settle(fx, arg)
        } else {
            Ok(arg)
        }
    }

    /// `arg` loaded if it is a place (of a loadable type); its ranking type
    /// stays the place's.
    pub(in crate::lower) fn settle(&mut self, fx: &mut FnCtx, arg: Arg) -> Result<Arg> {
        let loadable = match &arg.value {
            // A threadgroup array is never copied: for a pointer parameter
            // it decays to a pointer to its first element
            // (`pointer_members.rs`).
            // So is an array in buffer memory (`x[i].qs`, `metal/array_decay.rs`).
            Value::Place(p)
                if matches!(p.ty, Type::Array(..))
                    && matches!(
                        self.place_space(fx, p.ptr),
                        crate::types::AddressSpace::Threadgroup
                            | crate::types::AddressSpace::Device
                            | crate::types::AddressSpace::Constant
                    ) =>
            {
                false
            }
            // The same arrays held as words (`metal/pointer_views.rs`).
            Value::Bytes(b)
                if matches!(b.ty, Type::Array(..))
                    && self.global.module.global_variables[b.global].space
                        != naga::AddressSpace::Private =>
            {
                false
            }
            // Nor is a whole local array, which decays for a `thread T*`
            // parameter (`functions.rs`); one passed by value is loaded
            // when passed.
            Value::Place(p)
                if matches!(p.ty, Type::Array(..))
                    && matches!(fx.expr(p.ptr), naga::Expression::LocalVariable(_)) =>
            {
                false
            }
            Value::Place(p) => !contains_atomic(&p.ty) && !matches!(p.ty, Type::Atomic(_)),
            Value::Bytes(b) => !contains_atomic(&b.ty) && !matches!(b.ty, Type::Atomic(_)),
            Value::Swizzle(..) | Value::BytesSwizzle(..) => true,
            _ => false,
        };
        if !loadable {
            return Ok(arg);
        }
        let (h, t) = self.load(fx, arg.value, arg.span)?;
        Ok(Arg {
            value: Value::Rv(h, t),
            ty: arg.ty,
            span: arg.span,
        })
    }

    /// True if `f` takes argument `i` by value (or has no parameter `i`):
    /// not by reference (a pointer is passed as the pointer it is). Told
    /// from the written type, without resolving it (a template's `T` does
    /// not resolve, and never deduces a reference).
    pub(in crate::lower) fn takes_by_value(&self, f: &FunctionDecl, i: usize) -> bool {
        let Some(p) = f.params.get(i) else {
            return true;
        };
        // The object of a `const` member function returning a reference
        // or pointer stays a place: the result is into it
        // (`reference_calls.rs`).
        if i == 0
            && p.name.as_ref().is_some_and(|n| n.name == "this")
            && super::members::returns_place(f)
        {
            return false;
        }
        if !p.ty.ptr_ops.is_empty() {
            return !p.ty.ptr_ops.contains(&PtrOp::Reference);
        }
        // A writable `thread` array parameter refers to the caller's array
        // (`sema::Program::param_type`).
        let thread = matches!(
            p.ty.space,
            None | Some((crate::syntax::ast::AddressSpace::Thread, _))
        );
        if !p.array.is_empty() && thread && !p.ty.is_const {
            return false;
        }
        // `typedef thread float& ref;`
        !matches!(
            self.program.symbols.get(&p.ty.name()),
            Some(Symbol::Type(Type::Pointer(pp))) if pp.is_reference
        )
    }

    /// The arguments of a call whose candidates are `decls`: `pre`, lowered
    /// already (a member call's object, an operator's operands), then
    /// `rest`, each lowered here once. Each is loaded at once when every
    /// candidate takes it by value.
    pub(in crate::lower) fn call_args<E: Borrow<Expr>>(
        &mut self,
        fx: &mut FnCtx,
        decls: &[&FunctionDecl],
        pre: Vec<Arg>,
        rest: &[E],
    ) -> Result<Vec<Arg>> {
        let by_value: Vec<bool> = (0..pre.len() + rest.len())
            .map(|i| decls.iter().all(|f| self.takes_by_value(f, i)))
            .collect();
        let mut args = Vec::with_capacity(by_value.len());
        for a in pre {
            let load = by_value[args.len()];
            args.push(if load { self.settle(fx, a)? } else { a });
        }
        for e in rest {
            let i = args.len();
            let n = by_value.len();
            let binds_pointer = decls.iter().any(|f| {
                super::functions::accepts(f, n)
                    && f.params.get(i).is_some_and(|p| {
                        crate::sema::pointer_references::is_pointer_reference(&p.ty)
                    })
            });
            // `device T*& p` given a pointer variable: its cell, which the
            // callee may move (`metal/pointer_addresses.rs`).
            if let Some(cell) = binds_pointer
                .then(|| self.pointer_variable_cell(fx, e.borrow()))
                .flatten()
            {
                args.push(cell);
                continue;
            }
            let load = by_value[i];
            args.push(self.lower_arg(fx, e.borrow(), load)?);
        }
        Ok(args)
    }
}

impl FnCtx {
    /// Leaves the value `e` was lowered to for the lowering that comes next
    /// (the built-in operator, after no overload applied): the next
    /// [`FnCtx::take_lowered`] of that very expression returns it.
    pub(in crate::lower) fn keep_lowered(&mut self, e: &Expr, value: Value) {
        self.lowered
            .push((e as *const Expr as usize, e.span, value));
    }

    /// The value `e` was lowered to already, if it was kept
    /// ([`FnCtx::keep_lowered`]); each kept value is taken once.
    pub(in crate::lower) fn take_lowered(&mut self, e: &Expr) -> Option<Value> {
        if self.lowered.is_empty() {
            return None;
        }
        let key = e as *const Expr as usize;
        let i = self
            .lowered
            .iter()
            .position(|(k, span, _)| *k == key && *span == e.span)?;
        Some(self.lowered.swap_remove(i).2)
    }

    /// Drops kept values that were not taken.
    pub(in crate::lower) fn forget_lowered(&mut self) {
        self.lowered.clear();
    }
}
