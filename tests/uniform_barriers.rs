//! Barriers that Metal reaches in shapes WGSL refuses (Tint: "'workgroupBarrier'
//! must only be called from uniform control flow"), translated so that the
//! barriers are in uniform control flow and the kernels compute what Metal
//! computes: run here on the GPU against a CPU reference, and checked by
//! Tint in CI (`web/tint-check.mjs` over every module the suite dumps).
// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

/// Threads past the end of the data return early; the others sum their
/// threadgroup's elements (times 3) through threadgroup memory, as MLX's
/// reductions do. The tree reduction only reads elements of threads that
/// did not return.
const GROUP_SUMS: &str = r#"
kernel void group_sums(device const int* data [[buffer(0)]],
                       device int* sums [[buffer(1)]],
                       constant uint& n [[buffer(2)]],
                       uint gid [[thread_position_in_grid]],
                       uint lid [[thread_position_in_threadgroup]],
                       uint group [[threadgroup_position_in_grid]],
                       uint size [[threads_per_threadgroup]]) {
    threadgroup int partial[64];
    if (gid >= n) {
        return;
    }
    partial[lid] = data[gid] * 3;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = size / 2; s > 0; s >>= 1) {
        if (lid < s && gid + s < n) {
            partial[lid] += partial[lid + s];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid == 0) {
        sums[group] = partial[0];
    }
}
"#;

/// SPIRV-Cross's tessellation-control shape: every thread stores its input,
/// all wait, the threads past the patch's control points return, the rest
/// combine two neighbours' inputs, wait again, and the first writes the
/// patch's total of what the others wrote.
const RETURN_BETWEEN_BARRIERS: &str = r#"
kernel void patches(device const float* input [[buffer(0)]],
                    device float* points [[buffer(1)]],
                    device float* totals [[buffer(2)]],
                    uint lid [[thread_index_in_threadgroup]],
                    uint patch [[threadgroup_position_in_grid]]) {
    threadgroup float inputs[8];
    inputs[lid] = input[patch * 8 + lid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid >= 4)
        return;
    points[patch * 4 + lid] = inputs[lid] + inputs[lid ^ 1] * 2.0f;
    threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
    if (lid == 0) {
        totals[patch] = points[patch * 4] + points[patch * 4 + 1]
                      + points[patch * 4 + 2] + points[patch * 4 + 3];
    }
}
"#;

#[test]
fn a_nonuniform_early_return_before_a_barrier_becomes_inactivity() {
    for body in [GROUP_SUMS, RETURN_BETWEEN_BARRIERS] {
        let library = common::source::translate_body(body);
        let wgsl = library.wgsl();
        assert!(wgsl.contains("metal_active = false;"), "{wgsl}");
    }
}

