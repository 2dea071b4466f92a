//! Metal's compute-function attributes (MSL Table 5.8) computed from WGSL's
//! built-ins and the dispatch uniform: grid positions, the clipped size of
//! edge threadgroups, SIMD-group lanes, and the guard that stops threads
//! outside a `dispatchThreads` grid.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::metal::invocation;
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Statement};

/// `@binding` of the dispatch uniform in `@group(0)` (mapping doc §1.4:
/// buffers at n, textures at 64+n, samplers at 128+n, synthetic from 192).
pub const DISPATCH_BINDING: u32 = 192;

/// Metal's compute-function input attributes (MSL Table 5.8) handled here.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(in crate::lower) enum Builtin {
    ThreadPositionInGrid,
    ThreadPositionInThreadgroup,
    ThreadIndexInThreadgroup,
    ThreadgroupPositionInGrid,
    ThreadsPerThreadgroup,
    DispatchThreadsPerThreadgroup,
    ThreadgroupsPerGrid,
    ThreadsPerGrid,
    ThreadIndexInSimdgroup,
    ThreadsPerSimdgroup,
    SimdgroupIndexInThreadgroup,
    SimdgroupsPerThreadgroup,
    ThreadIndexInQuadgroup,
    QuadgroupIndexInThreadgroup,
    QuadgroupsPerThreadgroup,
    /// `[[grid_origin]]`: the stage-in region's origin.
    GridOrigin,
    /// `[[grid_size]]`: the stage-in region's size.
    GridSize,
}

impl Builtin {
    /// Needs the SIMD-group lane or width.
    pub(in crate::lower) fn is_simd(self) -> bool {
        matches!(
            self,
            Builtin::ThreadIndexInSimdgroup
                | Builtin::ThreadsPerSimdgroup
                | Builtin::SimdgroupIndexInThreadgroup
                | Builtin::SimdgroupsPerThreadgroup
                | Builtin::ThreadIndexInQuadgroup
        )
    }

    /// Scalar attributes (no vector forms).
    pub(in crate::lower) fn is_scalar(self) -> bool {
        self.is_simd()
            || matches!(
                self,
                Builtin::ThreadIndexInThreadgroup
                    | Builtin::QuadgroupIndexInThreadgroup
                    | Builtin::QuadgroupsPerThreadgroup
            )
    }
}

/// The compute attribute named `name`.
pub(in crate::lower) fn builtin(name: &str) -> Option<Builtin> {
    Some(match name {
        "thread_position_in_grid" => Builtin::ThreadPositionInGrid,
        "thread_position_in_threadgroup" => Builtin::ThreadPositionInThreadgroup,
        "thread_index_in_threadgroup" => Builtin::ThreadIndexInThreadgroup,
        "threadgroup_position_in_grid" => Builtin::ThreadgroupPositionInGrid,
        "threads_per_threadgroup" => Builtin::ThreadsPerThreadgroup,
        "dispatch_threads_per_threadgroup" => Builtin::DispatchThreadsPerThreadgroup,
        "threadgroups_per_grid" => Builtin::ThreadgroupsPerGrid,
        "threads_per_grid" => Builtin::ThreadsPerGrid,
        "thread_index_in_simdgroup" => Builtin::ThreadIndexInSimdgroup,
        "threads_per_simdgroup" | "thread_execution_width" => Builtin::ThreadsPerSimdgroup,
        "simdgroup_index_in_threadgroup" => Builtin::SimdgroupIndexInThreadgroup,
        "simdgroups_per_threadgroup" | "dispatch_simdgroups_per_threadgroup" => {
            Builtin::SimdgroupsPerThreadgroup
        }
        "thread_index_in_quadgroup" => Builtin::ThreadIndexInQuadgroup,
        "quadgroup_index_in_threadgroup" => Builtin::QuadgroupIndexInThreadgroup,
        "quadgroups_per_threadgroup" | "dispatch_quadgroups_per_threadgroup" => {
            Builtin::QuadgroupsPerThreadgroup
        }
        "grid_origin" => Builtin::GridOrigin,
        "grid_size" => Builtin::GridSize,
        _ => return None,
    })
}

