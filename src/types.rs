//! The MSL type model shared by semantic analysis, layout, lowering and reflection.

use std::fmt;

/// MSL scalar types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    /// `bool`
    Bool,
    /// `char`, `int8_t`
    Char,
    /// `uchar`, `uint8_t`
    UChar,
    /// `short`, `int16_t`
    Short,
    /// `ushort`, `uint16_t`
    UShort,
    /// `int`, `int32_t`
    Int,
    /// `uint`, `uint32_t`
    UInt,
    /// `long`, `int64_t`
    Long,
    /// `ulong`, `uint64_t`
    ULong,
    /// `half`
    Half,
    /// `float`
    Float,
    /// `bfloat` (Metal 3.1): the upper 16 bits of a `float` (8 exponent
    /// bits, 7 fraction bits); held in `f32` values rounded to it.
    BFloat,
}

impl Scalar {
    /// Size in bytes (MSL Table 2.1).
    pub fn size(self) -> u32 {
        match self {
            Scalar::Bool | Scalar::Char | Scalar::UChar => 1,
            Scalar::Short | Scalar::UShort | Scalar::Half | Scalar::BFloat => 2,
            Scalar::Int | Scalar::UInt | Scalar::Float => 4,
            Scalar::Long | Scalar::ULong => 8,
        }
    }

    /// Integer types (bool excluded).
    pub fn is_integer(self) -> bool {
        !matches!(
            self,
            Scalar::Bool | Scalar::Half | Scalar::Float | Scalar::BFloat
        )
    }

    /// `half`, `float` or `bfloat`.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Half | Scalar::Float | Scalar::BFloat)
    }

    /// Signed integers.
    pub fn is_signed_integer(self) -> bool {
        matches!(
            self,
            Scalar::Char | Scalar::Short | Scalar::Int | Scalar::Long
        )
    }

    /// The MSL spelling.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Char => "char",
            Scalar::UChar => "uchar",
            Scalar::Short => "short",
            Scalar::UShort => "ushort",
            Scalar::Int => "int",
            Scalar::UInt => "uint",
            Scalar::Long => "long",
            Scalar::ULong => "ulong",
            Scalar::Half => "half",
            Scalar::Float => "float",
            Scalar::BFloat => "bfloat",
        }
    }

    /// C++ conversion rank, for the usual arithmetic conversions.
    pub fn rank(self) -> u32 {
        match self {
            Scalar::Bool => 0,
            Scalar::Char | Scalar::UChar => 1,
            Scalar::Short | Scalar::UShort => 2,
            Scalar::Int | Scalar::UInt => 3,
            Scalar::Long | Scalar::ULong => 4,
            // `bfloat` and `half` never meet in arithmetic (MSL §2.22).
            Scalar::Half | Scalar::BFloat => 5,
            Scalar::Float => 6,
        }
    }
}

/// The `bfloat` value nearest to `v` (ties to even), as an `f32`: one
/// rounding of the exact `v` (a literal's value, say), through the `f32`
/// nearest to `v` rounded to odd, whose extra bits keep a value that is not
/// a tie from becoming one. Past the largest finite `bfloat` it is an
/// infinity; a NaN stays a NaN.
pub fn bfloat_nearest(v: f64) -> f32 {
    let f = v as f32;
    let mut bits = f.to_bits();
    if f.is_finite() && f64::from(f) != v && bits & 1 == 0 {
        // The other neighbour of `v`, whose last bit is 1.
        if v.abs() > f64::from(f).abs() {
            bits += 1;
        } else {
            bits -= 1;
        }
    }
    half::bf16::from_f32(f32::from_bits(bits)).to_f32()
}

/// Identifies a struct declared in the translation unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StructId(pub u32);

/// MSL address spaces of pointers and references.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    /// `device`
    Device,
    /// `constant`
    Constant,
    /// `thread`
    Thread,
    /// `threadgroup`
    Threadgroup,
}

impl AddressSpace {
    /// The MSL spelling.
    pub fn name(self) -> &'static str {
        match self {
            AddressSpace::Device => "device",
            AddressSpace::Constant => "constant",
            AddressSpace::Thread => "thread",
            AddressSpace::Threadgroup => "threadgroup",
        }
    }
}

