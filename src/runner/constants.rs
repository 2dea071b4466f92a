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
/// made.
pub fn pipeline_constants(
    function: &FunctionReflection,
    values: &BTreeMap<u32, f64>,
) -> Result<Vec<(String, f64)>, RunError> {
    let mut out = Vec::new();
    for c in &function.function_constants {
        match values.get(&u32::from(c.index)) {
            Some(v) => {
                out.push((c.index.to_string(), *v));
                if let Some(id) = c.defined_id {
                    out.push((id.to_string(), 1.0));
                }
            }
            None if c.required => {
                return Err(RunError::MissingFunctionConstant {
                    function: function.name.clone(),
                    name: c.name.clone(),
                    index: u32::from(c.index),
                })
            }
            None => {}
        }
    }
    Ok(out)
}

/// `constants` in the borrowed form wgpu takes.
pub(crate) fn as_wgpu(constants: &[(String, f64)]) -> Vec<(&str, f64)> {
    constants.iter().map(|(k, v)| (k.as_str(), *v)).collect()
}
