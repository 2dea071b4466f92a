//! The integer functions of metal_stdlib (MSL §6.3, Table 6.2; mapping doc
//! §6.2) that WGSL lacks, for `int`/`uint` and the 8- and 16-bit types
//! (held sign- or zero-extended in 32 bits: see `narrow.rs`).
//!
//! Results are exact, as the spec defines them: saturating arithmetic
//! saturates, `hadd`/`rhadd` do not overflow, and `mulhi` gets the high word
//! of the full 64-bit product from 16-bit limbs, since WebGPU has no 64-bit
//! integers. Narrow types compute in 32 bits, where nothing overflows, and
//! clamp or wrap the result to their width.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::stdlib::math::{arity_error, size_of, Ir, Kind};
use crate::lower::stdlib::Builtin;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, MathFunction as Mf, ScalarKind};

type H = Handle<Expression>;

/// What the polyfills need to know of an integer operand type.
#[derive(Clone, Copy)]
struct Int {
    scalar: Scalar,
    /// Vector components (1 for scalars).
    n: u8,
}

impl Int {
    fn of(ty: &Type) -> Int {
        Int {
            scalar: ty.element_scalar().expect("an integer type"),
            n: size_of(ty),
        }
    }

    fn signed(self) -> bool {
        self.scalar.is_signed_integer()
    }

    fn bits(self) -> u32 {
        self.scalar.size() * 8
    }

    fn narrow(self) -> bool {
        self.bits() < 32
    }

    /// `long`/`ulong` (`--target wgpu`): the polyfills here build 32-bit
    /// constants and limbs.
    fn wide(self) -> bool {
        self.bits() > 32
    }

    /// The smallest and largest values of the type.
    fn range(self) -> (i64, i64) {
        let bits = self.bits();
        if self.signed() {
            (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
        } else {
            (0, (1i64 << bits) - 1)
        }
    }

    /// A constant of the 32-bit kind the type is held in.
    fn lit(self, ir: &mut Ir, v: i64) -> H {
        if self.signed() {
            ir.i32(v as i32, self.n)
        } else {
            ir.u32(v as u32, self.n)
        }
    }
}

/// The unsigned type of the same width.
fn unsigned(s: Scalar) -> Scalar {
    match s {
        Scalar::Char => Scalar::UChar,
        Scalar::Short => Scalar::UShort,
        Scalar::Int => Scalar::UInt,
        Scalar::Long => Scalar::ULong,
        other => other,
    }
}

impl Lowerer<'_, '_> {
    /// A call of the integer function `b` ([`Family::Integer`]).
    ///
    /// [`Family::Integer`]: crate::lower::stdlib::Family::Integer
    pub(in crate::lower) fn integer_library_call(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        use Builtin as B;
        let (h, ty) = match b {
            B::Absdiff => self.absdiff(fx, args, span)?,
            B::Addsat | B::Subsat => self.saturating(fx, b, args, span)?,
            B::Madsat => self.madsat(fx, args, span)?,
            B::Hadd | B::Rhadd => self.halving_add(fx, b, args, span)?,
            B::Mulhi | B::Madhi => self.mulhi(fx, b, args, span)?,
            B::Mul24 | B::Mad24 => self.mul24(fx, b, args, span)?,
            B::Rotate => self.rotate(fx, args, span)?,
            B::ExtractBits | B::InsertBits => self.bit_field(fx, b, args, span)?,
            B::Popcount | B::Clz | B::Ctz | B::ReverseBits => self.bit_count(fx, b, args, span)?,
            _ => unreachable!("`{}` is not an integer function", b.name()),
        };
        Ok(Value::Rv(h, ty))
    }

    /// The error for `long`/`ulong` operands of a 32-bit polyfill.
    fn refuse_wide(&self, name: &str, ty: &Type, span: Span) -> Result<Int> {
        let t = Int::of(ty);
        if t.wide() {
            return Err(Error::coded(
                Code::Unsupported,
                span,
                format!(
                    "`{name}` of `{}` is not supported yet (only of 8- to 32-bit integers)",
                    self.program.display(ty)
                ),
            ));
        }
        Ok(t)
    }

