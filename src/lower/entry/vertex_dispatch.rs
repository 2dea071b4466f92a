//! Vertex functions without a `[[position]]` output, and the draw's base
//! vertex and base instance.
//!
//! A `vertex void` function (Metal's rasterization-disabled pipelines,
//! which capture vertices into buffers or textures) writes device memory,
//! which a WebGPU vertex stage may not: it becomes a `@compute` entry point
//! that runs one thread per vertex and instance of a draw, dispatched as
//! [`crate::reflect::VertexDispatch`] says. Thread `(x, y)` of the grid
//! `(vertexCount, instanceCount, 1)` is vertex `base_vertex + x` of
//! instance `base_instance + y`, and threads past the grid return before
//! anything else (the kernels' grid guard). Its `[[stage_in]]` is fetched from
//! storage buffers as a kernel's is (`kernel_stage_in.rs`), elements
//! counted from the base vertex and base instance.
//!
//! `[[base_vertex]]` and `[[base_instance]]` have no WGSL built-in: both
//! stages read them from a synthetic uniform, `metal_draw_parameters`
//! ([`DRAW_PARAMETERS_BINDING`], [`crate::reflect::DrawParameters`]), which
//! the host fills for each draw. A drawn function's `[[vertex_id]]` and
//! `[[instance_id]]` are WGSL's `vertex_index` and `instance_index`: both
//! languages count them from the draw's first vertex (for indexed draws,
//! the index plus the base vertex) and first instance.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::entry::compute::{Geometry, KernelParam};
use crate::lower::stdlib::{self, simd::bin};
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{
    FunctionReflection, Stage, VertexDispatch, WgslBinding, DRAW_PARAMETERS_BINDING,
};
use crate::sema::callgraph;
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, BuiltIn, Expression, Handle, Statement};

/// Threads per threadgroup of a vertex dispatch: vertices along x.
const VERTEX_THREADGROUP: [u32; 3] = [64, 1, 1];

/// A member of the draw-parameters uniform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::lower) enum DrawParameter {
    /// `[[base_vertex]]`.
    BaseVertex,
    /// `[[base_instance]]`.
    BaseInstance,
}

impl DrawParameter {
    /// The member a parameter marked as naga's `builtin` reads.
    pub(in crate::lower) fn of(builtin: BuiltIn) -> Option<DrawParameter> {
        match builtin {
            BuiltIn::BaseVertex => Some(DrawParameter::BaseVertex),
            BuiltIn::BaseInstance => Some(DrawParameter::BaseInstance),
            _ => None,
        }
    }

    /// Its member index in the uniform.
    fn index(self) -> u32 {
        match self {
            DrawParameter::BaseVertex => 0,
            DrawParameter::BaseInstance => 1,
        }
    }
}

/// Whether a vertex function reads `[[base_vertex]]` or `[[base_instance]]`.
pub(in crate::lower) fn reads_draw_parameters(params: &[KernelParam]) -> bool {
    params.iter().any(|p| {
        matches!(p, KernelParam::StageBuiltin { builtin, .. } if DrawParameter::of(*builtin).is_some())
    })
}

/// The binding of the draw-parameters uniform.
pub(in crate::lower) fn draw_parameters_binding() -> WgslBinding {
    WgslBinding {
        group: 0,
        binding: DRAW_PARAMETERS_BINDING,
    }
}

impl Lowerer<'_, '_> {
    /// Member `field` of the draw-parameters uniform, a `u32`.
    pub(in crate::lower) fn draw_parameter(
        &mut self,
        fx: &mut FnCtx,
        field: DrawParameter,
        span: Span,
    ) -> Handle<Expression> {
        let g = self.draw_parameters_global();
        let base = fx.add(Expression::GlobalVariable(g), span);
        let pointer = fx.add(
            Expression::AccessIndex {
                base,
                index: field.index(),
            },
            span,
        );
        fx.add(Expression::Load { pointer }, span)
    }

