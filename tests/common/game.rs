//! Xcode's "Game" template (`fixtures/render/game`, written from what the
//! template declares): positions (`float3`) in vertex buffer 0 and texture
//! coordinates (`float2`) in vertex buffer 1, as its vertex descriptor lays
//! them out, the uniforms in buffer 2; a quad, scaled to half the target
//! by the projection matrix, with its texture mirrored left to right by
//! the texture coordinates.

use super::f32_bytes;
use msl2wgsl::runner::{TextureData, VertexDescriptor};
use msl2wgsl::Library;
use std::collections::BTreeMap;

/// Width and height of the target in pixels.
pub const SIZE: u32 = 16;
/// Width and height of the colour map in texels.
pub const TEXELS: u32 = 4;

/// Two triangles of the quad [-1, 1]², as positions and texture
/// coordinates (u mirrored: 1 at x = -1; v down: 0 at y = 1).
pub fn quad() -> (Vec<u8>, Vec<u8>) {
    let corners = [
        [-1.0f32, -1.0],
        [1.0, -1.0],
        [1.0, 1.0],
        [-1.0, -1.0],
        [1.0, 1.0],
        [-1.0, 1.0],
    ];
    let positions: Vec<f32> = corners.iter().flat_map(|p| [p[0], p[1], 0.0]).collect();
    let uvs: Vec<f32> = corners
        .iter()
        .flat_map(|p| [(1.0 - p[0]) / 2.0, (1.0 - p[1]) / 2.0])
        .collect();
    (f32_bytes(&positions), f32_bytes(&uvs))
}

/// `Uniforms`: a projection that halves x and y, an identity
/// model-view (column-major `float4x4`s).
pub fn uniforms() -> Vec<u8> {
    let diagonal = |d: [f32; 4]| -> Vec<f32> {
        (0..16)
            .map(|k| if k % 5 == 0 { d[k / 5] } else { 0.0 })
            .collect()
    };
    let mut m = diagonal([0.5, 0.5, 1.0, 1.0]);
    m.extend(diagonal([1.0; 4]));
    f32_bytes(&m)
}

/// A colour map whose red grows with the column and green with the
/// row: linear in each, so linear filtering gives the same ramps.
pub fn colour_map() -> TextureData {
    let texels = (0..TEXELS * TEXELS)
        .flat_map(|k| {
            [
                (40 * (k % TEXELS) + 20) as u8,
                (40 * (k / TEXELS) + 20) as u8,
                128,
                255,
            ]
        })
        .collect();
    TextureData::new_2d(wgpu::TextureFormat::Rgba8Unorm, TEXELS, TEXELS, texels)
}

/// The CPU's pixel (x, y): inside the half-size quad, the bilinear
/// sample of the colour map at the interpolated, mirrored coordinate;
/// outside, the clear colour.
pub fn expected(x: u32, y: u32) -> [u8; 4] {
    let ndc_x = (x as f32 + 0.5) / SIZE as f32 * 2.0 - 1.0;
    let ndc_y = 1.0 - (y as f32 + 0.5) / SIZE as f32 * 2.0;
    if ndc_x.abs() > 0.5 || ndc_y.abs() > 0.5 {
        return [0; 4];
    }
    // Undo the projection, then the texture coordinates' mapping.
    let (u, v) = ((1.0 - 2.0 * ndc_x) / 2.0, (1.0 - 2.0 * ndc_y) / 2.0);
    // Linear filtering of a ramp, clamped to the edge texels' centres.
    let ramp = |c: f32| 40.0 * (c * TEXELS as f32 - 0.5).clamp(0.0, TEXELS as f32 - 1.0) + 20.0;
    [ramp(u).round() as u8, ramp(v).round() as u8, 128, 255]
}

/// Compares an image with [`expected`] (two 8-bit steps: filtering
/// weights and `half` rounding).
pub fn check(data: &[u8], what: &str) {
    let mut inside = 0;
    for y in 0..SIZE {
        for x in 0..SIZE {
            let want = expected(x, y);
            inside += usize::from(want[3] != 0);
            let k = ((y * SIZE + x) * 4) as usize;
            let got = &data[k..k + 4];
            assert!(
                (0..4).all(|c| got[c].abs_diff(want[c]) <= 2),
                "{what}: pixel ({x}, {y}) is {got:?}, want {want:?}"
            );
        }
    }
    assert_eq!(inside, 64, "the quad covers the middle 8x8 pixels");
}

/// Attribute 1 (texture coordinates) in buffer 1, the rest in 0.
pub fn descriptor(library: &Library) -> VertexDescriptor {
    let vertex = library.function("vertexShader").unwrap();
    VertexDescriptor::packed(vertex, &BTreeMap::from([(1, 1)])).unwrap()
}
