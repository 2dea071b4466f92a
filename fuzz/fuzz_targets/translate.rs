//! The whole translation: bytes → UTF-8 check → preprocess → parse → sema →
//! lowering → naga validation → WGSL. Any input may be rejected, but only
//! with located user diagnostics: a panic (which the library turns into an
//! "internal compiler error" diagnostic), a WGSL module naga rejects, a hang
//! or a stack overflow is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use msl2wgsl::{decode_source, Library, Options};

fuzz_target!(|data: &[u8]| {
    let text = match decode_source("fuzz.metal", data.to_vec()) {
        Ok(text) => text,
        Err(failure) => {
            // Rendering must not panic either (it slices lines by column).
            let _ = failure.render();
            return;
        }
    };
    match Library::from_source("fuzz.metal", &text, &Options::default()) {
        Ok(library) => {
            let _ = library.warnings();
            for name in library.function_names() {
                assert!(library.function_wgsl(name).is_some(), "no WGSL for `{name}`");
            }
        }
        Err(failure) => {
            let rendered = failure.render();
            assert!(
                !rendered.contains("internal compiler error"),
                "internal compiler error on fuzz input:\n{rendered}"
            );
        }
    }
});
