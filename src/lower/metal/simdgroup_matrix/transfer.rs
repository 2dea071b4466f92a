//! `simdgroup_load` and `simdgroup_store`: a lane's two elements (per-lane
//! fragments), or all 64 of a thread's copy of the matrix, between memory
//! and the matrix (see the parent module).

use super::N;
use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Place, PtrRoot, PtrValue, Value};
use crate::lower::stdlib::simd::bin;
use crate::lower::stdlib::Builtin;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::callgraph;
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind};
use crate::types::{AddressSpace, Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Statement};

/// The operands of `e` if it is a cast to or constructor of one of the
/// 64-bit index types of the load and store parameters (`ulong(n)`,
/// `(ulong2)o`, `ulong2(x, y)`), whose operands are the value.
fn index_cast_operands(e: &Expr) -> Option<&[Expr]> {
    let wide = |name: &str| {
        let name = name.strip_prefix("metal::").unwrap_or(name);
        matches!(name, "ulong" | "ulong2" | "size_t" | "uint64_t")
    };
    match &e.kind {
        ExprKind::Call(callee, args) if (1..=2).contains(&args.len()) => match &callee.kind {
            ExprKind::Name(path) if wide(&path.join("::")) => Some(args),
            _ => None,
        },
        ExprKind::Cast(_, ts, inner) if ts.ptr_ops.is_empty() && wide(&ts.name()) => {
            Some(std::slice::from_ref(inner.as_ref()))
        }
        _ => None,
    }
}

impl Lowerer<'_, '_> {
    /// `simdgroup_load(d, src, elements_per_row = 8, matrix_origin = 0,
    /// transpose = false)` and `simdgroup_store(m, dst, ...)`: element
    /// (`r`, `c`) is at `(origin.y + r) * elements_per_row + origin.x + c`,
    /// transposed at `(origin.x + c) * elements_per_row + origin.y + r`.
    pub(super) fn matrix_transfer(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        store: bool,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let name = b.name();
        let (matrix, memory, rest) = match args {
            [m, p, rest @ ..] if rest.len() <= 3 => (m, p, rest),
            _ => {
                return Err(Error::coded(
                    Code::NoMatchingOverload,
                    span,
                    format!("`{name}` takes 2 to 5 arguments, {} given", args.len()),
                ))
            }
        };
        let (m, s) = self.matrix_argument(fx, name, matrix, !store)?;
        let p = self.matrix_pointer(fx, name, memory, s, store)?;
        let stride = match rest.first() {
            Some(e) => self.index_argument(fx, name, e, 1)?[0],
            None => self.u32_lit(fx, N, span),
        };
        let origin = match rest.get(1) {
            Some(e) => self.index_argument(fx, name, e, 2)?,
            None => vec![self.u32_lit(fx, 0, span); 2],
        };
        let transpose = match rest.get(2) {
            Some(e) => Some(self.scalar_condition(fx, e)?),
            None => None,
        };
        let source = match store {
            true => Some(self.matrix_operand(fx, m.clone(), s, span)?),
            false => None,
        };
        let target = match (store, m) {
            (false, Value::Place(p)) => Some(p),
            _ => None,
        };
        let geometry = Transfer {
            p,
            s,
            stride,
            origin,
            transpose,
            source,
            target,
        };
        match self.matrix_fragments() {
            true => self.fragment_transfer(fx, &geometry, span)?,
            false => self.transfer_loop(fx, &geometry, span)?,
        }
        Ok(Value::Void)
    }

