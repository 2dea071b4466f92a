//! Samplers: from the reflection's [`SamplerDescriptor`] (wgpu's names as
//! strings) to a `wgpu::SamplerDescriptor`, with the device features each
//! needs checked before anything is created.

use super::{Gpu, RunError};
use crate::reflect::SamplerDescriptor;
use wgpu::{AddressMode, CompareFunction, FilterMode, MipmapFilterMode, SamplerBorderColor};

/// The sampler bound to a sampler argument the caller gave no descriptor
/// for: Metal's default `MTLSamplerDescriptor` (and `constexpr sampler s;`),
/// that is nearest filtering, `clamp-to-edge` on every axis, and no
/// mipmapping (Metal's `mip_filter::none`, here the LOD clamped to 0).
pub fn default_sampler() -> SamplerDescriptor {
    SamplerDescriptor {
        address_mode_u: "clamp-to-edge".into(),
        address_mode_v: "clamp-to-edge".into(),
        address_mode_w: "clamp-to-edge".into(),
        mag_filter: "nearest".into(),
        min_filter: "nearest".into(),
        mipmap_filter: "nearest".into(),
        lod_min_clamp: 0.0,
        lod_max_clamp: 0.0,
        compare: None,
        anisotropy_clamp: 1,
        border_color: None,
    }
}

/// The compare function of a comparison sampler whose descriptor has none.
pub const DEFAULT_COMPARE: CompareFunction = CompareFunction::LessEqual;

/// A sampler ready to create: the wgpu descriptor and its binding type.
#[derive(Clone, Debug)]
pub(crate) struct SamplerPlan {
    /// What to create.
    pub descriptor: wgpu::SamplerDescriptor<'static>,
    /// How the bind group layout declares it.
    pub binding_type: wgpu::SamplerBindingType,
}

/// Converts `desc` for a binding that is a `sampler_comparison` or not.
///
/// A comparison binding gets the descriptor's `compare`, or
/// [`DEFAULT_COMPARE`]; a plain binding drops any `compare` (a wgpu sampler
/// with one can only be bound as a comparison sampler, while Metal keeps
/// `compare_func` on every sampler). `anisotropy_clamp` above 1 is kept only
/// when every filter is linear, which wgpu requires and Metal does not.
/// `border_color` defaults to transparent black, as in Metal. `name` is for
/// errors.
pub(crate) fn plan(
    gpu: &Gpu,
    name: &str,
    desc: &SamplerDescriptor,
    comparison: bool,
) -> Result<SamplerPlan, RunError> {
    let invalid = |why: String| RunError::InvalidSampler {
        name: name.to_string(),
        why,
    };
    let compare = match &desc.compare {
        Some(c) => Some(compare_function(c).map_err(invalid)?),
        None => None,
    };
    let mag_filter = filter_mode(&desc.mag_filter).map_err(invalid)?;
    let min_filter = filter_mode(&desc.min_filter).map_err(invalid)?;
    let mipmap_filter = match filter_mode(&desc.mipmap_filter).map_err(invalid)? {
        FilterMode::Nearest => MipmapFilterMode::Nearest,
        FilterMode::Linear => MipmapFilterMode::Linear,
    };
    let all_linear = [mag_filter, min_filter] == [FilterMode::Linear; 2]
        && mipmap_filter == MipmapFilterMode::Linear;
    let mut descriptor = wgpu::SamplerDescriptor {
        label: None,
        address_mode_u: address_mode(&desc.address_mode_u).map_err(invalid)?,
        address_mode_v: address_mode(&desc.address_mode_v).map_err(invalid)?,
        address_mode_w: address_mode(&desc.address_mode_w).map_err(invalid)?,
        mag_filter,
        min_filter,
        mipmap_filter,
        lod_min_clamp: desc.lod_min_clamp,
        lod_max_clamp: desc.lod_max_clamp,
        compare: comparison.then(|| compare.unwrap_or(DEFAULT_COMPARE)),
        anisotropy_clamp: if all_linear {
            desc.anisotropy_clamp.max(1)
        } else {
            1
        },
        border_color: None,
    };
    descriptor.border_color = border(gpu, name, &descriptor, desc.border_color.as_deref())?;
    let uses_linear = [mag_filter, min_filter].contains(&FilterMode::Linear)
        || mipmap_filter == MipmapFilterMode::Linear;
    let binding_type = if comparison {
        wgpu::SamplerBindingType::Comparison
    } else if uses_linear {
        wgpu::SamplerBindingType::Filtering
    } else {
        wgpu::SamplerBindingType::NonFiltering
    };
    Ok(SamplerPlan {
        descriptor,
        binding_type,
    })
}

