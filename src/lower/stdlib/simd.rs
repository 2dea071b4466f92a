//! SIMD-group functions (MSL §6.9.2) → naga subgroup operations (mapping
//! doc §6.8); the quad-group ones are in `quad.rs`.
//!
//! Three differences between Metal and WGSL shape this file:
//! - Threads outside Metal's grid do not exist, but in kernels with barriers
//!   they run along (see [`Lowerer::active`]): they feed each reduction and
//!   scan its identity, and never count as the "first" thread.
//! - naga only has Add/Mul scans (its WGSL writer panics on others), takes
//!   `subgroupBroadcast` lanes only as constants, and refuses `bool`
//!   operands except for All/Any.
//! - Metal's shuffle up/down keep the caller's own value where the source
//!   lane is outside the SIMD-group; WGSL leaves that value indeterminate.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::stdlib::Builtin;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval;
use crate::source_map::Span;
use crate::syntax::ast::{BinaryOp, Expr, ExprKind};
use crate::types::{Scalar, Type};
use naga::{
    BinaryOperator as Bo, CollectiveOperation as Co, Expression, GatherMode, Handle, Literal,
    Statement, SubgroupOperation as Op,
};

/// A lane-moving SIMD-group function: where each thread reads from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Move {
    /// `simd_shuffle`: the given lane.
    Lane,
    /// `simd_broadcast`: the given (uniform) lane.
    Broadcast,
    /// `simd_shuffle_xor`: lane ^ mask.
    Xor,
    /// `simd_shuffle_up`: lane - delta, or keep.
    Up,
    /// `simd_shuffle_down`: lane + delta, or keep.
    Down,
    /// `simd_shuffle_rotate_up`: (lane - delta) mod width.
    RotateUp,
    /// `simd_shuffle_rotate_down`: (lane + delta) mod width.
    RotateDown,
}

/// What a SIMD-group function name stands for.
enum Simd {
    Reduce(Op),
    Scan(Op, Co),
    Move(Move),
    BroadcastFirst,
    Vote(Op),
    IsFirst,
    /// `simd_shuffle_and_fill_up` (true) / `_down` (false).
    Fill(bool),
    /// Helper threads only exist in fragment functions.
    IsHelper,
    /// Returns `simd_vote`.
    Ballot,
}

/// What the SIMD-group builtin `b` does.
fn simd_function(b: Builtin) -> Simd {
    use Builtin as B;
    use Simd::*;
    match b {
        B::SimdSum => Reduce(Op::Add),
        B::SimdProduct => Reduce(Op::Mul),
        B::SimdMin => Reduce(Op::Min),
        B::SimdMax => Reduce(Op::Max),
        B::SimdAnd => Reduce(Op::And),
        B::SimdOr => Reduce(Op::Or),
        B::SimdXor => Reduce(Op::Xor),
        B::SimdPrefixInclusiveSum => Scan(Op::Add, Co::InclusiveScan),
        B::SimdPrefixInclusiveProduct => Scan(Op::Mul, Co::InclusiveScan),
        B::SimdPrefixExclusiveSum => Scan(Op::Add, Co::ExclusiveScan),
        B::SimdPrefixExclusiveProduct => Scan(Op::Mul, Co::ExclusiveScan),
        B::SimdShuffle => Move(self::Move::Lane),
        B::SimdBroadcast => Move(self::Move::Broadcast),
        B::SimdShuffleXor => Move(self::Move::Xor),
        B::SimdShuffleUp => Move(self::Move::Up),
        B::SimdShuffleDown => Move(self::Move::Down),
        B::SimdShuffleRotateUp => Move(self::Move::RotateUp),
        B::SimdShuffleRotateDown => Move(self::Move::RotateDown),
        B::SimdShuffleAndFillUp => Fill(true),
        B::SimdShuffleAndFillDown => Fill(false),
        B::SimdBroadcastFirst => BroadcastFirst,
        B::SimdAll => Vote(Op::All),
        B::SimdAny => Vote(Op::Any),
        B::SimdIsFirst => IsFirst,
        B::SimdIsHelperThread => IsHelper,
        B::SimdBallot | B::SimdActiveThreadsMask => Ballot,
        _ => unreachable!("`{}` is not a SIMD-group function", b.name()),
    }
}

