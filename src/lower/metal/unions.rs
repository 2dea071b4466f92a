//! `union`s. Metal (C++ [class.union]) starts every member at offset 0 and
//! sizes the union as its largest member, rounded up to the largest
//! alignment; reading a member other than the one last written gives the
//! bytes written (the bit casts `union { float f; uint u; }` is used for).
//! WGSL has no unions and no way to view one value's bytes as another type.
//!
//! The mapping: a union *value* is its bytes as 32-bit words, the WGSL
//! struct `{ words: array<u32, N> }` (N = the Metal size in words, rounded
//! up). An *object* holding a union (a union, or an array or struct with one)
//! lives in a word view (`word_views.rs`): in a buffer or threadgroup
//! memory, the buffer's; in function memory, a `var<private>` word array
//! of its own per declaration. Metal forbids recursion, so no two
//! activations of a function are live at once and one storage per
//! declaration is enough. Member accesses are then byte places at offset 0
//! (`layout::struct_layout`), loaded and stored by the word views' code,
//! which reinterprets the bytes as Metal does.

use crate::diagnostics::Code;
use crate::layout;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{BytePlace, Local, Value};
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval::ConstValue;
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{Scalar, StructId, Type};
use naga::{Expression, Handle, Statement, TypeInner};

/// How the names of members holding anonymous unions and structs start
/// (`ast::anonymous_member_name`).
const ANONYMOUS_PREFIX: &str = "anonymous::";

/// The name of the one member of a union's WGSL struct.
const WORDS_MEMBER: &str = "words";

impl Lowerer<'_, '_> {
    /// True if `ty` is a union, or an array or struct holding one.
    pub(in crate::lower) fn holds_union(&self, ty: &Type) -> bool {
        let structs = &self.program.structs;
        structs.holds(
            ty,
            &|t| matches!(t, Type::Struct(id) if structs.get(*id).is_union),
        )
    }

    /// The anonymous members (`union { .. };`) and base class subobjects
    /// (`sema/inheritance.rs`) of struct `id` through which its member
    /// `name` is reached, outermost first, each with the struct it holds;
    /// `None` if none holds `name`. The first in declaration order wins
    /// (C++ would call a name that two bases declare ambiguous).
    pub(in crate::lower) fn anonymous_path(
        &self,
        id: StructId,
        name: &str,
    ) -> Option<Vec<(String, StructId)>> {
        let structs = &self.program.structs;
        for m in &structs.get(id).members {
            let Type::Struct(inner) = m.ty else { continue };
            if !m.name.starts_with(ANONYMOUS_PREFIX) && !ast::is_base_member(&m.name) {
                continue;
            }
            let hop = (m.name.clone(), inner);
            if structs.get(inner).members.iter().any(|x| x.name == name) {
                return Some(vec![hop]);
            }
            if let Some(mut rest) = self.anonymous_path(inner, name) {
                rest.insert(0, hop);
                return Some(rest);
            }
        }
        None
    }

    /// Whether `g` is storage of its own (`var<private>`), which no other
    /// thread sees: its sub-word stores need no atomics.
    pub(in crate::lower) fn is_private_words(&self, g: Handle<naga::GlobalVariable>) -> bool {
        self.global.module.global_variables[g].space == naga::AddressSpace::Private
    }

    /// The naga type of union `id`'s values: its bytes as words.
    pub(in crate::lower) fn union_inner(&mut self, id: StructId, span: Span) -> Result<TypeInner> {
        let size = layout::metal(&Type::Struct(id), &self.program.structs).size;
        let words = self.word_array(layout::union_words(size), span)?;
        self.natural_struct(vec![(WORDS_MEMBER.into(), words)], span)
    }

    /// `array<u32, n>`.
    fn word_array(&mut self, n: u32, span: Span) -> Result<Handle<naga::Type>> {
        self.naga_type(&Type::Array(Box::new(Type::UINT), n), span)
    }

