//! Reflection: each argument's Metal index, kind, access, activity, Metal
//! layout numbers, and WGSL binding.

use msl2wgsl::reflect::{Access, ArgumentKind, WgslBinding};
use msl2wgsl::{Library, Options};

#[test]
fn params_fixture_reflects_metal_layout_and_bindings() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/params.metal");
    let lib = Library::from_file(path.as_ref(), &Options::default()).unwrap();
    let f = lib.function("apply_params").unwrap();
    assert_eq!(f.workgroup_size, Some([64, 1, 1]));
    let names: Vec<_> = f
        .arguments
        .iter()
        .map(|a| (a.name.as_str(), a.index, a.kind))
        .collect();
    assert_eq!(
        names,
        [
            ("p", 0, ArgumentKind::Buffer),
            ("in", 1, ArgumentKind::Buffer),
            ("out", 2, ArgumentKind::Buffer)
        ]
    );
    let p = &f.arguments[0];
    assert_eq!(p.access, Access::Read);
    assert_eq!(
        p.binding,
        Some(WgslBinding {
            group: 0,
            binding: 0
        })
    );
    let b = p.buffer.as_ref().unwrap();
    // Params: float, float3@16, uint@32, float@36, int2@40 → 48 bytes, 16-aligned.
    assert_eq!(
        (b.data_size, b.alignment, b.data_type.as_str(), b.is_pointer),
        (48, 16, "Params", false)
    );
    let out = f.arguments[2].buffer.as_ref().unwrap();
    assert_eq!(
        (out.data_size, out.alignment, out.is_pointer),
        (32, 16, true)
    );
    assert_eq!(f.arguments[2].access, Access::ReadWrite);
}

#[test]
fn unused_argument_is_inactive() {
    let src = "kernel void k(device float* used [[buffer(0)]], device float* unused [[buffer(3)]], uint i [[thread_position_in_grid]]) { used[i] = 1.0f; }";
    let lib = Library::from_source("k.metal", src, &Options::default()).unwrap();
    let args = &lib.function("k").unwrap().arguments;
    assert!(args[0].active);
    assert!(!args[1].active);
    assert_eq!(
        args[1].binding,
        Some(WgslBinding {
            group: 0,
            binding: 3
        })
    );
}

#[test]
fn reserved_entry_names_are_reported_as_emitted() {
    // `loop` is a WGSL keyword: naga's writer renames it; reflection says how.
    let src = "kernel void loop(device float* a [[buffer(0)]]) { a[0] = 1.0f; }";
    let lib = Library::from_source("k.metal", src, &Options::default()).unwrap();
    let f = lib.function("loop").unwrap();
    assert_ne!(f.wgsl_entry_point, "loop");
    assert!(
        lib.wgsl().contains(&format!("fn {}(", f.wgsl_entry_point)),
        "{}",
        lib.wgsl()
    );
}

#[test]
fn threadgroup_size_option_and_default_shape() {
    let src = "kernel void k(device uint* a [[buffer(0)]], uint2 p [[thread_position_in_grid]]) { a[p.x] = p.y; }";
    let lib = Library::from_source("k.metal", src, &Options::default()).unwrap();
    assert_eq!(lib.function("k").unwrap().workgroup_size, Some([8, 8, 1]));
    assert!(lib.wgsl().contains("@workgroup_size(8, 8, 1)"));
    let opts = Options {
        threadgroup_size: Some([16, 4, 1]),
        ..Options::default()
    };
    let lib = Library::from_source("k.metal", src, &opts).unwrap();
    assert!(lib.wgsl().contains("@workgroup_size(16, 4, 1)"));
}

#[test]
fn max_total_threads_is_checked() {
    let src = "[[max_total_threads_per_threadgroup(32)]] kernel void k(device uint* a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = i; }";
    let err = Library::from_source("k.metal", src, &Options::default())
        .unwrap_err()
        .render();
    assert!(
        err.starts_with(
            "k.metal:1:3: error: the default threadgroup size 64x1x1 (64 threads) exceeds"
        ),
        "{err}"
    );
    let opts = Options {
        threadgroup_size: Some([32, 1, 1]),
        ..Options::default()
    };
    assert!(Library::from_source("k.metal", src, &opts).is_ok());
}
