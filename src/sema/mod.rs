//! Semantic analysis: the program-scope symbol table (structs, aliases,
//! functions, constants), type resolution, C++ conversions and constant
//! evaluation. Lowering asks this module every language question.

pub mod aggregate_init;
pub mod bit_fields;
pub mod callgraph;
pub mod consteval;
pub mod constexpr_body;
pub mod constexpr_fn;
pub mod conversions;
mod function_arguments;
pub mod function_constant_values;
pub mod function_constants;
pub mod gnu_layout;
mod gradients;
pub mod inheritance;
mod later_structs;
mod numeric_limits;
mod pack_lengths;
pub mod pointer_references;
mod raytracing;
pub mod redefinition;
pub mod sizeof;
pub mod static_assert;
pub mod struct_templates;
pub mod subst;
mod suggestions;
mod template_deduction;
pub mod templates;
mod tessellation;
mod texture_types;
pub mod type_traits;
mod unevaluated;
mod unions;
pub mod unported_features;
pub mod variable_templates;

use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{self, Item, TemplateArg};
use crate::types::{self, AddressSpace, MemberDef, Pointer, StructDef, StructId, Structs, Type};
use consteval::ConstValue;
use std::collections::HashMap;

/// A semantic error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// Where.
    pub span: Span,
    /// Message.
    pub message: String,
    /// Extra explanations.
    pub notes: Vec<String>,
    /// The stable code, chosen where the error is made (docs/DIAGNOSTICS.md).
    pub code: crate::diagnostics::Code,
    /// A "did you mean" note still to be found ([`Program::complete_hints`]):
    /// analysis makes and drops thousands of these errors while struct
    /// templates are incomplete, and the search costs a scan of every name.
    pub hint: Option<Hint>,
}

/// A note an error is to get once it is known to be reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hint {
    /// The declared or built-in type name closest to this unknown one.
    TypeName(String),
}

impl Error {
    /// An error (or, in lowering's warning list, a warning) of kind `code`
    /// at `span`: every diagnostic names its stable code where it is made
    /// (docs/DIAGNOSTICS.md).
    pub fn coded(code: crate::diagnostics::Code, span: Span, message: impl Into<String>) -> Self {
        Error {
            span,
            message: message.into(),
            notes: Vec::new(),
            code,
            hint: None,
        }
    }

    /// An `unknown type name` error at `span`, with a "did you mean" note
    /// found if it is reported.
    pub fn unknown_type(span: Span, name: &str) -> Self {
        Error {
            hint: Some(Hint::TypeName(name.to_string())),
            ..Error::coded(
                Code::UnknownType,
                span,
                format!("unknown type name `{name}`"),
            )
        }
    }

    /// Replaces the stable code.
    pub fn with_code(mut self, code: crate::diagnostics::Code) -> Self {
        self.code = code;
        self
    }

    /// Adds notes (an `Option` adds one or none: "did you mean" hints).
    pub fn with_notes(mut self, notes: impl IntoIterator<Item = String>) -> Self {
        self.notes.extend(notes);
        self
    }

    /// Adds a note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Locates an error made without a place (`Span::default()`) at
    /// `span`, the construct being checked when it was found: every
    /// diagnostic points somewhere.
    pub fn or_at(mut self, span: Span) -> Self {
        if self.span == Span::default() {
            self.span = span;
        }
        self
    }
}

/// Where a program-scope item is.
fn item_span(item: &Item) -> Span {
    match item {
        Item::UsingNamespace(s) => *s,
        Item::Alias(a) => a.span,
        Item::Struct(s) => s.span,
        Item::Function(f) => f.span,
        Item::Global(g) => g.span,
        Item::Enum(e) => e.span,
        Item::Template(t) => t.span,
        Item::Instantiation(i) => i.span,
        Item::StaticAssert(a) => a.span,
    }
}

/// Result of a semantic check.
pub type Result<T> = std::result::Result<T, Error>;

/// A program-scope constant with its evaluated value.
#[derive(Clone, Debug)]
pub struct GlobalConstant {
    /// Name.
    pub name: String,
    /// Declared type.
    pub ty: Type,
    /// Value.
    pub value: ConstValue,
    /// Declaration.
    pub span: Span,
}

/// What a name at program scope means.
#[derive(Clone, Debug)]
pub enum Symbol {
    /// A type (struct or alias).
    Type(Type),
    /// Functions of this name (overloads), indices into [`Program::functions`].
    Functions(Vec<usize>),
    /// A constant, index into [`Program::constants`].
    Constant(usize),
    /// A `constexpr sampler`, index into [`Program::samplers`].
    Sampler(usize),
    /// A function constant, index into [`Program::function_constants`].
    FunctionConstant(usize),
    /// A constant computed from function constants, index into
    /// [`Program::spec_constants`].
    SpecConstant(usize),
}

/// A `constexpr sampler name(args...)` declaration (MSL §2.10).
#[derive(Clone, Debug)]
pub struct SamplerDecl {
    /// Name.
    pub name: String,
    /// The constructor arguments (`address::repeat`, `lod_clamp(0, 4)`, ...).
    pub args: Vec<ast::Expr>,
    /// The declaration.
    pub span: Span,
}

