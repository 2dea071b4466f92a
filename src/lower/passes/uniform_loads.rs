//! A threadgroup value read between two barriers, as `workgroupUniformLoad`.
//!
//! Metal: `threadgroup_barrier(mem_threadgroup); x = t[0];
//! threadgroup_barrier(mem_threadgroup);` reads a threadgroup value that no
//! thread writes between the barriers, at one address for every thread: each
//! thread reads the same value (Tint writes `workgroupUniformLoad` so, and
//! kernels agree on a loop bound or a flag so). A branch or loop on it is
//! uniform, and barriers may run inside it.
//!
//! WGSL: Tint takes every read of `var<workgroup>` as non-uniform, so it
//! refuses a barrier under a condition on `x`, unless the read is a
//! `workgroupUniformLoad(&t[0])`, which is exactly a `workgroupBarrier()`,
//! the load and another `workgroupBarrier()`, and whose result is uniform.
//!
//! Mapping: where a block has a barrier that includes threadgroup memory,
//! then only expressions and stores into the thread's own variables with
//! exactly one read of threadgroup memory (none of read-write storage), then
//! another such barrier, and the address read is the same on every thread as
//! Tint sees it (`simd_uniformity` with Tint's rules, for each call of the
//! function), the read becomes the `workgroupUniformLoad` and the two
//! barriers lose their threadgroup part (a `storageBarrier()` they also
//! were stays beside it). Every thread waits where it waited, reads what it
//! read, and writes nothing in between.

use super::simd_uniformity::varying_expressions;
use naga::{
    AddressSpace, Arena, Barrier, Block, Expression, Function, Handle, Module, Span, Statement,
    TypeInner,
};
use std::collections::HashSet;

/// Rewrites the reads described above in the kernel `entry` and the
/// functions it calls. True if one was.
/// `reached`: the functions `entry` calls; `without`: functions known to
/// have none of the reads (kept over the kernels of a module: the rewrites
/// only take reads away).
pub(in crate::lower) fn workgroup_uniform_loads(
    entry: &mut Function,
    module: &mut Module,
    reached: &HashSet<Handle<Function>>,
    without: &mut HashSet<Handle<Function>>,
) -> bool {
    let entry_has = !candidates(entry, module).is_empty();
    let mut wanted = HashSet::new();
    for &h in reached {
        if without.contains(&h) {
            continue;
        }
        match candidates(&module.functions[h], module).is_empty() {
            true => without.insert(h),
            false => wanted.insert(h),
        };
    }
    if !entry_has && wanted.is_empty() {
        return false;
    }
    // For each function, the expressions that vary under any of its walks.
    let mut varying: Vec<(Option<Handle<Function>>, Vec<bool>)> = Vec::new();
    for (h, flags) in varying_expressions(entry, module, &wanted) {
        match varying.iter_mut().find(|(g, _)| *g == h) {
            Some((_, all)) => all.iter_mut().zip(flags).for_each(|(a, f)| *a |= f),
            None => varying.push((h, flags)),
        }
    }
    let mut rewrote = false;
    for (h, flags) in varying {
        match h {
            None => rewrote |= rewrite_function(entry, &flags, module),
            Some(h) => {
                let mut f = std::mem::take(&mut module.functions[h]);
                rewrote |= rewrite_function(&mut f, &flags, module);
                module.functions[h] = f;
            }
        }
    }
    rewrote
}

/// Rewrites the candidates of `f` whose address does not vary (`varying`:
/// a flag per expression). True if one was.
fn rewrite_function(f: &mut Function, varying: &[bool], module: &Module) -> bool {
    let mut rewrote = false;
    let mut tried = HashSet::new();
    // A rewrite can take the barrier another candidate needed: look again.
    while let Some(load) = candidates(f, module).into_iter().find(|l| tried.insert(*l)) {
        let Expression::Load { pointer } = f.expressions[load] else {
            continue;
        };
        if varying.get(pointer.index()).copied().unwrap_or(true) {
            continue;
        }
        // `workgroupUniformLoad` reads no atomic (a relaxed `atomic_load`
        // is a plain load of one).
        let ty = pointee(&f.expressions, pointer, module);
        let Some(ty) = ty.filter(|&ty| !holds_atomic(module, ty)) else {
            continue;
        };
        let mut body = std::mem::take(&mut f.body);
        if rewrite(&mut body, load, pointer, &f.expressions) {
            f.expressions[load] = Expression::WorkGroupUniformLoadResult { ty };
            rewrote = true;
        }
        f.body = body;
    }
    rewrote
}

/// The loads of `f` that the pattern of the module doc reads.
fn candidates(f: &Function, module: &Module) -> Vec<Handle<Expression>> {
    let mut found = Vec::new();
    blocks(&f.body, &mut |block| {
        let statements: Vec<&Statement> = block.iter().collect();
        for (i, s) in statements.iter().enumerate() {
            if !fences_threadgroup(s) {
                continue;
            }
            if let Some(load) = read_between(&statements[i + 1..], f, module) {
                found.push(load);
            }
        }
    });
    found
}

/// The one threadgroup read of `statements` (after a barrier) if they are
/// expressions and stores into the thread's variables up to another barrier
/// that fences threadgroup memory.
fn read_between(
    statements: &[&Statement],
    f: &Function,
    module: &Module,
) -> Option<Handle<Expression>> {
    let mut read = None;
    for s in statements {
        match s {
            Statement::Emit(range) => {
                for h in range.clone() {
                    let Expression::Load { pointer } = f.expressions[h] else {
                        continue;
                    };
                    match root_space(&f.expressions, pointer, module) {
                        Some(AddressSpace::WorkGroup) if read.is_none() => read = Some(h),
                        Some(AddressSpace::WorkGroup) => return None,
                        Some(AddressSpace::Storage { access })
                            if access.contains(naga::StorageAccess::STORE) =>
                        {
                            return None
                        }
                        Some(_) => {}
                        None => return None,
                    }
                }
            }
            Statement::Store { pointer, .. }
                if root_space(&f.expressions, *pointer, module) == Some(AddressSpace::Function) => {
            }
            s if fences_threadgroup(s) => return read,
            _ => return None,
        }
    }
    None
}

