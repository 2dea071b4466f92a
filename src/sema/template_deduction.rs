//! Template argument deduction ([temp.deduct.call]): a function template's
//! parameter types matched against its call's argument types, binding
//! type, non-type, template template and pack parameters; also the
//! matching of a partial specialisation's arguments (`struct_templates`).

use super::templates::{template_name, CallArg, TemplateValue};
use super::{consteval, Error, Program, Result};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{self, TemplateArg, TemplateParamKind};
use crate::types::Type;

/// Deduction of one call's template arguments (also the matching of a
/// partial specialisation's arguments, see `struct_templates`).
pub(super) struct Deduce<'p, 'a, 't> {
    pub(super) program: &'p Program<'a>,
    pub(super) template: &'t ast::TemplateDecl,
    /// Parameters below this index were given explicitly: not deduced.
    pub(super) fixed: usize,
    pub(super) bound: Vec<Option<TemplateValue>>,
    /// Deducing from the argument for element `k` of a function parameter
    /// pack (`Ts... xs`): packs bind their element `k`.
    pub(super) slot: Option<usize>,
    /// Per template parameter pack: the elements deduced so far.
    pub(super) elements: Vec<Vec<Option<TemplateValue>>>,
}

impl Deduce<'_, '_, '_> {
    fn index(&self, name: &str) -> Option<usize> {
        self.template
            .params
            .iter()
            .position(|p| p.name.name == name)
    }

    /// Parameter type `pattern` against argument type `arg`. References and
    /// pointers deduce from what they refer to; by-value parameters take the
    /// argument's type without references and cv (our value types have none).
    pub(super) fn param(&mut self, pattern: &ast::TypeSpec, arg: &Type, span: Span) -> Result<()> {
        let arg = match (pattern.ptr_ops.as_slice(), arg) {
            // `const thread P& p` bound to a pointer: `P` is the pointer.
            ([ast::PtrOp::Reference], Type::Pointer(p)) if !p.is_reference => arg,
            ([_, ..], Type::Pointer(p)) => &p.pointee,
            // An array for a `T*` parameter decays first ([temp.deduct.call]/2).
            ([ast::PtrOp::Pointer { .. }], Type::Array(e, _)) => e,
            _ => arg,
        };
        self.base(pattern, arg, span)
    }

    /// Parameter `p` (its type and array declarators, `thread U dst[TN]`)
    /// against argument type `arg`: each array dimension takes one level of
    /// an array argument (its length deduces a value parameter named there),
    /// or the first one a pointer's pointee, as C++ adjusts the parameter.
    pub(super) fn declared_param(&mut self, p: &ast::Param, call: &CallArg) -> Result<()> {
        let (arg, span) = (&call.ty, call.span);
        // A by-value parameter (`W w_local`) given an array lvalue deduces
        // the pointer it decays to ([temp.deduct.call]/2): writes through
        // it reach the caller's array, and it may move along it.
        if let (true, [], Type::Array(e, _), Some(space)) =
            (p.array.is_empty(), p.ty.ptr_ops.as_slice(), arg, call.space)
        {
            let decayed = Type::Pointer(Box::new(crate::types::Pointer {
                space,
                pointee: (**e).clone(),
                is_const: false,
                is_reference: false,
            }));
            return self.param(&p.ty, &decayed, span);
        }
        let mut arg = arg;
        for (k, dim) in p.array.iter().enumerate() {
            arg = match arg {
                Type::Array(e, n) => {
                    if let Some(d) = dim {
                        self.count(&TemplateArg::Expr(d.clone()), *n as i64, span)?;
                    }
                    e
                }
                Type::Pointer(q) if k == 0 && !q.is_reference => &q.pointee,
                _ => return Ok(()),
            };
        }
        self.param(&p.ty, arg, span)
    }

    pub(super) fn base(&mut self, pattern: &ast::TypeSpec, arg: &Type, span: Span) -> Result<()> {
        let name = pattern.name();
        let name = name.strip_prefix("metal::").unwrap_or(&name);
        if pattern.args.is_empty() {
            if let Some(i) = self.index(name) {
                if matches!(self.template.params[i].kind, TemplateParamKind::Type(_)) {
                    self.bind(i, TemplateValue::Type(written_type(arg)), span)?;
                }
            }
            return Ok(());
        }
        // `P<T, N>` against an instance of struct template `P`: each argument.
        if let Type::Struct(id) = arg {
            if let Some((template, written)) = self.program.instance_origins.get(id) {
                // `Op<T>` with `Op` a template template parameter: `Op` is
                // the instance's template.
                let param = self.index(name).filter(|&i| {
                    matches!(self.template.params[i].kind, TemplateParamKind::Template(_))
                });
                if let Some(i) = param {
                    self.bind(i, TemplateValue::Template(template.clone()), span)?;
                }
                if param.is_some() || template == name {
                    self.instance_args(&pattern.args, written, span)?;
                }
            }
            return Ok(());
        }
        // `matrix<T, C, R>` deduces all three (SPIRV-Cross's
        // `spvFMulMatrixMatrix`).
        if let (
            "matrix",
            Type::Matrix {
                scalar,
                columns,
                rows,
            },
        ) = (name, arg)
        {
            if let [TemplateArg::Type(e), c, r] = pattern.args.as_slice() {
                self.base(e, &Type::Scalar(*scalar), span)?;
                self.count(c, i64::from(*columns), span)?;
                self.count(r, i64::from(*rows), span)?;
            }
            return Ok(());
        }
        // `simdgroup_matrix<T, R, C>` deduces `T` (its rows and columns
        // are 8, MSL §6.9.4).
        if let ("simdgroup_matrix", Type::SimdgroupMatrix(scalar)) = (name, arg) {
            if let [TemplateArg::Type(e), r, c] = pattern.args.as_slice() {
                self.base(e, &Type::Scalar(*scalar), span)?;
                self.count(r, 8, span)?;
                self.count(c, 8, span)?;
            }
            return Ok(());
        }
        // `vec<T, N>` and `array<T, N>` deduce both; other forms deduce nothing.
        let (elem, n) = match (name, arg) {
            ("vec", Type::Vector(s, n)) => (Type::Scalar(*s), *n as i64),
            // A long vector (`vec<T, 8>`) is held as an array of scalars.
            ("vec", Type::Array(e, n @ (8 | 16))) if matches!(**e, Type::Scalar(_)) => {
                ((**e).clone(), *n as i64)
            }
            ("array", Type::Array(e, n)) => ((**e).clone(), *n as i64),
            _ => return Ok(()),
        };
        if let [TemplateArg::Type(e), count] = pattern.args.as_slice() {
            self.base(e, &elem, span)?;
            self.count(count, n, span)?;
        }
        Ok(())
    }

    /// A struct template pattern's arguments against an instance's written
    /// ones: pairwise, a trailing `Ts...` (or `Ns...`) taking the rest, one
    /// element each (`Tuple<T, Ts...>` against `Tuple<float, int, half>`).
    fn instance_args(
        &mut self,
        pattern: &[TemplateArg],
        written: &[TemplateArg],
        span: Span,
    ) -> Result<()> {
        let (fixed, expansion) = match pattern.split_last() {
            Some((
                TemplateArg::Expr(ast::Expr {
                    kind: ast::ExprKind::TypePackExpansion(ts),
                    ..
                }),
                rest,
            )) => (rest, Some(TemplateArg::Type((**ts).clone()))),
            _ => (pattern, None),
        };
        // Without an expansion, either side may leave out trailing defaulted
        // arguments (`MMATile<T, M, N>` against `MMATile<float, 2, 2,
        // Frag<float>>`): the arguments both write deduce, and the
        // instantiated parameter type is compared with the argument's
        // when the candidate is ranked.
        if expansion.is_some() && written.len() < fixed.len() {
            return Ok(());
        }
        for (p, w) in fixed.iter().zip(written) {
            self.written_arg(p, w, span)?;
        }
        if let Some(p) = expansion {
            let outer = self.slot;
            for (k, w) in written[fixed.len()..].iter().enumerate() {
                self.slot = Some(k);
                self.written_arg(&p, w, span)?;
            }
            self.slot = outer;
        }
        Ok(())
    }

    /// Pattern argument `p` against an instance's written argument `w`.
    fn written_arg(&mut self, p: &TemplateArg, w: &TemplateArg, span: Span) -> Result<()> {
        match w {
            TemplateArg::Type(ts) => {
                let ty = self.program.resolve_type(ts)?;
                if let TemplateArg::Type(pts) = p {
                    self.base(pts, &ty, span)?;
                }
            }
            TemplateArg::Expr(e) => {
                if let Some(n) = consteval::eval(self.program, e)?.as_int() {
                    self.count(p, n, span)?;
                }
            }
        }
        Ok(())
    }

    pub(super) fn count(&mut self, arg: &TemplateArg, n: i64, span: Span) -> Result<()> {
        let name = match arg {
            TemplateArg::Type(ts) if ts.args.is_empty() && ts.ptr_ops.is_empty() => ts.name(),
            TemplateArg::Expr(ast::Expr {
                kind: ast::ExprKind::Name(p),
                ..
            }) => p.join("::"),
            _ => return Ok(()),
        };
        let Some(i) = self.index(&name) else {
            return Ok(());
        };
        // `template <typename U, U v>`: `v`'s type is what `U` is bound to
        // (deduced from the same argument before `v`).
        let p = self
            .program
            .param_in_context(self.template, &self.bound, i)?;
        let TemplateParamKind::Value(ty, _) = &p.kind else {
            return Ok(());
        };
        let s = self.program.value_param_scalar(ty)?;
        self.bind(i, TemplateValue::Value(n, s), span)
    }

    /// The bindings with each deduced pack made whole.
    pub(super) fn packs(mut self, span: Span) -> Result<Vec<Option<TemplateValue>>> {
        for (i, elements) in std::mem::take(&mut self.elements).into_iter().enumerate() {
            if elements.is_empty() || self.bound[i].is_some() {
                continue;
            }
            let Some(values) = elements.into_iter().collect::<Option<Vec<_>>>() else {
                let p = &self.template.params[i].name.name;
                return Err(Error::coded(
                    Code::Template,
                    span,
                    format!("could not deduce every element of template parameter pack `{p}`"),
                ));
            };
            self.bound[i] = Some(TemplateValue::Pack(values));
        }
        Ok(self.bound)
    }

    fn bind(&mut self, i: usize, v: TemplateValue, span: Span) -> Result<()> {
        let pack = self.template.params[i].pack;
        if i < self.fixed && !pack {
            return Ok(());
        }
        if pack {
            // Outside `Ts... xs` nothing is deduced for a pack.
            let Some(k) = self.slot.filter(|_| self.bound[i].is_none()) else {
                return Ok(());
            };
            let elements = &mut self.elements[i];
            if elements.len() <= k {
                elements.resize(k + 1, None);
            }
            // An element given explicitly is not deduced: the argument
            // converts to it.
            if elements[k].is_none() {
                elements[k] = Some(v);
            }
            return Ok(());
        }
        match &self.bound[i] {
            None => {
                self.bound[i] = Some(v);
                Ok(())
            }
            Some(old) if *old == v => Ok(()),
            Some(old) => {
                let show = |v: &TemplateValue| self.program.show_value(v);
                let p = &self.template.params[i].name.name;
                Err(Error::coded(
                    Code::Template,
                    span,
                    format!(
                        "conflicting deductions for template parameter `{p}`: deduced as both `{}` and `{}`",
                        show(old),
                        show(&v)
                    ),
                )
                .note(format!(
                    "candidate template `{}` ignored; name `{p}` explicitly or convert the argument",
                    template_name(self.template)
                )))
            }
        }
    }
}

/// `ty` as a type written in the source has it: a storage texture's
/// format is chosen where it is bound, and an instance's parameter
/// `Tex t` takes the texture as a helper's `texture2d<..> t` does.
fn written_type(ty: &Type) -> Type {
    match ty {
        Type::Texture(t) => Type::Texture(crate::types::Texture { format: None, ..*t }),
        other => other.clone(),
    }
}
