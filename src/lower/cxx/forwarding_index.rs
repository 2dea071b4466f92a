//! `operator[]` that forwards to an array member: Tint's `tint_array`
//! (`device T& operator[](size_t i) device { return elements[i]; }`, one
//! overload per address space) and SPIRV-Cross's `spvUnsafeArray`.
//!
//! C++: such an operator returns a reference to `elements[i]` of the object.
//! WGSL has no functions returning references; the call is lowered as the
//! place `object.elements[i]` itself, which is what every overload returns,
//! so the object keeps its address space and `&a[i]`, `a[i] = v` work on
//! buffers, threadgroup and thread memory alike.
//!
//! Any other non-const `T& operator[](I i) { return PLACE; }` whose body is
//! that one `return` (`data[i & 3u]`, `rows[i / 4u][i % 4u]`,
//! `this->v[n - 1u - i]`) is inlined the same way: the index is evaluated
//! once, as the argument would be, and `PLACE` is lowered with the
//! parameter bound to it and the members (and `this`) bound to the
//! object's, so `s[i] = x` writes the object. A body naming anything of the
//! caller's, or calling member functions, stays a call (a value).

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Local;
use crate::lower::ctx::value::Value;
use crate::lower::{Lowerer, Result};
use crate::sema::callgraph;
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind, FunctionDecl, StmtKind, UnaryOp};
use crate::syntax::members::{DEVICE_TWIN, RETURNS_REFERENCE};
use crate::types::Type;

/// The element type of array member `m` of the struct `object` holds.
fn element_type(l: &Lowerer<'_, '_>, object: &Value, m: &str) -> Option<Type> {
    let ty = match object {
        Value::Place(p) => &p.ty,
        Value::Bytes(b) => &b.ty,
        _ => return None,
    };
    let Type::Struct(id) = ty else { return None };
    let member = l
        .program
        .structs
        .get(*id)
        .members
        .iter()
        .find(|x| x.name == m)?;
    match &member.ty {
        Type::Array(e, _) => Some((**e).clone()),
        _ => None,
    }
}

impl Lowerer<'_, '_> {
    /// `object[index]` when every candidate `operator[]` in `fns` is
    /// `T& operator[](I i) { return m[i]; }` for one array member `m` and
    /// `object` is a place; `None` otherwise (a real call then).
    pub(in crate::lower) fn forwarding_index(
        &mut self,
        fx: &mut FnCtx,
        object: &Value,
        fns: &[usize],
        index: &Expr,
        span: Span,
    ) -> Result<Option<Value>> {
        if !matches!(object, Value::Place(_) | Value::Bytes(_)) || fns.is_empty() {
            return Ok(None);
        }
        let mut member: Option<&str> = None;
        for &i in fns {
            let Some(f) = self.program.functions.get(i) else {
                return Ok(None);
            };
            let Some(param) = f.params.last().and_then(|p| p.name.as_ref()) else {
                return Ok(None);
            };
            // The return type as declared (instantiation keeps `T`, not `T&`):
            // the array's element type, so the place reads as the call would.
            let Ok(ret) = self.program.resolve_type(&f.ret) else {
                return Ok(None);
            };
            let ret = match ret {
                crate::types::Type::Pointer(p) => p.pointee,
                t => t,
            };
            let forwarded = f.body.as_ref().is_some_and(|b| match b.stmts.as_slice() {
                [s] => match &s.kind {
                    StmtKind::Return(Some(e)) => match &e.kind {
                        ExprKind::Index(b, ix) => match (&b.kind, &ix.kind) {
                            (ExprKind::Name(m), ExprKind::Name(p))
                                if m.len() == 1 && p.len() == 1 && p[0] == param.name =>
                            {
                                element_type(self, object, &m[0]).is_some_and(|e| e == ret)
                                    && member.is_none_or(|x| x == m[0])
                                    && {
                                        member = Some(&m[0]);
                                        true
                                    }
                            }
                            _ => false,
                        },
                        _ => false,
                    },
                    _ => false,
                },
                _ => false,
            });
            if !forwarded {
                return Ok(None);
            }
        }
        let Some(m) = member else { return Ok(None) };
        let m = m.to_string();
        let elements = self.member(fx, object.clone(), &m, span)?;
        self.subscript_value(fx, elements, span, index, span)
            .map(Some)
    }
}

/// The returned expression of `f` when `f` is a member function returning
/// a non-const reference whose body is `return e;`.
fn returned_place(f: &FunctionDecl) -> Option<Expr> {
    let reference = f.attributes.iter().any(|a| a.name == RETURNS_REFERENCE);
    if !reference || f.ret.is_const {
        return None;
    }
    match f.body.as_ref()?.stmts.as_slice() {
        [s] => match &s.kind {
            StmtKind::Return(Some(e)) => Some(e.clone()),
            _ => None,
        },
        _ => None,
    }
}

