//! Resource arguments of entry points: buffers (typed or word views),
//! threadgroup memory, textures and samplers, their bindings (the default
//! scheme of docs/REFLECTION.md or the user's binding map) and reflection.

use crate::diagnostics::Code;
use crate::layout;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Local, Place, PtrRoot, PtrValue};
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{Access, Argument, ArgumentKind, BufferBindingType, BufferInfo, WgslBinding};
use crate::sema::callgraph;
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{AddressSpace, Scalar, Type};
use naga::{Expression, Handle};

impl Lowerer<'_, '_> {
    /// `[[texture(n)]]` → a texture binding at 64 + n; with wgpu's
    /// extensions, an atomic one if `body` uses texture atomics on it.
    pub(in crate::lower) fn bind_texture(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        texture: crate::types::Texture,
        index: u32,
        body: &ast::Block,
        arguments: &mut Vec<Argument>,
    ) -> Result<()> {
        let name = param
            .name
            .as_ref()
            .map(|n| n.name.clone())
            .unwrap_or_else(|| "_".into());
        let atomic = self.settings.native_extensions
            && texture.access == crate::types::TextureAccess::ReadWrite
            && callgraph::texture_atomic(self.program, body, &name);
        let binding = self.resource_binding(
            ArgumentKind::Texture,
            index,
            WgslBinding {
                group: self.entry.group(),
                binding: 64 + index,
            },
            param.span,
        )?;
        if texture.shape == crate::types::TextureShape::Buffer {
            return self.bind_texel_buffer(fx, param, texture, index, binding, arguments);
        }
        let (g, ty, argument) =
            self.texture_resource(&name, texture, Some(index), atomic, binding, param.span)?;
        let h = fx.add(Expression::GlobalVariable(g), param.span);
        if let Some(n) = &param.name {
            fx.declare(&n.name, Local::Value(h, ty));
        }
        arguments.push(Argument { index, ..argument });
        Ok(())
    }

