//! Entry-point parameters classified by attribute and type (MSL's
//! argument attribute tables): `[[buffer(n)]]`, `[[threadgroup(n)]]`,
//! `[[texture(n)]]`, `[[sampler(n)]]`, compute attributes and stage inputs,
//! each index checked once, and buffers without an index given the first
//! free one as Metal does.

use crate::diagnostics::Code;
use crate::lower::entry::compute::{builtin, KernelParam};
use crate::lower::{Error, Lowerer, Result};
use crate::sema::consteval;
use crate::source_map::Span;
use crate::syntax::ast;
use crate::types::{AddressSpace, Type};

/// The `[[buffer(n)]]` indices met while classifying parameters.
#[derive(Default)]
struct BufferIndices {
    /// Indices taken, with the attribute that took each.
    used: Vec<(u32, Span)>,
    /// Positions of the buffer parameters without an index.
    unindexed: Vec<usize>,
}

impl Lowerer<'_, '_> {
    pub(in crate::lower) fn classify_params<'f>(
        &mut self,
        f: &'f ast::FunctionDecl,
    ) -> Result<Vec<KernelParam<'f>>> {
        crate::lower::metal::tessellation::refuse_tessellator_inputs(f)?;
        let kernel = matches!(f.stage, Some((ast::Stage::Kernel, _)));
        let mut out = Vec::new();
        let mut buffers = BufferIndices::default();
        for p in &f.params {
            let param = self.classify_param(f, p, kernel, &out, &mut buffers)?;
            out.push(param);
        }
        self.assign_free_buffer_indices(&mut out, buffers);
        assign_free_threadgroup_indices(&mut out);
        self.assign_free_resource_indices(&mut out);
        Ok(out)
    }

    /// Classifies parameter `p` of `f` by its attribute and type; `out` holds
    /// the parameters classified before it.
    fn classify_param<'f>(
        &mut self,
        f: &'f ast::FunctionDecl,
        p: &'f ast::Param,
        kernel: bool,
        out: &[KernelParam<'f>],
        buffers: &mut BufferIndices,
    ) -> Result<KernelParam<'f>> {
        let ty = self.program.param_type(p)?;
        let name = p.name.as_ref().map(|n| n.name.as_str()).unwrap_or("_");
        // `function_constant(b)` beside the argument's attribute makes it
        // conditional (`lower::metal::function_constants`), not another kind.
        let attr = p.attributes.iter().find(|a| !kernel_entry_condition(f, a));
        match (attr.map(|a| a.name.as_str()), &ty) {
            (Some("buffer"), Type::Pointer(ptr))
                if matches!(ptr.space, AddressSpace::Device | AddressSpace::Constant) =>
            {
                self.buffer_param(f, p, ptr, attr.unwrap(), buffers)
            }
            (Some("buffer"), _) => {
                Err(Error::coded(Code::EntryPointSignature, p.ty.span, format!("`[[buffer(n)]]` argument `{name}` must be a pointer or reference in the `device` or `constant` address space")))
            }
            (Some(attr_name), _)
                if !kernel
                    && attr_name != "threadgroup"
                    && builtin(attr_name).is_some()
                    && !fragment_simd_builtin(f, attr_name) =>
            {
                Err(Error::coded(
                    Code::InvalidAttribute,
                    attr.unwrap().span,
                    format!("`[[{attr_name}]]` is only available in kernel functions"),
                ))
            }
            (Some(attr_name), _)
                if !kernel
                    && !matches!(
                        attr_name,
                        "buffer" | "texture" | "sampler" | "threadgroup"
                    ) =>
            {
                self.stage_param(f, p, &ty, attr.unwrap())
            }
            (Some(attr_name), _) if builtin(attr_name).is_some() => {
                let b = builtin(attr_name).unwrap();
                self.check_builtin_type(b, &ty, attr_name, p)?;
                Ok(KernelParam::Builtin {
                    param: p,
                    builtin: b,
                    ty,
                })
            }
            (Some("threadgroup"), Type::Pointer(ptr)) if ptr.space == AddressSpace::Threadgroup => {
                self.threadgroup_param(p, ptr, attr.unwrap(), out)
            }
            (Some("threadgroup"), _) => {
                Err(Error::coded(Code::EntryPointSignature, p.ty.span, format!("`[[threadgroup(n)]]` argument `{name}` must be a `threadgroup` pointer")))
            }
            (Some(kind @ ("texture" | "sampler")), _) => {
                self.resource_param(p, &ty, kind, attr.unwrap(), out)
            }
            // Like a buffer without `[[buffer(n)]]`: the first free index
            // of its kind, given once every explicit one is known.
            (None, Type::Texture(t)) => Ok(KernelParam::Texture {
                param: p,
                texture: *t,
                index: u32::MAX,
                count: None,
            }),
            (None, Type::Sampler { .. }) => Ok(KernelParam::Sampler {
                param: p,
                index: u32::MAX,
                count: None,
            }),
            (None, Type::Array(e, n)) if matches!(**e, Type::Texture(_) | Type::Sampler { .. }) => {
                match &**e {
                    Type::Texture(t) => Ok(KernelParam::Texture {
                        param: p,
                        texture: *t,
                        index: u32::MAX,
                        count: Some(*n),
                    }),
                    _ => Ok(KernelParam::Sampler {
                        param: p,
                        index: u32::MAX,
                        count: Some(*n),
                    }),
                }
            }
            // Per-thread inputs fetched from buffers (`kernel_stage_in.rs`).
            (Some("stage_in"), Type::Struct(id)) => {
                if out.iter().any(|p| matches!(p, KernelParam::StageIn { .. })) {
                    return Err(Error::coded(
                        Code::EntryPointSignature,
                        attr.unwrap().span,
                        "a function can have only one `[[stage_in]]` argument",
                    ));
                }
                Ok(KernelParam::StageIn { param: p, id: *id })
            }
            (Some("stage_in"), _) => Err(Error::coded(
                Code::EntryPointSignature,
                p.ty.span,
                format!("a kernel's `[[stage_in]]` argument `{name}` must be a struct of `[[attribute(n)]]` members"),
            )),
            (Some(other), _) => Err(Error::coded(
                Code::InvalidAttribute,
                attr.unwrap().span,
                format!("unknown or unsupported kernel argument attribute `[[{other}]]`"),
            )
            .with_notes(crate::diagnostics::suggest::did_you_mean(
                other,
                crate::diagnostics::suggest::ATTRIBUTES.iter().copied(),
            ))),
            // Metal numbers unattributed threadgroup arguments in order
            // (naga's MSL passes every `var<workgroup>` so): the index is
            // given once all explicit ones are known.
            (None, Type::Pointer(ptr)) if kernel && ptr.space == AddressSpace::Threadgroup => {
                Ok(KernelParam::Threadgroup {
                    param: p,
                    ptr: (**ptr).clone(),
                    index: u32::MAX,
                })
            }
            (None, Type::Pointer(ptr))
                if matches!(ptr.space, AddressSpace::Device | AddressSpace::Constant) =>
            {
                buffers.unindexed.push(out.len());
                Ok(KernelParam::Buffer {
                    param: p,
                    ptr: (**ptr).clone(),
                    index: u32::MAX,
                })
            }
            // Deferred renderers' `GBufferData gbuffer` beside `[[stage_in]]`:
            // its `[[color(m)]]` members read the render targets' current
            // values (programmable blending, MSL §5.2.3.4).
            (None, Type::Struct(_)) if !kernel => Err(Error::coded(Code::NoWebGpuEquivalent, p.span, format!(
                "`{name}` reads the render targets in the fragment function (framebuffer fetch: a struct of `[[color(m)]]` members), which has no WebGPU equivalent"
            ))),
            (None, _) => Err(Error::coded(Code::EntryPointSignature, p.span, format!(
                "kernel parameter `{name}` needs an attribute such as `[[buffer(n)]]` or `[[thread_position_in_grid]]`"
            ))),
        }
    }

    /// A `[[buffer(n)]]` parameter; its index must not be taken yet.
    fn buffer_param<'f>(
        &mut self,
        f: &ast::FunctionDecl,
        p: &'f ast::Param,
        ptr: &crate::types::Pointer,
        a: &ast::Attribute,
        buffers: &mut BufferIndices,
    ) -> Result<KernelParam<'f>> {
        let [arg] = a.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                "`buffer` takes one index: `[[buffer(n)]]`",
            ));
        };
        let index = consteval::eval(self.program, arg)?
            .as_int()
            .filter(|i| *i >= 0)
            .ok_or_else(|| {
                Error::coded(
                    Code::InvalidAttributeArgument,
                    arg.span,
                    "buffer index must be a non-negative integer constant",
                )
            })? as u32;
        if let Some((_, first)) = buffers.used.iter().find(|(i, _)| *i == index) {
            let _ = first;
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                format!("duplicate `[[buffer({index})]]` index"),
            )
            .note(format!(
                "each buffer argument of `{}` needs its own index",
                f.name.name
            )));
        }
        buffers.used.push((index, a.span));
        Ok(KernelParam::Buffer {
            param: p,
            ptr: ptr.clone(),
            index,
        })
    }

    /// A `[[threadgroup(n)]]` pointer parameter; its index must not be taken
    /// by an earlier one of `out`.
    fn threadgroup_param<'f>(
        &mut self,
        p: &'f ast::Param,
        ptr: &crate::types::Pointer,
        a: &ast::Attribute,
        out: &[KernelParam<'f>],
    ) -> Result<KernelParam<'f>> {
        let [arg] = a.args.as_slice() else {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                "`threadgroup` takes one index: `[[threadgroup(n)]]`",
            ));
        };
        let index = consteval::eval(self.program, arg)?
            .as_int()
            .filter(|i| (0..=u32::MAX as i64).contains(i))
            .ok_or_else(|| {
                Error::coded(
                    Code::InvalidAttributeArgument,
                    arg.span,
                    "threadgroup index must be a non-negative integer constant",
                )
            })? as u32;
        if out
            .iter()
            .any(|p| matches!(p, KernelParam::Threadgroup { index: i, .. } if *i == index))
        {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                format!("duplicate `[[threadgroup({index})]]` index"),
            ));
        }
        Ok(KernelParam::Threadgroup {
            param: p,
            ptr: ptr.clone(),
            index,
        })
    }

    /// A `[[texture(n)]]` or `[[sampler(n)]]` parameter (`kind` says which);
    /// its index must not be taken by an earlier one of `out`.
    fn resource_param<'f>(
        &mut self,
        p: &'f ast::Param,
        ty: &Type,
        kind: &str,
        a: &ast::Attribute,
        out: &[KernelParam<'f>],
    ) -> Result<KernelParam<'f>> {
        let name = p.name.as_ref().map(|n| n.name.as_str()).unwrap_or("_");
        let index = resource_index(self.program, a)?;
        // An array takes one index per element (MSL §5.2.1). The C form
        // `texture2d<float> ts[4]` is typed as a reference to the array.
        let ty = match ty {
            Type::Pointer(pp) if pp.is_reference && pp.space == AddressSpace::Thread => &pp.pointee,
            t => t,
        };
        let (elem, count) = match ty {
            Type::Array(e, n) => (&**e, Some(*n)),
            t => (t, None),
        };
        let taken = index..index.saturating_add(count.unwrap_or(1));
        let other = out.iter().find_map(|p| {
            resource_slots(p, kind)
                .filter(|s| s.0 != u32::MAX)
                .map(slot_range)
                .filter(|r| r.start < taken.end && taken.start < r.end)
        });
        if let Some(r) = other {
            let clash = taken.start.max(r.start);
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                format!("duplicate `[[{kind}({clash})]]` index"),
            )
            .with_notes(count.map(|n| {
                format!(
                    "an array of {n} takes indices {} to {}",
                    taken.start,
                    taken.end - 1
                )
            })));
        }
        if taken.end > 64 {
            return Err(Error::coded(
                Code::InvalidAttributeArgument,
                a.span,
                match count {
                    None => format!("{kind} index {index} is too large (at most 63)"),
                    Some(n) => format!(
                        "{kind} indices {index} to {} of this array of {n} are too large (at most 63)",
                        taken.end - 1
                    ),
                },
            ));
        }
        match (kind, elem) {
            ("texture", Type::Texture(t)) => Ok(KernelParam::Texture {
                param: p,
                texture: *t,
                index,
                count,
            }),
            ("sampler", Type::Sampler { .. }) => Ok(KernelParam::Sampler {
                param: p,
                index,
                count,
            }),
            _ => Err(Error::coded(
                Code::EntryPointSignature,
                p.ty.span,
                format!(
                    "`[[{kind}(n)]]` argument `{name}` must be a {kind} or an array of {kind}s"
                ),
            )),
        }
    }

    /// Gives every buffer argument without an index the first free one, as
    /// Metal does (MSL §5.2.1). When no buffer argument has an index they
    /// get 0, 1, 2, ... in order, as Apple's own samples rely on: silently.
    /// Mixed with explicit indices the assignment is easy to misread, so
    /// each implicit one is a warning (W0404) saying which index it got.
    fn assign_free_buffer_indices(&mut self, out: &mut [KernelParam], buffers: BufferIndices) {
        let BufferIndices {
            mut used,
            unindexed,
        } = buffers;
        let mixed = !used.is_empty();
        for i in unindexed {
            let free = (0..).find(|n| !used.iter().any(|(u, _)| u == n)).unwrap();
            used.push((free, Span::default()));
            if let KernelParam::Buffer { param, index, .. } = &mut out[i] {
                *index = free;
                if !mixed {
                    continue;
                }
                self.global.warnings.push(Error::coded(Code::ImplicitBufferIndex, param.span, format!(
                    "buffer argument `{}` has no `[[buffer(n)]]` index; Metal assigns it index {free}",
                    param.name.as_ref().map(|n| n.name.as_str()).unwrap_or("_")
                )));
            }
        }
    }
}

