//! The runner's safety nets: GPU work that takes too long ends in an
//! error, threadgroup memory over the device's limit is refused naming the
//! argument, and short buffers are refused naming the argument, through
//! the library and the command line.
#![cfg(feature = "runner")]

mod common;

use msl2wgsl::runner::{run_kernel, ComputePipeline, Dispatch, Gpu, RunError};
use msl2wgsl::{Library, Options};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Each thread steps a linear congruential generator `n[0]` times.
const SPIN: &str = "
kernel void spin(device const uint* n [[buffer(0)]], device uint* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    uint x = i;
    for (uint j = 0; j < n[0]; j++) { x = x * 1664525u + 1013904223u; }
    out[i] = x;
}
";

/// The generator on the CPU, for the reference.
fn lcg(seed: u32, steps: u32) -> u32 {
    (0..steps).fold(seed, |x, _| {
        x.wrapping_mul(1664525).wrapping_add(1013904223)
    })
}

#[test]
fn gpu_work_past_the_timeout_is_an_error() {
    if common::skip(common::Limit::GpuTimeout) {
        return;
    }
    if !common::has_gpu() {
        return;
    }
    // A device of its own: the timeout is per device.
    let gpu = Gpu::new().unwrap().with_timeout(Duration::from_millis(200));
    let run = |threads: u32, steps: u32| {
        let buffers = BTreeMap::from([
            (0, steps.to_le_bytes().to_vec()),
            (1, vec![0; threads as usize * 4]),
        ]);
        let dispatch = Dispatch::Threads {
            grid: [threads, 1, 1],
            threadgroup: [64, 1, 1],
        };
        run_kernel(
            &gpu,
            "spin.metal",
            SPIN,
            &Options::default(),
            "spin",
            &dispatch,
            &buffers,
        )
    };
    // Short work finishes, and is right.
    let out = run(64, 10).unwrap();
    let words: Vec<u32> = out[&1]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, (0..64).map(|i| lcg(i, 10)).collect::<Vec<_>>());
    // About 3 s of work on llvmpipe: far past 200 ms everywhere but on
    // the fastest GPUs, where it may finish; then there is nothing to test.
    // (llvmpipe ends any loop after 65 535 iterations, so the work is in
    // the number of threads, not in the steps.)
    let start = Instant::now();
    match run(65_536, 1_000_000) {
        Err(RunError::Gpu(why)) => {
            assert!(why.contains("did not finish within 200ms"), "{why}");
            assert!(start.elapsed() < Duration::from_secs(30));
        }
        Err(other) => panic!("{other}"),
        Ok(_) => assert!(
            start.elapsed() < Duration::from_millis(400),
            "finished late without an error"
        ),
    }
}

#[test]
fn threadgroup_memory_over_the_device_limit_names_the_argument() {
    let Some(gpu) = common::gpu() else { return };
    let source = "
kernel void k(device float* out [[buffer(0)]], threadgroup float* scratch [[threadgroup(0)]],
              uint i [[thread_position_in_threadgroup]]) {
    scratch[i] = float(i);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = scratch[63 - i];
}
";
    let options = Options {
        threadgroup_memory: vec![(0, 256)],
        ..Options::default()
    };
    let library = Library::from_source("t.metal", source, &options).unwrap();
    let pipeline = ComputePipeline::new(gpu, &library, "k").unwrap();
    let out = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 256,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let limit = gpu.limits().max_compute_workgroup_storage_size;
    let mut encoder = pipeline.encoder();
    encoder.set_buffer(0, &out, 0).unwrap();
    encoder
        .set_threadgroup_memory_length(0, (limit + 16) / 16 * 16)
        .unwrap();
    let err = encoder
        .dispatch_threads(gpu, [64, 1, 1], [64, 1, 1])
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`scratch` [[threadgroup(0)]]") && text.contains(&limit.to_string()),
        "{text}"
    );
    // Within the limit it runs.
    encoder.set_threadgroup_memory_length(0, 256).unwrap();
    encoder
        .dispatch_threads(gpu, [64, 1, 1], [64, 1, 1])
        .unwrap();
}

#[cfg(feature = "cli")] // runs the command-line binary
#[test]
fn short_buffer_through_the_command_line_names_the_argument() {
    if !common::has_gpu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = "struct Params { float scale; float offset; };
kernel void k(device float* out [[buffer(0)]], constant Params& params [[buffer(2)]],
              uint i [[thread_position_in_grid]]) {
    out[i] = params.scale * float(i) + params.offset;
}
";
    std::fs::write(dir.path().join("k.metal"), source).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_msl2wgsl"))
        .current_dir(dir.path())
        .args(["run", "k.metal", "--entry", "k", "--grid", "4"])
        .args(["--buffer", "0=zeros:16", "--buffer", "2=zeros:4"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`params` [[buffer(2)]] has 4 bytes, but its type needs at least 8"),
        "{err}"
    );
}
