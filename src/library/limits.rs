//! Size limits on arrays in memory that is not a buffer: thread
//! (`function`/`private`) and threadgroup (`workgroup`) memory.
//!
//! The limits, and why each is an error or a warning:
//! - Threadgroup memory: Metal itself allows at most 32 KiB per kernel
//!   (the maximum total threadgroup memory allocation of every Metal GPU
//!   family). Metal compiles a kernel that needs more, but makes no
//!   pipeline of it: such a kernel is left out of the WGSL with a warning,
//!   or is an error where it was asked for or is all there is
//!   ([`leave_out_unpipelined_kernels`]). WebGPU guarantees only 16 KiB
//!   (`maxComputeWorkgroupStorageSize`, whose default is also what the
//!   WGSL spec's limits table guarantees); between the two it is a
//!   warning: the pipeline needs a device created with a higher limit.
//! - Thread memory: Metal sets no limit, and neither do wgpu or Chrome in
//!   practice, but the WGSL spec guarantees only 8192 bytes of function-
//!   or private-space variables (Safari's WebGPU refuses more), and
//!   drivers spill large arrays: a warning above 8192 bytes per variable.
//! - Any type of 2 GiB or more cannot be laid out by naga (nor by any
//!   WGSL implementation, whose sizes are 32-bit): an error, located at
//!   the declaration rather than an internal error from validation.
//! - A type nesting composites (structs, arrays, vectors, matrices) more
//!   than 255 deep: naga accepts it, Tint (Chrome's WebGPU) refuses the
//!   module, so it is an error at the declaration that holds it.

use crate::diagnostics::{Code, Diagnostic};
use crate::source_map::Span;
use naga::{AddressSpace, ArraySize, Handle, Module, Type, TypeInner};

/// Bytes of threadgroup memory Metal allows.
pub const METAL_THREADGROUP_BYTES: u64 = 32 << 10;
/// Bytes of workgroup memory WebGPU guarantees.
pub const WEBGPU_WORKGROUP_BYTES: u64 = 16 << 10;
/// Bytes of function- or private-space variables WGSL guarantees.
pub const WGSL_THREAD_BYTES: u64 = 8 << 10;
/// The largest type size WGSL implementations can represent.
pub const MAX_TYPE_BYTES: u64 = i32::MAX as u64;
/// The deepest nesting of composite types Tint accepts.
pub const MAX_COMPOSITE_DEPTH: u32 = 255;

/// Errors and warnings for oversized variables of `module`.
pub fn check(module: &Module) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let depths = composite_depths(module);
    for (h, var) in module.global_variables.iter() {
        let span = module.global_variables.get_span(h);
        let space = match var.space {
            AddressSpace::WorkGroup => Memory::Threadgroup,
            AddressSpace::Private => Memory::Thread,
            _ => continue,
        };
        let name = var.name.as_deref().unwrap_or("");
        found.extend(check_variable(module, &depths, var.ty, space, name, span));
    }
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|e| &e.function));
    for f in functions {
        for (h, var) in f.local_variables.iter() {
            let span = f.local_variables.get_span(h);
            let name = var.name.as_deref().unwrap_or("");
            found.extend(check_variable(
                module,
                &depths,
                var.ty,
                Memory::Thread,
                name,
                span,
            ));
        }
    }
    found
}

/// The source span of a naga span (the default span where naga has none).
fn source_span(span: naga::Span) -> Span {
    span.to_range()
        .map_or(Span::default(), |r| Span::new(r.start, r.end))
}

