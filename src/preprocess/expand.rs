//! Macro expansion with C's rescanning rules.
//!
//! An expansion keeps a stack of *frames*, one per macro whose replacement
//! is being rescanned, on top of a [`Feed`]: the rest of the text being
//! read. Tokens come from the innermost frame that has any left; a
//! function-like macro name looks past exhausted frames for its `(` and
//! takes its arguments from there, so `#define G F` followed by `G(1)`
//! invokes `F`. An identifier read while a frame of the same name is on the
//! stack is painted and never expanded again (C's "not replaced inside its
//! own replacement"). Arguments are expanded on their own first, by a nested
//! expander that shares the size budget.
//!
//! The stack is explicit rather than native recursion, and both its depth
//! and the total size of what one top-level expansion produces are limited,
//! so that `#define A B B`, `#define B C C`, ... ends in a diagnostic
//! instead of exhausting memory.

use super::lexer::Kind;
use super::macros::{after_defined, quote, Def, Expanded, Macro, Macros, Tok};
use super::subst::{substitute, Invocation};
use crate::source_map::SourceFile;
use std::cell::Cell;
use std::iter::Peekable;
use std::ops::Range;
use std::rc::Rc;
use std::vec::IntoIter;

/// How many macro expansions may be nested (arguments being expanded count
/// as one level each).
pub(crate) const MAX_NESTING: usize = 64;

/// How many bytes of tokens one top-level expansion may produce, counting
/// every replacement list substituted along the way.
pub(crate) const MAX_EXPANSION_BYTES: usize = 1 << 20;

/// How many bytes of tokens all the expansions of one translation unit may
/// produce together: many uses of a macro just under the limit above must
/// not add up to gigabytes either.
pub(crate) const MAX_TOTAL_EXPANSION_BYTES: usize = 16 << 20;

/// How many "in expansion of macro" notes an error gets at most.
const MAX_NOTES: usize = 8;

/// An expansion that failed: the message, the range of the current file it
/// is about, and notes naming the macros being expanded.
#[derive(Debug)]
pub(crate) struct ExpandError {
    /// The message.
    pub message: String,
    /// Where, in the current file.
    pub loc: Range<usize>,
    /// Notes, innermost macro first.
    pub notes: Vec<String>,
    /// Whether the notes have been added (errors pass through several
    /// expanders on their way out).
    annotated: bool,
}

impl ExpandError {
    /// An error without notes yet.
    pub fn new(message: impl Into<String>, loc: Range<usize>) -> Self {
        ExpandError {
            message: message.into(),
            loc,
            notes: Vec::new(),
            annotated: false,
        }
    }
}

type Result<T> = std::result::Result<T, ExpandError>;

/// The text after the macro frames: where `(` and arguments are looked for.
pub(crate) trait Feed {
    /// The next token, without taking it.
    fn peek(&mut self) -> Option<&Expanded>;
    /// Takes the next token.
    fn next(&mut self) -> Option<Expanded>;
    /// Why the feed ended early, as a note for "unterminated" errors.
    fn end_note(&self) -> Option<String> {
        None
    }
}

impl<I: Iterator<Item = Expanded>> Feed for Peekable<I> {
    fn peek(&mut self) -> Option<&Expanded> {
        Peekable::peek(self)
    }

    fn next(&mut self) -> Option<Expanded> {
        Iterator::next(self)
    }
}

/// A directive's operands after macro expansion, and the name and range of
/// each macro invoked at the top level (for notes).
pub(crate) type ExpandedArgs = (Vec<Expanded>, Vec<(String, Range<usize>)>);

/// The file an expansion happens in, for `__LINE__` and `__FILE__`.
pub(crate) struct Site<'a> {
    /// The file being read.
    pub file: &'a SourceFile,
    /// What `#line` added to its line numbers.
    pub line_delta: i64,
    /// Its name as `__FILE__` spells it (changed by `#line`).
    pub name: &'a str,
}

