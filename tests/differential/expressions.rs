//! Random typed expressions: every production yields exactly the C++ type
//! asked for, with the guards that keep it defined in Metal.

use super::ast::*;
use super::generate::Gen;
use std::sync::atomic::{AtomicBool, Ordering};

/// When cleared (`MSL2WGSL_DIFF_SHORT=0`), the generator makes no `short`
/// values: NVIDIA's driver (580.159.04) converts a sign-extended 16-bit
/// value that was cast to `uint` to float as if signed, and that defect
/// would otherwise dominate a campaign there.
pub static SIGNED_SHORTS: AtomicBool = AtomicBool::new(true);

/// `s`, with `short` replaced by `ushort` when [`SIGNED_SHORTS`] is clear.
pub fn allowed(s: Scalar) -> Scalar {
    if s == Short && !SIGNED_SHORTS.load(Ordering::Relaxed) {
        Ushort
    } else {
        s
    }
}

use Scalar::*;

/// Integer literals worth trying.
const INTS: [i64; 16] = [
    0,
    1,
    -1,
    2,
    7,
    31,
    32,
    255,
    256,
    65535,
    -32768,
    32767,
    i32::MAX as i64,
    i32::MIN as i64,
    0x5555_5555,
    -123_456_789,
];
/// `uint` literals worth trying.
const UINTS: [i64; 8] = [0, 1, 0xffff_ffff, 0x8000_0000, 0xff, 0xffff, 0x1_0000, 3];
/// Float literals worth trying (exact in binary or not).
const FLOATS: [f32; 14] = [
    0.0, 1.0, -1.0, 0.5, 2.0, -3.25, 100.0, 0.001, 0.1, 1.0e6, 3.0, 7.5, -0.75, 1.5e-5,
];
/// Types narrow enough to be promoted.
const NARROW: [Scalar; 3] = [Short, Ushort, Uchar];

impl Gen {
    /// An expression of type `ty` at most `depth` operators deep.
    pub fn expr(&mut self, ty: Ty, depth: u32) -> Expr {
        if depth == 0 || self.rng.chance(20) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        if ty.is_vector() {
            return if ty.scalar == Bool {
                self.comparison(ty.width, d)
            } else {
                self.vector(ty, d)
            };
        }
        match ty.scalar {
            Bool => self.boolean(d),
            Int | Uint => self.integer(ty.scalar, d),
            Float => self.float(d),
            _ => self.narrow(ty.scalar, d),
        }
    }

    /// A variable, buffer element or literal of type `ty`.
    pub fn leaf(&mut self, ty: Ty) -> Expr {
        let vars = self.visible(ty, false);
        if !vars.is_empty() && self.rng.chance(70) {
            let id = self.rng.pick(&vars);
            if let Some(len) = self.vars[id].array_len {
                let index = self.index_expr(u32::from(len));
                return Expr {
                    kind: ExprKind::Element(id, Box::new(index)),
                    ty,
                };
            }
            return Expr {
                kind: ExprKind::Var(id),
                ty,
            };
        }
        if self.in_kernel && !ty.is_vector() && self.rng.chance(40) {
            let buffers: Vec<Buffer> = Buffer::ALL
                .into_iter()
                .filter(|b| b.element() == ty.scalar)
                .collect();
            if !buffers.is_empty() {
                let buf = self.rng.pick(&buffers);
                let slot = self.index_expr(buf.stride());
                return Expr {
                    kind: ExprKind::Load(buf, Box::new(slot)),
                    ty,
                };
            }
            if ty.scalar == Uint && self.rng.chance(50) {
                return Expr {
                    kind: ExprKind::Tid,
                    ty,
                };
            }
        }
        self.literal(ty)
    }

