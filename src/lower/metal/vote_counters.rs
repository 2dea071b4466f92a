//! The numbers of predicated loops' votes (`simd_loops`), across functions.
//!
//! A vote raises a shared threadgroup word to its number (`atomicMax`), so
//! the word is never reset: a number must exceed every number raised
//! before it in the dispatch. Each function counts its votes in a local
//! (WGSL's uniformity analysis follows a function's locals, not private
//! globals), which starts at zero in every call: a second helper with a
//! predicated loop, or a second call of one (MLX's NAX GEMMs call
//! `gemm_loop` once per alignment case through `dispatch_bool`), numbered
//! its votes below the word and every thread left its loops at once.
//!
//! So a function that votes takes the last vote's number from the word's
//! uniform copy where it starts, and again after each call of a function
//! that votes (`workgroupUniformLoad`, in control flow every thread takes,
//! as the votes themselves are).

use crate::lower::passes::ir_walk::visit;
use crate::lower::Lowerer;
use naga::{Block, Expression, Function, Handle, LocalVariable, Statement};
use std::collections::HashSet;

impl Lowerer<'_, '_> {
    /// Makes function `f`, whose votes count in `counter` (if it has
    /// any), take the last vote's number after each call of a function
    /// that votes and, for a helper (`helper`), where it starts. (A kernel
    /// starts where the threadgroup's words and its counter are zero.)
    pub(in crate::lower) fn sync_vote_counter(
        &self,
        f: &mut Function,
        counter: Option<Handle<LocalVariable>>,
        helper: bool,
    ) {
        let (Some(counter), Some((_, copy))) = (counter, self.global.simd_vote) else {
            return;
        };
        let voting = &self.global.voting_functions;
        let mut body = std::mem::take(&mut f.body);
        after_voting_calls(&mut body, f, counter, copy, voting);
        if helper {
            let mut start = load_last_number(f, counter, copy);
            start.append(&mut body);
            body = start;
        }
        f.body = body;
    }

    /// Records that helper `h` votes, itself or in a function it calls.
    pub(in crate::lower) fn note_voting(&mut self, h: Handle<Function>) {
        let Some((raised, _)) = self.global.simd_vote else {
            return;
        };
        let f = &self.global.module.functions[h];
        let voting = &self.global.voting_functions;
        let mut votes = false;
        visit(&f.body, &mut |s, _| match s {
            Statement::Atomic { pointer, .. } => {
                votes |=
                    matches!(f.expressions[*pointer], Expression::GlobalVariable(g) if g == raised)
            }
            Statement::Call { function, .. } => votes |= voting.contains(function),
            _ => {}
        });
        if votes {
            self.global.voting_functions.insert(h);
        }
    }
}

/// `counter = workgroupUniformLoad(&copy);`
fn load_last_number(
    f: &mut Function,
    counter: Handle<LocalVariable>,
    copy: Handle<naga::GlobalVariable>,
) -> Block {
    let span = naga::Span::UNDEFINED;
    let ty = f.local_variables[counter].ty;
    let pointer = f.expressions.append(Expression::GlobalVariable(copy), span);
    let result = (f.expressions).append(Expression::WorkGroupUniformLoadResult { ty }, span);
    let local = f
        .expressions
        .append(Expression::LocalVariable(counter), span);
    let mut block = Block::new();
    block.push(Statement::WorkGroupUniformLoad { pointer, result }, span);
    block.push(
        Statement::Store {
            pointer: local,
            value: result,
        },
        span,
    );
    block
}

/// `block` with the counter loaded again after each call of a function of
/// `voting`.
fn after_voting_calls(
    block: &mut Block,
    f: &mut Function,
    counter: Handle<LocalVariable>,
    copy: Handle<naga::GlobalVariable>,
    voting: &HashSet<Handle<Function>>,
) {
    let old = std::mem::take(block);
    for (mut s, span) in old.span_into_iter() {
        let again = matches!(&s, Statement::Call { function, .. } if voting.contains(function));
        match &mut s {
            Statement::Block(b) => after_voting_calls(b, f, counter, copy, voting),
            Statement::If { accept, reject, .. } => {
                after_voting_calls(accept, f, counter, copy, voting);
                after_voting_calls(reject, f, counter, copy, voting);
            }
            Statement::Switch { cases, .. } => (cases.iter_mut())
                .for_each(|c| after_voting_calls(&mut c.body, f, counter, copy, voting)),
            Statement::Loop {
                body, continuing, ..
            } => {
                after_voting_calls(body, f, counter, copy, voting);
                after_voting_calls(continuing, f, counter, copy, voting);
            }
            _ => {}
        }
        block.push(s, span);
        if again {
            let mut load = load_last_number(f, counter, copy);
            block.append(&mut load);
        }
    }
}