impl Lowerer<'_, '_> {
    /// `object[index]` for a struct whose one non-const `operator[]` among
    /// `fns` returns a reference to a place of the object (see the module
    /// documentation): that place; `None` when it does not apply.
    pub(in crate::lower) fn inlined_index(
        &mut self,
        fx: &mut FnCtx,
        object: &Value,
        fns: &[usize],
        index: &Expr,
        span: Span,
    ) -> Result<Option<Value>> {
        let writable = match object {
            Value::Place(p) => p.writable,
            Value::Bytes(b) => b.writable,
            _ => false,
        };
        let Type::Struct(id) = crate::lower::ctx::value::arg_type(object) else {
            return Ok(None);
        };
        let returning: Vec<(usize, Expr)> = fns
            .iter()
            .filter_map(|&i| {
                let f = self.program.functions.get(i)?;
                Some((i, returned_place(f)?))
            })
            .collect();
        // A non-const member and its `device` twin have one body; with
        // overloads, overload resolution decides (a call).
        let twin = |i: usize| self.program.functions[i].name.name.ends_with(DEVICE_TWIN);
        let plain = fns.iter().filter(|&&i| !twin(i)).count();
        let twins = fns.len() - plain;
        if plain > 1 || (plain == 0 && twins > 1) {
            return Ok(None);
        }
        let Some((i, place)) = returning.iter().find(|(i, _)| plain == 0 || !twin(*i)) else {
            return Ok(None);
        };
        let f = self.program.functions[*i];
        let [this, param_decl] = f.params.as_slice() else {
            return Ok(None);
        };
        let (Some(this), Some(param)) = (&this.name, &param_decl.name) else {
            return Ok(None);
        };
        if !writable || !self.place_only_of(fx, place, id, &param.name) {
            return Ok(None);
        }
        let pty = self.program.resolve_type(&param_decl.ty)?;
        if matches!(pty, Type::Pointer(_)) {
            return Ok(None);
        }
        let v = self.expr(fx, index)?;
        let (h, t) = self.load(fx, v, index.span)?;
        let argument = self.convert(fx, h, &t, &pty, false, index.span)?;
        let members = self.program.structs.get(id).members.clone();
        let Some(object_local) = value_local(object.clone()) else {
            return Ok(None);
        };
        let mut bound = vec![
            (param.name.clone(), Local::Value(argument, pty)),
            (this.name.clone(), object_local),
        ];
        for m in &members {
            let v = self.member(fx, object.clone(), &m.name, span)?;
            let Some(local) = value_local(v) else {
                return Ok(None);
            };
            bound.push((m.name.clone(), local));
        }
        fx.open();
        for (name, local) in bound {
            fx.declare(&name, local);
        }
        let value = self.expr(fx, place);
        let block = fx.close();
        fx.splice(block);
        let value = value?;
        Ok(matches!(value, Value::Place(_) | Value::Bytes(_)).then_some(value))
    }

    /// True if the names `e` uses are the parameter `param`, `this`, data
    /// members of struct `id`, or program-scope names the caller does not
    /// hide, and `e` calls no member function of the struct.
    fn place_only_of(&self, fx: &FnCtx, e: &Expr, id: crate::types::StructId, param: &str) -> bool {
        let sname = self.program.struct_name(id).to_string();
        let members = &self.program.structs.get(id).members;
        let mut ok = true;
        callgraph::visit_expr(e, &mut |e| match &e.kind {
            ExprKind::Name(path) if path.len() == 1 => {
                let name = &path[0];
                let own =
                    name == param || name == "this" || members.iter().any(|m| &m.name == name);
                let member_fn = self
                    .program
                    .symbols
                    .contains_key(&crate::syntax::members::member_name(&sname, name));
                ok &= (own || fx.lookup(name).is_none()) && !member_fn;
            }
            // Side effects on the parameter would need its variable.
            ExprKind::Assign(..)
            | ExprKind::Call(..)
            | ExprKind::PostIncDec(..)
            | ExprKind::Unary(UnaryOp::PreInc | UnaryOp::PreDec, _) => ok = false,
            _ => {}
        });
        ok
    }
}

/// A value bound to a name: its place (or word-view place), else the value;
/// `None` for what no name can stand for.
fn value_local(v: Value) -> Option<Local> {
    Some(match v {
        Value::Place(p) => Local::Ref(p),
        Value::Bytes(b) => Local::Bytes(b),
        Value::Rv(h, t) => Local::Value(h, t),
        Value::Ptr(p) => Local::Ptr(p),
        Value::Agg(a) => Local::Agg(a),
        _ => return None,
    })
}
