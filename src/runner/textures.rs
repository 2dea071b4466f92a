//! Texture contents on the host: [`TextureData`], wgpu's format names, PNG
//! files, and the checks of a texture against the argument it is bound to.
//!
//! The GPU side (creating, filling and reading back textures) is in
//! `resources.rs`.

use super::RunError;
use crate::reflect::{Argument, TextureBinding, TextureInfo};
use std::ops::Range;
use std::path::Path;
use wgpu::{TextureDimension, TextureFormat, TextureSampleType};

/// The contents of one texture, as a Metal host would upload them.
///
/// `data` holds mip level 0 first; each level holds every array layer (or,
/// for a 3D texture, every depth slice) in order, each layer's rows top to
/// bottom and tightly packed (`width × texel size` bytes per row). Level `m`
/// is `max(1, width >> m)` × `max(1, height >> m)`; array layers stay the same
/// at every level, the depth of a 3D texture halves like the other sides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextureData {
    /// The texel format.
    pub format: TextureFormat,
    /// Width of level 0 in texels.
    pub width: u32,
    /// Height of level 0 in texels (1 for 1D textures).
    pub height: u32,
    /// Array layers (6 per cube), or the depth of a 3D texture.
    pub layers: u32,
    /// 1D, 2D (also arrays and cubes) or 3D.
    pub dimension: TextureDimension,
    /// Mip levels held in `data`.
    pub mip_levels: u32,
    /// Samples per texel (1: not multisampled).
    pub sample_count: u32,
    /// The texels (see the type's documentation for the order).
    pub data: Vec<u8>,
}

/// How a format's components are stored, which decides how they print as PNG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Encoding {
    Unorm,
    Snorm,
    Uint,
    Sint,
    Float,
    /// Several components in one word (`rgb10a2unorm`, ...): not saved as PNG.
    Packed,
}

/// The formats a [`TextureData`] may have: every uncompressed single-plane
/// colour format and the two depth formats that have no stencil, by the
/// names wgpu's serde uses.
const FORMATS: &[(&str, TextureFormat, Encoding)] = {
    use Encoding::*;
    use TextureFormat as F;
    &[
        ("r8unorm", F::R8Unorm, Unorm),
        ("r8snorm", F::R8Snorm, Snorm),
        ("r8uint", F::R8Uint, Uint),
        ("r8sint", F::R8Sint, Sint),
        ("r16uint", F::R16Uint, Uint),
        ("r16sint", F::R16Sint, Sint),
        ("r16unorm", F::R16Unorm, Unorm),
        ("r16snorm", F::R16Snorm, Snorm),
        ("r16float", F::R16Float, Float),
        ("rg8unorm", F::Rg8Unorm, Unorm),
        ("rg8snorm", F::Rg8Snorm, Snorm),
        ("rg8uint", F::Rg8Uint, Uint),
        ("rg8sint", F::Rg8Sint, Sint),
        ("r32uint", F::R32Uint, Uint),
        ("r32sint", F::R32Sint, Sint),
        ("r32float", F::R32Float, Float),
        ("rg16uint", F::Rg16Uint, Uint),
        ("rg16sint", F::Rg16Sint, Sint),
        ("rg16unorm", F::Rg16Unorm, Unorm),
        ("rg16snorm", F::Rg16Snorm, Snorm),
        ("rg16float", F::Rg16Float, Float),
        ("rgba8unorm", F::Rgba8Unorm, Unorm),
        ("rgba8unorm-srgb", F::Rgba8UnormSrgb, Unorm),
        ("rgba8snorm", F::Rgba8Snorm, Snorm),
        ("rgba8uint", F::Rgba8Uint, Uint),
        ("rgba8sint", F::Rgba8Sint, Sint),
        ("bgra8unorm", F::Bgra8Unorm, Unorm),
        ("bgra8unorm-srgb", F::Bgra8UnormSrgb, Unorm),
        ("rgb10a2uint", F::Rgb10a2Uint, Packed),
        ("rgb10a2unorm", F::Rgb10a2Unorm, Packed),
        ("rg11b10ufloat", F::Rg11b10Ufloat, Packed),
        ("rgb9e5ufloat", F::Rgb9e5Ufloat, Packed),
        ("rg32uint", F::Rg32Uint, Uint),
        ("rg32sint", F::Rg32Sint, Sint),
        ("rg32float", F::Rg32Float, Float),
        ("rgba16uint", F::Rgba16Uint, Uint),
        ("rgba16sint", F::Rgba16Sint, Sint),
        ("rgba16unorm", F::Rgba16Unorm, Unorm),
        ("rgba16snorm", F::Rgba16Snorm, Snorm),
        ("rgba16float", F::Rgba16Float, Float),
        ("rgba32uint", F::Rgba32Uint, Uint),
        ("rgba32sint", F::Rgba32Sint, Sint),
        ("rgba32float", F::Rgba32Float, Float),
        ("depth16unorm", F::Depth16Unorm, Unorm),
        ("depth32float", F::Depth32Float, Float),
    ]
};