    /// Storage of its own for an object of type `ty` (which holds a union),
    /// zeroed as a WGSL variable starts: a word view at offset 0.
    pub(in crate::lower) fn union_storage(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        ty: &Type,
        writable: bool,
        span: Span,
    ) -> Result<BytePlace> {
        let size = layout::metal(ty, &self.program.structs).size;
        let words = self.word_array(layout::union_words(size), span)?;
        let global = self.global.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(name.to_string()),
                space: naga::AddressSpace::Private,
                binding: None,
                ty: words,
                init: None,
                memory_decorations: Default::default(),
            },
            naga::Span::UNDEFINED,
        );
        self.global.word_views.insert(global, false);
        let pointer = fx.add(Expression::GlobalVariable(global), span);
        let value = fx.add(Expression::ZeroValue(words), span);
        fx.push(Statement::Store { pointer, value }, span);
        let offset = fx.add(Expression::Literal(naga::Literal::U32(0)), span);
        Ok(BytePlace {
            global,
            offset,
            ty: ty.clone(),
            writable,
        })
    }

    /// Declares `threadgroup` variable `decl` of type `ty` (which holds a
    /// union): a word view of atomic words, so that threads writing
    /// neighbouring bytes of one word at once all keep their bytes.
    pub(in crate::lower) fn threadgroup_union(
        &mut self,
        fx: &mut FnCtx,
        decl: &ast::Declarator,
        ty: &Type,
        writable: bool,
    ) -> Result<()> {
        let size = layout::metal(ty, &self.program.structs).size;
        let atomic = Type::Array(
            Box::new(Type::Atomic(Scalar::UInt)),
            layout::union_words(size),
        );
        let words = self.naga_type(&atomic, decl.name.span)?;
        let global = self.threadgroup_global(decl, ty, words);
        self.global.word_views.insert(global, true);
        let offset = fx.add(Expression::Literal(naga::Literal::U32(0)), decl.span);
        let place = BytePlace {
            global,
            offset,
            ty: ty.clone(),
            writable,
        };
        if !fx.declare(&decl.name.name, Local::Bytes(place)) {
            return Err(Error::coded(
                Code::Redefinition,
                decl.name.span,
                format!("redefinition of `{}`", decl.name.name),
            ));
        }
        Ok(())
    }

    /// The local a declaration or by-value parameter of a type holding a
    /// union becomes: the function variable `var` (already initialised),
    /// copied into storage of its own.
    pub(in crate::lower) fn union_local(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        var: Handle<naga::LocalVariable>,
        ty: &Type,
        is_const: bool,
        span: Span,
    ) -> Result<Local> {
        let place = self.union_storage(fx, name, ty, !is_const, span)?;
        let pointer = fx.add(Expression::LocalVariable(var), span);
        let value = fx.add(Expression::Load { pointer }, span);
        self.bytes_store(
            fx,
            &BytePlace {
                writable: true,
                ..place.clone()
            },
            value,
            span,
        )?;
        Ok(Local::Bytes(place))
    }

    /// A union value that is not in a word view (a value, or a place in a
    /// function variable), as a byte place: copied into storage of its own,
    /// so its members can be read. Writes to it are not seen by `base`, so
    /// it is read-only.
    pub(in crate::lower) fn union_bytes(
        &mut self,
        fx: &mut FnCtx,
        base: Value,
        ty: &Type,
        span: Span,
    ) -> Result<Value> {
        let (value, _) = self.load(fx, base, span)?;
        let place = self.union_storage(fx, "union_value", ty, true, span)?;
        self.bytes_store(fx, &place, value, span)?;
        Ok(Value::Bytes(BytePlace {
            writable: false,
            ..place
        }))
    }

    /// The value of union `id` whose member `index` holds `value` (the
    /// others' bytes beyond it zero): `U u = {x};` initializes member 0.
    pub(in crate::lower) fn union_from_member(
        &mut self,
        fx: &mut FnCtx,
        id: StructId,
        index: usize,
        value: Handle<Expression>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let ty = Type::Struct(id);
        let place = self.union_storage(fx, "union_value", &ty, true, span)?;
        let member = BytePlace {
            ty: self.program.structs.get(id).members[index].ty.clone(),
            ..place.clone()
        };
        self.bytes_store(fx, &member, value, span)?;
        self.union_load(fx, &place, id, span)
    }

    /// The bytes of the piece of a union `k` bytes into it: a whole word
    /// where the union is 4-aligned, else 2- or 1-byte pieces (a union of
    /// `ushort`s may start at any even offset of its word).
    fn piece(&self, id: StructId) -> Scalar {
        match layout::metal(&Type::Struct(id), &self.program.structs).align {
            1 => Scalar::UChar,
            2 => Scalar::UShort,
            _ => Scalar::UInt,
        }
    }

    /// Loads union `id` from a byte place: its words.
    pub(in crate::lower) fn union_load(
        &mut self,
        fx: &mut FnCtx,
        p: &BytePlace,
        id: StructId,
        span: Span,
    ) -> Result<Handle<Expression>> {
        let size = layout::metal(&Type::Struct(id), &self.program.structs).size;
        let piece = self.piece(id);
        let mut words = Vec::new();
        for w in 0..layout::union_words(size) {
            let mut word = None;
            for at in (4 * w..(4 * w + 4).min(size)).step_by(piece.size() as usize) {
                let offset = self.add_offset(fx, p.offset, at, span);
                let part = BytePlace {
                    offset,
                    ty: Type::Scalar(piece),
                    ..p.clone()
                };
                let (bits, _) = self.bytes_load(fx, &part, span)?;
                let shift = fx.add(Expression::Literal(naga::Literal::U32(8 * (at % 4))), span);
                let placed = binary(fx, naga::BinaryOperator::ShiftLeft, bits, shift, span);
                word = Some(match word {
                    Some(acc) => binary(fx, naga::BinaryOperator::InclusiveOr, acc, placed, span),
                    None => placed,
                });
            }
            words.push(word.expect("a word holds at least one piece"));
        }
        let array = self.word_array(words.len() as u32, span)?;
        let words = fx.add(
            Expression::Compose {
                ty: array,
                components: words,
            },
            span,
        );
        let ty = self.naga_type(&Type::Struct(id), span)?;
        Ok(fx.add(
            Expression::Compose {
                ty,
                components: vec![words],
            },
            span,
        ))
    }

    /// Stores the words `value` of union `id` at a byte place.
    pub(in crate::lower) fn union_store(
        &mut self,
        fx: &mut FnCtx,
        p: &BytePlace,
        id: StructId,
        value: Handle<Expression>,
        span: Span,
    ) -> Result<()> {
        let size = layout::metal(&Type::Struct(id), &self.program.structs).size;
        let piece = self.piece(id);
        let words = fx.add(
            Expression::AccessIndex {
                base: value,
                index: 0,
            },
            span,
        );
        for w in 0..layout::union_words(size) {
            let word = fx.add(
                Expression::AccessIndex {
                    base: words,
                    index: w,
                },
                span,
            );
            for at in (4 * w..(4 * w + 4).min(size)).step_by(piece.size() as usize) {
                let bits = match piece {
                    Scalar::UInt => word,
                    _ => {
                        let shift = 8 * (at % 4);
                        let mask = (1u32 << (8 * piece.size())) - 1;
                        let shift = fx.add(Expression::Literal(naga::Literal::U32(shift)), span);
                        let shifted =
                            binary(fx, naga::BinaryOperator::ShiftRight, word, shift, span);
                        let mask = fx.add(Expression::Literal(naga::Literal::U32(mask)), span);
                        binary(fx, naga::BinaryOperator::And, shifted, mask, span)
                    }
                };
                let offset = self.add_offset(fx, p.offset, at, span);
                let part = BytePlace {
                    offset,
                    ty: Type::Scalar(piece),
                    ..p.clone()
                };
                self.bytes_store(fx, &part, bits, span)?;
            }
        }
        Ok(())
    }
}

