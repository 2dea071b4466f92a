//! Argument buffers (MSL §2.13): a `[[buffer(n)]]` argument whose struct
//! holds textures, samplers or pointers (`constant Args& args`,
//! `device Args& args`, `constant Args* args`), each member with an
//! optional `[[id(n)]]`.
//!
//! Metal: the buffer holds one 8-byte handle or GPU address per resource
//! (an array of N resources N of them) beside the plain data, and the
//! function reads each resource through it.
//!
//! WGSL: resources are module-scope variables with their own bindings, and
//! no buffer can hold one (nor can WebGPU bind arrays of them).
//!
//! Mapping: the argument is a translation-time aggregate
//! (`metal/pointer_members.rs`): every resource member gets a WGSL binding
//! of its own (`@binding(256)` on, in member order, within the stage's
//! group), each element of a fixed-size array of resources one; the
//! plain-data members stay in the buffer, `@binding(n)`, at their offsets in
//! Metal's layout of the whole struct (each resource slot 8 bytes), so a
//! host writes the same bytes as for Metal and ignores the slots. A member
//! access reaches the member's global; passing the argument (or a member)
//! to a helper specialises the helper per member, as for any struct of
//! places. Reflection lists each resource member as an argument of its own
//! under the buffer (`argumentBufferMembers`, `index` its `[[id(n)]]`).

use crate::diagnostics::Code;
use crate::layout::{self, PlannedMember};
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Aggregate, BytePlace, Local, Place, Value};
use crate::lower::metal::pointer_views::Memory;
use crate::lower::{Error, Lowerer, Result};
use crate::reflect::{
    Access, Argument, ArgumentKind, BufferBindingType, BufferInfo, SamplerInfo, WgslBinding,
};
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{AddressSpace, MemberDef, Pointer, Scalar, StructId, Type};
use naga::{Expression, Handle};

/// The first `@binding` of argument-buffer members: past the default
/// scheme's buffers (0..64), textures (64..128), samplers (128..192), the
/// dispatch uniform (192) and `constexpr` samplers (193..).
const FIRST_MEMBER_BINDING: u32 = 256;

/// WebGPU's default `maxBindingsPerBindGroup`.
const BINDING_LIMIT: u32 = 1000;

/// True for textures, samplers and pointers: what an argument buffer holds
/// as a handle rather than as data.
fn is_resource(ty: &Type) -> bool {
    matches!(
        ty,
        Type::Texture(_) | Type::Sampler { .. } | Type::Pointer(_)
    )
}

/// How an argument buffer's binding holds its plain-data members.
enum DataLayout {
    /// A WGSL struct of the data members at Metal's offsets, padded.
    Typed {
        ty: Handle<naga::Type>,
        /// The WGSL member index of each MSL member that is data.
        index_of: Vec<Option<u32>>,
    },
    /// 32-bit words addressed in bytes (`metal/word_views.rs`), for data
    /// WGSL lays out otherwise (`bool`, `char`, packed vectors, ...) or
    /// memory the function views as another type; `true` for data members.
    Words(Vec<bool>),
}

/// Where the plain-data members of an argument buffer are bound.
struct DataBinding {
    binding: WgslBinding,
    binding_type: BufferBindingType,
    global: Handle<naga::GlobalVariable>,
    layout: DataLayout,
}

/// The running state while one argument buffer's members are bound.
struct MemberBinder<'a> {
    /// The argument's name (`args`), prefixing its members' names.
    param: &'a str,
    /// Its `[[buffer(n)]]`.
    buffer: u32,
    /// The next free `@binding`.
    next: u32,
    /// The group of the stage's resources.
    group: u32,
    /// Reflection of each resource member bound so far.
    reflected: Vec<Argument>,
}

impl Lowerer<'_, '_> {
    /// True for an array (of arrays) of textures, samplers or pointers.
    pub(in crate::lower) fn is_resource_array(&self, ty: &Type) -> bool {
        match ty {
            Type::Array(e, _) => is_resource(e) || self.is_resource_array(e),
            _ => false,
        }
    }

