//! Stage-in attribute formats (`MTLAttributeFormat`) decoded from buffer
//! words, for kernels' `[[stage_in]]` (`entry/kernel_stage_in.rs`).
//!
//! Metal's rule: the fixed-function fetch reads each attribute in its
//! format and converts it (MSL §7.7, "Conversion rules for normalized
//! integer pixel data types", and Metal's vertex-format rules):
//! - `*Normalized` unsigned: `c / (2^n - 1)`; signed: `max(c / (2^(n-1) - 1), -1)`;
//! - `half*`: the binary16 value; `float*`, integers: the value;
//! - `int/uint1010102Normalized`: three 10-bit fields and a 2-bit alpha
//!   from the least significant bits up, each normalized as above;
//! - `uchar4Normalized_bgra`: bytes blue, green, red, alpha, given as
//!   (red, green, blue, alpha);
//! - `floatRG11B10`: unsigned floats of 6+5 and 5+5 mantissa+exponent
//!   bits; `floatRGB9E5`: 9-bit mantissas sharing a 5-bit exponent;
//! - a member with more components than the format gets (0, 0, 0, 1)'s.
//!
//! WGSL's rule: the buffer is an `array<u32>`; nothing converts for us.
//!
//! The mapping: each component is extracted from its word (two words when
//! it straddles them, which a tightly packed default can make) with
//! `extractBits` (sign-extending for signed formats), then converted with
//! WGSL's `unpack4x8unorm`/`unpack2x16snorm`/`unpack2x16float`..., whose
//! definitions are Metal's formulas, or by the formula itself.

use crate::lower::ctx::function::FnCtx;
use crate::lower::stdlib::simd::bin;
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::stage_in::{AttributeFormat, FormatKind, FormatValue};
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, MathFunction as Mf};

/// Where one element's bytes start in a buffer of words: the index of the
/// word holding its first byte, and that byte's place in the word (known
/// when the WGSL is written: strides are multiples of 4).
pub(in crate::lower) struct ElementStart {
    pub(in crate::lower) global: Handle<naga::GlobalVariable>,
    pub(in crate::lower) word: Handle<Expression>,
    pub(in crate::lower) byte: u32,
}

impl Lowerer<'_, '_> {
    /// The attribute of `format` at `start`, as the components Metal's fetch
    /// gives (`f32`, `i32` or `u32` each, as [`FormatValue`] says).
    pub(in crate::lower) fn decode_attribute(
        &mut self,
        fx: &mut FnCtx,
        start: &ElementStart,
        format: AttributeFormat,
        span: Span,
    ) -> Vec<Handle<Expression>> {
        use FormatKind as K;
        let n = u32::from(format.components);
        let each = |this: &mut Self, fx: &mut FnCtx, bits: u32, signed: bool| {
            (0..n)
                .map(|i| this.attribute_bits(fx, start, i * bits, bits, signed, span))
                .collect::<Vec<_>>()
        };
        // Per-component formats through WGSL's unpack functions.
        let unpack = match format.kind {
            K::Half => Some((16, Mf::Unpack2x16float)),
            K::UCharNormalized => Some((8, Mf::Unpack4x8unorm)),
            K::CharNormalized => Some((8, Mf::Unpack4x8snorm)),
            K::UShortNormalized => Some((16, Mf::Unpack2x16unorm)),
            K::ShortNormalized => Some((16, Mf::Unpack2x16snorm)),
            _ => None,
        };
        if let Some((bits, fun)) = unpack {
            let fields = each(self, fx, bits, false);
            return unpacked(fx, fields, fun, span);
        }
        match format.kind {
            K::UChar | K::UShort | K::UInt => {
                let bits = format.kind.component_bits().unwrap_or(32);
                each(self, fx, bits, false)
            }
            K::Char | K::Short | K::Int => {
                let bits = format.kind.component_bits().unwrap_or(32);
                each(self, fx, bits, true)
            }
            K::Float => each(self, fx, 32, false)
                .into_iter()
                .map(|w| bitcast(fx, w, naga::ScalarKind::Float, span))
                .collect(),
            K::UChar4NormalizedBgra => {
                let bytes = each(self, fx, 8, false);
                let rgba = [bytes[2], bytes[1], bytes[0], bytes[3]];
                unpacked(fx, rgba.to_vec(), Mf::Unpack4x8unorm, span)
            }
            K::Half
            | K::UCharNormalized
            | K::CharNormalized
            | K::UShortNormalized
            | K::ShortNormalized => unreachable!("unpacked above"),
            K::UInt1010102Normalized
            | K::Int1010102Normalized
            | K::FloatRG11B10
            | K::FloatRGB9E5 => self.decode_packed(fx, start, format.kind, span),
        }
    }

