//! `simd_ballot` and `simd_active_threads_mask` (`src/lower/stdlib/ballot.rs`):
//! the `simd_vote` mask of Metal's 32-lane SIMD groups, checked against a
//! CPU model of those groups with lane-dependent predicates, in the 32-lane
//! emulation (what the runner picks on lavapipe's 8-lane subgroups) and
//! with the adapter's own subgroups, with 64-bit integers (`--target wgpu`)
//! and in their low 32 bits, as `--target webgpu` holds them (where the
//! mask of 32 lanes is exact: its high word is 0).
#![cfg(feature = "runner")]

mod common;

use msl2wgsl::library::WideIntegers;
use msl2wgsl::runner::{run_kernel, Dispatch};
use msl2wgsl::{Library, Options, SimdGroups};
use std::collections::BTreeMap;

const SOURCE: &str = r#"
#include <metal_stdlib>
using namespace metal;

kernel void ballot(device const int* x [[buffer(0)]],
                   device uint2* o [[buffer(1)]],
                   uint i [[thread_position_in_grid]],
                   uint lane [[thread_index_in_simdgroup]],
                   uint width [[threads_per_simdgroup]]) {
    int v = x[i];
    simd_vote vote = simd_ballot(v > 10);
    o[i * 4u] = as_type<uint2>((simd_vote::vote_t)vote);
    o[i * 4u + 1u] = as_type<uint2>(uint64_t(simd_ballot((lane & 3u) == 1u)));
    o[i * 4u + 2u] = as_type<uint2>((ulong)simd_active_threads_mask());
    o[i * 4u + 3u] = uint2(lane, width);
}
"#;

fn x_values(n: usize) -> Vec<i32> {
    (0..n as i32).map(|i| (i * 37 + 11) % 23).collect()
}

/// The four `uint2`s per thread of `ballot`, for SIMD groups of `width`
/// lanes (lane `l` of the group at thread `base` is thread `base + l`),
/// cut at threadgroup and grid ends.
fn reference(x: &[i32], grid: usize, tg: usize, width: usize) -> Vec<[u32; 2]> {
    let mut out = Vec::new();
    for t in 0..grid {
        let group_start = t / tg * tg;
        let lane = (t - group_start) % width;
        let base = t - lane;
        let end = (base + width).min(group_start + tg).min(grid);
        let mut masks = [0u64; 3];
        for (l, m) in (base..end).enumerate() {
            let bit = 1u64 << l;
            if x[m] > 10 {
                masks[0] |= bit;
            }
            if l & 3 == 1 {
                masks[1] |= bit;
            }
            masks[2] |= bit;
        }
        for m in masks {
            out.push([m as u32, (m >> 32) as u32]);
        }
        out.push([lane as u32, width as u32]);
    }
    out
}

fn run(mode: SimdGroups, grid: usize, tg: usize) -> Option<Vec<[u32; 2]>> {
    run_as(mode, WideIntegers::Native, grid, tg)
}

/// [`run`] with 64-bit integers computed as `wide` says.
fn run_as(mode: SimdGroups, wide: WideIntegers, grid: usize, tg: usize) -> Option<Vec<[u32; 2]>> {
    let gpu = common::gpu()?;
    // A vote is a 64-bit mask (GL in wgpu has no 64-bit integers).
    if wide == WideIntegers::Native
        && !gpu
            .features()
            .contains(msl2wgsl::wgpu::Features::SHADER_INT64)
    {
        common::skip::missing_feature(gpu, "shader-int64");
        return None;
    }
    // Native votes are the adapter's subgroup ballots (wgpu's GL has none).
    if mode == SimdGroups::Native && !gpu.features().contains(msl2wgsl::wgpu::Features::SUBGROUP) {
        common::skip::missing_feature(gpu, "subgroup");
        return None;
    }
    let x = x_values(grid);
    let buffers: BTreeMap<u32, Vec<u8>> = [
        (0, x.iter().flat_map(|v| v.to_le_bytes()).collect()),
        (1, vec![0u8; grid * 32]),
    ]
    .into();
    let options = Options {
        simd: mode,
        wide_integers: wide,
        ..Options::default()
    };
    let dispatch = Dispatch::Threads {
        grid: [grid as u32, 1, 1],
        threadgroup: [tg as u32, 1, 1],
    };
    let out = run_kernel(
        gpu,
        "ballot.metal",
        SOURCE,
        &options,
        "ballot",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{mode:?}: {e}"));
    let words = common::u32s(&out[&1]);
    Some(words.chunks_exact(2).map(|c| [c[0], c[1]]).collect())
}

fn check(mode: SimdGroups, grid: usize, tg: usize, width: usize) {
    check_as(mode, WideIntegers::Native, grid, tg, width);
}

fn check_as(mode: SimdGroups, wide: WideIntegers, grid: usize, tg: usize, width: usize) {
    let Some(got) = run_as(mode, wide, grid, tg) else {
        return;
    };
    let want = reference(&x_values(grid), grid, tg, width);
    let names = [
        "simd_ballot(v > 10)",
        "simd_ballot(lane % 4 == 1)",
        "simd_active_threads_mask()",
        "lane, width",
    ];
    for (j, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "{mode:?} {wide:?} grid {grid} tg {tg}: thread {}: {}",
            j / 4,
            names[j % 4]
        );
    }
}

