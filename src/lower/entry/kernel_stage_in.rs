//! A kernel's `[[stage_in]]` struct (MSL §5.2.3, "per-thread inputs"),
//! filled in the prologue as Metal's fetch fills it: each `[[attribute(n)]]`
//! member read from the stage-input descriptor's buffer at the thread's
//! element and converted from its format (`metal/attribute_formats.rs`).
//!
//! The element of a buffer is the thread position plus the stage-in
//! region's origin (`setStageInRegion`), in the coordinate its step
//! function names, divided by its step rate, and for the indexed step
//! functions looked up in the index buffer; element 0 for `constant`. The
//! region is the uniform `metal_stage_in_region`
//! ([`crate::stage_in::STAGE_IN_REGION_BINDING`]), which also gives
//! `[[grid_origin]]` and `[[grid_size]]`.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::entry::compute::{Geometry, KernelParam};
use crate::lower::metal::attribute_formats::{own_format, ElementStart};
use crate::lower::stdlib::simd::bin;
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{Access, Argument, ArgumentKind, BufferBindingType, BufferInfo, WgslBinding};
use crate::source_map::Span;
use crate::stage_in::{
    AttributeDescriptor, BufferLayoutDescriptor, FormatValue, IndexType, StageInputAttribute,
    StageInputDescriptor, StageInputLayout, StageInputReflection, StepFunction,
    STAGE_IN_REGION_BINDING,
};
use crate::syntax::ast;
use crate::types::{Scalar, StructId, Type};
use naga::{BinaryOperator as Bo, Expression, Handle};
use std::collections::BTreeMap;

/// Metal's buffer argument table has 31 entries.
const MAX_BUFFER_INDEX: u32 = 30;

/// One `[[attribute(n)]]` member, with where the descriptor reads it.
struct Member {
    name: String,
    /// Where diagnostics about it point: its name and its type.
    name_span: Span,
    ty_span: Span,
    ty: Type,
    index: u32,
    at: AttributeDescriptor,
}

/// How a `[[stage_in]]` is read: its members in order, the layouts of the
/// buffers they are read from, and the descriptor.
struct Plan {
    members: Vec<Member>,
    layouts: BTreeMap<u32, BufferLayoutDescriptor>,
    descriptor: StageInputDescriptor,
}

impl Lowerer<'_, '_> {
    /// Binds the kernel's `[[stage_in]]` parameter to a local struct filled
    /// from the stage-input buffers; adds each buffer (and the index
    /// buffer) to `arguments`, and returns the reflection.
    pub(in crate::lower) fn bind_kernel_stage_in(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        id: StructId,
        params: &[KernelParam],
        geo: &Geometry,
        arguments: &mut Vec<Argument>,
    ) -> Result<StageInputReflection> {
        let taken = buffer_indices(params);
        let plan = self.plan_stage_in(param, id, &taken)?;
        let indexed = plan.layouts.values().any(|l| l.step_function.is_indexed());
        let mut buffers = BTreeMap::new();
        for &b in plan.layouts.keys() {
            buffers.insert(b, self.stage_in_buffer(b, param.span, arguments)?);
        }
        let index_buffer = match indexed {
            true => Some(self.stage_in_index_buffer(&plan.descriptor, &taken, param, arguments)?),
            false => None,
        };
        // One element index per buffer, computed once.
        let mut starts = BTreeMap::new();
        for (&b, layout) in &plan.layouts {
            let e =
                self.stage_in_element(fx, layout, &plan.descriptor, index_buffer, geo, param.span);
            starts.insert(b, (buffers[&b], e, layout.stride));
        }
        let mut values = Vec::new();
        for m in &plan.members {
            values.push(self.stage_in_member(fx, m, starts[&m.at.buffer_index])?);
        }
        let values = self.with_padding(id, values, param.span, |_, pad| {
            fx.add(Expression::ZeroValue(pad), param.span)
        })?;
        let th = self.naga_type(&Type::Struct(id), param.span)?;
        let value = fx.add(
            Expression::Compose {
                ty: th,
                components: values,
            },
            param.span,
        );
        self.local_copy(
            fx,
            param.name.as_ref(),
            &Type::Struct(id),
            value,
            param.span,
        )?;
        Ok(self.stage_in_reflection(&plan))
    }