    /// The formats of several fields packed in one word.
    fn decode_packed(
        &mut self,
        fx: &mut FnCtx,
        start: &ElementStart,
        kind: FormatKind,
        span: Span,
    ) -> Vec<Handle<Expression>> {
        use FormatKind as K;
        match kind {
            K::UInt1010102Normalized | K::Int1010102Normalized => {
                let signed = kind == K::Int1010102Normalized;
                [(0, 10), (10, 10), (20, 10), (30, 2)]
                    .into_iter()
                    .map(|(at, bits)| {
                        let c = self.attribute_bits(fx, start, at, bits, signed, span);
                        normalized(fx, c, bits, signed, span)
                    })
                    .collect()
            }
            K::FloatRG11B10 => [(0, 11), (11, 11), (22, 10)]
                .into_iter()
                .map(|(at, bits)| {
                    let c = self.attribute_bits(fx, start, at, bits, false, span);
                    // The same exponent bias and width as binary16: the
                    // mantissa moves up to binary16's 10 bits.
                    let shift = u32_lit(fx, 10 - (bits - 5), span);
                    let half = bin(fx, Bo::ShiftLeft, c, shift, span);
                    unpacked(fx, vec![half], Mf::Unpack2x16float, span)[0]
                })
                .collect(),
            _ => {
                // floatRGB9E5: mantissa × 2^(exponent − 15 − 9).
                let e = self.attribute_bits(fx, start, 27, 5, false, span);
                let e = convert(fx, e, naga::ScalarKind::Sint, span);
                let bias = fx.add(Expression::Literal(naga::Literal::I32(24)), span);
                let e = bin(fx, Bo::Subtract, e, bias, span);
                [0, 9, 18]
                    .into_iter()
                    .map(|at| {
                        let m = self.attribute_bits(fx, start, at, 9, false, span);
                        let m = convert(fx, m, naga::ScalarKind::Float, span);
                        math(fx, Mf::Ldexp, m, Some(e), span)
                    })
                    .collect()
            }
        }
    }

    /// `bits` bits of the element at `start`, `at` bits after its first
    /// byte: a `u32`, or an `i32` sign-extended from the field when `signed`.
    fn attribute_bits(
        &mut self,
        fx: &mut FnCtx,
        start: &ElementStart,
        at: u32,
        bits: u32,
        signed: bool,
        span: Span,
    ) -> Handle<Expression> {
        let first = start.byte * 8 + at;
        let (word, shift) = (first / 32, first % 32);
        let mut value = self.element_word(fx, start, word, span);
        let mut shift = shift;
        if shift + bits > 32 {
            // Straddles two words: the high bits come from the next one.
            let next = self.element_word(fx, start, word + 1, span);
            let down = u32_lit(fx, shift, span);
            let up = u32_lit(fx, 32 - shift, span);
            let low = bin(fx, Bo::ShiftRight, value, down, span);
            let high = bin(fx, Bo::ShiftLeft, next, up, span);
            value = bin(fx, Bo::InclusiveOr, low, high, span);
            shift = 0;
        }
        if signed {
            value = bitcast(fx, value, naga::ScalarKind::Sint, span);
        }
        if bits == 32 {
            return value;
        }
        let offset = u32_lit(fx, shift, span);
        let count = u32_lit(fx, bits, span);
        fx.add(
            Expression::Math {
                fun: Mf::ExtractBits,
                arg: value,
                arg1: Some(offset),
                arg2: Some(count),
                arg3: None,
            },
            span,
        )
    }

    /// Word `k` of the element at `start`.
    fn element_word(
        &mut self,
        fx: &mut FnCtx,
        start: &ElementStart,
        k: u32,
        span: Span,
    ) -> Handle<Expression> {
        let index = match k {
            0 => start.word,
            k => {
                let k = u32_lit(fx, k, span);
                bin(fx, Bo::Add, start.word, k, span)
            }
        };
        let base = fx.add(Expression::GlobalVariable(start.global), span);
        let pointer = fx.add(Expression::Access { base, index }, span);
        fx.add(Expression::Load { pointer }, span)
    }

