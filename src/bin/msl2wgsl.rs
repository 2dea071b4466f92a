//! The `msl2wgsl` command line (contract: `docs/CLI.md`): a thin shell
//! over the library and the runner.
//!
//! `reflect`, `run` and `test` are subcommands; anything else is the file to
//! translate. clap cannot express "a subcommand or a free file" without
//! stealing file names, so the first argument is looked at before clap runs
//! (a file literally named `run` is given as `./run`).
#![forbid(unsafe_code)]

use choices::{
    BackendArg, ByteStoresArg, HalfArg, PlatformArg, SimdArg, TargetArg, UniformLayoutArg,
};
use clap::{ArgGroup, Args, Parser};
use msl2wgsl::diagnostics::Code;
use msl2wgsl::reflect::{BindingMap, ReflectionDocument, SCHEMA_VERSION};
use msl2wgsl::stage_in::{StageInRegion, StageInputDescriptor};
use msl2wgsl::{Library, Options};
use std::ffi::OsString;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Translation allocates and frees many small AST and IR nodes: mimalloc
/// makes the large files (MLX's thousands of kernel instances) markedly
/// faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "msl2wgsl/choices.rs"]
mod choices;
#[path = "msl2wgsl/render.rs"]
mod render;
#[path = "msl2wgsl/report.rs"]
mod report;

/// Exit status: the input is invalid or untranslatable, or a run failed.
const FAILURE: u8 = 1;
/// Exit status: bad usage.
const USAGE: u8 = 2;

/// Translate Metal Shading Language to WGSL.
#[derive(Parser, Debug)]
#[command(
    name = "msl2wgsl",
    version,
    after_help = "Other commands:\n  \
        msl2wgsl reflect FILE [--entry NAME]...   JSON reflection of each function\n  \
        msl2wgsl run FILE --entry NAME ...        run a kernel on the GPU\n  \
        msl2wgsl render FILE --vertex V ...       draw with vertex/fragment functions to PNG\n  \
        msl2wgsl test DIR|CASE...                 run conformance cases\n\
        (`msl2wgsl COMMAND --help` for details; a file named like a command: `./run`)"
)]
struct TranslateArgs {
    /// The MSL file (`-` reads standard input); several with `--out-dir`.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    /// Write the WGSL here (only if translation fully succeeds) instead of stdout.
    #[arg(short = 'o', value_name = "OUT.wgsl", conflicts_with = "out_dir")]
    output: Option<PathBuf>,
    /// Translate every FILE into DIR/NAME.wgsl, going on past failures
    /// (each output only if its file fully translates).
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
    #[command(flatten)]
    compile: CompileArgs,
}

