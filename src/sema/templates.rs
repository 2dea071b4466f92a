//! Function templates (C++ \[temp\]): declarations, template-argument
//! deduction from call argument types ([temp.deduct.call]), explicit and
//! default arguments, and instantiation by substituting the arguments into
//! a copy of the declaration (see [`super::subst`]). An instantiation is an
//! ordinary function afterwards, so lowering specialises it per call site
//! like any other helper.

use super::subst::{Replacement, Subst};
use super::{consteval, Error, Program, Result};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{self, TemplateArg, TemplateParamKind, Templated};
use crate::types::{AddressSpace, Scalar, Type};
use std::collections::HashMap;
use std::rc::Rc;

pub(super) use super::template_deduction::Deduce;

/// Deepest nesting of instantiations (a template whose instantiation needs
/// another instantiation of itself, e.g. `f<N>` calling `f<N - 1>`, or
/// Tint's `tint_array<tint_array<..>, N>` 65 deep): clang's default
/// (`-ftemplate-depth`, 1024). Each level of a function template's costs
/// lowering a function body's stack, which the translation thread's 1 GiB
/// holds (tests/hostile_input.rs runs it in a debug build).
#[cfg(not(target_arch = "wasm32"))]
pub const MAX_INSTANTIATION_DEPTH: usize = 1024;
/// On wasm32 translation runs on the engine's stack, which bounds
/// recursion: the former limit stays.
#[cfg(target_arch = "wasm32")]
pub const MAX_INSTANTIATION_DEPTH: usize = 64;

/// Deepest nesting of struct template instances (`S<S<S<int>>>`, or `S<N>`
/// holding an `S<N + 1>`), lower than [`MAX_INSTANTIATION_DEPTH`]: each
/// level is one more round of analysing the whole unit
/// (`struct_templates::analyze_until_complete`), so time grows with depth
/// times program size, and with names as long as the nesting, as the cube
/// of the depth (256 levels of `tint_array<..>` take about 3 s in a release
/// build, 1024 would take 150 s). Tint's output of 65 nested WGSL arrays
/// needs 65.
#[cfg(not(target_arch = "wasm32"))]
pub const MAX_STRUCT_INSTANTIATION_DEPTH: usize = 256;
/// On wasm32, as [`MAX_INSTANTIATION_DEPTH`].
#[cfg(target_arch = "wasm32")]
pub const MAX_STRUCT_INSTANTIATION_DEPTH: usize = 64;

/// What of a function template [`Program::instantiate_parts`] makes.
#[derive(Clone, Copy)]
enum Parts {
    Whole,
    Signature,
}

impl Parts {
    fn copy(self, f: &ast::FunctionDecl) -> ast::FunctionDecl {
        match self {
            Parts::Whole => f.clone(),
            Parts::Signature => ast::FunctionDecl {
                stage: f.stage,
                attributes: f.attributes.clone(),
                ret: f.ret.clone(),
                name: f.name.clone(),
                params: f.params.clone(),
                body: None,
                span: f.span,
            },
        }
    }
}

/// A call's argument as deduction sees it.
#[derive(Clone, Debug)]
pub struct CallArg {
    /// Its type (a pointer's type for a pointer).
    pub ty: Type,
    /// Where an lvalue lives. An array lvalue given to a by-value
    /// parameter deduces the pointer into this space it decays to
    /// ([temp.deduct.call]/2); without a space it deduces the array.
    pub space: Option<AddressSpace>,
    /// Where it is written.
    pub span: Span,
}

impl CallArg {
    /// A value, not an lvalue whose place matters.
    pub fn value(ty: Type, span: Span) -> Self {
        CallArg {
            ty,
            space: None,
            span,
        }
    }
}

/// Explicitly instantiated kernels, by the instantiation's span, with the
/// arguments they were made for. The driver analyses a translation unit
/// again after inserting the struct template instances it found missing;
/// an instance depends only on its template and arguments, which that
/// leaves as they were, so the rounds share one.
#[derive(Debug, Default)]
pub struct InstanceCache(std::cell::RefCell<HashMap<Span, CachedInstance>>);

/// A kernel instance of [`InstanceCache`] and the arguments it was made for.
type CachedInstance = (Vec<TemplateValue>, Rc<ast::FunctionDecl>);

/// One template argument after deduction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TemplateValue {
    /// A type argument.
    Type(Type),
    /// A non-type argument: its value, of the parameter's type.
    Value(i64, Scalar),
    /// The arguments of a template parameter pack, one per element.
    Pack(Vec<TemplateValue>),
    /// A template template argument: the struct template's name.
    Template(String),
    /// A function (or function template instance) given for a parameter
    /// of function pointer type (`sema::function_arguments`): its path
    /// and the template arguments written after it.
    Function(Vec<String>, Vec<TemplateValue>),
    /// A non-type argument of a struct type (C++20 [temp.param]/7, as in
    /// MetalPerformancePrimitives' `matmul2d<descriptor, scope>`): the
    /// struct and its members' values, each an integer, `bool` or enum.
    Object(crate::types::StructId, Vec<(i64, Scalar)>),
}

