//! Runs Apple's `add_arrays` sample kernel on the GPU the way a Metal host
//! program would: buffers by Metal index, `dispatchThreads` with a grid that
//! is not a multiple of the threadgroup size.
//!
//!     cargo run --example add_arrays

use msl2wgsl::runner::{run_kernel, Dispatch, Gpu};
use msl2wgsl::Options;
use std::collections::BTreeMap;

fn main() -> anyhow::Result<()> {
    let source = include_str!("../fixtures/add_arrays.metal");
    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter_line());
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
    let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, bytes(&a)), (1, bytes(&b)), (2, vec![0; n * 4])]
        .into_iter()
        .collect();
    let dispatch = Dispatch::Threads {
        grid: [n as u32, 1, 1],
        threadgroup: [64, 1, 1],
    };
    let out = run_kernel(
        &gpu,
        "add_arrays.metal",
        source,
        &Options::default(),
        "add_arrays",
        &dispatch,
        &buffers,
    )?;
    let result: Vec<f32> = out[&2]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let wrong = result
        .iter()
        .enumerate()
        .filter(|(i, r)| **r != a[*i] + b[*i])
        .count();
    println!("result[0..4] = {:?}; {wrong} of {n} wrong", &result[..4]);
    anyhow::ensure!(wrong == 0, "{wrong} results differ from the CPU");
    Ok(())
}
