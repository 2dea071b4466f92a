//! `half` without WebGPU's `shader-f16` feature ([`HalfMode::F32`]): `half`
//! values are WGSL `f32` values that always hold a value of the binary16
//! format, rounded to it wherever Metal produces a `half`: after arithmetic
//! whose MSL type is `half`, on conversions to `half`, and on the results of
//! library functions of `half` (computed in `f32`, then rounded once). In
//! buffers `half` keeps Metal's 2-byte layout through word views
//! (`bytes.rs`: `unpack2x16float`/`pack2x16float` of 16-bit fields), which
//! are exact for values that are already binary16 values.
//!
//! The rounding is done with `f32` arithmetic rather than WGSL's
//! `quantizeToF16`, which may flush binary16 subnormals to zero and is
//! indeterminate outside binary16's finite range: Metal keeps `half`
//! subnormals and turns overflow into infinity, and so does this rounding.

use crate::lower::ctx::function::FnCtx;
use crate::lower::stdlib::math::Ir;
use crate::lower::Lowerer;
use crate::source_map::Span;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, MathFunction as Mf, ScalarKind};

/// How MSL `half` is represented in the WGSL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HalfMode {
    /// WGSL `f16` (`enable f16;`: the `shader-f16` feature).
    #[default]
    F16,
    /// WGSL `f32`, rounded to half precision wherever Metal rounds; needs no
    /// feature, for adapters without `shader-f16` (most browsers' software
    /// adapters).
    F32,
}

/// The largest finite binary16 value.
const HALF_MAX: f32 = 65504.0;
/// Biased `f32` exponent of binary16's smallest normal, 2^-14: below it the
/// binary16 spacing stays 2^-24 (subnormals).
const MIN_NORMAL_EXPONENT: u32 = 127 - 14;
/// binary16 keeps 10 fraction bits.
const FRACTION_BITS: u32 = 10;

impl Lowerer<'_, '_> {
    /// True if `half` values are `f32` values rounded to half precision.
    pub(in crate::lower) fn emulates_half(&self) -> bool {
        self.settings.half_mode == HalfMode::F32
    }

