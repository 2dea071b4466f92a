//! The naga round trip (TESTING.md, "Round-trip oracles"): WGSL through
//! naga's MSL backend (the MSL wgpu runs on Apple GPUs), back through
//! msl2wgsl, and both run on one GPU with the same buffers; every buffer
//! must agree.
//!
//! The WGSL: programs written here for what the other sources lack
//! (workgroup memory, barriers, atomics, structs, `f16`), the WGSL that
//! msl2wgsl makes of the differential generator's random kernels, and the
//! WGSL sources of Tint's end-to-end tests (`../shared/corpus`).
//!
//! `cargo test` runs a bounded sample; the campaign:
//! `MSL2WGSL_ORACLE_FULL=1 cargo test --release --test naga_roundtrip -- --nocapture`
//! (`MSL2WGSL_NAGA_COUNT=N` random programs, 400 by default there;
//! `MSL2WGSL_ORACLE_STRIDE=N` samples every N-th Tint file instead of all).
#![cfg(feature = "runner")]

mod common;
#[allow(dead_code)] // the generator and emitter only
#[path = "differential/mod.rs"]
mod differential;
mod oracle;

use msl2wgsl::library::{HalfMode, Library, Options};
use msl2wgsl::reflect::DispatchParams;
use oracle::naga_msl;
use oracle::program::{self, compute_entries_sized};
use oracle::roundtrip::{quietly, Outcome};
use oracle::tally::Tally;
use oracle::tint;

/// Random programs in the default sample.
const GENERATED: u64 = 16;
/// Every `TINT_STRIDE`-th Tint test is in the default sample.
const TINT_STRIDE: usize = 40;

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

/// Counts one outcome; an unexplained difference is also kept.
fn count(tally: &mut Tally, unexplained: &mut Vec<String>, case: String, outcome: Outcome) {
    match outcome {
        Outcome::NotCandidate(why) => tally.add(&format!("not a candidate: {why}"), case),
        Outcome::Skipped(why, detail) => {
            tally.add(&format!("skipped: {why}"), format!("{case}: {detail}"))
        }
        Outcome::Equal => tally.add("compared: equal", case),
        Outcome::Differ(d) => {
            tally.add("compared: differ", format!("{case}: {d}"));
            unexplained.push(format!("{case}: {d}"));
        }
    }
}

/// Runs every compute entry point of `wgsl` both ways over `groups`.
fn check_wgsl(
    gpu: &msl2wgsl::runner::Gpu,
    name: &str,
    wgsl: &str,
    groups: [u32; 3],
    tally: &mut Tally,
    unexplained: &mut Vec<String>,
) {
    let program = match program::parse(wgsl) {
        Ok(p) => p,
        Err(e) => return count(tally, unexplained, name.into(), Outcome::NotCandidate(e)),
    };
    for (entry_name, entry) in compute_entries_sized(&program, 64) {
        let case = format!("{name} {entry_name}");
        let outcome = match entry {
            Err(why) => Outcome::NotCandidate(why),
            Ok(entry) => quietly(|| naga_msl::check(gpu, name, &program, &entry, groups)),
        };
        count(tally, unexplained, case, outcome);
    }
}

