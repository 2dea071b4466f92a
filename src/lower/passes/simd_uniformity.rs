//! Where an emulated SIMD-group exchange would wait in non-uniform control
//! flow.
//!
//! The 32-lane emulation (`lower::metal::simd_groups`) waits at
//! `workgroupBarrier`s, which the whole threadgroup must reach: WGSL
//! requires them in uniform control flow (Tint refuses the module otherwise)
//! and a barrier that only some threads reach deadlocks or misbehaves on
//! drivers. Metal's SIMD-group functions have no such rule: the lanes that
//! take a branch form the active set. This pass finds an exchange under a
//! condition that may differ between the threads of a threadgroup, by a
//! conservative taint analysis of the lowered function: values derived
//! from the thread's position, private per-thread state, helper-function
//! arguments and results, atomics, and loads through varying addresses
//! vary; control flow after a varying `return`, `break` or `continue` is
//! non-uniform. A helper's result varies only where its own body makes it
//! vary for the arguments of that call (`ceildiv(n, lsize.x)` in a loop
//! bound is as uniform as `n` and `lsize.x`), as Tint's analysis also finds.
//! Likewise a helper that exchanges is walked with the arguments of each
//! call that reaches it (a loop over `chunk = tid.x; chunk < n_chunks`
//! in a helper is uniform where the kernel passes it uniform values), as
//! Tint's per-parameter uniformity tags also judge it.

use super::ir_walk::{callees, direct_callees, pointer_root, visit};
use super::operands;
use naga::{Block, Expression, Function, Handle, Module, Statement};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

/// Whether a function's result varies, by function and which of its
/// arguments vary.
type ResultTaints = RefCell<HashMap<(Handle<Function>, Vec<bool>), bool>>;

/// Each call's result expression, with the function and arguments.
type Calls = HashMap<Handle<Expression>, (Handle<Function>, Vec<Handle<Expression>>)>;

/// The span of the first exchange (a barrier whose span is in `exchanges`,
/// or a call of a function containing one) in non-uniform control flow of
/// the entry point `entry` or of a function it calls.
pub(in crate::lower) fn first_nonuniform_exchange(
    entry: &Function,
    module: &Module,
    exchanges: &HashSet<(usize, usize)>,
) -> Option<std::ops::Range<usize>> {
    let reached = callees(entry, module);
    let exchanging = exchanging_functions(module, &reached, exchanges);
    let results = ResultTaints::default();
    let written = WrittenArguments::default();
    let scope = |refine_calls| Scope {
        module,
        exchanges,
        callees: &exchanging,
        results: &results,
        refine_calls,
        rules: Rules::Metal,
        written: &written,
    };
    // Every helper's result taken as varying first (cheap, and enough for
    // most kernels); the helpers' bodies only where that finds something.
    scope(false).first_nonuniform_exchange(entry)?;
    scope(true).first_nonuniform_exchange(entry)
}

/// The span of the first barrier whose span is in `barriers` (or of a call
/// of a function containing one) in control flow that Tint's uniformity
/// analysis takes as non-uniform, in the entry point `entry` or a function
/// it calls ([`Rules::Tint`]).
pub(in crate::lower) fn first_nonuniform_barrier(
    entry: &Function,
    module: &Module,
    barriers: &HashSet<(usize, usize)>,
) -> Option<std::ops::Range<usize>> {
    first_nonuniform_barrier_with(entry, module, barriers, &ResultMemo::default())
}

/// Which helpers' results vary for which varying arguments, under Tint's
/// rules; kept over the kernels of a module by [`first_nonuniform_wait`]'s
/// caller (a helper's body only loses barriers and varying reads once
/// lowered, so what is kept can only make more of a result vary).
#[derive(Debug, Default)]
pub(crate) struct ResultMemo(ResultTaints);

