//! Assignment: stores into places, swizzles and byte views (converting
//! implicitly), compound assignment, pointer variables, `++` and `--`.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::PtrValue;
use crate::lower::ctx::value::{BytePlace, Local, Place, Value};
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{BinaryOp, Expr, ExprKind};
use crate::types::AddressSpace;
use crate::types::{Scalar, Type};
use naga::{Expression, Handle, Statement};

impl Lowerer<'_, '_> {
    /// Stores `value` (of type `ty`) into an lvalue, converting implicitly.
    pub(in crate::lower) fn store(
        &mut self,
        fx: &mut FnCtx,
        target: &Value,
        value: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if let Value::Place(p) = target {
            if crate::lower::ctx::value::contains_atomic(&p.ty) {
                return Err(crate::lower::ctx::value::atomic_access(span));
            }
        }
        match target {
            Value::Place(p) => self.store_place(fx, p, value, ty, span),
            Value::Swizzle(p, comps) => self.store_swizzle(fx, p, comps, value, ty, span),
            Value::Bytes(b) => self.store_bytes(fx, b, value, ty, span),
            Value::BitField(b) => self.bit_field_store(fx, b, value, ty, span),
            Value::WordPart(p) => self.word_part_store(fx, p, value, ty, span),
            Value::BytesSwizzle(b, comps) => {
                self.store_bytes_swizzle(fx, b, comps, value, ty, span)
            }
            _ => Err(Error::coded(
                Code::NotAssignable,
                span,
                "expression is not assignable",
            )),
        }
    }

    /// A store through a naga pointer.
    fn store_place(
        &mut self,
        fx: &mut FnCtx,
        p: &Place,
        value: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if !p.writable {
            return Err(Error::coded(Code::NotAssignable, span, "cannot assign to a read-only location").note(
                "`const` variables and memory in the `constant` or `const device` address space cannot be written",
            ));
        }
        let v = self.convert(fx, value, ty, &p.ty, false, span)?;
        self.push_effect(
            fx,
            Statement::Store {
                pointer: p.ptr,
                value: v,
            },
            Some(p.ptr),
            span,
        );
        Ok(v)
    }

    /// A store to the components `comps` of the vector at `p`: WGSL cannot
    /// assign to a swizzle, so the whole vector is stored, its other lanes
    /// unchanged.
    fn store_swizzle(
        &mut self,
        fx: &mut FnCtx,
        p: &Place,
        comps: &[u8],
        value: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if !p.writable {
            return Err(Error::coded(
                Code::NotAssignable,
                span,
                "cannot assign to a read-only location",
            ));
        }
        let mut seen = 0u8;
        for c in comps {
            if seen & (1 << c) != 0 {
                return Err(Error::coded(
                    Code::NotAssignable,
                    span,
                    "vector swizzle with repeated components is not assignable",
                ));
            }
            seen |= 1 << c;
        }
        let Type::Vector(s, n) = p.ty else {
            unreachable!()
        };
        let part_ty = Type::vector(s, comps.len() as u8);
        let v = self.convert(fx, value, ty, &part_ty, false, span)?;
        let old = fx.add(Expression::Load { pointer: p.ptr }, span);
        let lanes = swizzle_store_lanes(fx, old, v, comps, n, span);
        let vty = self.naga_type(&p.ty, span)?;
        let new = fx.add(
            Expression::Compose {
                ty: vty,
                components: lanes,
            },
            span,
        );
        self.push_effect(
            fx,
            Statement::Store {
                pointer: p.ptr,
                value: new,
            },
            Some(p.ptr),
            span,
        );
        Ok(v)
    }

    /// A store to an object held in a buffer's words.
    fn store_bytes(
        &mut self,
        fx: &mut FnCtx,
        b: &BytePlace,
        value: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if !b.writable {
            return Err(Error::coded(
                Code::NotAssignable,
                span,
                "cannot assign to a read-only location",
            )
            .note("memory in the `constant` or `const device` address space cannot be written"));
        }
        if crate::lower::ctx::value::contains_atomic(&b.ty) {
            return Err(crate::lower::ctx::value::atomic_access(span));
        }
        let v = self.convert(fx, value, ty, &b.ty.unpacked(), false, span)?;
        self.bytes_store(fx, b, v, span)?;
        Ok(v)
    }

