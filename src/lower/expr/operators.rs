//! Operators: arithmetic, bitwise, shifts, comparisons, logical, unary,
//! pointer arithmetic and `?:`, with C++'s conversions made explicit.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::expr::{has_side_effects, reads_through_index};
use crate::lower::{Error, Lowerer, Result};
use crate::sema::{consteval::ConstValue, conversions};
use crate::source_map::Span;
use crate::syntax::ast::{BinaryOp, Expr, UnaryOp};
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal};

impl Lowerer<'_, '_> {
    // ---- operators ---------------------------------------------------------

    pub(in crate::lower) fn binary(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        if matches!(op, BinaryOp::LogicalAnd | BinaryOp::LogicalOr) {
            return self.logical(fx, op, a, b, span);
        }
        // `p == nullptr` (pointers.rs).
        if let Some(v) = self.null_operand_comparison(fx, op, a, b, span)? {
            return Ok(v);
        }
        let va = self.expr(fx, a)?;
        // `tile + offset` of an array: the array decays to a pointer to its
        // first element, as in C++ (`metal/array_decay.rs`).
        let va = match op {
            BinaryOp::Add | BinaryOp::Sub => self.decayed_array(fx, va, a.span),
            _ => va,
        };
        if let Value::Ptr(p) = va {
            return self.pointer_arithmetic(fx, op, p, b, span);
        }
        if let Value::Null(_) = va {
            return self.null_operand(fx, op, b, span);
        }
        // A struct operand with a conversion function to an arithmetic
        // type (`i * Int<4>{}`) takes the built-in operator through it.
        let va = self.arithmetic_operand(fx, va, a.span)?;
        let (ha, ta) = self.load(fx, va, a.span)?;
        let vb = self.expr(fx, b)?;
        let vb = self.arithmetic_operand(fx, vb, b.span)?;
        let (hb, tb) = self.load(fx, vb, b.span)?;
        let (h, t) = self.binary_values(fx, op, (ha, ta), (hb, tb), span)?;
        Ok(Value::Rv(h, t))
    }

