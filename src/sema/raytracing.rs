//! Metal's ray tracing types (`<metal_raytracing>`, MSL §6.18): acceleration
//! structures, intersectors and intersection queries, intersection and
//! visible function tables, and the instance descriptors the Metal framework
//! lays out for acceleration structures. WebGPU has no ray tracing, so a
//! type of these is refused where it is written (E0402), by name, rather
//! than reported as an unknown type.

use super::Error;
use crate::diagnostics::Code;
use crate::syntax::ast;

/// The ray tracing types, without `metal::` and `raytracing::`.
const RAY_TRACING_TYPES: &[&str] = &[
    "acceleration_structure",
    "primitive_acceleration_structure",
    "instance_acceleration_structure",
    "intersector",
    "intersection_query",
    "intersection_result",
    "intersection_result_ref",
    "intersection_function_table",
    "visible_function_table",
    "intersection_params",
    "ray",
    "triangle_intersection_params",
    "MTLAccelerationStructureInstanceDescriptor",
    "MTLAccelerationStructureUserIDInstanceDescriptor",
    "MTLAccelerationStructureMotionInstanceDescriptor",
    "MTLIndirectAccelerationStructureInstanceDescriptor",
    "MTLIndirectAccelerationStructureMotionInstanceDescriptor",
    "MTLPackedFloat4x3",
    "MTLPackedFloat3",
];

/// The refusal of `ts` when it names a ray tracing type that the program
/// does not declare itself (the caller looks its own names up first).
pub(super) fn refusal(name: &str, ts: &ast::TypeSpec) -> Option<Error> {
    let short = name.strip_prefix("metal::").unwrap_or(name);
    let short = short.strip_prefix("raytracing::").unwrap_or(short);
    RAY_TRACING_TYPES.contains(&short).then(|| {
        Error::coded(
            Code::NoWebGpuEquivalent,
            ts.name_span,
            format!("`{short}` is a ray tracing type, which has no WebGPU equivalent: WebGPU has no ray tracing"),
        )
    })
}
