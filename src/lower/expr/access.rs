//! Indexing, member access, swizzles and assignment.

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Local, Place, PtrRoot, PtrValue, Value};
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{BinaryOp, Expr, ExprKind};
use crate::types::{Scalar, Type};
use naga::{Expression, Handle, Literal, Statement};

impl Lowerer<'_, '_> {
    /// `base[index]`
    pub(in crate::lower) fn index(
        &mut self,
        fx: &mut FnCtx,
        base: &Expr,
        index: &Expr,
        span: Span,
    ) -> Result<Value> {
        // `s[i]` on a struct with `operator[]` (members.rs).
        if let Some(v) = self.index_operator(fx, base, index, span)? {
            return Ok(v);
        }
        let b = self.expr(fx, base)?;
        let (hi, ti) = self.rvalue(fx, index)?;
        if !matches!(ti, Type::Scalar(s) if s.is_integer() || s == Scalar::Bool) {
            return Err(Error::new(
                index.span,
                format!(
                    "array subscript is not an integer (it is `{}`)",
                    self.program.display(&ti)
                ),
            ));
        }
        // naga indexes with 32-bit integers; wider indices wrap to 32 bits.
        let (hi, ti) = if matches!(
            ti,
            Type::Scalar(Scalar::Bool | Scalar::Long | Scalar::ULong)
        ) {
            (
                self.convert(fx, hi, &ti, &Type::UINT, true, span)?,
                Type::UINT,
            )
        } else {
            (hi, ti)
        };
        if let Some(ty) = value_type(&b) {
            self.check_constant_index(fx, ty, hi, index.span)?;
        }
        match b {
            Value::Ptr(p) => {
                let offset = if ti == Type::INT {
                    fx.add(
                        Expression::As {
                            expr: hi,
                            kind: naga::ScalarKind::Uint,
                            convert: None,
                        },
                        span,
                    )
                } else {
                    hi
                };
                if !matches!(
                    p.root,
                    PtrRoot::Buffer(_) | PtrRoot::Bytes(_) | PtrRoot::Place(_, true)
                ) && !is_zero_literal(fx, offset)
                {
                    return Err(Error::new(
                        span,
                        "indexing a pointer to a single object is not supported",
                    )
                    .with_code(crate::diagnostics::Code::Unsupported));
                }
                let index = self.ptr_advance(fx, &p, offset, false, span);
                Ok(self.element_value(fx, &PtrValue { index, ..p }, span))
            }
            Value::Bytes(bp) => {
                let elem = self.element_type(&bp.ty, base.span)?;
                let stride = crate::layout::metal(&elem, &self.program.structs).size;
                let index = if ti == Type::INT {
                    fx.add(
                        Expression::As {
                            expr: hi,
                            kind: naga::ScalarKind::Uint,
                            convert: None,
                        },
                        span,
                    )
                } else {
                    hi
                };
                let offset = self.scaled_offset(fx, bp.offset, index, stride, span);
                Ok(Value::Bytes(crate::lower::ctx::value::BytePlace {
                    offset,
                    ty: elem,
                    ..bp
                }))
            }
            Value::Place(p) => {
                let elem = self.element_type(&p.ty, base.span)?;
                let ptr = self.access(fx, p.ptr, hi, span);
                Ok(Value::Place(Place {
                    ptr,
                    ty: elem,
                    writable: p.writable,
                }))
            }
            Value::Swizzle(..) | Value::BytesSwizzle(..) | Value::Rv(..) => {
                let (h, t) = self.load(fx, b, base.span)?;
                let elem = self.element_type(&t, base.span)?;
                if matches!(t, Type::Matrix { .. })
                    && !matches!(fx.expr(hi), Expression::Literal(_))
                {
                    // naga indexes matrix values only through a pointer: spill.
                    let th = self.naga_type(&t, span)?;
                    let var = fx.local("_m", th, span);
                    let ptr = fx.add(Expression::LocalVariable(var), span);
                    fx.push(
                        Statement::Store {
                            pointer: ptr,
                            value: h,
                        },
                        span,
                    );
                    let at = fx.add(
                        Expression::Access {
                            base: ptr,
                            index: hi,
                        },
                        span,
                    );
                    return Ok(Value::Rv(
                        fx.add(Expression::Load { pointer: at }, span),
                        elem,
                    ));
                }
                Ok(Value::Rv(self.access(fx, h, hi, span), elem))
            }
            Value::Void => Err(Error::new(base.span, "subscripted value is `void`")),
        }
    }