/// What one top-level expansion and the expansions of its arguments share.
struct Shared<'a> {
    macros: &'a Macros,
    site: &'a Site<'a>,
    /// In `#if`: the operand of `defined` is not expanded.
    if_mode: bool,
    /// Bytes left to produce.
    budget: Cell<usize>,
    /// Whether the budget is what is left of the translation unit's total
    /// (rather than the limit of one expansion).
    total_limited: bool,
    /// The top-level invocation's name.
    loc: Range<usize>,
}

/// One macro whose replacement is being rescanned.
struct Frame {
    name: Rc<str>,
    toks: Peekable<IntoIter<Expanded>>,
}

/// Expands one invocation, or (nested) one argument.
struct Expander<'a> {
    sh: &'a Shared<'a>,
    frames: Vec<Frame>,
    /// Macros disabled by the enclosing expansions (for an argument).
    disabled: Vec<Rc<str>>,
    /// Macros being expanded around this expander, innermost first, for notes.
    context: Vec<Rc<str>>,
    /// Nesting levels outside this expander.
    depth: usize,
    /// Whitespace before a macro that expanded to nothing, for the next token.
    pending_space: bool,
}

/// Expands the invocation that starts with identifier `name` (a macro,
/// already taken from `feed`), appending the result to `out`. Returns false,
/// having taken and appended nothing, when `name` is a function-like macro
/// that no `(` follows.
pub(crate) fn expand_invocation(
    macros: &Macros,
    site: &Site,
    if_mode: bool,
    name: Expanded,
    feed: &mut dyn Feed,
    out: &mut Vec<Expanded>,
) -> Result<bool> {
    if macros.total_exceeded.get() {
        // Reported once; the translation has failed already.
        return Ok(false);
    }
    let total_left = MAX_TOTAL_EXPANSION_BYTES.saturating_sub(macros.expanded_bytes.get());
    let sh = Shared {
        macros,
        site,
        if_mode,
        budget: Cell::new(MAX_EXPANSION_BYTES.min(total_left)),
        total_limited: total_left < MAX_EXPANSION_BYTES,
        loc: name.loc.clone(),
    };
    let start = sh.budget.get();
    let mut ex = Expander::new(&sh, Vec::new(), Vec::new(), 0);
    let result = ex.run(&name, feed, out);
    let used = start - sh.budget.get();
    macros
        .expanded_bytes
        .set(macros.expanded_bytes.get() + used);
    result
}

/// Whether `t` names a macro that may be expanded after the tokens `out`.
pub(crate) fn invocable(macros: &Macros, if_mode: bool, t: &Expanded, out: &[Expanded]) -> bool {
    t.tok.kind == Kind::Ident
        && !t.tok.no_expand
        && macros.is_defined(&t.tok.text)
        && !(if_mode && after_defined(out))
}

/// Macro-expands all of `toks` (a directive's operands). Also returns each
/// top-level invocation's name and range, for notes.
pub(crate) fn expand_all(
    macros: &Macros,
    site: &Site,
    if_mode: bool,
    toks: Vec<Expanded>,
) -> Result<ExpandedArgs> {
    let mut feed = toks.into_iter().peekable();
    let mut out = Vec::new();
    let mut invoked = Vec::new();
    while let Some(t) = Feed::next(&mut feed) {
        if invocable(macros, if_mode, &t, &out)
            && expand_invocation(macros, site, if_mode, t.clone(), &mut feed, &mut out)?
        {
            invoked.push((t.tok.text.to_string(), t.loc));
        } else {
            out.push(t);
        }
    }
    Ok((out, invoked))
}

impl<'a> Expander<'a> {
    /// An expander with no frames yet, inside expansions that disable the
    /// macros `disabled` and `depth` levels deep.
    fn new(
        sh: &'a Shared<'a>,
        disabled: Vec<Rc<str>>,
        context: Vec<Rc<str>>,
        depth: usize,
    ) -> Self {
        Expander {
            sh,
            frames: Vec::new(),
            disabled,
            context,
            depth,
            pending_space: false,
        }
    }

