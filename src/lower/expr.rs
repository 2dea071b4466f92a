//! Expressions: names, literals, operators, indexing, members, assignment.

use super::builder::FnCtx;
use super::types::{scalar, vector_size};
use super::value::{Local, Place, PtrRoot, PtrValue, Value};
use super::{Error, Lowerer, Result};
use crate::sema::{consteval::ConstValue, conversions, Symbol};
use crate::source_map::Span;
use crate::syntax::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal};

impl Lowerer<'_, '_> {
    /// Lowers an expression to a value, place or pointer.
    pub(super) fn expr(&mut self, fx: &mut FnCtx, e: &Expr) -> Result<Value> {
        match &e.kind {
            ExprKind::Int {
                value,
                suffix,
                non_decimal,
            } => {
                let v = crate::sema::consteval::eval(
                    self.program,
                    &Expr {
                        kind: ExprKind::Int {
                            value: *value,
                            suffix: *suffix,
                            non_decimal: *non_decimal,
                        },
                        span: e.span,
                    },
                )?;
                Ok(self.const_value(fx, &v, e.span))
            }
            ExprKind::Float { value, suffix } => {
                let s = match suffix {
                    crate::syntax::ast::LiteralSuffix::Half => Scalar::Half,
                    crate::syntax::ast::LiteralSuffix::BFloat => {
                        return Err(Error::new(
                            e.span,
                            "`bfloat` literals are not supported yet",
                        ));
                    }
                    _ => Scalar::Float,
                };
                Ok(self.const_value(fx, &ConstValue::Float(*value, s), e.span))
            }
            ExprKind::Bool(b) => Ok(Value::Rv(
                fx.add(Expression::Literal(Literal::Bool(*b)), e.span),
                Type::BOOL,
            )),
            ExprKind::Name(path) => self.name(fx, path, e.span),
            ExprKind::Binary(op, a, b) => self.binary(fx, *op, a, b, e.span),
            ExprKind::Unary(op, a) => self.unary(fx, *op, a, e.span),
            ExprKind::Assign(op, lhs, rhs) => self.assign(fx, *op, lhs, rhs, e.span),
            ExprKind::PostIncDec(inc, a) => self.inc_dec(fx, a, *inc, false, e.span),
            ExprKind::Ternary(c, a, b) => self.ternary(fx, c, a, b, e.span),
            ExprKind::Index(base, index) => self.index(fx, base, index, e.span),
            ExprKind::Member(base, member, arrow) => {
                let mut base = self.expr(fx, base)?;
                if *arrow {
                    base = self.deref(fx, base, e.span)?;
                }
                self.member(fx, base, &member.name, member.span)
            }
            ExprKind::Call(callee, args) => self.call(fx, callee, args, e.span),
            ExprKind::Cast(kind, ty, inner) => self.cast(fx, *kind, ty, inner, e.span),
            ExprKind::Comma(items) => {
                let mut last = Value::Void;
                for item in items {
                    last = self.expr(fx, item)?;
                }
                Ok(last)
            }
            ExprKind::BraceConstruct(path, items) => {
                let ts = crate::syntax::ast::TypeSpec {
                    is_const: false,
                    space: None,
                    path: path.clone(),
                    args: Vec::new(),
                    ptr_ops: Vec::new(),
                    name_span: e.span,
                    span: e.span,
                };
                let ty = self.program.resolve_type(&ts)?;
                let (h, ty) = self.init_list(fx, items, &ty, e.span)?;
                Ok(Value::Rv(h, ty))
            }
            ExprKind::Templated(..) => Err(Error::new(e.span, "expected a value, found a type")),
            ExprKind::InitList(_) => Err(Error::new(
                e.span,
                "an initializer list is not allowed here",
            )),
        }
    }

    /// Lowers an expression and loads it: a plain value with its type.
    pub(super) fn rvalue(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
    ) -> Result<(Handle<Expression>, Type)> {
        let v = self.expr(fx, e)?;
        self.load(fx, v, e.span)
    }

