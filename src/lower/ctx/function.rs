//! Building one naga function: expression emission, blocks and scopes.

use crate::lower::ctx::value::Local;
use crate::lower::passes::operands;
use crate::source_map::Span;
use crate::types::Type;
use naga::{Block, Expression, Handle, Statement};
use std::collections::HashMap;

/// The function being built.
pub(in crate::lower) struct FnCtx {
    /// The naga function (its body is assembled from `blocks` at the end).
    pub function: naga::Function,
    blocks: Vec<Block>,
    emitter: naga::proc::Emitter,
    scopes: Vec<HashMap<String, Local>>,
    /// MSL return type.
    pub return_type: Type,
    /// The return type is `auto`, not yet deduced: the first `return`
    /// gives it (C++ [dcl.spec.auto]); `return_type` is `void` until then.
    pub deduce_return: bool,
    /// The reference parameter every `return` returns (`return a;` in
    /// `thread S& operator+=(thread S& a, S b)`): the helper returns
    /// nothing, and its call is that argument (`cxx/functions.rs`).
    pub returned_parameter: Option<String>,
    /// Enclosing loops (for `continue`) and loops or switches (for `break`).
    pub loops: usize,
    /// Enclosing switches.
    pub breakables: usize,
    /// A barrier was lowered.
    pub uses_barrier: bool,
    /// This is a kernel's entry point (threadgroup variables are allowed).
    pub kernel: bool,
    /// A fragment function (implicit-LOD sampling, derivatives, discard).
    pub fragment: bool,
    /// For vertex/fragment entry points returning a struct: how a returned
    /// MSL value becomes the WGSL output struct.
    pub output: Option<OutputAdapter>,
    /// Operator nesting depth of each inlined expression (see [`FnCtx::add`]),
    /// by the expression's index (0 where none is recorded): asked for every
    /// operand of every expression, a hash map was a tenth of lowering.
    depth: Vec<u32>,
    /// Operands lowered already, by expression (its address and span), for
    /// the lowering that comes next (see `cxx::args`).
    pub(in crate::lower) lowered: Vec<(usize, Span, crate::lower::ctx::value::Value)>,
    /// Its `constexpr` locals, for the constant evaluator (array sizes).
    pub(in crate::lower) constants: crate::sema::constexpr_body::LocalConstants,
    /// The expression of the expression statement being lowered: its value
    /// is discarded (calls whose WGSL form returns nothing are allowed).
    pub(in crate::lower) discarded: Option<Span>,
    /// The struct whose member this function is (`S` of `S::f`), also for
    /// a static member function, which has no `this` to find it through:
    /// its body names the struct's static constants unqualified.
    pub(in crate::lower) owner: Option<String>,
    /// Predicated control flow under the 32-lane SIMD emulation
    /// (`lower::metal::simd_branches`).
    pub(in crate::lower) pred: crate::lower::metal::simd_branches::Predication,
    /// Bodies of calls being lowered in place (`metal/pointer_objects.rs`):
    /// a `return` there would leave the function that holds them.
    pub(in crate::lower) inlined: usize,
    /// Elements of arrays of resources chosen at run time
    /// (`metal/resource_choice.rs`).
    pub(in crate::lower) choices: crate::lower::metal::resource_choice::Choices,
    /// Calls of the function to itself lowered as jumps
    /// (`lower/cxx/tail_calls.rs`).
    pub(in crate::lower) tail: crate::lower::cxx::tail_calls::TailRecursion,
    /// The library function of the same name competes with the user
    /// overloads of the call being resolved (`cxx/call.rs`,
    /// `call_user_or_library`): a user overload that converts an argument
    /// loses to it. Set by the rejection when one did.
    pub(in crate::lower) library_competes: LibraryCompetes,
}

/// Where the library function of a call's name stands against its user
/// overloads ([`FnCtx::library_competes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::lower) enum LibraryCompetes {
    /// No library function competes.
    #[default]
    No,
    /// It competes with the next call resolved.
    Yes,
    /// The best user overload converted an argument: the library's exact
    /// match wins ([over.match.best]).
    Wins,
}

/// A point of a function's lowering to go back to ([`FnCtx::mark`]).
#[derive(Clone, Copy)]
pub(in crate::lower) struct Mark {
    blocks: usize,
    statements: usize,
    expressions: usize,
}

