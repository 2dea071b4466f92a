//! C++14 conversion rules as MSL applies them (MSL §2.22, §3.1; C++14 [conv.prom], \[expr\]/10).

use super::Program;
use crate::types::{Scalar, Type};

/// Integer promotion: `bool`, `char`, `short` and their unsigned forms become `int`.
pub fn promote(s: Scalar) -> Scalar {
    match s {
        Scalar::Bool | Scalar::Char | Scalar::UChar | Scalar::Short | Scalar::UShort => Scalar::Int,
        other => other,
    }
}

/// The usual arithmetic conversions on two scalar types.
pub fn arithmetic(a: Scalar, b: Scalar) -> Scalar {
    let (a, b) = (promote(a), promote(b));
    if a.is_float() || b.is_float() {
        // An integer converts to the float operand's type; half with float gives float.
        return match (a.is_float(), b.is_float()) {
            (true, true) => {
                if a.rank() >= b.rank() {
                    a
                } else {
                    b
                }
            }
            (true, false) => a,
            _ => b,
        };
    }
    if a == b {
        return a;
    }
    // Same rank: unsigned wins; otherwise the higher rank (signed long holds all of uint).
    match a.rank().cmp(&b.rank()) {
        std::cmp::Ordering::Equal => {
            if a.is_signed_integer() {
                b
            } else {
                a
            }
        }
        std::cmp::Ordering::Greater => a,
        std::cmp::Ordering::Less => b,
    }
}

/// Checks that an implicit conversion `from` → `to` is allowed (MSL §2.22):
/// any scalar to any scalar, scalar to vector (splat), identical types.
/// Returns the message for the error otherwise.
pub fn check_implicit(from: &Type, to: &Type, program: &Program) -> Result<(), String> {
    match (from, to) {
        _ if from == to => Ok(()),
        (Type::Scalar(a), Type::Scalar(b) | Type::Vector(b, _)) => bfloat_implicit(*a, *b),
        (Type::Vector(..), Type::Vector(..)) => Err(format!(
            "implicit conversion from `{}` to `{}` is not allowed; {}",
            program.display(from),
            program.display(to),
            vector_conversion_hint(from, to, program)
        )),
        _ => Err(format!(
            "cannot convert `{}` to `{}`",
            program.display(from),
            program.display(to)
        )),
    }
}

/// How to write the conversion of vector `from` to vector `to` explicitly.
/// A narrowing to fewer components of the same scalar is a swizzle
/// (`v.xyz`): `float3(v)` of a `float4` is itself an error in MSL, since a
/// vector constructor takes exactly the components it needs.
fn vector_conversion_hint(from: &Type, to: &Type, program: &Program) -> String {
    const COMPONENTS: &str = "xyzw";
    let target = program.display(to);
    match (from, to) {
        (Type::Vector(a, n), Type::Vector(b, m)) if m < n => {
            let swizzle = &COMPONENTS[..*m as usize];
            match a == b {
                true => format!("take the first {m} components with `.{swizzle}`"),
                false => format!(
                    "take the first {m} components and convert them: `{target}(v.{swizzle})`"
                ),
            }
        }
        _ => format!("use an explicit conversion such as `{target}(...)`"),
    }
}

/// `bfloat`'s implicit conversions (MSL §2.1): "bfloat is an extended
/// floating point type that only allows implicit conversion to a type of
/// greater floating point rank": to `float`, not to `half`, and neither
/// `float` nor `half` converts implicitly to `bfloat`. Integers and `bool`
/// convert to it as to any arithmetic type.
pub fn bfloat_implicit(from: Scalar, to: Scalar) -> Result<(), String> {
    let rejected = matches!(
        (from, to),
        (Scalar::BFloat, Scalar::Half) | (Scalar::Float | Scalar::Half, Scalar::BFloat)
    );
    if !rejected {
        return Ok(());
    }
    Err(format!(
        "implicit conversion from `{}` to `{}` is not allowed: `bfloat` converts implicitly only to `float`; use `static_cast<{}>(...)`",
        from.name(),
        to.name(),
        to.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usual_arithmetic_conversions() {
        use Scalar::*;
        assert_eq!(arithmetic(Int, UInt), UInt);
        assert_eq!(arithmetic(Int, Float), Float);
        assert_eq!(arithmetic(Half, Int), Half);
        assert_eq!(arithmetic(Half, Float), Float);
        assert_eq!(arithmetic(Bool, Bool), Int);
        assert_eq!(arithmetic(UInt, Long), Long);
    }
}
