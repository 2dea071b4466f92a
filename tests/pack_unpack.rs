//! The pack and unpack functions (`src/lower/stdlib/pack.rs`): GPU runs
//! checked against CPU models of Metal's conversion rules ("Conversion
//! Rules for Normalized Integer Pixel Data Types"), and their diagnostics.
//!
//! Packing is compared bit for bit: float → unorm is
//! `round_to_nearest_even(clamp(x, 0, 1) * (2^n - 1))` (the product an `f32`
//! multiplication), snorm the same with [-1, 1] and `2^(n-1) - 1`, and a
//! NaN lane is 0. Unpacking allows the rules' 1.5 ULP, with the ends (0,
//! 1, -1, both -128 and -127 for snorm8) exact. The sRGB forms go through
//! `pow`, whose WGSL accuracy is inherited from `exp2(y * log2(x))`, so
//! they get a tolerance (stated at the comparison).

mod common;

use msl2wgsl::{Library, Options};

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// The first line of the error translating `body` (after the prelude).
fn first_error(body: &str) -> String {
    match Library::from_source("t.metal", &format!("{PRELUDE}{body}"), &Options::default()) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.render().lines().next().unwrap_or_default().to_string(),
    }
}

#[test]
fn pack_takes_exactly_its_vector_type() {
    let body = "kernel void k(device uint* o [[buffer(0)]], device half4* h [[buffer(1)]]) {\n  o[0] = pack_float_to_unorm4x8(h[0]);\n}\n";
    let want = "t.metal:4:33: error: no matching function for call to `pack_float_to_unorm4x8` with an argument of type `half4`";
    assert!(first_error(body).starts_with(want), "{}", first_error(body));
    let body = "kernel void k(device uint* o [[buffer(0)]], device float4* f [[buffer(1)]]) {\n  o[0] = pack_float_to_unorm2x16(f[0]);\n}\n";
    assert!(first_error(body).starts_with("t.metal:4:34: error: no matching function for call to `pack_float_to_unorm2x16` with an argument of type `float4`"));
    let body = "kernel void k(device float4* o [[buffer(0)]]) {\n  o[0] = unpack_unorm4x8_to_float(1u, 2u);\n}\n";
    assert!(first_error(body)
        .starts_with("t.metal:4:10: error: `unpack_unorm4x8_to_float` takes 1 argument, 2 given"));
}

#[test]
fn packing_is_explicit_arithmetic_not_wgsl_pack_builtins() {
    let src = format!(
        "{PRELUDE}kernel void k(device uint* o [[buffer(0)]], device float4* f [[buffer(1)]]) {{\n  o[0] = pack_float_to_unorm4x8(f[0]) + pack_float_to_snorm2x16(f[1].xy);\n  f[2] = unpack_snorm4x8_to_float(o[1]);\n}}\n"
    );
    let wgsl = Library::from_source("t.metal", &src, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()))
        .wgsl()
        .to_string();
    // SPIR-V's PackUnorm4x8 may round ties either way; Metal rounds to even.
    for builtin in ["pack4x8", "pack2x16", "unpack4x8"] {
        assert!(!wgsl.contains(builtin), "{wgsl}");
    }
    assert!(wgsl.contains("round("), "{wgsl}");
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