    /// `[[id(n)]]` of each member of argument buffer `id`: given, or one
    /// past the highest id the member before it took (an array takes one
    /// per element, a struct one for itself and one per member). Given ids
    /// must increase, as Metal requires.
    pub(in crate::lower) fn argument_ids(&self, id: StructId) -> Result<Vec<u32>> {
        let def = self.program.structs.get(id);
        let mut out = Vec::new();
        let mut next = 0u32;
        for m in &def.members {
            let first = match m.id {
                Some(given) if given < next => {
                    return Err(Error::coded(
                        Code::InvalidAttributeArgument,
                        m.span,
                        format!(
                            "`[[id({given})]]` of `{}` is below the ids the members before it take (the next free one is {next})",
                            m.name
                        ),
                    )
                    .note("argument buffer ids must be unique and increase in member order (MSL §2.13)"));
                }
                Some(given) => given,
                None => next,
            };
            out.push(first);
            next = first.saturating_add(self.ids_taken(&m.ty));
        }
        Ok(out)
    }

    /// How many argument-buffer ids a member of type `ty` takes: one, one
    /// per element of an array, and for a struct one past the highest id
    /// its members take, numbered from its own (Apple's "Indexing argument
    /// buffers": `MaterialTexture materials[3]` of two members takes 6).
    fn ids_taken(&self, ty: &Type) -> u32 {
        match ty {
            Type::Array(e, n) => n.saturating_mul(self.ids_taken(e)),
            Type::Struct(id) => {
                let members = &self.program.structs.get(*id).members;
                members.iter().fold(0u32, |next, m| {
                    let first = m.id.filter(|given| *given >= next).unwrap_or(next);
                    first.saturating_add(self.ids_taken(&m.ty))
                })
            }
            _ => 1,
        }
    }

    /// A `[[buffer(index)]]` argument `param` pointing to an argument buffer:
    /// its members bound, its name bound to the aggregate, its reflection.
    pub(in crate::lower) fn bind_argument_buffer(
        &mut self,
        fx: &mut FnCtx,
        param: &ast::Param,
        ptr: &Pointer,
        index: u32,
        arguments: &mut Vec<Argument>,
    ) -> Result<()> {
        let Type::Struct(id) = ptr.pointee else {
            unreachable!("an argument buffer is a struct")
        };
        let name = param
            .name
            .as_ref()
            .map(|n| n.name.clone())
            .unwrap_or_else(|| "_".into());
        let def = self.program.structs.get(id).clone();
        let ids = self.argument_ids(id)?;
        let group = self.entry.group();
        let mut binder = MemberBinder {
            param: name.as_str(),
            buffer: index,
            next: next_member_binding(arguments, group),
            group,
            reflected: Vec::new(),
        };
        let writable =
            !ptr.is_const && ptr.space == AddressSpace::Device && !self.entry.is_vertex();
        let data = self.argument_data(param, ptr, id, index, writable)?;
        let mut values = Vec::new();
        for (i, m) in def.members.iter().enumerate() {
            let v = match data.as_ref() {
                Some(d) => self.data_member(fx, d, id, i, writable),
                None => None,
            };
            let v = match v {
                Some(v) => v,
                None => self.member_value(fx, &mut binder, m, &m.ty, &m.name, ids[i])?,
            };
            values.push(v);
        }
        let aggregate = Aggregate {
            ty: ptr.pointee.clone(),
            members: values,
            pointer: (!ptr.is_reference).then(|| Box::new(ptr.clone())),
            owned: false,
        };
        if let Some(n) = &param.name {
            fx.declare(&n.name, Local::Agg(aggregate));
        }
        let members = binder.reflected;
        let argument = self.argument_buffer_reflection(name, ptr, index, &ids, data.as_ref());
        arguments.push(Argument {
            access: if writable {
                Access::ReadWrite
            } else {
                Access::Read
            },
            members,
            ..argument
        });
        Ok(())
    }

    /// The reflection of argument buffer `name` at `[[buffer(index)]]`
    /// (read-only, no members yet): a buffer of its struct, each member
    /// with its `[[id(n)]]` (`ids`), bound where its data is.
    fn argument_buffer_reflection(
        &self,
        name: String,
        ptr: &Pointer,
        index: u32,
        ids: &[u32],
        data: Option<&DataBinding>,
    ) -> Argument {
        let (binding, binding_type) = match data {
            Some(d) => (Some(d.binding), d.binding_type),
            None => (None, BufferBindingType::ReadOnlyStorage),
        };
        let mut struct_type = crate::reflect::struct_type(&ptr.pointee, &self.program.structs);
        if let Some(st) = &mut struct_type {
            for (m, id) in st.members.iter_mut().zip(ids) {
                m.argument_index = Some(*id);
            }
        }
        let sa = layout::metal(&ptr.pointee, &self.program.structs);
        Argument {
            name,
            kind: ArgumentKind::Buffer,
            index,
            access: Access::Read,
            active: true,
            binding,
            buffer: Some(BufferInfo {
                alignment: sa.align,
                data_size: sa.size,
                data_type: self.program.display(&ptr.pointee),
                is_pointer: !ptr.is_reference,
                struct_type,
                array_type: None,
                binding_type,
                binding_size: None,
            }),
            threadgroup: None,
            texture: None,
            sampler: None,
            members: Vec::new(),
        }
    }