/// A barrier that includes threadgroup memory (`workgroupBarrier()`).
fn fences_threadgroup(s: &Statement) -> bool {
    matches!(s, Statement::ControlBarrier(b) if b.contains(Barrier::WORK_GROUP))
}

/// The address space of the variable `pointer` points into (`None` for a
/// pointer of another origin: an argument's).
fn root_space(
    arena: &Arena<Expression>,
    mut pointer: Handle<Expression>,
    module: &Module,
) -> Option<AddressSpace> {
    loop {
        match arena[pointer] {
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                pointer = base
            }
            Expression::GlobalVariable(g) => return Some(module.global_variables[g].space),
            Expression::LocalVariable(_) => return Some(AddressSpace::Function),
            _ => return None,
        }
    }
}

/// The type `pointer` points to, for a pointer into a global through
/// array elements and struct members (`None` otherwise).
fn pointee(
    arena: &Arena<Expression>,
    pointer: Handle<Expression>,
    module: &Module,
) -> Option<Handle<naga::Type>> {
    let (base, member) = match arena[pointer] {
        Expression::GlobalVariable(g) => return Some(module.global_variables[g].ty),
        Expression::Access { base, .. } => (base, None),
        Expression::AccessIndex { base, index } => (base, Some(index as usize)),
        _ => return None,
    };
    match module.types[pointee(arena, base, module)?].inner {
        TypeInner::Array { base, .. } => Some(base),
        TypeInner::Struct { ref members, .. } => members.get(member?).map(|m| m.ty),
        _ => None,
    }
}

/// Whether type `ty` is or holds an atomic.
fn holds_atomic(module: &Module, ty: Handle<naga::Type>) -> bool {
    match module.types[ty].inner {
        TypeInner::Atomic(_) => true,
        TypeInner::Array { base, .. } => holds_atomic(module, base),
        TypeInner::Struct { ref members, .. } => members.iter().any(|m| holds_atomic(module, m.ty)),
        _ => false,
    }
}

/// Replaces, in the block that holds it, the pattern around `load` with
/// its `workgroupUniformLoad` (see the module doc). True if it was found.
fn rewrite(
    block: &mut Block,
    load: Handle<Expression>,
    pointer: Handle<Expression>,
    arena: &Arena<Expression>,
) -> bool {
    let at = block.iter().position(|s| match s {
        Statement::Emit(range) => range.clone().any(|h| h == load),
        _ => false,
    });
    let Some(at) = at else {
        let mut found = false;
        for s in block.iter_mut() {
            nested(s, &mut |b| {
                found = found || rewrite(b, load, pointer, arena)
            });
        }
        return found;
    };
    let fence = |s: &Statement| fences_threadgroup(s);
    let before = block
        .iter()
        .take(at)
        .collect::<Vec<_>>()
        .into_iter()
        .rposition(fence);
    let after = block.iter().skip(at).position(fence).map(|i| at + i);
    let (Some(before), Some(after)) = (before, after) else {
        return false;
    };
    let statements: Vec<(Statement, Span)> = std::mem::take(block).span_into_iter().collect();
    for (i, (s, span)) in statements.into_iter().enumerate() {
        match s {
            Statement::ControlBarrier(b) if i == before || i == after => {
                let rest = b - Barrier::WORK_GROUP;
                if !rest.is_empty() {
                    block.push(Statement::ControlBarrier(rest), span);
                }
            }
            Statement::Emit(range) if i == at => {
                let r = range.index_range();
                let l = load.index() as u32;
                if r.start < l {
                    block.push(
                        Statement::Emit(naga::Range::from_index_range(r.start..l, arena)),
                        span,
                    );
                }
                let result = load;
                block.push(Statement::WorkGroupUniformLoad { pointer, result }, span);
                if l + 1 < r.end {
                    block.push(
                        Statement::Emit(naga::Range::from_index_range(l + 1..r.end, arena)),
                        span,
                    );
                }
            }
            s => block.push(s, span),
        }
    }
    true
}

/// Calls `f` on every block of `block`'s tree, `block` first.
fn blocks(block: &Block, f: &mut impl FnMut(&Block)) {
    f(block);
    for s in block.iter() {
        match s {
            Statement::Block(b) => blocks(b, f),
            Statement::If { accept, reject, .. } => {
                blocks(accept, f);
                blocks(reject, f);
            }
            Statement::Switch { cases, .. } => cases.iter().for_each(|c| blocks(&c.body, f)),
            Statement::Loop {
                body, continuing, ..
            } => {
                blocks(body, f);
                blocks(continuing, f);
            }
            _ => {}
        }
    }
}

/// Calls `f` on each block directly inside `s`.
fn nested(s: &mut Statement, f: &mut impl FnMut(&mut Block)) {
    match s {
        Statement::Block(b) => f(b),
        Statement::If { accept, reject, .. } => {
            f(accept);
            f(reject);
        }
        Statement::Switch { cases, .. } => cases.iter_mut().for_each(|c| f(&mut c.body)),
        Statement::Loop {
            body, continuing, ..
        } => {
            f(body);
            f(continuing);
        }
        _ => {}
    }
}