fn binary(
    fx: &mut FnCtx,
    op: naga::BinaryOperator,
    left: Handle<Expression>,
    right: Handle<Expression>,
    span: Span,
) -> Handle<Expression> {
    fx.add(Expression::Binary { op, left, right }, span)
}

impl Lowerer<'_, '_> {
    /// A constant of union `id` (`constant U c = {2.0f};`): the bytes of
    /// its first member's value `items[0]` in Metal's layout, as words.
    pub(in crate::lower) fn union_const_expr(
        &mut self,
        id: StructId,
        items: &[ConstValue],
        span: Span,
    ) -> Result<Handle<Expression>> {
        let size = layout::metal(&Type::Struct(id), &self.program.structs).size;
        let mut bytes = vec![0u8; 4 * layout::union_words(size) as usize];
        if let Some(first) = items.first() {
            self.const_bytes(first, &mut bytes, 0);
        }
        let mut words = Vec::new();
        for w in bytes.chunks_exact(4) {
            let word = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            words.push(self.global_expr(Expression::Literal(naga::Literal::U32(word))));
        }
        let array = self.word_array(words.len() as u32, span)?;
        let words = self.global_expr(Expression::Compose {
            ty: array,
            components: words,
        });
        let ty = self.naga_type(&Type::Struct(id), span)?;
        Ok(self.global_expr(Expression::Compose {
            ty,
            components: vec![words],
        }))
    }

