//! Trailing one-element arrays of buffer structs, SPIR-V Cross's form of
//! runtime-sized arrays (`struct SSBO { uint n; float data[1]; }`): Metal
//! indexes past the declared length into the bound buffer, so the binding's
//! WGSL type ends in a runtime-sized `array<T>` (src/lower/entry/
//! trailing_array.rs). GPU runs are compared with CPU references.

// Without the runner the GPU tests are compiled out, and the sources and
// helpers only they use are unused.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use common::source::{translate_body, PRELUDE};
use msl2wgsl::diagnostics::Code;
use msl2wgsl::reflect::BufferBindingType;

/// A `const device` input and a `device` output, both `uint n; float data[1];`.
const SCALAR: &str = r#"
struct SSBO { uint n; float data[1]; };
kernel void k(const device SSBO& src [[buffer(0)]], device SSBO& dst [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  if (gid < src.n) {
    dst.data[gid] = src.data[(gid * 7u) % src.n] * 2.0f + float(gid);
  }
  if (gid == 0u) {
    dst.n = src.n;
  }
}
"#;

/// `float4` elements: the first 64 read, the next 64 written in reverse.
const VECTOR: &str = r#"
struct Vecs { float4 data[1]; };
kernel void k(device Vecs& v [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  float4 x = v.data[gid];
  v.data[127u - gid] = x.wzyx + float4(float(gid));
}
"#;

/// A `constant` block with a trailing array: runtime-sized, so storage.
const CONSTANT: &str = r#"
struct Table { uint n; float data[1]; };
kernel void k(constant Table& t [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  out[gid] = t.data[(gid + 5u) % t.n] + float(t.n);
}
"#;

/// The buffer passed by reference to a helper that indexes it (helpers
/// reach the binding itself, so they see the runtime-sized form too).
const HELPER: &str = r#"
struct SSBO { uint n; float data[1]; };
void scale(device SSBO& b, uint i) { b.data[i] = b.data[i] * 3.0f + float(b.n); }
void step(device SSBO& b, uint i) { scale(b, i); }
kernel void k(device SSBO& b [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  step(b, gid);
}
"#;

/// The buffer copied whole: its array stays one element (W0408).
const COPIED: &str = r#"
struct SSBO { uint n; float data[1]; };
kernel void k(device SSBO& b [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  SSBO s = b;
  out[gid] = s.data[0] + float(s.n);
}
"#;

#[test]
fn trailing_array_becomes_runtime_sized() {
    let lib = translate_body(SCALAR);
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("array<f32>"), "{wgsl}");
    assert_eq!(lib.warnings(), "");
    let f = lib.function("k").unwrap();
    let b = f.arguments[0].buffer.as_ref().unwrap();
    // Metal's sizeof stays: the host binds at least that.
    assert_eq!((b.data_size, b.alignment), (8, 4));
}

#[test]
fn constant_trailing_array_is_storage() {
    let lib = translate_body(CONSTANT);
    let wgsl = lib.wgsl();
    assert!(wgsl.contains("var<storage> t: Table_runtime"), "{wgsl}");
    let b = lib.function("k").unwrap().arguments[0]
        .buffer
        .clone()
        .unwrap();
    assert_eq!(b.binding_type, BufferBindingType::ReadOnlyStorage);
    assert_eq!(b.data_size, 8);
}

#[test]
fn copied_trailing_array_warns() {
    let lib = translate_body(COPIED);
    let codes: Vec<Code> = lib
        .warning_diagnostics()
        .0
        .iter()
        .map(|d| d.code())
        .collect();
    assert_eq!(codes, [Code::TrailingArrayClamped]);
    let w = lib.warnings();
    assert!(w.contains("member `data`"), "{w}");
    assert!(w.contains("clamps"), "{w}");
    assert!(lib.wgsl().contains("array<f32, 1>"), "{}", lib.wgsl());
}

#[test]
fn helper_indexed_trailing_array_is_runtime_sized() {
    let lib = translate_body(HELPER);
    assert_eq!(lib.warnings(), "");
    assert!(lib.wgsl().contains("b: SSBO_runtime"), "{}", lib.wgsl());
}

#[cfg(feature = "runner")]
fn run(
    src: &str,
    buffers: Vec<(u32, Vec<u8>)>,
    threads: u32,
) -> std::collections::BTreeMap<u32, Vec<u8>> {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let gpu = common::gpu().expect("checked by the caller");
    run_kernel(
        gpu,
        "trailing.metal",
        &format!("{PRELUDE}{src}"),
        &msl2wgsl::Options::default(),
        "k",
        &Dispatch::Threads {
            grid: [threads, 1, 1],
            threadgroup: [64, 1, 1],
        },
        &buffers.into_iter().collect(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// `uint n` then `n` floats, as SPIR-V Cross's host lays them out.
#[cfg(feature = "runner")]
fn counted(values: &[f32]) -> Vec<u8> {
    let mut bytes = (values.len() as u32).to_le_bytes().to_vec();
    bytes.extend(common::f32_bytes(values));
    bytes
}

#[cfg(feature = "runner")]
#[test]
fn scalar_trailing_array_runs() {
    if common::gpu().is_none() {
        return;
    }
    let n = 64usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 5.0).collect();
    let out = run(
        SCALAR,
        vec![(0, counted(&input)), (1, vec![0u8; 4 + n * 4])],
        n as u32,
    );
    let want: Vec<f32> = (0..n)
        .map(|i| input[(i * 7) % n] * 2.0 + i as f32)
        .collect();
    let got = &out[&1];
    assert_eq!(u32::from_le_bytes(got[..4].try_into().unwrap()), n as u32);
    assert_eq!(common::f32s(&got[4..]), want);
}

#[cfg(feature = "runner")]
#[test]
fn vector_trailing_array_runs() {
    if common::gpu().is_none() {
        return;
    }
    let mut input: Vec<f32> = (0..64 * 4).map(|i| i as f32 * 0.5).collect();
    input.resize(128 * 4, 0.0);
    let out = run(VECTOR, vec![(0, common::f32_bytes(&input))], 64);
    let mut want = input.clone();
    for g in 0..64usize {
        let x = &input[g * 4..g * 4 + 4];
        let at = (127 - g) * 4;
        want[at..at + 4].copy_from_slice(&[x[3], x[2], x[1], x[0]].map(|v| v + g as f32));
    }
    assert_eq!(common::f32s(&out[&0]), want);
}

#[cfg(feature = "runner")]
#[test]
fn constant_trailing_array_runs() {
    if common::gpu().is_none() {
        return;
    }
    let n = 64usize;
    let table: Vec<f32> = (0..n).map(|i| (i * i) as f32).collect();
    let out = run(
        CONSTANT,
        vec![(0, counted(&table)), (1, vec![0u8; n * 4])],
        n as u32,
    );
    let want: Vec<f32> = (0..n).map(|i| table[(i + 5) % n] + n as f32).collect();
    assert_eq!(common::f32s(&out[&1]), want);
}

#[cfg(feature = "runner")]
#[test]
fn helper_trailing_array_runs() {
    if common::gpu().is_none() {
        return;
    }
    let n = 64usize;
    let input: Vec<f32> = (0..n).map(|i| 10.0 - i as f32).collect();
    let out = run(HELPER, vec![(0, counted(&input))], n as u32);
    let want: Vec<f32> = input.iter().map(|x| x * 3.0 + n as f32).collect();
    assert_eq!(common::f32s(&out[&0][4..]), want);
}
