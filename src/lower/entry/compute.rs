//! Kernel entry points: buffer arguments become storage globals, Metal's
//! compute attributes are computed from WGSL built-ins and the synthetic
//! dispatch uniform, and threads outside a `dispatchThreads` grid return
//! before running the body.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Local, Place, PtrRoot, PtrValue};
pub use crate::lower::metal::dispatch_grid::DISPATCH_BINDING;
pub(in crate::lower) use crate::lower::metal::dispatch_grid::{builtin, Builtin, Geometry};
use crate::lower::stdlib;
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{
    Access, Argument, ArgumentKind, BuiltinArgument, FunctionReflection, Stage, WgslBinding,
};
use crate::sema::{callgraph, consteval};
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{Scalar, Type};
use naga::{Expression, Handle, Statement};

/// The threadgroup size used when none is given: 64 threads, shaped after the
/// kernel's highest-dimensional position attribute (64×1×1, 8×8×1, 4×4×4).
pub fn default_threadgroup_size(dimensions: u8) -> [u32; 3] {
    match dimensions {
        0 | 1 => [64, 1, 1],
        2 => [8, 8, 1],
        _ => [4, 4, 4],
    }
}

/// The default threadgroup size `size` made to fit `max` threads (a kernel's
/// `[[max_total_threads_per_threadgroup(max)]]`): Metal leaves the size to the
/// host, bounded by that maximum, and compilers that emit MSL from WGSL
/// (Tint) write the WGSL workgroup size's product there. The largest
/// dimension is halved until the total fits; a 1-D default becomes exactly
/// `[min(64, max), 1, 1]`.
pub fn shrink_to(size: [u32; 3], max: u32) -> [u32; 3] {
    let mut size = size;
    if size[1] == 1 && size[2] == 1 {
        return [size[0].min(max), 1, 1];
    }
    while size.iter().product::<u32>() > max {
        let largest = (0..3).max_by_key(|&i| (size[i], 3 - i)).unwrap_or(0);
        size[largest] = size[largest].div_ceil(2).max(1);
        if size == [1, 1, 1] {
            break;
        }
    }
    size
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
    /// A texture, or an array of `count` textures at `index`, `index + 1`, ...
    Texture {
        param: &'a ast::Param,
        texture: crate::types::Texture,
        index: u32,
        count: Option<u32>,
    },
    /// A sampler, or an array of `count` samplers at `index`, `index + 1`, ...
    Sampler {
        param: &'a ast::Param,
        index: u32,
        count: Option<u32>,
    },
    /// A `[[stage_in]]` struct (vertex, fragment, or a kernel's per-thread
    /// attributes).
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
    /// A fragment function's `float2 [[point_coord]]`: a varying that
    /// point-sprite entry points write (`point_sprites`).
    PointCoord { param: &'a ast::Param, ty: Type },
    /// A fragment function's `[[render_target_array_index]]` or
    /// `[[viewport_array_index]]`: 0 in every WebGPU render pass, which
    /// draws into one layer through one viewport (W0401).
    FirstLayer {
        param: &'a ast::Param,
        ty: Type,
        attr: &'a ast::Attribute,
    },
}

impl Lowerer<'_, '_> {
    /// Lowers a `kernel` function into a compute entry point.
    pub(in crate::lower) fn kernel(
        &mut self,
        f: &ast::FunctionDecl,
        size: Option<[u32; 3]>,
    ) -> Result<FunctionReflection> {
        if self.program.resolve_type(&f.ret)? != Type::Void {
            return Err(Error::coded(
                Code::EntryPointSignature,
                f.ret.span,
                format!("kernel function `{}` must return `void`", f.name.name),
            ));
        }
        let params = self.classify_params(f)?;
        let max_threads = self.max_total_threads(f)?;
        let wg = size.unwrap_or_else(|| {
            let default = default_threadgroup_size(position_dimensions(&params));
            max_threads.map_or(default, |(max, _)| shrink_to(default, max))
        });
        self.check_max_threads(max_threads, wg, size.is_some())?;
        let body = f.body.as_ref().expect("kernels have bodies");
        self.entry.predicated =
            callgraph::reaches_memoized(self.program, body, ("barrier", false), &|n| {
                stdlib::Builtin::function(n).map(stdlib::Builtin::is_barrier)
            });
        let subgroups = self.uses_subgroups(body, &params);
        // Emulated SIMD-group functions wait at barriers.
        self.entry.predicated |= subgroups && self.emulates_simd();
        self.plan_byte_stores(body, &params);
        let mut fx = FnCtx::new(&f.name.name, Type::Void);
        fx.kernel = true;
        let geometry = self.prologue(&mut fx, wg, subgroups, f.span)?;
        let mut arguments = Vec::new();
        let mut stage_input = None;
        for p in &params {
            if let KernelParam::StageIn { param, id } = p {
                stage_input = Some(self.bind_kernel_stage_in(
                    &mut fx,
                    param,
                    *id,
                    &params,
                    &geometry,
                    &mut arguments,
                )?);
                continue;
            }
            self.bind_param(&mut fx, p, Some(&geometry), body, &mut arguments)?;
        }
        if reads_stage_in_region(&params) {
            let region = Some(WgslBinding {
                group: 0,
                binding: crate::stage_in::STAGE_IN_REGION_BINDING,
            });
            let reflection =
                stage_input.get_or_insert_with(|| crate::stage_in::StageInputReflection {
                    attributes: Vec::new(),
                    layouts: Vec::new(),
                    index_buffer_index: None,
                    region_binding: None,
                });
            reflection.region_binding = region;
        }
        self.rebind_reassigned_pointers(&mut fx, body)?;
        fx.open();
        fx.pred.narrowed = usize::from(self.entry.narrow_body);
        let lowered = self.stmts(&mut fx, &body.stmts);
        let predicated = self.entry.predicated;
        lowered?;
        let body_block = fx.close();
        if !predicated {
            self.grid_guard(&mut fx, &geometry, f.span);
        }
        fx.push(Statement::Block(body_block), body.span);
        let counter = fx.pred.votes;
        let mut function = fx.finish();
        self.sync_vote_counter(&mut function, counter, false);
        if subgroups && self.emulates_simd() {
            self.check_simd_uniformity(&function)?;
        }
        if predicated {
            self.barriers_in_uniform_control_flow(&mut function);
        }
        let reached = self.reached_globals(&function);
        reached.mark_active(&mut arguments);
        let constexpr_samplers = self.used_constexpr_samplers(&reached);
        let mut extra: Vec<WgslBinding> = constexpr_samplers.iter().map(|s| s.binding).collect();
        extra.push(WgslBinding {
            group: 0,
            binding: DISPATCH_BINDING,
        });
        extra.extend(stage_input.as_ref().and_then(|s| s.region_binding));
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
            required_limits: Default::default(),
            simd_groups: subgroups.then(|| {
                let mode = match self.emulates_simd() {
                    true => crate::lower::SimdGroups::Emulated32,
                    false => crate::lower::SimdGroups::Native,
                };
                mode.as_str().to_string()
            }),
            constexpr_samplers,
            vertex_attributes: Vec::new(),
            vertex_stride: 0,
            varyings: Vec::new(),
            color_outputs: Vec::new(),
            function_constants: Vec::new(),
            stitchable: None,
            point_sprite: None,
            stage_input,
            draw_parameters_binding: None,
            vertex_dispatch: None,
        })
    }

    /// Whether the kernel needs the SIMD-group lane and width: it reaches a
    /// SIMD-group or quad-group function, or has a SIMD-group attribute.
    fn uses_subgroups(&self, body: &ast::Block, params: &[KernelParam]) -> bool {
        // Per-lane fragments (which lane holds what), or matrices made
        // whole again from each lane's `thread_elements()`.
        let lanes_hold_fragments = self.matrix_fragments() || self.simdgroup_copies_may_differ();
        let question = ("subgroups", lanes_hold_fragments);
        let wanted = |n: &str| {
            stdlib::Builtin::function(n).is_some_and(stdlib::Builtin::needs_subgroups)
                || stdlib::SIMD_STATE_INTRINSICS.contains(&n)
                || (lanes_hold_fragments
                    && (stdlib::Builtin::function(n)
                        .is_some_and(|b| b.family() == stdlib::Family::SimdMatrix)
                        || crate::lower::metal::simdgroup_matrix::is_matrix_type_name(n)))
        };
        callgraph::reaches_memoized(self.program, body, question, &|n| {
            stdlib::library_answer(n, wanted(n))
        }) || params
            .iter()
            .any(|p| matches!(p, KernelParam::Builtin { builtin, .. } if builtin.is_simd()))
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
                | KernelParam::StageBuiltin { param, ty, .. }
                | KernelParam::PointCoord { param, ty }
                | KernelParam::FirstLayer { param, ty, .. } => Some(BuiltinArgument {
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

    /// `[[max_total_threads_per_threadgroup(n)]]`: `n` and the attribute's span.
    fn max_total_threads(&self, f: &ast::FunctionDecl) -> Result<Option<(u32, Span)>> {
        let Some(a) = f
            .attributes
            .iter()
            .find(|a| a.name == "max_total_threads_per_threadgroup")
        else {
            return Ok(None);
        };
        let [arg] = a.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                "`max_total_threads_per_threadgroup` takes one argument",
            ));
        };
        let max = consteval::eval(self.program, arg)?
            .as_count()
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                Error::coded(
                    Code::InvalidAttributeArgument,
                    arg.span,
                    "expected a positive integer",
                )
            })?;
        Ok(Some((max, a.span)))
    }

    /// A requested threadgroup size must respect the kernel's maximum (the
    /// default one is shrunk to it).
    fn check_max_threads(
        &self,
        max_threads: Option<(u32, Span)>,
        wg: [u32; 3],
        explicit: bool,
    ) -> Result<()> {
        let Some((max, span)) = max_threads else {
            return Ok(());
        };
        let total = wg[0] * wg[1] * wg[2];
        if total > max {
            let why = if explicit {
                "the requested threadgroup size"
            } else {
                "the default threadgroup size"
            };
            return Err(Error::coded(
                Code::LimitExceeded,
                span,
                format!(
                    "{why} {}x{}x{} ({total} threads) exceeds `max_total_threads_per_threadgroup({max})`",
                    wg[0], wg[1], wg[2]
                ),
            )
            .note("choose a threadgroup size with `--threadgroup-size` (`Options::threadgroup_size` in the library)"));
        }
        Ok(())
    }

    pub(in crate::lower) fn bind_param(
        &mut self,
        fx: &mut FnCtx,
        p: &KernelParam,
        geo: Option<&Geometry>,
        body: &ast::Block,
        arguments: &mut Vec<Argument>,
    ) -> Result<()> {
        self.read_condition(fx, p)?;
        match p {
            KernelParam::StageIn { .. }
            | KernelParam::StageBuiltin { .. }
            | KernelParam::PointCoord { .. }
            | KernelParam::FirstLayer { .. } => {
                unreachable!("bound by stages.rs")
            }
            KernelParam::Builtin { param, builtin, ty } => {
                let geo = geo.expect("compute attributes exist in kernels only");
                self.bind_builtin(fx, param, *builtin, ty, geo)?
            }
            KernelParam::Threadgroup { param, ptr, index } => {
                self.bind_threadgroup(fx, param, ptr, *index, arguments)?
            }
            KernelParam::Texture {
                param,
                texture,
                index,
                count: None,
            } => self.bind_texture(fx, param, *texture, *index, body, arguments)?,
            KernelParam::Sampler {
                param,
                index,
                count: None,
            } => self.bind_sampler(fx, param, *index, body, arguments)?,
            KernelParam::Texture {
                param,
                texture,
                index,
                count: Some(n),
            } => {
                let elem = crate::types::Type::Texture(*texture);
                self.bind_resource_array(fx, param, &elem, *index, *n, body, arguments)?
            }
            KernelParam::Sampler {
                param,
                index,
                count: Some(n),
            } => {
                let elem = crate::types::Type::Sampler { comparison: false };
                self.bind_resource_array(fx, param, &elem, *index, *n, body, arguments)?
            }
            KernelParam::Buffer { param, ptr, index } if self.is_place_struct(&ptr.pointee) => {
                self.bind_argument_buffer(fx, param, ptr, *index, arguments)?
            }
            KernelParam::Buffer { param, ptr, index } => {
                self.bind_buffer(fx, param, ptr, *index, arguments)?
            }
        }
        Ok(())
    }

    /// A compute attribute parameter: a local variable holding the
    /// attribute's value (computed from the prologue's geometry) in the
    /// parameter's declared type.
    fn bind_builtin(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        builtin: Builtin,
        ty: &Type,
        geo: &Geometry,
    ) -> Result<()> {
        let value = self.builtin_value(fx, builtin, ty, geo, param.span);
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
        Ok(())
    }

    /// A `[[buffer(n)]]` parameter: a storage (or uniform) global, the
    /// parameter's name bound to its start, and its reflection.
    fn bind_buffer(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        ptr: &crate::types::Pointer,
        index: u32,
        arguments: &mut Vec<Argument>,
    ) -> Result<()> {
        let (global, info, binding) = self.buffer_global(param, ptr, index)?;
        let is_const = ptr.is_const || self.entry.is_vertex();
        let local = self.buffer_start(fx, global, ptr, is_const, param.span);
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
            index,
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
            members: Vec::new(),
        });
        Ok(())
    }

    /// What a buffer parameter's name denotes: a reference to the buffer's
    /// first object, or a pointer to element 0 (through the word view when
    /// the buffer is held as words).
    pub(super) fn buffer_start(
        &mut self,
        fx: &mut FnCtx,
        global: Handle<naga::GlobalVariable>,
        ptr: &crate::types::Pointer,
        is_const: bool,
        span: Span,
    ) -> Local {
        let words = self.word_view(global).is_some();
        if ptr.is_reference && words {
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
                } else if self.is_single_element(global) {
                    // A pointer read at `*p` only, bound as its pointee
                    // (`constant_pointer.rs`).
                    PtrRoot::Global(global)
                } else {
                    PtrRoot::Buffer(global)
                },
                index: zero,
                pointee: ptr.pointee.clone(),
                space: ptr.space,
                is_const,
            })
        }
    }
}

