//! The library API: runs every stage on one MSL source and keeps the result,
//! like an `MTLLibrary` holding `MTLFunction`s.

use crate::diagnostics::{Code, Diagnostic, Diagnostics, Severity};
use crate::preprocess;
use crate::reflect::FunctionReflection;
use crate::source_map::SourceMap;
use crate::source_map::{FileId, Span};
use crate::{lower, sema, syntax};
use std::path::Path;

mod browser_dialect;
pub mod dump;
mod limits;
mod reporting;
mod stub_vertex;

pub use crate::layout::uniform::UniformLayout;
pub use crate::lower::ByteStores;
pub use crate::lower::HalfMode;
pub use crate::lower::SimdGroups;
pub use crate::lower::WideIntegers;
pub use crate::sema::function_constant_values::{
    ConstantKey, ConstantValue, FunctionConstantValues,
};
pub use reporting::ErrorLimit;
use reporting::{add_macro_notes, limit_errors, Recovered};

/// Which WGSL dialect to emit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// Only WGSL that browsers accept.
    #[default]
    WebGpu,
    /// May use wgpu's native extensions.
    Wgpu,
}

/// Translation options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `-D`/`-I`/`-include` (`preprocess.forced_includes`), `--platform`.
    pub preprocess: preprocess::Options,
    /// Only these functions (all kernel/vertex/fragment functions when empty).
    pub entries: Vec<String>,
    /// `@workgroup_size` for every kernel; `None` picks the documented default.
    pub threadgroup_size: Option<[u32; 3]>,
    /// WGSL dialect.
    pub target: Target,
    /// Bytes of threadgroup memory for each `[[threadgroup(n)]]` argument
    /// (Metal's `setThreadgroupMemoryLength`); WGSL fixes it at translation.
    pub threadgroup_memory: Vec<(u32, u32)>,
    /// Texel format of the storage texture `[[texture(n)]]`, as wgpu names
    /// it (`rgba8unorm`, `r32float`, ...); MSL does not state it, WGSL needs it.
    pub texture_formats: Vec<(u32, String)>,
    /// Bindings to use instead of the default scheme.
    pub binding_map: crate::reflect::BindingMap,
    /// How `half` is represented: WGSL `f16` (needs `shader-f16`), or `f32`
    /// rounded to half precision wherever Metal rounds (needs nothing).
    pub half: HalfMode,
    /// How 64-bit integers are computed with [`Target::Wgpu`]: `i64`/`u64`
    /// (`shader-int64`), or their low 32 bits as on WebGPU, which the runner
    /// picks for an adapter without `shader-int64`.
    pub wide_integers: WideIntegers,
    /// Which `constant` buffers become `var<uniform>` (`--uniform-layout`).
    pub uniform_layout: UniformLayout,
    /// How SIMD-group functions are lowered (`--simd`): Apple's 32 lanes
    /// emulated in threadgroup memory, or the adapter's native subgroups;
    /// `Auto` is the emulation here and the adapter's choice in the runner.
    pub simd: SimdGroups,
    /// The adapter's subgroup width, where the host knows it is fixed (the
    /// runner sets it from an adapter whose subgroups are one width). With
    /// [`SimdGroups::Native`] and 32, SIMD-group matrices are held as
    /// Apple's per-lane fragments, exchanged by subgroup shuffles; with any
    /// other width, or none given, every thread holds whole matrices, which
    /// is right at any width, also where a kernel falls back from the
    /// 32-lane emulation to native subgroups (`metal/simdgroup_matrix.rs`).
    pub subgroup_width: Option<u32>,
    /// How 8- and 16-bit elements that neighbouring threads store are
    /// written (`--byte-stores`): atomic clear-and-set pairs, or whole words
    /// combined through quad operations where a kernel's store allows it
    /// (needs subgroups); `Auto` combines where the SIMD groups are native
    /// here, and where the adapter has subgroups in the runner.
    pub byte_stores: ByteStores,
    /// The host promises that every dispatch of the kernels is one WebGPU
    /// dispatch, never a part of one split because it has more
    /// threadgroups than a WebGPU dispatch may: kernels then read no
    /// `group_offset` from the dispatch uniform (leave it zero), which
    /// saves a load (the runner sets it for dispatches it does not split).
    pub one_part_dispatch: bool,
    /// How many errors are reported before the translation stops
    /// (`--error-limit`, clang's `-ferror-limit`).
    pub error_limit: ErrorLimit,
    /// Function constant values given at translation (`--function-constant`),
    /// by index or name as Metal's `MTLFunctionConstantValues` takes them:
    /// each is folded as a constant (array sizes, `case` labels, template
    /// arguments work), and its `override` is not emitted. Constants given
    /// none are `override`s the pipeline sets; a function that needs one's
    /// value at translation is left out of the WGSL until it is given
    /// (W0415), as the runner does for its pipelines.
    pub function_constants: FunctionConstantValues,
    /// Where kernels read their `[[stage_in]]` attributes (`--stage-in`;
    /// Metal's `MTLComputePipelineDescriptor.stageInputDescriptor`), which
    /// WGSL fixes when it is written. `None`: each kernel's attributes
    /// tightly packed in one buffer, the first index its `[[buffer(n)]]`
    /// arguments leave free, one element per thread in x
    /// ([`crate::stage_in::StageInputDescriptor::packed`]).
    pub stage_in: Option<crate::stage_in::StageInputDescriptor>,
}

