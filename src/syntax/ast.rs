//! The abstract syntax tree, every node with its [`Span`] in the translation unit.

use crate::source_map::Span;

/// An identifier.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// Its text.
    pub name: String,
    /// Where.
    pub span: Span,
}

/// A whole translation unit.
#[derive(Clone, Debug, Default)]
pub struct TranslationUnit {
    /// Top-level declarations in source order.
    pub items: Vec<Item>,
}

/// A top-level declaration.
#[derive(Clone, Debug)]
pub enum Item {
    /// `using namespace metal;`
    UsingNamespace(Span),
    /// `using Name = Type;` or `typedef Type Name;`
    Alias(Alias),
    /// `struct S { ... };`
    Struct(StructDecl),
    /// A function definition or declaration.
    Function(FunctionDecl),
    /// A program-scope variable (`constant float k = 1;`).
    Global(VarDecl),
    /// An enumeration.
    Enum(EnumDecl),
    /// `template <...> function-or-struct`
    Template(TemplateDecl),
    /// `template [[host_name("n")]] kernel void f<float>(...);`
    Instantiation(Instantiation),
    /// `static_assert(cond, "message");` at program or namespace scope.
    StaticAssert(StaticAssert),
}

/// `static_assert(cond, "message");`
#[derive(Clone, Debug)]
pub struct StaticAssert {
    /// The condition, a constant expression.
    pub cond: Expr,
    /// The message without its quotes, if any.
    pub message: Option<String>,
    /// The whole declaration.
    pub span: Span,
}

/// A template parameter's kind.
#[derive(Clone, Debug)]
pub enum TemplateParamKind {
    /// `typename T [= float]` (also `class T`).
    Type(Option<TypeSpec>),
    /// `int N [= 4]`: a constant of this type.
    Value(TypeSpec, Option<Expr>),
    /// `template <typename> class Op [= Default]`: a struct template
    /// (C++ [temp.arg.template]), with the path of the default's.
    Template(Option<Vec<String>>),
}

/// One template parameter.
#[derive(Clone, Debug)]
pub struct TemplateParam {
    /// Its name.
    pub name: Ident,
    /// Type or value, with the default argument.
    pub kind: TemplateParamKind,
    /// `typename... Ts`, `int... Ns`: a template parameter pack (C++11
    /// [temp.variadic]), bound to a list of arguments.
    pub pack: bool,
    /// Whole parameter.
    pub span: Span,
}

/// What a template declares.
#[derive(Clone, Debug)]
pub enum Templated {
    /// A function template.
    Function(FunctionDecl),
    /// A struct template or a specialisation of one.
    Struct(StructTemplate),
    /// A variable template or a specialisation of one.
    Variable(VariableTemplate),
    /// An alias template (`template <typename T> using A = vec<T, 4>;`,
    /// C++ [temp.alias]). Only the parser sees one: each use `A<float>` is
    /// replaced by the aliased type with the arguments substituted, and the
    /// declaration itself is dropped.
    Alias(Alias),
}

/// A variable template (C++14 [temp.pre]) or an explicit or partial
/// specialisation of one: `template <typename T> constant constexpr bool
/// is_v = false;`, `template <typename T> constant constexpr bool
/// is_v<C<T>> = true;`.
#[derive(Clone, Debug)]
pub struct VariableTemplate {
    /// The declared type (`constexpr bool`).
    pub ty: TypeSpec,
    /// The variable's name.
    pub name: Ident,
    /// The specialisation's arguments (`<C<T>>`); `None` for the primary.
    pub specialization: Option<Vec<TemplateArg>>,
    /// The initializer.
    pub init: Init,
    /// Whole declaration.
    pub span: Span,
}

/// The struct of a struct template (`template <typename T> struct V { .. };`)
/// or of a specialisation (`template <> struct Traits<half> { .. };`).
#[derive(Clone, Debug)]
pub struct StructTemplate {
    /// The data members; the name is the template's.
    pub decl: StructDecl,
    /// What the members became (see `syntax::members`): member functions,
    /// constructors, static constants and member aliases, named `S::m`.
    pub members: Vec<Item>,
    /// The specialisation's arguments (`<half>`); `None` for the primary.
    pub specialization: Option<Vec<TemplateArg>>,
    /// Declared without a definition (`template <typename T> struct S;`):
    /// it names the primary template for the specialisations that follow,
    /// whether or not a definition comes later.
    pub forward: bool,
}

