//! Reading a `thread` object as another type through a pointer cast:
//! `float(*(thread fp8_e4m3*)(&x))` with `x` a `uint8_t` and `fp8_e4m3` a
//! struct holding one `uint8_t`, `*(thread uint*)&f` with `f` a `float`.
//!
//! Metal: the load reads the object representation of `x` as the other
//! type (C++ only blesses it for layout-compatible types; Metal's clang
//! compiles any same-size read of a thread object this way).
//!
//! WGSL: `function`-space variables have no byte address, and a pointer
//! keeps its store type.
//!
//! Mapping: where both types are one scalar or vector of the same Metal
//! size, possibly wrapped in structs of one member each, the read is the
//! value of `x` with its bits reinterpreted (`as_type`, MSL §2.21) and
//! wrapped again. Anything else through such a pointer (writes, other
//! types, other address spaces of the operand) goes through
//! [`Lowerer::pointer_cast`] as before, which views device, constant and
//! threadgroup memory as words and refuses the rest (E0316).

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{PtrRoot, Value};
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{CastKind, Expr, ExprKind};
use crate::types::{AddressSpace, Type};
use naga::{Expression, Handle};

impl Lowerer<'_, '_> {
    /// `*(T*)p` (`a` is the cast): the read of a `thread` object as `T`,
    /// or the cast's pointer dereferenced; `None` when `a` is no cast to a
    /// pointer.
    pub(in crate::lower) fn deref_of_pointer_cast(
        &mut self,
        fx: &mut FnCtx,
        a: &Expr,
        span: Span,
    ) -> Result<Option<Value>> {
        let ExprKind::Cast(kind, ts, inner) = &a.kind else {
            return Ok(None);
        };
        if *kind == CastKind::AsType || matches!(inner.kind, ExprKind::InitList(_)) {
            return Ok(None);
        }
        // A type this cannot resolve (a reference to a pointer) is the
        // plain dereference's to lower, or to report.
        let Ok(Type::Pointer(target)) = self.program.resolve_type(ts) else {
            return Ok(None);
        };
        if target.is_reference {
            return Ok(None);
        }
        let v = self.expr(fx, inner)?;
        if let Value::Ptr(p) = &v {
            let thread_object = p.space == AddressSpace::Thread
                && matches!(p.root, PtrRoot::Place(_, false))
                && p.pointee.unpacked() != target.pointee.unpacked()
                && super::buffer_pointers::element_view(p, &target).is_none();
            if thread_object {
                if let Some(read) = self.punned_read(fx, v.clone(), &target.pointee, span)? {
                    return Ok(Some(read));
                }
            }
        }
        let p = self.pointer_cast_value(fx, &target, v, inner.span, a.span)?;
        Ok(Some(self.deref(fx, p, span)?))
    }

    /// The object `p` points to read as `to`, where both are one scalar or
    /// vector of one size (each possibly in one-member structs).
    fn punned_read(
        &mut self,
        fx: &mut FnCtx,
        p: Value,
        to: &Type,
        span: Span,
    ) -> Result<Option<Value>> {
        let Value::Ptr(ptr) = &p else {
            return Ok(None);
        };
        let (Some(from_bits), Some(to_bits)) = (self.lone_value(&ptr.pointee), self.lone_value(to))
        else {
            return Ok(None);
        };
        let structs = &self.program.structs;
        if crate::layout::metal(&from_bits, structs).size
            != crate::layout::metal(&to_bits, structs).size
            || crate::layout::metal(&ptr.pointee, structs).size
                != crate::layout::metal(to, structs).size
        {
            return Ok(None);
        }
        let from = ptr.pointee.clone();
        let place = self.deref(fx, p, span)?;
        let (mut h, _) = self.load(fx, place, span)?;
        // Into the wrapped value: member 0 of each one-member struct.
        let mut t = from;
        while let Type::Struct(id) = t {
            h = fx.add(Expression::AccessIndex { base: h, index: 0 }, span);
            t = self.program.structs.get(id).members[0].ty.clone();
        }
        let bits = if t.unpacked() == to_bits.unpacked() {
            h
        } else {
            let Value::Rv(b, _) = self.as_type(fx, h, &t, &to_bits, span)? else {
                unreachable!("as_type yields a value")
            };
            b
        };
        let value = self.wrapped(fx, bits, to, span)?;
        Ok(Some(Value::Rv(value, to.clone())))
    }

    /// The one scalar or vector `ty` holds: itself, or that of the one
    /// member of a struct (not a union, without bases).
    fn lone_value(&self, ty: &Type) -> Option<Type> {
        match ty {
            t if t.is_scalar_or_vector()
                && t.element_scalar() != Some(crate::types::Scalar::Bool) =>
            {
                Some(t.clone())
            }
            Type::Struct(id) => {
                let s = &self.program.structs.get(*id);
                match s.members.as_slice() {
                    [m] if !s.is_union && s.bases.is_empty() => self.lone_value(&m.ty),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `bits` (the lone value of `ty`) wrapped in `ty`'s structs.
    fn wrapped(
        &mut self,
        fx: &mut FnCtx,
        bits: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let Type::Struct(id) = ty else {
            return Ok(bits);
        };
        let member = self.program.structs.get(*id).members[0].ty.clone();
        let inner = self.wrapped(fx, bits, &member, span)?;
        let t = self.naga_type(ty, span)?;
        Ok(fx.add(
            Expression::Compose {
                ty: t,
                components: vec![inner],
            },
            span,
        ))
    }
}