#[test]
fn emulated_votes_are_masks_of_32_lane_groups() {
    check(SimdGroups::Emulated32, 128, 64, 32);
}

#[test]
fn emulated_votes_in_short_groups_and_a_ragged_grid() {
    // Threadgroups of 48 (a 16-thread second group), and 100 threads in
    // threadgroups of 64, whose last group has 4 threads: threads outside
    // the grid never vote and are not active.
    check(SimdGroups::Emulated32, 96, 48, 32);
    check(SimdGroups::Emulated32, 100, 64, 32);
}

#[test]
fn the_runner_picks_32_lane_votes_on_any_adapter() {
    check(SimdGroups::Auto, 128, 64, 32);
}

#[test]
fn native_votes_have_the_adapters_width_and_auto_uses_them_only_at_32() {
    let Some(gpu) = common::gpu() else { return };
    let Some(got) = run(SimdGroups::Native, 128, 64) else {
        return;
    };
    let width = got[3][1] as usize;
    assert!(width.is_power_of_two() && width <= 64, "width {width}");
    check(SimdGroups::Native, 128, 64, width);
    assert_eq!(
        gpu.simd_groups(SimdGroups::Auto) == SimdGroups::Native,
        width == 32,
        "Auto must pick native subgroups exactly where they are 32 lanes wide (here {width})"
    );
}

#[test]
fn emulated_votes_in_32_bits_are_apples_masks() {
    // As `--target webgpu` holds 64-bit integers: in their low word, which
    // for 32 lanes is the whole mask (`as_type<uint2>` gives a 0 high word).
    check_as(SimdGroups::Emulated32, WideIntegers::Low32, 128, 64, 32);
    check_as(SimdGroups::Emulated32, WideIntegers::Low32, 100, 64, 32);
}

#[test]
fn native_votes_in_32_bits_have_the_adapters_width() {
    let Some(got) = run_as(SimdGroups::Native, WideIntegers::Low32, 64, 64) else {
        return;
    };
    let width = got[3][1] as usize;
    // Wider subgroups (64 lanes) keep only lanes 0..32 in the low word.
    if width <= 32 {
        check_as(SimdGroups::Native, WideIntegers::Low32, 128, 64, width);
    }
}

#[test]
fn webgpu_votes_need_no_64_bit_integers_nor_subgroups() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device uint2* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  simd_vote v = simd_ballot(i > 3u);\n  o[i] = as_type<uint2>((simd_vote::vote_t)v) + uint2(uint(v.all()), uint(v.any()));\n}\n";
    let lib = Library::from_source("t.metal", src, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let wgsl = lib.wgsl();
    assert!(!wgsl.contains("u64") && !wgsl.contains("enable"), "{wgsl}");
    assert_eq!(lib.warnings(), "");
}

/// `simd_vote`'s and `quad_vote`'s `all()`/`any()`, and `quad_ballot`'s
/// mask (MSL §6.9.2, §6.9.3).
const MEMBERS: &str = r#"
#include <metal_stdlib>
using namespace metal;

bool every(simd_vote v) { return v.all(); }

