//! One-byte and two-byte buffer stores that neighbouring threads write
//! together, combined into whole words.
//!
//! Metal: a `device uchar*` (or `char`, `bool`, `ushort`, `short`) buffer
//! takes byte (half-word) stores; neighbouring threads writing neighbouring
//! elements never disturb each other (MSL §2.1 sizes, C++ memory locations).
//!
//! WGSL: the smallest store is 32 bits, so such a buffer is a word view of
//! `atomic<u32>` words (`word_views.rs`) and each element store is an atomic
//! clear-and-set pair that leaves the other bytes of its word alone: correct
//! everywhere, and several times slower than a word store where every byte
//! of each word is written (`out[gid] = uchar(v)`, BENCHMARKS.md `gray`).
//!
//! Mapping: where the store statement is the only use of its buffer, sits
//! at the top level of the kernel with nothing but declarations and
//! expression statements before it (so every invocation of the workgroup
//! reaches it: WGSL's subgroup uniformity), and its index steps by one with
//! the thread position ([`eligible`]), the four invocations of each quad
//! exchange (byte offset, bits, active) with `quadBroadcast`. When the
//! fields of the quad that fall in this invocation's word cover its four
//! bytes exactly once, the invocation holding byte 0 stores the whole word
//! with one `atomicStore` and the others store nothing; otherwise every
//! invocation falls back to its atomic pair. The check runs on the GPU, so
//! nothing assumes how WGSL numbers the lanes of a quad or maps them to
//! thread positions (neither WGSL nor Vulkan says). Threads outside a ragged
//! grid run along (the kernel is predicated, `invocation.rs`) and
//! contribute no byte, and a quad is only trusted in a full subgroup (a
//! `subgroupBallot` count equal to the subgroup size, a multiple of 4):
//! reading a lane that does not exist gives an indeterminate value.
//! Translations that may not use subgroups keep the atomic pairs
//! ([`ByteStores`]).

mod eligible;

use crate::lower::ctx::entry::{EntryStage, Feature};
use crate::lower::ctx::function::FnCtx;
use crate::lower::metal::simd_groups::SimdGroups;
use crate::lower::stdlib::simd::{bin, select};
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, GatherMode, Handle, Statement};

/// How 8- and 16-bit elements that neighbouring threads store are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ByteStores {
    /// `Subgroups` where subgroups are known to be there: the runner asks
    /// the adapter; a translation without an adapter uses them when its
    /// SIMD groups are native (the module needs subgroups already).
    #[default]
    Auto,
    /// One atomic clear-and-set pair per element: needs nothing.
    Atomic,
    /// Combined into whole words through quad operations where a kernel's
    /// store qualifies (module docs), the atomic pair elsewhere: needs the
    /// `subgroups` feature.
    Subgroups,
}

impl ByteStores {
    /// The mode a translation with SIMD groups lowered as `simd` uses.
    pub fn resolved(self, simd: SimdGroups) -> ByteStores {
        match self {
            ByteStores::Auto if simd.resolved() == SimdGroups::Native => ByteStores::Subgroups,
            ByteStores::Auto => ByteStores::Atomic,
            mode => mode,
        }
    }

    /// The name the command line uses.
    pub fn as_str(self) -> &'static str {
        match self {
            ByteStores::Auto => "auto",
            ByteStores::Atomic => "atomic",
            ByteStores::Subgroups => "subgroups",
        }
    }
}

/// One invocation's contribution, as quad lanes exchange it.
struct Field {
    /// Byte offset in the buffer.
    offset: Handle<Expression>,
    /// The element's bits, in the low `size` bytes.
    bits: Handle<Expression>,
    /// `size` bytes: 1 or 2.
    size: u32,
}

/// What a quad says about this invocation's word.
struct Cover {
    /// The word holding this invocation's field.
    word: Handle<Expression>,
    /// The quad's fields in that word cover its 4 bytes exactly once.
    whole: Handle<Expression>,
    /// Those fields, placed.
    value: Handle<Expression>,
}

impl Lowerer<'_, '_> {
    /// Whether stores of the kernel being lowered may be combined.
    fn combines_byte_stores(&self) -> bool {
        self.settings.byte_stores == ByteStores::Subgroups && self.entry.stage == EntryStage::Kernel
    }

    /// Finds the kernel's combinable store statements (`eligible`) and makes
    /// the kernel predicated when there are any, so that every invocation
    /// reaches them.
    pub(in crate::lower) fn plan_byte_stores(
        &mut self,
        body: &crate::syntax::ast::Block,
        params: &[crate::lower::entry::compute::KernelParam],
    ) {
        if !self.combines_byte_stores() {
            return;
        }
        self.entry.combined_stores = eligible::statements(body, params);
        self.entry.predicated |= !self.entry.combined_stores.is_empty();
    }

