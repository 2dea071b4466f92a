#![cfg(feature = "cli")] // the command-line binary is built with the `cli` feature
//! Tests of the `msl2wgsl` command line against `shared/spec/cli.md`.
//!
//! Tests named `translation_*` need a working translator (and some a GPU);
//! the others only exercise argument handling and the runner's plumbing.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

const KERNEL: &str = "#include <metal_stdlib>
using namespace metal;

kernel void twice(device const float* input [[buffer(0)]],
                  device float* output [[buffer(1)]],
                  uint i [[thread_position_in_grid]])
{
    output[i] = input[i] * 2.0f;
}
";

/// Invalid on line 4: an undeclared identifier.
const BROKEN: &str = "#include <metal_stdlib>
using namespace metal;
kernel void broken(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i] = undeclared_thing;
}
";

fn msl2wgsl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_msl2wgsl"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("cannot start msl2wgsl")
}

fn in_dir(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_msl2wgsl"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("cannot start msl2wgsl")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(out),
        stderr(out)
    );
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn usage_errors_exit_2() {
    let cases: &[&[&str]] = &[
        &[],
        &["--bogus", "k.metal"],
        &["k.metal", "extra.metal"],
        &["--threadgroup-size", "1,2,3,4", "k.metal"],
        &["--threadgroup-size", "x", "k.metal"],
        &["--target", "metal", "k.metal"],
        &["-D", "1bad", "k.metal"],
        &["reflect"],
        &["run", "k.metal"],
        &["run", "k.metal", "--entry", "k"],
        &["run", "k.metal", "--grid", "4"],
        &[
            "run",
            "k.metal",
            "--entry",
            "k",
            "--grid",
            "4",
            "--threadgroups",
            "1",
        ],
        &[
            "run", "k.metal", "--entry", "k", "--grid", "4", "--buffer", "0",
        ],
        &[
            "run", "k.metal", "--entry", "k", "--grid", "4", "--buffer", "x=a.bin",
        ],
        &[
            "run",
            "k.metal",
            "--entry",
            "k",
            "--grid",
            "4",
            "--buffer",
            "0=zeros:many",
        ],
        &[
            "run", "k.metal", "--entry", "k", "--grid", "4", "--read", "0",
        ],
        &["test"],
    ];
    for args in cases {
        let out = msl2wgsl(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty(), "{args:?}: no message");
    }
}

#[test]
fn help_names_every_command() {
    let out = msl2wgsl(&["--help"]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    for word in ["reflect", "run", "test", "--threadgroup-size", "-o"] {
        assert!(text.contains(word), "`{word}` missing from:\n{text}");
    }
    for sub in ["reflect", "run", "test"] {
        assert_exit(&msl2wgsl(&[sub, "--help"]), 0);
    }
}

#[test]
#[cfg(feature = "runner")] // exercises `run`/`render`/`test`
fn unreadable_input_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir
        .path()
        .join("missing.metal")
        .to_string_lossy()
        .into_owned();
    let runs: &[&[&str]] = &[
        &[&missing],
        &["reflect", &missing],
        &["run", &missing, "--entry", "k", "--grid", "4"],
    ];
    for args in runs {
        let out = msl2wgsl(args);
        assert_exit(&out, 1);
        assert!(
            stderr(&out).starts_with(&format!("msl2wgsl: error: cannot read '{missing}': ")),
            "{}",
            stderr(&out)
        );
    }
    // A folder is no better than a missing file.
    let out = msl2wgsl(&[&dir.path().to_string_lossy()]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
}

#[test]
fn output_file_survives_unreadable_input() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = write(dir.path(), "out.wgsl", "previous contents\n");
    let out = in_dir(dir.path(), &["missing.metal", "-o", "out.wgsl"]);
    assert_exit(&out, 1);
    assert_eq!(
        std::fs::read_to_string(&out_path).unwrap(),
        "previous contents\n"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "stray files left"
    );
}

#[test]
#[cfg(feature = "runner")] // exercises `run`/`render`/`test`
fn texture_flags_usage_errors_exit_2() {
    let run_flags: &[&[&str]] = &[
        &["--texture", "0="],
        &["--texture", "x=in.png"],
        &["--texture", "1=empty:4"],
        &["--texture", "1=empty:0x4"],
        &["--texture", "1=empty:4xfour"],
        &["--texture", "1=empty:4x4:rgba9unorm"],
        &["--texture", "1=empty:4x4:"],
        &["--read-texture", "0="],
        &["--read-texture", "zero=out.png"],
        &["--texture-format", "0=nosuch"],
        &["--texture-format", "0"],
    ];
    let mut cases: Vec<Vec<&str>> = run_flags
        .iter()
        .map(|extra| {
            [
                &["run", "k.metal", "--entry", "k", "--grid", "4"][..],
                extra,
            ]
            .concat()
        })
        .collect();
    cases.push(vec!["--texture-format", "1=bogus", "k.metal"]);
    cases.push(vec!["--texture-format", "1=", "k.metal"]);
    cases.push(vec!["reflect", "k.metal", "--texture-format", "x=r32float"]);
    for args in &cases {
        let out = msl2wgsl(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty(), "{args:?}: no message");
    }
    let out = msl2wgsl(&["run", "--help"]);
    for flag in [
        "--texture",
        "--read-texture",
        "--texture-format",
        "empty:WxH",
    ] {
        assert!(stdout(&out).contains(flag), "{flag}: {}", stdout(&out));
    }
}

/// Inverts an image; writes a ramp into a float texture.
#[cfg(feature = "runner")]
const TEXTURE_KERNELS: &str = "#include <metal_stdlib>
using namespace metal;

kernel void invert(texture2d<float, access::read> src [[texture(0)]],
                   texture2d<float, access::write> dst [[texture(1)]],
                   uint2 gid [[thread_position_in_grid]])
{
    float4 c = src.read(gid);
    dst.write(float4(1.0 - c.rgb, c.a), gid);
}

kernel void ramp(texture2d<float, access::write> dst [[texture(0)]],
                 uint2 gid [[thread_position_in_grid]])
{
    dst.write(float4(float(gid.x) / 3.0), gid);
}
";

