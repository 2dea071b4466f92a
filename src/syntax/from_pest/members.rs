//! Structs with member functions, constructors and static constants.
//!
//! They are lowered to plain declarations here, so that the rest of the
//! pipeline only sees free functions and program-scope constants:
//! - a member function `m` of `S` becomes a free function named `S::m` whose
//!   first parameter is the object, called `this`: by value for a `const`
//!   member, else `thread S&`; a non-const member also gets a `device S&`
//!   twin named `S::m@device`, so that `buf[i].m()` writes the buffer;
//! - an address space after the parameters (`T& operator[](size_t) const
//!   device`, as Tint's `tint_array` writes) says where the object is: a
//!   `const` one (or a `constant` one) takes it by value with that space
//!   written on `this`, which lowering matches against the object's; a
//!   non-const `device` one is only the `S::m@device` function, a `thread`
//!   or `threadgroup` one only `S::m` with `this` a reference in that
//!   space; other spaces (`object_data`, ...) declare nothing callable;
//! - a constructor becomes `S S::S(params)`, which declares `S this`, runs the
//!   member initializers and the body, and returns `this` (those for objects
//!   outside `thread` memory, `S() threadgroup`, are left out);
//! - `static constant T N = v;` becomes the program-scope constant `S::N`.
//!
//! Names containing `::` cannot be written by a user, so they never clash.
//! Inside a body `this->x` becomes `this.x` and `*this` becomes `this`;
//! unqualified member names are resolved by lowering (via `this`).

use super::*;
use crate::diagnostics::Code;

/// The suffix of the `device S&` twin of a non-const member function.
pub const DEVICE_TWIN: &str = "@device";

/// The attribute marking a member function that returns a reference (its
/// return type is the referenced type); no user can write it.
pub const RETURNS_REFERENCE: &str = "@reference";

/// The attribute marking an `explicit` constructor, which implicit
/// conversions do not call ([class.conv.ctor]); no user can write it.
pub const EXPLICIT_CONSTRUCTOR: &str = "@explicit";

/// The name under which member `member` of struct `s` is declared.
pub fn member_name(s: &str, member: &str) -> String {
    format!("{s}::{member}")
}

/// A struct as built: its data members, the declarations its other members
/// become, and the arguments of a specialisation (`struct T<half> {..}`).
pub(super) type BuiltStruct = (StructDecl, Vec<Item>, Option<Vec<TemplateArg>>);

/// `struct S { ... };`: the struct and the declarations its members become.
pub(super) fn struct_decl(pair: Pair<Rule>) -> Result<BuiltStruct> {
    struct_named(pair, None).map(|(built, ..)| built)
}

