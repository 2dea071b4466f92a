//! What vertex and fragment functions return: the vertex position and
//! linked values, or the fragment's colours, depth and sample mask.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::function::{OutputAdapter, OutputMember};
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{ColorOutput, Varying};
use crate::source_map::Span;
use crate::syntax::ast::{self, Item};
use crate::types::{Scalar, Type};
use naga::{Binding, BuiltIn, Expression, Handle};

impl Lowerer<'_, '_> {
    /// Sets the entry point's result and how `return` builds it.
    pub(in crate::lower) fn stage_result(
        &mut self,
        fx: &mut FnCtx,
        f: &ast::FunctionDecl,
        ret: &Type,
        vertex: bool,
    ) -> Result<(Vec<ColorOutput>, Vec<Varying>)> {
        match ret {
            Type::Vector(Scalar::Float, 4) if vertex => {
                let ty = self.naga_type(ret, f.ret.span)?;
                fx.function.result = Some(naga::FunctionResult { ty, binding: Some(Binding::BuiltIn(BuiltIn::Position { invariant: false })) });
                Ok((Vec::new(), Vec::new()))
            }
            // `half4`, and `half`, `float2`, ... for targets of fewer
            // components (MSL §5.2.3.4: a non-struct return is `[[color(0)]]`).
            Type::Scalar(s @ (Scalar::Float | Scalar::Half | Scalar::Int | Scalar::UInt))
            | Type::Vector(s @ (Scalar::Float | Scalar::Half | Scalar::Int | Scalar::UInt), _)
                if !vertex =>
            {
                let lanes = match ret {
                    Type::Vector(_, n) => n.to_string(),
                    _ => String::new(),
                };
                // Colour outputs are 32-bit in WebGPU: `half4` widens.
                let io = crate::lower::entry::stages::io_type(ret);
                let ty = self.naga_type(&io, f.ret.span)?;
                fx.function.result = Some(naga::FunctionResult { ty, binding: Some(location(0, None)) });
                if io != *ret {
                    fx.output = Some(OutputAdapter { ty, members: Vec::new(), bare: Some((ret.clone(), io)) });
                }
                Ok((vec![ColorOutput { index: 0, blend_src: None, data_type: format!("{}{lanes}", s.name()) }], Vec::new()))
            }
            Type::Struct(id) => {
                let name = self.program.struct_name(*id).to_string();
                let decl = self.tu.items.iter().find_map(|i| match i {
                    Item::Struct(s) if s.name.name == name => Some(s.clone()),
                    _ => None,
                });
                let decl = decl.ok_or_else(|| Error::coded(Code::Unsupported, f.ret.span, "the returned struct must be declared in this file"))?;
                self.struct_result(fx, &decl, *id, vertex, f.ret.span)
            }
            Type::Void if !vertex => Ok((Vec::new(), Vec::new())),
            Type::Void => Err(Error::coded(Code::Internal, f.ret.span, "internal error: a `vertex void` function reached the lowering of drawn vertex functions; it runs as a compute dispatch (`vertex_dispatch.rs`)")),
            other => Err(Error::coded(Code::EntryPointSignature, f.ret.span, format!("a {} function cannot return `{}`", if vertex { "vertex" } else { "fragment" }, self.program.display(other)))),
        }
    }

