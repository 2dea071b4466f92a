//! Pointers: dereference, `&x`, element places, and pointer arithmetic.
//! A pointer into a buffer is a (root, element index) pair (see
//! [`PtrValue`]), so arithmetic moves the index and a dereference indexes
//! the root.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Local, Place, PtrRoot, PtrValue, Value};
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{BinaryOp, Expr};
use crate::types::{AddressSpace, Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal};

impl Lowerer<'_, '_> {
    /// `*p`, and the implicit dereference of `p->m`.
    pub(in crate::lower) fn deref(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        span: Span,
    ) -> Result<Value> {
        // `*pp` of a pointer to a pointer variable: the pointer it holds.
        if let Value::Cell(c) = v {
            return self.pointed_cell(fx, &c, span);
        }
        // An argument buffer passed as a pointer (`args->m`, `*args`).
        if let Value::Agg(a) = v {
            if a.pointer.is_some() {
                return Ok(Value::Agg(crate::lower::ctx::value::Aggregate {
                    pointer: None,
                    ..a
                }));
            }
            return Err(Error::coded(
                Code::InvalidOperands,
                span,
                "indirection requires a pointer operand",
            ));
        }
        let p = match v {
            Value::Ptr(p) => p,
            Value::Null(_) => return Err(null_use(span)),
            _ => {
                return Err(Error::coded(
                    Code::InvalidOperands,
                    span,
                    "indirection requires a pointer operand",
                ))
            }
        };
        Ok(self.element_value(fx, &p, span))
    }

    /// The place of element `index` of pointer `p`'s root.
    /// The object pointer `p` designates.
    pub(in crate::lower) fn element_value(
        &mut self,
        fx: &mut FnCtx,
        p: &PtrValue,
        span: Span,
    ) -> Value {
        match p.root {
            PtrRoot::Bytes(global) => Value::Bytes(crate::lower::ctx::value::BytePlace {
                global,
                offset: p.index,
                ty: p.pointee.clone(),
                writable: !p.is_const,
            }),
            PtrRoot::View { .. } if self.views_word_part(p) => Value::WordPart(p.clone()),
            _ => Value::Place(self.element_place(fx, p, p.index, span)),
        }
    }

    /// Advances a pointer by `k` elements (`u32`): for word-view buffers the
    /// index is a byte offset, so `k` is scaled by Metal's stride.
    pub(in crate::lower) fn ptr_advance(
        &mut self,
        fx: &mut FnCtx,
        p: &PtrValue,
        k: Handle<Expression>,
        subtract: bool,
        span: Span,
    ) -> Handle<Expression> {
        let k = match p.root {
            PtrRoot::Bytes(_) => {
                let stride = crate::layout::metal(&p.pointee, &self.program.structs).size;
                let zero = self.u32_lit(fx, 0, span);
                self.scaled_offset(fx, zero, k, stride, span)
            }
            _ => k,
        };
        if !subtract && matches!(fx.expr(p.index), Expression::Literal(Literal::U32(0))) {
            return k;
        }
        let op = if subtract { Bo::Subtract } else { Bo::Add };
        fx.add(
            Expression::Binary {
                op,
                left: p.index,
                right: k,
            },
            span,
        )
    }

    pub(in crate::lower) fn element_place(
        &mut self,
        fx: &mut FnCtx,
        p: &PtrValue,
        index: Handle<Expression>,
        span: Span,
    ) -> Place {
        let writable = !p.is_const;
        let ptr = match p.root {
            PtrRoot::Buffer(g) => {
                let base = fx.add(Expression::GlobalVariable(g), span);
                fx.add(Expression::Access { base, index }, span)
            }
            PtrRoot::Global(g) => fx.add(Expression::GlobalVariable(g), span),
            PtrRoot::Place(base, true) => fx.add(Expression::Access { base, index }, span),
            PtrRoot::Place(base, false) => base,
            PtrRoot::Bytes(_) => unreachable!("word views are reached through element_value"),
            PtrRoot::View {
                base,
                array,
                ref object,
            } => {
                let object = (**object).clone();
                self.thread_view_element(fx, (base, array, &object), &p.pointee, index, span)
            }
        };
        Place {
            ptr,
            ty: p.pointee.clone(),
            writable,
        }
    }

