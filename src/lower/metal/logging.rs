//! Shader logging (`<metal_logging>`, MSL §6.19, Metal 3.2).
//!
//! **Metal**: `os_log_default.log("x = %d", x)` and the calls of an
//! `os_log` object (`constant os_log logger("subsystem", "category");
//! logger.log_debug(..)`) append a message to a log the host reads once the
//! command buffer completes, when logging is enabled for it; a message
//! changes no value the shader computes.
//!
//! **WGSL/WebGPU**: shaders have no logging (nor strings of any kind).
//!
//! **Mapping**: each logging call is dropped with warning W0407; its
//! arguments are not evaluated (C++ evaluates them, but an argument with
//! a side effect in a log call is the only difference, and Metal's logging
//! is itself off unless the host enables it). `os_log` objects are
//! constants without a value ([`crate::sema::Program::os_log`]); string
//! literals are accepted only as the arguments of these calls.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::Symbol;
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind};

/// The member functions of `metal::os_log` (one per log level).
const LOG_FUNCTIONS: &[&str] = &["log", "log_debug", "log_info", "log_error", "log_fault"];

impl Lowerer<'_, '_> {
    /// `logger.log(..)`: dropped with a warning, giving `void`; `None` for
    /// any other call.
    pub(in crate::lower) fn logging_call(
        &mut self,
        fx: &FnCtx,
        callee: &Expr,
        span: Span,
    ) -> Option<Value> {
        let ExprKind::Member(object, function, false) = &callee.kind else {
            return None;
        };
        if !LOG_FUNCTIONS.contains(&function.name.as_str()) || !self.is_log_object(fx, object) {
            return None;
        }
        self.global.warnings.push(Error::coded(
            Code::LoggingDropped,
            span,
            format!(
                "`{}` was dropped: WebGPU shaders cannot log (Metal's shader logging)",
                function.name
            ),
        ));
        Some(Value::Void)
    }

    /// Whether `e` names an `os_log` object: `os_log_default` (Metal's
    /// default log) or a program-scope `os_log` constant.
    fn is_log_object(&self, fx: &FnCtx, e: &Expr) -> bool {
        let ExprKind::Name(path) = &e.kind else {
            return false;
        };
        let qualified = path.join("::");
        match self.program.symbols.get(&qualified) {
            Some(Symbol::Constant(i)) => {
                self.program.is_os_log(&self.program.constants[*i].ty)
                    && (path.len() > 1 || fx.lookup(&qualified).is_none())
            }
            Some(_) => false,
            None => {
                matches!(
                    qualified.as_str(),
                    "os_log_default" | "metal::os_log_default"
                ) && fx.lookup(&qualified).is_none()
            }
        }
    }

    /// A string literal outside a logging call: WGSL has no strings.
    pub(in crate::lower) fn string_literal(&self, span: Span) -> Result<Value> {
        Err(Error::coded(
            Code::NoWebGpuEquivalent,
            span,
            "string literals have no WGSL equivalent; they are accepted only as arguments of logging calls (`os_log`)",
        ))
    }
}