    /// Rounds a value of MSL type `ty` to half precision when `ty` is made of
    /// `half` and `half` is emulated; otherwise returns it unchanged.
    /// Matrices are rounded column by column.
    pub(in crate::lower) fn round_half_value(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Handle<Expression> {
        if !self.emulates_half() || ty.element_scalar() != Some(Scalar::Half) {
            return h;
        }
        match *ty {
            Type::Scalar(_) => round_to_half(fx, h, 1, span),
            Type::Vector(_, n) | Type::Packed(_, n) => round_to_half(fx, h, n, span),
            Type::Matrix { columns, rows, .. } => {
                let Ok(th) = self.naga_type(ty, span) else {
                    return h;
                };
                let mut components = Vec::new();
                for index in 0..u32::from(columns) {
                    let column = fx.add(Expression::AccessIndex { base: h, index }, span);
                    components.push(round_to_half(fx, column, rows, span));
                }
                fx.add(Expression::Compose { ty: th, components }, span)
            }
            _ => h,
        }
    }
}

/// Rounds an `f32` scalar or `n`-vector to the nearest binary16 value (ties
/// to even), keeping subnormals; magnitudes that round beyond 65504 become
/// infinities of the same sign, NaN stays NaN.
///
/// With `E` the biased `f32` exponent of `x` (at least that of 2^-14), the
/// binary16 spacing near `x` is 2^(E-127-10): scaling by its inverse, rounding
/// to an integer and scaling back are each exact except the rounding.
pub(in crate::lower) fn round_to_half(
    fx: &mut FnCtx,
    x: Handle<Expression>,
    n: u8,
    span: Span,
) -> Handle<Expression> {
    // Expressions the WGSL writer inlines may make the rounding a constant
    // expression, which the consumer evaluates when the shader is created:
    // a literal is rounded here, and for the others (constants, overrides)
    // the infinity is left out, since a constant expression producing one
    // is a shader-creation error.
    let inlined = match *fx.expr(x) {
        Expression::Literal(Literal::F32(v)) if half::f16::from_f32(v).is_finite() => {
            let rounded = half::f16::from_f32(v).to_f32();
            return fx.add(Expression::Literal(Literal::F32(rounded)), span);
        }
        Expression::Literal(Literal::F16(_)) | Expression::ZeroValue(_) => return x,
        Expression::Literal(_) | Expression::Constant(_) | Expression::Override(_) => true,
        _ => false,
    };
    let mut ir = Ir { fx, span };
    let bits = ir.bitcast(x, ScalarKind::Uint);
    let shift = ir.u32(23, n);
    let shifted = ir.bin(Bo::ShiftRight, bits, shift);
    let exponent_mask = ir.u32(0xff, n);
    let exponent = ir.bin(Bo::And, shifted, exponent_mask);
    let floor = ir.u32(MIN_NORMAL_EXPONENT, n);
    let exponent = ir.math(Mf::Max, &[exponent, floor]);
    // 2^(127+10-E) and 2^(E-127-10) as f32 bit patterns: biased exponents
    // 264-E in [9, 151] and E-10 in [103, 245], so both are normal.
    let scale_base = ir.u32(2 * 127 + FRACTION_BITS, n);
    let scale_exponent = ir.bin(Bo::Subtract, scale_base, exponent);
    let scale_bits = ir.bin(Bo::ShiftLeft, scale_exponent, shift);
    let scale = ir.bitcast(scale_bits, ScalarKind::Float);
    let fraction_bits = ir.u32(FRACTION_BITS, n);
    let unscale_exponent = ir.bin(Bo::Subtract, exponent, fraction_bits);
    let unscale_bits = ir.bin(Bo::ShiftLeft, unscale_exponent, shift);
    let unscale = ir.bitcast(unscale_bits, ScalarKind::Float);
    let scaled = ir.bin(Bo::Multiply, x, scale);
    let rounded = ir.math(Mf::Round, &[scaled]);
    let result = ir.bin(Bo::Multiply, rounded, unscale);
    if inlined {
        return result;
    }
    // Overflow: anything that rounded past the largest finite half.
    let magnitude = ir.math(Mf::Abs, &[result]);
    let max = ir.lit(Literal::F32(HALF_MAX), n);
    let overflow = ir.bin(Bo::Greater, magnitude, max);
    let sign_mask = ir.u32(0x8000_0000, n);
    let sign = ir.bin(Bo::And, bits, sign_mask);
    let infinity_bits = ir.u32(0x7f80_0000, n);
    let signed_infinity = ir.bin(Bo::InclusiveOr, sign, infinity_bits);
    let infinity = ir.bitcast(signed_infinity, ScalarKind::Float);
    ir.select(overflow, infinity, result)
}

#[cfg(test)]
mod tests {
    //! The binary16 rounding against IEEE 754: round to nearest, ties to
    //! even, subnormals kept, overflow to infinity, NaN kept; expected
    //! values from the `half` crate's conversion and from the format's
    //! definition (11-bit significands, largest finite value 65504).

    use super::round_to_half;
    use crate::lower::metal::ir_eval::UnaryIr;
    use crate::source_map::Span;
    use half::f16;

    /// The rounding IR of a value that is not a literal (an argument).
    struct Rounding(UnaryIr);

    impl Rounding {
        fn new() -> Self {
            Rounding(UnaryIr::new(|fx, x| {
                round_to_half(fx, x, 1, Span::default())
            }))
        }

        /// What the IR computes for `x`.
        fn of(&self, x: f32) -> f32 {
            self.0.of(x)
        }

        /// Checks that `x` rounds to `want` (bit for bit, so the sign of
        /// zero counts; any NaN for a NaN).
        fn check(&self, x: f32, want: f32) {
            let got = self.of(x);
            if want.is_nan() {
                assert!(got.is_nan(), "{x:e} ({:#010x}) gave {got:e}", x.to_bits());
            } else {
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{x:e} ({:#010x}) gave {got:e}, want {want:e}",
                    x.to_bits()
                );
            }
        }
    }

    fn ieee(x: f32) -> f32 {
        f16::from_f32(x).to_f32()
    }

