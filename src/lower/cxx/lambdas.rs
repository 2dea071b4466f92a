//! Lambda expressions (C++11 [expr.prim.lambda]): `[&](auto i) { .. }`.
//!
//! A lambda is an object of a unique class, the closure type, whose
//! members are what it captures and whose call operator is its body; with
//! `auto` parameters the call operator is a template. MLX's NAX kernels
//! pass them to `const_for_loop<0, TM, 1>(f)` and `dispatch_bool(c, f)`,
//! which call them with `integral_constant`s.
//!
//! Mapping: the closure type is a local struct of the function being
//! lowered (`lower::stmt::local_types`: declared on the next analysis
//! round), written as the standard describes it:
//! - a member per captured variable, named as the variable, so that the
//!   body's uses of it are the call operator's uses of the member: a
//!   reference member (`thread T&`) for one captured by reference, a copy
//!   for one captured by value. The closure of a reference member is a
//!   struct of places (`metal/pointer_members.rs`), whose reference
//!   members bind the caller's objects: a local object of a struct
//!   holding pointers (MLX's block loaders, `metal/pointer_objects.rs`)
//!   by a `thread S&` member bound to the same variables and cells, so
//!   that the body's `loader.next()` moves the caller's pointers; a
//!   pointer variable (or a pointer member held in a cell) by a `T*&`
//!   member bound to its cell (`metal/pointer_addresses.rs`), so that the
//!   body's `x += n` moves the caller's `x`. A copy of the closure (`F f`
//!   parameters) binds the same, and passing it to a helper passes those
//!   members by reference even to the `const` call operator (constness
//!   does not reach through a reference). A pointer captured by reference
//!   that is no variable (a parameter nothing moves) is copied, which is
//!   the same; one captured by value that the body moves is refused;
//! - `constexpr` locals are not captured: their values are written into
//!   the body, as a use of a constant is no use of the variable
//!   ([basic.def.odr]/4);
//! - the call operator `operator()`, `const` unless `mutable`, a member
//!   template over one type parameter per `auto` parameter.
//!
//! The lambda's value is that struct built from the captured variables.
//! What is captured by `[&]`/`[=]` is every name of the body that is a
//! local, a parameter or (in a member function) a data member of the
//! enclosing function where the lambda is written. `this`, `*this` and
//! init-captures (`[x = e]`) are refused where written.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{
    self, Expr, ExprKind, Ident, Init, Item, Lambda, LocalType, PtrOp, StmtKind, Templated,
    TypeSpec,
};
use crate::syntax::from_pest::paths::{PathUse, Visitor};
use crate::types::Type;

/// The name a closure type is written with (its local struct's name is
/// made from it and the enclosing function's).
const CLOSURE: &str = "__msl2wgsl_lambda";

/// The closure's member that refers to the object of the member function
/// the lambda is written in.
const ENCLOSING: &str = "__msl2wgsl_this";

/// The template parameter that stands for `auto` parameter `k`.
fn auto_param(k: usize) -> String {
    format!("__msl2wgsl_auto_{k}")
}

impl Lowerer<'_, '_> {
    /// The closure object of lambda `l` (written at `span`).
    pub(in crate::lower) fn lambda(
        &mut self,
        fx: &mut FnCtx,
        l: &Lambda,
        span: Span,
    ) -> Result<Value> {
        if let Some(at) = l.unsupported_capture {
            return Err(Error::coded(
                Code::Unsupported,
                at,
                "a lambda capturing `this`, `*this` or an initialized name (`x = e`) is not supported",
            )
            .note("capture the variables the body uses (`[&]`, `[=]`, `[&x]`); data members are captured by name"));
        }
        let enclosing = self.enclosing_object(fx, l);
        let l = enclosing.as_ref().map_or(l, |(rewritten, _)| rewritten);
        // Each member, its type, and what it is initialized from (the
        // captured variable).
        let mut captured: Vec<(Ident, TypeSpec, String)> = Vec::new();
        for (name, by_reference) in self.captures(fx, l) {
            let ty = self.capture_type(fx, &name, by_reference)?;
            let source = name.name.clone();
            captured.push((name, ty, source));
        }
        if let Some((_, object)) = &enclosing {
            let this = Expr {
                kind: ExprKind::Name(vec!["this".into()]),
                span,
            };
            let ty = self.capture_type_of(fx, &this, object, true)?;
            captured.push((object.clone(), ty, "this".into()));
        }
        refuse_moved_pointers(l, &captured)?;
        let t = closure_type(l, &captured, span)?;
        let names = self.local_type(fx, &t)?;
        let Some(crate::sema::subst::Replacement::Type(ts)) = names.get(CLOSURE) else {
            unreachable!("a local struct names its type")
        };
        let inits = captured
            .iter()
            .map(|(n, _, source)| {
                Init::Expr(Expr {
                    kind: ExprKind::Name(vec![source.clone()]),
                    span: n.span,
                })
            })
            .collect::<Vec<_>>();
        self.brace_construct(fx, &ts.path, &inits, span)
    }

