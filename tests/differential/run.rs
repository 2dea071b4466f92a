//! Runs one program on the GPU through the translator and the runner's
//! Metal-style API, and compares every output element with the CPU
//! reference.

use super::ast::*;
use super::emit;
use super::evaluate::{self, Comp, Halt, ThreadOutputs};
use msl2wgsl::runner::{ComputePipeline, Gpu};
use msl2wgsl::{Library, Options};
use wgpu::util::DeviceExt;

/// What checking one program established.
#[derive(Default, Debug)]
pub struct Tally {
    /// Threads whose outputs were compared.
    pub compared: u64,
    /// Threads skipped because a float decision was undecided.
    pub indeterminate: u64,
    /// Why threads were skipped (the reason's first words), with counts.
    pub reasons: std::collections::BTreeMap<String, u64>,
}

/// A program that failed, with everything needed to reproduce it.
#[derive(Debug)]
pub struct Failure {
    /// The program's seed.
    pub seed: u64,
    /// `mismatch`, `translation`, `run` or `generator`.
    pub kind: &'static str,
    /// What went wrong, first line first.
    pub detail: String,
    /// The program.
    pub msl: String,
    /// Its translation (empty when there is none).
    pub wgsl: String,
}

impl Failure {
    /// The report printed for a failure; also written next to the MSL
    /// under the system temp dir.
    pub fn report(&self) -> String {
        let saved = self.save();
        format!(
            "=== differential {} failure, seed {} (MSL2WGSL_DIFF_SEED={} MSL2WGSL_DIFF_COUNT=1)\n\
             {}\nsaved: {saved}\n--- MSL\n{}\n--- WGSL\n{}\n",
            self.kind, self.seed, self.seed, self.detail, self.msl, self.wgsl
        )
    }

    /// The failure's kind and first line with numbers removed, to group
    /// failures that are probably one bug.
    pub fn signature(&self) -> String {
        let first = self.detail.lines().next().unwrap_or("");
        let first = first.strip_prefix("first difference: ").unwrap_or(first);
        // Translator errors: the innermost message says most.
        let first = first.rsplit("error: ").next().unwrap_or(first);
        let cut: String = first.chars().take(90).collect();
        let text: String = cut.chars().filter(|c| !c.is_ascii_digit()).collect();
        format!("{}: {text}", self.kind)
    }

    /// Writes `msl2wgsl-diff-SEED.metal` (and `.wgsl`) to the temp dir.
    fn save(&self) -> String {
        let dir = std::env::temp_dir();
        let metal = dir.join(format!("msl2wgsl-diff-{}.metal", self.seed));
        let header: String = self.detail.lines().map(|l| format!("// {l}\n")).collect();
        let written = std::fs::write(&metal, format!("{header}{}", self.msl))
            .and_then(|()| std::fs::write(metal.with_extension("wgsl"), &self.wgsl));
        match written {
            Ok(()) => metal.display().to_string(),
            Err(e) => format!("(not saved: {e})"),
        }
    }
}

