//! Struct and array drill-down of buffer types, in Metal's layout
//! (`MTLStructType`, `MTLArrayType`).

use super::{ArrayType, StructMember, StructType};
use crate::layout;
use crate::types::{Structs, Type};

/// How reflection names a type: `struct`, `array`, or its MSL spelling.
fn data_type(ty: &Type, structs: &Structs) -> String {
    match ty {
        Type::Struct(_) => "struct".into(),
        Type::Array(..) => "array".into(),
        other => structs.display(other),
    }
}

/// The members of a struct type, recursively.
pub fn struct_type(ty: &Type, structs: &Structs) -> Option<StructType> {
    let Type::Struct(id) = ty else { return None };
    let l = layout::struct_layout(*id, structs);
    let members = structs
        .get(*id)
        .members
        .iter()
        .zip(l.offsets)
        .map(|(m, offset)| StructMember {
            name: m.name.clone(),
            offset,
            data_type: data_type(&m.ty, structs),
            size: layout::metal(&m.ty, structs).size,
            struct_type: struct_type(&m.ty, structs),
            array_type: array_type(&m.ty, structs),
            argument_index: None,
        })
        .collect();
    Some(StructType {
        name: structs.get(*id).name.clone(),
        members,
    })
}

/// An array type's element, length and stride, recursively.
pub fn array_type(ty: &Type, structs: &Structs) -> Option<ArrayType> {
    let Type::Array(elem, n) = ty else {
        return None;
    };
    Some(ArrayType {
        element_type: data_type(elem, structs),
        array_length: *n,
        stride: layout::metal(elem, structs).size,
        element_struct_type: struct_type(elem, structs),
        element_array_type: array_type(elem, structs).map(Box::new),
    })
}
