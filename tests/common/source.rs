//! Translating small MSL sources in tests, and checking where their first
//! error points.

use msl2wgsl::{Library, Options};

/// What every short test source starts with (two lines).
pub const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

/// Translates `body` after [`PRELUDE`]; it must succeed.
pub fn translate_body(body: &str) -> Library {
    let src = format!("{PRELUDE}{body}");
    Library::from_source("t.metal", &src, &Options::default())
        .unwrap_or_else(|f| panic!("{}", f.render()))
}

/// Translates `body` after [`PRELUDE`] and returns the rendered
/// diagnostics, which must be a failure.
pub fn fails(body: &str) -> String {
    let src = format!("{PRELUDE}{body}");
    match Library::from_source("t.metal", &src, &Options::default()) {
        Ok(lib) => panic!("expected an error, got WGSL:\n{}", lib.wgsl()),
        Err(f) => f.render(),
    }
}

/// Asserts the first diagnostic is `t.metal:LINE:COL: error: MESSAGE...`,
/// where LINE:COL is where the `nth` `at` (from 0) starts in `body`.
pub fn assert_error(body: &str, at: &str, nth: usize, message: &str) -> String {
    let offset = body
        .match_indices(at)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{at}` not in the test source"))
        .0;
    let before = &body[..offset];
    let line = before.matches('\n').count() + 3;
    let col = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    let text = fails(body);
    let want = format!("t.metal:{line}:{col}: error: {message}");
    assert!(
        text.lines().next().unwrap_or_default().starts_with(&want),
        "want `{want}`\n got:\n{text}"
    );
    text
}

/// The code of the first diagnostic of `body` (after [`PRELUDE`]), which
/// must fail.
pub fn first_code(body: &str) -> msl2wgsl::diagnostics::Code {
    let src = format!("{PRELUDE}{body}");
    match Library::from_source("t.metal", &src, &Options::default()) {
        Ok(lib) => panic!("expected an error, got:\n{}", lib.wgsl()),
        Err(f) => f.diagnostics.0[0].code(),
    }
}

/// Runs kernel `entry` of `body` (after [`PRELUDE`]) over `n` threads in
/// threadgroups of `group` with `buffers`, or `None` without a GPU.
#[cfg(feature = "runner")]
pub fn run_body(
    body: &str,
    entry: &str,
    (n, group): (u32, u32),
    buffers: Vec<(u32, Vec<u8>)>,
) -> Option<std::collections::BTreeMap<u32, Vec<u8>>> {
    use msl2wgsl::runner::{run_kernel, Dispatch};
    let gpu = super::gpu()?;
    let src = format!("{PRELUDE}{body}");
    let dispatch = Dispatch::Threads {
        grid: [n, 1, 1],
        threadgroup: [group, 1, 1],
    };
    Some(
        run_kernel(
            gpu,
            "t.metal",
            &src,
            &Options::default(),
            entry,
            &dispatch,
            &buffers.into_iter().collect(),
        )
        .unwrap_or_else(|e| panic!("{entry}: {e}")),
    )
}

/// Buffer `read` after [`run_body`], as `f32`s; `None` without a GPU.
#[cfg(feature = "runner")]
pub fn run_body_f32s(
    body: &str,
    entry: &str,
    threads: (u32, u32),
    buffers: Vec<(u32, Vec<u8>)>,
    read: u32,
) -> Option<Vec<f32>> {
    let out = run_body(body, entry, threads, buffers)?;
    Some(super::f32s(&out[&read]))
}

/// Runs kernel `k` of `body` (after [`PRELUDE`]) over one thread per
/// element of `xs`, with `xs` in buffer 0 and as many floats in buffer 1;
/// buffer 1 afterwards, or `None` without a GPU.
#[cfg(feature = "runner")]
pub fn run_floats(body: &str, xs: &[f32]) -> Option<Vec<f32>> {
    let buffers = vec![(0, super::f32_bytes(xs)), (1, vec![0; 4 * xs.len()])];
    run_body_f32s(body, "k", (xs.len() as u32, 16), buffers, 1)
}
