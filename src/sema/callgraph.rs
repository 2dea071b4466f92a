//! Which library functions a kernel reaches, directly or through the user
//! functions it calls. Lowering decides some things about a kernel before
//! lowering its body (how to treat threads outside a ragged grid, which WGSL
//! built-ins the entry point needs), so it asks here first.

use super::{Program, Symbol};
use crate::syntax::ast::{Block, Expr, ExprKind, FunctionDecl, Init, Stmt, StmtKind, SwitchItem};
use crate::syntax::members::DEVICE_TWIN;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// The user functions a walk may have to follow without knowing types:
/// member functions by member name and every operator overload, found once
/// per program (each kernel walks, and scanning every function at every
/// call or operator made translation quadratic); and each function's calls,
/// read once per program from its body.
#[derive(Debug, Default)]
pub struct CallIndex {
    /// How many functions the index covers (rebuilt if the program grew).
    functions: usize,
    /// How many templates it covers (local structs, closures among
    /// them, add member templates on later analysis rounds).
    templates: usize,
    /// `S::m` and its `@device` twin, under `m`.
    members: HashMap<String, Vec<usize>>,
    /// Member function templates `S::m` (a generic lambda's
    /// `operator()`), under `m`.
    member_templates: HashMap<String, Vec<usize>>,
    /// `operator+`, `S::operator[]`, `S::operator float`, ...: what an
    /// operator expression may call (not `operator()`).
    operators: Vec<usize>,
    /// The calls of each function and function template walked so far. A
    /// body's calls are the same in every walk; reading them once per program
    /// rather than once per walk matters where a file has hundreds of
    /// kernels reaching the same templates (MLX's quantized kernels).
    calls: RefCell<HashMap<Body, Rc<Calls>>>,
    /// The answers of [`reaches_memoized`], by question and the calls of
    /// the body asked about.
    answers: RefCell<HashMap<(Question, Vec<Call>), bool>>,
}

/// The library's word on a name that lookup leaves to it (without its
/// namespace): `Some(true)` for a library function the caller looks for,
/// `Some(false)` for another library function, `None` where the library
/// has no function of that name (a call of it may then be a function
/// object's: a lambda's closure, a functor parameter).
pub type Wanted<'w> = &'w dyn Fn(&str) -> Option<bool>;

/// What [`reaches_memoized`] asks: a name for one `wanted` predicate, and
/// the settings it depends on, the same in every walk of a program that
/// asks it.
pub type Question = (&'static str, bool);

/// A body whose calls [`CallIndex`] keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Body {
    /// `Program::functions[i]`.
    Function(usize),
    /// The function of `Program::templates[t]`.
    Template(usize),
}

/// The calls of one body, each once, in the order written, and the struct
/// whose members its unqualified calls find.
#[derive(Debug, Default)]
struct Calls {
    scope: Option<String>,
    calls: Vec<Call>,
}

/// A call as written: the walk resolves it against the program's names
/// (name lookup, as `lower/cxx/call.rs` does) when it follows it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Call {
    /// `f(..)`, `S(..)`, `S::f(..)`, `metal::f(..)`.
    Named(Vec<String>),
    /// `f<T>(..)`, `S<T>::f(..)`.
    Templated(Vec<String>),
    /// `x.m(..)`: a member function `S::m` of whatever struct `x` is.
    Member(String),
    /// An operator that may call an overload: which one depends on types
    /// the walk does not know, so it follows them all.
    Operators,
}

impl CallIndex {
    fn build(program: &Program) -> Self {
        let mut index = CallIndex {
            functions: program.functions.len(),
            templates: program.templates.len(),
            ..CallIndex::default()
        };
        for (name, list) in &program.template_names {
            if let Some((_, member)) = name.rsplit_once("::") {
                index
                    .member_templates
                    .entry(member.to_string())
                    .or_default()
                    .extend(list);
            }
        }
        // Sorted, so that what a walk follows first does not depend on
        // hash order.
        index
            .member_templates
            .values_mut()
            .for_each(|list| list.sort_unstable());
        for (i, f) in program.functions.iter().enumerate() {
            let name = f.name.name.as_str();
            let base = name.strip_suffix(DEVICE_TWIN).unwrap_or(name);
            if let Some((_, member)) = base.rsplit_once("::") {
                index.members.entry(member.to_string()).or_default().push(i);
            }
            // An operator expression never calls a function object's
            // `operator()` (a call does: `Call::Named`).
            let call_operator = base.ends_with("::operator()");
            if (name.starts_with("operator") || name.contains("::operator")) && !call_operator {
                index.operators.push(i);
            }
        }
        index
    }

