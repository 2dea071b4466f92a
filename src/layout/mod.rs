//! Metal's memory layout (MSL §2.1–2.5: sizes, alignments, struct offsets,
//! array strides) and the plan that reproduces it in WGSL.
//!
//! naga's WGSL writer prints no `@align`/`@size`, so the WGSL text always has
//! WGSL's default layout. [`PaddingPlan`] lists the members, including padding
//! members, whose *default* WGSL layout equals Metal's layout.

use crate::types::{Scalar, StructId, Structs, Type};

pub mod uniform;

/// Size and alignment of a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeAlign {
    /// Size in bytes (a multiple of `align`).
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
}

fn round_up(x: u32, align: u32) -> u32 {
    x.div_ceil(align) * align
}

/// Metal's size of `ty` in bytes, where arrays may pass 4 GiB (what the
/// limits refuse, `threadgroup float a[1u << 31];`, must be measured
/// first).
pub fn metal_bytes(ty: &Type, structs: &Structs) -> u64 {
    match ty {
        Type::Array(elem, n) => metal_bytes(elem, structs).saturating_mul(u64::from(*n)),
        other => u64::from(metal(other, structs).size),
    }
}

/// Metal's size and alignment of `ty` (MSL Tables 2.1–2.5, §2.5).
pub fn metal(ty: &Type, structs: &Structs) -> SizeAlign {
    match ty {
        Type::Void => SizeAlign { size: 0, align: 1 },
        Type::Scalar(s) => SizeAlign {
            size: s.size(),
            align: s.size(),
        },
        Type::Vector(s, n) => {
            // 3-component vectors have the size and alignment of 4-component ones.
            let lanes = if *n == 3 { 4 } else { u32::from(*n) };
            SizeAlign {
                size: lanes * s.size(),
                align: lanes * s.size(),
            }
        }
        Type::Matrix {
            scalar,
            columns,
            rows,
        } => {
            let col = metal(&Type::Vector(*scalar, *rows), structs);
            SizeAlign {
                size: col.size * u32::from(*columns),
                align: col.align,
            }
        }
        Type::Array(elem, n) => {
            let e = metal(elem, structs);
            SizeAlign {
                size: e.size * n,
                align: e.align,
            }
        }
        Type::Struct(id) => struct_layout(*id, structs).size_align,
        Type::Pointer(_) => SizeAlign { size: 8, align: 8 },
        Type::Packed(s, n) => SizeAlign {
            size: s.size() * u32::from(*n),
            align: s.size(),
        },
        // Resources in argument buffers are 8-byte handles (MSL §2.13).
        Type::Texture(_) | Type::Sampler { .. } => SizeAlign { size: 8, align: 8 },
        // Each thread holds two elements of the SIMD group's matrix.
        Type::SimdgroupMatrix(s) => SizeAlign {
            size: 2 * s.size(),
            align: s.size(),
        },
        Type::Atomic(s) => SizeAlign {
            size: s.size(),
            align: s.size(),
        },
    }
}

/// A struct's Metal layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructLayout {
    /// Byte offset of each member, in declaration order.
    pub offsets: Vec<u32>,
    /// The struct's size and alignment.
    pub size_align: SizeAlign,
}

/// Metal's (C++ standard, Itanium ABI) layout of struct `id`.
pub fn struct_layout(id: StructId, structs: &Structs) -> StructLayout {
    if structs.get(id).is_union {
        return union_layout(id, structs);
    }
    let (offsets, data_size, align) = data_layout(id, structs);
    let align = align.max(structs.get(id).min_align);
    StructLayout {
        offsets,
        size_align: SizeAlign {
            size: round_up(data_size.max(1), align),
            align,
        },
    }
}

