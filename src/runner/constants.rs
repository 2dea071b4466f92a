//! Function constant values (`MTLFunctionConstantValues`) as wgpu pipeline
//! constants: each `[[function_constant(n)]]` is the WGSL override
//! `@id(n)`, and an optional one also has a `bool` override (its
//! `definedId`) that `is_function_constant_defined` reads.

use super::RunError;
use crate::reflect::FunctionReflection;
use std::collections::BTreeMap;

/// The pipeline constants of `function` for `values` (by Metal index), as
/// `wgpu::PipelineCompilationOptions::constants` keys them: the override
/// `@id` in decimal.
///
/// As in Metal, values for constants the function does not read are
/// ignored (wgpu would reject keys the module lacks), and a required
/// constant without a value is an error, reported before any pipeline is
/// made. A vector constant takes each component at its override's id
/// (`componentIds` in reflection: the first at the constant's index).
pub fn pipeline_constants(
    function: &FunctionReflection,
    values: &BTreeMap<u32, f64>,
) -> Result<Vec<(String, f64)>, RunError> {
    if function.awaits_function_constants() {
        return Err(needs_specialization(function));
    }
    let mut out = Vec::new();
    for c in &function.function_constants {
        // A vector constant's components are separate overrides, the
        // first at `index`.
        let ids = match c.component_ids.as_slice() {
            [] => vec![c.index],
            ids => ids.to_vec(),
        };
        let mut given: Vec<Option<f64>> = ids
            .iter()
            .map(|id| values.get(&u32::from(*id)).copied())
            .collect();
        if let Some(words) = wide_words(c, given[0]) {
            given = words;
        }
        let ids: Vec<u16> = ids.into_iter().chain(c.high_id).collect();
        let missing = ids.iter().zip(&given).find(|(_, v)| v.is_none());
        match missing {
            None => {
                out.extend(
                    ids.iter()
                        .zip(given.iter().flatten())
                        .map(|(id, v)| (id.to_string(), *v)),
                );
                if let Some(id) = c.defined_id {
                    out.push((id.to_string(), 1.0));
                }
            }
            // An optional constant is set whole or not at all.
            Some(_) if !c.required && given.iter().all(Option::is_none) => {}
            Some((id, _)) => {
                return Err(RunError::MissingFunctionConstant {
                    function: function.name.clone(),
                    name: c.name.clone(),
                    index: u32::from(*id),
                })
            }
        }
    }
    Ok(out)
}

/// The error for running `function`, which waits for function constant
/// values at translation (W0415), from WGSL that lacks it.
fn needs_specialization(function: &FunctionReflection) -> RunError {
    RunError::NeedsSpecialization {
        function: function.name.clone(),
        constants: function
            .function_constants
            .iter()
            .filter(|c| c.needed_at_translation)
            .map(|c| c.name.clone())
            .collect(),
    }
}

/// `options` with values for the function constants that `function` (a
/// function waiting for them, W0415) needs at translation, taken from
/// `values` (by Metal index, as the runner takes them: a vector's
/// components at its `componentIds`): an optional constant without a value
/// is given as undefined, as Metal leaves it. `None` when every constant
/// it waits for already has a value in `options` (the translation did not
/// progress), an error when a required one has none in `values`.
pub(crate) fn with_needed_values(
    function: &FunctionReflection,
    options: &crate::Options,
    values: &BTreeMap<u32, f64>,
) -> Result<Option<crate::Options>, RunError> {
    use crate::{ConstantKey, ConstantValue};
    let mut options = options.clone();
    let mut progress = false;
    for c in function
        .function_constants
        .iter()
        .filter(|c| c.needed_at_translation)
    {
        if options.function_constants.get(&c.name, c.index).is_some() {
            continue;
        }
        let ids = match c.component_ids.as_slice() {
            [] => vec![c.index],
            ids => ids.to_vec(),
        };
        let given: Option<Vec<f64>> = ids
            .iter()
            .map(|id| values.get(&u32::from(*id)).copied())
            .collect();
        let value = match given {
            Some(v) if v.len() == 1 => ConstantValue::Number(v[0]),
            Some(v) => {
                ConstantValue::Text(v.iter().map(f64::to_string).collect::<Vec<_>>().join(","))
            }
            None if !c.required => ConstantValue::Undefined,
            None => {
                return Err(RunError::MissingFunctionConstant {
                    function: function.name.clone(),
                    name: c.name.clone(),
                    index: u32::from(c.index),
                })
            }
        };
        options
            .function_constants
            .set(ConstantKey::Index(c.index), value);
        progress = true;
    }
    Ok(progress.then_some(options))
}

/// Translates with `translate` until the function no longer waits for
/// function constant values (W0415), giving it those it needs from
/// `values` ([`with_needed_values`]) each time.
pub(crate) fn specialize<T: std::ops::Deref<Target = super::Translation>>(
    options: &crate::Options,
    values: &BTreeMap<u32, f64>,
    mut translate: impl FnMut(&crate::Options) -> Result<T, RunError>,
) -> Result<T, RunError> {
    let mut options = options.clone();
    loop {
        let translation = translate(&options)?;
        if !translation.function.awaits_function_constants() {
            return Ok(translation);
        }
        match with_needed_values(&translation.function, &options, values)? {
            Some(more) => options = more,
            // Nothing more to give: say what it waits for.
            None => return Err(needs_specialization(&translation.function)),
        }
    }
}

