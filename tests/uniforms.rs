//! `constant` buffers as WGSL `var<uniform>`: which arguments become
//! uniforms (reflection's `bindingType`), and GPU runs whose bytes are laid
//! out as a Metal host writes them (padding holds garbage) and must be read
//! exactly through the uniform.
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, f32s, gpu};
use msl2wgsl::reflect::BufferBindingType;
use msl2wgsl::runner::{run_kernel, Dispatch};
use msl2wgsl::{Library, Options, UniformLayout};
use std::collections::BTreeMap;

/// A `constant` struct with `float3` members, a matrix, an array of structs
/// and a nested struct. Metal offsets (MSL §2.1–2.5): `Light` is
/// `{ position @0 (16 B), intensity @16, color @32 }`, 48 bytes;
/// `Params` is `{ transform @0 (64 B), lights @64 (2 × 48), tint @160,
/// count @176, weights @192 (2 × 16), key @224 (48), scale @272 }`, 288
/// bytes.
const STRUCTS: &str = r#"
#include <metal_stdlib>
using namespace metal;
struct Light { float3 position; float intensity; float3 color; };
struct Params {
    float4x4 transform;
    Light lights[2];
    float3 tint;
    int count;
    float4 weights[2];
    Light key;
    float scale;
};
static void put_light(device float* out, uint at, Light l) {
    out[at] = l.position.x; out[at + 1] = l.position.y; out[at + 2] = l.position.z;
    out[at + 3] = l.intensity;
    out[at + 4] = l.color.x; out[at + 5] = l.color.y; out[at + 6] = l.color.z;
}
kernel void read_params(constant Params& p [[buffer(0)]],
                        device float* out [[buffer(1)]],
                        uint tid [[thread_position_in_grid]]) {
    if (tid != 0) return;
    for (uint c = 0; c < 4; c++)
        for (uint r = 0; r < 4; r++) out[c * 4 + r] = p.transform[c][r];
    put_light(out, 16, p.lights[0]);
    put_light(out, 23, p.lights[1]);
    out[30] = p.tint.x; out[31] = p.tint.y; out[32] = p.tint.z;
    out[33] = float(p.count);
    for (uint i = 0; i < 2; i++)
        for (uint k = 0; k < 4; k++) out[34 + i * 4 + k] = p.weights[i][k];
    put_light(out, 42, p.key);
    out[49] = p.scale;
}
"#;

/// Bytes of a Metal host filling a struct: values at offsets, garbage
/// (0xA5) in every padding byte, and the values in the order written.
struct Host {
    bytes: Vec<u8>,
    values: Vec<f32>,
}

impl Host {
    fn put(&mut self, at: usize, v: f32) {
        self.bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
        self.values.push(v);
    }

    /// A `Light` at `at`: position (16 bytes), intensity @16, color @32.
    fn light(&mut self, at: usize, k: f32) {
        for c in 0..3 {
            self.put(at + 4 * c, 100.0 * k + c as f32);
        }
        self.put(at + 16, 100.0 * k + 10.0);
        for c in 0..3 {
            self.put(at + 32 + 4 * c, 100.0 * k + 20.0 + c as f32);
        }
    }
}

/// Metal's bytes of `Params`, and the values the kernel writes, in order.
fn params_bytes() -> (Vec<u8>, Vec<f32>) {
    let mut h = Host {
        bytes: vec![0xA5u8; 288],
        values: Vec::new(),
    };
    for i in 0..16 {
        h.put(4 * i, i as f32 + 0.5);
    }
    h.light(64, 1.0);
    h.light(112, 2.0);
    for c in 0..3 {
        h.put(160 + 4 * c, -1.0 - c as f32);
    }
    h.bytes[176..180].copy_from_slice(&(-7i32).to_le_bytes());
    h.values.push(-7.0);
    for i in 0..8 {
        h.put(192 + 4 * i, 0.25 * i as f32);
    }
    h.light(224, 3.0);
    h.put(272, 42.0);
    (h.bytes, h.values)
}

fn translate(source: &str, options: &Options) -> Library {
    Library::from_source("uniforms.metal", source, options).unwrap_or_else(|e| panic!("{e}"))
}

