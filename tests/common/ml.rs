//! What the ML-kernel tests share: the element types kernels are
//! instantiated for (`float`, `half`, `bfloat`) with their encodings and
//! round-to-nearest-even, running a kernel of `fixtures/ml`, the SIMD-group
//! modes to run it in, and comparing GPU results with an exact (`f64`) CPU
//! reference and an error bound.

use msl2wgsl::runner::{run_kernel, Dispatch, Gpu};
use msl2wgsl::{Options, SimdGroups};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// `float`'s unit roundoff, 2^-24: the relative error of one rounding to
/// nearest. The kernels accumulate in `float`; bounds count roundings.
pub const U: f64 = 1.0 / 16_777_216.0;

/// An element type of a kernel instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `float`.
    F32,
    /// `half`.
    F16,
    /// `bfloat` (`bfloat16_t`).
    Bf16,
}

/// Every element type, in the order the fixtures instantiate them.
pub const ELEMS: [Elem; 3] = [Elem::F32, Elem::F16, Elem::Bf16];

impl Elem {
    /// The type's part of the instances' host names.
    pub fn suffix(self) -> &'static str {
        match self {
            Elem::F32 => "float32",
            Elem::F16 => "float16",
            Elem::Bf16 => "bfloat16",
        }
    }

    /// Bytes per element in a Metal buffer.
    pub fn size(self) -> usize {
        match self {
            Elem::F32 => 4,
            Elem::F16 | Elem::Bf16 => 2,
        }
    }

    /// `x` rounded to this type, to nearest with ties to even (one
    /// rounding from `f64`, as Metal's conversions round).
    pub fn round(self, x: f64) -> f64 {
        match self {
            Elem::F32 => f64::from(x as f32),
            Elem::F16 => half::f16::from_f64(x).to_f64(),
            Elem::Bf16 => half::bf16::from_f64(x).to_f64(),
        }
    }

    /// `values` rounded to this type, as buffer bytes.
    pub fn encode(self, values: &[f64]) -> Vec<u8> {
        values
            .iter()
            .flat_map(|&x| match self {
                Elem::F32 => (x as f32).to_le_bytes().to_vec(),
                Elem::F16 => half::f16::from_f64(x).to_le_bytes().to_vec(),
                Elem::Bf16 => half::bf16::from_f64(x).to_le_bytes().to_vec(),
            })
            .collect()
    }

    /// Buffer bytes as values of this type.
    pub fn decode(self, bytes: &[u8]) -> Vec<f64> {
        bytes
            .chunks_exact(self.size())
            .map(|c| match self {
                Elem::F32 => f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                Elem::F16 => half::f16::from_le_bytes([c[0], c[1]]).to_f64(),
                Elem::Bf16 => half::bf16::from_le_bytes([c[0], c[1]]).to_f64(),
            })
            .collect()
    }

    /// `values` as this type holds them (what a kernel reads after the host
    /// wrote `encode(values)`).
    pub fn quantise(self, values: &[f64]) -> Vec<f64> {
        values.iter().map(|&x| self.round(x)).collect()
    }
}

/// Deterministic values uniform in `[lo, hi)`.
pub fn uniform(n: usize, seed: u32, lo: f64, hi: f64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(0x9e37_79b9) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            lo + (hi - lo) * f64::from(x) / 4_294_967_296.0
        })
        .collect()
}

/// Little-endian bytes of `i32`s.
pub fn i32_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian bytes of `u32`s.
pub fn u32_bytes(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The source of `fixtures/ml/NAME` and the options that find its header.
pub fn fixture(name: &str) -> (String, String) {
    let path = ml_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path.display().to_string(), text)
}

/// `fixtures/ml`.
pub fn ml_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/ml")
}

/// Translation options for `fixtures/ml` kernels run in `simd` mode.
pub fn options(simd: SimdGroups) -> Options {
    let mut options = Options {
        simd,
        ..Options::default()
    };
    options.preprocess.include_dirs.push(ml_dir());
    options
}

/// The SIMD-group modes a kernel is checked in on this adapter: always
/// Apple's 32 lanes emulated; natively too where the adapter has subgroups
/// and either the kernel holds for any width (`any_width`) or the adapter's
/// subgroups are 32 wide.
pub fn modes(any_width: bool) -> Vec<SimdGroups> {
    let mut modes = vec![SimdGroups::Emulated32];
    if let Some(gpu) = super::gpu() {
        let subgroups = gpu.features().contains(msl2wgsl::wgpu::Features::SUBGROUP);
        let native_32 = gpu.simd_groups(SimdGroups::Auto) == SimdGroups::Native;
        if subgroups && (any_width || native_32) {
            modes.push(SimdGroups::Native);
        }
    }
    modes
}

/// Runs `entry` of `fixtures/ml/FILE` in `simd` mode; `None` without a GPU.
pub fn run(
    file: &str,
    entry: &str,
    simd: SimdGroups,
    dispatch: Dispatch,
    buffers: Vec<(u32, Vec<u8>)>,
) -> Option<BTreeMap<u32, Vec<u8>>> {
    Some(run_on(super::gpu()?, file, entry, simd, dispatch, buffers))
}

/// [`run`] on `gpu`.
pub fn run_on(
    gpu: &Gpu,
    file: &str,
    entry: &str,
    simd: SimdGroups,
    dispatch: Dispatch,
    buffers: Vec<(u32, Vec<u8>)>,
) -> BTreeMap<u32, Vec<u8>> {
    let (name, text) = fixture(file);
    let buffers: BTreeMap<u32, Vec<u8>> = buffers.into_iter().collect();
    run_kernel(
        gpu,
        &name,
        &text,
        &options(simd),
        entry,
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{entry} ({simd:?}): {e}"))
}

/// The test GPU with a longer wait for results: lavapipe compiles a
/// kernel's pipeline on its first dispatch, and a large kernel's can take
/// LLVM tens of seconds of CPU on a loaded machine (the GEMM's did while
/// every thread held whole 8 × 8 matrices), against `Gpu`'s default 120 s.
pub fn patient_gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Option<Gpu>> = OnceLock::new();
    super::gpu()?;
    GPU.get_or_init(|| {
        Gpu::new()
            .ok()
            .map(|gpu| gpu.with_timeout(Duration::from_secs(900)))
    })
    .as_ref()
}

/// Checks that each `got[i]` is a possible result of rounding to `elem` a
/// value within `bound[i]` of `exact[i]`: between `elem.round(exact -
/// bound)` and `elem.round(exact + bound)` (rounding is monotonic). For
/// `float` results that is the bound itself; for `half` and `bfloat` it
/// adds the final rounding, as Metal's conversion does it (nearest, ties
/// to even).
pub fn assert_rounded_within(what: &str, elem: Elem, got: &[f64], exact: &[f64], bound: &[f64]) {
    assert_eq!(got.len(), exact.len(), "{what}: length");
    for (i, ((&g, &e), &b)) in got.iter().zip(exact).zip(bound).enumerate() {
        let (lo, hi) = (elem.round(e - b), elem.round(e + b));
        assert!(
            g >= lo && g <= hi,
            "{what}: element {i}: got {g:e}, want {e:e} ± {b:e} rounded to {elem:?}: [{lo:e}, {hi:e}]"
        );
    }
}