/// The program-scope view of a translation unit.
#[derive(Debug, Default)]
pub struct Program<'a> {
    /// Every struct.
    pub structs: Structs,
    /// Every function definition (declarations without bodies are skipped).
    pub functions: Vec<&'a ast::FunctionDecl>,
    /// Program-scope constants.
    pub constants: Vec<GlobalConstant>,
    /// Program-scope `constexpr sampler`s.
    pub samplers: Vec<SamplerDecl>,
    /// `[[function_constant(n)]]` declarations, in source order.
    pub function_constants: Vec<function_constants::FunctionConstant>,
    /// Program-scope constants computed from function constants.
    pub spec_constants: Vec<function_constants::SpecConstant<'a>>,
    /// Function constant values given at translation
    /// (`Options::function_constants`).
    pub given_constants: function_constant_values::FunctionConstantValues,
    /// The function constants (indices into
    /// [`Program::function_constants`]) whose values a translation-time
    /// evaluation needed and did not have, since lowering last took them:
    /// what a function left out of the WGSL waits for (W0415).
    pub needed_constants: std::cell::RefCell<std::collections::BTreeSet<usize>>,
    /// Names.
    pub symbols: HashMap<String, Symbol>,
    /// Function templates with a body, in source order.
    pub templates: Vec<&'a ast::TemplateDecl>,
    /// Function template names → indices into [`Program::templates`].
    pub template_names: HashMap<String, Vec<usize>>,
    /// Explicitly instantiated kernel templates: the instantiation's span
    /// (its key) and the kernel, named by its `host_name`.
    pub instantiations: Vec<(Span, std::rc::Rc<ast::FunctionDecl>)>,
    /// The host names of [`Program::instantiations`].
    pub instantiated_names: std::collections::HashSet<String>,
    /// [`Program::instantiations`] by span.
    pub instantiation_index: HashMap<Span, usize>,
    /// Kernel instances kept from an earlier analysis of the same
    /// translation unit (see [`templates::InstanceCache`]).
    pub instance_cache: std::rc::Rc<templates::InstanceCache>,
    /// Struct templates by name: the primary template and its
    /// specialisations, in source order.
    pub struct_templates: HashMap<String, Vec<&'a ast::TemplateDecl>>,
    /// Variable templates by name: the primary template and its
    /// specialisations, in source order (see [`variable_templates`]).
    pub var_templates: HashMap<String, Vec<&'a ast::TemplateDecl>>,
    /// Member alias templates of plain structs by full name
    /// (`BaseNAXFrag::dtype_frag_t`), for uses the parser could not expand:
    /// through a member alias of a template instance
    /// (`typename NAXFrag_t::template dtype_frag_t<T>`).
    pub member_alias_templates: HashMap<String, &'a ast::TemplateDecl>,
    /// Explicit specialisations of function templates by name (`template <>
    /// bool f<bool, float>(float x)`), see [`templates`].
    pub fn_specializations: HashMap<String, Vec<&'a ast::TemplateDecl>>,
    /// How deep the evaluation of variable template instances nests.
    pub var_template_depth: std::cell::Cell<usize>,
    /// Struct template instances used but not declared yet (see
    /// [`struct_templates`]): the driver inserts them and analyses again.
    pub pending: std::cell::RefCell<struct_templates::PendingInstances>,
    /// The program-scope item being declared; `None` while lowering.
    pub current_item: std::cell::Cell<Option<usize>>,
    /// Instances without data members (traits, function objects).
    pub empty_instances: std::collections::HashSet<String>,
    /// Struct template instances: the template and its arguments as written.
    pub instance_origins: HashMap<types::StructId, (String, Vec<TemplateArg>)>,
    /// Every struct template instance in the translation unit, declared or
    /// not (its declaration may have failed, or wait for another instance).
    pub seen_instances: std::collections::HashSet<String>,
    /// Plain aliases of function pointer types (`using F = R (*)(..);`):
    /// only a template parameter may have such a type
    /// (`function_arguments.rs`).
    pub function_pointer_aliases: std::collections::HashSet<String>,
    /// The names of the program's (non-template) structs, declared or not
    /// yet: a pointer member to one not yet declared is told apart from
    /// an unknown name.
    pub struct_names: std::collections::HashSet<String>,
    /// The translation unit's items (see [`later_structs`]: which structs
    /// lead back to themselves through their members).
    pub items: &'a [Item],
    /// Functions declared without a body (prototypes), by name: a call that
    /// finds no definition says the definition is in another file.
    pub prototypes: std::collections::HashSet<String>,
    /// Built on first use by [`callgraph::reaches`].
    pub call_index: std::cell::RefCell<Option<callgraph::CallIndex>>,
    /// Structs whose Metal alignment is not their natural one (`packed`
    /// structs without padding, and structs holding them; see
    /// [`gnu_layout`]).
    pub struct_align: HashMap<StructId, u32>,
    /// Default member initializers' values, by struct and member (see
    /// [`Program::member_default`]).
    pub member_defaults: HashMap<StructId, Vec<Option<ConstValue>>>,
    /// The bit-fields of each struct that has some (their bytes are hidden
    /// members of the struct; see [`bit_fields`]).
    pub bit_fields: HashMap<StructId, Vec<bit_fields::BitField>>,
    /// `metal::os_log` (`<metal_logging>`, Metal 3.2): a struct without
    /// members, registered by [`analyze`]; its objects only take logging
    /// calls, which lowering drops (`lower/metal/logging.rs`).
    pub os_log: Option<StructId>,
    /// The struct whose static member is being declared (`S` while
    /// evaluating `S::B = A + 1`): unqualified names are looked up in it
    /// first (see [`MemberScope`]).
    pub member_scope: std::cell::RefCell<Option<String>>,
    /// Structs and unions whose name a function of the same name hides
    /// (C++ [basic.scope.hiding]: `union rbits {..};` and `kernel void
    /// rbits(..)`): the name is the function's; where a type is expected
    /// it still means the class, and WGSL names the struct apart
    /// ([`Program::wgsl_struct_name`]).
    pub hidden_classes: HashMap<String, StructId>,
    /// The structs `<metal_stdlib>` declares (the tessellation factors),
    /// registered by [`analyze`] (see [`tessellation`]).
    pub builtin_structs: Vec<StructId>,
    /// The names `Derived::m` declared for a member `m` of a base class
    /// (see [`inheritance`]), which the derived struct's own declarations
    /// and later passes replace.
    pub inherited: std::collections::HashSet<String>,
    /// Names `Derived::m` that two bases of `Derived` declare (C++ calls
    /// their use ambiguous), with the two bases.
    pub ambiguous_members: HashMap<String, (String, String)>,
}

/// While it lives, the static member declarations of one struct are being
/// evaluated: `constant int S::B = A + 1;` reads `A` as `S::A`.
struct MemberScope<'p, 'a> {
    program: &'p Program<'a>,
    outer: Option<String>,
}

impl<'p, 'a> MemberScope<'p, 'a> {
    /// Enters the scope of the struct that qualifies `name` (`S` of
    /// `S::B`; nothing for an unqualified name).
    fn enter(program: &'p Program<'a>, name: &str) -> Self {
        let scope = name
            .rsplit_once("::")
            .map(|(s, _)| s.to_string())
            .filter(|s| !s.is_empty());
        let outer = match scope {
            Some(s) => program.member_scope.replace(Some(s)),
            None => program.member_scope.borrow().clone(),
        };
        MemberScope { program, outer }
    }
}

impl Drop for MemberScope<'_, '_> {
    fn drop(&mut self) {
        *self.program.member_scope.borrow_mut() = self.outer.take();
    }
}

/// Builds the program-scope table, reporting every error found.
pub fn analyze(tu: &ast::TranslationUnit) -> (Program<'_>, Vec<Error>) {
    analyze_with(tu, &Default::default())
}

/// [`analyze`] with function constant values given at translation
/// (`function_constant_values`).
pub fn analyze_with<'a>(
    tu: &'a ast::TranslationUnit,
    given: &function_constant_values::FunctionConstantValues,
) -> (Program<'a>, Vec<Error>) {
    let (program, errors) = analyze_cached(tu, given, Default::default());
    // These errors are the ones reported: their hints are found now.
    let errors = program.complete_hints(errors);
    (program, errors)
}

