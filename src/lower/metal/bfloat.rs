//! `bfloat` (Metal 3.1; MSL §2.1 Table 2.1): a 16-bit floating-point type
//! with `float`'s sign and 8 exponent bits and 7 fraction bits, so its bit
//! pattern is the upper half of a `float`'s. WGSL has no such type.
//!
//! Mapping: a `bfloat` value is a WGSL `f32` that always holds a value of
//! the bfloat format. Metal produces a `bfloat` wherever an expression's
//! type is `bfloat`: an arithmetic operator on `bfloat` operands has type
//! `bfloat` (the usual arithmetic conversions of MSL §2.22 and §3.1 keep the
//! operands' type), so each operation is done in `f32` and its result
//! rounded to `bfloat`, as are conversions to `bfloat` (casts from `float`
//! and `half`, implicit or explicit ones from integers: MSL §2.1, "bfloat
//! is an extended floating point type that only allows implicit conversion
//! to a type of greater floating point rank", enforced in
//! `sema/conversions.rs`) and the results of library functions of
//! `bfloat`, computed in `f32` and rounded once. `a * b + c` is thus two
//! roundings, one per operator, unlike `fma(a, b, c)`, which is one. For
//! `+ - * /` (and `sqrt`) of `bfloat` operands the `f32` result rounded to
//! `bfloat` is the correctly rounded `bfloat` result: `f32`'s 24
//! significant bits are at least 2·8 + 2, so the first rounding never makes
//! a tie or crosses one for the second. Integers with more than 24
//! significant bits are rounded once, through an `f32` rounded to odd
//! ([`integer_to_f32_odd`]). Rounding is to nearest, ties to even;
//! magnitudes past the largest finite `bfloat` become infinities, NaNs
//! stay (quiet) NaNs, and subnormals are kept (bfloat's subnormals are
//! `float`'s with a shorter fraction) where the adapter's `f32` arithmetic
//! keeps them (WGSL lets it flush them; conversions, done on the bits,
//! always keep them).
//!
//! In buffers a `bfloat` is 2 bytes (size 2, alignment 2), in word views
//! (`word_views.rs`): a load widens the 16-bit field to the upper half of an
//! `f32`, a store keeps the upper half of the (already rounded) value, so
//! both are exact. `as_type` between `bfloat` and 16-bit integers is the
//! same bit move. In `threadgroup` memory, which no host sees, a `bfloat`
//! is an `f32` (4 bytes, the same values).

use crate::lower::ctx::function::FnCtx;
use crate::lower::stdlib::math::Ir;
use crate::lower::Lowerer;
use crate::source_map::Span;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, ScalarKind};

/// `f32` bits below a `bfloat`'s: the ones rounding drops.
const DROPPED_BITS: u32 = 16;
/// Magnitude bits of an `f32` above which it is a NaN.
const F32_INFINITY: u32 = 0x7f80_0000;
/// The quiet bit of a NaN, kept in the upper half.
const F32_QUIET_BIT: u32 = 0x0040_0000;

