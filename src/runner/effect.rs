//! Applying a `[[stitchable]]` SwiftUI effect to an image, as SwiftUI
//! applies `colorEffect`, `distortionEffect` and `layerEffect` to a view
//! (or fills a shape with a `Shader`).
//!
//! The effect's fragment entry point (see `lower::entry::stitchable` and
//! the reflection's [`Stitchable`]) is drawn over the whole target with a
//! full-screen triangle from a vertex stage added here, through [`render`]:
//! the layer is `[[texture(0)]]`, the value arguments are packed into the
//! argument buffer `[[buffer(0)]]` at the offsets the reflection gives (with
//! each array's count), arrays are the next buffers and images the next
//! textures. The target is `rgba8unorm`, the layer's size (or
//! [`EffectResources::size`] for a fill), cleared to transparent black;
//! one pixel is one user-space point.
//!
//! The layer's values are used as they are: SwiftUI's layers hold
//! premultiplied colour, so a straight-alpha image with transparency
//! should be premultiplied first (opaque images are the same either way).

use super::render::{render, RenderResources, RenderTarget};
use super::{Gpu, RunError, TextureData};
use crate::reflect::{
    EffectArgument, EffectArgumentKind, EffectKind, FunctionReflection, Stage, Stitchable,
    StructMember,
};
use std::collections::BTreeMap;

/// The name of the vertex stage added to draw an effect.
pub const EFFECT_VERTEX: &str = "msl2wgsl_effect_vertex";

/// The vertex stage: vertices 0, 1, 2 make a triangle covering the
/// viewport (clip space (-1,-1), (3,-1), (-1,3)).
const EFFECT_VERTEX_WGSL: &str = "
@vertex
fn msl2wgsl_effect_vertex(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let corner = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(corner * 2.0 - 1.0, 0.0, 1.0);
}
";

/// One effect argument's value, as a host gives SwiftUI's `Shader.Argument`.
#[derive(Clone, Debug, PartialEq)]
pub enum EffectValue {
    /// A scalar or vector (`.float`, `.float2`.., `.color`: a premultiplied
    /// RGBA), one number per component; also an array's elements
    /// (`.floatArray`: floats, `.colorArray`: four numbers per colour).
    Numbers(Vec<f64>),
    /// An array's or `.data` argument's bytes, in Metal's layout of its
    /// elements (the count is the length divided by the element's size;
    /// for `.data`, the length).
    Bytes(Vec<u8>),
    /// An `.image` argument.
    Image(TextureData),
}

/// What an effect draws with.
#[derive(Clone, Debug, Default)]
pub struct EffectResources {
    /// The layer: the view's pixels, which colour, distortion and layer
    /// effects read; the output has its size.
    pub layer: Option<TextureData>,
    /// The output size (width, height) of a fill, which reads no layer;
    /// with a layer it must be the layer's size if given.
    pub size: Option<(u32, u32)>,
    /// The arguments after the fixed ones, by position in
    /// [`Stitchable::arguments`] (an array and its count are one). A value
    /// argument left out takes its default argument, if it has one.
    pub arguments: BTreeMap<usize, EffectValue>,
}

/// The function's effect reflection, or an error if it is none.
pub fn stitchable(function: &FunctionReflection) -> Result<&Stitchable, RunError> {
    function
        .stitchable
        .as_ref()
        .ok_or_else(|| RunError::WrongStage {
            name: function.name.clone(),
            expected: "[[stitchable]]".into(),
        })
}

/// The position in [`Stitchable::arguments`] of the argument named
/// `name`, or given as a decimal position.
pub fn effect_argument_position(effect: &Stitchable, name: &str) -> Option<usize> {
    if let Ok(i) = name.parse::<usize>() {
        return (i < effect.arguments.len()).then_some(i);
    }
    effect.arguments.iter().position(|a| a.name == name)
}

