//! Metal's points on WebGPU: a vertex function writing `[[point_size]]`
//! draws `point_size`-pixel squares through its point-sprite entry point,
//! and `[[point_coord]]` reaches the fragment function with Metal's
//! orientation. Renders are checked against a CPU rasteriser written here:
//! a pixel is covered when its centre is inside the square, and its
//! `[[point_coord]]` is the centre's position in the square, (0, 0) at the
//! top-left. Pixels whose centre lies within 0.01 pixel of a square's edge
//! are not compared (the rasteriser's tie-breaking rule decides them, and
//! Metal's and WebGPU's need not agree), nor those within 0.02 of the
//! disc's rim in point coordinates (interpolation rounding).
#![cfg(feature = "runner")]

mod common;

use common::{f32_bytes, gpu};
use msl2wgsl::runner::{render_library, Primitive, RenderResources, RunError, TextureData};
use msl2wgsl::{Library, Options, Target};

/// Particles in a buffer indexed by `[[vertex_id]]`, moved right by 0.75
/// (clip space) per `[[instance_id]]`; a disc fragment function and one
/// that shows the point coordinates, read as a `[[stage_in]]` member.
const PARTICLES: &str = r#"
#include <metal_stdlib>
using namespace metal;

struct Particle {
    float2 position;
    float size;
    float w;
    float4 color;
};

struct PointOut {
    float4 position [[position]];
    float size [[point_size]];
    float4 color;
};

vertex PointOut particle_vertex(const device Particle* particles [[buffer(0)]],
                                uint vid [[vertex_id]],
                                uint iid [[instance_id]]) {
    Particle p = particles[vid];
    PointOut out;
    float2 at = p.position + float2(0.75 * float(iid), 0.0);
    out.position = float4(at * p.w, 0.0, p.w);
    out.size = p.size;
    out.color = p.color;
    return out;
}

fragment float4 disc_fragment(PointOut in [[stage_in]], float2 pc [[point_coord]]) {
    if (distance(pc, float2(0.5)) > 0.5) {
        discard_fragment();
    }
    return in.color;
}

struct SpriteIn {
    float4 position [[position]];
    float2 coord [[point_coord]];
};

fragment float4 coord_fragment(SpriteIn in [[stage_in]]) {
    return float4(in.coord, 0.0, 1.0);
}

fragment float4 color_fragment(PointOut in [[stage_in]]) {
    return in.color;
}
"#;

const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;

fn library() -> Library {
    let options = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    Library::from_source("particles.metal", PARTICLES, &options)
        .unwrap_or_else(|f| panic!("{}", f.render()))
}

/// A particle placed by its centre in pixels (of the first instance).
struct Point {
    centre: [f32; 2],
    size: f32,
    w: f32,
    color: [f32; 4],
}

impl Point {
    /// The `Particle` bytes: clip-space xy before the multiply by w.
    fn bytes(&self) -> Vec<u8> {
        let x = self.centre[0] / WIDTH as f32 * 2.0 - 1.0;
        let y = 1.0 - self.centre[1] / HEIGHT as f32 * 2.0;
        let mut v = vec![x, y, self.size, self.w];
        v.extend(self.color);
        f32_bytes(&v)
    }

    /// The square of instance `instance`: its centre in pixels and its
    /// side (Metal clamps the size to [1, 511]).
    fn square(&self, instance: u32) -> ([f32; 2], f32) {
        let shift = 0.75 * instance as f32 * WIDTH as f32 / 2.0;
        let side = self.size.clamp(1.0, 511.0);
        ([self.centre[0] + shift, self.centre[1]], side)
    }
}

/// What the CPU rasteriser says of one pixel and one square.
enum Cover {
    Outside,
    /// Too close to an edge to decide.
    Edge,
    /// Covered, at these point coordinates.
    Inside([f32; 2]),
}

fn cover(([cx, cy], side): ([f32; 2], f32), x: u32, y: u32) -> Cover {
    let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
    let (left, top) = (cx - side / 2.0, cy - side / 2.0);
    let u = (px - left) / side;
    let v = (py - top) / side;
    let near = |t: f32| (t * side).abs() < 0.01 || ((t - 1.0) * side).abs() < 0.01;
    if near(u) && (-0.01..=1.01).contains(&v) || near(v) && (-0.01..=1.01).contains(&u) {
        return Cover::Edge;
    }
    match (0.0..1.0).contains(&u) && (0.0..1.0).contains(&v) {
        true => Cover::Inside([u, v]),
        false => Cover::Outside,
    }
}

