//! Template-argument substitution: replaces template parameter names in a
//! copy of a declaration's AST by the arguments' spellings, so that an
//! instantiation is an ordinary function for everything after it.

use crate::syntax::ast::{
    Block, Expr, ExprKind, FunctionDecl, Init, Stmt, StmtKind, SwitchItem, TemplateArg, TypeSpec,
    VarDecl,
};
use std::collections::HashMap;

/// What a template parameter's name stands for in an instantiation.
#[derive(Clone, Debug)]
pub enum Replacement {
    /// A type parameter: the argument type, spelled so that it resolves again.
    Type(TypeSpec),
    /// A non-type parameter: a constant expression of the parameter's type.
    Value(Expr),
}

/// Substitutes template parameters by name.
pub struct Subst<'m> {
    /// Parameter name → argument.
    pub map: &'m HashMap<String, Replacement>,
    /// In a struct template's instance, `(template, instance)`: qualified
    /// names `Vec::make` of the template's members become `Vec<float, 4>::make`.
    pub scope: Option<(&'m str, &'m str)>,
    /// Also renames templates: `V<float>` where `V` maps to a plain name
    /// (a template hidden by a redefinition, `sema::redefinition`). Off for
    /// instantiation, where the injected class name `V` means the instance
    /// but `V<N + 1>` names another one.
    pub templates: bool,
}

impl<'m> Subst<'m> {
    /// Substitutes the parameters of `map`.
    pub fn new(map: &'m HashMap<String, Replacement>) -> Self {
        Subst {
            map,
            scope: None,
            templates: false,
        }
    }

    /// Renames the names of `map` everywhere, template names included.
    pub fn renaming(map: &'m HashMap<String, Replacement>) -> Self {
        Subst {
            map,
            scope: None,
            templates: true,
        }
    }

    fn lookup(&self, path: &[String]) -> Option<&Replacement> {
        match path {
            [n] => self.map.get(n),
            _ => None,
        }
    }

    /// `Vec::make` → `Vec<float, 4>::make` inside an instance of `Vec`;
    /// `T::value_type` → `Small<float,3>::value_type` for a type parameter
    /// `T` bound to a named type.
    fn rescope(&self, path: &mut Vec<String>) {
        if path.len() < 2 {
            return;
        }
        if let Some((template, instance)) = self.scope {
            if path[0] == template {
                path[0] = instance.to_string();
                return;
            }
        }
        if let Some(Replacement::Type(r)) = self.map.get(&path[0]) {
            if r.args.is_empty() && r.ptr_ops.is_empty() {
                path.splice(0..1, r.path.iter().cloned());
            }
        }
    }

    /// `V<float>` where `V` itself stands for another plain name (a
    /// template hidden by a redefinition, `sema::redefinition`).
    fn rename_template(&self, path: &mut Vec<String>) {
        if !self.templates {
            return;
        }
        if let Some(Replacement::Type(r)) = self.lookup(path) {
            if r.args.is_empty() && r.ptr_ops.is_empty() {
                *path = r.path.clone();
            }
        }
    }

    /// A whole function: return type, parameters, body.
    pub fn function(&self, f: &mut FunctionDecl) {
        self.ty(&mut f.ret);
        // `[[max_total_threads_per_threadgroup(BM * 32)]]` of a kernel template.
        for a in &mut f.attributes {
            a.args.iter_mut().for_each(|e| self.expr(e));
        }
        for p in &mut f.params {
            self.ty(&mut p.ty);
            p.array.iter_mut().flatten().for_each(|e| self.expr(e));
            // A default argument may use the template's parameters (`T k = T(2)`).
            p.default.iter_mut().for_each(|e| self.expr(e));
            for a in &mut p.attributes {
                a.args.iter_mut().for_each(|e| self.expr(e));
            }
        }
        if let Some(b) = &mut f.body {
            self.block(b);
        }
    }

    /// A written type; `const T*` keeps its own qualifiers and declarators.
    pub fn ty(&self, ts: &mut TypeSpec) {
        ts.args.iter_mut().for_each(|a| self.template_arg(a));
        self.rescope(&mut ts.path);
        if !ts.args.is_empty() {
            self.rename_template(&mut ts.path);
            return;
        }
        let Some(Replacement::Type(r)) = self.lookup(&ts.path) else {
            return;
        };
        let mut new = r.clone();
        new.is_const |= ts.is_const;
        new.is_constexpr |= ts.is_constexpr;
        if ts.space.is_some() {
            new.space = ts.space;
        }
        new.ptr_ops.extend(ts.ptr_ops.iter().copied());
        new.name_span = ts.name_span;
        new.span = ts.span;
        *ts = new;
    }

    fn template_arg(&self, a: &mut TemplateArg) {
        match a {
            // A bare name in a template argument list parses as a type.
            TemplateArg::Type(ts) if ts.args.is_empty() && ts.ptr_ops.is_empty() => {
                if let Some(Replacement::Value(v)) = self.lookup(&ts.path) {
                    let mut v = v.clone();
                    v.span = ts.span;
                    *a = TemplateArg::Expr(v);
                } else {
                    self.ty(ts);
                }
            }
            TemplateArg::Type(ts) => self.ty(ts),
            TemplateArg::Expr(e) => self.expr(e),
        }
    }