    /// The memory argument: a `device` or `threadgroup` pointer to `s`.
    fn matrix_pointer(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        e: &Expr,
        s: Scalar,
        store: bool,
    ) -> Result<PtrValue> {
        let mut v = self.expr(fx, e)?;
        // A threadgroup array decays to a pointer to its first element.
        if let Value::Place(place) = &v {
            if let Type::Array(elem, _) = &place.ty {
                let zero = self.u32_lit(fx, 0, e.span);
                v = Value::Ptr(PtrValue {
                    root: PtrRoot::Place(place.ptr, true),
                    index: zero,
                    pointee: (**elem).clone(),
                    space: self.place_space(fx, place.ptr),
                    is_const: !place.writable,
                });
            }
        }
        let ok = |p: &PtrValue| {
            matches!(p.space, AddressSpace::Device | AddressSpace::Threadgroup)
                && p.pointee == Type::Scalar(s)
                && (!store || !p.is_const)
        };
        match v {
            Value::Ptr(p) if ok(&p) => {
                let p = self.array_element_pointer(fx, p, e.span);
                if matches!(p.root, PtrRoot::Place(_, false)) {
                    return Err(Error::coded(
                        Code::Unsupported,
                        e.span,
                        format!("`{name}` needs a pointer into a buffer or an array here"),
                    )
                    .note("the 64 elements are reached from this pointer, which points at a single object"));
                }
                Ok(p)
            }
            _ => {
                let ty = self.type_of(fx, e)?;
                let space = if store { "" } else { "const " };
                Err(Error::coded(
                    Code::NoMatchingOverload,
                    e.span,
                    format!(
                        "`{name}` of a `{}` matrix takes a `{space}device {s}*` or `{space}threadgroup {s}*`, not `{}`",
                        s.name(),
                        self.program.display(&ty),
                        s = s.name(),
                    ),
                ))
            }
        }
    }

    /// `p` as a pointer that steps through an array: `&tg[i]` points at
    /// one element (its index must stay 0), the matrix reaches the ones
    /// after it.
    fn array_element_pointer(&mut self, fx: &mut FnCtx, p: PtrValue, span: Span) -> PtrValue {
        let PtrRoot::Place(ptr, false) = p.root else {
            return p;
        };
        let (base, index) = match *fx.expr(ptr) {
            Expression::Access { base, index } => (base, index),
            // A constant index of an array or vector, not a struct member.
            Expression::AccessIndex { base, index } if self.is_indexable(fx, base) => {
                (base, self.u32_lit(fx, index, span))
            }
            _ => return p,
        };
        let index = self.index_u32(fx, index, span);
        PtrValue {
            root: PtrRoot::Place(base, true),
            index,
            ..p
        }
    }

    /// True if `ptr` points to an array or a vector.
    fn is_indexable(&self, fx: &FnCtx, ptr: Handle<Expression>) -> bool {
        self.pointee_type(fx, ptr).is_some_and(|ty| {
            matches!(
                self.global.module.types[ty].inner,
                naga::TypeInner::Array { .. } | naga::TypeInner::Vector { .. }
            )
        })
    }

    /// The naga type a pointer expression of variables, members and
    /// elements points to.
    pub(in crate::lower) fn pointee_type(
        &self,
        fx: &FnCtx,
        ptr: Handle<Expression>,
    ) -> Option<Handle<naga::Type>> {
        let types = &self.global.module.types;
        let element = |ty: Handle<naga::Type>, index: Option<u32>| match types[ty].inner {
            naga::TypeInner::Array { base, .. } => Some(base),
            naga::TypeInner::Struct { ref members, .. } => {
                index.and_then(|i| members.get(i as usize)).map(|m| m.ty)
            }
            _ => None,
        };
        match *fx.expr(ptr) {
            Expression::GlobalVariable(g) => Some(self.global.module.global_variables[g].ty),
            Expression::LocalVariable(l) => Some(fx.local_type(l)),
            Expression::AccessIndex { base, index } => {
                element(self.pointee_type(fx, base)?, Some(index))
            }
            Expression::Access { base, .. } => element(self.pointee_type(fx, base)?, None),
            _ => None,
        }
    }

