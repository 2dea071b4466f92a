//! One WGSL function for helpers whose lowered bodies are the same.
//!
//! C++ templates give each set of template arguments its own function, and
//! the lowering specialises helpers further for the buffers and
//! `threadgroup` memory they are passed (naga takes no storage pointers as
//! parameters). Many of those functions come out identical: a member
//! function of `GEMMKernel<T, .., MN_aligned, K_aligned>` that never reads
//! `MN_aligned` is the same code for every value of it, and MLX
//! instantiates such a kernel hundreds of times. Metal's compiler merges
//! them as any C++ linker folds identical code; without that, a file of
//! many kernels becomes tens of megabytes of WGSL.
//!
//! The merge compares whole lowered functions, name aside: their argument
//! and result types, locals, expressions, statements and spans. Callees
//! precede their callers in naga's arena (WGSL has no recursion), so a
//! caller is compared after its calls were redirected to the first of
//! each set of identical callees: merging propagates up the call graph.

use super::ir_walk::direct_callees;
use naga::{Arena, Expression, Function, Handle, Module, Statement};
use std::collections::{HashMap, HashSet};

/// A function others may be merged into, and its text once printed.
type Candidate = (Handle<Function>, Option<String>);

/// Redirects every call of a function identical to an earlier one to that
/// one, and removes the functions left without callers by it.
pub(in crate::lower) fn merge_identical(module: &mut Module) {
    // The first function of each fingerprint, with its text once a later
    // one has had to be compared with it (each text is printed once).
    let mut first_of: HashMap<u64, Vec<Candidate>> = HashMap::new();
    let mut merged: HashMap<Handle<Function>, Handle<Function>> = HashMap::new();
    let handles: Vec<Handle<Function>> = module.functions.iter().map(|(h, _)| h).collect();
    for h in handles {
        redirect_calls(&mut module.functions[h], &|f| merged.get(&f).copied());
        let key = fingerprint(&module.functions[h]);
        let candidates = first_of.entry(key).or_default();
        let mut same = None;
        if !candidates.is_empty() {
            let text = unnamed_text(&module.functions[h]);
            for (c, c_text) in candidates.iter_mut() {
                if *c_text.get_or_insert_with(|| unnamed_text(&module.functions[*c])) == text {
                    same = Some(*c);
                    break;
                }
            }
        }
        match same {
            Some(c) => {
                merged.insert(h, c);
            }
            None => candidates.push((h, None)),
        }
    }
    if merged.is_empty() {
        return;
    }
    for e in &mut module.entry_points {
        redirect_calls(&mut e.function, &|f| merged.get(&f).copied());
    }
    drop_merged(module, &merged);
}

/// Rebuilds the function arena without the merged functions (nothing calls
/// them any more) and renumbers the calls of the others.
fn drop_merged(module: &mut Module, merged: &HashMap<Handle<Function>, Handle<Function>>) {
    drop_functions(module, &|h| merged.contains_key(&h));
}

/// Drops the functions of `candidates` that no entry point and no other
/// function calls, directly or through others.
pub(in crate::lower) fn drop_uncalled(module: &mut Module, candidates: &HashSet<Handle<Function>>) {
    if candidates.is_empty() {
        return;
    }
    // Callees precede their callers in the arena: walking it backwards
    // from what is kept marks every callee before it is reached.
    let mut called: HashSet<Handle<Function>> = HashSet::new();
    for e in &module.entry_points {
        called.extend(direct_callees(&e.function));
    }
    let handles: Vec<Handle<Function>> = module.functions.iter().map(|(h, _)| h).collect();
    for &h in handles.iter().rev() {
        if !candidates.contains(&h) || called.contains(&h) {
            called.extend(direct_callees(&module.functions[h]));
        }
    }
    drop_functions(module, &|h| candidates.contains(&h) && !called.contains(&h));
}

/// Rebuilds the function arena without the functions `dropped` says (none
/// of them called by a kept one) and renumbers the calls of the others.
fn drop_functions(module: &mut Module, dropped: &dyn Fn(Handle<Function>) -> bool) {
    let mut renumbered = HashMap::new();
    let mut kept = Arena::new();
    for (h, mut function, span) in module.functions.drain() {
        if dropped(h) {
            continue;
        }
        redirect_calls(&mut function, &|f| renumbered.get(&f).copied());
        renumbered.insert(h, kept.append(function, span));
    }
    module.functions = kept;
    for e in &mut module.entry_points {
        redirect_calls(&mut e.function, &|f| renumbered.get(&f).copied());
    }
}

/// Replaces each called function `f` by `to(f)` where that is `Some`.
fn redirect_calls(
    function: &mut Function,
    to: &dyn Fn(Handle<Function>) -> Option<Handle<Function>>,
) {
    for (_, e) in function.expressions.iter_mut() {
        if let Expression::CallResult(f) = e {
            if let Some(t) = to(*f) {
                *f = t;
            }
        }
    }
    super::ir_walk::visit_mut(&mut function.body, &mut |s| {
        if let Statement::Call { function, .. } = s {
            if let Some(t) = to(*function) {
                *function = t;
            }
        }
    });
}

/// A hash of the whole function, name aside (its structure as naga's
/// `Debug` prints it, fed to the hasher without building the text).
///
/// The text arrives in many short pieces, and std's SipHash on each was
/// about a tenth of MLX `quantized.metal`'s translation in a profile (the
/// time fell 4 %): a multiply-rotate hash a word at a time is enough, as
/// equal fingerprints are compared as text before functions merge.
fn fingerprint(function: &Function) -> u64 {
    struct WordHash(u64);
    impl std::fmt::Write for WordHash {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            const K: u64 = 0x517c_c1b7_2722_0a95;
            let mut words = s.as_bytes().chunks_exact(8);
            for w in &mut words {
                let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
                self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
            }
            for &b in words.remainder() {
                self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
            }
            Ok(())
        }
    }
    let mut w = WordHash(0);
    write_unnamed(&mut w, function);
    w.0
}

/// The whole function as naga's `Debug` prints it, name aside: two
/// functions print the same exactly when they are the same IR.
fn unnamed_text(function: &Function) -> String {
    let mut s = String::new();
    write_unnamed(&mut s, function);
    s
}

fn write_unnamed(w: &mut impl std::fmt::Write, f: &Function) {
    let _ = write!(
        w,
        "{:?}{:?}{:?}{:?}{:?}{:?}{:?}",
        f.arguments,
        f.result,
        f.local_variables,
        f.expressions,
        f.named_expressions,
        f.body,
        f.diagnostic_filter_leaf
    );
}
