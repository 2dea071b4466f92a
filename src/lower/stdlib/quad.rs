//! Quad-group functions (MSL §6.9.3) on naga subgroup operations: a quad is
//! four consecutive lanes of a SIMD-group (MSL: "quads divide across the
//! SIMD-group"), so each function is a subgroup gather with lane arithmetic.
//!
//! Metal's quad functions only see the quad's threads that exist and run
//! here. WGSL has no clustered reductions, and reading a lane that is not
//! running gives an indeterminate value, so reductions, scans and votes take
//! a ballot of the running threads (inside Metal's grid) and leave the
//! others out.

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::stdlib::simd::{arity, bin, no_helper_threads, select, Operand};
use crate::lower::stdlib::Builtin;
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;
use crate::types::{Scalar, Type};
use naga::{
    BinaryOperator as Bo, Direction, Expression, GatherMode, Handle, MathFunction, Statement,
    SubgroupOperation as Op,
};

/// What a quad-group function name stands for.
enum Quad {
    Reduce(Op),
    /// Add/Mul; inclusive (true) or exclusive.
    Scan(Op, bool),
    Vote(Op),
    /// `quad_shuffle` and `quad_broadcast`.
    Lane,
    Xor,
    /// Up (true) or down, keeping the own value at the quad's edge.
    Shift(bool),
    /// Rotate up (true) or down.
    Rotate(bool),
    BroadcastFirst,
    IsFirst,
    /// `quad_shuffle_and_fill_up` (true) / `_down` (false).
    Fill(bool),
    IsHelper,
    Ballot,
}

/// What the quad-group builtin `b` does.
fn quad_function(b: Builtin) -> Quad {
    use Builtin as B;
    use Quad::*;
    match b {
        B::QuadSum => Reduce(Op::Add),
        B::QuadProduct => Reduce(Op::Mul),
        B::QuadMin => Reduce(Op::Min),
        B::QuadMax => Reduce(Op::Max),
        B::QuadAnd => Reduce(Op::And),
        B::QuadOr => Reduce(Op::Or),
        B::QuadXor => Reduce(Op::Xor),
        B::QuadPrefixInclusiveSum => Scan(Op::Add, true),
        B::QuadPrefixInclusiveProduct => Scan(Op::Mul, true),
        B::QuadPrefixExclusiveSum => Scan(Op::Add, false),
        B::QuadPrefixExclusiveProduct => Scan(Op::Mul, false),
        B::QuadAll => Vote(Op::All),
        B::QuadAny => Vote(Op::Any),
        B::QuadShuffle | B::QuadBroadcast => Lane,
        B::QuadShuffleXor => Xor,
        B::QuadShuffleUp => Shift(true),
        B::QuadShuffleDown => Shift(false),
        B::QuadShuffleRotateUp => Rotate(true),
        B::QuadShuffleRotateDown => Rotate(false),
        B::QuadShuffleAndFillUp => Fill(true),
        B::QuadShuffleAndFillDown => Fill(false),
        B::QuadBroadcastFirst => BroadcastFirst,
        B::QuadIsFirst => IsFirst,
        B::QuadIsHelperThread => IsHelper,
        B::QuadBallot | B::QuadActiveThreadsMask => Ballot,
        _ => unreachable!("`{}` is not a quad-group function", b.name()),
    }
}

/// Where the calling thread sits in its quad.
struct Place {
    /// SIMD lane.
    lane: Handle<Expression>,
    /// Index in the quad, 0..4.
    index: Handle<Expression>,
    /// Lane of the quad's first thread.
    base: Handle<Expression>,
}