    /// An `elements_per_row` (`size` 1) or `matrix_origin` (`size` 2)
    /// argument as `size` `u32`s. Metal's parameters are `ulong`/`ulong2`;
    /// their values index one buffer, so 32 bits hold them: constants are
    /// folded and casts to the 64-bit types are looked through (WebGPU has
    /// no 64-bit integers). The origin is two scalars, not a vector: a
    /// constant `vec2` used inside the element loop trips naga's override
    /// processing (`ExpressionAlreadyInScope`).
    fn index_argument(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        e: &Expr,
        size: u8,
    ) -> Result<Vec<Handle<Expression>>> {
        if let Some(ints) = self.constant_indices(fx, e, size) {
            return Ok(ints.iter().map(|&n| self.u32_lit(fx, n, e.span)).collect());
        }
        let operands = index_cast_operands(e).unwrap_or(std::slice::from_ref(e));
        if let ([x, y], 2) = (operands, size) {
            let x = self.index_argument(fx, name, x, 1)?[0];
            let y = self.index_argument(fx, name, y, 1)?[0];
            return Ok(vec![x, y]);
        }
        let (h, ty) = self.rvalue(fx, &operands[0])?;
        let integral =
            ty.element_scalar().is_some_and(Scalar::is_integer) && ty.is_scalar_or_vector();
        if !integral || !matches!(ty.vector_size(), Some(n) if n == 1 || n == size) {
            let what = if size == 1 {
                "(`ulong`)"
            } else {
                "pair (`ulong2`)"
            };
            return Err(Error::coded(
                Code::NoMatchingOverload,
                e.span,
                format!(
                    "`{name}` takes an integer {what} here, not `{}`",
                    self.program.display(&ty)
                ),
            ));
        }
        let scalar = Type::Scalar(ty.element_scalar().expect("an integer"));
        (0..u32::from(size))
            .map(|i| {
                let part = match ty {
                    Type::Vector(..) => {
                        fx.add(Expression::AccessIndex { base: h, index: i }, e.span)
                    }
                    _ => h,
                };
                self.convert(fx, part, &scalar, &Type::UINT, true, e.span)
            })
            .collect()
    }

    /// The value of `e` as `size` `u32`s, if it is a constant (and names no
    /// local variable, which could shadow a program constant).
    fn constant_indices(&self, fx: &FnCtx, e: &Expr, size: u8) -> Option<Vec<u32>> {
        let mut mentions_local = false;
        callgraph::visit_expr(e, &mut |x| {
            mentions_local |=
                matches!(&x.kind, ExprKind::Name(p) if p.len() == 1 && fx.lookup(&p[0]).is_some());
        });
        if mentions_local {
            return None;
        }
        let v = crate::sema::consteval::eval(self.program, e).ok()?;
        let items = match &v {
            crate::sema::consteval::ConstValue::Composite(_, items) => items.clone(),
            other => vec![other.clone(); size as usize],
        };
        let ints: Option<Vec<u32>> = (items.iter())
            .map(|i| i.as_int().and_then(|n| u32::try_from(n).ok()))
            .collect();
        ints.filter(|i| i.len() == size as usize)
    }
}

/// One `simdgroup_load` or `simdgroup_store`, its arguments lowered.
struct Transfer {
    /// The memory.
    p: PtrValue,
    /// Element type.
    s: Scalar,
    /// `elements_per_row` (`u32`).
    stride: Handle<Expression>,
    /// `matrix_origin`: the column and the row (`u32`s).
    origin: Vec<Handle<Expression>>,
    /// `transpose_matrix`, if given.
    transpose: Option<Handle<Expression>>,
    /// For a store, the matrix value (this lane's fragment, or the whole
    /// matrix).
    source: Option<Handle<Expression>>,
    /// For a load, the matrix written.
    target: Option<Place>,
}

