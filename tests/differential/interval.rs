//! `float` values as intervals that contain every result a conforming GPU
//! may produce.
//!
//! Each operation computes its exact result range in `f64`, rounds it
//! outward to `f32`, and widens it by the operation's error bound
//! (see TESTING.md, "Differential testing", for the table):
//!
//! | operation | bound used |
//! | --- | --- |
//! | `+ - *`, `fma`, int→float | correctly rounded (outward rounding) |
//! | `/` | 2.5 ULP → 3 ULP |
//! | `sqrt` | WGSL: inherited from `1/inverseSqrt` (2 + 2.5 ULP) → 5 ULP |
//! | `min max abs floor clamp`, negation | exact |
//!
//! `a * b + c` may be contracted to `fma` by the GPU's compiler, and
//! `fma` may be computed unfused: the product's interval holds the exact
//! product, so the sum's interval covers both. Subnormal results may be
//! flushed to zero: an interval that touches the subnormal range is
//! extended to contain 0.

use std::sync::atomic::{AtomicBool, Ordering};

/// A `float` value: the bounds and the value plain `f32` arithmetic gives
/// (shown in reports only).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Float {
    /// The smallest allowed result.
    pub lo: f32,
    /// The largest allowed result.
    pub hi: f32,
    /// What plain `f32` arithmetic gives.
    pub nominal: f32,
}

/// Set unless `MSL2WGSL_DIFF_STRICT_FLOAT=1`: GPU compilers reassociate
/// float arithmetic that SPIR-V does not mark `NoContraction` and GLSL
/// does not mark `precise` (naga marks neither), as Metal's default
/// fast math does. Seen: lavapipe computed `((a - b) - q) + c` as
/// `((a + c) - b) - q`, llvmpipe's GL turned `-((a - b) - c)` into
/// `(c - a) + b`, NVIDIA turned `v*v - 0.1f*v - 3.25f` into
/// `fma(v, v - 0.1f, -3.25f)`. Sums and products then get the error of a
/// rounding at their largest operand's magnitude, and products one more
/// ULP.
pub static REASSOCIATION_SLACK: AtomicBool = AtomicBool::new(true);

fn reassociation_slack() -> bool {
    REASSOCIATION_SLACK.load(Ordering::Relaxed)
}

/// Set on backends that fold loop-carried products (llvmpipe's GL
/// compiler turns five trips of `x *= c` into `x * c^5`, which overflows
/// sooner): magnitudes above 1e7 are then indeterminate.
pub static FOLDS_LOOP_PRODUCTS: AtomicBool = AtomicBool::new(false);

/// Results beyond this magnitude make the thread indeterminate (the GPU
/// might overflow to infinity where we do not).
const LIMIT: f64 = 1.0e30;

/// Why an interval could not be formed.
#[derive(Debug)]
pub struct Overflow;

impl Float {
    /// An exactly known value.
    pub fn exact(v: f32) -> Float {
        Float {
            lo: v,
            hi: v,
            nominal: v,
        }
    }

    /// The interval `[lo, hi]` (exact reals) rounded outward, widened by
    /// `ulps`, flushed and range-checked.
    pub fn from_range(lo: f64, hi: f64, nominal: f32, ulps: u32) -> Result<Float, Overflow> {
        let limit = if FOLDS_LOOP_PRODUCTS.load(Ordering::Relaxed) {
            1.0e7
        } else {
            LIMIT
        };
        if !(lo.abs() < limit && hi.abs() < limit) {
            return Err(Overflow);
        }
        let mut l = round_down(lo);
        let mut h = round_up(hi);
        for _ in 0..ulps {
            l = l.next_down();
            h = h.next_up();
        }
        // A GPU may flush subnormal results (and operands) to zero.
        if l < f32::MIN_POSITIVE && h > -f32::MIN_POSITIVE {
            l = l.min(0.0);
            h = h.max(0.0);
        }
        Ok(Float {
            lo: l,
            hi: h,
            nominal,
        })
    }

    /// True when `v` is a result this interval allows.
    pub fn contains(&self, v: f32) -> bool {
        self.lo <= v && v <= self.hi
    }
}

/// The largest `f32` not above `x`.
pub fn round_down(x: f64) -> f32 {
    let r = x as f32;
    if f64::from(r) > x {
        r.next_down()
    } else {
        r
    }
}

/// The smallest `f32` not below `x`.
pub fn round_up(x: f64) -> f32 {
    let r = x as f32;
    if f64::from(r) < x {
        r.next_up()
    } else {
        r
    }
}

fn lo(a: &Float) -> f64 {
    f64::from(a.lo)
}

fn hi(a: &Float) -> f64 {
    f64::from(a.hi)
}