    /// Runs `lower` on the expression statement at `span`, its element
    /// store marked as combinable when the plan holds the statement.
    pub(in crate::lower) fn with_combined_store<T>(
        &mut self,
        fx: &mut FnCtx,
        span: Span,
        lower: impl FnOnce(&mut Self, &mut FnCtx) -> T,
    ) -> T {
        if !fx.kernel || !self.entry.combined_stores.contains(&span) {
            return lower(self, fx);
        }
        self.entry.combine_store = Some(fx.block_depth());
        let r = lower(self, fx);
        self.entry.combine_store = None;
        r
    }

    /// True (once per statement) where the element store being lowered is
    /// the planned one: in the kernel, in the statement's own block.
    pub(in crate::lower) fn take_combined_store(&mut self, fx: &FnCtx) -> bool {
        let here = self.entry.combine_store == Some(fx.block_depth()) && fx.kernel;
        if here {
            self.entry.combine_store = None;
        }
        here
    }

    /// Stores the `size` low bytes of `bits` at byte `offset` of word view
    /// `global`: one word store per fully written word of a quad, the
    /// atomic pair (`atomic_pair`) where the quad does not cover the word.
    pub(in crate::lower) fn combined_store(
        &mut self,
        fx: &mut FnCtx,
        global: Handle<naga::GlobalVariable>,
        (offset, bits, size): (Handle<Expression>, Handle<Expression>, u32),
        atomic_pair: impl FnOnce(&mut Self, &mut FnCtx) -> Result<()>,
        span: Span,
    ) -> Result<()> {
        self.require_feature(Feature::Subgroup);
        let active = match self.active(fx, span) {
            Some(a) => a,
            None => fx.add(naga::Expression::Literal(naga::Literal::Bool(true)), span),
        };
        let field = Field { offset, bits, size };
        let cover = self.quad_cover(fx, &field, active, span)?;
        let full = self.full_subgroup(fx, span)?;
        let whole = bin(fx, Bo::LogicalAnd, full, cover.whole, span);
        // The invocation whose field starts the word stores it.
        let three = self.u32_lit(fx, 3, span);
        let in_word = bin(fx, Bo::And, offset, three, span);
        let zero = self.u32_lit(fx, 0, span);
        let first = bin(fx, Bo::Equal, in_word, zero, span);
        let first = bin(fx, Bo::LogicalAnd, first, active, span);
        let base = fx.add(Expression::GlobalVariable(global), span);
        let pointer = fx.add(
            Expression::Access {
                base,
                index: cover.word,
            },
            span,
        );
        let mut store = naga::Block::new();
        // naga's `Store` through a pointer to an atomic is `atomicStore`.
        store.push(
            Statement::Store {
                pointer,
                value: cover.value,
            },
            Self::span(span),
        );
        fx.open();
        fx.push(
            Statement::If {
                condition: first,
                accept: store,
                reject: naga::Block::new(),
            },
            span,
        );
        let accept = fx.close();
        fx.open();
        atomic_pair(self, fx)?;
        let reject = fx.close();
        fx.push(
            Statement::If {
                condition: whole,
                accept,
                reject,
            },
            span,
        );
        Ok(())
    }

    /// Exchanges `field` within the quad and sums up the fields that share
    /// this invocation's word (an inactive invocation contributes none).
    fn quad_cover(
        &mut self,
        fx: &mut FnCtx,
        field: &Field,
        active: Handle<Expression>,
        span: Span,
    ) -> Result<Cover> {
        let two = self.u32_lit(fx, 2, span);
        let word = bin(fx, Bo::ShiftRight, field.offset, two, span);
        // (offset, bits | active << 16): one exchange per quad lane.
        let one = self.u32_lit(fx, 1, span);
        let zero = self.u32_lit(fx, 0, span);
        let flag = select(fx, active, one, zero, span);
        let sixteen = self.u32_lit(fx, 16, span);
        let flag = bin(fx, Bo::ShiftLeft, flag, sixteen, span);
        let packet = bin(fx, Bo::InclusiveOr, field.bits, flag, span);
        let v2 = self.naga_type(&Type::Vector(Scalar::UInt, 2), span)?;
        let mine = fx.add(
            Expression::Compose {
                ty: v2,
                components: vec![field.offset, packet],
            },
            span,
        );
        let (mut bytes, mut count, mut value) = (zero, zero, zero);
        for lane in 0..4 {
            let theirs = self.quad_broadcast(fx, mine, lane, v2, span);
            let part = self.placed_field(fx, theirs, word, field.size, span);
            bytes = bin(fx, Bo::InclusiveOr, bytes, part.bytes, span);
            count = bin(fx, Bo::Add, count, part.count, span);
            value = bin(fx, Bo::InclusiveOr, value, part.value, span);
        }
        let all = self.u32_lit(fx, 0xf, span);
        let four = self.u32_lit(fx, 4, span);
        let covered = bin(fx, Bo::Equal, bytes, all, span);
        let once = bin(fx, Bo::Equal, count, four, span);
        let whole = bin(fx, Bo::LogicalAnd, covered, once, span);
        Ok(Cover { word, whole, value })
    }

