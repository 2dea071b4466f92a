//! Namespace-scope redefinitions that hide the earlier definition.
//!
//! C++ allows one definition of a struct, function or variable per
//! translation unit ([basic.def.odr]) and clang refuses a second. Files that
//! are several translation units pasted together (another compiler's output
//! for several entry points, a build that concatenates `.metal` files)
//! repeat every helper they share, sometimes with different contents. Each
//! unit only refers to what it declared itself, so reading a redefinition as
//! a new entity that hides the earlier one for the rest of the file gives
//! every unit the meaning it has alone. This pass renames each such
//! redefinition and the uses that follow it, and warns at the redefinition;
//! a program without redefinitions is unchanged.

use crate::diagnostics::Code;
use crate::sema::subst::{Replacement, Subst};
use crate::sema::Error;
use crate::syntax::ast::{
    Block, Ident, Item, PtrOp, Stmt, StmtKind, TemplateArg, Templated, TranslationUnit, TypeSpec,
};
use std::collections::{HashMap, HashSet};

/// What makes two declarations the same entity: functions are overloaded by
/// their parameter types, everything else has one definition per name.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Entity {
    Function(String, Vec<String>),
    Named(String),
}

impl Entity {
    fn name(&self) -> &str {
        match self {
            Entity::Function(n, _) | Entity::Named(n) => n,
        }
    }
}

/// The definitions seen so far under one name: the current spelling of the
/// name and which entities of it the current definition group holds.
struct Group {
    version: u32,
    defined: HashSet<Entity>,
}

/// Renames every redefinition in `tu` (and the uses after it) so that it
/// hides the earlier one; returns a warning per redefinition.
pub fn hide_redefinitions(tu: &mut TranslationUnit) -> Vec<Error> {
    let mut groups: HashMap<String, Group> = HashMap::new();
    let mut renames: HashMap<String, Replacement> = HashMap::new();
    let mut structs: HashSet<String> = HashSet::new();
    let mut warnings = Vec::new();
    for item in &mut tu.items {
        for (entity, ident) in defined_entities(item, &structs) {
            let group = groups.entry(entity.name().to_string()).or_insert(Group {
                version: 1,
                defined: HashSet::new(),
            });
            if group.defined.insert(entity.clone()) {
                continue;
            }
            group.version += 1;
            group.defined = HashSet::from([entity.clone()]);
            let hidden = format!("{}::unit{}", entity.name(), group.version);
            warnings.push(
                Error::coded(
                    Code::RedefinitionHides,
                    ident.span,
                    format!(
                        "redefinition of `{}`: the new definition hides the earlier one",
                        entity.name()
                    ),
                )
                .note(
                    "C++ allows one definition per translation unit; this file reads as \
                     several pasted together, so the code after here uses this definition",
                ),
            );
            renames.insert(entity.name().to_string(), Replacement::Type(named(&hidden)));
        }
        if let Item::Struct(s) = &*item {
            structs.insert(s.name.name.clone());
        }
        if let Item::Template(t) = &*item {
            if let Templated::Struct(st) = &t.item {
                structs.insert(st.decl.name.name.clone());
            }
        }
        if !renames.is_empty() {
            rename_item(item, &renames);
        }
    }
    warnings
}

