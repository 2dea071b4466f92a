//! Per-lane fragments: each thread holds only its lane's two elements of
//! a SIMD-group matrix, as an Apple GPU's lane does (see the parent
//! module for the layout).
//!
//! A product `a * b (+ c)` gives lane `L` the elements (`r`, `c₀`) and
//! (`r`, `c₀ + 1`) of its row `r` and column pair `c₀`: it needs row `r`
//! of `a`, the fragments of the 4 lanes holding that row, and columns
//! `c₀`, `c₀ + 1` of `b`, the fragments of the 8 lanes holding that column
//! pair (one per row `k`, each fragment exactly the pair
//! `b[k][c₀..c₀ + 2]`). They are read from the other lanes by subgroup
//! shuffles where the SIMD groups are native, or from one exchange of
//! both operands through threadgroup memory where 32 lanes are emulated;
//! then come the same 8 fused multiply-adds per element, in the same
//! order, as the whole-matrix product's.

use super::N;
use crate::diagnostics::Code;
use crate::lower::ctx::entry::EntryStage;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::stdlib::simd::{bin, select};
use crate::lower::{Error, Lowerer, Result};
use crate::source_map::Span;
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, GatherMode, Handle, Statement};

/// The bits of a lane number that give its row (`4·L₄ + 2·L₂ + L₁`).
const ROW_BITS: u32 = 0b10110;
/// The bits of a lane number that give its first column (`4·L₃ + 2·L₀`).
const COLUMN_BITS: u32 = 0b01001;

/// The lane holding elements `2q` and `2q + 1` of the row whose lanes'
/// row bits are `row_bits`: the column bits for column `2q`.
fn row_owner_bits(q: u32) -> u32 {
    (q >> 1) << 3 | (q & 1)
}

/// The lane holding row `k` of the column pair whose lanes' column bits
/// are `column_bits`: the row bits for row `k`.
fn column_owner_bits(k: u32) -> u32 {
    (k >> 2) << 4 | (k & 3) << 1
}

impl Lowerer<'_, '_> {
    /// This thread's lane, which decides its share of every matrix: known
    /// in kernels (and the helpers they call), where the SIMD groups are
    /// emulated or native; vertex and fragment functions are refused.
    pub(super) fn fragment_lane(
        &mut self,
        fx: &mut FnCtx,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if let EntryStage::Vertex | EntryStage::Fragment = self.entry.stage {
            let stage = match self.entry.stage {
                EntryStage::Vertex => "vertex",
                _ => "fragment",
            };
            return Err(Error::coded(
                Code::Unsupported,
                span,
                format!("SIMD-group matrices are translated in kernels only, not in a {stage} function"),
            )
            .note("each thread holds its lane's two elements of a matrix, and the translation of vertex and fragment functions has no SIMD-group lane to hold them by")
            .note("compute the matrix product in a kernel, or with scalar arithmetic here"));
        }
        Ok(self.simd_lane(fx, span))
    }

    /// The row of `lane`'s two elements: `((lane >> 2) & 4) | ((lane >> 1) & 3)`.
    pub(super) fn fragment_row(
        &mut self,
        fx: &mut FnCtx,
        lane: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let high = self.bits_of(fx, lane, 2, 4, span);
        let low = self.bits_of(fx, lane, 1, 3, span);
        bin(fx, Bo::InclusiveOr, high, low, span)
    }

    /// The first column of `lane`'s two elements:
    /// `((lane >> 1) & 4) | ((lane & 1) << 1)`.
    pub(super) fn fragment_column(
        &mut self,
        fx: &mut FnCtx,
        lane: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        let high = self.bits_of(fx, lane, 1, 4, span);
        let one = self.u32_lit(fx, 1, span);
        let low = bin(fx, Bo::And, lane, one, span);
        let low = bin(fx, Bo::ShiftLeft, low, one, span);
        bin(fx, Bo::InclusiveOr, high, low, span)
    }

