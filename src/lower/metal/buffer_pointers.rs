//! Pointers: dereference, `&x`, element places, and pointer arithmetic.
//! A pointer into a buffer is a (root, element index) pair (see
//! [`PtrValue`]), so arithmetic moves the index and a dereference indexes
//! the root.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Place, PtrRoot, PtrValue, Value};
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{BinaryOp, Expr};
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal};

impl Lowerer<'_, '_> {
    /// `*p`, and the implicit dereference of `p->m`.
    pub(in crate::lower) fn deref(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        span: Span,
    ) -> Result<Value> {
        let Value::Ptr(p) = v else {
            return Err(Error::coded(
                Code::InvalidOperands,
                span,
                "indirection requires a pointer operand",
            ));
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
        Ok(Value::Ptr(PtrValue {
            root: PtrRoot::Place(place.ptr, false),
            index: zero,
            pointee: place.ty,
            space: crate::types::AddressSpace::Thread,
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
        let Value::Ptr(q) = self.expr(fx, b)? else {
            return Err(Error::coded(
                Code::InvalidOperands,
                b.span,
                format!(
                    "comparison `{}` between a pointer and a non-pointer",
                    op.symbol()
                ),
            ));
        };
        if !self.same_object(fx, &p.root, &q.root) {
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
        }
        let op = match op {
            BinaryOp::Eq => Bo::Equal,
            BinaryOp::Ne => Bo::NotEqual,
            BinaryOp::Lt => Bo::Less,
            BinaryOp::Le => Bo::LessEqual,
            BinaryOp::Gt => Bo::Greater,
            _ => Bo::GreaterEqual,
        };
        let h = fx.add(
            Expression::Binary {
                op,
                left: p.index,
                right: q.index,
            },
            span,
        );
        Ok(Value::Rv(h, Type::BOOL))
    }

    /// Whether two pointer roots designate the same object.
    fn same_object(&self, fx: &FnCtx, a: &PtrRoot, b: &PtrRoot) -> bool {
        let local = |h: Handle<Expression>| match *fx.expr(h) {
            Expression::LocalVariable(v) => Some(v),
            _ => None,
        };
        match (a, b) {
            (PtrRoot::Place(x, _), PtrRoot::Place(y, _)) => {
                x == y || (local(*x).is_some() && local(*x) == local(*y))
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

    /// `p == nullptr`, `nullptr != p` (`a` or `b` is `nullptr`): an MSL
    /// pointer here always designates an object (a pointer variable cannot
    /// hold `nullptr`), so it is never null. `None` when neither operand is
    /// `nullptr`.
    pub(in crate::lower) fn null_operand_comparison(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<Option<Value>> {
        let (null, other) = match (is_null(a), is_null(b)) {
            (true, _) => (a, b),
            (false, true) => (b, a),
            _ => return Ok(None),
        };
        if is_null(other) {
            let equal = matches!(op, BinaryOp::Eq | BinaryOp::Le | BinaryOp::Ge);
            return Ok(Some(self.bool_value(fx, equal, span)));
        }
        let Value::Ptr(p) = self.expr(fx, other)? else {
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
    pub(in crate::lower) fn pointer_cast(
        &mut self,
        fx: &mut FnCtx,
        target: &crate::types::Pointer,
        inner: &Expr,
        span: Span,
    ) -> Result<Value> {
        let v = self.expr(fx, inner)?;
        let Value::Ptr(p) = v else {
            return Err(Error::coded(
                Code::InvalidConversion,
                inner.span,
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
        if !same && !matches!(p.root, PtrRoot::Bytes(_)) {
            return Err(Error::coded(
                Code::InvalidConversion,
                span,
                format!(
                    "cannot reinterpret this `{}*` as `{}*`: only byte-addressed buffers can be viewed as another type",
                    show(self, &p.pointee),
                    show(self, &target.pointee)
                ),
            )
            .note("declare the buffer as `device char*` (or `uchar*`) and cast byte offsets from it"));
        }
        Ok(Value::Ptr(PtrValue {
            pointee: target.pointee.clone(),
            is_const: target.is_const || p.is_const && same,
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
            if q.root != p.root {
                return Err(Error::coded(
                    Code::InvalidOperands,
                    span,
                    "subtracting pointers into different objects",
                ));
            }
            let d = fx.add(
                Expression::Binary {
                    op: Bo::Subtract,
                    left: p.index,
                    right: q.index,
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
        let (hb, tb) = self.load(fx, vb, b.span)?;
        let (Type::Scalar(s), BinaryOp::Add | BinaryOp::Sub) = (&tb, op) else {
            return Err(Error::coded(
                Code::InvalidOperands,
                span,
                format!("invalid operands to binary `{}` on a pointer", op.symbol()),
            ));
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

fn is_comparison(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
    )
}

/// `nullptr` (also `NULL` after `#define NULL nullptr`, and `0` is not one).
fn is_null(e: &Expr) -> bool {
    matches!(&e.kind, crate::syntax::ast::ExprKind::Name(p) if p.len() == 1 && p[0] == "nullptr")
}