    /// `absdiff(x, y)`: `|x - y|` as the unsigned type, which holds it
    /// without overflow.
    fn absdiff(&mut self, fx: &mut FnCtx, args: &[Expr], span: Span) -> Result<(H, Type)> {
        let (hs, ty) = self.operands(fx, "absdiff", args, 2, Kind::Integer, span)?;
        let t = Int::of(&ty);
        let mut ir = Ir { fx, span };
        let hi = ir.math(Mf::Max, &[hs[0], hs[1]]);
        let lo = ir.math(Mf::Min, &[hs[0], hs[1]]);
        // The difference wraps in i32 exactly as in u32.
        let mut d = ir.bin(Bo::Subtract, hi, lo);
        if t.signed() {
            d = ir.bitcast(d, ScalarKind::Uint);
        }
        Ok((d, ty.with_scalar(unsigned(t.scalar))))
    }

    /// `addsat(x, y)`, `subsat(x, y)`.
    fn saturating(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let (hs, ty) = self.operands(fx, name, args, 2, Kind::Integer, span)?;
        let t = self.refuse_wide(name, &ty, span)?;
        let (x, y) = (hs[0], hs[1]);
        let op = if b == Builtin::Addsat {
            Bo::Add
        } else {
            Bo::Subtract
        };
        let mut ir = Ir { fx, span };
        let h = if t.signed() && t.narrow() {
            // Exact in 32 bits: clamp to the type's range.
            let r = ir.bin(op, x, y);
            clamp_to_range(&mut ir, r, t)
        } else if t.signed() {
            signed_saturating(&mut ir, op, x, y, t)
        } else {
            unsigned_saturating(&mut ir, op, x, y, t)
        };
        Ok((h, ty))
    }

    /// `madsat(a, b, c)`: `a * b + c`, saturated.
    fn madsat(&mut self, fx: &mut FnCtx, args: &[Expr], span: Span) -> Result<(H, Type)> {
        let (hs, ty) = self.operands(fx, "madsat", args, 3, Kind::Integer, span)?;
        let t = self.refuse_wide("madsat", &ty, span)?;
        let (a, b, c) = (hs[0], hs[1], hs[2]);
        let mut ir = Ir { fx, span };
        if t.narrow() {
            // |a * b + c| < 2^32 for 16-bit operands: exact in 32 bits.
            let p = ir.bin(Bo::Multiply, a, b);
            let r = ir.bin(Bo::Add, p, c);
            return Ok((clamp_to_range(&mut ir, r, t), ty));
        }
        let (hi, lo) = full_product(&mut ir, a, b, t);
        let h = if t.signed() {
            signed_madsat(&mut ir, hi, lo, c, t)
        } else {
            // The 64-bit sum hi:lo + c fits in 32 bits iff its high word is 0.
            let s = ir.bin(Bo::Add, lo, c);
            let wrapped = ir.bin(Bo::Less, s, lo);
            let (one, zero) = (ir.u32(1, t.n), ir.u32(0, t.n));
            let carry = ir.select(wrapped, one, zero);
            let high = ir.bin(Bo::Add, hi, carry);
            let over = ir.bin(Bo::NotEqual, high, zero);
            let max = ir.u32(u32::MAX, t.n);
            ir.select(over, max, s)
        };
        Ok((h, ty))
    }

