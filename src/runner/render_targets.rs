//! The colour targets of a draw, checked against the fragment function's
//! `[[color(m)]]` outputs before anything is created.

use super::interface::{Interface, StageIo};
use super::render::RenderTarget;
use super::{texture_format_name, Gpu, RunError};
use crate::reflect::{ColorOutput, FunctionReflection};
use wgpu::{BlendComponent, BlendFactor, BlendOperation, TextureFormat, TextureSampleType};

/// The kind of value an MSL colour type holds (`float4`, `half4`, `int4`,
/// `ushort4`, ...), if it is a type a colour output may have.
pub(crate) fn output_kind(data_type: &str) -> Option<naga::ScalarKind> {
    let scalar = data_type.trim_end_matches(|c: char| c.is_ascii_digit());
    match scalar {
        "float" | "half" => Some(naga::ScalarKind::Float),
        "int" | "short" | "char" => Some(naga::ScalarKind::Sint),
        "uint" | "ushort" | "uchar" => Some(naga::ScalarKind::Uint),
        _ => None,
    }
}

/// The kind of value a render target format stores.
fn format_kind(format: TextureFormat) -> Option<naga::ScalarKind> {
    match format.sample_type(None, None)? {
        TextureSampleType::Float { .. } => Some(naga::ScalarKind::Float),
        TextureSampleType::Sint => Some(naga::ScalarKind::Sint),
        TextureSampleType::Uint => Some(naga::ScalarKind::Uint),
        TextureSampleType::Depth => None,
    }
}

/// The `[[index(i)]]` of an output, 0 when not given.
fn blend_index(blend_src: Option<u32>) -> u32 {
    blend_src.unwrap_or(0)
}

/// The pipeline's colour target states, one per target: the format, no
/// blending (Metal's default: the output replaces the pixel) except for
/// dual-source outputs, and no writes to a target the function has no
/// output for (it keeps its clear colour, as in Metal).
///
/// A fragment function with `[[color(m), index(1)]]` blends as
/// `src0 × src1 + dst × (1 − src1)` per component (alpha with src1's
/// alpha): the host's blend state is not part of the draw's description,
/// and this is the usual use of a second source (per-channel coverage).
pub(crate) fn plan(
    gpu: &Gpu,
    fragment: &FunctionReflection,
    interface: &Interface,
    targets: &[RenderTarget],
) -> Result<Vec<wgpu::ColorTargetState>, RunError> {
    let max = gpu.limits.max_color_attachments as usize;
    if targets.is_empty() || targets.len() > max {
        return Err(RunError::InvalidRender(format!(
            "{} colour targets; between 1 and {max} are possible",
            targets.len()
        )));
    }
    check_wgsl_outputs(fragment, &interface.outputs)?;
    for output in &fragment.color_outputs {
        check_output(fragment, output, targets)?;
    }
    let dual = fragment
        .color_outputs
        .iter()
        .any(|o| blend_index(o.blend_src) == 1);
    if dual
        && !gpu
            .features()
            .contains(wgpu::Features::DUAL_SOURCE_BLENDING)
    {
        return Err(RunError::MissingFeature {
            feature: "dual-source-blending".into(),
            adapter: gpu.adapter_line(),
        });
    }
    targets
        .iter()
        .enumerate()
        .map(|(index, target)| target_state(gpu, fragment, index as u32, target, dual))
        .collect()
}

/// One target's state; its format must be a colour format the runner can
/// render to and read back.
fn target_state(
    gpu: &Gpu,
    fragment: &FunctionReflection,
    index: u32,
    target: &RenderTarget,
    dual: bool,
) -> Result<wgpu::ColorTargetState, RunError> {
    let format = target.format;
    let features = format.guaranteed_format_features(gpu.features());
    let renderable = features
        .allowed_usages
        .contains(wgpu::TextureUsages::RENDER_ATTACHMENT);
    let known = texture_format_name(format).is_some();
    if !renderable || !known || format.is_depth_stencil_format() {
        return Err(RunError::InvalidRender(format!(
            "colour target {index}: {format:?} is not a colour format the runner can render to"
        )));
    }
    let written = fragment.color_outputs.iter().any(|o| o.index == index);
    let blend = (dual && index == 0).then_some(wgpu::BlendState {
        color: second_source(BlendFactor::Src1, BlendFactor::OneMinusSrc1),
        alpha: second_source(BlendFactor::Src1Alpha, BlendFactor::OneMinusSrc1Alpha),
    });
    if blend.is_some()
        && !features
            .flags
            .contains(wgpu::TextureFormatFeatureFlags::BLENDABLE)
    {
        return Err(RunError::InvalidRender(format!(
            "colour target {index}: {format:?} cannot blend, which dual-source output needs"
        )));
    }
    Ok(wgpu::ColorTargetState {
        format,
        blend,
        write_mask: if written {
            wgpu::ColorWrites::ALL
        } else {
            wgpu::ColorWrites::empty()
        },
    })
}

