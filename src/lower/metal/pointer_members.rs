//! Structs with pointer, reference, texture or sampler members.
//!
//! Metal: a struct in `thread` memory may hold pointers and references into
//! any address space, textures and samplers (MSL §2.11; Tint gathers every
//! module-scope variable of a WGSL shader into such a struct,
//! `tint_module_vars_struct { device S* u; threadgroup float* w; ... }`,
//! builds it in the entry point and passes it by value to helpers).
//!
//! WGSL: pointers are not storable (no struct or array holds one), a
//! function takes `ptr<function|private|workgroup, T>` parameters only, and
//! textures and samplers are handles outside structs.
//!
//! Mapping: such a struct is no WGSL value; it is a translation-time
//! aggregate of places ([`Aggregate`]): each pointer member is a
//! [`PtrValue`] (which global, which element index), a reference member the
//! place it binds, a texture or sampler member its handle. A member access
//! yields that value, so `(*s.p).x` reaches the global directly. Passing
//! the struct to a helper passes each member as its own argument would be
//! (buffer pointers as `u32` element indices, `thread` pointers as
//! `ptr<function, T>`, pointers into other globals as their access path
//! with dynamic indices as `u32`s: [`ArgKey::GlobalPath`]), and the helper
//! is specialised per member ([`ArgKey::Aggregate`]). What needs the struct
//! as a value (a buffer of it, a load, a return, an assignment after the
//! declaration, a choice at run time) is error E0407.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{arg_type, Arg};
use crate::lower::ctx::value::{Aggregate, Local, Place, PtrRoot, PtrValue, Value};
use crate::lower::{ArgKey, Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{ExprKind, Init};
use crate::types::{AddressSpace, Type};
use naga::{Expression, Handle};

impl Lowerer<'_, '_> {
    /// True if `ty` is a struct with a pointer, reference, texture or
    /// sampler member (directly or in a member struct).
    pub(in crate::lower) fn is_place_struct(&self, ty: &Type) -> bool {
        let Type::Struct(id) = ty else {
            return false;
        };
        self.program
            .structs
            .get(*id)
            .members
            .iter()
            .any(|m| match &m.ty {
                Type::Pointer(_) | Type::Texture(_) | Type::Sampler { .. } => true,
                t @ Type::Struct(_) => self.is_place_struct(t),
                t => self.is_resource_array(t),
            })
    }

    /// The struct of places `pty` is, or refers or points to.
    pub(in crate::lower) fn place_struct_target(&self, pty: &Type) -> Option<Type> {
        match pty {
            Type::Pointer(pp) if self.is_place_struct(&pp.pointee) => Some(pp.pointee.clone()),
            t if self.is_place_struct(t) => Some(t.clone()),
            _ => None,
        }
    }

    /// The array of textures, samplers or pointers `pty` is or refers to
    /// (`constant array<texture2d<float>, 4>& ts`).
    fn resource_array_target(&self, pty: &Type) -> Option<Type> {
        match pty {
            Type::Pointer(pp) if pp.is_reference && self.is_resource_array(&pp.pointee) => {
                Some(pp.pointee.clone())
            }
            t if self.is_resource_array(t) => Some(t.clone()),
            _ => None,
        }
    }

    /// Passes an array of resources (an aggregate of array type) element by
    /// element.
    fn pass_resource_array(
        &mut self,
        fx: &mut FnCtx,
        array: &Type,
        a: Arg,
    ) -> Result<(ArgKey, Vec<Handle<Expression>>)> {
        let Type::Array(elem, _) = array else {
            unreachable!("an array of resources is an array")
        };
        let agg = self.same_aggregate(a.value, array, a.span)?;
        let mut keys = Vec::new();
        let mut args = Vec::new();
        for v in agg.members {
            let arg = Arg {
                ty: arg_type(&v),
                value: v,
                span: a.span,
            };
            let (k, hs) = self.pass_argument(fx, elem, arg)?;
            keys.push(k);
            args.extend(hs);
        }
        Ok((ArgKey::Aggregate(keys), args))
    }

    /// A helper's parameter for an array of resources passed element by
    /// element: one parameter per element, named `NAME_k`.
    fn resource_array_parameter(
        &mut self,
        fx: &mut FnCtx,
        pname: &str,
        array: &Type,
        keys: &[ArgKey],
        span: Span,
    ) -> Result<Local> {
        let Type::Array(elem, _) = array else {
            unreachable!("an array of resources is an array")
        };
        let mut values = Vec::new();
        for (k, key) in keys.iter().enumerate() {
            let name = format!("{pname}_{k}");
            let local = match key {
                ArgKey::Aggregate(_) | ArgKey::GlobalPath(..) => {
                    self.place_parameter(fx, &name, elem, key, span)?
                }
                _ => {
                    let first = fx.function.arguments.len();
                    let local = self.parameter(fx, None, elem, key, span)?;
                    for arg in &mut fx.function.arguments[first..] {
                        arg.name = Some(name.clone());
                    }
                    local
                }
            };
            values.push(self.local_value(fx, local, span));
        }
        Ok(Local::Agg(Aggregate {
            ty: array.clone(),
            members: values,
            pointer: None,
            owned: false,
        }))
    }

    /// `a[index]` of an aggregate: an element of an array of resources, or
    /// the struct an argument-buffer pointer points to (`args[0]`; any
    /// other index would be another argument buffer, whose resources no
    /// binding holds).
    pub(in crate::lower) fn aggregate_subscript(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        index: &crate::syntax::ast::Expr,
        span: Span,
    ) -> Result<Value> {
        let Value::Agg(a) = &v else {
            unreachable!("an aggregate")
        };
        if matches!(a.ty, Type::Array(..)) {
            return self.resource_array_element(fx, a, index, span);
        }
        let zero = crate::sema::consteval::eval(self.program, index)
            .ok()
            .and_then(|v| v.as_int())
            == Some(0);
        if !zero {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                span,
                format!(
                    "a buffer of argument buffers `{}` indexed past the first: WGSL and WebGPU have no binding arrays",
                    self.program.display(&a.ty)
                ),
            )
            .note("each argument buffer's textures, samplers and pointers are bindings of their own, known at translation time; only the first one, `p[0]` or `*p`, can be read"));
        }
        self.deref(fx, v, span)
    }

    /// Element `index` of an array of resources: WebGPU has no binding
    /// arrays, so each element is a binding of its own; an index not known
    /// at translation time is chosen by a `switch` around the use
    /// (`resource_choice.rs`).
    pub(in crate::lower) fn resource_array_element(
        &self,
        fx: &mut FnCtx,
        a: &Aggregate,
        index: &crate::syntax::ast::Expr,
        span: Span,
    ) -> Result<Value> {
        let value = crate::sema::consteval::eval(self.program, index)
            .ok()
            .and_then(|v| v.as_int());
        let Some(i) = value else {
            return self.chosen_element(fx, a, index);
        };
        match usize::try_from(i).ok().and_then(|i| a.members.get(i)) {
            Some(v) => Ok(v.clone()),
            None => Err(Error::coded(
                Code::IndexOutOfBounds,
                span,
                format!(
                    "index {i} is past the end of an array of {} elements",
                    a.members.len()
                ),
            )),
        }
    }

    /// The error for a struct of places used as a WGSL value.
    pub(in crate::lower) fn place_struct_value_error(&self, ty: &Type, span: Span) -> Error {
        Error::coded(
            Code::PointerMember,
            span,
            format!(
                "`{}` holds pointers, references, textures or samplers, and is not a WGSL value",
                self.program.display(ty)
            ),
        )
        .note("such a struct can be built, read member by member and passed to functions; it cannot be stored, loaded, returned or assigned")
    }

    /// `S{...}`, `S s = {...}`: the members of a struct of places.
    pub(in crate::lower) fn place_aggregate(
        &mut self,
        fx: &mut FnCtx,
        items: &[Init],
        ty: &Type,
        span: Span,
    ) -> Result<Value> {
        let Type::Struct(id) = ty else {
            unreachable!("a struct of places is a struct")
        };
        let members = self.program.structs.get(*id).members.clone();
        let slots = crate::sema::consteval::list_slots(self.program, items, ty, members.len())?;
        let mut values = Vec::new();
        for (m, slot) in members.iter().zip(slots) {
            let v = match slot {
                Some(item) => self.member_init(fx, item, &m.ty)?,
                None if matches!(
                    m.ty,
                    Type::Pointer(_) | Type::Texture(_) | Type::Sampler { .. }
                ) || self.is_place_struct(&m.ty) =>
                {
                    return Err(Error::coded(
                        Code::PointerMember,
                        span,
                        format!(
                            "member `{}` of `{}` is left uninitialised: its target must be known at translation time",
                            m.name,
                            self.program.display(ty)
                        ),
                    ));
                }
                None => {
                    let h = self.naga_type(&m.ty, span)?;
                    Value::Rv(fx.add(Expression::ZeroValue(h), span), m.ty.clone())
                }
            };
            values.push(v);
        }
        Ok(Value::Agg(Aggregate {
            ty: ty.clone(),
            members: values,
            pointer: None,
            owned: false,
        }))
    }

    /// The value of one member of a struct of places, from its initializer.
    fn member_init(&mut self, fx: &mut FnCtx, item: &Init, mty: &Type) -> Result<Value> {
        if self.is_place_struct(mty) {
            return match item {
                Init::List(items, span) => self.place_aggregate(fx, items, mty, *span),
                Init::Expr(e) => match &e.kind {
                    ExprKind::InitList(items) => self.place_aggregate(fx, items, mty, e.span),
                    _ => {
                        let v = self.expr(fx, e)?;
                        self.same_aggregate(v, mty, e.span).map(Value::Agg)
                    }
                },
                _ => Err(self.place_struct_value_error(mty, item.span())),
            };
        }
        // An array of textures or samplers (Tint's module-variable struct
        // holding a binding array): the aggregate it is initialised from.
        if let (true, Init::Expr(e)) = (self.is_resource_array(mty), item) {
            if !matches!(e.kind, ExprKind::InitList(_)) {
                let v = self.expr(fx, e)?;
                return self.same_aggregate(v, mty, e.span).map(Value::Agg);
            }
        }
        match mty {
            Type::Pointer(pp) => {
                let Init::Expr(e) = item else {
                    return Err(Error::coded(
                        Code::InvalidInitializer,
                        item.span(),
                        "a pointer or reference member is initialized with one expression",
                    ));
                };
                // A reference to a pointer binds the pointer variable's
                // cell, not the pointer it holds now.
                let cell = is_pointer_reference(mty)
                    .then(|| self.pointer_variable_cell(fx, e))
                    .flatten();
                let v = match cell {
                    Some(a) => a.value,
                    None => self.expr(fx, e)?,
                };
                self.bind_member(fx, v, pp, e.span)
            }
            Type::Texture(_) | Type::Sampler { .. } => {
                let Init::Expr(e) = item else {
                    return Err(Error::coded(
                        Code::InvalidInitializer,
                        item.span(),
                        "a texture or sampler member is initialized with a texture or sampler",
                    ));
                };
                let (h, t) = self.rvalue(fx, e)?;
                Ok(Value::Rv(h, t))
            }
            _ => {
                let (h, t) = self.init_value(fx, item, mty)?;
                Ok(Value::Rv(h, t))
            }
        }
    }

    /// `v` as the value of a member of pointer type `pp`: a pointer keeps
    /// its root and index and takes the member's type; a reference binds
    /// the place.
    pub(in crate::lower) fn bind_member(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        pp: &crate::types::Pointer,
        span: Span,
    ) -> Result<Value> {
        let mismatch = |l: &Self, what: &str| {
            Error::coded(
                Code::TypeMismatch,
                span,
                format!(
                    "cannot initialize a member of type `{}` with {what}",
                    l.program.display(&Type::Pointer(Box::new(pp.clone())))
                ),
            )
        };
        if pp.is_reference {
            return match v {
                // A local object of a struct of places (a closure's capture
                // by reference): the same members, so that the referent's
                // member functions move the object's own pointers.
                Value::Agg(a) if a.ty == pp.pointee && (a.owned || pp.is_const) => {
                    Ok(Value::Agg(a))
                }
                // A reference to a pointer variable or pointer member: its
                // cell (`metal/pointer_addresses.rs`).
                Value::Cell(c)
                    if !c.addressed
                        && c.count.is_none()
                        && matches!(&pp.pointee, Type::Pointer(q) if q.pointee.unpacked() == c.ty.pointee.unpacked() && (q.is_const || !c.ty.is_const)) =>
                {
                    Ok(Value::Cell(c))
                }
                Value::Place(p) if p.ty.unpacked() == pp.pointee.unpacked() => {
                    Ok(Value::Place(Place {
                        writable: p.writable && !pp.is_const,
                        ..p
                    }))
                }
                Value::Bytes(mut b) if b.ty.unpacked() == pp.pointee.unpacked() => {
                    b.writable &= !pp.is_const;
                    Ok(Value::Bytes(b))
                }
                _ => Err(mismatch(self, "this expression")),
            };
        }
        // An array decays to a pointer to its first element.
        if let Some(ptr) = match &v {
            Value::Bytes(b) => self.decayed_bytes_array(b, &pp.pointee),
            _ => None,
        } {
            return Ok(Value::Ptr(PtrValue {
                space: pp.space,
                is_const: pp.is_const || ptr.is_const,
                ..ptr
            }));
        }
        if let Value::Place(p) = &v {
            if let Type::Array(elem, _) = &p.ty {
                if **elem == pp.pointee {
                    let zero = self.u32_lit(fx, 0, span);
                    return Ok(Value::Ptr(PtrValue {
                        root: PtrRoot::Place(p.ptr, true),
                        index: zero,
                        pointee: pp.pointee.clone(),
                        space: pp.space,
                        is_const: pp.is_const || !p.writable,
                    }));
                }
            }
        }
        match v {
            Value::Ptr(p) if p.pointee == pp.pointee || pp.pointee == Type::Void => Ok(Value::Ptr(PtrValue {
                space: pp.space,
                is_const: p.is_const || pp.is_const,
                ..p
            })),
            Value::Ptr(p) => Err(mismatch(
                self,
                &format!("a pointer to `{}`", self.program.display(&p.pointee)),
            )),
            _ => Err(mismatch(self, "a value that is not a pointer known at translation time")
                .note("WGSL stores no pointers: a pointer member must be the address of a variable, a buffer argument or a pointer")),
        }
    }

    /// `v` as an aggregate of type `ty`, or an error.
    pub(in crate::lower) fn same_aggregate(
        &self,
        v: Value,
        ty: &Type,
        span: Span,
    ) -> Result<Aggregate> {
        match v {
            Value::Agg(a) if a.ty == *ty => Ok(a),
            Value::Agg(a) => Err(Error::coded(
                Code::TypeMismatch,
                span,
                format!(
                    "cannot initialize `{}` with `{}`",
                    self.program.display(ty),
                    self.program.display(&a.ty)
                ),
            )),
            _ => Err(Error::coded(
                Code::PointerMember,
                span,
                format!(
                    "a `{}` must be initialized with a braced list or another `{}` known at translation time",
                    self.program.display(ty),
                    self.program.display(ty)
                ),
            )),
        }
    }

    /// A local array of pointers, `device SSBO* ssbos[] = { a, b };`
    /// (SPIRV-Cross's descriptor arrays): an aggregate of its elements,
    /// each a pointer known at translation time, read with constant
    /// indices and passed element by element like an argument buffer's
    /// array of pointers.
    pub(in crate::lower) fn pointer_array_local(
        &mut self,
        fx: &mut FnCtx,
        decl: &crate::syntax::ast::Declarator,
        ty: &Type,
    ) -> Result<Local> {
        if let (Type::Array(elem, n), None) = (ty, &decl.init) {
            if let Type::Pointer(pp) = &**elem {
                if !pp.is_reference {
                    return self.pointer_array_cell(fx, &decl.name.name, pp, *n, decl.span);
                }
            }
        }
        let (Type::Array(elem, n), Some(init)) = (ty, &decl.init) else {
            return Err(Error::coded(
                Code::PointerMember,
                decl.name.span,
                format!(
                    "`{}` of type `{}` must be initialized: its pointers must be known at translation time",
                    decl.name.name,
                    self.program.display(ty)
                ),
            ));
        };
        let Type::Pointer(pp) = &**elem else {
            unreachable!("an array of pointers")
        };
        let items = match init {
            Init::List(items, _) => items.as_slice(),
            Init::Expr(e) => match &e.kind {
                ExprKind::InitList(items) => items.as_slice(),
                _ => {
                    let v = self.expr(fx, e)?;
                    return Ok(Local::Agg(self.same_aggregate(v, ty, e.span)?));
                }
            },
            Init::Paren(..) | Init::Designated(..) => {
                return Err(self.place_struct_value_error(ty, init.span()))
            }
        };
        if items.len() != *n as usize {
            return Err(Error::coded(
                Code::PointerMember,
                init.span(),
                format!(
                    "`{}` has {n} pointers and {} initializers: each pointer must be known at translation time",
                    decl.name.name,
                    items.len()
                ),
            ));
        }
        let mut members = Vec::new();
        for item in items {
            let Init::Expr(e) = item else {
                return Err(Error::coded(
                    Code::InvalidInitializer,
                    item.span(),
                    "a pointer is initialized with one expression",
                ));
            };
            let v = self.expr(fx, e)?;
            members.push(self.bind_member(fx, v, pp, e.span)?);
        }
        Ok(Local::Agg(Aggregate {
            ty: ty.clone(),
            members,
            pointer: None,
            owned: false,
        }))
    }

    /// `s = t;` for a struct of places `s`: `s` names `t`'s members from here
    /// on, when `s` is declared in the innermost block (the assignment then
    /// runs exactly when the code after it does); elsewhere E0407.
    pub(in crate::lower) fn assign_aggregate(
        &mut self,
        fx: &mut FnCtx,
        op: Option<crate::syntax::ast::BinaryOp>,
        lhs: &crate::syntax::ast::Expr,
        rhs: &crate::syntax::ast::Expr,
    ) -> Option<Result<Value>> {
        let ExprKind::Name(path) = &lhs.kind else {
            return None;
        };
        let name = path.last()?;
        let Some(Local::Agg(old)) = fx.lookup(name).cloned() else {
            return None;
        };
        Some((|| {
            if op.is_some() {
                return Err(self.place_struct_value_error(&old.ty, lhs.span));
            }
            let v = match &rhs.kind {
                ExprKind::InitList(items) => self.place_aggregate(fx, items, &old.ty, rhs.span)?,
                _ => self.expr(fx, rhs)?,
            };
            let new = self.same_aggregate(v, &old.ty, rhs.span)?;
            // An object of its own storage is assigned member by member.
            if old.owned {
                self.store_aggregate(fx, &old, &new, lhs.span)?;
                return Ok(Value::Agg(old));
            }
            if !fx.rebind_innermost(name, Local::Agg(new.clone())) {
                return Err(Error::coded(
                    Code::PointerMember,
                    lhs.span,
                    format!(
                        "`{name}` of type `{}` is assigned in a nested block: which pointers its members hold would depend on the path taken at run time",
                        self.program.display(&old.ty)
                    ),
                )
                .note("WGSL stores no pointers; assign it in the block that declares it, or declare a new variable"));
            }
            Ok(Value::Agg(new))
        })())
    }

    /// Member `name` of an aggregate.
    pub(in crate::lower) fn aggregate_member(
        &mut self,
        fx: &mut FnCtx,
        a: &Aggregate,
        name: &str,
        span: Span,
    ) -> Result<Value> {
        let Type::Struct(id) = a.ty else {
            unreachable!("a struct of places is a struct")
        };
        let def = self.program.structs.get(id);
        match def.members.iter().position(|m| m.name == name) {
            Some(i) => self.member_read(fx, a.members[i].clone(), span),
            None => Err(Error::coded(
                Code::UnknownMember,
                span,
                format!("no member named `{name}` in `{}`", def.name),
            )),
        }
    }

    /// A `threadgroup` array passed for a `threadgroup T*` parameter
    /// decays to a pointer to its first element (C++ [conv.array]), as
    /// MLX's kernels pass their threadgroup scratch (`run(.., tgp_memory)`);
    /// anything else is returned as it is.
    fn decayed_threadgroup_array(&mut self, fx: &mut FnCtx, pty: &Type, a: Arg) -> Arg {
        if let (Type::Pointer(pp), Value::Bytes(b)) = (pty, &a.value) {
            let decayed = (!pp.is_reference && decays_for(pp.space))
                .then(|| self.decayed_bytes_array(b, &pp.pointee))
                .flatten();
            if let Some(ptr) = decayed {
                let value = Value::Ptr(PtrValue {
                    is_const: pp.is_const || ptr.is_const,
                    ..ptr
                });
                return Arg {
                    ty: arg_type(&value),
                    value,
                    span: a.span,
                };
            }
        }
        let (Type::Pointer(pp), Value::Place(p)) = (pty, &a.value) else {
            return a;
        };
        let decays = !pp.is_reference
            && decays_for(pp.space)
            && matches!(&p.ty, Type::Array(e, _) if e.unpacked() == pp.pointee.unpacked());
        if !decays {
            return a;
        }
        let Value::Ptr(ptr) = self.decayed_array(fx, a.value.clone(), a.span) else {
            return a;
        };
        let value = Value::Ptr(PtrValue {
            is_const: pp.is_const || ptr.is_const,
            ..ptr
        });
        Arg {
            ty: arg_type(&value),
            value,
            span: a.span,
        }
    }

    /// An array of `pointee`s held as words (`metal/pointer_views.rs`) as
    /// the pointer to its first element it decays to; `None` for anything
    /// else.
    pub(in crate::lower) fn decayed_bytes_array(
        &self,
        b: &crate::lower::ctx::value::BytePlace,
        pointee: &Type,
    ) -> Option<PtrValue> {
        let Type::Array(elem, _) = &b.ty else {
            return None;
        };
        (elem.unpacked() == pointee.unpacked()).then(|| PtrValue {
            root: PtrRoot::Bytes(b.global),
            index: b.offset,
            pointee: (**elem).clone(),
            space: self.buffer_space(b.global),
            is_const: !b.writable,
        })
    }

    /// An array place in one of the address spaces `spaces` as the
    /// pointer to its first element it decays to (C++ [conv.array]): a
    /// `threadgroup` array, an array in a buffer, a `thread` array (a
    /// local array or a member of a local object). `None` for any other
    /// place.
    pub(in crate::lower) fn decayed_place(
        &mut self,
        fx: &mut FnCtx,
        p: &Place,
        spaces: &[AddressSpace],
        span: Span,
    ) -> Option<PtrValue> {
        let Type::Array(elem, _) = &p.ty else {
            return None;
        };
        let space = self.place_space(fx, p.ptr);
        if !spaces.contains(&space) {
            return None;
        }
        let index = self.u32_lit(fx, 0, span);
        Some(PtrValue {
            root: PtrRoot::Place(p.ptr, true),
            index,
            pointee: (**elem).clone(),
            space,
            is_const: !p.writable,
        })
    }

    /// A whole local array (`vals` in `vals + 1`) as the `thread` pointer
    /// to its first element it decays to; `None` for any other place (a
    /// part of a variable cannot be passed on to a function, see
    /// `functions.rs`).
    pub(in crate::lower) fn decayed_local_array(
        &mut self,
        fx: &mut FnCtx,
        p: &Place,
        span: Span,
    ) -> Option<PtrValue> {
        let Type::Array(elem, _) = &p.ty else {
            return None;
        };
        if !matches!(fx.expr(p.ptr), Expression::LocalVariable(_)) {
            return None;
        }
        let index = self.u32_lit(fx, 0, span);
        Some(PtrValue {
            root: PtrRoot::Place(p.ptr, true),
            index,
            pointee: (**elem).clone(),
            space: AddressSpace::Thread,
            is_const: !p.writable,
        })
    }

    /// How argument `a` is passed to a parameter of type `pty`: a struct of
    /// places member by member, a pointer into a non-buffer global as its
    /// path, anything else as [`Self::argument`] passes it.
    pub(in crate::lower) fn pass_argument(
        &mut self,
        fx: &mut FnCtx,
        pty: &Type,
        a: Arg,
    ) -> Result<(ArgKey, Vec<Handle<Expression>>)> {
        let mut a = self.base_argument(fx, pty, a)?;
        if is_pointer_reference(pty) {
            return self.pass_pointer_reference(fx, pty, a);
        }
        // A pointer variable given as its cell for another candidate's
        // `T*&` (`cxx/args.rs`): here, the pointer it holds.
        if let Value::Cell(c) = &a.value {
            if !c.addressed
                && c.count.is_none()
                && !matches!(pty, Type::Pointer(pp) if pp.is_reference)
            {
                let c = c.clone();
                a.value = self.read_cell(fx, &c, a.span)?;
            }
        }
        if let Value::Cell(c) = &a.value {
            if c.addressed {
                return self.pass_pointer_address(fx, pty, c.clone(), a.span);
            }
            if c.count.is_some() && matches!(pty, Type::Array(..)) {
                let (c, span) = (c.clone(), a.span);
                return self.pass_member(fx, pty, Value::Cell(c), true, span);
            }
        }
        let a = self.decayed_threadgroup_array(fx, pty, a);
        if let Some(array) = self.resource_array_target(pty) {
            return self.pass_resource_array(fx, &array, a);
        }
        if let Some(target) = self.place_struct_target(pty) {
            let agg = self.same_aggregate(a.value, &target, a.span)?;
            let Type::Struct(id) = target else {
                unreachable!()
            };
            let members = self.program.structs.get(id).members.clone();
            // A non-const `thread S&` (the object of a non-const member
            // function): what the callee may change is passed by reference.
            let by_ref = matches!(pty, Type::Pointer(pp) if pp.space == AddressSpace::Thread && !pp.is_const);
            let mut keys = Vec::new();
            let mut args = Vec::new();
            for (m, v) in members.iter().zip(agg.members) {
                let (k, hs) = self.pass_member(fx, &m.ty, v, by_ref, a.span)?;
                keys.push(k);
                args.extend(hs);
            }
            return Ok((ArgKey::Aggregate(keys), args));
        }
        if let Type::Pointer(pp) = pty {
            let path_of = match (&a.value, pp.is_reference) {
                (
                    Value::Ptr(PtrValue {
                        root: PtrRoot::Place(base, array),
                        index,
                        ..
                    }),
                    false,
                ) => Some((*base, array.then_some(*index))),
                (Value::Place(p), true) if pp.space != AddressSpace::Thread => Some((p.ptr, None)),
                // A threadgroup object's unqualified non-const member
                // (`members.rs`; overload resolution binds no other `thread`
                // reference to threadgroup memory): `this` is its place in
                // the variable.
                (Value::Place(p), true)
                    if self.place_space(fx, p.ptr) == AddressSpace::Threadgroup =>
                {
                    Some((p.ptr, None))
                }
                _ => None,
            };
            if let Some((ptr, element)) = path_of {
                if let Some((g, path, mut dynamic)) = self.global_path(fx, ptr, a.span) {
                    dynamic.extend(element);
                    return Ok((ArgKey::GlobalPath(g, path, element.is_some()), dynamic));
                }
            }
            // A reference to threadgroup memory held as words
            // (`pointer_views.rs`): the byte offset, as for a buffer.
            if let (Value::Bytes(b), AddressSpace::Threadgroup, true) =
                (&a.value, pp.space, pp.is_reference)
            {
                if b.writable || pp.is_const {
                    return Ok((ArgKey::Buffer(b.global), vec![b.offset]));
                }
            }
            if let (Value::Ptr(p), AddressSpace::Threadgroup, false) =
                (&a.value, pp.space, pp.is_reference)
            {
                match p.root {
                    PtrRoot::Buffer(g) | PtrRoot::Bytes(g) => {
                        return Ok((ArgKey::Buffer(g), vec![p.index]))
                    }
                    PtrRoot::Global(g) => return Ok((ArgKey::Global(g), Vec::new())),
                    _ => {}
                }
            }
        }
        if let Type::Pointer(pp) = pty {
            if let Some(passed) = self.thread_array_argument(fx, pp, &a) {
                return Ok(passed);
            }
            if let Some(passed) = self.thread_view_argument(fx, pp, &a) {
                return Ok(passed);
            }
        }
        let (k, h) = self.argument(fx, pty, a)?;
        Ok((k, h.into_iter().collect()))
    }

    /// The access path of pointer expression `ptr` from a global, with its
    /// dynamic indices as `u32`s; `None` unless it starts at a global.
    fn global_path(
        &mut self,
        fx: &mut FnCtx,
        ptr: Handle<Expression>,
        span: Span,
    ) -> Option<GlobalPath> {
        let mut path = Vec::new();
        let mut dynamic = Vec::new();
        let mut cur = ptr;
        loop {
            match *fx.expr(cur) {
                Expression::GlobalVariable(g) => {
                    path.reverse();
                    dynamic.reverse();
                    return Some((g, path, dynamic));
                }
                Expression::AccessIndex { base, index } => {
                    path.push(Some(index));
                    cur = base;
                }
                Expression::Access { base, index } => {
                    path.push(None);
                    dynamic.push(self.index_u32(fx, index, span));
                    cur = base;
                }
                _ => return None,
            }
        }
    }

    /// A helper's parameter `pname` for struct of places `id` (`pty`: the
    /// struct, or a pointer or reference to it) passed member by member
    /// (`keys`): one parameter per member's value, named `pname_member`.
    fn aggregate_parameter(
        &mut self,
        fx: &mut FnCtx,
        pname: &str,
        pty: &Type,
        id: crate::types::StructId,
        keys: &[ArgKey],
        span: Span,
    ) -> Result<Local> {
        let members = self.program.structs.get(id).members.clone();
        let mut values = Vec::new();
        for (m, k) in members.iter().zip(keys) {
            let first = fx.function.arguments.len();
            let mname = format!("{pname}_{}", m.name);
            let local = match k {
                ArgKey::Aggregate(_) | ArgKey::GlobalPath(..) => {
                    self.place_parameter(fx, &mname, &m.ty, k, span)?
                }
                ArgKey::Cell(inner) => {
                    let cell = self.cell_parameter(fx, &mname, &m.ty, &m.name, inner, span)?;
                    values.push(Value::Cell(cell));
                    continue;
                }
                // A variable of the caller's object, by reference.
                ArgKey::Thread if !matches!(m.ty, Type::Pointer(_)) => self.parameter(
                    fx,
                    None,
                    &super::pointer_objects::thread_reference(&m.ty),
                    k,
                    span,
                )?,
                _ => self.parameter(fx, None, &m.ty, k, span)?,
            };
            let added = fx.function.arguments.len() - first;
            for (j, arg) in fx.function.arguments[first..].iter_mut().enumerate() {
                if arg
                    .name
                    .as_deref()
                    .is_none_or(|n| n.starts_with("_unnamed"))
                {
                    arg.name = Some(if added == 1 {
                        mname.clone()
                    } else {
                        format!("{mname}_{j}")
                    });
                }
            }
            values.push(self.local_value(fx, local, span));
        }
        let pointer = match pty {
            Type::Pointer(pp) if !pp.is_reference => Some(pp.clone()),
            _ => None,
        };
        // Its own storage where the caller's pointer members are passed in
        // their cells; a reference to a pointer (a closure's capture) is a
        // cell too, but the copy of an object copies no referent.
        let owned = members
            .iter()
            .zip(keys)
            .any(|(m, k)| matches!(k, ArgKey::Cell(_)) && !is_pointer_reference(&m.ty));
        Ok(Local::Agg(Aggregate {
            ty: Type::Struct(id),
            members: values,
            pointer,
            owned,
        }))
    }

    /// A helper's parameter for an [`ArgKey::Aggregate`] or
    /// [`ArgKey::GlobalPath`] key.
    pub(in crate::lower) fn place_parameter(
        &mut self,
        fx: &mut FnCtx,
        pname: &str,
        pty: &Type,
        key: &ArgKey,
        span: Span,
    ) -> Result<Local> {
        if let (ArgKey::Aggregate(keys), Some(array)) = (key, self.resource_array_target(pty)) {
            return self.resource_array_parameter(fx, pname, &array, keys, span);
        }
        match (key, self.place_struct_target(pty)) {
            (ArgKey::Aggregate(keys), Some(Type::Struct(id))) => {
                self.aggregate_parameter(fx, pname, pty, id, keys, span)
            }
            (ArgKey::GlobalPath(g, path, array), _) => {
                let Type::Pointer(pp) = pty else {
                    unreachable!("a global path is passed to a pointer or reference")
                };
                let mut ptr = fx.add(Expression::GlobalVariable(*g), span);
                let u32_ty = self.naga_type(&Type::UINT, span)?;
                for (j, step) in path.iter().enumerate() {
                    ptr = match step {
                        Some(index) => fx.add(
                            Expression::AccessIndex {
                                base: ptr,
                                index: *index,
                            },
                            span,
                        ),
                        None => {
                            let arg_index = fx.function.arguments.len() as u32;
                            fx.function.arguments.push(naga::FunctionArgument {
                                name: Some(format!("{pname}_index{j}")),
                                ty: u32_ty,
                                binding: None,
                            });
                            let index = fx.add(Expression::FunctionArgument(arg_index), span);
                            fx.add(Expression::Access { base: ptr, index }, span)
                        }
                    };
                }
                if pp.is_reference {
                    Ok(Local::Ref(Place {
                        ptr,
                        ty: pp.pointee.clone(),
                        writable: !pp.is_const,
                    }))
                } else {
                    let index = if *array {
                        let arg_index = fx.function.arguments.len() as u32;
                        fx.function.arguments.push(naga::FunctionArgument {
                            name: Some(format!("{pname}_element")),
                            ty: u32_ty,
                            binding: None,
                        });
                        fx.add(Expression::FunctionArgument(arg_index), span)
                    } else {
                        self.u32_lit(fx, 0, span)
                    };
                    Ok(Local::Ptr(PtrValue {
                        root: PtrRoot::Place(ptr, *array),
                        index,
                        pointee: pp.pointee.clone(),
                        space: pp.space,
                        is_const: pp.is_const,
                    }))
                }
            }
            _ => Err(Error::coded(
                Code::Unsupported,
                span,
                "unsupported parameter",
            )),
        }
    }
}

/// A pointer's access path from a global: the global, each step's constant
/// index (`None` where the index is dynamic), and the dynamic indices as
/// `u32`s in order.
type GlobalPath = (
    Handle<naga::GlobalVariable>,
    Vec<Option<u32>>,
    Vec<Handle<Expression>>,
);

/// Whether an array argument decays for a pointer parameter in `space`:
/// threadgroup and buffer arrays do here; whole local arrays decay for
/// `thread` pointer parameters where `functions.rs` passes them.
fn decays_for(space: AddressSpace) -> bool {
    matches!(
        space,
        AddressSpace::Threadgroup | AddressSpace::Device | AddressSpace::Constant
    )
}

/// `T*&`: a reference to a pointer (`metal/pointer_addresses.rs`).
pub(in crate::lower) fn is_pointer_reference(ty: &Type) -> bool {
    matches!(ty, Type::Pointer(pp) if pp.is_reference && matches!(pp.pointee, Type::Pointer(_)))
}