/// The binding type reflection gives `function`'s buffer `index`.
fn binding_type(library: &Library, function: &str, index: u32) -> BufferBindingType {
    let f = library.function(function).unwrap();
    let arg = f.arguments.iter().find(|a| a.index == index).unwrap();
    arg.buffer.as_ref().unwrap().binding_type
}

/// Runs `entry` of `source` on `threads` threads; `None` without a GPU.
fn run(
    source: &str,
    entry: &str,
    threads: u32,
    buffers: Vec<(u32, Vec<u8>)>,
) -> Option<BTreeMap<u32, Vec<u8>>> {
    let gpu = gpu()?;
    let buffers: BTreeMap<u32, Vec<u8>> = buffers.into_iter().collect();
    let dispatch = Dispatch::Threads {
        grid: [threads, 1, 1],
        threadgroup: [threads.min(64), 1, 1],
    };
    let out = run_kernel(
        gpu,
        "uniforms.metal",
        source,
        &Options::default(),
        entry,
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    Some(out)
}

#[test]
fn constant_structs_are_uniforms_read_byte_exact() {
    let library = translate(STRUCTS, &Options::default());
    assert_eq!(
        binding_type(&library, "read_params", 0),
        BufferBindingType::Uniform
    );
    assert_eq!(
        binding_type(&library, "read_params", 1),
        BufferBindingType::Storage
    );
    assert!(
        library.wgsl().contains("var<uniform> p: Params"),
        "{}",
        library.wgsl()
    );
    let (bytes, expected) = params_bytes();
    let Some(out) = run(
        STRUCTS,
        "read_params",
        1,
        vec![(0, bytes), (1, vec![0; 50 * 4])],
    ) else {
        return;
    };
    assert_eq!(f32s(&out[&1]), expected);
}

/// `constant float&`/`uint&` scalars become uniforms; a `constant float*`
/// indexed with a run-time value stays read-only storage (a uniform needs a
/// fixed size, and 4-byte strides break the uniform rules).
const MIXED: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void scale(constant float* w [[buffer(0)]],
                  device float* out [[buffer(1)]],
                  constant float& factor [[buffer(2)]],
                  constant uint& n [[buffer(3)]],
                  uint tid [[thread_position_in_grid]]) {
    if (tid >= n) return;
    out[tid] = w[(tid * 3u) % n] * factor;
}
"#;

#[test]
fn run_time_indexed_constant_pointer_stays_storage() {
    let library = translate(MIXED, &Options::default());
    assert_eq!(
        binding_type(&library, "scale", 0),
        BufferBindingType::ReadOnlyStorage
    );
    assert_eq!(
        binding_type(&library, "scale", 2),
        BufferBindingType::Uniform
    );
    assert_eq!(
        binding_type(&library, "scale", 3),
        BufferBindingType::Uniform
    );
    let n = 37u32;
    let w: Vec<f32> = (0..n).map(|i| i as f32 * 1.5 - 4.0).collect();
    let buffers = vec![
        (0, f32_bytes(&w)),
        (1, vec![0; n as usize * 4]),
        (2, 0.5f32.to_le_bytes().to_vec()),
        (3, n.to_le_bytes().to_vec()),
    ];
    let Some(out) = run(MIXED, "scale", n, buffers) else {
        return;
    };
    let expected: Vec<f32> = (0..n).map(|i| w[((i * 3) % n) as usize] * 0.5).collect();
    assert_eq!(f32s(&out[&1]), expected);
}

/// Seven inputs, one output and four `constant` scalars: twelve buffers,
/// which were twelve storage buffers (over WebGPU's default of 8 per stage)
/// and are now eight storage buffers and four uniforms.
const MANY: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void blend7(const device float* a0 [[buffer(0)]], const device float* a1 [[buffer(1)]],
                   const device float* a2 [[buffer(2)]], const device float* a3 [[buffer(3)]],
                   const device float* a4 [[buffer(4)]], const device float* a5 [[buffer(5)]],
                   const device float* a6 [[buffer(6)]], device float* out [[buffer(7)]],
                   constant float& scale [[buffer(8)]], constant float& bias [[buffer(9)]],
                   constant int& skip [[buffer(10)]], constant uint& n [[buffer(11)]],
                   uint tid [[thread_position_in_grid]]) {
    if (tid >= n) return;
    float s = a0[tid] + a1[tid] + a2[tid] + a3[tid] + a4[tid] + a5[tid] + a6[tid];
    if (skip != 0) s -= a3[tid];
    out[tid] = s * scale + bias;
}
"#;

#[test]
fn twelve_buffer_kernel_fits_default_limits() {
    let library = translate(MANY, &Options::default());
    let f = library.function("blend7").unwrap();
    assert!(f.required_limits.is_empty(), "{:?}", f.required_limits);
    assert!(library.warnings().is_empty(), "{}", library.warnings());
    let n = 100u32;
    let mut buffers: Vec<(u32, Vec<u8>)> = (0..7)
        .map(|k| {
            (
                k,
                f32_bytes(&(0..n).map(|i| (i * (k + 1)) as f32).collect::<Vec<_>>()),
            )
        })
        .collect();
    buffers.push((8, 2.0f32.to_le_bytes().to_vec()));
    buffers.push((9, 0.25f32.to_le_bytes().to_vec()));
    buffers.push((10, 1i32.to_le_bytes().to_vec()));
    buffers.push((11, n.to_le_bytes().to_vec()));
    buffers.push((7, vec![0; n as usize * 4]));
    let Some(out) = run(MANY, "blend7", n, buffers) else {
        return;
    };
    // 1 + 2 + ... + 7 = 28, minus the skipped 4.
    let expected: Vec<f32> = (0..n).map(|i| (i * 24) as f32 * 2.0 + 0.25).collect();
    assert_eq!(f32s(&out[&7]), expected);
}

/// A `constant` struct holding `float2x2` and `float4x2` matrices: WGSL
/// allows it as a uniform, but wgpu's GL backend would read its 2-row
/// columns 16 bytes apart (std140), not 8, so it stays read-only storage
/// and reads Metal's bytes on every backend. Metal: `a` @0 (16 B), `b`
/// @16 (32 B), `k` @48; 64 bytes.
const TWO_ROW: &str = r#"
#include <metal_stdlib>
using namespace metal;
struct Mats { float2x2 a; float4x2 b; float k; };
kernel void read_mats(constant Mats& m [[buffer(0)]],
                      constant float3x3& r [[buffer(1)]],
                      device float* out [[buffer(2)]],
                      uint tid [[thread_position_in_grid]]) {
    if (tid != 0) return;
    for (uint c = 0; c < 2; c++) for (uint i = 0; i < 2; i++) out[c * 2 + i] = m.a[c][i];
    for (uint c = 0; c < 4; c++) for (uint i = 0; i < 2; i++) out[4 + c * 2 + i] = m.b[c][i];
    out[12] = m.k + r[2][1];
}
"#;

#[test]
fn two_row_matrices_stay_storage_and_read_metal_bytes() {
    let library = translate(TWO_ROW, &Options::default());
    assert_eq!(
        binding_type(&library, "read_mats", 0),
        BufferBindingType::ReadOnlyStorage
    );
    // A float3x3 has 16-byte columns in both layouts: a uniform.
    assert_eq!(
        binding_type(&library, "read_mats", 1),
        BufferBindingType::Uniform
    );
    let mut bytes = vec![0xA5u8; 64];
    let values: Vec<f32> = (0..12).map(|v| v as f32 + 0.5).collect();
    bytes[..48].copy_from_slice(&f32_bytes(&values));
    bytes[48..52].copy_from_slice(&100.0f32.to_le_bytes());
    let mut r = vec![0xA5u8; 48];
    r[36..40].copy_from_slice(&7.0f32.to_le_bytes());
    let buffers = vec![(0, bytes), (1, r), (2, vec![0; 13 * 4])];
    let Some(out) = run(TWO_ROW, "read_mats", 1, buffers) else {
        return;
    };
    let mut expected = values;
    expected.push(107.0);
    assert_eq!(f32s(&out[&2]), expected);
}

/// `constant T*` arguments read at constant indices only become uniforms
/// of the elements read (`lights[0]`, `lights[2]`: `array<Light, 3>`;
/// `*single`, `scale->x`, `first[0]`: the pointee) when that layout allows; a 4-byte
/// stride (`taps`), a run-time index (`runtime`), a pointer passed to a
/// helper (`passed`) or an address taken (`addressed`) keep storage.
const CONSTANT_INDEXED: &str = r#"
#include <metal_stdlib>
using namespace metal;
struct Light { float4 position; float4 color; };
struct Scale { float x; float y; };
static float4 second(constant float4* p) { return p[1]; }
kernel void shade(constant Light* lights [[buffer(0)]],
                  constant float4* single [[buffer(1)]],
                  constant Scale* scale [[buffer(2)]],
                  constant float* taps [[buffer(3)]],
                  constant float4* runtime [[buffer(4)]],
                  constant float4* passed [[buffer(5)]],
                  constant float4* addressed [[buffer(6)]],
                  device float4* out [[buffer(7)]],
                  constant float4* first [[buffer(8)]],
                  uint tid [[thread_position_in_grid]]) {
    constant float4* a = &addressed[0];
    float4 v = lights[0].position + lights[2].color * scale->x + *single * (*scale).y;
    out[tid] = v + taps[0] + taps[1] + runtime[tid] + second(passed) + a[tid] + first[0];
}
"#;

#[test]
fn constant_indexed_pointers_are_uniforms_of_the_elements_read() {
    let library = translate(CONSTANT_INDEXED, &Options::default());
    let f = library.function("shade").unwrap();
    let info = |index: u32| {
        let arg = f.arguments.iter().find(|a| a.index == index).unwrap();
        let b = arg.buffer.as_ref().unwrap();
        (b.binding_type, b.binding_size)
    };
    use BufferBindingType::{ReadOnlyStorage, Uniform};
    assert_eq!(info(0), (Uniform, Some(96)), "lights[0..3]");
    assert_eq!(info(1), (Uniform, Some(16)), "*single");
    assert_eq!(info(2), (Uniform, Some(8)), "scale->x");
    assert_eq!(info(8), (Uniform, Some(16)), "first[0]");
    for index in 3..7 {
        assert_eq!(info(index), (ReadOnlyStorage, None), "buffer {index}");
    }
    let wgsl = library.wgsl();
    assert!(
        wgsl.contains("var<uniform> lights: array<Light, 3>"),
        "{wgsl}"
    );
    assert!(wgsl.contains("var<uniform> single: vec4<f32>"), "{wgsl}");
    let n = 8usize;
    let vec4s =
        |count: usize, base: f32| -> Vec<f32> { (0..count * 4).map(|i| base + i as f32).collect() };
    // More elements than the kernel reads, as a Metal host may bind.
    let lights = vec4s(8, 100.0);
    let single = vec4s(2, 200.0);
    let scale = [3.0f32, -2.0, 99.0, 99.0];
    let taps = [0.5f32, 0.25, 99.0];
    let runtime = vec4s(n, 300.0);
    let passed = vec4s(2, 400.0);
    let addressed = vec4s(n, 500.0);
    let first = vec4s(3, 600.0);
    let buffers = vec![
        (0, f32_bytes(&lights)),
        (1, f32_bytes(&single)),
        (2, f32_bytes(&scale)),
        (3, f32_bytes(&taps)),
        (4, f32_bytes(&runtime)),
        (5, f32_bytes(&passed)),
        (6, f32_bytes(&addressed)),
        (7, vec![0; n * 16]),
        (8, f32_bytes(&first)),
    ];
    let Some(out) = run(CONSTANT_INDEXED, "shade", n as u32, buffers) else {
        return;
    };
    let mut expected = Vec::new();
    for t in 0..n {
        for c in 0..4 {
            // lights[0].position is element 0, lights[2].color element 5.
            let v = lights[c] + lights[5 * 4 + c] * scale[0] + single[c] * scale[1];
            let rest =
                taps[0] + taps[1] + runtime[t * 4 + c] + passed[4 + c] + addressed[t * 4 + c];
            expected.push(v + rest + first[c]);
        }
    }
    assert_eq!(f32s(&out[&7]), expected);
}

#[test]
fn uniform_layout_none_keeps_storage() {
    let options = Options {
        uniform_layout: UniformLayout::None,
        ..Options::default()
    };
    let library = translate(MIXED, &options);
    assert_eq!(
        binding_type(&library, "scale", 2),
        BufferBindingType::ReadOnlyStorage
    );
    assert!(!library.wgsl().contains("var<uniform> factor"));
}

/// The pipeline API with the caller's own buffers: a `constant` argument
/// bound as a uniform accepts a buffer made without `UNIFORM` usage (a
/// Metal host has one kind of buffer) when it can be copied from; without
/// `COPY_SRC` the error names the usage.
#[test]
fn pipeline_copies_a_storage_buffer_into_the_uniform() {
    use msl2wgsl::runner::ComputePipeline;
    use wgpu::util::DeviceExt;
    let Some(gpu) = gpu() else { return };
    let library = translate(MIXED, &Options::default());
    let pipeline = ComputePipeline::new(gpu, &library, "scale").unwrap();
    let buffer = |bytes: &[u8], usage: wgpu::BufferUsages| {
        gpu.device()
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytes,
                usage: wgpu::BufferUsages::STORAGE | usage,
            })
    };
    let n = 8u32;
    let w: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let w = buffer(&f32_bytes(&w), wgpu::BufferUsages::empty());
    let out = buffer(&[0; 32], wgpu::BufferUsages::COPY_SRC);
    let factor = buffer(&3.0f32.to_le_bytes(), wgpu::BufferUsages::COPY_SRC);
    let count = buffer(&n.to_le_bytes(), wgpu::BufferUsages::COPY_SRC);
    let mut command = pipeline.encoder();
    command
        .set_buffer(0, &w, 0)
        .unwrap()
        .set_buffer(1, &out, 0)
        .unwrap()
        .set_buffer(2, &factor, 0)
        .unwrap()
        .set_buffer(3, &count, 0)
        .unwrap();
    command
        .dispatch_threads(gpu, [n, 1, 1], [8, 1, 1])
        .unwrap_or_else(|e| panic!("{e}"));
    let expected: Vec<f32> = (0..n).map(|i| ((i * 3) % n) as f32 * 3.0).collect();
    assert_eq!(f32s(&gpu.read_buffer(&out).unwrap()), expected);
    // Neither `UNIFORM` nor `COPY_SRC`: refused, naming the usage.
    let sealed = buffer(&3.0f32.to_le_bytes(), wgpu::BufferUsages::empty());
    command.set_buffer(2, &sealed, 0).unwrap();
    let e = command
        .dispatch_threads(gpu, [n, 1, 1], [8, 1, 1])
        .unwrap_err();
    assert!(e.to_string().contains("UNIFORM"), "{e}");
}