#[test]
#[cfg(feature = "runner")] // exercises `run`/`render`/`test`
fn run_checks_texture_flags_before_translating() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "k.metal", TEXTURE_KERNELS);
    let base = ["run", file.as_str(), "--entry", "invert", "--grid", "3,2"];
    let cases: [(&[&str], i32, &str); 3] = [
        (
            &["--texture", "1=empty:2x2", "--texture", "1=empty:2x2"],
            2,
            "--texture 1 is given twice",
        ),
        (
            &["--texture", "0=no-such.png"],
            1,
            "cannot read 'no-such.png'",
        ),
        (&["--texture", "0=k.metal"], 1, "k.metal"),
    ];
    for (extra, code, message) in cases {
        let out = in_dir(dir.path(), &[&base[..], extra].concat());
        assert_exit(&out, code);
        assert!(
            stderr(&out).contains(message),
            "{extra:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
#[cfg(feature = "runner")] // exercises `run`/`render`/`test`
fn translation_run_checks_read_texture() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "k.metal", TEXTURE_KERNELS);
    let base = ["run", file.as_str(), "--entry", "invert", "--grid", "3,2"];
    let cases: [(&[&str], &str); 3] = [
        (
            &["--read-texture", "0=out.png"],
            "no writable [[texture(0)]]",
        ),
        (
            &["--read-texture", "5=out.png"],
            "no writable [[texture(5)]]",
        ),
        (
            &["--texture", "0=empty:3x2", "--read-texture", "1=out.png"],
            "give the texture with --texture 1=",
        ),
    ];
    for (extra, message) in cases {
        let out = in_dir(dir.path(), &[&base[..], extra].concat());
        assert_exit(&out, 1);
        assert!(
            stderr(&out).contains(message),
            "{extra:?}: {}",
            stderr(&out)
        );
    }
}

#[cfg(feature = "runner")]
#[test]
fn translation_run_textures_from_and_to_png() {
    use msl2wgsl::runner::TextureData;
    if !common::has_gpu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "k.metal", TEXTURE_KERNELS);
    let pixels: Vec<u8> = (0..3 * 2 * 4).map(|i| (i * 11) as u8).collect();
    let image = TextureData::new_2d(wgpu::TextureFormat::Rgba8Unorm, 3, 2, pixels.clone());
    image.to_png(dir.path().join("in.png")).unwrap();
    let out = in_dir(
        dir.path(),
        &[
            "run",
            &file,
            "--entry",
            "invert",
            "--grid",
            "3,2",
            "--texture",
            "0=in.png",
            "--texture",
            "1=empty:3x2",
            "--read-texture",
            "1=out.png",
        ],
    );
    assert_exit(&out, 0);
    let inverted = TextureData::from_png(dir.path().join("out.png")).unwrap();
    let want: Vec<u8> = pixels
        .chunks(4)
        .flat_map(|p| [255 - p[0], 255 - p[1], 255 - p[2], p[3]])
        .collect();
    assert_eq!(inverted.data, want);
    // The empty texture's format becomes the storage format; one-component
    // formats are saved as grayscale.
    let out = in_dir(
        dir.path(),
        &[
            "run",
            &file,
            "--entry",
            "ramp",
            "--grid",
            "4,1",
            "--texture",
            "0=empty:4x1:r32float",
            "--read-texture",
            "0=ramp.png",
        ],
    );
    assert_exit(&out, 0);
    let ramp = TextureData::from_png(dir.path().join("ramp.png")).unwrap();
    let reds: Vec<u8> = ramp.data.chunks(4).map(|p| p[0]).collect();
    assert_eq!(reds, [0, 85, 170, 255]);
}

/// A texel buffer (`texture_buffer`) is given and read back as a texture
/// of one row: `empty:Wx1:FORMAT` gives its format.
#[test]
#[cfg(feature = "runner")] // exercises `run`
fn translation_run_texel_buffer_to_png() {
    use msl2wgsl::runner::TextureData;
    if !common::has_gpu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "k.metal",
        "#include <metal_stdlib>\nusing namespace metal;\n\
         kernel void halves(texture_buffer<float, access::write> o [[texture(0)]],\n\
                            uint i [[thread_position_in_grid]]) {\n\
             o.write(float4(float(i) * 0.5f), i);\n\
         }\n",
    );
    let out = in_dir(
        dir.path(),
        &[
            "run",
            &file,
            "--entry",
            "halves",
            "--grid",
            "4",
            "--texture",
            "0=empty:4x1:r32float",
            "--read-texture",
            "0=texels.png",
        ],
    );
    assert_exit(&out, 0);
    let texels = TextureData::from_png(dir.path().join("texels.png")).unwrap();
    let reds: Vec<u8> = texels.data.chunks(4).map(|p| p[0]).collect();
    // 0, 0.5, 1, 1.5 as PNG samples: 127.5 rounds up, 1.5 clamps to 255.
    assert_eq!(reds, [0, 128, 255, 255]);
}

