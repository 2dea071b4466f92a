//! Lowering: the checked AST → a `naga::Module`.
//!
//! Modelled on naga's own WGSL front end (`front/wgsl/lower`): every MSL
//! construct becomes small, typed IR-building calls, with the MSL type of
//! every value tracked beside its naga expression so that C++'s implicit
//! conversions can be made explicit.

mod ctx;
mod cxx;
mod entry;
mod expr;
mod kernel_tries;
mod metal;
pub(crate) mod passes;
mod rounds;
mod stdlib;
mod stmt;
mod texture_types;
mod types;

use crate::diagnostics::Code;
use crate::reflect::FunctionReflection;
use crate::sema::{self, Program};
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::Type;
use ctx::entry::{EntryCtx, EntryStage};
use std::collections::HashMap;

pub use entry::compute::{default_threadgroup_size, DISPATCH_BINDING};
pub use entry::point_sprites::{MAX_POINT_SIZE, POINT_SPRITE_VIEWPORT_BINDING, VERTICES_PER_POINT};
pub use metal::byte_stores::ByteStores;
pub use metal::half_as_f32::HalfMode;
pub use metal::simd_groups::SimdGroups;
pub use metal::wide_integers::WideIntegers;
pub use rounds::Rounds;
/// The named constants of the Metal standard library (`M_PI_F`, `HALF_MAX`).
pub(crate) use stdlib::constant as stdlib_constant;

/// A lowering error: the input is valid syntax but cannot be translated.
pub type Error = sema::Error;
type Result<T> = std::result::Result<T, Error>;

/// What the caller decides about the translation.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Only these entry points (all when empty).
    pub entries: Vec<String>,
    /// `@workgroup_size` for every kernel; `None` picks the default.
    pub threadgroup_size: Option<[u32; 3]>,
    /// Bytes of threadgroup memory per `[[threadgroup(n)]]` index.
    pub threadgroup_memory: Vec<(u32, u32)>,
    /// May use wgpu's native extensions (64-bit integers).
    pub native_extensions: bool,
    /// How 64-bit integers are computed where native ones are allowed.
    pub wide_integers: metal::wide_integers::WideIntegers,
    /// Storage texel formats by `[[texture(n)]]` index.
    pub texture_formats: Vec<(u32, String)>,
    /// User binding overrides.
    pub binding_map: crate::reflect::BindingMap,
    /// How `half` is represented (`f16`, or `f32` rounded to half precision).
    pub half: HalfMode,
    /// Which `constant` buffers become `var<uniform>`.
    pub uniform_layout: crate::layout::uniform::UniformLayout,
    /// How SIMD-group functions are lowered.
    pub simd: metal::simd_groups::SimdGroups,
    /// The adapter's subgroup width where the host knows it.
    pub subgroup_width: Option<u32>,
    /// How 8/16-bit elements that neighbouring threads store are written.
    pub byte_stores: ByteStores,
    /// Every dispatch is one WebGPU dispatch: no `group_offset`.
    pub one_part_dispatch: bool,
    /// Where kernels' `[[stage_in]]` attributes are read (`None`: the
    /// packed default, `StageInputDescriptor::packed`).
    pub stage_in: Option<crate::stage_in::StageInputDescriptor>,
    /// Lowering stops once it has more errors than this: the report shows
    /// no more (`None`: every error is wanted).
    pub error_limit: Option<usize>,
}

/// The lowered module and what reflection needs.
#[derive(Debug)]
pub struct Lowered {
    /// The naga module (not yet validated).
    pub module: naga::Module,
    /// One entry per entry point, in source order.
    pub functions: Vec<FunctionReflection>,
    /// Warnings.
    pub warnings: Vec<Error>,
    /// The bytes of Metal threadgroup memory each `var<workgroup>` of
    /// `module` stands for, by Metal's layout: a `half` array takes 2
    /// bytes an element in Metal where WGSL may hold 4, and the
    /// emulation's own variables (SIMD-group exchange) take none. What
    /// Metal allows a kernel is counted in these.
    pub threadgroup_bytes: HashMap<naga::Handle<naga::GlobalVariable>, u64>,
}

/// A `threadgroup` variable's name, declaration span, WGSL type and Metal
/// size (`stmt::threadgroup_global`).
type ThreadgroupKey = (String, u32, u32, naga::Handle<naga::Type>, u64);

