//! Constant evaluation: program-scope initializers, array sizes, case labels
//! and attribute arguments.

use super::{conversions, Error, Program, Result, Symbol};
use crate::syntax::ast::{self, BinaryOp, ExprKind, Init, LiteralSuffix, UnaryOp};
use crate::types::{self, Scalar, Type};

/// A value known at translation time.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstValue {
    /// `bool`
    Bool(bool),
    /// An integer of the given type (value kept sign-extended / zero-extended).
    Int(i64, Scalar),
    /// A `half` or `float` value.
    Float(f64, Scalar),
    /// A vector, matrix (columns), array or struct (members in order).
    Composite(Type, Vec<ConstValue>),
}

impl ConstValue {
    /// The value's MSL type.
    pub fn ty(&self) -> Type {
        match self {
            ConstValue::Bool(_) => Type::BOOL,
            ConstValue::Int(_, s) | ConstValue::Float(_, s) => Type::Scalar(*s),
            ConstValue::Composite(t, _) => t.clone(),
        }
    }

    /// A positive count (array size).
    pub fn as_count(&self) -> Option<u32> {
        match *self {
            ConstValue::Int(v, _) if v > 0 && v <= u32::MAX as i64 => Some(v as u32),
            _ => None,
        }
    }

    /// An integer value, for case labels and indices.
    pub fn as_int(&self) -> Option<i64> {
        match *self {
            ConstValue::Int(v, _) => Some(v),
            ConstValue::Bool(b) => Some(b as i64),
            _ => None,
        }
    }

    /// The value as a number (`bool` as 0 or 1).
    pub(crate) fn as_f64(&self) -> Option<f64> {
        match *self {
            ConstValue::Int(v, _) => Some(v as f64),
            ConstValue::Float(v, _) => Some(v),
            ConstValue::Bool(b) => Some(b as i64 as f64),
            _ => None,
        }
    }

    /// The zero value of `ty`.
    pub fn zero(ty: &Type, program: &Program) -> ConstValue {
        match ty {
            Type::Scalar(s) => scalar_from_f64(0.0, *s),
            Type::Vector(s, n) => {
                ConstValue::Composite(ty.clone(), vec![scalar_from_f64(0.0, *s); *n as usize])
            }
            Type::Matrix {
                scalar,
                columns,
                rows,
            } => ConstValue::Composite(
                ty.clone(),
                vec![ConstValue::zero(&Type::Vector(*scalar, *rows), program); *columns as usize],
            ),
            Type::Array(e, n) => {
                ConstValue::Composite(ty.clone(), vec![ConstValue::zero(e, program); *n as usize])
            }
            Type::Struct(id) => ConstValue::Composite(
                ty.clone(),
                program
                    .structs
                    .get(*id)
                    .members
                    .iter()
                    .map(|m| ConstValue::zero(&m.ty, program))
                    .collect(),
            ),
            Type::Packed(s, n) => ConstValue::Composite(
                Type::Vector(*s, *n),
                vec![scalar_from_f64(0.0, *s); *n as usize],
            ),
            Type::Void
            | Type::Pointer(_)
            | Type::Atomic(_)
            | Type::Texture(_)
            | Type::Sampler { .. } => ConstValue::Int(0, Scalar::Int),
        }
    }
}

fn scalar_from_f64(v: f64, s: Scalar) -> ConstValue {
    match s {
        Scalar::Bool => ConstValue::Bool(v != 0.0),
        Scalar::Half | Scalar::Float => ConstValue::Float(v, s),
        _ => ConstValue::Int(wrap(v as i64, s), s),
    }
}

/// Wraps an integer to the range of `s`, as C++ conversions do.
fn wrap(v: i64, s: Scalar) -> i64 {
    match s {
        Scalar::Char => v as i8 as i64,
        Scalar::UChar => v as u8 as i64,
        Scalar::Short => v as i16 as i64,
        Scalar::UShort => v as u16 as i64,
        Scalar::Int => v as i32 as i64,
        Scalar::UInt => v as u32 as i64,
        _ => v,
    }
}

/// Converts a constant to a scalar type (C++ conversion rules).
fn convert_scalar(v: &ConstValue, to: Scalar) -> Option<ConstValue> {
    Some(match (v, to) {
        (ConstValue::Int(i, _), s) if s.is_integer() => ConstValue::Int(wrap(*i, s), s),
        (ConstValue::Float(f, _), s) if s.is_integer() => {
            ConstValue::Int(wrap(f.trunc() as i64, s), s)
        }
        (_, Scalar::Bool) => ConstValue::Bool(v.as_f64()? != 0.0),
        (_, s) if s.is_float() => ConstValue::Float(round_to(v.as_f64()?, s), s),
        (_, s) => ConstValue::Int(wrap(v.as_f64()? as i64, s), s),
    })
}

