//! `msl2wgsl run` and `msl2wgsl test`, which need the GPU runner; also the
//! resource loading `render` shares.

use super::*;
use msl2wgsl::reflect::{Access, ArgumentKind, FunctionReflection, TextureBinding};
use msl2wgsl::runner::{
    self, Dispatch, Gpu, Outputs, Resources, RunError, TextureData, Translation,
};
use std::collections::BTreeMap;

/// The GPU on `--backend`'s backends, else the one `WGPU_BACKEND` (or
/// wgpu's preference) picks.
pub(super) fn new_gpu(backend: Option<BackendArg>) -> Result<Gpu, RunError> {
    match backend {
        Some(backend) => Gpu::with_backends(backend.into()),
        None => Gpu::new(),
    }
}

/// Reports a runner error: translation failures as diagnostics.
pub(super) fn run_error(e: RunError) -> u8 {
    match e {
        RunError::Translate(failure) => super::report::failure(&failure),
        other => error(FAILURE, Code::RunFailed, other),
    }
}

/// The bytes of `flag` (`--buffer`, ...) by Metal index.
pub(super) fn load_buffers(args: &[BufferArg], flag: &str) -> Result<BTreeMap<u32, Vec<u8>>, u8> {
    let mut buffers = BTreeMap::new();
    for arg in args {
        let bytes = match &arg.source {
            BufferSource::Zeros(n) => vec![0; *n],
            BufferSource::File(path) => std::fs::read(path).map_err(|e| {
                error(
                    FAILURE,
                    Code::Unreadable,
                    format!("cannot read '{}': {e}", path.display()),
                )
            })?,
        };
        if buffers.insert(arg.index, bytes).is_some() {
            return Err(error(
                USAGE,
                Code::Usage,
                format!("{flag} {} is given twice", arg.index),
            ));
        }
    }
    Ok(buffers)
}

/// Translates for the requested threadgroup size, or first with none to
/// learn the kernel's default size.
fn translate_for_run(
    args: &RunArgs,
    name: &str,
    source: &str,
    texture_formats: Vec<(u32, String)>,
    half: msl2wgsl::library::HalfMode,
) -> Result<Translation, RunError> {
    // The command's `--error-limit`.
    let mut options = Options {
        error_limit: super::report::error_limit(),
        ..Options::default()
    };
    options.preprocess.defines = args.define.clone();
    options.preprocess.include_dirs = args.include.clone();
    options.preprocess.platform = args.platform.into();
    options.entries = vec![args.entry.clone()];
    options.target = args.target.into();
    options.threadgroup_memory = args.threadgroup_memory.clone();
    options.binding_map = args.binding_map.clone().unwrap_or_default();
    options.stage_in = args.stage_in.clone();
    options.half = half;
    options.texture_formats = texture_formats;
    // `--constant` values the kernel needs at translation specialise it.
    let values = load_constants(&args.constant).unwrap_or_default();
    let translate = |options: &Options| {
        runner::translate_kernel_specialized(name, source, options, &args.entry, &values)
    };
    let default = translate(&options)?;
    match args.threadgroup {
        Some(size) if Some(size) != default.function.workgroup_size => {
            options.threadgroup_size = Some(size);
            translate(&options)
        }
        _ => Ok(default),
    }
}

/// The `--texture` contents by Metal index.
pub(super) fn load_textures(args: &[TextureArg]) -> Result<BTreeMap<u32, TextureData>, u8> {
    let mut textures = BTreeMap::new();
    for arg in args {
        let texture = match &arg.source {
            TextureSource::Png(path) => {
                TextureData::from_png(path).map_err(|e| error(FAILURE, Code::Unreadable, e))?
            }
            TextureSource::Empty {
                width,
                height,
                format,
            } => {
                // The parser accepted only names the runner knows.
                let format = runner::texture_format(format).expect("a known format");
                TextureData::empty(*width, *height, format)
            }
        };
        if textures.insert(arg.index, texture).is_some() {
            return Err(error(
                USAGE,
                Code::Usage,
                format!("--texture {} is given twice", arg.index),
            ));
        }
    }
    Ok(textures)
}

/// Every `--buffer` and `--texture`.
fn load_resources(args: &RunArgs) -> Result<Resources, u8> {
    Ok(Resources {
        buffers: load_buffers(&args.buffer, "--buffer")?,
        textures: load_textures(&args.texture)?,
        samplers: BTreeMap::new(),
        constants: load_constants(&args.constant)?,
        // The command line has no way yet to give argument buffers' members.
        argument_buffers: BTreeMap::new(),
        stage_in_region: args.stage_in_region,
    })
}

/// Every `--constant`, by function constant index.
pub(super) fn load_constants(args: &[(u32, f64)]) -> Result<BTreeMap<u32, f64>, u8> {
    let mut constants = BTreeMap::new();
    for (index, value) in args {
        if constants.insert(*index, *value).is_some() {
            return Err(error(
                USAGE,
                Code::Usage,
                format!("--constant {index} is given twice"),
            ));
        }
    }
    Ok(constants)
}

