//! `__attribute__((packed))` and `__attribute__((aligned(N)))` on structs,
//! data members and typedefs.
//!
//! The translator reproduces Metal's natural layout ([`crate::layout`]).
//! These attributes are accepted where Metal's layout with them has the
//! same member offsets and sizes: `aligned(N)` on a member no larger than
//! the natural alignment (GCC's rule on structs and members: it only raises
//! alignment), `aligned(N)` of any size on a struct (it raises the struct's
//! alignment and size, [`crate::types::StructDef::min_align`], and moves no
//! member), `aligned(N)` or `alignas(N)` on a member that moves no member
//! (it raises the struct's alignment as `aligned(N)` on the struct does),
//! and `packed` on a struct without padding. `packed` still lowers such a
//! struct's alignment to 1, which moves nothing inside it but can move it
//! inside another struct; [`Program::true_align`] remembers that alignment,
//! so that every struct containing one is checked the same way and
//! `alignof` gives Metal's value. Anything else is refused where it is
//! written (E0401).

use super::consteval;
use super::{Error, Program, Result};
use crate::diagnostics::Code;
use crate::layout;
use crate::syntax::ast::{self, LayoutAttribute};
use crate::types::{StructId, Type};

fn round_up(x: u32, align: u32) -> u32 {
    x.div_ceil(align) * align
}

/// What a port writes instead of a `packed` layout that puts a scalar off
/// its boundary (`packs_without_misaligned_scalars` accepts the others).
const PACKED_PORT: &str = "a port does this instead: add padding members (`char pad[3];`) so that each member starts at a multiple of its scalars' size and the struct's size is a multiple of the largest: such packed layouts are translated";

fn unsupported(span: crate::source_map::Span, message: String) -> Error {
    Error::coded(Code::Unsupported, span, message)
}