/// WGSL written for the round trip: what Tint's tests and the random
/// programs exercise little or not at all. Each runs over two workgroups.
const OWN: &[(&str, &str)] = &[
    (
        "workgroup-reverse",
        "@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
var<workgroup> tile: array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32, @builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(workgroup_id) wid: vec3<u32>) {
    tile[li] = input[gid.x] * 2.0 + f32(wid.x);
    workgroupBarrier();
    output[gid.x] = tile[63u - li] - tile[(li + 1u) % 64u];
}",
    ),
    (
        "atomics",
        "struct Counters { sum: atomic<u32>, max: atomic<i32>, min: atomic<i32>, bits: atomic<u32> }
@group(0) @binding(0) var<storage, read_write> counters: Counters;
@group(0) @binding(1) var<storage, read> values: array<i32>;
@group(0) @binding(2) var<storage, read_write> old: array<u32>;
var<workgroup> local_sum: atomic<u32>;
@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) li: u32, @builtin(global_invocation_id) gid: vec3<u32>) {
    let v = values[gid.x];
    atomicAdd(&local_sum, u32(v & 7));
    atomicMax(&counters.max, v);
    atomicMin(&counters.min, v);
    atomicOr(&counters.bits, 1u << (u32(v) & 31u));
    workgroupBarrier();
    if li == 0u {
        old[gid.x / 32u] = atomicAdd(&counters.sum, atomicLoad(&local_sum)) & 0u;
    }
    let r = atomicCompareExchangeWeak(&counters.sum, 0xffffffffu, 1u);
    if r.exchanged { old[2] = 99u; }
}",
    ),
    (
        "structs",
        "struct Inner { a: vec3<f32>, b: u32, c: array<vec2<i32>, 3> }
struct Params { scale: f32, offset: vec2<f32>, count: u32, inner: Inner }
struct Out { v: vec4<f32>, m: mat3x3<f32>, flags: array<u32, 4>, i: Inner }
@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read_write> results: array<Out>;
fn mix_inner(x: Inner, k: i32) -> Inner {
    var y = x;
    y.a = y.a * f32(k) + vec3<f32>(vec2<f32>(y.c[1]), 0.5).xzy;
    y.c[2] = y.c[0] - vec2<i32>(k);
    y.b = y.b ^ u32(k);
    return y;
}
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    var o: Out;
    o.v = vec4<f32>(params.offset * params.scale, f32(params.count), f32(i));
    o.m = mat3x3<f32>(params.inner.a, o.v.xyz, vec3<f32>(params.scale));
    o.flags = array<u32, 4>(i, params.count, params.inner.b, u32(params.inner.c[2].y));
    o.i = mix_inner(params.inner, i32(i) - 2);
    results[i] = o;
}",
    ),
    (
        "f16",
        "enable f16;
struct H { a: vec3<f16>, b: f16, c: vec2<f16> }
@group(0) @binding(0) var<storage, read> input: array<H>;
@group(0) @binding(1) var<storage, read_write> output: array<vec4<f16>>;
var<workgroup> shared_h: array<f16, 16>;
@compute @workgroup_size(16)
fn main(@builtin(local_invocation_index) li: u32, @builtin(global_invocation_id) gid: vec3<u32>) {
    let h = input[gid.x];
    shared_h[li] = h.b * 0.5h + h.c.y;
    workgroupBarrier();
    let n = shared_h[(li + 3u) % 16u];
    output[gid.x] = vec4<f16>(h.a * n, max(h.c.x, -2.0h)) + vec4<f16>(f16(li));
}",
    ),
    (
        "loops-and-control",
        "@group(0) @binding(0) var<storage, read_write> data: array<i32>;
var<private> steps: i32;
fn collatz(start: i32) -> i32 {
    var n = abs(start) + 1;
    var k = 0;
    loop {
        if n == 1 || k > 50 { break; }
        if n % 2 == 0 { n = n / 2; } else { n = 3 * n + 1; }
        k += 1;
        continuing { steps += 1; }
    }
    return k;
}
@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    var acc = 0;
    for (var j = 0; j < 4; j++) {
        switch (data[i] + j) & 3 {
            case 0: { acc += collatz(data[i] * 7 + j); }
            case 1, 2: { acc -= j; }
            default: { acc ^= 0x55; }
        }
        acc = acc * 3;
    }
    data[i] = acc + steps;
}",
    ),
];

/// Own programs msl2wgsl cannot translate back yet, with the reason
/// (TESTING.md, "Round-trip oracles", lists the defects). Each must still
/// fail that way; one that passes is a fix to record here.
const KNOWN_GAPS: &[(&str, &str)] = &[(
    "atomics",
    // naga's MSL declares a runtime-sized buffer array as `uint[1]` and
    // stores to `old[2]`, a constant index clang only warns about
    // (`-Warray-bounds`); msl2wgsl refuses it.
    "index 2 is past the end of `uint[1]`",
)];

