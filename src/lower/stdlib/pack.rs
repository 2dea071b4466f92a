//! The pack and unpack functions of `<metal_pack>` (MSL's "Pack and Unpack
//! Functions"; mapping doc §6.5): `pack_float_to_unorm4x8(float4)`,
//! `unpack_snorm2x16_to_half(uint)`, the `10a2`, `565` and sRGB forms.
//!
//! Each is explicit arithmetic rather than WGSL's `pack4x8unorm` family:
//! WGSL's pack builtins become SPIR-V's `PackUnorm4x8`, whose `round` may
//! go either way at a tie (GLSL.std.450), and whose NaN result is
//! indeterminate, while Metal's conversion rules (MSL's "Conversion Rules
//! for Normalized Integer Pixel Data Types") round to nearest even.
//! WGSL's `round` is round-half-to-even on every backend, so
//! `round(clamp(x, 0, 1) * (2^n - 1))` is Metal's rule bit for bit; a NaN
//! lane packs as 0, the result of Metal's `min(max(x, 0), 1)` with the
//! IEEE `fmax`/`fmin` it is written with. Unpacking divides by `2^n - 1`
//! (snorm: `max(-1, c / (2^(n-1) - 1))`, so both -128 and -127 give -1),
//! with the exact `1.0` (and `-1.0`) the rules require at the ends.
//!
//! Lanes are packed from the least significant bits up: lane 0 (`x`, red)
//! in bits 0.., so `unorm10a2` has alpha in bits 30–31 and `unorm565` red
//! in bits 0–4, blue in 11–15, as Metal's `RGB10A2`/`B5G6R5` pixel formats
//! name their components from the low end.

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::stdlib::math::{arity_error, Ir};
use crate::lower::stdlib::Builtin;
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, MathFunction as Mf, ScalarKind};

type H = Handle<Expression>;

/// A packed layout: the width in bits of each lane, low lanes first.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(in crate::lower) enum Layout {
    Unorm4x8,
    Snorm4x8,
    Unorm2x16,
    Snorm2x16,
    Unorm10a2,
    Unorm565,
    /// `unorm4x8` holding sRGB-encoded red, green and blue, linear alpha.
    SrgbUnorm4x8,
}

impl Layout {
    fn widths(self) -> &'static [u32] {
        match self {
            Layout::Unorm4x8 | Layout::Snorm4x8 | Layout::SrgbUnorm4x8 => &[8, 8, 8, 8],
            Layout::Unorm2x16 | Layout::Snorm2x16 => &[16, 16],
            Layout::Unorm10a2 => &[10, 10, 10, 2],
            Layout::Unorm565 => &[5, 6, 5],
        }
    }

    fn signed(self) -> bool {
        matches!(self, Layout::Snorm4x8 | Layout::Snorm2x16)
    }

    fn lanes(self) -> u8 {
        self.widths().len() as u8
    }

    /// The packed word's type: `ushort` for `565`, else `uint`.
    fn word(self) -> Scalar {
        if self == Layout::Unorm565 {
            Scalar::UShort
        } else {
            Scalar::UInt
        }
    }

    /// Each lane's largest code: `2^n - 1`, or `2^(n-1) - 1` if signed.
    fn scales(self) -> Vec<f64> {
        let shrink = u32::from(self.signed());
        self.widths()
            .iter()
            .map(|w| ((1u64 << (w - shrink)) - 1) as f64)
            .collect()
    }

    /// Each lane's lowest bit.
    fn offsets(self) -> Vec<u32> {
        let mut at = 0;
        self.widths()
            .iter()
            .map(|w| {
                let o = at;
                at += w;
                o
            })
            .collect()
    }
}

/// What a pack builtin does: pack lanes of `Scalar` (float or half), or
/// unpack to lanes of it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(in crate::lower) enum Conversion {
    Pack(Layout, Scalar),
    Unpack(Layout, Scalar),
}