    /// Reads a value out of a place; pointers are not values in WGSL.
    pub(super) fn load(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        span: Span,
    ) -> Result<(Handle<Expression>, Type)> {
        match v {
            Value::Rv(h, t) => Ok((h, t)),
            Value::Place(p) => Ok((fx.add(Expression::Load { pointer: p.ptr }, span), p.ty)),
            Value::Swizzle(p, comps) => {
                let Type::Vector(s, _) = p.ty else { unreachable!() };
                let vector = fx.add(Expression::Load { pointer: p.ptr }, span);
                Ok((self.swizzle(fx, vector, &comps, span), Type::vector(s, comps.len() as u8)))
            }
            Value::Void => Err(Error::new(span, "expression has type `void` and no value")),
            Value::Ptr(_) => Err(Error::new(span, "a pointer cannot be used as a value here").note(
                "pointers are translated as a buffer plus an element index; they can be indexed, dereferenced, offset and passed to functions",
            )),
        }
    }

    fn swizzle(
        &mut self,
        fx: &mut FnCtx,
        vector: Handle<Expression>,
        comps: &[u8],
        span: Span,
    ) -> Handle<Expression> {
        if comps.len() == 1 {
            return fx.add(
                Expression::AccessIndex {
                    base: vector,
                    index: u32::from(comps[0]),
                },
                span,
            );
        }
        let mut pattern = [naga::SwizzleComponent::X; 4];
        for (i, c) in comps.iter().enumerate() {
            pattern[i] = naga::SwizzleComponent::XYZW[*c as usize];
        }
        fx.add(
            Expression::Swizzle {
                size: vector_size(comps.len() as u8),
                vector,
                pattern,
            },
            span,
        )
    }

    /// A literal or composite constant as a function expression.
    pub(super) fn const_value(&mut self, fx: &mut FnCtx, v: &ConstValue, span: Span) -> Value {
        match v {
            ConstValue::Bool(b) => Value::Rv(
                fx.add(Expression::Literal(Literal::Bool(*b)), span),
                Type::BOOL,
            ),
            ConstValue::Int(..) | ConstValue::Float(..) => {
                let (lit, s) = literal(v);
                Value::Rv(fx.add(Expression::Literal(lit), span), Type::Scalar(s))
            }
            ConstValue::Composite(ty, _) => {
                let ty = ty.clone();
                let init = self.global_const_expr(v, span).expect("constants lower");
                let ty_h = self.naga_type(&ty, span).expect("constant types lower");
                let c = self.module.constants.append(
                    naga::Constant {
                        name: None,
                        ty: ty_h,
                        init,
                    },
                    naga::Span::UNDEFINED,
                );
                Value::Rv(fx.add(Expression::Constant(c), span), ty)
            }
        }
    }

    /// A constant value in the module's global expressions.
    pub(super) fn global_const_expr(
        &mut self,
        v: &ConstValue,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let expr = match v {
            ConstValue::Bool(b) => Expression::Literal(Literal::Bool(*b)),
            ConstValue::Int(..) | ConstValue::Float(..) => Expression::Literal(literal(v).0),
            ConstValue::Composite(ty, items) => {
                let ty_h = self.naga_type(ty, span)?;
                let mut components = Vec::new();
                for item in items {
                    components.push(self.global_const_expr(item, span)?);
                }
                if let Type::Struct(id) = ty {
                    components = self.with_padding(*id, components, span, |l, pad_ty| {
                        l.module
                            .global_expressions
                            .append(Expression::ZeroValue(pad_ty), naga::Span::UNDEFINED)
                    })?;
                }
                Expression::Compose {
                    ty: ty_h,
                    components,
                }
            }
        };
        Ok(self
            .module
            .global_expressions
            .append(expr, Self::span(span)))
    }