/// Values the prologue computes from the WGSL built-ins.
pub(in crate::lower) struct Geometry {
    pub(in crate::lower) wg: [u32; 3],
    pub(in crate::lower) lane: Option<Handle<Expression>>,
    pub(in crate::lower) simd_size: Option<Handle<Expression>>,
    pub(in crate::lower) gid: Handle<Expression>,
    pub(in crate::lower) lid: Handle<Expression>,
    pub(in crate::lower) index: Handle<Expression>,
    pub(in crate::lower) wid: Handle<Expression>,
    pub(in crate::lower) tg_size: Handle<Expression>,
    pub(in crate::lower) edge_size: Handle<Expression>,
    pub(in crate::lower) groups: Handle<Expression>,
    pub(in crate::lower) grid: Handle<Expression>,
    /// Where a `[[stage_in]]`'s elements start: `None` reads the stage-in
    /// region's origin (kernels); a vertex function run as a compute
    /// dispatch starts at its draw's base vertex and base instance.
    pub(in crate::lower) stage_in_origin: Option<Handle<Expression>>,
}

impl Lowerer<'_, '_> {
    pub(in crate::lower) fn check_builtin_type(
        &self,
        b: Builtin,
        ty: &Type,
        attr: &str,
        p: &ast::Param,
    ) -> Result<()> {
        let ok = match b {
            b if b.is_scalar() => matches!(ty, Type::Scalar(Scalar::UInt | Scalar::UShort)),
            _ => matches!(
                ty,
                Type::Scalar(Scalar::UInt | Scalar::UShort)
                    | Type::Vector(Scalar::UInt | Scalar::UShort, 2 | 3)
            ),
        };
        if ok {
            return Ok(());
        }
        Err(Error::coded(
            Code::EntryPointSignature,
            p.ty.span,
            format!(
                "`[[{attr}]]` argument must be of type `uint` or `ushort`{}, not `{}`",
                if b.is_scalar() {
                    ""
                } else {
                    " (or a 2- or 3-component vector of them)"
                },
                self.program.display(ty)
            ),
        ))
    }
    /// The shared dispatch uniform (see [`crate::reflect::DispatchParams`]).
    pub(in crate::lower) fn dispatch_global(&mut self) -> Handle<naga::GlobalVariable> {
        if let Some(g) = self.global.dispatch {
            return g;
        }
        let g = self.uint3_uniform(
            ("MetalDispatch", "metal_dispatch"),
            &["grid_size", "group_offset", "threadgroups"],
            DISPATCH_BINDING,
        );
        self.global.dispatch = Some(g);
        g
    }

