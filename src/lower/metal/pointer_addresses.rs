//! Pointers to pointer variables: `&p` of a local `const device T* p`,
//! passed to a helper that takes a pointer to a pointer (`thread T**`,
//! or an array of pointers, `const device T* ps[1]`, which decays to
//! one) and reads or moves it through `ps[0]`/`*ps`.
//!
//! Metal: `&p` is a `thread` pointer to the variable `p`; the helper's
//! `ps[0] += n` moves the caller's `p`.
//!
//! WGSL stores no pointers, so `p` is already its root (fixed at
//! translation time) plus an element index in a `u32` variable
//! ([`Local::PtrVar`]). `&p` is that variable's cell, as a pointer member
//! of a local object is ([`PtrCell`], `metal/pointer_objects.rs`), marked
//! [`PtrCell::addressed`]: the helper is specialised for the root and
//! receives a `ptr<function, u32>` to the index, so a move in the helper
//! moves the caller's pointer. Making `ps[0]` point into another root is
//! refused as for pointer members (E0407). `ps[i]` with `i` other than 0
//! is outside the object `&p` points to (undefined in C++), and is read as
//! `ps[0]`.
//!
//! A reference to a pointer (`const device T*& x`, MLX's
//! `adjust_matrix_offsets` moving a kernel's matrix pointers to its
//! batch) is passed the same way, given the pointer variable itself: the
//! callee's `x` is the cell, read as the pointer it holds and moved in
//! place (`x += n` moves the caller's). A caller's pointer that such a
//! parameter takes is a variable even where the caller never assigns it
//! (`sema::pointer_references::bound_names`), and a parameter passed on
//! to another reference passes the same cell.
//!
//! The same reductions pass `&total` of one `thread` value for a
//! one-element array parameter (`thread U totals[1]`, a `thread U*` in
//! C++, an array reference here): the value is copied into a one-element
//! array for the call and copied back after it, which only a callee that
//! also reached the value another way could tell apart.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{arg_type, Arg, Local, PtrCell, Value};
use crate::lower::{ArgKey, Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind};
use crate::types::{AddressSpace, Type};
use naga::{Expression, Handle};
use std::cell::RefCell;
use std::rc::Rc;

impl Lowerer<'_, '_> {
    /// `&p` of a pointer variable `p`: its cell, addressed; `None` when
    /// `e` names no pointer variable.
    pub(in crate::lower) fn address_of_pointer_variable(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
        span: Span,
    ) -> Option<Value> {
        let ExprKind::Name(path) = &e.kind else {
            return None;
        };
        let [name] = path.as_slice() else {
            return None;
        };
        let Some(Local::PtrVar { var, ptr }) = fx.lookup(name).cloned() else {
            return None;
        };
        let ty = crate::types::Pointer {
            space: ptr.space,
            pointee: ptr.pointee.clone(),
            is_const: ptr.is_const,
            is_reference: false,
        };
        Some(Value::Cell(PtrCell {
            index: fx.add(Expression::LocalVariable(var), span),
            target: Rc::new(RefCell::new(Some(ptr))),
            ty,
            member: name.clone(),
            count: None,
            addressed: true,
        }))
    }

    /// A pointer variable `p` given for a reference to a pointer (`device
    /// T*& q`): its cell, which the callee reads and moves as `p` itself;
    /// `None` when `e` names no pointer variable.
    pub(in crate::lower) fn pointer_variable_cell(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
    ) -> Option<Arg> {
        let c = match &e.kind {
            // A reference to a pointer passed on (`step(p, n)` in a
            // function taking `device T*& p`): the caller's cell.
            ExprKind::Name(path) => match fx.lookup(path.last()?) {
                Some(Local::Cell(c)) if path.len() == 1 && !c.addressed && c.count.is_none() => {
                    Some(c.clone())
                }
                // A pointer member of `this` held in a cell (a closure's
                // `T*&` capture in its call operator).
                None if path.len() == 1 => self.cell_of(fx, e).filter(|c| c.count.is_none()),
                _ => None,
            },
            // `o.p` of a local object: its member's cell.
            ExprKind::Member(_, _, false) => self.cell_of(fx, e).filter(|c| c.count.is_none()),
            _ => None,
        };
        let c = match c {
            Some(c) => c,
            None => match self.address_of_pointer_variable(fx, e, e.span)? {
                Value::Cell(c) => c,
                _ => return None,
            },
        };
        let value = Value::Cell(PtrCell {
            addressed: false,
            ..c
        });
        Some(Arg {
            ty: arg_type(&value),
            value,
            span: e.span,
        })
    }