/// Translates, runs and compares `program`.
pub fn check(gpu: &Gpu, program: &Program) -> Result<Tally, Box<Failure>> {
    let msl = emit::msl(program);
    let fail = |kind, detail: String, wgsl: String| {
        Box::new(Failure {
            seed: program.seed,
            kind,
            detail,
            msl: msl.clone(),
            wgsl,
        })
    };
    let expected: Vec<Result<ThreadOutputs, Halt>> = (0..program.threads)
        .map(|t| evaluate::run_thread(program, t))
        .collect();
    for (t, r) in expected.iter().enumerate() {
        if let Err(Halt::Undefined(what)) = r {
            let detail = format!("the generator made undefined behaviour (thread {t}): {what}");
            return Err(fail("generator", detail, String::new()));
        }
    }
    let library = translate(program, &msl).map_err(|e| fail("translation", e, String::new()))?;
    let wgsl = library.wgsl().to_string();
    let got = dispatch(gpu, &library, program).map_err(|e| fail("run", e, wgsl.clone()))?;
    let mut tally = Tally::default();
    for (t, r) in expected.iter().enumerate() {
        match r {
            Ok(outputs) => {
                tally.compared += 1;
                if let Some(d) = compare_thread(program, t as u32, outputs, &got) {
                    return Err(fail("mismatch", d, wgsl));
                }
            }
            Err(Halt::Indeterminate(why)) => {
                tally.indeterminate += 1;
                let key: String = why
                    .chars()
                    .take_while(|c| !c.is_ascii_digit() && *c != '(')
                    .collect();
                *tally.reasons.entry(key).or_default() += 1;
            }
            Err(Halt::Undefined(_)) => unreachable!("reported above"),
        }
    }
    if let Some(d) = compare_tails(program, &got) {
        return Err(fail("mismatch", d, wgsl));
    }
    Ok(tally)
}

/// The library of `msl`, translated for `program`'s threadgroup size (so
/// that its WGSL is the module the runner dispatches).
fn translate(program: &Program, msl: &str) -> Result<Library, String> {
    let options = Options {
        threadgroup_size: Some([program.threadgroup, 1, 1]),
        ..Options::default()
    };
    let name = format!("diff_{}.metal", program.seed);
    Library::from_source(&name, msl, &options).map_err(|e| e.to_string())
}

/// Runs `msl` (a hand-reduced variant of `program`'s kernel) with
/// `program`'s buffers and grid, and prints thread `t`'s outputs and the
/// CPU's expectation for the unreduced program.
pub fn replay(gpu: &Gpu, program: &Program, msl: &str, t: u32) -> Result<String, String> {
    let library = translate(program, msl)?;
    let got = dispatch(gpu, &library, program)?;
    let mut out = format!("{}\nGPU, thread {t}:", thread_inputs(program, t));
    for buf in Buffer::OUTPUTS {
        let start = (t * buf.stride()) as usize;
        let words = &got[buf.index() as usize][start..start + buf.stride() as usize];
        let shown: Vec<String> = words
            .iter()
            .map(|&w| format!("{:?}", evaluate::initial(buf.element(), w)))
            .collect();
        out.push_str(&format!(" {}=[{}]", buf.name(), shown.join(", ")));
    }
    let expected = evaluate::run_thread(program, t);
    out.push_str(&format!(
        "\nCPU (original program): {expected:?}\n--- WGSL\n{}",
        library.wgsl()
    ));
    Ok(out)
}

/// Metal bytes of a buffer's elements (padded to whole words).
fn bytes(buf: Buffer, words: &[u32]) -> Vec<u8> {
    let mut out: Vec<u8> = words
        .iter()
        .flat_map(|&w| match buf.element_size() {
            1 => vec![w as u8],
            2 => (w as u16).to_le_bytes().to_vec(),
            _ => w.to_le_bytes().to_vec(),
        })
        .collect();
    out.resize(out.len().div_ceil(4) * 4, 0);
    out
}

/// Elements of `buf` from its bytes, as [`BufferData`] stores them.
fn elements(buf: Buffer, bytes: &[u8], count: usize) -> Vec<u32> {
    let size = buf.element_size();
    (0..count)
        .map(|i| {
            let b = &bytes[i * size..(i + 1) * size];
            match size {
                1 => u32::from(b[0]),
                2 => i16::from_le_bytes([b[0], b[1]]) as i32 as u32,
                _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            }
        })
        .collect()
}

