//! `msl2wgsl render`: draw with a vertex and a fragment function into
//! offscreen targets and save them as PNG (contract: `docs/CLI.md`).

use super::{
    error, parse_buffer, parse_constant, parse_define, parse_index, parse_texture,
    parse_texture_format, BufferArg, TextureArg, FAILURE,
};
use clap::Parser;
use msl2wgsl::diagnostics::Code;
use std::path::{Path, PathBuf};

/// Draw with a vertex and a fragment function and save the image as PNG.
#[derive(Parser, Debug)]
#[command(
    name = "msl2wgsl render",
    bin_name = "msl2wgsl render",
    after_help = "Draws N vertices (× instances) as a triangle list (--primitive point: N points, \
        each a square [[point_size]] pixels across) into offscreen targets \
        cleared to --clear (default transparent black), one per [[color(m)]] of the fragment \
        function. The image of attachment 0 is written to OUT.png, attachment m to \
        OUT.m.png (out.png, out.1.png, ...). Default formats: rgba8unorm for float/half \
        outputs, rgba8sint for int, rgba8uint for uint.\n\
        A [[stage_in]] vertex input reads buffer 0 (--vertex-buffer 0=...): vertices of \
        tightly packed [[attribute(k)]] members in attribute order, as `msl2wgsl reflect` \
        reports (vertexAttributes, vertexStride). --attribute K=B reads [[attribute(K)]] from \
        vertex buffer B instead, as a Metal vertex descriptor may: the attributes of each \
        buffer are tightly packed in attribute order (Xcode's Game template: --attribute 1=1 \
        --vertex-buffer 0=positions.bin --vertex-buffer 1=texcoords.bin).\n\
        With --effect NAME instead of --vertex/--fragment, the [[stitchable]] function NAME is \
        applied as SwiftUI applies it (colorEffect, distortionEffect or layerEffect, as its \
        signature says; a fill for `half4 f(float2 position, args...)`) to the layer --input \
        (a PNG; one pixel per point, its values used as they are), over the whole image: \
        `msl2wgsl render effect.metal --effect wave --input in.png --arg 0=2.5 --arg \
        speed=5 -o out.png`. Each --arg sets one argument after the fixed ones, by position \
        (0 is the first) or by name: numbers for values (`1.5`, `1,0,0,1` for a half4 \
        colour), numbers or @FILE (raw bytes, Metal's layout) for arrays (their count is \
        set from them) and `.data`, PATH.png for texture2d<half> images. Arguments with a \
        default may be left out. A fill without --input needs --size."
)]
pub(super) struct RenderArgs {
    /// The MSL file.
    file: String,
    /// The vertex function.
    #[arg(long, value_name = "NAME", required_unless_present = "effect")]
    vertex: Option<String>,
    /// The fragment function.
    #[arg(long, value_name = "NAME", required_unless_present = "effect")]
    fragment: Option<String>,
    /// Apply the [[stitchable]] function NAME as a SwiftUI effect to --input.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["vertex", "fragment", "vertex_count", "primitive", "vertex_buffer", "attribute_buffer", "fragment_buffer", "texture", "format", "clear"])]
    effect: Option<String>,
    /// The layer an effect reads (PNG, as rgba8unorm); the output has its size.
    #[arg(long, value_name = "PATH.png", requires = "effect")]
    input: Option<PathBuf>,
    /// An effect argument, by position after the fixed ones or by name.
    #[arg(long = "arg", value_name = "N=VALUE", requires = "effect", value_parser = parse_effect_arg)]
    effect_arg: Vec<(String, String)>,
    /// Size of the targets in pixels (an effect: of a fill without --input).
    #[arg(long, value_name = "WxH", value_parser = parse_size, required_unless_present = "effect")]
    size: Option<(u32, u32)>,
    /// Vertices to draw (vertexCount).
    #[arg(long, value_name = "N", required_unless_present = "effect")]
    vertex_count: Option<u32>,
    /// Instances to draw (instanceCount).
    #[arg(long, value_name = "N", default_value_t = 1)]
    instance_count: u32,
    /// The first vertex (vertexStart): the first [[vertex_id]] and the
    /// [[base_vertex]].
    #[arg(long, value_name = "N", default_value_t = 0)]
    vertex_start: u32,
    /// The first instance (baseInstance): the first [[instance_id]] and
    /// the [[base_instance]].
    #[arg(long, value_name = "N", default_value_t = 0)]
    base_instance: u32,
    /// What the vertices draw: a triangle list, or points, each a square
    /// [[point_size]] pixels across (the vertex function's point-sprite
    /// entry point; the fragment function may read [[point_coord]]).
    #[arg(long, value_enum, default_value_t = PrimitiveArg::Triangle)]
    primitive: PrimitiveArg,
    /// Bind the vertex function's [[buffer(N)]] to a file's bytes, or
    /// (N=zeros:BYTES) to BYTES zero bytes.
    #[arg(long, value_name = "N=PATH|N=zeros:BYTES", value_parser = parse_buffer)]
    vertex_buffer: Vec<BufferArg>,
    /// Read [[attribute(K)]] of the [[stage_in]] from vertex buffer B (default 0).
    #[arg(long = "attribute", value_name = "K=B", value_parser = parse_attribute_buffer)]
    attribute_buffer: Vec<(u32, u32)>,
    /// Bind the fragment function's [[buffer(N)]] to a file's bytes, or
    /// (N=zeros:BYTES) to BYTES zero bytes.
    #[arg(long, value_name = "N=PATH|N=zeros:BYTES", value_parser = parse_buffer)]
    fragment_buffer: Vec<BufferArg>,
    /// Bind [[texture(N)]] of either function to a PNG image (rgba8unorm), or
    /// (N=empty:WxH[:FORMAT]) to a zeroed WxH texture.
    #[arg(long, value_name = "N=PATH.png|N=empty:WxH[:FORMAT]", value_parser = parse_texture)]
    texture: Vec<TextureArg>,
    /// Texel format of the storage texture [[texture(N)]] in the WGSL.
    #[arg(long, value_name = "N=FORMAT", value_parser = parse_texture_format)]
    texture_format: Vec<(u32, String)>,
    /// Set [[function_constant(N)]] of both functions (a number; `true`/`false` for bool).
    #[arg(long, value_name = "N=VALUE", value_parser = parse_constant)]
    constant: Vec<(u32, f64)>,
    /// Bindings to use instead of the default scheme (JSON; see docs/REFLECTION.md).
    #[arg(long, value_name = "MAP.json", value_parser = super::parse_binding_map)]
    binding_map: Option<msl2wgsl::reflect::BindingMap>,
    /// Clear colour of every target, in the format's values.
    #[arg(long, value_name = "R,G,B,A", value_parser = parse_clear)]
    clear: Option<[f64; 4]>,
    /// Format of every target (wgpu's name), or with M= of attachment M only.
    #[arg(long, value_name = "FORMAT|M=FORMAT", value_parser = parse_target_format)]
    format: Vec<(Option<u32>, String)>,
    /// The PNG of attachment 0 (attachment M goes to OUT.M.png).
    #[arg(short = 'o', value_name = "OUT.png")]
    output: PathBuf,
    /// Search DIR for `#include`.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Define a macro (VALUE defaults to 1).
    #[arg(short = 'D', value_name = "NAME[=VALUE]", value_parser = parse_define)]
    define: Vec<(String, Option<String>)>,
    /// The platform predefined macros announce (`__METAL_MACOS__` or `__METAL_IOS__`).
    #[arg(long, value_enum, default_value_t = super::PlatformArg::Macos)]
    platform: super::PlatformArg,
    /// How `half` is represented (as for `run`); on an adapter without
    /// `shader-f16`, f32 whatever this says.
    #[arg(long, value_enum, default_value_t = super::HalfArg::F16)]
    half: super::HalfArg,
    /// Print the adapter that drew (to stderr).
    #[arg(long)]
    adapter: bool,
    #[command(flatten)]
    report: super::report::ReportArgs,
}