/// The function a function template declares.
pub fn template_function(t: &ast::TemplateDecl) -> &ast::FunctionDecl {
    match &t.item {
        Templated::Function(f) => f,
        _ => unreachable!("only function templates are recorded"),
    }
}

/// The name of the function or struct a template declares.
pub fn template_name(t: &ast::TemplateDecl) -> &str {
    match &t.item {
        Templated::Function(f) => &f.name.name,
        Templated::Struct(s) => &s.decl.name.name,
        Templated::Variable(v) => &v.name.name,
        Templated::Alias(a) => &a.name.name,
    }
}

impl<'a> Program<'a> {
    /// Records a function template under its name.
    pub(super) fn declare_template(&mut self, t: &'a ast::TemplateDecl) -> Result<()> {
        let f = match &t.item {
            Templated::Function(f) => f,
            Templated::Struct(_) => return self.declare_struct_template(t),
            Templated::Variable(_) => return self.declare_variable_template(t),
            // Expanded where used, by the parser; a plain struct's member
            // alias template also where a use names it through an alias.
            Templated::Alias(a) => {
                if a.name.name.contains("::") {
                    self.member_alias_templates.insert(a.name.name.clone(), t);
                }
                return Ok(());
            }
        };
        for (i, p) in t.params.iter().enumerate() {
            if t.params[..i].iter().any(|q| q.name.name == p.name.name) {
                return Err(Error::coded(
                    Code::Redefinition,
                    p.name.span,
                    format!("redefinition of template parameter `{}`", p.name.name),
                ));
            }
        }
        if f.body.is_none() {
            return Ok(());
        }
        if t.specialization.is_some() {
            // Matched to its primary template when an instance is made.
            self.fn_specializations
                .entry(f.name.name.clone())
                .or_default()
                .push(t);
            return Ok(());
        }
        if let Some(super::Symbol::Type(_) | super::Symbol::Constant(_)) =
            self.symbols.get(&f.name.name)
        {
            return Err(Error::coded(
                Code::Redefinition,
                f.name.span,
                format!("redefinition of `{}`", f.name.name),
            ));
        }
        self.templates.push(t);
        // A derived struct's own member template hides the base's.
        if self.inherited.remove(&f.name.name) {
            self.template_names.remove(&f.name.name);
        }
        self.template_names
            .entry(f.name.name.clone())
            .or_default()
            .push(self.templates.len() - 1);
        Ok(())
    }

