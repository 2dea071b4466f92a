//! Explicit specialisations of members of struct templates (C++
//! [temp.expl.spec]/16): `template <> void RW<float, float2>::load() const
//! { .. }` replaces, in the struct `RW<float, float2, 0, false>` (the
//! template's default arguments completing the list) and only there, the
//! body of the member `load()` that the template defines.
//!
//! Mapping: the member the template defines gets, as its body, `if
//! constexpr (<its arguments are these>) { <the specialisation's body> }
//! else { <its own body> }`, a type parameter compared with `is_same_v`,
//! a value parameter with `==`. Instantiation keeps the branch the
//! arguments select and discards the other uninstantiated, so every
//! instance sees exactly one of the bodies, as C++ gives it. Parameters
//! the specialisation names differently are bound to the member's own at
//! the start of its body.

use super::members::{member_items, member_parts};
use super::*;
use crate::diagnostics::Code;

/// Adds the specialisation `def` (a `template_member_def`) of struct
/// template `owner` (parameters `params`, members in `st`) for the template
/// arguments `args` (a `template_args` pair) to the member it specialises.
pub(super) fn specialize(
    owner: &Ident,
    params: &[TemplateParam],
    args: Pair<Rule>,
    def: Pair<Rule>,
    st: &mut StructTemplate,
) -> Result<()> {
    let args_span = span_of(&args);
    let args = template_args(args)?;
    let cond = arguments_are(owner, params, &args, args_span)?;
    let mut parts = member_parts(def)?;
    parts.is_static = super::out_of_line::declared_statics(&owner.name).contains(&parts.name.name);
    let member = parts.name.clone();
    for item in member_items(owner, parts)? {
        let Item::Function(special) = item else {
            continue;
        };
        let Some(primary) = st.members.iter_mut().find_map(|m| match m {
            Item::Function(f) if same_member(f, &special) => Some(f),
            _ => None,
        }) else {
            return Err(Error::coded(
                Code::OutOfLineDefinition,
                member.span,
                format!(
                    "explicit specialisation of `{}` does not match any member function `{}` of `{}` with {} parameter(s)",
                    member.name,
                    member.name,
                    owner.name,
                    special.params.iter().filter(|p| !is_this(p)).count()
                ),
            ));
        };
        let Some(own_body) = primary.body.take() else {
            return Err(Error::coded(
                Code::OutOfLineDefinition,
                member.span,
                format!(
                    "`{}::{}` must be defined in its struct template before this explicit specialisation",
                    owner.name, member.name
                ),
            ));
        };
        let mut body = special.body.expect("a definition");
        bind_parameters(&primary.params, &special.params, &mut body);
        let span = body.span;
        let branch = Stmt {
            kind: StmtKind::If {
                cond: cond.clone(),
                then: Box::new(Stmt {
                    kind: StmtKind::Block(body),
                    span,
                }),
                otherwise: Some(Box::new(Stmt {
                    span: own_body.span,
                    kind: StmtKind::Block(own_body),
                })),
                is_constexpr: true,
            },
            span,
        };
        primary.body = Some(Block {
            stmts: vec![branch],
            span,
        });
    }
    Ok(())
}

fn is_this(p: &Param) -> bool {
    p.name.as_ref().is_some_and(|n| n.name == "this")
}

/// Whether `f` (a member of the template) is the member `special`
/// specialises: the same name (and object address space, for the
/// twins of members without one), the same number of parameters.
fn same_member(f: &FunctionDecl, special: &FunctionDecl) -> bool {
    let this_space = |f: &FunctionDecl| {
        f.params
            .first()
            .filter(|p| is_this(p))
            .map(|p| (p.ty.space.map(|s| s.0), p.ty.ptr_ops.clone()))
    };
    f.name.name == special.name.name
        && f.params.len() == special.params.len()
        && this_space(f) == this_space(special)
        && f.body.is_some()
}

