//! Buffers held as 32-bit words and addressed in bytes ("word views",
//! mapping doc §2.6–2.7): used when WGSL's default layout cannot reproduce
//! Metal's (packed vectors, `bool`, 8- and 16-bit integers, `half` held in
//! `f32`: see half_mode.rs). Loads assemble
//! values from words; stores write whole words, or update sub-word bytes
//! with atomic AND/OR so that neighbouring bytes written by other threads at
//! the same time are never lost.

use crate::diagnostics::Code;
use crate::layout;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::BytePlace;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::types::{Scalar, Type};
use naga::{
    AtomicFunction, BinaryOperator as Bo, Expression, Handle, Literal, MathFunction as Mf,
    Statement,
};

impl Lowerer<'_, '_> {
    /// True if buffers holding `ty` need a word view.
    pub(in crate::lower) fn needs_word_view(&self, ty: &Type) -> bool {
        layout::wgsl(ty, &self.program.structs).is_err()
            || self.holds_emulated_half(ty)
            || self.holds_narrowed_wide(ty)
    }

    /// Whether global `g` is a word view with atomic words.
    pub(in crate::lower) fn word_view(&self, g: Handle<naga::GlobalVariable>) -> Option<bool> {
        self.global.word_views.get(&g).copied()
    }

    fn lit(fx: &mut FnCtx, v: u32, span: Span) -> Handle<Expression> {
        fx.add(Expression::Literal(Literal::U32(v)), span)
    }

    fn bin(
        fx: &mut FnCtx,
        op: Bo,
        left: Handle<Expression>,
        right: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        fx.add(Expression::Binary { op, left, right }, span)
    }

    /// `offset + k`.
    pub(in crate::lower) fn add_offset(
        &mut self,
        fx: &mut FnCtx,
        offset: Handle<Expression>,
        k: u32,
        span: Span,
    ) -> Handle<Expression> {
        if k == 0 {
            return offset;
        }
        if let Expression::Literal(Literal::U32(v)) = *fx.expr(offset) {
            return Self::lit(fx, v + k, span);
        }
        let k = Self::lit(fx, k, span);
        Self::bin(fx, Bo::Add, offset, k, span)
    }

    /// `offset + index * stride` for a dynamic `u32` index.
    pub(in crate::lower) fn scaled_offset(
        &mut self,
        fx: &mut FnCtx,
        offset: Handle<Expression>,
        index: Handle<Expression>,
        stride: u32,
        span: Span,
    ) -> Handle<Expression> {
        if let Expression::Literal(Literal::U32(i)) = *fx.expr(index) {
            return self.add_offset(fx, offset, i * stride, span);
        }
        let s = Self::lit(fx, stride, span);
        let scaled = Self::bin(fx, Bo::Multiply, index, s, span);
        Self::bin(fx, Bo::Add, offset, scaled, span)
    }

    /// A pointer to the word holding byte `offset`.
    pub(in crate::lower) fn word_pointer(
        &mut self,
        fx: &mut FnCtx,
        global: Handle<naga::GlobalVariable>,
        offset: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let base = fx.add(Expression::GlobalVariable(global), span);
        let two = Self::lit(fx, 2, span);
        let index = Self::bin(fx, Bo::ShiftRight, offset, two, span);
        fx.add(Expression::Access { base, index }, span)
    }

    /// The bit position of byte `offset` within its word, for a field of `size` bytes.
    fn bit_shift(
        fx: &mut FnCtx,
        offset: Handle<Expression>,
        size: u32,
        span: Span,
    ) -> Handle<Expression> {
        let mask = Self::lit(fx, 4 - size, span);
        let in_word = Self::bin(fx, Bo::And, offset, mask, span);
        let eight = Self::lit(fx, 8, span);
        Self::bin(fx, Bo::Multiply, in_word, eight, span)
    }

