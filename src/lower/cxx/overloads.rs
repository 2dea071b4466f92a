//! Overload resolution across plain functions and function templates
//! (C++ [over.match.best], simplified to what MSL code relies on):
//! - each viable candidate ranks every argument: exact match, promotion
//!   (`bool`, `char`, `short` and their unsigned forms to `int`),
//!   conversion (other scalar or same-length vector conversions);
//! - a candidate whose ranks are all no worse and one better wins;
//! - with equal ranks, a plain function beats a template, and the more
//!   specialised template beats the other (`T*` over `T`, `vec<T, 4>` over
//!   `T`, a concrete type over `T`: [temp.func.order] on the parameter
//!   patterns);
//! - otherwise the call is ambiguous, and every best candidate is a note.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::cxx::args::Arg;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::templates::{template_function, TemplateValue};
use crate::source_map::Span;
use crate::syntax::ast::{Expr, FunctionDecl, TemplateArg, TypeSpec};
use crate::types::{Scalar, Type};

/// Rank of one argument's conversion (lower is better).
const EXACT: u32 = 0;
const PROMOTION: u32 = 1;
const CONVERSION: u32 = 2;

/// A viable candidate.
struct Candidate {
    /// A plain function (user function index) or a template instantiation.
    kind: CandidateKind,
    /// Each argument's rank.
    ranks: Vec<u32>,
    /// For templates: how specialised each parameter pattern is.
    specificity: Vec<u32>,
    /// How it is shown in an ambiguity note.
    shown: String,
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
        let args = self.call_args(fx, &decls, pre, rest)?;
        let arg_types: Vec<(Type, Span)> = args.iter().map(|a| (a.ty.clone(), a.span)).collect();
        let mut viable = Vec::new();
        let mut first_error = None;
        if explicit.is_empty() {
            for &i in plain {
                let f = self.program.functions[i];
                if let Some(c) = self.plain_candidate(i, f, &arg_types)? {
                    viable.push(c);
                }
            }
        }
        for &t in templates {
            match self.template_candidate(t, explicit, &arg_types, callee_span) {
                Ok(Some(c)) => viable.push(c),
                Ok(None) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if viable.is_empty() {
            if let Some(e) = first_error {
                return Err(e);
            }
            let types: Vec<String> = arg_types
                .iter()
                .map(|(t, _)| self.program.display(t))
                .collect();
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!(
                    "no matching function for call to `{name}({})`",
                    types.join(", ")
                ),
            ));
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
        let index = match chosen.kind {
            CandidateKind::Plain(i) => i,
            CandidateKind::Template(t, values) => self.instance(t, values, callee_span)?,
        };
        self.call_function(fx, index, name, args, callee_span, span)
    }

    fn plain_candidate(
        &self,
        index: usize,
        f: &FunctionDecl,
        args: &[(Type, Span)],
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
        }))
    }

    /// Template `t` for these arguments: `Ok(None)` when its arity does not
    /// fit, an error when deduction fails.
    fn template_candidate(
        &self,
        t: usize,
        explicit: &[TemplateArg],
        args: &[(Type, Span)],
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
        let instance = self.program.instantiate(template, &values, ident)?;
        let Some(ranks) = self.ranks(&instance, args)? else {
            return Ok(None);
        };
        let bindings: Vec<String> = template
            .params
            .iter()
            .zip(&values)
            .filter(|(p, _)| !p.name.name.starts_with('<'))
            .map(|(p, v)| match v {
                TemplateValue::Type(ty) => {
                    format!("{} = {}", p.name.name, self.program.display(ty))
                }
                TemplateValue::Value(n, _) => format!("{} = {n}", p.name.name),
            })
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
    fn ranks(&self, f: &FunctionDecl, args: &[(Type, Span)]) -> Result<Option<Vec<u32>>> {
        let mut ranks = Vec::new();
        for (p, (arg, _)) in f.params.iter().zip(args) {
            let ty = self.program.resolve_type(&p.ty)?;
            let ty = self.program.apply_array(ty, &p.array)?;
            match conversion_rank(&ty, arg) {
                Some(r) => ranks.push(r),
                None => return Ok(None),
            }
        }
        Ok(Some(ranks))
    }

    /// `float f(float, int)` as written after substitution.
    fn signature(&self, f: &FunctionDecl) -> Result<String> {
        let mut params = Vec::new();
        for p in &f.params {
            let ty = self.program.resolve_type(&p.ty)?;
            params.push(
                self.program
                    .display(&self.program.apply_array(ty, &p.array)?),
            );
        }
        let ret = self.program.resolve_type(&f.ret)?;
        Ok(format!(
            "{} {}({})",
            self.program.display(&ret),
            f.name.name,
            params.join(", ")
        ))
    }
}

/// The rank of passing an argument of type `arg` to a parameter of type
/// `param` (references and pointers compare what they refer to).
fn conversion_rank(param: &Type, arg: &Type) -> Option<u32> {
    match (param, arg) {
        (Type::Pointer(p), Type::Pointer(a)) if !p.is_reference => {
            (p.pointee == a.pointee).then_some(EXACT)
        }
        (Type::Pointer(p), _) if p.is_reference => conversion_rank(&p.pointee, arg),
        (Type::Pointer(_), _) | (_, Type::Pointer(_)) => None,
        _ if param == arg => Some(EXACT),
        (Type::Scalar(p), Type::Scalar(a)) => Some(scalar_rank(*p, *a)),
        (Type::Vector(p, n), Type::Vector(a, m)) if n == m => {
            Some(scalar_rank(*p, *a).max(CONVERSION))
        }
        _ => None,
    }
}

fn scalar_rank(param: Scalar, arg: Scalar) -> u32 {
    let promotes = matches!(
        arg,
        Scalar::Bool | Scalar::Char | Scalar::UChar | Scalar::Short | Scalar::UShort
    );
    if param == Scalar::Int && promotes {
        PROMOTION
    } else {
        CONVERSION
    }
}

/// How much of a parameter pattern is fixed rather than a template
/// parameter: `T` is 0, `T*` and `vec<T, 4>` more, `float` more still.
fn pattern_specificity(ts: &TypeSpec, params: &[&str]) -> u32 {
    let name = ts.name();
    let is_param = ts.args.is_empty() && params.contains(&name.as_str());
    let mut s = ts.ptr_ops.len() as u32 + u32::from(ts.space.is_some()) + u32::from(ts.is_const);
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
    let no_worse = a.ranks.iter().zip(&b.ranks).all(|(x, y)| x <= y);
    let some_better = a.ranks.iter().zip(&b.ranks).any(|(x, y)| x < y);
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
            ge && gt
        }
        _ => false,
    }
}
