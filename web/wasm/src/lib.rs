//! msl2wgsl's translator as WebAssembly: `translate(source, options)` gives
//! JavaScript `{ ok, wgsl, reflection, diagnostics, functionWgsl }`.
//!
//! The work is done by [`translate_json`] (plain Rust, tested natively); the
//! `wasm_bindgen` exports only move JSON across the boundary, so the objects
//! JavaScript gets are exactly the reflection schema of `docs/REFLECTION.md`.

mod diagnostics;
mod options;

pub use diagnostics::JsDiagnostic;
pub use options::JsOptions;

use msl2wgsl::reflect::{ReflectionDocument, SCHEMA_VERSION};
use msl2wgsl::Library;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Mutex, Once};
use wasm_bindgen::prelude::*;

/// The file name diagnostics use when the options give none.
const DEFAULT_NAME: &str = "shader.metal";

/// What `translate` returns.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Translation<'a> {
    /// True when the source translated (there may still be warnings).
    pub ok: bool,
    /// The WGSL module with every translated function; null on failure.
    pub wgsl: Option<&'a str>,
    /// `msl2wgsl reflect`'s document (`schemaVersion`, `functions`); null on failure.
    pub reflection: Option<ReflectionDocument<'a>>,
    /// Errors and warnings, in the order found.
    pub diagnostics: Vec<JsDiagnostic>,
    /// With `functionWgsl: true`: each function's own module, by MSL name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_wgsl: Option<BTreeMap<String, String>>,
}

/// Translates `source` with options given as JSON (`{}` for the defaults) and
/// returns the result as JSON; `Err` only for bad options (a usage error,
/// not a diagnostic about the source).
pub fn translate_json(source: &str, options_json: &str) -> Result<String, String> {
    let js: JsOptions =
        serde_json::from_str(options_json).map_err(|e| format!("bad translate options: {e}"))?;
    let options = js.to_options()?;
    let name = js.name.as_deref().unwrap_or(DEFAULT_NAME);
    let json = match Library::from_source(name, source, &options) {
        Ok(library) => {
            let function_wgsl = js.function_wgsl.then(|| per_function_wgsl(&library));
            let translation = Translation {
                ok: true,
                wgsl: Some(library.wgsl()),
                reflection: Some(ReflectionDocument {
                    schema_version: SCHEMA_VERSION,
                    functions: library.functions().iter().collect(),
                }),
                diagnostics: library
                    .warning_diagnostics()
                    .0
                    .iter()
                    .map(|d| diagnostics::from_diagnostic(d, library.source_map()))
                    .collect(),
                function_wgsl,
            };
            serde_json::to_string(&translation)
        }
        Err(failure) => {
            let translation = Translation {
                ok: false,
                wgsl: None,
                reflection: None,
                diagnostics: failure
                    .diagnostics
                    .0
                    .iter()
                    .map(|d| diagnostics::from_diagnostic(d, &failure.source_map))
                    .collect(),
                function_wgsl: None,
            };
            serde_json::to_string(&translation)
        }
    };
    json.map_err(|e| format!("cannot serialise the translation: {e}"))
}

fn per_function_wgsl(library: &Library) -> BTreeMap<String, String> {
    library
        .function_names()
        .into_iter()
        .filter_map(|name| Some((name.to_string(), library.function_wgsl(name)?)))
        .collect()
}

/// The message of the last panic, kept by the hook [`install_panic_hook`]
/// sets: on wasm32 a panic aborts (a `RuntimeError: unreachable` in
/// JavaScript), and the page asks for the message afterwards.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            if let Ok(mut last) = LAST_PANIC.lock() {
                *last = Some(info.to_string());
            }
        }));
    });
}

/// JavaScript: `translate(source, options?)` → `{ ok, wgsl, reflection,
/// diagnostics, functionWgsl? }`. Options (all optional): `target`
/// (`"webgpu"`|`"wgpu"`), `entries`, `defines` (`["A", "B=2"]` or
/// `{A: null, B: 2}`), `threadgroupSize` (`64` or `[8, 8]`), `platform`
/// (`"macos"`|`"ios"`), `half` (`"f16"`|`"f32"`), `uniformLayout` (`"wgsl"`|`"standard"`|`"none"`), `threadgroupMemory` (`{0: 1024}`), `textureFormats`
/// (`{0: "rgba8unorm"}`), `bindingMap`, `headers` (`{"MyTypes.h": text}`, for
/// `#include`), `name` (file name in diagnostics),
/// `functionWgsl` (bool). Throws on bad options.
#[wasm_bindgen(js_name = translate)]
pub fn translate_js(source: &str, options: JsValue) -> Result<JsValue, JsError> {
    install_panic_hook();
    let options_json = if options.is_undefined() || options.is_null() {
        "{}".to_string()
    } else {
        js_sys::JSON::stringify(&options)
            .map_err(|_| JsError::new("translate options must be a plain object"))?
            .as_string()
            .unwrap_or_else(|| "{}".to_string())
    };
    let json = translate_json(source, &options_json).map_err(|e| JsError::new(&e))?;
    js_sys::JSON::parse(&json).map_err(|_| JsError::new("internal error: result is not JSON"))
}