    /// Applies a binary operator to two loaded values with C++'s conversions.
    pub(in crate::lower) fn binary_values(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        (ha, ta): (Handle<Expression>, Type),
        (hb, tb): (Handle<Expression>, Type),
        span: Span,
    ) -> Result<(Handle<Expression>, Type)> {
        let invalid = |l: &Self| {
            Error::coded(
                Code::InvalidOperands,
                span,
                format!(
                    "invalid operands to binary `{}` (`{}` and `{}`)",
                    op.symbol(),
                    l.program.display(&ta),
                    l.program.display(&tb)
                ),
            )
        };
        if matches!(ta, Type::Matrix { .. }) || matches!(tb, Type::Matrix { .. }) {
            return self
                .matrix_binary(fx, op, (ha, ta.clone()), (hb, tb.clone()), span)
                .ok_or_else(|| invalid(self))?;
        }
        if op == BinaryOp::Mul {
            if let Some(r) = self.simdgroup_matrix_times(fx, (ha, &ta), (hb, &tb), span) {
                return r;
            }
        }
        let (Some(sa), Some(sb)) = (ta.element_scalar(), tb.element_scalar()) else {
            return Err(invalid(self));
        };
        if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
            return self
                .shift(fx, op, (ha, &ta), (hb, &tb), span)
                .ok_or_else(|| invalid(self))?;
        }
        let size = match (&ta, &tb) {
            (Type::Vector(_, n), Type::Vector(_, m)) if n != m || ta != tb => {
                if !(sa == Scalar::Bool && sb == Scalar::Bool && n == m) {
                    return Err(invalid(self));
                }
                *n
            }
            (Type::Vector(_, n), _) | (_, Type::Vector(_, n)) => *n,
            _ => 1,
        };
        // Scalar with vector: the scalar converts to the vector's element type.
        let elem = match (&ta, &tb) {
            (Type::Vector(s, _), _) | (_, Type::Vector(s, _)) => *s,
            _ => conversions::arithmetic(sa, sb),
        };
        let is_bool_vector = elem == Scalar::Bool;
        let elem = if is_bool_vector
            && !matches!(
                op,
                BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor | BinaryOp::Eq | BinaryOp::Ne
            ) {
            return Err(invalid(self));
        } else {
            elem
        };
        if op == BinaryOp::Rem && elem.is_float() {
            return Err(invalid(self).note("use `fmod` for the floating-point remainder"));
        }
        if matches!(op, BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor) && elem.is_float() {
            return Err(invalid(self));
        }
        let operand = Type::vector(elem, size);
        if crate::lower::metal::wide_integers::is_wide(elem) {
            self.warn_narrowed_wide(span);
        }
        let a = self.convert(fx, ha, &ta, &operand, false, span)?;
        let b = self.convert(fx, hb, &tb, &operand, false, span)?;
        let (naga_op, result) = naga_binary(op, operand, size, is_bool_vector);
        // `0.0 / 0.0`, `1 / 0`, `INT_MAX + 1` of constants: WGSL would
        // reject the module, Metal computes them; so does the GPU, at run time.
        let b = match self.binary_rejected_at_creation(fx, naga_op, a, b) {
            true => self.at_run_time(fx, b, &result, span)?,
            false => b,
        };
        let h = match naga_op {
            // GLSL leaves these undefined where WGSL defines them
            // (metal/signed_remainder.rs).
            Bo::Divide | Bo::Modulo if elem.is_integer() => {
                let s = self.naga_scalar(elem);
                self.integer_division(fx, naga_op, (a, b), (s, size), span)
            }
            _ => fx.add(
                Expression::Binary {
                    op: naga_op,
                    left: a,
                    right: b,
                },
                span,
            ),
        };
        let h = self.narrow_result(fx, h, &result, span);
        Ok((self.round_float_value(fx, h, &result, span), result))
    }

    /// `<<` and `>>`: the result has the promoted left type; naga wants an
    /// unsigned amount of the same shape. Constant amounts are masked to the
    /// bit width (Metal uses the low bits; naga rejects constants ≥ width).
    pub(in crate::lower) fn shift(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        (ha, ta): (Handle<Expression>, &Type),
        (hb, tb): (Handle<Expression>, &Type),
        span: Span,
    ) -> Option<Result<(Handle<Expression>, Type)>> {
        let sa = ta.element_scalar()?;
        let sb = tb.element_scalar()?;
        if !(sa.is_integer() || sa == Scalar::Bool) || !(sb.is_integer() || sb == Scalar::Bool) {
            return None;
        }
        // Scalars promote (C++); vectors keep their element type (Clang's vector model).
        let result = if matches!(ta, Type::Scalar(_)) {
            ta.with_scalar(conversions::promote(sa))
        } else {
            ta.clone()
        };
        let size = ta.vector_size()?;
        if tb.vector_size()? != 1 && tb.vector_size()? != size {
            return None;
        }
        let width = result.element_scalar()?.size() * 8;
        Some((|| {
            let a = self.convert(fx, ha, ta, &result, false, span)?;
            // Metal uses the low log2(width) bits of the amount; naga rejects
            // constant amounts of at least the width, so mask those here.
            let amount = match *fx.expr(hb) {
                Expression::Literal(Literal::I32(v)) => fx.add(
                    Expression::Literal(Literal::U32(v as u32 & (width - 1))),
                    span,
                ),
                Expression::Literal(Literal::U32(v)) => {
                    fx.add(Expression::Literal(Literal::U32(v & (width - 1))), span)
                }
                _ => {
                    let unsigned = tb.with_scalar(Scalar::UInt);
                    let h = self.convert(fx, hb, tb, &unsigned, true, span)?;
                    if width < 32 {
                        let mask = fx.add(Expression::Literal(Literal::U32(width - 1)), span);
                        let mask = self.convert(fx, mask, &Type::UINT, &unsigned, false, span)?;
                        fx.add(
                            Expression::Binary {
                                op: Bo::And,
                                left: h,
                                right: mask,
                            },
                            span,
                        )
                    } else {
                        h
                    }
                }
            };
            let amount_ty = Type::vector(Scalar::UInt, tb.vector_size().unwrap_or(1));
            let amount = self.convert(
                fx,
                amount,
                &amount_ty,
                &Type::vector(Scalar::UInt, size),
                false,
                span,
            )?;
            // A 64-bit value held in 32 bits (metal/wide_integers.rs).
            if width == 64 && self.narrows_wide_integers() {
                let shifted =
                    self.narrowed_shift(fx, op == BinaryOp::Shl, (a, amount), &result, span)?;
                return Ok((shifted, result));
            }
            if op == BinaryOp::Shl {
                if let Some(folded) = self.fold_left_shift(fx, a, amount, &result, span) {
                    return Ok((self.narrow_result(fx, folded, &result, span), result));
                }
            }
            let op = if op == BinaryOp::Shl {
                Bo::ShiftLeft
            } else {
                Bo::ShiftRight
            };
            let shifted = fx.add(
                Expression::Binary {
                    op,
                    left: a,
                    right: amount,
                },
                span,
            );
            Ok((self.narrow_result(fx, shifted, &result, span), result))
        })())
    }

    /// Arithmetic on narrow vectors wraps to the element type.
    pub(in crate::lower) fn narrow_result(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        ty: &Type,
        span: Span,
    ) -> Handle<Expression> {
        match ty.element_scalar() {
            Some(s) if crate::lower::metal::narrow_integers::is_narrow(s) => {
                self.truncate(fx, h, ty, span)
            }
            _ => h,
        }
    }

    pub(in crate::lower) fn matrix_binary(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        (ha, ta): (Handle<Expression>, Type),
        (hb, tb): (Handle<Expression>, Type),
        span: Span,
    ) -> Option<Result<(Handle<Expression>, Type)>> {
        let s = ta
            .element_scalar()
            .filter(|s| s.is_float())
            .or(tb.element_scalar().filter(|s| s.is_float()))?;
        let result = matrix_result_type(op, &ta, &tb, s)?;
        Some((|| {
            let a = if let Type::Scalar(_) = ta {
                self.convert(fx, ha, &ta, &Type::Scalar(s), false, span)?
            } else {
                ha
            };
            let b = if let Type::Scalar(_) = tb {
                self.convert(fx, hb, &tb, &Type::Scalar(s), false, span)?
            } else {
                hb
            };
            if op == BinaryOp::Div {
                // m / s has no naga form; multiply by the reciprocal instead.
                let one = self.const_value(fx, &ConstValue::Float(1.0, s), span);
                let Value::Rv(one, _) = one else {
                    unreachable!()
                };
                let inv = fx.add(
                    Expression::Binary {
                        op: Bo::Divide,
                        left: one,
                        right: b,
                    },
                    span,
                );
                let h = fx.add(
                    Expression::Binary {
                        op: Bo::Multiply,
                        left: a,
                        right: inv,
                    },
                    span,
                );
                return Ok((self.round_half_value(fx, h, &result, span), result));
            }
            if ta.element_scalar() != Some(s) || tb.element_scalar() != Some(s) {
                return Err(Error::coded(
                    Code::InvalidOperands,
                    span,
                    "matrix operands must have the same element type",
                ));
            }
            let naga_op = match op {
                BinaryOp::Add => Bo::Add,
                BinaryOp::Sub => Bo::Subtract,
                _ => Bo::Multiply,
            };
            let h = fx.add(
                Expression::Binary {
                    op: naga_op,
                    left: a,
                    right: b,
                },
                span,
            );
            Ok((self.round_half_value(fx, h, &result, span), result))
        })())
    }

    /// `&&` and `||`: short-circuit through a local when the right operand
    /// has side effects (naga evaluates every emitted expression).
    /// `p == q`, `p != q`, `p + n` where `p` is known to be null: equal
    /// only to another null pointer; arithmetic on it is refused.
    fn null_operand(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        let equal = match op {
            BinaryOp::Eq => true,
            BinaryOp::Ne => false,
            _ => return Err(crate::lower::metal::buffer_pointers::null_use(span)),
        };
        let vb = self.expr(fx, b)?;
        let same = match vb {
            Value::Null(_) => equal,
            Value::Ptr(_) | Value::Agg(_) => !equal,
            _ => {
                return Err(Error::coded(
                    Code::InvalidOperands,
                    b.span,
                    "comparison between a pointer and a non-pointer",
                ))
            }
        };
        Ok(Value::Rv(
            fx.add(Expression::Literal(Literal::Bool(same)), span),
            Type::BOOL,
        ))
    }

    pub(in crate::lower) fn logical(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        let (ha, ta) = self.condition(fx, a)?;
        // `simd_all(v) || !simd_any(v)`: the emulated exchange cannot sit
        // in a branch (`metal::simd_operands`).
        if ta == Type::BOOL && self.narrows_operand(b) {
            return self.narrowed_logical(fx, op, ha, b, span);
        }
        if has_side_effects(b) && ta == Type::BOOL {
            let bool_ty = self.naga_type(&Type::BOOL, span)?;
            let var = fx.local("_sc", bool_ty, span);
            let ptr = fx.add(Expression::LocalVariable(var), span);
            fx.push(
                naga::Statement::Store {
                    pointer: ptr,
                    value: ha,
                },
                span,
            );
            fx.open();
            let hb = self.scalar_condition(fx, b)?;
            fx.push(
                naga::Statement::Store {
                    pointer: ptr,
                    value: hb,
                },
                span,
            );
            let evaluate = fx.close();
            let (accept, reject) = if op == BinaryOp::LogicalAnd {
                (evaluate, naga::Block::new())
            } else {
                (naga::Block::new(), evaluate)
            };
            fx.push(
                naga::Statement::If {
                    condition: ha,
                    accept,
                    reject,
                },
                span,
            );
            return Ok(Value::Rv(
                fx.add(Expression::Load { pointer: ptr }, span),
                Type::BOOL,
            ));
        }
        let (hb, tb) = self.condition(fx, b)?;
        if ta != tb {
            return Err(Error::coded(
                Code::InvalidOperands,
                span,
                format!(
                    "invalid operands to binary `{}` (`{}` and `{}`)",
                    op.symbol(),
                    self.program.display(&ta),
                    self.program.display(&tb)
                ),
            ));
        }
        let naga_op = match (op, &ta) {
            (BinaryOp::LogicalAnd, Type::Scalar(_)) => Bo::LogicalAnd,
            (BinaryOp::LogicalOr, Type::Scalar(_)) => Bo::LogicalOr,
            (BinaryOp::LogicalAnd, _) => Bo::And,
            _ => Bo::InclusiveOr,
        };
        Ok(Value::Rv(
            fx.add(
                Expression::Binary {
                    op: naga_op,
                    left: ha,
                    right: hb,
                },
                span,
            ),
            ta,
        ))
    }

    pub(in crate::lower) fn unary(
        &mut self,
        fx: &mut FnCtx,
        op: UnaryOp,
        a: &Expr,
        span: Span,
    ) -> Result<Value> {
        match op {
            UnaryOp::PreInc | UnaryOp::PreDec => {
                return self.inc_dec(fx, a, op == UnaryOp::PreInc, true, span)
            }
            UnaryOp::Deref => {
                if let Some(v) = self.deref_of_pointer_cast(fx, a, span)? {
                    return Ok(v);
                }
                let v = self.expr(fx, a)?;
                return self.deref(fx, v, span);
            }
            UnaryOp::AddrOf => {
                if let Some(v) = self.address_of_pointer_variable(fx, a, span) {
                    return Ok(v);
                }
                if let crate::syntax::ast::ExprKind::Index(base, index) = &a.kind {
                    return self.address_of_element(fx, base, index, span);
                }
                let v = self.expr(fx, a)?;
                return self.address_of(fx, v, span);
            }
            UnaryOp::Not => {
                let (h, t) = self.condition(fx, a)?;
                return Ok(Value::Rv(
                    fx.add(
                        Expression::Unary {
                            op: naga::UnaryOperator::LogicalNot,
                            expr: h,
                        },
                        span,
                    ),
                    t,
                ));
            }
            _ => {}
        }
        let v = self.expr(fx, a)?;
        let v = self.arithmetic_operand(fx, v, a.span)?;
        let (h, t) = self.load(fx, v, a.span)?;
        let Some(s) = t.element_scalar() else {
            return Err(Error::coded(
                Code::InvalidOperands,
                span,
                format!(
                    "invalid argument type `{}` to unary expression",
                    self.program.display(&t)
                ),
            ));
        };
        let promoted = if matches!(t, Type::Scalar(_)) {
            t.with_scalar(conversions::promote(s))
        } else {
            t.clone()
        };
        let h = self.convert(fx, h, &t, &promoted, false, span)?;
        let ps = promoted.element_scalar().unwrap();
        let out = match op {
            UnaryOp::Plus => h,
            UnaryOp::Neg if ps.is_integer() && !ps.is_signed_integer() => {
                // WGSL has no unary minus on unsigned values; 0 - x wraps the same way.
                let zero_ty = self.naga_type(&promoted, span)?;
                let zero = fx.add(Expression::ZeroValue(zero_ty), span);
                fx.add(
                    Expression::Binary {
                        op: Bo::Subtract,
                        left: zero,
                        right: h,
                    },
                    span,
                )
            }
            UnaryOp::Neg if ps != Scalar::Bool => fx.add(
                Expression::Unary {
                    op: naga::UnaryOperator::Negate,
                    expr: h,
                },
                span,
            ),
            UnaryOp::BitNot if ps.is_integer() => fx.add(
                Expression::Unary {
                    op: naga::UnaryOperator::BitwiseNot,
                    expr: h,
                },
                span,
            ),
            _ => {
                return Err(Error::coded(
                    Code::InvalidOperands,
                    span,
                    format!(
                        "invalid argument type `{}` to unary expression",
                        self.program.display(&t)
                    ),
                ))
            }
        };
        let out = self.narrow_result(fx, out, &promoted, span);
        Ok(Value::Rv(out, promoted))
    }

    /// `c ? a : b` whose condition lowering found constant (`p ? p[0] : 0`
    /// of a pointer known to be null, `kFlag ? x : y`): only the operand
    /// taken is evaluated, as at run time, so a use of a null pointer in
    /// the other is no error. The result has the operands' common type
    /// when the other operand can be typed.
    fn known_ternary(
        &mut self,
        fx: &mut FnCtx,
        taken: bool,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        let (chosen, other) = if taken { (a, b) } else { (b, a) };
        let value = self.expr(fx, chosen)?;
        if matches!(value, Value::Ptr(_) | Value::Null(_) | Value::Agg(_)) {
            return Ok(value);
        }
        let Ok(other_ty) = self.type_of(fx, other) else {
            return Ok(value);
        };
        if crate::lower::ctx::value::arg_type(&value) == other_ty {
            return Ok(value);
        }
        let (h, t) = self.load(fx, value, chosen.span)?;
        let ty = self.common_type(&t, &other_ty, span)?;
        Ok(Value::Rv(
            self.convert(fx, h, &t, &ty, false, chosen.span)?,
            ty,
        ))
    }

    pub(in crate::lower) fn ternary(
        &mut self,
        fx: &mut FnCtx,
        c: &Expr,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        // `kSize == 0 ? nullptr : tgp_memory` (MLX): a null pointer has no
        // WGSL value, but with a constant condition only one operand is
        // evaluated, so only it is lowered, pointer and all.
        let null = crate::lower::metal::buffer_pointers::is_null;
        if null(a) || null(b) {
            if let Some(taken) = self.program.constant_truth(c) {
                return self.expr(fx, if taken { a } else { b });
            }
        }
        let (cond, ct) = self.condition(fx, c)?;
        if let Some(taken) = self.known_truth(fx, cond) {
            return self.known_ternary(fx, taken, a, b, span);
        }
        // A run-time choice of a null pointer: no WGSL value holds one.
        if let Some(n) = [a, b].into_iter().find(|e| null(e)) {
            return Err(crate::lower::expr::null_pointer(n.span));
        }
        // `c ? &a[i] : &b[j]` reads nothing: the chosen pointer is.
        let pointers = [a, b]
            .iter()
            .all(|e| matches!(self.type_of(fx, e), Ok(Type::Pointer(_))));
        let guarded_read =
            ct == Type::BOOL && !pointers && (reads_through_index(a) || reads_through_index(b));
        // `c ? simd_sum(x) : 0`: the emulated exchange cannot sit in a
        // branch (`metal::simd_operands`).
        let narrowed =
            ct == Type::BOOL && !pointers && (self.narrows_operand(a) || self.narrows_operand(b));
        if !narrowed && (has_side_effects(a) || has_side_effects(b) || guarded_read) {
            if ct != Type::BOOL {
                return Err(Error::coded(
                    Code::Unsupported,
                    c.span,
                    "a vector condition cannot select operands with side effects",
                ));
            }
            return self.ternary_branching(fx, cond, a, b, span);
        }
        let (va, vb) = if narrowed {
            self.narrowed_operands(fx, cond, a, b, span)?
        } else {
            (self.expr(fx, a)?, self.expr(fx, b)?)
        };
        if let (Value::Ptr(pa), Value::Ptr(pb)) = (&va, &vb) {
            return self.pointer_choice(fx, (cond, &ct), pa.clone(), pb.clone(), span);
        }
        let (ha, ta) = self.load(fx, va, a.span)?;
        let (hb, tb) = self.load(fx, vb, b.span)?;
        let ty = self.common_type(&ta, &tb, span)?;
        let accept = self.convert(fx, ha, &ta, &ty, false, a.span)?;
        let reject = self.convert(fx, hb, &tb, &ty, false, b.span)?;
        if !ty.is_scalar_or_vector() {
            let ty_h = self.naga_type(&ty, span)?;
            let var = fx.local("_sel", ty_h, span);
            let ptr = fx.add(Expression::LocalVariable(var), span);
            let mut yes = naga::Block::new();
            yes.push(
                naga::Statement::Store {
                    pointer: ptr,
                    value: accept,
                },
                Self::span(span),
            );
            let mut no = naga::Block::new();
            no.push(
                naga::Statement::Store {
                    pointer: ptr,
                    value: reject,
                },
                Self::span(span),
            );
            fx.push(
                naga::Statement::If {
                    condition: cond,
                    accept: yes,
                    reject: no,
                },
                span,
            );
            return Ok(Value::Rv(
                fx.add(Expression::Load { pointer: ptr }, span),
                ty,
            ));
        }
        Ok(Value::Rv(
            fx.add(
                Expression::Select {
                    condition: cond,
                    accept,
                    reject,
                },
                span,
            ),
            ty,
        ))
    }

    /// `c ? a : b` with side effects: only the chosen operand may run, so each
    /// is evaluated in its own branch and stored.
    pub(in crate::lower) fn ternary_branching(
        &mut self,
        fx: &mut FnCtx,
        cond: Handle<Expression>,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        fx.open();
        let va = self.expr(fx, a)?;
        // `c ? f() : (void)0`, a statement (SPIRV-Cross writes them): an
        // `if` whose arms are evaluated for their effects; `b` must be
        // `void` too (C++ [expr.cond]).
        if matches!(va, Value::Void) {
            let accept = fx.close();
            fx.open();
            let vb = self.expr(fx, b)?;
            if !matches!(vb, Value::Void) {
                return Err(Error::coded(
                    Code::WrongKind,
                    b.span,
                    "one operand of `?:` is `void`, so the other must be too",
                ));
            }
            let reject = fx.close();
            fx.push(
                naga::Statement::If {
                    condition: cond,
                    accept,
                    reject,
                },
                span,
            );
            return Ok(Value::Void);
        }
        let (ha, ta) = self.load(fx, va, a.span)?;
        let ta_h = self.naga_type(&ta, span)?;
        let var_a = fx.local("_sel", ta_h, span);
        let ptr_a = fx.add(Expression::LocalVariable(var_a), span);
        fx.push(
            naga::Statement::Store {
                pointer: ptr_a,
                value: ha,
            },
            span,
        );
        let accept = fx.close();
        fx.open();
        let (hb, tb) = self.rvalue(fx, b)?;
        let ptr_b = if tb == ta {
            ptr_a
        } else {
            let tb_h = self.naga_type(&tb, span)?;
            let var_b = fx.local("_sel", tb_h, span);
            fx.add(Expression::LocalVariable(var_b), span)
        };
        fx.push(
            naga::Statement::Store {
                pointer: ptr_b,
                value: hb,
            },
            span,
        );
        let reject = fx.close();
        fx.push(
            naga::Statement::If {
                condition: cond,
                accept,
                reject,
            },
            span,
        );
        let va = fx.add(Expression::Load { pointer: ptr_a }, span);
        if ptr_b == ptr_a {
            return Ok(Value::Rv(va, ta));
        }
        let vb = fx.add(Expression::Load { pointer: ptr_b }, span);
        let ty = self.common_type(&ta, &tb, span)?;
        let va = self.convert(fx, va, &ta, &ty, false, a.span)?;
        let vb = self.convert(fx, vb, &tb, &ty, false, b.span)?;
        Ok(Value::Rv(
            fx.add(
                Expression::Select {
                    condition: cond,
                    accept: va,
                    reject: vb,
                },
                span,
            ),
            ty,
        ))
    }

    /// The type both operands of `?:` convert to.
    pub(in crate::lower) fn common_type(&self, a: &Type, b: &Type, span: Span) -> Result<Type> {
        if a == b {
            return Ok(a.clone());
        }
        match (a, b) {
            (Type::Scalar(x), Type::Scalar(y)) => Ok(Type::Scalar(conversions::arithmetic(*x, *y))),
            (Type::Vector(..), Type::Scalar(_)) => Ok(a.clone()),
            (Type::Scalar(_), Type::Vector(..)) => Ok(b.clone()),
            _ => Err(Error::coded(
                Code::InvalidOperands,
                span,
                format!(
                    "incompatible operand types (`{}` and `{}`)",
                    self.program.display(a),
                    self.program.display(b)
                ),
            )),
        }
    }
}

