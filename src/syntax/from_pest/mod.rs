//! Builds the AST from pest's parse tree.

use super::ast::*;
use super::{Error, Rule};
use crate::diagnostics::Code;
use crate::source_map::Span;
use pest::iterators::{Pair, Pairs};
use pest::pratt_parser::{Assoc, Op, PrattParser};
use std::sync::OnceLock;

mod alias_templates;
mod declarators;
mod elaborated;
mod expr;
mod function_type_aliases;
mod gnu;
mod local_types;
mod member_specialization;
pub mod members;
mod namespaces;
mod out_of_line;
pub(crate) mod paths;
mod stmt;
mod struct_scope;
mod variadic;

use expr::expr;
use stmt::block;

type Result<T> = std::result::Result<T, Error>;

fn span_of(pair: &Pair<Rule>) -> Span {
    let s = pair.as_span();
    Span::new(s.start(), s.end())
}

fn ident(pair: Pair<Rule>) -> Ident {
    Ident {
        name: pair.as_str().to_string(),
        span: span_of(&pair),
    }
}

fn path(pair: Pair<Rule>) -> Vec<String> {
    let text = pair.as_str();
    let parts = text
        .trim_start_matches("::")
        .split("::")
        .map(|s| {
            let s = s.trim();
            // `S::template rebind`: the keyword only says `<` follows.
            s.strip_prefix("template")
                .filter(|rest| rest.starts_with(char::is_whitespace))
                .unwrap_or(s)
                .trim()
                .to_string()
        })
        .collect();
    namespaces::resolve(parts, text.starts_with("::"), span_of(&pair))
}

/// Builds a translation unit.
pub(super) fn translation_unit(mut pairs: Pairs<Rule>) -> Result<TranslationUnit> {
    let tu = pairs.next().expect("translation_unit");
    namespaces::reset();
    out_of_line::reset();
    elaborated::reset();
    variadic::reset();
    function_type_aliases::reset();
    let mut items = Vec::new();
    let result = top_level(tu.into_inner(), &mut items);
    let error = namespaces::take_error();
    namespaces::reset();
    result?;
    variadic::check(&mut items)?;
    alias_templates::expand(&mut items)?;
    elaborated::reorder(&mut items);
    match error {
        Some(e) => Err(e),
        None => Ok(TranslationUnit { items }),
    }
}

/// Builds declarations at program or namespace scope into `items`.
fn top_level<'i>(pairs: impl Iterator<Item = Pair<'i, Rule>>, items: &mut Vec<Item>) -> Result<()> {
    for pair in pairs {
        let start = items.len();
        // A nested namespace, or an out-of-line definition of a namespace
        // member, declares its own members.
        let nested =
            pair.as_rule() == Rule::namespace_decl || out_of_line::defines_namespace_member(&pair);
        // A struct's own name is found in its body (the injected-class-name).
        let defining = namespaces::begin_struct(defined_struct(&pair));
        let built = item(pair, items);
        namespaces::end_struct(defining);
        built?;
        for built in items[start..].iter_mut().filter(|_| !nested) {
            namespaces::declare(built)?;
        }
    }
    Ok(())
}

/// The name of the struct (or struct template) that `pair` defines.
fn defined_struct(pair: &Pair<Rule>) -> Option<String> {
    let decl = match pair.as_rule() {
        Rule::struct_decl => pair.clone(),
        Rule::template_decl => pair
            .clone()
            .into_inner()
            .find(|p| p.as_rule() == Rule::struct_decl)?,
        _ => return None,
    };
    let name = decl.into_inner().find(|p| p.as_rule() == Rule::ident)?;
    Some(name.as_str().to_string())
}

/// `namespace [a::b] { items }`: flattened (see [`namespaces`]).
fn namespace_decl(pair: Pair<Rule>, items: &mut Vec<Item>) -> Result<()> {
    let mut inner = pair.into_inner().peekable();
    inner.next(); // `namespace`
    let name = inner
        .next_if(|p| p.as_rule() == Rule::path)
        .map(|p| p.as_str().split_whitespace().collect::<String>());
    let levels = namespaces::enter(name.as_deref());
    let result = top_level(inner, items);
    namespaces::leave(levels);
    result
}

/// `static_assert(cond [, "message"]);`
fn static_assert_decl(pair: Pair<Rule>) -> Result<StaticAssert> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    inner.next(); // `static_assert`
    let cond = expr(inner.next().unwrap())?;
    let message = inner
        .next()
        .map(|m| m.as_str().trim_matches('"').to_string());
    Ok(StaticAssert {
        cond,
        message,
        span,
    })
}

/// An error for C++ features Metal does not have, named precisely.
fn unsupported(pair: &Pair<Rule>) -> Error {
    let message = match pair.as_rule() {
        Rule::fn_pointer_decl => "function pointers are not supported in Metal".to_string(),
        Rule::label_stmt => format!(
            "labels (`{}`) are not supported in Metal: they are the targets of `goto`, which Metal does not have",
            pair.as_str().trim()
        ),
        _ => {
            let word = pair.as_str().split_whitespace().next().unwrap_or("");
            match word {
                "new" | "delete" => {
                    format!("`{word}` is not supported in Metal (no dynamic memory allocation)")
                }
                "goto" => "`goto` is not supported in Metal: write the jump as a loop with `break`/`continue`, or a flag".to_string(),
                _ => format!("exceptions (`{word}`) are not supported in Metal"),
            }
        }
    };
    Error::coded(Code::NotInMetal, span_of(pair), message)
}