/// `--texture-format`, and for every other texture given, its format:
/// as in Metal, the texture decides what a storage texture holds.
fn texture_formats(args: &RunArgs, textures: &BTreeMap<u32, TextureData>) -> Vec<(u32, String)> {
    let mut formats = args.texture_format.clone();
    for (index, texture) in textures {
        if formats.iter().any(|(i, _)| i == index) {
            continue;
        }
        if let Some(name) = runner::texture_format_name(texture.format) {
            formats.push((*index, name.to_string()));
        }
    }
    formats
}

/// Every `--read` must name a buffer argument given bytes, every
/// `--read-texture` a writable storage texture given a texture.
fn check_reads(
    args: &RunArgs,
    function: &FunctionReflection,
    resources: &Resources,
) -> Result<(), String> {
    let find = |index: u32, kind: ArgumentKind| {
        let mut args = function.arguments.iter();
        args.find(|a| a.index == index && a.kind == kind)
    };
    let entry = &args.entry;
    for (index, _) in &args.read {
        if find(*index, ArgumentKind::Buffer).is_none() {
            return Err(format!(
                "--read {index}: `{entry}` has no [[buffer({index})]]"
            ));
        }
        if !resources.buffers.contains_key(index) {
            return Err(format!(
                "--read {index}: give the buffer with --buffer {index}=..."
            ));
        }
    }
    for (index, _) in &args.read_texture {
        let writable = find(*index, ArgumentKind::Texture).is_some_and(|a| {
            let storage = a.texture.as_ref().map(|t| t.binding_kind);
            a.access != Access::Read
                && matches!(
                    storage,
                    Some(TextureBinding::Storage | TextureBinding::Buffer)
                )
        });
        if !writable {
            return Err(format!(
                "--read-texture {index}: `{entry}` has no writable [[texture({index})]]"
            ));
        }
        if !resources.textures.contains_key(index) {
            return Err(format!(
                "--read-texture {index}: give the texture with --texture {index}=..."
            ));
        }
    }
    Ok(())
}

/// Every index given to `flag` (`--buffer`, `--texture`, ...) must be an
/// argument of `kind` of one of `functions`, or one of `also` (the vertex
/// buffers a `[[stage_in]]` reads): a typo would otherwise leave the real
/// argument unset, or be silently unused. The error is located at the
/// flag and names the indices there are, the nearest first.
pub(super) fn check_indices(
    flag: &str,
    given: impl IntoIterator<Item = u32>,
    kind: ArgumentKind,
    functions: &[&FunctionReflection],
    also: &[u32],
) -> Result<(), String> {
    let mut known: Vec<u32> = functions
        .iter()
        .flat_map(|f| f.arguments.iter())
        .filter(|a| a.kind == kind)
        .map(|a| a.index)
        .chain(also.iter().copied())
        .collect();
    known.sort_unstable();
    known.dedup();
    let attribute = match kind {
        ArgumentKind::Texture => "texture",
        ArgumentKind::Sampler => "sampler",
        ArgumentKind::ThreadgroupMemory => "threadgroup",
        ArgumentKind::Buffer => "buffer",
    };
    let names: Vec<String> = functions.iter().map(|f| format!("`{}`", f.name)).collect();
    let names = names.join(" or ");
    for index in given {
        if known.contains(&index) {
            continue;
        }
        let Some(&nearest) = known.iter().min_by_key(|k| k.abs_diff(index)) else {
            return Err(format!(
                "{flag} {index}: {names} has no [[{attribute}(n)]] arguments"
            ));
        };
        let listed: Vec<String> = known
            .iter()
            .map(|k| format!("[[{attribute}({k})]]"))
            .collect();
        return Err(format!(
            "{flag} {index}: {names} has no [[{attribute}({index})]] argument; it has {} (did \
             you mean {flag} {nearest}?)",
            listed.join(", ")
        ));
    }
    Ok(())
}

