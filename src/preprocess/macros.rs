//! The macro table: what each macro name stands for, and the token types
//! that expansion works on.
//!
//! Definitions are parsed in `define.rs`, substituted in `subst.rs` and
//! rescanned in `expand.rs`.

use super::lexer::{is_ident_continue, tokenize, Kind};
use super::Platform;
use std::cell::Cell;
use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;

/// One token of a macro body or of an expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tok {
    /// Its kind.
    pub kind: Kind,
    /// Its spelling (shared: expansion copies tokens a lot).
    pub text: Rc<str>,
    /// Whether whitespace precedes it.
    pub space_before: bool,
    /// An identifier read while the macro it names was being expanded: C
    /// says it is never expanded again, wherever it ends up ("painted blue").
    pub no_expand: bool,
}

impl Tok {
    /// A token of kind `kind` spelled `text`.
    pub fn new(kind: Kind, text: impl Into<Rc<str>>, space_before: bool) -> Self {
        Tok {
            kind,
            text: text.into(),
            space_before,
            no_expand: false,
        }
    }
}

/// A token together with the range of the current file it stands for: its
/// own range, or the name of the outermost macro invocation that produced it.
#[derive(Clone, Debug)]
pub(crate) struct Expanded {
    /// The token.
    pub tok: Tok,
    /// Where it comes from in the current file.
    pub loc: Range<usize>,
}

/// One element of a macro's replacement list, with the operators and the
/// parameter references resolved when the macro is defined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    /// A token copied as is.
    Tok(Tok),
    /// A parameter, replaced by its argument.
    Param {
        /// Which parameter.
        index: usize,
        /// Whether whitespace precedes it in the body.
        space_before: bool,
    },
    /// `# param`: the argument spelled as a string literal.
    Stringize {
        /// Which parameter.
        index: usize,
        /// Whether whitespace precedes the `#`.
        space_before: bool,
    },
    /// `##`: the items on either side become one token.
    Paste,
    /// `__VA_OPT__( ... )`: its items when the variable arguments are not
    /// empty, nothing otherwise.
    VaOpt {
        /// The items inside the parentheses.
        items: Vec<Item>,
        /// Whether whitespace precedes `__VA_OPT__`.
        space_before: bool,
    },
}

/// A user-defined macro.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Def {
    /// Function-like (`#define F(...)`) rather than object-like.
    pub function: bool,
    /// The parameter names (the variadic one last, `__VA_ARGS__` unless named
    /// GNU-style).
    pub params: Vec<String>,
    /// Whether the last parameter takes the remaining arguments.
    pub variadic: bool,
    /// The replacement list.
    pub items: Vec<Item>,
}

/// What a macro name stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Macro {
    /// `#define`, `-D` or a predefined value.
    User(Rc<Def>),
    /// `__LINE__`: the line of the invocation.
    Line,
    /// `__FILE__`: the name of the file of the invocation.
    File,
    /// `__COUNTER__`: 0, 1, 2, ... in the order of expansion.
    Counter,
}

/// A macro and where it was defined.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// The definition.
    pub def: Macro,
    /// `FILE:LINE:COL` of its name, for notes (none for built-in ones).
    pub at: Option<String>,
}

/// The defined macros.
#[derive(Debug, Default)]
pub(crate) struct Macros {
    table: HashMap<String, Entry>,
    /// `#pragma push_macro` stacks, by name.
    pushed: HashMap<String, Vec<Option<Entry>>>,
    /// The next value of `__COUNTER__`.
    counter: Cell<u64>,
    /// Bytes produced by all expansions so far (see `expand.rs`).
    pub expanded_bytes: Cell<usize>,
    /// Whether they reached their limit (reported once; nothing is expanded
    /// after it).
    pub total_exceeded: Cell<bool>,
}

impl Macros {
    /// The table with the predefined macros of the Metal compiler.
    pub fn predefined(platform: Platform) -> Self {
        let mut m = Macros::default();
        m.define("__LINE__".into(), Macro::Line, None);
        m.define("__FILE__".into(), Macro::File, None);
        m.define("__COUNTER__".into(), Macro::Counter, None);
        let os = match platform {
            Platform::MacOs => "__METAL_MACOS__",
            Platform::Ios => "__METAL_IOS__",
        };
        // Metal is C++14-based: `__cplusplus` is C++14's value.
        // `METAL_FUNC` is what `<metal_stdlib>` defines it as. Of the
        // `__HAVE_*__` feature macros only `__HAVE_BFLOAT__` is defined
        // (`bfloat` is translated: lower/metal/bfloat.rs); the others (ray
        // tracing, mesh shaders, imageblocks, color arguments, ...) are
        // left undefined: they announce features the translation does not
        // offer, and code that tests them takes its portable path.
        for (name, value) in [
            ("__METAL_VERSION__", "320"),
            ("__METAL__", "1"),
            ("__cplusplus", "201402L"),
            (os, "1"),
            ("METAL_FUNC", "inline __attribute__((__always_inline__))"),
            ("__HAVE_BFLOAT__", "1"),
            // The math-mode arguments of `<metal_math>`'s `__metal_*`
            // intrinsics (lower/stdlib/mod.rs); fast math is the default.
            ("__METAL_FAST_MATH__", "true"),
            ("__METAL_PRECISE_MATH__", "false"),
            ("__METAL_MAYBE_FAST_MATH__", "__METAL_FAST_MATH__"),
        ] {
            m.define(name.into(), object(value), None);
        }
        // `<metal_stdlib>`'s `METAL_CONST_ARG(A)`, written after a function's
        // parameter list (SPIRV-Cross's gather wrappers): clang's
        // `diagnose_if` attribute asking for a constant argument. The
        // attribute is read and dropped (`syntax::from_pest::gnu`); a gather
        // whose component is not a constant is refused where it is lowered.
        let const_arg = "METAL_CONST_ARG(A) __attribute__((diagnose_if(!__builtin_constant_p(A), \"argument must be a constant expression\", \"error\")))";
        if let Ok(def) = super::define::parse_definition(const_arg, &tokenize(const_arg)) {
            m.define("METAL_CONST_ARG".into(), Macro::User(Rc::new(def)), None);
        }
        m
    }