/// `template <params> declaration`
#[derive(Clone, Debug)]
pub struct TemplateDecl {
    /// Parameters in order.
    pub params: Vec<TemplateParam>,
    /// The function or struct.
    pub item: Templated,
    /// The arguments of an explicit specialisation of a function template
    /// (`template <> bool f<bool, float>(float x) {..}`).
    pub specialization: Option<Vec<TemplateArg>>,
    /// Whole declaration.
    pub span: Span,
}

/// An explicit instantiation of a function template:
/// `template [[host_name("scale_float")]] kernel void scale<float>(device float*, uint);`
#[derive(Clone, Debug)]
pub struct Instantiation {
    /// The `[[host_name("...")]]` string, the entry point's name.
    pub host_name: Option<(String, Span)>,
    /// The declaration as written (no body); its name is the template's.
    pub function: FunctionDecl,
    /// Explicit template arguments (`<float>`), possibly empty.
    pub args: Vec<TemplateArg>,
    /// Declared as `decltype(f<float>) f<float>`: the function type is the
    /// template's, so `function` has no parameters or return type of its own.
    pub of_template: bool,
    /// Whole declaration.
    pub span: Span,
}

/// `enum [class] Name [: T] { A = 1, B };`
#[derive(Clone, Debug)]
pub struct EnumDecl {
    /// The enum's name (the typedef name for `typedef enum {...} Name;`).
    pub name: Option<Ident>,
    /// The tag of `typedef enum Tag {...} Name;`, another name for it.
    pub tag: Option<Ident>,
    /// `: T`
    pub underlying: Option<TypeSpec>,
    /// Enumerators with optional values.
    pub enumerators: Vec<(Ident, Option<Expr>)>,
    /// `enum class`/`enum struct`: the enumerators are named `E::A` only.
    pub scoped: bool,
    /// Whole declaration.
    pub span: Span,
}

/// `using Name = Type;` / `typedef Type Name[N];`
#[derive(Clone, Debug)]
pub struct Alias {
    /// The new name.
    pub name: Ident,
    /// What it names.
    pub ty: TypeSpec,
    /// Array dimensions of a typedef (`typedef float F4[4];`).
    pub array: Vec<Option<Expr>>,
    /// `__attribute__((aligned(N)))` and the like on a typedef.
    pub layout: Vec<LayoutAttribute>,
    /// Whole declaration.
    pub span: Span,
}

/// A GCC/clang attribute that can change memory layout (the others are
/// parsed and dropped, see `syntax::from_pest::gnu`).
#[derive(Clone, Debug)]
pub enum LayoutAttribute {
    /// `__attribute__((packed))` (also `__packed__`).
    Packed(Span),
    /// `__attribute__((aligned(N)))`; `None` for `aligned` alone.
    Aligned(Option<Expr>, Span),
}

impl LayoutAttribute {
    /// Where it is written.
    pub fn span(&self) -> Span {
        match self {
            LayoutAttribute::Packed(s) | LayoutAttribute::Aligned(_, s) => *s,
        }
    }

    /// `packed` or `aligned`.
    pub fn name(&self) -> &'static str {
        match self {
            LayoutAttribute::Packed(_) => "packed",
            LayoutAttribute::Aligned(..) => "aligned",
        }
    }
}

/// An address-space qualifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    /// `device`
    Device,
    /// `constant`
    Constant,
    /// `thread`
    Thread,
    /// `threadgroup`
    Threadgroup,
    /// `threadgroup_imageblock`, `ray_data`, `object_data`
    Other,
}

/// `*` or `&` after a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtrOp {
    /// `*`, with `const` after it (`T* const`).
    Pointer {
        /// The pointer itself is const.
        is_const: bool,
        /// The address space of the pointer object itself, written after
        /// the `*` (`device T* thread & p`: a reference to a `thread`
        /// pointer variable).
        space: Option<AddressSpace>,
    },
    /// `&`
    Reference,
    /// `(*)(..)`: a pointer to a function returning what is before it
    /// (its parameter types are not kept). Only a template parameter may
    /// have such a type, given a function's name
    /// (`sema::function_arguments`).
    Function,
}

/// A template argument: a type or a constant expression.
#[derive(Clone, Debug)]
pub enum TemplateArg {
    /// `float`
    Type(TypeSpec),
    /// `4`
    Expr(Expr),
}