/// Options every translating command takes.
#[derive(Args, Debug)]
struct CompileArgs {
    /// Search DIR for `#include`.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Read FILE first, as if `#include "FILE"` began the input (also
    /// clang's spelling `-include FILE`; repeatable).
    #[arg(long = "include", value_name = "FILE")]
    forced_include: Vec<PathBuf>,
    /// Define a macro (VALUE defaults to 1).
    #[arg(short = 'D', value_name = "NAME[=VALUE]", value_parser = parse_define)]
    define: Vec<(String, Option<String>)>,
    /// Translate only this function (repeatable; default: all).
    #[arg(long, value_name = "NAME")]
    entry: Vec<String>,
    /// The `@workgroup_size` of kernels (default: the translator's documented default).
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims)]
    threadgroup_size: Option<[u32; 3]>,
    /// WGSL dialect.
    #[arg(long, value_enum, default_value_t = TargetArg::Webgpu)]
    target: TargetArg,
    /// Bytes of [[threadgroup(N)]] memory (fixed in the WGSL).
    #[arg(long, value_name = "N=BYTES", value_parser = parse_threadgroup_memory)]
    threadgroup_memory: Vec<(u32, u32)>,
    /// Texel format of the storage texture [[texture(N)]] (wgpu's name: rgba8unorm, r32float, ...).
    #[arg(long, value_name = "N=FORMAT", value_parser = parse_texture_format)]
    texture_format: Vec<(u32, String)>,
    /// Specialise the function constant NAME (or [[function_constant(INDEX)]])
    /// at translation: its value is fixed in the WGSL (VALUE read as its
    /// declared type: `true`, `-3`, `0x10`, `2.5`, `4,3` for a vector), so
    /// it may size arrays and label `case`s; `undefined` leaves it unset
    /// (`is_function_constant_defined` is false).
    #[arg(long, value_name = "NAME=VALUE|INDEX=VALUE", value_parser = parse_function_constant)]
    function_constant: Vec<(msl2wgsl::ConstantKey, msl2wgsl::ConstantValue)>,
    /// Bindings to use instead of the default scheme (JSON; see docs/REFLECTION.md).
    #[arg(long, value_name = "MAP.json", value_parser = parse_binding_map)]
    binding_map: Option<BindingMap>,
    /// Where kernels' [[stage_in]] attributes are read: a stage-input
    /// descriptor (JSON with Metal's names; see docs/CLI.md). Default: each
    /// kernel's attributes tightly packed in the first buffer its
    /// [[buffer(n)]] arguments leave free, one element per thread in x.
    #[arg(long, value_name = "DESC.json", value_parser = parse_stage_in)]
    stage_in: Option<StageInputDescriptor>,
    /// The platform predefined macros announce (`__METAL_MACOS__` or `__METAL_IOS__`).
    #[arg(long, value_enum, default_value_t = PlatformArg::Macos)]
    platform: PlatformArg,
    #[command(flatten)]
    report: report::ReportArgs,
    /// How `half` is represented: f32 (`f32` rounded to half precision
    /// wherever Metal rounds; needs no feature, so the WGSL runs on every
    /// adapter) or f16 (WGSL `f16`, needs the optional `shader-f16` feature,
    /// which lavapipe, GL and many browsers' adapters lack).
    #[arg(long, value_enum, default_value_t = HalfArg::F32)]
    half: HalfArg,
    /// Which `constant` buffer arguments become `var<uniform>`: wgsl (those
    /// whose Metal layout meets WGSL's uniform layout rules), standard
    /// (every fixed-size one, with `requires uniform_buffer_standard_layout;`:
    /// Chromium 144 and later; `--target webgpu` only) or none (all storage).
    #[arg(long, value_enum, default_value_t = UniformLayoutArg::Wgsl)]
    uniform_layout: UniformLayoutArg,
    /// How SIMD-group functions run: auto (Apple's 32-lane SIMD groups,
    /// emulated in threadgroup memory, except in a kernel that calls them in
    /// non-uniform control flow, which uses the adapter's subgroups with a
    /// warning), emulated32 (the emulation or an error) or native (the
    /// adapter's subgroups: Apple's results where they are 32 lanes wide).
    #[arg(long, value_enum, default_value_t = SimdArg::Auto)]
    simd: SimdArg,
    /// The target adapter's subgroup width, where it is one fixed width:
    /// with `--simd native` and 32, SIMD-group matrices are held per lane
    /// (two elements a thread, exchanged by subgroup shuffles) instead of
    /// whole by every thread (`run` takes it from the adapter).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=128))]
    subgroup_width: Option<u32>,
    /// How 8/16-bit buffer elements that neighbouring threads store are
    /// written: atomic (an atomic clear-and-set pair each), subgroups
    /// (whole words combined through quad operations where the store is one
    /// per thread at the thread position, falling back to the pair on the
    /// GPU; needs the `subgroups` feature) or auto (subgroups with `--simd
    /// native`, atomic otherwise).
    #[arg(long, value_enum, default_value_t = ByteStoresArg::Auto)]
    byte_stores: ByteStoresArg,
}

impl CompileArgs {
    fn options(&self) -> Options {
        let mut options = Options::default();
        options.preprocess.defines = self.define.clone();
        options.preprocess.include_dirs = self.include.clone();
        options.preprocess.forced_includes = self.forced_include.clone();
        options.entries = self.entry.clone();
        options.threadgroup_size = self.threadgroup_size;
        options.target = self.target.into();
        options.threadgroup_memory = self.threadgroup_memory.clone();
        options.texture_formats = self.texture_format.clone();
        options.function_constants =
            msl2wgsl::FunctionConstantValues(self.function_constant.clone());
        options.binding_map = self.binding_map.clone().unwrap_or_default();
        options.stage_in = self.stage_in.clone();
        options.half = self.half.into();
        options.uniform_layout = self.uniform_layout.into();
        options.simd = self.simd.into();
        options.subgroup_width = self.subgroup_width;
        options.byte_stores = self.byte_stores.into();
        options.preprocess.platform = self.platform.into();
        options.error_limit = self.report.error_limit();
        options
    }
}

