//! `as_type<T>(x)` (MSL §2.21): reinterpretation between scalar and vector
//! types of the same Metal size. naga's bitcast keeps width and shape, so
//! other cases go through 32-bit words: the source's lanes are packed into
//! words, and the target's lanes extracted from them (3-component vectors
//! count 4 lanes, as their Metal size does).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, MathFunction as Mf, ScalarKind};

impl Lowerer<'_, '_> {
    /// `as_type<to>(h)` where `h` has type `from`.
    pub(in crate::lower) fn as_type(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        from: &Type,
        to: &Type,
        span: Span,
    ) -> Result<Value> {
        let structs = &self.program.structs;
        let (fs, ts) = (
            crate::layout::metal(from, structs).size,
            crate::layout::metal(to, structs).size,
        );
        if fs != ts || !from.is_scalar_or_vector() || !to.is_scalar_or_vector() {
            return Err(Error::coded(
                Code::InvalidConversion,
                span,
                format!(
                "`as_type` needs types of the same size: `{}` is {fs} bytes, `{}` is {ts} bytes",
                self.program.display(from),
                self.program.display(to)
            ),
            ));
        }
        let (sf, st) = (from.element_scalar().unwrap(), to.element_scalar().unwrap());
        if sf == Scalar::Bool || st == Scalar::Bool {
            return Err(Error::coded(
                Code::InvalidConversion,
                span,
                "`as_type` cannot reinterpret `bool` values",
            ));
        }
        if sf.size() == 4 && st.size() == 4 && from.vector_size() == to.vector_size() {
            let kind = crate::lower::types::scalar(st).kind;
            return Ok(Value::Rv(
                fx.add(
                    Expression::As {
                        expr: h,
                        kind,
                        convert: None,
                    },
                    span,
                ),
                to.clone(),
            ));
        }
        // A 64-bit scalar is two words, low first (`as_type<uint2>(ulong)`,
        // `as_type<ulong>(float2)`): SPIRV-Cross reads `simd_vote`s this way.
        if let Some(v) = self.as_type_64(fx, h, from, to, span)? {
            return Ok(Value::Rv(v, to.clone()));
        }
        // The 32-bit words below cannot hold a 64-bit lane (`as_type<ulong2>(..)`).
        if sf.size() > 4 || st.size() > 4 {
            self.check_64_bit(span)?;
            return Err(Error::coded(
                Code::Unsupported,
                span,
                "`as_type` to or from 64-bit types other than between `long` and `ulong` is not supported yet",
            ));
        }
        let words = self.words_of(fx, h, from, span);
        let v = self.value_from_words(fx, &words, to, span)?;
        Ok(Value::Rv(v, to.clone()))
    }

    /// `as_type` between a 64-bit scalar and 8 bytes of 32-bit or narrower
    /// lanes (or another 64-bit scalar); `None` for other types.
    fn as_type_64(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        from: &Type,
        to: &Type,
        span: Span,
    ) -> Result<Option<Handle<Expression>>> {
        let wide = |t: &Type| matches!(t, Type::Scalar(Scalar::Long | Scalar::ULong));
        let narrow = |t: &Type| t.element_scalar().is_some_and(|s| s.size() <= 4);
        let kind = |t: &Type| crate::lower::types::scalar(t.element_scalar().unwrap()).kind;
        let cast = |fx: &mut FnCtx, expr, kind, convert| {
            fx.add(
                Expression::As {
                    expr,
                    kind,
                    convert,
                },
                span,
            )
        };
        let bin =
            |fx: &mut FnCtx, op, left, right| fx.add(Expression::Binary { op, left, right }, span);
        if !(wide(from) || wide(to)) || !(wide(from) || narrow(from)) || !(wide(to) || narrow(to)) {
            return Ok(None);
        }
        self.check_64_bit(span)?;
        if wide(from) && wide(to) {
            return Ok(Some(cast(fx, h, kind(to), None)));
        }
        // Held in 32 bits on WebGPU (metal/wide_integers.rs).
        if self.narrows_wide_integers() {
            if let Type::Scalar(s) = *from {
                let words = self.narrowed_words(fx, h, s, span);
                return self.value_from_words(fx, &words, to, span).map(Some);
            }
            let words = self.words_of(fx, h, from, span);
            let (Some(&low), Type::Scalar(s)) = (words.first(), to) else {
                return Ok(None);
            };
            return Ok(Some(self.narrowed_from_words(fx, low, *s, span)));
        }
        let shift = Self::u32_const(fx, 32, span);
        if wide(from) {
            let bits = cast(fx, h, ScalarKind::Uint, None);
            let low = cast(fx, bits, ScalarKind::Uint, Some(4));
            let top = bin(fx, Bo::ShiftRight, bits, shift);
            let high = cast(fx, top, ScalarKind::Uint, Some(4));
            return self.value_from_words(fx, &[low, high], to, span).map(Some);
        }
        let words = self.words_of(fx, h, from, span);
        let [low, high] = words[..] else {
            return Ok(None);
        };
        let low = cast(fx, low, ScalarKind::Uint, Some(8));
        let high = cast(fx, high, ScalarKind::Uint, Some(8));
        let top = bin(fx, Bo::ShiftLeft, high, shift);
        let bits = bin(fx, Bo::InclusiveOr, low, top);
        Ok(Some(cast(fx, bits, kind(to), None)))
    }

    fn u32_const(fx: &mut FnCtx, v: u32, span: Span) -> Handle<Expression> {
        fx.add(Expression::Literal(Literal::U32(v)), span)
    }

