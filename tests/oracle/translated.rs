//! The other side of a round trip: an MSL kernel translated by msl2wgsl and
//! run with Metal's dispatch semantics (the runner), its buffers matched to
//! the WGSL's by name.

use super::program::Entry;
use msl2wgsl::library::{HalfMode, Library, Options};
use msl2wgsl::reflect::{Argument, ArgumentKind};
use msl2wgsl::runner::{run_compute, Dispatch, Gpu};
use std::collections::BTreeMap;

/// Why the translated side gave no buffers.
#[derive(Debug)]
pub enum Failed {
    /// msl2wgsl rejected the MSL: the first diagnostic line.
    Translate(String),
    /// An argument of the kernel has no WGSL buffer of its name.
    Unmatched(String),
    /// The translation did not run.
    Run(String),
}

/// The `kernel` functions of an MSL source, by a plain scan (enough to
/// pick an entry point before translating).
pub fn kernel_names(msl: &str) -> Vec<String> {
    msl.match_indices("kernel void ")
        .filter_map(|(i, m)| {
            let rest = &msl[i + m.len()..];
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
            rest[end..]
                .starts_with('(')
                .then(|| rest[..end].to_string())
        })
        .collect()
}

/// What a buffer argument of the kernel is bound to.
pub enum Bind {
    /// The WGSL buffer of this position in `Entry::buffers`.
    Wgsl(usize),
    /// Bytes of its own (a table of buffer sizes, ...).
    Bytes(Vec<u8>),
    /// Nothing known.
    Unknown,
}

/// Binds each buffer argument to the WGSL buffer of the same name, or to
/// what `extra` gives for it. A WGSL name that is reserved in MSL
/// (`buffer`, `main`) is renamed by the compiler that made the MSL: the
/// renamed arguments pair with the unmatched buffers in order when there
/// are as many of each.
pub fn by_name<'a>(
    entry: &'a Entry,
    extra: &'a dyn Fn(&Argument) -> Option<Vec<u8>>,
) -> impl Fn(&[Argument]) -> Vec<Bind> + 'a {
    move |arguments| {
        let mut binds: Vec<Bind> = arguments
            .iter()
            .map(
                |arg| match entry.buffers.iter().position(|b| b.name == arg.name) {
                    Some(i) => Bind::Wgsl(i),
                    None => extra(arg).map_or(Bind::Unknown, Bind::Bytes),
                },
            )
            .collect();
        let taken: Vec<usize> = binds
            .iter()
            .filter_map(|b| match b {
                Bind::Wgsl(i) => Some(*i),
                _ => None,
            })
            .collect();
        let mut left = (0..entry.buffers.len()).filter(|i| !taken.contains(i));
        let unknown = binds.iter().filter(|b| matches!(b, Bind::Unknown)).count();
        if unknown > 0 && unknown == entry.buffers.len() - taken.len() {
            for b in binds.iter_mut().filter(|b| matches!(b, Bind::Unknown)) {
                *b = Bind::Wgsl(left.next().unwrap());
            }
        }
        binds
    }
}

/// Translates `kernel` of `msl` for the entry's workgroup size, binds each
/// buffer argument as `bind` says (given the kernel's buffer arguments in
/// order), dispatches `groups` threadgroups and returns every WGSL
/// buffer's bytes afterwards, in `entry.buffers` order (a buffer the kernel
/// does not take comes back as it was).
pub fn run(
    gpu: &Gpu,
    name: &str,
    msl: &str,
    kernel: &str,
    entry: &Entry,
    groups: [u32; 3],
    bind: &dyn Fn(&[Argument]) -> Vec<Bind>,
) -> Result<Vec<Vec<u8>>, Failed> {
    let options = Options {
        entries: vec![kernel.to_string()],
        threadgroup_size: Some(entry.workgroup_size),
        half: gpu.half_mode(HalfMode::F16),
        ..Options::default()
    };
    let library = Library::from_source(name, msl, &options).map_err(|f| {
        let text = f.render();
        let first = text.lines().find(|l| l.contains("error"));
        Failed::Translate(first.unwrap_or(text.as_str()).to_string())
    })?;
    let function = library
        .function(kernel)
        .ok_or_else(|| Failed::Translate(format!("no function `{kernel}`")))?;
    let arguments: Vec<Argument> = function
        .arguments
        .iter()
        .filter(|a| a.kind == ArgumentKind::Buffer)
        .cloned()
        .collect();
    let mut buffers = BTreeMap::new();
    let mut index_of = BTreeMap::new();
    for (arg, b) in arguments.iter().zip(bind(&arguments)) {
        match b {
            Bind::Wgsl(i) => {
                buffers.insert(arg.index, entry.buffers[i].bytes.clone());
                index_of.insert(i, arg.index);
            }
            Bind::Bytes(bytes) => {
                buffers.insert(arg.index, bytes);
            }
            Bind::Unknown if arg.active => return Err(Failed::Unmatched(arg.name.clone())),
            Bind::Unknown => {}
        }
    }
    let dispatch = Dispatch::Threadgroups {
        groups,
        threadgroup: entry.workgroup_size,
    };
    let out = run_compute(gpu, library.wgsl(), function, &dispatch, &buffers)
        .map_err(|e| Failed::Run(e.to_string()))?;
    Ok(entry
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| match index_of.get(&i) {
            Some(index) => out[index].clone(),
            None => b.bytes.clone(),
        })
        .collect())
}
