//! Member functions, constructors and operator overloads of user structs.
//!
//! The parser turned each of them into a free function (see
//! `syntax::build::members`): member `m` of `S` is `S::m(this, args...)`, a
//! non-const one also has a `device S&` twin `S::m@device`, and constructors
//! are `S::S(args...)`. Here calls find those functions and pass the object
//! as the first argument, so the usual helper specialisation applies.

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Local, Value};
use crate::lower::{Error, Lowerer, Result};
use crate::sema::Symbol;
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind, Ident, Init, PtrOp};
use crate::syntax::members::{member_name, DEVICE_TWIN};
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
    fn user_functions(&self, name: &str) -> Vec<usize> {
        match self.program.symbols.get(name) {
            Some(Symbol::Functions(list)) => list.clone(),
            _ => Vec::new(),
        }
    }

    /// The struct and storage of `object`, typed in a scratch block whose IR
    /// is discarded; `None` when it is not a struct.
    fn object_info(
        &mut self,
        fx: &mut FnCtx,
        object: &Expr,
    ) -> Result<Option<(StructId, Storage, bool)>> {
        let start = fx.function.expressions.len();
        fx.open();
        let v = self.expr(fx, object);
        let info = match &v {
            Ok(Value::Place(p)) => match p.ty {
                Type::Struct(id) => Some((id, self.place_storage(fx, p.ptr), p.writable)),
                _ => None,
            },
            Ok(Value::Bytes(b)) => match b.ty {
                Type::Struct(id) => Some((id, Storage::Device, b.writable)),
                _ => None,
            },
            Ok(Value::Rv(_, Type::Struct(id))) => Some((*id, Storage::Temporary, true)),
            _ => None,
        };
        drop(fx.close());
        neutralize_results(fx, start);
        v.map(|_| info)
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
        let Some((id, ..)) = self.object_info(fx, object)? else {
            return Ok(None);
        };
        let key = member_name(self.program.struct_name(id), "operator()");
        if self.user_functions(&key).is_empty() {
            return Ok(None);
        }
        self.call_member(fx, object, &ident("operator()", object.span), args, span)
    }

    /// `object[index]` when `object` is a struct with an `operator[]`
    /// member; `Ok(None)` otherwise (cheaply, without typing `object`, when
    /// no struct declares one).
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
        let Some((id, ..)) = self.object_info(fx, object)? else {
            return Ok(None);
        };
        let key = member_name(self.program.struct_name(id), "operator[]");
        if self.user_functions(&key).is_empty() {
            return Ok(None);
        }
        let args = [index.clone()];
        self.call_member(fx, object, &ident("operator[]", object.span), &args, span)
    }

    /// True if user function `i` takes its object by reference (non-const).
    fn mutates_object(&self, i: usize) -> bool {
        self.program.functions[i]
            .params
            .first()
            .is_some_and(|p| p.ty.ptr_ops.contains(&PtrOp::Reference))
    }

    /// `object.method(args)`; `Ok(None)` when `object` is not a struct.
    pub(in crate::lower) fn call_member(
        &mut self,
        fx: &mut FnCtx,
        object: &Expr,
        method: &Ident,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        let Some((id, storage, writable)) = self.object_info(fx, object)? else {
            return Ok(None);
        };
        let sname = self.program.struct_name(id).to_string();
        let key = member_name(&sname, &method.name);
        let all = self.user_functions(&key);
        if all.is_empty() {
            return Err(Error::new(
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
            return Err(Error::new(span, format!("no matching member function for call to `{}`: it takes {takes} argument(s), {} given", method.name, args.len())).with_code(crate::diagnostics::Code::NoMatchingOverload));
        }
        let (consts, mutating): (Vec<usize>, Vec<usize>) =
            arity.into_iter().partition(|&i| !self.mutates_object(i));
        let mut candidates = consts;
        if !mutating.is_empty() && candidates.is_empty() {
            if !writable {
                return Err(Error::new(method.span, format!("cannot call non-const member function `{}` on a const object of type `{sname}`", method.name))
                    .note("declare the member function `const` if it does not modify the object"));
            }
            candidates = match storage {
                Storage::Thread => mutating,
                Storage::Device => self.user_functions(&format!("{key}{DEVICE_TWIN}")),
                Storage::Threadgroup => return Err(Error::new(method.span, "calling a non-const member function on a threadgroup object is not supported yet").with_code(crate::diagnostics::Code::Unsupported)),
                Storage::Temporary => return Err(Error::new(method.span, "calling a non-const member function on a temporary is not supported yet").with_code(crate::diagnostics::Code::Unsupported)),
            };
            candidates.retain(|&i| self.program.functions[i].params.len() == args.len() + 1);
        }
        let mut full = Vec::with_capacity(args.len() + 1);
        full.push(object.clone());
        full.extend_from_slice(args);
        self.call_user(fx, &method.name, &candidates, &full, method.span, span)
            .map(Some)
    }

    /// The struct of `this` when lowering a member function or constructor.
    pub(in crate::lower) fn this_struct(&self, fx: &FnCtx) -> Option<StructId> {
        let ty = match fx.lookup("this")? {
            Local::Var { ty, .. } => ty,
            Local::Ref(p) => &p.ty,
            Local::Bytes(b) => &b.ty,
            _ => return None,
        };
        match ty {
            Type::Struct(id) => Some(*id),
            _ => None,
        }
    }

    /// `x` inside a member function, when `x` is a data member: `this.x`.
    pub(in crate::lower) fn implicit_member(
        &self,
        fx: &FnCtx,
        name: &str,
        span: Span,
    ) -> Option<Expr> {
        let id = self.this_struct(fx)?;
        let def = self.program.structs.get(id);
        def.members.iter().find(|m| m.name == name)?;
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
        let Some(id) = self.this_struct(fx) else {
            return Ok(None);
        };
        let key = member_name(self.program.struct_name(id), name);
        if !self.program.symbols.contains_key(&key) {
            return Ok(None);
        }
        // A static member function takes no object.
        let list = self.user_functions(&key);
        if !list.is_empty() && list.iter().all(|&i| !self.has_object(i)) {
            return self
                .call_user(fx, &key, &list, args, callee_span, span)
                .map(Some);
        }
        self.call_member(
            fx,
            &this_expr(callee_span),
            &ident(name, callee_span),
            args,
            span,
        )
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
        let list = self.user_functions(&member_name(&sname, &sname));
        if list.is_empty() {
            return Ok(None);
        }
        self.call_user(fx, &sname, &list, args, span, span)
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

fn ident(name: &str, span: Span) -> Ident {
    Ident {
        name: name.to_string(),
        span,
    }
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
    /// struct, else a free function. `Ok(None)` when no overload applies.
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
        let (first, rest) = operands.split_first().expect("an operand");
        let rest: Vec<Expr> = rest.iter().map(|e| (*e).clone()).collect();
        if let Some((id, ..)) = self.object_info(fx, first)? {
            let key = member_name(self.program.struct_name(id), &name);
            let arity_ok = self
                .user_functions(&key)
                .iter()
                .any(|&i| self.program.functions[i].params.len() == operands.len());
            if arity_ok {
                return self.call_member(fx, first, &ident(&name, span), &rest, span);
            }
        }
        let free = self.user_functions(&name);
        if free.is_empty() {
            return Ok(None);
        }
        let mut any_struct = false;
        for e in operands {
            any_struct |= self.object_info(fx, e)?.is_some();
        }
        if !any_struct {
            return Ok(None);
        }
        let args: Vec<Expr> = operands.iter().map(|e| (*e).clone()).collect();
        self.call_user(fx, &name, &free, &args, span, span)
            .map(Some)
    }

    /// True if some struct or free function overloads `name` (`operator+`).
    fn has_operator(&self, name: &str) -> bool {
        self.program.symbols.contains_key(name)
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
        match self.program.templated_expr(path, args, e.span)? {
            Some(x) => self.expr(fx, &x),
            None => Err(Error::new(e.span, "expected a value, found a type")),
        }
    }
}

/// Scratch lowering (typing an expression, IR discarded) may create result
/// expressions (`CallResult`, ...) whose defining statement was dropped with
/// the scratch block, which naga rejects; every computed expression of the
/// scratch range becomes an unused literal (nothing outside refers to them).
pub(in crate::lower) fn neutralize_results(fx: &mut FnCtx, start: usize) {
    for (_, e) in fx.function.expressions.iter_mut().skip(start) {
        if !e.needs_pre_emit() {
            *e = Expression::Literal(naga::Literal::Bool(false));
        }
    }
}
