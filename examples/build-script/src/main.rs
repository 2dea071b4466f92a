//! The WGSL the build script wrote, compiled into the binary: a wgpu host
//! passes it to `wgpu::ShaderSource::Wgsl` and binds what the reflection
//! JSON says.

/// `shaders/grayscale.metal`, translated at build time.
const GRAYSCALE_WGSL: &str = include_str!(concat!(env!("OUT_DIR"), "/grayscale.wgsl"));
/// Its reflection: bindings, workgroup size, buffer layouts.
const GRAYSCALE_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/grayscale.json"));
/// `shaders/triangle.metal`: a vertex and a fragment function.
const TRIANGLE_WGSL: &str = include_str!(concat!(env!("OUT_DIR"), "/triangle.wgsl"));

fn main() {
    for (name, wgsl) in [("grayscale", GRAYSCALE_WGSL), ("triangle", TRIANGLE_WGSL)] {
        let entry_points: Vec<&str> = wgsl
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("fn "))
            .filter_map(|l| l.split('(').next())
            .collect();
        println!(
            "{name}.wgsl: {} bytes, functions {entry_points:?}",
            wgsl.len()
        );
    }
    println!("grayscale.json: {} bytes", GRAYSCALE_JSON.len());
}