/// A type as written: `const device float4*`.
#[derive(Clone, Debug, Default)]
pub struct TypeSpec {
    /// `const` before the base type.
    pub is_const: bool,
    /// `constexpr` before the base type.
    pub is_constexpr: bool,
    /// Address space, if written.
    pub space: Option<(AddressSpace, Span)>,
    /// Name path: `["metal", "float4"]`, `["unsigned int"]`.
    pub path: Vec<String>,
    /// Template arguments (`vec<float, 4>`).
    pub args: Vec<TemplateArg>,
    /// Pointer and reference declarators.
    pub ptr_ops: Vec<PtrOp>,
    /// Where the base type name is.
    pub name_span: Span,
    /// The whole type.
    pub span: Span,
}

impl TypeSpec {
    /// The name as written, `::`-joined.
    pub fn name(&self) -> String {
        self.path.join("::")
    }
}

/// A `[[name(args)]]` attribute.
#[derive(Clone, Debug)]
pub struct Attribute {
    /// `buffer`, `thread_position_in_grid`, ...
    pub name: String,
    /// Arguments.
    pub args: Vec<Expr>,
    /// Where.
    pub span: Span,
}

/// `struct S { members };`
#[derive(Clone, Debug)]
pub struct StructDecl {
    /// Its name.
    pub name: Ident,
    /// Its data members, one per declarator.
    pub members: Vec<Member>,
    /// Whole declaration.
    pub span: Span,
    /// For an instance of a struct template: the template's name and the
    /// arguments, written out (so that deduction can match `P<T>` to it).
    pub instance_of: Option<(String, Vec<TemplateArg>)>,
    /// `__attribute__((packed))`, `__attribute__((aligned(N)))` on the struct.
    pub layout: Vec<LayoutAttribute>,
    /// Declared with `union`: every member starts at offset 0.
    pub is_union: bool,
    /// Its anonymous unions and structs (`union { float f; uint u; };`),
    /// in order: member `anonymous::k` is the `k`th, whose members are
    /// found as members of this struct.
    pub anonymous: Vec<StructDecl>,
    /// What its own declaration says about being POD for the purpose of
    /// layout (C++03 [class]/4, as the Itanium ABI uses it): no
    /// user-declared constructor or copy assignment, no default member
    /// initializer, no private or protected data member, no base class.
    /// The members' types are checked where the struct is declared.
    pub pod_candidate: bool,
}

/// The name of the data member that holds the `k`th base class subobject
/// of a struct (`struct D : B`), a name no source can write. The base
/// subobjects are the struct's first members, in the order of the base
/// specifiers; members of the bases are found as members of the struct.
pub fn base_member_name(k: usize) -> String {
    format!("base::{k}")
}

/// True if `name` is a [`base_member_name`].
pub fn is_base_member(name: &str) -> bool {
    name.starts_with("base::")
}

/// The name of the member that holds the `k`th anonymous union or struct
/// of a struct (a name no source can write).
pub fn anonymous_member_name(k: usize) -> String {
    format!("anonymous::{k}")
}

/// One data member.
#[derive(Clone, Debug)]
pub struct Member {
    /// Type.
    pub ty: TypeSpec,
    /// Name.
    pub name: Ident,
    /// `[N]` suffixes.
    pub array: Vec<Option<Expr>>,
    /// Attributes.
    pub attributes: Vec<Attribute>,
    /// `__attribute__((packed))`, `__attribute__((aligned(N)))` on the member.
    pub layout: Vec<LayoutAttribute>,
    /// The default member initializer (`int n = 0;`, `float x{1.0f};`).
    pub default: Option<Init>,
    /// A bit-field's width (`uint a : 4;`); an unnamed one (`uint : 0;`)
    /// is named [`unnamed_bit_field_name`].
    pub bits: Option<Expr>,
}

/// The name given to an unnamed bit-field (`uint : 4;`) whose width
/// starts at byte `at`: unique, and no source can name it.
pub fn unnamed_bit_field_name(at: usize) -> String {
    format!("@unnamed{at}")
}

/// `kernel`, `vertex` or `fragment`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `kernel`
    Kernel,
    /// `vertex`
    Vertex,
    /// `fragment`
    Fragment,
}

