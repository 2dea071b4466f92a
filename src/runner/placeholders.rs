//! Placeholders for conditional arguments (`[[buffer(n),
//! function_constant(b)]]`) that the function's constants switch off.
//!
//! In Metal such an argument does not exist when `b` is false, and a host
//! binds nothing there. The WGSL declares its binding whatever `b` is (a
//! binding cannot depend on an override) and reads it only where the source
//! does, behind `b`; WebGPU still needs a resource at every binding the entry
//! point declares. So the runner binds the smallest resource of the kind the
//! WGSL declares, zero-filled, which the shader never reads.

use super::interface::{BindingKind, TextureClass, UsedBinding};
use super::{Gpu, RunError};
use crate::reflect::{Argument, FunctionReflection};
use std::collections::BTreeMap;

/// True if `argument` of `function` is a conditional argument that
/// `constants` switch off, so it gets a placeholder, not the caller's
/// resource; also one that a function constant given at translation
/// switched off (reflected inactive, though the WGSL may still bind it
/// under a condition that is false).
pub(crate) fn switched_off(
    function: &FunctionReflection,
    argument: &Argument,
    constants: &BTreeMap<u32, f64>,
) -> bool {
    !function.argument_exists(argument, constants) || !argument.active
}

/// A zero-filled buffer for a binding: `min_size` bytes (at least 16),
/// usable as a uniform and as storage.
pub(crate) fn buffer(gpu: &Gpu, used: &UsedBinding) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("placeholder for a switched-off conditional argument"),
        size: used.min_size.max(16).next_multiple_of(16),
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    })
}

/// A 1×1 texture (6 layers for cubes) of the class and view dimension the
/// binding declares, viewed so, with its format. Storage textures take the
/// argument's reflected storage format; sampled ones `rgba8unorm`,
/// `r32sint` or `r32uint` after their sample type; depth ones
/// `depth32float`.
pub(crate) fn texture(
    gpu: &Gpu,
    argument: &Argument,
    used: &UsedBinding,
) -> Result<(wgpu::TextureView, wgpu::TextureFormat), RunError> {
    use wgpu::{TextureFormat as F, TextureUsages as U, TextureViewDimension as V};
    let BindingKind::Texture {
        class,
        view_dimension,
    } = used.kind
    else {
        return Err(RunError::Shader(format!(
            "texture argument `{}` is bound at @binding({}), which the WGSL declares as \
             another kind of resource",
            argument.name, used.binding
        )));
    };
    let (format, multi, usage) = match class {
        TextureClass::Sampled { kind, multi } => {
            let format = match kind {
                naga::ScalarKind::Sint => F::R32Sint,
                naga::ScalarKind::Uint => F::R32Uint,
                _ => F::Rgba8Unorm,
            };
            (format, multi, U::TEXTURE_BINDING)
        }
        TextureClass::Depth { multi } => (F::Depth32Float, multi, U::TEXTURE_BINDING),
        TextureClass::Storage { .. } => {
            let name = argument
                .texture
                .as_ref()
                .and_then(|t| t.storage_format.as_deref());
            let format = name.and_then(super::texture_format).ok_or_else(|| {
                RunError::Shader(format!(
                    "storage texture `{}` has no storage format in the reflection",
                    argument.name
                ))
            })?;
            (format, false, U::STORAGE_BINDING)
        }
    };
    // WebGPU creates multisampled textures only as render attachments.
    let usage = match multi {
        true => usage | U::RENDER_ATTACHMENT,
        false => usage,
    };
    let (dimension, layers) = match view_dimension {
        V::D1 => (wgpu::TextureDimension::D1, 1),
        V::D3 => (wgpu::TextureDimension::D3, 1),
        V::Cube | V::CubeArray => (wgpu::TextureDimension::D2, 6),
        V::D2 | V::D2Array => (wgpu::TextureDimension::D2, 1),
    };
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some(&argument.name),
        size: wgpu::Extent3d {
            width: 1,
            height: 1,
            depth_or_array_layers: layers,
        },
        mip_level_count: 1,
        sample_count: if multi { 4 } else { 1 },
        dimension,
        format,
        usage,
        view_formats: &[],
    });
    let view = texture.create_view(&wgpu::TextureViewDescriptor {
        label: Some(&argument.name),
        dimension: Some(view_dimension),
        ..Default::default()
    });
    Ok((view, format))
}
