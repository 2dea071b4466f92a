//! Test support: MSL lowered to a naga module without the rest of the
//! pipeline, and a small evaluator of naga expressions that follows WGSL's
//! arithmetic (wrapping `u32`, IEEE `f32`, `round` to nearest even,
//! shifts by the low five bits), so that the unit tests of the Metal rules
//! can compute what the generated IR yields and compare it with values
//! derived independently (the `half` crate, the MSL specification's
//! layout tables).

use crate::lower::{lower, HalfMode, Lowered, Options};
use naga::{BinaryOperator as Bo, Expression, Handle, Literal, MathFunction as Mf};

/// Lowers `msl` (no preprocessing: Metal's standard headers are empty) with
/// `half` represented as `half_mode`; panics on any error.
pub(in crate::lower) fn lower_msl(msl: &str, half_mode: HalfMode) -> Lowered {
    let tu = crate::syntax::parse(msl).unwrap_or_else(|e| panic!("syntax: {e:?}"));
    let (program, errors) = crate::sema::analyze(&tu);
    assert!(errors.is_empty(), "{errors:?}");
    let options = Options {
        half: half_mode,
        ..Options::default()
    };
    lower(
        &tu,
        &program,
        &options,
        &mut crate::lower::Rounds::default(),
    )
    .unwrap_or_else(|e| panic!("lowering: {e:?}"))
}

/// The entry point `name` of `module`.
pub(in crate::lower) fn entry<'m>(module: &'m naga::Module, name: &str) -> &'m naga::Function {
    &module
        .entry_points
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no entry point `{name}`"))
        .function
}

/// A value: a scalar, or the components of a vector.
#[derive(Clone, Debug, PartialEq)]
pub(in crate::lower) enum V {
    U(u32),
    I(i32),
    F(f32),
    B(bool),
    Vec(Vec<V>),
}

impl V {
    pub(in crate::lower) fn u(&self) -> u32 {
        match *self {
            V::U(v) => v,
            ref other => panic!("not a u32: {other:?}"),
        }
    }

    pub(in crate::lower) fn f(&self) -> f32 {
        match *self {
            V::F(v) => v,
            ref other => panic!("not an f32: {other:?}"),
        }
    }

    pub(in crate::lower) fn b(&self) -> bool {
        match *self {
            V::B(v) => v,
            ref other => panic!("not a bool: {other:?}"),
        }
    }

    fn bits(&self) -> u32 {
        match *self {
            V::U(v) => v,
            V::I(v) => v as u32,
            V::F(v) => v.to_bits(),
            ref other => panic!("no 32-bit pattern: {other:?}"),
        }
    }
}

/// Evaluates expressions of `function`; `leaf` gives the values of the
/// expressions the evaluator cannot compute itself (arguments, loads).
pub(in crate::lower) struct Eval<'a> {
    pub function: &'a naga::Function,
    pub leaf: &'a dyn Fn(Handle<Expression>) -> Option<V>,
}