fn round_to(v: f64, s: Scalar) -> f64 {
    match s {
        Scalar::Float => v as f32 as f64,
        _ => v,
    }
}

/// Converts a scalar constant to another scalar type (C++ value conversion).
pub fn convert_to(v: &ConstValue, to: Scalar) -> Option<ConstValue> {
    convert_scalar(v, to)
}

/// Converts `v` to `ty` with the implicit-conversion rules (splatting scalars).
pub fn convert(
    v: &ConstValue,
    ty: &Type,
    span: crate::source_map::Span,
    program: &Program,
) -> Result<ConstValue> {
    let from = v.ty();
    if &from == ty {
        return Ok(v.clone());
    }
    conversions::check_implicit(&from, ty, program)
        .map_err(|m| Error::new(span, m).with_code(crate::diagnostics::Code::TypeMismatch))?;
    match ty {
        Type::Scalar(s) => {
            convert_scalar(v, *s).ok_or_else(|| Error::new(span, "not a constant scalar"))
        }
        Type::Vector(s, n) => {
            let lane =
                convert_scalar(v, *s).ok_or_else(|| Error::new(span, "not a constant scalar"))?;
            Ok(ConstValue::Composite(ty.clone(), vec![lane; *n as usize]))
        }
        _ => Err(Error::new(
            span,
            format!("cannot convert to `{}`", program.display(ty)),
        )),
    }
}

/// Evaluates an initializer for a constant of type `ty`.
pub fn eval_init(program: &Program, init: &Init, ty: &Type) -> Result<ConstValue> {
    match init {
        Init::Expr(e) => {
            if let (ExprKind::InitList(items), _) = (&e.kind, ty) {
                return eval_list(program, items, ty, e.span);
            }
            let v = eval(program, e)?;
            convert(&v, ty, e.span, program)
        }
        Init::List(items, span) => eval_list(program, items, ty, *span),
        Init::Paren(args, span) => {
            let [e] = args.as_slice() else {
                return Err(Error::new(*span, "expected one initializer value"));
            };
            let v = eval(program, e)?;
            convert(&v, ty, e.span, program)
        }
    }
}

fn eval_list(
    program: &Program,
    items: &[Init],
    ty: &Type,
    span: crate::source_map::Span,
) -> Result<ConstValue> {
    let element_types: Vec<Type> = match ty {
        Type::Array(e, n) => vec![(**e).clone(); *n as usize],
        Type::Struct(id) => program
            .structs
            .get(*id)
            .members
            .iter()
            .map(|m| m.ty.clone())
            .collect(),
        Type::Vector(s, n) => vec![Type::Scalar(*s); *n as usize],
        Type::Matrix {
            scalar,
            columns,
            rows,
        } => vec![Type::Vector(*scalar, *rows); *columns as usize],
        Type::Scalar(_) if items.len() <= 1 => {
            return match items.first() {
                Some(i) => eval_init(program, i, ty),
                None => Ok(ConstValue::zero(ty, program)),
            };
        }
        _ => {
            return Err(Error::new(
                span,
                format!("cannot initialize `{}` with a list", program.display(ty)),
            ))
        }
    };
    if items.len() > element_types.len() {
        return Err(Error::new(
            items[element_types.len()].span(),
            format!(
                "excess elements in initializer of `{}`",
                program.display(ty)
            ),
        ));
    }
    let mut values = Vec::with_capacity(element_types.len());
    for (i, et) in element_types.iter().enumerate() {
        values.push(match items.get(i) {
            Some(item) => eval_init(program, item, et)?,
            None => ConstValue::zero(et, program),
        });
    }
    Ok(ConstValue::Composite(ty.clone(), values))
}