/// A translation that failed: the diagnostics and the files they point into.
#[derive(Debug)]
pub struct Failure {
    /// Errors (and any warnings found before them).
    pub diagnostics: Diagnostics,
    /// The files read.
    pub source_map: SourceMap,
}

impl Failure {
    /// The diagnostics rendered in the compiler convention.
    pub fn render(&self) -> String {
        self.diagnostics.render(&self.source_map)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Failure {}

/// A translated MSL source: the WGSL module and each function's reflection.
#[derive(Debug)]
pub struct Library {
    wgsl: String,
    module: naga::Module,
    /// The validation of the module the WGSL was written from: what
    /// [`Library::module`] gives.
    ir: Ir,
    target: Target,
    functions: Vec<FunctionReflection>,
    warnings: Diagnostics,
    source_map: SourceMap,
    origin: Origin,
}

/// The IR the WGSL was written from, for [`Library::module`].
#[derive(Debug)]
struct Ir {
    /// The module as the target's rewrites left it; `None` when they
    /// changed nothing (it is then the library's own module, not copied).
    adapted: Option<naga::Module>,
    /// Its validation (expression types, uniformity, capabilities used).
    info: naga::valid::ModuleInfo,
}

/// What a library was translated from, kept so that a pipeline can be
/// translated again for a threadgroup size or threadgroup-memory length
/// known only at dispatch (WGSL fixes both in the module).
#[derive(Clone, Debug, Default)]
#[cfg_attr(not(feature = "runner"), allow(dead_code))]
pub(crate) struct Origin {
    /// The file name used in diagnostics (a path for [`Library::from_file`]).
    pub name: String,
    /// The MSL text.
    pub text: String,
    /// The options of the translation.
    pub options: Options,
}

impl Library {
    /// Translates `source`; `name` is the file name used in diagnostics.
    pub fn from_source(name: &str, source: &str, options: &Options) -> Result<Library, Failure> {
        let mut map = SourceMap::new();
        let main = map.add_file(name, source);
        let mut library = translate_in_thread(map, main, options.clone())?;
        library.origin = Origin {
            name: name.to_string(),
            text: source.to_string(),
            options: options.clone(),
        };
        Ok(library)
    }

    /// Reads and translates a file (`Library::from_file("shader.metal", &options)`).
    pub fn from_file(path: impl AsRef<Path>, options: &Options) -> Result<Library, Failure> {
        let path = path.as_ref();
        let mut map = SourceMap::new();
        let bytes = std::fs::read(path).map_err(|e| Failure {
            diagnostics: Diagnostics(vec![Diagnostic::unlocated(
                Code::Unreadable,
                format!("cannot read '{}': {e}", path.display()),
            )]),
            source_map: SourceMap::new(),
        })?;
        let name = path.display().to_string();
        let text = decode_source(&name, bytes)?;
        let main = map.add_file(name.clone(), text.clone());
        let mut library = translate_in_thread(map, main, options.clone())?;
        library.origin = Origin {
            name,
            text,
            options: options.clone(),
        };
        Ok(library)
    }

    /// What the library was translated from.
    #[cfg_attr(not(feature = "runner"), allow(dead_code))]
    pub(crate) fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The WGSL module with every translated function. A kernel that
    /// indexes threadgroup memory of a length no option gave is not in it
    /// (its reflection's `data_size` is `None`, and a warning, W0406, says
    /// which use needs the length): the runner translates it for the length
    /// set at dispatch.
    pub fn wgsl(&self) -> &str {
        &self.wgsl
    }

    /// The naga module and its [`naga::valid::ModuleInfo`], validated for
    /// the library's [`Target`]: pass `wgpu::ShaderSource::Naga(Cow::Owned(
    /// library.module().0.clone()))` to skip wgpu's WGSL parse. The module's
    /// entry points are in the order of [`Library::functions`] (then the
    /// point-sprite entry points, `FunctionReflection::point_sprite`); their IR
    /// names equal [`FunctionReflection::wgsl_entry_point`] except where
    /// naga's WGSL writer renamed a reserved word (the pipeline descriptor
    /// takes the IR name: `module.entry_points[i].name`).
    pub fn module(&self) -> (&naga::Module, &naga::valid::ModuleInfo) {
        let module = self.ir.adapted.as_ref().unwrap_or(&self.module);
        (module, &self.ir.info)
    }

    /// The MSL names of the translated functions, in source order.
    pub fn function_names(&self) -> Vec<&str> {
        self.functions.iter().map(|f| f.name.as_str()).collect()
    }

    /// The WGSL of one function, with only what it reaches (its bindings,
    /// helpers, types and constants), as a module of its own.
    pub fn function_wgsl(&self, name: &str) -> Option<String> {
        let index = self
            .functions
            .iter()
            .filter(|f| !translated_at_dispatch(f) && !f.awaits_function_constants())
            .position(|f| f.name == name)?;
        let mut module = self.module.clone();
        let entry = module.entry_points.swap_remove(index);
        module.entry_points = vec![entry];
        naga::compact::compact(&mut module, naga::compact::KeepUnused::No);
        let (text, _) = emit::wgsl(&module, self.target).ok()?;
        let function: Vec<FunctionReflection> = self.function(name).into_iter().cloned().collect();
        dump::maybe_dump(&text, &module, &function, self.target);
        Some(text)
    }

    /// Every translated function, in source order.
    pub fn functions(&self) -> &[FunctionReflection] {
        &self.functions
    }

    /// The function named `name` (its MSL name).
    pub fn function(&self, name: &str) -> Option<&FunctionReflection> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// Warnings, rendered in the compiler convention (empty if none).
    pub fn warnings(&self) -> String {
        self.warnings.render(&self.source_map)
    }

    /// The warnings, for other formats (`--error-format json`, `-Werror`).
    pub fn warning_diagnostics(&self) -> &Diagnostics {
        &self.warnings
    }

    /// The files read, which the diagnostics point into.
    pub fn source_map(&self) -> &SourceMap {
        &self.source_map
    }
}

/// The text of a source file, or a located error at its first byte that
/// is not UTF-8 (MSL sources are UTF-8; a Latin-1 comment is the usual
/// culprit, and the user needs to know where it is).
pub fn decode_source(name: &str, bytes: Vec<u8>) -> Result<String, Failure> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bad = e.as_bytes()[at];
            let mut source_map = SourceMap::new();
            let file =
                source_map.add_file(name, String::from_utf8_lossy(e.as_bytes()).into_owned());
            let location = crate::source_map::Location {
                file,
                range: at..at + 1,
            };
            let message = format!("invalid UTF-8 (byte 0x{bad:02X}): MSL source files are UTF-8");
            Err(Failure {
                diagnostics: Diagnostics(vec![Diagnostic::error_in_file(
                    Code::InvalidUtf8,
                    message,
                    location,
                )]),
                source_map,
            })
        }
    }
}

