//! Aggregates of sub-word data read and written through word views as
//! whole words: `struct alignas(16) ReadVector { uchar v[32]; }` copied
//! between a `device` and a `threadgroup` view (MLX's steel loaders), a
//! `char4` array, a struct of `half`s.
//!
//! Metal: an object of type `T` lies at a multiple of `alignof(T)` (a
//! pointer cast to a more aligned type that is not so aligned is undefined
//! behaviour, MSL §2.1 and C++ [basic.align]); storing a whole object
//! writes each of its bytes.
//!
//! WGSL: a word view (`word_views.rs`) is 32-bit words; a store of one
//! sub-word element is an atomic clear-and-set pair that keeps the other
//! bytes of its word, and a load of one takes its own word.
//!
//! Mapping: where the aggregate's alignment is at least 4 and its scalars
//! cover its bytes with no padding, each of its words is the aggregate's
//! alone. A load then reads each word once and takes every scalar from it;
//! a store assembles each word from the scalars in it and writes it with
//! one store. That is one load or store per word instead of one per
//! element (and two atomics per sub-word store): the same bytes, since no
//! other object's bytes share those words.

use crate::layout;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::BytePlace;
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, Statement};

/// One scalar of an aggregate: where its bytes start, and the member,
/// element and lane indices that reach it in the WGSL value.
#[derive(Debug, Clone)]
struct Tile {
    offset: u32,
    scalar: Scalar,
    path: Vec<u32>,
}

impl Lowerer<'_, '_> {
    /// The scalars of `ty` when whole-word access applies (module docs):
    /// `ty` is at least 4-aligned, a whole number of words, and tiled by
    /// its scalars with no padding; `None` otherwise.
    fn word_tiles(&mut self, ty: &Type) -> Option<Vec<Tile>> {
        let size = layout::metal(ty, &self.program.structs).size;
        if self.program.true_align(ty) < 4 || size == 0 || !size.is_multiple_of(4) {
            return None;
        }
        let mut tiles = Vec::new();
        self.collect_tiles(ty, 0, &mut Vec::new(), &mut tiles)?;
        let mut by_offset: Vec<(u32, u32)> =
            tiles.iter().map(|t| (t.offset, t.scalar.size())).collect();
        by_offset.sort_unstable();
        let mut end = 0;
        for &(offset, size) in &by_offset {
            if offset != end {
                return None;
            }
            end += size;
        }
        (end == size).then_some(tiles)
    }

    fn collect_tiles(
        &mut self,
        ty: &Type,
        base: u32,
        path: &mut Vec<u32>,
        out: &mut Vec<Tile>,
    ) -> Option<()> {
        match ty {
            Type::Scalar(s) => {
                let plain = matches!(
                    s,
                    Scalar::Char
                        | Scalar::UChar
                        | Scalar::Short
                        | Scalar::UShort
                        | Scalar::Half
                        | Scalar::BFloat
                        | Scalar::Int
                        | Scalar::UInt
                        | Scalar::Float
                );
                if !plain {
                    return None;
                }
                out.push(Tile {
                    offset: base,
                    scalar: *s,
                    path: path.clone(),
                });
            }
            Type::Vector(s, n) | Type::Packed(s, n) if *n != 3 => {
                for k in 0..u32::from(*n) {
                    path.push(k);
                    self.collect_tiles(&Type::Scalar(*s), base + k * s.size(), path, out)?;
                    path.pop();
                }
            }
            Type::Array(e, n) => {
                let stride = layout::metal(e, &self.program.structs).size;
                for i in 0..*n {
                    path.push(i);
                    self.collect_tiles(e, base + i * stride, path, out)?;
                    path.pop();
                }
            }
            Type::Struct(id) if !self.program.structs.get(*id).is_union => {
                let l = layout::struct_layout(*id, &self.program.structs);
                let members: Vec<Type> = (self.program.structs.get(*id).members.iter())
                    .map(|m| m.ty.clone())
                    .collect();
                for (k, (m, o)) in members.iter().zip(l.offsets).enumerate() {
                    path.push(self.member_index(*id, k));
                    self.collect_tiles(m, base + o, path, out)?;
                    path.pop();
                }
            }
            _ => return None,
        }
        Some(())
    }

