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

/// Rewrites what generic lowering code writes for `half` into `f32` after
/// an emulated-`half` lowering: `f16` literals become the same `f32` values
/// and conversions to `f16` become (exact) `f32` conversions. Both are exact
/// because every remaining `f16` conversion converts a value that is already
/// a binary16 value (unpacked fields, widened polyfill results, infinities);
/// conversions that round go through `Lowerer::convert`, which rounds.
pub(in crate::lower) fn demote_f16(module: &mut naga::Module) {
    demote_expressions(&mut module.global_expressions);
    for (_, f) in module.functions.iter_mut() {
        demote_expressions(&mut f.expressions);
    }
    for ep in &mut module.entry_points {
        demote_expressions(&mut ep.function.expressions);
    }
}

fn demote_expressions(arena: &mut naga::Arena<Expression>) {
    for (_, e) in arena.iter_mut() {
        match e {
            Expression::Literal(Literal::F16(v)) => {
                *e = Expression::Literal(Literal::F32(v.to_f32()))
            }
            Expression::As {
                kind: ScalarKind::Float,
                convert: Some(width),
                ..
            } if *width == 2 => *width = 4,
            _ => {}
        }
    }
}

/// True if the module still mentions `f16` anywhere in its types (an
/// internal error in [`HalfMode::F32`]).
pub(in crate::lower) fn mentions_f16(module: &naga::Module) -> bool {
    let is_f16 = |s: &naga::Scalar| *s == naga::Scalar::F16;
    module.types.iter().any(|(_, t)| match &t.inner {
        naga::TypeInner::Scalar(s)
        | naga::TypeInner::Vector { scalar: s, .. }
        | naga::TypeInner::Matrix { scalar: s, .. } => is_f16(s),
        _ => false,
    })
}