/// `--primitive`: Metal's `MTLPrimitiveType`s that `render` draws.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(super) enum PrimitiveArg {
    /// `MTLPrimitiveTypeTriangle`: a triangle list.
    Triangle,
    /// `MTLPrimitiveTypePoint`: N points.
    Point,
}

/// `WxH`, both positive.
fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("`{s}` is not WxH (two positive integers)");
    let (w, h) = s.split_once('x').ok_or_else(bad)?;
    match (w.parse::<u32>(), h.parse::<u32>()) {
        (Ok(w), Ok(h)) if w > 0 && h > 0 => Ok((w, h)),
        _ => Err(bad()),
    }
}

/// `N=VALUE` of `--arg`: a position or name, and a non-empty value.
fn parse_effect_arg(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not N=VALUE"))?;
    if name.is_empty() || value.is_empty() {
        return Err(format!("`{s}` is not N=VALUE"));
    }
    Ok((name.to_string(), value.to_string()))
}

/// `K=B` of `--attribute`: an attribute index and a buffer index.
fn parse_attribute_buffer(s: &str) -> Result<(u32, u32), String> {
    let (attribute, buffer) = parse_index(s)?;
    let buffer = buffer
        .parse::<u32>()
        .map_err(|_| format!("`{buffer}` is not a buffer index (expected K=B)"))?;
    Ok((attribute, buffer))
}

