//! Conformance cases: an MSL file plus a TOML case file saying which kernel
//! to run, on what inputs, and what the outputs must be.
//!
//! The format is documented for users in `fixtures/cases/README.md`. In short:
//! `entry`, `[dispatch]` (`grid` or `threadgroups`, `threadgroup`),
//! `[[buffer]]` tables (Metal index, element type, contents from `values`,
//! `range`, `random`, `zeros` or `fill`) and `[[expect]]` tables (inline
//! `values` or a reference `formula` over the inputs, tolerances `abs`,
//! `rel`, `ulp`, and an optional `untouched` check).

pub mod browser;
mod case;
pub mod data;
pub mod expr;

use self::case::{ExpectSpec, Expected, InputBuffer};
use self::data::{ElemType, Value};
use super::{run_kernel, translate_kernel, Dispatch, Gpu, RunError};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How many mismatching elements a failure lists.
const SHOWN_MISMATCHES: usize = 5;

/// What happened to one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every expectation held.
    Pass {
        /// Elements compared, over all expectations.
        checked: usize,
    },
    /// The case could not run, or an expectation failed; the message may
    /// span several lines (compiler diagnostics).
    Fail(String),
}

/// The result of one case.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// The case file.
    pub path: PathBuf,
    /// Pass or fail.
    pub outcome: Outcome,
}

impl CaseResult {
    /// True if the case passed.
    pub fn passed(&self) -> bool {
        matches!(self.outcome, Outcome::Pass { .. })
    }
}

/// The results of a set of cases.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// One per case, in the order run.
    pub results: Vec<CaseResult>,
}

impl Report {
    /// Cases that passed.
    pub fn passed(&self) -> usize {
        self.results.iter().filter(|r| r.passed()).count()
    }

    /// Cases that failed.
    pub fn failed(&self) -> usize {
        self.results.len() - self.passed()
    }

    /// The closing line: `N passed, M failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed(), self.failed())
    }

    /// A table with one line per case (the first line of a failure), then
    /// every failure in full, then [`Report::summary`].
    pub fn render(&self) -> String {
        let width = self
            .results
            .iter()
            .map(|r| r.path.display().to_string().len())
            .max()
            .unwrap_or(0);
        let mut out = String::new();
        for r in &self.results {
            let (status, detail) = match &r.outcome {
                Outcome::Pass { checked } => ("PASS", format!("{checked} elements checked")),
                Outcome::Fail(msg) => ("FAIL", msg.lines().next().unwrap_or("").to_string()),
            };
            let _ = writeln!(out, "{status}  {:width$}  {detail}", r.path.display());
        }
        let failures: Vec<_> = self
            .results
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Fail(msg) if msg.trim_end().contains('\n') => Some((r, msg)),
                _ => None,
            })
            .collect();
        for (r, msg) in failures {
            let _ = write!(out, "\n--- {}\n{}\n", r.path.display(), msg.trim_end());
        }
        let _ = write!(out, "\n{}\n", self.summary());
        out
    }
}

/// The case files named by `paths`: a file as it is, a folder as every
/// `*.toml` below it (recursively), sorted by path.
pub fn collect_cases(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found);
            found.sort();
            out.extend(found);
        } else {
            out.push(path.clone());
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
}

/// Runs every case named by `paths` (see [`collect_cases`]) on `gpu`.
///
/// A panic inside one case (a translator bug) fails that case only.
pub fn run_cases(gpu: &Gpu, paths: &[PathBuf]) -> Report {
    let results = collect_cases(paths)
        .into_iter()
        .map(|path| {
            let run =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_case(gpu, &path)));
            run.unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                CaseResult {
                    path,
                    outcome: Outcome::Fail(format!("internal error: panicked: {what}")),
                }
            })
        })
        .collect();
    Report { results }
}

/// Runs one case file.
pub fn run_case(gpu: &Gpu, path: &Path) -> CaseResult {
    let outcome = match try_case(gpu, path) {
        Ok(checked) => Outcome::Pass { checked },
        Err(msg) => Outcome::Fail(msg),
    };
    CaseResult {
        path: path.to_path_buf(),
        outcome,
    }
}