/// `typedef R F(params);`: a function type, refused where it is declared.
/// `typedef decltype(f<float4, 1>) f_t;`: remembers `f_t` for the explicit
/// instantiations that name it ([`function_type_aliases`]).
fn fn_decltype_alias(pair: Pair<Rule>) {
    let mut inner = pair.into_inner();
    let typedef = inner
        .next()
        .is_some_and(|p| p.as_rule() == Rule::typedef_kw);
    let mut names = inner.filter(|p| p.as_rule() == Rule::ident);
    let alias = match typedef {
        true => names.last(),
        false => names.next(),
    };
    function_type_aliases::declare(alias.expect("the alias's name").as_str());
}

fn function_type(pair: Pair<Rule>) -> Error {
    let name = pair
        .into_inner()
        .find(|p| p.as_rule() == Rule::ident)
        .expect("a function type's name");
    Error::coded(
        Code::NoWebGpuEquivalent,
        span_of(&name),
        format!(
            "`{}` is a function type, which Metal uses for visible and intersection function tables; WebGPU has no function tables or indirect calls",
            name.as_str()
        ),
    )
}

fn item(pair: Pair<Rule>, items: &mut Vec<Item>) -> Result<()> {
    {
        let span = span_of(&pair);
        match pair.as_rule() {
            Rule::namespace_decl => namespace_decl(pair, items)?,
            Rule::static_assert_decl => items.push(Item::StaticAssert(static_assert_decl(pair)?)),
            Rule::unsupported_decl | Rule::fn_pointer_decl => return Err(unsupported(&pair)),
            Rule::fn_type_alias => return Err(function_type(pair)),
            Rule::fn_decltype_alias => fn_decltype_alias(pair),
            Rule::variadic_template => variadic::skip(pair),
            Rule::using_decl => {
                // `using a::f;`: checked by `path`; a renamed member (see
                // `namespaces`) becomes visible unqualified here.
                let p = pair.into_inner().next().unwrap();
                let written = p.as_str().to_string();
                namespaces::using_declaration(&path(p), &written);
            }
            Rule::using_namespace => {
                let name = pair.clone().into_inner().next().unwrap().as_str();
                namespaces::using_namespace(&name.split_whitespace().collect::<String>());
                items.push(Item::UsingNamespace(span));
            }
            Rule::using_alias => items.push(Item::Alias(using_alias(pair)?)),
            Rule::fn_pointer_alias => items.push(Item::Alias(function_pointer_alias(pair)?)),
            Rule::typedef_decl => {
                let tag = elaborated::names_tag(&pair);
                let alias = typedef_decl(pair, None)?;
                if tag {
                    elaborated::note(&alias);
                }
                items.push(Item::Alias(alias));
            }
            Rule::struct_decl => {
                let (decl, members, spec) = members::struct_decl(pair)?;
                if let Some(args) = spec {
                    return Err(Error::coded(
                        Code::Template,
                        args.first().map_or(decl.name.span, template_arg_span),
                        format!(
                            "a specialisation of `{}` must follow `template <>`",
                            decl.name.name
                        ),
                    ));
                }
                // Its nested structs, member aliases and static constants
                // first: its members may name them.
                let (nested, members): (Vec<Item>, Vec<Item>) = members
                    .into_iter()
                    .partition(|i| struct_scope::declared_ahead(i, &decl.name.name));
                items.extend(nested);
                items.push(Item::Struct(decl));
                items.extend(members);
            }
            Rule::typedef_struct => items.extend(typedef_struct(pair)?),
            Rule::enum_decl | Rule::opaque_enum => items.push(Item::Enum(enum_decl(pair)?)),
            // `struct S;` declares nothing a later use needs.
            Rule::struct_forward => {
                gnu::among(pair.into_inner())?;
            }
            Rule::function_def => items.push(Item::Function(function_def(pair)?)),
            Rule::member_def => items.extend(out_of_line::definition(pair)?),
            Rule::ctor_out_of_line => items.extend(out_of_line::constructor_definition(pair)?),
            Rule::global_decl => items.push(Item::Global(var_decl(pair)?)),
            // Declares nothing the class did not (its initializer is there).
            Rule::static_member_redecl => {}
            Rule::template_decl if out_of_line::is_template_member(&pair) => {
                out_of_line::template_definition(pair, items)?
            }
            Rule::template_decl => items.push(Item::Template(template_decl(pair)?)),
            Rule::explicit_instantiation => {
                items.push(Item::Instantiation(explicit_instantiation(pair)?))
            }
            Rule::empty_decl | Rule::EOI => {}
            r => unreachable!("unexpected top-level rule {r:?}"),
        }
    }
    Ok(())
}

/// `using Name = Type;`
fn using_alias(pair: Pair<Rule>) -> Result<Alias> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let name = ident(inner.next().unwrap());
    let ty = type_spec(inner.next().unwrap())?;
    let array = inner.map(array_suffix).collect::<Result<Vec<_>>>()?;
    Ok(Alias {
        name,
        ty,
        array,
        layout: Vec::new(),
        span,
    })
}

