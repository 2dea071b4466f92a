//! Sum of N floats, one partial sum per threadgroup of 256 threads (each
//! thread adds four `float4`s, so a threadgroup covers 4096 floats):
//! `simd_sum` within SIMD-groups, their sums meet in threadgroup memory,
//! and the first SIMD-group adds those. The partial sums are checked
//! exactly: the inputs are small integers, so every partial sum is an
//! integer below 2^24 and no order of summation rounds. Bandwidth counts
//! the input read once.

use super::harness::{
    check_exact, grid, print_rows, translate, translate_simd, Bench, Kernel, Row,
};

/// Floats one threadgroup sums.
const PER_GROUP: u32 = 256 * 16;

const HAND_WGSL: &str = "
const WG: u32 = 256u;
const PER_THREAD: u32 = 4u;
@group(0) @binding(0) var<storage, read> input: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> partial: array<f32>;
var<workgroup> scratch: array<f32, WG>;
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) width: u32) {
    let n = arrayLength(&input);
    let base = wid.x * WG * PER_THREAD + lid;
    var acc = vec4<f32>();
    for (var k = 0u; k < PER_THREAD; k++) {
        let i = base + k * WG;
        if (i < n) { acc += input[i]; }
    }
    let s = subgroupAdd(acc.x + acc.y + acc.z + acc.w);
    let sg = lid / width;
    if (lane == 0u) { scratch[sg] = s; }
    workgroupBarrier();
    if (sg == 0u) {
        var t = 0.0;
        for (var j = lane; j < (WG + width - 1u) / width; j += width) { t += scratch[j]; }
        t = subgroupAdd(t);
        if (lane == 0u) { partial[wid.x] = t; }
    }
}";

/// Times the sum of `count` floats (a multiple of 4), or prints why not.
pub fn run(bench: &Bench, count: u32) -> anyhow::Result<()> {
    anyhow::ensure!(count.is_multiple_of(4), "--reduce: a multiple of 4");
    println!(
        "\nreduction: sum of {count} floats ({:.1} MiB), one partial sum per 4096",
        f64::from(count) / 262144.0
    );
    let source = include_str!("../../fixtures/bench/reduce_sum.metal");
    let t = translate(
        "reduce_sum.metal",
        source,
        "reduce_sum",
        [256, 1, 1],
        &[(0, 256 * 4)],
    )?;
    if let Err(e) = bench.gpu.check_features(&t.required_features) {
        println!("skipped: {e}");
        return Ok(());
    }
    // The same kernel with Apple's 32-lane SIMD groups emulated in
    // threadgroup memory (what adapters whose subgroups are not 32 wide get).
    // Its 32-lane form, whose SIMD-group calls are threadgroup-uniform:
    // with native subgroups where the adapter's are 32 wide, and with the
    // emulation (what other adapters get).
    let source_32 = include_str!("../../fixtures/bench/reduce_sum_32.metal");
    let width32 = |simd| {
        translate_simd(
            "reduce_sum_32.metal",
            source_32,
            "reduce_sum_32",
            [256, 1, 1],
            &[],
            simd,
        )
    };
    let emulated = width32(msl2wgsl::SimdGroups::Emulated32)?;
    let native_32 = width32(msl2wgsl::SimdGroups::Native)?;
    let lanes_32 =
        bench.gpu.simd_groups(msl2wgsl::SimdGroups::Auto) == msl2wgsl::SimdGroups::Native;
    let data: Vec<f32> = (0..count).map(|i| (i % 16) as f32).collect();
    let want: Vec<f32> = data
        .chunks(PER_GROUP as usize)
        .map(|c| c.iter().sum())
        .collect();
    let groups = count.div_ceil(PER_GROUP);
    let input = bench.input(bytemuck::cast_slice(&data));
    let count4 = bench.input(bytemuck::bytes_of(&(count / 4)));
    let partial = bench.output(u64::from(groups) * 4);
    let kernels = [
        t.kernel(
            "translated reduce_sum",
            grid([groups * 256, 1, 1], [256, 1, 1]),
            &[&input, &partial, &count4],
        ),
        emulated.kernel(
            "translated reduce_sum_32, 32 lanes emulated",
            grid([groups * 256, 1, 1], [256, 1, 1]),
            &[&input, &partial, &count4],
        ),
        native_32.kernel(
            "translated reduce_sum_32, native 32-lane subgroups",
            grid([groups * 256, 1, 1], [256, 1, 1]),
            &[&input, &partial, &count4],
        ),
        Kernel {
            name: "hand-written WGSL (subgroupAdd)",
            wgsl: HAND_WGSL.into(),
            entry: "main".into(),
            groups: [groups, 1, 1],
            buffers: vec![(0, &input), (1, &partial)],
            dispatch: None,
            constants: Vec::new(),
        },
    ];
    let mut rows = Vec::new();
    for kernel in &kernels {
        if kernel.name.contains("native 32-lane") && !lanes_32 {
            println!(
                "{}: skipped (the adapter's subgroups are not 32 lanes wide)",
                kernel.name
            );
            continue;
        }
        let ns = bench.time(kernel)?;
        check_exact(kernel.name, &bench.read_f32(&partial)?, &want)?;
        bench.clear(&partial)?;
        rows.push(Row {
            name: kernel.name,
            ns,
            work: f64::from(count) * 4.0,
        });
    }
    // The hand-written kernel, the last row, is the reference.
    print_rows(&rows, "GB/s", rows.len() - 1);
    Ok(())
}