    /// A `var<uniform>` at `@group(0) @binding(binding)` named `names.1`, of
    /// the struct `names.0` whose `members` are `vec3<u32>`s 16 bytes apart
    /// (the dispatch uniform, the stage-in region).
    pub(in crate::lower) fn uint3_uniform(
        &mut self,
        (type_name, name): (&str, &str),
        members: &[&str],
        binding: u32,
    ) -> Handle<naga::GlobalVariable> {
        let v3 = self
            .naga_type(&Type::Vector(Scalar::UInt, 3), Span::default())
            .expect("uint3");
        let members = (0u32..)
            .zip(members)
            .map(|(i, m)| naga::StructMember {
                name: Some((*m).into()),
                ty: v3,
                binding: None,
                offset: 16 * i,
            })
            .collect::<Vec<_>>();
        let span = 16 * members.len() as u32;
        let ty = self.global.module.types.insert(
            naga::Type {
                name: Some(type_name.into()),
                inner: naga::TypeInner::Struct { members, span },
            },
            naga::Span::UNDEFINED,
        );
        self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(name.into()),
                space: naga::AddressSpace::Uniform,
                binding: Some(naga::ResourceBinding { group: 0, binding }),
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            naga::Span::UNDEFINED,
        )
    }

    /// Computes Metal's grid geometry from WGSL's built-ins and the uniform.
    pub(in crate::lower) fn prologue(
        &mut self,
        fx: &mut FnCtx,
        wg: [u32; 3],
        subgroups: bool,
        span: Span,
    ) -> Result<Geometry> {
        let v3 = self.naga_type(&Type::Vector(Scalar::UInt, 3), span)?;
        let u = self.naga_type(&Type::UINT, span)?;
        let lid = builtin_argument(fx, "local_id", v3, naga::BuiltIn::LocalInvocationId, span);
        let group = builtin_argument(fx, "group_id", v3, naga::BuiltIn::WorkGroupId, span);
        let index = builtin_argument(
            fx,
            "local_index",
            u,
            naga::BuiltIn::LocalInvocationIndex,
            span,
        );
        let g = self.dispatch_global();
        let ubo = fx.add(Expression::GlobalVariable(g), span);
        let field = |fx: &mut FnCtx, i| {
            let p = fx.add(
                Expression::AccessIndex {
                    base: ubo,
                    index: i,
                },
                span,
            );
            fx.add(Expression::Load { pointer: p }, span)
        };
        let grid = field(fx, 0);
        // The first threadgroup of this part of the dispatch, or zero where
        // the host promises dispatches of one part
        // (`Options::one_part_dispatch`), so that no load is made: an H100
        // ran a tiled matmul 1 % faster without it (BENCHMARKS.md). A
        // translation option, not a WGSL `override`: any override makes
        // wgpu run naga's override processing, which rejects some valid
        // modules (Tint's `dynamic_index/write` tests).
        let offset = match self.settings.one_part_dispatch {
            true => fx.add(Expression::ZeroValue(v3), span),
            false => field(fx, 1),
        };
        let groups = field(fx, 2);
        let lits: Vec<_> = wg
            .iter()
            .map(|x| fx.add(Expression::Literal(naga::Literal::U32(*x)), span))
            .collect();
        let tg_size = fx.add(
            Expression::Compose {
                ty: v3,
                components: lits,
            },
            span,
        );
        let wid = bin_op(fx, Bo::Add, group, offset, span);
        let first = bin_op(fx, Bo::Multiply, wid, tg_size, span);
        let gid = bin_op(fx, Bo::Add, first, lid, span);
        // Edge threadgroups of a dispatchThreads grid are smaller (MSL §5.2.3.6).
        let left = bin_op(fx, Bo::Subtract, grid, first, span);
        let edge_size = fx.add(
            Expression::Math {
                fun: naga::MathFunction::Min,
                arg: tg_size,
                arg1: Some(left),
                arg2: None,
                arg3: None,
            },
            span,
        );
        let (lane, simd_size) = if subgroups {
            let (lane, size) = if self.emulates_simd() {
                self.emulated_lane_and_size(fx, index, wg, span)
            } else {
                self.simd_lane_and_size(fx, wg, u, span)
            };
            (Some(lane), Some(size))
        } else {
            (None, None)
        };
        if self.entry.predicated {
            self.set_active(fx, gid, grid, span)?;
        }
        Ok(Geometry {
            wg,
            lane,
            simd_size,
            gid,
            lid,
            index,
            wid,
            tg_size,
            edge_size,
            groups,
            grid,
            stage_in_origin: None,
        })
    }

    /// The SIMD-group lane and width, also kept in their privates for the
    /// helper functions.
    fn simd_lane_and_size(
        &mut self,
        fx: &mut FnCtx,
        wg: [u32; 3],
        u: Handle<naga::Type>,
        span: Span,
    ) -> (Handle<Expression>, Handle<Expression>) {
        // naga allows `subgroup_invocation_id` only in 1-D workgroups;
        // elsewhere count the lanes below this one while all are active.
        let lane = if wg[1] * wg[2] == 1 {
            builtin_argument(
                fx,
                "simd_lane",
                u,
                naga::BuiltIn::SubgroupInvocationId,
                span,
            )
        } else {
            let one = fx.add(Expression::Literal(naga::Literal::U32(1)), span);
            let result = fx.add_result(Expression::SubgroupOperationResult { ty: u }, span);
            fx.push(
                Statement::SubgroupCollectiveOperation {
                    op: naga::SubgroupOperation::Add,
                    collective_op: naga::CollectiveOperation::ExclusiveScan,
                    argument: one,
                    result,
                },
                span,
            );
            result
        };
        let size = builtin_argument(fx, "simd_size", u, naga::BuiltIn::SubgroupSize, span);
        self.set_private(fx, invocation::SIMD_LANE, &Type::UINT, lane, span);
        self.set_private(fx, invocation::SIMD_SIZE, &Type::UINT, size, span);
        self.require_feature(crate::lower::ctx::entry::Feature::Subgroup);
        (lane, size)
    }

    /// A predicated kernel's `metal_active`: whether the thread lies inside
    /// the grid, `metal_whole_grid || all(gid < grid)`. The override lets a
    /// host that dispatches whole threadgroups promise it, so that the
    /// driver folds every guarded store into a plain one.
    fn set_active(
        &mut self,
        fx: &mut FnCtx,
        gid: Handle<Expression>,
        grid: Handle<Expression>,
        span: Span,
    ) -> Result<()> {
        let inside = bin_op(fx, Bo::Less, gid, grid, span);
        let all = fx.add(
            Expression::Relational {
                fun: naga::RelationalFunction::All,
                argument: inside,
            },
            span,
        );
        let whole = self.named_override(
            crate::reflect::WHOLE_GRID_OVERRIDE,
            &Type::BOOL,
            naga::Literal::Bool(false),
            span,
        )?;
        let whole = fx.add(Expression::Override(whole), span);
        let active = bin_op(fx, Bo::LogicalOr, whole, all, span);
        self.set_private(fx, invocation::ACTIVE, &Type::BOOL, active, span);
        Ok(())
    }

    /// The module's override `name` of type `ty`, whose default is
    /// `default`, created on first use (the whole-grid promise here, the
    /// sample count in `sample_positions.rs`). It has no `@id`, so it can
    /// never take a function constant's (`@id(n)` for
    /// `[[function_constant(n)]]`).
    pub(in crate::lower) fn named_override(
        &mut self,
        name: &str,
        ty: &Type,
        default: naga::Literal,
        span: Span,
    ) -> Result<Handle<naga::Override>> {
        let module = &mut self.global.module;
        if let Some((h, _)) = module
            .overrides
            .iter()
            .find(|(_, o)| o.name.as_deref() == Some(name))
        {
            return Ok(h);
        }
        let ty = self.naga_type(ty, span)?;
        let module = &mut self.global.module;
        let init = module
            .global_expressions
            .append(Expression::Literal(default), Self::span(span));
        Ok(module.overrides.append(
            naga::Override {
                name: Some(name.to_string()),
                id: None,
                ty,
                init: Some(init),
            },
            Self::span(span),
        ))
    }

    /// `if (any(gid >= grid)) { return; }`: threads WGSL launches beyond a
    /// dispatchThreads grid do not exist in Metal.
    pub(in crate::lower) fn grid_guard(&mut self, fx: &mut FnCtx, g: &Geometry, span: Span) {
        let outside = fx.add(
            Expression::Binary {
                op: Bo::GreaterEqual,
                left: g.gid,
                right: g.grid,
            },
            span,
        );
        let any = fx.add(
            Expression::Relational {
                fun: naga::RelationalFunction::Any,
                argument: outside,
            },
            span,
        );
        let mut ret = naga::Block::new();
        ret.push(Statement::Return { value: None }, Self::span(span));
        fx.push(
            Statement::If {
                condition: any,
                accept: ret,
                reject: naga::Block::new(),
            },
            span,
        );
    }
    /// The value of a compute attribute, in the parameter's type.
    pub(in crate::lower) fn builtin_value(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        ty: &Type,
        geo: &Geometry,
        span: Span,
    ) -> Handle<Expression> {
        let lit = |fx: &mut FnCtx, v: u32| fx.add(Expression::Literal(naga::Literal::U32(v)), span);
        let bin =
            |fx: &mut FnCtx, op, left, right| fx.add(Expression::Binary { op, left, right }, span);
        let total: u32 = geo.wg.iter().product();
        let vector = match b {
            Builtin::ThreadPositionInGrid => geo.gid,
            Builtin::ThreadPositionInThreadgroup => geo.lid,
            Builtin::ThreadgroupPositionInGrid => geo.wid,
            Builtin::ThreadsPerThreadgroup => geo.edge_size,
            Builtin::DispatchThreadsPerThreadgroup => geo.tg_size,
            Builtin::ThreadgroupsPerGrid => geo.groups,
            Builtin::ThreadsPerGrid => geo.grid,
            Builtin::ThreadIndexInThreadgroup => return geo.index,
            Builtin::ThreadIndexInSimdgroup => return geo.lane.expect("subgroup prologue"),
            Builtin::ThreadsPerSimdgroup => return geo.simd_size.expect("subgroup prologue"),
            Builtin::SimdgroupIndexInThreadgroup => {
                return bin(
                    fx,
                    Bo::Divide,
                    geo.index,
                    geo.simd_size.expect("subgroup prologue"),
                )
            }
            Builtin::SimdgroupsPerThreadgroup => {
                let size = geo.simd_size.expect("subgroup prologue");
                let t = lit(fx, total);
                let one = lit(fx, 1);
                let sum = bin(fx, Bo::Add, t, size);
                let sum = bin(fx, Bo::Subtract, sum, one);
                return bin(fx, Bo::Divide, sum, size);
            }
            Builtin::ThreadIndexInQuadgroup => {
                let three = lit(fx, 3);
                return bin(fx, Bo::And, geo.lane.expect("subgroup prologue"), three);
            }
            Builtin::QuadgroupIndexInThreadgroup => {
                let four = lit(fx, 4);
                return bin(fx, Bo::Divide, geo.index, four);
            }
            Builtin::QuadgroupsPerThreadgroup => return lit(fx, total.div_ceil(4)),
            // The region the host sets (`kernel_stage_in.rs`).
            Builtin::GridOrigin => self.stage_in_region_field(fx, 0, span),
            Builtin::GridSize => self.stage_in_region_field(fx, 1, span),
        };
        match ty.vector_size() {
            Some(1) => fx.add(
                Expression::AccessIndex {
                    base: vector,
                    index: 0,
                },
                span,
            ),
            Some(2) => fx.add(
                Expression::Swizzle {
                    size: naga::VectorSize::Bi,
                    vector,
                    pattern: [
                        naga::SwizzleComponent::X,
                        naga::SwizzleComponent::Y,
                        naga::SwizzleComponent::X,
                        naga::SwizzleComponent::X,
                    ],
                },
                span,
            ),
            _ => vector,
        }
    }
}

/// A new entry-point argument `name` of type `ty` bound to WGSL built-in `b`.
fn builtin_argument(
    fx: &mut FnCtx,
    name: &str,
    ty: Handle<naga::Type>,
    b: naga::BuiltIn,
    span: Span,
) -> Handle<Expression> {
    let i = fx.function.arguments.len() as u32;
    fx.function.arguments.push(naga::FunctionArgument {
        name: Some(name.into()),
        ty,
        binding: Some(naga::Binding::BuiltIn(b)),
    });
    fx.add(Expression::FunctionArgument(i), span)
}

/// `left op right`.
fn bin_op(
    fx: &mut FnCtx,
    op: Bo,
    left: Handle<Expression>,
    right: Handle<Expression>,
    span: Span,
) -> Handle<Expression> {
    fx.add(Expression::Binary { op, left, right }, span)
}
