//! 64-bit integers: `long`, `ulong`, `int64_t`, `uint64_t`, `size_t` and
//! `ptrdiff_t` (and their vectors).
//!
//! **Metal's rule** (MSL §2.1, Table 2.1): `long`/`ulong` are 64-bit two's
//! complement integers, 8 bytes in size and alignment (`long2` 16,
//! `long3`/`long4` 32); `size_t` is `ulong` and `ptrdiff_t` is `long` (the
//! 64-bit `sizeof` and pointer-difference types of Apple's GPUs). Arithmetic
//! wraps modulo 2^64.
//!
//! **WGSL's rule**: WebGPU has 32-bit integers only (`i32`, `u32`, which
//! wrap modulo 2^32); naga and wgpu offer `i64`/`u64` as a native extension
//! (`SHADER_INT64`), 8 bytes in size and alignment, as Metal lays them out.
//!
//! **The mapping.** With `--target wgpu` (`Target::Wgpu`) a 64-bit integer
//! is naga's `i64`/`u64`: exact, and its WGSL layout is Metal's. With
//! `--target webgpu` (the default) every 64-bit integer is *computed in its
//! low 32 bits*: its values are `i32`/`u32` (the low word, which `+`, `-`,
//! `*`, the bitwise operators and left shifts compute exactly), and a value
//! is taken to be the sign (`long`) or zero (`ulong`) extension of that
//! word wherever the high word matters (`/`, `%`, `>>`, comparisons,
//! conversions to floats): exact while the Metal value fits in 32 bits, and
//! wrapping where it exceeds them. In memory a host sees, it keeps Metal's
//! 8-byte size and alignment: buffers holding one are word views
//! (`word_views.rs`), where a load reads the low word and a store writes
//! the low word and the high word (its sign or zero extension), so the
//! host reads the 64-bit value Metal would hold whenever it fits. `sizeof`,
//! reflection and threadgroup memory lengths use Metal's sizes
//! (`layout::metal`); threadgroup memory, which no host reads, holds the
//! 32-bit values. One warning per translation unit (W0411), at the first
//! place a 64-bit value is computed (an operator on 64-bit operands, a load
//! from a buffer, a conversion from a float, a literal over 32 bits),
//! says so; conversions between integers and plain declarations (SPIR-V
//! Cross's and Tint's `size_t` array subscripts) compute nothing and stay
//! silent.

use crate::diagnostics::Code;
use crate::layout;
use crate::lower::ctx::entry::Feature;
use crate::lower::ctx::function::FnCtx;
use crate::lower::stdlib::math::Ir;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval::ConstValue;
use crate::source_map::Span;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, ScalarKind};

/// How 64-bit integers are computed with `--target wgpu` (with
/// `--target webgpu` they are always [`WideIntegers::Low32`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WideIntegers {
    /// naga's `i64`/`u64` (the `shader-int64` feature): exact.
    #[default]
    Native,
    /// Their low 32 bits, as on WebGPU (see the module documentation): for
    /// adapters without `shader-int64` (wgpu's GL backend), which the runner
    /// picks there as it picks `half` in `f32`.
    Low32,
}

/// `long` or `ulong` (`int64_t`, `uint64_t`, `size_t`, `ptrdiff_t`).
pub(in crate::lower) fn is_wide(s: Scalar) -> bool {
    matches!(s, Scalar::Long | Scalar::ULong)
}

impl Lowerer<'_, '_> {
    /// True if 64-bit integers are computed in their low 32 bits
    /// (`--target webgpu`, or [`WideIntegers::Low32`]); false with wgpu's
    /// native `i64`/`u64`.
    pub(in crate::lower) fn narrows_wide_integers(&self) -> bool {
        !self.settings.native_extensions || self.settings.wide_integers == WideIntegers::Low32
    }

    /// naga's scalar for the 64-bit integer `s` in this translation.
    pub(in crate::lower) fn wide_scalar(&self, s: Scalar) -> naga::Scalar {
        match (s, self.narrows_wide_integers()) {
            (Scalar::Long, true) => naga::Scalar::I32,
            (Scalar::ULong, true) => naga::Scalar::U32,
            (s, _) => crate::lower::types::scalar(s),
        }
    }

