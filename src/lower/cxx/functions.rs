//! User functions: overload resolution, arguments, and one naga function per
//! specialisation (buffer pointers become element indices into a fixed global,
//! mapping doc §1.3).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Local, Place, PtrRoot, PtrValue, Value};
use crate::lower::cxx::args::{arg_type, Arg};
use crate::lower::{ArgKey, Error, Lowerer, Result};
use crate::sema::templates::{template_function, TemplateValue, MAX_INSTANTIATION_DEPTH};
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind, FunctionDecl, TemplateArg};
use crate::types::{AddressSpace, Type};
use std::rc::Rc;

/// A user function's declaration: borrowed from the program, or an
/// instantiation the lowering owns.
enum Decl<'a> {
    Program(&'a FunctionDecl),
    Instance(Rc<FunctionDecl>),
}

impl std::ops::Deref for Decl<'_> {
    type Target = FunctionDecl;
    fn deref(&self) -> &FunctionDecl {
        match self {
            Decl::Program(f) => f,
            Decl::Instance(f) => f,
        }
    }
}

/// An error unless `f` may be called: a stage function may not.
fn callable(f: &FunctionDecl, name: &str, callee_span: Span) -> Result<()> {
    let Some((stage, _)) = f.stage else {
        return Ok(());
    };
    let what = match stage {
        crate::syntax::ast::Stage::Kernel => "kernel",
        crate::syntax::ast::Stage::Vertex => "vertex",
        crate::syntax::ast::Stage::Fragment => "fragment",
    };
    Err(Error::coded(Code::EntryPointSignature, callee_span, format!("cannot call {what} function `{name}`; entry points cannot be called from other functions")))
}
use naga::{Expression, Handle, Statement};

impl<'a> Lowerer<'_, 'a> {
    /// Where the body of user function `index` is written, if it has one.
    pub(in crate::lower) fn body_span(&self, index: usize) -> Option<Span> {
        self.decl(index).body.as_ref().map(|b| b.span)
    }

    /// User function `index`: a definition or a template instantiation.
    fn decl(&self, index: usize) -> Decl<'a> {
        match self.program.functions.get(index) {
            Some(f) => Decl::Program(f),
            None => {
                Decl::Instance(self.global.instances[index - self.program.functions.len()].clone())
            }
        }
    }
}

impl Lowerer<'_, '_> {
    // ---- user functions ----------------------------------------------------

