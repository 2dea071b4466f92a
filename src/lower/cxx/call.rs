//! Calls: constructors, casts, initializer lists, and user functions, which
//! are specialised per buffer their pointer parameters point into.

use crate::diagnostics::Code;
use crate::lower::ctx::function::{FnCtx, LibraryCompetes};
use crate::lower::ctx::value::Value;
use crate::lower::cxx::args::{arg_type, Arg};
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval::ConstValue;
use crate::sema::Symbol;
use crate::source_map::Span;
use crate::syntax::ast::{CastKind, Expr, ExprKind, Ident, Init, PtrOp, TemplateArg, TypeSpec};
use crate::types::{self, Type};
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
        let path = match &callee.kind {
            ExprKind::Member(base, method, arrow) => {
                return self.call_method(fx, base, method, *arrow, &[], args, span)
            }
            // `op.template reduce<N>(..)`.
            ExprKind::MemberTemplate(member, targs) => {
                let ExprKind::Member(base, method, arrow) = &member.kind else {
                    unreachable!("the parser wraps a member")
                };
                let targs = self.written_template_args(fx, targs)?;
                return self.call_method(fx, base, method, *arrow, &targs, args, span);
            }
            ExprKind::Templated(path, targs) => {
                return self.call_templated(fx, callee, path, targs, args, span)
            }
            ExprKind::Name(path) => path,
            // `Op()(a, b)`, `Op{}(a, b)`, `ops[k](x)`: a function object
            // that an expression gives, its `operator()` called.
            _ => return self.call_object(fx, callee, None, args, span),
        };
        // `S::A::f(x)` through member alias `A`: the struct's `f`.
        let canonical = (!self.program.symbols.contains_key(&path.join("::")))
            .then(|| self.program.canonical_path(path))
            .flatten();
        let path = canonical.as_deref().unwrap_or(path);
        if let Some(v) = self.call_declared(fx, callee, path, args, span)? {
            return Ok(v);
        }
        let joined = path.join("::");
        if let Some(v) = self.call_library(fx, path, &joined, args, span)? {
            return Ok(v);
        }
        if self.program.prototypes.contains(&joined) {
            return Err(Error::coded(
                Code::FunctionNotDefined,
                callee.span,
                format!("`{joined}` is declared but not defined in this translation unit"),
            )
            .note("a prototype declares it, but no file of this translation defines it: Metal links the files of a library; WGSL has no linker")
            .note("translate the file that defines it together with this one: `-include FILE.metal`"));
        }
        Err(Error::coded(
            Code::UndeclaredFunction,
            callee.span,
            format!("use of undeclared function `{joined}`"),
        )
        .with_notes(self.program.function_name_hint(&joined)))
    }

    /// `base.method(args)`, `base->method(args)`: a member function of a
    /// struct or a texture method; `explicit`: the template arguments of
    /// `base.template method<N>(args)`.
    #[allow(clippy::too_many_arguments)]
    fn call_method(
        &mut self,
        fx: &mut FnCtx,
        base: &Expr,
        method: &Ident,
        arrow: bool,
        explicit: &[TemplateArg],
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        // The object is lowered once: the member function's first
        // argument, or a texture. `p->m()` is `(*p).m()`.
        let mut value = self.expr(fx, base)?;
        if arrow {
            value = self.deref(fx, value, base.span)?;
        }
        let object = Arg {
            ty: arg_type(&value),
            value,
            span: base.span,
        };
        if self.is_object(fx, &object.value) {
            return self.call_member_explicit(fx, object, method, explicit, args, span);
        }
        if !explicit.is_empty() {
            return Err(Error::coded(
                Code::Template,
                method.span,
                format!(
                    "`{}` has no member function template `{}`",
                    self.program.display(&object.ty),
                    method.name
                ),
            ));
        }
        if let Some(v) = self.simdgroup_matrix_method(fx, &object.value, method, args, span)? {
            return Ok(v);
        }
        if let Some(v) = self.vote_method(fx, &object, method, args, span)? {
            return Ok(v);
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
        self.texture_method(fx, h, t, &method.name, args, span)
    }

    /// `path<targs>(args)`: a `numeric_limits` constant, a struct template
    /// instance's constructor or static member, a function template with
    /// explicit arguments, a comparison, or a type's constructor.
    fn call_templated(
        &mut self,
        fx: &mut FnCtx,
        callee: &Expr,
        path: &[String],
        targs: &[TemplateArg],
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
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
        // `square<half>(x)`: explicit template arguments; `S::f<Op>(x)`,
        // `A::template f<Op>(x)` (`A` a member alias of a struct): static
        // member function template `f`.
        let canonical = self.program.canonical_path(path);
        let name = canonical.as_deref().unwrap_or(path).join("::");
        if !self.program.function_templates(&name).is_empty() {
            let targs = self.written_template_args(fx, targs)?;
            return self.call_template(fx, &name, &targs, args, callee.span, span);
        }
        // `load<T>(..)` inside a struct: one of its member templates.
        if let [name] = path {
            if let Some(v) =
                self.implicit_member_template_call(fx, name, targs, args, callee.span, span)?
            {
                return Ok(v);
            }
        }
        // `a < b > (c)` with variables parses like a template call;
        // when `a` is a variable it is the comparison `(a < b) > (c)`.
        if path.len() == 1 && targs.len() == 1 && args.len() == 1 && fx.lookup(&path[0]).is_some() {
            let comparison = comparison_of_template_call(callee, &targs[0], &args[0], span);
            return self.expr(fx, &comparison);
        }
        if let Some(v) = self.simdgroup_matrix_templated(fx, path, targs, args, span)? {
            return Ok(v);
        }
        let ts = written_type(path, targs.to_vec(), callee.span);
        let ty = self.program.resolve_type(&ts)?;
        self.construct(fx, &ty, args, span)
    }

    /// `f<T>(args)` written unqualified inside a member function of a
    /// struct that declares member template `f`: called on `this`, or, from
    /// a static member function, as the static member `S::f<T>`. `None`
    /// where the enclosing struct has no such template.
    fn implicit_member_template_call(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        targs: &[TemplateArg],
        args: &[Expr],
        callee_span: Span,
        span: Span,
    ) -> Result<Option<Value>> {
        let this = self.this_struct(fx);
        let owner = match this {
            Some(id) => self.program.struct_name(id).to_string(),
            None => match &fx.owner {
                Some(o) => o.clone(),
                None => return Ok(None),
            },
        };
        let key = crate::syntax::members::member_name(&owner, name);
        if self.program.function_templates(&key).is_empty() {
            return Ok(None);
        }
        if this.is_some() {
            let object = Expr {
                kind: ExprKind::Name(vec!["this".into()]),
                span: callee_span,
            };
            let method = Ident {
                name: name.to_string(),
                span: callee_span,
            };
            return self
                .call_method(fx, &object, &method, false, targs, args, span)
                .map(Some);
        }
        let targs = self.written_template_args(fx, targs)?;
        self.call_template(fx, &key, &targs, args, callee_span, span)
            .map(Some)
    }

    /// `name(args)` where `name` is declared in the program: a callable
    /// object, an implicit member call, a builtin type's constructor, a user
    /// function or template, a user type's constructor, or a static member.
    /// `None` when `path` names none of them.
    fn call_declared(
        &mut self,
        fx: &mut FnCtx,
        callee: &Expr,
        path: &[String],
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        let name = path.last().cloned().unwrap_or_default();
        if path.len() == 1 && fx.lookup(&name).is_some() {
            return self
                .call_object(fx, callee, Some(&name), args, span)
                .map(Some);
        }
        if path.len() == 1 && !self.program.symbols.contains_key(&name) {
            if let Some(v) = self.implicit_member_call(fx, &name, args, callee.span, span)? {
                return Ok(Some(v));
            }
        }
        let joined = path.join("::");
        if let Some(ty) = types::builtin_type(&joined) {
            let ts = written_type(path, vec![], callee.span);
            self.program.resolve_value_type(&ts)?;
            let value = self.construct(fx, &ty, args, span)?;
            if joined.trim_start_matches("metal::") == "quad_vote" {
                // MSL §6.9.3: the constructor keeps the bottom four bits.
                return self.quad_vote_bits(fx, value, span).map(Some);
            }
            return Ok(Some(value));
        }
        // `gradientcube(dx, dy)` as a value (sema/gradients.rs), where the
        // program names nothing so.
        if !self.program.symbols.contains_key(&name) {
            if let Some(id) = self.program.gradient_named(&joined) {
                return self.construct(fx, &Type::Struct(id), args, span).map(Some);
            }
        }
        // User functions named like a library function (overloads added to
        // `namespace metal`, MLX's `bfloat` SIMD functions) leave the
        // library's overloads candidates too.
        let library = library_function_of_user_name(path);
        if let Some(lib) = library {
            if matches!(self.program.symbols.get(&name), Some(Symbol::Functions(_))) {
                return self
                    .call_user_or_library(fx, &name, lib, args, callee.span, span)
                    .map(Some);
            }
        }
        // `f(x)`, and `S::f(x)`, `S<4>::f(x)` for a static member function
        // template (named `S::f`, `S<4>::f`).
        if !self.program.function_templates(&joined).is_empty() {
            if let Some(lib) = library {
                return self
                    .call_user_or_library(fx, &name, lib, args, callee.span, span)
                    .map(Some);
            }
            return self
                .call_functions_and_templates(fx, &joined, args, callee.span, span)
                .map(Some);
        }
        match path.len() {
            0 => Ok(None),
            // `f(x)`, `S(x)`.
            1 => self.call_symbol(fx, &name, args, callee.span, span),
            // `S::make(..)`: a static member function; `Traits<T>::type(x)`.
            _ => self.call_symbol(fx, &joined, args, callee.span, span),
        }
    }

    /// `object(args)`: a struct value with `operator()`, named (`f(x)`
    /// where `f` is a variable) or not: a temporary (`Op()(a, b)`,
    /// `Op{}(a, b)`, as C++ function objects are used) or any other
    /// expression whose value is such a struct (`ops[k](x)`, `make()(x)`).
    /// The object is evaluated once, then its `operator()` is called on
    /// it. `name` is the variable's, for the error when it has none.
    fn call_object(
        &mut self,
        fx: &mut FnCtx,
        callee: &Expr,
        name: Option<&str>,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        if let Some(v) = self.call_operator(fx, callee, args, span)? {
            return Ok(v);
        }
        Err(match name {
            Some(name) => Error::coded(
                Code::WrongKind,
                callee.span,
                format!("called object `{name}` is not a function"),
            ),
            None => Error::coded(
                Code::WrongKind,
                callee.span,
                "called object is not a function",
            )
            .note("only a struct with an `operator()` member can be called like a function"),
        })
    }

    /// `name(args)` where plain functions and function templates of this
    /// name compete.
    pub(in crate::lower) fn call_functions_and_templates(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        callee_span: Span,
        span: Span,
    ) -> Result<Value> {
        let plain = match self.program.symbols.get(name) {
            Some(Symbol::Functions(list)) => list.clone(),
            _ => Vec::new(),
        };
        let templates = self.program.function_templates(name).to_vec();
        self.call_overloaded(
            fx,
            name,
            &plain,
            &templates,
            &[],
            Vec::new(),
            args,
            callee_span,
            span,
        )
    }

    /// `name(args)` where user function templates share a Metal function's
    /// name (SPIRV-Cross's integer `sign`, kept off floats by `enable_if`):
    /// `using namespace metal` makes the library function a candidate
    /// too, so where no user one is viable the library one is called.
    /// The user attempt is lowered in a block of its own, dropped if it
    /// fails.
    fn call_user_or_library(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        library: &str,
        args: &[Expr],
        callee_span: Span,
        span: Span,
    ) -> Result<Value> {
        // What the attempt computes is dropped with its block: calls among
        // the arguments leave results that no statement defines.
        let start = fx.function.expressions.len();
        fx.open();
        fx.library_competes = LibraryCompetes::Yes;
        let attempt = self.call_functions_and_templates(fx, name, args, callee_span, span);
        let library_wins = std::mem::take(&mut fx.library_competes) == LibraryCompetes::Wins;
        if library_wins {
            fx.close();
            crate::lower::cxx::members::neutralize_results(fx, start);
            // The library's overload, unless it takes none of these
            // arguments: then the user's conversion stands.
            let start = fx.function.expressions.len();
            fx.open();
            match self.library_call(fx, library, args, span) {
                Ok(Some(v)) => {
                    let block = fx.close();
                    fx.splice(block);
                    return Ok(v);
                }
                _ => {
                    fx.close();
                    crate::lower::cxx::members::neutralize_results(fx, start);
                    return self.call_functions_and_templates(fx, name, args, callee_span, span);
                }
            }
        }
        match attempt {
            Ok(v) => {
                let block = fx.close();
                fx.splice(block);
                Ok(v)
            }
            // No user overload is viable (one alone reports the argument
            // that does not convert), or several tie, where the library's
            // exact match wins in C++.
            Err(e)
                if matches!(
                    e.code,
                    Code::NoMatchingOverload
                        | Code::Template
                        | Code::TypeMismatch
                        | Code::AmbiguousCall
                ) =>
            {
                fx.close();
                crate::lower::cxx::members::neutralize_results(fx, start);
                self.library_call(fx, library, args, span)?.ok_or(e)
            }
            Err(e) => {
                fx.close();
                crate::lower::cxx::members::neutralize_results(fx, start);
                Err(e)
            }
        }
    }

    /// `name(args)` where symbol `name` is a user function or a user type;
    /// `None` when it is neither.
    fn call_symbol(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        callee_span: Span,
        span: Span,
    ) -> Result<Option<Value>> {
        match self.program.symbols.get(name) {
            Some(Symbol::Type(ty)) => {
                let ty = ty.clone();
                self.construct_declared(fx, &ty, args, span).map(Some)
            }
            Some(Symbol::Functions(list)) => {
                let list = list.clone();
                self.call_user(fx, name, &list, Vec::new(), args, callee_span, span)
                    .map(Some)
            }
            _ => Ok(None),
        }
    }

    /// `T(args)` for a declared type `T`: its user constructor, if it has
    /// one that applies, or the built-in construction.
    fn construct_declared(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        if let Some(v) = self.call_constructor(fx, ty, args, span)? {
            return Ok(v);
        }
        self.construct(fx, ty, args, span)
    }

    /// `path(args)` as a library call: `is_function_constant_defined`, a
    /// Metal standard library function, a SwiftUI intrinsic or a temporary
    /// sampler; `None` when it is none of them.
    fn call_library(
        &mut self,
        fx: &mut FnCtx,
        path: &[String],
        joined: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        if let [name] = path {
            if name == crate::sema::function_constants::IS_DEFINED {
                return self.function_constant_defined(fx, args, span).map(Some);
            }
            // `make_uniform(x)`: `x` as a `uniform<T>`, which is its `T`.
            if let ("make_uniform" | "metal::make_uniform", [x]) = (name.as_str(), args) {
                let (h, ty) = self.rvalue(fx, x)?;
                return Ok(Some(Value::Rv(h, ty)));
            }
        }
        if let Some(lib_name) = library_name(path) {
            if let Some(v) = self.library_call(fx, lib_name, args, span)? {
                return Ok(Some(v));
            }
        }
        // `SwiftUI::Layer::sample`'s intrinsic (src/preprocess/swiftui.rs).
        if let Some(v) = self.swiftui_intrinsic(fx, joined, args, span)? {
            return Ok(Some(v));
        }
        // `sampler(filter::linear)`: a temporary constexpr sampler.
        self.sampler_temporary(fx, path, args, span)
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
        // `reinterpret_cast<constant U* const device&>(args.p)`: the pointer
        // stored there read as a `U*` (SPIRV-Cross's aliased argument
        // buffer members); the result is a value, so assigning it is refused.
        if let [.., PtrOp::Pointer { .. }, PtrOp::Reference] = ts.ptr_ops.as_slice() {
            let mut pointer = ts.clone();
            pointer.ptr_ops.pop();
            if let Some(PtrOp::Pointer { space, .. }) = pointer.ptr_ops.last_mut() {
                *space = None;
            }
            return self.cast(fx, kind, &pointer, inner, span);
        }
        let ty = self.program.resolve_type(ts)?;
        // `(void)x`: evaluated for its effects, the value discarded.
        if ty == Type::Void && kind != CastKind::AsType {
            self.expr(fx, inner)?;
            return Ok(Value::Void);
        }
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
        // `reinterpret_cast<ulong>(p)`: a pointer's GPU address as an
        // integer (SPIR-V Cross's buffer device address arithmetic).
        if kind != CastKind::AsType
            && matches!(ty, Type::Scalar(s) if s.is_integer())
            && matches!(self.type_of(fx, inner)?, Type::Pointer(_))
        {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                inner.span,
                "casting a pointer to an integer (its GPU address) has no WebGPU equivalent: WGSL pointers have no address",
            )
            .note("a port does this instead: keep the buffer a `[[buffer(n)]]` argument and compute with an index or byte offset into it"));
        }
        if kind == CastKind::Reinterpret {
            return Err(Error::coded(
                Code::InvalidConversion,
                span,
                "`reinterpret_cast` is supported between pointer types only; use `as_type<T>(x)` to reinterpret a value's bits",
            ));
        }
        if let Type::Texture(target) = &ty {
            return self.texture_cast(fx, target, inner, span);
        }
        let v = self.expr(fx, inner)?;
        // A struct object where it is: its conversion function for that
        // address space (`operator U() const device`).
        if kind != CastKind::AsType {
            if let Some((h, _)) = self.conversion_function(fx, &v, &ty, true, span)? {
                return Ok(Value::Rv(h, ty));
            }
        }
        let (h, t) = self.load(fx, v, inner.span)?;
        if kind == CastKind::AsType {
            return self.as_type(fx, h, &t, &ty, span);
        }
        if t == ty {
            return Ok(Value::Rv(h, ty));
        }
        Ok(Value::Rv(self.convert(fx, h, &t, &ty, true, span)?, ty))
    }
}

