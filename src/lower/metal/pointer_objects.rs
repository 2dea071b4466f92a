//! Local objects of structs that hold pointers, built by constructors and
//! advanced by member functions.
//!
//! Metal: a `thread` object may hold pointers into device and threadgroup
//! memory next to plain values; its constructor sets them from its
//! arguments and its member functions move them (MLX's GEMM block loader:
//! `BlockLoader(const device T* src_, .., threadgroup T* dst_, ..) : dst(dst_
//! + ..), src(src_ + ..) {}`, `void next() thread { src += tile_stride; }`,
//! `void load_unsafe() const thread { dst[..] = src[..]; }`).
//!
//! WGSL: no struct holds a pointer, and a storage pointer is no function
//! parameter, so such an object is no WGSL value.
//!
//! Mapping: the object is scalarised, an [`Aggregate`] whose members are
//! its own storage (`owned`): each plain member a local variable, each
//! pointer member a [`PtrCell`], its element index in a `u32` local and its
//! root (the kernel buffer or threadgroup variable it points into) fixed at
//! translation time by the member's first assignment (an array of pointers,
//! `const device T* src[n]`, one root for all, its indices in an
//! `array<u32, n>`). A function that returns such an object (a constructor,
//! `S S::S(..) { S this; ..; return this; }`) has its body lowered in place
//! (`metal/inlined_calls.rs`): no WGSL function could return it. A member
//! function is a helper as any
//! other, specialised per member: a `const` one receives each member's
//! value (a pointer as its root's element index), a non-const one (`this`
//! a `thread S&`) a `ptr<function, T>` to each plain member and a
//! `ptr<function, u32>` to each pointer member's index, so that `src +=
//! n` moves the caller's object. Assigning a pointer member a pointer into
//! another root than its first assignment gave it is refused (E0407).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::arg_type;
use crate::lower::ctx::value::{Aggregate, Arg, Local, Place, PtrCell, PtrValue, Value};
use crate::lower::metal::pointer_members::is_pointer_reference;
use crate::lower::{ArgKey, Error, Lowerer, Result};
use crate::sema::consteval::ConstValue;
use crate::source_map::Span;
use crate::syntax::ast::{BinaryOp, Expr, ExprKind, Init};
use crate::types::{AddressSpace, Type};
use naga::{Expression, Handle, Statement};
use std::cell::RefCell;
use std::rc::Rc;

impl Lowerer<'_, '_> {
    /// A new object of struct of places `ty` (`S s;`, a constructor's `S
    /// this;`) named `name`: its plain members are variables (holding their
    /// default member initializers), its pointer members cells whose root
    /// the first assignment fixes. Members that are references, textures,
    /// samplers, arrays of them or structs holding them are refused: they
    /// cannot be set after the object is made.
    pub(in crate::lower) fn fresh_aggregate(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        name: &str,
        span: Span,
    ) -> Result<Aggregate> {
        let Type::Struct(id) = ty else {
            unreachable!("a struct of places is a struct")
        };
        let members = self.program.structs.get(*id).members.clone();
        let mut values = Vec::new();
        for (i, m) in members.iter().enumerate() {
            let var_name = format!("{name}_{}", m.name);
            values.push(self.fresh_member(fx, ty, i, &var_name, span)?);
        }
        Ok(Aggregate {
            ty: ty.clone(),
            members: values,
            pointer: None,
            owned: true,
        })
    }

