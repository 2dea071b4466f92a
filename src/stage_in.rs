//! Per-thread inputs of kernels: Metal's stage-input descriptor
//! (`MTLStageInputOutputDescriptor`) and stage-in region.
//!
//! A kernel may take a `[[stage_in]]` struct whose members carry
//! `[[attribute(n)]]`. The host's descriptor says, per attribute, its
//! format, the buffer it is read from and its byte offset, and per buffer
//! its stride and step function; Metal fetches and converts each thread's
//! attributes before the kernel runs. The element a thread reads is its
//! `thread_position_in_grid` plus the origin of the stage-in region
//! (`setStageInRegion`), in x or y as the step function says, divided by
//! the step rate. `[[grid_origin]]` and `[[grid_size]]` give that region.
//!
//! WGSL fixes the formats, offsets and strides when it is written, so the
//! descriptor is a translation option ([`crate::Options::stage_in`]); the
//! region is read at run time from a small uniform
//! ([`STAGE_IN_REGION_BINDING`], [`StageInRegion::to_bytes`]).

use crate::reflect::WgslBinding;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `@binding` (in `@group(0)`) of the stage-in region uniform: the last of
/// the synthetic range (192 to 255; `constexpr sampler`s count up from 193).
pub const STAGE_IN_REGION_BINDING: u32 = 255;

/// Where a host's `MTLStageInputOutputDescriptor` puts each
/// `[[attribute(n)]]` of a kernel's `[[stage_in]]`.
///
/// JSON (`--stage-in FILE.json`), with Metal's names:
/// `{"attributes": {"0": {"format": "float4", "offset": 0, "bufferIndex": 1}},
///   "layouts": {"1": {"stride": 16, "stepFunction": "threadPositionInGridX", "stepRate": 1}}}`.
///
/// Without one ([`crate::Options::stage_in`] `None`) every kernel reads
/// its attributes as [`StageInputDescriptor::packed`] lays them out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StageInputDescriptor {
    /// By `[[attribute(n)]]` index (`attributes[n]`).
    #[serde(default)]
    pub attributes: BTreeMap<u32, AttributeDescriptor>,
    /// By Metal buffer index (`layouts[bufferIndex]`).
    #[serde(default)]
    pub layouts: BTreeMap<u32, BufferLayoutDescriptor>,
    /// The type of the index buffer's elements, for the indexed step
    /// functions (`indexType`).
    #[serde(default)]
    pub index_type: IndexType,
    /// The Metal buffer index of the index buffer (`indexBufferIndex`).
    #[serde(default)]
    pub index_buffer_index: u32,
}

/// One attribute (`MTLAttributeDescriptor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttributeDescriptor {
    /// How its bytes are read (`format`).
    pub format: AttributeFormat,
    /// Its byte offset in an element of its buffer (`offset`).
    #[serde(default)]
    pub offset: u32,
    /// The Metal buffer index it is read from (`bufferIndex`).
    pub buffer_index: u32,
}

/// How one buffer is stepped through (`MTLBufferLayoutDescriptor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BufferLayoutDescriptor {
    /// Bytes from one element to the next (`stride`): a multiple of 4.
    pub stride: u32,
    /// Which thread coordinate picks the element (`stepFunction`).
    #[serde(default)]
    pub step_function: StepFunction,
    /// Threads that share an element (`stepRate`, at least 1).
    #[serde(default = "one")]
    pub step_rate: u32,
}

fn one() -> u32 {
    1
}

/// `MTLStepFunction`, the values a compute function may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StepFunction {
    /// Every thread reads element 0.
    Constant,
    /// Element `(x + origin.x) / stepRate`. For a vertex function run as
    /// a compute dispatch, `[[vertex_id]]` (`MTLVertexStepFunctionPerVertex`,
    /// which JSON may name `perVertex`).
    #[default]
    #[serde(alias = "perVertex")]
    ThreadPositionInGridX,
    /// Element `(y + origin.y) / stepRate`. For a vertex function run as a
    /// compute dispatch, `base_instance + (instance_id - base_instance) /
    /// stepRate` (`MTLVertexStepFunctionPerInstance`, which JSON may name
    /// `perInstance`).
    #[serde(alias = "perInstance")]
    ThreadPositionInGridY,
    /// The element the index buffer holds at `(x + origin.x) / stepRate`.
    ThreadPositionInGridXIndexed,
    /// The element the index buffer holds at `(y + origin.y) / stepRate`.
    ThreadPositionInGridYIndexed,
}