#[test]
#[cfg(feature = "runner")] // exercises `run`/`render`/`test`
fn run_checks_buffer_arguments_before_translating() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "k.metal", KERNEL);
    let base = ["run", file.as_str(), "--entry", "twice", "--grid", "4"];
    let twice = [
        &base[..],
        &["--buffer", "0=zeros:16", "--buffer", "0=zeros:16"],
    ]
    .concat();
    let out = msl2wgsl(&twice);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("given twice"), "{}", stderr(&out));
    let unreadable = [&base[..], &["--buffer", "0=no-such.bin"]].concat();
    let out = msl2wgsl(&unreadable);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("cannot read 'no-such.bin'"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[cfg(feature = "runner")] // exercises `run`/`render`/`test`
fn test_needs_cases() {
    let dir = tempfile::tempdir().unwrap();
    let out = msl2wgsl(&["test", &dir.path().to_string_lossy()]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("no conformance cases"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn test_reports_broken_cases() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a_no_source.toml",
        "entry = \"k\"\n[dispatch]\ngrid = [4]\n",
    );
    write(
        dir.path(),
        "b_bad_key.toml",
        "entry = \"k\"\nbogus = 1\n[dispatch]\ngrid = [4]\n",
    );
    write(dir.path(), "notes.txt", "not a case");
    let out = msl2wgsl(&["test", &dir.path().to_string_lossy()]);
    assert_exit(&out, 1);
    if !common::has_gpu() {
        return;
    }
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("FAIL") && lines[0].contains("a_no_source.toml"),
        "{text}"
    );
    assert!(lines[0].contains("cannot read"), "{text}");
    assert!(
        lines[1].starts_with("FAIL") && lines[1].contains("b_bad_key.toml"),
        "{text}"
    );
    assert_eq!(lines.last(), Some(&"0 passed, 2 failed"), "{text}");
}

// ---- These need the translator. ----

#[test]
fn translation_prints_wgsl() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "k.metal", KERNEL);
    let out = msl2wgsl(&[&file]);
    assert_exit(&out, 0);
    assert!(stdout(&out).contains("@compute"), "{}", stdout(&out));
    let out = msl2wgsl(&[
        &file,
        "--entry",
        "twice",
        "--threadgroup-size",
        "32",
        "--target",
        "wgpu",
    ]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out).contains("@workgroup_size(32"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn translation_reads_standard_input() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_msl2wgsl"))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(KERNEL.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 0);
    assert!(stdout(&out).contains("@compute"));
}

#[test]
fn translation_errors_exit_1_and_keep_the_output_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "good.metal", KERNEL);
    write(dir.path(), "broken.metal", BROKEN);
    let out = in_dir(dir.path(), &["good.metal", "-o", "out.wgsl"]);
    assert_exit(&out, 0);
    assert!(stdout(&out).is_empty());
    let written = std::fs::read_to_string(dir.path().join("out.wgsl")).unwrap();
    assert!(written.contains("@compute"), "{written}");

    let out = in_dir(dir.path(), &["broken.metal", "-o", "out.wgsl"]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("broken.metal:4:"), "{}", stderr(&out));
    assert!(stderr(&out).contains(": error: "), "{}", stderr(&out));
    let after = std::fs::read_to_string(dir.path().join("out.wgsl")).unwrap();
    assert_eq!(after, written, "-o was overwritten by a failed translation");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        3,
        "stray files left"
    );
}

/// `-o` through a symbolic link writes the link's target and keeps the link:
/// the write-then-rename that guards regular files must not put a regular
/// file where a link, a FIFO or `/dev/null` was.
#[cfg(unix)]
#[test]
fn output_through_a_link_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "good.metal", KERNEL);
    write(dir.path(), "target.wgsl", "");
    std::os::unix::fs::symlink("target.wgsl", dir.path().join("link.wgsl")).unwrap();
    let out = in_dir(dir.path(), &["good.metal", "-o", "link.wgsl"]);
    assert_exit(&out, 0);
    let link = std::fs::symlink_metadata(dir.path().join("link.wgsl")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    let written = std::fs::read_to_string(dir.path().join("target.wgsl")).unwrap();
    assert!(written.contains("@compute"), "{written}");
}

#[test]
fn translation_reflect_prints_json() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "k.metal", KERNEL);
    let out = msl2wgsl(&["reflect", &file, "--entry", "twice"]);
    assert_exit(&out, 0);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["schemaVersion"], 1);
    let f = &json["functions"][0];
    assert_eq!(f["name"], "twice");
    assert_eq!(f["stage"], "kernel");
    assert_eq!(f["arguments"][1]["name"], "output");
    assert_eq!(f["arguments"][1]["index"], 1);
}

#[test]
fn translation_run_ragged_grid() {
    if !common::has_gpu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "k.metal", KERNEL);
    let input: Vec<u8> = (0..1000).flat_map(|i| (i as f32).to_le_bytes()).collect();
    std::fs::write(dir.path().join("in.bin"), &input).unwrap();
    let mut output_init = Vec::new();
    for _ in 0..1024 {
        output_init.extend((-1.0f32).to_le_bytes());
    }
    std::fs::write(dir.path().join("out.bin"), &output_init).unwrap();
    for threadgroup in [&["--threadgroup", "64"][..], &[]] {
        let mut args = vec![
            "run",
            &file,
            "--entry",
            "twice",
            "--grid",
            "1000",
            "--adapter",
        ];
        args.extend_from_slice(threadgroup);
        args.extend([
            "--buffer",
            "0=in.bin",
            "--buffer",
            "1=out.bin",
            "--read",
            "1=result.bin",
        ]);
        let out = in_dir(dir.path(), &args);
        assert_exit(&out, 0);
        assert!(stderr(&out).contains("adapter: "), "{}", stderr(&out));
        let result = common::f32s(&std::fs::read(dir.path().join("result.bin")).unwrap());
        assert_eq!(result.len(), 1024);
        for (i, v) in result.iter().enumerate() {
            let want = if i < 1000 { i as f32 * 2.0 } else { -1.0 };
            assert_eq!(*v, want, "element {i} with {threadgroup:?}");
        }
    }
}