    /// Member `i` of a new object of struct of places `ty`
    /// ([`Self::fresh_aggregate`]), its variable named `var_name`: a plain
    /// member a variable (holding its default member initializer), a
    /// pointer member a cell.
    fn fresh_member(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        i: usize,
        var_name: &str,
        span: Span,
    ) -> Result<Value> {
        let Type::Struct(id) = ty else {
            unreachable!("a struct of places is a struct")
        };
        let m = self.program.structs.get(*id).members[i].clone();
        let (member, mty) = (m.name, &m.ty);
        let defaults = self.program.has_member_defaults(ty);
        // A pointer member's cell holds its element index in a `u32`
        // variable; an array of pointers' one root for every element, and
        // its indices in an `array<u32, n>`.
        let cell = match mty {
            Type::Pointer(pp) if !pp.is_reference => Some((pp, None)),
            Type::Array(elem, n) => match &**elem {
                Type::Pointer(pp) if !pp.is_reference => Some((pp, Some(*n))),
                _ => None,
            },
            _ => None,
        };
        if let Some((pp, count)) = cell {
            let indices = match count {
                Some(n) => Type::Array(Box::new(Type::UINT), n),
                None => Type::UINT,
            };
            let th = self.naga_type(&indices, span)?;
            let var = fx.local(var_name, th, span);
            return Ok(Value::Cell(PtrCell {
                index: fx.add(Expression::LocalVariable(var), span),
                target: Rc::new(RefCell::new(None)),
                ty: (**pp).clone(),
                member,
                count,
                addressed: false,
            }));
        }
        Ok(match mty {
            t if self.place_struct_target(t).is_some()
                || matches!(
                    t,
                    Type::Pointer(_) | Type::Texture(_) | Type::Sampler { .. }
                )
                || self.is_resource_array(t) =>
            {
                return Err(self.unheld_member_error(ty, &member, t, span));
            }
            t => {
                let th = self.naga_type(t, span)?;
                let var = fx.local(var_name, th, span);
                let ptr = fx.add(Expression::LocalVariable(var), span);
                if defaults {
                    let v = ConstValue::default_member(*id, i, self.program);
                    let v = self.const_value(fx, &v, span);
                    let (h, _) = self.load(fx, v, span)?;
                    fx.push(
                        Statement::Store {
                            pointer: ptr,
                            value: h,
                        },
                        span,
                    );
                }
                // Writable even when the member is `const`: the
                // constructor's initializer list assigns it.
                Value::Place(Place {
                    ptr,
                    ty: t.clone(),
                    writable: true,
                })
            }
        })
    }

    /// Names the variables of object `a` after `name` (`loader_src`), when
    /// they are its own: those a constructor made for its `this`.
    pub(in crate::lower) fn name_aggregate(&self, fx: &mut FnCtx, a: &Aggregate, name: &str) {
        let Type::Struct(id) = a.ty else {
            return;
        };
        if !a.owned {
            return;
        }
        let members = &self.program.structs.get(id).members;
        for (m, v) in members.iter().zip(&a.members) {
            let ptr = match v {
                Value::Place(p) => p.ptr,
                Value::Cell(c) => c.index,
                _ => continue,
            };
            if let Expression::LocalVariable(var) = *fx.expr(ptr) {
                fx.function.local_variables[var].name = Some(format!("{name}_{}", m.name));
            }
        }
    }

    /// The error for member `member` (of type `mty`) of struct `ty`, which a
    /// local object built member by member cannot hold.
    fn unheld_member_error(&self, ty: &Type, member: &str, mty: &Type, span: Span) -> Error {
        Error::coded(
            Code::PointerMember,
            span,
            format!(
                "a local `{}` cannot be built member by member: member `{member}` of type `{}` would have to be known when the object is declared",
                self.program.display(ty),
                self.program.display(mty)
            ),
        )
        .note("WGSL stores no pointers: a local object holding pointers is translated member by member, each pointer member as its buffer or threadgroup variable (fixed at translation time) plus an element index; references, textures, samplers and nested structs of them are not supported there yet")
    }

    /// The value of a cell: the pointer it holds now.
    pub(in crate::lower) fn read_cell(
        &mut self,
        fx: &mut FnCtx,
        c: &PtrCell,
        span: Span,
    ) -> Result<Value> {
        if c.count.is_some() {
            return Err(Error::coded(
                Code::PointerMember,
                span,
                format!(
                    "the array of pointers `{}` can only be indexed: WGSL stores no pointers",
                    c.member
                ),
            ));
        }
        let Some(target) = c.target.borrow().clone() else {
            return Err(Error::coded(
                Code::InvalidInitializer,
                span,
                format!(
                    "pointer member `{}` is read before anything is assigned to it",
                    c.member
                ),
            )
            .note("a pointer member is translated as the buffer or variable it points into, fixed by its first assignment, plus an index"));
        };
        let index = fx.add(Expression::Load { pointer: c.index }, span);
        Ok(Value::Ptr(PtrValue { index, ..target }))
    }