    fn struct_result(
        &mut self,
        fx: &mut FnCtx,
        decl: &ast::StructDecl,
        id: crate::types::StructId,
        vertex: bool,
        span: Span,
    ) -> Result<(Vec<ColorOutput>, Vec<Varying>)> {
        let def = self.program.structs.get(id).clone();
        let (mut out_members, mut map, mut colors, mut varyings) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut has_position = false;
        // A point-sprite entry point moves the position by the point size.
        let sprite_size = match self.entry.point_sprite.is_some() {
            true => decl
                .members
                .iter()
                .position(|m| m.attributes.iter().any(|a| a.name == "point_size")),
            false => None,
        };
        for (i, (m, md)) in decl.members.iter().zip(&def.members).enumerate() {
            if let Some(a) = m.attributes.iter().find(|a| a.name == "clip_distance") {
                let index = self.member_index(id, i);
                let (member, adapter) = self.clip_distances(a, m, &md.ty, vertex, index)?;
                out_members.push(member);
                map.push(adapter);
                continue;
            }
            // A vertex output may feed several fragment interpolations: one member each.
            for binding in self.output_bindings(m, &md.ty, vertex, &mut colors, &mut varyings)? {
                has_position |= matches!(binding, Binding::BuiltIn(BuiltIn::Position { .. }));
                if !md.ty.unpacked().is_scalar_or_vector() {
                    return Err(Error::coded(
                        Code::EntryPointSignature,
                        m.ty.span,
                        format!("output member `{}` must be a scalar or vector", m.name.name),
                    ));
                }
                let ty =
                    self.naga_type(&crate::lower::entry::stages::io_type(&md.ty), m.ty.span)?;
                let position = matches!(binding, Binding::BuiltIn(BuiltIn::Position { .. }));
                out_members.push(naga::StructMember {
                    name: Some(m.name.name.clone()),
                    ty,
                    binding: Some(binding),
                    offset: 0,
                });
                let member = match (sprite_size, position) {
                    (Some(size), true) => OutputMember::SpritePosition {
                        position: self.member_index(id, i),
                        size: self.member_index(id, size),
                        size_ty: def.members[size].ty.clone(),
                    },
                    _ => OutputMember::Convert(
                        self.member_index(id, i),
                        md.ty.unpacked(),
                        crate::lower::entry::stages::io_type(&md.ty),
                    ),
                };
                map.push(member);
            }
        }
        if sprite_size.is_some() && self.reads_point_coord() {
            let (binding, varying) = self.point_coord_binding(span)?;
            varyings.push(varying);
            out_members.push(naga::StructMember {
                name: Some("metal_point_coord".into()),
                ty: self.naga_type(&Type::Vector(Scalar::Float, 2), span)?,
                binding: Some(binding),
                offset: 0,
            });
            map.push(OutputMember::PointCoord);
        }
        if vertex && !has_position {
            return Err(Error::coded(
                Code::EntryPointSignature,
                decl.name.span,
                format!(
                    "vertex output struct `{}` needs a `[[position]]` member",
                    decl.name.name
                ),
            )
            .with_notes(
                crate::diagnostics::suggest::misspelt_attributes(
                    decl.members
                        .iter()
                        .flat_map(|m| m.attributes.iter().map(|a| (a.name.as_str(), a.span))),
                )
                .into_iter()
                .map(|(_, message, note)| format!("{message}: {note}")),
            ));
        }
        // IO structs need offsets only to satisfy the validator: lay them out naturally.
        let inner = self.io_struct(out_members, span)?;
        let ty = self.global.module.types.insert(
            naga::Type {
                name: Some(format!("{}Out", decl.name.name)),
                inner,
            },
            naga::Span::UNDEFINED,
        );
        fx.function.result = Some(naga::FunctionResult { ty, binding: None });
        fx.output = Some(OutputAdapter {
            ty,
            members: map,
            bare: None,
        });
        Ok((colors, varyings))
    }

    /// The bindings of an output member (none to drop it).
    fn output_bindings(
        &mut self,
        m: &ast::Member,
        ty: &Type,
        vertex: bool,
        colors: &mut Vec<ColorOutput>,
        varyings: &mut Vec<Varying>,
    ) -> Result<Vec<Binding>> {
        let attr = |n: &str| m.attributes.iter().find(|a| a.name == n);
        self.global.warnings.extend(
            crate::diagnostics::suggest::misspelt_attributes(
                m.attributes.iter().map(|a| (a.name.as_str(), a.span)),
            )
            .into_iter()
            .map(|(span, message, note)| {
                Error::coded(Code::AttributeIgnored, span, message).note(note)
            }),
        );
        if let Some(a) = attr("position") {
            let invariant = m.attributes.iter().any(|a| a.name == "invariant");
            if !vertex || *ty != Type::Vector(Scalar::Float, 4) {
                return Err(Error::coded(
                    Code::EntryPointSignature,
                    a.span,
                    "`[[position]]` outputs are `float4` members of vertex outputs",
                ));
            }
            return Ok(vec![Binding::BuiltIn(BuiltIn::Position { invariant })]);
        }
        // Not an output of the entry point: its point-sprite entry point
        // draws squares that size (`point_sprites`).
        if let Some(a) = attr("point_size") {
            if !vertex || !matches!(ty, Type::Scalar(Scalar::Float | Scalar::Half)) {
                return Err(Error::coded(
                    Code::EntryPointSignature,
                    a.span,
                    "`[[point_size]]` outputs are `float` members of vertex outputs",
                ));
            }
            return Ok(Vec::new());
        }
        // Layered and multi-viewport rendering: a WebGPU render pass has
        // one layer of each attachment and one viewport, and no vertex
        // output chooses another. Dropped with a warning (as SPIR-V Cross's
        // layer and viewport-index shaders translated before, silently).
        for (name, instead) in [
            (
                "render_target_array_index",
                "render each layer in a pass of its own, with that layer's view as the attachment",
            ),
            (
                "viewport_array_index",
                "draw once per viewport, setting it with `setViewport` between the draws",
            ),
        ] {
            if let Some(a) = attr(name) {
                self.global.warnings.push(
                    Error::coded(
                        Code::AttributeDropped,
                        a.span,
                        format!("`[[{name}]]` was dropped: WebGPU has no equivalent (a render pass draws into one layer through one viewport), so every primitive goes to the first"),
                    )
                    .note(instead),
                );
                return Ok(Vec::new());
            }
        }
        if vertex {
            let key = crate::lower::entry::stages::link_key(m);
            let mut out = Vec::new();
            for slot in self.varying_slots(&key) {
                varyings.push(Varying {
                    name: key.clone(),
                    location: slot.location,
                    data_type: self.program.display(ty),
                    interpolation: slot.text.clone(),
                });
                out.push(Binding::Location {
                    location: slot.location,
                    interpolation: Some(slot.interpolation),
                    sampling: slot.sampling,
                    blend_src: None,
                    per_primitive: false,
                });
            }
            return Ok(out);
        }
        Ok(self
            .fragment_output_binding(m, ty, colors)?
            .into_iter()
            .collect())
    }