impl Lowerer<'_, '_> {
    /// This lane's two elements between memory and its fragment: row
    /// [`Lowerer::fragment_row`], columns [`Lowerer::fragment_column`] and the one after.
    fn fragment_transfer(&mut self, fx: &mut FnCtx, t: &Transfer, span: Span) -> Result<()> {
        let lane = self.fragment_lane(fx, span)?;
        let row = self.fragment_row(fx, lane, span);
        let col = self.fragment_column(fx, lane, span);
        let scalar = Type::Scalar(t.s);
        let mut loaded = Vec::new();
        for j in 0..2 {
            let col = match j {
                0 => col,
                _ => {
                    let one = self.u32_lit(fx, 1, span);
                    bin(fx, Bo::Add, col, one, span)
                }
            };
            let offset = self.element_offset(fx, t, row, col, span);
            let index = self.ptr_advance(fx, &t.p, offset, false, span);
            let element = self.element_value(
                fx,
                &PtrValue {
                    index,
                    ..t.p.clone()
                },
                span,
            );
            match t.source {
                Some(fragment) => {
                    let v = fx.add(
                        Expression::AccessIndex {
                            base: fragment,
                            index: j,
                        },
                        span,
                    );
                    self.store(fx, &element, v, &scalar, span)?;
                }
                None => {
                    let (v, ty) = self.load(fx, element, span)?;
                    loaded.push(self.convert(fx, v, &ty, &scalar, false, span)?);
                }
            }
        }
        if let Some(target) = &t.target {
            let pair = self.naga_type(&Type::Vector(t.s, 2), span)?;
            let value = fx.add(
                Expression::Compose {
                    ty: pair,
                    components: loaded,
                },
                span,
            );
            fx.push(
                Statement::Store {
                    pointer: target.ptr,
                    value,
                },
                span,
            );
        }
        Ok(())
    }

    /// A loop over the 64 elements moving each between memory and the
    /// matrix.
    fn transfer_loop(&mut self, fx: &mut FnCtx, t: &Transfer, span: Span) -> Result<()> {
        let u32_ty = self.naga_type(&Type::UINT, span)?;
        let counter = fx.local("metal_simdgroup_element", u32_ty, span);
        let counter = fx.add(Expression::LocalVariable(counter), span);
        let zero = self.u32_lit(fx, 0, span);
        fx.push(
            Statement::Store {
                pointer: counter,
                value: zero,
            },
            span,
        );
        let source = match t.source {
            Some(h) => {
                let copy =
                    self.matrix_place_of(fx, Value::Rv(h, Type::SimdgroupMatrix(t.s)), span)?;
                Some(copy.ptr)
            }
            None => None,
        };
        fx.open();
        let i = fx.add(Expression::Load { pointer: counter }, span);
        let all = self.u32_lit(fx, N * N, span);
        let done = bin(fx, Bo::GreaterEqual, i, all, span);
        let mut stop = naga::Block::new();
        stop.push(Statement::Break, Self::span(span));
        fx.push(
            Statement::If {
                condition: done,
                accept: stop,
                reject: naga::Block::new(),
            },
            span,
        );
        let (row, col) = self.row_and_column(fx, i, span);
        let offset = self.element_offset(fx, t, row, col, span);
        let index = self.ptr_advance(fx, &t.p, offset, false, span);
        let element = self.element_value(
            fx,
            &PtrValue {
                index,
                ..t.p.clone()
            },
            span,
        );
        let (slot, component) = self.slot_and_component(fx, row, col, span);
        let scalar = Type::Scalar(t.s);
        match (source, &t.target) {
            (Some(matrix), _) => {
                let pair = fx.add(
                    Expression::Access {
                        base: matrix,
                        index: slot,
                    },
                    span,
                );
                let p = fx.add(
                    Expression::Access {
                        base: pair,
                        index: component,
                    },
                    span,
                );
                let v = fx.add(Expression::Load { pointer: p }, span);
                self.store(fx, &element, v, &scalar, span)?;
            }
            (None, Some(target)) => {
                let (v, ty) = self.load(fx, element, span)?;
                let v = self.convert(fx, v, &ty, &scalar, false, span)?;
                let pair = fx.add(
                    Expression::Access {
                        base: target.ptr,
                        index: slot,
                    },
                    span,
                );
                let p = fx.add(
                    Expression::Access {
                        base: pair,
                        index: component,
                    },
                    span,
                );
                fx.push(
                    Statement::Store {
                        pointer: p,
                        value: v,
                    },
                    span,
                );
            }
            (None, None) => unreachable!("a transfer loads or stores"),
        }
        let one = self.u32_lit(fx, 1, span);
        let next = bin(fx, Bo::Add, i, one, span);
        fx.push(
            Statement::Store {
                pointer: counter,
                value: next,
            },
            span,
        );
        let body = fx.close();
        fx.push(
            Statement::Loop {
                body,
                continuing: naga::Block::new(),
                break_if: None,
            },
            span,
        );
        Ok(())
    }