    /// `hadd(x, y) = (x + y) >> 1` and `rhadd(x, y) = (x + y + 1) >> 1`
    /// without the intermediate overflow: `(x & y) + ((x ^ y) >> 1)` and
    /// `(x | y) - ((x ^ y) >> 1)`, arithmetic shifts for signed types.
    fn halving_add(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let (hs, ty) = self.operands(fx, name, args, 2, Kind::Integer, span)?;
        self.refuse_wide(name, &ty, span)?;
        let (x, y) = (hs[0], hs[1]);
        let mut ir = Ir { fx, span };
        let one = ir.u32(1, size_of(&ty));
        let diff = ir.bin(Bo::ExclusiveOr, x, y);
        let half_diff = ir.bin(Bo::ShiftRight, diff, one);
        let h = if b == Builtin::Hadd {
            let common = ir.bin(Bo::And, x, y);
            ir.bin(Bo::Add, common, half_diff)
        } else {
            let either = ir.bin(Bo::InclusiveOr, x, y);
            ir.bin(Bo::Subtract, either, half_diff)
        };
        Ok((h, ty))
    }

    /// `mulhi(x, y)`: the high half of the double-width product;
    /// `madhi(a, b, c) = mulhi(a, b) + c`.
    fn mulhi(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let arity = if b == Builtin::Mulhi { 2 } else { 3 };
        let (hs, ty) = self.operands(fx, name, args, arity, Kind::Integer, span)?;
        let t = Int::of(&ty);
        let narrowed = self.narrows_wide_integers();
        let mut ir = Ir { fx, span };
        let mut h = if t.wide() && narrowed {
            // 64-bit values computed in their low 32 bits stand for that
            // word's sign or zero extension (`metal/wide_integers.rs`):
            // their product is exact in 64 bits, and the high half of the
            // 128-bit product is its sign (`long`) or 0 (`ulong`).
            if t.signed() {
                let word = Int {
                    scalar: Scalar::Int,
                    n: t.n,
                };
                let (hi, _) = full_product(&mut ir, hs[0], hs[1], word);
                let hi = ir.bitcast(hi, ScalarKind::Sint);
                let thirty_one = ir.u32(31, t.n);
                ir.bin(Bo::ShiftRight, hi, thirty_one)
            } else {
                ir.u32(0, t.n)
            }
        } else if t.narrow() {
            // The product of two 8- or 16-bit values is exact in 32 bits.
            let p = ir.bin(Bo::Multiply, hs[0], hs[1]);
            let shift = ir.u32(t.bits(), t.n);
            ir.bin(Bo::ShiftRight, p, shift)
        } else {
            let (hi, _) = full_product(&mut ir, hs[0], hs[1], t);
            if t.signed() {
                ir.bitcast(hi, ScalarKind::Sint)
            } else {
                hi
            }
        };
        if arity == 3 {
            h = ir.bin(Bo::Add, h, hs[2]);
            if t.narrow() {
                h = self.truncate(fx, h, &ty, span);
            }
        }
        Ok((h, ty))
    }

    /// `mul24(x, y)`, `mad24(x, y, z)`: the low 24 bits of `x` and `y`
    /// (sign-extended for `int`) multiplied, with 32-bit wrapping.
    fn mul24(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let arity = if b == Builtin::Mul24 { 2 } else { 3 };
        let (hs, ty) = self.operands(fx, name, args, arity, Kind::Integer, span)?;
        // Metal declares them for 32-bit integers only.
        if Int::of(&ty).bits() != 32 {
            return Err(self.no_overload(name, &ty, span));
        }
        let mut ir = Ir { fx, span };
        let (offset, count) = (ir.u32(0, 1), ir.u32(24, 1));
        let x = ir.math(Mf::ExtractBits, &[hs[0], offset, count]);
        let y = ir.math(Mf::ExtractBits, &[hs[1], offset, count]);
        let mut h = ir.bin(Bo::Multiply, x, y);
        if arity == 3 {
            h = ir.bin(Bo::Add, h, hs[2]);
        }
        Ok((h, ty))
    }

