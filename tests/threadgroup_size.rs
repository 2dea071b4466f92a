//! The threadgroup size a kernel gets when the caller names none: the
//! default shape, made to respect `[[max_total_threads_per_threadgroup(n)]]`
//! (Metal leaves the size to the host, bounded by that attribute; Tint's MSL
//! writes the WGSL workgroup size's product there).

mod common;

use msl2wgsl::library::Library;
use msl2wgsl::Options;

fn kernel(max: u32) -> String {
    format!(
        "#include <metal_stdlib>\nusing namespace metal;\n\
         [[max_total_threads_per_threadgroup({max})]]\n\
         kernel void k(device uint* out [[buffer(0)]],\n\
                       uint i [[thread_position_in_grid]],\n\
                       uint t [[threads_per_threadgroup]]) {{\n\
           out[i] = i * 10u + t;\n\
         }}\n"
    )
}

#[test]
fn the_default_size_respects_the_maximum() {
    for (max, want) in [(1, [1, 1, 1]), (3, [3, 1, 1]), (1024, [64, 1, 1])] {
        let lib = Library::from_source("k.metal", &kernel(max), &Options::default())
            .unwrap_or_else(|e| panic!("max {max}: {}", e.render()));
        let wgsl = lib.wgsl();
        let size = format!("@workgroup_size({}, {}, {})", want[0], want[1], want[2]);
        assert!(wgsl.contains(&size), "max {max}: no {size} in\n{wgsl}");
    }
}

#[test]
fn an_explicit_size_over_the_maximum_is_a_located_error() {
    let options = Options {
        threadgroup_size: Some([8, 1, 1]),
        ..Options::default()
    };
    let e = Library::from_source("k.metal", &kernel(4), &options).unwrap_err();
    let text = e.render();
    assert!(text.contains("k.metal:3:3"), "{text}");
    assert!(
        text.contains("exceeds `max_total_threads_per_threadgroup(4)`"),
        "{text}"
    );
}

#[cfg(feature = "runner")]
#[test]
fn a_kernel_limited_to_one_thread_runs_with_its_default_size() {
    use common::{gpu, u32s};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;
    let Some(gpu) = gpu() else { return };
    let n = 5u32;
    let buffers: BTreeMap<u32, Vec<u8>> = [(0, vec![0u8; n as usize * 4])].into_iter().collect();
    let out = run_kernel(
        gpu,
        "k.metal",
        &kernel(1),
        &Options::default(),
        "k",
        &Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [1, 1, 1],
        },
        &buffers,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<u32> = (0..n).map(|i| i * 10 + 1).collect();
    assert_eq!(u32s(&out[&0]), want);
}
