//! Kernel entry points: buffer arguments become storage globals, Metal's
//! compute attributes are computed from WGSL built-ins and the synthetic
//! dispatch uniform, and threads outside a `dispatchThreads` grid return
//! before running the body.

use super::builder::FnCtx;
use super::invocation;
use super::value::{Local, Place, PtrRoot, PtrValue};
use super::{Error, Lowerer, Result};
use crate::layout;
use crate::reflect::{
    Access, Argument, ArgumentKind, BufferInfo, FunctionReflection, Stage, WgslBinding,
};
use crate::sema::{callgraph, consteval};
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{AddressSpace, Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, Handle, Statement};

/// `@binding` of the dispatch uniform in `@group(0)` (mapping doc §1.4:
/// buffers at n, textures at 64+n, samplers at 128+n, synthetic from 192).
pub const DISPATCH_BINDING: u32 = 192;

/// The threadgroup size used when none is given: 64 threads, shaped after the
/// kernel's highest-dimensional position attribute (64×1×1, 8×8×1, 4×4×4).
pub fn default_threadgroup_size(dimensions: u8) -> [u32; 3] {
    match dimensions {
        0 | 1 => [64, 1, 1],
        2 => [8, 8, 1],
        _ => [4, 4, 4],
    }
}

/// Metal's compute-function input attributes (MSL Table 5.8) handled here.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Builtin {
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
}

impl Builtin {
    /// Needs the SIMD-group lane or width.
    fn is_simd(self) -> bool {
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
    fn is_scalar(self) -> bool {
        self.is_simd()
            || matches!(
                self,
                Builtin::ThreadIndexInThreadgroup
                    | Builtin::QuadgroupIndexInThreadgroup
                    | Builtin::QuadgroupsPerThreadgroup
            )
    }
}

fn builtin(name: &str) -> Option<Builtin> {
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
        _ => return None,
    })
}

/// One classified kernel parameter.
pub(super) enum KernelParam<'a> {
    Buffer {
        param: &'a ast::Param,
        ptr: crate::types::Pointer,
        index: u32,
    },
    Builtin {
        param: &'a ast::Param,
        builtin: Builtin,
        ty: Type,
    },
    Threadgroup {
        param: &'a ast::Param,
        ptr: crate::types::Pointer,
        index: u32,
    },
    Texture {
        param: &'a ast::Param,
        texture: crate::types::Texture,
        index: u32,
    },
    Sampler {
        param: &'a ast::Param,
        index: u32,
    },
    /// A vertex or fragment `[[stage_in]]` struct.
    StageIn {
        param: &'a ast::Param,
        id: crate::types::StructId,
    },
    /// A vertex or fragment built-in input (`[[vertex_id]]`, `[[position]]`...).
    StageBuiltin {
        param: &'a ast::Param,
        builtin: naga::BuiltIn,
        ty: Type,
    },
}

/// Values the prologue computes from the WGSL built-ins.
pub(super) struct Geometry {
    wg: [u32; 3],
    lane: Option<Handle<Expression>>,
    simd_size: Option<Handle<Expression>>,
    gid: Handle<Expression>,
    lid: Handle<Expression>,
    index: Handle<Expression>,
    wid: Handle<Expression>,
    tg_size: Handle<Expression>,
    edge_size: Handle<Expression>,
    groups: Handle<Expression>,
    grid: Handle<Expression>,
}