#[test]
fn own_programs_round_trip() {
    let Some(gpu) = common::gpu() else { return };
    let (mut tally, mut unexplained) = (Tally::default(), Vec::new());
    for (name, wgsl) in OWN {
        if wgsl.starts_with("enable f16") && gpu.half_mode(HalfMode::F16) != HalfMode::F16 {
            eprintln!("note: {name} skipped: the adapter has no shader-f16");
            continue;
        }
        let mut own = Tally::default();
        check_wgsl(gpu, name, wgsl, [2, 1, 1], &mut own, &mut unexplained);
        let report = own.report(true);
        match KNOWN_GAPS.iter().find(|(n, _)| n == name) {
            Some((_, why)) => assert!(
                report.contains(why),
                "{name} was a known gap ({why}) and now gives:\n{report}\nupdate KNOWN_GAPS"
            ),
            None => assert_eq!(
                own.count("compared: equal"),
                own.total(),
                "{name}:\n{report}"
            ),
        }
        eprint!("{name}:\n{report}");
        tally.add(
            if own.count("compared: equal") > 0 {
                "equal"
            } else {
                "not compared"
            },
            name.to_string(),
        );
    }
    eprintln!("naga round trip, own programs:\n{}", tally.report(true));
    assert!(
        unexplained.is_empty(),
        "differences:\n{}",
        unexplained.join("\n")
    );
}