/// The entities an item defines (declarations without a body define
/// nothing), with the identifier that names each. Members of a struct
/// (`S::f`) follow their struct and are left out.
fn defined_entities<'i>(item: &'i Item, structs: &HashSet<String>) -> Vec<(Entity, &'i Ident)> {
    let is_member = |name: &str| {
        name.rsplit_once("::")
            .is_some_and(|(owner, _)| structs.contains(owner))
    };
    // The return type is part of a function template's signature
    // (SFINAE overloads differ only there); for other functions it only
    // tells apart what would be an error anyway.
    let function = |f: &'i crate::syntax::ast::FunctionDecl| {
        let params = std::iter::once(spell(&f.ret))
            .chain(f.params.iter().map(|p| spell(&p.ty)))
            .collect();
        (f.body.is_some() && !is_member(&f.name.name))
            .then(|| (Entity::Function(f.name.name.clone(), params), &f.name))
    };
    let named = |i: &'i Ident| (!is_member(&i.name)).then(|| (Entity::Named(i.name.clone()), i));
    match item {
        Item::Struct(s) => named(&s.name).into_iter().collect(),
        Item::Function(f) => function(f).into_iter().collect(),
        Item::Global(v) => v
            .declarators
            .iter()
            .filter_map(|d| named(&d.name))
            .collect(),
        // `enum E : int;` (an opaque declaration) defines nothing.
        Item::Enum(e) if e.enumerators.is_empty() => Vec::new(),
        Item::Enum(e) => e.name.iter().filter_map(named).collect(),
        Item::Template(t) => match &t.item {
            // Explicit specialisations of one template are distinct entities.
            Templated::Function(_) if t.specialization.is_some() => Vec::new(),
            Templated::Function(f) => function(f).into_iter().collect(),
            // A declaration (`template <typename T> struct S;`) defines nothing.
            Templated::Struct(st) if st.specialization.is_none() && !st.forward => {
                named(&st.decl.name).into_iter().collect()
            }
            Templated::Variable(v) if v.specialization.is_none() => {
                named(&v.name).into_iter().collect()
            }
            Templated::Struct(_) | Templated::Variable(_) | Templated::Alias(_) => Vec::new(),
        },
        Item::Alias(_)
        | Item::UsingNamespace(_)
        | Item::Instantiation(_)
        | Item::StaticAssert(_) => Vec::new(),
    }
}

/// A parameter type as written, without locations: overloads differ in it.
fn spell(ts: &TypeSpec) -> String {
    let mut s = format!(
        "{}{:?} {}",
        if ts.is_const { "const " } else { "" },
        ts.space.map(|(a, _)| a),
        ts.name()
    );
    if !ts.args.is_empty() {
        let args: Vec<String> = ts
            .args
            .iter()
            .map(|a| match a {
                TemplateArg::Type(t) => spell(t),
                TemplateArg::Expr(e) => without_spans(&format!("{:?}", e.kind)),
            })
            .collect();
        s += &format!("<{}>", args.join(","));
    }
    for op in &ts.ptr_ops {
        s.push(match op {
            PtrOp::Pointer { .. } => '*',
            _ => '&',
        });
    }
    s
}

/// `Debug` text with every `Span { .. }` removed: the same expression
/// written twice spells the same.
fn without_spans(debug: &str) -> String {
    let mut out = String::new();
    let mut rest = debug;
    while let Some(i) = rest.find("Span {") {
        out.push_str(&rest[..i]);
        rest = rest[i..].find('}').map_or("", |j| &rest[i + j + 1..]);
    }
    out.push_str(rest);
    out
}

fn named(name: &str) -> TypeSpec {
    crate::sema::struct_templates::named_type(name, crate::source_map::Span::default())
}

