//! The CPU reference: an interpreter of [`Program`]s with Metal's
//! semantics (C++ promotions and usual arithmetic conversions, 32-bit
//! two's-complement wrapping, truncating division, arithmetic right
//! shifts of signed values) and `float`s as intervals
//! ([`super::interval`]).
//!
//! Anything Metal leaves undefined (division by zero, `INT_MIN / -1`,
//! shifts by the bit width or more, indices out of range, out-of-range
//! float→int conversions, `clamp` with `min > max`) stops the evaluation
//! with [`Halt::Undefined`]: the generator's guards should make that
//! impossible, so it is reported as a generator bug.

use super::ast::*;
use super::interval::{self, Float};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set on wgpu's GL backend: naga's GLSL writer prints WGSL's `i32 %` as
/// GLSL `%`, which GLSL leaves undefined for negative operands (llvmpipe
/// computes an unsigned remainder). Threads taking such a remainder are
/// then not compared. Not a translator bug: the WGSL is right.
pub static UNRELIABLE_SIGNED_REMAINDER: AtomicBool = AtomicBool::new(false);

/// One component of a value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Comp {
    B(bool),
    /// An integer, canonical for its type (`uint` as 0..2^32).
    I(i64),
    F(Float),
}

/// A scalar or vector value.
#[derive(Clone, Debug)]
pub struct Value {
    /// The C++ type.
    pub ty: Ty,
    /// One per component.
    pub comps: Vec<Comp>,
}

/// Why a thread's evaluation stopped.
#[derive(Debug)]
pub enum Halt {
    /// A float comparison or conversion the GPU may decide either way, or a
    /// float that may overflow: the thread's outputs are not compared.
    Indeterminate(String),
    /// The program does something Metal leaves undefined (generator bug).
    Undefined(String),
}

type Eval<T> = Result<T, Halt>;

fn undefined<T>(what: impl Into<String>) -> Eval<T> {
    Err(Halt::Undefined(what.into()))
}

fn overflow(_: interval::Overflow) -> Halt {
    Halt::Indeterminate("a float may overflow".into())
}

/// Control flow out of a statement.
enum Flow {
    Normal,
    Break,
    Continue,
    Return(Option<Value>),
}

/// The outputs one thread leaves in its own slots of each output buffer
/// (in [`Buffer::OUTPUTS`] order).
pub type ThreadOutputs = Vec<Vec<Comp>>;

/// Runs thread `tid` of `program`.
pub fn run_thread(program: &Program, tid: u32) -> Eval<ThreadOutputs> {
    let memory = Buffer::ALL
        .iter()
        .map(|&b| {
            let stride = b.stride() as usize;
            let start = tid as usize * stride;
            program.data[b.index() as usize][start..start + stride]
                .iter()
                .map(|&word| initial(b.element(), word))
                .collect()
        })
        .collect();
    let mut thread = Thread {
        program,
        slots: vec![Vec::new(); program.vars.len()],
        memory,
        tid,
    };
    thread.block(&program.kernel)?;
    Ok(Buffer::OUTPUTS
        .iter()
        .map(|b| thread.memory[b.index() as usize].clone())
        .collect())
}

/// A buffer element as stored in [`Program::data`].
pub fn initial(s: Scalar, word: u32) -> Comp {
    match s {
        Scalar::Float => Comp::F(Float::exact(f32::from_bits(word))),
        _ => Comp::I(wrap(i64::from(word), s)),
    }
}

/// `v` reduced to the values of integer type `s`.
pub fn wrap(v: i64, s: Scalar) -> i64 {
    match s {
        Scalar::Int => i64::from(v as i32),
        Scalar::Uint => i64::from(v as u32),
        Scalar::Short => i64::from(v as i16),
        Scalar::Ushort => i64::from(v as u16),
        Scalar::Uchar => i64::from(v as u8),
        Scalar::Bool => i64::from(v != 0),
        Scalar::Float => unreachable!("wrap of a float"),
    }
}