/// An argument of a SIMD-group or quad-group function in the form naga
/// operates on: `bool` data travels as `uint` (naga refuses bool operands).
pub(in crate::lower) struct Operand {
    /// The value naga operates on.
    pub h: Handle<Expression>,
    /// Its type.
    pub ty: Type,
    /// The MSL type of the argument, which is also the result's.
    pub msl: Type,
}

/// `left op right`.
pub(in crate::lower) fn bin(
    fx: &mut FnCtx,
    op: Bo,
    left: Handle<Expression>,
    right: Handle<Expression>,
    span: Span,
) -> Handle<Expression> {
    fx.add(Expression::Binary { op, left, right }, span)
}

/// `condition ? accept : reject`.
pub(in crate::lower) fn select(
    fx: &mut FnCtx,
    condition: Handle<Expression>,
    accept: Handle<Expression>,
    reject: Handle<Expression>,
    span: Span,
) -> Handle<Expression> {
    fx.add(
        Expression::Select {
            condition,
            accept,
            reject,
        },
        span,
    )
}

/// The arguments of `name`, checking their number.
pub(in crate::lower) fn arity<'e>(
    name: &str,
    args: &'e [Expr],
    counts: &[usize],
    span: Span,
) -> Result<&'e [Expr]> {
    if counts.contains(&args.len()) {
        return Ok(args);
    }
    let want = match counts {
        [n] => format!("{n} argument{}", if *n == 1 { "" } else { "s" }),
        _ => format!("{} or {} arguments", counts[0], counts[counts.len() - 1]),
    };
    Err(Error::coded(
        Code::NoMatchingOverload,
        span,
        format!("`{name}` takes {want}, {} given", args.len()),
    ))
}

/// True if `e` may be folded with [`consteval::eval`]: its names cannot be
/// locals (consteval only knows program-scope names and would look past a
/// local that shadows one).
fn foldable(fx: &FnCtx, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int { .. } => true,
        ExprKind::Name(path) => path.len() > 1 || fx.lookup(&path[0]).is_none(),
        ExprKind::Unary(_, a) | ExprKind::Cast(_, _, a) => foldable(fx, a),
        ExprKind::Binary(_, a, b) => foldable(fx, a) && foldable(fx, b),
        _ => false,
    }
}

impl Lowerer<'_, '_> {
    /// A call of the SIMD-group function `b` ([`Family::Simd`]).
    ///
    /// [`Family::Simd`]: crate::lower::stdlib::Family::Simd
    pub(in crate::lower) fn simd_call(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let name = b.name();
        let value = match simd_function(b) {
            Simd::Reduce(op) => self.simd_collective(fx, name, op, Co::Reduce, args, span)?,
            Simd::Scan(op, co) => self.simd_collective(fx, name, op, co, args, span)?,
            Simd::Move(m) => self.simd_move(fx, name, m, args, span)?,
            Simd::BroadcastFirst => self.simd_broadcast_first(fx, name, args, span)?,
            Simd::Vote(op) => self.simd_vote(fx, name, op, args, span)?,
            Simd::IsFirst => {
                arity(name, args, &[0], span)?;
                let lane = self.simd_lane(fx, span);
                let first = self.first_active_lane(fx, span)?;
                Value::Rv(bin(fx, Bo::Equal, lane, first, span), Type::BOOL)
            }
            Simd::Fill(up) => {
                arity(name, args, &[3, 4], span)?;
                let width = self.simd_size(fx, span);
                self.shuffle_and_fill(fx, name, up, args, width, span)?
            }
            Simd::IsHelper => no_helper_threads(fx, name, args, span)?,
            Simd::Ballot => self.simd_ballot(fx, b, args, span)?,
        };
        Ok(value)
    }