/// Struct `id`'s member offsets, its data size (the end of its last
/// member: its size without tail padding) and its alignment. A base
/// subobject (Itanium C++ ABI §2.4 II.2-3) that is not POD for the purpose
/// of layout ends at its data size, so the next member may start in its
/// tail padding; a POD base (and any other member) ends at its full size.
fn data_layout(id: StructId, structs: &Structs) -> (Vec<u32>, u32, u32) {
    let mut offsets = Vec::new();
    let mut cursor = 0;
    let mut align = 1;
    let packed = structs.get(id).packed;
    for m in &structs.get(id).members {
        let mut sa = metal(&m.ty, structs);
        if packed {
            sa.align = 1;
        }
        let at = round_up(cursor, sa.align);
        offsets.push(at);
        cursor = at + sa.size;
        if let Type::Struct(base) = m.ty {
            let def = structs.get(base);
            if crate::syntax::ast::is_base_member(&m.name) && !def.pod && !def.is_union {
                cursor = at + data_layout(base, structs).1;
            }
        }
        align = align.max(sa.align);
    }
    (offsets, cursor, align)
}

/// A union's layout (C++ [class.union]): every member at offset 0, the
/// size the largest member's rounded up to the largest alignment.
fn union_layout(id: StructId, structs: &Structs) -> StructLayout {
    let members = &structs.get(id).members;
    let (size, align) = members.iter().fold((1, 1), |(size, align), m| {
        let sa = metal(&m.ty, structs);
        (size.max(sa.size), align.max(sa.align))
    });
    StructLayout {
        offsets: vec![0; members.len()],
        size_align: SizeAlign {
            size: round_up(size, align),
            align,
        },
    }
}

/// The number of 32-bit words that hold a union of Metal size `size`
/// outside buffers (a value, or storage of its own).
pub fn union_words(size: u32) -> u32 {
    size.div_ceil(4)
}

/// WGSL's default size and alignment of the type `ty` lowers to, with
/// structs laid out by their [`PaddingPlan`].
pub fn wgsl(ty: &Type, structs: &Structs) -> Result<SizeAlign, Unrepresentable> {
    Ok(match ty {
        Type::Scalar(s) | Type::Vector(s, _)
            if matches!(
                s,
                Scalar::Bool
                    | Scalar::Char
                    | Scalar::UChar
                    | Scalar::Short
                    | Scalar::UShort
                    | Scalar::BFloat
            ) =>
        {
            return Err(Unrepresentable { member: None })
        }
        Type::Scalar(s) => SizeAlign {
            size: s.size(),
            align: s.size(),
        },
        Type::Vector(s, n) => {
            let size = u32::from(*n) * s.size();
            let align = if *n == 2 { size } else { 4 * s.size() };
            SizeAlign { size, align }
        }
        Type::Matrix {
            scalar,
            columns,
            rows,
        } => {
            let col = wgsl(&Type::Vector(*scalar, *rows), structs)?;
            SizeAlign {
                size: round_up(col.size, col.align) * u32::from(*columns),
                align: col.align,
            }
        }
        Type::Array(elem, n) => {
            let e = wgsl(elem, structs)?;
            SizeAlign {
                size: round_up(e.size, e.align) * n,
                align: e.align,
            }
        }
        // Unions are words, read and written through word views.
        Type::Struct(id) if structs.get(*id).is_union => {
            return Err(Unrepresentable { member: None })
        }
        Type::Struct(id) => padding_plan(*id, structs)?.size_align,
        // Atomics lower to 32-bit words.
        Type::Atomic(_) => SizeAlign { size: 4, align: 4 },
        Type::Texture(_) | Type::Sampler { .. } | Type::SimdgroupMatrix(_) => {
            return Err(Unrepresentable { member: None })
        }
        // 8/16-bit integers and bools are held in 32 bits, packed vectors as
        // aligned vectors: neither has Metal's layout in WGSL.
        Type::Packed(..) => return Err(Unrepresentable { member: None }),
        Type::Void | Type::Pointer(_) => return Err(Unrepresentable { member: None }),
    })
}