    pub(in crate::lower) fn address_of(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        span: Span,
    ) -> Result<Value> {
        if let Value::WordPart(p) = v {
            return Ok(Value::Ptr(p));
        }
        if let Value::Bytes(b) = v {
            let space = self.buffer_space(b.global);
            return Ok(Value::Ptr(PtrValue {
                root: PtrRoot::Bytes(b.global),
                index: b.offset,
                pointee: b.ty,
                space,
                is_const: !b.writable,
            }));
        }
        let Value::Place(place) = v else {
            return Err(Error::coded(
                Code::InvalidOperands,
                span,
                "cannot take the address of an rvalue",
            ));
        };
        // `&tg[0]` of an array global (a constant index): as `&tg[i]`.
        if let Expression::AccessIndex { base, index } = *fx.expr(place.ptr) {
            if let Expression::GlobalVariable(g) = *fx.expr(base) {
                let ty = self.global.module.global_variables[g].ty;
                if let naga::TypeInner::Array { .. } = self.global.module.types[ty].inner {
                    let space = self.buffer_space(g);
                    let index = self.u32_lit(fx, index, span);
                    return Ok(Value::Ptr(PtrValue {
                        root: PtrRoot::Buffer(g),
                        index,
                        pointee: place.ty,
                        space,
                        is_const: !place.writable,
                    }));
                }
            }
        }
        // `&buf[i]` stays a (buffer, index) pair.
        if let Expression::Access { base, index } = *fx.expr(place.ptr) {
            if let Expression::GlobalVariable(g) = *fx.expr(base) {
                let space = self.buffer_space(g);
                let index = self.index_u32(fx, index, span);
                return Ok(Value::Ptr(PtrValue {
                    root: PtrRoot::Buffer(g),
                    index,
                    pointee: place.ty,
                    space,
                    is_const: !place.writable,
                }));
            }
        }
        let zero = self.u32_lit(fx, 0, span);
        // `&buf->m`, `&tg[i].v`: the pointer is in the space of the
        // memory the place is in, not `thread`.
        let space = self.place_space(fx, place.ptr);
        Ok(Value::Ptr(PtrValue {
            root: PtrRoot::Place(place.ptr, false),
            index: zero,
            pointee: place.ty,
            space,
            is_const: !place.writable,
        }))
    }

    pub(in crate::lower) fn buffer_space(
        &self,
        g: Handle<naga::GlobalVariable>,
    ) -> crate::types::AddressSpace {
        match self.global.module.global_variables[g].space {
            naga::AddressSpace::Storage { access }
                if access.contains(naga::StorageAccess::STORE) =>
            {
                crate::types::AddressSpace::Device
            }
            naga::AddressSpace::Storage { .. } if self.entry.viewed.device_buffers.contains(&g) => {
                crate::types::AddressSpace::Device
            }
            // `[[threadgroup(n)]]` memory (`&t[i]`).
            naga::AddressSpace::WorkGroup => crate::types::AddressSpace::Threadgroup,
            // A union object's storage of its own (`unions.rs`).
            naga::AddressSpace::Private => crate::types::AddressSpace::Thread,
            _ => crate::types::AddressSpace::Constant,
        }
    }

    /// An index as `u32` (indices of the i32 kind are reinterpreted: the
    /// arithmetic wraps identically).
    pub(in crate::lower) fn index_u32(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        match fx.expr(h) {
            Expression::Literal(Literal::I32(v)) => {
                let v = *v as u32;
                self.u32_lit(fx, v, span)
            }
            Expression::Literal(Literal::U32(_)) => h,
            _ => fx.add(
                Expression::As {
                    expr: h,
                    kind: naga::ScalarKind::Uint,
                    convert: None,
                },
                span,
            ),
        }
    }

