//! Function constants (MSL §5.8): `constant T name [[function_constant(n)]];`
//! declares a value the host sets when it specialises a function
//! (`MTLFunctionConstantValues`); `is_function_constant_defined(name)` asks
//! whether it was set. Both become WGSL `override`s, which the pipeline sets
//! at creation (`wgpu::PipelineCompilationOptions::constants`):
//!
//! - the constant itself is `@id(n) override name: T;`, keyed by its Metal
//!   index, so a host sets it exactly as it would in Metal;
//! - a constant that some `is_function_constant_defined` asks about is
//!   optional (Metal's `MTLFunctionConstant.required` is false): it gets a
//!   zero default, and a companion `@id(d) override name_is_defined: bool =
//!   false;` that a host sets to `true` (1.0) whenever it sets the value.
//!   WGSL cannot ask whether an override was set, so the flag carries it.
//!   Companion ids are taken from the top of WGSL's id range (65535 down,
//!   skipping ids in use) and reported in reflection (`definedId`);
//! - a required constant (never asked about) must be set, as
//!   `makeFunction(name:constantValues:)` fails without it in Metal
//!   (reflection's `required`, which the runner enforces); its override
//!   still defaults to zero, so that a WebGPU pipeline can be made without
//!   pipeline constants (wgpu refuses an override with neither), a value
//!   no Metal program can observe;
//! - a vector constant (`constant uint2 size [[function_constant(3)]];`) is
//!   one scalar override per component: the first at `@id(n)`, the others
//!   at ids taken as companion ids are (reported as `componentIds`), and a
//!   read composes them into the vector;
//! - a 64-bit constant (`constant ulong seed [[function_constant(2)]];`) is
//!   two `u32` overrides: the low word `@id(n) override seed`, the high word
//!   `seed_hi` at a companion id (reported as `highId`), recombined where it
//!   is read (with `--target webgpu`, whose `long` is 32 bits, only the low
//!   word).
//!
//! Conditional arguments (`[[texture(1), function_constant(b)]]`) keep
//! their binding; see [`Program::argument_condition`].
//!
//! Program-scope constants whose initializer uses function constants
//! (`constant bool has_x = is_function_constant_defined(x);`,
//! `constant int n = has_x ? x : 4;`) are [`SpecConstant`]s, whose
//! initializer lowering inlines at each use (it has no side effects, so
//! this is exact); where a value is needed at translation (an array size,
//! a `case` label) it is evaluated with the values given at translation
//! (`function_constant_values`, which also describes what happens without
//! them).

use super::{callgraph, Error, Program, Result, Symbol};
use crate::diagnostics::Code;
use crate::source_map::Span;
use crate::syntax::ast::{self, ExprKind, Init};
use crate::types::{Scalar, Type};

/// The MSL built-in that asks whether a function constant was set.
pub const IS_DEFINED: &str = "is_function_constant_defined";

/// A `constant T name [[function_constant(n)]];` declaration.
#[derive(Clone, Debug)]
pub struct FunctionConstant {
    /// Name.
    pub name: String,
    /// Its scalar type, or its vectors' component type.
    pub ty: Scalar,
    /// Components: 1 for a scalar, 2 to 4 for a vector (`uint2`, `float4`,
    /// `bool3`...). WGSL overrides are scalars, so a vector is one override
    /// per component, recombined where it is read.
    pub components: u8,
    /// `n`: the Metal index, also the WGSL `@id` (of the first component).
    pub index: u16,
    /// Vectors: the `@id` of each component's override, `index` first,
    /// the others taken from the top of WGSL's id range (65535 down,
    /// skipping ids in use), as companion flags are. Empty for scalars.
    pub component_ids: Vec<u16>,
    /// The declarator.
    pub span: Span,
    /// `@id` of the companion `bool` override saying whether the host set
    /// the value; `Some` exactly when `is_function_constant_defined(name)`
    /// appears in the program (the constant is then optional).
    pub defined_id: Option<u16>,
    /// A 64-bit constant (`long`, `ulong`): the `@id` of the `u32` override
    /// holding its upper 32 bits (WGSL overrides cannot be 64-bit); the
    /// lower 32 are at `index`. Taken as companion ids are.
    pub high_id: Option<u16>,
    /// Its value given at translation, if any
    /// (`function_constant_values`): a given value is folded where the
    /// constant is read, and no `override` is emitted for it.
    pub given: super::function_constant_values::Given,
}

