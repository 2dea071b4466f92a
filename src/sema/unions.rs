//! `union`s (C++ [class.union]): every member starts at offset 0 (the
//! layout is `layout::struct_layout`'s), and lowering holds a union as
//! 32-bit words that its members are read from and written to through word
//! views (`lower/metal/unions.rs`). Members are data Metal lays out in
//! bytes: pointers, references, textures, samplers and atomics have no
//! bytes a word view could reinterpret, and are refused here.

use super::{Error, Program, Result, Symbol};
use crate::diagnostics::Code;
use crate::syntax::ast;
use crate::types::{Scalar, Type};
use std::collections::HashMap;

/// Refuses member `name` of type `ty` in union `u` unless its bytes can be
/// held in words: scalars of at most 32 bits, vectors, matrices, arrays and
/// structs of them.
pub(super) fn check_member(
    program: &Program,
    u: &ast::StructDecl,
    name: &ast::Ident,
    ty: &Type,
) -> Result<()> {
    let Some(what) = unheld_part(program, ty) else {
        return Ok(());
    };
    Err(Error::coded(
        Code::Unsupported,
        name.span,
        format!(
            "member `{}` of union `{}` holds {what}, which a union cannot hold here",
            name.name, u.name.name
        ),
    )
    .note(
        "unions hold scalars of at most 32 bits, vectors, matrices, and arrays and structs of them",
    ))
}

/// What in `ty` a union's words cannot hold, described; `None` if nothing.
fn unheld_part(program: &Program, ty: &Type) -> Option<String> {
    match ty {
        Type::Pointer(p) if p.is_reference => Some("a reference".into()),
        Type::Pointer(_) => Some("a pointer".into()),
        Type::Texture(_) => Some("a texture".into()),
        Type::Sampler { .. } => Some("a sampler".into()),
        Type::Atomic(_) => Some("an atomic".into()),
        Type::Void => Some("`void`".into()),
        Type::Scalar(s) | Type::Vector(s, _) | Type::Packed(s, _)
            if matches!(s, Scalar::Long | Scalar::ULong) =>
        {
            Some(format!("a 64-bit `{}`", s.name()))
        }
        Type::Array(e, _) => unheld_part(program, e),
        Type::Struct(id) => program
            .structs
            .get(*id)
            .members
            .iter()
            .find_map(|m| unheld_part(program, &m.ty)),
        _ => None,
    }
}

/// Declares the anonymous unions and structs of `s` (`union { .. };` as a
/// member), each a struct named after its member in `s`
/// (`S::anonymous::0`): the types of the members that hold them, by
/// member name.
pub(super) fn declare_anonymous(
    program: &mut Program,
    s: &ast::StructDecl,
) -> Result<HashMap<String, Type>> {
    let mut types = HashMap::new();
    for a in &s.anonymous {
        let mut decl = a.clone();
        decl.name.name = format!("{}::{}", s.name.name, a.name.name);
        program.declare_struct(&decl)?;
        let Some(Symbol::Type(ty)) = program.symbols.get(&decl.name.name) else {
            unreachable!("a struct just declared")
        };
        types.insert(a.name.name.clone(), ty.clone());
    }
    Ok(types)
}