    /// Whether the index was built for `program` as it is now.
    fn covers(&self, program: &Program) -> bool {
        self.functions == program.functions.len() && self.templates == program.templates.len()
    }

    /// The calls of `body`, the body of `f`, read on first use.
    fn calls_of(&self, body: Body, f: &FunctionDecl) -> Rc<Calls> {
        if let Some(calls) = self.calls.borrow().get(&body) {
            return calls.clone();
        }
        let calls = Rc::new(Calls {
            scope: member_scope(f).map(str::to_string),
            calls: f.body.as_ref().map(Calls::read).unwrap_or_default(),
        });
        self.calls.borrow_mut().insert(body, calls.clone());
        calls
    }
}

/// True if `body`, or a user function it calls (transitively), calls a
/// library function whose unqualified name satisfies `wanted`.
///
/// Each call is resolved as C++ name lookup (and the lowering, in
/// `lower/cxx/call.rs`) resolves it: a name that denotes a user function,
/// overload set, function template, member function (`m()` inside a member
/// function of a struct that has `m`) or constructor is followed into that
/// code and never offered to `wanted`, whatever it is called (`simd_sum`,
/// `quad_area`, `simd_foo`). Only the names lookup leaves to the library
/// (`f`, `metal::f`, `metal::precise::f`, ...) are offered, without their
/// namespace; the caller decides what they are (the lowering asks its one
/// table of builtins, by family).
///
/// The walk is linear in the program: each function, template, member name
/// and the set of operator overloads is followed at most once, and each
/// body is read once per program.
pub fn reaches(program: &Program, body: &Block, wanted: Wanted) -> bool {
    walk_from(program, &Calls::read(body), wanted)
}

/// [`reaches`] for a `wanted` that `question` names, remembering the
/// answer for bodies that make the same calls. The walk leaves the body
/// by its calls' names only, so its answer depends on them alone: the
/// kernels instantiated from one template mostly make the same calls,
/// and a file of thousands of them (MLX's `reduce.metal`) walked the same
/// graph for each, twice.
pub fn reaches_memoized(
    program: &Program,
    body: &Block,
    question: Question,
    wanted: Wanted,
) -> bool {
    let calls = Calls::read(body);
    let known = program.call_index.borrow().as_ref().and_then(|i| {
        i.covers(program)
            .then(|| i.answers.borrow().get(&(question, calls.clone())).copied())
            .flatten()
    });
    if let Some(answer) = known {
        return answer;
    }
    let answer = walk_from(program, &calls, wanted);
    if let Some(i) = program.call_index.borrow().as_ref() {
        i.answers.borrow_mut().insert((question, calls), answer);
    }
    answer
}

fn walk_from(program: &Program, calls: &[Call], wanted: Wanted) -> bool {
    let stale = program
        .call_index
        .borrow()
        .as_ref()
        .is_none_or(|i| !i.covers(program));
    if stale {
        *program.call_index.borrow_mut() = Some(CallIndex::build(program));
    }
    let index = program.call_index.borrow();
    let mut walk = Walk {
        index: index.as_ref().expect("built above"),
        program,
        wanted,
        visited: HashSet::new(),
        visited_templates: HashSet::new(),
        followed_operators: false,
        followed_members: HashSet::new(),
    };
    walk.calls(calls, None)
}

impl Calls {
    /// The calls `body` makes, each once (not descending into the
    /// functions called).
    fn read(body: &Block) -> Vec<Call> {
        let mut calls = Vec::new();
        let mut seen = HashSet::new();
        visit_block(body, &mut |e| {
            let call = match &e.kind {
                ExprKind::Call(callee, _) => Call::of_callee(callee),
                // A function template's instance named without a call is
                // a function reference, called later through a variable
                // (`auto do_gemm = gemm_loop<..>; do_gemm(..)`, MLX).
                ExprKind::Templated(path, _) => Some(Call::Templated(path.clone())),
                ExprKind::Binary(..) | ExprKind::Assign(..) | ExprKind::Unary(..) => {
                    Some(Call::Operators)
                }
                _ => None,
            };
            if let Some(call) = call.filter(|c| seen.insert(c.clone())) {
                calls.push(call);
            }
        });
        calls
    }
}

