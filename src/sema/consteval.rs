//! Constant evaluation: program-scope initializers, array sizes, case labels
//! and attribute arguments.

use super::{conversions, Error, Program, Result, Symbol};
use crate::diagnostics::Code;
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

    /// The value a default-initialized `ty` gets: its default member
    /// initializers (`int n = 1;`), zero elsewhere.
    pub fn default_of(ty: &Type, program: &Program) -> ConstValue {
        if !program.has_member_defaults(ty) {
            return ConstValue::zero(ty, program);
        }
        match ty {
            Type::Array(e, n) => ConstValue::Composite(
                ty.clone(),
                vec![ConstValue::default_of(e, program); *n as usize],
            ),
            Type::Struct(id) => ConstValue::Composite(
                ty.clone(),
                (0..program.structs.get(*id).members.len())
                    .map(|i| ConstValue::default_member(*id, i, program))
                    .collect(),
            ),
            _ => ConstValue::zero(ty, program),
        }
    }

    /// The value member `index` of struct `id` gets when an initializer
    /// leaves it out: its default member initializer, else its type's
    /// [`ConstValue::default_of`].
    pub fn default_member(
        id: crate::types::StructId,
        index: usize,
        program: &Program,
    ) -> ConstValue {
        match program.member_default(id, index) {
            Some(v) => v.clone(),
            None => ConstValue::default_of(&program.structs.get(id).members[index].ty, program),
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
            | Type::Sampler { .. }
            | Type::SimdgroupMatrix(_) => ConstValue::Int(0, Scalar::Int),
        }
    }
}