impl StepFunction {
    /// Metal's name (`threadPositionInGridX`).
    pub fn name(self) -> &'static str {
        match self {
            StepFunction::Constant => "constant",
            StepFunction::ThreadPositionInGridX => "threadPositionInGridX",
            StepFunction::ThreadPositionInGridY => "threadPositionInGridY",
            StepFunction::ThreadPositionInGridXIndexed => "threadPositionInGridXIndexed",
            StepFunction::ThreadPositionInGridYIndexed => "threadPositionInGridYIndexed",
        }
    }

    /// The thread coordinate it steps by (0 for x, 1 for y), if any.
    pub fn axis(self) -> Option<usize> {
        match self {
            StepFunction::Constant => None,
            StepFunction::ThreadPositionInGridX | StepFunction::ThreadPositionInGridXIndexed => {
                Some(0)
            }
            StepFunction::ThreadPositionInGridY | StepFunction::ThreadPositionInGridYIndexed => {
                Some(1)
            }
        }
    }

    /// Whether the element is looked up in the index buffer.
    pub fn is_indexed(self) -> bool {
        matches!(
            self,
            StepFunction::ThreadPositionInGridXIndexed | StepFunction::ThreadPositionInGridYIndexed
        )
    }
}

/// `MTLIndexType`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IndexType {
    /// 16-bit indices.
    #[serde(rename = "uint16")]
    UInt16,
    /// 32-bit indices.
    #[default]
    #[serde(rename = "uint32")]
    UInt32,
}

/// How an attribute's components are encoded (`MTLAttributeFormat` less
/// its component count).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormatKind {
    /// 8-bit unsigned integers.
    UChar,
    /// 8-bit signed integers.
    Char,
    /// 8-bit unsigned, normalized to [0, 1].
    UCharNormalized,
    /// 8-bit signed, normalized to [-1, 1].
    CharNormalized,
    /// 16-bit unsigned integers.
    UShort,
    /// 16-bit signed integers.
    Short,
    /// 16-bit unsigned, normalized.
    UShortNormalized,
    /// 16-bit signed, normalized.
    ShortNormalized,
    /// IEEE half.
    Half,
    /// IEEE float.
    Float,
    /// 32-bit signed integers.
    Int,
    /// 32-bit unsigned integers.
    UInt,
    /// Three 10-bit and one 2-bit signed normalized fields in a word.
    Int1010102Normalized,
    /// Three 10-bit and one 2-bit unsigned normalized fields in a word.
    UInt1010102Normalized,
    /// Four normalized bytes in the order blue, green, red, alpha.
    UChar4NormalizedBgra,
    /// Two 11-bit and one 10-bit unsigned floats in a word.
    FloatRG11B10,
    /// Three 9-bit mantissas sharing a 5-bit exponent.
    FloatRGB9E5,
}

/// What a format's components arrive as in the shader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatValue {
    /// Floating point (float, half and normalized formats).
    Float,
    /// Signed integers.
    Signed,
    /// Unsigned integers.
    Unsigned,
}

impl FormatKind {
    /// Every kind, for name lookup.
    const ALL: [FormatKind; 17] = [
        FormatKind::UChar,
        FormatKind::Char,
        FormatKind::UCharNormalized,
        FormatKind::CharNormalized,
        FormatKind::UShort,
        FormatKind::Short,
        FormatKind::UShortNormalized,
        FormatKind::ShortNormalized,
        FormatKind::Half,
        FormatKind::Float,
        FormatKind::Int,
        FormatKind::UInt,
        FormatKind::Int1010102Normalized,
        FormatKind::UInt1010102Normalized,
        FormatKind::UChar4NormalizedBgra,
        FormatKind::FloatRG11B10,
        FormatKind::FloatRGB9E5,
    ];

    /// Bits per component of the per-component kinds (`None` for the
    /// packed ones).
    pub fn component_bits(self) -> Option<u32> {
        use FormatKind as K;
        Some(match self {
            K::UChar | K::Char | K::UCharNormalized | K::CharNormalized => 8,
            K::UShort | K::Short | K::UShortNormalized | K::ShortNormalized | K::Half => 16,
            K::Float | K::Int | K::UInt => 32,
            _ => return None,
        })
    }

    /// The kind of value its components give.
    pub fn value(self) -> FormatValue {
        use FormatKind as K;
        match self {
            K::UChar | K::UShort | K::UInt => FormatValue::Unsigned,
            K::Char | K::Short | K::Int => FormatValue::Signed,
            _ => FormatValue::Float,
        }
    }

