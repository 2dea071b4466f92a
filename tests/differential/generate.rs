//! Random programs: helper functions and one kernel of declarations,
//! assignments, buffer stores, `if`, bounded `for` loops with
//! `break`/`continue`, `switch` with fall-through and calls with
//! `thread T&` out-parameters; plus the buffers' initial contents.

use super::ast::*;
use super::expressions::{allowed, narrow_types};
use super::rng::Rng;

use Scalar::*;

/// Generator state while one program is built.
pub struct Gen {
    /// The seed's random numbers.
    pub rng: Rng,
    /// Every variable made so far.
    pub vars: Vec<Var>,
    /// Visible variables, innermost scope last.
    scopes: Vec<Vec<VarId>>,
    /// The helpers made so far.
    pub functions: Vec<Function>,
    /// True in the kernel (buffers and `tid` are visible).
    pub in_kernel: bool,
    loops: u32,
    switches: u32,
    nesting: u32,
    /// Statements left for this function or kernel.
    budget: i32,
}

/// Expression depth.
const DEPTH: u32 = 3;

/// The program for `seed`.
pub fn program(seed: u64) -> Program {
    let mut g = Gen {
        rng: Rng::new(seed),
        vars: Vec::new(),
        scopes: Vec::new(),
        functions: Vec::new(),
        in_kernel: false,
        loops: 0,
        switches: 0,
        nesting: 0,
        budget: 0,
    };
    for _ in 0..g.rng.below(4) {
        g.function();
    }
    g.in_kernel = true;
    g.budget = g.rng.range(8, 30) as i32;
    let kernel = g.kernel();
    let threads = g.rng.range(64, 256) as u32;
    let threadgroup = g.rng.pick(&[16, 32, 64, 128]);
    let data = buffer_data(&mut g.rng, threads);
    Program {
        seed,
        vars: g.vars,
        functions: g.functions,
        kernel,
        threads,
        threadgroup,
        data,
    }
}

/// Initial contents of every buffer: `threads` strides plus a tail of 8
/// elements that no thread may touch.
fn buffer_data(rng: &mut Rng, threads: u32) -> BufferData {
    Buffer::ALL
        .iter()
        .map(|b| {
            let len = threads * b.stride() + 8;
            (0..len).map(|_| element(rng, b.element())).collect()
        })
        .collect()
}

/// A random buffer element as stored in [`BufferData`].
fn element(rng: &mut Rng, s: Scalar) -> u32 {
    match s {
        Float => {
            let v = match rng.below(4) {
                0 => rng.range(-20, 20) as f32,
                1 => rng.range(-4000, 4000) as f32 / 64.0,
                2 => (rng.below(1 << 24) as f32 / (1 << 24) as f32 - 0.5) * 200.0,
                _ => rng.pick(&[0.0, -0.0, 1.0, 0.1, -2.5, 1.0e-3, 65536.0]),
            };
            v.to_bits()
        }
        Short => rng.next_u64() as i16 as i32 as u32,
        Uchar => rng.next_u64() as u8 as u32,
        _ => match rng.below(3) {
            0 => rng.range(-100, 100) as i32 as u32,
            1 => rng.pick(&[0, 1, u32::MAX, 0x8000_0000, 0x7fff_ffff, 0xffff, 0x8000]),
            _ => rng.next_u64() as u32,
        },
    }
}

impl Gen {
    /// Variables of type `ty` in scope (`assignable`: not loop counters).
    pub fn visible(&self, ty: Ty, assignable: bool) -> Vec<VarId> {
        self.scopes
            .iter()
            .flatten()
            .copied()
            .filter(|&id| {
                let v = &self.vars[id];
                v.ty == ty && !(assignable && v.read_only)
            })
            .collect()
    }

    fn all_visible(&self) -> Vec<VarId> {
        self.scopes.iter().flatten().copied().collect()
    }

    /// A fresh variable, visible from now on in the current scope.
    fn declare(&mut self, ty: Ty, array_len: Option<u8>, read_only: bool) -> VarId {
        let id = self.vars.len();
        let prefix = if read_only { "i" } else { "v" };
        self.vars.push(Var {
            name: format!("{prefix}{id}"),
            ty,
            array_len,
            read_only,
        });
        self.scopes.last_mut().unwrap().push(id);
        id
    }