/// A struct (`struct_decl`), a nested struct (`nested_struct`) of struct
/// `outer`, named `outer::Name`, or a struct declared in a function
/// (`local_struct`, perhaps unnamed: [`UNNAMED_LOCAL_TYPE`]); also the data
/// members a nested struct's declarators declare (`struct P { .. } p;`)
/// and the objects a local struct's declare (`struct { .. } v;`).
pub(super) fn struct_named(
    pair: Pair<Rule>,
    outer: Option<&Ident>,
) -> Result<(BuiltStruct, Vec<Member>, Vec<Declarator>)> {
    let span = span_of(&pair);
    // A local struct's qualifiers are its objects' (`const struct {..} k`).
    let mut inner = pair
        .into_inner()
        .skip_while(|p| matches!(p.as_rule(), Rule::cv | Rule::address_space))
        .peekable();
    let keyword_pair = inner.next().unwrap(); // struct_kw
    let keyword = keyword_pair.as_str();
    let is_union = keyword == "union";
    // Members of a `class` are private until an access specifier.
    let mut public = keyword != "class";
    let mut pod = super::struct_scope::PodFacts::default();
    let mut layout_before = Vec::new();
    let mut name = loop {
        match inner.peek().map(|p| p.as_rule()) {
            Some(Rule::gnu_attribute) => {
                layout_before.extend(super::gnu::attribute(inner.next().unwrap())?)
            }
            Some(Rule::alignas_spec) => {
                layout_before.push(super::struct_scope::alignas(inner.next().unwrap())?)
            }
            Some(Rule::ident) => break ident(inner.next().unwrap()),
            _ => {
                break Ident {
                    name: UNNAMED_LOCAL_TYPE.to_string(),
                    span: span_of(&keyword_pair),
                }
            }
        }
    };
    if let Some(o) = outer {
        name.name = member_name(&o.name, &name.name);
    }
    let mut declared = Vec::new();
    let mut objects = Vec::new();
    let mut members = Vec::new();
    let mut anonymous = Vec::new();
    let mut items = Vec::new();
    let mut specialization = None;
    let mut layout = Vec::new();
    for p in inner {
        match p.as_rule() {
            Rule::gnu_attribute => layout.extend(super::gnu::attribute(p)?),
            Rule::template_args => specialization = Some(template_args(p)?),
            Rule::base_clause => {
                members.extend(super::struct_scope::base_classes(p)?);
                pod.has_base = true;
            }
            Rule::nested_struct => {
                let ((decl, nested, _), data, _) = struct_named(p, Some(&name))?;
                members.extend(data);
                items.push(Item::Struct(decl));
                items.extend(nested);
            }
            Rule::nested_enum => items.push(Item::Enum(nested_enum(&name, p)?)),
            Rule::member_declarator => declared.push(p),
            Rule::init_declarator => objects.push(super::declarator(p)?),
            Rule::using_alias | Rule::typedef_decl => items.push(member_alias(&name, p)?),
            Rule::member_decl => {
                pod.non_public_data |= !public;
                members.extend(member_decl(p)?)
            }
            Rule::static_member => items.push(static_member(&name, p)?),
            Rule::member_fn | Rule::ctor_def | Rule::conversion_fn => {
                pod.note_member_function(&p);
                items.extend(member_functions(&name, p)?)
            }
            Rule::member_template => {
                p.clone()
                    .into_inner()
                    .for_each(|x| pod.note_member_function(&x));
                items.extend(member_template(&name, p)?)
            }
            // Checked where the struct (or a template's instance) is declared.
            Rule::static_assert_decl => {
                items.push(Item::StaticAssert(super::static_assert_decl(p)?))
            }
            Rule::access_spec => public = p.as_str().starts_with("public"),
            Rule::empty_decl => {}
            Rule::anonymous_member => {
                members.push(super::anonymous_member(p, &mut anonymous)?);
            }
            r => unreachable!("struct part {r:?}"),
        }
    }
    let statics = super::out_of_line::declared_statics(&name.name);
    qualify_static_calls(&mut items, &name.name, &statics);
    let mut decl = StructDecl {
        name,
        pod_candidate: pod.holds(&members),
        members,
        span,
        instance_of: None,
        layout: layout_before.into_iter().chain(layout).collect(),
        is_union,
        anonymous,
    };
    super::struct_scope::qualify(&mut decl, &mut items);
    // `struct P { .. } p, q;`: members of the nested struct's type.
    let data = declared
        .into_iter()
        .map(|d| super::struct_scope::member_of_type(&decl, d))
        .collect::<Result<Vec<_>>>()?;
    Ok(((decl, items, specialization), data, objects))
}

/// `enum class mode { .. };` in struct `s`: the enum `s::mode`. An
/// unscoped one's enumerators are members of `s` too ([class.mem]), so
/// they are named `s::A`; a scoped one's are `s::mode::A`.
fn nested_enum(s: &Ident, p: Pair<Rule>) -> Result<crate::syntax::ast::EnumDecl> {
    let mut e = super::enum_decl(p)?;
    if let Some(n) = e.name.as_mut() {
        n.name = member_name(&s.name, &n.name);
    }
    if !e.scoped {
        for (n, _) in &mut e.enumerators {
            n.name = member_name(&s.name, &n.name);
        }
    }
    Ok(e)
}

