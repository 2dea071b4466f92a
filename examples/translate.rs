//! Translates an MSL file and prints the WGSL and each function's bindings.
//!
//!     cargo run --example translate -- fixtures/add_arrays.metal

use msl2wgsl::{Library, Options};
use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let path: PathBuf = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("fixtures/add_arrays.metal"));
    let library = Library::from_file(&path, &Options::default())
        .map_err(|f| anyhow::anyhow!("{}", f.render()))?;
    eprint!("{}", library.warnings());
    println!("{}", library.wgsl());
    for f in library.functions() {
        println!(
            "// {} → @compute fn {} @workgroup_size{:?}",
            f.name,
            f.wgsl_entry_point,
            f.workgroup_size.unwrap_or_default()
        );
        for a in &f.arguments {
            println!("//   [[buffer({})]] {} → {:?}", a.index, a.name, a.binding);
        }
    }
    Ok(())
}
