//! MSL types → naga types. Structs get the padding members of their
//! [`crate::layout::PaddingPlan`], so their default WGSL layout is Metal's.

use super::{Error, Lowerer, Result};
use crate::layout::{self, PlannedMember};
use crate::source_map::Span;
use crate::types::{Scalar, StructId, Type};
use naga::{Handle, TypeInner};
use std::collections::HashMap;

/// Caches the naga handle of each MSL type.
#[derive(Default)]
pub(super) struct TypeCache {
    handles: HashMap<Type, Handle<naga::Type>>,
    plans: HashMap<StructId, layout::PaddingPlan>,
    pub(super) uses_f16: bool,
}

/// naga's scalar for an MSL scalar (only the supported ones reach here).
pub(super) fn scalar(s: Scalar) -> naga::Scalar {
    match s {
        Scalar::Bool => naga::Scalar::BOOL,
        // 8- and 16-bit integers are held sign- or zero-extended in 32 bits
        // (naga has no 8-bit integers; 16-bit ones need a native feature).
        Scalar::Int | Scalar::Char | Scalar::Short => naga::Scalar::I32,
        Scalar::UInt | Scalar::UChar | Scalar::UShort => naga::Scalar::U32,
        Scalar::Half => naga::Scalar::F16,
        Scalar::Float => naga::Scalar::F32,
        other => unreachable!("scalar {other:?} is refused by sema"),
    }
}

pub(super) fn vector_size(n: u8) -> naga::VectorSize {
    match n {
        2 => naga::VectorSize::Bi,
        3 => naga::VectorSize::Tri,
        _ => naga::VectorSize::Quad,
    }
}

impl Lowerer<'_, '_> {
    /// The naga type of `ty`.
    pub(super) fn naga_type(&mut self, ty: &Type, span: Span) -> Result<Handle<naga::Type>> {
        if let Some(h) = self.types.handles.get(ty) {
            return Ok(*h);
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
            Type::Array(elem, n) => {
                let base = self.naga_type(elem, span)?;
                let stride = self.wgsl_stride(elem, span)?;
                TypeInner::Array {
                    base,
                    size: naga::ArraySize::Constant(
                        std::num::NonZeroU32::new(*n).expect("arrays are non-empty"),
                    ),
                    stride,
                }
            }
            Type::Struct(id) => self.struct_inner(*id, span)?,
            // atomic_float and atomic_bool live in `atomic<u32>` words
            // (compare-exchange loops and 0/1 values), which every target has.
            Type::Atomic(s) => TypeInner::Atomic(match s {
                Scalar::Int => naga::Scalar::I32,
                _ => naga::Scalar::U32,
            }),
            Type::Void | Type::Pointer(_) => {
                return Err(Error::new(
                    span,
                    format!(
                        "`{}` cannot be stored in a variable",
                        self.program.display(ty)
                    ),
                ));
            }
        };
        let name = match ty {
            Type::Struct(id) => Some(self.program.struct_name(*id).to_string()),
            _ => None,
        };
        let h = self
            .module
            .types
            .insert(naga::Type { name, inner }, naga::Span::UNDEFINED);
        self.types.handles.insert(ty.clone(), h);
        Ok(h)
    }

    fn scalar_used(&mut self, s: Scalar) -> naga::Scalar {
        if s == Scalar::Half {
            self.types.uses_f16 = true;
        }
        scalar(s)
    }

    /// A runtime-sized `array<T>` for `T*` buffer arguments.
    pub(super) fn runtime_array(&mut self, elem: &Type, span: Span) -> Result<Handle<naga::Type>> {
        let base = self.naga_type(elem, span)?;
        let stride = self.wgsl_stride(elem, span)?;
        Ok(self.module.types.insert(
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

    /// The array stride, checked to be Metal's.
    fn wgsl_stride(&mut self, elem: &Type, span: Span) -> Result<u32> {
        if super::narrow::contains_narrow(elem) {
            // Only in function or threadgroup memory, where no host sees the
            // layout: the stride of the 32-bit representation.
            let w = elem
                .vector_size()
                .map(|n| if n == 3 { 16 } else { 4 * u32::from(n) });
            return w.ok_or_else(|| Error::new(span, "arrays of this type are not supported yet"));
        }
        let structs = &self.program.structs;
        let w = layout::wgsl(elem, structs)
            .map_err(|_| Error::new(span, "this type cannot be an array element"))?;
        let m = layout::metal(elem, structs);
        let stride = w.size.div_ceil(w.align) * w.align;
        if stride != m.size {
            return Err(Error::new(
                span,
                format!(
                    "`{}` arrays have no WGSL equivalent of Metal's stride",
                    self.program.display(elem)
                ),
            ));
        }
        Ok(stride)
    }

    /// The padding plan of struct `id`.
    pub(super) fn plan(&mut self, id: StructId, span: Span) -> Result<&layout::PaddingPlan> {
        if !self.types.plans.contains_key(&id) {
            let plan = layout::padding_plan(id, &self.program.structs).map_err(|e| {
                let def = self.program.structs.get(id);
                let what = match e.member {
                    Some(i) => format!("member `{}` of `{}`", def.members[i].name, def.name),
                    None => format!("struct `{}`", def.name),
                };
                Error::new(
                    span,
                    format!("the Metal layout of {what} cannot be expressed in WGSL"),
                )
            })?;
            self.types.plans.insert(id, plan);
        }
        Ok(&self.types.plans[&id])
    }

    fn struct_inner(&mut self, id: StructId, span: Span) -> Result<TypeInner> {
        let plan = self.plan(id, span)?.clone();
        let def = self.program.structs.get(id).clone();
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

    /// The naga member index of MSL member `index` of struct `id`.
    pub(super) fn member_index(&mut self, id: StructId, index: usize, span: Span) -> Result<u32> {
        Ok(self.plan(id, span)?.wgsl_index(index))
    }
}