    /// The names `l` captures, in order of first use, each with whether by
    /// reference.
    fn captures(&self, fx: &FnCtx, l: &Lambda) -> Vec<(Ident, bool)> {
        let mut out: Vec<(Ident, bool)> = l.captures.clone();
        let Some(by_reference) = l.default_by_reference else {
            return out;
        };
        let params: Vec<&str> = l
            .params
            .iter()
            .filter_map(|p| p.name.as_ref().map(|n| n.name.as_str()))
            .collect();
        let mut used: Vec<Ident> = Vec::new();
        // A name parsed as a type may be a variable: a template argument
        // `at<mm>()` (C++ decides by lookup; checked below).
        let mut visit = |path: &mut Vec<String>, at: Span, _: PathUse| {
            if let [n] = path.as_slice() {
                if !used.iter().any(|u| u.name == *n) {
                    used.push(Ident {
                        name: n.clone(),
                        span: at,
                    });
                }
            }
        };
        let mut body = l.body.clone();
        crate::syntax::from_pest::paths::block(&mut body, &mut visit);
        for n in used {
            let is_variable = fx.lookup(&n.name).is_some()
                || self
                    .implicit_member(fx, &n.name, n.span)
                    .is_some_and(|e| matches!(e.kind, ExprKind::Member(..)));
            let constant = crate::sema::constexpr_body::local(&n.name).is_some();
            if is_variable
                && !constant
                && !params.contains(&n.name.as_str())
                && !out.iter().any(|(c, _)| c.name == n.name)
            {
                out.push((n, by_reference));
            }
        }
        out
    }

    /// In a member function: `l` with the enclosing object's member
    /// functions called unqualified (`frag_at<i, j>()`) and `this->m`
    /// written as calls and members of [`ENCLOSING`], the closure's member
    /// that refers to the object ([expr.prim.lambda.capture]/10: `[&]`
    /// and `[=]` capture `this` where the body uses it); `None` where the
    /// body uses neither.
    fn enclosing_object(&self, fx: &FnCtx, l: &Lambda) -> Option<(Lambda, Ident)> {
        l.default_by_reference?;
        let id = self.this_struct(fx)?;
        let owner = self.program.struct_name(id).to_string();
        let is_method = |f: &str| {
            let full = crate::syntax::from_pest::members::member_name(&owner, f);
            matches!(
                self.program.symbols.get(&full),
                Some(crate::sema::Symbol::Functions(_))
            ) || !self.program.function_templates(&full).is_empty()
        };
        let mut rewrite = EnclosingCalls {
            is_method: &is_method,
            locals: l
                .params
                .iter()
                .filter_map(|p| p.name.as_ref().map(|n| n.name.clone()))
                .collect(),
            used: false,
        };
        let mut out = l.clone();
        crate::syntax::from_pest::paths::block(&mut out.body, &mut rewrite);
        rewrite.used.then(|| {
            let name = Ident {
                name: ENCLOSING.to_string(),
                span: l.body.span,
            };
            (out, name)
        })
    }

    /// The type of the closure's member for captured variable `name`.
    fn capture_type(
        &mut self,
        fx: &mut FnCtx,
        name: &Ident,
        by_reference: bool,
    ) -> Result<TypeSpec> {
        let e = Expr {
            kind: ExprKind::Name(vec![name.name.clone()]),
            span: name.span,
        };
        self.capture_type_of(fx, &e, name, by_reference)
    }