#[test]
#[cfg(feature = "runner")] // exercises `run`/`render`/`test`
fn translation_run_reports_missing_buffers() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "k.metal", KERNEL);
    let out = msl2wgsl(&[
        "run", &file, "--entry", "twice", "--grid", "4", "--read", "7=x.bin",
    ]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("[[buffer(7)]]"), "{}", stderr(&out));
    if !common::has_gpu() {
        return;
    }
    let out = msl2wgsl(&[
        "run",
        &file,
        "--entry",
        "twice",
        "--grid",
        "4",
        "--buffer",
        "1=zeros:16",
    ]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("`input` [[buffer(0)]]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn translation_conformance_cases_pass() {
    if !common::has_gpu() {
        return;
    }
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cases");
    let out = msl2wgsl(&["test", &cases.to_string_lossy()]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    let last = text.lines().last().unwrap_or("");
    assert!(last.ends_with(" passed, 0 failed"), "{text}");
}

/// A full-screen triangle from `vertex_id` with a uv gradient, tinted by a
/// `constant` buffer, plus a second attachment holding pixel positions; and
/// a triangle from a `[[stage_in]]` vertex buffer.
#[cfg(feature = "runner")]
const RENDER: &str = "#include <metal_stdlib>
using namespace metal;

struct VOut {
    float4 position [[position]];
    float2 uv;
};

vertex VOut fullscreen(uint vid [[vertex_id]]) {
    float2 p = float2(float((vid << 1) & 2), float(vid & 2)) * 2.0 - 1.0;
    VOut o;
    o.position = float4(p, 0.0, 1.0);
    o.uv = float2(p.x * 0.5 + 0.5, 0.5 - p.y * 0.5);
    return o;
}

struct FOut {
    float4 color [[color(0)]];
    uint4 where [[color(1)]];
};

fragment FOut shade(VOut in [[stage_in]], constant float4& tint [[buffer(0)]]) {
    FOut o;
    o.color = float4(in.uv, 0.5, 1.0) * tint;
    o.where = uint4(uint(in.position.x), uint(in.position.y), 7, 255);
    return o;
}

struct VIn {
    float2 position [[attribute(0)]];
    float3 color [[attribute(1)]];
};

struct Coloured {
    float4 position [[position]];
    float3 color;
};

vertex Coloured coloured(VIn in [[stage_in]]) {
    return Coloured { float4(in.position, 0.0, 1.0), in.color };
}

fragment float4 plain(Coloured in [[stage_in]]) {
    return float4(in.color, 1.0);
}
";

/// `render` of `pair` (vertex, fragment) into an 8x4 `out.png` drawing 3
/// vertices, then `extra`.
#[cfg(feature = "runner")]
fn render_args<'a>(file: &'a str, pair: [&'a str; 2], extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["render", file, "--vertex", pair[0], "--fragment", pair[1]];
    args.extend(["--size", "8x4", "--vertex-count", "3", "-o", "out.png"]);
    args.extend(extra);
    args
}

#[cfg(feature = "runner")]
const SHADE: [&str; 2] = ["fullscreen", "shade"];

#[test]
#[cfg(feature = "runner")] // exercises `run`/`render`/`test`
fn render_usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "r.metal", RENDER);
    let bad: &[&[&str]] = &[
        &["--size", "0x4"],
        &["--size", "8"],
        &["--vertex-count", "-1"],
        &["--instance-count", "x"],
        &["--clear", "1,2,3"],
        &["--clear", "0,0,0,nan"],
        &["--format", "rgba9unorm"],
        &["--format", "x=rgba8unorm"],
        &["--vertex-buffer", "0="],
        &["--fragment-buffer", "a=x"],
        &["--texture", "1=empty:0x1"],
        &[
            "--fragment-buffer",
            "0=zeros:16",
            "--fragment-buffer",
            "0=zeros:16",
        ],
    ];
    for extra in bad {
        assert_exit(&in_dir(dir.path(), &render_args(&file, SHADE, extra)), 2);
    }
    for missing in ["--vertex", "--size", "--vertex-count", "-o"] {
        let mut args = render_args(&file, SHADE, &[]);
        let at = args.iter().position(|a| *a == missing).unwrap();
        args.drain(at..at + 2);
        assert_exit(&in_dir(dir.path(), &args), 2);
    }
    assert!(!dir.path().join("out.png").exists());
    assert_exit(&msl2wgsl(&["render", "--help"]), 0);
    assert!(stdout(&msl2wgsl(&["--help"])).contains("render"));
}

#[test]
#[cfg(feature = "runner")] // exercises `run`/`render`/`test`
fn render_unreadable_inputs_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    assert_exit(&in_dir(dir.path(), &render_args("no.metal", SHADE, &[])), 1);
    let file = write(dir.path(), "r.metal", RENDER);
    let out = in_dir(
        dir.path(),
        &render_args(&file, SHADE, &["--vertex-buffer", "0=no.bin"]),
    );
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("no.bin"), "{}", stderr(&out));
}

#[test]
#[cfg(feature = "runner")] // exercises `run`/`render`/`test`
fn translation_render_checks_functions_and_targets() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "r.metal", RENDER);
    let out = in_dir(
        dir.path(),
        &render_args(&file, SHADE, &["--format", "3=r8unorm"]),
    );
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("[[color(3)]]"), "{}", stderr(&out));
    for (pair, message) in [
        (["nowhere", "shade"], "`nowhere`"),
        (["shade", "shade"], "not a vertex function"),
        (["fullscreen", "coloured"], "not a fragment function"),
    ] {
        let out = in_dir(dir.path(), &render_args(&file, pair, &[]));
        assert_exit(&out, 1);
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
    }
    assert!(!dir.path().join("out.png").exists());
}

/// Checks an 8x4 RGBA PNG against `want(x, y)` to one 8-bit step.
#[cfg(feature = "runner")]
fn check_png(path: &Path, want: impl Fn(f32, f32) -> [f32; 4]) {
    let image = msl2wgsl::runner::TextureData::from_png(path).unwrap();
    assert_eq!((image.width, image.height), (8, 4));
    for (i, got) in image.data.chunks(4).enumerate() {
        let want = want((i % 8) as f32, (i / 8) as f32);
        for (g, w) in got.iter().zip(want) {
            let diff = (i32::from(*g) - (w * 255.0).round() as i32).abs();
            assert!(
                diff <= 1,
                "{}: pixel {i} is {got:?}, want {want:?}",
                path.display()
            );
        }
    }
}