    /// Defines `name`, returning its previous definition.
    pub fn define(&mut self, name: String, def: Macro, at: Option<String>) -> Option<Macro> {
        self.table.insert(name, Entry { def, at }).map(|e| e.def)
    }

    /// Removes `name` (nothing happens when it is not defined).
    pub fn undef(&mut self, name: &str) {
        self.table.remove(name);
    }

    /// Whether `name` is a macro.
    pub fn is_defined(&self, name: &str) -> bool {
        self.table.contains_key(name)
    }

    /// The macro `name`.
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.table.get(name)
    }

    /// What expanding changes in the table: the next `__COUNTER__` value
    /// and the bytes expanded so far, to undo an expansion that is retried.
    pub fn expansion_state(&self) -> (u64, usize) {
        (self.counter.get(), self.expanded_bytes.get())
    }

    /// Goes back to a state that [`Macros::expansion_state`] returned.
    pub fn restore_expansion_state(&self, (counter, bytes): (u64, usize)) {
        self.counter.set(counter);
        self.expanded_bytes.set(bytes);
    }

    /// The next `__COUNTER__` value.
    pub fn next_counter(&self) -> u64 {
        let n = self.counter.get();
        self.counter.set(n + 1);
        n
    }

    /// `#pragma push_macro("name")`: saves the current definition (or its
    /// absence).
    pub fn push(&mut self, name: &str) {
        let saved = self.table.get(name).cloned();
        self.pushed.entry(name.to_string()).or_default().push(saved);
    }

    /// `#pragma pop_macro("name")`: restores the last saved definition; does
    /// nothing when none was saved, as in clang.
    pub fn pop(&mut self, name: &str) {
        let Some(saved) = self.pushed.get_mut(name).and_then(Vec::pop) else {
            return;
        };
        match saved {
            Some(entry) => self.table.insert(name.to_string(), entry),
            None => self.table.remove(name),
        };
    }
}

/// An object-like macro whose body is `value` (which holds no `##`).
pub(crate) fn object(value: &str) -> Macro {
    let items = tokenize(value)
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let text = &value[t.range.clone()];
            Item::Tok(Tok::new(t.kind, text, t.space_before && i > 0))
        })
        .collect();
    Macro::User(Rc::new(Def {
        function: false,
        params: Vec::new(),
        variadic: false,
        items,
    }))
}

/// Whether the next identifier is the operand of `defined` (`defined X` or
/// `defined ( X`), which must not be expanded.
pub(crate) fn after_defined(out: &[Expanded]) -> bool {
    let text = |i: usize| out.get(out.len().wrapping_sub(i)).map(|e| &*e.tok.text);
    text(1) == Some("defined") || (text(1) == Some("(") && text(2) == Some("defined"))
}

/// A string literal spelling `s`.
pub(crate) fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('"');
    q
}

/// Whether writing byte `b` right after byte `a` could join two tokens into
/// one (`-` `-` into `--`, `a` `b` into `ab`, `1` `.` into `1.`).
pub(crate) fn would_paste(a: u8, b: u8) -> bool {
    const OPS: &[u8] = b"+-*/%<>=!&|^.:#";
    (is_ident_continue(a) && is_ident_continue(b))
        || (a.is_ascii_digit() && b == b'.')
        || (a == b'.' && b.is_ascii_digit())
        || (OPS.contains(&a) && OPS.contains(&b))
}

/// Spells expanded tokens as text, with a space where the source had one or
/// where two tokens would otherwise run together.
pub(crate) fn join(toks: &[Expanded]) -> String {
    let mut s = String::new();
    for e in toks {
        let t = &e.tok;
        let paste = match (s.as_bytes().last(), t.text.as_bytes().first()) {
            (Some(&a), Some(&b)) => would_paste(a, b),
            _ => false,
        };
        if !s.is_empty() && (t.space_before || paste) {
            s.push(' ');
        }
        s.push_str(&t.text);
    }
    s
}
