//! Values, places and pointers as lowering tracks them.

use crate::types::{AddressSpace, Type};
use naga::{Expression, Handle};

/// A memory location: a naga pointer expression.
#[derive(Clone, Debug)]
pub(in crate::lower) struct Place {
    /// Pointer expression.
    pub ptr: Handle<Expression>,
    /// MSL type of what it points to.
    pub ty: Type,
    /// False for `const`, `constant` and `const device` memory.
    pub writable: bool,
}

/// Where an MSL pointer points: naga has no storable pointers, so an MSL
/// pointer is a fixed root plus a `u32` element index (mapping doc §1.3).
#[derive(Clone, Debug, PartialEq)]
pub(in crate::lower) enum PtrRoot {
    /// A global of runtime-array type (a `T*` buffer).
    Buffer(Handle<naga::GlobalVariable>),
    /// A whole non-array global (a `T&` buffer).
    Global(Handle<naga::GlobalVariable>),
    /// A place in this function (a `thread` object); the index must stay 0,
    /// or the place is an array and the index selects an element.
    Place(Handle<Expression>, bool),
    /// A word-view buffer; the index is a byte offset.
    Bytes(Handle<naga::GlobalVariable>),
    /// A `thread` object seen through a pointer to a type its elements
    /// or components are made of (`metal/thread_views.rs`): the index
    /// counts the pointee's elements from the start of the object.
    View {
        /// Pointer to the object (to an array of `object`s when `array`).
        base: Handle<Expression>,
        /// `base` points to an array whose elements are `object`s.
        array: bool,
        /// The object's type (the array's element type when `array`).
        object: Box<Type>,
    },
}

/// An MSL pointer value.
#[derive(Clone, Debug)]
pub(in crate::lower) struct PtrValue {
    /// Root.
    pub root: PtrRoot,
    /// `u32` element index.
    pub index: Handle<Expression>,
    /// Pointee type.
    pub pointee: Type,
    /// Address space.
    pub space: AddressSpace,
    /// Pointee is const.
    pub is_const: bool,
}

/// The result of lowering an expression.
#[derive(Clone, Debug)]
pub(in crate::lower) enum Value {
    /// No value (`void` call).
    Void,
    /// A value.
    Rv(Handle<Expression>, Type),
    /// An lvalue.
    Place(Place),
    /// Several components of a vector lvalue (`v.zx`).
    Swizzle(Place, Vec<u8>),
    /// A pointer.
    Ptr(PtrValue),
    /// A place in a word-view buffer.
    Bytes(BytePlace),
    /// Several components of a vector in a word-view buffer.
    BytesSwizzle(BytePlace, Vec<u8>),
    /// A struct with pointer, reference, texture or sampler members: no
    /// WGSL value, its members known at translation time
    /// (`metal/pointer_members.rs`).
    Agg(Aggregate),
    /// A bit-field of a struct object (`metal/bit_fields.rs`).
    BitField(Box<BitFieldPlace>),
    /// A byte or 16-bit half of a 32-bit integer word of a `thread`
    /// object, reached through a view (`metal/thread_view_parts.rs`): the
    /// pointer to it.
    WordPart(PtrValue),
    /// A pointer member of a local object of a struct of places: its
    /// index in a `u32` variable (`metal/pointer_objects.rs`). Only an
    /// [`Aggregate`] holds one; reading the member loads it as a `Ptr`.
    Cell(PtrCell),
    /// A null pointer: `nullptr` itself (`None`), or a pointer parameter or
    /// variable of this type that every call reaching this specialisation
    /// gave `nullptr` (`ArgKey::Null`). It has no WGSL value; comparisons
    /// with it and its truth fold at translation time.
    Null(Option<crate::types::Pointer>),
}