/// The declarations a member function, constructor or conversion function
/// of `s` becomes.
fn member_functions(s: &Ident, p: Pair<Rule>) -> Result<Vec<Item>> {
    // `= default`: the implicit one, which needs no declaration here.
    if p.clone()
        .into_inner()
        .any(|x| x.as_rule() == Rule::defaulted)
    {
        return Ok(Vec::new());
    }
    Ok(match p.as_rule() {
        Rule::member_fn => member_fn(s, p)?,
        // `S(float x);`: defined after the struct (`S::S(float x) {..}`).
        Rule::ctor_def
            if p.clone()
                .into_inner()
                .any(|x| x.as_rule() == Rule::fn_declaration_end) =>
        {
            Vec::new()
        }
        // `S() threadgroup : ..`: a constructor of objects in another
        // address space than `thread`; values are built in `thread`
        // memory here, so only those constructors are kept.
        Rule::ctor_def
            if p.clone().into_inner().any(|x| {
                x.as_rule() == Rule::address_space
                    && super::address_space(&x) != AddressSpace::Thread
            }) =>
        {
            Vec::new()
        }
        Rule::ctor_def => vec![Item::Function(constructor(s, p)?)],
        // Implicit conversions never call user functions here (a
        // conversion one would make is refused where it is needed); an
        // explicit call, `x.operator float()`, calls it as a member.
        _ => conversion_fn(s, p)?,
    })
}

/// `operator float() const { .. }`: the member function `operator float`
/// (named as [`conversion_name`] spells it), declared or defined.
fn conversion_fn(s: &Ident, pair: Pair<Rule>) -> Result<Vec<Item>> {
    let span = span_of(&pair);
    let (mut ret, mut body, mut is_const, mut this_space) = (None, None, false, None);
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::type_spec => ret = Some(p),
            Rule::block => body = Some(block(p)?),
            Rule::const_qual => is_const = true,
            Rule::address_space => this_space = Some((super::address_space(&p), span_of(&p))),
            Rule::gnu_attribute => {
                super::gnu::attribute(p)?;
            }
            _ => {}
        }
    }
    let ret = ret.expect("a conversion function names its type");
    let name = conversion_name(&ret);
    let parts = MemberParts {
        ret: type_spec(ret)?,
        name,
        params: Vec::new(),
        body,
        is_const,
        this_space,
        is_static: false,
        owner: None,
        span,
    };
    if parts.body.is_none() {
        return Ok(Vec::new());
    }
    member_items(s, parts)
}

/// `operator float16_t`: the name of the conversion function to the type
/// `ty` (a `type_spec` pair), its words separated by one space, as
/// definitions and calls (`conversion_id`) both spell it.
pub(super) fn conversion_name(ty: &Pair<Rule>) -> Ident {
    let words: Vec<&str> = ty.as_str().split_whitespace().collect();
    Ident {
        name: format!("operator {}", words.join(" ")),
        span: span_of(ty),
    }
}

/// `template <..> member`: each function the member becomes, as a function
/// template with the member template's parameters.
fn member_template(s: &Ident, pair: Pair<Rule>) -> Result<Vec<Item>> {
    let span = span_of(&pair);
    let mut params = Vec::new();
    let mut items = Vec::new();
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::template_kw => {}
            Rule::template_param => params.push(super::template_param(p)?),
            // `template <typename U> using rebind = S<U>;`: the alias
            // template `S::rebind` (`alias_templates`).
            Rule::using_alias => {
                let Item::Alias(alias) = member_alias(s, p)? else {
                    unreachable!("a member alias")
                };
                return Ok(vec![Item::Template(TemplateDecl {
                    params,
                    item: Templated::Alias(alias),
                    specialization: None,
                    span,
                })]);
            }
            _ => items = member_functions(s, p)?,
        }
    }
    Ok(items
        .into_iter()
        .map(|item| match item {
            Item::Function(f) => Item::Template(TemplateDecl {
                params: params.clone(),
                item: Templated::Function(f),
                specialization: None,
                span,
            }),
            other => other,
        })
        .collect())
}

/// `using type = T;` or `typedef T type;` in a struct: the alias `S::type`.
fn member_alias(s: &Ident, pair: Pair<Rule>) -> Result<Item> {
    let span = span_of(&pair);
    if pair.as_rule() == Rule::typedef_decl {
        return Ok(Item::Alias(super::typedef_decl(pair, Some(s))?));
    }
    let mut inner = pair.into_inner();
    let name = ident(inner.next().unwrap());
    let ty = type_spec(inner.next().unwrap())?;
    let array = inner.map(super::array_suffix).collect::<Result<Vec<_>>>()?;
    Ok(Item::Alias(Alias {
        name: Ident {
            name: member_name(&s.name, &name.name),
            span: name.span,
        },
        ty,
        array,
        layout: Vec::new(),
        span,
    }))
}