/// Stack the translation needs: deep (but legal) nesting must produce a
/// diagnostic, never a stack overflow, whatever the caller's stack is.
/// A caller whose thread has this much stack left is translated on that
/// thread; any other gets a thread of this size for each translation (a
/// host that translates many files, or measures a translation's CPU time,
/// sizes its own threads with it).
#[cfg(not(target_arch = "wasm32"))]
pub const TRANSLATION_STACK: usize = 1 << 30;

/// wasm32-unknown-unknown cannot spawn threads: translate on the caller's
/// stack (`web/wasm` links with a large one).
#[cfg(target_arch = "wasm32")]
fn translate_in_thread(map: SourceMap, main: FileId, options: Options) -> Result<Library, Failure> {
    translate(map, main, &options)
}

#[cfg(not(target_arch = "wasm32"))]
fn translate_in_thread(map: SourceMap, main: FileId, options: Options) -> Result<Library, Failure> {
    let on_this_thread = stacker::remaining_stack().is_some_and(|r| r >= TRANSLATION_STACK);
    let finished = if on_this_thread {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            translate(map, main, &options)
        }))
    } else {
        let spawned = std::thread::Builder::new()
            .name("msl2wgsl".into())
            .stack_size(TRANSLATION_STACK)
            .spawn(move || translate(map, main, &options));
        match spawned {
            Ok(handle) => handle.join(),
            Err(e) => {
                return Err(internal_failure(format!(
                    "cannot start the translation thread: {e}"
                )))
            }
        }
    };
    finished.unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(internal_failure(format!(
            "internal compiler error (a bug in msl2wgsl): {what}"
        )))
    })
}

