//! A `thread` object seen through a pointer to the type of its elements
//! or components: `reinterpret_cast<thread float*>(frags)` of a
//! `float2 frags[4]` (MLX's `MMATile::elems()`), `(thread half*)&v` of a
//! `half4 v`, `(thread float4*)&m` of a `float4x4 m`.
//!
//! Metal: the cast pointer addresses the object's bytes as the other
//! type; `p[i]` reads and writes the `i`-th `float` of the object, in
//! Metal's layout (an array's elements, a vector's components and a
//! matrix's columns lie one after another without padding, except a
//! 3-component vector's fourth slot).
//!
//! WGSL: a `function` or `private` variable has no byte address and a
//! pointer keeps its store type, but a pointer to any element or
//! component of a variable can be formed, with run-time indices.
//!
//! Mapping: where the pointee is a type the object is made of (an
//! element of an array, a component of a 2- or 4-component vector, a
//! column of a matrix without 3-row columns, repeatedly), the pointer is
//! the whole object plus an index counted in pointees
//! ([`PtrRoot::View`]); an access through it is the access chain that
//! reaches that pointee (`frags[i / 2][i % 2]`), so reads, writes,
//! compound assignments, pointer arithmetic and casting back all work
//! on the object itself. A struct of one member is made of that member.
//! Bytes and 16-bit halves of 32-bit integer words (`(thread uint8_t*)&w`
//! of a `uint`, a `uint4`, a `uint` array) are parts of the innermost
//! layer ([`Position::Part`], read and written in
//! `metal/thread_view_parts.rs`). Any other view of thread memory
//! (another scalar type, bytes of a `float`, a vector made of an array's
//! scalars, a 3-component vector's components) is refused (E0316).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{PtrRoot, PtrValue};
use crate::lower::{Error, Lowerer, Result};
use crate::sema::bit_fields::STORAGE_PREFIX;
use crate::source_map::Span;
use crate::types::{AddressSpace, Pointer, Scalar, StructId, Structs, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal};

/// The types an object is made of, outermost first: each with the number
/// of the next that it holds (the last one's count is unused). A struct
/// of one member is made of that member.
fn layers(object: &Type, structs: &Structs) -> Vec<(Type, u32)> {
    let mut out = Vec::new();
    let mut t = object.unpacked();
    loop {
        let next = match &t {
            Type::Array(e, n) => Some((e.unpacked(), *n)),
            Type::Vector(s, n) if *n != 3 => Some((Type::Scalar(*s), u32::from(*n))),
            Type::Matrix {
                scalar,
                columns,
                rows,
            } if *rows != 3 => Some((Type::Vector(*scalar, *rows), u32::from(*columns))),
            Type::Struct(id) => only_member(structs, *id).map(|m| (m.unpacked(), 1)),
            _ => None,
        };
        match next {
            Some((inner, n)) => {
                out.push((t, n));
                t = inner;
            }
            None => {
                out.push((t, 1));
                return out;
            }
        }
    }
}

/// The type of the one member of struct `id`, when it has exactly one
/// (no bases, no bit-fields): the struct's bytes are the member's.
fn only_member(structs: &Structs, id: StructId) -> Option<&Type> {
    let def = structs.get(id);
    match def.members.as_slice() {
        [m] if def.bases.is_empty() && !m.name.starts_with(STORAGE_PREFIX) => Some(&m.ty),
        _ => None,
    }
}

/// Where a view's pointee lies in an object.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(in crate::lower) enum Position {
    /// One of the object's layers (`layers`).
    Layer(usize),
    /// A 1- or 2-byte integer (this many bytes) inside the innermost
    /// layer, a 32-bit integer word: part `k` is the word's bits
    /// `k * 8 * size ..` (Metal is little-endian).
    Part(u32),
}

/// The size of a part of a 32-bit word that type `ty` can view: 1 for
/// `char`/`uchar`, 2 for `short`/`ushort`.
pub(in crate::lower) fn part_size(ty: &Type) -> Option<u32> {
    match ty.unpacked() {
        Type::Scalar(Scalar::Char | Scalar::UChar) => Some(1),
        Type::Scalar(Scalar::Short | Scalar::UShort) => Some(2),
        _ => None,
    }
}

/// Where `ty` lies among `layers`: a layer of that type, or a part of
/// the innermost one when that is a 32-bit integer.
fn position(layers: &[(Type, u32)], ty: &Type) -> Option<Position> {
    let ty = ty.unpacked();
    if let Some(k) = layers.iter().position(|(t, _)| *t == ty) {
        return Some(Position::Layer(k));
    }
    let size = part_size(&ty)?;
    let (word, _) = layers.last()?;
    matches!(word, Type::Scalar(Scalar::Int | Scalar::UInt)).then_some(Position::Part(size))
}