    /// A call of user function `name` with candidates `candidates`: its
    /// arguments are `pre`, lowered already (a member call's object, an
    /// operator's operands), then `rest`; each is lowered once.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::lower) fn call_user<E: std::borrow::Borrow<Expr>>(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        candidates: &[usize],
        pre: Vec<Arg>,
        rest: &[E],
        callee_span: Span,
        span: Span,
    ) -> Result<Value> {
        let n = pre.len() + rest.len();
        let viable: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|i| accepts(self.program.functions[*i], n))
            .collect();
        match *viable.as_slice() {
            [] => {
                let f = self.program.functions[candidates[0]];
                Err(Error::coded(Code::NoMatchingOverload, span, format!("no matching function for call to `{name}`: it takes {} argument(s), {} given", f.params.len(), n)))
            }
            [one] => {
                let f = self.program.functions[one];
                callable(f, name, callee_span)?;
                let args = self.call_args(fx, &[f], pre, rest)?;
                self.call_function(fx, one, name, args, callee_span, span)
            }
            _ => self.call_overloaded(fx, name, &viable, &[], &[], pre, rest, callee_span, span),
        }
    }

    /// A call of function template `name` (`square(x)`, `square<half>(x)`):
    /// its arguments are deduced, and each distinct instantiation becomes
    /// one more user function.
    pub(in crate::lower) fn call_template(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        explicit: &[TemplateArg],
        args: &[Expr],
        callee_span: Span,
        span: Span,
    ) -> Result<Value> {
        let candidates = self.program.function_templates(name).to_vec();
        let fits = candidates
            .iter()
            .any(|&t| accepts(template_function(self.program.templates[t]), args.len()));
        if !fits {
            let f = template_function(self.program.templates[candidates[0]]);
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!(
                    "no matching function for call to `{name}`: it takes {} argument(s), {} given",
                    f.params.len(),
                    args.len()
                ),
            ));
        }
        self.call_overloaded(
            fx,
            name,
            &[],
            &candidates,
            explicit,
            Vec::new(),
            args,
            callee_span,
            span,
        )
    }

    /// The user function index of template `t` instantiated with `values`.
    pub(in crate::lower) fn instance(
        &mut self,
        t: usize,
        values: Vec<TemplateValue>,
        span: Span,
    ) -> Result<usize> {
        let base = self.program.functions.len();
        let key = (t, values);
        if let Some(&i) = self.global.instance_ids.get(&key) {
            return Ok(base + i);
        }
        let template = self.program.templates[t];
        let name = self.program.instance_name(template, &key.1);
        // Every instantiation in progress is on this stack; a template that
        // keeps instantiating itself with new arguments never ends.
        let depth = self
            .global
            .in_progress
            .iter()
            .filter(|&&i| i >= base)
            .count();
        if depth >= MAX_INSTANTIATION_DEPTH {
            return Err(Error::coded(
                Code::LimitExceeded,
                span,
                format!("template instantiation depth exceeds the limit of {MAX_INSTANTIATION_DEPTH} (instantiating `{name}`)"),
            )
            .note(format!("`{}` instantiates itself with ever new template arguments", template_function(template).name.name)));
        }
        let ident = crate::syntax::ast::Ident {
            name,
            span: template_function(template).name.span,
        };
        let decl = self.program.instantiate(template, &key.1, ident)?;
        self.global.instances.push(std::rc::Rc::new(decl));
        self.global
            .instance_ids
            .insert(key, self.global.instances.len() - 1);
        Ok(base + self.global.instances.len() - 1)
    }

    /// Calls user function `index` (a definition or an instantiation) with
    /// `args`, lowered already, completing default arguments.
    pub(in crate::lower) fn call_function(
        &mut self,
        fx: &mut FnCtx,
        index: usize,
        name: &str,
        args: Vec<Arg>,
        callee_span: Span,
        span: Span,
    ) -> Result<Value> {
        let f = self.decl(index);
        let f: &FunctionDecl = &f;
        callable(f, name, callee_span)?;
        // A function returning a reference or pointer: no WGSL function
        // returns one, so its body is lowered here (`reference_calls.rs`).
        if let Some(ret) = self.returned_place(f)? {
            if let Some(v) = self.call_returning_place(fx, index, f, name, &ret, &args, span)? {
                return Ok(v);
            }
        }
        // A constructor of a struct holding pointers (any function
        // returning one): no WGSL function returns it, so its body is
        // lowered here (`metal/pointer_objects.rs`).
        if !is_auto(&f.ret) {
            let ret = self.program.resolve_type(&f.ret)?;
            if self.is_place_struct(&ret) && f.body.is_some() {
                let args = self.completed_arguments(fx, f, name, args, span)?;
                return self.inline_call(fx, f, &ret, args, span);
            }
        }
        let mut keys = Vec::new();
        let mut arguments = Vec::new();
        let mut copied_back = Vec::new();
        // The `thread` places passed so far, by parameter position.
        let mut thread_places: Vec<(usize, naga::Handle<naga::Expression>, bool)> = Vec::new();
        let returned = self.returned_parameter(f);
        let returned_value = returned.and_then(|k| args.get(k)).map(|a| a.value.clone());
        let mut given = args.into_iter();
        for p in &f.params {
            let pty = self.program.param_type(p)?;
            let arg = match (given.next(), &p.default) {
                (Some(a), _) => a,
                // `LoopAlignment<..> l = {}`: copy-initialized from the list.
                (None, Some(d)) if matches!(d.kind, ExprKind::InitList(_)) => {
                    let ExprKind::InitList(items) = &d.kind else {
                        unreachable!("matched")
                    };
                    let value = self.braced_value(fx, items, &pty, d.span)?;
                    Arg {
                        ty: arg_type(&value),
                        value,
                        span: d.span,
                    }
                }
                // C++ evaluates a default argument at the call, where only
                // program-scope names are visible to it.
                (None, Some(d)) => self.lower_arg(fx, d, false)?,
                (None, None) => {
                    return Err(Error::coded(
                        Code::NoMatchingOverload,
                        span,
                        format!("no matching function for call to `{name}`: too few arguments"),
                    ))
                }
            };
            let arg = match self.one_object_array_argument(fx, &pty, &arg, span)? {
                Some((temporary, copy)) => {
                    copied_back.push(copy);
                    temporary
                }
                None => arg,
            };
            let (key, mut arg) = self.pass_argument(fx, &pty, arg)?;
            if let (ArgKey::Thread, Type::Pointer(pp), [place]) = (&key, &pty, arg.as_slice()) {
                if let Some(copy) = self.part_argument_copy(fx, *place, pp, span)? {
                    arg = vec![copy.1];
                    copied_back.push(copy);
                }
            }
            // The object of an earlier `thread` argument again: the callee
            // names that one (a `const` parameter only stands for a
            // `const` one, so that writes stay allowed where they were).
            let is_const = matches!(&pty, Type::Pointer(pp) if pp.is_const);
            let key = match (&key, arg.as_slice()) {
                (ArgKey::Thread, [place]) => {
                    let same = thread_places.iter().find(|&&(_, p, earlier_const)| {
                        (!earlier_const || is_const) && same_place(fx, p, *place)
                    });
                    match same {
                        Some(&(earlier, ..)) => {
                            arg.clear();
                            ArgKey::SameAs(earlier)
                        }
                        None => {
                            thread_places.push((keys.len(), *place, is_const));
                            key
                        }
                    }
                }
                _ => key,
            };
            keys.push(key);
            arguments.extend(arg);
        }
        if copied_back.is_empty() && fx.tail.is_self_call((index, &keys), span) {
            // The function being built: its return type is known (an
            // `auto` one is deduced by its first `return`, before this).
            let ret = match returned_value {
                Some(_) => Type::Void,
                None => fx.return_type.clone(),
            };
            if let Some(v) = self.tail_call(fx, &arguments, &ret, span)? {
                return Ok(v);
            }
        }
        let function = self.function(index, keys, span)?;
        let ret = match returned_value {
            Some(_) => Type::Void,
            None => self.return_type(index, f)?,
        };
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
        for (place, copy, writable) in copied_back {
            if writable {
                let value = fx.add(Expression::Load { pointer: copy }, span);
                fx.push(
                    Statement::Store {
                        pointer: place,
                        value,
                    },
                    span,
                );
            }
        }
        Ok(match (result, returned_value) {
            (Some(h), _) => Value::Rv(h, ret),
            (None, Some(v)) => v,
            (None, None) => Value::Void,
        })
    }

    /// `args` completed with `f`'s default arguments, each with its
    /// parameter's type.
    pub(in crate::lower) fn completed_arguments(
        &mut self,
        fx: &mut FnCtx,
        f: &FunctionDecl,
        name: &str,
        args: Vec<Arg>,
        span: Span,
    ) -> Result<Vec<(Type, Arg)>> {
        let mut given = args.into_iter();
        let mut out = Vec::new();
        for p in &f.params {
            let pty = self.program.param_type(p)?;
            let arg = match (given.next(), &p.default) {
                (Some(a), _) => a,
                (None, Some(d)) => self.lower_arg(fx, d, false)?,
                (None, None) => {
                    return Err(Error::coded(
                        Code::NoMatchingOverload,
                        span,
                        format!("no matching function for call to `{name}`: too few arguments"),
                    ))
                }
            };
            out.push((pty, arg));
        }
        Ok(out)
    }

    /// The reference parameter (its index) that every `return` of `f`
    /// returns by name, when `f` returns a reference (`thread S&
    /// operator+=(thread S& a, S b) { ..; return a; }`): the call is that
    /// argument's place, which the caller already has, so the helper need
    /// return nothing (WGSL functions cannot return pointers).
    pub(in crate::lower) fn returned_parameter(&self, f: &FunctionDecl) -> Option<usize> {
        if !f
            .ret
            .ptr_ops
            .contains(&crate::syntax::ast::PtrOp::Reference)
        {
            return None;
        }
        let mut names = Vec::new();
        returned_names(&f.body.as_ref()?.stmts, &mut names)?;
        let first = names.first()?;
        if names.iter().any(|n| n != first) {
            return None;
        }
        let k = f
            .params
            .iter()
            .position(|p| p.name.as_ref().is_some_and(|n| n.name == *first))?;
        let pty = self.program.param_type(&f.params[k]).ok()?;
        let rty = self.program.resolve_type(&f.ret).ok()?;
        match (pty, rty) {
            (Type::Pointer(p), Type::Pointer(r)) if p.is_reference && p.pointee == r.pointee => {
                Some(k)
            }
            _ => None,
        }
    }

    /// A `thread` pointer or reference to a part of a variable (`&s.x`,
    /// `a[i]`) is passed as a pointer to a copy, written back after the
    /// call: naga's SPIR-V writer (wgpu on Vulkan) panics on a call whose
    /// pointer argument is an access chain ("Expression is not cached").
    /// Returns (the place, the copy's pointer, whether to write it back);
    /// `None` for a whole variable or a pointer parameter, passed as they
    /// are. Only a callee that also reaches the variable another way would
    /// see the difference.
    fn part_argument_copy(
        &mut self,
        fx: &mut FnCtx,
        place: Handle<Expression>,
        pp: &crate::types::Pointer,
        span: Span,
    ) -> Result<Option<PartCopy>> {
        if !matches!(
            fx.expr(place),
            Expression::Access { .. } | Expression::AccessIndex { .. }
        ) {
            return Ok(None);
        }
        let ty = self.naga_type(&pp.pointee, span)?;
        let var = fx.local("metal_argument", ty, span);
        let copy = fx.add(Expression::LocalVariable(var), span);
        let value = fx.add(Expression::Load { pointer: place }, span);
        fx.push(
            Statement::Store {
                pointer: copy,
                value,
            },
            span,
        );
        Ok(Some((place, copy, !pp.is_const)))
    }

    /// How argument `a`, lowered already, is passed to a parameter of type
    /// `pty`: loaded and converted, or as the place or pointer it is.
    pub(in crate::lower) fn argument(
        &mut self,
        fx: &mut FnCtx,
        pty: &Type,
        a: Arg,
    ) -> Result<(ArgKey, Option<Handle<Expression>>)> {
        if let Type::Texture(_) | Type::Sampler { .. } = pty {
            return self.resource_argument(fx, pty, a);
        }
        let Type::Pointer(pp) = pty else {
            let (h, t) = self.load(fx, a.value, a.span)?;
            return Ok((
                ArgKey::Value,
                Some(self.convert(fx, h, &t, pty, false, a.span)?),
            ));
        };
        let v = a.value;
        let mismatch = |l: &Self| {
            Error::coded(
                Code::TypeMismatch,
                a.span,
                format!("cannot pass this argument as `{}`", l.program.display(pty)),
            )
        };
        match (&v, pp.space) {
            // `nullptr`, or a pointer known to be null: nothing is passed,
            // the specialisation knows the parameter is null.
            (Value::Null(_), _) if !pp.is_reference => Ok((ArgKey::Null, None)),
            // A read-only reference to a value that is no WGSL place (a
            // program-scope `constant` scalar, which WGSL holds as a
            // `const`, or a temporary): nothing can change what it refers
            // to, so the callee reads the same from a copy.
            (Value::Rv(h, t), _)
                if pp.is_reference && (pp.is_const || pp.space == AddressSpace::Constant) =>
            {
                let (h, t) = (*h, t.clone());
                let value = self.convert(fx, h, &t, &pp.pointee, false, a.span)?;
                Ok((ArgKey::Value, Some(value)))
            }
            (Value::Ptr(p), AddressSpace::Device | AddressSpace::Constant) if !pp.is_reference => {
                match p.root {
                    PtrRoot::Buffer(g) | PtrRoot::Bytes(g) => {
                        Ok((ArgKey::Buffer(g), Some(p.index)))
                    }
                    PtrRoot::Global(g) => Ok((ArgKey::Global(g), None)),
                    PtrRoot::Place(..) | PtrRoot::View { .. } => Err(mismatch(self)),
                }
            }
            (Value::Bytes(b), AddressSpace::Device | AddressSpace::Constant) if pp.is_reference => {
                Ok((ArgKey::Buffer(b.global), Some(b.offset)))
            }
            (Value::Place(place), AddressSpace::Device | AddressSpace::Constant)
                if pp.is_reference =>
            {
                match self.buffer_reference_argument(fx, place, a.span) {
                    Err(_) if pp.is_const => self.const_reference_copy(fx, v, pp, a.span),
                    passed => passed,
                }
            }
            (Value::Place(place), AddressSpace::Thread) if pp.is_reference => {
                if !place.writable && !pp.is_const {
                    return Err(Error::coded(
                        Code::NotAssignable,
                        a.span,
                        "binding a non-const reference to read-only memory",
                    ));
                }
                Ok((ArgKey::Thread, Some(place.ptr)))
            }
            // A union object's storage of its own (metal/unions.rs).
            (Value::Bytes(b), AddressSpace::Thread)
                if pp.is_reference && (b.writable || pp.is_const) =>
            {
                Ok((ArgKey::Buffer(b.global), Some(b.offset)))
            }
            (Value::Ptr(p), AddressSpace::Thread) if !pp.is_reference => match p.root {
                PtrRoot::Place(base, false) => Ok((ArgKey::Thread, Some(base))),
                PtrRoot::Bytes(g) => Ok((ArgKey::Buffer(g), Some(p.index))),
                _ => Err(mismatch(self)),
            },
            (Value::Rv(..) | Value::Place(_) | Value::Agg(_), _)
                if pp.is_reference && pp.is_const =>
            {
                self.const_reference_copy(fx, v, pp, a.span)
            }
            _ => Err(mismatch(self)),
        }
    }

    /// A `const` reference bound to what the translation holds as a value
    /// (a program-scope `constant` array is a WGSL `const`) or as a part
    /// of a buffer it cannot pass in place (`constant T (&src)[N]` given
    /// `ubo.elements`): the callee only reads through it, so it is bound
    /// to a copy, converted as C++ binds a `const` reference to a
    /// temporary; only the object's address could tell the difference.
    fn const_reference_copy(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        pp: &crate::types::Pointer,
        span: Span,
    ) -> Result<(ArgKey, Option<Handle<Expression>>)> {
        let (h, t) = self.load(fx, v, span)?;
        let value = self.convert(fx, h, &t, &pp.pointee, false, span)?;
        let ty = self.naga_type(&pp.pointee, span)?;
        let var = fx.local("metal_argument", ty, span);
        let copy = fx.add(Expression::LocalVariable(var), span);
        fx.push(
            Statement::Store {
                pointer: copy,
                value,
            },
            span,
        );
        Ok((ArgKey::Thread, Some(copy)))
    }

    /// A `thread` pointer parameter given a local array (which decays to a
    /// pointer to its first element, [conv.array]) or a pointer into one
    /// (`vals + 2`): passed as the whole array and the element index
    /// (`ArgKey::ThreadArray`). `None` for any other argument.
    pub(in crate::lower) fn thread_array_argument(
        &mut self,
        fx: &mut FnCtx,
        pp: &crate::types::Pointer,
        a: &Arg,
    ) -> Option<(ArgKey, Vec<Handle<Expression>>)> {
        if pp.is_reference || pp.space != AddressSpace::Thread {
            return None;
        }
        let (base, index) = match &a.value {
            Value::Place(place) => {
                let Type::Array(e, _) = &place.ty else {
                    return None;
                };
                if e.unpacked() != pp.pointee.unpacked() || !(place.writable || pp.is_const) {
                    return None;
                }
                (place.ptr, self.u32_lit(fx, 0, a.span))
            }
            Value::Ptr(p) if p.pointee.unpacked() == pp.pointee.unpacked() => match p.root {
                PtrRoot::Place(base, true) if !p.is_const || pp.is_const => (base, p.index),
                _ => return None,
            },
            _ => return None,
        };
        let (len, vector) = self.thread_array_length(fx, base)?;
        Some((ArgKey::ThreadArray { len, vector }, vec![base, index]))
    }

    /// The length of the array (or 2- or 4-component vector, `true`) that
    /// `thread` pointer expression `base` designates when it is a whole
    /// local variable or a parameter passed as `ArgKey::ThreadArray`;
    /// `None` otherwise (a part of a variable: naga's SPIR-V writer cannot
    /// take a call argument that is an access chain).
    fn thread_array_length(&self, fx: &FnCtx, base: Handle<Expression>) -> Option<(u32, bool)> {
        let types = &self.global.module.types;
        let ty = match *fx.expr(base) {
            Expression::LocalVariable(v) => fx.function.local_variables[v].ty,
            Expression::FunctionArgument(i) => {
                match types[fx.function.arguments[i as usize].ty].inner {
                    naga::TypeInner::Pointer { base, .. } => base,
                    _ => return None,
                }
            }
            _ => return None,
        };
        match types[ty].inner {
            naga::TypeInner::Array {
                size: naga::ArraySize::Constant(n),
                ..
            } => Some((n.get(), false)),
            // A 3-component vector's components are not contiguous in
            // Metal's layout (`thread_views.rs` refuses its views).
            naga::TypeInner::Vector {
                size: size @ (naga::VectorSize::Bi | naga::VectorSize::Quad),
                ..
            } => Some((size as u32, true)),
            _ => None,
        }
    }

    /// How a texture or sampler argument `a` is passed to a parameter of
    /// type `pty`: as the value it is, or, for a writable texture, as the
    /// global it is bound to.
    fn resource_argument(
        &mut self,
        fx: &mut FnCtx,
        pty: &Type,
        a: Arg,
    ) -> Result<(ArgKey, Option<Handle<Expression>>)> {
        let (h, t) = self.load(fx, a.value, a.span)?;
        let same = match (&t, pty) {
            (Type::Texture(x), Type::Texture(y)) => {
                Type::Texture(crate::types::Texture { format: None, ..*x }) == Type::Texture(*y)
            }
            (Type::Sampler { .. }, Type::Sampler { .. }) => true,
            _ => false,
        };
        if !same {
            return Err(Error::coded(
                Code::TypeMismatch,
                a.span,
                format!(
                    "cannot pass `{}` as `{}`",
                    self.program.display(&t),
                    self.program.display(pty)
                ),
            ));
        }
        if let Type::Texture(tex) = &t {
            if tex.is_storage() {
                return match *fx.expr(h) {
                    Expression::GlobalVariable(g) => Ok((ArgKey::BoundTexture(g, t), None)),
                    _ => Err(Error::coded(
                        Code::Unsupported,
                        a.span,
                        "only a texture argument of the stage function can be passed on as a writable texture",
                    )
                    .note("WGSL writes a texture only through its binding")),
                };
            }
        }
        Ok((ArgKey::Resource(t), Some(h)))
    }

    /// How a `device` or `constant` reference to `place` is passed: a whole
    /// buffer, or an element of one as its index.
    fn buffer_reference_argument(
        &mut self,
        fx: &mut FnCtx,
        place: &Place,
        span: Span,
    ) -> Result<(ArgKey, Option<Handle<Expression>>)> {
        match *fx.expr(place.ptr) {
            Expression::GlobalVariable(g) => Ok((ArgKey::Global(g), None)),
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. }
                if matches!(*fx.expr(base), Expression::GlobalVariable(g)
                    if matches!(self.global.module.types[self.global.module.global_variables[g].ty].inner, naga::TypeInner::Array { .. })) =>
            {
                let Expression::GlobalVariable(g) = *fx.expr(base) else {
                    unreachable!()
                };
                let index = match *fx.expr(place.ptr) {
                    Expression::AccessIndex { index, .. } => self.u32_lit(fx, index, span),
                    Expression::Access { index, .. } => fx.add(
                        Expression::As {
                            expr: index,
                            kind: naga::ScalarKind::Uint,
                            convert: None,
                        },
                        span,
                    ),
                    _ => unreachable!(),
                };
                Ok((ArgKey::Buffer(g), Some(index)))
            }
            _ => Err(Error::coded(
                Code::Unsupported,
                span,
                "passing a part of a buffer element by reference is not supported yet",
            )),
        }
    }

    /// The naga function for user function `index` specialised for `keys`.
    pub(in crate::lower) fn function(
        &mut self,
        index: usize,
        keys: Vec<ArgKey>,
        span: Span,
    ) -> Result<Handle<naga::Function>> {
        let key = (
            index,
            keys,
            self.entry.predicated,
            (self.entry.fragment_rules(), self.simd_key()),
            self.predicated_loops_of(index),
        );
        if let Some(&h) = self.global.functions.get(&key) {
            // A kernel calling an already-lowered helper needs its features too.
            let features = self
                .global
                .function_features
                .get(&h)
                .cloned()
                .unwrap_or_default();
            self.entry.features.extend(features);
            return Ok(h);
        }
        if let Some(e) = self.global.asking_functions.get(&key) {
            self.program.pending.borrow_mut().ask_again();
            return Err(e.clone());
        }
        if self.global.in_progress.contains(&index) {
            return Err(Error::coded(
                Code::Recursion,
                span,
                "recursive function calls are not allowed in Metal",
            )
            .note("a call of a function to itself is translated only as the last thing the function does (`return f(..);`, or `f(..);` ending a `void` function), with its pointer arguments passed on unchanged"));
        }
        self.global.in_progress.push(index);
        let before = self.entry.features.clone();
        let asked_before = self.program.pending.borrow().requests();
        let result = self.build_function(index, &key.1);
        let result = result.map_err(|e| e.or_at(self.decl(index).name.span));
        self.global.in_progress.pop();
        let function = match result {
            Ok(function) => function,
            Err(e) => {
                if self.program.pending.borrow().requests() > asked_before {
                    self.global.asking_functions.insert(key, e.clone());
                }
                return Err(e);
            }
        };
        let h = self
            .global
            .module
            .functions
            .append(function, Self::span(self.decl(index).span));
        self.note_voting(h);
        let added = self.entry.features.difference(&before).copied().collect();
        self.global.function_features.insert(h, added);
        // Keyed as it is now, as lowering it may have predicated loops.
        let key = (
            index,
            key.1,
            self.entry.predicated,
            (self.entry.fragment_rules(), self.simd_key()),
            self.predicated_loops_of(index),
        );
        self.global.functions.insert(key, h);
        Ok(h)
    }

    /// The loops of user function `index` that this kernel's lowering
    /// predicates: one kernel's helper is not another's where they differ.
    fn predicated_loops_of(&self, index: usize) -> Vec<(usize, usize)> {
        if self.entry.predicated_loops.is_empty() {
            return Vec::new();
        }
        let Some(body) = self.decl(index).body.as_ref().map(|b| b.span) else {
            return Vec::new();
        };
        let mut loops: Vec<(usize, usize)> = self
            .entry
            .predicated_loops
            .iter()
            .copied()
            .filter(|&(start, end)| body.start as usize <= start && end <= body.end as usize)
            .collect();
        loops.sort_unstable();
        loops
    }

    /// The return type of user function `index` (`f`): as written, or as
    /// deduced from its body when it is `auto` (lowered by then).
    fn return_type(&self, index: usize, f: &FunctionDecl) -> Result<Type> {
        match self.global.deduced_returns.get(&index) {
            Some(t) if is_auto(&f.ret) => Ok(t.clone()),
            _ => self.program.resolve_type(&f.ret),
        }
    }

    fn build_function(&mut self, index: usize, keys: &[ArgKey]) -> Result<naga::Function> {
        let f = self.decl(index);
        let f: &FunctionDecl = &f;
        if is_auto(&f.ret) {
            return self.build_auto_function(index, keys);
        }
        let mut ret = self.program.resolve_type(&f.ret)?;
        let returned = self.returned_parameter(f);
        if returned.is_some() {
            ret = Type::Void;
        }
        if matches!(ret, Type::Pointer(_)) {
            return Err(Error::coded(
                Code::Unsupported,
                f.ret.span,
                "functions returning pointers or references are not supported yet",
            ));
        }
        if self.holds_atomic(&ret) {
            return Err(self.atomic_copy("the result", &ret, f.ret.span));
        }
        if self.holds_handle(&ret) {
            return Err(self.handle_result(&ret, f.ret.span));
        }
        let mut fx = FnCtx::new(&wgsl_name(&f.name.name), ret.clone());
        fx.owner = self.function_owner(index, &f.name.name);
        self.enter_class_scope(&fx);
        fx.returned_parameter =
            returned.map(|k| f.params[k].name.as_ref().expect("named").name.clone());
        // A helper of a fragment function samples with implicit derivatives
        // and may discard, as the function itself does (MSL §6.12, §6.11).
        fx.fragment = self.entry.fragment_rules();
        if ret != Type::Void {
            let ty = self.naga_type(&ret, f.ret.span)?;
            fx.function.result = Some(naga::FunctionResult { ty, binding: None });
        }
        let mut locals = Vec::new();
        for (p, key) in f.params.iter().zip(keys) {
            let pty = self.program.param_type(p)?;
            let local = match key {
                ArgKey::SameAs(j) => self.alias_parameter(&mut fx, p.name.as_ref(), &locals[*j])?,
                key => self.parameter(&mut fx, p.name.as_ref(), &pty, key, p.span)?,
            };
            locals.push(local);
        }
        let body = f.body.as_ref().expect("definitions have bodies");
        self.rebind_reassigned_pointers(&mut fx, body)?;
        if self.helper_returns_by_flag(body) {
            self.helper_body_by_flag(&mut fx, body)?;
        } else {
            self.body_with_tail_calls(&mut fx, (index, keys), body)?;
        }
        Ok(self.finish_helper(fx))
    }

    /// Makes the static constants of the struct whose member `fx` builds
    /// visible to the constant evaluator by their plain names, as class
    /// scope has them (`float tmp[vec_size];`, `load<T, N>(..)` with `N` a
    /// static member).
    pub(in crate::lower) fn enter_class_scope(&self, fx: &FnCtx) {
        let Some(owner) = &fx.owner else {
            return;
        };
        let index = self.global.class_constants.get_or_init(|| {
            let mut index: std::collections::HashMap<String, Vec<(String, usize)>> =
                Default::default();
            for (name, symbol) in &self.program.symbols {
                if let (crate::sema::Symbol::Constant(i), Some((s, member))) =
                    (symbol, name.rsplit_once("::"))
                {
                    index
                        .entry(s.to_string())
                        .or_default()
                        .push((member.to_string(), *i));
                }
            }
            index
        });
        for (member, i) in index.get(owner).into_iter().flatten() {
            fx.constants
                .define(member, self.program.constants[*i].value.clone());
        }
    }

    /// The struct that declares user function `index` named `name`: for an
    /// instance of a member function template, whose name is mangled
    /// (`S_float___load_..`), the template's (a static one reaches the
    /// struct's constants through it alone, having no `this`).
    pub(in crate::lower) fn function_owner(&self, index: usize, name: &str) -> Option<String> {
        self.owner_struct(name).or_else(|| {
            let i = index.checked_sub(self.program.functions.len())?;
            let ((t, _), _) = self.global.instance_ids.iter().find(|(_, &v)| v == i)?;
            self.owner_struct(&template_function(self.program.templates[*t]).name.name)
        })
    }

    /// The struct that declares member function `name` (`S::f`), if any.
    fn owner_struct(&self, name: &str) -> Option<String> {
        let (owner, _) = name.rsplit_once("::")?;
        matches!(
            self.program.symbols.get(owner),
            Some(crate::sema::Symbol::Type(Type::Struct(_)))
        )
        .then(|| owner.to_string())
    }

    /// The helper `fx` built, its votes numbered after those before its
    /// calls (`metal/vote_counters.rs`).
    fn finish_helper(&self, fx: FnCtx) -> naga::Function {
        let counter = fx.pred.votes;
        let mut f = fx.finish();
        self.sync_vote_counter(&mut f, counter, true);
        f
    }

    /// A function whose return type is `auto`: deduced from the first
    /// `return` (`void` without one), remembered for its calls.
    fn build_auto_function(&mut self, index: usize, keys: &[ArgKey]) -> Result<naga::Function> {
        let f = self.decl(index);
        let f: &FunctionDecl = &f;
        let mut fx = FnCtx::new(&wgsl_name(&f.name.name), Type::Void);
        fx.owner = self.function_owner(index, &f.name.name);
        self.enter_class_scope(&fx);
        fx.deduce_return = true;
        fx.fragment = self.entry.fragment_rules();
        let mut locals = Vec::new();
        for (p, key) in f.params.iter().zip(keys) {
            let pty = self.program.param_type(p)?;
            let local = match key {
                ArgKey::SameAs(j) => self.alias_parameter(&mut fx, p.name.as_ref(), &locals[*j])?,
                key => self.parameter(&mut fx, p.name.as_ref(), &pty, key, p.span)?,
            };
            locals.push(local);
        }
        let body = f.body.as_ref().expect("definitions have bodies");
        self.rebind_reassigned_pointers(&mut fx, body)?;
        if self.helper_returns_by_flag(body) {
            self.helper_body_by_flag(&mut fx, body)?;
        } else {
            self.stmts(&mut fx, &body.stmts)?;
            self.finish_body(&mut fx, body.span)?;
        }
        self.global
            .deduced_returns
            .insert(index, fx.return_type.clone());
        Ok(self.finish_helper(fx))
    }

    /// The error for a function returning `ty`, a texture or sampler (or a
    /// struct holding one): WGSL functions cannot return handles (a helper
    /// returning one of its texture parameters could be inlined; that is
    /// not done yet).
    fn handle_result(&self, ty: &Type, span: Span) -> Error {
        Error::coded(
            Code::Unsupported,
            span,
            format!(
                "functions returning `{}` are not supported yet: WGSL functions cannot return textures or samplers",
                self.program.display(ty)
            ),
        )
        .note("pass the texture or sampler itself to the code that uses it (a reinterpreting cast between texture types, such as SPIRV-Cross's `spvTextureCast`, has no WGSL equivalent)")
    }

    /// Deduces the return type of the `auto` function `fx` builds from
    /// the type `ty` of its first returned value.
    pub(in crate::lower) fn deduce_return(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        span: Span,
    ) -> Result<()> {
        if matches!(ty, Type::Pointer(_)) {
            return Err(Error::coded(
                Code::Unsupported,
                span,
                "functions returning pointers or references are not supported yet",
            ));
        }
        if self.holds_atomic(ty) {
            return Err(self.atomic_copy("the result", ty, span));
        }
        if self.holds_handle(ty) {
            return Err(self.handle_result(ty, span));
        }
        let h = self.naga_type(ty, span)?;
        fx.function.result = Some(naga::FunctionResult {
            ty: h,
            binding: None,
        });
        fx.return_type = ty.clone();
        fx.deduce_return = false;
        Ok(())
    }

    /// Ends a function body that may fall off its end.
    pub(in crate::lower) fn finish_body(&mut self, fx: &mut FnCtx, span: Span) -> Result<()> {
        if fx.terminated() {
            return Ok(());
        }
        let value = match (fx.return_type.clone(), &fx.output) {
            (Type::Void, _) => None,
            (_, Some(adapter)) => Some(fx.add(Expression::ZeroValue(adapter.ty), span)),
            // Falling off a value-returning function is undefined in C++; return zero.
            (t, None) => {
                let h = self.naga_type(&t, span)?;
                Some(fx.add(Expression::ZeroValue(h), span))
            }
        };
        fx.push(Statement::Return { value }, span);
        Ok(())
    }

    /// Parameter `name` of type `pty` of the function `fx` builds, received
    /// as `key` says, declared under its name.
    pub(in crate::lower) fn parameter(
        &mut self,
        fx: &mut FnCtx,
        name: Option<&crate::syntax::ast::Ident>,
        pty: &Type,
        key: &ArgKey,
        span: Span,
    ) -> Result<Local> {
        let pname = name
            .map(|n| n.name.clone())
            .unwrap_or_else(|| "_unnamed".into());
        let local = match (key, pty) {
            // A read-only reference bound to a copy (`argument`).
            (ArgKey::Value, Type::Pointer(pp)) if pp.is_reference => {
                match self.value_parameter(fx, &pname, &pp.pointee, span)? {
                    Local::Var { var, ty, .. } => Local::Var {
                        var,
                        ty,
                        is_const: true,
                    },
                    other => other,
                }
            }
            (ArgKey::Value, _) => self.value_parameter(fx, &pname, pty, span)?,
            (ArgKey::Resource(ty), _) => {
                let th = self.naga_type(ty, span)?;
                let arg = function_argument(fx, pname.clone(), th, span);
                Local::Value(arg, ty.clone())
            }
            (ArgKey::BoundTexture(g, ty), _) => {
                Local::Value(fx.add(Expression::GlobalVariable(*g), span), ty.clone())
            }
            (ArgKey::Aggregate(_) | ArgKey::GlobalPath(..), _) => {
                self.place_parameter(fx, &pname, pty, key, span)?
            }
            (ArgKey::Buffer(g), Type::Pointer(pp)) => {
                self.buffer_parameter(fx, &pname, *g, pp, span)?
            }
            (ArgKey::Global(g), Type::Pointer(pp)) => self.global_parameter(fx, *g, pp, span),
            (ArgKey::Thread, Type::Pointer(pp)) => self.thread_parameter(fx, &pname, pp, span)?,
            (ArgKey::Null, Type::Pointer(pp)) => Local::Null((**pp).clone()),
            (ArgKey::ThreadArray { len, vector }, Type::Pointer(pp)) => {
                self.thread_array_parameter(fx, &pname, pp, (*len, *vector), span)?
            }
            (ArgKey::ThreadView { object, array, ty }, Type::Pointer(pp)) => {
                let view = (object.clone(), *array, *ty);
                self.thread_view_parameter(fx, &pname, pp, view, span)?
            }
            // `device T*& p`: the caller's pointer itself, moved in place.
            (ArgKey::PointerAddress(inner), Type::Pointer(pp))
                if pp.is_reference && matches!(pp.pointee, Type::Pointer(_)) =>
            {
                Local::Cell(self.cell_parameter(fx, &pname, &pp.pointee, &pname, inner, span)?)
            }
            (ArgKey::PointerAddress(inner), Type::Pointer(pp))
                if matches!(pp.pointee, Type::Pointer(_)) =>
            {
                self.pointer_address_parameter(fx, &pname, &pp.pointee, inner, span)?
            }
            // An array of pointers given `&p` ([dcl.fct]/5: a pointer).
            (ArgKey::PointerAddress(inner), Type::Array(elem, _))
                if matches!(**elem, Type::Pointer(_)) =>
            {
                self.pointer_address_parameter(fx, &pname, elem, inner, span)?
            }
            // An array of pointers given a local one.
            (ArgKey::Cell(inner), Type::Array(elem, _)) if matches!(**elem, Type::Pointer(_)) => {
                Local::Cell(self.cell_parameter(fx, &pname, pty, &pname, inner, span)?)
            }
            _ => {
                return Err(Error::coded(
                    Code::Unsupported,
                    span,
                    "unsupported parameter",
                ))
            }
        };
        if let Some(n) = name {
            if !fx.declare(&n.name, local.clone()) {
                return Err(Error::coded(
                    Code::Redefinition,
                    n.span,
                    format!("redefinition of parameter `{}`", n.name),
                ));
            }
        }
        Ok(local)
    }

    /// Parameter `name` bound to the object of an earlier parameter
    /// (`ArgKey::SameAs`).
    fn alias_parameter(
        &mut self,
        fx: &mut FnCtx,
        name: Option<&crate::syntax::ast::Ident>,
        earlier: &Local,
    ) -> Result<Local> {
        if let Some(n) = name {
            if !fx.declare(&n.name, earlier.clone()) {
                return Err(Error::coded(
                    Code::Redefinition,
                    n.span,
                    format!("redefinition of parameter `{}`", n.name),
                ));
            }
        }
        Ok(earlier.clone())
    }

    /// A parameter passed by value: C++ parameters are mutable, so the
    /// argument is copied into a local.
    fn value_parameter(
        &mut self,
        fx: &mut FnCtx,
        pname: &str,
        pty: &Type,
        span: Span,
    ) -> Result<Local> {
        if self.holds_atomic(pty) {
            return Err(match pname {
                // A member function whose object the translation copies.
                "this" => Error::coded(
                    Code::Unsupported,
                    span,
                    format!(
                        "this member function is not supported on `{}`: it holds atomics, and the translation would copy the object",
                        self.program.display(pty)
                    ),
                ),
                _ => self.atomic_copy(&format!("parameter `{pname}`"), pty, span),
            });
        }
        let ty = self.naga_type(pty, span)?;
        let arg = function_argument(fx, pname.to_string(), ty, span);
        let var = fx.local(pname, ty, span);
        let ptr = fx.add(Expression::LocalVariable(var), span);
        fx.push(
            Statement::Store {
                pointer: ptr,
                value: arg,
            },
            span,
        );
        if self.holds_union(pty) {
            return self.union_local(fx, pname, var, pty, false, span);
        }
        let index = fx.function.arguments.len() as u32 - 1;
        fx.tail.copies.insert(index, var);
        Ok(Local::Var {
            var,
            ty: pty.clone(),
            is_const: false,
        })
    }

    /// A pointer or reference parameter into buffer `g`: the argument is
    /// the element index.
    fn buffer_parameter(
        &mut self,
        fx: &mut FnCtx,
        pname: &str,
        g: Handle<naga::GlobalVariable>,
        pp: &crate::types::Pointer,
        span: Span,
    ) -> Result<Local> {
        let ty = self.naga_type(&Type::UINT, span)?;
        let index = function_argument(fx, format!("{pname}_index"), ty, span);
        let root = if self.word_view(g).is_some() {
            PtrRoot::Bytes(g)
        } else {
            PtrRoot::Buffer(g)
        };
        let ptr = PtrValue {
            root,
            index,
            pointee: pp.pointee.clone(),
            space: pp.space,
            is_const: pp.is_const,
        };
        Ok(
            match (pp.is_reference, self.element_value(fx, &ptr, span)) {
                (true, Value::Bytes(b)) => Local::Bytes(b),
                (true, Value::Place(p)) => Local::Ref(p),
                _ => Local::Ptr(ptr),
            },
        )
    }

    /// A pointer or reference parameter to global `g`: no argument, the
    /// function uses the global.
    fn global_parameter(
        &mut self,
        fx: &mut FnCtx,
        g: Handle<naga::GlobalVariable>,
        pp: &crate::types::Pointer,
        span: Span,
    ) -> Local {
        let zero = self.u32_lit(fx, 0, span);
        let ptr = PtrValue {
            root: PtrRoot::Global(g),
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

    /// A `thread` pointer parameter given a local array of `n` elements,
    /// or a vector of `n` components (`ArgKey::ThreadArray`): a naga
    /// `function` pointer to the array (vector) and the element index.
    fn thread_array_parameter(
        &mut self,
        fx: &mut FnCtx,
        pname: &str,
        pp: &crate::types::Pointer,
        (n, vector): (u32, bool),
        span: Span,
    ) -> Result<Local> {
        let whole = match (vector, pp.pointee.unpacked()) {
            (true, Type::Scalar(s)) => Type::Vector(s, n as u8),
            _ => Type::Array(Box::new(pp.pointee.clone()), n),
        };
        let array = self.naga_type(&whole, span)?;
        let ty = self.function_pointer_type(array);
        let arg = function_argument(fx, pname.to_string(), ty, span);
        let u32_ty = self.naga_type(&Type::UINT, span)?;
        let index = function_argument(fx, format!("{pname}_element"), u32_ty, span);
        Ok(Local::Ptr(PtrValue {
            root: PtrRoot::Place(arg, true),
            index,
            pointee: pp.pointee.clone(),
            space: pp.space,
            is_const: pp.is_const,
        }))
    }

    /// A `thread` pointer parameter given a view of a `thread` object
    /// (`ArgKey::ThreadView`): a naga `function` pointer to the whole
    /// object (of naga type `ty`) and the view's index.
    fn thread_view_parameter(
        &mut self,
        fx: &mut FnCtx,
        pname: &str,
        pp: &crate::types::Pointer,
        (object, array, ty): (Type, bool, naga::Handle<naga::Type>),
        span: Span,
    ) -> Result<Local> {
        let ptr = self.function_pointer_type(ty);
        let base = function_argument(fx, pname.to_string(), ptr, span);
        let u32_ty = self.naga_type(&Type::UINT, span)?;
        let index = function_argument(fx, format!("{pname}_element"), u32_ty, span);
        Ok(Local::Ptr(PtrValue {
            root: PtrRoot::View {
                base,
                array,
                object: Box::new(object),
            },
            index,
            pointee: pp.pointee.clone(),
            space: pp.space,
            is_const: pp.is_const,
        }))
    }

    /// The naga type of a `function`-space pointer to `base` (what a
    /// `thread` pointer parameter is passed as).
    pub(in crate::lower) fn function_pointer_type(
        &mut self,
        base: naga::Handle<naga::Type>,
    ) -> naga::Handle<naga::Type> {
        self.global.module.types.insert(
            naga::Type {
                name: None,
                inner: naga::TypeInner::Pointer {
                    base,
                    space: naga::AddressSpace::Function,
                },
            },
            naga::Span::UNDEFINED,
        )
    }

    /// A `thread` pointer or reference parameter: a naga `function` pointer.
    fn thread_parameter(
        &mut self,
        fx: &mut FnCtx,
        pname: &str,
        pp: &crate::types::Pointer,
        span: Span,
    ) -> Result<Local> {
        let base = self.naga_type(&pp.pointee, span)?;
        let ty = self.function_pointer_type(base);
        let arg = function_argument(fx, pname.to_string(), ty, span);
        let place = Place {
            ptr: arg,
            ty: pp.pointee.clone(),
            writable: !pp.is_const,
        };
        if pp.is_reference {
            return Ok(Local::Ref(place));
        }
        let zero = self.u32_lit(fx, 0, span);
        Ok(Local::Ptr(PtrValue {
            root: PtrRoot::Place(arg, false),
            index: zero,
            pointee: pp.pointee.clone(),
            space: pp.space,
            is_const: pp.is_const,
        }))
    }
}

/// A readable WGSL name for a helper: member functions are declared as
/// `S::m` (`S::m@device` for the device twin) and operators as `operator+`.
fn wgsl_name(name: &str) -> String {
    const OPS: [(&str, &str); 25] = [
        ("+=", "add_assign"),
        ("-=", "sub_assign"),
        ("*=", "mul_assign"),
        ("/=", "div_assign"),
        ("%=", "rem_assign"),
        ("&=", "and_assign"),
        ("|=", "or_assign"),
        ("^=", "xor_assign"),
        ("==", "eq"),
        ("!=", "ne"),
        ("<=", "le"),
        (">=", "ge"),
        ("&&", "land"),
        ("||", "lor"),
        ("<<", "shl"),
        (">>", "shr"),
        ("+", "add"),
        ("-", "sub"),
        ("*", "mul"),
        ("/", "div"),
        ("%", "rem"),
        ("<", "lt"),
        (">", "gt"),
        ("!", "not"),
        ("~", "bit_not"),
    ];
    let mut out = name.replace("::", "_").replace('@', "_");
    if let Some(i) = out.find("operator") {
        let rest = out[i + "operator".len()..].to_string();
        if let Some((op, word)) = OPS.iter().find(|(op, _)| rest.starts_with(op)) {
            out = format!("{}operator_{word}{}", &out[..i], &rest[op.len()..]);
        }
    }
    out
}

/// Whether a written return type is `auto` (also `const auto`), deduced
/// from the body.
pub(in crate::lower) fn is_auto(ts: &crate::syntax::ast::TypeSpec) -> bool {
    ts.path.len() == 1 && ts.path[0] == "auto" && ts.args.is_empty() && ts.ptr_ops.is_empty()
}

/// Whether `f` can be called with `n` arguments: the parameters past the
/// `n`th all have default arguments (`float f(float x, float k = 2.0f)`);
/// a function parameter pack takes any number.
pub(in crate::lower) fn accepts(f: &FunctionDecl, n: usize) -> bool {
    if f.params.iter().any(|p| p.pack) {
        let needed = f.params.iter().filter(|p| !p.pack && p.default.is_none());
        return n >= needed.count();
    }
    n <= f.params.len() && f.params[n..].iter().all(|p| p.default.is_some())
}

/// A new argument `name` of naga type `ty` of the function `fx` builds,
/// and the expression of its value.
fn function_argument(
    fx: &mut FnCtx,
    name: String,
    ty: Handle<naga::Type>,
    span: Span,
) -> Handle<Expression> {
    let index = fx.function.arguments.len() as u32;
    fx.function.arguments.push(naga::FunctionArgument {
        name: Some(name),
        ty,
        binding: None,
    });
    fx.add(Expression::FunctionArgument(index), span)
}

/// A part of a variable passed by reference through a copy: (the place, the
/// copy's pointer, whether the copy is written back after the call).
pub(in crate::lower) type PartCopy = (Handle<Expression>, Handle<Expression>, bool);

/// The names every `return` in `stmts` returns (`return a;`), appended to
/// `names`; `None` if one returns something else, or nothing.
fn returned_names(stmts: &[crate::syntax::ast::Stmt], names: &mut Vec<String>) -> Option<()> {
    use crate::syntax::ast::{StmtKind, SwitchItem};
    for s in stmts {
        match &s.kind {
            StmtKind::Block(b) => returned_names(&b.stmts, names)?,
            StmtKind::If {
                then, otherwise, ..
            } => {
                returned_names(std::slice::from_ref(then), names)?;
                if let Some(o) = otherwise {
                    returned_names(std::slice::from_ref(o), names)?;
                }
            }
            StmtKind::For { body, .. }
            | StmtKind::RangeFor { body, .. }
            | StmtKind::While { body, .. }
            | StmtKind::DoWhile { body, .. } => returned_names(std::slice::from_ref(body), names)?,
            StmtKind::Switch { items, .. } => {
                for item in items {
                    if let SwitchItem::Stmt(s) = item {
                        returned_names(std::slice::from_ref(s), names)?;
                    }
                }
            }
            StmtKind::Return(Some(Expr {
                kind: ExprKind::Name(path),
                ..
            })) if path.len() == 1 => names.push(path[0].clone()),
            StmtKind::Return(_) => return None,
            _ => {}
        }
    }
    Some(())
}

/// Whether two `thread` place pointers of `fx` name the same object: the
/// same variable or argument, through the same constant member and element
/// indices.
fn same_place(
    fx: &FnCtx,
    a: naga::Handle<naga::Expression>,
    b: naga::Handle<naga::Expression>,
) -> bool {
    use naga::Expression as E;
    if a == b {
        return true;
    }
    match (fx.expr(a), fx.expr(b)) {
        (E::LocalVariable(x), E::LocalVariable(y)) => x == y,
        (E::FunctionArgument(x), E::FunctionArgument(y)) => x == y,
        (E::GlobalVariable(x), E::GlobalVariable(y)) => x == y,
        (E::AccessIndex { base: x, index: i }, E::AccessIndex { base: y, index: j }) => {
            i == j && same_place(fx, *x, *y)
        }
        _ => false,
    }
}
