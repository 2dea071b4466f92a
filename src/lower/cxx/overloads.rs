//! Overload resolution across plain functions and function templates
//! (C++ [over.match.best], simplified to what MSL code relies on):
//! - each viable candidate ranks every argument: exact match, promotion
//!   (`bool`, `char`, `short` and their unsigned forms to `int`),
//!   conversion (other scalar or same-length vector conversions);
//! - a pointer parameter takes a pointer to the same type in the same
//!   address space (`device` and `constant` are told apart only by rank),
//!   adding `const` but never dropping it; a non-`const` reference binds
//!   only a writable lvalue of its type and space ([over.ics.ref]);
//! - of two bindings of the same kind and rank, the one that adds less
//!   `const` is better ([over.ics.rank] 3.2.5-6: `T*` over `const T*`,
//!   `T&` over `const T&` for a non-`const` lvalue);
//! - a candidate whose ranks are all no worse and one better wins;
//! - with equal ranks, a plain function beats a template, and the more
//!   specialised template beats the other (`T*` over `T`, `vec<T, 4>` over
//!   `T`, a concrete type over `T`: [temp.func.order] on the parameter
//!   patterns, which strips references and their qualifiers first, so
//!   `f(T)` and `f(thread T&)` stay ambiguous as in clang);
//! - otherwise the call is ambiguous, and every best candidate is a note.

use crate::diagnostics::Code;
use crate::lower::ctx::function::{FnCtx, LibraryCompetes};
use crate::lower::ctx::value::Value;
use crate::lower::cxx::args::Arg;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::templates::{template_function, CallArg, TemplateValue};
use crate::source_map::Span;
use crate::syntax::ast::{Expr, FunctionDecl, PtrOp, TemplateArg, TypeSpec};
use crate::types::{AddressSpace, Scalar, Type};

/// Rank of one argument's conversion (lower is better).
const EXACT: u32 = 0;
const PROMOTION: u32 = 1;
const CONVERSION: u32 = 2;

/// How one argument is passed to one candidate's parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Rank {
    /// [`EXACT`], [`PROMOTION`] or [`CONVERSION`].
    category: u32,
    /// By value, by reference or by pointer: only bindings of one kind
    /// compare their qualification.
    kind: Passing,
    /// The binding adds `const` (or passes a `device` pointer as
    /// `constant`, or the reverse): worse than one that does not.
    adjusted: bool,
    /// A temporary bound to a `constant` reference (which only a
    /// program-scope constant's value is): worse than binding it to a
    /// `thread` one (SPIRV-Cross's `S(const thread T&)` beside `S(const
    /// constant T&)`).
    outside_thread: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Passing {
    Value,
    Reference,
    Pointer,
}

impl Rank {
    fn value(category: u32) -> Rank {
        Rank {
            category,
            kind: Passing::Value,
            adjusted: false,
            outside_thread: false,
        }
    }

    /// `Less` when `self` is the better conversion ([over.ics.rank]).
    fn compare(&self, other: &Rank) -> std::cmp::Ordering {
        self.category.cmp(&other.category).then(
            match self.kind == other.kind && self.kind != Passing::Value {
                true => self
                    .adjusted
                    .cmp(&other.adjusted)
                    .then(self.outside_thread.cmp(&other.outside_thread)),
                false => std::cmp::Ordering::Equal,
            },
        )
    }
}

/// An argument as overload resolution sees it.
pub(in crate::lower) struct ArgView {
    /// Its type (a pointer's type for a pointer).
    ty: Type,
    /// For an lvalue: its address space and whether it is writable.
    lvalue: Option<(AddressSpace, bool)>,
}

/// A viable candidate.
struct Candidate {
    /// A plain function (user function index) or a template instantiation.
    kind: CandidateKind,
    /// Each argument's rank.
    ranks: Vec<Rank>,
    /// For templates: how specialised each parameter pattern is.
    specificity: Vec<u32>,
    /// How it is shown in an ambiguity note.
    shown: String,
    /// A template with a function parameter pack, which loses a tie to
    /// one without ([temp.deduct.partial]/11: `f(T)` over `f(T, Us...)`).
    variadic: bool,
}

