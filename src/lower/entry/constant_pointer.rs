//! `constant T*` buffer arguments that a kernel reads at constant indices
//! only (`*p`, `p->m`, `p[2]`) as fixed-size `var<uniform>`s.
//!
//! Metal sizes a pointer's buffer when it is bound, and a WGSL uniform
//! needs a fixed size, so a pointer indexed with a run-time value stays
//! `var<storage, read>`. When every use of the parameter in its kernel is
//! a dereference or a subscript by an integer literal, the kernel reads
//! elements `0..n` only (`n` one past the largest index): the binding is
//! then `T` (`n == 1`) or `array<T, n>`, a uniform whenever that type
//! meets the uniform layout rules, as a `constant T&` is. Any other use
//! (passing `p` on, `p + i`, `&p[1]`, a copy into a variable or a struct,
//! a run-time index) keeps it storage: the pointer could then reach any
//! element.

use super::super::{Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{self, ExprKind, UnaryOp};
use crate::types::{AddressSpace, Pointer, Type};
use naga::Handle;
use std::cell::Cell;

/// A pointer argument bound as a fixed-size uniform.
#[derive(Clone, Copy, Debug)]
pub(in crate::lower) struct FixedUniform {
    /// The binding's WGSL type: the pointee, or an array of `elements`.
    pub ty: Handle<naga::Type>,
    /// How many elements the kernel reads.
    pub elements: u32,
}

impl Lowerer<'_, '_> {
    /// The uniform binding for `constant T*` parameter `param` of a kernel
    /// that reads it at constant indices only, if its type meets the
    /// uniform rules; `None` keeps the runtime-sized storage array.
    pub(in crate::lower) fn fixed_uniform_pointer(
        &mut self,
        param: &ast::Param,
        ptr: &Pointer,
        span: Span,
    ) -> Result<Option<FixedUniform>> {
        if ptr.space != AddressSpace::Constant || ptr.is_reference {
            return Ok(None);
        }
        let Some(elements) = self.constant_extent(param) else {
            return Ok(None);
        };
        // An array pointee stays an array of one: the binding's type being
        // an array is what tells a pointer to elements (`buffer_start`).
        let ty = match (elements, &ptr.pointee) {
            (1, p) if !matches!(p, Type::Array(..)) => self.naga_type(p, span)?,
            (n, p) => self.naga_type(&Type::Array(Box::new(p.clone()), n), span)?,
        };
        let fixed = FixedUniform { ty, elements };
        Ok(self.uniform_allowed(ptr, ty, true).then_some(fixed))
    }

    /// One past the largest index the kernel of `param` reads it at, when
    /// every use is `*p`, `p->m` or `p[literal]`; `None` for any other use
    /// or none at all.
    fn constant_extent(&self, param: &ast::Param) -> Option<u32> {
        let name = param.name.as_ref()?.name.as_str();
        let body = self.function_of(param)?.body.as_ref()?;
        let is_param =
            |e: &ast::Expr| matches!(&e.kind, ExprKind::Name(p) if p.len() == 1 && p[0] == name);
        // Each use of the name, and those in an allowed form (by address:
        // the visitor sees the enclosing expression first).
        let (uses, allowed, escapes) = (Cell::new(0u32), Cell::new(0u32), Cell::new(false));
        let extent = Cell::new(0u32);
        crate::sema::callgraph::visit_block(body, &mut |e: &ast::Expr| {
            let read_at = match &e.kind {
                ExprKind::Name(_) if is_param(e) => {
                    uses.set(uses.get() + 1);
                    return;
                }
                ExprKind::Unary(UnaryOp::Deref, p) if is_param(p) => Some(0),
                ExprKind::Member(p, _, true) if is_param(p) => Some(0),
                ExprKind::Index(p, i) if is_param(p) => literal_index(i),
                ExprKind::Unary(UnaryOp::AddrOf, inner) => {
                    escapes.set(escapes.get() || starts_at_param(inner, &is_param));
                    None
                }
                _ => None,
            };
            if let Some(i) = read_at {
                allowed.set(allowed.get() + 1);
                extent.set(extent.get().max(i.saturating_add(1)));
            }
        });
        let only_constant = uses.get() > 0 && uses.get() == allowed.get() && !escapes.get();
        only_constant.then_some(extent.get())
    }
}

/// The value of an index written as a non-negative integer literal that
/// fits a binding (`2`, `2u`, `(2)`), else `None`.
fn literal_index(e: &ast::Expr) -> Option<u32> {
    match &e.kind {
        ExprKind::Int { value, .. } => u32::try_from(*value).ok().filter(|v| *v < 1 << 16),
        ExprKind::Unary(UnaryOp::Plus, inner) => literal_index(inner),
        _ => None,
    }
}

/// True if the place `e` (`p[1].x`, `*p`, `p->m`) lies in parameter
/// `is_param`'s buffer: taking its address makes a pointer that may be
/// indexed past the elements read.
fn starts_at_param(e: &ast::Expr, is_param: &dyn Fn(&ast::Expr) -> bool) -> bool {
    match &e.kind {
        _ if is_param(e) => true,
        ExprKind::Unary(_, a) | ExprKind::Member(a, _, _) | ExprKind::Index(a, _) => {
            starts_at_param(a, is_param)
        }
        _ => false,
    }
}

impl Lowerer<'_, '_> {
    /// True if pointer buffer `global` holds one element, not an array:
    /// a [`FixedUniform`] of one element (every other pointer's buffer is
    /// an array).
    pub(in crate::lower) fn is_single_element(&self, global: Handle<naga::GlobalVariable>) -> bool {
        let ty = self.global.module.global_variables[global].ty;
        !matches!(
            self.global.module.types[ty].inner,
            naga::TypeInner::Array { .. }
        )
    }
}
