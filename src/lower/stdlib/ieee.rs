//! The float functions whose Metal results at NaN, infinity, zero or the
//! ends of a type's range WGSL's builtins do not promise: `fmin`/`fmax`
//! (a NaN operand gives the other one), `ilogb` (the exponent, with C's
//! values for zero, infinity and NaN) and `nextafter` of `half` (one step
//! on the `half` grid, computed in `f32`: naga has no 16-bit bitcasts).
//!
//! Every test on a value's class reads its bits (the `f32` bits of a
//! `half`, widened exactly), as in `math.rs`: WGSL's finite-math
//! assumption lets `x != x` fold away.

use crate::lower::ctx::function::FnCtx;
use crate::lower::stdlib::math::{size_of, Ir, Kind};
use crate::lower::stdlib::Builtin;
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, MathFunction as Mf, ScalarKind};

type H = Handle<Expression>;

/// `FP_ILOGB0`, `ilogb(±0)`: `INT_MIN`, as Apple's `<math.h>` defines it.
pub(in crate::lower) const FP_ILOGB0: i32 = i32::MIN;
/// `FP_ILOGBNAN`, `ilogb(NaN)`: also `INT_MIN` in Apple's `<math.h>`.
pub(in crate::lower) const FP_ILOGBNAN: i32 = i32::MIN;

/// True in the lanes where the `f32` (or widened `half`) `x` is NaN.
fn is_nan(ir: &mut Ir, x: H, s: Scalar, n: u8) -> H {
    let magnitude = magnitude_bits(ir, x, s, n);
    let inf = ir.u32(0x7f80_0000, n);
    ir.bin(Bo::Greater, magnitude, inf)
}

/// The bits of `|x|` as an `f32` (`half` widened exactly).
fn magnitude_bits(ir: &mut Ir, x: H, s: Scalar, n: u8) -> H {
    let bits = ir.float_bits(x, s);
    let mask = ir.u32(0x7fff_ffff, n);
    ir.bin(Bo::And, bits, mask)
}

/// `fun` (`Min` or `Max`) of `x` and `y`, or the other operand where one
/// is NaN: C's `fmin`/`fmax`.
pub(in crate::lower) fn nan_avoiding(ir: &mut Ir, fun: Mf, x: H, y: H, s: Scalar, n: u8) -> H {
    let both = ir.math(fun, &[x, y]);
    let x_nan = is_nan(ir, x, s, n);
    let y_nan = is_nan(ir, y, s, n);
    let h = ir.select(x_nan, y, both);
    ir.select(y_nan, x, h)
}

impl Lowerer<'_, '_> {
    /// `fmin(x, y)`, `fmax(x, y)`: WGSL's `min`/`max`, except that a NaN
    /// operand yields the other operand (NaN only when both are), as MSL's
    /// common functions table defines them.
    pub(in crate::lower) fn nan_avoiding_min_max(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let (hs, ty) = self.operands(fx, b.name(), args, 2, Kind::Float, span)?;
        let (x, y) = (hs[0], hs[1]);
        let s = ty.element_scalar().unwrap();
        let n = size_of(&ty);
        let fun = if b == Builtin::Fmin { Mf::Min } else { Mf::Max };
        Ok((nan_avoiding(&mut Ir { fx, span }, fun, x, y, s, n), ty))
    }

    /// `ilogb(x)`: the unbiased exponent of `x` as an `int` (`intN`), from
    /// its bits (a subnormal's from its leading one); `FP_ILOGB0` for ±0,
    /// `INT_MAX` for ±infinity, `FP_ILOGBNAN` for NaN (C's rules).
    pub(in crate::lower) fn ilogb(
        &mut self,
        fx: &mut FnCtx,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let (hs, ty) = self.operands(fx, "ilogb", args, 1, Kind::Float, span)?;
        let s = ty.element_scalar().unwrap();
        let n = size_of(&ty);
        let mut ir = Ir { fx, span };
        let magnitude = magnitude_bits(&mut ir, hs[0], s, n);
        let signed = ir.bitcast(magnitude, ScalarKind::Sint);
        let shift = ir.u32(23, n);
        let biased = ir.bin(Bo::ShiftRight, signed, shift);
        let bias = ir.i32(127, n);
        let normal = ir.bin(Bo::Subtract, biased, bias);
        // A subnormal `f32`, b · 2^-149: floor(log2 b) - 149 = -118 - clz(b).
        let leading = ir.math(Mf::CountLeadingZeros, &[signed]);
        let base = ir.i32(-118, n);
        let subnormal = ir.bin(Bo::Subtract, base, leading);
        let min_normal = ir.u32(0x0080_0000, n);
        let tiny = ir.bin(Bo::Less, magnitude, min_normal);
        let mut e = ir.select(tiny, subnormal, normal);
        let cases = [
            (Bo::Equal, 0, FP_ILOGB0),
            (Bo::Equal, 0x7f80_0000, i32::MAX),
            (Bo::Greater, 0x7f80_0000, FP_ILOGBNAN),
        ];
        for (op, bits, value) in cases {
            let bits = ir.u32(bits, n);
            let test = ir.bin(op, magnitude, bits);
            let value = ir.i32(value, n);
            e = ir.select(test, value, e);
        }
        Ok((e, Type::vector(Scalar::Int, n)))
    }

