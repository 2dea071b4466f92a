//! One round trip: a WGSL entry point run as it is, and MSL made of it run
//! through msl2wgsl, with the same buffers; the outcome of comparing them.

use super::compare::{first_difference, tolerance};
use super::program::Entry;
use super::translated::{self, Bind, Failed};
use super::wgsl_run::{self, Bound};
use msl2wgsl::reflect::Argument;
use msl2wgsl::runner::Gpu;

/// What happened to one compute entry point of one test.
#[derive(Debug)]
pub enum Outcome {
    /// Not a candidate (no MSL, naga rejects the WGSL, textures, ...).
    NotCandidate(String),
    /// A candidate that could not be compared, with the category and the
    /// detail.
    Skipped(String, String),
    /// Both sides ran and every buffer agrees.
    Equal,
    /// Both sides ran and a buffer differs: the buffer and the first
    /// difference.
    Differ(String),
}

/// Runs `f`, turning a panic (naga's SPIR-V backend has a few on WGSL it
/// validated) into a skip.
pub fn guarded(f: impl FnOnce() -> Outcome) -> Outcome {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let text = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Outcome::Skipped("a panic in wgpu or naga".into(), text)
    })
}

/// Runs `f` with panics not printed (they are counted instead).
pub fn quietly<T>(f: impl FnOnce() -> T) -> T {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let value = f();
    std::panic::set_hook(hook);
    value
}

/// Runs `entry` of `wgsl` and `kernel` of `msl` (buffers bound as `bind`
/// says) over `groups` workgroups, and compares every buffer.
#[allow(clippy::too_many_arguments)]
pub fn compare(
    gpu: &Gpu,
    file: &str,
    wgsl: &str,
    msl: &str,
    kernel: &str,
    entry: &Entry,
    groups: [u32; 3],
    bind: &dyn Fn(&[Argument]) -> Vec<Bind>,
) -> Outcome {
    let bound: Vec<Bound> = entry
        .buffers
        .iter()
        .map(|b| Bound {
            group: b.group,
            binding: b.binding,
            uniform: b.uniform,
            bytes: b.bytes.clone(),
        })
        .collect();
    let expected = match wgsl_run::run(gpu, wgsl, &entry.name, groups, &bound) {
        Ok(out) => out,
        Err(e) => return Outcome::Skipped("the WGSL does not run on wgpu".into(), e),
    };
    let got = match translated::run(gpu, file, msl, kernel, entry, groups, bind) {
        Ok(out) => out,
        Err(Failed::Translate(e)) => return Outcome::Skipped("msl2wgsl rejects the MSL".into(), e),
        Err(Failed::Unmatched(a)) => {
            return Outcome::Skipped("an argument matches no WGSL buffer".into(), a)
        }
        Err(Failed::Run(e)) => return Outcome::Skipped("the translation does not run".into(), e),
    };
    let tol = tolerance(&entry.approximate);
    for ((b, e), g) in entry.buffers.iter().zip(&expected).zip(&got) {
        if let Some(d) = first_difference(e, g, &b.leaves, tol) {
            if std::env::var("MSL2WGSL_ORACLE_DUMP").is_ok() {
                dump(entry, &expected, &got);
            }
            return Outcome::Differ(format!("`{}`: {d}", b.name));
        }
    }
    Outcome::Equal
}

/// Prints every buffer of both sides as words (`MSL2WGSL_ORACLE_DUMP=1`).
fn dump(entry: &Entry, expected: &[Vec<u8>], got: &[Vec<u8>]) {
    let words = |b: &[u8]| -> Vec<String> {
        b.chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                let f = f32::from_le_bytes(w);
                format!("{:08x}({f})", u32::from_le_bytes(w))
            })
            .collect()
    };
    for ((b, e), g) in entry.buffers.iter().zip(expected).zip(got) {
        eprintln!("{} input: {:?}", b.name, words(&b.bytes));
        eprintln!("{} wgsl:  {:?}", b.name, words(e));
        eprintln!("{} msl:   {:?}", b.name, words(g));
    }
}
