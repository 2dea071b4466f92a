//! Element types of case buffers, their little-endian encoding, the
//! generators that fill input buffers, and element comparison.

use std::fmt;

/// A scalar as the case language computes with it: integers exactly, floats
/// as `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// Any integer type.
    Int(i64),
    /// `float` or `half`.
    Float(f64),
}

impl Value {
    /// The value as a float.
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Float(f) => f,
        }
    }

    /// True unless zero.
    pub fn truthy(self) -> bool {
        match self {
            Value::Int(i) => i != 0,
            Value::Float(f) => f != 0.0,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
        }
    }
}

/// The element type of a case buffer, named as in MSL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElemType {
    /// 32-bit IEEE float.
    Float,
    /// 16-bit IEEE float.
    Half,
    /// Signed 32-bit.
    Int,
    /// Unsigned 32-bit.
    Uint,
    /// Signed 16-bit.
    Short,
    /// Unsigned 16-bit.
    Ushort,
    /// Signed 8-bit.
    Char,
    /// Unsigned 8-bit.
    Uchar,
}

impl ElemType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ElemType::Float | ElemType::Int | ElemType::Uint => 4,
            ElemType::Half | ElemType::Short | ElemType::Ushort => 2,
            ElemType::Char | ElemType::Uchar => 1,
        }
    }

    /// True for `float` and `half`.
    pub fn is_float(self) -> bool {
        matches!(self, ElemType::Float | ElemType::Half)
    }

    /// The integer range, for integer types.
    fn int_range(self) -> (i64, i64) {
        match self {
            ElemType::Int => (i32::MIN.into(), i32::MAX.into()),
            ElemType::Uint => (0, u32::MAX.into()),
            ElemType::Short => (i16::MIN.into(), i16::MAX.into()),
            ElemType::Ushort => (0, u16::MAX.into()),
            ElemType::Char => (i8::MIN.into(), i8::MAX.into()),
            ElemType::Uchar => (0, u8::MAX.into()),
            ElemType::Float | ElemType::Half => (i64::MIN, i64::MAX),
        }
    }

    /// Converts a value given in a case file: floats are rounded to the
    /// type; integers must be whole and in range.
    pub fn exact(self, v: Value) -> Result<Value, String> {
        if self.is_float() {
            return Ok(Value::Float(v.as_f64()));
        }
        let i = match v {
            Value::Int(i) => i,
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => f as i64,
            Value::Float(f) => return Err(format!("{f} is not an integer ({self:?})")),
        };
        let (lo, hi) = self.int_range();
        if i < lo || i > hi {
            return Err(format!("{i} is out of range for {self:?} ({lo}..={hi})"));
        }
        Ok(Value::Int(i))
    }

    /// Converts a computed value the way C converts to the type: floats
    /// truncate toward zero, integers wrap.
    pub fn convert(self, v: Value) -> Result<Value, String> {
        if self.is_float() {
            return Ok(Value::Float(v.as_f64()));
        }
        let i = match v {
            Value::Int(i) => i,
            Value::Float(f) if f.is_nan() => return Err(format!("NaN converted to {self:?}")),
            Value::Float(f) => f as i64,
        };
        Ok(Value::Int(self.wrap(i)))
    }

    fn wrap(self, i: i64) -> i64 {
        match self {
            ElemType::Int => i64::from(i as i32),
            ElemType::Uint => i64::from(i as u32),
            ElemType::Short => i64::from(i as i16),
            ElemType::Ushort => i64::from(i as u16),
            ElemType::Char => i64::from(i as i8),
            ElemType::Uchar => i64::from(i as u8),
            ElemType::Float | ElemType::Half => i,
        }
    }

    /// Appends the little-endian encoding of `v` (already converted).
    pub fn encode(self, v: Value, out: &mut Vec<u8>) {
        let i = match v {
            Value::Int(i) => i,
            Value::Float(f) => f as i64,
        };
        match self {
            ElemType::Float => out.extend((v.as_f64() as f32).to_le_bytes()),
            ElemType::Half => out.extend(half::f16::from_f64(v.as_f64()).to_le_bytes()),
            ElemType::Int | ElemType::Uint => out.extend((i as u32).to_le_bytes()),
            ElemType::Short | ElemType::Ushort => out.extend((i as u16).to_le_bytes()),
            ElemType::Char | ElemType::Uchar => out.push(i as u8),
        }
    }

    /// Decodes element `k` of `bytes`.
    pub fn decode(self, bytes: &[u8], k: usize) -> Option<Value> {
        let at = k.checked_mul(self.size())?;
        let b = bytes.get(at..at + self.size())?;
        Some(match self {
            ElemType::Float => Value::Float(f32::from_le_bytes([b[0], b[1], b[2], b[3]]).into()),
            ElemType::Half => Value::Float(half::f16::from_le_bytes([b[0], b[1]]).to_f64()),
            ElemType::Int => Value::Int(i32::from_le_bytes([b[0], b[1], b[2], b[3]]).into()),
            ElemType::Uint => Value::Int(u32::from_le_bytes([b[0], b[1], b[2], b[3]]).into()),
            ElemType::Short => Value::Int(i16::from_le_bytes([b[0], b[1]]).into()),
            ElemType::Ushort => Value::Int(u16::from_le_bytes([b[0], b[1]]).into()),
            ElemType::Char => Value::Int((b[0] as i8).into()),
            ElemType::Uchar => Value::Int(b[0].into()),
        })
    }

    /// The element's bits as an integer ordered like the floats they encode
    /// (for ULP distances); integers as they are.
    fn ordered_bits(self, v: Value) -> i64 {
        let bits = match self {
            ElemType::Float => i64::from((v.as_f64() as f32).to_bits() as i32),
            ElemType::Half => i64::from(half::f16::from_f64(v.as_f64()).to_bits() as i16),
            _ => return v.as_f64() as i64,
        };
        // Negative floats count down from zero, so adjacent floats differ by one.
        if bits < 0 {
            let sign = if self == ElemType::Float {
                i64::from(i32::MIN)
            } else {
                i64::from(i16::MIN)
            };
            sign - bits
        } else {
            bits
        }
    }
}