/// The conversion of a [`Builtin`] of `Family::Pack`.
pub(in crate::lower) fn conversion(b: Builtin) -> Option<Conversion> {
    use Builtin as B;
    use Conversion::*;
    use Layout::*;
    let (f, h) = (Scalar::Float, Scalar::Half);
    Some(match b {
        B::PackFloatToUnorm4x8 => Pack(Unorm4x8, f),
        B::PackFloatToSnorm4x8 => Pack(Snorm4x8, f),
        B::PackFloatToUnorm2x16 => Pack(Unorm2x16, f),
        B::PackFloatToSnorm2x16 => Pack(Snorm2x16, f),
        B::PackFloatToUnorm10a2 => Pack(Unorm10a2, f),
        B::PackFloatToUnorm565 => Pack(Unorm565, f),
        B::PackFloatToSrgbUnorm4x8 => Pack(SrgbUnorm4x8, f),
        B::PackHalfToUnorm4x8 => Pack(Unorm4x8, h),
        B::PackHalfToSnorm4x8 => Pack(Snorm4x8, h),
        B::PackHalfToUnorm2x16 => Pack(Unorm2x16, h),
        B::PackHalfToSnorm2x16 => Pack(Snorm2x16, h),
        B::PackHalfToUnorm10a2 => Pack(Unorm10a2, h),
        B::PackHalfToUnorm565 => Pack(Unorm565, h),
        B::PackHalfToSrgbUnorm4x8 => Pack(SrgbUnorm4x8, h),
        B::UnpackUnorm4x8ToFloat => Unpack(Unorm4x8, f),
        B::UnpackSnorm4x8ToFloat => Unpack(Snorm4x8, f),
        B::UnpackUnorm2x16ToFloat => Unpack(Unorm2x16, f),
        B::UnpackSnorm2x16ToFloat => Unpack(Snorm2x16, f),
        B::UnpackUnorm10a2ToFloat => Unpack(Unorm10a2, f),
        B::UnpackUnorm565ToFloat => Unpack(Unorm565, f),
        B::UnpackUnorm4x8SrgbToFloat => Unpack(SrgbUnorm4x8, f),
        B::UnpackUnorm4x8ToHalf => Unpack(Unorm4x8, h),
        B::UnpackSnorm4x8ToHalf => Unpack(Snorm4x8, h),
        B::UnpackUnorm2x16ToHalf => Unpack(Unorm2x16, h),
        B::UnpackSnorm2x16ToHalf => Unpack(Snorm2x16, h),
        B::UnpackUnorm10a2ToHalf => Unpack(Unorm10a2, h),
        B::UnpackUnorm565ToHalf => Unpack(Unorm565, h),
        B::UnpackUnorm4x8SrgbToHalf => Unpack(SrgbUnorm4x8, h),
        _ => return None,
    })
}

/// The naga vector types a conversion of `n` lanes works in.
struct LaneTypes {
    float: Handle<naga::Type>,
    uint: Handle<naga::Type>,
}

impl Lowerer<'_, '_> {
    /// A call of a pack or unpack function.
    pub(in crate::lower) fn pack_call(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let name = b.name();
        let [arg] = args else {
            return Err(arity_error(name, 1, args.len(), span));
        };
        let conversion = conversion(b).expect("a pack builtin");
        let (layout, s) = match conversion {
            Conversion::Pack(l, s) | Conversion::Unpack(l, s) => (l, s),
        };
        let n = layout.lanes();
        let lanes = LaneTypes {
            float: self.naga_type(&Type::Vector(Scalar::Float, n), span)?,
            uint: self.naga_type(&Type::Vector(Scalar::UInt, n), span)?,
        };
        let (h, t) = self.rvalue(fx, arg)?;
        if let Conversion::Pack(..) = conversion {
            // No implicit vector conversions (MSL §2.11): the lanes must be
            // exactly `floatN`/`halfN` (a packed vector is one as a value).
            let want = Type::Vector(s, n);
            if t.unpacked() != want {
                return Err(self.no_overload(name, &t, arg.span));
            }
            let x = self.convert(fx, h, &t, &want, false, arg.span)?;
            let wide = Ir { fx, span }.cast(x, naga::Scalar::F32);
            let word = pack(&mut Ir { fx, span }, &lanes, layout, wide);
            return Ok(Value::Rv(word, Type::Scalar(layout.word())));
        }
        let word_ty = Type::Scalar(layout.word());
        if !matches!(t, Type::Scalar(e) if e != Scalar::Bool) {
            return Err(self.no_overload(name, &t, arg.span));
        }
        let word = self.convert(fx, h, &t, &word_ty, false, arg.span)?;
        let mut ir = Ir { fx, span };
        let values = unpack(&mut ir, &lanes, layout, word);
        let values = ir.cast(values, self.naga_scalar(s));
        Ok(Value::Rv(values, Type::Vector(s, n)))
    }
}