/// Converts one component from type `from` to type `to` as C++ does.
pub fn convert(c: Comp, to: Scalar) -> Eval<Comp> {
    Ok(match (c, to) {
        (Comp::B(b), Scalar::Bool) => Comp::B(b),
        (Comp::I(v), Scalar::Bool) => Comp::B(v != 0),
        (Comp::B(b), Scalar::Float) => Comp::F(Float::exact(f32::from(u8::from(b)))),
        (Comp::B(b), s) => Comp::I(wrap(i64::from(b), s)),
        (Comp::I(v), Scalar::Float) => Comp::F(interval::from_int(v)),
        (Comp::I(v), s) => Comp::I(wrap(v, s)),
        (Comp::F(f), Scalar::Float) => Comp::F(f),
        (Comp::F(f), s) => Comp::I(float_to_int(f, s)?),
    })
}

/// Truncation toward zero; undefined outside the target's range.
fn float_to_int(f: Float, s: Scalar) -> Eval<i64> {
    let (lo, hi) = (f64::from(f.lo).trunc(), f64::from(f.hi).trunc());
    let (min, max) = match s {
        Scalar::Int => (i32::MIN as f64, i32::MAX as f64),
        Scalar::Uint => (0.0, u32::MAX as f64),
        _ => return undefined(format!("float to {}", s.msl())),
    };
    if lo < min || hi > max {
        return undefined(format!("float {f:?} out of range of {}", s.msl()));
    }
    if lo != hi {
        return Err(Halt::Indeterminate(format!(
            "float {f:?} converts to more than one integer"
        )));
    }
    Ok(lo as i64)
}

fn as_bool(c: Comp) -> Eval<bool> {
    match c {
        Comp::B(b) => Ok(b),
        other => undefined(format!("{other:?} used as bool")),
    }
}

fn as_int(c: Comp) -> Eval<i64> {
    match c {
        Comp::I(v) => Ok(v),
        Comp::B(b) => Ok(i64::from(b)),
        other => undefined(format!("{other:?} used as an integer")),
    }
}

fn as_float(c: Comp) -> Eval<Float> {
    match c {
        Comp::F(f) => Ok(f),
        other => undefined(format!("{other:?} used as float")),
    }
}

impl Value {
    /// A scalar value.
    pub fn scalar(s: Scalar, c: Comp) -> Value {
        Value {
            ty: Ty::scalar(s),
            comps: vec![c],
        }
    }

    /// The value converted (implicitly or explicitly) to `to`; a scalar is
    /// splatted to a vector.
    pub fn convert(&self, to: Ty) -> Eval<Value> {
        let comps = if self.ty.width == to.width {
            self.comps.clone()
        } else if self.ty.width == 1 {
            vec![self.comps[0]; to.width as usize]
        } else {
            return undefined(format!("{:?} converted to {:?}", self.ty, to));
        };
        let comps = comps
            .into_iter()
            .map(|c| convert(c, to.scalar))
            .collect::<Eval<_>>()?;
        Ok(Value { ty: to, comps })
    }

    /// Component `i`, or the only one of a scalar (broadcast).
    fn comp(&self, i: usize) -> Comp {
        if self.ty.width == 1 {
            self.comps[0]
        } else {
            self.comps[i]
        }
    }
}

/// The value of `op` on two components of integer type `s` (operands
/// already converted to `s`).
fn integer_op(op: BinOp, a: i64, b: i64, s: Scalar) -> Eval<i64> {
    let v = match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::Div | BinOp::Rem => {
            if b == 0 {
                return undefined("integer division by zero");
            }
            if s == Scalar::Int && a == i64::from(i32::MIN) && b == -1 {
                return undefined("INT_MIN / -1");
            }
            if op == BinOp::Rem
                && s == Scalar::Int
                && (a < 0 || b < 0)
                && UNRELIABLE_SIGNED_REMAINDER.load(Ordering::Relaxed)
            {
                return Err(Halt::Indeterminate("GL's signed %".into()));
            }
            if op == BinOp::Div {
                a / b
            } else {
                a % b
            }
        }
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        BinOp::Shl | BinOp::Shr => {
            if !(0..32).contains(&b) {
                return undefined(format!("shift by {b}"));
            }
            match (op, s) {
                // Two's-complement wrapping, as every Metal GPU does.
                (BinOp::Shl, _) => i64::from((a as u32) << b),
                (BinOp::Shr, Scalar::Int) => i64::from((a as i32) >> b),
                _ => i64::from((a as u32) >> b),
            }
        }
        _ => return undefined(format!("{op:?} on integers")),
    };
    Ok(wrap(v, s))
}