kernel void pack_float(device const float4* x [[buffer(0)]],
                       device uint* o [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    float4 v = x[i];
    device uint* r = o + i * 7u;
    r[0] = pack_float_to_unorm4x8(v);
    r[1] = pack_float_to_snorm4x8(v);
    r[2] = pack_float_to_unorm2x16(v.xy);
    r[3] = pack_float_to_snorm2x16(v.zw);
    r[4] = pack_float_to_unorm10a2(v);
    r[5] = uint(pack_float_to_unorm565(v.xyz));
    r[6] = pack_float_to_srgb_unorm4x8(v);
}

kernel void pack_half(device const half4* x [[buffer(0)]],
                      device uint* o [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    half4 v = x[i];
    device uint* r = o + i * 7u;
    r[0] = pack_half_to_unorm4x8(v);
    r[1] = pack_half_to_snorm4x8(v);
    r[2] = pack_half_to_unorm2x16(v.xy);
    r[3] = pack_half_to_snorm2x16(v.zw);
    r[4] = pack_half_to_unorm10a2(v);
    r[5] = uint(pack_half_to_unorm565(v.xyz));
    r[6] = pack_half_to_srgb_unorm4x8(v);
}

kernel void unpack_float(device const uint* w [[buffer(0)]],
                         device float4* o [[buffer(1)]],
                         uint i [[thread_position_in_grid]]) {
    uint u = w[i];
    device float4* r = o + i * 7u;
    r[0] = unpack_unorm4x8_to_float(u);
    r[1] = unpack_snorm4x8_to_float(u);
    r[2] = float4(unpack_unorm2x16_to_float(u), 0.0f, 0.0f);
    r[3] = float4(unpack_snorm2x16_to_float(u), 0.0f, 0.0f);
    r[4] = unpack_unorm10a2_to_float(u);
    r[5] = float4(unpack_unorm565_to_float(ushort(u)), 0.0f);
    r[6] = unpack_unorm4x8_srgb_to_float(u);
}

kernel void unpack_half(device const uint* w [[buffer(0)]],
                        device half4* o [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
    uint u = w[i];
    device half4* r = o + i * 7u;
    r[0] = unpack_unorm4x8_to_half(u);
    r[1] = unpack_snorm4x8_to_half(u);
    r[2] = half4(unpack_unorm2x16_to_half(u), 0.0h, 0.0h);
    r[3] = half4(unpack_snorm2x16_to_half(u), 0.0h, 0.0h);
    r[4] = unpack_unorm10a2_to_half(u);
    r[5] = half4(unpack_unorm565_to_half(ushort(u)), 0.0h);
    r[6] = unpack_unorm4x8_srgb_to_half(u);
}
"#;

    fn run(entry: &str, threads: usize, input: Vec<u8>, out_len: usize) -> Option<Vec<u8>> {
        run_in(HalfMode::F16, entry, threads, input, out_len)
    }

    /// `run` with `half` as WGSL `f16` or as `f32` rounded to half.
    fn run_in(
        half: HalfMode,
        entry: &str,
        threads: usize,
        input: Vec<u8>,
        out_len: usize,
    ) -> Option<Vec<u8>> {
        let gpu = gpu()?;
        let buffers: BTreeMap<u32, Vec<u8>> = [(0, input), (1, vec![0; out_len])].into();
        let dispatch = Dispatch::Threads {
            grid: [threads as u32, 1, 1],
            threadgroup: [64, 1, 1],
        };
        let options = Options {
            half,
            ..Options::default()
        };
        match run_kernel(
            gpu,
            "pack.metal",
            SOURCE,
            &options,
            entry,
            &dispatch,
            &buffers,
        ) {
            Ok(mut out) => out.remove(&1),
            Err(e) => panic!("{entry}: {e}"),
        }
    }

    /// The layouts as (lane widths, signed), in the kernels' output order
    /// (sRGB is checked apart).
    const LAYOUTS: [(&str, &[u32], bool); 6] = [
        ("unorm4x8", &[8, 8, 8, 8], false),
        ("snorm4x8", &[8, 8, 8, 8], true),
        ("unorm2x16", &[16, 16], false),
        ("snorm2x16", &[16, 16], true),
        ("unorm10a2", &[10, 10, 10, 2], false),
        ("unorm565", &[5, 6, 5], false),
    ];

    fn scale(width: u32, signed: bool) -> f32 {
        ((1u32 << (width - u32::from(signed))) - 1) as f32
    }

    /// Metal's float → normalized integer rule for one lane.
    fn code(x: f32, width: u32, signed: bool) -> u32 {
        if x.is_nan() {
            return 0;
        }
        let low = if signed { -1.0 } else { 0.0 };
        let q = (x.clamp(low, 1.0) * scale(width, signed)).round_ties_even();
        (q as i32 as u32) & ((1u32 << width) - 1)
    }

    fn pack_reference(lanes: &[f32], widths: &[u32], signed: bool) -> u32 {
        let mut word = 0;
        let mut at = 0;
        for (x, &w) in lanes.iter().zip(widths) {
            word |= code(*x, w, signed) << at;
            at += w;
        }
        word
    }

    /// The lanes each packed output of the kernels reads from `v`.
    fn lanes_of(k: usize, v: [f32; 4]) -> Vec<f32> {
        match k {
            2 => v[..2].to_vec(),
            3 => v[2..].to_vec(),
            5 => v[..3].to_vec(),
            _ => v.to_vec(),
        }
    }

    fn linear_to_srgb(c: f64) -> f64 {
        let c = c.clamp(0.0, 1.0);
        if c <= 0.0031308 {
            12.92 * c
        } else {
            1.055 * c.powf(1.0 / 2.4) - 0.055
        }
    }

    fn srgb_to_linear(c: f64) -> f64 {
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    }

    /// Values just below, at and above `(k + 0.5) / scale` for every
    /// layout's scales: where a wrong tie rule or a fused product shows.
    fn tie_points() -> Vec<f32> {
        let mut v = Vec::new();
        for scale in [255.0f32, 127.0, 65535.0, 32767.0, 1023.0, 3.0, 31.0, 63.0] {
            for k in [0.0f32, 1.0, 2.0, 7.0, 100.0, scale - 2.0, scale - 1.0] {
                let t = (k + 0.5) / scale;
                for x in [
                    t,
                    f32::from_bits(t.to_bits() - 1),
                    f32::from_bits(t.to_bits() + 1),
                ] {
                    v.extend([x, -x]);
                }
            }
        }
        v
    }

    fn pack_inputs() -> Vec<f32> {
        let mut v = vec![
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::MIN_POSITIVE,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            f32::from_bits(1.0f32.to_bits() - 1),
            1e30,
            -1e30,
        ];
        v.extend(tie_points());
        let mut s = 12345u32;
        while v.len() % 4 != 0 || v.len() < 1024 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            v.push((s >> 8) as f32 / (1u32 << 23) as f32 - 1.0);
        }
        // Rotate lane positions so each edge value reaches every lane.
        let n = v.len();
        let mut out = Vec::with_capacity(n * 4);
        for i in 0..n {
            for lane in 0..4 {
                out.push(v[(i + lane * 7) % n]);
            }
        }
        out
    }

    fn check_packs(got: &[u32], inputs: &[[f32; 4]], what: &str) {
        for (i, v) in inputs.iter().enumerate() {
            for (k, (name, widths, signed)) in LAYOUTS.iter().enumerate() {
                let want = pack_reference(&lanes_of(k, *v), widths, *signed);
                assert_eq!(
                    got[i * 7 + k],
                    want,
                    "{what} {name}({v:?}): got {:#x}, want {want:#x}",
                    got[i * 7 + k]
                );
            }
            // sRGB: pow's error may move a value across a rounding point,
            // so each code may be one off (the rules accept an absolute
            // error up to 0.6 of a code for approximate rounding).
            let word = got[i * 7 + 6];
            for (lane, x) in v.iter().enumerate() {
                let enc = if lane == 3 || x.is_nan() {
                    f64::from(code(*x, 8, false))
                } else {
                    (linear_to_srgb(f64::from(*x)) * 255.0).round()
                };
                let c = f64::from((word >> (8 * lane)) & 0xff);
                assert!(
                    (c - enc).abs() <= 1.0,
                    "{what} srgb({v:?}) lane {lane}: got {c}, want {enc}"
                );
            }
        }
    }

    #[test]
    fn pack_float_matches_metal_rules() {
        let x = pack_inputs();
        let n = x.len() / 4;
        let Some(out) = run("pack_float", n, f32_bytes(&x), n * 7 * 4) else {
            return;
        };
        let inputs: Vec<[f32; 4]> = x.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
        check_packs(&u32s(&out), &inputs, "pack_float_to");
    }

    #[test]
    fn pack_half_matches_metal_rules() {
        // The half inputs, and the same values widened (exactly) to f32 for
        // the reference.
        let h: Vec<f16> = pack_inputs().iter().map(|&x| f16::from_f32(x)).collect();
        let n = h.len() / 4;
        let bytes: Vec<u8> = h.iter().flat_map(|x| x.to_le_bytes()).collect();
        let inputs: Vec<[f32; 4]> = h
            .chunks(4)
            .map(|c| [c[0], c[1], c[2], c[3]].map(f16::to_f32))
            .collect();
        for mode in [HalfMode::F16, HalfMode::F32] {
            let Some(out) = run_in(mode, "pack_half", n, bytes.clone(), n * 7 * 4) else {
                return;
            };
            check_packs(&u32s(&out), &inputs, &format!("{mode:?} pack_half_to"));
        }
    }

    /// Metal's normalized integer → float rule for one lane, exact in f64.
    fn unpack_lane(word: u32, offset: u32, width: u32, signed: bool) -> f64 {
        let bits = (word >> offset) & ((1u32 << width) - 1);
        let c = if signed {
            ((bits << (32 - width)) as i32 >> (32 - width)) as f64
        } else {
            f64::from(bits)
        };
        (c / f64::from(scale(width, signed))).max(-1.0)
    }

    fn unpack_inputs() -> Vec<u32> {
        let mut v: Vec<u32> = (0..256u32)
            .map(|b| b | ((b ^ 0x80) << 8) | ((255 - b) << 16) | (b.wrapping_mul(37) & 0xff) << 24)
            .collect();
        v.extend([
            0,
            u32::MAX,
            0x8000_8000,
            0x8001_8001,
            0x7fff_7fff,
            0x0001_ffff,
            0x8080_8080,
            0x8181_8181,
            0x7f7f_7f7f,
            0x3ff0_03ff,
            0xc000_0000,
            0x0000_f81f,
            0x0000_07e0,
        ]);
        let mut s = 777u32;
        while v.len() < 1024 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            v.push(s);
        }
        v
    }

    /// Checks one unpacked lane: exact at the ends, else within 1.5 ULP of
    /// the result type (`ulp` of the wanted value).
    fn check_lane(got: f64, want: f64, ulp: f64, what: &str) {
        if want == 0.0 || want.abs() == 1.0 {
            assert_eq!(got, want, "{what}: the ends are exact");
        } else {
            assert!(
                (got - want).abs() <= 1.5 * ulp,
                "{what}: got {got:e}, want {want:e}"
            );
        }
    }

    fn f32_ulp(x: f64) -> f64 {
        let a = (x as f32).abs();
        f64::from(f32::from_bits(a.to_bits() + 1) - a)
    }

    fn f16_ulp(x: f64) -> f64 {
        let a = f16::from_f64(x.abs());
        f16::from_bits(a.to_bits() + 1).to_f64() - a.to_f64()
    }

    fn check_unpacks(got: impl Fn(usize) -> f64, words: &[u32], ulp: fn(f64) -> f64, what: &str) {
        for (i, &w) in words.iter().enumerate() {
            for (k, (name, widths, signed)) in LAYOUTS.iter().enumerate() {
                let mut at = 0;
                for (lane, &width) in widths.iter().enumerate() {
                    let want = unpack_lane(w, at, width, *signed);
                    let at_what = format!("{what} {name}({w:#x}) lane {lane}");
                    check_lane(got((i * 7 + k) * 4 + lane), want, ulp(want), &at_what);
                    at += width;
                }
            }
            for lane in 0..4 {
                let c = f64::from((w >> (8 * lane)) & 0xff) / 255.0;
                let want = if lane == 3 { c } else { srgb_to_linear(c) };
                let g = got((i * 7 + 6) * 4 + lane);
                // pow's accuracy (WGSL: that of exp2(y * log2(x)), which
                // grows with the exponent) on top of the rounding: 2 ULP,
                // or a relative 2^-10 for half, 2^-19 for float (16 ULP).
                let relative = ulp(1.0) * 2f64.powi(4);
                let tol = ulp(want).max(relative * want) * 2.0;
                assert!(
                    (g - want).abs() <= tol + 1e-9,
                    "{what} srgb({w:#x}) lane {lane}: got {g:e}, want {want:e}"
                );
            }
        }
    }

    #[test]
    fn unpack_to_float_matches_metal_rules() {
        let w = unpack_inputs();
        let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        let Some(out) = run("unpack_float", w.len(), bytes, w.len() * 7 * 16) else {
            return;
        };
        let f = f32s(&out);
        check_unpacks(|j| f64::from(f[j]), &w, f32_ulp, "unpack_to_float");
    }

    #[test]
    fn unpack_to_half_matches_metal_rules() {
        let w = unpack_inputs();
        let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        for mode in [HalfMode::F16, HalfMode::F32] {
            let Some(out) = run_in(mode, "unpack_half", w.len(), bytes.clone(), w.len() * 7 * 8)
            else {
                return;
            };
            let h: Vec<f16> = out
                .chunks_exact(2)
                .map(|c| f16::from_le_bytes([c[0], c[1]]))
                .collect();
            let what = format!("{mode:?} unpack_to_half");
            check_unpacks(|j| h[j].to_f64(), &w, f16_ulp, &what);
        }
    }
}