/// `static constant int N = 4;` → the program constant `S::N`.
fn static_member(s: &Ident, pair: Pair<Rule>) -> Result<Item> {
    let mut decl = var_decl(pair)?;
    // `static constexpr int N = 4;` is a program-scope constant: Metal puts
    // it in the `constant` address space without being told.
    if decl.ty.space.is_none() && decl.ty.is_constexpr {
        decl.ty.space = Some((AddressSpace::Constant, decl.ty.name_span));
    }
    for d in &mut decl.declarators {
        d.name.name = member_name(&s.name, &d.name.name);
    }
    Ok(Item::Global(decl))
}

fn unsupported(span: Span, message: &str) -> Error {
    Error::coded(Code::Unsupported, span, message.to_string())
}

/// A member function as written, in or out of its struct.
pub(super) struct MemberParts {
    /// Return type.
    pub ret: TypeSpec,
    /// `len`, `operator[]`.
    pub name: Ident,
    /// Parameters, without the object.
    pub params: Vec<Param>,
    /// `None` for a declaration defined out of the struct.
    pub body: Option<Block>,
    /// `const` after the parameters.
    pub is_const: bool,
    /// The address space after the parameters (`T& operator[](size_t)
    /// const device`): where the object is.
    pub this_space: Option<(AddressSpace, Span)>,
    /// `static`: no object.
    pub is_static: bool,
    /// `S` of an out-of-struct definition `float S::len() const { .. }`.
    pub owner: Option<Ident>,
    /// The whole function.
    pub span: Span,
}

/// The parts of a `member_fn` or `member_def` pair.
pub(super) fn member_parts(pair: Pair<Rule>) -> Result<MemberParts> {
    let span = span_of(&pair);
    let (mut ret, mut name, mut params, mut body) = (None, None, vec![], None);
    let (mut is_const, mut is_static, mut owner) = (false, false, None);
    let mut this_space = None;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::virtual_kw | Rule::pure_spec => {
                return Err(unsupported(
                    span_of(&p),
                    "virtual functions are not supported: Metal has no virtual dispatch",
                ))
            }
            Rule::fn_specifier if p.as_str() == "static" => is_static = true,
            Rule::fn_specifier | Rule::fn_declaration_end => {}
            Rule::gnu_attribute => {
                super::gnu::attribute(p)?;
            }
            Rule::member_owner | Rule::template_owner => {
                owner = Some(ident(p.into_inner().next().unwrap()))
            }
            Rule::type_spec => ret = Some(super::return_type_spec(p)?),
            Rule::ident | Rule::operator_name => name = Some(fn_name(p)),
            Rule::param_list => {
                for param in p.into_inner().filter(|x| x.as_rule() == Rule::param) {
                    params.push(param_of(param)?);
                }
            }
            Rule::const_qual => is_const = true,
            Rule::address_space => this_space = Some((super::address_space(&p), span_of(&p))),
            Rule::block => body = Some(block(p)?),
            r => unreachable!("member function part {r:?}"),
        }
    }
    let name = name.unwrap();
    if is_static && is_const {
        return Err(unsupported(
            name.span,
            "a static member function cannot be `const`: it has no object",
        ));
    }
    if let (true, Some((_, at))) = (is_static, this_space) {
        return Err(unsupported(
            at,
            "a static member function cannot have an address space: it has no object",
        ));
    }
    Ok(MemberParts {
        ret: ret.unwrap(),
        name,
        params,
        body,
        is_const,
        this_space,
        is_static,
        owner,
        span,
    })
}

/// A member function, as one or two free functions; a declaration whose
/// definition comes after the struct is remembered for it.
fn member_fn(s: &Ident, pair: Pair<Rule>) -> Result<Vec<Item>> {
    let parts = member_parts(pair)?;
    super::out_of_line::declare(s, &parts);
    if parts.body.is_none() {
        return Ok(Vec::new());
    }
    member_items(s, parts)
}

