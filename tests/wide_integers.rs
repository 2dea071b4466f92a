//! 64-bit integers (`src/lower/metal/wide_integers.rs`): `size_t` and
//! `ptrdiff_t` are 8 bytes aligned to 8, as in Metal, on both targets; with
//! `--target webgpu` every 64-bit integer is computed in its low 32 bits
//! (one located W0411 per translation unit) and keeps Metal's 8 bytes in
//! buffers (a load reads the low word, a store writes it and its sign or
//! zero extension); with `--target wgpu` it is wgpu's exact `i64`/`u64`.
//! GPU results are checked bytewise against CPU references computed here.

// Without the runner the GPU tests are compiled out, and the sources and
// helpers only they use are unused.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use common::source::PRELUDE;
use msl2wgsl::diagnostics::Code;
use msl2wgsl::{Library, Options, Target};

/// A struct whose `size_t` member sits at offset 8 (after 4 bytes of
/// padding) and whose size is 24 (4 bytes of tail padding), read and
/// written whole and member by member.
const ITEMS: &str = "struct Item { uint a; size_t n; float b; };\n\
kernel void items(device Item* items [[buffer(0)]], device uint* sizes [[buffer(1)]],\n\
                  uint i [[thread_position_in_grid]]) {\n\
  Item it = items[i];\n\
  it.a = it.a + 1u;\n\
  it.n = it.n * 3 + i;\n\
  it.b = it.b * 2.0f;\n\
  items[i] = it;\n\
  if (i == 0) {\n\
    sizes[0] = sizeof(Item); sizes[1] = sizeof(size_t); sizes[2] = alignof(size_t);\n\
    sizes[3] = sizeof(ptrdiff_t); sizes[4] = alignof(Item); sizes[5] = sizeof(long2);\n\
  }\n\
}\n";

/// `long`/`ulong` arithmetic whose exact results exceed 32 bits: products,
/// constant and run-time shifts of either direction, division.
const ARITHMETIC: &str =
    "kernel void arith(device const long* x [[buffer(0)]], device long* out [[buffer(1)]],\n\
                  device ulong* uout [[buffer(2)]], device const uint* amounts [[buffer(3)]],\n\
                  uint i [[thread_position_in_grid]]) {\n\
  long v = x[i];\n\
  uint s = amounts[i];\n\
  out[4 * i] = v * 3000000 - 5;\n\
  out[4 * i + 1] = (v << 40) + (v >> 35) + v / 7;\n\
  out[4 * i + 2] = v << s;\n\
  out[4 * i + 3] = v >> s;\n\
  uout[2 * i] = ulong(v) * 2654435761u + (ulong(i) << 3);\n\
  uout[2 * i + 1] = (ulong(s) << s) ^ ulong(v);\n\
}\n";

fn source(body: &str) -> String {
    format!("{PRELUDE}{body}")
}

fn options(target: Target, threads: u32) -> Options {
    Options {
        target,
        threadgroup_size: Some([threads, 1, 1]),
        ..Options::default()
    }
}

/// The W0411 warnings of a translation.
fn narrowing_warnings(library: &Library) -> Vec<String> {
    library
        .warning_diagnostics()
        .0
        .iter()
        .filter(|d| d.code() == Code::WideIntegerNarrowed)
        .map(|d| d.message.clone())
        .collect()
}

/// The input items: `n` is a 32-bit value whose product by 3 exceeds 32
/// bits for some items (so its low word wraps), padding bytes a pattern
/// that must survive.
fn item_bytes(count: u32) -> Vec<u8> {
    let mut bytes = Vec::new();
    for i in 0..count {
        let a = i * 7 + 1;
        let n = 0x5000_0000u64 + u64::from(i) * 0x0123_4567;
        let b = i as f32 * 0.5 - 3.0;
        bytes.extend(a.to_le_bytes());
        bytes.extend([0xA5; 4]);
        bytes.extend(n.to_le_bytes());
        bytes.extend(b.to_le_bytes());
        bytes.extend([0x5A; 4]);
    }
    bytes
}