    /// Where each member of the `[[stage_in]]` struct `id` is read: the
    /// descriptor's entries (or the default layout), checked against the
    /// members and the kernel's buffer arguments `taken`.
    fn plan_stage_in(
        &self,
        param: &ast::Param,
        id: StructId,
        taken: &[(u32, String)],
    ) -> Result<Plan> {
        let def = self.program.structs.get(id);
        let decl = self.struct_decl(&def.name).ok_or_else(|| {
            Error::coded(
                Code::Unsupported,
                param.span,
                "the `[[stage_in]]` struct must be declared in this file",
            )
        })?;
        let mut typed = Vec::new();
        for (m, md) in decl.members.iter().zip(&def.members) {
            typed.push((m, md.ty.clone(), self.stage_in_member_index(m, &md.ty)?));
        }
        let descriptor = match &self.settings.stage_in {
            Some(d) => d.clone(),
            None => {
                self.check_own_formats(&typed)?;
                default_descriptor(&typed, taken)
            }
        };
        let mut members = Vec::new();
        for (m, ty, index) in typed {
            let at = self.described_attribute(&descriptor, m, &ty, index)?;
            members.push(Member {
                name: m.name.name.clone(),
                name_span: m.name.span,
                ty_span: m.ty.span,
                ty,
                index,
                at,
            });
        }
        let layouts = self.used_layouts(&descriptor, &members, taken)?;
        Ok(Plan {
            members,
            layouts,
            descriptor,
        })
    }

    /// Member `m`'s value, read from `(buffer, element, stride)`.
    fn stage_in_member(
        &mut self,
        fx: &mut FnCtx,
        m: &Member,
        (global, element, stride): (Handle<naga::GlobalVariable>, Handle<Expression>, u32),
    ) -> Result<Handle<Expression>> {
        let span = m.ty_span;
        let first = match stride / 4 {
            1 => element,
            words => {
                let words = self.u32_lit(fx, words, span);
                bin(fx, Bo::Multiply, element, words, span)
            }
        };
        let word = match m.at.offset / 4 {
            0 => first,
            words => {
                let words = self.u32_lit(fx, words, span);
                bin(fx, Bo::Add, first, words, span)
            }
        };
        let start = ElementStart {
            global,
            word,
            byte: m.at.offset % 4,
        };
        let components = self.decode_attribute(fx, &start, m.at.format, span);
        let value = m.at.format.kind.value();
        self.attribute_value(fx, &components, value, &m.ty, span)
    }

    /// The reflection of a planned `[[stage_in]]`.
    fn stage_in_reflection(&self, plan: &Plan) -> StageInputReflection {
        let layouts = &plan.layouts;
        StageInputReflection {
            attributes: (plan.members.iter())
                .map(|m| StageInputAttribute {
                    name: m.name.clone(),
                    attribute_index: m.index,
                    attribute_type: self.program.display(&m.ty),
                    format: m.at.format.name(),
                    buffer_index: m.at.buffer_index,
                    offset: m.at.offset,
                })
                .collect(),
            layouts: (layouts.iter())
                .map(|(&b, l)| StageInputLayout {
                    buffer_index: b,
                    stride: l.stride,
                    step_function: l.step_function.name().to_string(),
                    step_rate: l.step_rate,
                })
                .collect(),
            index_buffer_index: (layouts.values().any(|l| l.step_function.is_indexed()))
                .then_some(plan.descriptor.index_buffer_index),
            // Read where a step function adds the origin (and by
            // `[[grid_origin]]`/`[[grid_size]]`, which `kernel` adds).
            region_binding: (layouts.values().any(|l| l.step_function.axis().is_some())).then_some(
                WgslBinding {
                    group: 0,
                    binding: STAGE_IN_REGION_BINDING,
                },
            ),
        }
    }

    /// `n` of member `m`'s `[[attribute(n)]]`; the member must be a scalar
    /// or vector.
    fn stage_in_member_index(&self, m: &ast::Member, ty: &Type) -> Result<u32> {
        if !matches!(ty, Type::Scalar(_) | Type::Vector(..)) {
            return Err(Error::coded(
                Code::EntryPointSignature,
                m.ty.span,
                format!(
                    "`[[stage_in]]` member `{}` must be a scalar or vector, not `{}`",
                    m.name.name,
                    self.program.display(ty)
                ),
            ));
        }
        if !m.attributes.iter().any(|a| a.name == "attribute") {
            return Err(Error::coded(
                Code::EntryPointSignature,
                m.name.span,
                format!(
                    "kernel `[[stage_in]]` member `{}` needs `[[attribute(n)]]`",
                    m.name.name
                ),
            ));
        }
        self.attribute_index(m)
    }

