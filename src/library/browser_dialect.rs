//! What the WebGPU dialect needs beyond naga's WGSL writer, found by Tint
//! (`web/tint-check.mjs` over every module the test suite emits):
//!
//! - `enable subgroups;` when the module uses subgroup operations (naga's
//!   parser rejects the directive, so it is added after the re-parse);
//! - `diagnostic(off, subgroup_uniformity);` with it: Metal's SIMD-group
//!   functions run in divergent control flow (on the active threads), which
//!   Tint's uniformity analysis otherwise rejects;
//! - `f32::MAX` as a hexadecimal literal: naga prints it as
//!   `340282350000000000000000000000000000000f`, the shortest decimal that
//!   rounds to it, which is larger than `f32::MAX` itself, and Tint refuses
//!   an `f` literal outside the finite range;
//! - no constant infinities or NaNs: WGSL makes a constant expression that
//!   yields one a shader-creation error, and `bitcast<f32>(2139095040u)`
//!   (Metal's `INFINITY`, `numeric_limits<float>::infinity()`, the identity
//!   of `simd_min`) is one. The literal is OR-ed with a private variable
//!   that is always zero, which makes the expression a runtime one with the
//!   same bits (module-scope `const`s are left alone);
//! - `subgroupBallot(true)` where naga writes `subgroupBallot()` (Metal's
//!   `simd_active_threads_mask`): WGSL's ballot takes its predicate.

/// The decimal naga writes for `f32::MAX` (without its `f` suffix).
const F32_MAX_DECIMAL: &str = "340282350000000000000000000000000000000";
/// `f32::MAX`, exactly.
const F32_MAX_HEX: &str = "0x1.fffffep+127";

/// The private variable that makes non-finite bit patterns runtime values.
const RUNTIME_ZERO: &str = "msl2wgsl_runtime_zero";

/// `text` (naga's WGSL) as browsers take it.
pub fn adapt(text: String, subgroups: bool) -> String {
    let text = exact_f32_max(text).replace("subgroupBallot()", "subgroupBallot(true)");
    let (text, runtime_zero) = runtime_non_finite(&text);
    let mut directives = String::new();
    if subgroups {
        directives.push_str("enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n");
    }
    if !runtime_zero {
        return directives + &text;
    }
    // Declarations follow every directive, naga's `enable`s included.
    let body_at = text
        .lines()
        .take_while(|l| l.starts_with("enable ") || l.starts_with("diagnostic(") || l.is_empty())
        .map(|l| l.len() + 1)
        .sum::<usize>()
        .min(text.len());
    let (head, body) = text.split_at(body_at);
    format!("{directives}{head}var<private> {RUNTIME_ZERO}: u32;\n\n{body}")
}

/// Rewrites `bitcast<f32>(N)` of a literal `N` whose bits are an infinity or
/// a NaN (outside module-scope constants) into `bitcast<f32>(Nu | zero)`;
/// returns the text and whether anything was rewritten.
fn runtime_non_finite(text: &str) -> (String, bool) {
    const OPEN: &str = "bitcast<f32>(";
    if !text.contains(OPEN) {
        return (text.to_string(), false);
    }
    let mut out = String::with_capacity(text.len());
    let mut rewrote = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with("const ") || line.starts_with("override ") {
            out.push_str(line);
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find(OPEN) {
            let (before, after) = rest.split_at(at + OPEN.len());
            out.push_str(before);
            match non_finite_literal(after) {
                Some((bits, len)) => {
                    out.push_str(&format!("{bits}u | {RUNTIME_ZERO}"));
                    rest = &after[len..];
                    rewrote = true;
                }
                None => rest = after,
            }
        }
        out.push_str(rest);
    }
    (out, rewrote)
}

/// The bits of an integer literal (`123u`, `-45i`) at the start of `text`,
/// directly followed by `)`, if they are an `f32` infinity or NaN; with the
/// literal's length.
fn non_finite_literal(text: &str) -> Option<(u32, usize)> {
    let negative = text.starts_with('-');
    let digits = text[usize::from(negative)..]
        .chars()
        .take_while(char::is_ascii_digit)
        .count();
    let end = usize::from(negative) + digits;
    let suffix = text[end..].chars().next()?;
    if digits == 0 || !text[end + 1..].starts_with(')') {
        return None;
    }
    let value: i64 = text[..end].parse().ok()?;
    let bits = match suffix {
        'u' => u32::try_from(value).ok()?,
        'i' => i32::try_from(value).ok()? as u32,
        _ => return None,
    };
    (!f32::from_bits(bits).is_finite()).then_some((bits, end + 1))
}

/// Replaces every `340282350000000000000000000000000000000f` literal (a
/// whole token) with the hexadecimal form of `f32::MAX`.
fn exact_f32_max(text: String) -> String {
    if !text.contains(F32_MAX_DECIMAL) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(F32_MAX_DECIMAL) {
        let after = &rest[at + F32_MAX_DECIMAL.len()..];
        let starts_token = !rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_');
        out.push_str(&rest[..at]);
        if starts_token && after.starts_with('f') {
            out.push_str(F32_MAX_HEX);
        } else {
            out.push_str(F32_MAX_DECIMAL);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_max_becomes_exact() {
        let text = "x = -340282350000000000000000000000000000000f;\n".to_string();
        assert_eq!(exact_f32_max(text), "x = -0x1.fffffep+127f;\n");
        let other = "y = 1340282350000000000000000000000000000000f;".to_string();
        assert_eq!(exact_f32_max(other.clone()), other);
        assert_eq!(F32_MAX_HEX.len(), 15);
        assert_eq!(format!("{}", f32::MAX), F32_MAX_DECIMAL);
    }

    #[test]
    fn constant_infinities_become_runtime_values() {
        let text = "enable f16;\n\nconst C: f32 = 1f;\nfn f() -> f32 {\n    return bitcast<f32>(2139095040u) + bitcast<f32>(-8388608i) + bitcast<f32>(1065353216u);\n}\n";
        let out = adapt(text.to_string(), false);
        assert_eq!(
            out,
            "enable f16;\n\nvar<private> msl2wgsl_runtime_zero: u32;\n\nconst C: f32 = 1f;\nfn f() -> f32 {\n    return bitcast<f32>(2139095040u | msl2wgsl_runtime_zero) + bitcast<f32>(4286578688u | msl2wgsl_runtime_zero) + bitcast<f32>(1065353216u);\n}\n"
        );
        assert!(naga::front::wgsl::parse_str(&out.replace("enable f16;", "")).is_ok());
        let constant = "const INF: f32 = bitcast<f32>(2139095040u);\n".to_string();
        assert_eq!(adapt(constant.clone(), false), constant);
        assert_eq!(
            adapt("x = subgroupBallot();".into(), false),
            "x = subgroupBallot(true);"
        );
    }

    #[test]
    fn subgroup_directives() {
        let text = adapt("fn f() {}\n".into(), true);
        assert!(text.starts_with("enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n"));
        assert_eq!(adapt("fn f() {}\n".into(), false), "fn f() {}\n");
        // wgpu's front end takes the diagnostic (not the `enable`), so a
        // runner that drops `enable subgroups;` can compile the module.
        let for_naga = text.replace("enable subgroups;", "");
        assert!(naga::front::wgsl::parse_str(&for_naga).is_ok());
    }
}