/// The caller's naming state, set aside while a call's body is lowered in
/// its place ([`FnCtx::enter_inline`]).
pub(in crate::lower) struct InlineFrame {
    scopes: Vec<HashMap<String, Local>>,
    loops: usize,
    breakables: usize,
    owner: Option<String>,
    constants: crate::sema::constexpr_body::LocalConstants,
    lowered: Vec<(usize, Span, crate::lower::ctx::value::Value)>,
    discarded: Option<Span>,
}

/// Deepest operator nesting left inline in the WGSL. naga's writer prints
/// single-use expressions inline, and WGSL parsers limit nesting (naga's to
/// 200 levels), so deeper trees are cut into named `let`s.
const MAX_INLINE_DEPTH: u32 = 32;

/// Whether naga's WGSL writer always gives `e` a `let` of its own (image
/// operations for readability, derivatives for their control flow): its
/// users nest from that name, as from a leaf, whatever its operands' depth
/// (which its own line stays within: deeper operands are named already).
fn has_own_let(e: &Expression) -> bool {
    matches!(
        e,
        Expression::ImageSample { .. }
            | Expression::ImageLoad { .. }
            | Expression::ImageQuery { .. }
            | Expression::Derivative { .. }
    )
}

impl FnCtx {
    /// A new, empty function.
    pub fn new(name: &str, return_type: Type) -> Self {
        FnCtx {
            function: naga::Function {
                name: Some(name.to_string()),
                ..Default::default()
            },
            blocks: vec![Block::new()],
            emitter: Default::default(),
            scopes: vec![HashMap::new()],
            return_type,
            deduce_return: false,
            returned_parameter: None,
            loops: 0,
            breakables: 0,
            uses_barrier: false,
            kernel: false,
            fragment: false,
            output: None,
            depth: Vec::new(),
            lowered: Vec::new(),
            constants: crate::sema::constexpr_body::LocalConstants::open(),
            discarded: None,
            owner: None,
            pred: Default::default(),
            inlined: 0,
            choices: Default::default(),
            tail: Default::default(),
            library_competes: Default::default(),
        }
    }

    /// Starts lowering a callee's body in place: its names are its own
    /// (the caller's locals are not visible, as in a call), `break` and
    /// `continue` do not reach the caller's loops, and `owner` is the
    /// callee's struct. Statements still go to the current block.
    pub fn enter_inline(&mut self, owner: Option<String>) -> InlineFrame {
        self.inlined += 1;
        InlineFrame {
            scopes: std::mem::replace(&mut self.scopes, vec![HashMap::new()]),
            loops: std::mem::take(&mut self.loops),
            breakables: std::mem::take(&mut self.breakables),
            owner: std::mem::replace(&mut self.owner, owner),
            constants: std::mem::replace(
                &mut self.constants,
                crate::sema::constexpr_body::LocalConstants::open(),
            ),
            lowered: std::mem::take(&mut self.lowered),
            discarded: self.discarded.take(),
        }
    }

    /// Ends what [`FnCtx::enter_inline`] started, restoring the caller's
    /// names.
    pub fn leave_inline(&mut self, frame: InlineFrame) {
        self.inlined -= 1;
        self.scopes = frame.scopes;
        self.loops = frame.loops;
        self.breakables = frame.breakables;
        self.owner = frame.owner;
        // The callee's constants frame is the innermost; dropping it
        // closes it.
        drop(std::mem::replace(&mut self.constants, frame.constants));
        self.lowered = frame.lowered;
        self.discarded = frame.discarded;
    }

    /// Appends an expression, covering it with an `Emit` when naga needs one.
    pub fn add(&mut self, expr: Expression, span: Span) -> Handle<Expression> {
        if let Some(part) = self.constant_part(&expr) {
            return part;
        }
        let span = naga::Span::new(span.start, span.end);
        if expr.needs_pre_emit() {
            self.flush();
            return self.function.expressions.append(expr, span);
        }
        if !self.emitter.is_running() {
            self.emitter.start(&self.function.expressions);
        }
        let depth = if has_own_let(&expr) {
            1
        } else {
            let mut deepest = 0;
            operands::for_each(&expr, |h| {
                deepest = deepest.max(self.depth.get(h.index()).copied().unwrap_or(0));
            });
            1 + deepest
        };
        let h = self.function.expressions.append(expr, span);
        if depth > MAX_INLINE_DEPTH {
            self.function
                .named_expressions
                .insert(h, format!("t{}", h.index()));
        } else {
            if self.depth.len() <= h.index() {
                self.depth.resize(h.index() + 1, 0);
            }
            self.depth[h.index()] = depth;
        }
        h
    }