    /// The function templates named `name`, indices into [`Program::templates`].
    pub fn function_templates(&self, name: &str) -> &[usize] {
        self.template_names
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// Binds every parameter of template `t`: the explicit arguments first,
    /// then deduction from the call's arguments `args` (a pointer argument
    /// as `Type::Pointer`), then default arguments.
    pub fn template_arguments(
        &self,
        t: &ast::TemplateDecl,
        explicit: &[TemplateArg],
        args: &[CallArg],
        span: Span,
    ) -> Result<Vec<TemplateValue>> {
        let f = template_function(t);
        let variadic = t.params.iter().any(|p| p.pack);
        if !variadic && explicit.len() > t.params.len() {
            return Err(Error::coded(
                Code::Template,
                explicit_span(&explicit[t.params.len()]),
                format!(
                    "too many template arguments for `{}`: it has {} template parameter(s), {} given",
                    f.name.name,
                    t.params.len(),
                    explicit.len()
                ),
            ));
        }
        let mut bound = self.bind_explicit(t, explicit)?;
        let fixed = explicit.len().min(t.params.len());
        // A pack's explicit elements come first; deduction may add more
        // (`f<int>(1, 2.0f)` for `f(Ts... xs)`: `Ts` is `int, float`,
        // [temp.arg.explicit]/9).
        let mut elements = vec![Vec::new(); t.params.len()];
        for (i, p) in t.params.iter().enumerate() {
            if let (true, Some(TemplateValue::Pack(given))) = (p.pack, &bound[i]) {
                elements[i] = given.iter().cloned().map(Some).collect();
                bound[i] = None;
            }
        }
        let mut d = Deduce {
            program: self,
            template: t,
            fixed,
            bound,
            slot: None,
            elements,
        };
        let trailing = f
            .params
            .iter()
            .rposition(|p| p.pack)
            .map(|j| f.params.len() - j - 1);
        for (j, p) in f.params.iter().enumerate() {
            if !p.pack {
                // A parameter after the pack takes one of the last arguments.
                let k = match trailing {
                    Some(after) if j > f.params.len() - after - 1 => {
                        (args.len() + j + 1).checked_sub(f.params.len())
                    }
                    _ => Some(j),
                };
                if let Some(arg) = k.and_then(|k| args.get(k)) {
                    d.declared_param(p, arg)?;
                }
                continue;
            }
            // `Ts... xs` takes the arguments between the parameters before
            // and after it, each deducing one element of the packs it names.
            let after = trailing.unwrap_or(0);
            let end = args.len().saturating_sub(after).max(j);
            for (k, arg) in args.iter().enumerate().take(end).skip(j) {
                d.slot = Some(k - j);
                d.param(&p.ty, &arg.ty, arg.span)?;
            }
            d.slot = None;
        }
        let mut bound = d.packs(span)?;
        for i in 0..t.params.len() {
            if bound[i].is_none() {
                bound[i] = Some(self.default_value(t, &bound[..i], i, span)?);
            }
        }
        Ok(bound.into_iter().map(Option::unwrap).collect())
    }

    /// The explicit template arguments `explicit` bound to the parameters of
    /// `t`, in order; a parameter pack takes all that remain.
    pub(super) fn bind_explicit(
        &self,
        t: &ast::TemplateDecl,
        explicit: &[TemplateArg],
    ) -> Result<Vec<Option<TemplateValue>>> {
        let mut bound: Vec<Option<TemplateValue>> = vec![None; t.params.len()];
        let mut given = explicit.iter();
        for i in 0..t.params.len() {
            let p = self.param_in_context(t, &bound[..i], i)?;
            if p.pack {
                let rest: Vec<&TemplateArg> = given.by_ref().collect();
                if !rest.is_empty() {
                    let values = rest.iter().map(|a| self.explicit_value(&p, a));
                    bound[i] = Some(TemplateValue::Pack(values.collect::<Result<_>>()?));
                }
                continue;
            }
            let Some(a) = given.next() else { break };
            bound[i] = Some(self.explicit_value(&p, a)?);
        }
        Ok(bound)
    }

    /// Parameter `i` of `t` with the earlier parameters' arguments put into
    /// its type: the value parameter `v` of `template <typename T, T v>`
    /// (`integral_constant`) has the type of the argument bound to `T`.
    pub(super) fn param_in_context(
        &self,
        t: &ast::TemplateDecl,
        earlier: &[Option<TemplateValue>],
        i: usize,
    ) -> Result<ast::TemplateParam> {
        let mut p = t.params[i].clone();
        let TemplateParamKind::Value(ty, _) = &mut p.kind else {
            return Ok(p);
        };
        // Most value parameters are of a type that names no parameter
        // (`int BM`, `bool kAligned`): building the earlier arguments'
        // replacements for them was a twentieth of MLX's GEMM translation.
        let plain = ty.args.is_empty() && ty.ptr_ops.is_empty() && ty.path.len() == 1;
        if plain && !t.params[..i].iter().any(|q| q.name.name == ty.path[0]) {
            return Ok(p);
        }
        let mut map = HashMap::new();
        for (q, v) in t.params.iter().zip(earlier) {
            if let Some(v) = v {
                map.insert(q.name.name.clone(), self.replacement(v, p.span)?);
            }
        }
        Subst::new(&map).ty(ty);
        Ok(p)
    }

    /// Template argument `a` for parameter `p`, evaluated.
    pub(super) fn explicit_value(
        &self,
        p: &ast::TemplateParam,
        a: &TemplateArg,
    ) -> Result<TemplateValue> {
        match (&p.kind, a) {
            (TemplateParamKind::Type(_), TemplateArg::Type(ts)) => {
                Ok(TemplateValue::Type(self.resolve_type(ts)?))
            }
            (TemplateParamKind::Type(_), TemplateArg::Expr(e)) => Err(Error::coded(
                Code::Template,
                e.span,
                format!("template parameter `{}` needs a type", p.name.name),
            )),
            (TemplateParamKind::Template(_), a) => self.template_template_value(p, a),
            (TemplateParamKind::Value(..), a) if self.is_function_parameter(p) => {
                self.function_argument(p, a)
            }
            (TemplateParamKind::Value(ty, _), a) => {
                let e = match a {
                    TemplateArg::Expr(e) => e.clone(),
                    // A bare name parses as a type; it may be a constant.
                    TemplateArg::Type(ts) if ts.ptr_ops.is_empty() => type_arg_as_expr(ts),
                    TemplateArg::Type(ts) => {
                        return Err(Error::coded(
                            Code::Template,
                            ts.span,
                            format!("template parameter `{}` needs a constant", p.name.name),
                        ))
                    }
                };
                self.constant_argument(p, ty, &e)
            }
        }
    }

    /// The struct template a template template parameter `p` is given.
    fn template_template_value(
        &self,
        p: &ast::TemplateParam,
        a: &TemplateArg,
    ) -> Result<TemplateValue> {
        let (name, span) = match a {
            TemplateArg::Type(ts) if ts.args.is_empty() && ts.ptr_ops.is_empty() => {
                (ts.name(), ts.span)
            }
            TemplateArg::Type(ts) => (String::new(), ts.span),
            TemplateArg::Expr(e) => (String::new(), e.span),
        };
        let name = name.strip_prefix("metal::").unwrap_or(&name);
        if self.struct_templates.contains_key(name) {
            return Ok(TemplateValue::Template(name.to_string()));
        }
        Err(Error::coded(
            Code::Template,
            span,
            format!(
                "template template parameter `{}` needs the name of a struct template",
                p.name.name
            ),
        )
        .note("alias templates and function templates cannot be template template arguments here; wrap the function in a struct template with a static member function"))
    }

    fn constant_argument(
        &self,
        p: &ast::TemplateParam,
        ty: &ast::TypeSpec,
        e: &ast::Expr,
    ) -> Result<TemplateValue> {
        if let Ok(Type::Struct(id)) = self.resolve_type(ty) {
            return self.object_argument(p, id, e);
        }
        let scalar = self.value_param_scalar(ty)?;
        let v = consteval::eval(self, e)?;
        let v = consteval::convert_to(&v, scalar)
            .and_then(|v| v.as_int())
            .ok_or_else(|| {
                Error::coded(
                    Code::Template,
                    e.span,
                    format!(
                        "template argument for `{}` must be an integer constant",
                        p.name.name
                    ),
                )
            })?;
        Ok(TemplateValue::Value(v, scalar))
    }

    /// The argument of `p`, a parameter of struct type `id`: a constant of
    /// that type whose members are integers, `bool`s or enums (the
    /// argument is then known by its members' values, as C++ compares
    /// such arguments member by member, [temp.type]/2).
    fn object_argument(
        &self,
        p: &ast::TemplateParam,
        id: crate::types::StructId,
        e: &ast::Expr,
    ) -> Result<TemplateValue> {
        let v = consteval::eval(self, e)?;
        let consteval::ConstValue::Composite(Type::Struct(got), members) = &v else {
            return Err(Error::coded(
                Code::Template,
                e.span,
                format!(
                    "template argument for `{}` must be a constant of type `{}`",
                    p.name.name,
                    self.display(&Type::Struct(id))
                ),
            ));
        };
        if *got != id {
            return Err(Error::coded(
                Code::Template,
                e.span,
                format!(
                    "template argument for `{}` is a `{}`, not a `{}`",
                    p.name.name,
                    self.display(&Type::Struct(*got)),
                    self.display(&Type::Struct(id))
                ),
            ));
        }
        let values = members
            .iter()
            .map(|m| match *m {
                consteval::ConstValue::Int(n, s) => Some((n, s)),
                consteval::ConstValue::Bool(b) => Some((b as i64, Scalar::Bool)),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                Error::coded(
                    Code::Template,
                    e.span,
                    format!(
                        "`{}` cannot be the type of a template parameter here: only a struct of integer, `bool` and enum members can",
                        self.display(&Type::Struct(id))
                    ),
                )
            })?;
        Ok(TemplateValue::Object(id, values))
    }

    /// The type of a non-type template parameter: an integer or `bool`.
    pub(super) fn value_param_scalar(&self, ty: &ast::TypeSpec) -> Result<Scalar> {
        match self.resolve_type(ty)? {
            Type::Scalar(s) if s != Scalar::Half && s != Scalar::Float => Ok(s),
            other => Err(Error::coded(
                Code::Template,
                ty.span,
                format!(
                    "`{}` cannot be the type of a template parameter; use an integer type",
                    self.display(&other)
                ),
            )),
        }
    }

    /// The default argument of parameter `i`, which may name the earlier ones.
    pub(super) fn default_value(
        &self,
        t: &ast::TemplateDecl,
        earlier: &[Option<TemplateValue>],
        i: usize,
        span: Span,
    ) -> Result<TemplateValue> {
        let p = &t.params[i];
        // A pack given and deduced nothing is empty ([temp.arg.explicit]/4).
        if p.pack {
            return Ok(TemplateValue::Pack(Vec::new()));
        }
        let mut map = HashMap::new();
        for (q, v) in t.params.iter().zip(earlier) {
            let v = v.as_ref().expect("earlier parameters are bound");
            map.insert(q.name.name.clone(), self.replacement(v, p.span)?);
        }
        let subst = Subst::new(&map);
        match &p.kind {
            TemplateParamKind::Type(Some(ts)) => {
                let mut ts = ts.clone();
                subst.ty(&mut ts);
                Ok(TemplateValue::Type(self.resolve_type(&ts)?))
            }
            // The type may name earlier parameters too (`enable_if_t<C<T>,
            // bool> = true`).
            TemplateParamKind::Value(ty, Some(e)) => {
                let (mut ty, mut e) = (ty.clone(), e.clone());
                subst.ty(&mut ty);
                subst.expr(&mut e);
                self.constant_argument(p, &ty, &e)
            }
            TemplateParamKind::Template(Some(path)) => {
                let ts = ast::TypeSpec {
                    path: path.clone(),
                    name_span: p.span,
                    span: p.span,
                    ..Default::default()
                };
                self.template_template_value(p, &TemplateArg::Type(ts))
            }
            _ if !matches!(t.item, Templated::Function(_)) => Err(Error::coded(
                Code::Template,
                span,
                format!(
                    "too few template arguments for `{}`: `{}` has no default",
                    template_name(t),
                    p.name.name
                ),
            )),
            _ => {
                let f = template_function(t);
                let error = Error::coded(
                    Code::Template,
                    span,
                    format!("could not deduce template argument `{}`", p.name.name),
                );
                let params = t
                    .params
                    .iter()
                    .map(|q| q.name.name.as_str())
                    .collect::<Vec<_>>();
                // Named by a parameter whose argument did not have its form
                // (`short` for `konst<T, v>`).
                if let Some(k) = f
                    .params
                    .iter()
                    .position(|fp| mentions(&fp.ty, &p.name.name))
                {
                    return Err(error.note(format!(
                        "candidate template `{}<{}>` ignored: the argument for parameter {} does not have its form, from which `{}` is deduced",
                        f.name.name,
                        params.join(", "),
                        k + 1,
                        p.name.name
                    )));
                }
                Err(error
                .note(format!(
                    "candidate template `{}<{}>` ignored: `{}` appears in no parameter it could be deduced from; name it explicitly: `{}<...>(...)`",
                    f.name.name,
                    t.params.iter().map(|q| q.name.name.as_str()).collect::<Vec<_>>().join(", "),
                    p.name.name,
                    f.name.name
                )))
            }
        }
    }

    /// How template argument `v` is written into an instantiation.
    pub(crate) fn replacement(&self, v: &TemplateValue, span: Span) -> Result<Replacement> {
        Ok(match v {
            TemplateValue::Type(ty) => Replacement::Type(self.type_spec_of(ty, span)?),
            TemplateValue::Value(v, s) => Replacement::Value(value_expr(*v, *s, span)),
            TemplateValue::Pack(values) => Replacement::Pack(
                values
                    .iter()
                    .map(|v| self.replacement(v, span))
                    .collect::<Result<_>>()?,
            ),
            TemplateValue::Template(name) => {
                Replacement::Template(name.split("::").map(str::to_string).collect())
            }
            TemplateValue::Function(path, values) => {
                Replacement::Value(self.function_expr(path, values, span)?)
            }
            TemplateValue::Object(id, values) => self.object_replacement(*id, values, span)?,
        })
    }

    /// A written type that resolves to `ty`.
    pub(crate) fn type_spec_of(&self, ty: &Type, span: Span) -> Result<ast::TypeSpec> {
        let mut ts = ast::TypeSpec {
            is_const: false,
            is_constexpr: false,
            space: None,
            path: Vec::new(),
            args: Vec::new(),
            ptr_ops: Vec::new(),
            name_span: span,
            span,
        };
        match ty {
            Type::Scalar(_)
            | Type::Vector(..)
            | Type::Matrix { .. }
            | Type::Struct(_)
            | Type::Void => {
                ts.path = vec![self.display(ty)];
            }
            // `simdgroup_float8x8` and its siblings name every instance.
            Type::SimdgroupMatrix(s) => {
                ts.path = vec![format!("simdgroup_{}8x8", s.name())];
            }
            Type::Array(elem, n) => {
                ts.path = vec!["array".into()];
                ts.args = vec![
                    TemplateArg::Type(self.type_spec_of(elem, span)?),
                    TemplateArg::Expr(value_expr(*n as i64, Scalar::Int, span)),
                ];
            }
            Type::Atomic(s) => ts.path = vec![format!("atomic_{}", s.name())],
            Type::Packed(s, n) => ts.path = vec![format!("packed_{}{n}", s.name())],
            Type::Sampler { .. } => ts.path = vec!["sampler".into()],
            Type::Texture(t) => {
                let word = |w: &str| ast::TypeSpec {
                    path: w.split("::").map(str::to_string).collect(),
                    name_span: span,
                    span,
                    ..Default::default()
                };
                ts.path = vec![t.shape.name().to_string()];
                ts.args = vec![TemplateArg::Type(word(t.scalar.name()))];
                let access = match t.access {
                    crate::types::TextureAccess::Sample => None,
                    crate::types::TextureAccess::Read => Some("access::read"),
                    crate::types::TextureAccess::Write => Some("access::write"),
                    crate::types::TextureAccess::ReadWrite => Some("access::read_write"),
                };
                ts.args.extend(access.map(|a| TemplateArg::Type(word(a))));
            }
            // `device S*`: the pointee's spelling with the address space
            // and declarator (a pointer to a pointer has none).
            Type::Pointer(p) if !matches!(p.pointee, Type::Pointer(_)) => {
                ts = self.type_spec_of(&p.pointee, span)?;
                ts.space = Some((ast_space(p.space), span));
                ts.is_const = p.is_const;
                ts.ptr_ops = vec![match p.is_reference {
                    true => ast::PtrOp::Reference,
                    false => ast::PtrOp::Pointer {
                        is_const: false,
                        space: None,
                    },
                }];
            }
            other => {
                return Err(Error::coded(
                    Code::Unsupported,
                    span,
                    format!(
                        "`{}` as a template argument is not supported yet",
                        self.display(other)
                    ),
                ))
            }
        }
        Ok(ts)
    }

    /// Template `t` instantiated with `values`, named `name`.
    pub fn instantiate(
        &self,
        t: &ast::TemplateDecl,
        values: &[TemplateValue],
        name: ast::Ident,
    ) -> Result<ast::FunctionDecl> {
        self.instantiate_parts(t, values, name, Parts::Whole)
    }

    /// [`Program::instantiate`] without the body, where the signature does
    /// not depend on it: overload resolution ranks the parameters of every
    /// candidate at every call, and copying each candidate's body there
    /// was a tenth of translating a file of thousands of kernels.
    pub fn instantiate_signature(
        &self,
        t: &ast::TemplateDecl,
        values: &[TemplateValue],
        name: ast::Ident,
    ) -> Result<ast::FunctionDecl> {
        // A `T* thread&` parameter's type depends on whether the body
        // rebinds it (`pointer_references`).
        let f = template_function(t);
        let parts = match f
            .params
            .iter()
            .any(|p| super::pointer_references::is_pointer_reference(&p.ty) || p.pack)
        {
            true => Parts::Whole,
            false => Parts::Signature,
        };
        self.instantiate_parts(t, values, name, parts)
    }

    fn instantiate_parts(
        &self,
        t: &ast::TemplateDecl,
        values: &[TemplateValue],
        name: ast::Ident,
        parts: Parts,
    ) -> Result<ast::FunctionDecl> {
        if let Some(special) = self.explicit_specialization(t, values)? {
            let mut f = parts.copy(template_function(special));
            f.name = name;
            return Ok(f);
        }
        let mut map = HashMap::new();
        for (p, v) in t.params.iter().zip(values) {
            map.insert(p.name.name.clone(), self.replacement(v, p.span)?);
        }
        let mut f = parts.copy(template_function(t));
        super::pack_lengths::check(&f, &map)?;
        Subst::new(&map).function(&mut f);
        // `const thread P& p` with `P` a pointer: passed as the pointer.
        super::pointer_references::function(&mut f);
        f.name = name;
        Ok(f)
    }

    /// The explicit specialisation of template `t` for `values`, if one is
    /// declared: its arguments are the explicit ones, the rest deduced from
    /// its parameter types as for a call ([temp.expl.spec]/11).
    fn explicit_specialization(
        &self,
        t: &ast::TemplateDecl,
        values: &[TemplateValue],
    ) -> Result<Option<&'a ast::TemplateDecl>> {
        let f = template_function(t);
        let Some(list) = self.fn_specializations.get(&f.name.name) else {
            return Ok(None);
        };
        for special in list {
            let sf = template_function(special);
            if sf.params.len() != f.params.len() {
                continue;
            }
            let explicit = special.specialization.as_deref().unwrap_or_default();
            let params = self.declared_params(sf)?;
            let Ok(own) = self.template_arguments(t, explicit, &params, sf.name.span) else {
                continue;
            };
            if own == values {
                return Ok(Some(special));
            }
        }
        Ok(None)
    }

