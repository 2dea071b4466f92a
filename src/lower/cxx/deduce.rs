//! `auto` and `decltype` in local declarations (C++ [dcl.spec.auto],
//! [dcl.type.decltype]): the declared type is written out from the type of
//! the initializer (or of `decltype`'s operand), typed in a scratch block
//! whose IR is discarded, and the declaration proceeds as if written so.
//!
//! - `auto x = e;` takes `e`'s type without references and `const`;
//! - `const auto x = e;` is the same type, `const`;
//! - `auto& r = place;` / `const auto& r = place;` refer to the place, in its
//!   address space (`device`, `threadgroup` or `thread`); `const auto&` of a
//!   temporary is a `const` copy, which reads the same;
//! - `auto p = buf + 4;` is a pointer into the same address space;
//! - `decltype(e) x` is `e`'s type without references.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval::ConstValue;
use crate::source_map::Span;
use crate::syntax::ast::{self, Expr, ExprKind, Init, PtrOp, TemplateArg, TypeSpec, VarDecl};
use crate::syntax::from_pest::paths::PathUse;
use crate::types::{AddressSpace, Type};
use std::collections::HashMap;

/// The type of an expression and, for a place, the address space it is in.
pub(in crate::lower) struct Typed {
    pub(in crate::lower) ty: Type,
    /// `Some` for an lvalue.
    space: Option<AddressSpace>,
    /// An lvalue that may be written (not `const`, not in `constant`
    /// memory), or an object of a struct of places whose members are its
    /// own storage; `false` for any other value.
    pub(in crate::lower) writable: bool,
}

impl Typed {
    /// Whether the expression is an lvalue.
    pub(in crate::lower) fn is_place(&self) -> bool {
        self.space.is_some()
    }

    /// The same value as a `thread` lvalue: a local object of a struct of
    /// places, which a reference binds member by member
    /// (`bind_member`, `metal/pointer_members.rs`).
    pub(in crate::lower) fn in_thread(self) -> Self {
        Typed {
            space: Some(AddressSpace::Thread),
            ..self
        }
    }
}

impl Lowerer<'_, '_> {
    /// `d` with its `auto` or `decltype(e)` type written out; `None` when
    /// its type is written already.
    pub(in crate::lower) fn deduced_declaration(
        &mut self,
        fx: &mut FnCtx,
        d: &VarDecl,
    ) -> Result<Option<VarDecl>> {
        let ty = &d.ty;
        let is_auto = ty.path.len() == 1 && ty.path[0] == "auto" && ty.args.is_empty();
        if !is_auto && !is_decltype(ty) {
            // `S<remove_addrspace_t<decltype(x)>> s;`: written out inside.
            if !ty.args.iter().any(holds_decltype) {
                return Ok(None);
            }
            let mut out = d.clone();
            out.ty.args = self.written_template_args(fx, &ty.args)?;
            return Ok(Some(out));
        }
        let source = match (is_auto, &ty.args.first()) {
            (false, Some(TemplateArg::Expr(e))) => e.clone(),
            _ => auto_initializer(d)?,
        };
        let typed = self.typed(fx, &source)?;
        let mut out = d.clone();
        out.ty = self.written_type(ty, &typed, source.span)?;
        if is_auto {
            // `auto a = 1, b = 2.0f;` deduces each; C++ requires one type.
            for decl in d.declarators.iter().skip(1) {
                let Some(e) = declarator_expr(decl) else {
                    continue;
                };
                let other = self.typed(fx, &e)?;
                if other.ty != typed.ty {
                    return Err(Error::coded(
                        Code::InvalidInitializer,
                        e.span,
                        format!(
                            "`auto` deduced as `{}` here but as `{}` in the first declarator",
                            self.program.display(&other.ty),
                            self.program.display(&typed.ty)
                        ),
                    ));
                }
            }
        }
        Ok(Some(out))
    }

