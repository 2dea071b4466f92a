//! Translates `shaders/*.metal` into `$OUT_DIR` (`NAME.wgsl`, `NAME.json`);
//! Cargo reruns this script when a shader or a header it includes changes.

fn main() {
    let options = msl2wgsl::Options::default();
    // On failure the error shows the diagnostics as the compiler writes them.
    msl2wgsl::build::translate_dir("shaders", &options).expect("the shaders translate");
}
