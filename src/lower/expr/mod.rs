//! Expressions: names, literals, operators, indexing, members, assignment.

pub(in crate::lower) mod access;
pub(in crate::lower) mod assign;
pub(in crate::lower) mod const_exprs;
pub(in crate::lower) mod operators;

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
pub(in crate::lower) use crate::lower::ctx::value::{atomic_access, contains_atomic};
use crate::lower::ctx::value::{Local, Place, PtrValue, Value};
use crate::lower::types::vector_size;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::{consteval::ConstValue, conversions, Symbol};
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind, UnaryOp};
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal};

impl Lowerer<'_, '_> {
    /// Lowers an expression to a value, place or pointer.
    pub(in crate::lower) fn expr(&mut self, fx: &mut FnCtx, e: &Expr) -> Result<Value> {
        // An operand lowered already, looking for an operator overload.
        if let Some(v) = fx.take_lowered(e) {
            return Ok(v);
        }
        match &e.kind {
            ExprKind::SizeOf { query, operand } => self.size_of(fx, *query, operand, e.span),
            ExprKind::PackExpansion(_)
            | ExprKind::TypePackExpansion(_)
            | ExprKind::SizeofPack(_)
            | ExprKind::Fold { .. } => Err(outside_pack(e)),
            ExprKind::Int { .. } => self.int_literal(fx, e),
            ExprKind::Float { value, suffix } => self.float_literal(fx, *value, *suffix, e.span),
            ExprKind::Bool(b) => Ok(Value::Rv(
                fx.add(Expression::Literal(Literal::Bool(*b)), e.span),
                Type::BOOL,
            )),
            ExprKind::Name(path) => self.name(fx, path, e.span),
            ExprKind::Binary(op, a, b) => {
                match self.user_operator(fx, op.symbol(), &[a, b], e.span)? {
                    Some(v) => Ok(v),
                    None => self.binary(fx, *op, a, b, e.span),
                }
            }
            ExprKind::Unary(op, a) => self.unary_or_operator(fx, *op, a, e.span),
            ExprKind::Assign(Some(op), lhs, rhs) => {
                let compound = format!("{}=", op.symbol());
                match self.user_operator(fx, &compound, &[lhs, rhs], e.span)? {
                    Some(v) => Ok(v),
                    None => self.assign(fx, Some(*op), lhs, rhs, e.span),
                }
            }
            ExprKind::Assign(op, lhs, rhs) => match self.user_assignment(fx, lhs, rhs, e.span)? {
                Some(v) => Ok(v),
                None => self.assign(fx, *op, lhs, rhs, e.span),
            },
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
            ExprKind::Call(callee, _) if self.logging_call(fx, callee, e.span).is_some() => {
                Ok(Value::Void)
            }
            ExprKind::Str(_) => self.string_literal(e.span),
            // A call is a use of the resources it is given: an element of
            // an array of them chosen at run time makes it a `switch`.
            ExprKind::Call(callee, args) => self.choosing(fx, e.span, &|l, fx| {
                match l.typed_list_args(callee, args)? {
                    // `f({a, b})`: the list builds the parameter's type.
                    Some(args) => l.call(fx, callee, &args, e.span),
                    None => l.call(fx, callee, args, e.span),
                }
            }),
            // `P<float>{a, b}`, `(T){a, b}`: built as a cast of the list.
            ExprKind::Cast(_, ts, inner) if matches!(inner.kind, ExprKind::InitList(_)) => {
                let ExprKind::InitList(items) = &inner.kind else {
                    unreachable!("matched")
                };
                let ty = self.program.resolve_type(ts)?;
                self.braced_value(fx, items, &ty, e.span)
            }
            ExprKind::Cast(kind, ty, inner) => self.cast(fx, *kind, ty, inner, e.span),
            ExprKind::Comma(items) => {
                let mut last = Value::Void;
                for item in items {
                    last = self.expr(fx, item)?;
                }
                Ok(last)
            }
            ExprKind::BraceConstruct(path, items) => self.brace_construct(fx, path, items, e.span),
            ExprKind::Templated(..) => self.templated_value(fx, e),
            ExprKind::InitList(_) => Err(Error::coded(
                Code::InvalidInitializer,
                e.span,
                "an initializer list is not allowed here",
            )),
            ExprKind::Lambda(l) => self.lambda(fx, l, e.span),
            ExprKind::MemberTemplate(..) => Err(Error::coded(
                Code::Unsupported,
                e.span,
                "a member function template with explicit template arguments can only be called here: `x.template f<N>(..)`",
            )),
        }
    }