    /// A type for a new variable or parameter.
    fn var_type(&mut self) -> Ty {
        match self.rng.weighted(&[25, 15, 20, 12, 3, 12, 13]) {
            0 => Ty::scalar(Int),
            1 => Ty::scalar(Uint),
            2 => Ty::scalar(Float),
            3 => Ty::scalar(allowed(self.rng.pick(narrow_types()))),
            4 => Ty::scalar(Bool),
            5 => Ty::vector(Float, self.rng.range(2, 4) as u8),
            _ => Ty::vector(self.rng.pick(&[Int, Uint]), self.rng.range(2, 4) as u8),
        }
    }

    fn function(&mut self) {
        self.scopes.push(Vec::new());
        let mut params = Vec::new();
        for _ in 0..self.rng.range(1, 3) {
            let ty = self.var_type();
            let by_ref = self.rng.chance(30);
            params.push((self.declare(ty, None, false), by_ref));
        }
        let has_refs = params.iter().any(|p| p.1);
        let ret = if has_refs && self.rng.chance(30) {
            None
        } else {
            Some(self.var_type())
        };
        self.budget = self.rng.range(2, 6) as i32;
        let mut body = Vec::new();
        while self.budget > 0 {
            body.push(self.stmt());
        }
        body.push(Stmt::Return(ret.map(|t| self.expr(t, DEPTH))));
        self.scopes.pop();
        let name = format!("f{}", self.functions.len());
        self.functions.push(Function {
            name,
            params,
            ret,
            body,
        });
    }

    fn kernel(&mut self) -> Vec<Stmt> {
        self.scopes.push(Vec::new());
        let mut body = Vec::new();
        // Inputs into locals first, so later expressions find them.
        for (buf, ty) in [
            (Buffer::InInt, Ty::scalar(Int)),
            (Buffer::InFloat, Ty::scalar(Float)),
            (Buffer::InShort, Ty::scalar(allowed(Short))),
            (Buffer::InInt, Ty::scalar(Uint)),
            (Buffer::InFloat, Ty::scalar(Float)),
        ] {
            let slot = Expr::int(self.rng.below(u64::from(buf.stride())) as i64);
            let load = Expr {
                kind: ExprKind::Load(buf, Box::new(slot)),
                ty: Ty::scalar(buf.element()),
            };
            let id = self.declare(ty, None, false);
            body.push(Stmt::Decl(id, load));
        }
        while self.budget > 0 {
            body.push(self.stmt());
        }
        // Make the final state observable.
        for buf in Buffer::OUTPUTS {
            for slot in 0..buf.stride() {
                if self.rng.chance(60) {
                    let value = self.store_value(buf.element());
                    body.push(Stmt::Store(buf, Expr::int(i64::from(slot)), None, value));
                }
            }
        }
        self.scopes.pop();
        body
    }

    /// A value to store into an element of type `s` (implicit conversions
    /// included; never float→integer, which Metal only does explicitly
    /// here).
    fn store_value(&mut self, s: Scalar) -> Expr {
        let from = match s {
            Float => self.rng.pick(&[Float, Float, Float, Int, Uint]),
            _ => allowed(self.rng.pick(&[Int, Uint, s, Short, Uchar])),
        };
        self.expr(Ty::scalar(from), DEPTH)
    }

    fn block(&mut self, max: i32) -> Vec<Stmt> {
        self.scopes.push(Vec::new());
        self.nesting += 1;
        let mut body = Vec::new();
        let n = self.rng.range(1, i64::from(max)) as i32;
        for _ in 0..n {
            if self.budget <= 0 {
                break;
            }
            body.push(self.stmt());
        }
        self.nesting -= 1;
        self.scopes.pop();
        body
    }

