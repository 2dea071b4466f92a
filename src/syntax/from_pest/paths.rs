//! Every name path written in a declaration, visited mutably: the types
//! (with their template arguments) and the names used as values, callees,
//! functional casts and braced constructions. Struct scope
//! (`syntax::from_pest::struct_scope`) qualifies member type names with it,
//! and `syntax::from_pest::variadic` finds the uses of variadic templates.

use super::*;

/// What a visited path names where it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathUse {
    /// A type: a declaration's, a cast's, a template argument's.
    Type,
    /// An expression's name: a variable, a function, a functional cast
    /// (`V(x)`), a braced construction (`V{..}`), a template (`f<T>`).
    Value,
}

/// What a walk does at each path; a closure `|path, at, how| ..` is one
/// that sees the paths only.
pub(crate) trait Visitor {
    /// Each path, where it is, and how it is used.
    fn path(&mut self, path: &mut Vec<String>, at: Span, how: PathUse);
    /// A written type, before its path and template arguments are visited
    /// (so that it may be replaced whole).
    fn ty(&mut self, _t: &mut TypeSpec) {}
    /// A name with template arguments in an expression (`f<T>`, `V<T>(x)`),
    /// before its path and arguments are visited.
    fn templated(&mut self, _path: &mut Vec<String>, _args: &mut Vec<TemplateArg>, _at: Span) {}
    /// An expression, before its parts are visited.
    fn expr(&mut self, _e: &mut Expr) {}
}

impl<F: FnMut(&mut Vec<String>, Span, PathUse)> Visitor for F {
    fn path(&mut self, path: &mut Vec<String>, at: Span, how: PathUse) {
        self(path, at, how)
    }
}

/// The visitor of a walk.
pub(crate) type Visit<'f> = dyn Visitor + 'f;

/// The paths of an item.
pub(crate) fn item(i: &mut Item, f: &mut Visit) {
    match i {
        Item::UsingNamespace(_) => {}
        Item::Alias(a) => alias(a, f),
        Item::Struct(s) => struct_decl(s, f),
        Item::Function(g) => function(g, f),
        Item::Global(v) => var_decl(v, f),
        Item::Enum(e) => {
            e.underlying.iter_mut().for_each(|t| ty(t, f));
            e.enumerators
                .iter_mut()
                .filter_map(|(_, v)| v.as_mut())
                .for_each(|v| expr(v, f));
        }
        Item::Template(t) => {
            for p in &mut t.params {
                match &mut p.kind {
                    TemplateParamKind::Type(d) => d.iter_mut().for_each(|t| ty(t, f)),
                    TemplateParamKind::Template(d) => {
                        d.iter_mut().for_each(|d| f.path(d, p.span, PathUse::Type))
                    }
                    TemplateParamKind::Value(t, d) => {
                        ty(t, f);
                        d.iter_mut().for_each(|e| expr(e, f));
                    }
                }
            }
            t.specialization
                .iter_mut()
                .flatten()
                .for_each(|a| template_arg(a, f));
            match &mut t.item {
                Templated::Function(g) => function(g, f),
                Templated::Struct(st) => {
                    struct_decl(&mut st.decl, f);
                    st.members.iter_mut().for_each(|m| item(m, f));
                    st.specialization
                        .iter_mut()
                        .flatten()
                        .for_each(|a| template_arg(a, f));
                }
                Templated::Alias(a) => alias(a, f),
                Templated::Variable(v) => {
                    ty(&mut v.ty, f);
                    v.specialization
                        .iter_mut()
                        .flatten()
                        .for_each(|a| template_arg(a, f));
                    init(&mut v.init, f);
                }
            }
        }
        Item::Instantiation(n) => {
            function(&mut n.function, f);
            n.args.iter_mut().for_each(|a| template_arg(a, f));
        }
        Item::StaticAssert(a) => expr(&mut a.cond, f),
    }
}

fn alias(a: &mut Alias, f: &mut Visit) {
    ty(&mut a.ty, f);
    a.array.iter_mut().flatten().for_each(|e| expr(e, f));
}

/// The data members of a struct and of its anonymous unions and structs.
pub(crate) fn struct_decl(s: &mut StructDecl, f: &mut Visit) {
    for m in &mut s.members {
        ty(&mut m.ty, f);
        m.array.iter_mut().flatten().for_each(|e| expr(e, f));
        m.default.iter_mut().for_each(|i| init(i, f));
    }
    for l in &mut s.layout {
        if let LayoutAttribute::Aligned(Some(e), _) = l {
            expr(e, f);
        }
    }
    s.anonymous.iter_mut().for_each(|a| struct_decl(a, f));
}

/// The paths of a function: return type, parameters, body.
pub(crate) fn function(g: &mut FunctionDecl, f: &mut Visit) {
    signature(g, f);
    if let Some(b) = &mut g.body {
        block(b, f);
    }
}

/// The paths of a function's return and parameter types (with their
/// array bounds and default arguments), not of its body.
pub(super) fn signature(g: &mut FunctionDecl, f: &mut Visit) {
    ty(&mut g.ret, f);
    for p in &mut g.params {
        ty(&mut p.ty, f);
        p.array.iter_mut().flatten().for_each(|e| expr(e, f));
        p.default.iter_mut().for_each(|e| expr(e, f));
    }
}

/// A written type and its template arguments.
pub(crate) fn ty(t: &mut TypeSpec, f: &mut Visit) {
    f.ty(t);
    f.path(&mut t.path, t.name_span, PathUse::Type);
    t.args.iter_mut().for_each(|a| template_arg(a, f));
}

