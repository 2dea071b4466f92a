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
    let listed = |span: naga::Span| {
        span.to_range()
            .is_some_and(|r| execution_only.contains(&(r.start, r.end)))
    };
    let reached = callees(entry, module);
    let mut any = has_barrier(&entry.body, &listed);
    for &h in &reached {
        any = any || has_barrier(&module.functions[h].body, &listed);
    }
    if !any {
        return false;
    }
    let mut dropped = false;
    // Each round leaves out at least one barrier.
    while let Some(r) = first_nonuniform_barrier(entry, module, execution_only) {
        let at = (r.start, r.end);
        let only_at = |span: naga::Span| span.to_range().is_some_and(|r| (r.start, r.end) == at);
        let mut removed = remove_barriers(&mut entry.body, &only_at);
        for &h in &reached {
            removed |= remove_barriers(&mut module.functions[h].body, &only_at);
        }
        if !removed {
            // The range of a call whose callee waits: its barriers go.
            for h in called_at(entry, module, &reached, at) {
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

/// Whether `block` has a `workgroupBarrier()` whose span `hit` picks.
fn has_barrier(block: &Block, hit: &impl Fn(naga::Span) -> bool) -> bool {
    let mut found = false;
    visit(block, &mut |s, span| found |= is_hit(s, span, hit));
    found
}

fn is_hit(s: &Statement, span: naga::Span, hit: &impl Fn(naga::Span) -> bool) -> bool {
    matches!(s, Statement::ControlBarrier(b) if *b == Barrier::WORK_GROUP && hit(span))
}

/// The functions that calls with source range `at` (in `entry` or the
/// functions of `reached`) reach, the called ones included.
fn called_at(
    entry: &Function,
    module: &Module,
    reached: &HashSet<Handle<Function>>,
    at: (usize, usize),
) -> HashSet<Handle<Function>> {
    let mut direct = Vec::new();
    let functions = reached.iter().map(|&h| &module.functions[h]);
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
    if !has_barrier(block, hit) {
        return false;
    }
    let hits: Vec<usize> = (block.span_iter().enumerate())
        .filter(|(_, (s, span))| is_hit(s, **span, hit))
        .map(|(i, _)| i)
        .collect();
    for i in hits.into_iter().rev() {
        block.cull(i..=i);
    }
    for s in block.iter_mut() {
        match s {
            Statement::Block(b) => {
                remove_barriers(b, hit);
            }
            Statement::If { accept, reject, .. } => {
                remove_barriers(accept, hit);
                remove_barriers(reject, hit);
            }
            Statement::Switch { cases, .. } => {
                for c in cases.iter_mut() {
                    remove_barriers(&mut c.body, hit);
                }
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                remove_barriers(body, hit);
                remove_barriers(continuing, hit);
            }
            _ => {}
        }
    }
    true
}
