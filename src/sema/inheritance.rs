//! Base classes (C++ [class.derived]): `struct D : B, C<T> { .. }`.
//!
//! The parser gives `D` one data member per base, named
//! [`ast::base_member_name`]`(k)`, of the base's type, ahead of its own
//! members: the base subobjects come first, as Metal lays them out. Here an
//! empty base (no data members, no non-empty base) loses its member, as the
//! empty-base optimisation gives it no space, and every base is recorded in
//! [`StructDef::bases`].
//!
//! Names: `D` inherits every member name of its bases that it does not
//! declare itself ([class.member.lookup]: a name declared in `D` hides the
//! bases' ones). Member functions, static members, member aliases and
//! member templates of `B` are declared under `B::name`, so `D` gets the
//! same symbol under `D::name`; calls of an inherited member function then
//! pass the `D` object where `B`'s `this` is expected, which lowering
//! converts to the base subobject (`lower/cxx/bases.rs`). Data members are
//! found through the base members by lowering, as those of anonymous
//! unions are. Constructors and `operator=` are not inherited.

use super::{Error, Program, Result, Symbol};
use crate::diagnostics::Code;
use crate::syntax::ast;
use crate::types::{MemberDef, StructId, Type};

impl Program<'_> {
    /// The base class that member `m` (a [`ast::is_base_member`]) of `s`
    /// names, of type `ty`: a struct, not a union.
    pub(super) fn base_class(
        &self,
        s: &ast::StructDecl,
        m: &ast::Member,
        ty: &Type,
    ) -> Result<StructId> {
        match ty {
            Type::Struct(id) if !self.structs.get(*id).is_union => Ok(*id),
            _ => Err(Error::coded(
                Code::InvalidType,
                m.ty.span,
                format!(
                    "`{}` cannot derive from `{}`: a base must be a struct or class",
                    s.name.name,
                    self.display(ty)
                ),
            )),
        }
    }

    /// Splits the members of struct `s`, typed, into its bases and its data
    /// members: an empty base holds no member.
    pub(super) fn split_bases(&self, members: Vec<MemberDef>) -> (Vec<StructId>, Vec<MemberDef>) {
        let mut bases = Vec::new();
        let mut kept = Vec::new();
        for m in members {
            match m.ty {
                Type::Struct(b) if ast::is_base_member(&m.name) => {
                    bases.push(b);
                    if !self.structs.get(b).members.is_empty() {
                        kept.push(m);
                    }
                }
                _ => kept.push(m),
            }
        }
        (bases, kept)
    }

    /// Whether a struct with these data members and a declaration that
    /// says `candidate` is POD for the purpose of layout: its members' types
    /// must be too.
    pub(super) fn pod_for_layout(&self, candidate: bool, members: &[MemberDef]) -> bool {
        fn pod(program: &Program, ty: &Type) -> bool {
            match ty {
                Type::Array(e, _) => pod(program, e),
                Type::Struct(id) => program.structs.get(*id).pod,
                _ => true,
            }
        }
        candidate && members.iter().all(|m| pod(self, &m.ty))
    }

    /// clang's `__is_empty(T)`: a struct (not a union) with no data members
    /// and only empty bases. Empty bases hold no member, so no member at
    /// all.
    pub fn is_empty_class(&self, ty: &Type) -> bool {
        match ty {
            Type::Struct(id) => {
                let def = self.structs.get(*id);
                !def.is_union && def.members.is_empty()
            }
            _ => false,
        }
    }

    /// Declares, under struct `id`'s name, the member names its bases
    /// declare and it does not (see the module's documentation). Run when
    /// the struct is declared and again once the translation unit is, for
    /// the members that bases define out of line afterwards.
    pub(super) fn inherit_names(&mut self, id: StructId) {
        let derived = self.structs.get(id).name.clone();
        // Which base each name came from in this pass: a name two bases
        // declare is ambiguous ([class.member.lookup]/6).
        let mut from: std::collections::HashMap<String, String> = Default::default();
        for b in self.structs.get(id).bases.clone() {
            let base = self.structs.get(b).name.clone();
            let prefix = format!("{base}::");
            let own = short_name(&base);
            let names: Vec<(String, Symbol)> = self
                .symbols
                .iter()
                .filter_map(|(k, s)| {
                    let rest = k.strip_prefix(&prefix)?;
                    inheritable(rest, own).then(|| (format!("{derived}::{rest}"), s.clone()))
                })
                .collect();
            for (key, symbol) in names {
                if let Some(first) = from.get(&key) {
                    self.symbols.remove(&key);
                    self.ambiguous_members
                        .insert(key, (first.clone(), base.clone()));
                    continue;
                }
                if !self.symbols.contains_key(&key) || self.inherited.contains(&key) {
                    self.symbols.insert(key.clone(), symbol);
                    self.inherited.insert(key.clone());
                    from.insert(key, base.clone());
                }
            }
            let templates: Vec<(String, Vec<usize>)> = self
                .template_names
                .iter()
                .filter_map(|(k, t)| {
                    let rest = k.strip_prefix(&prefix)?;
                    inheritable(rest, own).then(|| (format!("{derived}::{rest}"), t.clone()))
                })
                .collect();
            for (key, list) in templates {
                if !self.template_names.contains_key(&key) || self.inherited.contains(&key) {
                    self.template_names.insert(key.clone(), list);
                    self.inherited.insert(key);
                }
            }
        }
    }

    /// [`Program::inherit_names`] for every struct with bases, bases first
    /// (a struct is declared after its bases, so in id order).
    pub(super) fn inherit_all_names(&mut self) {
        for i in 0..self.structs.0.len() {
            let id = StructId(i as u32);
            if !self.structs.get(id).bases.is_empty() {
                self.inherit_names(id);
            }
        }
    }

    /// Whether struct `derived` is `base` or derives from it, directly or
    /// through other bases.
    pub fn derives_from(&self, derived: StructId, base: StructId) -> bool {
        derived == base
            || self
                .structs
                .get(derived)
                .bases
                .iter()
                .any(|&b| self.derives_from(b, base))
    }

    /// The base subobjects from `derived` down to `base`, each as the base
    /// struct and the member that holds it (`None` for an empty base);
    /// `None` when `base` is not a base of `derived`.
    pub fn base_path(
        &self,
        derived: StructId,
        base: StructId,
    ) -> Option<Vec<(StructId, Option<String>)>> {
        if derived == base {
            return Some(Vec::new());
        }
        let def = self.structs.get(derived);
        for (k, &b) in def.bases.iter().enumerate() {
            let name = ast::base_member_name(k);
            let member = def.members.iter().any(|m| m.name == name).then_some(name);
            if let Some(mut rest) = self.base_path(b, base) {
                rest.insert(0, (b, member));
                return Some(rest);
            }
        }
        None
    }
}

/// The last component of a struct's name, without template arguments: the
/// name of its constructors (`B` of `ns::B<float>`).
pub fn short_name(name: &str) -> &str {
    let plain = name.split('<').next().unwrap_or(name);
    plain.rsplit("::").next().unwrap_or(plain)
}

/// Whether member `rest` of a base named (shortly) `own` is inherited:
/// not its constructors, nor `operator=`.
fn inheritable(rest: &str, own: &str) -> bool {
    let name = rest.split('@').next().unwrap_or(rest);
    let plain = name.split('<').next().unwrap_or(name);
    plain != own && name != "operator=" && !name.starts_with('~')
}
