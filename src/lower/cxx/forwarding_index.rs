//! `operator[]` that forwards to an array member: Tint's `tint_array`
//! (`device T& operator[](size_t i) device { return elements[i]; }`, one
//! overload per address space) and SPIRV-Cross's `spvUnsafeArray`.
//!
//! C++: such an operator returns a reference to `elements[i]` of the object.
//! WGSL has no functions returning references; the call is lowered as the
//! place `object.elements[i]` itself, which is what every overload returns,
//! so the object keeps its address space and `&a[i]`, `a[i] = v` work on
//! buffers, threadgroup and thread memory alike.

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind, StmtKind};
use crate::types::Type;

/// The element type of array member `m` of the struct `object` holds.
fn element_type(l: &Lowerer<'_, '_>, object: &Value, m: &str) -> Option<Type> {
    let ty = match object {
        Value::Place(p) => &p.ty,
        Value::Bytes(b) => &b.ty,
        _ => return None,
    };
    let Type::Struct(id) = ty else { return None };
    let member = l
        .program
        .structs
        .get(*id)
        .members
        .iter()
        .find(|x| x.name == m)?;
    match &member.ty {
        Type::Array(e, _) => Some((**e).clone()),
        _ => None,
    }
}

impl Lowerer<'_, '_> {
    /// `object[index]` when every candidate `operator[]` in `fns` is
    /// `T& operator[](I i) { return m[i]; }` for one array member `m` and
    /// `object` is a place; `None` otherwise (a real call then).
    pub(in crate::lower) fn forwarding_index(
        &mut self,
        fx: &mut FnCtx,
        object: &Value,
        fns: &[usize],
        index: &Expr,
        span: Span,
    ) -> Result<Option<Value>> {
        if !matches!(object, Value::Place(_) | Value::Bytes(_)) || fns.is_empty() {
            return Ok(None);
        }
        let mut member: Option<&str> = None;
        for &i in fns {
            let Some(f) = self.program.functions.get(i) else {
                return Ok(None);
            };
            let Some(param) = f.params.last().and_then(|p| p.name.as_ref()) else {
                return Ok(None);
            };
            // The return type as declared (instantiation keeps `T`, not `T&`):
            // the array's element type, so the place reads as the call would.
            let Ok(ret) = self.program.resolve_type(&f.ret) else {
                return Ok(None);
            };
            let ret = match ret {
                crate::types::Type::Pointer(p) => p.pointee,
                t => t,
            };
            let forwarded = f.body.as_ref().is_some_and(|b| match b.stmts.as_slice() {
                [s] => match &s.kind {
                    StmtKind::Return(Some(e)) => match &e.kind {
                        ExprKind::Index(b, ix) => match (&b.kind, &ix.kind) {
                            (ExprKind::Name(m), ExprKind::Name(p))
                                if m.len() == 1 && p.len() == 1 && p[0] == param.name =>
                            {
                                element_type(self, object, &m[0]).is_some_and(|e| e == ret)
                                    && member.is_none_or(|x| x == m[0])
                                    && {
                                        member = Some(&m[0]);
                                        true
                                    }
                            }
                            _ => false,
                        },
                        _ => false,
                    },
                    _ => false,
                },
                _ => false,
            });
            if !forwarded {
                return Ok(None);
            }
        }
        let Some(m) = member else { return Ok(None) };
        let m = m.to_string();
        let elements = self.member(fx, object.clone(), &m, span)?;
        self.subscript_value(fx, elements, span, index, span)
            .map(Some)
    }
}
