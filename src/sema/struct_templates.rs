//! Struct templates (C++ [temp.class]) with full and partial
//! specialisations ([temp.class.spec]).
//!
//! An instance is made on first use: `Vec<float, 4>` picks the primary
//! template or the most specialised matching specialisation, substitutes the
//! arguments into a copy of the struct and of its members (member functions,
//! constructors, static constants, member aliases), and names everything
//! after the instance: the struct `Vec<float, 4>`, the member function
//! `Vec<float, 4>::len`, the constant `Traits<half>::value`. Those names
//! cannot be written in source, so they never clash, and the rest of the
//! pipeline sees ordinary declarations.
//!
//! Analysis borrows the translation unit, so an instance cannot be declared
//! while it is being analysed: a use of a missing instance records a
//! [`PendingInstance`] and fails; the driver inserts the pending instances
//! into the translation unit ([`insert_instances`]) and analyses again. A use
//! found while declaring program-scope item `i` inserts the instance before
//! item `i` (so that `struct A { Vec<float, 4> v; };` sees it); one found
//! while lowering a function appends it.

use super::subst::{InstanceScope, Replacement, Subst};
use super::templates::{template_name, Deduce, TemplateValue, MAX_STRUCT_INSTANTIATION_DEPTH};
use super::{Error, Program, Result, Symbol};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{self, Item, StructTemplate, TemplateArg, Templated};
use crate::types::Type;
use std::collections::HashMap;

/// An instance to add to the translation unit before analysing it again.
#[derive(Clone, Debug)]
pub struct PendingInstance {
    /// `Vec<float, 4>`.
    pub name: String,
    /// Insert before this item; `None` appends.
    pub at: Option<usize>,
    /// The struct (when it has data members) and its members' declarations.
    pub items: Vec<Item>,
    /// The use that asked for it.
    pub span: Span,
}

/// The instances one analysis round (and its lowering) asked for.
#[derive(Debug, Default)]
pub struct PendingInstances {
    /// Each instance once, in the order first asked for.
    list: Vec<PendingInstance>,
    /// Each instance's position in `list`, by name.
    names: HashMap<String, usize>,
    /// Every use that asked counts, also for an instance asked for before:
    /// an entry point that needs one is not settled (`lower::rounds`).
    requests: usize,
}

impl PendingInstances {
    /// Records a use of undeclared instance `name`; true if it was asked
    /// for before, so that its items need not be made again (a lowering
    /// that goes on past missing instances asks for each from many places).
    pub fn asked_before(&mut self, name: &str) -> bool {
        self.requests += 1;
        self.names.contains_key(name)
    }

    /// Records a use that asks again for what an earlier one asked for
    /// (a helper whose lowering stopped at an undeclared instance, called
    /// again: `lower::cxx::functions`).
    pub fn ask_again(&mut self) {
        self.requests += 1;
    }

    /// Adds an instance first asked for.
    pub fn push(&mut self, p: PendingInstance) {
        log::trace!("instance asked for: {} at {:?}", p.name, p.span);
        if !self.names.contains_key(&p.name) {
            self.names.insert(p.name.clone(), self.list.len());
            self.list.push(p);
        }
    }

    /// How many uses asked for undeclared instances.
    pub fn requests(&self) -> usize {
        self.requests
    }

    /// Instance `name`, if it was asked for.
    pub fn get(&self, name: &str) -> Option<&PendingInstance> {
        self.names.get(name).map(|&i| &self.list[i])
    }

    /// The instances asked for, each once.
    pub fn into_list(self) -> Vec<PendingInstance> {
        self.list
    }
}

