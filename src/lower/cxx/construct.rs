//! Constructors of built-in types: `T(args)` for scalars (a conversion),
//! vectors and matrices, built as naga `Compose` expressions.

use crate::diagnostics::Code;
use crate::lower::ctx::function::FnCtx;
use crate::lower::ctx::value::Value;
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval::ConstValue;
use crate::source_map::Span;
use crate::syntax::ast::{Expr, ExprKind};
use crate::types::{Scalar, Type};
use naga::{Expression, Handle};

impl Lowerer<'_, '_> {
    /// `T(args)`: conversions and constructors of scalars, vectors, matrices.
    pub(in crate::lower) fn construct(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        args: &[Expr],
        span: Span,
    ) -> Result<Value> {
        if let Type::SimdgroupMatrix(s) = *ty {
            return self.simdgroup_matrix_construct(fx, s, args, span);
        }
        // `T({a, b})`: the list copy-initializes the parameter of `T`'s
        // implicit copy constructor, so it is `T{a, b}`.
        if let [Expr {
            kind: ExprKind::InitList(items),
            ..
        }] = args
        {
            return self.braced_value(fx, items, ty, span);
        }
        // `float3x2(m)` of a struct object: its conversion function to the
        // type, for the address space it is in (`operator float3x2() const
        // threadgroup`, SPIRV-Cross's `spvStorageMatrix`).
        if let [a] = args {
            if !matches!(ty, Type::Struct(_)) {
                let v = self.expr(fx, a)?;
                if let Some((h, _)) = self.conversion_function(fx, &v, ty, true, span)? {
                    return Ok(Value::Rv(h, ty.clone()));
                }
                let (h, t) = self.load(fx, v, a.span)?;
                return self.construct_values(fx, ty, vec![(h, t)], span);
            }
        }
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.rvalue(fx, a)?);
        }
        self.construct_values(fx, ty, vals, span)
    }

    /// `T(args)` of the loaded argument values `vals`.
    fn construct_values(
        &mut self,
        fx: &mut FnCtx,
        ty: &Type,
        vals: Vec<(Handle<Expression>, Type)>,
        span: Span,
    ) -> Result<Value> {
        let ty_h = self.naga_type(ty, span)?;
        if vals.is_empty() {
            // `S()`: value-initialized, with its default member initializers.
            if self.program.has_member_defaults(ty) {
                let v = ConstValue::default_of(ty, self.program);
                return Ok(self.const_value(fx, &v, span));
            }
            return Ok(Value::Rv(
                fx.add(Expression::ZeroValue(ty_h), span),
                ty.clone(),
            ));
        }
        match ty {
            Type::Scalar(_) => {
                let [(h, t)] = vals.as_slice() else {
                    return Err(Error::coded(
                        Code::InvalidInitializer,
                        span,
                        "a scalar conversion takes one argument",
                    ));
                };
                if !matches!(t, Type::Scalar(_) | Type::Struct(_)) {
                    return Err(Error::coded(
                        Code::TypeMismatch,
                        span,
                        format!(
                            "cannot convert `{}` to `{}`",
                            self.program.display(t),
                            self.program.display(ty)
                        ),
                    ));
                }
                Ok(Value::Rv(
                    self.convert(fx, *h, t, ty, true, span)?,
                    ty.clone(),
                ))
            }
            // `packed_float3(v)`: packed vectors are storage formats; as
            // values they are the aligned vectors (MSL §2.2.3).
            Type::Vector(s, n) | Type::Packed(s, n) => {
                self.construct_vector(fx, *s, *n, vals, span)
            }
            Type::Matrix {
                scalar,
                columns,
                rows,
            } => self.construct_matrix(fx, *scalar, *columns, *rows, vals, span),
            // `S(s)`: the implicit copy constructor.
            Type::Struct(_) | Type::Array(..) if matches!(vals.as_slice(), [(_, t)] if t == ty) => {
                Ok(Value::Rv(vals[0].0, ty.clone()))
            }
            // `vec<float, 8>(0)`: a long vector (held as an array, sema's
            // `template_vec`) splatted from one scalar, as clang's
            // `ext_vector_type` constructs it.
            Type::Array(elem, n)
                if matches!(**elem, Type::Scalar(_))
                    && matches!(vals.as_slice(), [(_, Type::Scalar(_))]) =>
            {
                let (h, t) = (vals[0].0, vals[0].1.clone());
                let one = self.convert(fx, h, &t, elem, true, span)?;
                let ty_h = self.naga_type(ty, span)?;
                let splat = fx.add(
                    naga::Expression::Compose {
                        ty: ty_h,
                        components: vec![one; *n as usize],
                    },
                    span,
                );
                Ok(Value::Rv(splat, ty.clone()))
            }
            // `gradientcube(dx, dy)`: the library's constructor from the
            // two derivatives (sema/gradients.rs).
            Type::Struct(id) if self.program.gradient_type(*id).is_some() => {
                self.construct_gradient(fx, *id, vals, span)
            }
            Type::Struct(_) | Type::Array(..) => Err(Error::coded(
                Code::InvalidInitializer,
                span,
                format!(
                    "cannot construct `{}` with parentheses; use braces",
                    self.program.display(ty)
                ),
            )),
            _ => Err(Error::coded(
                Code::InvalidInitializer,
                span,
                "cannot construct this type",
            )),
        }
    }

    /// `gradient2d(dPdx, dPdy)` (and `gradient3d`, `gradientcube`): each
    /// argument converts to its member's vector type as a parameter of
    /// that type takes it (a scalar is replicated, MSL §2.13).
    fn construct_gradient(
        &mut self,
        fx: &mut FnCtx,
        id: crate::types::StructId,
        vals: Vec<(Handle<Expression>, Type)>,
        span: Span,
    ) -> Result<Value> {
        let ty = Type::Struct(id);
        if vals.len() != 2 {
            return Err(Error::coded(
                Code::NoMatchingOverload,
                span,
                format!(
                    "`{}` takes two derivatives (`dPdx`, `dPdy`), {} given",
                    self.program.display(&ty),
                    vals.len()
                ),
            ));
        }
        let member_ty = self.program.structs.get(id).members[0].ty.clone();
        let mut components = Vec::new();
        for (h, t) in vals {
            components.push(self.convert(fx, h, &t, &member_ty, false, span)?);
        }
        let ty_h = self.naga_type(&ty, span)?;
        Ok(Value::Rv(
            fx.add(
                Expression::Compose {
                    ty: ty_h,
                    components,
                },
                span,
            ),
            ty,
        ))
    }

    fn construct_vector(
        &mut self,
        fx: &mut FnCtx,
        s: Scalar,
        n: u8,
        vals: Vec<(Handle<Expression>, Type)>,
        span: Span,
    ) -> Result<Value> {
        let ty = Type::Vector(s, n);
        if let [(h, t)] = vals.as_slice() {
            // A struct through its conversion function (`float2(c)`).
            if matches!(t, Type::Scalar(_) | Type::Struct(_)) || t.vector_size() == Some(n) {
                return Ok(Value::Rv(self.convert(fx, *h, t, &ty, true, span)?, ty));
            }
            // `float3(float4)`: Metal's compiler takes the leading
            // components (Apple's samples write `float3(color)`).
            if let Type::Vector(from, m) = *t {
                if m > n {
                    let pattern = [
                        naga::SwizzleComponent::X,
                        naga::SwizzleComponent::Y,
                        naga::SwizzleComponent::Z,
                        naga::SwizzleComponent::W,
                    ];
                    let size = crate::lower::types::vector_size(n);
                    let h = fx.add(
                        Expression::Swizzle {
                            size,
                            vector: *h,
                            pattern,
                        },
                        span,
                    );
                    let lead = Type::Vector(from, n);
                    return Ok(Value::Rv(self.convert(fx, h, &lead, &ty, true, span)?, ty));
                }
            }
        }
        let mut components = Vec::new();
        let mut count = 0;
        for (h, t) in vals {
            let k = match t {
                Type::Scalar(_) | Type::Vector(..) => t.vector_size().unwrap(),
                _ => {
                    return Err(Error::coded(
                        Code::InvalidInitializer,
                        span,
                        format!(
                            "cannot use `{}` in a vector constructor",
                            self.program.display(&t)
                        ),
                    ))
                }
            };
            let h = self.convert(fx, h, &t, &t.with_scalar(s), true, span)?;
            // `float3(float2(a, b), c)` becomes `vec3(a, b, c)`: naga 30's
            // constant evaluator panics on constant vectors composed of
            // vectors (`select` of one, found by differential testing:
            // nested constructors, splats and swizzles), so constant parts
            // are flattened to scalars; the flat form is what WGSL writers
            // print anyway.
            match fx.expr(h) {
                Expression::Compose {
                    components: inner, ..
                } if k > 1 => components.extend(inner.clone()),
                &Expression::Splat { value, .. } if k > 1 => {
                    components.extend(std::iter::repeat_n(value, k as usize))
                }
                _ if k > 1 && crate::lower::expr::const_exprs::is_constant_tree(fx, h) => {
                    for index in 0..k as u32 {
                        components.push(fx.add(Expression::AccessIndex { base: h, index }, span));
                    }
                }
                _ => components.push(h),
            }
            count += k;
        }
        if count != n {
            return Err(Error::coded(
                Code::InvalidInitializer,
                span,
                format!(
                    "`{}` constructor needs {n} components, found {count}",
                    self.program.display(&ty)
                ),
            ));
        }
        let ty_h = self.naga_type(&ty, span)?;
        Ok(Value::Rv(
            fx.add(
                Expression::Compose {
                    ty: ty_h,
                    components,
                },
                span,
            ),
            ty,
        ))
    }

    fn construct_matrix(
        &mut self,
        fx: &mut FnCtx,
        s: Scalar,
        columns: u8,
        rows: u8,
        vals: Vec<(Handle<Expression>, Type)>,
        span: Span,
    ) -> Result<Value> {
        let ty = Type::Matrix {
            scalar: s,
            columns,
            rows,
        };
        let ty_h = self.naga_type(&ty, span)?;
        let col_h = self.naga_type(&Type::Vector(s, rows), span)?;
        // floatNxM(matrix): conversion.
        if let [(h, t @ Type::Matrix { .. })] = vals.as_slice() {
            return Ok(Value::Rv(self.convert(fx, *h, t, &ty, true, span)?, ty));
        }
        // floatNxM(s): s on the diagonal (MSL §2.3.2).
        if let [(h, t @ Type::Scalar(_))] = vals.as_slice() {
            let d = self.convert(fx, *h, t, &Type::Scalar(s), true, span)?;
            let zero_h = self.naga_type(&Type::Scalar(s), span)?;
            let zero = fx.add(Expression::ZeroValue(zero_h), span);
            let cols = diagonal_columns(fx, col_h, columns, rows, d, zero, span);
            return Ok(Value::Rv(compose(fx, ty_h, cols, span), ty));
        }
        let (cols, left_over) = self.matrix_columns(fx, s, rows, col_h, vals, span)?;
        if cols.len() != columns as usize || left_over != 0 {
            return Err(Error::coded(
                Code::InvalidInitializer,
                span,
                format!(
                    "`{}` constructor needs {columns} columns or {} scalars",
                    self.program.display(&ty),
                    columns * rows
                ),
            ));
        }
        Ok(Value::Rv(compose(fx, ty_h, cols, span), ty))
    }

    /// The columns of a matrix with `rows` rows constructed from `vals`:
    /// each vector of `rows` lanes is a column, each `rows` scalars in a row
    /// make one. Also the number of scalars left over, which make no full
    /// column.
    fn matrix_columns(
        &mut self,
        fx: &mut FnCtx,
        s: Scalar,
        rows: u8,
        col_h: Handle<naga::Type>,
        vals: Vec<(Handle<Expression>, Type)>,
        span: Span,
    ) -> Result<(Vec<Handle<Expression>>, usize)> {
        let col_ty = Type::Vector(s, rows);
        let mut lanes = Vec::new();
        let mut cols = Vec::new();
        for (h, t) in vals {
            match t {
                Type::Vector(_, n) if n == rows && lanes.is_empty() => {
                    cols.push(self.convert(fx, h, &t, &col_ty, true, span)?)
                }
                Type::Scalar(_) => {
                    lanes.push(self.convert(fx, h, &t, &Type::Scalar(s), true, span)?)
                }
                _ => {
                    return Err(Error::coded(
                        Code::InvalidInitializer,
                        span,
                        format!(
                            "invalid argument of type `{}` to a matrix constructor",
                            self.program.display(&t)
                        ),
                    ))
                }
            }
            if lanes.len() == rows as usize {
                cols.push(compose(fx, col_h, std::mem::take(&mut lanes), span));
            }
        }
        Ok((cols, lanes.len()))
    }
}

/// `Compose` of `components` into a value of naga type `ty`.
fn compose(
    fx: &mut FnCtx,
    ty: Handle<naga::Type>,
    components: Vec<Handle<Expression>>,
    span: Span,
) -> Handle<Expression> {
    fx.add(Expression::Compose { ty, components }, span)
}

/// The `columns` columns (of naga type `col_h`, `rows` lanes each) of a
/// matrix with `d` on its diagonal and `zero` elsewhere.
fn diagonal_columns(
    fx: &mut FnCtx,
    col_h: Handle<naga::Type>,
    columns: u8,
    rows: u8,
    d: Handle<Expression>,
    zero: Handle<Expression>,
    span: Span,
) -> Vec<Handle<Expression>> {
    (0..columns)
        .map(|c| {
            let lanes = (0..rows).map(|r| if r == c { d } else { zero }).collect();
            compose(fx, col_h, lanes, span)
        })
        .collect()
}
