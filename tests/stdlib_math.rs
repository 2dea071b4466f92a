//! `fmin`/`fmax` with MSL's NaN rule, `ilogb` and `nextafter` of `half`
//! (`src/lower/stdlib/ieee.rs`): GPU runs against CPU references written
//! from the definitions (C's `fmin`/`fmax`/`ilogb`/`nextafter`, which MSL's
//! common and math function tables follow), at the edges: NaN, ±infinity,
//! ±0, subnormals, powers of two and the ends of `half`'s range.
//!
//! `fmin`, `fmax` and `ilogb` are exact (MSL's accuracy table: 0 ULP);
//! `nextafter` is exact by definition. WGSL lets implementations flush
//! subnormal operands of `min`/`max` to zero, so a zero is accepted where
//! a subnormal is wanted there; `ilogb` reads bits, so it is exact for
//! subnormals too.

mod common;

use msl2wgsl::{Library, Options};

#[test]
fn fp_ilogb_constants_are_apples() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device int* o [[buffer(0)]]) {\n  o[0] = FP_ILOGB0;\n  o[1] = FP_ILOGBNAN;\n}\n";
    let wgsl = Library::from_source("t.metal", src, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()))
        .wgsl()
        .to_string();
    // INT_MIN, both (Apple's <math.h>).
    assert_eq!(wgsl.matches("-2147483648").count(), 2, "{wgsl}");
}

#[cfg(feature = "runner")]
mod gpu {
    use super::common::{f32_bytes, f32s, gpu, u32s};
    use half::f16;
    use msl2wgsl::library::HalfMode;
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use msl2wgsl::Options;
    use std::collections::BTreeMap;

    const SOURCE: &str = r#"
#include <metal_stdlib>
using namespace metal;

kernel void ieee_float(device const float* x [[buffer(0)]],
                       device const float* y [[buffer(1)]],
                       device float* o [[buffer(2)]],
                       device int* e [[buffer(3)]],
                       uint i [[thread_position_in_grid]]) {
    o[i * 6u] = fmin(x[i], y[i]);
    o[i * 6u + 1u] = fmax(x[i], y[i]);
    float2 v = fmin(float2(y[i], x[i]), float2(x[i], y[i]));
    o[i * 6u + 2u] = v.x;
    o[i * 6u + 3u] = v.y;
    o[i * 6u + 4u] = fmin3(x[i], y[i], 0.5f);
    o[i * 6u + 5u] = fmax3(y[i], -0.5f, x[i]);
    e[i * 2u] = ilogb(x[i]);
    e[i * 2u + 1u] = ilogb(float2(0.0f, y[i])).y;
}

kernel void ieee_half(device const half* x [[buffer(0)]],
                      device const half* y [[buffer(1)]],
                      device half* o [[buffer(2)]],
                      device int* e [[buffer(3)]],
                      uint i [[thread_position_in_grid]]) {
    o[i * 4u] = fmin(x[i], y[i]);
    o[i * 4u + 1u] = fmax(x[i], y[i]);
    o[i * 4u + 2u] = nextafter(x[i], y[i]);
    o[i * 4u + 3u] = nextafter(half2(y[i], x[i]), half2(x[i], y[i])).y;
    e[i * 2u] = ilogb(x[i]);
    e[i * 2u + 1u] = ilogb(y[i]);
}
"#;

    fn run(entry: &str, n: usize, x: Vec<u8>, y: Vec<u8>, out: usize) -> Option<[Vec<u8>; 2]> {
        run_in(HalfMode::F16, entry, n, [x, y], out)
    }