/// What the items kernel leaves, when `size_t` arithmetic is exact
/// (`exact`) or computed in its low 32 bits and zero-extended.
fn items_reference(input: &[u8], exact: bool) -> Vec<u8> {
    let mut out = input.to_vec();
    for (i, item) in out.chunks_mut(24).enumerate() {
        let a = u32::from_le_bytes(item[0..4].try_into().unwrap()).wrapping_add(1);
        let n = u64::from_le_bytes(item[8..16].try_into().unwrap());
        let n = n.wrapping_mul(3).wrapping_add(i as u64);
        let n = if exact { n } else { u64::from(n as u32) };
        let b = f32::from_le_bytes(item[16..20].try_into().unwrap()) * 2.0;
        item[0..4].copy_from_slice(&a.to_le_bytes());
        item[8..16].copy_from_slice(&n.to_le_bytes());
        item[16..20].copy_from_slice(&b.to_le_bytes());
    }
    out
}

/// Metal's sizes: Item 24, size_t 8 aligned to 8, ptrdiff_t 8, Item
/// aligned to 8, long2 16.
const SIZES: [u32; 6] = [24, 8, 8, 8, 8, 16];

#[test]
fn size_t_is_eight_bytes_aligned_to_eight_in_reflection() {
    for target in [Target::WebGpu, Target::Wgpu] {
        let library = Library::from_source("t.metal", &source(ITEMS), &options(target, 32))
            .unwrap_or_else(|f| panic!("{}", f.render()));
        let f = library.function("items").unwrap();
        let buffer = f.arguments[0].buffer.as_ref().unwrap();
        assert_eq!((buffer.alignment, buffer.data_size), (8, 24), "{target:?}");
        let members = &buffer.struct_type.as_ref().unwrap().members;
        let layout: Vec<(&str, u32, u32)> = members
            .iter()
            .map(|m| (m.name.as_str(), m.offset, m.size))
            .collect();
        assert_eq!(
            layout,
            [("a", 0, 4), ("n", 8, 8), ("b", 16, 4)],
            "{target:?}"
        );
    }
}

/// Threadgroup memory is sized in Metal's bytes: 64 bytes of `size_t` are
/// 8 of them.
#[test]
fn threadgroup_size_t_takes_metal_s_eight_bytes() {
    let body =
        "kernel void k(threadgroup size_t* t [[threadgroup(0)]], device uint* o [[buffer(0)]],\n\
                uint i [[thread_index_in_threadgroup]]) { t[i] = i; o[i] = uint(t[i]); }\n";
    for target in [Target::WebGpu, Target::Wgpu] {
        let mut options = options(target, 8);
        options.threadgroup_memory = vec![(0, 64)];
        let library = Library::from_source("t.metal", &source(body), &options)
            .unwrap_or_else(|f| panic!("{}", f.render()));
        let tg = library.function("k").unwrap().arguments[0]
            .threadgroup
            .clone()
            .unwrap();
        assert_eq!((tg.alignment, tg.data_size), (8, Some(64)), "{target:?}");
        assert!(
            library.wgsl().contains(", 8>"),
            "{target:?}: 8 elements\n{}",
            library.wgsl()
        );
    }
}

