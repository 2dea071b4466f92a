//! MSL types → naga types. Structs get the padding members of their
//! [`crate::layout::PaddingPlan`], so their default WGSL layout is Metal's.

use crate::diagnostics::Code;
use crate::layout::{self, PlannedMember};
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::types::{Scalar, StructId, Type};
use naga::{Handle, TypeInner};
use std::collections::HashMap;

/// The name of the one member an empty MSL struct gets in WGSL.
pub(in crate::lower) const EMPTY_STRUCT_MEMBER: &str = "_empty";

/// Caches the naga handle of each MSL type.
#[derive(Default)]
pub(in crate::lower) struct TypeCache {
    handles: HashMap<Type, Handle<naga::Type>>,
    plans: HashMap<StructId, Option<layout::PaddingPlan>>,
    pub(in crate::lower) uses_f16: bool,
    pub(in crate::lower) uses_i64: bool,
}

/// naga's scalar for an MSL scalar (only the supported ones reach here).
pub(in crate::lower) fn scalar(s: Scalar) -> naga::Scalar {
    match s {
        Scalar::Bool => naga::Scalar::BOOL,
        // 8- and 16-bit integers are held sign- or zero-extended in 32 bits
        // (naga has no 8-bit integers; 16-bit ones need a native feature).
        Scalar::Int | Scalar::Char | Scalar::Short => naga::Scalar::I32,
        Scalar::UInt | Scalar::UChar | Scalar::UShort => naga::Scalar::U32,
        Scalar::Long => naga::Scalar::I64,
        Scalar::ULong => naga::Scalar::U64,
        Scalar::Half => naga::Scalar::F16,
        // `bfloat` is an `f32` holding a `bfloat` value (metal/bfloat.rs).
        Scalar::Float | Scalar::BFloat => naga::Scalar::F32,
    }
}

pub(in crate::lower) fn vector_size(n: u8) -> naga::VectorSize {
    match n {
        2 => naga::VectorSize::Bi,
        3 => naga::VectorSize::Tri,
        _ => naga::VectorSize::Quad,
    }
}

impl Lowerer<'_, '_> {
    /// The naga type of `ty`.
    pub(in crate::lower) fn naga_type(
        &mut self,
        ty: &Type,
        span: Span,
    ) -> Result<Handle<naga::Type>> {
        if let Some(h) = self.global.types.handles.get(ty) {
            return Ok(*h);
        }
        if matches!(ty.element_scalar(), Some(Scalar::Long | Scalar::ULong)) {
            self.check_64_bit(span)?;
        }
        let inner = match ty {
            Type::Scalar(s) => TypeInner::Scalar(self.scalar_used(*s)),
            Type::Vector(s, n) => TypeInner::Vector {
                size: vector_size(*n),
                scalar: self.scalar_used(*s),
            },
            Type::Matrix {
                scalar: s,
                columns,
                rows,
            } => TypeInner::Matrix {
                columns: vector_size(*columns),
                rows: vector_size(*rows),
                scalar: self.scalar_used(*s),
            },
            Type::Array(elem, _) if self.holds_handle(elem) => {
                return Err(Error::coded(
                    Code::Unsupported,
                    span,
                    format!(
                        "`{}`: arrays of textures or samplers are not supported yet (a WGSL array cannot hold them)",
                        self.program.display(ty)
                    ),
                ));
            }
            Type::Array(elem, n) => {
                let base = self.naga_type(elem, span)?;
                let stride = self.wgsl_stride(elem, base, span)?;
                TypeInner::Array {
                    base,
                    size: naga::ArraySize::Constant(
                        std::num::NonZeroU32::new(*n).expect("arrays are non-empty"),
                    ),
                    stride,
                }
            }
            Type::Struct(id) => self.struct_inner(*id, span)?,
            // A lane's two elements, or the whole matrix
            // (`metal/simdgroup_matrix.rs`).
            Type::SimdgroupMatrix(s)
                if !matches!(
                    s,
                    crate::types::Scalar::Float
                        | crate::types::Scalar::Half
                        | crate::types::Scalar::BFloat
                ) =>
            {
                return Err(Error::coded(
                    Code::InvalidType,
                    span,
                    format!(
                        "`simdgroup_matrix` holds `float`, `half` or `bfloat`, not `{}`",
                        self.program.display(&Type::Scalar(*s))
                    ),
                ));
            }
            Type::SimdgroupMatrix(s) => {
                let storage = crate::lower::metal::simdgroup_matrix::storage_type(
                    *s,
                    self.matrix_fragments(),
                );
                self.global.simdgroup_matrices = true;
                let h = self.naga_type(&storage, span)?;
                self.global.types.handles.insert(ty.clone(), h);
                return Ok(h);
            }
            // atomic_float and atomic_bool live in `atomic<u32>` words
            // (compare-exchange loops and 0/1 values), which every target has.
            // A texel buffer is a storage buffer of words (metal/texel_buffers.rs).
            Type::Texture(t) if t.shape == crate::types::TextureShape::Buffer => TypeInner::Array {
                base: self.naga_type(&Type::UINT, span)?,
                size: naga::ArraySize::Dynamic,
                stride: 4,
            },
            Type::Texture(t) => crate::lower::texture_types::image_inner(t),
            Type::Sampler { comparison } => TypeInner::Sampler {
                comparison: *comparison,
            },
            Type::Packed(s, n) => TypeInner::Vector {
                size: vector_size(*n),
                scalar: self.scalar_used(*s),
            },
            Type::Atomic(s) => TypeInner::Atomic(match s {
                Scalar::Int => naga::Scalar::I32,
                _ => naga::Scalar::U32,
            }),
            Type::Void | Type::Pointer(_) => {
                return Err(Error::coded(
                    Code::InvalidType,
                    span,
                    format!(
                        "`{}` cannot be stored in a variable",
                        self.program.display(ty)
                    ),
                ));
            }
        };
        let name = match ty {
            Type::Struct(id) => Some(self.program.wgsl_struct_name(*id)),
            _ => None,
        };
        let h = self
            .global
            .module
            .types
            .insert(naga::Type { name, inner }, naga::Span::UNDEFINED);
        self.global.types.handles.insert(ty.clone(), h);
        Ok(h)
    }

