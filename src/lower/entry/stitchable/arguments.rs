//! The arguments of a SwiftUI effect after the fixed ones: values and
//! array counts in the argument buffer (a uniform at `[[buffer(0)]]`),
//! arrays in the next buffers, images in the next textures, and their
//! reflection.

use super::signature::{Extra, Signature};
use super::{local_name, named, ARGUMENT_BUFFER, LAYER_TEXTURE};
use crate::layout;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Local;
use crate::lower::entry::compute::KernelParam;
use crate::lower::{Lowerer, Result};
use crate::reflect::{
    Access, Argument, ArgumentKind, BufferInfo, EffectArgument, EffectArgumentKind, StructMember,
    StructType, WgslBinding,
};
use crate::sema::consteval::{self, ConstValue};
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{Pointer, Type};
use naga::{Expression, Handle, Statement};

/// The components of a constant, as numbers.
fn numbers(v: &ConstValue, out: &mut Vec<f64>) {
    match v {
        ConstValue::Bool(b) => out.push(f64::from(u8::from(*b))),
        ConstValue::Int(i, _) => out.push(*i as f64),
        ConstValue::Float(f, _) => out.push(*f),
        ConstValue::Composite(_, parts) => parts.iter().for_each(|p| numbers(p, out)),
    }
}

/// The position of parameter `p` in `f`'s parameters.
fn param_position(f: &ast::FunctionDecl, p: &ast::Param) -> usize {
    f.params
        .iter()
        .position(|q| std::ptr::eq(q, p))
        .unwrap_or(0)
}

/// The argument buffer's members as they are placed, in Metal's layout.
#[derive(Default)]
struct Members {
    /// (name, stored type, offset), in the order placed.
    list: Vec<(String, Type, u32)>,
    /// The end of the last member.
    offset: u32,
}

impl Members {
    /// Places a member `name` of type `stored` after the others; returns
    /// its offset.
    fn place(&mut self, name: &str, stored: &Type, structs: &crate::types::Structs) -> u32 {
        let sa = layout::metal(stored, structs);
        let at = self.offset.next_multiple_of(sa.align);
        self.offset = at + sa.size;
        self.list.push((name.to_string(), stored.clone(), at));
        at
    }
}

impl Lowerer<'_, '_> {
    /// A local variable `name` of type `ty` holding `value`.
    pub(super) fn store_local(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        ty: &Type,
        value: Handle<Expression>,
        span: Span,
    ) -> Result<()> {
        let th = self.naga_type(ty, span)?;
        let var = fx.local(name, th, span);
        let ptr = fx.add(Expression::LocalVariable(var), span);
        fx.push(
            Statement::Store {
                pointer: ptr,
                value,
            },
            span,
        );
        fx.declare(
            name,
            Local::Var {
                var,
                ty: ty.clone(),
                is_const: false,
            },
        );
        Ok(())
    }