/// The format wgpu names `name` (`rgba8unorm`, `r32float`, ...), if it is
/// one a [`TextureData`] may have.
pub fn texture_format(name: &str) -> Option<TextureFormat> {
    FORMATS.iter().find(|f| f.0 == name).map(|f| f.1)
}

/// wgpu's name of `format`, if it is one a [`TextureData`] may have.
pub fn texture_format_name(format: TextureFormat) -> Option<&'static str> {
    FORMATS.iter().find(|f| f.1 == format).map(|f| f.0)
}

fn encoding(format: TextureFormat) -> Option<Encoding> {
    FORMATS.iter().find(|f| f.1 == format).map(|f| f.2)
}

/// The name for messages: wgpu's, or the Rust variant.
fn display_name(format: TextureFormat) -> String {
    texture_format_name(format).map_or_else(|| format!("{format:?}"), str::to_string)
}

impl TextureData {
    /// A texture of any shape: `size` is width, height and layers (or depth).
    pub fn new(
        format: TextureFormat,
        dimension: TextureDimension,
        size: [u32; 3],
        mip_levels: u32,
        data: Vec<u8>,
    ) -> TextureData {
        let [width, height, layers] = size;
        TextureData {
            format,
            width,
            height,
            layers,
            dimension,
            mip_levels,
            sample_count: 1,
            data,
        }
    }

    /// A 1D texture (one level: WebGPU's 1D textures have no mips).
    pub fn new_1d(format: TextureFormat, width: u32, data: Vec<u8>) -> TextureData {
        Self::new(format, TextureDimension::D1, [width, 1, 1], 1, data)
    }

    /// A 1D array texture (`texture1d_array`): `layers` rows of `width`
    /// texels, with `mip_levels` levels (the WGSL binds it as a 2D array of
    /// height 1, which may have mips).
    pub fn new_1d_array(
        format: TextureFormat,
        width: u32,
        layers: u32,
        mip_levels: u32,
        data: Vec<u8>,
    ) -> TextureData {
        Self::new(
            format,
            TextureDimension::D1,
            [width, 1, layers],
            mip_levels,
            data,
        )
    }

    /// A 2D texture with one level.
    pub fn new_2d(format: TextureFormat, width: u32, height: u32, data: Vec<u8>) -> TextureData {
        Self::new_2d_mips(format, width, height, 1, data)
    }

    /// A 2D texture with `mip_levels` levels.
    pub fn new_2d_mips(
        format: TextureFormat,
        width: u32,
        height: u32,
        mip_levels: u32,
        data: Vec<u8>,
    ) -> TextureData {
        Self::new(
            format,
            TextureDimension::D2,
            [width, height, 1],
            mip_levels,
            data,
        )
    }

    /// A 2D array (or cube: 6 layers, cube array: 6 per cube) texture.
    pub fn new_2d_array(
        format: TextureFormat,
        size: [u32; 3],
        mip_levels: u32,
        data: Vec<u8>,
    ) -> TextureData {
        Self::new(format, TextureDimension::D2, size, mip_levels, data)
    }

    /// A 3D texture; `size` is width, height and depth.
    pub fn new_3d(
        format: TextureFormat,
        size: [u32; 3],
        mip_levels: u32,
        data: Vec<u8>,
    ) -> TextureData {
        Self::new(format, TextureDimension::D3, size, mip_levels, data)
    }

    /// A zeroed 2D texture with one level (`msl2wgsl run --texture N=empty:WxH`).
    pub fn empty(width: u32, height: u32, format: TextureFormat) -> TextureData {
        let texel = format.block_copy_size(None).unwrap_or(0) as usize;
        let len = width as usize * height as usize * texel;
        Self::new_2d(format, width, height, vec![0; len])
    }

