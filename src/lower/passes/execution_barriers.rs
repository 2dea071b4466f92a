//! `threadgroup_barrier(mem_flags::mem_none)` in non-uniform control flow.
//!
//! Metal: with `mem_none` the barrier orders no memory access; it only
//! makes the threads wait for each other ("acts only as an execution
//! barrier"). MLX's matrix-vector kernels put one in their main loop, "to
//! exploit the cache better", inside `if (out_col < out_vec_size)`, which
//! only the threads whose column lies in the matrix take. No result of a
//! program can depend on such a barrier: without a fence, what a thread
//! wrote before it is not made visible to another thread after it, so every
//! value a thread reads after waiting is one it may also read without
//! waiting.
//!
//! WGSL has no barrier without memory effects: the translation is a
//! `workgroupBarrier()`, which Tint refuses outside uniform control flow
//! (and which only some threads reaching is undefined on Vulkan).
//!
//! Mapping: such a barrier that Tint's uniformity analysis would find in
//! non-uniform control flow (`simd_uniformity` with Tint's rules), itself or
//! through the call of a helper that waits at it, is left out; everywhere
//! else it stays, waiting as Metal waits.

use super::ir_walk::{callees, visit};
use super::simd_uniformity::first_nonuniform_barrier;
use naga::{Barrier, Block, Function, Handle, Module, Statement};
use std::collections::HashSet;

/// Leaves out each execution-only barrier (source range in
/// `execution_only`) that the kernel `entry` or a helper it calls waits at
/// in non-uniform control flow. True if one was.
pub(in crate::lower) fn drop_nonuniform(
    entry: &mut Function,
    module: &mut Module,
    execution_only: &HashSet<(usize, usize)>,
) -> bool {
    let mut dropped = false;
    // Each round leaves out at least one barrier.
    while let Some(r) = first_nonuniform_barrier(entry, module, execution_only) {
        let at = (r.start, r.end);
        let only_at = |span: naga::Span| span.to_range().is_some_and(|r| (r.start, r.end) == at);
        let mut removed = remove_barriers(&mut entry.body, &only_at);
        for (_, f) in module.functions.iter_mut() {
            removed |= remove_barriers(&mut f.body, &only_at);
        }
        if !removed {
            // The range of a call whose callee waits: its barriers go.
            let called = called_at(entry, module, at);
            let listed = |span: naga::Span| {
                span.to_range()
                    .is_some_and(|r| execution_only.contains(&(r.start, r.end)))
            };
            for h in called {
                removed |= remove_barriers(&mut module.functions[h].body, &listed);
            }
        }
        if !removed {
            break;
        }
        dropped = true;
    }
    dropped
}

/// The functions that calls with source range `at` (in `entry` or the
/// functions of `module`) reach, the called ones included.
fn called_at(entry: &Function, module: &Module, at: (usize, usize)) -> HashSet<Handle<Function>> {
    let mut direct = Vec::new();
    let functions = module.functions.iter().map(|(_, f)| f);
    for f in std::iter::once(entry).chain(functions) {
        visit(&f.body, &mut |s, span| {
            if let Statement::Call { function, .. } = s {
                if span.to_range().is_some_and(|r| (r.start, r.end) == at) {
                    direct.push(*function);
                }
            }
        });
    }
    let mut found = HashSet::new();
    for h in direct {
        found.insert(h);
        found.extend(callees(&module.functions[h], module));
    }
    found
}

/// Removes from `block` (nested blocks too) every `workgroupBarrier()`
/// whose span `hit` picks. True if one was.
fn remove_barriers(block: &mut Block, hit: &impl Fn(naga::Span) -> bool) -> bool {
    let mut removed = false;
    let old = std::mem::take(block);
    for (mut s, span) in old.span_into_iter() {
        match s {
            Statement::ControlBarrier(b) if b == Barrier::WORK_GROUP && hit(span) => {
                removed = true;
                continue;
            }
            Statement::Block(ref mut b) => removed |= remove_barriers(b, hit),
            Statement::If {
                ref mut accept,
                ref mut reject,
                ..
            } => {
                removed |= remove_barriers(accept, hit);
                removed |= remove_barriers(reject, hit);
            }
            Statement::Switch { ref mut cases, .. } => {
                for c in cases.iter_mut() {
                    removed |= remove_barriers(&mut c.body, hit);
                }
            }
            Statement::Loop {
                ref mut body,
                ref mut continuing,
                ..
            } => {
                removed |= remove_barriers(body, hit);
                removed |= remove_barriers(continuing, hit);
            }
            _ => {}
        }
        block.push(s, span);
    }
    removed
}
