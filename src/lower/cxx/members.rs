//! Member functions, constructors and operator overloads of user structs.
//!
//! The parser turned each of them into a free function (see
//! `syntax::from_pest::members`): member `m` of `S` is `S::m(this, args...)`, a
//! non-const one also has a `device S&` twin `S::m@device`, and constructors
//! are `S::S(args...)`. Here calls find those functions and pass the object
//! as the first argument, so the usual helper specialisation applies.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Local, Value};
use crate::lower::cxx::args::Arg;
use crate::lower::cxx::overloads::Resolution;
use crate::lower::metal::buffer_pointers::is_null;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::Symbol;
use crate::source_map::Span;
use crate::syntax::ast::{self, Expr, ExprKind, Ident, Init, PtrOp};
use crate::syntax::members::{member_name, DEVICE_TWIN, EXPLICIT_CONSTRUCTOR};
use crate::types::{AddressSpace, StructId, Type};
use naga::Expression;

/// Where an object whose member function is called lives.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Storage {
    /// A `thread` variable or reference.
    Thread,
    /// A `device` buffer element.
    Device,
    /// Threadgroup memory.
    Threadgroup,
    /// A temporary (a call result, a constructed value).
    Temporary,
}

impl Lowerer<'_, '_> {
    /// The user functions named `name`, if any.
    pub(super) fn user_functions(&self, name: &str) -> Vec<usize> {
        match self.program.symbols.get(name) {
            Some(Symbol::Functions(list)) => list.clone(),
            _ => Vec::new(),
        }
    }

    /// The struct, storage, writability and address space of `object`,
    /// lowered already; `None` when it is not a struct. A read-only buffer
    /// is `constant` here: WGSL does not tell `constant` and `const device`
    /// memory apart (see [`Lowerer::call_member`]).
    fn object_info(
        &self,
        fx: &FnCtx,
        object: &Value,
    ) -> Option<(StructId, Storage, bool, AddressSpace)> {
        let read_only = |space: AddressSpace, writable: bool| match space {
            AddressSpace::Device if !writable => AddressSpace::Constant,
            s => s,
        };
        match object {
            Value::Place(p) => match p.ty {
                Type::Struct(id) => Some((
                    id,
                    self.place_storage(fx, p.ptr),
                    p.writable,
                    read_only(self.place_space(fx, p.ptr), p.writable),
                )),
                _ => None,
            },
            Value::Bytes(b) => match b.ty {
                Type::Struct(id) => {
                    let space = match self.global.module.global_variables[b.global].space {
                        naga::AddressSpace::Uniform => AddressSpace::Constant,
                        _ => read_only(AddressSpace::Device, b.writable),
                    };
                    Some((id, Storage::Device, b.writable, space))
                }
                _ => None,
            },
            Value::Rv(_, Type::Struct(id)) => {
                Some((*id, Storage::Temporary, true, AddressSpace::Thread))
            }
            // A local object of a struct holding pointers
            // (`metal/pointer_objects.rs`), or one a helper received.
            Value::Agg(a) if a.pointer.is_none() => match a.ty {
                Type::Struct(id) => Some((id, Storage::Thread, true, AddressSpace::Thread)),
                _ => None,
            },
            _ => None,
        }
    }

    /// True if `object`, lowered already, is a struct (whose member
    /// functions [`Lowerer::call_member`] calls).
    pub(in crate::lower) fn is_object(&self, fx: &FnCtx, object: &Value) -> bool {
        self.object_info(fx, object).is_some()
    }