    /// A literal index must lie inside a fixed-size array, vector or matrix:
    /// Metal (clang) only warns, and the result is undefined, but WGSL
    /// rejects a constant out-of-bounds index when the shader is created.
    fn check_constant_index(
        &self,
        fx: &FnCtx,
        ty: &Type,
        index: Handle<Expression>,
        span: Span,
    ) -> Result<()> {
        let len = match *ty {
            Type::Array(_, n) => n,
            Type::Vector(_, n) | Type::Packed(_, n) => n.into(),
            Type::Matrix { columns, .. } => columns.into(),
            _ => return Ok(()),
        };
        let value = match self.constant_literal(fx, index) {
            Some(Literal::I32(v)) => i64::from(v),
            Some(Literal::U32(v)) => i64::from(v),
            _ => return Ok(()),
        };
        if (0..i64::from(len)).contains(&value) {
            return Ok(());
        }
        let place = if value < 0 {
            "before the beginning of"
        } else {
            "past the end of"
        };
        Err(Error::new(
            span,
            format!(
                "index {value} is {place} `{}` ({len} element{})",
                self.program.display(ty),
                if len == 1 { "" } else { "s" }
            ),
        )
        .note("Metal leaves the result undefined; WGSL refuses a constant index out of bounds")
        .with_code(crate::diagnostics::Code::IndexOutOfBounds))
    }

    /// `Access`, or `AccessIndex` for a literal index.
    fn access(
        &mut self,
        fx: &mut FnCtx,
        base: Handle<Expression>,
        index: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        match *fx.expr(index) {
            Expression::Literal(Literal::I32(v)) if v >= 0 => fx.add(
                Expression::AccessIndex {
                    base,
                    index: v as u32,
                },
                span,
            ),
            Expression::Literal(Literal::U32(v)) => {
                fx.add(Expression::AccessIndex { base, index: v }, span)
            }
            _ => fx.add(Expression::Access { base, index }, span),
        }
    }

    fn element_type(&self, ty: &Type, span: Span) -> Result<Type> {
        match ty {
            Type::Array(e, _) => Ok((**e).clone()),
            Type::Vector(s, _) | Type::Packed(s, _) => Ok(Type::Scalar(*s)),
            Type::Matrix { scalar, rows, .. } => Ok(Type::Vector(*scalar, *rows)),
            _ => Err(Error::new(
                span,
                format!(
                    "subscripted value of type `{}` is not an array, vector, matrix or pointer",
                    self.program.display(ty)
                ),
            )),
        }
    }

