//! C++14 conversion rules as MSL applies them (MSL §2.22, §3.1; C++14 [conv.prom], [expr]/10).

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
        (Type::Scalar(_), Type::Scalar(_) | Type::Vector(..)) => Ok(()),
        (Type::Vector(..), Type::Vector(..)) => Err(format!(
            "implicit conversion from `{}` to `{}` is not allowed; use an explicit conversion such as `{}(...)`",
            program.display(from),
            program.display(to),
            program.display(to)
        )),
        _ => Err(format!(
            "cannot convert `{}` to `{}`",
            program.display(from),
            program.display(to)
        )),
    }
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