fn pixel(img: &TextureData, x: u32, y: u32) -> [u8; 4] {
    let k = ((y * img.width + x) * 4) as usize;
    img.data[k..k + 4].try_into().unwrap()
}

fn q(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

fn close(got: [u8; 4], want: [u8; 4]) -> bool {
    (0..4).all(|c| got[c].abs_diff(want[c]) <= 1)
}

/// Draws `points` × `instances` with `fragment` into a cleared 64×48 target.
fn draw(points: &[Point], instances: u32, fragment: &str) -> Result<TextureData, RunError> {
    let mut r = RenderResources::new(WIDTH, HEIGHT, points.len() as u32);
    r.primitive = Primitive::Point;
    r.instance_count = instances;
    r.vertex_buffers
        .insert(0, points.iter().flat_map(Point::bytes).collect());
    let images = render_library(
        gpu().expect("checked by the caller"),
        &library(),
        "particle_vertex",
        fragment,
        &r,
    )?;
    Ok(images.into_iter().next().unwrap())
}

/// Compares every decidable pixel with `expected` (None: the clear
/// colour) and returns how many covered pixels were compared.
fn compare(
    img: &TextureData,
    what: &str,
    mut expected: impl FnMut(u32, u32) -> Option<Option<[u8; 4]>>,
) -> usize {
    let mut covered = 0;
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            let Some(want) = expected(x, y) else { continue };
            covered += usize::from(want.is_some());
            let want = want.unwrap_or([0; 4]);
            let got = pixel(img, x, y);
            assert!(
                close(got, want),
                "{what}: pixel ({x}, {y}) is {got:?}, want {want:?}"
            );
        }
    }
    covered
}

/// Discs of different sizes and colours, one with w = 2 and one with
/// w = 0.5 (the square is sized after the perspective divide), one of
/// size 0.25 (clamped to one pixel), on a target that is not square (the
/// viewport's axes are not interchangeable).
#[test]
fn discs_of_different_sizes_and_colours() {
    if gpu().is_none() {
        return;
    }
    let points = [
        Point {
            centre: [16.2, 14.3],
            size: 15.0,
            w: 1.0,
            color: [1.0, 0.0, 0.0, 1.0],
        },
        Point {
            centre: [44.3, 12.1],
            size: 10.4,
            w: 2.0,
            color: [0.0, 1.0, 0.0, 1.0],
        },
        Point {
            centre: [20.6, 36.2],
            size: 0.25,
            w: 1.0,
            color: [0.0, 0.0, 1.0, 1.0],
        },
        Point {
            centre: [47.4, 33.9],
            size: 20.7,
            w: 0.5,
            color: [1.0, 1.0, 0.0, 1.0],
        },
    ];
    let img = draw(&points, 1, "disc_fragment").unwrap();
    let covered = compare(&img, "discs", |x, y| {
        let mut want = Some(None);
        for p in &points {
            match cover(p.square(0), x, y) {
                Cover::Outside => {}
                Cover::Edge => return None,
                Cover::Inside(pc) => {
                    let r = ((pc[0] - 0.5).powi(2) + (pc[1] - 0.5).powi(2)).sqrt();
                    if (r - 0.5).abs() < 0.02 {
                        return None;
                    }
                    if r <= 0.5 {
                        want = Some(Some(p.color.map(q)));
                    }
                }
            }
        }
        want
    });
    // The discs' areas: 15² π/4 + 10.4² π/4 + 1 + 20.7² π/4, less the rims.
    assert!(covered > 400, "only {covered} covered pixels were compared");
    // The one-pixel point (size 0.25, clamped to 1).
    assert!(close(pixel(&img, 20, 36), [0, 0, 255, 255]));
}

/// `[[point_coord]]` (as a `[[stage_in]]` member) is (0, 0) at the
/// top-left of each square and grows right and down; `[[instance_id]]`
/// is the instance's, `[[vertex_id]]` the point's.
#[test]
fn point_coord_has_metals_orientation() {
    if gpu().is_none() {
        return;
    }
    let img = draw(&COORD_POINTS, 2, "coord_fragment").unwrap();
    check_coords(&img, "render_library");
}

