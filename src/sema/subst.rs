//! Template-argument substitution: replaces template parameter names in a
//! copy of a declaration's AST by the arguments' spellings, so that an
//! instantiation is an ordinary function for everything after it.

use crate::source_map::Span;
use crate::syntax::ast::{
    BinaryOp, Block, Expr, ExprKind, FunctionDecl, Ident, Init, Item, LayoutAttribute, LocalType,
    Param, PtrOp, Stmt, StmtKind, StructDecl, SwitchItem, TemplateArg, TypeSpec, VarDecl,
};
use crate::syntax::from_pest::paths::{PathUse, Visit};
use std::collections::HashMap;

/// What a template parameter's name stands for in an instantiation.
#[derive(Clone, Debug)]
pub enum Replacement {
    /// A type parameter: the argument type, spelled so that it resolves again.
    Type(TypeSpec),
    /// A non-type parameter: a constant expression of the parameter's type.
    Value(Expr),
    /// A template parameter pack, or a function parameter pack (each
    /// element the name of one of its parameters): one replacement per
    /// element, used where a pattern naming it is expanded (`xs...`).
    Pack(Vec<Replacement>),
    /// A template template parameter: the struct template's path.
    Template(Vec<String>),
    /// A non-type parameter of struct type: the struct built from its
    /// members' values (where the parameter is used whole), and each
    /// member's value, which `D.m` becomes (so that it is a constant
    /// expression wherever `D.m` is used, an array's size included).
    Object {
        /// `T{16, 32, ..}`.
        whole: Expr,
        /// Member name and value.
        members: Vec<(String, Expr)>,
    },
}

/// The struct template instance whose members are being substituted.
pub struct InstanceScope<'m> {
    /// `Vec`.
    pub template: &'m str,
    /// `Vec<float, 4>`.
    pub instance: &'m str,
    /// The template's member types that are no templates (`using F = F_;`,
    /// nested structs), by short name: in `Vec::F::f<Op>` (how
    /// `syntax::from_pest::struct_scope` qualifies `F::template f<Op>`)
    /// the arguments are `f`'s, where in `Vec<N / 2>::f` they are `Vec`'s.
    pub member_types: std::collections::HashSet<String>,
}

