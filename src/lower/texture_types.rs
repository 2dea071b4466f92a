//! Metal's texture types (MSL §2.9) as naga images, and the storage texel
//! formats by wgpu's names: pure functions of the MSL type model, shared by
//! the type cache (`types.rs`), the bindings (`entry`) and the texture
//! member functions (`stdlib::textures`).

use crate::types::{Scalar, Texture, TextureAccess, TextureShape};
use naga::{ImageClass, ImageDimension};

/// Storage texel formats by the name wgpu gives them.
pub(in crate::lower) const FORMATS: &[(&str, naga::StorageFormat)] = &[
    ("rgba8unorm", naga::StorageFormat::Rgba8Unorm),
    ("rgba8snorm", naga::StorageFormat::Rgba8Snorm),
    ("rgba8uint", naga::StorageFormat::Rgba8Uint),
    ("rgba8sint", naga::StorageFormat::Rgba8Sint),
    ("bgra8unorm", naga::StorageFormat::Bgra8Unorm),
    ("rgba16float", naga::StorageFormat::Rgba16Float),
    ("rgba16uint", naga::StorageFormat::Rgba16Uint),
    ("rgba16sint", naga::StorageFormat::Rgba16Sint),
    ("rgba32float", naga::StorageFormat::Rgba32Float),
    ("rgba32uint", naga::StorageFormat::Rgba32Uint),
    ("rgba32sint", naga::StorageFormat::Rgba32Sint),
    ("r32float", naga::StorageFormat::R32Float),
    ("r32uint", naga::StorageFormat::R32Uint),
    ("r32sint", naga::StorageFormat::R32Sint),
    ("rg32float", naga::StorageFormat::Rg32Float),
    ("rg32uint", naga::StorageFormat::Rg32Uint),
    ("rg32sint", naga::StorageFormat::Rg32Sint),
    ("r8unorm", naga::StorageFormat::R8Unorm),
    ("r16float", naga::StorageFormat::R16Float),
    ("rg16float", naga::StorageFormat::Rg16Float),
];

/// Formats core WebGPU allows for `read_write` storage textures.
pub(in crate::lower) const READ_WRITE_FORMATS: &[&str] = &["r32float", "r32uint", "r32sint"];

/// Formats wgpu's `TEXTURE_ATOMIC` gives atomic access to (32-bit; r64uint
/// needs `TEXTURE_INT64_ATOMIC` and has no Metal texture type).
pub(in crate::lower) const ATOMIC_FORMATS: &[&str] = &["r32uint", "r32sint"];

/// The format table index of `name`.
pub(in crate::lower) fn format_index(name: &str) -> Option<u8> {
    FORMATS
        .iter()
        .position(|(n, _)| *n == name)
        .map(|i| i as u8)
}

/// The kind of value a format stores (`f32`, `i32`, `u32`), from its name.
pub(in crate::lower) fn format_kind(name: &str) -> naga::ScalarKind {
    if name.ends_with("uint") {
        naga::ScalarKind::Uint
    } else if name.ends_with("sint") {
        naga::ScalarKind::Sint
    } else {
        naga::ScalarKind::Float
    }
}

/// The documented default format of a storage texture: 4 channels of the
/// component type (`float`/`half`: rgba8unorm, like the runner's PNG
/// textures); `read_write`: the one-channel 32-bit format of its kind.
pub(in crate::lower) fn default_format(t: &Texture) -> &'static str {
    let rw = t.access == TextureAccess::ReadWrite;
    match (t.scalar, rw) {
        (Scalar::Float | Scalar::Half, false) => "rgba8unorm",
        (Scalar::Float | Scalar::Half, true) => "r32float",
        (Scalar::Int | Scalar::Short, false) => "rgba32sint",
        (Scalar::Int | Scalar::Short, true) => "r32sint",
        (_, false) => "rgba32uint",
        (_, true) => "r32uint",
    }
}

/// The WGSL sampled kind of a component type.
pub(in crate::lower) fn sampled_kind(s: Scalar) -> naga::ScalarKind {
    match s {
        Scalar::Float | Scalar::Half => naga::ScalarKind::Float,
        Scalar::Int | Scalar::Short => naga::ScalarKind::Sint,
        _ => naga::ScalarKind::Uint,
    }
}