kernel void members(device const int* x [[buffer(0)]],
                    device uint* o [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
    int v = x[i];
    simd_vote big = simd_ballot(v > 10);
    simd_vote nonneg = simd_ballot(v >= 0);
    simd_vote active = simd_active_threads_mask();
    quad_vote q = quad_ballot(v > 10);
    quad_vote present = quad_active_threads_mask();
    uint bits = uint(big.all())
        | uint(big.any()) << 1
        | uint(every(nonneg)) << 2
        | uint(nonneg.any()) << 3
        | uint(simd_ballot(v > 100).any()) << 4
        | uint(active.all()) << 5
        | uint(simd_vote(0xFFFFFFFFFFull).all()) << 6
        | uint(simd_vote(0ull).any()) << 7
        | uint(q.all()) << 8
        | uint(q.any()) << 9
        | uint(present.all()) << 10
        | uint(quad_ballot(v >= 0).all()) << 11
        | uint(quad_vote(ushort(0xF0)).any()) << 12
        | uint((ushort)quad_vote(ushort(0x37)) == 7u) << 13;
    o[i * 2u] = bits;
    o[i * 2u + 1u] = uint((quad_vote::vote_t)q) | uint((ushort)present) << 4;
}
"#;

/// The two words per thread of `members`, for SIMD groups of `width`
/// lanes, cut at threadgroup and grid ends.
fn members_reference(x: &[i32], grid: usize, tg: usize, width: usize) -> Vec<u32> {
    let group = |t: usize, size: usize| {
        let start = t / tg * tg;
        let base = t - (t - start) % size;
        base..(base + size).min(start + tg).min(grid)
    };
    let full = |lanes: usize, size: usize| lanes == size;
    let mut out = Vec::new();
    for t in 0..grid {
        let simd = group(t, width);
        let quad = group(t, 4);
        let count = |r: &std::ops::Range<usize>, p: &dyn Fn(i32) -> bool| {
            r.clone().filter(|&m| p(x[m])).count()
        };
        let big = count(&simd, &|v| v > 10);
        let nonneg = count(&simd, &|v| v >= 0);
        let q_big = count(&quad, &|v| v > 10);
        let bits = [
            full(big, width),
            big > 0,
            full(nonneg, width),
            nonneg > 0,
            count(&simd, &|v| v > 100) > 0,
            full(simd.len(), width),
            // 0xFF_FFFF_FFFF has every bit of 8, 16, 32 and 64 lanes set
            // except bits 40..64.
            width <= 32,
            false,
            q_big == 4,
            q_big > 0,
            quad.len() == 4,
            quad.len() == 4,
            false,
            true,
        ];
        let word = bits
            .iter()
            .enumerate()
            .fold(0u32, |w, (k, &b)| w | (b as u32) << k);
        let mut q_mask = 0u32;
        let mut present = 0u32;
        for (k, m) in quad.clone().enumerate() {
            let k = k + quad.start % 4;
            present |= 1 << k;
            if x[m] > 10 {
                q_mask |= 1 << k;
            }
        }
        out.push(word);
        out.push(q_mask | present << 4);
    }
    out
}

fn run_members(mode: SimdGroups, wide: WideIntegers, grid: usize, tg: usize) -> Option<Vec<u32>> {
    let gpu = common::gpu()?;
    if wide == WideIntegers::Native
        && !gpu
            .features()
            .contains(msl2wgsl::wgpu::Features::SHADER_INT64)
    {
        common::skip::missing_feature(gpu, "shader-int64");
        return None;
    }
    // Native votes are the adapter's subgroup ballots (wgpu's GL has none).
    if mode == SimdGroups::Native && !gpu.features().contains(msl2wgsl::wgpu::Features::SUBGROUP) {
        common::skip::missing_feature(gpu, "subgroup");
        return None;
    }
    let x = x_values(grid);
    let buffers: BTreeMap<u32, Vec<u8>> = [
        (0, x.iter().flat_map(|v| v.to_le_bytes()).collect()),
        (1, vec![0u8; grid * 8]),
    ]
    .into();
    let options = Options {
        simd: mode,
        wide_integers: wide,
        ..Options::default()
    };
    let dispatch = Dispatch::Threads {
        grid: [grid as u32, 1, 1],
        threadgroup: [tg as u32, 1, 1],
    };
    let out = run_kernel(
        gpu,
        "members.metal",
        MEMBERS,
        &options,
        "members",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{mode:?}: {e}"));
    Some(common::u32s(&out[&1]))
}

fn check_members(mode: SimdGroups, grid: usize, tg: usize, width: usize) {
    check_members_as(mode, WideIntegers::Native, grid, tg, width);
}

fn check_members_as(mode: SimdGroups, wide: WideIntegers, grid: usize, tg: usize, width: usize) {
    let Some(got) = run_members(mode, wide, grid, tg) else {
        return;
    };
    let want = members_reference(&x_values(grid), grid, tg, width);
    for (j, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "{mode:?} {wide:?} grid {grid} tg {tg}: thread {} word {}: got {g:#x}, want {w:#x}",
            j / 2,
            j % 2
        );
    }
}

#[test]
fn vote_members_see_every_lane_of_32_lane_groups() {
    check_members(SimdGroups::Emulated32, 128, 64, 32);
    // A 16-thread second SIMD-group is never `all()`; a ragged grid's
    // last quad has two threads.
    check_members(SimdGroups::Emulated32, 96, 48, 32);
    check_members(SimdGroups::Emulated32, 98, 64, 32);
}

#[test]
fn vote_members_with_the_adapters_subgroups() {
    let Some(lanes) = run(SimdGroups::Native, 64, 64) else {
        return;
    };
    let width = lanes[3][1] as usize;
    check_members(SimdGroups::Native, 128, 64, width);
    check_members(SimdGroups::Native, 98, 64, width);
}

#[test]
fn quad_votes_need_no_64_bit_integers() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device uint* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  quad_vote q = quad_ballot(i > 3u);\n  o[i] = uint(q.all()) + (uint)(ushort)q;\n}\n";
    let lib = Library::from_source("t.metal", src, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()));
    assert!(!lib.wgsl().contains("u64"), "{}", lib.wgsl());
}

#[test]
fn vote_members_in_32_bits() {
    check_members_as(SimdGroups::Emulated32, WideIntegers::Low32, 128, 64, 32);
    check_members_as(SimdGroups::Emulated32, WideIntegers::Low32, 98, 64, 32);
    let Some(lanes) = run_as(SimdGroups::Native, WideIntegers::Low32, 64, 64) else {
        return;
    };
    let width = lanes[3][1] as usize;
    if width <= 32 {
        check_members_as(SimdGroups::Native, WideIntegers::Low32, 128, 64, width);
    }
}