    /// Loads the value at a byte place (packed vectors load as aligned vectors).
    pub(in crate::lower) fn bytes_load(
        &mut self,
        fx: &mut FnCtx,
        p: &BytePlace,
        span: Span,
    ) -> Result<(Handle<Expression>, Type)> {
        self.check_word_sized(&p.ty, span)?;
        let value_ty = p.ty.unpacked();
        let h = match &p.ty {
            Type::Scalar(s) => self.load_scalar(fx, p.global, p.offset, *s, span),
            // An aligned vector of whole words (`uchar4`, `half2`,
            // `ushort4`): each word is loaded once and its lanes taken at
            // fixed bit positions, rather than one load per lane.
            Type::Vector(s, n) if s.size() < 4 && (s.size() * u32::from(*n)) % 4 == 0 => {
                let lanes = self.load_packed_words(fx, p, *s, u32::from(*n), span);
                let th = self.naga_type(&value_ty, span)?;
                fx.add(
                    Expression::Compose {
                        ty: th,
                        components: lanes,
                    },
                    span,
                )
            }
            Type::Vector(s, n) | Type::Packed(s, n) => {
                let mut lanes = Vec::new();
                for k in 0..u32::from(*n) {
                    let at = self.add_offset(fx, p.offset, k * s.size(), span);
                    lanes.push(self.load_scalar(fx, p.global, at, *s, span));
                }
                let th = self.naga_type(&value_ty, span)?;
                fx.add(
                    Expression::Compose {
                        ty: th,
                        components: lanes,
                    },
                    span,
                )
            }
            Type::Atomic(_) => return Err(crate::lower::ctx::value::atomic_access(span)),
            Type::Struct(id) if self.program.structs.get(*id).is_union => {
                self.union_load(fx, p, *id, span)?
            }
            _ => {
                if let Some(h) = self.tiled_load(fx, p, span)? {
                    return Ok((h, value_ty));
                }
                let parts = self.bytes_parts(fx, p, span)?;
                let mut components = Vec::new();
                for part in &parts {
                    components.push(self.bytes_load(fx, part, span)?.0);
                }
                if let Type::Struct(id) = p.ty {
                    components = self.with_padding(id, components, span, |_, pad| {
                        fx.add(Expression::ZeroValue(pad), span)
                    })?;
                }
                let th = self.naga_type(&value_ty, span)?;
                fx.add(Expression::Compose { ty: th, components }, span)
            }
        };
        Ok((h, value_ty))
    }

    /// The columns, elements or members of an aggregate at a byte place.
    fn bytes_parts(&mut self, fx: &mut FnCtx, p: &BytePlace, span: Span) -> Result<Vec<BytePlace>> {
        let structs = &self.program.structs;
        let parts: Vec<(u32, Type)> = match &p.ty {
            Type::Matrix {
                scalar,
                columns,
                rows,
            } => {
                let col = Type::Vector(*scalar, *rows);
                let stride = layout::metal(&col, structs).size;
                (0..u32::from(*columns))
                    .map(|c| (c * stride, col.clone()))
                    .collect()
            }
            Type::Array(e, n) => {
                let stride = layout::metal(e, structs).size;
                (0..*n).map(|i| (i * stride, (**e).clone())).collect()
            }
            Type::Struct(id) => {
                let l = layout::struct_layout(*id, structs);
                structs
                    .get(*id)
                    .members
                    .iter()
                    .zip(l.offsets)
                    .map(|(m, o)| (o, m.ty.clone()))
                    .collect()
            }
            other => {
                return Err(Error::coded(
                    Code::Unsupported,
                    span,
                    format!(
                        "`{}` cannot be accessed in a buffer",
                        self.program.display(other)
                    ),
                ))
            }
        };
        Ok(parts
            .into_iter()
            .map(|(o, ty)| BytePlace {
                offset: self.add_offset(fx, p.offset, o, span),
                ty,
                ..p.clone()
            })
            .collect())
    }

    /// Refuses a native 64-bit scalar (`ulong` in a buffer also holding
    /// bytes, with `--target wgpu`): a byte place is read and written
    /// through 32-bit words. On WebGPU a 64-bit integer is held in 32 bits,
    /// one word and its extension (`wide_integers.rs`).
    fn check_word_sized(&mut self, ty: &Type, span: Span) -> Result<()> {
        if ty.element_scalar().is_some_and(|s| s.size() > 4) && !self.narrows_wide_integers() {
            self.check_64_bit(span)?;
            return Err(Error::coded(
                Code::Unsupported,
                span,
                "64-bit values in a buffer that also holds packed, bool or 8/16-bit data are not supported yet",
            ));
        }
        Ok(())
    }