    /// Lowers a data argument: a scalar or vector of `int`, `uint`, `half`
    /// or `float`, or also of `bool` when `bitwise` (then as `uint`).
    pub(in crate::lower) fn subgroup_operand(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        arg: &Expr,
        bitwise: bool,
    ) -> Result<Operand> {
        let (h, msl) = self.rvalue(fx, arg)?;
        let scalar = msl.element_scalar().filter(|_| msl.is_scalar_or_vector());
        let ok = match scalar {
            Some(Scalar::Int | Scalar::UInt) => true,
            // 8/16-bit integers are held in 32 bits and `bfloat` in `f32`:
            // computed there, the result is truncated or rounded back.
            Some(Scalar::Char | Scalar::UChar | Scalar::Short | Scalar::UShort) => true,
            Some(Scalar::BFloat) => !bitwise,
            Some(Scalar::Half | Scalar::Float) => !bitwise,
            Some(Scalar::Bool) => bitwise,
            _ => false,
        };
        if !ok {
            let allowed = if bitwise {
                "`int`, `uint` or `bool`"
            } else {
                "`int`, `uint`, `half` or `float`"
            };
            return Err(Error::coded(
                Code::NoMatchingOverload,
                arg.span,
                format!(
                    "`{name}` takes a scalar or vector of {allowed}, not `{}`",
                    self.program.display(&msl)
                ),
            ));
        }
        let wide = match scalar {
            Some(Scalar::Bool | Scalar::UChar | Scalar::UShort) => Some(Scalar::UInt),
            Some(Scalar::Char | Scalar::Short) => Some(Scalar::Int),
            Some(Scalar::BFloat) => Some(Scalar::Float),
            _ => None,
        };
        if let Some(wide) = wide {
            let ty = msl.with_scalar(wide);
            let h = self.convert(fx, h, &msl, &ty, true, arg.span)?;
            return Ok(Operand { h, ty, msl });
        }
        Ok(Operand {
            h,
            ty: msl.clone(),
            msl,
        })
    }

    /// The result `h` (of the operand's naga type) as the MSL result value.
    pub(in crate::lower) fn subgroup_result(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        operand: &Operand,
        span: Span,
    ) -> Result<Value> {
        let h = self.convert(fx, h, &operand.ty, &operand.msl, true, span)?;
        Ok(Value::Rv(h, operand.msl.clone()))
    }