/// How a helper function argument is passed, which decides its specialisation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum ArgKey {
    /// By value.
    Value,
    /// A buffer pointer into this global: passed as a `u32` element index.
    Buffer(naga::Handle<naga::GlobalVariable>),
    /// A reference to this whole (non-array) global: nothing is passed.
    Global(naga::Handle<naga::GlobalVariable>),
    /// A `thread` pointer or reference: passed as `ptr<function, T>`.
    Thread,
    /// A texture or sampler of this exact type (storage format included).
    Resource(Type),
    /// A writable texture bound at this global, of this exact type: nothing
    /// is passed, the helper names the global (naga stores to textures, and
    /// runs texture atomics, only through a global).
    BoundTexture(naga::Handle<naga::GlobalVariable>, Type),
    /// A struct of places (`metal/pointer_members.rs`): one key per member,
    /// each passed as that member's own argument would be.
    Aggregate(Vec<ArgKey>),
    /// A pointer member of a local object held in a cell, passed with the
    /// object to a non-const member function (`metal/pointer_objects.rs`):
    /// as its pointer would be (this key), then a `ptr<function, u32>` to
    /// its index variable, which the callee moves.
    Cell(Box<ArgKey>),
    /// `&p` of a pointer variable for a pointer to a pointer
    /// (`metal/pointer_addresses.rs`): as the pointer would be passed, then
    /// a `ptr<function, u32>` to its index variable.
    PointerAddress(Box<ArgKey>),
    /// A pointer into a non-buffer global (a `threadgroup` variable): the
    /// access path from the global, `None` for a `u32` index passed; `true`:
    /// the path ends at an array and a `u32` element index is passed too.
    GlobalPath(naga::Handle<naga::GlobalVariable>, Vec<Option<u32>>, bool),
    /// A `thread` pointer into a local array of this length (`vals` for a
    /// `thread T*` parameter, `vals + 2`): passed as a pointer to the whole
    /// array and a `u32` element index. Also a pointer to a component of
    /// a local 2- or 4-component vector (`(thread float*)&v` of a `float4
    /// v`, MLX's `row_reduce` over a `vec<float, 2>`): the whole vector and
    /// a component index, as WGSL indexes a vector through a pointer.
    ThreadArray {
        /// Elements (components) of the array (vector).
        len: u32,
        /// The object is a vector.
        vector: bool,
    },
    /// A view of a `thread` object (`metal/thread_views.rs`): passed as a
    /// pointer to the whole object (of naga type `ty`, an array of
    /// `object`s when `array`) and a `u32` index counted in the pointee.
    ThreadView {
        /// The object's MSL type (the array's element type when `array`).
        object: Type,
        /// The object is an array of `object`s.
        array: bool,
        /// The naga type of the whole object.
        ty: naga::Handle<naga::Type>,
    },
    /// `nullptr` for a pointer parameter: nothing is passed, and the
    /// specialisation knows the parameter is null.
    Null,
    /// A `thread` reference or pointer to the same object as the earlier
    /// parameter at this position (`tile_matmad(C, A, B, C)`): nothing is
    /// passed, the parameter names the earlier one's object (WGSL refuses
    /// two pointer arguments to one variable where one is written).
    SameAs(usize),
}

/// Lowering state: the program being lowered, the settings of the whole
/// translation, and the two contexts (module and entry point); the function
/// context ([`ctx::function::FnCtx`]) is passed alongside.
pub(crate) struct Lowerer<'p, 'a> {
    program: &'p Program<'a>,
    tu: &'a ast::TranslationUnit,
    settings: Settings,
    global: ModuleCtx,
    entry: EntryCtx,
}

/// The translation options that apply to every entry point.
struct Settings {
    /// User binding overrides.
    binding_map: crate::reflect::BindingMap,
    /// Bytes of threadgroup memory per `[[threadgroup(n)]]` index.
    threadgroup_memory: HashMap<u32, u32>,
    /// `--target wgpu`: wgpu's native extensions may be used.
    native_extensions: bool,
    /// How 64-bit integers are computed where native ones are allowed.
    wide_integers: WideIntegers,
    /// How `half` is represented.
    half_mode: HalfMode,
    /// Storage texel formats by `[[texture(n)]]` index.
    texture_formats: HashMap<u32, String>,
    /// Which `constant` buffers become `var<uniform>`.
    uniform_layout: crate::layout::uniform::UniformLayout,
    /// How SIMD-group functions are lowered (never `Auto`).
    simd: metal::simd_groups::SimdGroups,
    /// `Auto`: a kernel the emulation cannot take falls back to `Native`.
    simd_fallback: bool,
    /// SIMD-group matrices are per-lane fragments (`Lowerer::matrix_fragments`).
    matrix_fragments: bool,
    /// How 8/16-bit element stores are written (never `Auto`).
    byte_stores: ByteStores,
    /// Kernels read no `group_offset` (`Options::one_part_dispatch`).
    one_part_dispatch: bool,
    /// Where kernels' `[[stage_in]]` attributes are read.
    stage_in: Option<crate::stage_in::StageInputDescriptor>,
}

/// What a helper function is specialised for: (function, argument kinds,
/// predicated, (for a fragment function, how SIMD groups are lowered:
/// `Lowerer::simd_key`), its loops the kernel predicates
/// (`metal::simd_loops`, by span)).
type HelperKey = (usize, Vec<ArgKey>, bool, (bool, u8), Vec<(usize, usize)>);