/// A function.
#[derive(Clone, Debug)]
pub struct FunctionDecl {
    /// Entry-point qualifier, with its span.
    pub stage: Option<(Stage, Span)>,
    /// Attributes before or after the return type.
    pub attributes: Vec<Attribute>,
    /// Return type.
    pub ret: TypeSpec,
    /// Name.
    pub name: Ident,
    /// Parameters.
    pub params: Vec<Param>,
    /// Body; `None` for a declaration.
    pub body: Option<Block>,
    /// Whole definition.
    pub span: Span,
}

/// A function parameter.
#[derive(Clone, Debug)]
pub struct Param {
    /// Type.
    pub ty: TypeSpec,
    /// Name (may be omitted).
    pub name: Option<Ident>,
    /// `[N]` suffixes.
    pub array: Vec<Option<Expr>>,
    /// Attributes.
    pub attributes: Vec<Attribute>,
    /// The default argument (`float k = 2.0f`).
    pub default: Option<Expr>,
    /// `Ts... xs`: a function parameter pack, one parameter per element of
    /// the template parameter packs its type names (expanded when the
    /// template is instantiated, `sema::subst`).
    pub pack: bool,
    /// Whole parameter.
    pub span: Span,
}

/// A variable declaration with one or more declarators.
#[derive(Clone, Debug)]
pub struct VarDecl {
    /// Shared type.
    pub ty: TypeSpec,
    /// Declarators.
    pub declarators: Vec<Declarator>,
    /// Whole declaration.
    pub span: Span,
}

/// `name[N] = init`
#[derive(Clone, Debug)]
pub struct Declarator {
    /// Name.
    pub name: Ident,
    /// `[N]` suffixes (`[]` is `None`).
    pub array: Vec<Option<Expr>>,
    /// Initializer.
    pub init: Option<Init>,
    /// Attributes (`[[function_constant(0)]]`).
    pub attributes: Vec<Attribute>,
    /// Whole declarator.
    pub span: Span,
}

/// An initializer.
#[derive(Clone, Debug)]
pub enum Init {
    /// `= expr`
    Expr(Expr),
    /// `= { ... }` or `{ ... }`
    List(Vec<Init>, Span),
    /// `(a, b)` direct initialization.
    Paren(Vec<Expr>, Span),
    /// `.member = value` (or `.member{..}`), an element of a braced list.
    Designated(Ident, Box<Init>, Span),
}

impl Init {
    /// Where it is.
    pub fn span(&self) -> Span {
        match self {
            Init::Expr(e) => e.span,
            Init::List(_, s) | Init::Paren(_, s) | Init::Designated(_, _, s) => *s,
        }
    }
}

/// `{ statements }`
#[derive(Clone, Debug, Default)]
pub struct Block {
    /// Statements.
    pub stmts: Vec<Stmt>,
    /// Braces included.
    pub span: Span,
}

/// A statement.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Where.
    pub span: Span,
}

/// Statement kinds.
#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `{ ... }`
    Block(Block),
    /// `static_assert(cond, "message");` at function scope.
    StaticAssert(StaticAssert),
    /// `T a = 1, b;`
    Decl(VarDecl),
    /// `expr;`
    Expr(Expr),
    /// `if (c) a else b`, `if constexpr (c) a else b`
    If {
        /// Condition.
        cond: Expr,
        /// Taken branch.
        then: Box<Stmt>,
        /// Else branch.
        otherwise: Option<Box<Stmt>>,
        /// `if constexpr`: the condition is a constant and the other branch
        /// is discarded, not instantiated ([stmt.if]/2).
        is_constexpr: bool,
    },
    /// `for (init; cond; step) body`
    For {
        /// Init statement.
        init: Option<Box<Stmt>>,
        /// Condition (true if absent).
        cond: Option<Expr>,
        /// Step.
        step: Option<Expr>,
        /// Body.
        body: Box<Stmt>,
    },
    /// `for (T x : range) body` (C++11 range-based `for`), over an array.
    RangeFor {
        /// The loop variable's type (`auto`, `thread auto&`, `float`).
        ty: TypeSpec,
        /// The loop variable.
        name: Ident,
        /// The array iterated over.
        range: Expr,
        /// Body.
        body: Box<Stmt>,
    },
    /// `while (c) body`
    While {
        /// Condition.
        cond: Expr,
        /// Body.
        body: Box<Stmt>,
    },
    /// `do body while (c);`
    DoWhile {
        /// Body.
        body: Box<Stmt>,
        /// Condition.
        cond: Expr,
    },
    /// `switch (e) { ... }`
    Switch {
        /// Selector.
        selector: Expr,
        /// Labels and statements in order.
        items: Vec<SwitchItem>,
    },
    /// `break;`
    Break,
    /// `continue;`
    Continue,
    /// `return e;`
    Return(Option<Expr>),
    /// `;`
    Empty,
    /// `using T = float;` or `typedef float T;` in a function: names the
    /// type for the rest of the enclosing block.
    Alias(Alias),
    /// A struct, class or union declared in a function: names the type
    /// for the rest of the enclosing block.
    LocalType(Box<LocalType>),
}

