//! Whether a WGSL type may be the type of a `var<uniform>`.
//!
//! The WGSL spec's "Address Space Layout Constraints" add to the default
//! layout, for the `uniform` address space only:
//!
//! - `RequiredAlignOf(array<E, N>, uniform)` is `roundUp(16, AlignOf(E))`,
//!   so an array's stride must be a multiple of 16;
//! - `RequiredAlignOf(S, uniform)` of a struct is `roundUp(16, AlignOf(S))`,
//!   so a struct member must be at an offset that is a multiple of 16;
//! - after a struct member of type `S`, the next member must start at
//!   least `roundUp(16, SizeOf(S))` bytes later;
//! - the type must have a fixed size (no runtime-sized array), and no
//!   atomics (those live in `storage` and `workgroup` only).
//!
//! naga's validator checks the same rules (`valid::type`, `uniform_layout`);
//! this check runs before the global exists, so that a buffer whose Metal
//! layout breaks a rule stays `var<storage, read>` instead.
//!
//! WebGPU also limits a uniform binding to `maxUniformBufferBindingSize`
//! bytes, 65 536 by default ([`MAX_UNIFORM_BYTES`]).

use naga::{ArraySize, Handle, Module, Type, TypeInner};

/// Which `constant` buffers become `var<uniform>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UniformLayout {
    /// Those whose Metal layout meets WGSL's uniform layout rules.
    #[default]
    Wgsl,
    /// Every fixed-size one: assumes the `uniform_buffer_standard_layout`
    /// language extension (Chromium 144 and later), under which uniforms
    /// have the storage layout.
    Standard,
    /// None: every buffer is `var<storage>`.
    None,
}

/// WebGPU's default `maxUniformBufferBindingSize`.
pub const MAX_UNIFORM_BYTES: u32 = 64 << 10;

/// Why a type cannot be a uniform's type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotUniform {
    /// It holds a runtime-sized array.
    Unsized,
    /// It holds an atomic (or a type no buffer may hold).
    NotShareable,
    /// An array whose stride is not a multiple of its uniform alignment.
    ArrayStride {
        /// The stride in bytes.
        stride: u32,
    },
    /// A struct member not at a multiple of its uniform alignment, or too
    /// close after a struct member.
    MemberOffset {
        /// The member's (WGSL) index.
        index: u32,
        /// Its offset.
        offset: u32,
    },
    /// Larger than [`MAX_UNIFORM_BYTES`].
    TooLarge {
        /// The type's size.
        size: u32,
    },
    /// It holds a matrix of 2-row columns (`float2x2`, `float3x2`,
    /// `float4x2`), which WGSL allows in uniforms but wgpu's GL backend
    /// reads with std140's 16-byte column stride instead of WGSL's 8
    /// (TESTING.md "Backends"; [`check_on_every_backend`] only).
    TwoRowMatrix,
}

impl std::fmt::Display for NotUniform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotUniform::Unsized => write!(f, "its size is not fixed"),
            NotUniform::NotShareable => write!(f, "it holds atomics"),
            NotUniform::ArrayStride { stride } => {
                write!(f, "an array stride of {stride} bytes is not a multiple of 16")
            }
            NotUniform::MemberOffset { index, offset } => write!(
                f,
                "member {index} at offset {offset} breaks the uniform alignment rules"
            ),
            NotUniform::TooLarge { size } => write!(
                f,
                "its {size} bytes are over WebGPU's default uniform binding size ({MAX_UNIFORM_BYTES} bytes)"
            ),
            NotUniform::TwoRowMatrix => write!(
                f,
                "it holds a matrix of 2-row columns, which wgpu's GL backend reads with std140 strides"
            ),
        }
    }
}

/// Checks that `ty` of `module` may be a `var<uniform>`'s type, under the
/// uniform layout rules (`standard` false) or with the
/// `uniform_buffer_standard_layout` language extension (`standard` true:
/// only a fixed size, no atomics and the size limit remain).
pub fn check(module: &Module, ty: Handle<Type>, standard: bool) -> Result<(), NotUniform> {
    uniform_align(module, ty, standard)?;
    let size = module.types[ty].inner.size(module.to_ctx());
    if size > MAX_UNIFORM_BYTES {
        return Err(NotUniform::TooLarge { size });
    }
    Ok(())
}

