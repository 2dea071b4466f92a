//! `simd_ballot(b)` and `simd_active_threads_mask()` (MSL §6.9.2): a
//! `simd_vote`, whose `vote_t` is a `uint64_t` with bit `l` for lane `l`.
//!
//! The vote is lowered to that `ulong` itself, so `(simd_vote::vote_t)v`,
//! `uint64_t(v)` and `as_type<uint2>(...)` of it are ordinary conversions,
//! and its `all()`/`any()` members are calls on that `ulong`. The mask comes
//! from `subgroupBallot` (the adapter's lanes: words 0 and 1 of its
//! `vec4<u32>`) or, with 32-lane emulation, from the emulated ballot (one
//! word; Metal's upper 32 bits are 0). Threads outside Metal's grid never
//! vote. Where 64-bit integers are held in their low word (`--target
//! webgpu`, `wide_integers`), the mask is that word alone: exact for
//! Apple's 32 lanes, so the vote needs neither `shader-int64` nor a
//! warning; with native subgroups wider than 32 lanes (AMD's 64), lanes
//! 32..63 are left out, as any 64-bit value's high word is there.
//!
//! `quad_ballot(b)` and `quad_active_threads_mask()` (MSL §6.9.3) give a
//! `quad_vote`, lowered to its `vote_t`, a `ushort` whose bottom four bits
//! are the quad's threads (bit `i` for `thread_index_in_quadgroup` `i`).
//!
//! The members, as MSL §6.9.2/§6.9.3 define them: `all()` is true when every
//! bit of the group's threads is set (the 32 lanes of Apple's SIMD-group,
//! `threads_per_simdgroup` with native subgroups; the quad's bottom four
//! bits), so a SIMD-group or quad that a short threadgroup or a ragged grid
//! leaves partly empty is never `all()` of `simd_active_threads_mask()`;
//! `any()` is true when any of those bits is set.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::cxx::args::Arg;
use crate::lower::stdlib::simd::{arity, bin, select};
use crate::lower::stdlib::Builtin;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{Expr, Ident};
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, ScalarKind, Statement};

impl Lowerer<'_, '_> {
    /// `simd_ballot(b)`: the lanes whose `b` is true; and
    /// `simd_active_threads_mask()`: the lanes that run.
    pub(in crate::lower) fn simd_ballot(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let name = b.name();
        let predicate = if b == Builtin::SimdBallot {
            Some(self.vote_argument(fx, name, args, span)?)
        } else {
            arity(name, args, &[0], span)?;
            None
        };
        self.check_64_bit(span)?;
        let predicate = match (predicate, self.active(fx, span)) {
            (Some(p), Some(a)) => Some(bin(fx, Bo::LogicalAnd, p, a, span)),
            (p, a) => p.or(a),
        };
        // Every thread votes explicitly: naga writes a ballot without a
        // predicate as `subgroupBallot()`, which Tint refuses.
        let predicate =
            predicate.unwrap_or_else(|| fx.add(Expression::Literal(Literal::Bool(true)), span));
        let ballot = if self.emulates_simd() {
            self.emulated_ballot(fx, predicate, span)?
        } else {
            let ballot = fx.add_result(Expression::SubgroupBallotResult, span);
            fx.push(
                Statement::SubgroupBallot {
                    result: ballot,
                    predicate: Some(predicate),
                },
                span,
            );
            ballot
        };
        // 64-bit integers held in their low word (`--target webgpu`): the
        // mask's first word is all of it for Apple's 32 lanes.
        if self.narrows_wide_integers() {
            let low = fx.add(
                Expression::AccessIndex {
                    base: ballot,
                    index: 0,
                },
                span,
            );
            return Ok(Value::Rv(low, Type::Scalar(Scalar::ULong)));
        }
        let mut words = Vec::new();
        for index in 0..2 {
            let word = fx.add(
                Expression::AccessIndex {
                    base: ballot,
                    index,
                },
                span,
            );
            let wide = Expression::As {
                expr: word,
                kind: ScalarKind::Uint,
                convert: Some(8),
            };
            words.push(fx.add(wide, span));
        }
        let shift = self.u32_lit(fx, 32, span);
        let high = bin(fx, Bo::ShiftLeft, words[1], shift, span);
        let mask = bin(fx, Bo::InclusiveOr, words[0], high, span);
        Ok(Value::Rv(mask, Type::Scalar(Scalar::ULong)))
    }