    /// A `[[clip_distance]]` member of a vertex output: a `float` or up to
    /// eight `float`s, as WGSL's `clip_distances` (the `clip-distances`
    /// feature) takes.
    fn clip_distances(
        &mut self,
        a: &ast::Attribute,
        m: &ast::Member,
        ty: &Type,
        vertex: bool,
        index: u32,
    ) -> Result<(naga::StructMember, OutputMember)> {
        if !vertex {
            return Err(Error::coded(
                Code::InvalidAttribute,
                a.span,
                "`[[clip_distance]]` is an output of vertex functions",
            ));
        }
        let (count, array) = match ty {
            Type::Scalar(Scalar::Float) => (1, false),
            Type::Array(element, n) if **element == Type::FLOAT && (1..=8).contains(n) => (*n, true),
            _ => {
                return Err(Error::coded(
                    Code::EntryPointSignature,
                    m.ty.span,
                    format!(
                        "`[[clip_distance]]` member `{}` must be a `float` or an array of 1 to 8 `float`s",
                        m.name.name
                    ),
                ))
            }
        };
        self.require_feature(crate::lower::ctx::entry::Feature::ClipDistances);
        let f32_ty = self.naga_type(&Type::FLOAT, m.ty.span)?;
        let array_ty = self.global.module.types.insert(
            naga::Type {
                name: None,
                inner: naga::TypeInner::Array {
                    base: f32_ty,
                    size: naga::ArraySize::Constant(
                        std::num::NonZeroU32::new(count).expect("1 to 8"),
                    ),
                    stride: 4,
                },
            },
            naga::Span::UNDEFINED,
        );
        let member = naga::StructMember {
            name: Some(m.name.name.clone()),
            ty: array_ty,
            binding: Some(Binding::BuiltIn(BuiltIn::ClipDistances)),
            offset: 0,
        };
        Ok((
            member,
            OutputMember::ClipDistances {
                index,
                count,
                array,
                ty: array_ty,
            },
        ))
    }