    /// The value of resource member `m` (or of an element of it: `ty`,
    /// named `name`, at argument-buffer id `id`), binding what it needs.
    fn member_value(
        &mut self,
        fx: &mut FnCtx,
        binder: &mut MemberBinder,
        m: &MemberDef,
        ty: &Type,
        name: &str,
        id: u32,
    ) -> Result<Value> {
        match ty {
            Type::Array(e, n) if self.is_resource_array(ty) => {
                let per = self.ids_taken(e);
                let mut elements = Vec::new();
                for k in 0..*n {
                    let at = id.saturating_add(k.saturating_mul(per));
                    let v = self.member_value(fx, binder, m, e, &format!("{name}[{k}]"), at)?;
                    elements.push(v);
                }
                Ok(Value::Agg(Aggregate {
                    ty: ty.clone(),
                    members: elements,
                    pointer: None,
                    owned: false,
                }))
            }
            Type::Texture(t) => {
                let binding = binder.take(m.span)?;
                let global = binder.global_name(name);
                let (g, ty, arg) =
                    self.texture_resource(&global, *t, None, false, binding, m.span)?;
                let reflected = binder.reflect(name, id, ArgumentKind::Texture, binding);
                reflected.access = arg.access;
                reflected.texture = arg.texture;
                let h = fx.add(Expression::GlobalVariable(g), m.span);
                Ok(Value::Rv(h, ty))
            }
            Type::Sampler { .. } => {
                let binding = binder.take(m.span)?;
                // Decided by use, as for `[[sampler(n)]]` arguments.
                let comparison = self.member_sampler_compared(&m.name);
                let ty = Type::Sampler { comparison };
                let g = self.resource_global(&binder.global_name(name), &ty, binding, m.span)?;
                self.global.argument_samplers.insert(g);
                binder
                    .reflect(name, id, ArgumentKind::Sampler, binding)
                    .sampler = Some(SamplerInfo { comparison });
                let h = fx.add(Expression::GlobalVariable(g), m.span);
                Ok(Value::Rv(h, ty))
            }
            Type::Pointer(pp)
                if matches!(pp.space, AddressSpace::Device | AddressSpace::Constant) =>
            {
                let binding = binder.take(m.span)?;
                let memory = Memory::ArgumentBufferMember(binder.buffer, id);
                let global = binder.global_name(name);
                let (g, info) = self.member_buffer(&global, pp, memory, binding, m.span)?;
                let is_const =
                    pp.is_const || pp.space == AddressSpace::Constant || self.entry.is_vertex();
                let local = self.buffer_start(fx, g, pp, is_const, m.span);
                let reflected = binder.reflect(name, id, ArgumentKind::Buffer, binding);
                if !is_const {
                    reflected.access = Access::ReadWrite;
                }
                reflected.buffer = Some(info);
                Ok(self.local_value(fx, local, m.span))
            }
            _ => Err(self.unsupported_member(m)),
        }
    }

    /// Whether a sampler member named `member` is a comparison sampler: the
    /// program passes a member of that name (`args.s`, `a->s`, `a.ss[k]`)
    /// to `sample_compare` or `gather_compare`. By name, since a helper
    /// receives the argument buffer under names of its own.
    fn member_sampler_compared(&self, member: &str) -> bool {
        use crate::syntax::ast::ExprKind as K;
        let names_member = |e: &ast::Expr| {
            let e = match &e.kind {
                K::Index(base, _) => base,
                _ => e,
            };
            matches!(&e.kind, K::Member(_, m, _) if m.name == member)
        };
        let compares = |e: &ast::Expr| match &e.kind {
            K::Call(callee, args) => {
                matches!(&callee.kind, K::Member(_, m, _) if m.name == "sample_compare" || m.name == "gather_compare")
                    && args.first().is_some_and(names_member)
            }
            _ => false,
        };
        self.program
            .functions
            .iter()
            .filter_map(|f| f.body.as_ref())
            .any(|body| crate::sema::callgraph::any_expr(body, &compares))
    }