    /// The word holding byte `offset` of word view `global`.
    pub(in crate::lower) fn load_word(
        &mut self,
        fx: &mut FnCtx,
        global: Handle<naga::GlobalVariable>,
        offset: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let ptr = self.word_pointer(fx, global, offset, span);
        fx.add(Expression::Load { pointer: ptr }, span)
    }

    /// The `n` lanes of an aligned vector of `s` at a byte place whose
    /// lanes fill whole words, one load per word.
    fn load_packed_words(
        &mut self,
        fx: &mut FnCtx,
        p: &BytePlace,
        s: Scalar,
        n: u32,
        span: Span,
    ) -> Vec<Handle<Expression>> {
        let per_word = 4 / s.size();
        let mut lanes = Vec::with_capacity(n as usize);
        for w in 0..n / per_word {
            let at = self.add_offset(fx, p.offset, w * 4, span);
            let word = self.load_word(fx, p.global, at, span);
            for j in 0..per_word {
                let shift = Self::lit(fx, j * s.size() * 8, span);
                lanes.push(self.scalar_field(fx, word, shift, s, span));
            }
        }
        lanes
    }

    /// One scalar of Metal size 1, 2 or 4 at byte `offset`.
    fn load_scalar(
        &mut self,
        fx: &mut FnCtx,
        global: Handle<naga::GlobalVariable>,
        offset: Handle<Expression>,
        s: Scalar,
        span: Span,
    ) -> Handle<Expression> {
        if crate::lower::metal::wide_integers::is_wide(s) {
            return self.load_narrowed_wide(fx, global, offset, s, span);
        }
        let word = self.load_word(fx, global, offset, span);
        let shift = |fx: &mut FnCtx| Self::bit_shift(fx, offset, s.size(), span);
        self.scalar_in_word(fx, word, s, shift, span)
    }

    /// The scalar `s` in `word`: its bits, for a 4-byte scalar; else the 1
    /// or 2 bytes from the bit `shift` makes (made only then) on.
    pub(in crate::lower) fn scalar_in_word(
        &mut self,
        fx: &mut FnCtx,
        word: Handle<Expression>,
        s: Scalar,
        shift: impl FnOnce(&mut FnCtx) -> Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        if s.size() != 4 {
            let shift = shift(fx);
            return self.scalar_field(fx, word, shift, s, span);
        }
        let kind = match s {
            Scalar::UInt => return word,
            Scalar::Int => naga::ScalarKind::Sint,
            _ => naga::ScalarKind::Float,
        };
        fx.add(
            Expression::As {
                expr: word,
                kind,
                convert: None,
            },
            span,
        )
    }

    /// The scalar `s` (1 or 2 bytes) held in the bits of `word` from bit
    /// `shift` on.
    fn scalar_field(
        &mut self,
        fx: &mut FnCtx,
        word: Handle<Expression>,
        shift: Handle<Expression>,
        s: Scalar,
        span: Span,
    ) -> Handle<Expression> {
        let bits = Self::lit(fx, s.size() * 8, span);
        let field = |fx: &mut FnCtx, w| {
            fx.add(
                Expression::Math {
                    fun: Mf::ExtractBits,
                    arg: w,
                    arg1: Some(shift),
                    arg2: Some(bits),
                    arg3: None,
                },
                span,
            )
        };
        match s {
            // extractBits on a signed value sign-extends the field.
            Scalar::Char | Scalar::Short => {
                let signed = fx.add(
                    Expression::As {
                        expr: word,
                        kind: naga::ScalarKind::Sint,
                        convert: None,
                    },
                    span,
                );
                field(fx, signed)
            }
            Scalar::Bool => {
                let b = field(fx, word);
                let zero = Self::lit(fx, 0, span);
                Self::bin(fx, Bo::NotEqual, b, zero, span)
            }
            Scalar::Half => {
                let b = field(fx, word);
                let pair = fx.add(
                    Expression::Math {
                        fun: Mf::Unpack2x16float,
                        arg: b,
                        arg1: None,
                        arg2: None,
                        arg3: None,
                    },
                    span,
                );
                let low = fx.add(
                    Expression::AccessIndex {
                        base: pair,
                        index: 0,
                    },
                    span,
                );
                fx.add(
                    Expression::As {
                        expr: low,
                        kind: naga::ScalarKind::Float,
                        convert: Some(2),
                    },
                    span,
                )
            }
            Scalar::BFloat => {
                let b = field(fx, word);
                crate::lower::metal::bfloat::bfloat_from_bits(fx, b, 1, span)
            }
            _ => field(fx, word),
        }
    }