    /// A literal of type `ty` (narrow types and vectors through casts and
    /// constructors).
    pub fn literal(&mut self, ty: Ty) -> Expr {
        if ty.is_vector() {
            let parts = if self.rng.chance(50) {
                vec![self.literal(Ty::scalar(ty.scalar))]
            } else {
                (0..ty.width)
                    .map(|_| self.literal(Ty::scalar(ty.scalar)))
                    .collect()
            };
            return Expr {
                kind: ExprKind::Construct(parts),
                ty,
            };
        }
        match ty.scalar {
            Bool => Expr {
                kind: ExprKind::BoolLit(self.rng.chance(50)),
                ty,
            },
            Int => Expr::int(self.int_value()),
            Uint => {
                let v = if self.rng.chance(60) {
                    self.rng.pick(&UINTS)
                } else {
                    self.rng.next_u64() as u32 as i64
                };
                Expr::int_of(v, Uint)
            }
            Float => Expr::float(self.float_value()),
            s => {
                let v = self.rng.range(-70000, 70000);
                let spelling = self.rng.below(3) as u8;
                Expr::cast(Expr::int(v), Ty::scalar(s), spelling)
            }
        }
    }

    fn int_value(&mut self) -> i64 {
        match self.rng.below(3) {
            0 => self.rng.pick(&INTS),
            1 => self.rng.range(-20, 20),
            _ => self.rng.next_u64() as i32 as i64,
        }
    }

    fn float_value(&mut self) -> f32 {
        if self.rng.chance(60) {
            self.rng.pick(&FLOATS)
        } else {
            self.rng.range(-4000, 4000) as f32 / 16.0
        }
    }

    /// An `int` expression in `0..len` (`len` a power of two or 3).
    pub fn index_expr(&mut self, len: u32) -> Expr {
        if self.rng.chance(30) {
            return Expr::int(self.rng.below(u64::from(len)) as i64);
        }
        let s = allowed(self.rng.pick(&[Int, Uint, Short]));
        let e = self.leaf(Ty::scalar(s));
        let mask = if len.is_power_of_two() { len - 1 } else { 1 };
        let ty = Ty::scalar(Scalar::common(s, Int));
        Expr::binary(BinOp::And, e, Expr::int(i64::from(mask)), ty)
    }

    /// An integer-valued scalar type whose promotion is `int`.
    fn int_like(&mut self) -> Scalar {
        if self.rng.chance(55) {
            Int
        } else {
            allowed(self.rng.pick(&[Short, Ushort, Uchar, Uchar, Bool]))
        }
    }

    /// Two operand types whose usual arithmetic conversion is `s`.
    fn operand_types(&mut self, s: Scalar) -> (Scalar, Scalar) {
        match s {
            Int => (self.int_like(), self.int_like()),
            Uint => {
                let other = if self.rng.chance(50) {
                    Uint
                } else {
                    self.int_like()
                };
                if self.rng.chance(50) {
                    (Uint, other)
                } else {
                    (other, Uint)
                }
            }
            _ => (Float, if self.rng.chance(85) { Float } else { Int }),
        }
    }

    /// `e` if its promoted type is `s`, for operands.
    fn operand(&mut self, s: Scalar, depth: u32) -> Expr {
        let e = self.expr(Ty::scalar(s), depth);
        // Bool operands come from comparisons or literals.
        if s == Bool && matches!(e.kind, ExprKind::Var(_)) && self.rng.chance(50) {
            return self.comparison(1, depth);
        }
        e
    }