/// The module context: the naga module being built and what is shared by
/// every entry point in it (types, helper specialisations, globals).
#[derive(Default)]
struct ModuleCtx {
    module: naga::Module,
    types: types::TypeCache,
    /// The last segment of every qualified symbol (`S::operator+` gives
    /// `operator+`), built on first use: asked for every operator and
    /// subscript, it must not cost a scan of all symbols each time.
    qualified_names: std::cell::OnceCell<std::collections::HashSet<String>>,
    /// The static constants of each struct (`S::N` under `S`: `N` and its
    /// symbol's constant), built on first use (`class_constants`).
    class_constants: std::cell::OnceCell<HashMap<String, Vec<(String, usize)>>>,
    /// The conversion functions of each struct (`S::operator float` under
    /// `S`), built on first use: asked wherever a struct value meets an
    /// arithmetic operator or a parameter of another type.
    conversion_functions: std::cell::OnceCell<HashMap<String, Vec<String>>>,
    /// The library-wide vertex→fragment link table (built on first use).
    varyings: Option<Vec<(String, entry::stages::VaryingSlot)>>,
    /// Program-scope constants by symbol.
    constants: HashMap<usize, naga::Handle<naga::Constant>>,
    /// Helper specialisations: (function, argument kinds, predicated, (for a
    /// fragment function, how SIMD groups are lowered: `simd_key`)).
    functions: HashMap<HelperKey, naga::Handle<naga::Function>>,
    /// Helper specialisations whose lowering stopped at a struct template
    /// instance analysis has not declared yet, with the error: while a
    /// round's lowering finds instances to declare (and is thrown away),
    /// the next kernel calling one would only lower it again to stop at
    /// the same request (MLX's steel_gemm_fused_nax.metal: 72 kernels
    /// calling the same tile helpers, one level of nested lambdas declared
    /// per round for 40 rounds).
    asking_functions: HashMap<HelperKey, Error>,
    /// Functions being lowered (recursion is an error, as in Metal).
    in_progress: Vec<usize>,
    /// The return types of `auto` functions, deduced from their first
    /// `return` when they were lowered.
    deduced_returns: HashMap<usize, crate::types::Type>,
    /// Function template instantiations; instance `i` is user function
    /// `program.functions.len() + i`, so it is specialised like any helper.
    instances: Vec<std::rc::Rc<ast::FunctionDecl>>,
    /// (template, arguments) → instance number.
    instance_ids: HashMap<(usize, Vec<sema::templates::TemplateValue>), usize>,
    /// Buffer globals by (group, binding, type, writable).
    buffers:
        HashMap<(u32, u32, naga::Handle<naga::Type>, bool), naga::Handle<naga::GlobalVariable>>,
    /// The dispatch uniform (grid and threadgroup sizes).
    dispatch: Option<naga::Handle<naga::GlobalVariable>>,
    /// The stage-in region uniform of kernels (`[[grid_origin]]`, `[[grid_size]]`).
    stage_in_region: Option<naga::Handle<naga::GlobalVariable>>,
    /// The draw-parameters uniform (`[[base_vertex]]`, `[[base_instance]]`).
    draw_parameters: Option<naga::Handle<naga::GlobalVariable>>,
    /// The viewport-size uniform of point-sprite entry points.
    point_sprite_viewport: Option<naga::Handle<naga::GlobalVariable>>,
    /// `threadgroup` variables by (name, declaration, type, Metal size): the instances
    /// of one kernel template share theirs, and with them the helpers
    /// specialised for them (`stmt::threadgroup_global`).
    threadgroup_variables: HashMap<ThreadgroupKey, naga::Handle<naga::GlobalVariable>>,
    /// Buffers held as words (value: the words are atomic).
    word_views: HashMap<naga::Handle<naga::GlobalVariable>, bool>,
    /// The bytes of Metal threadgroup memory each `var<workgroup>` holds
    /// (see [`Lowered::threadgroup_bytes`]).
    threadgroup_bytes: HashMap<naga::Handle<naga::GlobalVariable>, u64>,
    /// Whether the statement at a span must run on every thread under the
    /// 32-lane emulation (with barriers counted or not, with SIMD-group
    /// matrices per lane or not: `metal/simd_branches.rs`): the call-graph
    /// walk that answers is by name, so one answer serves every instance
    /// of a template's body, and predicated regions ask for each statement
    /// again on every retry.
    every_thread: std::cell::RefCell<HashMap<(u32, u32, bool, bool), bool>>,
    /// Per-invocation state the prologue sets and helper functions read.
    privates: HashMap<&'static str, naga::Handle<naga::GlobalVariable>>,
    /// Features each lowered helper function needs.
    function_features:
        HashMap<naga::Handle<naga::Function>, std::collections::BTreeSet<ctx::entry::Feature>>,
    /// Sampler globals whose `constexpr` descriptor says `coord::pixel`.
    pixel_samplers: std::collections::HashSet<Option<naga::Handle<naga::GlobalVariable>>>,
    /// `constexpr sampler` globals and their reflection.
    constexpr_samplers: Vec<(
        naga::Handle<naga::GlobalVariable>,
        crate::reflect::ConstexprSampler,
    )>,
    /// Sampler globals the host sets (`[[sampler(n)]]` arguments and
    /// argument-buffer members): their WGSL type, comparison or not, is
    /// settled by their use (`passes::comparison_samplers`).
    argument_samplers: std::collections::HashSet<naga::Handle<naga::GlobalVariable>>,
    /// Program-scope `constexpr sampler`s by symbol.
    program_samplers: HashMap<usize, naga::Handle<naga::GlobalVariable>>,
    /// Warnings, in the order found.
    warnings: Vec<Error>,
    /// The threadgroup arrays of emulated SIMD-group exchanges, by element type.
    simd_scratch: HashMap<naga::Handle<naga::Type>, naga::Handle<naga::GlobalVariable>>,
    /// The largest threadgroup that emulates SIMD groups.
    simd_scratch_threads: u32,
    /// Source ranges of the barriers emulated SIMD-group functions wait at.
    simd_exchange_spans: std::collections::HashSet<(usize, usize)>,
    /// Source ranges of `threadgroup_barrier(mem_flags::mem_none)`s
    /// (`passes::execution_barriers`).
    execution_barrier_spans: std::collections::HashSet<(usize, usize)>,
    /// Source ranges of the `threadgroup_barrier`s with memory flags.
    fenced_barrier_spans: std::collections::HashSet<(usize, usize)>,
    /// What the uniform-control-flow passes remember between kernels.
    uniformity: metal::uniform_barriers::UniformityMemo,
    /// The threadgroup words predicated loops vote through
    /// (`metal/simd_loops.rs`): the atomic one and its uniform copy.
    simd_vote: Option<(
        naga::Handle<naga::GlobalVariable>,
        naga::Handle<naga::GlobalVariable>,
    )>,
    /// Helpers that vote, themselves or in a function they call
    /// (`metal/vote_counters.rs`).
    voting_functions: std::collections::HashSet<naga::Handle<naga::Function>>,
    /// Some code calls `thread_elements()` on a SIMD-group matrix, so
    /// threads' copies of a matrix may differ (`metal/simdgroup_matrix.rs`).
    simdgroup_copies_differ: std::cell::OnceCell<bool>,
    /// A kernel's SIMD-group functions fell back to native subgroups.
    simd_fell_back: bool,
    /// Helpers lowered by a kernel's try that ended in E0410 (the
    /// emulation's tries, `Lowerer::tried`): dropped at the end unless an
    /// entry point or a kept helper calls them, since WGSL compilers check
    /// every function, called or not, and such a helper may have a barrier
    /// in non-uniform control flow.
    tried_functions: std::collections::HashSet<naga::Handle<naga::Function>>,
    /// The helpers the last failed try of a kernel added or called, until
    /// the next try decides which of them to lower again
    /// ([`Lowerer::forget_stale`]).
    last_tried: Vec<naga::Handle<naga::Function>>,
    /// Some code holds a SIMD-group matrix (its type was lowered).
    simdgroup_matrices: bool,
    /// Where each struct of the translation unit is declared, by name,
    /// built on first use: which program-scope struct a local struct
    /// declaration is (`stmt/local_types.rs`).
    struct_spans: std::cell::OnceCell<HashMap<String, Span>>,
}