fn first_nonuniform_barrier_with(
    entry: &Function,
    module: &Module,
    barriers: &HashSet<(usize, usize)>,
    results: &ResultMemo,
) -> Option<std::ops::Range<usize>> {
    let reached = callees(entry, module);
    let waiting = exchanging_functions(module, &reached, barriers);
    let results = &results.0;
    let written = WrittenArguments::default();
    let scope = |refine_calls| Scope {
        module,
        exchanges: barriers,
        callees: &waiting,
        results,
        refine_calls,
        rules: Rules::Tint,
        written: &written,
    };
    // As for the exchanges: the helpers' bodies only where taking every
    // helper's result as varying finds something.
    scope(false).first_nonuniform_exchange(entry)?;
    scope(true).first_nonuniform_exchange(entry)
}

/// Whether a compute entry point of `module` waits at a barrier (itself or
/// in a helper) in control flow Tint takes as non-uniform: the module has
/// had W0418 (the WGSL dump says so, `library::dump`).
pub(crate) fn any_nonuniform_barrier(module: &Module) -> bool {
    let results = ResultMemo::default();
    (module.entry_points.iter())
        .any(|e| first_nonuniform_wait(&e.function, module, &results).is_some())
}

/// The span of the first barrier (of any kind) that the entry point `entry`
/// or a helper it calls waits at in control flow Tint takes as non-uniform,
/// or of the call of such a helper.
pub(crate) fn first_nonuniform_wait(
    entry: &Function,
    module: &Module,
    results: &ResultMemo,
) -> Option<std::ops::Range<usize>> {
    let mut barriers = HashSet::new();
    let reached = callees(entry, module);
    let helpers = reached.iter().map(|&h| &module.functions[h]);
    for f in std::iter::once(entry).chain(helpers) {
        visit(&f.body, &mut |s, span| {
            if let (Statement::ControlBarrier(_), Some(r)) = (s, span.to_range()) {
                barriers.insert((r.start, r.end));
            }
        });
    }
    if barriers.is_empty() {
        return None;
    }
    first_nonuniform_barrier_with(entry, module, &barriers, results)
}

/// The spans of the `return`s of `function` (an entry point's) that run in
/// control flow Tint's uniformity analysis takes as non-uniform: after them,
/// Tint takes nothing as uniform ([`Rules::Tint`]).
pub(in crate::lower) fn nonuniform_returns(
    function: &Function,
    module: &Module,
) -> HashSet<(usize, usize)> {
    let results = ResultTaints::default();
    let written = WrittenArguments::default();
    let scope = Scope {
        module,
        exchanges: &HashSet::new(),
        callees: &HashSet::new(),
        results: &results,
        refine_calls: true,
        rules: Rules::Tint,
        written: &written,
    };
    let args = (function.arguments.iter())
        .map(|a| varying_binding(a.binding.as_ref()))
        .collect();
    scope.walk(function, args).nonuniform_returns
}

/// Which expressions vary, as Tint's uniformity analysis finds them, in
/// `entry` (`None`) and in each function of `wanted` that `entry` calls in
/// uniform control flow, once for each way its arguments vary there
/// ([`Rules::Tint`]): (the function, a flag per expression).
pub(in crate::lower) fn varying_expressions(
    entry: &Function,
    module: &Module,
    wanted: &HashSet<Handle<Function>>,
) -> Vec<(Option<Handle<Function>>, Vec<bool>)> {
    let reached = callees(entry, module);
    let calling = with_callers(module, &reached, wanted.clone());
    let results = ResultTaints::default();
    let written = WrittenArguments::default();
    let scope = Scope {
        module,
        exchanges: &HashSet::new(),
        callees: &calling,
        results: &results,
        refine_calls: true,
        rules: Rules::Tint,
        written: &written,
    };
    let args = (entry.arguments.iter())
        .map(|a| varying_binding(a.binding.as_ref()))
        .collect();
    let walk = scope.walk(entry, args);
    let mut found = vec![(None, walk.varying)];
    let mut pending = walk.exchanging_calls;
    let mut walked = HashSet::new();
    while let Some((h, args)) = pending.pop() {
        if !walked.insert((h, args.clone())) {
            continue;
        }
        let walk = scope.walk(&module.functions[h], args);
        pending.extend(walk.exchanging_calls);
        if wanted.contains(&h) {
            found.push((Some(h), walk.varying));
        }
    }
    found
}

