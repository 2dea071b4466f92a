//! Reduced reproducers of defects of wgpu's GL backend (naga's GLSL writer,
//! wgpu-hal's GLES code, Mesa's llvmpipe): hand-written WGSL, no
//! translator. On GL each test asserts the *wrong* result that the defect
//! gives today, so it fails loudly once the defect is fixed upstream (then
//! drop the workaround or the skip it names, and this test); on every other
//! backend it asserts WGSL's result. TESTING.md ("Backends") has the text
//! to file upstream for each.
#![cfg(feature = "runner")]

mod common;

use common::wgsl::{
    compute_pipeline_error, dispatch, render_rgba8, render_rgba8_blended, run_words, Bound,
    ReadBack,
};
use msl2wgsl::runner::Gpu;

fn on_gl(gpu: &Gpu) -> bool {
    gpu.backend() == wgpu::Backend::Gl
}

/// naga's GLSL writer prints WGSL's integer `/` and `%` as GLSL's, which
/// GLSL leaves undefined for negative operands (`%`) and zero divisors:
/// llvmpipe computes `-47 % 9` as 2 (WGSL: -2), `7 / 0` as 0 (WGSL: 7),
/// `7 % 0` as -1 (WGSL: 0), `7u / 0u` as 0xFFFFFFFF (WGSL: 7), and
/// `INT_MIN % -1` as INT_MIN (WGSL: 0). The translator avoids all of them
/// (`src/lower/metal/signed_remainder.rs`).
#[test]
fn integer_division_follows_glsl_not_wgsl() {
    let Some(gpu) = common::gpu() else { return };
    let wgsl = r#"
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x * 6u;
    if i >= arrayLength(&data) { return; }
    let a = bitcast<i32>(data[i]);
    let b = bitcast<i32>(data[i + 1u]);
    data[i + 2u] = bitcast<u32>(a / b);
    data[i + 3u] = bitcast<u32>(a % b);
    data[i + 4u] = data[i] / data[i + 1u];
    data[i + 5u] = data[i] % data[i + 1u];
}
"#;
    let pairs = [(-47, 9), (47, -9), (7, 0), (i32::MIN, -1), (5, 3)];
    let mut data = vec![0u32; pairs.len() * 6];
    for (k, &(a, b)) in pairs.iter().enumerate() {
        data[k * 6] = a as u32;
        data[k * 6 + 1] = b as u32;
    }
    let out = run_words(gpu, wgsl, &data, pairs.len() as u32);
    let wgsl_div = |a: i32, b: i32| if b == 0 { a } else { a.wrapping_div(b) };
    let wgsl_rem = |a: i32, b: i32| if b == 0 { 0 } else { a.wrapping_rem(b) };
    let mut wrong = 0;
    for (k, &(a, b)) in pairs.iter().enumerate() {
        let got = &out[k * 6 + 2..k * 6 + 6];
        let (ua, ub) = (a as u32, b as u32);
        let want = [
            wgsl_div(a, b) as u32,
            wgsl_rem(a, b) as u32,
            ua.checked_div(ub).unwrap_or(ua),
            ua.checked_rem(ub).unwrap_or(0),
        ];
        eprintln!("{a} {b}: got {got:?}, WGSL {want:?}");
        wrong += got.iter().zip(want).filter(|(g, w)| **g != *w).count();
    }
    if on_gl(gpu) {
        // -47 % 9, 47 % -9, 7 / 0, 7 % 0, 7u / 0u, 7u % 0u, MIN % -1.
        assert_eq!(
            wrong, 7,
            "naga's GLSL integer division changed: fixed upstream?"
        );
    } else {
        assert_eq!(wrong, 0);
    }
}

