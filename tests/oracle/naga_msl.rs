//! The naga round trip (issue #18): WGSL through naga's MSL backend (what
//! wgpu runs on Apple GPUs), that MSL back through msl2wgsl, both run and
//! compared.
//!
//! naga's MSL backend needs a Metal slot for every resource of an entry
//! point: each buffer gets `[[buffer(n)]]` with `n` its position in
//! `(group, binding)` order, and the table of buffer sizes naga reads
//! `arrayLength` from comes after them.
//!
//! Bounds: [`BOUNDS`]. wgpu's own Metal backend asks for `Restrict`
//! checks, which naga writes as `metal::min(unsigned(i), n)`; msl2wgsl
//! does not parse the functional cast `unsigned(x)` yet (TESTING.md), so
//! the MSL is made unchecked by default and `MSL2WGSL_NAGA_RESTRICT=1`
//! asks for `Restrict`. Unchecked is sound here: the programs index in
//! bounds, and the translation's WGSL is checked by wgpu as the original
//! WGSL is.

use super::program::{Entry, Program};
use super::roundtrip::{self, Outcome};
use super::translated::Bind;
use msl2wgsl::reflect::Argument;
use msl2wgsl::runner::Gpu;
use naga::back::msl;
use naga::proc::{BoundsCheckPolicies, BoundsCheckPolicy};

/// The bounds checks asked of naga's MSL backend.
fn bounds() -> BoundsCheckPolicies {
    let policy = match std::env::var("MSL2WGSL_NAGA_RESTRICT").is_ok_and(|v| v == "1") {
        true => BoundsCheckPolicy::Restrict,
        false => BoundsCheckPolicy::Unchecked,
    };
    BoundsCheckPolicies {
        index: policy,
        buffer: policy,
        image_load: policy,
        binding_array: BoundsCheckPolicy::Unchecked,
    }
}

/// naga's MSL of `entry`, with the Metal slot of each of its buffers (in
/// `entry.buffers` order), the kernel's MSL name and the sizes table's slot.
pub struct Made {
    /// The MSL text.
    pub msl: String,
    /// The kernel's name in the MSL.
    pub kernel: String,
    /// `[[buffer(n)]]` of each buffer.
    pub slots: Vec<u32>,
    /// `[[buffer(n)]]` of `_mslBufferSizes`.
    pub sizes_slot: u32,
}

/// Makes naga's MSL of one compute entry point.
pub fn make(program: &Program, entry: &Entry) -> Result<Made, String> {
    let mut order: Vec<usize> = (0..entry.buffers.len()).collect();
    order.sort_by_key(|&i| (entry.buffers[i].group, entry.buffers[i].binding));
    let mut slots = vec![0; entry.buffers.len()];
    let mut resources = msl::BindingMap::default();
    for (slot, &i) in order.iter().enumerate() {
        let b = &entry.buffers[i];
        slots[i] = slot as u32;
        resources.insert(
            naga::ResourceBinding {
                group: b.group,
                binding: b.binding,
            },
            msl::BindTarget {
                buffer: Some(slot as u8),
                mutable: !b.uniform,
                ..Default::default()
            },
        );
    }
    let sizes_slot = entry.buffers.len() as u32;
    let resources = msl::EntryPointResources {
        resources,
        immediates_buffer: None,
        sizes_buffer: Some(sizes_slot as u8),
    };
    let options = msl::Options {
        lang_version: (2, 4),
        per_entry_point_map: [(entry.name.clone(), resources)].into_iter().collect(),
        fake_missing_bindings: false,
        bounds_check_policies: bounds(),
        ..msl::Options::default()
    };
    let pipeline = msl::PipelineOptions {
        entry_point: Some((naga::ShaderStage::Compute, entry.name.clone())),
        ..Default::default()
    };
    // Overrides take their defaults, as wgpu gives them with no constants.
    let (module, module_info) = naga::back::pipeline_constants::process_overrides(
        &program.module,
        &program.info,
        Some((naga::ShaderStage::Compute, &entry.name)),
        &naga::back::PipelineConstants::default(),
    )
    .map_err(|e| format!("naga's override processing: {e}"))?;
    let (text, info) = msl::write_string(&module, &module_info, &options, &pipeline)
        .map_err(|e| format!("naga's MSL backend: {e}"))?;
    let index = program
        .module
        .entry_points
        .iter()
        .position(|e| e.name == entry.name)
        .ok_or("no such entry point")?;
    let kernel = match info.entry_point_names.get(index) {
        Some(Ok(name)) => name.clone(),
        Some(Err(e)) => return Err(format!("naga's MSL backend: {e}")),
        // Only the entry point asked for is written.
        None => match info.entry_point_names.first() {
            Some(Ok(name)) => name.clone(),
            _ => return Err("naga named no entry point".into()),
        },
    };
    Ok(Made {
        msl: text,
        kernel,
        slots,
        sizes_slot,
    })
}

/// Runs one entry point of `program` both ways over `groups` workgroups
/// and compares.
pub fn check(gpu: &Gpu, name: &str, program: &Program, entry: &Entry, groups: [u32; 3]) -> Outcome {
    roundtrip::guarded(|| {
        let made = match make(program, entry) {
            Ok(made) => made,
            Err(e) => return Outcome::Skipped("naga's MSL backend fails".into(), e),
        };
        if let Ok(dir) = std::env::var("MSL2WGSL_ORACLE_SAVE") {
            let file = name.replace(['/', ' '], "_");
            let _ = std::fs::write(format!("{dir}/{file}.metal"), &made.msl);
        }
        let size = entry.runtime_size.unwrap_or(0);
        let bind = |arguments: &[Argument]| -> Vec<Bind> {
            arguments
                .iter()
                .map(
                    |arg| match made.slots.iter().position(|&s| s == arg.index) {
                        Some(i) => Bind::Wgsl(i),
                        None if arg.index == made.sizes_slot => {
                            let len = arg.buffer.as_ref().map_or(16, |b| b.data_size.max(16));
                            Bind::Bytes(size.to_le_bytes().repeat(len as usize / 4))
                        }
                        None => Bind::Unknown,
                    },
                )
                .collect()
        };
        roundtrip::compare(
            gpu,
            name,
            &program.source,
            &made.msl,
            &made.kernel,
            entry,
            groups,
            &bind,
        )
    })
}
