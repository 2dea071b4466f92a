//! SwiftUI `[[stitchable]]` effects (issue #16): the provided
//! `<SwiftUI/SwiftUI_Metal.h>`, one fragment entry point per stitchable
//! function in the shape SwiftUI calls it (colorEffect, distortionEffect,
//! layerEffect, shader fills), its reflection, located errors for
//! signatures SwiftUI would not call, and GPU renders of each shape
//! checked pixel by pixel against a CPU reference computed here.
//!
//! The reference rounds to `half` where Metal does (each `half` operation
//! on `half` operands is correctly rounded, each conversion to `half`
//! rounds to nearest even, as the `half` crate does), and the comparison
//! is after 8-bit quantisation: the targets are rgba8unorm, and a GPU's
//! float→unorm conversion only has to be within [`UNORM_TOLERANCE`] (0.6)
//! of an 8-bit step of the exact value (D3D's rule, which Vulkan
//! implementations follow), so each channel must be within 0.6 steps of
//! the reference: exact, except one step off where the reference lies
//! within 0.1 of the middle of two steps (half results such as
//! `k/255 × 0.5` for odd `k` land there).

mod common;

use common::source::{assert_error, first_code, translate_body};
use msl2wgsl::diagnostics::Code;
use msl2wgsl::{Library, Options, Target};
use serde_json::json;

/// How far an rgba8unorm channel may be from the exact value, in 8-bit
/// steps: the float→unorm conversion's tolerance (see the module docs).
#[cfg(feature = "runner")]
const UNORM_TOLERANCE: f32 = 0.6;

fn library() -> Library {
    let path = format!(
        "{}/fixtures/stitchable/effects.metal",
        env!("CARGO_MANIFEST_DIR")
    );
    let options = Options {
        target: Target::Wgpu,
        ..Options::default()
    };
    Library::from_file(path, &options).unwrap_or_else(|f| panic!("{}", f.render()))
}

/// `x` rounded to `half` (round to nearest even), as a Metal conversion.
#[cfg(feature = "runner")]
fn h(x: f32) -> f32 {
    half::f16::from_f32(x).to_f32()
}

/// A `half` operation on two `half` operands: exact in `f32`, rounded once.
#[cfg(feature = "runner")]
fn hop(a: f32, b: f32, op: fn(f32, f32) -> f32) -> f32 {
    h(op(h(a), h(b)))
}

#[test]
fn the_header_is_provided_and_layer_samples() {
    // Both of SwiftUI's names for it, and an include guard.
    let lib = translate_body(
        "#include <SwiftUI/SwiftUI_Metal.h>\n#include <SwiftUI/SwiftUI.h>\n\
         [[stitchable]] half4 f(float2 position, SwiftUI::Layer layer) {\n\
         \x20   return layer.sample(position + float2(1, 0));\n}\n",
    );
    let f = lib.function("f").expect("an entry point");
    assert_eq!(f.stitchable.as_ref().unwrap().function, "f_stitchable");
    assert!(lib.wgsl().contains("@fragment"), "{}", lib.wgsl());
    assert!(lib.wgsl().contains("fn f_stitchable("), "{}", lib.wgsl());
    // Sampling has an explicit level, so any control flow may sample.
    assert!(lib.wgsl().contains("textureSampleLevel("), "{}", lib.wgsl());
}

#[test]
fn every_shape_becomes_a_fragment_entry_point() {
    let lib = library();
    let kinds: Vec<(String, serde_json::Value)> = lib
        .functions()
        .iter()
        .map(|f| {
            assert_eq!(f.wgsl_entry_point, f.name);
            let s = serde_json::to_value(f.stitchable.as_ref().unwrap()).unwrap();
            (f.name.clone(), s["kind"].clone())
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("columnTint".into(), json!("colorEffect")),
            ("bandShift".into(), json!("distortionEffect")),
            ("maskedSmear".into(), json!("layerEffect")),
            ("checker".into(), json!("shapeStyle")),
        ]
    );
    let wgsl = lib.wgsl();
    for name in ["columnTint", "bandShift", "maskedSmear", "checker"] {
        assert!(
            wgsl.contains(&format!("fn {name}(@builtin(position) ")),
            "{name}: {wgsl}"
        );
        assert!(wgsl.contains(&format!("fn {name}_stitchable(")), "{name}");
    }
}

