//! The typed program representation shared by the generator, the MSL
//! emitter and the CPU evaluator.
//!
//! Every guard that keeps a program free of Metal's undefined behaviour
//! (divisor masks, shift masks, index masks, clamps before float→int
//! conversions) is an ordinary node of this tree, so the evaluator checks
//! that the guards really work instead of trusting the generator.

/// The element types the generator uses.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Scalar {
    Bool,
    Uchar,
    Short,
    Ushort,
    Int,
    Uint,
    Float,
}

impl Scalar {
    /// The MSL spelling.
    pub fn msl(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Uchar => "uchar",
            Scalar::Short => "short",
            Scalar::Ushort => "ushort",
            Scalar::Int => "int",
            Scalar::Uint => "uint",
            Scalar::Float => "float",
        }
    }

    /// True for the types C++ promotes to `int` before arithmetic.
    pub fn is_narrow(self) -> bool {
        matches!(
            self,
            Scalar::Bool | Scalar::Uchar | Scalar::Short | Scalar::Ushort
        )
    }

    /// C++ integral promotion: every narrow type fits in `int`.
    pub fn promoted(self) -> Scalar {
        if self.is_narrow() {
            Scalar::Int
        } else {
            self
        }
    }

    /// C++'s usual arithmetic conversions for two scalar operands.
    pub fn common(a: Scalar, b: Scalar) -> Scalar {
        let (a, b) = (a.promoted(), b.promoted());
        if a == Scalar::Float || b == Scalar::Float {
            Scalar::Float
        } else if a == Scalar::Uint || b == Scalar::Uint {
            Scalar::Uint
        } else {
            Scalar::Int
        }
    }
}

/// A scalar (`width == 1`) or vector type.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Ty {
    /// The element type.
    pub scalar: Scalar,
    /// Components: 1 for scalars, 2–4 for vectors.
    pub width: u8,
}

impl Ty {
    /// The scalar type `s`.
    pub const fn scalar(s: Scalar) -> Ty {
        Ty {
            scalar: s,
            width: 1,
        }
    }

    /// The vector type `sN`.
    pub const fn vector(s: Scalar, width: u8) -> Ty {
        Ty { scalar: s, width }
    }

    /// True for vectors.
    pub fn is_vector(self) -> bool {
        self.width > 1
    }

    /// The same shape with another element type.
    pub fn with_scalar(self, s: Scalar) -> Ty {
        Ty {
            scalar: s,
            width: self.width,
        }
    }

    /// The MSL spelling (`int`, `float4`).
    pub fn msl(self) -> String {
        if self.width == 1 {
            self.scalar.msl().to_string()
        } else {
            format!("{}{}", self.scalar.msl(), self.width)
        }
    }
}

/// Index of a variable in [`Program::vars`].
pub type VarId = usize;
/// Index of a helper function in [`Program::functions`].
pub type FnId = usize;

/// A local variable, parameter or loop counter.
#[derive(Clone, Debug)]
pub struct Var {
    /// The MSL name (unique in the program).
    pub name: String,
    /// The type (of each element, for arrays).
    pub ty: Ty,
    /// `Some(n)` for a C array `T name[n]` of scalars.
    pub array_len: Option<u8>,
    /// Loop counters are never assigned (their trip count is fixed).
    pub read_only: bool,
}

/// The kernel's buffers. Each thread owns `stride` consecutive elements.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Buffer {
    InInt,
    InFloat,
    InShort,
    OutInt,
    OutUint,
    OutFloat,
    OutShort,
    OutUchar,
}

impl Buffer {
    /// Every buffer in Metal index order.
    pub const ALL: [Buffer; 8] = [
        Buffer::InInt,
        Buffer::InFloat,
        Buffer::InShort,
        Buffer::OutInt,
        Buffer::OutUint,
        Buffer::OutFloat,
        Buffer::OutShort,
        Buffer::OutUchar,
    ];
    /// The buffers the kernel writes.
    pub const OUTPUTS: [Buffer; 5] = [
        Buffer::OutInt,
        Buffer::OutUint,
        Buffer::OutFloat,
        Buffer::OutShort,
        Buffer::OutUchar,
    ];