    /// `v.all()`, `v.any()` of a `simd_vote` (its `ulong` mask) or a
    /// `quad_vote` (its `ushort` mask); `None` for other objects.
    pub(in crate::lower) fn vote_method(
        &mut self,
        fx: &mut FnCtx,
        object: &Arg,
        method: &Ident,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        let simd = match object.ty {
            Type::Scalar(Scalar::ULong) => true,
            Type::Scalar(Scalar::UShort) => false,
            _ => return Ok(None),
        };
        let all = match method.name.as_str() {
            "all" => true,
            "any" => false,
            _ => return Ok(None),
        };
        let vote = if simd { "simd_vote" } else { "quad_vote" };
        if !args.is_empty() {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!(
                    "`{vote}::{}()` takes no arguments, {} given",
                    method.name,
                    args.len()
                ),
            ));
        }
        let (v, _) = self.load(fx, object.value.clone(), object.span)?;
        let group = if simd {
            self.simd_group_bits(fx, span)?
        } else {
            self.u32_lit(fx, 0xF, span)
        };
        let set = bin(fx, Bo::And, v, group, span);
        let test = if all {
            bin(fx, Bo::Equal, set, group, span)
        } else {
            let zero = if simd && !self.narrows_wide_integers() {
                fx.add(Expression::Literal(Literal::U64(0)), span)
            } else {
                self.u32_lit(fx, 0, span)
            };
            bin(fx, Bo::NotEqual, set, zero, span)
        };
        Ok(Some(Value::Rv(test, Type::BOOL)))
    }

    /// The `ulong` mask of a SIMD-group's lanes: the low
    /// `threads_per_simdgroup` bits (32 with the emulation); in its low
    /// word where 64-bit integers are held so.
    fn simd_group_bits(&mut self, fx: &mut FnCtx, span: Span) -> Result<Handle<Expression>> {
        self.check_64_bit(span)?;
        let width = self.simd_size(fx, span);
        if self.narrows_wide_integers() {
            let one = self.u32_lit(fx, 1, span);
            let low = bin(fx, Bo::ShiftLeft, one, width, span);
            let low = bin(fx, Bo::Subtract, low, one, span);
            let every = self.u32_lit(fx, u32::MAX, span);
            let thirty_two = self.u32_lit(fx, 32, span);
            let full = bin(fx, Bo::GreaterEqual, width, thirty_two, span);
            return Ok(select(fx, full, every, low, span));
        }
        let one = fx.add(Expression::Literal(Literal::U64(1)), span);
        // `1 << 64` is not defined: a 64-lane group is every bit.
        let low = bin(fx, Bo::ShiftLeft, one, width, span);
        let low = bin(fx, Bo::Subtract, low, one, span);
        let every = fx.add(Expression::Literal(Literal::U64(u64::MAX)), span);
        let sixty_four = self.u32_lit(fx, 64, span);
        let full = bin(fx, Bo::GreaterEqual, width, sixty_four, span);
        Ok(select(fx, full, every, low, span))
    }

    /// `quad_vote(v)`: `v`'s bottom four bits, the quad's threads.
    pub(in crate::lower) fn quad_vote_bits(
        &mut self,
        fx: &mut FnCtx,
        value: Value,
        span: Span,
    ) -> Result<Value> {
        let (v, ty) = self.load(fx, value, span)?;
        let four = self.u32_lit(fx, 0xF, span);
        Ok(Value::Rv(bin(fx, Bo::And, v, four, span), ty))
    }
}