    /// The truth of condition `cond` when it is a constant expression
    /// (`if constexpr`, and `?:` over operands that have no value).
    pub fn constant_truth(&self, cond: &ast::Expr) -> Option<bool> {
        Some(consteval::eval(self, cond).ok()?.as_f64()? != 0.0)
    }

    /// The branch of `if constexpr (cond) then else otherwise` that is
    /// instantiated, the other being discarded ([stmt.if]/2): `Some(None)`
    /// when nothing is. `None` when `cond` is no constant at program scope
    /// (it names a local `constexpr` variable): lowering then keeps both
    /// branches and folds the condition, which differs only for a discarded
    /// branch that would not compile.
    pub fn constexpr_branch<'s>(
        &self,
        cond: &ast::Expr,
        then: &'s ast::Stmt,
        otherwise: &'s Option<Box<ast::Stmt>>,
    ) -> Option<Option<&'s ast::Stmt>> {
        Some(match self.constant_truth(cond)? {
            true => Some(then),
            false => otherwise.as_deref(),
        })
    }

    /// `_float`, `_4`, `_m1`, a pack's elements each so (`_P_float_int`).
    fn push_value_name(&self, name: &mut String, v: &TemplateValue) {
        name.push('_');
        match v {
            TemplateValue::Type(ty) => name.push_str(&self.display(ty)),
            TemplateValue::Value(v, _) if *v < 0 => name.push_str(&format!("m{}", -v)),
            TemplateValue::Value(v, _) => name.push_str(&v.to_string()),
            TemplateValue::Pack(values) => {
                name.push_str(&format!("P{}", values.len()));
                values.iter().for_each(|v| self.push_value_name(name, v));
            }
            TemplateValue::Template(t) => name.push_str(t),
            TemplateValue::Function(path, values) => {
                name.push_str(&path.join("_"));
                values.iter().for_each(|v| self.push_value_name(name, v));
            }
            TemplateValue::Object(_, values) => name.push_str(&object_shown(values, "_")),
        }
    }

    /// `square<float>` as an identifier-friendly name (`square_float`).
    pub fn instance_name(&self, t: &ast::TemplateDecl, values: &[TemplateValue]) -> String {
        let mut name = template_function(t).name.name.clone();
        for v in values {
            self.push_value_name(&mut name, v);
        }
        name.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    }
}