    /// `base.name` on structs (members) and vectors (swizzles).
    pub(in crate::lower) fn member(
        &mut self,
        fx: &mut FnCtx,
        base: Value,
        name: &str,
        span: Span,
    ) -> Result<Value> {
        let ty = match &base {
            Value::Place(p) => p.ty.clone(),
            Value::Rv(_, t) => t.clone(),
            Value::Swizzle(p, c) => Type::vector(p.ty.element_scalar().unwrap(), c.len() as u8),
            Value::Bytes(b) => b.ty.clone(),
            Value::BytesSwizzle(b, c) => {
                Type::vector(b.ty.element_scalar().unwrap(), c.len() as u8)
            }
            Value::Ptr(_) => {
                return Err(Error::new(
                    span,
                    "member reference type is a pointer; use `->`",
                ))
            }
            Value::Void => return Err(Error::new(span, "member access on `void`")),
        };
        match ty {
            Type::Struct(id) => {
                let def = self.program.structs.get(id);
                let Some(i) = def.members.iter().position(|m| m.name == name) else {
                    return Err(Error::new(
                        span,
                        format!("no member named `{name}` in `{}`", def.name),
                    )
                    .with_code(crate::diagnostics::Code::UnknownMember));
                };
                let mty = def.members[i].ty.clone();
                let index = self.member_index(id, i);
                match base {
                    Value::Bytes(b) => {
                        let offset =
                            crate::layout::struct_layout(id, &self.program.structs).offsets[i];
                        let offset = self.add_offset(fx, b.offset, offset, span);
                        Ok(Value::Bytes(crate::lower::ctx::value::BytePlace {
                            offset,
                            ty: mty,
                            ..b
                        }))
                    }
                    Value::Place(p) => {
                        let ptr = fx.add(Expression::AccessIndex { base: p.ptr, index }, span);
                        Ok(Value::Place(Place {
                            ptr,
                            ty: mty,
                            writable: p.writable,
                        }))
                    }
                    other => {
                        let (h, _) = self.load(fx, other, span)?;
                        Ok(Value::Rv(
                            fx.add(Expression::AccessIndex { base: h, index }, span),
                            mty,
                        ))
                    }
                }
            }
            Type::Vector(s, n) | Type::Packed(s, n) => {
                let comps = swizzle_components(name, n).ok_or_else(|| {
                    Error::new(
                        span,
                        format!(
                            "invalid vector component or swizzle `{name}` on `{}`",
                            self.program.display(&ty)
                        ),
                    )
                })?;
                match base {
                    Value::Bytes(b) if comps.len() == 1 => {
                        let offset =
                            self.add_offset(fx, b.offset, u32::from(comps[0]) * s.size(), span);
                        Ok(Value::Bytes(crate::lower::ctx::value::BytePlace {
                            offset,
                            ty: Type::Scalar(s),
                            ..b
                        }))
                    }
                    Value::Bytes(b) => Ok(Value::BytesSwizzle(b, comps)),
                    Value::BytesSwizzle(b, inner) => Ok(Value::BytesSwizzle(
                        b,
                        comps.iter().map(|c| inner[*c as usize]).collect(),
                    )),
                    Value::Place(p) if comps.len() == 1 => {
                        let ptr = fx.add(
                            Expression::AccessIndex {
                                base: p.ptr,
                                index: u32::from(comps[0]),
                            },
                            span,
                        );
                        Ok(Value::Place(Place {
                            ptr,
                            ty: Type::Scalar(s),
                            writable: p.writable,
                        }))
                    }
                    Value::Place(p) => Ok(Value::Swizzle(p, comps)),
                    Value::Swizzle(p, inner) => Ok(Value::Swizzle(
                        p,
                        comps.iter().map(|c| inner[*c as usize]).collect(),
                    )),
                    other => {
                        let (h, _) = self.load(fx, other, span)?;
                        let v = Value::Swizzle(
                            Place {
                                ptr: h,
                                ty: ty.clone(),
                                writable: false,
                            },
                            comps.clone(),
                        );
                        // Swizzle of a value: build it directly.
                        let Value::Swizzle(_, comps) = v else {
                            unreachable!()
                        };
                        Ok(Value::Rv(
                            self.value_swizzle(fx, h, &comps, span),
                            Type::vector(s, comps.len() as u8),
                        ))
                    }
                }
            }
            _ => Err(Error::new(
                span,
                format!(
                    "member reference base type `{}` is not a structure or vector",
                    self.program.display(&ty)
                ),
            )),
        }
    }