impl Lowerer<'_, '_> {
    /// Lowers a `kernel` function into a compute entry point.
    pub(super) fn kernel(
        &mut self,
        f: &ast::FunctionDecl,
        size: Option<[u32; 3]>,
    ) -> Result<FunctionReflection> {
        self.current_function = f.name.name.clone();
        if self.program.resolve_type(&f.ret)? != Type::Void {
            return Err(Error::new(
                f.ret.span,
                format!("kernel function `{}` must return `void`", f.name.name),
            ));
        }
        let params = self.classify_params(f)?;
        let dims = params
            .iter()
            .filter_map(|p| match p {
                KernelParam::Builtin {
                    builtin:
                        Builtin::ThreadPositionInGrid
                        | Builtin::ThreadPositionInThreadgroup
                        | Builtin::ThreadgroupPositionInGrid,
                    ty,
                    ..
                } => ty.vector_size(),
                _ => None,
            })
            .max()
            .unwrap_or(1);
        let wg = size.unwrap_or_else(|| default_threadgroup_size(dims));
        self.check_max_threads(f, wg, size.is_some())?;
        let body = f.body.as_ref().expect("kernels have bodies");
        self.kernel_features.clear();
        self.predicated = callgraph::reaches(self.program, body, &|n| {
            n == "threadgroup_barrier" || n == "simdgroup_barrier"
        });
        let subgroups = callgraph::reaches(self.program, body, &|n| {
            n.starts_with("simd_") || n.starts_with("quad_") || n == "simdgroup_barrier"
        }) || params
            .iter()
            .any(|p| matches!(p, KernelParam::Builtin { builtin, .. } if builtin.is_simd()));
        let mut fx = FnCtx::new(&f.name.name, Type::Void);
        fx.kernel = true;
        let geometry = self.prologue(&mut fx, wg, subgroups, f.span)?;
        let mut arguments = Vec::new();
        for p in &params {
            self.bind_param(&mut fx, p, Some(&geometry), body, &mut arguments)?;
        }
        fx.open();
        let lowered = body.stmts.iter().try_for_each(|s| self.stmt(&mut fx, s));
        let predicated = std::mem::take(&mut self.predicated);
        lowered?;
        let body_block = fx.close();
        if !predicated {
            self.grid_guard(&mut fx, &geometry, f.span);
        }
        fx.push(Statement::Block(body_block), body.span);
        let function = fx.finish();
        for arg in &mut arguments {
            if let Some(b) = arg.binding {
                arg.active = self.entry_uses_binding(&function, b);
            }
        }
        let constexpr_samplers = self.used_constexpr_samplers(&function);
        let mut extra: Vec<WgslBinding> = constexpr_samplers.iter().map(|s| s.binding).collect();
        extra.push(WgslBinding {
            group: 0,
            binding: DISPATCH_BINDING,
        });
        self.check_binding_collisions(f, &arguments, &extra)?;
        self.module.entry_points.push(naga::EntryPoint {
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
        let mut required_features: Vec<String> =
            self.kernel_features.iter().map(|f| f.to_string()).collect();
        if self.types.uses_f16 {
            required_features.push("shader-f16".to_string());
        }
        Ok(FunctionReflection {
            name: f.name.name.clone(),
            wgsl_entry_point: f.name.name.clone(),
            stage: Stage::Kernel,
            workgroup_size: Some(wg),
            arguments,
            dispatch_binding: Some(WgslBinding {
                group: 0,
                binding: DISPATCH_BINDING,
            }),
            uses_barriers: predicated,
            required_features,
            constexpr_samplers,
            vertex_attributes: Vec::new(),
            vertex_stride: 0,
            varyings: Vec::new(),
            color_outputs: Vec::new(),
        })
    }

    fn check_max_threads(&self, f: &ast::FunctionDecl, wg: [u32; 3], explicit: bool) -> Result<()> {
        for a in &f.attributes {
            if a.name != "max_total_threads_per_threadgroup" {
                continue;
            }
            let [arg] = a.args.as_slice() else {
                return Err(Error::new(
                    a.span,
                    "`max_total_threads_per_threadgroup` takes one argument",
                ));
            };
            let max = consteval::eval(self.program, arg)?
                .as_count()
                .ok_or_else(|| Error::new(arg.span, "expected a positive integer"))?;
            let total = wg[0] * wg[1] * wg[2];
            if total > max {
                let why = if explicit {
                    "the requested threadgroup size"
                } else {
                    "the default threadgroup size"
                };
                return Err(Error::new(a.span, format!("{why} {}x{}x{} ({total} threads) exceeds `max_total_threads_per_threadgroup({max})`", wg[0], wg[1], wg[2]))
                    .note("choose a threadgroup size with --threadgroup-size"));
            }
        }
        Ok(())
    }

    pub(super) fn classify_params<'f>(
        &mut self,
        f: &'f ast::FunctionDecl,
    ) -> Result<Vec<KernelParam<'f>>> {
        let kernel = matches!(f.stage, Some((ast::Stage::Kernel, _)));
        let mut out = Vec::new();
        let mut used: Vec<(u32, Span)> = Vec::new();
        let mut unindexed = Vec::new();
        for p in &f.params {
            let ty = self.program.resolve_type(&p.ty)?;
            let ty = self.program.apply_array(ty, &p.array)?;
            let name = p.name.as_ref().map(|n| n.name.as_str()).unwrap_or("_");
            let attr = p.attributes.first();
            match (attr.map(|a| a.name.as_str()), &ty) {
                (Some("buffer"), Type::Pointer(ptr))
                    if matches!(ptr.space, AddressSpace::Device | AddressSpace::Constant) =>
                {
                    let a = attr.unwrap();
                    let [arg] = a.args.as_slice() else {
                        return Err(Error::new(
                            a.span,
                            "`buffer` takes one index: `[[buffer(n)]]`",
                        ));
                    };
                    let index = consteval::eval(self.program, arg)?
                        .as_int()
                        .filter(|i| *i >= 0)
                        .ok_or_else(|| {
                            Error::new(
                                arg.span,
                                "buffer index must be a non-negative integer constant",
                            )
                        })? as u32;
                    if let Some((_, first)) = used.iter().find(|(i, _)| *i == index) {
                        let _ = first;
                        return Err(Error::new(
                            a.span,
                            format!("duplicate `[[buffer({index})]]` index"),
                        )
                        .note(format!(
                            "each buffer argument of `{}` needs its own index",
                            f.name.name
                        )));
                    }
                    used.push((index, a.span));
                    out.push(KernelParam::Buffer {
                        param: p,
                        ptr: (**ptr).clone(),
                        index,
                    });
                }
                (Some("buffer"), _) => {
                    return Err(Error::new(p.ty.span, format!("`[[buffer(n)]]` argument `{name}` must be a pointer or reference in the `device` or `constant` address space")));
                }
                (Some(attr_name), _)
                    if !kernel && attr_name != "threadgroup" && builtin(attr_name).is_some() =>
                {
                    return Err(Error::new(
                        attr.unwrap().span,
                        format!("`[[{attr_name}]]` is only available in kernel functions"),
                    ));
                }
                (Some(attr_name), _)
                    if !kernel
                        && !matches!(
                            attr_name,
                            "buffer" | "texture" | "sampler" | "threadgroup"
                        ) =>
                {
                    out.push(self.stage_param(f, p, &ty, attr.unwrap())?);
                }
                (Some(attr_name), _) if builtin(attr_name).is_some() => {
                    let b = builtin(attr_name).unwrap();
                    self.check_builtin_type(b, &ty, attr_name, p)?;
                    out.push(KernelParam::Builtin {
                        param: p,
                        builtin: b,
                        ty,
                    });
                }
                (Some("threadgroup"), Type::Pointer(ptr))
                    if ptr.space == AddressSpace::Threadgroup && !ptr.is_reference =>
                {
                    let a = attr.unwrap();
                    let [arg] = a.args.as_slice() else {
                        return Err(Error::new(
                            a.span,
                            "`threadgroup` takes one index: `[[threadgroup(n)]]`",
                        ));
                    };
                    let index = consteval::eval(self.program, arg)?
                        .as_int()
                        .filter(|i| (0..=u32::MAX as i64).contains(i))
                        .ok_or_else(|| {
                            Error::new(
                                arg.span,
                                "threadgroup index must be a non-negative integer constant",
                            )
                        })? as u32;
                    if out.iter().any(
                        |p| matches!(p, KernelParam::Threadgroup { index: i, .. } if *i == index),
                    ) {
                        return Err(Error::new(
                            a.span,
                            format!("duplicate `[[threadgroup({index})]]` index"),
                        ));
                    }
                    out.push(KernelParam::Threadgroup {
                        param: p,
                        ptr: (**ptr).clone(),
                        index,
                    });
                }
                (Some("threadgroup"), _) => {
                    return Err(Error::new(p.ty.span, format!("`[[threadgroup(n)]]` argument `{name}` must be a `threadgroup` pointer")));
                }
                (Some(kind @ ("texture" | "sampler")), _) => {
                    let a = attr.unwrap();
                    let index = resource_index(self.program, a)?;
                    let other = |p: &KernelParam| match (p, kind) {
                        (KernelParam::Texture { index: i, .. }, "texture")
                        | (KernelParam::Sampler { index: i, .. }, "sampler") => *i == index,
                        _ => false,
                    };
                    if out.iter().any(other) {
                        return Err(Error::new(
                            a.span,
                            format!("duplicate `[[{kind}({index})]]` index"),
                        ));
                    }
                    if index >= 64 {
                        return Err(Error::new(
                            a.span,
                            format!("{kind} index {index} is too large (at most 63)"),
                        ));
                    }
                    match (kind, &ty) {
                        ("texture", Type::Texture(t)) => out.push(KernelParam::Texture {
                            param: p,
                            texture: *t,
                            index,
                        }),
                        ("sampler", Type::Sampler { .. }) => {
                            out.push(KernelParam::Sampler { param: p, index })
                        }
                        _ => {
                            return Err(Error::new(
                                p.ty.span,
                                format!("`[[{kind}(n)]]` argument `{name}` must be a {kind}"),
                            ))
                        }
                    }
                }
                (None, Type::Texture(_) | Type::Sampler { .. }) => {
                    return Err(Error::new(p.span, format!("kernel parameter `{name}` needs a `[[texture(n)]]` or `[[sampler(n)]]` attribute")));
                }
                (Some(a @ "stage_in"), _) => {
                    return Err(Error::new(
                        attr.unwrap().span,
                        format!("`[[{a}]]` arguments are not supported yet"),
                    ));
                }
                (Some(other), _) => {
                    return Err(Error::new(
                        attr.unwrap().span,
                        format!("unknown or unsupported kernel argument attribute `[[{other}]]`"),
                    ));
                }
                (None, Type::Pointer(ptr))
                    if matches!(ptr.space, AddressSpace::Device | AddressSpace::Constant) =>
                {
                    unindexed.push(out.len());
                    out.push(KernelParam::Buffer {
                        param: p,
                        ptr: (**ptr).clone(),
                        index: u32::MAX,
                    });
                }
                (None, _) => {
                    return Err(Error::new(p.span, format!(
                        "kernel parameter `{name}` needs an attribute such as `[[buffer(n)]]` or `[[thread_position_in_grid]]`"
                    )));
                }
            }
        }
        // Metal gives arguments without an index the first free one (MSL §5.2.1).
        for i in unindexed {
            let free = (0..).find(|n| !used.iter().any(|(u, _)| u == n)).unwrap();
            used.push((free, Span::default()));
            if let KernelParam::Buffer { param, index, .. } = &mut out[i] {
                *index = free;
                self.warnings.push(Error::new(param.span, format!(
                    "buffer argument `{}` has no `[[buffer(n)]]` index; Metal assigns it index {free}",
                    param.name.as_ref().map(|n| n.name.as_str()).unwrap_or("_")
                )));
            }
        }
        Ok(out)
    }