/// The value of `op` on two floats.
fn float_op(op: BinOp, a: &Float, b: &Float) -> Eval<Float> {
    match op {
        BinOp::Add => interval::add(a, b).map_err(overflow),
        BinOp::Sub => interval::sub(a, b).map_err(overflow),
        BinOp::Mul => interval::mul(a, b).map_err(overflow),
        BinOp::Div => interval::div(a, b).map_err(overflow),
        _ => undefined(format!("{op:?} on floats")),
    }
}

/// `a op b` for a comparison, on two components of type `s`.
fn compare(op: BinOp, a: Comp, b: Comp) -> Eval<bool> {
    let (less, equal, greater) = match op {
        BinOp::Lt => (true, false, false),
        BinOp::Le => (true, true, false),
        BinOp::Gt => (false, false, true),
        BinOp::Ge => (false, true, true),
        BinOp::Eq => (false, true, false),
        BinOp::Ne => (true, false, true),
        _ => unreachable!(),
    };
    match (a, b) {
        (Comp::F(x), Comp::F(y)) => interval::compare(&x, &y, less, equal, greater)
            .ok_or_else(|| Halt::Indeterminate(format!("{x:?} {op:?} {y:?} is undecided"))),
        _ => {
            let (x, y) = (as_int(a)?, as_int(b)?);
            Ok(match x.cmp(&y) {
                std::cmp::Ordering::Less => less,
                std::cmp::Ordering::Equal => equal,
                std::cmp::Ordering::Greater => greater,
            })
        }
    }
}

/// A binary operator (not `&&`/`||`) on two values, with C++'s
/// conversions; a scalar operand of a vector operation is broadcast.
pub fn binary(op: BinOp, a: &Value, b: &Value) -> Eval<Value> {
    let width = a.ty.width.max(b.ty.width);
    let (operand, result) = match op {
        BinOp::Shl | BinOp::Shr => (a.ty.scalar.promoted(), a.ty.scalar.promoted()),
        _ if op.is_comparison() => (Scalar::common(a.ty.scalar, b.ty.scalar), Scalar::Bool),
        _ => {
            let s = Scalar::common(a.ty.scalar, b.ty.scalar);
            (s, s)
        }
    };
    let mut comps = Vec::with_capacity(width as usize);
    for i in 0..width as usize {
        let x = convert(a.comp(i), operand)?;
        let c = if matches!(op, BinOp::Shl | BinOp::Shr) {
            let amount = as_int(convert(b.comp(i), b.ty.scalar.promoted())?)?;
            Comp::I(integer_op(op, as_int(x)?, amount, operand)?)
        } else {
            let y = convert(b.comp(i), operand)?;
            if op.is_comparison() {
                Comp::B(compare(op, x, y)?)
            } else if operand == Scalar::Float {
                Comp::F(float_op(op, &as_float(x)?, &as_float(y)?)?)
            } else {
                Comp::I(integer_op(op, as_int(x)?, as_int(y)?, operand)?)
            }
        };
        comps.push(c);
    }
    Ok(Value {
        ty: Ty::vector(result, width),
        comps,
    })
}

/// A unary operator with C++'s promotions.
pub fn unary(op: UnOp, a: &Value) -> Eval<Value> {
    let s = if op == UnOp::Not {
        Scalar::Bool
    } else {
        a.ty.scalar.promoted()
    };
    let comps = a
        .comps
        .iter()
        .map(|&c| {
            Ok(match (op, convert(c, s)?) {
                (UnOp::Not, Comp::B(b)) => Comp::B(!b),
                (UnOp::Neg, Comp::F(f)) => Comp::F(interval::neg(&f)),
                (UnOp::Neg, Comp::I(v)) => Comp::I(wrap(v.wrapping_neg(), s)),
                (UnOp::BitNot, Comp::I(v)) => Comp::I(wrap(!v, s)),
                (op, c) => return undefined(format!("{op:?} on {c:?}")),
            })
        })
        .collect::<Eval<_>>()?;
    Ok(Value {
        ty: a.ty.with_scalar(s),
        comps,
    })
}

