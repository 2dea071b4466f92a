//! Struct scope: the names a struct declares for types (nested structs,
//! member aliases), `alignas` on a struct, and base classes.
//!
//! A nested struct `struct Outer { struct Inner { .. }; };` is declared at
//! program scope as `Outer::Inner` (a struct template's, as a member of each
//! instance: `Outer<float>::Inner`), as member functions are. Inside
//! `Outer`, C++ finds `Inner` and a member alias `V` unqualified
//! ([basic.lookup.unqual]/8: the class's scope is searched before the
//! enclosing namespace); [`qualify`] writes those names out as
//! `Outer::Inner` and `Outer::V` in the struct's members, member functions,
//! aliases, constants and nested structs, so that the rest of the pipeline
//! only sees qualified names (and instantiation renames them with the
//! instance, as it does `Outer::f`).

use super::paths::{self, PathUse};
use super::*;
use crate::diagnostics::Code;
use std::collections::HashMap;

/// Qualifies, in `decl` and the declarations its members became, the
/// unqualified names of its nested structs and member aliases.
pub(super) fn qualify(decl: &mut StructDecl, items: &mut [Item]) {
    let prefix = format!("{}::", decl.name.name);
    let outer: Vec<String> = decl.name.name.split("::").map(str::to_string).collect();
    let mut names: HashMap<String, Vec<String>> = HashMap::new();
    for item in items.iter() {
        let declared = match item {
            Item::Alias(a) => &a.name.name,
            Item::Struct(s) => &s.name.name,
            _ => continue,
        };
        let Some(short) = declared.strip_prefix(&prefix).filter(|s| !s.contains("::")) else {
            continue;
        };
        let mut full = outer.clone();
        full.push(short.to_string());
        names.insert(short.to_string(), full);
    }
    if names.is_empty() {
        return;
    }
    let mut visit = |path: &mut Vec<String>, _: Span, _: PathUse| {
        if let [one] = path.as_slice() {
            if let Some(full) = names.get(one) {
                *path = full.clone();
            }
        }
    };
    paths::struct_decl(decl, &mut visit);
    for item in items {
        paths::item(item, &mut visit);
    }
}

/// A data member of nested struct `decl`'s type, from the declarator of
/// `struct P { .. } p;`.
pub(super) fn member_of_type(decl: &StructDecl, d: Pair<Rule>) -> Result<Member> {
    let mut inner = d.into_inner();
    let name = ident(inner.next().unwrap());
    let (mut array, mut attributes, mut layout) = (Vec::new(), Vec::new(), Vec::new());
    let mut default = None;
    for p in inner {
        match p.as_rule() {
            Rule::array_suffix => array.push(array_suffix(p)?),
            Rule::attributes => attributes.extend(attributes_of(p)?),
            Rule::gnu_attribute => layout.extend(gnu::attribute(p)?),
            Rule::member_default => {
                let init = p.into_inner().next().unwrap();
                default = Some(match init.as_rule() {
                    Rule::init_list => init_list(init)?,
                    _ => Init::Expr(expr(init)?),
                });
            }
            r => unreachable!("member declarator part {r:?}"),
        }
    }
    Ok(Member {
        ty: TypeSpec {
            is_const: false,
            is_constexpr: false,
            space: None,
            path: decl.name.name.split("::").map(str::to_string).collect(),
            args: Vec::new(),
            ptr_ops: Vec::new(),
            name_span: decl.name.span,
            span: decl.name.span,
        },
        name,
        array,
        attributes,
        layout,
        default,
    })
}

/// `alignas(N)` or `alignas(T)` on a struct: the alignment attribute
/// `aligned(N)` or `aligned(alignof(T))` makes (C++11 [dcl.align]/2-3).
/// A name alone is taken as a type, as in `alignas(float4)`.
pub(super) fn alignas(pair: Pair<Rule>) -> Result<LayoutAttribute> {
    let span = span_of(&pair);
    let arg = pair.into_inner().nth(1).expect("alignas takes an argument");
    let alignof = |ty: TypeSpec| Expr {
        span: ty.span,
        kind: ExprKind::SizeOf {
            align: true,
            operand: SizeOperand::Type(ty),
        },
    };
    let value = match arg.as_rule() {
        Rule::type_spec => alignof(type_spec(arg)?),
        _ => match expr(arg)? {
            Expr {
                kind: ExprKind::Name(path),
                span,
            } => alignof(TypeSpec {
                is_const: false,
                is_constexpr: false,
                space: None,
                path,
                args: Vec::new(),
                ptr_ops: Vec::new(),
                name_span: span,
                span,
            }),
            e => e,
        },
    };
    Ok(LayoutAttribute::Aligned(Some(value), span))
}

/// `struct D : B { .. }`: refused, naming the first base.
pub(super) fn base_classes(d: &Ident, clause: Pair<Rule>) -> Error {
    let first = clause.into_inner().next().expect("a base");
    let base = first
        .into_inner()
        .find(|p| p.as_rule() == Rule::type_spec)
        .expect("a base type");
    Error::coded(
        Code::Unsupported,
        span_of(&base),
        format!(
            "base classes are not supported yet (`{}` derives from `{}`)",
            d.name,
            base.as_str()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        ),
    )
}
