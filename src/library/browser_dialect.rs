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
//!   an `f` literal outside the finite range.

/// The decimal naga writes for `f32::MAX` (without its `f` suffix).
const F32_MAX_DECIMAL: &str = "340282350000000000000000000000000000000";
/// `f32::MAX`, exactly.
const F32_MAX_HEX: &str = "0x1.fffffep+127";

/// `text` (naga's WGSL) as browsers take it.
pub fn adapt(text: String, subgroups: bool) -> String {
    let text = exact_f32_max(text);
    if subgroups {
        format!("enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n{text}")
    } else {
        text
    }
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