/// A `return` Tint takes as uniform (the whole threadgroup leaves) stays a
/// `return`: the threadgroup does not run on for nothing.
#[test]
fn a_uniform_early_return_stays() {
    let body = r#"
kernel void k(device int* out [[buffer(0)]],
              constant uint& groups [[buffer(1)]],
              uint group [[threadgroup_position_in_grid]],
              uint lid [[thread_position_in_threadgroup]]) {
    threadgroup int t[32];
    if (group >= groups) {
        return;
    }
    t[lid] = int(lid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[group * 32 + lid] = t[31 - lid];
}
"#;
    let library = common::source::translate_body(body);
    let wgsl = library.wgsl();
    assert!(!wgsl.contains("metal_active = false;"), "{wgsl}");
}

#[test]
#[cfg(feature = "runner")]
fn group_sums_after_an_early_return_match_the_cpu() {
    let data: Vec<i32> = (0..256).map(|i| (i * 37 % 101) - 50).collect();
    for n in [256u32, 200, 37, 64] {
        let Some(out) = common::source::run_body(
            GROUP_SUMS,
            "group_sums",
            (256, 64),
            vec![
                (0, i32_bytes(&data)),
                (1, i32_bytes(&[-7; 4])),
                (2, n.to_le_bytes().to_vec()),
            ],
        ) else {
            return;
        };
        let got = i32s(&out[&1]);
        // Groups with no thread inside the data write nothing.
        let want: Vec<i32> = (0..4)
            .map(|g| {
                let range = (g * 64).min(n as usize)..((g + 1) * 64).min(n as usize);
                match range.is_empty() {
                    true => -7,
                    false => data[range].iter().map(|v| v * 3).sum(),
                }
            })
            .collect();
        assert_eq!(got, want, "n = {n}");
    }
}

#[test]
#[cfg(feature = "runner")]
fn a_return_between_barriers_matches_the_cpu() {
    let input: Vec<f32> = (0..24).map(|i| i as f32 * 0.5 - 3.0).collect();
    let Some(out) = common::source::run_body(
        RETURN_BETWEEN_BARRIERS,
        "patches",
        (24, 8),
        vec![
            (0, common::f32_bytes(&input)),
            (1, common::f32_bytes(&[0.0; 12])),
            (2, common::f32_bytes(&[0.0; 3])),
        ],
    ) else {
        return;
    };
    let points = common::f32s(&out[&1]);
    let totals = common::f32s(&out[&2]);
    for patch in 0..3 {
        let at = |i: usize| input[patch * 8 + i];
        let want: Vec<f32> = (0..4).map(|i| at(i) + at(i ^ 1) * 2.0).collect();
        assert_eq!(points[patch * 4..patch * 4 + 4], want[..], "patch {patch}");
        // Exact: small multiples of 0.5, summed in the kernel's order.
        let total = ((want[0] + want[1]) + want[2]) + want[3];
        assert_eq!(totals[patch], total, "patch {patch}");
    }
}

/// The early return in a helper (MLX's kernels call `Op::run(...)`): the
/// threads past the row's length return 0 at once; the others stage the
/// row in threadgroup memory, wait, and sum it. Every thread stores what
/// the helper gave it.
const HELPER_RETURN: &str = r#"
float row_sum(threadgroup float* row, device const float* data,
              uint lid, uint count) {
    if (lid >= count) {
        return 0.0f;
    }
    row[lid] = data[lid] * 0.5f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float sum = 0.0f;
    for (uint i = 0; i < count; ++i) {
        sum += row[i];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return sum + float(lid);
}

kernel void rows(device const float* data [[buffer(0)]],
                 device float* out [[buffer(1)]],
                 constant uint* counts [[buffer(2)]],
                 uint lid [[thread_position_in_threadgroup]],
                 uint group [[threadgroup_position_in_grid]]) {
    threadgroup float row[32];
    float s = row_sum(row, data + group * 32, lid, counts[group]);
    out[group * 32 + lid] = s;
}
"#;

#[test]
fn a_nonuniform_early_return_in_a_helper_becomes_inactivity() {
    let library = common::source::translate_body(HELPER_RETURN);
    let wgsl = library.wgsl();
    assert!(wgsl.contains("metal_active = false;"), "{wgsl}");
    assert_eq!(library.warnings(), "");
}

#[test]
#[cfg(feature = "runner")]
fn row_sums_after_a_helper_s_early_return_match_the_cpu() {
    let data: Vec<f32> = (0..96).map(|i| (i % 9) as f32 - 4.0).collect();
    let counts = [32u32, 5, 0];
    let counts_bytes: Vec<u8> = counts.iter().flat_map(|c| c.to_le_bytes()).collect();
    let Some(out) = common::source::run_body(
        HELPER_RETURN,
        "rows",
        (96, 32),
        vec![
            (0, common::f32_bytes(&data)),
            (1, common::f32_bytes(&[-1.0; 96])),
            (2, counts_bytes),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (g, &count) in counts.iter().enumerate() {
        let count = count as usize;
        // Halves of small integers: exact in any order.
        let sum: f32 = data[g * 32..g * 32 + count].iter().map(|v| v * 0.5).sum();
        for lid in 0..32 {
            let want = if lid < count { sum + lid as f32 } else { 0.0 };
            assert_eq!(got[g * 32 + lid], want, "group {g}, thread {lid}");
        }
    }
}

/// MLX's matrix-vector shape: only the threads whose column lies inside
/// the matrix take the main loop, which waits at an execution-only barrier
/// each iteration; then every thread meets at a real barrier and the first
/// thread of the threadgroup sums the columns through threadgroup memory.
const EXECUTION_BARRIER: &str = r#"
kernel void columns(device const float* mat [[buffer(0)]],
                    device float* out [[buffer(1)]],
                    constant int& rows [[buffer(2)]],
                    constant int& cols [[buffer(3)]],
                    uint lid [[thread_position_in_threadgroup]],
                    uint group [[threadgroup_position_in_grid]]) {
    threadgroup float sums[32];
    int col = int(group * 32 + lid);
    float acc = 0.0f;
    if (col < cols) {
        for (int r = 0; r < rows; ++r) {
            threadgroup_barrier(mem_flags::mem_none);
            acc += mat[r * cols + col] * float(r + 1);
        }
    }
    sums[lid] = acc;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0) {
        float total = 0.0f;
        for (int i = 0; i < 32; ++i) {
            total += sums[i];
        }
        out[group] = total;
    }
    threadgroup_barrier(mem_flags::mem_none);
}
"#;

#[test]
fn an_execution_barrier_in_nonuniform_control_flow_is_left_out() {
    let library = common::source::translate_body(EXECUTION_BARRIER);
    let wgsl = library.wgsl();
    // The one in the column loop goes; the last one, which every thread
    // reaches, stays beside the real barrier.
    assert_eq!(wgsl.matches("workgroupBarrier();").count(), 2, "{wgsl}");
}

#[test]
#[cfg(feature = "runner")]
fn columns_summed_after_an_execution_barrier_match_the_cpu() {
    let (rows, cols) = (5usize, 40usize);
    let mat: Vec<f32> = (0..rows * cols).map(|i| (i % 7) as f32 - 3.0).collect();
    let Some(out) = common::source::run_body(
        EXECUTION_BARRIER,
        "columns",
        (64, 32),
        vec![
            (0, common::f32_bytes(&mat)),
            (1, common::f32_bytes(&[0.0; 2])),
            (2, (rows as i32).to_le_bytes().to_vec()),
            (3, (cols as i32).to_le_bytes().to_vec()),
        ],
    ) else {
        return;
    };
    let got = common::f32s(&out[&1]);
    for (g, got) in got.iter().enumerate() {
        // Small integers: exact in any order.
        let want: f32 = (g * 32..((g + 1) * 32).min(cols))
            .map(|c| {
                (0..rows)
                    .map(|r| mat[r * cols + c] * (r + 1) as f32)
                    .sum::<f32>()
            })
            .sum();
        assert_eq!(*got, want, "group {g}");
    }
}

/// Tint's `workgroupUniformLoad` in Metal: the first thread sets a count
/// in threadgroup memory, every thread reads it between two barriers and
/// loops that many times, waiting at a barrier each iteration (a
/// double-buffered running sum).
const UNIFORM_READ: &str = r#"
kernel void rounds(device int* data [[buffer(0)]],
                   device const int* counts [[buffer(1)]],
                   uint lid [[thread_position_in_threadgroup]],
                   uint group [[threadgroup_position_in_grid]]) {
    threadgroup int count;
    threadgroup int cells[16];
    if (lid == 0) {
        count = counts[group];
    }
    cells[lid] = data[group * 16 + lid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    int n = count;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int i = 0; i < n; ++i) {
        int left = cells[(lid + 15) % 16];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        cells[lid] += left;
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    data[group * 16 + lid] = cells[lid];
}
"#;

#[test]
fn a_threadgroup_value_read_between_barriers_is_a_uniform_load() {
    let library = common::source::translate_body(UNIFORM_READ);
    let wgsl = library.wgsl();
    assert!(wgsl.contains("workgroupUniformLoad("), "{wgsl}");
}

#[test]
#[cfg(feature = "runner")]
fn rounds_counted_by_a_uniform_load_match_the_cpu() {
    let data: Vec<i32> = (0..48).map(|i| i * 5 % 13 - 6).collect();
    let counts = [3, 0, 7];
    let Some(out) = common::source::run_body(
        UNIFORM_READ,
        "rounds",
        (48, 16),
        vec![(0, i32_bytes(&data)), (1, i32_bytes(&counts))],
    ) else {
        return;
    };
    let got = i32s(&out[&0]);
    for (g, &n) in counts.iter().enumerate() {
        let mut cells = data[g * 16..(g + 1) * 16].to_vec();
        for _ in 0..n {
            let left: Vec<i32> = (0..16).map(|l| cells[(l + 15) % 16]).collect();
            cells.iter_mut().zip(left).for_each(|(c, l)| *c += l);
        }
        assert_eq!(got[g * 16..(g + 1) * 16], cells[..], "group {g}");
    }
}

/// An atomic read between two barriers (a relaxed `atomic_load`, a plain
/// load of the atomic) is no `workgroupUniformLoad`, which reads no
/// atomics: it stays as it was (this once ended in naga's validation).
#[test]
fn an_atomic_read_between_barriers_stays_an_atomic_load() {
    let body = r#"
kernel void k(device int* out [[buffer(0)]],
              uint lid [[thread_position_in_threadgroup]]) {
    threadgroup atomic_int counter;
    if (lid == 0) {
        atomic_store_explicit(&counter, 5, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    int v = atomic_load_explicit(&counter, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[lid] = v;
}
"#;
    let library = common::source::translate_body(body);
    let wgsl = library.wgsl();
    assert!(!wgsl.contains("workgroupUniformLoad("), "{wgsl}");
    assert!(wgsl.contains("atomicLoad("), "{wgsl}");
}

/// `t.metal:LINE:COL` of the `nth` `at` in `body` (after the two-line
/// prelude).
fn location(body: &str, at: &str, nth: usize) -> String {
    let offset = body.match_indices(at).nth(nth).expect("in the source").0;
    let before = &body[..offset];
    let line = before.matches('\n').count() + 3;
    let col = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("t.metal:{line}:{col}: warning: a barrier is reached here in control flow that may depend on the thread")
}

/// A barrier only some threads reach has no meaning in Metal either; it
/// is translated, with a warning at the barrier that browsers will refuse it.
#[test]
fn a_barrier_in_a_branch_on_the_thread_is_warned_about() {
    let body = r#"
kernel void k(device float* out [[buffer(0)]],
              uint lid [[thread_position_in_threadgroup]]) {
    threadgroup float t[32];
    t[lid] = float(lid);
    if (lid < 4) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        out[lid] = t[lid + 4];
    }
}
"#;
    let library = common::source::translate_body(body);
    let warnings = library.warnings();
    assert!(
        warnings.contains(&location(body, "threadgroup_barrier", 0)),
        "{warnings}"
    );
    let codes: Vec<_> = library
        .warning_diagnostics()
        .0
        .iter()
        .map(|d| d.code())
        .collect();
    assert_eq!(codes, [msl2wgsl::diagnostics::Code::BarrierNonUniform]);
    // wgpu's dialect: its consumers check no uniformity.
    let options = msl2wgsl::Options {
        target: msl2wgsl::Target::Wgpu,
        ..Default::default()
    };
    let source = format!("{}{body}", common::source::PRELUDE);
    let wgpu = msl2wgsl::Library::from_source("t.metal", &source, &options).unwrap();
    assert_eq!(wgpu.warnings(), "");
}

/// A `return` inside a loop before its barrier stays (a returned thread
/// running on could loop for ever where that `return` was the loop's only
/// way out): the barrier is warned about.
#[test]
fn a_return_in_a_loop_before_a_barrier_is_warned_about() {
    let body = r#"
kernel void k(device int* data [[buffer(0)]],
              uint lid [[thread_position_in_threadgroup]]) {
    threadgroup int t[32];
    for (int i = 0; i < 4; ++i) {
        if (data[lid] < i) {
            return;
        }
        t[lid] = data[lid] + i;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        data[lid] += t[(lid + 1) % 32];
    }
}
"#;
    let library = common::source::translate_body(body);
    let warnings = library.warnings();
    assert!(
        warnings.contains(&location(body, "threadgroup_barrier", 0)),
        "{warnings}"
    );
}

/// The kernels the rewrites take are not warned about.
#[test]
fn rewritten_kernels_are_not_warned_about() {
    for body in [
        GROUP_SUMS,
        RETURN_BETWEEN_BARRIERS,
        EXECUTION_BARRIER,
        UNIFORM_READ,
    ] {
        let library = common::source::translate_body(body);
        assert_eq!(library.warnings(), "", "{body}");
    }
}

/// Threads whose texel of a mask is clear return before the barrier (the
/// mask read at the thread's own coordinate depends on the thread); the
/// first thread of each threadgroup sums what the others stored.
const TEXEL_RETURN: &str = r#"
kernel void gated_sums(texture2d<float, access::read> mask [[texture(0)]],
                       device const int* data [[buffer(0)]],
                       device int* sums [[buffer(1)]],
                       uint gid [[thread_position_in_grid]],
                       uint lid [[thread_position_in_threadgroup]],
                       uint group [[threadgroup_position_in_grid]]) {
    threadgroup int partial[64];
    if (mask.read(uint2(gid, 0)).x < 0.5f) {
        return;
    }
    partial[lid] = data[gid] * 3;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0) {
        int s = 0;
        for (uint i = 0; i < 64; i++) {
            if (mask.read(uint2(group * 64 + i, 0)).x >= 0.5f) {
                s += partial[i];
            }
        }
        sums[group] = s;
    }
}
"#;

/// The mask of [`TEXEL_RETURN`]'s runs: thread 0 of each threadgroup and
/// two threads in three of the others stay.
fn texel_mask() -> Vec<f32> {
    (0..256)
        .map(|i| (i % 64 == 0 || i % 3 != 1) as u8 as f32)
        .collect()
}

#[test]
fn a_return_on_a_texel_at_the_thread_becomes_inactivity() {
    let library = common::source::translate_body(TEXEL_RETURN);
    let wgsl = library.wgsl();
    assert!(wgsl.contains("metal_active = false;"), "{wgsl}");
    assert_eq!(library.warnings(), "");
}

#[test]
#[cfg(feature = "runner")]
fn group_sums_after_a_return_on_a_texel_match_the_cpu() {
    use msl2wgsl::runner::{run_kernel_resources, Dispatch, Resources, TextureData};
    let Some(gpu) = common::gpu() else { return };
    let data: Vec<i32> = (0..256).map(|i| (i * 37 % 101) - 50).collect();
    let mask = texel_mask();
    let resources = Resources {
        buffers: [(0, i32_bytes(&data)), (1, i32_bytes(&[-7; 4]))]
            .into_iter()
            .collect(),
        textures: [(
            0,
            TextureData::new_2d(
                wgpu::TextureFormat::R32Float,
                256,
                1,
                common::f32_bytes(&mask),
            ),
        )]
        .into_iter()
        .collect(),
        ..Resources::default()
    };
    let source = format!("{}{TEXEL_RETURN}", common::source::PRELUDE);
    let dispatch = Dispatch::Threads {
        grid: [256, 1, 1],
        threadgroup: [64, 1, 1],
    };
    let options = msl2wgsl::Options::default();
    let out = run_kernel_resources(
        gpu,
        "t.metal",
        &source,
        &options,
        "gated_sums",
        &dispatch,
        &resources,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<i32> = (0..4)
        .map(|g| {
            (g * 64..(g + 1) * 64)
                .filter(|&i| mask[i] >= 0.5)
                .map(|i| data[i] * 3)
                .sum()
        })
        .collect();
    assert_eq!(i32s(&out.buffers[&1]), want);
}

/// A barrier in a branch on a texel the thread reads at its own
/// coordinate is in non-uniform control flow, as one on the thread's
/// position is.
#[test]
fn a_barrier_in_a_branch_on_a_texel_at_the_thread_is_warned_about() {
    let body = r#"
kernel void k(texture2d<float, access::read> mask [[texture(0)]],
              device float* out [[buffer(0)]],
              uint lid [[thread_position_in_threadgroup]]) {
    threadgroup float t[32];
    t[lid] = float(lid);
    if (mask.read(uint2(lid, 0)).x > 0.5f) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        out[lid] = t[lid ^ 4];
    }
}
"#;
    let library = common::source::translate_body(body);
    let warnings = library.warnings();
    assert!(
        warnings.contains(&location(body, "threadgroup_barrier", 0)),
        "{warnings}"
    );
}

fn i32_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
