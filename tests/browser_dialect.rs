//! What browsers' WGSL compiler (Tint) needs beyond naga's dialect, shown
//! on modules that run: CI's Tint check (`web/tint-check.mjs` over every
//! module the suite emits) accepts them, and the GPU runs them as Metal
//! would.
// Without the runner the GPU tests are left out, and with them some sources.
#![cfg_attr(not(feature = "runner"), allow(dead_code))]

mod common;

/// A `for (;;)` that neither breaks nor returns, as SPIRV-Cross writes
/// `OpLoop`s without a merge exit, in a branch the test never takes; the
/// other branch has a loop that does exit.
const ENDLESS_LOOP: &str = r#"
kernel void endless(device int* data [[buffer(0)]],
                    constant int& mode [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
    int k = data[i];
    if (mode == 7) {
        for (;;) {
            k++;
            if (k > 10) { k += 2; } else { k += 3; continue; }
            data[i] = k;
        }
    }
    for (int j = 0; j < 4; j++) {
        k = k * 2 + j;
    }
    data[i] = k;
}
"#;

#[test]
fn a_loop_without_an_exit_gets_an_unreachable_break() {
    let library = common::source::translate_body(ENDLESS_LOOP);
    let wgsl = library.wgsl();
    assert!(wgsl.contains("if false {"), "{wgsl}");
}

#[test]
#[cfg(feature = "runner")]
fn a_module_with_a_loop_without_an_exit_runs_its_other_paths() {
    let input: Vec<i32> = (0..16).map(|v| v * 3 - 20).collect();
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
    let Some(out) = common::source::run_body(
        ENDLESS_LOOP,
        "endless",
        (16, 8),
        vec![(0, bytes), (1, 0i32.to_le_bytes().to_vec())],
    ) else {
        return;
    };
    let got: Vec<i32> = out[&0]
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<i32> = input
        .iter()
        .map(|&v| (0..4).fold(v, |k, j| k.wrapping_mul(2).wrapping_add(j)))
        .collect();
    assert_eq!(got, want);
}