/// Print, as JSON, what Metal's pipeline reflection would say about each function.
#[derive(Parser, Debug)]
#[command(name = "msl2wgsl reflect", bin_name = "msl2wgsl reflect")]
struct ReflectArgs {
    /// The MSL file (`-` reads standard input).
    file: String,
    #[command(flatten)]
    compile: CompileArgs,
}

/// Run a kernel on the GPU with Metal's dispatch semantics (or a vertex
/// function without a [[position]] output, for a draw).
#[derive(Parser, Debug)]
#[command(name = "msl2wgsl run", bin_name = "msl2wgsl run")]
#[command(group(ArgGroup::new("size").required(true).args(["grid", "threadgroups", "vertex_count"])))]
struct RunArgs {
    /// The MSL file.
    file: String,
    /// The kernel to run.
    #[arg(long, value_name = "NAME")]
    entry: String,
    /// dispatchThreads: the grid in threads (need not be a multiple of the threadgroup).
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims)]
    grid: Option<[u32; 3]>,
    /// dispatchThreadgroups: the grid in threadgroups.
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims)]
    threadgroups: Option<[u32; 3]>,
    /// A vertex function without a [[position]] output (rasterization
    /// disabled): the vertices its draw runs (vertexCount).
    #[arg(long, value_name = "N", conflicts_with_all = ["grid", "threadgroups", "threadgroup"])]
    vertex_count: Option<u32>,
    /// With --vertex-count: instances drawn (instanceCount).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "vertex_count")]
    instance_count: u32,
    /// With --vertex-count: the first vertex (vertexStart, [[base_vertex]]).
    #[arg(long, value_name = "N", default_value_t = 0, requires = "vertex_count")]
    vertex_start: u32,
    /// With --vertex-count: the first instance (baseInstance, [[base_instance]]).
    #[arg(long, value_name = "N", default_value_t = 0, requires = "vertex_count")]
    base_instance: u32,
    /// threadsPerThreadgroup (default: the kernel's default size).
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims)]
    threadgroup: Option<[u32; 3]>,
    /// Bind [[buffer(N)]] to a file's bytes, or to BYTES zero bytes.
    #[arg(long, value_name = "N=PATH|N=zeros:BYTES", value_parser = parse_buffer)]
    buffer: Vec<BufferArg>,
    /// Bind [[texture(N)]] to a PNG image (rgba8unorm), or to a zeroed WxH
    /// texture (FORMAT: wgpu's name, default rgba8unorm).
    #[arg(long, value_name = "N=PATH.png|N=empty:WxH[:FORMAT]", value_parser = parse_texture)]
    texture: Vec<TextureArg>,
    /// Texel format of the storage texture [[texture(N)]] in the WGSL
    /// (default: the format of the texture given with --texture N).
    #[arg(long, value_name = "N=FORMAT", value_parser = parse_texture_format)]
    texture_format: Vec<(u32, String)>,
    /// Bytes of [[threadgroup(N)]] memory (Metal's setThreadgroupMemoryLength).
    #[arg(long, value_name = "N=BYTES", value_parser = parse_threadgroup_memory)]
    threadgroup_memory: Vec<(u32, u32)>,
    /// The stage-in region (Metal's setStageInRegion): [[grid_origin]] and
    /// [[grid_size]], and the origin added to each thread's position before
    /// its [[stage_in]] is fetched (default: origin 0, the grid as size).
    #[arg(long, value_name = "X[,Y[,Z]]:W[,H[,D]]", value_parser = parse_stage_in_region)]
    stage_in_region: Option<StageInRegion>,
    /// After the run, write [[buffer(N)]]'s bytes to PATH.
    #[arg(long, value_name = "N=PATH", value_parser = parse_read)]
    read: Vec<(u32, PathBuf)>,
    /// Set [[function_constant(N)]] (a number; `true`/`false` for bool).
    #[arg(long, value_name = "N=VALUE", value_parser = parse_constant)]
    constant: Vec<(u32, f64)>,
    /// After the run, save the storage texture [[texture(N)]] (level 0) as PNG.
    #[arg(long, value_name = "N=PATH.png", value_parser = parse_read)]
    read_texture: Vec<(u32, PathBuf)>,
    /// Search DIR for `#include`.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Define a macro (VALUE defaults to 1).
    #[arg(short = 'D', value_name = "NAME[=VALUE]", value_parser = parse_define)]
    define: Vec<(String, Option<String>)>,
    /// Bindings to use instead of the default scheme (JSON; see docs/REFLECTION.md).
    #[arg(long, value_name = "MAP.json", value_parser = parse_binding_map)]
    binding_map: Option<BindingMap>,
    /// Where kernels' [[stage_in]] attributes are read: a stage-input
    /// descriptor (JSON with Metal's names; see docs/CLI.md). Default: each
    /// kernel's attributes tightly packed in the first buffer its
    /// [[buffer(n)]] arguments leave free, one element per thread in x.
    #[arg(long, value_name = "DESC.json", value_parser = parse_stage_in)]
    stage_in: Option<StageInputDescriptor>,
    /// WGSL dialect (the kernel runs on wgpu, so its extensions are the default).
    #[arg(long, value_enum, default_value_t = TargetArg::Wgpu)]
    target: TargetArg,
    /// How `half` is represented (as for `translate`); on an adapter without
    /// `shader-f16`, f32 whatever this says.
    #[arg(long, value_enum, default_value_t = HalfArg::F16)]
    half: HalfArg,
    /// The platform predefined macros announce (`__METAL_MACOS__` or `__METAL_IOS__`).
    #[arg(long, value_enum, default_value_t = PlatformArg::Macos)]
    platform: PlatformArg,
    /// The backend to run on (default: `WGPU_BACKEND`, else wgpu's choice
    /// among Vulkan, Metal and DX12, then GL).
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    /// Print the adapter that ran the kernel, with its backend (to stderr).
    #[arg(long, visible_alias = "verbose")]
    adapter: bool,
    #[command(flatten)]
    report: report::ReportArgs,
}