    /// The storage (or uniform) global of a pointer member, and its
    /// reflection: `T*` a runtime-sized array, `T&` one `T`, plain data
    /// Metal lays out differently from WGSL held as words.
    fn member_buffer(
        &mut self,
        name: &str,
        pp: &Pointer,
        memory: Memory,
        binding: WgslBinding,
        span: Span,
    ) -> Result<(Handle<naga::GlobalVariable>, BufferInfo)> {
        self.check_host_shareable(&pp.pointee, span)?;
        let writable = !pp.is_const && pp.space == AddressSpace::Device && !self.entry.is_vertex();
        // Memory the function views as another type (`metal/pointer_views.rs`).
        let viewed = self.viewed_as_words(memory);
        let words = self.needs_word_view(&pp.pointee) || viewed;
        let atomics = self.holds_atomic(&pp.pointee);
        let atomic_words = words
            && writable
            && (super::bindings::has_sub_word(&pp.pointee, &self.program.structs)
                || atomics
                || viewed);
        let ty = if words {
            let word = match atomic_words {
                true => Type::Atomic(Scalar::UInt),
                false => Type::UINT,
            };
            self.runtime_array(&word, span)?
        } else if pp.is_reference {
            self.naga_type(&pp.pointee, span)?
        } else {
            self.runtime_array(&pp.pointee, span)?
        };
        let uniform = !words && pp.is_reference && self.uniform_allowed(pp, ty, false);
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
        let g = self.binding_global(name, space, ty, binding, span);
        if words {
            self.global.word_views.insert(g, atomic_words);
        }
        self.note_buffer(g, memory, pp.space);
        let sa = layout::metal(&pp.pointee, &self.program.structs);
        let info = BufferInfo {
            alignment: sa.align,
            data_size: sa.size,
            data_type: self.program.display(&pp.pointee),
            is_pointer: !pp.is_reference,
            struct_type: crate::reflect::struct_type(&pp.pointee, &self.program.structs),
            array_type: crate::reflect::array_type(&pp.pointee, &self.program.structs),
            binding_type: match space {
                naga::AddressSpace::Uniform => BufferBindingType::Uniform,
                naga::AddressSpace::Storage { access }
                    if access.contains(naga::StorageAccess::STORE) =>
                {
                    BufferBindingType::Storage
                }
                _ => BufferBindingType::ReadOnlyStorage,
            },
            binding_size: None,
        };
        Ok((g, info))
    }

    /// A global bound at `binding` (shared by entry points that bind the
    /// same type there).
    fn binding_global(
        &mut self,
        name: &str,
        space: naga::AddressSpace,
        ty: Handle<naga::Type>,
        binding: WgslBinding,
        span: Span,
    ) -> Handle<naga::GlobalVariable> {
        let writable = matches!(space, naga::AddressSpace::Storage { access } if access.contains(naga::StorageAccess::STORE));
        let key = (binding.group, binding.binding, ty, writable);
        if let Some(g) = self
            .global
            .buffers
            .get(&key)
            .filter(|g| self.global.module.global_variables[**g].space == space)
        {
            return *g;
        }
        let g = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(name.into()),
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
        self.global.buffers.insert(key, g);
        g
    }

    /// The global holding the plain-data members of argument buffer `id`
    /// (at `[[buffer(index)]]`'s binding) and its reflection; `None` when
    /// it has none.
    fn argument_data(
        &mut self,
        param: &ast::Param,
        ptr: &Pointer,
        id: StructId,
        index: u32,
        writable: bool,
    ) -> Result<Option<DataBinding>> {
        let memory = Memory::Buffer(index);
        let Some(layout) = self.data_layout(id, self.viewed_as_words(memory))? else {
            return Ok(None);
        };
        let binding = self.resource_binding(
            ArgumentKind::Buffer,
            index,
            WgslBinding {
                group: self.entry.group(),
                binding: index,
            },
            param.span,
        )?;
        let (ty, atomic_words) = match &layout {
            DataLayout::Typed { ty, .. } => (*ty, false),
            DataLayout::Words(_) => {
                let atomic = writable
                    && (super::bindings::has_sub_word(&ptr.pointee, &self.program.structs)
                        || self.viewed_as_words(memory));
                let word = match atomic {
                    true => Type::Atomic(Scalar::UInt),
                    false => Type::UINT,
                };
                (self.runtime_array(&word, param.span)?, atomic)
            }
        };
        // Read at one place only (`args.m`, `args->m`): a fixed-size uniform
        // where WGSL's uniform rules allow its layout.
        let typed = matches!(layout, DataLayout::Typed { .. });
        let uniform =
            typed && ptr.space == AddressSpace::Constant && self.uniform_allowed(ptr, ty, true);
        let (space, binding_type) = if uniform {
            (naga::AddressSpace::Uniform, BufferBindingType::Uniform)
        } else if writable {
            let access = naga::StorageAccess::LOAD | naga::StorageAccess::STORE;
            (
                naga::AddressSpace::Storage { access },
                BufferBindingType::Storage,
            )
        } else {
            let access = naga::StorageAccess::LOAD;
            (
                naga::AddressSpace::Storage { access },
                BufferBindingType::ReadOnlyStorage,
            )
        };
        let name = param.name.as_ref().map_or("_", |n| n.name.as_str());
        let global = self.binding_global(name, space, ty, binding, param.span);
        if !typed {
            self.global.word_views.insert(global, atomic_words);
        }
        self.note_buffer(global, memory, ptr.space);
        Ok(Some(DataBinding {
            binding,
            binding_type,
            global,
            layout,
        }))
    }