/// The splitmix64 generator (Steele, Lea and Flood, 2014): a 64-bit state
/// advanced by a constant, then mixed. Small, fast, and the same on every
/// platform, so a `random` buffer is the same everywhere.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A float uniformly in `[0, 1)`, from the top 53 bits.
    pub fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A value of type `ty` in `[min, max)` for floats, `[min, max]` for
    /// integers (by remainder: the bias is below 2^-32 for spans under 2^32).
    pub fn next_in(&mut self, ty: ElemType, min: Value, max: Value) -> Value {
        if ty.is_float() {
            let (lo, hi) = (min.as_f64(), max.as_f64());
            return Value::Float(lo + (hi - lo) * self.next_unit());
        }
        let (lo, hi) = (min.as_f64() as i64, max.as_f64() as i64);
        let span = (hi - lo) as u64 + 1;
        Value::Int(lo + (self.next_u64() % span) as i64)
    }
}

/// Tolerances for comparing floats (integers use `abs` only). An element
/// passes if it equals the expected value exactly, or is within any one of
/// the tolerances given.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tolerance {
    /// `|got - expected| <= abs`
    pub abs: Option<f64>,
    /// `|got - expected| <= rel * |expected|`
    pub rel: Option<f64>,
    /// At most this many representable values apart (in the element type).
    pub ulp: Option<u64>,
}

impl Tolerance {
    /// True if no tolerance is given: only equal values pass.
    pub fn is_exact(&self) -> bool {
        self.abs.is_none() && self.rel.is_none() && self.ulp.is_none()
    }