    fn value_swizzle(
        &mut self,
        fx: &mut FnCtx,
        vector: Handle<Expression>,
        comps: &[u8],
        span: Span,
    ) -> Handle<Expression> {
        if comps.len() == 1 {
            return fx.add(
                Expression::AccessIndex {
                    base: vector,
                    index: u32::from(comps[0]),
                },
                span,
            );
        }
        let mut pattern = [naga::SwizzleComponent::X; 4];
        for (i, c) in comps.iter().enumerate() {
            pattern[i] = naga::SwizzleComponent::XYZW[*c as usize];
        }
        fx.add(
            Expression::Swizzle {
                size: crate::lower::types::vector_size(comps.len() as u8),
                vector,
                pattern,
            },
            span,
        )
    }

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
            if crate::lower::expr::contains_atomic(&p.ty) {
                return Err(crate::lower::expr::atomic_access(span));
            }
        }
        match target {
            Value::Place(p) => {
                if !p.writable {
                    return Err(Error::new(span, "cannot assign to a read-only location").note(
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
            Value::Swizzle(p, comps) => {
                if !p.writable {
                    return Err(Error::new(span, "cannot assign to a read-only location"));
                }
                let mut seen = 0u8;
                for c in comps {
                    if seen & (1 << c) != 0 {
                        return Err(Error::new(
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
            Value::Bytes(b) => {
                if !b.writable {
                    return Err(Error::new(span, "cannot assign to a read-only location").note(
                        "memory in the `constant` or `const device` address space cannot be written",
                    ));
                }
                if crate::lower::expr::contains_atomic(&b.ty) {
                    return Err(crate::lower::expr::atomic_access(span));
                }
                let v = self.convert(fx, value, ty, &b.ty.unpacked(), false, span)?;
                self.bytes_store(fx, b, v, span)?;
                Ok(v)
            }
            Value::BytesSwizzle(b, comps) => {
                if !b.writable {
                    return Err(Error::new(span, "cannot assign to a read-only location"));
                }
                let s = b.ty.element_scalar().expect("a vector");
                let part_ty = Type::vector(s, comps.len() as u8);
                let v = self.convert(fx, value, ty, &part_ty, false, span)?;
                let mut seen = 0u8;
                for (k, c) in comps.iter().enumerate() {
                    if seen & (1 << c) != 0 {
                        return Err(Error::new(
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
                        &crate::lower::ctx::value::BytePlace {
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
            _ => Err(Error::new(span, "expression is not assignable")),
        }
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
        if let ExprKind::Name(path) = &lhs.kind {
            let name = path.last().map(String::as_str).unwrap_or("");
            if fx.lookup(name).is_none()
                && matches!(
                    self.program.symbols.get(name),
                    Some(crate::sema::Symbol::Constant(_))
                )
            {
                return Err(Error::new(
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
                _ => return Err(Error::new(lhs.span, "expression is not assignable")),
            };
            self.init_list(fx, items, &ty, rhs.span)?
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
            _ => return Err(Error::new(lhs.span, "expression is not assignable")),
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

    /// Assignment to a pointer variable: `p = q`, `p += n`.
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
        let Some(Local::PtrVar { var, ptr }) = fx.lookup(path.last()?).cloned() else {
            if let Some(Local::Ptr(_)) = fx.lookup(path.last()?) {
                return Some(Err(Error::new(
                    lhs.span,
                    "pointer parameters cannot be reassigned yet",
                )));
            }
            return None;
        };
        Some((|| {
            let new = match op {
                None => self.expr(fx, rhs)?,
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
                    self.pointer_offset(fx, op, p, &synthetic, span)?
                }
            };
            let Value::Ptr(q) = new else {
                return Err(Error::new(rhs.span, "assigning a non-pointer to a pointer"));
            };
            if q.root != ptr.root {
                return Err(Error::new(
                    span,
                    "a pointer variable must keep pointing into the same buffer or object",
                )
                .note("pointers are translated as a fixed buffer plus an element index"));
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

    fn pointer_offset(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        p: PtrValue,
        rhs: &Expr,
        span: Span,
    ) -> Result<Value> {
        let (h, t) = self.rvalue(fx, rhs)?;
        if !matches!(op, BinaryOp::Add | BinaryOp::Sub)
            || !matches!(t, Type::Scalar(s) if s.is_integer())
        {
            return Err(Error::new(span, "invalid pointer arithmetic"));
        }
        let h = if t == Type::UINT {
            h
        } else {
            fx.add(
                Expression::As {
                    expr: h,
                    kind: naga::ScalarKind::Uint,
                    convert: None,
                },
                span,
            )
        };
        let naga_op = if op == BinaryOp::Add {
            naga::BinaryOperator::Add
        } else {
            naga::BinaryOperator::Subtract
        };
        let index = fx.add(
            Expression::Binary {
                op: naga_op,
                left: p.index,
                right: h,
            },
            span,
        );
        Ok(Value::Ptr(PtrValue { index, ..p }))
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
            return Err(Error::new(
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

fn is_zero_literal(fx: &FnCtx, h: Handle<Expression>) -> bool {
    matches!(
        fx.expr(h),
        Expression::Literal(Literal::U32(0) | Literal::I32(0))
    )
}

/// `xyzw` / `rgba` swizzles of a vector of `n` components.
fn swizzle_components(name: &str, n: u8) -> Option<Vec<u8>> {
    if name.is_empty() || name.len() > 4 {
        return None;
    }
    let set = if name.chars().all(|c| "xyzw".contains(c)) {
        "xyzw"
    } else if name.chars().all(|c| "rgba".contains(c)) {
        "rgba"
    } else {
        return None;
    };
    name.chars()
        .map(|c| set.find(c).map(|i| i as u8).filter(|i| *i < n))
        .collect()
}

/// The MSL type of an indexed value, where it is known without loading.
fn value_type(v: &Value) -> Option<&Type> {
    match v {
        Value::Place(p) => Some(&p.ty),
        Value::Bytes(b) => Some(&b.ty),
        Value::Rv(_, t) => Some(t),
        _ => None,
    }
}