/// An MSL type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// `void`
    Void,
    /// A scalar.
    Scalar(Scalar),
    /// `floatN` etc.; size 2..=4.
    Vector(Scalar, u8),
    /// `floatCxR`: `columns` columns of `rows` components.
    Matrix {
        /// Element type (`half` or `float`).
        scalar: Scalar,
        /// Columns.
        columns: u8,
        /// Rows.
        rows: u8,
    },
    /// `T[N]` / `array<T, N>`
    Array(Box<Type>, u32),
    /// A declared struct.
    Struct(StructId),
    /// `space T*` or `space T&`.
    Pointer(Box<Pointer>),
    /// `atomic_int`, `atomic_uint`, `atomic_bool`, `atomic_float`, `atomic<T>`.
    Atomic(Scalar),
    /// `packed_floatN` etc.: a storage format (size N×sizeof(T), alignment
    /// sizeof(T)); as a value it is the aligned vector (MSL §2.2.3).
    Packed(Scalar, u8),
    /// `texture2d<float, access::read>` etc. (MSL §2.9).
    Texture(Texture),
    /// `sampler` (MSL §2.10); comparison samplers are decided by use.
    Sampler {
        /// Used with `sample_compare`/`gather_compare`.
        comparison: bool,
    },
    /// `simdgroup_matrix<T, 8, 8>` (MSL §6.9.4, Metal 2.3): an 8×8 matrix
    /// that a SIMD group holds together; `T` is `float`, `half` or
    /// `bfloat` (lowering: `lower/metal/simdgroup_matrix.rs`).
    SimdgroupMatrix(Scalar),
}

/// The shape of a texture type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureShape {
    /// `texture1d`
    D1,
    /// `texture1d_array`: WGSL has no 1-D arrays, so it is lowered to a
    /// 2-D array of height 1 (`lower::texture_types::dimension`).
    D1Array,
    /// `texture2d`
    D2,
    /// `texture2d_array`
    D2Array,
    /// `texture2d_ms`
    D2Ms,
    /// `texture3d`
    D3,
    /// `texturecube`
    Cube,
    /// `texturecube_array`
    CubeArray,
    /// `depth2d`
    Depth2D,
    /// `depth2d_array`
    Depth2DArray,
    /// `depthcube`
    DepthCube,
    /// `depthcube_array`
    DepthCubeArray,
    /// `depth2d_ms`
    Depth2DMs,
    /// `texture_buffer`: texels in a buffer, lowered to a storage buffer
    /// of words (`lower::metal::texel_buffers`).
    Buffer,
}

impl TextureShape {
    /// A depth texture.
    pub fn is_depth(self) -> bool {
        matches!(
            self,
            Self::Depth2D
                | Self::Depth2DArray
                | Self::DepthCube
                | Self::DepthCubeArray
                | Self::Depth2DMs
        )
    }

    /// Array textures.
    pub fn is_array(self) -> bool {
        matches!(
            self,
            Self::D1Array
                | Self::D2Array
                | Self::CubeArray
                | Self::Depth2DArray
                | Self::DepthCubeArray
        )
    }

    /// Multisampled textures.
    pub fn is_multisampled(self) -> bool {
        matches!(self, Self::D2Ms | Self::Depth2DMs)
    }

    /// Number of coordinates (without the array index).
    pub fn coordinates(self) -> u8 {
        match self {
            Self::D1 | Self::D1Array | Self::Buffer => 1,
            Self::D3 | Self::Cube | Self::CubeArray | Self::DepthCube | Self::DepthCubeArray => 3,
            _ => 2,
        }
    }

    /// Cube textures (sampled with a direction).
    pub fn is_cube(self) -> bool {
        matches!(
            self,
            Self::Cube | Self::CubeArray | Self::DepthCube | Self::DepthCubeArray
        )
    }

    /// The MSL spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::D1 => "texture1d",
            Self::D1Array => "texture1d_array",
            Self::D2 => "texture2d",
            Self::D2Array => "texture2d_array",
            Self::D2Ms => "texture2d_ms",
            Self::D3 => "texture3d",
            Self::Cube => "texturecube",
            Self::CubeArray => "texturecube_array",
            Self::Depth2D => "depth2d",
            Self::Depth2DArray => "depth2d_array",
            Self::DepthCube => "depthcube",
            Self::DepthCubeArray => "depthcube_array",
            Self::Depth2DMs => "depth2d_ms",
            Self::Buffer => "texture_buffer",
        }
    }
}

/// Access qualifier of a texture (`access::sample` is the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureAccess {
    /// `access::sample`
    Sample,
    /// `access::read`
    Read,
    /// `access::write`
    Write,
    /// `access::read_write`
    ReadWrite,
}

/// A texture type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Texture {
    /// Shape.
    pub shape: TextureShape,
    /// Component type.
    pub scalar: Scalar,
    /// Access.
    pub access: TextureAccess,
    /// How a write/read_write texture is bound: its storage texel format
    /// and whether it is atomic (`None` until bound).
    pub format: Option<StorageBinding>,
}