    /// `(v >> shift) & mask`.
    fn bits_of(
        &mut self,
        fx: &mut FnCtx,
        v: Handle<Expression>,
        shift: u32,
        mask: u32,
        span: Span,
    ) -> Handle<Expression> {
        let shift = self.u32_lit(fx, shift, span);
        let mask = self.u32_lit(fx, mask, span);
        let shifted = bin(fx, Bo::ShiftRight, v, shift, span);
        bin(fx, Bo::And, shifted, mask, span)
    }

    /// This lane's fragment of a matrix whose every element is `v`, or
    /// (`diagonal`) of `v` times the identity.
    pub(super) fn filled_fragment(
        &mut self,
        fx: &mut FnCtx,
        s: Scalar,
        v: Handle<Expression>,
        diagonal: bool,
        span: Span,
    ) -> Result<Value> {
        let ty = Type::SimdgroupMatrix(s);
        let pair = self.naga_type(&ty, span)?;
        let components = if diagonal {
            let zero = self.naga_type(&Type::Scalar(s), span)?;
            let zero = fx.add(Expression::ZeroValue(zero), span);
            let lane = self.fragment_lane(fx, span)?;
            let row = self.fragment_row(fx, lane, span);
            let col = self.fragment_column(fx, lane, span);
            let one = self.u32_lit(fx, 1, span);
            let next = bin(fx, Bo::Add, col, one, span);
            let first = bin(fx, Bo::Equal, row, col, span);
            let second = bin(fx, Bo::Equal, row, next, span);
            vec![
                select(fx, first, v, zero, span),
                select(fx, second, v, zero, span),
            ]
        } else {
            vec![v, v]
        };
        let h = fx.add(
            Expression::Compose {
                ty: pair,
                components,
            },
            span,
        );
        Ok(Value::Rv(h, ty))
    }

    /// This lane's fragment of `a * b (+ c)`, `operands` being the
    /// fragments of `a`, `b` (and `c`).
    pub(super) fn fragment_product(
        &mut self,
        fx: &mut FnCtx,
        s: Scalar,
        operands: &[Handle<Expression>],
        span: Span,
    ) -> Result<Handle<Expression>> {
        let pair_ty = Type::Vector(s, 2);
        let pair = self.naga_type(&pair_ty, span)?;
        let result = fx.local("metal_simdgroup_product", pair, span);
        let result = fx.add(Expression::LocalVariable(result), span);
        let lane = self.fragment_lane(fx, span)?;
        let row_bits = self.u32_lit(fx, ROW_BITS, span);
        let row_bits = bin(fx, Bo::And, lane, row_bits, span);
        let column_bits = self.u32_lit(fx, COLUMN_BITS, span);
        let column_bits = bin(fx, Bo::And, lane, column_bits, span);
        let owner = |l: &mut Self, fx: &mut FnCtx, bits, other| match other {
            0 => bits,
            _ => {
                let other = l.u32_lit(fx, other, span);
                bin(fx, Bo::InclusiveOr, bits, other, span)
            }
        };
        let row_owners: Vec<_> = (0..N / 2)
            .map(|q| owner(self, fx, row_bits, row_owner_bits(q)))
            .collect();
        let column_owners: Vec<_> = (0..N)
            .map(|k| owner(self, fx, column_bits, column_owner_bits(k)))
            .collect();
        let (a, b) = (operands[0], operands[1]);
        if self.emulates_simd() {
            // One exchange of both operands: `(a, b)` as a 4-vector.
            let quad_ty = Type::Vector(s, 4);
            let quad = self.naga_type(&quad_ty, span)?;
            let both = fx.add(
                Expression::Compose {
                    ty: quad,
                    components: vec![a, b],
                },
                span,
            );
            let (array, base) = self.publish(fx, both, &quad_ty, span)?;
            // Every lane of a full SIMD group is read (Metal leaves matrices
            // in partial SIMD groups undefined; WGSL keeps any index inside
            // the exchange array).
            let read = |l: &mut Self, fx: &mut FnCtx, owner, high: bool| {
                let theirs = l.read_slot(fx, array, base, owner, span);
                let (x, y) = match high {
                    false => (naga::SwizzleComponent::X, naga::SwizzleComponent::Y),
                    true => (naga::SwizzleComponent::Z, naga::SwizzleComponent::W),
                };
                fx.add(
                    Expression::Swizzle {
                        size: naga::VectorSize::Bi,
                        vector: theirs,
                        pattern: [x, y, x, y],
                    },
                    span,
                )
            };
            let rows: Vec<_> = (row_owners.iter())
                .map(|&o| read(self, fx, o, false))
                .collect();
            let columns: Vec<_> = (column_owners.iter())
                .map(|&o| read(self, fx, o, true))
                .collect();
            // The sums are taken before the exchange array is released.
            let sum = self.fragment_sums(fx, s, &rows, &columns, operands.get(2), span);
            fx.push(
                Statement::Store {
                    pointer: result,
                    value: sum,
                },
                span,
            );
            self.retire(fx, span);
        } else {
            let shuffle = |l: &mut Self, fx: &mut FnCtx, v, owner| {
                l.gather(fx, GatherMode::Shuffle(owner), v, &pair_ty, span)
            };
            let rows = (row_owners.iter())
                .map(|&o| shuffle(self, fx, a, o))
                .collect::<Result<Vec<_>>>()?;
            let columns = (column_owners.iter())
                .map(|&o| shuffle(self, fx, b, o))
                .collect::<Result<Vec<_>>>()?;
            let sum = self.fragment_sums(fx, s, &rows, &columns, operands.get(2), span);
            fx.push(
                Statement::Store {
                    pointer: result,
                    value: sum,
                },
                span,
            );
        }
        Ok(fx.add(Expression::Load { pointer: result }, span))
    }

