//! Drawing Metal's points (`MTLPrimitiveTypePoint`): with the vertex
//! function's point-sprite entry point (reflection's `pointSprite`), six
//! vertices per point, and the viewport's size in its uniform.

use super::interface::{Interface, UsedBinding};
use super::{Gpu, RunError};
use crate::reflect::{FunctionReflection, POINT_COORD_VARYING};
use wgpu::util::DeviceExt;

/// The primitive type of a draw (Metal's `MTLPrimitiveType`, the kinds
/// the runner draws).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// `MTLPrimitiveTypeTriangle`: a triangle list.
    #[default]
    Triangle,
    /// `MTLPrimitiveTypePoint`: each vertex a square `[[point_size]]`
    /// pixels across, drawn by the vertex function's point-sprite entry
    /// point; the fragment function may read `[[point_coord]]`.
    Point,
}

/// The vertex function's reflection as the point-sprite entry point: the
/// same arguments, its WGSL entry point the sprite's.
pub(crate) fn sprite_function(vertex: &FunctionReflection) -> Result<FunctionReflection, RunError> {
    let Some(sprite) = &vertex.point_sprite else {
        return Err(RunError::InvalidRender(format!(
            "drawing points with vertex function `{}`, which writes no [[point_size]] (or reads \
             a [[stage_in]]: see warning W0401), so it has no point-sprite entry point",
            vertex.name
        )));
    };
    Ok(FunctionReflection {
        wgsl_entry_point: sprite.entry_point.clone(),
        ..vertex.clone()
    })
}

/// The vertex function to draw `primitive` with: `vertex` itself for
/// triangles, its point-sprite entry point for points.
pub(crate) fn drawn_function(
    vertex: &FunctionReflection,
    primitive: Primitive,
) -> Result<FunctionReflection, RunError> {
    match primitive {
        Primitive::Triangle => Ok(vertex.clone()),
        Primitive::Point => sprite_function(vertex),
    }
}

/// A fragment function reading `[[point_coord]]` draws points only: no
/// other primitive writes it.
pub(crate) fn check_point_coord(
    fragment: &FunctionReflection,
    primitive: Primitive,
) -> Result<(), RunError> {
    let reads = fragment
        .varyings
        .iter()
        .any(|v| v.name == POINT_COORD_VARYING);
    if reads && primitive != Primitive::Point {
        return Err(RunError::InvalidRender(format!(
            "fragment function `{}` reads [[point_coord]], which only points have: draw \
             `Primitive::Point` (`--primitive point`)",
            fragment.name
        )));
    }
    Ok(())
}

/// The WebGPU vertices of `count` Metal vertices of `primitive`.
pub(crate) fn vertices_drawn(primitive: Primitive, count: u32) -> Result<u32, RunError> {
    match primitive {
        Primitive::Triangle => Ok(count),
        Primitive::Point => count
            .checked_mul(crate::lower::VERTICES_PER_POINT)
            .ok_or_else(|| {
                RunError::InvalidRender(format!(
                    "{count} points are more vertices than a draw has (6 per point)"
                ))
            }),
    }
}

/// Where the point-sprite entry point reads the viewport size, if the
/// WGSL of `interface` uses it (it does in that entry point only).
pub(crate) fn viewport_used(
    function: &FunctionReflection,
    interface: &Interface,
) -> Option<UsedBinding> {
    let at = function.point_sprite.as_ref()?.viewport_binding;
    interface
        .bindings
        .iter()
        .find(|u| u.group == at.group && u.binding == at.binding)
        .copied()
}

/// The viewport uniform's buffer: width and height in pixels, as `f32`s.
pub(crate) fn viewport_buffer(gpu: &Gpu, [width, height]: [u32; 2]) -> wgpu::Buffer {
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&(width as f32).to_le_bytes());
    bytes[4..].copy_from_slice(&(height as f32).to_le_bytes());
    gpu.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("point-sprite viewport"),
            contents: &bytes,
            usage: wgpu::BufferUsages::UNIFORM,
        })
}
