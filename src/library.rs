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
mod stub_vertex;

pub use crate::lower::HalfMode;

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
    target: Target,
    functions: Vec<FunctionReflection>,
    warnings: Diagnostics,
    source_map: SourceMap,
    origin: Origin,
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

    /// Reads and translates a file.
    pub fn from_file(path: &Path, options: &Options) -> Result<Library, Failure> {
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

    /// The WGSL module with every translated function.
    pub fn wgsl(&self) -> &str {
        &self.wgsl
    }

    /// The MSL names of the translated functions, in source order.
    pub fn function_names(&self) -> Vec<&str> {
        self.functions.iter().map(|f| f.name.as_str()).collect()
    }

    /// The WGSL of one function, with only what it reaches (its bindings,
    /// helpers, types and constants), as a module of its own.
    pub fn function_wgsl(&self, name: &str) -> Option<String> {
        let index = self.functions.iter().position(|f| f.name == name)?;
        let mut module = self.module.clone();
        let entry = module.entry_points.swap_remove(index);
        module.entry_points = vec![entry];
        naga::compact::compact(&mut module, naga::compact::KeepUnused::No);
        let (text, _) = emit::wgsl(&module, self.target).ok()?;
        dump::maybe_dump(&text, &module, &self.functions[index..=index], self.target);
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

/// Stack for the recursive stages: deep (but legal) nesting must produce a
/// diagnostic, never a stack overflow, whatever the caller's stack is.
#[cfg(not(target_arch = "wasm32"))]
const STACK_SIZE: usize = 1 << 30;

/// wasm32-unknown-unknown cannot spawn threads: translate on the caller's
/// stack (`web/wasm` links with a large one).
#[cfg(target_arch = "wasm32")]
fn translate_in_thread(map: SourceMap, main: FileId, options: Options) -> Result<Library, Failure> {
    translate(map, main, &options)
}

#[cfg(not(target_arch = "wasm32"))]
fn translate_in_thread(map: SourceMap, main: FileId, options: Options) -> Result<Library, Failure> {
    let handle = std::thread::Builder::new()
        .name("msl2wgsl".into())
        .stack_size(STACK_SIZE)
        .spawn(move || translate(map, main, &options));
    match handle.map(|h| h.join()) {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(internal_failure(format!(
                "internal compiler error (a bug in msl2wgsl): {what}"
            )))
        }
        Err(e) => Err(internal_failure(format!(
            "cannot start the translation thread: {e}"
        ))),
    }
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

/// Runs every stage.
fn translate(mut map: SourceMap, main: FileId, options: &Options) -> Result<Library, Failure> {
    let fail = |diagnostics: Vec<Diagnostic>, map: SourceMap| Failure {
        diagnostics: Diagnostics(diagnostics),
        source_map: map,
    };
    let (text, mut warnings) =
        match preprocess::preprocess_with_warnings(&mut map, main, &options.preprocess) {
            Ok((text, warnings)) => (text, warnings),
            Err(diags) => return Err(fail(diags, map)),
        };
    if let Some(d) = crate::diagnostics::input::nul_byte(&text) {
        return Err(fail(vec![d], map));
    }
    let mut tu = match syntax::parse(&text) {
        Ok(tu) => tu,
        Err(e) => {
            warnings.push(syntax_diagnostic(e));
            return Err(fail(warnings, map));
        }
    };
    let lower_options = lower::Options {
        entries: options.entries.clone(),
        threadgroup_size: options.threadgroup_size,
        threadgroup_memory: options.threadgroup_memory.clone(),
        native_extensions: options.target == Target::Wgpu,
        texture_formats: options.texture_formats.clone(),
        binding_map: options.binding_map.clone(),
        half: options.half,
    };
    // Struct template instances are added to `tu` as analysis finds them used.
    let lowered = sema::struct_templates::analyze_until_complete(&mut tu, |tu, program, errors| {
        if !errors.is_empty() {
            return Err(errors);
        }
        lower::lower(tu, program, &lower_options)
    });
    let lowered = match lowered {
        Ok(l) => l,
        Err(errors) => {
            warnings.extend(
                errors
                    .into_iter()
                    .map(|e| sema_diagnostic(e, Severity::Error)),
            );
            return Err(fail(warnings, map));
        }
    };
    warnings.extend(
        lowered
            .warnings
            .into_iter()
            .map(|e| sema_diagnostic(e, Severity::Warning)),
    );
    for d in limits::check(&lowered.module) {
        warnings.push(d);
    }
    if Diagnostics(warnings.clone()).has_errors() {
        return Err(fail(warnings, map));
    }
    let (wgsl, entry_names) = match emit::wgsl(&lowered.module, options.target) {
        Ok(ok) => ok,
        Err(d) => {
            warnings.push(d);
            return Err(fail(warnings, map));
        }
    };
    let mut functions = lowered.functions;
    for (f, name) in functions.iter_mut().zip(entry_names) {
        f.wgsl_entry_point = name;
    }
    dump::maybe_dump(&wgsl, &lowered.module, &functions, options.target);
    Ok(Library {
        wgsl,
        module: lowered.module,
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
            Target::Wgpu => base | Capabilities::SHADER_INT16 | Capabilities::SHADER_INT64,
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
        let caps = capabilities(target);
        let info = Validator::new(ValidationFlags::all(), caps)
            .validate(module)
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
        // Past a megabyte (stress inputs: a 100,000-term sum is 6 MB of
        // WGSL) naga's front end is quadratic in a debug build; those
        // inputs test our stages, not the writer.
        if cfg!(debug_assertions) && text.len() < 1 << 20 {
            let reparsed = reparse(&text, caps)?;
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
        Ok((text, names))
    }

    /// Parses and validates emitted WGSL again; returns its entry point names.
    fn reparse(text: &str, caps: Capabilities) -> Result<Vec<String>, Diagnostic> {
        let reparsed = naga::front::wgsl::parse_str(text).map_err(|e| {
            Diagnostic::unlocated(
                Code::Internal,
                format!(
                "internal compiler error (a bug in msl2wgsl): the emitted WGSL does not parse: {}",
                e.emit_to_string(text)
            ),
            )
        })?;
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
