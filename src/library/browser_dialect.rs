//! What the WebGPU dialect needs beyond naga's WGSL writer, found by Tint
//! (`web/tint-check.mjs` over every module the test suite emits).
//!
//! On the IR, before the writer ([`module`]; the pass is
//! `lower::passes::browser_dialect`), so that no user identifier can be
//! hit:
//!
//! - no constant infinities or NaNs: `bitcast<f32>(2139095040u)` becomes
//!   `bitcast<f32>(2139095040u | msl2wgsl_runtime_zero)`, a runtime value
//!   with the same bits (WGSL makes a non-finite constant expression a
//!   shader-creation error);
//! - no loop without an exit: `for (;;)` with neither a `break` nor a
//!   `return` gets an unreachable `if false { break; }` (Tint refuses a
//!   loop that cannot exit; Metal runs it as before).
//!
//! In the IR the lowering emits in the first place: a quad-group ballot
//! passes its predicate (`subgroupBallot(true)`), which WGSL requires and
//! naga's writer leaves out when the IR has none.
//!
//! On the text, only what naga's writer cannot be made to print ([`text`]):
//!
//! - `enable subgroups;` when the module uses subgroup operations (naga's
//!   parser rejects the directive, so it is added after the re-parse), and
//!   `diagnostic(off, subgroup_uniformity);` with it: Metal's SIMD-group
//!   functions run in divergent control flow (on the active threads), which
//!   Tint's uniformity analysis otherwise rejects. Both are directives put
//!   in front of the module, not rewrites of it;
//! - `f32::MAX` as a hexadecimal literal: naga prints it as
//!   `340282350000000000000000000000000000000f`, the shortest decimal that
//!   rounds to it, which is larger than `f32::MAX` itself, and Tint refuses
//!   an `f` literal outside the finite range. No IR prints otherwise (naga
//!   keeps module-scope constants fully evaluated, as literals), so the
//!   literal token itself is rewritten: a number, matched at a token
//!   boundary, never part of an identifier (identifiers do not start with
//!   a digit, and one that contains the digits is not a token boundary).

/// The decimal naga writes for `f32::MAX` (without its `f` suffix).
const F32_MAX_DECIMAL: &str = "340282350000000000000000000000000000000";
/// `f32::MAX`, exactly.
const F32_MAX_HEX: &str = "0x1.fffffep+127";

/// `module` rewritten as browsers need it, or `None` if nothing changes.
pub fn module(module: &naga::Module) -> Option<naga::Module> {
    crate::lower::passes::browser_dialect::adapt(module)
}

/// `text` (naga's WGSL of a module [`module`] adapted) as browsers take it;
/// `subgroups`: the module uses subgroup operations or built-ins.
pub fn text(text: String, subgroups: bool) -> String {
    let text = exact_f32_max(text);
    if subgroups {
        return format!("enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n{text}");
    }
    text
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
        // Never inside an identifier.
        let name = "z = a340282350000000000000000000000000000000f + _340282350000000000000000000000000000000f;".to_string();
        assert_eq!(exact_f32_max(name.clone()), name);
        assert_eq!(F32_MAX_HEX.len(), 15);
        assert_eq!(format!("{}", f32::MAX), F32_MAX_DECIMAL);
    }

    /// Translates `body` (after the metal_stdlib prelude) for WebGPU.
    fn webgpu(body: &str) -> String {
        let source = format!("#include <metal_stdlib>\nusing namespace metal;\n{body}");
        match crate::Library::from_source("t.metal", &source, &crate::Options::default()) {
            Ok(lib) => lib.wgsl().to_string(),
            Err(e) => panic!("translation failed:\n{e}"),
        }
    }

    #[test]
    fn constant_infinities_become_runtime_values() {
        let out = webgpu(
            "constant float C = 1.0f;\nkernel void k(device float* a [[buffer(0)]]) {\n  a[0] = as_type<float>(0x7f800000u) + as_type<float>(-8388608) + as_type<float>(1065353216u) + C;\n}\n",
        );
        assert!(
            out.contains("var<private> msl2wgsl_runtime_zero: u32;"),
            "{out}"
        );
        assert!(out.contains("2139095040u | "), "{out}");
        assert!(out.contains("4286578688u | "), "{out}");
        // Finite bit patterns stay constant.
        assert!(out.contains("bitcast<f32>(1065353216u)"), "{out}");
        assert!(naga::front::wgsl::parse_str(&out).is_ok(), "{out}");
        // The wgpu dialect is naga's own, left as it is.
        let source = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* a [[buffer(0)]]) {\n  a[0] = as_type<float>(0x7f800000u);\n}\n";
        let options = crate::Options {
            target: crate::Target::Wgpu,
            ..crate::Options::default()
        };
        let wgpu = crate::Library::from_source("t.metal", source, &options).unwrap();
        assert!(
            !wgpu.wgsl().contains("msl2wgsl_runtime_zero"),
            "{}",
            wgpu.wgsl()
        );
    }

    #[test]
    fn a_user_name_like_the_runtime_zero_is_kept_apart() {
        let out = webgpu(
            "float msl2wgsl_runtime_zero(float x) { return x + 1.0f; }\nkernel void k(device float* a [[buffer(0)]]) {\n  a[0] = msl2wgsl_runtime_zero(a[1]) + as_type<float>(0x7f800000u);\n}\n",
        );
        assert!(naga::front::wgsl::parse_str(&out).is_ok(), "{out}");
        assert!(out.contains("fn msl2wgsl_runtime_zero("), "{out}");
    }

    #[test]
    fn subgroup_directives() {
        let text = text("fn f() {}\n".into(), true);
        assert!(text.starts_with("enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n"));
        assert_eq!(super::text("fn f() {}\n".into(), false), "fn f() {}\n");
        // wgpu's front end takes the diagnostic (not the `enable`), so a
        // runner that drops `enable subgroups;` can compile the module.
        let for_naga = text.replace("enable subgroups;", "");
        assert!(naga::front::wgsl::parse_str(&for_naga).is_ok());
    }
}