#[cfg(feature = "runner")]
#[test]
fn translation_render_to_png() {
    if !common::has_gpu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "r.metal", RENDER);
    let tint = [1.0f32, 0.5, 1.0, 1.0];
    std::fs::write(dir.path().join("tint.bin"), common::f32_bytes(&tint)).unwrap();
    let extra = ["--fragment-buffer", "0=tint.bin"];
    assert_exit(&in_dir(dir.path(), &render_args(&file, SHADE, &extra)), 0);
    let uv = |x: f32, y: f32| [(x + 0.5) / 8.0, (y + 0.5) / 4.0];
    check_png(&dir.path().join("out.png"), |x, y| {
        [uv(x, y)[0] * tint[0], uv(x, y)[1] * tint[1], 0.5, 1.0]
    });
    // Attachment 1 (uint4, rgba8uint) holds the pixel's position.
    check_png(&dir.path().join("out.1.png"), |x, y| {
        [x / 255.0, y / 255.0, 7.0 / 255.0, 1.0]
    });
    // [[stage_in]] from vertex buffer 0 (float2 position, float3 colour):
    // a triangle covering the target, red, green and blue at its corners.
    let corners = [
        [-1.0f32, -1.0, 1.0, 0.0, 0.0],
        [3.0, -1.0, 0.0, 1.0, 0.0],
        [-1.0, 3.0, 0.0, 0.0, 1.0],
    ];
    std::fs::write(
        dir.path().join("v.bin"),
        common::f32_bytes(&corners.concat()),
    )
    .unwrap();
    let extra = ["--vertex-buffer", "0=v.bin", "--clear", "0,0,0,1"];
    let args = render_args(&file, ["coloured", "plain"], &extra);
    assert_exit(&in_dir(dir.path(), &args), 0);
    check_png(&dir.path().join("out.png"), |x, y| {
        let [u, v] = uv(x, y);
        // Barycentrics of the pixel centre: (u, 1 - v) spans half of each edge.
        let (g, b) = (u / 2.0, (1.0 - v) / 2.0);
        [1.0 - g - b, g, b, 1.0]
    });
}

#[test]
fn binding_map_flag_usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "k.metal", KERNEL);
    write(
        dir.path(),
        "bad.json",
        r#"{"twice": {"buffer": {"0": {"group": "x"}}}}"#,
    );
    for args in [
        vec![file.as_str(), "--binding-map", "no-such.json"],
        vec!["reflect", &file, "--binding-map", "bad.json"],
        vec![
            "run",
            &file,
            "--entry",
            "twice",
            "--grid",
            "4",
            "--binding-map",
            "bad.json",
        ],
    ] {
        let out = in_dir(dir.path(), &args);
        assert_exit(&out, 2);
        assert!(stderr(&out).contains("--binding-map"), "{}", stderr(&out));
    }
}

#[test]
fn translation_binding_map_moves_bindings_and_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "k.metal", KERNEL);
    let map = r#"{"twice": {"buffer": {"0": {"group": 1, "binding": 3},
                                      "1": {"group": 2, "binding": 0}}}}"#;
    write(dir.path(), "map.json", map);
    let out = in_dir(dir.path(), &[&file, "--binding-map", "map.json"]);
    assert_exit(&out, 0);
    let wgsl = stdout(&out);
    assert!(wgsl.contains("@group(1) @binding(3)"), "{wgsl}");
    assert!(wgsl.contains("@group(2) @binding(0)"), "{wgsl}");
    let out = in_dir(dir.path(), &["reflect", &file, "--binding-map", "map.json"]);
    assert_exit(&out, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let args = &json["functions"][0]["arguments"];
    assert_eq!(args[0]["binding"]["group"], 1, "{json}");
    assert_eq!(args[0]["binding"]["binding"], 3, "{json}");
    // A map that puts both buffers in one place is a located error.
    let clash = r#"{"twice": {"buffer": {"1": {"group": 0, "binding": 0}}}}"#;
    write(dir.path(), "clash.json", clash);
    let out = in_dir(dir.path(), &[&file, "--binding-map", "clash.json"]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("k.metal:"), "{}", stderr(&out));
    if !common::has_gpu() {
        return;
    }
    let input: Vec<u8> = (0..16).flat_map(|i| (i as f32).to_le_bytes()).collect();
    std::fs::write(dir.path().join("in.bin"), &input).unwrap();
    let args = [
        "run",
        &file,
        "--entry",
        "twice",
        "--grid",
        "16",
        "--binding-map",
        "map.json",
        "--buffer",
        "0=in.bin",
        "--buffer",
        "1=zeros:64",
        "--read",
        "1=out.bin",
    ];
    let out = in_dir(dir.path(), &args);
    assert_exit(&out, 0);
    let result = common::f32s(&std::fs::read(dir.path().join("out.bin")).unwrap());
    let want: Vec<f32> = (0..16).map(|i| i as f32 * 2.0).collect();
    assert_eq!(result, want);
}

#[test]
fn translation_platform_flag_picks_the_predefined_macro() {
    let dir = tempfile::tempdir().unwrap();
    let src = "#ifndef __METAL_IOS__\n#error not iOS\n#endif\nkernel void k(device float* a [[buffer(0)]]) { a[0] = 1.0f; }\n";
    let file = write(dir.path(), "p.metal", src);
    let out = in_dir(dir.path(), &[&file, "--platform", "ios"]);
    assert_exit(&out, 0);
    let out = in_dir(dir.path(), &[&file]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("p.metal:2:"), "{}", stderr(&out));
    let out = in_dir(dir.path(), &[&file, "--platform", "android"]);
    assert_exit(&out, 2);
}

#[cfg(feature = "runner")]
#[test]
fn translation_render_sets_function_constants() {
    let dir = tempfile::tempdir().unwrap();
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
        constant float level [[function_constant(3)]];\n\
        struct V { float4 p [[position]]; };\n\
        vertex V cover(uint vid [[vertex_id]]) { V o; o.p = float4(vid == 1 ? 3.0 : -1.0, vid == 2 ? 3.0 : -1.0, 0.0, 1.0); return o; }\n\
        fragment float4 grey() { return float4(level, level, level, 1.0); }\n";
    let file = write(dir.path(), "c.metal", src);
    let twice = render_args(
        &file,
        ["cover", "grey"],
        &["--constant", "3=0.2", "--constant", "3=0.4"],
    );
    assert_exit(&in_dir(dir.path(), &twice), 2);
    if !common::has_gpu() {
        return;
    }
    let missing = in_dir(dir.path(), &render_args(&file, ["cover", "grey"], &[]));
    assert_exit(&missing, 1);
    assert!(stderr(&missing).contains("level"), "{}", stderr(&missing));
    let args = render_args(&file, ["cover", "grey"], &["--constant", "3=0.2"]);
    assert_exit(&in_dir(dir.path(), &args), 0);
    check_png(&dir.path().join("out.png"), |_, _| [0.2, 0.2, 0.2, 1.0]);
}

