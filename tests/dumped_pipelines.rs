//! Makes a wgpu pipeline of every entry point of every WGSL module dumped
//! with `MSL2WGSL_DUMP_WGSL=DIR` (see `src/library/dump.rs`), on the adapter
//! wgpu picks (lavapipe in CI): the driver, not only naga, must accept what
//! the translator emits.
//!
//!     MSL2WGSL_CHECK_DUMP=DIR cargo test --test dumped_pipelines -- --nocapture
//!
//! (without the variable the test checks nothing).
//!
//! Compute entry points get an automatic layout; vertex entry points their
//! sidecar vertex buffers and a depth target; fragment entry points the
//! sidecar's stub vertex stage, colour targets and a depth target. Modules
//! needing a feature the device lacks, over WebGPU's size limits
//! (`overLimits`), over 1 MiB of WGSL (stress tests) or requiring the
//! `uniform_buffer_standard_layout` extension wgpu lacks are skipped (and
//! counted). The test
//! fails listing every pipeline wgpu refused.

#![cfg(feature = "runner")]

use msl2wgsl::library::dump::{ColorTarget, EntryPipeline, Sidecar, VertexBufferLayout};
use msl2wgsl::runner::Gpu;
use std::path::{Path, PathBuf};

/// Larger modules are skipped (counted): only stress tests make them.
const MAX_MODULE_BYTES: usize = 1 << 20;

/// Every render pipeline gets this depth target: fragments may write depth.
const DEPTH: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

#[derive(Default)]
struct Counts {
    modules: usize,
    entry_points: usize,
    skipped: usize,
    failures: Vec<String>,
}

/// The folder to check, from [`CHECK_VAR`].
const CHECK_VAR: &str = "MSL2WGSL_CHECK_DUMP";

#[test]
fn every_dumped_pipeline_is_made() {
    let Some(dir) = std::env::var_os(CHECK_VAR).map(PathBuf::from) else {
        eprintln!("{CHECK_VAR} is not set: nothing to check");
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "wgsl"));
    files.sort();
    assert!(!files.is_empty(), "no .wgsl files in {}", dir.display());
    let gpu = Gpu::new().expect("a GPU adapter");
    println!("dumped_pipelines: {}", gpu.adapter_line());
    let mut counts = Counts::default();
    for file in &files {
        let start = std::time::Instant::now();
        if let Err(e) = check_module(&gpu, file, &mut counts) {
            counts.failures.push(format!("{}: {e}", file.display()));
        }
        // Driver compile times vary wildly: name the slow modules.
        if start.elapsed() > std::time::Duration::from_secs(2) {
            println!("slow: {} took {:?}", file.display(), start.elapsed());
        }
    }
    for f in &counts.failures {
        println!("FAIL {f}");
    }
    println!(
        "dumped_pipelines: {} modules, {} entry points, {} skipped (missing features, over limits, over 1 MiB, standard uniform layout), {} failed",
        counts.modules,
        counts.entry_points,
        counts.skipped,
        counts.failures.len()
    );
    assert!(
        counts.failures.is_empty(),
        "{} pipelines failed",
        counts.failures.len()
    );
}