#[cfg(not(target_arch = "wasm32"))]
fn internal_failure(message: String) -> Failure {
    Failure {
        diagnostics: Diagnostics(vec![Diagnostic::unlocated(Code::Internal, message)]),
        source_map: SourceMap::new(),
    }
}

/// A semantic-analysis or lowering error (or warning) as a diagnostic,
/// with the code its site chose.
fn sema_diagnostic(e: sema::Error, severity: Severity) -> Diagnostic {
    let place = match e.span == Span::default() {
        true => crate::diagnostics::Place::None,
        false => crate::diagnostics::Place::Unit(e.span),
    };
    let mut d = Diagnostic::new(severity, e.code, e.message, place);
    d.notes = e.notes;
    d
}

/// A syntax error as a diagnostic, with the code its site chose.
fn syntax_diagnostic(e: syntax::Error) -> Diagnostic {
    Diagnostic::error(e.code, e.message, e.span)
}

/// Whether function `f` needs a threadgroup-memory length that no option
/// gave (its reflection says `null`): Metal sets it at dispatch, so the
/// kernel's WGSL waits for it (W0406).
pub(crate) fn translated_at_dispatch(f: &FunctionReflection) -> bool {
    f.arguments.iter().any(|a| {
        a.threadgroup
            .as_ref()
            .is_some_and(|t| t.data_size.is_none())
    })
}

/// Takes the kernels [`translated_at_dispatch`] out of `lowered`'s module
/// and functions (they were lowered with a stand-in length, which no WGSL
/// may show); returns them with their positions among the functions, for
/// the reflection.
fn leave_out_kernels_translated_at_dispatch(
    lowered: &mut lower::Lowered,
) -> Vec<(usize, FunctionReflection)> {
    let mut left_out = Vec::new();
    let mut kept = Vec::new();
    let mut entry_points = std::mem::take(&mut lowered.module.entry_points).into_iter();
    for (at, f) in std::mem::take(&mut lowered.functions)
        .into_iter()
        .enumerate()
    {
        // A function waiting for function constant values (W0415) has
        // no entry point at all.
        if f.awaits_function_constants() {
            left_out.push((at, f));
            continue;
        }
        let entry = entry_points.next();
        match translated_at_dispatch(&f) {
            true => left_out.push((at, f)),
            false => {
                lowered.module.entry_points.extend(entry);
                kept.push(f);
            }
        }
    }
    lowered.module.entry_points.extend(entry_points);
    lowered.functions = kept;
    left_out
}

