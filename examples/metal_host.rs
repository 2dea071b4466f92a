//! A Metal host program ported to wgpu with msl2wgsl's helpers, step for
//! step: library → function → pipeline state → buffers set by
//! `[[buffer(n)]]` index → `dispatchThreads` → read the result.
//!
//! The Metal original (Swift):
//!
//! ```text
//! let library = try device.makeLibrary(source: source, options: nil)
//! let function = library.makeFunction(name: "add_arrays")!
//! let pipeline = try device.makeComputePipelineState(function: function)
//! let encoder = commandBuffer.makeComputeCommandEncoder()!
//! encoder.setComputePipelineState(pipeline)
//! encoder.setBuffer(a, offset: 0, index: 0)
//! encoder.setBuffer(b, offset: 0, index: 1)
//! encoder.setBuffer(result, offset: 0, index: 2)
//! encoder.dispatchThreads(MTLSize(width: n, height: 1, depth: 1),
//!                         threadsPerThreadgroup: MTLSize(width: 64, height: 1, depth: 1))
//! ```
//!
//!     cargo run --example metal_host

use msl2wgsl::runner::{ComputePipeline, Gpu};
use msl2wgsl::wgpu;
use msl2wgsl::{Library, Options};
use wgpu::util::DeviceExt;

fn main() -> anyhow::Result<()> {
    let source = include_str!("../fixtures/add_arrays.metal");
    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter_line());

    let library = Library::from_source("add_arrays.metal", source, &Options::default())?;
    println!("functions: {:?}", library.function_names());
    let pipeline = ComputePipeline::new(&gpu, &library, "add_arrays")?;
    for arg in &pipeline.function().arguments {
        println!(
            "  [[buffer({})]] {} ({:?}, active: {})",
            arg.index, arg.name, arg.access, arg.active
        );
    }

    // Buffers as a Metal host fills them; every buffer argument is a
    // WGSL storage binding, and results are read back by copy.
    let n = 1000u32;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (2 * i) as f32 + 0.25).collect();
    let buffer = |label, data: &[f32]| {
        gpu.device()
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: &data
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect::<Vec<u8>>(),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            })
    };
    let (a_buf, b_buf) = (buffer("a", &a), buffer("b", &b));
    let result = buffer("result", &vec![0.0; n as usize]);

    let mut encoder = pipeline.encoder();
    encoder
        .set_buffer(0, &a_buf, 0)?
        .set_buffer(1, &b_buf, 0)?
        .set_buffer(2, &result, 0)?;
    // 1000 is not a multiple of 64: the threads past the grid do not run.
    encoder.dispatch_threads(&gpu, [n, 1, 1], [64, 1, 1])?;

    let bytes = gpu.read_buffer(&result)?;
    let sums: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let wrong = (0..n as usize).filter(|&i| sums[i] != a[i] + b[i]).count();
    println!(
        "result[0..4] = {:?}; {wrong} of {n} differ from the CPU",
        &sums[..4]
    );
    anyhow::ensure!(wrong == 0, "{wrong} results differ from the CPU");
    Ok(())
}