fn second_source(src: BlendFactor, dst: BlendFactor) -> BlendComponent {
    BlendComponent {
        src_factor: src,
        dst_factor: dst,
        operation: BlendOperation::Add,
    }
}

/// A colour output needs a target whose format holds its kind of value.
fn check_output(
    fragment: &FunctionReflection,
    output: &ColorOutput,
    targets: &[RenderTarget],
) -> Result<(), RunError> {
    let Some(target) = targets.get(output.index as usize) else {
        return Err(RunError::InvalidRender(format!(
            "`{}` writes [[color({})]], but only {} colour target(s) were given",
            fragment.name,
            output.index,
            targets.len()
        )));
    };
    let Some(kind) = output_kind(&output.data_type) else {
        return Err(RunError::Shader(format!(
            "`{}` has a [[color({})]] output of type `{}`, which no colour target holds",
            fragment.name, output.index, output.data_type
        )));
    };
    if format_kind(target.format) != Some(kind) {
        let needs = match kind {
            naga::ScalarKind::Sint => "a signed integer format (rgba8sint, ...)",
            naga::ScalarKind::Uint => "an unsigned integer format (rgba8uint, ...)",
            _ => "a float or normalised format (rgba8unorm, rgba16float, ...)",
        };
        return Err(RunError::InvalidRender(format!(
            "colour target {}: `{}` writes {} there, which needs {needs}, not {:?}",
            output.index, fragment.name, output.data_type, target.format
        )));
    }
    Ok(())
}

/// The WGSL's `@location` outputs and the reflection's colour outputs must
/// be the same set, with the same kinds of value.
fn check_wgsl_outputs(fragment: &FunctionReflection, wgsl: &[StageIo]) -> Result<(), RunError> {
    let disagree = |what: String| {
        Err(RunError::Shader(format!(
            "the WGSL and the reflection of `{}` disagree: {what}",
            fragment.name
        )))
    };
    for io in wgsl {
        let reflected = fragment.color_outputs.iter().find(|o| {
            o.index == io.location && blend_index(o.blend_src) == blend_index(io.blend_src)
        });
        match reflected {
            None => {
                return disagree(format!(
                    "the WGSL writes @location({}) the reflection does not list",
                    io.location
                ))
            }
            Some(o) if output_kind(&o.data_type).is_some_and(|k| k != io.kind) => {
                return disagree(format!("the type of [[color({})]]", o.index))
            }
            // WebGPU colour targets take 32-bit values only.
            Some(o) if io.width != 4 => {
                return Err(RunError::Shader(format!(
                    "the WGSL of `{}` writes [[color({})]] as a {}-bit value; colour \
                     outputs must be 32-bit (f32, i32, u32) in WGSL",
                    fragment.name,
                    o.index,
                    u32::from(io.width) * 8
                )))
            }
            Some(_) => {}
        }
    }
    for o in &fragment.color_outputs {
        let present = wgsl.iter().any(|io| {
            io.location == o.index && blend_index(io.blend_src) == blend_index(o.blend_src)
        });
        if !present {
            return disagree(format!("the WGSL does not write [[color({})]]", o.index));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(output_kind("half4"), Some(naga::ScalarKind::Float));
        assert_eq!(output_kind("float"), Some(naga::ScalarKind::Float));
        assert_eq!(output_kind("int4"), Some(naga::ScalarKind::Sint));
        assert_eq!(output_kind("ushort2"), Some(naga::ScalarKind::Uint));
        assert_eq!(output_kind("bool"), None);
        use TextureFormat as F;
        assert_eq!(
            format_kind(F::Rgba8UnormSrgb),
            Some(naga::ScalarKind::Float)
        );
        assert_eq!(format_kind(F::R32Float), Some(naga::ScalarKind::Float));
        assert_eq!(format_kind(F::Rgba8Sint), Some(naga::ScalarKind::Sint));
        assert_eq!(format_kind(F::Rg16Uint), Some(naga::ScalarKind::Uint));
        assert_eq!(format_kind(F::Depth32Float), None);
    }
}