/// `R,G,B,A`: four finite numbers.
fn parse_clear(s: &str) -> Result<[f64; 4], String> {
    let values: Vec<f64> = s
        .split(',')
        .map(|v| v.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("`{s}` is not R,G,B,A (four numbers)"))?;
    <[f64; 4]>::try_from(values).map_err(|_| format!("`{s}` is not R,G,B,A (four numbers)"))
}

/// `FORMAT` (every target) or `M=FORMAT` (attachment M).
fn parse_target_format(s: &str) -> Result<(Option<u32>, String), String> {
    if s.contains('=') {
        let (index, format) = parse_index(s)?;
        super::check_format_name(format)?;
        return Ok((Some(index), format.to_string()));
    }
    super::check_format_name(s)?;
    Ok((None, s.to_string()))
}

/// Where the image of attachment `index` goes: OUT itself for 0, else
/// OUT with `.index` before its extension.
#[cfg_attr(not(feature = "runner"), allow(dead_code))]
fn output_path(out: &Path, index: usize) -> PathBuf {
    if index == 0 {
        return out.to_path_buf();
    }
    let stem = out.file_stem().unwrap_or_default().to_string_lossy();
    let name = match out.extension() {
        Some(ext) => format!("{stem}.{index}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{index}"),
    };
    out.with_file_name(name)
}

#[cfg(not(feature = "runner"))]
pub(super) fn render(_: RenderArgs) -> u8 {
    error(FAILURE, Code::NotAvailable, super::NO_RUNNER)
}

#[cfg(feature = "runner")]
pub(super) use with_runner::render;

#[cfg(feature = "runner")]
mod render_effect;

#[cfg(feature = "runner")]
mod with_runner {
    use super::super::runner_commands::{
        check_indices, load_buffers, load_constants, load_textures, run_error,
    };
    use super::super::{compile, read_input, to_stderr, write_atomically, USAGE};
    use super::*;
    use msl2wgsl::reflect::{FunctionReflection, Stage};
    use msl2wgsl::runner::{self, Gpu, RenderResources, RenderTarget, RunError, TextureData};
    use msl2wgsl::{Library, Options, Target};

    pub(in super::super) fn render(args: RenderArgs) -> u8 {
        super::super::report::init(&args.report);
        if let Some(effect) = &args.effect {
            return super::render_effect::render_effect(&args, effect);
        }
        let (name, source) = match read_input(&args.file) {
            Ok(input) => input,
            Err(code) => return code,
        };
        let mut resources = match load_resources(&args) {
            Ok(resources) => resources,
            Err(code) => return code,
        };
        let wanted = args.half.into();
        let mut library = match compile(&name, &source, &options(&args, &resources, wanted)) {
            Ok(library) => library,
            Err(code) => return code,
        };
        let (_, fragment) = match functions(&library, &args) {
            Ok(pair) => pair,
            Err(e) => return run_error(e),
        };
        resources.targets = match targets(&args, fragment) {
            Ok(targets) => targets,
            Err(message) => return error(USAGE, Code::Usage, message),
        };
        let gpu = match Gpu::new() {
            Ok(gpu) => gpu,
            Err(e) => return run_error(e),
        };
        if args.adapter {
            to_stderr(&format!("adapter: {}\n", gpu.adapter_line()));
        }
        // Without `shader-f16`, `half` is `f32` (README "half"), as for `run`.
        let half = gpu.half_mode(wanted);
        if half != wanted {
            library = match compile(&name, &source, &options(&args, &resources, half)) {
                Ok(library) => library,
                Err(code) => return code,
            };
        }
        // Functions that need `--constant` values at translation (W0415)
        // are translated with them.
        let names: Vec<&str> = [&args.vertex, &args.fragment]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        let waiting = names
            .iter()
            .filter_map(|f| library.function(f))
            .any(|f| f.awaits_function_constants());
        if waiting {
            let options = options(&args, &resources, half);
            let values = &resources.constants;
            library = match runner::specialized_library(&name, &source, &options, &names, values) {
                Ok(library) => library,
                Err(e) => return run_error(e),
            };
        }
        let (vertex, fragment) = match functions(&library, &args) {
            Ok(pair) => pair,
            Err(e) => return run_error(e),
        };
        resources.vertex_descriptor = match vertex_descriptor(&args, vertex) {
            Ok(descriptor) => descriptor,
            Err(code) => return code,
        };
        if let Err(message) = check_given(&resources, vertex, fragment) {
            return error(FAILURE, Code::Usage, message);
        }
        match runner::render(&gpu, library.wgsl(), vertex, fragment, &resources) {
            Ok(images) => write_images(&args.output, &images),
            Err(e) => run_error(e),
        }
    }

