//! The globals an entry point reaches, for Metal's `MTLArgument.isActive`.
//!
//! A global counts as reached when an expression that a statement of the
//! entry point (or of a function it calls) uses refers to it, directly or
//! through operands: the rule `naga::compact` keeps globals by, so an
//! argument only named in dead code is inactive, as Metal's compiler
//! reports it. It is traced in place: a kernel of a file with thousands of
//! instantiations (MLX's `reduce.metal`) costs its own size, not the
//! module's, where a compacted copy of the module per entry point cost a
//! fifth of the translation.

use crate::lower::passes::operands;
use crate::lower::Lowerer;
use crate::reflect::WgslBinding;
use naga::{Block, Expression, Function, GatherMode, GlobalVariable, Handle, Statement};
use std::collections::HashSet;

impl Lowerer<'_, '_> {
    /// The globals `function` (an entry point's body, not yet added to the
    /// module) reaches, through the module's functions it calls.
    pub(in crate::lower) fn reached_globals(&self, function: &Function) -> Reached {
        let m = &self.global.module;
        let mut globals = HashSet::new();
        let mut traced = HashSet::new();
        let mut pending = used_globals(function, &mut globals);
        while let Some(f) = pending.pop() {
            if traced.insert(f) {
                pending.extend(used_globals(&m.functions[f], &mut globals));
            }
        }
        let mut reached: Vec<Handle<GlobalVariable>> = globals.into_iter().collect();
        reached.sort();
        Reached(
            reached
                .into_iter()
                .map(|h| m.global_variables[h].clone())
                .collect(),
        )
    }
}

/// Adds to `globals` those `function`'s statements use; returns the
/// functions it calls.
fn used_globals(
    function: &Function,
    globals: &mut HashSet<Handle<GlobalVariable>>,
) -> Vec<Handle<Function>> {
    let mut used = vec![false; function.expressions.len()];
    let mut callees = Vec::new();
    // As naga's compaction, named expressions and local variables'
    // initialisers count as used.
    let roots = function.named_expressions.keys().copied();
    let inits = function.local_variables.iter().filter_map(|(_, l)| l.init);
    roots.chain(inits).for_each(|h| used[h.index()] = true);
    mark_block(&function.body, &mut used, &mut callees);
    // Operands precede their users in the arena: one backward sweep
    // reaches everything a used expression uses.
    for (h, e) in function.expressions.iter().rev() {
        if !used[h.index()] {
            continue;
        }
        if let Expression::GlobalVariable(g) = *e {
            globals.insert(g);
        }
        operands::for_each(e, |o| used[o.index()] = true);
    }
    callees
}

/// Marks the expressions `block`'s statements use, collecting callees.
fn mark_block(block: &Block, used: &mut [bool], callees: &mut Vec<Handle<Function>>) {
    for s in block.iter() {
        let mut mark = |h: Handle<Expression>| used[h.index()] = true;
        match s {
            Statement::Block(b) => mark_block(b, used, callees),
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                mark(*condition);
                mark_block(accept, used, callees);
                mark_block(reject, used, callees);
            }
            Statement::Switch { selector, cases } => {
                mark(*selector);
                for c in cases {
                    mark_block(&c.body, used, callees);
                }
            }
            Statement::Loop {
                body,
                continuing,
                break_if,
            } => {
                break_if.map(mark);
                mark_block(body, used, callees);
                mark_block(continuing, used, callees);
            }
            Statement::Call {
                function,
                arguments,
                ..
            } => {
                callees.push(*function);
                arguments.iter().copied().for_each(mark);
            }
            other => statement_operands(other, mark),
        }
    }
}

/// The expressions a statement without nested blocks or calls uses.
fn statement_operands(s: &Statement, mut f: impl FnMut(Handle<Expression>)) {
    match *s {
        Statement::Return { value } => value.into_iter().for_each(f),
        Statement::Store { pointer, value } => [pointer, value].into_iter().for_each(f),
        Statement::ImageStore {
            image,
            coordinate,
            array_index,
            value,
        } => [Some(image), Some(coordinate), array_index, Some(value)]
            .into_iter()
            .flatten()
            .for_each(f),
        Statement::Atomic {
            pointer,
            ref fun,
            value,
            ..
        } => {
            [pointer, value].into_iter().for_each(&mut f);
            if let naga::AtomicFunction::Exchange { compare: Some(c) } = *fun {
                f(c);
            }
        }
        Statement::ImageAtomic {
            image,
            coordinate,
            array_index,
            value,
            ..
        } => [Some(image), Some(coordinate), array_index, Some(value)]
            .into_iter()
            .flatten()
            .for_each(f),
        Statement::WorkGroupUniformLoad { pointer, .. } => f(pointer),
        Statement::SubgroupBallot { predicate, .. } => predicate.into_iter().for_each(f),
        Statement::SubgroupGather { mode, argument, .. } => {
            f(argument);
            gather_index(mode).into_iter().for_each(f);
        }
        Statement::SubgroupCollectiveOperation { argument, .. } => f(argument),
        Statement::CooperativeStore { target, ref data } => {
            [target, data.pointer, data.stride].into_iter().for_each(f)
        }
        Statement::RayQuery { query, .. } => f(query),
        // Lowering makes no ray-tracing pipeline calls; the rest use no
        // expression (`Emit` ranges are reached through their users).
        _ => {}
    }
}