    /// `run` with `half` as WGSL `f16` or as `f32` rounded to half.
    fn run_in(
        half: HalfMode,
        entry: &str,
        n: usize,
        [x, y]: [Vec<u8>; 2],
        out: usize,
    ) -> Option<[Vec<u8>; 2]> {
        let gpu = gpu()?;
        let buffers: BTreeMap<u32, Vec<u8>> =
            [(0, x), (1, y), (2, vec![0; out]), (3, vec![0; n * 8])].into();
        let dispatch = Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [64, 1, 1],
        };
        let options = Options {
            half,
            ..Options::default()
        };
        match run_kernel(
            gpu,
            "ieee.metal",
            SOURCE,
            &options,
            entry,
            &dispatch,
            &buffers,
        ) {
            Ok(mut o) => Some([o.remove(&2).unwrap(), o.remove(&3).unwrap()]),
            Err(e) => panic!("{entry}: {e}"),
        }
    }

    /// C's `fmin`/`fmax`: a NaN operand gives the other one.
    fn c_min_max(x: f64, y: f64, max: bool) -> f64 {
        match (x.is_nan(), y.is_nan()) {
            (true, _) => y,
            (_, true) => x,
            _ if max => x.max(y),
            _ => x.min(y),
        }
    }

    /// C's `ilogb` with Apple's `FP_ILOGB0` and `FP_ILOGBNAN` (`INT_MIN`).
    fn c_ilogb(x: f64) -> i32 {
        if x == 0.0 || x.is_nan() {
            return i32::MIN;
        }
        if x.is_infinite() {
            return i32::MAX;
        }
        // Exact: |x| is a float or half value, 2^e ≤ |x| < 2^(e+1).
        let mut e = 0i32;
        let mut a = x.abs();
        while a >= 2.0 {
            a /= 2.0;
            e += 1;
        }
        while a < 1.0 {
            a *= 2.0;
            e -= 1;
        }
        e
    }

    /// Equal, both NaN, or (`flush`) a subnormal `want` read as zero.
    fn same(got: f64, want: f64, subnormal: f64, flush: bool) -> bool {
        got == want
            || (got.is_nan() && want.is_nan())
            || (flush && got == 0.0 && want.abs() < subnormal)
    }

    fn float_edges() -> Vec<f32> {
        let sub = f32::from_bits(1);
        vec![
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            sub,
            -sub,
            f32::from_bits(0x007f_ffff),
            f32::MIN_POSITIVE,
            f32::MAX,
            -f32::MAX,
            1.0,
            -1.0,
            0.75,
            3.0,
            1e-30,
            -123.5,
            2.0f32.powi(100),
        ]
    }

    #[test]
    fn float_fmin_fmax_ilogb_match_c() {
        let edges = float_edges();
        let mut x = Vec::new();
        let mut y = Vec::new();
        for &a in &edges {
            for &b in &edges {
                x.push(a);
                y.push(b);
            }
        }
        let n = x.len();
        let Some([o, e]) = run("ieee_float", n, f32_bytes(&x), f32_bytes(&y), n * 24) else {
            return;
        };
        let (o, e) = (f32s(&o), u32s(&e));
        let min_normal = f64::from(f32::MIN_POSITIVE);
        for i in 0..n {
            let (a, b) = (f64::from(x[i]), f64::from(y[i]));
            let checks = [
                ("fmin", o[i * 6], c_min_max(a, b, false)),
                ("fmax", o[i * 6 + 1], c_min_max(a, b, true)),
                ("fmin(float2).x", o[i * 6 + 2], c_min_max(b, a, false)),
                ("fmin(float2).y", o[i * 6 + 3], c_min_max(a, b, false)),
                (
                    "fmin3(x, y, 0.5)",
                    o[i * 6 + 4],
                    c_min_max(c_min_max(a, b, false), 0.5, false),
                ),
                (
                    "fmax3(y, -0.5, x)",
                    o[i * 6 + 5],
                    c_min_max(c_min_max(b, -0.5, true), a, true),
                ),
            ];
            for (what, got, want) in checks {
                assert!(
                    same(f64::from(got), want, min_normal, true),
                    "{what}({a:e}, {b:e}): got {got:e}, want {want:e}"
                );
            }
            assert_eq!(e[i * 2] as i32, c_ilogb(a), "ilogb({a:e})");
            assert_eq!(e[i * 2 + 1] as i32, c_ilogb(b), "ilogb(float2).y ({b:e})");
        }
    }

    /// C's `nextafter` on `half` bit patterns.
    fn c_nextafter(x: f16, y: f16) -> f16 {
        if x.is_nan() || y.is_nan() {
            return f16::NAN;
        }
        if x == y {
            return y;
        }
        if x.to_f32() == 0.0 {
            let sign = y.to_bits() & 0x8000;
            return f16::from_bits(sign | 1);
        }
        let away = (x < y) == (x.to_f32() > 0.0);
        let bits = x.to_bits();
        f16::from_bits(if away { bits + 1 } else { bits - 1 })
    }

    fn half_edges() -> Vec<f16> {
        let b = f16::from_bits;
        let mut v = vec![
            f16::NAN,
            f16::INFINITY,
            f16::NEG_INFINITY,
            b(0),
            b(0x8000),
            b(1),
            b(0x8001),
            b(0x03ff),
            b(0x0400),
            b(0x0401),
            f16::MAX,
            f16::MIN,
            f16::ONE,
            f16::NEG_ONE,
            f16::from_f32(2.0),
            f16::from_f32(0.5),
            f16::from_f32(1.5),
            f16::from_f32(-1000.0),
            f16::from_f32(1024.0),
        ];
        v.push(b(0x7bfe));
        v
    }

    #[test]
    fn half_fmin_fmax_nextafter_ilogb_match_c() {
        let edges = half_edges();
        let mut x = Vec::new();
        let mut y = Vec::new();
        for &a in &edges {
            for &b in &edges {
                x.push(a);
                y.push(b);
            }
        }
        let n = x.len();
        let bytes = |v: &[f16]| v.iter().flat_map(|h| h.to_le_bytes()).collect::<Vec<u8>>();
        for mode in [HalfMode::F16, HalfMode::F32] {
            let Some([o, e]) = run_in(mode, "ieee_half", n, [bytes(&x), bytes(&y)], n * 8) else {
                return;
            };
            check_half_results(mode, &x, &y, &o, &e);
        }
    }

    fn check_half_results(mode: HalfMode, x: &[f16], y: &[f16], o: &[u8], e: &[u8]) {
        let n = x.len();
        let o: Vec<f16> = o
            .chunks_exact(2)
            .map(|c| f16::from_le_bytes([c[0], c[1]]))
            .collect();
        let e = u32s(e);
        let min_normal = f16::MIN_POSITIVE.to_f64();
        for i in 0..n {
            let (a, b) = (x[i], y[i]);
            let (fa, fb) = (a.to_f64(), b.to_f64());
            let checks = [
                ("fmin", o[i * 4], c_min_max(fa, fb, false), true),
                ("fmax", o[i * 4 + 1], c_min_max(fa, fb, true), true),
                ("nextafter", o[i * 4 + 2], c_nextafter(a, b).to_f64(), false),
                (
                    "nextafter(half2).y",
                    o[i * 4 + 3],
                    c_nextafter(a, b).to_f64(),
                    false,
                ),
            ];
            for (what, got, want, flush) in checks {
                let got = got.to_f64();
                assert!(
                    same(got, want, min_normal, flush),
                    "{mode:?} {what}({fa:e}, {fb:e}): got {got:e}, want {want:e}"
                );
            }
            assert_eq!(e[i * 2] as i32, c_ilogb(fa), "{mode:?} ilogb(half {fa:e})");
            assert_eq!(
                e[i * 2 + 1] as i32,
                c_ilogb(fb),
                "{mode:?} ilogb(half {fb:e})"
            );
        }
    }
}