/// The scalar kind and component count of a stored type (`float`,
/// `float3`, `int2`, `uint4`).
fn stored_shape(ty: &str) -> Option<(&'static str, usize)> {
    let (base, rest) = ["float", "uint", "int"]
        .iter()
        .find_map(|b| ty.strip_prefix(b).map(|r| (*b, r)))?;
    let n = match rest {
        "" => 1,
        n => n.parse::<usize>().ok().filter(|n| (2..=4).contains(n))?,
    };
    Some((base, n))
}

/// Writes `value` as a `base` (`float`, `int`, `uint`) at `at`.
fn put(bytes: &mut [u8], at: usize, base: &str, value: f64, what: &str) -> Result<(), RunError> {
    let word = match base {
        "float" => (value as f32).to_le_bytes(),
        "int" if value.fract() == 0.0 && value >= i32::MIN as f64 && value <= i32::MAX as f64 => {
            (value as i32).to_le_bytes()
        }
        "uint" if value.fract() == 0.0 && value >= 0.0 && value <= u32::MAX as f64 => {
            (value as u32).to_le_bytes()
        }
        _ => {
            return Err(RunError::InvalidRender(format!(
                "{what}: {value} is not a `{base}`"
            )))
        }
    };
    bytes[at..at + 4].copy_from_slice(&word);
    Ok(())
}

/// The argument buffer's member named `name`.
fn member<'f>(function: &'f FunctionReflection, name: &str) -> Option<&'f StructMember> {
    let effect = function.stitchable.as_ref()?;
    let index = effect.argument_buffer?;
    function
        .arguments
        .iter()
        .filter(|a| a.kind == crate::reflect::ArgumentKind::Buffer && a.index == index)
        .find_map(|a| a.buffer.as_ref()?.struct_type.as_ref())?
        .members
        .iter()
        .find(|m| m.name == name)
}

/// The fragment resources of an effect: the argument buffer packed from
/// the values, the arrays and images, the layer, the target. Checks every
/// argument against the reflection (missing ones, component counts,
/// integers, array lengths) before anything is drawn.
pub fn effect_resources(
    function: &FunctionReflection,
    resources: &EffectResources,
) -> Result<RenderResources, RunError> {
    let effect = stitchable(function)?;
    let (width, height) = output_size(function, effect, resources)?;
    let mut out = RenderResources::new(width, height, 3);
    out.targets = vec![RenderTarget::default()];
    if let (Some(index), Some(layer)) = (effect.layer_texture, &resources.layer) {
        out.textures.insert(index, layer.clone());
    }
    if let Some(&extra) = resources
        .arguments
        .keys()
        .find(|&&i| i >= effect.arguments.len())
    {
        return Err(RunError::InvalidRender(format!(
            "`{}` has {} effect argument(s); there is no argument {extra}",
            function.name,
            effect.arguments.len()
        )));
    }
    let mut block = vec![0u8; effect.argument_buffer_size as usize];
    for (position, arg) in effect.arguments.iter().enumerate() {
        let what = format!(
            "effect argument {position} (`{}`) of `{}`",
            arg.name, function.name
        );
        let given = resources.arguments.get(&position);
        match arg.kind {
            EffectArgumentKind::Value => pack_value(&mut block, arg, given, &what)?,
            EffectArgumentKind::Image => {
                let Some(EffectValue::Image(image)) = given else {
                    return Err(RunError::InvalidRender(format!("{what} takes an image")));
                };
                out.textures.insert(arg.texture.unwrap_or(0), image.clone());
            }
            kind => {
                let bytes = pack_array(function, &mut block, arg, kind, given, &what)?;
                out.fragment_buffers.insert(arg.buffer.unwrap_or(0), bytes);
            }
        }
    }
    if let Some(index) = effect.argument_buffer {
        out.fragment_buffers.insert(index, block);
    }
    Ok(out)
}

