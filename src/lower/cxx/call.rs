//! Calls: constructors, casts, initializer lists, and user functions, which
//! are specialised per buffer their pointer parameters point into.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::cxx::args::{arg_type, Arg};
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval::ConstValue;
use crate::sema::Symbol;
use crate::source_map::Span;
use crate::syntax::ast::{CastKind, Expr, ExprKind, Init, TypeSpec};
use crate::types::{self, Scalar, Type};
use naga::{Expression, Handle};

impl Lowerer<'_, '_> {
    /// `callee(args)`: a constructor, a user function or a library function.
    pub(in crate::lower) fn call(
        &mut self,
        fx: &mut FnCtx,
        callee: &Expr,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        if let ExprKind::Member(base, method, arrow) = &callee.kind {
            // The object is lowered once: the member function's first
            // argument, or a texture. `p->m()` is `(*p).m()`.
            let mut value = self.expr(fx, base)?;
            if *arrow {
                value = self.deref(fx, value, base.span)?;
            }
            let object = Arg {
                ty: arg_type(&value),
                value,
                span: base.span,
            };
            if self.is_object(fx, &object.value) {
                return self.call_member(fx, object, method, args, span);
            }
            let (h, ty) = self.load(fx, object.value, object.span)?;
            let Type::Texture(t) = ty else {
                return Err(Error::coded(
                    Code::UnknownMember,
                    method.span,
                    format!(
                        "`{}` has no member function `{}`",
                        self.program.display(&ty),
                        method.name
                    ),
                ));
            };
            return self.texture_method(fx, h, t, &method.name, args, span);
        }
        if let ExprKind::Templated(path, targs) = &callee.kind {
            // `numeric_limits<T>::max()`: a constant.
            if let Some(limit) = self.program.numeric_limit_call(callee)? {
                if !args.is_empty() {
                    return Err(Error::coded(
                        Code::NoMatchingOverload,
                        span,
                        "`numeric_limits` members take no arguments",
                    ));
                }
                return self.expr(fx, &limit);
            }
            // `Vec<float, 4>(..)`, `Vec<float, 4>::make(..)`: the instance's
            // constructor or static member function.
            if let Some(p) = self
                .program
                .struct_template_path(path, targs, callee.span)?
            {
                let callee = Expr {
                    kind: ExprKind::Name(p),
                    span: callee.span,
                };
                return self.call(fx, &callee, args, span);
            }
        }
        let path = match &callee.kind {
            ExprKind::Name(path) => path.clone(),
            // `square<half>(x)`: explicit template arguments.
            ExprKind::Templated(path, targs)
                if path.len() == 1 && !self.program.function_templates(&path[0]).is_empty() =>
            {
                let targs = self.written_template_args(fx, targs)?;
                return self.call_template(fx, &path[0], &targs, args, callee.span, span);
            }
            // `a < b > (c)` with variables parses like a template call;
            // when `a` is a variable it is the comparison `(a < b) > (c)`.
            ExprKind::Templated(path, targs)
                if path.len() == 1
                    && targs.len() == 1
                    && args.len() == 1
                    && fx.lookup(&path[0]).is_some() =>
            {
                let comparison = comparison_of_template_call(callee, &targs[0], &args[0], span);
                return self.expr(fx, &comparison);
            }
            ExprKind::Templated(path, targs) => {
                let ts = TypeSpec {
                    is_const: false,
                    is_constexpr: false,
                    space: None,
                    path: path.clone(),
                    args: targs.clone(),
                    ptr_ops: vec![],
                    name_span: callee.span,
                    span: callee.span,
                };
                let ty = self.program.resolve_type(&ts)?;
                return self.construct(fx, &ty, args, span);
            }
            _ => {
                return Err(Error::coded(
                    Code::WrongKind,
                    callee.span,
                    "called object is not a function",
                ))
            }
        };
        let name = path.last().cloned().unwrap_or_default();
        if path.len() == 1 && fx.lookup(&name).is_some() {
            // `f(x)` where `f` is an object with `operator()`.
            if let Some(v) = self.call_operator(fx, callee, args, span)? {
                return Ok(v);
            }
            return Err(Error::coded(
                Code::WrongKind,
                callee.span,
                format!("called object `{name}` is not a function"),
            ));
        }
        if path.len() == 1 && !self.program.symbols.contains_key(&name) {
            if let Some(v) = self.implicit_member_call(fx, &name, args, callee.span, span)? {
                return Ok(v);
            }
        }
        let joined = path.join("::");
        if let Some(ty) = types::builtin_type(&joined) {
            let ts = TypeSpec {
                is_const: false,
                is_constexpr: false,
                space: None,
                path: path.clone(),
                args: vec![],
                ptr_ops: vec![],
                name_span: callee.span,
                span: callee.span,
            };
            self.program.resolve_value_type(&ts)?;
            return self.construct(fx, &ty, args, span);
        }
        if path.len() == 1 && !self.program.function_templates(&name).is_empty() {
            // Plain functions and templates of this name compete.
            let plain = match self.program.symbols.get(&name) {
                Some(Symbol::Functions(list)) => list.clone(),
                _ => Vec::new(),
            };
            let templates = self.program.function_templates(&name).to_vec();
            return self.call_overloaded(
                fx,
                &name,
                &plain,
                &templates,
                &[],
                Vec::new(),
                args,
                callee.span,
                span,
            );
        }
        match self.program.symbols.get(&name) {
            Some(Symbol::Type(ty)) if path.len() == 1 => {
                let ty = ty.clone();
                if let Some(v) = self.call_constructor(fx, &ty, args, span)? {
                    return Ok(v);
                }
                return self.construct(fx, &ty, args, span);
            }
            Some(Symbol::Functions(list)) if path.len() == 1 => {
                let list = list.clone();
                return self.call_user(fx, &name, &list, Vec::new(), args, callee.span, span);
            }
            _ => {}
        }
        if path.len() > 1 {
            // `S::make(..)`: a static member function; `Traits<T>::type(x)`.
            match self.program.symbols.get(&joined) {
                Some(Symbol::Functions(list)) => {
                    let list = list.clone();
                    return self.call_user(fx, &joined, &list, Vec::new(), args, callee.span, span);
                }
                Some(Symbol::Type(ty)) => {
                    let ty = ty.clone();
                    if let Some(v) = self.call_constructor(fx, &ty, args, span)? {
                        return Ok(v);
                    }
                    return self.construct(fx, &ty, args, span);
                }
                _ => {}
            }
        }
        if path.len() == 1 && name == crate::sema::function_constants::IS_DEFINED {
            return self.function_constant_defined(fx, args, span);
        }
        let lib_name = match path.as_slice() {
            [n] => Some(n.as_str()),
            [ns, n] if matches!(ns.as_str(), "metal" | "precise" | "fast") => Some(n.as_str()),
            [m, ns, n] if m == "metal" && matches!(ns.as_str(), "precise" | "fast") => {
                Some(n.as_str())
            }
            _ => None,
        };
        if let Some(lib_name) = lib_name {
            if let Some(v) = self.library_call(fx, lib_name, args, span)? {
                return Ok(v);
            }
        }
        // `SwiftUI::Layer::sample`'s intrinsic (src/preprocess/swiftui.rs).
        if let Some(v) = self.swiftui_intrinsic(fx, &joined, args, span)? {
            return Ok(v);
        }
        // `sampler(filter::linear)`: a temporary constexpr sampler.
        if let Some(v) = self.sampler_temporary(fx, &path, args, span)? {
            return Ok(v);
        }
        Err(Error::coded(
            Code::UndeclaredFunction,
            callee.span,
            format!("use of undeclared function `{joined}`"),
        )
        .with_notes(self.program.function_name_hint(&joined)))
    }