#[test]
fn reflection_gives_each_argument_its_place() {
    let lib = library();
    let reflect = |name: &str| serde_json::to_value(lib.function(name).unwrap()).unwrap();
    let tint = reflect("columnTint");
    assert_eq!(
        tint["stitchable"],
        json!({
            "kind": "colorEffect",
            "function": "columnTint_stitchable",
            "layerTexture": 0,
            "argumentBuffer": 0,
            "argumentBufferSize": 32,
            "arguments": [
                {"name": "tint", "kind": "value", "dataType": "half4", "storedAs": "float4", "offset": 0},
                {"name": "amount", "kind": "value", "dataType": "float", "storedAs": "float", "offset": 16},
                {"name": "weights", "kind": "floatArray", "dataType": "float", "buffer": 1,
                 "countName": "count", "countOffset": 20, "countUnit": 4}
            ]
        })
    );
    // The resources are ordinary arguments too, bound by Metal index.
    let args: Vec<(String, String, u64, u64)> = tint["arguments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_string(),
                a["type"].as_str().unwrap().to_string(),
                a["index"].as_u64().unwrap(),
                a["binding"]["binding"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        args,
        [
            ("swiftui_layer".into(), "texture".into(), 0, 64),
            ("columnTint_arguments".into(), "buffer".into(), 0, 0),
            ("weights".into(), "buffer".into(), 1, 1),
        ]
    );
    let members = &tint["arguments"][1]["buffer"]["structType"]["members"];
    assert_eq!(
        members[2],
        json!({"name": "count", "offset": 20, "dataType": "int", "size": 4})
    );
    assert_eq!(
        tint["colorOutputs"],
        json!([{"index": 0, "blendSrc": null, "dataType": "half4"}])
    );
    // A colour effect loads its texel; the others sample, with the
    // layer's linear sampler.
    assert_eq!(tint["constexprSamplers"], json!([]));
    let shift = reflect("bandShift");
    let sampler = &shift["constexprSamplers"][0];
    assert_eq!(sampler["name"], json!("swiftui_layer_sampler"));
    assert_eq!(sampler["descriptor"]["magFilter"], json!("linear"));
    assert_eq!(
        sampler["descriptor"]["addressModeU"],
        json!("clamp-to-edge")
    );
    let smear = reflect("maskedSmear");
    let s = &smear["stitchable"];
    assert_eq!(s["arguments"][0]["offset"], json!(0)); // float4 bounds
    assert_eq!(
        s["arguments"][1],
        json!({"name": "mask", "kind": "image", "dataType": "texture2d<half>", "texture": 1})
    );
    assert_eq!(s["arguments"][3]["default"], json!([1.0])); // half gain = 1.0h
    assert_eq!(smear["arguments"][0]["name"], json!("layer"));
    // `metal::sampler(filter::nearest)` in the call: a temporary constexpr sampler.
    let temporary = &smear["constexprSamplers"];
    assert_eq!(temporary.as_array().unwrap().len(), 2, "{temporary}");
    assert!(temporary
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["descriptor"]["magFilter"] == json!("nearest")));
    let fill = reflect("checker");
    assert_eq!(fill["stitchable"]["layerTexture"], json!(null));
    assert_eq!(fill["stitchable"]["arguments"][1]["offset"], json!(16)); // half4 a, as float4
}

