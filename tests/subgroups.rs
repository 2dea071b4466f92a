//! SIMD-group and quad-group functions: the WGSL they become, their
//! diagnostics, and GPU runs of `fixtures/simd_*.metal` checked against CPU
//! references.
//!
//! The SIMD width differs between GPUs (32 on Apple and NVIDIA, 8 on
//! lavapipe), so every kernel also writes `threads_per_simdgroup` and the
//! references are computed for that width. They assume linear lanes
//! (lane = thread_index_in_threadgroup % width), which Metal guarantees and
//! the Vulkan drivers tested here follow.

mod common;

use msl2wgsl::{Library, Options, SimdGroups, Target};

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// The WGSL text tests look at native subgroup operations (the GPU tests
/// below run whichever mode the runner picks for the adapter).
fn translate(body: &str, target: Target) -> Result<Library, String> {
    let options = Options {
        target,
        simd: SimdGroups::Native,
        ..Options::default()
    };
    Library::from_source("t.metal", &format!("{PRELUDE}{body}"), &options).map_err(|f| f.render())
}

fn wgsl(body: &str, target: Target) -> String {
    match translate(body, target) {
        Ok(lib) => lib.wgsl().to_string(),
        Err(e) => panic!("translation failed:\n{e}"),
    }
}

/// Asserts that translating `body` (after the two-line prelude, so line
/// numbers start at 3) fails first with `t.metal:LINE:COL: error: MESSAGE`.
fn assert_error(body: &str, line: usize, col: usize, message: &str) {
    assert_error_for(body, Target::WebGpu, line, col, message);
}

fn assert_error_for(body: &str, target: Target, line: usize, col: usize, message: &str) {
    let text = match translate(body, target) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(text) => text,
    };
    let first = text.lines().next().unwrap_or_default();
    let want = format!("t.metal:{line}:{col}: error: {message}");
    assert!(first.starts_with(&want), "want `{want}`\n got:\n{text}");
}

const SUM_KERNEL: &str = "kernel void k(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = simd_sum(a[i]) + simd_prefix_exclusive_sum(a[i]);\n}\n";

#[test]
fn webgpu_output_enables_subgroups() {
    let text = wgsl(SUM_KERNEL, Target::WebGpu);
    assert!(text.starts_with("enable subgroups;\n"), "{text}");
    assert!(text.contains("subgroupAdd("), "{text}");
    assert!(text.contains("subgroupExclusiveAdd("), "{text}");
}

#[test]
fn wgpu_output_has_no_enable_directive() {
    // naga's WGSL parser, which wgpu uses, rejects `enable subgroups;`.
    let text = wgsl(SUM_KERNEL, Target::Wgpu);
    assert!(!text.contains("enable subgroups"), "{text}");
    assert!(text.contains("subgroupAdd("), "{text}");
    naga::front::wgsl::parse_str(&text).expect("wgpu's parser accepts it");
}

#[test]
fn no_enable_directive_without_subgroups() {
    let text = wgsl(
        "kernel void k(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = 1; }\n",
        Target::WebGpu,
    );
    assert!(!text.contains("enable subgroups"), "{text}");
}

#[test]
fn simd_attributes_alone_enable_subgroups() {
    let text = wgsl(
        "kernel void k(device uint* a [[buffer(0)]], uint w [[threads_per_simdgroup]]) { a[0] = w; }\n",
        Target::WebGpu,
    );
    assert!(text.starts_with("enable subgroups;\n"), "{text}");
}

#[test]
fn reflection_names_the_subgroup_feature() {
    let lib = translate(SUM_KERNEL, Target::Wgpu).unwrap();
    let f = lib.function("k").unwrap();
    assert!(f.required_features.iter().any(|x| x == "subgroup"), "{f:?}");
}

#[test]
fn broadcast_lane_constant_or_not() {
    let text = wgsl(
        "kernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_index_in_simdgroup]]) {\n  a[i] = simd_broadcast(a[i], 3) + simd_broadcast(a[i], l / 4u);\n}\n",
        Target::Wgpu,
    );
    // naga takes only constant broadcast lanes; others are shuffles.
    assert!(text.contains("subgroupBroadcast("), "{text}");
    assert!(text.contains("subgroupShuffle("), "{text}");
}