impl Program<'_> {
    /// A template argument as written in a message: `float`, `4`,
    /// `<float, int>` for a pack.
    pub fn show_value(&self, v: &TemplateValue) -> String {
        match v {
            TemplateValue::Type(t) => self.display(t),
            TemplateValue::Value(v, _) => v.to_string(),
            TemplateValue::Pack(values) => {
                let shown: Vec<String> = values.iter().map(|v| self.show_value(v)).collect();
                format!("<{}>", shown.join(", "))
            }
            TemplateValue::Template(t) => t.clone(),
            TemplateValue::Function(path, values) => {
                function_shown(path, values, |v| self.show_value(v))
            }
            TemplateValue::Object(id, values) => format!(
                "{}{{{}}}",
                self.display(&Type::Struct(*id)),
                object_shown(values, ", ")
            ),
        }
    }

    /// How an argument of struct type is written into an instantiation:
    /// `D.m` is member `m`'s value, `D` alone the struct built from all of
    /// them (`T{16, 32, ..}`, as aggregate initialization does).
    fn object_replacement(
        &self,
        id: crate::types::StructId,
        values: &[(i64, Scalar)],
        span: Span,
    ) -> Result<Replacement> {
        let members: Vec<(String, ast::Expr)> = self
            .structs
            .get(id)
            .members
            .iter()
            .zip(values)
            .map(|(m, &(v, s))| (m.name.clone(), value_expr(v, s, span)))
            .collect();
        let ts = self.type_spec_of(&Type::Struct(id), span)?;
        let whole = ast::Expr {
            kind: ast::ExprKind::BraceConstruct(
                ts.path,
                members
                    .iter()
                    .map(|(_, e)| ast::Init::Expr(e.clone()))
                    .collect(),
            ),
            span,
        };
        Ok(Replacement::Object { whole, members })
    }
}