/// Applies `renames` to an item: the names it declares and every use.
/// Names the item declares locally (parameters, local variables) shadow a
/// renamed program-scope name and keep their spelling.
fn rename_item(item: &mut Item, renames: &HashMap<String, Replacement>) {
    match item {
        Item::Struct(s) => {
            let subst = Subst::renaming(renames);
            rename_ident(&mut s.name, renames);
            for m in &mut s.members {
                subst.ty(&mut m.ty);
                m.array.iter_mut().flatten().for_each(|e| subst.expr(e));
                if let Some(d) = &mut m.default {
                    subst.init(d);
                }
            }
        }
        Item::Function(f) => rename_function(f, renames),
        Item::Global(v) => {
            Subst::renaming(renames).var_decl(v);
            v.declarators
                .iter_mut()
                .for_each(|d| rename_ident(&mut d.name, renames));
        }
        Item::Enum(e) => {
            let subst = Subst::renaming(renames);
            e.underlying.iter_mut().for_each(|t| subst.ty(t));
            e.enumerators
                .iter_mut()
                .filter_map(|(_, v)| v.as_mut())
                .for_each(|v| subst.expr(v));
            e.name.iter_mut().for_each(|n| rename_ident(n, renames));
        }
        Item::Alias(a) => {
            let subst = Subst::renaming(renames);
            subst.ty(&mut a.ty);
            a.array.iter_mut().flatten().for_each(|e| subst.expr(e));
            rename_ident(&mut a.name, renames);
        }
        Item::Template(t) => {
            let own: HashMap<String, Replacement> = renames
                .iter()
                .filter(|(k, _)| t.params.iter().all(|p| &p.name.name != *k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            match &mut t.item {
                Templated::Function(f) => rename_function(f, &own),
                Templated::Struct(st) => {
                    let mut decl = Item::Struct(st.decl.clone());
                    rename_item(&mut decl, &own);
                    if let Item::Struct(d) = decl {
                        st.decl = d;
                    }
                    st.members.iter_mut().for_each(|m| rename_item(m, &own));
                    rename_args(st.specialization.iter_mut().flatten(), &own);
                }
                Templated::Variable(v) => {
                    let subst = Subst::renaming(&own);
                    subst.ty(&mut v.ty);
                    subst.init(&mut v.init);
                    rename_args(v.specialization.iter_mut().flatten(), &own);
                    rename_ident(&mut v.name, &own);
                }
                Templated::Alias(_) => {}
            }
        }
        Item::Instantiation(i) => rename_function(&mut i.function, renames),
        Item::StaticAssert(a) => Subst::renaming(renames).expr(&mut a.cond),
        Item::UsingNamespace(_) => {}
    }
}

fn rename_args<'a>(
    args: impl Iterator<Item = &'a mut TemplateArg>,
    renames: &HashMap<String, Replacement>,
) {
    let subst = Subst::renaming(renames);
    for a in args {
        match a {
            TemplateArg::Type(ts) => subst.ty(ts),
            TemplateArg::Expr(e) => subst.expr(e),
        }
    }
}

fn rename_function(
    f: &mut crate::syntax::ast::FunctionDecl,
    renames: &HashMap<String, Replacement>,
) {
    let mut locals = HashSet::new();
    f.params
        .iter()
        .filter_map(|p| p.name.as_ref())
        .for_each(|n| {
            locals.insert(n.name.clone());
        });
    if let Some(b) = &f.body {
        block_locals(b, &mut locals);
    }
    let own: HashMap<String, Replacement> = renames
        .iter()
        .filter(|(k, _)| !locals.contains(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Subst::renaming(&own).function(f);
    rename_ident(&mut f.name, renames);
}

/// `S` → its hiding name, and `S::m` → `S::unit2::m` for a member of it.
fn rename_ident(ident: &mut Ident, renames: &HashMap<String, Replacement>) {
    let target = |name: &str| match renames.get(name) {
        Some(Replacement::Type(t)) => Some(t.path.join("::")),
        _ => None,
    };
    if let Some(n) = target(&ident.name) {
        ident.name = n;
    } else if let Some((owner, member)) = ident.name.split_once("::") {
        if let Some(n) = target(owner) {
            ident.name = format!("{n}::{member}");
        }
    }
}

fn block_locals(b: &Block, out: &mut HashSet<String>) {
    b.stmts.iter().for_each(|s| stmt_locals(s, out));
}

fn stmt_locals(s: &Stmt, out: &mut HashSet<String>) {
    match &s.kind {
        StmtKind::Block(b) => block_locals(b, out),
        StmtKind::Decl(d) => d.declarators.iter().for_each(|d| {
            out.insert(d.name.name.clone());
        }),
        StmtKind::LocalType(t) => t.objects.iter().flat_map(|v| &v.declarators).for_each(|d| {
            out.insert(d.name.name.clone());
        }),
        StmtKind::If {
            then, otherwise, ..
        } => {
            stmt_locals(then, out);
            otherwise.iter().for_each(|o| stmt_locals(o, out));
        }
        StmtKind::For { init, body, .. } => {
            init.iter().for_each(|i| stmt_locals(i, out));
            stmt_locals(body, out);
        }
        StmtKind::While { body, .. } | StmtKind::DoWhile { body, .. } => stmt_locals(body, out),
        StmtKind::Switch { items, .. } => items.iter().for_each(|i| {
            if let crate::syntax::ast::SwitchItem::Stmt(s) = i {
                stmt_locals(s, out)
            }
        }),
        _ => {}
    }
}