    /// `splat(v)[i]` is `v`, and element `i` of a composite of literals
    /// (`vec2(1f, 1f).x`) is that literal. Folded here because naga 30's
    /// override processing (wgpu runs it on every module that declares an
    /// `override`, as kernels with barriers do) folds such an access
    /// itself and can then leave the SPIR-V writer without an expression it
    /// needs ("Expression [n] is not cached", a panic in pipeline creation
    /// where buffer accesses are bounds-checked).
    fn constant_part(&self, expr: &Expression) -> Option<Handle<Expression>> {
        let Expression::AccessIndex { base, index } = *expr else {
            return None;
        };
        match self.function.expressions[base] {
            Expression::Splat { value, .. } => Some(value),
            Expression::Compose { ref components, .. } => {
                let part = *components.get(index as usize)?;
                components
                    .iter()
                    .all(|c| matches!(self.function.expressions[*c], Expression::Literal(_)))
                    .then_some(part)
            }
            _ => None,
        }
    }

    /// Appends an expression that a statement defines (`CallResult`), which
    /// must not be emitted.
    pub fn add_result(&mut self, expr: Expression, span: Span) -> Handle<Expression> {
        self.flush();
        self.function
            .expressions
            .append(expr, naga::Span::new(span.start, span.end))
    }

    /// Ends the pending `Emit` range.
    fn flush(&mut self) {
        if self.emitter.is_running() {
            if let Some((stmt, span)) = self.emitter.finish(&self.function.expressions) {
                self.blocks.last_mut().expect("a block").push(stmt, span);
            }
        }
    }

    /// Appends a statement to the current block.
    pub fn push(&mut self, stmt: Statement, span: Span) {
        self.flush();
        self.blocks
            .last_mut()
            .expect("a block")
            .push(stmt, naga::Span::new(span.start, span.end));
    }

    /// How many blocks are open: which one statements go to.
    pub fn block_depth(&self) -> usize {
        self.blocks.len()
    }

    /// Starts a nested block (and a scope).
    pub fn open(&mut self) {
        self.flush();
        self.blocks.push(Block::new());
        self.scopes.push(HashMap::new());
    }

    /// Ends the nested block and returns it.
    pub fn close(&mut self) -> Block {
        self.flush();
        self.scopes.pop();
        self.blocks.pop().expect("an open block")
    }

    /// Where the function's IR stands, for [`FnCtx::rewind`].
    pub fn mark(&mut self) -> Mark {
        self.flush();
        Mark {
            blocks: self.blocks.len(),
            statements: self.blocks.last().map_or(0, Block::len),
            expressions: self.function.expressions.len(),
        }
    }

    /// Drops what was lowered since `mark` (a failed attempt): the blocks
    /// and scopes it opened, the statements it added, and its expressions,
    /// which stay in the arena as unused literals (those a statement
    /// defines stay unused).
    pub fn rewind(&mut self, mark: Mark) {
        self.emitter = Default::default();
        self.blocks.truncate(mark.blocks);
        self.scopes.truncate(mark.blocks);
        if let Some(b) = self.blocks.last_mut() {
            b.cull(mark.statements..);
        }
        crate::lower::cxx::members::neutralize_results(self, mark.expressions);
    }

    /// Appends the statements of `block` (closed with [`FnCtx::close`]) to
    /// the current block, as if they had been lowered there: what they
    /// emit stays visible after them, as a nested `Block` would not.
    pub fn splice(&mut self, block: Block) {
        self.flush();
        self.blocks.last_mut().expect("a block").extend_block(block);
    }

    /// Declares a name in the innermost scope; false if already declared there.
    pub fn declare(&mut self, name: &str, local: Local) -> bool {
        let scope = self.scopes.last_mut().expect("a scope");
        if scope.contains_key(name) {
            return false;
        }
        scope.insert(name.to_string(), local);
        true
    }

