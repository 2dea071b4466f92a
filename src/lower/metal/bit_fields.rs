//! Reading and writing bit-fields (`sema::bit_fields` lays them out).
//!
//! A field's bits lie in hidden members of its struct (`@bits0`, ...: the
//! bytes its run of bit-fields occupies, as `uint`/`ushort`/`uchar`). Those
//! members are ordinary places (a naga struct member in thread memory, a
//! byte place in a word view), so a field is read by loading the hidden
//! members that cover it into one 32-bit word, `W` (they never cross a
//! 4-byte boundary that the field does not), and taking its bits with
//! `extractBits` (of `W` bit-cast to `i32` for a signed field, which then
//! sign-extends, as Metal does); it is written with `insertBits` into `W`,
//! whose bytes are stored back into the same members. Neighbouring fields
//! keep their bits; like any C++ bit-field write, it is a read-modify-write
//! of the bytes, not atomic.

use crate::layout;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{BitFieldPlace, Value};
use crate::lower::stdlib::simd::bin;
use crate::lower::{Lowerer, Result};
use crate::sema::bit_fields::{BitField, STORAGE_PREFIX};
use crate::source_map::Span;
use crate::types::{Scalar, StructId, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, MathFunction, ScalarKind};

/// A hidden member holding some of a field's bytes.
struct Chunk {
    name: String,
    /// Its byte offset in the struct.
    offset: u32,
    /// Its size in bytes (1, 2 or 4).
    size: u32,
}

impl Lowerer<'_, '_> {
    /// `object.name` when `name` is a bit-field of struct `id`.
    pub(in crate::lower) fn bit_field_member(
        &self,
        object: &Value,
        id: StructId,
        name: &str,
    ) -> Option<Value> {
        let field = self.program.bit_field(id, name)?.clone();
        Some(Value::BitField(Box::new(BitFieldPlace {
            object: object.clone(),
            field,
            id,
        })))
    }

    /// The hidden members of struct `id` covering `field`, and the first
    /// byte of the 4-byte word they lie in.
    fn chunks(&self, id: StructId, field: &BitField) -> (Vec<Chunk>, u32) {
        let def = self.program.structs.get(id);
        let offsets = layout::struct_layout(id, &self.program.structs).offsets;
        let first = field.bit / 8;
        let last = (field.bit + field.width - 1) / 8;
        let chunks = def
            .members
            .iter()
            .zip(offsets)
            .filter(|(m, _)| m.name.starts_with(STORAGE_PREFIX))
            .map(|(m, offset)| Chunk {
                name: m.name.clone(),
                offset,
                size: layout::metal(&m.ty, &self.program.structs).size,
            })
            .filter(|c| c.offset <= last && c.offset + c.size > first)
            .collect();
        (chunks, first / 4 * 4)
    }

    /// The word `W` of the hidden members `chunks` (from byte `base`).
    fn chunk_word(
        &mut self,
        fx: &mut FnCtx,
        object: &Value,
        chunks: &[Chunk],
        base: u32,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let mut word = self.u32_lit(fx, 0, span);
        for c in chunks {
            let place = self.member(fx, object.clone(), &c.name, span)?;
            let (v, t) = self.load(fx, place, span)?;
            let v = self.convert(fx, v, &t, &Type::UINT, true, span)?;
            let shift = self.u32_lit(fx, 8 * (c.offset - base), span);
            let v = bin(fx, Bo::ShiftLeft, v, shift, span);
            word = bin(fx, Bo::InclusiveOr, word, v, span);
        }
        Ok(word)
    }

    /// Reads bit-field `b`: its value, of its declared type.
    pub(in crate::lower) fn bit_field_load(
        &mut self,
        fx: &mut FnCtx,
        b: &BitFieldPlace,
        span: Span,
    ) -> Result<(Handle<Expression>, Type)> {
        let f = &b.field;
        let (chunks, base) = self.chunks(b.id, f);
        let word = self.chunk_word(fx, &b.object, &chunks, base, span)?;
        let signed = matches!(f.scalar, Scalar::Char | Scalar::Short | Scalar::Int);
        let word = match signed {
            true => cast(fx, word, ScalarKind::Sint, span),
            false => word,
        };
        let offset = self.u32_lit(fx, f.bit - 8 * base, span);
        let count = self.u32_lit(fx, f.width, span);
        let bits = fx.add(
            Expression::Math {
                fun: MathFunction::ExtractBits,
                arg: word,
                arg1: Some(offset),
                arg2: Some(count),
                arg3: None,
            },
            span,
        );
        let ty = Type::Scalar(f.scalar);
        if f.scalar == Scalar::Bool {
            let zero = self.u32_lit(fx, 0, span);
            return Ok((bin(fx, Bo::NotEqual, bits, zero, span), ty));
        }
        Ok((bits, ty))
    }

    /// Writes `value` (of type `ty`) into bit-field `b`, converted to its
    /// type: returns the field's new value.
    pub(in crate::lower) fn bit_field_store(
        &mut self,
        fx: &mut FnCtx,
        b: &BitFieldPlace,
        value: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let f = &b.field;
        let field_ty = Type::Scalar(f.scalar);
        let v = self.convert(fx, value, ty, &field_ty, false, span)?;
        let bits = match f.scalar {
            Scalar::Bool => self.convert(fx, v, &field_ty, &Type::UINT, true, span)?,
            Scalar::Char | Scalar::Short | Scalar::Int => cast(fx, v, ScalarKind::Uint, span),
            _ => v,
        };
        let (chunks, base) = self.chunks(b.id, f);
        let word = self.chunk_word(fx, &b.object, &chunks, base, span)?;
        let offset = self.u32_lit(fx, f.bit - 8 * base, span);
        let count = self.u32_lit(fx, f.width, span);
        let word = fx.add(
            Expression::Math {
                fun: MathFunction::InsertBits,
                arg: word,
                arg1: Some(bits),
                arg2: Some(offset),
                arg3: Some(count),
            },
            span,
        );
        for c in &chunks {
            let shift = self.u32_lit(fx, 8 * (c.offset - base), span);
            let part = bin(fx, Bo::ShiftRight, word, shift, span);
            let mask = fx.add(
                Expression::Literal(Literal::U32(match c.size {
                    4 => u32::MAX,
                    n => (1 << (8 * n)) - 1,
                })),
                span,
            );
            let part = bin(fx, Bo::And, part, mask, span);
            let place = self.member(fx, b.object.clone(), &c.name, span)?;
            self.store(fx, &place, part, &Type::UINT, span)?;
        }
        // The assignment's value is the field's: the value cut to its width.
        if f.scalar == Scalar::Bool {
            return Ok(v);
        }
        let zero = self.u32_lit(fx, 0, span);
        let count = self.u32_lit(fx, f.width, span);
        Ok(fx.add(
            Expression::Math {
                fun: MathFunction::ExtractBits,
                arg: v,
                arg1: Some(zero),
                arg2: Some(count),
                arg3: None,
            },
            span,
        ))
    }
}

/// `h` bit-cast to the 32-bit integer of kind `kind`.
fn cast(fx: &mut FnCtx, h: Handle<Expression>, kind: ScalarKind, span: Span) -> Handle<Expression> {
    fx.add(
        Expression::As {
            expr: h,
            kind,
            convert: None,
        },
        span,
    )
}
