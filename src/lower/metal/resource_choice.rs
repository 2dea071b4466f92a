//! Arrays of textures, samplers and buffer pointers indexed at run time.
//!
//! Metal: an element of an array of resources (an argument
//! `array<texture2d<float>, 4> ts [[texture(0)]]`, an argument buffer's
//! `array<sampler, 8> ss [[id(0)]]`) may be chosen with any index,
//! `ts[i].sample(s, uv)`, and held in a variable, `texture2d<float> t =
//! ts[i];` (Tint's binding arrays). An index past the end is undefined.
//!
//! WGSL: no binding arrays (wgpu's `binding_array` is not in browsers):
//! each element is a global of its own (`entry/resource_arrays.rs`), and
//! textures and samplers are no values that a `select` could pick from.
//!
//! Mapping: the use of the element is made once per element, in a
//! `switch` on the index (evaluated once, before it), its result stored
//! in a local that the expression reads after the `switch`. A use is the
//! innermost call around the element: a member function (`sample`, `read`,
//! `write`, `get_width`, an atomic, ...), a free function, or a helper the
//! element is passed to. Two elements chosen with the same index in one
//! use (`ts[i].sample(ss[i], uv)`) share one `switch`; others nest. The
//! last element is the `default` case, so an index past the end reads the
//! last element (Metal leaves it undefined). A texture, sampler or buffer
//! pointer variable initialised with an element (`device float* b =
//! bufs[i];`) holds the index in a local, and each use of the variable
//! switches on it; where no call is around the use (`x = b[j];`), the
//! whole expression statement runs in each case. What uses the element
//! elsewhere (storing it in a struct, a declaration's initialiser) is
//! refused (E0402).
//!
//! The use is lowered once to find the element chosen at run time (which
//! records a [`Pending`] choice and fails); that attempt's IR is discarded
//! and the use is lowered again in each case, where the element resolves
//! to the case's.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Aggregate, Local, Value};
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind, UnaryOp};
use crate::types::{Scalar, Type};
use naga::{Expression, Handle, Statement, SwitchCase, SwitchValue};

/// The run-time choices of one function: those whose `switch` case is
/// being lowered, and the one a failed lowering found.
#[derive(Default)]
pub(in crate::lower) struct Choices {
    /// Choices made by enclosing `switch` cases, innermost last.
    active: Vec<Choice>,
    /// The choice the lowering in progress failed on.
    pending: Option<Pending>,
}

/// What chooses an element: an index expression (by its node), or the
/// index variable of a variable holding an element.
#[derive(Clone, Debug, PartialEq)]
enum Key {
    Expr(usize, Span),
    Var(Handle<naga::LocalVariable>),
}

/// An element chosen in an enclosing `switch` case.
struct Choice {
    key: Key,
    /// The index expression, when it is a pure one another element chosen
    /// with the same expression may share.
    index: Option<Expr>,
    /// The array's length.
    len: u32,
    /// The case's element.
    element: u32,
}

/// An element chosen at run time that no enclosing case decides.
struct Pending {
    key: Key,
    /// What to switch on.
    selector: Selector,
    /// The array's length.
    len: u32,
    /// Where the error that reports it points.
    span: Span,
}

/// The value a `switch` chooses with.
enum Selector {
    /// An index expression, evaluated once before the `switch`.
    Expr(Expr),
    /// A variable holding the index already.
    Var(Handle<naga::LocalVariable>, Type),
}

/// A `switch` being built: its cases, and the local the use's value goes to.
struct Cases {
    cases: Vec<SwitchCase>,
    result: Option<(Handle<naga::LocalVariable>, Type)>,
}