/// How many of layer `to`'s type one of layer `from`'s holds (`from <= to`).
fn count_between(layers: &[(Type, u32)], from: usize, to: usize) -> u32 {
    layers[from..to].iter().map(|(_, n)| n).product()
}

/// How many pointees at `pos` one object holds.
fn per_object(layers: &[(Type, u32)], pos: Position) -> u32 {
    match pos {
        Position::Layer(k) => count_between(layers, 0, k),
        Position::Part(size) => count_between(layers, 0, layers.len() - 1) * (4 / size),
    }
}

impl Lowerer<'_, '_> {
    /// `(thread T*)p` of a pointer `p` into a `thread` object: the object
    /// viewed as the `T`s it is made of. `Ok(None)` for a pointer into
    /// other memory (the word views' to cast); an error for a view of
    /// thread memory that is not expressible.
    pub(in crate::lower) fn thread_view(
        &mut self,
        fx: &mut FnCtx,
        p: &PtrValue,
        target: &Pointer,
        span: Span,
    ) -> Result<Option<PtrValue>> {
        if p.space != AddressSpace::Thread {
            return Ok(None);
        }
        let (base, array, object) = match &p.root {
            PtrRoot::Place(base, array) => (*base, *array, p.pointee.unpacked()),
            PtrRoot::View {
                base,
                array,
                object,
            } => (*base, *array, (**object).clone()),
            _ => return Ok(None),
        };
        let layers = layers(&object, &self.program.structs);
        let (Some(from), Some(to)) = (
            position(&layers, &p.pointee),
            position(&layers, &target.pointee),
        ) else {
            return Err(self.thread_view_refused(p, target, span));
        };
        let (from_n, to_n) = (per_object(&layers, from), per_object(&layers, to));
        let index = if to_n >= from_n {
            self.scaled_index(fx, p.index, to_n / from_n, Bo::Multiply, span)
        } else {
            self.scaled_index(fx, p.index, from_n / to_n, Bo::Divide, span)
        };
        let root = if to == Position::Layer(0) {
            PtrRoot::Place(base, array)
        } else {
            PtrRoot::View {
                base,
                array,
                object: Box::new(object),
            }
        };
        Ok(Some(PtrValue {
            root,
            index,
            pointee: target.pointee.clone(),
            space: p.space,
            // Writing through a cast that drops `const` is undefined in MSL.
            is_const: target.is_const || p.is_const,
        }))
    }

    /// The naga pointer to element `index` of a [`PtrRoot::View`] whose
    /// pointee is `pointee`: the access chain into the object.
    pub(in crate::lower) fn thread_view_element(
        &mut self,
        fx: &mut FnCtx,
        (base, array, object): (Handle<Expression>, bool, &Type),
        pointee: &Type,
        index: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let layers = layers(object, &self.program.structs);
        let to = match position(&layers, pointee) {
            Some(Position::Layer(k)) => k,
            _ => unreachable!("a view's pointee is one of its layers (parts: thread_view_part)"),
        };
        self.thread_view_chain(fx, (base, array, &layers), to, index, span)
    }

    /// The access chain from `base` to element `index` of layer `to`,
    /// counted from the start of the object (of the array of objects
    /// when `array`).
    fn thread_view_chain(
        &mut self,
        fx: &mut FnCtx,
        (base, array, layers): (Handle<Expression>, bool, &[(Type, u32)]),
        to: usize,
        index: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let mut ptr = base;
        if array {
            let per_object = count_between(layers, 0, to);
            let i = self.index_part(fx, index, per_object, None, span);
            ptr = access(fx, ptr, i, span);
        }
        for level in 0..to {
            let below = count_between(layers, level + 1, to);
            let i = self.index_part(fx, index, below, Some(layers[level].1), span);
            ptr = access(fx, ptr, i, span);
        }
        ptr
    }

    /// `index / below % n` (no remainder for `None`), folded when `index`
    /// is a literal.
    fn index_part(
        &mut self,
        fx: &mut FnCtx,
        index: Handle<Expression>,
        below: u32,
        n: Option<u32>,
        span: Span,
    ) -> Handle<Expression> {
        if let Expression::Literal(Literal::U32(i)) = *fx.expr(index) {
            let part = n.map_or(i / below, |n| i / below % n);
            return self.u32_lit(fx, part, span);
        }
        // A struct's one member, reached with `AccessIndex` only.
        if n == Some(1) {
            return self.u32_lit(fx, 0, span);
        }
        let mut h = self.scaled_index(fx, index, below, Bo::Divide, span);
        if let Some(n) = n {
            let n = self.u32_lit(fx, n, span);
            h = fx.add(
                Expression::Binary {
                    op: Bo::Modulo,
                    left: h,
                    right: n,
                },
                span,
            );
        }
        h
    }