    /// A lane index or delta argument (MSL `ushort`) as a `u32`.
    pub(in crate::lower) fn lane_operand(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        arg: &Expr,
    ) -> Result<Handle<Expression>> {
        let (h, ty) = self.rvalue(fx, arg)?;
        if !matches!(ty, Type::Scalar(s) if s.is_integer()) {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                arg.span,
                format!(
                    "the lane argument of `{name}` must be an integer scalar, not `{}`",
                    self.program.display(&ty)
                ),
            ));
        }
        self.convert(fx, h, &ty, &Type::UINT, true, arg.span)
    }

    /// The value of `arg` if it is an integer constant below 128 (WGSL's
    /// bound for a constant `subgroupBroadcast`/`quadBroadcast` lane).
    pub(in crate::lower) fn constant_lane(&self, fx: &FnCtx, arg: &Expr) -> Option<u32> {
        if !foldable(fx, arg) {
            return None;
        }
        let v = consteval::eval(self.program, arg).ok()?;
        if !v.ty().element_scalar().is_some_and(Scalar::is_integer) {
            return None;
        }
        v.as_int()
            .filter(|i| (0..128).contains(i))
            .map(|i| i as u32)
    }

    /// `SubgroupCollectiveOperation`; returns its result.
    pub(in crate::lower) fn collective(
        &mut self,
        fx: &mut FnCtx,
        op: Op,
        collective_op: Co,
        argument: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if self.emulates_simd() {
            return self.emulated_collective(fx, op, collective_op, argument, ty, span);
        }
        let ty = self.naga_type(ty, span)?;
        let result = fx.add_result(Expression::SubgroupOperationResult { ty }, span);
        fx.push(
            Statement::SubgroupCollectiveOperation {
                op,
                collective_op,
                argument,
                result,
            },
            span,
        );
        Ok(result)
    }

    /// `SubgroupGather`; returns its result.
    pub(in crate::lower) fn gather(
        &mut self,
        fx: &mut FnCtx,
        mode: GatherMode,
        argument: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if self.emulates_simd() {
            return self.emulated_gather(fx, mode, argument, ty, span);
        }
        let ty = self.naga_type(ty, span)?;
        let result = fx.add_result(Expression::SubgroupOperationResult { ty }, span);
        fx.push(
            Statement::SubgroupGather {
                mode,
                argument,
                result,
            },
            span,
        );
        Ok(result)
    }

    /// Reductions and scans.
    fn simd_collective(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        op: Op,
        co: Co,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let [arg] = arity(name, args, &[1], span)? else {
            unreachable!()
        };
        let bitwise = matches!(op, Op::And | Op::Or | Op::Xor);
        let operand = self.subgroup_operand(fx, name, arg, bitwise)?;
        let argument = self.without_inactive(fx, op, operand.h, &operand.ty, span)?;
        let r = self.collective(fx, op, co, argument, &operand.ty, span)?;
        self.subgroup_result(fx, r, &operand, span)
    }

    /// The one scalar `bool` argument of a vote (`simd_all`, `quad_any`, ...).
    pub(in crate::lower) fn vote_argument(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Handle<Expression>> {
        let [arg] = arity(name, args, &[1], span)? else {
            unreachable!()
        };
        let (b, ty) = self.condition(fx, arg)?;
        if ty != Type::BOOL {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                arg.span,
                format!("`{name}` takes a scalar `bool`; use `all()` or `any()` on vectors"),
            ));
        }
        Ok(b)
    }

    /// `simd_all(b)`, `simd_any(b)`.
    fn simd_vote(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        op: Op,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let b = self.vote_argument(fx, name, args, span)?;
        let b = self.without_inactive(fx, op, b, &Type::BOOL, span)?;
        let r = self.collective(fx, op, Co::Reduce, b, &Type::BOOL, span)?;
        Ok(Value::Rv(r, Type::BOOL))
    }

    /// In a kernel with barriers, `h` where the thread is inside Metal's
    /// grid, and the identity of `op` elsewhere: threads outside the grid
    /// do not exist for Metal, so they must not change any result.
    pub(in crate::lower) fn without_inactive(
        &mut self,
        fx: &mut FnCtx,
        op: Op,
        h: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let Some(active) = self.active(fx, span) else {
            return Ok(h);
        };
        let identity = self.identity(fx, op, ty, span)?;
        Ok(select(fx, active, h, identity, span))
    }

    /// The identity element of `op` in `ty`.
    pub(in crate::lower) fn identity(
        &mut self,
        fx: &mut FnCtx,
        op: Op,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let s = ty
            .element_scalar()
            .expect("subgroup operands are scalars or vectors");
        let lit = |fx: &mut FnCtx, l| fx.add(Expression::Literal(l), span);
        let one = half::f16::from_f32(1.0);
        let scalar = match (op, s) {
            (Op::Add | Op::Or | Op::Xor, _) => {
                let t = self.naga_type(ty, span)?;
                return Ok(fx.add(Expression::ZeroValue(t), span));
            }
            (Op::All, _) => lit(fx, Literal::Bool(true)),
            (Op::Any, _) => lit(fx, Literal::Bool(false)),
            (Op::Mul, Scalar::Int) => lit(fx, Literal::I32(1)),
            (Op::Mul, Scalar::UInt) => lit(fx, Literal::U32(1)),
            (Op::Mul, Scalar::Half) => lit(fx, Literal::F16(one)),
            (Op::Mul, _) => lit(fx, Literal::F32(1.0)),
            (Op::And, Scalar::Int) => lit(fx, Literal::I32(-1)),
            (Op::And, _) => lit(fx, Literal::U32(u32::MAX)),
            (Op::Min, Scalar::Int) => lit(fx, Literal::I32(i32::MAX)),
            (Op::Min, Scalar::UInt) => lit(fx, Literal::U32(u32::MAX)),
            (Op::Max, Scalar::Int) => lit(fx, Literal::I32(i32::MIN)),
            (Op::Max, Scalar::UInt) => lit(fx, Literal::U32(0)),
            (Op::Min, _) => infinity(fx, false, s, span),
            (Op::Max, _) => infinity(fx, true, s, span),
        };
        match *ty {
            Type::Vector(_, n) => Ok(fx.add(
                Expression::Splat {
                    size: crate::lower::types::vector_size(n),
                    value: scalar,
                },
                span,
            )),
            _ => Ok(scalar),
        }
    }

    /// The lowest lane of the SIMD-group whose thread exists for Metal.
    fn first_active_lane(&mut self, fx: &mut FnCtx, span: Span) -> Result<Handle<Expression>> {
        let lane = self.simd_lane(fx, span);
        if self.active(fx, span).is_none() {
            return self.gather(fx, GatherMode::BroadcastFirst, lane, &Type::UINT, span);
        }
        // Threads outside the grid offer no lane: the minimum skips them.
        let lane = self.without_inactive(fx, Op::Min, lane, &Type::UINT, span)?;
        self.collective(fx, Op::Min, Co::Reduce, lane, &Type::UINT, span)
    }

    /// `simd_broadcast_first(x)`: the value of the first thread that exists.
    fn simd_broadcast_first(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let [arg] = arity(name, args, &[1], span)? else {
            unreachable!()
        };
        let x = self.subgroup_operand(fx, name, arg, false)?;
        let r = if self.active(fx, span).is_some() {
            let first = self.first_active_lane(fx, span)?;
            self.gather(fx, GatherMode::Shuffle(first), x.h, &x.ty, span)?
        } else {
            self.gather(fx, GatherMode::BroadcastFirst, x.h, &x.ty, span)?
        };
        self.subgroup_result(fx, r, &x, span)
    }

    /// Shuffles and broadcasts: `f(data, lane or delta or mask)`.
    fn simd_move(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        m: Move,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let [data, index] = arity(name, args, &[2], span)? else {
            unreachable!()
        };
        let x = self.subgroup_operand(fx, name, data, false)?;
        if m == Move::Broadcast {
            if let Some(lane) = self.constant_lane(fx, index) {
                let lane = self.u32_lit(fx, lane, index.span);
                let r = self.gather(fx, GatherMode::Broadcast(lane), x.h, &x.ty, span)?;
                return self.subgroup_result(fx, r, &x, span);
            }
        }
        let i = self.lane_operand(fx, name, index)?;
        let r = match m {
            // naga wants a constant Broadcast lane; a shuffle from a uniform
            // lane reads the same value.
            Move::Lane | Move::Broadcast => {
                self.gather(fx, GatherMode::Shuffle(i), x.h, &x.ty, span)?
            }
            Move::Xor => self.gather(fx, GatherMode::ShuffleXor(i), x.h, &x.ty, span)?,
            Move::Up | Move::Down => self.shift_keeping_own(fx, m == Move::Up, &x, i, span)?,
            Move::RotateUp | Move::RotateDown => {
                let lane = self.simd_lane(fx, span);
                let width = self.simd_size(fx, span);
                let op = if m == Move::RotateUp {
                    Bo::Subtract
                } else {
                    Bo::Add
                };
                let moved = bin(fx, op, lane, i, span);
                // Widths are powers of two (Vulkan, D3D12 and Metal all
                // guarantee it), so the mask is the modulo, also when the
                // subtraction wrapped.
                let one = self.u32_lit(fx, 1, span);
                let mask = bin(fx, Bo::Subtract, width, one, span);
                let source = bin(fx, Bo::And, moved, mask, span);
                self.gather(fx, GatherMode::Shuffle(source), x.h, &x.ty, span)?
            }
        };
        self.subgroup_result(fx, r, &x, span)
    }

    /// `simd_shuffle_up/down`: a thread whose source lane would fall outside
    /// the SIMD-group keeps its own value, as in Metal.
    fn shift_keeping_own(
        &mut self,
        fx: &mut FnCtx,
        up: bool,
        x: &Operand,
        delta: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let lane = self.simd_lane(fx, span);
        let (mode, inside) = if up {
            (
                GatherMode::ShuffleUp(delta),
                bin(fx, Bo::GreaterEqual, lane, delta, span),
            )
        } else {
            // `delta < width - lane` cannot overflow where `lane + delta` could.
            let width = self.simd_size(fx, span);
            let room = bin(fx, Bo::Subtract, width, lane, span);
            (
                GatherMode::ShuffleDown(delta),
                bin(fx, Bo::Less, delta, room, span),
            )
        };
        let moved = self.gather(fx, mode, x.h, &x.ty, span)?;
        Ok(select(fx, inside, moved, x.h, span))
    }

    /// `simd_shuffle_and_fill_up/down(data, filling, delta[, modulo])` and
    /// the quad forms: the SIMD-group is cut into segments of `modulo`
    /// lanes (`default_modulo` when absent); lanes whose source would leave
    /// the segment read `filling` from the other end of it.
    pub(in crate::lower) fn shuffle_and_fill(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        up: bool,
        args: &[Expr],
        default_modulo: Handle<Expression>,
        span: Span,
    ) -> Result<Value> {
        let data = self.subgroup_operand(fx, name, &args[0], false)?;
        let fill = self.rvalue(fx, &args[1])?;
        let fill = self.convert(fx, fill.0, &fill.1, &data.msl, false, args[1].span)?;
        let delta = self.lane_operand(fx, name, &args[2])?;
        let modulo = match args.get(3) {
            Some(m) => self.lane_operand(fx, name, m)?,
            None => default_modulo,
        };
        let lane = self.simd_lane(fx, span);
        let one = self.u32_lit(fx, 1, span);
        let mask = bin(fx, Bo::Subtract, modulo, one, span);
        let offset = bin(fx, Bo::And, lane, mask, span);
        let segment = bin(fx, Bo::Subtract, lane, offset, span);
        let (from_data, moved) = if up {
            (
                bin(fx, Bo::GreaterEqual, offset, delta, span),
                bin(fx, Bo::Subtract, offset, delta, span),
            )
        } else {
            let room = bin(fx, Bo::Subtract, modulo, offset, span);
            (
                bin(fx, Bo::Less, delta, room, span),
                bin(fx, Bo::Add, offset, delta, span),
            )
        };
        // Wrapping to the other end of the segment is the same mask.
        let wrapped = bin(fx, Bo::And, moved, mask, span);
        let source = bin(fx, Bo::InclusiveOr, segment, wrapped, span);
        let a = self.gather(fx, GatherMode::Shuffle(source), data.h, &data.ty, span)?;
        let b = self.gather(fx, GatherMode::Shuffle(source), fill, &data.ty, span)?;
        let r = select(fx, from_data, a, b, span);
        self.subgroup_result(fx, r, &data, span)
    }

    /// `simdgroup_barrier(flags)` → `subgroupBarrier()`.
    ///
    /// The memory flags are checked but add nothing: WGSL's only barriers
    /// with memory effects (`workgroupBarrier`, `storageBarrier`) also wait
    /// for the whole threadgroup, which Metal code calling this from one
    /// SIMD-group's branch would never reach (undefined behaviour in WGSL).
    pub(in crate::lower) fn simdgroup_barrier(
        &mut self,
        fx: &mut FnCtx,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let [flags] = args else {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                "`simdgroup_barrier` takes one `mem_flags` argument",
            ));
        };
        check_mem_flags(flags)?;
        fx.uses_barrier = true;
        if self.emulates_simd() {
            // An emulated SIMD group is part of its threadgroup: waiting for
            // the threadgroup also waits for the group.
            fx.push(Statement::ControlBarrier(naga::Barrier::WORK_GROUP), span);
            return Ok(Value::Void);
        }
        self.require_feature(crate::lower::ctx::entry::Feature::Subgroup);
        // `mem_none` orders no memory: no result can depend on the lanes
        // having waited (as for `threadgroup_barrier(mem_none)`,
        // `passes/execution_barriers.rs`). WebGPU has no subgroup barrier,
        // so there it is left out rather than refused (MLX's steel GEMMs
        // put one around each fragment load).
        if !self.settings.native_extensions && orders_no_memory(flags) {
            return Ok(Value::Void);
        }
        self.require_feature(crate::lower::ctx::entry::Feature::SubgroupBarrier);
        fx.push(Statement::ControlBarrier(naga::Barrier::SUB_GROUP), span);
        Ok(Value::Void)
    }
}