/// `using F = R (*)(..);`: an alias of a function pointer type.
fn function_pointer_alias(pair: Pair<Rule>) -> Result<Alias> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let name = ident(inner.next().unwrap());
    let mut ty = type_spec(inner.next().unwrap())?;
    ty.ptr_ops.push(PtrOp::Function);
    Ok(Alias {
        name,
        ty,
        array: Vec::new(),
        layout: Vec::new(),
        span,
    })
}

/// `typedef T Name[N];`; `owner` names the struct of a member typedef.
pub(super) fn typedef_decl(pair: Pair<Rule>, owner: Option<&Ident>) -> Result<Alias> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let ty_pair = inner.next().unwrap();
    let mut layout = gnu::in_type(&ty_pair)?;
    let ty = type_spec(ty_pair)?;
    let mut name = ident(inner.next().unwrap());
    if let Some(s) = owner {
        name.name = members::member_name(&s.name, &name.name);
    }
    let mut array = Vec::new();
    for p in inner {
        match p.as_rule() {
            Rule::array_suffix => array.push(array_suffix(p)?),
            _ => layout.extend(gnu::attribute(p)?),
        }
    }
    Ok(Alias {
        name,
        ty,
        array,
        layout,
        span,
    })
}

/// `enum [class] E [: T] { .. }` and the opaque `typedef enum E : T E;`.
fn enum_decl(pair: Pair<Rule>) -> Result<EnumDecl> {
    let span = span_of(&pair);
    let mut names = Vec::new();
    let (mut underlying, mut enumerators) = (None, Vec::new());
    let mut scoped = false;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::class_kw => scoped = true,
            Rule::ident => names.push(ident(p)),
            Rule::type_spec => underlying = Some(type_spec(p)?),
            Rule::enumerator => {
                let mut inner = p.into_inner();
                let name = ident(inner.next().unwrap());
                let mut value = None;
                for q in inner {
                    match q.as_rule() {
                        Rule::gnu_attribute => {
                            gnu::refuse_layout(&gnu::attribute(q)?, "an enumerator")?
                        }
                        _ => value = Some(expr(q)?),
                    }
                }
                enumerators.push((name, value));
            }
            // `packed` would make the enum's underlying type the smallest
            // that holds its values.
            Rule::gnu_attribute => gnu::refuse_layout(&gnu::attribute(p)?, "an enum")?,
            _ => {}
        }
    }
    // `typedef enum Tag {..} Name;`: the last identifier is the name.
    let (tag, name) = match names.len() {
        2 => (Some(names.remove(0)), names.pop()),
        _ => (None, names.pop()),
    };
    Ok(EnumDecl {
        name,
        tag,
        underlying,
        enumerators,
        scoped,
        span,
    })
}

/// `typedef struct [Tag] {..} Name;` (a struct named `Name`, and `Tag`) or
/// `using Name = struct {..};`.
fn typedef_struct(pair: Pair<Rule>) -> Result<Vec<Item>> {
    let span = span_of(&pair);
    let mut names = Vec::new();
    let mut members = Vec::new();
    let mut layout = Vec::new();
    let mut is_union = false;
    let mut anonymous = Vec::new();
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::struct_kw => is_union = p.as_str() == "union",
            Rule::ident => names.push(ident(p)),
            Rule::member_decl => members.extend(member_decl(p)?),
            Rule::anonymous_member => members.push(anonymous_member(p, &mut anonymous)?),
            Rule::gnu_attribute => layout.extend(gnu::attribute(p)?),
            _ => {}
        }
    }
    let name = names.pop().expect("the grammar requires a name");
    let pod_candidate = members.iter().all(|m| m.default.is_none());
    let mut items = vec![Item::Struct(StructDecl {
        name: name.clone(),
        members,
        span,
        instance_of: None,
        layout,
        is_union,
        pod_candidate,
        anonymous,
    })];
    if let Some(tag) = names.pop().filter(|t| t.name != name.name) {
        let ty = TypeSpec {
            is_const: false,
            is_constexpr: false,
            space: None,
            path: vec![name.name.clone()],
            args: Vec::new(),
            ptr_ops: Vec::new(),
            name_span: name.span,
            span: name.span,
        };
        items.push(Item::Alias(Alias {
            name: tag,
            ty,
            array: Vec::new(),
            layout: Vec::new(),
            span,
        }));
    }
    Ok(items)
}

/// `union { .. };` inside a struct: the member holding it, named
/// [`anonymous_member_name`], its declaration appended to `anonymous`.
fn anonymous_member(pair: Pair<Rule>, anonymous: &mut Vec<StructDecl>) -> Result<Member> {
    let span = span_of(&pair);
    let mut members = Vec::new();
    let mut nested = Vec::new();
    let mut layout = Vec::new();
    let mut is_union = false;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::struct_kw => is_union = p.as_str() == "union",
            Rule::gnu_attribute => layout.extend(gnu::attribute(p)?),
            Rule::member_decl => members.extend(member_decl(p)?),
            Rule::anonymous_member => members.push(anonymous_member(p, &mut nested)?),
            r => unreachable!("anonymous member part {r:?}"),
        }
    }
    let name = Ident {
        name: anonymous_member_name(anonymous.len()),
        span,
    };
    anonymous.push(StructDecl {
        name: name.clone(),
        pod_candidate: members.iter().all(|m| m.default.is_none()),
        members,
        span,
        instance_of: None,
        layout,
        is_union,
        anonymous: nested,
    });
    Ok(Member {
        ty: TypeSpec {
            is_const: false,
            is_constexpr: false,
            space: None,
            path: vec![name.name.clone()],
            args: Vec::new(),
            ptr_ops: Vec::new(),
            name_span: span,
            span,
        },
        name,
        array: Vec::new(),
        attributes: Vec::new(),
        layout: Vec::new(),
        default: None,
        bits: None,
    })
}

