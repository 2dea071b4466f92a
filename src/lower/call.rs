//! Calls: constructors, casts, initializer lists, and user functions, which
//! are specialised per buffer their pointer parameters point into.

use super::builder::FnCtx;
use super::value::{Local, Place, PtrRoot, PtrValue, Value};
use super::{ArgKey, Error, Lowerer, Result};
use crate::sema::Symbol;
use crate::source_map::Span;
use crate::syntax::ast::{CastKind, Expr, ExprKind, Init, TypeSpec};
use crate::types::{self, AddressSpace, Scalar, Type};
use naga::{Expression, Handle, Statement};

impl Lowerer<'_, '_> {
    /// `callee(args)`: a constructor, a user function or a library function.
    pub(super) fn call(
        &mut self,
        fx: &mut FnCtx,
        callee: &Expr,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let path = match &callee.kind {
            ExprKind::Name(path) => path.clone(),
            ExprKind::Templated(path, targs) => {
                let ts = TypeSpec {
                    is_const: false,
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
            _ => return Err(Error::new(callee.span, "called object is not a function")),
        };
        let name = path.last().cloned().unwrap_or_default();
        if path.len() == 1 && fx.lookup(&name).is_some() {
            return Err(Error::new(
                callee.span,
                format!("called object `{name}` is not a function"),
            ));
        }
        let joined = path.join("::");
        if let Some(ty) = types::builtin_type(&joined) {
            let ts = TypeSpec {
                is_const: false,
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
        match self.program.symbols.get(&name) {
            Some(Symbol::Type(ty)) if path.len() == 1 => {
                let ty = ty.clone();
                return self.construct(fx, &ty, args, span);
            }
            Some(Symbol::Functions(list)) if path.len() == 1 => {
                let list = list.clone();
                return self.call_user(fx, &name, &list, args, callee.span, span);
            }
            _ => {}
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
        Err(Error::new(
            callee.span,
            format!("use of undeclared function `{joined}`"),
        ))
    }

    /// `T(args)`: conversions and constructors of scalars, vectors, matrices.
    pub(super) fn construct(
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
            return Ok(Value::Rv(
                fx.add(Expression::ZeroValue(ty_h), span),
                ty.clone(),
            ));
        }
        match ty {
            Type::Scalar(_) => {
                let [(h, t)] = vals.as_slice() else {
                    return Err(Error::new(span, "a scalar conversion takes one argument"));
                };
                if !matches!(t, Type::Scalar(_)) {
                    return Err(Error::new(
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
            Type::Struct(_) | Type::Array(..) => Err(Error::new(
                span,
                format!(
                    "cannot construct `{}` with parentheses; use braces",
                    self.program.display(ty)
                ),
            )),
            _ => Err(Error::new(span, "cannot construct this type")),
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
                    return Err(Error::new(
                        span,
                        format!(
                            "cannot use `{}` in a vector constructor",
                            self.program.display(&t)
                        ),
                    ))
                }
            };
            components.push(self.convert(fx, h, &t, &t.with_scalar(s), true, span)?);
            count += k;
        }
        if count != n {
            return Err(Error::new(
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
                    return Err(Error::new(
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
            return Err(Error::new(
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
    pub(super) fn init_list(
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
                return Err(Error::new(
                    span,
                    format!(
                        "cannot initialize `{}` with a list",
                        self.program.display(ty)
                    ),
                ))
            }
        };
        if items.len() > element_types.len() {
            return Err(Error::new(
                items[element_types.len()].span(),
                format!(
                    "excess elements in initializer of `{}`",
                    self.program.display(ty)
                ),
            ));
        }
        let mut components = Vec::new();
        for (i, et) in element_types.iter().enumerate() {
            components.push(match items.get(i) {
                Some(item) => self.init_value(fx, item, et)?.0,
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
    pub(super) fn init_value(
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
            Init::Paren(args, span) => match ty {
                Type::Scalar(_) | Type::Vector(..) | Type::Matrix { .. } => {
                    let Value::Rv(h, t) = self.construct(fx, ty, args, *span)? else {
                        unreachable!()
                    };
                    Ok((h, t))
                }
                _ => Err(Error::new(
                    *span,
                    "parenthesized initialization of aggregates is not supported; use braces",
                )),
            },
        }
    }

    /// Casts: C-style, `static_cast`, `as_type`.
    pub(super) fn cast(
        &mut self,
        fx: &mut FnCtx,
        kind: CastKind,
        ts: &TypeSpec,
        inner: &Expr,
        span: Span,
    ) -> Result<Value> {
        let ty = self.program.resolve_type(ts)?;
        if matches!(ty, Type::Pointer(_)) || kind == CastKind::Reinterpret {
            return Err(Error::new(span, "pointer casts are not supported yet"));
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

    /// `as_type<T>(x)`: reinterpretation between types of equal size.
    fn as_type(
        &mut self,
        fx: &mut FnCtx,
        h: Handle<Expression>,
        from: &Type,
        to: &Type,
        span: Span,
    ) -> Result<Value> {
        let (fs, ts) = (
            crate::layout::metal(from, &self.program.structs).size,
            crate::layout::metal(to, &self.program.structs).size,
        );
        if fs != ts || !from.is_scalar_or_vector() || !to.is_scalar_or_vector() {
            return Err(Error::new(
                span,
                format!(
                "`as_type` needs types of the same size: `{}` is {fs} bytes, `{}` is {ts} bytes",
                self.program.display(from),
                self.program.display(to)
            ),
            ));
        }
        let same_shape = from.vector_size() == to.vector_size()
            && from.element_scalar().map(Scalar::size) == to.element_scalar().map(Scalar::size);
        if !same_shape
            || to.element_scalar() == Some(Scalar::Bool)
            || from.element_scalar() == Some(Scalar::Bool)
        {
            return Err(Error::new(
                span,
                "`as_type` between different vector shapes is not supported yet",
            ));
        }
        let kind = super::types::scalar(to.element_scalar().unwrap()).kind;
        Ok(Value::Rv(
            fx.add(
                Expression::As {
                    expr: h,
                    kind,
                    convert: None,
                },
                span,
            ),
            to.clone(),
        ))
    }

    // ---- user functions ----------------------------------------------------

    fn call_user(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        candidates: &[usize],
        args: &[Expr],
        callee_span: Span,
        span: Span,
    ) -> Result<Value> {
        let viable: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|i| self.program.functions[*i].params.len() == args.len())
            .collect();
        let index = match viable.as_slice() {
            [] => {
                let f = self.program.functions[candidates[0]];
                return Err(Error::new(span, format!("no matching function for call to `{name}`: it takes {} argument(s), {} given", f.params.len(), args.len())));
            }
            [one] => *one,
            many => self.pick_overload(fx, many, args, callee_span)?,
        };
        let f = self.program.functions[index];
        if let Some((stage, _)) = f.stage {
            let what = match stage {
                crate::syntax::ast::Stage::Kernel => "kernel",
                crate::syntax::ast::Stage::Vertex => "vertex",
                crate::syntax::ast::Stage::Fragment => "fragment",
            };
            return Err(Error::new(callee_span, format!("cannot call {what} function `{name}`; entry points cannot be called from other functions")));
        }
        let mut keys = Vec::new();
        let mut arguments = Vec::new();
        for (p, a) in f.params.iter().zip(args) {
            let pty = self.program.resolve_type(&p.ty)?;
            let pty = self.program.apply_array(pty, &p.array)?;
            let (key, arg) = self.argument(fx, &pty, a)?;
            keys.push(key);
            arguments.extend(arg);
        }
        let function = self.function(index, keys, span)?;
        let ret = self.program.resolve_type(&f.ret)?;
        let result = if ret == Type::Void {
            None
        } else {
            Some(fx.add_result(Expression::CallResult(function), span))
        };
        fx.push(
            Statement::Call {
                function,
                arguments,
                result,
            },
            span,
        );
        Ok(match result {
            Some(h) => Value::Rv(h, ret),
            None => Value::Void,
        })
    }

    /// Chooses among overloads by how well the argument types match.
    fn pick_overload(
        &mut self,
        fx: &mut FnCtx,
        candidates: &[usize],
        args: &[Expr],
        span: Span,
    ) -> Result<usize> {
        // Type the arguments in a scratch block whose IR is discarded.
        fx.open();
        let mut arg_types = Vec::new();
        for a in args {
            let v = self.expr(fx, a)?;
            arg_types.push(match v {
                Value::Rv(_, t) => t,
                Value::Place(p) => p.ty,
                Value::Swizzle(p, c) => Type::vector(p.ty.element_scalar().unwrap(), c.len() as u8),
                Value::Ptr(p) => p.pointee,
                Value::Void => Type::Void,
            });
        }
        drop(fx.close());
        let mut best: Vec<(u32, usize)> = Vec::new();
        for &i in candidates {
            let mut score = 0;
            for (p, at) in self.program.functions[i].params.iter().zip(&arg_types) {
                let pt = match self.program.resolve_type(&p.ty)? {
                    Type::Pointer(ptr) => ptr.pointee,
                    t => t,
                };
                score += if &pt == at {
                    0
                } else if pt.vector_size() == at.vector_size() {
                    1
                } else {
                    100
                };
            }
            best.push((score, i));
        }
        best.sort();
        match best.as_slice() {
            [(a, i), (b, _), ..] if a < b && *a < 100 => Ok(*i),
            [(a, i)] if *a < 100 => Ok(*i),
            _ => Err(Error::new(span, "call to overloaded function is ambiguous")),
        }
    }

    /// How one argument is passed to a parameter of type `pty`.
    fn argument(
        &mut self,
        fx: &mut FnCtx,
        pty: &Type,
        a: &Expr,
    ) -> Result<(ArgKey, Option<Handle<Expression>>)> {
        let Type::Pointer(pp) = pty else {
            let (h, t) = self.rvalue(fx, a)?;
            return Ok((
                ArgKey::Value,
                Some(self.convert(fx, h, &t, pty, false, a.span)?),
            ));
        };
        let v = self.expr(fx, a)?;
        let mismatch = |l: &Self| {
            Error::new(
                a.span,
                format!("cannot pass this argument as `{}`", l.program.display(pty)),
            )
        };
        match (&v, pp.space) {
            (Value::Ptr(p), AddressSpace::Device | AddressSpace::Constant) if !pp.is_reference => {
                match p.root {
                    PtrRoot::Buffer(g) => Ok((ArgKey::Buffer(g), Some(p.index))),
                    PtrRoot::Global(g) => Ok((ArgKey::Global(g), None)),
                    PtrRoot::Place(..) => Err(mismatch(self)),
                }
            }
            (Value::Place(place), AddressSpace::Device | AddressSpace::Constant)
                if pp.is_reference =>
            {
                match *fx.expr(place.ptr) {
                    Expression::GlobalVariable(g) => Ok((ArgKey::Global(g), None)),
                    Expression::Access { base, .. } | Expression::AccessIndex { base, .. }
                        if matches!(fx.expr(base), Expression::GlobalVariable(_)) =>
                    {
                        let Expression::GlobalVariable(g) = *fx.expr(base) else {
                            unreachable!()
                        };
                        let index = match *fx.expr(place.ptr) {
                            Expression::AccessIndex { index, .. } => {
                                self.u32_lit(fx, index, a.span)
                            }
                            Expression::Access { index, .. } => fx.add(
                                Expression::As {
                                    expr: index,
                                    kind: naga::ScalarKind::Uint,
                                    convert: None,
                                },
                                a.span,
                            ),
                            _ => unreachable!(),
                        };
                        Ok((ArgKey::Buffer(g), Some(index)))
                    }
                    _ => Err(Error::new(
                        a.span,
                        "passing a part of a buffer element by reference is not supported yet",
                    )),
                }
            }
            (Value::Place(place), AddressSpace::Thread) if pp.is_reference => {
                if !place.writable && !pp.is_const {
                    return Err(Error::new(
                        a.span,
                        "binding a non-const reference to read-only memory",
                    ));
                }
                Ok((ArgKey::Thread, Some(place.ptr)))
            }
            (Value::Ptr(p), AddressSpace::Thread) if !pp.is_reference => match p.root {
                PtrRoot::Place(base, false) => Ok((ArgKey::Thread, Some(base))),
                _ => Err(mismatch(self)),
            },
            _ => Err(mismatch(self)),
        }
    }

    /// The naga function for user function `index` specialised for `keys`.
    pub(super) fn function(
        &mut self,
        index: usize,
        keys: Vec<ArgKey>,
        span: Span,
    ) -> Result<Handle<naga::Function>> {
        if let Some(h) = self.functions.get(&(index, keys.clone())) {
            return Ok(*h);
        }
        if self.in_progress.contains(&index) {
            return Err(Error::new(
                span,
                "recursive function calls are not allowed in Metal",
            ));
        }
        self.in_progress.push(index);
        let result = self.build_function(index, &keys);
        self.in_progress.pop();
        let function = result?;
        let h = self
            .module
            .functions
            .append(function, Self::span(self.program.functions[index].span));
        self.functions.insert((index, keys), h);
        Ok(h)
    }

    fn build_function(&mut self, index: usize, keys: &[ArgKey]) -> Result<naga::Function> {
        let f = self.program.functions[index];
        let ret = self.program.resolve_type(&f.ret)?;
        if matches!(ret, Type::Pointer(_)) {
            return Err(Error::new(
                f.ret.span,
                "functions returning pointers or references are not supported yet",
            ));
        }
        let mut fx = FnCtx::new(&f.name.name, ret.clone());
        if ret != Type::Void {
            let ty = self.naga_type(&ret, f.ret.span)?;
            fx.function.result = Some(naga::FunctionResult { ty, binding: None });
        }
        for (p, key) in f.params.iter().zip(keys) {
            let pty = self.program.resolve_type(&p.ty)?;
            let pty = self.program.apply_array(pty, &p.array)?;
            self.parameter(&mut fx, p.name.as_ref(), &pty, key, p.span)?;
        }
        let body = f.body.as_ref().expect("definitions have bodies");
        for s in &body.stmts {
            self.stmt(&mut fx, s)?;
        }
        self.finish_body(&mut fx, body.span)?;
        Ok(fx.finish())
    }

    /// Ends a function body that may fall off its end.
    pub(super) fn finish_body(&mut self, fx: &mut FnCtx, span: Span) -> Result<()> {
        if fx.terminated() {
            return Ok(());
        }
        let value = match fx.return_type.clone() {
            Type::Void => None,
            // Falling off a value-returning function is undefined in C++; return zero.
            t => {
                let h = self.naga_type(&t, span)?;
                Some(fx.add(Expression::ZeroValue(h), span))
            }
        };
        fx.push(Statement::Return { value }, span);
        Ok(())
    }

    fn parameter(
        &mut self,
        fx: &mut FnCtx,
        name: Option<&crate::syntax::ast::Ident>,
        pty: &Type,
        key: &ArgKey,
        span: Span,
    ) -> Result<()> {
        let pname = name
            .map(|n| n.name.clone())
            .unwrap_or_else(|| "_unnamed".into());
        let arg_index = fx.function.arguments.len() as u32;
        let local = match (key, pty) {
            (ArgKey::Value, _) => {
                let ty = self.naga_type(pty, span)?;
                fx.function.arguments.push(naga::FunctionArgument {
                    name: Some(pname.clone()),
                    ty,
                    binding: None,
                });
                let arg = fx.add(Expression::FunctionArgument(arg_index), span);
                // C++ parameters are mutable: copy into a local.
                let var = fx.local(&pname, ty, span);
                let ptr = fx.add(Expression::LocalVariable(var), span);
                fx.push(
                    Statement::Store {
                        pointer: ptr,
                        value: arg,
                    },
                    span,
                );
                Local::Var {
                    var,
                    ty: pty.clone(),
                    is_const: false,
                }
            }
            (ArgKey::Buffer(g), Type::Pointer(pp)) => {
                let ty = self.naga_type(&Type::UINT, span)?;
                fx.function.arguments.push(naga::FunctionArgument {
                    name: Some(format!("{pname}_index")),
                    ty,
                    binding: None,
                });
                let index = fx.add(Expression::FunctionArgument(arg_index), span);
                let ptr = PtrValue {
                    root: PtrRoot::Buffer(*g),
                    index,
                    pointee: pp.pointee.clone(),
                    space: pp.space,
                    is_const: pp.is_const,
                };
                if pp.is_reference {
                    Local::Ref(self.element_place(fx, &ptr, index, span))
                } else {
                    Local::Ptr(ptr)
                }
            }
            (ArgKey::Global(g), Type::Pointer(pp)) => {
                let zero = self.u32_lit(fx, 0, span);
                let ptr = PtrValue {
                    root: PtrRoot::Global(*g),
                    index: zero,
                    pointee: pp.pointee.clone(),
                    space: pp.space,
                    is_const: pp.is_const,
                };
                if pp.is_reference {
                    Local::Ref(self.element_place(fx, &ptr, zero, span))
                } else {
                    Local::Ptr(ptr)
                }
            }
            (ArgKey::Thread, Type::Pointer(pp)) => {
                let base = self.naga_type(&pp.pointee, span)?;
                let ty = self.module.types.insert(
                    naga::Type {
                        name: None,
                        inner: naga::TypeInner::Pointer {
                            base,
                            space: naga::AddressSpace::Function,
                        },
                    },
                    naga::Span::UNDEFINED,
                );
                fx.function.arguments.push(naga::FunctionArgument {
                    name: Some(pname.clone()),
                    ty,
                    binding: None,
                });
                let arg = fx.add(Expression::FunctionArgument(arg_index), span);
                let place = Place {
                    ptr: arg,
                    ty: pp.pointee.clone(),
                    writable: !pp.is_const,
                };
                if pp.is_reference {
                    Local::Ref(place)
                } else {
                    let zero = self.u32_lit(fx, 0, span);
                    Local::Ptr(PtrValue {
                        root: PtrRoot::Place(arg, false),
                        index: zero,
                        pointee: pp.pointee.clone(),
                        space: pp.space,
                        is_const: pp.is_const,
                    })
                }
            }
            _ => return Err(Error::new(span, "unsupported parameter")),
        };
        if let Some(n) = name {
            if !fx.declare(&n.name, local) {
                return Err(Error::new(
                    n.span,
                    format!("redefinition of parameter `{}`", n.name),
                ));
            }
        }
        Ok(())
    }
}