    /// Row and column of element number `i` (row-major).
    fn row_and_column(
        &mut self,
        fx: &mut FnCtx,
        i: Handle<Expression>,
        span: Span,
    ) -> (Handle<Expression>, Handle<Expression>) {
        let three = self.u32_lit(fx, 3, span);
        let seven = self.u32_lit(fx, 7, span);
        (
            bin(fx, Bo::ShiftRight, i, three, span),
            bin(fx, Bo::And, i, seven, span),
        )
    }

    /// [`slot_of`] at run time.
    fn slot_and_component(
        &mut self,
        fx: &mut FnCtx,
        row: Handle<Expression>,
        col: Handle<Expression>,
        span: Span,
    ) -> (Handle<Expression>, Handle<Expression>) {
        let mut bit = |fx: &mut FnCtx, v: Handle<Expression>, from: u32, mask: u32, to: u32| {
            let shift = self.u32_lit(fx, from, span);
            let m = self.u32_lit(fx, mask, span);
            let up = self.u32_lit(fx, to, span);
            let shifted = bin(fx, Bo::ShiftRight, v, shift, span);
            let masked = bin(fx, Bo::And, shifted, m, span);
            bin(fx, Bo::ShiftLeft, masked, up, span)
        };
        let a = bit(fx, row, 2, 1, 4);
        let b = bit(fx, col, 2, 1, 3);
        let c = bit(fx, row, 0, 3, 1);
        let d = bit(fx, col, 1, 1, 0);
        let ab = bin(fx, Bo::InclusiveOr, a, b, span);
        let cd = bin(fx, Bo::InclusiveOr, c, d, span);
        let slot = bin(fx, Bo::InclusiveOr, ab, cd, span);
        let one = self.u32_lit(fx, 1, span);
        (slot, bin(fx, Bo::And, col, one, span))
    }

    /// The element offset of (`row`, `col`) from the pointer.
    fn element_offset(
        &mut self,
        fx: &mut FnCtx,
        t: &Transfer,
        row: Handle<Expression>,
        col: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let (ox, oy) = (t.origin[0], t.origin[1]);
        let at = |fx: &mut FnCtx, major: Handle<Expression>, minor: Handle<Expression>| {
            let m = bin(fx, Bo::Multiply, major, t.stride, span);
            bin(fx, Bo::Add, m, minor, span)
        };
        let (r, c) = (
            bin(fx, Bo::Add, oy, row, span),
            bin(fx, Bo::Add, ox, col, span),
        );
        let plain = at(fx, r, c);
        let Some(transpose) = t.transpose else {
            return plain;
        };
        let (r, c) = (
            bin(fx, Bo::Add, oy, row, span),
            bin(fx, Bo::Add, ox, col, span),
        );
        let transposed = at(fx, c, r);
        fx.add(
            Expression::Select {
                condition: transpose,
                accept: transposed,
                reject: plain,
            },
            span,
        )
    }
}