/// Which values a walk takes as the same on every thread.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rules {
    /// Those that are, as Metal runs the program: a buffer or threadgroup
    /// value read at the same address by every thread (the emulated SIMD
    /// groups need no more).
    Metal,
    /// Those Tint's uniformity analysis proves the same: reads of
    /// `var<private>`, `var<workgroup>` and read-write storage vary (WGSL's
    /// rules), whatever the address.
    Tint,
}

/// What every walk of one module shares.
#[derive(Clone, Copy)]
struct Scope<'a> {
    module: &'a Module,
    exchanges: &'a HashSet<(usize, usize)>,
    /// The functions that contain an exchange.
    callees: &'a HashSet<Handle<Function>>,
    results: &'a ResultTaints,
    /// A helper's result varies only where its body makes it (else every
    /// helper's result varies).
    refine_calls: bool,
    rules: Rules,
    /// Which pointer arguments each function may write through.
    written: &'a WrittenArguments,
}

impl<'a> Scope<'a> {
    /// [`first_nonuniform_exchange`] under this scope's rules: the entry
    /// point, then each exchanging helper with the arguments of each call
    /// (in uniform control flow) that reaches it.
    fn first_nonuniform_exchange(&self, entry: &'a Function) -> Option<std::ops::Range<usize>> {
        let module = self.module;
        let entry_args = (entry.arguments.iter())
            .map(|a| varying_binding(a.binding.as_ref()))
            .collect();
        let walk = self.walk(entry, entry_args);
        if walk.found.is_some() {
            return walk.found;
        }
        let mut pending = walk.exchanging_calls;
        let mut walked = HashSet::new();
        while let Some((h, args)) = pending.pop() {
            if !walked.insert((h, args.clone())) {
                continue;
            }
            let walk = self.walk(&module.functions[h], args);
            if walk.found.is_some() {
                log::trace!("non-uniform exchange in `{:?}`", module.functions[h].name);
                return walk.found;
            }
            pending.extend(walk.exchanging_calls);
        }
        None
    }

