//! `half` without `shader-f16` (`HalfMode::F32`): the WGSL has no `f16`,
//! and kernels over `half` buffers give, bit for bit, what Metal's `half`
//! arithmetic gives (a CPU reference computed with the `half` crate from
//! exact `f64` values), in both modes where the adapter has `shader-f16`.

mod common;

use msl2wgsl::library::HalfMode;
use msl2wgsl::{Library, Options, Target};

fn options(half: HalfMode, target: Target) -> Options {
    Options {
        half,
        target,
        ..Options::default()
    }
}

/// Every `.metal` file under `fixtures/` that mentions a `half` type.
fn half_fixtures() -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "metal") {
                let text = std::fs::read_to_string(&path).unwrap();
                if mentions_half(&text) {
                    out.push(path);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &mut out,
    );
    out
}

/// True if `text` has a token `half`, `halfN`, `halfNxM` or `packed_halfN`.
fn mentions_half(text: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|t| {
            let t = t.strip_prefix("packed_").unwrap_or(t);
            t.strip_prefix("half")
                .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == 'x'))
        })
}

/// True if the WGSL names the `f16` type (or enables it).
fn mentions_f16(wgsl: &str) -> bool {
    wgsl.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|t| t == "f16")
}

/// Parses and validates WGSL with every capability except `f16`
/// (`SHADER_FLOAT16_IN_FLOAT32`, kept, is `pack2x16float` and friends:
/// core WGSL, which naga gates for old GLSL targets).
fn validate_without_f16(wgsl: &str) -> Result<(), String> {
    use naga::valid::{Capabilities, ValidationFlags, Validator};
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    let caps = Capabilities::all() - Capabilities::SHADER_FLOAT16;
    Validator::new(ValidationFlags::all(), caps)
        .validate(&module)
        .map(|_| ())
        .map_err(|e| format!("{e:?}"))
}

#[test]
fn every_half_fixture_translates_the_same_in_both_modes() {
    let fixtures = half_fixtures();
    assert!(fixtures.len() >= 5, "found {fixtures:?}");
    for path in fixtures {
        let name = path.display().to_string();
        let source = std::fs::read_to_string(&path).unwrap();
        for target in [Target::WebGpu, Target::Wgpu] {
            let native = Library::from_source(&name, &source, &options(HalfMode::F16, target));
            let emulated = Library::from_source(&name, &source, &options(HalfMode::F32, target));
            match (native, emulated) {
                (Ok(native), Ok(emulated)) => {
                    // Only W0411 (64-bit integers in 32 bits) may remain:
                    // `half` in `f32` adds no warning of its own.
                    let others: Vec<_> = (emulated.warning_diagnostics().0.iter())
                        .filter(|d| d.code != msl2wgsl::diagnostics::Code::WideIntegerNarrowed)
                        .collect();
                    assert!(others.is_empty(), "{name}: {}", emulated.warnings());
                    assert_eq!(native.warnings(), emulated.warnings(), "{name}");
                    assert!(
                        !mentions_f16(emulated.wgsl()),
                        "{name}:\n{}",
                        emulated.wgsl()
                    );
                    for f in emulated.functions() {
                        assert!(
                            !f.required_features.iter().any(|x| x == "shader-f16"),
                            "{name}: {}",
                            f.name
                        );
                    }
                    if target == Target::Wgpu {
                        validate_without_f16(emulated.wgsl())
                            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", emulated.wgsl()));
                    }
                }
                // A fixture the translator rejects (work in progress
                // elsewhere) must be rejected the same way in both modes.
                (Err(native), Err(emulated)) => {
                    eprintln!("note: {name} does not translate: {}", native.render());
                    assert_eq!(native.render(), emulated.render(), "{name}");
                }
                (Ok(_), Err(e)) => panic!("{name}: only `--half f32` fails:\n{}", e.render()),
                (Err(e), Ok(_)) => panic!("{name}: only `--half f16` fails:\n{}", e.render()),
            }
        }
    }
}

#[test]
fn native_mode_still_uses_f16() {
    let source = fixture("half/arithmetic.metal");
    let lib =
        Library::from_source("a.metal", &source, &options(HalfMode::F16, Target::WebGpu)).unwrap();
    assert!(lib.wgsl().contains("enable f16;"));
    assert!(lib.functions()[0]
        .required_features
        .contains(&"shader-f16".to_string()));
}

