//! Size limits on arrays in memory that is not a buffer: thread
//! (`function`/`private`) and threadgroup (`workgroup`) memory.
//!
//! The limits, and why each is an error or a warning:
//! - Threadgroup memory: Metal itself allows at most 32 KiB
//!   (`maxTotalThreadgroupMemoryLength` on every Apple GPU family), so a
//!   larger threadgroup variable is an error. WebGPU guarantees only
//!   16 KiB (`maxComputeWorkgroupStorageSize`, whose default is also what
//!   the WGSL spec's limits table guarantees); between the two it is a
//!   warning: the pipeline needs a device created with a higher limit.
//! - Thread memory: Metal sets no limit, and neither do wgpu or Chrome in
//!   practice, but the WGSL spec guarantees only 8192 bytes of function-
//!   or private-space variables (Safari's WebGPU refuses more), and
//!   drivers spill large arrays: a warning above 8192 bytes per variable.
//! - Any type of 2 GiB or more cannot be laid out by naga (nor by any
//!   WGSL implementation, whose sizes are 32-bit): an error, located at
//!   the declaration rather than an internal error from validation.

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

/// Errors and warnings for oversized variables of `module`.
pub fn check(module: &Module) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for (h, var) in module.global_variables.iter() {
        let span = module.global_variables.get_span(h);
        let space = match var.space {
            AddressSpace::WorkGroup => Memory::Threadgroup,
            AddressSpace::Private => Memory::Thread,
            _ => continue,
        };
        let name = var.name.as_deref().unwrap_or("");
        found.extend(check_variable(module, var.ty, space, name, span));
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
            found.extend(check_variable(module, var.ty, Memory::Thread, name, span));
        }
    }
    found
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Memory {
    Thread,
    Threadgroup,
}

fn check_variable(
    module: &Module,
    ty: Handle<Type>,
    memory: Memory,
    name: &str,
    span: naga::Span,
) -> Option<Diagnostic> {
    let bytes = byte_size(module, ty);
    let r = span.to_range().unwrap_or(0..0);
    let span = Span::new(r.start, r.end);
    let what = match (memory, name) {
        (Memory::Thread, "") => "this variable".to_string(),
        (Memory::Threadgroup, "") => "this threadgroup variable".to_string(),
        (Memory::Thread, n) => format!("`{n}`"),
        (Memory::Threadgroup, n) => format!("threadgroup variable `{n}`"),
    };
    let located = |d: Diagnostic| {
        if span == Span::default() {
            Diagnostic {
                place: crate::diagnostics::Place::None,
                ..d
            }
        } else {
            d
        }
    };
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
        Memory::Threadgroup if bytes > METAL_THREADGROUP_BYTES => {
            let message = format!(
                "{what} is {bytes} bytes; Metal allows at most {METAL_THREADGROUP_BYTES} bytes of threadgroup memory"
            );
            Some(located(Diagnostic::error(
                Code::LimitExceeded,
                message,
                span,
            )))
        }
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