    /// The type of the closure's member `name` that captures `e`.
    fn capture_type_of(
        &mut self,
        fx: &mut FnCtx,
        e: &Expr,
        name: &Ident,
        by_reference: bool,
    ) -> Result<TypeSpec> {
        let mut typed = self.typed(fx, e)?;
        // An object of a struct holding pointers is no place
        // (`metal/pointer_members.rs`): a local one (its members its own
        // variables and cells) is captured by a `thread` reference bound
        // to the same members, any other by value (its members are the
        // places and values it names, which a copy names too).
        let object = matches!(typed.ty, Type::Struct(_)) && !typed.is_place();
        if by_reference && object && typed.writable {
            typed = typed.in_thread();
        }
        // A pointer variable, or a pointer member held in a cell, by a
        // reference to it (`T*&`, `metal/pointer_addresses.rs`): the body
        // moves the caller's pointer. Any other pointer (a parameter
        // nothing moves) by value, which is the same.
        let pointer = matches!(typed.ty, Type::Pointer(_));
        let pointer_reference =
            by_reference && pointer && self.pointer_variable_cell(fx, e).is_some();
        let pattern = TypeSpec {
            path: vec!["auto".into()],
            ptr_ops: match by_reference && !pointer {
                true => vec![PtrOp::Reference],
                false => Vec::new(),
            },
            is_const: by_reference && object && !typed.writable,
            name_span: name.span,
            span: name.span,
            ..Default::default()
        };
        let mut ts = self.written_type(&pattern, &typed, name.span)?;
        ts.is_constexpr = false;
        if pointer_reference {
            ts.ptr_ops.push(PtrOp::Reference);
        }
        // A `const` local or a `constant` one is captured by a `const`
        // reference (what the body can do with it is what it could do
        // with the variable).
        if !ts.ptr_ops.is_empty() && ts.ptr_ops[0] == PtrOp::Reference && !typed.writable {
            ts.is_const = true;
        }
        Ok(ts)
    }
}

/// A body that moves a pointer it captured by value (`[=]`, or by
/// reference a pointer that is no variable) would move the closure's
/// copy, which is no variable either: refused at the change.
fn refuse_moved_pointers(l: &Lambda, captured: &[(Ident, TypeSpec, String)]) -> Result<()> {
    let pointers: Vec<&str> = captured
        .iter()
        .filter(|(_, ts, _)| matches!(ts.ptr_ops.last(), Some(PtrOp::Pointer { .. })))
        .map(|(n, _, _)| n.name.as_str())
        .collect();
    if pointers.is_empty() {
        return Ok(());
    }
    let mut moves = Moves {
        pointers: &pointers,
        found: None,
    };
    let mut body = l.body.clone();
    crate::syntax::from_pest::paths::block(&mut body, &mut moves);
    match moves.found {
        Some(at) => Err(Error::coded(
            Code::Unsupported,
            at,
            "a lambda that moves a pointer it captures by value is not supported",
        )
        .note("a pointer captured by value is held by the closure as a value here; capture the pointer variable by reference, or move a local copy of it in the body")),
        None => Ok(()),
    }
}