    fn check_builtin_type(&self, b: Builtin, ty: &Type, attr: &str, p: &ast::Param) -> Result<()> {
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
        Err(Error::new(
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
    fn dispatch_global(&mut self) -> Handle<naga::GlobalVariable> {
        if let Some(g) = self.dispatch {
            return g;
        }
        let v3 = self
            .naga_type(&Type::Vector(Scalar::UInt, 3), Span::default())
            .expect("uint3");
        let member = |name: &str, offset| naga::StructMember {
            name: Some(name.into()),
            ty: v3,
            binding: None,
            offset,
        };
        let ty = self.module.types.insert(
            naga::Type {
                name: Some("MetalDispatch".into()),
                inner: naga::TypeInner::Struct {
                    members: vec![
                        member("grid_size", 0),
                        member("group_offset", 16),
                        member("threadgroups", 32),
                    ],
                    span: 48,
                },
            },
            naga::Span::UNDEFINED,
        );
        let g = self.module.global_variables.append(
            naga::GlobalVariable {
                name: Some("metal_dispatch".into()),
                space: naga::AddressSpace::Uniform,
                binding: Some(naga::ResourceBinding {
                    group: 0,
                    binding: DISPATCH_BINDING,
                }),
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            naga::Span::UNDEFINED,
        );
        self.dispatch = Some(g);
        g
    }

    /// Computes Metal's grid geometry from WGSL's built-ins and the uniform.
    fn prologue(
        &mut self,
        fx: &mut FnCtx,
        wg: [u32; 3],
        subgroups: bool,
        span: Span,
    ) -> Result<Geometry> {
        let v3 = self.naga_type(&Type::Vector(Scalar::UInt, 3), span)?;
        let u = self.naga_type(&Type::UINT, span)?;
        let arg = |fx: &mut FnCtx, name: &str, ty, b: naga::BuiltIn| {
            let i = fx.function.arguments.len() as u32;
            fx.function.arguments.push(naga::FunctionArgument {
                name: Some(name.into()),
                ty,
                binding: Some(naga::Binding::BuiltIn(b)),
            });
            fx.add(Expression::FunctionArgument(i), span)
        };
        let lid = arg(fx, "local_id", v3, naga::BuiltIn::LocalInvocationId);
        let group = arg(fx, "group_id", v3, naga::BuiltIn::WorkGroupId);
        let index = arg(fx, "local_index", u, naga::BuiltIn::LocalInvocationIndex);
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
        let offset = field(fx, 1);
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
        let wid = fx.add(
            Expression::Binary {
                op: Bo::Add,
                left: group,
                right: offset,
            },
            span,
        );
        let first = fx.add(
            Expression::Binary {
                op: Bo::Multiply,
                left: wid,
                right: tg_size,
            },
            span,
        );
        let gid = fx.add(
            Expression::Binary {
                op: Bo::Add,
                left: first,
                right: lid,
            },
            span,
        );
        // Edge threadgroups of a dispatchThreads grid are smaller (MSL §5.2.3.6).
        let left = fx.add(
            Expression::Binary {
                op: Bo::Subtract,
                left: grid,
                right: first,
            },
            span,
        );
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
            // naga allows `subgroup_invocation_id` only in 1-D workgroups;
            // elsewhere count the lanes below this one while all are active.
            let lane = if wg[1] * wg[2] == 1 {
                arg(fx, "simd_lane", u, naga::BuiltIn::SubgroupInvocationId)
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
            let size = arg(fx, "simd_size", u, naga::BuiltIn::SubgroupSize);
            self.set_private(fx, invocation::SIMD_LANE, &Type::UINT, lane, span);
            self.set_private(fx, invocation::SIMD_SIZE, &Type::UINT, size, span);
            self.require_feature("subgroup");
            (Some(lane), Some(size))
        } else {
            (None, None)
        };
        if self.predicated {
            let inside = fx.add(
                Expression::Binary {
                    op: Bo::Less,
                    left: gid,
                    right: grid,
                },
                span,
            );
            let all = fx.add(
                Expression::Relational {
                    fun: naga::RelationalFunction::All,
                    argument: inside,
                },
                span,
            );
            self.set_private(fx, invocation::ACTIVE, &Type::BOOL, all, span);
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
        })
    }

    /// `if (any(gid >= grid)) { return; }`: threads WGSL launches beyond a
    /// dispatchThreads grid do not exist in Metal.
    fn grid_guard(&mut self, fx: &mut FnCtx, g: &Geometry, span: Span) {
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

    pub(super) fn bind_param(
        &mut self,
        fx: &mut FnCtx,
        p: &KernelParam,
        geo: Option<&Geometry>,
        body: &ast::Block,
        arguments: &mut Vec<Argument>,
    ) -> Result<()> {
        match p {
            KernelParam::StageIn { .. } | KernelParam::StageBuiltin { .. } => {
                unreachable!("bound by stages.rs")
            }
            KernelParam::Builtin { param, builtin, ty } => {
                let geo = geo.expect("compute attributes exist in kernels only");
                let value = self.builtin_value(fx, *builtin, ty, geo, param.span);
                let value = self.convert(
                    fx,
                    value,
                    &ty.with_scalar(Scalar::UInt),
                    ty,
                    true,
                    param.span,
                )?;
                let name = param
                    .name
                    .as_ref()
                    .map(|n| n.name.clone())
                    .unwrap_or_else(|| "_".into());
                let th = self.naga_type(ty, param.span)?;
                let var = fx.local(&name, th, param.span);
                let ptr = fx.add(Expression::LocalVariable(var), param.span);
                fx.push(
                    Statement::Store {
                        pointer: ptr,
                        value,
                    },
                    param.span,
                );
                if let Some(n) = &param.name {
                    fx.declare(
                        &n.name,
                        Local::Var {
                            var,
                            ty: ty.clone(),
                            is_const: false,
                        },
                    );
                }
            }
            KernelParam::Threadgroup { param, ptr, index } => {
                self.bind_threadgroup(fx, param, ptr, *index, arguments)?
            }
            KernelParam::Texture {
                param,
                texture,
                index,
            } => self.bind_texture(fx, param, *texture, *index, arguments)?,
            KernelParam::Sampler { param, index } => {
                self.bind_sampler(fx, param, *index, body, arguments)?
            }
            KernelParam::Buffer { param, ptr, index } => {
                let (global, info, binding) = self.buffer_global(param, ptr, *index)?;
                let is_const = ptr.is_const || self.vertex_stage;
                let span = param.span;
                let words = self.word_view(global).is_some();
                let local = if ptr.is_reference && words {
                    let offset = self.u32_lit(fx, 0, span);
                    Local::Bytes(super::bytes::BytePlace {
                        global,
                        offset,
                        ty: ptr.pointee.clone(),
                        writable: !is_const,
                    })
                } else if ptr.is_reference {
                    let e = fx.add(Expression::GlobalVariable(global), span);
                    Local::Ref(Place {
                        ptr: e,
                        ty: ptr.pointee.clone(),
                        writable: !is_const,
                    })
                } else {
                    let zero = self.u32_lit(fx, 0, span);
                    Local::Ptr(PtrValue {
                        root: if words {
                            PtrRoot::Bytes(global)
                        } else {
                            PtrRoot::Buffer(global)
                        },
                        index: zero,
                        pointee: ptr.pointee.clone(),
                        space: ptr.space,
                        is_const,
                    })
                };
                let name = param
                    .name
                    .as_ref()
                    .map(|n| n.name.clone())
                    .unwrap_or_else(|| "_".into());
                if let Some(n) = &param.name {
                    fx.declare(&n.name, local);
                }
                arguments.push(Argument {
                    name,
                    kind: ArgumentKind::Buffer,
                    index: *index,
                    access: if is_const {
                        Access::Read
                    } else {
                        Access::ReadWrite
                    },
                    active: true,
                    binding: Some(binding),
                    buffer: Some(info),
                    threadgroup: None,
                    texture: None,
                    sampler: None,
                });
            }
        }
        Ok(())
    }

    /// `[[texture(n)]]` → a texture binding at 64 + n.
    fn bind_texture(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        mut texture: crate::types::Texture,
        index: u32,
        arguments: &mut Vec<Argument>,
    ) -> Result<()> {
        use crate::reflect::{TextureBinding, TextureInfo};
        let name = param
            .name
            .as_ref()
            .map(|n| n.name.clone())
            .unwrap_or_else(|| "_".into());
        let storage_format = if texture.is_storage() && !texture.shape.is_depth() {
            let f = self.storage_format(&texture, index, param.span)?;
            texture.format = Some(f);
            Some(super::textures::FORMATS[f as usize].0.to_string())
        } else {
            None
        };
        let ty = Type::Texture(texture);
        let binding = self.resource_binding(
            ArgumentKind::Texture,
            index,
            WgslBinding {
                group: self.group,
                binding: 64 + index,
            },
            param.span,
        )?;
        let g = self.resource_global(&name, &ty, binding, param.span)?;
        let h = fx.add(Expression::GlobalVariable(g), param.span);
        if let Some(n) = &param.name {
            fx.declare(&n.name, Local::Value(h, ty.clone()));
        }
        let binding_kind = if texture.shape.is_depth() {
            TextureBinding::Depth
        } else if texture.is_storage() {
            TextureBinding::Storage
        } else {
            TextureBinding::Sampled
        };
        let sample_type = match (
            texture.shape.is_depth(),
            super::textures::sampled_kind(texture.scalar),
        ) {
            (true, _) => "depth",
            (_, naga::ScalarKind::Float) => "float",
            (_, naga::ScalarKind::Sint) => "sint",
            _ => "uint",
        };
        let access = match texture.access {
            crate::types::TextureAccess::Sample | crate::types::TextureAccess::Read => Access::Read,
            crate::types::TextureAccess::Write => Access::Write,
            crate::types::TextureAccess::ReadWrite => Access::ReadWrite,
        };
        arguments.push(Argument {
            name,
            kind: ArgumentKind::Texture,
            index,
            access,
            active: true,
            binding: Some(binding),
            buffer: None,
            threadgroup: None,
            texture: Some(TextureInfo {
                texture_type: super::textures::metal_texture_type(texture.shape).into(),
                data_type: texture.scalar.name().into(),
                view_dimension: super::textures::view_dimension(texture.shape).into(),
                binding_kind,
                sample_type: sample_type.into(),
                multisampled: texture.shape.is_multisampled(),
                storage_format,
            }),
            sampler: None,
        });
        Ok(())
    }

    /// `[[sampler(n)]]` → a sampler binding at 128 + n; a comparison sampler
    /// if the kernel uses it with `sample_compare`/`gather_compare`.
    fn bind_sampler(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        index: u32,
        body: &ast::Block,
        arguments: &mut Vec<Argument>,
    ) -> Result<()> {
        let name = param
            .name
            .as_ref()
            .map(|n| n.name.clone())
            .unwrap_or_else(|| "_".into());
        let comparison = callgraph::sampler_compared(self.program, body, &name);
        let ty = Type::Sampler { comparison };
        let binding = self.resource_binding(
            ArgumentKind::Sampler,
            index,
            WgslBinding {
                group: self.group,
                binding: 128 + index,
            },
            param.span,
        )?;
        let g = self.resource_global(&name, &ty, binding, param.span)?;
        let h = fx.add(Expression::GlobalVariable(g), param.span);
        if let Some(n) = &param.name {
            fx.declare(&n.name, Local::Value(h, ty));
        }
        arguments.push(Argument {
            name,
            kind: ArgumentKind::Sampler,
            index,
            access: Access::Read,
            active: true,
            binding: Some(binding),
            buffer: None,
            threadgroup: None,
            texture: None,
            sampler: Some(crate::reflect::SamplerInfo { comparison }),
        });
        Ok(())
    }

    /// A texture or sampler global (shared by kernels binding the same thing).
    fn resource_global(
        &mut self,
        name: &str,
        ty: &Type,
        binding: WgslBinding,
        span: Span,
    ) -> Result<Handle<naga::GlobalVariable>> {
        let ty_h = self.naga_type(ty, span)?;
        if let Some(g) = self
            .buffers
            .get(&(binding.group, binding.binding, ty_h, false))
        {
            return Ok(*g);
        }
        let g = self.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(name.into()),
                space: naga::AddressSpace::Handle,
                binding: Some(naga::ResourceBinding {
                    group: binding.group,
                    binding: binding.binding,
                }),
                ty: ty_h,
                init: None,
                memory_decorations: Default::default(),
            },
            Self::span(span),
        );
        self.buffers
            .insert((binding.group, binding.binding, ty_h, false), g);
        Ok(g)
    }

    /// The binding of resource `kind` `index` of the function being lowered:
    /// the user's binding map, or `default`.
    fn resource_binding(
        &self,
        kind: ArgumentKind,
        index: u32,
        default: WgslBinding,
        span: Span,
    ) -> Result<WgslBinding> {
        let Some(b) = self.binding_map.get(&self.current_function, kind, index) else {
            return Ok(default);
        };
        // WebGPU's default limits: 4 bind groups, 1000 bindings per group.
        if b.group >= 4 || b.binding >= 1000 {
            return Err(Error::new(span, format!("the binding map puts this argument at @group({}) @binding({}), beyond WebGPU's default limits (4 groups, 1000 bindings)", b.group, b.binding)));
        }
        Ok(b)
    }

    /// Two resources of one entry point at one binding (a binding-map mistake).
    pub(super) fn check_binding_collisions(
        &self,
        f: &ast::FunctionDecl,
        arguments: &[Argument],
        extra: &[WgslBinding],
    ) -> Result<()> {
        let mut seen: Vec<(WgslBinding, String)> = extra
            .iter()
            .map(|b| (*b, "a binding of the translation".to_string()))
            .collect();
        for a in arguments {
            let Some(b) = a.binding else { continue };
            if let Some((_, other)) = seen.iter().find(|(x, _)| *x == b) {
                return Err(Error::new(
                    f.name.span,
                    format!(
                        "`{}` and {other} of `{}` are both bound at @group({}) @binding({})",
                        a.name, f.name.name, b.group, b.binding
                    ),
                ));
            }
            seen.push((b, format!("`{}`", a.name)));
        }
        Ok(())
    }

    /// `threadgroup T* p [[threadgroup(n)]]`: a workgroup array whose length
    /// comes from the host's threadgroup-memory length for `n`, fixed at
    /// translation (naga's WGSL writer cannot print override-sized arrays).
    fn bind_threadgroup(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        ptr: &crate::types::Pointer,
        index: u32,
        arguments: &mut Vec<Argument>,
    ) -> Result<()> {
        let name = param
            .name
            .as_ref()
            .map(|n| n.name.clone())
            .unwrap_or_else(|| "_".into());
        let sa = layout::metal(&ptr.pointee, &self.program.structs);
        let bytes = self.threadgroup_memory.get(&index).copied();
        let local = match bytes {
            Some(bytes) => {
                let count = bytes / sa.size.max(1);
                if count == 0 {
                    return Err(Error::new(param.span, format!(
                        "threadgroup memory for `[[threadgroup({index})]]` is {bytes} bytes, less than one `{}` ({} bytes)",
                        self.program.display(&ptr.pointee),
                        sa.size
                    )));
                }
                let array = Type::Array(Box::new(ptr.pointee.clone()), count);
                let ty = self.naga_type(&array, param.span)?;
                let g = self.module.global_variables.append(
                    naga::GlobalVariable {
                        name: Some(name.clone()),
                        space: naga::AddressSpace::WorkGroup,
                        binding: None,
                        ty,
                        init: None,
                        memory_decorations: Default::default(),
                    },
                    Self::span(param.span),
                );
                let zero = self.u32_lit(fx, 0, param.span);
                Local::Ptr(PtrValue {
                    root: PtrRoot::Buffer(g),
                    index: zero,
                    pointee: ptr.pointee.clone(),
                    space: AddressSpace::Threadgroup,
                    is_const: ptr.is_const,
                })
            }
            None => Local::UnsizedThreadgroup(index),
        };
        if let Some(n) = &param.name {
            fx.declare(&n.name, local);
        }
        arguments.push(Argument {
            name,
            kind: ArgumentKind::ThreadgroupMemory,
            index,
            access: Access::ReadWrite,
            active: bytes.is_some(),
            binding: None,
            buffer: None,
            threadgroup: Some(crate::reflect::ThreadgroupInfo {
                alignment: sa.align,
                data_size: bytes.unwrap_or(0),
            }),
            texture: None,
            sampler: None,
        });
        Ok(())
    }

    /// The value of a compute attribute, in the parameter's type.
    fn builtin_value(
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

    /// The storage global for buffer argument `index`.
    fn buffer_global(
        &mut self,
        param: &ast::Param,
        ptr: &crate::types::Pointer,
        index: u32,
    ) -> Result<(Handle<naga::GlobalVariable>, BufferInfo, WgslBinding)> {
        let span = param.ty.span;
        self.check_host_shareable(&ptr.pointee, span)?;
        // WebGPU vertex functions cannot write storage buffers: bind read-only.
        let writable = !ptr.is_const && !self.vertex_stage;
        let words = self.needs_word_view(&ptr.pointee);
        // Sub-word stores update bytes with atomic AND/OR (see bytes.rs), and
        // atomics in the data need atomic words too.
        let atomic_words = words
            && writable
            && (has_sub_word(&ptr.pointee, &self.program.structs)
                || super::expr::contains_atomic(&ptr.pointee));
        let ty = if words {
            let word = if atomic_words {
                Type::Atomic(Scalar::UInt)
            } else {
                Type::UINT
            };
            self.runtime_array(&word, span)?
        } else if ptr.is_reference {
            self.naga_type(&ptr.pointee, span)?
        } else {
            self.runtime_array(&ptr.pointee, span)?
        };
        let sa = layout::metal(&ptr.pointee, &self.program.structs);
        let info = BufferInfo {
            alignment: sa.align,
            data_size: sa.size,
            data_type: self.program.display(&ptr.pointee),
            is_pointer: !ptr.is_reference,
            struct_type: crate::reflect::struct_type(&ptr.pointee, &self.program.structs),
            array_type: crate::reflect::array_type(&ptr.pointee, &self.program.structs),
        };
        if index >= 64 {
            return Err(Error::new(
                span,
                format!("buffer index {index} is too large (at most {})", 63),
            ));
        }
        let binding = self.resource_binding(
            ArgumentKind::Buffer,
            index,
            WgslBinding {
                group: self.group,
                binding: index,
            },
            param.span,
        )?;
        if let Some(g) = self
            .buffers
            .get(&(binding.group, binding.binding, ty, writable))
        {
            return Ok((*g, info, binding));
        }
        let access = if writable {
            naga::StorageAccess::LOAD | naga::StorageAccess::STORE
        } else {
            naga::StorageAccess::LOAD
        };
        let name = param.name.as_ref().map(|n| n.name.clone());
        let g = self.module.global_variables.append(
            naga::GlobalVariable {
                name,
                space: naga::AddressSpace::Storage { access },
                binding: Some(naga::ResourceBinding {
                    group: binding.group,
                    binding: binding.binding,
                }),
                ty,
                init: None,
                memory_decorations: Default::default(),
            },
            Self::span(span),
        );
        self.buffers
            .insert((binding.group, binding.binding, ty, writable), g);
        if words {
            self.word_views.insert(g, atomic_words);
        }
        Ok((g, info, binding))
    }

    /// Types this version can place in buffers.
    fn check_host_shareable(&self, ty: &Type, span: Span) -> Result<()> {
        match ty {
            Type::Atomic(Scalar::Bool) => Err(Error::new(span, "`atomic_bool` in buffers is not supported (its size in Metal's layout is not verified)")),
            Type::Array(e, _) => self.check_host_shareable(e, span),
            Type::Struct(id) => self
                .program
                .structs
                .get(*id)
                .members
                .iter()
                .try_for_each(|m| self.check_host_shareable(&m.ty, m.span)),
            Type::Pointer(_) | Type::Void => {
                Err(Error::new(span, "this type cannot be stored in a buffer"))
            }
            _ => Ok(()),
        }
    }

    /// Whether the entry point (or a function it calls) touches `binding`.
    pub(super) fn entry_uses_binding(&self, function: &naga::Function, b: WgslBinding) -> bool {
        let uses = |f: &naga::Function| {
            f.expressions.iter().any(|(_, e)| match e {
                Expression::GlobalVariable(g) => {
                    self.module.global_variables[*g].binding
                        == Some(naga::ResourceBinding {
                            group: b.group,
                            binding: b.binding,
                        })
                }
                _ => false,
            })
        };
        let mut stack = vec![function];
        let mut seen = std::collections::HashSet::new();
        while let Some(f) = stack.pop() {
            if uses(f) {
                return true;
            }
            for callee in calls(&f.body) {
                if seen.insert(callee) {
                    stack.push(&self.module.functions[callee]);
                }
            }
        }
        false
    }
}

/// True if `ty` holds data smaller than a 32-bit word.
fn has_sub_word(ty: &Type, structs: &crate::types::Structs) -> bool {
    match ty {
        Type::Array(e, _) => has_sub_word(e, structs),
        Type::Struct(id) => structs
            .get(*id)
            .members
            .iter()
            .any(|m| has_sub_word(&m.ty, structs)),
        other => other.element_scalar().is_some_and(|s| s.size() < 4),
    }
}

/// Functions called anywhere in `block`.
fn calls(block: &naga::Block) -> Vec<Handle<naga::Function>> {
    let mut out = Vec::new();
    for s in block.iter() {
        match s {
            Statement::Call { function, .. } => out.push(*function),
            Statement::Block(b) => out.extend(calls(b)),
            Statement::If { accept, reject, .. } => {
                out.extend(calls(accept));
                out.extend(calls(reject));
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                out.extend(calls(body));
                out.extend(calls(continuing));
            }
            Statement::Switch { cases, .. } => {
                cases.iter().for_each(|c| out.extend(calls(&c.body)))
            }
            _ => {}
        }
    }
    out
}

/// The index of a `[[texture(n)]]` or `[[sampler(n)]]` attribute.
fn resource_index(program: &crate::sema::Program, a: &ast::Attribute) -> Result<u32> {
    let [arg] = a.args.as_slice() else {
        return Err(Error::new(
            a.span,
            format!("`{}` takes one index: `[[{}(n)]]`", a.name, a.name),
        ));
    };
    consteval::eval(program, arg)?
        .as_int()
        .filter(|i| (0..=u32::MAX as i64).contains(i))
        .map(|i| i as u32)
        .ok_or_else(|| {
            Error::new(
                arg.span,
                format!("{} index must be a non-negative integer constant", a.name),
            )
        })
}