/// The diagnostics of translating `body` (after the metal_stdlib prelude,
/// so its first line is line 3).
fn errors(body: &str) -> String {
    let src = format!("#include <metal_stdlib>\nusing namespace metal;\n{body}");
    match Library::from_source("t.metal", &src, &Options::default()) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.render(),
    }
}

#[test]
fn fences_that_order_nothing_translate_to_nothing() {
    for fence in [
        "atomic_thread_fence(mem_flags::mem_device, memory_order_relaxed, thread_scope_device);",
        "atomic_thread_fence(mem_flags::mem_none, memory_order_seq_cst, thread_scope_device);",
        "atomic_thread_fence(mem_flags::mem_device | mem_flags::mem_threadgroup, memory_order_seq_cst, thread_scope_thread);",
    ] {
        let src = format!("#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device int* o [[buffer(0)]]) {{\n  o[0] = 1;\n  {fence}\n  o[1] = 2;\n}}\n");
        let wgsl = Library::from_source("t.metal", &src, &Options::default())
            .unwrap_or_else(|f| panic!("{fence}: {}", f.render()))
            .wgsl()
            .to_string();
        assert!(!wgsl.contains("Barrier"), "{fence}:\n{wgsl}");
    }
}

/// Fences between threads become barriers (`tests/mlx_sema.rs`); their
/// arguments are checked.
#[test]
fn fence_arguments_are_checked() {
    let body = "kernel void k(device int* o [[buffer(0)]]) {\n  atomic_thread_fence(mem_flags::mem_device, 3, thread_scope_device);\n}\n";
    assert!(
        errors(body).starts_with("t.metal:4:46: error: expected a memory order"),
        "{}",
        errors(body)
    );
}