/// The closure type of `l` as a local struct: a member per capture and
/// the call operator.
fn closure_type(
    l: &Lambda,
    captured: &[(Ident, TypeSpec, String)],
    span: Span,
) -> Result<LocalType> {
    let autos: Vec<usize> = (0..l.params.len())
        .filter(|&k| is_auto(&l.params[k].ty))
        .collect();
    let template = match autos.is_empty() {
        true => String::new(),
        false => format!(
            "template <{}> ",
            autos
                .iter()
                .map(|&k| format!("typename {}", auto_param(k)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let members: String = captured
        .iter()
        .map(|(n, _, _)| format!("int {};\n", n.name))
        .collect();
    let params = (0..l.params.len())
        .map(|k| format!("int __msl2wgsl_param_{k}"))
        .collect::<Vec<_>>()
        .join(", ");
    let constness = if l.mutable { "" } else { "const" };
    let text = format!(
        "void __msl2wgsl_closure() {{ struct {CLOSURE} {{ {members} {template}auto operator()({params}) {constness} {{}} }}; }}"
    );
    let mut t = skeleton(&text, span)?;
    t.decl.name.span = span;
    t.decl.span = span;
    for (m, (n, ty, _)) in t.decl.members.iter_mut().zip(captured) {
        m.ty = ty.clone();
        m.name.span = n.span;
    }
    for item in &mut t.members {
        let f = match item {
            Item::Function(f) => f,
            Item::Template(tp) => match &mut tp.item {
                Templated::Function(f) => f,
                _ => continue,
            },
            _ => continue,
        };
        f.span = span;
        f.name.span = span;
        if let Some(ret) = &l.ret {
            f.ret = ret.clone();
        }
        for p in &mut f.params {
            let Some(k) = p
                .name
                .as_ref()
                .and_then(|n| n.name.strip_prefix("__msl2wgsl_param_"))
                .and_then(|k| k.parse::<usize>().ok())
            else {
                continue;
            };
            let mut q = l.params[k].clone();
            if is_auto(&q.ty) {
                q.ty.path = vec![auto_param(k)];
            }
            *p = q;
        }
        f.body = Some(l.body.clone());
    }
    Ok(*t)
}

thread_local! {
    /// Closure types as parsed, by their skeleton's text: a lambda in a
    /// template is written once per instance (MLX's GEMM loops, hundreds),
    /// and its skeleton is the same in each.
    static SKELETONS: std::cell::RefCell<std::collections::HashMap<String, Box<LocalType>>> =
        Default::default();
}

/// The local struct that skeleton `text` (a function declaring it)
/// declares.
fn skeleton(text: &str, span: Span) -> Result<Box<LocalType>> {
    if let Some(t) = SKELETONS.with(|k| k.borrow().get(text).cloned()) {
        return Ok(t);
    }
    let unit = crate::syntax::parse(text).map_err(|e| {
        Error::coded(
            Code::Internal,
            span,
            format!(
                "the closure type of this lambda could not be written: {}",
                e.message
            ),
        )
    })?;
    let Some(Item::Function(f)) = unit.items.into_iter().next() else {
        unreachable!("the skeleton is one function")
    };
    let Some(StmtKind::LocalType(t)) = f
        .body
        .and_then(|b| b.stmts.into_iter().next())
        .map(|s| s.kind)
    else {
        unreachable!("its body is the struct")
    };
    SKELETONS.with(|k| k.borrow_mut().insert(text.to_string(), t.clone()));
    Ok(t)
}

/// `auto`, `const auto&`, `thread auto&`: a parameter of a generic lambda.
fn is_auto(ts: &TypeSpec) -> bool {
    ts.path.len() == 1 && ts.path[0] == "auto" && ts.args.is_empty()
}

/// Finds the first change of one of `pointers` (`p = ..`, `p += n`, `p++`).
struct Moves<'p> {
    pointers: &'p [&'p str],
    found: Option<Span>,
}

impl Visitor for Moves<'_> {
    fn path(&mut self, _: &mut Vec<String>, _: Span, _: PathUse) {}

    fn expr(&mut self, e: &mut Expr) {
        let target = match &e.kind {
            ExprKind::Assign(_, target, _) | ExprKind::PostIncDec(_, target) => target,
            ExprKind::Unary(ast::UnaryOp::PreInc | ast::UnaryOp::PreDec, target) => target,
            _ => return,
        };
        if let ExprKind::Name(p) = &target.kind {
            if p.len() == 1 && self.pointers.contains(&p[0].as_str()) {
                self.found.get_or_insert(e.span);
            }
        }
    }
}

/// Rewrites the enclosing object's uses in a lambda body: `f(..)` and
/// `f<..>(..)` of a member function `f` (not a parameter's name) become
/// calls on [`ENCLOSING`], as do `this->m` and `*this`.
struct EnclosingCalls<'m> {
    is_method: &'m dyn Fn(&str) -> bool,
    locals: Vec<String>,
    used: bool,
}

impl EnclosingCalls<'_> {
    fn object(&mut self, span: Span) -> Expr {
        self.used = true;
        Expr {
            kind: ExprKind::Name(vec![ENCLOSING.to_string()]),
            span,
        }
    }
}

impl Visitor for EnclosingCalls<'_> {
    fn path(&mut self, _: &mut Vec<String>, _: Span, _: PathUse) {}

    fn expr(&mut self, e: &mut Expr) {
        let span = e.span;
        match &mut e.kind {
            ExprKind::Call(callee, _) => {
                let method = match &callee.kind {
                    ExprKind::Name(p) | ExprKind::Templated(p, _) if p.len() == 1 => p[0].clone(),
                    _ => return,
                };
                if self.locals.contains(&method) || !(self.is_method)(&method) {
                    return;
                }
                let member = Expr {
                    kind: ExprKind::Member(
                        Box::new(self.object(callee.span)),
                        Ident {
                            name: method,
                            span: callee.span,
                        },
                        false,
                    ),
                    span: callee.span,
                };
                callee.kind = match std::mem::replace(&mut callee.kind, ExprKind::Bool(false)) {
                    ExprKind::Templated(_, args) => {
                        ExprKind::MemberTemplate(Box::new(member), args)
                    }
                    _ => member.kind,
                };
            }
            ExprKind::Member(base, _, arrow) if is_this(base) && *arrow => {
                **base = self.object(span);
                *arrow = false;
            }
            ExprKind::Unary(ast::UnaryOp::Deref, base) if is_this(base) => {
                *e = self.object(span);
            }
            _ => {}
        }
    }
}

fn is_this(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Name(p) if p.len() == 1 && p[0] == "this")
}