    /// Walks `function` until its locals' taints settle; `args` says which
    /// arguments vary.
    fn walk(&self, function: &'a Function, args: Vec<bool>) -> Walk<'a> {
        let mut walk = Walk {
            function,
            scope: *self,
            varying: vec![false; function.expressions.len()],
            locals: vec![false; function.local_variables.len()],
            args,
            calls: call_arguments(function),
            found: None,
            returns_varying: false,
            exchanging_calls: Vec::new(),
            nonuniform_returns: HashSet::new(),
        };
        // Locals vary once a varying value (or a store under varying
        // control flow) reaches them; iterate until no more do.
        loop {
            walk.mark_expressions();
            let before = walk.locals.clone();
            walk.found = None;
            walk.returns_varying = false;
            walk.exchanging_calls.clear();
            walk.nonuniform_returns.clear();
            walk.block(&function.body, false);
            if walk.locals == before {
                return walk;
            }
        }
    }

    /// Whether `function` may return different values to different threads
    /// when the arguments `args` says vary do.
    fn result_varies(&self, function: Handle<Function>, args: Vec<bool>) -> bool {
        let key = (function, args);
        if let Some(v) = self.results.borrow().get(&key) {
            return *v;
        }
        let v = self
            .walk(&self.module.functions[function], key.1.clone())
            .returns_varying;
        self.results.borrow_mut().insert(key, v);
        v
    }
}

/// Which of each function's arguments it may write through (a `Store` or
/// atomic through a pointer rooted at the argument, or a call that writes
/// through it), by function: WGSL has no recursion, so the walk ends.
#[derive(Default)]
struct WrittenArguments(RefCell<HashMap<Handle<Function>, std::rc::Rc<Vec<bool>>>>);

impl WrittenArguments {
    fn of(&self, module: &Module, h: Handle<Function>) -> std::rc::Rc<Vec<bool>> {
        if let Some(w) = self.0.borrow().get(&h) {
            return w.clone();
        }
        let function = &module.functions[h];
        let mut written = vec![false; function.arguments.len()];
        let mut calls = Vec::new();
        visit(&function.body, &mut |s, _| match s {
            Statement::Store { pointer, .. } | Statement::Atomic { pointer, .. } => {
                if let Some(i) = root_argument(function, *pointer) {
                    written[i] = true;
                }
            }
            Statement::Call {
                function,
                arguments,
                ..
            } => calls.push((*function, arguments.clone())),
            _ => {}
        });
        for (callee, arguments) in calls {
            let inner = self.of(module, callee);
            for (a, _) in arguments.iter().zip(inner.iter()).filter(|(_, w)| **w) {
                if let Some(i) = root_argument(function, *a) {
                    written[i] = true;
                }
            }
        }
        let written = std::rc::Rc::new(written);
        self.0.borrow_mut().insert(h, written.clone());
        written
    }
}

/// The argument a pointer expression of `function` points into, if any.
fn root_argument(function: &Function, p: Handle<Expression>) -> Option<usize> {
    match function.expressions[pointer_root(&function.expressions, p)] {
        Expression::FunctionArgument(i) => Some(i as usize),
        _ => None,
    }
}

/// Each call's result expression, with the function and arguments.
fn call_arguments(function: &Function) -> Calls {
    let mut calls = HashMap::new();
    visit(&function.body, &mut |s, _| {
        if let Statement::Call {
            function,
            arguments,
            result: Some(r),
        } = s
        {
            calls.insert(*r, (*function, arguments.clone()));
        }
    });
    calls
}

/// The functions of `reached` (the functions an entry point reaches, so
/// also every function they call) that contain an exchange, directly or
/// through the functions they call. Only those: a module of many entry
/// points would otherwise be walked whole for each of them.
fn exchanging_functions(
    module: &Module,
    reached: &HashSet<Handle<Function>>,
    exchanges: &HashSet<(usize, usize)>,
) -> HashSet<Handle<Function>> {
    let mut found = HashSet::new();
    for &h in reached {
        let mut direct = false;
        visit(&module.functions[h].body, &mut |s, span| {
            direct |= matches!(s, Statement::ControlBarrier(_) if is_exchange(span, exchanges));
        });
        if direct {
            found.insert(h);
        }
    }
    with_callers(module, reached, found)
}

/// `found` and the functions of `reached` that call one of them, directly
/// or not.
fn with_callers(
    module: &Module,
    reached: &HashSet<Handle<Function>>,
    mut found: HashSet<Handle<Function>>,
) -> HashSet<Handle<Function>> {
    let calls: HashMap<Handle<Function>, Vec<Handle<Function>>> = reached
        .iter()
        .map(|&h| (h, direct_callees(&module.functions[h])))
        .collect();
    loop {
        let more: Vec<_> = calls
            .iter()
            .filter(|(h, callees)| !found.contains(*h) && callees.iter().any(|c| found.contains(c)))
            .map(|(h, _)| *h)
            .collect();
        if more.is_empty() {
            return found;
        }
        found.extend(more);
    }
}

fn is_exchange(span: naga::Span, exchanges: &HashSet<(usize, usize)>) -> bool {
    span.to_range()
        .is_some_and(|r| exchanges.contains(&(r.start, r.end)))
}

/// Built-in inputs that differ between the threads of a threadgroup.
fn varying_binding(binding: Option<&naga::Binding>) -> bool {
    use naga::BuiltIn as B;
    match binding {
        Some(naga::Binding::BuiltIn(b)) => !matches!(
            b,
            B::WorkGroupId | B::NumWorkGroups | B::WorkGroupSize | B::SubgroupSize
        ),
        _ => true,
    }
}

/// How a block was left: through a `return` (or `discard`), `break` or
/// `continue` that only some threads take.
#[derive(Clone, Copy, Default)]
struct Exits {
    ret: bool,
    brk: bool,
    cont: bool,
}

impl Exits {
    fn any(self) -> bool {
        self.ret || self.brk || self.cont
    }

    fn merge(self, o: Exits) -> Exits {
        Exits {
            ret: self.ret || o.ret,
            brk: self.brk || o.brk,
            cont: self.cont || o.cont,
        }
    }
}

struct Walk<'a> {
    function: &'a Function,
    scope: Scope<'a>,
    varying: Vec<bool>,
    locals: Vec<bool>,
    args: Vec<bool>,
    calls: Calls,
    found: Option<std::ops::Range<usize>>,
    /// Whether a `return` hands back a varying value, or runs under
    /// varying control flow.
    returns_varying: bool,
    /// The calls in uniform control flow of functions that exchange, with
    /// which of their arguments vary.
    exchanging_calls: Vec<(Handle<Function>, Vec<bool>)>,
    /// The spans of the `return`s in non-uniform control flow.
    nonuniform_returns: HashSet<(usize, usize)>,
}