    /// Inserts zero values for the padding members of struct `id`.
    pub(super) fn with_padding(
        &mut self,
        id: crate::types::StructId,
        members: Vec<Handle<Expression>>,
        span: Span,
        mut zero: impl FnMut(&mut Self, Handle<naga::Type>) -> Handle<Expression>,
    ) -> Result<Vec<Handle<Expression>>> {
        let plan = self.plan(id, span)?.clone();
        let mut out = Vec::new();
        for (m, _) in &plan.members {
            match m {
                crate::layout::PlannedMember::Member(i) => out.push(members[*i]),
                crate::layout::PlannedMember::Padding(size) => {
                    let t = if *size == 4 {
                        Type::UINT
                    } else {
                        Type::Scalar(Scalar::Half)
                    };
                    let th = self.naga_type(&t, span)?;
                    out.push(zero(self, th));
                }
            }
        }
        Ok(out)
    }

    fn name(&mut self, fx: &mut FnCtx, path: &[String], span: Span) -> Result<Value> {
        let name = path.last().map(String::as_str).unwrap_or_default();
        if path.len() == 1 {
            if let Some(local) = fx.lookup(name).cloned() {
                return Ok(self.local_value(fx, local, span));
            }
        }
        match self.program.symbols.get(name) {
            Some(Symbol::Constant(i)) => {
                let i = *i;
                let c = self.global_constant(i, span)?;
                let ty = self.program.constants[i].ty.clone();
                Ok(Value::Rv(fx.add(Expression::Constant(c), span), ty))
            }
            Some(Symbol::Functions(_)) => Err(Error::new(
                span,
                format!("function `{name}` used as a value; call it with `()`"),
            )),
            Some(Symbol::Type(_)) => Err(Error::new(
                span,
                format!("expected a value, found type `{name}`"),
            )),
            None => match super::stdlib::constant(name) {
                Some(v) => Ok(self.stdlib_constant(fx, v, span)),
                None if crate::types::builtin_type(&path.join("::")).is_some() => Err(Error::new(
                    span,
                    format!("expected a value, found type `{}`", path.join("::")),
                )),
                None => Err(Error::new(
                    span,
                    format!("use of undeclared identifier `{}`", path.join("::")),
                )),
            },
        }
    }

    /// The naga constant for program constant `i`, created on first use.
    fn global_constant(&mut self, i: usize, span: Span) -> Result<Handle<naga::Constant>> {
        if let Some(c) = self.constants.get(&i) {
            return Ok(*c);
        }
        let gc = self.program.constants[i].clone();
        let init = self.global_const_expr(&gc.value, gc.span)?;
        let ty = self.naga_type(&gc.ty, span)?;
        let c = self.module.constants.append(
            naga::Constant {
                name: Some(gc.name),
                ty,
                init,
            },
            Self::span(gc.span),
        );
        self.constants.insert(i, c);
        Ok(c)
    }

    pub(super) fn local_value(&mut self, fx: &mut FnCtx, local: Local, span: Span) -> Value {
        match local {
            Local::Var { var, ty, is_const } => {
                let ptr = fx.add(Expression::LocalVariable(var), span);
                Value::Place(Place {
                    ptr,
                    ty,
                    writable: !is_const,
                })
            }
            Local::Ref(p) => Value::Place(p),
            Local::Ptr(p) => Value::Ptr(p),
            Local::PtrVar { var, mut ptr } => {
                let v = fx.add(Expression::LocalVariable(var), span);
                ptr.index = fx.add(Expression::Load { pointer: v }, span);
                Value::Ptr(ptr)
            }
        }
    }

    /// `u32` literal.
    pub(super) fn u32_lit(&mut self, fx: &mut FnCtx, v: u32, span: Span) -> Handle<Expression> {
        fx.add(Expression::Literal(Literal::U32(v)), span)
    }

    // ---- conversions -------------------------------------------------------

