//! metal_stdlib functions beyond WGSL's builtins (`src/lower/mathlib*.rs`):
//! GPU runs of `fixtures/stdlib_*.metal` checked against CPU references, one
//! test per function group, and their diagnostics.
//!
//! Tolerances come from the precision tables, cited at each comparison:
//! - WGSL §15.7.4.1 "Accuracy of Concrete Floating Point Expressions" (the
//!   translation is made of WGSL builtins, so this is what it can promise;
//!   the mapping doc §6.1 shows it is about Metal's fast-math accuracy);
//! - MSL §8's accuracy table for single precision without fast math:
//!   `frexp`, `fmin`, `fmax` 0 ULP, `fdim` and `ldexp` correctly rounded,
//!   that is exact here; WGSL agrees (`ldexp`, `frexp`, `modf`, `min`,
//!   `max` correctly rounded). `copysign` and `modf` are exact by
//!   definition (a sign bit; an integral part and an exact difference).
//!
//! Integer results are exact. Inputs avoid subnormal results, which WGSL
//! lets implementations flush to zero.

mod common;

use msl2wgsl::{Library, Options, Target};

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// Asserts that translating `body` (after the two-line prelude, so line
/// numbers start at 3) fails first with `t.metal:LINE:COL: error: MESSAGE`.
fn assert_error(body: &str, line: usize, col: usize, message: &str) {
    let text =
        match Library::from_source("t.metal", &format!("{PRELUDE}{body}"), &Options::default()) {
            Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
            Err(f) => f.render(),
        };
    let first = text.lines().next().unwrap_or_default();
    let want = format!("t.metal:{line}:{col}: error: {message}");
    assert!(first.starts_with(&want), "want `{want}`\n got:\n{text}");
}

/// A kernel whose body is `stmt`, on line 4.
fn in_kernel(stmt: &str) -> String {
    format!("kernel void k(device float* a [[buffer(0)]]) {{\n{stmt}\n}}\n")
}

#[test]
fn wrong_argument_count_names_the_function() {
    let body = "kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = copysign(a[1]);\n}\n";
    assert_error(body, 4, 10, "`copysign` takes 2 arguments, 1 given");
    let body = "kernel void k(device int* a [[buffer(0)]]) {\n  a[0] = madsat(a[1], a[2]);\n}\n";
    assert_error(body, 4, 10, "`madsat` takes 3 arguments, 2 given");
    let body = "kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = isnan(a[1], a[2]);\n}\n";
    assert_error(body, 4, 10, "`isnan` takes 1 argument, 2 given");
    let body =
        "kernel void k(device int* a [[buffer(0)]]) {\n  a[0] = insert_bits(a[1], a[2], 1u);\n}\n";
    assert_error(body, 4, 10, "`insert_bits` takes 4 arguments, 3 given");
}

#[test]
fn integer_function_rejects_float_arguments() {
    let body = "kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = absdiff(a[1], a[2]);\n}\n";
    assert_error(
        body,
        4,
        10,
        "no matching function for call to `absdiff` with an argument of type `float`",
    );
    let body = "kernel void k(device int* a [[buffer(0)]]) {\n  char c = char(a[0]);\n  a[0] = mul24(c, c);\n}\n";
    assert_error(
        body,
        5,
        10,
        "no matching function for call to `mul24` with an argument of type `char`",
    );
}

#[test]
fn float_function_rejects_integer_vectors_and_mixed_vectors() {
    let body =
        "kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = length_squared(int3(1));\n}\n";
    assert_error(
        body,
        4,
        10,
        "no matching function for call to `length_squared` with an argument of type `int3`",
    );
    let body = "kernel void k(device float4* a [[buffer(0)]]) {\n  a[0] = fmin3(a[1], float3(1.0f).xyzz, half4(1.0h));\n}\n";
    assert_error(
        body,
        4,
        10,
        "no matching function for call to `fmin3` with an argument of type `half4`",
    );
}

#[test]
fn output_argument_must_be_a_writable_int_of_the_right_size() {
    let body = in_kernel("  float f = 0.0f; a[0] = frexp(a[1], f);");
    assert_error(
        &body,
        4,
        38,
        "`frexp` stores the exponent of a `float` in an `int`, not in a `float`",
    );
    let body = in_kernel("  int2 e; a[0] = frexp(a[1], e);");
    assert_error(
        &body,
        4,
        30,
        "`frexp` stores the exponent of a `float` in an `int`, not in a `int2`",
    );
    let body = in_kernel("  a[0] = modf(a[1], 2.0f);");
    assert_error(
        &body,
        4,
        21,
        "`modf` writes its last argument: it must be a variable or a pointer to one",
    );
    let body = in_kernel("  const float k = 1.0f; a[0] = sincos(a[1], k);");
    assert_error(
        &body,
        4,
        45,
        "`sincos` cannot write its result to a read-only location",
    );
    let body = in_kernel("  int i; a[0] = modf(a[1], i);");
    assert_error(
        &body,
        4,
        28,
        "no matching function for call to `modf` with an argument of type `int`",
    );
}

#[test]
fn matrix_functions_reject_non_square_and_non_matrix() {
    let body = "kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = determinant(float2x3(1.0f));\n}\n";
    assert_error(
        body,
        4,
        22,
        "no matching function for call to `determinant` with an argument of type `float2x3`",
    );
    let body = "kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = transpose(a[1]);\n}\n";
    assert_error(
        body,
        4,
        20,
        "no matching function for call to `transpose` with an argument of type `float`",
    );
}