/// A pointer member of a local struct object whose target moves
/// (`src += n`): a fixed root, known at translation time once the member
/// is first assigned, plus an element index in a `u32` variable.
#[derive(Clone, Debug)]
pub(in crate::lower) struct PtrCell {
    /// Pointer (`ptr<function, u32>`) to the index variable.
    pub index: Handle<Expression>,
    /// Root, pointee, space (its `index` is ignored); `None` until the
    /// member is first assigned. Shared by every copy of the aggregate
    /// that is the same object, so the first assignment fixes it for all.
    pub target: std::rc::Rc<std::cell::RefCell<Option<PtrValue>>>,
    /// The member's declared type.
    pub ty: crate::types::Pointer,
    /// The member's name (for diagnostics).
    pub member: String,
    /// For an array of pointers (`const device T* src[n]`, one root for
    /// all): its length; `index` then points to an `array<u32, n>`.
    pub count: Option<u32>,
    /// The value is the cell's address, not the pointer it holds: `&p` of
    /// a pointer variable `p`, or a parameter given one (`thread T**`,
    /// `const device T* ps[1]`), a `thread` pointer to the pointer
    /// (`metal/pointer_addresses.rs`).
    pub addressed: bool,
}

impl PtrCell {
    /// The MSL type of the cell as a value: the pointer it holds, or a
    /// `thread` pointer to that pointer when [`PtrCell::addressed`].
    pub fn value_type(&self) -> Type {
        let held = Type::Pointer(Box::new(self.ty.clone()));
        if let Some(n) = self.count {
            return Type::Array(Box::new(held), n);
        }
        match self.addressed {
            false => held,
            true => Type::Pointer(Box::new(crate::types::Pointer {
                space: AddressSpace::Thread,
                pointee: held,
                is_const: false,
                is_reference: false,
            })),
        }
    }
}

/// A bit-field (`sema::bit_fields`) of a struct object: read from and
/// written into the hidden members that hold its bytes.
#[derive(Clone, Debug)]
pub(in crate::lower) struct BitFieldPlace {
    /// The struct object (a `Place`, `Bytes` or `Rv`).
    pub object: Value,
    /// The field.
    pub field: crate::sema::bit_fields::BitField,
    /// Its struct.
    pub id: crate::types::StructId,
}

/// A struct of places: one value per member, in declaration order (a
/// pointer member is a `Ptr`, a reference member the `Place`/`Bytes` it
/// binds, a texture or sampler an `Rv` handle, a plain member an `Rv`, or
/// the `Place` of an argument buffer's data member). An array of textures,
/// samplers or pointers in an argument buffer is an aggregate too, of array
/// type, one value per element.
#[derive(Clone, Debug)]
pub(in crate::lower) struct Aggregate {
    /// The struct type.
    pub ty: Type,
    /// Member values.
    pub members: Vec<Value>,
    /// Set when the aggregate stands for what a pointer points to (an
    /// argument buffer passed as `constant Args* args`): the pointer's type.
    /// `args->m`, `*args` and `args[0]` reach the struct.
    pub pointer: Option<Box<crate::types::Pointer>>,
    /// The members are the object's own storage (a local object built by a
    /// constructor, `metal/pointer_objects.rs`): plain members are
    /// variables and pointer members [`Value::Cell`]s, so a copy of the
    /// object copies them into variables of its own.
    pub owned: bool,
}

impl Value {
    /// The expression of a value built by lowering itself (`Rv`).
    pub fn handle(&self) -> Handle<Expression> {
        match self {
            Value::Rv(h, _) => *h,
            _ => unreachable!("not a plain value"),
        }
    }
}

