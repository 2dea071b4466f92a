//! Structs with pointer members to structs defined after them (`struct T;
//! struct S { device T* p; }; struct T { .. };`), as SPIR-V Cross writes
//! them for every struct a pointer names.
//!
//! C++ lets a pointer name an incomplete type; the analysis resolves a
//! member's type when its struct is declared, so such a struct waits: it
//! is declared as soon as the structs its members name are, in source
//! order otherwise. A struct that reaches itself through its members (`struct
//! Node { device Node* next; };`, or two structs pointing to each other)
//! can never be declared that way: in `device`, `constant` or
//! `threadgroup` memory it is a linked structure of GPU addresses stored in
//! memory (Vulkan's buffer device addresses), which WebGPU has no
//! equivalent of; in `thread` memory it stays a translation limit.

use super::{Error, Program};
use crate::diagnostics::Code;
use crate::syntax::ast::{self, AddressSpace, Item};
use std::collections::HashSet;

impl<'a> Program<'a> {
    /// Whether struct `s` must wait: a member names a struct defined later
    /// through a pointer (one that does not lead back to `s`), or names a
    /// struct in `waiting`.
    pub(super) fn waits_for_later_struct(
        &self,
        s: &ast::StructDecl,
        waiting: &[(usize, &Item)],
    ) -> bool {
        s.members.iter().any(|m| {
            if m.ty.ptr_ops.is_empty() && waiting.is_empty() {
                return false;
            }
            let name = m.ty.name();
            if waiting
                .iter()
                .any(|(_, w)| matches!(w, Item::Struct(w) if w.name.name == name))
            {
                return true;
            }
            is_pointer(&m.ty)
                && self.later_struct(&name)
                && !self.reaches(&name, &s.name.name, &mut HashSet::new())
        })
    }

    /// Declares the structs of `waiting` that no longer wait (all of them
    /// with `all`, whose errors then say what is missing), as many rounds
    /// as each declaration lets another through.
    pub(super) fn declare_ready(
        &mut self,
        waiting: &mut Vec<(usize, &'a Item)>,
        all: bool,
        errors: &mut Vec<Error>,
    ) {
        loop {
            let ready = waiting.iter().position(|(k, item)| {
                let Item::Struct(s) = item else { return true };
                let others: Vec<_> = waiting.iter().filter(|(j, _)| j != k).copied().collect();
                all || !self.waits_for_later_struct(s, &others)
            });
            let Some(k) = ready else { return };
            let (_, item) = waiting.remove(k);
            if let Err(e) = self.declare(item) {
                errors.push(e.or_at(super::item_span(item)));
            }
        }
    }

    /// Whether `name` is a struct of the program not declared yet.
    fn later_struct(&self, name: &str) -> bool {
        !self.symbols.contains_key(name) && self.struct_names.contains(name)
    }

    /// The error for member type `ts` of struct `owner` when it points to
    /// a struct not declared yet, which (waiting having failed) reaches
    /// `owner` again through its members.
    pub(super) fn pointer_to_later_struct(&self, owner: &str, ts: &ast::TypeSpec) -> Option<Error> {
        let name = ts.name();
        if !is_pointer(ts) || !self.later_struct(&name) {
            return None;
        }
        if !self.reaches(&name, owner, &mut HashSet::new()) {
            // Its definition failed (and said why).
            return Some(Error::coded(
                Code::Unsupported,
                ts.span,
                format!("a pointer member to `{name}`, whose definition has errors"),
            ));
        }
        let space = ts.space.map(|(s, _)| s);
        if matches!(
            space,
            Some(AddressSpace::Device | AddressSpace::Constant | AddressSpace::Threadgroup)
        ) {
            let cycle = if name == owner {
                format!("`{owner}` points to its own type")
            } else {
                format!("`{owner}` points to `{name}`, which leads back to `{owner}`")
            };
            return Some(
                Error::coded(
                    Code::NoWebGpuEquivalent,
                    ts.span,
                    format!("a linked structure in memory has no WebGPU equivalent: {cycle}, so each object of it in memory holds a pointer, a GPU address stored in memory (Vulkan's buffer device addresses), while WGSL reaches memory only through the variables it declares"),
                )
                .note("a port stores indices instead of pointers: the nodes in one buffer (an array of the struct), each link the index of the next node in that array"),
            );
        }
        Some(
            Error::coded(
                Code::Unsupported,
                ts.span,
                format!("a pointer member to `{name}`, which leads back to `{owner}` (a struct pointing to its own type), is not supported"),
            )
            .note("a translation keeps objects with pointer members as values known at translation time, which a linked structure is not"),
        )
    }
}

/// A pointer or reference (not a template such as `vec<T, N>*`).
fn is_pointer(ts: &ast::TypeSpec) -> bool {
    ts.args.is_empty() && !ts.ptr_ops.is_empty()
}

impl Program<'_> {
    /// Whether struct `from` names `target` through its members (by value
    /// or through pointers, transitively).
    fn reaches(&self, from: &str, target: &str, seen: &mut HashSet<String>) -> bool {
        if !seen.insert(from.to_string()) {
            return false;
        }
        let decl = self.items.iter().find_map(|item| match item {
            Item::Struct(s) if s.name.name == from => Some(s),
            _ => None,
        });
        decl.is_some_and(|s| {
            s.members.iter().any(|m| {
                let name = m.ty.name();
                name == target || self.reaches(&name, target, seen)
            })
        })
    }
}