impl Eval<'_> {
    pub(in crate::lower) fn eval(&self, h: Handle<Expression>) -> V {
        if let Some(v) = (self.leaf)(h) {
            return v;
        }
        match self.function.expressions[h] {
            Expression::Literal(Literal::U32(v)) => V::U(v),
            Expression::Literal(Literal::I32(v)) => V::I(v),
            Expression::Literal(Literal::F32(v)) => V::F(v),
            // binary16 values, held as the f32 of the same value.
            Expression::Literal(Literal::F16(v)) => V::F(v.to_f32()),
            Expression::Literal(Literal::Bool(v)) => V::B(v),
            Expression::Splat { size, value } => V::Vec(vec![self.eval(value); size as usize]),
            Expression::Compose { ref components, .. } => V::Vec(
                components
                    .iter()
                    .flat_map(|c| match self.eval(*c) {
                        V::Vec(items) => items,
                        scalar => vec![scalar],
                    })
                    .collect(),
            ),
            Expression::AccessIndex { base, index } => match self.eval(base) {
                V::Vec(items) => items[index as usize].clone(),
                other => panic!("indexing {other:?}"),
            },
            Expression::Binary { op, left, right } => {
                lanewise2(self.eval(left), self.eval(right), &|a, b| binary(op, a, b))
            }
            Expression::Unary { op, expr } => lanewise(self.eval(expr), &|v| match (op, v) {
                (naga::UnaryOperator::BitwiseNot, V::U(v)) => V::U(!v),
                (naga::UnaryOperator::LogicalNot, V::B(v)) => V::B(!v),
                (naga::UnaryOperator::Negate, V::F(v)) => V::F(-v),
                (naga::UnaryOperator::Negate, V::I(v)) => V::I(v.wrapping_neg()),
                (op, v) => panic!("{op:?} {v:?}"),
            }),
            Expression::As {
                expr,
                kind,
                convert,
            } => lanewise(self.eval(expr), &|v| convert_scalar(v, kind, convert)),
            Expression::Math {
                fun: Mf::Pack2x16float,
                arg,
                ..
            } => {
                // WGSL: each component converted to binary16, the first in
                // the low 16 bits.
                let V::Vec(pair) = self.eval(arg) else {
                    panic!("pack2x16float of a scalar")
                };
                let half_bits = |v: &V| u32::from(half::f16::from_f32(v.f()).to_bits());
                V::U(half_bits(&pair[0]) | half_bits(&pair[1]) << 16)
            }
            Expression::Math { fun, arg, arg1, .. } => {
                let a = self.eval(arg);
                match arg1 {
                    Some(b) => lanewise2(a, self.eval(b), &|a, b| math2(fun, a, b)),
                    None => lanewise(a, &|a| math1(fun, a)),
                }
            }
            Expression::Select {
                condition,
                accept,
                reject,
            } => {
                let (c, a, r) = (self.eval(condition), self.eval(accept), self.eval(reject));
                match (c, a, r) {
                    (V::B(c), a, r) => {
                        if c {
                            a
                        } else {
                            r
                        }
                    }
                    (V::Vec(c), V::Vec(a), V::Vec(r)) => V::Vec(
                        c.iter()
                            .zip(a)
                            .zip(r)
                            .map(|((c, a), r)| if c.b() { a } else { r })
                            .collect(),
                    ),
                    other => panic!("select {other:?}"),
                }
            }
            Expression::Relational { fun, argument } => {
                let V::Vec(items) = self.eval(argument) else {
                    panic!("{fun:?} of a scalar")
                };
                let mut lanes = items.iter().map(V::b);
                V::B(match fun {
                    naga::RelationalFunction::All => lanes.all(|b| b),
                    naga::RelationalFunction::Any => lanes.any(|b| b),
                    other => panic!("{other:?}"),
                })
            }
            ref other => panic!("cannot evaluate {other:?}"),
        }
    }
}

fn lanewise(v: V, f: &dyn Fn(V) -> V) -> V {
    match v {
        V::Vec(items) => V::Vec(items.into_iter().map(f).collect()),
        scalar => f(scalar),
    }
}

fn lanewise2(a: V, b: V, f: &dyn Fn(V, V) -> V) -> V {
    match (a, b) {
        (V::Vec(a), V::Vec(b)) => V::Vec(a.into_iter().zip(b).map(|(a, b)| f(a, b)).collect()),
        (V::Vec(a), b) => V::Vec(a.into_iter().map(|a| f(a, b.clone())).collect()),
        (a, V::Vec(b)) => V::Vec(b.into_iter().map(|b| f(a.clone(), b)).collect()),
        (a, b) => f(a, b),
    }
}

fn binary(op: Bo, a: V, b: V) -> V {
    match (a, b) {
        (V::U(a), V::U(b)) => match op {
            Bo::Add => V::U(a.wrapping_add(b)),
            Bo::Subtract => V::U(a.wrapping_sub(b)),
            Bo::Multiply => V::U(a.wrapping_mul(b)),
            Bo::Divide => V::U(a / b),
            Bo::Modulo => V::U(a % b),
            Bo::And => V::U(a & b),
            Bo::InclusiveOr => V::U(a | b),
            Bo::ExclusiveOr => V::U(a ^ b),
            Bo::ShiftLeft => V::U(a << (b & 31)),
            Bo::ShiftRight => V::U(a >> (b & 31)),
            Bo::Less => V::B(a < b),
            Bo::LessEqual => V::B(a <= b),
            Bo::Greater => V::B(a > b),
            Bo::GreaterEqual => V::B(a >= b),
            Bo::Equal => V::B(a == b),
            Bo::NotEqual => V::B(a != b),
            other => panic!("u32 {other:?}"),
        },
        (V::F(a), V::F(b)) => match op {
            Bo::Add => V::F(a + b),
            Bo::Subtract => V::F(a - b),
            Bo::Multiply => V::F(a * b),
            Bo::Divide => V::F(a / b),
            Bo::Less => V::B(a < b),
            Bo::Greater => V::B(a > b),
            Bo::Equal => V::B(a == b),
            Bo::NotEqual => V::B(a != b),
            other => panic!("f32 {other:?}"),
        },
        (V::B(a), V::B(b)) => match op {
            Bo::LogicalAnd | Bo::And => V::B(a && b),
            Bo::LogicalOr | Bo::InclusiveOr => V::B(a || b),
            Bo::Equal => V::B(a == b),
            Bo::NotEqual => V::B(a != b),
            other => panic!("bool {other:?}"),
        },
        (a, b) => panic!("{op:?} of {a:?} and {b:?}"),
    }
}