    /// The type of `e` (a pointer's type for a pointer), typed in a scratch
    /// block whose IR is discarded.
    pub(in crate::lower) fn type_of(&mut self, fx: &mut FnCtx, e: &Expr) -> Result<Type> {
        Ok(self.typed(fx, e)?.ty)
    }

    /// The type of `e`, typed in a scratch block.
    pub(in crate::lower) fn typed(&mut self, fx: &mut FnCtx, e: &Expr) -> Result<Typed> {
        // `declval<T>()` and what is called on it: never evaluated.
        if let Some(ty) = self.program.unevaluated_type(e) {
            return Ok(Typed {
                ty,
                space: None,
                writable: false,
            });
        }
        let start = fx.function.expressions.len();
        fx.open();
        let v = self.expr(fx, e);
        let typed = v.map(|v| match v {
            Value::Place(p) => Typed {
                ty: p.ty,
                space: Some(self.place_space(fx, p.ptr)),
                writable: p.writable,
            },
            Value::Bytes(b) => Typed {
                ty: b.ty.unpacked(),
                space: Some(AddressSpace::Device),
                writable: b.writable,
            },
            Value::Ptr(p) => Typed {
                ty: Type::Pointer(Box::new(crate::types::Pointer {
                    space: p.space,
                    pointee: p.pointee,
                    is_const: p.is_const,
                    is_reference: false,
                })),
                space: None,
                writable: false,
            },
            Value::Rv(_, ty) => Typed {
                ty,
                space: None,
                writable: false,
            },
            Value::BitField(b) => Typed {
                ty: Type::Scalar(b.field.scalar),
                space: None,
                writable: false,
            },
            Value::WordPart(p) => Typed {
                ty: p.pointee.unpacked(),
                space: None,
                writable: false,
            },
            Value::Swizzle(p, c) => Typed {
                ty: Type::vector(p.ty.element_scalar().unwrap(), c.len() as u8),
                space: None,
                writable: false,
            },
            Value::BytesSwizzle(b, c) => Typed {
                ty: Type::vector(b.ty.element_scalar().unwrap(), c.len() as u8),
                space: None,
                writable: false,
            },
            Value::Void => Typed {
                ty: Type::Void,
                space: None,
                writable: false,
            },
            // No place a reference binds (`metal/pointer_members.rs`);
            // writable when its members are its own storage (a local
            // object, `metal/pointer_objects.rs`), which a lambda may
            // capture by reference.
            Value::Agg(a) => Typed {
                ty: a.ty,
                space: None,
                writable: a.owned,
            },
            Value::Cell(c) => Typed {
                ty: c.value_type(),
                space: None,
                writable: false,
            },
            Value::Null(p) => Typed {
                ty: crate::lower::ctx::value::arg_type(&Value::Null(p)),
                space: None,
                writable: false,
            },
        });
        drop(fx.close());
        crate::lower::cxx::members::neutralize_results(fx, start);
        typed
    }