    fn global_expr(&mut self, e: Expression) -> Handle<Expression> {
        self.global
            .module
            .global_expressions
            .append(e, naga::Span::UNDEFINED)
    }

    /// Writes constant `v` into `out` at byte `at`, in Metal's layout.
    fn const_bytes(&self, v: &ConstValue, out: &mut [u8], at: usize) {
        let structs = &self.program.structs;
        match v {
            ConstValue::Bool(b) => out[at] = u8::from(*b),
            ConstValue::Int(n, s) => {
                let size = s.size() as usize;
                out[at..at + size].copy_from_slice(&n.to_le_bytes()[..size]);
            }
            ConstValue::Float(f, s) => {
                let bits: Vec<u8> = match s {
                    Scalar::Half => half::f16::from_f64(*f).to_bits().to_le_bytes().to_vec(),
                    Scalar::BFloat => half::bf16::from_f64(*f).to_bits().to_le_bytes().to_vec(),
                    _ => (*f as f32).to_bits().to_le_bytes().to_vec(),
                };
                out[at..at + bits.len()].copy_from_slice(&bits);
            }
            ConstValue::Composite(ty, items) => {
                let offsets: Vec<u32> = match ty {
                    Type::Struct(id) => layout::struct_layout(*id, structs).offsets,
                    Type::Array(e, _) => {
                        let stride = layout::metal(e, structs).size;
                        (0..items.len() as u32).map(|i| i * stride).collect()
                    }
                    Type::Matrix { scalar, rows, .. } => {
                        let stride = layout::metal(&Type::Vector(*scalar, *rows), structs).size;
                        (0..items.len() as u32).map(|i| i * stride).collect()
                    }
                    other => {
                        let lane = other.element_scalar().map_or(4, Scalar::size);
                        (0..items.len() as u32).map(|i| i * lane).collect()
                    }
                };
                if matches!(ty, Type::Struct(id) if structs.get(*id).is_union) {
                    if let Some(first) = items.first() {
                        self.const_bytes(first, out, at);
                    }
                    return;
                }
                for (item, offset) in items.iter().zip(offsets) {
                    self.const_bytes(item, out, at + offset as usize);
                }
            }
        }
    }
}