/// A metal_stdlib call on evaluated arguments.
pub fn builtin(f: Builtin, args: &[Value]) -> Eval<Value> {
    let ty = args[0].ty;
    if matches!(f, Builtin::Any | Builtin::All) {
        let bools = args[0]
            .comps
            .iter()
            .map(|&c| as_bool(c))
            .collect::<Eval<Vec<_>>>()?;
        let v = if f == Builtin::Any {
            bools.iter().any(|&b| b)
        } else {
            bools.iter().all(|&b| b)
        };
        return Ok(Value::scalar(Scalar::Bool, Comp::B(v)));
    }
    let mut comps = Vec::with_capacity(ty.width as usize);
    for i in 0..ty.width as usize {
        let c: Vec<Comp> = args.iter().map(|a| a.comp(i)).collect();
        comps.push(builtin_comp(f, &c)?);
    }
    Ok(Value { ty, comps })
}

fn builtin_comp(f: Builtin, c: &[Comp]) -> Eval<Comp> {
    if f == Builtin::Select {
        return Ok(if as_bool(c[2])? { c[1] } else { c[0] });
    }
    if let Comp::F(x) = c[0] {
        let arg = |i: usize| as_float(c[i]);
        return Ok(Comp::F(match f {
            Builtin::Min => interval::min(&x, &arg(1)?),
            Builtin::Max => interval::max(&x, &arg(1)?),
            Builtin::Abs => interval::abs(&x),
            Builtin::Floor => interval::floor(&x),
            Builtin::Fma => interval::fma(&x, &arg(1)?, &arg(2)?).map_err(overflow)?,
            Builtin::Sqrt => {
                if x.lo < 0.0 && x.lo != -0.0 {
                    return undefined("sqrt of a negative");
                }
                interval::sqrt(&x).map_err(overflow)?
            }
            Builtin::Clamp => {
                let (lo, hi) = (arg(1)?, arg(2)?);
                if lo.hi > hi.lo {
                    return undefined("clamp with min > max");
                }
                interval::min(&interval::max(&x, &lo), &hi)
            }
            _ => return undefined(format!("{f:?} on floats")),
        }));
    }
    let x = as_int(c[0])?;
    Ok(Comp::I(match f {
        Builtin::Min => x.min(as_int(c[1])?),
        Builtin::Max => x.max(as_int(c[1])?),
        Builtin::Clamp => {
            let (lo, hi) = (as_int(c[1])?, as_int(c[2])?);
            if lo > hi {
                return undefined("clamp with min > max");
            }
            x.max(lo).min(hi)
        }
        _ => return undefined(format!("{f:?} on integers")),
    }))
}

/// The state of one thread.
struct Thread<'p> {
    program: &'p Program,
    /// Each variable's value (arrays: one per element).
    slots: Vec<Vec<Value>>,
    /// This thread's elements of each buffer, by index.
    memory: Vec<Vec<Comp>>,
    tid: u32,
}