    /// `T(args)`: conversions and constructors of scalars, vectors, matrices.
    pub(in crate::lower) fn construct(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.rvalue(fx, a)?);
        }
        let ty_h = self.naga_type(ty, span)?;
        if vals.is_empty() {
            // `S()`: value-initialized, with its default member initializers.
            if self.program.has_member_defaults(ty) {
                let v = ConstValue::default_of(ty, self.program);
                return Ok(self.const_value(fx, &v, span));
            }
            return Ok(Value::Rv(
                fx.add(Expression::ZeroValue(ty_h), span),
                ty.clone(),
            ));
        }
        match ty {
            Type::Scalar(_) => {
                let [(h, t)] = vals.as_slice() else {
                    return Err(Error::coded(
                        Code::InvalidInitializer,
                        span,
                        "a scalar conversion takes one argument",
                    ));
                };
                if !matches!(t, Type::Scalar(_)) {
                    return Err(Error::coded(
                        Code::TypeMismatch,
                        span,
                        format!(
                            "cannot convert `{}` to `{}`",
                            self.program.display(t),
                            self.program.display(ty)
                        ),
                    ));
                }
                Ok(Value::Rv(
                    self.convert(fx, *h, t, ty, true, span)?,
                    ty.clone(),
                ))
            }
            Type::Vector(s, n) => self.construct_vector(fx, *s, *n, vals, span),
            Type::Matrix {
                scalar,
                columns,
                rows,
            } => self.construct_matrix(fx, *scalar, *columns, *rows, vals, span),
            Type::Struct(_) | Type::Array(..) => Err(Error::coded(
                Code::InvalidInitializer,
                span,
                format!(
                    "cannot construct `{}` with parentheses; use braces",
                    self.program.display(ty)
                ),
            )),
            _ => Err(Error::coded(
                Code::InvalidInitializer,
                span,
                "cannot construct this type",
            )),
        }
    }

    fn construct_vector(
        &mut self,
        fx: &mut FnCtx,
        s: Scalar,
        n: u8,
        vals: Vec<(Handle<Expression>, Type)>,
        span: Span,
    ) -> Result<Value> {
        let ty = Type::Vector(s, n);
        if let [(h, t)] = vals.as_slice() {
            if matches!(t, Type::Scalar(_)) || t.vector_size() == Some(n) {
                return Ok(Value::Rv(self.convert(fx, *h, t, &ty, true, span)?, ty));
            }
        }
        let mut components = Vec::new();
        let mut count = 0;
        for (h, t) in vals {
            let k = match t {
                Type::Scalar(_) | Type::Vector(..) => t.vector_size().unwrap(),
                _ => {
                    return Err(Error::coded(
                        Code::InvalidInitializer,
                        span,
                        format!(
                            "cannot use `{}` in a vector constructor",
                            self.program.display(&t)
                        ),
                    ))
                }
            };
            let h = self.convert(fx, h, &t, &t.with_scalar(s), true, span)?;
            // `float3(float2(a, b), c)` becomes `vec3(a, b, c)`: naga 30's
            // constant evaluator panics on constant vectors composed of
            // vectors (`select` of one, found by differential testing:
            // nested constructors, splats and swizzles), so constant parts
            // are flattened to scalars; the flat form is what WGSL writers
            // print anyway.
            match fx.expr(h) {
                Expression::Compose {
                    components: inner, ..
                } if k > 1 => components.extend(inner.clone()),
                &Expression::Splat { value, .. } if k > 1 => {
                    components.extend(std::iter::repeat_n(value, k as usize))
                }
                _ if k > 1 && crate::lower::expr::const_exprs::is_constant_tree(fx, h) => {
                    for index in 0..k as u32 {
                        components.push(fx.add(Expression::AccessIndex { base: h, index }, span));
                    }
                }
                _ => components.push(h),
            }
            count += k;
        }
        if count != n {
            return Err(Error::coded(
                Code::InvalidInitializer,
                span,
                format!(
                    "`{}` constructor needs {n} components, found {count}",
                    self.program.display(&ty)
                ),
            ));
        }
        let ty_h = self.naga_type(&ty, span)?;
        Ok(Value::Rv(
            fx.add(
                Expression::Compose {
                    ty: ty_h,
                    components,
                },
                span,
            ),
            ty,
        ))
    }

    fn construct_matrix(
        &mut self,
        fx: &mut FnCtx,
        s: Scalar,
        columns: u8,
        rows: u8,
        vals: Vec<(Handle<Expression>, Type)>,
        span: Span,
    ) -> Result<Value> {
        let ty = Type::Matrix {
            scalar: s,
            columns,
            rows,
        };
        let ty_h = self.naga_type(&ty, span)?;
        let col_ty = Type::Vector(s, rows);
        let col_h = self.naga_type(&col_ty, span)?;
        // floatNxM(matrix): conversion.
        if let [(h, t @ Type::Matrix { .. })] = vals.as_slice() {
            return Ok(Value::Rv(self.convert(fx, *h, t, &ty, true, span)?, ty));
        }
        // floatNxM(s): s on the diagonal (MSL §2.3.2).
        if let [(h, t @ Type::Scalar(_))] = vals.as_slice() {
            let d = self.convert(fx, *h, t, &Type::Scalar(s), true, span)?;
            let zero_h = self.naga_type(&Type::Scalar(s), span)?;
            let zero = fx.add(Expression::ZeroValue(zero_h), span);
            let cols = (0..columns)
                .map(|c| {
                    let lanes = (0..rows).map(|r| if r == c { d } else { zero }).collect();
                    fx.add(
                        Expression::Compose {
                            ty: col_h,
                            components: lanes,
                        },
                        span,
                    )
                })
                .collect();
            return Ok(Value::Rv(
                fx.add(
                    Expression::Compose {
                        ty: ty_h,
                        components: cols,
                    },
                    span,
                ),
                ty,
            ));
        }
        let mut lanes = Vec::new();
        let mut cols = Vec::new();
        for (h, t) in vals {
            match t {
                Type::Vector(_, n) if n == rows && lanes.is_empty() => {
                    cols.push(self.convert(fx, h, &t, &col_ty, true, span)?)
                }
                Type::Scalar(_) => {
                    lanes.push(self.convert(fx, h, &t, &Type::Scalar(s), true, span)?)
                }
                _ => {
                    return Err(Error::coded(
                        Code::InvalidInitializer,
                        span,
                        format!(
                            "invalid argument of type `{}` to a matrix constructor",
                            self.program.display(&t)
                        ),
                    ))
                }
            }
            if lanes.len() == rows as usize {
                cols.push(fx.add(
                    Expression::Compose {
                        ty: col_h,
                        components: std::mem::take(&mut lanes),
                    },
                    span,
                ));
            }
        }
        if cols.len() != columns as usize || !lanes.is_empty() {
            return Err(Error::coded(
                Code::InvalidInitializer,
                span,
                format!(
                    "`{}` constructor needs {columns} columns or {} scalars",
                    self.program.display(&ty),
                    columns * rows
                ),
            ));
        }
        Ok(Value::Rv(
            fx.add(
                Expression::Compose {
                    ty: ty_h,
                    components: cols,
                },
                span,
            ),
            ty,
        ))
    }

    /// An initializer list for a value of type `ty` (missing elements are zero).
    pub(in crate::lower) fn init_list(
        &mut self,
        fx: &mut FnCtx,
        items: &[Init],
        ty: &Type,
        span: Span,
    ) -> Result<(Handle<Expression>, Type)> {
        let element_types: Vec<Type> = match ty {
            Type::Array(e, n) => vec![(**e).clone(); *n as usize],
            Type::Struct(id) => self
                .program
                .structs
                .get(*id)
                .members
                .iter()
                .map(|m| m.ty.clone())
                .collect(),
            Type::Vector(s, n) => vec![Type::Scalar(*s); *n as usize],
            Type::Matrix {
                scalar,
                columns,
                rows,
            } => vec![Type::Vector(*scalar, *rows); *columns as usize],
            Type::Scalar(_) if items.len() <= 1 => {
                return match items.first() {
                    Some(i) => self.init_value(fx, i, ty),
                    None => {
                        let h = self.naga_type(ty, span)?;
                        Ok((fx.add(Expression::ZeroValue(h), span), ty.clone()))
                    }
                };
            }
            _ => {
                return Err(Error::coded(
                    Code::InvalidInitializer,
                    span,
                    format!(
                        "cannot initialize `{}` with a list",
                        self.program.display(ty)
                    ),
                ))
            }
        };
        // Positional elements in order; `.member = v` at its member.
        let slots =
            crate::sema::consteval::list_slots(self.program, items, ty, element_types.len())?;
        let mut components = Vec::new();
        for (i, et) in element_types.iter().enumerate() {
            components.push(match slots[i] {
                Some(item) => self.init_value(fx, item, et)?.0,
                // Left out: the member's default initializer, if any.
                None if self.program.has_member_defaults(ty) => {
                    let v = match ty {
                        Type::Struct(id) => ConstValue::default_member(*id, i, self.program),
                        _ => ConstValue::default_of(et, self.program),
                    };
                    let Value::Rv(h, _) = self.const_value(fx, &v, span) else {
                        unreachable!("constants are values")
                    };
                    h
                }
                None => {
                    let h = self.naga_type(et, span)?;
                    fx.add(Expression::ZeroValue(h), span)
                }
            });
        }
        if let Type::Struct(id) = ty {
            components = self.with_padding(*id, components, span, |_, pad| {
                fx.add(Expression::ZeroValue(pad), span)
            })?;
        }
        let ty_h = self.naga_type(ty, span)?;
        Ok((
            fx.add(
                Expression::Compose {
                    ty: ty_h,
                    components,
                },
                span,
            ),
            ty.clone(),
        ))
    }

    /// The value of one initializer, converted to `ty`.
    pub(in crate::lower) fn init_value(
        &mut self,
        fx: &mut FnCtx,
        init: &Init,
        ty: &Type,
    ) -> Result<(Handle<Expression>, Type)> {
        match init {
            Init::List(items, span) => self.init_list(fx, items, ty, *span),
            Init::Expr(e) => {
                if let ExprKind::InitList(items) = &e.kind {
                    return self.init_list(fx, items, ty, e.span);
                }
                let (h, t) = self.rvalue(fx, e)?;
                Ok((self.convert(fx, h, &t, ty, false, e.span)?, ty.clone()))
            }
            Init::Paren(args, span) if matches!(ty, Type::Struct(_)) => {
                match self.call_constructor(fx, ty, args, *span)? {
                    Some(v) => self.load(fx, v, *span),
                    None => Err(Error::coded(
                        Code::Unsupported,
                        *span,
                        "parenthesized initialization of aggregates is not supported; use braces",
                    )),
                }
            }
            Init::Paren(args, span) => match ty {
                Type::Scalar(_) | Type::Vector(..) | Type::Matrix { .. } => {
                    let Value::Rv(h, t) = self.construct(fx, ty, args, *span)? else {
                        unreachable!()
                    };
                    Ok((h, t))
                }
                _ => Err(Error::coded(
                    Code::Unsupported,
                    *span,
                    "parenthesized initialization of aggregates is not supported; use braces",
                )),
            },
            Init::Designated(_, _, span) => Err(Error::coded(
                Code::InvalidInitializer,
                *span,
                "a designated initializer (`.member = value`) must be an element of a braced list",
            )),
        }
    }

    /// Casts: C-style, `static_cast`, `as_type`.
    pub(in crate::lower) fn cast(
        &mut self,
        fx: &mut FnCtx,
        kind: CastKind,
        ts: &TypeSpec,
        inner: &Expr,
        span: Span,
    ) -> Result<Value> {
        let ty = self.program.resolve_type(ts)?;
        // `P<float>{a, b}` (built as a cast of the list): like `T{a, b}`.
        if let ExprKind::InitList(items) = &inner.kind {
            if let Some(v) = self.brace_constructor(fx, &ty, items, span)? {
                return Ok(v);
            }
            let (h, ty) = self.init_list(fx, items, &ty, span)?;
            return Ok(Value::Rv(h, ty));
        }
        if let Type::Pointer(target) = &ty {
            return self.pointer_cast(fx, target, inner, span);
        }
        if kind == CastKind::Reinterpret {
            return Err(Error::coded(
                Code::InvalidConversion,
                span,
                "`reinterpret_cast` is supported between pointer types only; use `as_type<T>(x)` to reinterpret a value's bits",
            ));
        }
        let (h, t) = self.rvalue(fx, inner)?;
        if kind == CastKind::AsType {
            return self.as_type(fx, h, &t, &ty, span);
        }
        if t == ty {
            return Ok(Value::Rv(h, ty));
        }
        Ok(Value::Rv(self.convert(fx, h, &t, &ty, true, span)?, ty))
    }
}

/// `(a < b) > (c)`: what `a<b>(c)` means when `a` is a variable.
fn comparison_of_template_call(
    callee: &Expr,
    arg: &crate::syntax::ast::TemplateArg,
    c: &Expr,
    span: Span,
) -> Expr {
    use crate::syntax::ast::{BinaryOp, TemplateArg};
    let ExprKind::Templated(path, _) = &callee.kind else {
        unreachable!("a templated callee")
    };
    let b = match arg {
        TemplateArg::Expr(e) => e.clone(),
        TemplateArg::Type(ts) => crate::sema::templates::type_arg_as_expr(ts),
    };
    let a = Expr {
        kind: ExprKind::Name(path.clone()),
        span: callee.span,
    };
    let lt = Expr {
        kind: ExprKind::Binary(BinaryOp::Lt, Box::new(a), Box::new(b)),
        span: callee.span,
    };
    Expr {
        kind: ExprKind::Binary(BinaryOp::Gt, Box::new(lt), Box::new(c.clone())),
        span,
    }
}
