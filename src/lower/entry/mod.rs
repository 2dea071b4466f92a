//! Entry points: how a Metal stage function's parameters and results become
//! WGSL entry-point inputs, outputs and resource bindings.
//!
//! `compute` (kernels and their attributes), `stages` (vertex and fragment:
//! `[[stage_in]]`, built-ins, varyings linked by name or `[[user]]`),
//! `outputs` (what vertex and fragment functions return), `bindings`
//! (buffers, textures, samplers, threadgroup memory and their `@group`/
//! `@binding` numbers).

pub(in crate::lower) mod bindings;
pub(in crate::lower) mod compute;
pub(in crate::lower) mod outputs;
pub(in crate::lower) mod stages;
