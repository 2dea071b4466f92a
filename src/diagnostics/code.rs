//! Stable diagnostic codes.
//!
//! Every diagnostic carries a [`Code`]: scripts and editors match on it, so
//! a code never changes meaning once released (new kinds get new codes).
//! The first digit after `E`/`W` names the stage that found the problem:
//! `0` reading the input, `1` preprocessing, `2` parsing, `3` semantic
//! analysis, `4` lowering to WGSL, `9` internal errors (bugs). Within a
//! stage `x00` is the generic code for what has no specific one yet.
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
    /// An error no specific code describes yet.
    Error = "E0000",
    /// A file cannot be read.
    Unreadable = "E0001",
    /// A source file is not UTF-8.
    InvalidUtf8 = "E0002",
    /// A NUL byte in a source file.
    NulByte = "E0003",
    /// A preprocessor error with no specific code.
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
    /// A syntax error with no specific code (unexpected token).
    Syntax = "E0200",
    /// Brackets nested deeper than the parser's limit.
    NestingTooDeep = "E0201",
    /// An integer or floating-point literal out of range for its type.
    LiteralOutOfRange = "E0202",
    /// C++ that Metal does not have (exceptions, `new`, virtual functions).
    NotInMetal = "E0203",
    /// A semantic error with no specific code.
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
    /// A lowering error with no specific code.
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
    /// A bug in msl2wgsl: the generated module does not validate.
    Internal = "E0900",
    /// A warning no specific code describes yet.
    Warning = "W0000",
    /// A preprocessor warning with no specific code.
    PreprocessWarning = "W0100",
    /// `#warning`.
    WarningDirective = "W0101",
    /// A macro defined again with a different body.
    MacroRedefined = "W0102",
    /// A lowering warning with no specific code.
    LoweringWarning = "W0400",
    /// An attribute WGSL has no equivalent for, dropped.
    AttributeDropped = "W0401",
    /// A function- or private-space array large enough to trouble drivers.
    LargeArray = "W0402",
    /// An unknown attribute close to a known one (a likely typo), ignored.
    AttributeIgnored = "W0403",
}

impl Code {
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