    /// `p == q`, `p < q`, ...: pointers into one object compare their
    /// element indices (byte offsets in word views); pointers into different
    /// objects are unequal, and ordering them is refused (C++ leaves it
    /// unspecified).
    fn pointer_comparison(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        p: PtrValue,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        if is_null(b) {
            return self.null_comparison(fx, op, b, &p, span);
        }
        let q = self.expr(fx, b)?;
        if let Value::Null(_) = q {
            return self.null_comparison(fx, op, b, &p, span);
        }
        let Value::Ptr(q) = q else {
            return Err(Error::coded(
                Code::InvalidOperands,
                b.span,
                format!(
                    "comparison `{}` between a pointer and a non-pointer",
                    op.symbol()
                ),
            ));
        };
        let Some((left, right)) = self.comparable_indices(fx, &p, &q, span) else {
            let result = match op {
                BinaryOp::Eq => false,
                BinaryOp::Ne => true,
                _ => {
                    return Err(Error::coded(
                        Code::Unsupported,
                        span,
                        "ordering pointers into different objects is not supported",
                    ))
                }
            };
            return Ok(self.bool_value(fx, result, span));
        };
        let op = match op {
            BinaryOp::Eq => Bo::Equal,
            BinaryOp::Ne => Bo::NotEqual,
            BinaryOp::Lt => Bo::Less,
            BinaryOp::Le => Bo::LessEqual,
            BinaryOp::Gt => Bo::Greater,
            _ => Bo::GreaterEqual,
        };
        let h = fx.add(Expression::Binary { op, left, right }, span);
        Ok(Value::Rv(h, Type::BOOL))
    }

    /// The indices of pointers `p` and `q` counted from one object, when
    /// they point into one: their own indices when their roots are the
    /// same; else, when both roots are rows of one array of arrays
    /// (`&a[i][k]` and `&a[j][l]`), their elements counted from the start
    /// of that array (`i * N + k`), as Metal's flat memory has them.
    fn comparable_indices(
        &mut self,
        fx: &mut FnCtx,
        p: &PtrValue,
        q: &PtrValue,
        span: Span,
    ) -> Option<(Handle<Expression>, Handle<Expression>)> {
        if self.same_object(fx, &p.root, &q.root) {
            return Some((p.index, q.index));
        }
        let (PtrRoot::Place(a, true), PtrRoot::Place(b, true)) = (&p.root, &q.root) else {
            return None;
        };
        let (a, left) = self.outermost_array(fx, *a, p.index, span);
        let (b, right) = self.outermost_array(fx, *b, q.index, span);
        same_place(fx, a, b).then_some((left, right))
    }

    /// Array place `root` with element `index` (`u32`) as the outermost
    /// array it is a row of (`a[i]` of `T a[M][N]`, as `a` with element
    /// `i * N + index` of its flattened elements), and that element.
    fn outermost_array(
        &mut self,
        fx: &mut FnCtx,
        mut root: Handle<Expression>,
        mut index: Handle<Expression>,
        span: Span,
    ) -> (Handle<Expression>, Handle<Expression>) {
        loop {
            let (base, row) = match *fx.expr(root) {
                Expression::Access { base, index } => (base, self.index_u32(fx, index, span)),
                Expression::AccessIndex { base, index } => (base, self.u32_lit(fx, index, span)),
                _ => return (root, index),
            };
            let types = &self.global.module.types;
            let row_length = self
                .pointee_type(fx, root)
                .and_then(|t| match types[t].inner {
                    naga::TypeInner::Array {
                        size: naga::ArraySize::Constant(n),
                        ..
                    } => Some(n.get()),
                    _ => None,
                });
            let outer_is_array = self
                .pointee_type(fx, base)
                .is_some_and(|t| matches!(types[t].inner, naga::TypeInner::Array { .. }));
            let (Some(n), true) = (row_length, outer_is_array) else {
                return (root, index);
            };
            let n = self.u32_lit(fx, n, span);
            let scaled = fx.add(
                Expression::Binary {
                    op: Bo::Multiply,
                    left: row,
                    right: n,
                },
                span,
            );
            index = fx.add(
                Expression::Binary {
                    op: Bo::Add,
                    left: scaled,
                    right: index,
                },
                span,
            );
            root = base;
        }
    }

    /// Whether values of `ty` hold pointers (a pointer, or a struct or
    /// array with one inside).
    fn holds_pointers(&self, ty: &Type) -> bool {
        (self.program.structs).holds(ty, &|t| matches!(t, Type::Pointer(_)))
    }

    /// Whether two pointer roots designate the same object.
    pub(in crate::lower) fn same_object(&self, fx: &FnCtx, a: &PtrRoot, b: &PtrRoot) -> bool {
        let local = |h: Handle<Expression>| match *fx.expr(h) {
            Expression::LocalVariable(v) => Some(v),
            _ => None,
        };
        // A whole global, named by any of its expressions.
        let global = |h: Handle<Expression>| match *fx.expr(h) {
            Expression::GlobalVariable(g) => Some(g),
            _ => None,
        };
        match (a, b) {
            (PtrRoot::Place(x, xa), PtrRoot::Place(y, ya)) => {
                (xa == ya && same_place(fx, *x, *y))
                    || (local(*x).is_some() && local(*x) == local(*y))
                    || (global(*x).is_some() && global(*x) == global(*y))
            }
            _ => a == b,
        }
    }