    /// True if `ty` holds 64-bit integers held in 32-bit values, whose
    /// WGSL layout cannot be Metal's (buffers of it use word views).
    pub(in crate::lower) fn holds_narrowed_wide(&self, ty: &Type) -> bool {
        self.narrows_wide_integers()
            && [Scalar::Long, Scalar::ULong]
                .into_iter()
                .any(|s| layout::uses_scalar(ty, s, &self.program.structs))
    }

    /// A 64-bit integer type is used: with wgpu's extension the entry point
    /// needs `shader-int64`; on WebGPU it is held in 32 bits (nothing to
    /// refuse; [`Self::warn_narrowed_wide`] where a value is computed).
    pub(in crate::lower) fn check_64_bit(&mut self, _span: Span) -> Result<()> {
        if !self.narrows_wide_integers() {
            self.require_feature(Feature::ShaderInt64);
        }
        Ok(())
    }

    /// The translation unit's one W0411, at the first 64-bit computation.
    pub(in crate::lower) fn warn_narrowed_wide(&mut self, span: Span) {
        let warned = self
            .global
            .warnings
            .iter()
            .any(|w| w.code == Code::WideIntegerNarrowed);
        if !self.narrows_wide_integers() || warned {
            return;
        }
        self.global.warnings.push(
            Error::coded(
                Code::WideIntegerNarrowed,
                span,
                "64-bit integers are computed in 32 bits on WebGPU: values wrap where they exceed 32 bits",
            )
            .note("in buffers they keep Metal's 8 bytes: loads read the low word, stores write it and its sign or zero extension")
            .note("`--target wgpu` (`Target::Wgpu`) computes them exactly, with wgpu's `shader-int64`"),
        );
    }

    /// The naga literal of a 64-bit integer constant held in 32 bits: its
    /// low word (warning when that drops bits); `None` for other constants
    /// or with native 64-bit integers.
    pub(in crate::lower) fn narrowed_literal(
        &mut self,
        v: &ConstValue,
        span: Span,
    ) -> Option<Literal> {
        let ConstValue::Int(i, s) = *v else {
            return None;
        };
        if !is_wide(s) || !self.narrows_wide_integers() {
            return None;
        }
        // A `ulong` is kept as its 64 bits in an `i64`.
        let fits = match s {
            Scalar::Long => i32::try_from(i).is_ok(),
            _ => u32::try_from(i).is_ok(),
        };
        if !fits {
            self.warn_narrowed_wide(span);
        }
        Some(match s {
            Scalar::Long => Literal::I32(i as i32),
            _ => Literal::U32(i as u32),
        })
    }

    /// `a << amount` or `a >> amount` for a 64-bit `result` held in 32
    /// bits (`amount`: `u32`s of `a`'s shape, constants already masked to
    /// Metal's 6 bits). Amounts of 32 and more, which WGSL would take
    /// modulo 32, shift every bit of the low word out: `0`, or for a signed
    /// right shift the sign (`a >> 31`).
    pub(in crate::lower) fn narrowed_shift(
        &mut self,
        fx: &mut FnCtx,
        left: bool,
        (a, amount): (Handle<Expression>, Handle<Expression>),
        result: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        self.warn_narrowed_wide(span);
        let n = result.vector_size().unwrap_or(1);
        let signed = result
            .element_scalar()
            .is_some_and(|s| s.is_signed_integer());
        let op = if left { Bo::ShiftLeft } else { Bo::ShiftRight };
        let constant = constant_amount(fx, amount);
        if constant.is_some_and(|k| k < 32) {
            // A shift within the word; constant left shifts are folded as
            // 32-bit ones are (WGSL refuses one that drops set bits).
            let word = result.with_scalar(if signed { Scalar::Int } else { Scalar::UInt });
            if left {
                if let Some(folded) = self.fold_left_shift(fx, a, amount, &word, span) {
                    return Ok(folded);
                }
            }
            return Ok(Ir { fx, span }.bin(op, a, amount));
        }
        let result_ty = self.naga_type(result, span)?;
        let mut ir = Ir { fx, span };
        let past = if !left && signed {
            let sign = ir.u32(31, n);
            ir.bin(Bo::ShiftRight, a, sign)
        } else {
            ir.add(Expression::ZeroValue(result_ty))
        };
        if constant.is_some() {
            return Ok(past);
        }
        // Metal takes the amount modulo 64 for a 64-bit operand.
        let six_bits = ir.u32(63, n);
        let amount = ir.bin(Bo::And, amount, six_bits);
        let shifted = ir.bin(op, a, amount);
        let word = ir.u32(32, n);
        let beyond = ir.bin(Bo::GreaterEqual, amount, word);
        Ok(ir.select(beyond, past, shifted))
    }