    /// True if `got` is acceptable for `expected`, both already of type `ty`.
    pub fn accepts(&self, ty: ElemType, got: Value, expected: Value) -> bool {
        let (g, e) = (got.as_f64(), expected.as_f64());
        if g == e || (g.is_nan() && e.is_nan()) {
            return true;
        }
        if !g.is_finite() || !e.is_finite() {
            return false;
        }
        let diff = (g - e).abs();
        if self.abs.is_some_and(|t| diff <= t) || self.rel.is_some_and(|t| diff <= t * e.abs()) {
            return true;
        }
        self.ulp.is_some_and(|t| {
            ty.is_float() && ty.ordered_bits(got).abs_diff(ty.ordered_bits(expected)) <= t
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // First outputs for seed 0 (reference implementation by Vigna).
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(rng.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn random_ranges() {
        let mut rng = SplitMix64::new(42);
        for _ in 0..1000 {
            let f = rng
                .next_in(ElemType::Float, Value::Float(-1.0), Value::Float(1.0))
                .as_f64();
            assert!((-1.0..1.0).contains(&f));
            let Value::Int(i) = rng.next_in(ElemType::Int, Value::Int(-3), Value::Int(3)) else {
                panic!()
            };
            assert!((-3..=3).contains(&i));
        }
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        assert_eq!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn encode_decode() {
        let mut bytes = Vec::new();
        ElemType::Half.encode(Value::Float(1.5), &mut bytes);
        ElemType::Char.encode(Value::Int(-2), &mut bytes);
        ElemType::Uint.encode(Value::Int(0xffff_ffff), &mut bytes);
        assert_eq!(bytes, [0x00, 0x3e, 0xfe, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(ElemType::Half.decode(&bytes, 0), Some(Value::Float(1.5)));
        assert_eq!(ElemType::Char.decode(&bytes[2..], 0), Some(Value::Int(-2)));
        assert_eq!(
            ElemType::Uint.decode(&bytes[3..], 0),
            Some(Value::Int(0xffff_ffff))
        );
        assert_eq!(ElemType::Uint.decode(&bytes[3..], 1), None);
    }

    #[test]
    fn conversions() {
        assert_eq!(ElemType::Uchar.convert(Value::Int(257)), Ok(Value::Int(1)));
        assert_eq!(
            ElemType::Int.convert(Value::Float(-2.7)),
            Ok(Value::Int(-2))
        );
        assert!(ElemType::Uchar.exact(Value::Int(256)).is_err());
        assert!(ElemType::Int.exact(Value::Float(0.5)).is_err());
        assert_eq!(ElemType::Int.exact(Value::Float(3.0)), Ok(Value::Int(3)));
    }

    #[test]
    fn tolerances() {
        let exact = Tolerance::default();
        let f = ElemType::Float;
        assert!(exact.accepts(f, Value::Float(1.0), Value::Float(1.0)));
        assert!(!exact.accepts(f, Value::Float(1.0), Value::Float(1.0000001)));
        let next = f64::from(f32::from_bits(1.0f32.to_bits() + 2));
        let ulp2 = Tolerance {
            ulp: Some(2),
            ..exact
        };
        assert!(ulp2.accepts(f, Value::Float(next), Value::Float(1.0)));
        assert!(!Tolerance {
            ulp: Some(1),
            ..exact
        }
        .accepts(f, Value::Float(next), Value::Float(1.0)));
        // Across zero: -0.0 and the smallest positive subnormal are 1 ulp apart.
        let tiny = f64::from(f32::from_bits(1));
        assert!(Tolerance {
            ulp: Some(1),
            ..exact
        }
        .accepts(f, Value::Float(tiny), Value::Float(-0.0)));
        let rel = Tolerance {
            rel: Some(1e-3),
            ..exact
        };
        assert!(rel.accepts(f, Value::Float(1000.5), Value::Float(1000.0)));
        assert!(!rel.accepts(f, Value::Float(1002.0), Value::Float(1000.0)));
        assert!(exact.accepts(f, Value::Float(f64::NAN), Value::Float(f64::NAN)));
    }
}