/// The binding of a storage texture, chosen when it is bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StorageBinding {
    /// The texel format (an index into `lower`'s format table).
    pub format: u8,
    /// Bound with wgpu's `atomic` access (texture atomics, `--target wgpu`).
    pub atomic: bool,
}

impl Texture {
    /// Written through a storage binding (a texel buffer is a storage
    /// buffer, whatever its access).
    pub fn is_storage(&self) -> bool {
        matches!(self.access, TextureAccess::Write | TextureAccess::ReadWrite)
            || self.shape == TextureShape::Buffer
    }
}

/// A pointer or reference type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pointer {
    /// Address space of the pointee.
    pub space: AddressSpace,
    /// What it points to.
    pub pointee: Type,
    /// The pointee is `const`.
    pub is_const: bool,
    /// `&` rather than `*`.
    pub is_reference: bool,
}

impl Type {
    /// A scalar type.
    pub const fn scalar(s: Scalar) -> Type {
        Type::Scalar(s)
    }

    /// `float`.
    pub const FLOAT: Type = Type::Scalar(Scalar::Float);
    /// `int`.
    pub const INT: Type = Type::Scalar(Scalar::Int);
    /// `uint`.
    pub const UINT: Type = Type::Scalar(Scalar::UInt);
    /// `bool`.
    pub const BOOL: Type = Type::Scalar(Scalar::Bool);

    /// The value type of a storage format: packed vectors are aligned
    /// vectors once loaded (arrays of them too).
    pub fn unpacked(&self) -> Type {
        match self {
            Type::Packed(s, n) => Type::Vector(*s, *n),
            Type::Array(e, n) => Type::Array(Box::new(e.unpacked()), *n),
            other => other.clone(),
        }
    }

    /// The scalar or the element scalar of a vector/matrix.
    pub fn element_scalar(&self) -> Option<Scalar> {
        match *self {
            Type::Scalar(s) | Type::Vector(s, _) | Type::Packed(s, _) => Some(s),
            Type::Matrix { scalar, .. } => Some(scalar),
            _ => None,
        }
    }

    /// Number of vector components (1 for scalars).
    pub fn vector_size(&self) -> Option<u8> {
        match *self {
            Type::Scalar(_) => Some(1),
            Type::Vector(_, n) => Some(n),
            _ => None,
        }
    }

    /// True for scalars and vectors.
    pub fn is_scalar_or_vector(&self) -> bool {
        matches!(self, Type::Scalar(_) | Type::Vector(..))
    }

    /// The same shape with another element scalar.
    pub fn with_scalar(&self, s: Scalar) -> Type {
        match *self {
            Type::Vector(_, n) => Type::Vector(s, n),
            Type::Matrix { columns, rows, .. } => Type::Matrix {
                scalar: s,
                columns,
                rows,
            },
            _ => Type::Scalar(s),
        }
    }

    /// Vector of `n` (or a scalar for `n == 1`).
    pub fn vector(s: Scalar, n: u8) -> Type {
        if n == 1 {
            Type::Scalar(s)
        } else {
            Type::Vector(s, n)
        }
    }
}

/// Formats a type the way MSL spells it; structs need their names, so this
/// takes a lookup.
pub struct Display<'a, F: Fn(StructId) -> &'a str> {
    /// The type.
    pub ty: &'a Type,
    /// Struct names.
    pub struct_name: F,
}

impl<'a, F: Fn(StructId) -> &'a str> fmt::Display for Display<'a, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_type(f, self.ty, &self.struct_name)
    }
}

fn write_type<'a>(
    f: &mut fmt::Formatter<'_>,
    ty: &Type,
    name: &dyn Fn(StructId) -> &'a str,
) -> fmt::Result {
    match ty {
        Type::Void => f.write_str("void"),
        Type::Scalar(s) => f.write_str(s.name()),
        Type::Vector(s, n) => write!(f, "{}{}", s.name(), n),
        Type::Matrix {
            scalar,
            columns,
            rows,
        } => write!(f, "{}{}x{}", scalar.name(), columns, rows),
        Type::Array(t, n) => {
            write_type(f, t, name)?;
            write!(f, "[{n}]")
        }
        Type::Struct(id) => f.write_str(name(*id)),
        Type::Atomic(s) => write!(f, "atomic_{}", s.name()),
        Type::Texture(t) => {
            let access = match t.access {
                TextureAccess::Sample => "",
                TextureAccess::Read => ", access::read",
                TextureAccess::Write => ", access::write",
                TextureAccess::ReadWrite => ", access::read_write",
            };
            write!(f, "{}<{}{access}>", t.shape.name(), t.scalar.name())
        }
        Type::Sampler { .. } => f.write_str("sampler"),
        Type::SimdgroupMatrix(s) => write!(f, "simdgroup_matrix<{}, 8, 8>", s.name()),
        Type::Packed(s, n) => write!(f, "packed_{}{}", s.name(), n),
        Type::Pointer(p) => {
            write!(f, "{} ", p.space.name())?;
            if p.is_const {
                f.write_str("const ")?;
            }
            write_type(f, &p.pointee, name)?;
            f.write_str(if p.is_reference { "&" } else { "*" })
        }
    }
}