/// Writes a value argument's numbers (`given`, or its default) into the
/// argument buffer `block` at its offset, as its stored type.
fn pack_value(
    block: &mut [u8],
    arg: &EffectArgument,
    given: Option<&EffectValue>,
    what: &str,
) -> Result<(), RunError> {
    let numbers = match (given, &arg.default) {
        (Some(EffectValue::Numbers(n)), _) => n.clone(),
        (None, Some(default)) => default.clone(),
        (None, None) => {
            return Err(RunError::InvalidRender(format!(
                "{what} was given no value"
            )))
        }
        (Some(_), _) => {
            return Err(RunError::InvalidRender(format!(
                "{what} is a `{}`: give it numbers",
                arg.data_type
            )))
        }
    };
    let stored = arg.stored_as.as_deref().unwrap_or_default();
    let (base, n) = stored_shape(stored)
        .ok_or_else(|| RunError::Shader(format!("{what}: unknown stored type `{stored}`")))?;
    if numbers.len() != n {
        return Err(RunError::InvalidRender(format!(
            "{what} is a `{}`: it takes {n} number(s), {} given",
            arg.data_type,
            numbers.len()
        )));
    }
    let at = arg.offset.unwrap_or(0) as usize;
    for (i, v) in numbers.iter().enumerate() {
        put(block, at + 4 * i, base, *v, what)?;
    }
    Ok(())
}

/// An array argument's buffer from `given` (bytes, or numbers as
/// [`array_bytes`] lays them out), with its count written into the
/// argument buffer `block`.
fn pack_array(
    function: &FunctionReflection,
    block: &mut [u8],
    arg: &EffectArgument,
    kind: EffectArgumentKind,
    given: Option<&EffectValue>,
    what: &str,
) -> Result<Vec<u8>, RunError> {
    let bytes = match given {
        Some(EffectValue::Bytes(b)) => b.clone(),
        Some(EffectValue::Numbers(n)) => array_bytes(kind, n, what)?,
        Some(EffectValue::Image(_)) | None => {
            return Err(RunError::InvalidRender(format!(
                "{what} takes an array's bytes or numbers"
            )))
        }
    };
    let unit = arg.count_unit.unwrap_or(1).max(1) as usize;
    if bytes.len() % unit != 0 {
        return Err(RunError::InvalidRender(format!(
            "{what}: {} bytes are not a whole number of {unit}-byte elements",
            bytes.len()
        )));
    }
    let count = (bytes.len() / unit) as f64;
    let count_name = arg.count_name.as_deref().unwrap_or_default();
    let base = member(function, count_name).map_or("int", |m| m.data_type.as_str());
    put(
        block,
        arg.count_offset.unwrap_or(0) as usize,
        base,
        count,
        what,
    )?;
    // A buffer is at least one element, even for no elements.
    let mut bytes = bytes;
    if bytes.is_empty() {
        bytes = vec![0; unit.max(4)];
    }
    Ok(bytes)
}

/// An array's elements from numbers: `float`s, or four per `half4` colour.
fn array_bytes(kind: EffectArgumentKind, numbers: &[f64], what: &str) -> Result<Vec<u8>, RunError> {
    match kind {
        EffectArgumentKind::FloatArray => Ok(numbers
            .iter()
            .flat_map(|v| (*v as f32).to_le_bytes())
            .collect()),
        EffectArgumentKind::ColorArray if numbers.len().is_multiple_of(4) => Ok(numbers
            .iter()
            .flat_map(|v| half::f16::from_f64(*v).to_le_bytes())
            .collect()),
        EffectArgumentKind::ColorArray => Err(RunError::InvalidRender(format!(
            "{what}: colours take four numbers each, {} given",
            numbers.len()
        ))),
        _ => Err(RunError::InvalidRender(format!(
            "{what} is `.data`: give its bytes (a file)"
        ))),
    }
}

