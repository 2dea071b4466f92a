//! Conformance cases in a browser's WebGPU: the Rust side prepares one
//! [`BrowserJob`] per case (WGSL translated for [`crate::Target::WebGpu`],
//! the bindings, the input bytes, the workgroup counts and dispatch uniform
//! of each part, the buffers to read back), `web/conformance/run.mjs` runs
//! the jobs in headless Chromium, and the bytes read back are checked by
//! [`PreparedCase::check`], the code that checks the wgpu runs.
//!
//! Rust and node talk through two JSON files: [`run_in_browser`] writes
//! `jobs.json` into a fresh temporary folder, runs
//! `node web/conformance/run.mjs jobs.json results.json`, and reads
//! [`BrowserResults`] back.

use super::{collect_cases, prepare_case, CaseResult, Outcome, PreparedCase, Report};
use crate::runner::compute::Plan;
use crate::runner::interface::{BindingKind, BufferBinding, Interface};
use crate::runner::resources::padded_size;
use crate::runner::translate_kernel;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// WebGPU's default `maxComputeWorkgroupsPerDimension`: larger dispatches are
/// split into parts, as the wgpu runner splits them.
const MAX_GROUPS: u32 = 65535;

/// One case, ready for a browser's WebGPU.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserJob {
    /// The case file, as given.
    pub name: String,
    /// The WGSL module (`half` as `f16` where the kernel uses it).
    pub wgsl: String,
    /// The same kernel with `half` as rounded `f32`
    /// ([`crate::library::HalfMode::F32`]), for adapters without
    /// `shader-f16`; `None` when the kernel needs no `shader-f16`.
    pub wgsl_without_f16: Option<String>,
    /// The compute entry point.
    pub entry_point: String,
    /// WebGPU features `wgsl` needs.
    pub features: Vec<String>,
    /// The limits above WebGPU's defaults the kernel needs (reflection's
    /// `requiredLimits`): the page asks for these and no more, so a case
    /// passes only if it runs where a web page would run it.
    pub required_limits: BTreeMap<String, u64>,
    /// Every binding the entry point uses.
    pub bindings: Vec<JobBinding>,
    /// Initial bytes of each buffer binding, by Metal index, as hex; padded
    /// to the size the binding needs.
    pub buffers: BTreeMap<u32, String>,
    /// Bytes of each buffer to read back (the case's own length), by
    /// Metal index.
    pub read_back: BTreeMap<u32, usize>,
    /// The `dispatch_workgroups` calls, in order.
    pub parts: Vec<JobPart>,
}

/// One `@group @binding` of a job.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobBinding {
    /// `@group`
    pub group: u32,
    /// `@binding`
    pub binding: u32,
    /// `storage`, `read-only-storage` or `uniform` (the buffer's usage).
    pub kind: String,
    /// The Metal buffer index bound here; `None` for the dispatch uniform.
    pub buffer: Option<u32>,
}

/// One `dispatch_workgroups` of a job.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobPart {
    /// Workgroups per dimension.
    pub groups: [u32; 3],
    /// The dispatch uniform of this part (48 bytes), as hex.
    pub dispatch_uniform: String,
}

/// What `run.mjs` writes: the adapter and one result per job.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserResults {
    /// The adapter's description (vendor, architecture, ...).
    pub adapter: String,
    /// The adapter's features.
    pub features: Vec<String>,
    /// By job name.
    pub results: BTreeMap<String, JobResult>,
}

/// The outcome of one job in the browser.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobResult {
    /// Read-back bytes by Metal index, as hex; empty on error.
    #[serde(default)]
    pub buffers: BTreeMap<u32, String>,
    /// Why the job could not run (compilation, validation, ...).
    pub error: Option<String>,
    /// True if the `f32` form of `half` was used.
    #[serde(default)]
    pub used_f32_half: bool,
}