/// The free functions member function `parts` of `s` becomes.
pub(super) fn member_items(s: &Ident, parts: MemberParts) -> Result<Vec<Item>> {
    let MemberParts {
        mut ret,
        name,
        params,
        body,
        is_const,
        this_space,
        is_static,
        span,
        ..
    } = parts;
    // `object_data`, `threadgroup_imageblock`, `ray_data`: no object of a
    // supported address space can call it.
    if matches!(this_space, Some((AddressSpace::Other, _))) {
        return Ok(Vec::new());
    }
    let mut body = body.expect("a definition");
    // `S& operator+=(..) { ...; return *this; }`: the result is the object
    // itself, which the caller already has; the helper returns nothing.
    // Other references (`float& operator[](int)`) are declared returning
    // the referenced type, marked: lowering binds the place their body
    // returns (`lower::cxx::reference_calls`).
    let returns_self = ret.ptr_ops.contains(&PtrOp::Reference) && written_as(&ret, s);
    let mut attributes = Vec::new();
    if returns_self {
        ret = void_type(ret.span);
    } else if ret.ptr_ops.contains(&PtrOp::Reference) {
        ret.ptr_ops.retain(|op| *op != PtrOp::Reference);
        ret.space = None;
        attributes.push(Attribute {
            name: RETURNS_REFERENCE.to_string(),
            args: Vec::new(),
            span: ret.span,
        });
    }
    rewrite_block(&mut body, &mut |e| this_expr(e));
    if returns_self {
        drop_self_returns(&mut body);
    }
    let f = FunctionDecl {
        stage: None,
        attributes,
        ret,
        name: Ident {
            name: member_name(&s.name, &name.name),
            span: name.span,
        },
        params,
        body: Some(body),
        span,
    };
    if is_static {
        return Ok(vec![Item::Function(f)]);
    }
    match this_space {
        // `const device`, `const thread`, ...: like any const member (the
        // object by value), with the space written on `this`, which
        // lowering matches against where the object is. A `constant`
        // object cannot change, so a non-const `constant` member is one too.
        Some((space, at)) if is_const || space == AddressSpace::Constant => {
            let mut this = this_type(s, None);
            this.space = Some((space, at));
            return Ok(vec![Item::Function(with_this(f, this))]);
        }
        // `device`: only the device version (the twin of an unqualified one).
        Some((AddressSpace::Device, _)) => {
            let mut device = with_this(f, this_type(s, Some(AddressSpace::Device)));
            device.name.name.push_str(DEVICE_TWIN);
            return Ok(vec![Item::Function(device)]);
        }
        // `thread`, `threadgroup`: the object by reference in that space.
        Some((space, _)) => {
            return Ok(vec![Item::Function(with_this(
                f,
                this_type(s, Some(space)),
            ))])
        }
        None => {}
    }
    if is_const {
        return Ok(vec![Item::Function(with_this(f, this_type(s, None)))]);
    }
    let mut device = with_this(f.clone(), this_type(s, Some(AddressSpace::Device)));
    device.name.name.push_str(DEVICE_TWIN);
    Ok(vec![
        Item::Function(with_this(f, this_type(s, Some(AddressSpace::Thread)))),
        Item::Function(device),
    ])
}

/// A function name: an identifier or `operator+` (without blanks).
pub(super) fn fn_name(p: Pair<Rule>) -> Ident {
    let mut id = ident(p);
    id.name.retain(|c| !c.is_whitespace());
    id
}