/// A `vecN` of the constants `values`, of type `ty`.
fn lane_constants(ir: &mut Ir, ty: Handle<naga::Type>, values: Vec<naga::Literal>) -> H {
    let components = values
        .into_iter()
        .map(|v| ir.add(Expression::Literal(v)))
        .collect();
    ir.add(Expression::Compose { ty, components })
}

fn uints(ir: &mut Ir, lanes: &LaneTypes, values: &[u32]) -> H {
    let values = values.iter().map(|&v| naga::Literal::U32(v)).collect();
    lane_constants(ir, lanes.uint, values)
}

fn floats(ir: &mut Ir, lanes: &LaneTypes, values: &[f64]) -> H {
    let values = values
        .iter()
        .map(|&v| naga::Literal::F32(v as f32))
        .collect();
    lane_constants(ir, lanes.float, values)
}

/// Packs the `f32` lanes `x` into one word (a `u32`).
fn pack(ir: &mut Ir, lanes: &LaneTypes, layout: Layout, x: H) -> H {
    let n = layout.lanes();
    // NaN lanes are 0, before anything else: a bit test, as WGSL's
    // finite-math assumption lets `x != x` fold away (and `clamp` of NaN
    // is indeterminate).
    let bits = ir.bitcast(x, ScalarKind::Uint);
    let magnitude_mask = ir.u32(0x7fff_ffff, n);
    let magnitude = ir.bin(Bo::And, bits, magnitude_mask);
    let inf = ir.u32(0x7f80_0000, n);
    let nan = ir.bin(Bo::Greater, magnitude, inf);
    let zero = ir.float(0.0, Scalar::Float, n);
    let mut clean = ir.select(nan, zero, x);
    if layout == Layout::SrgbUnorm4x8 {
        clean = linear_to_srgb(ir, lanes, clean);
    }
    let low = ir.float(if layout.signed() { -1.0 } else { 0.0 }, Scalar::Float, n);
    let high = ir.float(1.0, Scalar::Float, n);
    let clamped = ir.math(Mf::Clamp, &[clean, low, high]);
    let scale = floats(ir, lanes, &layout.scales());
    let scaled = ir.bin(Bo::Multiply, clamped, scale);
    let code = ir.math(Mf::Round, &[scaled]);
    // Signed codes convert through `i32`, whose bits are two's complement.
    let code = if layout.signed() {
        let signed = ir.cast(code, naga::Scalar::I32);
        ir.bitcast(signed, ScalarKind::Uint)
    } else {
        ir.cast(code, naga::Scalar::U32)
    };
    let masks: Vec<u32> = layout.widths().iter().map(|w| (1 << w) - 1).collect();
    let masks = uints(ir, lanes, &masks);
    let code = ir.bin(Bo::And, code, masks);
    let offsets = uints(ir, lanes, &layout.offsets());
    let placed = ir.bin(Bo::ShiftLeft, code, offsets);
    let mut word = ir.add(Expression::AccessIndex {
        base: placed,
        index: 0,
    });
    for i in 1..u32::from(n) {
        let lane = ir.add(Expression::AccessIndex {
            base: placed,
            index: i,
        });
        word = ir.bin(Bo::InclusiveOr, word, lane);
    }
    word
}