    /// The member value of type `ty` made from a format's `components`:
    /// extra components dropped, missing ones (0, 0, 0, 1)'s, then converted
    /// to the member's scalar type.
    pub(in crate::lower) fn attribute_value(
        &mut self,
        fx: &mut FnCtx,
        components: &[Handle<Expression>],
        value: FormatValue,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let scalar = value_scalar(value);
        let n = ty.vector_size().unwrap_or(1);
        let mut parts = Vec::with_capacity(usize::from(n));
        for i in 0..usize::from(n) {
            let part = match components.get(i) {
                Some(&c) => c,
                None => {
                    let one = i == 3;
                    let lit = match value {
                        FormatValue::Float => naga::Literal::F32(if one { 1.0 } else { 0.0 }),
                        FormatValue::Signed => naga::Literal::I32(i32::from(one)),
                        FormatValue::Unsigned => naga::Literal::U32(u32::from(one)),
                    };
                    fx.add(Expression::Literal(lit), span)
                }
            };
            parts.push(part);
        }
        let (from, h) = match ty {
            Type::Vector(_, n) => {
                let from = Type::Vector(scalar, *n);
                let th = self.naga_type(&from, span)?;
                let h = fx.add(
                    Expression::Compose {
                        ty: th,
                        components: parts,
                    },
                    span,
                );
                (from, h)
            }
            _ => (Type::Scalar(scalar), parts[0]),
        };
        self.convert(fx, h, &from, ty, true, span)
    }
}

/// The MSL scalar a format's components arrive as.
pub(in crate::lower) fn value_scalar(value: FormatValue) -> Scalar {
    match value {
        FormatValue::Float => Scalar::Float,
        FormatValue::Signed => Scalar::Int,
        FormatValue::Unsigned => Scalar::UInt,
    }
}

/// The format that reads a member of MSL type `ty` as it is, if one does.
pub(in crate::lower) fn own_format(ty: &Type) -> Option<AttributeFormat> {
    let (s, n) = match ty {
        Type::Scalar(s) => (*s, 1),
        Type::Vector(s, n) => (*s, *n),
        _ => return None,
    };
    let kind = match s {
        Scalar::Float => FormatKind::Float,
        Scalar::Half => FormatKind::Half,
        Scalar::Int => FormatKind::Int,
        Scalar::UInt => FormatKind::UInt,
        Scalar::Short => FormatKind::Short,
        Scalar::UShort => FormatKind::UShort,
        Scalar::Char => FormatKind::Char,
        Scalar::UChar => FormatKind::UChar,
        _ => return None,
    };
    Some(AttributeFormat {
        kind,
        components: n,
    })
}

/// Each of `fields` through WGSL's `unpack` function `fun`, component 0.
fn unpacked(
    fx: &mut FnCtx,
    fields: Vec<Handle<Expression>>,
    fun: Mf,
    span: Span,
) -> Vec<Handle<Expression>> {
    fields
        .into_iter()
        .map(|f| {
            let v = math(fx, fun, f, None, span);
            fx.add(Expression::AccessIndex { base: v, index: 0 }, span)
        })
        .collect()
}

/// A `bits`-bit normalized integer `c` as `f32`: `c / (2^bits - 1)`, or
/// for `signed`, `max(c / (2^(bits-1) - 1), -1)`.
fn normalized(
    fx: &mut FnCtx,
    c: Handle<Expression>,
    bits: u32,
    signed: bool,
    span: Span,
) -> Handle<Expression> {
    let f = convert(fx, c, naga::ScalarKind::Float, span);
    let max = match signed {
        true => (1u32 << (bits - 1)) - 1,
        false => (1u32 << bits) - 1,
    };
    let max = fx.add(Expression::Literal(naga::Literal::F32(max as f32)), span);
    let q = bin(fx, Bo::Divide, f, max, span);
    if !signed {
        return q;
    }
    let minus_one = fx.add(Expression::Literal(naga::Literal::F32(-1.0)), span);
    math(fx, Mf::Max, q, Some(minus_one), span)
}

fn u32_lit(fx: &mut FnCtx, v: u32, span: Span) -> Handle<Expression> {
    fx.add(Expression::Literal(naga::Literal::U32(v)), span)
}

fn bitcast(
    fx: &mut FnCtx,
    expr: Handle<Expression>,
    kind: naga::ScalarKind,
    span: Span,
) -> Handle<Expression> {
    crate::lower::stdlib::math::Ir { fx, span }.bitcast(expr, kind)
}

fn convert(
    fx: &mut FnCtx,
    expr: Handle<Expression>,
    kind: naga::ScalarKind,
    span: Span,
) -> Handle<Expression> {
    fx.add(
        Expression::As {
            expr,
            kind,
            convert: Some(4),
        },
        span,
    )
}

fn math(
    fx: &mut FnCtx,
    fun: Mf,
    arg: Handle<Expression>,
    arg1: Option<Handle<Expression>>,
    span: Span,
) -> Handle<Expression> {
    fx.add(
        Expression::Math {
            fun,
            arg,
            arg1,
            arg2: None,
            arg3: None,
        },
        span,
    )
}