/// Lowers every selected entry point of `tu`.
///
/// `rounds` is kept across the analysis rounds of one translation (see
/// [`Rounds`]).
pub fn lower<'a>(
    tu: &'a ast::TranslationUnit,
    program: &Program<'a>,
    options: &Options,
    rounds: &mut Rounds,
) -> std::result::Result<Lowered, Vec<Error>> {
    let (mut lowered, mut whole_matrices) = lower_module(tu, program, options, true, rounds);
    if rounds.must_lower_all(program) {
        (lowered, whole_matrices) = lower_module(tu, program, options, true, rounds);
    }
    // A lowering that found struct template instances to declare is done
    // again with them: only its instances count.
    let whole_matrices = whole_matrices && !rounds::discovering(program);
    match whole_matrices {
        // A kernel fell back to native subgroups of unknown width, where
        // per-lane SIMD-group matrices would assume 32 lanes: every thread
        // holds whole matrices instead, right at any width.
        true => lower_module(tu, program, options, false, &mut Rounds::default()).0,
        false => lowered,
    }
}

/// Lowers every selected entry point of `tu`, with per-lane SIMD-group
/// matrix fragments where `fragments` and the options allow them; also
/// says whether whole matrices are needed instead: a kernel fell back to
/// native subgroups of unknown width while matrices were per-lane.
fn lower_module<'a>(
    tu: &'a ast::TranslationUnit,
    program: &Program<'a>,
    options: &Options,
    fragments: bool,
    rounds: &mut Rounds,
) -> (std::result::Result<Lowered, Vec<Error>>, bool) {
    let mut l = Lowerer::new(tu, program, options);
    l.settings.matrix_fragments &= fragments;
    let mut lowered = EntryResults::default();
    let mut found = Vec::new();
    // Entry points an earlier round settled, with their source positions.
    let mut settled = Vec::new();
    let mut positions = 0..;
    for item in &tu.items {
        let Some(f) = item_function(program, item) else {
            continue;
        };
        // A `[[stitchable]]` function (no stage) is a SwiftUI effect.
        let stage = match f.stage {
            Some((stage, _)) => Some(stage),
            None if entry::stitchable::is_stitchable(f) => None,
            None => {
                // `[[mesh]]`, `[[object]]`, `[[intersection(..)]]`: stages
                // WebGPU lacks, refused rather than kept as helpers.
                if let Some(e) = crate::sema::unported_features::stage_refusal(f) {
                    found.push(f.name.name.clone());
                    if options.entries.is_empty() || options.entries.contains(&f.name.name) {
                        lowered.errors.push(e);
                    }
                }
                continue;
            }
        };
        if found.contains(&f.name.name) {
            lowered.errors.push(stage_function_redefinition(f));
            continue;
        }
        found.push(f.name.name.clone());
        if !options.entries.is_empty() && !options.entries.contains(&f.name.name) {
            continue;
        }
        if f.body.is_none() {
            continue;
        }
        let position = positions.next().expect("an endless range");
        if rounds.skip(&f.name.name) {
            settled.push((position, f, stage));
            continue;
        }
        if !lowered.entry(&mut l, rounds, position, f, stage, options) {
            break;
        }
    }
    // Entry points an earlier round lowered without asking for instances
    // were left out; when this round asks for none either, its module is
    // the last one and they are lowered into it now, instead of lowering
    // every entry point again (MLX's steel_gemm_masked.metal: 512 of its
    // 768 kernels twice). With errors the whole round is lowered again, so
    // that they are reported in source order as before.
    if !settled.is_empty() && !rounds::discovering(program) && lowered.errors.is_empty() {
        for (position, f, stage) in settled {
            if !lowered.entry(&mut l, rounds, position, f, stage, options) {
                break;
            }
        }
        if lowered.errors.is_empty() && !rounds::discovering(program) {
            rounds.completed();
        }
    }
    let EntryResults {
        mut functions,
        order,
        mut errors,
        ..
    } = lowered;
    rounds::put_in_source_order(&mut l.global.module, &mut functions, &order);
    errors.extend(unknown_entry_points(&options.entries, &found));
    // Helpers that no entry point reaches are still checked, so that errors in
    // them are reported; their IR is kept (harmless, and WGSL users may call it).
    // While this round's lowering finds instances to declare (its errors are
    // provisional and its module is thrown away), they are lowered all the
    // same, for the instances they ask for: found only once every entry point
    // lowered, each took a round of its own, lowering every kernel again (a
    // `Limits<float>` in an unreached helper of MLX's utilities).
    if errors.is_empty() || rounds::discovering(program) {
        for index in 0..program.functions.len() {
            match l.check_unreached_helper(index) {
                // A helper of a function that waits for function constant
                // values (W0415) is translated with it.
                Err(e) if e.code == Code::FunctionConstantWithoutValue => {}
                Err(e) => errors.push(e.or_at(program.functions[index].name.span)),
                Ok(()) => {}
            }
        }
    }
    let settled_samplers = match errors.is_empty() {
        true => {
            passes::comparison_samplers::settle(&mut l.global.module, &l.global.argument_samplers)
                .unwrap_or_else(|e| {
                    errors.extend(e);
                    Vec::new()
                })
        }
        false => Vec::new(),
    };
    reflect_settled_samplers(&mut functions, &settled_samplers);
    if errors.is_empty() && l.settings.half_mode == HalfMode::F32 {
        errors.extend(l.demote_half());
    }
    let whole_matrices = l.settings.matrix_fragments
        && l.global.simd_fell_back
        && l.global.simdgroup_matrices
        && options.subgroup_width != Some(metal::simd_groups::WIDTH);
    let lowered = if errors.is_empty() {
        l.size_simd_scratch();
        l.set_fragment_simd_privates();
        l.add_function_constants(&mut functions);
        entry::point_sprites::move_sprites_last(&mut l.global.module, &functions);
        passes::merged_functions::drop_uncalled(&mut l.global.module, &l.global.tried_functions);
        passes::merged_functions::merge_identical(&mut l.global.module);
        Ok(Lowered {
            module: l.global.module,
            functions,
            warnings: l.global.warnings,
            threadgroup_bytes: l.global.threadgroup_bytes,
        })
    } else {
        Err(errors)
    };
    (lowered, whole_matrices)
}