    /// Binds the arguments after the fixed ones: the argument buffer (a
    /// uniform struct, if any value or count), arrays and images. Returns
    /// their reflection and the argument buffer's size.
    pub(super) fn bind_extras(
        &mut self,
        fx: &mut FnCtx,
        f: &ast::FunctionDecl,
        sig: &Signature,
        names: &mut Vec<String>,
        arguments: &mut Vec<Argument>,
    ) -> Result<(Vec<EffectArgument>, Option<u32>)> {
        let (effect, members) = self.reflect_extras(f, sig)?;
        let size = members.offset.next_multiple_of(16);
        let block = if members.list.is_empty() {
            None
        } else {
            Some(self.argument_buffer(f, &members.list, size, arguments)?)
        };
        // Each value's and count's member, in the order placed.
        let mut member = 0u32..;
        // Locals, in parameter order: values and counts from the buffer,
        // pointers and textures as a buffer or texture argument binds them.
        let body = f.body.as_ref().expect("definitions have bodies");
        for (extra, arg) in sig.extras.iter().zip(&effect) {
            match extra {
                Extra::Value { param, ty, stored } => {
                    let g = block.expect("values are in the buffer");
                    let m = member.next().expect("unbounded");
                    let value = self.load_member(fx, g, m, param.span);
                    let value = self.convert(fx, value, stored, ty, true, param.span)?;
                    self.store_local(fx, &arg.name, ty, value, param.span)?;
                    names.push(arg.name.clone());
                }
                Extra::Array {
                    param,
                    ptr,
                    count,
                    count_ty,
                    ..
                } => {
                    let p = named(param, param_position(f, param));
                    let kp = KernelParam::Buffer {
                        param: &p,
                        ptr: ptr.clone(),
                        index: arg.buffer.expect("arrays have a buffer"),
                    };
                    self.bind_param(fx, &kp, None, body, arguments)?;
                    names.push(arg.name.clone());
                    let g = block.expect("counts are in the buffer");
                    let m = member.next().expect("unbounded");
                    let count_name = arg.count_name.clone().unwrap_or_default();
                    let value = self.load_member(fx, g, m, count.span);
                    self.store_local(fx, &count_name, count_ty, value, count.span)?;
                    names.push(count_name);
                }
                Extra::Image { param, texture } => {
                    let p = named(param, param_position(f, param));
                    let kp = KernelParam::Texture {
                        param: &p,
                        texture: *texture,
                        index: arg.texture.expect("images have a texture"),
                        count: None,
                    };
                    self.bind_param(fx, &kp, None, body, arguments)?;
                    names.push(arg.name.clone());
                }
            }
        }
        Ok((effect, block.map(|_| size)))
    }

    /// The reflection of the arguments after the fixed ones, with the
    /// argument buffer's members (each value, and each array's count) and
    /// the buffer and texture indices of arrays and images.
    fn reflect_extras(
        &self,
        f: &ast::FunctionDecl,
        sig: &Signature,
    ) -> Result<(Vec<EffectArgument>, Members)> {
        let mut members = Members::default();
        let mut effect = Vec::new();
        let (mut next_buffer, mut next_texture) = (ARGUMENT_BUFFER + 1, LAYER_TEXTURE + 1);
        for extra in &sig.extras {
            let arg = match extra {
                Extra::Value { param, ty, stored } => {
                    let name = local_name(param, param_position(f, param));
                    let at = members.place(&name, stored, &self.program.structs);
                    self.value_argument(name, param, ty, stored, at)
                }
                Extra::Array {
                    param,
                    ptr,
                    kind,
                    count,
                    count_ty,
                } => {
                    let name = local_name(param, param_position(f, param));
                    let count_name = local_name(count, param_position(f, count));
                    let at = members.place(&count_name, count_ty, &self.program.structs);
                    let arg = self.array_argument(name, ptr, *kind, count_name, at, next_buffer);
                    next_buffer += 1;
                    arg
                }
                Extra::Image { param, .. } => {
                    let name = local_name(param, param_position(f, param));
                    let arg = self.image_argument(name, param, next_texture)?;
                    next_texture += 1;
                    arg
                }
            };
            effect.push(arg);
        }
        Ok((effect, members))
    }

    /// The reflection of value argument `param` (of type `ty`, held as
    /// `stored` at offset `at`), with its default argument's numbers.
    fn value_argument(
        &self,
        name: String,
        param: &ast::Param,
        ty: &Type,
        stored: &Type,
        at: u32,
    ) -> EffectArgument {
        let default = param.default.as_ref().and_then(|e| {
            let v = consteval::eval(self.program, e).ok()?;
            let mut out = Vec::new();
            numbers(&v, &mut out);
            Some(out)
        });
        EffectArgument {
            name,
            kind: EffectArgumentKind::Value,
            data_type: self.program.display(ty),
            stored_as: Some(self.program.display(stored)),
            offset: Some(at),
            default,
            buffer: None,
            count_name: None,
            count_offset: None,
            count_unit: None,
            texture: None,
        }
    }