impl Thread<'_> {
    fn block(&mut self, body: &[Stmt]) -> Eval<Flow> {
        for s in body {
            match self.stmt(s)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn var_ty(&self, id: VarId) -> Ty {
        self.program.vars[id].ty
    }

    fn index(&mut self, e: &Expr, len: u32) -> Eval<usize> {
        let v = as_int(self.expr(e)?.comps[0])?;
        if !(0..i64::from(len)).contains(&v) {
            return undefined(format!("index {v} out of 0..{len}"));
        }
        Ok(v as usize)
    }

    fn stmt(&mut self, s: &Stmt) -> Eval<Flow> {
        match s {
            Stmt::Decl(id, init) => {
                let v = self.expr(init)?.convert(self.var_ty(*id))?;
                self.slots[*id] = vec![v];
            }
            Stmt::DeclArray(id, items) => {
                let ty = self.var_ty(*id);
                let values = items
                    .iter()
                    .map(|e| self.expr(e)?.convert(ty))
                    .collect::<Eval<Vec<_>>>()?;
                self.slots[*id] = values;
            }
            Stmt::Assign(place, op, value) => {
                let value = self.expr(value)?;
                let (id, element, comps) = self.resolve(place)?;
                let old = self.read_place(id, element, comps.as_deref());
                let new = match op {
                    Some(op) => binary(*op, &old, &value)?,
                    None => value,
                };
                let new = new.convert(old.ty)?;
                self.write_place(id, element, comps.as_deref(), new);
            }
            Stmt::Store(buf, slot, op, value) => {
                let slot = self.index(slot, buf.stride())?;
                let value = self.expr(value)?;
                let s = buf.element();
                let old = Value::scalar(s, self.memory[buf.index() as usize][slot]);
                let new = match op {
                    Some(op) => binary(*op, &old, &value)?,
                    None => value,
                };
                self.memory[buf.index() as usize][slot] = new.convert(Ty::scalar(s))?.comps[0];
            }
            Stmt::CallRefs(target, f, args) => {
                let result = self.call(*f, args)?;
                if let Some(place) = target {
                    let (id, element, comps) = self.resolve(place)?;
                    let ty = self.read_place(id, element, comps.as_deref()).ty;
                    let v = result.expect("a value").convert(ty)?;
                    self.write_place(id, element, comps.as_deref(), v);
                }
            }
            Stmt::If(cond, then, otherwise) => {
                let c = as_bool(self.expr(cond)?.comps[0])?;
                return self.block(if c { then } else { otherwise });
            }
            Stmt::For(id, count, body) => {
                for i in 0..*count {
                    self.slots[*id] = vec![Value::scalar(Scalar::Int, Comp::I(i64::from(i)))];
                    match self.block(body)? {
                        Flow::Break => break,
                        Flow::Normal | Flow::Continue => {}
                        ret @ Flow::Return(_) => return Ok(ret),
                    }
                }
            }
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::Switch(value, cases) => return self.switch(value, cases),
            Stmt::Return(value) => {
                let v = value.as_ref().map(|e| self.expr(e)).transpose()?;
                return Ok(Flow::Return(v));
            }
        }
        Ok(Flow::Normal)
    }

    fn switch(&mut self, value: &Expr, cases: &[Case]) -> Eval<Flow> {
        let v = as_int(self.expr(value)?.comps[0])?;
        let start = cases
            .iter()
            .position(|c| c.label.map(i64::from) == Some(v))
            .or_else(|| cases.iter().position(|c| c.label.is_none()));
        let Some(start) = start else {
            return Ok(Flow::Normal);
        };
        for case in &cases[start..] {
            match self.block(&case.body)? {
                Flow::Break => return Ok(Flow::Normal),
                Flow::Normal => {}
                other => return Ok(other),
            }
            if !case.falls_through {
                break;
            }
        }
        Ok(Flow::Normal)
    }

    /// The variable, array element and components a place names.
    fn resolve(&mut self, place: &Place) -> Eval<(VarId, usize, Option<Vec<u8>>)> {
        Ok(match place {
            Place::Var(id) => (*id, 0, None),
            Place::Swizzle(id, comps) => (*id, 0, Some(comps.clone())),
            Place::Element(id, index) => {
                let len = self.program.vars[*id].array_len.unwrap_or(1);
                (*id, self.index(index, u32::from(len))?, None)
            }
        })
    }

    fn read_place(&self, id: VarId, element: usize, comps: Option<&[u8]>) -> Value {
        let v = &self.slots[id][element];
        match comps {
            None => v.clone(),
            Some(c) => Value {
                ty: Ty::vector(v.ty.scalar, c.len() as u8),
                comps: c.iter().map(|&i| v.comps[i as usize]).collect(),
            },
        }
    }

    fn write_place(&mut self, id: VarId, element: usize, comps: Option<&[u8]>, new: Value) {
        let v = &mut self.slots[id][element];
        match comps {
            None => *v = new,
            Some(c) => {
                for (k, &i) in c.iter().enumerate() {
                    v.comps[i as usize] = new.comps[k];
                }
            }
        }
    }

    /// Calls helper `f`: value arguments converted to the parameter types,
    /// references copied in and out (a helper sees no other variable, so
    /// that is exact).
    fn call(&mut self, f: FnId, args: &[Arg]) -> Eval<Option<Value>> {
        let function = &self.program.functions[f];
        let mut values = Vec::with_capacity(args.len());
        for (arg, &(param, _)) in args.iter().zip(&function.params) {
            let v = match arg {
                Arg::Value(e) => self.expr(e)?.convert(self.var_ty(param))?,
                Arg::Ref(id) => self.slots[*id][0].clone(),
            };
            values.push(v);
        }
        for (v, &(param, _)) in values.into_iter().zip(&function.params) {
            self.slots[param] = vec![v];
        }
        let result = match self.block(&function.body)? {
            Flow::Return(v) => v,
            _ => None,
        };
        for (arg, &(param, _)) in args.iter().zip(&function.params) {
            if let Arg::Ref(id) = arg {
                self.slots[*id] = self.slots[param].clone();
            }
        }
        match (result, function.ret) {
            (Some(v), Some(ty)) => Ok(Some(v.convert(ty)?)),
            (None, None) => Ok(None),
            _ => undefined(format!("{} returns the wrong way", function.name)),
        }
    }

    fn expr(&mut self, e: &Expr) -> Eval<Value> {
        let v = self.expr_untyped(e)?;
        if v.ty != e.ty {
            return undefined(format!(
                "generator typed {e:?} as {:?}, C++ gives {:?}",
                e.ty, v.ty
            ));
        }
        Ok(v)
    }

    fn expr_untyped(&mut self, e: &Expr) -> Eval<Value> {
        Ok(match &e.kind {
            ExprKind::IntLit(v) => Value::scalar(e.ty.scalar, Comp::I(wrap(*v, e.ty.scalar))),
            ExprKind::FloatLit(v) => Value::scalar(Scalar::Float, Comp::F(Float::exact(*v))),
            ExprKind::BoolLit(b) => Value::scalar(Scalar::Bool, Comp::B(*b)),
            ExprKind::Tid => Value::scalar(Scalar::Uint, Comp::I(i64::from(self.tid))),
            ExprKind::Var(id) => self.slots[*id][0].clone(),
            ExprKind::Element(id, index) => {
                let len = self.program.vars[*id].array_len.unwrap_or(1);
                let i = self.index(index, u32::from(len))?;
                self.slots[*id][i].clone()
            }
            ExprKind::Load(buf, slot) => {
                let i = self.index(slot, buf.stride())?;
                Value::scalar(buf.element(), self.memory[buf.index() as usize][i])
            }
            ExprKind::Unary(op, a) => unary(*op, &self.expr(a)?)?,
            ExprKind::Binary(op @ (BinOp::LogicalAnd | BinOp::LogicalOr), a, b) => {
                let x = as_bool(self.expr(a)?.comps[0])?;
                let decided = (*op == BinOp::LogicalOr) == x;
                let v = if decided {
                    x
                } else {
                    as_bool(self.expr(b)?.comps[0])?
                };
                Value::scalar(Scalar::Bool, Comp::B(v))
            }
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                binary(*op, &x, &y)?
            }
            ExprKind::Ternary(c, a, b) => {
                if as_bool(self.expr(c)?.comps[0])? {
                    self.expr(a)?
                } else {
                    self.expr(b)?
                }
            }
            ExprKind::Builtin(f, args) => {
                let args = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Eval<Vec<_>>>()?;
                builtin(*f, &args)?
            }
            ExprKind::Call(f, args) => {
                let args: Vec<Arg> = args.iter().cloned().map(Arg::Value).collect();
                self.call(*f, &args)?
                    .expect("a pure helper returns a value")
            }
            ExprKind::Cast(a, _) => self.expr(a)?.convert(e.ty)?,
            ExprKind::Swizzle(a, comps) => {
                let v = self.expr(a)?;
                Value {
                    ty: Ty::vector(v.ty.scalar, comps.len() as u8),
                    comps: comps.iter().map(|&i| v.comps[i as usize]).collect(),
                }
            }
            ExprKind::Construct(parts) => {
                let mut comps = Vec::new();
                for p in parts {
                    let v = self.expr(p)?.convert_scalar(e.ty.scalar)?;
                    comps.extend(v.comps);
                }
                if comps.len() == 1 {
                    comps = vec![comps[0]; e.ty.width as usize];
                }
                Value { ty: e.ty, comps }
            }
        })
    }
}

impl Value {
    /// The value with its element type converted to `s`.
    fn convert_scalar(&self, s: Scalar) -> Eval<Value> {
        self.convert(self.ty.with_scalar(s))
    }
}
