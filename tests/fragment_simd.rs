//! SIMD-group functions and attributes in fragment functions, whose SIMD
//! group is the adapter's subgroup: `[[thread_index_in_simdgroup]]`,
//! `[[threads_per_simdgroup]]`, and functions that need the lane
//! (`simd_shuffle_up` keeps the value of lanes below the delta,
//! `simd_is_first`), drawn and checked pixel by pixel.
#![cfg(feature = "runner")]

mod common;

use msl2wgsl::runner::{render_library, RenderResources};
use msl2wgsl::{Library, Options, Target};

const LANES: &str = "#include <metal_stdlib>
using namespace metal;
struct V { float4 position [[position]]; };
vertex V cover(uint vid [[vertex_id]]) {
  float2 corner = float2(vid == 1 ? 3.0 : -1.0, vid == 2 ? 3.0 : -1.0);
  V v; v.position = float4(corner, 0.0, 1.0); return v;
}
float first_flag() { return simd_is_first() ? 1.0 : 0.0; }
fragment float4 lanes(V in [[stage_in]], uint lane [[thread_index_in_simdgroup]],
                      ushort width [[threads_per_simdgroup]]) {
  float up = simd_shuffle_up(float(lane), 2);
  return float4(float(lane) / 255.0, up / 255.0, float(width) / 255.0, first_flag());
}
";

#[test]
fn fragment_functions_see_their_subgroup_lane() {
    let Some(gpu) = common::gpu() else { return };
    // llvmpipe's GL backend has no subgroups.
    if !gpu.features().contains(msl2wgsl::wgpu::Features::SUBGROUP) {
        common::skip::missing_feature(gpu, "subgroup");
        return;
    }
    let options = Options {
        target: Target::Wgpu,
        ..Default::default()
    };
    let library = Library::from_source("lanes.metal", LANES, &options).unwrap();
    let resources = RenderResources::new(16, 16, 3);
    let images = render_library(gpu, &library, "cover", "lanes", &resources)
        .unwrap_or_else(|e| panic!("{e}"));
    let image = &images[0];
    let mut firsts = 0;
    let mut width_seen = 0;
    for px in image.data.chunks(4) {
        let (lane, up, width, first) = (px[0], px[1], px[2], px[3]);
        assert!(lane < width, "lane {lane} of {width}");
        // Lanes below the delta keep their own value (Metal's rule);
        // the others read the lane two below.
        let want = if lane >= 2 { lane - 2 } else { lane };
        assert_eq!(up, want, "lane {lane}: shuffled {up}");
        // `simd_is_first` reads the lane in a helper: the first active lane.
        assert!(first == 0 || first == 255, "{px:?}");
        firsts += usize::from(first == 255);
        width_seen = width;
    }
    assert!(width_seen >= 4, "subgroup width {width_seen}");
    // Every subgroup has exactly one first lane: at least 256 / width of
    // them, and far fewer than the pixels (lane 0 read everywhere would
    // make every pixel a first lane).
    assert!(
        firsts >= 256 / usize::from(width_seen),
        "{firsts} first lanes"
    );
    assert!(firsts <= 128, "{firsts} first lanes of 256 pixels");
}
