//! SIMD-group matrices: `simdgroup_matrix<T, 8, 8>` (MSL §2.4, §6.7;
//! Metal 2.3).
//!
//! Metal: an 8×8 matrix of `float`, `half` or `bfloat` held by the 32
//! threads of a SIMD group together, two elements per thread.
//! `simdgroup_load`/`simdgroup_store` move it from/to device or threadgroup
//! memory, `simdgroup_multiply(_accumulate)` computes `a * b (+ c)`,
//! `make_filled_simdgroup_matrix<T, 8, 8>(v)` fills it and the constructor
//! `simdgroup_matrix<T, 8, 8>(v)` makes `v` times the identity. All of them
//! must be executed by the whole SIMD group with the same arguments.
//! `m.thread_elements()` is a reference to the calling thread's two
//! elements: lane `L` owns row `4·L₄ + 2·L₂ + L₁` and columns
//! `4·L₃ + 2·L₀` and the one after (`Lᵢ` the bits of `L`), the layout that
//! MLX's `steel` GEMM (`BaseMMAFrag::get_coord`) and Philip Turner's
//! `metal_simdgroup_matrix_storage` (`morton_order`) document; Apple's
//! specification leaves it out.
//!
//! WGSL: no cooperative matrix type (subgroup matrices are a Chromium
//! experiment only).
//!
//! Mapping, per-lane fragments (where Metal's 32-lane SIMD groups are
//! there: emulated in threadgroup memory, or native subgroups known to be
//! 32 wide, `Options::subgroup_width`): each thread holds its lane's two
//! elements as a `vec2<T>`, as an Apple GPU's lane does. Loads and stores
//! move only those two, `thread_elements()` is the fragment itself, and a
//! product reads the rows and columns it needs from the other lanes
//! (`fragment.rs`).
//!
//! Mapping, whole matrices (`--simd native` without a known 32-lane
//! width, where a SIMD group may be narrower than Apple's and cannot hold
//! 64 elements two per lane; also a module one of whose kernels falls back
//! from the emulation to such subgroups, W0410, which is lowered again
//! this way, `lower::lower`): every thread holds the whole matrix, as an
//! `array<vec2<T>, 32>` whose slot `L` is lane `L`'s `thread_elements()`.
//! Since Metal's operations are uniform across the SIMD group, each thread
//! computing all 64 elements itself (loads of all 64 elements, the
//! 8×8×8 product in a helper function, stores of all 64: the SIMD group's
//! threads write equal values) gives Metal's result on any subgroup width,
//! with no subgroup operation at all, at 32 times a lane's arithmetic.
//! `thread_elements()` is the place of the thread's own slot, so writes
//! through it change only that thread's copy; where some code of the
//! program calls it, each operand of a product or store is first made
//! whole again: slot `L` of every copy becomes lane `L`'s (a SIMD-group
//! shuffle per slot; Apple's 32-lane layout needs 32-lane SIMD groups
//! there).

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::{Place, Value};
use crate::lower::metal::simd_groups::SimdGroups;
use crate::lower::stdlib::simd::bin;
use crate::lower::stdlib::Builtin;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::callgraph;
use crate::source_map::Span;
use crate::syntax::ast::{self, Expr, ExprKind, TemplateArg};
use crate::types::{Scalar, Type};
use naga::{BinaryOperator as Bo, Expression, GatherMode, Handle, Statement};

mod fragment;
mod transfer;

/// The member function that exposes a thread's two elements.
pub(in crate::lower) const THREAD_ELEMENTS: &str = "thread_elements";

/// Matrix rows and columns.
const N: u32 = 8;
/// Slots of the per-thread copy: one per lane of Apple's SIMD group.
const SLOTS: u32 = 32;

/// What a matrix of `s` is held in: this lane's two elements (`fragments`),
/// or the whole matrix, lane `L`'s two elements in slot `L`.
pub(in crate::lower) fn storage_type(s: Scalar, fragments: bool) -> Type {
    match fragments {
        true => Type::Vector(s, 2),
        false => Type::Array(Box::new(Type::Vector(s, 2)), SLOTS),
    }
}