/// Two points of two instances each, drawn by `coord_fragment`.
const COORD_POINTS: [Point; 2] = [
    Point {
        centre: [12.3, 10.2],
        size: 17.0,
        w: 1.0,
        color: [0.0; 4],
    },
    Point {
        centre: [30.1, 33.4],
        size: 12.2,
        w: 3.0,
        color: [0.0; 4],
    },
];

/// `img` shows the point coordinates of [`COORD_POINTS`] × 2 instances.
fn check_coords(img: &TextureData, what: &str) {
    let covered = compare(img, what, |x, y| {
        let mut want = Some(None);
        for instance in 0..2 {
            for p in &COORD_POINTS {
                match cover(p.square(instance), x, y) {
                    Cover::Outside => {}
                    Cover::Edge => return None,
                    Cover::Inside([u, v]) => want = Some(Some([q(u), q(v), 0, 255])),
                }
            }
        }
        want
    });
    assert!(
        covered > 2 * (16 * 16 + 11 * 11),
        "{what}: only {covered} covered pixels were compared"
    );
    // The top-left corner of the first square is dark, its bottom-left green.
    assert!(
        pixel(img, 5, 3)[1] < 40 && pixel(img, 5, 17)[1] > 215,
        "{what}"
    );
}

/// The host API: a `RenderPipeline` whose fragment function reads
/// `[[point_coord]]` draws points (`RenderCommand::draw` with
/// `Primitive::Point`, the viewport the target's size), not triangles.
#[test]
fn render_pipeline_draws_points() {
    use msl2wgsl::runner::RenderPipeline;
    use wgpu::util::DeviceExt;
    let Some(gpu) = gpu() else { return };
    let lib = library();
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let pipeline =
        RenderPipeline::new(gpu, &lib, "particle_vertex", "coord_fragment", &[format]).unwrap();
    let bytes: Vec<u8> = COORD_POINTS.iter().flat_map(Point::bytes).collect();
    let particles = gpu
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: &bytes,
            usage: wgpu::BufferUsages::STORAGE,
        });
    let target = gpu.device().create_texture(&wgpu::TextureDescriptor {
        label: None,
        size: wgpu::Extent3d {
            width: WIDTH,
            height: HEIGHT,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    let mut command = pipeline.encoder();
    command.set_vertex_buffer(0, &particles, 0).unwrap();
    let clear = Some(wgpu::Color::TRANSPARENT);
    let e = command
        .draw_primitives(gpu, &[&view], clear, 2, 2)
        .unwrap_err();
    assert!(e.to_string().contains("reads [[point_coord]]"), "{e}");
    command
        .draw(gpu, Primitive::Point, &[&view], clear, 2, 2)
        .unwrap();
    check_coords(&gpu.read_texture(&target).unwrap(), "RenderCommand");
}

/// Points need a vertex function writing `[[point_size]]`; a fragment
/// function reading `[[point_coord]]` draws points only.
#[test]
fn drawing_errors_name_the_primitive() {
    let Some(gpu) = gpu() else { return };
    let lib = library();
    let mut r = RenderResources::new(8, 8, 1);
    r.vertex_buffers.insert(0, vec![0; 32]);
    let e = render_library(gpu, &lib, "particle_vertex", "disc_fragment", &r).unwrap_err();
    assert!(e.to_string().contains("reads [[point_coord]]"), "{e}");
    // Triangles with a fragment function that reads no point coordinates
    // use the plain entry point (the point size is unused).
    render_library(gpu, &lib, "particle_vertex", "color_fragment", &r).unwrap();
    let plain = Library::from_source(
        "plain.metal",
        "vertex float4 v(uint id [[vertex_id]]) { return float4(0, 0, 0, 1); }\n\
         fragment float4 f(float2 pc [[point_coord]]) { return float4(pc, 0, 1); }\n",
        &Options {
            target: Target::Wgpu,
            ..Options::default()
        },
    )
    .unwrap();
    r.primitive = Primitive::Point;
    let e = render_library(gpu, &plain, "v", "f", &r).unwrap_err();
    assert!(e.to_string().contains("writes no [[point_size]]"), "{e}");
}

/// Reflection says how to draw points.
#[test]
fn reflection_describes_the_point_sprite_entry_point() {
    let lib = library();
    let v = lib.function("particle_vertex").unwrap();
    let sprite = v.point_sprite.as_ref().expect("a point-sprite entry point");
    assert_eq!(sprite.entry_point, "particle_vertex_point_sprite");
    assert_eq!(sprite.vertices_per_point, 6);
    assert_eq!(
        (sprite.primitive.as_str(), sprite.topology.as_str()),
        ("point", "triangle-list")
    );
    assert_eq!(
        (
            sprite.viewport_binding.group,
            sprite.viewport_binding.binding
        ),
        (0, 192)
    );
    assert_eq!(sprite.max_point_size, 511.0);
    let location = sprite
        .point_coord_location
        .expect("fragment functions read it");
    let f = lib.function("coord_fragment").unwrap();
    let varying = f
        .varyings
        .iter()
        .find(|v| v.name == "[[point_coord]]")
        .unwrap();
    assert_eq!(varying.location, location);
    assert!(lib.wgsl().contains("fn particle_vertex_point_sprite("));
    let json = serde_json::to_string(v).unwrap();
    assert!(
        json.contains(
            r#""pointSprite":{"entryPoint":"particle_vertex_point_sprite","primitive":"point","topology":"triangle-list","verticesPerPoint":6,"#
        ),
        "{json}"
    );
    assert!(lib
        .function("disc_fragment")
        .unwrap()
        .point_sprite
        .is_none());
    // `disc_fragment` reads the vertex output struct, `[[point_size]]` and all.
    let warnings = lib.warnings();
    assert!(
        warnings.contains("warning: `[[point_size]]` is not a fragment input: `size` reads as 0"),
        "{warnings}"
    );
}

/// With a `[[stage_in]]` the attributes would be read per corner: no
/// point-sprite entry point, and a warning at the attribute.
#[test]
fn stage_in_with_point_size_keeps_the_plain_entry_point_only() {
    let src = "struct In { float4 p [[attribute(0)]]; };\n\
               struct O { float4 p [[position]]; float s [[point_size]]; };\n\
               vertex O v(In in [[stage_in]]) { O o; o.p = in.p; o.s = 4.0f; return o; }\n";
    let lib = Library::from_source("p.metal", src, &Options::default()).unwrap();
    assert!(lib.function("v").unwrap().point_sprite.is_none());
    let warnings = lib.warnings();
    assert_eq!(warnings.matches("warning:").count(), 1, "{warnings}");
    assert!(
        warnings.starts_with(
            "p.metal:2:45: warning: `[[point_size]]` of a vertex function with a \
             `[[stage_in]]` was dropped"
        ),
        "{warnings}"
    );
    assert!(!lib.wgsl().contains("point_sprite"));
}

/// `msl2wgsl render --primitive point` draws the same image; without it
/// the fragment function reading `[[point_coord]]` is refused (exit 1),
/// and an unknown primitive is a usage error (exit 2).
#[cfg(feature = "cli")]
#[test]
fn render_command_draws_points() {
    use std::process::Command;
    if gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("particles.metal"), PARTICLES).unwrap();
    let bytes: Vec<u8> = COORD_POINTS.iter().flat_map(Point::bytes).collect();
    std::fs::write(dir.path().join("particles.bin"), bytes).unwrap();
    let render = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_msl2wgsl"))
            .args(["render", "particles.metal", "--vertex", "particle_vertex"])
            .args(["--fragment", "coord_fragment", "--size", "64x48"])
            .args(["--vertex-count", "2", "--instance-count", "2"])
            .args(["--vertex-buffer", "0=particles.bin", "-o", "out.png"])
            .args(extra)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let out = render(&["--primitive", "point"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let img = TextureData::from_png(dir.path().join("out.png")).unwrap();
    check_coords(&img, "msl2wgsl render");
    std::fs::remove_file(dir.path().join("out.png")).unwrap();
    let out = render(&[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("reads [[point_coord]]"), "{text}");
    assert_eq!(render(&["--primitive", "line"]).status.code(), Some(2));
    assert!(!dir.path().join("out.png").exists());
}