    /// Where the memory behind pointer expression `ptr` lives.
    fn place_storage(&self, fx: &FnCtx, mut ptr: naga::Handle<Expression>) -> Storage {
        loop {
            match *fx.expr(ptr) {
                Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                    ptr = base
                }
                Expression::GlobalVariable(g) => {
                    return match self.global.module.global_variables[g].space {
                        naga::AddressSpace::Storage { .. } | naga::AddressSpace::Uniform => {
                            Storage::Device
                        }
                        naga::AddressSpace::WorkGroup => Storage::Threadgroup,
                        _ => Storage::Thread,
                    }
                }
                _ => return Storage::Thread,
            }
        }
    }

    /// The address space of the memory behind pointer expression `ptr`.
    pub(in crate::lower) fn place_space(
        &self,
        fx: &FnCtx,
        ptr: naga::Handle<Expression>,
    ) -> AddressSpace {
        let mut root = ptr;
        loop {
            match *fx.expr(root) {
                Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                    root = base
                }
                Expression::GlobalVariable(g) => {
                    return match self.global.module.global_variables[g].space {
                        naga::AddressSpace::Storage { .. } => AddressSpace::Device,
                        naga::AddressSpace::Uniform => AddressSpace::Constant,
                        naga::AddressSpace::WorkGroup => AddressSpace::Threadgroup,
                        _ => AddressSpace::Thread,
                    }
                }
                _ => return AddressSpace::Thread,
            }
        }
    }

    /// True if user function `i` is a non-static member function (its
    /// first parameter is the object, `this`).
    fn has_object(&self, i: usize) -> bool {
        self.program.functions[i]
            .params
            .first()
            .and_then(|p| p.name.as_ref())
            .is_some_and(|n| n.name == "this")
    }

    /// `object(args)` when `object` is a struct with an `operator()` member.
    pub(in crate::lower) fn call_operator(
        &mut self,
        fx: &mut FnCtx,
        object: &Expr,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        let arg = self.lower_arg(fx, object, false)?;
        let Some((id, ..)) = self.object_info(fx, &arg.value) else {
            return Ok(None);
        };
        let key = member_name(self.program.struct_name(id), "operator()");
        if self.member_functions(&key).is_empty()
            && self.program.function_templates(&key).is_empty()
        {
            return Ok(None);
        }
        self.call_member(fx, arg, &ident("operator()", object.span), args, span)
            .map(Some)
    }

    /// `object[index]` when `object` is a struct with an `operator[]`
    /// member; `Ok(None)` otherwise (cheaply, without typing `object`, when
    /// no struct declares one; else `object`, lowered to find out, is kept
    /// for the built-in subscript).
    pub(in crate::lower) fn index_operator(
        &mut self,
        fx: &mut FnCtx,
        object: &Expr,
        index: &Expr,
        span: Span,
    ) -> Result<Option<Value>> {
        if !self.has_operator("operator[]") {
            return Ok(None);
        }
        fx.forget_lowered();
        let arg = self.lower_arg(fx, object, false)?;
        let key = self
            .object_info(fx, &arg.value)
            .map(|(id, ..)| member_name(self.program.struct_name(id), "operator[]"));
        let fns = key
            .map(|key| self.member_functions(&key))
            .unwrap_or_default();
        if fns.is_empty() {
            fx.keep_lowered(object, arg.value);
            return Ok(None);
        }
        // `return elements[i];` forwarding (Tint's `tint_array`): the place.
        if let Some(v) = self.forwarding_index(fx, &arg.value, &fns, index, span)? {
            return Ok(Some(v));
        }
        if let Some(v) = self.inlined_index(fx, &arg.value, &fns, index, span)? {
            return Ok(Some(v));
        }
        self.call_member(fx, arg, &ident("operator[]", object.span), &[index], span)
            .map(Some)
    }

    /// Member functions `key` (`S::m`) and their `device` versions.
    fn member_functions(&self, key: &str) -> Vec<usize> {
        let mut list = self.user_functions(key);
        list.extend(self.user_functions(&format!("{key}{DEVICE_TWIN}")));
        list
    }

    /// The address space written for the object of member function `i`
    /// (`T f() const device` has `device`; a non-const one has its
    /// reference's); `None` for an unqualified const member.
    fn object_space(&self, i: usize) -> Option<ast::AddressSpace> {
        self.program.functions[i]
            .params
            .first()?
            .ty
            .space
            .map(|s| s.0)
    }

    /// True if user function `i` takes its object by reference (non-const).
    fn mutates_object(&self, i: usize) -> bool {
        self.program.functions[i]
            .params
            .first()
            .is_some_and(|p| p.ty.ptr_ops.contains(&PtrOp::Reference))
    }

    /// `object.method(args)`, `object` lowered already (a struct: see
    /// [`Lowerer::is_object`]): it is the first argument.
    pub(in crate::lower) fn call_member<E: std::borrow::Borrow<Expr>>(
        &mut self,
        fx: &mut FnCtx,
        object: Arg,
        method: &Ident,
        args: &[E],
        span: Span,
    ) -> Result<Value> {
        self.call_member_explicit(fx, object, method, &[], args, span)
    }

    /// `object.template method<N>(args)`: [`Lowerer::call_member`] with
    /// explicit template arguments (`explicit`) for a member function
    /// template.
    pub(in crate::lower) fn call_member_explicit<E: std::borrow::Borrow<Expr>>(
        &mut self,
        fx: &mut FnCtx,
        mut object: Arg,
        method: &Ident,
        explicit: &[ast::TemplateArg],
        args: &[E],
        span: Span,
    ) -> Result<Value> {
        let Some((id, mut storage, writable, space)) = self.object_info(fx, &object.value) else {
            return Err(Error::coded(
                Code::UnknownMember,
                method.span,
                format!(
                    "`{}` has no member function `{}`",
                    self.program.display(&object.ty),
                    method.name
                ),
            ));
        };
        let sname = self.program.struct_name(id).to_string();
        let key = member_name(&sname, &method.name);
        let twins = self.user_functions(&format!("{key}{DEVICE_TWIN}"));
        let mut all = self.user_functions(&key);
        all.extend(&twins);
        // `object.f(args)` for a static member function `f`
        // ([class.static]/2): the object, evaluated already, is not passed.
        // Static and non-static overloads mix (`static T apply(T x)`
        // beside `T apply(T x, T c) const`); the static ones compete when
        // no non-static one takes the arguments.
        if explicit.is_empty() {
            let (statics, members): (Vec<usize>, Vec<usize>) =
                all.iter().partition(|&&i| !self.has_object(i));
            let n = args.len();
            let member_fits = members
                .iter()
                .any(|&i| self.program.functions[i].params.len() == n + 1);
            let fitting: Vec<usize> = statics
                .into_iter()
                .filter(|&i| super::functions::accepts(self.program.functions[i], n))
                .collect();
            if !fitting.is_empty() && !member_fits {
                return self.call_user(fx, &key, &fitting, Vec::new(), args, method.span, span);
            }
        }
        // Member function templates: overload resolution with the object
        // as the first argument, as for a plain member function.
        let templates = self.template_members_for(&key, space);
        if !templates.is_empty() {
            // A template may take its object by non-const reference
            // (`T operator()(T x) thread`), which a temporary binds once
            // materialised.
            if storage == Storage::Temporary {
                object = self.materialize(fx, object)?;
            }
            // Explicit template arguments leave only the templates.
            let plain = if explicit.is_empty() {
                all.clone()
            } else {
                Vec::new()
            };
            return self.call_overloaded(
                fx,
                &key,
                &plain,
                &templates,
                explicit,
                vec![object],
                args,
                method.span,
                span,
            );
        }
        if !explicit.is_empty() {
            return Err(Error::coded(
                Code::Template,
                method.span,
                format!(
                    "`{}` in `{sname}` is not a member function template, so it takes no template arguments",
                    method.name
                ),
            ));
        }
        if all.is_empty() {
            if let Some(e) = self.ambiguous_member(&sname, &method.name, method.span) {
                return Err(e);
            }
            return Err(Error::coded(
                Code::UnknownMember,
                method.span,
                format!("no member function `{}` in `{sname}`", method.name),
            ));
        }
        let arity: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&i| self.program.functions[i].params.len() == args.len() + 1)
            .collect();
        if arity.is_empty() {
            let takes = self.program.functions[all[0]].params.len() - 1;
            return Err(Error::coded(Code::NoMatchingOverload, span, format!("no matching member function for call to `{}`: it takes {takes} argument(s), {} given", method.name, args.len())));
        }
        let (consts, mutating): (Vec<usize>, Vec<usize>) = arity
            .into_iter()
            .filter(|i| !twins.contains(i))
            .partition(|&i| !self.mutates_object(i));
        let mut candidates = self.const_members_for(consts, space);
        // A writable object calls the non-const overload of a member
        // returning a reference or pointer ([over.match.funcs]/4: `thread T& at(i)`
        // over `const thread T& at(i) const`), so writes through the
        // result reach it; the const one returns the same place, read-only.
        let returns_place = |i: &usize| returns_place(self.program.functions[*i]);
        let writable_object = writable && storage != Storage::Temporary;
        if writable_object
            && !candidates.is_empty()
            && (mutating.iter().any(returns_place) || twins.iter().any(returns_place))
        {
            let mut non_const =
                self.mutating_members_for(method, storage, mutating.clone(), twins.clone())?;
            non_const.retain(|&i| self.program.functions[i].params.len() == args.len() + 1);
            if !non_const.is_empty() {
                candidates = non_const;
            }
        }
        if candidates.is_empty() && (!mutating.is_empty() || !twins.is_empty()) {
            if !writable {
                return Err(Error::coded(Code::NotAssignable, method.span, format!("cannot call non-const member function `{}` on a const object of type `{sname}`", method.name))
                    .note("declare the member function `const` if it does not modify the object"));
            }
            // C++ materialises a temporary whose non-const member is
            // called (`Op()(x)` with a non-const `operator()`): a `thread`
            // object that lives to the end of the expression.
            if storage == Storage::Temporary {
                object = self.materialize(fx, object)?;
                storage = Storage::Thread;
            }
            candidates = self.mutating_members_for(method, storage, mutating, twins)?;
            candidates.retain(|&i| self.program.functions[i].params.len() == args.len() + 1);
        }
        if candidates.is_empty() {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                method.span,
                format!(
                    "no member function `{}` of `{sname}` applies to an object in the `{}` address space",
                    method.name,
                    space.name()
                ),
            ));
        }
        self.call_user(
            fx,
            &method.name,
            &candidates,
            vec![object],
            args,
            method.span,
            span,
        )
    }

    /// A temporary object (`Op()`, a call's result) stored into a local of
    /// its own: the `thread` object that a non-const member function's
    /// reference binds.
    fn materialize(&mut self, fx: &mut FnCtx, object: Arg) -> Result<Arg> {
        let Value::Rv(h, ty) = object.value else {
            return Ok(object);
        };
        let th = self.naga_type(&ty, object.span)?;
        let var = fx.local("temporary", th, object.span);
        let ptr = fx.add(Expression::LocalVariable(var), object.span);
        fx.push(
            naga::Statement::Store {
                pointer: ptr,
                value: h,
            },
            object.span,
        );
        Ok(Arg {
            value: Value::Place(crate::lower::ctx::value::Place {
                ptr,
                ty,
                writable: true,
            }),
            ..object
        })
    }

    /// The const member functions among `consts` that apply to an object in
    /// address space `space`, the best fitting ones only.
    /// The member function templates named `key` that apply to an object
    /// in `space`: those whose object is qualified with that space when
    /// there are any (`operator U() const device`), else the unqualified
    /// ones (or, without those, all), as [`Self::const_members_for`]
    /// chooses plain ones.
    fn template_members_for(&self, key: &str, space: AddressSpace) -> Vec<usize> {
        let all = self.program.function_templates(key).to_vec();
        let object_space = |t: usize| {
            let f = crate::sema::templates::template_function(self.program.templates[t]);
            f.params.first().and_then(|p| p.ty.space).map(|s| s.0)
        };
        let exact: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&t| object_space(t).is_some_and(|s| same_space(s, space)))
            .collect();
        if !exact.is_empty() {
            return exact;
        }
        let unqualified: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&t| object_space(t).is_none())
            .collect();
        // Otherwise every one, overload resolution telling them apart.
        if unqualified.is_empty() {
            all
        } else {
            unqualified
        }
    }

    fn const_members_for(&self, consts: Vec<usize>, space: AddressSpace) -> Vec<usize> {
        // Const members qualified with an address space (`const device`)
        // apply to objects in that space only, and before unqualified ones.
        // A read-only buffer (`space` is `constant`) may be `constant` or
        // `const device` memory in the source, which WGSL does not tell
        // apart: both fit, `constant` first.
        let fits = |s: ast::AddressSpace, exact: bool| {
            same_space(s, space)
                || (!exact && space == AddressSpace::Constant && s == ast::AddressSpace::Device)
        };
        let consts: Vec<usize> = consts
            .into_iter()
            .filter(|&i| self.object_space(i).is_none_or(|s| fits(s, false)))
            .collect();
        let qualified = |exact: bool| -> Vec<usize> {
            consts
                .iter()
                .copied()
                .filter(|&i| self.object_space(i).is_some_and(|s| fits(s, exact)))
                .collect()
        };
        let (exact, qualified) = (qualified(true), qualified(false));
        if !exact.is_empty() {
            exact
        } else if !qualified.is_empty() {
            qualified
        } else {
            consts
        }
    }

    /// The non-const member functions that apply to a writable object in
    /// `storage`: those of `mutating` taking a `thread` object, or the
    /// `device` twins `twins`.
    fn mutating_members_for(
        &self,
        method: &Ident,
        storage: Storage,
        mutating: Vec<usize>,
        twins: Vec<usize>,
    ) -> Result<Vec<usize>> {
        Ok(match storage {
            Storage::Thread => mutating
                .into_iter()
                .filter(|&i| self.object_space(i) == Some(ast::AddressSpace::Thread))
                .collect(),
            Storage::Device => twins,
            // Those written for `threadgroup` objects; else, as for
            // `device` objects, the unqualified ones, whose `this` is then
            // passed as its path from the threadgroup variable
            // (`pass_argument`), so the helper writes that variable.
            Storage::Threadgroup => {
                let space = |s| {
                    mutating
                        .iter()
                        .copied()
                        .filter(|&i| self.object_space(i) == Some(s))
                        .collect::<Vec<_>>()
                };
                match space(ast::AddressSpace::Threadgroup) {
                    qualified if !qualified.is_empty() => qualified,
                    _ => space(ast::AddressSpace::Thread),
                }
            }
            Storage::Temporary => {
                return Err(Error::coded(
                    Code::Unsupported,
                    method.span,
                    "calling a non-const member function on a temporary is not supported yet",
                ))
            }
        })
    }

    /// The struct of `this` when lowering a member function or constructor.
    pub(in crate::lower) fn this_struct(&self, fx: &FnCtx) -> Option<StructId> {
        let ty = match fx.lookup("this")? {
            Local::Var { ty, .. } => ty,
            Local::Ref(p) => &p.ty,
            Local::Bytes(b) => &b.ty,
            // An object of a struct holding pointers, member by member.
            Local::Agg(a) if a.pointer.is_none() => &a.ty,
            _ => return None,
        };
        match ty {
            Type::Struct(id) => Some(*id),
            _ => None,
        }
    }

    /// `x` inside a member function, when `x` is a data member: `this.x`;
    /// `S::x` when it is a static one.
    pub(in crate::lower) fn implicit_member(
        &self,
        fx: &FnCtx,
        name: &str,
        span: Span,
    ) -> Option<Expr> {
        let id = self.this_struct(fx)?;
        let def = self.program.structs.get(id);
        let direct = def.members.iter().any(|m| m.name == name)
            || self.program.bit_field(id, name).is_some();
        // A static data member (`static constexpr constant float k = ..;`):
        // `S::k`, found in the class scope before any global `k`.
        let sname = self.program.struct_name(id);
        if !direct
            && matches!(
                self.program.symbols.get(&member_name(sname, name)),
                Some(Symbol::Constant(_))
            )
        {
            return Some(Expr {
                kind: ExprKind::Name(vec![sname.to_string(), name.to_string()]),
                span,
            });
        }
        // Or a member of an anonymous union or struct (`metal/unions.rs`).
        if !direct {
            self.anonymous_path(id, name)?;
        }
        Some(Expr {
            kind: ExprKind::Member(Box::new(this_expr(span)), ident(name, span), false),
            span,
        })
    }

    /// `m(args)` inside a member function, when `m` is a member function.
    pub(in crate::lower) fn implicit_member_call(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        args: &[Expr],
        callee_span: Span,
        span: Span,
    ) -> Result<Option<Value>> {
        // The struct of `this`, or, in a static member function (or an
        // instance of a static member function template), its owner's.
        let this = self.this_struct(fx);
        let owner = match (this, &fx.owner) {
            (Some(id), _) => self.program.struct_name(id).to_string(),
            (None, Some(owner)) => owner.clone(),
            (None, None) => return Ok(None),
        };
        let key = member_name(&owner, name);
        // A member function, or a member function template.
        let templates = !self.program.function_templates(&key).is_empty();
        if !self.program.symbols.contains_key(&key) && !templates {
            return Ok(None);
        }
        // Without an object only the static members can be called; the
        // overloads and templates compete as for `S::f(args)`.
        if this.is_none() && templates {
            return self
                .call_functions_and_templates(fx, &key, args, callee_span, span)
                .map(Some);
        }
        // A static member function takes no object.
        let list = self.user_functions(&key);
        if !list.is_empty() && list.iter().all(|&i| !self.has_object(i)) {
            return self
                .call_user(fx, &key, &list, Vec::new(), args, callee_span, span)
                .map(Some);
        }
        let object = self.lower_arg(fx, &this_expr(callee_span), false)?;
        if !self.is_object(fx, &object.value) {
            return Ok(None);
        }
        self.call_member(fx, object, &ident(name, callee_span), args, span)
            .map(Some)
    }

    /// Whether one of constructors `list` of `ty` takes a `ty` (by value or
    /// reference) as its only required argument: a user copy constructor.
    fn declares_copy(&self, list: &[usize], ty: &Type) -> bool {
        list.iter().any(|&i| {
            let f = self.program.functions[i];
            let required: Vec<_> = f.params.iter().filter(|p| p.default.is_none()).collect();
            let [p] = required.as_slice() else {
                return false;
            };
            match self.program.param_type(p) {
                Ok(Type::Pointer(pp)) => pp.is_reference && pp.pointee == *ty,
                Ok(t) => t == *ty,
                Err(_) => false,
            }
        })
    }

    /// `S(args)` when `S` declares constructors.
    pub(in crate::lower) fn call_constructor(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        let Type::Struct(id) = ty else {
            return Ok(None);
        };
        let sname = self.program.struct_name(*id).to_string();
        let key = member_name(&sname, &sname);
        let list = self.user_functions(&key);
        // Constructor templates compete with the plain constructors.
        let templates = self.program.function_templates(&key).to_vec();
        // `S(s)`: the implicitly declared copy constructor, which a
        // template never hides ([class.copy.ctor]/5: a template is never a
        // copy constructor) and which beats one as a non-template; the
        // built-in construction copies (`construct.rs`).
        if !templates.is_empty() && args.len() == 1 && !self.declares_copy(&list, ty) {
            // The argument is lowered once, for the copy or the call.
            let arg = self.lower_arg(fx, &args[0], false)?;
            if arg.ty == *ty {
                let (h, t) = self.load(fx, arg.value, arg.span)?;
                return Ok(Some(Value::Rv(h, t)));
            }
            return self
                .call_overloaded(
                    fx,
                    &sname,
                    &list,
                    &templates,
                    &[],
                    vec![arg],
                    &[] as &[Expr],
                    span,
                    span,
                )
                .map(Some);
        }
        if !templates.is_empty() {
            return self
                .call_overloaded(
                    fx,
                    &sname,
                    &list,
                    &templates,
                    &[],
                    Vec::new(),
                    args,
                    span,
                    span,
                )
                .map(Some);
        }
        if list.is_empty() {
            return Ok(None);
        }
        self.call_user(fx, &sname, &list, Vec::new(), args, span, span)
            .map(Some)
    }

    /// Struct object `value` (a value, or the object where it is, whose
    /// address space chooses among qualified members) converted to the
    /// non-struct type `to` by one of its conversion functions ([class.conv.fct]:
    /// `operator float() const`): the one returning `to` exactly, else the
    /// only one returning a scalar or vector type that converts to `to`
    /// (implicitly, unless `explicit`). `None` when `from` has none that
    /// applies. Conversion function templates (`template <typename U>
    /// operator U()`) are not considered.
    pub(in crate::lower) fn conversion_function(
        &mut self,
        fx: &mut FnCtx,
        value: &Value,
        to: &Type,
        explicit: bool,
        span: Span,
    ) -> Result<Option<(naga::Handle<naga::Expression>, Type)>> {
        let from = &crate::lower::ctx::value::arg_type(value);
        let (Type::Struct(id), false) = (from, matches!(to, Type::Struct(_))) else {
            return Ok(None);
        };
        if !matches!(value, Value::Rv(..) | Value::Place(_) | Value::Bytes(_)) {
            return Ok(None);
        }
        let prefix = member_name(self.program.struct_name(*id), "operator ");
        let mut candidates: Vec<(String, Type)> = Vec::new();
        for name in self.conversion_function_names(*id) {
            let Some(Symbol::Functions(list)) = self.program.symbols.get(name) else {
                continue;
            };
            let Some(&i) = list.first() else { continue };
            let f = self.program.functions[i];
            if !f.params.iter().skip(1).all(|p| p.default.is_some()) {
                continue;
            }
            if let Ok(ret) = self.program.resolve_type(&f.ret) {
                candidates.push((name[prefix.len() - "operator ".len()..].to_string(), ret));
            }
        }
        candidates.sort_by(|a, b| a.0.cmp(&b.0));
        let exact = candidates.iter().find(|(_, ret)| ret == to);
        let converting: Vec<_> = candidates
            .iter()
            .filter(|(_, ret)| match (ret, to) {
                (Type::Scalar(_), Type::Scalar(_) | Type::Vector(..)) => true,
                (Type::Vector(_, a), Type::Vector(_, b)) => explicit && a == b,
                _ => false,
            })
            .collect();
        let object = Arg {
            ty: from.clone(),
            value: value.clone(),
            span,
        };
        let converting = closest_conversions(converting, to);
        let (name, targs) = match (exact, converting.as_slice()) {
            (Some(c), _) => (c.0.clone(), Vec::new()),
            (None, [c]) => (c.0.clone(), Vec::new()),
            _ => match self.conversion_template(&prefix) {
                // `template <typename U, ..> operator U()`: `U` is `to`,
                // its constraints checked as the template is instantiated.
                Some(name) => (
                    name,
                    vec![ast::TemplateArg::Type(self.program.type_spec_of(to, span)?)],
                ),
                None => return Ok(None),
            },
        };
        let method = Ident { name, span };
        let v = self.call_member_explicit(fx, object, &method, &targs, &[] as &[Expr], span)?;
        let (h, ret) = self.load(fx, v, span)?;
        Ok(Some((
            self.convert(fx, h, &ret, to, explicit, span)?,
            to.clone(),
        )))
    }

    /// The name (`operator U`) of a conversion function template among the
    /// members named `prefix` (`S::operator `) whose type is its own first
    /// template parameter; `None` when there is none.
    fn conversion_template(&self, prefix: &str) -> Option<String> {
        let mut names: Vec<&String> = self
            .program
            .template_names
            .keys()
            .filter(|k| k.starts_with(prefix))
            .collect();
        names.sort();
        names.into_iter().find_map(|key| {
            let t = self.program.templates[*self.program.template_names[key].first()?];
            let f = crate::sema::templates::template_function(t);
            let first = t.params.first()?;
            (f.ret.path == [first.name.name.clone()] && f.ret.ptr_ops.is_empty())
                .then(|| key[prefix.len() - "operator ".len()..].to_string())
        })
    }

    /// The value `h` of type `from` converted to struct type `to` by one of
    /// its converting constructors ([class.conv.ctor]: not `explicit`,
    /// callable with one argument), as an implicit conversion does it
    /// (`return 1.0f;` in a function returning `complex_t<float>`, with
    /// `complex_t(T re)`), or, `explicit`, as a cast does (`static_cast<S>(x)`
    /// also calls `explicit` constructors); `None` when `to` has no such
    /// constructor.
    pub(in crate::lower) fn converting_construction(
        &mut self,
        fx: &mut FnCtx,
        (h, from): (naga::Handle<naga::Expression>, &Type),
        to: &Type,
        explicit: bool,
        span: Span,
    ) -> Result<Option<Value>> {
        let Type::Struct(id) = to else {
            return Ok(None);
        };
        let sname = self.program.struct_name(*id).to_string();
        let key = member_name(&sname, &sname);
        let one_argument = |f: &ast::FunctionDecl| {
            !f.params.is_empty()
                && f.params[1..].iter().all(|p| p.default.is_some())
                && f.params[0].default.is_none()
        };
        let list: Vec<usize> = self
            .user_functions(&key)
            .into_iter()
            .filter(|&i| {
                let f = self.program.functions[i];
                one_argument(f)
                    && (explicit || !f.attributes.iter().any(|a| a.name == EXPLICIT_CONSTRUCTOR))
            })
            .collect();
        if list.is_empty() {
            return Ok(None);
        }
        // The value stands for an argument expression already lowered.
        let args = [Expr {
            kind: ExprKind::Name(vec![String::new()]),
            span,
        }];
        fx.keep_lowered(&args[0], Value::Rv(h, from.clone()));
        let v = self.call_user(fx, &sname, &list, Vec::new(), &args, span, span);
        // Not left for an expression that may later have its address.
        let _ = fx.take_lowered(&args[0]);
        v.map(Some)
    }

    /// `S s;` when `S` declares a constructor without parameters: a call
    /// of it; `Ok(None)` when it declares none.
    pub(in crate::lower) fn default_constructor(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        span: Span,
    ) -> Result<Option<Value>> {
        let Type::Struct(id) = ty else {
            return Ok(None);
        };
        let sname = self.program.struct_name(*id).to_string();
        let list: Vec<usize> = self
            .user_functions(&member_name(&sname, &sname))
            .into_iter()
            .filter(|&i| self.program.functions[i].params.is_empty())
            .collect();
        if list.is_empty() {
            return Ok(None);
        }
        self.call_user::<Expr>(fx, &sname, &list, Vec::new(), &[], span, span)
            .map(Some)
    }

    /// `S{a, b}` when `S` declares constructors: a constructor call.
    pub(in crate::lower) fn brace_constructor(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        items: &[Init],
        span: Span,
    ) -> Result<Option<Value>> {
        let args: Option<Vec<Expr>> = items
            .iter()
            .map(|i| match i {
                Init::Expr(e) => Some(e.clone()),
                _ => None,
            })
            .collect();
        match args {
            Some(args) => self.call_constructor(fx, ty, &args, span),
            None => Ok(None),
        }
    }
}