/// A `constant` struct with a `float` array (4-byte stride): read-only
/// storage under WGSL's uniform rules, a uniform under the
/// `uniform_buffer_standard_layout` extension (`--uniform-layout standard`,
/// WebGPU only), whose WGSL says it requires the extension.
const TIGHT: &str = r#"
#include <metal_stdlib>
using namespace metal;
struct Filter { float taps[5]; uint count; };
kernel void apply(constant Filter& f [[buffer(0)]],
                  device float* out [[buffer(1)]],
                  uint tid [[thread_position_in_grid]]) {
    float s = 0;
    for (uint i = 0; i < f.count; i++) s += f.taps[i] * float(tid + i);
    out[tid] = s;
}
"#;

#[test]
fn standard_layout_makes_tight_arrays_uniforms_for_webgpu() {
    let library = translate(TIGHT, &Options::default());
    assert_eq!(
        binding_type(&library, "apply", 0),
        BufferBindingType::ReadOnlyStorage
    );
    assert!(!library.wgsl().contains("requires"));
    let standard = Options {
        uniform_layout: UniformLayout::Standard,
        ..Options::default()
    };
    let library = translate(TIGHT, &standard);
    assert_eq!(
        binding_type(&library, "apply", 0),
        BufferBindingType::Uniform
    );
    let wgsl = library.wgsl();
    assert!(
        wgsl.starts_with("requires uniform_buffer_standard_layout;\n"),
        "{wgsl}"
    );
    assert!(wgsl.contains("var<uniform> f: Filter"), "{wgsl}");
    // wgpu has no such extension: its dialect keeps the WGSL rules.
    let wgpu = Options {
        target: msl2wgsl::Target::Wgpu,
        ..standard.clone()
    };
    let library = translate(TIGHT, &wgpu);
    assert_eq!(
        binding_type(&library, "apply", 0),
        BufferBindingType::ReadOnlyStorage
    );
    assert!(!library.wgsl().contains("requires"));
    // So the runner (which translates for wgpu) runs such a library.
    let mut bytes = Vec::new();
    for t in [1.0f32, -2.0, 0.5, 4.0, 8.0] {
        bytes.extend(t.to_le_bytes());
    }
    bytes.extend(4u32.to_le_bytes());
    let Some(gpu) = gpu() else { return };
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, bytes), (1, vec![0; 16 * 4])].into();
    let dispatch = Dispatch::Threads {
        grid: [16, 1, 1],
        threadgroup: [16, 1, 1],
    };
    let out = run_kernel(
        gpu,
        "tight.metal",
        TIGHT,
        &standard,
        "apply",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let taps = [1.0f32, -2.0, 0.5, 4.0];
    let expected: Vec<f32> = (0..16)
        .map(|t| (0..4).map(|i| taps[i] * (t + i) as f32).sum())
        .collect();
    assert_eq!(f32s(&out[&1]), expected);
}