    /// `sizeof(operand)` or `alignof(operand)` (`align`), a constant.
    fn size_of(
        &mut self,
        fx: &mut FnCtx,
        query: crate::syntax::ast::TypeQuery,
        operand: &crate::syntax::ast::SizeOperand,
        span: Span,
    ) -> Result<Value> {
        use crate::lower::ctx::value::Local;
        // A reference (a `threadgroup` variable of the function is one)
        // has the size of what it refers to.
        let local = |name: &str| match fx.lookup(name) {
            Some(Local::Var { ty, .. } | Local::Value(_, ty)) => Some(ty.clone()),
            Some(Local::Ref(p)) => Some(p.ty.clone()),
            Some(Local::Bytes(b)) => Some(b.ty.clone()),
            Some(Local::Agg(a)) => Some(a.ty.clone()),
            _ => None,
        };
        let v = crate::sema::sizeof::eval(self.program, query, operand, span, &local)?;
        Ok(self.const_value(fx, &v, span))
    }

    /// An integer literal `e`, typed as C++ types it (a 64-bit one needs
    /// 64-bit integer support, or is held in 32 bits).
    fn int_literal(&mut self, fx: &mut FnCtx, e: &Expr) -> Result<Value> {
        let v = crate::sema::consteval::eval(self.program, e)?;
        if matches!(v, ConstValue::Int(_, Scalar::Long | Scalar::ULong)) {
            self.check_64_bit(e.span)?;
        }
        Ok(self.const_value(fx, &v, e.span))
    }

    /// A floating-point literal: `half` with an `h` suffix, else `float`.
    fn float_literal(
        &mut self,
        fx: &mut FnCtx,
        value: f64,
        suffix: crate::syntax::ast::LiteralSuffix,
        span: Span,
    ) -> Result<Value> {
        let s = match suffix {
            crate::syntax::ast::LiteralSuffix::Half => Scalar::Half,
            crate::syntax::ast::LiteralSuffix::BFloat => {
                // Rounded once, from the literal's exact value.
                let rounded = crate::types::bfloat_nearest(value).into();
                return Ok(self.const_value(fx, &ConstValue::Float(rounded, Scalar::BFloat), span));
            }
            _ => Scalar::Float,
        };
        Ok(self.const_value(fx, &ConstValue::Float(value, s), span))
    }

    /// A prefix operator: a user `operator` overload where one applies,
    /// else the built-in operator.
    fn unary_or_operator(
        &mut self,
        fx: &mut FnCtx,
        op: UnaryOp,
        a: &Expr,
        span: Span,
    ) -> Result<Value> {
        let symbol = match op {
            UnaryOp::Neg => Some("-"),
            UnaryOp::Plus => Some("+"),
            UnaryOp::Not => Some("!"),
            UnaryOp::BitNot => Some("~"),
            _ => None,
        };
        let user = match symbol {
            Some(s) => self.user_operator(fx, s, &[a], span)?,
            None => None,
        };
        match user {
            Some(v) => Ok(v),
            None => self.unary(fx, op, a, span),
        }
    }

    /// `T{items}`: a constructor of `T` where one applies, else aggregate
    /// initialization.
    pub(in crate::lower) fn brace_construct(
        &mut self,
        fx: &mut FnCtx,
        path: &[String],
        items: &[crate::syntax::ast::Init],
        span: Span,
    ) -> Result<Value> {
        let ts = crate::syntax::ast::TypeSpec {
            is_const: false,
            is_constexpr: false,
            space: None,
            path: path.to_vec(),
            args: Vec::new(),
            ptr_ops: Vec::new(),
            name_span: span,
            span,
        };
        let ty = self.program.resolve_type(&ts)?;
        self.braced_value(fx, items, &ty, span)
    }