    /// Translation options: only the two functions, for wgpu.
    fn options(
        args: &RenderArgs,
        resources: &RenderResources,
        half: msl2wgsl::library::HalfMode,
    ) -> Options {
        // The command's `--error-limit`.
        let mut options = Options {
            error_limit: super::super::report::error_limit(),
            ..Options::default()
        };
        options.preprocess.platform = args.platform.into();
        options.half = half;
        options.preprocess.defines = args.define.clone();
        options.preprocess.include_dirs = args.include.clone();
        options.entries = [&args.vertex, &args.fragment]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        options.target = Target::Wgpu;
        // As with `run`, a texture given decides what a storage texture holds.
        let mut formats = args.texture_format.clone();
        for (index, texture) in &resources.textures {
            if let Some(name) = runner::texture_format_name(texture.format) {
                if !formats.iter().any(|(i, _)| i == index) {
                    formats.push((*index, name.to_string()));
                }
            }
        }
        options.texture_formats = formats;
        options.binding_map = args.binding_map.clone().unwrap_or_default();
        options
    }

    /// Buffers, textures, size and counts (the targets come later: they
    /// depend on the fragment function).
    fn load_resources(args: &RenderArgs) -> Result<RenderResources, u8> {
        let (width, height) = args.size.unwrap_or_default();
        let count = args.vertex_count.unwrap_or_default();
        let mut resources = RenderResources::new(width, height, count);
        resources.instance_count = args.instance_count;
        resources.vertex_start = args.vertex_start;
        resources.base_instance = args.base_instance;
        resources.primitive = match args.primitive {
            PrimitiveArg::Triangle => runner::Primitive::Triangle,
            PrimitiveArg::Point => runner::Primitive::Point,
        };
        resources.vertex_buffers = load_buffers(&args.vertex_buffer, "--vertex-buffer")?;
        resources.fragment_buffers = load_buffers(&args.fragment_buffer, "--fragment-buffer")?;
        resources.textures = load_textures(&args.texture)?;
        resources.constants = load_constants(&args.constant)?;
        Ok(resources)
    }

    /// Every buffer and texture given must be an argument of its stage (a
    /// vertex buffer may instead be one the `[[stage_in]]` reads).
    fn check_given(
        resources: &RenderResources,
        vertex: &FunctionReflection,
        fragment: &FunctionReflection,
    ) -> Result<(), String> {
        use msl2wgsl::reflect::ArgumentKind::{Buffer, Texture};
        let stage_in: Vec<u32> = match (&resources.vertex_descriptor, &vertex.vertex_attributes) {
            (_, attributes) if attributes.is_empty() => Vec::new(),
            (Some(descriptor), _) => descriptor.strides.keys().copied().collect(),
            (None, _) => vec![0],
        };
        let vertex_buffers = resources.vertex_buffers.keys().copied();
        let fragment_buffers = resources.fragment_buffers.keys().copied();
        let textures = resources.textures.keys().copied();
        check_indices(
            "--vertex-buffer",
            vertex_buffers,
            Buffer,
            &[vertex],
            &stage_in,
        )?;
        check_indices(
            "--fragment-buffer",
            fragment_buffers,
            Buffer,
            &[fragment],
            &[],
        )?;
        check_indices("--texture", textures, Texture, &[vertex, fragment], &[])
    }