fn convert_scalar(v: V, kind: naga::ScalarKind, convert: Option<u8>) -> V {
    use naga::ScalarKind as K;
    match convert {
        // A bitcast.
        None => {
            let bits = v.bits();
            match kind {
                K::Uint => V::U(bits),
                K::Sint => V::I(bits as i32),
                K::Float => V::F(f32::from_bits(bits)),
                other => panic!("bitcast to {other:?}"),
            }
        }
        Some(4) => match (v, kind) {
            (V::F(f), K::Float) => V::F(f),
            (V::U(u), K::Float) => V::F(u as f32),
            (V::I(i), K::Float) => V::F(i as f32),
            (V::I(i), K::Uint) => V::U(i as u32),
            (V::U(u), K::Sint) => V::I(u as i32),
            (V::B(b), K::Uint) => V::U(b.into()),
            (v, kind) => panic!("convert {v:?} to {kind:?}"),
        },
        Some(width) => panic!("conversion to width {width}"),
    }
}

fn math1(fun: Mf, a: V) -> V {
    match (fun, a) {
        // WGSL's `round` rounds halfway cases to even.
        (Mf::Round, V::F(x)) => V::F(x.round_ties_even()),
        (Mf::Abs, V::F(x)) => V::F(x.abs()),
        (Mf::Abs, V::U(x)) => V::U(x),
        (fun, a) => panic!("{fun:?}({a:?})"),
    }
}

fn math2(fun: Mf, a: V, b: V) -> V {
    match (fun, a, b) {
        (Mf::Max, V::U(a), V::U(b)) => V::U(a.max(b)),
        (Mf::Min, V::U(a), V::U(b)) => V::U(a.min(b)),
        (Mf::Max, V::F(a), V::F(b)) => V::F(a.max(b)),
        (Mf::Min, V::F(a), V::F(b)) => V::F(a.min(b)),
        (fun, a, b) => panic!("{fun:?}({a:?}, {b:?})"),
    }
}

/// Every statement of `block`, nested blocks included, in order.
pub(in crate::lower) fn statements(block: &naga::Block) -> Vec<&naga::Statement> {
    let mut out = Vec::new();
    for s in block.iter() {
        out.push(s);
        match s {
            naga::Statement::Block(b) => out.extend(statements(b)),
            naga::Statement::If { accept, reject, .. } => {
                out.extend(statements(accept));
                out.extend(statements(reject));
            }
            naga::Statement::Loop {
                body, continuing, ..
            } => {
                out.extend(statements(body));
                out.extend(statements(continuing));
            }
            naga::Statement::Switch { cases, .. } => {
                cases.iter().for_each(|c| out.extend(statements(&c.body)))
            }
            _ => {}
        }
    }
    out
}

/// The global variable named `name`.
pub(in crate::lower) fn global(module: &naga::Module, name: &str) -> Handle<naga::GlobalVariable> {
    module
        .global_variables
        .iter()
        .find(|(_, g)| g.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no global `{name}`"))
        .0
}

/// For [`Eval::leaf`]: the value of a load of a global named in `values`.
pub(in crate::lower) fn loaded_globals<'a>(
    module: &'a naga::Module,
    function: &'a naga::Function,
    values: &'a [(&'a str, V)],
) -> impl Fn(Handle<Expression>) -> Option<V> + 'a {
    move |h| {
        let Expression::Load { pointer } = function.expressions[h] else {
            return None;
        };
        let Expression::GlobalVariable(g) = function.expressions[pointer] else {
            return None;
        };
        let name = module.global_variables[g].name.as_deref()?;
        values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    }
}

/// The IR `build` makes of one `float` argument, to evaluate for any input
/// (the rounding tests of `half_as_f32` and `bfloat`).
pub(in crate::lower) struct UnaryIr {
    fx: crate::lower::ctx::function::FnCtx,
    input: Handle<Expression>,
    output: Handle<Expression>,
}

impl UnaryIr {
    /// Builds `build(fx, x)` for an argument `x`.
    pub(in crate::lower) fn new(
        build: impl FnOnce(
            &mut crate::lower::ctx::function::FnCtx,
            Handle<Expression>,
        ) -> Handle<Expression>,
    ) -> Self {
        let span = crate::source_map::Span::default();
        let mut fx = crate::lower::ctx::function::FnCtx::new("unary", crate::types::Type::FLOAT);
        let input = fx.add(Expression::FunctionArgument(0), span);
        let output = build(&mut fx, input);
        UnaryIr { fx, input, output }
    }

    /// What the IR computes for `x`.
    pub(in crate::lower) fn of(&self, x: f32) -> f32 {
        let leaf = |h| (h == self.input).then_some(V::F(x));
        Eval {
            function: &self.fx.function,
            leaf: &leaf,
        }
        .eval(self.output)
        .f()
    }
}