/// `S(params) : a(x), b{y} { body }` → `S S::S(params)`.
pub(super) fn constructor(s: &Ident, pair: Pair<Rule>) -> Result<FunctionDecl> {
    let span = span_of(&pair);
    let explicit = pair
        .clone()
        .into_inner()
        .any(|p| p.as_rule() == Rule::ctor_specifier && p.as_str() == "explicit");
    // `METAL_FUNC S(..)`: `inline __attribute__((always_inline))` first.
    let mut inner = pair
        .into_inner()
        .skip_while(|p| matches!(p.as_rule(), Rule::ctor_specifier | Rule::gnu_attribute));
    let name = ident(inner.next().unwrap());
    if Some(name.name.as_str()) != s.name.rsplit("::").next() {
        return Err(unsupported(
            name.span,
            &format!(
                "expected a member declaration; a constructor of `{}` must be named `{}`",
                s.name, s.name
            ),
        ));
    }
    let this = || name_expr("this", name.span);
    let mut stmts = vec![Stmt {
        kind: StmtKind::Decl(VarDecl {
            ty: this_type(s, None),
            declarators: vec![Declarator {
                name: Ident {
                    name: "this".into(),
                    span: name.span,
                },
                array: Vec::new(),
                init: None,
                attributes: Vec::new(),
                span: name.span,
            }],
            span: name.span,
        }),
        span: name.span,
    }];
    let mut params = Vec::new();
    let mut body = None;
    for p in inner {
        match p.as_rule() {
            Rule::param_list => {
                for param in p.into_inner().filter(|x| x.as_rule() == Rule::param) {
                    params.push(param_of(param)?);
                }
            }
            Rule::ctor_inits => {
                for m in p.into_inner() {
                    // `S(const device void* p) : S(cast(p)) {}`: a
                    // delegating constructor ([class.base.init]/6) builds
                    // the object with the other one, then runs its body.
                    if let Some(init) = delegation(&m, &name)? {
                        let StmtKind::Decl(this_decl) = &mut stmts[0].kind else {
                            unreachable!("the constructor starts by declaring `this`")
                        };
                        this_decl.declarators[0].init = Some(init);
                        continue;
                    }
                    stmts.extend(member_init(m, &this)?);
                }
            }
            Rule::block => body = Some(block(p)?),
            // `thread` (the others are left out by `struct_decl`).
            Rule::gnu_attribute | Rule::address_space => {
                super::gnu::among([p])?;
            }
            r => unreachable!("constructor part {r:?}"),
        }
    }
    let mut body = body.unwrap();
    rewrite_block(&mut body, &mut |e| this_expr(e));
    // `return;` in a constructor returns the object being built.
    rewrite_returns(&mut body, &mut |r| {
        if r.is_none() {
            *r = Some(this());
        }
    });
    stmts.append(&mut body.stmts);
    stmts.push(Stmt {
        kind: StmtKind::Return(Some(this())),
        span: body.span,
    });
    let attributes = match explicit {
        true => vec![Attribute {
            name: EXPLICIT_CONSTRUCTOR.to_string(),
            args: Vec::new(),
            span: name.span,
        }],
        false => Vec::new(),
    };
    Ok(FunctionDecl {
        stage: None,
        attributes,
        ret: this_type(s, None),
        name: Ident {
            name: member_name(&s.name, &s.name),
            span: name.span,
        },
        params,
        body: Some(Block {
            stmts,
            span: body.span,
        }),
        span,
    })
}

/// The initializer of `this` when `pair`, an entry of constructor `ctor`'s
/// initializer list, names the constructor's own class (`S(a, b)` or
/// `S{a, b}`): a delegation to another constructor of it.
fn delegation(pair: &Pair<Rule>, ctor: &Ident) -> Result<Option<Init>> {
    let span = span_of(pair);
    let mut inner = pair.clone().into_inner();
    let class = ident(inner.next().unwrap());
    if class.name != ctor.name {
        return Ok(None);
    }
    let rest: Vec<Pair<Rule>> = inner.collect();
    Ok(Some(match rest.as_slice() {
        [p] if p.as_rule() == Rule::init_list => init_list(p.clone())?,
        args => Init::Paren(
            args.iter()
                .map(|a| expr(a.clone()))
                .collect::<Result<_>>()?,
            span,
        ),
    }))
}