fn template_arg(a: &mut TemplateArg, f: &mut Visit) {
    match a {
        TemplateArg::Type(t) => ty(t, f),
        TemplateArg::Expr(e) => expr(e, f),
    }
}

fn var_decl(v: &mut VarDecl, f: &mut Visit) {
    ty(&mut v.ty, f);
    for d in &mut v.declarators {
        d.array.iter_mut().flatten().for_each(|e| expr(e, f));
        d.init.iter_mut().for_each(|i| init(i, f));
    }
}

pub(crate) fn block(b: &mut Block, f: &mut Visit) {
    b.stmts.iter_mut().for_each(|s| stmt(s, f));
}

fn stmt(s: &mut Stmt, f: &mut Visit) {
    match &mut s.kind {
        StmtKind::Block(b) => block(b, f),
        StmtKind::StaticAssert(a) => expr(&mut a.cond, f),
        StmtKind::Decl(v) => var_decl(v, f),
        StmtKind::Expr(e) => expr(e, f),
        StmtKind::If {
            cond,
            then,
            otherwise,
            ..
        } => {
            expr(cond, f);
            stmt(then, f);
            otherwise.iter_mut().for_each(|o| stmt(o, f));
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
        } => {
            init.iter_mut().for_each(|i| stmt(i, f));
            cond.iter_mut()
                .chain(step.iter_mut())
                .for_each(|e| expr(e, f));
            stmt(body, f);
        }
        StmtKind::RangeFor {
            ty: t, range, body, ..
        } => {
            ty(t, f);
            expr(range, f);
            stmt(body, f);
        }
        StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
            expr(cond, f);
            stmt(body, f);
        }
        StmtKind::Switch { selector, items } => {
            expr(selector, f);
            for i in items {
                match i {
                    SwitchItem::Label(Some(e), _) => expr(e, f),
                    SwitchItem::Label(None, _) => {}
                    SwitchItem::Stmt(s) => stmt(s, f),
                }
            }
        }
        StmtKind::Return(v) => v.iter_mut().for_each(|e| expr(e, f)),
        StmtKind::Alias(a) => alias(a, f),
        StmtKind::LocalType(t) => {
            struct_decl(&mut t.decl, f);
            t.members.iter_mut().for_each(|m| item(m, f));
            t.objects.iter_mut().for_each(|v| var_decl(v, f));
        }
        StmtKind::Break | StmtKind::Continue | StmtKind::Empty => {}
    }
}

fn init(i: &mut Init, f: &mut Visit) {
    match i {
        Init::Expr(e) => expr(e, f),
        Init::List(items, _) => items.iter_mut().for_each(|i| init(i, f)),
        Init::Paren(args, _) => args.iter_mut().for_each(|e| expr(e, f)),
        Init::Designated(_, value, _) => init(value, f),
    }
}

/// The paths of an expression.
pub(crate) fn expr(e: &mut Expr, f: &mut Visit) {
    f.expr(e);
    let span = e.span;
    match &mut e.kind {
        ExprKind::Name(path) => f.path(path, span, PathUse::Value),
        ExprKind::Templated(path, args) => {
            f.templated(path, args, span);
            f.path(path, span, PathUse::Value);
            args.iter_mut().for_each(|a| template_arg(a, f));
        }
        ExprKind::BraceConstruct(path, items) => {
            f.path(path, span, PathUse::Value);
            items.iter_mut().for_each(|i| init(i, f));
        }
        ExprKind::Binary(_, a, b) | ExprKind::Assign(_, a, b) | ExprKind::Index(a, b) => {
            expr(a, f);
            expr(b, f);
        }
        ExprKind::Unary(_, a) | ExprKind::PostIncDec(_, a) | ExprKind::Member(a, ..) => expr(a, f),
        ExprKind::MemberTemplate(m, args) => {
            expr(m, f);
            args.iter_mut().for_each(|a| template_arg(a, f));
        }
        ExprKind::Ternary(a, b, c) => {
            expr(a, f);
            expr(b, f);
            expr(c, f);
        }
        ExprKind::Call(callee, args) => {
            expr(callee, f);
            args.iter_mut().for_each(|a| expr(a, f));
        }
        ExprKind::Cast(_, t, a) => {
            ty(t, f);
            expr(a, f);
        }
        ExprKind::InitList(items) => items.iter_mut().for_each(|i| init(i, f)),
        ExprKind::Comma(items) => items.iter_mut().for_each(|x| expr(x, f)),
        ExprKind::Lambda(l) => {
            for p in &mut l.params {
                ty(&mut p.ty, f);
                p.default.iter_mut().for_each(|e| expr(e, f));
            }
            l.ret.iter_mut().for_each(|t| ty(t, f));
            block(&mut l.body, f);
        }
        ExprKind::SizeOf { operand, .. } => match operand {
            SizeOperand::Type(t) => ty(t, f),
            SizeOperand::Expr(a) => expr(a, f),
        },
        ExprKind::PackExpansion(a) => expr(a, f),
        ExprKind::TypePackExpansion(t) => ty(t, f),
        ExprKind::Fold { pattern, init, .. } => {
            expr(pattern, f);
            init.iter_mut().for_each(|i| expr(i, f));
        }
        // A template parameter's name, never a namespace member.
        ExprKind::SizeofPack(_) => {}
        ExprKind::Int { .. } | ExprKind::Float { .. } | ExprKind::Bool(_) | ExprKind::Str(_) => {}
    }
}