impl Lowerer<'_, '_> {
    /// Element `a[index]` for an index not known at translation time: the
    /// element of the enclosing case that chose it, or a pending choice and
    /// the error that reports it if no use around it catches it.
    pub(in crate::lower) fn chosen_element(
        &self,
        fx: &mut FnCtx,
        a: &Aggregate,
        index: &Expr,
    ) -> Result<Value> {
        let key = Key::Expr(index as *const Expr as usize, index.span);
        let len = a.members.len() as u32;
        let found = fx.choices.active.iter().rev().find(|c| {
            c.key == key
                || c.len == len && c.index.as_ref().is_some_and(|i| same_pure_value(i, index))
        });
        if let Some(c) = found {
            return Ok(a.members[c.element as usize].clone());
        }
        let error = self.runtime_element_error(&a.ty, index.span);
        fx.choices.pending = Some(Pending {
            key,
            selector: Selector::Expr(index.clone()),
            len,
            span: error.span,
        });
        Err(error)
    }

    /// The value of a variable initialised with an element chosen at run
    /// time (`Local::Chosen`): the element of the enclosing case, or a
    /// pending choice on its index variable.
    pub(in crate::lower) fn chosen_variable(
        &self,
        fx: &mut FnCtx,
        a: &Aggregate,
        var: Handle<naga::LocalVariable>,
        index_ty: &Type,
        span: Span,
    ) -> Result<Value> {
        let key = Key::Var(var);
        if let Some(c) = fx.choices.active.iter().rev().find(|c| c.key == key) {
            return Ok(a.members[c.element as usize].clone());
        }
        let error = self.runtime_element_error(&a.ty, span);
        fx.choices.pending = Some(Pending {
            key,
            selector: Selector::Var(var, index_ty.clone()),
            len: a.members.len() as u32,
            span: error.span,
        });
        Err(error)
    }

    /// The error for an element chosen at run time where no use catches it.
    fn runtime_element_error(&self, array: &Type, at: Span) -> Error {
        let elem = match array {
            Type::Array(e, _) => self.program.display(e),
            t => self.program.display(t),
        };
        Error::coded(
            Code::NoWebGpuEquivalent,
            at,
            format!("an element of an array of `{elem}` chosen at run time can only be used directly here: WGSL and WebGPU have no binding arrays"),
        )
        .note("each element is a binding of its own: a call that uses the element (`a[i].sample(..)`, `a[i].read(..)`, `f(a[i])`) runs in a `switch` over the elements, and a texture or sampler variable `T t = a[i];` may be used so; other uses need a constant index")
        .note("indexing arrays of textures, samplers or buffers at run time needs wgpu's `binding_array`, which browsers do not have")
    }

    /// Lowers a use of values (a call) with `lower`, switching over the
    /// elements of any array of resources it indexes at run time.
    pub(in crate::lower) fn choosing(
        &mut self,
        fx: &mut FnCtx,
        span: Span,
        lower: &dyn Fn(&mut Self, &mut FnCtx) -> Result<Value>,
    ) -> Result<Value> {
        self.choose(fx, span, lower, true)
    }

    /// Lowers an expression statement with `lower`, switching over the
    /// elements its expression chose at run time where no call inside it
    /// did (`x = bufs[i][j];` with `device float* b = bufs[i]`): the
    /// statement runs in each case.
    pub(in crate::lower) fn choosing_statement(
        &mut self,
        fx: &mut FnCtx,
        span: Span,
        lower: &dyn Fn(&mut Self, &mut FnCtx) -> Result<Value>,
    ) -> Result<()> {
        self.choose(fx, span, lower, false).map(drop)
    }

    /// [`Self::choosing`], keeping the use's value (`keep`) or not.
    fn choose(
        &mut self,
        fx: &mut FnCtx,
        span: Span,
        lower: &dyn Fn(&mut Self, &mut FnCtx) -> Result<Value>,
        keep: bool,
    ) -> Result<Value> {
        let mark = fx.mark();
        let warnings = self.global.warnings.len();
        let error = match lower(self, fx) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let pending = match fx.choices.pending.take() {
            Some(p) if p.span == error.span => p,
            other => {
                fx.choices.pending = other;
                return Err(error);
            }
        };
        // The attempt only found the choice: its IR goes.
        fx.rewind(mark);
        self.global.warnings.truncate(warnings);
        self.switch_over(fx, pending, span, lower, keep)
    }