    fn scalar_used(&mut self, s: Scalar) -> naga::Scalar {
        if matches!(s, Scalar::Long | Scalar::ULong) && !self.narrows_wide_integers() {
            self.global.types.uses_i64 = true;
        }
        if s == Scalar::Half && !self.emulates_half() {
            self.global.types.uses_f16 = true;
        }
        self.naga_scalar(s)
    }

    /// naga's scalar for an MSL scalar in this translation's `half` mode
    /// and target (64-bit integers in 32 bits on WebGPU:
    /// metal/wide_integers.rs).
    pub(in crate::lower) fn naga_scalar(&self, s: Scalar) -> naga::Scalar {
        match s {
            Scalar::Half if self.emulates_half() => naga::Scalar::F32,
            Scalar::Long | Scalar::ULong => self.wide_scalar(s),
            s => scalar(s),
        }
    }

    /// A texture or sampler, or an array or struct holding one: WGSL keeps
    /// these handles out of arrays (but binding arrays) and structs.
    pub(in crate::lower) fn holds_handle(&self, ty: &Type) -> bool {
        (self.program.structs).holds(ty, &|t| {
            matches!(t, Type::Texture(_) | Type::Sampler { .. })
        })
    }

    /// An atomic, or an array or struct holding one: such values live only
    /// in `device` and `threadgroup` memory (they cannot be copied, and
    /// WGSL keeps them out of function variables, arguments and results).
    pub(in crate::lower) fn holds_atomic(&self, ty: &Type) -> bool {
        (self.program.structs).holds(ty, &|t| matches!(t, Type::Atomic(_)))
    }

    /// The error for a `thread` copy (`what`: "variable `x`") of `ty`, which
    /// holds atomics.
    pub(in crate::lower) fn atomic_copy(&self, what: &str, ty: &Type, span: Span) -> Error {
        Error::coded(
            Code::AddressSpace,
            span,
            format!(
                "{what} of type `{}` holds atomics, which live only in `device` or `threadgroup` memory",
                self.program.display(ty)
            ),
        )
        .note("refer to the object with a reference or a pointer instead of copying it")
    }

    /// True if `ty` holds emulated `half` data, whose 4-byte WGSL values
    /// cannot have Metal's 2-byte layout (buffers of it use word views).
    pub(in crate::lower) fn holds_emulated_half(&self, ty: &Type) -> bool {
        self.emulates_half() && layout::uses_scalar(ty, Scalar::Half, &self.program.structs)
    }

    /// A runtime-sized `array<T>` for `T*` buffer arguments.
    pub(in crate::lower) fn runtime_array(
        &mut self,
        elem: &Type,
        span: Span,
    ) -> Result<Handle<naga::Type>> {
        let base = self.naga_type(elem, span)?;
        let stride = self.wgsl_stride(elem, base, span)?;
        Ok(self.global.module.types.insert(
            naga::Type {
                name: None,
                inner: TypeInner::Array {
                    base,
                    size: naga::ArraySize::Dynamic,
                    stride,
                },
            },
            naga::Span::UNDEFINED,
        ))
    }