#[test]
fn long_operands_of_32_bit_polyfills_are_refused() {
    let src = format!(
        "{PRELUDE}kernel void k(device long* a [[buffer(0)]]) {{\n  a[0] = addsat(a[1], a[2]);\n}}\n"
    );
    let options = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    let text = match Library::from_source("t.metal", &src, &options) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.render(),
    };
    let want = "t.metal:4:10: error: `addsat` of `long` is not supported yet";
    assert!(text.starts_with(want), "want `{want}`\n got:\n{text}");
}

#[test]
fn output_arguments_may_be_buffer_elements_in_word_views() {
    // Metal declares `thread` references; other writable memory is accepted
    // too, including buffers of packed vectors and halves.
    let src = format!(
        "{PRELUDE}kernel void k(device packed_float3* p [[buffer(0)]], device half* h [[buffer(1)]], device int* e [[buffer(2)]]) {{\n  p[0] = modf(float3(p[1]), p[2]);\n  p[0].x = sincos(p[0].y, p[0].z);\n  h[0] = frexp(h[1], &e[0]);\n}}\n"
    );
    if let Err(f) = Library::from_source("t.metal", &src, &Options::default()) {
        panic!("{}", f.render());
    }
}

#[test]
fn classification_is_a_bit_test_in_wgsl() {
    let src = format!(
        "{PRELUDE}kernel void k(device float* a [[buffer(0)]], device int* b [[buffer(1)]]) {{ b[0] = isnan(a[0]) + isinf(a[1]); }}\n"
    );
    let lib = Library::from_source("t.metal", &src, &Options::default()).unwrap();
    let wgsl = lib.wgsl();
    // naga's writer rejects IsNan/IsInf, and `x != x` may be folded away.
    assert!(wgsl.contains("bitcast<u32>"), "{wgsl}");
    assert!(wgsl.contains("2139095040u"), "{wgsl}");
    assert!(!wgsl.contains("isNan") && !wgsl.contains("!="), "{wgsl}");
}

#[cfg(feature = "runner")]
mod gpu {
    use super::common::{f32_bytes, f32s, gpu, u32s};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use msl2wgsl::Options;
    use std::collections::BTreeMap;
    use std::f64::consts::PI;

    fn run(
        name: &str,
        entry: &str,
        threads: usize,
        buffers: Vec<(u32, Vec<u8>)>,
    ) -> Option<BTreeMap<u32, Vec<u8>>> {
        let gpu = gpu()?;
        let path = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let buffers: BTreeMap<u32, Vec<u8>> = buffers.into_iter().collect();
        let dispatch = Dispatch::Threads {
            grid: [threads as u32, 1, 1],
            threadgroup: [64, 1, 1],
        };
        match run_kernel(
            gpu,
            name,
            &source,
            &Options::default(),
            entry,
            &dispatch,
            &buffers,
        ) {
            Ok(out) => Some(out),
            Err(e) => panic!("{name}: {e}"),
        }
    }

