//! One file per place where Metal's rules and WGSL's differ; each file opens
//! with Metal's rule, WGSL's rule and the mapping chosen.
//!
//! - `dispatch_grid`: Metal's grid attributes (non-uniform grids, positions
//!   in grid/threadgroup) from WGSL built-ins and the dispatch uniform;
//! - `invocation`: per-invocation state (inside the grid or not, SIMD lane and
//!   width) that the prologue computes and helpers read; with barriers,
//!   threads outside a ragged grid run along predicated;
//! - `word_views`: buffers whose Metal layout WGSL cannot declare, held as
//!   `u32` words addressed in bytes (packed vectors, 8/16-bit, `half`);
//! - `narrow_integers`: `char`/`short` outside buffers in 32-bit values;
//! - `buffer_pointers`: pointers into buffers as (buffer, element index),
//!   since naga takes no storage pointers as parameters;
//! - `half_as_f32`: `half` as `f32` rounded to binary16 where Metal rounds;
//! - `inline_samplers`: `constexpr sampler`s as bindings with a reflected
//!   descriptor;
//! - `function_constants`: `[[function_constant(n)]]` as `override`s;
//! - `pointer_members`: structs with pointer/reference/texture members as
//!   translation-time aggregates of places.

pub(in crate::lower) mod buffer_pointers;
pub(in crate::lower) mod dispatch_grid;
pub(in crate::lower) mod function_constants;
pub(in crate::lower) mod half_as_f32;
pub(in crate::lower) mod inline_samplers;
pub(in crate::lower) mod invocation;
#[cfg(test)]
pub(in crate::lower) mod ir_eval;
pub(in crate::lower) mod narrow_integers;
pub(in crate::lower) mod pointer_members;
pub(in crate::lower) mod word_views;