impl Call {
    /// The call a callee expression makes, if it names one (texture
    /// members are library functions no kernel asks about, and are
    /// `Member` calls like any other).
    fn of_callee(callee: &Expr) -> Option<Call> {
        match &callee.kind {
            ExprKind::Member(_, member, _) => Some(Call::Member(member.name.clone())),
            ExprKind::Name(path) => Some(Call::Named(path.clone())),
            ExprKind::Templated(path, _) => Some(Call::Templated(path.clone())),
            ExprKind::MemberTemplate(member, _) => Call::of_callee(member),
            _ => None,
        }
    }
}

struct Walk<'p, 'a, 'w> {
    index: &'p CallIndex,
    program: &'p Program<'a>,
    wanted: &'w dyn Fn(&str) -> Option<bool>,
    visited: HashSet<usize>,
    visited_templates: HashSet<usize>,
    /// Every operator overload has been followed (without reaching
    /// `wanted`, or the walk would have ended): asking again is free. Without
    /// this each operator in a program would scan every function.
    followed_operators: bool,
    /// Member names whose functions have all been followed, likewise.
    followed_members: HashSet<String>,
}

impl Walk<'_, '_, '_> {
    /// Follows `calls`, made in a member function of `scope` (its members
    /// are found by unqualified calls) or, without one, outside any struct.
    fn calls(&mut self, calls: &[Call], scope: Option<&str>) -> bool {
        calls.iter().any(|c| match c {
            Call::Named(path) => self.named_call(path, scope),
            Call::Templated(path) => self.templated_call(path),
            Call::Member(name) => self.members_named(name),
            Call::Operators => self.operators(),
        })
    }

    /// `f(..)`, `S(..)`, `S::f(..)`, `metal::f(..)`: user code if lookup
    /// finds any, else a library function.
    fn named_call(&mut self, path: &[String], scope: Option<&str>) -> bool {
        let Some(name) = path.last() else {
            return false;
        };
        let program = self.program;
        if let [single] = path {
            // `m()` inside a member function is `this->m()` when the struct
            // has a member `m` and no program-scope name hides it.
            if !program.symbols.contains_key(single) {
                if let Some(s) = scope {
                    let key = format!("{s}::{single}");
                    if program.symbols.contains_key(&key) {
                        return self.follow_symbol(&key)
                            || self.follow_symbol(&format!("{key}{DEVICE_TWIN}"));
                    }
                }
            }
            // Plain functions and templates of one name compete in overload
            // resolution: all of them are user code.
            let templates = program.function_templates(single);
            let user = !templates.is_empty() || program.symbols.contains_key(single);
            if user {
                return self.follow_templates(templates) || self.follow_symbol(single);
            }
        } else if program.symbols.contains_key(&path.join("::")) {
            // `S::make(..)`, or `S::T(..)` for a member type's constructor.
            return self.follow_symbol(&path.join("::"));
        }
        match path.len() {
            1 => match (self.wanted)(name) {
                Some(wanted) => wanted,
                // `int(x)`: a conversion, which calls no function but a
                // struct's conversion operator.
                None if crate::types::builtin_type(name).is_some() => self.operators(),
                // A function object (a lambda's closure, a functor
                // parameter `f(x)`) calls some struct's `operator()`,
                // which one depends on types the walk does not know, so
                // it follows them all.
                None => self.members_named("operator()"),
            },
            2 | 3 if is_library_namespace(&path[..path.len() - 1]) => {
                (self.wanted)(name).unwrap_or(false)
            }
            // Any other qualified call names a member of some struct.
            _ => self.members_named(name),
        }
    }

    /// `f<T>(..)`: a function template's instance; otherwise a struct
    /// template's constructor or static member (`Vec<float, 4>::make(..)`).
    fn templated_call(&mut self, path: &[String]) -> bool {
        let Some(name) = path.last() else {
            return false;
        };
        if let [single] = path {
            let templates = self.program.function_templates(single);
            if !templates.is_empty() {
                return self.follow_templates(templates);
            }
        }
        // A library function or type with explicit template arguments
        // (`make_filled_simdgroup_matrix<float, 8, 8>(..)`).
        let library = path.len() == 1 || is_library_namespace(&path[..path.len() - 1]);
        self.members_named(name) || (library && (self.wanted)(name).unwrap_or(false))
    }

    /// What the program-scope name `name` may run: the functions of that
    /// name, or a struct's constructors `S::S`.
    fn follow_symbol(&mut self, name: &str) -> bool {
        match self.program.symbols.get(name) {
            Some(Symbol::Functions(list)) => self.follow(list),
            // `S(..)` runs a constructor `S::S` of the struct the name
            // denotes (an alias too); other types convert, running nothing.
            Some(Symbol::Type(crate::types::Type::Struct(id))) => {
                let s = self.program.struct_name(*id);
                let constructor = crate::syntax::members::member_name(s, s);
                self.follow_symbol_functions(&constructor)
                    || self.follow_symbol_functions(&format!("{constructor}{DEVICE_TWIN}"))
            }
            Some(Symbol::Type(_)) => false,
            // An object with `operator()`.
            Some(_) => self.members_named("operator()"),
            None => false,
        }
    }

    /// The functions named exactly `name`, if any.
    fn follow_symbol_functions(&mut self, name: &str) -> bool {
        match self.program.symbols.get(name) {
            Some(Symbol::Functions(list)) => self.follow(list),
            _ => false,
        }
    }

    /// A template's calls are the same in every instantiation, up to
    /// dependent names, which this over-approximates by name.
    fn follow_templates(&mut self, templates: &[usize]) -> bool {
        for &t in templates {
            if self.visited_templates.insert(t) {
                let f = super::templates::template_function(self.program.templates[t]);
                if self.enter(Body::Template(t), f) {
                    return true;
                }
            }
        }
        false
    }
}