/// Run conformance cases (TOML case files) and print a table.
#[derive(Parser, Debug)]
#[command(name = "msl2wgsl test", bin_name = "msl2wgsl test")]
struct TestArgs {
    /// Case files, or folders holding them (every *.toml below).
    #[arg(required = true, value_name = "DIR|CASE")]
    paths: Vec<PathBuf>,
    /// Run them in headless Chromium's WebGPU (node and
    /// web/conformance/run.mjs) instead of on wgpu.
    #[arg(long)]
    browser: bool,
    /// The backend to run on (default: `WGPU_BACKEND`, else wgpu's choice
    /// among Vulkan, Metal and DX12, then GL); not with --browser.
    #[arg(long, value_enum, conflicts_with = "browser")]
    backend: Option<BackendArg>,
    /// Print the adapter that ran the cases, with its backend (to stderr).
    #[arg(long, visible_alias = "verbose")]
    adapter: bool,
}

/// Where a `--buffer` gets its bytes.
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "runner"), allow(dead_code))]
struct BufferArg {
    index: u32,
    source: BufferSource,
}

#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "runner"), allow(dead_code))]
enum BufferSource {
    File(PathBuf),
    Zeros(usize),
}

/// Where a `--texture` gets its texels.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "runner"), allow(dead_code))]
struct TextureArg {
    index: u32,
    source: TextureSource,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "runner"), allow(dead_code))]
enum TextureSource {
    Png(PathBuf),
    Empty {
        width: u32,
        height: u32,
        format: String,
    },
}

fn parse_dims(s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err("expected X[,Y[,Z]]".into());
    }
    let mut dims = [1u32; 3];
    for (d, part) in parts.iter().enumerate() {
        dims[d] = part
            .trim()
            .parse()
            .map_err(|_| format!("`{part}` is not a non-negative integer"))?;
    }
    Ok(dims)
}

fn parse_define(s: &str) -> Result<(String, Option<String>), String> {
    let (name, value) = match s.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (s, None),
    };
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!("`{name}` is not a macro name"));
    }
    Ok((name.to_string(), value))
}

fn parse_index(s: &str) -> Result<(u32, &str), String> {
    let (n, rest) = s.split_once('=').ok_or("expected N=...")?;
    let n = n.parse().map_err(|_| format!("`{n}` is not an index"))?;
    Ok((n, rest))
}