    /// The place of data member `i` of argument buffer `id` bound as
    /// `data`; `None` when the member is a resource.
    fn data_member(
        &mut self,
        fx: &mut FnCtx,
        data: &DataBinding,
        id: StructId,
        i: usize,
        writable: bool,
    ) -> Option<Value> {
        let m = self.program.structs.get(id).members[i].clone();
        let base = fx.add(Expression::GlobalVariable(data.global), m.span);
        match &data.layout {
            DataLayout::Typed { index_of, .. } => {
                let k = index_of[i]?;
                let ptr = fx.add(Expression::AccessIndex { base, index: k }, m.span);
                Some(Value::Place(Place {
                    ptr,
                    ty: m.ty,
                    writable,
                }))
            }
            DataLayout::Words(is_data) if is_data[i] => {
                let at = layout::struct_layout(id, &self.program.structs).offsets[i];
                let offset = self.u32_lit(fx, at, m.span);
                Some(Value::Bytes(BytePlace {
                    global: data.global,
                    offset,
                    ty: m.ty,
                    writable,
                }))
            }
            DataLayout::Words(_) => None,
        }
    }

    /// How argument buffer `id` holds its plain-data members (each at its
    /// offset in Metal's layout of the whole struct, each resource 8 bytes,
    /// aligned to 8): a WGSL struct padded to those offsets, or words when
    /// WGSL cannot lay them out so or `words` asks for them; `None` when
    /// every member is a resource.
    fn data_layout(&mut self, id: StructId, words: bool) -> Result<Option<DataLayout>> {
        let def = self.program.structs.get(id).clone();
        let offsets = layout::struct_layout(id, &self.program.structs).offsets;
        let mut planned = Vec::new();
        let mut index_of = vec![None; def.members.len()];
        let mut is_data = vec![false; def.members.len()];
        let mut typed = !words;
        let mut cursor = 0u32;
        let mut align = 4u32;
        for (i, m) in def.members.iter().enumerate() {
            if is_resource(&m.ty) || self.is_resource_array(&m.ty) {
                continue;
            }
            if self.is_place_struct(&m.ty) {
                return Err(self.unsupported_member(m));
            }
            is_data[i] = true;
            let w = match self.needs_word_view(&m.ty) {
                true => None,
                false => layout::wgsl(&m.ty, &self.program.structs).ok(),
            };
            let Some(w) = w.filter(|_| typed) else {
                typed = false;
                continue;
            };
            if layout::pad(&mut planned, &mut cursor, offsets[i], w.align).is_none() {
                typed = false;
                continue;
            }
            index_of[i] = Some(planned.len() as u32);
            planned.push((PlannedMember::Member(i), offsets[i]));
            cursor = offsets[i] + w.size;
            align = align.max(w.align);
        }
        if !is_data.contains(&true) {
            return Ok(None);
        }
        if !typed {
            return Ok(Some(DataLayout::Words(is_data)));
        }
        let ty = self.data_struct(&def, &planned, cursor.next_multiple_of(align))?;
        Ok(Some(DataLayout::Typed { ty, index_of }))
    }