/// Runs every stage.
fn translate(mut map: SourceMap, main: FileId, options: &Options) -> Result<Library, Failure> {
    let fail = |mut diagnostics: Vec<Diagnostic>, map: SourceMap| {
        add_macro_notes(&mut diagnostics, &map);
        Failure {
            diagnostics: Diagnostics(limit_errors(diagnostics, options.error_limit)),
            source_map: map,
        }
    };
    let (text, mut warnings) =
        match preprocess::preprocess_with_warnings(&mut map, main, &options.preprocess) {
            Ok((text, warnings)) => (text, warnings),
            Err(diags) => return Err(fail(diags, map)),
        };
    if let Some(d) = crate::diagnostics::input::nul_byte(&text) {
        return Err(fail(vec![d], map));
    }
    let parsed = syntax::parse_recovering(&text, options.error_limit.get());
    let syntax_errors: Vec<Diagnostic> = parsed.errors.into_iter().map(syntax_diagnostic).collect();
    let mut tu = match parsed.unit {
        Some(tu) => tu,
        None => {
            warnings.extend(syntax_errors);
            return Err(fail(warnings, map));
        }
    };
    // After recovery the rest of the file is analysed too, for its
    // semantic errors (nothing is translated).
    let recovered = Recovered {
        syntax_errors,
        left_out_names: parsed.left_out_names,
    };
    sema::pointer_references::pass_by_value(&mut tu);
    warnings.extend(
        sema::redefinition::hide_redefinitions(&mut tu)
            .into_iter()
            .map(|w| sema_diagnostic(w, Severity::Warning)),
    );
    let lower_options = lower::Options {
        entries: options.entries.clone(),
        threadgroup_size: options.threadgroup_size,
        threadgroup_memory: options.threadgroup_memory.clone(),
        native_extensions: options.target == Target::Wgpu,
        wide_integers: options.wide_integers,
        texture_formats: options.texture_formats.clone(),
        binding_map: options.binding_map.clone(),
        half: options.half,
        uniform_layout: options.uniform_layout,
        simd: options.simd,
        subgroup_width: options.subgroup_width,
        byte_stores: options.byte_stores,
        one_part_dispatch: options.one_part_dispatch,
        stage_in: options.stage_in.clone(),
        // With syntax errors the report puts them and these in source
        // order: it then shows the first of what lowering found before it
        // stopped, as clang shows the first errors it met.
        error_limit: options.error_limit.get(),
    };
    // Struct template instances are added to `tu` as analysis finds them used.
    let mut rounds = lower::Rounds::default();
    let lowered = sema::struct_templates::analyze_until_complete(
        &mut tu,
        &options.function_constants,
        |tu, program, errors| {
            if !errors.is_empty() {
                return Err(errors);
            }
            lower::lower(tu, program, &lower_options, &mut rounds)
        },
    );
    let mut lowered = match lowered {
        Ok(l) => l,
        Err(errors) => {
            let errors = errors
                .into_iter()
                .map(|e| sema_diagnostic(e, Severity::Error));
            return Err(fail(recovered.with(errors.collect(), warnings), map));
        }
    };
    if !recovered.syntax_errors.is_empty() {
        return Err(fail(recovered.with(Vec::new(), warnings), map));
    }
    let deferred = leave_out_kernels_translated_at_dispatch(&mut lowered);
    warnings.extend(limits::leave_out_unpipelined_kernels(
        &mut lowered,
        &options.entries,
    ));
    // A function waiting for function constant values (W0415) stopped
    // part-way: what it had declared (its bindings, the dispatch uniform
    // before its members were known) is dropped with everything else no
    // entry point uses.
    if deferred.iter().any(|(_, f)| f.awaits_function_constants()) {
        naga::compact::compact(&mut lowered.module, naga::compact::KeepUnused::No);
    }
    warnings.extend(
        std::mem::take(&mut lowered.warnings)
            .into_iter()
            .map(|e| sema_diagnostic(e, Severity::Warning)),
    );
    for d in limits::check(&lowered.module) {
        warnings.push(d);
    }
    let mut functions = lowered.functions;
    warnings.extend(limits::required(&lowered.module, &mut functions));
    if Diagnostics(warnings.clone()).has_errors() {
        return Err(fail(warnings, map));
    }
    let (wgsl, entry_names, ir) = match emit::wgsl_and_ir(&lowered.module, options.target) {
        Ok(ok) => ok,
        Err(d) => {
            warnings.push(d);
            return Err(fail(warnings, map));
        }
    };
    for (f, name) in functions.iter_mut().zip(entry_names) {
        f.wgsl_entry_point = name;
    }
    dump::maybe_dump(&wgsl, &lowered.module, &functions, options.target);
    for (at, f) in deferred {
        functions.insert(at, f);
    }
    Ok(Library {
        wgsl,
        module: lowered.module,
        ir,
        target: options.target,
        functions,
        warnings: Diagnostics(warnings),
        source_map: map,
        origin: Origin::default(),
    })
}

mod emit {
    //! naga validation, the WGSL writer, and a re-parse of its output.

    use super::Target;
    use crate::diagnostics::{Code, Diagnostic};
    use crate::source_map::Span;
    use naga::valid::{Capabilities, ValidationFlags, Validator};

