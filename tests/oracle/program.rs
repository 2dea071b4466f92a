//! What a WGSL compute entry point needs to run: its buffers with
//! deterministic contents, its workgroup size, and whether it computes
//! approximate builtins.

use super::fill;
use naga::proc::Layouter;
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};
use naga::{AddressSpace, Module, TypeInner};

/// One buffer the entry point uses.
#[derive(Clone, Debug)]
pub struct Buffer {
    /// The WGSL variable's name.
    pub name: String,
    /// `@group`, `@binding`.
    pub group: u32,
    /// `@binding`.
    pub binding: u32,
    /// `var<uniform>`.
    pub uniform: bool,
    /// Contents before the dispatch.
    pub bytes: Vec<u8>,
    /// Its scalars (for comparing floats as floats).
    pub leaves: Vec<fill::Leaf>,
}

/// A runnable compute entry point.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The WGSL entry point's name.
    pub name: String,
    /// `@workgroup_size`.
    pub workgroup_size: [u32; 3],
    /// Every buffer it uses.
    pub buffers: Vec<Buffer>,
    /// The size every runtime-sized buffer was given (all get the same).
    pub runtime_size: Option<u32>,
    /// The approximate builtins the module calls (empty: compare exactly).
    pub approximate: Vec<naga::MathFunction>,
}

/// A parsed and validated WGSL module.
pub struct Program {
    /// naga's IR.
    pub module: Module,
    /// naga's validation result.
    pub info: ModuleInfo,
    /// The WGSL text.
    pub source: String,
}

/// Parses and validates `wgsl` with naga (every capability: the adapter
/// decides what runs).
pub fn parse(wgsl: &str) -> Result<Program, String> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| format!("naga parse: {e}"))?;
    let info = Validator::new(ValidationFlags::all(), Capabilities::all())
        .validate(&module)
        .map_err(|e| format!("naga validation: {}", e.as_inner()))?;
    Ok(Program {
        module,
        info,
        source: wgsl.to_string(),
    })
}

/// Builtins whose results WGSL does not fix to the bit (the precision
/// table's "absolute error"/"ULP" rows other than "correctly rounded").
fn is_approximate(f: naga::MathFunction) -> bool {
    use naga::MathFunction as M;
    !matches!(
        f,
        M::Abs
            | M::Min
            | M::Max
            | M::Clamp
            | M::Saturate
            | M::Ceil
            | M::Floor
            | M::Round
            | M::Fract
            | M::Trunc
            | M::Modf
            | M::Frexp
            | M::Ldexp
            | M::Sign
            | M::Step
            | M::CountTrailingZeros
            | M::CountLeadingZeros
            | M::CountOneBits
            | M::ReverseBits
            | M::ExtractBits
            | M::InsertBits
            | M::FirstTrailingBit
            | M::FirstLeadingBit
            | M::Pack4x8snorm
            | M::Pack4x8unorm
            | M::Pack2x16snorm
            | M::Pack2x16unorm
            | M::Pack2x16float
            | M::Pack4xI8
            | M::Pack4xU8
            | M::Pack4xI8Clamp
            | M::Pack4xU8Clamp
            | M::Unpack4x8snorm
            | M::Unpack4x8unorm
            | M::Unpack2x16snorm
            | M::Unpack2x16unorm
            | M::Unpack2x16float
            | M::Unpack4xI8
            | M::Unpack4xU8
            | M::QuantizeToF16
            | M::Transpose
    )
}

/// The approximate builtins by their WGSL names.
const APPROXIMATE_NAMES: &[(&str, naga::MathFunction)] = {
    use naga::MathFunction as M;
    &[
        ("sin", M::Sin),
        ("cos", M::Cos),
        ("tan", M::Tan),
        ("asin", M::Asin),
        ("acos", M::Acos),
        ("atan", M::Atan),
        ("atan2", M::Atan2),
        ("sinh", M::Sinh),
        ("cosh", M::Cosh),
        ("tanh", M::Tanh),
        ("asinh", M::Asinh),
        ("acosh", M::Acosh),
        ("atanh", M::Atanh),
        ("exp", M::Exp),
        ("exp2", M::Exp2),
        ("log", M::Log),
        ("log2", M::Log2),
        ("pow", M::Pow),
        ("sqrt", M::Sqrt),
        ("inverseSqrt", M::InverseSqrt),
        ("normalize", M::Normalize),
        ("length", M::Length),
        ("distance", M::Distance),
        ("smoothstep", M::SmoothStep),
        ("refract", M::Refract),
        ("degrees", M::Degrees),
        ("radians", M::Radians),
    ]
};