impl Walk<'_> {
    /// Marks the expressions whose value may differ between threads
    /// (operands precede their users in the arena).
    fn mark_expressions(&mut self) {
        for (h, e) in self.function.expressions.iter() {
            let v = match *e {
                Expression::FunctionArgument(i) => self.args[i as usize],
                Expression::Literal(_)
                | Expression::Constant(_)
                | Expression::Override(_)
                | Expression::ZeroValue(_)
                | Expression::GlobalVariable(_)
                | Expression::LocalVariable(_)
                | Expression::WorkGroupUniformLoadResult { .. } => false,
                Expression::Load { pointer } => {
                    self.varying[pointer.index()] || self.root_varies(pointer)
                }
                Expression::CallResult(f) => match self.calls.get(&h) {
                    Some((_, arguments)) if self.scope.refine_calls => {
                        let args = arguments.iter().map(|a| self.varying[a.index()]).collect();
                        self.scope.result_varies(f, args)
                    }
                    _ => true,
                },
                Expression::AtomicResult { .. }
                | Expression::SubgroupBallotResult
                | Expression::SubgroupOperationResult { .. } => true,
                // Any other value varies where an operand does: image
                // reads and queries, derivatives and array lengths too.
                ref other => {
                    let mut varies = false;
                    operands::for_each(other, |o| varies |= self.varying[o.index()]);
                    varies
                }
            };
            self.varying[h.index()] = v;
        }
    }

    /// Whether the memory a pointer expression starts from is per-thread
    /// state that may vary: a private global, a varying local, or an
    /// argument's pointee.
    fn root_varies(&self, p: Handle<Expression>) -> bool {
        match self.function.expressions[pointer_root(&self.function.expressions, p)] {
            Expression::LocalVariable(l) => self.locals[l.index()],
            // Per-thread state (the prologue's lane, index, activity) is
            // private; a private with an initialiser is a constant table.
            Expression::GlobalVariable(g) => {
                use naga::AddressSpace as A;
                let g = &self.scope.module.global_variables[g];
                match (self.scope.rules, g.space) {
                    (Rules::Metal, A::Private) => g.init.is_none(),
                    (Rules::Metal, _) => false,
                    (Rules::Tint, A::Private | A::WorkGroup) => true,
                    (Rules::Tint, A::Storage { access }) => {
                        access.contains(naga::StorageAccess::STORE)
                    }
                    (Rules::Tint, _) => false,
                }
            }
            _ => true,
        }
    }

    fn root_local(&self, p: Handle<Expression>) -> Option<usize> {
        match self.function.expressions[pointer_root(&self.function.expressions, p)] {
            Expression::LocalVariable(l) => Some(l.index()),
            _ => None,
        }
    }

    fn varies(&self, h: Handle<Expression>) -> bool {
        self.varying[h.index()]
    }

    fn report(&mut self, span: naga::Span) {
        if self.found.is_none() {
            self.found = span.to_range();
        }
    }

    /// Walks `block`; `nonuniform` says whether control flow already
    /// differs between threads.
    fn block(&mut self, block: &Block, mut nonuniform: bool) -> Exits {
        let mut exits = Exits::default();
        for (s, span) in block.span_iter() {
            let e = self.statement(s, *span, nonuniform);
            if e.any() {
                nonuniform = true;
            }
            exits = exits.merge(e);
        }
        exits
    }

    fn statement(&mut self, s: &Statement, span: naga::Span, nonuniform: bool) -> Exits {
        match s {
            Statement::Block(b) => self.block(b, nonuniform),
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                let nu = nonuniform || self.varies(*condition);
                self.block(accept, nu).merge(self.block(reject, nu))
            }
            Statement::Switch { selector, cases } => {
                let nu = nonuniform || self.varies(*selector);
                let mut exits = Exits::default();
                for c in cases {
                    exits = exits.merge(self.block(&c.body, nu));
                }
                // A `break` leaves the switch, which reconverges after it.
                exits.brk = false;
                exits
            }
            Statement::Loop {
                body,
                continuing,
                break_if,
            } => {
                let mut nu = nonuniform || break_if.is_some_and(|b| self.varies(b));
                let first = self.block(body, nu).merge(self.block(continuing, nu));
                if (first.brk || first.cont || first.ret) && !nu {
                    nu = true;
                    self.block(body, nu);
                    self.block(continuing, nu);
                }
                Exits {
                    ret: first.ret,
                    ..Exits::default()
                }
            }
            Statement::Return { value } => {
                if nonuniform || value.is_some_and(|v| self.varies(v)) {
                    self.returns_varying = true;
                }
                if let (true, Some(r)) = (nonuniform, span.to_range()) {
                    self.nonuniform_returns.insert((r.start, r.end));
                }
                Exits {
                    ret: nonuniform,
                    ..Exits::default()
                }
            }
            Statement::Kill => Exits {
                ret: nonuniform,
                ..Exits::default()
            },
            Statement::Break => Exits {
                brk: nonuniform,
                ..Exits::default()
            },
            Statement::Continue => Exits {
                cont: nonuniform,
                ..Exits::default()
            },
            Statement::ControlBarrier(_) => {
                if nonuniform && is_exchange(span, self.scope.exchanges) {
                    self.report(span);
                }
                Exits::default()
            }
            Statement::Call {
                function,
                arguments,
                ..
            } => {
                if self.scope.callees.contains(function) {
                    if nonuniform {
                        self.report(span);
                    } else {
                        let args = arguments.iter().map(|&a| self.varies(a)).collect();
                        self.exchanging_calls.push((*function, args));
                    }
                }
                // A callee may write anything through a pointer argument
                // it stores through (a `const&` it only reads leaves the
                // local as it was: `thread const short& tgp_bm`).
                let written = self.scope.written.of(self.scope.module, *function);
                for (a, _) in arguments.iter().zip(written.iter()).filter(|(_, w)| **w) {
                    if let Some(l) = self.root_local(*a) {
                        self.locals[l] = true;
                    }
                }
                Exits::default()
            }
            Statement::Store { pointer, value } => {
                if let Some(l) = self.root_local(*pointer) {
                    if nonuniform || self.varies(*value) || self.varies(*pointer) {
                        self.locals[l] = true;
                    }
                }
                Exits::default()
            }
            _ => Exits::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel that passes a local by pointer to a helper, then waits at a
    /// barrier under a condition on that local.
    fn barrier_after(helper: &str) -> Option<std::ops::Range<usize>> {
        let src = format!(
            "{helper}
            @group(0) @binding(0) var<uniform> n: i32;
            @compute @workgroup_size(64)
            fn main(@builtin(local_invocation_index) t: u32) {{
                var m: i32 = n;
                helper(&m, t);
                if m == 16 {{
                    workgroupBarrier();
                }}
            }}"
        );
        let module = naga::front::wgsl::parse_str(&src).expect("valid WGSL");
        first_nonuniform_wait(
            &module.entry_points[0].function,
            &module,
            &ResultMemo::default(),
        )
    }

    #[test]
    fn a_helper_that_only_reads_through_a_pointer_leaves_the_local_uniform() {
        let reads = "fn helper(p: ptr<function, i32>, t: u32) -> i32 { return *p * 2; }";
        assert_eq!(barrier_after(reads), None);
    }

    #[test]
    fn a_helper_that_writes_through_a_pointer_may_make_the_local_vary() {
        let writes = "fn helper(p: ptr<function, i32>, t: u32) { *p += i32(t % 2u); }";
        assert!(barrier_after(writes).is_some());
        // Also through a helper it passes the pointer on to.
        let forwards = "fn inner(q: ptr<function, i32>, t: u32) { *q = i32(t); }
            fn helper(p: ptr<function, i32>, t: u32) { inner(p, t); }";
        assert!(barrier_after(forwards).is_some());
    }
}