/// `±infinity` of a float scalar type. naga literals may not be infinite,
/// so it is the bit pattern, reinterpreted (and converted for `half`, where
/// the conversion keeps the infinity).
fn infinity(fx: &mut FnCtx, negative: bool, s: Scalar, span: Span) -> Handle<Expression> {
    let bits = if negative { 0xff80_0000 } else { 0x7f80_0000 };
    let bits = fx.add(Expression::Literal(Literal::U32(bits)), span);
    let f = fx.add(
        Expression::As {
            expr: bits,
            kind: naga::ScalarKind::Float,
            convert: None,
        },
        span,
    );
    if s != Scalar::Half {
        return f;
    }
    fx.add(
        Expression::As {
            expr: f,
            kind: naga::ScalarKind::Float,
            convert: Some(2),
        },
        span,
    )
}

/// Whether a (checked) `mem_flags` expression is `mem_none` alone.
fn orders_no_memory(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Name(path) if path.last().is_some_and(|n| n == "mem_none"))
}

/// Checks a `mem_flags` expression (`mem_none`, `mem_device | mem_threadgroup`, ...).
fn check_mem_flags(e: &Expr) -> Result<()> {
    match &e.kind {
        ExprKind::Binary(BinaryOp::BitOr, a, b) => {
            check_mem_flags(a)?;
            check_mem_flags(b)
        }
        ExprKind::Name(path)
            if matches!(
                path.last().map(String::as_str),
                Some(
                    "mem_none"
                        | "mem_threadgroup"
                        | "mem_device"
                        | "mem_texture"
                        | "mem_threadgroup_imageblock"
                )
            ) =>
        {
            Ok(())
        }
        _ => Err(Error::coded(
            Code::InvalidBuiltinArgument,
            e.span,
            "expected a `mem_flags` value",
        )),
    }
}

/// `simd_is_helper_thread()`, `quad_is_helper_thread()`: a constant `false`
/// (compute threads are never helper threads, and the translation has no
/// helper-thread query for fragment functions).
pub(in crate::lower) fn no_helper_threads(
    fx: &mut FnCtx,
    name: &str,
    args: &[Expr],
    span: Span,
) -> Result<Value> {
    arity(name, args, &[0], span)?;
    let value = fx.add(Expression::Literal(Literal::Bool(false)), span);
    Ok(Value::Rv(value, Type::BOOL))
}
