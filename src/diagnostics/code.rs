//! Stable diagnostic codes.
//!
//! Every diagnostic carries a [`Code`]: scripts and editors match on it, so
//! a code never changes meaning once released (new kinds get new codes).
//! The first digit after `E`/`W` names the stage that found the problem:
//! `0` reading the input, `1` preprocessing, `2` parsing, `3` semantic
//! analysis, `4` lowering to WGSL, `9` internal errors (bugs); kinds of
//! problem that any stage can find (a type mismatch found while lowering a
//! function body) keep the code of the stage that defines them. Every
//! diagnostic is made with its code (`sema::Error::coded`,
//! `syntax::Error::coded`, the [`crate::diagnostics::Diagnostic`]
//! constructors): nothing falls back to a generic one. The generic `x00`
//! codes stay defined for compatibility, and no diagnostic uses them
//! (`tests/error_codes.rs` checks the sources), except `E0200`, which is
//! the parser's code for text the grammar does not expect.
//! `docs/DIAGNOSTICS.md` documents every code (a test checks it).

use std::fmt;

/// Declares [`Code`], its list and its text form from one table, so that
/// they cannot drift apart.
macro_rules! codes {
    ($( $(#[doc = $doc:literal])* $name:ident = $text:literal, )*) => {
        /// A stable diagnostic code (`E0301`, `W0401`, ...).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $( $(#[doc = $doc])* $name, )*
        }

        impl Code {
            /// Every code, in numeric order.
            pub const ALL: &'static [Code] = &[$(Code::$name,)*];

            /// The code as users see it: `E0301`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Code::$name => $text, )*
                }
            }
        }
    };
}