    /// Loads the aggregate at `p` one word at a time, if whole-word access
    /// applies to its type (module docs).
    pub(in crate::lower) fn tiled_load(
        &mut self,
        fx: &mut FnCtx,
        p: &BytePlace,
        span: Span,
    ) -> Result<Option<Handle<Expression>>> {
        let Some(tiles) = self.word_tiles(&p.ty) else {
            return Ok(None);
        };
        let words = layout::metal(&p.ty, &self.program.structs).size / 4;
        let mut loaded = Vec::with_capacity(words as usize);
        for w in 0..words {
            let at = self.add_offset(fx, p.offset, w * 4, span);
            loaded.push(self.load_word(fx, p.global, at, span));
        }
        let mut scalars = (tiles.into_iter())
            .map(|t| {
                let word = loaded[(t.offset / 4) as usize];
                (t, word)
            })
            .collect();
        let ty = p.ty.clone();
        let value = self.compose_tiles(fx, &ty, &mut scalars, span)?;
        Ok(Some(value))
    }

    /// Builds a value of `ty` from its scalars, in the order of its
    /// members, elements and lanes (`next` holds each tile with the word
    /// that holds it).
    fn compose_tiles(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        next: &mut std::collections::VecDeque<(Tile, Handle<Expression>)>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let structs = &self.program.structs;
        let components = match ty {
            Type::Scalar(s) => {
                let (tile, word) = next.pop_front().expect("one tile per scalar");
                let at = tile.offset % 4;
                let shift =
                    |fx: &mut FnCtx| fx.add(Expression::Literal(Literal::U32(at * 8)), span);
                return Ok(self.scalar_in_word(fx, word, *s, shift, span));
            }
            Type::Vector(s, n) | Type::Packed(s, n) => {
                let lane = Type::Scalar(*s);
                let mut lanes = Vec::new();
                for _ in 0..*n {
                    lanes.push(self.compose_tiles(fx, &lane, next, span)?);
                }
                lanes
            }
            Type::Array(e, n) => {
                let e = (**e).clone();
                let mut elements = Vec::new();
                for _ in 0..*n {
                    elements.push(self.compose_tiles(fx, &e, next, span)?);
                }
                elements
            }
            Type::Struct(id) => {
                let id = *id;
                let members: Vec<Type> = structs
                    .get(id)
                    .members
                    .iter()
                    .map(|m| m.ty.clone())
                    .collect();
                let mut values = Vec::new();
                for m in &members {
                    values.push(self.compose_tiles(fx, m, next, span)?);
                }
                self.with_padding(id, values, span, |_, pad| {
                    fx.add(Expression::ZeroValue(pad), span)
                })?
            }
            _ => unreachable!("word_tiles admits only scalars, vectors, arrays and structs"),
        };
        let th = self.naga_type(&ty.unpacked(), span)?;
        Ok(fx.add(Expression::Compose { ty: th, components }, span))
    }

    /// Stores `value` (of type `p.ty.unpacked()`) one whole word at a time,
    /// if whole-word access applies to its type (module docs); `false`
    /// where it does not and nothing was stored.
    pub(in crate::lower) fn tiled_store(
        &mut self,
        fx: &mut FnCtx,
        p: &BytePlace,
        value: Handle<Expression>,
        span: Span,
    ) -> Result<bool> {
        let Some(tiles) = self.word_tiles(&p.ty) else {
            return Ok(false);
        };
        let words = layout::metal(&p.ty, &self.program.structs).size / 4;
        for w in 0..words {
            let mut word = None;
            for t in tiles.iter().filter(|t| t.offset / 4 == w) {
                let mut part = value;
                for &index in &t.path {
                    part = fx.add(Expression::AccessIndex { base: part, index }, span);
                }
                let bits = self.stored_bits(fx, part, t.scalar, span)?;
                let placed = if t.scalar.size() == 4 {
                    bits
                } else {
                    let mask = (1u32 << (t.scalar.size() * 8)) - 1;
                    let mask = fx.add(Expression::Literal(Literal::U32(mask)), span);
                    let field = fx.add(
                        Expression::Binary {
                            op: Bo::And,
                            left: bits,
                            right: mask,
                        },
                        span,
                    );
                    let shift = fx.add(Expression::Literal(Literal::U32((t.offset % 4) * 8)), span);
                    fx.add(
                        Expression::Binary {
                            op: Bo::ShiftLeft,
                            left: field,
                            right: shift,
                        },
                        span,
                    )
                };
                word = Some(match word {
                    Some(acc) => fx.add(
                        Expression::Binary {
                            op: Bo::InclusiveOr,
                            left: acc,
                            right: placed,
                        },
                        span,
                    ),
                    None => placed,
                });
            }
            let at = self.add_offset(fx, p.offset, w * 4, span);
            let pointer = self.word_pointer(fx, p.global, at, span);
            let value = word.expect("a tiled word holds at least one scalar");
            self.push_effect(fx, Statement::Store { pointer, value }, Some(pointer), span);
        }
        Ok(true)
    }
}