    /// Stores `value` (of type `p.ty.unpacked()`) at a byte place.
    pub(in crate::lower) fn bytes_store(
        &mut self,
        fx: &mut FnCtx,
        p: &BytePlace,
        value: Handle<Expression>,
        span: Span,
    ) -> Result<()> {
        self.check_word_sized(&p.ty, span)?;
        match &p.ty {
            Type::Scalar(s) => self.store_scalar(fx, p, value, *s, span),
            // An aligned vector of whole words (`uchar4`, `half2`, `ushort4`):
            // Metal aligns it to its size, so each word is the vector's
            // alone and one store replaces a clear-and-set pair per lane.
            Type::Vector(s, n) if s.size() < 4 && (s.size() * u32::from(*n)) % 4 == 0 => {
                self.store_packed_words(fx, p, value, *s, u32::from(*n), span)
            }
            // A 2-byte vector (`uchar2`) is 2-aligned: one 16-bit field of
            // its word, one store instead of one per byte.
            Type::Vector(s, 2) if s.size() == 1 => {
                let bits = self.byte_pair_bits(fx, value, *s, span);
                self.store_field(fx, p, bits, 2, span)
            }
            Type::Vector(s, n) | Type::Packed(s, n) => {
                for k in 0..u32::from(*n) {
                    let at = self.add_offset(fx, p.offset, k * s.size(), span);
                    let lane = fx.add(
                        Expression::AccessIndex {
                            base: value,
                            index: k,
                        },
                        span,
                    );
                    self.store_scalar(
                        fx,
                        &BytePlace {
                            offset: at,
                            ..p.clone()
                        },
                        lane,
                        *s,
                        span,
                    )?;
                }
                Ok(())
            }
            Type::Atomic(_) => Err(crate::lower::ctx::value::atomic_access(span)),
            Type::Struct(id) if self.program.structs.get(*id).is_union => {
                self.union_store(fx, p, *id, value, span)
            }
            _ => {
                if self.tiled_store(fx, p, value, span)? {
                    return Ok(());
                }
                let parts = self.bytes_parts(fx, p, span)?;
                for (k, part) in parts.iter().enumerate() {
                    let index = match p.ty {
                        Type::Struct(id) => self.member_index(id, k),
                        _ => k as u32,
                    };
                    let v = fx.add(Expression::AccessIndex { base: value, index }, span);
                    self.bytes_store(fx, part, v, span)?;
                }
                Ok(())
            }
        }
    }

    /// Stores the `n` sub-word lanes of `value` as whole words: each word
    /// is its lanes' bits, or-ed together, written with one store.
    fn store_packed_words(
        &mut self,
        fx: &mut FnCtx,
        p: &BytePlace,
        value: Handle<Expression>,
        s: Scalar,
        n: u32,
        span: Span,
    ) -> Result<()> {
        let size = s.size();
        let per_word = 4 / size;
        let mask = Self::lit(fx, (1u32 << (size * 8)) - 1, span);
        for w in 0..n / per_word {
            let mut word = None;
            for j in 0..per_word {
                let lane = fx.add(
                    Expression::AccessIndex {
                        base: value,
                        index: w * per_word + j,
                    },
                    span,
                );
                let bits = if s == Scalar::Half {
                    self.half_bits(fx, lane, span)?
                } else if s == Scalar::BFloat {
                    crate::lower::metal::bfloat::bfloat_bits(fx, lane, 1, span)
                } else {
                    Self::scalar_bits(fx, lane, s, span)
                };
                let field = Self::bin(fx, Bo::And, bits, mask, span);
                let shift = Self::lit(fx, j * size * 8, span);
                let placed = Self::bin(fx, Bo::ShiftLeft, field, shift, span);
                word = Some(match word {
                    Some(acc) => Self::bin(fx, Bo::InclusiveOr, acc, placed, span),
                    None => placed,
                });
            }
            let at = self.add_offset(fx, p.offset, w * 4, span);
            let pointer = self.word_pointer(fx, p.global, at, span);
            let value = word.expect("a word has at least one lane");
            self.push_effect(fx, Statement::Store { pointer, value }, Some(pointer), span);
        }
        Ok(())
    }