    /// Capabilities the emitted module may use for `target`. Subgroups are
    /// a WebGPU feature too (`enable subgroups;`); `subgroupBarrier` is
    /// wgpu's alone, so [`subgroup_use`] refuses it for WebGPU.
    fn capabilities(target: Target) -> Capabilities {
        let base = Capabilities::default()
            | Capabilities::SHADER_FLOAT16
            | Capabilities::SHADER_FLOAT16_IN_FLOAT32
            | Capabilities::SUBGROUP
            | Capabilities::SUBGROUP_BARRIER
            | Capabilities::CLIP_DISTANCES
            | Capabilities::DUAL_SOURCE_BLENDING
            | Capabilities::PRIMITIVE_INDEX;
        match target {
            Target::WebGpu => base,
            Target::Wgpu => {
                base | Capabilities::SHADER_INT16
                    | Capabilities::SHADER_INT64
                    | Capabilities::TEXTURE_ATOMIC
            }
        }
    }

    /// An internal error located where naga says, when it says.
    fn internal<E: std::error::Error>(stage: &str, err: &naga::WithSpan<E>) -> Diagnostic {
        let mut message = format!(
            "internal compiler error (a bug in msl2wgsl): {stage}: {}",
            err.as_inner()
        );
        let mut source = std::error::Error::source(err.as_inner());
        while let Some(s) = source {
            message += &format!(": {s}");
            source = s.source();
        }
        match err.spans().find(|(s, _)| s.is_defined()) {
            Some((s, _)) => {
                let r = s.to_range().unwrap_or(0..0);
                Diagnostic::error(Code::Internal, message, Span::new(r.start, r.end))
            }
            None => Diagnostic::unlocated(Code::Internal, message),
        }
    }

    /// Validates `module`, writes WGSL, and re-parses it to learn the entry
    /// point names the writer chose (it renames reserved words).
    pub fn wgsl(
        module: &naga::Module,
        target: Target,
    ) -> Result<(String, Vec<String>), Diagnostic> {
        emit(module, target, false).map(|(text, names, _)| (text, names))
    }

    /// [`wgsl`], and the validated module the text was written from.
    pub fn wgsl_and_ir(
        module: &naga::Module,
        target: Target,
    ) -> Result<(String, Vec<String>, super::Ir), Diagnostic> {
        let (text, names, ir) = emit(module, target, true)?;
        let ir = ir.ok_or_else(|| {
            Diagnostic::unlocated(Code::Internal, "internal compiler error: no IR kept")
        })?;
        Ok((text, names, ir))
    }

