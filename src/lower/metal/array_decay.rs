//! Array-to-pointer conversion ([conv.array]): an array used where a
//! pointer is wanted (`T* p = arr;`, `arr + i`) is a pointer to its first
//! element, in the memory the array is in.
//!
//! Which arrays decay here: threadgroup arrays and whole local arrays
//! (`pointer_members.rs` builds those pointers), and arrays in buffer
//! memory, such as a member array of a buffer element (`x[ib].qs + 8`, as
//! llama.cpp's quantised blocks are read) or one held as words. A part of
//! a local variable does not decay: a `thread` pointer into it could not be
//! passed on to a function (`functions.rs`).

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{PtrValue, Value};
use crate::lower::Lowerer;
use crate::source_map::Span;
use crate::types::{AddressSpace, Type};

impl Lowerer<'_, '_> {
    /// `v` as the pointer it decays to if it is an array that decays;
    /// `v` itself otherwise.
    pub(in crate::lower) fn decayed_array(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        span: Span,
    ) -> Value {
        if let Value::Place(p) = &v {
            if let Some(ptr) = self.decayed_local_array(fx, p, span) {
                return Value::Ptr(ptr);
            }
        }
        self.decayed_shared_array(fx, v, span)
    }

    /// [`Self::decayed_array`] for arrays in threadgroup or buffer memory
    /// only: a cast (`(device const uint16_t*)x[i].qs`) views those; views
    /// of thread memory are `thread_punning.rs`'s.
    pub(in crate::lower) fn decayed_shared_array(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        span: Span,
    ) -> Value {
        let decayed = match &v {
            Value::Place(p) => {
                let shared = [
                    AddressSpace::Threadgroup,
                    AddressSpace::Device,
                    AddressSpace::Constant,
                ];
                self.decayed_place(fx, p, &shared, span)
            }
            Value::Bytes(b) => self.decayed_word_array(b),
            _ => None,
        };
        decayed.map_or(v, Value::Ptr)
    }

    /// An array held in a buffer's or threadgroup memory's words: the
    /// pointer is the byte offset of its first element.
    fn decayed_word_array(&self, b: &crate::lower::ctx::value::BytePlace) -> Option<PtrValue> {
        let Type::Array(elem, _) = &b.ty else {
            return None;
        };
        if self.buffer_space(b.global) == AddressSpace::Thread {
            return None;
        }
        self.decayed_bytes_array(b, elem)
    }
}
