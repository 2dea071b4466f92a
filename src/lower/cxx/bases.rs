//! Derived-to-base conversions (C++ [conv.ptr]/3, [dcl.init.ref],
//! [over.best.ics]/6): a `D` object where a `B` is expected, `D` deriving
//! from `B`, is its `B` subobject: the base member that holds it
//! (`sema/inheritance.rs`), through every base in between. A base that the
//! empty-base optimisation gave no member has no state, so its subobject is
//! a value-initialised `B` (in a local of its own where a reference binds
//! it). Overload resolution ranks such a binding as a conversion.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Place, PtrRoot, PtrValue, Value};
use crate::lower::cxx::args::Arg;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{base_member_name, Expr, ExprKind, Ident};
use crate::types::{StructId, Type};
use naga::{Expression, Statement};

/// The struct a parameter of type `param` takes, by value, by reference or
/// by pointer.
pub(in crate::lower) fn parameter_struct(param: &Type) -> Option<StructId> {
    match param {
        Type::Struct(id) => Some(*id),
        Type::Pointer(p) => match p.pointee {
            Type::Struct(id) => Some(id),
            _ => None,
        },
        _ => None,
    }
}

impl Lowerer<'_, '_> {
    /// The base `to` of `from` when `from` is a struct deriving from it (and
    /// not `to` itself).
    pub(in crate::lower) fn proper_base(&self, from: &Type, to: StructId) -> Option<StructId> {
        match *from {
            Type::Struct(d) if d != to && self.program.derives_from(d, to) => Some(d),
            _ => None,
        }
    }

    /// The error for a use of member `name` of struct `sname` that two of
    /// its bases declare ([class.member.lookup]/6), if so: a member
    /// function, static member or alias ([`Program::ambiguous_members`]),
    /// or a data member.
    ///
    /// [`Program::ambiguous_members`]: crate::sema::Program::ambiguous_members
    pub(in crate::lower) fn ambiguous_member(
        &self,
        sname: &str,
        name: &str,
        span: Span,
    ) -> Option<Error> {
        let key = crate::syntax::members::member_name(sname, name);
        let (a, b) = match self.program.ambiguous_members.get(&key) {
            Some((a, b)) => (a.clone(), b.clone()),
            None => self.data_member_bases(sname, name)?,
        };
        Some(
            Error::coded(
                Code::AmbiguousName,
                span,
                format!("member `{name}` found in multiple base classes of `{sname}`"),
            )
            .note(format!("declared in base `{a}`"))
            .note(format!("and in base `{b}`")),
        )
    }

    /// Two direct bases of struct `sname` through which data member `name`
    /// is found, when there are two.
    fn data_member_bases(&self, sname: &str, name: &str) -> Option<(String, String)> {
        let Some(crate::sema::Symbol::Type(Type::Struct(id))) = self.program.symbols.get(sname)
        else {
            return None;
        };
        let def = self.program.structs.get(*id);
        if def.members.iter().any(|m| m.name == name) {
            return None;
        }
        let holders: Vec<String> = def
            .members
            .iter()
            .filter(|m| crate::syntax::ast::is_base_member(&m.name))
            .filter_map(|m| match m.ty {
                Type::Struct(b) => {
                    let found = self
                        .program
                        .structs
                        .get(b)
                        .members
                        .iter()
                        .any(|x| x.name == name)
                        || self.anonymous_path(b, name).is_some();
                    found.then(|| self.program.struct_name(b).to_string())
                }
                _ => None,
            })
            .collect();
        match holders.as_slice() {
            [a, b, ..] => Some((a.clone(), b.clone())),
            _ => None,
        }
    }

    /// A base initializer in a constructor's initializer list (`D(float x)
    /// : B(x), t(0) {}`), which the parser made `this.B = x` as it makes a
    /// member's: the base subobject is initialised from `B(x)` (`B{..}` for
    /// braces). `None` when `lhs` is not `this.B` for a base `B` that is
    /// not also a data member's name. An empty base has no member; its
    /// constructor still runs, for its effects.
    pub(in crate::lower) fn base_initializer(
        &mut self,
        fx: &mut FnCtx,
        op: Option<crate::syntax::ast::BinaryOp>,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
    ) -> Option<Result<Value>> {
        let ExprKind::Member(object, member, false) = &lhs.kind else {
            return None;
        };
        if op.is_some()
            || !matches!(&object.kind, ExprKind::Name(p) if p.len() == 1 && p[0] == "this")
        {
            return None;
        }
        let id = self.this_struct(fx)?;
        let def = self.program.structs.get(id);
        if def.members.iter().any(|m| m.name == member.name) {
            return None;
        }
        let (k, base) = def.bases.iter().enumerate().find(|(_, &b)| {
            crate::sema::inheritance::short_name(self.program.struct_name(b)) == member.name
        })?;
        let path = vec![self.program.struct_name(*base).to_string()];
        let value = Expr {
            kind: match &rhs.kind {
                ExprKind::InitList(items) => ExprKind::BraceConstruct(path, items.clone()),
                _ => ExprKind::Call(
                    Box::new(Expr {
                        kind: ExprKind::Name(path),
                        span: member.span,
                    }),
                    vec![rhs.clone()],
                ),
            },
            span: rhs.span,
        };
        let held = base_member_name(k);
        if !def.members.iter().any(|m| m.name == held) {
            return Some(self.expr(fx, &value).map(|_| Value::Void));
        }
        let target = Expr {
            kind: ExprKind::Member(
                object.clone(),
                Ident {
                    name: held,
                    span: member.span,
                },
                false,
            ),
            span: lhs.span,
        };
        Some(self.assign(fx, None, &target, &value, span))
    }

