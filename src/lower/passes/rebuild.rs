//! Rebuilding a function's expression arena so that a pass can put new
//! expressions in front of an existing one.
//!
//! naga requires an expression's operands to come before it in the arena
//! (validation rejects forward dependencies), so a rewrite that needs new
//! operands for an expression cannot just append them: the arena is copied
//! in order, the pass may insert expressions before each one and replace
//! it, and every handle (operands, statements, `Emit` ranges, named
//! expressions, local variable initializers) is renumbered.
//!
//! The statement matches below are exhaustive on purpose, as the expression
//! operands' list ([`super::operands`]) is: a naga upgrade that adds an
//! expression or statement with operands fails to compile instead of
//! leaving stale handles behind.

use naga::{Arena, Block, Expression, Function, Handle, Range, Span, Statement};

/// Where a pass appends the expressions that go in front of the one being
/// rebuilt.
pub(super) struct Front<'a> {
    arena: &'a mut Arena<Expression>,
    span: Span,
}

impl Front<'_> {
    /// Appends `expr` (its operands must already be new handles), with the
    /// span of the expression being rebuilt.
    pub(super) fn add(&mut self, expr: Expression) -> Handle<Expression> {
        self.arena.append(expr, self.span)
    }

    /// The rebuilt arena so far (operands are new handles into it).
    pub(super) fn arena(&self) -> &Arena<Expression> {
        self.arena
    }
}

/// Old handles to new ones.
struct Renumbering {
    /// The new handle of each old expression.
    map: Vec<Handle<Expression>>,
    /// The index of the first expression appended for each old one: the
    /// first one inserted in front of it, or its own new index.
    first: Vec<u32>,
    /// Whether each new expression needs no `Emit` (by new index).
    pre_emit: Vec<bool>,
}

impl Renumbering {
    fn get(&self, h: Handle<Expression>) -> Handle<Expression> {
        self.map[h.index()]
    }
}

/// Rebuilds `f`'s expressions in order: for each one (old handle, and the
/// expression with its operands already renumbered) `rewrite` returns the
/// expression that takes its place, after adding any it needs in front of
/// it through [`Front::add`]. Expressions added in front of an emitted
/// expression are emitted with it (those that need no `Emit` are left out
/// of the ranges); a pass must only add emitted kinds in front of
/// expressions that an `Emit` covers.
pub(super) fn rebuild_function(
    f: &mut Function,
    rewrite: &mut dyn FnMut(&mut Front, Handle<Expression>, Expression) -> Expression,
) {
    let mut old = f.expressions.take();
    let mut numbers = Renumbering {
        map: Vec::with_capacity(old.len()),
        first: Vec::with_capacity(old.len()),
        pre_emit: Vec::new(),
    };
    for (h, mut expr, span) in old.drain() {
        super::operands::for_each_mut(&mut expr, |x| *x = numbers.get(*x));
        numbers.first.push(f.expressions.len() as u32);
        let mut front = Front {
            arena: &mut f.expressions,
            span,
        };
        let expr = rewrite(&mut front, h, expr);
        numbers.map.push(f.expressions.append(expr, span));
    }
    numbers.pre_emit = f
        .expressions
        .iter()
        .map(|(_, e)| e.needs_pre_emit())
        .collect();
    let body = std::mem::take(&mut f.body);
    f.body = renumber_block(body, &numbers, &f.expressions);
    f.named_expressions = std::mem::take(&mut f.named_expressions)
        .into_iter()
        .map(|(h, name)| (numbers.get(h), name))
        .collect();
    for (_, local) in f.local_variables.iter_mut() {
        if let Some(init) = &mut local.init {
            *init = numbers.get(*init);
        }
    }
}

/// The statements of `block` with renumbered handles.
fn renumber_block(block: Block, numbers: &Renumbering, arena: &Arena<Expression>) -> Block {
    let mut out = Block::with_capacity(block.len());
    for (statement, span) in block.span_into_iter() {
        match statement {
            Statement::Emit(range) => {
                for range in renumber_range(&range, numbers, arena) {
                    out.push(Statement::Emit(range), span);
                }
            }
            other => out.push(renumber_statement(other, numbers, arena), span),
        }
    }
    out
}