/// With image-load bounds checks (wgpu's default), naga's GLSL writer
/// compares the coordinate with `textureSize(image, level)` and passes a
/// `u32` level as it is: `textureSize(sampler2D, uint)`, which has no GLSL
/// overload, so the pipeline fails to compile. (Its `textureDimensions`
/// path converts the level to `int`; this one does not.)
#[test]
fn texture_load_with_a_u32_level() {
    let Some(gpu) = common::gpu() else { return };
    let wgsl = r#"
@group(0) @binding(0) var t: texture_2d<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
@compute @workgroup_size(1)
fn main() {
    out[0] = textureLoad(t, vec2<u32>(0u, 0u), 0u);
}
"#;
    let error = compute_pipeline_error(gpu, wgsl);
    if on_gl(gpu) {
        let error = error.expect("naga's GLSL compiles now: fixed upstream?");
        assert!(error.contains("textureSize"), "{error}");
    } else {
        assert_eq!(error, None);
    }
    // The same load with an `i32` level compiles everywhere.
    assert_eq!(
        compute_pipeline_error(gpu, &wgsl.replace("0u);", "0i);")),
        None
    );
}

/// A depth texture sampled without comparison (`textureSampleLevel` of a
/// `texture_depth_2d`): naga's GLSL writer declares it `sampler2DShadow`
/// and calls `textureLod(sampler2DShadow, vec2, uint)`, which has no GLSL
/// overload (a shadow sampler takes the reference in the coordinate).
#[test]
fn depth_texture_sampled_without_comparison() {
    let Some(gpu) = common::gpu() else { return };
    let wgsl = r#"
@group(0) @binding(0) var d: texture_depth_2d;
@group(0) @binding(1) var s: sampler;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(1)
fn main() {
    out[0] = textureSampleLevel(d, s, vec2<f32>(0.5, 0.5), 0u);
}
"#;
    let error = compute_pipeline_error(gpu, wgsl);
    if on_gl(gpu) {
        let error = error.expect("naga's GLSL compiles now: fixed upstream?");
        assert!(error.contains("textureLod"), "{error}");
    } else {
        assert_eq!(error, None);
    }
}

/// WGSL's `@interpolate(flat)` is `flat, first`: the first vertex of the
/// primitive gives the value. wgpu's GL backend writes GLSL `flat`, which
/// takes the provoking vertex, the *last* one by default in GL, and naga's
/// GLSL writer refuses an explicit `first`. Every pixel here should be
/// the first vertex's 0.25 (64 of 255); GL gives the last vertex's 0.75.
#[test]
fn flat_varyings_take_the_last_vertex() {
    let Some(gpu) = common::gpu() else { return };
    let wgsl = r#"
struct V { @builtin(position) p: vec4<f32>, @location(0) @interpolate(flat) c: f32 }
@vertex fn vs(@builtin(vertex_index) v: u32) -> V {
    var tri = array(vec2(-1.0, -1.0), vec2(3.0, -1.0), vec2(-1.0, 3.0));
    return V(vec4(tri[v], 0.0, 1.0), 0.25 * f32(v + 1u));
}
@fragment fn fs(in: V) -> @location(0) vec4<f32> { return vec4(in.c, 0.0, 0.0, 1.0); }
"#;
    let image = render_rgba8(gpu, wgsl, 3, 1, 64, ReadBack::Later).remove(0);
    let reds: Vec<u8> = image.chunks_exact(4).map(|p| p[0]).collect();
    let want = if on_gl(gpu) { 191 } else { 64 };
    assert!(reds.iter().all(|&r| r == want), "red {reds:?}, want {want}");
}