/// Whether the address space written for an object (`const device`) is
/// the one the object is in.
/// Whether member function `f` returns a reference or a pointer (a place
/// of its object, `cxx/reference_calls.rs`).
pub(in crate::lower) fn returns_place(f: &ast::FunctionDecl) -> bool {
    !f.ret.ptr_ops.is_empty()
        || f.attributes
            .iter()
            .any(|a| a.name == crate::syntax::members::RETURNS_REFERENCE)
}

fn same_space(written: ast::AddressSpace, actual: AddressSpace) -> bool {
    matches!(
        (written, actual),
        (ast::AddressSpace::Device, AddressSpace::Device)
            | (ast::AddressSpace::Constant, AddressSpace::Constant)
            | (ast::AddressSpace::Thread, AddressSpace::Thread)
            | (ast::AddressSpace::Threadgroup, AddressSpace::Threadgroup)
    )
}

fn ident(name: &str, span: Span) -> Ident {
    Ident {
        name: name.to_string(),
        span,
    }
}

/// A pointer variable or parameter, which the built-in assignments handle.
fn is_pointer_name(fx: &FnCtx, e: &Expr) -> bool {
    let ExprKind::Name(path) = &e.kind else {
        return false;
    };
    path.last()
        .is_some_and(|n| matches!(fx.lookup(n), Some(Local::PtrVar { .. } | Local::Ptr(_))))
}