/// The lane index a subgroup gather reads from, if it takes one.
fn gather_index(mode: GatherMode) -> Option<Handle<Expression>> {
    match mode {
        GatherMode::BroadcastFirst | GatherMode::QuadSwap(_) => None,
        GatherMode::Broadcast(h)
        | GatherMode::Shuffle(h)
        | GatherMode::ShuffleDown(h)
        | GatherMode::ShuffleUp(h)
        | GatherMode::ShuffleXor(h)
        | GatherMode::QuadBroadcast(h) => Some(h),
    }
}

/// The globals an entry point reaches ([`Lowerer::reached_globals`]).
pub(in crate::lower) struct Reached(Vec<GlobalVariable>);

impl Reached {
    /// Sets each argument's (and argument buffer member's) `active` as
    /// Metal's `MTLArgument.isActive`: whether the entry point reaches
    /// its binding, or for threadgroup memory its workgroup array.
    pub(in crate::lower) fn mark_active(&self, arguments: &mut [crate::reflect::Argument]) {
        for arg in arguments.iter_mut() {
            if let Some(b) = arg.binding {
                arg.active = self.binding(b);
            } else if arg.kind == crate::reflect::ArgumentKind::ThreadgroupMemory {
                // Unused, the host need not size it (Metal's `isActive`).
                arg.active = self.workgroup(&arg.name);
            }
        }
        super::argument_buffers::mark_members_active(arguments, |b| self.binding(b));
    }

    /// Whether a reached global is bound at `b`.
    pub(in crate::lower) fn binding(&self, b: WgslBinding) -> bool {
        let binding = Some(naga::ResourceBinding {
            group: b.group,
            binding: b.binding,
        });
        self.0.iter().any(|g| g.binding == binding)
    }

    /// Whether a reached global is the workgroup array named `name` (a
    /// `[[threadgroup(n)]]` argument's, named after it).
    pub(in crate::lower) fn workgroup(&self, name: &str) -> bool {
        self.0
            .iter()
            .any(|g| g.space == naga::AddressSpace::WorkGroup && g.name.as_deref() == Some(name))
    }
}

#[cfg(test)]
mod tests {
    use super::used_globals;
    use naga::{AddressSpace, Expression, Function, GlobalVariable, Module, Span, Statement};
    use std::collections::HashSet;

    fn global(m: &mut Module, name: &str) -> naga::Handle<GlobalVariable> {
        let ty = m.types.insert(
            naga::Type {
                name: None,
                inner: naga::TypeInner::Scalar(naga::Scalar::F32),
            },
            Span::UNDEFINED,
        );
        m.global_variables.append(
            GlobalVariable {
                name: Some(name.into()),
                space: AddressSpace::Private,
                binding: None,
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            Span::UNDEFINED,
        )
    }

    #[test]
    fn a_global_named_only_in_dead_code_is_not_reached() {
        let mut m = Module::default();
        let used = global(&mut m, "used");
        let dead = global(&mut m, "dead");
        let mut f = Function::default();
        let p = f
            .expressions
            .append(Expression::GlobalVariable(used), Span::UNDEFINED);
        f.expressions
            .append(Expression::GlobalVariable(dead), Span::UNDEFINED);
        let load = f
            .expressions
            .append(Expression::Load { pointer: p }, Span::UNDEFINED);
        f.body.push(
            Statement::Emit(naga::Range::new_from_bounds(load, load)),
            Span::UNDEFINED,
        );
        f.body
            .push(Statement::Return { value: Some(load) }, Span::UNDEFINED);
        let mut globals = HashSet::new();
        used_globals(&f, &mut globals);
        assert_eq!(globals, HashSet::from([used]));
    }
}
