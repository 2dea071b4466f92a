//! Metal's 32-lane SIMD groups on every adapter: kernels that assume
//! Apple's width (shuffles by 16, broadcasts from lane 31, 32-lane sums)
//! against CPU references of 32-lane groups, in the emulation
//! (`SimdGroups::Emulated32`, what the runner picks on adapters whose
//! subgroups are not 32 wide, such as lavapipe's 8) and, where the adapter
//! has 32-lane subgroups, natively.
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, f32s};
use msl2wgsl::runner::{run_kernel, Dispatch};
use msl2wgsl::{Library, Options, SimdGroups};
use std::collections::BTreeMap;

fn fixture() -> String {
    let path = format!(
        "{}/fixtures/simd/apple_width.metal",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The eight results `lanes32` writes per thread, for threads `0..grid` in
/// threadgroups of `tg` threads: SIMD group `g` of a threadgroup holds its
/// threads `32g..32g+31` that exist.
fn lanes32_reference(x: &[i32], grid: usize, tg: usize) -> Vec<i32> {
    let mut out = vec![0; grid * 8];
    for t in 0..grid {
        let group_start = t / tg * tg;
        let in_tg = t - group_start;
        let (sg, lane) = (in_tg / 32, in_tg % 32);
        let base = group_start + sg * 32;
        let end = (base + 32).min(group_start + tg).min(grid);
        let members = &x[base..end];
        let at = |l: usize| members.get(l).copied();
        let v = x[t];
        out[t * 8] = members.iter().sum();
        out[t * 8 + 1] = members[..lane].iter().sum();
        out[t * 8 + 2] = if lane + 16 < 32 {
            at(lane + 16).unwrap_or(-999)
        } else {
            v
        };
        out[t * 8 + 3] = at(31).unwrap_or(-999);
        out[t * 8 + 4] = *members.iter().max().unwrap();
        out[t * 8 + 5] = at(lane ^ 1).unwrap_or(-999);
        out[t * 8 + 6] = members.iter().any(|m| *m > 40) as i32;
        out[t * 8 + 7] = (32 * 1000 + sg * 100 + lane) as i32;
    }
    out
}

fn run_lanes32(mode: SimdGroups, grid: u32, tg: u32) -> Option<Vec<i32>> {
    let gpu = common::gpu()?;
    let x: Vec<i32> = (0..grid as i32).map(|i| (i * 37 + 11) % 53 - 7).collect();
    let buffers: BTreeMap<u32, Vec<u8>> = [
        (0, x.iter().flat_map(|v| v.to_le_bytes()).collect()),
        (1, vec![0u8; grid as usize * 32]),
    ]
    .into_iter()
    .collect();
    let options = Options {
        simd: mode,
        ..Options::default()
    };
    let out = run_kernel(
        gpu,
        "apple_width.metal",
        &fixture(),
        &options,
        "lanes32",
        &Dispatch::Threads {
            grid: [grid, 1, 1],
            threadgroup: [tg, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{mode:?} grid {grid} tg {tg}: {e}"));
    let got = i32s(&out[&1]);
    let want = lanes32_reference(&x, grid as usize, tg as usize);
    // Reads from lanes that do not exist are undefined in Metal: compare
    // only where the reference is defined.
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if *w != -999 {
            assert_eq!(
                g,
                w,
                "{mode:?} grid {grid} tg {tg}: thread {}, result {}",
                i / 8,
                i % 8
            );
        }
    }
    Some(got)
}

#[test]
fn emulated_simd_groups_are_32_lanes_wide() {
    run_lanes32(SimdGroups::Emulated32, 128, 64);
}

#[test]
fn emulated_simd_groups_in_a_threadgroup_of_48() {
    // The second SIMD group of each threadgroup has 16 threads.
    run_lanes32(SimdGroups::Emulated32, 96, 48);
}

#[test]
fn emulated_simd_groups_in_a_ragged_grid() {
    // 100 threads in threadgroups of 64: the last SIMD group has 4 threads.
    run_lanes32(SimdGroups::Emulated32, 100, 64);
}

#[test]
fn the_runner_picks_apple_results_on_any_adapter() {
    // `Auto`: native only where the adapter's subgroups are 32 wide.
    run_lanes32(SimdGroups::Auto, 128, 64);
}

#[test]
fn native_subgroups_match_where_the_adapter_runs_32_lanes() {
    let Some(gpu) = common::gpu() else { return };
    if gpu.simd_groups(SimdGroups::Auto) != SimdGroups::Native {
        eprintln!("SKIP: the adapter's subgroups are not exactly 32 lanes wide");
        return;
    }
    run_lanes32(SimdGroups::Native, 128, 64);
}

#[test]
fn a_softmax_shaped_row_sum_matches_the_cpu() {
    let Some(gpu) = common::gpu() else { return };
    let rows = 4usize;
    let x: Vec<f32> = (0..rows * 256)
        .map(|i| ((i * 7) % 13) as f32 * 0.25 - 1.0)
        .collect();
    for tg in [64u32, 96, 256] {
        let buffers: BTreeMap<u32, Vec<u8>> = [(0, f32_bytes(&x)), (1, vec![0u8; rows * 4])]
            .into_iter()
            .collect();
        let out = run_kernel(
            gpu,
            "apple_width.metal",
            &fixture(),
            &Options::default(),
            "row_sum",
            &Dispatch::Threadgroups {
                groups: [rows as u32, 1, 1],
                threadgroup: [tg, 1, 1],
            },
            &buffers,
        )
        .unwrap_or_else(|e| panic!("tg {tg}: {e}"));
        let got = f32s(&out[&1]);
        for r in 0..rows {
            let want: f32 = x[r * 256..(r + 1) * 256].iter().sum();
            // Every term is a multiple of 0.25 below 2^20: sums are exact
            // in any order.
            assert_eq!(got[r], want, "tg {tg} row {r}");
        }
    }
}

#[test]
fn emulated_wgsl_needs_no_subgroups_and_reflection_says_so() {
    let src = fixture();
    let emulated = Library::from_source("a.metal", &src, &Options::default()).unwrap();
    assert!(!emulated.wgsl().contains("subgroup"), "{}", emulated.wgsl());
    assert!(emulated.wgsl().contains("workgroupBarrier()"));
    let f = emulated.function("lanes32").unwrap();
    assert_eq!(f.simd_groups.as_deref(), Some("emulated32"));
    assert!(f.required_features.is_empty(), "{:?}", f.required_features);
    let native = Library::from_source(
        "a.metal",
        &src,
        &Options {
            simd: SimdGroups::Native,
            ..Options::default()
        },
    )
    .unwrap();
    assert!(native.wgsl().contains("subgroupAdd("));
    let f = native.function("lanes32").unwrap();
    assert_eq!(f.simd_groups.as_deref(), Some("native"));
    assert_eq!(f.required_features, ["subgroup"]);
}

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// A SIMD-group call in a `switch` on the lane: the emulation runs
/// branches and loops on every thread, but not the cases of a `switch`.
const DIVERGENT: &str = "kernel void k(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]],\n              uint lane [[thread_index_in_simdgroup]]) {\n  int v = a[i];\n  switch (lane & 3) {\n    case 0: v = simd_sum(v); break;\n    default: v = 0;\n  }\n  a[i] = v;\n}\n";

/// In a helper's loop whose trip count comes from an argument and that the
/// helper returns from (a helper's loop runs on every thread, but a
/// helper's `return` goes by flag only outside loops).
const HELPER_LOOP: &str = "int spread(int v, uint n) {\n  for (uint j = 0; j < n; j++) {\n    v = simd_max(v);\n    if (v > 100) {\n      return v;\n    }\n  }\n  return v;\n}\nkernel void k(device int* a [[buffer(0)]], uint i [[thread_position_in_grid]],\n              uint lane [[thread_index_in_simdgroup]]) {\n  a[i] = spread(a[i], lane & 3);\n}\n";

fn translate(body: &str, simd: SimdGroups) -> Result<Library, String> {
    let options = Options {
        simd,
        ..Options::default()
    };
    Library::from_source("t.metal", &format!("{PRELUDE}{body}"), &options).map_err(|f| f.render())
}

#[test]
fn explicit_emulation_refuses_divergent_simd_calls_at_the_call() {
    let e = translate(DIVERGENT, SimdGroups::Emulated32).unwrap_err();
    assert!(
        e.starts_with(
            "t.metal:7:17: error: this SIMD-group function may run in non-uniform control flow"
        ),
        "{e}"
    );
    let e = translate(HELPER_LOOP, SimdGroups::Emulated32).unwrap_err();
    assert!(
        e.starts_with(
            "t.metal:5:9: error: this SIMD-group function may run in non-uniform control flow"
        ),
        "{e}"
    );
}

#[test]
fn auto_falls_back_to_native_subgroups_with_a_warning() {
    for body in [DIVERGENT, HELPER_LOOP] {
        let lib = translate(body, SimdGroups::Auto).unwrap_or_else(|e| panic!("{e}"));
        let w = lib.warnings();
        assert!(w.contains("warning: `k` calls this SIMD-group function in non-uniform control flow: it uses the adapter's subgroups"), "{w}");
        let f = lib.function("k").unwrap();
        assert_eq!(f.simd_groups.as_deref(), Some("native"));
        assert!(lib.wgsl().contains("subgroup"), "{}", lib.wgsl());
        // Nothing is left of the emulation's failed tries: Tint checks
        // uncalled functions too, and theirs wait at barriers in
        // non-uniform control flow.
        assert!(!lib.wgsl().contains("workgroupBarrier"), "{}", lib.wgsl());
        assert_eq!(
            lib.wgsl().matches("\nfn ").count(),
            1 + body.matches("int spread").count()
        );
    }
}

#[test]
fn uniform_branches_and_loops_keep_the_emulation() {
    // Conditions on uniform values (a constant buffer, the threadgroup's
    // position, a loop over a constant count) are uniform.
    let body = "kernel void k(device float* a [[buffer(0)]], constant uint& n [[buffer(1)]],\n              uint i [[thread_position_in_grid]], uint g [[threadgroup_position_in_grid]]) {\n  float v = a[i];\n  if (n > 2 && g < 8) {\n    for (int r = 0; r < 4; r++) { v = simd_sum(v) * 0.5f; }\n  }\n  a[i] = v;\n}\n";
    let lib = translate(body, SimdGroups::Emulated32).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lib.warnings(), "");
    assert_eq!(
        lib.function("k").unwrap().simd_groups.as_deref(),
        Some("emulated32")
    );
}

/// MLX's shape: SIMD-group partial sums meet in threadgroup memory and the
/// first SIMD group alone reduces them (`if (sg == 0) { simd_sum(..) }`),
/// with an `else` that the other SIMD groups take.
const FIRST_GROUP_REDUCES: &str = "kernel void k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],\n              uint tid [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],\n              uint sg [[simdgroup_index_in_threadgroup]]) {\n  threadgroup float partial[32];\n  float v = simd_sum(x[tid]);\n  if (lane == 0) { partial[sg] = v; }\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  float total = -1.0f;\n  if (sg == 0) {\n    total = simd_sum(lane < 4 ? partial[lane] : 0.0f);\n  } else {\n    total = simd_max(x[tid]);\n  }\n  out[tid] = total;\n}\n";

#[test]
fn simd_calls_in_divergent_branches_stay_emulated() {
    let lib =
        translate(FIRST_GROUP_REDUCES, SimdGroups::Emulated32).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lib.warnings(), "");
    let Some(gpu) = common::gpu() else { return };
    let x: Vec<f32> = (0..128).map(|i| ((i * 5) % 17) as f32).collect();
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, f32_bytes(&x)), (1, vec![0u8; 128 * 4])]
        .into_iter()
        .collect();
    let out = run_kernel(
        gpu,
        "t.metal",
        &format!("{PRELUDE}{FIRST_GROUP_REDUCES}"),
        &Options {
            simd: SimdGroups::Emulated32,
            ..Options::default()
        },
        "k",
        &Dispatch::Threadgroups {
            groups: [1, 1, 1],
            threadgroup: [128, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let got = f32s(&out[&1]);
    let total: f32 = x.iter().sum();
    for (t, g) in got.iter().enumerate() {
        let want = if t < 32 {
            total
        } else {
            let base = t / 32 * 32;
            x[base..base + 32].iter().cloned().fold(f32::MIN, f32::max)
        };
        assert_eq!(*g, want, "thread {t}");
    }
}

/// SIMD-group sums under conditions that come from image operations at
/// the thread's own coordinate, level or sample point: the branch differs
/// between the lanes of a SIMD group, so the emulation must predicate it
/// (the uniformity analysis follows image operands as any other). A sum
/// over every lane comes first: an emulated exchange that the lanes
/// outside the branch skipped would read what they left there.
const TEXTURE_GATED: &str = r#"
constexpr sampler nearest(filter::nearest, address::clamp_to_edge);

kernel void texel_gated(texture2d<float, access::read> mask [[texture(0)]],
                        device const float* x [[buffer(0)]],
                        device float* out [[buffer(1)]],
                        uint gid [[thread_position_in_grid]]) {
    float all = simd_sum(x[gid] * 2.0f);
    float r = -1.0f;
    if (mask.read(uint2(gid, 0)).x > 0.5f) {
        r = simd_sum(x[gid]);
    }
    out[gid] = r + 1000.0f * all;
}

kernel void sample_gated(texture2d<float> mask [[texture(0)]],
                         device const float* x [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         uint gid [[thread_position_in_grid]]) {
    float all = simd_sum(x[gid] * 2.0f);
    float r = -1.0f;
    float2 at = float2((float(gid) + 0.5f) / 128.0f, 0.5f);
    if (mask.sample(nearest, at, level(0)).x > 0.5f) {
        r = simd_sum(x[gid]);
    }
    out[gid] = r + 1000.0f * all;
}

kernel void level_gated(texture2d<float> mask [[texture(0)]],
                        device const float* x [[buffer(0)]],
                        device float* out [[buffer(1)]],
                        uint gid [[thread_position_in_grid]]) {
    float all = simd_sum(x[gid] * 2.0f);
    float r = -1.0f;
    if (mask.get_width(gid / 8 % 3 == 0 ? 1 : 0) == 128) {
        r = simd_sum(x[gid]);
    }
    out[gid] = r + 1000.0f * all;
}
"#;

/// Runs a kernel of [`TEXTURE_GATED`] over 128 threads in threadgroups of
/// 64 (four SIMD groups) with a 128x1 mask texture of two levels whose
/// level 0 is `mask`, and compares with Metal's result: each thread that
/// takes the branch gets the sum of `x` over its SIMD group's lanes that
/// take it too, the others -1; plus 1000 times the sum of `2x` over the
/// whole SIMD group.
fn run_texture_gated(entry: &str, mask: &[f32], taken: impl Fn(usize) -> bool) {
    use msl2wgsl::runner::{run_kernel_resources, Resources, TextureData};
    use wgpu::TextureFormat;
    let Some(gpu) = common::gpu() else { return };
    let x: Vec<f32> = (0..128).map(|i| ((i * 11) % 23) as f32 * 0.5).collect();
    // Level 1 (64 texels) holds zeros.
    let texels: Vec<f32> = mask.iter().copied().chain([0.0; 64]).collect();
    let resources = Resources {
        buffers: [(0, f32_bytes(&x)), (1, vec![0u8; 128 * 4])]
            .into_iter()
            .collect(),
        textures: [(
            0,
            TextureData::new_2d_mips(TextureFormat::R32Float, 128, 1, 2, f32_bytes(&texels)),
        )]
        .into_iter()
        .collect(),
        ..Resources::default()
    };
    let options = Options {
        simd: SimdGroups::Emulated32,
        ..Options::default()
    };
    let source = format!("{PRELUDE}{TEXTURE_GATED}");
    let dispatch = Dispatch::Threads {
        grid: [128, 1, 1],
        threadgroup: [64, 1, 1],
    };
    let out = run_kernel_resources(
        gpu, "t.metal", &source, &options, entry, &dispatch, &resources,
    )
    .unwrap_or_else(|e| panic!("{entry}: {e}"));
    let got = f32s(&out.buffers[&1]);
    for (t, g) in got.iter().enumerate() {
        let group = t / 32 * 32..t / 32 * 32 + 32;
        // Multiples of 0.5 below 2^20: exact in any order.
        let all: f32 = group.clone().map(|l| x[l] * 2.0).sum();
        let want = match taken(t) {
            true => group.filter(|&l| taken(l)).map(|l| x[l]).sum(),
            false => -1.0,
        } + 1000.0 * all;
        assert_eq!(*g, want, "{entry}: thread {t}");
    }
}

/// Three lanes in five (0, 1, 3, 5, 6, ...): every SIMD group has lanes
/// on both sides.
fn mask() -> Vec<f32> {
    (0..128).map(|i| ((i * 7) % 5 < 3) as u8 as f32).collect()
}

#[test]
fn simd_sums_under_a_texel_read_at_the_thread_are_predicated() {
    let mask = mask();
    run_texture_gated("texel_gated", &mask, |t| mask[t] > 0.5);
}

#[test]
fn simd_sums_under_a_sample_at_the_thread_are_predicated() {
    let mask = mask();
    run_texture_gated("sample_gated", &mask, |t| mask[t] > 0.5);
}

#[test]
fn simd_sums_under_a_size_query_at_a_thread_level_are_predicated() {
    // Level 0 is 128 wide, level 1 64: threads 0-7, 24-31, 48-55, ...
    // query level 1. (The level changes every 8 threads: lavapipe's size
    // query takes the first lane's level for its 8-lane subgroups.)
    run_texture_gated("level_gated", &mask(), |t| t / 8 % 3 != 0);
}