/// The new `Emit` ranges of an old one: every expression appended for the
/// old ones it covers, less those that need no `Emit` (naga rejects
/// emitting them), in runs.
fn renumber_range(
    range: &Range<Expression>,
    numbers: &Renumbering,
    arena: &Arena<Expression>,
) -> Vec<Range<Expression>> {
    let Some((first, last)) = range.first_and_last() else {
        return Vec::new();
    };
    let start = numbers.first[first.index()];
    let end = numbers.get(last).index() as u32 + 1;
    let mut ranges = Vec::new();
    let mut run = start;
    for i in start..end {
        if numbers.pre_emit[i as usize] {
            if run < i {
                ranges.push(Range::from_index_range(run..i, arena));
            }
            run = i + 1;
        }
    }
    if run < end {
        ranges.push(Range::from_index_range(run..end, arena));
    }
    ranges
}

/// `s` with renumbered handles (nested blocks included).
fn renumber_statement(s: Statement, numbers: &Renumbering, arena: &Arena<Expression>) -> Statement {
    match s {
        Statement::Emit(_) => unreachable!("`Emit` is renumbered by `renumber_block`"),
        s @ (Statement::Block(_)
        | Statement::If { .. }
        | Statement::Switch { .. }
        | Statement::Loop { .. }) => renumber_control_flow(s, numbers, arena),
        s @ (Statement::Break
        | Statement::Continue
        | Statement::Kill
        | Statement::ControlBarrier(_)
        | Statement::MemoryBarrier(_)) => s,
        s @ (Statement::Return { .. }
        | Statement::Store { .. }
        | Statement::ImageStore { .. }
        | Statement::Atomic { .. }
        | Statement::ImageAtomic { .. }
        | Statement::WorkGroupUniformLoad { .. }
        | Statement::Call { .. }) => renumber_memory_statement(s, numbers),
        s @ (Statement::RayQuery { .. }
        | Statement::RayPipelineFunction(_)
        | Statement::SubgroupBallot { .. }
        | Statement::SubgroupGather { .. }
        | Statement::SubgroupCollectiveOperation { .. }
        | Statement::CooperativeStore { .. }) => renumber_ray_subgroup_statement(s, numbers),
    }
}

/// A statement with nested blocks (`Block`, `If`, `Switch`, `Loop`),
/// renumbered.
fn renumber_control_flow(
    s: Statement,
    numbers: &Renumbering,
    arena: &Arena<Expression>,
) -> Statement {
    let new = |h: Handle<Expression>| numbers.get(h);
    let opt = |h: Option<Handle<Expression>>| h.map(new);
    let block = |b: Block| renumber_block(b, numbers, arena);
    match s {
        Statement::Block(b) => Statement::Block(block(b)),
        Statement::If {
            condition,
            accept,
            reject,
        } => Statement::If {
            condition: new(condition),
            accept: block(accept),
            reject: block(reject),
        },
        Statement::Switch { selector, cases } => Statement::Switch {
            selector: new(selector),
            cases: cases
                .into_iter()
                .map(|c| naga::SwitchCase {
                    value: c.value,
                    body: block(c.body),
                    fall_through: c.fall_through,
                })
                .collect(),
        },
        Statement::Loop {
            body,
            continuing,
            break_if,
        } => Statement::Loop {
            body: block(body),
            continuing: block(continuing),
            break_if: opt(break_if),
        },
        _ => unreachable!("not a control flow statement"),
    }
}

/// The new `fun` of an `Atomic` or `ImageAtomic`.
fn renumber_atomic_function(
    fun: naga::AtomicFunction,
    opt: impl Fn(Option<Handle<Expression>>) -> Option<Handle<Expression>>,
) -> naga::AtomicFunction {
    match fun {
        naga::AtomicFunction::Exchange { compare } => naga::AtomicFunction::Exchange {
            compare: opt(compare),
        },
        other => other,
    }
}