/// `a(x)` or `a{x, y}` in a constructor's initializer list: `this.a = ...;`.
fn member_init(pair: Pair<Rule>, this: &dyn Fn() -> Expr) -> Result<Option<Stmt>> {
    let span = span_of(&pair);
    let mut inner = pair.into_inner();
    let member = ident(inner.next().unwrap());
    let rest: Vec<Pair<Rule>> = inner.collect();
    let value = match rest.as_slice() {
        [] => return Ok(None),
        [p] if p.as_rule() == Rule::init_list => {
            let Init::List(items, s) = init_list(p.clone())? else {
                unreachable!()
            };
            Expr {
                kind: ExprKind::InitList(items),
                span: s,
            }
        }
        [p] => expr(p.clone())?,
        _ => {
            return Err(unsupported(
                span,
                "member initializers with several arguments are not supported yet; use braces",
            ))
        }
    };
    let target = Expr {
        kind: ExprKind::Member(Box::new(this()), member, false),
        span,
    };
    Ok(Some(Stmt {
        kind: StmtKind::Expr(Expr {
            kind: ExprKind::Assign(None, Box::new(target), Box::new(value)),
            span,
        }),
        span,
    }))
}

fn name_expr(name: &str, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Name(vec![name.to_string()]),
        span,
    }
}

/// Whether `ty` names struct `s` as its members write it: `S`, or for a
/// nested struct `Outer::Inner`, `Inner` too.
fn written_as(ty: &TypeSpec, s: &Ident) -> bool {
    ty.name() == s.name || Some(ty.name().as_str()) == s.name.rsplit("::").next()
}

fn void_type(span: Span) -> TypeSpec {
    TypeSpec {
        is_const: false,
        is_constexpr: false,
        space: None,
        path: vec!["void".into()],
        args: Vec::new(),
        ptr_ops: Vec::new(),
        name_span: span,
        span,
    }
}

/// `S` (by value) or `space S&`.
fn this_type(s: &Ident, space: Option<AddressSpace>) -> TypeSpec {
    TypeSpec {
        is_const: false,
        is_constexpr: false,
        space: space.map(|a| (a, s.span)),
        // `Outer::Inner`, a nested struct, is a qualified name.
        path: s.name.split("::").map(str::to_string).collect(),
        args: Vec::new(),
        ptr_ops: if space.is_some() {
            vec![PtrOp::Reference]
        } else {
            Vec::new()
        },
        name_span: s.span,
        span: s.span,
    }
}

/// Prepends the object parameter `this`.
fn with_this(mut f: FunctionDecl, ty: TypeSpec) -> FunctionDecl {
    let span = f.name.span;
    f.params.insert(
        0,
        Param {
            ty,
            name: Some(Ident {
                name: "this".into(),
                span,
            }),
            array: Vec::new(),
            attributes: Vec::new(),
            default: None,
            pack: false,
            span,
        },
    );
    f
}

fn is_this(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Name(p) if p.len() == 1 && p[0] == "this")
}

/// `this->x` → `this.x`, `*this` → `this` (`this` is the object itself).
fn this_expr(e: &mut Expr) {
    match &mut e.kind {
        ExprKind::Member(base, _, arrow) if is_this(base) => *arrow = false,
        ExprKind::Unary(UnaryOp::Deref, inner) if is_this(inner) => {
            *e = name_expr("this", e.span);
        }
        _ => {}
    }
}

/// `return this;` (from `return *this;`) → `return;`.
fn drop_self_returns(b: &mut Block) {
    rewrite_returns(b, &mut |r| {
        if r.as_ref().is_some_and(is_this) {
            *r = None;
        }
    });
}

/// Applies `f` to every expression in `b`, children first.
fn rewrite_block(b: &mut Block, f: &mut dyn FnMut(&mut Expr)) {
    for s in &mut b.stmts {
        rewrite_stmt(s, f, &mut |_| {});
    }
}

/// Applies `f` to every `return` statement's value in `b`.
fn rewrite_returns(b: &mut Block, f: &mut dyn FnMut(&mut Option<Expr>)) {
    for s in &mut b.stmts {
        rewrite_stmt(s, &mut |_| {}, f);
    }
}

