//! Braced-list initialization of aggregates in function bodies, with brace
//! elision: the walk of `sema::aggregate_init`, building naga expressions.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::cxx::functions::accepts;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::aggregate_init::{braced, Builder};
use crate::sema::consteval::ConstValue;
use crate::sema::Program;
use crate::sema::Symbol;
use crate::source_map::Span;
use crate::syntax::ast::{CastKind, Expr, ExprKind, FunctionDecl, Init, PtrOp, TypeSpec};
use crate::types::Type;
use naga::{Expression, Handle};

impl Lowerer<'_, '_> {
    /// A value of type `ty` from the braced list `items`: positional lists
    /// with brace elision, others (designated ones, lists for scalars) as
    /// `init_list` builds them.
    pub(in crate::lower) fn braced_list(
        &mut self,
        fx: &mut FnCtx,
        items: &[Init],
        ty: &Type,
        span: Span,
    ) -> Result<(Handle<Expression>, Type)> {
        let mut builder = ExprBuilder { lw: self, fx };
        if let Some(h) = braced(&mut builder, items, ty, span)? {
            return Ok((h, ty.clone()));
        }
        self.init_list(fx, items, ty, span)
    }

    /// The value of initializer `init` for a `ty`, braced lists with brace
    /// elision.
    pub(in crate::lower) fn initializer(
        &mut self,
        fx: &mut FnCtx,
        init: &Init,
        ty: &Type,
    ) -> Result<(Handle<Expression>, Type)> {
        match init {
            Init::List(items, span) => self.braced_list(fx, items, ty, *span),
            Init::Expr(Expr {
                kind: ExprKind::InitList(items),
                span,
            }) => self.braced_list(fx, items, ty, *span),
            _ => self.init_value(fx, init, ty),
        }
    }

    /// `T{items}` for a type `T`: its constructor where it declares one
    /// that applies, else aggregate initialization.
    pub(in crate::lower) fn braced_value(
        &mut self,
        fx: &mut FnCtx,
        items: &[Init],
        ty: &Type,
        span: Span,
    ) -> Result<Value> {
        if self.is_place_struct(ty) {
            return self.place_aggregate(fx, items, ty, span);
        }
        if let Some(v) = self.brace_constructor(fx, ty, items, span)? {
            return Ok(v);
        }
        let (h, ty) = self.braced_list(fx, items, ty, span)?;
        Ok(Value::Rv(h, ty))
    }

    /// `f({a, b})`: the arguments with each braced list written `T{a, b}`,
    /// `T` the type of the parameter it copy-initializes, when every
    /// function named `callee` that takes this many arguments has a
    /// parameter of type `T` (or `const T&`) there; `None` when no argument
    /// is a braced list or `callee` names no such functions. Overloads that
    /// disagree on `T` (C++ ranks them by list-initialization sequences) and
    /// function templates (a list deduces nothing) are refused.
    pub(in crate::lower) fn typed_list_args(
        &self,
        callee: &Expr,
        args: &[Expr],
    ) -> Result<Option<Vec<Expr>>> {
        let lists = |e: &Expr| matches!(e.kind, ExprKind::InitList(_));
        let (path, explicit) = match &callee.kind {
            ExprKind::Name(path) => (path, false),
            ExprKind::Templated(path, _) => (path, true),
            _ => return Ok(None),
        };
        let Some(first) = args.iter().find(|a| lists(a)) else {
            return Ok(None);
        };
        let name = path.join("::");
        let candidates: Vec<&FunctionDecl> = match self.program.symbols.get(&name) {
            Some(Symbol::Functions(candidates)) if !explicit => candidates
                .iter()
                .map(|&i| self.program.functions[i])
                .filter(|f| accepts(f, args.len()))
                .collect(),
            _ if !self.program.function_templates(&name).is_empty() => {
                self.template_list_candidates(&name, args, first.span)?
            }
            _ => return Ok(None),
        };
        let mut out = Vec::with_capacity(args.len());
        for (i, arg) in args.iter().enumerate() {
            if !lists(arg) {
                out.push(arg.clone());
                continue;
            }
            let Some(ts) = self.list_parameter(&name, &candidates, i, arg.span)? else {
                return Ok(None);
            };
            let list = Box::new(arg.clone());
            out.push(Expr {
                kind: ExprKind::Cast(CastKind::CStyle, ts, list),
                span: arg.span,
            });
        }
        Ok(Some(out))
    }