fn member_decl(decl: Pair<Rule>) -> Result<Vec<Member>> {
    let mut parts = decl.into_inner().peekable();
    // `alignas(N)` before the type: an `aligned(N)` on each member.
    let mut aligned = Vec::new();
    while let Some(p) = parts.next_if(|p| p.as_rule() == Rule::alignas_spec) {
        aligned.push(struct_scope::alignas(p)?);
    }
    let ty_pair = parts.next().unwrap();
    let mut shared_layout = gnu::in_type(&ty_pair)?;
    shared_layout.extend(aligned);
    let ty = type_spec(ty_pair)?;
    let mut members = Vec::new();
    for d in parts {
        let mut dp = d.into_inner().peekable();
        let name = match dp.peek() {
            Some(w) if w.as_rule() == Rule::bit_width => {
                let span = span_of(w);
                Ident {
                    name: unnamed_bit_field_name(span.start as usize),
                    span,
                }
            }
            _ => ident(dp.next().unwrap()),
        };
        let (mut array, mut attributes) = (Vec::new(), Vec::new());
        let mut layout = shared_layout.clone();
        let mut default = None;
        let mut bits = None;
        for p in dp {
            match p.as_rule() {
                Rule::bit_width => bits = Some(expr(p.into_inner().next().unwrap())?),
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
        members.push(Member {
            ty: ty.clone(),
            name,
            array,
            attributes,
            layout,
            default,
            bits,
        });
    }
    Ok(members)
}

fn array_suffix(pair: Pair<Rule>) -> Result<Option<Expr>> {
    pair.into_inner().next().map(expr).transpose()
}

fn attributes_of(pair: Pair<Rule>) -> Result<Vec<Attribute>> {
    pair.into_inner()
        .map(|a| {
            let span = span_of(&a);
            let mut inner = a.into_inner();
            let name = path(inner.next().unwrap()).join("::");
            let args = inner
                .map(|arg| expr(arg.into_inner().next().unwrap()))
                .collect::<Result<_>>()?;
            Ok(Attribute { name, args, span })
        })
        .collect()
}

fn function_def(pair: Pair<Rule>) -> Result<FunctionDecl> {
    let (f, args) = function_def_with_args(pair)?;
    match args {
        None => Ok(f),
        Some(_) => Err(Error::coded(
            Code::Template,
            f.name.span,
            format!(
                "explicit specialisation of `{}` needs `template <>` before it",
                f.name.name
            ),
        )),
    }
}

/// A function definition with the template arguments after its name (an
/// explicit specialisation's, `f<bool, float>(..)`).
fn function_def_with_args(pair: Pair<Rule>) -> Result<(FunctionDecl, Option<Vec<TemplateArg>>)> {
    let span = span_of(&pair);
    let mut specialization = None;
    let mut stage = None;
    let mut attributes = Vec::new();
    let mut ret = None;
    let mut name = None;
    let mut params = Vec::new();
    let mut body = None;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::fn_specifier => {
                let s = span_of(&p);
                match p.as_str() {
                    "kernel" => stage = Some((Stage::Kernel, s)),
                    "vertex" => stage = Some((Stage::Vertex, s)),
                    "fragment" => stage = Some((Stage::Fragment, s)),
                    _ => {}
                }
            }
            Rule::attributes => {
                for a in attributes_of(p)? {
                    match a.name.as_str() {
                        "kernel" => stage = Some((Stage::Kernel, a.span)),
                        "vertex" => stage = Some((Stage::Vertex, a.span)),
                        "fragment" => stage = Some((Stage::Fragment, a.span)),
                        _ => attributes.push(a),
                    }
                }
            }
            Rule::type_spec => ret = Some(return_type_spec(p)?),
            Rule::ident | Rule::operator_name => name = Some(members::fn_name(p)),
            Rule::template_args => specialization = Some(template_args(p)?),
            Rule::param_list => {
                for param in p.into_inner().filter(|x| x.as_rule() == Rule::param) {
                    params.push(param_of(param)?);
                }
            }
            Rule::block => body = Some(block(p)?),
            Rule::fn_declaration_end => {}
            // `aligned` on a function aligns its code: nothing to do.
            Rule::gnu_attribute => {
                gnu::attribute(p)?;
            }
            r => unreachable!("function part {r:?}"),
        }
    }
    let f = FunctionDecl {
        stage,
        attributes,
        ret: ret.unwrap(),
        name: name.unwrap(),
        params,
        body,
        span,
    };
    Ok((f, specialization))
}

