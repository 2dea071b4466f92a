//! An MLX-style kernel through the host API, as an MLX host would run it:
//! the library of `fixtures/ml/softmax.metal` (a `softmax_single_row`
//! template instantiated by `[[host_name]]` macros for `float`, `half` and
//! `bfloat`), the instance for each type by its host name, the rows as
//! buffers bound by `[[buffer(n)]]` index, one threadgroup per row
//! (`dispatchThreadgroups`), and the result checked against a CPU softmax.
//!
//! The Metal original (Objective-C++, MLX's shape):
//!
//! ```text
//! auto kernel = d.get_kernel("block_softmax_" + type_to_name(out));
//! compute_encoder.set_compute_pipeline_state(kernel);
//! compute_encoder.set_input_array(in, 0);
//! compute_encoder.set_output_array(out, 1);
//! compute_encoder.set_bytes(axis_size, 2);
//! compute_encoder.dispatch_threadgroups(MTL::Size(n_rows, 1, 1),
//!                                       MTL::Size(threadgroup_size, 1, 1));
//! ```
//!
//!     cargo run --example mlx_softmax

use msl2wgsl::runner::{ComputePipeline, Gpu};
use msl2wgsl::wgpu;
use msl2wgsl::{Library, Options};
use wgpu::util::DeviceExt;

/// Elements each thread reads (the kernel's `N_READS`).
const N_READS: u32 = 4;

fn main() -> anyhow::Result<()> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/ml");
    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter_line());

    let mut options = Options::default();
    options.preprocess.include_dirs.push(dir.into());
    let library = Library::from_file(format!("{dir}/softmax.metal"), &options)?;
    println!("functions: {:?}", library.function_names());

    let (rows, axis_size) = (8u32, 1000u32);
    // Metal's rule for this kernel: enough threads for the row at N_READS
    // each, a whole number of 32-lane SIMD groups, at most 1024.
    let threadgroup = axis_size.div_ceil(N_READS).div_ceil(32) * 32;
    let x: Vec<f32> = (0..rows * axis_size)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 10.0)
        .collect();

    for (name, size, encode, decode) in [
        (
            "block_softmax_float32",
            4,
            encode_f32 as Encode,
            decode_f32 as Decode,
        ),
        ("block_softmax_float16", 2, encode_f16, decode_f16),
        ("block_softmax_bfloat16", 2, encode_bf16, decode_bf16),
    ] {
        let pipeline = ComputePipeline::new(&gpu, &library, name)?;
        let input = storage(&gpu, &encode(&x));
        let output = storage(&gpu, &vec![0u8; x.len() * size]);
        let axis = storage(&gpu, &(axis_size as i32).to_le_bytes());
        let mut encoder = pipeline.encoder();
        encoder
            .set_buffer(0, &input, 0)?
            .set_buffer(1, &output, 0)?
            .set_buffer(2, &axis, 0)?;
        encoder.dispatch_threadgroups(&gpu, [rows, 1, 1], [threadgroup, 1, 1])?;
        let got = decode(&gpu.read_buffer(&output)?);

        // The CPU softmax of the values the kernel read (rounded to the
        // type), in f64.
        let read = decode(&encode(&x));
        // Results below the type's smallest normal value are subnormal
        // (in `half`, from 2^-14 down): their error is relative to that.
        let smallest_normal = match name {
            _ if name.ends_with("float16") => f64::from(half::f16::MIN_POSITIVE),
            _ => f64::from(f32::MIN_POSITIVE),
        };
        let mut worst = 0.0f64;
        for (row, out) in read
            .chunks(axis_size as usize)
            .zip(got.chunks(axis_size as usize))
        {
            let max = row.iter().cloned().fold(f64::MIN, f64::max);
            let sum: f64 = row.iter().map(|v| (v - max).exp()).sum();
            for (v, g) in row.iter().zip(out) {
                let want = (v - max).exp() / sum;
                worst = worst.max((g - want).abs() / want.max(smallest_normal));
            }
        }
        let row_sum: f64 = got[..axis_size as usize].iter().sum();
        println!(
            "{name}: {rows} rows of {axis_size} in threadgroups of {threadgroup}; \
             row 0 sums to {row_sum:.6}; largest relative error {worst:.2e}"
        );
        // The type's precision: 2^-8 for bfloat, 2^-11 for half, and
        // float's accumulation over the row.
        let allowed = match size {
            4 => 1e-4,
            _ if name.ends_with("bfloat16") => 1.0 / 128.0,
            _ => 1.0 / 1024.0,
        };
        anyhow::ensure!(worst <= allowed, "{name}: error {worst:e} over {allowed:e}");
    }
    Ok(())
}

type Encode = fn(&[f32]) -> Vec<u8>;
type Decode = fn(&[u8]) -> Vec<f64>;

/// A storage buffer holding `bytes` that can be read back.
fn storage(gpu: &Gpu, bytes: &[u8]) -> wgpu::Buffer {
    gpu.device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        })
}

fn encode_f32(x: &[f32]) -> Vec<u8> {
    x.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn decode_f32(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(4)
        .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect()
}

fn encode_f16(x: &[f32]) -> Vec<u8> {
    x.iter()
        .flat_map(|&v| half::f16::from_f32(v).to_le_bytes())
        .collect()
}

fn decode_f16(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(2)
        .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64())
        .collect()
}

fn encode_bf16(x: &[f32]) -> Vec<u8> {
    x.iter()
        .flat_map(|&v| half::bf16::from_f32(v).to_le_bytes())
        .collect()
}

fn decode_bf16(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(2)
        .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64())
        .collect()
}