    /// Bytes per texel, if the format is one a [`TextureData`] may have.
    pub fn texel_size(&self) -> Option<u32> {
        encoding(self.format)?;
        let aspect = self
            .format
            .is_depth_stencil_format()
            .then_some(wgpu::TextureAspect::DepthOnly);
        self.format.block_copy_size(aspect)
    }

    /// Width, height and layers (or depth) of mip level `level`.
    pub fn mip_extent(&self, level: u32) -> [u32; 3] {
        let shrink = |n: u32| n.checked_shr(level).unwrap_or(0).max(1);
        let layers = match self.dimension {
            TextureDimension::D3 => shrink(self.layers),
            _ => self.layers,
        };
        [shrink(self.width), shrink(self.height), layers]
    }

    /// Bytes of mip level `level` (0 for an unknown format).
    pub fn mip_len(&self, level: u32) -> usize {
        let [w, h, l] = self.mip_extent(level);
        let texel = self.texel_size().unwrap_or(0) as usize;
        w as usize * h as usize * l as usize * texel * self.sample_count as usize
    }

    /// Where mip level `level` lies in `data`.
    pub fn mip_range(&self, level: u32) -> Range<usize> {
        let start: usize = (0..level).map(|m| self.mip_len(m)).sum();
        start..start + self.mip_len(level)
    }

    /// The bytes `data` must have.
    pub fn expected_len(&self) -> usize {
        (0..self.mip_levels).map(|m| self.mip_len(m)).sum()
    }

    /// Checks the texture on its own: a known format, no zero size, a
    /// possible number of levels, and exactly the bytes its shape needs.
    pub fn validate(&self) -> Result<(), String> {
        if self.texel_size().is_none() {
            return Err(format!(
                "format {} is not supported (compressed, stencil or multi-planar)",
                display_name(self.format)
            ));
        }
        let size = [self.width, self.height, self.layers];
        if size.contains(&0) || self.mip_levels == 0 || self.sample_count == 0 {
            return Err(format!(
                "size {}x{}x{} with {} mip levels and {} samples has a zero",
                size[0], size[1], size[2], self.mip_levels, self.sample_count
            ));
        }
        let longest = match self.dimension {
            TextureDimension::D3 => size.into_iter().max().unwrap_or(1),
            _ => self.width.max(self.height),
        };
        let possible = 32 - longest.leading_zeros();
        if self.mip_levels > possible {
            return Err(format!(
                "{} mip levels, but a {}x{} texture has at most {possible}",
                self.mip_levels, self.width, self.height
            ));
        }
        if self.data.len() != self.expected_len() {
            return Err(format!(
                "{} bytes of data, but the shape needs {}",
                self.data.len(),
                self.expected_len()
            ));
        }
        Ok(())
    }
}

/// Checks `data` against the texture argument it is given for: its shape
/// against the view dimension, its format against the storage format or
/// sample type.
pub(crate) fn check_texture(
    arg: &Argument,
    info: &TextureInfo,
    data: &TextureData,
) -> Result<(), RunError> {
    let mismatch = |why: String| RunError::TextureMismatch {
        name: arg.name.clone(),
        index: arg.index,
        why,
    };
    data.validate().map_err(mismatch)?;
    check_shape(info, data).map_err(mismatch)?;
    if info.multisampled != (data.sample_count > 1) {
        return Err(mismatch(format!(
            "the argument is {}multisampled, the texture has {} samples",
            if info.multisampled { "" } else { "not " },
            data.sample_count
        )));
    }
    if info.multisampled {
        return Err(RunError::Unsupported(format!(
            "multisampled texture `{}` [[texture({})]] in the runner",
            arg.name, arg.index
        )));
    }
    check_format(info, data.format).map_err(mismatch)
}