    /// Passes `a` for a reference to a pointer `pty` (`device T*& p`): a
    /// pointer variable's cell ([`Self::pointer_variable_cell`]), as `&p`
    /// is passed for a pointer to a pointer; a parameter that is itself
    /// such a reference passes its caller's cell on.
    pub(in crate::lower) fn pass_pointer_reference(
        &mut self,
        fx: &mut FnCtx,
        pty: &Type,
        a: Arg,
    ) -> Result<(ArgKey, Vec<Handle<Expression>>)> {
        match a.value {
            Value::Cell(c) if c.count.is_none() => {
                let addressed = PtrCell {
                    addressed: true,
                    ..c
                };
                self.pass_pointer_address(fx, pty, addressed, a.span)
            }
            _ => Err(Error::coded(
                Code::Unsupported,
                a.span,
                format!(
                    "a reference to a pointer (`{}`) is supported only bound to a pointer variable or pointer member",
                    self.program.display(pty)
                ),
            )
            .note("pass the name of a pointer variable; WGSL stores no pointers, so the reference is the variable's index, which the callee moves")),
        }
    }

    /// The cell that `e` points to when `e` names a pointer to a pointer
    /// variable (a parameter given `&p`).
    pub(in crate::lower) fn addressed_cell(&self, fx: &FnCtx, e: &Expr) -> Option<PtrCell> {
        let ExprKind::Name(path) = &e.kind else {
            return None;
        };
        let [name] = path.as_slice() else {
            return None;
        };
        match fx.lookup(name) {
            Some(Local::Cell(c)) if c.addressed => Some(c.clone()),
            _ => None,
        }
    }

    /// `*ps`: the pointer that the pointer to a pointer `c` points to.
    pub(in crate::lower) fn pointed_cell(
        &mut self,
        fx: &mut FnCtx,
        c: &PtrCell,
        span: Span,
    ) -> Result<Value> {
        if !c.addressed {
            return Err(Error::coded(
                Code::InvalidOperands,
                span,
                "indirection requires a pointer operand",
            ));
        }
        let held = PtrCell {
            addressed: false,
            ..c.clone()
        };
        self.read_cell(fx, &held, span)
    }

    /// `ps[i]` of the pointer to a pointer `c`: `ps[0]` (any other element
    /// is outside the one pointer `c` points to).
    pub(in crate::lower) fn pointed_cell_value(
        &mut self,
        fx: &mut FnCtx,
        c: PtrCell,
        _index: Handle<Expression>,
        span: Span,
    ) -> Result<Value> {
        self.pointed_cell(fx, &c, span)
    }

    /// Passes `&p` (the addressed cell `c`) for a parameter of type `pty`,
    /// which must be a pointer to a pointer: as the pointer `p` would be
    /// passed (which specialises the helper for its root), then a
    /// `ptr<function, u32>` to `p`'s index.
    pub(in crate::lower) fn pass_pointer_address(
        &mut self,
        fx: &mut FnCtx,
        pty: &Type,
        c: PtrCell,
        span: Span,
    ) -> Result<(ArgKey, Vec<Handle<Expression>>)> {
        // The pointer type the parameter points to: `T**`, or `T* ps[n]`
        // adjusted to a pointer to its first element.
        let pointed = match pty {
            // `T**`, or `T*&` (a reference to the pointer `p` itself).
            Type::Pointer(pp) => Some(pp.pointee.clone()),
            Type::Array(elem, _) => Some((**elem).clone()),
            _ => None,
        };
        let takes = |q: &crate::types::Pointer| {
            !q.is_reference
                && q.pointee.unpacked() == c.ty.pointee.unpacked()
                && (q.is_const || !c.ty.is_const)
        };
        let Some(pointed @ Type::Pointer(_)) =
            pointed.filter(|t| matches!(t, Type::Pointer(q) if takes(q)))
        else {
            return Err(Error::coded(
                Code::TypeMismatch,
                span,
                format!(
                    "cannot pass `&{}`, a `{}`, for a parameter of type `{}`",
                    c.member,
                    self.program.display(&c.value_type()),
                    self.program.display(pty)
                ),
            ));
        };
        let value = self.pointed_cell(fx, &c, span)?;
        let arg = Arg {
            ty: arg_type(&value),
            value,
            span,
        };
        let (k, mut hs) = self.pass_argument(fx, &pointed, arg)?;
        hs.push(c.index);
        Ok((ArgKey::PointerAddress(Box::new(k)), hs))
    }