/// True if a call of `name` may construct a SIMD-group matrix (the
/// diagonal constructor, whose fragments depend on the lane).
pub(in crate::lower) fn is_matrix_type_name(name: &str) -> bool {
    name == "simdgroup_matrix"
        || matches!(
            crate::types::builtin_type(name),
            Some(Type::SimdgroupMatrix(_))
        )
}

/// Whether matrices are per-lane fragments under the SIMD-group mode
/// `simd` (never `Auto`) with the adapter's subgroup `width`, if known:
/// where every SIMD group has Apple's 32 lanes.
pub(in crate::lower) fn fragments_for(simd: SimdGroups, width: Option<u32>) -> bool {
    match simd {
        SimdGroups::Emulated32 => true,
        SimdGroups::Native => width == Some(super::simd_groups::WIDTH),
        SimdGroups::Auto => unreachable!("resolved before lowering"),
    }
}

/// The slot (owning lane) and component of element (`row`, `col`).
fn slot_of(row: u32, col: u32) -> (u32, u32) {
    let lane = ((row >> 2) & 1) << 4 | ((col >> 2) & 1) << 3 | (row & 3) << 1 | ((col >> 1) & 1);
    (lane, col & 1)
}

impl Lowerer<'_, '_> {
    /// Whether matrices are held as per-lane fragments ([`fragments_for`]).
    pub(in crate::lower) fn matrix_fragments(&self) -> bool {
        self.settings.matrix_fragments
    }

    /// True if `b` exchanges values between lanes: a product of per-lane
    /// fragments.
    pub(in crate::lower) fn matrix_exchange(&self, b: Builtin) -> bool {
        self.matrix_fragments()
            && matches!(
                b,
                Builtin::SimdgroupMultiply | Builtin::SimdgroupMultiplyAccumulate
            )
    }

