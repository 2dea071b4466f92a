//! `gradient2d`, `gradient3d` and `gradientcube` (MSL §6.12, texture sample
//! options) as values: `<metal_stdlib>` declares them as types, so a helper
//! may return one (SPIR-V Cross's `spvGradientCube` projects a cube
//! gradient so) and a `sample` call take it. Here each is a struct of its
//! two derivatives, `dPdx` and `dPdy`, constructed from them in order
//! (`gradientcube(dx, dy)`, lowering's `construct`); `sample` reads the two
//! members.

use super::Program;
use crate::source_map::Span;
use crate::types::{MemberDef, Scalar, StructDef, StructId, Type};

/// The gradient types and the lanes of their derivatives.
const GRADIENTS: &[(&str, u8)] = &[("gradient2d", 2), ("gradient3d", 3), ("gradientcube", 3)];

/// Adds the gradient types to `program.structs`; a source declaring a
/// struct of the same name uses its own.
pub(super) fn register(program: &mut Program<'_>) {
    for &(name, lanes) in GRADIENTS {
        let member = |name: &str| MemberDef {
            name: name.into(),
            ty: Type::Vector(Scalar::Float, lanes),
            span: Span::default(),
            id: None,
        };
        let id = program.structs.push(StructDef {
            name: name.into(),
            members: vec![member("dPdx"), member("dPdy")],
            span: Span::default(),
            is_union: false,
            bases: Vec::new(),
            pod: true,
            min_align: 1,
            packed: false,
        });
        program.builtin_structs.push(id);
    }
}

impl Program<'_> {
    /// The gradient type `name` (`gradientcube`, `metal::gradientcube`)
    /// names, if it names one.
    pub fn gradient_named(&self, name: &str) -> Option<StructId> {
        let name = name.strip_prefix("metal::").unwrap_or(name);
        GRADIENTS
            .iter()
            .any(|(n, _)| *n == name)
            .then(|| self.builtin_struct(name))
            .flatten()
    }

    /// The name of gradient type `id` (`"gradientcube"`), if it is one.
    pub fn gradient_type(&self, id: StructId) -> Option<&'static str> {
        if !self.builtin_structs.contains(&id) {
            return None;
        }
        let name = &self.structs.get(id).name;
        GRADIENTS.iter().map(|(n, _)| *n).find(|n| n == name)
    }
}