    fn stmt(&mut self) -> Stmt {
        self.budget -= 1;
        let nested = self.nesting < 3;
        let has_ref_fns = self.functions.iter().any(|f| !f.is_pure());
        let weights = [
            25,                                                 // declaration
            30,                                                 // assignment
            if self.in_kernel { 12 } else { 0 },                // store
            if nested { 10 } else { 0 },                        // if
            if nested { 7 } else { 0 },                         // for
            if nested { 5 } else { 0 },                         // switch
            if has_ref_fns { 8 } else { 0 },                    // call with references
            if self.loops + self.switches > 0 { 6 } else { 0 }, // break/continue
            4,                                                  // array
        ];
        match self.rng.weighted(&weights) {
            0 => {
                let ty = self.var_type();
                let init = self.expr(ty, DEPTH);
                let id = self.declare(ty, None, false);
                Stmt::Decl(id, init)
            }
            1 => self.assignment(),
            2 => self.store(),
            3 => {
                let cond = self.boolean(DEPTH);
                let then = self.block(4);
                let otherwise = if self.rng.chance(40) {
                    self.block(3)
                } else {
                    Vec::new()
                };
                Stmt::If(cond, then, otherwise)
            }
            4 => {
                self.scopes.push(Vec::new());
                let i = self.declare(Ty::scalar(Int), None, true);
                self.loops += 1;
                let body = self.block(4);
                self.loops -= 1;
                self.scopes.pop();
                Stmt::For(i, self.rng.range(0, 5) as u32, body)
            }
            5 => self.switch(),
            6 => self.call_with_refs(),
            7 => {
                let jump = if self.loops > 0 && self.rng.chance(50) {
                    Stmt::Continue
                } else {
                    Stmt::Break
                };
                Stmt::If(self.boolean(DEPTH - 1), vec![jump], Vec::new())
            }
            _ => {
                let s = allowed(self.rng.pick(&[Int, Uint, Float, Short, Uchar]));
                let len = self.rng.pick(&[2u8, 4, 8]);
                let items = (0..len)
                    .map(|_| self.expr(Ty::scalar(s), DEPTH - 1))
                    .collect();
                let id = self.declare(Ty::scalar(s), Some(len), false);
                Stmt::DeclArray(id, items)
            }
        }
    }

    fn switch(&mut self) -> Stmt {
        let value = self.expr(Ty::scalar(Int), DEPTH - 1);
        let value = Expr::binary(BinOp::And, value, Expr::int(7), Ty::scalar(Int));
        let mut labels: Vec<i32> = (0..8).collect();
        let mut cases = Vec::new();
        self.switches += 1;
        for _ in 0..self.rng.range(1, 4) {
            let label = labels.remove(self.rng.below(labels.len() as u64) as usize);
            let body = self.block(3);
            let falls_through = self.rng.chance(30);
            cases.push(Case {
                label: Some(label),
                body,
                falls_through,
            });
        }
        if self.rng.chance(50) {
            let at = self.rng.below(cases.len() as u64 + 1) as usize;
            let body = self.block(2);
            let falls_through = self.rng.chance(30);
            cases.insert(
                at,
                Case {
                    label: None,
                    body,
                    falls_through,
                },
            );
        }
        // The last case cannot fall anywhere.
        cases.last_mut().unwrap().falls_through = false;
        self.switches -= 1;
        Stmt::Switch(value, cases)
    }

    /// A place of some assignable variable, with its type.
    fn place(&mut self) -> Option<(Place, Ty)> {
        let ids: Vec<VarId> = self
            .all_visible()
            .into_iter()
            .filter(|&id| !self.vars[id].read_only)
            .collect();
        if ids.is_empty() {
            return None;
        }
        let id = self.rng.pick(&ids);
        let v = self.vars[id].clone();
        if let Some(len) = v.array_len {
            let index = self.index_expr(u32::from(len));
            return Some((Place::Element(id, index), v.ty));
        }
        if v.ty.is_vector() && self.rng.chance(40) {
            let mut comps: Vec<u8> = (0..v.ty.width).collect();
            let n = self.rng.range(1, i64::from(v.ty.width)) as usize;
            let mut chosen = Vec::new();
            for _ in 0..n {
                chosen.push(comps.remove(self.rng.below(comps.len() as u64) as usize));
            }
            let ty = Ty::vector(v.ty.scalar, n as u8);
            return Some((Place::Swizzle(id, chosen), ty));
        }
        Some((Place::Var(id), v.ty))
    }

    fn assignment(&mut self) -> Stmt {
        let Some((place, ty)) = self.place() else {
            let init = self.expr(Ty::scalar(Int), DEPTH);
            let id = self.declare(Ty::scalar(Int), None, false);
            return Stmt::Decl(id, init);
        };
        let (op, value) = self.update(ty);
        Stmt::Assign(place, op, value)
    }