    /// The two lanes of a 1-byte `vec2` as the low 16 bits of a `u32`.
    fn byte_pair_bits(
        &mut self,
        fx: &mut FnCtx,
        value: Handle<Expression>,
        s: Scalar,
        span: Span,
    ) -> Handle<Expression> {
        let mut bits = Vec::new();
        for index in 0..2 {
            let lane = fx.add(Expression::AccessIndex { base: value, index }, span);
            let lane = Self::scalar_bits(fx, lane, s, span);
            bits.push(self.field_bits(fx, lane, 1, span));
        }
        let eight = Self::lit(fx, 8, span);
        let high = Self::bin(fx, Bo::ShiftLeft, bits[1], eight, span);
        Self::bin(fx, Bo::InclusiveOr, bits[0], high, span)
    }

    /// The bits of a scalar value as a `u32` (low `size` bytes meaningful).
    fn scalar_bits(
        fx: &mut FnCtx,
        value: Handle<Expression>,
        s: Scalar,
        span: Span,
    ) -> Handle<Expression> {
        match s {
            Scalar::Bool => {
                let one = Self::lit(fx, 1, span);
                let zero = Self::lit(fx, 0, span);
                fx.add(
                    Expression::Select {
                        condition: value,
                        accept: one,
                        reject: zero,
                    },
                    span,
                )
            }
            Scalar::UInt | Scalar::UChar | Scalar::UShort => value,
            _ => fx.add(
                Expression::As {
                    expr: value,
                    kind: naga::ScalarKind::Uint,
                    convert: None,
                },
                span,
            ),
        }
    }

    fn store_scalar(
        &mut self,
        fx: &mut FnCtx,
        p: &BytePlace,
        value: Handle<Expression>,
        s: Scalar,
        span: Span,
    ) -> Result<()> {
        if crate::lower::metal::wide_integers::is_wide(s) {
            self.store_narrowed_wide(fx, p.global, (p.offset, value), s, span);
            return Ok(());
        }
        let value = self.stored_bits(fx, value, s, span)?;
        self.store_field(fx, p, value, s.size(), span)
    }

    /// The bits Metal stores for scalar `value` of type `s`, in the low
    /// `s.size()` bytes of a `u32`.
    pub(in crate::lower) fn stored_bits(
        &mut self,
        fx: &mut FnCtx,
        value: Handle<Expression>,
        s: Scalar,
        span: Span,
    ) -> Result<Handle<Expression>> {
        Ok(if s == Scalar::Half {
            self.half_bits(fx, value, span)?
        } else if s == Scalar::BFloat {
            crate::lower::metal::bfloat::bfloat_bits(fx, value, 1, span)
        } else {
            Self::scalar_bits(fx, value, s, span)
        })
    }

    /// Stores the low `size` bytes of `value`, a field that lies within one
    /// word (a scalar, or an aligned 2-byte vector), at a byte place.
    fn store_field(
        &mut self,
        fx: &mut FnCtx,
        p: &BytePlace,
        value: Handle<Expression>,
        size: u32,
        span: Span,
    ) -> Result<()> {
        let pointer = self.word_pointer(fx, p.global, p.offset, span);
        if size == 4 {
            self.push_effect(fx, Statement::Store { pointer, value }, Some(pointer), span);
            return Ok(());
        }
        if self.is_private_words(p.global) {
            return self.store_private_field(fx, pointer, value, p.offset, size, span);
        }
        if self.word_view(p.global) != Some(true) {
            return Err(Error::coded(
                Code::Internal,
                span,
                "internal error: sub-word store into a non-atomic word view",
            ));
        }
        let field = (p.offset, value, size);
        if self.take_combined_store(fx) {
            let masked = self.field_bits(fx, value, size, span);
            return self.combined_store(
                fx,
                p.global,
                (p.offset, masked, size),
                |this, fx| this.atomic_field_store(fx, pointer, field, span),
                span,
            );
        }
        self.atomic_field_store(fx, pointer, field, span)
    }