/// Prepares the job of one case.
pub fn job(prepared: &PreparedCase) -> Result<BrowserJob, String> {
    let dispatch = prepared.dispatch();
    let translate = |half| {
        let mut options = prepared.options.clone();
        options.entries = vec![prepared.entry().to_string()];
        options.threadgroup_size = Some(dispatch.threadgroup());
        options.target = crate::Target::WebGpu;
        options.half = half;
        translate_kernel(
            &prepared.source_name,
            &prepared.source,
            &options,
            prepared.entry(),
        )
        .map_err(|e| e.to_string())
    };
    let translation = translate(crate::library::HalfMode::F16)?;
    let function = &translation.function;
    let needs_f16 = function.required_features.iter().any(|f| f == "shader-f16");
    let wgsl_without_f16 = if needs_f16 {
        Some(translate(crate::library::HalfMode::F32)?.wgsl)
    } else {
        None
    };
    // naga's parser does not know the directive the WebGPU dialect adds.
    let parsable = translation.wgsl.replace("enable subgroups;", "");
    let interface =
        Interface::of(&parsable, &function.wgsl_entry_point).map_err(|e| e.to_string())?;
    let inputs = prepared.buffers();
    let mut job = BrowserJob {
        name: prepared.path().display().to_string(),
        wgsl: translation.wgsl.clone(),
        wgsl_without_f16,
        entry_point: function.wgsl_entry_point.clone(),
        features: function.required_features.clone(),
        required_limits: function.required_limits.clone(),
        bindings: Vec::new(),
        buffers: BTreeMap::new(),
        read_back: BTreeMap::new(),
        parts: Vec::new(),
    };
    for used in &interface.bindings {
        let at = |b: Option<crate::reflect::WgslBinding>| {
            b.is_some_and(|b| b.group == used.group && b.binding == used.binding)
        };
        let kind = match used.kind {
            BindingKind::Buffer(BufferBinding::Storage { read_only: true }) => "read-only-storage",
            BindingKind::Buffer(BufferBinding::Storage { read_only: false }) => "storage",
            BindingKind::Buffer(BufferBinding::Uniform) => "uniform",
            _ => return Err("the browser runner binds buffers only".into()),
        };
        let buffer = if at(function.dispatch_binding) {
            None
        } else {
            let arg = function
                .arguments
                .iter()
                .find(|a| at(a.binding))
                .ok_or("the WGSL uses a binding that is no argument")?;
            let bytes = inputs.get(&arg.index).ok_or_else(|| {
                format!("no [[buffer]] for `{}` [[buffer({})]]", arg.name, arg.index)
            })?;
            let mut padded = bytes.clone();
            padded.resize(padded_size(bytes.len(), used.min_size) as usize, 0);
            job.buffers.insert(arg.index, hex(&padded));
            job.read_back.insert(arg.index, bytes.len());
            Some(arg.index)
        };
        job.bindings.push(JobBinding {
            group: used.group,
            binding: used.binding,
            kind: kind.to_string(),
            buffer,
        });
    }
    let plan = Plan::new(dispatch, MAX_GROUPS).map_err(|e| e.to_string())?;
    job.parts = plan
        .parts
        .iter()
        .map(|part| JobPart {
            groups: part.count,
            dispatch_uniform: hex(&plan.params(part).to_bytes()),
        })
        .collect();
    Ok(job)
}

/// The outputs of a job result, as the checker wants them: every buffer
/// the case gave (unchanged if the kernel did not bind it), with the
/// read-back bytes of the bound ones.
pub fn outputs(
    prepared: &PreparedCase,
    result: &JobResult,
) -> Result<BTreeMap<u32, Vec<u8>>, String> {
    if let Some(error) = &result.error {
        return Err(format!("in the browser: {error}"));
    }
    let mut out = prepared.buffers();
    for (index, text) in &result.buffers {
        out.insert(*index, unhex(text)?);
    }
    Ok(out)
}

/// Where `run.mjs` is, and which node runs it.
#[derive(Clone, Debug)]
pub struct BrowserRunner {
    /// The node executable (`node` on the `PATH` by default).
    pub node: PathBuf,
    /// `web/conformance/run.mjs`.
    pub script: PathBuf,
}