#[test]
fn local_names_shadowing_constants_are_not_folded() {
    let text = wgsl(
        "constant uint L = 3;\nkernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  uint L = i % 4u;\n  a[i] = simd_broadcast(a[i], L) + quad_broadcast(a[i], L);\n}\n",
        Target::Wgpu,
    );
    assert!(!text.contains("subgroupBroadcast("), "{text}");
    assert!(!text.contains("quadBroadcast("), "{text}");
}

#[test]
fn constant_quad_masks_use_quad_builtins() {
    let text = wgsl(
        "kernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = quad_shuffle_xor(a[i], 1) + quad_shuffle_xor(a[i], 2) + quad_shuffle_xor(a[i], 3) + quad_broadcast(a[i], 1);\n}\n",
        Target::Wgpu,
    );
    for f in [
        "quadSwapX(",
        "quadSwapY(",
        "quadSwapDiagonal(",
        "quadBroadcast(",
    ] {
        assert!(text.contains(f), "{f}:\n{text}");
    }
}

#[test]
fn half_and_vector_operands_translate() {
    let text = wgsl(
        "kernel void k(device half4* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = simd_max(a[i]) + simd_min(a[i]) + simd_shuffle_down(a[i], 1u) + quad_prefix_inclusive_product(a[i]);\n}\n",
        Target::Wgpu,
    );
    assert!(text.contains("enable f16;"), "{text}");
    assert!(text.contains("subgroupMax("), "{text}");
}

#[test]
fn bool_operands_of_and_or_xor_travel_as_uint() {
    let text = wgsl(
        "kernel void k(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = (simd_and(a[i] > 0) ? 1 : 0) + (quad_or(bool2(a[i] > 1, a[i] < 5)).x ? 2 : 0);\n}\n",
        Target::Wgpu,
    );
    assert!(text.contains("subgroupAnd(u32("), "{text}");
}

#[test]
fn simdgroup_barrier_is_a_subgroup_barrier_for_wgpu() {
    let body = "kernel void k(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  a[i] = 1;\n  simdgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);\n}\n";
    let lib = translate(body, Target::Wgpu).unwrap();
    assert!(lib.wgsl().contains("subgroupBarrier();"), "{}", lib.wgsl());
    assert!(!lib.wgsl().contains("workgroupBarrier"), "{}", lib.wgsl());
    let f = lib.function("k").unwrap();
    assert!(
        f.required_features.iter().any(|x| x == "subgroup-barrier"),
        "{f:?}"
    );
    // WGSL proper has no subgroup barrier.
    assert_error_for(
        body,
        Target::WebGpu,
        5,
        3,
        "`simdgroup_barrier` has no WebGPU equivalent",
    );
}

#[test]
fn wrong_operand_types() {
    assert_error(
        "kernel void k(device int* a [[buffer(0)]]) {\n  a[0] = simd_sum(true);\n}\n",
        4,
        19,
        "`simd_sum` takes a scalar or vector of `int`, `uint`, `half` or `float`, not `bool`",
    );
    assert_error(
        "kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = quad_xor(a[0]);\n}\n",
        4,
        19,
        "`quad_xor` takes a scalar or vector of `int`, `uint` or `bool`, not `float`",
    );
    assert_error(
        "kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = simd_shuffle(a[0], 1.5f);\n}\n",
        4,
        29,
        "the lane argument of `simd_shuffle` must be an integer scalar, not `float`",
    );
    assert_error(
        "kernel void k(device int* a [[buffer(0)]]) {\n  a[0] = simd_all(bool2(true)) ? 1 : 0;\n}\n",
        4,
        19,
        "`simd_all` takes a scalar `bool`",
    );
}

#[test]
fn wrong_argument_counts_and_flags() {
    assert_error(
        "kernel void k(device int* a [[buffer(0)]]) {\n  a[0] = simd_sum(a[0], a[1]);\n}\n",
        4,
        10,
        "`simd_sum` takes 1 argument, 2 given",
    );
    assert_error(
        "kernel void k(device int* a [[buffer(0)]]) {\n  a[0] = simd_is_first(1) ? 1 : 0;\n}\n",
        4,
        10,
        "`simd_is_first` takes 0 arguments, 1 given",
    );
    assert_error(
        "kernel void k(device int* a [[buffer(0)]]) {\n  simdgroup_barrier(3);\n}\n",
        4,
        21,
        "expected a `mem_flags` value",
    );
}