    /// A store to the components `comps` of a vector held in a buffer's
    /// words: one scalar store per component.
    fn store_bytes_swizzle(
        &mut self,
        fx: &mut FnCtx,
        b: &BytePlace,
        comps: &[u8],
        value: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if !b.writable {
            return Err(Error::coded(
                Code::NotAssignable,
                span,
                "cannot assign to a read-only location",
            ));
        }
        let s = b.ty.element_scalar().expect("a vector");
        let part_ty = Type::vector(s, comps.len() as u8);
        let v = self.convert(fx, value, ty, &part_ty, false, span)?;
        let mut seen = 0u8;
        for (k, c) in comps.iter().enumerate() {
            if seen & (1 << c) != 0 {
                return Err(Error::coded(
                    Code::NotAssignable,
                    span,
                    "vector swizzle with repeated components is not assignable",
                ));
            }
            seen |= 1 << c;
            let lane = if comps.len() == 1 {
                v
            } else {
                fx.add(
                    Expression::AccessIndex {
                        base: v,
                        index: k as u32,
                    },
                    span,
                )
            };
            let offset = self.add_offset(fx, b.offset, u32::from(*c) * s.size(), span);
            self.bytes_store(
                fx,
                &BytePlace {
                    offset,
                    ty: Type::Scalar(s),
                    ..b.clone()
                },
                lane,
                span,
            )?;
        }
        Ok(v)
    }

    /// `a = b`, `a op= b`.
    pub(in crate::lower) fn assign(
        &mut self,
        fx: &mut FnCtx,
        op: Option<BinaryOp>,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
    ) -> Result<Value> {
        if let Some(result) = self.assign_pointer(fx, op, lhs, rhs, span) {
            return result;
        }
        if let Some(result) = self.assign_cell(fx, op, lhs, rhs, span) {
            return result;
        }
        if let Some(result) = self.assign_aggregate(fx, op, lhs, rhs) {
            return result;
        }
        if let Some(result) = self.base_initializer(fx, op, lhs, rhs, span) {
            return result;
        }
        if let ExprKind::Name(path) = &lhs.kind {
            let name = path.last().map(String::as_str).unwrap_or("");
            if fx.lookup(name).is_none()
                && matches!(
                    self.program.symbols.get(name),
                    Some(crate::sema::Symbol::Constant(_))
                )
            {
                return Err(Error::coded(
                    Code::NotAssignable,
                    lhs.span,
                    format!("cannot assign to program-scope constant `{name}`"),
                )
                .note("variables in the `constant` address space are read-only"));
            }
        }
        let target = self.expr(fx, lhs)?;
        let (hv, tv) = if let ExprKind::InitList(items) = &rhs.kind {
            let ty = match &target {
                Value::Place(p) => p.ty.unpacked(),
                Value::Bytes(b) => b.ty.unpacked(),
                _ => {
                    return Err(Error::coded(
                        Code::NotAssignable,
                        lhs.span,
                        "expression is not assignable",
                    ))
                }
            };
            self.braced_list(fx, items, &ty, rhs.span)?
        } else if op.is_some() {
            // `acc += Int<4>{}`: the built-in compound assignment takes a
            // struct through its arithmetic conversion function.
            let v = self.expr(fx, rhs)?;
            let v = self.arithmetic_operand(fx, v, rhs.span)?;
            self.load(fx, v, rhs.span)?
        } else {
            self.rvalue(fx, rhs)?
        };
        let (hv, tv) = match op {
            None => (hv, tv),
            Some(op) => {
                let current = self.load(fx, target.clone(), lhs.span)?;
                self.binary_values(fx, op, current, (hv, tv), span)?
            }
        };
        let target_ty = match &target {
            Value::Place(p) => p.ty.unpacked(),
            Value::Swizzle(p, c) => Type::vector(p.ty.element_scalar().unwrap(), c.len() as u8),
            Value::Bytes(b) => b.ty.unpacked(),
            Value::BytesSwizzle(b, c) => {
                Type::vector(b.ty.element_scalar().unwrap(), c.len() as u8)
            }
            Value::BitField(b) => Type::Scalar(b.field.scalar),
            Value::WordPart(p) => p.pointee.unpacked(),
            _ => {
                return Err(Error::coded(
                    Code::NotAssignable,
                    lhs.span,
                    "expression is not assignable",
                ))
            }
        };
        // Compound assignment converts the result back (C++: `a = (T)(a op b)`).
        let hv = if op.is_some() {
            self.convert(fx, hv, &tv, &target_ty, true, span)?
        } else {
            hv
        };
        let tv = if op.is_some() { target_ty.clone() } else { tv };
        let stored = self.store(fx, &target, hv, &tv, span)?;
        Ok(Value::Rv(stored, target_ty))
    }