#[test]
fn the_function_stays_callable() {
    let lib = translate_body(
        "[[stitchable]] half4 inner(float2 position, half4 color) { return color.bgra; }\n\
         [[stitchable]] half4 outer(float2 position, half4 color) {\n\
         \x20   return inner(position, color) * 0.5h;\n}\n",
    );
    let wgsl = lib.wgsl();
    assert_eq!(lib.function_names(), ["inner", "outer"]);
    assert!(wgsl.contains("fn inner_stitchable("), "{wgsl}");
    assert!(wgsl.contains("inner_stitchable(position"), "{wgsl}");
}

#[test]
fn signatures_swiftui_would_not_call_are_located_errors() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "[[stitchable]] float4 f(float2 position, half4 color) { return float4(color); }\n",
            "float4 f",
            "a `[[stitchable]]` function returns `half4` (a colour) or `float2`",
        ),
        (
            "[[stitchable]] half4 f(half4 color, float2 position) { return color; }\n",
            "half4 color",
            "the first argument of a `[[stitchable]]` function is the pixel's `float2 position`, not `half4`",
        ),
        (
            "[[stitchable]] half4 f() { return half4(0); }\n",
            "f()",
            "`[[stitchable]]` function `f` takes no `float2 position`",
        ),
        (
            "[[stitchable]] half4 f(float2 p, half4 c, device const float *w) { return c * half(w[0]); }\n",
            "device const float *w",
            "SwiftUI passes an array as a pointer followed by an `int` count",
        ),
        (
            "[[stitchable]] half4 f(float2 p, half4 c, device float *w, int n) { return c; }\n",
            "device float",
            "SwiftUI passes arrays and data read-only",
        ),
        (
            "[[stitchable]] half4 f(float2 p, half4 c, float3x3 m) { return c; }\n",
            "float3x3",
            "SwiftUI cannot pass a `float3x3` to a `[[stitchable]]` function",
        ),
    ];
    let layer_late = "#include <SwiftUI/SwiftUI_Metal.h>\n\
        [[stitchable]] half4 f(float2 p, float k, SwiftUI::Layer l) { return l.sample(p); }\n";
    let late = [(
        layer_late,
        "SwiftUI::Layer l",
        "`SwiftUI::Layer` must be the second argument",
    )];
    for (body, at, message) in cases.iter().chain(&late) {
        let text = assert_error(body, at, 0, message);
        assert!(text.contains("note: SwiftUI calls"), "{text}");
        assert_eq!(first_code(body), Code::StitchableSignature, "{text}");
    }
}

#[cfg(feature = "runner")]
mod gpu {
    use super::*;
    use crate::common::gpu;
    use msl2wgsl::runner::{
        effect_resources, render_effect_library, EffectResources, EffectValue, TextureData,
    };
    use std::collections::BTreeMap;
    use wgpu::TextureFormat;

    /// A deterministic RGBA pattern, alpha varying too.
    fn pattern(width: u32, height: u32, seed: u32) -> TextureData {
        let mut data = Vec::new();
        for y in 0..height {
            for x in 0..width {
                for c in 0..4u32 {
                    let v = (x * 37 + y * 101 + c * 59 + seed * 13).wrapping_mul(2654435761);
                    data.push((v >> 24) as u8);
                }
            }
        }
        TextureData::new_2d(TextureFormat::Rgba8Unorm, width, height, data)
    }

    fn texel(img: &TextureData, x: i64, y: i64) -> [f32; 4] {
        let x = x.clamp(0, img.width as i64 - 1) as u32;
        let y = y.clamp(0, img.height as i64 - 1) as u32;
        let k = ((y * img.width + x) * 4) as usize;
        std::array::from_fn(|c| img.data[k + c] as f32 / 255.0)
    }

    /// `v` in 8-bit steps, unrounded: what an exact conversion would round.
    fn steps(v: f32) -> f32 {
        v.clamp(0.0, 1.0) * 255.0
    }