    /// The argument name in the kernel.
    pub fn name(self) -> &'static str {
        match self {
            Buffer::InInt => "in_i",
            Buffer::InFloat => "in_f",
            Buffer::InShort => "in_s",
            Buffer::OutInt => "out_i",
            Buffer::OutUint => "out_u",
            Buffer::OutFloat => "out_f",
            Buffer::OutShort => "out_s",
            Buffer::OutUchar => "out_c",
        }
    }

    /// The element type.
    pub fn element(self) -> Scalar {
        match self {
            Buffer::InInt | Buffer::OutInt => Scalar::Int,
            Buffer::OutUint => Scalar::Uint,
            Buffer::InFloat | Buffer::OutFloat => Scalar::Float,
            Buffer::InShort | Buffer::OutShort => Scalar::Short,
            Buffer::OutUchar => Scalar::Uchar,
        }
    }

    /// Elements per thread. The narrow outputs use 3 so that neighbouring
    /// threads share 32-bit words (the translator's sub-word stores).
    pub fn stride(self) -> u32 {
        match self {
            Buffer::OutShort | Buffer::OutUchar => 3,
            _ => 4,
        }
    }

    /// Bytes per element in Metal's layout.
    pub fn element_size(self) -> usize {
        match self.element() {
            Scalar::Short => 2,
            Scalar::Uchar => 1,
            _ => 4,
        }
    }

    /// The `[[buffer(n)]]` index.
    pub fn index(self) -> u32 {
        Buffer::ALL.iter().position(|b| *b == self).unwrap() as u32
    }

    /// True for the buffers the kernel may write.
    pub fn is_output(self) -> bool {
        Buffer::OUTPUTS.contains(&self)
    }
}

/// Unary operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum UnOp {
    Neg,
    BitNot,
    Not,
}

/// Binary operators (C++ semantics with Metal's types).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    LogicalAnd,
    LogicalOr,
}

impl BinOp {
    /// The C++ token.
    pub fn token(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::LogicalAnd => "&&",
            BinOp::LogicalOr => "||",
        }
    }

    /// True for the comparisons (bool results).
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }
}

/// The metal_stdlib functions the generator calls.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Builtin {
    Min,
    Max,
    Abs,
    Floor,
    Fma,
    Sqrt,
    Clamp,
    /// `select(a, b, c)`: `c ? b : a`, per component.
    Select,
    Any,
    All,
}

impl Builtin {
    /// The MSL name.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Min => "min",
            Builtin::Max => "max",
            Builtin::Abs => "abs",
            Builtin::Floor => "floor",
            Builtin::Fma => "fma",
            Builtin::Sqrt => "sqrt",
            Builtin::Clamp => "clamp",
            Builtin::Select => "select",
            Builtin::Any => "any",
            Builtin::All => "all",
        }
    }
}

/// A typed expression. Expressions have no side effects.
#[derive(Clone, Debug)]
pub struct Expr {
    /// The form and operands.
    pub kind: ExprKind,
    /// The C++ type of the expression.
    pub ty: Ty,
}