/// [`analyze_with`], taking the kernel instances of an earlier analysis of
/// `tu` from `cache` (and leaving this one's there). Its errors' "did you
/// mean" notes are not found yet: a caller that reports them asks
/// [`Program::complete_hints`].
pub fn analyze_cached<'a>(
    tu: &'a ast::TranslationUnit,
    given: &function_constant_values::FunctionConstantValues,
    cache: std::rc::Rc<templates::InstanceCache>,
) -> (Program<'a>, Vec<Error>) {
    let mut program = Program {
        given_constants: given.clone(),
        instance_cache: cache,
        ..Program::default()
    };
    program.os_log = Some(program.structs.push(StructDef {
        // `::` keeps it apart from every struct the source declares.
        name: "metal::os_log".into(),
        members: Vec::new(),
        span: Span::default(),
        is_union: false,
        bases: Vec::new(),
        pod: true,
        min_align: 1,
        packed: false,
    }));
    tessellation::register(&mut program);
    gradients::register(&mut program);
    program.struct_names = tu
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Struct(s) => Some(s.name.name.clone()),
            _ => None,
        })
        .collect();
    program.items = &tu.items;
    let mut errors = Vec::new();
    // Structs waiting for the structs their pointer members name.
    let mut waiting: Vec<(usize, &Item)> = Vec::new();
    for (i, item) in tu.items.iter().enumerate() {
        program.current_item.set(Some(i));
        if let Item::Struct(s) = item {
            if program.waits_for_later_struct(s, &waiting) {
                waiting.push((i, item));
                continue;
            }
        }
        if let Err(e) = program.declare(item) {
            errors.push(e.or_at(item_span(item)));
        }
        if matches!(item, Item::Struct(_)) {
            program.declare_ready(&mut waiting, false, &mut errors);
        }
    }
    // Those still waiting are declared where their error says why.
    program.declare_ready(&mut waiting, true, &mut errors);
    program.current_item.set(None);
    program.inherit_all_names();
    program.mark_queried_function_constants();
    errors.extend(program.conditional_declarations());
    (program, errors)
}

impl<'a> Program<'a> {
    fn declare(&mut self, item: &'a Item) -> Result<()> {
        match item {
            Item::UsingNamespace(_) => Ok(()),
            Item::Alias(alias) if alias.ty.ptr_ops.contains(&ast::PtrOp::Function) => {
                self.function_pointer_aliases
                    .insert(alias.name.name.clone());
                Ok(())
            }
            Item::Alias(alias) => {
                let ty = self.resolve_type(&alias.ty)?;
                let ty = self.apply_array(ty, &alias.array)?;
                self.check_alias_layout(alias, &ty)?;
                // C++ lets a typedef be declared again as the same type
                // (`struct S {..}; typedef struct S S;`).
                if matches!(self.symbols.get(&alias.name.name), Some(Symbol::Type(t)) if *t == ty) {
                    return Ok(());
                }
                self.define(&alias.name, Symbol::Type(ty))
            }
            Item::Struct(s) => {
                if s.name.name.contains('<') {
                    self.seen_instances.insert(s.name.name.clone());
                }
                self.declare_struct(s)
            }
            Item::Function(f) => {
                if f.body.is_none() {
                    self.prototypes.insert(f.name.name.clone());
                    return Ok(());
                }
                self.functions.push(f);
                let index = self.functions.len() - 1;
                self.hide_class(&f.name.name);
                // A member function that a base's (inherited) hides.
                if self.inherited.remove(&f.name.name) {
                    self.symbols.remove(&f.name.name);
                }
                match self.symbols.get_mut(&f.name.name) {
                    Some(Symbol::Functions(list)) => {
                        list.push(index);
                        Ok(())
                    }
                    Some(_) => Err(Error::coded(
                        Code::Redefinition,
                        f.name.span,
                        format!("redefinition of `{}`", f.name.name),
                    )),
                    None => {
                        self.symbols
                            .insert(f.name.name.clone(), Symbol::Functions(vec![index]));
                        Ok(())
                    }
                }
            }
            Item::Global(decl) => self.declare_global(decl),
            Item::Enum(e) => self.declare_enum(e),
            Item::Template(t) => self.declare_template(t),
            Item::Instantiation(i) => self.declare_instantiation(i),
            Item::StaticAssert(a) => static_assert::check(self, a),
        }
    }

    /// An enumeration: its name aliases the underlying type (`int` by
    /// default) and each enumerator is a constant of that type, reachable
    /// unqualified or as `Name::A`.
    fn declare_enum(&mut self, e: &ast::EnumDecl) -> Result<()> {
        let ty = match &e.underlying {
            Some(ts) => self.resolve_value_type(ts)?,
            None => Type::INT,
        };
        if !matches!(ty, Type::Scalar(s) if s.is_integer()) {
            return Err(Error::coded(
                Code::InvalidType,
                e.span,
                "an enum's underlying type must be an integer type",
            ));
        }
        for name in e.name.iter().chain(e.tag.iter()) {
            if !matches!(self.symbols.get(&name.name), Some(Symbol::Type(t)) if *t == ty) {
                self.define(name, Symbol::Type(ty.clone()))?;
            }
        }
        let mut next = consteval::ConstValue::Int(0, types::Scalar::Int);
        for (name, value) in &e.enumerators {
            let v = match value {
                Some(expr) => consteval::eval(self, expr)?,
                None => next.clone(),
            };
            let v = consteval::convert(&v, &ty, name.span, self)?;
            let n = v.as_int().ok_or_else(|| {
                Error::coded(
                    Code::TypeMismatch,
                    name.span,
                    "enumerator values must be integers",
                )
            })?;
            next = consteval::ConstValue::Int(n + 1, types::Scalar::Long);
            self.constants.push(GlobalConstant {
                name: name.name.clone(),
                ty: ty.clone(),
                value: v,
                span: name.span,
            });
            // A scoped enumerator is only found as `E::A`, so two
            // `enum class`es may share enumerator names.
            let declared = match (&e.scoped, &e.name) {
                (true, Some(enum_name)) => ast::Ident {
                    name: format!("{}::{}", enum_name.name, name.name),
                    span: name.span,
                },
                _ => name.clone(),
            };
            self.define(&declared, Symbol::Constant(self.constants.len() - 1))?;
        }
        Ok(())
    }