/// `metal`, `precise`, `fast`, `metal::precise`, `metal::fast`: the
/// namespaces a library function may be named with.
fn is_library_namespace(namespaces: &[String]) -> bool {
    match namespaces {
        [ns] => matches!(ns.as_str(), "metal" | "precise" | "fast"),
        [m, ns] => m == "metal" && matches!(ns.as_str(), "precise" | "fast"),
        _ => false,
    }
}

/// The struct `S` of a member function `S::m` that has an object (its
/// first parameter is `this`) or is a constructor `S::S` (which declares
/// `this`); `None` for free and static member functions.
fn member_scope(f: &FunctionDecl) -> Option<&str> {
    let name = f.name.name.as_str();
    let name = name.strip_suffix(DEVICE_TWIN).unwrap_or(name);
    let (s, member) = name.rsplit_once("::")?;
    let has_this = f
        .params
        .first()
        .and_then(|p| p.name.as_ref())
        .is_some_and(|n| n.name == "this");
    let constructor = s.rsplit("::").next() == Some(member);
    (has_this || constructor).then_some(s)
}

impl<'a> Walk<'_, 'a, '_> {
    /// Follows the calls of `f` (`body`), with its struct (if a member
    /// function) as the scope of unqualified calls.
    fn enter(&mut self, body: Body, f: &'a FunctionDecl) -> bool {
        let calls = self.index.calls_of(body, f);
        self.calls(&calls.calls, calls.scope.as_deref())
    }

    /// Follows each of the user functions `list`, once.
    fn follow(&mut self, list: &[usize]) -> bool {
        for &i in list {
            let f = self.program.functions[i];
            if self.visited.insert(i) && self.enter(Body::Function(i), f) {
                return true;
            }
        }
        false
    }

    /// Member functions (and their `@device` twins) named `name` of any
    /// struct: `S::name`.
    fn members_named(&mut self, name: &str) -> bool {
        if !self.followed_members.insert(name.to_string()) {
            return false;
        }
        let index = self.index;
        index
            .members
            .get(name)
            .is_some_and(|list| self.follow(list))
            || index
                .member_templates
                .get(name)
                .is_some_and(|list| self.follow_templates(list))
    }