    /// The lanes of `h` (the padding lane of a 3-vector is 0).
    fn lanes(
        fx: &mut FnCtx,
        h: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Vec<Option<Handle<Expression>>> {
        match ty.vector_size() {
            Some(1) | None => vec![Some(h)],
            Some(n) => {
                let mut out: Vec<_> = (0..u32::from(n))
                    .map(|k| Some(fx.add(Expression::AccessIndex { base: h, index: k }, span)))
                    .collect();
                if n == 3 {
                    out.push(None);
                }
                out
            }
        }
    }

    /// The bits of one lane in the low bits of a `u32`.
    fn lane_bits(
        &mut self,
        fx: &mut FnCtx,
        lane: Handle<Expression>,
        s: Scalar,
        span: Span,
    ) -> Handle<Expression> {
        let bits = match s {
            Scalar::UInt | Scalar::UChar | Scalar::UShort => return lane,
            Scalar::BFloat => return crate::lower::metal::bfloat::bfloat_bits(fx, lane, 1, span),
            Scalar::Half => {
                let wide = fx.add(
                    Expression::As {
                        expr: lane,
                        kind: ScalarKind::Float,
                        convert: Some(4),
                    },
                    span,
                );
                let zero = fx.add(Expression::Literal(Literal::F32(0.0)), span);
                let pair_ty = self
                    .naga_type(&Type::Vector(Scalar::Float, 2), span)
                    .expect("float2");
                let pair = fx.add(
                    Expression::Compose {
                        ty: pair_ty,
                        components: vec![wide, zero],
                    },
                    span,
                );
                return fx.add(
                    Expression::Math {
                        fun: Mf::Pack2x16float,
                        arg: pair,
                        arg1: None,
                        arg2: None,
                        arg3: None,
                    },
                    span,
                );
            }
            _ => fx.add(
                Expression::As {
                    expr: lane,
                    kind: ScalarKind::Uint,
                    convert: None,
                },
                span,
            ),
        };
        if s.size() == 4 {
            return bits;
        }
        let mask = Self::u32_const(fx, (1u32 << (s.size() * 8)) - 1, span);
        fx.add(
            Expression::Binary {
                op: Bo::And,
                left: bits,
                right: mask,
            },
            span,
        )
    }

    /// Packs the lanes of `h` into 32-bit words (fewer than 4 bytes: one word).
    fn words_of(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Vec<Handle<Expression>> {
        let s = ty.element_scalar().unwrap();
        let per_word = (4 / s.size()) as usize;
        let lanes = Self::lanes(fx, h, ty, span);
        let mut words = Vec::new();
        for chunk in lanes.chunks(per_word) {
            let mut word: Option<Handle<Expression>> = None;
            for (k, lane) in chunk.iter().enumerate() {
                let Some(lane) = lane else { continue };
                let mut bits = self.lane_bits(fx, *lane, s, span);
                if k > 0 {
                    let shift = Self::u32_const(fx, k as u32 * s.size() * 8, span);
                    bits = fx.add(
                        Expression::Binary {
                            op: Bo::ShiftLeft,
                            left: bits,
                            right: shift,
                        },
                        span,
                    );
                }
                word = Some(match word {
                    None => bits,
                    Some(w) => fx.add(
                        Expression::Binary {
                            op: Bo::InclusiveOr,
                            left: w,
                            right: bits,
                        },
                        span,
                    ),
                });
            }
            words.push(word.unwrap_or_else(|| Self::u32_const(fx, 0, span)));
        }
        words
    }

    /// Builds a value of `ty` from words made by [`Lowerer::to_words`].
    fn value_from_words(
        &mut self,
        fx: &mut FnCtx,
        words: &[Handle<Expression>],
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let s = ty.element_scalar().unwrap();
        let n = ty.vector_size().unwrap_or(1);
        let bits = s.size() * 8;
        let mut lanes = Vec::new();
        for j in 0..u32::from(n) {
            let word = words[(j * bits / 32) as usize];
            let shift = (j * bits) % 32;
            lanes.push(self.lane_from_word(fx, word, shift, s, span));
        }
        if n == 1 {
            return Ok(lanes[0]);
        }
        let th = self.naga_type(ty, span)?;
        Ok(fx.add(
            Expression::Compose {
                ty: th,
                components: lanes,
            },
            span,
        ))
    }

    fn lane_from_word(
        &mut self,
        fx: &mut FnCtx,
        word: Handle<Expression>,
        shift: u32,
        s: Scalar,
        span: Span,
    ) -> Handle<Expression> {
        if s.size() == 4 {
            return match s {
                Scalar::UInt => word,
                Scalar::Int => fx.add(
                    Expression::As {
                        expr: word,
                        kind: ScalarKind::Sint,
                        convert: None,
                    },
                    span,
                ),
                _ => fx.add(
                    Expression::As {
                        expr: word,
                        kind: ScalarKind::Float,
                        convert: None,
                    },
                    span,
                ),
            };
        }
        let offset = Self::u32_const(fx, shift, span);
        let count = Self::u32_const(fx, s.size() * 8, span);
        let source = if s.is_signed_integer() {
            fx.add(
                Expression::As {
                    expr: word,
                    kind: ScalarKind::Sint,
                    convert: None,
                },
                span,
            )
        } else {
            word
        };
        let field = fx.add(
            Expression::Math {
                fun: Mf::ExtractBits,
                arg: source,
                arg1: Some(offset),
                arg2: Some(count),
                arg3: None,
            },
            span,
        );
        if s == Scalar::BFloat {
            return crate::lower::metal::bfloat::bfloat_from_bits(fx, field, 1, span);
        }
        if s != Scalar::Half {
            return field;
        }
        let pair = fx.add(
            Expression::Math {
                fun: Mf::Unpack2x16float,
                arg: field,
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
                kind: ScalarKind::Float,
                convert: Some(2),
            },
            span,
        )
    }
}
