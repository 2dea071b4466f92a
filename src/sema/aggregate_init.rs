//! Aggregate initialization from a braced list (C++ [dcl.init.aggr]), shared
//! by constant evaluation and lowering through [`Builder`].
//!
//! The elements of an aggregate take the list's items in order. An element
//! that is itself an aggregate takes a braced item whole; an expression item
//! initializes it whole only when it already has the element's type;
//! otherwise the braces are elided ([dcl.init.aggr]/16) and the element
//! takes as many of the following items as it has elements, recursively.
//! So `tint_array<int, 4>{1, 2, 3, 4}` (a struct holding `int[4]`) fills the
//! array, and `tint_array<float2x3, 2>{c0, c1, c2, c3}` gives each matrix
//! two of the columns. Elements the list leaves out are value-initialized
//! (their default member initializer, else zero).
//!
//! Vectors and matrices are aggregates of their lanes and columns here, as
//! lists treat them (`float4 v = {1, 2}`): a scalar item for a vector
//! element starts an elided list of its lanes rather than splatting.

use super::{Error, Program, Result};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind, Init};
use crate::types::Type;

/// What a braced list builds its value from: constant values (constant
/// evaluation) or naga expressions (lowering).
pub trait Builder {
    /// A built value.
    type Value;
    /// The program the types belong to.
    fn program(&self) -> &Program<'_>;
    /// An expression item: its value and its type.
    fn expr(&mut self, e: &Expr) -> Result<(Self::Value, Type)>;
    /// An item that initializes an element of type `ty` whole: a braced
    /// sub-list or a parenthesized initializer.
    fn whole(&mut self, init: &Init, ty: &Type) -> Result<Self::Value>;
    /// `v` of type `from` implicitly converted to the element type `to`.
    fn convert(
        &mut self,
        v: Self::Value,
        from: &Type,
        to: &Type,
        span: Span,
    ) -> Result<Self::Value>;
    /// The value of type `ty` made of `parts`, one per element.
    fn compose(&mut self, ty: &Type, parts: Vec<Self::Value>, span: Span) -> Result<Self::Value>;
    /// Element `index` (of type `elem`) of a `ty` that the list leaves out.
    fn omitted(&mut self, ty: &Type, index: usize, elem: &Type, span: Span) -> Result<Self::Value>;
}

/// The types of the elements a braced list initializes in `ty`, in order:
/// an array's elements, a struct's members, a vector's lanes, a matrix's
/// columns; `None` for other types.
pub fn element_types(program: &Program, ty: &Type) -> Option<Vec<Type>> {
    Some(match ty {
        Type::Array(e, n) => vec![(**e).clone(); *n as usize],
        // A list initializes a union's first member (C++ [dcl.init.aggr]/16).
        Type::Struct(id) if program.structs.get(*id).is_union => program
            .structs
            .get(*id)
            .members
            .iter()
            .take(1)
            .map(|m| m.ty.clone())
            .collect(),
        Type::Struct(id) => program
            .structs
            .get(*id)
            .members
            .iter()
            .map(|m| m.ty.clone())
            .collect(),
        Type::Vector(s, n) | Type::Packed(s, n) => vec![Type::Scalar(*s); *n as usize],
        Type::Matrix {
            scalar,
            columns,
            rows,
        } => vec![Type::Vector(*scalar, *rows); *columns as usize],
        _ => return None,
    })
}

/// Whether `ty` is a struct without user constructors, which a braced list
/// initializes member by member (C++ [dcl.init.aggr]/1).
pub fn is_aggregate_struct(program: &Program, ty: &Type) -> bool {
    let Type::Struct(id) = ty else {
        return false;
    };
    let name = program.struct_name(*id);
    !program
        .symbols
        .contains_key(&crate::syntax::members::member_name(name, name))
}

/// `ty` initialized from the braced list `items`, with brace elision;
/// `None` when the list is not one this walk handles (it has designated
/// elements, or `ty` has no elements), which the caller builds its own way.
pub fn braced<B: Builder>(
    b: &mut B,
    items: &[Init],
    ty: &Type,
    span: Span,
) -> Result<Option<B::Value>> {
    if items.iter().any(|i| matches!(i, Init::Designated(..)))
        || element_types(b.program(), ty).is_none()
    {
        return Ok(None);
    }
    let mut cursor = Cursor {
        items,
        next: 0,
        pending: None,
    };
    let value = fill(b, &mut cursor, ty, span)?;
    let extra = match &cursor.pending {
        Some((_, _, span)) => Some(*span),
        None => items.get(cursor.next).map(Init::span),
    };
    if let Some(extra) = extra {
        return Err(Error::coded(
            Code::InvalidInitializer,
            extra,
            format!(
                "excess elements in initializer of `{}`",
                b.program().display(ty)
            ),
        ));
    }
    Ok(Some(value))
}

/// The items not yet taken, and an expression item already evaluated (to
/// learn its type) that an elided sub-aggregate takes first.
struct Cursor<'i, V> {
    items: &'i [Init],
    next: usize,
    pending: Option<(V, Type, Span)>,
}

impl<V> Cursor<'_, V> {
    fn is_done(&self) -> bool {
        self.pending.is_none() && self.next >= self.items.len()
    }
}

/// A `ty` from the items at the cursor: one item per element, or several
/// for an element whose braces are elided.
fn fill<B: Builder>(
    b: &mut B,
    cursor: &mut Cursor<B::Value>,
    ty: &Type,
    span: Span,
) -> Result<B::Value> {
    if let (Type::Struct(id), false) = (ty, cursor.is_done()) {
        if b.program().bit_fields.contains_key(id) {
            // Its members are its bit-fields' storage, not the fields.
            return Err(Error::coded(
                Code::Unsupported,
                span,
                format!(
                    "initializing `{}`, a struct with bit-fields, from a braced list is not supported",
                    b.program().display(ty)
                ),
            ));
        }
    }
    let elements = element_types(b.program(), ty).unwrap_or_default();
    let mut parts = Vec::with_capacity(elements.len());
    for (i, et) in elements.iter().enumerate() {
        parts.push(if cursor.is_done() {
            b.omitted(ty, i, et, span)?
        } else {
            element(b, cursor, et)?
        });
    }
    b.compose(ty, parts, span)
}

/// One element of type `et` from the items at the cursor.
fn element<B: Builder>(b: &mut B, cursor: &mut Cursor<B::Value>, et: &Type) -> Result<B::Value> {
    let (v, t, span) = match cursor.pending.take() {
        Some(p) => p,
        None => {
            let item = &cursor.items[cursor.next];
            cursor.next += 1;
            match item {
                Init::Expr(e) if !matches!(e.kind, ExprKind::InitList(_)) => {
                    let (v, t) = b.expr(e)?;
                    (v, t, e.span)
                }
                _ => return b.whole(item, et),
            }
        }
    };
    if elides(b.program(), &t, et) {
        cursor.pending = Some((v, t, span));
        return fill(b, cursor, et, span);
    }
    b.convert(v, &t, et, span)
}

/// Whether an expression of type `from` starts an elided list for an
/// element of type `to` rather than initializing it whole.
fn elides(program: &Program, from: &Type, to: &Type) -> bool {
    if from.unpacked() == to.unpacked() {
        return false;
    }
    match to {
        Type::Array(..) | Type::Matrix { .. } => true,
        Type::Struct(_) => is_aggregate_struct(program, to),
        Type::Vector(..) | Type::Packed(..) => matches!(from, Type::Scalar(_)),
        _ => false,
    }
}