    /// The component counts it comes in, and for packed kinds the one.
    fn counts(self) -> std::ops::RangeInclusive<u8> {
        use FormatKind as K;
        match self {
            K::Int1010102Normalized | K::UInt1010102Normalized | K::UChar4NormalizedBgra => 4..=4,
            K::FloatRG11B10 | K::FloatRGB9E5 => 3..=3,
            _ => 1..=4,
        }
    }

    /// Metal's name stem (`uchar`, `shortNormalized` is `short` + `Normalized`).
    fn stem(self) -> (&'static str, bool) {
        use FormatKind as K;
        match self {
            K::UChar => ("uchar", false),
            K::Char => ("char", false),
            K::UCharNormalized => ("uchar", true),
            K::CharNormalized => ("char", true),
            K::UShort => ("ushort", false),
            K::Short => ("short", false),
            K::UShortNormalized => ("ushort", true),
            K::ShortNormalized => ("short", true),
            K::Half => ("half", false),
            K::Float => ("float", false),
            K::Int => ("int", false),
            K::UInt => ("uint", false),
            K::Int1010102Normalized => ("int1010102Normalized", false),
            K::UInt1010102Normalized => ("uint1010102Normalized", false),
            K::UChar4NormalizedBgra => ("uchar4Normalized_bgra", false),
            K::FloatRG11B10 => ("floatRG11B10", false),
            K::FloatRGB9E5 => ("floatRGB9E5", false),
        }
    }
}

/// `MTLAttributeFormat`: an encoding and a component count. Written with
/// Metal's Swift names (`float3`, `uchar4Normalized`, `half2`,
/// `uint1010102Normalized`, `uchar4Normalized_bgra`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AttributeFormat {
    /// The encoding.
    pub kind: FormatKind,
    /// Components (1 to 4).
    pub components: u8,
}

impl AttributeFormat {
    /// The format Metal calls `name`.
    pub fn from_name(name: &str) -> Option<AttributeFormat> {
        FormatKind::ALL.iter().find_map(|&kind| {
            kind.counts()
                .map(|components| AttributeFormat { kind, components })
                .find(|f| f.name() == name)
        })
    }

    /// Metal's name (`uchar4Normalized`).
    pub fn name(self) -> String {
        let (stem, normalized) = self.kind.stem();
        if self.kind.component_bits().is_none() {
            return stem.to_string();
        }
        let count = match self.components {
            1 => String::new(),
            n => n.to_string(),
        };
        let suffix = if normalized { "Normalized" } else { "" };
        format!("{stem}{count}{suffix}")
    }

    /// Bytes one attribute of this format takes.
    pub fn size(self) -> u32 {
        match self.kind.component_bits() {
            Some(bits) => bits / 8 * u32::from(self.components),
            None => 4,
        }
    }
}

impl TryFrom<String> for AttributeFormat {
    type Error = String;
    fn try_from(name: String) -> Result<Self, String> {
        AttributeFormat::from_name(&name).ok_or_else(|| {
            format!("unknown attribute format `{name}` (Metal's names: float3, uchar4Normalized, half2, ...)")
        })
    }
}

impl From<AttributeFormat> for String {
    fn from(f: AttributeFormat) -> String {
        f.name()
    }
}

impl StageInputDescriptor {
    /// Parses the JSON form.
    pub fn from_json(text: &str) -> Result<StageInputDescriptor, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// The default layout: every attribute in buffer `buffer_index`, read
    /// in its member's own format (`float3` as `float3`, `uchar4` as
    /// `uchar4`), tightly packed in attribute order (a `float3` takes 12
    /// bytes, a `half3` 6), one element per thread in x (stride: the
    /// packed size rounded up to a multiple of 4, as Metal requires). This is
    /// how a host that fills one buffer of per-thread records, attribute
    /// after attribute, describes it (and what `VertexDescriptor::packed`
    /// does for vertex functions). `attributes` are the
    /// `(attribute index, format)` of the `[[stage_in]]`'s members.
    pub fn packed(
        attributes: &[(u32, AttributeFormat)],
        buffer_index: u32,
    ) -> StageInputDescriptor {
        let mut sorted = attributes.to_vec();
        sorted.sort_by_key(|(n, _)| *n);
        let mut descriptor = StageInputDescriptor::default();
        let mut offset = 0;
        for (n, format) in sorted {
            descriptor.attributes.insert(
                n,
                AttributeDescriptor {
                    format,
                    offset,
                    buffer_index,
                },
            );
            offset += format.size();
        }
        descriptor.layouts.insert(
            buffer_index,
            BufferLayoutDescriptor {
                stride: offset.next_multiple_of(4).max(4),
                step_function: StepFunction::ThreadPositionInGridX,
                step_rate: 1,
            },
        );
        descriptor
    }
}