    /// The declaration's written type with `auto` replaced by `typed`.
    pub(in crate::lower) fn written_type(
        &self,
        pattern: &TypeSpec,
        typed: &Typed,
        span: Span,
    ) -> Result<TypeSpec> {
        if typed.ty == Type::Void {
            return Err(Error::coded(
                Code::WrongKind,
                span,
                "cannot deduce a variable's type from a `void` expression",
            ));
        }
        let wants_ref = pattern.ptr_ops.contains(&PtrOp::Reference);
        let (value, space, ptr_ops) = match &typed.ty {
            // `auto p = buf + 1;` / `auto* p = &x;`: a pointer.
            Type::Pointer(p) => {
                let mut ts = self.program.type_spec_of(&p.pointee, span)?;
                ts.is_const = p.is_const;
                (
                    ts,
                    Some(p.space),
                    vec![PtrOp::Pointer {
                        is_const: false,
                        space: None,
                    }],
                )
            }
            ty if wants_ref => {
                let ts = self.program.type_spec_of(ty, span)?;
                match typed.space {
                    Some(space) => (ts, Some(space), vec![PtrOp::Reference]),
                    // `const auto& x = a + b;` binds to a temporary: a copy.
                    None if pattern.is_const => (ts, None, Vec::new()),
                    None => {
                        return Err(Error::coded(
                            Code::NotAssignable,
                            span,
                            "a non-const reference (`auto&`) cannot bind to a temporary",
                        ))
                    }
                }
            }
            ty => (self.program.type_spec_of(ty, span)?, None, Vec::new()),
        };
        Ok(TypeSpec {
            is_const: pattern.is_const || value.is_const,
            is_constexpr: pattern.is_constexpr,
            // `constant auto& u = *(constant U*)p;`: a written space stays
            // (a word view's bytes type as `device`, whatever their space).
            space: pattern
                .space
                .or_else(|| space.map(|s| (ast_space(s), pattern.span))),
            ptr_ops,
            name_span: pattern.name_span,
            span: pattern.span,
            ..value
        })
    }
}

impl Lowerer<'_, '_> {
    /// Template arguments with each `decltype(e)` replaced by `e`'s type
    /// (`f<decltype(x)>(..)`, where `x` may be a local).
    pub(in crate::lower) fn written_template_args(
        &mut self,
        fx: &mut FnCtx,
        args: &[TemplateArg],
    ) -> Result<Vec<TemplateArg>> {
        let mut out = Vec::with_capacity(args.len());
        for a in args {
            match a {
                TemplateArg::Type(ts) if is_decltype(ts) => {
                    let Some(TemplateArg::Expr(e)) = ts.args.first() else {
                        unreachable!("decltype holds its operand")
                    };
                    let typed = self.typed(fx, e)?;
                    let mut pattern = ts.clone();
                    pattern.ptr_ops.retain(|op| *op != PtrOp::Reference);
                    let plain = Typed {
                        ty: typed.ty,
                        space: None,
                        writable: false,
                    };
                    out.push(TemplateArg::Type(
                        self.written_type(&pattern, &plain, e.span)?,
                    ));
                }
                // `f<kAligned.value>(..)`: a static member named through an
                // object ([class.static]/1), a constant as `S::value` is.
                TemplateArg::Expr(e) => {
                    out.push(TemplateArg::Expr(self.statics_through_objects(fx, e)?))
                }
                // `f<mm>()`, `mm` an object of an `integral_constant`
                // (parsed as a type name: which it is depends on lookup).
                TemplateArg::Type(ts)
                    if ts.args.is_empty() && self.names_variable(fx, &ts.path, ts.span) =>
                {
                    match self.converted_constant(fx, &ts.path, ts.span) {
                        Some(value) => out.push(TemplateArg::Expr(value)),
                        None => out.push(a.clone()),
                    }
                }
                // `remove_addrspace_t<decltype(x)>`: one inside another's
                // arguments.
                TemplateArg::Type(ts) if ts.args.iter().any(holds_decltype) => {
                    let mut ts = ts.clone();
                    ts.args = self.written_template_args(fx, &ts.args)?;
                    out.push(TemplateArg::Type(ts));
                }
                other => out.push(other.clone()),
            }
        }
        Ok(out)
    }
}

impl Lowerer<'_, '_> {
    /// `ts` with a `decltype(e)` written out from `e`'s type, typed in
    /// this function (`using tile_t = decltype(tile);`); `ts` as it is
    /// otherwise.
    pub(in crate::lower) fn written_local_type(
        &mut self,
        fx: &mut FnCtx,
        ts: &TypeSpec,
    ) -> Result<TypeSpec> {
        if !type_holds_decltype(ts) {
            return Ok(ts.clone());
        }
        match self
            .written_template_args(fx, &[TemplateArg::Type(ts.clone())])?
            .pop()
        {
            Some(TemplateArg::Type(t)) => Ok(t),
            _ => unreachable!("a type argument stays one"),
        }
    }
}

