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

/// What a port writes instead of `packed` on a struct of vectors: packed
/// vectors are aligned to their scalar (MSL §2.2.3), so the natural layout
/// of the struct written with them is the packed one.
const PACKED_PORT: &str = "a port does this instead: declare its vector members as packed vectors (`packed_float4` for `float4`, `packed_half3` for `half3`): aligned to their scalar, they give the struct this layout without `packed` wherever each member's offset is a multiple of its scalar's size";

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
        let (mut cursor, mut align) = (0u32, 1u32);
        for (i, (m, written)) in members.iter().zip(&decl.members).enumerate() {
            let size = layout::metal(&m.ty, &self.structs).size;
            let (a, cause) = self.member_alignment(m, written, packed)?;
            let at = round_up(cursor, a);
            if at != natural.offsets[i] {
                return Err(unsupported(
                    cause.0,
                    format!(
                        "{} puts member `{}` of `{}` at offset {at} instead of {}; layouts other than Metal's natural one are not supported",
                        cause.1,
                        m.name,
                        self.struct_name(id),
                        natural.offsets[i]
                    ),
                ));
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