    /// The lane's two elements of the product: for each `k`, element `k`
    /// of its row of `a` (`rows`: that row's 4 fragments) times row `k` of
    /// its column pair of `b` (`columns`), added to `c` (or the first
    /// product) by fused multiply-adds, then rounded once to `half` or
    /// `bfloat` where those are held in `f32`.
    fn fragment_sums(
        &mut self,
        fx: &mut FnCtx,
        s: Scalar,
        rows: &[Handle<Expression>],
        columns: &[Handle<Expression>],
        c: Option<&Handle<Expression>>,
        span: Span,
    ) -> Handle<Expression> {
        let mut sum = c.copied();
        for k in 0..N {
            let x = fx.add(
                Expression::AccessIndex {
                    base: rows[(k / 2) as usize],
                    index: k % 2,
                },
                span,
            );
            let x = fx.add(
                Expression::Splat {
                    size: naga::VectorSize::Bi,
                    value: x,
                },
                span,
            );
            let y = columns[k as usize];
            sum = Some(match sum {
                None => bin(fx, Bo::Multiply, x, y, span),
                Some(acc) => fx.add(
                    Expression::Math {
                        fun: naga::MathFunction::Fma,
                        arg: x,
                        arg1: Some(y),
                        arg2: Some(acc),
                        arg3: None,
                    },
                    span,
                ),
            });
        }
        let sum = sum.expect("8 products");
        self.round_float_value(fx, sum, &Type::Vector(s, 2), span)
    }
}

#[cfg(test)]
mod tests {
    use super::{column_owner_bits, row_owner_bits, COLUMN_BITS, ROW_BITS};
    use crate::lower::metal::simdgroup_matrix::slot_of;

    /// The lanes a product reads hold what it needs: for every lane, the
    /// row owners hold its row's column pairs, the column owners hold row
    /// `k` of its column pair.
    #[test]
    fn owners_hold_the_row_and_the_column_pair() {
        for lane in 0..32u32 {
            let (row, col) = (0..8)
                .flat_map(|r| (0..8).map(move |c| (r, c)))
                .find(|&(r, c)| slot_of(r, c) == (lane, 0))
                .expect("every lane holds an element");
            for q in 0..4 {
                let owner = (lane & ROW_BITS) | row_owner_bits(q);
                assert_eq!(slot_of(row, 2 * q), (owner, 0), "lane {lane}, q {q}");
            }
            for k in 0..8 {
                let owner = (lane & COLUMN_BITS) | column_owner_bits(k);
                assert_eq!(slot_of(k, col), (owner, 0), "lane {lane}, k {k}");
            }
        }
    }
}