    /// Every pixel of `img` against `want(x, y)`, each channel within
    /// [`UNORM_TOLERANCE`] steps of the exact value.
    fn assert_image(img: &TextureData, what: &str, want: impl Fn(u32, u32) -> [f32; 4]) {
        assert_eq!(img.format, TextureFormat::Rgba8Unorm);
        let mut bad = Vec::new();
        for y in 0..img.height {
            for x in 0..img.width {
                let k = ((y * img.width + x) * 4) as usize;
                let got = &img.data[k..k + 4];
                let want = want(x, y).map(steps);
                if (0..4).any(|c| (f32::from(got[c]) - want[c]).abs() > UNORM_TOLERANCE) {
                    bad.push(format!("({x}, {y}): {got:?}, want {want:?}"));
                }
            }
        }
        assert!(
            bad.is_empty(),
            "{what}: {} pixels differ:\n{}",
            bad.len(),
            bad[..bad.len().min(12)].join("\n")
        );
    }

    fn args(values: Vec<(usize, EffectValue)>) -> BTreeMap<usize, EffectValue> {
        values.into_iter().collect()
    }

    #[test]
    fn color_effect_blends_each_pixel_with_its_colour() {
        let Some(gpu) = gpu() else { return };
        let lib = library();
        let layer = pattern(13, 7, 1);
        let tint = [0.9f32, 0.1, 0.4, 1.0];
        let (amount, weights) = (0.8f32, [0.0f32, 0.25, 0.5, 1.0, 0.75]);
        let resources = EffectResources {
            layer: Some(layer.clone()),
            size: None,
            arguments: args(vec![
                (0, EffectValue::Numbers(tint.map(f64::from).to_vec())),
                (1, EffectValue::Numbers(vec![amount as f64])),
                (2, EffectValue::Numbers(weights.map(f64::from).to_vec())),
            ]),
        };
        let img = render_effect_library(gpu, &lib, "columnTint", &resources).unwrap();
        assert_eq!((img.width, img.height), (13, 7));
        assert_image(&img, "columnTint", |x, y| {
            let color = texel(&layer, x.into(), y.into()).map(h);
            // `half(weights[column] * amount)`: a float product, converted.
            let w = h(weights[x as usize % weights.len()] * amount);
            let keep = hop(1.0, w, |a, b| a - b);
            let mut out = [0.0; 4];
            for c in 0..3 {
                let a = hop(color[c], keep, |a, b| a * b);
                let b = hop(tint[c], w, |a, b| a * b);
                out[c] = hop(a, b, |a, b| a + b);
            }
            out[3] = color[3];
            out
        });
    }

    #[test]
    fn distortion_effect_samples_where_the_function_says() {
        let Some(gpu) = gpu() else { return };
        let lib = library();
        let layer = pattern(12, 10, 2);
        let band = 3.0f32;
        let odd = |y: u32| ((y as f32 + 0.5) / band).floor() as u32 % 2 == 1;
        // Whole pixels (clamped to the edge), then half a pixel: the linear
        // filter's mean of two neighbours.
        for offset in [[2.0f32, -1.0], [0.5, 0.0]] {
            let resources = EffectResources {
                layer: Some(layer.clone()),
                size: None,
                arguments: args(vec![
                    (0, EffectValue::Numbers(offset.map(f64::from).to_vec())),
                    (1, EffectValue::Numbers(vec![band as f64])),
                ]),
            };
            let img = render_effect_library(gpu, &lib, "bandShift", &resources).unwrap();
            assert_image(&img, &format!("bandShift {offset:?}"), |x, y| {
                let (x, y) = (i64::from(x), i64::from(y));
                if !odd(y as u32) {
                    return texel(&layer, x, y);
                }
                let dy = offset[1] as i64;
                if offset[0].fract() == 0.0 {
                    return texel(&layer, x + offset[0] as i64, y + dy);
                }
                let (a, b) = (texel(&layer, x, y + dy), texel(&layer, x + 1, y + dy));
                std::array::from_fn(|c| (a[c] + b[c]) / 2.0)
            });
        }
    }

