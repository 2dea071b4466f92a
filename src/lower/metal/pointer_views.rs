//! Memory viewed through a pointer to another type: `(threadgroup char*)&a`,
//! `reinterpret_cast<const device float4*>(f + i)`, `(device atomic_uint*)&b.x`.
//!
//! Metal's rule: a pointer into `device`, `constant` or `threadgroup`
//! memory can be cast to a pointer to any other type in the same address
//! space (as C++'s `reinterpret_cast` casts pointers); a load or
//! store through it reads or writes the bytes there in the target type's
//! layout, which must be aligned as that type requires (a `float4` at a
//! multiple of 16 bytes, otherwise the access is undefined), and an atomic
//! function on an `atomic_uint` view of a `uint` is atomic on those bytes.
//!
//! WGSL's rule: every variable has one type and there is no cast between
//! pointer types; atomic functions take only `atomic<T>` variables.
//!
//! The mapping: memory whose pointers an entry point reinterprets is held as
//! 32-bit words addressed in bytes (`word_views.rs`), the one representation
//! that reads and writes as any type. Writable memory gets atomic words, so
//! that sub-word stores through a byte view keep the neighbouring bytes
//! other threads write, and atomic views are atomic. Which memory that is
//! follows from where the cast pointer points, which is known only while
//! lowering (through helper calls and Tint's structs of pointers): a cast
//! that meets typed memory records it (a buffer argument, a
//! `[[threadgroup(n)]]` argument or a `threadgroup` variable) and fails,
//! and the entry point is lowered again with that memory held as words
//! ([`Lowerer::retry_with_word_views`]). A view through a word view then
//! follows Metal's byte layout exactly; a misaligned `float4` view (undefined
//! in Metal) reads and writes the four floats at its byte offset.

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{BytePlace, Local, PtrRoot, PtrValue};
use crate::lower::{Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{Scalar, Type};
use naga::{Expression, Handle};
use std::collections::{BTreeSet, HashMap, HashSet};

/// A piece of memory an entry point owns, named so that a second lowering
/// of the entry point can recognise it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(in crate::lower) enum Memory {
    /// Buffer argument `[[buffer(n)]]`.
    Buffer(u32),
    /// The buffer a pointer member `[[id(id)]]` of the argument buffer
    /// `[[buffer(n)]]` points to: `(n, id)`.
    ArgumentBufferMember(u32, u32),
    /// Threadgroup argument `[[threadgroup(n)]]`.
    ThreadgroupArgument(u32),
    /// A `threadgroup` variable of the kernel, by its name's span.
    ThreadgroupVariable(u32, u32),
    /// Every piece of threadgroup memory: a view met through a helper's
    /// pointer parameter, which does not say which memory it points into.
    EveryThreadgroup,
}

impl Memory {
    /// The `threadgroup` variable declared with name `name`.
    pub(in crate::lower) fn threadgroup_variable(name: Span) -> Memory {
        Memory::ThreadgroupVariable(name.start, name.end)
    }

    fn is_threadgroup(self) -> bool {
        !matches!(self, Memory::Buffer(_) | Memory::ArgumentBufferMember(..))
    }
}

/// The entry point's memory held as words, and what its casts asked for.
#[derive(Debug, Default)]
pub(in crate::lower) struct ViewedMemory {
    /// Memory held as words in this lowering.
    pub as_words: BTreeSet<Memory>,
    /// The memory each global the entry point binds or declares holds.
    pub of_global: HashMap<Handle<naga::GlobalVariable>, Memory>,
    /// Typed memory a cast met: to be held as words in the next lowering.
    pub wanted: BTreeSet<Memory>,
    /// Read-only storage globals bound from `const device` pointers: a
    /// pointer made from a place in one (`&(*p)[i]`, a byte view) is a
    /// `device` pointer, not a `constant` one.
    pub device_buffers: HashSet<Handle<naga::GlobalVariable>>,
}

impl Lowerer<'_, '_> {
    /// Whether this lowering holds `memory` as words because the entry point
    /// reinterprets it.
    pub(in crate::lower) fn viewed_as_words(&self, memory: Memory) -> bool {
        let words = &self.entry.viewed.as_words;
        words.contains(&memory)
            || (memory.is_threadgroup() && words.contains(&Memory::EveryThreadgroup))
    }

    /// Records that global `g` holds `memory` in this entry point.
    pub(in crate::lower) fn note_memory(
        &mut self,
        g: Handle<naga::GlobalVariable>,
        memory: Memory,
    ) {
        self.entry.viewed.of_global.insert(g, memory);
    }

    /// Records that buffer global `g` holds `memory`, bound from a pointer
    /// into `space`.
    pub(in crate::lower) fn note_buffer(
        &mut self,
        g: Handle<naga::GlobalVariable>,
        memory: Memory,
        space: crate::types::AddressSpace,
    ) {
        self.note_memory(g, memory);
        if space == crate::types::AddressSpace::Device {
            self.entry.viewed.device_buffers.insert(g);
        }
    }

