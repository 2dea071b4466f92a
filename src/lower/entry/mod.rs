//! Entry points: how a Metal stage function's parameters and results become
//! WGSL entry-point inputs, outputs and resource bindings.
//!
//! `compute` (kernels and their attributes), `params` (parameters
//! classified by attribute, indices checked), `stages` (vertex and fragment:
//! `[[stage_in]]`, built-ins, varyings linked by name or `[[user]]`),
//! `kernel_stage_in` (a kernel's `[[stage_in]]`, fetched from buffers),
//! `outputs` (what vertex and fragment functions return), `bindings`
//! (buffers, textures, samplers, threadgroup memory and their `@group`/
//! `@binding` numbers), `argument_buffers` (structs of resources passed
//! in one `[[buffer(n)]]`: a binding per member), `resource_arrays`
//! (arrays of textures and samplers: a binding per element), `stitchable` (SwiftUI's `[[stitchable]]` effects:
//! a fragment entry point that calls the function in the shape SwiftUI
//! does), `point_sprites` (`[[point_size]]` and `[[point_coord]]`: a
//! second vertex entry point drawing each point as a square),
//! `vertex_dispatch` (vertex functions without a `[[position]]` output, run
//! as compute entry points, and the draw-parameters uniform of
//! `[[base_vertex]]`/`[[base_instance]]`).

pub(in crate::lower) mod argument_buffers;
pub(in crate::lower) mod bindings;
pub(in crate::lower) mod compute;
pub(in crate::lower) mod constant_pointer;
pub(in crate::lower) mod kernel_stage_in;
pub(in crate::lower) mod outputs;
pub(in crate::lower) mod params;
pub(in crate::lower) mod point_sprites;
pub(in crate::lower) mod reached;
pub(in crate::lower) mod resource_arrays;
pub(in crate::lower) mod stages;
pub(in crate::lower) mod stitchable;
pub(in crate::lower) mod trailing_array;
pub(in crate::lower) mod vertex_dispatch;