/// [`check`], and under WGSL's uniform layout rules (`standard` false)
/// also no matrix of 2-row columns: what makes a `constant` buffer a
/// uniform. naga's GLSL writer declares uniforms `layout(std140)`, whose
/// `mat2`/`mat3x2`/`mat4x2` columns are 16 bytes apart, not 8 as in WGSL,
/// so wgpu's GL backend would read such a uniform at the wrong offsets
/// (`tests/gl_known_defects.rs`,
/// `uniform_matrices_of_two_row_columns_take_std140_strides`); in
/// read-only storage (std430) the offsets agree. Under the standard
/// layout (browsers only: wgpu has no such extension) Dawn lays them out
/// right.
pub fn check_on_every_backend(
    module: &Module,
    ty: Handle<Type>,
    standard: bool,
) -> Result<(), NotUniform> {
    check(module, ty, standard)?;
    if !standard && holds_two_row_matrix(module, ty) {
        return Err(NotUniform::TwoRowMatrix);
    }
    Ok(())
}

/// True if `ty` is or holds a matrix whose columns have 2 rows.
fn holds_two_row_matrix(module: &Module, ty: Handle<Type>) -> bool {
    match &module.types[ty].inner {
        TypeInner::Matrix { rows, .. } => *rows == naga::VectorSize::Bi,
        TypeInner::Array { base, .. } => holds_two_row_matrix(module, *base),
        TypeInner::Struct { members, .. } => {
            members.iter().any(|m| holds_two_row_matrix(module, m.ty))
        }
        _ => false,
    }
}

/// `RequiredAlignOf(ty, uniform)` (with `standard`: the storage alignment),
/// or why `ty` cannot be in a uniform.
fn uniform_align(module: &Module, ty: Handle<Type>, standard: bool) -> Result<u32, NotUniform> {
    let min = if standard { 1 } else { 16 };
    match &module.types[ty].inner {
        TypeInner::Scalar(_) | TypeInner::Vector { .. } | TypeInner::Matrix { .. } => {
            Ok(align_of(module, ty))
        }
        TypeInner::Array { base, size, stride } => {
            if !matches!(size, ArraySize::Constant(_)) {
                return Err(NotUniform::Unsized);
            }
            let align = uniform_align(module, *base, standard)?.max(min);
            if !stride.is_multiple_of(align) {
                return Err(NotUniform::ArrayStride { stride: *stride });
            }
            Ok(align)
        }
        TypeInner::Struct { members, .. } => {
            let mut align = min;
            let mut after_struct: Option<u32> = None;
            for (i, m) in members.iter().enumerate() {
                let member_align = uniform_align(module, m.ty, standard)?;
                let too_close = after_struct.is_some_and(|end| m.offset < end);
                if !m.offset.is_multiple_of(member_align) || too_close {
                    return Err(NotUniform::MemberOffset {
                        index: i as u32,
                        offset: m.offset,
                    });
                }
                align = align.max(member_align);
                after_struct = match &module.types[m.ty].inner {
                    TypeInner::Struct { span, .. } if !standard => {
                        Some(m.offset + span.next_multiple_of(16))
                    }
                    _ => None,
                };
            }
            Ok(align)
        }
        _ => Err(NotUniform::NotShareable),
    }
}