impl Lowerer<'_, '_> {
    /// Gives every texture and sampler argument without an index
    /// (`u32::MAX`) the first index of its kind no other argument has, in
    /// parameter order, as Metal does for buffers (MSL §5.2.1); with W0404
    /// where other arguments of the kind have explicit indices.
    fn assign_free_resource_indices(&mut self, out: &mut [KernelParam]) {
        for kind in ["texture", "sampler"] {
            let mut used: Vec<u32> = out
                .iter()
                .filter_map(|p| resource_slots(p, kind))
                .filter(|s| s.0 != u32::MAX)
                .flat_map(slot_range)
                .collect();
            let mixed = !used.is_empty();
            for p in out.iter_mut() {
                let Some((_, count)) = resource_slots(p, kind).filter(|s| s.0 == u32::MAX) else {
                    continue;
                };
                let free = (0u32..)
                    .find(|n| (*n..n + count).all(|i| !used.contains(&i)))
                    .unwrap();
                used.extend(free..free + count);
                let (KernelParam::Texture { param, index, .. }
                | KernelParam::Sampler { param, index, .. }) = p
                else {
                    continue;
                };
                *index = free;
                if mixed {
                    self.global.warnings.push(Error::coded(Code::ImplicitBufferIndex, param.span, format!(
                        "{kind} argument `{}` has no `[[{kind}(n)]]` index; Metal assigns it index {free}",
                        param.name.as_ref().map(|n| n.name.as_str()).unwrap_or("_")
                    )));
                }
            }
        }
    }
}