    /// A call of the SIMD-group matrix function `b` (`Family::SimdMatrix`).
    pub(in crate::lower) fn simdgroup_matrix_call(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        match b {
            Builtin::SimdgroupLoad => self.matrix_transfer(fx, b, false, args, span),
            Builtin::SimdgroupStore => self.matrix_transfer(fx, b, true, args, span),
            Builtin::SimdgroupMultiply => self.matrix_product(fx, b, false, args, span),
            Builtin::SimdgroupMultiplyAccumulate => self.matrix_product(fx, b, true, args, span),
            _ => Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!(
                    "`{}` needs its template arguments: `{}<T, 8, 8>(value)`",
                    b.name(),
                    b.name()
                ),
            )),
        }
    }

    /// `make_filled_simdgroup_matrix<T, 8, 8>(value)`; `None` for any other
    /// templated call.
    pub(in crate::lower) fn simdgroup_matrix_templated(
        &mut self,
        fx: &mut FnCtx,
        path: &[String],
        targs: &[TemplateArg],
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        let joined = path.join("::");
        let name = joined.strip_prefix("metal::").unwrap_or(&joined);
        if Builtin::function(name) != Some(Builtin::MakeFilledSimdgroupMatrix) {
            return Ok(None);
        }
        let ts = ast::TypeSpec {
            is_const: false,
            is_constexpr: false,
            space: None,
            path: vec!["simdgroup_matrix".into()],
            args: targs.to_vec(),
            ptr_ops: Vec::new(),
            name_span: span,
            span,
        };
        let Type::SimdgroupMatrix(s) = self.program.resolve_type(&ts)? else {
            unreachable!("`simdgroup_matrix<..>` resolves to a SIMD-group matrix")
        };
        let [value] = args else {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{name}` takes 1 argument, {} given", args.len()),
            ));
        };
        let v = self.matrix_scalar(fx, s, value)?;
        Ok(Some(self.filled_matrix(fx, s, v, false, span)?))
    }

    /// `simdgroup_matrix<T, 8, 8>(v)`: `v` on the diagonal, zeros elsewhere;
    /// without an argument, zeros; a matrix argument is copied.
    pub(in crate::lower) fn simdgroup_matrix_construct(
        &mut self,
        fx: &mut FnCtx,
        s: Scalar,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let ty = Type::SimdgroupMatrix(s);
        match args {
            [] => {
                let t = self.naga_type(&ty, span)?;
                Ok(Value::Rv(fx.add(Expression::ZeroValue(t), span), ty))
            }
            [arg] if self.type_of(fx, arg)? == ty => {
                let (h, _) = self.rvalue(fx, arg)?;
                Ok(Value::Rv(h, ty))
            }
            [arg] => {
                let v = self.matrix_scalar(fx, s, arg)?;
                self.filled_matrix(fx, s, v, true, span)
            }
            _ => Err(Error::coded(
                Code::InvalidInitializer,
                span,
                format!(
                    "`{}` is constructed from one value (its diagonal)",
                    self.program.display(&ty)
                ),
            )),
        }
    }

    /// `m.thread_elements()`: the place of this thread's two elements;
    /// `None` unless `object` is a SIMD-group matrix.
    pub(in crate::lower) fn simdgroup_matrix_method(
        &mut self,
        fx: &mut FnCtx,
        object: &Value,
        method: &ast::Ident,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<Value>> {
        let ty = match object {
            Value::Place(p) => &p.ty,
            Value::Rv(_, t) => t,
            _ => return Ok(None),
        };
        let Type::SimdgroupMatrix(s) = *ty else {
            return Ok(None);
        };
        if method.name != THREAD_ELEMENTS {
            return Err(Error::coded(
                Code::UnknownMember,
                method.span,
                format!(
                    "`{}` has no member function `{}`",
                    self.program.display(ty),
                    method.name
                ),
            )
            .note(format!("its one member function is `{THREAD_ELEMENTS}()`")));
        }
        if !args.is_empty() {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{THREAD_ELEMENTS}` takes no arguments"),
            ));
        }
        let place = self.matrix_place_of(fx, object.clone(), span)?;
        if self.matrix_fragments() {
            return Ok(Some(Value::Place(Place {
                ty: Type::Vector(s, 2),
                ..place
            })));
        }
        let lane = self.simd_lane(fx, span);
        let ptr = fx.add(
            Expression::Access {
                base: place.ptr,
                index: lane,
            },
            span,
        );
        Ok(Some(Value::Place(Place {
            ptr,
            ty: Type::Vector(s, 2),
            writable: place.writable,
        })))
    }

    /// Some code of the program calls `thread_elements()`, so the threads'
    /// copies of a matrix may differ in the slots it wrote (computed once).
    pub(in crate::lower) fn simdgroup_copies_may_differ(&self) -> bool {
        *self.global.simdgroup_copies_differ.get_or_init(|| {
            let mut found = false;
            let mut visit = |e: &Expr| {
                found |= matches!(&e.kind, ExprKind::Member(_, m, _) if m.name == THREAD_ELEMENTS);
            };
            visit_items(&self.tu.items, &mut visit);
            found
        })
    }

    /// A value of the matrix's element type.
    fn matrix_scalar(&mut self, fx: &mut FnCtx, s: Scalar, e: &Expr) -> Result<Handle<Expression>> {
        let (h, t) = self.rvalue(fx, e)?;
        if !t.is_scalar_or_vector() || t.vector_size() != Some(1) {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                e.span,
                format!(
                    "a SIMD-group matrix of `{}` is filled from a scalar, not `{}`",
                    s.name(),
                    self.program.display(&t)
                ),
            ));
        }
        self.convert(fx, h, &t, &Type::Scalar(s), true, e.span)
    }

    /// Every element `v`, or (`diagonal`) `v` on the diagonal and zeros.
    fn filled_matrix(
        &mut self,
        fx: &mut FnCtx,
        s: Scalar,
        v: Handle<Expression>,
        diagonal: bool,
        span: Span,
    ) -> Result<Value> {
        if self.matrix_fragments() {
            return self.filled_fragment(fx, s, v, diagonal, span);
        }
        let ty = Type::SimdgroupMatrix(s);
        let pair = self.naga_type(&Type::Vector(s, 2), span)?;
        let zero = self.naga_type(&Type::Scalar(s), span)?;
        let zero = fx.add(Expression::ZeroValue(zero), span);
        let mut slots = vec![Vec::new(); SLOTS as usize];
        for row in 0..N {
            for col in 0..N {
                let (slot, _) = slot_of(row, col);
                let on = !diagonal || row == col;
                slots[slot as usize].push(if on { v } else { zero });
            }
        }
        let components = slots
            .into_iter()
            .map(|c| {
                fx.add(
                    Expression::Compose {
                        ty: pair,
                        components: c,
                    },
                    span,
                )
            })
            .collect();
        let t = self.naga_type(&ty, span)?;
        Ok(Value::Rv(
            fx.add(Expression::Compose { ty: t, components }, span),
            ty,
        ))
    }

    /// The matrix `v` as a place (a temporary is spilled to a local).
    fn matrix_place_of(&mut self, fx: &mut FnCtx, v: Value, span: Span) -> Result<Place> {
        match v {
            Value::Place(p) => Ok(p),
            Value::Rv(h, ty) => {
                let t = self.naga_type(&ty, span)?;
                let local = fx.local("metal_simdgroup_matrix", t, span);
                let ptr = fx.add(Expression::LocalVariable(local), span);
                fx.push(
                    Statement::Store {
                        pointer: ptr,
                        value: h,
                    },
                    span,
                );
                Ok(Place {
                    ptr,
                    ty,
                    writable: true,
                })
            }
            _ => Err(Error::coded(
                Code::InvalidOperands,
                span,
                "expected a SIMD-group matrix",
            )),
        }
    }

    /// The matrix argument `arg` of `name` (`as_place`: the result
    /// argument, which must be writable) and its element type.
    fn matrix_argument(
        &mut self,
        fx: &mut FnCtx,
        name: &str,
        arg: &Expr,
        as_place: bool,
    ) -> Result<(Value, Scalar)> {
        let v = self.expr(fx, arg)?;
        let ty = match &v {
            Value::Place(p) => Some(&p.ty),
            Value::Rv(_, t) => Some(t),
            _ => None,
        };
        let Some(&Type::SimdgroupMatrix(s)) = ty else {
            let shown = ty.map_or_else(
                || "this".to_string(),
                |t| format!("`{}`", self.program.display(t)),
            );
            return Err(Error::coded(
                Code::NoMatchingOverload,
                arg.span,
                format!(
                    "`{name}` takes SIMD-group matrices (`simdgroup_float8x8`, ...), not {shown}"
                ),
            ));
        };
        if as_place && !matches!(&v, Value::Place(p) if p.writable) {
            return Err(Error::coded(
                Code::NotAssignable,
                arg.span,
                format!("the result matrix of `{name}` must be a writable variable"),
            ));
        }
        Ok((v, s))
    }

    /// The value of a matrix operand: this lane's fragment, or the whole
    /// matrix; with `thread_elements()` in the program, slot `L` of this
    /// thread's whole copy is replaced by lane `L`'s.
    fn matrix_operand(
        &mut self,
        fx: &mut FnCtx,
        v: Value,
        s: Scalar,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if self.matrix_fragments() || !self.simdgroup_copies_may_differ() {
            return Ok(self.load(fx, v, span)?.0);
        }
        let (h, ty) = self.load(fx, v, span)?;
        let copy = self.matrix_place_of(fx, Value::Rv(h, ty), span)?;
        let pair = Type::Vector(s, 2);
        if self.emulates_simd() {
            // One exchange: each thread publishes its own slot, and reads
            // every lane's.
            let lane = self.simd_lane(fx, span);
            let own = fx.add(
                Expression::Access {
                    base: copy.ptr,
                    index: lane,
                },
                span,
            );
            let own = fx.add(Expression::Load { pointer: own }, span);
            let (array, base) = self.publish(fx, own, &pair, span)?;
            for slot in 0..SLOTS {
                let lane = self.u32_lit(fx, slot, span);
                let lane = self.clamp_to_threadgroup(fx, base, lane, span);
                let theirs = self.read_slot(fx, array, base, lane, span);
                let p = fx.add(
                    Expression::AccessIndex {
                        base: copy.ptr,
                        index: slot,
                    },
                    span,
                );
                fx.push(
                    Statement::Store {
                        pointer: p,
                        value: theirs,
                    },
                    span,
                );
            }
            self.retire(fx, span);
            return Ok(fx.add(Expression::Load { pointer: copy.ptr }, span));
        }
        for slot in 0..SLOTS {
            let p = fx.add(
                Expression::AccessIndex {
                    base: copy.ptr,
                    index: slot,
                },
                span,
            );
            let mine = fx.add(Expression::Load { pointer: p }, span);
            let lane = self.u32_lit(fx, slot, span);
            let theirs = self.gather(fx, GatherMode::Shuffle(lane), mine, &pair, span)?;
            fx.push(
                Statement::Store {
                    pointer: p,
                    value: theirs,
                },
                span,
            );
        }
        Ok(fx.add(Expression::Load { pointer: copy.ptr }, span))
    }
}