    /// Converts a value to `to`: implicitly (C++ rules; vector → vector of
    /// another type is an error) or explicitly (casts, constructors).
    pub(super) fn convert(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        from: &Type,
        to: &Type,
        explicit: bool,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if from == to {
            return Ok(h);
        }
        let ok = match (from, to) {
            (Type::Scalar(_), Type::Scalar(_) | Type::Vector(..)) => true,
            (Type::Vector(_, a), Type::Vector(_, b)) => explicit && a == b,
            (
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
            ) => explicit && c1 == c2 && r1 == r2,
            _ => false,
        };
        if !ok {
            let msg = conversions::check_implicit(from, to, self.program)
                .err()
                .unwrap_or_else(|| {
                    format!(
                        "cannot convert `{}` to `{}`",
                        self.program.display(from),
                        self.program.display(to)
                    )
                });
            return Err(Error::new(span, msg));
        }
        if let (Type::Scalar(_), Type::Vector(s, n)) = (from, to) {
            let lane = self.convert(fx, h, from, &Type::Scalar(*s), explicit, span)?;
            return Ok(fx.add(
                Expression::Splat {
                    size: vector_size(*n),
                    value: lane,
                },
                span,
            ));
        }
        let (fs, ts) = (from.element_scalar().unwrap(), to.element_scalar().unwrap());
        if fs == ts {
            return Ok(h);
        }
        if ts == Scalar::Bool {
            let zero_ty = self.naga_type(from, span)?;
            let zero = fx.add(Expression::ZeroValue(zero_ty), span);
            return Ok(fx.add(
                Expression::Binary {
                    op: Bo::NotEqual,
                    left: h,
                    right: zero,
                },
                span,
            ));
        }
        let target = scalar(ts);
        Ok(fx.add(
            Expression::As {
                expr: h,
                kind: target.kind,
                convert: Some(target.width),
            },
            span,
        ))
    }

    /// An expression as a scalar `bool` or `boolN` condition (`if (n)`, `!p`).
    pub(super) fn condition(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
    ) -> Result<(Handle<Expression>, Type)> {
        let (h, t) = self.rvalue(fx, e)?;
        match t {
            Type::Scalar(_) | Type::Vector(..) => {
                let to = t.with_scalar(Scalar::Bool);
                Ok((self.convert(fx, h, &t, &to, true, e.span)?, to))
            }
            _ => Err(Error::new(
                e.span,
                format!(
                    "value of type `{}` is not contextually convertible to `bool`",
                    self.program.display(&t)
                ),
            )),
        }
    }

    /// A scalar `bool` condition for `if`/`while`/`for`.
    pub(super) fn scalar_condition(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
    ) -> Result<Handle<Expression>> {
        let (h, t) = self.condition(fx, e)?;
        if t != Type::BOOL {
            return Err(Error::new(
                e.span,
                "a vector condition needs `all()` or `any()`",
            ));
        }
        Ok(h)
    }

    // ---- operators ---------------------------------------------------------

    fn binary(
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
        let va = self.expr(fx, a)?;
        if let Value::Ptr(p) = va {
            return self.pointer_arithmetic(fx, op, p, b, span);
        }
        let (ha, ta) = self.load(fx, va, a.span)?;
        let (hb, tb) = self.rvalue(fx, b)?;
        let (h, t) = self.binary_values(fx, op, (ha, ta), (hb, tb), span)?;
        Ok(Value::Rv(h, t))
    }