    /// Assignment to a pointer variable: `p = q`, `p += n` (a local, or a
    /// parameter the body reassigns: `rebind_reassigned_pointers`).
    fn assign_pointer(
        &mut self,
        fx: &mut FnCtx,
        op: Option<BinaryOp>,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
    ) -> Option<Result<Value>> {
        let ExprKind::Name(path) = &lhs.kind else {
            return None;
        };
        if let (None, Some(Local::PendingPtr { var, ty })) = (op, fx.lookup(path.last()?).cloned())
        {
            return Some(self.first_pointer_assignment(fx, path.last()?, var, &ty, rhs, span));
        }
        let Some(Local::PtrVar { var, ptr }) = fx.lookup(path.last()?).cloned() else {
            if let Some(Local::Null(_)) = fx.lookup(path.last()?) {
                return Some(self.assign_null_pointer(fx, op, path, rhs, span));
            }
            if let Some(Local::Ptr(_)) = fx.lookup(path.last()?) {
                return Some(Err(Error::coded(
                    Code::Unsupported,
                    lhs.span,
                    "pointer parameters cannot be reassigned yet",
                )));
            }
            return None;
        };
        Some((|| {
            let new = match op {
                None => self.expr(fx, rhs)?,
                Some(op) if !matches!(op, BinaryOp::Add | BinaryOp::Sub) => {
                    return Err(Error::coded(
                        Code::InvalidOperands,
                        span,
                        "invalid pointer arithmetic",
                    ))
                }
                Some(op) => {
                    let current = self.local_value(
                        fx,
                        Local::PtrVar {
                            var,
                            ptr: ptr.clone(),
                        },
                        lhs.span,
                    );
                    let Value::Ptr(p) = current else {
                        unreachable!()
                    };
                    let synthetic = Expr {
                        kind: rhs.kind.clone(),
                        span: rhs.span,
                    };
                    self.pointer_arithmetic(fx, op, p, &synthetic, span)?
                }
            };
            let Value::Ptr(q) = new else {
                return Err(Error::coded(
                    Code::TypeMismatch,
                    rhs.span,
                    "assigning a non-pointer to a pointer",
                ));
            };
            if !self.same_object(fx, &q.root, &ptr.root) {
                return Err(Error::coded(
                    Code::Unsupported,
                    span,
                    format!(
                        "`{}` points into {}; it cannot be made to point into {}",
                        path.join("::"),
                        self.root_description(fx, &ptr.root),
                        self.root_description(fx, &q.root)
                    ),
                )
                .note("a pointer is translated as a buffer or object fixed at translation time plus an element index that may change")
                .note("index the buffers instead, or pass each one to a function of its own"));
            }
            let p = fx.add(Expression::LocalVariable(var), span);
            fx.push(
                Statement::Store {
                    pointer: p,
                    value: q.index,
                },
                span,
            );
            Ok(Value::Ptr(q))
        })())
    }

    /// `p = nullptr;` (nothing changes) or `p = q;`, `p += n` where `p` is
    /// known to be null (`Local::Null`): refused, as naga has no storable
    /// pointers and `p` has no object to point into.
    fn assign_null_pointer(
        &mut self,
        fx: &mut FnCtx,
        op: Option<BinaryOp>,
        path: &[String],
        rhs: &Expr,
        span: Span,
    ) -> Result<Value> {
        if op.is_some() {
            return Err(crate::lower::metal::buffer_pointers::null_use(span));
        }
        match self.expr(fx, rhs)? {
            v @ Value::Null(_) => Ok(v),
            _ => Err(Error::coded(
                Code::Unsupported,
                span,
                format!(
                    "`{}` is null from its declaration (or from every call of this specialisation); it cannot be made to point at memory later",
                    path.join("::")
                ),
            )
            .note("a pointer is translated as a buffer or object fixed at translation time plus an element index that may change")
            .note("declare the pointer where it gets its object, or keep a `bool` saying whether it is set")),
        }
    }