    #[test]
    fn every_binary16_value_is_kept() {
        let r = Rounding::new();
        for bits in 0..=u16::MAX {
            let v = f16::from_bits(bits).to_f32();
            r.check(v, v);
        }
    }

    #[test]
    fn halfway_cases_round_to_the_even_significand() {
        let r = Rounding::new();
        // Every pair of neighbouring finite binary16 values, subnormals
        // included, of both signs: the midpoint (exact in f32) goes to the
        // one whose last significand bit is 0; a hair off it, to the nearer.
        for sign in [0u16, 0x8000] {
            for bits in 0..0x7bff_u16 {
                let (a, b) = (
                    f16::from_bits(sign | bits),
                    f16::from_bits(sign | (bits + 1)),
                );
                let (a, b) = (a.to_f32(), b.to_f32());
                let mid = (a + b) / 2.0;
                let even = if bits % 2 == 0 { a } else { b };
                r.check(mid, even);
                let toward_a = f32::from_bits(mid.to_bits() - 1);
                let toward_b = f32::from_bits(mid.to_bits() + 1);
                if mid != 0.0 {
                    r.check(toward_a, a);
                    r.check(toward_b, b);
                }
            }
        }
    }

    #[test]
    fn subnormals_are_kept_and_underflow_goes_to_zero() {
        let r = Rounding::new();
        let tiny = 2f32.powi(-24); // the smallest binary16 subnormal
        r.check(tiny, tiny);
        r.check(-tiny, -tiny);
        r.check(7.0 * tiny, 7.0 * tiny);
        r.check(1023.0 * tiny, 1023.0 * tiny); // the largest subnormal
        r.check(2f32.powi(-14), 2f32.powi(-14)); // the smallest normal
        r.check(tiny / 2.0, 0.0); // a tie between 0 and the smallest: even is 0
        r.check(-tiny / 2.0, -0.0);
        r.check(tiny * 0.5001, tiny);
        r.check(tiny * 1.5, 2.0 * tiny); // a tie between 1 and 2 ulps: 2
        r.check(tiny * 2.5, 2.0 * tiny); // a tie between 2 and 3 ulps: 2
        r.check(f32::from_bits(1), 0.0); // the smallest f32 subnormal
        r.check(f32::MIN_POSITIVE, 0.0);
        r.check(0.0, 0.0);
        r.check(-0.0, -0.0);
    }

    #[test]
    fn overflow_becomes_infinity_of_the_same_sign() {
        let r = Rounding::new();
        r.check(65504.0, 65504.0);
        r.check(-65504.0, -65504.0);
        // Below the tie with the next power of two (65536), 65504 is nearest.
        r.check(65519.996, 65504.0);
        // The tie at 65520 goes to the even significand: 2^16, out of range.
        r.check(65520.0, f32::INFINITY);
        r.check(-65520.0, f32::NEG_INFINITY);
        r.check(1.0e6, f32::INFINITY);
        r.check(f32::MAX, f32::INFINITY);
        r.check(f32::MIN, f32::NEG_INFINITY);
        r.check(f32::INFINITY, f32::INFINITY);
        r.check(f32::NEG_INFINITY, f32::NEG_INFINITY);
    }

    #[test]
    fn nan_stays_nan() {
        let r = Rounding::new();
        for bits in [
            0x7fc0_0000u32,
            0xffc0_0000,
            0x7f80_0001,
            0x7fff_ffff,
            0xff80_1234,
        ] {
            r.check(f32::from_bits(bits), f32::NAN);
        }
    }

    #[test]
    fn arbitrary_floats_round_as_ieee_754_does() {
        let r = Rounding::new();
        // A fixed pseudo-random walk over all f32 bit patterns.
        let mut state = 0x2545_f491_u32;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let x = f32::from_bits(state);
            r.check(x, ieee(x));
        }
        for x in [
            0.1f32,
            1.0 / 3.0,
            std::f32::consts::PI,
            1.0e-5,
            2049.0,
            4097.0,
            65000.0,
        ] {
            r.check(x, ieee(x));
            r.check(-x, ieee(-x));
        }
    }
}