    /// Without a descriptor each member is read in its own format, which
    /// must exist.
    fn check_own_formats(&self, members: &[(&ast::Member, Type, u32)]) -> Result<()> {
        for (m, ty, _) in members {
            if own_format(ty).is_none() {
                return Err(Error::coded(
                    Code::InvalidOption,
                    m.ty.span,
                    format!(
                        "no attribute format reads `{}` as it is, so `[[stage_in]]` member `{}` needs a stage-input descriptor",
                        self.program.display(ty),
                        m.name.name
                    ),
                )
                .note("give its format in `--stage-in` (`Options::stage_in`), as the host's `MTLStageInputOutputDescriptor` does"));
            }
        }
        Ok(())
    }

    /// The descriptor's entry for attribute `index` (member `m` of type
    /// `ty`), checked against the member.
    fn described_attribute(
        &self,
        descriptor: &StageInputDescriptor,
        m: &ast::Member,
        ty: &Type,
        index: u32,
    ) -> Result<AttributeDescriptor> {
        let at = descriptor.attributes.get(&index).copied().ok_or_else(|| {
            Error::coded(
                Code::InvalidOption,
                m.name.span,
                format!(
                    "the stage-input descriptor has no attribute {index} for `[[stage_in]]` member `{}`",
                    m.name.name
                ),
            )
            .note("describe every `[[attribute(n)]]` in `--stage-in` (`Options::stage_in`), as the host's `MTLStageInputOutputDescriptor` does")
        })?;
        let scalar = ty.element_scalar().unwrap_or(Scalar::Bool);
        let fits = match at.format.kind.value() {
            FormatValue::Float => scalar.is_float() && scalar != Scalar::BFloat,
            FormatValue::Signed | FormatValue::Unsigned => {
                scalar.is_integer() && scalar.size() <= 4
            }
        };
        if !fits {
            let wants = match at.format.kind.value() {
                FormatValue::Float => "a `float` or `half` member",
                _ => "an integer member of at most 32 bits",
            };
            return Err(Error::coded(
                Code::InvalidOption,
                m.ty.span,
                format!(
                    "attribute {index} is read in format `{}`, which cannot fill `{}` member `{}`",
                    at.format.name(),
                    self.program.display(ty),
                    m.name.name
                ),
            )
            .note(format!("format `{}` needs {wants}", at.format.name())));
        }
        Ok(at)
    }

    /// The layouts of the buffers `members` are read from, each checked.
    fn used_layouts(
        &self,
        descriptor: &StageInputDescriptor,
        members: &[Member],
        taken: &[(u32, String)],
    ) -> Result<BTreeMap<u32, BufferLayoutDescriptor>> {
        let mut layouts = BTreeMap::new();
        for m in members {
            let b = m.at.buffer_index;
            let option_error =
                |msg: String| Err(Error::coded(Code::InvalidOption, m.name_span, msg));
            if b > MAX_BUFFER_INDEX {
                return option_error(format!(
                    "attribute {} is read from buffer {b}, beyond Metal's buffer indices (0 to {MAX_BUFFER_INDEX})",
                    m.index
                ));
            }
            if let Some((_, name)) = taken.iter().find(|(i, _)| *i == b) {
                return option_error(format!(
                    "attribute {} is read from buffer {b}, which is also the `[[buffer({b})]]` argument `{name}`",
                    m.index
                ));
            }
            let Some(layout) = descriptor.layouts.get(&b).copied() else {
                return option_error(format!(
                    "the stage-input descriptor has no layout for buffer {b}, which attribute {} is read from",
                    m.index
                ));
            };
            let stepping = layout.step_function != StepFunction::Constant;
            if stepping && (layout.stride == 0 || layout.stride % 4 != 0) {
                return option_error(format!(
                    "buffer {b} of the stage-input descriptor has stride {}; Metal requires a non-zero multiple of 4",
                    layout.stride
                ));
            }
            if stepping && layout.step_rate == 0 {
                return option_error(format!(
                    "buffer {b} of the stage-input descriptor has step rate 0; a step function other than `constant` needs at least 1"
                ));
            }
            let end = m.at.offset + m.at.format.size();
            if stepping && end > layout.stride {
                return option_error(format!(
                    "attribute {} (`{}` at offset {}) ends at byte {end}, past the stride {} of buffer {b}",
                    m.index,
                    m.at.format.name(),
                    m.at.offset,
                    layout.stride
                ));
            }
            layouts.insert(b, layout);
        }
        Ok(layouts)
    }

