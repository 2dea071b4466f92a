//! The contexts lowering state travels in, and the values it tracks.
//!
//! This folder imports nothing else of `lower`: every other folder builds on
//! it. `function` is the function/block context (the naga function being
//! built, its scopes and emitter); `value` is what an MSL expression lowers
//! to (a value, a place, a pointer as (root, index), a word-view place).

pub(in crate::lower) mod entry;
pub(in crate::lower) mod function;
pub(in crate::lower) mod value;