    /// The type an argument of type `arg` has when passed as a base of its
    /// struct to a parameter of type `param`: the base (for a value or a
    /// reference), or a pointer to it (for a pointer to a derived struct);
    /// `None` when no derived-to-base conversion applies.
    pub(in crate::lower) fn as_base_type(&self, param: &Type, arg: &Type) -> Option<Type> {
        let base = parameter_struct(param)?;
        match (param, arg) {
            (Type::Pointer(pp), Type::Pointer(ap)) if !pp.is_reference && !ap.is_reference => {
                self.proper_base(&ap.pointee, base)?;
                let mut p = (**ap).clone();
                p.pointee = Type::Struct(base);
                Some(Type::Pointer(Box::new(p)))
            }
            (_, Type::Pointer(_)) => None,
            _ => self.proper_base(arg, base).map(|_| Type::Struct(base)),
        }
    }

    /// `arg` passed to a parameter of type `pty`: its base subobject when
    /// the parameter takes a base of its struct (by value, by reference, or
    /// by pointer: a pointer to the subobject).
    pub(in crate::lower) fn base_argument(
        &mut self,
        fx: &mut FnCtx,
        pty: &Type,
        arg: Arg,
    ) -> Result<Arg> {
        let Some(ty) = self.as_base_type(pty, &arg.ty) else {
            return Ok(arg);
        };
        let to = parameter_struct(pty).expect("a struct parameter");
        let value = match arg.value {
            Value::Ptr(p) => self.base_pointer(fx, p, to, arg.span)?,
            value => {
                let Type::Struct(from) = arg.ty else {
                    return Ok(Arg { value, ..arg });
                };
                self.base_subobject(fx, value, from, to, arg.span)?
            }
        };
        Ok(Arg {
            value,
            ty,
            span: arg.span,
        })
    }

    /// Pointer `p` to a derived struct as a pointer to its base `to`
    /// ([conv.ptr]/3): a pointer to the base subobject. Only a pointer to
    /// one `thread` object converts: a buffer pointer steps by the derived
    /// struct's size, which no pointer to the base can.
    fn base_pointer(
        &mut self,
        fx: &mut FnCtx,
        p: PtrValue,
        to: StructId,
        span: Span,
    ) -> Result<Value> {
        let (PtrRoot::Place(ptr, false), Type::Struct(from)) = (&p.root, &p.pointee) else {
            return Err(Error::coded(
                Code::Unsupported,
                span,
                format!(
                    "converting a `{}` pointer to `{}` into a pointer to its base `{}` is not supported yet",
                    p.space.name(),
                    self.program.display(&p.pointee),
                    self.program.struct_name(to)
                ),
            )
            .note("pass the element by reference (`thread B&`, `device B&`) instead"));
        };
        let place = Value::Place(Place {
            ptr: *ptr,
            ty: p.pointee.clone(),
            writable: !p.is_const,
        });
        let Value::Place(sub) = self.base_subobject(fx, place, *from, to, span)? else {
            unreachable!("the subobject of a place is a place")
        };
        Ok(Value::Ptr(PtrValue {
            root: PtrRoot::Place(sub.ptr, false),
            pointee: Type::Struct(to),
            ..p
        }))
    }

    /// The `to` subobject of `object`, a `from` (deriving from `to`): a
    /// place stays a place, a value a value.
    pub(in crate::lower) fn base_subobject(
        &mut self,
        fx: &mut FnCtx,
        mut object: Value,
        from: StructId,
        to: StructId,
        span: Span,
    ) -> Result<Value> {
        let path = self
            .program
            .base_path(from, to)
            .expect("a base of the object's struct");
        let mut owner = from;
        for (base, member) in path {
            object = match member {
                Some(name) => self.struct_member(fx, object, owner, &name, span)?,
                None => self.empty_base(fx, &object, base, span)?,
            };
            owner = base;
        }
        Ok(object)
    }

    /// The subobject of an empty base `base` (which holds no state) of
    /// `object`: a value-initialised `base`, in a local of its own when
    /// `object` is a place (a reference may bind it).
    fn empty_base(
        &mut self,
        fx: &mut FnCtx,
        object: &Value,
        base: StructId,
        span: Span,
    ) -> Result<Value> {
        let ty = Type::Struct(base);
        let th = self.naga_type(&ty, span)?;
        let zero = fx.add(Expression::ZeroValue(th), span);
        if !matches!(object, Value::Place(_) | Value::Bytes(_)) {
            return Ok(Value::Rv(zero, ty));
        }
        let var = fx.local("empty_base", th, span);
        let ptr = fx.add(Expression::LocalVariable(var), span);
        fx.push(
            Statement::Store {
                pointer: ptr,
                value: zero,
            },
            span,
        );
        Ok(Value::Place(Place {
            ptr,
            ty,
            writable: true,
        }))
    }
}