/// The border colour, when an axis clamps to the border, after checking the
/// features wgpu requires: `address-mode-clamp-to-border` for the address
/// mode, and `address-mode-clamp-to-zero` too for the `zero` colour.
fn border(
    gpu: &Gpu,
    name: &str,
    desc: &wgpu::SamplerDescriptor<'_>,
    color: Option<&str>,
) -> Result<Option<SamplerBorderColor>, RunError> {
    let modes = [
        desc.address_mode_u,
        desc.address_mode_v,
        desc.address_mode_w,
    ];
    if !modes.contains(&AddressMode::ClampToBorder) {
        return Ok(None);
    }
    let color = match color {
        None | Some("transparent-black") => SamplerBorderColor::TransparentBlack,
        Some("opaque-black") => SamplerBorderColor::OpaqueBlack,
        Some("opaque-white") => SamplerBorderColor::OpaqueWhite,
        Some("zero") => SamplerBorderColor::Zero,
        Some(other) => {
            return Err(RunError::InvalidSampler {
                name: name.to_string(),
                why: format!("unknown border color `{other}`"),
            })
        }
    };
    let mut needed = vec!["address-mode-clamp-to-border".to_string()];
    if color == SamplerBorderColor::Zero {
        needed.push("address-mode-clamp-to-zero".into());
    }
    gpu.check_features(&needed)?;
    Ok(Some(color))
}

fn address_mode(name: &str) -> Result<AddressMode, String> {
    Ok(match name {
        "clamp-to-edge" => AddressMode::ClampToEdge,
        "repeat" => AddressMode::Repeat,
        "mirror-repeat" => AddressMode::MirrorRepeat,
        "clamp-to-border" => AddressMode::ClampToBorder,
        other => return Err(format!("unknown address mode `{other}`")),
    })
}

fn filter_mode(name: &str) -> Result<FilterMode, String> {
    Ok(match name {
        "nearest" => FilterMode::Nearest,
        "linear" => FilterMode::Linear,
        other => return Err(format!("unknown filter `{other}`")),
    })
}

fn compare_function(name: &str) -> Result<CompareFunction, String> {
    Ok(match name {
        "never" => CompareFunction::Never,
        "less" => CompareFunction::Less,
        "less-equal" => CompareFunction::LessEqual,
        "greater" => CompareFunction::Greater,
        "greater-equal" => CompareFunction::GreaterEqual,
        "equal" => CompareFunction::Equal,
        "not-equal" => CompareFunction::NotEqual,
        "always" => CompareFunction::Always,
        other => return Err(format!("unknown compare function `{other}`")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(address_mode("mirror-repeat"), Ok(AddressMode::MirrorRepeat));
        assert!(address_mode("clamp_to_edge").is_err());
        assert_eq!(filter_mode("linear"), Ok(FilterMode::Linear));
        assert!(filter_mode("none").is_err());
        assert_eq!(compare_function("not-equal"), Ok(CompareFunction::NotEqual));
        assert!(compare_function("less_equal").is_err());
        let d = default_sampler();
        assert_eq!(
            address_mode(&d.address_mode_w),
            Ok(AddressMode::ClampToEdge)
        );
        assert_eq!(d.lod_max_clamp, 0.0);
    }
}