/// `16, 32, 1`: the member values of an argument of struct type.
pub(crate) fn object_shown(values: &[(i64, Scalar)], sep: &str) -> String {
    let shown: Vec<String> = values
        .iter()
        .map(|&(v, s)| match (s, v) {
            (Scalar::Bool, v) => (v != 0).to_string(),
            (_, v) if v < 0 && sep == "_" => format!("m{}", -v),
            (_, v) => v.to_string(),
        })
        .collect();
    shown.join(sep)
}

/// `radix2<float>`: a function argument as written.
pub(crate) fn function_shown(
    path: &[String],
    values: &[TemplateValue],
    show: impl Fn(&TemplateValue) -> String,
) -> String {
    let name = path.join("::");
    match values.is_empty() {
        true => name,
        false => format!(
            "{name}<{}>",
            values.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The written address space of `s`.
fn ast_space(s: crate::types::AddressSpace) -> ast::AddressSpace {
    use crate::types::AddressSpace as A;
    match s {
        A::Device => ast::AddressSpace::Device,
        A::Constant => ast::AddressSpace::Constant,
        A::Thread => ast::AddressSpace::Thread,
        A::Threadgroup => ast::AddressSpace::Threadgroup,
    }
}

/// `static_cast<S>(v)`: a constant of exactly the parameter's type.
pub(crate) fn value_expr(v: i64, s: Scalar, span: Span) -> ast::Expr {
    let mk = |kind| ast::Expr { kind, span };
    if s == Scalar::Bool {
        return mk(ast::ExprKind::Bool(v != 0));
    }
    let lit = mk(ast::ExprKind::Int {
        value: v.unsigned_abs(),
        suffix: ast::LiteralSuffix::None,
        non_decimal: false,
    });
    let lit = if v < 0 {
        mk(ast::ExprKind::Unary(ast::UnaryOp::Neg, Box::new(lit)))
    } else {
        lit
    };
    let ts = ast::TypeSpec {
        is_const: false,
        is_constexpr: false,
        space: None,
        path: vec![s.name().to_string()],
        args: Vec::new(),
        ptr_ops: Vec::new(),
        name_span: span,
        span,
    };
    mk(ast::ExprKind::Cast(
        ast::CastKind::Static,
        ts,
        Box::new(lit),
    ))
}

fn explicit_span(a: &TemplateArg) -> Span {
    match a {
        TemplateArg::Type(t) => t.span,
        TemplateArg::Expr(e) => e.span,
    }
}

/// A template argument written as a type (`N`, `is_same_v<T, U>`) read as
/// the expression it may also be.
pub(crate) fn type_arg_as_expr(ts: &ast::TypeSpec) -> ast::Expr {
    let kind = if ts.args.is_empty() {
        ast::ExprKind::Name(ts.path.clone())
    } else {
        ast::ExprKind::Templated(ts.path.clone(), ts.args.clone())
    };
    ast::Expr {
        kind,
        span: ts.span,
    }
}

impl<'a> Program<'a> {
    /// `template [[host_name("n")]] kernel void f<float>(device float*);`:
    /// the kernel template instantiated under its host name. Explicit
    /// instantiations of helper templates declare nothing new (helpers are
    /// instantiated where they are called).
    pub(super) fn declare_instantiation(&mut self, inst: &'a ast::Instantiation) -> Result<()> {
        let name = &inst.function.name;
        let t = match self.function_templates(&name.name) {
            [] => {
                return Err(Error::coded(
                    Code::Template,
                    name.span,
                    format!("`{}` is not a function template", name.name),
                ))
            }
            [one] => self.templates[*one],
            several => self.instantiated_overload(inst, several)?,
        };
        let tf = template_function(t);
        match inst.function.stage {
            None => return Ok(()),
            Some((ast::Stage::Kernel, _)) => {}
            Some((_, s)) => {
                return Err(Error::coded(
                    Code::Unsupported,
                    s,
                    "explicit instantiation of vertex and fragment templates is not supported yet",
                ))
            }
        }
        if !matches!(tf.stage, Some((ast::Stage::Kernel, _))) {
            return Err(Error::coded(
                Code::Template,
                name.span,
                format!("`{}` is not a kernel template", name.name),
            ));
        }
        let Some((host, host_span)) = &inst.host_name else {
            return Err(Error::coded(
                Code::Unsupported,
                inst.span,
                "explicit instantiation of a kernel without `[[host_name(\"...\")]]` is not supported yet",
            ));
        };
        if !inst.of_template && tf.params.len() != inst.function.params.len() {
            return Err(Error::coded(
                Code::Template,
                inst.span,
                format!(
                    "this declaration has {} parameter(s), the template `{}` has {}",
                    inst.function.params.len(),
                    name.name,
                    tf.params.len()
                ),
            ));
        }
        // `decltype(f<float>) f<float>` writes no parameters: the explicit
        // and default arguments bind every template parameter.
        let args = match inst.of_template {
            true => Vec::new(),
            false => self.declared_params(&inst.function)?,
        };
        let values = self.template_arguments(t, &inst.args, &args, name.span)?;
        let ident = ast::Ident {
            name: host.clone(),
            span: *host_span,
        };
        let f = self.kernel_instance(inst.span, t, &values, ident)?;
        for (p, CallArg { ty: want, span, .. }) in f.params.iter().zip(&args) {
            let ty = self.param_type(p)?;
            if ty != *want {
                return Err(Error::coded(
                    Code::Template,
                    *span,
                    format!(
                        "parameter type `{}` does not match the template's `{}`",
                        self.display(want),
                        self.display(&ty)
                    ),
                ));
            }
        }
        let taken =
            self.symbols.contains_key(host) || !self.instantiated_names.insert(host.clone());
        if taken {
            return Err(Error::coded(
                Code::Redefinition,
                *host_span,
                format!("redefinition of `{host}`"),
            ));
        }
        self.instantiation_index
            .insert(inst.span, self.instantiations.len());
        self.instantiations.push((inst.span, f));
        Ok(())
    }

    /// [`Program::instantiate`] for the explicit instantiation at `at`,
    /// taken from [`Program::instance_cache`] when an earlier analysis
    /// made it with the same arguments.
    fn kernel_instance(
        &self,
        at: Span,
        t: &ast::TemplateDecl,
        values: &[TemplateValue],
        name: ast::Ident,
    ) -> Result<Rc<ast::FunctionDecl>> {
        let mut cache = self.instance_cache.0.borrow_mut();
        if let Some((v, f)) = cache.get(&at) {
            if v == values {
                return Ok(f.clone());
            }
        }
        let f = Rc::new(self.instantiate(t, values, name)?);
        cache.insert(at, (values.to_vec(), f.clone()));
        Ok(f)
    }

    /// Of overloaded function templates `candidates`, the one explicit
    /// instantiation `inst` names: the only one whose template parameters
    /// take its template arguments (MLX's two `block_masked_gemm` kernels,
    /// one with mask type parameters and one without, [temp.explicit]/6).
    fn instantiated_overload(
        &self,
        inst: &ast::Instantiation,
        candidates: &[usize],
    ) -> Result<&'a ast::TemplateDecl> {
        let args = match inst.of_template {
            true => Vec::new(),
            false => self.declared_params(&inst.function)?,
        };
        let name = &inst.function.name;
        let fits: Vec<&'a ast::TemplateDecl> = candidates
            .iter()
            .map(|&i| self.templates[i])
            .filter(|t| {
                let tf = template_function(t);
                (inst.of_template || tf.params.len() == inst.function.params.len())
                    && self
                        .template_arguments(t, &inst.args, &args, name.span)
                        .is_ok()
            })
            .collect();
        match fits.as_slice() {
            [one] => Ok(one),
            [] => Err(Error::coded(
                Code::Template,
                name.span,
                format!(
                    "no overload of function template `{}` takes these template arguments",
                    name.name
                ),
            )),
            _ => Err(Error::coded(
                Code::Unsupported,
                name.span,
                format!(
                    "explicit instantiation of `{}` matches several of its overloads; telling them apart by partial ordering is not supported yet",
                    name.name
                ),
            )),
        }
    }

    fn declared_params(&self, f: &ast::FunctionDecl) -> Result<Vec<CallArg>> {
        f.params
            .iter()
            .map(|p| Ok(CallArg::value(self.param_type(p)?, p.span)))
            .collect()
    }
}

/// Whether type `ts` names `name` (a template parameter): as its type, or
/// in its template arguments (`konst<T, v>` names `T` and `v`).
fn mentions(ts: &ast::TypeSpec, name: &str) -> bool {
    ts.path.iter().any(|p| p == name)
        || ts.args.iter().any(|a| match a {
            TemplateArg::Type(t) => mentions(t, name),
            TemplateArg::Expr(e) => {
                matches!(&e.kind, ast::ExprKind::Name(path) if path.iter().any(|p| p == name))
            }
        })
}
