//! GPU time of kernels translated from MSL by msl2wgsl against hand-written
//! WGSL of the same algorithms, measured with wgpu timestamp queries (not
//! wall clock); see BENCHMARKS.md.
//!
//!     cargo run --release --example gpu_bench [-- ELEMENTS [ITERATIONS]]
//!         [--reduce N] [--matmul N] [--image WxH] [--only LIST]
//!
//! Benchmarks (`--only stream,reduce,matmul,blur,gray,uniforms,intdiv`;
//! all by default):
//! `stream` (`add_arrays`, ELEMENTS floats), `reduce` (sum with `simd_sum`
//! and threadgroup memory; skipped without wgpu's SUBGROUP), `matmul`
//! (16 × 16 tiles), `blur` (3 × 3 box on a float image), `gray` (RGBA8 to
//! 8-bit luma), `uniforms` (a constant-weights convolution and a lighting
//! fragment shader, each with its `constant` struct as `var<uniform>` and
//! as `var<storage>`), `intdiv` (signed `/` and `%` by run-time divisors),
//! `simdloop` (a key loop from the SIMD group's index, which the 32-lane
//! emulation predicates, against a uniform loop over the same keys).
//! Each prints the median GPU time of ITERATIONS dispatches (or draws), a
//! throughput, and the time relative to the hand-written kernel marked
//! `(ref)`. Every result is checked against a CPU reference.

#[path = "gpu_bench/blur.rs"]
mod blur;
#[path = "gpu_bench/gray.rs"]
mod gray;
#[path = "gpu_bench/harness.rs"]
mod harness;
#[path = "gpu_bench/int_divide.rs"]
mod int_divide;
#[path = "gpu_bench/lighting.rs"]
mod lighting;
#[path = "gpu_bench/matmul.rs"]
mod matmul;
#[path = "gpu_bench/reduce.rs"]
mod reduce;
#[path = "gpu_bench/simd_loop.rs"]
mod simd_loop;
#[path = "gpu_bench/stream.rs"]
mod stream;
#[path = "gpu_bench/uniforms.rs"]
mod uniforms;

use clap::Parser;
use msl2wgsl::runner::Gpu;
use msl2wgsl::wgpu;

/// The benchmarks `--only` accepts.
const ALL: [&str; 8] = [
    "stream", "reduce", "matmul", "blur", "gray", "uniforms", "intdiv", "simdloop",
];

/// Command line; the defaults are the full-size runs for a real GPU.
#[derive(Parser)]
#[command(about = "GPU time of translated MSL kernels against hand-written WGSL")]
struct Args {
    /// Floats per array of the stream kernel (a multiple of 4, at most
    /// 65535 × 256).
    #[arg(default_value_t = 65535 * 256)]
    elements: u32,
    /// Timed dispatches per kernel (the median is reported).
    #[arg(default_value_t = 20)]
    iterations: usize,
    /// Floats summed by the reduction (a multiple of 4).
    #[arg(long, default_value_t = 1 << 26)]
    reduce: u32,
    /// Side of the square matrices multiplied.
    #[arg(long, default_value_t = 1024)]
    matmul: u32,
    /// Image size for the blur and the grayscale conversion, WxH (W a
    /// multiple of 4).
    #[arg(long, default_value = "4096x4096", value_parser = parse_size)]
    image: (u32, u32),
    /// A folder of hand-edited variants of the translated matmul's WGSL to
    /// time after it (`*.wgsl`, entry `matmul_tiled`).
    #[arg(long)]
    matmul_variants: Option<std::path::PathBuf>,
    /// float4 outputs of the constant-weights convolution (at most
    /// 65535 × 256).
    #[arg(long, default_value_t = 1 << 22)]
    conv: u32,
    /// Threadgroups and keys per threadgroup of the SIMD-group key loop,
    /// GROUPSxKEYS (KEYS a multiple of 4).
    #[arg(long, default_value = "4096x256", value_parser = parse_size)]
    simd_loop: (u32, u32),
    /// Comma-separated benchmarks to run (stream, reduce, matmul, blur,
    /// gray, uniforms, intdiv, simdloop).
    #[arg(long, value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(ALL))]
    only: Vec<String>,
}

/// Parses `WxH`.
fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s.split_once('x').ok_or("expected WxH")?;
    let parse = |v: &str| v.parse::<u32>().map_err(|e| format!("{v}: {e}"));
    Ok((parse(w)?, parse(h)?))
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    anyhow::ensure!(args.iterations > 0, "ITERATIONS must be positive");
    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter_line());
    anyhow::ensure!(
        gpu.features().contains(wgpu::Features::TIMESTAMP_QUERY),
        "the adapter has no timestamp queries"
    );
    let bench = harness::Bench {
        gpu,
        iterations: args.iterations,
    };
    let wanted = |name: &str| args.only.is_empty() || args.only.iter().any(|o| o == name);
    let (w, h) = args.image;
    if wanted("stream") {
        stream::run(&bench, args.elements)?;
    }
    if wanted("reduce") {
        reduce::run(&bench, args.reduce)?;
    }
    if wanted("matmul") {
        matmul::run(&bench, args.matmul, args.matmul_variants.as_deref())?;
    }
    if wanted("blur") {
        blur::run(&bench, w, h)?;
    }
    if wanted("gray") {
        gray::run(&bench, w, h)?;
    }
    if wanted("uniforms") {
        uniforms::run(&bench, args.conv)?;
        lighting::run(&bench, w, h)?;
    }
    if wanted("intdiv") {
        int_divide::run(&bench, args.elements)?;
    }
    if wanted("simdloop") {
        simd_loop::run(&bench, args.simd_loop.0, args.simd_loop.1)?;
    }
    Ok(())
}