/// Evaluates a constant expression.
pub fn eval(program: &Program, e: &ast::Expr) -> Result<ConstValue> {
    let not_const = || Error::new(e.span, "expression is not a compile-time constant");
    match &e.kind {
        ExprKind::Int {
            value,
            suffix,
            non_decimal,
        } => int_literal(*value, *suffix, *non_decimal, e.span),
        ExprKind::Float { value, suffix } => Ok(match suffix {
            LiteralSuffix::Half => ConstValue::Float(*value, Scalar::Half),
            _ => ConstValue::Float(*value as f32 as f64, Scalar::Float),
        }),
        ExprKind::Bool(b) => Ok(ConstValue::Bool(*b)),
        ExprKind::SizeOf { align, operand } => {
            super::sizeof::eval(program, *align, operand, e.span, &|_| None)
        }
        ExprKind::Name(path) => {
            let name = path.last().map(String::as_str).unwrap_or("");
            // `S::N` (a static member constant) is declared by its full path.
            let joined = path.join("::");
            let symbol = match program.symbols.get(&joined) {
                Some(s) if path.len() > 1 => Some(s),
                _ => program.symbols.get(name),
            };
            match symbol {
                Some(Symbol::Constant(i)) => Ok(program.constants[*i].value.clone()),
                Some(Symbol::FunctionConstant(_) | Symbol::SpecConstant(_)) => Err(Error::new(
                    e.span,
                    format!("`{name}` is set when the pipeline is created (a function constant), so it is not a compile-time constant here"),
                )
                .note("array sizes, `case` labels and attribute arguments need values known at translation; naga's WGSL writer cannot print override-sized arrays")),
                _ => Err(not_const()),
            }
        }
        ExprKind::Unary(op, inner) => unary(*op, &eval(program, inner)?).ok_or_else(not_const),
        ExprKind::Binary(op, a, b) => binary(*op, &eval(program, a)?, &eval(program, b)?, e.span),
        ExprKind::Ternary(c, a, b) => {
            let c = eval(program, c)?.as_f64().ok_or_else(not_const)?;
            eval(program, if c != 0.0 { a } else { b })
        }
        ExprKind::Cast(_, ts, inner) => {
            let ty = program.resolve_type(ts)?;
            let v = eval(program, inner)?;
            match ty {
                Type::Scalar(s) => convert_scalar(&v, s).ok_or_else(not_const),
                _ => Err(not_const()),
            }
        }
        ExprKind::Templated(path, args) => match program.templated_expr(path, args, e.span)? {
            Some(x) => eval(program, &x),
            None => Err(not_const()),
        },
        ExprKind::Call(callee, args)
            if args.is_empty() && program.numeric_limit_call(callee)?.is_some() =>
        {
            let x = program.numeric_limit_call(callee)?.expect("checked");
            eval(program, &x)
        }
        ExprKind::Call(callee, args) => match super::constexpr_fn::call(program, callee, args) {
            Some(result) => result,
            None => construct(program, callee, args).ok_or_else(not_const),
        },
        ExprKind::Index(base, index) => {
            let base = eval(program, base)?;
            let i = eval(program, index)?.as_int().ok_or_else(not_const)?;
            match base {
                ConstValue::Composite(_, items) => items
                    .get(usize::try_from(i).map_err(|_| not_const())?)
                    .cloned()
                    .ok_or_else(|| Error::new(index.span, "index out of bounds")),
                _ => Err(not_const()),
            }
        }
        _ => Err(not_const()),
    }
}

/// C++ typing of integer literals: decimal → int, then long; hex/octal may
/// also be unsigned.
fn int_literal(
    value: u64,
    suffix: LiteralSuffix,
    non_decimal: bool,
    span: crate::source_map::Span,
) -> Result<ConstValue> {
    let fits_int = value <= i32::MAX as u64;
    let fits_uint = value <= u32::MAX as u64;
    let fits_long = value <= i64::MAX as u64;
    // C++ [lex.icon]: the first of int, (unsigned int,) long, (unsigned long) that holds it.
    let s = match suffix {
        LiteralSuffix::None if fits_int => Scalar::Int,
        LiteralSuffix::None if non_decimal && fits_uint => Scalar::UInt,
        LiteralSuffix::Unsigned if fits_uint => Scalar::UInt,
        LiteralSuffix::None | LiteralSuffix::Long if fits_long => Scalar::Long,
        LiteralSuffix::None if non_decimal => Scalar::ULong,
        LiteralSuffix::Unsigned | LiteralSuffix::UnsignedLong => Scalar::ULong,
        _ => {
            return Err(Error::new(
                span,
                "integer literal is too large for any integer type",
            ))
        }
    };
    Ok(ConstValue::Int(value as i64, s))
}

