//! Arrays of textures and samplers as entry-point arguments.
//!
//! Metal: `array<texture2d<float>, 4> ts [[texture(0)]]` (or the C form
//! `texture2d<float> ts[4] [[texture(0)]]`) takes texture indices 0 to 3:
//! element `k` is the texture the host sets at index `n + k` (MSL §2.13,
//! §5.2.1), and likewise for `array<sampler, N>` and `[[sampler(n)]]`.
//!
//! WGSL and WebGPU have no binding arrays (wgpu's `binding_array` is not in
//! browsers).
//!
//! Mapping: each element is a binding of its own, at the binding its Metal
//! index gives (`@binding(64 + n + k)` for textures, `128 + n + k` for
//! samplers in the default scheme), reflected as an argument `ts[k]` of
//! index `n + k`, as an argument buffer's array members are. The argument
//! is an aggregate of its elements (`metal/pointer_members.rs`): a constant
//! index picks an element's binding, passing the array to a helper passes
//! each element, and an index known only at run time chooses the element
//! with a `switch` around each use (`metal/resource_choice.rs`).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Aggregate, Local, Value};
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{Access, Argument, ArgumentKind, SamplerInfo, WgslBinding};
use crate::sema::callgraph;
use crate::syntax::ast;
use crate::types::{Texture, TextureAccess, TextureShape, Type};
use naga::Expression;

impl Lowerer<'_, '_> {
    /// `[[texture(index)]]` or `[[sampler(index)]]` argument `param`, an
    /// array of `count` elements of type `elem`: one binding per element.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::lower) fn bind_resource_array(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        elem: &Type,
        index: u32,
        count: u32,
        body: &ast::Block,
        arguments: &mut Vec<Argument>,
    ) -> Result<()> {
        let name = param.name.as_ref().map_or("_", |n| n.name.as_str());
        let mut members = Vec::new();
        for k in 0..count {
            let element = ArrayElement {
                array: name,
                k,
                index: index + k,
            };
            let value = match elem {
                Type::Texture(t) => {
                    self.texture_element(fx, param, *t, &element, body, arguments)?
                }
                _ => self.sampler_element(fx, param, &element, body, arguments)?,
            };
            members.push(value);
        }
        if let Some(n) = &param.name {
            fx.declare(
                &n.name,
                Local::Agg(Aggregate {
                    ty: Type::Array(Box::new(elem.clone()), count),
                    members,
                    pointer: None,
                    owned: false,
                }),
            );
        }
        Ok(())
    }

    /// Element `k` of an array of textures: its global and reflection.
    fn texture_element(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        texture: Texture,
        element: &ArrayElement,
        body: &ast::Block,
        arguments: &mut Vec<Argument>,
    ) -> Result<Value> {
        if texture.shape == TextureShape::Buffer {
            return Err(Error::coded(
                Code::Unsupported,
                param.ty.span,
                "an array of `texture_buffer`s is not supported yet; pass each as a `[[texture(n)]]` argument of its own",
            ));
        }
        let atomic = self.settings.native_extensions
            && texture.access == TextureAccess::ReadWrite
            && callgraph::texture_atomic(self.program, body, element.array);
        let binding = self.element_binding(ArgumentKind::Texture, 64, element, param)?;
        let (g, ty, argument) = self.texture_resource(
            &element.global_name(),
            texture,
            Some(element.index),
            atomic,
            binding,
            param.span,
        )?;
        arguments.push(Argument {
            name: element.reflected_name(),
            index: element.index,
            ..argument
        });
        let h = fx.add(Expression::GlobalVariable(g), param.span);
        Ok(Value::Rv(h, ty))
    }

    /// Element `k` of an array of samplers: a comparison sampler if the
    /// function compares with the array's elements (`passes::comparison_samplers`
    /// settles what the body's helpers do with them).
    fn sampler_element(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        element: &ArrayElement,
        body: &ast::Block,
        arguments: &mut Vec<Argument>,
    ) -> Result<Value> {
        let comparison = callgraph::sampler_compared(self.program, body, element.array);
        let ty = Type::Sampler { comparison };
        let binding = self.element_binding(ArgumentKind::Sampler, 128, element, param)?;
        let g = self.resource_global(&element.global_name(), &ty, binding, param.span)?;
        self.global.argument_samplers.insert(g);
        arguments.push(Argument {
            name: element.reflected_name(),
            kind: ArgumentKind::Sampler,
            index: element.index,
            access: Access::Read,
            active: true,
            binding: Some(binding),
            buffer: None,
            threadgroup: None,
            texture: None,
            sampler: Some(SamplerInfo { comparison }),
            members: Vec::new(),
        });
        let h = fx.add(Expression::GlobalVariable(g), param.span);
        Ok(Value::Rv(h, ty))
    }

    /// The binding of an element: the user's binding map for its index, or
    /// `base` plus its index.
    fn element_binding(
        &self,
        kind: ArgumentKind,
        base: u32,
        element: &ArrayElement,
        param: &ast::Param,
    ) -> Result<WgslBinding> {
        self.resource_binding(
            kind,
            element.index,
            WgslBinding {
                group: self.entry.group(),
                binding: base + element.index,
            },
            param.span,
        )
    }
}

/// One element of an array argument.
struct ArrayElement<'a> {
    /// The array's name.
    array: &'a str,
    /// Which element.
    k: u32,
    /// Its Metal index: the array's plus `k`.
    index: u32,
}

impl ArrayElement<'_> {
    /// Its WGSL global's name.
    fn global_name(&self) -> String {
        format!("{}_{}", self.array, self.k)
    }

    /// Its name in reflection, as Metal's argument buffer members are
    /// named: `ts[k]`.
    fn reflected_name(&self) -> String {
        format!("{}[{}]", self.array, self.k)
    }
}