impl FunctionConstant {
    /// True for a 64-bit (`long`, `ulong`) constant: two 32-bit overrides.
    pub fn is_wide(&self) -> bool {
        matches!(self.ty, Scalar::Long | Scalar::ULong)
    }
}

/// When a conditional argument (`[[buffer(n), function_constant(c)]]`)
/// exists: when function constant `constant` is true, or false if
/// `negated` (`c` is `!b`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgumentCondition {
    /// Index into [`Program::function_constants`].
    pub constant: usize,
    /// The argument exists when the constant is false.
    pub negated: bool,
}

/// A program-scope constant whose initializer depends on function
/// constants: lowered by inlining `init` wherever it is used.
#[derive(Clone, Debug)]
pub struct SpecConstant<'a> {
    /// Name.
    pub name: String,
    /// Declared type.
    pub ty: Type,
    /// The initializer.
    pub init: &'a ast::Expr,
    /// The declarator.
    pub span: Span,
}

impl<'a> Program<'a> {
    /// Declares `d` if it is a function constant or depends on one; `false`
    /// leaves it to the ordinary constant path.
    pub(super) fn declare_specialized(
        &mut self,
        ty: &ast::TypeSpec,
        d: &'a ast::Declarator,
    ) -> Result<bool> {
        if let Some(attr) = d.attributes.iter().find(|a| a.name == "function_constant") {
            self.declare_function_constant(ty, d, attr)?;
            return Ok(true);
        }
        let Some(Init::Expr(init)) = &d.init else {
            return Ok(false);
        };
        if !self.uses_function_constants(init) {
            return Ok(false);
        }
        if !d.array.is_empty() {
            return Err(Error::coded(
                Code::Unsupported,
                d.name.span,
                "a program-scope array cannot be initialized from function constants",
            ));
        }
        let ty = self.resolve_value_type(ty)?;
        self.spec_constants.push(SpecConstant {
            name: d.name.name.clone(),
            ty,
            init,
            span: d.span,
        });
        self.define(&d.name, Symbol::SpecConstant(self.spec_constants.len() - 1))?;
        Ok(true)
    }