/// naga's dimension and arrayedness of a texture as WGSL binds it.
///
/// Two Metal types have no WGSL type of their own and are bound as 2-D
/// arrays: `texture1d_array` (WGSL has no 1-D arrays) as a 2-D array of
/// height 1, and cube textures that are read or written texel by texel
/// (`access::read`, `write`, `read_write`: WGSL's `textureLoad` and
/// `textureStore` take no cube textures) as 2-D arrays of 6 layers per cube,
/// `read(coord, face)` being layer `face` (cube arrays: `6 * cube + face`).
/// A cube texture with `access::sample` stays a cube (it is sampled).
pub(in crate::lower) fn dimension(t: &Texture) -> (ImageDimension, bool) {
    use TextureShape as S;
    match t.shape {
        S::D1 | S::Buffer => (ImageDimension::D1, false),
        S::D2 | S::D2Ms | S::Depth2D | S::Depth2DMs => (ImageDimension::D2, false),
        S::D1Array | S::D2Array | S::Depth2DArray => (ImageDimension::D2, true),
        S::D3 => (ImageDimension::D3, false),
        S::Cube | S::CubeArray | S::DepthCube | S::DepthCubeArray if cube_as_layers(t) => {
            (ImageDimension::D2, true)
        }
        S::Cube | S::DepthCube => (ImageDimension::Cube, false),
        S::CubeArray | S::DepthCubeArray => (ImageDimension::Cube, true),
    }
}

/// A cube (or cube array) texture bound as a 2-D array of its faces: one
/// that is read or written texel by texel rather than sampled.
pub(in crate::lower) fn cube_as_layers(t: &Texture) -> bool {
    t.shape.is_cube() && t.access != TextureAccess::Sample
}

/// WebGPU's view dimension name.
pub(in crate::lower) fn view_dimension(t: &Texture) -> &'static str {
    match dimension(t) {
        (ImageDimension::D1, _) => "1d",
        (ImageDimension::D2, false) => "2d",
        (ImageDimension::D2, true) => "2d-array",
        (ImageDimension::D3, _) => "3d",
        (ImageDimension::Cube, false) => "cube",
        (ImageDimension::Cube, true) => "cube-array",
    }
}

/// Metal's `MTLTextureType` name (without the prefix).
pub(in crate::lower) fn metal_texture_type(shape: TextureShape) -> &'static str {
    use TextureShape as S;
    match shape {
        S::D1 => "type1D",
        S::D1Array => "type1DArray",
        S::Buffer => "typeTextureBuffer",
        S::D2 | S::Depth2D => "type2D",
        S::D2Array | S::Depth2DArray => "type2DArray",
        S::D2Ms | S::Depth2DMs => "type2DMultisample",
        S::D3 => "type3D",
        S::Cube | S::DepthCube => "typeCube",
        S::CubeArray | S::DepthCubeArray => "typeCubeArray",
    }
}

/// naga's type for a texture.
pub(in crate::lower) fn image_inner(t: &Texture) -> naga::TypeInner {
    let (dim, arrayed) = dimension(t);
    let class = if t.shape.is_depth() {
        ImageClass::Depth {
            multi: t.shape.is_multisampled(),
        }
    } else if t.is_storage() {
        let binding = t.format.expect("storage textures get a format when bound");
        let format = FORMATS[binding.format as usize].1;
        let access = if binding.atomic {
            naga::StorageAccess::ATOMIC | naga::StorageAccess::LOAD | naga::StorageAccess::STORE
        } else if t.access == TextureAccess::Write {
            naga::StorageAccess::STORE
        } else {
            naga::StorageAccess::LOAD | naga::StorageAccess::STORE
        };
        ImageClass::Storage { format, access }
    } else {
        ImageClass::Sampled {
            kind: sampled_kind(t.scalar),
            multi: t.shape.is_multisampled(),
        }
    };
    naga::TypeInner::Image {
        dim,
        arrayed,
        class,
    }
}