    /// Deterministic xorshift32 numbers.
    struct Rng(u32);

    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 17;
            self.0 ^= self.0 << 5;
            self.0
        }

        /// Uniform in [lo, hi).
        fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
            lo + (hi - lo) * (self.next() >> 8) as f64 / (1u32 << 24) as f64
        }

        /// ±m·2^e with m in [1, 2), e in [lo, hi]: a spread over magnitudes.
        fn spread(&mut self, lo: i32, hi: i32) -> f32 {
            let e = lo + (self.next() % (hi - lo + 1) as u32) as i32;
            let sign = if self.next() & 1 == 0 { 1.0 } else { -1.0 };
            (sign * self.uniform(1.0, 2.0) * 2f64.powi(e)) as f32
        }
    }

    /// `edges` followed by `fill` values up to `n`.
    fn inputs<T: Copy>(n: usize, edges: &[T], mut fill: impl FnMut() -> T) -> Vec<T> {
        let mut v = edges.to_vec();
        v.truncate(n);
        while v.len() < n {
            v.push(fill());
        }
        v
    }

    /// WGSL's ULP(x) (§15.7.4, after Muller): the smaller gap between `x`
    /// and its neighbours, for a representable `x`.
    fn ulp(x: f32) -> f64 {
        let a = x.abs();
        if a == 0.0 {
            return f32::from_bits(1) as f64;
        }
        let up = f32::from_bits(a.to_bits() + 1) as f64 - a as f64;
        let down = a as f64 - f32::from_bits(a.to_bits() - 1) as f64;
        up.min(down)
    }

    /// Exact equality (both NaN counts as equal; ±0 compare equal, since
    /// WGSL lets implementations ignore the sign of zero).
    fn assert_exact(got: f32, want: f32, what: &str) {
        assert!(
            got == want || (got.is_nan() && want.is_nan()),
            "{what}: got {got:e}, want {want:e}"
        );
    }

    fn assert_within(got: f32, want: f64, tol: f64, what: &str) {
        assert!(
            (got as f64 - want).abs() <= tol,
            "{what}: got {got:e}, want {want:e} (tolerance {tol:e})"
        );
    }

    /// sin(πr) for `x`, reduced exactly by whole periods first (f64).
    fn sin_pi(x: f32) -> f64 {
        let x = x as f64;
        (PI * (x - 2.0 * (x / 2.0).round())).sin()
    }

    fn cos_pi(x: f32) -> f64 {
        let x = x as f64;
        (PI * (x - 2.0 * (x / 2.0).round())).cos()
    }

    /// Absolute error allowed for `sinpi`/`cospi`: WGSL `sin` is within 2^-11
    /// absolute on [-π, π] (the reduced argument is there); forming the
    /// argument (exact reduction, then `t * π` with π rounded to f32) adds
    /// less than 2^-21.
    const SINPI_TOL: f64 = 1.0 / 2048.0 + 1.0 / (1u32 << 21) as f64;

    /// Zeros, halfway cases (for the rounding in sinpi/cospi), integers,
    /// the ends of f32's integer range, tiny and huge values.
    #[rustfmt::skip]
    const FLOAT_VALUES: [f32; 24] = [
        0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.25, -0.75, 3.0,
        1_000_000.25, -12345.5, 8_388_607.5, 16_777_216.0, -3.0e7, 1e-30, -2e-20,
        123.456, 1e30, -7.0, 0.1,
    ];

    fn float_inputs(n: usize) -> [Vec<f32>; 6] {
        let mut r = Rng(0x1234_5678);
        let g = inputs(n, &FLOAT_VALUES, || r.spread(-20, 24));
        // Second operands: nonzero but for a -0.0 (copysign(1, -0) = -1).
        let h = inputs(n, &[2.0, -1.0, -0.0, 0.5, 3.0, -0.5], || r.spread(-10, 10));
        let s = inputs(n, &[0.0, 1.0, -1.0, 2.0, 0.5, 4.0, -4.0], || {
            r.uniform(-4.0, 4.0) as f32
        });
        let p = inputs(n, &[1.0, 10.0, 100.0, 0.5, 2.0, 1000.0, 1e-6], || {
            10f64.powf(r.uniform(-6.0, 6.0)) as f32
        });
        // The f32 neighbours of ±π inside [-π, π], where WGSL's bound holds.
        let pi = std::f32::consts::PI.next_down();
        let a = inputs(
            n,
            &[0.0, 1.0, -1.0, pi, -pi, std::f32::consts::FRAC_PI_2],
            || r.uniform(-PI, PI) as f32,
        );
        let q = inputs(n, &[0.0, 1.0, -3.0, 0.25, -0.25, 10.4], || {
            ((r.next() % 101) as f64 - 50.0 + r.uniform(-0.4, 0.4)) as f32
        });
        [g, h, s, p, a, q]
    }

    #[test]
    fn float_math_matches_cpu() {
        let n = 256;
        let [g, h, s, p, a, q] = float_inputs(n);
        let buffers = vec![
            (0, f32_bytes(&g)),
            (1, f32_bytes(&h)),
            (2, f32_bytes(&s)),
            (3, f32_bytes(&p)),
            (4, f32_bytes(&a)),
            (5, f32_bytes(&q)),
            (6, vec![0; n * 20 * 4]),
            (7, vec![0; n * 4]),
        ];
        let Some(out) = run("stdlib_float.metal", "float_math", n, buffers) else {
            return;
        };
        let o = f32s(&out[&6]);
        let exps = u32s(&out[&7]);
        for i in 0..n {
            let (x, y, z) = (g[i], h[i], s[i]);
            let got = &o[i * 20..i * 20 + 20];
            let at = |k: usize| format!("float_math[{i}] output {k} (x = {x:e}, y = {y:e})");
            // Sign and exponent manipulation, exact (MSL Table 8.1: copysign
            // and frexp 0 ULP, fdim and ldexp correctly rounded; WGSL: ldexp,
            // frexp, modf correctly rounded).
            assert_exact(got[0], x.copysign(y), &at(0));
            assert_exact(got[1], if x <= y { 0.0 } else { x - y }, &at(1));
            assert_exact(got[2], x * 2f32.powi(i as i32 % 9 - 4), &at(2));
            let (m, e) = frexp(x);
            assert_exact(got[3], m, &at(3));
            assert_eq!(exps[i] as i32, e, "{}", at(3));
            assert_exact(got[4], x - x.trunc(), &at(4));
            assert_exact(got[5], x.trunc(), &at(5));
            check_exp_log10(got[6], z, got[7], p[i], &at(6));
            assert_within(got[8], sin_pi(x), SINPI_TOL, &at(8));
            assert_within(got[9], cos_pi(x), SINPI_TOL, &at(9));
            check_tanpi(got[10], q[i], &at(10));
            // WGSL sin/cos: absolute error 2^-11 on [-π, π].
            assert_within(got[11], (a[i] as f64).sin(), 1.0 / 2048.0, &at(11));
            assert_within(got[12], (a[i] as f64).cos(), 1.0 / 2048.0, &at(12));
            if y != 0.0 {
                // WGSL x / y: 2.5 ULP for |y| in [2^-126, 2^126].
                let want = x as f64 / y as f64;
                assert_within(got[13], want, 2.5 * ulp(want as f32), &at(13));
            }
            // min/max: exact (MSL fmin/fmax 0 ULP; WGSL correctly rounded).
            let (lo, hi) = (x.min(y), x.max(y));
            let med = lo.max(hi.min(z));
            let want3 = [x.min(y).min(z), x.max(y).max(z), med];
            for k in 0..3 {
                assert_exact(got[14 + k], want3[k], &at(14 + k));
                assert_exact(got[17 + k], want3[k], &at(17 + k));
            }
        }
    }

    /// C's frexp for normal and zero `x`: mantissa in [0.5, 1).
    fn frexp(x: f32) -> (f32, i32) {
        if x == 0.0 {
            return (x, 0);
        }
        let e = ((x.to_bits() >> 23) & 0xff) as i32 - 126;
        (x / 2f32.powi(e), e)
    }

    /// `exp10(z)`, `log10(w)` against their WGSL error bounds.
    fn check_exp_log10(got_exp: f32, z: f32, got_log: f32, w: f32, what: &str) {
        // exp10(z) = exp2(y), y = z * log2(10) in f32: WGSL exp2 is within
        // 3 + 2|y| ULP; rounding y (and the f32 constant) moves the result
        // by at most 2^-23 |y| relative, under 2|y| more ULP.
        let y = z as f64 * std::f64::consts::LOG2_10;
        let want = 10f64.powf(z as f64);
        let tol = (3.0 + 4.0 * y.abs()) * ulp(want as f32);
        assert_within(got_exp, want, tol, &format!("{what}: exp10({z:e})"));
        // log10(w) = log2(w) * log10(2): WGSL log2 is within 2^-21 absolute
        // on [0.5, 2], else 3 ULP; the product and the constant each round
        // once more (1 ULP of the result and 2^-24 relative).
        let l2 = (w as f64).log2();
        let log2_err = if (0.5..=2.0).contains(&w) {
            (2f64).powi(-21)
        } else {
            3.0 * ulp(l2 as f32)
        };
        let want = (w as f64).log10();
        let tol =
            std::f64::consts::LOG10_2 * log2_err + ulp(want as f32) + want.abs() * 2f64.powi(-24);
        assert_within(got_log, want, tol, &format!("{what}: log10({w:e})"));
    }

    /// `tanpi(q)` = tan(πr), r = q - round(q) in [-0.4, 0.4]: WGSL tan is
    /// inherited from sin(a)/cos(a), each within 2^-11 absolute, and the
    /// division adds 2.5 ULP; to first order the error is at most
    /// 2^-11 (1 + |tan a|) / |cos a|, plus 2^-22/cos² a for the argument.
    fn check_tanpi(got: f32, q: f32, what: &str) {
        let r = q as f64 - (q as f64).round();
        let a = PI * r;
        let want = a.tan();
        let c = a.cos().abs();
        let tol = 1.01 * (1.0 / 2048.0) * (1.0 + want.abs()) / c
            + 2.5 * ulp(want as f32)
            + 2f64.powi(-22) / (c * c);
        assert_within(got, want, tol, &format!("{what}: tanpi({q:e})"));
    }

    #[test]
    fn float_vector_forms_match_cpu() {
        let n = 64;
        let [g, h, ..] = float_inputs(n * 4);
        let buffers = vec![
            (0, f32_bytes(&g)),
            (1, f32_bytes(&h)),
            (2, vec![0; n * 8 * 16]),
            (3, vec![0; n * 16]),
        ];
        let Some(out) = run("stdlib_float.metal", "float_vectors", n, buffers) else {
            return;
        };
        let o = f32s(&out[&2]);
        let exps = u32s(&out[&3]);
        for i in 0..n {
            for lane in 0..4 {
                let (x, y) = (g[4 * i + lane], h[4 * i + lane]);
                let got = |k: usize| o[i * 32 + 4 * k + lane];
                let at = |k: usize| format!("float_vectors[{i}].{lane} output {k} (x = {x:e})");
                // Exact, as in the scalar test (MSL Table 8.1, WGSL §15.7.4.1).
                assert_exact(got(0), x.copysign(y), &at(0));
                assert_exact(got(1), if x <= y { 0.0 } else { x - y }, &at(1));
                let k = [-2, -1, 1, 2][lane];
                assert_exact(got(2), x * 2f32.powi(k), &at(2));
                let (m, e) = frexp(x);
                assert_exact(got(3), m, &at(3));
                assert_eq!(exps[4 * i + lane] as i32, e, "{}", at(3));
                assert_exact(got(4), x - x.trunc(), &at(4));
                assert_exact(got(5), x.trunc(), &at(5));
                assert_within(got(6), sin_pi(x), SINPI_TOL, &at(6));
                let (lo, hi) = (x.min(y), x.max(y));
                assert_exact(got(7), lo.max(hi.min(0.5)), &at(7));
            }
        }
    }

    #[test]
    fn half_forms_match_cpu() {
        use half::f16;
        let n = 128;
        let mut r = Rng(99);
        let hx = |v: f64| f16::from_f64(v);
        let g = inputs(
            n,
            &[
                0.0,
                -0.0,
                1.0,
                -1.0,
                0.5,
                -2.5,
                1.5,
                3.0,
                100.25,
                -1000.5,
                0.1,
                0.0009765625,
            ]
            .map(hx),
            || hx(r.spread(-10, 10) as f64),
        );
        let h = inputs(n, &[2.0, -0.0, -1.0, 0.5].map(hx), || {
            hx(r.spread(-8, 8) as f64)
        });
        let bytes = |v: &[f16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let buffers = vec![
            (0, bytes(&g)),
            (1, bytes(&h)),
            (2, vec![0; n * 8 * 2]),
            (3, vec![0; n * 4]),
        ];
        let Some(out) = run("stdlib_float.metal", "half_math", n, buffers) else {
            return;
        };
        let o: Vec<f16> = out[&2]
            .chunks_exact(2)
            .map(|c| f16::from_le_bytes([c[0], c[1]]))
            .collect();
        let exps = u32s(&out[&3]);
        for i in 0..n {
            let (x, y) = (g[i].to_f32(), h[i].to_f32());
            let got = |k: usize| o[i * 8 + k].to_f32();
            let at = |k: usize| format!("half_math[{i}] output {k} (x = {x:e}, y = {y:e})");
            // Exact (MSL Table 8.1; the f16 difference is correctly rounded).
            assert_exact(got(0), x.copysign(y), &at(0));
            let fdim = if x <= y {
                0.0
            } else {
                hx(x as f64 - y as f64).to_f32()
            };
            assert_exact(got(1), fdim, &at(1));
            let (m, e) = frexp(x);
            assert_exact(got(2), m, &at(2));
            assert_eq!(exps[i] as i32, e, "{}", at(2));
            assert_exact(got(3), x - x.trunc(), &at(3));
            assert_exact(got(4), x.trunc(), &at(4));
            assert_exact(got(5), x / 8.0, &at(5));
            let (lo, hi) = (x.min(y), x.max(y));
            assert_exact(got(6), lo.max(hi.min(0.5)), &at(6));
            // WGSL f16 sin: 2^-7 absolute on [-π, π]; the f16 product t * π
            // (π itself rounded to f16) adds less than 2^-9.
            assert_within(got(7), sin_pi(x), 1.0 / 128.0 + 1.0 / 512.0, &at(7));
        }
    }

    /// The reference flags of `fixtures/stdlib_classify.metal`'s `flags`.
    fn flags(x: f32, y: f32) -> u32 {
        let bits = [
            x.is_nan(),
            x.is_infinite(),
            x.is_finite(),
            x.is_normal(),
            x.is_sign_negative(),
            !x.is_nan() && !y.is_nan(),
            x.is_nan() || y.is_nan(),
        ];
        bits.iter()
            .enumerate()
            .map(|(k, b)| u32::from(*b) << k)
            .sum()
    }

    /// Bit patterns of zeros, subnormals, the smallest and largest normals,
    /// infinities, quiet and signalling NaNs (both signs) and plain numbers.
    const FLOAT_EDGES: [u32; 20] = [
        0x0000_0000,
        0x8000_0000,
        0x0000_0001,
        0x807f_ffff,
        0x0080_0000,
        0x8080_0000,
        0x7f7f_ffff,
        0xff7f_ffff,
        0x3f80_0000,
        0xbf80_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0000,
        0x7f80_0001,
        0x7fff_ffff,
        0xff80_0001,
        0x3fc0_0000,
        0x42f6_e979,
        0x0f00_0000,
    ];

    /// The same for `half`.
    const HALF_EDGES: [u32; 16] = [
        0x0000, 0x8000, 0x0400, 0x8400, 0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00,
        0xfe00, 0x7c01, 0x7fff, 0x3555, 0x0401,
    ];

    /// `lanes(isnan(v), 0) | lanes(isinf(v), 4) | ...` of the kernel.
    fn vector_flags(v: [f32; 4]) -> u32 {
        let mut want = 0;
        for (lane, x) in v.iter().enumerate() {
            for k in 0..5 {
                want |= ((flags(*x, 0.0) >> k) & 1) << (4 * k + lane);
            }
        }
        want
    }

    fn half_flags(h: half::f16) -> u32 {
        let tests = [
            h.is_nan(),
            h.is_infinite(),
            h.is_finite(),
            h.is_normal(),
            h.is_sign_negative(),
        ];
        tests
            .iter()
            .enumerate()
            .map(|(k, b)| u32::from(*b) << k)
            .sum()
    }

    #[test]
    fn classification_matches_cpu() {
        let n = 64;
        let mut r = Rng(7);
        let bits: Vec<u32> = inputs(n, &FLOAT_EDGES, || r.next());
        let half_bits: Vec<u32> = inputs(n, &HALF_EDGES, || r.next() & 0xffff);
        let u32_bytes = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let buffers = vec![
            (0, u32_bytes(&bits)),
            (1, u32_bytes(&half_bits)),
            (2, vec![0; n * 12]),
        ];
        let Some(out) = run("stdlib_classify.metal", "classify", n, buffers) else {
            return;
        };
        let got = u32s(&out[&2]);
        for i in 0..n {
            // Exact: bit tests have no rounding. Subnormal inputs (which a
            // driver may flush to zero) classify the same either way.
            let x = f32::from_bits(bits[i]);
            let y = f32::from_bits(bits[i ^ 1]);
            let what = format!("flags of {:#x}", bits[i]);
            assert_eq!(got[3 * i], flags(x, y), "scalar {what}");
            let v = [x, y, f32::from_bits(bits[i] ^ 0x8000_0000), 1.0];
            assert_eq!(got[3 * i + 1], vector_flags(v), "vector {what}");
            let h = half::f16::from_bits(half_bits[i] as u16);
            let what = format!("half flags of {:#x}", half_bits[i]);
            // A half NaN's sign does not survive the float conversions on
            // every GPU (NVIDIA's f16 <-> f32 conversions drop it; WGSL
            // promises nothing about NaN through arithmetic): only its other
            // flags are compared.
            let mask = if h.is_nan() { !0x10 } else { !0 };
            assert_eq!(got[3 * i + 2] & mask, half_flags(h) & mask, "{what}");
        }
    }

    /// The determinant by the Leibniz formula in f64, and the permanent of
    /// |m| (the sum of the magnitudes of its terms).
    fn leibniz(m: &[[f64; 4]], n: usize) -> (f64, f64) {
        let mut perm: Vec<usize> = (0..n).collect();
        let (mut det, mut sum) = (0.0, 0.0);
        permutations(&mut perm, 0, &mut |p| {
            let mut term = 1.0;
            for (c, r) in p.iter().enumerate() {
                term *= m[c][*r];
            }
            let inversions = (0..n)
                .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                .filter(|&(a, b)| p[a] > p[b])
                .count();
            det += if inversions % 2 == 0 { term } else { -term };
            sum += term.abs();
        });
        (det, sum)
    }

    fn permutations(p: &mut Vec<usize>, k: usize, f: &mut impl FnMut(&[usize])) {
        if k == p.len() {
            return f(p);
        }
        for j in k..p.len() {
            p.swap(k, j);
            permutations(p, k + 1, f);
            p.swap(k, j);
        }
    }

    #[test]
    fn geometric_and_matrix_functions_match_cpu() {
        let n = 64;
        let mut r = Rng(31);
        let mut m: Vec<f32> = (0..n * 16).map(|_| r.uniform(-2.0, 2.0) as f32).collect();
        // Identity and a singular matrix among the random ones.
        for k in 0..16 {
            m[k] = if k % 5 == 0 { 1.0 } else { 0.0 };
            m[16 + k] = (k % 4) as f32 + 1.0;
        }
        let Some(out) = run(
            "stdlib_geometric.metal",
            "geometric",
            n,
            vec![(0, f32_bytes(&m)), (1, vec![0; n * 33 * 4])],
        ) else {
            return;
        };
        let o = f32s(&out[&1]);
        let e = 2f64.powi(-24);
        for i in 0..n {
            let col =
                |c: usize| -> [f64; 4] { std::array::from_fn(|r| m[16 * i + 4 * c + r] as f64) };
            let (a, b) = (col(0), col(1));
            let got = &o[33 * i..33 * i + 33];
            let at = |k: usize| format!("geometric[{i}] output {k}");
            for len in 1..=4 {
                // dot is inherited from the sum of products (WGSL): each of
                // the len products and len - 1 sums rounds once, so the
                // error is below len * 2^-24 * sum(x²) (plus 2 for the
                // rounded differences of distance_squared).
                let sq: f64 = a[..len].iter().map(|v| v * v).sum();
                assert_within(got[len - 1], sq, len as f64 * e * sq * 1.01, &at(len - 1));
                let d: Vec<f64> = (0..len)
                    .map(|k| (a[k] as f32 - b[k] as f32) as f64)
                    .collect();
                let dsq: f64 = (0..len).map(|k| (a[k] - b[k]).powi(2)).sum();
                let tol = (len + 2) as f64 * e * d.iter().map(|v| v * v).sum::<f64>() * 1.01;
                assert_within(got[3 + len], dsq, tol, &at(3 + len));
            }
            // WGSL gives determinant no bound ("infinite ULP"); we use the
            // standard forward bound of evaluating its n! products of n
            // factors in any order: (n + n!) * 2^-24 * permanent(|m|).
            let m2 = [[a[0], a[1], 0.0, 0.0], [a[2], a[3], 0.0, 0.0]];
            let m3 = [col(0), col(1), col(2)];
            let m4 = [col(0), col(1), col(2), col(3)];
            for (k, (mat, size)) in [(&m2[..], 2usize), (&m3[..], 3), (&m4[..], 4)]
                .iter()
                .enumerate()
            {
                let (det, perm) = leibniz(mat, *size);
                let fact: usize = (1..=*size).product();
                let tol = (size + fact) as f64 * e * perm;
                assert_within(got[8 + k], det, tol, &at(8 + k));
            }
            // transpose: exact (WGSL: correctly rounded, a copy).
            for k in 0..3 {
                assert_exact(got[11 + 2 * k], a[k] as f32, &at(11 + 2 * k));
                assert_exact(got[12 + 2 * k], b[k] as f32, &at(12 + 2 * k));
            }
            for c in 0..4 {
                for row in 0..4 {
                    let want = m[16 * i + 4 * row + c];
                    assert_exact(got[17 + 4 * c + row], want, &at(17 + 4 * c + row));
                }
            }
        }
    }

    /// An integer type of the reference: width and signedness.
    #[derive(Clone, Copy, Debug)]
    struct IntTy {
        bits: u32,
        signed: bool,
    }

    impl IntTy {
        const INT: IntTy = IntTy {
            bits: 32,
            signed: true,
        };
        const UINT: IntTy = IntTy {
            bits: 32,
            signed: false,
        };

        fn modulus(self) -> i128 {
            1i128 << self.bits
        }

        /// `v` wrapped into the type, as C++ converts.
        fn wrap(self, v: i128) -> i128 {
            let r = v.rem_euclid(self.modulus());
            if self.signed && r >= self.modulus() / 2 {
                r - self.modulus()
            } else {
                r
            }
        }

        fn range(self) -> (i128, i128) {
            if self.signed {
                (-self.modulus() / 2, self.modulus() / 2 - 1)
            } else {
                (0, self.modulus() - 1)
            }
        }

        fn saturate(self, v: i128) -> i128 {
            let (lo, hi) = self.range();
            v.clamp(lo, hi)
        }

        /// The bit pattern, as an unsigned number.
        fn ubits(self, v: i128) -> u64 {
            v.rem_euclid(self.modulus()) as u64
        }
    }

    /// Metal's `extract_bits(x, off, bits)` for `off + bits` within the width.
    fn extract_bits(t: IntTy, x: i128, off: u32, bits: u32) -> i128 {
        if bits == 0 {
            return 0;
        }
        let field = (t.ubits(x) >> off) & ((1u64 << bits) - 1);
        let f = IntTy {
            bits,
            signed: t.signed,
        };
        f.wrap(field as i128)
    }

    fn insert_bits(t: IntTy, base: i128, ins: i128, off: u32, bits: u32) -> i128 {
        let mask = ((1u64 << bits) - 1) << off;
        let r = (t.ubits(base) & !mask) | ((t.ubits(ins) << off) & mask);
        t.wrap(r as i128)
    }

    fn rotate(t: IntTy, v: i128, i: i128) -> i128 {
        let s = t.ubits(i) % t.bits as u64;
        let u = t.ubits(v) as u128;
        t.wrap(((u << s) | (u >> (t.bits as u64 - s))) as i128)
    }

    fn reverse(t: IntTy, x: i128) -> i128 {
        let u = t.ubits(x);
        let r = (0..t.bits).fold(0u64, |acc, k| acc | (((u >> k) & 1) << (t.bits - 1 - k)));
        t.wrap(r as i128)
    }

    fn clz(t: IntTy, x: i128) -> i128 {
        let u = t.ubits(x);
        (0..t.bits)
            .take_while(|k| u >> (t.bits - 1 - k) & 1 == 0)
            .count() as i128
    }

    fn ctz(t: IntTy, x: i128) -> i128 {
        let u = t.ubits(x);
        (0..t.bits).take_while(|k| u >> k & 1 == 0).count() as i128
    }

    fn median3(x: i128, y: i128, z: i128) -> i128 {
        x.min(y).max(x.max(y).min(z))
    }

    /// The 16 functions of `narrow_ops` (and their 32-bit forms), in order;
    /// values as the result type (absdiff's is unsigned).
    fn int_reference(t: IntTy, [x, y, z]: [i128; 3], off: u32, bits: u32) -> [i128; 16] {
        let mulhi = (x * y).div_euclid(t.modulus());
        [
            (x - y).abs(),
            t.saturate(x + y),
            t.saturate(x - y),
            t.saturate(x * y + z),
            (x + y).div_euclid(2),
            (x + y + 1).div_euclid(2),
            mulhi,
            t.wrap(mulhi + z),
            rotate(t, x, y),
            extract_bits(t, x, off, bits),
            insert_bits(t, x, y, off, bits),
            t.ubits(x).count_ones() as i128,
            clz(t, x),
            ctz(t, x),
            reverse(t, x),
            median3(x, y, z),
        ]
    }

    fn int_inputs(n: usize) -> [Vec<i32>; 3] {
        let mut r = Rng(0xC0FFEE);
        let edges = [
            0,
            1,
            -1,
            i32::MAX,
            i32::MIN,
            i32::MAX - 1,
            i32::MIN + 1,
            0x7fff,
            0x8000,
            -0x8000,
            0xffff,
            0x10000,
            255,
            128,
            -128,
            127,
            0x5555_5555,
            0xAAAA_AAAAu32 as i32,
            46341,
            -46341,
            0x1234_5678,
            -2,
            (65535u32 * 65535) as i32,
            0x00ff_ff00,
        ];
        // Every pair of edge values meets somewhere: b walks the list at
        // another stride than a.
        let a = (0..n)
            .map(|i| {
                if i < 128 {
                    edges[i % edges.len()]
                } else {
                    r.next() as i32
                }
            })
            .collect();
        let b = (0..n)
            .map(|i| {
                if i < 128 {
                    edges[(i / edges.len() + 7 * i) % edges.len()]
                } else {
                    r.next() as i32
                }
            })
            .collect();
        let c = (0..n)
            .map(|i| {
                if i % 3 == 0 {
                    edges[(5 * i) % edges.len()]
                } else {
                    r.next() as i32
                }
            })
            .collect();
        [a, b, c]
    }

    fn int_bytes(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// Compares the int the kernel stored (`got` bits) with `want` converted
    /// to `int` as C++ does (wrapping).
    fn assert_int(got: u32, want: i128, what: &str) {
        let want = want.rem_euclid(1 << 32) as u32;
        assert_eq!(
            got, want,
            "{what}: got {:#x} ({}), want {:#x} ({})",
            got, got as i32, want, want as i32
        );
    }

    #[test]
    fn integer_functions_match_cpu() {
        let n = 256;
        let [a, b, c] = int_inputs(n);
        let buffers = vec![
            (0, int_bytes(&a)),
            (1, int_bytes(&b)),
            (2, int_bytes(&c)),
            (3, vec![0; n * 74 * 4]),
        ];
        let Some(out) = run("stdlib_int.metal", "int_math", n, buffers) else {
            return;
        };
        let o = u32s(&out[&3]);
        for i in 0..n {
            let got = &o[74 * i..74 * i + 74];
            let (x, y, z) = (a[i] as i128, b[i] as i128, c[i] as i128);
            let off = (b[i] as u32) & 15;
            let bits = (c[i] as u32) % (33 - off);
            let at = |k: usize| format!("int_math[{i}] output {k} (x = {x}, y = {y}, z = {z})");
            // Signed: outputs 0..24.
            let r = int_reference(IntTy::INT, [x, y, z], off, bits);
            for k in 0..8 {
                assert_int(got[k], r[k], &at(k));
            }
            let (x24, y24) = (x >> 8, y >> 8);
            assert_int(got[8], x24 * y24, &at(8));
            assert_int(got[9], x24 * y24 + z, &at(9));
            for (k, want) in [
                (10, r[8]),
                (11, r[9]),
                (12, r[10]),
                (13, r[11]),
                (14, r[12]),
                (15, r[13]),
                (16, r[14]),
            ] {
                assert_int(got[k], want, &at(k));
            }
            // abs, min, max, clamp, min3, max3, median3 (abs(INT_MIN) wraps in WGSL).
            let tail = [
                x.abs(),
                x.min(y),
                x.max(y),
                x.clamp(y.min(z), y.max(z)),
                x.min(y).min(z),
                x.max(y).max(z),
                r[15],
            ];
            for (k, want) in tail.iter().enumerate() {
                assert_int(got[17 + k], *want, &at(17 + k));
            }
            // Unsigned: outputs 24..42.
            let t = IntTy::UINT;
            let (u, v, w) = (t.wrap(x), t.wrap(y), t.wrap(z));
            let r = int_reference(t, [u, v, w], off, bits);
            for k in 0..8 {
                assert_int(got[24 + k], r[k], &at(24 + k));
            }
            let (u24, v24) = (u >> 8, v >> 8);
            assert_int(got[32], u24 * v24, &at(32));
            assert_int(got[33], u24 * v24 + w, &at(33));
            let rest = [
                r[8],
                r[9],
                r[10],
                r[12],
                u.min(v),
                u.max(v),
                u.clamp(v.min(w), v.max(w)),
                r[15],
            ];
            for (k, want) in rest.iter().enumerate() {
                assert_int(got[34 + k], *want, &at(34 + k));
            }
            check_int4_lanes(&got[42..], [x, y, z], &at(42));
        }
    }

    /// `int4` forms, lane by lane, in the order of `r[8]` in `int_math`.
    fn check_int4_lanes(got: &[u32], [x, y, z]: [i128; 3], what: &str) {
        let t = IntTy::INT;
        let p = [x, y, z, x ^ y];
        let q = [y, z, x, !y];
        for lane in 0..4 {
            let (pl, ql) = (p[lane], q[lane]);
            let want = [
                t.saturate(pl + ql),
                (pl * ql).div_euclid(t.modulus()),
                rotate(t, pl, ql),
                (pl - ql).abs(),
                pl.max(0),
                pl.clamp(-100, 100),
                t.saturate(pl * ql + pl),
                t.saturate(pl - ql),
            ];
            for (k, w) in want.iter().enumerate() {
                assert_int(
                    got[4 * k + lane],
                    *w,
                    &format!("{what}: int4 function {k} lane {lane}"),
                );
            }
        }
    }

    #[test]
    fn narrow_integer_functions_match_cpu() {
        let n = 256;
        let [a, b, c] = int_inputs(n);
        let buffers = vec![
            (0, int_bytes(&a)),
            (1, int_bytes(&b)),
            (2, int_bytes(&c)),
            (3, vec![0; n * 64 * 4]),
        ];
        let Some(out) = run("stdlib_int.metal", "narrow_math", n, buffers) else {
            return;
        };
        let o = u32s(&out[&3]);
        let types = [
            (8, true, "char"),
            (8, false, "uchar"),
            (16, true, "short"),
            (16, false, "ushort"),
        ];
        for i in 0..n {
            for (k, (bits_w, signed, name)) in types.iter().enumerate() {
                let t = IntTy {
                    bits: *bits_w,
                    signed: *signed,
                };
                let xyz = [a[i], b[i], c[i]].map(|v| t.wrap(v as i128));
                let off = (b[i] as u32) & (if *bits_w == 8 { 3 } else { 7 });
                let bits = (c[i] as u32) % (bits_w + 1 - off);
                let want = int_reference(t, xyz, off, bits);
                for (f, w) in want.iter().enumerate() {
                    let what = format!(
                        "narrow_math[{i}] {name} function {f} ({xyz:?}, off {off}, bits {bits})"
                    );
                    assert_int(o[64 * i + 16 * k + f], *w, &what);
                }
            }
        }
    }
}
