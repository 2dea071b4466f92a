//! GPU tests of compute features: threadgroup memory, barriers, atomics,
//! Metal's dispatch semantics with barriers, tiled matrix multiply.
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, f32s, gpu, u32s};
use msl2wgsl::runner::{run_kernel, Dispatch};
use msl2wgsl::{Library, Options};
use std::collections::BTreeMap;

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn run(
    name: &str,
    entry: &str,
    options: &Options,
    dispatch: Dispatch,
    buffers: Vec<(u32, Vec<u8>)>,
) -> Option<BTreeMap<u32, Vec<u8>>> {
    let gpu = gpu()?;
    let buffers: BTreeMap<u32, Vec<u8>> = buffers.into_iter().collect();
    Some(
        run_kernel(
            gpu,
            name,
            &fixture(name),
            options,
            entry,
            &dispatch,
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}")),
    )
}

fn u32_bytes(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn i32_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Deterministic data (xorshift32).
fn words(n: usize, seed: u32) -> Vec<u32> {
    let mut s = seed.max(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        })
        .collect()
}

#[test]
fn tree_reduction_in_threadgroup_memory() {
    let n = 1000u32;
    // Small integers so every partial sum is exact in f32.
    let input: Vec<f32> = words(n as usize, 5)
        .iter()
        .map(|w| (w % 100) as f32)
        .collect();
    let groups = n.div_ceil(64) as usize;
    let Some(out) = run(
        "reduce.metal",
        "reduce_fixed",
        &Options::default(),
        Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [64, 1, 1],
        },
        vec![
            (0, f32_bytes(&input)),
            (1, vec![0; groups * 4]),
            (2, n.to_le_bytes().to_vec()),
        ],
    ) else {
        return;
    };
    let want: Vec<f32> = input.chunks(64).map(|c| c.iter().sum()).collect();
    assert_eq!(f32s(&out[&1]), want);
}

#[test]
fn reduction_sized_by_threadgroup_memory_argument() {
    let n = 4096u32;
    let input: Vec<u32> = words(n as usize, 9).iter().map(|w| w % 1000).collect();
    for tg in [32u32, 128] {
        let options = Options {
            threadgroup_memory: vec![(0, tg * 4)],
            ..Options::default()
        };
        let groups = (n / tg) as usize;
        let Some(out) = run(
            "reduce.metal",
            "reduce_dynamic",
            &options,
            Dispatch::Threadgroups {
                groups: [n / tg, 1, 1],
                threadgroup: [tg, 1, 1],
            },
            vec![(0, u32_bytes(&input)), (1, vec![0; groups * 4])],
        ) else {
            return;
        };
        let want: Vec<u32> = input.chunks(tg as usize).map(|c| c.iter().sum()).collect();
        assert_eq!(u32s(&out[&1]), want, "threadgroup size {tg}");
    }
}

#[test]
fn threadgroup_memory_is_reflected() {
    let opts = Options {
        threadgroup_memory: vec![(0, 512)],
        ..Options::default()
    };
    let lib = Library::from_source("reduce.metal", &fixture("reduce.metal"), &opts).unwrap();
    let arg = lib
        .function("reduce_dynamic")
        .unwrap()
        .arguments
        .iter()
        .find(|a| a.name == "scratch")
        .unwrap();
    let tg = arg.threadgroup.as_ref().unwrap();
    assert_eq!(
        (arg.index, tg.alignment, tg.data_size, arg.active),
        (0, 4, Some(512), true)
    );
    assert!(lib.wgsl().contains(": array<u32, 128>;"), "{}", lib.wgsl());
    // Without a length the argument is reported with none, and the kernel
    // waits for it (W0406; tests/threadgroup_pointers.rs).
    let lib = Library::from_source(
        "reduce.metal",
        &fixture("reduce.metal"),
        &Options::default(),
    )
    .unwrap();
    let warnings = lib.warnings();
    assert!(warnings.contains("reduce.metal:37:5: warning: the length of threadgroup memory `[[threadgroup(0)]]` is not known"), "{warnings}");
    assert!(lib.function_wgsl("reduce_dynamic").is_none());
}

#[test]
fn ragged_grid_with_barriers_has_no_visible_extra_threads() {
    let n = 1000usize;
    let input: Vec<i32> = (0..1024).collect();
    let Some(out) = run(
        "ragged_barrier.metal",
        "neighbours",
        &Options::default(),
        Dispatch::Threads {
            grid: [n as u32, 1, 1],
            threadgroup: [64, 1, 1],
        },
        vec![
            (0, i32_bytes(&input)),
            (1, i32_bytes(&vec![-1; 1024])),
            (2, vec![0; 4]),
        ],
    ) else {
        return;
    };
    let got: Vec<i32> = u32s(&out[&1]).into_iter().map(|v| v as i32).collect();
    for (i, g) in got.iter().enumerate() {
        if i >= n {
            assert_eq!(*g, -1, "element {i} past the grid was written");
            continue;
        }
        // Metal's last threadgroup has 40 threads: the right neighbour wraps within it.
        let (start, count) = if i >= 960 {
            (960, 40)
        } else {
            (i / 64 * 64, 64)
        };
        let right = start + (i - start + 1) % count;
        assert_eq!(*g, input[i] + input[right] * 1000, "thread {i}");
    }
    // Exactly one atomic increment per thread of the grid.
    assert_eq!(u32s(&out[&2]), [n as u32]);
}

