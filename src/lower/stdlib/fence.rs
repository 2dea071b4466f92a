//! `atomic_thread_fence(flags, order[, scope])` (MSL §6.15.2, Metal 3.2)
//! → the WGSL barrier of its memory flags.
//!
//! A fence orders the calling thread's accesses to the memory `flags`
//! names as the threads of `scope` observe them, without waiting for
//! anyone. WGSL has no fence: it orders memory between invocations only
//! with `workgroupBarrier`, `storageBarrier` and `textureBarrier`,
//! execution barriers of the workgroup that order the memory of their
//! kind among its invocations. So a fence becomes the strongest of them
//! that its flags name, which orders at least what the fence does among
//! the threads of the threadgroup (and also waits for them):
//!
//! - a fence that orders nothing another thread can observe translates to
//!   nothing: a `memory_order_relaxed` one (no fence in C++), one on
//!   `mem_none`, and one of `thread_scope_thread` (program order already
//!   orders a thread's accesses for itself);
//! - `thread_scope_simdgroup` and `thread_scope_threadgroup` fences become
//!   the barrier of their flags (`mem_device` → `storageBarrier`,
//!   `mem_threadgroup` → `workgroupBarrier`, `mem_texture` →
//!   `textureBarrier`);
//! - `thread_scope_device` and `thread_scope_system` fences become the
//!   same barrier, with warning W0409: nothing in WGSL orders memory
//!   between workgroups (or with the host), so the ordering holds only
//!   within the threadgroup.
//!
//! A barrier is valid only where every thread of the workgroup reaches it
//! (WGSL's uniform control flow, which Tint checks), in compute shaders:
//! a kernel that fences keeps its threads outside Metal's grid running to
//! its barriers, as one with `threadgroup_barrier` does
//! ([`super::Builtin::is_barrier`]). A fence in a vertex or fragment
//! function, where WGSL has no barrier, is refused.
//!
//! The scope is an enumerator of `metal::thread_scope` (`<metal_atomic>`),
//! or a constant of that type (MLX declares `thread_scope_system` itself on
//! SDKs that lack it); the translator numbers the enumerators as
//! [`SCOPES`] lists them.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{BinaryOp, Expr, ExprKind};
use crate::types::Scalar;

/// `metal::thread_scope`'s enumerators and the values the translator gives
/// them (`thread_scope_system` is 3 where MLX defines it from
/// `__METAL_MEMORY_SCOPE_SYSTEM__`).
pub(crate) const SCOPES: &[(&str, i64)] = &[
    ("thread_scope_thread", 0),
    ("thread_scope_threadgroup", 1),
    ("thread_scope_device", 2),
    ("thread_scope_system", 3),
    ("thread_scope_simdgroup", 4),
];

/// The memory orders a fence takes.
const ORDERS: &[&str] = &[
    "memory_order_relaxed",
    "memory_order_acquire",
    "memory_order_release",
    "memory_order_acq_rel",
    "memory_order_seq_cst",
];

/// The value of enumerator `name` of `metal::thread_scope`, if it is one.
pub(crate) fn scope_value(name: &str) -> Option<i64> {
    SCOPES.iter().find(|(n, _)| *n == name).map(|s| s.1)
}

