//! Vertex and fragment functions translate to WGSL whose stages link:
//! every fragment input has a vertex output at the same location with the
//! same type and interpolation (WebGPU's interface matching rules).

use msl2wgsl::{Library, Options};

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/render/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// (location, type, interpolation, sampling) of an entry point's user IO.
fn locations(
    module: &naga::Module,
    entry: &str,
    outputs: bool,
) -> Vec<(
    u32,
    String,
    Option<naga::Interpolation>,
    Option<naga::Sampling>,
)> {
    let ep = module
        .entry_points
        .iter()
        .find(|e| e.name == entry)
        .unwrap_or_else(|| panic!("no entry {entry}"));
    let f = &ep.function;
    let mut out = Vec::new();
    let mut visit = |ty: naga::Handle<naga::Type>, binding: &Option<naga::Binding>| {
        let mut one = |ty: naga::Handle<naga::Type>, b: &naga::Binding| {
            if let naga::Binding::Location {
                location,
                interpolation,
                sampling,
                ..
            } = b
            {
                let t = format!("{:?}", module.types[ty].inner);
                // WGSL defaults: perspective, center.
                let interp = interpolation.or(Some(naga::Interpolation::Perspective));
                let samp = if interp == Some(naga::Interpolation::Flat) {
                    None
                } else {
                    sampling.or(Some(naga::Sampling::Center))
                };
                out.push((*location, t, interp, samp));
            }
        };
        match (binding, &module.types[ty].inner) {
            (Some(b), _) => one(ty, b),
            (None, naga::TypeInner::Struct { members, .. }) => members
                .iter()
                .for_each(|m| one(m.ty, m.binding.as_ref().unwrap())),
            _ => {}
        }
    };
    if outputs {
        if let Some(r) = &f.result {
            visit(r.ty, &r.binding);
        }
    } else {
        for a in &f.arguments {
            visit(a.ty, &a.binding);
        }
    }
    out
}

/// Checks that `fragment`'s inputs are all produced by `vertex`.
fn assert_links(wgsl: &str, vertex: &str, fragment: &str) {
    let module = naga::front::wgsl::parse_str(wgsl).expect("the emitted WGSL parses");
    let outs = locations(&module, vertex, true);
    for input in locations(&module, fragment, false) {
        assert!(
            outs.contains(&input),
            "{fragment} input {input:?} has no matching output of {vertex}: {outs:?}\n{wgsl}"
        );
    }
}

#[test]
fn sample_code_shader_pairs_link() {
    for (file, vertex, fragments) in [
        (
            "hello_triangle.metal",
            "vertexShader",
            &["fragmentShader"][..],
        ),
        (
            "fullscreen.metal",
            "fullscreen_vertex",
            &["gradient_fragment", "checker_fragment", "two_targets"][..],
        ),
        (
            "triangle.metal",
            "triangle_vertex",
            &["smooth_fragment", "flat_fragment"][..],
        ),
        (
            "triangle.metal",
            "quad_vertex",
            &["quad_fragment", "smooth_fragment"][..],
        ),
        ("textured.metal", "quad", &["textured"][..]),
    ] {
        let lib = Library::from_source(file, &fixture(file), &Options::default())
            .unwrap_or_else(|f| panic!("{}", f.render()));
        for fragment in fragments {
            assert_links(
                lib.wgsl(),
                lib.function(vertex).unwrap().wgsl_entry_point.as_str(),
                lib.function(fragment).unwrap().wgsl_entry_point.as_str(),
            );
        }
    }
}

#[test]
fn interpolation_comes_from_the_fragment_side() {
    let lib = Library::from_source(
        "triangle.metal",
        &fixture("triangle.metal"),
        &Options::default(),
    )
    .unwrap();
    let smooth = &lib.function("smooth_fragment").unwrap().varyings[0];
    let flat = &lib.function("flat_fragment").unwrap().varyings[0];
    assert_eq!(
        (smooth.name.as_str(), smooth.interpolation.as_str()),
        ("color", "perspective")
    );
    assert_eq!(
        (flat.name.as_str(), flat.interpolation.as_str()),
        ("color", "flat")
    );
    assert_ne!(
        smooth.location, flat.location,
        "one location per interpolation"
    );
    // The vertex function writes the colour to both.
    let outs: Vec<u32> = lib
        .function("triangle_vertex")
        .unwrap()
        .varyings
        .iter()
        .map(|v| v.location)
        .collect();
    assert!(
        outs.contains(&smooth.location) && outs.contains(&flat.location),
        "{outs:?}"
    );
}

#[test]
fn stage_in_attributes_are_reflected() {
    let lib = Library::from_source(
        "triangle.metal",
        &fixture("triangle.metal"),
        &Options::default(),
    )
    .unwrap();
    let v = lib.function("triangle_vertex").unwrap();
    let attrs: Vec<(&str, u32, &str, u32)> = v
        .vertex_attributes
        .iter()
        .map(|a| (a.name.as_str(), a.index, a.format.as_str(), a.offset))
        .collect();
    assert_eq!(
        attrs,
        [
            ("position", 0, "float32x2", 0),
            ("color", 1, "float32x4", 8)
        ]
    );
    assert_eq!(v.vertex_stride, 24);
    let f = lib.function("two_targets");
    assert!(f.is_none());
    let lib = Library::from_source(
        "fullscreen.metal",
        &fixture("fullscreen.metal"),
        &Options::default(),
    )
    .unwrap();
    let outs: Vec<u32> = lib
        .function("two_targets")
        .unwrap()
        .color_outputs
        .iter()
        .map(|c| c.index)
        .collect();
    assert_eq!(outs, [0, 1]);
    // Fragment resources live in group 1, vertex ones in group 0.
    let tint = &lib.function("gradient_fragment").unwrap().arguments[0];
    assert_eq!(tint.binding.map(|b| (b.group, b.binding)), Some((1, 0)));
}

/// The plain entry point has no point size (WebGPU points are one
/// pixel); the point-sprite one draws it (tests/point_sprites.rs).
#[test]
fn point_size_is_drawn_by_a_point_sprite_entry_point() {
    let src = "struct O { float4 p [[position]]; float s [[point_size]]; };\nvertex O v() { O o; o.p = float4(0); o.s = 4.0f; return o; }\n";
    let lib = Library::from_source("p.metal", src, &Options::default()).unwrap();
    assert_eq!(lib.warnings(), "");
    let sprite = lib.function("v").unwrap().point_sprite.as_ref().unwrap();
    assert_eq!(sprite.entry_point, "v_point_sprite");
    let plain = lib
        .wgsl()
        .split("fn v_point_sprite")
        .next()
        .unwrap()
        .to_string();
    assert!(
        plain.contains("fn v(") && !plain.contains("clamp"),
        "{plain}"
    );
}