#[test]
fn histograms_on_device_and_threadgroup_memory() {
    let n = 2048usize;
    let values = words(n, 3);
    let mut want = vec![0u32; 16];
    for v in &values {
        want[(v % 16) as usize] += 1;
    }
    for entry in ["histogram_device", "histogram_threadgroup"] {
        let Some(out) = run(
            "histogram.metal",
            entry,
            &Options::default(),
            Dispatch::Threads {
                grid: [n as u32, 1, 1],
                threadgroup: [64, 1, 1],
            },
            vec![(0, u32_bytes(&values)), (1, vec![0; 64])],
        ) else {
            return;
        };
        assert_eq!(u32s(&out[&1]), want, "{entry}");
    }
}

#[test]
fn tiled_matmul_with_partial_tiles() {
    let (m, n, k) = (37usize, 29usize, 21usize);
    let a: Vec<f32> = words(m * k, 1)
        .iter()
        .map(|w| (w % 17) as f32 - 8.0)
        .collect();
    let b: Vec<f32> = words(k * n, 2)
        .iter()
        .map(|w| (w % 13) as f32 - 6.0)
        .collect();
    let dims = u32_bytes(&[m as u32, n as u32, k as u32]);
    let Some(out) = run(
        "matmul.metal",
        "matmul",
        &Options::default(),
        // Every thread of a tile loads part of it, so (as on Metal) whole
        // threadgroups are dispatched and the kernel checks the bounds.
        Dispatch::Threadgroups {
            groups: [n.div_ceil(8) as u32, m.div_ceil(8) as u32, 1],
            threadgroup: [8, 8, 1],
        },
        vec![
            (0, f32_bytes(&a)),
            (1, f32_bytes(&b)),
            (2, f32_bytes(&vec![f32::NAN; m * n])),
            (3, dims),
        ],
    ) else {
        return;
    };
    let got = f32s(&out[&2]);
    for r in 0..m {
        for c in 0..n {
            // Small integers: every product and sum is exact, whatever the order.
            let want: f32 = (0..k).map(|i| a[r * k + i] * b[i * n + c]).sum();
            assert_eq!(got[r * n + c], want, "C[{r}][{c}]");
        }
    }
}

#[test]
fn every_atomic_operation() {
    let n = 100u32;
    // Counters: sum, or, and, xor, min, max, fsum, exchanged, cas, sub (4 bytes each).
    let init = [
        0u32,
        0,
        0xFFFF_FFFF,
        0,
        i32::MAX as u32,
        i32::MIN as u32,
        0,
        0,
        0,
        1000,
    ];
    let Some(out) = run(
        "atomics.metal",
        "all_atomics",
        &Options::default(),
        Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [32, 1, 1],
        },
        vec![(0, u32_bytes(&init)), (1, vec![0; n as usize * 4])],
    ) else {
        return;
    };
    let c = u32s(&out[&0]);
    let vals: Vec<i32> = (0..n as i32).map(|i| i - 50).collect();
    assert_eq!(c[0] as i32, vals.iter().sum::<i32>());
    assert_eq!(c[1], (0..n).fold(0, |acc, i| acc | 1 << (i % 32)));
    assert_eq!(c[2], (0..n).fold(u32::MAX, |acc, i| acc & !(1 << (i % 32))));
    assert_eq!(c[3], (0..n).fold(0, |acc, i| acc ^ i));
    assert_eq!(c[4] as i32, -50);
    assert_eq!(c[5] as i32, 49);
    assert_eq!(f32::from_bits(c[6]), 0.5 * n as f32);
    assert_eq!(c[8], n, "compare-exchange loop");
    assert_eq!(c[9] as i32, 1000 - 2 * n as i32);
    // Exchange: the old values are a permutation of 0 and all but one of 1..=n.
    let mut old = u32s(&out[&1]);
    old.push(c[7]);
    old.sort();
    assert_eq!(old, (0..=n).collect::<Vec<_>>());
}

#[test]
fn threadgroup_atomic_bool_and_float() {
    let Some(out) = run(
        "atomics.metal",
        "flags",
        &Options::default(),
        Dispatch::Threadgroups {
            groups: [1, 1, 1],
            threadgroup: [64, 1, 1],
        },
        vec![(0, vec![0; 8])],
    ) else {
        return;
    };
    let got = u32s(&out[&0]);
    assert_eq!(got[0], 1);
    assert_eq!(f32::from_bits(got[1]), 16.0);
}

#[test]
fn barrier_flags_map_to_wgsl_barriers() {
    let cases = [
        (
            "mem_flags::mem_threadgroup",
            "workgroupBarrier();",
            "storageBarrier();",
        ),
        (
            "mem_flags::mem_device",
            "storageBarrier();",
            "workgroupBarrier();",
        ),
        (
            "mem_flags::mem_none",
            "workgroupBarrier();",
            "storageBarrier();",
        ),
        (
            "mem_flags::mem_texture",
            "textureBarrier();",
            "storageBarrier();",
        ),
    ];
    for (flags, present, absent) in cases {
        let src = format!("kernel void k(device uint* a [[buffer(0)]]) {{ threadgroup_barrier({flags}); a[0] = 1u; }}");
        let wgsl = Library::from_source("b.metal", &src, &Options::default())
            .unwrap()
            .wgsl()
            .to_string();
        assert!(
            wgsl.contains(present) && !wgsl.contains(absent),
            "{flags}:\n{wgsl}"
        );
    }
    let src = "kernel void k(device uint* a [[buffer(0)]]) { threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup); a[0] = 1u; }";
    let wgsl = Library::from_source("b.metal", src, &Options::default())
        .unwrap()
        .wgsl()
        .to_string();
    assert!(
        wgsl.contains("storageBarrier();") && wgsl.contains("workgroupBarrier();"),
        "{wgsl}"
    );
}