    /// The vertex descriptor `--attribute` asks for (`None` without one):
    /// each named attribute must be one of the vertex function's.
    fn vertex_descriptor(
        args: &RenderArgs,
        vertex: &FunctionReflection,
    ) -> Result<Option<runner::VertexDescriptor>, u8> {
        if args.attribute_buffer.is_empty() {
            return Ok(None);
        }
        let mut buffer_of = std::collections::BTreeMap::new();
        for &(attribute, buffer) in &args.attribute_buffer {
            if !vertex
                .vertex_attributes
                .iter()
                .any(|a| a.index == attribute)
            {
                let known: Vec<String> = vertex
                    .vertex_attributes
                    .iter()
                    .map(|a| a.index.to_string())
                    .collect();
                let message = match known.is_empty() {
                    true => format!(
                        "--attribute {attribute}={buffer}: `{}` has no [[stage_in]] attributes",
                        vertex.name
                    ),
                    false => format!(
                        "--attribute {attribute}={buffer}: `{}` has no [[attribute({attribute})]] \
                         (its attributes: {})",
                        vertex.name,
                        known.join(", ")
                    ),
                };
                return Err(error(USAGE, Code::Usage, message));
            }
            if buffer_of.insert(attribute, buffer).is_some() {
                let message = format!("--attribute {attribute} is given twice");
                return Err(error(USAGE, Code::Usage, message));
            }
        }
        runner::VertexDescriptor::packed(vertex, &buffer_of)
            .map(Some)
            .map_err(run_error)
    }

    /// The vertex and the fragment function, each of its stage.
    fn functions<'l>(
        library: &'l Library,
        args: &RenderArgs,
    ) -> Result<(&'l FunctionReflection, &'l FunctionReflection), RunError> {
        let name = |n: &Option<String>| n.clone().unwrap_or_default();
        let vertex = runner::stage_function(library, &name(&args.vertex), Stage::Vertex)?;
        let fragment = runner::stage_function(library, &name(&args.fragment), Stage::Fragment)?;
        Ok((vertex, fragment))
    }

    /// The fragment function's default targets with `--format` and
    /// `--clear` applied.
    fn targets(
        args: &RenderArgs,
        fragment: &FunctionReflection,
    ) -> Result<Vec<RenderTarget>, String> {
        let mut targets = RenderTarget::defaults_for(fragment);
        for (index, name) in &args.format {
            // The parser accepted only names the runner knows.
            let format = runner::texture_format(name).expect("a known format");
            match index {
                None => targets.iter_mut().for_each(|t| t.format = format),
                Some(m) => match targets.get_mut(*m as usize) {
                    Some(target) => target.format = format,
                    None => {
                        return Err(format!(
                            "--format {m}={name}: `{}` has no [[color({m})]]",
                            fragment.name
                        ))
                    }
                },
            }
        }
        if let Some(clear) = args.clear {
            targets.iter_mut().for_each(|t| t.clear = clear);
        }
        Ok(targets)
    }

    /// Saves every image, attachment 0 at `out`.
    pub(in super::super) fn write_images(out: &Path, images: &[TextureData]) -> u8 {
        for (index, image) in images.iter().enumerate() {
            let path = output_path(out, index);
            let written = image
                .to_png_bytes()
                .and_then(|png| write_atomically(&path, &png).map_err(|e| e.to_string()));
            if let Err(e) = written {
                return error(
                    FAILURE,
                    Code::Unwritable,
                    format!("cannot write '{}': {e}", path.display()),
                );
            }
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_parsers() {
        assert_eq!(parse_size("64x32"), Ok((64, 32)));
        assert!(parse_size("0x3").is_err() && parse_size("4").is_err());
        assert_eq!(parse_clear("0, 0.5,1,1"), Ok([0.0, 0.5, 1.0, 1.0]));
        assert!(parse_clear("1,2,3").is_err() && parse_clear("1,2,3,x").is_err());
        assert!(parse_clear("1,2,3,inf").is_err());
        assert_eq!(
            parse_target_format("1=rgba8uint"),
            Ok((Some(1), "rgba8uint".into()))
        );
        assert_eq!(
            parse_target_format("rgba16float"),
            Ok((None, "rgba16float".into()))
        );
        assert!(parse_target_format("").is_err() && parse_target_format("x=rgba8unorm").is_err());
    }

    #[test]
    fn attachment_paths() {
        let out = Path::new("dir/out.png");
        assert_eq!(output_path(out, 0), PathBuf::from("dir/out.png"));
        assert_eq!(output_path(out, 2), PathBuf::from("dir/out.2.png"));
        assert_eq!(output_path(Path::new("img"), 1), PathBuf::from("img.1"));
    }
}