/// What lowering the entry points of one round gathers.
#[derive(Default)]
struct EntryResults {
    /// The reflection of each entry point lowered (or waiting for function
    /// constant values), in the order lowered.
    functions: Vec<FunctionReflection>,
    /// The source position of each of `functions`.
    order: Vec<usize>,
    errors: Vec<Error>,
    /// Errors of entry points whose lowering asked for undeclared instances.
    provisional: usize,
}

impl EntryResults {
    /// Lowers entry point `f` (source position `position`) into `l`'s
    /// module; false once the errors that cannot change are past the limit.
    fn entry<'a>(
        &mut self,
        l: &mut Lowerer<'_, 'a>,
        rounds: &mut Rounds,
        position: usize,
        f: &'a ast::FunctionDecl,
        stage: Option<ast::Stage>,
        options: &Options,
    ) -> bool {
        let program = l.program;
        let asked_before = rounds::instances_asked(program);
        program.needed_constants.take();
        let lowered = match stage {
            Some(stage) => l.entry_point(f, stage, options.threadgroup_size),
            None => l.stitchable_entry(f),
        };
        let asked = rounds::instances_asked(program) > asked_before;
        rounds.lowered(&f.name.name, asked);
        log::trace!(
            "lowered `{}`: asked for instances: {asked}, lowered: {}",
            f.name.name,
            match &lowered {
                Ok(_) => "yes".to_string(),
                Err(e) => format!("no ({:?} at {:?}: {})", e.code, e.span, e.message),
            }
        );
        // A function constant's value needed at translation and not
        // given: the function waits for it (W0415), as Metal specialises
        // when the host makes the function.
        let needed = program.needed_constants.take();
        match (lowered, stage) {
            (Ok(refl), _) => {
                self.functions.push(refl);
                self.order.push(position);
            }
            (Err(e), Some(stage))
                if e.code == Code::FunctionConstantWithoutValue && !needed.is_empty() =>
            {
                self.functions
                    .push(metal::function_constants::awaiting_reflection(
                        program,
                        &l.global.module,
                        f,
                        stage,
                        &needed,
                    ));
                self.order.push(position);
                let w = metal::function_constants::left_for_constants(&f.name.name, e);
                l.global.warnings.push(w);
            }
            (Err(e), _) => {
                self.errors.push(e.or_at(f.name.span));
                self.provisional += usize::from(asked);
            }
        }
        // An error of an entry point that asked for instances may go once
        // they are declared (the round is lowered again); the others stay.
        // Past the limit of those, the entry points after this one cannot
        // change what is reported, in this round or a later one.
        options
            .error_limit
            .is_none_or(|limit| self.errors.len() - self.provisional <= limit)
    }
}