/// The type of matrix arithmetic `ta op tb` with elements `s`: sums of equal
/// types, the linear-algebra products, and scaling by a scalar; `None` for
/// other operands.
fn matrix_result_type(op: BinaryOp, ta: &Type, tb: &Type, s: Scalar) -> Option<Type> {
    Some(match (op, ta, tb) {
        (BinaryOp::Add | BinaryOp::Sub, a, b) if a == b => a.clone(),
        (BinaryOp::Mul, Type::Matrix { columns, rows, .. }, Type::Vector(_, n)) if columns == n => {
            Type::Vector(s, *rows)
        }
        (BinaryOp::Mul, Type::Vector(_, n), Type::Matrix { columns, rows, .. }) if rows == n => {
            Type::Vector(s, *columns)
        }
        (
            BinaryOp::Mul,
            Type::Matrix {
                columns: c1,
                rows: r1,
                ..
            },
            Type::Matrix {
                columns: c2,
                rows: r2,
                ..
            },
        ) if c1 == r2 => Type::Matrix {
            scalar: s,
            columns: *c2,
            rows: *r1,
        },
        (BinaryOp::Mul | BinaryOp::Div, m @ Type::Matrix { .. }, Type::Scalar(_))
        | (BinaryOp::Mul, Type::Scalar(_), m @ Type::Matrix { .. }) => m.clone(),
        _ => return None,
    })
}