    fn integer(&mut self, s: Scalar, d: u32) -> Expr {
        let ty = Ty::scalar(s);
        match self.rng.weighted(&[30, 10, 10, 8, 8, 8, 10, 5, 6]) {
            0 => {
                let op = self.rng.pick(&[
                    BinOp::Add,
                    BinOp::Sub,
                    BinOp::Mul,
                    BinOp::And,
                    BinOp::Or,
                    BinOp::Xor,
                ]);
                let (ta, tb) = self.operand_types(s);
                let (a, b) = (self.operand(ta, d), self.operand(tb, d));
                Expr::binary(op, a, b, ty)
            }
            1 => self.integer_division(s, d),
            2 => {
                let ta = if s == Int { self.int_like() } else { Uint };
                let a = self.operand(ta, d);
                let amount = self.shift_amount(1, d);
                let op = self.rng.pick(&[BinOp::Shl, BinOp::Shr]);
                Expr::binary(op, a, amount, ty)
            }
            3 => {
                let ta = if s == Int { self.int_like() } else { Uint };
                let op = self.rng.pick(&[UnOp::Neg, UnOp::BitNot]);
                let a = self.operand(ta, d);
                Expr {
                    kind: ExprKind::Unary(op, Box::new(a)),
                    ty,
                }
            }
            4 => self.ternary(ty, d),
            5 => self.min_max_clamp(ty, d),
            6 => self.conversion(ty, d),
            7 => self.call_or_leaf(ty, d),
            _ => self.component(ty, d),
        }
    }

    /// `(a | 1) / (b | 1)` for `int` (never zero, never `INT_MIN / -1`),
    /// `a / (b | 1u)` for `uint`; `%` likewise.
    fn integer_division(&mut self, s: Scalar, d: u32) -> Expr {
        let op = self.rng.pick(&[BinOp::Div, BinOp::Rem]);
        let one = Expr::int_of(1, s);
        let (ta, tb) = self.operand_types(s);
        let a = self.operand(ta, d);
        let b = self.operand(tb, d);
        let b = Expr::binary(BinOp::Or, b, one.clone(), Ty::scalar(Scalar::common(tb, s)));
        let a = if s == Int {
            Expr::binary(BinOp::Or, a, one, Ty::scalar(Int))
        } else {
            a
        };
        Expr::binary(op, a, b, Ty::scalar(s))
    }

    /// A shift amount below 32 of width `width`: a literal or `(b & 31)`.
    fn shift_amount(&mut self, width: u8, d: u32) -> Expr {
        if width == 1 && self.rng.chance(30) {
            return Expr::int(self.rng.below(32) as i64);
        }
        let s = if width == 1 {
            allowed(self.rng.pick(&[Int, Uint, Short, Uchar]))
        } else {
            self.rng.pick(&[Int, Uint])
        };
        let ty = Ty::vector(s, width);
        let b = self.expr(ty, d);
        let mask = Expr::int_of(31, s.promoted());
        Expr::binary(BinOp::And, b, mask, ty.with_scalar(s.promoted()))
    }

    fn ternary(&mut self, ty: Ty, d: u32) -> Expr {
        let c = self.boolean(d);
        let a = self.expr(ty, d);
        let b = self.expr(ty, d);
        Expr {
            kind: ExprKind::Ternary(Box::new(c), Box::new(a), Box::new(b)),
            ty,
        }
    }

    /// `min`, `max` or `clamp` with literal bounds in order.
    fn min_max_clamp(&mut self, ty: Ty, d: u32) -> Expr {
        let a = self.expr(ty, d);
        if self.rng.chance(35) {
            let s = Ty::scalar(ty.scalar);
            let (x, y) = (self.literal(s), self.literal(s));
            let (lo, hi) = match (&x.kind, &y.kind) {
                (ExprKind::IntLit(p), ExprKind::IntLit(q)) if p > q => (y, x),
                (ExprKind::FloatLit(p), ExprKind::FloatLit(q)) if p > q => (y, x),
                _ => (x, y),
            };
            let (lo, hi) = if ty.is_vector() {
                (self.splat(lo, ty), self.splat(hi, ty))
            } else {
                (lo, hi)
            };
            return Expr::builtin(Builtin::Clamp, vec![a, lo, hi], ty);
        }
        let b = self.expr(ty, d);
        let f = self.rng.pick(&[Builtin::Min, Builtin::Max]);
        Expr::builtin(f, vec![a, b], ty)
    }