/// Sampler arguments (and argument-buffer members) whose comparison type
/// `passes::comparison_samplers` changed say so in reflection.
fn reflect_settled_samplers(
    functions: &mut [FunctionReflection],
    settled: &[passes::comparison_samplers::Settled],
) {
    fn settle(a: &mut crate::reflect::Argument, s: &passes::comparison_samplers::Settled) {
        let at = a.binding.map(|b| (b.group, b.binding));
        if let (Some(info), true) = (
            &mut a.sampler,
            at == Some((s.binding.group, s.binding.binding)),
        ) {
            info.comparison = s.comparison;
        }
        a.members.iter_mut().for_each(|m| settle(m, s));
    }
    for s in settled {
        functions
            .iter_mut()
            .filter(|f| f.wgsl_entry_point == s.entry)
            .flat_map(|f| f.arguments.iter_mut())
            .for_each(|a| settle(a, s));
    }
}

/// The function an item declares: a function, or an explicitly instantiated
/// kernel template under its host name.
fn item_function<'r>(program: &'r Program, item: &'r ast::Item) -> Option<&'r ast::FunctionDecl> {
    match item {
        ast::Item::Function(f) => Some(f),
        // An explicitly instantiated kernel template, under its host name.
        ast::Item::Instantiation(i) => program
            .instantiation_index
            .get(&i.span)
            .map(|&k| &*program.instantiations[k].1),
        _ => None,
    }
}

/// The warning for a kernel whose SIMD-group functions use the adapter's
/// subgroups because `e` (E0410) rules the emulation out.
fn native_simd_fallback(f: &ast::FunctionDecl, e: Error) -> Error {
    Error::coded(
        Code::SimdNativeFallback,
        e.span,
        format!(
            "`{}` calls this SIMD-group function in non-uniform control flow: it uses the \
             adapter's subgroups, not 32-lane SIMD groups",
            f.name.name
        ),
    )
    .note("results equal an Apple GPU's where the adapter's subgroups are 32 lanes wide (NVIDIA, most AMD); elsewhere code must not assume 32 lanes")
    .note("`--simd native` says so without this warning; `--simd emulated32` makes it an error")
}