    /// The array stride: Metal's wherever WGSL's default layout reproduces
    /// it (every type a typed buffer holds), else WGSL's own (word-view
    /// buffers never use these arrays in memory a host sees).
    fn wgsl_stride(&mut self, elem: &Type, base: Handle<naga::Type>, span: Span) -> Result<u32> {
        if self.holds_emulated_half(elem) || self.holds_narrowed_wide(elem) {
            return self.natural_stride(base, span);
        }
        match layout::wgsl(elem, &self.program.structs) {
            Ok(w) => Ok(w.size.div_ceil(w.align) * w.align),
            Err(_) => self.natural_stride(base, span),
        }
    }

    /// The padding plan of struct `id`, when WGSL's default layout can
    /// reproduce Metal's; `None` for structs with packed vectors, bools or
    /// 8/16-bit integers, which buffers hold as words instead.
    pub(in crate::lower) fn plan(&mut self, id: StructId) -> Option<&layout::PaddingPlan> {
        if !self.global.types.plans.contains_key(&id) {
            let ty = Type::Struct(id);
            let plan = match self.holds_emulated_half(&ty) || self.holds_narrowed_wide(&ty) {
                true => None,
                false => layout::padding_plan(id, &self.program.structs).ok(),
            };
            self.global.types.plans.insert(id, plan);
        }
        self.global.types.plans[&id].as_ref()
    }

    fn struct_inner(&mut self, id: StructId, span: Span) -> Result<TypeInner> {
        let def = self.program.structs.get(id).clone();
        if def.is_union {
            return self.union_inner(id, span);
        }
        if self.is_place_struct(&Type::Struct(id)) {
            return Err(self.place_struct_value_error(&Type::Struct(id), span));
        }
        if let Some(m) = def.members.iter().find(|m| self.holds_handle(&m.ty)) {
            return Err(Error::coded(
                Code::Unsupported,
                m.span,
                format!(
                    "struct `{}` holds a texture or sampler (member `{}`): a WGSL struct cannot, and splitting such structs into their members is not supported yet",
                    self.program.struct_name(id),
                    m.name
                ),
            )
            .note("pass the textures and samplers themselves"));
        }
        if def.members.is_empty() {
            // WGSL has no empty structs: one `u32` that nothing reads
            // stands for Metal's one byte (values are `ZeroValue`s).
            let word = self.naga_type(&Type::UINT, span)?;
            return self.natural_struct(vec![(EMPTY_STRUCT_MEMBER.into(), word)], span);
        }
        let Some(plan) = self.plan(id).cloned() else {
            let mut members = Vec::new();
            for m in &def.members {
                members.push((m.name.clone(), self.naga_type(&m.ty, m.span)?));
            }
            return self.natural_struct(members, span);
        };
        let mut members = Vec::new();
        let mut pads = 0;
        for (planned, offset) in &plan.members {
            let (name, ty) = match *planned {
                PlannedMember::Member(i) => {
                    let m = &def.members[i];
                    (m.name.clone(), self.naga_type(&m.ty, m.span)?)
                }
                PlannedMember::Padding(size) => {
                    pads += 1;
                    let ty = if size == 4 {
                        Type::UINT
                    } else {
                        Type::Scalar(Scalar::Half)
                    };
                    (format!("_pad{}", pads - 1), self.naga_type(&ty, span)?)
                }
            };
            members.push(naga::StructMember {
                name: Some(name),
                ty,
                binding: None,
                offset: *offset,
            });
        }
        Ok(TypeInner::Struct {
            members,
            span: plan.size_align.size,
        })
    }

    /// A struct in WGSL's own layout, for values no host sees.
    pub(in crate::lower) fn natural_struct(
        &mut self,
        members: Vec<(String, Handle<naga::Type>)>,
        span: Span,
    ) -> Result<TypeInner> {
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(self.global.module.to_ctx()).map_err(|e| {
            Error::coded(Code::Internal, span, format!("internal error: layout: {e}"))
        })?;
        let (mut cursor, mut align) = (0u32, naga::proc::Alignment::ONE);
        let mut out = Vec::new();
        for (name, ty) in members {
            let l = layouter[ty];
            let offset = l.alignment.round_up(cursor);
            cursor = offset + l.size;
            align = align.max(l.alignment);
            out.push(naga::StructMember {
                name: Some(name),
                ty,
                binding: None,
                offset,
            });
        }
        Ok(TypeInner::Struct {
            members: out,
            span: align.round_up(cursor),
        })
    }

    /// The array stride of WGSL's own layout, for arrays no host sees.
    fn natural_stride(&mut self, base: Handle<naga::Type>, span: Span) -> Result<u32> {
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(self.global.module.to_ctx()).map_err(|e| {
            Error::coded(Code::Internal, span, format!("internal error: layout: {e}"))
        })?;
        Ok(layouter[base].to_stride())
    }

    /// The naga member index of MSL member `index` of struct `id`.
    pub(in crate::lower) fn member_index(&mut self, id: StructId, index: usize) -> u32 {
        self.plan(id).map_or(index as u32, |p| p.wgsl_index(index))
    }
}
