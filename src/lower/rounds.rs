//! Lowering across analysis rounds. Lowering instantiates function
//! templates, whose bodies may use struct template instances analysis has
//! not declared; it records them (`Program::pending`) and
//! `sema::struct_templates::analyze_until_complete` declares them and
//! lowers again, once per level of instances nested in function templates.
//! A round's lowering that found instances is thrown away: only the
//! instances count. So an entry point whose lowering asked for none is not
//! lowered again until the last round (a file of hundreds of kernel
//! instances, MLX's quantized.metal, took seven whole lowerings to reach
//! its last round). The last round lowers the entry points still asking
//! first and, once none of them asks, those left out after them into the
//! same module ([`Rounds::completed`], [`put_in_source_order`]); only if
//! that finds errors is every entry point lowered again in source order,
//! so that errors are reported as a single lowering would.

use crate::reflect::FunctionReflection;
use crate::sema::Program;
use std::collections::HashSet;

/// What the rounds of one translation have learnt about its entry points.
#[derive(Debug, Default)]
pub struct Rounds {
    /// Entry points whose lowering asked for no undeclared instance.
    settled: HashSet<String>,
    /// This round's lowering left some of them out.
    skipped: bool,
}

impl Rounds {
    /// Whether this round may leave entry point `name` out: it asked for no
    /// instance before, and what it would ask for now is no different.
    pub(super) fn skip(&mut self, name: &str) -> bool {
        let skip = self.settled.contains(name);
        self.skipped |= skip;
        skip
    }

    /// Records how lowering `name` went: `asked` is whether it asked for
    /// undeclared instances.
    pub(super) fn lowered(&mut self, name: &str, asked: bool) {
        match asked {
            true => self.settled.remove(name),
            false => self.settled.insert(name.to_string()),
        };
    }

    /// This round's lowering went on with the entry points it had left
    /// out, into the same module: nothing is left out any more.
    pub(super) fn completed(&mut self) {
        self.skipped = false;
    }

    /// Whether this round's lowering is incomplete: it left entry points
    /// out although it found no instance to declare (and did not go on
    /// with them, [`Self::completed`]); then it is done again, every entry
    /// point this time (and the skipping starts afresh).
    pub(super) fn must_lower_all(&mut self, program: &Program) -> bool {
        let again = std::mem::take(&mut self.skipped) && !discovering(program);
        if again {
            self.settled.clear();
        }
        again
    }
}

/// How many undeclared struct template instances lowering `program` has
/// asked for so far (each request counts).
pub(super) fn instances_asked(program: &Program) -> usize {
    program.pending.borrow().requests()
}

/// Whether lowering `program` has found struct template instances that
/// analysis must declare before lowering again: what this lowering builds
/// is thrown away, so it takes no second tries that could only find the
/// same instances.
pub(super) fn discovering(program: &Program) -> bool {
    instances_asked(program) > 0
}

/// Puts the entry points of `module` and their reflections `functions` in
/// source order (`order`: each function's source position), as lowering
/// them in that order would have: entry points left out and then lowered
/// after the others ([`Rounds::completed`]) come out where they are
/// written. A function waiting for function constant values has no entry
/// point.
pub(super) fn put_in_source_order(
    module: &mut naga::Module,
    functions: &mut Vec<FunctionReflection>,
    order: &[usize],
) {
    if order.is_sorted() {
        return;
    }
    let mut entry_points = std::mem::take(&mut module.entry_points).into_iter();
    let mut rows: Vec<_> = functions
        .drain(..)
        .zip(order)
        .map(|(f, &position)| {
            let entry = match f.awaits_function_constants() {
                true => None,
                false => entry_points.next(),
            };
            (position, f, entry)
        })
        .collect();
    debug_assert!(entry_points.next().is_none(), "an entry point per function");
    rows.sort_by_key(|(position, ..)| *position);
    for (_, f, entry) in rows {
        functions.push(f);
        module.entry_points.extend(entry);
    }
}