/// What a name in a function scope stands for.
#[derive(Clone, Debug)]
pub(in crate::lower) enum Local {
    /// A local variable.
    Var {
        /// The variable.
        var: Handle<naga::LocalVariable>,
        /// Its MSL type.
        ty: Type,
        /// Declared `const`.
        is_const: bool,
    },
    /// A value that is not a variable (textures and samplers: handles).
    Value(Handle<Expression>, Type),
    /// A reference bound to a place.
    Ref(Place),
    /// A reference into a word-view buffer.
    Bytes(BytePlace),
    /// A pointer that cannot change (a parameter).
    Ptr(PtrValue),
    /// A struct of places (`metal/pointer_members.rs`).
    Agg(Aggregate),
    /// A pointer variable: fixed root, index in a `u32` local.
    PtrVar {
        /// The index variable.
        var: Handle<naga::LocalVariable>,
        /// Template for root, pointee, space (its `index` is ignored).
        ptr: PtrValue,
    },
    /// A texture or sampler variable initialised with an element of an
    /// array chosen at run time (`T t = ts[i];`): the array, and the
    /// variable holding the index (`metal/resource_choice.rs`).
    Chosen {
        /// The array.
        array: Aggregate,
        /// The index variable.
        var: Handle<naga::LocalVariable>,
        /// Its type (`int` or `uint`).
        index_ty: Type,
    },
    /// A pointer parameter or variable known to be null (see
    /// [`Value::Null`]).
    Null(crate::types::Pointer),
    /// A pointer to a pointer variable of the caller (a parameter given
    /// `&p`): its cell, [`PtrCell::addressed`]; or a local array of
    /// pointers declared without an initializer (`const device T* ps[n];`,
    /// or a parameter given one): one root, fixed by the first assignment
    /// to an element, and an `array<u32, n>` of indices.
    Cell(PtrCell),
    /// A pointer variable declared without an initializer
    /// (`const device T* row;`): its first assignment fixes the root and
    /// makes it a [`Local::PtrVar`] of the same index variable.
    PendingPtr {
        /// The index variable.
        var: Handle<naga::LocalVariable>,
        /// The declared pointer type.
        ty: crate::types::Pointer,
    },
}

/// A place in a word-view buffer.
#[derive(Clone, Debug)]
pub(in crate::lower) struct BytePlace {
    /// The `array<u32>` or `array<atomic<u32>>` global.
    pub global: Handle<naga::GlobalVariable>,
    /// Byte offset (`u32`).
    pub offset: Handle<Expression>,
    /// MSL type stored there, in Metal's layout.
    pub ty: Type,
    /// False for `const device` and `constant` buffers.
    pub writable: bool,
}

/// Atomic objects are accessed through the atomic functions only (MSL §6.15).
pub(in crate::lower) fn atomic_access(span: crate::source_map::Span) -> crate::sema::Error {
    crate::sema::Error::coded(
        crate::diagnostics::Code::InvalidOperands,
        span,
        "atomic objects can only be accessed with atomic functions such as `atomic_load_explicit`",
    )
}

/// True for atomic types and arrays of them.
pub(in crate::lower) fn contains_atomic(ty: &Type) -> bool {
    match ty {
        Type::Atomic(_) => true,
        Type::Array(e, _) => contains_atomic(e),
        _ => false,
    }
}

/// One argument of a call, lowered once.
#[derive(Clone, Debug)]
pub(in crate::lower) struct Arg {
    /// The value as the expression gave it, or loaded when every candidate
    /// takes it by value.
    pub value: Value,
    /// The type overload resolution and deduction see: a pointer's type for
    /// a pointer (a by-value `T` does not deduce its pointee), else the
    /// value's (a place's type as declared, packed or not).
    pub ty: Type,
    /// The argument's source.
    pub span: crate::source_map::Span,
}

/// The type of `v` as overload resolution and template deduction see it.
pub(in crate::lower) fn arg_type(v: &Value) -> Type {
    match v {
        Value::Rv(_, t) => t.clone(),
        Value::Place(p) => p.ty.clone(),
        Value::Swizzle(p, c) => Type::vector(p.ty.element_scalar().unwrap(), c.len() as u8),
        Value::Ptr(p) => Type::Pointer(Box::new(crate::types::Pointer {
            space: p.space,
            pointee: p.pointee.clone(),
            is_const: p.is_const,
            is_reference: false,
        })),
        Value::Bytes(b) => b.ty.unpacked(),
        Value::BytesSwizzle(b, c) => Type::vector(b.ty.element_scalar().unwrap(), c.len() as u8),
        Value::Void => Type::Void,
        Value::BitField(b) => Type::Scalar(b.field.scalar),
        Value::WordPart(p) => p.pointee.unpacked(),
        Value::Cell(c) => c.value_type(),
        Value::Agg(a) => match &a.pointer {
            Some(p) => Type::Pointer(p.clone()),
            None => a.ty.clone(),
        },
        Value::Null(Some(p)) => Type::Pointer(Box::new(p.clone())),
        // `std::nullptr_t`: overload resolution takes `void` for it (no
        // other argument has that type) and converts it to any pointer.
        Value::Null(None) => Type::Void,
    }
}