fn parse_buffer(s: &str) -> Result<BufferArg, String> {
    let (index, rest) = parse_index(s)?;
    let source = match rest.strip_prefix("zeros:") {
        Some(bytes) => BufferSource::Zeros(
            bytes
                .parse()
                .map_err(|_| format!("`{bytes}` is not a byte count"))?,
        ),
        None if rest.is_empty() => return Err("expected N=PATH or N=zeros:BYTES".into()),
        None => BufferSource::File(rest.into()),
    };
    Ok(BufferArg { index, source })
}

/// `N=PATH.png` or `N=empty:WxH[:FORMAT]`.
fn parse_texture(s: &str) -> Result<TextureArg, String> {
    let (index, rest) = parse_index(s)?;
    let Some(empty) = rest.strip_prefix("empty:") else {
        if rest.is_empty() {
            return Err("expected N=PATH.png or N=empty:WxH[:FORMAT]".into());
        }
        return Ok(TextureArg {
            index,
            source: TextureSource::Png(rest.into()),
        });
    };
    let (size, format) = empty.split_once(':').unwrap_or((empty, "rgba8unorm"));
    let bad_size = || format!("`{size}` is not WxH (two positive integers)");
    let (w, h) = size.split_once('x').ok_or_else(bad_size)?;
    let (width, height) = match (w.parse::<u32>(), h.parse::<u32>()) {
        (Ok(w), Ok(h)) if w > 0 && h > 0 => (w, h),
        _ => return Err(bad_size()),
    };
    check_format_name(format)?;
    Ok(TextureArg {
        index,
        source: TextureSource::Empty {
            width,
            height,
            format: format.to_string(),
        },
    })
}

/// `N=FORMAT`.
fn parse_texture_format(s: &str) -> Result<(u32, String), String> {
    let (index, format) = parse_index(s)?;
    check_format_name(format)?;
    Ok((index, format.to_string()))
}

/// A texel format name as wgpu spells it; with the runner, one it knows.
fn check_format_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("expected a texel format (rgba8unorm, r32float, ...)".into());
    }
    #[cfg(feature = "runner")]
    if msl2wgsl::runner::texture_format(name).is_none() {
        return Err(format!(
            "`{name}` is not a texel format wgpu names (rgba8unorm, r32float, rgba16float, ...)"
        ));
    }
    Ok(())
}

/// Reads and parses a `--stage-in` file.
fn parse_stage_in(path: &str) -> Result<StageInputDescriptor, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
    StageInputDescriptor::from_json(&text)
        .map_err(|e| format!("'{path}' is not a stage-input descriptor: {e}"))
}

/// `--stage-in-region X,Y,Z:W,H,D`: the origin, then the size.
fn parse_stage_in_region(s: &str) -> Result<StageInRegion, String> {
    let (origin, size) = s
        .split_once(':')
        .ok_or_else(|| format!("expected ORIGIN:SIZE (`0,0:64,4`), found `{s}`"))?;
    let size = parse_dims(size)?;
    let mut origin = parse_dims(origin)?;
    // A missing origin dimension is 0, not parse_dims' 1.
    let given = s.split_once(':').map_or(0, |(o, _)| o.split(',').count());
    for d in origin.iter_mut().skip(given) {
        *d = 0;
    }
    Ok(StageInRegion { origin, size })
}

/// Reads and parses a `--binding-map` file.
fn parse_binding_map(path: &str) -> Result<BindingMap, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
    BindingMap::from_json(&text).map_err(|e| format!("'{path}' is not a binding map: {e}"))
}

fn parse_threadgroup_memory(s: &str) -> Result<(u32, u32), String> {
    let (index, bytes) = parse_index(s)?;
    let bytes: u32 = bytes
        .parse()
        .map_err(|_| format!("expected N=BYTES, found `{s}`"))?;
    Ok((index, bytes))
}

fn parse_constant(s: &str) -> Result<(u32, f64), String> {
    let (index, value) = parse_index(s)?;
    let value = match value {
        "true" => 1.0,
        "false" => 0.0,
        v => v
            .parse()
            .map_err(|_| format!("expected N=VALUE (a number, `true` or `false`), found `{s}`"))?,
    };
    Ok((index, value))
}