    #[test]
    fn layer_effect_samples_the_layer_through_a_helper() {
        let Some(gpu) = gpu() else { return };
        let lib = library();
        let (w, hgt) = (11, 9);
        let layer = pattern(w, hgt, 3);
        let mut mask = vec![0u8; (w * hgt * 4) as usize];
        for y in 0..hgt {
            for x in 0..w {
                if (x + y) % 3 == 0 {
                    mask[((y * w + x) * 4) as usize] = 255;
                }
            }
        }
        let mask = TextureData::new_2d(TextureFormat::Rgba8Unorm, w, hgt, mask);
        let bounds = [2.0f32, 1.0, 5.0, 4.0];
        for gain in [Some(0.5f32), None] {
            let mut values = vec![
                (0, EffectValue::Numbers(bounds.map(f64::from).to_vec())),
                (1, EffectValue::Image(mask.clone())),
                (2, EffectValue::Numbers(vec![1.0])),
            ];
            if let Some(g) = gain {
                values.push((3, EffectValue::Numbers(vec![g as f64])));
            }
            let resources = EffectResources {
                layer: Some(layer.clone()),
                size: None,
                arguments: args(values),
            };
            let img = render_effect_library(gpu, &lib, "maskedSmear", &resources).unwrap();
            // Left out, `gain` is its default argument, 1.0h.
            let gain = h(gain.unwrap_or(1.0));
            assert_image(&img, &format!("maskedSmear gain {gain}"), |x, y| {
                let (xi, yi) = (i64::from(x), i64::from(y));
                if (x + y) % 3 == 0 {
                    let (l, r) = (
                        texel(&layer, xi - 1, yi).map(h),
                        texel(&layer, xi + 1, yi).map(h),
                    );
                    return std::array::from_fn(|c| {
                        hop(hop(l[c], r[c], |a, b| a + b), 0.5, |a, b| a * b)
                    });
                }
                let c = texel(&layer, xi, yi).map(h);
                let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
                let inside = px >= bounds[0]
                    && px < bounds[0] + bounds[2]
                    && py >= bounds[1]
                    && py < bounds[1] + bounds[3];
                match inside {
                    true => c.map(|v| hop(v, gain, |a, b| a * b)),
                    false => c,
                }
            });
        }
    }

    #[test]
    fn a_fill_needs_only_a_size() {
        let Some(gpu) = gpu() else { return };
        let lib = library();
        let (a, b) = ([1.0f32, 0.0, 0.0, 1.0], [0.0f32, 0.2, 1.0, 0.5]);
        let resources = EffectResources {
            layer: None,
            size: Some((10, 6)),
            arguments: args(vec![
                (0, EffectValue::Numbers(vec![2.5])),
                (1, EffectValue::Numbers(a.map(f64::from).to_vec())),
                (2, EffectValue::Numbers(b.map(f64::from).to_vec())),
            ]),
        };
        let img = render_effect_library(gpu, &lib, "checker", &resources).unwrap();
        assert_image(&img, "checker", |x, y| {
            let cell = |v: u32| ((v as f32 + 0.5) / 2.5).floor() as i32;
            match (cell(x) + cell(y)) & 1 {
                0 => a.map(h),
                _ => b.map(h),
            }
        });
    }

