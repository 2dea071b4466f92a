//! One file per place where Metal's rules and WGSL's differ; each file opens
//! with Metal's rule, WGSL's rule and the mapping chosen.
//!
//! - `array_decay`: arrays used as pointers (`x[i].qs + 8`) as pointers to
//!   their first element, in the memory they are in;
//! - `attribute_formats`: kernels' `[[stage_in]]` attribute formats
//!   decoded from buffer words, with Metal's conversions;
//! - `dispatch_grid`: Metal's grid attributes (non-uniform grids, positions
//!   in grid/threadgroup) from WGSL built-ins and the dispatch uniform;
//! - `invocation`: per-invocation state (inside the grid or not, SIMD lane and
//!   width) that the prologue computes and helpers read; with barriers,
//!   threads outside a ragged grid run along predicated;
//! - `word_views`: buffers whose Metal layout WGSL cannot declare, held as
//!   `u32` words addressed in bytes (packed vectors, 8/16-bit, `half`);
//! - `narrow_integers`: `char`/`short` outside buffers in 32-bit values;
//! - `byte_stores`: 8/16-bit elements that a quad of threads stores together,
//!   combined into word stores with quad operations;
//! - `buffer_pointers`: pointers into buffers as (buffer, element index),
//!   since naga takes no storage pointers as parameters;
//! - `half_as_f32`: `half` as `f32` rounded to binary16 where Metal rounds;
//! - `bfloat`: `bfloat` as `f32` rounded to bfloat where Metal rounds, 2
//!   bytes in buffers;
//! - `inline_samplers`: `constexpr sampler`s as bindings with a reflected
//!   descriptor;
//! - `function_constants`: `[[function_constant(n)]]` as `override`s;
//! - `pointer_members`: structs with pointer/reference/texture members as
//!   translation-time aggregates of places;
//! - `pointer_objects`: local objects of such structs built by constructors
//!   and moved by member functions, scalarised into variables;
//! - `inlined_calls`: functions returning such structs (constructors),
//!   lowered where they are called;
//! - `pointer_choice`: `c ? p : q` between pointers of one root, as a
//!   chosen index;
//! - `resource_choice`: arrays of textures, samplers and buffer pointers
//!   indexed at run time, each use in a `switch` over the elements;
//! - `pointer_views`: memory the program views through a pointer to another
//!   type, held as words (a second lowering once a cast meets it typed);
//! - `simd_groups`: Metal's 32-wide SIMD groups emulated in threadgroup
//!   memory on adapters of any subgroup width (or WGSL's native subgroups);
//! - `simd_branches`: SIMD-group functions inside branches under the
//!   emulation, by running the branch on every thread with narrowed activity;
//! - `simd_loops`: SIMD-group functions inside loops whose trip count
//!   depends on the thread, run on every thread until none iterates;
//! - `simd_operands`: SIMD-group functions in operands of `&&`, `||` and
//!   `?:`, evaluated on every thread with narrowed activity;
//! - `simd_helpers`: helpers that return early around SIMD-group
//!   functions, their `return`s turned into a flag that narrows activity;
//! - `simdgroup_matrix`: `simdgroup_matrix<T, 8, 8>`, which a SIMD group
//!   holds together, held whole by every thread;
//! - `signed_remainder`: integer `/` and `%` with WGSL's values on every
//!   backend (naga's GLSL writer prints them as GLSL's, undefined for
//!   negative operands and zero divisors);
//! - `unions`: `union`s as 32-bit words, their members read and written
//!   through word views.
//! - `logging`: `metal::os_log` calls, dropped (WebGPU shaders cannot log).
//! - `tessellation`: the tessellator's inputs to post-tessellation vertex
//!   functions (`[[patch]]`), refused: WebGPU has no tessellation.
//! - `texel_buffers`: `texture_buffer` as a storage buffer of words, texels
//!   decoded and encoded in the shader;
//! - `texture_layers`: `texture1d_array` and cube textures read or written
//!   texel by texel, bound as 2-D arrays (of height 1; of 6 faces a cube);
//! - `texture_sampling`: `min_lod_clamp` as an explicit, clamped LOD, and
//!   non-constant texel offsets folded into the coordinate;
//! - `wide_integers`: 64-bit integers (`long`, `size_t`) in their low 32
//!   bits on WebGPU, with Metal's 8 bytes in buffers.

mod array_decay;
pub(in crate::lower) mod attribute_formats;
pub(in crate::lower) mod bfloat;
pub(in crate::lower) mod bit_fields;
pub(in crate::lower) mod buffer_pointers;
pub mod byte_stores;
pub(in crate::lower) mod dispatch_grid;
pub(in crate::lower) mod function_constants;
pub(in crate::lower) mod half_as_f32;
pub(in crate::lower) mod inline_samplers;
pub(in crate::lower) mod inlined_calls;
pub(in crate::lower) mod invocation;
#[cfg(test)]
pub(in crate::lower) mod ir_eval;
pub(in crate::lower) mod logging;
pub(in crate::lower) mod narrow_integers;
pub(in crate::lower) mod pointer_addresses;
pub(in crate::lower) mod pointer_choice;
pub(in crate::lower) mod pointer_members;
pub(in crate::lower) mod pointer_objects;
pub(in crate::lower) mod pointer_views;
pub(in crate::lower) mod resource_choice;
pub(in crate::lower) mod sample_positions;
pub(in crate::lower) mod signed_remainder;
pub(in crate::lower) mod simd_branches;
pub mod simd_groups;
pub(in crate::lower) mod simd_helpers;
pub(in crate::lower) mod simd_loops;
pub(in crate::lower) mod simd_operands;
pub(in crate::lower) mod simdgroup_matrix;
pub(in crate::lower) mod tessellation;
pub(in crate::lower) mod texel_buffers;
pub(in crate::lower) mod texture_layers;
pub(in crate::lower) mod texture_sampling;
pub(in crate::lower) mod thread_punning;
pub(in crate::lower) mod thread_view_parts;
pub(in crate::lower) mod thread_views;
pub(in crate::lower) mod uniform_barriers;
pub(in crate::lower) mod unions;
mod vote_counters;
pub(in crate::lower) mod whole_word_stores;
pub(in crate::lower) mod wide_integers;
pub(in crate::lower) mod word_tiles;
pub(in crate::lower) mod word_views;