/// naga's operator for a C++ binary operator on operands of type `operand`
/// (`size` lanes), and the result type; `^` of `bool` vectors is `!=`.
fn naga_binary(op: BinaryOp, operand: Type, size: u8, is_bool_vector: bool) -> (Bo, Type) {
    match op {
        BinaryOp::Add => (Bo::Add, operand),
        BinaryOp::Sub => (Bo::Subtract, operand),
        BinaryOp::Mul => (Bo::Multiply, operand),
        BinaryOp::Div => (Bo::Divide, operand),
        BinaryOp::Rem => (Bo::Modulo, operand),
        BinaryOp::BitAnd => (Bo::And, operand),
        BinaryOp::BitOr => (Bo::InclusiveOr, operand),
        BinaryOp::BitXor if is_bool_vector => (Bo::NotEqual, operand),
        BinaryOp::BitXor => (Bo::ExclusiveOr, operand),
        BinaryOp::Eq => (Bo::Equal, Type::vector(Scalar::Bool, size)),
        BinaryOp::Ne => (Bo::NotEqual, Type::vector(Scalar::Bool, size)),
        BinaryOp::Lt => (Bo::Less, Type::vector(Scalar::Bool, size)),
        BinaryOp::Gt => (Bo::Greater, Type::vector(Scalar::Bool, size)),
        BinaryOp::Le => (Bo::LessEqual, Type::vector(Scalar::Bool, size)),
        BinaryOp::Ge => (Bo::GreaterEqual, Type::vector(Scalar::Bool, size)),
        _ => unreachable!("shifts and logical operators are lowered by their own functions"),
    }
}