    /// `index * k` or `index / k` (`u32`), folded for a literal `index`
    /// and left alone for `k == 1`.
    fn scaled_index(
        &mut self,
        fx: &mut FnCtx,
        index: Handle<Expression>,
        k: u32,
        op: Bo,
        span: Span,
    ) -> Handle<Expression> {
        if k == 1 {
            return index;
        }
        if let Expression::Literal(Literal::U32(i)) = *fx.expr(index) {
            let v = if op == Bo::Multiply { i * k } else { i / k };
            return self.u32_lit(fx, v, span);
        }
        let right = self.u32_lit(fx, k, span);
        fx.add(
            Expression::Binary {
                op,
                left: index,
                right,
            },
            span,
        )
    }

    fn thread_view_refused(&self, p: &PtrValue, target: &Pointer, span: Span) -> Error {
        let show = |t: &Type| self.program.display(t);
        let error = Error::coded(
            Code::InvalidConversion,
            span,
            format!(
                "cannot reinterpret this `{}*` as `{}*`: a pointer into thread memory can only view the object as the elements, components or columns it is made of",
                show(&p.pointee),
                show(&target.pointee)
            ),
        )
        .note("WGSL variables in the function and private address spaces have no byte address; a 3-component vector's padding and another scalar type have no place to point to");
        let Some(size) = part_size(&target.pointee) else {
            return error.note(format!(
                "`as_type<{}>(x)` copies the bits of a value of the same size",
                show(&target.pointee)
            ));
        };
        error
            .note(format!(
                "`{}` views of thread memory reach the parts of 32-bit integer words only (`int`, `uint`, their 2- and 4-component vectors, arrays of them and structs of one such member)",
                show(&target.pointee)
            ))
            .note(format!(
                "`as_type<{}{}>(x)` gives the parts of a 4-byte value",
                show(&target.pointee),
                4 / size
            ))
    }
}

/// `base[i]` as a naga pointer, `AccessIndex` for a literal index.
fn access(
    fx: &mut FnCtx,
    base: Handle<Expression>,
    index: Handle<Expression>,
    span: Span,
) -> Handle<Expression> {
    if let Expression::Literal(Literal::U32(i)) = *fx.expr(index) {
        return fx.add(Expression::AccessIndex { base, index: i }, span);
    }
    fx.add(Expression::Access { base, index }, span)
}

impl Lowerer<'_, '_> {
    /// True when `p` views a part of a 32-bit integer word of a `thread`
    /// object (`(thread uchar*)&w` of a `uint w`): what it points to is
    /// a [`Value::WordPart`](crate::lower::ctx::value::Value::WordPart),
    /// not a naga place.
    pub(in crate::lower) fn views_word_part(&self, p: &PtrValue) -> bool {
        let PtrRoot::View { object, .. } = &p.root else {
            return false;
        };
        let layers = layers(object, &self.program.structs);
        matches!(position(&layers, &p.pointee), Some(Position::Part(_)))
    }

    /// Where element `p.index` of a part view lies: the naga pointer to
    /// its word, the word's scalar (`int` or `uint`), and the part's
    /// first bit in the word (`u32`).
    pub(in crate::lower) fn thread_view_part(
        &mut self,
        fx: &mut FnCtx,
        p: &PtrValue,
        span: Span,
    ) -> (Handle<Expression>, Scalar, Handle<Expression>) {
        let PtrRoot::View {
            base,
            array,
            ref object,
        } = p.root
        else {
            unreachable!("a part view is a view");
        };
        let layers = layers(object, &self.program.structs);
        let Some(Position::Part(size)) = position(&layers, &p.pointee) else {
            unreachable!("a part view's pointee is a part of a word");
        };
        let word = layers.len() - 1;
        let Type::Scalar(word_scalar) = layers[word].0 else {
            unreachable!("parts lie in scalar words");
        };
        let per_word = 4 / size;
        let word_index = self.scaled_index(fx, p.index, per_word, Bo::Divide, span);
        let ptr = self.thread_view_chain(fx, (base, array, &layers), word, word_index, span);
        let part = self.index_part(fx, p.index, 1, Some(per_word), span);
        let shift = self.scaled_index(fx, part, 8 * size, Bo::Multiply, span);
        (ptr, word_scalar, shift)
    }
}
