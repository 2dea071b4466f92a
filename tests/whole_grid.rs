//! Kernels with barriers run the threads WGSL launches past a
//! `dispatchThreads` grid, with their stores skipped (`metal_active`). The
//! `metal_whole_grid` override lets a host that launches only threads
//! inside the grid drop that per-store test (7 % of a tiled matmul on an
//! H200, BENCHMARKS.md): the runner sets it for whole grids only.

#![cfg(feature = "runner")]

mod common;

use common::wgsl::{dispatch, Bound};
use msl2wgsl::reflect::{DispatchParams, WHOLE_GRID_OVERRIDE};
use msl2wgsl::runner::{is_whole_grid, run_compute, translate_kernel, Dispatch, Gpu, Translation};
use msl2wgsl::wgpu;
use msl2wgsl::Options;
use std::collections::BTreeMap;

/// Each thread stages `gid + 1` in threadgroup memory and stores it back
/// after a barrier.
const STAGED: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void staged(device uint* out [[buffer(0)]],
                   uint gid [[thread_position_in_grid]],
                   uint lid [[thread_position_in_threadgroup]]) {
    threadgroup uint tile[64];
    tile[lid] = gid + 1;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = tile[lid];
}
"#;

const UNTOUCHED: u32 = 0xdead_beef;
const LAUNCHED: u32 = 128;

fn translate() -> Translation {
    let options = Options {
        threadgroup_size: Some([64, 1, 1]),
        ..Options::default()
    };
    translate_kernel("staged.metal", STAGED, &options, "staged").expect("translates")
}

/// What Metal leaves in a buffer of [`LAUNCHED`] words after `grid` threads.
fn metal_result(grid: u32) -> Vec<u32> {
    (0..LAUNCHED)
        .map(|i| if i < grid { i + 1 } else { UNTOUCHED })
        .collect()
}

fn run(gpu: &Gpu, t: &Translation, grid: u32) -> Vec<u32> {
    let dispatch = Dispatch::Threads {
        grid: [grid, 1, 1],
        threadgroup: [64, 1, 1],
    };
    let start: Vec<u8> = (0..LAUNCHED)
        .flat_map(|_| UNTOUCHED.to_le_bytes())
        .collect();
    let out = run_compute(
        gpu,
        &t.wgsl,
        &t.function,
        &dispatch,
        &BTreeMap::from([(0, start)]),
    )
    .expect("runs");
    common::u32s(&out[&0])
}

#[test]
fn the_module_declares_the_override_for_kernels_with_barriers() {
    let t = translate();
    assert!(t.function.uses_barriers);
    assert!(
        t.wgsl
            .contains(&format!("override {WHOLE_GRID_OVERRIDE}: bool = false;")),
        "{}",
        t.wgsl
    );
}

#[test]
fn whole_and_ragged_grids_give_metal_s_results() {
    let Some(gpu) = common::gpu() else { return };
    let t = translate();
    for grid in [LAUNCHED, 100, 64, 1] {
        assert_eq!(
            run(gpu, &t, grid),
            metal_result(grid),
            "grid of {grid} threads"
        );
    }
}

#[test]
fn whole_grids_are_the_dispatches_without_threads_past_the_grid() {
    let threads = |grid, threadgroup| Dispatch::Threads { grid, threadgroup };
    assert!(is_whole_grid(&threads([128, 4, 1], [64, 2, 1])));
    assert!(!is_whole_grid(&threads([100, 4, 1], [64, 2, 1])));
    assert!(!is_whole_grid(&threads([128, 3, 1], [64, 2, 1])));
    assert!(is_whole_grid(&Dispatch::Threadgroups {
        groups: [3, 1, 1],
        threadgroup: [7, 1, 1],
    }));
}

/// The override is what removes the test: set on a ragged grid (which no
/// host may do), the threads past the grid store too.
#[test]
fn the_override_set_on_a_ragged_grid_lets_every_launched_thread_store() {
    let Some(gpu) = common::gpu() else { return };
    let t = translate();
    let start: Vec<u8> = (0..LAUNCHED)
        .flat_map(|_| UNTOUCHED.to_le_bytes())
        .collect();
    let params = DispatchParams {
        grid_size: [100, 1, 1],
        group_offset: [0; 3],
        threadgroups: [2, 1, 1],
    };
    let uniform = params.to_bytes();
    let buffers = [
        Bound {
            binding: t.function.arguments[0].binding.expect("bound").binding,
            contents: &start,
            usage: wgpu::BufferUsages::STORAGE,
        },
        Bound {
            binding: t.function.dispatch_binding.expect("dispatch").binding,
            contents: &uniform,
            usage: wgpu::BufferUsages::UNIFORM,
        },
    ];
    let out = dispatch(
        gpu,
        &t.wgsl,
        &t.function.wgsl_entry_point,
        &[(WHOLE_GRID_OVERRIDE, 1.0)],
        &buffers,
        [2, 1, 1],
    );
    let got = common::u32s(&out[0]);
    assert_eq!(got, metal_result(LAUNCHED), "every launched thread stored");
}