impl Lowerer<'_, '_> {
    /// `(texture2d<float>)t`, Tint's `const_cast<texture2d<float> thread
    /// &>(t)`: the operand's own handle, whose storage format (chosen when
    /// it was bound) the written type does not say.
    fn texture_cast(
        &mut self,
        fx: &mut FnCtx,
        target: &crate::types::Texture,
        inner: &Expr,
        span: Span,
    ) -> Result<Value> {
        let v = self.expr(fx, inner)?;
        let unformatted = |t: &crate::types::Texture| crate::types::Texture { format: None, ..*t };
        if let Value::Rv(_, Type::Texture(t)) = &v {
            if unformatted(t) == unformatted(target) {
                return Ok(v);
            }
        }
        Err(Error::coded(
            Code::InvalidConversion,
            span,
            format!(
                "cannot convert this to `{}`: a texture converts only to its own type",
                self.program.display(&Type::Texture(*target))
            ),
        ))
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

/// The type written `path<args>` at `span`.
fn written_type(path: &[String], args: Vec<TemplateArg>, span: Span) -> TypeSpec {
    TypeSpec {
        is_const: false,
        is_constexpr: false,
        space: None,
        path: path.to_vec(),
        args,
        ptr_ops: vec![],
        name_span: span,
        span,
    }
}

/// The Metal library function that user functions called through `path`
/// share a name with: `f`, or the program-scope name the syntax gave a
/// user function declared in Metal's namespaces when the name was taken
/// (`metal::precise::rsqrt`, MLX's `bfloat` overloads in bf16_math.h), so
/// that the library's overloads stay candidates for those calls too.
fn library_function_of_user_name(path: &[String]) -> Option<&str> {
    let [name] = path else { return None };
    let parts: Vec<String> = name.split("::").map(str::to_string).collect();
    let lib = library_name(&parts)?;
    crate::lower::stdlib::Builtin::function(lib)?;
    // `lib` borrows `parts`; hand back the same suffix of `name`.
    Some(&name[name.len() - lib.len()..])
}

/// The Metal library function that `path` names, if any: `f`, `metal::f`,
/// `fast::f`, `metal::precise::f`.
fn library_name(path: &[String]) -> Option<&str> {
    match path {
        [n] => Some(n.as_str()),
        // `simd::length(v)`: `<simd/simd.h>` declares the geometric and
        // common functions in `namespace simd` too (headers shared with C++).
        [ns, n] if matches!(ns.as_str(), "metal" | "precise" | "fast" | "simd") => Some(n.as_str()),
        [m, ns, n] if m == "metal" && matches!(ns.as_str(), "precise" | "fast") => Some(n.as_str()),
        _ => None,
    }
}
