//! Lowering across analysis rounds. Lowering instantiates function
//! templates, whose bodies may use struct template instances analysis has
//! not declared; it records them (`Program::pending`) and
//! `sema::struct_templates::analyze_until_complete` declares them and
//! lowers again, once per level of instances nested in function templates.
//! A round's lowering that found instances is thrown away: only the
//! instances count. So an entry point whose lowering asked for none is not
//! lowered again until the last round, which lowers every entry point (a
//! file of hundreds of kernel instances, MLX's quantized.metal, took seven
//! whole lowerings to reach its last round).

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

    /// Whether this round's lowering is complete, or left entry points out
    /// although it found no instance to declare: then it is done again,
    /// every entry point this time (and the skipping starts afresh).
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