/// WGSL's `AlignOf` of a scalar, vector or matrix.
fn align_of(module: &Module, ty: Handle<Type>) -> u32 {
    let vector = |size: naga::VectorSize, width: u8| {
        let lanes = match size {
            naga::VectorSize::Bi => 2,
            _ => 4,
        };
        lanes * u32::from(width)
    };
    match module.types[ty].inner {
        TypeInner::Scalar(s) => u32::from(s.width),
        TypeInner::Vector { size, scalar } => vector(size, scalar.width),
        TypeInner::Matrix { rows, scalar, .. } => vector(rows, scalar.width),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naga::{Scalar, Span, StructMember};

    fn add(module: &mut Module, inner: TypeInner) -> Handle<Type> {
        module
            .types
            .insert(Type { name: None, inner }, Span::UNDEFINED)
    }

    fn array(module: &mut Module, base: Handle<Type>, n: u32, stride: u32) -> Handle<Type> {
        let size = ArraySize::Constant(std::num::NonZeroU32::new(n).unwrap());
        add(module, TypeInner::Array { base, size, stride })
    }

    fn member(ty: Handle<Type>, offset: u32) -> StructMember {
        StructMember {
            name: None,
            ty,
            binding: None,
            offset,
        }
    }

    #[test]
    fn float_arrays_need_16_byte_strides() {
        let mut m = Module::default();
        let f = add(&mut m, TypeInner::Scalar(Scalar::F32));
        let tight = array(&mut m, f, 4, 4);
        assert_eq!(
            check(&m, tight, false),
            Err(NotUniform::ArrayStride { stride: 4 })
        );
        assert_eq!(check(&m, tight, true), Ok(()));
        let v4 = add(
            &mut m,
            TypeInner::Vector {
                size: naga::VectorSize::Quad,
                scalar: Scalar::F32,
            },
        );
        let wide = array(&mut m, v4, 4, 16);
        assert_eq!(check(&m, wide, false), Ok(()));
        assert_eq!(check(&m, f, false), Ok(()));
    }

    #[test]
    fn members_after_structs_and_struct_offsets() {
        let mut m = Module::default();
        let f = add(&mut m, TypeInner::Scalar(Scalar::F32));
        let inner = add(
            &mut m,
            TypeInner::Struct {
                members: vec![member(f, 0)],
                span: 4,
            },
        );
        // `{ float a; Inner b; }`: `b` at 4 is not 16-aligned.
        let unaligned = add(
            &mut m,
            TypeInner::Struct {
                members: vec![member(f, 0), member(inner, 4)],
                span: 8,
            },
        );
        let err = NotUniform::MemberOffset {
            index: 1,
            offset: 4,
        };
        assert_eq!(check(&m, unaligned, false), Err(err));
        // `{ Inner b; float a; }`: `a` at 4 is closer than 16 after `b`.
        let close = add(
            &mut m,
            TypeInner::Struct {
                members: vec![member(inner, 0), member(f, 4)],
                span: 8,
            },
        );
        assert!(check(&m, close, false).is_err());
        assert_eq!(check(&m, close, true), Ok(()));
        let spaced = add(
            &mut m,
            TypeInner::Struct {
                members: vec![member(inner, 0), member(f, 16)],
                span: 20,
            },
        );
        assert_eq!(check(&m, spaced, false), Ok(()));
    }

    #[test]
    fn two_row_matrices_stay_out_of_uniforms_on_every_backend() {
        let mut m = Module::default();
        let matrix = |columns, rows| TypeInner::Matrix {
            columns,
            rows,
            scalar: Scalar::F32,
        };
        use naga::VectorSize::{Bi, Quad, Tri};
        let m2x2 = add(&mut m, matrix(Bi, Bi));
        let m4x2 = add(&mut m, matrix(Quad, Bi));
        let m2x4 = add(&mut m, matrix(Bi, Quad));
        let m3x3 = add(&mut m, matrix(Tri, Tri));
        let arr = array(&mut m, m2x2, 4, 16);
        let held = add(
            &mut m,
            TypeInner::Struct {
                members: vec![member(m3x3, 0), member(arr, 48)],
                span: 112,
            },
        );
        for ty in [m2x2, m4x2, arr, held] {
            // WGSL allows them; the GL backend would read them wrong.
            assert_eq!(check(&m, ty, false), Ok(()));
            let err = Err(NotUniform::TwoRowMatrix);
            assert_eq!(check_on_every_backend(&m, ty, false), err);
            assert_eq!(check_on_every_backend(&m, ty, true), Ok(()));
        }
        for ty in [m2x4, m3x3] {
            assert_eq!(check_on_every_backend(&m, ty, false), Ok(()));
        }
    }

    #[test]
    fn size_limit_and_unsized() {
        let mut m = Module::default();
        let v4 = add(
            &mut m,
            TypeInner::Vector {
                size: naga::VectorSize::Quad,
                scalar: Scalar::F32,
            },
        );
        let big = array(&mut m, v4, 4097, 16);
        assert_eq!(
            check(&m, big, false),
            Err(NotUniform::TooLarge { size: 65552 })
        );
        let fits = array(&mut m, v4, 4096, 16);
        assert_eq!(check(&m, fits, false), Ok(()));
        let runtime = add(
            &mut m,
            TypeInner::Array {
                base: v4,
                size: ArraySize::Dynamic,
                stride: 16,
            },
        );
        assert_eq!(check(&m, runtime, false), Err(NotUniform::Unsized));
    }
}