#[test]
fn translation_out_dir_translates_what_it_can() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "twice.metal", KERNEL);
    let bad = write(dir.path(), "broken.metal", BROKEN);
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let same = write(&dir.path().join("sub"), "twice.metal", KERNEL);
    let out = in_dir(dir.path(), &[&good, &bad, "--out-dir", "wgsl"]);
    assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(
        err.contains("broken.metal:4:") && err.contains("1 of 2 files failed"),
        "{err}"
    );
    let wgsl = std::fs::read_to_string(dir.path().join("wgsl/twice.wgsl")).unwrap();
    assert!(wgsl.contains("fn twice("), "{wgsl}");
    assert!(!dir.path().join("wgsl/broken.wgsl").exists());
    // Usage errors: several files without --out-dir, -o with it, two
    // inputs writing one output, standard input.
    for args in [
        vec![good.as_str(), bad.as_str()],
        vec![good.as_str(), "-o", "x.wgsl", "--out-dir", "wgsl"],
        vec![good.as_str(), same.as_str(), "--out-dir", "wgsl"],
        vec!["-", "--out-dir", "wgsl"],
    ] {
        assert_exit(&in_dir(dir.path(), &args), 2);
    }
    assert_exit(&in_dir(dir.path(), &[&good, &same, "--out-dir", "w2"]), 2);
    assert!(
        !dir.path().join("w2").exists(),
        "nothing is created on a usage error"
    );
}

#[test]
fn invalid_utf8_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("latin.metal"),
        b"kernel void k() {}\n// caf\xe9\n",
    )
    .unwrap();
    let out = in_dir(dir.path(), &["latin.metal"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).starts_with("latin.metal:2:7: error: invalid UTF-8 (byte 0xE9)"),
        "{}",
        stderr(&out)
    );
    let lib = msl2wgsl::Library::from_file(dir.path().join("latin.metal"), &Default::default());
    let text = lib.unwrap_err().render();
    assert!(
        text.contains("latin.metal:2:7: error: invalid UTF-8"),
        "{text}"
    );
}

/// A usage error that clap finds (an unknown option, a missing value)
/// honours `--error-format json`: one JSON diagnostic on stderr, exit 2.
#[test]
fn usage_errors_honour_error_format_json() {
    let cases: [&[&str]; 4] = [
        &["k.metal", "--error-format", "json", "--no-such-option"],
        &["--error-format=json", "k.metal", "--threadgroup-size", "x"],
        &["reflect", "--error-format", "json", "k.metal", "--bogus"],
        &[
            "render",
            "k.metal",
            "--error-format",
            "json",
            "--vertex",
            "v",
        ],
    ];
    for args in cases {
        let out = msl2wgsl(args);
        assert_exit(&out, 2);
        let text = stderr(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: one JSON line, not:\n{text}");
        let json: serde_json::Value = serde_json::from_str(lines[0])
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}):\n{text}"));
        assert_eq!(json["code"], "E0007", "{args:?}: {json}");
        assert_eq!(json["severity"], "error", "{args:?}: {json}");
        let message = json["message"].as_str().unwrap_or_default();
        assert!(
            !message.is_empty() && !message.starts_with("error:"),
            "{json}"
        );
    }
    // Without it, clap's own text.
    let out = msl2wgsl(&["k.metal", "--no-such-option"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).starts_with("error: "), "{}", stderr(&out));
    // Help is not an error, whatever the format.
    let out = msl2wgsl(&["--error-format", "json", "--help"]);
    assert_exit(&out, 0);
    assert!(stdout(&out).contains("Usage:"));
}

/// `render --help` spells zeroed buffers and empty textures as the
/// parsers take them.
#[test]
fn render_help_gives_the_zero_buffer_syntax() {
    let out = msl2wgsl(&["render", "--help"]);
    assert_exit(&out, 0);
    let help = stdout(&out);
    for spelling in [
        "--vertex-buffer <N=PATH|N=zeros:BYTES>",
        "--fragment-buffer <N=PATH|N=zeros:BYTES>",
        "--texture <N=PATH.png|N=empty:WxH[:FORMAT]>",
    ] {
        assert!(help.contains(spelling), "{spelling} not in:\n{help}");
    }
}

/// `run --buffer 7=...` for a kernel with no `[[buffer(7)]]` is an error
/// that names the kernel's buffer indices (a typo would otherwise leave
/// the real argument unset, or silently unused).
#[cfg(feature = "runner")]
#[test]
fn translation_run_refuses_a_buffer_the_kernel_does_not_have() {
    if !common::has_gpu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "k.metal", KERNEL);
    let run = |extra: &[&str]| {
        let base = ["run", file.as_str(), "--entry", "twice", "--grid", "4"];
        let given = ["--buffer", "0=zeros:16", "--buffer", "1=zeros:16"];
        in_dir(dir.path(), &[&base[..], &given, extra].concat())
    };
    let out = run(&["--buffer", "7=zeros:16"]);
    assert_exit(&out, 1);
    let text = stderr(&out);
    assert!(
        text.contains("`twice` has no [[buffer(7)]] argument")
            && text.contains("[[buffer(0)]], [[buffer(1)]]"),
        "{text}"
    );
    assert_exit(&run(&[]), 0);
}