impl Program<'_> {
    /// Metal's alignment of `ty`, with `packed` structs (and structs
    /// holding them) at their real alignment.
    pub fn true_align(&self, ty: &Type) -> u32 {
        match ty {
            Type::Struct(id) => match self.struct_align.get(id) {
                Some(a) => *a,
                None => layout::metal(ty, &self.structs).align,
            },
            Type::Array(elem, _) => self.true_align(elem),
            _ => layout::metal(ty, &self.structs).align,
        }
    }

    /// The value of `aligned(N)`: a power of two; `aligned` alone is
    /// refused (its value is the target's largest alignment).
    fn alignment_value(&self, attr: &LayoutAttribute) -> Result<Option<u32>> {
        let LayoutAttribute::Aligned(value, span) = attr else {
            return Ok(None);
        };
        let Some(e) = value else {
            return Err(unsupported(
                *span,
                "`aligned` without an alignment is not supported; write `aligned(N)`".into(),
            ));
        };
        let n = consteval::eval(self, e)?
            .as_int()
            .filter(|n| *n > 0 && (*n as u64).is_power_of_two() && *n <= 1 << 28)
            .ok_or_else(|| {
                Error::coded(
                    Code::InvalidAttribute,
                    e.span,
                    "the alignment must be a power of two",
                )
            })?;
        Ok(Some(n as u32))
    }

    /// A typedef's layout attributes: accepted when they leave the type's
    /// alignment as it is (on a typedef `aligned` may lower it too).
    pub(super) fn check_alias_layout(&self, alias: &ast::Alias, ty: &Type) -> Result<()> {
        for attr in &alias.layout {
            let natural = self.true_align(ty);
            let wanted = match attr {
                LayoutAttribute::Packed(_) => 1,
                LayoutAttribute::Aligned(..) => self.alignment_value(attr)?.unwrap_or(natural),
            };
            if wanted != natural {
                return Err(unsupported(
                    attr.span(),
                    format!(
                        "`{}` gives `{}` an alignment of {wanted} bytes instead of {natural}; a typedef that changes alignment is not supported",
                        attr.name(),
                        alias.name.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Checks struct `id` (declared from `decl`) against Metal's layout with
    /// its attributes and its members' real alignments, and records its
    /// real alignment when that differs from the natural one.
    pub(super) fn check_struct_layout(
        &mut self,
        decl: &ast::StructDecl,
        id: StructId,
    ) -> Result<()> {
        self.check_packed_members(decl, id)?;
        let members = &self.structs.get(id).members;
        let holds_realigned = members
            .iter()
            .any(|m| self.true_align(&m.ty) != layout::metal(&m.ty, &self.structs).align);
        if decl.layout.is_empty()
            && !holds_realigned
            && decl.members.iter().all(|m| m.layout.is_empty())
        {
            return Ok(());
        }
        let natural = layout::struct_layout(id, &self.structs);
        let packed = decl
            .layout
            .iter()
            .find(|a| matches!(a, LayoutAttribute::Packed(_)));
        let raised = self.raised_alignment(decl)?;
        if packed.is_some()
            && raised.is_none()
            && decl.members.iter().all(|m| m.layout.is_empty())
            && self.packs_without_misaligned_scalars(id, &natural)
        {
            self.structs.get_mut(id).packed = true;
            return Ok(());
        }
        let (mut cursor, mut align) = (0u32, 1u32);
        for (i, (m, written)) in members.iter().zip(&decl.members).enumerate() {
            let size = layout::metal(&m.ty, &self.structs).size;
            let (a, cause) = self.member_alignment(m, written, packed)?;
            let at = round_up(cursor, a);
            if at != natural.offsets[i] {
                let packed_cause = cause.1 == "`packed`";
                let error = unsupported(
                    cause.0,
                    format!(
                        "{} puts member `{}` of `{}` at offset {at} instead of {}; layouts other than Metal's natural one are not supported",
                        cause.1,
                        m.name,
                        self.struct_name(id),
                        natural.offsets[i]
                    ),
                );
                return Err(if packed_cause {
                    error.note(PACKED_PORT)
                } else {
                    error
                });
            }
            cursor = at + size;
            align = align.max(a);
        }
        if let Some((n, _)) = raised {
            align = align.max(n);
            // `aligned(N)` on the struct itself, above its natural
            // alignment, moves no member: only its size (tail padding) and
            // its place in arrays and other structs change, which the
            // layout takes from `min_align` and the WGSL padding plan
            // reproduces with padding members.
            if n > natural.size_align.align && packed.is_none() {
                let def = self.structs.get_mut(id);
                def.min_align = def.min_align.max(n);
                return Ok(());
            }
        }
        // A member's `aligned(N)` (or `alignas(N)`, SPIR-V Cross's
        // `spvPaddedStd140<T>`) that moves no member (checked above) but
        // raises the struct's alignment acts as `aligned(N)` on the struct:
        // only the tail padding grows.
        if align > natural.size_align.align && packed.is_none() {
            let def = self.structs.get_mut(id);
            def.min_align = def.min_align.max(align);
            return Ok(());
        }
        let size = round_up(cursor.max(1), align);
        if size != natural.size_align.size {
            let (span, what) = match (raised, packed) {
                (Some((n, span)), _) if n > natural.size_align.align => {
                    (span, format!("`aligned({n})`"))
                }
                (_, Some(p)) => (p.span(), "`packed`".to_string()),
                _ => (decl.name.span, "a member type's alignment".to_string()),
            };
            let error = unsupported(
                span,
                format!(
                    "{what} makes `{}` {size} bytes instead of {}; layouts other than Metal's natural one are not supported",
                    self.struct_name(id),
                    natural.size_align.size
                ),
            );
            return Err(match packed {
                Some(_) if raised.is_none() => error.note(PACKED_PORT),
                _ => error,
            });
        }
        if align != natural.size_align.align {
            self.struct_align.insert(id, align);
        }
        Ok(())
    }

    /// Refuses a member of a packed struct type (aligned to 1 byte, so
    /// placed right after the member before it) whose scalars then
    /// straddle their natural boundaries: `struct B { char c; P p; };`.
    fn check_packed_members(&self, decl: &ast::StructDecl, id: StructId) -> Result<()> {
        fn packed_struct(ty: &Type, structs: &crate::types::Structs) -> Option<StructId> {
            match ty {
                Type::Struct(s) if structs.get(*s).packed => Some(*s),
                Type::Array(elem, _) => packed_struct(elem, structs),
                _ => None,
            }
        }
        let def = self.structs.get(id);
        if !def
            .members
            .iter()
            .any(|m| packed_struct(&m.ty, &self.structs).is_some())
        {
            return Ok(());
        }
        let natural = layout::struct_layout(id, &self.structs);
        for ((m, written), at) in def.members.iter().zip(&decl.members).zip(&natural.offsets) {
            let (Some(inner), Some(unit)) =
                (packed_struct(&m.ty, &self.structs), self.scalar_unit(&m.ty))
            else {
                continue;
            };
            if !at.is_multiple_of(unit) {
                return Err(unsupported(
                    written.name.span,
                    format!(
                        "member `{}` of `{}` is at offset {at}, where the {unit}-byte scalars of the packed struct `{}` (aligned to 1 byte) would straddle their natural boundaries; such layouts are not supported",
                        m.name,
                        self.struct_name(id),
                        self.struct_name(inner),
                    ),
                )
                .note("a port does this instead: move the member to an offset that is a multiple of its largest scalar's size, or pad before it"));
            }
        }
        Ok(())
    }

    /// Whether `packed` on struct `id` (and nothing else) gives it a layout
    /// other than its natural one (`natural`) in which every member still
    /// starts at a multiple of its scalars' size: the members follow one
    /// another without padding (a `float4` after a `float2` at offset 8, a
    /// struct of 24 bytes rather than 32). Buffers of such structs are read
    /// and written through word views, as any layout WGSL cannot declare
    /// (`crate::lower::metal::word_views`); a scalar across a word boundary
    /// (`char c; float x;` packed: `x` at offset 1), or that an array of the
    /// struct would put there (`float x; char c;`: 5 bytes), stays refused.
    fn packs_without_misaligned_scalars(
        &self,
        id: StructId,
        natural: &layout::StructLayout,
    ) -> bool {
        let def = self.structs.get(id);
        if def.is_union {
            return false;
        }
        let (mut cursor, mut largest) = (0u32, 1u32);
        let mut offsets = Vec::new();
        for m in &def.members {
            let Some(unit) = self.scalar_unit(&m.ty) else {
                return false;
            };
            if !cursor.is_multiple_of(unit) {
                return false;
            }
            offsets.push(cursor);
            cursor += layout::metal(&m.ty, &self.structs).size;
            largest = largest.max(unit);
        }
        // In an array, the next element starts at `cursor`: its scalars too
        // must stay on their boundaries.
        cursor.is_multiple_of(largest)
            && (offsets != natural.offsets || cursor.max(1) != natural.size_align.size)
    }

    /// The size of the largest scalar in `ty` (the alignment a member of
    /// it needs so that no scalar straddles its natural boundary); `None`
    /// for types that are not plain data.
    fn scalar_unit(&self, ty: &Type) -> Option<u32> {
        match ty {
            Type::Scalar(s) | Type::Vector(s, _) | Type::Packed(s, _) | Type::Atomic(s) => {
                Some(s.size())
            }
            Type::Matrix { scalar, .. } => Some(scalar.size()),
            Type::Array(elem, _) => self.scalar_unit(elem),
            Type::Struct(id) => self
                .structs
                .get(*id)
                .members
                .iter()
                .try_fold(1, |unit, m| Some(unit.max(self.scalar_unit(&m.ty)?))),
            _ => None,
        }
    }

    /// The largest `aligned(N)` written on the struct itself, and where.
    fn raised_alignment(
        &self,
        decl: &ast::StructDecl,
    ) -> Result<Option<(u32, crate::source_map::Span)>> {
        let mut raised = None;
        for attr in &decl.layout {
            if let Some(n) = self.alignment_value(attr)? {
                if raised.is_none_or(|(m, _)| n > m) {
                    raised = Some((n, attr.span()));
                }
            }
        }
        Ok(raised)
    }

    /// The alignment of member `m` (declared as `written`) under the layout
    /// attributes (the struct's `packed`, the member's own), and what set
    /// it, for messages.
    fn member_alignment(
        &self,
        m: &crate::types::MemberDef,
        written: &ast::Member,
        packed: Option<&LayoutAttribute>,
    ) -> Result<(u32, (crate::source_map::Span, String))> {
        let mut a = self.true_align(&m.ty);
        // What set `a`, for the message.
        let mut cause = if a != layout::metal(&m.ty, &self.structs).align {
            (
                written.ty.span,
                format!("`{}` (aligned to {a} bytes)", written.ty.name()),
            )
        } else {
            (written.name.span, String::new())
        };
        if let Some(p) = packed {
            a = 1;
            cause = (p.span(), "`packed`".into());
        }
        for attr in written
            .layout
            .iter()
            .filter(|a| matches!(a, LayoutAttribute::Packed(_)))
        {
            a = 1;
            cause = (attr.span(), "`packed`".into());
        }
        for attr in &written.layout {
            if let Some(n) = self.alignment_value(attr)? {
                if n > a {
                    a = n;
                    cause = (attr.span(), format!("`aligned({n})`"));
                }
            }
        }
        Ok((a, cause))
    }
}
