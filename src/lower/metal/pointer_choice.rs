//! `c ? p : q` between two pointers.
//!
//! Metal: a pointer may be chosen at run time (`return i < n ? src + i :
//! src;`), into one buffer or between two (`c ? &a->x : &b->y`).
//!
//! WGSL: no variable holds a pointer to storage memory, so an MSL pointer
//! is a root known at translation time plus a `u32` element index (mapping
//! doc §1.3).
//!
//! Mapping: two pointers with the same root are that root with the index
//! `select(q_index, p_index, c)`; a choice between two roots (two buffers,
//! two variables) has no such form and is refused where it is written
//! (E0401).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{PtrValue, Value};
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::types::Type;
use naga::{Expression, Handle};

impl Lowerer<'_, '_> {
    /// `cond ? a : b` for pointers `a` and `b` (`cond` of type `cond_ty`):
    /// one pointer whose index is chosen, when both have one root.
    pub(in crate::lower) fn pointer_choice(
        &mut self,
        fx: &mut FnCtx,
        (cond, cond_ty): (Handle<Expression>, &Type),
        a: PtrValue,
        b: PtrValue,
        span: Span,
    ) -> Result<Value> {
        if *cond_ty != Type::BOOL {
            return Err(Error::coded(
                Code::Unsupported,
                span,
                "a vector condition cannot choose between pointers",
            ));
        }
        if !self.same_object(fx, &a.root, &b.root)
            || a.space != b.space
            || a.pointee.unpacked() != b.pointee.unpacked()
        {
            return Err(Error::coded(
                Code::Unsupported,
                span,
                "a run-time choice between pointers into different objects is not supported",
            )
            .note("WGSL has no pointer that can point into either of two buffers or variables: a pointer is translated as one buffer or variable known at translation time plus an element index; choose an index into one buffer (`base + (c ? i : j)`), or branch and access each object in its own branch"));
        }
        let index = fx.add(
            Expression::Select {
                condition: cond,
                accept: a.index,
                reject: b.index,
            },
            span,
        );
        Ok(Value::Ptr(PtrValue {
            index,
            is_const: a.is_const || b.is_const,
            ..a
        }))
    }
}