    /// `rotate(v, i)`: `v` rotated left by `i` modulo its width.
    fn rotate(&mut self, fx: &mut FnCtx, args: &[Expr], span: Span) -> Result<(H, Type)> {
        let (hs, ty) = self.operands(fx, "rotate", args, 2, Kind::Integer, span)?;
        let t = self.refuse_wide("rotate", &ty, span)?;
        let mut ir = Ir { fx, span };
        let mask = ir.u32(((1u64 << t.bits()) - 1) as u32, t.n);
        let mut v = hs[0];
        let mut i = hs[1];
        if t.signed() {
            v = ir.bitcast(v, ScalarKind::Uint);
            i = ir.bitcast(i, ScalarKind::Uint);
        }
        if t.narrow() {
            v = ir.bin(Bo::And, v, mask);
        }
        let width_mask = ir.u32(t.bits() - 1, t.n);
        let s = ir.bin(Bo::And, i, width_mask);
        // (width - s) & 31: WGSL takes shift amounts modulo 32, and for
        // s = 0 the right shift must give 0 (narrow) or v itself (32-bit).
        let width = ir.u32(t.bits(), t.n);
        let back = ir.bin(Bo::Subtract, width, s);
        let thirty_one = ir.u32(31, t.n);
        let back = ir.bin(Bo::And, back, thirty_one);
        let left = ir.bin(Bo::ShiftLeft, v, s);
        let right = ir.bin(Bo::ShiftRight, v, back);
        let mut r = ir.bin(Bo::InclusiveOr, left, right);
        if t.signed() {
            r = ir.bitcast(r, ScalarKind::Sint);
        }
        if t.narrow() {
            r = self.truncate(fx, r, &ty, span);
        }
        Ok((r, ty))
    }

    /// `extract_bits(x, offset, bits)` and `insert_bits(base, insert,
    /// offset, bits)`: WGSL's `extractBits`/`insertBits`, which agree with
    /// Metal wherever Metal defines them (`offset + bits` within the width).
    fn bit_field(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let values = if b == Builtin::ExtractBits { 1 } else { 2 };
        if args.len() != values + 2 {
            return Err(arity_error(name, values + 2, args.len(), span));
        }
        let (mut hs, ty) = self.operands(fx, name, &args[..values], values, Kind::Integer, span)?;
        for a in &args[values..] {
            hs.push(self.uint_argument(fx, name, a)?);
        }
        let fun = if values == 1 {
            Mf::ExtractBits
        } else {
            Mf::InsertBits
        };
        let mut h = Ir { fx, span }.math(fun, &hs);
        if values == 2 && Int::of(&ty).narrow() {
            // A field reaching the narrow sign bit changes the extension.
            h = self.truncate(fx, h, &ty, span);
        }
        Ok((h, ty))
    }