/// Every approximate builtin the module calls: in naga's IR, and in the
/// source text (naga folds calls with constant arguments, Tint too, and
/// the two folds may round differently).
fn approximate_calls(module: &Module, source: &str) -> Vec<naga::MathFunction> {
    let mut found: Vec<naga::MathFunction> = APPROXIMATE_NAMES
        .iter()
        .filter(|(name, _)| calls(source, name))
        .map(|&(_, f)| f)
        .collect();
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|e| &e.function));
    for f in functions {
        for (_, e) in f.expressions.iter() {
            if let naga::Expression::Math { fun, .. } = *e {
                if is_approximate(fun) && !found.contains(&fun) {
                    found.push(fun);
                }
            }
        }
    }
    found
}

/// The compute entry points of `program`, each runnable or with the reason
/// it cannot be (a skip, not a failure); runtime-sized arrays get
/// [`fill::RUNTIME_ELEMENTS`] elements or a few more.
pub fn compute_entries(program: &Program) -> Vec<(String, Result<Entry, String>)> {
    compute_entries_sized(program, fill::RUNTIME_ELEMENTS)
}

/// [`compute_entries`] with at least `elements` in each runtime-sized array.
pub fn compute_entries_sized(
    program: &Program,
    elements: u32,
) -> Vec<(String, Result<Entry, String>)> {
    let module = &program.module;
    let mut layouter = Layouter::default();
    if let Err(e) = layouter.update(module.to_ctx()) {
        return vec![("?".into(), Err(format!("layout: {e}")))];
    }
    let approximate = approximate_calls(module, &program.source);
    module
        .entry_points
        .iter()
        .enumerate()
        .filter(|(_, e)| e.stage == naga::ShaderStage::Compute)
        .map(|(i, e)| {
            let entry = entry(program, &layouter, i, approximate.clone(), elements);
            (e.name.clone(), entry)
        })
        .collect()
}

fn entry(
    program: &Program,
    layouter: &Layouter,
    index: usize,
    approximate: Vec<naga::MathFunction>,
    elements: u32,
) -> Result<Entry, String> {
    let module = &program.module;
    let ep = &module.entry_points[index];
    if ep.workgroup_size_overrides.is_some() {
        return Err("workgroup size from an override".into());
    }
    if module.overrides.iter().any(|(_, o)| o.init.is_none()) {
        return Err("override without a default".into());
    }
    let info = program.info.get_entry_point(index);
    let mut used = Vec::new();
    let mut tails = Vec::new();
    for (handle, var) in module.global_variables.iter() {
        if info[handle].is_empty() {
            continue;
        }
        let uniform = match var.space {
            AddressSpace::Uniform => true,
            AddressSpace::Storage { .. } => false,
            AddressSpace::Private | AddressSpace::WorkGroup => continue,
            AddressSpace::Handle => return Err("textures or samplers".into()),
            other => return Err(format!("{other:?} variables")),
        };
        let Some(binding) = var.binding else {
            return Err("a buffer without a binding".into());
        };
        if matches!(module.types[var.ty].inner, TypeInner::BindingArray { .. }) {
            return Err("binding arrays".into());
        }
        if let Some(tail) = fill::runtime_tail(module, var.ty) {
            tails.push(tail);
        }
        used.push((var, binding, uniform));
    }
    let runtime_size = match tails.is_empty() {
        true => None,
        false => {
            Some(fill::common_size(&tails, elements).ok_or("runtime arrays of unrelated strides")?)
        }
    };
    let buffers = used
        .into_iter()
        .map(|(var, binding, uniform)| {
            buffer(module, layouter, var, binding, uniform, runtime_size)
        })
        .collect();
    Ok(Entry {
        name: ep.name.clone(),
        workgroup_size: ep.workgroup_size,
        buffers,
        runtime_size,
        approximate,
    })
}

/// One buffer with its contents; `runtime_size` is the size of every
/// buffer with a runtime-sized array.
fn buffer(
    module: &Module,
    layouter: &Layouter,
    var: &naga::GlobalVariable,
    binding: naga::ResourceBinding,
    uniform: bool,
    runtime_size: Option<u32>,
) -> Buffer {
    let name = var.name.clone().unwrap_or_default();
    let (size, runtime) = match (runtime_size, fill::runtime_tail(module, var.ty)) {
        (Some(size), Some((prefix, stride))) => (size, (size - prefix) / stride),
        _ => (fill::byte_size(module, layouter, var.ty, 0), 0),
    };
    // WebGPU binds storage buffers in multiples of 4 bytes (an `f16`
    // buffer is 2); the tail is padding.
    let size = size.next_multiple_of(4);
    let mut leaves = Vec::new();
    fill::leaves(module, var.ty, 0, runtime, &mut leaves);
    Buffer {
        bytes: fill::contents(&name, size, &leaves),
        name,
        group: binding.group,
        binding: binding.binding,
        uniform,
        leaves,
    }
}

/// True if `source` has `name` as a whole identifier followed by `(`.
fn calls(source: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    source.match_indices(name).any(|(i, _)| {
        let before = source[..i].chars().next_back();
        let after = source[i + name.len()..].trim_start();
        !before.is_some_and(ident) && after.starts_with('(')
    })
}