    /// Lowers an expression and loads it: a plain value with its type.
    pub(in crate::lower) fn rvalue(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
    ) -> Result<(Handle<Expression>, Type)> {
        let v = self.expr(fx, e)?;
        self.load(fx, v, e.span)
    }

    /// Reads a value out of a place; pointers are not values in WGSL.
    pub(in crate::lower) fn load(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        span: Span,
    ) -> Result<(Handle<Expression>, Type)> {
        match v {
            Value::Rv(h, t) => Ok((h, t)),
            Value::Place(p) if matches!(p.ty, Type::Atomic(_)) || contains_atomic(&p.ty) => Err(atomic_access(span)),
            Value::Place(p) => Ok((fx.add(Expression::Load { pointer: p.ptr }, span), p.ty.unpacked())),
            Value::Swizzle(p, comps) => {
                let Type::Vector(s, _) = p.ty else { unreachable!() };
                let vector = fx.add(Expression::Load { pointer: p.ptr }, span);
                Ok((self.swizzle(fx, vector, &comps, span), Type::vector(s, comps.len() as u8)))
            }
            Value::Bytes(b) => self.bytes_load(fx, &b, span),
            Value::BitField(b) => self.bit_field_load(fx, &b, span),
            Value::WordPart(p) => self.word_part_load(fx, &p, span),
            Value::BytesSwizzle(b, comps) => {
                let (vector, ty) = self.bytes_load(fx, &b, span)?;
                let s = ty.element_scalar().expect("a vector");
                Ok((self.swizzle(fx, vector, &comps, span), Type::vector(s, comps.len() as u8)))
            }
            Value::Void => Err(Error::coded(Code::WrongKind, span, "expression has type `void` and no value")),
            Value::Agg(a) => Err(self.place_struct_value_error(&a.ty, span)),
            Value::Null(_) => Err(null_pointer(span)),
            Value::Ptr(_) | Value::Cell(_) => Err(Error::coded(Code::WrongKind, span, "a pointer cannot be used as a value here").note(
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
    pub(in crate::lower) fn const_value(
        &mut self,
        fx: &mut FnCtx,
        v: &ConstValue,
        span: Span,
    ) -> Value {
        match v {
            ConstValue::Bool(b) => Value::Rv(
                fx.add(Expression::Literal(Literal::Bool(*b)), span),
                Type::BOOL,
            ),
            ConstValue::Float(f, s) if !literal_is_finite(*f, *s) => {
                let h = self
                    .non_finite_constant(fx, *f, *s, span)
                    .expect("`u32` lowers");
                Value::Rv(h, Type::Scalar(*s))
            }
            ConstValue::Int(..) | ConstValue::Float(..) => {
                let (lit, s) = literal(v);
                let lit = self.narrowed_literal(v, span).unwrap_or(lit);
                Value::Rv(fx.add(Expression::Literal(lit), span), Type::Scalar(s))
            }
            // A NaN or infinity inside: built here, lane by lane (a union's
            // words are bits, which need no care).
            ConstValue::Composite(ty, items) if !const_is_finite(v) && !self.holds_union(ty) => {
                let ty_h = self.naga_type(ty, span).expect("constant types lower");
                let mut components = Vec::new();
                for item in items {
                    let Value::Rv(h, _) = self.const_value(fx, item, span) else {
                        unreachable!("constants are values")
                    };
                    components.push(h);
                }
                if let Type::Struct(id) = ty {
                    components = self
                        .with_padding(*id, components, span, |_, pad_ty| {
                            fx.add(Expression::ZeroValue(pad_ty), span)
                        })
                        .expect("constant types lower");
                }
                Value::Rv(
                    fx.add(
                        Expression::Compose {
                            ty: ty_h,
                            components,
                        },
                        span,
                    ),
                    ty.clone(),
                )
            }
            ConstValue::Composite(ty, _) => {
                let ty = ty.clone();
                let init = self.global_const_expr(v, span).expect("constants lower");
                let ty_h = self.naga_type(&ty, span).expect("constant types lower");
                let c = self.global.module.constants.append(
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
    pub(in crate::lower) fn global_const_expr(
        &mut self,
        v: &ConstValue,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let expr = match v {
            ConstValue::Composite(Type::Struct(id), items)
                if self.program.structs.get(*id).is_union =>
            {
                return self.union_const_expr(*id, items, span);
            }
            ConstValue::Bool(b) => Expression::Literal(Literal::Bool(*b)),
            ConstValue::Int(..) | ConstValue::Float(..) => {
                Expression::Literal(self.narrowed_literal(v, span).unwrap_or(literal(v).0))
            }
            ConstValue::Composite(ty, items) => {
                let ty_h = self.naga_type(ty, span)?;
                let mut components = Vec::new();
                for item in items {
                    components.push(self.global_const_expr(item, span)?);
                }
                if let Type::Struct(id) = ty {
                    components = self.with_padding(*id, components, span, |l, pad_ty| {
                        l.global
                            .module
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
            .global
            .module
            .global_expressions
            .append(expr, Self::span(span)))
    }

    /// Inserts zero values for the padding members of struct `id`.
    pub(in crate::lower) fn with_padding(
        &mut self,
        id: crate::types::StructId,
        members: Vec<Handle<Expression>>,
        span: Span,
        mut zero: impl FnMut(&mut Self, Handle<naga::Type>) -> Handle<Expression>,
    ) -> Result<Vec<Handle<Expression>>> {
        if self.program.structs.get(id).members.is_empty() {
            // The member WGSL gives an empty struct (see `struct_inner`).
            let word = self.naga_type(&Type::UINT, span)?;
            return Ok(vec![zero(self, word)]);
        }
        let Some(plan) = self.plan(id).cloned() else {
            return Ok(members);
        };
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
        if path == ["nullptr"] {
            return Ok(Value::Null(None));
        }
        if path.len() == 1 {
            if let Some(Local::PendingPtr { .. }) = fx.lookup(name) {
                return Err(Error::coded(
                    Code::InvalidInitializer,
                    span,
                    format!("pointer `{name}` is read before anything is assigned to it"),
                )
                .note("a pointer is translated as the buffer or variable it points into, fixed by its first assignment, plus an index"));
            }
            if let Some(Local::Chosen {
                array,
                var,
                index_ty,
            }) = fx.lookup(name).cloned()
            {
                return self.chosen_variable(fx, &array, var, &index_ty, span);
            }
            if let Some(local) = fx.lookup(name).cloned() {
                return Ok(self.local_value(fx, local, span));
            }
            if let Some(e) = self.implicit_member(fx, name, span) {
                return self.expr(fx, &e);
            }
            // A static constant of the struct of a static member function.
            if let Some(owner) = &fx.owner {
                let qualified = [owner.clone(), name.to_string()];
                if let Some(Symbol::Constant(_)) = self.program.qualified_symbol(&qualified) {
                    return self.name(fx, &qualified, span);
                }
            }
        }
        // `S::N`: a static member constant.
        if path.len() > 1 {
            if let Some(Symbol::Constant(i)) = self.program.qualified_symbol(path) {
                let i = *i;
                if !const_is_finite(&self.program.constants[i].value) {
                    let v = self.program.constants[i].value.clone();
                    return Ok(self.const_value(fx, &v, span));
                }
                let c = self.global_constant(i, span)?;
                let ty = self.program.constants[i].ty.clone();
                return Ok(Value::Rv(fx.add(Expression::Constant(c), span), ty));
            }
        }
        // A local that a function of an enclosing namespace's renamed
        // member shadows in C++ (`frexp(T x, thread int& exp)` beside
        // `metal::fast::exp`): the parser rewrote its name to the member's
        // (syntax/from_pest/namespaces.rs); a function cannot be a value.
        if let (Some(Symbol::Functions(_)), Some((_, unqualified))) =
            (self.program.symbols.get(name), name.rsplit_once("::"))
        {
            if let Some(local) = fx.lookup(unqualified).cloned() {
                return Ok(self.local_value(fx, local, span));
            }
        }
        match self.program.symbols.get(name) {
            Some(Symbol::Constant(i)) => {
                let i = *i;
                // WGSL has no non-finite constants: the value is made where used.
                if !const_is_finite(&self.program.constants[i].value) {
                    let v = self.program.constants[i].value.clone();
                    return Ok(self.const_value(fx, &v, span));
                }
                let c = self.global_constant(i, span)?;
                let ty = self.program.constants[i].ty.clone();
                Ok(Value::Rv(fx.add(Expression::Constant(c), span), ty))
            }
            Some(Symbol::FunctionConstant(i)) => self.function_constant(fx, *i, span),
            Some(Symbol::SpecConstant(i)) => self.spec_constant(fx, *i, span),
            Some(Symbol::Sampler(i)) => {
                let (g, comparison) = self.program_sampler(*i, span)?;
                Ok(Value::Rv(
                    fx.add(Expression::GlobalVariable(g), span),
                    Type::Sampler { comparison },
                ))
            }
            Some(Symbol::Functions(_)) => Err(Error::coded(
                Code::WrongKind,
                span,
                format!("function `{name}` used as a value; call it with `()`"),
            )),
            Some(Symbol::Type(_)) => Err(Error::coded(
                Code::WrongKind,
                span,
                format!("expected a value, found type `{name}`"),
            )),
            None => match crate::lower::stdlib::constant(&path.join("::"))
                .or_else(|| crate::lower::stdlib::constant(name))
            {
                Some(v) => Ok(self.stdlib_constant(fx, v, span)),
                None if crate::types::builtin_type(&path.join("::")).is_some() => {
                    Err(Error::coded(
                        Code::WrongKind,
                        span,
                        format!("expected a value, found type `{}`", path.join("::")),
                    ))
                }
                None => Err(Error::coded(
                    Code::UndeclaredIdentifier,
                    span,
                    format!("use of undeclared identifier `{}`", path.join("::")),
                )
                .with_notes(crate::diagnostics::suggest::did_you_mean(
                    &path.join("::"),
                    fx.names_in_scope()
                        .into_iter()
                        .chain(self.program.value_names()),
                ))),
            },
        }
    }

    /// The naga constant for program constant `i`, created on first use.
    fn global_constant(&mut self, i: usize, span: Span) -> Result<Handle<naga::Constant>> {
        if let Some(c) = self.global.constants.get(&i) {
            return Ok(*c);
        }
        let gc = self.program.constants[i].clone();
        let init = self.global_const_expr(&gc.value, gc.span)?;
        let ty = self.naga_type(&gc.ty, span)?;
        let c = self.global.module.constants.append(
            naga::Constant {
                name: Some(gc.name),
                ty,
                init,
            },
            Self::span(gc.span),
        );
        self.global.constants.insert(i, c);
        Ok(c)
    }

    pub(in crate::lower) fn local_value(
        &mut self,
        fx: &mut FnCtx,
        local: Local,
        span: Span,
    ) -> Value {
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
            Local::Value(h, ty) => Value::Rv(h, ty),
            Local::Bytes(b) => Value::Bytes(b),
            Local::Ptr(p) => Value::Ptr(p),
            Local::Null(p) => Value::Null(Some(p)),
            Local::Agg(a) => Value::Agg(a),
            // A reference to a caller's pointer (`device T*& p`,
            // `metal/pointer_addresses.rs`) reads as the pointer.
            Local::Cell(c) if !c.addressed && c.count.is_none() => {
                let target = c.target.borrow().clone();
                match target {
                    Some(target) => Value::Ptr(PtrValue {
                        index: fx.add(Expression::Load { pointer: c.index }, span),
                        ..target
                    }),
                    None => Value::Cell(c),
                }
            }
            Local::Cell(c) => Value::Cell(c),
            Local::PtrVar { var, mut ptr } => {
                let v = fx.add(Expression::LocalVariable(var), span);
                ptr.index = fx.add(Expression::Load { pointer: v }, span);
                Value::Ptr(ptr)
            }
            // Refused by `name` before it gets here: nothing to read yet.
            Local::PendingPtr { .. } => Value::Void,
            // Chosen by `name` before it gets here (`metal/resource_choice.rs`).
            Local::Chosen { .. } => Value::Void,
        }
    }

    /// `u32` literal.
    pub(in crate::lower) fn u32_lit(
        &mut self,
        fx: &mut FnCtx,
        v: u32,
        span: Span,
    ) -> Handle<Expression> {
        fx.add(Expression::Literal(Literal::U32(v)), span)
    }

    // ---- conversions -------------------------------------------------------

    /// Converts a value to `to`: implicitly (C++ rules; vector → vector of
    /// another type is an error) or explicitly (casts, constructors).
    pub(in crate::lower) fn convert(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        from: &Type,
        to: &Type,
        explicit: bool,
        span: Span,
    ) -> Result<Handle<Expression>> {
        // Packed vectors are storage formats: as values they are aligned vectors.
        let (from, to) = (&from.unpacked(), &to.unpacked());
        if matches!(to.element_scalar(), Some(Scalar::Long | Scalar::ULong)) {
            self.check_64_bit(span)?;
            // A float's value may not fit in 32 bits (metal/wide_integers.rs).
            if from.element_scalar().is_some_and(Scalar::is_float) {
                self.warn_narrowed_wide(span);
            }
        }
        if to.element_scalar() == Some(Scalar::Half) {
            // naga's writer enables f16 when a type in the module uses it.
            self.naga_type(to, span)?;
        }
        if from == to {
            return Ok(h);
        }
        // A derived struct's value as its base's (slicing).
        if let (Type::Struct(d), Type::Struct(b)) = (from, to) {
            if self.proper_base(from, *b).is_some() {
                let v = self.base_subobject(fx, Value::Rv(h, from.clone()), *d, *b, span)?;
                return Ok(self.load(fx, v, span)?.0);
            }
        }
        if matches!(to, Type::Struct(_)) {
            if let Some(v) = self.converting_construction(fx, (h, from), to, explicit, span)? {
                return Ok(self.load(fx, v, span)?.0);
            }
        }
        let value = Value::Rv(h, from.clone());
        if let Some((v, _)) = self.conversion_function(fx, &value, to, explicit, span)? {
            return Ok(v);
        }
        self.check_conversion(from, to, explicit, span)?;
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
        self.convert_elements(fx, h, from, to, explicit, span)
    }

    /// Whether `from` converts to `to` (implicitly, unless `explicit`): a
    /// scalar to a scalar or vector, and (explicitly) vectors and matrices
    /// of one shape.
    fn check_conversion(&self, from: &Type, to: &Type, explicit: bool, span: Span) -> Result<()> {
        let ok = match (from, to) {
            (Type::Scalar(a), Type::Scalar(b) | Type::Vector(b, _)) => {
                explicit || conversions::bfloat_implicit(*a, *b).is_ok()
            }
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
            return Err(Error::coded(Code::TypeMismatch, span, msg));
        }
        Ok(())
    }

    /// The conversion of `h` between the element types of `from` and `to`
    /// (same shape): through the wider integer for narrow integers, `!= 0`
    /// for `bool`, rounding for `half`.
    fn convert_elements(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        from: &Type,
        to: &Type,
        explicit: bool,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let (fs, ts) = (from.element_scalar().unwrap(), to.element_scalar().unwrap());
        if fs == ts {
            return Ok(h);
        }
        if let (Type::Scalar(_), Some(v)) = (from, literal_value(fx.expr(h))) {
            if let Some(c) = crate::sema::consteval::convert_to(&v, ts) {
                return Ok(self.const_value(fx, &c, span).handle());
            }
        }
        if crate::lower::metal::narrow_integers::is_narrow(ts) {
            let wide = to.with_scalar(if ts.is_signed_integer() {
                Scalar::Int
            } else {
                Scalar::UInt
            });
            let h = self.convert(fx, h, from, &wide, explicit, span)?;
            return Ok(if crate::lower::metal::narrow_integers::fits(fs, ts) {
                h
            } else {
                self.truncate(fx, h, to, span)
            });
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
        let target = self.naga_scalar(ts);
        if fs.is_float() && ts.is_float() && self.naga_scalar(fs) == target {
            // Between float types held in `f32` (`half` as `f32`, `bfloat`):
            // only rounding remains.
            return Ok(self.round_float_value(fx, h, to, span));
        }
        if ts == Scalar::BFloat
            && matches!(self.naga_scalar(fs), naga::Scalar::I32 | naga::Scalar::U32)
        {
            // One rounding from the integer (metal/bfloat.rs).
            let signed = self.naga_scalar(fs) == naga::Scalar::I32;
            let n = to.vector_size().unwrap_or(1);
            let odd = crate::lower::metal::bfloat::integer_to_f32_odd(fx, h, signed, n, span);
            return Ok(self.round_float_value(fx, odd, to, span));
        }
        let converted = fx.add(
            Expression::As {
                expr: h,
                kind: target.kind,
                convert: Some(target.width),
            },
            span,
        );
        Ok(self.round_float_value(fx, converted, to, span))
    }

    /// An expression as a scalar `bool` or `boolN` condition (`if (n)`, `!p`).
    pub(in crate::lower) fn condition(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
    ) -> Result<(Handle<Expression>, Type)> {
        let v = self.expr(fx, e)?;
        // A pointer's truth: one the translation tracks designates an
        // object, unless it is known to be null.
        if let Value::Ptr(_) | Value::Null(Some(_)) = v {
            let truth = matches!(v, Value::Ptr(_));
            let h = fx.add(Expression::Literal(Literal::Bool(truth)), e.span);
            return Ok((h, Type::BOOL));
        }
        // A struct is contextually converted by its conversion function
        // ([conv]/4: an `explicit operator bool()` too).
        if let Some((h, _)) = self.conversion_function(fx, &v, &Type::BOOL, true, e.span)? {
            return Ok((h, Type::BOOL));
        }
        let (h, t) = self.load(fx, v, e.span)?;
        match t {
            Type::Scalar(_) | Type::Vector(..) => {
                let to = t.with_scalar(Scalar::Bool);
                Ok((self.convert(fx, h, &t, &to, true, e.span)?, to))
            }
            _ => Err(Error::coded(
                Code::TypeMismatch,
                e.span,
                format!(
                    "value of type `{}` is not contextually convertible to `bool`",
                    self.program.display(&t)
                ),
            )),
        }
    }

    /// The value of `bool` expression `h` when translation knows it: a
    /// literal, or a module constant initialised with one.
    pub(in crate::lower) fn known_truth(
        &self,
        fx: &FnCtx,
        h: naga::Handle<naga::Expression>,
    ) -> Option<bool> {
        let literal = |e: &naga::Expression| match *e {
            naga::Expression::Literal(naga::Literal::Bool(b)) => Some(b),
            _ => None,
        };
        match *fx.expr(h) {
            naga::Expression::Constant(c) => {
                let init = self.global.module.constants[c].init;
                literal(&self.global.module.global_expressions[init])
            }
            ref e => literal(e),
        }
    }

    /// A scalar `bool` condition for `if`/`while`/`for`.
    pub(in crate::lower) fn scalar_condition(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
    ) -> Result<Handle<Expression>> {
        let (h, t) = self.condition(fx, e)?;
        if t != Type::BOOL {
            return Err(Error::coded(
                Code::TypeMismatch,
                e.span,
                "a vector condition needs `all()` or `any()`",
            ));
        }
        Ok(h)
    }
}

/// True if evaluating `e` may change memory or call a user function.
pub(in crate::lower) fn has_side_effects(e: &Expr) -> bool {
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

/// True if evaluating `e` reads memory through an index or a pointer
/// (`a[i]`, `*p`, `p->m`). `c ? a[i] : 0` is how MSL guards an
/// out-of-range read: the read must stay behind the branch, not become a
/// `select` of an unconditional (clamped, wasted) load.
pub(in crate::lower) fn reads_through_index(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Index(..) | ExprKind::Unary(UnaryOp::Deref, _) | ExprKind::Member(_, _, true) => {
            true
        }
        ExprKind::Unary(_, a) | ExprKind::Member(a, _, false) | ExprKind::Cast(_, _, a) => {
            reads_through_index(a)
        }
        ExprKind::Binary(_, a, b) => reads_through_index(a) || reads_through_index(b),
        ExprKind::Ternary(a, b, c) => {
            reads_through_index(a) || reads_through_index(b) || reads_through_index(c)
        }
        ExprKind::Call(_, args) => args.iter().any(reads_through_index),
        ExprKind::Comma(items) => items.iter().any(reads_through_index),
        _ => false,
    }
}

/// True if the float `f` is finite as a value of `s` (`1e10` is not a
/// `half`).
fn literal_is_finite(f: f64, s: Scalar) -> bool {
    match s {
        Scalar::Half => half::f16::from_f64(f).is_finite(),
        Scalar::BFloat => crate::types::bfloat_nearest(f).is_finite(),
        _ => (f as f32).is_finite(),
    }
}

/// True if no float in `v` is a NaN or an infinity.
pub(in crate::lower) fn const_is_finite(v: &ConstValue) -> bool {
    match v {
        ConstValue::Float(f, s) => literal_is_finite(*f, *s),
        ConstValue::Composite(_, items) => items.iter().all(const_is_finite),
        _ => true,
    }
}

/// The constant a literal expression holds.
fn literal_value(e: &Expression) -> Option<ConstValue> {
    Some(match *e {
        Expression::Literal(Literal::Bool(b)) => ConstValue::Bool(b),
        Expression::Literal(Literal::I32(v)) => ConstValue::Int(v.into(), Scalar::Int),
        Expression::Literal(Literal::U32(v)) => ConstValue::Int(v.into(), Scalar::UInt),
        Expression::Literal(Literal::F32(v)) => ConstValue::Float(v.into(), Scalar::Float),
        Expression::Literal(Literal::F16(v)) => ConstValue::Float(v.to_f64(), Scalar::Half),
        _ => return None,
    })
}

/// The naga literal of a scalar constant.
pub(in crate::lower) fn literal(v: &ConstValue) -> (Literal, Scalar) {
    match *v {
        ConstValue::Bool(b) => (Literal::Bool(b), Scalar::Bool),
        ConstValue::Int(i, Scalar::Long) => (Literal::I64(i), Scalar::Long),
        ConstValue::Int(i, Scalar::ULong) => (Literal::U64(i as u64), Scalar::ULong),
        ConstValue::Int(i, s @ (Scalar::UInt | Scalar::UChar | Scalar::UShort)) => {
            (Literal::U32(i as u32), s)
        }
        ConstValue::Int(i, s) => (Literal::I32(i as i32), s),
        ConstValue::Float(f, Scalar::Half) => (Literal::F16(half::f16::from_f64(f)), Scalar::Half),
        ConstValue::Float(f, Scalar::BFloat) => (
            Literal::F32(crate::types::bfloat_nearest(f)),
            Scalar::BFloat,
        ),
        ConstValue::Float(f, _) => (Literal::F32(f as f32), Scalar::Float),
        ConstValue::Composite(..) => unreachable!("composites are not literals"),
    }
}

/// `nullptr` where the translation has no pointer it could stand for: the
/// comparisons with it, and `c ? p : nullptr` with a constant `c`, are
/// handled where they are written.
pub(in crate::lower) fn null_pointer(span: Span) -> Error {
    Error::coded(
        Code::Unsupported,
        span,
        "a null pointer is not supported here: a WGSL pointer always points to a variable",
    )
    .note("keep the pointer and a `bool` saying whether it is set, or an index with a value meaning none")
}

/// A pack expansion, `sizeof...` or fold expression that instantiation did
/// not expand: it names no parameter pack of the template it is in.
fn outside_pack(e: &Expr) -> Error {
    let what = match &e.kind {
        ExprKind::SizeofPack(n) => format!("`{}` is not a parameter pack (in `sizeof...`)", n.name),
        ExprKind::Fold { .. } => "this fold expression names no parameter pack".to_string(),
        _ => "this pack expansion (`...`) names no parameter pack".to_string(),
    };
    Error::coded(Code::Template, e.span, what)
        .note("`...` expands a template parameter pack (`typename... Ts`) or a function parameter pack (`Ts... xs`) of the enclosing template")
}