/// The view dimension needs a texture dimension and a number of layers.
/// Two Metal types are bound as 2-D arrays (docs/REFLECTION.md): a
/// `texture1d_array` (given as a 1D texture of several layers, uploaded as
/// a 2D array of height 1) and a cube texture read texel by texel (6
/// layers per cube, as its data has them).
fn check_shape(info: &TextureInfo, data: &TextureData) -> Result<(), String> {
    let (dimension, layers_ok, square) =
        match (info.view_dimension.as_str(), info.texture_type.as_str()) {
            ("2d-array", "type1DArray") => (TextureDimension::D1, true, false),
            // A texel buffer: one row of texels, one level.
            // A texel buffer: one row of texels, one level; a 2D texture of
            // height 1 is one row too (`msl2wgsl run --texture N=empty:Wx1:FORMAT`).
            ("buffer", _) => (
                match data.dimension {
                    TextureDimension::D2 => TextureDimension::D2,
                    _ => TextureDimension::D1,
                },
                data.layers == 1 && data.height == 1 && data.mip_levels == 1,
                false,
            ),
            ("2d-array", "typeCube") => (TextureDimension::D2, data.layers == 6, true),
            ("2d-array", "typeCubeArray") => {
                (TextureDimension::D2, data.layers.is_multiple_of(6), true)
            }
            (view, _) => view_shape(view, data)?,
        };
    check_dimension(info, data, dimension, layers_ok, square)
}

/// The texture dimension, layer rule and squareness a view dimension needs.
fn view_shape(view: &str, data: &TextureData) -> Result<(TextureDimension, bool, bool), String> {
    Ok(match view {
        "1d" => (TextureDimension::D1, data.layers == 1, false),
        "2d" => (TextureDimension::D2, data.layers == 1, false),
        "2d-array" => (TextureDimension::D2, true, false),
        "3d" => (TextureDimension::D3, true, false),
        "cube" => (TextureDimension::D2, data.layers == 6, true),
        "cube-array" => (TextureDimension::D2, data.layers.is_multiple_of(6), true),
        other => {
            return Err(format!(
                "unknown view dimension `{other}` in the reflection"
            ))
        }
    })
}

fn check_dimension(
    info: &TextureInfo,
    data: &TextureData,
    dimension: TextureDimension,
    layers_ok: bool,
    square: bool,
) -> Result<(), String> {
    if data.dimension != dimension {
        return Err(format!(
            "a {} view needs a {dimension:?} texture, not {:?}",
            info.view_dimension, data.dimension
        ));
    }
    if !layers_ok {
        return Err(format!(
            "a {} view cannot be made of {} layers",
            info.view_dimension, data.layers
        ));
    }
    if square && data.width != data.height {
        return Err(format!(
            "cube faces must be square, not {}x{}",
            data.width, data.height
        ));
    }
    Ok(())
}

/// Storage textures need exactly the storage format; sampled ones a format
/// of their sample type; depth ones a depth format.
fn check_format(info: &TextureInfo, format: TextureFormat) -> Result<(), String> {
    let name = display_name(format);
    match info.binding_kind {
        TextureBinding::Storage | TextureBinding::Buffer => {
            let Some(wanted) = &info.storage_format else {
                return Err("the reflection gives no storage format".into());
            };
            let wanted_format = texture_format(wanted)
                .ok_or_else(|| format!("unknown storage format `{wanted}` in the reflection"))?;
            if wanted_format != format {
                return Err(format!("the kernel writes {wanted}, the texture is {name}"));
            }
        }
        TextureBinding::Depth => {
            if !format.is_depth_stencil_format() {
                return Err(format!("a depth texture needs depth32float, not {name}"));
            }
        }
        TextureBinding::Sampled => {
            let ok = matches!(
                (info.sample_type.as_str(), format.sample_type(None, None)),
                ("float", Some(TextureSampleType::Float { .. }))
                    | ("sint", Some(TextureSampleType::Sint))
                    | ("uint", Some(TextureSampleType::Uint))
            );
            if !ok {
                return Err(format!(
                    "the kernel reads {} ({}) texels, the texture is {name}",
                    info.sample_type, info.data_type
                ));
            }
        }
    }
    Ok(())
}