/// One member of the WGSL struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlannedMember {
    /// The MSL member with this index.
    Member(usize),
    /// A padding member of this many bytes (4: `u32`, 2: `f16`).
    Padding(u32),
}

/// The WGSL member list that reproduces a struct's Metal layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaddingPlan {
    /// Members in order, with their WGSL (= Metal) offsets.
    pub members: Vec<(PlannedMember, u32)>,
    /// Size (equal to Metal's) and WGSL's alignment (its members' largest:
    /// Metal's may be larger, and then every offset and stride that Metal
    /// aligns to it is padded to in WGSL).
    pub size_align: SizeAlign,
}

impl PaddingPlan {
    /// The WGSL member index of MSL member `index`.
    pub fn wgsl_index(&self, index: usize) -> u32 {
        self.members
            .iter()
            .position(|(m, _)| *m == PlannedMember::Member(index))
            .expect("every MSL member is planned") as u32
    }
}

/// A Metal layout that WGSL's default layout cannot reproduce by padding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unrepresentable {
    /// The offending member's index, if it is one member.
    pub member: Option<usize>,
}

/// Plans struct `id`: walks the members with a WGSL cursor and inserts
/// padding wherever WGSL would place a member before Metal does.
pub fn padding_plan(id: StructId, structs: &Structs) -> Result<PaddingPlan, Unrepresentable> {
    if structs.get(id).is_union {
        return Err(Unrepresentable { member: None });
    }
    let layout = struct_layout(id, structs);
    let def = structs.get(id);
    let mut members = Vec::new();
    let mut cursor = 0u32;
    // WGSL's alignment of the struct: its members' largest, which may be
    // below Metal's (`aligned(256)`, bit-fields' declared types).
    let mut wgsl_align = 1;
    for (i, m) in def.members.iter().enumerate() {
        let w = wgsl(&m.ty, structs).map_err(|_| Unrepresentable { member: Some(i) })?;
        let target = layout.offsets[i];
        pad(&mut members, &mut cursor, target, w.align)
            .ok_or(Unrepresentable { member: Some(i) })?;
        members.push((PlannedMember::Member(i), target));
        cursor = target + w.size;
        wgsl_align = wgsl_align.max(w.align);
    }
    let sa = SizeAlign {
        size: layout.size_align.size,
        align: wgsl_align,
    };
    // Tail: WGSL rounds the size up to the alignment; pad until that lands on Metal's size.
    while round_up(cursor, sa.align) < sa.size {
        let step = if cursor.is_multiple_of(4) && sa.size - cursor >= 4 {
            4
        } else {
            2
        };
        if !cursor.is_multiple_of(step) {
            return Err(Unrepresentable { member: None });
        }
        members.push((PlannedMember::Padding(step), cursor));
        cursor += step;
    }
    if round_up(cursor, sa.align) != sa.size {
        return Err(Unrepresentable { member: None });
    }
    Ok(PaddingPlan {
        members,
        size_align: sa,
    })
}

/// Pads from `cursor` until a member of WGSL alignment `align` lands on
/// `target`; `None` when padding of 4- and 2-byte members cannot.
pub fn pad(
    members: &mut Vec<(PlannedMember, u32)>,
    cursor: &mut u32,
    target: u32,
    align: u32,
) -> Option<()> {
    while round_up(*cursor, align) < target {
        let step = if cursor.is_multiple_of(4) && target - *cursor >= 4 {
            4
        } else if cursor.is_multiple_of(2) && target - *cursor >= 2 {
            2
        } else {
            return None;
        };
        members.push((PlannedMember::Padding(step), *cursor));
        *cursor += step;
    }
    (round_up(*cursor, align) == target).then_some(())
}

/// True if the type (or a member of it) is `half`, so padding may use `f16`.
pub fn uses_scalar(ty: &Type, scalar: Scalar, structs: &Structs) -> bool {
    structs.holds(ty, &|t| t.element_scalar() == Some(scalar))
}

#[cfg(test)]
mod tests;