impl Lowerer<'_, '_> {
    /// Rounds a value of MSL type `ty` to the precision of its element type
    /// where that type is held in wider values: `half` when emulated
    /// (`half_as_f32.rs`) and `bfloat`; otherwise returns it unchanged.
    pub(in crate::lower) fn round_float_value(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Handle<Expression> {
        if ty.element_scalar() != Some(Scalar::BFloat) {
            return self.round_half_value(fx, h, ty, span);
        }
        match *ty {
            Type::Scalar(_) => round_to_bfloat(fx, h, 1, span),
            Type::Vector(_, n) | Type::Packed(_, n) => round_to_bfloat(fx, h, n, span),
            _ => h,
        }
    }
}

/// Rounds an `f32` scalar or `n`-vector to the nearest `bfloat` value (ties
/// to even), as an `f32`.
///
/// On the bits `u`: adding `0x7fff` plus the lowest kept bit, then clearing
/// the 16 dropped bits, rounds the magnitude to nearest-even; a carry into
/// the exponent is correct (it is the next binade, or infinity past the
/// largest finite value), and infinities are unchanged. NaNs, whose carry
/// could reach the sign or make an infinity, instead keep their upper bits
/// and are made quiet.
pub(in crate::lower) fn round_to_bfloat(
    fx: &mut FnCtx,
    x: Handle<Expression>,
    n: u8,
    span: Span,
) -> Handle<Expression> {
    if let Expression::Literal(Literal::F32(v)) = *fx.expr(x) {
        let rounded = half::bf16::from_f32(v);
        if rounded.is_finite() {
            return fx.add(Expression::Literal(Literal::F32(rounded.to_f32())), span);
        }
    }
    let mut ir = Ir { fx, span };
    let bits = ir.bitcast(x, ScalarKind::Uint);
    let shift = ir.u32(DROPPED_BITS, n);
    let kept = ir.bin(Bo::ShiftRight, bits, shift);
    let one = ir.u32(1, n);
    let lowest_kept = ir.bin(Bo::And, kept, one);
    let below_half = ir.u32((1 << (DROPPED_BITS - 1)) - 1, n);
    let bias = ir.bin(Bo::Add, below_half, lowest_kept);
    let biased = ir.bin(Bo::Add, bits, bias);
    let upper = ir.u32(!0 << DROPPED_BITS, n);
    let rounded = ir.bin(Bo::And, biased, upper);
    let magnitude_mask = ir.u32(0x7fff_ffff, n);
    let magnitude = ir.bin(Bo::And, bits, magnitude_mask);
    let infinity = ir.u32(F32_INFINITY, n);
    let is_nan = ir.bin(Bo::Greater, magnitude, infinity);
    let quiet = ir.u32(F32_QUIET_BIT, n);
    let quieted = ir.bin(Bo::InclusiveOr, bits, quiet);
    let nan = ir.bin(Bo::And, quieted, upper);
    let result = ir.select(is_nan, nan, rounded);
    ir.bitcast(result, ScalarKind::Float)
}

/// A 32-bit integer scalar or `n`-vector (`signed`: `i32`, else `u32`) as
/// the `f32` nearest to it *rounded to odd*: when the integer has more than
/// 24 significant bits the dropped ones are folded into the lowest kept
/// bit. Rounding that `f32` to `bfloat` (8 significant bits) is then the
/// single, correctly rounded conversion of the integer, where a rounding
/// to nearest `f32` first could make a tie that was not one (or, as WGSL
/// lets a conversion pick either neighbour, any result).
pub(in crate::lower) fn integer_to_f32_odd(
    fx: &mut FnCtx,
    x: Handle<Expression>,
    signed: bool,
    n: u8,
    span: Span,
) -> Handle<Expression> {
    let mut ir = Ir { fx, span };
    let (magnitude, negative) = if signed {
        let zero = ir.lit(Literal::I32(0), n);
        // |x| as u32: `0 - x` wraps, so INT_MIN gives 2^31.
        let bits = ir.bitcast(x, ScalarKind::Uint);
        let none = ir.u32(0, n);
        let negated = ir.bin(Bo::Subtract, none, bits);
        let negative = ir.bin(Bo::Less, x, zero);
        (ir.select(negative, negated, bits), Some(negative))
    } else {
        (x, None)
    };
    let leading = ir.math(naga::MathFunction::CountLeadingZeros, &[magnitude]);
    let width = ir.u32(32, n);
    let length = ir.bin(Bo::Subtract, width, leading);
    let kept_bits = ir.u32(24, n);
    let longest = ir.math(naga::MathFunction::Max, &[length, kept_bits]);
    let dropped = ir.bin(Bo::Subtract, longest, kept_bits);
    let one = ir.u32(1, n);
    let unit = ir.bin(Bo::ShiftLeft, one, dropped);
    let mask = ir.bin(Bo::Subtract, unit, one);
    let kept = ir.bin(Bo::ShiftRight, magnitude, dropped);
    let rest = ir.bin(Bo::And, magnitude, mask);
    let none = ir.u32(0, n);
    let inexact = ir.bin(Bo::NotEqual, rest, none);
    let sticky = ir.select(inexact, one, none);
    let odd = ir.bin(Bo::InclusiveOr, kept, sticky);
    // Both exact: `odd` has at most 24 bits, `unit` is at most 2^8.
    let odd = ir.cast(odd, naga::Scalar::F32);
    let scale = ir.cast(unit, naga::Scalar::F32);
    let value = ir.bin(Bo::Multiply, odd, scale);
    match negative {
        Some(negative) => {
            let negated = ir.neg(value);
            ir.select(negative, negated, value)
        }
        None => value,
    }
}

/// The 16 bits of a `bfloat` value held in an `f32` (in the low half of a
/// `u32` scalar or vector).
pub(in crate::lower) fn bfloat_bits(
    fx: &mut FnCtx,
    value: Handle<Expression>,
    n: u8,
    span: Span,
) -> Handle<Expression> {
    let mut ir = Ir { fx, span };
    let bits = ir.bitcast(value, ScalarKind::Uint);
    let shift = ir.u32(DROPPED_BITS, n);
    ir.bin(Bo::ShiftRight, bits, shift)
}

/// The `f32` value of the `bfloat` whose bits are the low 16 of `bits`
/// (a `u32` scalar or vector, upper half zero).
pub(in crate::lower) fn bfloat_from_bits(
    fx: &mut FnCtx,
    bits: Handle<Expression>,
    n: u8,
    span: Span,
) -> Handle<Expression> {
    let mut ir = Ir { fx, span };
    let shift = ir.u32(DROPPED_BITS, n);
    let placed = ir.bin(Bo::ShiftLeft, bits, shift);
    ir.bitcast(placed, ScalarKind::Float)
}

#[cfg(test)]
mod tests {
    //! The rounding against the `half` crate's `bf16::from_f32` (round to
    //! nearest, ties to even, NaN made quiet) and the format's definition.