impl TextureData {
    /// Reads a PNG file as an rgba8unorm 2D texture (any PNG colour type and
    /// depth is expanded to 8-bit RGBA; the bytes are not linearised).
    pub fn from_png(path: impl AsRef<Path>) -> Result<TextureData, RunError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| RunError::Image(format!("cannot read '{}': {e}", path.display())))?;
        Self::from_png_bytes(&bytes)
            .map_err(|e| RunError::Image(format!("'{}': {e}", path.display())))
    }

    /// [`TextureData::from_png`] from the file's bytes.
    pub fn from_png_bytes(bytes: &[u8]) -> Result<TextureData, String> {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        decoder.set_transformations(png::Transformations::normalize_to_color8());
        let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
        let size = reader
            .output_buffer_size()
            .ok_or("the image is too large")?;
        let mut buf = vec![0; size];
        let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
        buf.truncate(info.buffer_size());
        let rgba: Vec<u8> = match info.color_type {
            png::ColorType::Rgba => buf,
            png::ColorType::Rgb => buf
                .chunks_exact(3)
                .flat_map(|c| [c[0], c[1], c[2], 255])
                .collect(),
            png::ColorType::GrayscaleAlpha => buf
                .chunks_exact(2)
                .flat_map(|c| [c[0], c[0], c[0], c[1]])
                .collect(),
            png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
            png::ColorType::Indexed => return Err("palette not expanded".into()),
        };
        Ok(Self::new_2d(
            TextureFormat::Rgba8Unorm,
            info.width,
            info.height,
            rgba,
        ))
    }

    /// Saves mip level 0 as an 8-bit PNG; array layers (or depth slices) are
    /// stacked top to bottom.
    ///
    /// RGBA and BGRA formats keep their bytes; other formats are converted
    /// per component: normalised and float values are clamped to [0, 1] and
    /// scaled to 255, integers are clamped to [0, 255]. One-component formats
    /// (and depth) become grayscale, two-component ones RGB with blue 0.
    pub fn to_png(&self, path: impl AsRef<Path>) -> Result<(), RunError> {
        let path = path.as_ref();
        let bytes = self.to_png_bytes().map_err(RunError::Image)?;
        std::fs::write(path, bytes)
            .map_err(|e| RunError::Image(format!("cannot write '{}': {e}", path.display())))
    }

    /// [`TextureData::to_png`] into memory.
    pub fn to_png_bytes(&self) -> Result<Vec<u8>, String> {
        self.validate()?;
        let (color, pixels) = self.png_pixels()?;
        let height = self.height * self.mip_extent(0)[2];
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.width, height);
        encoder.set_color(color);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer
            .write_image_data(&pixels)
            .map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// Mip 0 as 8-bit PNG pixels of the returned colour type.
    fn png_pixels(&self) -> Result<(png::ColorType, Vec<u8>), String> {
        let level0 = &self.data[self.mip_range(0)];
        let encoding = encoding(self.format).filter(|e| *e != Encoding::Packed);
        let encoding =
            encoding.ok_or_else(|| format!("cannot save {} as PNG", display_name(self.format)))?;
        let components = self.format.components() as usize;
        let texel = self.texel_size().unwrap_or(1) as usize;
        let width = texel / components;
        let mut out = Vec::with_capacity(level0.len() / width);
        for pixel in level0.chunks_exact(texel) {
            let mut c: Vec<u8> = pixel
                .chunks_exact(width)
                .map(|bytes| component_to_u8(encoding, bytes))
                .collect();
            if matches!(
                self.format,
                TextureFormat::Bgra8Unorm | TextureFormat::Bgra8UnormSrgb
            ) {
                c.swap(0, 2);
            }
            if components == 2 {
                c.push(0);
            }
            out.extend(c);
        }
        let color = match components {
            1 => png::ColorType::Grayscale,
            2 => png::ColorType::Rgb,
            _ => png::ColorType::Rgba,
        };
        Ok((color, out))
    }
}