/// The size of the output: the layer's, or the one given for a fill.
fn output_size(
    function: &FunctionReflection,
    effect: &Stitchable,
    resources: &EffectResources,
) -> Result<(u32, u32), RunError> {
    match (&resources.layer, resources.size) {
        (Some(layer), size) => {
            if size.is_some_and(|s| s != (layer.width, layer.height)) {
                return Err(RunError::InvalidRender(format!(
                    "the size given is not the layer's ({}x{})",
                    layer.width, layer.height
                )));
            }
            Ok((layer.width, layer.height))
        }
        (None, Some(size)) if effect.kind == EffectKind::ShapeStyle => Ok(size),
        (None, _) if effect.kind == EffectKind::ShapeStyle => {
            Err(RunError::InvalidRender(format!(
                "the fill `{}` needs a size (or a layer to take it from)",
                function.name
            )))
        }
        (None, _) => Err(RunError::InvalidRender(format!(
            "the effect `{}` reads a layer: give it an image",
            function.name
        ))),
    }
}

/// The added vertex stage's reflection.
fn effect_vertex() -> FunctionReflection {
    FunctionReflection {
        name: EFFECT_VERTEX.into(),
        wgsl_entry_point: EFFECT_VERTEX.into(),
        stage: Stage::Vertex,
        workgroup_size: None,
        arguments: Vec::new(),
        builtins: Vec::new(),
        dispatch_binding: None,
        uses_barriers: false,
        required_features: Vec::new(),
        required_limits: Default::default(),
        simd_groups: None,
        constexpr_samplers: Vec::new(),
        vertex_attributes: Vec::new(),
        vertex_stride: 0,
        varyings: Vec::new(),
        color_outputs: Vec::new(),
        function_constants: Vec::new(),
        stitchable: None,
        point_sprite: None,
        stage_input: None,
        draw_parameters_binding: None,
        vertex_dispatch: None,
    }
}

/// Draws effect `function` of `wgsl` (a module with its entry point, to
/// which the vertex stage is added) and returns the image.
pub fn render_effect(
    gpu: &Gpu,
    wgsl: &str,
    function: &FunctionReflection,
    resources: &EffectResources,
) -> Result<TextureData, RunError> {
    let fragment = effect_resources(function, resources)?;
    let module = format!("{wgsl}\n{EFFECT_VERTEX_WGSL}");
    let mut images = render(gpu, &module, &effect_vertex(), function, &fragment)?;
    Ok(images.remove(0))
}

/// [`render_effect`] with the function `name` of a [`crate::Library`]
/// (translated again with `half` as `f32` where the device lacks
/// `shader-f16`, and 64-bit integers in 32 bits where it lacks
/// `shader-int64`, as [`super::render_library`] does).
pub fn render_effect_library(
    gpu: &Gpu,
    library: &crate::Library,
    name: &str,
    resources: &EffectResources,
) -> Result<TextureData, RunError> {
    let origin = library.origin();
    let emulated;
    let library = match gpu.fitted_options(&origin.options) {
        None => library,
        Some(options) => {
            emulated = crate::Library::from_source(&origin.name, &origin.text, &options)?;
            &emulated
        }
    };
    let function = library
        .function(name)
        .ok_or_else(|| RunError::UnknownEntry(name.to_string()))?;
    stitchable(function)?;
    render_effect(gpu, library.wgsl(), function, resources)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_shapes() {
        assert_eq!(stored_shape("float"), Some(("float", 1)));
        assert_eq!(stored_shape("float3"), Some(("float", 3)));
        assert_eq!(stored_shape("uint4"), Some(("uint", 4)));
        assert_eq!(stored_shape("int"), Some(("int", 1)));
        assert_eq!(stored_shape("half"), None);
        assert_eq!(stored_shape("float5"), None);
    }

    #[test]
    fn integers_are_checked() {
        let mut b = [0u8; 4];
        assert!(put(&mut b, 0, "int", 1.5, "x").is_err());
        assert!(put(&mut b, 0, "uint", -1.0, "x").is_err());
        put(&mut b, 0, "int", -3.0, "x").unwrap();
        assert_eq!(i32::from_le_bytes(b), -3);
    }
}