    use super::round_to_bfloat;
    use crate::lower::metal::ir_eval::UnaryIr;
    use crate::source_map::Span;
    use half::bf16;

    struct Rounding(UnaryIr);

    impl Rounding {
        fn new() -> Self {
            Rounding(UnaryIr::new(|fx, x| {
                round_to_bfloat(fx, x, 1, Span::default())
            }))
        }

        /// The bits the IR computes for `x`.
        fn of(&self, x: f32) -> u32 {
            self.0.of(x).to_bits()
        }

        fn check(&self, x: f32, want: u32) {
            let got = self.of(x);
            assert_eq!(
                got,
                want,
                "{x:e} ({:#010x}) gave {got:#010x}, want {want:#010x}",
                x.to_bits()
            );
        }
    }

    fn model(x: f32) -> u32 {
        u32::from(bf16::from_f32(x).to_bits()) << 16
    }

    #[test]
    fn every_bfloat_value_is_kept() {
        let r = Rounding::new();
        for bits in 0..=u16::MAX {
            let v = f32::from_bits(u32::from(bits) << 16);
            let want = if v.is_nan() {
                (u32::from(bits) << 16) | 0x0040_0000
            } else {
                v.to_bits()
            };
            r.check(v, want);
        }
    }

    #[test]
    fn ties_go_to_the_even_neighbour_and_overflow_to_infinity() {
        let r = Rounding::new();
        // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: even is 1.
        r.check(1.0 + 2f32.powi(-8), 0x3f80_0000);
        // 1 + 3·2^-8 lies between 1 + 2^-7 (odd) and 1 + 2^-6: even is above.
        r.check(1.0 + 3.0 * 2f32.powi(-8), 0x3f82_0000);
        r.check(f32::MAX, 0x7f80_0000);
        r.check(f32::MIN, 0xff80_0000);
        r.check(f32::from_bits(0x7f7f_7fff), 0x7f7f_0000);
        r.check(f32::from_bits(0x7f7f_8000), 0x7f80_0000);
        r.check(f32::INFINITY, 0x7f80_0000);
        r.check(f32::from_bits(1), 0);
        r.check(f32::from_bits(0x8000_8000), 0x8000_0000);
        r.check(f32::from_bits(0x0000_8001), 0x0001_0000);
        r.check(f32::from_bits(0x7f80_0001), 0x7fc0_0000);
        r.check(f32::from_bits(0xffff_ffff), 0xffff_0000);
    }

    #[test]
    fn arbitrary_floats_round_as_the_model_does() {
        let r = Rounding::new();
        let mut state = 0x9e37_79b9_u32;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let x = f32::from_bits(state);
            r.check(x, model(x));
        }
    }
}