    /// The function templates named `name` that take `args`, when every
    /// parameter a braced list is passed to has a type that names none of
    /// the template's parameters (`uint3 elem` of MLX's
    /// `elem_to_loc_2_nd<IdxT>({..}, ..)`): the list initializes that type,
    /// as C++ does. A list deduces nothing, so a dependent parameter is
    /// refused.
    fn template_list_candidates(
        &self,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Vec<&FunctionDecl>> {
        let mut out = Vec::new();
        let mut dependent = false;
        for &t in self.program.function_templates(name) {
            let t = self.program.templates[t];
            let f = crate::sema::templates::template_function(t);
            if !accepts(f, args.len()) {
                continue;
            }
            let params: Vec<&str> = t.params.iter().map(|p| p.name.name.as_str()).collect();
            // A list deduces nothing ([temp.deduct.call]/1). Beside an
            // overload whose parameter there is a fixed type (MLX's
            // `elem_to_loc(IdxT elem, ..)` and `elem_to_loc(uint3 elem, ..)`
            // for `{x, y, z}`), the dependent one is left out; only
            // dependent candidates are refused below.
            if args
                .iter()
                .zip(&f.params)
                .any(|(a, p)| matches!(a.kind, ExprKind::InitList(_)) && names_any(&p.ty, &params))
            {
                dependent = true;
                continue;
            }
            out.push(f);
        }
        if out.is_empty() && dependent {
            return Err(Error::coded(
                Code::Unsupported,
                span,
                format!("a braced list as an argument of function template `{name}`, whose parameter there depends on the template's parameters, is not supported"),
            )
            .note("write the parameter's type before the list: `T{a, b}`"));
        }
        Ok(out)
    }

    /// The value type (written without `const` and `&`) that parameter `i`
    /// of every one of `candidates` (overloads of `name`) has; `None` where
    /// it does not resolve here or is an array parameter, an error where
    /// the candidates disagree.
    fn list_parameter(
        &self,
        name: &str,
        candidates: &[&FunctionDecl],
        i: usize,
        span: Span,
    ) -> Result<Option<TypeSpec>> {
        let mut agreed: Option<(Type, TypeSpec)> = None;
        for f in candidates {
            // `float a[4]` decays to a pointer: no list initializes it.
            if !f.params[i].array.is_empty() {
                return Ok(None);
            }
            let mut ts = f.params[i].ty.clone();
            ts.is_const = false;
            ts.ptr_ops.retain(|op| *op != PtrOp::Reference);
            let Ok(ty) = self.program.resolve_type(&ts) else {
                return Ok(None);
            };
            match &agreed {
                Some((t, _)) if *t != ty => {
                    return Err(Error::coded(
                        Code::Unsupported,
                        span,
                        format!(
                            "the overloads of `{name}` take `{}` and `{}` here: choosing between them for a braced list is not supported",
                            self.program.display(t),
                            self.program.display(&ty)
                        ),
                    )
                    .note("write the parameter's type before the list: `T{a, b}`"));
                }
                Some(_) => {}
                None => agreed = Some((ty, ts)),
            }
        }
        Ok(agreed.map(|(_, ts)| ts))
    }
}

/// Builds naga expressions for [`braced`].
struct ExprBuilder<'l, 'f, 'p, 'a> {
    lw: &'l mut Lowerer<'p, 'a>,
    fx: &'f mut FnCtx,
}

impl Builder for ExprBuilder<'_, '_, '_, '_> {
    type Value = Handle<Expression>;

    fn program(&self) -> &Program<'_> {
        self.lw.program
    }

    fn expr(&mut self, e: &Expr) -> Result<(Handle<Expression>, Type)> {
        self.lw.rvalue(self.fx, e)
    }

    fn whole(&mut self, init: &Init, ty: &Type) -> Result<Handle<Expression>> {
        Ok(self.lw.initializer(self.fx, init, ty)?.0)
    }

    fn convert(
        &mut self,
        v: Handle<Expression>,
        from: &Type,
        to: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        self.lw.convert(self.fx, v, from, to, false, span)
    }

    fn compose(
        &mut self,
        ty: &Type,
        mut parts: Vec<Handle<Expression>>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if let Type::Struct(id) = ty {
            if self.lw.program.structs.get(*id).is_union {
                let Some(&first) = parts.first() else {
                    let ty = self.lw.naga_type(ty, span)?;
                    return Ok(self.fx.add(Expression::ZeroValue(ty), span));
                };
                return self.lw.union_from_member(self.fx, *id, 0, first, span);
            }
        }
        let fx = &mut *self.fx;
        if let Type::Struct(id) = ty {
            parts = self.lw.with_padding(*id, parts, span, |_, pad| {
                fx.add(Expression::ZeroValue(pad), span)
            })?;
        }
        let ty = self.lw.naga_type(ty, span)?;
        Ok(self.fx.add(
            Expression::Compose {
                ty,
                components: parts,
            },
            span,
        ))
    }

    fn omitted(
        &mut self,
        ty: &Type,
        index: usize,
        elem: &Type,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let program = self.lw.program;
        if !program.has_member_defaults(ty) {
            let h = self.lw.naga_type(elem, span)?;
            return Ok(self.fx.add(Expression::ZeroValue(h), span));
        }
        // Left out: the member's default initializer.
        let v = match ty {
            Type::Struct(id) => ConstValue::default_member(*id, index, program),
            _ => ConstValue::default_of(elem, program),
        };
        match self.lw.const_value(self.fx, &v, span) {
            Value::Rv(h, _) => Ok(h),
            _ => unreachable!("constants are values"),
        }
    }
}

/// Whether type `ts` names one of `params` (a template's parameters), in
/// its name or its template arguments.
fn names_any(ts: &TypeSpec, params: &[&str]) -> bool {
    ts.path.iter().any(|p| params.contains(&p.as_str()))
        || ts.args.iter().any(|a| match a {
            crate::syntax::ast::TemplateArg::Type(t) => names_any(t, params),
            crate::syntax::ast::TemplateArg::Expr(e) => {
                let mut found = false;
                crate::sema::callgraph::visit_expr(e, &mut |x| {
                    found |= matches!(&x.kind, ExprKind::Name(p) if p.iter().any(|n| params.contains(&n.as_str())));
                });
                found
            }
        })
}