    fn block(&self, b: &mut Block) {
        b.stmts.iter_mut().for_each(|s| self.stmt(s));
    }

    /// A variable declaration: its type, array sizes, initializers.
    pub fn var_decl(&self, d: &mut VarDecl) {
        self.ty(&mut d.ty);
        for d in &mut d.declarators {
            d.array.iter_mut().flatten().for_each(|e| self.expr(e));
            if let Some(i) = &mut d.init {
                self.init(i);
            }
            for a in &mut d.attributes {
                a.args.iter_mut().for_each(|e| self.expr(e));
            }
        }
    }

    /// A statement.
    pub fn stmt(&self, s: &mut Stmt) {
        match &mut s.kind {
            StmtKind::Block(b) => self.block(b),
            StmtKind::Decl(d) => self.var_decl(d),
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::If {
                cond,
                then,
                otherwise,
                ..
            } => {
                self.expr(cond);
                self.stmt(then);
                if let Some(o) = otherwise {
                    self.stmt(o);
                }
            }
            StmtKind::RangeFor {
                ty, range, body, ..
            } => {
                self.ty(ty);
                self.expr(range);
                self.stmt(body);
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                if let Some(i) = init {
                    self.stmt(i);
                }
                cond.iter_mut()
                    .chain(step.iter_mut())
                    .for_each(|e| self.expr(e));
                self.stmt(body);
            }
            StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
                self.expr(cond);
                self.stmt(body);
            }
            StmtKind::Switch { selector, items } => {
                self.expr(selector);
                for i in items {
                    match i {
                        SwitchItem::Label(Some(e), _) => self.expr(e),
                        SwitchItem::Label(None, _) => {}
                        SwitchItem::Stmt(s) => self.stmt(s),
                    }
                }
            }
            StmtKind::Return(Some(e)) => self.expr(e),
            StmtKind::Return(None)
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Empty
            | StmtKind::StaticAssert(_) => {}
            StmtKind::Alias(a) => self.ty(&mut a.ty),
        }
    }

    /// An initializer.
    pub fn init(&self, i: &mut Init) {
        match i {
            Init::Expr(e) => self.expr(e),
            Init::List(items, _) => items.iter_mut().for_each(|i| self.init(i)),
            Init::Paren(args, _) => args.iter_mut().for_each(|e| self.expr(e)),
            Init::Designated(_, value, _) => self.init(value),
        }
    }

    /// An expression; a value parameter's name becomes its value, a type
    /// parameter's name (as in `T(0)`) the type's name.
    pub fn expr(&self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Name(path) if path.len() > 1 => self.rescope(path),
            ExprKind::Name(path) => match self.lookup(path) {
                Some(Replacement::Value(v)) => {
                    let span = e.span;
                    *e = v.clone();
                    e.span = span;
                }
                Some(Replacement::Type(r)) if r.ptr_ops.is_empty() => {
                    e.kind = if r.args.is_empty() {
                        ExprKind::Name(r.path.clone())
                    } else {
                        ExprKind::Templated(r.path.clone(), r.args.clone())
                    };
                }
                _ => {}
            },
            ExprKind::Templated(path, args) => {
                // `S<N / 2>::f` inside `S`'s members names another instance
                // of the template, not the injected class name (C++
                // [temp.local]): the arguments are the template's.
                if self.scope.is_none_or(|(template, _)| path[0] != template) {
                    self.rescope(path);
                }
                self.rename_template(path);
                args.iter_mut().for_each(|a| self.template_arg(a))
            }
            ExprKind::Binary(_, a, b) | ExprKind::Assign(_, a, b) | ExprKind::Index(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Unary(_, a) | ExprKind::PostIncDec(_, a) | ExprKind::Member(a, ..) => {
                self.expr(a)
            }
            ExprKind::MemberTemplate(m, args) => {
                self.expr(m);
                args.iter_mut().for_each(|a| self.template_arg(a));
            }
            ExprKind::Ternary(a, b, c) => {
                self.expr(a);
                self.expr(b);
                self.expr(c);
            }
            ExprKind::Call(callee, args) => {
                self.expr(callee);
                args.iter_mut().for_each(|a| self.expr(a));
            }
            ExprKind::Cast(_, ts, a) => {
                self.ty(ts);
                self.expr(a);
            }
            ExprKind::InitList(items) => items.iter_mut().for_each(|i| self.init(i)),
            ExprKind::BraceConstruct(path, items) => {
                if let Some(Replacement::Type(r)) = self.lookup(path) {
                    if r.args.is_empty() && r.ptr_ops.is_empty() {
                        *path = r.path.clone();
                    }
                }
                items.iter_mut().for_each(|i| self.init(i));
            }
            ExprKind::Comma(items) => items.iter_mut().for_each(|x| self.expr(x)),
            ExprKind::SizeOf { operand, .. } => match operand {
                crate::syntax::ast::SizeOperand::Type(ts) => self.ty(ts),
                crate::syntax::ast::SizeOperand::Expr(a) => self.expr(a),
            },
            ExprKind::Int { .. }
            | ExprKind::Float { .. }
            | ExprKind::Bool(_)
            | ExprKind::Str(_) => {}
        }
    }
}