#[test]
fn reflection_is_the_same_in_both_modes() {
    let source = fixture("half/arithmetic.metal");
    let lib =
        |half| Library::from_source("a.metal", &source, &options(half, Target::Wgpu)).unwrap();
    let (native, emulated) = (lib(HalfMode::F16), lib(HalfMode::F32));
    for (n, e) in native.functions().iter().zip(emulated.functions()) {
        // Buffer element sizes and types are Metal's in both (2-byte `half`).
        assert_eq!(format!("{:?}", n.arguments), format!("{:?}", e.arguments));
    }
    let mul_add = emulated.function("mul_add").unwrap();
    let out = mul_add.arguments[3].buffer.as_ref().unwrap();
    assert_eq!((out.data_type.as_str(), out.data_size), ("half", 2));
}

#[cfg(feature = "cli")] // runs the command-line binary
#[test]
fn cli_half_flag_selects_the_mode() {
    let path = format!(
        "{}/fixtures/half/arithmetic.metal",
        env!("CARGO_MANIFEST_DIR")
    );
    let translate = |mode: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_msl2wgsl"))
            .args(["--half", mode, &path])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(!mentions_f16(&translate("f32")));
    assert!(translate("f16").contains("enable f16;"));
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_msl2wgsl"))
        .args(["--half", "f64", &path])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// GPU runs of `fixtures/half/arithmetic.metal` against a CPU reference.
#[cfg(feature = "runner")]
mod gpu {
    use super::{fixture, options, HalfMode, Target};
    use crate::common;
    use half::f16;
    use msl2wgsl::runner::{run_kernel, Dispatch, Gpu};
    use std::collections::BTreeMap;

    const FIXTURE: &str = "half/arithmetic.metal";

    /// Both modes: on an adapter without `shader-f16` the runner turns the
    /// `f16` request into `f32` itself (what this then tests).
    fn modes(gpu: &Gpu) -> [HalfMode; 2] {
        if gpu.half_mode(HalfMode::F16) == HalfMode::F32 {
            eprintln!("note: no shader-f16 on this adapter: `half` runs as f32 in both runs");
        }
        [HalfMode::F32, HalfMode::F16]
    }

    fn run(
        gpu: &Gpu,
        half: HalfMode,
        entry: &str,
        dispatch: Dispatch,
        buffers: Vec<(u32, Vec<u8>)>,
    ) -> BTreeMap<u32, Vec<u8>> {
        let buffers: BTreeMap<u32, Vec<u8>> = buffers.into_iter().collect();
        run_kernel(
            gpu,
            FIXTURE,
            &fixture(FIXTURE),
            &options(half, Target::Wgpu),
            entry,
            &dispatch,
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{entry} ({half:?}): {e}"))
    }

    fn threads(n: u32) -> Dispatch {
        Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [64, 1, 1],
        }
    }

    fn half_bytes(values: &[f16]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn halves(bytes: &[u8]) -> Vec<f16> {
        bytes
            .chunks_exact(2)
            .map(|c| f16::from_le_bytes([c[0], c[1]]))
            .collect()
    }

    /// `x` rounded to the nearest `half` (ties to even; ±inf past 65504).
    fn round(x: f64) -> f16 {
        f16::from_f64(x)
    }

    fn wide(h: f16) -> f64 {
        f64::from(h.to_f32())
    }

    /// Bit-exact comparison, except that any NaN matches any NaN.
    fn assert_same(got: &[f16], want: &[f16], what: &str) {
        assert_one_of(got, &[want], false, what);
    }

    /// True if `g` is `w`: the same bits, any two NaNs, or (`any_zero`)
    /// zeros of either sign.
    fn matches(g: f16, w: f16, any_zero: bool) -> bool {
        g.to_bits() == w.to_bits()
            || (g.is_nan() && w.is_nan())
            || (any_zero && g == f16::ZERO && w == f16::ZERO)
    }

    /// Each element of `got` matches the same element of one of `wants`.
    fn assert_one_of(got: &[f16], wants: &[&[f16]], any_zero: bool, what: &str) {
        let want = wants[0];
        assert_eq!(got.len(), want.len(), "{what}");
        let bad: Vec<String> = (0..got.len())
            .filter(|&i| !wants.iter().any(|w| matches(got[i], w[i], any_zero)))
            .map(|i| {
                let (g, w) = (got[i], want[i]);
                format!(
                    "[{i}] got {g} ({:#06x}), want {w} ({:#06x})",
                    g.to_bits(),
                    w.to_bits()
                )
            })
            .collect();
        assert!(
            bad.is_empty(),
            "{what}: {} mismatches:\n{}",
            bad.len(),
            bad[..bad.len().min(12)].join("\n")
        );
    }

    /// The spacing of `half` values at `h` (a normal `half`).
    fn ulp(h: f16) -> f64 {
        wide(f16::from_bits((h.to_bits() & 0x7c00) | 1))
            - wide(f16::from_bits(h.to_bits() & 0x7c00))
    }

    /// `got` within `tolerance` of `want` wherever a tolerance is given,
    /// and most elements checked.
    fn assert_close(got: &[f16], want: &[f16], tolerance: &[Option<f64>], what: &str) {
        let checked = tolerance.iter().flatten().count();
        assert!(checked * 2 > got.len(), "{what}: only {checked} checked");
        let bad: Vec<String> = (0..got.len())
            .filter_map(|i| {
                let tol = tolerance[i]?;
                let err = (wide(got[i]) - wide(want[i])).abs();
                (err.is_nan() || err > tol)
                    .then(|| format!("[{i}] got {}, want {} ± {tol}", got[i], want[i]))
            })
            .collect();
        assert!(
            bad.is_empty(),
            "{what}: {} mismatches:\n{}",
            bad.len(),
            bad[..bad.len().min(12)].join("\n")
        );
    }

    /// Checks a run of `mode` on `gpu`: with `half` as `f32`, bit for bit
    /// against `exact`. Native `f16` is checked more loosely, as seen on an
    /// NVIDIA H200 (Vulkan): its compiler fuses a `half` multiply and add
    /// into one fma even across stores to variables (Metal's default fast
    /// math may too), so `fused` is accepted as well, and it does not keep
    /// the sign of a zero.
    fn assert_mode(
        gpu: &Gpu,
        mode: HalfMode,
        got: &[f16],
        exact: &[f16],
        fused: &[f16],
        what: &str,
    ) {
        let what = format!("{what} {mode:?}");
        match gpu.half_mode(mode) {
            HalfMode::F32 => assert_same(got, exact, &what),
            HalfMode::F16 => assert_one_of(got, &[exact, fused], true, &what),
        }
    }

    /// Deterministic `half` values (xorshift32 bits, NaNs replaced), with
    /// subnormals, zeros, infinities and the largest finite values mixed in.
    fn sample(n: usize, seed: u32) -> Vec<f16> {
        let specials = [
            0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0x3c00, 0x3c01,
        ];
        let mut s = seed.max(1);
        (0..n)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                let bits = match i % 4 {
                    // Moderate exponents (2^-4 .. 2^7) give mostly finite results.
                    0 | 1 => (s as u16 & 0x83ff) | ((11 + (s >> 16) % 12) as u16) << 10,
                    2 => s as u16,
                    _ => specials[(s >> 8) as usize % specials.len()],
                };
                let h = f16::from_bits(bits);
                if h.is_nan() {
                    f16::from_bits(bits & 0xfbff)
                } else {
                    h
                }
            })
            .collect()
    }

    #[test]
    fn separate_half_operations_round_after_each() {
        let Some(gpu) = common::gpu() else { return };
        let n = 1024;
        let (a, b, c) = (sample(n, 1), sample(n, 2), sample(n, 3));
        let chain = |fuse: bool| -> Vec<f16> {
            (0..n)
                .map(|i| {
                    let s = match fuse {
                        // a * b is exact in f64, and so (almost always) is the sum.
                        true => round(wide(a[i]) * wide(b[i]) + wide(c[i])),
                        false => round(wide(round(wide(a[i]) * wide(b[i]))) + wide(c[i])),
                    };
                    let d = round(wide(s) / wide(b[i]));
                    let e = round(wide(d) - wide(a[i]));
                    -e
                })
                .collect()
        };
        let (want, fused) = (chain(false), chain(true));
        // Native f16 on NVIDIA (Vulkan) also divides through a rounded
        // reciprocal (WGSL allows 2.5 ULP) and may skip rounding `d`: allow
        // 3 ULP of d in e, where everything stays finite and normal.
        let tolerance: Vec<Option<f64>> = (0..n)
            .map(|i| {
                let s = round(wide(round(wide(a[i]) * wide(b[i]))) + wide(c[i]));
                let d = round(wide(s) / wide(b[i]));
                let normal = |h: f16| h.is_normal() && h.to_f32().abs() < 16384.0;
                let all_normal = [a[i], b[i], d, want[i], fused[i]].into_iter().all(normal);
                all_normal.then(|| 3.0 * ulp(d) + ulp(want[i]))
            })
            .collect();
        for mode in modes(gpu) {
            let out = run(
                gpu,
                mode,
                "mul_add",
                threads(n as u32),
                vec![
                    (0, half_bytes(&a)),
                    (1, half_bytes(&b)),
                    (2, half_bytes(&c)),
                    (3, vec![0; n * 2]),
                ],
            );
            let got = halves(&out[&3]);
            match gpu.half_mode(mode) {
                HalfMode::F32 => assert_same(&got, &want, "mul_add F32"),
                HalfMode::F16 => assert_close(&got, &want, &tolerance, "mul_add F16"),
            }
        }
    }

    /// f32 values around `half`'s rounding boundaries.
    fn conversion_inputs() -> Vec<f32> {
        let tie = |base: f32, ulp: f32| {
            [
                base + ulp / 2.0,
                base + 3.0 * ulp / 2.0,
                base + ulp / 2.0 + ulp / 4096.0,
            ]
        };
        let mut x = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            -0.1,
            1.0 / 3.0,
            65504.0,
            65519.0,
            65519.996,
            65520.0,
            -65520.0,
            65536.0,
            1.0e30,
            -1.0e30,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            1.0e-40,
            6.0e-8,
            5.960_464_5e-8,
            2.980_232_2e-8,
            2.980_233e-8,
            -2.980_232_2e-8,
            8.940_697e-8,
            6.097_555e-5,
            6.103_515_6e-5,
            6.100_535e-5,
            std::f32::consts::PI,
        ];
        x.extend(tie(1.0, 1.0 / 1024.0));
        x.extend(tie(2048.0, 2.0));
        x.extend(tie(-1024.0, -1.0));
        // Subnormal ties: halfway between multiples of 2^-24.
        let step = (2.0f32).powi(-24);
        x.extend((0..16).map(|k| (k as f32 + 0.5) * step));
        let mut s = 12345u32;
        while x.len() < 256 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            // Random bits with f32 exponents 2^-30 .. 2^17.
            let v = f32::from_bits((s & 0x807f_ffff) | ((97 + (s >> 8) % 48) << 23));
            x.push(v);
        }
        x
    }

    fn int_inputs(n: usize) -> Vec<i32> {
        let mut v = vec![
            0,
            1,
            -1,
            2049,
            2051,
            -2049,
            4097,
            4099,
            32767,
            65504,
            65519,
            65520,
            -65520,
            65535,
            100_000,
            i32::MAX,
            i32::MIN,
            16_777_217,
            2047,
            1025,
        ];
        let mut s = 777u32;
        while v.len() < n {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            v.push((s as i32) >> (s % 24));
        }
        v
    }

    #[test]
    fn conversions_to_half_round_to_nearest_even_with_subnormals_and_overflow() {
        let Some(gpu) = common::gpu() else { return };
        let x = conversion_inputs();
        let n = x.len();
        let ints = int_inputs(n);
        let want: Vec<f16> = x.iter().map(|&v| round(f64::from(v))).collect();
        let want_back: Vec<u32> = want.iter().map(|h| h.to_f32().to_bits()).collect();
        let want_int: Vec<f16> = ints.iter().map(|&v| round(f64::from(v))).collect();
        for mode in modes(gpu) {
            let out = run(
                gpu,
                mode,
                "to_half",
                threads(n as u32),
                vec![
                    (0, common::f32_bytes(&x)),
                    (1, vec![0; n * 2]),
                    (2, vec![0; n * 4]),
                    (3, ints.iter().flat_map(|v| v.to_le_bytes()).collect()),
                    (4, vec![0; n * 2]),
                ],
            );
            assert_mode(gpu, mode, &halves(&out[&1]), &want, &want, "half(float)");
            assert_mode(
                gpu,
                mode,
                &halves(&out[&4]),
                &want_int,
                &want_int,
                "half(int)",
            );
            let back = common::u32s(&out[&2]);
            for (i, (&got, &want)) in back.iter().zip(&want_back).enumerate() {
                // NVIDIA's compiler (Vulkan) drops `float(half(x))`'s
                // rounding with native f16: it gives `x` back.
                let folded = gpu.half_mode(mode) == HalfMode::F16 && got == x[i].to_bits();
                assert!(
                    got == want || folded,
                    "float(half({})) {mode:?}: got {}, want {}",
                    x[i],
                    f32::from_bits(got),
                    f32::from_bits(want)
                );
            }
        }
    }

    #[test]
    fn vector_and_scalar_stores_at_odd_indices_keep_their_neighbours() {
        let Some(gpu) = common::gpu() else { return };
        let n = 128usize;
        let v2 = sample(4 * n, 4);
        let v4 = sample(8 * n, 5);
        let s = sample(2 * n, 6);
        let (mut want2, mut want4, mut want_s) = (v2.clone(), v4.clone(), s.clone());
        let mut fused2 = v2.clone();
        for i in 0..n {
            let k = 2 * i + 1;
            // `m + 1` rounds again: unlike one rounding of v * f + 1.
            for (lane, factor) in [(0, 3.0), (1, wide(round(0.1)))] {
                let m = round(wide(v2[2 * k + lane]) * factor);
                want2[2 * k + lane] = round(wide(m) + 1.0);
                fused2[2 * k + lane] = round(wide(v2[2 * k + lane]) * factor + 1.0);
            }
            for lane in 0..4 {
                want4[4 * k + lane] = round(wide(v4[4 * k + lane]) + wide(v4[4 * (k - 1) + lane]));
            }
            want_s[k] = round(wide(s[k]) * 3.0);
        }
        for mode in modes(gpu) {
            let out = run(
                gpu,
                mode,
                "lanes",
                threads(n as u32),
                vec![
                    (0, half_bytes(&v2)),
                    (1, half_bytes(&v4)),
                    (2, half_bytes(&s)),
                ],
            );
            assert_mode(gpu, mode, &halves(&out[&0]), &want2, &fused2, "half2");
            assert_mode(gpu, mode, &halves(&out[&1]), &want4, &want4, "half4");
            assert_mode(gpu, mode, &halves(&out[&2]), &want_s, &want_s, "half");
        }
    }

    #[test]
    fn threadgroup_half_reduction_rounds_every_partial_sum() {
        let Some(gpu) = common::gpu() else { return };
        let groups = 8usize;
        // Values in [-8, 8): sums stay finite but lose low bits as they grow.
        let x: Vec<f16> = sample(64 * groups, 7)
            .into_iter()
            .map(|h| round(wide(h).clamp(-8.0, 8.0)))
            .collect();
        let want: Vec<f16> = x
            .chunks(64)
            .map(|group| {
                let mut partial = group.to_vec();
                let mut stride = 32;
                while stride > 0 {
                    for l in 0..stride {
                        partial[l] = round(wide(partial[l]) + wide(partial[l + stride]));
                    }
                    stride /= 2;
                }
                partial[0]
            })
            .collect();
        for mode in modes(gpu) {
            let out = run(
                gpu,
                mode,
                "reduce",
                Dispatch::Threadgroups {
                    groups: [groups as u32, 1, 1],
                    threadgroup: [64, 1, 1],
                },
                vec![(0, half_bytes(&x)), (1, vec![0; groups * 2])],
            );
            assert_mode(gpu, mode, &halves(&out[&1]), &want, &want, "reduce");
        }
    }
}