/// Substitutes template parameters by name.
pub struct Subst<'m> {
    /// Parameter name → argument.
    pub map: &'m HashMap<String, Replacement>,
    /// In a struct template's instance: qualified names `Vec::make` of
    /// the template's members become `Vec<float, 4>::make`.
    pub scope: Option<&'m InstanceScope<'m>>,
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
        if let Some(Replacement::Template(t)) = path.first().and_then(|p| self.map.get(p)) {
            path.splice(0..1, t.iter().cloned());
            return;
        }
        if path.len() < 2 {
            return;
        }
        if let Some(scope) = self.scope {
            if path[0] == scope.template {
                path[0] = scope.instance.to_string();
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
        // `Op<T>` with `Op` a template template parameter.
        if let Some(Replacement::Template(t)) = self.lookup(path) {
            *path = t.clone();
            return;
        }
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
        let mut params = Vec::with_capacity(f.params.len());
        let mut function_packs = HashMap::new();
        for p in std::mem::take(&mut f.params) {
            match self.expand_param(&p) {
                Some(expanded) => {
                    if let Some(name) = &p.name {
                        let names = expanded.iter().filter_map(|q| q.name.as_ref());
                        let elements = names
                            .map(|n| Replacement::Value(name_expr(&n.name, n.span)))
                            .collect();
                        function_packs.insert(name.name.clone(), Replacement::Pack(elements));
                    }
                    params.extend(expanded);
                }
                None => params.push(p),
            }
        }
        f.params = params;
        if !function_packs.is_empty() {
            let mut map = self.map.clone();
            map.extend(function_packs);
            let inner = Subst { map: &map, ..*self };
            return inner.function_rest(f);
        }
        self.function_rest(f);
    }

    /// `Ts... xs` (or `const thread Ts&... xs`), when `Ts` is a pack of this
    /// substitution: one parameter per element, `xs__0`, `xs__1`, ...
    fn expand_param(&self, p: &Param) -> Option<Vec<Param>> {
        if !p.pack {
            return None;
        }
        let mut ty = p.ty.clone();
        let elements =
            self.element_maps(&mut |v| crate::syntax::from_pest::paths::ty(&mut ty, v))?;
        Some(
            elements
                .iter()
                .enumerate()
                .map(|(k, map)| {
                    let mut q = p.clone();
                    q.pack = false;
                    q.name = p.name.as_ref().map(|n| Ident {
                        name: format!("{}__{k}", n.name),
                        span: n.span,
                    });
                    Subst { map, ..*self }.ty(&mut q.ty);
                    q
                })
                .collect(),
        )
    }

    /// For a pattern whose paths `walk` visits: one map per element of the
    /// packs it names (this substitution's map with each pack's name bound
    /// to that element), or `None` when it names none.
    fn element_maps(
        &self,
        walk: &mut dyn FnMut(&mut Visit),
    ) -> Option<Vec<HashMap<String, Replacement>>> {
        let mut packs: Vec<(String, Vec<Replacement>)> = Vec::new();
        let visit = |path: &mut Vec<String>, _: Span, _: PathUse| {
            if let Some(Replacement::Pack(elements)) = self.lookup(path) {
                if !packs.iter().any(|(n, _)| *n == path[0]) {
                    packs.push((path[0].clone(), elements.clone()));
                }
            }
        };
        walk(&mut OwnPacks(visit));
        let n = packs.iter().map(|(_, e)| e.len()).min()?;
        Some(
            (0..n)
                .map(|k| {
                    let mut map = self.map.clone();
                    for (name, elements) in &packs {
                        map.insert(name.clone(), elements[k].clone());
                    }
                    map
                })
                .collect(),
        )
    }

    /// `pattern...`: a substituted copy of `pattern` per element of the
    /// packs it names; `None` when it names none of this substitution's.
    fn expand(&self, pattern: &Expr) -> Option<Vec<Expr>> {
        let mut probe = pattern.clone();
        let maps =
            self.element_maps(&mut |v| crate::syntax::from_pest::paths::expr(&mut probe, v))?;
        Some(
            maps.iter()
                .map(|map| {
                    let mut e = pattern.clone();
                    Subst { map, ..*self }.expr(&mut e);
                    e
                })
                .collect(),
        )
    }

    /// A list of expressions (a call's arguments), each `pattern...`
    /// expanded in place.
    fn exprs(&self, list: &mut Vec<Expr>) {
        let mut out = Vec::with_capacity(list.len());
        for mut e in std::mem::take(list) {
            if let ExprKind::PackExpansion(pattern) = &e.kind {
                if let Some(elements) = self.expand(pattern) {
                    out.extend(elements);
                    continue;
                }
            }
            self.expr(&mut e);
            out.push(e);
        }
        *list = out;
    }

    /// A braced list's items, each `pattern...` expanded in place.
    fn inits(&self, list: &mut Vec<Init>) {
        let mut out = Vec::with_capacity(list.len());
        for mut i in std::mem::take(list) {
            if let Init::Expr(Expr {
                kind: ExprKind::PackExpansion(pattern),
                ..
            }) = &i
            {
                if let Some(elements) = self.expand(pattern) {
                    out.extend(elements.into_iter().map(Init::Expr));
                    continue;
                }
            }
            self.init(&mut i);
            out.push(i);
        }
        *list = out;
    }

    /// A template argument list, `Ts...` and `Ns...` expanded in place.
    fn template_args(&self, list: &mut Vec<TemplateArg>) {
        let mut out = Vec::with_capacity(list.len());
        for mut a in std::mem::take(list) {
            match &a {
                TemplateArg::Expr(Expr {
                    kind: ExprKind::TypePackExpansion(ts),
                    ..
                }) => {
                    let mut probe = (**ts).clone();
                    let maps = self
                        .element_maps(&mut |v| crate::syntax::from_pest::paths::ty(&mut probe, v));
                    if let Some(maps) = maps {
                        for map in &maps {
                            let mut e = TemplateArg::Type((**ts).clone());
                            Subst { map, ..*self }.template_arg(&mut e);
                            out.push(e);
                        }
                        continue;
                    }
                }
                TemplateArg::Expr(Expr {
                    kind: ExprKind::PackExpansion(pattern),
                    ..
                }) => {
                    if let Some(elements) = self.expand(pattern) {
                        out.extend(elements.into_iter().map(TemplateArg::Expr));
                        continue;
                    }
                }
                _ => {}
            }
            self.template_arg(&mut a);
            out.push(a);
        }
        *list = out;
    }

    /// A fold expression over a pack of this substitution: the operator
    /// applied across the elements ([temp.variadic]/10); `None` when the
    /// pattern names none of its packs.
    fn fold(
        &self,
        op: Option<BinaryOp>,
        pattern: &Expr,
        init: Option<&Expr>,
        left: bool,
        span: Span,
    ) -> Option<Expr> {
        let (mut pattern, mut init, mut left) = (pattern, init, left);
        if self.expand(pattern).is_none() {
            // `(init op ... op xs)`: the pack is the second operand.
            let other = init?;
            self.expand(other)?;
            (pattern, init, left) = (other, Some(pattern), true);
        }
        let mut elements = self.expand(pattern)?;
        if let Some(i) = init {
            let mut i = i.clone();
            self.expr(&mut i);
            match left {
                true => elements.insert(0, i),
                false => elements.push(i),
            }
        }
        let combine = |a: Expr, b: Expr| {
            let kind = match op {
                Some(op) => ExprKind::Binary(op, Box::new(a), Box::new(b)),
                None => ExprKind::Comma(vec![a, b]),
            };
            Expr { kind, span }
        };
        let empty = match op {
            Some(BinaryOp::LogicalAnd) => Some(ExprKind::Bool(true)),
            Some(BinaryOp::LogicalOr) => Some(ExprKind::Bool(false)),
            // `void()`: a comma fold over nothing.
            None => Some(ExprKind::Call(
                Box::new(name_expr("void", span)),
                Vec::new(),
            )),
            _ => None,
        };
        Some(match left {
            true => {
                let mut it = elements.into_iter();
                let Some(first) = it.next() else {
                    return empty.map(|kind| Expr { kind, span });
                };
                it.fold(first, &combine)
            }
            false => {
                let mut it = elements.into_iter().rev();
                let Some(last) = it.next() else {
                    return empty.map(|kind| Expr { kind, span });
                };
                it.fold(last, |acc, e| combine(e, acc))
            }
        })
    }

    /// The rest of a function after its parameters' types and packs.
    fn function_rest(&self, f: &mut FunctionDecl) {
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
        self.template_args(&mut ts.args);
        self.rescope(&mut ts.path);
        if !ts.args.is_empty() {
            self.rename_template(&mut ts.path);
            return;
        }
        let Some(Replacement::Type(r)) = self.lookup(&ts.path) else {
            return;
        };
        let mut new = r.clone();
        new.is_constexpr |= ts.is_constexpr;
        // `const thread T&` with `T` a pointer (`device S*`): the `const`
        // and the space are the pointer object's (`device S* const thread&`).
        match new.ptr_ops.last_mut() {
            Some(PtrOp::Pointer { is_const, space }) => {
                *is_const |= ts.is_const;
                if let Some((s, _)) = ts.space {
                    *space = Some(s);
                }
            }
            _ => {
                new.is_const |= ts.is_const;
                if ts.space.is_some() {
                    new.space = ts.space;
                }
            }
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
                if let Some(Replacement::Template(t)) = self.lookup(&ts.path) {
                    ts.path = t.clone();
                } else if let Some(Replacement::Value(v)) = self.lookup(&ts.path) {
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

    /// The data members of `decl` and of its anonymous unions and structs
    /// (their types, array sizes, default initializers, alignments).
    pub fn struct_members(&self, decl: &mut StructDecl) {
        // `alignas(N * sizeof(T))`.
        for l in &mut decl.layout {
            if let LayoutAttribute::Aligned(Some(e), _) = l {
                self.expr(e);
            }
        }
        for m in &mut decl.members {
            self.ty(&mut m.ty);
            m.array.iter_mut().flatten().for_each(|e| self.expr(e));
            m.default.iter_mut().for_each(|i| self.init(i));
        }
        for a in &mut decl.anonymous {
            self.struct_members(a);
        }
    }

    /// The statements of a block. A type declared there (`using T = ..;`,
    /// `struct T {..};`) hides a name of the map for the statements after
    /// it (C++ [basic.scope.hiding]).
    pub fn stmts(&self, stmts: &mut [Stmt]) {
        for (i, s) in stmts.iter_mut().enumerate() {
            let Some(hidden) = self.hidden_by(s) else {
                self.stmt(s);
                continue;
            };
            let map = self.without(&hidden);
            let inner = Subst { map: &map, ..*self };
            // A struct's name is declared at its head (`struct S { S* next; }`),
            // an alias's after its type (`using T = vec<T, 4>;` names the outer `T`).
            match s.kind {
                StmtKind::LocalType(_) => inner.stmt(s),
                _ => self.stmt(s),
            }
            return inner.stmts(&mut stmts[i + 1..]);
        }
    }

    /// The names of the map that statement `s` declares as types.
    fn hidden_by(&self, s: &Stmt) -> Option<Vec<String>> {
        let names: Vec<String> = match &s.kind {
            StmtKind::Alias(a) => vec![a.name.name.clone()],
            StmtKind::LocalType(t) => std::iter::once(&t.decl.name)
                .chain(t.tag.as_ref())
                .map(|n| n.name.clone())
                .collect(),
            _ => return None,
        };
        let hidden: Vec<String> = names
            .into_iter()
            .filter(|n| self.map.contains_key(n))
            .collect();
        (!hidden.is_empty()).then_some(hidden)
    }

    fn without(&self, names: &[String]) -> HashMap<String, Replacement> {
        let mut map = self.map.clone();
        names.iter().for_each(|n| {
            map.remove(n);
        });
        map
    }

    /// A local struct: its members, its member functions and its objects'
    /// declarators (their type names the struct itself).
    fn local_type(&self, t: &mut LocalType) {
        self.struct_members(&mut t.decl);
        for item in &mut t.members {
            match item {
                Item::Struct(s) => self.struct_members(s),
                Item::Alias(a) => {
                    self.ty(&mut a.ty);
                    a.array.iter_mut().flatten().for_each(|e| self.expr(e));
                }
                Item::StaticAssert(a) => self.expr(&mut a.cond),
                Item::Function(f) => self.function(f),
                Item::Template(tp) => {
                    if let crate::syntax::ast::Templated::Function(f) = &mut tp.item {
                        self.function(f);
                    }
                }
                _ => {}
            }
        }
        for d in t.objects.iter_mut().flat_map(|v| &mut v.declarators) {
            d.array.iter_mut().flatten().for_each(|e| self.expr(e));
            d.init.iter_mut().for_each(|i| self.init(i));
        }
    }

    fn block(&self, b: &mut Block) {
        self.stmts(&mut b.stmts);
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
            // `static_assert(BM == BN, ..)` in a template's body holds for
            // each instance's arguments.
            StmtKind::StaticAssert(a) => self.expr(&mut a.cond),
            StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue | StmtKind::Empty => {}
            StmtKind::Alias(a) => self.ty(&mut a.ty),
            StmtKind::LocalType(t) => self.local_type(t),
        }
    }

    /// An initializer.
    pub fn init(&self, i: &mut Init) {
        match i {
            Init::Expr(e) => self.expr(e),
            Init::List(items, _) => self.inits(items),
            Init::Paren(args, _) => self.exprs(args),
            Init::Designated(_, value, _) => self.init(value),
        }
    }

    /// `D.m`'s value, for a parameter `D` of struct type.
    fn object_member(&self, base: &Expr, member: &Ident) -> Option<&Expr> {
        let ExprKind::Name(path) = &base.kind else {
            return None;
        };
        let Some(Replacement::Object { members, .. }) = self.lookup(path) else {
            return None;
        };
        members
            .iter()
            .find(|(n, _)| *n == member.name)
            .map(|(_, v)| v)
    }

    /// An expression; a value parameter's name becomes its value, a type
    /// parameter's name (as in `T(0)`) the type's name.
    pub fn expr(&self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Name(path) if path.len() > 1 => self.rescope(path),
            ExprKind::Member(base, member, false) if self.object_member(base, member).is_some() => {
                let span = e.span;
                *e = self.object_member(base, member).cloned().expect("checked");
                e.span = span;
            }
            ExprKind::Name(path) => match self.lookup(path) {
                Some(Replacement::Value(v) | Replacement::Object { whole: v, .. }) => {
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
                // [temp.local]): the arguments are the template's. In
                // `S::F::f<Op>`, with `F` a member type, they are `f`'s.
                let args_of_template = self.scope.is_some_and(|scope| {
                    path[0] == scope.template
                        && !(path.len() > 2 && scope.member_types.contains(&path[1]))
                });
                if !args_of_template {
                    self.rescope(path);
                }
                self.rename_template(path);
                self.template_args(args)
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
                self.template_args(args);
            }
            ExprKind::Ternary(a, b, c) => {
                self.expr(a);
                self.expr(b);
                self.expr(c);
            }
            ExprKind::Call(callee, args) => {
                self.expr(callee);
                self.exprs(args);
            }
            ExprKind::Cast(_, ts, a) => {
                self.ty(ts);
                self.expr(a);
            }
            ExprKind::InitList(items) => self.inits(items),
            ExprKind::BraceConstruct(path, items) => {
                if let Some(Replacement::Type(r)) = self.lookup(path) {
                    if r.args.is_empty() && r.ptr_ops.is_empty() {
                        *path = r.path.clone();
                    }
                }
                self.inits(items);
            }
            ExprKind::Comma(items) => items.iter_mut().for_each(|x| self.expr(x)),
            // A lambda in a template: its parameters, return type and body
            // name the template's parameters too.
            ExprKind::Lambda(l) => {
                for p in &mut l.params {
                    self.ty(&mut p.ty);
                    p.default.iter_mut().for_each(|e| self.expr(e));
                }
                l.ret.iter_mut().for_each(|t| self.ty(t));
                self.block(&mut l.body);
            }
            ExprKind::SizeOf { operand, .. } => match operand {
                crate::syntax::ast::SizeOperand::Type(ts) => self.ty(ts),
                crate::syntax::ast::SizeOperand::Expr(a) => self.expr(a),
            },
            ExprKind::SizeofPack(name) => {
                if let Some(Replacement::Pack(elements)) = self.map.get(&name.name) {
                    e.kind = ExprKind::Int {
                        value: elements.len() as u64,
                        suffix: crate::syntax::ast::LiteralSuffix::Unsigned,
                        non_decimal: false,
                    };
                }
            }
            ExprKind::Fold {
                op,
                pattern,
                init,
                left,
            } => {
                if let Some(folded) = self.fold(*op, pattern, init.as_deref(), *left, e.span) {
                    *e = folded;
                    return;
                }
                self.expr(pattern);
                init.iter_mut().for_each(|i| self.expr(i));
            }
            // Not expanded here: a pattern naming another template's pack.
            ExprKind::PackExpansion(a) => self.expr(a),
            ExprKind::TypePackExpansion(ts) => self.ty(ts),
            ExprKind::Int { .. }
            | ExprKind::Float { .. }
            | ExprKind::Bool(_)
            | ExprKind::Str(_) => {}
        }
    }
}

/// The expression naming `name`.
fn name_expr(name: &str, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Name(vec![name.to_string()]),
        span,
    }
}

/// A walk of a pattern's paths that leaves out the patterns of expansions
/// nested in it: in `f(g(xs, ys...)...)` the outer expansion is of `xs`
/// only, the inner one of `ys` ([temp.variadic]/5). Its probe copy of the
/// pattern has each nested expansion replaced by a literal.
pub(crate) struct OwnPacks<F>(pub F);

impl<F: FnMut(&mut Vec<String>, Span, PathUse)> crate::syntax::from_pest::paths::Visitor
    for OwnPacks<F>
{
    fn path(&mut self, path: &mut Vec<String>, at: Span, how: PathUse) {
        (self.0)(path, at, how)
    }

    fn expr(&mut self, e: &mut Expr) {
        if matches!(
            e.kind,
            ExprKind::PackExpansion(_) | ExprKind::TypePackExpansion(_) | ExprKind::Fold { .. }
        ) {
            e.kind = ExprKind::Bool(false);
        }
    }
}
