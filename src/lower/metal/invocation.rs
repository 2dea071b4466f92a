//! Per-invocation state that the kernel prologue computes and any function
//! can read (WGSL built-ins only reach the entry point): whether this thread
//! is inside Metal's grid, and its SIMD-group lane and width.

use crate::lower::ctx::entry::Feature;
use crate::lower::ctx::function::FnCtx;
use crate::lower::Lowerer;
use crate::source_map::Span;
use crate::types::{Scalar, Type};
use naga::{Expression, Handle, Statement};

/// Private global names.
pub(in crate::lower) const ACTIVE: &str = "metal_active";
pub(in crate::lower) const SIMD_LANE: &str = "metal_simd_lane";
pub(in crate::lower) const SIMD_SIZE: &str = "metal_simd_size";

impl Lowerer<'_, '_> {
    /// The `var<private>` named `name`, created on first use.
    pub(in crate::lower) fn private_global(
        &mut self,
        name: &'static str,
        ty: &Type,
    ) -> Handle<naga::GlobalVariable> {
        if let Some(g) = self.global.privates.get(name) {
            return *g;
        }
        let ty = self
            .naga_type(ty, Span::default())
            .expect("scalar types lower");
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(name.into()),
                space: naga::AddressSpace::Private,
                binding: None,
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            naga::Span::UNDEFINED,
        );
        self.global.privates.insert(name, g);
        g
    }

    fn load_private(
        &mut self,
        fx: &mut FnCtx,
        name: &'static str,
        ty: &Type,
        span: Span,
    ) -> Handle<Expression> {
        let g = self.private_global(name, ty);
        let p = fx.add(Expression::GlobalVariable(g), span);
        fx.add(Expression::Load { pointer: p }, span)
    }

    /// Sets a private global (in the prologue).
    pub(in crate::lower) fn set_private(
        &mut self,
        fx: &mut FnCtx,
        name: &'static str,
        ty: &Type,
        value: Handle<Expression>,
        span: Span,
    ) {
        let g = self.private_global(name, ty);
        let p = fx.add(Expression::GlobalVariable(g), span);
        fx.push(Statement::Store { pointer: p, value }, span);
    }

    /// In a kernel with barriers, `true` for threads inside Metal's grid;
    /// `None` when every running thread is inside it.
    pub(in crate::lower) fn active(
        &mut self,
        fx: &mut FnCtx,
        span: Span,
    ) -> Option<Handle<Expression>> {
        self.entry
            .predicated
            .then(|| self.load_private(fx, ACTIVE, &Type::BOOL, span))
    }

    /// This thread's lane in its SIMD-group (`thread_index_in_simdgroup`).
    pub(in crate::lower) fn simd_lane(&mut self, fx: &mut FnCtx, span: Span) -> Handle<Expression> {
        self.require_feature(crate::lower::ctx::entry::Feature::Subgroup);
        self.load_private(fx, SIMD_LANE, &Type::UINT, span)
    }

    /// The SIMD-group width (`threads_per_simdgroup`).
    pub(in crate::lower) fn simd_size(&mut self, fx: &mut FnCtx, span: Span) -> Handle<Expression> {
        self.require_feature(crate::lower::ctx::entry::Feature::Subgroup);
        self.load_private(fx, SIMD_SIZE, &Type::Scalar(Scalar::UInt), span)
    }

    /// Records a wgpu feature the kernel being lowered needs.
    pub(in crate::lower) fn require_feature(&mut self, feature: Feature) {
        self.entry.features.insert(feature);
    }

    /// Pushes a statement with a side effect on memory other threads see; in
    /// a kernel with barriers, only threads inside the grid perform it.
    pub(in crate::lower) fn push_effect(
        &mut self,
        fx: &mut FnCtx,
        stmt: Statement,
        pointer: Option<Handle<Expression>>,
        span: Span,
    ) {
        let shared = pointer.is_none_or(|p| points_to_shared_memory(fx, p));
        match self.active(fx, span).filter(|_| shared) {
            Some(active) => {
                let mut accept = naga::Block::new();
                accept.push(stmt, Self::span(span));
                fx.push(
                    Statement::If {
                        condition: active,
                        accept,
                        reject: naga::Block::new(),
                    },
                    span,
                );
            }
            None => fx.push(stmt, span),
        }
    }
}

/// True if `pointer` leads into a buffer or threadgroup memory.
pub(in crate::lower) fn points_to_shared_memory(
    fx: &FnCtx,
    mut pointer: Handle<Expression>,
) -> bool {
    loop {
        match *fx.expr(pointer) {
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                pointer = base
            }
            Expression::GlobalVariable(_) => return true,
            _ => return false,
        }
    }
}