/// `as_type` between a 64-bit scalar and two 32-bit lanes (`as_type.rs`):
/// low word first, as Metal's little-endian layout puts it.
#[cfg(feature = "runner")]
#[test]
fn as_type_splits_and_joins_64_bit_words() {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let Some(gpu) = common::gpu() else { return };
    if !gpu
        .features()
        .contains(msl2wgsl::wgpu::Features::SHADER_INT64)
    {
        common::skip::missing_feature(gpu, "shader-int64");
        return;
    }
    let src = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device uint2* v [[buffer(0)]], device float2* f [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n  ulong u = as_type<ulong>(v[i]) + 1ul;\n  v[i] = as_type<uint2>(u);\n  long s = as_type<long>(f[i]);\n  f[i] = as_type<float2>(s ^ 1l);\n}\n";
    let words: Vec<u64> = vec![0, u64::MAX, 0xffff_ffff, 0x1234_5678_9abc_def0, 1 << 63];
    let floats: Vec<[f32; 2]> = vec![
        [1.5, -2.0],
        [0.0, f32::MAX],
        [3.25, 1e-3],
        [-0.0, 7.0],
        [9.0, 10.0],
    ];
    let buffers = [
        (0, words.iter().flat_map(|w| w.to_le_bytes()).collect()),
        (
            1,
            floats
                .iter()
                .flatten()
                .flat_map(|f| f.to_le_bytes())
                .collect(),
        ),
    ]
    .into();
    let dispatch = Dispatch::Threads {
        grid: [words.len() as u32, 1, 1],
        threadgroup: [8, 1, 1],
    };
    let out = run_kernel(
        gpu,
        "t.metal",
        src,
        &Options::default(),
        "k",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for (i, w) in words.iter().enumerate() {
        let got = u64::from_le_bytes(out[&0][i * 8..i * 8 + 8].try_into().unwrap());
        assert_eq!(
            got,
            w.wrapping_add(1),
            "as_type<uint2>(as_type<ulong>({w:#x}) + 1)"
        );
        let [a, b] = floats[i];
        let bits = (u64::from(b.to_bits()) << 32 | u64::from(a.to_bits())) ^ 1;
        let got = u64::from_le_bytes(out[&1][i * 8..i * 8 + 8].try_into().unwrap());
        assert_eq!(got, bits, "as_type<float2>(as_type<long>({a}, {b}) ^ 1)");
    }
}

/// WGSL's `min`/`max` may return either operand at NaN (and Vulkan's
/// `FMin`/`FMax` are undefined there), so the NaN rule must be explicit
/// in the WGSL, whatever one driver happens to return.
#[test]
fn fmin_fmax_test_nan_bits_explicitly() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* o [[buffer(0)]]) {\n  o[0] = fmin(o[1], o[2]);\n  o[3] = fmax(o[4], o[5]);\n  o[6] = min(o[7], o[8]);\n}\n";
    let wgsl = Library::from_source("t.metal", src, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()))
        .wgsl()
        .to_string();
    // Two NaN tests each for fmin and fmax; plain `min` has none.
    assert_eq!(wgsl.matches("> 2139095040u").count(), 4, "{wgsl}");
}