    /// Every operator overload, member or free.
    fn operators(&mut self) -> bool {
        if std::mem::replace(&mut self.followed_operators, true) {
            return false;
        }
        let index = self.index;
        self.follow(&index.operators)
    }
}

/// True if some expression in `body` (not descending into called functions)
/// satisfies `pred`.
pub fn any_expr(body: &Block, pred: &dyn Fn(&Expr) -> bool) -> bool {
    let mut found = false;
    let mut visit = |e: &Expr| found |= pred(e);
    visit_block(body, &mut visit);
    found
}

/// Whether `s` holds a range-based `for`: its loop variable may be a
/// reference to the elements of the array it walks (`for (thread auto& x :
/// a)`), an alias no expression names, so a caller that must see every use
/// of a name gives up there.
pub(crate) fn has_range_for(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::RangeFor { .. } => true,
        StmtKind::Block(b) => b.stmts.iter().any(has_range_for),
        StmtKind::If {
            then, otherwise, ..
        } => has_range_for(then) || otherwise.as_deref().is_some_and(has_range_for),
        StmtKind::For { init, body, .. } => {
            init.as_deref().is_some_and(has_range_for) || has_range_for(body)
        }
        StmtKind::While { body, .. } | StmtKind::DoWhile { body, .. } => has_range_for(body),
        StmtKind::Switch { items, .. } => items
            .iter()
            .any(|i| matches!(i, SwitchItem::Stmt(s) if has_range_for(s))),
        _ => false,
    }
}

pub(crate) fn visit_block(b: &Block, f: &mut dyn FnMut(&Expr)) {
    for s in &b.stmts {
        visit_stmt(s, f);
    }
}

fn visit_stmt(s: &Stmt, f: &mut dyn FnMut(&Expr)) {
    match &s.kind {
        StmtKind::Block(b) => visit_block(b, f),
        StmtKind::Decl(d) => d
            .declarators
            .iter()
            .filter_map(|d| d.init.as_ref())
            .for_each(|i| visit_init(i, f)),
        StmtKind::LocalType(t) => t
            .objects
            .iter()
            .flat_map(|d| &d.declarators)
            .filter_map(|d| d.init.as_ref())
            .for_each(|i| visit_init(i, f)),
        StmtKind::Expr(e) | StmtKind::Return(Some(e)) => visit_expr(e, f),
        StmtKind::If {
            cond,
            then,
            otherwise,
            ..
        } => {
            visit_expr(cond, f);
            visit_stmt(then, f);
            if let Some(o) = otherwise {
                visit_stmt(o, f);
            }
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
        } => {
            if let Some(i) = init {
                visit_stmt(i, f);
            }
            cond.iter()
                .chain(step.iter())
                .for_each(|e| visit_expr(e, f));
            visit_stmt(body, f);
        }
        StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
            visit_expr(cond, f);
            visit_stmt(body, f);
        }
        StmtKind::RangeFor { range, body, .. } => {
            visit_expr(range, f);
            visit_stmt(body, f);
        }
        StmtKind::Switch { selector, items } => {
            visit_expr(selector, f);
            for i in items {
                if let SwitchItem::Stmt(s) = i {
                    visit_stmt(s, f);
                }
            }
        }
        _ => {}
    }
}

pub(crate) fn visit_init(i: &Init, f: &mut dyn FnMut(&Expr)) {
    match i {
        Init::Expr(e) => visit_expr(e, f),
        Init::List(items, _) => items.iter().for_each(|i| visit_init(i, f)),
        Init::Paren(args, _) => args.iter().for_each(|e| visit_expr(e, f)),
        Init::Designated(_, value, _) => visit_init(value, f),
    }
}

