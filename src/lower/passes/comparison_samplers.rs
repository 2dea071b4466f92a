//! Samplers the host sets take the WGSL type their use asks for.
//!
//! Metal: one `sampler` type. A sampler state made with a compare function
//! (`MTLSamplerDescriptor.compareFunction`) is what `sample_compare` and
//! `gather_compare` need; nothing in the shader's types says which a
//! `[[sampler(n)]]` argument, an argument-buffer member or a helper's
//! `sampler` parameter holds.
//!
//! WGSL: `sampler` and `sampler_comparison` are types of their own;
//! `textureSampleCompare*` and `textureGatherCompare` take the second, the
//! other sampling functions the first.
//!
//! Mapping: lowering gives such samplers the type a look at the entry
//! point's own body suggests (`sema::callgraph::sampler_compared`) and
//! leaves their uses unchecked; this pass then settles each from its uses
//! in the IR. A helper's sampler parameter takes the type its uses ask
//! for, and those uses count as uses of what each caller passes, up to the
//! entry point's globals. A global shared by entry points that use it both
//! ways is split: the entry points that compare get a copy of their own at
//! the same binding. A sampler used both ways in one entry point, or a
//! `constexpr` one used against its `compare_func`, is refused (E0323).
//! Reflection (`SamplerInfo::comparison`) follows the settled types.

use crate::diagnostics::Code;
use crate::lower::passes::ir_walk::visit;
use crate::sema::Error;
use crate::source_map::Span;
use naga::{Expression, Function, GlobalVariable, Handle, Module, Statement, TypeInner};
use std::collections::{HashMap, HashSet};

/// A function of the module: a helper or an entry point's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Func {
    Helper(Handle<Function>),
    Entry(usize),
}

/// What a sampler expression names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Origin {
    /// A global, in one entry point (`None`: named by a helper).
    Global(Handle<GlobalVariable>, Option<usize>),
    /// A parameter of a function.
    Param(Func, u32),
}

/// How a sampler is used: where it first compares, where it first samples.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Uses {
    compare: Option<naga::Span>,
    plain: Option<naga::Span>,
}

impl Uses {
    /// Adds `other`'s uses; true if that changed anything.
    fn join(&mut self, other: Uses) -> bool {
        let before = *self;
        self.compare = self.compare.or(other.compare);
        self.plain = self.plain.or(other.plain);
        *self != before
    }
}

/// A sampler binding whose comparison type this pass changed, for
/// reflection: the entry point's WGSL name, the binding, the new kind.
pub(crate) struct Settled {
    pub entry: String,
    pub binding: naga::ResourceBinding,
    pub comparison: bool,
}

/// Gives every sampler the host sets (`settable`) and every helper's
/// sampler parameter the type its uses ask for.
pub(crate) fn settle(
    module: &mut Module,
    settable: &HashSet<Handle<GlobalVariable>>,
) -> Result<Vec<Settled>, Vec<Error>> {
    let uses = propagated_uses(module);
    let comparison = module.types.insert(
        naga::Type {
            name: None,
            inner: TypeInner::Sampler { comparison: true },
        },
        naga::Span::UNDEFINED,
    );
    let plain = module.types.insert(
        naga::Type {
            name: None,
            inner: TypeInner::Sampler { comparison: false },
        },
        naga::Span::UNDEFINED,
    );
    let mut settled = Vec::new();
    let mut sorted: Vec<(&Origin, &Uses)> = uses.iter().collect();
    sorted.sort_by_key(|(o, _)| origin_order(o));
    for (origin, u) in sorted {
        let wants = match (u.compare, u.plain) {
            (Some(c), Some(p)) => return Err(both_ways(c, p)),
            (Some(_), None) => true,
            _ => false,
        };
        let ty = if wants { comparison } else { plain };
        match *origin {
            Origin::Param(f, i) => {
                let function = match f {
                    Func::Helper(h) => &mut module.functions[h],
                    Func::Entry(e) => &mut module.entry_points[e].function,
                };
                function.arguments[i as usize].ty = ty;
            }
            Origin::Global(g, entry) => {
                let is_comparison = matches!(
                    module.types[module.global_variables[g].ty].inner,
                    TypeInner::Sampler { comparison: true }
                );
                if is_comparison == wants {
                    continue;
                }
                if !settable.contains(&g) {
                    return Err(vec![constexpr_mismatch(u, wants)]);
                }
                settled.extend(retype_global(module, &uses, g, entry, ty, wants));
            }
        }
    }
    Ok(settled)
}

/// Sets global `g`'s type to `ty` for `entry`: in place where no other
/// entry point uses it the other way, else in a copy for `entry`.
fn retype_global(
    module: &mut Module,
    uses: &HashMap<Origin, Uses>,
    g: Handle<GlobalVariable>,
    entry: Option<usize>,
    ty: Handle<naga::Type>,
    wants: bool,
) -> Vec<Settled> {
    let others_differ = uses.iter().any(|(o, u)| match *o {
        Origin::Global(h, e) if h == g && e != entry => {
            (u.compare.is_some() && u.plain.is_none()) != wants
        }
        _ => false,
    });
    let binding = module.global_variables[g].binding;
    let target = match (others_differ, entry) {
        (true, Some(e)) => {
            let copy = GlobalVariable {
                ty,
                ..module.global_variables[g].clone()
            };
            let span = module.global_variables.get_span(g);
            let h = module.global_variables.append(copy, span);
            for (_, expr) in module.entry_points[e].function.expressions.iter_mut() {
                if *expr == Expression::GlobalVariable(g) {
                    *expr = Expression::GlobalVariable(h);
                }
            }
            Some(e)
        }
        _ => {
            module.global_variables[g].ty = ty;
            None
        }
    };
    let Some(binding) = binding else {
        return Vec::new();
    };
    module
        .entry_points
        .iter()
        .enumerate()
        .filter(|(e, _)| target.is_none_or(|t| t == *e))
        .map(|(_, ep)| Settled {
            entry: ep.name.clone(),
            binding,
            comparison: wants,
        })
        .collect()
}