    /// The two words Metal holds for the 64-bit scalar `h` of `s` held in
    /// 32 bits, low first (`as_type<uint2>(x)`): the value and its sign or
    /// zero extension.
    pub(in crate::lower) fn narrowed_words(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        s: Scalar,
        span: Span,
    ) -> [Handle<Expression>; 2] {
        let low = Ir { fx, span }.bitcast(h, ScalarKind::Uint);
        [low, self.high_word(fx, h, s == Scalar::Long, span)]
    }

    /// The 64-bit scalar of `s` held in 32 bits that the words `low`, high
    /// hold (`as_type<ulong>(uint2)`): the low word; the high word is
    /// dropped, the value taken to fit in 32 bits.
    pub(in crate::lower) fn narrowed_from_words(
        &mut self,
        fx: &mut FnCtx,
        low: Handle<Expression>,
        s: Scalar,
        span: Span,
    ) -> Handle<Expression> {
        self.warn_narrowed_wide(span);
        Ir { fx, span }.bitcast(low, self.wide_scalar(s).kind)
    }

    /// The high word Metal holds for a 64-bit value held in its low word
    /// `h` (an `i32` when `signed`, else a `u32`): the sign extension
    /// (`u32(h >> 31)`) or zero.
    pub(in crate::lower) fn high_word(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        signed: bool,
        span: Span,
    ) -> Handle<Expression> {
        let mut ir = Ir { fx, span };
        if !signed {
            return ir.u32(0, 1);
        }
        let sign = ir.u32(31, 1);
        let extended = ir.bin(Bo::ShiftRight, h, sign);
        ir.bitcast(extended, ScalarKind::Uint)
    }

    /// Loads the 64-bit integer `s` at byte `offset` of word view `global`:
    /// its low word (the high word is taken to be its extension).
    pub(in crate::lower) fn load_narrowed_wide(
        &mut self,
        fx: &mut FnCtx,
        global: Handle<naga::GlobalVariable>,
        offset: Handle<Expression>,
        s: Scalar,
        span: Span,
    ) -> Handle<Expression> {
        self.warn_narrowed_wide(span);
        let word = self.load_word(fx, global, offset, span);
        match s {
            Scalar::Long => Ir { fx, span }.bitcast(word, ScalarKind::Sint),
            _ => word,
        }
    }

    /// Stores the 64-bit integer `value` (of `s`, held in 32 bits) at byte
    /// `offset` of word view `global`: the low word, then the high word
    /// Metal would hold (two whole, 8-aligned words: plain stores).
    pub(in crate::lower) fn store_narrowed_wide(
        &mut self,
        fx: &mut FnCtx,
        global: Handle<naga::GlobalVariable>,
        (offset, value): (Handle<Expression>, Handle<Expression>),
        s: Scalar,
        span: Span,
    ) {
        let low = match s {
            Scalar::Long => Ir { fx, span }.bitcast(value, ScalarKind::Uint),
            _ => value,
        };
        let high = self.high_word(fx, value, s == Scalar::Long, span);
        let high_offset = self.add_offset(fx, offset, 4, span);
        for (at, word) in [(offset, low), (high_offset, high)] {
            let pointer = self.word_pointer(fx, global, at, span);
            self.push_effect(
                fx,
                naga::Statement::Store {
                    pointer,
                    value: word,
                },
                Some(pointer),
                span,
            );
        }
    }
}

/// The amount of a shift when it is a literal or a splat of one.
fn constant_amount(fx: &FnCtx, amount: Handle<Expression>) -> Option<u32> {
    let literal = match *fx.expr(amount) {
        Expression::Splat { value, .. } => value,
        _ => amount,
    };
    match *fx.expr(literal) {
        Expression::Literal(Literal::U32(k)) => Some(k),
        _ => None,
    }
}