    /// The WGSL struct of `def`'s data members as `planned` (Metal's
    /// offsets, with padding), `size` bytes.
    fn data_struct(
        &mut self,
        def: &crate::types::StructDef,
        planned: &[(PlannedMember, u32)],
        size: u32,
    ) -> Result<Handle<naga::Type>> {
        let mut members = Vec::new();
        for (k, (p, offset)) in planned.iter().enumerate() {
            let (name, ty) = match *p {
                PlannedMember::Member(i) => {
                    let m = &def.members[i];
                    (m.name.clone(), self.naga_type(&m.ty, m.span)?)
                }
                PlannedMember::Padding(4) => {
                    (format!("_pad{k}"), self.naga_type(&Type::UINT, def.span)?)
                }
                PlannedMember::Padding(_) => (
                    format!("_pad{k}"),
                    self.naga_type(&Type::Scalar(Scalar::Half), def.span)?,
                ),
            };
            members.push(naga::StructMember {
                name: Some(name),
                ty,
                binding: None,
                offset: *offset,
            });
        }
        let name = format!("{}_data", def.name.replace(['<', '>', ',', ' ', ':'], "_"));
        Ok(self.global.module.types.insert(
            naga::Type {
                name: Some(name),
                inner: naga::TypeInner::Struct {
                    members,
                    span: size,
                },
            },
            naga::Span::UNDEFINED,
        ))
    }

    /// A member of an argument buffer that is neither a resource, an array
    /// of resources, nor plain data.
    fn unsupported_member(&self, m: &MemberDef) -> Error {
        Error::coded(
            Code::Unsupported,
            m.span,
            format!(
                "member `{}` of type `{}` in an argument buffer is not supported yet",
                m.name,
                self.program.display(&m.ty)
            ),
        )
        .note("argument buffers may hold textures, samplers, `device`/`constant` pointers, arrays of these, and plain data; a nested struct of resources is not supported yet")
    }
}

impl MemberBinder<'_> {
    /// The WGSL global of member `name` (`args_tex`, `args_ts_2`).
    fn global_name(&self, name: &str) -> String {
        format!("{}_{}", self.param, wgsl_name(name))
    }

    /// Reflects member `name` (`args.tex`, `args.ts[2]`) as an argument of
    /// `kind` at `[[id(id)]]`, read-only until its caller says more.
    fn reflect(
        &mut self,
        name: &str,
        id: u32,
        kind: ArgumentKind,
        binding: WgslBinding,
    ) -> &mut Argument {
        self.reflected.push(Argument {
            name: format!("{}.{name}", self.param),
            kind,
            index: id,
            access: Access::Read,
            active: true,
            binding: Some(binding),
            buffer: None,
            threadgroup: None,
            texture: None,
            sampler: None,
            members: Vec::new(),
        });
        self.reflected.last_mut().expect("just pushed")
    }

    /// The next member binding, or an error past WebGPU's default limit.
    fn take(&mut self, span: Span) -> Result<WgslBinding> {
        if self.next >= BINDING_LIMIT {
            return Err(Error::coded(
                Code::Binding,
                span,
                format!(
                    "the resources of argument buffer `{}` need bindings past @binding({}), beyond WebGPU's default limit of {BINDING_LIMIT} bindings per group",
                    self.param,
                    BINDING_LIMIT - 1
                ),
            )
            .note("each texture, sampler and pointer of an argument buffer (each element of an array of them) is a WGSL binding of its own"));
        }
        let binding = WgslBinding {
            group: self.group,
            binding: self.next,
        };
        self.next += 1;
        Ok(binding)
    }
}

/// The first binding past the members of argument buffers bound before
/// (in `arguments`) in `group`.
fn next_member_binding(arguments: &[Argument], group: u32) -> u32 {
    arguments
        .iter()
        .flat_map(|a| &a.members)
        .filter_map(|m| m.binding)
        .filter(|b| b.group == group)
        .map(|b| b.binding + 1)
        .max()
        .unwrap_or(FIRST_MEMBER_BINDING)
}

/// A member path (`ts[2]`) as part of a WGSL name (`ts_2`).
fn wgsl_name(path: &str) -> String {
    path.replace('[', "_").replace(']', "")
}

/// Metal's `isActive` for argument buffers: each resource member by whether
/// the entry point reaches its binding, and the buffer itself when the
/// entry point reaches its data or any member.
pub(in crate::lower) fn mark_members_active(
    arguments: &mut [Argument],
    reached: impl Fn(WgslBinding) -> bool,
) {
    for arg in arguments.iter_mut().filter(|a| !a.members.is_empty()) {
        for m in &mut arg.members {
            m.active = m.binding.is_some_and(&reached);
        }
        let data = arg.binding.is_some_and(&reached);
        arg.active = data || arg.members.iter().any(|m| m.active);
    }
}