    /// The low `size` bytes of `value`.
    fn field_bits(
        &mut self,
        fx: &mut FnCtx,
        value: Handle<Expression>,
        size: u32,
        span: Span,
    ) -> Handle<Expression> {
        let ones = Self::lit(fx, (1u32 << (size * 8)) - 1, span);
        Self::bin(fx, Bo::And, value, ones, span)
    }

    /// Replaces the `size` bytes at byte `offset` of the word at `pointer`
    /// with the low bytes of `value` (`field`: offset, value, size): clear
    /// the field, then set its bits, two atomic operations, so that other
    /// threads' bytes in the same word survive.
    fn atomic_field_store(
        &mut self,
        fx: &mut FnCtx,
        pointer: Handle<Expression>,
        (offset, value, size): (Handle<Expression>, Handle<Expression>, u32),
        span: Span,
    ) -> Result<()> {
        let shift = Self::bit_shift(fx, offset, size, span);
        let ones = Self::lit(fx, (1u32 << (size * 8)) - 1, span);
        let field = Self::bin(fx, Bo::ShiftLeft, ones, shift, span);
        let clear = fx.add(
            Expression::Unary {
                op: naga::UnaryOperator::BitwiseNot,
                expr: field,
            },
            span,
        );
        let masked = Self::bin(fx, Bo::And, value, ones, span);
        let set = Self::bin(fx, Bo::ShiftLeft, masked, shift, span);
        self.push_effect(
            fx,
            Statement::Atomic {
                pointer,
                fun: AtomicFunction::And,
                value: clear,
                result: None,
            },
            Some(pointer),
            span,
        );
        self.push_effect(
            fx,
            Statement::Atomic {
                pointer,
                fun: AtomicFunction::InclusiveOr,
                value: set,
                result: None,
            },
            Some(pointer),
            span,
        );
        Ok(())
    }

    /// Replaces the `size` bytes at `offset` of the word at `pointer`, storage
    /// of a union object's own (`unions.rs`), with the low bytes of `value`:
    /// no other thread sees it, so a load, a mask and a store.
    fn store_private_field(
        &mut self,
        fx: &mut FnCtx,
        pointer: Handle<Expression>,
        value: Handle<Expression>,
        offset: Handle<Expression>,
        size: u32,
        span: Span,
    ) -> Result<()> {
        let shift = Self::bit_shift(fx, offset, size, span);
        let ones = Self::lit(fx, (1u32 << (size * 8)) - 1, span);
        let field = Self::bin(fx, Bo::ShiftLeft, ones, shift, span);
        let clear = fx.add(
            Expression::Unary {
                op: naga::UnaryOperator::BitwiseNot,
                expr: field,
            },
            span,
        );
        let masked = Self::bin(fx, Bo::And, value, ones, span);
        let set = Self::bin(fx, Bo::ShiftLeft, masked, shift, span);
        let old = fx.add(Expression::Load { pointer }, span);
        let kept = Self::bin(fx, Bo::And, old, clear, span);
        let value = Self::bin(fx, Bo::InclusiveOr, kept, set, span);
        fx.push(Statement::Store { pointer, value }, span);
        Ok(())
    }

