//! A kernel lowered again, predicating more, while an emulated SIMD-group
//! exchange is left in non-uniform control flow (E0410): first its
//! branches (`metal::simd_branches`), then the innermost loop around the
//! exchange (`metal::simd_loops`), then its whole body; each try predicates
//! only what the one before needed.

use super::{metal, passes, EntryStage, FunctionReflection, Lowerer, Result};
use crate::diagnostics::Code;
use crate::syntax::ast;

impl Lowerer<'_, '_> {
    /// Lowers kernel `f` with its SIMD-group calls' branches predicated,
    /// then, while an exchange is still in non-uniform control flow, also
    /// the innermost loop around it, or else its whole body (for an early
    /// `return`): each try predicates only what the one before needed.
    pub(super) fn predicated_kernel(
        &mut self,
        f: &ast::FunctionDecl,
        threadgroup_size: Option<[u32; 3]>,
        warnings: usize,
    ) -> Result<FunctionReflection> {
        /// Tries beyond the branches-only one.
        const MAX_TRIES: usize = 8;
        let body = f.body.as_ref().expect("kernels have bodies");
        let mut loops = std::collections::HashSet::new();
        let mut narrow_body = false;
        let attempt = |l: &mut Self, loops: &std::collections::HashSet<_>, narrow_body| {
            l.tried(|l| {
                l.with_entry(f, EntryStage::Kernel, |l| {
                    l.entry.simd_if_conversion = true;
                    l.entry.predicated_loops = loops.clone();
                    l.entry.narrow_body = narrow_body;
                    l.kernel(f, threadgroup_size)
                })
            })
        };
        for _ in 0..MAX_TRIES {
            let lowered = attempt(self, &loops, narrow_body);
            match lowered {
                Err(e) if e.code == Code::SimdNonUniform => {
                    let around =
                        metal::simd_loops::loop_around(body, e.span, &loops).or_else(|| {
                            metal::simd_loops::helper_loop_around(self.program, e.span, &loops)
                        });
                    log::debug!(
                        "`{}`: exchange in non-uniform control flow at {:?}; predicating the loop at {around:?}",
                        f.name.name,
                        e.span
                    );
                    match around {
                        Some(l) => {
                            self.forget_stale(l);
                            loops.insert(l);
                        }
                        None if !narrow_body => narrow_body = true,
                        None => return Err(e),
                    }
                    self.global.warnings.truncate(warnings);
                }
                lowered => return lowered,
            }
        }
        attempt(self, &loops, narrow_body)
    }

    /// Forgets the helpers the last failed try added or called that hold
    /// loop `l` (a span key) or call one that does: the next try predicates `l`, and a
    /// helper found in the cache would still call the version without it
    /// (its key names only the loops of its own body; a helper calling the
    /// loop's function through a lambda's call operator, or any chain of
    /// helpers). The others are found again as they are.
    fn forget_stale(&mut self, l: (usize, usize)) {
        let tried: std::collections::HashSet<_> = std::mem::take(&mut self.global.last_tried)
            .into_iter()
            .collect();
        let holding: std::collections::HashSet<_> = self
            .global
            .functions
            .iter()
            .filter(|(_, h)| tried.contains(h))
            .filter(|((index, ..), _)| {
                self.body_span(*index)
                    .is_some_and(|b| b.start as usize <= l.0 && l.1 <= b.end as usize)
            })
            .map(|(_, &h)| h)
            .collect();
        // The helpers holding `l` and, among the tried ones, their callers,
        // found by direct calls until no more are.
        let module = &self.global.module;
        let calls: Vec<_> = (tried.iter())
            .map(|&h| (h, passes::ir_walk::direct_callees(&module.functions[h])))
            .collect();
        let mut stale = holding;
        loop {
            let callers: Vec<_> = (calls.iter())
                .filter(|(h, callees)| {
                    !stale.contains(h) && callees.iter().any(|c| stale.contains(c))
                })
                .map(|&(h, _)| h)
                .collect();
            if callers.is_empty() {
                break;
            }
            stale.extend(callers);
        }
        self.global.functions.retain(|_, h| !stale.contains(h));
    }

    /// Runs one try of a kernel's lowering; when it ends in E0410, the
    /// helpers it added are recorded in `tried_functions` (and, with those
    /// it called, in `last_tried`, for [`Self::forget_stale`]).
    pub(super) fn tried<T>(&mut self, attempt: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.global.last_tried.clear();
        let from = self.global.module.functions.len();
        let lowered = attempt(self);
        if matches!(&lowered, Err(e) if e.code == Code::SimdNonUniform) {
            let added = self.global.module.functions.iter().skip(from);
            let added: Vec<_> = added.map(|(h, _)| h).collect();
            self.global.tried_functions.extend(added.iter().copied());
            // With the helpers the try's kernel called (`check_simd_uniformity`).
            self.global.last_tried.extend(added);
        }
        lowered
    }
}