/// On WebGPU: one W0411 for the whole file, at the first 64-bit
/// computation (here the load of `items[i]`, whose `size_t` is read as
/// its low word), and none on wgpu.
#[test]
fn one_located_warning_on_webgpu_and_none_on_wgpu() {
    let src = source(ITEMS);
    let library = Library::from_source("t.metal", &src, &options(Target::WebGpu, 32)).unwrap();
    assert_eq!(
        narrowing_warnings(&library).len(),
        1,
        "{}",
        library.warnings()
    );
    let offset = ITEMS.find("items[i];").unwrap();
    let line = ITEMS[..offset].matches('\n').count() + 3;
    let col = offset - ITEMS[..offset].rfind('\n').map_or(0, |i| i + 1) + 1;
    let text = library.warnings();
    assert!(
        text.starts_with(&format!(
            "t.metal:{line}:{col}: warning: 64-bit integers are computed in 32 bits"
        )),
        "{text}"
    );
    // Several functions and many uses still give one warning.
    let two = format!("{src}{}", ARITHMETIC);
    let library = Library::from_source("t.metal", &two, &options(Target::WebGpu, 32)).unwrap();
    assert_eq!(
        narrowing_warnings(&library).len(),
        1,
        "{}",
        library.warnings()
    );
    let library = Library::from_source("t.metal", &two, &options(Target::Wgpu, 32)).unwrap();
    assert!(
        narrowing_warnings(&library).is_empty(),
        "{}",
        library.warnings()
    );
}