    /// Expands the invocation `name` and rescans until its frames are done.
    fn run(
        &mut self,
        name: &Expanded,
        feed: &mut dyn Feed,
        out: &mut Vec<Expanded>,
    ) -> Result<bool> {
        if !self.invoke(name, feed, out)? {
            return Ok(false);
        }
        while let Some(t) = self.next_from_frames() {
            self.handle(t, feed, out)?;
        }
        Ok(true)
    }

    /// Drops the frames that have no tokens left.
    fn pop_exhausted(&mut self) {
        while self
            .frames
            .last_mut()
            .is_some_and(|f| f.toks.peek().is_none())
        {
            self.frames.pop();
        }
    }

    /// Paints `t` if it names a macro being expanded.
    fn paint(&self, t: &mut Expanded) {
        let name = &*t.tok.text;
        // Identifiers that are no macro may be painted too: harmless, as no
        // macro is defined in the middle of an expansion.
        if t.tok.kind == Kind::Ident
            && !t.tok.no_expand
            && (self.frames.iter().any(|f| &*f.name == name)
                || self.disabled.iter().any(|d| &**d == name))
        {
            t.tok.no_expand = true;
        }
    }

    /// The next token of the innermost frame that has one.
    fn next_from_frames(&mut self) -> Option<Expanded> {
        self.pop_exhausted();
        let mut t = Iterator::next(&mut self.frames.last_mut()?.toks)?;
        self.paint(&mut t);
        Some(t)
    }

    /// The next token of the frames, or else of the feed.
    fn next_token(&mut self, feed: &mut dyn Feed) -> Option<Expanded> {
        if let Some(t) = self.next_from_frames() {
            return Some(t);
        }
        let mut t = feed.next()?;
        self.paint(&mut t);
        Some(t)
    }

    /// Whether the next token (past exhausted frames) is `(`.
    fn peek_paren(&mut self, feed: &mut dyn Feed) -> bool {
        self.pop_exhausted();
        let next = match self.frames.last_mut() {
            Some(f) => f.toks.peek(),
            None => feed.peek(),
        };
        next.is_some_and(|t| t.tok.kind == Kind::Punct && &*t.tok.text == "(")
    }

    /// Rescans token `t`: expands it if it is an invocable macro, else
    /// appends it to `out`.
    fn handle(&mut self, t: Expanded, feed: &mut dyn Feed, out: &mut Vec<Expanded>) -> Result<()> {
        if invocable(self.sh.macros, self.sh.if_mode, &t, out) && self.invoke(&t, feed, out)? {
            return Ok(());
        }
        let mut t = t;
        t.tok.space_before |= std::mem::take(&mut self.pending_space);
        out.push(t);
        Ok(())
    }

    /// Starts expanding macro `name`: pushes a frame with its replacement, or
    /// appends a built-in's value. False when a function-like macro is not
    /// invoked (no `(` follows).
    fn invoke(
        &mut self,
        name: &Expanded,
        feed: &mut dyn Feed,
        out: &mut Vec<Expanded>,
    ) -> Result<bool> {
        let Some(entry) = self.sh.macros.get(&name.tok.text) else {
            return Ok(false);
        };
        let def = match &entry.def {
            Macro::User(def) => Rc::clone(def),
            builtin => {
                let tok = self.builtin(builtin, name);
                out.push(tok);
                return Ok(true);
            }
        };
        let raw = if def.function {
            if !self.peek_paren(feed) {
                return Ok(false);
            }
            let args = self.collect_args(name, &def, feed)?;
            self.check_count(name, &def, entry.at.as_deref(), args)?
        } else {
            Vec::new()
        };
        let toks = self.substitute(name, &def, &raw)?;
        self.push_frame(name, toks).map(|()| true)
    }

    /// The value of `__LINE__`, `__FILE__` or `__COUNTER__` at `name`.
    fn builtin(&mut self, m: &Macro, name: &Expanded) -> Expanded {
        let site = self.sh.site;
        let (kind, text) = match m {
            Macro::Line => {
                let line = site.file.line_col(self.sh.loc.start).0 as i64 + site.line_delta;
                (Kind::Number, line.to_string())
            }
            Macro::File => (Kind::Str, quote(site.name)),
            _ => (Kind::Number, self.sh.macros.next_counter().to_string()),
        };
        let space = name.tok.space_before || std::mem::take(&mut self.pending_space);
        Expanded {
            tok: Tok::new(kind, text, space),
            loc: name.loc.clone(),
        }
    }
}