/// Parses a built-in scalar/vector/matrix type name (`float4`, `uint`,
/// `half3x3`, `int32_t`, `unsigned int`), ignoring a `metal::` prefix.
pub fn builtin_type(name: &str) -> Option<Type> {
    let name = name.strip_prefix("metal::").unwrap_or(name);
    // A SIMD-group vote is its 64-bit mask (`lower/stdlib/ballot.rs`).
    if matches!(name, "simd_vote" | "simd_vote::vote_t") {
        return Some(Type::Scalar(Scalar::ULong));
    }
    // A quad-group vote is its `ushort` mask, four bits.
    if matches!(name, "quad_vote" | "quad_vote::vote_t") {
        return Some(Type::Scalar(Scalar::UShort));
    }
    // <simd/simd.h>'s spellings, common in headers shared with host code.
    let name = name
        .strip_prefix("vector_")
        .or_else(|| name.strip_prefix("simd_"))
        .or_else(|| name.strip_prefix("simd::"))
        .or_else(|| name.strip_prefix("matrix_"))
        .unwrap_or(name);
    let scalar_alias = match name {
        "unsigned" | "unsigned int" => Some(Scalar::UInt),
        "signed" | "signed int" => Some(Scalar::Int),
        "unsigned char" => Some(Scalar::UChar),
        "signed char" => Some(Scalar::Char),
        "unsigned short" => Some(Scalar::UShort),
        "signed short" => Some(Scalar::Short),
        "unsigned long" => Some(Scalar::ULong),
        "signed long" => Some(Scalar::Long),
        "int8_t" => Some(Scalar::Char),
        "uint8_t" => Some(Scalar::UChar),
        "int16_t" => Some(Scalar::Short),
        "uint16_t" => Some(Scalar::UShort),
        "int32_t" => Some(Scalar::Int),
        "uint32_t" => Some(Scalar::UInt),
        "int64_t" => Some(Scalar::Long),
        "uint64_t" => Some(Scalar::ULong),
        // Metal's `size_t` and `ptrdiff_t` are 64-bit
        // (lower/metal/wide_integers.rs).
        "size_t" => Some(Scalar::ULong),
        "ptrdiff_t" => Some(Scalar::Long),
        _ => None,
    };
    if let Some(s) = scalar_alias {
        return Some(Type::Scalar(s));
    }
    let atomic = match name {
        "atomic_int" => Some(Scalar::Int),
        "atomic_uint" => Some(Scalar::UInt),
        "atomic_bool" => Some(Scalar::Bool),
        "atomic_float" => Some(Scalar::Float),
        _ => None,
    };
    if let Some(s) = atomic {
        return Some(Type::Atomic(s));
    }
    let simdgroup_matrix = match name {
        "simdgroup_float8x8" => Some(Scalar::Float),
        "simdgroup_half8x8" => Some(Scalar::Half),
        "simdgroup_bfloat8x8" => Some(Scalar::BFloat),
        _ => None,
    };
    if let Some(s) = simdgroup_matrix {
        return Some(Type::SimdgroupMatrix(s));
    }
    if let Some(rest) = name.strip_prefix("packed_") {
        return match builtin_type(rest)? {
            Type::Vector(s, n) if s != Scalar::Bool => Some(Type::Packed(s, n)),
            _ => None,
        };
    }
    let (base, suffix) = split_digits(name);
    let scalar = match base {
        "bool" => Scalar::Bool,
        "char" => Scalar::Char,
        "uchar" => Scalar::UChar,
        "short" => Scalar::Short,
        "ushort" => Scalar::UShort,
        "int" => Scalar::Int,
        "uint" => Scalar::UInt,
        "long" => Scalar::Long,
        "ulong" => Scalar::ULong,
        "half" => Scalar::Half,
        "float" => Scalar::Float,
        "bfloat" => Scalar::BFloat,
        _ => return None,
    };
    match suffix.as_bytes() {
        [] => Some(Type::Scalar(scalar)),
        [n @ b'2'..=b'4'] => Some(Type::Vector(scalar, n - b'0')),
        [c @ b'2'..=b'4', b'x', r @ b'2'..=b'4']
            if matches!(scalar, Scalar::Half | Scalar::Float) =>
        {
            Some(Type::Matrix {
                scalar,
                columns: c - b'0',
                rows: r - b'0',
            })
        }
        _ => None,
    }
}