    /// [`wgsl`]; with `keep_ir`, the validated module too (when the
    /// target's rewrites changed it) and its validation.
    fn emit(
        module: &naga::Module,
        target: Target,
        keep_ir: bool,
    ) -> Result<(String, Vec<String>, Option<super::Ir>), Diagnostic> {
        // The WebGPU dialect's rewrites of the IR (`browser_dialect`); a
        // module that needs none is not copied.
        let adapted = match target {
            Target::WebGpu => super::browser_dialect::module(module),
            Target::Wgpu => None,
        };
        let module = adapted.as_ref().unwrap_or(module);
        let declared = crate::lower::passes::half_demotion::f16_undeclared(module).then(|| {
            let mut m = module.clone();
            crate::lower::passes::half_demotion::declare_f16(&mut m);
            m
        });
        let module = declared.as_ref().unwrap_or(module);
        crate::lower::passes::stage_operations::check(module)?;
        let caps = capabilities(target);
        // `--uniform-layout standard`: naga knows no
        // `uniform_buffer_standard_layout`, so such uniforms are validated
        // as the read-only storage buffers whose layout they have.
        let standard = standard_layout_uniforms(module);
        let relaxed = standard.then(|| relax_uniforms(module.clone()));
        let info = Validator::new(ValidationFlags::all(), caps)
            .validate(relaxed.as_ref().unwrap_or(module))
            .map_err(|e| internal("naga validation", &e))?;
        let subgroups = subgroup_use(module);
        if let (Target::WebGpu, Some(span)) = (target, subgroups.barrier) {
            let r = span.to_range().unwrap_or(0..0);
            let mut d = Diagnostic::error(
                Code::NoWebGpuEquivalent,
                "`simdgroup_barrier` has no WebGPU equivalent: WGSL has no subgroup barrier",
                Span::new(r.start, r.end),
            );
            d.notes
                .push("wgpu has one: translate with `--target wgpu` (`Target::Wgpu`)".into());
            return Err(d);
        }
        let text =
            naga::back::wgsl::write_string(module, &info, naga::back::wgsl::WriterFlags::empty())
                .map_err(|e| {
                Diagnostic::unlocated(
                    Code::Internal,
                    format!("internal compiler error (a bug in msl2wgsl): WGSL writer: {e}"),
                )
            })?;
        // naga's writer prints no diagnostic filters: the one Metal's rules
        // need is added as text (naga's parser takes it, so the re-parse
        // below checks it).
        let text = match uses_derivatives(module) {
            true => format!("diagnostic(off, derivative_uniformity);\n{text}"),
            false => text,
        };
        // Re-reading our own output proves naga's writer and parser agree
        // on it; it costs as much as the rest of the emission (BENCHMARKS.md),
        // so only debug builds (the test suite) pay for it.
        let names = entry_point_names(module);
        // Stress inputs (a 100,000-term sum is 6 MB of WGSL) test our
        // stages, not the writer, and naga's front end is quadratic in a
        // function's expression count (its typifier re-walks the arena
        // from the start each time it grows): past a megabyte of text or
        // `REPARSE_EXPRESSIONS` expressions in one function the check is
        // skipped, so translation time stays linear in debug builds too.
        if cfg!(debug_assertions)
            && text.len() < 1 << 20
            && largest_function(module) < REPARSE_EXPRESSIONS
        {
            let reparsed = reparse(&text, caps, standard)?;
            assert_eq!(
                reparsed, names,
                "entry point names differ from the writer's"
            );
        }
        // Browsers want the extension enabled (and more: see
        // `browser_dialect`); naga's own WGSL parser (wgpu's) rejects the
        // directive as unimplemented, so it is only added after the re-parse
        // above, and never for wgpu.
        let text = match target {
            Target::WebGpu => super::browser_dialect::text(text, subgroups.any),
            Target::Wgpu => text,
        };
        let text = match standard {
            true => format!("requires uniform_buffer_standard_layout;\n{text}"),
            false => text,
        };
        let ir = keep_ir.then(|| super::Ir {
            adapted: declared.or(adapted),
            info,
        });
        Ok((text, names, ir))
    }

    /// The most expressions a function may have for debug builds to
    /// re-parse the WGSL it is written to (see `emit`): 16,384 take naga's
    /// front end about 0.1 s, a 96,000-expression sum 3 s.
    const REPARSE_EXPRESSIONS: usize = 1 << 14;

    /// The expression count of `module`'s largest function or entry point.
    fn largest_function(module: &naga::Module) -> usize {
        let functions = module.functions.iter().map(|(_, f)| f);
        let entries = module.entry_points.iter().map(|e| &e.function);
        functions
            .chain(entries)
            .map(|f| f.expressions.len())
            .max()
            .unwrap_or(0)
    }

    /// True if a uniform of `module` needs the `uniform_buffer_standard_layout`
    /// language extension (only `--uniform-layout standard` makes one).
    fn standard_layout_uniforms(module: &naga::Module) -> bool {
        module.global_variables.iter().any(|(_, g)| {
            g.space == naga::AddressSpace::Uniform
                && crate::layout::uniform::check(module, g.ty, false).is_err()
        })
    }

    /// `module` with its uniforms in the read-only storage space, for
    /// validation under the standard layout.
    fn relax_uniforms(mut module: naga::Module) -> naga::Module {
        for (_, g) in module.global_variables.iter_mut() {
            if g.space == naga::AddressSpace::Uniform {
                g.space = naga::AddressSpace::Storage {
                    access: naga::StorageAccess::LOAD,
                };
            }
        }
        module
    }

    /// Parses and validates emitted WGSL again; returns its entry point names.
    fn reparse(text: &str, caps: Capabilities, standard: bool) -> Result<Vec<String>, Diagnostic> {
        let reparsed = naga::front::wgsl::parse_str(text).map_err(|e| {
            Diagnostic::unlocated(
                Code::Internal,
                format!(
                "internal compiler error (a bug in msl2wgsl): the emitted WGSL does not parse: {}",
                e.emit_to_string(text)
            ),
            )
        })?;
        let reparsed = match standard {
            true => relax_uniforms(reparsed),
            false => reparsed,
        };
        Validator::new(ValidationFlags::all(), caps)
            .validate(&reparsed)
            .map_err(|e| {
                Diagnostic::unlocated(Code::Internal, format!(
                    "internal compiler error (a bug in msl2wgsl): the emitted WGSL does not validate: {}",
                    e.emit_to_string(text)
                ))
            })?;
        Ok(reparsed
            .entry_points
            .iter()
            .map(|e| e.name.clone())
            .collect())
    }