/// A stable order of origins (globals before parameters), so that errors
/// do not depend on hash order.
fn origin_order(o: &Origin) -> (u8, usize, usize) {
    match *o {
        Origin::Global(g, e) => (0, g.index(), e.map_or(0, |e| e + 1)),
        Origin::Param(Func::Entry(e), i) => (1, e, i as usize),
        Origin::Param(Func::Helper(h), i) => (2, h.index(), i as usize),
    }
}

/// The uses of every sampler, a helper's parameters' uses counted as uses
/// of what its callers pass.
fn propagated_uses(module: &Module) -> HashMap<Origin, Uses> {
    let functions: Vec<(Func, &Function)> = module
        .functions
        .iter()
        .map(|(h, f)| (Func::Helper(h), f))
        .chain(
            module
                .entry_points
                .iter()
                .enumerate()
                .map(|(e, ep)| (Func::Entry(e), &ep.function)),
        )
        .collect();
    let mut uses: HashMap<Origin, Uses> = HashMap::new();
    // Parameter `(callee, i)` is given `origin` at some call.
    let mut passed: Vec<(Origin, Origin)> = Vec::new();
    for (func, function) in &functions {
        for (h, expr) in function.expressions.iter() {
            if let Expression::ImageSample {
                sampler, depth_ref, ..
            } = *expr
            {
                let Some(origin) = origin_of(*func, function, sampler) else {
                    continue;
                };
                let span = function.expressions.get_span(h);
                let u = match depth_ref {
                    Some(_) => Uses {
                        compare: Some(span),
                        plain: None,
                    },
                    None => Uses {
                        compare: None,
                        plain: Some(span),
                    },
                };
                uses.entry(origin).or_default().join(u);
            }
        }
        visit(&function.body, &mut |s, _| {
            if let Statement::Call {
                function: callee,
                arguments,
                ..
            } = s
            {
                for (i, a) in arguments.iter().enumerate() {
                    if let Some(origin) = origin_of(*func, function, *a) {
                        passed.push((Origin::Param(Func::Helper(*callee), i as u32), origin));
                    }
                }
            }
        });
    }
    // Metal has no recursion: the call graph is acyclic, so this ends.
    let mut changed = true;
    while changed {
        changed = false;
        for (param, origin) in &passed {
            if let Some(u) = uses.get(param).copied() {
                changed |= uses.entry(*origin).or_default().join(u);
            }
        }
    }
    uses.retain(|o, _| match o {
        Origin::Param(f, i) => {
            let function = functions.iter().find(|(g, _)| g == f).expect("listed").1;
            is_sampler(module, function.arguments[*i as usize].ty)
        }
        Origin::Global(g, _) => is_sampler(module, module.global_variables[*g].ty),
    });
    uses
}

/// What sampler expression `h` of `function` names.
fn origin_of(func: Func, function: &Function, h: Handle<Expression>) -> Option<Origin> {
    match function.expressions[h] {
        Expression::GlobalVariable(g) => Some(Origin::Global(
            g,
            match func {
                Func::Entry(e) => Some(e),
                Func::Helper(_) => None,
            },
        )),
        Expression::FunctionArgument(i) => Some(Origin::Param(func, i)),
        _ => None,
    }
}

fn is_sampler(module: &Module, ty: Handle<naga::Type>) -> bool {
    matches!(module.types[ty].inner, TypeInner::Sampler { .. })
}

fn span_of(s: naga::Span) -> Span {
    let r = s.to_range().unwrap_or(0..0);
    Span::new(r.start, r.end)
}

/// The errors for a sampler used both to compare and to sample: one at
/// each use.
fn both_ways(compare: naga::Span, plain: naga::Span) -> Vec<Error> {
    vec![
        Error::coded(
            Code::TextureUsage,
            span_of(compare),
            "this sampler compares here, and the same sampler samples without comparing (next error): WGSL's `sampler_comparison` and `sampler` are different types",
        )
        .note("pass two samplers, one made with a compare function for the comparisons"),
        Error::coded(
            Code::TextureUsage,
            span_of(plain),
            "this sampler samples without comparing here, and the same sampler compares (previous error)",
        ),
    ]
}

/// The error for a `constexpr sampler` used against its `compare_func`
/// through a helper.
fn constexpr_mismatch(u: &Uses, wants: bool) -> Error {
    let at = if wants { u.compare } else { u.plain };
    let message = if wants {
        "this sampler is not a comparison sampler (give it a `compare_func`)"
    } else {
        "a comparison sampler cannot be used with `sample`; use `sample_compare`"
    };
    Error::coded(Code::TextureUsage, span_of(at.unwrap_or_default()), message)
}
