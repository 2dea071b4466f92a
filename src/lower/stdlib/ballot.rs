//! `simd_ballot(b)` and `simd_active_threads_mask()` (MSL §6.9.2): a
//! `simd_vote`, whose `vote_t` is a `uint64_t` with bit `l` for lane `l`.
//!
//! The vote is lowered to that `ulong` itself, so `(simd_vote::vote_t)v`,
//! `uint64_t(v)` and `as_type<uint2>(...)` of it are ordinary conversions;
//! `simd_vote`'s `all()`/`any()` members are not provided. The mask comes
//! from `subgroupBallot` (the adapter's lanes: words 0 and 1 of its
//! `vec4<u32>`) or, with 32-lane emulation, from the emulated ballot (one
//! word; Metal's upper 32 bits are 0). Threads outside Metal's grid never
//! vote. WebGPU has no 64-bit integers, so `--target webgpu` refuses it.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::stdlib::simd::{arity, bin};
use crate::lower::stdlib::Builtin;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Literal, ScalarKind, Statement};

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
        if !self.settings.native_extensions {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                span,
                format!("`{name}` returns a `simd_vote`, a 64-bit mask (`uint64_t`): WebGPU has no 64-bit integers"),
            )
            .note("`--target wgpu` (`Target::Wgpu`) has them"));
        }
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
}