/// `a + b`. The `f64` sum of two `f32`s can itself be inexact (far apart
/// exponents); then one more ULP is allowed.
pub fn add(a: &Float, b: &Float) -> Result<Float, Overflow> {
    let (l, l_exact) = sum(lo(a), lo(b));
    let (h, h_exact) = sum(hi(a), hi(b));
    let slack = u32::from(!(l_exact && h_exact));
    let (l, h) = if reassociation_slack() {
        let largest = [lo(a), hi(a), lo(b), hi(b)]
            .iter()
            .fold(0.0f64, |m, x| m.max(x.abs()));
        let ulp = largest * f64::from(f32::EPSILON);
        (l - ulp, h + ulp)
    } else {
        (l, h)
    };
    Float::from_range(l, h, a.nominal + b.nominal, slack)
}

/// The `f64` sum and whether it is exact (Knuth's two-sum).
fn sum(a: f64, b: f64) -> (f64, bool) {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s, err == 0.0)
}

/// `-a`.
pub fn neg(a: &Float) -> Float {
    Float {
        lo: -a.hi,
        hi: -a.lo,
        nominal: -a.nominal,
    }
}

/// `a - b`.
pub fn sub(a: &Float, b: &Float) -> Result<Float, Overflow> {
    let r = add(a, &neg(b))?;
    Ok(Float {
        nominal: a.nominal - b.nominal,
        ..r
    })
}

/// The smallest and largest of four products (exact in `f64`).
fn product_range(a: &Float, b: &Float) -> (f64, f64) {
    let p = [lo(a) * lo(b), lo(a) * hi(b), hi(a) * lo(b), hi(a) * hi(b)];
    let min = p.iter().copied().fold(f64::INFINITY, f64::min);
    let max = p.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max)
}

/// `a * b` (f32 × f32 is exact in f64).
pub fn mul(a: &Float, b: &Float) -> Result<Float, Overflow> {
    let (l, h) = product_range(a, b);
    let slack = u32::from(reassociation_slack());
    Float::from_range(l, h, a.nominal * b.nominal, slack)
}

/// `a / b`; `None` when `b` may be zero (the generator guards divisors, so
/// this only happens through a wide interval).
pub fn div(a: &Float, b: &Float) -> Result<Float, Overflow> {
    if b.lo <= 0.0 && b.hi >= 0.0 {
        return Err(Overflow);
    }
    let q = [lo(a) / lo(b), lo(a) / hi(b), hi(a) / lo(b), hi(a) / hi(b)];
    let l = q.iter().copied().fold(f64::INFINITY, f64::min);
    let h = q.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Float::from_range(l, h, a.nominal / b.nominal, 3)
}

/// `fma(a, b, c)`, fused or not (see the module comment).
pub fn fma(a: &Float, b: &Float, c: &Float) -> Result<Float, Overflow> {
    let r = add(&mul(a, b)?, c)?;
    Ok(Float {
        nominal: a.nominal.mul_add(b.nominal, c.nominal),
        ..r
    })
}

/// `sqrt(a)` of a non-negative interval (the generator takes `abs` first;
/// a flushed lower bound may be `-0.0`).
pub fn sqrt(a: &Float) -> Result<Float, Overflow> {
    let l = lo(a).max(0.0).sqrt();
    let h = hi(a).max(0.0).sqrt();
    Float::from_range(l, h, a.nominal.sqrt(), 5)
}

/// `abs(a)`.
pub fn abs(a: &Float) -> Float {
    let (l, h) = if a.lo >= 0.0 {
        (a.lo, a.hi)
    } else if a.hi <= 0.0 {
        (-a.hi, -a.lo)
    } else {
        (0.0, a.hi.max(-a.lo))
    };
    Float {
        lo: l,
        hi: h,
        nominal: a.nominal.abs(),
    }
}

/// `floor(a)` (monotonic, exact).
pub fn floor(a: &Float) -> Float {
    Float {
        lo: a.lo.floor(),
        hi: a.hi.floor(),
        nominal: a.nominal.floor(),
    }
}

/// `min(a, b)`.
pub fn min(a: &Float, b: &Float) -> Float {
    Float {
        lo: a.lo.min(b.lo),
        hi: a.hi.min(b.hi),
        nominal: a.nominal.min(b.nominal),
    }
}

/// `max(a, b)`.
pub fn max(a: &Float, b: &Float) -> Float {
    Float {
        lo: a.lo.max(b.lo),
        hi: a.hi.max(b.hi),
        nominal: a.nominal.max(b.nominal),
    }
}

/// An integer converted to `float`: WGSL lets the GPU round either way.
pub fn from_int(v: i64) -> Float {
    let x = v as f64;
    Float {
        lo: round_down(x),
        hi: round_up(x),
        nominal: v as f32,
    }
}

/// The comparison `a op b` where the intervals decide it, `None` where
/// the GPU could answer either way. `less`, `equal`, `greater` are the
/// operator's answer for each ordering.
pub fn compare(a: &Float, b: &Float, less: bool, equal: bool, greater: bool) -> Option<bool> {
    let mut answers = Vec::new();
    if a.lo < b.hi {
        answers.push(less);
    }
    if a.lo <= b.hi && b.lo <= a.hi {
        answers.push(equal);
    }
    if a.hi > b.lo {
        answers.push(greater);
    }
    let first = answers[0];
    answers.iter().all(|&x| x == first).then_some(first)
}