/// The stage-in region (`setStageInRegion`'s `MTLRegion`): where the
/// threads' stage-in elements start and how many there are; the kernel's
/// `[[grid_origin]]` and `[[grid_size]]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageInRegion {
    /// `origin`: added to the thread position before fetching.
    pub origin: [u32; 3],
    /// `size`.
    pub size: [u32; 3],
}

impl StageInRegion {
    /// Size of the uniform in bytes.
    pub const SIZE: usize = 32;

    /// The uniform's bytes: two `vec3<u32>` at 0 and 16, little endian.
    pub fn to_bytes(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (v, vec) in [self.origin, self.size].iter().enumerate() {
            for (c, x) in vec.iter().enumerate() {
                let at = v * 16 + c * 4;
                out[at..at + 4].copy_from_slice(&x.to_le_bytes());
            }
        }
        out
    }
}

/// The reflection of a kernel's `[[stage_in]]`: what Metal's
/// `MTLFunction.stageInputAttributes` says, with the descriptor it was
/// translated for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageInputReflection {
    /// One per `[[attribute(n)]]` member, in member order.
    pub attributes: Vec<StageInputAttribute>,
    /// One per buffer the attributes are read from, by buffer index.
    pub layouts: Vec<StageInputLayout>,
    /// The index buffer, for the indexed step functions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_buffer_index: Option<u32>,
    /// Where the kernel reads the stage-in region (origin, size), if it
    /// does: fill it with [`StageInRegion::to_bytes`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region_binding: Option<WgslBinding>,
}

/// One attribute (`MTLAttribute`, with its descriptor entry).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageInputAttribute {
    /// The member's name.
    pub name: String,
    /// `n` of `[[attribute(n)]]` (`attributeIndex`).
    pub attribute_index: u32,
    /// The member's MSL type (`attributeType`).
    pub attribute_type: String,
    /// The format it is read in (Metal's name).
    pub format: String,
    /// The buffer it is read from.
    pub buffer_index: u32,
    /// Its byte offset in an element of that buffer.
    pub offset: u32,
}

/// One buffer of the stage input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageInputLayout {
    /// The Metal buffer index (bind it as `[[buffer(n)]]` is bound).
    pub buffer_index: u32,
    /// Bytes per element.
    pub stride: u32,
    /// Metal's name of the step function.
    pub step_function: String,
    /// Threads per element.
    pub step_rate: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_round_trip() {
        for name in [
            "float",
            "float3",
            "half2",
            "uchar4Normalized",
            "ucharNormalized",
            "short2Normalized",
            "uint1010102Normalized",
            "uchar4Normalized_bgra",
            "floatRG11B10",
        ] {
            let f = AttributeFormat::from_name(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(f.name(), name);
        }
        assert_eq!(AttributeFormat::from_name("float5"), None);
        assert_eq!(AttributeFormat::from_name("uint1010102Normalized2"), None);
    }

    #[test]
    fn the_default_packs_attributes_in_index_order() {
        let f = |n| AttributeFormat::from_name(n).unwrap();
        let d = StageInputDescriptor::packed(&[(2, f("uchar3")), (0, f("float3"))], 1);
        assert_eq!(d.attributes[&0].offset, 0);
        assert_eq!(d.attributes[&2].offset, 12);
        assert_eq!(d.layouts[&1].stride, 16);
    }

    #[test]
    fn vertex_step_functions_are_the_grid_axes() {
        let d = StageInputDescriptor::from_json(
            r#"{"layouts": {"0": {"stride": 16, "stepFunction": "perVertex"},
                            "1": {"stride": 16, "stepFunction": "perInstance"}}}"#,
        )
        .unwrap();
        assert_eq!(d.layouts[&0].step_function.axis(), Some(0));
        assert_eq!(d.layouts[&1].step_function.axis(), Some(1));
    }

    #[test]
    fn json_uses_metal_names() {
        let d = StageInputDescriptor::from_json(
            r#"{"attributes": {"0": {"format": "uchar4Normalized", "offset": 4, "bufferIndex": 2}},
                "layouts": {"2": {"stride": 8, "stepFunction": "threadPositionInGridY"}}}"#,
        )
        .unwrap();
        assert_eq!(d.attributes[&0].format.name(), "uchar4Normalized");
        assert_eq!(
            d.layouts[&2].step_function,
            StepFunction::ThreadPositionInGridY
        );
        assert_eq!(d.layouts[&2].step_rate, 1);
    }
}