/// Loads, runs and checks a case; returns the number of elements checked.
fn try_case(gpu: &Gpu, path: &Path) -> Result<usize, String> {
    let prepared = prepare_case(path)?;
    let outputs = prepared.run_on(gpu)?;
    prepared.check(&outputs)
}

/// A case loaded and made ready to run anywhere: its source, options,
/// dispatch and input bytes, and the expectations its outputs must meet.
///
/// The wgpu runner ([`run_case`]) and the browser runner ([`browser`]) both
/// start from it and hand the read-back bytes to [`PreparedCase::check`].
pub struct PreparedCase {
    path: PathBuf,
    case: case::CaseFile,
    inputs: BTreeMap<u32, InputBuffer>,
    source_name: String,
    source: String,
    options: crate::Options,
    dispatch: Dispatch,
}

/// Loads a case file, reads its MSL source and generates its inputs; a
/// case without a threadgroup size gets the kernel's default size (one
/// translation, without a GPU).
pub fn prepare_case(path: &Path) -> Result<PreparedCase, String> {
    let case = case::load(path)?;
    let source_path = case.source_path(path);
    let source = std::fs::read_to_string(&source_path)
        .map_err(|e| format!("cannot read '{}': {e}", source_path.display()))?;
    let source_name = source_path.display().to_string();
    let options = case.options(path)?;
    let dispatch = case.dispatch(|| {
        let mut options = options.clone();
        options.entries = vec![case.entry.clone()];
        let t = translate_kernel(&source_name, &source, &options, &case.entry)
            .map_err(|e| e.to_string())?;
        t.function
            .workgroup_size
            .ok_or_else(|| RunError::NotAKernel(case.entry.clone()).to_string())
    })?;
    let inputs = case.inputs()?;
    Ok(PreparedCase {
        path: path.to_path_buf(),
        case,
        inputs,
        source_name,
        source,
        options,
        dispatch,
    })
}

impl PreparedCase {
    /// The case file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The kernel's MSL name.
    pub fn entry(&self) -> &str {
        &self.case.entry
    }

    /// The dispatch, with its threadgroup size.
    pub fn dispatch(&self) -> &Dispatch {
        &self.dispatch
    }

    /// The bytes of every `[[buffer(n)]]`, by Metal index.
    pub fn buffers(&self) -> BTreeMap<u32, Vec<u8>> {
        self.inputs
            .iter()
            .map(|(k, b)| (*k, b.bytes.clone()))
            .collect()
    }

    /// True if every expectation is exact (no `abs`, `rel` or `ulp`): the
    /// outputs are then the same bytes on every conforming implementation.
    pub fn is_exact(&self) -> bool {
        self.case.expects.iter().all(|e| e.tolerance().is_exact())
    }

    /// Runs the kernel on `gpu` with [`run_kernel`] (which translates for
    /// wgpu's dialect); returns every buffer after the run.
    pub fn run_on(&self, gpu: &Gpu) -> Result<BTreeMap<u32, Vec<u8>>, String> {
        run_kernel(
            gpu,
            &self.source_name,
            &self.source,
            &self.options,
            &self.case.entry,
            &self.dispatch,
            &self.buffers(),
        )
        .map_err(|e| e.to_string())
    }

    /// Checks the buffers read back after the run against every
    /// expectation; returns the number of elements compared.
    pub fn check(&self, outputs: &BTreeMap<u32, Vec<u8>>) -> Result<usize, String> {
        let mut checked = 0;
        for expect in &self.case.expects {
            checked += check(expect, &self.inputs, outputs)
                .map_err(|e| format!("buffer {}: {e}", expect.index))?;
        }
        Ok(checked)
    }
}

/// The input buffers, as formulas read them.
struct Inputs<'a>(&'a BTreeMap<u32, InputBuffer>);

