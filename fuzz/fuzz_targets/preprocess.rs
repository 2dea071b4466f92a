//! The preprocessor alone: any byte string that is UTF-8 either preprocesses
//! or fails with diagnostics that render; it never panics or hangs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use msl2wgsl::diagnostics::Diagnostics;
use msl2wgsl::preprocess::{preprocess, Options};
use msl2wgsl::source_map::SourceMap;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut map = SourceMap::new();
    let main = map.add_file("fuzz.metal", text);
    if let Err(diagnostics) = preprocess(&mut map, main, &Options::default()) {
        let _ = Diagnostics(diagnostics).render(&map);
    }
});