    fn bool_value(&mut self, fx: &mut FnCtx, v: bool, span: Span) -> Value {
        Value::Rv(
            fx.add(Expression::Literal(Literal::Bool(v)), span),
            Type::BOOL,
        )
    }

    /// `p == nullptr`, `nullptr != p` (`a` or `b` is `nullptr`): a pointer
    /// the translation tracks either designates an object (never null) or
    /// is known to be null (`Value::Null`: a parameter every call of this
    /// specialisation gave `nullptr`), so the result is a constant. `None`
    /// when neither operand is `nullptr`, or `op` is no comparison.
    pub(in crate::lower) fn null_operand_comparison(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<Option<Value>> {
        let (null, other) = match (is_null(a), is_null(b)) {
            _ if !is_comparison(op) => return Ok(None),
            (true, _) => (a, b),
            (false, true) => (b, a),
            _ => return Ok(None),
        };
        let other_value = self.expr(fx, other)?;
        if let Value::Null(_) = other_value {
            // Both null: `nullptr == nullptr`, or a pointer known to be null.
            let equal = matches!(op, BinaryOp::Eq | BinaryOp::Le | BinaryOp::Ge);
            return Ok(Some(self.bool_value(fx, equal, span)));
        }
        let Value::Ptr(p) = other_value else {
            return Err(Error::coded(
                Code::InvalidOperands,
                other.span,
                "`nullptr` can only be compared with a pointer",
            ));
        };
        self.null_comparison(fx, op, null, &p, span).map(Some)
    }

    fn null_comparison(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        null: &Expr,
        _p: &PtrValue,
        span: Span,
    ) -> Result<Value> {
        match op {
            BinaryOp::Eq => Ok(self.bool_value(fx, false, span)),
            BinaryOp::Ne => Ok(self.bool_value(fx, true, span)),
            _ => Err(Error::coded(
                Code::InvalidOperands,
                null.span,
                "ordering comparison between a pointer and `nullptr`",
            )),
        }
    }

    /// `(device const float*)(base + offset)`, `reinterpret_cast<T*>(p)`.
    ///
    /// A pointer into a word-view buffer (a `device char*`, `uchar*`, ...;
    /// see bytes.rs) is a byte offset into 32-bit words, so it can view
    /// those bytes as any type: loads and stores at the offset use the
    /// target's Metal layout. A `float` (any 4-byte value) must be at a
    /// multiple of 4, as on Metal; a misaligned offset reads and writes the
    /// word containing it (the offset is rounded down), where Metal's
    /// behaviour is undefined. A pointer into a typed buffer only casts to
    /// its own pointee type (adding or removing `const`).
    /// `(device float2&)v` of a `float4` lvalue `v`, `(thread uint&)u4`
    /// (SPIRV-Cross writes std140 arrays of padded vectors so): a reference
    /// to the first components of a vector, which is the place `v.xy`,
    /// `u4.x`. `None` when `v` is no vector place with a longer type of
    /// `pointee`'s component.
    fn vector_prefix(
        &mut self,
        fx: &mut FnCtx,
        v: &Value,
        pointee: &Type,
        span: Span,
    ) -> Result<Option<Value>> {
        let ty = match v {
            Value::Place(p) => p.ty.clone(),
            Value::Bytes(b) => b.ty.clone(),
            _ => return Ok(None),
        };
        let (Type::Vector(s, n) | Type::Packed(s, n)) = ty else {
            return Ok(None);
        };
        let m = match *pointee {
            Type::Scalar(t) if t == s => 1,
            Type::Vector(t, m) | Type::Packed(t, m) if t == s && m < n => m,
            _ => return Ok(None),
        };
        let components = &"xyzw"[..usize::from(m)];
        self.vector_components(fx, v.clone(), &ty, components, span)
            .map(Some)
    }

    pub(in crate::lower) fn pointer_cast(
        &mut self,
        fx: &mut FnCtx,
        target: &crate::types::Pointer,
        inner: &Expr,
        span: Span,
    ) -> Result<Value> {
        let v = self.expr(fx, inner)?;
        self.pointer_cast_value(fx, target, v, inner.span, span)
    }

    /// [`Self::pointer_cast`] of the value `v`, lowered already from the
    /// operand at `at`.
    pub(in crate::lower) fn pointer_cast_value(
        &mut self,
        fx: &mut FnCtx,
        target: &crate::types::Pointer,
        v: Value,
        at: Span,
        span: Span,
    ) -> Result<Value> {
        // `reinterpret_cast<thread T&>(x)` of an lvalue of type `T` is `x`
        // (MLX writes SIMD-group matrix elements this way).
        if let Value::Place(place) = &v {
            if target.is_reference && place.ty.unpacked() == target.pointee.unpacked() {
                let mut place = place.clone();
                place.writable &= !target.is_const;
                return Ok(Value::Place(place));
            }
        }
        if target.is_reference {
            if let Some(prefix) = self.vector_prefix(fx, &v, &target.pointee, span)? {
                return Ok(prefix);
            }
            // `(device half3&)s.padded[0]`: `*(device half3*)&s.padded[0]`
            // (C++ [expr.reinterpret.cast]/11).
            if let Value::Place(_) | Value::Bytes(_) = v {
                let address = self.address_of(fx, v, at)?;
                let as_pointer = crate::types::Pointer {
                    is_reference: false,
                    ..target.clone()
                };
                let viewed = self.pointer_cast_value(fx, &as_pointer, address, at, span)?;
                return self.deref(fx, viewed, span);
            }
        }
        // An argument buffer passed as a pointer (`args->m`, `*args`).
        if let Value::Agg(a) = v {
            if a.pointer.is_some() {
                return Ok(Value::Agg(crate::lower::ctx::value::Aggregate {
                    pointer: None,
                    ..a
                }));
            }
            return Err(Error::coded(
                Code::InvalidOperands,
                span,
                "indirection requires a pointer operand",
            ));
        }
        // `static_cast<const device Desc*>(raw)` of memory pointer `raw`
        // to a struct holding pointers: the pointers would be read from
        // the buffer's bytes, GPU addresses (SPIRV-Cross's descriptor
        // arrays, `spvBufferDescriptor`).
        if let (Value::Ptr(_), AddressSpace::Device | AddressSpace::Constant) = (&v, target.space) {
            if self.holds_pointers(&target.pointee) {
                use crate::sema::unported_features::{POINTER_IN_BUFFER, POINTER_IN_BUFFER_PORT};
                return Err(
                    Error::coded(Code::NoWebGpuEquivalent, span, POINTER_IN_BUFFER)
                        .note(POINTER_IN_BUFFER_PORT),
                );
            }
        }
        // `(device const uint16_t*)x[i].qs`: the array decays first.
        let v = match target.is_reference {
            true => v,
            false => self.decayed_shared_array(fx, v, at),
        };
        // A `thread` array decays to a pointer to its first element
        // ([conv.array]) before the view (`metal/thread_views.rs`).
        let v = match v {
            Value::Place(place) if !target.is_reference => {
                match self.decayed_place(fx, &place, &[AddressSpace::Thread], at) {
                    Some(p) => Value::Ptr(p),
                    None => Value::Place(place),
                }
            }
            v => v,
        };
        let Value::Ptr(p) = v else {
            let ty = crate::lower::ctx::value::arg_type(&v);
            if !target.is_reference && matches!(ty, Type::Scalar(s) if s.is_integer()) {
                return Err(integer_to_pointer(at));
            }
            return Err(Error::coded(
                Code::InvalidConversion,
                at,
                "only a pointer can be cast to a pointer type",
            ));
        };
        let show = |l: &Self, t: &Type| l.program.display(t);
        if target.space != p.space
            && !matches!(
                (target.space, p.space),
                (
                    crate::types::AddressSpace::Constant,
                    crate::types::AddressSpace::Device
                ) | (
                    crate::types::AddressSpace::Device,
                    crate::types::AddressSpace::Constant
                )
            )
        {
            return Err(Error::coded(
                Code::AddressSpace,
                span,
                format!(
                    "cannot cast a `{}` pointer to a `{}` pointer: address spaces differ",
                    p.space.name(),
                    target.space.name()
                ),
            ));
        }
        let same = p.pointee == target.pointee;
        if let Some(view) = element_view(&p, target) {
            return Ok(Value::Ptr(view));
        }
        if !same {
            if let Some(view) = self.thread_view(fx, &p, target, span)? {
                return Ok(Value::Ptr(view));
            }
        }
        if !same && !matches!(p.root, PtrRoot::Bytes(_)) {
            // The entry point is lowered again with this memory as words.
            self.want_word_view(fx, &p);
            return Err(Error::coded(
                Code::InvalidConversion,
                span,
                format!(
                    "cannot reinterpret this `{}*` as `{}*`: only device, constant and threadgroup memory can be viewed as another type",
                    show(self, &p.pointee),
                    show(self, &target.pointee)
                ),
            )
            .note(format!(
                "`as_type<{}>(x)` copies the bits of a value of the same size",
                show(self, &target.pointee)
            )));
        }
        Ok(Value::Ptr(PtrValue {
            pointee: target.pointee.clone(),
            is_const: target.is_const || p.is_const && same,
            // `const device` word views are told apart from `constant` by
            // the cast (both are read-only storage).
            space: target.space,
            ..p
        }))
    }

    /// `p + n`, `p - n`, `p - q`.
    pub(in crate::lower) fn pointer_arithmetic(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        p: PtrValue,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        if is_comparison(op) {
            return self.pointer_comparison(fx, op, p, b, span);
        }
        let vb = self.expr(fx, b)?;
        if let (BinaryOp::Sub, Value::Ptr(q)) = (op, &vb) {
            let Some((left, right)) = self.comparable_indices(fx, &p, q, span) else {
                return Err(Error::coded(
                    Code::InvalidOperands,
                    span,
                    "subtracting pointers into different objects",
                ));
            };
            let d = fx.add(
                Expression::Binary {
                    op: Bo::Subtract,
                    left,
                    right,
                },
                span,
            );
            let mut d = fx.add(
                Expression::As {
                    expr: d,
                    kind: naga::ScalarKind::Sint,
                    convert: None,
                },
                span,
            );
            if let PtrRoot::Bytes(_) = p.root {
                // Byte offsets: the difference counts elements.
                let stride = crate::layout::metal(&p.pointee, &self.program.structs).size;
                let s = fx.add(Expression::Literal(Literal::I32(stride as i32)), span);
                d = fx.add(
                    Expression::Binary {
                        op: Bo::Divide,
                        left: d,
                        right: s,
                    },
                    span,
                );
            }
            return Ok(Value::Rv(d, Type::INT));
        }
        // `src += off_x * str_x` of `integral_constant`s: the offset
        // through its conversion function ([over.built]).
        let vb = self.arithmetic_operand(fx, vb, b.span)?;
        let (hb, tb) = self.load(fx, vb, b.span)?;
        let (Type::Scalar(s), BinaryOp::Add | BinaryOp::Sub) = (&tb, op) else {
            let e = Error::coded(
                Code::InvalidOperands,
                span,
                format!("invalid operands to binary `{}` on a pointer", op.symbol()),
            );
            // A long vector is held as an array, which decays here.
            return Err(match tb {
                Type::Array(..) => e.note("an array operand decays to a pointer; a long vector (`vec<T, N>`, N > 4) is held as an array, and element-wise arithmetic on it is not supported"),
                _ => e,
            });
        };
        if !s.is_integer() {
            return Err(Error::coded(
                Code::InvalidOperands,
                b.span,
                "pointer offsets must be integers",
            ));
        }
        let offset = match s {
            Scalar::UInt => hb,
            Scalar::Long | Scalar::ULong => self.convert(fx, hb, &tb, &Type::UINT, true, span)?,
            _ => self.index_u32(fx, hb, span),
        };
        let index = self.ptr_advance(fx, &p, offset, op == BinaryOp::Sub, span);
        Ok(Value::Ptr(PtrValue { index, ..p }))
    }
}

/// `(device float*)&v` for a `float4 v` (or a `float m[4]`) in memory
/// other than a word view: a pointer to the vector's first component (the
/// array's first element), so that `[k]` and `+ k` reach component `k`,
/// as in Metal's layout. SPIR-V Cross writes these for partial access
/// chains into vectors and matrix columns. `None` for other casts.
pub(in crate::lower) fn element_view(
    p: &PtrValue,
    target: &crate::types::Pointer,
) -> Option<PtrValue> {
    let PtrRoot::Place(base, false) = p.root else {
        return None;
    };
    let element = match &p.pointee {
        Type::Vector(s, _) => Type::Scalar(*s),
        Type::Array(e, _) => (**e).clone(),
        _ => return None,
    };
    (element == target.pointee).then(|| PtrValue {
        root: PtrRoot::Place(base, true),
        pointee: element,
        // Writing through a cast that drops `const` is undefined in MSL;
        // refusing it keeps read-only buffers read-only.
        is_const: target.is_const || p.is_const,
        ..p.clone()
    })
}

fn is_comparison(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
    )
}