/// The first index and the number of indices `p` takes when it is a
/// `kind` ("texture" or "sampler") argument: one, or one per element of an
/// array (the first `u32::MAX` where none is given yet).
fn resource_slots(p: &KernelParam, kind: &str) -> Option<(u32, u32)> {
    match (p, kind) {
        (KernelParam::Texture { index, count, .. }, "texture")
        | (KernelParam::Sampler { index, count, .. }, "sampler") => {
            Some((*index, count.unwrap_or(1)))
        }
        _ => None,
    }
}

/// The indices from `first`, `count` of them.
fn slot_range((first, count): (u32, u32)) -> std::ops::Range<u32> {
    first..first.saturating_add(count)
}

/// True for the `[[function_constant(b)]]` of a conditional entry-point
/// argument, which says when it exists rather than what it is.
fn kernel_entry_condition(f: &ast::FunctionDecl, a: &ast::Attribute) -> bool {
    f.stage.is_some() && a.name == "function_constant"
}

/// Gives every threadgroup argument without an index (`u32::MAX`) the
/// first index no other threadgroup argument has, in parameter order.
fn assign_free_threadgroup_indices(out: &mut [KernelParam]) {
    let mut used: Vec<u32> = out
        .iter()
        .filter_map(|p| match p {
            KernelParam::Threadgroup { index, .. } if *index != u32::MAX => Some(*index),
            _ => None,
        })
        .collect();
    for p in out.iter_mut() {
        if let KernelParam::Threadgroup { index, .. } = p {
            if *index == u32::MAX {
                *index = (0..).find(|n| !used.contains(n)).unwrap();
                used.push(*index);
            }
        }
    }
}