codes! {
    /// Formerly an error no specific code described; no longer used.
    Error = "E0000",
    /// A file cannot be read.
    Unreadable = "E0001",
    /// A source file is not UTF-8.
    InvalidUtf8 = "E0002",
    /// A NUL byte in a source file.
    NulByte = "E0003",
    /// An output file, folder or standard output that cannot be written.
    Unwritable = "E0004",
    /// A command this build does not have (built without the `runner` feature).
    NotAvailable = "E0005",
    /// A GPU run, render or conformance case that failed (adapter, device
    /// limits, resources, validation, time-out).
    RunFailed = "E0006",
    /// A command-line request that cannot be carried out as given (an
    /// option given twice, a missing choice, no conformance cases).
    Usage = "E0007",
    /// More errors than the error limit (`--error-limit`): the rest are
    /// not reported.
    TooManyErrors = "E0008",
    /// Formerly a preprocessor error with no specific code; no longer used.
    Preprocess = "E0100",
    /// `#include` names a file found in no search folder.
    IncludeNotFound = "E0101",
    /// `#include` nested deeper than the preprocessor's limit.
    IncludeTooDeep = "E0102",
    /// A malformed `#define` or `-D`.
    MacroDefinition = "E0103",
    /// A macro invocation that cannot be expanded (arguments, recursion depth).
    MacroExpansion = "E0104",
    /// `#error`.
    ErrorDirective = "E0105",
    /// `#if`/`#else`/`#endif` that do not pair up.
    Conditional = "E0106",
    /// A malformed `#if` expression.
    ConditionExpression = "E0107",
    /// A malformed directive (`#line`, `#include`'s file name, `_Pragma`'s operand).
    MalformedDirective = "E0108",
    /// A `#` directive the preprocessor does not know.
    UnknownDirective = "E0109",
    /// A `/*` comment that does not end.
    UnterminatedComment = "E0110",
    /// A syntax error: text the grammar does not expect here (the message
    /// says what was expected).
    Syntax = "E0200",
    /// Brackets nested deeper than the parser's limit.
    NestingTooDeep = "E0201",
    /// An integer or floating-point literal out of range for its type.
    LiteralOutOfRange = "E0202",
    /// C++ that Metal does not have (exceptions, `new`, virtual functions).
    NotInMetal = "E0203",
    /// Formerly a semantic error with no specific code; no longer used.
    Semantic = "E0300",
    /// A name that is not declared in scope.
    UndeclaredIdentifier = "E0301",
    /// A type name that is not declared.
    UnknownType = "E0302",
    /// A call to a function that is not declared.
    UndeclaredFunction = "E0303",
    /// No overload accepts the call's arguments.
    NoMatchingOverload = "E0304",
    /// Several overloads accept the call's arguments equally well.
    AmbiguousCall = "E0305",
    /// A function that calls itself, directly or not.
    Recursion = "E0306",
    /// A member that the type does not have.
    UnknownMember = "E0307",
    /// An attribute that is unknown or misplaced.
    InvalidAttribute = "E0308",
    /// A value whose type does not convert to the type needed.
    TypeMismatch = "E0309",
    /// A name declared twice in one scope.
    Redefinition = "E0310",
    /// A constant index outside a fixed-size array, vector or matrix.
    IndexOutOfBounds = "E0311",
    /// A name (or a template use) that could mean several declarations.
    AmbiguousName = "E0312",
    /// An expression that must be a compile-time constant and is not.
    NotConstant = "E0313",
    /// A constant expression whose value cannot be computed (division by zero).
    ConstantEvaluation = "E0314",
    /// Operands an operator does not accept (types, pointers, atomics).
    InvalidOperands = "E0315",
    /// An explicit cast or reinterpretation that is not allowed.
    InvalidConversion = "E0316",
    /// An initializer or constructor that does not fit its type, or a
    /// missing one.
    InvalidInitializer = "E0317",
    /// A write to something read-only or not an lvalue.
    NotAssignable = "E0318",
    /// A pointer, reference or variable in the wrong address space.
    AddressSpace = "E0319",
    /// A kernel, vertex or fragment function that breaks the rules for
    /// entry points (return type, arguments, `[[stage_in]]`, outputs).
    EntryPointSignature = "E0320",
    /// An attribute argument that is malformed, out of range or used twice.
    InvalidAttributeArgument = "E0321",
    /// An argument a standard-library function does not accept (beyond
    /// count and type: a memory order, `mem_flags`, a pointer to an atomic).
    InvalidBuiltinArgument = "E0322",
    /// A texture or sampler used as its type, access, format or kind does
    /// not allow.
    TextureUsage = "E0323",
    /// `break`, `continue`, `return` or `switch` labels where they are not allowed.
    ControlFlow = "E0324",
    /// A name or expression of the wrong kind (a type for a value, a
    /// function as a value, a call of a non-function, a `void` value).
    WrongKind = "E0325",
    /// A template declared or used wrongly (arguments, deduction,
    /// specialisation).
    Template = "E0326",
    /// A type that is malformed or not allowed where it is used.
    InvalidType = "E0327",
    /// A `static_assert` whose condition is false.
    StaticAssertFailed = "E0328",
    /// A `constexpr sampler` with an unknown, malformed or inconsistent property.
    InvalidSampler = "E0329",
    /// A function used in a stage that does not have it (`discard_fragment` in a kernel).
    WrongStage = "E0330",
    /// An out-of-line member definition that matches no declaration in its struct.
    OutOfLineDefinition = "E0331",
    /// A `[[stitchable]]` function whose signature fits none of SwiftUI's
    /// effect shapes, or with an argument SwiftUI cannot pass.
    StitchableSignature = "E0332",
    /// A function that is declared but defined in no file of the translation
    /// (Metal links a library's files; WGSL has no linker).
    FunctionNotDefined = "E0333",
    /// A function constant's value needed at translation (an array size,
    /// a `case` label, ...) where none was given (`--function-constant`).
    FunctionConstantWithoutValue = "E0336",
    /// A value given for a function constant at translation that does not
    /// fit its declared type.
    InvalidFunctionConstantValue = "E0337",
    /// Formerly a lowering error with no specific code; no longer used.
    Lowering = "E0400",
    /// Valid MSL this translator does not handle.
    Unsupported = "E0401",
    /// MSL with no WebGPU equivalent (it may have a wgpu one).
    NoWebGpuEquivalent = "E0402",
    /// A size, depth or count beyond a WGSL, WebGPU or translator limit.
    LimitExceeded = "E0403",
    /// `--entry` names no kernel, vertex or fragment function.
    UnknownEntryPoint = "E0404",
    /// Two arguments at one binding, or a binding beyond WebGPU's limits.
    Binding = "E0405",
    /// A translation option missing or wrong for the shader
    /// (`--threadgroup-memory`, `--texture-format`).
    InvalidOption = "E0406",
    /// A struct with pointer, reference, texture or sampler members used in
    /// a way that needs it as a WGSL value, or whose pointer members are not
    /// known at translation time (`src/lower/metal/pointer_members.rs`).
    PointerMember = "E0407",
    /// A SIMD-group function in non-uniform control flow where 32-lane SIMD
    /// groups are emulated (`--simd emulated32`).
    SimdNonUniform = "E0410",
    /// A bug in msl2wgsl: the generated module does not validate, or an
    /// internal check failed.
    Internal = "E0900",
    /// Formerly a warning no specific code described; no longer used.
    Warning = "W0000",
    /// Formerly a preprocessor warning with no specific code; no longer used.
    PreprocessWarning = "W0100",
    /// `#warning`.
    WarningDirective = "W0101",
    /// A macro defined again with a different body.
    MacroRedefined = "W0102",
    /// A `#pragma` ignored: unknown, or malformed.
    PragmaIgnored = "W0103",
    /// `#pragma message`.
    PragmaMessage = "W0104",
    /// Tokens after a directive that takes none (or no more), ignored.
    ExtraTokens = "W0105",
    /// `#include_next` where there is no next folder to search from.
    IncludeNextMisplaced = "W0106",
    /// A namespace-scope redefinition read as hiding the earlier definition
    /// (`src/sema/redefinition.rs`).
    RedefinitionHides = "W0300",
    /// Formerly a lowering warning with no specific code; no longer used.
    LoweringWarning = "W0400",
    /// An attribute WGSL has no equivalent for, dropped.
    AttributeDropped = "W0401",
    /// A function- or private-space array large enough to trouble drivers.
    LargeArray = "W0402",
    /// An unknown attribute close to a known one (a likely typo), ignored.
    AttributeIgnored = "W0403",
    /// A buffer, texture or sampler argument without its index attribute:
    /// Metal's implicit index (the first free one of its kind) assumed.
    ImplicitBufferIndex = "W0404",
    /// A function that needs more of a WebGPU limit than the default
    /// (storage buffers per stage, ...): the device must ask for it.
    DefaultLimitExceeded = "W0405",
    /// A kernel that indexes `[[threadgroup(n)]]` memory whose length the
    /// host sets at dispatch: left out of the WGSL, translated per length.
    ThreadgroupLengthAtDispatch = "W0406",
    /// A `metal::os_log` logging call: WebGPU has no shader logging, so it
    /// is dropped (its arguments are not evaluated).
    LoggingDropped = "W0407",
    /// A buffer struct's trailing one-element array (SPIR-V Cross's
    /// runtime-sized arrays) kept at one element: WGSL clamps indexes past 0.
    TrailingArrayClamped = "W0408",
    /// An `atomic_thread_fence` of device or system scope translated to a
    /// workgroup barrier, which orders memory only within the threadgroup.
    FenceNarrowed = "W0409",
    /// A kernel that calls SIMD-group functions in non-uniform control flow
    /// uses the adapter's subgroups instead of the 32-lane emulation.
    SimdNativeFallback = "W0410",
    /// 64-bit integers (`long`, `size_t`, ...) computed in their low 32
    /// bits on WebGPU (`src/lower/metal/wide_integers.rs`); one per
    /// translation unit.
    WideIntegerNarrowed = "W0411",
    /// A function that needs a function constant's value at translation
    /// (an array size, a `case` label, ...) none was given for: left out
    /// of the WGSL until one is (`sema::function_constant_values`).
    FunctionLeftForConstants = "W0415",
    /// With `--target webgpu`, a barrier that may run in control flow
    /// Tint's uniformity analysis takes as non-uniform (a branch, loop or
    /// `return` that depends on the thread, and that no rewrite took away).
    BarrierNonUniform = "W0418",
    /// A kernel whose threadgroup variables together take more than the
    /// 32 KiB every Metal GPU family allows: Metal compiles it but makes no
    /// pipeline of it, so it is left out of the WGSL.
    KernelOverThreadgroupMemory = "W0419",
}

impl Code {
    /// The generic codes, kept for compatibility: no diagnostic is made
    /// with one (`tests/error_codes.rs` checks the sources).
    pub const GENERIC: &'static [Code] = &[
        Code::Error,
        Code::Preprocess,
        Code::Semantic,
        Code::Lowering,
        Code::Warning,
        Code::PreprocessWarning,
        Code::LoweringWarning,
    ];

    /// True for `W` codes.
    pub fn is_warning(self) -> bool {
        self.as_str().starts_with('W')
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Code;

    #[test]
    fn codes_are_unique_sorted_and_well_formed() {
        let texts: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        for pair in texts.windows(2) {
            assert!(
                (pair[0].starts_with('E') && pair[1].starts_with('W')) || pair[0] < pair[1],
                "{pair:?}"
            );
        }
        for t in texts {
            assert!(
                t.len() == 5 && t[1..].bytes().all(|b| b.is_ascii_digit()),
                "{t}"
            );
        }
    }
}