/// `template <params> function-or-struct`
fn template_decl(pair: Pair<Rule>) -> Result<TemplateDecl> {
    let span = span_of(&pair);
    let mut params = Vec::new();
    let mut item = None;
    let mut specialization = None;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::template_kw => {}
            Rule::template_param => params.push(template_param(p)?),
            Rule::function_def => {
                let (f, args) = function_def_with_args(p)?;
                specialization = args;
                item = Some(Templated::Function(f));
            }
            Rule::struct_decl => {
                let (decl, members, specialization) = members::struct_decl(p)?;
                item = Some(Templated::Struct(StructTemplate {
                    decl,
                    members,
                    specialization,
                    forward: false,
                }))
            }
            // `template <typename T> struct S;` declares the primary
            // template that specialisations (and instances) refer to.
            Rule::struct_forward => item = Some(Templated::Struct(forward_struct_template(p)?)),
            Rule::variable_template => item = Some(Templated::Variable(variable_template(p)?)),
            Rule::using_alias => item = Some(Templated::Alias(using_alias(p)?)),
            Rule::fn_pointer_alias => item = Some(Templated::Alias(function_pointer_alias(p)?)),
            r => unreachable!("template part {r:?}"),
        }
    }
    Ok(TemplateDecl {
        params,
        item: item.expect("template_decl has a declaration"),
        specialization,
        span,
    })
}

/// `struct S;` after `template <...>`: a primary template without members.
fn forward_struct_template(pair: Pair<Rule>) -> Result<StructTemplate> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let is_union = inner.next().is_some_and(|k| k.as_str() == "union");
    let layout = gnu::among(inner.clone())?;
    let name = ident(inner.find(|p| p.as_rule() == Rule::ident).unwrap());
    Ok(StructTemplate {
        decl: StructDecl {
            name,
            members: Vec::new(),
            span,
            instance_of: None,
            layout,
            is_union,
            pod_candidate: true,
            anonymous: Vec::new(),
        },
        members: Vec::new(),
        specialization: None,
        forward: true,
    })
}

/// `constexpr bool is_v<C<T>> = true;` after `template <...>`.
fn variable_template(pair: Pair<Rule>) -> Result<VariableTemplate> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let ty = type_spec(inner.next().unwrap())?;
    let name = ident(inner.next().unwrap());
    let mut specialization = None;
    let mut init = None;
    for p in inner {
        match p.as_rule() {
            Rule::template_args => specialization = Some(template_args(p)?),
            Rule::init_list => init = Some(init_list(p)?),
            _ => init = Some(Init::Expr(expr(p)?)),
        }
    }
    Ok(VariableTemplate {
        ty,
        name,
        specialization,
        init: init.expect("a variable template has an initializer"),
        span,
    })
}

pub(super) fn template_param(pair: Pair<Rule>) -> Result<TemplateParam> {
    let span = span_of(&pair);
    let p = pair.into_inner().next().unwrap();
    if p.as_rule() == Rule::template_template_param {
        return template_template_param(p, span);
    }
    if p.as_rule() == Rule::fn_pointer_param {
        // As `using F = R (*)(..); template <F f>` (`function_pointer_alias`).
        let mut inner = p.into_inner();
        let mut ty = type_spec(inner.next().unwrap())?;
        ty.ptr_ops.push(PtrOp::Function);
        return Ok(TemplateParam {
            name: ident(inner.next().unwrap()),
            kind: TemplateParamKind::Value(ty, None),
            pack: false,
            span,
        });
    }
    let is_type = p.as_rule() == Rule::type_param;
    let mut inner = p.into_inner().peekable();
    let mut pack = false;
    let mut skip_pack = |inner: &mut std::iter::Peekable<Pairs<Rule>>| {
        if inner.peek().map(|p| p.as_rule()) == Some(Rule::pack_ellipsis) {
            inner.next();
            pack = true;
        }
    };
    if is_type {
        inner.next(); // `typename` or `class`
        skip_pack(&mut inner);
        // `typename = enable_if_t<..>`: an unnamed parameter gets a name no
        // source can spell.
        let name = match inner.peek().map(|p| p.as_rule()) {
            Some(Rule::ident) => ident(inner.next().unwrap()),
            _ => Ident {
                name: format!("<unnamed {}>", span.start),
                span,
            },
        };
        let default = inner.next().map(type_spec).transpose()?;
        return Ok(TemplateParam {
            name,
            kind: TemplateParamKind::Type(default),
            pack,
            span,
        });
    }
    let ty = type_spec(inner.next().unwrap())?;
    skip_pack(&mut inner);
    let name = match inner.peek().map(|p| p.as_rule()) {
        Some(Rule::ident) => ident(inner.next().unwrap()),
        _ => Ident {
            name: format!("<unnamed {}>", span.start),
            span,
        },
    };
    let default = inner.next().map(expr).transpose()?;
    Ok(TemplateParam {
        name,
        kind: TemplateParamKind::Value(ty, default),
        pack,
        span,
    })
}

/// `template <typename, int> class V [= Vec]`: its own parameters only
/// say what arguments `V` takes, which its uses check.
fn template_template_param(pair: Pair<Rule>, span: Span) -> Result<TemplateParam> {
    let (mut name, mut default, mut pack) = (None, None, false);
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::ident => name = Some(ident(p)),
            Rule::path => default = Some(path(p)),
            Rule::pack_ellipsis => pack = true,
            _ => {}
        }
    }
    Ok(TemplateParam {
        name: name.unwrap_or_else(|| Ident {
            name: format!("<unnamed {}>", span.start),
            span,
        }),
        kind: TemplateParamKind::Template(default),
        pack,
        span,
    })
}