/// The error for a second stage function named like an earlier one.
fn stage_function_redefinition(f: &ast::FunctionDecl) -> Error {
    // Metal looks functions up by name (`newFunctionWithName:`) and
    // WGSL entry points share one namespace: a second stage function
    // of the same name (an overload, or the same name in another
    // namespace or from a `[[host_name]]`) has no name of its own.
    Error::coded(
        Code::Redefinition,
        f.name.span,
        format!("redefinition of the stage function `{}`", f.name.name),
    )
    .note("kernel, vertex and fragment functions are found by name: each needs a unique one")
}

/// An error for every `--entry` name that no stage function has.
fn unknown_entry_points(wanted: &[String], found: &[String]) -> Vec<Error> {
    wanted
        .iter()
        .filter(|wanted| !found.contains(wanted))
        .map(|wanted| {
            Error::coded(
                Code::UnknownEntryPoint,
                Span::default(),
                format!("no kernel, vertex or fragment function named `{wanted}`"),
            )
            .with_notes(crate::diagnostics::suggest::did_you_mean(
                wanted,
                found.iter().map(String::as_str),
            ))
        })
        .collect()
}

impl<'p, 'a> Lowerer<'p, 'a> {
    /// A lowerer for `tu` with the settings `options` give.
    fn new(tu: &'a ast::TranslationUnit, program: &'p Program<'a>, options: &Options) -> Self {
        Lowerer {
            program,
            tu,
            settings: Settings {
                binding_map: options.binding_map.clone(),
                threadgroup_memory: options.threadgroup_memory.iter().copied().collect(),
                native_extensions: options.native_extensions,
                wide_integers: options.wide_integers,
                half_mode: options.half,
                texture_formats: options.texture_formats.iter().cloned().collect(),
                uniform_layout: options.uniform_layout,
                simd: options.simd.resolved(),
                simd_fallback: options.simd == metal::simd_groups::SimdGroups::Auto,
                matrix_fragments: metal::simdgroup_matrix::fragments_for(
                    options.simd.resolved(),
                    options.subgroup_width,
                ),
                byte_stores: options.byte_stores.resolved(options.simd),
                one_part_dispatch: options.one_part_dispatch,
                stage_in: options.stage_in.clone(),
            },
            global: ModuleCtx::default(),
            entry: EntryCtx::default(),
        }
    }
}

impl Lowerer<'_, '_> {
    /// Lowers stage function `f` into an entry point of `stage`, with a
    /// fresh entry-point context.
    fn entry_point(
        &mut self,
        f: &ast::FunctionDecl,
        stage: ast::Stage,
        threadgroup_size: Option<[u32; 3]>,
    ) -> Result<FunctionReflection> {
        match stage {
            ast::Stage::Kernel => {
                let warnings = self.global.warnings.len();
                let lowered = self.tried(|l| {
                    l.with_entry(f, EntryStage::Kernel, |l| l.kernel(f, threadgroup_size))
                });
                if rounds::discovering(self.program) {
                    return lowered;
                }
                // The emulation's further tries: SIMD-group calls in
                // branches and loops run on every thread with narrowed
                // activity.
                let lowered = match lowered {
                    Err(e) if e.code == Code::SimdNonUniform => {
                        self.global.warnings.truncate(warnings);
                        self.predicated_kernel(f, threadgroup_size, warnings)
                    }
                    lowered => lowered,
                };
                match lowered {
                    Err(e) if e.code == Code::SimdNonUniform && self.settings.simd_fallback => {
                        // Auto: the kernel keeps its SIMD-group calls where
                        // they are, on the adapter's subgroups.
                        self.global.warnings.truncate(warnings);
                        self.global.warnings.push(native_simd_fallback(f, e));
                        self.global.simd_fell_back = true;
                        self.with_entry(f, EntryStage::Kernel, |l| {
                            l.entry.native_simd = true;
                            l.kernel(f, threadgroup_size)
                        })
                    }
                    lowered => lowered,
                }
            }
            stage => {
                let tg = f
                    .params
                    .iter()
                    .flat_map(|p| &p.attributes)
                    .find(|a| a.name == "threadgroup");
                match tg {
                    // Metal's tile shading (MSL §4.4): the fragments of a tile
                    // share threadgroup memory with the tile's kernels.
                    Some(a) if stage == ast::Stage::Fragment => {
                        Err(crate::sema::unported_features::fragment_threadgroup_refusal(a.span))
                    }
                    Some(a) => Err(Error::coded(
                        Code::InvalidAttribute,
                        a.span,
                        "`[[threadgroup(n)]]` arguments are only allowed in kernel functions (and fragment functions of tile-shading pipelines)",
                    )),
                    None => {
                        let kind = match stage {
                            ast::Stage::Vertex => EntryStage::Vertex,
                            _ => EntryStage::Fragment,
                        };
                        // Rasterization disabled: run as a compute dispatch.
                        if stage == ast::Stage::Vertex
                            && self.program.resolve_type(&f.ret)? == crate::types::Type::Void
                        {
                            return self
                                .with_entry(f, EntryStage::Kernel, |l| l.vertex_dispatch(f));
                        }
                        let mut refl = self.with_entry(f, kind, |l| l.stage_function(f, stage))?;
                        if stage == ast::Stage::Vertex {
                            self.point_sprite_entry(f, &mut refl)?;
                        }
                        Ok(refl)
                    }
                }
            }
        }
    }

