//! naga→naga rewrites of a whole lowered module.
//!
//! What must hold for every function at once, or only for one output
//! dialect, is rewritten on the IR, never on the emitted WGSL text: a
//! rewrite of the text could hit a user identifier that happens to look
//! like what it matches, the IR cannot.
//!
//! - [`half_demotion`]: `half` as `f32` (`HalfMode::F32`), after lowering;
//! - [`browser_dialect`]: what the WebGPU target needs beyond naga's own
//!   dialect, before the WGSL writer runs (with [`loop_exits`]: loops
//!   that never exit);
//! - [`comparison_samplers`]: samplers the host sets typed `sampler` or
//!   `sampler_comparison` by their use, through helpers, after lowering;
//! - [`simd_uniformity`]: where an emulated SIMD-group exchange would wait
//!   in non-uniform control flow (an analysis, no rewrite; with Tint's
//!   rules, where a barrier would);
//! - [`early_returns`]: a `return` that depends on the thread, before a
//!   barrier, as the thread's inactivity (after lowering a kernel, in it
//!   and the helpers it calls);
//! - [`execution_barriers`]: `threadgroup_barrier(mem_flags::mem_none)` in
//!   non-uniform control flow left out (after lowering a kernel);
//! - [`uniform_loads`]: a threadgroup value read between two barriers as
//!   `workgroupUniformLoad` (after lowering a kernel).
//!
//! They share [`ir_walk`] (every statement of a block, every function a
//! call reaches) and [`operands`] (every operand of an expression, the one
//! list of them that the lowering keeps).

pub(crate) mod browser_dialect;
pub(crate) mod comparison_samplers;
pub(crate) mod early_returns;
pub(crate) mod execution_barriers;
pub(crate) mod half_demotion;
pub(crate) mod ir_walk;
mod loop_exits;
pub(in crate::lower) mod merged_functions;
pub(in crate::lower) mod operands;
mod rebuild;
pub(crate) mod simd_uniformity;
pub(crate) mod stage_operations;
pub(crate) mod uniform_loads;
