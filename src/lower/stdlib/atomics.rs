//! Atomic functions (MSL §6.15) → naga atomic statements.
//!
//! `atomic_int`/`atomic_uint` map directly. `atomic_bool` is a 0/1
//! `atomic<u32>`, and `atomic_float` an `atomic<u32>` holding the float's
//! bits, updated with compare-exchange loops, so the translation needs no
//! optional feature (mapping doc §2.8). Only `memory_order_relaxed` exists
//! for Metal's atomic operations (§6.15.1).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::stdlib::simd::bin;
use crate::lower::stdlib::Builtin;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind};
use crate::types::{Scalar, Type};
use naga::{AtomicFunction as Af, Block, Expression, Handle, Statement};

/// What an atomic function does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Load,
    Store,
    Exchange,
    CompareExchange,
    Fetch(Af),
}

/// An atomic object an atomic function works on.
#[derive(Clone, Copy)]
struct AtomicObject {
    /// The naga pointer to its 32-bit atomic word.
    pointer: Handle<Expression>,
    /// Its MSL type (`atomic_int`: `Int`).
    scalar: Scalar,
    /// The scalar of the word: `Int` for an `atomic<i32>`, `UInt` for the
    /// `atomic<u32>` words that hold every other atomic, and an
    /// `atomic_int` in a buffer of words (a buffer that also holds 8/16-bit
    /// data, or an `int` member cast to `atomic_int*`), whose bits it holds.
    word: Scalar,
}

/// What the atomic builtin `b` does, and how many arguments it takes;
/// `None` for `atomic_thread_fence`.
fn op(b: Builtin) -> Option<(Op, usize)> {
    use Builtin as B;
    Some(match b {
        B::AtomicLoad => (Op::Load, 2),
        B::AtomicStore => (Op::Store, 3),
        B::AtomicExchange => (Op::Exchange, 3),
        B::AtomicCompareExchangeWeak => (Op::CompareExchange, 5),
        B::AtomicFetchAdd => (Op::Fetch(Af::Add), 3),
        B::AtomicFetchSub => (Op::Fetch(Af::Subtract), 3),
        B::AtomicFetchAnd => (Op::Fetch(Af::And), 3),
        B::AtomicFetchOr => (Op::Fetch(Af::InclusiveOr), 3),
        B::AtomicFetchXor => (Op::Fetch(Af::ExclusiveOr), 3),
        B::AtomicFetchMin => (Op::Fetch(Af::Min), 3),
        B::AtomicFetchMax => (Op::Fetch(Af::Max), 3),
        _ => return None,
    })
}