impl Lowerer<'_, '_> {
    /// A call of the quad-group function `b` ([`Family::Quad`]).
    ///
    /// [`Family::Quad`]: crate::lower::stdlib::Family::Quad
    pub(in crate::lower) fn quad_call(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let name = b.name();
        let function = quad_function(b);
        let value = match function {
            Quad::Reduce(op) => self.quad_reduce(fx, name, op, args, span)?,
            Quad::Scan(op, inclusive) => self.quad_scan(fx, name, op, inclusive, args, span)?,
            Quad::Vote(op) => self.quad_vote(fx, name, op, args, span)?,
            Quad::Lane | Quad::Xor | Quad::Shift(_) | Quad::Rotate(_) => {
                self.quad_move(fx, name, &function, args, span)?
            }
            Quad::BroadcastFirst => {
                let [arg] = arity(name, args, &[1], span)? else {
                    unreachable!()
                };
                let x = self.subgroup_operand(fx, name, arg, false)?;
                let q = self.quad_place(fx, span);
                let first = self.quad_first(fx, span)?;
                let source = bin(fx, Bo::InclusiveOr, q.base, first, span);
                let r = self.gather(fx, GatherMode::Shuffle(source), x.h, &x.ty, span)?;
                self.subgroup_result(fx, r, &x, span)?
            }
            Quad::IsFirst => {
                arity(name, args, &[0], span)?;
                let q = self.quad_place(fx, span);
                let first = self.quad_first(fx, span)?;
                Value::Rv(bin(fx, Bo::Equal, q.index, first, span), Type::BOOL)
            }
            Quad::Fill(up) => {
                arity(name, args, &[3, 4], span)?;
                let four = self.u32_lit(fx, 4, span);
                self.shuffle_and_fill(fx, name, up, args, four, span)?
            }
            Quad::IsHelper => no_helper_threads(fx, name, args, span)?,
            Quad::Ballot => {
                // A `quad_vote`: its `ushort` `vote_t` (`ballot.rs`).
                let predicate = if b == Builtin::QuadBallot {
                    Some(self.vote_argument(fx, name, args, span)?)
                } else {
                    arity(name, args, &[0], span)?;
                    None
                };
                let mask = self.quad_ballot(fx, predicate, span);
                Value::Rv(mask, Type::Scalar(Scalar::UShort))
            }
        };
        Ok(value)
    }

    fn quad_place(&mut self, fx: &mut FnCtx, span: Span) -> Place {
        let lane = self.simd_lane(fx, span);
        let three = self.u32_lit(fx, 3, span);
        let index = bin(fx, Bo::And, lane, three, span);
        let high = self.u32_lit(fx, !3, span);
        let base = bin(fx, Bo::And, lane, high, span);
        Place { lane, index, base }
    }