/// `template [[host_name("n")]] kernel void f<float>(device float*);`
fn explicit_instantiation(pair: Pair<Rule>) -> Result<Instantiation> {
    let span = span_of(&pair);
    let mut host_name = None;
    let mut stage = None;
    let mut ret = None;
    let mut name = None;
    let mut args = Vec::new();
    let mut params = Vec::new();
    let mut of_template = false;
    let mut has_params = false;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::template_kw => {}
            Rule::host_name_attr => {
                let lits: Vec<_> = p.into_inner().collect();
                let text: String = lits
                    .iter()
                    .map(|l| &l.as_str()[1..l.as_str().len() - 1])
                    .collect();
                let first = span_of(&lits[0]);
                let at = first.join(span_of(lits.last().unwrap()));
                host_name = Some((text, at));
            }
            Rule::attributes => {
                for a in attributes_of(p)? {
                    match a.name.as_str() {
                        "kernel" => stage = Some((Stage::Kernel, a.span)),
                        "vertex" => stage = Some((Stage::Vertex, a.span)),
                        "fragment" => stage = Some((Stage::Fragment, a.span)),
                        _ => {}
                    }
                }
            }
            // `decltype(f<T>) f<T>`: the parameters are the template's.
            Rule::decltype_kw => of_template = true,
            Rule::fn_specifier => {
                let s = span_of(&p);
                match p.as_str() {
                    "kernel" => stage = Some((Stage::Kernel, s)),
                    "vertex" => stage = Some((Stage::Vertex, s)),
                    "fragment" => stage = Some((Stage::Fragment, s)),
                    _ => {}
                }
            }
            Rule::type_spec => ret = Some(type_spec(p)?),
            Rule::ident => name = Some(ident(p)),
            Rule::template_args => args = template_args(p)?,
            Rule::param_list => {
                has_params = true;
                for param in p.into_inner().filter(|x| x.as_rule() == Rule::param) {
                    params.push(param_of(param)?);
                }
            }
            r => unreachable!("instantiation part {r:?}"),
        }
    }
    let name: Ident = name.unwrap();
    if !of_template && !has_params {
        // `template kernel f_t f<float>;`: `f_t` must name a function type.
        let ty = ret.take().expect("the declared type");
        match ty.path.as_slice() {
            [alias] if function_type_aliases::is_alias(alias) && ty.ptr_ops.is_empty() => {
                of_template = true
            }
            _ => {
                return Err(Error::coded(
                    Code::Template,
                    ty.name_span,
                    format!(
                        "an explicit instantiation without parameters needs a function type here, such as `decltype({}<...>)` or a name declared as `typedef decltype({}<...>) NAME;`",
                        name.name, name.name
                    ),
                ))
            }
        }
    }
    let ret = ret.unwrap_or_else(|| TypeSpec {
        is_const: false,
        is_constexpr: false,
        space: None,
        path: vec!["void".to_string()],
        args: Vec::new(),
        ptr_ops: Vec::new(),
        name_span: name.span,
        span: name.span,
    });
    let function = FunctionDecl {
        stage,
        attributes: Vec::new(),
        ret,
        name,
        params,
        body: None,
        span,
    };
    Ok(Instantiation {
        host_name,
        function,
        args,
        of_template,
        span,
    })
}

fn param_of(pair: Pair<Rule>) -> Result<Param> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let ty = type_spec(inner.next().unwrap())?;
    let (mut name, mut array, mut attributes) = (None, Vec::new(), Vec::new());
    let (mut default, mut array_ref, mut pack) = (None, false, false);
    let mut array_pointer = false;
    for p in inner {
        match p.as_rule() {
            Rule::pack_ellipsis => pack = true,
            Rule::ident => name = Some(ident(p)),
            Rule::array_ref_name => {
                let mut parts = p.into_inner().peekable();
                array_pointer = parts
                    .next_if(|x| x.as_rule() == Rule::array_pointer)
                    .is_some();
                name = Some(ident(parts.next().unwrap()));
                array_ref = true;
            }
            Rule::array_suffix => array.push(array_suffix(p)?),
            Rule::attributes => attributes.extend(attributes_of(p)?),
            // `S s = {}`: the parameter's type built from the list.
            Rule::assign_expr | Rule::init_list => default = Some(expr(p)?),
            // Layout attributes on a parameter change no type.
            Rule::gnu_attribute => {
                gnu::attribute(p)?;
            }
            r => unreachable!("parameter part {r:?}"),
        }
    }
    let (ty, array) = if array_ref {
        let op = match array_pointer {
            true => PtrOp::Pointer {
                is_const: false,
                space: None,
            },
            false => PtrOp::Reference,
        };
        (declarators::array_reference(ty, array, op), Vec::new())
    } else {
        (ty, array)
    };
    Ok(Param {
        ty,
        name,
        array,
        attributes,
        default,
        pack,
        span,
    })
}

/// A function's return type: `constexpr` there specifies the function,
/// so unlike a variable's it does not make a returned reference or
/// pointer `const` (`constexpr thread T& at(..)` returns a writable
/// reference).
pub(super) fn return_type_spec(pair: Pair<Rule>) -> Result<TypeSpec> {
    let written_const = pair
        .clone()
        .into_inner()
        .any(|p| p.as_rule() == Rule::cv && p.as_str() == "const");
    let mut ts = type_spec(pair)?;
    if !ts.ptr_ops.is_empty() {
        ts.is_const = written_const;
    }
    Ok(ts)
}