    /// `row = in + k;` for a pointer declared without an initializer: the
    /// pointer's root is now `in`'s, and the name a pointer variable.
    fn first_pointer_assignment(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        var: naga::Handle<naga::LocalVariable>,
        ty: &crate::types::Pointer,
        rhs: &Expr,
        span: Span,
    ) -> Result<Value> {
        let Value::Ptr(q) = self.expr(fx, rhs)? else {
            return Err(Error::coded(
                Code::TypeMismatch,
                rhs.span,
                "assigning a non-pointer to a pointer",
            ));
        };
        let buffers = |s: AddressSpace| matches!(s, AddressSpace::Device | AddressSpace::Constant);
        let space_ok = q.space == ty.space || (buffers(q.space) && buffers(ty.space));
        if q.pointee.unpacked() != ty.pointee.unpacked()
            || !space_ok
            || (q.is_const && !ty.is_const)
        {
            return Err(Error::coded(
                Code::TypeMismatch,
                rhs.span,
                format!(
                    "cannot assign a pointer to `{}` to `{name}`, a pointer to `{}`",
                    self.program.display(&q.pointee),
                    self.program.display(&ty.pointee)
                ),
            ));
        }
        let p = fx.add(Expression::LocalVariable(var), span);
        fx.push(
            Statement::Store {
                pointer: p,
                value: q.index,
            },
            span,
        );
        let ptr = PtrValue {
            is_const: ty.is_const || q.is_const,
            ..q.clone()
        };
        fx.rebind(name, Local::PtrVar { var, ptr });
        Ok(Value::Ptr(q))
    }

    /// `++x`, `x++`, `--x`, `x--` (also on pointer variables).
    pub(in crate::lower) fn inc_dec(
        &mut self,
        fx: &mut FnCtx,
        target: &Expr,
        inc: bool,
        prefix: bool,
        span: Span,
    ) -> Result<Value> {
        let one = Expr {
            kind: ExprKind::Int {
                value: 1,
                suffix: crate::syntax::ast::LiteralSuffix::None,
                non_decimal: false,
            },
            span,
        };
        let op = if inc { BinaryOp::Add } else { BinaryOp::Sub };
        if self.names_cell(fx, target) {
            let before = self.expr(fx, target)?;
            let after = self.assign(fx, Some(op), target, &one, span)?;
            return Ok(if prefix { after } else { before });
        }
        if let ExprKind::Name(path) = &target.kind {
            if let Some(Local::PtrVar { .. }) =
                fx.lookup(path.last().map(String::as_str).unwrap_or(""))
            {
                let before = self.expr(fx, target)?;
                let after = self.assign(fx, Some(op), target, &one, span)?;
                return Ok(if prefix { after } else { before });
            }
        }
        let place = self.expr(fx, target)?;
        let (old, ty) = self.load(fx, place.clone(), target.span)?;
        if !matches!(ty.element_scalar(), Some(s) if s != Scalar::Bool)
            || matches!(ty, Type::Matrix { .. })
        {
            return Err(Error::coded(
                Code::InvalidOperands,
                span,
                format!(
                    "cannot increment or decrement a value of type `{}`",
                    self.program.display(&ty)
                ),
            ));
        }
        let (h1, t1) = self.rvalue(fx, &one)?;
        let (new, tn) = self.binary_values(fx, op, (old, ty.clone()), (h1, t1), span)?;
        let new = self.convert(fx, new, &tn, &ty, true, span)?;
        self.store(fx, &place, new, &ty, span)?;
        Ok(Value::Rv(if prefix { new } else { old }, ty))
    }
}

/// The `n` lanes of a vector after storing `v` to its components `comps`:
/// a lane of `v` where `comps` names it, else the lane of `old`.
fn swizzle_store_lanes(
    fx: &mut FnCtx,
    old: Handle<Expression>,
    v: Handle<Expression>,
    comps: &[u8],
    n: u8,
    span: Span,
) -> Vec<Handle<Expression>> {
    let mut lanes = Vec::new();
    for lane in 0..n {
        lanes.push(match comps.iter().position(|c| *c == lane) {
            Some(k) if comps.len() == 1 => {
                let _ = k;
                v
            }
            Some(k) => fx.add(
                Expression::AccessIndex {
                    base: v,
                    index: k as u32,
                },
                span,
            ),
            None => fx.add(
                Expression::AccessIndex {
                    base: old,
                    index: u32::from(lane),
                },
                span,
            ),
        });
    }
    lanes
}