    /// A `switch` over the elements `pending` chooses between, lowering the
    /// use in each case; the use's value, if any, read after it.
    fn switch_over(
        &mut self,
        fx: &mut FnCtx,
        pending: Pending,
        span: Span,
        lower: &dyn Fn(&mut Self, &mut FnCtx) -> Result<Value>,
        keep: bool,
    ) -> Result<Value> {
        let (selector, signed) = self.selector(fx, &pending.selector)?;
        let index = match &pending.selector {
            Selector::Expr(e) if !crate::lower::expr::has_side_effects(e) => Some(e.clone()),
            _ => None,
        };
        let mut cases = Cases {
            cases: Vec::new(),
            result: None,
        };
        for element in 0..pending.len {
            fx.open();
            fx.choices.active.push(Choice {
                key: pending.key.clone(),
                index: index.clone(),
                len: pending.len,
                element,
            });
            let v = self.choose(fx, span, lower, keep);
            fx.choices.active.pop();
            let stored = match keep {
                true => v.and_then(|v| self.store_case_value(fx, &mut cases, v, span)),
                false => v.map(drop),
            };
            let body = fx.close();
            stored?;
            let value = match (element + 1 == pending.len, signed) {
                (true, _) => SwitchValue::Default,
                (false, true) => SwitchValue::I32(element as i32),
                (false, false) => SwitchValue::U32(element),
            };
            cases.cases.push(SwitchCase {
                value,
                body,
                fall_through: false,
            });
        }
        fx.push(
            Statement::Switch {
                selector,
                cases: cases.cases,
            },
            span,
        );
        Ok(match cases.result {
            Some((var, ty)) => {
                let ptr = fx.add(Expression::LocalVariable(var), span);
                Value::Rv(fx.add(Expression::Load { pointer: ptr }, span), ty)
            }
            None => Value::Void,
        })
    }

    /// The `switch` selector (`i32` or `u32`; true for `i32`).
    fn selector(
        &mut self,
        fx: &mut FnCtx,
        selector: &Selector,
    ) -> Result<(Handle<Expression>, bool)> {
        let (h, ty, span) = match selector {
            Selector::Expr(e) => {
                let (h, ty) = self.rvalue(fx, e)?;
                (h, ty, e.span)
            }
            Selector::Var(var, ty) => {
                let ptr = fx.add(Expression::LocalVariable(*var), Span::default());
                let h = fx.add(Expression::Load { pointer: ptr }, Span::default());
                (h, ty.clone(), Span::default())
            }
        };
        let Type::Scalar(s) = ty else {
            return Err(Error::coded(
                Code::TypeMismatch,
                span,
                format!(
                    "an array index must be an integer, not `{}`",
                    self.program.display(&ty)
                ),
            ));
        };
        let to = if s.is_signed_integer() {
            Scalar::Int
        } else {
            Scalar::UInt
        };
        let h = self.convert(fx, h, &ty, &Type::Scalar(to), true, span)?;
        Ok((h, to == Scalar::Int))
    }

    /// Stores one case's value of the use in the `switch`'s result local.
    fn store_case_value(
        &mut self,
        fx: &mut FnCtx,
        cases: &mut Cases,
        v: Value,
        span: Span,
    ) -> Result<()> {
        if matches!(v, Value::Void) {
            return Ok(());
        }
        let (h, ty) = self.load(fx, v, span)?;
        let var = match &cases.result {
            Some((var, _)) => *var,
            None => {
                let th = self.naga_type(&ty, span)?;
                let var = fx.local("metal_chosen", th, span);
                cases.result = Some((var, ty));
                var
            }
        };
        let pointer = fx.add(Expression::LocalVariable(var), span);
        fx.push(Statement::Store { pointer, value: h }, span);
        Ok(())
    }