fn split_digits(name: &str) -> (&str, &str) {
    let idx = name
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(name.len());
    name.split_at(idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_names() {
        assert_eq!(builtin_type("float4"), Some(Type::Vector(Scalar::Float, 4)));
        assert_eq!(builtin_type("metal::uint"), Some(Type::UINT));
        assert_eq!(builtin_type("unsigned int"), Some(Type::UINT));
        assert_eq!(
            builtin_type("half3x2"),
            Some(Type::Matrix {
                scalar: Scalar::Half,
                columns: 3,
                rows: 2
            })
        );
        assert_eq!(builtin_type("size_t"), Some(Type::Scalar(Scalar::ULong)));
        assert_eq!(
            builtin_type("metal::ptrdiff_t"),
            Some(Type::Scalar(Scalar::Long))
        );
        assert_eq!(builtin_type("int3x3"), None);
        assert_eq!(builtin_type("float5"), None);
        assert_eq!(builtin_type("floaty"), None);
    }
}

/// A data member of a struct.
#[derive(Clone, Debug, PartialEq)]
pub struct MemberDef {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: Type,
    /// Where it was declared.
    pub span: crate::source_map::Span,
    /// `[[id(n)]]`: the member's index in an argument buffer (MSL §2.13),
    /// when the source gives one.
    pub id: Option<u32>,
}

/// A struct declared in the translation unit.
#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    /// Name.
    pub name: String,
    /// Members in declaration order.
    pub members: Vec<MemberDef>,
    /// Where it was declared.
    pub span: crate::source_map::Span,
    /// Declared with `union`: every member starts at offset 0.
    pub is_union: bool,
    /// Its direct base classes, in the order of the base specifiers. A
    /// non-empty base `k` is held by member
    /// [`crate::syntax::ast::base_member_name`]`(k)`; an empty one by no
    /// member (the empty-base optimisation: it takes no space).
    pub bases: Vec<StructId>,
    /// POD for the purpose of layout (Itanium C++ ABI §1.1, C++03's POD as
    /// clang's `isPOD` defines it): a derived struct's members never start
    /// in the tail padding of such a base; they may in another's.
    pub pod: bool,
    /// An alignment its members do not give it: 1, or what its bit-fields'
    /// declared types require (`sema::bit_fields`: the hidden members
    /// holding their bytes may be narrower).
    pub min_align: u32,
    /// `__attribute__((packed))` where it changes the layout: every member
    /// aligned to 1 byte (GCC's rule), the struct too, so members follow
    /// one another without padding (`sema::gnu_layout` accepts it where each
    /// member still starts at a multiple of its scalar's size).
    pub packed: bool,
}

/// Every struct of a translation unit, indexed by [`StructId`].
#[derive(Clone, Debug, Default)]
pub struct Structs(pub Vec<StructDef>);

impl Structs {
    /// The struct `id`.
    pub fn get(&self, id: StructId) -> &StructDef {
        &self.0[id.0 as usize]
    }

    /// The struct `id`, to change (sema settles layouts after declaring).
    pub fn get_mut(&mut self, id: StructId) -> &mut StructDef {
        &mut self.0[id.0 as usize]
    }

    /// Adds one.
    pub fn push(&mut self, def: StructDef) -> StructId {
        self.0.push(def);
        StructId(self.0.len() as u32 - 1)
    }

    /// Whether `ty`, or an element or member nested in it through arrays
    /// and structs, is a type `leaf` accepts (an atomic, a texture, a
    /// union, ...).
    pub fn holds(&self, ty: &Type, leaf: &dyn Fn(&Type) -> bool) -> bool {
        leaf(ty)
            || match ty {
                Type::Array(elem, _) => self.holds(elem, leaf),
                Type::Struct(id) => self
                    .get(*id)
                    .members
                    .iter()
                    .any(|m| self.holds(&m.ty, leaf)),
                _ => false,
            }
    }

    /// Renders `ty` as MSL spells it.
    pub fn display(&self, ty: &Type) -> String {
        Display {
            ty,
            struct_name: |id| self.get(id).name.as_str(),
        }
        .to_string()
    }
}
