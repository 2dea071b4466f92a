//! Bit-fields (`uint a : 4;`) in Metal's layout, which is clang's for the
//! Itanium C++ ABI: each field takes the next `width` bits, from the low bits
//! of the byte where the previous member ended, unless that would make it
//! straddle a boundary of its declared type's size (`uint`: 32 bits), in
//! which case it starts at that boundary; an unnamed zero-width field
//! (`uint : 0;`) moves to the next boundary; a named field aligns the
//! struct as its declared type does; the next ordinary member starts at
//! the first whole byte after the fields, aligned as usual.
//!
//! WGSL has no bit-fields, so the struct's members are rewritten: each run
//! of consecutive bit-fields becomes the bytes it occupies, held by hidden
//! `uint`/`ushort`/`uchar` members (`@bits0`, ...) at exactly those offsets
//! (a 4-byte-aligned word where one fits, else halves and bytes), so every
//! other member keeps its Metal offset, in thread memory and in buffers
//! (the ordinary struct layout and word views then apply); the struct's
//! alignment is raised to the fields' types' (`StructDef::min_align`) where
//! those members are narrower. The fields are
//! recorded as [`BitField`]s; lowering reads a field from the hidden
//! members covering it (`extractBits`, sign-extended for signed types) and
//! writes it back into them (`insertBits`), `lower/metal/bit_fields.rs`.

use super::{consteval, Error, Program, Result};
use crate::diagnostics::Code;
use crate::layout;
use crate::syntax::ast;
use crate::types::{MemberDef, Scalar, Type};

/// One named bit-field of a struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitField {
    /// Its name.
    pub name: String,
    /// Its declared type: an integer of up to 32 bits, or `bool`.
    pub scalar: Scalar,
    /// Its first bit, counted from the struct's first byte (bit `b` is bit
    /// `b % 8` of byte `b / 8`, as on Apple's little-endian GPUs).
    pub bit: u32,
    /// Its width in bits (1 to the size of its type).
    pub width: u32,
}

/// The prefix of the hidden members that hold bit-fields' bytes.
pub const STORAGE_PREFIX: &str = "@bits";

/// Places bit-fields one after another, as clang does for Itanium.
pub(super) struct Allocator {
    /// The next free bit, from the struct's start.
    pub bit: u32,
    /// The byte where the current run of bit-fields began.
    pub run_start: u32,
    /// The alignment the named bit-fields' types require of the struct.
    pub align: u32,
    /// Hidden storage members made so far.
    pub chunks: usize,
}

impl Allocator {
    /// The first bit of a `width`-bit field of a type of `size` bytes.
    fn place(&mut self, size: u32, width: u32) -> u32 {
        let unit = 8 * size;
        let straddles = width > 0 && self.bit / unit != (self.bit + width - 1) / unit;
        if width == 0 || straddles {
            self.bit = self.bit.div_ceil(unit) * unit;
        }
        let at = self.bit;
        self.bit += width;
        at
    }

    /// The hidden members holding bytes `start..end`: `uint`s where a whole
    /// aligned word fits, else `ushort`s and `uchar`s, each at an offset its
    /// size divides.
    pub fn storage(
        &mut self,
        start: u32,
        end: u32,
        span: crate::source_map::Span,
    ) -> Vec<MemberDef> {
        let mut out = Vec::new();
        let mut at = start;
        while at < end {
            let scalar = if at.is_multiple_of(4) && at + 4 <= end {
                Scalar::UInt
            } else if at.is_multiple_of(2) && at + 2 <= end {
                Scalar::UShort
            } else {
                Scalar::UChar
            };
            out.push(MemberDef {
                name: format!("{STORAGE_PREFIX}{}", self.chunks),
                ty: Type::Scalar(scalar),
                span,
                id: None,
            });
            self.chunks += 1;
            at += scalar.size();
        }
        out
    }
}