/// Inserts `pending` into `tu`. `round` counts the rounds of instantiation;
/// an instance whose members keep needing new instances (`S<N>` holding an
/// `S<N + 1>`) stops at [`MAX_STRUCT_INSTANTIATION_DEPTH`].
pub fn insert_instances(
    tu: &mut ast::TranslationUnit,
    mut pending: Vec<PendingInstance>,
    round: usize,
) -> Result<()> {
    if round >= MAX_STRUCT_INSTANTIATION_DEPTH {
        let p = &pending[0];
        return Err(Error::coded(
            Code::LimitExceeded,
            p.span,
            format!(
                "template instantiation depth exceeds the limit of {MAX_STRUCT_INSTANTIATION_DEPTH} (instantiating `{}`)",
                p.name
            ),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    pending.retain(|p| seen.insert(p.name.clone()));
    // Later positions first, so that earlier indices stay valid; a stable
    // sort keeps request order among instances inserted at one place.
    pending.sort_by_key(|p| std::cmp::Reverse(p.at.unwrap_or(usize::MAX)));
    let mut appended = Vec::new();
    for p in pending {
        match p.at {
            Some(i) => {
                remove_later_copy(tu, &p, i);
                let at = i.min(tu.items.len());
                tu.items.splice(at..at, p.items);
            }
            None => appended.push(p.items),
        }
    }
    for items in appended.into_iter().rev() {
        tu.items.extend(items);
    }
    Ok(())
}

/// Removes the copy of instance `p` that an earlier round inserted after
/// position `at`: a use before it (in a `static_assert` that could only be
/// checked once another instance existed) asks for the instance again,
/// and the new copy, inserted before that use, must be the only one. The
/// same template and arguments give the same items, so the old copy is
/// the run of `p.items.len()` items holding the instance's struct where
/// `p.items` holds it.
fn remove_later_copy(tu: &mut ast::TranslationUnit, p: &PendingInstance, at: usize) {
    let is_instance = |item: &Item| matches!(item, Item::Struct(s) if s.name.name == p.name);
    let Some(offset) = p.items.iter().position(is_instance) else {
        return;
    };
    let old = tu
        .items
        .iter()
        .enumerate()
        .skip(at + offset)
        .find(|(_, item)| is_instance(item))
        .map(|(j, _)| j - offset);
    if let Some(start) = old {
        let end = (start + p.items.len()).min(tu.items.len());
        tu.items.drain(start..end);
    }
}

/// Analyses `tu` and hands the program and its errors to `run` (lowering),
/// again after inserting the struct template instances that analysis or
/// `run` found missing, until none is; then `run`'s result is final.
pub fn analyze_until_complete<T>(
    tu: &mut ast::TranslationUnit,
    given: &super::function_constant_values::FunctionConstantValues,
    mut run: impl FnMut(
        &ast::TranslationUnit,
        &Program<'_>,
        Vec<Error>,
    ) -> std::result::Result<T, Vec<Error>>,
) -> std::result::Result<T, Vec<Error>> {
    // Inserting struct instances changes no kernel instance: each round
    // takes the earlier rounds' instead of instantiating thousands again
    // (MLX's `reduce.metal` needs nine rounds).
    let cache = std::rc::Rc::new(super::templates::InstanceCache::default());
    for round in 0.. {
        // Timed only when the line below is printed: `Instant::now` panics
        // on wasm32-unknown-unknown (the playground), where no logger is set.
        let started = log::log_enabled!(log::Level::Debug).then(std::time::Instant::now);
        let elapsed = || started.map(|s| s.elapsed()).unwrap_or_default();
        let (program, errors) = super::analyze_cached(tu, given, cache.clone());
        let analysed = elapsed();
        let mut pending = program.pending.take().into_list();
        // Lowering a program with missing instances only finds more errors.
        let result = pending
            .is_empty()
            .then(|| run(tu, &program, errors).map_err(|e| program.complete_hints(e)));
        pending.extend(program.pending.take().into_list());
        drop(program);
        log::debug!(
            "struct template round {round}: lowered {}, {} instances missing \
             (analysis {analysed:?}, in all {:?})",
            result.is_some(),
            pending.len(),
            elapsed()
        );
        if pending.is_empty() {
            return result.expect("ran without pending instances");
        }
        insert_instances(tu, pending, round).map_err(|e| vec![e])?;
    }
    unreachable!("the rounds are bounded by insert_instances")
}

impl<'a> Program<'a> {
    /// Records a struct template or one of its specialisations.
    pub(super) fn declare_struct_template(&mut self, t: &'a ast::TemplateDecl) -> Result<()> {
        let Templated::Struct(st) = &t.item else {
            unreachable!("a struct template")
        };
        let name = &st.decl.name;
        if self.symbols.contains_key(&name.name) {
            return Err(Error::coded(
                Code::Redefinition,
                name.span,
                format!("redefinition of `{}` as a struct template", name.name),
            ));
        }
        let list = self.struct_templates.entry(name.name.clone()).or_default();
        match &st.specialization {
            // A declaration may repeat (C++ [basic.def]); a definition may not.
            None if st.forward => {}
            None if list.iter().any(|u| is_primary_definition(u)) => {
                return Err(Error::coded(
                    Code::Redefinition,
                    name.span,
                    format!("redefinition of struct template `{}`", name.name),
                ))
            }
            Some(_) if !list.iter().any(|u| struct_of(u).specialization.is_none()) => {
                return Err(Error::coded(
                    Code::Template,
                    name.span,
                    format!(
                        "`{}` is not a struct template: a specialisation needs the primary template declared before it",
                        name.name
                    ),
                ));
            }
            _ => {}
        }
        if st.specialization.is_none() && t.params.is_empty() {
            return Err(Error::coded(
                Code::Template,
                name.span,
                "a struct template needs at least one template parameter",
            ));
        }
        list.push(t);
        Ok(())
    }

    /// The struct template that `path` starts with, as (name, length of the
    /// prefix naming it): `["Traits", "type"]` → `("Traits", 1)`.
    fn struct_template_prefix(&self, path: &[String]) -> Option<(String, usize)> {
        (1..=path.len()).rev().find_map(|k| {
            let name = path[..k].join("::");
            self.struct_templates
                .contains_key(&name)
                .then_some((name, k))
        })
    }

    /// Whether `path` names a struct template or a member of one.
    pub fn is_struct_template_path(&self, path: &[String]) -> bool {
        self.struct_template_prefix(path).is_some()
    }

    /// `Vec<float, 4>`, `typename Traits<T>::type` (after substitution) as a
    /// type; `None` when `ts` names no struct template.
    pub(super) fn struct_template_type(&self, ts: &ast::TypeSpec) -> Result<Option<Type>> {
        let Some((name, k)) = self.struct_template_prefix(&ts.path) else {
            return Ok(None);
        };
        // `And<>` (every argument defaulted) is written with a list the
        // type's span covers; a bare `And` names no instance.
        let empty_list =
            ts.path.len() == 1 && ts.ptr_ops.is_empty() && ts.span.end > ts.name_span.end;
        if ts.args.is_empty() && !empty_list {
            return Err(Error::coded(
                Code::Template,
                ts.name_span,
                format!(
                    "use of struct template `{name}` requires template arguments: `{name}<...>`"
                ),
            ));
        }
        let instance = self.struct_instance(&name, &ts.args, ts.span)?;
        let scope = &ts.path[k..];
        let full = std::iter::once(instance.clone())
            .chain(scope.iter().cloned())
            .collect::<Vec<_>>()
            .join("::");
        match self.symbols.get(&full) {
            Some(Symbol::Type(ty)) => Ok(Some(ty.clone())),
            _ if scope.is_empty() => Err(Error::coded(
                Code::Unsupported,
                ts.name_span,
                format!(
                    "`{instance}` has no data members; empty structs are not supported as types"
                ),
            )),
            _ => Err(Error::coded(
                Code::UnknownMember,
                ts.name_span,
                format!("no type named `{}` in `{instance}`", scope.join("::")),
            )),
        }
    }

    /// `Traits<float>::value`, `Vec<float, 4>::make`, `Vec<float, 4>` in an
    /// expression: the same path with the instance's name in place of the
    /// template and its arguments; `None` when `path` names no struct template.
    pub fn struct_template_path(
        &self,
        path: &[String],
        args: &[TemplateArg],
        span: Span,
    ) -> Result<Option<Vec<String>>> {
        let Some((name, k)) = self.struct_template_prefix(path) else {
            return Ok(None);
        };
        let instance = self.struct_instance(&name, args, span)?;
        Ok(Some(
            std::iter::once(instance)
                .chain(path[k..].iter().cloned())
                .collect(),
        ))
    }

    /// The instance of struct template `name` for `args`, by name; a missing
    /// one is recorded as pending and is an error until it is inserted.
    fn struct_instance(&self, name: &str, args: &[TemplateArg], span: Span) -> Result<String> {
        let templates = &self.struct_templates[name];
        // The parameters (and default arguments) are the primary
        // template's, from its definition or else a declaration (`template
        // <typename T> struct S;` with only specialisations defined). Only
        // specialisations whose declaration failed have neither: that error
        // is reported there.
        let Some(primary) = templates
            .iter()
            .find(|t| is_primary_definition(t))
            .or_else(|| {
                templates
                    .iter()
                    .find(|t| struct_of(t).specialization.is_none())
            })
        else {
            return Err(Error::coded(
                Code::Template,
                span,
                format!("`{name}` has no primary template definition to instantiate"),
            ));
        };
        let values = self.class_template_arguments(primary, args, span)?;
        let instance = instance_name(self, name, &values);
        if self.symbols.contains_key(&instance) || self.empty_instances.contains(&instance) {
            return Ok(instance);
        }
        if self.seen_instances.contains(&instance) {
            // Declared later in the unit, or its declaration failed (that
            // error is reported there).
            return Err(Error::coded(
                Code::Template,
                span,
                format!("`{instance}` is not declared here: its declaration failed or comes later"),
            ));
        }
        if !self.pending.borrow_mut().asked_before(&instance) {
            let items = self.instance_items(name, templates, &values, &instance, span)?;
            self.pending.borrow_mut().push(PendingInstance {
                name: instance.clone(),
                at: self.current_item.get(),
                items,
                span,
            });
        }
        Err(Error::coded(
            Code::Template,
            span,
            format!("`{instance}` is instantiated on the next analysis round"),
        ))
    }

    /// The arguments of a struct (or variable) template's use, with default
    /// arguments.
    pub(super) fn class_template_arguments(
        &self,
        t: &ast::TemplateDecl,
        args: &[TemplateArg],
        span: Span,
    ) -> Result<Vec<TemplateValue>> {
        if args.len() > t.params.len() && !t.params.iter().any(|p| p.pack) {
            return Err(Error::coded(
                Code::Template,
                span,
                format!(
                    "too many template arguments for `{}`: it has {} template parameter(s), {} given",
                    template_name(t),
                    t.params.len(),
                    args.len()
                ),
            ));
        }
        let mut bound = self.bind_explicit(t, args)?;
        for i in 0..t.params.len() {
            if bound[i].is_none() {
                bound[i] = Some(self.default_value(t, &bound[..i], i, span)?);
            }
        }
        Ok(bound.into_iter().map(Option::unwrap).collect())
    }

    /// The declarations of instance `instance`: the chosen template's struct
    /// and members with its parameters substituted and renamed.
    fn instance_items(
        &self,
        name: &str,
        templates: &[&'a ast::TemplateDecl],
        values: &[TemplateValue],
        instance: &str,
        span: Span,
    ) -> Result<Vec<Item>> {
        let (t, bound) = self.choose_specialization(name, templates, values, span)?;
        let st = struct_of(t);
        let mut map = HashMap::new();
        for (p, v) in t.params.iter().zip(&bound) {
            map.insert(p.name.name.clone(), self.replacement(v, p.span)?);
        }
        // The injected class name: `Vec` inside `Vec`'s members.
        map.insert(
            name.to_string(),
            Replacement::Type(named_type(instance, st.decl.name.span)),
        );
        let scope = InstanceScope {
            template: name,
            instance,
            member_types: member_types(&st.members, name),
        };
        let subst = Subst {
            map: &map,
            scope: Some(&scope),
            templates: false,
        };
        let mut items = Vec::new();
        let mut decl = st.decl.clone();
        decl.name.name = instance.to_string();
        let mut written = Vec::new();
        for v in values {
            let r = self.replacement(v, span)?;
            let flat = match r {
                Replacement::Pack(elements) => elements,
                r => vec![r],
            };
            for r in flat {
                written.push(match r {
                    Replacement::Type(ts) => TemplateArg::Type(ts),
                    Replacement::Value(e) | Replacement::Object { whole: e, .. } => {
                        TemplateArg::Expr(e)
                    }
                    Replacement::Template(path) => TemplateArg::Type(ast::TypeSpec {
                        path,
                        name_span: span,
                        span,
                        ..Default::default()
                    }),
                    Replacement::Pack(_) => unreachable!("packs do not nest"),
                });
            }
        }
        decl.instance_of = Some((name.to_string(), written));
        subst.struct_members(&mut decl);
        items.push(Item::Struct(decl));
        // Nested structs and member aliases go before the struct, whose
        // members may name them (`syntax::from_pest::struct_scope`).
        let mut ahead = 0;
        for item in &st.members {
            let mut item = item.clone();
            match &mut item {
                Item::Function(f) => {
                    f.name.name = rename_member(&f.name.name, name, instance);
                    subst.function(f);
                }
                Item::Global(g) => {
                    for d in &mut g.declarators {
                        d.name.name = rename_member(&d.name.name, name, instance);
                    }
                    subst.var_decl(g);
                }
                Item::Alias(a) => {
                    a.name.name = rename_member(&a.name.name, name, instance);
                    subst.ty(&mut a.ty);
                    a.array.iter_mut().flatten().for_each(|e| subst.expr(e));
                }
                Item::StaticAssert(a) => {
                    subst.expr(&mut a.cond);
                    Subst::new(&member_names(&st.members, name, instance)).expr(&mut a.cond);
                }
                // A member function template: the struct's parameters are
                // substituted, its own stay (they cannot share names).
                Item::Template(t) => {
                    if let Templated::Function(f) = &mut t.item {
                        f.name.name = rename_member(&f.name.name, name, instance);
                        subst.function(f);
                        // Its parameters' defaults may use the struct's
                        // (`typename = enable_if_t<is_convertible_v<U, T>>`).
                        for p in &mut t.params {
                            match &mut p.kind {
                                ast::TemplateParamKind::Type(Some(ts))
                                | ast::TemplateParamKind::Value(ts, None) => subst.ty(ts),
                                ast::TemplateParamKind::Value(ts, Some(e)) => {
                                    subst.ty(ts);
                                    subst.expr(e);
                                }
                                _ => {}
                            }
                        }
                    }
                }
                Item::Struct(s) => {
                    s.name.name = rename_member(&s.name.name, name, instance);
                    subst.struct_members(s);
                }
                _ => {}
            }
            // `using type = integral_constant;` names the instance itself
            // (the injected class name): it follows the struct.
            // (Not `typename S::A::type`, a member of another struct.)
            let names_instance = match &item {
                Item::Alias(a) => a.ty.path == [instance],
                Item::Global(g) => g.ty.path == [instance],
                _ => false,
            };
            if matches!(item, Item::Struct(_) | Item::Alias(_) | Item::Global(_)) && !names_instance
            {
                items.insert(ahead, item);
                ahead += 1;
            } else {
                items.push(item);
            }
        }
        Ok(items)
    }

    /// The primary template or the most specialised matching specialisation,
    /// with its own parameters bound (of a struct or a variable template).
    pub(super) fn choose_specialization(
        &self,
        name: &str,
        templates: &[&'a ast::TemplateDecl],
        values: &[TemplateValue],
        span: Span,
    ) -> Result<(&'a ast::TemplateDecl, Vec<TemplateValue>)> {
        let mut matches = Vec::new();
        for t in templates {
            let Some(pattern) = specialization_of(t) else {
                continue;
            };
            if let Some(bound) = self.match_specialization(t, pattern, values, span)? {
                matches.push((*t, bound));
            }
        }
        // Fewer own parameters is more specialised; a full specialisation
        // has none.
        matches.sort_by_key(|(t, _)| t.params.len());
        match matches.as_slice() {
            [] => {
                let Some(primary) = templates.iter().find(|t| is_primary_definition(t)) else {
                    let shown = values
                        .iter()
                        .map(|v| show_value(self, v))
                        .collect::<Vec<_>>()
                        .join(", ");
                    return Err(Error::coded(
                        Code::Template,
                        span,
                        format!("implicit instantiation of undefined template `{name}<{shown}>`: no specialisation matches and the primary template is only declared"),
                    ));
                };
                Ok((primary, values.to_vec()))
            }
            [(t, _), (u, _), ..] if t.params.len() == u.params.len() => {
                let shown = values
                    .iter()
                    .map(|v| show_value(self, v))
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut e = Error::coded(
                    Code::AmbiguousName,
                    span,
                    format!("ambiguous partial specialisations of `{name}<{shown}>`"),
                );
                for (m, _) in matches
                    .iter()
                    .filter(|(m, _)| m.params.len() == t.params.len())
                {
                    e = e.note(format!(
                        "candidate: the specialisation declared at byte {}",
                        m.span.start
                    ));
                }
                Err(e)
            }
            [(t, bound), ..] => Ok((t, bound.clone())),
        }
    }

    /// The bindings of specialisation `t`'s parameters that make its
    /// `pattern` equal `values`, or `None` when it does not match.
    fn match_specialization(
        &self,
        t: &ast::TemplateDecl,
        pattern: &[TemplateArg],
        values: &[TemplateValue],
        span: Span,
    ) -> Result<Option<Vec<TemplateValue>>> {
        // A pack's elements are arguments like the others (`Widest<T>`
        // matches `Widest<int>`, bound as `T = int, Ts = <>`).
        let flat: Vec<TemplateValue> = values
            .iter()
            .flat_map(|v| match v {
                TemplateValue::Pack(elements) => elements.clone(),
                v => vec![v.clone()],
            })
            .collect();
        let values = flat.as_slice();
        if pattern.len() != values.len() {
            return Ok(None);
        }
        let mut d = Deduce {
            program: self,
            template: t,
            fixed: 0,
            bound: vec![None; t.params.len()],
            slot: None,
            elements: vec![Vec::new(); t.params.len()],
        };
        for (p, v) in pattern.iter().zip(values) {
            let ok = match (p, v) {
                (TemplateArg::Type(ts), TemplateValue::Type(ty)) => d.param(ts, ty, span).is_ok(),
                (_, TemplateValue::Value(n, _)) => d.count(p, *n, span).is_ok(),
                _ => false,
            };
            if !ok {
                return Ok(None);
            }
        }
        let Some(bound) = d.bound.into_iter().collect::<Option<Vec<_>>>() else {
            return Ok(None);
        };
        // Substituting the deduced parameters must give back the arguments
        // (this also checks the parts of the pattern that are not parameters).
        let mut map = HashMap::new();
        for (p, v) in t.params.iter().zip(&bound) {
            map.insert(p.name.name.clone(), self.replacement(v, p.span)?);
        }
        let subst = Subst::new(&map);
        for (p, v) in pattern.iter().zip(values) {
            let mut p = p.clone();
            let same = match (&mut p, v) {
                (TemplateArg::Type(ts), TemplateValue::Type(ty)) => {
                    subst.ty(ts);
                    match (self.resolve_type(ts).ok(), ty) {
                        // `S<device T*>` matches `device const float*` with
                        // `T` a `const float`, which the pointer's `const`
                        // stands for (value types carry none).
                        (Some(Type::Pointer(mut p)), Type::Pointer(a)) => {
                            p.is_const |= a.is_const;
                            *p == **a
                        }
                        (resolved, _) => resolved.as_ref() == Some(ty),
                    }
                }
                (TemplateArg::Type(ts), TemplateValue::Value(n, _)) if ts.ptr_ops.is_empty() => {
                    let mut e = super::templates::type_arg_as_expr(ts);
                    subst.expr(&mut e);
                    super::consteval::eval(self, &e)
                        .ok()
                        .and_then(|c| c.as_int())
                        == Some(*n)
                }
                (TemplateArg::Expr(e), TemplateValue::Value(n, _)) => {
                    subst.expr(e);
                    super::consteval::eval(self, e)
                        .ok()
                        .and_then(|c| c.as_int())
                        == Some(*n)
                }
                _ => false,
            };
            if !same {
                return Ok(None);
            }
        }
        Ok(Some(bound))
    }
}

fn struct_of(t: &ast::TemplateDecl) -> &StructTemplate {
    match &t.item {
        Templated::Struct(s) => s,
        _ => unreachable!("a struct template"),
    }
}

/// Whether `t` is the definition of a primary template (not a
/// specialisation, nor a declaration without a body).
fn is_primary_definition(t: &ast::TemplateDecl) -> bool {
    match &t.item {
        Templated::Struct(s) => s.specialization.is_none() && !s.forward,
        _ => specialization_of(t).is_none(),
    }
}

/// The arguments of a struct or variable template's specialisation;
/// `None` for the primary template.
fn specialization_of(t: &ast::TemplateDecl) -> Option<&[TemplateArg]> {
    match &t.item {
        Templated::Struct(s) => s.specialization.as_deref(),
        Templated::Variable(v) => v.specialization.as_deref(),
        Templated::Function(_) | Templated::Alias(_) => None,
    }
}

/// The short names of the member types of struct template `name` that
/// are no templates (`S::F` for `using F = F_;`): see [`InstanceScope`].
fn member_types(members: &[Item], name: &str) -> std::collections::HashSet<String> {
    let prefix = format!("{name}::");
    members
        .iter()
        .filter_map(|item| match item {
            Item::Alias(a) => Some(&a.name.name),
            Item::Struct(s) => Some(&s.name.name),
            _ => None,
        })
        .filter_map(|n| n.strip_prefix(&prefix))
        .filter(|short| !short.contains("::"))
        .map(str::to_string)
        .collect()
}

/// `Vec::len` → `Vec<float, 4>::len`; a constructor `Vec::Vec` →
/// `Vec<float, 4>::Vec<float, 4>` (a local struct's members too,
/// `lower/stmt/local_types.rs`).
pub(crate) fn rename_member(member: &str, template: &str, instance: &str) -> String {
    let rest = member
        .strip_prefix(template)
        .and_then(|r| r.strip_prefix("::"))
        .unwrap_or(member);
    let (base, twin) = match rest.find('@') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let base = if base == template { instance } else { base };
    format!("{instance}::{base}{twin}")
}

fn show_value(program: &Program, v: &TemplateValue) -> String {
    match v {
        TemplateValue::Type(ty) => program.display(ty),
        TemplateValue::Value(n, crate::types::Scalar::Bool) => (*n != 0).to_string(),
        TemplateValue::Value(n, _) => n.to_string(),
        TemplateValue::Pack(values) => {
            let shown: Vec<String> = values.iter().map(|v| show_value(program, v)).collect();
            shown.join(",")
        }
        TemplateValue::Template(t) => t.clone(),
        TemplateValue::Function(path, values) => {
            super::templates::function_shown(path, values, |v| show_value(program, v))
        }
        TemplateValue::Object(_, values) => {
            format!("{{{}}}", super::templates::object_shown(values, ","))
        }
    }
}

/// `Vec<float, 4>`: how an instance is named and shown; a pack's elements
/// are arguments like the others (`Tuple<float,int>`).
fn instance_name(program: &Program, template: &str, values: &[TemplateValue]) -> String {
    let args: Vec<String> = values
        .iter()
        .filter(|v| !matches!(v, TemplateValue::Pack(p) if p.is_empty()))
        .map(|v| show_value(program, v))
        .collect();
    format!("{template}<{}>", args.join(","))
}

/// A written type naming `name` (an instance or a scalar type), resolved
/// through the symbols.
/// The struct's member type aliases and static constants by their
/// unqualified names, as `instance`'s: a struct-scope `static_assert` is
/// checked at program scope, where they are named only with the struct's.
fn member_names(members: &[Item], template: &str, instance: &str) -> HashMap<String, Replacement> {
    let prefix = format!("{template}::");
    let mut map = HashMap::new();
    for item in members {
        let (name, span, is_type) = match item {
            Item::Alias(a) => (&a.name.name, a.name.span, true),
            Item::Global(g) if g.declarators.len() == 1 => (
                &g.declarators[0].name.name,
                g.declarators[0].name.span,
                false,
            ),
            _ => continue,
        };
        let Some(short) = name.strip_prefix(&prefix).filter(|s| !s.contains(':')) else {
            continue;
        };
        let qualified = crate::syntax::members::member_name(instance, short);
        let replacement = if is_type {
            Replacement::Type(named_type(&qualified, span))
        } else {
            Replacement::Value(ast::Expr {
                kind: ast::ExprKind::Name(vec![qualified]),
                span,
            })
        };
        map.insert(short.to_string(), replacement);
    }
    map
}

pub(super) fn named_type(name: &str, span: Span) -> ast::TypeSpec {
    ast::TypeSpec {
        is_const: false,
        is_constexpr: false,
        space: None,
        path: vec![name.to_string()],
        args: Vec::new(),
        ptr_ops: Vec::new(),
        name_span: span,
        span,
    }
}

impl<'a> Program<'a> {
    /// `typename S::template rebind<U>` with `S` an instance of a struct
    /// template that declares member alias template `rebind`: the aliased
    /// type with the instance's arguments and `U` put in. (Uses inside the
    /// struct and of plain structs are expanded by the parser.)
    pub(super) fn instance_member_alias(&self, ts: &ast::TypeSpec) -> Result<Option<Type>> {
        let Some((member, owner)) = ts.path.split_last() else {
            return Ok(None);
        };
        let Some(Symbol::Type(Type::Struct(id))) = self.symbols.get(&owner.join("::")) else {
            return Ok(None);
        };
        let Some((template, written)) = self.instance_origins.get(id) else {
            return self.plain_member_alias(*id, member, ts);
        };
        let Some(templates) = self.struct_templates.get(template) else {
            return Ok(None);
        };
        let Some(primary) = templates
            .iter()
            .find(|t| struct_of(t).specialization.is_none())
        else {
            return Ok(None);
        };
        let values = self.class_template_arguments(primary, written, ts.span)?;
        let (t, bound) = self.choose_specialization(template, templates, &values, ts.span)?;
        let full = crate::syntax::from_pest::members::member_name(template, member);
        let alias = struct_of(t).members.iter().find_map(|item| match item {
            Item::Template(at) => match &at.item {
                Templated::Alias(a) if a.name.name == full => Some((at, a)),
                _ => None,
            },
            _ => None,
        });
        let Some((at, alias)) = alias else {
            return Ok(None);
        };
        let mut map = HashMap::new();
        for (p, v) in t.params.iter().zip(&bound) {
            map.insert(p.name.name.clone(), self.replacement(v, p.span)?);
        }
        let own = self.class_template_arguments(at, &ts.args, ts.span)?;
        for (p, v) in at.params.iter().zip(&own) {
            map.insert(p.name.name.clone(), self.replacement(v, p.span)?);
        }
        let mut ty = alias.ty.clone();
        Subst::new(&map).ty(&mut ty);
        if !ty.ptr_ops.is_empty() || ty.space.is_some() {
            return Err(Error::coded(
                Code::Unsupported,
                ts.span,
                format!("`{full}` stands for a pointer or reference type; member alias templates of such types are not supported yet"),
            ));
        }
        self.resolve_value_type(&ty).map(Some)
    }

    /// `S::rebind<U>` with `S` naming plain struct `id` through an alias
    /// (`NAXFrag_t::template dtype_frag_t<T>` where `using NAXFrag_t =
    /// BaseNAXFrag;` in a template): its member alias template `member`
    /// with `U` put in.
    fn plain_member_alias(
        &self,
        id: crate::types::StructId,
        member: &str,
        ts: &ast::TypeSpec,
    ) -> Result<Option<Type>> {
        let full = crate::syntax::from_pest::members::member_name(self.struct_name(id), member);
        let Some(at) = self.member_alias_templates.get(&full) else {
            return Ok(None);
        };
        let Templated::Alias(alias) = &at.item else {
            unreachable!("only alias templates are recorded")
        };
        let own = self.class_template_arguments(at, &ts.args, ts.span)?;
        let mut map = HashMap::new();
        for (p, v) in at.params.iter().zip(&own) {
            map.insert(p.name.name.clone(), self.replacement(v, p.span)?);
        }
        let mut ty = alias.ty.clone();
        Subst::new(&map).ty(&mut ty);
        if !ty.ptr_ops.is_empty() || ty.space.is_some() {
            return Ok(None);
        }
        self.resolve_value_type(&ty).map(Some)
    }
}
