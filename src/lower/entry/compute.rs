//! Kernel entry points: buffer arguments become storage globals, Metal's
//! compute attributes are computed from WGSL built-ins and the synthetic
//! dispatch uniform, and threads outside a `dispatchThreads` grid return
//! before running the body.

use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Local, Place, PtrRoot, PtrValue};
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{
    Access, Argument, ArgumentKind, BuiltinArgument, FunctionReflection, Stage, WgslBinding,
};
use crate::sema::{callgraph, consteval};
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{AddressSpace, Scalar, Type};
use naga::{Expression, Handle, Statement};

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
pub(in crate::lower) enum KernelParam<'a> {
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
}

impl Lowerer<'_, '_> {
    /// Lowers a `kernel` function into a compute entry point.
    pub(in crate::lower) fn kernel(
        &mut self,
        f: &ast::FunctionDecl,
        size: Option<[u32; 3]>,
    ) -> Result<FunctionReflection> {
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
        self.entry.predicated = callgraph::reaches(self.program, body, &|n| {
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
        let predicated = self.entry.predicated;
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
            stage: Stage::Kernel,
            workgroup_size: Some(wg),
            arguments,
            builtins: self.builtin_arguments(&params),
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
            function_constants: Vec::new(),
        })
    }

    /// The reflection of every built-in input parameter.
    pub(in crate::lower) fn builtin_arguments(
        &self,
        params: &[KernelParam],
    ) -> Vec<BuiltinArgument> {
        params
            .iter()
            .filter_map(|p| match p {
                KernelParam::Builtin { param, ty, .. }
                | KernelParam::StageBuiltin { param, ty, .. } => Some(BuiltinArgument {
                    name: param
                        .name
                        .as_ref()
                        .map_or_else(String::new, |n| n.name.clone()),
                    attribute: param
                        .attributes
                        .first()
                        .map_or_else(String::new, |a| a.name.clone()),
                    data_type: self.program.display(ty).to_string(),
                }),
                _ => None,
            })
            .collect()
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

    pub(in crate::lower) fn classify_params<'f>(
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
                    )
                    .with_code(crate::diagnostics::Code::Unsupported));
                }
                (Some(other), _) => {
                    return Err(Error::new(
                        attr.unwrap().span,
                        format!("unknown or unsupported kernel argument attribute `[[{other}]]`"),
                    )
                    .with_code(crate::diagnostics::Code::InvalidAttribute)
                    .with_notes(crate::diagnostics::suggest::did_you_mean(
                        other,
                        crate::diagnostics::suggest::ATTRIBUTES.iter().copied(),
                    )));
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
                self.global.warnings.push(Error::new(param.span, format!(
                    "buffer argument `{}` has no `[[buffer(n)]]` index; Metal assigns it index {free}",
                    param.name.as_ref().map(|n| n.name.as_str()).unwrap_or("_")
                )));
            }
        }
        Ok(out)
    }

    pub(in crate::lower) fn bind_param(
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
                let is_const = ptr.is_const || self.entry.is_vertex();
                let span = param.span;
                let words = self.word_view(global).is_some();
                let local = if ptr.is_reference && words {
                    let offset = self.u32_lit(fx, 0, span);
                    Local::Bytes(crate::lower::ctx::value::BytePlace {
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

    /// Whether the entry point (or a function it calls) touches `binding`.
    pub(in crate::lower) fn entry_uses_binding(
        &self,
        function: &naga::Function,
        b: WgslBinding,
    ) -> bool {
        let uses = |f: &naga::Function| {
            f.expressions.iter().any(|(_, e)| match e {
                Expression::GlobalVariable(g) => {
                    self.global.module.global_variables[*g].binding
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
                    stack.push(&self.global.module.functions[callee]);
                }
            }
        }
        false
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