    /// An operator and value for `x (op)= value` with `x` of type `ty`.
    fn update(&mut self, ty: Ty) -> (Option<BinOp>, Expr) {
        let s = ty.scalar;
        if s == Bool || self.rng.chance(45) {
            let from = if ty.is_vector() || s == Bool || self.rng.chance(60) {
                ty
            } else if s == Float {
                Ty::scalar(self.rng.pick(&[Int, Uint]))
            } else {
                Ty::scalar(allowed(self.rng.pick(&[Int, Uint, Short, Ushort, Uchar])))
            };
            return (None, self.expr(from, DEPTH));
        }
        let value_ty = if ty.is_vector() && self.rng.chance(30) {
            Ty::scalar(s)
        } else if !ty.is_vector() && s != Float {
            Ty::scalar(allowed(self.rng.pick(&[Int, Uint, Short, Uchar])))
        } else {
            ty
        };
        let ops: &[BinOp] = if s == Float {
            &[BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div]
        } else {
            &[
                BinOp::Add,
                BinOp::Sub,
                BinOp::Mul,
                BinOp::And,
                BinOp::Or,
                BinOp::Xor,
                BinOp::Shl,
                BinOp::Shr,
                BinOp::Div,
                BinOp::Rem,
            ]
        };
        let op = self.rng.pick(ops);
        let e = self.expr(value_ty, DEPTH - 1);
        let value = match op {
            BinOp::Div if s == Float => {
                let abs = Expr::builtin(Builtin::Abs, vec![e], value_ty);
                Expr::binary(BinOp::Add, abs, Expr::float(1.0), value_ty)
            }
            // x /= ((e & 15) | 2): 2..15, never zero or -1.
            BinOp::Div | BinOp::Rem => {
                let p = value_ty.with_scalar(value_ty.scalar.promoted());
                let masked = Expr::binary(BinOp::And, e, Expr::int(15), p);
                Expr::binary(BinOp::Or, masked, Expr::int(2), p)
            }
            BinOp::Shl | BinOp::Shr => {
                let p = value_ty.with_scalar(value_ty.scalar.promoted());
                Expr::binary(BinOp::And, e, Expr::int(31), p)
            }
            _ => e,
        };
        (Some(op), value)
    }

    fn store(&mut self) -> Stmt {
        let buf = self.rng.pick(&Buffer::OUTPUTS);
        let slot = self.index_expr(buf.stride());
        let s = buf.element();
        if self.rng.chance(25) {
            let op = if s == Float {
                self.rng.pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul])
            } else {
                self.rng
                    .pick(&[BinOp::Add, BinOp::Sub, BinOp::Xor, BinOp::Or])
            };
            let from = if s == Float { Float } else { Int };
            let value = self.expr(Ty::scalar(from), DEPTH - 1);
            return Stmt::Store(buf, slot, Some(op), value);
        }
        let value = self.store_value(s);
        Stmt::Store(buf, slot, None, value)
    }

    /// `[x =] f(args)` for a helper with `thread T&` parameters: each
    /// reference gets a distinct variable other than `x`.
    fn call_with_refs(&mut self) -> Stmt {
        let candidates: Vec<FnId> = (0..self.functions.len())
            .filter(|&f| !self.functions[f].is_pure())
            .collect();
        let f = self.rng.pick(&candidates);
        let function = self.functions[f].clone();
        let target = match function.ret {
            Some(ty) => {
                let vars = self.visible(ty, true);
                let scalar_vars: Vec<VarId> = vars
                    .into_iter()
                    .filter(|&id| self.vars[id].array_len.is_none())
                    .collect();
                if scalar_vars.is_empty() {
                    None
                } else {
                    Some(self.rng.pick(&scalar_vars))
                }
            }
            None => None,
        };
        let mut used: Vec<VarId> = target.into_iter().collect();
        let mut args = Vec::new();
        // Variables made for references live in a block around the call.
        self.scopes.push(Vec::new());
        let mut pending = Vec::new();
        for &(param, by_ref) in &function.params {
            let ty = self.vars[param].ty;
            if !by_ref {
                args.push(Arg::Value(self.expr(ty, DEPTH - 1)));
                continue;
            }
            let free: Vec<VarId> = self
                .visible(ty, true)
                .into_iter()
                .filter(|id| !used.contains(id) && self.vars[*id].array_len.is_none())
                .collect();
            let id = if free.is_empty() {
                // A fresh variable for the reference; declared by a
                // statement placed before the call.
                let init = self.expr(ty, DEPTH - 1);
                let id = self.declare(ty, None, false);
                pending.push(Stmt::Decl(id, init));
                id
            } else {
                self.rng.pick(&free)
            };
            used.push(id);
            args.push(Arg::Ref(id));
        }
        self.scopes.pop();
        let call = Stmt::CallRefs(target.map(Place::Var), f, args);
        if pending.is_empty() {
            return call;
        }
        pending.push(call);
        let always = Expr {
            kind: ExprKind::BoolLit(true),
            ty: Ty::scalar(Bool),
        };
        Stmt::If(always, pending, Vec::new())
    }
}
