//! The same results on every backend wgpu reaches (Vulkan, GL, ...): run
//! with `WGPU_BACKEND=gl` as well as Vulkan (`.ci/run` does both).
//!
//! - integer `/` and `%` give WGSL's values, including where naga's GLSL
//!   writer would print GLSL's undefined ones (negative operands, zero
//!   divisors, `INT_MIN / -1`; `src/lower/metal/signed_remainder.rs`);
//! - `half` kernels run on a device without `shader-f16` (`f32` mode);
//! - the runner reports the backend it used, and `--backend` picks one.
#![cfg(feature = "runner")]

mod common;

use common::{gpu, u32s};
use msl2wgsl::library::HalfMode;
use msl2wgsl::runner::{run_kernel, ComputePipeline, Dispatch, Gpu};
use msl2wgsl::{Library, Options};
use std::collections::BTreeMap;

/// WGSL's `a / b` for `i32` (Metal's wherever Metal defines it).
fn wgsl_div(a: i32, b: i32) -> i32 {
    if b == 0 {
        a
    } else {
        a.wrapping_div(b)
    }
}

/// WGSL's `a % b` for `i32`.
fn wgsl_rem(a: i32, b: i32) -> i32 {
    if b == 0 {
        0
    } else {
        a.wrapping_rem(b)
    }
}

/// Pairs covering every sign, the zero divisor and the overflow.
fn signed_pairs() -> Vec<(i32, i32)> {
    let values = [
        -47,
        47,
        -9,
        9,
        2209,
        0,
        1,
        -1,
        7,
        -8,
        i32::MIN,
        i32::MAX,
        i32::MIN + 1,
    ];
    let mut pairs = Vec::new();
    for a in values {
        for b in values {
            pairs.push((a, b));
        }
    }
    pairs
}

fn i32_bytes(values: impl IntoIterator<Item = i32>) -> Vec<u8> {
    values.into_iter().flat_map(|v| v.to_le_bytes()).collect()
}

const DIVISION: &str = r#"
#include <metal_stdlib>
using namespace metal;

kernel void divide(device const int* a [[buffer(0)]],
                   device const int* b [[buffer(1)]],
                   device int4* out [[buffer(2)]],
                   device uint4* uout [[buffer(3)]],
                   device int4* vout [[buffer(4)]],
                   uint i [[thread_position_in_grid]]) {
    int x = a[i], y = b[i];
    int r = x;
    r %= y;
    // Constant divisors: 7 needs no guard, -1 does.
    out[i] = int4(x / y, r, x % 7, x / -1);
    uint ux = uint(x), uy = uint(y);
    uout[i] = uint4(ux / uy, ux % uy, ux % 7u, ux / 3u);
    int4 vx = int4(x, -x, x, y);
    int4 vy = int4(y, y, -y, x);
    vout[i] = vx % vy + (vx / vy) * 1000;
}
"#;