    /// The reflection of an array (`ptr`, at `[[buffer(buffer)]]`) whose
    /// count `count_name` is at offset `at` of the argument buffer.
    fn array_argument(
        &self,
        name: String,
        ptr: &Pointer,
        kind: EffectArgumentKind,
        count_name: String,
        at: u32,
        buffer: u32,
    ) -> EffectArgument {
        let element = layout::metal(&ptr.pointee, &self.program.structs).size;
        EffectArgument {
            name,
            kind,
            data_type: self.program.display(&ptr.pointee),
            stored_as: None,
            offset: None,
            default: None,
            buffer: Some(buffer),
            count_name: Some(count_name),
            count_offset: Some(at),
            count_unit: Some(if kind == EffectArgumentKind::Data {
                1
            } else {
                element
            }),
            texture: None,
        }
    }

    /// The reflection of image argument `param`, at `[[texture(texture)]]`.
    fn image_argument(
        &self,
        name: String,
        param: &ast::Param,
        texture: u32,
    ) -> Result<EffectArgument> {
        Ok(EffectArgument {
            name,
            kind: EffectArgumentKind::Image,
            data_type: self.program.display(&self.program.resolve_type(&param.ty)?),
            stored_as: None,
            offset: None,
            default: None,
            buffer: None,
            count_name: None,
            count_offset: None,
            count_unit: None,
            texture: Some(texture),
        })
    }

    /// The argument buffer: a uniform struct of `members` (name, stored
    /// type, offset), `size` bytes, at `[[buffer(0)]]`, and its reflection.
    fn argument_buffer(
        &mut self,
        f: &ast::FunctionDecl,
        members: &[(String, Type, u32)],
        size: u32,
        arguments: &mut Vec<Argument>,
    ) -> Result<Handle<naga::GlobalVariable>> {
        let span = f.span;
        let mut naga_members = Vec::new();
        for (name, stored, offset) in members {
            naga_members.push(naga::StructMember {
                name: Some(name.clone()),
                ty: self.naga_type(stored, span)?,
                binding: None,
                offset: *offset,
            });
        }
        let struct_name = format!("{}_Arguments", f.name.name);
        let global_name = format!("{}_arguments", f.name.name);
        let ty = self.global.module.types.insert(
            naga::Type {
                name: Some(struct_name.clone()),
                inner: naga::TypeInner::Struct {
                    members: naga_members,
                    span: size,
                },
            },
            Self::span(span),
        );
        let binding = self.resource_binding(
            ArgumentKind::Buffer,
            ARGUMENT_BUFFER,
            WgslBinding {
                group: self.entry.group(),
                binding: ARGUMENT_BUFFER,
            },
            span,
        )?;
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(global_name.clone()),
                space: naga::AddressSpace::Uniform,
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
        let reflected = members
            .iter()
            .map(|(name, stored, offset)| StructMember {
                name: name.clone(),
                offset: *offset,
                data_type: self.program.display(stored),
                size: layout::metal(stored, &self.program.structs).size,
                struct_type: None,
                array_type: None,
                argument_index: None,
            })
            .collect();
        arguments.push(Argument {
            name: global_name,
            kind: ArgumentKind::Buffer,
            index: ARGUMENT_BUFFER,
            access: Access::Read,
            active: true,
            binding: Some(binding),
            buffer: Some(BufferInfo {
                alignment: 16,
                data_size: size,
                data_type: "struct".into(),
                is_pointer: false,
                struct_type: Some(StructType {
                    name: struct_name,
                    members: reflected,
                }),
                array_type: None,
                binding_type: crate::reflect::BufferBindingType::Uniform,
                binding_size: None,
            }),
            threadgroup: None,
            texture: None,
            sampler: None,
            members: Vec::new(),
        });
        Ok(g)
    }

    /// Member `member` of the uniform `g`, loaded.
    fn load_member(
        &mut self,
        fx: &mut FnCtx,
        g: Handle<naga::GlobalVariable>,
        member: u32,
        span: Span,
    ) -> Handle<Expression> {
        let base = fx.add(Expression::GlobalVariable(g), span);
        let pointer = fx.add(
            Expression::AccessIndex {
                base,
                index: member,
            },
            span,
        );
        fx.add(Expression::Load { pointer }, span)
    }
}
