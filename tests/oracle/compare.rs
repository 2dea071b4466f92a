//! Comparing the buffers of two runs: byte for byte, except the floats of a
//! program that calls approximate builtins, which may differ within WGSL's
//! precision table.

use super::fill::Leaf;
use naga::{MathFunction as M, ScalarKind};

/// How far two floats may be apart: `ulps` units in the last place of the
/// expected value, or `absolute`, whichever is larger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// ULPs of the expected value.
    pub ulps: f64,
    /// Absolute difference.
    pub absolute: f64,
}

/// The loosest bound WGSL's precision table gives the builtins `used`
/// (f32 rows; f16 results are compared with the same number of ULPs of
/// f16). Builtins whose bound is "inherited" get the bound of the
/// expression they are defined by, rounded up generously: the oracle looks
/// for translation bugs, which are far larger.
pub fn tolerance(used: &[M]) -> Option<Tolerance> {
    let bound = |f: M| -> (f64, f64) {
        match f {
            M::Sin | M::Cos => (0.0, 2f64.powi(-11)),
            M::Exp | M::Exp2 => (3.0 + 2.0 * 16.0, 0.0),
            M::Log | M::Log2 => (3.0, 2f64.powi(-21)),
            M::InverseSqrt => (2.0, 0.0),
            M::Sqrt => (5.0, 0.0),
            // tan, pow, the hyperbolic and inverse functions, length,
            // normalize, distance, smoothstep, ...: inherited.
            _ => (64.0, 2f64.powi(-10)),
        }
    };
    used.iter()
        .map(|&f| bound(f))
        .reduce(|a, b| (a.0.max(b.0), a.1.max(b.1)))
        .map(|(ulps, absolute)| Tolerance { ulps, absolute })
}

/// Equal as floats.
pub const EXACT: Tolerance = Tolerance {
    ulps: 0.0,
    absolute: 0.0,
};

fn close(expected: f64, got: f64, ulp: f64, tolerance: Tolerance) -> bool {
    if expected.is_nan() || got.is_nan() {
        return expected.is_nan() && got.is_nan();
    }
    if expected == got {
        return true;
    }
    let diff = (expected - got).abs();
    diff <= tolerance.absolute || diff <= tolerance.ulps * ulp
}

/// ULP of an f32 near `x`.
fn ulp32(x: f32) -> f64 {
    let x = x.abs();
    let next = f32::from_bits(x.to_bits() + 1);
    (next as f64 - x as f64).max(f32::from_bits(1) as f64)
}

/// The first difference between `expected` and `got` (same-length buffers)
/// as a line for the report, or `None` when they agree: bytes must be
/// equal, except the float scalars among `leaves`, which are compared as
/// floats within `tolerance` (exactly without one).
pub fn first_difference(
    expected: &[u8],
    got: &[u8],
    leaves: &[Leaf],
    tolerance: Option<Tolerance>,
) -> Option<String> {
    if expected.len() != got.len() {
        return Some(format!("length {} vs {}", expected.len(), got.len()));
    }
    if expected == got {
        return None;
    }
    // Without approximate builtins floats must be equal as floats: WGSL
    // lets an implementation ignore the sign of a zero (and the payload of
    // a NaN), so `-0.0` and `0.0` agree; everything else is bit-exact.
    let tolerance = tolerance.unwrap_or(EXACT);
    let mut covered = vec![false; expected.len()];
    for leaf in leaves {
        let at = leaf.offset as usize;
        let (e, g) = match (leaf.scalar.kind, leaf.scalar.width) {
            (ScalarKind::Float, 4) if at + 4 <= expected.len() => {
                let e = f32::from_le_bytes(expected[at..at + 4].try_into().unwrap());
                let g = f32::from_le_bytes(got[at..at + 4].try_into().unwrap());
                (e, g)
            }
            (ScalarKind::Float, 2) if at + 2 <= expected.len() => {
                let e = half::f16::from_le_bytes([expected[at], expected[at + 1]]);
                let g = half::f16::from_le_bytes([got[at], got[at + 1]]);
                // Same number of f16 ULPs: scale the f32 ULP by 2^13.
                let ulp = ulp32(e.to_f32()) * 8192.0;
                covered[at..at + 2].iter_mut().for_each(|c| *c = true);
                if !close(e.to_f64(), g.to_f64(), ulp, tolerance) {
                    return Some(format!("f16 at byte {at}: expected {e}, got {g}"));
                }
                continue;
            }
            _ => continue,
        };
        covered[at..at + 4].iter_mut().for_each(|c| *c = true);
        if !close(e as f64, g as f64, ulp32(e), tolerance) {
            return Some(format!("f32 at byte {at}: expected {e:e}, got {g:e}"));
        }
    }
    (0..expected.len())
        .find(|&i| !covered[i] && expected[i] != got[i])
        .map(|i| describe_byte(expected, got, i))
}

/// A byte difference, shown as the 32-bit word around it.
pub fn describe_byte(expected: &[u8], got: &[u8], i: usize) -> String {
    let w = i & !3;
    let word = |b: &[u8]| -> String {
        b[w..(w + 4).min(b.len())]
            .iter()
            .rev()
            .map(|x| format!("{x:02x}"))
            .collect()
    };
    format!(
        "byte {i}: word at {w} expected 0x{}, got 0x{}",
        word(expected),
        word(got)
    )
}

/// The first differing byte of two equal-length buffers.
pub fn first_byte_difference(expected: &[u8], got: &[u8]) -> Option<String> {
    if expected.len() != got.len() {
        return Some(format!("length {} vs {}", expected.len(), got.len()));
    }
    (0..expected.len())
        .find(|&i| expected[i] != got[i])
        .map(|i| describe_byte(expected, got, i))
}