impl Lowerer<'_, '_> {
    /// `atomic_thread_fence(flags, order[, scope])` (see the module
    /// documentation); the scope is `thread_scope_device` when left out.
    pub(in crate::lower) fn thread_fence(
        &mut self,
        fx: &mut FnCtx,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let name = "atomic_thread_fence";
        let (flags, order, scope) = match args {
            [f, o] => (f, o, None),
            [f, o, s] => (f, o, Some(s)),
            _ => {
                return Err(Error::coded(
                    Code::NoMatchingOverload,
                    span,
                    format!("`{name}` takes 2 or 3 arguments, {} given", args.len()),
                ))
            }
        };
        let mut barrier = naga::Barrier::empty();
        fence_flags(flags, &mut barrier)?;
        let order_name = last_name(order);
        if !ORDERS.contains(&order_name) {
            return Err(Error::coded(
                Code::InvalidBuiltinArgument,
                order.span,
                "expected a memory order such as `memory_order_seq_cst`",
            ));
        }
        let scope = match scope {
            Some(s) => self.fence_scope(s)?,
            None => "thread_scope_device",
        };
        if order_name == "memory_order_relaxed"
            || barrier.is_empty()
            || scope == "thread_scope_thread"
        {
            return Ok(Value::Void);
        }
        if fx.fragment {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                span,
                format!("`{name}` with `{scope}` has no WebGPU equivalent in a fragment function"),
            )
            .note("WGSL orders memory between invocations only with workgroup barriers, which compute shaders alone have"));
        }
        if matches!(scope, "thread_scope_device" | "thread_scope_system") {
            self.global.warnings.push(
                Error::coded(
                    Code::FenceNarrowed,
                    span,
                    format!("`{name}` with `{scope}` orders memory only among the threads of one threadgroup in WGSL"),
                )
                .note("it is translated to a workgroup barrier of its memory flags: WGSL orders nothing between workgroups, and every thread of the threadgroup must reach the barrier"),
            );
        }
        fx.uses_barrier = true;
        fx.push(naga::Statement::ControlBarrier(barrier), span);
        Ok(Value::Void)
    }

    /// The `thread_scope` enumerator that argument `e` names or evaluates to.
    fn fence_scope(&self, e: &Expr) -> Result<&'static str> {
        let invalid = || {
            Error::coded(
                Code::InvalidBuiltinArgument,
                e.span,
                "expected a thread scope such as `thread_scope_device`",
            )
        };
        if let Some((n, _)) = SCOPES.iter().find(|(n, _)| *n == last_name(e)) {
            return Ok(n);
        }
        // A constant of type `thread_scope` (`static_cast<thread_scope>(3)`).
        let value = crate::sema::consteval::eval(self.program, e)
            .ok()
            .and_then(|v| v.as_int())
            .ok_or_else(invalid)?;
        SCOPES
            .iter()
            .find(|(_, v)| *v == value)
            .map(|(n, _)| *n)
            .ok_or_else(invalid)
    }
}

/// The last name of a `mem_flags`, `memory_order` or `thread_scope`
/// argument (`mem_flags::mem_device` is `mem_device`), or "".
fn last_name(e: &Expr) -> &str {
    match &e.kind {
        ExprKind::Name(path) => path.last().map(String::as_str).unwrap_or(""),
        _ => "",
    }
}

/// The barrier flags of `mem_device | mem_threadgroup`, ...
fn fence_flags(e: &Expr, into: &mut naga::Barrier) -> Result<()> {
    if let ExprKind::Binary(BinaryOp::BitOr, a, b) = &e.kind {
        fence_flags(a, into)?;
        return fence_flags(b, into);
    }
    *into |= match last_name(e) {
        "mem_none" => naga::Barrier::empty(),
        "mem_device" => naga::Barrier::STORAGE,
        "mem_threadgroup" | "mem_threadgroup_imageblock" => naga::Barrier::WORK_GROUP,
        "mem_texture" => naga::Barrier::TEXTURE,
        // Object data is mesh-pipeline memory, which WGSL does not have.
        "mem_object_data" => naga::Barrier::empty(),
        _ => {
            return Err(Error::coded(
                Code::InvalidBuiltinArgument,
                e.span,
                "expected a `mem_flags` value",
            ))
        }
    };
    Ok(())
}

/// `thread_scope_device` and the other enumerators as constants of
/// `thread_scope` (an `int`-sized enum).
pub(crate) fn scope_constant(name: &str) -> Option<crate::sema::consteval::ConstValue> {
    scope_value(name).map(|v| crate::sema::consteval::ConstValue::Int(v, Scalar::Int))
}