/// The reduced defect behind most naga MSL with `Restrict` bounds checks:
/// the functional cast `unsigned(x)` (C++'s `unsigned int`).
#[test]
fn functional_cast_to_unsigned() {
    let Some(gpu) = common::gpu() else { return };
    let source = "#include <metal_stdlib>\nusing namespace metal;\n\
        kernel void k(device uint* out [[buffer(0)]], uint3 gid [[thread_position_in_grid]]) {\n\
            out[metal::min(unsigned(gid.x), 3u)] = unsigned(7) + gid.x;\n\
        }\n";
    let buffers = [(0, vec![0u8; 16])].into_iter().collect();
    let dispatch = msl2wgsl::runner::Dispatch::Threads {
        grid: [6, 1, 1],
        threadgroup: [2, 1, 1],
    };
    let out = msl2wgsl::runner::run_kernel(
        gpu,
        "k.metal",
        source,
        &Options::default(),
        "k",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // Threads 3, 4 and 5 all store to out[3]: one of them wins.
    let words = common::u32s(&out[&0]);
    assert_eq!(&words[..3], &[7, 8, 9]);
    assert!((10..=12).contains(&words[3]), "{words:?}");
}

/// The reduced defect behind the naga MSL of every `var<workgroup>`: a
/// `threadgroup T&` kernel parameter with no attribute, which Metal
/// numbers in order.
#[test]
fn unattributed_threadgroup_parameter() {
    let Some(gpu) = common::gpu() else { return };
    let source = "#include <metal_stdlib>\nusing namespace metal;\n\
        struct Tile { float v[4]; };\n\
        kernel void k(device float* out [[buffer(0)]], uint li [[thread_index_in_threadgroup]],\n\
                      threadgroup Tile& tile) {\n\
            tile.v[li] = float(li) * 2.0f;\n\
            threadgroup_barrier(mem_flags::mem_threadgroup);\n\
            out[li] = tile.v[3 - li];\n\
        }\n";
    let buffers = [(0, vec![0u8; 16])].into_iter().collect();
    let dispatch = msl2wgsl::runner::Dispatch::Threads {
        grid: [4, 1, 1],
        threadgroup: [4, 1, 1],
    };
    let out = msl2wgsl::runner::run_kernel(
        gpu,
        "k.metal",
        source,
        &Options::default(),
        "k",
        &dispatch,
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(common::f32s(&out[&0]), [6.0, 4.0, 2.0, 0.0]);
}

/// The WGSL msl2wgsl makes of random program `seed`, with its dispatch
/// uniform's binding, threads and threadgroup size.
fn generated(seed: u64) -> Option<(String, (u32, u32), u32, u32)> {
    let program = differential::generate::program(seed);
    let msl = differential::emit::msl(&program);
    let options = Options {
        threadgroup_size: Some([program.threadgroup, 1, 1]),
        ..Options::default()
    };
    let library = Library::from_source("diff.metal", &msl, &options).ok()?;
    let function = library.function(differential::ast::KERNEL)?;
    let dispatch = function.dispatch_binding?;
    Some((
        library.wgsl().to_string(),
        (dispatch.group, dispatch.binding),
        program.threads,
        program.threadgroup,
    ))
}

#[test]
fn generated_programs_round_trip() {
    let Some(gpu) = common::gpu() else { return };
    let full = env_flag("MSL2WGSL_ORACLE_FULL");
    let n: u64 = std::env::var("MSL2WGSL_NAGA_COUNT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if full { 400 } else { GENERATED });
    let (mut tally, mut unexplained) = (Tally::default(), Vec::new());
    for seed in 1..=n {
        let case = format!("seed {seed}");
        let Some((wgsl, dispatch, threads, threadgroup)) = generated(seed) else {
            tally.add("not a candidate: msl2wgsl rejects the random MSL", case);
            continue;
        };
        let program = match program::parse(&wgsl) {
            Ok(p) => p,
            Err(e) => {
                count(&mut tally, &mut unexplained, case, Outcome::Differ(e));
                continue;
            }
        };
        let groups = threads.div_ceil(threadgroup);
        for (_, entry) in compute_entries_sized(&program, threads * 4 + 64) {
            let Ok(mut entry) = entry else { continue };
            // The first translation's dispatch uniform: Metal's ragged grid.
            let params = DispatchParams {
                grid_size: [threads, 1, 1],
                group_offset: [0; 3],
                threadgroups: [groups, 1, 1],
            };
            for b in &mut entry.buffers {
                if (b.group, b.binding) == dispatch {
                    b.bytes = params.to_bytes().to_vec();
                }
            }
            let outcome = quietly(|| naga_msl::check(gpu, &case, &program, &entry, [groups, 1, 1]));
            count(&mut tally, &mut unexplained, case.clone(), outcome);
        }
    }
    eprintln!(
        "naga round trip, {n} random programs:\n{}",
        tally.report(true)
    );
    assert!(
        unexplained.is_empty(),
        "differences:\n{}",
        unexplained.join("\n")
    );
}

#[test]
fn tint_sources_round_trip() {
    let Some(root) = tint::root() else {
        assert!(
            !env_flag("MSL2WGSL_REQUIRE_CORPUS"),
            "MSL2WGSL_REQUIRE_CORPUS=1 but ../shared/corpus is absent"
        );
        eprintln!("note: skipping the naga round trip of Tint's WGSL: ../shared/corpus is absent");
        return;
    };
    let Some(gpu) = common::gpu() else { return };
    let full = env_flag("MSL2WGSL_ORACLE_FULL");
    let filter = std::env::var("MSL2WGSL_ORACLE_FILTER").unwrap_or_default();
    let (mut tally, mut unexplained) = (Tally::default(), Vec::new());
    let files = tint::tests(&root);
    let stride: usize = std::env::var("MSL2WGSL_ORACLE_STRIDE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(TINT_STRIDE);
    for (i, file) in files.iter().enumerate() {
        let name = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        if !(full || !filter.is_empty() || i % stride == 0) || !name.contains(&filter) {
            continue;
        }
        if std::env::var("MSL2WGSL_ORACLE_PROGRESS").is_ok() {
            eprintln!("{name}");
        }
        let Ok(wgsl) = std::fs::read_to_string(file) else {
            continue;
        };
        check_wgsl(
            gpu,
            &name,
            &wgsl,
            tint::GROUPS,
            &mut tally,
            &mut unexplained,
        );
    }
    eprintln!("naga round trip of Tint's WGSL:\n{}", tally.report(true));
    assert!(
        unexplained.is_empty(),
        "differences:\n{}",
        unexplained.join("\n")
    );
}