    /// A helper's parameter `pname` that points to a pointer of type
    /// `held`, given `&p` ([`ArgKey::PointerAddress`]): the root as `inner` passes
    /// it, and `p`'s index variable.
    pub(in crate::lower) fn pointer_address_parameter(
        &mut self,
        fx: &mut FnCtx,
        pname: &str,
        held: &Type,
        inner: &ArgKey,
        span: Span,
    ) -> Result<Local> {
        let c = self.cell_parameter(fx, pname, held, pname, inner, span)?;
        Ok(Local::Cell(PtrCell {
            addressed: true,
            ..c
        }))
    }

    /// A `thread` pointer to one object (`&total`, a scalar or an array
    /// element) for a one-element array parameter (`thread U totals[1]`):
    /// a one-element array holding the object's value, to pass instead,
    /// and the copy back into the object after the call. `None` for any
    /// other parameter or argument.
    pub(in crate::lower) fn one_object_array_argument(
        &mut self,
        fx: &mut FnCtx,
        pty: &Type,
        a: &Arg,
        span: Span,
    ) -> Result<Option<(Arg, crate::lower::cxx::functions::PartCopy)>> {
        let Type::Pointer(pp) = pty else {
            return Ok(None);
        };
        let Type::Array(elem, 1) = &pp.pointee else {
            return Ok(None);
        };
        let Value::Ptr(p) = &a.value else {
            return Ok(None);
        };
        let fits = pp.is_reference
            && pp.space == AddressSpace::Thread
            && p.space == AddressSpace::Thread
            && p.pointee.unpacked() == elem.unpacked()
            && (pp.is_const || !p.is_const)
            && matches!(p.root, crate::lower::ctx::value::PtrRoot::Place(..));
        if !fits {
            return Ok(None);
        }
        let object = self.element_place(fx, p, p.index, span).ptr;
        let ty = self.naga_type(&pp.pointee, span)?;
        let var = fx.local("metal_one_element", ty, span);
        let array = fx.add(Expression::LocalVariable(var), span);
        let first = fx.add(
            Expression::AccessIndex {
                base: array,
                index: 0,
            },
            span,
        );
        let value = fx.add(Expression::Load { pointer: object }, span);
        fx.push(
            naga::Statement::Store {
                pointer: first,
                value,
            },
            span,
        );
        let value = Value::Place(crate::lower::ctx::value::Place {
            ptr: array,
            ty: pp.pointee.clone(),
            writable: !p.is_const,
        });
        let passed = Arg {
            ty: arg_type(&value),
            value,
            span: a.span,
        };
        Ok(Some((passed, (object, first, !p.is_const))))
    }

    /// A local array of pointers declared without an initializer
    /// (`const device T* inputs[n];`, set element by element): a cell of
    /// `n` indices in an `array<u32, n>` variable, its root fixed by the
    /// first assignment to an element.
    pub(in crate::lower) fn pointer_array_cell(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        pp: &crate::types::Pointer,
        n: u32,
        span: Span,
    ) -> Result<Local> {
        let indices = self.naga_type(&Type::Array(Box::new(Type::UINT), n), span)?;
        let var = fx.local(name, indices, span);
        Ok(Local::Cell(PtrCell {
            index: fx.add(Expression::LocalVariable(var), span),
            target: Rc::new(RefCell::new(None)),
            ty: pp.clone(),
            member: name.to_string(),
            count: Some(n),
            addressed: false,
        }))
    }
}