/// After a draw with dual-source blending (`src0 × src1 + dst × (1 −
/// src1)`), wgpu's GL backend leaves that blend state behind on the
/// context: a later pipeline without blending that writes two colour
/// attachments gets zeros (here the first's red should be 255). Without
/// the dual-source draw before it, the same draw is right
/// (`render::two_colour_attachments` failed on GL only after
/// `render::dual_source_blending_with_index_1`, also from another thread:
/// every test of a binary shares the GL context).
#[test]
fn dual_source_blending_leaks_into_the_next_pipeline() {
    let Some(gpu) = common::gpu() else { return };
    if !gpu
        .features()
        .contains(wgpu::Features::DUAL_SOURCE_BLENDING)
    {
        common::skip::missing_feature(gpu, "dual-source-blending");
        return;
    }
    const TRIANGLE: &str = r#"
@vertex fn vs(@builtin(vertex_index) v: u32) -> @builtin(position) vec4<f32> {
    var tri = array(vec2(-1.0, -1.0), vec2(3.0, -1.0), vec2(-1.0, 3.0));
    return vec4(tri[v], 0.0, 1.0);
}
"#;
    let dual = format!(
        "enable dual_source_blending;\n{TRIANGLE}\n\
         struct B {{ @location(0) @blend_src(0) a: vec4<f32>, @location(0) @blend_src(1) b: vec4<f32> }}\n\
         @fragment fn fs() -> B {{ return B(vec4(1.0), vec4(0.5)); }}\n"
    );
    let blend = wgpu::BlendComponent {
        src_factor: wgpu::BlendFactor::Src1,
        dst_factor: wgpu::BlendFactor::OneMinusSrc1,
        operation: wgpu::BlendOperation::Add,
    };
    let blend = Some(wgpu::BlendState {
        color: blend,
        alpha: blend,
    });
    render_rgba8_blended(gpu, &dual, 3, 1, 64, ReadBack::Later, blend);
    let two = format!(
        "{TRIANGLE}\nstruct Out {{ @location(0) a: vec4<f32>, @location(1) b: vec4<f32> }}\n\
         @fragment fn fs() -> Out {{ return Out(vec4(1.0, 0.0, 0.0, 1.0), vec4(0.0, 1.0, 0.0, 1.0)); }}\n"
    );
    let images = render_rgba8(gpu, &two, 3, 2, 64, ReadBack::SameEncoder);
    let (first, second) = (&images[0][..4], &images[1][..4]);
    match on_gl(gpu) {
        true => assert_eq!(
            first[0], 0,
            "GL resets the blend state now: fixed? {first:?}"
        ),
        false => assert_eq!(
            (first, second),
            (&[255, 0, 0, 255][..], &[0, 255, 0, 255][..])
        ),
    }
}

/// naga's GLSL writer declares every WGSL uniform `layout(std140)` and
/// prints its types as they are, but std140 gives a matrix of 2-row
/// columns (`mat2x2`, `mat3x2`, `mat4x2`) a 16-byte column stride where
/// WGSL's uniform layout has 8: `var<uniform> m: array<mat2x2<f32>, 2>`
/// becomes `uniform { mat2x2 m[2]; }`, whose column `j` of matrix `i` is
/// read at byte `32 i + 16 j` instead of `16 i + 8 j`. In storage
/// (std430) the strides agree. The translator keeps such `constant`
/// buffers in storage (`src/layout/uniform.rs`, `NotUniform::TwoRowMatrix`).
#[test]
fn uniform_matrices_of_two_row_columns_take_std140_strides() {
    let Some(gpu) = common::gpu() else { return };
    let wgsl = r#"
@group(0) @binding(0) var<uniform> m: array<mat2x2<f32>, 2>;
@group(0) @binding(1) var<storage, read_write> out: array<f32, 8>;
@compute @workgroup_size(1)
fn main() {
    for (var i = 0u; i < 8u; i++) { out[i] = m[i / 4u][(i / 2u) % 2u][i % 2u]; }
}
"#;
    // 64 bytes, so that std140's reading stays inside the buffer.
    let values: Vec<f32> = (0..16).map(|v| v as f32).collect();
    let out = run_with_uniform(gpu, wgsl, &common::f32_bytes(&values), 8);
    // WGSL: the matrices are 16 bytes, each column 8.
    let wgsl_values: Vec<f32> = (0..8).map(|v| v as f32).collect();
    if on_gl(gpu) {
        let std140: Vec<f32> = [0, 1, 4, 5, 8, 9, 12, 13].map(|v| v as f32).to_vec();
        assert_eq!(out, std140, "GL reads WGSL's strides now: fixed upstream?");
    } else {
        assert_eq!(out, wgsl_values);
    }
}