    fn fragment_output_binding(
        &mut self,
        m: &ast::Member,
        ty: &Type,
        colors: &mut Vec<ColorOutput>,
    ) -> Result<Option<Binding>> {
        let attr = |n: &str| m.attributes.iter().find(|a| a.name == n);
        if let Some(a) = attr("color") {
            let index = self.attribute_number(a)?;
            let blend_src = attr("index")
                .map(|i| self.attribute_number(i))
                .transpose()?;
            if colors
                .iter()
                .any(|c| c.index == index && c.blend_src == blend_src)
            {
                return Err(Error::coded(
                    Code::InvalidAttributeArgument,
                    a.span,
                    format!("duplicate `[[color({index})]]` output"),
                ));
            }
            if blend_src.is_some() {
                self.require_feature(crate::lower::ctx::entry::Feature::DualSourceBlending);
            }
            colors.push(ColorOutput {
                index,
                blend_src,
                data_type: self.program.display(ty),
            });
            return Ok(Some(location(index, blend_src)));
        }
        if attr("depth").is_some() {
            if *ty != Type::FLOAT {
                return Err(Error::coded(
                    Code::EntryPointSignature,
                    m.ty.span,
                    "`[[depth(...)]]` outputs are `float`",
                ));
            }
            return Ok(Some(Binding::BuiltIn(BuiltIn::FragDepth)));
        }
        if attr("sample_mask").is_some() {
            return Ok(Some(Binding::BuiltIn(BuiltIn::SampleMask)));
        }
        if let Some(a) = m.attributes.iter().find(|a| a.name == "stencil") {
            return Err(Error::coded(
                Code::NoWebGpuEquivalent,
                a.span,
                "`[[stencil]]` outputs have no WebGPU equivalent",
            ));
        }
        Err(Error::coded(Code::EntryPointSignature, m.name.span, format!("fragment output member `{}` needs `[[color(m)]]`, `[[depth(...)]]` or `[[sample_mask]]`", m.name.name)))
    }

    fn attribute_number(&self, a: &ast::Attribute) -> Result<u32> {
        let [arg] = a.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                format!("`{}` takes one index", a.name),
            ));
        };
        crate::sema::consteval::eval(self.program, arg)?
            .as_int()
            .filter(|i| *i >= 0)
            .map(|i| i as u32)
            .ok_or_else(|| {
                Error::coded(
                    Code::InvalidAttributeArgument,
                    arg.span,
                    "expected a non-negative integer constant",
                )
            })
    }

    fn io_struct(
        &mut self,
        mut members: Vec<naga::StructMember>,
        span: Span,
    ) -> Result<naga::TypeInner> {
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(self.global.module.to_ctx()).map_err(|e| {
            Error::coded(Code::Internal, span, format!("internal error: layout: {e}"))
        })?;
        let (mut cursor, mut align) = (0u32, naga::proc::Alignment::ONE);
        for m in &mut members {
            let l = layouter[m.ty];
            m.offset = l.alignment.round_up(cursor);
            cursor = m.offset + l.size;
            align = align.max(l.alignment);
        }
        Ok(naga::TypeInner::Struct {
            members,
            span: align.round_up(cursor),
        })
    }

    /// Converts a returned MSL struct value to the output struct.
    pub(in crate::lower) fn adapt_output(
        &mut self,
        fx: &mut FnCtx,
        adapter: &OutputAdapter,
        value: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if let Some((from, to)) = &adapter.bare {
            return self.convert(fx, value, from, to, true, span);
        }
        let mut components = Vec::new();
        for out in &adapter.members {
            match out {
                OutputMember::SpritePosition {
                    position,
                    size,
                    size_ty,
                } => {
                    let position = fx.add(
                        Expression::AccessIndex {
                            base: value,
                            index: *position,
                        },
                        span,
                    );
                    let size = fx.add(
                        Expression::AccessIndex {
                            base: value,
                            index: *size,
                        },
                        span,
                    );
                    let size = self.convert(fx, size, size_ty, &Type::FLOAT, true, span)?;
                    components.push(self.sprite_position(fx, position, size, span)?);
                }
                OutputMember::PointCoord => components.push(self.sprite_coord(span)?),
                OutputMember::Convert(index, from, to) => {
                    let member = fx.add(
                        Expression::AccessIndex {
                            base: value,
                            index: *index,
                        },
                        span,
                    );
                    components.push(self.convert(fx, member, from, to, true, span)?);
                }
                &OutputMember::ClipDistances {
                    index,
                    count,
                    array,
                    ty,
                } => {
                    let member = fx.add(Expression::AccessIndex { base: value, index }, span);
                    let distances = if array {
                        (0..count)
                            .map(|i| {
                                fx.add(
                                    Expression::AccessIndex {
                                        base: member,
                                        index: i,
                                    },
                                    span,
                                )
                            })
                            .collect()
                    } else {
                        vec![member]
                    };
                    components.push(fx.add(
                        Expression::Compose {
                            ty,
                            components: distances,
                        },
                        span,
                    ));
                }
            }
        }
        Ok(fx.add(
            Expression::Compose {
                ty: adapter.ty,
                components,
            },
            span,
        ))
    }
}

fn location(index: u32, blend_src: Option<u32>) -> Binding {
    Binding::Location {
        location: index,
        interpolation: None,
        sampling: None,
        blend_src,
        per_primitive: false,
    }
}