/// `text` (named `name`) translated with `options` and the function
/// constant values of `values` (by Metal index, as the runner takes them)
/// that its `functions` need at translation (W0415), as Metal specialises
/// functions when the host makes them; the render APIs translate libraries
/// whole so.
pub fn specialized_library(
    name: &str,
    text: &str,
    options: &crate::Options,
    functions: &[&str],
    values: &BTreeMap<u32, f64>,
) -> Result<crate::Library, RunError> {
    let mut options = options.clone();
    loop {
        let library = crate::Library::from_source(name, text, &options)?;
        let mut progress = false;
        let waiting = functions
            .iter()
            .filter_map(|f| library.function(f))
            .filter(|f| f.awaits_function_constants());
        for f in waiting {
            match with_needed_values(f, &options, values)? {
                Some(more) => {
                    options = more;
                    progress = true;
                }
                None => return Err(needs_specialization(f)),
            }
        }
        if !progress {
            return Ok(library);
        }
    }
}

/// A 64-bit constant's value `v` as its overrides' `u32` words: the low
/// word, and the high one where the WGSL has it (`highId`); `None` for
/// other constants. Values come as `f64`, exact up to 2^53 in magnitude;
/// a negative `long` is its two's complement.
fn wide_words(
    c: &crate::reflect::FunctionConstantReflection,
    v: Option<f64>,
) -> Option<Vec<Option<f64>>> {
    let bits = |v: f64| match c.data_type.as_str() {
        "long" => v as i64 as u64,
        _ => v as u64,
    };
    if !matches!(c.data_type.as_str(), "long" | "ulong") {
        return None;
    }
    let words = v.map(bits).map(|b| [b & 0xFFFF_FFFF, b >> 32]);
    let low = words.map(|w| w[0] as f64);
    Some(match c.high_id {
        Some(_) => vec![low, words.map(|w| w[1] as f64)],
        None => vec![low],
    })
}

/// Whether every thread `dispatch` launches lies inside Metal's grid:
/// always for `dispatchThreadgroups`, and for `dispatchThreads` when the
/// grid is a whole number of threadgroups in every dimension.
pub fn is_whole_grid(dispatch: &super::Dispatch) -> bool {
    match *dispatch {
        super::Dispatch::Threadgroups { .. } => true,
        super::Dispatch::Threads { grid, threadgroup } => grid
            .iter()
            .zip(threadgroup)
            .all(|(&g, t)| t != 0 && g.is_multiple_of(t)),
    }
}

/// `constants` with [`WHOLE_GRID_OVERRIDE`](crate::reflect::WHOLE_GRID_OVERRIDE)
/// set to `true` when `function` uses barriers, the module declares it
/// (`overrides`, from its [`Interface`](super::interface::Interface)) and
/// the dispatch is `whole` ([`is_whole_grid`]).
pub(crate) fn with_whole_grid(
    function: &FunctionReflection,
    overrides: &[String],
    whole: bool,
    constants: &[(String, f64)],
) -> Vec<(String, f64)> {
    let declared = overrides
        .iter()
        .any(|o| o == crate::reflect::WHOLE_GRID_OVERRIDE);
    let mut out = constants.to_vec();
    if function.uses_barriers && whole && declared {
        out.push((crate::reflect::WHOLE_GRID_OVERRIDE.to_string(), 1.0));
    }
    out
}

/// `constants` in the borrowed form wgpu takes.
pub(crate) fn as_wgpu(constants: &[(String, f64)]) -> Vec<(&str, f64)> {
    constants.iter().map(|(k, v)| (k.as_str(), *v)).collect()
}

#[cfg(test)]
mod tests {
    use super::with_whole_grid;
    use crate::reflect::WHOLE_GRID_OVERRIDE;

    fn kernel(source: &str) -> (crate::reflect::FunctionReflection, Vec<String>) {
        let library =
            crate::Library::from_source("k.metal", source, &crate::Options::default()).unwrap();
        let f = library.functions()[0].clone();
        let interface =
            super::super::interface::Interface::of(library.wgsl(), &f.wgsl_entry_point).unwrap();
        (f, interface.overrides)
    }

    #[test]
    fn a_whole_grid_is_promised_where_the_module_declares_the_override() {
        let (f, overrides) = kernel(
            "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) \
             { threadgroup_barrier(mem_flags::mem_threadgroup); o[i] = 1.0f; }",
        );
        assert_eq!(overrides, [WHOLE_GRID_OVERRIDE]);
        assert_eq!(
            with_whole_grid(&f, &overrides, true, &[]),
            [(WHOLE_GRID_OVERRIDE.to_string(), 1.0)]
        );
        assert!(with_whole_grid(&f, &overrides, false, &[]).is_empty());
        assert!(with_whole_grid(&f, &[], true, &[]).is_empty());
    }

    /// No kernel declares an override it does not need: any override makes
    /// wgpu run naga's override processing, which rejects some valid
    /// modules.
    #[test]
    fn a_kernel_without_barriers_declares_no_override() {
        let (_, overrides) = kernel(
            "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) \
             { o[i] = 1.0f; }",
        );
        assert!(overrides.is_empty(), "{overrides:?}");
    }
}
