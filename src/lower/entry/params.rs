//! Entry-point parameters classified by attribute and type (MSL's
//! argument attribute tables): `[[buffer(n)]]`, `[[threadgroup(n)]]`,
//! `[[texture(n)]]`, `[[sampler(n)]]`, compute attributes and stage inputs,
//! each index checked once, and buffers without an index given the first
//! free one as Metal does.

use crate::diagnostics::Code;
use crate::lower::entry::compute::{builtin, KernelParam};
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval;
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{AddressSpace, Type};

/// The `[[buffer(n)]]` indices met while classifying parameters.
#[derive(Default)]
struct BufferIndices {
    /// Indices taken, with the attribute that took each.
    used: Vec<(u32, Span)>,
    /// Positions of the buffer parameters without an index.
    unindexed: Vec<usize>,
}

impl Lowerer<'_, '_> {
    pub(in crate::lower) fn classify_params<'f>(
        &mut self,
        f: &'f ast::FunctionDecl,
    ) -> Result<Vec<KernelParam<'f>>> {
        let kernel = matches!(f.stage, Some((ast::Stage::Kernel, _)));
        let mut out = Vec::new();
        let mut buffers = BufferIndices::default();
        for p in &f.params {
            let param = self.classify_param(f, p, kernel, &out, &mut buffers)?;
            out.push(param);
        }
        self.assign_free_buffer_indices(&mut out, buffers);
        Ok(out)
    }

    /// Classifies parameter `p` of `f` by its attribute and type; `out` holds
    /// the parameters classified before it.
    fn classify_param<'f>(
        &mut self,
        f: &'f ast::FunctionDecl,
        p: &'f ast::Param,
        kernel: bool,
        out: &[KernelParam<'f>],
        buffers: &mut BufferIndices,
    ) -> Result<KernelParam<'f>> {
        let ty = self.program.resolve_type(&p.ty)?;
        let ty = self.program.apply_array(ty, &p.array)?;
        let name = p.name.as_ref().map(|n| n.name.as_str()).unwrap_or("_");
        let attr = p.attributes.first();
        match (attr.map(|a| a.name.as_str()), &ty) {
            (Some("buffer"), Type::Pointer(ptr))
                if matches!(ptr.space, AddressSpace::Device | AddressSpace::Constant) =>
            {
                self.buffer_param(f, p, ptr, attr.unwrap(), buffers)
            }
            (Some("buffer"), _) => {
                Err(Error::coded(Code::EntryPointSignature, p.ty.span, format!("`[[buffer(n)]]` argument `{name}` must be a pointer or reference in the `device` or `constant` address space")))
            }
            (Some(attr_name), _)
                if !kernel && attr_name != "threadgroup" && builtin(attr_name).is_some() =>
            {
                Err(Error::coded(
                    Code::InvalidAttribute,
                    attr.unwrap().span,
                    format!("`[[{attr_name}]]` is only available in kernel functions"),
                ))
            }
            (Some(attr_name), _)
                if !kernel
                    && !matches!(
                        attr_name,
                        "buffer" | "texture" | "sampler" | "threadgroup"
                    ) =>
            {
                self.stage_param(f, p, &ty, attr.unwrap())
            }
            (Some(attr_name), _) if builtin(attr_name).is_some() => {
                let b = builtin(attr_name).unwrap();
                self.check_builtin_type(b, &ty, attr_name, p)?;
                Ok(KernelParam::Builtin {
                    param: p,
                    builtin: b,
                    ty,
                })
            }
            (Some("threadgroup"), Type::Pointer(ptr))
                if ptr.space == AddressSpace::Threadgroup && !ptr.is_reference =>
            {
                self.threadgroup_param(p, ptr, attr.unwrap(), out)
            }
            (Some("threadgroup"), _) => {
                Err(Error::coded(Code::EntryPointSignature, p.ty.span, format!("`[[threadgroup(n)]]` argument `{name}` must be a `threadgroup` pointer")))
            }
            (Some(kind @ ("texture" | "sampler")), _) => {
                self.resource_param(p, &ty, kind, attr.unwrap(), out)
            }
            (None, Type::Texture(_) | Type::Sampler { .. }) => {
                Err(Error::coded(Code::EntryPointSignature, p.span, format!("kernel parameter `{name}` needs a `[[texture(n)]]` or `[[sampler(n)]]` attribute")))
            }
            (Some(a @ "stage_in"), _) => Err(Error::coded(
                Code::Unsupported,
                attr.unwrap().span,
                format!("`[[{a}]]` arguments are not supported yet"),
            )),
            (Some(other), _) => Err(Error::coded(
                Code::InvalidAttribute,
                attr.unwrap().span,
                format!("unknown or unsupported kernel argument attribute `[[{other}]]`"),
            )
            .with_notes(crate::diagnostics::suggest::did_you_mean(
                other,
                crate::diagnostics::suggest::ATTRIBUTES.iter().copied(),
            ))),
            (None, Type::Pointer(ptr))
                if matches!(ptr.space, AddressSpace::Device | AddressSpace::Constant) =>
            {
                buffers.unindexed.push(out.len());
                Ok(KernelParam::Buffer {
                    param: p,
                    ptr: (**ptr).clone(),
                    index: u32::MAX,
                })
            }
            (None, _) => Err(Error::coded(Code::EntryPointSignature, p.span, format!(
                "kernel parameter `{name}` needs an attribute such as `[[buffer(n)]]` or `[[thread_position_in_grid]]`"
            ))),
        }
    }

    /// A `[[buffer(n)]]` parameter; its index must not be taken yet.
    fn buffer_param<'f>(
        &mut self,
        f: &ast::FunctionDecl,
        p: &'f ast::Param,
        ptr: &crate::types::Pointer,
        a: &ast::Attribute,
        buffers: &mut BufferIndices,
    ) -> Result<KernelParam<'f>> {
        let [arg] = a.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                "`buffer` takes one index: `[[buffer(n)]]`",
            ));
        };
        let index = consteval::eval(self.program, arg)?
            .as_int()
            .filter(|i| *i >= 0)
            .ok_or_else(|| {
                Error::coded(
                    Code::InvalidAttributeArgument,
                    arg.span,
                    "buffer index must be a non-negative integer constant",
                )
            })? as u32;
        if let Some((_, first)) = buffers.used.iter().find(|(i, _)| *i == index) {
            let _ = first;
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                format!("duplicate `[[buffer({index})]]` index"),
            )
            .note(format!(
                "each buffer argument of `{}` needs its own index",
                f.name.name
            )));
        }
        buffers.used.push((index, a.span));
        Ok(KernelParam::Buffer {
            param: p,
            ptr: ptr.clone(),
            index,
        })
    }

    /// A `[[threadgroup(n)]]` pointer parameter; its index must not be taken
    /// by an earlier one of `out`.
    fn threadgroup_param<'f>(
        &mut self,
        p: &'f ast::Param,
        ptr: &crate::types::Pointer,
        a: &ast::Attribute,
        out: &[KernelParam<'f>],
    ) -> Result<KernelParam<'f>> {
        let [arg] = a.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                "`threadgroup` takes one index: `[[threadgroup(n)]]`",
            ));
        };
        let index = consteval::eval(self.program, arg)?
            .as_int()
            .filter(|i| (0..=u32::MAX as i64).contains(i))
            .ok_or_else(|| {
                Error::coded(
                    Code::InvalidAttributeArgument,
                    arg.span,
                    "threadgroup index must be a non-negative integer constant",
                )
            })? as u32;
        if out
            .iter()
            .any(|p| matches!(p, KernelParam::Threadgroup { index: i, .. } if *i == index))
        {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                format!("duplicate `[[threadgroup({index})]]` index"),
            ));
        }
        Ok(KernelParam::Threadgroup {
            param: p,
            ptr: ptr.clone(),
            index,
        })
    }

    /// A `[[texture(n)]]` or `[[sampler(n)]]` parameter (`kind` says which);
    /// its index must not be taken by an earlier one of `out`.
    fn resource_param<'f>(
        &mut self,
        p: &'f ast::Param,
        ty: &Type,
        kind: &str,
        a: &ast::Attribute,
        out: &[KernelParam<'f>],
    ) -> Result<KernelParam<'f>> {
        let name = p.name.as_ref().map(|n| n.name.as_str()).unwrap_or("_");
        let index = resource_index(self.program, a)?;
        let other = |p: &KernelParam| match (p, kind) {
            (KernelParam::Texture { index: i, .. }, "texture")
            | (KernelParam::Sampler { index: i, .. }, "sampler") => *i == index,
            _ => false,
        };
        if out.iter().any(other) {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                format!("duplicate `[[{kind}({index})]]` index"),
            ));
        }
        if index >= 64 {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                format!("{kind} index {index} is too large (at most 63)"),
            ));
        }
        match (kind, ty) {
            ("texture", Type::Texture(t)) => Ok(KernelParam::Texture {
                param: p,
                texture: *t,
                index,
            }),
            ("sampler", Type::Sampler { .. }) => Ok(KernelParam::Sampler { param: p, index }),
            _ => Err(Error::coded(
                Code::EntryPointSignature,
                p.ty.span,
                format!("`[[{kind}(n)]]` argument `{name}` must be a {kind}"),
            )),
        }
    }

    /// Gives every buffer argument without an index the first free one, as
    /// Metal does (MSL §5.2.1), with a warning.
    fn assign_free_buffer_indices(&mut self, out: &mut [KernelParam], buffers: BufferIndices) {
        let BufferIndices {
            mut used,
            unindexed,
        } = buffers;
        for i in unindexed {
            let free = (0..).find(|n| !used.iter().any(|(u, _)| u == n)).unwrap();
            used.push((free, Span::default()));
            if let KernelParam::Buffer { param, index, .. } = &mut out[i] {
                *index = free;
                self.global.warnings.push(Error::coded(Code::ImplicitBufferIndex, param.span, format!(
                    "buffer argument `{}` has no `[[buffer(n)]]` index; Metal assigns it index {free}",
                    param.name.as_ref().map(|n| n.name.as_str()).unwrap_or("_")
                )));
            }
        }
    }
}

/// The index of a `[[texture(n)]]` or `[[sampler(n)]]` attribute.
fn resource_index(program: &crate::sema::Program, a: &ast::Attribute) -> Result<u32> {
    let [arg] = a.args.as_slice() else {
        return Err(Error::coded(
            Code::InvalidAttributeArgument,
            a.span,
            format!("`{}` takes one index: `[[{}(n)]]`", a.name, a.name),
        ));
    };
    consteval::eval(program, arg)?
        .as_int()
        .filter(|i| (0..=u32::MAX as i64).contains(i))
        .map(|i| i as u32)
        .ok_or_else(|| {
            Error::coded(
                Code::InvalidAttributeArgument,
                arg.span,
                format!("{} index must be a non-negative integer constant", a.name),
            )
        })
}