/// `type_spec` and `cast_type_spec` share one shape.
pub(super) fn type_spec(pair: Pair<Rule>) -> Result<TypeSpec> {
    let span = span_of(&pair);
    let mut ts = TypeSpec {
        is_const: false,
        is_constexpr: false,
        space: None,
        path: Vec::new(),
        args: Vec::new(),
        ptr_ops: Vec::new(),
        name_span: span,
        span,
    };
    for p in pair.into_inner() {
        match p.as_rule() {
            // `volatile` is accepted and dropped. It forbids the compiler
            // to remove, merge or reorder accesses to the object, which
            // matters only when something outside the program's own
            // accesses can change it (memory-mapped registers, another
            // agent); within a shader every access the program makes still
            // happens in order, WGSL has no such qualifier, and other
            // invocations' writes are ordered only by barriers and atomics,
            // which are translated as such. So a `volatile` object reads and
            // writes the same values in WGSL (Tint uses it to stop Metal
            // folding a constant: `volatile constexpr constant uint
            // tint_volatile_zero = 0u;`).
            Rule::cv => {
                if p.as_str() == "const" || p.as_str() == "constexpr" {
                    ts.is_const = true;
                }
                ts.is_constexpr |= p.as_str() == "constexpr";
            }
            Rule::address_space => ts.space = Some((address_space(&p), span_of(&p))),
            Rule::coherent_qual => return Err(coherent(&p)),
            // `(unsigned int)x`.
            Rule::multiword_type => {
                ts.name_span = span_of(&p);
                base_type_part(&mut ts, p)?;
            }
            Rule::base_type => {
                ts.name_span = span_of(&p);
                for b in p.into_inner() {
                    base_type_part(&mut ts, b)?;
                }
            }
            // `(vec<bool, N>)x`: Metal's type templates are cast types too.
            Rule::builtin_type_name | Rule::template_name | Rule::void_type_name => {
                ts.name_span = span_of(&p);
                ts.path = path(p);
            }
            Rule::template_args => ts.args = template_args(p)?,
            Rule::typename_prefix => {}
            // Read again by the declarations they can change the layout of
            // (`gnu::in_type`); here only refused if they change the type.
            Rule::gnu_attribute => {
                gnu::attribute(p)?;
            }
            Rule::ptr_op => {
                let op = p.into_inner().next().unwrap();
                ts.ptr_ops.push(match op.as_rule() {
                    Rule::pointer => {
                        let (mut is_const, mut space) = (false, None);
                        for q in op.into_inner() {
                            match q.as_rule() {
                                Rule::gnu_attribute => {
                                    gnu::attribute(q)?;
                                }
                                Rule::address_space => space = Some(address_space(&q)),
                                _ => is_const |= q.as_str() == "const",
                            }
                        }
                        PtrOp::Pointer { is_const, space }
                    }
                    _ => PtrOp::Reference,
                });
            }
            r => unreachable!("type part {r:?}"),
        }
    }
    Ok(ts)
}

/// An `address_space` pair's space.
pub(super) fn address_space(p: &Pair<Rule>) -> AddressSpace {
    match p.as_str() {
        "device" => AddressSpace::Device,
        "constant" => AddressSpace::Constant,
        "thread" => AddressSpace::Thread,
        "threadgroup" => AddressSpace::Threadgroup,
        _ => AddressSpace::Other,
    }
}

fn base_type_part(ts: &mut TypeSpec, b: Pair<Rule>) -> Result<()> {
    match b.as_rule() {
        Rule::multiword_type => {
            let words: Vec<&str> = b.as_str().split_whitespace().collect();
            ts.path = vec![words.join(" ")];
        }
        Rule::path => ts.path = path(b),
        // `decltype(e)` is the path `decltype` with the operand as argument.
        Rule::decltype_spec => {
            ts.path = vec!["decltype".into()];
            ts.args = vec![TemplateArg::Expr(expr(b.into_inner().nth(1).unwrap())?)];
        }
        Rule::template_args => {
            ts.args = template_args(b.clone())?;
            // `And<>`: every argument defaulted. The name's span stops
            // before the empty list, which tells it from a bare `And`
            // (`sema::struct_templates`).
            if ts.args.is_empty() {
                let start = ts.name_span.start;
                ts.name_span = Span::new(start as usize, span_of(&b).start.max(start) as usize);
            }
        }
        // `struct S` is the type `S`: struct, enum and typedef names share
        // one scope here, as C++ lets them (`typedef struct S S;`).
        Rule::elaborated_kw => {}
        // `Traits<T>::type`: the member's name follows the template's path.
        Rule::scope_suffix => ts
            .path
            .push(b.into_inner().next().unwrap().as_str().to_string()),
        r => unreachable!("base type part {r:?}"),
    }
    Ok(())
}

/// Where a template argument is.
pub(super) fn template_arg_span(a: &TemplateArg) -> Span {
    match a {
        TemplateArg::Type(t) => t.span,
        TemplateArg::Expr(e) => e.span,
    }
}