/// `NAME=VALUE` or `INDEX=VALUE`; the value is read as the constant's
/// declared type when the source is translated (bad values are located
/// errors there, E0337).
fn parse_function_constant(
    s: &str,
) -> Result<(msl2wgsl::ConstantKey, msl2wgsl::ConstantValue), String> {
    use msl2wgsl::{ConstantKey, ConstantValue};
    let (key, value) = s
        .split_once('=')
        .ok_or("expected NAME=VALUE or INDEX=VALUE")?;
    let key = match key.parse::<u16>() {
        Ok(n) => ConstantKey::Index(n),
        Err(_) if parse_define(key).is_ok() => ConstantKey::Name(key.to_string()),
        Err(_) => {
            return Err(format!(
                "`{key}` is neither a function constant's name nor an index from 0 to 65535"
            ))
        }
    };
    let value = match value.trim() {
        "" => return Err(format!("expected a value after `{key}=`")),
        "undefined" => ConstantValue::Undefined,
        v => ConstantValue::Text(v.to_string()),
    };
    Ok((key, value))
}

fn parse_read(s: &str) -> Result<(u32, PathBuf), String> {
    let (index, path) = parse_index(s)?;
    if path.is_empty() {
        return Err("expected N=PATH".into());
    }
    Ok((index, path.into()))
}

fn main() -> ExitCode {
    // wgpu logs plenty at `warn` on some drivers; RUST_LOG shows more.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("error")).init();
    let args = clang_spellings(std::env::args_os());
    let rest = || args.iter().skip(2).cloned();
    let code = match args.get(1).and_then(|a| a.to_str()) {
        Some("reflect") => reflect(parse_sub("msl2wgsl reflect", rest())),
        Some("run") => run(parse_sub("msl2wgsl run", rest())),
        Some("test") => test(parse_sub("msl2wgsl test", rest())),
        Some("render") => render::render(parse_sub("msl2wgsl render", rest())),
        _ => translate(parse_or_exit(args.iter().cloned())),
    };
    ExitCode::from(code)
}

/// Rewrites clang's `-include FILE` as `--include FILE` (clap has no
/// single-dash long options); nothing after `--` is touched.
fn clang_spellings(args: impl Iterator<Item = OsString>) -> Vec<OsString> {
    let mut options = true;
    args.map(|a| {
        options &= a != "--";
        match options && a == "-include" {
            true => OsString::from("--include"),
            false => a,
        }
    })
    .collect()
}

/// Parses a subcommand's arguments; clap exits with 2 on bad usage.
fn parse_sub<T: Parser>(name: &str, rest: impl Iterator<Item = OsString>) -> T {
    parse_or_exit(std::iter::once(OsString::from(name)).chain(rest))
}

/// Parses `args` (the program name first). A usage error exits with 2,
/// written as clap writes it or, when the arguments ask for
/// `--error-format json`, as one JSON diagnostic (code `E0007`), so that a
/// tool reading JSON gets JSON whatever went wrong. Help and version go to
/// stdout as usual.
fn parse_or_exit<T: Parser>(args: impl Iterator<Item = OsString>) -> T {
    let args: Vec<OsString> = args.collect();
    match T::try_parse_from(&args) {
        Ok(parsed) => parsed,
        Err(e) if e.use_stderr() && report::json_requested(&args) => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            let message = first.strip_prefix("error: ").unwrap_or(first);
            to_stderr(&report::json_error(message, Code::Usage));
            std::process::exit(USAGE.into())
        }
        Err(e) => e.exit(),
    }
}

/// `msl2wgsl: error: ...` on stderr (with `--error-format json`, a JSON
/// object with diagnostic code `code`); returns exit status `status`.
fn error(status: u8, code: Code, message: impl std::fmt::Display) -> u8 {
    if report::is_json() {
        to_stderr(&report::json_error(&message.to_string(), code));
    } else {
        to_stderr(&format!("msl2wgsl: error: {message}\n"));
    }
    status
}

/// Writes to stderr; a closed stderr is ignored (`eprint!` would panic).
fn to_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Writes the command's result to stdout and returns the exit status. A
/// reader that stopped early (`| head`) is not an error; `print!` would
/// panic on it.
fn to_stdout(text: &str) -> u8 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => error(
            FAILURE,
            Code::Unwritable,
            format!("cannot write to standard output: {e}"),
        ),
    }
}