    /// Applies a binary operator to two loaded values with C++'s conversions.
    pub(super) fn binary_values(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        (ha, ta): (Handle<Expression>, Type),
        (hb, tb): (Handle<Expression>, Type),
        span: Span,
    ) -> Result<(Handle<Expression>, Type)> {
        let invalid = |l: &Self| {
            Error::new(
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
        let a = self.convert(fx, ha, &ta, &operand, false, span)?;
        let b = self.convert(fx, hb, &tb, &operand, false, span)?;
        let (naga_op, result) = match op {
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
            _ => unreachable!("handled above"),
        };
        Ok((
            fx.add(
                Expression::Binary {
                    op: naga_op,
                    left: a,
                    right: b,
                },
                span,
            ),
            result,
        ))
    }

    /// `<<` and `>>`: the result has the promoted left type; naga wants an
    /// unsigned amount of the same shape. Constant amounts are masked to the
    /// bit width (Metal uses the low bits; naga rejects constants ≥ width).
    fn shift(
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
        let result = ta.with_scalar(conversions::promote(sa));
        let size = ta.vector_size()?;
        if tb.vector_size()? != 1 && tb.vector_size()? != size {
            return None;
        }
        Some((|| {
            let a = self.convert(fx, ha, ta, &result, false, span)?;
            let hb = match fx.expr(hb) {
                Expression::Literal(Literal::I32(v)) => {
                    fx.add(Expression::Literal(Literal::U32(*v as u32 & 31)), span)
                }
                Expression::Literal(Literal::U32(v)) => {
                    fx.add(Expression::Literal(Literal::U32(*v & 31)), span)
                }
                _ => hb,
            };
            let amount_ty = Type::vector(Scalar::UInt, tb.vector_size().unwrap_or(1));
            let tb_now = if matches!(fx.expr(hb), Expression::Literal(Literal::U32(_))) {
                Type::UINT
            } else {
                tb.clone()
            };
            let b = self.convert(
                fx,
                hb,
                &tb_now,
                &amount_ty.with_scalar(Scalar::UInt),
                true,
                span,
            )?;
            let b = self.convert(
                fx,
                b,
                &amount_ty,
                &Type::vector(Scalar::UInt, size),
                false,
                span,
            )?;
            let naga_op = if op == BinaryOp::Shl {
                Bo::ShiftLeft
            } else {
                Bo::ShiftRight
            };
            Ok((
                fx.add(
                    Expression::Binary {
                        op: naga_op,
                        left: a,
                        right: b,
                    },
                    span,
                ),
                result,
            ))
        })())
    }

    fn matrix_binary(
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
        let result = match (op, &ta, &tb) {
            (BinaryOp::Add | BinaryOp::Sub, a, b) if a == b => a.clone(),
            (BinaryOp::Mul, Type::Matrix { columns, rows, .. }, Type::Vector(_, n))
                if columns == n =>
            {
                Type::Vector(s, *rows)
            }
            (BinaryOp::Mul, Type::Vector(_, n), Type::Matrix { columns, rows, .. })
                if rows == n =>
            {
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
        };
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
                return Ok((
                    fx.add(
                        Expression::Binary {
                            op: Bo::Multiply,
                            left: a,
                            right: inv,
                        },
                        span,
                    ),
                    result,
                ));
            }
            if ta.element_scalar() != Some(s) || tb.element_scalar() != Some(s) {
                return Err(Error::new(
                    span,
                    "matrix operands must have the same element type",
                ));
            }
            let naga_op = match op {
                BinaryOp::Add => Bo::Add,
                BinaryOp::Sub => Bo::Subtract,
                _ => Bo::Multiply,
            };
            Ok((
                fx.add(
                    Expression::Binary {
                        op: naga_op,
                        left: a,
                        right: b,
                    },
                    span,
                ),
                result,
            ))
        })())
    }

    /// `&&` and `||`: short-circuit through a local when the right operand
    /// has side effects (naga evaluates every emitted expression).
    fn logical(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        let (ha, ta) = self.condition(fx, a)?;
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
            return Err(Error::new(
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

    fn unary(&mut self, fx: &mut FnCtx, op: UnaryOp, a: &Expr, span: Span) -> Result<Value> {
        match op {
            UnaryOp::PreInc | UnaryOp::PreDec => {
                return self.inc_dec(fx, a, op == UnaryOp::PreInc, true, span)
            }
            UnaryOp::Deref => {
                let v = self.expr(fx, a)?;
                return self.deref(fx, v, span);
            }
            UnaryOp::AddrOf => {
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
        let (h, t) = self.rvalue(fx, a)?;
        let Some(s) = t.element_scalar() else {
            return Err(Error::new(
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
            UnaryOp::Neg if ps == Scalar::UInt => {
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
                return Err(Error::new(
                    span,
                    format!(
                        "invalid argument type `{}` to unary expression",
                        self.program.display(&t)
                    ),
                ))
            }
        };
        Ok(Value::Rv(out, promoted))
    }

    /// `*p`, and the implicit dereference of `p->m`.
    pub(super) fn deref(&mut self, fx: &mut FnCtx, v: Value, span: Span) -> Result<Value> {
        let Value::Ptr(p) = v else {
            return Err(Error::new(span, "indirection requires a pointer operand"));
        };
        Ok(Value::Place(self.element_place(fx, &p, p.index, span)))
    }

    /// The place of element `index` of pointer `p`'s root.
    pub(super) fn element_place(
        &mut self,
        fx: &mut FnCtx,
        p: &PtrValue,
        index: Handle<Expression>,
        span: Span,
    ) -> Place {
        let writable = !p.is_const;
        let ptr = match p.root {
            PtrRoot::Buffer(g) => {
                let base = fx.add(Expression::GlobalVariable(g), span);
                fx.add(Expression::Access { base, index }, span)
            }
            PtrRoot::Global(g) => fx.add(Expression::GlobalVariable(g), span),
            PtrRoot::Place(base, true) => fx.add(Expression::Access { base, index }, span),
            PtrRoot::Place(base, false) => base,
        };
        Place {
            ptr,
            ty: p.pointee.clone(),
            writable,
        }
    }

    fn address_of(&mut self, fx: &mut FnCtx, v: Value, span: Span) -> Result<Value> {
        let Value::Place(place) = v else {
            return Err(Error::new(span, "cannot take the address of an rvalue"));
        };
        // `&buf[i]` stays a (buffer, index) pair.
        if let Expression::Access { base, index } = *fx.expr(place.ptr) {
            if let Expression::GlobalVariable(g) = *fx.expr(base) {
                let space = self.buffer_space(g);
                let index = self.index_u32(fx, index, span);
                return Ok(Value::Ptr(PtrValue {
                    root: PtrRoot::Buffer(g),
                    index,
                    pointee: place.ty,
                    space,
                    is_const: !place.writable,
                }));
            }
        }
        let zero = self.u32_lit(fx, 0, span);
        Ok(Value::Ptr(PtrValue {
            root: PtrRoot::Place(place.ptr, false),
            index: zero,
            pointee: place.ty,
            space: crate::types::AddressSpace::Thread,
            is_const: !place.writable,
        }))
    }

    fn buffer_space(&self, g: Handle<naga::GlobalVariable>) -> crate::types::AddressSpace {
        match self.module.global_variables[g].space {
            naga::AddressSpace::Storage { access }
                if access.contains(naga::StorageAccess::STORE) =>
            {
                crate::types::AddressSpace::Device
            }
            _ => crate::types::AddressSpace::Constant,
        }
    }

    /// An index as `u32` (indices of the i32 kind are reinterpreted: the
    /// arithmetic wraps identically).
    fn index_u32(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        match fx.expr(h) {
            Expression::Literal(Literal::I32(v)) => {
                let v = *v as u32;
                self.u32_lit(fx, v, span)
            }
            Expression::Literal(Literal::U32(_)) => h,
            _ => fx.add(
                Expression::As {
                    expr: h,
                    kind: naga::ScalarKind::Uint,
                    convert: None,
                },
                span,
            ),
        }
    }

    /// `p + n`, `p - n`, `p - q`.
    fn pointer_arithmetic(
        &mut self,
        fx: &mut FnCtx,
        op: BinaryOp,
        p: PtrValue,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        let vb = self.expr(fx, b)?;
        if let (BinaryOp::Sub, Value::Ptr(q)) = (op, &vb) {
            if q.root != p.root {
                return Err(Error::new(
                    span,
                    "subtracting pointers into different objects",
                ));
            }
            let d = fx.add(
                Expression::Binary {
                    op: Bo::Subtract,
                    left: p.index,
                    right: q.index,
                },
                span,
            );
            let d = fx.add(
                Expression::As {
                    expr: d,
                    kind: naga::ScalarKind::Sint,
                    convert: None,
                },
                span,
            );
            return Ok(Value::Rv(d, Type::INT));
        }
        let (hb, tb) = self.load(fx, vb, b.span)?;
        let (Type::Scalar(s), BinaryOp::Add | BinaryOp::Sub) = (&tb, op) else {
            return Err(Error::new(
                span,
                format!("invalid operands to binary `{}` on a pointer", op.symbol()),
            ));
        };
        if !s.is_integer() {
            return Err(Error::new(b.span, "pointer offsets must be integers"));
        }
        let offset = if *s == Scalar::UInt {
            hb
        } else {
            self.index_u32(fx, hb, span)
        };
        let naga_op = if op == BinaryOp::Add {
            Bo::Add
        } else {
            Bo::Subtract
        };
        let index = fx.add(
            Expression::Binary {
                op: naga_op,
                left: p.index,
                right: offset,
            },
            span,
        );
        Ok(Value::Ptr(PtrValue { index, ..p }))
    }

    fn ternary(
        &mut self,
        fx: &mut FnCtx,
        c: &Expr,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        let (cond, ct) = self.condition(fx, c)?;
        if has_side_effects(a) || has_side_effects(b) {
            if ct != Type::BOOL {
                return Err(Error::new(
                    c.span,
                    "a vector condition cannot select operands with side effects",
                ));
            }
            return self.ternary_branching(fx, cond, a, b, span);
        }
        let (ha, ta) = self.rvalue(fx, a)?;
        let (hb, tb) = self.rvalue(fx, b)?;
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
    fn ternary_branching(
        &mut self,
        fx: &mut FnCtx,
        cond: Handle<Expression>,
        a: &Expr,
        b: &Expr,
        span: Span,
    ) -> Result<Value> {
        fx.open();
        let (ha, ta) = self.rvalue(fx, a)?;
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
    pub(super) fn common_type(&self, a: &Type, b: &Type, span: Span) -> Result<Type> {
        if a == b {
            return Ok(a.clone());
        }
        match (a, b) {
            (Type::Scalar(x), Type::Scalar(y)) => Ok(Type::Scalar(conversions::arithmetic(*x, *y))),
            (Type::Vector(..), Type::Scalar(_)) => Ok(a.clone()),
            (Type::Scalar(_), Type::Vector(..)) => Ok(b.clone()),
            _ => Err(Error::new(
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

/// True if evaluating `e` may change memory or call a user function.
pub(super) fn has_side_effects(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Assign(..) | ExprKind::PostIncDec(..) | ExprKind::Call(..) => true,
        ExprKind::Unary(UnaryOp::PreInc | UnaryOp::PreDec, _) => true,
        ExprKind::Unary(_, a) | ExprKind::Member(a, _, _) | ExprKind::Cast(_, _, a) => {
            has_side_effects(a)
        }
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
            has_side_effects(a) || has_side_effects(b)
        }
        ExprKind::Ternary(a, b, c) => {
            has_side_effects(a) || has_side_effects(b) || has_side_effects(c)
        }
        ExprKind::Comma(items) => items.iter().any(has_side_effects),
        _ => false,
    }
}

/// The naga literal of a scalar constant.
pub(super) fn literal(v: &ConstValue) -> (Literal, Scalar) {
    match *v {
        ConstValue::Bool(b) => (Literal::Bool(b), Scalar::Bool),
        ConstValue::Int(i, Scalar::UInt) => (Literal::U32(i as u32), Scalar::UInt),
        ConstValue::Int(i, _) => (Literal::I32(i as i32), Scalar::Int),
        ConstValue::Float(f, Scalar::Half) => (Literal::F16(half::f16::from_f64(f)), Scalar::Half),
        ConstValue::Float(f, _) => (Literal::F32(f as f32), Scalar::Float),
        ConstValue::Composite(..) => unreachable!("composites are not literals"),
    }
}