/// `run` and `render` take `--platform` and `--half` as the translating
/// commands do (the README says every command takes them).
#[cfg(feature = "runner")]
#[test]
fn translation_run_and_render_take_platform_and_half() {
    let dir = tempfile::tempdir().unwrap();
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
        #ifdef __METAL_IOS__\n#define LEVEL 0.6h\n#else\n#define LEVEL 0.2h\n#endif\n\
        kernel void k(device float* a [[buffer(0)]]) { a[0] = float(half(LEVEL)); }\n\
        struct V { float4 p [[position]]; };\n\
        vertex V cover(uint vid [[vertex_id]]) { V o; o.p = float4(vid == 1 ? 3.0 : -1.0, vid == 2 ? 3.0 : -1.0, 0.0, 1.0); return o; }\n\
        fragment half4 grey() { return half4(LEVEL, LEVEL, LEVEL, 1.0h); }\n";
    let file = write(dir.path(), "p.metal", src);
    for command in ["run", "render"] {
        let out = msl2wgsl(&[command, "--help"]);
        for flag in ["--platform <PLATFORM>", "--half <HALF>"] {
            assert!(stdout(&out).contains(flag), "{command} --help lacks {flag}");
        }
    }
    if !common::has_gpu() {
        return;
    }
    for (platform, level) in [("macos", 0.2f32), ("ios", 0.6)] {
        for half in ["f32", "f16"] {
            let run = [
                "run",
                &file,
                "--entry",
                "k",
                "--grid",
                "1",
                "--buffer",
                "0=zeros:4",
                "--read",
                "0=a.bin",
                "--platform",
                platform,
                "--half",
                half,
            ];
            assert_exit(&in_dir(dir.path(), &run), 0);
            let bytes = std::fs::read(dir.path().join("a.bin")).unwrap();
            let got = f32::from_le_bytes(bytes[..4].try_into().unwrap());
            assert!((got - level).abs() < 1e-3, "{platform} {half}: {got}");
            let extra = ["--platform", platform, "--half", half];
            let args = render_args(&file, ["cover", "grey"], &extra);
            assert_exit(&in_dir(dir.path(), &args), 0);
            check_png(&dir.path().join("out.png"), |_, _| {
                [level, level, level, 1.0]
            });
        }
    }
}

/// Xcode's "Game" template through `render`: `--attribute 1=1` reads the
/// texture coordinates from vertex buffer 1, as the template's vertex
/// descriptor does, the positions from buffer 0; the fragment function's
/// uniforms, which it never reads, need no `--fragment-buffer`. The image
/// is the CPU's (`common::game`).
#[cfg(feature = "runner")]
#[test]
fn translation_render_draws_the_game_template_from_two_vertex_buffers() {
    use common::game;
    let dir = tempfile::tempdir().unwrap();
    let (positions, uvs) = game::quad();
    std::fs::write(dir.path().join("positions.bin"), positions).unwrap();
    std::fs::write(dir.path().join("uvs.bin"), uvs).unwrap();
    std::fs::write(dir.path().join("uniforms.bin"), game::uniforms()).unwrap();
    let png = game::colour_map().to_png_bytes().unwrap();
    std::fs::write(dir.path().join("map.png"), png).unwrap();
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/render/game/Shaders.metal"
    );
    let render = |extra: &[&str]| {
        let mut args = vec!["render", file, "--vertex", "vertexShader"];
        args.extend(["--fragment", "fragmentShader", "--size", "16x16"]);
        args.extend([
            "--vertex-count",
            "6",
            "-o",
            "out.png",
            "--texture",
            "0=map.png",
        ]);
        args.extend(["--vertex-buffer", "0=positions.bin"]);
        args.extend(["--vertex-buffer", "2=uniforms.bin"]);
        args.extend(extra);
        in_dir(dir.path(), &args)
    };
    // Attributes and buffers the functions do not have are refused.
    let out = render(&["--attribute", "5=1", "--vertex-buffer", "1=uvs.bin"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains(
            "--attribute 5=1: `vertexShader` has no [[attribute(5)]] (its attributes: 0, 1)"
        ),
        "{}",
        stderr(&out)
    );
    let out = render(&["--attribute", "1=1", "--vertex-buffer", "3=uvs.bin"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("--vertex-buffer 3: `vertexShader` has no [[buffer(3)]] argument")
            && stderr(&out).contains("(did you mean --vertex-buffer 2?)"),
        "{}",
        stderr(&out)
    );
    let out = render(&[
        "--attribute",
        "1=1",
        "--vertex-buffer",
        "1=uvs.bin",
        "--fragment-buffer",
        "3=uniforms.bin",
    ]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("--fragment-buffer 3: `fragmentShader` has no [[buffer(3)]] argument; it has [[buffer(2)]]"),
        "{}",
        stderr(&out)
    );
    if !common::has_gpu() {
        return;
    }
    // Without its buffer, the attribute's absence is named.
    let out = render(&["--attribute", "1=1"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("`texCoord` [[attribute(1)]] from vertex buffer 1"),
        "{}",
        stderr(&out)
    );
    let out = render(&["--attribute", "1=1", "--vertex-buffer", "1=uvs.bin"]);
    assert_exit(&out, 0);
    let image = msl2wgsl::runner::TextureData::from_png(dir.path().join("out.png")).unwrap();
    game::check(&image.data, "msl2wgsl render");
}

/// `run` needs no buffer for an argument the kernel never reads (Metal's
/// `isActive` is false), a `constant` reference included; one it reads is
/// still required, and a missing fragment buffer names its stage.
#[cfg(feature = "runner")]
#[test]
fn translation_run_and_render_need_no_buffer_for_inactive_arguments() {
    if !common::has_gpu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
        kernel void k(device float* out [[buffer(0)]], constant float4x4& unused [[buffer(1)]],\n\
                      constant float& scale [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n\
            out[i] = scale;\n}\n\
        struct V { float4 p [[position]]; };\n\
        vertex V cover(uint vid [[vertex_id]]) { V o; o.p = float4(vid == 1 ? 3.0 : -1.0, vid == 2 ? 3.0 : -1.0, 0.0, 1.0); return o; }\n\
        fragment float4 tinted(constant float4& unused [[buffer(0)]], constant float4& tint [[buffer(1)]]) { return tint; }\n";
    let file = write(dir.path(), "a.metal", src);
    std::fs::write(dir.path().join("scale.bin"), 0.5f32.to_le_bytes()).unwrap();
    let run = |extra: &[&str]| {
        let base = ["run", file.as_str(), "--entry", "k", "--grid", "4"];
        let given = ["--buffer", "0=zeros:16", "--read", "0=out.bin"];
        in_dir(dir.path(), &[&base[..], &given, extra].concat())
    };
    assert_exit(&run(&["--buffer", "2=scale.bin"]), 0);
    let out = std::fs::read(dir.path().join("out.bin")).unwrap();
    assert_eq!(common::f32s(&out), [0.5; 4]);
    let out = run(&[]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("no buffer given for argument `scale` [[buffer(2)]]"),
        "{}",
        stderr(&out)
    );
    let tint = common::f32_bytes(&[0.0, 1.0, 0.0, 1.0]);
    std::fs::write(dir.path().join("tint.bin"), tint).unwrap();
    let out = in_dir(
        dir.path(),
        &render_args(
            &file,
            ["cover", "tinted"],
            &["--fragment-buffer", "1=tint.bin"],
        ),
    );
    assert_exit(&out, 0);
    check_png(&dir.path().join("out.png"), |_, _| [0.0, 1.0, 0.0, 1.0]);
    let out = in_dir(dir.path(), &render_args(&file, ["cover", "tinted"], &[]));
    assert_exit(&out, 1);
    assert!(
        stderr(&out)
            .contains("no buffer given for the fragment function's argument `tint` [[buffer(1)]]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn subgroup_width_32_gives_native_matrices_per_lane_fragments() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "m.metal",
        "#include <metal_simdgroup_matrix>\nusing namespace metal;\n\
         kernel void mm(device const float* a [[buffer(0)]], device float* d [[buffer(1)]]) {\n\
         simdgroup_float8x8 m;\n simdgroup_load(m, a);\n simdgroup_multiply(m, m, m);\n simdgroup_store(m, d);\n}\n",
    );
    let wgsl = |extra: &[&str]| {
        let mut args = vec![file.as_str(), "--simd", "native", "--target", "wgpu"];
        args.extend_from_slice(extra);
        let out = msl2wgsl(&args);
        assert_exit(&out, 0);
        stdout(&out)
    };
    let whole = "array<vec2<f32>, 32>";
    let per_lane = wgsl(&["--subgroup-width", "32"]);
    assert!(per_lane.contains("subgroupShuffle"), "{per_lane}");
    assert!(!per_lane.contains(whole), "{per_lane}");
    for extra in [&[][..], &["--subgroup-width", "8"][..]] {
        let whole_matrices = wgsl(extra);
        assert!(whole_matrices.contains(whole), "{whole_matrices}");
    }
    let out = msl2wgsl(&[&file, "--subgroup-width", "0"]);
    assert_exit(&out, 2);
}

/// `run --stage-in DESC.json --stage-in-region ORIGIN:SIZE`: a kernel's
/// `[[stage_in]]` read as the descriptor says (a `uchar4Normalized` in
/// buffer 1, per thread in x, from the region's origin on), and
/// `reflect --stage-in` reporting it.
#[test]
#[cfg(feature = "runner")]
fn run_takes_a_stage_input_descriptor_and_region() {
    if !common::has_gpu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "k.metal",
        "#include <metal_stdlib>\nusing namespace metal;\n\
         struct In { float4 c [[attribute(0)]]; };\n\
         kernel void k(In in [[stage_in]], uint i [[thread_position_in_grid]],\n\
                       uint origin [[grid_origin]], device float* out [[buffer(0)]]) {\n\
             out[i] = in.c.y + float(origin);\n\
         }\n",
    );
    write(
        dir.path(),
        "desc.json",
        r#"{"attributes": {"0": {"format": "uchar4Normalized", "offset": 0, "bufferIndex": 1}},
            "layouts": {"1": {"stride": 4, "stepFunction": "threadPositionInGridX"}}}"#,
    );
    let texels: Vec<u8> = (0..6u8).flat_map(|i| [0, i * 51, 0, 0]).collect();
    std::fs::write(dir.path().join("in.bin"), texels).unwrap();
    let out = in_dir(
        dir.path(),
        &[
            "run",
            &file,
            "--entry",
            "k",
            "--grid",
            "4",
            "--stage-in",
            "desc.json",
            "--stage-in-region",
            "2:4",
            "--buffer",
            "0=zeros:16",
            "--buffer",
            "1=in.bin",
            "--read",
            "0=out.bin",
        ],
    );
    assert_exit(&out, 0);
    let got = common::f32s(&std::fs::read(dir.path().join("out.bin")).unwrap());
    let want: Vec<f32> = (0..4)
        .map(|i| ((i + 2) * 51) as f32 / 255.0 + 2.0)
        .collect();
    // The normalized byte is within WGSL's 2.5 ULP of the division.
    assert_eq!(got.len(), 4);
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-6, "{got:?} vs {want:?}");
    }
    let out = in_dir(dir.path(), &["reflect", &file, "--stage-in", "desc.json"]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out).contains("\"format\": \"uchar4Normalized\""),
        "{}",
        stdout(&out)
    );
}