    /// Replaces what `name` stands for, if it is declared in the innermost
    /// scope; false otherwise.
    pub fn rebind_innermost(&mut self, name: &str, local: Local) -> bool {
        match self.scopes.last_mut().and_then(|s| s.get_mut(name)) {
            Some(slot) => {
                *slot = local;
                true
            }
            None => false,
        }
    }

    /// Replaces what `name` stands for in the innermost scope declaring it.
    pub fn rebind(&mut self, name: &str, local: Local) {
        if let Some(slot) = self.scopes.iter_mut().rev().find_map(|s| s.get_mut(name)) {
            *slot = local;
        }
    }

    /// The names in scope, innermost scope first and sorted within one
    /// (for "did you mean" hints, which must not depend on hash order).
    pub fn names_in_scope(&self) -> Vec<&str> {
        let mut names = Vec::new();
        for scope in self.scopes.iter().rev() {
            let mut these: Vec<&str> = scope.keys().map(String::as_str).collect();
            these.sort_unstable();
            names.extend(these);
        }
        names
    }

    /// Looks a name up from the innermost scope out.
    pub fn lookup(&self, name: &str) -> Option<&Local> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    /// Adds a local variable.
    pub fn local(
        &mut self,
        name: &str,
        ty: Handle<naga::Type>,
        span: Span,
    ) -> Handle<naga::LocalVariable> {
        self.function.local_variables.append(
            naga::LocalVariable {
                name: Some(name.to_string()),
                ty,
                init: None,
            },
            naga::Span::new(span.start, span.end),
        )
    }

    /// The type of local variable `l`.
    pub fn local_type(&self, l: Handle<naga::LocalVariable>) -> Handle<naga::Type> {
        self.function.local_variables[l].ty
    }

    /// How many local variables the function has so far.
    pub fn local_count(&self) -> usize {
        self.function.local_variables.len()
    }

    /// The naga type of argument `i`.
    pub fn argument_type(&self, i: u32) -> Handle<naga::Type> {
        self.function.arguments[i as usize].ty
    }

    /// True if the current block already ends in a terminator.
    pub fn terminated(&self) -> bool {
        self.blocks.last().and_then(|b| b.last()).is_some_and(|s| {
            matches!(
                s,
                Statement::Return { .. } | Statement::Break | Statement::Continue | Statement::Kill
            )
        })
    }

    /// Finishes the function.
    pub fn finish(mut self) -> naga::Function {
        self.flush();
        let body = self.blocks.pop().expect("the body");
        self.function.body = body;
        self.function
    }

    /// The expression `h` as it was built.
    pub fn expr(&self, h: Handle<Expression>) -> &Expression {
        &self.function.expressions[h]
    }
}

/// How a returned MSL struct becomes the entry point's output struct.
#[derive(Clone, Debug)]
pub(in crate::lower) struct OutputAdapter {
    /// The WGSL output type (a struct, unless `members` is empty).
    pub ty: Handle<naga::Type>,
    /// For each output member, how it is made from the MSL struct.
    pub members: Vec<OutputMember>,
    /// A bare (non-struct) return: its MSL and IO types.
    pub bare: Option<(Type, Type)>,
}

/// One member of an entry point's output struct.
#[derive(Clone, Debug)]
pub(in crate::lower) enum OutputMember {
    /// A point-sprite entry point's `[[position]]`: the MSL member at
    /// `position` moved to the corner by the `[[point_size]]` member at
    /// `size`, of MSL type `size_ty` (`lower::entry::point_sprites`).
    SpritePosition {
        /// The position member's index.
        position: u32,
        /// The point size member's index.
        size: u32,
        /// Its MSL type (`float` or `half`).
        size_ty: Type,
    },
    /// A point-sprite entry point's `[[point_coord]]` varying.
    PointCoord,
    /// The MSL member at this index of the MSL struct's naga type,
    /// converted from its MSL type to its IO type.
    Convert(u32, Type, Type),
    /// `[[clip_distance]]`: the MSL member at this index, a `float` or a
    /// `float[count]`, gathered into WGSL's `array<f32, count>`.
    ClipDistances {
        /// The MSL member's index.
        index: u32,
        /// The number of distances.
        count: u32,
        /// The MSL member is an array (not a bare `float`).
        array: bool,
        /// `array<f32, count>`.
        ty: Handle<naga::Type>,
    },
}