    /// A function named `name` is being declared: a struct or union of that
    /// name (the class itself, not a typedef) stays a type, hidden
    /// ([`Program::hidden_classes`]), and the name becomes the function's.
    fn hide_class(&mut self, name: &str) {
        let Some(Symbol::Type(Type::Struct(id))) = self.symbols.get(name) else {
            return;
        };
        let id = *id;
        if self.structs.get(id).name == name {
            self.symbols.remove(name);
            self.hidden_classes.insert(name.to_string(), id);
        }
    }

    /// The symbol a qualified name `path` (`S::N`, `S::A::N`) declares:
    /// by its full name, or else through [`Program::canonical_path`].
    pub fn qualified_symbol(&self, path: &[String]) -> Option<&Symbol> {
        self.symbols.get(&path.join("::")).or_else(|| {
            let canonical = self.canonical_path(path)?;
            self.symbols.get(&canonical.join("::"))
        })
    }

    /// `path` with its longest prefix that names a struct through an alias
    /// (`S::A` with `using A = Loader<T, 4>;`, also a program-scope `A`)
    /// replaced by the struct's own name: `Loader<float,4>::N`, as members
    /// are declared. `None` where no proper prefix is such an alias.
    pub fn canonical_path(&self, path: &[String]) -> Option<Vec<String>> {
        (1..path.len()).rev().find_map(|k| {
            let prefix = path[..k].join("::");
            let Some(Symbol::Type(Type::Struct(id))) = self.symbols.get(&prefix) else {
                return None;
            };
            let owner = &self.structs.get(*id).name;
            (*owner != prefix).then(|| {
                std::iter::once(owner.clone())
                    .chain(path[k..].iter().cloned())
                    .collect()
            })
        })
    }

    fn define(&mut self, name: &ast::Ident, symbol: Symbol) -> Result<()> {
        // A derived struct's own member hides the base's it inherited.
        if self.inherited.remove(&name.name) {
            self.symbols.remove(&name.name);
        }
        if self.symbols.contains_key(&name.name) {
            return Err(Error::coded(
                Code::Redefinition,
                name.span,
                format!("redefinition of `{}`", name.name),
            ));
        }
        self.symbols.insert(name.name.clone(), symbol);
        Ok(())
    }