    fn declare_function_constant(
        &mut self,
        ts: &ast::TypeSpec,
        d: &ast::Declarator,
        attr: &ast::Attribute,
    ) -> Result<()> {
        let index = self.function_constant_index(attr)?;
        if let Some(other) = self.function_constants.iter().find(|c| c.index == index) {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                attr.span,
                format!(
                    "function constant index {index} is already used by `{}`",
                    other.name
                ),
            ));
        }
        if let Some(init) = &d.init {
            // MSL §5.8.1: "You don't initialize function constants in the
            // Metal function source. Instead, you specify their values when
            // creating a specialized function".
            let span = init.span();
            return Err(Error::coded(
                Code::InvalidInitializer,
                span,
                format!("function constant `{}` cannot have an initializer: the host sets its value", d.name.name),
            )
            .note("Metal does not initialize function constants in the source (MSL §5.8.1): their values come from `MTLFunctionConstantValues` when the function is made")
            .note(format!("for a default, declare `constant T y = is_function_constant_defined({0}) ? {0} : DEFAULT;` and read `y`", d.name.name)));
        }
        if !d.array.is_empty() {
            return Err(Error::coded(
                Code::Unsupported,
                d.name.span,
                "a function constant cannot be an array: WGSL overrides are scalars",
            ));
        }
        let resolved = self.resolve_type(ts)?;
        let (ty, components) = match resolved {
            Type::Vector(Scalar::Long | Scalar::ULong, _) => {
                return Err(Error::coded(
                    Code::Unsupported,
                    ts.span,
                    format!("function constants of type `{}` are not supported: WGSL overrides cannot be 64-bit", self.display(&resolved)),
                )
                .note("a scalar `long`/`ulong` function constant is (two 32-bit overrides); declare one per component"))
            }
            Type::Scalar(s) => (s, 1),
            Type::Vector(s, n) => (s, n),
            other => {
                return Err(Error::coded(
                    Code::Unsupported,
                    ts.span,
                    format!(
                        "function constants of type `{}` are not supported: WGSL overrides are scalars",
                        self.display(&other)
                    ),
                )
                .note("declare one scalar function constant per component"))
            }
        };
        let given = self.given_function_constant(&d.name.name, index, ty, components, d.span)?;
        self.function_constants.push(FunctionConstant {
            name: d.name.name.clone(),
            ty,
            components,
            index,
            component_ids: Vec::new(),
            span: d.span,
            defined_id: None,
            high_id: None,
            given,
        });
        self.define(
            &d.name,
            Symbol::FunctionConstant(self.function_constants.len() - 1),
        )
    }

    /// `n` of `[[function_constant(n)]]`: an integer in WGSL's `@id` range.
    fn function_constant_index(&self, attr: &ast::Attribute) -> Result<u16> {
        let [arg] = attr.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                attr.span,
                "`[[function_constant(n)]]` needs one index",
            ));
        };
        let bad = || {
            Error::coded(
                Code::InvalidAttributeArgument,
                arg.span,
                "a function constant index must be an integer from 0 to 65535",
            )
        };
        let n = super::consteval::eval(self, arg)
            .map_err(|_| bad())?
            .as_int()
            .ok_or_else(bad)?;
        u16::try_from(n).map_err(|_| bad())
    }

    /// True if `e` names a function constant (or a constant derived from
    /// one) or calls `is_function_constant_defined`.
    fn uses_function_constants(&self, e: &ast::Expr) -> bool {
        let mut found = false;
        callgraph::visit_expr(e, &mut |e| {
            if let ExprKind::Name(path) = &e.kind {
                let name = path.last().map(String::as_str).unwrap_or("");
                found |= name == IS_DEFINED
                    || matches!(
                        self.symbols.get(name),
                        Some(Symbol::FunctionConstant(_) | Symbol::SpecConstant(_))
                    );
            }
        });
        found
    }

    /// Metal's conditional arguments (`[[buffer(1), function_constant(b)]]`,
    /// textures and samplers alike) exist only when function constant `b`
    /// is true. WGSL bindings cannot come and go with an override, so the
    /// argument keeps its binding, reads stay where the source guards them
    /// (`if (b) { ... }`), and reflection says which constant it depends on
    /// (lowering: `lower::metal::function_constants`). The condition must be
    /// a function constant or its negation (a host, and the runner, read
    /// its value directly); on a parameter of an ordinary function the
    /// attribute has no effect and is accepted. Returns the errors of entry
    /// points whose conditions are anything else.
    pub(super) fn conditional_declarations(&self) -> Vec<Error> {
        let params = self
            .functions
            .iter()
            .filter(|f| f.stage.is_some())
            .flat_map(|f| &f.params);
        params
            // A `[[color(m)]]` input is framebuffer fetch, which the entry
            // point's classification refuses whatever its condition.
            .filter(|p| !p.attributes.iter().any(|a| a.name == "color"))
            .filter_map(|p| {
                let a = p
                    .attributes
                    .iter()
                    .find(|a| a.name == "function_constant")?;
                self.argument_condition(p, a).err()
            })
            .collect()
    }

    /// The condition that entry-point parameter `p`'s
    /// `[[function_constant(name)]]` attribute `a` names: a function
    /// constant, or a constant computed from one by `!` (Apple's samples
    /// write `constant bool no_x = !x;`), followed through such constants.
    pub fn argument_condition(
        &self,
        p: &ast::Param,
        a: &ast::Attribute,
    ) -> Result<ArgumentCondition> {
        if !self.is_resource_param(p, a) {
            return Err(Error::coded(
                Code::Unsupported,
                a.span,
                "conditional arguments other than buffers, textures and samplers (`[[function_constant(name)]]` beside `[[buffer(n)]]`, `[[texture(n)]]` or `[[sampler(n)]]`) are not supported yet",
            ));
        }
        let [arg @ ast::Expr {
            kind: ExprKind::Name(path),
            ..
        }] = a.args.as_slice()
        else {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                "`[[function_constant(name)]]` on an argument takes the name of a function constant",
            ));
        };
        let name = path.last().map(String::as_str).unwrap_or("");
        self.condition_named(name, arg.span)
    }

    /// True if `p` (whose condition is `a`) is a buffer, texture or sampler
    /// argument; textures, samplers and buffers may leave their index to
    /// Metal, so an unattributed one counts by its type.
    fn is_resource_param(&self, p: &ast::Param, a: &ast::Attribute) -> bool {
        let mut others = p.attributes.iter().filter(|b| b.name != a.name).peekable();
        if others.peek().is_none() {
            return matches!(
                self.resolve_type(&p.ty),
                Ok(Type::Texture(_) | Type::Sampler { .. } | Type::Pointer(_))
            );
        }
        others.any(|b| matches!(b.name.as_str(), "buffer" | "texture" | "sampler"))
    }

    /// The condition `name` (written at `span`) stands for, following
    /// program-scope constants that are another's name or its negation.
    fn condition_named(&self, name: &str, span: Span) -> Result<ArgumentCondition> {
        let mut negated = false;
        let mut current = name;
        // Each step follows one earlier declaration, so the chain is at
        // most as long as the list of derived constants.
        for _ in 0..=self.spec_constants.len() {
            let j = match self.symbols.get(current) {
                Some(Symbol::FunctionConstant(i))
                    if self.function_constants[*i].components == 1 =>
                {
                    return Ok(ArgumentCondition {
                        constant: *i,
                        negated,
                    })
                }
                Some(Symbol::SpecConstant(j)) => *j,
                _ => break,
            };
            let (inner, not) = match &self.spec_constants[j].init.kind {
                ExprKind::Unary(ast::UnaryOp::Not, e) => (&e.kind, true),
                other => (other, false),
            };
            let ExprKind::Name(path) = inner else {
                return Err(Error::coded(
                    Code::Unsupported,
                    span,
                    format!("arguments conditional on `{name}`, a constant computed from function constants, are not supported yet: the condition must be a function constant or its negation (`!b`)"),
                )
                .note("declare the condition as `constant bool c [[function_constant(n)]];` and set it from the host"));
            };
            negated ^= not;
            current = path.last().map(String::as_str).unwrap_or("");
        }
        Err(Error::coded(
            Code::InvalidAttributeArgument,
            span,
            format!("`{name}` is not a scalar function constant (`constant bool {name} [[function_constant(n)]];`)"),
        ))
    }

    /// Marks the function constants that `is_function_constant_defined`
    /// asks about as optional, giving each its companion override's id,
    /// and gives the components of vector constants after the first theirs.
    pub(super) fn mark_queried_function_constants(&mut self) {
        let mut queried = Vec::new();
        let mut visit = |e: &ast::Expr| {
            let ExprKind::Call(callee, args) = &e.kind else {
                return;
            };
            let is_query = matches!(&callee.kind, ExprKind::Name(p) if p.last().is_some_and(|n| n == IS_DEFINED));
            if let (true, [arg]) = (is_query, args.as_slice()) {
                if let ExprKind::Name(p) = &arg.kind {
                    queried.extend(p.last().cloned());
                }
            }
        };
        for f in &self.functions {
            if let Some(body) = &f.body {
                callgraph::visit_block(body, &mut visit);
            }
        }
        for c in &self.spec_constants {
            callgraph::visit_expr(c.init, &mut visit);
        }
        let used: Vec<u16> = self.function_constants.iter().map(|c| c.index).collect();
        let mut next = u16::MAX;
        let mut take = || {
            while used.contains(&next) {
                next -= 1;
            }
            let id = next;
            next = next.saturating_sub(1);
            id
        };
        for c in &mut self.function_constants {
            if c.is_wide() {
                c.high_id = Some(take());
            }
            if c.components > 1 {
                c.component_ids = std::iter::once(c.index)
                    .chain((1..c.components).map(|_| take()))
                    .collect();
            }
            if queried.contains(&c.name) {
                c.defined_id = Some(take());
            }
        }
    }
}
