//! Classes declared in a function body (C++ [class.local]): `struct S {..};`,
//! `struct {..} v;`, `typedef struct [Tag] {..} T;`, `using T = struct {..};`.
//! They are kept as statements ([`LocalType`]); lowering declares each one
//! at program scope under a name of its function's (`lower::stmt::local_types`).

use super::*;

/// A `local_type` pair: the struct, its other name and its objects.
pub(super) fn local_type(pair: Pair<Rule>) -> Result<LocalType> {
    let pair = pair.into_inner().next().unwrap();
    match pair.as_rule() {
        Rule::typedef_struct => typedef_struct(pair),
        _ => local_struct(pair),
    }
}

/// `typedef struct [Tag] {..} T;` or `using T = struct {..};`, built as at
/// program scope: the struct named `T`, then perhaps the alias `Tag`.
fn typedef_struct(pair: Pair<Rule>) -> Result<LocalType> {
    let mut items = super::typedef_struct(pair)?.into_iter();
    let Some(Item::Struct(decl)) = items.next() else {
        unreachable!("typedef_struct builds the struct first")
    };
    let tag = items.next().map(|item| match item {
        Item::Alias(a) => a.name,
        _ => unreachable!("then the alias of its tag"),
    });
    Ok(LocalType {
        decl,
        tag,
        members: Vec::new(),
        objects: None,
    })
}

/// `[const] struct [S] {..} [a, b = {..}];`.
fn local_struct(pair: Pair<Rule>) -> Result<LocalType> {
    let span = span_of(&pair);
    let qualifiers: Vec<Pair<Rule>> = pair
        .clone()
        .into_inner()
        .take_while(|p| matches!(p.as_rule(), Rule::cv | Rule::address_space))
        .collect();
    let ((decl, members, _), _, declarators) = members::struct_named(pair, None)?;
    if let Some(unsupported) = members.iter().find(|m| !is_type_member(m)) {
        return Err(Error::coded(
            Code::InvalidType,
            member_span(unsupported),
            format!(
                "a struct declared in a function (`{}`) cannot have static data members",
                shown_name(&decl.name.name)
            ),
        ));
    }
    // `const struct S {..};` qualifies no object (clang ignores it, with a warning).
    let objects = (!declarators.is_empty()).then(|| {
        let mut ty = TypeSpec {
            is_const: false,
            is_constexpr: false,
            space: None,
            path: vec![decl.name.name.clone()],
            args: Vec::new(),
            ptr_ops: Vec::new(),
            name_span: decl.name.span,
            span: decl.name.span,
        };
        for q in &qualifiers {
            match q.as_rule() {
                Rule::address_space => ty.space = Some((address_space(q), span_of(q))),
                _ => {
                    ty.is_const |= matches!(q.as_str(), "const" | "constexpr");
                    ty.is_constexpr |= q.as_str() == "constexpr";
                }
            }
        }
        VarDecl {
            ty,
            declarators,
            span,
        }
    });
    Ok(LocalType {
        decl,
        tag: None,
        members,
        objects,
    })
}

/// Whether a member declaration of a local struct is one lowering declares
/// with the struct: a nested struct, a member alias, a member function (or
/// function template), a `static_assert`. A local class has no static data
/// members (C++ [class.local]/4).
fn is_type_member(item: &Item) -> bool {
    match item {
        Item::Template(t) => matches!(t.item, Templated::Function(_)),
        _ => matches!(
            item,
            Item::Struct(_) | Item::Alias(_) | Item::Function(_) | Item::StaticAssert(_)
        ),
    }
}

fn member_span(item: &Item) -> Span {
    match item {
        Item::Function(f) => f.name.span,
        Item::Global(g) => g.span,
        Item::Template(t) => t.span,
        Item::Alias(a) => a.span,
        Item::Struct(s) => s.span,
        Item::StaticAssert(a) => a.span,
        Item::Enum(e) => e.span,
        Item::Instantiation(i) => i.span,
        Item::UsingNamespace(s) => *s,
    }
}

/// A local struct's name as a message shows it.
fn shown_name(name: &str) -> &str {
    match name {
        UNNAMED_LOCAL_TYPE => "unnamed struct",
        n => n,
    }
}