    /// The 16 bits of a `half` in the low half of a `u32`.
    ///
    /// `pack2x16float` is indeterminate outside f16's finite range, and
    /// SwiftShader really gives NaN for infinity; Metal stores the IEEE bits.
    /// So infinities (whose sign is kept) and NaNs (a quiet NaN) are
    /// encoded here; the rest (already rounded to half) is packed.
    fn half_bits(
        &mut self,
        fx: &mut FnCtx,
        value: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let wide = fx.add(
            Expression::As {
                expr: value,
                kind: naga::ScalarKind::Float,
                convert: Some(4),
            },
            span,
        );
        let pair_ty = self.naga_type(&Type::Vector(Scalar::Float, 2), span)?;
        let zero = fx.add(Expression::Literal(Literal::F32(0.0)), span);
        let pair = fx.add(
            Expression::Compose {
                ty: pair_ty,
                components: vec![wide, zero],
            },
            span,
        );
        let packed = fx.add(
            Expression::Math {
                fun: Mf::Pack2x16float,
                arg: pair,
                arg1: None,
                arg2: None,
                arg3: None,
            },
            span,
        );
        // Decided on the bits: WGSL lets implementations assume floats are
        // never NaN or infinite, so `x != x` or `abs(x) <= 65504` may be
        // folded away (llvmpipe does).
        let bits = fx.add(
            Expression::As {
                expr: wide,
                kind: naga::ScalarKind::Uint,
                convert: None,
            },
            span,
        );
        let exponent_mask = Self::lit(fx, 0x7F80_0000, span);
        let exponent = Self::bin(fx, Bo::And, bits, exponent_mask, span);
        let finite = Self::bin(fx, Bo::NotEqual, exponent, exponent_mask, span);
        let mantissa_mask = Self::lit(fx, 0x007F_FFFF, span);
        let mantissa = Self::bin(fx, Bo::And, bits, mantissa_mask, span);
        let no_bits = Self::lit(fx, 0, span);
        let is_nan = Self::bin(fx, Bo::NotEqual, mantissa, no_bits, span);
        let sixteen = Self::lit(fx, 16, span);
        let high = Self::bin(fx, Bo::ShiftRight, bits, sixteen, span);
        let sign_mask = Self::lit(fx, 0x8000, span);
        let sign = Self::bin(fx, Bo::And, high, sign_mask, span);
        let infinity = Self::lit(fx, 0x7C00, span);
        let quiet_nan = Self::lit(fx, 0x7E00, span);
        let pattern = fx.add(
            Expression::Select {
                condition: is_nan,
                accept: quiet_nan,
                reject: infinity,
            },
            span,
        );
        let special = Self::bin(fx, Bo::InclusiveOr, sign, pattern, span);
        Ok(fx.add(
            Expression::Select {
                condition: finite,
                accept: packed,
                reject: special,
            },
            span,
        ))
    }
}

#[cfg(test)]
mod tests {
    //! Stores through word views land where Metal puts the bytes: the byte
    //! offset of a field follows Metal's layout (MSL §2.1–2.5, worked out by
    //! hand below), and byte `o` of a little-endian buffer is bits
    //! `8 * (o % 4)` and up of word `o / 4`.

    use crate::lower::metal::ir_eval::{
        entry, global, loaded_globals, lower_msl, statements, Eval, V,
    };
    use crate::lower::HalfMode;
    use naga::{AtomicFunction, Expression, Statement};