pub(crate) fn visit_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Call(callee, args) => {
            visit_expr(callee, f);
            args.iter().for_each(|a| visit_expr(a, f));
        }
        ExprKind::Binary(_, a, b) | ExprKind::Assign(_, a, b) | ExprKind::Index(a, b) => {
            visit_expr(a, f);
            visit_expr(b, f);
        }
        ExprKind::Unary(_, a)
        | ExprKind::PostIncDec(_, a)
        | ExprKind::Member(a, _, _)
        | ExprKind::MemberTemplate(a, _)
        | ExprKind::Cast(_, _, a) => visit_expr(a, f),
        ExprKind::Ternary(a, b, c) => [a, b, c].iter().for_each(|x| visit_expr(x, f)),
        ExprKind::Comma(items) => items.iter().for_each(|x| visit_expr(x, f)),
        ExprKind::InitList(items) | ExprKind::BraceConstruct(_, items) => {
            items.iter().for_each(|i| visit_init(i, f))
        }
        // What a lambda calls, it calls where it is called, which the
        // walk cannot follow: taken as called where it is written.
        ExprKind::Lambda(l) => visit_block(&l.body, f),
        _ => {}
    }
}

/// True if the sampler named `name` in `body` is used by `sample_compare` or
/// `gather_compare`, directly or as an argument to a user function that does
/// so with the corresponding parameter.
pub fn sampler_compared(program: &Program, body: &Block, name: &str) -> bool {
    let is_name = |e: &Expr, n: &str| names_or_indexes(e, n);
    let direct = |body: &Block, n: &str| {
        any_expr(body, &|e| match &e.kind {
            ExprKind::Call(callee, args) => {
                matches!(&callee.kind, ExprKind::Member(_, m, _) if m.name == "sample_compare" || m.name == "gather_compare")
                    && args.first().is_some_and(|a| is_name(a, n))
            }
            _ => false,
        })
    };
    direct(body, name) || passed_to_user(program, body, name, &direct)
}

/// True if the texture named `name` in `body` is used by a texture atomic
/// member function (`t.atomic_fetch_add(..)`, MSL §6.12.15), directly or as
/// an argument to user functions that do so with the corresponding
/// parameter, however deep (Metal has no recursion; the depth is bounded
/// all the same).
pub fn texture_atomic(program: &Program, body: &Block, name: &str) -> bool {
    texture_atomic_within(program, body, name, 16)
}

fn texture_atomic_within(program: &Program, body: &Block, name: &str, depth: u32) -> bool {
    let direct = |body: &Block, n: &str| {
        any_expr(body, &|e| match &e.kind {
            ExprKind::Call(callee, _) => matches!(&callee.kind,
                ExprKind::Member(object, m, _) if m.name.starts_with("atomic_")
                    && names_or_indexes(object, n)),
            _ => false,
        })
    };
    let deeper =
        |body: &Block, n: &str| depth > 0 && texture_atomic_within(program, body, n, depth - 1);
    direct(body, name) || passed_to_user(program, body, name, &deeper)
}

/// True if `e` is the variable `n`, or an element of it (`n[i]`: an array
/// of textures or samplers).
fn names_or_indexes(e: &Expr, n: &str) -> bool {
    match &e.kind {
        ExprKind::Name(p) => p.len() == 1 && p[0] == n,
        ExprKind::Index(base, _) => names_or_indexes(base, n),
        _ => false,
    }
}

/// True if `name` is passed to a user function whose corresponding
/// parameter `direct` holds for in its body.
fn passed_to_user(
    program: &Program,
    body: &Block,
    name: &str,
    direct: &dyn Fn(&Block, &str) -> bool,
) -> bool {
    let is_name =
        |e: &Expr, n: &str| matches!(&e.kind, ExprKind::Name(p) if p.len() == 1 && p[0] == n);
    any_expr(body, &|e| {
        let ExprKind::Call(callee, args) = &e.kind else {
            return false;
        };
        let ExprKind::Name(path) = &callee.kind else {
            return false;
        };
        let Some(Symbol::Functions(list)) = program
            .symbols
            .get(path.last().map(String::as_str).unwrap_or(""))
        else {
            return false;
        };
        args.iter()
            .enumerate()
            .filter(|(_, a)| is_name(a, name))
            .any(|(k, _)| {
                list.iter().any(|&f| {
                    let f = program.functions[f];
                    match (f.params.get(k).and_then(|p| p.name.as_ref()), &f.body) {
                        (Some(param), Some(b)) => direct(b, &param.name),
                        _ => false,
                    }
                })
            })
    })
}