/// How many bytes of `[[threadgroup(n)]]` memory a kernel is translated
/// for.
pub(in crate::lower) enum ThreadgroupLength {
    /// The host gave the length.
    Given(u32),
    /// None given, and the kernel uses the pointer as one object only: one
    /// element is the sound translation.
    OneObject,
    /// None given, and the kernel needs it (Metal sets it at dispatch): the
    /// kernel is translated again once it is known. Holds the warning that
    /// says which use needs it.
    AtDispatch(Error),
}

impl Lowerer<'_, '_> {
    /// The length of `[[threadgroup(index)]]` memory bound to parameter `p`
    /// of a kernel (found among the program's functions).
    pub(in crate::lower) fn threadgroup_length(
        &self,
        p: &ast::Param,
        ptr: &crate::types::Pointer,
        index: u32,
    ) -> ThreadgroupLength {
        if let Some(&bytes) = self.settings.threadgroup_memory.get(&index) {
            return ThreadgroupLength::Given(bytes);
        }
        let name = p.name.as_ref().map(|n| n.name.as_str());
        let body = self.function_of(p).and_then(|f| f.body.as_ref());
        let use_ = match (name, body) {
            (None, _) => return ThreadgroupLength::OneObject,
            (Some(name), Some(body)) => match length_needing_use(body, name) {
                None => return ThreadgroupLength::OneObject,
                Some(u) => u,
            },
            // Not found (an instance of a template): assume the worst.
            (Some(_), None) => LengthNeedingUse {
                span: p.span,
                what: "this kernel may index `{n}`",
            },
        };
        let n = name.unwrap_or("_");
        let elem = self.program.display(&ptr.pointee);
        ThreadgroupLength::AtDispatch(
            Error::coded(
                Code::ThreadgroupLengthAtDispatch,
                use_.span,
                format!(
                    "the length of threadgroup memory `[[threadgroup({index})]]` is not known, and {}: kernel `{}` is translated once it is",
                    use_.what.replace("{n}", n),
                    self.entry.name
                ),
            )
            .note(format!(
                "Metal sets the length at dispatch; WGSL fixes it at translation: pass `--threadgroup-memory {index}=BYTES` \
                 to the CLI, set `Options::threadgroup_memory` (`vec![({index}, BYTES)]`) in the library API, or dispatch \
                 through the runner, which translates the kernel for the length given to `set_threadgroup_memory_length`"
            ))
            .note(format!(
                "used only as `*{n}`, `{n}->m` or `{n}[0]`, `{n}` would need just one `{elem}`, and no length"
            )),
        )
    }
}