fn template_args(pair: Pair<Rule>) -> Result<Vec<TemplateArg>> {
    pair.into_inner()
        .map(|arg| {
            let mut inner = arg.into_inner();
            let first = inner.next().unwrap();
            let expanded = inner.next().is_some();
            Ok(match first.as_rule() {
                // `Ts...`: a type pattern expanded per element.
                Rule::type_spec if expanded => {
                    let ts = type_spec(first)?;
                    let span = ts.span;
                    TemplateArg::Expr(Expr {
                        kind: ExprKind::TypePackExpansion(Box::new(ts)),
                        span,
                    })
                }
                Rule::type_spec => TemplateArg::Type(type_spec(first)?),
                _ => TemplateArg::Expr(expr(first)?),
            })
        })
        .collect()
}

/// The elements of a call's argument list or a braced list: `pattern...`
/// (a `pack_ellipsis` after an element) wraps the element before it.
pub(super) fn with_expansions<T>(
    pairs: Pairs<Rule>,
    mut element: impl FnMut(Pair<Rule>) -> Result<T>,
    expansion: impl Fn(T, Span) -> Result<T>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for p in pairs {
        if p.as_rule() == Rule::pack_ellipsis {
            let last = out.pop().expect("`...` follows an element");
            out.push(expansion(last, span_of(&p))?);
        } else {
            out.push(element(p)?);
        }
    }
    Ok(out)
}

/// `e...`
pub(super) fn pack_expansion(e: Expr, dots: Span) -> Expr {
    let span = e.span.join(dots);
    Expr {
        kind: ExprKind::PackExpansion(Box::new(e)),
        span,
    }
}

fn var_decl(pair: Pair<Rule>) -> Result<VarDecl> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let ty = type_spec(inner.next().unwrap())?;
    let declarators = inner.map(declarator).collect::<Result<_>>()?;
    Ok(VarDecl {
        ty,
        declarators,
        span,
    })
}

fn declarator(pair: Pair<Rule>) -> Result<Declarator> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let name = ident(inner.next().unwrap());
    let (mut array, mut init, mut attributes) = (Vec::new(), None, Vec::new());
    for p in inner {
        match p.as_rule() {
            Rule::array_suffix => array.push(array_suffix(p)?),
            Rule::attributes => attributes.extend(attributes_of(p)?),
            // A variable's own alignment changes no type's layout, and
            // WGSL cannot observe it.
            Rule::gnu_attribute => {
                gnu::attribute(p)?;
            }
            Rule::init_list => init = Some(init_list(p)?),
            Rule::paren_init => {
                let s = span_of(&p);
                init = Some(Init::Paren(
                    p.into_inner().map(expr).collect::<Result<_>>()?,
                    s,
                ));
            }
            _ => init = Some(Init::Expr(expr(p)?)),
        }
    }
    Ok(Declarator {
        name,
        array,
        init,
        attributes,
        span,
    })
}

fn init_list(pair: Pair<Rule>) -> Result<Init> {
    let span = span_of(&pair);
    let items = with_expansions(
        pair.into_inner(),
        |p| match p.as_rule() {
            Rule::init_list => init_list(p),
            Rule::designated_init => designated_init(p),
            _ => Ok(Init::Expr(expr(p)?)),
        },
        |i, dots| match i {
            Init::Expr(e) => Ok(Init::Expr(pack_expansion(e, dots))),
            _ => Err(Error::coded(
                Code::Unsupported,
                dots,
                "expanding a pack into nested braced lists is not supported yet",
            )),
        },
    )?;
    Ok(Init::List(items, span))
}

/// `.member = value` or `.member{..}` in a braced list.
fn designated_init(pair: Pair<Rule>) -> Result<Init> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let member = ident(inner.next().unwrap());
    let value = inner.next().unwrap();
    let value = match value.as_rule() {
        Rule::init_list => init_list(value)?,
        _ => Init::Expr(expr(value)?),
    };
    Ok(Init::Designated(member, Box::new(value), span))
}

/// `coherent(system)`, `coherent(device)` and `coherent` (device
/// coherence) on a type: refused. WebGPU keeps
/// no memory coherent while a dispatch runs, with the CPU or another device
/// (`system`) or between workgroups (`device`): writes reach others at the
/// end of the dispatch, or through atomics and barriers.
fn coherent(p: &Pair<Rule>) -> Error {
    let scope = p.clone().into_inner().nth(1).map(|s| s.as_str());
    let what = match scope {
        Some("system") => "with the CPU and other devices",
        _ => "between threadgroups",
    };
    let written = scope.map_or("coherent".to_string(), |s| format!("coherent({s})"));
    let port = match scope {
        Some("system") => "a port does not wait inside a kernel for the CPU or another queue (a spin on a flag never ends on WebGPU): it ends the dispatch where the flag would be set and orders the work on the host, with the next dispatch or submission (`queue.onSubmittedWorkDone()` for the CPU)",
        _ => "a port shares data between threadgroups through atomics, or splits the work into dispatches, each of which sees the writes of the ones before it",
    };
    // Without a scope, the keyword (the pair ends past its spaces).
    let span = match scope {
        Some(_) => span_of(p),
        None => p
            .clone()
            .into_inner()
            .next()
            .map_or(span_of(p), |k| span_of(&k)),
    };
    Error::coded(
        Code::NoWebGpuEquivalent,
        span,
        format!("`{written}` memory is not supported: WebGPU keeps no memory coherent {what} while a dispatch runs; a dispatch's writes are visible to the CPU and to later dispatches once it completes; {port}"),
    )
}