impl Lowerer<'_, '_> {
    /// A call of the atomic function `b` ([`Family::Atomic`]).
    ///
    /// [`Family::Atomic`]: crate::lower::stdlib::Family::Atomic
    pub(in crate::lower) fn atomic_call(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let name = b.name();
        let Some((op, arity)) = op(b) else {
            return self.thread_fence(fx, args, span);
        };
        if args.len() != arity {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{name}` takes {arity} arguments, {} given", args.len()),
            ));
        }
        let orders = if op == Op::CompareExchange {
            &args[3..]
        } else {
            &args[arity - 1..]
        };
        for order in orders {
            check_order(order)?;
        }
        let atomic = self.atomic_pointer(fx, &args[0], name, op != Op::Load)?;
        let (pointer, scalar) = (atomic.pointer, atomic.scalar);
        let value = match op {
            Op::Load => {
                let word = fx.add(Expression::Load { pointer }, span);
                Value::Rv(self.decode(fx, word, atomic, span), Type::Scalar(scalar))
            }
            Op::Store => {
                let word = self.word_of_arg(fx, &args[1], atomic)?;
                self.push_effect(
                    fx,
                    Statement::Store {
                        pointer,
                        value: word,
                    },
                    Some(pointer),
                    span,
                );
                Value::Void
            }
            Op::Exchange => {
                let word = self.word_of_arg(fx, &args[1], atomic)?;
                let old =
                    self.atomic_rmw(fx, atomic, Af::Exchange { compare: None }, word, span)?;
                Value::Rv(self.decode(fx, old, atomic, span), Type::Scalar(scalar))
            }
            Op::CompareExchange => self.compare_exchange(fx, atomic, &args[1], &args[2], span)?,
            Op::Fetch(fun) => self.fetch(fx, name, fun, atomic, &args[1], span)?,
        };
        Ok(value)
    }

    fn fetch(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        fun: Af,
        atomic: AtomicObject,
        arg: &Expr,
        span: Span,
    ) -> Result<Value> {
        match atomic.scalar {
            Scalar::Bool => Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{name}` is not available for `atomic_bool`"),
            )),
            Scalar::Float if matches!(fun, Af::Add | Af::Subtract) => {
                let (v, t) = self.rvalue(fx, arg)?;
                let v = self.convert(fx, v, &t, &Type::FLOAT, false, arg.span)?;
                let op = match fun {
                    Af::Add => naga::BinaryOperator::Add,
                    _ => naga::BinaryOperator::Subtract,
                };
                let old =
                    self.update_loop(fx, atomic, |fx, old| bin(fx, op, old, v, span), span)?;
                Ok(Value::Rv(old, Type::FLOAT))
            }
            Scalar::Float => Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{name}` is not available for `atomic_float`"),
            )),
            // Signed minimum and maximum on the bits of an `atomic_int` held
            // in an unsigned word: WGSL's `atomicMin/Max` on `atomic<u32>`
            // would compare them unsigned.
            Scalar::Int if atomic.word == Scalar::UInt && matches!(fun, Af::Min | Af::Max) => {
                let (v, t) = self.rvalue(fx, arg)?;
                let v = self.convert(fx, v, &t, &Type::INT, false, arg.span)?;
                let f = match fun {
                    Af::Min => naga::MathFunction::Min,
                    _ => naga::MathFunction::Max,
                };
                let old = self.update_loop(
                    fx,
                    atomic,
                    |fx, old| {
                        fx.add(
                            Expression::Math {
                                fun: f,
                                arg: old,
                                arg1: Some(v),
                                arg2: None,
                                arg3: None,
                            },
                            span,
                        )
                    },
                    span,
                )?;
                Ok(Value::Rv(old, Type::INT))
            }
            scalar => {
                let word = self.word_of_arg(fx, arg, atomic)?;
                let old = self.atomic_rmw(fx, atomic, fun, word, span)?;
                Ok(Value::Rv(
                    self.decode(fx, old, atomic, span),
                    Type::Scalar(scalar),
                ))
            }
        }
    }

    /// The atomic object `arg` points to.
    fn atomic_pointer(
        &mut self,
        fx: &mut FnCtx,
        arg: &Expr,
        name: &str,
        writes: bool,
    ) -> Result<AtomicObject> {
        let v = self.expr(fx, arg)?;
        let (place, what, in_words) = match v {
            Value::Ptr(p) => {
                let what = format!("{} {}*", p.space.name(), self.program.display(&p.pointee));
                match self.element_value(fx, &p, arg.span) {
                    Value::Place(place) => (place, what, false),
                    Value::Bytes(b) => (self.atomic_word(fx, &b, name, arg.span)?, what, true),
                    _ => unreachable!("pointers designate places"),
                }
            }
            _ => {
                return Err(Error::coded(
                    Code::InvalidBuiltinArgument,
                    arg.span,
                    format!("`{name}` needs a pointer to an atomic object, such as `&counter`"),
                ))
            }
        };
        let Type::Atomic(scalar) = place.ty else {
            return Err(Error::coded(
                Code::InvalidBuiltinArgument,
                arg.span,
                format!("`{name}` needs a pointer to an atomic type, found `{what}`"),
            ));
        };
        if writes && !place.writable {
            return Err(Error::coded(
                Code::NotAssignable,
                arg.span,
                format!("`{name}` cannot modify an atomic object through a `const` pointer"),
            ));
        }
        let word = match scalar {
            Scalar::Int if !in_words => Scalar::Int,
            _ => Scalar::UInt,
        };
        Ok(AtomicObject {
            pointer: place.ptr,
            scalar,
            word,
        })
    }

    /// An atomic in a word-view buffer: its word, which is atomic when the
    /// buffer holds atomics.
    fn atomic_word(
        &mut self,
        fx: &mut FnCtx,
        b: &crate::lower::ctx::value::BytePlace,
        name: &str,
        span: Span,
    ) -> Result<crate::lower::ctx::value::Place> {
        if self.word_view(b.global) != Some(true) {
            return Err(Error::coded(Code::Unsupported, span, format!("`{name}`: atomics in a buffer that also holds packed, bool or 8/16-bit data are not supported yet")));
        }
        let base = fx.add(Expression::GlobalVariable(b.global), span);
        let two = self.u32_lit(fx, 2, span);
        let index = fx.add(
            Expression::Binary {
                op: naga::BinaryOperator::ShiftRight,
                left: b.offset,
                right: two,
            },
            span,
        );
        let ptr = fx.add(Expression::Access { base, index }, span);
        Ok(crate::lower::ctx::value::Place {
            ptr,
            ty: b.ty.clone(),
            writable: b.writable,
        })
    }

    /// The 32-bit word `atomic` stores for the value `arg`.
    fn word_of_arg(
        &mut self,
        fx: &mut FnCtx,
        arg: &Expr,
        atomic: AtomicObject,
    ) -> Result<Handle<Expression>> {
        let (v, t) = self.rvalue(fx, arg)?;
        let v = self.convert(fx, v, &t, &Type::Scalar(atomic.scalar), false, arg.span)?;
        self.encode(fx, v, atomic, arg.span)
    }

    /// The word `atomic` holds for its value `v`.
    fn encode(
        &mut self,
        fx: &mut FnCtx,
        v: Handle<Expression>,
        atomic: AtomicObject,
        span: Span,
    ) -> Result<Handle<Expression>> {
        Ok(match atomic.scalar {
            Scalar::Bool => self.convert(fx, v, &Type::BOOL, &Type::UINT, true, span)?,
            Scalar::Int if atomic.word == Scalar::Int => v,
            Scalar::Float | Scalar::Int => bitcast(fx, v, naga::ScalarKind::Uint, span),
            _ => v,
        })
    }

    /// The value of `atomic` from its word.
    fn decode(
        &mut self,
        fx: &mut FnCtx,
        word: Handle<Expression>,
        atomic: AtomicObject,
        span: Span,
    ) -> Handle<Expression> {
        match atomic.scalar {
            Scalar::Bool => {
                let zero = self.u32_lit(fx, 0, span);
                bin(fx, naga::BinaryOperator::NotEqual, word, zero, span)
            }
            Scalar::Float => bitcast(fx, word, naga::ScalarKind::Float, span),
            Scalar::Int if atomic.word == Scalar::UInt => {
                bitcast(fx, word, naga::ScalarKind::Sint, span)
            }
            _ => word,
        }
    }

    /// Runs `build` (which emits statements and returns a value of type
    /// `ty`) only for threads inside Metal's grid in a kernel with barriers;
    /// other threads get `default`.
    fn only_active(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        span: Span,
        build: impl FnOnce(&mut Self, &mut FnCtx) -> Result<Handle<Expression>>,
    ) -> Result<Handle<Expression>> {
        let Some(active) = self.active(fx, span) else {
            return build(self, fx);
        };
        let th = self.naga_type(ty, span)?;
        let var = fx.local("_atomic", th, span);
        let ptr = fx.add(Expression::LocalVariable(var), span);
        fx.open();
        let value = build(self, fx)?;
        fx.push(
            Statement::Store {
                pointer: ptr,
                value,
            },
            span,
        );
        let accept = fx.close();
        fx.push(
            Statement::If {
                condition: active,
                accept,
                reject: Block::new(),
            },
            span,
        );
        Ok(fx.add(Expression::Load { pointer: ptr }, span))
    }

    /// A read-modify-write returning the old word.
    fn atomic_rmw(
        &mut self,
        fx: &mut FnCtx,
        atomic: AtomicObject,
        fun: Af,
        value: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let pointer = atomic.pointer;
        let word = Type::Scalar(atomic.word);
        let ty = self.naga_type(&word, span)?;
        self.only_active(fx, &word, span, |_, fx| {
            let result = fx.add_result(
                Expression::AtomicResult {
                    ty,
                    comparison: false,
                },
                span,
            );
            fx.push(
                Statement::Atomic {
                    pointer,
                    fun,
                    value,
                    result: Some(result),
                },
                span,
            );
            Ok(result)
        })
    }

    /// `atomicCompareExchangeWeak(pointer, compare, value)`: (old word, exchanged).
    fn cas(
        &mut self,
        fx: &mut FnCtx,
        pointer: Handle<Expression>,
        compare: Handle<Expression>,
        value: Handle<Expression>,
        word: naga::Scalar,
        span: Span,
    ) -> (Handle<Expression>, Handle<Expression>) {
        let ty = self.global.module.generate_predeclared_type(
            naga::PredeclaredType::AtomicCompareExchangeWeakResult(word),
        );
        let result = fx.add_result(
            Expression::AtomicResult {
                ty,
                comparison: true,
            },
            span,
        );
        fx.push(
            Statement::Atomic {
                pointer,
                fun: Af::Exchange {
                    compare: Some(compare),
                },
                value,
                result: Some(result),
            },
            span,
        );
        let old = fx.add(
            Expression::AccessIndex {
                base: result,
                index: 0,
            },
            span,
        );
        let exchanged = fx.add(
            Expression::AccessIndex {
                base: result,
                index: 1,
            },
            span,
        );
        (old, exchanged)
    }

    /// An update the hardware has no atomic for (`atomic_float` add and
    /// subtract, signed min and max on an unsigned word): a compare-exchange
    /// loop on the word, with the new value `update(old value)`. Returns
    /// the old value.
    fn update_loop(
        &mut self,
        fx: &mut FnCtx,
        atomic: AtomicObject,
        update: impl FnOnce(&mut FnCtx, Handle<Expression>) -> Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let pointer = atomic.pointer;
        self.only_active(fx, &Type::Scalar(atomic.scalar), span, |l, fx| {
            let u = l.naga_type(&Type::UINT, span)?;
            let var = fx.local("_old", u, span);
            let old_ptr = fx.add(Expression::LocalVariable(var), span);
            let first = fx.add(Expression::Load { pointer }, span);
            fx.push(
                Statement::Store {
                    pointer: old_ptr,
                    value: first,
                },
                span,
            );
            fx.open();
            let old = fx.add(Expression::Load { pointer: old_ptr }, span);
            let old_value = l.decode(fx, old, atomic, span);
            let new_value = update(fx, old_value);
            let new = l.encode(fx, new_value, atomic, span)?;
            let (seen, exchanged) = l.cas(fx, pointer, old, new, naga::Scalar::U32, span);
            let mut stop = Block::new();
            stop.push(Statement::Break, Self::span(span));
            fx.push(
                Statement::If {
                    condition: exchanged,
                    accept: stop,
                    reject: Block::new(),
                },
                span,
            );
            fx.push(
                Statement::Store {
                    pointer: old_ptr,
                    value: seen,
                },
                span,
            );
            let body = fx.close();
            fx.push(
                Statement::Loop {
                    body,
                    continuing: Block::new(),
                    break_if: None,
                },
                span,
            );
            let old = fx.add(Expression::Load { pointer: old_ptr }, span);
            Ok(l.decode(fx, old, atomic, span))
        })
    }

    /// `atomic_compare_exchange_weak_explicit(p, &expected, desired, ...)`:
    /// on failure `expected` receives the current value (MSL §6.15.4.4).
    fn compare_exchange(
        &mut self,
        fx: &mut FnCtx,
        atomic: AtomicObject,
        expected: &Expr,
        desired: &Expr,
        span: Span,
    ) -> Result<Value> {
        let Value::Ptr(ep) = self.expr(fx, expected)? else {
            return Err(Error::coded(
                Code::InvalidBuiltinArgument,
                expected.span,
                "the expected value must be passed by pointer, such as `&expected`",
            ));
        };
        let (pointer, scalar) = (atomic.pointer, atomic.scalar);
        let exp_place = self.element_place(fx, &ep, ep.index, expected.span);
        if exp_place.ty != Type::Scalar(scalar) {
            return Err(Error::coded(
                Code::InvalidBuiltinArgument,
                expected.span,
                format!("expected a pointer to `{}`", scalar.name()),
            ));
        }
        let current = fx.add(
            Expression::Load {
                pointer: exp_place.ptr,
            },
            span,
        );
        let compare = self.encode(fx, current, atomic, span)?;
        let new = self.word_of_arg(fx, desired, atomic)?;
        let word = crate::lower::types::scalar(atomic.word);
        self.only_active(fx, &Type::BOOL, span, |l, fx| {
            let (old, exchanged) = l.cas(fx, pointer, compare, new, word, span);
            fx.open();
            let old_value = l.decode(fx, old, atomic, span);
            fx.push(
                Statement::Store {
                    pointer: exp_place.ptr,
                    value: old_value,
                },
                span,
            );
            let reject = fx.close();
            fx.push(
                Statement::If {
                    condition: exchanged,
                    accept: Block::new(),
                    reject,
                },
                span,
            );
            Ok(exchanged)
        })
        .map(|h| Value::Rv(h, Type::BOOL))
    }
}

/// `bitcast<kind>(v)` of a 32-bit scalar.
fn bitcast(
    fx: &mut FnCtx,
    v: Handle<Expression>,
    kind: naga::ScalarKind,
    span: Span,
) -> Handle<Expression> {
    crate::lower::stdlib::math::Ir { fx, span }.bitcast(v, kind)
}

/// Metal's atomic operations take `memory_order_relaxed` only.
fn check_order(e: &Expr) -> Result<()> {
    let name = match &e.kind {
        ExprKind::Name(path) => path.last().map(String::as_str).unwrap_or(""),
        _ => "",
    };
    match name {
        "memory_order_relaxed" => Ok(()),
        "memory_order_seq_cst" | "memory_order_acquire" | "memory_order_release" | "memory_order_acq_rel" | "memory_order_consume" => Err(Error::coded(
            Code::Unsupported,
            e.span,
            format!("`{name}` is not supported for atomic operations; Metal supports only `memory_order_relaxed`"),
        )),
        _ => Err(Error::coded(Code::InvalidBuiltinArgument, e.span, "expected a memory order such as `memory_order_relaxed`")),
    }
}