/// A use of a pointer known to be null (`Value::Null`) that would reach
/// memory through it: dereferencing, indexing or offsetting it.
pub(in crate::lower) fn null_use(span: Span) -> Error {
    Error::coded(
        Code::InvalidOperands,
        span,
        "this pointer is null here: it cannot be dereferenced, indexed or offset",
    )
    .note("each call that passes `nullptr` for a pointer parameter gets a translation of the function where the parameter is known to be null; guard this use with `if (p)`, `p != nullptr` or a constant condition")
}

/// `nullptr` (also `NULL` after `#define NULL nullptr`, and `0` is not one).
pub(in crate::lower) fn is_null(e: &Expr) -> bool {
    matches!(&e.kind, crate::syntax::ast::ExprKind::Name(p) if p.len() == 1 && p[0] == "nullptr")
}

impl Lowerer<'_, '_> {
    /// Makes each pointer parameter that `body` reassigns (`in += off`,
    /// `p = p + n`, `p++`, `p = q`) a pointer variable: its element index
    /// is held in a `u32` local, initialised here, before the body, to the
    /// index the parameter arrives with. naga has no storable pointers, so
    /// the root (the buffer or object) stays fixed and only the index
    /// moves; assigning a pointer into another object is refused where it
    /// is written (`assign_pointer`). Called once the parameters are
    /// declared (in the innermost scope) and before the body is lowered,
    /// so every use in the body, before or after the assignment in source
    /// order (a loop reads the index the previous iteration left), sees
    /// the variable.
    pub(in crate::lower) fn rebind_reassigned_pointers(
        &mut self,
        fx: &mut FnCtx,
        body: &crate::syntax::ast::Block,
    ) -> Result<()> {
        let bound = crate::sema::pointer_references::bound_names(self.program, body);
        for (name, span) in reassigned_names(body).into_iter().chain(bound) {
            let Some(Local::Ptr(p)) = fx.lookup(&name).cloned() else {
                continue;
            };
            let u32_ty = self.naga_type(&Type::UINT, span)?;
            let var = fx.local(&format!("{name}_index"), u32_ty, span);
            let pointer = fx.add(Expression::LocalVariable(var), span);
            fx.push(
                naga::Statement::Store {
                    pointer,
                    value: p.index,
                },
                span,
            );
            let local = Local::PtrVar { var, ptr: p };
            // Parameters are in the innermost scope; if a prologue opened
            // one after them, the variable shadows the parameter there.
            if !fx.rebind_innermost(&name, local.clone()) {
                fx.declare(&name, local);
            }
        }
        Ok(())
    }
}