    /// The names naga's WGSL writer gives the entry points: it renames
    /// reserved words and collisions, so the names are computed with the
    /// same `Namer` setup the writer uses (naga 30 `back::wgsl::Writer`).
    fn entry_point_names(module: &naga::Module) -> Vec<String> {
        let mut names = naga::FastHashMap::default();
        naga::proc::Namer::default().reset(
            module,
            &naga::keywords::wgsl::RESERVED_SET,
            &naga::keywords::wgsl::BUILTIN_IDENTIFIER_SET,
            naga::proc::CaseInsensitiveKeywordSet::empty(),
            &["__", "_naga"],
            &mut names,
        );
        (0..module.entry_points.len())
            .map(|i| {
                names
                    .remove(&naga::proc::NameKey::EntryPoint(
                        i as naga::proc::EntryPointIndex,
                    ))
                    .unwrap_or_else(|| module.entry_points[i].name.clone())
            })
            .collect()
    }

    /// What of WGSL's subgroup extension a module uses.
    #[derive(Default)]
    struct SubgroupUse {
        /// Any subgroup operation or built-in.
        any: bool,
        /// Where the first `subgroupBarrier` is, if any.
        barrier: Option<naga::Span>,
    }

    /// Whether any function takes an implicit derivative (`textureSample`,
    /// `textureSampleBias`, `dpdx`, ...). Metal allows them in divergent
    /// control flow (fragment functions sample inside `if`s and loops);
    /// WGSL's uniformity analysis rejects that unless the module turns its
    /// `derivative_uniformity` diagnostic off.
    fn uses_derivatives(module: &naga::Module) -> bool {
        use naga::{Expression as E, SampleLevel as L};
        module
            .functions
            .iter()
            .map(|(_, f)| f)
            .chain(module.entry_points.iter().map(|e| &e.function))
            .any(|f| {
                f.expressions.iter().any(|(_, e)| {
                    matches!(
                        e,
                        E::Derivative { .. }
                            | E::ImageSample {
                                level: L::Auto | L::Bias(_),
                                ..
                            }
                    )
                })
            })
    }

    /// Scans every function for subgroup statements and entry points for
    /// subgroup built-ins.
    fn subgroup_use(module: &naga::Module) -> SubgroupUse {
        let mut found = SubgroupUse::default();
        let functions = module
            .functions
            .iter()
            .map(|(_, f)| f)
            .chain(module.entry_points.iter().map(|e| &e.function));
        for f in functions {
            scan_block(&f.body, &mut found);
            found.any |= f.arguments.iter().any(|a| {
                matches!(
                    a.binding,
                    Some(naga::Binding::BuiltIn(
                        naga::BuiltIn::SubgroupInvocationId
                            | naga::BuiltIn::SubgroupSize
                            | naga::BuiltIn::SubgroupId
                            | naga::BuiltIn::NumSubgroups
                    ))
                )
            });
        }
        found
    }

    fn scan_block(block: &naga::Block, found: &mut SubgroupUse) {
        use naga::Statement as S;
        for (statement, span) in block.span_iter() {
            match statement {
                S::SubgroupBallot { .. }
                | S::SubgroupGather { .. }
                | S::SubgroupCollectiveOperation { .. } => found.any = true,
                S::ControlBarrier(b) | S::MemoryBarrier(b)
                    if b.contains(naga::Barrier::SUB_GROUP) =>
                {
                    found.any = true;
                    found.barrier = found.barrier.or(Some(*span));
                }
                S::Block(b) => scan_block(b, found),
                S::If { accept, reject, .. } => {
                    scan_block(accept, found);
                    scan_block(reject, found);
                }
                S::Loop {
                    body, continuing, ..
                } => {
                    scan_block(body, found);
                    scan_block(continuing, found);
                }
                S::Switch { cases, .. } => cases.iter().for_each(|c| scan_block(&c.body, found)),
                _ => {}
            }
        }
    }
}