    /// `--half f32`: every `f16` of the finished module becomes `f32`; an
    /// error if any is left.
    fn demote_half(&mut self) -> Option<Error> {
        passes::half_demotion::demote_f16(&mut self.global.module);
        passes::half_demotion::mentions_f16(&self.global.module).then(|| {
            Error::coded(
                Code::Internal,
                Span::default(),
                "internal error: `f16` left in a translation with `half` as `f32`",
            )
        })
    }

    /// Adds to each function's reflection the function constants its entry
    /// point reaches.
    fn add_function_constants(&self, functions: &mut [FunctionReflection]) {
        for f in functions {
            if let Some(ep) = self
                .global
                .module
                .entry_points
                .iter()
                .find(|e| e.name == f.wgsl_entry_point)
            {
                metal::function_constants::reflect(
                    self.program,
                    &self.global.module,
                    &ep.function,
                    f,
                );
            }
        }
    }
}

impl Lowerer<'_, '_> {
    /// Runs `lower` with a fresh entry-point context for `f`: the context
    /// lives exactly as long as that entry point's lowering. A lowering
    /// whose casts view typed memory as another type is run again with that
    /// memory held as words (`metal::pointer_views`).
    fn with_entry<R>(
        &mut self,
        f: &ast::FunctionDecl,
        stage: EntryStage,
        lower: impl Fn(&mut Self) -> Result<R>,
    ) -> Result<R> {
        self.retry_with_word_views(|l, as_words| {
            let outer = std::mem::replace(&mut l.entry, EntryCtx::new(&f.name.name, stage));
            l.entry.viewed.as_words = as_words;
            let result = lower(l);
            let wanted = std::mem::take(&mut l.entry.viewed.wanted);
            l.entry = outer;
            (result, wanted)
        })
    }

    /// Lowers a helper that no entry point called, if its parameters allow a
    /// generic version (no buffer pointers).
    fn check_unreached_helper(&mut self, index: usize) -> Result<()> {
        let f = self.program.functions[index];
        if f.stage.is_some() || self.global.functions.keys().any(|k| k.0 == index) {
            return Ok(());
        }
        // A member function of a class template's instance is instantiated
        // only where it is used ([temp.inst]/11): `const constant T&
        // operator[]` of `Array<atomic_uint, 4>` is never checked.
        if self.member_of_template_instance(&f.name.name) {
            return Ok(());
        }
        // A function returning a pointer or reference is lowered where it
        // is called (`cxx/reference_calls.rs`): it has no helper of its own.
        if self.returned_place(f)?.is_some() {
            return Ok(());
        }
        let mut keys = Vec::new();
        for p in &f.params {
            match self.program.resolve_type(&p.ty)? {
                // Objects holding unions are word views (metal/unions.rs),
                // passed as such by their callers: like buffers, below.
                Type::Pointer(ptr)
                    if ptr.space == crate::types::AddressSpace::Thread
                        && !self.holds_union(&ptr.pointee) =>
                {
                    keys.push(ArgKey::Thread)
                }
                Type::Pointer(_) => return Ok(()),
                // The sampler kind and storage format come from the caller.
                Type::Sampler { .. } => return Ok(()),
                Type::Texture(t) if t.is_storage() => return Ok(()),
                t @ Type::Texture(_) => keys.push(ArgKey::Resource(t)),
                _ => keys.push(ArgKey::Value),
            }
        }
        self.function(index, keys, f.name.span).map(|_| ())
    }

    /// Whether `name` (`Array<float,4>::get`) is a member function of a
    /// struct template's instance.
    fn member_of_template_instance(&self, name: &str) -> bool {
        let Some((owner, _)) = name.rsplit_once("::") else {
            return false;
        };
        match self.program.symbols.get(owner) {
            Some(crate::sema::Symbol::Type(Type::Struct(id))) => {
                self.program.instance_origins.contains_key(id)
            }
            _ => false,
        }
    }

    fn span(s: Span) -> naga::Span {
        naga::Span::new(s.start, s.end)
    }
}