/// Writes `--read` buffers and `--read-texture` PNGs.
fn write_outputs(args: &RunArgs, outputs: &Outputs) -> u8 {
    for (index, path) in &args.read {
        let bytes = outputs.buffers.get(index).map_or(&[][..], |b| &b[..]);
        if let Err(e) = write_atomically(path, bytes) {
            return error(
                FAILURE,
                Code::Unwritable,
                format!("cannot write '{}': {e}", path.display()),
            );
        }
    }
    for (index, path) in &args.read_texture {
        let Some(texture) = outputs.textures.get(index) else {
            return error(
                FAILURE,
                Code::RunFailed,
                format!("texture {index} was not read back"),
            );
        };
        let written = texture
            .to_png_bytes()
            .and_then(|png| write_atomically(path, &png).map_err(|e| e.to_string()));
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

pub(super) fn run(args: RunArgs) -> u8 {
    super::report::init(&args.report);
    let (name, source) = match read_input(&args.file) {
        Ok(input) => input,
        Err(code) => return code,
    };
    let resources = match load_resources(&args) {
        Ok(resources) => resources,
        Err(code) => return code,
    };
    let formats = texture_formats(&args, &resources.textures);
    // Translated before the GPU is looked for, so that errors in the
    // source come first (and without a GPU).
    let wanted = args.half.into();
    let translation = match translate_for_run(&args, &name, &source, formats.clone(), wanted) {
        Ok(t) => t,
        Err(e) => return run_error(e),
    };
    let map = &translation.source_map;
    if let Err(code) = super::report::warnings(&translation.warning_diagnostics, map) {
        return code;
    }
    let function = &translation.function;
    let Some(threadgroup) = function.workgroup_size else {
        return run_error(RunError::NotAKernel(args.entry.clone()));
    };
    let vertex_draw = function.vertex_dispatch.is_some();
    let dispatch = match (args.grid, args.threadgroups, args.vertex_count) {
        (_, _, Some(_)) if !vertex_draw => {
            let msg = format!(
                "--vertex-count draws a vertex function without a [[position]] output; `{}` is a kernel: give --grid or --threadgroups",
                args.entry
            );
            return error(USAGE, Code::Usage, msg);
        }
        (_, _, None) if vertex_draw => {
            let msg = format!(
                "`{}` is a vertex function without a [[position]] output, run for a draw: give --vertex-count (and --instance-count, --vertex-start, --base-instance)",
                args.entry
            );
            return error(USAGE, Code::Usage, msg);
        }
        (_, _, Some(vertex_count)) => Dispatch::Threads {
            grid: [vertex_count, args.instance_count, 1],
            threadgroup,
        },
        (Some(grid), _, None) => Dispatch::Threads { grid, threadgroup },
        (None, Some(groups), None) => Dispatch::Threadgroups {
            groups,
            threadgroup,
        },
        (None, None, None) => return error(USAGE, Code::Usage, "give --grid or --threadgroups"),
    };
    let given = check_reads(&args, function, &resources)
        .and_then(|()| {
            let buffers = resources.buffers.keys().copied();
            check_indices("--buffer", buffers, ArgumentKind::Buffer, &[function], &[])
        })
        .and_then(|()| {
            let textures = resources.textures.keys().copied();
            check_indices(
                "--texture",
                textures,
                ArgumentKind::Texture,
                &[function],
                &[],
            )
        });
    if let Err(message) = given {
        return error(FAILURE, Code::Usage, message);
    }
    let gpu = match new_gpu(args.backend) {
        Ok(gpu) => gpu,
        Err(e) => return run_error(e),
    };
    if args.adapter {
        to_stderr(&format!("adapter: {}\n", gpu.adapter_line()));
    }
    // Without `shader-f16`, `half` is `f32` (README "half"), as in the
    // library's pipelines.
    let translation = match gpu.half_mode(wanted) == wanted {
        true => translation,
        false => match translate_for_run(&args, &name, &source, formats, gpu.half_mode(wanted)) {
            Ok(t) => t,
            Err(e) => return run_error(e),
        },
    };
    let function = &translation.function;
    let wgsl = &translation.wgsl;
    let ran = match args.vertex_count {
        Some(vertex_count) => {
            let draw = runner::VertexDraw {
                vertex_start: args.vertex_start,
                vertex_count,
                base_instance: args.base_instance,
                instance_count: args.instance_count,
            };
            runner::run_vertex_dispatch(&gpu, wgsl, function, &draw, &resources)
        }
        None => runner::run_compute_resources(&gpu, wgsl, function, &dispatch, &resources),
    };
    match ran {
        Ok(outputs) => write_outputs(&args, &outputs),
        Err(e) => run_error(e),
    }
}

/// `msl2wgsl test --browser`: the cases in headless Chromium's WebGPU.
fn test_in_browser(args: &TestArgs) -> u8 {
    let runner = runner::conformance::browser::BrowserRunner::default();
    match runner::conformance::browser::run_cases_in_browser(&runner, &args.paths) {
        Ok((report, results)) => {
            to_stderr(&format!("adapter: {}\n", results.adapter));
            let written = to_stdout(&report.render());
            if report.failed() == 0 {
                written
            } else {
                FAILURE
            }
        }
        Err(e) => error(FAILURE, Code::RunFailed, &e),
    }
}

pub(super) fn test(args: TestArgs) -> u8 {
    if runner::conformance::collect_cases(&args.paths).is_empty() {
        return error(FAILURE, Code::Usage, "no conformance cases (*.toml) found");
    }
    if args.browser {
        return test_in_browser(&args);
    }
    let gpu = match new_gpu(args.backend) {
        Ok(gpu) => gpu,
        Err(e) => return run_error(e),
    };
    if args.adapter {
        to_stderr(&format!("adapter: {}\n", gpu.adapter_line()));
    }
    let report = runner::conformance::run_cases(&gpu, &args.paths);
    let written = to_stdout(&report.render());
    if report.failed() == 0 {
        written
    } else {
        FAILURE
    }
}