impl Default for BrowserRunner {
    /// `node`, and the script of this source tree (`MSL2WGSL_WEB_DIR`
    /// overrides the `web` folder).
    fn default() -> Self {
        let web = std::env::var_os("MSL2WGSL_WEB_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("web"));
        BrowserRunner {
            node: PathBuf::from("node"),
            script: web.join("conformance").join("run.mjs"),
        }
    }
}

/// Runs every case named by `paths` in the browser; returns the report
/// and what the browser said about its adapter.
pub fn run_cases_in_browser(
    runner: &BrowserRunner,
    paths: &[PathBuf],
) -> Result<(Report, BrowserResults), String> {
    let cases = collect_cases(paths);
    let mut prepared = Vec::new();
    let mut jobs = Vec::new();
    let mut early = BTreeMap::new();
    for path in &cases {
        match prepare_case(path).and_then(|p| Ok((job(&p)?, p))) {
            Ok((job, p)) => {
                jobs.push(job);
                prepared.push(p);
            }
            Err(e) => {
                early.insert(path.clone(), e);
            }
        }
    }
    let results = run_in_browser(runner, &jobs)?;
    let mut report = Report::default();
    for path in cases {
        let outcome = match early.remove(&path) {
            Some(e) => Outcome::Fail(e),
            None => {
                let p = prepared
                    .iter()
                    .find(|p| p.path() == path)
                    .expect("prepared");
                match results.results.get(&path.display().to_string()) {
                    None => Outcome::Fail("the browser returned no result".into()),
                    Some(r) => match outputs(p, r).and_then(|o| p.check(&o)) {
                        Ok(checked) => Outcome::Pass { checked },
                        Err(e) => Outcome::Fail(e),
                    },
                }
            }
        };
        report.results.push(CaseResult { path, outcome });
    }
    Ok((report, results))
}

/// Writes `jobs` to a temporary folder, runs `run.mjs` on them, and reads
/// the results.
pub fn run_in_browser(
    runner: &BrowserRunner,
    jobs: &[BrowserJob],
) -> Result<BrowserResults, String> {
    let dir = std::env::temp_dir().join(format!(
        "msl2wgsl-browser-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let jobs_path = dir.join("jobs.json");
    let results_path = dir.join("results.json");
    let text = serde_json::to_string(jobs).map_err(|e| e.to_string())?;
    std::fs::write(&jobs_path, text).map_err(|e| e.to_string())?;
    let status = Command::new(&runner.node)
        .arg(&runner.script)
        .arg(&jobs_path)
        .arg(&results_path)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", runner.node.display()))?;
    if !status.success() {
        return Err(format!(
            "{} {} failed ({status})",
            runner.node.display(),
            runner.script.display()
        ));
    }
    let text = std::fs::read_to_string(&results_path)
        .map_err(|e| format!("cannot read {}: {e}", results_path.display()))?;
    let results = serde_json::from_str(&text).map_err(|e| format!("results.json: {e}"))?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(results)
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of a hex string.
pub fn unhex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err("odd-length hex".into());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|e| format!("bad hex: {e}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        let bytes = [0u8, 1, 0x7f, 0xff, 0x10];
        assert_eq!(hex(&bytes), "00017fff10");
        assert_eq!(unhex(&hex(&bytes)).unwrap(), bytes);
        assert!(unhex("abc").is_err());
        assert!(unhex("zz").is_err());
    }

    #[test]
    fn saxpy_job() {
        let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "fixtures/cases/saxpy.toml"]
            .iter()
            .collect();
        let prepared = prepare_case(&path).unwrap();
        let job = job(&prepared).unwrap();
        assert_eq!(job.entry_point, "saxpy");
        assert!(job.wgsl_without_f16.is_none());
        // 1000 threads in groups of 64: 16 workgroups, one part.
        assert_eq!(job.parts.len(), 1);
        assert_eq!(job.parts[0].groups, [16, 1, 1]);
        // Three buffers and the dispatch uniform.
        assert_eq!(job.bindings.len(), 4);
        assert_eq!(
            job.bindings.iter().filter(|b| b.buffer.is_none()).count(),
            1
        );
        assert_eq!(job.read_back[&0], 4000);
        assert_eq!(job.read_back[&2], 4);
        // Unchanged buffers check as the inputs: the case's checks see the
        // outputs the wgpu runner would report.
        let result = JobResult {
            buffers: BTreeMap::new(),
            error: None,
            used_f32_half: false,
        };
        let outputs = outputs(&prepared, &result).unwrap();
        assert_eq!(outputs, prepared.buffers());
        assert!(prepared.check(&outputs).is_err());
    }
}
