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
/// unqualified names of its nested structs and member aliases, and, outside
/// function bodies (in member aliases, alias templates and member function
/// signatures), of its static constants.
///
/// A static constant is found unqualified in the struct's own scope too
/// (`static constant constexpr short pad = 4; using L = Loader<T, BK + pad>;`,
/// `const device T* src[n_rows];`). Function bodies are left alone: their
/// locals may shadow a member, and the lowering looks members up there.
pub(super) fn qualify(decl: &mut StructDecl, items: &mut [Item]) {
    let prefix = format!("{}::", decl.name.name);
    let outer: Vec<String> = decl.name.name.split("::").map(str::to_string).collect();
    let mut types: HashMap<String, Vec<String>> = HashMap::new();
    let mut values: HashMap<String, Vec<String>> = HashMap::new();
    for item in items.iter() {
        let (declared, table) = match item {
            Item::Alias(a) => (&a.name.name, &mut types),
            Item::Struct(s) => (&s.name.name, &mut types),
            Item::Enum(EnumDecl { name: Some(n), .. }) => (&n.name, &mut types),
            Item::Template(TemplateDecl {
                item: Templated::Alias(a),
                ..
            }) => (&a.name.name, &mut types),
            Item::Global(g) if g.declarators.len() == 1 => {
                (&g.declarators[0].name.name, &mut values)
            }
            _ => continue,
        };
        let Some(short) = declared.strip_prefix(&prefix).filter(|s| !s.contains("::")) else {
            continue;
        };
        let mut full = outer.clone();
        full.push(short.to_string());
        table.insert(short.to_string(), full);
    }
    if types.is_empty() && values.is_empty() {
        return;
    }
    // `A` and `A::m` (no value can be qualified with `::`).
    let mut visit = |path: &mut Vec<String>, _: Span, _: PathUse| {
        if let Some(full) = path.first().and_then(|first| types.get(first)) {
            path.splice(0..1, full.iter().cloned());
        }
    };
    paths::struct_decl(decl, &mut visit);
    for item in items.iter_mut() {
        paths::item(item, &mut visit);
    }
    if values.is_empty() {
        return;
    }
    // A lone name as a template argument (`Loader<T, tgp_size>`) is parsed
    // as a type; a member type and a static constant cannot share a name.
    let mut visit = |path: &mut Vec<String>, _: Span, _: PathUse| {
        if let [one] = path.as_slice() {
            if let Some(full) = values.get(one) {
                *path = full.clone();
            }
        }
    };
    paths::struct_decl(decl, &mut visit);
    for item in items.iter_mut() {
        match item {
            // `static_assert(kRows * kCols == kElems)` in the struct: its
            // static constants, as in a member function's signature.
            Item::Alias(_)
            | Item::Struct(_)
            | Item::Global(_)
            | Item::StaticAssert(_)
            | Item::Template(TemplateDecl {
                item: Templated::Alias(_),
                ..
            }) => paths::item(item, &mut visit),
            // A member function's signature (`static void f(thread vec<U,
            // kElems>& a)`): outside its body no local can shadow a member.
            Item::Function(g)
            | Item::Template(TemplateDecl {
                item: Templated::Function(g),
                ..
            }) => paths::signature(g, &mut visit),
            _ => {}
        }
    }
}

/// Whether member declaration `item` of struct `name` is declared before
/// the struct itself: nested structs, member aliases and static constants,
/// which data members may name (`float src[n_rows];`, `loader_t loader;`).
/// A static constant of the struct's own type needs the struct, so it
/// follows it.
pub fn declared_ahead(item: &Item, name: &str) -> bool {
    match item {
        Item::Struct(_) | Item::Alias(_) | Item::Enum(_) => true,
        Item::Global(g) => {
            let own = name.rsplit("::").next().unwrap_or(name);
            g.ty.path.last().is_none_or(|p| p != own)
        }
        _ => false,
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
        bits: None,
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
            query: TypeQuery::Align,
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

/// `struct D : public B, C<T>`: one data member per base, the `k`th named
/// [`base_member_name`]`(k)`, of the base's type (so that template
/// substitution and name qualification treat it as any member's type).
/// Access specifiers change nothing a translation can observe; `virtual`
/// bases are refused.
pub(super) fn base_classes(clause: Pair<Rule>) -> Result<Vec<Member>> {
    let mut bases = Vec::new();
    for spec in clause.into_inner() {
        let mut ty = None;
        for p in spec.into_inner() {
            match p.as_rule() {
                Rule::virtual_kw => {
                    return Err(Error::coded(
                        Code::Unsupported,
                        span_of(&p),
                        "virtual base classes are not supported (a virtual base is reached through a pointer the object holds, which WGSL values cannot)",
                    ))
                }
                Rule::type_spec => ty = Some(type_spec(p)?),
                _ => {}
            }
        }
        let ty = ty.expect("a base type");
        bases.push(Member {
            name: Ident {
                name: base_member_name(bases.len()),
                span: ty.span,
            },
            ty,
            array: Vec::new(),
            attributes: Vec::new(),
            layout: Vec::new(),
            default: None,
            bits: None,
        });
    }
    Ok(bases)
}

/// What a struct's own declaration says about being POD for the purpose
/// of layout (clang's `isPOD`, C++03 [class]/4); see
/// [`StructDecl::pod_candidate`].
#[derive(Default)]
pub(super) struct PodFacts {
    /// It has a base class.
    pub has_base: bool,
    /// A data member is declared `private` or `protected`.
    pub non_public_data: bool,
    /// It declares a constructor. (A copy assignment operator would make
    /// it non-POD too; the grammar has no `operator=`.)
    pub user_constructor: bool,
}

impl PodFacts {
    /// Notes member `p` (a `member_fn`, `ctor_def` or a member template's
    /// part): a user-declared constructor makes a class non-POD.
    pub fn note_member_function(&mut self, p: &Pair<Rule>) {
        self.user_constructor |= p.as_rule() == Rule::ctor_def;
    }

    /// Whether the struct is a POD candidate, given its data members.
    pub fn holds(&self, members: &[Member]) -> bool {
        !self.has_base
            && !self.non_public_data
            && !self.user_constructor
            && members.iter().all(|m| m.default.is_none())
    }
}