impl Lowerer<'_, '_> {
    /// Whether the function with buffer parameter `p` casts a pointer into
    /// it to a pointer to an atomic type (`(device atomic_uint*)&p.x`,
    /// `(device atomic_int*)&p[i]`): Metal lets plain data be accessed
    /// atomically through such a cast; WGSL atomics must be declared so.
    pub(in crate::lower) fn cast_to_atomic(&self, p: &ast::Param) -> bool {
        let (Some(name), Some(body)) = (&p.name, self.function_of(p).and_then(|f| f.body.as_ref()))
        else {
            return false;
        };
        let program = self.program;
        crate::sema::callgraph::any_expr(body, &|e| {
            let ast::ExprKind::Cast(_, ts, inner) = &e.kind else {
                return false;
            };
            let atomic = matches!(program.resolve_type(ts), Ok(Type::Pointer(q)) if matches!(q.pointee, Type::Atomic(_)));
            atomic && root_name(inner) == Some(name.name.as_str())
        })
    }

    /// The type of entry-point parameter `p`. An array parameter in the
    /// `device` or `constant` address space (`constant int64_t strides[3]`,
    /// as MLX writes them) is adjusted to a pointer to its element, as C++
    /// adjusts every array parameter ([dcl.fct]/5): the host binds a buffer.
    /// The function that declares parameter `p`.
    pub(super) fn function_of(&self, p: &ast::Param) -> Option<&ast::FunctionDecl> {
        self.program
            .functions
            .iter()
            .find(|f| f.params.iter().any(|q| std::ptr::eq(q, p)))
            .copied()
    }
}

/// The variable an lvalue or address expression starts from: `b` in
/// `&b.x[i].y`, `&b[i]`, `b->x`.
fn root_name(e: &ast::Expr) -> Option<&str> {
    use ast::ExprKind as K;
    match &e.kind {
        K::Name(p) if p.len() == 1 => Some(&p[0]),
        K::Unary(_, a) | K::Member(a, _, _) | K::Index(a, _) => root_name(a),
        K::Binary(crate::syntax::ast::BinaryOp::Add | crate::syntax::ast::BinaryOp::Sub, a, _) => {
            root_name(a)
        }
        _ => None,
    }
}

/// A use of a threadgroup pointer that may reach past the object it points
/// to (so needs the memory's length).
#[derive(Debug, PartialEq)]
struct LengthNeedingUse {
    /// The expression that uses it (`p[i]`, `p + 1`, `f(p)`, ...).
    span: Span,
    /// What that expression does with the pointer (`{n}` stands for its
    /// name), as the subject of "needs it".
    what: &'static str,
}