/// The dimensions of the kernel's highest-dimensional position attribute
/// (1 when it has none), which shape the default threadgroup size.
fn position_dimensions(params: &[KernelParam]) -> u8 {
    params
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
        .unwrap_or(1)
}

/// Whether the kernel has a `[[grid_origin]]` or `[[grid_size]]` argument.
fn reads_stage_in_region(params: &[KernelParam]) -> bool {
    params.iter().any(|p| {
        matches!(
            p,
            KernelParam::Builtin {
                builtin: Builtin::GridOrigin | Builtin::GridSize,
                ..
            }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::shrink_to;

    #[test]
    fn a_one_dimensional_default_takes_the_maximum() {
        assert_eq!(shrink_to([64, 1, 1], 1), [1, 1, 1]);
        assert_eq!(shrink_to([64, 1, 1], 3), [3, 1, 1]);
        assert_eq!(shrink_to([64, 1, 1], 256), [64, 1, 1]);
    }

    #[test]
    fn a_two_or_three_dimensional_default_is_halved_until_it_fits() {
        assert_eq!(shrink_to([8, 8, 1], 16), [4, 4, 1]);
        assert_eq!(shrink_to([8, 8, 1], 1), [1, 1, 1]);
        assert_eq!(shrink_to([4, 4, 4], 8), [2, 2, 2]);
        for max in 1..=70 {
            let s = shrink_to([4, 4, 4], max);
            assert!(s.iter().product::<u32>() <= max, "{max}: {s:?}");
        }
    }
}