    /// Records the memory pointer `p` (into typed memory) points into as
    /// wanted in words, when it is memory a second lowering can hold so:
    /// the cast that meets it fails now and succeeds then.
    pub(in crate::lower) fn want_word_view(&mut self, fx: &FnCtx, p: &PtrValue) {
        let root = match p.root {
            PtrRoot::Buffer(g) | PtrRoot::Global(g) => Some(g),
            PtrRoot::Place(base, _) => self.root_global(fx, base),
            PtrRoot::Bytes(_) | PtrRoot::View { .. } => return,
        };
        let memory = match root {
            Some(g) => self.entry.viewed.of_global.get(&g).copied(),
            // A helper's threadgroup pointer parameter (a naga pointer
            // argument): the caller's memory is not known here.
            None if p.space == crate::types::AddressSpace::Threadgroup
                && self.root_is_argument(fx, p) =>
            {
                Some(Memory::EveryThreadgroup)
            }
            None => None,
        };
        if let Some(memory) = memory {
            self.entry.viewed.wanted.insert(memory);
        }
    }

    /// The global a chain of accesses starting at `ptr` is rooted in.
    fn root_global(
        &self,
        fx: &FnCtx,
        mut ptr: Handle<Expression>,
    ) -> Option<Handle<naga::GlobalVariable>> {
        loop {
            match *fx.expr(ptr) {
                Expression::GlobalVariable(g) => return Some(g),
                Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                    ptr = base
                }
                _ => return None,
            }
        }
    }

    /// Whether the place `p` is rooted in is a function argument.
    fn root_is_argument(&self, fx: &FnCtx, p: &PtrValue) -> bool {
        let PtrRoot::Place(mut ptr, _) = p.root else {
            return false;
        };
        loop {
            match *fx.expr(ptr) {
                Expression::FunctionArgument(_) => return true,
                Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                    ptr = base
                }
                _ => return false,
            }
        }
    }

    /// Lowers an entry point with `attempt` (given the memory to hold as
    /// words, returning its result and the memory its casts wanted as
    /// words) until no cast asks for more: each new try holds more memory
    /// as words, so this ends after at most one try per piece of memory.
    pub(in crate::lower) fn retry_with_word_views<T>(
        &mut self,
        mut attempt: impl FnMut(&mut Self, BTreeSet<Memory>) -> (Result<T>, BTreeSet<Memory>),
    ) -> Result<T> {
        let mut as_words = BTreeSet::new();
        loop {
            let warnings = self.global.warnings.len();
            let (result, wanted) = attempt(self, as_words.clone());
            match result {
                Err(_) if !wanted.is_subset(&as_words) => {
                    self.global.warnings.truncate(warnings);
                    as_words.extend(wanted);
                }
                result => return result,
            }
        }
    }

    /// The workgroup global of atomic words holding `bytes` bytes of
    /// threadgroup memory named `name` (a reinterpreted `[[threadgroup(n)]]`
    /// argument).
    pub(in crate::lower) fn threadgroup_words(
        &mut self,
        name: &str,
        bytes: u32,
        span: Span,
    ) -> Result<Handle<naga::GlobalVariable>> {
        let words = Type::Array(
            Box::new(Type::Atomic(Scalar::UInt)),
            bytes.div_ceil(4).max(1),
        );
        let ty = self.naga_type(&words, span)?;
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(name.to_string()),
                space: naga::AddressSpace::WorkGroup,
                binding: None,
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            Self::span(span),
        );
        self.global.word_views.insert(g, true);
        self.global.threadgroup_bytes.insert(g, u64::from(bytes));
        Ok(g)
    }

    /// What a `[[threadgroup(n)]]` argument held as the words `g` names: a
    /// reference to the object at byte 0, or a pointer to it.
    pub(in crate::lower) fn threadgroup_words_local(
        &mut self,
        fx: &mut FnCtx,
        g: Handle<naga::GlobalVariable>,
        ptr: &crate::types::Pointer,
        span: Span,
    ) -> Local {
        let offset = self.u32_lit(fx, 0, span);
        if ptr.is_reference {
            return Local::Bytes(BytePlace {
                global: g,
                offset,
                ty: ptr.pointee.clone(),
                writable: !ptr.is_const,
            });
        }
        Local::Ptr(PtrValue {
            root: PtrRoot::Bytes(g),
            index: offset,
            pointee: ptr.pointee.clone(),
            space: crate::types::AddressSpace::Threadgroup,
            is_const: ptr.is_const,
        })
    }

    /// Declares `threadgroup` variable `decl` of type `ty`, which the kernel
    /// reinterprets (or which holds a union), as atomic words.
    pub(in crate::lower) fn threadgroup_variable_as_words(
        &mut self,
        fx: &mut FnCtx,
        decl: &ast::Declarator,
        ty: &Type,
        writable: bool,
    ) -> Result<()> {
        self.threadgroup_union(fx, decl, ty, writable)?;
        if let Some(Local::Bytes(b)) = fx.lookup(&decl.name.name).cloned() {
            self.note_memory(b.global, Memory::threadgroup_variable(decl.name.span));
        }
        Ok(())
    }
}