fn check_module(gpu: &Gpu, file: &Path, counts: &mut Counts) -> Result<(), String> {
    let sidecar: Sidecar = serde_json::from_str(
        &std::fs::read_to_string(file.with_extension("json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| format!("sidecar: {e}"))?;
    // lavapipe spends minutes on a million-element thread array: modules
    // the translator warned about are left to tint-check's LIMIT report.
    if sidecar.over_limits || gpu.check_features(&sidecar.features).is_err() {
        counts.skipped += 1;
        return Ok(());
    }
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    // The hostile-input tests translate 100,000-term sums (megabytes of
    // WGSL) and never run them; lavapipe needs minutes for each.
    if text.len() > MAX_MODULE_BYTES {
        counts.skipped += 1;
        return Ok(());
    }
    // `--uniform-layout standard` output: wgpu has no such extension (naga
    // holds uniforms to the uniform layout rules); tint-check checks it.
    if text.starts_with("requires uniform_buffer_standard_layout;") {
        counts.skipped += 1;
        return Ok(());
    }
    counts.modules += 1;
    // wgpu's WGSL front end (naga) does not take the directive browsers need.
    let text = text.replace("enable subgroups;", "");
    let device = gpu.device();
    let module = scoped(device, || shader_module(device, &text, "dumped"))?;
    for entry in &sidecar.entry_points {
        counts.entry_points += 1;
        if let Err(e) = scoped(device, || make_pipeline(device, &module, entry)).and_then(|r| r) {
            let what = format!("{} ({})", entry.wgsl_entry_point, entry.stage);
            counts
                .failures
                .push(format!("{}: {what}: {e}", file.display()));
        }
    }
    Ok(())
}

/// Runs `f` with validation and internal errors caught.
fn scoped<T>(device: &wgpu::Device, f: impl FnOnce() -> T) -> Result<T, String> {
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = f();
    let errors = [
        pollster::block_on(validation.pop()),
        pollster::block_on(internal.pop()),
    ];
    match errors.into_iter().flatten().next() {
        Some(e) => Err(e.to_string()),
        None => Ok(value),
    }
}

fn shader_module(device: &wgpu::Device, text: &str, label: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(text.into()),
    })
}

fn make_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    entry: &EntryPipeline,
) -> Result<(), String> {
    let constants: Vec<(&str, f64)> = entry
        .constants
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    let options = wgpu::PipelineCompilationOptions {
        constants: &constants,
        ..Default::default()
    };
    let name = Some(entry.wgsl_entry_point.as_str());
    if entry.stage == "compute" {
        let _ = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: name,
            layout: None,
            module,
            entry_point: name,
            compilation_options: options,
            cache: None,
        });
        return Ok(());
    }
    let layouts = vertex_layouts(&entry.vertex_buffers);
    let buffers: Vec<Option<wgpu::VertexBufferLayout>> = layouts
        .iter()
        .map(|(stride, attributes)| {
            Some(wgpu::VertexBufferLayout {
                array_stride: *stride,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes,
            })
        })
        .collect();
    let stub;
    let targets: Vec<Option<wgpu::ColorTargetState>> = entry
        .targets
        .iter()
        .map(|t| t.as_ref().map(color_target))
        .collect();
    let (vertex, fragment) = if entry.stage == "vertex" {
        let vertex = wgpu::VertexState {
            module,
            entry_point: name,
            compilation_options: options,
            buffers: &buffers,
        };
        (vertex, None)
    } else {
        let Some(stub_text) = &entry.stub_vertex else {
            return Err("the sidecar has no stub vertex stage for this fragment".into());
        };
        stub = shader_module(device, stub_text, "stub_vertex");
        let vertex = wgpu::VertexState {
            module: &stub,
            entry_point: Some("stub_vertex"),
            compilation_options: Default::default(),
            buffers: &[],
        };
        let fragment = wgpu::FragmentState {
            module,
            entry_point: name,
            compilation_options: options,
            targets: &targets,
        };
        (vertex, Some(fragment))
    };
    let _ = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: name,
        layout: None,
        vertex,
        primitive: Default::default(),
        depth_stencil: Some(wgpu::DepthStencilState {
            format: DEPTH,
            depth_write_enabled: Some(true),
            depth_compare: Some(wgpu::CompareFunction::Always),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        fragment,
        multiview_mask: None,
        cache: None,
    });
    Ok(())
}

/// Stride and attributes of each sidecar vertex buffer.
fn vertex_layouts(buffers: &[VertexBufferLayout]) -> Vec<(u64, Vec<wgpu::VertexAttribute>)> {
    buffers
        .iter()
        .map(|b| {
            let attributes = b
                .attributes
                .iter()
                .map(|a| wgpu::VertexAttribute {
                    format: vertex_format(&a.format),
                    offset: a.offset.into(),
                    shader_location: a.shader_location,
                })
                .collect();
            (b.array_stride.into(), attributes)
        })
        .collect()
}

fn color_target(t: &ColorTarget) -> wgpu::ColorTargetState {
    use wgpu::TextureFormat as F;
    let format = match t.format.as_str() {
        "r16float" => F::R16Float,
        "rg16float" => F::Rg16Float,
        "rgba16float" => F::Rgba16Float,
        "r32sint" => F::R32Sint,
        "rg32sint" => F::Rg32Sint,
        "rgba32sint" => F::Rgba32Sint,
        "r32uint" => F::R32Uint,
        "rg32uint" => F::Rg32Uint,
        _ => F::Rgba32Uint,
    };
    let component = wgpu::BlendComponent {
        src_factor: wgpu::BlendFactor::One,
        dst_factor: wgpu::BlendFactor::Src1,
        operation: wgpu::BlendOperation::Add,
    };
    wgpu::ColorTargetState {
        format,
        blend: t.dual_source.then_some(wgpu::BlendState {
            color: component,
            alpha: component,
        }),
        write_mask: wgpu::ColorWrites::ALL,
    }
}

/// A vertex format by WebGPU's name (the reflection's `format`).
fn vertex_format(name: &str) -> wgpu::VertexFormat {
    msl2wgsl::runner::vertex_format(name).unwrap_or(wgpu::VertexFormat::Float32x4)
}