impl Program<'_> {
    /// Places bit-field `m` (its width given) of struct `s`, of type `ty`,
    /// with `alloc`; a named one is recorded in `fields`.
    pub(super) fn place_bit_field(
        &self,
        s: &ast::StructDecl,
        m: &ast::Member,
        ty: &Type,
        alloc: &mut Allocator,
        fields: &mut Vec<BitField>,
    ) -> Result<()> {
        let width_expr = m.bits.as_ref().expect("a bit-field");
        let unnamed = m.name.name.starts_with('@');
        let refuse = |span, message: String| Err(Error::coded(Code::Unsupported, span, message));
        let scalar = match ty {
            Type::Scalar(s) if s.is_integer() && s.size() <= 4 || *s == Scalar::Bool => *s,
            Type::Scalar(Scalar::Long | Scalar::ULong) => return refuse(
                m.ty.span,
                "64-bit bit-fields are not supported: WGSL's `extractBits` works on 32-bit words"
                    .into(),
            ),
            _ => {
                return Err(Error::coded(
                    Code::InvalidType,
                    m.ty.span,
                    format!(
                        "bit-field `{}` has non-integral type `{}`",
                        m.name.name,
                        self.display(ty)
                    ),
                ))
            }
        };
        if s.is_union {
            return refuse(
                width_expr.span,
                "bit-fields in unions are not supported".into(),
            );
        }
        if m.default.is_some() || !m.attributes.is_empty() || !m.array.is_empty() {
            return refuse(
                m.name.span,
                format!(
                    "bit-field `{}` with an initializer, attribute or array bound is not supported",
                    m.name.name
                ),
            );
        }
        let size = if scalar == Scalar::Bool {
            1
        } else {
            scalar.size()
        };
        let width = consteval::eval(self, width_expr)?
            .as_int()
            .filter(|w| (0..=i64::from(8 * size)).contains(w))
            .ok_or_else(|| {
                Error::coded(
                    Code::InvalidAttributeArgument,
                    width_expr.span,
                    format!(
                        "the width of a bit-field of type `{}` must be a constant from 0 to {}",
                        self.display(ty),
                        8 * size
                    ),
                )
            })? as u32;
        if width == 0 && !unnamed {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                width_expr.span,
                format!("named bit-field `{}` has zero width", m.name.name),
            ));
        }
        let bit = alloc.place(size, width);
        if !unnamed {
            alloc.align = alloc.align.max(size);
            fields.push(BitField {
                name: m.name.name.clone(),
                scalar,
                bit,
                width,
            });
        }
        Ok(())
    }

    /// Refuses what a struct with bit-fields cannot have here: bases, layout
    /// attributes, member attributes and default initializers (which are
    /// matched to the members as written, while the struct's members are
    /// the fields' storage).
    pub(super) fn check_bit_field_struct(&self, s: &ast::StructDecl) -> Result<()> {
        let Some(first) = s.members.iter().find(|m| m.bits.is_some()) else {
            return Ok(());
        };
        let at = first.bits.as_ref().map_or(first.name.span, |w| w.span);
        let refuse = |what: &str| {
            Err(Error::coded(
                Code::Unsupported,
                at,
                format!("bit-fields in a struct with {what} are not supported"),
            ))
        };
        if s.members.iter().any(|m| ast::is_base_member(&m.name.name)) {
            return refuse("base classes");
        }
        if !s.layout.is_empty() || s.members.iter().any(|m| !m.layout.is_empty()) {
            return refuse("`__attribute__` layout attributes");
        }
        if s.members.iter().any(|m| !m.attributes.is_empty()) {
            return refuse("member attributes (`[[...]]`)");
        }
        if s.members.iter().any(|m| m.default.is_some()) {
            return refuse("default member initializers");
        }
        Ok(())
    }

    /// Where the members `members` end (their natural layout's data size).
    pub(super) fn data_end(&self, members: &[MemberDef]) -> u32 {
        members.iter().fold(0, |at, m| {
            let l = layout::metal(&m.ty, &self.structs);
            at.div_ceil(l.align) * l.align + l.size
        })
    }

    /// The bit-field `name` of struct `id`, if it has one.
    pub fn bit_field(&self, id: crate::types::StructId, name: &str) -> Option<&BitField> {
        self.bit_fields.get(&id)?.iter().find(|f| f.name == name)
    }
}