/// The expression forms.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// An integer literal of type `ty` (`int` or `uint`).
    IntLit(i64),
    FloatLit(f32),
    BoolLit(bool),
    /// `tid` (`thread_position_in_grid`, a `uint`).
    Tid,
    Var(VarId),
    /// `arr[index]`; the index must be in range.
    Element(VarId, Box<Expr>),
    /// `buf[tid * stride + slot]`; the slot must be below the stride.
    Load(Buffer, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`.
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    Builtin(Builtin, Vec<Expr>),
    /// A helper without reference parameters.
    Call(FnId, Vec<Expr>),
    /// An explicit conversion to `ty`, spelled as the `u8` says (see the
    /// emitter).
    Cast(Box<Expr>, u8),
    /// Components by index (`v.zx`).
    Swizzle(Box<Expr>, Vec<u8>),
    /// A vector built from scalars and vectors (`float4(a, v.xy, b)`).
    Construct(Vec<Expr>),
}

impl Expr {
    /// An `int` literal.
    pub fn int(v: i64) -> Expr {
        Expr {
            kind: ExprKind::IntLit(v),
            ty: Ty::scalar(Scalar::Int),
        }
    }

    /// An integer literal of type `s` (`int` or `uint`) or of its vector.
    pub fn int_of(v: i64, s: Scalar) -> Expr {
        Expr {
            kind: ExprKind::IntLit(v),
            ty: Ty::scalar(s),
        }
    }

    /// A `float` literal.
    pub fn float(v: f32) -> Expr {
        Expr {
            kind: ExprKind::FloatLit(v),
            ty: Ty::scalar(Scalar::Float),
        }
    }

    /// `a op b` with type `ty`.
    pub fn binary(op: BinOp, a: Expr, b: Expr, ty: Ty) -> Expr {
        Expr {
            kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
            ty,
        }
    }

    /// A call of a builtin with type `ty`.
    pub fn builtin(f: Builtin, args: Vec<Expr>, ty: Ty) -> Expr {
        Expr {
            kind: ExprKind::Builtin(f, args),
            ty,
        }
    }

    /// An explicit conversion of `e` to `ty`.
    pub fn cast(e: Expr, ty: Ty, spelling: u8) -> Expr {
        Expr {
            kind: ExprKind::Cast(Box::new(e), spelling),
            ty,
        }
    }
}

/// Something a statement can assign.
#[derive(Clone, Debug)]
pub enum Place {
    Var(VarId),
    /// Distinct components of a vector variable.
    Swizzle(VarId, Vec<u8>),
    /// An array element; the index must be in range.
    Element(VarId, Expr),
}

/// A call argument.
#[derive(Clone, Debug)]
pub enum Arg {
    Value(Expr),
    /// A whole variable bound to a `thread T&` parameter.
    Ref(VarId),
}

/// A `case` of a switch (`label == None` is `default`).
#[derive(Clone, Debug)]
pub struct Case {
    /// The `case` value; `None` for `default`.
    pub label: Option<i32>,
    /// The statements (emitted in a block of their own).
    pub body: Vec<Stmt>,
    /// No `break` at the end: control falls into the next case.
    pub falls_through: bool,
}

/// Statements.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `T name = init;`
    Decl(VarId, Expr),
    /// `T name[n] = { ... };`
    DeclArray(VarId, Vec<Expr>),
    /// `place = value;` or `place op= value;`
    Assign(Place, Option<BinOp>, Expr),
    /// `buf[tid * stride + slot] (op)= value;`
    Store(Buffer, Expr, Option<BinOp>, Expr),
    /// `[place =] f(args);` for a helper with reference parameters.
    CallRefs(Option<Place>, FnId, Vec<Arg>),
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `for (int i = 0; i < count; i++) body`
    For(VarId, u32, Vec<Stmt>),
    Break,
    Continue,
    Switch(Expr, Vec<Case>),
    /// The last statement of a helper.
    Return(Option<Expr>),
}

/// A helper function.
#[derive(Clone, Debug)]
pub struct Function {
    /// The MSL name.
    pub name: String,
    /// Parameters and whether each is a `thread T&`.
    pub params: Vec<(VarId, bool)>,
    /// The return type; `None` for `void`.
    pub ret: Option<Ty>,
    /// The statements, ending with a `return`.
    pub body: Vec<Stmt>,
}

impl Function {
    /// True when the function can appear inside expressions.
    pub fn is_pure(&self) -> bool {
        self.ret.is_some() && self.params.iter().all(|(_, r)| !r)
    }
}

/// The initial contents of every buffer, by [`Buffer::index`]: 32-bit
/// words for `int`/`uint`/`float` (as bits), sign-extended values for the
/// narrow ones.
pub type BufferData = Vec<Vec<u32>>;

/// One generated program: a kernel over `threads` threads.
#[derive(Clone, Debug)]
pub struct Program {
    /// The seed that generated it.
    pub seed: u64,
    /// Every variable and parameter, by [`VarId`].
    pub vars: Vec<Var>,
    /// The helpers, in emission order (each calls only earlier ones).
    pub functions: Vec<Function>,
    /// The kernel body.
    pub kernel: Vec<Stmt>,
    /// The grid (`dispatchThreads` width).
    pub threads: u32,
    /// Threads per threadgroup.
    pub threadgroup: u32,
    /// Elements of each buffer, `threads * stride` plus a tail that must
    /// stay untouched.
    pub data: BufferData,
}

/// Name of the kernel of every program.
pub const KERNEL: &str = "diff";