fn is_decltype(ty: &TypeSpec) -> bool {
    ty.path.len() == 1 && ty.path[0] == "decltype"
}

impl Lowerer<'_, '_> {
    /// `e` with each `x.m` whose `x` is a local of a struct type with a
    /// static constant `m` written `S::m` (the object is not evaluated,
    /// [expr.ref]/6), so that a template argument `kAligned.value` of an
    /// `integral_constant` parameter is a constant expression.
    fn statics_through_objects(&mut self, fx: &mut FnCtx, e: &Expr) -> Result<Expr> {
        if let ExprKind::Name(path) = &e.kind {
            if let Some(value) = self.converted_constant(fx, path, e.span) {
                return Ok(value);
            }
        }
        let mut objects: Vec<(String, String)> = Vec::new();
        let mut find = StaticMembers {
            resolve: &mut |n: &str, m: &str| {
                objects.push((n.to_string(), m.to_string()));
                None
            },
        };
        let mut probe = e.clone();
        crate::syntax::from_pest::paths::expr(&mut probe, &mut find);
        if objects.is_empty() {
            return Ok(e.clone());
        }
        let mut named: HashMap<(String, String), Vec<String>> = HashMap::new();
        for (n, m) in objects {
            let object = Expr {
                kind: ExprKind::Name(vec![n.clone()]),
                span: e.span,
            };
            let Ok(Type::Struct(id)) = self.typed(fx, &object).map(|t| t.ty) else {
                continue;
            };
            let owner = self.program.struct_name(id).to_string();
            let full = crate::syntax::from_pest::members::member_name(&owner, &m);
            if matches!(
                self.program.symbols.get(&full),
                Some(crate::sema::Symbol::Constant(_))
            ) {
                named.insert((n, m.clone()), vec![owner, m]);
            }
        }
        let mut out = e.clone();
        let mut replace = StaticMembers {
            resolve: &mut |n: &str, m: &str| named.get(&(n.to_string(), m.to_string())).cloned(),
        };
        crate::syntax::from_pest::paths::expr(&mut out, &mut replace);
        Ok(out)
    }
}

impl Lowerer<'_, '_> {
    /// Whether `path` names a local, a parameter or (in a member function)
    /// a data member of the object.
    fn names_variable(&self, fx: &FnCtx, path: &[String], span: Span) -> bool {
        let [n] = path else { return false };
        fx.lookup(n).is_some()
            || self
                .implicit_member(fx, n, span)
                .is_some_and(|e| matches!(e.kind, ExprKind::Member(..)))
    }

    /// The value of object `path` converted by its struct's conversion
    /// function whose value its type alone fixes (`f<mm>()`
    /// where `mm` is an `integral_constant<int, 2>`: a converted constant
    /// expression, [temp.arg.nontype]/2, calling `operator value_type()`,
    /// which returns the static member `value`); `None` when `path` is not
    /// such an object, or the function reads the object.
    fn converted_constant(&mut self, fx: &mut FnCtx, path: &[String], span: Span) -> Option<Expr> {
        let object = Expr {
            kind: ExprKind::Name(path.to_vec()),
            span,
        };
        let Ok(Type::Struct(id)) = self.typed(fx, &object).map(|t| t.ty) else {
            return None;
        };
        let names = self.conversion_function_names(id).to_vec();
        let owner = self.program.struct_name(id).to_string();
        let mut values = names.iter().filter_map(|name| {
            let Some(crate::sema::Symbol::Functions(list)) = self.program.symbols.get(name) else {
                return None;
            };
            // A member function's `constexpr` is not kept; one whose
            // value does not depend on the object is taken as such.
            let f = list
                .iter()
                .map(|&i| self.program.functions[i])
                .find(|f| f.params.iter().skip(1).all(|p| p.default.is_some()))?;
            let [stmt] = f.body.as_ref()?.stmts.as_slice() else {
                return None;
            };
            let ast::StmtKind::Return(Some(returned)) = &stmt.kind else {
                return None;
            };
            // `return value;`: the struct's static member.
            let mut returned = returned.clone();
            let mut qualify = |path: &mut Vec<String>, _: Span, how| {
                if let (PathUse::Value, [name]) = (how, path.as_slice()) {
                    let full = crate::syntax::from_pest::members::member_name(&owner, name);
                    if let Some(crate::sema::Symbol::Constant(_)) = self.program.symbols.get(&full)
                    {
                        *path = vec![owner.clone(), name.clone()];
                    }
                }
            };
            crate::syntax::from_pest::paths::expr(&mut returned, &mut qualify);
            match crate::sema::consteval::eval(self.program, &returned).ok()? {
                v @ (ConstValue::Int(..) | ConstValue::Bool(_)) => {
                    crate::lower::stmt::value_expr(&v, span)
                }
                _ => None,
            }
        });
        let value = values.next()?;
        // Several conversions would need overload resolution to choose.
        values.next().is_none().then_some(value)
    }
}