    /// A 4-bit mask of the quad's threads that run, exist for Metal, and
    /// (when given) have `predicate` true: bit `i` for quad index `i`.
    fn quad_ballot(
        &mut self,
        fx: &mut FnCtx,
        predicate: Option<Handle<Expression>>,
        span: Span,
    ) -> Handle<Expression> {
        let predicate = match (predicate, self.active(fx, span)) {
            (Some(p), Some(a)) => Some(bin(fx, Bo::LogicalAnd, p, a, span)),
            (p, a) => p.or(a),
        };
        // WGSL's `subgroupBallot` takes its predicate; for a ballot without
        // one naga writes `subgroupBallot()`, which only naga's parser takes
        // (Tint refuses it), so every thread votes `true` explicitly.
        let predicate = predicate
            .unwrap_or_else(|| fx.add(Expression::Literal(naga::Literal::Bool(true)), span));
        let q = self.quad_place(fx, span);
        let ballot = if self.emulates_simd() {
            self.emulated_ballot(fx, predicate, span)
                .expect("`uint` operations lower")
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
        // Lane l is bit l % 32 of word l / 32; a quad never straddles words.
        let five = self.u32_lit(fx, 5, span);
        let word_index = bin(fx, Bo::ShiftRight, q.lane, five, span);
        let word = fx.add(
            Expression::Access {
                base: ballot,
                index: word_index,
            },
            span,
        );
        let thirty_one = self.u32_lit(fx, 31, span);
        let shift = bin(fx, Bo::And, q.base, thirty_one, span);
        let bits = bin(fx, Bo::ShiftRight, word, shift, span);
        let fifteen = self.u32_lit(fx, 15, span);
        bin(fx, Bo::And, bits, fifteen, span)
    }

    /// True if quad index `index` is set in the 4-bit `mask`.
    fn has(
        &mut self,
        fx: &mut FnCtx,
        mask: Handle<Expression>,
        index: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let bits = bin(fx, Bo::ShiftRight, mask, index, span);
        let one = self.u32_lit(fx, 1, span);
        let bit = bin(fx, Bo::And, bits, one, span);
        let zero = self.u32_lit(fx, 0, span);
        bin(fx, Bo::NotEqual, bit, zero, span)
    }

    /// The quad index of the quad's first thread that exists.
    fn quad_first(&mut self, fx: &mut FnCtx, span: Span) -> Result<Handle<Expression>> {
        let present = self.quad_ballot(fx, None, span);
        Ok(fx.add(
            Expression::Math {
                fun: MathFunction::CountTrailingZeros,
                arg: present,
                arg1: None,
                arg2: None,
                arg3: None,
            },
            span,
        ))
    }

    /// `a op b` for a reduction operator.
    fn combine(
        &mut self,
        fx: &mut FnCtx,
        op: Op,
        a: Handle<Expression>,
        b: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let math = |fx: &mut FnCtx, fun| {
            fx.add(
                Expression::Math {
                    fun,
                    arg: a,
                    arg1: Some(b),
                    arg2: None,
                    arg3: None,
                },
                span,
            )
        };
        match op {
            Op::Min => math(fx, MathFunction::Min),
            Op::Max => math(fx, MathFunction::Max),
            Op::Mul => bin(fx, Bo::Multiply, a, b, span),
            Op::And => bin(fx, Bo::And, a, b, span),
            Op::Or => bin(fx, Bo::InclusiveOr, a, b, span),
            Op::Xor => bin(fx, Bo::ExclusiveOr, a, b, span),
            _ => bin(fx, Bo::Add, a, b, span),
        }
    }

    /// `quad_sum` etc. as a butterfly, so that every thread of the quad
    /// gets the same (float) result: each pair of lanes {0,1}, {2,3}
    /// combines its threads that exist, then each lane adds the other
    /// pair's partial result, read from whichever thread of that pair
    /// exists (its Y neighbour, else its diagonal one).
    fn quad_reduce(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        op: Op,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let [arg] = arity(name, args, &[1], span)? else {
            unreachable!()
        };
        let bitwise = matches!(op, Op::And | Op::Or | Op::Xor);
        let x = self.subgroup_operand(fx, name, arg, bitwise)?;
        let present = self.quad_ballot(fx, None, span);
        let q = self.quad_place(fx, span);
        let neighbour = |this: &mut Self, fx: &mut FnCtx, flip: u32| {
            let flip = this.u32_lit(fx, flip, span);
            let lane = bin(fx, Bo::ExclusiveOr, q.index, flip, span);
            this.has(fx, present, lane, span)
        };
        let other = self.gather(fx, GatherMode::QuadSwap(Direction::X), x.h, &x.ty, span)?;
        let both = self.combine(fx, op, x.h, other, span);
        let has_x = neighbour(self, fx, 1);
        let pair = select(fx, has_x, both, x.h, span);
        let y = self.gather(fx, GatherMode::QuadSwap(Direction::Y), pair, &x.ty, span)?;
        let diagonal = self.gather(
            fx,
            GatherMode::QuadSwap(Direction::Diagonal),
            pair,
            &x.ty,
            span,
        )?;
        let has_y = neighbour(self, fx, 2);
        let has_diagonal = neighbour(self, fx, 3);
        let other_pair = select(fx, has_y, y, diagonal, span);
        let has_pair = bin(fx, Bo::LogicalOr, has_y, has_diagonal, span);
        let all = self.combine(fx, op, pair, other_pair, span);
        let r = select(fx, has_pair, all, pair, span);
        self.subgroup_result(fx, r, &x, span)
    }

    /// `quad_prefix_{inclusive,exclusive}_{sum,product}`: combines the
    /// values of the lower quad lanes that exist, nearest first.
    fn quad_scan(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        op: Op,
        inclusive: bool,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let [arg] = arity(name, args, &[1], span)? else {
            unreachable!()
        };
        let x = self.subgroup_operand(fx, name, arg, false)?;
        let present = self.quad_ballot(fx, None, span);
        let q = self.quad_place(fx, span);
        let mut acc = if inclusive {
            x.h
        } else {
            self.identity(fx, op, &x.ty, span)?
        };
        for k in 1..4 {
            let delta = self.u32_lit(fx, k, span);
            let lower = self.gather(fx, GatherMode::ShuffleUp(delta), x.h, &x.ty, span)?;
            let in_quad = bin(fx, Bo::GreaterEqual, q.index, delta, span);
            let source = bin(fx, Bo::Subtract, q.index, delta, span);
            // `source` wrapped where `in_quad` is false; `has` then reads a
            // meaningless bit, which the `&&` ignores.
            let exists = self.has(fx, present, source, span);
            let take = bin(fx, Bo::LogicalAnd, in_quad, exists, span);
            let both = self.combine(fx, op, lower, acc, span);
            acc = select(fx, take, both, acc, span);
        }
        self.subgroup_result(fx, acc, &x, span)
    }

    /// `quad_all(b)`, `quad_any(b)` from a ballot of the quad.
    fn quad_vote(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        op: Op,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let b = self.vote_argument(fx, name, args, span)?;
        // all: no existing thread has `b` false; any: some has it true.
        let (predicate, test) = if op == Op::All {
            let not = fx.add(
                Expression::Unary {
                    op: naga::UnaryOperator::LogicalNot,
                    expr: b,
                },
                span,
            );
            (not, Bo::Equal)
        } else {
            (b, Bo::NotEqual)
        };
        let mask = self.quad_ballot(fx, Some(predicate), span);
        let zero = self.u32_lit(fx, 0, span);
        Ok(Value::Rv(bin(fx, test, mask, zero, span), Type::BOOL))
    }

    /// Lane-moving quad functions: `f(data, lane or mask or delta)`.
    fn quad_move(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        function: &Quad,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let [data, index] = arity(name, args, &[2], span)? else {
            unreachable!()
        };
        let x = self.subgroup_operand(fx, name, data, false)?;
        if let Some(r) = self.quad_constant_move(fx, function, &x, index, span)? {
            return self.subgroup_result(fx, r, &x, span);
        }
        let i = self.lane_operand(fx, name, index)?;
        let q = self.quad_place(fx, span);
        let three = self.u32_lit(fx, 3, span);
        let r = match *function {
            Quad::Shift(up) => {
                let (mode, inside) = if up {
                    (
                        GatherMode::ShuffleUp(i),
                        bin(fx, Bo::GreaterEqual, q.index, i, span),
                    )
                } else {
                    let four = self.u32_lit(fx, 4, span);
                    let room = bin(fx, Bo::Subtract, four, q.index, span);
                    (GatherMode::ShuffleDown(i), bin(fx, Bo::Less, i, room, span))
                };
                let moved = self.gather(fx, mode, x.h, &x.ty, span)?;
                select(fx, inside, moved, x.h, span)
            }
            Quad::Xor => {
                let m = bin(fx, Bo::And, i, three, span);
                let source = bin(fx, Bo::ExclusiveOr, q.lane, m, span);
                self.gather(fx, GatherMode::Shuffle(source), x.h, &x.ty, span)?
            }
            _ => {
                // A quad index: given, or rotated (mod 4, wrapping included).
                let index = match *function {
                    Quad::Rotate(true) => bin(fx, Bo::Subtract, q.index, i, span),
                    Quad::Rotate(false) => bin(fx, Bo::Add, q.index, i, span),
                    _ => i,
                };
                let index = bin(fx, Bo::And, index, three, span);
                let source = bin(fx, Bo::InclusiveOr, q.base, index, span);
                self.gather(fx, GatherMode::Shuffle(source), x.h, &x.ty, span)?
            }
        };
        self.subgroup_result(fx, r, &x, span)
    }

    /// `quad_broadcast`/`quad_shuffle` with a constant lane and
    /// `quad_shuffle_xor` with a constant mask map onto WGSL's quad
    /// built-ins; `None` otherwise.
    fn quad_constant_move(
        &mut self,
        fx: &mut FnCtx,
        function: &Quad,
        x: &Operand,
        index: &Expr,
        span: Span,
    ) -> Result<Option<Handle<Expression>>> {
        let Some(c) = self.constant_lane(fx, index) else {
            return Ok(None);
        };
        let mode = match (function, c & 3) {
            (Quad::Lane, c) => {
                let lane = self.u32_lit(fx, c, index.span);
                GatherMode::QuadBroadcast(lane)
            }
            (Quad::Xor, 0) => return Ok(Some(x.h)),
            (Quad::Xor, 1) => GatherMode::QuadSwap(Direction::X),
            (Quad::Xor, 2) => GatherMode::QuadSwap(Direction::Y),
            (Quad::Xor, _) => GatherMode::QuadSwap(Direction::Diagonal),
            _ => return Ok(None),
        };
        self.gather(fx, mode, x.h, &x.ty, span).map(Some)
    }
}