fn construct(program: &Program, callee: &ast::Expr, args: &[ast::Expr]) -> Option<ConstValue> {
    let ExprKind::Name(path) = &callee.kind else {
        return None;
    };
    let ty = types::builtin_type(&path.join("::"))?;
    let values: Vec<ConstValue> = args
        .iter()
        .map(|a| eval(program, a).ok())
        .collect::<Option<_>>()?;
    match ty {
        Type::Scalar(s) if values.len() == 1 => convert_scalar(&values[0], s),
        Type::Vector(s, n) => {
            let mut lanes = Vec::new();
            for v in &values {
                match v {
                    ConstValue::Composite(Type::Vector(..), items) => {
                        lanes.extend(items.iter().cloned())
                    }
                    other => lanes.push(other.clone()),
                }
            }
            let lanes: Vec<ConstValue> = lanes
                .iter()
                .map(|l| convert_scalar(l, s))
                .collect::<Option<_>>()?;
            match lanes.len() {
                1 => Some(ConstValue::Composite(
                    ty,
                    vec![lanes[0].clone(); n as usize],
                )),
                l if l == n as usize => Some(ConstValue::Composite(ty, lanes)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn unary(op: UnaryOp, v: &ConstValue) -> Option<ConstValue> {
    match (op, v) {
        (UnaryOp::Plus, _) => Some(v.clone()),
        (UnaryOp::Neg, ConstValue::Int(i, s)) => {
            Some(ConstValue::Int(wrap(-i, promote(*s)), promote(*s)))
        }
        (UnaryOp::Neg, ConstValue::Float(f, s)) => Some(ConstValue::Float(-f, *s)),
        (UnaryOp::Not, _) => Some(ConstValue::Bool(v.as_f64()? == 0.0)),
        (UnaryOp::BitNot, ConstValue::Int(i, s)) => {
            Some(ConstValue::Int(wrap(!i, promote(*s)), promote(*s)))
        }
        _ => None,
    }
}

fn promote(s: Scalar) -> Scalar {
    conversions::promote(s)
}

fn binary(
    op: BinaryOp,
    a: &ConstValue,
    b: &ConstValue,
    span: crate::source_map::Span,
) -> Result<ConstValue> {
    let not_const = || Error::new(span, "expression is not a compile-time constant");
    let (Type::Scalar(sa), Type::Scalar(sb)) = (a.ty(), b.ty()) else {
        return Err(not_const());
    };
    use BinaryOp::*;
    if matches!(op, LogicalAnd | LogicalOr) {
        let (x, y) = (
            a.as_f64().ok_or_else(not_const)? != 0.0,
            b.as_f64().ok_or_else(not_const)? != 0.0,
        );
        return Ok(ConstValue::Bool(if op == LogicalAnd {
            x && y
        } else {
            x || y
        }));
    }
    let common = if matches!(op, Shl | Shr) {
        promote(sa)
    } else {
        conversions::arithmetic(sa, sb)
    };
    if matches!(op, Eq | Ne | Lt | Gt | Le | Ge) {
        let (x, y) = (
            a.as_f64().ok_or_else(not_const)?,
            b.as_f64().ok_or_else(not_const)?,
        );
        let r = match op {
            Eq => x == y,
            Ne => x != y,
            Lt => x < y,
            Gt => x > y,
            Le => x <= y,
            _ => x >= y,
        };
        return Ok(ConstValue::Bool(r));
    }
    if common.is_float() {
        let (x, y) = (
            a.as_f64().ok_or_else(not_const)?,
            b.as_f64().ok_or_else(not_const)?,
        );
        let r = match op {
            Add => x + y,
            Sub => x - y,
            Mul => x * y,
            Div => x / y,
            _ => {
                return Err(Error::new(
                    span,
                    format!("invalid operands to binary `{}`", op.symbol()),
                ))
            }
        };
        return Ok(ConstValue::Float(round_to(r, common), common));
    }
    let x = convert_scalar(a, common)
        .and_then(|v| v.as_int())
        .ok_or_else(not_const)?;
    let y = convert_scalar(
        b,
        if matches!(op, Shl | Shr) {
            Scalar::UInt
        } else {
            common
        },
    )
    .and_then(|v| v.as_int())
    .ok_or_else(not_const)?;
    if matches!(op, Div | Rem) && y == 0 {
        return Err(Error::new(
            span,
            "division by zero in a constant expression",
        ));
    }
    let unsigned = !common.is_signed_integer();
    let r = match op {
        Add => x.wrapping_add(y),
        Sub => x.wrapping_sub(y),
        Mul => x.wrapping_mul(y),
        Div if unsigned => ((x as u64) / (y as u64)) as i64,
        Div => x.wrapping_div(y),
        Rem if unsigned => ((x as u64) % (y as u64)) as i64,
        Rem => x.wrapping_rem(y),
        BitAnd => x & y,
        BitOr => x | y,
        BitXor => x ^ y,
        Shl => x << (y & 31),
        Shr if unsigned => ((x as u32) >> (y & 31)) as i64,
        Shr => ((x as i32) >> (y & 31)) as i64,
        _ => return Err(not_const()),
    };
    Ok(ConstValue::Int(wrap(r, common), common))
}