/// `"N argument(s)"`.
fn arguments(n: usize) -> String {
    match n {
        1 => "1 argument".to_string(),
        n => format!("{n} arguments"),
    }
}

impl Expander<'_> {
    /// Reads the parenthesised arguments of function-like macro `name`
    /// (the `(` is next), as written.
    fn collect_args(
        &mut self,
        name: &Expanded,
        def: &Def,
        feed: &mut dyn Feed,
    ) -> Result<Vec<Vec<Expanded>>> {
        self.next_token(feed);
        let mut args = vec![Vec::new()];
        let mut depth = 0usize;
        loop {
            let Some(t) = self.next_token(feed) else {
                let msg = format!(
                    "unterminated argument list invoking macro `{}`",
                    name.tok.text
                );
                let mut e = ExpandError::new(msg, name.loc.clone());
                e.notes.extend(feed.end_note());
                return Err(self.annotate(e, None));
            };
            if t.tok.kind == Kind::Punct {
                match &*t.tok.text {
                    "(" => depth += 1,
                    ")" if depth == 0 => return Ok(args),
                    ")" => depth -= 1,
                    // The variable arguments keep their commas.
                    "," if depth == 0 && !(def.variadic && args.len() == def.params.len()) => {
                        args.push(Vec::new());
                        continue;
                    }
                    _ => {}
                }
            }
            args.last_mut().expect("one argument at least").push(t);
        }
    }

    /// Checks the number of arguments against the parameters of `def`
    /// (defined at `at`), giving one argument list per parameter.
    fn check_count(
        &self,
        name: &Expanded,
        def: &Def,
        at: Option<&str>,
        mut args: Vec<Vec<Expanded>>,
    ) -> Result<Vec<Vec<Expanded>>> {
        let params = def.params.len();
        // `F()` is one empty argument, or none when `F` takes none.
        if params == 0 && args.len() == 1 && args[0].is_empty() {
            args.clear();
        }
        let given = args.len();
        // C++20 lets the variable arguments be left out altogether.
        if def.variadic && given + 1 == params {
            args.push(Vec::new());
        }
        if args.len() == params {
            return Ok(args);
        }
        let required = match def.variadic {
            true => format!("at least {}", arguments(params - 1)),
            false => arguments(params),
        };
        let msg = format!(
            "macro `{}` requires {required}, but {given} given",
            name.tok.text
        );
        let mut e = self.annotate(ExpandError::new(msg, name.loc.clone()), None);
        if let Some(at) = at {
            e.notes
                .push(format!("macro `{}` defined at {at}", name.tok.text));
        }
        Err(e)
    }

    /// The replacement of `def` for the invocation `name` with arguments
    /// `raw`, each argument expanded at most once.
    fn substitute(
        &self,
        name: &Expanded,
        def: &Def,
        raw: &[Vec<Expanded>],
    ) -> Result<Vec<Expanded>> {
        let mut cache: Vec<Option<Vec<Expanded>>> = vec![None; raw.len()];
        let mut expanded = |i: usize| -> Result<Vec<Expanded>> {
            if let Some(done) = &cache[i] {
                return Ok(done.clone());
            }
            let toks = self.pre_expand(&raw[i], name)?;
            cache[i] = Some(toks.clone());
            Ok(toks)
        };
        let mut inv = Invocation {
            def,
            raw,
            expanded: &mut expanded,
            loc: name.loc.clone(),
        };
        substitute(&mut inv).map_err(|e| self.annotate(e, Some(&name.tok.text)))
    }

    /// Fully expands argument `arg` of the invocation `of`, on its own: the
    /// text after it is out of reach, and the macros being expanded stay
    /// disabled.
    fn pre_expand(&self, arg: &[Expanded], of: &Expanded) -> Result<Vec<Expanded>> {
        let depth = self.depth + self.frames.len() + 1;
        // Checked here too, before recursing: `F(F(F(...)))` nests
        // argument expansions without pushing any frame.
        if depth >= MAX_NESTING {
            return Err(self.too_deep(of));
        }
        let mut disabled: Vec<Rc<str>> = self
            .frames
            .iter()
            .rev()
            .map(|f| Rc::clone(&f.name))
            .collect();
        let mut context = vec![Rc::from(&*of.tok.text)];
        context.extend(disabled.iter().cloned());
        context.extend(self.context.iter().cloned());
        disabled.extend(self.disabled.iter().cloned());
        let mut sub = Expander::new(self.sh, disabled, context, depth);
        let mut feed = arg.iter().cloned().peekable();
        let mut out = Vec::new();
        while let Some(t) = sub.next_token(&mut feed) {
            sub.handle(t, &mut feed, &mut out)?;
        }
        Ok(out)
    }

    /// Pushes the replacement `toks` of the macro invocation `name`, within
    /// the nesting and size limits.
    fn push_frame(&mut self, name: &Expanded, mut toks: Vec<Expanded>) -> Result<()> {
        self.pop_exhausted();
        let macro_name = &*name.tok.text;
        if self.depth + self.frames.len() >= MAX_NESTING {
            return Err(self.too_deep(name));
        }
        let bytes: usize = toks.iter().map(|t| t.tok.text.len() + 1).sum();
        let left = self.sh.budget.get();
        if bytes > left {
            self.sh.macros.total_exceeded.set(self.sh.total_limited);
            let msg = match self.sh.total_limited {
                true => format!(
                    "macro expansions exceed {} MiB in total",
                    MAX_TOTAL_EXPANSION_BYTES >> 20
                ),
                false => format!(
                    "macro expansion larger than {} MiB",
                    MAX_EXPANSION_BYTES >> 20
                ),
            };
            let e = ExpandError::new(msg, self.sh.loc.clone());
            return Err(self.annotate(e, Some(macro_name)));
        }
        self.sh.budget.set(left - bytes);
        let space = name.tok.space_before || std::mem::take(&mut self.pending_space);
        match toks.first_mut() {
            Some(first) => first.tok.space_before = space,
            // An empty expansion passes its whitespace on to the next token.
            None => self.pending_space = space,
        }
        self.frames.push(Frame {
            name: Rc::from(macro_name),
            toks: toks.into_iter().peekable(),
        });
        Ok(())
    }

    /// The error for nesting deeper than [`MAX_NESTING`] at invocation `name`.
    fn too_deep(&self, name: &Expanded) -> ExpandError {
        let msg = format!("macro expansion nested more than {MAX_NESTING} levels deep");
        let e = ExpandError::new(msg, name.loc.clone());
        self.annotate(e, Some(&name.tok.text))
    }

    /// Adds the notes naming the macros being expanded (`current` first,
    /// then the frames, innermost first), once.
    fn annotate(&self, mut e: ExpandError, current: Option<&str>) -> ExpandError {
        if e.annotated {
            return e;
        }
        e.annotated = true;
        let frames = self.frames.iter().rev().map(|f| &*f.name);
        let names = current
            .into_iter()
            .chain(frames)
            .chain(self.context.iter().map(|c| &**c));
        let mut seen: Vec<&str> = Vec::new();
        for n in names {
            if !seen.contains(&n) {
                seen.push(n);
            }
        }
        // Like clang, a long backtrace keeps its ends: the innermost macros
        // and the outermost, which the user wrote.
        let note = |n: &&str| format!("in expansion of macro `{n}`");
        if seen.len() <= MAX_NOTES {
            e.notes.extend(seen.iter().map(note));
        } else {
            let half = MAX_NOTES / 2;
            e.notes.extend(seen[..half].iter().map(note));
            let skipped = seen.len() - 2 * half;
            e.notes
                .push(format!("(skipping {skipped} macro expansions)"));
            e.notes.extend(seen[seen.len() - half..].iter().map(note));
        }
        e
    }
}
