//! SIMD-group and quad-group functions (MSL §6.9.2–6.9.3) → naga subgroup
//! operations.

use super::builder::FnCtx;
use super::value::Value;
use super::{Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::Expr;

impl Lowerer<'_, '_> {
    /// A SIMD-group or quad-group function call; `None` if `name` is not one.
    pub(super) fn subgroup_call(
        &mut self,
        _fx: &mut FnCtx,
        _name: &str,
        _args: &[Expr],
        _span: Span,
    ) -> Result<Option<Value>> {
        Ok(None)
    }
}