    /// The `n` of a member's `[[id(n)]]` (its index in an argument buffer).
    fn member_id(&self, m: &ast::Member) -> Result<Option<u32>> {
        let Some(a) = m.attributes.iter().find(|a| a.name == "id") else {
            return Ok(None);
        };
        let [arg] = a.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                "`id` takes one index: `[[id(n)]]`",
            ));
        };
        consteval::eval(self, arg)?
            .as_int()
            .filter(|i| (0..=i64::from(u32::MAX)).contains(i))
            .map(|i| Some(i as u32))
            .ok_or_else(|| {
                Error::coded(
                    Code::InvalidAttributeArgument,
                    arg.span,
                    "an argument buffer `[[id(n)]]` must be a non-negative integer constant",
                )
            })
    }

    fn declare_struct(&mut self, s: &ast::StructDecl) -> Result<()> {
        let anonymous = unions::declare_anonymous(self, s)?;
        let mut members: Vec<MemberDef> = Vec::new();
        self.check_bit_field_struct(s)?;
        let mut fields = Vec::new();
        let mut run: Option<bit_fields::Allocator> = None;
        let mut chunks = 0;
        let mut align = 1;
        for m in &s.members {
            let ty = match anonymous.get(&m.name.name) {
                Some(ty) => ty.clone(),
                None => self.resolve_type(&m.ty).map_err(|e| {
                    self.pointer_to_later_struct(&s.name.name, &m.ty)
                        .unwrap_or(e)
                })?,
            };
            if m.bits.is_some() {
                let start = self.data_end(&members);
                let alloc = run.get_or_insert(bit_fields::Allocator {
                    bit: 8 * start,
                    run_start: start,
                    align: 1,
                    chunks,
                });
                self.place_bit_field(s, m, &ty, alloc, &mut fields)?;
                continue;
            }
            if let Some(mut alloc) = run.take() {
                align = align.max(alloc.align);
                let end = alloc.bit.div_ceil(8);
                members.extend(alloc.storage(alloc.run_start, end, m.name.span));
                chunks = alloc.chunks;
            }
            let ty = self
                .apply_array(ty, &m.array)
                .map_err(|e| e.or_at(m.name.span))?;
            // Pointer and reference members: lowering keeps such a struct
            // as a translation-time aggregate (lower/metal/pointer_members.rs).
            if ty == Type::Void {
                return Err(Error::coded(
                    Code::InvalidType,
                    m.ty.span,
                    "a member cannot have type `void`",
                ));
            }
            if s.is_union {
                unions::check_member(self, s, &m.name, &ty)?;
            }
            if ast::is_base_member(&m.name.name) {
                self.base_class(s, m, &ty)?;
            }
            if members.iter().any(|x| x.name == m.name.name) {
                return Err(Error::coded(
                    Code::Redefinition,
                    m.name.span,
                    format!("duplicate member `{}`", m.name.name),
                ));
            }
            members.push(MemberDef {
                name: m.name.name.clone(),
                ty,
                span: m.name.span,
                id: self.member_id(m)?,
            });
        }
        if let Some(mut alloc) = run.take() {
            align = align.max(alloc.align);
            let end = alloc.bit.div_ceil(8);
            members.extend(alloc.storage(alloc.run_start, end, s.name.span));
        }
        // An empty struct (`struct S {};`) is a type of Metal size 1 with
        // no members; lowering gives it a member nothing reads, as WGSL has
        // no empty structs.
        let (bases, members) = self.split_bases(members);
        let pod = self.pod_for_layout(s.pod_candidate, &members);
        if members.is_empty() && s.name.name.contains('<') {
            // A struct template instance holding only types, constants and
            // functions (a trait or a function object); it is a type too.
            self.empty_instances.insert(s.name.name.clone());
        }
        let id = self.structs.push(StructDef {
            name: s.name.name.clone(),
            members,
            span: s.span,
            is_union: s.is_union,
            bases,
            pod,
            min_align: align,
            packed: false,
        });
        self.inherit_names(id);
        if !fields.is_empty() {
            self.bit_fields.insert(id, fields);
        }
        if let Some(origin) = &s.instance_of {
            self.instance_origins.insert(id, origin.clone());
        }
        if matches!(self.symbols.get(&s.name.name), Some(Symbol::Functions(_))) {
            // A function of this name was declared first: it hides the class.
            self.hidden_classes.insert(s.name.name.clone(), id);
        } else {
            self.define(&s.name, Symbol::Type(Type::Struct(id)))?;
        }
        self.check_struct_layout(s, id)?;
        self.declare_member_defaults(s, id)
    }

    /// The values of struct `id`'s default member initializers (`int n =
    /// 0;`), evaluated once here: they must be constant expressions, which
    /// keeps them independent of where an object is created.
    fn declare_member_defaults(&mut self, s: &ast::StructDecl, id: StructId) -> Result<()> {
        if s.members.iter().all(|m| m.default.is_none()) {
            return Ok(());
        }
        let mut values = Vec::new();
        for (m, def) in s.members.iter().zip(&self.structs.get(id).members) {
            values.push(match &m.default {
                None => None,
                Some(init) => Some(consteval::eval_init(self, init, &def.ty).map_err(|e| {
                    e.note(format!(
                        "the default initializer of member `{}` must be a constant expression here",
                        m.name.name
                    ))
                })?),
            });
        }
        self.member_defaults.insert(id, values);
        Ok(())
    }

    /// The default initializer of member `index` of struct `id`, if any.
    pub fn member_default(&self, id: StructId, index: usize) -> Option<&ConstValue> {
        self.member_defaults.get(&id)?.get(index)?.as_ref()
    }

    /// Whether default-initializing a value of type `ty` runs a default
    /// member initializer (of it, or of a struct inside it).
    pub fn has_member_defaults(&self, ty: &Type) -> bool {
        match ty {
            Type::Struct(id) => {
                self.member_defaults.contains_key(id)
                    || self
                        .structs
                        .get(*id)
                        .members
                        .iter()
                        .any(|m| self.has_member_defaults(&m.ty))
            }
            Type::Array(elem, _) => self.has_member_defaults(elem),
            _ => false,
        }
    }

    fn declare_global(&mut self, decl: &'a ast::VarDecl) -> Result<()> {
        if decl.ty.space.is_none()
            && decl.ty.ptr_ops.is_empty()
            && decl.ty.name().trim_start_matches("metal::") == "sampler"
        {
            for d in &decl.declarators {
                let sampler = sampler_decl(&decl.ty, d)?;
                self.samplers.push(sampler);
                self.define(&d.name, Symbol::Sampler(self.samplers.len() - 1))?;
            }
            return Ok(());
        }
        // The object's own space: after the last `*` of a pointer
        // (`device float* constant p`), else before the type.
        let space = match decl.ty.ptr_ops.last() {
            Some(ast::PtrOp::Pointer {
                space: Some(space), ..
            }) => Some(*space),
            _ => decl.ty.space.map(|s| s.0),
        };
        if space != Some(ast::AddressSpace::Constant) {
            return Err(Error::coded(
                Code::AddressSpace,
                decl.ty.span,
                "program-scope variables must be declared in the `constant` address space",
            ));
        }
        if decl
            .ty
            .ptr_ops
            .iter()
            .any(|op| matches!(op, ast::PtrOp::Pointer { .. }))
        {
            return Err(Error::coded(
                Code::Unsupported,
                decl.ty.span,
                "program-scope pointer constants (`device T* constant p`) are not supported yet",
            )
            .note("pass the pointer to the functions that use it, or keep an index into the buffer it points into"));
        }
        let base = self.resolve_value_type(&decl.ty)?;
        if self.is_os_log(&base) {
            return self.declare_os_logs(decl, base);
        }
        for d in &decl.declarators {
            if self.declare_specialized(&decl.ty, d)? {
                continue;
            }
            let (ty, value) = self.constant_value(&base, d)?;
            self.constants.push(GlobalConstant {
                name: d.name.name.clone(),
                ty,
                value,
                span: d.span,
            });
            let index = self.constants.len() - 1;
            self.define(&d.name, Symbol::Constant(index))?;
        }
        Ok(())
    }

    /// The type and value of program-scope constant `d` of type `base`.
    fn constant_value(&self, base: &Type, d: &ast::Declarator) -> Result<(Type, ConstValue)> {
        // A static member's size and initializer find the struct's other
        // static members unqualified (C++ [class.static.data]).
        let _scope = MemberScope::enter(self, &d.name.name);
        let ty = self.declarator_type(base.clone(), d)?;
        let Some(init) = &d.init else {
            return Err(Error::coded(
                Code::InvalidInitializer,
                d.name.span,
                format!(
                    "program-scope constant `{}` must be initialized",
                    d.name.name
                ),
            ));
        };
        let value = constexpr_fn::folding_initializer(|| consteval::eval_init(self, init, &ty))?;
        Ok((ty, value))
    }

    /// Whether `ty` is `metal::os_log`.
    pub fn is_os_log(&self, ty: &Type) -> bool {
        matches!(ty, Type::Struct(id) if Some(*id) == self.os_log)
    }

    /// `constant os_log logger("subsystem", "category");`: a log object
    /// (MSL §6.19), a constant with no value, as the calls on it are dropped.
    fn declare_os_logs(&mut self, decl: &'a ast::VarDecl, ty: Type) -> Result<()> {
        for d in &decl.declarators {
            self.constants.push(GlobalConstant {
                name: d.name.name.clone(),
                ty: ty.clone(),
                value: ConstValue::Composite(ty.clone(), Vec::new()),
                span: d.span,
            });
            let index = self.constants.len() - 1;
            self.define(&d.name, Symbol::Constant(index))?;
        }
        Ok(())
    }

    /// The struct `id`'s name.
    pub fn struct_name(&self, id: StructId) -> &str {
        &self.structs.get(id).name
    }

    /// The name struct `id` gets in WGSL: its own, except for a class that a
    /// function of its name hides (WGSL has one namespace for both, and
    /// the function may be an entry point that keeps its name), which
    /// gets `_struct` or `_union` after it.
    pub fn wgsl_struct_name(&self, id: StructId) -> String {
        let def = self.structs.get(id);
        match self.hidden_classes.get(&def.name) {
            Some(hidden) if *hidden == id => {
                let kind = if def.is_union { "union" } else { "struct" };
                format!("{}_{kind}", def.name)
            }
            _ => def.name.clone(),
        }
    }

    /// MSL spelling of a type.
    pub fn display(&self, ty: &Type) -> String {
        self.structs.display(ty)
    }

    /// Resolves a written type, without its pointer/reference declarators'
    /// address-space checks (see [`Program::resolve_type`]).
    pub fn resolve_value_type(&self, ts: &ast::TypeSpec) -> Result<Type> {
        let name = ts.name();
        let name = name.strip_prefix("metal::").unwrap_or(&name);
        if !ts.args.is_empty() {
            if let Some(ty) = self.instance_member_alias(ts)? {
                return Ok(ty);
            }
            if let Some(ty) = self.trait_type(name, &ts.args)? {
                return Ok(ty);
            }
            if let Some(ty) = self.struct_template_type(ts)? {
                return Ok(ty);
            }
        } else if ts.path.len() == 1 && self.struct_templates.contains_key(name) {
            return self.struct_template_type(ts).map(Option::unwrap);
        }
        // `simdgroup_float8x8::storage_type`: what each thread of the SIMD
        // group holds of the matrix, its two `thread_elements()` (64
        // elements over 32 threads), as SPIRV-Cross measures a cooperative
        // matrix's length (`sizeof(storage_type) / sizeof(T)`).
        if let Some(matrix) = name.strip_suffix("::storage_type") {
            if let Some(Type::SimdgroupMatrix(s)) = types::builtin_type(matrix) {
                return Ok(Type::Vector(s, 2));
            }
        }
        if let Some(ty) = types::builtin_type(name) {
            if !ts.args.is_empty() {
                return Err(Error::coded(
                    Code::Template,
                    ts.name_span,
                    format!("`{name}` is not a template"),
                ));
            }
            return Ok(ty);
        }
        match name {
            "void" => return Ok(Type::Void),
            "decltype" => return self.decltype_type(ts),
            "auto" => {
                return Err(Error::coded(
                    Code::Unsupported,
                    ts.name_span,
                    "`auto` is supported for local variables and function return types only; write the type here",
                ))
            }
            "double" => {
                return Err(Error::coded(
                    Code::NotInMetal,
                    ts.name_span,
                    "`double` is not supported by Metal",
                ))
            }
            "vec" => return self.template_vec(ts),
            "matrix" => return self.template_matrix(ts),
            "simdgroup_matrix" => return self.template_simdgroup_matrix(ts),
            "atomic" => {
                let [TemplateArg::Type(elem)] = ts.args.as_slice() else {
                    return Err(Error::coded(
                        Code::InvalidType,
                        ts.span,
                        "`atomic` needs one type: `atomic<T>`",
                    ));
                };
                return match self.resolve_value_type(elem)? {
                    Type::Scalar(
                        s @ (types::Scalar::Int
                        | types::Scalar::UInt
                        | types::Scalar::Bool
                        | types::Scalar::Float),
                    ) => Ok(Type::Atomic(s)),
                    other => Err(Error::coded(
                        Code::Unsupported,
                        elem.span,
                        format!("`atomic<{}>` is not supported", self.display(&other)),
                    )),
                };
            }
            "sampler" => return Ok(Type::Sampler { comparison: false }),
            n if n.starts_with("texture") || n.starts_with("depth") => {
                return self.texture_type(n, ts)
            }
            "array" => return self.template_array(ts),
            "patch_control_point" => return Err(tessellation::patch_control_point(ts)),
            _ => {}
        }
        // `S::A::type` through member alias `S::A` of another struct.
        let symbol = self.symbols.get(name).or_else(|| {
            (ts.path.len() > 1 && ts.args.is_empty())
                .then(|| self.qualified_symbol(&ts.path))
                .flatten()
        });
        match symbol {
            Some(Symbol::Type(ty)) => Ok(ty.clone()),
            // The class a function of its name hides: found where a type
            // is expected (as `struct S`/`union S` finds it in C++).
            Some(Symbol::Functions(_)) if self.hidden_classes.contains_key(name) => {
                Ok(Type::Struct(self.hidden_classes[name]))
            }
            Some(_) => Err(Error::coded(
                Code::WrongKind,
                ts.name_span,
                format!("`{name}` does not name a type"),
            )),
            // `<metal_atomic>`'s enums, `int`-sized (lower/stdlib/fence.rs),
            // and `<metal_texture>`'s `component` (lower/stdlib/mod.rs).
            None if matches!(name, "thread_scope" | "memory_order" | "component")
                && ts.args.is_empty() =>
            {
                Ok(Type::INT)
            }
            None if name == "os_log" && ts.args.is_empty() => {
                Ok(Type::Struct(self.os_log.expect("registered by analyze")))
            }
            None if ts.args.is_empty() && self.builtin_struct(name).is_some() => {
                Ok(Type::Struct(self.builtin_struct(name).expect("just found")))
            }
            None if raytracing::refusal(name, ts).is_some() => {
                Err(raytracing::refusal(name, ts).expect("just found"))
            }
            // `uniform<T>` (Metal 2.4): a `T` the programmer promises is the
            // same in every thread, a hint for Metal's compiler only.
            None if name == "uniform" && ts.args.len() == 1 => match &ts.args[0] {
                TemplateArg::Type(t) => self.resolve_value_type(t),
                TemplateArg::Expr(e) => Err(Error::coded(
                    Code::Template,
                    e.span,
                    "`uniform<T>` takes a type",
                )),
            },
            None if unported_features::refusal(name, ts).is_some() => {
                Err(unported_features::refusal(name, ts).expect("just found"))
            }
            None => Err(Error::unknown_type(ts.name_span, name)),
        }
    }

    fn template_vec(&self, ts: &ast::TypeSpec) -> Result<Type> {
        let [TemplateArg::Type(elem), n] = ts.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidType,
                ts.span,
                "`vec` needs an element type and a size: `vec<T, N>`",
            ));
        };
        let elem = self.resolve_value_type(elem)?;
        let n = self.template_count(n, ts.span)?;
        match (elem, n) {
            (Type::Scalar(s), 2..=4) => Ok(Type::Vector(s, n as u8)),
            // `vec<T, N>` is clang's `ext_vector_type(N)`, which allows one
            // element; a template computing `N` (`vec<T, kRows>` with
            // `kRows == 1`) gets such a vector. WGSL has none: it is held as
            // its element, which it converts to and from and computes as.
            (Type::Scalar(s), 1) => Ok(Type::Scalar(s)),
            (Type::Scalar(s), 8 | 16) => Ok(Type::Array(Box::new(Type::Scalar(s)), n)),
            _ => Err(Error::coded(
                Code::InvalidType,
                ts.span,
                "`vec<T, N>` needs a scalar T and N between 1 and 4",
            )),
        }
    }

    /// `matrix<T, C, R>` (MSL §2.3): `C` columns of `R` rows of `half` or
    /// `float`, as `floatCxR`.
    fn template_matrix(&self, ts: &ast::TypeSpec) -> Result<Type> {
        let [TemplateArg::Type(elem), columns, rows] = ts.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidType,
                ts.span,
                "`matrix` needs an element type and two sizes: `matrix<T, C, R>`",
            ));
        };
        let elem = self.resolve_value_type(elem)?;
        let columns = self.template_count(columns, ts.span)?;
        let rows = self.template_count(rows, ts.span)?;
        match elem {
            Type::Scalar(scalar @ (types::Scalar::Float | types::Scalar::Half))
                if (2..=4).contains(&columns) && (2..=4).contains(&rows) =>
            {
                Ok(Type::Matrix {
                    scalar,
                    columns: columns as u8,
                    rows: rows as u8,
                })
            }
            _ => Err(Error::coded(
                Code::InvalidType,
                ts.span,
                "`matrix<T, C, R>` needs `half` or `float` and sizes between 2 and 4",
            )),
        }
    }

    /// `simdgroup_matrix<T, 8, 8>` (MSL §2.4): `T` is `float`, `half` or
    /// `bfloat`, and Metal has 8×8 matrices only.
    fn template_simdgroup_matrix(&self, ts: &ast::TypeSpec) -> Result<Type> {
        let [TemplateArg::Type(elem), columns, rows] = ts.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidType,
                ts.span,
                "`simdgroup_matrix` needs an element type and two sizes: `simdgroup_matrix<T, 8, 8>`",
            ));
        };
        let elem = self.resolve_value_type(elem)?;
        let columns = self.template_count(columns, ts.span)?;
        let rows = self.template_count(rows, ts.span)?;
        match elem {
            Type::Scalar(
                s @ (types::Scalar::Float | types::Scalar::Half | types::Scalar::BFloat),
            ) if (columns, rows) == (8, 8) => Ok(Type::SimdgroupMatrix(s)),
            Type::Scalar(types::Scalar::Float | types::Scalar::Half | types::Scalar::BFloat) => {
                Err(Error::coded(
                    Code::InvalidType,
                    ts.span,
                    format!("`simdgroup_matrix<T, {columns}, {rows}>`: Metal's SIMD-group matrices are 8×8"),
                ))
            }
            // Named but not made (a `typedef` in a class template that an
            // instance of another element type never uses, MLX's
            // `BaseMMAFrag<bool, 8, 8>::mat_type`): refused where an
            // object of it is declared (`lower::types`).
            Type::Scalar(s) if (columns, rows) == (8, 8) => Ok(Type::SimdgroupMatrix(s)),
            other => Err(Error::coded(
                Code::InvalidType,
                ts.span,
                format!(
                    "`simdgroup_matrix` holds `float`, `half` or `bfloat`, not `{}`",
                    self.display(&other)
                ),
            )),
        }
    }

    fn template_array(&self, ts: &ast::TypeSpec) -> Result<Type> {
        let [TemplateArg::Type(elem), n] = ts.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidType,
                ts.span,
                "`array` needs an element type and a size: `array<T, N>`",
            ));
        };
        // `array<device float*, N>` (an argument buffer's array of
        // buffers) keeps its element's pointer.
        let elem = match elem.ptr_ops.is_empty() {
            true => self.resolve_value_type(elem)?,
            false => self.resolve_type(elem)?,
        };
        let n = self.template_count(n, ts.span)?;
        Ok(Type::Array(Box::new(elem), n))
    }

    fn template_count(&self, arg: &TemplateArg, span: Span) -> Result<u32> {
        let value = match arg {
            TemplateArg::Expr(e) => consteval::eval(self, e)?,
            // A bare name parses as a type; it may be a constant.
            TemplateArg::Type(t) if t.ptr_ops.is_empty() && t.args.is_empty() => {
                let e = ast::Expr {
                    kind: ast::ExprKind::Name(t.path.clone()),
                    span: t.span,
                };
                consteval::eval(self, &e)?
            }
            TemplateArg::Type(t) => {
                return Err(Error::coded(
                    Code::WrongKind,
                    t.span,
                    "expected a constant, found a type",
                ))
            }
        };
        value.as_count().ok_or_else(|| {
            Error::coded(
                Code::NotConstant,
                span,
                "expected a positive integer constant",
            )
        })
    }

    /// Resolves a written type including `*`/`&` declarators.
    pub fn resolve_type(&self, ts: &ast::TypeSpec) -> Result<Type> {
        if ts.ptr_ops.contains(&ast::PtrOp::Function) || self.names_function_pointer(ts) {
            return Err(function_arguments::function_pointer_type(ts.span));
        }
        let mut ty = self.resolve_value_type(ts)?;
        let mut is_const = ts.is_const;
        for (i, op) in ts.ptr_ops.iter().enumerate() {
            let Some((space, _)) = ts.space else {
                return Err(Error::coded(
                    Code::AddressSpace,
                    ts.span,
                    format!(
                        "{} type `{}` needs an address space (`device`, `constant`, `thread` or `threadgroup`)",
                        if matches!(op, ast::PtrOp::Reference) { "reference" } else { "pointer" },
                        ts.name()
                    ),
                ));
            };
            // A pointer into `device` or `constant` memory: what it points
            // to is held in a buffer. What an outer `*` points to is the
            // pointer before it, in the space written after that one's `*`
            // (`device T* thread* p` points into `thread` memory).
            let pointee_space = match i.checked_sub(1).map(|k| &ts.ptr_ops[k]) {
                Some(ast::PtrOp::Pointer { space: Some(s), .. }) => *s,
                _ => space,
            };
            let in_buffer = matches!(
                pointee_space,
                ast::AddressSpace::Device | ast::AddressSpace::Constant
            ) && matches!(op, ast::PtrOp::Pointer { .. });
            if i > 0 {
                // `device T*& p`: a reference to a caller's pointer
                // variable, which the function may move
                // (`lower/metal/pointer_addresses.rs`).
                if pointer_references::is_pointer_reference(ts) {
                    return Ok(Type::Pointer(Box::new(Pointer {
                        space: AddressSpace::Thread,
                        pointee: ty,
                        is_const: false,
                        is_reference: true,
                    })));
                }
                // `device T* device* p`: the pointee pointer is in a buffer.
                if in_buffer {
                    return Err(Error::coded(
                        Code::NoWebGpuEquivalent,
                        ts.span,
                        unported_features::POINTER_IN_BUFFER,
                    )
                    .note(unported_features::POINTER_IN_BUFFER_PORT));
                }
                return Err(Error::coded(
                    Code::Unsupported,
                    ts.span,
                    "pointers to pointers are not supported",
                ));
            }
            // A reference to a texture or sampler (`thread texture2d<float>&`,
            // Tint's `const_cast<T thread &>(t)`) names the same handle: WGSL
            // passes handles by value, and neither language can rebind
            // one through a reference, so the reference is the handle.
            if matches!(ty, Type::Texture(_) | Type::Sampler { .. })
                && ts.ptr_ops.len() == 1
                && matches!(op, ast::PtrOp::Reference)
            {
                return Ok(ty);
            }
            if matches!(ty, Type::Texture(_) | Type::Sampler { .. }) && in_buffer {
                return Err(Error::coded(
                    Code::NoWebGpuEquivalent,
                    ts.span,
                    unported_features::RESOURCE_IN_BUFFER,
                )
                .note(unported_features::RESOURCE_IN_BUFFER_PORT));
            }
            if matches!(ty, Type::Texture(_) | Type::Sampler { .. }) {
                return Err(Error::coded(Code::InvalidType, ts.span, "pointers to textures and samplers are not allowed; pass them by value (or by reference)"));
            }
            let space = match space {
                ast::AddressSpace::Device => AddressSpace::Device,
                ast::AddressSpace::Constant => AddressSpace::Constant,
                ast::AddressSpace::Thread => AddressSpace::Thread,
                ast::AddressSpace::Threadgroup => AddressSpace::Threadgroup,
                ast::AddressSpace::Other => {
                    return Err(Error::coded(
                        Code::Unsupported,
                        ts.span,
                        "this address space is not supported",
                    ));
                }
            };
            ty = Type::Pointer(Box::new(Pointer {
                space,
                pointee: ty,
                is_const: is_const || space == AddressSpace::Constant,
                is_reference: matches!(op, ast::PtrOp::Reference),
            }));
            is_const = false;
        }
        Ok(ty)
    }

    /// Wraps `ty` in the array dimensions `dims` (`T a[2][3]` is 2 arrays of 3).
    /// The type a declarator gives `base`: its array suffixes applied, an
    /// unsized first one (`w[] = {1, 2, 3}`) sized by its initializer list
    /// (C++ [dcl.init.aggr]: one element per item, or per element's worth
    /// of items when their braces are elided).
    pub fn declarator_type(&self, base: Type, d: &ast::Declarator) -> Result<Type> {
        let Some((None, inner)) = d.array.split_first() else {
            return self
                .apply_array(base, &d.array)
                .map_err(|e| e.or_at(d.name.span));
        };
        let elem = self
            .apply_array(base, inner)
            .map_err(|e| e.or_at(d.name.span))?;
        let items = match &d.init {
            Some(ast::Init::List(items, _)) => items,
            Some(ast::Init::Expr(ast::Expr {
                kind: ast::ExprKind::InitList(items),
                ..
            })) => items,
            _ => {
                return Err(Error::coded(
                    Code::InvalidType,
                    d.name.span,
                    format!(
                        "array `{}` needs a size, or an initializer list to count it",
                        d.name.name
                    ),
                ))
            }
        };
        let braced = |i: &ast::Init| {
            matches!(
                i,
                ast::Init::List(..)
                    | ast::Init::Expr(ast::Expr {
                        kind: ast::ExprKind::InitList(_),
                        ..
                    })
            )
        };
        // Brace elision: `float m[][2] = {1, 2, 3, 4}` has two elements.
        let mut per_element = 1;
        let mut t = &elem;
        while let Type::Array(e, n) = t {
            per_element *= *n as usize;
            t = e;
        }
        let n = match items.iter().any(braced) {
            true => items.len(),
            false => items.len().div_ceil(per_element),
        };
        let n = u32::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
            Error::coded(
                Code::InvalidType,
                d.name.span,
                format!(
                    "array `{}` has no elements: an empty initializer list cannot size it",
                    d.name.name
                ),
            )
        })?;
        Ok(Type::Array(Box::new(elem), n))
    }

    /// The type of function parameter `p`. An array parameter in `device`,
    /// `constant` or `threadgroup` memory (`constant const int64_t
    /// strides[3]`) is a pointer to its element type, as C++ adjusts array
    /// parameters ([dcl.fct]/5); other arrays keep their array type (a
    /// `thread` array is passed by value here, which reads the same).
    pub fn param_type(&self, p: &ast::Param) -> Result<Type> {
        let ty = self.resolve_type(&p.ty)?;
        let space = match p.ty.space {
            Some((ast::AddressSpace::Device, _)) => types::AddressSpace::Device,
            Some((ast::AddressSpace::Constant, _)) => types::AddressSpace::Constant,
            Some((ast::AddressSpace::Threadgroup, _)) => types::AddressSpace::Threadgroup,
            // A writable `thread` array parameter (`thread U dst[TN]`) is
            // the caller's array, which the function may write: a
            // reference to it here (a `const` one reads the same by value).
            _ if !p.array.is_empty() && p.ty.ptr_ops.is_empty() && !p.ty.is_const => {
                return Ok(Type::Pointer(Box::new(types::Pointer {
                    space: types::AddressSpace::Thread,
                    pointee: self.apply_array(ty, &p.array)?,
                    is_const: false,
                    is_reference: true,
                })))
            }
            _ => return self.apply_array(ty, &p.array),
        };
        if !p.ty.ptr_ops.is_empty() || p.array.is_empty() {
            return self.apply_array(ty, &p.array);
        }
        let pointee = self.apply_array(ty, &p.array[1..])?;
        Ok(Type::Pointer(Box::new(types::Pointer {
            space,
            pointee,
            is_const: p.ty.is_const || space == types::AddressSpace::Constant,
            is_reference: false,
        })))
    }

    pub fn apply_array(&self, mut ty: Type, dims: &[Option<ast::Expr>]) -> Result<Type> {
        for dim in dims.iter().rev() {
            let Some(e) = dim else {
                return Err(Error::coded(
                    Code::InvalidType,
                    Span::default(),
                    "arrays need a size: only a variable initialized with a list may leave it out",
                ));
            };
            let n = consteval::eval(self, e)?.as_count().ok_or_else(|| {
                Error::coded(
                    Code::NotConstant,
                    e.span,
                    "array size must be a positive integer constant",
                )
            })?;
            ty = Type::Array(Box::new(ty), n);
        }
        Ok(ty)
    }
}

/// A `constexpr sampler` declarator; also used for function-scope ones.
pub fn sampler_decl(ty: &ast::TypeSpec, d: &ast::Declarator) -> Result<SamplerDecl> {
    if !ty.is_constexpr {
        return Err(Error::coded(
            Code::InvalidSampler,
            ty.span,
            "a sampler declared in a program or function must be `constexpr`",
        ));
    }
    let args = match &d.init {
        Some(ast::Init::Paren(args, _)) => args.clone(),
        None => Vec::new(),
        Some(ast::Init::Expr(ast::Expr {
            kind: ast::ExprKind::Call(_, args),
            ..
        })) => args.clone(),
        Some(other) => {
            return Err(Error::coded(
                Code::InvalidSampler,
                other.span(),
                "expected `constexpr sampler name(arguments...)`",
            ))
        }
    };
    Ok(SamplerDecl {
        name: d.name.name.clone(),
        args,
        span: d.span,
    })
}