impl Lowerer<'_, '_> {
    /// What pointer root `root` is, for diagnostics: "buffer `a`",
    /// "threadgroup memory `tile`", "the object `x`".
    pub(in crate::lower) fn root_description(&self, fx: &FnCtx, root: &PtrRoot) -> String {
        let global = |g: Handle<naga::GlobalVariable>| {
            let var = &self.global.module.global_variables[g];
            let name = var.name.as_deref().unwrap_or("_");
            match var.space {
                naga::AddressSpace::WorkGroup => format!("threadgroup memory `{name}`"),
                naga::AddressSpace::Private | naga::AddressSpace::Function => {
                    format!("the object `{name}`")
                }
                _ => format!("buffer `{name}`"),
            }
        };
        match *root {
            PtrRoot::Buffer(g) | PtrRoot::Global(g) | PtrRoot::Bytes(g) => global(g),
            PtrRoot::Place(base, _) | PtrRoot::View { base, .. } => {
                let mut h = base;
                loop {
                    match *fx.expr(h) {
                        Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                            h = base
                        }
                        Expression::GlobalVariable(g) => return global(g),
                        Expression::LocalVariable(v) => {
                            let name = fx.function.local_variables[v].name.as_deref();
                            return format!("the object `{}`", name.unwrap_or("_"));
                        }
                        _ => return "another object".to_string(),
                    }
                }
            }
        }
    }
}