    /// `nextafter(x, y)` of `half`s (see [`nextafter_half`]).
    pub(in crate::lower) fn nextafter_half(&self, ir: &mut Ir, x: H, y: H, n: u8) -> H {
        let wide_x = ir.cast(x, naga::Scalar::F32);
        let wide_y = ir.cast(y, naga::Scalar::F32);
        let next = nextafter_half(ir, wide_x, wide_y, n);
        ir.cast(next, self.naga_scalar(Scalar::Half))
    }
}

/// The `half` after `x` toward `y`, for `half` values held exactly in
/// `f32`s: the step away from zero is the `half` spacing at `|x|`,
/// 2^(max(e, -14) - 10) for `|x|` in [2^e, 2^(e+1)), and toward zero the
/// same, halved when `|x|` is a power of two above the subnormals. From
/// zero it is the smallest subnormal (2^-24) of `y`'s sign, from
/// infinity the largest `half` (65504); past the largest the sum is 65536,
/// which rounds to infinity as a `half`. `y` when equal, NaN when either is.
fn nextafter_half(ir: &mut Ir, x: H, y: H, n: u8) -> H {
    let f = Scalar::Float;
    let magnitude = magnitude_bits(ir, x, f, n);
    let abs = ir.math(Mf::Abs, &[x]);
    let shift = ir.u32(23, n);
    let biased = ir.bin(Bo::ShiftRight, magnitude, shift);
    // 113 is the biased `f32` exponent of 2^-14, the least normal `half`.
    let least = ir.u32(113, n);
    let exponent = ir.math(Mf::Max, &[biased, least]);
    let ten = ir.u32(10, n);
    let step_exponent = ir.bin(Bo::Subtract, exponent, ten);
    let step_bits = ir.bin(Bo::ShiftLeft, step_exponent, shift);
    let step = ir.bitcast(step_bits, ScalarKind::Float);
    let mantissa_mask = ir.u32(0x007f_ffff, n);
    let mantissa = ir.bin(Bo::And, magnitude, mantissa_mask);
    let zero_bits = ir.u32(0, n);
    let power_of_two = ir.bin(Bo::Equal, mantissa, zero_bits);
    let above_subnormals = ir.bin(Bo::Greater, biased, least);
    let halve = ir.bin(Bo::And, power_of_two, above_subnormals);
    let half_factor = ir.float(0.5, f, n);
    let half_step = ir.bin(Bo::Multiply, step, half_factor);
    let down_step = ir.select(halve, half_step, step);
    let zero = ir.float(0.0, f, n);
    let below = ir.bin(Bo::Less, x, y);
    let positive = ir.bin(Bo::Greater, x, zero);
    let away = ir.bin(Bo::Equal, below, positive);
    let up = ir.bin(Bo::Add, abs, step);
    let down = ir.bin(Bo::Subtract, abs, down_step);
    let next_abs = ir.select(away, up, down);
    let inf_bits = ir.u32(0x7f80_0000, n);
    let infinite = ir.bin(Bo::Equal, magnitude, inf_bits);
    let largest = ir.float(65504.0, f, n);
    let next_abs = ir.select(infinite, largest, next_abs);
    let next = ir.math(Mf::Sign, &[x]);
    let next = ir.bin(Bo::Multiply, next, next_abs);
    let smallest = ir.float(2f64.powi(-24), f, n);
    let from_zero = copy_sign(ir, smallest, y, n);
    let is_zero = ir.bin(Bo::Equal, magnitude, zero_bits);
    let next = ir.select(is_zero, from_zero, next);
    let equal = ir.bin(Bo::Equal, x, y);
    let next = ir.select(equal, y, next);
    let x_nan = is_nan(ir, x, f, n);
    let y_nan = is_nan(ir, y, f, n);
    let nan = ir.bin(Bo::InclusiveOr, x_nan, y_nan);
    let sum = ir.bin(Bo::Add, x, y);
    ir.select(nan, sum, next)
}

/// `|magnitude|` with the sign bit of `sign` (`f32`s).
fn copy_sign(ir: &mut Ir, magnitude: H, sign: H, n: u8) -> H {
    let bits = ir.bitcast(magnitude, ScalarKind::Uint);
    let sign_bits = ir.bitcast(sign, ScalarKind::Uint);
    let mask = ir.u32(0x8000_0000, n);
    let sign_bit = ir.bin(Bo::And, sign_bits, mask);
    let joined = ir.bin(Bo::InclusiveOr, bits, sign_bit);
    ir.bitcast(joined, ScalarKind::Float)
}