    /// `popcount`, `clz`, `ctz`, `reverse_bits`: WGSL's functions, counted
    /// over the type's own width for 8- and 16-bit types.
    fn bit_count(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<(H, Type)> {
        let name = b.name();
        let (hs, ty) = self.operands(fx, name, args, 1, Kind::Integer, span)?;
        let t = Int::of(&ty);
        let x = hs[0];
        let fun = match b {
            Builtin::Popcount => Mf::CountOneBits,
            Builtin::Clz => Mf::CountLeadingZeros,
            Builtin::Ctz => Mf::CountTrailingZeros,
            _ => Mf::ReverseBits,
        };
        let mut ir = Ir { fx, span };
        if !t.narrow() {
            return Ok((ir.math(fun, &[x]), ty));
        }
        let bits = t.bits();
        let mask = t.lit(&mut ir, (1i64 << bits) - 1);
        let h = match fun {
            Mf::CountOneBits => {
                let low = ir.bin(Bo::And, x, mask);
                ir.math(fun, &[low])
            }
            Mf::CountLeadingZeros => {
                let low = ir.bin(Bo::And, x, mask);
                let c = ir.math(fun, &[low]);
                let excess = t.lit(&mut ir, i64::from(32 - bits));
                ir.bin(Bo::Subtract, c, excess)
            }
            Mf::CountTrailingZeros => {
                // ctz(0) is 32 in WGSL and the width in Metal.
                let c = ir.math(fun, &[x]);
                let width = t.lit(&mut ir, i64::from(bits));
                ir.math(Mf::Min, &[c, width])
            }
            _ => {
                // The reversed field lands in the top bits; an arithmetic
                // shift brings it down sign-extended for signed types.
                let r = ir.math(fun, &[x]);
                let shift = ir.u32(32 - bits, t.n);
                ir.bin(Bo::ShiftRight, r, shift)
            }
        };
        Ok((h, ty))
    }
}

/// `min(max(r, MIN), MAX)` for the narrow type `t`.
fn clamp_to_range(ir: &mut Ir, r: H, t: Int) -> H {
    let (min, max) = t.range();
    let lo = t.lit(ir, min);
    let hi = t.lit(ir, max);
    ir.math(Mf::Clamp, &[r, lo, hi])
}

/// `x ± y` saturated, for unsigned types of any width.
fn unsigned_saturating(ir: &mut Ir, op: Bo, x: H, y: H, t: Int) -> H {
    let r = ir.bin(op, x, y);
    let (_, max) = t.range();
    let max = t.lit(ir, max);
    if op == Bo::Subtract {
        let below = ir.bin(Bo::Greater, y, x);
        let zero = ir.u32(0, t.n);
        return ir.select(below, zero, r);
    }
    if t.narrow() {
        // Both operands are below 2^16: the sum is exact.
        return ir.math(Mf::Min, &[r, max]);
    }
    let wrapped = ir.bin(Bo::Less, r, x);
    ir.select(wrapped, max, r)
}

/// `x ± y` saturated for `int`: the wrapped result overflowed iff its sign
/// differs from both operands' (add) or from `x` with `x`, `y` of opposite
/// signs (subtract); it then saturates towards `x`'s sign.
fn signed_saturating(ir: &mut Ir, op: Bo, x: H, y: H, t: Int) -> H {
    let r = ir.bin(op, x, y);
    let rx = ir.bin(Bo::ExclusiveOr, x, r);
    let other = if op == Bo::Add {
        ir.bin(Bo::ExclusiveOr, y, r)
    } else {
        ir.bin(Bo::ExclusiveOr, x, y)
    };
    let both = ir.bin(Bo::And, rx, other);
    let zero = ir.i32(0, t.n);
    let overflow = ir.bin(Bo::Less, both, zero);
    let saturated = toward_sign(ir, x, t);
    ir.select(overflow, saturated, r)
}

/// `INT_MIN` where `v < 0`, else `INT_MAX` (`v` an `int` value or vector).
fn toward_sign(ir: &mut Ir, v: H, t: Int) -> H {
    let zero = ir.i32(0, t.n);
    let negative = ir.bin(Bo::Less, v, zero);
    let min = ir.i32(i32::MIN, t.n);
    let max = ir.i32(i32::MAX, t.n);
    ir.select(negative, min, max)
}

/// The double-width product of two values of `t` (`int` or `uint`, or
/// native `long` or `ulong`) as unsigned words `(high, low)` of `t`'s width.
fn full_product(ir: &mut Ir, a: H, b: H, t: Int) -> (H, H) {
    if !t.signed() {
        return unsigned_product(ir, a, b, t);
    }
    let au = ir.bitcast(a, ScalarKind::Uint);
    let bu = ir.bitcast(b, ScalarKind::Uint);
    let (hi, lo) = unsigned_product(ir, au, bu, t);
    // As two's complement, a = au - 2^32 when a < 0 (2^64 for `long`), so
    // the signed high word is the unsigned one minus bu (if a < 0) and
    // minus au (if b < 0).
    let (zero, zero_u) = if t.wide() {
        (ir.lit(Literal::I64(0), t.n), ir.lit(Literal::U64(0), t.n))
    } else {
        (ir.i32(0, t.n), ir.u32(0, t.n))
    };
    let a_negative = ir.bin(Bo::Less, a, zero);
    let b_negative = ir.bin(Bo::Less, b, zero);
    let fix_a = ir.select(a_negative, bu, zero_u);
    let fix_b = ir.select(b_negative, au, zero_u);
    let hi = ir.bin(Bo::Subtract, hi, fix_a);
    (ir.bin(Bo::Subtract, hi, fix_b), lo)
}

/// The double-width product of two unsigned values of `t`'s width (`u32`,
/// or native `u64`) from half-width limbs, whose partial products and
/// column sums all fit in the width.
fn unsigned_product(ir: &mut Ir, a: H, b: H, t: Int) -> (H, H) {
    let n = t.n;
    let (mask, sixteen) = if t.wide() {
        (ir.lit(Literal::U64(0xffff_ffff), n), ir.u32(32, n))
    } else {
        (ir.u32(0xffff, n), ir.u32(16, n))
    };
    let limbs = |ir: &mut Ir, v: H| {
        let low = ir.bin(Bo::And, v, mask);
        let high = ir.bin(Bo::ShiftRight, v, sixteen);
        (low, high)
    };
    let (a0, a1) = limbs(ir, a);
    let (b0, b1) = limbs(ir, b);
    let p00 = ir.bin(Bo::Multiply, a0, b0);
    let p01 = ir.bin(Bo::Multiply, a0, b1);
    let p10 = ir.bin(Bo::Multiply, a1, b0);
    let p11 = ir.bin(Bo::Multiply, a1, b1);
    let (p00_lo, p00_hi) = limbs(ir, p00);
    let (p01_lo, p01_hi) = limbs(ir, p01);
    let (p10_lo, p10_hi) = limbs(ir, p10);
    // Bits 16..48: below 3 * 2^16, no overflow.
    let mid = ir.bin(Bo::Add, p00_hi, p01_lo);
    let mid = ir.bin(Bo::Add, mid, p10_lo);
    let (mid_lo, mid_hi) = limbs(ir, mid);
    let hi = ir.bin(Bo::Add, p11, p01_hi);
    let hi = ir.bin(Bo::Add, hi, p10_hi);
    let hi = ir.bin(Bo::Add, hi, mid_hi);
    let mid_shifted = ir.bin(Bo::ShiftLeft, mid_lo, sixteen);
    let lo = ir.bin(Bo::InclusiveOr, mid_shifted, p00_lo);
    (hi, lo)
}

/// `madsat` for `int`: the 64-bit sum of the product `hi:lo` and `c`
/// (sign-extended), saturated to 32 bits.
fn signed_madsat(ir: &mut Ir, hi: H, lo: H, c: H, t: Int) -> H {
    let n = t.n;
    let cu = ir.bitcast(c, ScalarKind::Uint);
    let s = ir.bin(Bo::Add, lo, cu);
    let wrapped = ir.bin(Bo::Less, s, lo);
    let (one, zero) = (ir.u32(1, n), ir.u32(0, n));
    let carry = ir.select(wrapped, one, zero);
    let thirty_one = ir.u32(31, n);
    let c_sign = ir.bin(Bo::ShiftRight, c, thirty_one);
    let c_high = ir.bitcast(c_sign, ScalarKind::Uint);
    let high = ir.bin(Bo::Add, hi, c_high);
    let high = ir.bin(Bo::Add, high, carry);
    // It fits iff the high word is the sign extension of the low one.
    let si = ir.bitcast(s, ScalarKind::Sint);
    let s_sign = ir.bin(Bo::ShiftRight, si, thirty_one);
    let s_high = ir.bitcast(s_sign, ScalarKind::Uint);
    let fits = ir.bin(Bo::Equal, high, s_high);
    let high_signed = ir.bitcast(high, ScalarKind::Sint);
    let saturated = toward_sign(ir, high_signed, t);
    ir.select(fits, si, saturated)
}