/// An MLX-style strided copy: the shape and strides as `constant int*`
/// arrays indexed by a loop (read-only storage), the rank and the output's
/// size as `constant int&` (uniforms).
const STRIDED: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void copy_g(const device float* src [[buffer(0)]],
                   device float* dst [[buffer(1)]],
                   constant const int* shape [[buffer(2)]],
                   constant const int* strides [[buffer(3)]],
                   constant int& ndim [[buffer(4)]],
                   constant int& size [[buffer(5)]],
                   uint index [[thread_position_in_grid]]) {
    if (int(index) >= size) return;
    int rest = int(index);
    int at = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        at += (rest % shape[d]) * strides[d];
        rest /= shape[d];
    }
    dst[index] = src[at];
}
"#;

#[test]
fn mlx_style_shapes_and_strides() {
    let library = translate(STRIDED, &Options::default());
    for (index, want) in [
        (2, BufferBindingType::ReadOnlyStorage),
        (3, BufferBindingType::ReadOnlyStorage),
        (4, BufferBindingType::Uniform),
        (5, BufferBindingType::Uniform),
    ] {
        assert_eq!(
            binding_type(&library, "copy_g", index),
            want,
            "buffer {index}"
        );
    }
    // A 3 × 4 × 5 array read transposed: strides of a 5 × 4 × 3 source.
    let (shape, strides) = ([3i32, 4, 5], [1i32, 3, 12]);
    let size = 60;
    let src: Vec<f32> = (0..size).map(|i| i as f32).collect();
    let ints = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let buffers = vec![
        (0, f32_bytes(&src)),
        (1, vec![0; size * 4]),
        (2, ints(&shape)),
        (3, ints(&strides)),
        (4, ints(&[3])),
        (5, ints(&[size as i32])),
    ];
    let Some(out) = run(STRIDED, "copy_g", size as u32, buffers) else {
        return;
    };
    let expected: Vec<f32> = (0..size)
        .map(|i| {
            let (a, b, c) = (i / 20, (i / 5) % 4, i % 5);
            (a + b * 3 + c * 12) as f32
        })
        .collect();
    assert_eq!(f32s(&out[&1]), expected);
}

/// `--uniform-layout` on the command line.
#[test]
fn cli_uniform_layout_flag() {
    let dir = std::env::temp_dir().join(format!("msl2wgsl-uniforms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wgsl = |source: &str, flag: &[&str]| {
        let file = dir.join("k.metal");
        std::fs::write(&file, source).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_msl2wgsl"))
            .arg(&file)
            .args(flag)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(wgsl(TIGHT, &[]).contains("var<storage> f: Filter"));
    let standard = wgsl(TIGHT, &["--uniform-layout", "standard"]);
    assert!(standard.contains("var<uniform> f: Filter"), "{standard}");
    assert!(wgsl(MIXED, &[]).contains("var<uniform> factor: f32"));
    let none = wgsl(MIXED, &["--uniform-layout", "none"]);
    assert!(none.contains("var<storage> factor: f32"), "{none}");
    std::fs::remove_dir_all(&dir).ok();
}