    fn splat(&mut self, e: Expr, ty: Ty) -> Expr {
        Expr {
            kind: ExprKind::Construct(vec![e]),
            ty,
        }
    }

    /// An explicit conversion to `ty` from another type of the same shape;
    /// floats are clamped into range first.
    fn conversion(&mut self, ty: Ty, d: u32) -> Expr {
        let from = if ty.is_vector() {
            self.rng.pick(&[Int, Uint, Float])
        } else {
            allowed(
                self.rng
                    .pick(&[Int, Uint, Float, Float, Short, Ushort, Uchar, Bool]),
            )
        };
        let from_ty = ty.with_scalar(from);
        let mut e = if from == Bool {
            self.boolean(d)
        } else {
            self.expr(from_ty, d)
        };
        if from == Float && ty.scalar != Float {
            let (lo, hi) = if ty.scalar == Int {
                (-1.0e9, 1.0e9)
            } else {
                (0.0, 4.0e9)
            };
            let (lo, hi) = (Expr::float(lo), Expr::float(hi));
            let (lo, hi) = if ty.is_vector() {
                (self.splat(lo, from_ty), self.splat(hi, from_ty))
            } else {
                (lo, hi)
            };
            e = Expr::builtin(Builtin::Clamp, vec![e, lo, hi], from_ty);
        }
        let spelling = self.rng.below(3) as u8;
        Expr::cast(e, ty, spelling)
    }

    /// A call of a pure helper returning `ty`, else a leaf.
    fn call_or_leaf(&mut self, ty: Ty, d: u32) -> Expr {
        let candidates: Vec<FnId> = (0..self.functions.len())
            .filter(|&f| self.functions[f].is_pure() && self.functions[f].ret == Some(ty))
            .collect();
        if candidates.is_empty() {
            return self.leaf(ty);
        }
        let f = self.rng.pick(&candidates);
        let params: Vec<Ty> = self.functions[f]
            .params
            .iter()
            .map(|&(p, _)| self.vars[p].ty)
            .collect();
        let args = params.into_iter().map(|t| self.expr(t, d)).collect();
        Expr {
            kind: ExprKind::Call(f, args),
            ty,
        }
    }

    /// Components of a vector of the same element type: `v.y`, `v.zx`.
    fn component(&mut self, ty: Ty, d: u32) -> Expr {
        let width = self.rng.range(2, 4) as u8;
        let v = self.expr(Ty::vector(ty.scalar, width), d);
        let comps = (0..ty.width)
            .map(|_| self.rng.below(u64::from(width)) as u8)
            .collect();
        Expr {
            kind: ExprKind::Swizzle(Box::new(v), comps),
            ty,
        }
    }

    /// A narrow-typed expression: conversions and same-type `?:` (which
    /// does not promote).
    fn narrow(&mut self, s: Scalar, d: u32) -> Expr {
        let ty = Ty::scalar(s);
        if self.rng.chance(30) {
            return self.ternary(ty, d);
        }
        let from = allowed(self.rng.pick(&[Int, Uint, Short, Ushort, Uchar]));
        let e = self.expr(Ty::scalar(from), d);
        let spelling = self.rng.below(3) as u8;
        Expr::cast(e, ty, spelling)
    }

    /// A scalar `bool`.
    pub fn boolean(&mut self, d: u32) -> Expr {
        let ty = Ty::scalar(Bool);
        match self.rng.weighted(&[50, 15, 8, 10, 5]) {
            0 => self.comparison(1, d),
            1 => {
                let op = self.rng.pick(&[BinOp::LogicalAnd, BinOp::LogicalOr]);
                let (a, b) = (self.expr(ty, d), self.expr(ty, d));
                Expr::binary(op, a, b, ty)
            }
            2 => {
                let a = self.expr(ty, d);
                Expr {
                    kind: ExprKind::Unary(UnOp::Not, Box::new(a)),
                    ty,
                }
            }
            3 => {
                let width = self.rng.range(2, 4) as u8;
                let v = self.comparison(width, d);
                let f = self.rng.pick(&[Builtin::Any, Builtin::All]);
                Expr::builtin(f, vec![v], ty)
            }
            _ => self.leaf(ty),
        }
    }