    /// The global of a texture at `binding`, its type (with its storage
    /// format) and its reflection (index 0):
    /// a storage texture takes the format `--texture-format` gives for
    /// `format_index`, or the default of its type; `atomic` binds it with
    /// wgpu's atomic access where its format has one (r32uint, r32sint).
    pub(in crate::lower) fn texture_resource(
        &mut self,
        name: &str,
        mut texture: crate::types::Texture,
        format_index: Option<u32>,
        atomic: bool,
        binding: WgslBinding,
        span: Span,
    ) -> Result<(Handle<naga::GlobalVariable>, Type, Argument)> {
        use crate::reflect::{TextureBinding, TextureInfo};
        if texture.shape == crate::types::TextureShape::Buffer {
            return Err(Error::coded(
                Code::Unsupported,
                span,
                "a `texture_buffer` in an argument buffer is not supported yet; pass it as a `[[texture(n)]]` argument",
            ));
        }
        let storage_format = if texture.is_storage() && !texture.shape.is_depth() {
            let f = match format_index {
                Some(index) => self.storage_format(&texture, index, span)?,
                None => {
                    let name = crate::lower::texture_types::default_format(&texture);
                    crate::lower::texture_types::format_index(name).expect("a known format")
                }
            };
            let format = crate::lower::texture_types::FORMATS[f as usize].0;
            let atomic = atomic && crate::lower::texture_types::ATOMIC_FORMATS.contains(&format);
            if atomic {
                self.entry
                    .features
                    .insert(crate::lower::ctx::entry::Feature::TextureAtomic);
            }
            texture.format = Some(crate::types::StorageBinding { format: f, atomic });
            Some(format.to_string())
        } else {
            None
        };
        let ty = Type::Texture(texture);
        let g = self.resource_global(name, &ty, binding, span)?;
        let binding_kind = if texture.shape.is_depth() {
            TextureBinding::Depth
        } else if texture.is_storage() {
            TextureBinding::Storage
        } else {
            TextureBinding::Sampled
        };
        let sample_type = match (
            texture.shape.is_depth(),
            crate::lower::texture_types::sampled_kind(texture.scalar),
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
        let argument = Argument {
            name: name.into(),
            kind: ArgumentKind::Texture,
            index: 0,
            access,
            active: true,
            binding: Some(binding),
            buffer: None,
            threadgroup: None,
            texture: Some(TextureInfo {
                texture_type: crate::lower::texture_types::metal_texture_type(texture.shape).into(),
                data_type: texture.scalar.name().into(),
                view_dimension: crate::lower::texture_types::view_dimension(&texture).into(),
                binding_kind,
                sample_type: sample_type.into(),
                multisampled: texture.shape.is_multisampled(),
                storage_format,
            }),
            sampler: None,
            members: Vec::new(),
        };
        Ok((g, ty, argument))
    }
    /// `[[sampler(n)]]` → a sampler binding at 128 + n; a comparison sampler
    /// if the kernel uses it with `sample_compare`/`gather_compare`.
    pub(in crate::lower) fn bind_sampler(
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
                group: self.entry.group(),
                binding: 128 + index,
            },
            param.span,
        )?;
        let g = self.resource_global(&name, &ty, binding, param.span)?;
        self.global.argument_samplers.insert(g);
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
            members: Vec::new(),
        });
        Ok(())
    }
    /// A texture or sampler global (shared by kernels binding the same thing).
    pub(in crate::lower) fn resource_global(
        &mut self,
        name: &str,
        ty: &Type,
        binding: WgslBinding,
        span: Span,
    ) -> Result<Handle<naga::GlobalVariable>> {
        let ty_h = self.naga_type(ty, span)?;
        if let Some(g) = self
            .global
            .buffers
            .get(&(binding.group, binding.binding, ty_h, false))
        {
            return Ok(*g);
        }
        let g = self.global.module.global_variables.append(
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
        self.global
            .buffers
            .insert((binding.group, binding.binding, ty_h, false), g);
        Ok(g)
    }
    /// The binding of resource `kind` `index` of the function being lowered:
    /// the user's binding map, or `default`.
    pub(in crate::lower) fn resource_binding(
        &self,
        kind: ArgumentKind,
        index: u32,
        default: WgslBinding,
        span: Span,
    ) -> Result<WgslBinding> {
        let Some(b) = self.settings.binding_map.get(&self.entry.name, kind, index) else {
            return Ok(default);
        };
        // WebGPU's default limits: 4 bind groups, 1000 bindings per group.
        if b.group >= 4 || b.binding >= 1000 {
            return Err(Error::coded(Code::Binding, span, format!("the binding map puts this argument at @group({}) @binding({}), beyond WebGPU's default limits (4 groups, 1000 bindings)", b.group, b.binding)));
        }
        Ok(b)
    }
    /// Two resources of one entry point at one binding (a binding-map mistake).
    pub(in crate::lower) fn check_binding_collisions(
        &self,
        f: &ast::FunctionDecl,
        arguments: &[Argument],
        extra: &[WgslBinding],
    ) -> Result<()> {
        let mut seen: Vec<(WgslBinding, String)> = extra
            .iter()
            .map(|b| (*b, "a binding of the translation".to_string()))
            .collect();
        // Argument buffers' members are bound on their own.
        let all = arguments
            .iter()
            .flat_map(|a| std::iter::once(a).chain(&a.members));
        for a in all {
            let Some(b) = a.binding else { continue };
            if let Some((_, other)) = seen.iter().find(|(x, _)| *x == b) {
                return Err(Error::coded(
                    Code::Binding,
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
    /// Without one, a kernel that uses `p` as one object gets one `T` (any
    /// length would behave alike); one that needs the length is lowered
    /// with one `T` too, reflected with no length, and left out of the WGSL
    /// by the library (W0406).
    pub(in crate::lower) fn bind_threadgroup(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        ptr: &crate::types::Pointer,
        index: u32,
        arguments: &mut Vec<Argument>,
    ) -> Result<()> {
        use crate::lower::entry::params::ThreadgroupLength;
        let name = param
            .name
            .as_ref()
            .map(|n| n.name.clone())
            .unwrap_or_else(|| "_".into());
        let sa = layout::metal(&ptr.pointee, &self.program.structs);
        let length = if ptr.is_reference {
            // A reference names one object, whatever the host's length.
            ThreadgroupLength::OneObject
        } else {
            self.threadgroup_length(param, ptr, index)
        };
        let (bytes, data_size) = match length {
            ThreadgroupLength::Given(bytes) => (bytes, Some(bytes)),
            ThreadgroupLength::OneObject => (sa.size, Some(sa.size)),
            ThreadgroupLength::AtDispatch(warning) => {
                self.global.warnings.push(warning);
                (sa.size, None)
            }
        };
        let count = bytes / sa.size.max(1);
        if count == 0 {
            return Err(Error::coded(Code::InvalidOption, param.span, format!(
                "threadgroup memory for `[[threadgroup({index})]]` is {bytes} bytes, less than one `{}` ({} bytes)",
                self.program.display(&ptr.pointee),
                sa.size
            )));
        }
        let array = if ptr.is_reference {
            ptr.pointee.clone()
        } else {
            Type::Array(Box::new(ptr.pointee.clone()), count)
        };
        // Memory the kernel views as another type (`metal/pointer_views.rs`).
        let memory = crate::lower::metal::pointer_views::Memory::ThreadgroupArgument(index);
        let local = if self.viewed_as_words(memory) {
            let whole = layout::metal(&array, &self.program.structs).size;
            let g = self.threadgroup_words(&name, whole, param.span)?;
            self.note_memory(g, memory);
            self.threadgroup_words_local(fx, g, ptr, param.span)
        } else {
            let ty = self.naga_type(&array, param.span)?;
            let bytes = layout::metal_bytes(&array, &self.program.structs);
            let g = self.global.module.global_variables.append(
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
            self.global.threadgroup_bytes.insert(g, bytes);
            self.note_memory(g, memory);
            if ptr.is_reference {
                let e = fx.add(Expression::GlobalVariable(g), param.span);
                Local::Ref(Place {
                    ptr: e,
                    ty: ptr.pointee.clone(),
                    writable: !ptr.is_const,
                })
            } else {
                let zero = self.u32_lit(fx, 0, param.span);
                Local::Ptr(PtrValue {
                    root: PtrRoot::Buffer(g),
                    index: zero,
                    pointee: ptr.pointee.clone(),
                    space: AddressSpace::Threadgroup,
                    is_const: ptr.is_const,
                })
            }
        };
        if let Some(n) = &param.name {
            fx.declare(&n.name, local);
        }
        arguments.push(Argument {
            name,
            kind: ArgumentKind::ThreadgroupMemory,
            index,
            access: Access::ReadWrite,
            active: true,
            binding: None,
            buffer: None,
            threadgroup: Some(crate::reflect::ThreadgroupInfo {
                alignment: sa.align,
                data_size,
            }),
            texture: None,
            sampler: None,
            members: Vec::new(),
        });
        Ok(())
    }
    /// Whether the function declaring buffer `param` stores into it only
    /// whole aligned words (`metal/whole_word_stores.rs`), so that its word
    /// view needs no atomics.
    fn only_whole_word_stores(&self, param: &ast::Param, ptr: &crate::types::Pointer) -> bool {
        let (Some(name), Some(body)) = (
            &param.name,
            self.function_of(param).and_then(|f| f.body.as_ref()),
        ) else {
            return false;
        };
        !ptr.is_reference
            && crate::lower::metal::whole_word_stores::only_whole_word_stores(
                body,
                &name.name,
                &ptr.pointee,
                &self.program.structs,
            )
    }

    /// The storage global for buffer argument `index`.
    pub(in crate::lower) fn buffer_global(
        &mut self,
        param: &ast::Param,
        ptr: &crate::types::Pointer,
        index: u32,
    ) -> Result<(Handle<naga::GlobalVariable>, BufferInfo, WgslBinding)> {
        let span = param.ty.span;
        // A `device void*` buffer is untyped memory that the function reads
        // only through casts to typed pointers: held as words, it reads and
        // writes as any type (`metal/pointer_views.rs`).
        let untyped = ptr.pointee == Type::Void;
        if !untyped {
            self.check_host_shareable(&ptr.pointee, span)?;
        }
        // WebGPU vertex functions cannot write storage buffers: bind read-only.
        let writable = !ptr.is_const && !self.entry.is_vertex();
        // A buffer whose plain data the kernel casts to atomics
        // (`(device atomic_uint*)&b.x`, as SPIR-V Cross writes) is held as
        // atomic words, which every access goes through (params.rs).
        let punned = writable && !self.holds_atomic(&ptr.pointee) && self.cast_to_atomic(param);
        // Memory the kernel views as another type (`metal/pointer_views.rs`).
        let memory = crate::lower::metal::pointer_views::Memory::Buffer(index);
        let viewed = self.viewed_as_words(memory);
        let words = self.needs_word_view(&ptr.pointee) || punned || viewed;
        // Sub-word stores update bytes with atomic AND/OR (see bytes.rs), and
        // atomics in the data need atomic words too.
        let atomic_words = words
            && writable
            && (untyped
                || (has_sub_word(&ptr.pointee, &self.program.structs)
                    && !self.only_whole_word_stores(param, ptr))
                || self.holds_atomic(&ptr.pointee)
                || punned
                || viewed);
        // A `constant T*` read at constant indices only: a fixed-size uniform.
        let fixed = match words {
            false => self.fixed_uniform_pointer(param, ptr, span)?,
            true => None,
        };
        let ty = if words {
            let word = if atomic_words {
                Type::Atomic(Scalar::UInt)
            } else {
                Type::UINT
            };
            self.runtime_array(&word, span)?
        } else if let Some(fixed) = fixed {
            fixed.ty
        } else if ptr.is_reference {
            let ty = self.naga_type(&ptr.pointee, span)?;
            self.trailing_array_view(param, ptr, ty, span)?
        } else {
            self.runtime_array(&ptr.pointee, span)?
        };
        let uniform = !words && (fixed.is_some() || self.uniform_allowed(ptr, ty, false));
        let sa = layout::metal(&ptr.pointee, &self.program.structs);
        let info = BufferInfo {
            alignment: sa.align,
            data_size: sa.size,
            data_type: self.program.display(&ptr.pointee),
            is_pointer: !ptr.is_reference,
            struct_type: crate::reflect::struct_type(&ptr.pointee, &self.program.structs),
            array_type: crate::reflect::array_type(&ptr.pointee, &self.program.structs),
            binding_type: match (uniform, writable) {
                (true, _) => BufferBindingType::Uniform,
                (false, true) => BufferBindingType::Storage,
                (false, false) if self.holds_atomic(&ptr.pointee) => BufferBindingType::Storage,
                (false, false) => BufferBindingType::ReadOnlyStorage,
            },
            binding_size: fixed.map(|f| f.elements * sa.size),
        };
        if index >= 64 {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                span,
                format!("buffer index {index} is too large (at most {})", 63),
            ));
        }
        let binding = self.resource_binding(
            ArgumentKind::Buffer,
            index,
            WgslBinding {
                group: self.entry.group(),
                binding: index,
            },
            param.span,
        )?;
        // WGSL's atomics live only in `read_write` storage, also when Metal's
        // pointer is `const` (atomic loads through it).
        let atomics = self.holds_atomic(&ptr.pointee);
        let space = if uniform {
            naga::AddressSpace::Uniform
        } else if writable || atomics {
            naga::AddressSpace::Storage {
                access: naga::StorageAccess::LOAD | naga::StorageAccess::STORE,
            }
        } else {
            naga::AddressSpace::Storage {
                access: naga::StorageAccess::LOAD,
            }
        };
        if let Some(g) = self
            .global
            .buffers
            .get(&(binding.group, binding.binding, ty, writable))
            // A typed `array<u32>` and a word view are not interchangeable,
            // nor are a uniform and a read-only storage buffer.
            .filter(|g| self.word_view(**g).is_some() == words)
            .filter(|g| self.global.module.global_variables[**g].space == space)
            .copied()
        {
            self.note_buffer(g, memory, ptr.space);
            return Ok((g, info, binding));
        }
        let name = param.name.as_ref().map(|n| n.name.clone());
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name,
                space,
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
        self.global
            .buffers
            .insert((binding.group, binding.binding, ty, writable), g);
        if words {
            self.global.word_views.insert(g, atomic_words);
        }
        self.note_buffer(g, memory, ptr.space);
        Ok((g, info, binding))
    }
    /// True if buffer argument `ptr`, held as naga type `ty`, can be a
    /// `var<uniform>`: a `constant` reference, or a pointer read at
    /// constant indices only (`fixed_size`; otherwise a pointer's size is
    /// known only when it is bound), whose type, in the layout the padding
    /// plan gives it, meets WGSL's uniform rules (`layout::uniform`).
    pub(super) fn uniform_allowed(
        &self,
        ptr: &crate::types::Pointer,
        ty: Handle<naga::Type>,
        fixed_size: bool,
    ) -> bool {
        use crate::layout::uniform::{check_on_every_backend, UniformLayout};
        if ptr.space != AddressSpace::Constant || !(ptr.is_reference || fixed_size) {
            return false;
        }
        let standard = match self.settings.uniform_layout {
            UniformLayout::Wgsl => false,
            // wgpu has no such extension: its WGSL keeps the WGSL rules.
            UniformLayout::Standard => !self.settings.native_extensions,
            UniformLayout::None => return false,
        };
        check_on_every_backend(&self.global.module, ty, standard).is_ok()
    }
    /// Types this version can place in buffers.
    pub(in crate::lower) fn check_host_shareable(&self, ty: &Type, span: Span) -> Result<()> {
        match ty {
            Type::Atomic(Scalar::Bool) => Err(Error::coded(Code::Unsupported, span, "`atomic_bool` in buffers is not supported (its size in Metal's layout is not verified)")),
            Type::Array(e, _) => self.check_host_shareable(e, span),
            Type::Struct(id) => self
                .program
                .structs
                .get(*id)
                .members
                .iter()
                .try_for_each(|m| self.check_host_shareable(&m.ty, m.span)),
            // Data holding a GPU address (SPIR-V Cross's translation of
            // Vulkan's buffer device addresses); argument buffers, whose
            // pointers are bindings, are lowered apart.
            Type::Pointer(_) => {
                use crate::sema::unported_features::{POINTER_IN_BUFFER, POINTER_IN_BUFFER_PORT};
                Err(Error::coded(Code::NoWebGpuEquivalent, span, POINTER_IN_BUFFER)
                    .note(POINTER_IN_BUFFER_PORT))
            }
            Type::Void => {
                Err(Error::coded(Code::InvalidType, span, "this type cannot be stored in a buffer"))
            }
            _ => Ok(()),
        }
    }
}

/// True if `ty` holds data smaller than a 32-bit word.
pub(super) fn has_sub_word(ty: &Type, structs: &crate::types::Structs) -> bool {
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