    /// `quadBroadcast(value, lane)`.
    fn quad_broadcast(
        &mut self,
        fx: &mut FnCtx,
        argument: Handle<Expression>,
        lane: u32,
        ty: Handle<naga::Type>,
        span: Span,
    ) -> Handle<Expression> {
        let index = self.u32_lit(fx, lane, span);
        let result = fx.add_result(Expression::SubgroupOperationResult { ty }, span);
        fx.push(
            Statement::SubgroupGather {
                mode: GatherMode::QuadBroadcast(index),
                argument,
                result,
            },
            span,
        );
        result
    }

    /// One quad lane's field (`packet`: offset, bits | active << 16) as
    /// seen from `word`: its byte mask, byte count and placed bits, all 0
    /// when it is inactive or in another word.
    fn placed_field(
        &mut self,
        fx: &mut FnCtx,
        packet: Handle<Expression>,
        word: Handle<Expression>,
        size: u32,
        span: Span,
    ) -> Placed {
        let offset = fx.add(
            Expression::AccessIndex {
                base: packet,
                index: 0,
            },
            span,
        );
        let bits = fx.add(
            Expression::AccessIndex {
                base: packet,
                index: 1,
            },
            span,
        );
        let two = self.u32_lit(fx, 2, span);
        let their_word = bin(fx, Bo::ShiftRight, offset, two, span);
        let same = bin(fx, Bo::Equal, their_word, word, span);
        let sixteen = self.u32_lit(fx, 16, span);
        let flag = bin(fx, Bo::ShiftRight, bits, sixteen, span);
        let zero = self.u32_lit(fx, 0, span);
        let active = bin(fx, Bo::NotEqual, flag, zero, span);
        let counts = bin(fx, Bo::LogicalAnd, same, active, span);
        let three = self.u32_lit(fx, 3, span);
        let byte = bin(fx, Bo::And, offset, three, span);
        let field_bytes = self.u32_lit(fx, (1 << size) - 1, span);
        let mask = bin(fx, Bo::ShiftLeft, field_bytes, byte, span);
        let ones = self.u32_lit(fx, (1 << (8 * size)) - 1, span);
        let low = bin(fx, Bo::And, bits, ones, span);
        let eight = self.u32_lit(fx, 8, span);
        let shift = bin(fx, Bo::Multiply, byte, eight, span);
        let placed = bin(fx, Bo::ShiftLeft, low, shift, span);
        let size = self.u32_lit(fx, size, span);
        Placed {
            bytes: select(fx, counts, mask, zero, span),
            count: select(fx, counts, size, zero, span),
            value: select(fx, counts, placed, zero, span),
        }
    }

    /// Whether every lane of this invocation's subgroup exists (a ballot of
    /// `true` has the subgroup size's bits) and quads are whole (the size is
    /// a multiple of 4): only then does a quad broadcast read real lanes.
    fn full_subgroup(&mut self, fx: &mut FnCtx, span: Span) -> Result<Handle<Expression>> {
        // With its predicate written out: WGSL's `subgroupBallot` takes one
        // (naga's writer prints none for `None`).
        let yes = fx.add(Expression::Literal(naga::Literal::Bool(true)), span);
        let result = fx.add_result(Expression::SubgroupBallotResult, span);
        fx.push(
            Statement::SubgroupBallot {
                result,
                predicate: Some(yes),
            },
            span,
        );
        let bits = fx.add(
            Expression::Math {
                fun: naga::MathFunction::CountOneBits,
                arg: result,
                arg1: None,
                arg2: None,
                arg3: None,
            },
            span,
        );
        let mut count = None;
        for index in 0..4 {
            let c = fx.add(Expression::AccessIndex { base: bits, index }, span);
            count = Some(match count {
                Some(sum) => bin(fx, Bo::Add, sum, c, span),
                None => c,
            });
        }
        let count = count.expect("four words");
        let size = self.subgroup_size_argument(fx, span)?;
        let same = bin(fx, Bo::Equal, count, size, span);
        let three = self.u32_lit(fx, 3, span);
        let rest = bin(fx, Bo::And, size, three, span);
        let zero = self.u32_lit(fx, 0, span);
        let quads = bin(fx, Bo::Equal, rest, zero, span);
        Ok(bin(fx, Bo::LogicalAnd, same, quads, span))
    }

    /// The entry point's `@builtin(subgroup_size)` argument, added once.
    fn subgroup_size_argument(&mut self, fx: &mut FnCtx, span: Span) -> Result<Handle<Expression>> {
        let binding = Some(naga::Binding::BuiltIn(naga::BuiltIn::SubgroupSize));
        let found = fx
            .function
            .arguments
            .iter()
            .position(|a| a.binding == binding);
        let i = match found {
            Some(i) => i,
            None => {
                let ty = self.naga_type(&Type::UINT, span)?;
                fx.function.arguments.push(naga::FunctionArgument {
                    name: Some("subgroup_size".into()),
                    ty,
                    binding,
                });
                fx.function.arguments.len() - 1
            }
        };
        Ok(fx.add(Expression::FunctionArgument(i as u32), span))
    }
}

/// [`Lowerer::placed_field`]'s result.
struct Placed {
    bytes: Handle<Expression>,
    count: Handle<Expression>,
    value: Handle<Expression>,
}
