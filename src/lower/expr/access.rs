//! Indexing, member access and swizzles.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Place, PtrRoot, PtrValue, Value};
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;
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
        // An array of resources in an argument buffer, or the struct an
        // argument-buffer pointer points to (`args[0]`).
        if matches!(&b, Value::Agg(a) if a.pointer.is_some() || matches!(a.ty, Type::Array(..))) {
            return self.aggregate_subscript(fx, b, index, span);
        }
        self.subscript_value(fx, b, base.span, index, span)
    }

    /// `&base[index]`: where `base` is an array in buffer or threadgroup
    /// memory, the pointer `base + index` ([expr.sub]: `a[i]` is `*(a +
    /// i)`), whose root is the whole array, so that pointers to two of its
    /// elements subtract and compare, and walk on past the element taken
    /// (SPIR-V's `OpPtrAccessChain`, `OpPtrDiff`); else the address of the
    /// element.
    pub(in crate::lower) fn address_of_element(
        &mut self,
        fx: &mut FnCtx,
        base: &Expr,
        index: &Expr,
        span: Span,
    ) -> Result<Value> {
        if let Some(v) = self.index_operator(fx, base, index, span)? {
            return self.address_of(fx, v, span);
        }
        let b = self.expr(fx, base)?;
        if matches!(&b, Value::Agg(a) if a.pointer.is_some() || matches!(a.ty, Type::Array(..))) {
            let v = self.aggregate_subscript(fx, b, index, span)?;
            return self.address_of(fx, v, span);
        }
        let walks = match &b {
            // A whole global array (`&tg[i]`) keeps its own root below.
            Value::Place(p) if matches!(fx.expr(p.ptr), Expression::GlobalVariable(_)) => {
                Value::Void
            }
            Value::Place(_) => self.decayed_shared_array(fx, b.clone(), base.span),
            // `&p[i]` of a pointer into an array that is part of a
            // variable: `p + i` (the element's address below would point
            // to that one element). Pointers into buffers and whole global
            // arrays get their own roots back below, as before.
            Value::Ptr(PtrValue {
                root: PtrRoot::Place(base, true),
                ..
            }) if !matches!(fx.expr(*base), Expression::GlobalVariable(_)) => b.clone(),
            _ => Value::Void,
        };
        if let Value::Ptr(p) = walks {
            let (hi, ti) = self.subscript(fx, index, span)?;
            let offset = uint_index(fx, hi, &ti, span);
            let index = self.ptr_advance(fx, &p, offset, false, span);
            return Ok(Value::Ptr(PtrValue { index, ..p }));
        }
        let v = self.subscript_value(fx, b, base.span, index, span)?;
        self.address_of(fx, v, span)
    }

    /// `b[index]` for `b` lowered already (from `base_span`).
    pub(in crate::lower) fn subscript_value(
        &mut self,
        fx: &mut FnCtx,
        b: Value,
        base_span: Span,
        index: &Expr,
        span: Span,
    ) -> Result<Value> {
        let (hi, ti) = self.subscript(fx, index, span)?;
        // Memory that reaches to the end of the bound buffer takes any
        // index, as in Metal: a trailing `T a[1]` the binding holds as a
        // runtime-sized array (`entry/trailing_array.rs`), and any array of
        // a buffer held as words (`metal/word_views.rs`), whose elements
        // are byte offsets into the whole buffer.
        if let Some(ty) = value_type(&b).filter(|_| !self.reaches_buffer_end(fx, &b)) {
            self.check_constant_index(fx, ty, hi, index.span)?;
        }
        match b {
            Value::Ptr(p) => {
                let offset = uint_index(fx, hi, &ti, span);
                // A pointer to a single object (a `thread float* x` given
                // `&sum`, as MLX's `threadgroup_sum<N = 1>` loops over
                // `x[i]`): the only index inside the object is 0, any other
                // is undefined in Metal, so every index reaches the object
                // (as WGSL's own out-of-bounds rule lands on some element
                // of the object indexed). A constant index other than 0 is
                // refused: it is always outside.
                if !matches!(
                    p.root,
                    PtrRoot::Buffer(_)
                        | PtrRoot::Bytes(_)
                        | PtrRoot::Place(_, true)
                        | PtrRoot::View { .. }
                ) && is_nonzero_literal(fx, offset)
                {
                    return Err(Error::coded(
                        Code::IndexOutOfBounds,
                        index.span,
                        "this index is outside the single object the pointer points to",
                    )
                    .note("the pointer was given one object (`&x`), not an array; only index 0 reaches it"));
                }
                let index = self.ptr_advance(fx, &p, offset, false, span);
                Ok(self.element_value(fx, &PtrValue { index, ..p }, span))
            }
            Value::Bytes(bp) => {
                let elem = self.element_type(&bp.ty, base_span)?;
                let stride = crate::layout::metal(&elem, &self.program.structs).size;
                let index = uint_index(fx, hi, &ti, span);
                let offset = self.scaled_offset(fx, bp.offset, index, stride, span);
                Ok(Value::Bytes(crate::lower::ctx::value::BytePlace {
                    offset,
                    ty: elem,
                    ..bp
                }))
            }
            Value::Place(p) => {
                let elem = self.element_type(&p.ty, base_span)?;
                let ptr = self.access(fx, p.ptr, hi, span);
                Ok(Value::Place(Place {
                    ptr,
                    ty: elem,
                    writable: p.writable,
                }))
            }
            Value::Swizzle(..)
            | Value::BytesSwizzle(..)
            | Value::Rv(..)
            | Value::BitField(..)
            | Value::WordPart(..) => self.index_value(fx, b, hi, base_span, span),
            Value::Void => Err(Error::coded(
                Code::WrongKind,
                base_span,
                "subscripted value is `void`",
            )),
            Value::Agg(a) => Err(self.place_struct_value_error(&a.ty, base_span)),
            // `src[i]` of an array of pointers (`metal/pointer_objects.rs`).
            Value::Cell(c) if c.count.is_some() => {
                let element = self.cell_element(fx, &c, hi, span);
                self.read_cell(fx, &element, span)
            }
            // `ps[0]` of a pointer to a pointer: the pointer itself.
            Value::Cell(c) if c.addressed => self.pointed_cell_value(fx, c, hi, span),
            Value::Cell(_) => unreachable!("a pointer member is read through its aggregate"),
            Value::Null(_) => Err(crate::lower::metal::buffer_pointers::null_use(base_span)),
        }
    }

    /// The subscript of `base[index]`: an integer (or `bool`, or a struct
    /// converting to one), as a 32-bit integer, since naga indexes with
    /// those.
    fn subscript(
        &mut self,
        fx: &mut FnCtx,
        index: &Expr,
        span: Span,
    ) -> Result<(Handle<Expression>, Type)> {
        // `src[idx]` with an `integral_constant` index: the built-in
        // subscript takes it through its conversion function ([over.built]).
        let v = self.expr(fx, index)?;
        let v = self.arithmetic_operand(fx, v, index.span)?;
        let (hi, ti) = self.load(fx, v, index.span)?;
        if !matches!(ti, Type::Scalar(s) if s.is_integer() || s == Scalar::Bool) {
            return Err(Error::coded(
                Code::InvalidOperands,
                index.span,
                format!(
                    "array subscript is not an integer (it is `{}`)",
                    self.program.display(&ti)
                ),
            ));
        }
        // naga indexes with 32-bit integers; wider indices wrap to 32 bits.
        Ok(
            if matches!(
                ti,
                Type::Scalar(Scalar::Bool | Scalar::Long | Scalar::ULong)
            ) {
                (
                    self.convert(fx, hi, &ti, &Type::UINT, true, span)?,
                    Type::UINT,
                )
            } else {
                (hi, ti)
            },
        )
    }

    /// Element `hi` of a value (not a place): naga indexes a matrix value
    /// with a non-constant index only through a pointer, so it is spilled to
    /// a local first.
    fn index_value(
        &mut self,
        fx: &mut FnCtx,
        b: Value,
        hi: Handle<Expression>,
        base_span: Span,
        span: Span,
    ) -> Result<Value> {
        let (h, t) = self.load(fx, b, base_span)?;
        let elem = self.element_type(&t, base_span)?;
        if matches!(t, Type::Matrix { .. }) && !matches!(fx.expr(hi), Expression::Literal(_)) {
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
        Err(Error::coded(
            Code::IndexOutOfBounds,
            span,
            format!(
                "index {value} is {place} `{}` ({len} element{})",
                self.program.display(ty),
                if len == 1 { "" } else { "s" }
            ),
        )
        .note("Metal leaves the result undefined; WGSL refuses a constant index out of bounds"))
    }

    /// Whether `b` is a place whose naga type is a runtime-sized array, or
    /// a place in the words of a whole buffer (a runtime-sized `array<u32>`).
    fn reaches_buffer_end(&self, fx: &FnCtx, b: &Value) -> bool {
        let ty = match b {
            Value::Place(p) => self.pointee_type(fx, p.ptr),
            Value::Bytes(bp) => Some(self.global.module.global_variables[bp.global].ty),
            _ => None,
        };
        ty.is_some_and(|ty| {
            matches!(
                self.global.module.types[ty].inner,
                naga::TypeInner::Array {
                    size: naga::ArraySize::Dynamic,
                    ..
                }
            )
        })
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
            _ => Err(Error::coded(
                Code::InvalidOperands,
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
        if let Value::Agg(a) = &base {
            if a.pointer.is_some() {
                return Err(Error::coded(
                    Code::InvalidOperands,
                    span,
                    "member reference type is a pointer; use `->`",
                ));
            }
            let a = a.clone();
            return self.aggregate_member(fx, &a, name, span);
        }
        let ty = self.member_base_type(&base, span)?;
        match ty {
            Type::Struct(id) => match self.bit_field_member(&base, id, name) {
                Some(field) => Ok(field),
                None => self.struct_member(fx, base, id, name, span),
            },
            Type::Vector(..) | Type::Packed(..) => {
                self.vector_components(fx, base, &ty, name, span)
            }
            // `m.columns[i]`: `<metal_matrix>` keeps a matrix's columns in
            // its public array member `columns`, which Apple's samples (and
            // `<simd/simd.h>` in C) index; indexing the matrix is the same.
            Type::Matrix { .. } if name == "columns" => Ok(base),
            _ => Err(Error::coded(
                Code::InvalidOperands,
                span,
                format!(
                    "member reference base type `{}` is not a structure or vector",
                    self.program.display(&ty)
                ),
            )),
        }
    }

    /// The MSL type of the base of a `.` access.
    fn member_base_type(&self, base: &Value, span: Span) -> Result<Type> {
        Ok(match base {
            Value::Place(p) => p.ty.clone(),
            Value::Rv(_, t) => t.clone(),
            Value::Swizzle(p, c) => Type::vector(p.ty.element_scalar().unwrap(), c.len() as u8),
            Value::Bytes(b) => b.ty.clone(),
            Value::Agg(a) => a.ty.clone(),
            Value::BitField(b) => Type::Scalar(b.field.scalar),
            Value::WordPart(p) => p.pointee.unpacked(),
            Value::BytesSwizzle(b, c) => {
                Type::vector(b.ty.element_scalar().unwrap(), c.len() as u8)
            }
            Value::Ptr(_) | Value::Cell(_) | Value::Null(_) => {
                return Err(Error::coded(
                    Code::InvalidOperands,
                    span,
                    "member reference type is a pointer; use `->`",
                ))
            }
            Value::Void => {
                return Err(Error::coded(
                    Code::WrongKind,
                    span,
                    "member access on `void`",
                ))
            }
        })
    }

    /// Member `name` of struct `id`: at its Metal offset in a byte view, else
    /// by its naga member index.
    pub(in crate::lower) fn struct_member(
        &mut self,
        fx: &mut FnCtx,
        base: Value,
        id: crate::types::StructId,
        name: &str,
        span: Span,
    ) -> Result<Value> {
        let def = self.program.structs.get(id);
        let Some(i) = def.members.iter().position(|m| m.name == name) else {
            if let Some(e) = self.ambiguous_member(&def.name, name, span) {
                return Err(e);
            }
            if let Some(path) = self.anonymous_path(id, name) {
                // A member of an anonymous union or struct: through it.
                let (mut object, mut owner) = (base, id);
                for (hop, inner) in path {
                    object = self.struct_member(fx, object, owner, &hop, span)?;
                    owner = inner;
                }
                return self.struct_member(fx, object, owner, name, span);
            }
            // `op.init`: a static data member named through an object
            // ([class.static]/1); the object is not needed for its value.
            let qualified = [def.name.clone(), name.to_string()];
            if let Some(crate::sema::Symbol::Constant(_)) =
                self.program.qualified_symbol(&qualified)
            {
                return self.name(fx, &qualified, span);
            }
            return Err(Error::coded(
                Code::UnknownMember,
                span,
                format!("no member named `{name}` in `{}`", def.name),
            ));
        };
        let mty = def.members[i].ty.clone();
        let index = self.member_index(id, i);
        // A union's members are its bytes, read through a word view.
        let base = match base {
            Value::Bytes(_) => base,
            _ if def.is_union => self.union_bytes(fx, base, &Type::Struct(id), span)?,
            _ => base,
        };
        match base {
            Value::Bytes(b) => {
                let offset = crate::layout::struct_layout(id, &self.program.structs).offsets[i];
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

    /// The component or swizzle `name` of a vector of type `ty`: a place for
    /// one component, a swizzle of a place or byte view (still assignable),
    /// or a swizzled value.
    pub(in crate::lower) fn vector_components(
        &mut self,
        fx: &mut FnCtx,
        base: Value,
        ty: &Type,
        name: &str,
        span: Span,
    ) -> Result<Value> {
        let (Type::Vector(s, n) | Type::Packed(s, n)) = *ty else {
            unreachable!("a vector")
        };
        let comps = swizzle_components(name, n).ok_or_else(|| {
            Error::coded(
                Code::UnknownMember,
                span,
                format!(
                    "invalid vector component or swizzle `{name}` on `{}`",
                    self.program.display(ty)
                ),
            )
        })?;
        match base {
            Value::Bytes(b) if comps.len() == 1 => {
                let offset = self.add_offset(fx, b.offset, u32::from(comps[0]) * s.size(), span);
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
}

/// A subscript `hi` of type `ti` as a `u32` (an `int` is reinterpreted).
fn uint_index(fx: &mut FnCtx, hi: Handle<Expression>, ti: &Type, span: Span) -> Handle<Expression> {
    // `int`, and `short`/`char`, which are `i32` values too (64-bit
    // indices are `u32` by now, `subscript`).
    if matches!(ti, Type::Scalar(s) if s.is_signed_integer()) {
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
    }
}

/// A literal index other than 0 (`p[1]`).
fn is_nonzero_literal(fx: &FnCtx, h: Handle<Expression>) -> bool {
    match fx.expr(h) {
        Expression::Literal(Literal::U32(v)) => *v != 0,
        Expression::Literal(Literal::I32(v)) => *v != 0,
        Expression::As { expr, .. } => is_nonzero_literal(fx, *expr),
        _ => false,
    }
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