/// A class declared in a function body (C++ [class.local]): `struct S {..};`,
/// `struct {..} v;`, `typedef struct [Tag] {..} T;`, `using T = struct {..};`.
/// Its name is visible from here to the end of the block and hides outer
/// names; lowering declares one program-scope struct per enclosing
/// function (each template instance its own), named
/// [`local_type_name`], and substitutes that name for the rest of the
/// block.
#[derive(Clone, Debug)]
pub struct LocalType {
    /// The struct, named as written (the typedef name of `typedef struct
    /// {..} T;`); an unnamed one is named [`UNNAMED_LOCAL_TYPE`].
    pub decl: StructDecl,
    /// Its other name: the tag of `typedef struct Tag {..} T;`.
    pub tag: Option<Ident>,
    /// What its nested structs, member aliases, member functions and
    /// constructors became, named `S::m` as for a program-scope struct
    /// (`syntax::members`).
    pub members: Vec<Item>,
    /// The objects declared with it (`struct {..} a, b = {..};`): their
    /// type's path is the struct's name as written.
    pub objects: Option<VarDecl>,
}

/// The name an unnamed local struct (`struct { float a; } v;`) has until
/// lowering names it: no source can write it.
pub const UNNAMED_LOCAL_TYPE: &str = "(unnamed struct)";

/// The name of local struct `name` declared in function `function`: the
/// `ordinal`th of that name there (counted from 0) is `function::name`,
/// later ones `function::name@ordinal` (no source can write either).
pub fn local_type_name(function: &str, name: &str, ordinal: usize) -> String {
    match ordinal {
        0 => format!("{function}::{name}"),
        n => format!("{function}::{name}@{n}"),
    }
}

/// One element of a switch body.
#[derive(Clone, Debug)]
pub enum SwitchItem {
    /// `case e:` (`None` is `default:`)
    Label(Option<Expr>, Span),
    /// A statement.
    Stmt(Stmt),
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `||`
    LogicalOr,
    /// `&&`
    LogicalAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `&`
    BitAnd,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
}

impl BinaryOp {
    /// The C++ spelling.
    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
        match self {
            LogicalOr => "||",
            LogicalAnd => "&&",
            BitOr => "|",
            BitXor => "^",
            BitAnd => "&",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            Shl => "<<",
            Shr => ">>",
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
        }
    }
}

/// Prefix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-`
    Neg,
    /// `+`
    Plus,
    /// `!`
    Not,
    /// `~`
    BitNot,
    /// `*p`
    Deref,
    /// `&x`
    AddrOf,
    /// `++x`
    PreInc,
    /// `--x`
    PreDec,
}

/// How a cast was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastKind {
    /// `(T)x`
    CStyle,
    /// `static_cast<T>(x)`
    Static,
    /// `reinterpret_cast<T>(x)`
    Reinterpret,
    /// `const_cast<T>(x)`
    Const,
    /// `as_type<T>(x)`
    AsType,
}

/// Literal suffixes that decide the type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiteralSuffix {
    /// none
    None,
    /// `u`
    Unsigned,
    /// `l`
    Long,
    /// `ul`
    UnsignedLong,
    /// `f`
    Float,
    /// `h`
    Half,
    /// `bf`
    BFloat,
}