/// The first use in `body` of pointer `name` other than `*name`,
/// `name->m` and `name[0]` (each reads or writes the first element only),
/// or `None` when there is none: then any length of at least one element
/// behaves alike, and one element is the sound translation. Taking the
/// address of the element again (`&*name`, `&name[0]`), offsetting,
/// indexing with anything but a constant 0, copying and passing `name` to
/// a function all count as needing the length (a callee could index it).
/// A local that shadows `name` counts as `name`, which only errs on the
/// safe side.
fn length_needing_use(body: &ast::Block, name: &str) -> Option<LengthNeedingUse> {
    use ast::{ExprKind as K, UnaryOp};
    use std::collections::HashMap;
    let is_name = |e: &ast::Expr| matches!(&e.kind, K::Name(p) if p.len() == 1 && p[0] == name);
    let is_zero = |e: &ast::Expr| matches!(e.kind, K::Int { value: 0, .. });
    let key = |e: &ast::Expr| e as *const ast::Expr as usize;
    const ADDRESS: &str =
        "taking the address of `{n}`'s element needs it (the address may be offset)";
    // The enclosing use of each occurrence seen from its parent: `None`
    // for a single-object use, else the use that needs the length.
    let mut parent: HashMap<usize, Option<LengthNeedingUse>> = HashMap::new();
    let mut first = None;
    crate::sema::callgraph::visit_block(body, &mut |e: &ast::Expr| {
        let mut mark = |child: &ast::Expr, verdict: Option<(Span, &'static str)>| {
            if is_name(child) {
                parent
                    .entry(key(child))
                    .or_insert(verdict.map(|(span, what)| LengthNeedingUse { span, what }));
            }
        };
        match &e.kind {
            K::Unary(UnaryOp::AddrOf, inner) => match &inner.kind {
                K::Unary(UnaryOp::Deref, a) => mark(a, Some((e.span, ADDRESS))),
                K::Index(a, i) if is_zero(i) => mark(a, Some((e.span, ADDRESS))),
                _ => {}
            },
            K::Unary(UnaryOp::Deref, a) | K::Member(a, _, true) => mark(a, None),
            K::Index(a, i) if is_zero(i) => mark(a, None),
            K::Index(a, _) => mark(a, Some((e.span, "indexing `{n}` here needs it"))),
            K::Binary(_, a, b) => {
                mark(a, Some((e.span, "pointer arithmetic on `{n}` needs it")));
                mark(b, Some((e.span, "pointer arithmetic on `{n}` needs it")));
            }
            K::Call(_, args) => args.iter().for_each(|a| {
                mark(
                    a,
                    Some((
                        e.span,
                        "passing `{n}` to a function needs it (the function may index it)",
                    )),
                )
            }),
            K::Name(_) if is_name(e) && first.is_none() => {
                first = match parent.remove(&key(e)) {
                    Some(None) => None,
                    Some(Some(u)) => Some(u),
                    None => Some(LengthNeedingUse {
                        span: e.span,
                        what: "this use of `{n}` needs it",
                    }),
                };
            }
            _ => {}
        }
    });
    first
}

/// The index of a `[[texture(n)]]` or `[[sampler(n)]]` attribute.
fn resource_index(program: &crate::sema::Program, a: &ast::Attribute) -> Result<u32> {
    let [arg] = a.args.as_slice() else {
        return Err(Error::coded(
            Code::InvalidAttributeArgument,
            a.span,
            format!("`{}` takes one index: `[[{}(n)]]`", a.name, a.name),
        ));
    };
    consteval::eval(program, arg)?
        .as_int()
        .filter(|i| (0..=u32::MAX as i64).contains(i))
        .map(|i| i as u32)
        .ok_or_else(|| {
            Error::coded(
                Code::InvalidAttributeArgument,
                arg.span,
                format!("{} index must be a non-negative integer constant", a.name),
            )
        })
}

/// `[[thread_index_in_simdgroup]]` and `[[threads_per_simdgroup]]` of a
/// fragment function: the adapter's subgroup lane and width
/// (`stages::stage_param`).
fn fragment_simd_builtin(f: &ast::FunctionDecl, attr: &str) -> bool {
    matches!(f.stage, Some((ast::Stage::Fragment, _)))
        && matches!(attr, "thread_index_in_simdgroup" | "threads_per_simdgroup")
}