/// Calls `f` on every expression of every function body in `items`, member
/// functions and templates included.
fn visit_items(items: &[ast::Item], f: &mut dyn FnMut(&Expr)) {
    for item in items {
        match item {
            ast::Item::Function(func) => {
                if let Some(body) = &func.body {
                    callgraph::visit_block(body, f);
                }
            }
            ast::Item::Template(t) => match &t.item {
                ast::Templated::Function(func) => {
                    if let Some(body) = &func.body {
                        callgraph::visit_block(body, f);
                    }
                }
                ast::Templated::Struct(st) => visit_items(&st.members, f),
                ast::Templated::Variable(_) | ast::Templated::Alias(_) => {}
            },
            _ => {}
        }
    }
}

impl Lowerer<'_, '_> {
    /// `simdgroup_multiply(d, a, b)`: `d = a * b`;
    /// `simdgroup_multiply_accumulate(d, a, b, c)`: `d = a * b + c`.
    fn matrix_product(
        &mut self,
        fx: &mut FnCtx,
        b: Builtin,
        accumulate: bool,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        let name = b.name();
        let arity = if accumulate { 4 } else { 3 };
        if args.len() != arity {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!("`{name}` takes {arity} arguments, {} given", args.len()),
            ));
        }
        let (d, s) = self.matrix_argument(fx, name, &args[0], true)?;
        let mut operands = Vec::new();
        for arg in &args[1..] {
            let (v, t) = self.matrix_argument(fx, name, arg, false)?;
            if t != s {
                return Err(Error::coded(
                    Code::NoMatchingOverload,
                    arg.span,
                    format!(
                        "`{name}`: the matrices must have one element type; the result holds `{}`, this one `{}`",
                        s.name(),
                        t.name()
                    ),
                ));
            }
            operands.push(self.matrix_operand(fx, v, s, arg.span)?);
        }
        let result = self.matrix_product_value(fx, s, operands, span)?;
        self.store(fx, &d, result, &Type::SimdgroupMatrix(s), span)?;
        Ok(Value::Void)
    }

    /// `a * b` of two SIMD-group matrices: Metal's `operator*`
    /// (`<metal_simdgroup_matrix>`), which is `simdgroup_multiply` into a
    /// new matrix; `None` unless both operands are matrices of one element
    /// type.
    pub(in crate::lower) fn simdgroup_matrix_times(
        &mut self,
        fx: &mut FnCtx,
        (ha, ta): (Handle<Expression>, &Type),
        (hb, tb): (Handle<Expression>, &Type),
        span: Span,
    ) -> Option<Result<(Handle<Expression>, Type)>> {
        let (&Type::SimdgroupMatrix(s), &Type::SimdgroupMatrix(t)) = (ta, tb) else {
            return None;
        };
        if s != t {
            return None;
        }
        Some((|| {
            let mut operands = Vec::new();
            for (h, ty) in [(ha, ta), (hb, tb)] {
                operands.push(self.matrix_operand(fx, Value::Rv(h, ty.clone()), s, span)?);
            }
            let result = self.matrix_product_value(fx, s, operands, span)?;
            Ok((result, Type::SimdgroupMatrix(s)))
        })())
    }

    /// `operands[0] * operands[1] (+ operands[2])`, the operands' values
    /// made by [`Self::matrix_operand`].
    fn matrix_product_value(
        &mut self,
        fx: &mut FnCtx,
        s: Scalar,
        operands: Vec<Handle<Expression>>,
        span: Span,
    ) -> Result<Handle<Expression>> {
        if self.matrix_fragments() {
            return self.fragment_product(fx, s, &operands, span);
        }
        let accumulate = operands.len() == 3;
        let function = self.matrix_product_function(s, accumulate, span)?;
        let result = fx.add_result(Expression::CallResult(function), span);
        fx.push(
            Statement::Call {
                function,
                arguments: operands,
                result: Some(result),
            },
            span,
        );
        Ok(result)
    }

    /// The helper computing `a * b (+ c)` for matrices of `s`, made once per
    /// module: each element the sum of its 8 products by fused
    /// multiply-adds, rounded once to `half`/`bfloat` where those are held in
    /// `f32`.
    fn matrix_product_function(
        &mut self,
        s: Scalar,
        accumulate: bool,
        span: Span,
    ) -> Result<Handle<naga::Function>> {
        let op = if accumulate {
            "multiply_accumulate"
        } else {
            "multiply"
        };
        let name = format!("metal_simdgroup_{op}_{}", s.name());
        let existing = self
            .global
            .module
            .functions
            .iter()
            .find(|(_, f)| f.name.as_deref() == Some(name.as_str()));
        if let Some((h, _)) = existing {
            return Ok(h);
        }
        let ty = Type::SimdgroupMatrix(s);
        let matrix = self.naga_type(&ty, span)?;
        let pair = self.naga_type(&Type::Vector(s, 2), span)?;
        let mut fx = FnCtx::new(&name, ty.clone());
        let operands = if accumulate { 3 } else { 2 };
        for arg in ["a", "b", "c"].iter().take(operands) {
            fx.function.arguments.push(naga::FunctionArgument {
                name: Some(arg.to_string()),
                ty: matrix,
                binding: None,
            });
        }
        fx.function.result = Some(naga::FunctionResult {
            ty: matrix,
            binding: None,
        });
        let args: Vec<_> = (0..operands as u32)
            .map(|i| fx.add(Expression::FunctionArgument(i), span))
            .collect();
        let element = |fx: &mut FnCtx, m: Handle<Expression>, row: u32, col: u32| {
            let (slot, component) = slot_of(row, col);
            let pair = fx.add(
                Expression::AccessIndex {
                    base: m,
                    index: slot,
                },
                span,
            );
            fx.add(
                Expression::AccessIndex {
                    base: pair,
                    index: component,
                },
                span,
            )
        };
        let mut slots = vec![[None, None]; SLOTS as usize];
        for row in 0..N {
            for col in 0..N {
                let mut sum = if accumulate {
                    Some(element(&mut fx, args[2], row, col))
                } else {
                    None
                };
                for k in 0..N {
                    let x = element(&mut fx, args[0], row, k);
                    let y = element(&mut fx, args[1], k, col);
                    sum = Some(match sum {
                        None => bin(&mut fx, Bo::Multiply, x, y, span),
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
                let sum = self.round_float_value(&mut fx, sum, &Type::Scalar(s), span);
                let (slot, component) = slot_of(row, col);
                slots[slot as usize][component as usize] = Some(sum);
            }
        }
        let components = (slots.into_iter().enumerate())
            .map(|(slot, [x, y])| {
                let components = vec![x.expect("every element"), y.expect("every element")];
                let h = fx.add(
                    Expression::Compose {
                        ty: pair,
                        components,
                    },
                    span,
                );
                // One `let` per lane's pair keeps the WGSL readable.
                fx.function
                    .named_expressions
                    .insert(h, format!("lane{slot}"));
                h
            })
            .collect();
        let value = fx.add(
            Expression::Compose {
                ty: matrix,
                components,
            },
            span,
        );
        fx.push(Statement::Return { value: Some(value) }, span);
        Ok(self
            .global
            .module
            .functions
            .append(fx.finish(), Self::span(span)))
    }
}

#[cfg(test)]
mod tests {
    use super::slot_of;

    /// Apple's layout as MLX's `BaseMMAFrag::get_coord` computes it: lane
    /// `L` holds row `fm` and columns `fn`, `fn + 1`.
    #[test]
    fn slots_follow_apples_lane_layout() {
        for lane in 0..32u32 {
            let qid = lane / 4;
            let fm = (qid & 4) + ((lane / 2) % 4);
            let fnn = (qid & 2) * 2 + (lane % 2) * 2;
            assert_eq!(slot_of(fm, fnn), (lane, 0), "lane {lane}");
            assert_eq!(slot_of(fm, fnn + 1), (lane, 1), "lane {lane}");
        }
    }
}