/// Reads the input: a file, or standard input for `-`. Returns the name
/// diagnostics use and the text.
fn read_input(file: &str) -> Result<(String, String), u8> {
    let (name, bytes) = if file == "-" {
        let mut bytes = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
            return Err(error(
                FAILURE,
                Code::Unreadable,
                format!("cannot read standard input: {e}"),
            ));
        }
        ("<stdin>".to_string(), bytes)
    } else {
        match std::fs::read(file) {
            Ok(bytes) => (file.to_string(), bytes),
            Err(e) if report::is_json() => {
                let code = msl2wgsl::diagnostics::Code::Unreadable;
                to_stderr(&report::json_error(
                    &format!("cannot read '{file}': {e}"),
                    code,
                ));
                return Err(FAILURE);
            }
            Err(e) => {
                return Err(error(
                    FAILURE,
                    Code::Unreadable,
                    format!("cannot read '{file}': {e}"),
                ))
            }
        }
    };
    match msl2wgsl::decode_source(&name, bytes) {
        Ok(text) => Ok((name, text)),
        Err(failure) => Err(report::failure(&failure)),
    }
}

/// Translates, printing diagnostics and warnings to stderr.
fn compile(name: &str, source: &str, options: &Options) -> Result<Library, u8> {
    match Library::from_source(name, source, options) {
        Ok(library) => {
            report::warnings(library.warning_diagnostics(), library.source_map())?;
            Ok(library)
        }
        Err(failure) => Err(report::failure(&failure)),
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder and
/// a rename, so `path` is never left half-written.
///
/// Only a regular file (or a new one) is replaced: a rename over a symbolic
/// link, a FIFO or `-o /dev/null` would put a regular file in its place (as
/// root, for every later reader of `/dev/null`), so those are written through.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|meta| !meta.is_file()) {
        return std::fs::write(path, bytes);
    }
    let file_name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn translate(args: TranslateArgs) -> u8 {
    report::init(&args.compile.report);
    if let Some(dir) = &args.out_dir {
        return translate_batch(&args, dir);
    }
    let [file] = args.files.as_slice() else {
        return error(
            USAGE,
            Code::Usage,
            "several input files need `--out-dir DIR` (one WGSL file each)",
        );
    };
    let (name, source) = match read_input(file) {
        Ok(input) => input,
        Err(code) => return code,
    };
    let library = match compile(&name, &source, &args.compile.options()) {
        Ok(library) => library,
        Err(code) => return code,
    };
    match &args.output {
        Some(out) => match write_atomically(out, library.wgsl().as_bytes()) {
            Ok(()) => 0,
            Err(e) => error(
                FAILURE,
                Code::Unwritable,
                format!("cannot write '{}': {e}", out.display()),
            ),
        },
        None => to_stdout(library.wgsl()),
    }
}

/// `--out-dir`: each file to `DIR/STEM.wgsl`; a failure is reported and
/// the others still translate. Exit 1 if any failed.
fn translate_batch(args: &TranslateArgs, dir: &Path) -> u8 {
    let mut outputs = Vec::new();
    for file in &args.files {
        let stem = Path::new(file).file_stem().filter(|_| file != "-");
        let Some(stem) = stem else {
            return error(
                USAGE,
                Code::Usage,
                format!("`--out-dir` needs named files, not `{file}`"),
            );
        };
        let out = dir.join(stem).with_extension("wgsl");
        if outputs.contains(&out) {
            return error(
                USAGE,
                Code::Usage,
                format!("two inputs would both write '{}'", out.display()),
            );
        }
        outputs.push(out);
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        return error(
            FAILURE,
            Code::Unwritable,
            format!("cannot create '{}': {e}", dir.display()),
        );
    }
    let options = args.compile.options();
    let mut failed = 0;
    for (file, out) in args.files.iter().zip(&outputs) {
        let written = read_input(file)
            .and_then(|(name, source)| compile(&name, &source, &options))
            .and_then(|library| {
                write_atomically(out, library.wgsl().as_bytes()).map_err(|e| {
                    error(
                        FAILURE,
                        Code::Unwritable,
                        format!("cannot write '{}': {e}", out.display()),
                    )
                })
            });
        failed += usize::from(written.is_err());
    }
    if failed > 0 {
        let total = args.files.len();
        to_stderr(&format!(
            "msl2wgsl: {failed} of {total} files failed; the other {} were written\n",
            total - failed
        ));
        return FAILURE;
    }
    0
}

fn reflect(args: ReflectArgs) -> u8 {
    report::init(&args.compile.report);
    let (name, source) = match read_input(&args.file) {
        Ok(input) => input,
        Err(code) => return code,
    };
    let library = match compile(&name, &source, &args.compile.options()) {
        Ok(library) => library,
        Err(code) => return code,
    };
    let document = ReflectionDocument {
        schema_version: SCHEMA_VERSION,
        functions: library.functions().iter().collect(),
    };
    match serde_json::to_string_pretty(&document) {
        Ok(json) => to_stdout(&format!("{json}\n")),
        Err(e) => error(FAILURE, Code::Internal, format!("cannot write JSON: {e}")),
    }
}

#[cfg(not(feature = "runner"))]
const NO_RUNNER: &str = "this msl2wgsl was built without the GPU runner (feature `runner`)";

#[cfg(not(feature = "runner"))]
fn run(_: RunArgs) -> u8 {
    error(FAILURE, Code::NotAvailable, NO_RUNNER)
}

#[cfg(not(feature = "runner"))]
fn test(_: TestArgs) -> u8 {
    error(FAILURE, Code::NotAvailable, NO_RUNNER)
}

#[cfg(feature = "runner")]
use runner_commands::{run, test};

/// `run` and `test`, which need the GPU runner.
#[cfg(feature = "runner")]
#[path = "msl2wgsl/runner_commands.rs"]
mod runner_commands;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_parsers() {
        assert_eq!(parse_dims("64"), Ok([64, 1, 1]));
        assert_eq!(parse_dims("8,4"), Ok([8, 4, 1]));
        assert_eq!(parse_dims("2, 3, 4"), Ok([2, 3, 4]));
        assert!(
            parse_dims("1,2,3,4").is_err() && parse_dims("").is_err() && parse_dims("-1").is_err()
        );
        assert_eq!(parse_define("N=4"), Ok(("N".into(), Some("4".into()))));
        assert_eq!(parse_define("_FAST"), Ok(("_FAST".into(), None)));
        assert_eq!(parse_define("E="), Ok(("E".into(), Some(String::new()))));
        assert!(parse_define("1N").is_err() && parse_define("=1").is_err());
        assert!(matches!(
            parse_buffer("3=zeros:16"),
            Ok(BufferArg {
                index: 3,
                source: BufferSource::Zeros(16)
            })
        ));
        assert!(matches!(
            parse_buffer("0=data/in.bin"),
            Ok(BufferArg {
                index: 0,
                source: BufferSource::File(_)
            })
        ));
        assert!(parse_buffer("0=").is_err() && parse_buffer("a=x").is_err());
        assert_eq!(parse_read("1=out.bin"), Ok((1, PathBuf::from("out.bin"))));
    }

    #[test]
    fn texture_parsers() {
        let empty = |width, height, format: &str| TextureSource::Empty {
            width,
            height,
            format: format.into(),
        };
        let parsed = |s| parse_texture(s).map(|t| (t.index, t.source));
        assert_eq!(parsed("2=empty:4x3"), Ok((2, empty(4, 3, "rgba8unorm"))));
        assert_eq!(
            parsed("0=empty:1x1:r32float"),
            Ok((0, empty(1, 1, "r32float")))
        );
        assert_eq!(
            parsed("1=in.png"),
            Ok((1, TextureSource::Png("in.png".into())))
        );
        // Bad forms are exercised through the binary in tests/cli.rs.
        assert!(parse_texture("1=empty:0x2").is_err() && parse_texture("1=").is_err());
        assert_eq!(
            parse_texture_format("3=rgba16float"),
            Ok((3, "rgba16float".into()))
        );
        assert!(parse_texture_format("3=").is_err() && parse_texture_format("r32float").is_err());
        #[cfg(feature = "runner")]
        assert!(parse_texture("1=empty:2x2:rgba9unorm").is_err());
    }

    #[test]
    fn atomic_write_replaces_whole_files() {
        let dir = std::env::temp_dir().join(format!("msl2wgsl-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.wgsl");
        std::fs::write(&path, "old").unwrap();
        write_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert!(write_atomically(&dir.join("missing/out.wgsl"), b"x").is_err());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