/// A statement that returns, stores, calls or does an atomic operation,
/// renumbered.
fn renumber_memory_statement(s: Statement, numbers: &Renumbering) -> Statement {
    let new = |h: Handle<Expression>| numbers.get(h);
    let opt = |h: Option<Handle<Expression>>| h.map(new);
    match s {
        Statement::Return { value } => Statement::Return { value: opt(value) },
        Statement::Store { pointer, value } => Statement::Store {
            pointer: new(pointer),
            value: new(value),
        },
        Statement::ImageStore {
            image,
            coordinate,
            array_index,
            value,
        } => Statement::ImageStore {
            image: new(image),
            coordinate: new(coordinate),
            array_index: opt(array_index),
            value: new(value),
        },
        Statement::Atomic {
            pointer,
            fun,
            value,
            result,
        } => Statement::Atomic {
            pointer: new(pointer),
            fun: renumber_atomic_function(fun, opt),
            value: new(value),
            result: opt(result),
        },
        Statement::ImageAtomic {
            image,
            coordinate,
            array_index,
            fun,
            value,
        } => Statement::ImageAtomic {
            image: new(image),
            coordinate: new(coordinate),
            array_index: opt(array_index),
            fun: renumber_atomic_function(fun, opt),
            value: new(value),
        },
        Statement::WorkGroupUniformLoad { pointer, result } => Statement::WorkGroupUniformLoad {
            pointer: new(pointer),
            result: new(result),
        },
        Statement::Call {
            function,
            arguments,
            result,
        } => Statement::Call {
            function,
            arguments: arguments.into_iter().map(new).collect(),
            result: opt(result),
        },
        _ => unreachable!("not a memory statement"),
    }
}

/// A ray query, ray pipeline, subgroup or cooperative matrix statement,
/// renumbered.
fn renumber_ray_subgroup_statement(s: Statement, numbers: &Renumbering) -> Statement {
    let new = |h: Handle<Expression>| numbers.get(h);
    let opt = |h: Option<Handle<Expression>>| h.map(new);
    match s {
        Statement::RayQuery { query, fun } => Statement::RayQuery {
            query: new(query),
            fun: match fun {
                naga::RayQueryFunction::Initialize {
                    acceleration_structure,
                    descriptor,
                } => naga::RayQueryFunction::Initialize {
                    acceleration_structure: new(acceleration_structure),
                    descriptor: new(descriptor),
                },
                naga::RayQueryFunction::Proceed { result } => naga::RayQueryFunction::Proceed {
                    result: new(result),
                },
                naga::RayQueryFunction::GenerateIntersection { hit_t } => {
                    naga::RayQueryFunction::GenerateIntersection { hit_t: new(hit_t) }
                }
                other @ (naga::RayQueryFunction::ConfirmIntersection
                | naga::RayQueryFunction::Terminate) => other,
            },
        },
        Statement::RayPipelineFunction(naga::RayPipelineFunction::TraceRay {
            acceleration_structure,
            descriptor,
            payload,
        }) => Statement::RayPipelineFunction(naga::RayPipelineFunction::TraceRay {
            acceleration_structure: new(acceleration_structure),
            descriptor: new(descriptor),
            payload: new(payload),
        }),
        Statement::SubgroupBallot { result, predicate } => Statement::SubgroupBallot {
            result: new(result),
            predicate: opt(predicate),
        },
        Statement::SubgroupGather {
            mode,
            argument,
            result,
        } => Statement::SubgroupGather {
            mode: match mode {
                naga::GatherMode::BroadcastFirst => naga::GatherMode::BroadcastFirst,
                naga::GatherMode::Broadcast(h) => naga::GatherMode::Broadcast(new(h)),
                naga::GatherMode::Shuffle(h) => naga::GatherMode::Shuffle(new(h)),
                naga::GatherMode::ShuffleDown(h) => naga::GatherMode::ShuffleDown(new(h)),
                naga::GatherMode::ShuffleUp(h) => naga::GatherMode::ShuffleUp(new(h)),
                naga::GatherMode::ShuffleXor(h) => naga::GatherMode::ShuffleXor(new(h)),
                naga::GatherMode::QuadBroadcast(h) => naga::GatherMode::QuadBroadcast(new(h)),
                naga::GatherMode::QuadSwap(d) => naga::GatherMode::QuadSwap(d),
            },
            argument: new(argument),
            result: new(result),
        },
        Statement::SubgroupCollectiveOperation {
            op,
            collective_op,
            argument,
            result,
        } => Statement::SubgroupCollectiveOperation {
            op,
            collective_op,
            argument: new(argument),
            result: new(result),
        },
        Statement::CooperativeStore { target, data } => Statement::CooperativeStore {
            target: new(target),
            data: naga::CooperativeData {
                pointer: new(data.pointer),
                stride: new(data.stride),
                row_major: data.row_major,
            },
        },
        _ => unreachable!("not a ray query, subgroup or cooperative statement"),
    }
}