/// One little-endian component (1, 2 or 4 bytes) as an 8-bit PNG sample.
fn component_to_u8(encoding: Encoding, bytes: &[u8]) -> u8 {
    let mut word = [0u8; 4];
    word[..bytes.len()].copy_from_slice(bytes);
    let raw = u32::from_le_bytes(word);
    let bits = bytes.len() as u32 * 8;
    let max = ((1u64 << bits) - 1) as f64;
    // Sign-extends a `bits`-wide integer.
    let signed = || (i64::from(raw) << (64 - bits)) >> (64 - bits);
    let unit = match encoding {
        Encoding::Unorm => f64::from(raw) / max,
        Encoding::Snorm => signed() as f64 / (max / 2.0).floor(),
        Encoding::Uint => return raw.min(255) as u8,
        Encoding::Sint => return signed().clamp(0, 255) as u8,
        Encoding::Float if bits == 16 => f64::from(half::f16::from_bits(raw as u16).to_f32()),
        Encoding::Float => f64::from(f32::from_bits(raw)),
        Encoding::Packed => 0.0,
    };
    // NaN clamps to 0, as `as` saturates it.
    (unit.clamp(0.0, 1.0) * 255.0).round() as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_round_trip() {
        for (name, format, _) in FORMATS {
            assert_eq!(texture_format(name), Some(*format));
            assert_eq!(texture_format_name(*format), Some(*name));
            let t = TextureData::empty(3, 2, *format);
            assert!(t.validate().is_ok(), "{name}");
        }
        assert_eq!(texture_format("bc1-rgba-unorm"), None);
        assert_eq!(texture_format("RGBA8Unorm"), None);
    }

    #[test]
    fn mip_geometry() {
        let t = TextureData::new_2d_array(TextureFormat::R32Float, [5, 3, 2], 3, vec![0; 0]);
        assert_eq!(t.mip_extent(1), [2, 1, 2]);
        assert_eq!(t.mip_extent(2), [1, 1, 2]);
        assert_eq!(t.expected_len(), (15 + 2 + 1) * 2 * 4);
        assert_eq!(t.mip_range(1), 120..136);
        let t = TextureData::new_3d(TextureFormat::R8Unorm, [4, 4, 8], 4, vec![0; 0]);
        assert_eq!(t.mip_extent(2), [1, 1, 2]);
        assert_eq!(t.expected_len(), 128 + 16 + 2 + 1);
        assert!(t.validate().unwrap_err().contains("147"));
        let mut t = TextureData::empty(4, 4, TextureFormat::Rgba8Unorm);
        t.mip_levels = 4;
        assert!(t.validate().unwrap_err().contains("at most 3"));
        assert!(TextureData::empty(0, 4, TextureFormat::Rgba8Unorm)
            .validate()
            .is_err());
    }

    #[test]
    fn components_to_png_samples() {
        assert_eq!(component_to_u8(Encoding::Unorm, &[0x80]), 0x80);
        assert_eq!(component_to_u8(Encoding::Unorm, &[0xff, 0xff]), 255);
        assert_eq!(component_to_u8(Encoding::Snorm, &[0x81]), 0);
        assert_eq!(component_to_u8(Encoding::Snorm, &[0x7f]), 255);
        assert_eq!(component_to_u8(Encoding::Uint, &300u32.to_le_bytes()), 255);
        assert_eq!(component_to_u8(Encoding::Sint, &(-5i16).to_le_bytes()), 0);
        assert_eq!(component_to_u8(Encoding::Float, &0.5f32.to_le_bytes()), 128);
        assert_eq!(component_to_u8(Encoding::Float, &2.0f32.to_le_bytes()), 255);
        let h = half::f16::from_f32(0.25).to_bits().to_le_bytes();
        assert_eq!(component_to_u8(Encoding::Float, &h), 64);
        assert_eq!(component_to_u8(Encoding::Float, &f32::NAN.to_le_bytes()), 0);
    }

    #[test]
    fn png_round_trip_and_conversions() {
        let data: Vec<u8> = (0..4 * 3 * 2).map(|i| (i * 10) as u8).collect();
        let t = TextureData::new_2d(TextureFormat::Rgba8Unorm, 3, 2, data.clone());
        let back = TextureData::from_png_bytes(&t.to_png_bytes().unwrap()).unwrap();
        assert_eq!(back, t);
        let bgra = TextureData::new_2d(TextureFormat::Bgra8Unorm, 3, 2, data.clone());
        let back = TextureData::from_png_bytes(&bgra.to_png_bytes().unwrap()).unwrap();
        assert_eq!(&back.data[..4], &[20, 10, 0, 30]);
        let gray: Vec<u8> = [0.0f32, 0.5, 1.0, -1.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let r32 = TextureData::new_2d(TextureFormat::R32Float, 2, 2, gray);
        let back = TextureData::from_png_bytes(&r32.to_png_bytes().unwrap()).unwrap();
        let reds: Vec<u8> = back.data.chunks(4).map(|p| p[0]).collect();
        assert_eq!(reds, [0, 128, 255, 0]);
        assert!(TextureData::from_png_bytes(b"not a png").is_err());
        let packed = TextureData::empty(1, 1, TextureFormat::Rgb10a2Unorm);
        assert!(packed.to_png_bytes().is_err());
    }
}