fn scalar_from_f64(v: f64, s: Scalar) -> ConstValue {
    match s {
        Scalar::Bool => ConstValue::Bool(v != 0.0),
        Scalar::Half | Scalar::Float | Scalar::BFloat => ConstValue::Float(v, s),
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
pub(super) fn convert_scalar(v: &ConstValue, to: Scalar) -> Option<ConstValue> {
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

/// The bits of scalar `v` in its Metal size, and that size in bytes.
fn scalar_bits(v: &ConstValue) -> Option<(u64, u32)> {
    Some(match *v {
        ConstValue::Bool(b) => (u64::from(b), 1),
        ConstValue::Int(i, s) => {
            let size = s.size();
            let mask = if size >= 8 {
                u64::MAX
            } else {
                (1u64 << (size * 8)) - 1
            };
            (i as u64 & mask, size)
        }
        ConstValue::Float(f, Scalar::Half) => (u64::from(half::f16::from_f64(f).to_bits()), 2),
        ConstValue::Float(f, Scalar::BFloat) => (u64::from(half::bf16::from_f64(f).to_bits()), 2),
        ConstValue::Float(f, _) => (u64::from((f as f32).to_bits()), 4),
        ConstValue::Composite(..) => return None,
    })
}

/// `as_type<to>(v)` of a scalar (MSL §6.3.2): `v`'s bits read as `to`,
/// which must have the same size.
fn reinterpret_scalar(v: &ConstValue, to: Scalar) -> Option<ConstValue> {
    let (bits, size) = scalar_bits(v)?;
    if size != to.size() {
        return None;
    }
    Some(match to {
        Scalar::Bool => ConstValue::Bool(bits != 0),
        Scalar::Half => ConstValue::Float(half::f16::from_bits(bits as u16).to_f64(), to),
        Scalar::BFloat => ConstValue::Float(half::bf16::from_bits(bits as u16).to_f64(), to),
        s if s.is_float() => ConstValue::Float(f64::from(f32::from_bits(bits as u32)), s),
        s => ConstValue::Int(wrap(bits as i64, s), s),
    })
}

fn round_to(v: f64, s: Scalar) -> f64 {
    match s {
        Scalar::Float => v as f32 as f64,
        // One rounding (of an integer's exact value, or of an `f64` result
        // of `bfloat` operands, whose 53 bits make it the correctly rounded
        // `bfloat` result, as the GPU's `f32` gives: metal/bfloat.rs).
        Scalar::BFloat => crate::types::bfloat_nearest(v).into(),
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
    // Packed vectors are storage formats: as values they are aligned vectors.
    let (from, ty) = (v.ty().unpacked(), &ty.unpacked());
    if &from == ty {
        return Ok(v.clone());
    }
    conversions::check_implicit(&from, ty, program)
        .map_err(|m| Error::coded(Code::TypeMismatch, span, m))?;
    match ty {
        Type::Scalar(s) => convert_scalar(v, *s)
            .ok_or_else(|| Error::coded(Code::NotConstant, span, "not a constant scalar")),
        Type::Vector(s, n) => {
            let lane = convert_scalar(v, *s)
                .ok_or_else(|| Error::coded(Code::NotConstant, span, "not a constant scalar"))?;
            Ok(ConstValue::Composite(ty.clone(), vec![lane; *n as usize]))
        }
        _ => Err(Error::coded(
            Code::TypeMismatch,
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
        // `constant half3 k(0.2f, 0.7f, 0.1f);`: direct-initialization,
        // the constructor `half3(0.2f, 0.7f, 0.1f)`.
        Init::Paren(args, span) if matches!(ty, Type::Vector(..) | Type::Matrix { .. }) => {
            for a in args {
                eval(program, a)?;
            }
            construct_builtin(program, ty.clone(), args).ok_or_else(|| {
                Error::coded(
                    Code::InvalidInitializer,
                    *span,
                    format!(
                        "invalid arguments to a `{}` constructor",
                        program.display(ty)
                    ),
                )
            })
        }
        // `constexpr Shape s(2, true);`: its constructor called.
        Init::Paren(args, span) if matches!(ty, Type::Struct(_)) => {
            let ts = program.type_spec_of(ty, *span)?;
            let call = ast::Expr {
                kind: ExprKind::Call(
                    Box::new(ast::Expr {
                        kind: ExprKind::Name(ts.path),
                        span: *span,
                    }),
                    args.clone(),
                ),
                span: *span,
            };
            eval(program, &call)
        }
        Init::Paren(args, span) => {
            let [e] = args.as_slice() else {
                return Err(Error::coded(
                    Code::InvalidInitializer,
                    *span,
                    "expected one initializer value",
                ));
            };
            let v = eval(program, e)?;
            convert(&v, ty, e.span, program)
        }
        Init::Designated(_, _, span) => Err(designator_outside_list(*span)),
    }
}

/// `T{items}` as a constant, when `T` is built from the list without a
/// constructor; `None` for a struct with constructors.
fn aggregate(
    program: &Program,
    items: &[Init],
    ty: &Type,
    span: crate::source_map::Span,
) -> Option<Result<ConstValue>> {
    if let Type::Struct(id) = ty {
        let name = program.struct_name(*id);
        if program
            .symbols
            .contains_key(&crate::syntax::members::member_name(name, name))
        {
            return None;
        }
    }
    Some(eval_list(program, items, ty, span))
}

fn designator_outside_list(span: crate::source_map::Span) -> Error {
    Error::coded(
        Code::InvalidInitializer,
        span,
        "a designated initializer (`.member = value`) must be an element of a braced list",
    )
}

/// The initializers of the `elements` elements of a braced list for `ty`,
/// in element order: positional ones as written, designated ones (`.m = v`,
/// struct members only) at their member's place; `None` for what the list
/// leaves out. Refuses excess elements, unknown or repeated members, and
/// lists that mix both kinds.
pub fn list_slots<'i>(
    program: &Program,
    items: &'i [Init],
    ty: &Type,
    elements: usize,
) -> Result<Vec<Option<&'i Init>>> {
    let designated = |i: &Init| matches!(i, Init::Designated(..));
    let Some(first) = items.iter().find(|i| designated(i)) else {
        if items.len() > elements {
            return Err(Error::coded(
                Code::InvalidInitializer,
                items[elements].span(),
                format!(
                    "excess elements in initializer of `{}`",
                    program.display(ty)
                ),
            ));
        }
        let mut slots: Vec<Option<&Init>> = items.iter().map(Some).collect();
        slots.resize(elements, None);
        return Ok(slots);
    };
    let Type::Struct(id) = ty else {
        return Err(Error::coded(
            Code::InvalidInitializer,
            first.span(),
            format!(
                "designated initializers name struct members; `{}` is not a struct",
                program.display(ty)
            ),
        ));
    };
    if let Some(positional) = items.iter().find(|i| !designated(i)) {
        return Err(Error::coded(
            Code::Unsupported,
            positional.span(),
            "an initializer list that mixes designated (`.member = value`) and positional elements is not supported",
        ));
    }
    if program.structs.get(*id).is_union {
        return Err(Error::coded(
            Code::Unsupported,
            first.span(),
            format!(
                "a designated initializer of union `{}` is not supported yet",
                program.display(ty)
            ),
        )
        .note("initialize the first member with `{value}`, or assign the member after the declaration"));
    }
    let members = &program.structs.get(*id).members;
    let mut slots = vec![None; elements];
    for item in items {
        let Init::Designated(name, value, _) = item else {
            unreachable!("checked above")
        };
        let Some(at) = members.iter().position(|m| m.name == name.name) else {
            return Err(Error::coded(
                Code::UnknownMember,
                name.span,
                format!(
                    "no member named `{}` in `{}`",
                    name.name,
                    program.display(ty)
                ),
            ));
        };
        if slots[at].replace(&**value).is_some() {
            return Err(Error::coded(
                Code::InvalidInitializer,
                name.span,
                format!("member `{}` is initialized twice", name.name),
            ));
        }
    }
    Ok(slots)
}

/// Builds constants for [`super::aggregate_init::braced`].
struct ConstBuilder<'p, 'a>(&'p Program<'a>);

impl super::aggregate_init::Builder for ConstBuilder<'_, '_> {
    type Value = ConstValue;

    fn program(&self) -> &Program<'_> {
        self.0
    }

    fn expr(&mut self, e: &ast::Expr) -> Result<(ConstValue, Type)> {
        let v = eval(self.0, e)?;
        let t = v.ty();
        Ok((v, t))
    }

    fn whole(&mut self, init: &Init, ty: &Type) -> Result<ConstValue> {
        eval_init(self.0, init, ty)
    }

    fn convert(
        &mut self,
        v: ConstValue,
        _from: &Type,
        to: &Type,
        span: crate::source_map::Span,
    ) -> Result<ConstValue> {
        convert(&v, to, span, self.0)
    }

    fn compose(
        &mut self,
        ty: &Type,
        parts: Vec<ConstValue>,
        _span: crate::source_map::Span,
    ) -> Result<ConstValue> {
        Ok(ConstValue::Composite(ty.clone(), parts))
    }

    fn omitted(
        &mut self,
        ty: &Type,
        index: usize,
        elem: &Type,
        _span: crate::source_map::Span,
    ) -> Result<ConstValue> {
        Ok(match ty {
            Type::Struct(id) => ConstValue::default_member(*id, index, self.0),
            _ => ConstValue::default_of(elem, self.0),
        })
    }
}

fn eval_list(
    program: &Program,
    items: &[Init],
    ty: &Type,
    span: crate::source_map::Span,
) -> Result<ConstValue> {
    // Positional lists, with brace elision; designated ones below.
    let mut builder = ConstBuilder(program);
    if let Some(v) = super::aggregate_init::braced(&mut builder, items, ty, span)? {
        return Ok(v);
    }
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
            return Err(Error::coded(
                Code::InvalidInitializer,
                span,
                format!("cannot initialize `{}` with a list", program.display(ty)),
            ))
        }
    };
    let slots = list_slots(program, items, ty, element_types.len())?;
    let mut values = Vec::with_capacity(element_types.len());
    for (i, et) in element_types.iter().enumerate() {
        values.push(match (slots[i], ty) {
            (Some(item), _) => eval_init(program, item, et)?,
            (None, Type::Struct(id)) => ConstValue::default_member(*id, i, program),
            (None, _) => ConstValue::default_of(et, program),
        });
    }
    Ok(ConstValue::Composite(ty.clone(), values))
}

/// Evaluates a constant expression.
pub fn eval(program: &Program, e: &ast::Expr) -> Result<ConstValue> {
    let not_const = || {
        Error::coded(
            Code::NotConstant,
            e.span,
            "expression is not a compile-time constant",
        )
    };
    match &e.kind {
        ExprKind::Int {
            value,
            suffix,
            non_decimal,
        } => int_literal(*value, *suffix, *non_decimal, e.span),
        ExprKind::Float { value, suffix } => Ok(match suffix {
            LiteralSuffix::Half => ConstValue::Float(*value, Scalar::Half),
            LiteralSuffix::BFloat => {
                ConstValue::Float(crate::types::bfloat_nearest(*value).into(), Scalar::BFloat)
            }
            _ => ConstValue::Float(*value as f32 as f64, Scalar::Float),
        }),
        ExprKind::Bool(b) => Ok(ConstValue::Bool(*b)),
        ExprKind::SizeOf { query, operand } => {
            super::sizeof::eval(program, *query, operand, e.span, &|_| None)
        }
        ExprKind::Name(path)
            if path.len() == 1 && super::constexpr_body::local(&path[0]).is_some() =>
        {
            Ok(super::constexpr_body::local(&path[0]).expect("checked"))
        }
        ExprKind::Member(base, member, false) => {
            let base = eval(program, base)?;
            if let ConstValue::Composite(Type::Vector(s, _), items) = &base {
                return swizzle(items, *s, &member.name).ok_or_else(not_const);
            }
            let index = super::constexpr_body::member_index(program, &base.ty(), &member.name);
            match (base, index) {
                (ConstValue::Composite(_, items), Some(i)) => {
                    items.get(i).cloned().ok_or_else(not_const)
                }
                _ => Err(not_const()),
            }
        }
        ExprKind::Name(path) => {
            let name = path.last().map(String::as_str).unwrap_or("");
            // `S::N` (a static member constant) is declared by its full path.
            let joined = path.join("::");
            // Inside a struct's static member declaration, its members first.
            let member = program
                .member_scope
                .borrow()
                .as_ref()
                .filter(|_| path.len() == 1)
                .and_then(|scope| program.symbols.get(&format!("{scope}::{name}")));
            let symbol = match program.symbols.get(&joined) {
                _ if member.is_some() => member,
                Some(s) if path.len() > 1 => Some(s),
                None if path.len() > 1 => program.qualified_symbol(path),
                _ => program.symbols.get(name),
            };
            match symbol {
                Some(Symbol::Constant(i)) => Ok(program.constants[*i].value.clone()),
                // Specialised at translation where given a value
                // (`function_constant_values`).
                Some(Symbol::FunctionConstant(i)) => program.function_constant_value(*i, e.span),
                Some(Symbol::SpecConstant(j)) => program.spec_constant_value(*j, name, e.span),
                // `M_PI_F`, `HALF_MAX`: the standard library's constants.
                None => crate::lower::stdlib_constant(&joined).ok_or_else(not_const),
                _ => Err(not_const()),
            }
        }
        ExprKind::Unary(op, inner) => unary(*op, &eval(program, inner)?).ok_or_else(not_const),
        ExprKind::Binary(op, a, b) => {
            let left = eval(program, a)?;
            // `!is_complex_v<U> && is_lane_convertible_v<U, T>`: the right
            // operand of `&&`/`||` is not evaluated when the left decides
            // ([expr.log.and]), in a constant expression too.
            let decided = match op {
                ast::BinaryOp::LogicalAnd => Some(false),
                ast::BinaryOp::LogicalOr => Some(true),
                _ => None,
            };
            if let (Some(d), Some(x)) = (decided, left.as_f64()) {
                if (x != 0.0) == d && matches!(left.ty(), Type::Scalar(_)) {
                    return Ok(ConstValue::Bool(d));
                }
            }
            binary_values(program, *op, &left, &eval(program, b)?, e.span)
        }
        ExprKind::Ternary(c, a, b) => {
            let c = eval(program, c)?.as_f64().ok_or_else(not_const)?;
            eval(program, if c != 0.0 { a } else { b })
        }
        // `S{a, b}`, `P<float>{a, b}` (a cast of the list): an aggregate.
        ExprKind::BraceConstruct(path, items) => {
            let ts = super::struct_templates::named_type(&path.join("::"), e.span);
            let ty = program.resolve_type(&ts)?;
            match aggregate(program, items, &ty, e.span) {
                Some(v) => v,
                None => construct_listed(program, &ty, items, e.span).ok_or_else(not_const)?,
            }
        }
        ExprKind::Cast(_, ts, inner) if matches!(inner.kind, ExprKind::InitList(_)) => {
            let ExprKind::InitList(items) = &inner.kind else {
                unreachable!("matched")
            };
            let ty = program.resolve_type(ts)?;
            match aggregate(program, items, &ty, e.span) {
                Some(v) => v,
                None => construct_listed(program, &ty, items, e.span).ok_or_else(not_const)?,
            }
        }
        // `as_type<float>(0x7f800000u)`: the same bits, read as the new type.
        ExprKind::Cast(ast::CastKind::AsType, ts, inner) => {
            let ty = program.resolve_type(ts)?;
            let v = eval(program, inner)?;
            match ty {
                Type::Scalar(s) => reinterpret_scalar(&v, s).ok_or_else(not_const),
                _ => Err(not_const()),
            }
        }
        ExprKind::Cast(_, ts, inner) => {
            let ty = program.resolve_type(ts)?;
            // `static_cast<complex_t<float>>(0)`: the struct's constructor.
            if matches!(ty, Type::Struct(_)) {
                return construct_values(program, &ty, std::slice::from_ref(inner), e.span)
                    .unwrap_or_else(|| Err(not_const()));
            }
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
        // `T({a, b})`: a functional cast of a braced list, like `T{a, b}`.
        ExprKind::Call(callee, args) if matches!(args.as_slice(), [a] if matches!(a.kind, ExprKind::InitList(_))) =>
        {
            let ExprKind::InitList(items) = &args[0].kind else {
                unreachable!("matched")
            };
            let ty = callee_type(program, callee).ok_or_else(not_const)?;
            aggregate(program, items, &ty, e.span).ok_or_else(not_const)?
        }
        ExprKind::Call(callee, args) if matches!(&callee.kind, ExprKind::Name(p) if p.len() == 1 && p[0] == super::function_constants::IS_DEFINED) => {
            program.is_defined_value(args, e.span)
        }
        ExprKind::Call(callee, args)
            if super::constexpr_fn::folding() && is_library_select(program, callee, args) =>
        {
            select(program, args, e.span)
        }
        ExprKind::Call(callee, args) => match super::constexpr_fn::call(program, callee, args) {
            Some(result) => result,
            None => match construct(program, callee, args) {
                Some(v) => Ok(v),
                None => construct_named(program, callee, args, e.span).ok_or_else(not_const)?,
            },
        },
        ExprKind::Index(base, index) => {
            let base = eval(program, base)?;
            let i = eval(program, index)?.as_int().ok_or_else(not_const)?;
            match base {
                ConstValue::Composite(_, items) => items
                    .get(usize::try_from(i).map_err(|_| not_const())?)
                    .cloned()
                    .ok_or_else(|| {
                        Error::coded(Code::IndexOutOfBounds, index.span, "index out of bounds")
                    }),
                _ => Err(not_const()),
            }
        }
        _ => Err(not_const()),
    }
}

/// The components `name` selects of a constant vector of `items` (of
/// scalar type `s`): `v.x`, `v.yx`, `v.rgb`.
fn swizzle(items: &[ConstValue], s: Scalar, name: &str) -> Option<ConstValue> {
    let picked: Option<Vec<ConstValue>> = name
        .chars()
        .map(|c| {
            let i = "xyzw".find(c).or_else(|| "rgba".find(c))?;
            items.get(i).cloned()
        })
        .collect();
    match picked? {
        one if one.len() == 1 => one.into_iter().next(),
        many if (2..=4).contains(&many.len()) => Some(ConstValue::Composite(
            Type::Vector(s, many.len() as u8),
            many,
        )),
        _ => None,
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
            return Err(Error::coded(
                Code::LiteralOutOfRange,
                span,
                "integer literal is too large for any integer type",
            ))
        }
    };
    Ok(ConstValue::Int(value as i64, s))
}

/// Whether `callee(args)` is the standard library's `select(a, b, c)`
/// (no function of the program's is named `select`).
fn is_library_select(program: &Program, callee: &ast::Expr, args: &[ast::Expr]) -> bool {
    let ExprKind::Name(path) = &callee.kind else {
        return false;
    };
    let name = path.join("::");
    args.len() == 3
        && (name == "select" || name == "metal::select")
        && !program.symbols.contains_key("select")
        && program.function_templates("select").is_empty()
}

/// `select(a, b, c)` (MSL §6.5, relational functions): `c ? b : a`, lane by
/// lane for a vector `c`; `a` and `b` have one type.
fn select(
    program: &Program,
    args: &[ast::Expr],
    span: crate::source_map::Span,
) -> Result<ConstValue> {
    let not_const = || {
        Error::coded(
            Code::NotConstant,
            span,
            "expression is not a compile-time constant",
        )
    };
    let (a, b, c) = (
        eval(program, &args[0])?,
        eval(program, &args[1])?,
        eval(program, &args[2])?,
    );
    if a.ty() != b.ty() {
        return Err(not_const());
    }
    match (&a, &b, &c) {
        (
            ConstValue::Composite(ty, xs),
            ConstValue::Composite(_, ys),
            ConstValue::Composite(_, cs),
        ) if xs.len() == cs.len() => {
            let lanes = xs
                .iter()
                .zip(ys)
                .zip(cs)
                .map(|((x, y), c)| {
                    let c = c.as_f64().ok_or_else(not_const)?;
                    Ok(if c != 0.0 { y.clone() } else { x.clone() })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(ConstValue::Composite(ty.clone(), lanes))
        }
        (_, _, c) if matches!(c.ty(), Type::Scalar(_)) => {
            let c = c.as_f64().ok_or_else(not_const)?;
            Ok(if c != 0.0 { b } else { a })
        }
        _ => Err(not_const()),
    }
}

/// The type a callee names (`S`, `P<float, 4>`, `float3`), if it names one.
fn callee_type(program: &Program, callee: &ast::Expr) -> Option<Type> {
    let (path, args) = match &callee.kind {
        ExprKind::Name(path) => (path, Vec::new()),
        ExprKind::Templated(path, args) => (path, args.clone()),
        _ => return None,
    };
    let ts = ast::TypeSpec {
        is_const: false,
        is_constexpr: false,
        space: None,
        path: path.clone(),
        args,
        ptr_ops: Vec::new(),
        name_span: callee.span,
        span: callee.span,
    };
    program.resolve_type(&ts).ok()
}

/// `S{items}` for a struct with constructors: the constructor taking the
/// items' values.
fn construct_listed(
    program: &Program,
    ty: &Type,
    items: &[Init],
    span: crate::source_map::Span,
) -> Option<Result<ConstValue>> {
    let exprs: Vec<ast::Expr> = items
        .iter()
        .map(|i| match i {
            Init::Expr(e) => Some(e.clone()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    construct_values(program, ty, &exprs, span)
}

fn construct_values(
    program: &Program,
    ty: &Type,
    args: &[ast::Expr],
    span: crate::source_map::Span,
) -> Option<Result<ConstValue>> {
    let values = match args
        .iter()
        .map(|a| eval(program, a))
        .collect::<Result<Vec<_>>>()
    {
        Ok(v) => v,
        Err(e) => return Some(Err(e)),
    };
    super::constexpr_body::construct(program, ty, values, span)
}

/// `T(args)` where `T` names a type through an alias or a template
/// (`bfloat16_t(1.0f)`, `S<half>(a, b)`): a scalar conversion, or a
/// struct's constructor.
fn construct_named(
    program: &Program,
    callee: &ast::Expr,
    args: &[ast::Expr],
    span: crate::source_map::Span,
) -> Option<Result<ConstValue>> {
    let ty = callee_type(program, callee)?;
    match (&ty, args) {
        (Type::Scalar(s), [a]) => Some(eval(program, a).and_then(|v| {
            convert_scalar(&v, *s).ok_or_else(|| {
                Error::coded(
                    Code::NotConstant,
                    span,
                    "expression is not a compile-time constant",
                )
            })
        })),
        (Type::Struct(_), _) => construct_values(program, &ty, args, span),
        _ => None,
    }
}

/// `a op b` on constants: a struct operand calls its `operator op`
/// overload (see `constexpr_body`), scalars the built-in operator.
pub fn binary_values(
    program: &Program,
    op: BinaryOp,
    a: &ConstValue,
    b: &ConstValue,
    span: crate::source_map::Span,
) -> Result<ConstValue> {
    if matches!(a.ty(), Type::Struct(_)) || matches!(b.ty(), Type::Struct(_)) {
        if let Some(v) =
            super::constexpr_body::user_operator(program, op, a.clone(), b.clone(), span)
        {
            return v;
        }
    }
    binary(op, a, b, span)
}

fn construct(program: &Program, callee: &ast::Expr, args: &[ast::Expr]) -> Option<ConstValue> {
    let ExprKind::Name(path) = &callee.kind else {
        return None;
    };
    // `float2(0)`, or through an alias (`typedef vec<T, 2> frag_type;`).
    let ty = types::builtin_type(&path.join("::")).or_else(|| {
        callee_type(program, callee)
            .filter(|t| matches!(t, Type::Scalar(_) | Type::Vector(..) | Type::Matrix { .. }))
    })?;
    construct_builtin(program, ty, args)
}

/// `T(args)` for a built-in scalar, vector or matrix type `T`.
fn construct_builtin(program: &Program, ty: Type, args: &[ast::Expr]) -> Option<ConstValue> {
    let values: Vec<ConstValue> = args
        .iter()
        .map(|a| eval(program, a).ok())
        .collect::<Option<_>>()?;
    match ty {
        Type::Scalar(s) if values.len() == 1 => convert_scalar(&values[0], s),
        Type::Vector(s, n) | Type::Packed(s, n) => {
            // A packed vector's value is the aligned vector.
            let ty = Type::Vector(s, n);
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
        Type::Matrix {
            scalar,
            columns,
            rows,
        } => construct_matrix(&values, scalar, columns, rows),
        _ => None,
    }
}

/// `floatCxR(...)` from column vectors, from `C * R` scalars in column-major
/// order, or from one scalar on the diagonal (MSL §2.3.2).
fn construct_matrix(
    values: &[ConstValue],
    scalar: Scalar,
    columns: u8,
    rows: u8,
) -> Option<ConstValue> {
    let column_type = Type::Vector(scalar, rows);
    let zero = ConstValue::Float(0.0, scalar);
    let lanes: Vec<ConstValue> = match values {
        [one] if !matches!(one, ConstValue::Composite(..)) => {
            let d = convert_scalar(one, scalar)?;
            (0..columns as usize * rows as usize)
                .map(|i| match i / rows as usize == i % rows as usize {
                    true => d.clone(),
                    false => zero.clone(),
                })
                .collect()
        }
        _ => {
            let mut lanes = Vec::new();
            for v in values {
                match v {
                    ConstValue::Composite(Type::Vector(_, n), items) if *n == rows => {
                        lanes.extend(items.iter().cloned())
                    }
                    ConstValue::Composite(..) => return None,
                    scalar_value => lanes.push(scalar_value.clone()),
                }
            }
            lanes
                .iter()
                .map(|l| convert_scalar(l, scalar))
                .collect::<Option<_>>()?
        }
    };
    if lanes.len() != columns as usize * rows as usize {
        return None;
    }
    let cols = lanes
        .chunks(rows as usize)
        .map(|c| ConstValue::Composite(column_type.clone(), c.to_vec()))
        .collect();
    Some(ConstValue::Composite(
        Type::Matrix {
            scalar,
            columns,
            rows,
        },
        cols,
    ))
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
    let not_const = || {
        Error::coded(
            Code::NotConstant,
            span,
            "expression is not a compile-time constant",
        )
    };
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
                return Err(Error::coded(
                    Code::InvalidOperands,
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
    integer_binary(op, x, y, common, span)
}

/// `x op y` on integers of type `common` (C++'s wrapping arithmetic; shifts
/// take the low five bits of `y`).
fn integer_binary(
    op: BinaryOp,
    x: i64,
    y: i64,
    common: Scalar,
    span: crate::source_map::Span,
) -> Result<ConstValue> {
    use BinaryOp::*;
    if matches!(op, Div | Rem) && y == 0 {
        return Err(Error::coded(
            Code::ConstantEvaluation,
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
        _ => {
            return Err(Error::coded(
                Code::NotConstant,
                span,
                "expression is not a compile-time constant",
            ))
        }
    };
    Ok(ConstValue::Int(wrap(r, common), common))
}