    /// A member value as an expression reads it: a cell's pointer, any
    /// other member as it is.
    pub(in crate::lower) fn member_read(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        span: Span,
    ) -> Result<Value> {
        match v {
            // An array of pointers is indexed first (`cell_element`).
            Value::Cell(c) if c.count.is_some() => Ok(Value::Cell(c)),
            Value::Cell(c) => self.read_cell(fx, &c, span),
            v => Ok(v),
        }
    }

    /// Makes cell `c` hold pointer `q`: the first assignment fixes its root,
    /// later ones must point into the same root.
    fn set_cell(&mut self, fx: &mut FnCtx, c: &PtrCell, q: &PtrValue, span: Span) -> Result<()> {
        self.fix_root(fx, c, q, span)?;
        fx.push(
            Statement::Store {
                pointer: c.index,
                value: q.index,
            },
            span,
        );
        Ok(())
    }

    /// Fixes the root of cell `c` to `q`'s, or checks that it is `q`'s.
    fn fix_root(&mut self, fx: &mut FnCtx, c: &PtrCell, q: &PtrValue, span: Span) -> Result<()> {
        let current = c.target.borrow().clone();
        match current {
            None => {
                let buffers =
                    |s: AddressSpace| matches!(s, AddressSpace::Device | AddressSpace::Constant);
                let space_ok = q.space == c.ty.space || (buffers(q.space) && buffers(c.ty.space));
                let pointee_ok =
                    q.pointee.unpacked() == c.ty.pointee.unpacked() || c.ty.pointee == Type::Void;
                if !pointee_ok || !space_ok || (q.is_const && !c.ty.is_const) {
                    return Err(Error::coded(
                        Code::TypeMismatch,
                        span,
                        format!(
                            "cannot assign a `{}` pointer to `{}` to member `{}`, a `{}`",
                            q.space.name(),
                            self.program.display(&q.pointee),
                            c.member,
                            self.program.display(&Type::Pointer(Box::new(c.ty.clone())))
                        ),
                    ));
                }
                *c.target.borrow_mut() = Some(PtrValue {
                    pointee: c.ty.pointee.clone(),
                    space: c.ty.space,
                    is_const: c.ty.is_const || q.is_const,
                    ..q.clone()
                });
            }
            Some(t) if !self.same_object(fx, &t.root, &q.root) => {
                return Err(Error::coded(
                    Code::PointerMember,
                    span,
                    format!(
                        "member `{}` points into {}; it cannot be made to point into {}",
                        c.member,
                        self.root_description(fx, &t.root),
                        self.root_description(fx, &q.root)
                    ),
                )
                .note("WGSL stores no pointers: a pointer member is translated as the buffer or variable it first points into, fixed at translation time, plus an element index that may change")
                .note("index the buffers instead, or keep one object per buffer"));
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// The cell that `e` names: `o.p` for a local object `o` (`this.p`
    /// too), or a member `p` of `this` named alone in a member function.
    pub(in crate::lower) fn cell_of(&mut self, fx: &mut FnCtx, e: &Expr) -> Option<PtrCell> {
        match &e.kind {
            // A local array of pointers (`metal/pointer_addresses.rs`).
            ExprKind::Name(path)
                if path.len() == 1
                    && matches!(fx.lookup(&path[0]), Some(Local::Cell(c)) if !c.addressed) =>
            {
                match fx.lookup(&path[0]) {
                    Some(Local::Cell(c)) => Some(c.clone()),
                    _ => None,
                }
            }
            ExprKind::Name(path) if path.len() == 1 && fx.lookup(&path[0]).is_none() => {
                let member = self.implicit_member(fx, &path[0], e.span)?;
                self.cell_of(fx, &member)
            }
            // `ps[0]`, `*ps` of a pointer to a pointer variable.
            ExprKind::Index(base, index) if self.addressed_cell(fx, base).is_some() => {
                let c = self.addressed_cell(fx, base)?;
                let (hi, _) = self.rvalue(fx, index).ok()?;
                let _ = hi;
                Some(PtrCell {
                    addressed: false,
                    ..c
                })
            }
            ExprKind::Unary(crate::syntax::ast::UnaryOp::Deref, base) => {
                let c = self.addressed_cell(fx, base)?;
                Some(PtrCell {
                    addressed: false,
                    ..c
                })
            }
            // `o.src[i]`: an element of an array of pointers.
            ExprKind::Index(base, index) => {
                let array = self.cell_of(fx, base)?;
                array.count?;
                let (hi, _) = self.rvalue(fx, index).ok()?;
                Some(self.cell_element(fx, &array, hi, e.span))
            }
            ExprKind::Member(base, m, false) => {
                let ExprKind::Name(path) = &base.kind else {
                    return None;
                };
                let [name] = path.as_slice() else {
                    return None;
                };
                let Some(Local::Agg(a)) = fx.lookup(name) else {
                    return None;
                };
                let Type::Struct(id) = a.ty else {
                    return None;
                };
                let i =
                    (self.program.structs.get(id).members.iter()).position(|x| x.name == m.name)?;
                match &a.members[i] {
                    Value::Cell(c) => Some(c.clone()),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `o.p = q;`, `o.p += n;`, `src -= n;` in a member function: an
    /// assignment to a pointer member held in a cell; `None` when `lhs`
    /// names no such member.
    pub(in crate::lower) fn assign_cell(
        &mut self,
        fx: &mut FnCtx,
        op: Option<BinaryOp>,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
    ) -> Option<Result<Value>> {
        let c = self.cell_of(fx, lhs)?;
        Some((|| {
            let new = match op {
                None => self.expr(fx, rhs)?,
                Some(op @ (BinaryOp::Add | BinaryOp::Sub)) => {
                    let Value::Ptr(p) = self.read_cell(fx, &c, lhs.span)? else {
                        unreachable!("a cell holds a pointer")
                    };
                    self.pointer_arithmetic(fx, op, p, rhs, span)?
                }
                Some(_) => {
                    return Err(Error::coded(
                        Code::InvalidOperands,
                        span,
                        "invalid pointer arithmetic",
                    ))
                }
            };
            let Value::Ptr(q) = new else {
                return Err(Error::coded(
                    Code::TypeMismatch,
                    rhs.span,
                    format!("assigning a non-pointer to pointer member `{}`", c.member),
                ));
            };
            self.set_cell(fx, &c, &q, span)?;
            Ok(Value::Ptr(q))
        })())
    }

    /// True if `e` names a pointer member held in a cell (for `++`/`--`),
    /// told without lowering an index.
    pub(in crate::lower) fn names_cell(&mut self, fx: &mut FnCtx, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Index(base, _) if self.addressed_cell(fx, base).is_some() => true,
            ExprKind::Index(base, _) => self.cell_of(fx, base).is_some_and(|c| c.count.is_some()),
            _ => self.cell_of(fx, e).is_some_and(|c| c.count.is_none()),
        }
    }

    /// Element `hi` (an integer) of array cell `array`: a cell
    /// of its own, sharing the array's root.
    pub(in crate::lower) fn cell_element(
        &mut self,
        fx: &mut FnCtx,
        array: &PtrCell,
        hi: naga::Handle<Expression>,
        span: Span,
    ) -> PtrCell {
        let index = self.index_u32(fx, hi, span);
        PtrCell {
            index: fx.add(
                Expression::Access {
                    base: array.index,
                    index,
                },
                span,
            ),
            count: None,
            addressed: false,
            ..array.clone()
        }
    }

    /// A copy of object `src` named `name` (`S t = s;`, a by-value
    /// parameter): its own variables and cells, holding `src`'s values;
    /// its reference members (a closure's captures by reference) bind
    /// what `src`'s bind, as a copy of a reference does. An aggregate
    /// whose members are not its own storage names the same places, as
    /// before.
    pub(in crate::lower) fn copy_aggregate(
        &mut self,
        fx: &mut FnCtx,
        src: Aggregate,
        name: &str,
        span: Span,
    ) -> Result<Aggregate> {
        if !src.owned {
            return Ok(src);
        }
        let Type::Struct(id) = src.ty else {
            unreachable!("an object of its own storage is a struct")
        };
        let members = self.program.structs.get(id).members.clone();
        let mut values = Vec::new();
        for (i, (m, v)) in members.iter().zip(&src.members).enumerate() {
            values.push(match is_reference(&m.ty) {
                true => v.clone(),
                false => self.fresh_member(fx, &src.ty, i, &format!("{name}_{}", m.name), span)?,
            });
        }
        let dst = Aggregate {
            members: values,
            ..src.clone()
        };
        self.store_aggregate(fx, &dst, &src, span)?;
        Ok(dst)
    }

    /// `dst = src;` member by member, for an object `dst` whose members
    /// are its own storage; its reference members keep what they bind.
    pub(in crate::lower) fn store_aggregate(
        &mut self,
        fx: &mut FnCtx,
        dst: &Aggregate,
        src: &Aggregate,
        span: Span,
    ) -> Result<()> {
        let Type::Struct(id) = dst.ty else {
            unreachable!("an object of its own storage is a struct")
        };
        let members = self.program.structs.get(id).members.clone();
        for ((m, d), s) in members.iter().zip(&dst.members).zip(&src.members) {
            match (d, s) {
                // A reference is bound once, where the object is made
                // (`copy_aggregate` binds the copy's).
                _ if is_reference(&m.ty) => {}
                // A member not yet assigned stays so in the copy.
                (Value::Cell(_), Value::Cell(sc)) if sc.target.borrow().is_none() => {}
                // An array of pointers: its root, then every index.
                (Value::Cell(dc), Value::Cell(sc)) if dc.count.is_some() => {
                    let target = sc.target.borrow().clone().expect("checked above");
                    self.fix_root(fx, dc, &target, span)?;
                    let value = fx.add(Expression::Load { pointer: sc.index }, span);
                    fx.push(
                        Statement::Store {
                            pointer: dc.index,
                            value,
                        },
                        span,
                    );
                }
                (Value::Cell(dc), s) if dc.count.is_none() => {
                    let Value::Ptr(q) = self.member_read(fx, s.clone(), span)? else {
                        return Err(self.place_struct_value_error(&dst.ty, span));
                    };
                    self.set_cell(fx, dc, &q, span)?;
                }
                (Value::Place(p), s) => {
                    let s = self.member_read(fx, s.clone(), span)?;
                    let (h, _) = self.load(fx, s, span)?;
                    fx.push(
                        Statement::Store {
                            pointer: p.ptr,
                            value: h,
                        },
                        span,
                    );
                }
                // An array of pointers from an object that holds it
                // otherwise (an argument buffer's).
                _ => return Err(self.place_struct_value_error(&dst.ty, span)),
            }
        }
        Ok(())
    }

    /// A helper's parameter for a pointer member passed in its cell
    /// ([`crate::lower::ArgKey::Cell`]): the pointer as `inner` passes it
    /// (which fixes the root), then the index variable's pointer.
    pub(in crate::lower) fn cell_parameter(
        &mut self,
        fx: &mut FnCtx,
        pname: &str,
        mty: &Type,
        member: &str,
        inner: &crate::lower::ArgKey,
        span: Span,
    ) -> Result<PtrCell> {
        let (pp, count) = match mty {
            // A reference to a pointer (`T*&`) is the pointer's cell.
            Type::Pointer(r) if is_pointer_reference(mty) => match &r.pointee {
                Type::Pointer(pp) => (pp, None),
                _ => unreachable!("a reference to a pointer"),
            },
            Type::Pointer(pp) => (pp, None),
            Type::Array(elem, n) => match &**elem {
                Type::Pointer(pp) => (pp, Some(*n)),
                _ => unreachable!("a cell holds pointers"),
            },
            _ => unreachable!("a cell holds pointers"),
        };
        let pty = Type::Pointer(pp.clone());
        let first = fx.function.arguments.len();
        let local = match inner {
            crate::lower::ArgKey::Aggregate(_) | crate::lower::ArgKey::GlobalPath(..) => {
                self.place_parameter(fx, pname, &pty, inner, span)?
            }
            _ => self.parameter(fx, None, &pty, inner, span)?,
        };
        for arg in &mut fx.function.arguments[first..] {
            if arg
                .name
                .as_deref()
                .is_none_or(|n| n.starts_with("_unnamed"))
            {
                arg.name = Some(format!("{pname}_at"));
            }
        }
        let Local::Ptr(target) = local else {
            unreachable!("a pointer parameter is a pointer")
        };
        let indices = match count {
            Some(n) => Type::Array(Box::new(Type::UINT), n),
            None => Type::UINT,
        };
        let base = self.naga_type(&indices, span)?;
        let ptr_ty = self.function_pointer_type(base);
        let arg_index = fx.function.arguments.len() as u32;
        fx.function.arguments.push(naga::FunctionArgument {
            name: Some(format!("{pname}_index")),
            ty: ptr_ty,
            binding: None,
        });
        let index = fx.add(Expression::FunctionArgument(arg_index), span);
        Ok(PtrCell {
            index,
            target: Rc::new(RefCell::new(Some(target))),
            ty: (**pp).clone(),
            member: member.to_string(),
            count,
            addressed: false,
        })
    }

    /// A pointer standing for what cell `c` holds when it is passed: its
    /// value, or an array's first element (the callee takes the root from
    /// it, and the indices from the array).
    pub(in crate::lower) fn cell_representative(
        &mut self,
        fx: &mut FnCtx,
        c: &PtrCell,
        span: Span,
    ) -> Result<Value> {
        if c.count.is_none() {
            return self.read_cell(fx, c, span);
        }
        let zero = self.u32_lit(fx, 0, span);
        let first = self.cell_element(fx, c, zero, span);
        self.read_cell(fx, &first, span)
    }
}

impl Lowerer<'_, '_> {
    /// A local `S s = ...;` of a struct of places.
    pub(in crate::lower) fn aggregate_local(
        &mut self,
        fx: &mut FnCtx,
        decl: &crate::syntax::ast::Declarator,
        ty: &Type,
    ) -> Result<Local> {
        let name = &decl.name.name;
        let span = decl
            .init
            .as_ref()
            .map(|i| i.span())
            .unwrap_or(decl.name.span);
        // Whether the value is another object, which the new one copies
        // (a constructor's result is the new object itself).
        let mut copies = false;
        let v = match &decl.init {
            // `S s;`: its default constructor, else an object whose members
            // the code after sets (a constructor's own `S this;`:
            // `metal/pointer_objects.rs`).
            None => match self.default_constructor_unless_this(fx, ty, decl)? {
                Some(v) => v,
                None => Value::Agg(self.fresh_aggregate(fx, ty, name, decl.name.span)?),
            },
            Some(Init::List(items, span)) => self.braced_aggregate(fx, items, ty, *span)?,
            Some(Init::Expr(e)) => match &e.kind {
                ExprKind::InitList(items) => self.braced_aggregate(fx, items, ty, e.span)?,
                kind => {
                    copies = !matches!(kind, ExprKind::Call(..) | ExprKind::BraceConstruct(..));
                    self.expr(fx, e)?
                }
            },
            Some(Init::Paren(args, pspan)) => {
                let copy = match args.as_slice() {
                    [one] => self.type_of(fx, one)? == *ty,
                    _ => false,
                };
                if copy {
                    copies = true;
                    self.expr(fx, &args[0])?
                } else {
                    match self.call_constructor(fx, ty, args, *pspan)? {
                        Some(v) => v,
                        None => return Err(self.place_struct_value_error(ty, *pspan)),
                    }
                }
            }
            Some(i) => return Err(self.place_struct_value_error(ty, i.span())),
        };
        let a = self.same_aggregate(v, ty, span)?;
        Ok(Local::Agg(match copies {
            true => self.copy_aggregate(fx, a, name, span)?,
            false => {
                // A constructor's `this` is this object from here on.
                self.name_aggregate(fx, &a, name);
                a
            }
        }))
    }

    /// `S s;`: a call of `S`'s default constructor, if it declares one,
    /// but in a constructor's own `S this;`, which the constructor itself
    /// initialises.
    fn default_constructor_unless_this(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        decl: &crate::syntax::ast::Declarator,
    ) -> Result<Option<Value>> {
        if decl.name.name == "this" {
            return Ok(None);
        }
        self.default_constructor(fx, ty, decl.name.span)
    }

    /// `S s{a, b}`, `S s = {a, b}`: a constructor call when `S` declares
    /// constructors, else the members in order.
    fn braced_aggregate(
        &mut self,
        fx: &mut FnCtx,
        items: &[Init],
        ty: &Type,
        span: Span,
    ) -> Result<Value> {
        match self.brace_constructor(fx, ty, items, span)? {
            Some(v) => Ok(v),
            None => self.place_aggregate(fx, items, ty, span),
        }
    }

    /// How member value `v` (of type `mty`) of an object passed to a helper
    /// is passed: `by_ref`, a cell as its pointer plus its index variable
    /// and a variable of the object as a `thread` reference
    /// (`metal/pointer_objects.rs`); else as an argument of type `mty`.
    pub(in crate::lower) fn pass_member(
        &mut self,
        fx: &mut FnCtx,
        mty: &Type,
        v: Value,
        by_ref: bool,
        span: Span,
    ) -> Result<(ArgKey, Vec<Handle<Expression>>)> {
        let arg = |value: Value| Arg {
            ty: arg_type(&value),
            value,
            span,
        };
        match v {
            // An array of pointers is passed by reference in any case:
            // its elements are indexed with values known at run time. So
            // is a reference to a pointer (`T*&`, a closure's capture of a
            // pointer variable): the callee moves the caller's pointer,
            // whatever the object's constness.
            Value::Cell(c) if by_ref || c.count.is_some() || is_pointer_reference(mty) => {
                let p = self.cell_representative(fx, &c, span)?;
                let pty = Type::Pointer(Box::new(c.ty.clone()));
                let (k, mut hs) = self.pass_argument(fx, &pty, arg(p))?;
                hs.push(c.index);
                Ok((ArgKey::Cell(Box::new(k)), hs))
            }
            Value::Place(p)
                if by_ref
                    && !matches!(mty, Type::Pointer(_))
                    && self.place_space(fx, p.ptr) == AddressSpace::Thread =>
            {
                let rty = thread_reference(mty);
                self.pass_argument(fx, &rty, arg(Value::Place(p)))
            }
            v => {
                let v = self.member_read(fx, v, span)?;
                self.pass_argument(fx, mty, arg(v))
            }
        }
    }
}

/// Whether member type `ty` is a reference (`thread T&`, `device T*&`).
fn is_reference(ty: &Type) -> bool {
    matches!(ty, Type::Pointer(pp) if pp.is_reference)
}

/// `thread T&`.
pub(in crate::lower) fn thread_reference(ty: &Type) -> Type {
    Type::Pointer(Box::new(crate::types::Pointer {
        space: AddressSpace::Thread,
        pointee: ty.clone(),
        is_const: false,
        is_reference: true,
    }))
}