    /// The read-only `array<u32>` global of stage-input buffer `b`, with its
    /// argument.
    fn stage_in_buffer(
        &mut self,
        b: u32,
        span: Span,
        arguments: &mut Vec<Argument>,
    ) -> Result<Handle<naga::GlobalVariable>> {
        let binding = self.resource_binding(
            ArgumentKind::Buffer,
            b,
            WgslBinding {
                group: self.entry.group(),
                binding: b,
            },
            span,
        )?;
        let ty = self.runtime_array(&Type::UINT, span)?;
        let key = (binding.group, binding.binding, ty, false);
        let global = match self.global.buffers.get(&key).copied() {
            Some(g) if self.word_view(g).is_none() => g,
            _ => {
                let g = self.global.module.global_variables.append(
                    naga::GlobalVariable {
                        name: Some(format!("stage_in_buffer{b}")),
                        space: naga::AddressSpace::Storage {
                            access: naga::StorageAccess::LOAD,
                        },
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
                self.global.buffers.insert(key, g);
                g
            }
        };
        arguments.push(Argument {
            name: format!("stage_in_buffer{b}"),
            kind: ArgumentKind::Buffer,
            index: b,
            access: Access::Read,
            active: true,
            binding: Some(binding),
            buffer: Some(BufferInfo {
                alignment: 4,
                data_size: 4,
                data_type: "uint".into(),
                is_pointer: true,
                struct_type: None,
                array_type: None,
                binding_type: BufferBindingType::ReadOnlyStorage,
                binding_size: None,
            }),
            threadgroup: None,
            texture: None,
            sampler: None,
            members: Vec::new(),
        });
        Ok(global)
    }

    /// The index buffer of the indexed step functions, with its argument.
    fn stage_in_index_buffer(
        &mut self,
        descriptor: &StageInputDescriptor,
        taken: &[(u32, String)],
        param: &ast::Param,
        arguments: &mut Vec<Argument>,
    ) -> Result<Handle<naga::GlobalVariable>> {
        let b = descriptor.index_buffer_index;
        let clash = taken.iter().find(|(i, _)| *i == b).map(|(_, n)| n.clone());
        let clash = clash.or_else(|| {
            descriptor
                .layouts
                .contains_key(&b)
                .then(|| "a stage-input buffer".to_string())
        });
        if b > MAX_BUFFER_INDEX || clash.is_some() {
            let why = match clash {
                Some(name) => format!("is also `{name}`"),
                None => format!("is beyond Metal's buffer indices (0 to {MAX_BUFFER_INDEX})"),
            };
            return Err(Error::coded(
                Code::InvalidOption,
                param.span,
                format!("the stage-input index buffer {b} {why}"),
            ));
        }
        let g = self.stage_in_buffer(b, param.span, arguments)?;
        if let Some(arg) = arguments.last_mut() {
            arg.name = format!("stage_in_indices{b}");
        }
        Ok(g)
    }

    /// The element of a buffer laid out as `layout` that this thread reads.
    fn stage_in_element(
        &mut self,
        fx: &mut FnCtx,
        layout: &BufferLayoutDescriptor,
        descriptor: &StageInputDescriptor,
        index_buffer: Option<Handle<naga::GlobalVariable>>,
        geo: &Geometry,
        span: Span,
    ) -> Handle<Expression> {
        let Some(axis) = layout.step_function.axis() else {
            return self.u32_lit(fx, 0, span);
        };
        let along = |fx: &mut FnCtx, v| {
            fx.add(
                Expression::AccessIndex {
                    base: v,
                    index: axis as u32,
                },
                span,
            )
        };
        let rate = (layout.step_rate > 1).then(|| self.u32_lit(fx, layout.step_rate, span));
        let element = match geo.stage_in_origin {
            // A draw (a vertex function run as a compute dispatch): the
            // element of vertex or instance `first + k` is
            // `first + k / stepRate`, a per-instance buffer stepping from
            // the base instance (Vulkan's rule for instance divisors, which
            // MoltenVK passes to Metal as `stepRate`).
            Some(origin) => {
                let first = along(fx, origin);
                let k = along(fx, geo.gid);
                let k = match rate {
                    Some(rate) => bin(fx, Bo::Divide, k, rate, span),
                    None => k,
                };
                bin(fx, Bo::Add, first, k, span)
            }
            None => {
                let origin = self.stage_in_region_field(fx, 0, span);
                let position = bin(fx, Bo::Add, geo.gid, origin, span);
                let element = along(fx, position);
                match rate {
                    Some(rate) => bin(fx, Bo::Divide, element, rate, span),
                    None => element,
                }
            }
        };
        match (layout.step_function.is_indexed(), index_buffer) {
            (true, Some(indices)) => {
                self.stage_in_index(fx, indices, descriptor.index_type, element, span)
            }
            _ => element,
        }
    }

    /// Entry `i` of the index buffer `indices`, of `index_type`.
    fn stage_in_index(
        &mut self,
        fx: &mut FnCtx,
        indices: Handle<naga::GlobalVariable>,
        index_type: IndexType,
        i: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let base = fx.add(Expression::GlobalVariable(indices), span);
        let load = |fx: &mut FnCtx, index| {
            let pointer = fx.add(Expression::Access { base, index }, span);
            fx.add(Expression::Load { pointer }, span)
        };
        match index_type {
            IndexType::UInt32 => load(fx, i),
            IndexType::UInt16 => {
                let one = self.u32_lit(fx, 1, span);
                let word = bin(fx, Bo::ShiftRight, i, one, span);
                let word = load(fx, word);
                let half = bin(fx, Bo::And, i, one, span);
                let four = self.u32_lit(fx, 4, span);
                let shift = bin(fx, Bo::ShiftLeft, half, four, span);
                let sixteen = self.u32_lit(fx, 16, span);
                fx.add(
                    Expression::Math {
                        fun: naga::MathFunction::ExtractBits,
                        arg: word,
                        arg1: Some(shift),
                        arg2: Some(sixteen),
                        arg3: None,
                    },
                    span,
                )
            }
        }
    }

    /// Member `field` of the stage-in region uniform: 0 the origin
    /// (`[[grid_origin]]`), 1 the size (`[[grid_size]]`), a `vec3<u32>`.
    pub(in crate::lower) fn stage_in_region_field(
        &mut self,
        fx: &mut FnCtx,
        field: u32,
        span: Span,
    ) -> Handle<Expression> {
        let g = self.stage_in_region_global();
        let base = fx.add(Expression::GlobalVariable(g), span);
        let pointer = fx.add(Expression::AccessIndex { base, index: field }, span);
        fx.add(Expression::Load { pointer }, span)
    }

    /// The stage-in region uniform, created on first use.
    fn stage_in_region_global(&mut self) -> Handle<naga::GlobalVariable> {
        if let Some(g) = self.global.stage_in_region {
            return g;
        }
        let g = self.uint3_uniform(
            ("MetalStageInRegion", "metal_stage_in_region"),
            &["origin", "size"],
            STAGE_IN_REGION_BINDING,
        );
        self.global.stage_in_region = Some(g);
        g
    }
}

/// The `[[buffer(n)]]` indices of the kernel's buffer arguments, with
/// their names.
fn buffer_indices(params: &[KernelParam]) -> Vec<(u32, String)> {
    params
        .iter()
        .filter_map(|p| match p {
            KernelParam::Buffer { param, index, .. } => Some((
                *index,
                param
                    .name
                    .as_ref()
                    .map_or_else(|| "_".to_string(), |n| n.name.clone()),
            )),
            _ => None,
        })
        .collect()
}

/// [`StageInputDescriptor::packed`] for these members (each in its own
/// format; a member no format reads is left out, and reported where it is
/// looked up), in the first buffer index the kernel's `[[buffer(n)]]`
/// arguments leave free.
fn default_descriptor(
    members: &[(&ast::Member, Type, u32)],
    taken: &[(u32, String)],
) -> StageInputDescriptor {
    let free = (0..)
        .find(|n| !taken.iter().any(|(i, _)| i == n))
        .unwrap_or(0);
    let formats: Vec<_> = members
        .iter()
        .filter_map(|(_, ty, n)| own_format(ty).map(|f| (*n, f)))
        .collect();
    StageInputDescriptor::packed(&formats, free)
}