    /// The draw-parameters uniform, created on first use: two `u32`s in a
    /// 16-byte struct.
    fn draw_parameters_global(&mut self) -> Handle<naga::GlobalVariable> {
        if let Some(g) = self.global.draw_parameters {
            return g;
        }
        let u = self.naga_type(&Type::UINT, Span::default()).expect("uint");
        let member = |name: &str, offset| naga::StructMember {
            name: Some(name.into()),
            ty: u,
            binding: None,
            offset,
        };
        let ty = self.global.module.types.insert(
            naga::Type {
                name: Some("MetalDrawParameters".into()),
                inner: naga::TypeInner::Struct {
                    members: vec![member("base_vertex", 0), member("base_instance", 4)],
                    span: 16,
                },
            },
            naga::Span::UNDEFINED,
        );
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some("metal_draw_parameters".into()),
                space: naga::AddressSpace::Uniform,
                binding: Some(naga::ResourceBinding {
                    group: 0,
                    binding: DRAW_PARAMETERS_BINDING,
                }),
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            naga::Span::UNDEFINED,
        );
        self.global.draw_parameters = Some(g);
        g
    }

    /// Lowers a `vertex void` function into a compute entry point run once
    /// per vertex and instance of a draw.
    pub(in crate::lower) fn vertex_dispatch(
        &mut self,
        f: &ast::FunctionDecl,
    ) -> Result<FunctionReflection> {
        let params = self.classify_params(f)?;
        super::stages::check_one_stage_in(&params)?;
        let body = f.body.as_ref().expect("definitions have bodies");
        self.refuse_compute_only_calls(f, body)?;
        let wg = VERTEX_THREADGROUP;
        let mut fx = FnCtx::new(&f.name.name, Type::Void);
        let mut geometry = self.prologue(&mut fx, wg, false, f.span)?;
        let origin = self.draw_origin(&mut fx, f.span)?;
        geometry.stage_in_origin = Some(origin);
        // Threads past the draw return before fetching any attribute: no
        // barrier waits for them (a vertex function has none).
        self.grid_guard(&mut fx, &geometry, f.span);
        let mut arguments = Vec::new();
        let mut stage_input = None;
        for p in &params {
            match p {
                KernelParam::StageIn { param, id } => {
                    let mut reflection = self.bind_kernel_stage_in(
                        &mut fx,
                        param,
                        *id,
                        &params,
                        &geometry,
                        &mut arguments,
                    )?;
                    // The elements start at the draw's bases, not a region.
                    reflection.region_binding = None;
                    stage_input = Some(reflection);
                }
                KernelParam::StageBuiltin { param, builtin, ty } => {
                    let value = self.vertex_thread_builtin(&mut fx, *builtin, &geometry, param)?;
                    let value = self.convert(&mut fx, value, &Type::UINT, ty, true, param.span)?;
                    self.local_copy(&mut fx, param.name.as_ref(), ty, value, param.span)?;
                }
                other => self.bind_param(&mut fx, other, Some(&geometry), body, &mut arguments)?,
            }
        }
        self.rebind_reassigned_pointers(&mut fx, body)?;
        fx.open();
        let lowered = self.stmts(&mut fx, &body.stmts);
        lowered?;
        let body_block = fx.close();
        fx.push(Statement::Block(body_block), body.span);
        let function = fx.finish();
        let reached = self.reached_globals(&function);
        reached.mark_active(&mut arguments);
        let constexpr_samplers = self.used_constexpr_samplers(&reached);
        let dispatch = WgslBinding {
            group: 0,
            binding: crate::lower::DISPATCH_BINDING,
        };
        let mut extra: Vec<WgslBinding> = constexpr_samplers.iter().map(|s| s.binding).collect();
        extra.extend([dispatch, draw_parameters_binding()]);
        self.check_binding_collisions(f, &arguments, &extra)?;
        self.global.module.entry_points.push(naga::EntryPoint {
            name: f.name.name.clone(),
            stage: naga::ShaderStage::Compute,
            early_depth_test: None,
            workgroup_size: wg,
            workgroup_size_overrides: None,
            function,
            mesh_info: None,
            task_payload: None,
            incoming_ray_payload: None,
        });
        let mut required_features = self.entry.feature_names();
        if self.global.types.uses_f16 {
            required_features.push("shader-f16".to_string());
        }
        Ok(FunctionReflection {
            name: f.name.name.clone(),
            wgsl_entry_point: f.name.name.clone(),
            stage: Stage::Vertex,
            workgroup_size: Some(wg),
            arguments,
            builtins: self.builtin_arguments(&params),
            dispatch_binding: Some(dispatch),
            uses_barriers: false,
            required_features,
            required_limits: Default::default(),
            simd_groups: None,
            constexpr_samplers,
            vertex_attributes: Vec::new(),
            vertex_stride: 0,
            varyings: Vec::new(),
            color_outputs: Vec::new(),
            function_constants: Vec::new(),
            stitchable: None,
            point_sprite: None,
            stage_input,
            draw_parameters_binding: Some(draw_parameters_binding()),
            vertex_dispatch: Some(VertexDispatch {
                threadgroup_size: wg,
                grid: ["vertexCount", "instanceCount", "1"],
            }),
        })
    }

    /// `vec3(base_vertex, base_instance, 0)`: where the thread position's
    /// vertex and instance are counted from.
    fn draw_origin(&mut self, fx: &mut FnCtx, span: Span) -> Result<Handle<Expression>> {
        let v3 = self.naga_type(&Type::Vector(Scalar::UInt, 3), span)?;
        let vertex = self.draw_parameter(fx, DrawParameter::BaseVertex, span);
        let instance = self.draw_parameter(fx, DrawParameter::BaseInstance, span);
        let zero = self.u32_lit(fx, 0, span);
        Ok(fx.add(
            Expression::Compose {
                ty: v3,
                components: vec![vertex, instance, zero],
            },
            span,
        ))
    }

    /// A vertex built-in's value in a vertex dispatch, as a `u32`: the
    /// thread's vertex and instance, counted from the draw's bases.
    fn vertex_thread_builtin(
        &mut self,
        fx: &mut FnCtx,
        builtin: BuiltIn,
        geo: &Geometry,
        param: &ast::Param,
    ) -> Result<Handle<Expression>> {
        let span = param.span;
        if let Some(field) = DrawParameter::of(builtin) {
            return Ok(self.draw_parameter(fx, field, span));
        }
        let axis = match builtin {
            BuiltIn::VertexIndex => 0,
            BuiltIn::InstanceIndex => 1,
            _ => {
                return Err(Error::coded(
                    Code::Internal,
                    span,
                    "internal error: a vertex built-in without a value in a vertex dispatch",
                ))
            }
        };
        let origin = geo.stage_in_origin.expect("set by vertex_dispatch");
        let position = bin(fx, Bo::Add, geo.gid, origin, span);
        Ok(fx.add(
            Expression::AccessIndex {
                base: position,
                index: axis,
            },
            span,
        ))
    }

    /// A vertex function run as a compute dispatch keeps a vertex
    /// function's rules: Metal allows it no barrier, and WebGPU's vertex
    /// stage no SIMD-group function (as `passes/stage_operations.rs`
    /// refuses them in drawn vertex functions), which a compute entry
    /// point would otherwise accept. Located at the call in the body, or
    /// at the function for a call inside a helper.
    fn refuse_compute_only_calls(&self, f: &ast::FunctionDecl, body: &ast::Block) -> Result<()> {
        let compute_only = |n: &str| {
            stdlib::Builtin::function(n).is_some_and(|b| b.is_barrier() || b.needs_subgroups())
                || stdlib::SIMD_STATE_INTRINSICS.contains(&n)
        };
        if !callgraph::reaches(self.program, body, &|n| {
            crate::lower::stdlib::library_answer(n, compute_only(n))
        }) {
            return Ok(());
        }
        let mut at = None;
        callgraph::visit_block(body, &mut |e| {
            if let ast::ExprKind::Call(callee, _) = &e.kind {
                if let ast::ExprKind::Name(path) = &callee.kind {
                    let name = path.last().map_or("", |n| n.as_str());
                    if at.is_none() && compute_only(name) {
                        at = Some(e.span);
                    }
                }
            }
        });
        Err(Error::coded(
            Code::NoWebGpuEquivalent,
            at.unwrap_or(f.name.span),
            format!(
                "barriers and SIMD-group functions have no WebGPU equivalent in vertex function `{}`",
                f.name.name
            ),
        )
        .note("WGSL allows barriers and subgroup operations in compute shaders only, whose invocations share a workgroup; move the synchronised work into a kernel"))
    }
}