/// Declarations, integer conversions and subscripts compute nothing: no
/// warning (SPIR-V Cross's and Tint's array wrappers index with `size_t`).
#[test]
fn size_t_subscripts_alone_do_not_warn() {
    let body = "template<typename T, size_t N> struct wrapped { T elements[N];\n\
                thread T& operator[](size_t i) thread { return elements[i]; } };\n\
                kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n\
                wrapped<float, 4> w; w[i & 3u] = 1.0f; o[i] = w[int(i) & 3]; }\n";
    let library = Library::from_source("t.metal", &source(body), &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert!(
        narrowing_warnings(&library).is_empty(),
        "{}",
        library.warnings()
    );
    assert!(!library.wgsl().contains("i64") && !library.wgsl().contains("u64"));
}

/// MLX's shapes: a pointer advanced by `gid * size_t(n)`, a `size_t` loop
/// counter, `int64_t` strides read from a buffer, `ptrdiff_t`.
const ROWS: &str = "kernel void rows(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],\n\
                  constant const size_t& axis_size [[buffer(2)]], constant const int64_t* strides [[buffer(3)]],\n\
                  uint gid [[thread_position_in_grid]]) {\n\
  in += gid * size_t(axis_size);\n\
  float s = 0.0f;\n\
  for (size_t i = 0; i < axis_size; i++) { s += in[i]; }\n\
  ptrdiff_t back = -1;\n\
  out[int64_t(gid) * strides[0] + strides[1] + back + 1] = s + float(sizeof(size_t));\n\
}\n";

/// The CPU reference of [`ARITHMETIC`] in exact 64-bit arithmetic (Metal's
/// results), for `x`, the shift amounts and `count` threads.
/// `WideIntegers::Low32` with `Target::Wgpu` (what the runner picks on an
/// adapter without `shader-int64`, wgpu's GL backend): the WGSL has no
/// `i64`/`u64` and needs no `shader-int64`, and the layout is still Metal's.
#[test]
fn low32_on_wgpu_needs_no_shader_int64() {
    let native =
        Library::from_source("t.metal", &source(ITEMS), &options(Target::Wgpu, 1)).unwrap();
    let narrowed = Library::from_source(
        "t.metal",
        &source(ITEMS),
        &Options {
            wide_integers: msl2wgsl::library::WideIntegers::Low32,
            ..options(Target::Wgpu, 1)
        },
    )
    .unwrap();
    let features = |l: &Library| l.function("items").unwrap().required_features.clone();
    assert!(
        features(&native).iter().any(|f| f == "shader-int64"),
        "{:?}",
        features(&native)
    );
    assert!(
        !features(&narrowed).iter().any(|f| f == "shader-int64"),
        "{:?}",
        features(&narrowed)
    );
    assert!(native.wgsl().contains("u64"), "{}", native.wgsl());
    let wgsl = narrowed.wgsl();
    assert!(!wgsl.contains("u64") && !wgsl.contains("i64"), "{wgsl}");
    let size = |l: &Library| {
        let f = l.function("items").unwrap();
        format!("{:?}", f.arguments[0])
    };
    assert_eq!(size(&native), size(&narrowed), "reflection must not change");
}

fn arithmetic_reference(x: &[i64], amounts: &[u32]) -> (Vec<i64>, Vec<u64>) {
    let mut out = Vec::new();
    let mut uout = Vec::new();
    for (i, (&v, &s)) in x.iter().zip(amounts).enumerate() {
        let s64 = s % 64;
        out.push(v.wrapping_mul(3_000_000).wrapping_sub(5));
        out.push((v << 40).wrapping_add(v >> 35).wrapping_add(v / 7));
        out.push(v.wrapping_shl(s64));
        out.push(v >> s64);
        uout.push(
            (v as u64)
                .wrapping_mul(2_654_435_761)
                .wrapping_add((i as u64) << 3),
        );
        uout.push((u64::from(s).wrapping_shl(s64)) ^ v as u64);
    }
    (out, uout)
}

/// Inputs that fit in 32 bits (positive and negative), and shift amounts
/// from 0 to 63 and beyond.
fn arithmetic_inputs(count: usize) -> (Vec<i64>, Vec<u32>) {
    let x = (0..count as i64)
        .map(|i| (i - 20) * 123_457 + if i % 3 == 0 { -i * 30_000_000 } else { 17 })
        .collect();
    let amounts = (0..count as u32).map(|i| (i * 5) % 70).collect();
    (x, amounts)
}

fn i64_bytes(values: &[i64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[cfg(feature = "runner")]
mod gpu {
    use super::*;
    use common::gpu;
    use msl2wgsl::runner::{run_compute, run_kernel, Dispatch};
    use std::collections::BTreeMap;

    const COUNT: u32 = 64;

    fn dispatch() -> Dispatch {
        Dispatch::Threads {
            grid: [COUNT, 1, 1],
            threadgroup: [32, 1, 1],
        }
    }

    /// Runs `entry` translated for WebGPU (the runner's own translation is
    /// for wgpu).
    fn run_webgpu(
        src: &str,
        entry: &str,
        buffers: &BTreeMap<u32, Vec<u8>>,
    ) -> Option<BTreeMap<u32, Vec<u8>>> {
        let gpu = gpu()?;
        let options = options(Target::WebGpu, 32);
        let library = Library::from_source("t.metal", src, &options)
            .unwrap_or_else(|f| panic!("{}", f.render()));
        let function = library.function(entry).unwrap().clone();
        Some(
            run_compute(gpu, library.wgsl(), &function, &dispatch(), buffers)
                .unwrap_or_else(|e| panic!("{e}\n{}", library.wgsl())),
        )
    }

    /// Runs `entry` with wgpu's 64-bit integers; `None` without a GPU or
    /// where the adapter lacks `SHADER_INT64`.
    fn run_wgpu(
        src: &str,
        entry: &str,
        buffers: &BTreeMap<u32, Vec<u8>>,
    ) -> Option<BTreeMap<u32, Vec<u8>>> {
        let gpu = gpu()?;
        if !gpu
            .features()
            .contains(msl2wgsl::wgpu::Features::SHADER_INT64)
        {
            common::skip::missing_feature(gpu, "shader-int64");
            return None;
        }
        let options = options(Target::Wgpu, 32);
        Some(
            run_kernel(gpu, "t.metal", src, &options, entry, &dispatch(), buffers)
                .unwrap_or_else(|e| panic!("{e}")),
        )
    }

    fn item_buffers() -> BTreeMap<u32, Vec<u8>> {
        [(0, item_bytes(COUNT)), (1, vec![0u8; 6 * 4])]
            .into_iter()
            .collect()
    }

    #[test]
    fn a_struct_with_size_t_keeps_metal_s_bytes_on_webgpu() {
        let buffers = item_buffers();
        let Some(out) = run_webgpu(&source(ITEMS), "items", &buffers) else {
            return;
        };
        assert_eq!(out[&0], items_reference(&buffers[&0], false));
        assert_eq!(common::u32s(&out[&1]), SIZES);
    }

    #[test]
    fn a_struct_with_size_t_is_exact_on_wgpu() {
        let buffers = item_buffers();
        let Some(out) = run_wgpu(&source(ITEMS), "items", &buffers) else {
            return;
        };
        assert_eq!(out[&0], items_reference(&buffers[&0], true));
        assert_eq!(common::u32s(&out[&1]), SIZES);
    }

    fn arithmetic_buffers() -> (BTreeMap<u32, Vec<u8>>, Vec<i64>, Vec<u32>) {
        let (x, amounts) = arithmetic_inputs(COUNT as usize);
        let buffers = [
            (0, i64_bytes(&x)),
            (1, vec![0u8; COUNT as usize * 4 * 8]),
            (2, vec![0u8; COUNT as usize * 2 * 8]),
            (3, amounts.iter().flat_map(|a| a.to_le_bytes()).collect()),
        ]
        .into_iter()
        .collect();
        (buffers, x, amounts)
    }

    /// On WebGPU each result is the low 32 bits of Metal's exact result,
    /// stored with its sign (`long`) or zero (`ulong`) extension.
    #[test]
    fn long_arithmetic_on_webgpu_gives_the_low_32_bits() {
        let (buffers, x, amounts) = arithmetic_buffers();
        let Some(out) = run_webgpu(&source(ARITHMETIC), "arith", &buffers) else {
            return;
        };
        let (exact, uexact) = arithmetic_reference(&x, &amounts);
        let want: Vec<u64> = exact.iter().map(|&v| i64::from(v as i32) as u64).collect();
        let uwant: Vec<u64> = uexact.iter().map(|&v| u64::from(v as u32)).collect();
        let got = words(&out[&1]);
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g,
                w,
                "long {k} (thread {}, x {}, s {})",
                k / 4,
                x[k / 4],
                amounts[k / 4]
            );
        }
        assert_eq!(words(&out[&2]), uwant, "ulong");
    }

    /// [`ROWS`] on both targets: every index fits in 32 bits, so both
    /// give Metal's results.
    #[test]
    fn mlx_shaped_size_t_indexing_on_both_targets() {
        let n = 5usize;
        let input: Vec<f32> = (0..COUNT as usize * n)
            .map(|k| (k % 13) as f32 - 4.0)
            .collect();
        let strides: [i64; 2] = [2, 1];
        let buffers: BTreeMap<u32, Vec<u8>> = [
            (0, common::f32_bytes(&input)),
            (1, vec![0u8; (2 * COUNT as usize + 1) * 4]),
            (2, (n as u64).to_le_bytes().to_vec()),
            (3, i64_bytes(&strides)),
        ]
        .into_iter()
        .collect();
        let mut want = vec![0f32; 2 * COUNT as usize + 1];
        for g in 0..COUNT as usize {
            let sum: f32 = input[g * n..g * n + n].iter().sum();
            want[g * 2 + 1] = sum + 8.0;
        }
        if let Some(out) = run_webgpu(&source(ROWS), "rows", &buffers) {
            assert_eq!(common::f32s(&out[&1]), want, "webgpu");
        }
        if let Some(out) = run_wgpu(&source(ROWS), "rows", &buffers) {
            assert_eq!(common::f32s(&out[&1]), want, "wgpu");
        }
    }

    #[test]
    fn long_arithmetic_on_wgpu_is_exact() {
        let (buffers, x, amounts) = arithmetic_buffers();
        let Some(out) = run_wgpu(&source(ARITHMETIC), "arith", &buffers) else {
            return;
        };
        let (exact, uexact) = arithmetic_reference(&x, &amounts);
        let want: Vec<u64> = exact.iter().map(|&v| v as u64).collect();
        assert_eq!(words(&out[&1]), want, "long");
        assert_eq!(words(&out[&2]), uexact, "ulong");
    }
}