/// What overload resolution did with a call.
pub(in crate::lower) enum Resolution {
    /// The best candidate was called.
    Called(Value),
    /// No candidate was viable.
    NoViable {
        /// The lowered arguments.
        args: Vec<Arg>,
        /// The error of a call: why the candidate (or each) was not viable.
        error: Error,
        /// Why each candidate was not viable, one note each.
        notes: Vec<String>,
    },
}

enum CandidateKind {
    Plain(usize),
    Template(usize, Vec<TemplateValue>),
}

impl Lowerer<'_, '_> {
    /// A call of `name` whose candidates are the plain functions `plain` and
    /// the function templates `templates` (indices into the program's
    /// templates), with explicit template arguments `explicit` (which rule
    /// out the plain functions). Its arguments are `pre`, lowered already,
    /// then `rest`: each is lowered once, ranked and deduced on its type,
    /// and passed to the chosen candidate as it is.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::lower) fn call_overloaded<E: std::borrow::Borrow<Expr>>(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        plain: &[usize],
        templates: &[usize],
        explicit: &[TemplateArg],
        pre: Vec<Arg>,
        rest: &[E],
        callee_span: Span,
        span: Span,
    ) -> Result<Value> {
        let mut decls: Vec<&FunctionDecl> = Vec::new();
        if explicit.is_empty() {
            decls.extend(plain.iter().map(|&i| self.program.functions[i]));
        }
        decls.extend(
            templates
                .iter()
                .map(|&t| template_function(self.program.templates[t])),
        );
        // Taken before the arguments, whose own calls it does not concern.
        let library = std::mem::take(&mut fx.library_competes);
        let args = self.call_args(fx, &decls, pre, rest)?;
        fx.library_competes = library;
        match self.resolve_overloaded(
            fx,
            name,
            plain,
            templates,
            explicit,
            args,
            callee_span,
            span,
        )? {
            Resolution::Called(v) => Ok(v),
            Resolution::NoViable { error, .. } => Err(error),
        }
    }

    /// Overload resolution of a call whose arguments `args` are lowered:
    /// the best viable candidate is called; when none is viable (a
    /// template whose deduction fails is no candidate: [temp.deduct]/8),
    /// the arguments come back with the error that says why each was not.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::lower) fn resolve_overloaded(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        plain: &[usize],
        templates: &[usize],
        explicit: &[TemplateArg],
        args: Vec<Arg>,
        callee_span: Span,
        span: Span,
    ) -> Result<Resolution> {
        let library = std::mem::take(&mut fx.library_competes);
        let views: Vec<ArgView> = args.iter().map(|a| self.arg_view(fx, a)).collect();
        let arg_types: Vec<CallArg> = args
            .iter()
            .zip(&views)
            .map(|(a, v)| CallArg {
                ty: a.ty.clone(),
                space: v.lvalue.map(|(space, _)| space),
                span: a.span,
            })
            .collect();
        let mut viable = Vec::new();
        // Each rejected candidate's error, and how a list of them shows it.
        let mut rejected: Vec<(Error, String)> = Vec::new();
        // Templates taking another number of arguments: notes only.
        let mut miscounted: Vec<String> = Vec::new();
        if explicit.is_empty() {
            for &i in plain {
                let f = self.program.functions[i];
                match self.plain_candidate(i, f, &views)? {
                    Some(c) => viable.push(c),
                    None => {
                        let note = self.plain_rejection(f, &views)?;
                        let e = Error::coded(Code::NoMatchingOverload, span, note.clone());
                        rejected.push((e, note));
                    }
                }
            }
        }
        for &t in templates {
            match self.template_candidate(t, explicit, &arg_types, &views, callee_span) {
                Ok(Some(c)) => viable.push(c),
                Ok(None) => {
                    let f = template_function(self.program.templates[t]);
                    let n = args.len();
                    if !crate::lower::cxx::functions::accepts(f, n) {
                        miscounted.push(format!(
                            "candidate template `{}` not viable: it takes {} argument(s), {n} given",
                            f.name.name,
                            f.params.len()
                        ));
                        continue;
                    }
                    let note = format!(
                        "candidate template `{}` not viable: its parameters do not take these arguments",
                        f.name.name
                    );
                    let e = Error::coded(Code::NoMatchingOverload, span, note.clone());
                    rejected.push((e, note));
                }
                Err(e) => {
                    let f = template_function(self.program.templates[t]);
                    // Deduction's own note names the template and says why.
                    let note = match e.notes.first() {
                        Some(n) if n.starts_with("candidate template") => n.clone(),
                        _ => format!(
                            "candidate template `{}` ignored: {}",
                            f.name.name, e.message
                        ),
                    };
                    rejected.push((e, note));
                }
            }
        }
        if viable.is_empty() {
            let types: Vec<String> = arg_types
                .iter()
                .map(|a| self.program.display(&a.ty))
                .collect();
            let notes: Vec<String> = rejected
                .iter()
                .map(|(_, n)| n.clone())
                .chain(miscounted)
                .collect();
            let error = match rejected.len() {
                // One candidate taking as many arguments: its own error
                // says it best.
                1 if rejected[0].0.code != Code::NoMatchingOverload => {
                    rejected.pop().expect("one").0
                }
                _ => Error::coded(
                    Code::NoMatchingOverload,
                    span,
                    format!(
                        "no matching function for call to `{name}({})`",
                        types.join(", ")
                    ),
                )
                .with_notes(notes.iter().cloned()),
            };
            return Ok(Resolution::NoViable { args, error, notes });
        }
        let best = best_candidates(&viable);
        if best.len() > 1 {
            let mut e = Error::coded(
                Code::AmbiguousCall,
                callee_span,
                format!("call to `{name}` is ambiguous"),
            );
            for &b in &best {
                e = e.note(format!("candidate: {}", viable[b].shown));
            }
            return Err(e);
        }
        let chosen = viable.swap_remove(best[0]);
        // `min(i, n - 1)` of `int`s beside a user `min(bfloat, bfloat)`:
        // the library's exact match is better than a user conversion.
        if library == LibraryCompetes::Yes && chosen.ranks.iter().any(|r| r.category != EXACT) {
            fx.library_competes = LibraryCompetes::Wins;
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("no user overload of `{name}` takes these arguments without conversion"),
            ));
        }
        let index = match chosen.kind {
            CandidateKind::Plain(i) => i,
            CandidateKind::Template(t, values) => self.instance(t, values, callee_span)?,
        };
        self.call_function(fx, index, name, args, callee_span, span)
            .map(Resolution::Called)
    }

    /// Whether some plain function of `plain` takes `args` with standard
    /// conversions (converting constructors aside).
    pub(in crate::lower) fn any_viable_plain(
        &self,
        fx: &FnCtx,
        plain: &[usize],
        args: &[Arg],
    ) -> Result<bool> {
        let views: Vec<ArgView> = args.iter().map(|a| self.arg_view(fx, a)).collect();
        for &i in plain {
            let f = self.program.functions[i];
            if self.plain_candidate(i, f, &views)?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Why plain function `f` does not take `args`.
    fn plain_rejection(&self, f: &FunctionDecl, args: &[ArgView]) -> Result<String> {
        let shown = self.signature(f)?;
        if !crate::lower::cxx::functions::accepts(f, args.len()) {
            return Ok(format!(
                "candidate function `{shown}` not viable: it takes {} argument(s), {} given",
                f.params.len(),
                args.len()
            ));
        }
        for (k, (p, arg)) in f.params.iter().zip(args).enumerate() {
            let ty = self.program.param_type(p)?;
            if self.rank(&ty, arg).is_none() {
                return Ok(format!(
                    "candidate function `{shown}` not viable: no known conversion from `{}` to `{}` for argument {}",
                    self.program.display(&arg.ty),
                    self.program.display(&ty),
                    k + 1
                ));
            }
        }
        Ok(format!("candidate function `{shown}` not viable"))
    }

    /// What overload resolution needs of argument `a`: its type, and where
    /// the object it designates lives.
    fn arg_view(&self, fx: &FnCtx, a: &Arg) -> ArgView {
        let lvalue = match &a.value {
            Value::Place(p) => Some((self.place_space(fx, p.ptr), p.writable)),
            Value::Bytes(b) => Some((self.buffer_space(b.global), b.writable)),
            // A local object holding pointers (`metal/pointer_objects.rs`).
            Value::Agg(a) if a.owned => Some((AddressSpace::Thread, true)),
            _ => None,
        };
        ArgView {
            ty: a.ty.clone(),
            lvalue,
        }
    }

    fn plain_candidate(
        &self,
        index: usize,
        f: &FunctionDecl,
        args: &[ArgView],
    ) -> Result<Option<Candidate>> {
        if !crate::lower::cxx::functions::accepts(f, args.len()) {
            return Ok(None);
        }
        let Some(ranks) = self.ranks(f, args)? else {
            return Ok(None);
        };
        let shown = format!("`{}`", self.signature(f)?);
        Ok(Some(Candidate {
            kind: CandidateKind::Plain(index),
            specificity: Vec::new(),
            ranks,
            shown,
            variadic: false,
        }))
    }

    /// Template `t` for these arguments: `Ok(None)` when its arity does not
    /// fit, an error when deduction fails.
    fn template_candidate(
        &self,
        t: usize,
        explicit: &[TemplateArg],
        args: &[CallArg],
        views: &[ArgView],
        span: Span,
    ) -> Result<Option<Candidate>> {
        let template = self.program.templates[t];
        let f = template_function(template);
        if !crate::lower::cxx::functions::accepts(f, args.len()) {
            return Ok(None);
        }
        let values = self
            .program
            .template_arguments(template, explicit, args, span)?;
        let ident = f.name.clone();
        let instance = self
            .program
            .instantiate_signature(template, &values, ident)?;
        let Some(ranks) = self.ranks(&instance, views)? else {
            return Ok(None);
        };
        let bindings: Vec<String> = template
            .params
            .iter()
            .zip(&values)
            .filter(|(p, _)| !p.name.name.starts_with('<'))
            .map(|(p, v)| format!("{} = {}", p.name.name, self.program.show_value(v)))
            .collect();
        let params: Vec<&str> = template
            .params
            .iter()
            .map(|p| p.name.name.as_str())
            .collect();
        let specificity = f
            .params
            .iter()
            .take(args.len())
            .map(|p| pattern_specificity(&p.ty, &params))
            .collect();
        Ok(Some(Candidate {
            variadic: f.params.iter().any(|p| p.pack),
            kind: CandidateKind::Template(t, values),
            ranks,
            specificity,
            shown: format!(
                "template `{}` [with {}]",
                self.signature(&instance)?,
                bindings.join(", ")
            ),
        }))
    }

    /// Each argument's conversion rank to `f`'s parameters; `None` when
    /// some argument cannot be passed.
    fn ranks(&self, f: &FunctionDecl, args: &[ArgView]) -> Result<Option<Vec<Rank>>> {
        let mut ranks = Vec::new();
        for (p, arg) in f.params.iter().zip(args) {
            let ty = self.program.param_type(p)?;
            match self.rank(&ty, arg) {
                Some(r) => {
                    let r = handle_reference_rank(&p.ty, &ty, arg).unwrap_or(r);
                    ranks.push(const_object_rank(p, r, arg));
                }
                None => return Ok(None),
            }
        }
        Ok(Some(ranks))
    }

    /// The rank of passing `arg` to a parameter of type `param`: a derived
    /// struct passed as its base ranks as a conversion
    /// ([over.best.ics]/6, [over.ics.ref]/1), binding as its base would.
    fn rank(&self, param: &Type, arg: &ArgView) -> Option<Rank> {
        let Some(ty) = self.as_base_type(param, &arg.ty) else {
            return conversion_rank(param, arg);
        };
        let view = ArgView {
            ty,
            lvalue: arg.lvalue,
        };
        conversion_rank(param, &view).map(|r| Rank {
            category: r.category.max(CONVERSION),
            ..r
        })
    }

    /// `float f(float, int)` as written after substitution.
    fn signature(&self, f: &FunctionDecl) -> Result<String> {
        let mut params = Vec::new();
        for p in &f.params {
            params.push(self.program.display(&self.program.param_type(p)?));
        }
        // An `auto` return type is known once the body is lowered.
        let ret = match super::functions::is_auto(&f.ret) {
            true => "auto".to_string(),
            false => self.program.display(&self.program.resolve_type(&f.ret)?),
        };
        Ok(format!("{} {}({})", ret, f.name.name, params.join(", ")))
    }
}

/// The rank of passing `arg` to a parameter of type `param`; `None` when
/// it cannot be passed.
fn conversion_rank(param: &Type, arg: &ArgView) -> Option<Rank> {
    match (param, &arg.ty) {
        (Type::Pointer(p), Type::Pointer(a)) if !p.is_reference && !a.is_reference => {
            pointer_rank(p, a)
        }
        // A pointer to one object for a one-element array parameter
        // (`thread U totals[1]`, adjusted to `thread U*`, given `&total`).
        (Type::Pointer(p), Type::Pointer(a))
            if p.is_reference
                && p.space == AddressSpace::Thread
                && !a.is_reference
                && a.space == AddressSpace::Thread
                && (p.is_const || !a.is_const)
                && matches!(&p.pointee, Type::Array(e, 1) if e.unpacked() == a.pointee.unpacked()) =>
        {
            Some(Rank {
                category: EXACT,
                kind: Passing::Pointer,
                adjusted: p.is_const && !a.is_const,
                outside_thread: false,
            })
        }
        // `device T*& p` given a pointer (variable: `args.rs`): the
        // pointer's own rank, as a reference binds the object itself.
        (Type::Pointer(p), Type::Pointer(a)) if p.is_reference && !a.is_reference => {
            match &p.pointee {
                Type::Pointer(q) => pointer_rank(q, a),
                _ => reference_rank(p, arg),
            }
        }
        (Type::Pointer(p), _) if p.is_reference => reference_rank(p, arg),
        // `nullptr` (typed `void`, `args.rs`): a null pointer conversion
        // ([conv.ptr]/1) to any pointer.
        (Type::Pointer(_), Type::Void) => Some(Rank {
            category: CONVERSION,
            kind: Passing::Pointer,
            adjusted: false,
            outside_thread: false,
        }),
        // An array lvalue for a pointer to its elements ([conv.array], an
        // exact match): a `threadgroup` array passed as `threadgroup T*`.
        (Type::Pointer(p), Type::Array(e, _))
            if e.unpacked() == p.pointee.unpacked()
                && arg.lvalue.is_some_and(|(space, writable)| {
                    space == p.space && (writable || p.is_const)
                }) =>
        {
            Some(Rank {
                category: EXACT,
                kind: Passing::Pointer,
                adjusted: p.is_const,
                outside_thread: false,
            })
        }
        // `&p` of a pointer variable for an array of pointers (adjusted to
        // a pointer to its first element, [dcl.fct]/5).
        (Type::Array(e, _), Type::Pointer(a))
            if a.space == AddressSpace::Thread && !a.is_reference =>
        {
            match (&**e, &a.pointee) {
                (Type::Pointer(p), Type::Pointer(held)) if !p.is_reference => pointer_rank(p, held),
                _ => None,
            }
        }
        (Type::Pointer(_), _) | (_, Type::Pointer(_)) => None,
        (_, ty) => value_rank(param, ty).map(Rank::value),
    }
}

/// `T*` from `U*`: the same type in the same space ([conv.qual] may add
/// `const`; `device` and `constant` pointers pass for each other, worse
/// than an exact match, as this translation does not always tell them
/// apart).
fn pointer_rank(p: &crate::types::Pointer, a: &crate::types::Pointer) -> Option<Rank> {
    let buffers = |s: AddressSpace| matches!(s, AddressSpace::Device | AddressSpace::Constant);
    let space_ok = p.space == a.space || (buffers(p.space) && buffers(a.space));
    if p.pointee != a.pointee || !space_ok || (a.is_const && !p.is_const) {
        return None;
    }
    Some(Rank {
        category: EXACT,
        kind: Passing::Pointer,
        adjusted: (p.is_const && !a.is_const) || p.space != a.space,
        outside_thread: false,
    })
}

/// Binding `space T&` (or `const space T&`) to `arg` ([dcl.init.ref]): a
/// non-`const` reference binds only a writable lvalue of type `T` in
/// `space`; a `const` one binds such an lvalue directly, and anything
/// convertible to `T` through a temporary.
fn reference_rank(p: &crate::types::Pointer, arg: &ArgView) -> Option<Rank> {
    let direct = match arg.lvalue {
        Some((space, writable)) => {
            let buffers =
                |s: AddressSpace| matches!(s, AddressSpace::Device | AddressSpace::Constant);
            let space_ok = space == p.space || (buffers(space) && buffers(p.space));
            arg.ty == p.pointee && space_ok && (writable || p.is_const)
        }
        None => false,
    };
    // A temporary lives in `thread` memory (or, a program-scope constant,
    // in `constant` memory): a `device` or `threadgroup` reference cannot
    // bind one (the `device` twin of a `const` member function does not
    // take a temporary object).
    let temporary_space = matches!(p.space, AddressSpace::Thread | AddressSpace::Constant);
    if !(direct || (p.is_const && temporary_space)) {
        return None;
    }
    let category = match direct {
        true => EXACT,
        false => value_rank(&p.pointee, &arg.ty)?,
    };
    Some(Rank {
        category,
        kind: Passing::Reference,
        adjusted: p.is_const && !matches!(arg.lvalue, Some((_, false))),
        outside_thread: !direct && p.space != AddressSpace::Thread,
    })
}

/// The object of a `const` member function is a `const T&` in C++, which
/// it takes here by value (`this` of type `T`): ranked as that reference
/// binding, so that a writable object prefers the non-const overload
/// (`thread T& at() thread` over `const thread T& at() const thread`,
/// [over.ics.rank]/3.2.6), as it does between plain member functions.
fn const_object_rank(p: &crate::syntax::ast::Param, r: Rank, arg: &ArgView) -> Rank {
    let is_object = p.name.as_ref().is_some_and(|n| n.name == "this");
    if !is_object || r.kind != Passing::Value || r.category != EXACT {
        return r;
    }
    Rank {
        kind: Passing::Reference,
        adjusted: !matches!(arg.lvalue, Some((_, false))),
        ..r
    }
}

/// Binding a reference to a texture or sampler, `const thread Tex&` or
/// `const device Tex&` (SPIRV-Cross writes one gather wrapper per address
/// space): the reference is the handle itself (sema), so any of them
/// binds, and the one in the argument's space (`thread` for a handle
/// that is a parameter or local) is the better binding, as the others
/// are no binding at all in C++. `None` for other parameters.
fn handle_reference_rank(written: &TypeSpec, param: &Type, arg: &ArgView) -> Option<Rank> {
    if !matches!(param, Type::Texture(_) | Type::Sampler { .. })
        || written.ptr_ops.as_slice() != [PtrOp::Reference]
    {
        return None;
    }
    let space = |s: crate::syntax::ast::AddressSpace| match s {
        crate::syntax::ast::AddressSpace::Device => AddressSpace::Device,
        crate::syntax::ast::AddressSpace::Constant => AddressSpace::Constant,
        crate::syntax::ast::AddressSpace::Threadgroup => AddressSpace::Threadgroup,
        _ => AddressSpace::Thread,
    };
    let written_space = written
        .space
        .map_or(AddressSpace::Thread, |(s, _)| space(s));
    let arg_space = arg.lvalue.map_or(AddressSpace::Thread, |(s, _)| s);
    value_rank(param, &arg.ty)?;
    Some(Rank {
        category: EXACT,
        kind: Passing::Reference,
        adjusted: written_space != arg_space,
        outside_thread: false,
    })
}

/// The rank of converting a value of type `arg` to `param`.
fn value_rank(param: &Type, arg: &Type) -> Option<u32> {
    match (param, arg) {
        _ if param == arg => Some(EXACT),
        // A storage texture's format is chosen where it is bound; the
        // parameter's type names none.
        (Type::Texture(p), Type::Texture(a)) => {
            let same = p.shape == a.shape && p.scalar == a.scalar && p.access == a.access;
            same.then_some(EXACT)
        }
        // Whether a sampler compares is decided by its uses
        // (`passes/comparison_samplers.rs`); Metal has one `sampler` type.
        (Type::Sampler { .. }, Type::Sampler { .. }) => Some(EXACT),
        (Type::Scalar(p), Type::Scalar(a)) => scalar_rank(*p, *a),
        (Type::Vector(p, n), Type::Vector(a, m)) if n == m => {
            scalar_rank(*p, *a).map(|r| r.max(CONVERSION))
        }
        // MSL converts a scalar to a vector implicitly (a splat),
        // a conversion as clang ranks it.
        (Type::Vector(p, _), Type::Scalar(a)) => scalar_rank(*p, *a).map(|r| r.max(CONVERSION)),
        // A packed vector and its aligned vector convert to each other
        // (MSL §2.2.3).
        (Type::Packed(p, n), Type::Vector(a, m) | Type::Packed(a, m))
        | (Type::Vector(p, n), Type::Packed(a, m))
            if n == m =>
        {
            scalar_rank(*p, *a).map(|r| r.max(CONVERSION))
        }
        _ => None,
    }
}

/// `None` where no implicit conversion exists: `float` and `half` do not
/// convert to `bfloat` (MSL §2.1), so a user's `rsqrt(bfloat)` in
/// `namespace metal::precise` (MLX's bf16_math.h) is not viable for a
/// `float` argument and the library's `rsqrt(float)` is called, as in
/// Metal.
fn scalar_rank(param: Scalar, arg: Scalar) -> Option<u32> {
    crate::sema::conversions::bfloat_implicit(arg, param).ok()?;
    let promotes = matches!(
        arg,
        Scalar::Bool | Scalar::Char | Scalar::UChar | Scalar::Short | Scalar::UShort
    );
    Some(if param == Scalar::Int && promotes {
        PROMOTION
    } else {
        CONVERSION
    })
}

/// How much of a parameter pattern is fixed rather than a template
/// parameter: `T` is 0, `T*` and `vec<T, 4>` more, `float` more still.
fn pattern_specificity(ts: &TypeSpec, params: &[&str]) -> u32 {
    let name = ts.name();
    let is_param = ts.args.is_empty() && params.contains(&name.as_str());
    // [temp.deduct.partial] 5-7: a reference parameter is ordered by the
    // type it refers to, without its qualifiers.
    let pointers = ts
        .ptr_ops
        .iter()
        .filter(|op| matches!(op, PtrOp::Pointer { .. }))
        .count() as u32;
    let mut s = match ts.ptr_ops.as_slice() {
        [PtrOp::Reference] => 0,
        _ => pointers + u32::from(ts.space.is_some()) + u32::from(ts.is_const),
    };
    if !is_param {
        s += 2;
    }
    for a in &ts.args {
        s += match a {
            TemplateArg::Type(t) => pattern_specificity(t, params),
            TemplateArg::Expr(_) => 1,
        };
    }
    s
}

/// The candidates no other candidate beats.
fn best_candidates(viable: &[Candidate]) -> Vec<usize> {
    (0..viable.len())
        .filter(|&i| !(0..viable.len()).any(|j| j != i && better(&viable[j], &viable[i])))
        .collect()
}

/// Whether `a` is a better candidate than `b`.
fn better(a: &Candidate, b: &Candidate) -> bool {
    use std::cmp::Ordering::{Greater, Less};
    let pairs = || a.ranks.iter().zip(&b.ranks).map(|(x, y)| x.compare(y));
    let no_worse = pairs().all(|o| o != Greater);
    let some_better = pairs().any(|o| o == Less);
    if !no_worse {
        return false;
    }
    if some_better {
        return true;
    }
    match (&a.kind, &b.kind) {
        (CandidateKind::Plain(_), CandidateKind::Template(..)) => true,
        (CandidateKind::Template(..), CandidateKind::Template(..)) => {
            let ge = a
                .specificity
                .iter()
                .zip(&b.specificity)
                .all(|(x, y)| x >= y);
            let gt = a.specificity.iter().zip(&b.specificity).any(|(x, y)| x > y);
            ge && (gt || (!a.variadic && b.variadic))
        }
        _ => false,
    }
}