    /// Stores and atomics of entry point `k` as (word index, function,
    /// value), evaluated with the globals `values`.
    fn word_writes(
        msl: &str,
        half: HalfMode,
        values: &[(&str, V)],
        words: &str,
    ) -> Vec<(u32, Option<AtomicFunction>, u32)> {
        let lowered = lower_msl(msl, half);
        let module = &lowered.module;
        let f = entry(module, "k");
        let leaf = loaded_globals(module, f, values);
        let eval = Eval {
            function: f,
            leaf: &leaf,
        };
        let words = global(module, words);
        let word_index = |pointer| match f.expressions[pointer] {
            Expression::Access { base, index } => {
                assert_eq!(f.expressions[base], Expression::GlobalVariable(words));
                eval.eval(index).u()
            }
            ref other => panic!("not a word: {other:?}"),
        };
        statements(&f.body)
            .into_iter()
            .filter_map(|s| match *s {
                Statement::Store { pointer, value } => {
                    Some((word_index(pointer), None, eval.eval(value).u()))
                }
                Statement::Atomic {
                    pointer,
                    fun,
                    value,
                    ..
                } => Some((word_index(pointer), Some(fun), eval.eval(value).u())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_byte_is_cleared_and_set_in_the_word_holding_it() {
        // struct P { uchar a; packed_half3 h; uchar b; }: a@0, h@2 (6 bytes,
        // 2-aligned), b@8; size 9 rounded to the alignment 2: 10.
        let msl = "struct P { uchar a; packed_half3 h; uchar b; };\n\
                   kernel void k(device P* p [[buffer(0)]], constant uint& i [[buffer(1)]]) \
                   { p[i].b = 9; }\n";
        for i in 0..8 {
            let byte = 10 * i + 8;
            let shift = 8 * (byte % 4);
            assert_eq!(
                word_writes(msl, HalfMode::F16, &[("i", V::U(i))], "p"),
                [
                    (byte / 4, Some(AtomicFunction::And), !(0xff << shift)),
                    (byte / 4, Some(AtomicFunction::InclusiveOr), 9 << shift),
                ],
                "p[{i}].b"
            );
        }
        // A `uchar` array: element i is byte i, every position in a word.
        let msl = "kernel void k(device uchar* b [[buffer(0)]], constant uint& i [[buffer(1)]]) \
                   { b[i] = 200; }\n";
        for i in 0..8 {
            let shift = 8 * (i % 4);
            assert_eq!(
                word_writes(msl, HalfMode::F16, &[("i", V::U(i))], "b"),
                [
                    (i / 4, Some(AtomicFunction::And), !(0xff << shift)),
                    (i / 4, Some(AtomicFunction::InclusiveOr), 200 << shift),
                ],
                "b[{i}]"
            );
        }
    }

    #[test]
    fn a_half_lane_of_a_packed_vector_is_two_bytes_of_a_word() {
        // p[i].h.z: h@2 in a 10-byte struct, lane z 4 bytes further; 1.5 in
        // binary16 is 0x3e00 (exponent 15, fraction 0x200).
        let msl = "struct P { uchar a; packed_half3 h; uchar b; };\n\
                   kernel void k(device P* p [[buffer(0)]], constant uint& i [[buffer(1)]]) \
                   { p[i].h.z = 1.5h; }\n";
        for half in [HalfMode::F16, HalfMode::F32] {
            for i in 0..8 {
                let byte = 10 * i + 6;
                let shift = 8 * (byte % 4);
                assert_eq!(
                    word_writes(msl, half, &[("i", V::U(i))], "p"),
                    [
                        (byte / 4, Some(AtomicFunction::And), !(0xffff << shift)),
                        (byte / 4, Some(AtomicFunction::InclusiveOr), 0x3e00 << shift),
                    ],
                    "p[{i}].h.z with {half:?}"
                );
            }
        }
    }

    #[test]
    fn a_float_lane_of_a_packed_vector_is_one_whole_word() {
        // struct Q { char c; packed_float3 v; }: c@0, v@4 (4-aligned), size 16;
        // q[i].v.z is at 16 i + 12.
        let msl = "struct Q { char c; packed_float3 v; };\n\
                   kernel void k(device Q* q [[buffer(0)]], constant uint& i [[buffer(1)]]) \
                   { q[i].v.z = 2.5f; }\n";
        for i in 0..8 {
            assert_eq!(
                word_writes(msl, HalfMode::F16, &[("i", V::U(i))], "q"),
                [((16 * i + 12) / 4, None, 2.5f32.to_bits())],
                "q[{i}].v.z"
            );
        }
    }

    #[test]
    fn half_as_f32_stores_the_binary16_bits_metal_stores() {
        // `device half*` with `half` held in f32: element i is bytes 2 i and
        // 2 i + 1, the value IEEE binary16 (rounded to nearest even; overflow
        // to infinity, 0x7c00).
        let msl = "kernel void k(device half* h [[buffer(0)]], constant uint& i [[buffer(1)]], \
                   constant float& x [[buffer(2)]]) { h[i] = half(x); }\n";
        let cases: &[(f32, u32)] = &[
            (1.0, 0x3c00),
            (-2.0, 0xc000),
            (0.333_333_34, 0x3555),
            (65504.0, 0x7bff),
            (1.0e5, 0x7c00),
            (-1.0e5, 0xfc00),
            (f32::INFINITY, 0x7c00),
            (5.960_464_5e-8, 0x0001),
            (-0.0, 0x8000),
        ];
        for &(x, bits) in cases {
            for i in 0..4 {
                let shift = 16 * (i % 2);
                assert_eq!(
                    word_writes(msl, HalfMode::F32, &[("i", V::U(i)), ("x", V::F(x))], "h"),
                    [
                        (i / 2, Some(AtomicFunction::And), !(0xffff << shift)),
                        (i / 2, Some(AtomicFunction::InclusiveOr), bits << shift),
                    ],
                    "h[{i}] = {x:e}"
                );
            }
        }
        // NaN: all-ones exponent and a non-zero fraction.
        let writes = word_writes(
            msl,
            HalfMode::F32,
            &[("i", V::U(0)), ("x", V::F(f32::NAN))],
            "h",
        );
        let nan = writes[1].2;
        assert!(nan & 0x7c00 == 0x7c00 && nan & 0x03ff != 0, "{nan:#06x}");
    }
}