/// Unpacks the word `word` (a `u32`) into `f32` lanes.
fn unpack(ir: &mut Ir, lanes: &LaneTypes, layout: Layout, word: H) -> H {
    let n = layout.lanes();
    let splat = ir.add(Expression::Splat {
        size: crate::lower::types::vector_size(n),
        value: word,
    });
    let widths = layout.widths();
    let offsets = layout.offsets();
    let codes = if layout.signed() {
        // Sign-extend each lane: its top bit to bit 31, then an arithmetic
        // shift back down.
        let up: Vec<u32> = (0..widths.len())
            .map(|i| 32 - offsets[i] - widths[i])
            .collect();
        let down: Vec<u32> = widths.iter().map(|w| 32 - w).collect();
        let up = uints(ir, lanes, &up);
        let down = uints(ir, lanes, &down);
        let top = ir.bin(Bo::ShiftLeft, splat, up);
        let signed = ir.bitcast(top, ScalarKind::Sint);
        let code = ir.bin(Bo::ShiftRight, signed, down);
        ir.cast(code, naga::Scalar::F32)
    } else {
        let offsets = uints(ir, lanes, &offsets);
        let shifted = ir.bin(Bo::ShiftRight, splat, offsets);
        let masks: Vec<u32> = widths.iter().map(|w| (1 << w) - 1).collect();
        let masks = uints(ir, lanes, &masks);
        let code = ir.bin(Bo::And, shifted, masks);
        ir.cast(code, naga::Scalar::F32)
    };
    let scale = floats(ir, lanes, &layout.scales());
    let quotient = ir.bin(Bo::Divide, codes, scale);
    // The ends are exact (the conversion rules' table): the top code is 1.0, and a
    // signed lane at or below minus the top code is -1.0.
    let one = ir.float(1.0, Scalar::Float, n);
    let top = ir.bin(Bo::GreaterEqual, codes, scale);
    let mut value = ir.select(top, one, quotient);
    if layout.signed() {
        let minus_one = ir.neg(one);
        let minus_scale = ir.neg(scale);
        let bottom = ir.bin(Bo::LessEqual, codes, minus_scale);
        value = ir.select(bottom, minus_one, value);
    }
    if layout == Layout::SrgbUnorm4x8 {
        value = srgb_to_linear(ir, lanes, value);
    }
    value
}

/// The sRGB encoding of red, green and blue (alpha stays linear), of `f32`
/// lanes (not NaN) clamped to [0, 1] first: `12.92 c` up to 0.0031308, else
/// `1.055 c^(1/2.4) - 0.055` (MSL's conversion rules for sRGB textures).
fn linear_to_srgb(ir: &mut Ir, lanes: &LaneTypes, x: H) -> H {
    let zero = ir.float(0.0, Scalar::Float, 4);
    let one = ir.float(1.0, Scalar::Float, 4);
    let c = ir.math(Mf::Clamp, &[x, zero, one]);
    let linear_part = ir.float(12.92, Scalar::Float, 4);
    let low = ir.bin(Bo::Multiply, c, linear_part);
    let exponent = ir.float(1.0 / 2.4, Scalar::Float, 4);
    let power = ir.math(Mf::Pow, &[c, exponent]);
    let gain = ir.float(1.055, Scalar::Float, 4);
    let offset = ir.float(0.055, Scalar::Float, 4);
    let scaled = ir.bin(Bo::Multiply, power, gain);
    let high = ir.bin(Bo::Subtract, scaled, offset);
    let knee = ir.float(0.003_130_8, Scalar::Float, 4);
    let below = ir.bin(Bo::LessEqual, c, knee);
    let encoded = ir.select(below, low, high);
    keep_alpha(ir, lanes, encoded, x)
}

/// The linear value of sRGB-encoded red, green and blue (alpha is linear):
/// `c / 12.92` up to 0.04045, else `((c + 0.055) / 1.055)^2.4`.
fn srgb_to_linear(ir: &mut Ir, lanes: &LaneTypes, c: H) -> H {
    let linear_part = ir.float(12.92, Scalar::Float, 4);
    let low = ir.bin(Bo::Divide, c, linear_part);
    let offset = ir.float(0.055, Scalar::Float, 4);
    let gain = ir.float(1.055, Scalar::Float, 4);
    let shifted = ir.bin(Bo::Add, c, offset);
    let base = ir.bin(Bo::Divide, shifted, gain);
    let exponent = ir.float(2.4, Scalar::Float, 4);
    let high = ir.math(Mf::Pow, &[base, exponent]);
    let knee = ir.float(0.040_45, Scalar::Float, 4);
    let below = ir.bin(Bo::LessEqual, c, knee);
    let decoded = ir.select(below, low, high);
    keep_alpha(ir, lanes, decoded, c)
}

/// `rgb`'s first three lanes and `alpha`'s last.
fn keep_alpha(ir: &mut Ir, lanes: &LaneTypes, rgb: H, alpha: H) -> H {
    let mut components: Vec<H> = (0..3)
        .map(|index| ir.add(Expression::AccessIndex { base: rgb, index }))
        .collect();
    components.push(ir.add(Expression::AccessIndex {
        base: alpha,
        index: 3,
    }));
    ir.add(Expression::Compose {
        ty: lanes.float,
        components,
    })
}