    /// `T t = init;` for a texture or sampler variable: the value it names,
    /// or, where `init` is an element chosen at run time (`ts[i]`), the
    /// variable that holds the index (`Local::Chosen`).
    pub(in crate::lower) fn resource_local(
        &mut self,
        fx: &mut FnCtx,
        init: &Expr,
    ) -> Result<(Local, Type)> {
        match self.initialiser(fx, init, &|l, fx| {
            let (h, t) = l.rvalue(fx, init)?;
            Ok(Value::Rv(h, t))
        })? {
            Initialiser::Value(Value::Rv(h, t)) => Ok((Local::Value(h, t.clone()), t)),
            Initialiser::Value(_) => unreachable!("an rvalue"),
            Initialiser::Chosen(local, elem) => Ok((local, elem)),
        }
    }

    /// The initialiser `init` of a variable, lowered with `lower`, or, where
    /// it is an element chosen at run time (`a[i]`), the `Local::Chosen`
    /// that holds the index (for a texture, sampler or buffer pointer
    /// variable), with the element type.
    pub(in crate::lower) fn initialiser(
        &mut self,
        fx: &mut FnCtx,
        init: &Expr,
        lower: &dyn Fn(&mut Self, &mut FnCtx) -> Result<Value>,
    ) -> Result<Initialiser> {
        let mark = fx.mark();
        let error = match lower(self, fx) {
            Ok(v) => return Ok(Initialiser::Value(v)),
            Err(e) => e,
        };
        // Only `T t = a[i];` itself: the element chosen by `i`.
        let (base, pending) = match (&init.kind, fx.choices.pending.take()) {
            (ExprKind::Index(base, index), Some(p))
                if p.span == error.span
                    && p.key == Key::Expr(&**index as *const Expr as usize, index.span) =>
            {
                (base, p)
            }
            (_, other) => {
                fx.choices.pending = other;
                return Err(error);
            }
        };
        fx.rewind(mark);
        let Value::Agg(array) = self.expr(fx, base)? else {
            unreachable!("an element was chosen from an array of resources")
        };
        let (h, signed) = self.selector(fx, &pending.selector)?;
        let ty = if signed {
            Type::Scalar(Scalar::Int)
        } else {
            Type::UINT
        };
        let th = self.naga_type(&ty, init.span)?;
        let var = fx.local("metal_element", th, init.span);
        let pointer = fx.add(Expression::LocalVariable(var), init.span);
        fx.push(Statement::Store { pointer, value: h }, init.span);
        let elem = match &array.ty {
            Type::Array(e, _) => (**e).clone(),
            t => t.clone(),
        };
        Ok(Initialiser::Chosen(
            Local::Chosen {
                array,
                var,
                index_ty: ty,
            },
            elem,
        ))
    }
}

/// A variable's initialiser: a value, or an element chosen at run time.
pub(in crate::lower) enum Initialiser {
    Value(Value),
    /// The `Local::Chosen` and the element type.
    Chosen(Local, Type),
}

/// True if `a` and `b` are one expression without side effects, written
/// twice (`u.index` and `u.index`): in one use they have one value.
fn same_pure_value(a: &Expr, b: &Expr) -> bool {
    use ExprKind as K;
    match (&a.kind, &b.kind) {
        (K::Int { value: x, .. }, K::Int { value: y, .. }) => x == y,
        (K::Name(x), K::Name(y)) => x == y,
        (K::Member(x, m, ax), K::Member(y, n, ay)) => {
            m.name == n.name && ax == ay && same_pure_value(x, y)
        }
        (K::Index(x, i), K::Index(y, j)) => same_pure_value(x, y) && same_pure_value(i, j),
        (K::Unary(op, x), K::Unary(oq, y)) => {
            op == oq && !matches!(op, UnaryOp::PreInc | UnaryOp::PreDec) && same_pure_value(x, y)
        }
        (K::Binary(op, x1, x2), K::Binary(oq, y1, y2)) => {
            op == oq && same_pure_value(x1, y1) && same_pure_value(x2, y2)
        }
        _ => false,
    }
}