/// A vertex function without a `[[position]]` output, capturing its
/// vertex and instance numbers.
const CAPTURE_IDS: &str = "#include <metal_stdlib>
using namespace metal;
vertex void capture(device uint2* out [[buffer(0)]], uint v [[vertex_id]],
                    uint i [[instance_id]], uint first [[base_vertex]]) {
    out[(v - first) + 4 * i] = uint2(v, i);
}
";

/// `run --vertex-count` draws a `vertex void` function: vertices from
/// `--vertex-start`, instances from `--base-instance`; a grid is refused.
#[test]
#[cfg(feature = "runner")] // exercises `run`
fn translation_run_draws_a_vertex_function_without_position() {
    if !common::has_gpu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "v.metal", CAPTURE_IDS);
    let out = in_dir(
        dir.path(),
        &[
            "run",
            &file,
            "--entry",
            "capture",
            "--vertex-count",
            "3",
            "--instance-count",
            "2",
            "--vertex-start",
            "7",
            "--base-instance",
            "1",
            "--buffer",
            "0=zeros:96",
            "--read",
            "0=out.bin",
        ],
    );
    assert_exit(&out, 0);
    let got = common::u32s(&std::fs::read(dir.path().join("out.bin")).unwrap());
    let mut want = vec![0u32; 24];
    for i in 1..3u32 {
        for j in 0..3u32 {
            let slot = (j + 4 * i) as usize;
            want[2 * slot..2 * slot + 2].copy_from_slice(&[7 + j, i]);
        }
    }
    assert_eq!(got, want);
    let grid = in_dir(
        dir.path(),
        &["run", &file, "--entry", "capture", "--grid", "4"],
    );
    assert_exit(&grid, 2);
    assert!(
        stderr(&grid).contains("give --vertex-count"),
        "{}",
        stderr(&grid)
    );
}