#[test]
fn integer_division_has_wgsl_values_on_every_backend() {
    let Some(gpu) = gpu() else { return };
    let pairs = signed_pairs();
    let n = pairs.len();
    let buffers = BTreeMap::from([
        (0, i32_bytes(pairs.iter().map(|p| p.0))),
        (1, i32_bytes(pairs.iter().map(|p| p.1))),
        (2, vec![0; n * 16]),
        (3, vec![0; n * 16]),
        (4, vec![0; n * 16]),
    ]);
    let dispatch = Dispatch::Threads {
        grid: [n as u32, 1, 1],
        threadgroup: [32, 1, 1],
    };
    let options = Options::default();
    let out = run_kernel(
        gpu,
        "div.metal",
        DIVISION,
        &options,
        "divide",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let ints = |i| {
        u32s(&out[&i])
            .into_iter()
            .map(|w| w as i32)
            .collect::<Vec<_>>()
    };
    let (signed, unsigned, vector) = (ints(2), u32s(&out[&3]), ints(4));
    let udiv = |a: u32, b: u32| a.checked_div(b).unwrap_or(a);
    let urem = |a: u32, b: u32| a.checked_rem(b).unwrap_or(0);
    let mut wrong = Vec::new();
    for (i, &(x, y)) in pairs.iter().enumerate() {
        let want = [wgsl_div(x, y), wgsl_rem(x, y), x % 7, x.wrapping_neg()];
        let (ux, uy) = (x as u32, y as u32);
        let uwant = [udiv(ux, uy), urem(ux, uy), ux % 7, ux / 3];
        let (vx, vy) = ([x, x.wrapping_neg(), x, y], [y, y, y.wrapping_neg(), x]);
        let vwant: Vec<i32> = (0..4)
            .map(|l| {
                let q = wgsl_div(vx[l], vy[l]);
                wgsl_rem(vx[l], vy[l]).wrapping_add(q.wrapping_mul(1000))
            })
            .collect();
        if signed[i * 4..i * 4 + 4] != want
            || unsigned[i * 4..i * 4 + 4] != uwant
            || vector[i * 4..i * 4 + 4] != vwant[..]
        {
            wrong.push(format!(
                "{x}, {y}: int {:?} (want {want:?}), uint {:?} (want {uwant:?}), int4 {:?} (want {vwant:?})",
                &signed[i * 4..i * 4 + 4],
                &unsigned[i * 4..i * 4 + 4],
                &vector[i * 4..i * 4 + 4],
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "on {}: {} of {n} pairs wrong:\n{}",
        gpu.adapter_line(),
        wrong.len(),
        wrong.join("\n")
    );
}

const HALF: &str = r#"
#include <metal_stdlib>
using namespace metal;

kernel void scale(device half* v [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    v[i] = v[i] * half(1.5h) + half(0.25h);
}
"#;

/// A library translated with `half` as `f16` (the default) runs on any
/// device: without `shader-f16` (GL, most software adapters) the pipeline
/// translates it again with `half` as `f32`, and the results are the same.
#[test]
fn half_kernels_run_without_shader_f16() {
    let Some(gpu) = gpu() else { return };
    let options = Options {
        half: HalfMode::F16,
        ..Options::default()
    };
    let library = Library::from_source("half.metal", HALF, &options).unwrap();
    assert!(library.wgsl().contains("f16"), "{}", library.wgsl());
    let pipeline = ComputePipeline::new(gpu, &library, "scale")
        .unwrap_or_else(|e| panic!("on {}: {e}", gpu.adapter_line()));
    let values: Vec<f32> = (0..64).map(|i| i as f32 * 0.5 - 9.0).collect();
    let bytes: Vec<u8> = (values.iter())
        .flat_map(|&v| half::f16::from_f32(v).to_le_bytes())
        .collect();
    let buffer = storage(gpu, &bytes);
    let mut command = pipeline.encoder();
    command.set_buffer(0, &buffer, 0).unwrap();
    command
        .dispatch_threads(gpu, [64, 1, 1], [64, 1, 1])
        .unwrap();
    let out = gpu.read_buffer(&buffer).unwrap();
    for (i, &v) in values.iter().enumerate() {
        let got = half::f16::from_le_bytes([out[2 * i], out[2 * i + 1]]);
        // Each step rounds to half, as Metal does: exact here.
        let want = half::f16::from_f32(v * 1.5 + 0.25);
        assert_eq!(got, want, "element {i} ({v})");
    }
}

fn storage(gpu: &Gpu, bytes: &[u8]) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    gpu.device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("v"),
            contents: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        })
}

/// `Gpu::with_backends` gives a device on that backend, and `Gpu::info`
/// and `adapter_line` say so.
#[test]
fn with_backends_picks_the_backend() {
    let Some(gpu) = gpu() else { return };
    let backend = gpu.backend();
    let again = Gpu::with_backends(backend.into()).unwrap();
    assert_eq!(again.backend(), backend);
    assert_eq!(again.info().backend, backend);
    assert!(
        again.adapter_line().contains(&format!("{backend:?}")),
        "{}",
        again.adapter_line()
    );
}

/// The CLI: `test --backend B --verbose` runs the cases there and prints
/// the adapter with its backend.
#[test]
fn cli_test_takes_a_backend() {
    let Some(gpu) = gpu() else { return };
    let name = match gpu.backend() {
        wgpu::Backend::Vulkan => "vulkan",
        wgpu::Backend::Gl => "gl",
        wgpu::Backend::Metal => "metal",
        wgpu::Backend::Dx12 => "dx12",
        other => panic!("no --backend for {other:?}"),
    };
    let case = format!("{}/fixtures/cases/int_ops.toml", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_msl2wgsl"))
        .args(["test", "--backend", name, "--verbose", &case])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed, 0 failed"), "{stdout}");
    let line = stderr.lines().find(|l| l.starts_with("adapter: "));
    let line = line.unwrap_or_else(|| panic!("no adapter line:\n{stderr}"));
    assert!(line.contains(&format!("({:?}", gpu.backend())), "{line}");
}
