//! GPU time of kernels translated from MSL by msl2wgsl against hand-written
//! WGSL of the same algorithms, measured with wgpu timestamp queries (not
//! wall clock); see BENCHMARKS.md.
//!
//!     cargo run --release --example gpu_bench [-- ELEMENTS [ITERATIONS]]
//!         [--reduce N] [--matmul N] [--image WxH] [--only LIST]
//!
//! Benchmarks (`--only stream,reduce,matmul,blur,gray`; all by default):
//! `stream` (`add_arrays`, ELEMENTS floats), `reduce` (sum with `simd_sum`
//! and threadgroup memory; skipped without wgpu's SUBGROUP), `matmul`
//! (16 × 16 tiles), `blur` (3 × 3 box on a float image), `gray` (RGBA8 to
//! 8-bit luma). Each prints the median GPU time of ITERATIONS dispatches,
//! a throughput, and the time relative to the hand-written kernel marked
//! `(ref)`. Every result is checked against a CPU reference.

#[path = "gpu_bench/blur.rs"]
mod blur;
#[path = "gpu_bench/gray.rs"]
mod gray;
#[path = "gpu_bench/harness.rs"]
mod harness;
#[path = "gpu_bench/matmul.rs"]
mod matmul;
#[path = "gpu_bench/reduce.rs"]
mod reduce;
#[path = "gpu_bench/stream.rs"]
mod stream;

use clap::Parser;
use msl2wgsl::runner::Gpu;

/// The benchmarks `--only` accepts.
const ALL: [&str; 5] = ["stream", "reduce", "matmul", "blur", "gray"];

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
    /// Comma-separated benchmarks to run (stream, reduce, matmul, blur, gray).
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
        matmul::run(&bench, args.matmul)?;
    }
    if wanted("blur") {
        blur::run(&bench, w, h)?;
    }
    if wanted("gray") {
        gray::run(&bench, w, h)?;
    }
    Ok(())
}