    /// A comparison giving `bool` (`width == 1`) or `boolN`; scalar
    /// operands may mix signed, unsigned, narrow and float types.
    pub fn comparison(&mut self, width: u8, d: u32) -> Expr {
        let op = self.rng.pick(&[
            BinOp::Lt,
            BinOp::Le,
            BinOp::Gt,
            BinOp::Ge,
            BinOp::Eq,
            BinOp::Ne,
        ]);
        let (ta, tb) = if width == 1 {
            let kind = self.rng.pick(&[Int, Uint, Float]);
            self.operand_types(kind)
        } else {
            let s = self.rng.pick(&[Int, Uint, Float]);
            (s, s)
        };
        let a = self.expr(Ty::vector(ta, width), d);
        let b = self.expr(Ty::vector(tb, width), d);
        Expr::binary(op, a, b, Ty::vector(Bool, width))
    }

    fn float(&mut self, d: u32) -> Expr {
        let ty = Ty::scalar(Float);
        match self.rng.weighted(&[30, 8, 20, 5, 5, 5, 8, 5, 6]) {
            0 => {
                let op = self.rng.pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul]);
                let (ta, tb) = self.operand_types(Float);
                let (a, b) = (self.operand(ta, d), self.operand(tb, d));
                if self.rng.chance(50) {
                    Expr::binary(op, a, b, ty)
                } else {
                    Expr::binary(op, b, a, ty)
                }
            }
            1 => self.float_division(ty, d),
            2 => self.float_builtin(ty, d),
            3 => {
                let a = self.expr(ty, d);
                Expr {
                    kind: ExprKind::Unary(UnOp::Neg, Box::new(a)),
                    ty,
                }
            }
            4 => self.ternary(ty, d),
            5 => self.select(ty, d),
            6 => self.conversion(ty, d),
            7 => self.call_or_leaf(ty, d),
            _ => self.component(ty, d),
        }
    }

    /// `a / (abs(b) + 1.0f)` or a division by a non-zero literal.
    fn float_division(&mut self, ty: Ty, d: u32) -> Expr {
        let a = self.expr(ty, d);
        let b = if self.rng.chance(30) {
            let v = self.rng.pick(&[2.0, -4.0, 0.5, 3.0, 10.0, -0.1]);
            let lit = Expr::float(v);
            if ty.is_vector() {
                self.splat(lit, ty)
            } else {
                lit
            }
        } else {
            let b = self.expr(ty, d);
            let abs = Expr::builtin(Builtin::Abs, vec![b], ty);
            Expr::binary(BinOp::Add, abs, Expr::float(1.0), ty)
        };
        Expr::binary(BinOp::Div, a, b, ty)
    }

    /// `min max abs floor fma sqrt(abs) clamp` on floats or float vectors.
    fn float_builtin(&mut self, ty: Ty, d: u32) -> Expr {
        match self.rng.below(6) {
            0 => self.min_max_clamp(ty, d),
            1 => {
                let f = self.rng.pick(&[Builtin::Abs, Builtin::Floor]);
                let a = self.expr(ty, d);
                Expr::builtin(f, vec![a], ty)
            }
            2 => {
                let args = (0..3).map(|_| self.expr(ty, d)).collect();
                Expr::builtin(Builtin::Fma, args, ty)
            }
            3 => {
                let a = self.expr(ty, d);
                let abs = Expr::builtin(Builtin::Abs, vec![a], ty);
                Expr::builtin(Builtin::Sqrt, vec![abs], ty)
            }
            4 => {
                // a * b + c, which the GPU may contract to fma.
                let (a, b, c) = (self.expr(ty, d), self.expr(ty, d), self.expr(ty, d));
                let product = Expr::binary(BinOp::Mul, a, b, ty);
                Expr::binary(BinOp::Add, product, c, ty)
            }
            _ => self.min_max_clamp(ty, d),
        }
    }

    /// `select(a, b, c)` with a condition of the same width.
    fn select(&mut self, ty: Ty, d: u32) -> Expr {
        let (a, b) = (self.expr(ty, d), self.expr(ty, d));
        let c = if ty.is_vector() {
            self.comparison(ty.width, d)
        } else {
            self.boolean(d)
        };
        Expr::builtin(Builtin::Select, vec![a, b, c], ty)
    }

    fn vector(&mut self, ty: Ty, d: u32) -> Expr {
        let s = ty.scalar;
        match self.rng.weighted(&[20, 25, 8, 10, 10, 6, 5, 6, 4, 6]) {
            0 => self.construct(ty, d),
            1 => {
                let ops: &[BinOp] = if s == Float {
                    &[BinOp::Add, BinOp::Sub, BinOp::Mul]
                } else {
                    &[
                        BinOp::Add,
                        BinOp::Sub,
                        BinOp::Mul,
                        BinOp::And,
                        BinOp::Or,
                        BinOp::Xor,
                    ]
                };
                let op = self.rng.pick(ops);
                let a = self.expr(ty, d);
                let b = if self.rng.chance(25) {
                    self.expr(Ty::scalar(s), d)
                } else {
                    self.expr(ty, d)
                };
                if self.rng.chance(50) {
                    Expr::binary(op, a, b, ty)
                } else {
                    Expr::binary(op, b, a, ty)
                }
            }
            2 if s == Float => self.float_division(ty, d),
            2 => {
                let op = self.rng.pick(&[BinOp::Div, BinOp::Rem]);
                let one = Expr::int_of(1, s);
                let (a, b) = (self.expr(ty, d), self.expr(ty, d));
                let b = Expr::binary(BinOp::Or, b, one.clone(), ty);
                let a = if s == Int {
                    Expr::binary(BinOp::Or, a, one, ty)
                } else {
                    a
                };
                Expr::binary(op, a, b, ty)
            }
            3 => self.component(ty, d),
            4 if s == Float => self.float_builtin(ty, d),
            4 => self.min_max_clamp(ty, d),
            5 => self.select(ty, d),
            6 => self.ternary(ty, d),
            7 => self.conversion(ty, d),
            8 if s == Float => self.call_or_leaf(ty, d),
            8 => {
                let a = self.expr(ty, d);
                let amount = Expr::binary(BinOp::And, self.expr(ty, d), Expr::int_of(31, s), ty);
                let op = self.rng.pick(&[BinOp::Shl, BinOp::Shr]);
                Expr::binary(op, a, amount, ty)
            }
            _ => {
                let op = if s == Uint || self.rng.chance(30) && s != Float {
                    UnOp::BitNot
                } else {
                    UnOp::Neg
                };
                let a = self.expr(ty, d);
                Expr {
                    kind: ExprKind::Unary(op, Box::new(a)),
                    ty,
                }
            }
        }
    }

    /// `T4(a, v.xy, b)`: parts of the same element type filling the width.
    fn construct(&mut self, ty: Ty, d: u32) -> Expr {
        let mut parts = Vec::new();
        let mut left = ty.width;
        while left > 0 {
            let w = if left >= 2 && self.rng.chance(40) {
                self.rng.range(2, i64::from(left)) as u8
            } else {
                1
            };
            let w = if w == ty.width { 1 } else { w };
            parts.push(self.expr(Ty::vector(ty.scalar, w), d));
            left -= w;
        }
        Expr {
            kind: ExprKind::Construct(parts),
            ty,
        }
    }
}

/// The narrow types, for the statement generator.
pub fn narrow_types() -> &'static [Scalar] {
    &NARROW
}