/// `T name = own;` for each parameter the specialisation names
/// differently from the member's own declaration, at the start of `body`.
fn bind_parameters(own: &[Param], special: &[Param], body: &mut Block) {
    let mut bindings = Vec::new();
    for (o, s) in own.iter().zip(special) {
        let (Some(on), Some(sn)) = (&o.name, &s.name) else {
            continue;
        };
        if on.name == sn.name {
            continue;
        }
        let init = Expr {
            kind: ExprKind::Name(vec![on.name.clone()]),
            span: sn.span,
        };
        bindings.push(Stmt {
            kind: StmtKind::Decl(VarDecl {
                ty: s.ty.clone(),
                declarators: vec![Declarator {
                    name: sn.clone(),
                    array: Vec::new(),
                    init: Some(Init::Expr(init)),
                    attributes: Vec::new(),
                    span: sn.span,
                }],
                span: s.span,
            }),
            span: s.span,
        });
    }
    body.stmts.splice(0..0, bindings);
}

/// The constant condition "the template's arguments are `args`" (the
/// parameters without one compared with their defaults).
fn arguments_are(
    owner: &Ident,
    params: &[TemplateParam],
    args: &[TemplateArg],
    span: Span,
) -> Result<Expr> {
    if args.len() > params.len() {
        return Err(Error::coded(
            Code::Template,
            span,
            format!(
                "`{}` takes {} template argument(s), {} given",
                owner.name,
                params.len(),
                args.len()
            ),
        ));
    }
    let mut cond: Option<Expr> = None;
    for (i, p) in params.iter().enumerate() {
        let given = args.get(i).cloned();
        let test = match (&p.kind, given) {
            (_, _) if p.pack => {
                return Err(Error::coded(
                    Code::Template,
                    span,
                    format!(
                        "explicit specialisation of a member of `{}`, which has a template parameter pack, is not supported",
                        owner.name
                    ),
                ))
            }
            (TemplateParamKind::Type(default), given) => {
                let Some(ty) = given.map(as_type).or(default.clone()) else {
                    return Err(missing(owner, p, span));
                };
                let param = TypeSpec {
                    path: vec![p.name.name.clone()],
                    name_span: ty.span,
                    span: ty.span,
                    ..Default::default()
                };
                Expr {
                    span: ty.span,
                    kind: ExprKind::Templated(
                        vec!["metal".into(), "is_same_v".into()],
                        vec![TemplateArg::Type(param), TemplateArg::Type(ty)],
                    ),
                }
            }
            (TemplateParamKind::Value(_, default), given) => {
                let Some(value) = given.map(as_value).or(default.clone()) else {
                    return Err(missing(owner, p, span));
                };
                let at = value.span;
                Expr {
                    kind: ExprKind::Binary(
                        BinaryOp::Eq,
                        Box::new(Expr {
                            kind: ExprKind::Name(vec![p.name.name.clone()]),
                            span: at,
                        }),
                        Box::new(value),
                    ),
                    span: at,
                }
            }
            (TemplateParamKind::Template(_), _) => {
                return Err(Error::coded(
                    Code::Template,
                    span,
                    format!(
                        "explicit specialisation of a member of `{}`, which has a template template parameter, is not supported",
                        owner.name
                    ),
                ))
            }
        };
        cond = Some(match cond {
            None => test,
            Some(c) => Expr {
                span: c.span,
                kind: ExprKind::Binary(BinaryOp::LogicalAnd, Box::new(c), Box::new(test)),
            },
        });
    }
    Ok(cond.unwrap_or(Expr {
        kind: ExprKind::Bool(true),
        span,
    }))
}

fn missing(owner: &Ident, p: &TemplateParam, span: Span) -> Error {
    Error::coded(
        Code::Template,
        span,
        format!(
            "too few template arguments for `{}`: `{}` has no default",
            owner.name, p.name.name
        ),
    )
}

/// A template argument for a type parameter: a bare name parsed as an
/// expression is a type.
fn as_type(a: TemplateArg) -> TypeSpec {
    match a {
        TemplateArg::Type(t) => t,
        TemplateArg::Expr(e) => {
            let path = match &e.kind {
                ExprKind::Name(p) => p.clone(),
                _ => Vec::new(),
            };
            TypeSpec {
                path,
                name_span: e.span,
                span: e.span,
                ..Default::default()
            }
        }
    }
}

/// A template argument for a value parameter: a bare name parsed as a type
/// is a constant.
fn as_value(a: TemplateArg) -> Expr {
    match a {
        TemplateArg::Expr(e) => e,
        TemplateArg::Type(t) => Expr {
            kind: ExprKind::Name(t.path.clone()),
            span: t.span,
        },
    }
}
