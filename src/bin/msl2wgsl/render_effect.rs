//! `msl2wgsl render --effect NAME`: apply a `[[stitchable]]` function to a
//! PNG as SwiftUI applies it to a view (`msl2wgsl::runner::render_effect`).

use super::super::runner_commands::run_error;
use super::super::{compile, error, read_input, to_stderr, FAILURE, USAGE};
use super::with_runner::write_images;
use super::RenderArgs;
use msl2wgsl::diagnostics::Code;
use msl2wgsl::reflect::{EffectArgumentKind, Stitchable};
use msl2wgsl::runner::{self, EffectResources, EffectValue, Gpu, RunError, TextureData};
use msl2wgsl::{Options, Target};

/// Translates the file for the one effect, draws it and writes the PNG.
pub(super) fn render_effect(args: &RenderArgs, name: &str) -> u8 {
    let (file, source) = match read_input(&args.file) {
        Ok(input) => input,
        Err(code) => return code,
    };
    // The command's `--error-limit`.
    let mut options = Options {
        error_limit: super::super::report::error_limit(),
        ..Options::default()
    };
    options.preprocess.defines = args.define.clone();
    options.preprocess.include_dirs = args.include.clone();
    options.preprocess.platform = args.platform.into();
    options.entries = vec![name.to_string()];
    options.target = Target::Wgpu;
    options.texture_formats = args.texture_format.clone();
    options.binding_map = args.binding_map.clone().unwrap_or_default();
    let library = match compile(&file, &source, &options) {
        Ok(library) => library,
        Err(code) => return code,
    };
    let Some(function) = library.function(name) else {
        return run_error(RunError::UnknownEntry(name.to_string()));
    };
    let Some(effect) = &function.stitchable else {
        return run_error(RunError::WrongStage {
            name: name.to_string(),
            expected: "[[stitchable]]".into(),
        });
    };
    let resources = match resources(args, name, effect) {
        Ok(resources) => resources,
        Err(code) => return code,
    };
    let gpu = match Gpu::new() {
        Ok(gpu) => gpu,
        Err(e) => return run_error(e),
    };
    if args.adapter {
        to_stderr(&format!("adapter: {}\n", gpu.adapter_line()));
    }
    match runner::render_effect_library(&gpu, &library, name, &resources) {
        Ok(image) => write_images(&args.output, &[image]),
        Err(e) => run_error(e),
    }
}

/// The layer, the size and every `--arg`, checked against the effect.
fn resources(args: &RenderArgs, name: &str, effect: &Stitchable) -> Result<EffectResources, u8> {
    let mut resources = EffectResources {
        size: args.size,
        ..Default::default()
    };
    if let Some(input) = &args.input {
        resources.layer = Some(read_png(input)?);
    }
    for (key, value) in &args.effect_arg {
        let Some(position) = runner::effect_argument_position(effect, key) else {
            let names: Vec<&str> = effect.arguments.iter().map(|a| a.name.as_str()).collect();
            let has = match names.is_empty() {
                true => "none".to_string(),
                false => names.join(", "),
            };
            return Err(error(
                USAGE,
                Code::Usage,
                format!("--arg {key}: `{name}` has no such effect argument (it has: {has})"),
            ));
        };
        let arg = &effect.arguments[position];
        let value = match (arg.kind, value.strip_prefix('@')) {
            (EffectArgumentKind::Image, _) => EffectValue::Image(read_png(value.as_ref())?),
            (EffectArgumentKind::Value, _) | (_, None) => EffectValue::Numbers(
                numbers(value)
                    .map_err(|m| error(USAGE, Code::Usage, format!("--arg {key}={value}: {m}")))?,
            ),
            (_, Some(path)) => EffectValue::Bytes(std::fs::read(path).map_err(|e| {
                error(
                    FAILURE,
                    Code::Unreadable,
                    format!("cannot read '{path}': {e}"),
                )
            })?),
        };
        if resources.arguments.insert(position, value).is_some() {
            return Err(error(
                USAGE,
                Code::Usage,
                format!("effect argument `{}` is given twice", arg.name),
            ));
        }
    }
    Ok(resources)
}

/// A PNG as an rgba8unorm texture.
fn read_png(path: &std::path::Path) -> Result<TextureData, u8> {
    TextureData::from_png(path).map_err(|e| error(FAILURE, Code::Unreadable, e))
}

/// `1.5` or `1,0,0,1`: finite numbers.
fn numbers(s: &str) -> Result<Vec<f64>, String> {
    s.split(',')
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("`{}` is not a number", v.trim()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::numbers;

    #[test]
    fn effect_numbers() {
        assert_eq!(numbers("1.5"), Ok(vec![1.5]));
        assert_eq!(numbers("1, 0,0.5,1"), Ok(vec![1.0, 0.0, 0.5, 1.0]));
        assert!(numbers("1,x").is_err() && numbers("inf").is_err() && numbers("").is_err());
    }
}