fn this_expr(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Name(vec!["this".into()]),
        span,
    }
}

impl Lowerer<'_, '_> {
    /// `a op b` (or `op a` when `operands` has one element) when an operand is
    /// a struct with an `operator op` overload: a member of the left operand's
    /// struct, else a free function. `Ok(None)` when no overload applies; the
    /// operands lowered to find that out are kept for the built-in operator,
    /// which takes them instead of lowering them again (see `cxx::args`).
    pub(in crate::lower) fn user_operator(
        &mut self,
        fx: &mut FnCtx,
        op: &str,
        operands: &[&Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        let name = format!("operator{op}");
        if !self.has_operator(&name) {
            return Ok(None);
        }
        fx.forget_lowered();
        let (first, rest) = operands.split_first().expect("an operand");
        let assigning = op.ends_with('=') && !matches!(op, "==" | "!=" | "<=" | ">=");
        // The built-in operator reads these its own way, and no overload
        // applies to them: `p == nullptr`, `p += n` on a pointer variable.
        if operands.iter().any(|e| is_null(e)) || (assigning && is_pointer_name(fx, first)) {
            return Ok(None);
        }
        let a = self.lower_arg(fx, first, false)?;
        if let Some((id, ..)) = self.object_info(fx, &a.value) {
            let key = member_name(self.program.struct_name(id), &name);
            let arity_ok = self
                .user_functions(&key)
                .iter()
                .any(|&i| self.program.functions[i].params.len() == operands.len());
            if arity_ok {
                return self
                    .call_member(fx, a, &ident(&name, span), rest, span)
                    .map(Some);
            }
        }
        let free = self.user_functions(&name);
        // Operator templates (`template <typename T> W<T> operator+(W<T>, W<T>)`)
        // compete with the plain overloads.
        let templates = self.program.function_templates(&name).to_vec();
        // The left operand is read before the right one is evaluated (as the
        // built-in operator reads it), unless it is assigned to or a
        // candidate takes it by reference.
        let by_value = free
            .iter()
            .all(|&i| self.takes_by_value(self.program.functions[i], 0));
        let a = if !assigning && by_value {
            self.settle(fx, a)?
        } else {
            a
        };
        let mut any_struct = self.is_object(fx, &a.value);
        let lists = rest.iter().any(|e| matches!(e.kind, ExprKind::InitList(_)));
        if (free.is_empty() && templates.is_empty()) || lists {
            fx.keep_lowered(first, a.value);
            return Ok(None);
        }
        if matches!(op, "&&" | "||") && !any_struct {
            // The built-in `&&` and `||` may not evaluate the right operand:
            // it is only typed (in a scratch block) to rule out an overload.
            for e in rest {
                any_struct |= matches!(self.type_of(fx, e)?, Type::Struct(_));
            }
            if !any_struct {
                fx.keep_lowered(first, a.value);
                return Ok(None);
            }
        }
        let mut args = vec![a];
        for e in rest {
            let arg = self.lower_arg(fx, e, false)?;
            any_struct |= self.is_object(fx, &arg.value);
            args.push(arg);
        }
        if !any_struct {
            for (e, arg) in operands.iter().zip(args) {
                fx.keep_lowered(e, arg.value);
            }
            return Ok(None);
        }
        if !templates.is_empty() {
            let resolved =
                self.resolve_overloaded(fx, &name, &free, &templates, &[], args, span, span)?;
            return match resolved {
                Resolution::Called(v) => Ok(Some(v)),
                Resolution::NoViable { args, notes, .. } => {
                    self.builtin_operator(fx, op, operands, args, notes, span)
                }
            };
        }
        // A struct converting to an arithmetic type that no plain overload
        // takes: the built-in operator ([over.match.oper]/3.3).
        let converts = args.iter().any(|a| self.converts_to_arithmetic(&a.value));
        if converts && !self.any_viable_plain(fx, &free, &args)? {
            return self.builtin_operator(fx, op, operands, args, Vec::new(), span);
        }
        self.call_user(fx, &name, &free, args, &[] as &[Expr], span, span)
            .map(Some)
    }

    /// `operands`, lowered to `args`, given to the built-in operator `op`
    /// when no overload takes them: each struct operand through its
    /// conversion function to an arithmetic type (see
    /// `cxx::conversion_operands`). When one has none, no operator
    /// applies, and the error lists why each overload (`notes`) did not.
    fn builtin_operator(
        &mut self,
        fx: &mut FnCtx,
        op: &str,
        operands: &[&Expr],
        args: Vec<Arg>,
        notes: Vec<String>,
        span: Span,
    ) -> Result<Option<Value>> {
        let structs = |a: &Arg| matches!(a.ty, Type::Struct(_));
        if args
            .iter()
            .all(|a| !structs(a) || self.converts_to_arithmetic(&a.value))
        {
            for (e, arg) in operands.iter().zip(args) {
                fx.keep_lowered(e, arg.value);
            }
            return Ok(None);
        }
        let types: Vec<String> = args.iter().map(|a| self.program.display(&a.ty)).collect();
        let message = match types.as_slice() {
            [a, b] => format!("no viable `operator{op}` for operands of type `{a}` and `{b}`"),
            _ => format!(
                "no viable `operator{op}` for an operand of type `{}`",
                types.join(", ")
            ),
        };
        Err(Error::coded(Code::NoMatchingOverload, span, message).with_notes(notes))
    }

    /// `decltype(operand)::member`: the static member `member` of the
    /// struct `operand` has (through a reference or pointer too).
    fn decltype_member(
        &mut self,
        fx: &mut FnCtx,
        operand: &Expr,
        member: &[String],
        span: Span,
    ) -> Result<Value> {
        let mut ty = self.type_of(fx, operand)?;
        if let Type::Pointer(p) = ty {
            ty = p.pointee;
        }
        let Type::Struct(id) = ty else {
            return Err(Error::coded(
                Code::UnknownMember,
                operand.span,
                format!(
                    "`decltype(..)` is `{}` here, which has no member `{}`",
                    self.program.display(&ty),
                    member.join("::")
                ),
            ));
        };
        let path = std::iter::once(self.program.struct_name(id).to_string())
            .chain(member.iter().cloned())
            .collect();
        let e = Expr {
            kind: ExprKind::Name(path),
            span,
        };
        self.expr(fx, &e)
    }

    /// `e` with each `decltype(x)::m` whose operand has a struct type
    /// spelled as that struct's member `S::m`, so that the constant
    /// evaluator, which knows no local's type, evaluates it
    /// (`constexpr short kRows = decltype(tile)::kRowsPerThread;`, which
    /// then sizes arrays).
    pub(in crate::lower) fn decltype_members_named(&mut self, fx: &mut FnCtx, e: &Expr) -> Expr {
        let mut e = e.clone();
        crate::syntax::from_pest::members::rewrite_expr(&mut e, &mut |x| {
            let ExprKind::Templated(path, args) = &x.kind else {
                return;
            };
            let (Some("decltype"), [ast::TemplateArg::Expr(operand)]) =
                (path.first().map(String::as_str), args.as_slice())
            else {
                return;
            };
            let ty = match self.type_of(fx, operand) {
                Ok(Type::Pointer(p)) => p.pointee,
                Ok(t) => t,
                Err(_) => return,
            };
            if let Type::Struct(id) = ty {
                let path = std::iter::once(self.program.struct_name(id).to_string())
                    .chain(path[1..].iter().cloned())
                    .collect();
                x.kind = ExprKind::Name(path);
            }
        });
        e
    }

    /// True if some struct or free function overloads `name` (`operator+`).
    pub(super) fn has_operator(&self, name: &str) -> bool {
        self.program.symbols.contains_key(name)
            || !self.program.function_templates(name).is_empty()
            || self
                .global
                .qualified_names
                .get_or_init(|| {
                    self.program
                        .symbols
                        .keys()
                        .filter(|k| k.contains("::"))
                        .filter_map(|k| {
                            k.strip_suffix(DEVICE_TWIN).unwrap_or(k).rsplit("::").next()
                        })
                        .map(str::to_string)
                        .collect()
                })
                .contains(name)
    }
}

impl Lowerer<'_, '_> {
    /// A templated name used as a value: `is_same_v<T, float>`,
    /// `Traits<float>::value` (see `sema::type_traits`).
    pub(in crate::lower) fn templated_value(&mut self, fx: &mut FnCtx, e: &Expr) -> Result<Value> {
        let ExprKind::Templated(path, args) = &e.kind else {
            unreachable!("a templated name")
        };
        if let (Some("decltype"), [ast::TemplateArg::Expr(operand)]) =
            (path.first().map(String::as_str), args.as_slice())
        {
            return self.decltype_member(fx, operand, &path[1..], e.span);
        }
        match self.program.templated_expr(path, args, e.span)? {
            Some(x) => self.expr(fx, &x),
            None => Err(Error::coded(
                Code::WrongKind,
                e.span,
                "expected a value, found a type",
            )),
        }
    }
}

/// Scratch lowering (typing an expression, IR discarded) may create result
/// expressions (`CallResult`, ...) whose defining statement was dropped with
/// the scratch block, which naga rejects; every computed expression of the
/// scratch range becomes an unused literal (nothing outside refers to them).
pub(in crate::lower) fn neutralize_results(fx: &mut FnCtx, start: usize) {
    // By handle range: skipping `start` items of the arena's iterator
    // walks them one by one, and scratch lowerings rewind often in long
    // functions (4 % of MLX's steel_gemm_masked.metal).
    for h in fx.function.expressions.range_from(start) {
        let e = fx.function.expressions.get_mut(h);
        if !e.needs_pre_emit() {
            *e = Expression::Literal(naga::Literal::Bool(false));
        }
    }
}

/// Of several conversion functions whose scalar results convert to `to`,
/// the ones whose results are closest to it: of its kind (floating or
/// integer), and for a `half` or `float`, Metal's standard floating types
/// before `bfloat` (MLX's fp8 types declare `operator bfloat16_t()` beside
/// `operator float()`; `half(x)` takes the `float`, as every value they
/// hold converts exactly either way). Others are left as they are.
fn closest_conversions<'c>(
    candidates: Vec<&'c (String, Type)>,
    to: &Type,
) -> Vec<&'c (String, Type)> {
    let Type::Scalar(target) = to else {
        return candidates;
    };
    let mut kept = candidates;
    let narrowed: Vec<_> = kept
        .iter()
        .copied()
        .filter(|(_, ret)| matches!(ret, Type::Scalar(s) if s.is_float() == target.is_float()))
        .collect();
    if !narrowed.is_empty() {
        kept = narrowed;
    }
    if kept.len() > 1 && *target != crate::types::Scalar::BFloat {
        let standard: Vec<_> = kept
            .iter()
            .copied()
            .filter(|(_, ret)| *ret != Type::Scalar(crate::types::Scalar::BFloat))
            .collect();
        if !standard.is_empty() {
            kept = standard;
        }
    }
    kept
}