/// JavaScript: `lastPanic()` → the message of the panic that aborted the
/// last call (an internal compiler error), or `undefined`.
#[wasm_bindgen(js_name = lastPanic)]
pub fn last_panic() -> Option<String> {
    LAST_PANIC.lock().ok().and_then(|mut last| last.take())
}

/// JavaScript: `panicForTesting()` panics, as an internal compiler error
/// would: the playground's test checks that the page reports it and
/// recovers with a fresh instance.
#[wasm_bindgen(js_name = panicForTesting)]
pub fn panic_for_testing() {
    install_panic_hook();
    panic!("panicForTesting was called");
}

/// JavaScript: `version()` → the translator's crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADD_ARRAYS: &str = include_str!("../../../fixtures/add_arrays.metal");

    fn run(source: &str, options: &str) -> serde_json::Value {
        serde_json::from_str(&translate_json(source, options).unwrap()).unwrap()
    }

    #[test]
    fn a_kernel_translates_with_reflection() {
        let t = run(
            ADD_ARRAYS,
            r#"{"functionWgsl": true, "threadgroupSize": 32}"#,
        );
        assert_eq!(t["ok"], true);
        assert!(t["wgsl"].as_str().unwrap().contains("@workgroup_size(32"));
        let f = &t["reflection"]["functions"][0];
        assert_eq!(f["name"], "add_arrays");
        assert_eq!(f["arguments"][2]["buffer"]["dataType"], "float");
        assert_eq!(f["arguments"][2]["binding"]["binding"], 2);
        assert!(t["functionWgsl"]["add_arrays"].is_string());
        // Whatever it reports (the unannotated buffers take Metal's implicit
        // indices 0, 1, 2) is a warning: the translation succeeded.
        for d in t["diagnostics"].as_array().unwrap() {
            assert_eq!(d["severity"], "warning", "{d}");
        }
    }

    #[test]
    fn an_error_is_located_on_its_line() {
        let source = "kernel void k(device float* out [[buffer(0)]]) {\n  out[0] = 1.0f\n  out[1] = 2.0f;\n}\n";
        let t = run(source, r#"{"name": "bad.metal"}"#);
        assert_eq!(t["ok"], false);
        assert!(t["wgsl"].is_null());
        let d = &t["diagnostics"][0];
        assert_eq!(d["severity"], "error");
        assert_eq!(d["file"], "bad.metal");
        let line = d["line"].as_u64().unwrap();
        assert!(line == 2 || line == 3, "{d}");
        assert!(d["rendered"].as_str().unwrap().starts_with("bad.metal:"));
    }

    #[test]
    fn defines_reach_the_preprocessor() {
        let source = "#ifndef N\n#error N is needed\n#endif\nkernel void k(device int* o [[buffer(0)]]) { o[0] = N; }\n";
        assert_eq!(run(source, "{}")["diagnostics"][0]["line"], 2);
        assert_eq!(run(source, r#"{"defines": {"N": 7}}"#)["ok"], true);
    }

    #[test]
    fn headers_are_included_by_name() {
        let source =
            "#include \"MyTypes.h\"\nkernel void k(device P* o [[buffer(0)]]) { o[0].x = 1.0f; }\n";
        assert_eq!(run(source, "{}")["ok"], false);
        let options = r#"{"headers": {"MyTypes.h": "struct P { float x; };\n"}}"#;
        assert_eq!(run(source, options)["ok"], true);
    }

    #[test]
    fn bad_options_are_an_error_not_a_diagnostic() {
        assert!(translate_json(ADD_ARRAYS, r#"{"target": "metal"}"#).is_err());
        assert!(translate_json(ADD_ARRAYS, "[1]").is_err());
    }
}