/// An expression.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// Expression kinds.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// Integer literal; `hex` tells C++'s typing rule to also try unsigned.
    Int {
        /// Value.
        value: u64,
        /// Suffix.
        suffix: LiteralSuffix,
        /// Written in hex, octal or binary.
        non_decimal: bool,
    },
    /// Floating-point literal.
    Float {
        /// Value.
        value: f64,
        /// Suffix.
        suffix: LiteralSuffix,
    },
    /// `true`/`false`
    Bool(bool),
    /// A string literal (adjacent ones joined, contents as written between
    /// the quotes): only logging calls take one (`lower/metal/logging.rs`).
    Str(String),
    /// A (qualified) name.
    Name(Vec<String>),
    /// A name with template arguments (`vec<float, 4>`).
    Templated(Vec<String>, Vec<TemplateArg>),
    /// `a op b`
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `a = b`, `a op= b`
    Assign(Option<BinaryOp>, Box<Expr>, Box<Expr>),
    /// Prefix operator.
    Unary(UnaryOp, Box<Expr>),
    /// `x++` (true) / `x--` (false)
    PostIncDec(bool, Box<Expr>),
    /// `c ? a : b`
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `f(args)`, `float4(args)`
    Call(Box<Expr>, Vec<Expr>),
    /// `a[i]`
    Index(Box<Expr>, Box<Expr>),
    /// `a.m` (false) or `a->m` (true)
    Member(Box<Expr>, Ident, bool),
    /// `a.template m<N>` (a [`ExprKind::Member`]) with explicit template
    /// arguments of member function template `m`; only called.
    MemberTemplate(Box<Expr>, Vec<TemplateArg>),
    /// A cast.
    Cast(CastKind, TypeSpec, Box<Expr>),
    /// `{a, b}` in expression position (initializers, `x = {..}`)
    InitList(Vec<Init>),
    /// `T{a, b}`
    BraceConstruct(Vec<String>, Vec<Init>),
    /// `a, b`
    Comma(Vec<Expr>),
    /// `sizeof(...)`, `alignof(...)` or `__is_empty(...)`.
    SizeOf {
        /// Which of them.
        query: TypeQuery,
        /// The operand; a plain name parses as a type and may be a variable.
        operand: SizeOperand,
    },
    /// `pattern...` in a call's arguments, a braced list or a template
    /// argument list: one copy of the pattern per element of the packs it
    /// names. Only a template's declaration holds one; instantiation
    /// expands it (`sema::subst`).
    PackExpansion(Box<Expr>),
    /// `Ts...` (a type pattern) in a template argument list, as
    /// [`ExprKind::PackExpansion`] for types.
    TypePackExpansion(Box<TypeSpec>),
    /// `sizeof...(Ts)`: the number of elements of a pack.
    SizeofPack(Ident),
    /// A lambda expression (`lower::cxx::lambdas`).
    Lambda(Box<Lambda>),
    /// A fold expression (C++17 [expr.prim.fold], which clang accepts in
    /// Metal): `(xs + ...)` (right), `(... + xs)` (left), each with an
    /// optional initial operand (`(0 + ... + xs)`).
    Fold {
        /// The operator; `None` is the comma operator (`(f(xs), ...)`).
        op: Option<BinaryOp>,
        /// The pattern, naming a pack.
        pattern: Box<Expr>,
        /// The initial operand of a binary fold.
        init: Option<Box<Expr>>,
        /// `(... op pattern)` or `(init op ... op pattern)`.
        left: bool,
    },
}

/// A lambda expression: `[&](auto i) { .. }` (C++11 [expr.prim.lambda]).
#[derive(Clone, Debug)]
pub struct Lambda {
    /// `[&]` (`Some(true)`), `[=]` (`Some(false)`), neither (`None`).
    pub default_by_reference: Option<bool>,
    /// Captures named in the list: the name and whether by reference.
    pub captures: Vec<(Ident, bool)>,
    /// `this`, `*this` or an init-capture (`x = e`) in the list, refused
    /// where it is lowered: its place.
    pub unsupported_capture: Option<Span>,
    /// The parameters (`auto` ones make the call operator a template).
    pub params: Vec<Param>,
    /// `-> T`, if written.
    pub ret: Option<TypeSpec>,
    /// The body.
    pub body: Block,
    /// `mutable`: the call operator may change what was captured by value.
    pub mutable: bool,
}

/// What a [`ExprKind::SizeOf`] asks of its operand's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeQuery {
    /// `sizeof`: its Metal size, a `size_t`.
    Size,
    /// `alignof`: its Metal alignment, a `size_t`.
    Align,
    /// clang's `__is_empty(T)` (C++ [meta.unary.prop] `is_empty`): a
    /// struct with no non-static data members and no non-empty base, a
    /// `bool`.
    IsEmpty,
}

/// The operand of `sizeof`/`alignof`/`__is_empty`.
#[derive(Clone, Debug)]
pub enum SizeOperand {
    /// A type (or a plain name, which may turn out to be a variable).
    Type(TypeSpec),
    /// An expression, never evaluated.
    Expr(Box<Expr>),
}