/// The output buffers' elements after the kernel ran, by buffer index
/// (inputs left empty).
fn dispatch(gpu: &Gpu, library: &Library, program: &Program) -> Result<Vec<Vec<u32>>, String> {
    let pipeline = ComputePipeline::new(gpu, library, KERNEL).map_err(|e| e.to_string())?;
    let buffers: Vec<wgpu::Buffer> = Buffer::ALL
        .iter()
        .map(|&b| {
            gpu.device()
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(b.name()),
                    contents: &bytes(b, &program.data[b.index() as usize]),
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                })
        })
        .collect();
    let mut command = pipeline.encoder();
    for (b, buffer) in Buffer::ALL.iter().zip(&buffers) {
        command
            .set_buffer(b.index(), buffer, 0)
            .map_err(|e| e.to_string())?;
    }
    command
        .dispatch_threads(gpu, [program.threads, 1, 1], [program.threadgroup, 1, 1])
        .map_err(|e| e.to_string())?;
    Buffer::ALL
        .iter()
        .zip(&buffers)
        .map(|(&b, buffer)| {
            if !b.is_output() {
                return Ok(Vec::new());
            }
            let raw = gpu.read_buffer(buffer).map_err(|e| e.to_string())?;
            Ok(elements(b, &raw, program.data[b.index() as usize].len()))
        })
        .collect()
}

/// The first output of thread `t` that the GPU got wrong, described.
fn compare_thread(
    program: &Program,
    t: u32,
    expected: &ThreadOutputs,
    got: &[Vec<u32>],
) -> Option<String> {
    for (k, buf) in Buffer::OUTPUTS.iter().enumerate() {
        for (slot, want) in expected[k].iter().enumerate() {
            let i = (t * buf.stride()) as usize + slot;
            let word = got[buf.index() as usize][i];
            let ok = match want {
                Comp::F(f) => f.contains(f32::from_bits(word)),
                Comp::I(v) => evaluate::wrap(i64::from(word), buf.element()) == *v,
                Comp::B(_) => false,
            };
            if !ok {
                let shown = match want {
                    Comp::F(f) => format!(
                        "{} (nominal {:e}, allowed [{:e}, {:e}])",
                        f32::from_bits(word),
                        f.nominal,
                        f.lo,
                        f.hi
                    ),
                    Comp::I(v) => format!(
                        "GPU {} expected {v}",
                        evaluate::wrap(i64::from(word), buf.element())
                    ),
                    Comp::B(_) => "a bool in a buffer".into(),
                };
                return Some(format!(
                    "first difference: {}[tid * {} + {slot}] at thread {t} of {} (threadgroups of {}): {shown}\n{}",
                    buf.name(),
                    buf.stride(),
                    program.threads,
                    program.threadgroup,
                    thread_inputs(program, t)
                ));
            }
        }
    }
    None
}

/// Elements past the last thread's, which must keep their contents.
fn compare_tails(program: &Program, got: &[Vec<u32>]) -> Option<String> {
    for buf in Buffer::OUTPUTS {
        let start = (program.threads * buf.stride()) as usize;
        let before = &program.data[buf.index() as usize];
        let after = &got[buf.index() as usize];
        if let Some(i) = (start..before.len()).find(|&i| before[i] != after[i]) {
            return Some(format!(
                "{}[{i}] past the last thread changed from {:#x} to {:#x}",
                buf.name(),
                before[i],
                after[i]
            ));
        }
    }
    None
}

/// The initial contents of thread `t`'s elements of every buffer.
fn thread_inputs(program: &Program, t: u32) -> String {
    let mut out = format!("thread {t}'s elements before the kernel:");
    for buf in Buffer::ALL {
        let start = (t * buf.stride()) as usize;
        let words = &program.data[buf.index() as usize][start..start + buf.stride() as usize];
        let shown: Vec<String> = words
            .iter()
            .map(|&w| match evaluate::initial(buf.element(), w) {
                Comp::F(f) => format!("{:?}", f.lo),
                Comp::I(v) => v.to_string(),
                Comp::B(b) => b.to_string(),
            })
            .collect();
        out.push_str(&format!(" {}=[{}]", buf.name(), shown.join(", ")));
    }
    out
}