fn rewrite_stmt(s: &mut Stmt, f: &mut dyn FnMut(&mut Expr), r: &mut dyn FnMut(&mut Option<Expr>)) {
    match &mut s.kind {
        StmtKind::Block(b) => b.stmts.iter_mut().for_each(|s| rewrite_stmt(s, f, r)),
        StmtKind::Decl(d) => d.declarators.iter_mut().for_each(|d| {
            d.init.iter_mut().for_each(|i| rewrite_init(i, f));
        }),
        StmtKind::Expr(e) => rewrite_expr(e, f),
        StmtKind::If {
            cond,
            then,
            otherwise,
            ..
        } => {
            rewrite_expr(cond, f);
            rewrite_stmt(then, f, r);
            otherwise.iter_mut().for_each(|o| rewrite_stmt(o, f, r));
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
        } => {
            init.iter_mut().for_each(|i| rewrite_stmt(i, f, r));
            cond.iter_mut().for_each(|c| rewrite_expr(c, f));
            step.iter_mut().for_each(|c| rewrite_expr(c, f));
            rewrite_stmt(body, f, r);
        }
        StmtKind::RangeFor { range, body, .. } => {
            rewrite_expr(range, f);
            rewrite_stmt(body, f, r);
        }
        StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
            rewrite_expr(cond, f);
            rewrite_stmt(body, f, r);
        }
        StmtKind::Switch { selector, items } => {
            rewrite_expr(selector, f);
            for item in items {
                if let SwitchItem::Stmt(s) = item {
                    rewrite_stmt(s, f, r);
                }
            }
        }
        StmtKind::Return(value) => {
            value.iter_mut().for_each(|v| rewrite_expr(v, f));
            r(value);
        }
        StmtKind::LocalType(t) => {
            for d in t.objects.iter_mut().flat_map(|v| &mut v.declarators) {
                d.init.iter_mut().for_each(|i| rewrite_init(i, f));
            }
        }
        StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Empty
        | StmtKind::StaticAssert(_)
        | StmtKind::Alias(_) => {}
    }
}

fn rewrite_init(i: &mut Init, f: &mut dyn FnMut(&mut Expr)) {
    match i {
        Init::Expr(e) => rewrite_expr(e, f),
        Init::List(items, _) => items.iter_mut().for_each(|i| rewrite_init(i, f)),
        Init::Paren(args, _) => args.iter_mut().for_each(|e| rewrite_expr(e, f)),
        Init::Designated(_, value, _) => rewrite_init(value, f),
    }
}

/// Calls `f` on every subexpression of `e`, innermost first, `e` last.
pub(crate) fn rewrite_expr(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    match &mut e.kind {
        ExprKind::Binary(_, a, b) | ExprKind::Assign(_, a, b) | ExprKind::Index(a, b) => {
            rewrite_expr(a, f);
            rewrite_expr(b, f);
        }
        ExprKind::Unary(_, a)
        | ExprKind::PostIncDec(_, a)
        | ExprKind::Member(a, _, _)
        | ExprKind::MemberTemplate(a, _)
        | ExprKind::Cast(_, _, a) => rewrite_expr(a, f),
        ExprKind::Ternary(c, a, b) => {
            rewrite_expr(c, f);
            rewrite_expr(a, f);
            rewrite_expr(b, f);
        }
        ExprKind::Call(callee, args) => {
            rewrite_expr(callee, f);
            args.iter_mut().for_each(|a| rewrite_expr(a, f));
        }
        ExprKind::InitList(items) | ExprKind::BraceConstruct(_, items) => {
            items.iter_mut().for_each(|i| rewrite_init(i, f))
        }
        ExprKind::Comma(items) => items.iter_mut().for_each(|a| rewrite_expr(a, f)),
        _ => {}
    }
    f(e);
}

fn takes_object(f: &FunctionDecl) -> bool {
    f.params
        .first()
        .and_then(|p| p.name.as_ref())
        .is_some_and(|n| n.name == "this")
}

/// In the static member functions among `items` (they have no object to
/// find members through), calls `m(..)` of static members `statics` of
/// `s` become `s::m(..)`.
pub(super) fn qualify_static_calls(items: &mut [Item], s: &str, statics: &[String]) {
    let ctor = member_name(s, s);
    for item in items {
        let Item::Function(f) = item else { continue };
        if takes_object(f) || f.name.name == ctor {
            continue;
        }
        let Some(body) = &mut f.body else { continue };
        rewrite_block(body, &mut |e| {
            if let ExprKind::Call(callee, _) = &mut e.kind {
                if let ExprKind::Name(path) = &mut callee.kind {
                    if path.len() == 1 && statics.contains(&path[0]) {
                        path.insert(0, s.to_string());
                    }
                }
            }
        });
    }
}