/// A walk that offers each `x.m` (`x` a plain name) to `resolve`, and
/// writes the path it answers in its place.
struct StaticMembers<'r> {
    resolve: &'r mut dyn FnMut(&str, &str) -> Option<Vec<String>>,
}

impl crate::syntax::from_pest::paths::Visitor for StaticMembers<'_> {
    fn path(&mut self, _: &mut Vec<String>, _: Span, _: crate::syntax::from_pest::paths::PathUse) {}

    fn expr(&mut self, e: &mut Expr) {
        let ExprKind::Member(base, m, false) = &e.kind else {
            return;
        };
        let ExprKind::Name(p) = &base.kind else {
            return;
        };
        if let [n] = p.as_slice() {
            if let Some(path) = (self.resolve)(n, &m.name) {
                e.kind = ExprKind::Name(path);
            }
        }
    }
}

/// Whether template argument `a` is or holds a `decltype(e)`.
fn holds_decltype(a: &TemplateArg) -> bool {
    match a {
        TemplateArg::Type(ts) => type_holds_decltype(ts),
        TemplateArg::Expr(_) => false,
    }
}

/// Whether written type `ts` is or holds a `decltype(e)`.
fn type_holds_decltype(ts: &TypeSpec) -> bool {
    is_decltype(ts) || ts.args.iter().any(holds_decltype)
}

/// The expression an `auto` declaration is deduced from.
fn auto_initializer(d: &VarDecl) -> Result<Expr> {
    let first = &d.declarators[0];
    match &first.init {
        None => Err(Error::coded(
            Code::InvalidInitializer,
            first.name.span,
            format!(
                "declaration of variable `{}` with deduced type `auto` requires an initializer",
                first.name.name
            ),
        )),
        Some(Init::List(_, span)) => Err(Error::coded(
            Code::InvalidInitializer,
            *span,
            "cannot deduce `auto` from a braced initializer list; write the type",
        )),
        Some(_) => Ok(declarator_expr(first).expect("an expression initializer")),
    }
}

fn declarator_expr(d: &ast::Declarator) -> Option<Expr> {
    match &d.init {
        Some(Init::Expr(e)) => Some(e.clone()),
        Some(Init::Paren(args, _)) if args.len() == 1 => Some(args[0].clone()),
        _ => None,
    }
}

fn ast_space(s: AddressSpace) -> ast::AddressSpace {
    match s {
        AddressSpace::Device => ast::AddressSpace::Device,
        AddressSpace::Constant => ast::AddressSpace::Constant,
        AddressSpace::Thread => ast::AddressSpace::Thread,
        AddressSpace::Threadgroup => ast::AddressSpace::Threadgroup,
    }
}