/// The plain names that `body` assigns to or increments (`x = ..`,
/// `x op= ..`, `++x`, `x--`), each with its first assignment's span, in
/// source order. A name declared again in an inner scope is listed too:
/// giving a parameter a variable it does not need changes no value.
fn reassigned_names(body: &crate::syntax::ast::Block) -> Vec<(String, Span)> {
    use crate::syntax::ast::{ExprKind, UnaryOp};
    let mut names: Vec<(String, Span)> = Vec::new();
    crate::sema::callgraph::visit_block(body, &mut |e: &Expr| {
        let target = match &e.kind {
            ExprKind::Assign(_, target, _) | ExprKind::PostIncDec(_, target) => target,
            ExprKind::Unary(UnaryOp::PreInc | UnaryOp::PreDec, target) => target,
            _ => return,
        };
        let ExprKind::Name(path) = &target.kind else {
            return;
        };
        match path.as_slice() {
            [name] if !names.iter().any(|(n, _)| n == name) => {
                names.push((name.clone(), target.span));
            }
            _ => {}
        }
    });
    names
}

/// `reinterpret_cast<device T*>(addr)` of an integer: a GPU address (as
/// SPIR-V Cross writes Vulkan's buffer device addresses) made a pointer.
fn integer_to_pointer(span: Span) -> Error {
    Error::coded(
        Code::NoWebGpuEquivalent,
        span,
        "casting an integer to a pointer (a buffer's GPU address) has no WebGPU equivalent: WGSL reaches memory only through the variables it declares",
    )
    .note("a port does this instead: bind the buffer as a `[[buffer(n)]]` argument (or an argument buffer member) and pass an offset into it")
}