#[cfg(feature = "runner")]
mod gpu {
    //! The fixtures on the GPU.

    use super::common::{f32_bytes, f32s, gpu, u32s};
    use msl2wgsl::runner::{run_kernel, Dispatch, RunError};
    use msl2wgsl::Options;
    use std::collections::BTreeMap;

    fn fixture(name: &str) -> String {
        let path = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Runs `entry` of a fixture as `dispatchThreads(grid, threadgroup)`;
    /// `None` (with a note) when there is no GPU or it has no subgroups.
    fn run(
        file: &str,
        entry: &str,
        grid: [u32; 2],
        threadgroup: u32,
        buffers: Vec<(u32, Vec<u8>)>,
    ) -> Option<BTreeMap<u32, Vec<u8>>> {
        let gpu = gpu()?;
        let dispatch = Dispatch::Threads {
            grid: [grid[0], grid[1], 1],
            threadgroup: [threadgroup, 1, 1],
        };
        let buffers: BTreeMap<u32, Vec<u8>> = buffers.into_iter().collect();
        match run_kernel(
            gpu,
            file,
            &fixture(file),
            &Options::default(),
            entry,
            &dispatch,
            &buffers,
        ) {
            Ok(out) => Some(out),
            // The one reason to skip: the adapter has no subgroups at all.
            Err(RunError::MissingFeature { feature, .. }) if feature.starts_with("subgroup") => {
                super::common::skip::missing_feature(gpu, &feature);
                None
            }
            Err(e) => panic!("{file} `{entry}`: {e}"),
        }
    }

    /// The SIMD width a kernel wrote, checked for sanity.
    fn width(bytes: &[u8]) -> u32 {
        let w = u32s(bytes)[0];
        assert!(
            w.is_power_of_two() && (4..=128).contains(&w),
            "implausible SIMD width {w}"
        );
        eprintln!("note: SIMD width {w}");
        w
    }

    /// Deterministic words (xorshift32).
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

    fn u32_bytes(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// The threads of a `dispatchThreads` grid with 1-D threadgroups of
    /// `tg`, cut into clusters of `size` consecutive lanes (SIMD-groups:
    /// the width; quads: 4). Only threads inside the grid are members.
    struct Clusters {
        /// Per grid index (row-major): its cluster and lane in it.
        of: Vec<(usize, u32)>,
        /// Per cluster: (lane, grid index) of its members, by lane.
        members: Vec<Vec<(u32, usize)>>,
    }

    impl Clusters {
        fn new(grid: [u32; 2], tg: u32, size: u32) -> Clusters {
            let mut of = vec![(0, 0); (grid[0] * grid[1]) as usize];
            let mut members: Vec<Vec<(u32, usize)>> = Vec::new();
            for y in 0..grid[1] {
                for group in 0..grid[0].div_ceil(tg) {
                    for start in (0..tg).step_by(size as usize) {
                        let mut cluster = Vec::new();
                        for lane in 0..size.min(tg - start) {
                            let x = group * tg + start + lane;
                            if x < grid[0] {
                                let index = (y * grid[0] + x) as usize;
                                of[index] = (members.len(), lane);
                                cluster.push((lane, index));
                            }
                        }
                        if !cluster.is_empty() {
                            members.push(cluster);
                        }
                    }
                }
            }
            Clusters { of, members }
        }

        fn lane(&self, i: usize) -> u32 {
            self.of[i].1
        }

        /// The values of `i`'s cluster (lane, value), by lane.
        fn values<T: Copy>(&self, v: &[T], i: usize) -> Vec<(u32, T)> {
            self.members[self.of[i].0]
                .iter()
                .map(|&(lane, j)| (lane, v[j]))
                .collect()
        }

        fn reduce<T: Copy>(&self, v: &[T], i: usize, f: impl Fn(T, T) -> T) -> T {
            let vals = self.values(v, i);
            vals[1..].iter().fold(vals[0].1, |a, &(_, b)| f(a, b))
        }

        fn prefix<T: Copy>(
            &self,
            v: &[T],
            i: usize,
            init: T,
            inclusive: bool,
            f: impl Fn(T, T) -> T,
        ) -> T {
            let me = self.lane(i);
            self.values(v, i)
                .iter()
                .filter(|(lane, _)| *lane < me || (inclusive && *lane == me))
                .fold(init, |a, &(_, b)| f(a, b))
        }

        /// The value at `lane` of `i`'s cluster, if that thread exists.
        fn at<T: Copy>(&self, v: &[T], i: usize, lane: u32) -> Option<T> {
            self.values(v, i)
                .iter()
                .find(|(l, _)| *l == lane)
                .map(|&(_, x)| x)
        }

        fn first_lane(&self, i: usize) -> u32 {
            self.members[self.of[i].0][0].0
        }
    }

    /// Checks output word `k` of thread `i` (each thread writes `stride`).
    fn check(out: &[u32], stride: usize, i: usize, k: usize, want: u32, what: &str) {
        let got = out[i * stride + k];
        assert_eq!(got, want, "{what} (output {k}) of thread {i}");
    }

    #[test]
    fn simd_reductions_and_scans_of_int() {
        let n = 250; // the last threadgroup has 58 threads: partial SIMD-groups
        let a: Vec<i32> = words(n, 1)
            .iter()
            .map(|w| (w % 2001) as i32 - 1000)
            .collect();
        let b: Vec<i32> = words(n, 2)
            .iter()
            .map(|w| [-2, -1, 1, 2, 3][(w % 5) as usize])
            .collect();
        let Some(out) = run(
            "simd_reduce.metal",
            "reduce_int",
            [n as u32, 1],
            64,
            vec![
                (0, a.iter().flat_map(|x| x.to_le_bytes()).collect()),
                (1, b.iter().flat_map(|x| x.to_le_bytes()).collect()),
                (2, vec![0; n * 14 * 4]),
                (3, vec![0; 4]),
            ],
        ) else {
            return;
        };
        let w = width(&out[&3]);
        let c = Clusters::new([n as u32, 1], 64, w);
        let got = u32s(&out[&2]);
        for i in 0..n {
            let mul = |x: i32, y: i32| x.wrapping_mul(y);
            let want = [
                c.reduce(&a, i, |x, y| x + y),
                c.reduce(&b, i, mul),
                c.reduce(&a, i, i32::min),
                c.reduce(&a, i, i32::max),
                c.reduce(&a, i, |x, y| x & y),
                c.reduce(&a, i, |x, y| x | y),
                c.reduce(&a, i, |x, y| x ^ y),
                c.prefix(&a, i, 0, true, |x, y| x + y),
                c.prefix(&a, i, 0, false, |x, y| x + y),
                c.prefix(&b, i, 1, true, mul),
                c.prefix(&b, i, 1, false, mul),
                c.values(&a, i).iter().all(|(_, x)| *x > -900) as i32,
                c.values(&a, i).iter().any(|(_, x)| *x > 900) as i32,
                c.reduce(&a, i, i32::max) + 1000,
            ];
            for (k, want) in want.into_iter().enumerate() {
                check(&got, 14, i, k, want as u32, "reduce_int");
            }
        }
    }

    #[test]
    fn simd_reductions_and_scans_of_float4() {
        let n = 250;
        let a: Vec<f32> = words(n * 4, 3)
            .iter()
            .map(|w| (w % 201) as f32 - 100.0)
            .collect();
        let Some(out) = run(
            "simd_reduce.metal",
            "reduce_float",
            [n as u32, 1],
            64,
            vec![(0, f32_bytes(&a)), (1, vec![0; n * 5 * 16])],
        ) else {
            return;
        };
        // The width is the same for every kernel of one device.
        let Some(w) = simd_width() else { return };
        let c = Clusters::new([n as u32, 1], 64, w);
        let got = f32s(&out[&1]);
        for comp in 0..4 {
            let v: Vec<f32> = (0..n).map(|i| a[i * 4 + comp]).collect();
            for i in 0..n {
                let want = [
                    c.reduce(&v, i, |x, y| x + y),
                    c.reduce(&v, i, f32::min),
                    c.reduce(&v, i, f32::max),
                    c.prefix(&v, i, 0.0, true, |x, y| x + y),
                    c.prefix(&v, i, 0.0, false, |x, y| x + y),
                ];
                for (k, want) in want.into_iter().enumerate() {
                    let g = got[(i * 5 + k) * 4 + comp];
                    assert_eq!(g, want, "reduce_float output {k}.{comp} of thread {i}");
                }
            }
        }
    }

    /// The device's SIMD width, from a tiny kernel.
    fn simd_width() -> Option<u32> {
        let src = "#include <metal_stdlib>\nusing namespace metal;\nkernel void w(device uint* o [[buffer(0)]], uint w [[threads_per_simdgroup]]) { o[0] = w; }\n";
        let gpu = gpu()?;
        let dispatch = Dispatch::Threads {
            grid: [64, 1, 1],
            threadgroup: [64, 1, 1],
        };
        let buffers: BTreeMap<u32, Vec<u8>> = [(0, vec![0; 4])].into_iter().collect();
        match run_kernel(
            gpu,
            "w.metal",
            src,
            &Options::default(),
            "w",
            &dispatch,
            &buffers,
        ) {
            Ok(out) => Some(width(&out[&0])),
            Err(RunError::MissingFeature { .. }) => None,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn simd_shuffles_broadcasts_and_votes() {
        let n = 256;
        let x = words(n, 4);
        let (d, l) = (5u32, 6u32);
        let Some(out) = run(
            "simd_shuffle.metal",
            "shuffles",
            [n as u32, 1],
            64,
            vec![
                (0, u32_bytes(&x)),
                (1, vec![0; n * 20 * 4]),
                (2, u32_bytes(&[d, l])),
                (3, vec![0; 4]),
            ],
        ) else {
            return;
        };
        let w = width(&out[&3]);
        let c = Clusters::new([n as u32, 1], 64, w);
        let got = u32s(&out[&1]);
        let at = |i: usize, lane: u32| c.at(&x, i, lane).unwrap();
        for i in 0..n {
            let lane = c.lane(i);
            let own = x[i];
            let branch: Vec<u32> = c
                .values(&x, i)
                .iter()
                .filter(|(l, _)| l % 3 == 1)
                .map(|(_, v)| *v)
                .collect();
            let in_branch = lane % 3 == 1;
            let want = [
                at(i, (lane * 3 + 1) & (w - 1)),
                if lane >= 3 { at(i, lane - 3) } else { own },
                if lane + 3 < w { at(i, lane + 3) } else { own },
                if lane >= d { at(i, lane - d) } else { own },
                if lane + d < w { at(i, lane + d) } else { own },
                at(i, lane ^ (5 & (w - 1))),
                at(i, (lane + w - 3) % w),
                at(i, (lane + d) % w),
                at(i, 2),
                at(i, l % w),
                at(i, 0),
                c.values(&x, i).iter().all(|(_, v)| v & 15 != 0) as u32,
                c.values(&x, i).iter().any(|(_, v)| v & 63 == 0) as u32,
                (lane == 0) as u32,
                if in_branch { (lane == 1) as u32 } else { 7 },
                if in_branch { branch[0] } else { 7 },
                if in_branch {
                    branch.iter().fold(0u32, |a, b| a.wrapping_add(*b))
                } else {
                    7
                },
                at(i, lane ^ 1),
                (i as u32) ^ 1,
                if lane + 1 < w {
                    at(i, lane + 1) & 1023
                } else {
                    own & 1023
                },
            ];
            for (k, want) in want.into_iter().enumerate() {
                check(&got, 20, i, k, want, "shuffles");
            }
        }
    }

    #[test]
    fn shuffles_that_fill() {
        let n = 128;
        let x = words(n, 7);
        let Some(out) = run(
            "simd_shuffle.metal",
            "fills",
            [n as u32, 1],
            64,
            vec![(0, u32_bytes(&x)), (1, vec![0; n * 16])],
        ) else {
            return;
        };
        let Some(w) = simd_width() else { return };
        let got = u32s(&out[&1]);
        // Within segments of `m` lanes: data from lane + d (down) or
        // lane - d (up), else the filling value from the other end.
        let fill = |i: usize, d: u32, m: u32, up: bool| {
            let lane = (i % 64) as u32 % w;
            let (off, seg) = (lane % m, i - (lane % m) as usize);
            match (up, off + d < m, off >= d) {
                (false, true, _) => x[seg + (off + d) as usize],
                (false, false, _) => !x[seg + (off + d - m) as usize],
                (true, _, true) => x[seg + (off - d) as usize],
                (true, _, false) => !x[seg + (off + m - d) as usize],
            }
        };
        for i in 0..n {
            let want = [
                fill(i, 3, w, false),
                fill(i, 3, w, true),
                fill(i, 1, 4, false),
                fill(i, 1, 4, true),
            ];
            for (k, want) in want.into_iter().enumerate() {
                check(&got, 4, i, k, want, "fills");
            }
        }
    }

    /// Blocks of 4x4: thread t holds row t % 4 of block t / 4 and must end
    /// with column t % 4.
    fn check_transpose(entry: &str) {
        let n = 256;
        let m: Vec<f32> = words(n * 4, 5).iter().map(|w| (w >> 8) as f32).collect();
        let Some(out) = run(
            "simd_transpose.metal",
            entry,
            [n as u32, 1],
            64,
            vec![(0, f32_bytes(&m)), (1, vec![0; n * 16])],
        ) else {
            return;
        };
        let got = f32s(&out[&1]);
        for t in 0..n {
            let (block, r) = (t / 4, t % 4);
            for c in 0..4 {
                let want = m[(block * 4 + c) * 4 + r];
                assert_eq!(got[t * 4 + c], want, "{entry}: thread {t} component {c}");
            }
        }
    }

    #[test]
    fn shuffle_transposes() {
        for entry in ["transpose4", "transpose4_quad", "transpose_xor"] {
            check_transpose(entry);
        }
    }

    /// `ragged_simd` on a grid that is no multiple of the threadgroup size:
    /// results over the threads that exist, nothing written past the grid.
    fn check_ragged(grid: [u32; 2]) {
        const SENTINEL: u32 = 0xDEAD_BEEF;
        let n = (grid[0] * grid[1]) as usize;
        let words_out = n * 20 + 64 * 20;
        let Some(out) = run(
            "simd_ragged.metal",
            "ragged_simd",
            grid,
            64,
            vec![(0, u32_bytes(&vec![SENTINEL; words_out])), (1, vec![0; 4])],
        ) else {
            return;
        };
        let w = width(&out[&1]);
        let c = Clusters::new(grid, 64, w);
        let quads = Clusters::new(grid, 64, 4);
        let x: Vec<u32> = (0..n as u32)
            .map(|i| (i / grid[0]) * 1000 + i % grid[0] + 1)
            .collect();
        let got = u32s(&out[&0]);
        let add = |a: u32, b: u32| a.wrapping_add(b);
        let mul = |a: u32, b: u32| a.wrapping_mul(b);
        for i in 0..n {
            let first = c.first_lane(i);
            let want = [
                c.reduce(&x, i, add),
                c.reduce(&x, i, mul),
                c.reduce(&x, i, u32::min),
                c.reduce(&x, i, u32::max),
                c.values(&x, i).iter().fold(!0, |a, (_, v)| a & !v),
                c.reduce(&x, i, |a, b| a | b),
                c.reduce(&x, i, |a, b| a ^ b),
                c.prefix(&x, i, 0, true, add),
                c.prefix(&x, i, 0, false, add),
                c.prefix(&x, i, 1, false, mul),
                1,
                0,
                (c.lane(i) == first) as u32,
                c.at(&x, i, first).unwrap(),
                c.reduce(&x, i, u32::max),
                c.reduce(&x, i, u32::min),
                quads.reduce(&x, i, add),
                quads.prefix(&x, i, 0, false, add),
                (quads.lane(i) == quads.first_lane(i)) as u32,
                1,
            ];
            for (k, want) in want.into_iter().enumerate() {
                check(&got, 20, i, k, want, "ragged_simd");
            }
        }
        let past = got[n * 20..].iter().position(|v| *v != SENTINEL);
        assert_eq!(
            past, None,
            "a thread outside the grid wrote (word offset past the grid)"
        );
    }

    #[test]
    fn ragged_grid_with_barrier_excludes_threads_outside() {
        check_ragged([1003, 1]);
    }

    #[test]
    fn ragged_2d_grid_with_barrier_excludes_threads_outside() {
        check_ragged([37, 29]);
    }

    #[test]
    fn quad_functions() {
        // The last quad of the grid has 2, then 3 threads.
        check_quads(250);
        check_quads(251);
    }

    fn check_quads(n: usize) {
        let x: Vec<u32> = words(n, 6).iter().map(|w| w % 1_000_000).collect();
        let y: Vec<u32> = x.iter().map(|v| (v & 3) + 1).collect();
        let (d, l) = (2u32, 3u32);
        let Some(out) = run(
            "simd_quad.metal",
            "quads",
            [n as u32, 1],
            64,
            vec![
                (0, u32_bytes(&x)),
                (1, vec![0; n * 26 * 4]),
                (2, u32_bytes(&[d, l])),
            ],
        ) else {
            return;
        };
        let q = Clusters::new([n as u32, 1], 64, 4);
        let got = u32s(&out[&1]);
        let add = |a: u32, b: u32| a.wrapping_add(b);
        let mul = |a: u32, b: u32| a.wrapping_mul(b);
        for i in 0..n {
            let me = q.lane(i);
            let own = x[i];
            let first = q.first_lane(i);
            // Gathers from a thread that does not exist are undefined.
            let want: [Option<u32>; 26] = [
                Some(q.reduce(&x, i, add)),
                Some(q.reduce(&y, i, mul)),
                Some(q.reduce(&x, i, u32::min)),
                Some(q.reduce(&x, i, u32::max)),
                Some(q.reduce(&x, i, |a, b| a & b)),
                Some(q.reduce(&x, i, |a, b| a | b)),
                Some(q.reduce(&x, i, |a, b| a ^ b)),
                Some(q.prefix(&x, i, 0, true, add)),
                Some(q.prefix(&x, i, 0, false, add)),
                Some(q.prefix(&y, i, 1, true, mul)),
                Some(q.prefix(&y, i, 1, false, mul)),
                Some(q.values(&x, i).iter().all(|(_, v)| v & 3 != 0) as u32),
                Some(q.values(&x, i).iter().any(|(_, v)| v & 7 == 0) as u32),
                q.at(&x, i, (me + 1) & 3),
                q.at(&x, i, 2),
                q.at(&x, i, l),
                q.at(&x, i, me ^ 1),
                q.at(&x, i, me ^ 3),
                q.at(&x, i, me ^ l),
                if me >= 1 {
                    q.at(&x, i, me - 1)
                } else {
                    Some(own)
                },
                if me + d < 4 {
                    q.at(&x, i, me + d)
                } else {
                    Some(own)
                },
                q.at(&x, i, (me + 3) & 3),
                q.at(&x, i, (me + d) & 3),
                q.at(&x, i, first),
                Some((me == first) as u32),
                Some(q.reduce(&x, i, u32::min)),
            ];
            for (k, want) in want.into_iter().enumerate() {
                if let Some(want) = want {
                    check(&got, 26, i, k, want, "quads");
                }
            }
        }
    }

    #[test]
    fn lanes_in_a_two_dimensional_threadgroup() {
        let Some(gpu) = gpu() else { return };
        let buffers: BTreeMap<u32, Vec<u8>> = [(0, vec![0u8; 16 * 16 * 4])].into_iter().collect();
        let dispatch = Dispatch::Threads {
            grid: [16, 16, 1],
            threadgroup: [8, 8, 1],
        };
        let out = match run_kernel(
            gpu,
            "simd_2d.metal",
            &fixture("simd_2d.metal"),
            &Options::default(),
            "k",
            &dispatch,
            &buffers,
        ) {
            Ok(out) => out,
            Err(RunError::MissingFeature { feature, .. }) if feature.starts_with("subgroup") => {
                return
            }
            Err(e) => panic!("{e}"),
        };
        for (i, v) in u32s(&out[&0]).iter().enumerate() {
            // 64 threads per group fill whole SIMD-groups of any width up to 64;
            // the lane is the linear index modulo the width (checked in-kernel).
            let lane = (v / 1000) % 1000;
            let width = v / 1_000_000;
            assert!(width.is_power_of_two() && lane < width, "thread {i}: {v}");
            assert_eq!(
                v % 1000,
                1,
                "thread {i}: lane {lane} is not its linear index modulo {width}"
            );
        }
    }
}