/// Runs `@compute fn main` of `wgsl` once with `uniform` at
/// `@group(0) @binding(0)` (a `var<uniform>`) and a zeroed storage buffer
/// of `out_len` `f32`s at `@binding(1)`; returns that buffer.
fn run_with_uniform(gpu: &Gpu, wgsl: &str, uniform: &[u8], out_len: usize) -> Vec<f32> {
    let zeros = vec![0; out_len * 4];
    let buffers = [
        Bound {
            binding: 0,
            contents: uniform,
            usage: wgpu::BufferUsages::UNIFORM,
        },
        Bound {
            binding: 1,
            contents: &zeros,
            usage: wgpu::BufferUsages::STORAGE,
        },
    ];
    let out = dispatch(gpu, wgsl, "main", &[], &buffers, [1, 1, 1]);
    common::f32s(&out[1])
}

/// A loop that `continue`s or `return`s, in a function that updates a
/// struct through a `ptr<function, S>` parameter (the translator's tail
/// calls as loops, `src/lower/cxx/tail_calls.rs`): on llvmpipe's GL every
/// thread takes the `if` (`pos >= limit`, false for `pos` 0 and 3 with
/// `limit` 5) and ends with `pos` and `at` 0, as if the struct's updates
/// before the `if` were lost. Vulkan (lavapipe) agrees with WGSL.
/// `tests/mlx_forms_3.rs` skips its tail-call GPU test on GL for it.
#[test]
fn loop_updating_a_struct_through_a_pointer_parameter() {
    let Some(gpu) = common::gpu() else { return };
    let wgsl = r#"
struct Walker { pos: i32, at: i32, wraps: i32 }
@group(0) @binding(0) var<storage, read_write> data: array<i32>;
fn advance(w: ptr<function, Walker>, n: i32) {
    var step: i32 = n;
    loop {
        (*w).pos = (*w).pos + step;
        (*w).at = (*w).at + step * 2;
        let limit = data[0];
        if ((*w).pos >= limit) {
            let over = (*w).pos - limit;
            (*w).pos = 0;
            (*w).at = 0;
            (*w).wraps = (*w).wraps + 1;
            if (over > 0) {
                step = over;
                continue;
            }
        }
        return;
    }
}
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    var w = Walker(0, 0, 0);
    advance(&w, i32(id.x) * 3);
    let o = 1u + id.x * 3u;
    data[o] = w.pos;
    data[o + 1u] = w.at;
    data[o + 2u] = w.wraps;
}
"#;
    let mut data = vec![0u32; 1 + 4 * 3];
    data[0] = 5;
    let out = run_words(gpu, wgsl, &data, 4);
    let got: Vec<[u32; 3]> = (0..4)
        .map(|t| [out[1 + t * 3], out[2 + t * 3], out[3 + t * 3]])
        .collect();
    // WGSL: n = 0, 3, 6, 9 against a limit of 5.
    let wgsl_result = vec![[0, 0, 0], [3, 6, 0], [1, 2, 1], [4, 8, 1]];
    eprintln!("got {got:?}, WGSL {wgsl_result:?}");
    if on_gl(gpu) && got != wgsl_result {
        // Every thread wrapped, and none kept its position.
        assert_eq!(
            got,
            vec![[0, 0, 1], [0, 0, 1], [0, 0, 2], [0, 0, 2]],
            "GL's loop through a struct pointer changed: fixed upstream?"
        );
    } else {
        assert_eq!(got, wgsl_result);
    }
}
