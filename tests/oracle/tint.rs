//! The Tint round trip (issue #18): each Tint end-to-end test ships a WGSL
//! source `X.wgsl` and the MSL Tint made of it, `X.wgsl.expected.msl`. The
//! WGSL runs as it is; the MSL runs through msl2wgsl; every buffer must
//! come out the same.

use super::program::{self, Entry};
use super::roundtrip::{self, Outcome};
use super::translated::{self, kernel_names};
use msl2wgsl::reflect::Argument;
use msl2wgsl::runner::Gpu;
use std::path::{Path, PathBuf};

/// Threadgroups dispatched on both sides. One: Tint's tests are written for
/// any grid, and with more the invocations of many of them write the same
/// locations with different values (a race whose winner is not defined).
pub const GROUPS: [u32; 3] = [1, 1, 1];

/// Tint's MSL name of the table of storage buffer sizes it reads
/// `arrayLength` from: part of the ABI between Tint and its host, as the
/// other argument names are.
const BUFFER_SIZES: &str = "tint_storage_buffer_sizes";
/// Its slot in Tint's tests (where the name is renamed too, the slot says).
const BUFFER_SIZES_SLOT: u32 = 30;

/// One result line.
#[derive(Debug)]
pub struct Record {
    /// The WGSL file, relative to the Tint test root.
    pub file: String,
    /// The WGSL entry point (`-` when the file has none to run).
    pub entry: String,
    /// What happened.
    pub outcome: Outcome,
}

/// `../shared/corpus/google__dawn/test/tint` next to the crate, if present.
pub fn root() -> Option<PathBuf> {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/google__dawn/test/tint");
    root.is_dir().then_some(root)
}

/// Every `.wgsl` file under `root`, sorted.
pub fn tests(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "wgsl") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Runs every compute entry point of the test `wgsl_path`.
pub fn check(gpu: &Gpu, root: &Path, wgsl_path: &Path) -> Vec<Record> {
    let file = wgsl_path
        .strip_prefix(root)
        .unwrap_or(wgsl_path)
        .display()
        .to_string();
    let record = |entry: &str, outcome| Record {
        file: file.clone(),
        entry: entry.to_string(),
        outcome,
    };
    let not = |why: &str| vec![record("-", Outcome::NotCandidate(why.to_string()))];
    let msl_path = PathBuf::from(format!("{}.expected.msl", wgsl_path.display()));
    let (Ok(wgsl), Ok(msl)) = (
        std::fs::read_to_string(wgsl_path),
        std::fs::read_to_string(&msl_path),
    ) else {
        return not("no expected MSL");
    };
    let msl = without_diagnostics(&msl);
    let program = match program::parse(&wgsl) {
        Ok(p) => p,
        Err(e) if e.starts_with("naga parse") => return not("naga rejects the WGSL (parse)"),
        Err(_) => return not("naga rejects the WGSL (validation)"),
    };
    let entries = program::compute_entries(&program);
    if entries.is_empty() {
        return not("no compute entry point");
    }
    let single = entries.len() == 1;
    entries
        .into_iter()
        .map(|(name, entry)| {
            let outcome = match entry {
                Err(why) => Outcome::NotCandidate(why),
                Ok(entry) => {
                    let text_len = msl.len();
                    let msl = section(&msl, &name);
                    let kernels = kernel_names(&msl);
                    // One kernel in this entry point's unit (or in a file of one
                    // compute entry point): that is it, whatever Tint named it.
                    let single = kernels.len() == 1 && (single || msl.len() < text_len);
                    let kernel = if kernels.contains(&name) {
                        Some(name.clone())
                    } else if single {
                        Some(kernels[0].clone())
                    } else {
                        None
                    };
                    match kernel {
                        None => {
                            Outcome::Skipped("kernel not found in the MSL".into(), name.clone())
                        }
                        Some(k) => {
                            roundtrip::guarded(|| compare(gpu, &file, &wgsl, &msl, &k, &entry))
                        }
                    }
                }
            };
            record(&name, outcome)
        })
        .collect()
}

/// The MSL of an expected file: Tint writes the warnings it gave (`<dawn>/...:
/// warning: code is unreachable` and the source lines it points at) before
/// the MSL.
fn without_diagnostics(text: &str) -> String {
    match text.starts_with("<dawn>") {
        true => text
            .find("#include")
            .map_or(text, |i| &text[i..])
            .to_string(),
        false => text.to_string(),
    }
}

/// The translation unit of entry point `entry`: Tint writes one per entry
/// point into one expected file, each after a header `//\n// NAME\n//`.
fn section(text: &str, entry: &str) -> String {
    let header = format!("//\n// {entry}\n//\n");
    let Some(start) = text.find(&header).map(|i| i + header.len()) else {
        return text.to_string();
    };
    let rest = &text[start..];
    let end = rest
        .match_indices("//\n// ")
        .map(|(i, _)| i)
        .find(|&i| {
            let line = rest[i + 6..].lines().next().unwrap_or_default();
            !line.is_empty()
                && line.chars().all(|c| c.is_alphanumeric() || c == '_')
                && rest[i + 6 + line.len()..].starts_with("\n//\n")
        })
        .unwrap_or(rest.len());
    rest[..end].to_string()
}

/// Runs both sides of one entry point and compares.
fn compare(gpu: &Gpu, file: &str, wgsl: &str, msl: &str, kernel: &str, entry: &Entry) -> Outcome {
    let sizes = entry.runtime_size;
    let extra = |arg: &Argument| -> Option<Vec<u8>> {
        let size = sizes?;
        let len = arg.buffer.as_ref()?.data_size.max(16);
        let sizes = arg.name == BUFFER_SIZES || arg.index == BUFFER_SIZES_SLOT;
        sizes.then(|| size.to_le_bytes().repeat(len as usize / 4))
    };
    let bind = translated::by_name(entry, &extra);
    roundtrip::compare(gpu, file, wgsl, msl, kernel, entry, GROUPS, &bind)
}