    #[test]
    fn arguments_are_checked_before_drawing() {
        let lib = library();
        let f = lib.function("columnTint").unwrap();
        let layer = pattern(4, 4, 0);
        let err = |arguments: Vec<(usize, EffectValue)>| {
            let r = EffectResources {
                layer: Some(layer.clone()),
                size: None,
                arguments: args(arguments),
            };
            effect_resources(f, &r).unwrap_err().to_string()
        };
        let tint = || (0, EffectValue::Numbers(vec![1.0; 4]));
        let amount = || (1, EffectValue::Numbers(vec![1.0]));
        assert!(err(vec![amount()]).contains("(`tint`) of `columnTint` was given no value"));
        assert!(err(vec![(0, EffectValue::Numbers(vec![1.0; 3])), amount()])
            .contains("takes 4 number(s), 3 given"));
        assert!(
            err(vec![tint(), amount(), (2, EffectValue::Bytes(vec![0; 6]))])
                .contains("not a whole number of 4-byte elements")
        );
        assert!(
            err(vec![tint(), amount(), (5, EffectValue::Numbers(vec![]))])
                .contains("there is no argument 5")
        );
        let none = EffectResources::default();
        let e = effect_resources(f, &none).unwrap_err().to_string();
        assert!(e.contains("reads a layer"), "{e}");
        // The count is written from the array's length.
        let r = EffectResources {
            layer: Some(layer.clone()),
            size: None,
            arguments: args(vec![tint(), amount(), (2, EffectValue::Bytes(vec![0; 12]))]),
        };
        let bound = effect_resources(f, &r).unwrap();
        let block = &bound.fragment_buffers[&0];
        assert_eq!(i32::from_le_bytes(block[20..24].try_into().unwrap()), 3);
        assert_eq!(bound.fragment_buffers[&1].len(), 12);
        assert_eq!(bound.textures[&0], layer);
    }

    /// `msl2wgsl render --effect` on a PNG, arguments by name, position and
    /// file, against the same reference as the library test.
    #[test]
    #[cfg(feature = "cli")]
    fn render_command_applies_an_effect() {
        use std::process::Command;
        let Some(_) = gpu() else { return };
        let dir = tempfile::tempdir().unwrap();
        let layer = pattern(9, 5, 4);
        let input = dir.path().join("in.png");
        layer.to_png(&input).unwrap();
        let weights = [1.0f32, 0.0, 0.5];
        let bytes: Vec<u8> = weights.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(dir.path().join("w.bin"), bytes).unwrap();
        let fixture = format!(
            "{}/fixtures/stitchable/effects.metal",
            env!("CARGO_MANIFEST_DIR")
        );
        let out = dir.path().join("out.png");
        let run = |extra: &[&str]| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_msl2wgsl"));
            cmd.args(["render", &fixture, "--effect", "columnTint", "--input"])
                .arg(&input)
                .args(extra)
                .arg("-o")
                .arg(&out)
                .current_dir(dir.path());
            cmd.output().unwrap()
        };
        let ok = run(&[
            "--arg",
            "tint=0,0,1,1",
            "--arg",
            "1=0.5",
            "--arg",
            "weights=@w.bin",
        ]);
        assert!(
            ok.status.success(),
            "{}",
            String::from_utf8_lossy(&ok.stderr)
        );
        let img = TextureData::from_png(&out).unwrap();
        assert_image(&img, "render --effect", |x, y| {
            let color = texel(&layer, x.into(), y.into()).map(h);
            let w = h(weights[x as usize % 3] * 0.5);
            let keep = hop(1.0, w, |a, b| a - b);
            let tint = [0.0, 0.0, 1.0];
            let mut o = [0.0; 4];
            for c in 0..3 {
                o[c] = hop(
                    hop(color[c], keep, |a, b| a * b),
                    hop(tint[c], w, |a, b| a * b),
                    |a, b| a + b,
                );
            }
            o[3] = color[3];
            o
        });
        // Usage errors: an argument it does not have, twice, not numbers;
        // --effect with --vertex.
        for extra in [
            &["--arg", "nope=1"][..],
            &["--arg", "1=1", "--arg", "amount=2"],
            &["--arg", "1=x"],
            &["--vertex", "v"],
        ] {
            let o = run(extra);
            assert_eq!(
                o.status.code(),
                Some(2),
                "{extra:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        // A missing value is a failed run (exit 1), said before drawing.
        let o = run(&["--arg", "1=1", "--arg", "weights=1,2"]);
        assert_eq!(o.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&o.stderr).contains("`tint`"));
    }
}