impl expr::Buffers for Inputs<'_> {
    fn element(&self, index: u32, k: i64) -> Result<Value, String> {
        let buffer = self
            .0
            .get(&index)
            .ok_or_else(|| format!("no input buffer b{index}"))?;
        usize::try_from(k)
            .ok()
            .and_then(|k| buffer.ty.decode(&buffer.bytes, k))
            .ok_or_else(|| {
                format!(
                    "b{index}[{k}] is out of range ({} elements)",
                    buffer.count()
                )
            })
    }
}

/// Checks one expectation; returns the number of elements compared.
fn check(
    expect: &ExpectSpec,
    inputs: &BTreeMap<u32, InputBuffer>,
    outputs: &BTreeMap<u32, Vec<u8>>,
) -> Result<usize, String> {
    let input = inputs
        .get(&expect.index)
        .ok_or("no [[buffer]] with this index")?;
    let got = outputs
        .get(&expect.index)
        .ok_or("the kernel has no buffer argument with this index")?;
    let ty = expect.ty.unwrap_or(input.ty);
    let available = got.len() / ty.size();
    let count = expect
        .count
        .or(expect.untouched.as_ref().map(|u| u.from))
        .unwrap_or(available);
    if count > available {
        return Err(format!(
            "expects {count} elements, but the buffer holds {available}"
        ));
    }
    let expected = expect.expected()?;
    let compared = match &expected {
        Expected::Values(v) if v.len() != count => {
            return Err(format!("{} expected values for {count} elements", v.len()));
        }
        Expected::Nothing => 0,
        _ => count,
    };
    let tolerance = expect.tolerance();
    let mut mismatches = Mismatches::default();
    for k in 0..compared {
        let want = match &expected {
            Expected::Values(v) => ty.exact(v[k]).map_err(|e| format!("values[{k}]: {e}"))?,
            Expected::Formula(f) => f
                .eval_as(k as i64, ty, &Inputs(inputs))
                .map_err(|e| format!("element {k}: {e}"))?,
            Expected::Nothing => break,
        };
        let want = round_trip(ty, want);
        let value = ty.decode(got, k).unwrap_or(Value::Int(0));
        if !tolerance.accepts(ty, value, want) {
            mismatches.add(k, value, want);
        }
    }
    let mut extra = 0;
    if let Some(untouched) = &expect.untouched {
        let sentinel = untouched.sentinel()?;
        for k in untouched.from..available {
            let want = match sentinel {
                Some(s) => round_trip(ty, ty.exact(s)?),
                None => ty.decode(&input.bytes, k).unwrap_or(Value::Int(0)),
            };
            let value = ty.decode(got, k).unwrap_or(Value::Int(0));
            // Untouched means bit for bit: no tolerance.
            if !same_bits(ty, value, want) {
                mismatches.add(k, value, want);
            }
            extra += 1;
        }
    }
    mismatches.into_result(ty)?;
    Ok(compared + extra)
}

/// `v` as the element type stores it (floats rounded to `float`/`half`).
fn round_trip(ty: ElemType, v: Value) -> Value {
    let mut bytes = Vec::new();
    ty.encode(v, &mut bytes);
    ty.decode(&bytes, 0).unwrap_or(v)
}

fn same_bits(ty: ElemType, a: Value, b: Value) -> bool {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    ty.encode(a, &mut x);
    ty.encode(b, &mut y);
    x == y
}

/// The mismatching elements of one expectation.
#[derive(Default)]
struct Mismatches {
    count: usize,
    shown: Vec<(usize, Value, Value)>,
}

impl Mismatches {
    fn add(&mut self, k: usize, got: Value, want: Value) {
        self.count += 1;
        if self.shown.len() < SHOWN_MISMATCHES {
            self.shown.push((k, got, want));
        }
    }

    fn into_result(self, ty: ElemType) -> Result<(), String> {
        if self.count == 0 {
            return Ok(());
        }
        let list: Vec<String> = self
            .shown
            .iter()
            .map(|(k, got, want)| format!("[{k}] got {got}, expected {want}"))
            .collect();
        let more = self.count - self.shown.len();
        let tail = if more > 0 {
            format!(" (and {more} more)")
        } else {
            String::new()
        };
        Err(format!(
            "{} {ty:?} element(s) differ: {}{tail}",
            self.count,
            list.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests;