/// `d`, placed nowhere where its span is the default one (a variable the
/// translator made, with no place in the source).
fn located(d: Diagnostic) -> Diagnostic {
    match matches!(d.place, crate::diagnostics::Place::Unit(s) if s == Span::default()) {
        true => Diagnostic {
            place: crate::diagnostics::Place::None,
            ..d
        },
        false => d,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Memory {
    Thread,
    Threadgroup,
}

fn check_variable(
    module: &Module,
    depths: &[u32],
    ty: Handle<Type>,
    memory: Memory,
    name: &str,
    span: naga::Span,
) -> Option<Diagnostic> {
    let bytes = byte_size(module, ty);
    let depth = depths.get(ty.index()).copied().unwrap_or(0);
    let span = source_span(span);
    let what = match (memory, name) {
        (Memory::Thread, "") => "this variable".to_string(),
        (Memory::Threadgroup, "") => "this threadgroup variable".to_string(),
        (Memory::Thread, n) => format!("`{n}`"),
        (Memory::Threadgroup, n) => format!("threadgroup variable `{n}`"),
    };
    if depth > MAX_COMPOSITE_DEPTH {
        let message = format!(
            "the type of {what} nests composite types {depth} deep, over the {MAX_COMPOSITE_DEPTH} levels WGSL implementations (Tint) allow"
        );
        return Some(located(
            Diagnostic::error(Code::LimitExceeded, message, span)
                .with_note("each struct and array around a value is one level"),
        ));
    }
    if bytes > MAX_TYPE_BYTES {
        let message = format!(
            "{what} is {bytes} bytes, over the limit of {MAX_TYPE_BYTES} bytes for a WGSL type"
        );
        return Some(located(Diagnostic::error(
            Code::LimitExceeded,
            message,
            span,
        )));
    }
    match memory {
        Memory::Threadgroup if bytes > WEBGPU_WORKGROUP_BYTES => {
            let message = format!(
                "{what} is {bytes} bytes, over the {WEBGPU_WORKGROUP_BYTES} bytes of workgroup memory WebGPU guarantees"
            );
            let d = Diagnostic::warning(Code::LargeArray, message, span)
                .with_note("the device needs a higher `maxComputeWorkgroupStorageSize` limit");
            Some(located(d))
        }
        Memory::Thread if bytes > WGSL_THREAD_BYTES => {
            let message = format!(
                "{what} is {bytes} bytes of thread memory, over the {WGSL_THREAD_BYTES} bytes WGSL guarantees"
            );
            let d = Diagnostic::warning(Code::LargeArray, message, span).with_note(
                "some WebGPU implementations refuse it, and drivers may spill it to slow memory",
            );
            Some(located(d))
        }
        _ => None,
    }
}

/// How deep each type of `module` nests composite types (WGSL's "nesting
/// depth": a scalar is 0, a vector or matrix 1, an array or struct one
/// more than its deepest element or member), by handle index. The arena
/// holds a type's parts before it, so one pass in order suffices (types
/// sharing parts are not walked again and again).
fn composite_depths(module: &Module) -> Vec<u32> {
    let mut depths: Vec<u32> = Vec::with_capacity(module.types.len());
    for (_, ty) in module.types.iter() {
        let depth = match &ty.inner {
            TypeInner::Vector { .. } | TypeInner::Matrix { .. } => 1,
            TypeInner::Array { base, .. } | TypeInner::BindingArray { base, .. } => {
                1 + depths.get(base.index()).copied().unwrap_or(0)
            }
            TypeInner::Struct { members, .. } => {
                1 + members
                    .iter()
                    .map(|m| depths.get(m.ty.index()).copied().unwrap_or(0))
                    .max()
                    .unwrap_or(0)
            }
            _ => 0,
        };
        depths.push(depth);
    }
    depths
}

/// The size of `ty` in bytes, in 64 bits so that oversized arrays cannot
/// overflow.
fn byte_size(module: &Module, ty: Handle<Type>) -> u64 {
    match &module.types[ty].inner {
        TypeInner::Array {
            size: ArraySize::Constant(n),
            stride,
            ..
        } => u64::from(n.get()) * u64::from(*stride),
        TypeInner::Array { .. } | TypeInner::BindingArray { .. } => 0,
        TypeInner::Struct { span, .. } => u64::from(*span),
        other => u64::from(other.size(module.to_ctx())),
    }
}

/// WebGPU's default limits that a shader stage's resources count against
/// (the `GPUSupportedLimits` defaults; the WGSL spec guarantees no more),
/// by their WebGPU names.
pub const DEFAULT_LIMITS: &[(&str, u64, &str)] = &[
    ("maxStorageBuffersPerShaderStage", 8, "storage buffers"),
    ("maxUniformBuffersPerShaderStage", 12, "uniform buffers"),
    ("maxSampledTexturesPerShaderStage", 16, "sampled textures"),
    ("maxStorageTexturesPerShaderStage", 4, "storage textures"),
    ("maxSamplersPerShaderStage", 16, "samplers"),
    (
        "maxComputeWorkgroupStorageSize",
        WEBGPU_WORKGROUP_BYTES,
        "bytes of workgroup memory",
    ),
    (
        "maxComputeInvocationsPerWorkgroup",
        256,
        "invocations per workgroup",
    ),
    ("maxComputeWorkgroupSizeX", 256, "threads in x"),
    ("maxComputeWorkgroupSizeY", 256, "threads in y"),
    ("maxComputeWorkgroupSizeZ", 64, "threads in z"),
];

/// What one entry point needs of each limit of [`DEFAULT_LIMITS`], and the
/// globals that count against the per-stage binding limits.
#[derive(Default)]
struct Needs {
    values: std::collections::BTreeMap<&'static str, u64>,
    globals: std::collections::BTreeMap<&'static str, Vec<Handle<naga::GlobalVariable>>>,
    /// The largest workgroup variable, which [`check`] warns about on its own.
    largest_workgroup: u64,
}

/// Leaves out of `lowered` the kernels Metal makes no pipeline of: their
/// threadgroup memory, each variable by Metal's layout rounded up to 16
/// bytes (Metal's threadgroup memory length alignment), takes more than
/// [`METAL_THREADGROUP_BYTES`]. Metal compiles such a kernel, and the
/// library's other functions are usable, so each is a warning (W0419),
/// and what only they used is dropped; it is an error (E0403) where
/// `entries` asks for it, or where no entry point would be left, and then
/// nothing is left out. A variable too large for any WGSL type is
/// [`check`]'s error instead.
pub fn leave_out_unpipelined_kernels(
    lowered: &mut crate::lower::Lowered,
    entries: &[String],
) -> Vec<Diagnostic> {
    let module = &lowered.module;
    let metal_bytes =
        |g: &Handle<naga::GlobalVariable>| lowered.threadgroup_bytes.get(g).copied().unwrap_or(0);
    let over: Vec<(usize, u64, Vec<Handle<naga::GlobalVariable>>)> = module
        .entry_points
        .iter()
        .enumerate()
        .filter(|(_, ep)| ep.stage == naga::ShaderStage::Compute)
        .filter_map(|(i, ep)| {
            let globals: Vec<_> = used_globals(module, &ep.function)
                .into_iter()
                .filter(|g| lowered.threadgroup_bytes.contains_key(g))
                .collect();
            let bytes: u64 = globals
                .iter()
                .map(|g| metal_bytes(g).next_multiple_of(16))
                .sum();
            let too_large = globals.iter().any(|g| metal_bytes(g) > MAX_TYPE_BYTES);
            (bytes > METAL_THREADGROUP_BYTES && !too_large).then_some((i, bytes, globals))
        })
        .collect();
    let all = over.len() == module.entry_points.len();
    let asked = over
        .iter()
        .any(|(i, ..)| entries.contains(&module.entry_points[*i].name));
    let diagnostics: Vec<Diagnostic> = over
        .iter()
        .map(|(i, bytes, globals)| {
            let sizes: Vec<_> = globals.iter().map(|g| (*g, metal_bytes(g))).collect();
            unpipelined(
                module,
                &module.entry_points[*i],
                *bytes,
                &sizes,
                !(all || asked),
            )
        })
        .collect();
    if all || asked {
        return diagnostics;
    }
    for (i, ..) in over.iter().rev() {
        lowered.module.entry_points.remove(*i);
        lowered.functions.remove(*i);
    }
    if !over.is_empty() {
        naga::compact::compact(&mut lowered.module, naga::compact::KeepUnused::No);
    }
    diagnostics
}

/// The diagnostic for kernel `ep`, whose threadgroup variables
/// `globals` (with their Metal sizes) take `bytes`, located at the largest
/// of them: a warning where it is `left_out`, else an error.
fn unpipelined(
    module: &Module,
    ep: &naga::EntryPoint,
    bytes: u64,
    globals: &[(Handle<naga::GlobalVariable>, u64)],
    left_out: bool,
) -> Diagnostic {
    let largest = globals.iter().max_by_key(|(_, size)| *size);
    let span = largest.map_or(Span::default(), |(g, _)| {
        source_span(module.global_variables.get_span(*g))
    });
    let message = format!(
        "`{}` needs {bytes} bytes of threadgroup memory; Metal allows at most {METAL_THREADGROUP_BYTES} bytes of threadgroup memory, and makes no pipeline of it",
        ep.name
    );
    let names: Vec<String> = globals
        .iter()
        .map(|(g, size)| {
            let name = module.global_variables[*g].name.as_deref().unwrap_or("?");
            format!("`{name}` ({size} bytes)")
        })
        .collect();
    let note = "32 KiB is every Metal GPU family's maximum total threadgroup memory allocation (Metal feature set tables)";
    let d = match left_out {
        true => Diagnostic::warning(Code::KernelOverThreadgroupMemory, message, span).with_note(
            "it is left out of the WGSL and the reflection; the library's other functions are translated",
        ),
        false => Diagnostic::error(Code::LimitExceeded, message, span),
    }
    .with_note(format!("its threadgroup variables: {}", names.join(", ")))
    .with_note(note);
    located(d)
}

/// Fills each function's `required_limits` with the WebGPU limits its
/// entry point needs above the defaults, and warns once for each.
/// `functions` are the reflections of `module.entry_points`, in order.
pub fn required(
    module: &Module,
    functions: &mut [crate::reflect::FunctionReflection],
) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for (ep, f) in module.entry_points.iter().zip(functions.iter_mut()) {
        let needs = entry_needs(module, ep);
        for &(limit, default, what) in DEFAULT_LIMITS {
            let Some(&value) = needs.values.get(limit).filter(|&&v| v > default) else {
                continue;
            };
            f.required_limits.insert(limit.to_string(), value);
            let warned = limit == "maxComputeWorkgroupStorageSize"
                && needs.largest_workgroup > WEBGPU_WORKGROUP_BYTES;
            if warned {
                continue;
            }
            let globals = needs.globals.get(limit).map_or(&[][..], |g| g.as_slice());
            found.push(limit_warning(
                module,
                f,
                (limit, default, what),
                value,
                globals,
            ));
        }
    }
    found
}

/// Counts the resources entry point `ep` uses and its workgroup needs.
fn entry_needs(module: &Module, ep: &naga::EntryPoint) -> Needs {
    let mut needs = Needs::default();
    let mut workgroup_bytes = 0;
    for g in used_globals(module, &ep.function) {
        let var = &module.global_variables[g];
        let limit = match (var.space, &module.types[var.ty].inner) {
            (AddressSpace::Storage { .. }, _) => "maxStorageBuffersPerShaderStage",
            (AddressSpace::Uniform, _) => "maxUniformBuffersPerShaderStage",
            (_, TypeInner::Image { class, .. }) => match class {
                naga::ImageClass::Storage { .. } => "maxStorageTexturesPerShaderStage",
                _ => "maxSampledTexturesPerShaderStage",
            },
            (_, TypeInner::Sampler { .. }) => "maxSamplersPerShaderStage",
            (AddressSpace::WorkGroup, _) => {
                // WebGPU counts each variable rounded up to 16 bytes.
                let bytes = byte_size(module, var.ty);
                workgroup_bytes += bytes.next_multiple_of(16);
                needs.largest_workgroup = needs.largest_workgroup.max(bytes);
                let limit = "maxComputeWorkgroupStorageSize";
                needs.globals.entry(limit).or_default().push(g);
                continue;
            }
            _ => continue,
        };
        *needs.values.entry(limit).or_default() += 1;
        needs.globals.entry(limit).or_default().push(g);
    }
    if ep.stage == naga::ShaderStage::Compute {
        let [x, y, z] = ep.workgroup_size.map(u64::from);
        needs
            .values
            .insert("maxComputeWorkgroupStorageSize", workgroup_bytes);
        needs
            .values
            .insert("maxComputeInvocationsPerWorkgroup", x * y * z);
        needs.values.insert("maxComputeWorkgroupSizeX", x);
        needs.values.insert("maxComputeWorkgroupSizeY", y);
        needs.values.insert("maxComputeWorkgroupSizeZ", z);
    }
    needs
}

/// The warning for `function` needing `value` of a limit whose default is
/// `default`, naming the arguments that count against it.
fn limit_warning(
    module: &Module,
    function: &crate::reflect::FunctionReflection,
    (limit, default, what): (&str, u64, &str),
    value: u64,
    globals: &[Handle<naga::GlobalVariable>],
) -> Diagnostic {
    let names: Vec<String> = globals
        .iter()
        .map(|&g| argument_name(module, function, g))
        .collect();
    let message = format!(
        "`{}` needs {value} {what}, over WebGPU's default `{limit}` of {default}",
        function.name
    );
    // Located at the first argument past a count's default, or at the first
    // variable of a size.
    let at = match globals.len() as u64 == value {
        true => usize::try_from(default).ok(),
        false => Some(0),
    };
    let span = at
        .and_then(|d| globals.get(d))
        .map_or(Span::default(), |&g| {
            source_span(module.global_variables.get_span(g))
        });
    let mut d = located(Diagnostic::warning(
        Code::DefaultLimitExceeded,
        message,
        span,
    ));
    if !names.is_empty() {
        let who = match limit {
            "maxComputeWorkgroupStorageSize" => "the threadgroup variables".to_string(),
            _ => format!("the {what}"),
        };
        d = d.with_note(format!("{who}: {}", names.join(", ")));
    }
    d.with_note(format!(
        "the device must be created with `requiredLimits: {{ {limit}: {value} }}` \
         (the function's `requiredLimits` in the reflection)"
    ))
}

/// "`name` [[buffer(n)]]" for a global that is an argument of `function`,
/// else the global's name.
fn argument_name(
    module: &Module,
    function: &crate::reflect::FunctionReflection,
    g: Handle<naga::GlobalVariable>,
) -> String {
    use crate::reflect::ArgumentKind;
    let var = &module.global_variables[g];
    let name = var.name.clone().unwrap_or_default();
    let Some(rb) = var.binding else {
        return format!("`{name}`");
    };
    let arg = function.arguments.iter().find(|a| {
        a.binding
            .is_some_and(|b| b.group == rb.group && b.binding == rb.binding)
    });
    match arg {
        Some(a) => {
            let attribute = match a.kind {
                ArgumentKind::Buffer => "buffer",
                ArgumentKind::Texture => "texture",
                ArgumentKind::Sampler => "sampler",
                ArgumentKind::ThreadgroupMemory => "threadgroup",
            };
            format!("`{}` [[{attribute}({})]]", a.name, a.index)
        }
        None => format!("`{name}`"),
    }
}

/// The globals `f` and the functions it calls use, in handle order.
fn used_globals(module: &Module, f: &naga::Function) -> Vec<Handle<naga::GlobalVariable>> {
    let mut globals = std::collections::BTreeSet::new();
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![f];
    while let Some(f) = todo.pop() {
        for (_, e) in f.expressions.iter() {
            if let naga::Expression::GlobalVariable(g) = *e {
                globals.insert(g);
            }
        }
        let mut calls = Vec::new();
        calls_in(&f.body, &mut calls);
        for c in calls {
            if seen.insert(c) {
                todo.push(&module.functions[c]);
            }
        }
    }
    globals.into_iter().collect()
}

/// The functions `block` calls directly.
fn calls_in(block: &naga::Block, out: &mut Vec<Handle<naga::Function>>) {
    use naga::Statement as S;
    for s in block.iter() {
        match s {
            S::Call { function, .. } => out.push(*function),
            S::Block(b) => calls_in(b, out),
            S::If { accept, reject, .. } => {
                calls_in(accept, out);
                calls_in(reject, out);
            }
            S::Switch { cases, .. } => cases.iter().for_each(|c| calls_in(&c.body, out)),
            S::Loop {
                body, continuing, ..
            } => {
                calls_in(body, out);
                calls_in(continuing, out);
            }
            _ => {}
        }
    }
}