/// Whether pointer expressions `x` and `y` designate one place: the same
/// expression, or the same variable reached through the same members and
/// constant (or identical) indices, however often each was lowered
/// (`&s.a[i] - &s.a[0]` lowers `s.a` twice).
fn same_place(fx: &FnCtx, x: Handle<Expression>, y: Handle<Expression>) -> bool {
    if x == y {
        return true;
    }
    match (fx.expr(x), fx.expr(y)) {
        (Expression::GlobalVariable(a), Expression::GlobalVariable(b)) => a == b,
        (Expression::LocalVariable(a), Expression::LocalVariable(b)) => a == b,
        (Expression::FunctionArgument(a), Expression::FunctionArgument(b)) => a == b,
        (
            Expression::AccessIndex { base: a, index: i },
            Expression::AccessIndex { base: b, index: j },
        ) => i == j && same_place(fx, *a, *b),
        (Expression::Access { base: a, index: i }, Expression::Access { base: b, index: j }) => {
            same_value(fx, *i, *j) && same_place(fx, *a, *b)
        }
        _ => false,
    }
}

/// Whether `i` and `j` compute one value wherever they are evaluated: the
/// same expression, equal literals, or the same operations on the
/// function's arguments and constants (no load, whose value depends on
/// when it is read).
fn same_value(fx: &FnCtx, i: Handle<Expression>, j: Handle<Expression>) -> bool {
    if i == j {
        return true;
    }
    match (fx.expr(i), fx.expr(j)) {
        (Expression::Literal(a), Expression::Literal(b)) => literal_value(a) == literal_value(b),
        (Expression::Constant(a), Expression::Constant(b)) => a == b,
        (Expression::FunctionArgument(a), Expression::FunctionArgument(b)) => a == b,
        (
            Expression::AccessIndex { base: a, index: x },
            Expression::AccessIndex { base: b, index: y },
        ) => x == y && same_value(fx, *a, *b),
        (
            Expression::As {
                expr: a,
                kind: k,
                convert: c,
            },
            Expression::As {
                expr: b,
                kind: l,
                convert: d,
            },
        ) => k == l && c == d && same_value(fx, *a, *b),
        (
            Expression::Binary {
                op,
                left: a,
                right: x,
            },
            Expression::Binary {
                op: op2,
                left: b,
                right: y,
            },
        ) => op == op2 && same_value(fx, *a, *b) && same_value(fx, *x, *y),
        _ => false,
    }
}

/// An integer literal's value, whatever its type.
fn literal_value(l: &Literal) -> Option<i128> {
    match *l {
        Literal::I32(v) => Some(v.into()),
        Literal::U32(v) => Some(v.into()),
        Literal::I64(v) => Some(v.into()),
        Literal::U64(v) => Some(v.into()),
        _ => None,
    }
}
