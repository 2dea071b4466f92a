//! What every benchmark shares: translating a fixture, making buffers,
//! timing a kernel with timestamp queries, checking and printing results.

use msl2wgsl::reflect::DispatchParams;
use msl2wgsl::runner::Gpu;
use msl2wgsl::wgpu;
use msl2wgsl::{Library, Options, SimdGroups, Target};
use wgpu::util::DeviceExt;

/// How long each kernel runs untimed before it is timed (see
/// `Bench::median_passes`).
pub const WARM_UP: std::time::Duration = std::time::Duration::from_millis(500);

/// The device and the number of timed dispatches per kernel.
pub struct Bench {
    /// The device.
    pub gpu: Gpu,
    /// Dispatches timed per kernel (the median is reported).
    pub iterations: usize,
}

/// One kernel to time: WGSL, entry point, workgroups to dispatch, the
/// buffers at their bindings (all in group 0) and, for a translated kernel,
/// the dispatch uniform at its binding.
pub struct Kernel<'a> {
    /// Row label.
    pub name: &'static str,
    /// The WGSL module.
    pub wgsl: String,
    /// Its entry point.
    pub entry: String,
    /// `dispatch_workgroups` counts.
    pub groups: [u32; 3],
    /// (binding, buffer) pairs of group 0.
    pub buffers: Vec<(u32, &'a wgpu::Buffer)>,
    /// The translated kernel's dispatch uniform: binding and contents.
    pub dispatch: Option<(u32, DispatchParams)>,
    /// Pipeline-overridable constants (the translated kernel's
    /// `metal_whole_grid`, for a grid of whole threadgroups).
    pub constants: Vec<(&'static str, f64)>,
}

/// A kernel translated from MSL: WGSL, entry point, the group-0 binding of
/// each argument (in MSL argument order; `None` for threadgroup memory)
/// and the dispatch uniform's binding.
pub struct Translated {
    /// The WGSL module of this function alone.
    pub wgsl: String,
    /// WGSL entry point name.
    pub entry: String,
    /// Binding of each MSL argument.
    pub bindings: Vec<Option<u32>>,
    /// Binding of the dispatch uniform.
    pub dispatch: Option<u32>,
    /// wgpu features the kernel needs (reflection spelling).
    pub required_features: Vec<String>,
    /// Threads per threadgroup.
    pub threadgroup_size: [u32; 3],
    /// Whether the kernel has barriers (and so the `metal_whole_grid`
    /// override).
    pub uses_barriers: bool,
}

impl Translated {
    /// The binding of argument `i`, which must be a buffer.
    pub fn at(&self, i: usize) -> u32 {
        self.bindings[i].expect("a buffer argument")
    }

    /// A [`Kernel`] for this translation dispatched as `params` says, with
    /// `buffers` given in MSL argument order.
    pub fn kernel<'a>(
        &self,
        name: &'static str,
        params: DispatchParams,
        buffers: &[&'a wgpu::Buffer],
    ) -> Kernel<'a> {
        Kernel {
            name,
            wgsl: self.wgsl.clone(),
            entry: self.entry.clone(),
            groups: params.threadgroups,
            buffers: buffers
                .iter()
                .enumerate()
                .map(|(i, b)| (self.at(i), *b))
                .collect(),
            dispatch: self.dispatch.map(|b| (b, params)),
            constants: self.constants(&params),
        }
    }

    /// What a host sets for a dispatch as `params` says, as
    /// `msl2wgsl::runner` sets it: the kernel's `metal_whole_grid` is
    /// `true` when the grid is whole threadgroups.
    pub fn constants(&self, params: &DispatchParams) -> Vec<(&'static str, f64)> {
        let whole = msl2wgsl::runner::is_whole_grid(&msl2wgsl::runner::Dispatch::Threads {
            grid: params.grid_size,
            threadgroup: self.threadgroup_size,
        });
        let mut out = Vec::new();
        if self.uses_barriers && whole {
            out.push((msl2wgsl::reflect::WHOLE_GRID_OVERRIDE, 1.0));
        }
        out
    }
}

/// Translates `entry` of the MSL `source` for wgpu with a fixed
/// threadgroup size and `[[threadgroup(n)]]` lengths in bytes.
pub fn translate(
    file: &str,
    source: &str,
    entry: &str,
    threadgroup_size: [u32; 3],
    threadgroup_memory: &[(u32, u32)],
) -> anyhow::Result<Translated> {
    translate_simd(
        file,
        source,
        entry,
        threadgroup_size,
        threadgroup_memory,
        SimdGroups::Native,
    )
}

/// [`translate`] with SIMD-group functions lowered as `simd` says.
pub fn translate_simd(
    file: &str,
    source: &str,
    entry: &str,
    threadgroup_size: [u32; 3],
    threadgroup_memory: &[(u32, u32)],
    simd: SimdGroups,
) -> anyhow::Result<Translated> {
    let options = Options {
        simd,
        threadgroup_memory: threadgroup_memory.to_vec(),
        ..Options::default()
    };
    translate_options(file, source, entry, threadgroup_size, options)
}

/// [`translate`] with the rest of the translation's options given: the
/// target (always wgpu), the threadgroup size and the entry are set here.
pub fn translate_options(
    file: &str,
    source: &str,
    entry: &str,
    threadgroup_size: [u32; 3],
    options: Options,
) -> anyhow::Result<Translated> {
    // Every dispatch here is one WebGPU dispatch, as the runner's are
    // where it does not split them.
    let options = Options {
        target: Target::Wgpu,
        threadgroup_size: Some(threadgroup_size),
        entries: vec![entry.to_string()],
        one_part_dispatch: true,
        ..options
    };
    let library = Library::from_source(file, source, &options)
        .map_err(|e| anyhow::anyhow!("{file}: translation failed:\n{e:?}"))?;
    let f = library
        .function(entry)
        .ok_or_else(|| anyhow::anyhow!("{file}: no function {entry}"))?;
    let group0 = |b: &msl2wgsl::reflect::WgslBinding| {
        assert_eq!(b.group, 0, "kernels bind in group 0");
        b.binding
    };
    Ok(Translated {
        wgsl: library.function_wgsl(entry).expect("the function exists"),
        entry: f.wgsl_entry_point.clone(),
        bindings: f
            .arguments
            .iter()
            .map(|a| a.binding.as_ref().map(group0))
            .collect(),
        dispatch: f.dispatch_binding.as_ref().map(group0),
        required_features: f.required_features.clone(),
        threadgroup_size,
        uses_barriers: f.uses_barriers,
    })
}

/// Dispatch parameters of a `dispatchThreads` grid of `grid` threads in
/// threadgroups of `size`.
pub fn grid(grid: [u32; 3], size: [u32; 3]) -> DispatchParams {
    DispatchParams {
        grid_size: grid,
        group_offset: [0; 3],
        threadgroups: [0, 1, 2].map(|d| grid[d].div_ceil(size[d])),
    }
}

impl Bench {
    /// A read-only storage buffer holding `data`.
    pub fn input(&self, data: &[u8]) -> wgpu::Buffer {
        self.gpu
            .device()
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: data,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::UNIFORM,
            })
    }

    /// A zeroed storage buffer of `bytes` that can be read back and
    /// cleared ([`Bench::clear`] needs `COPY_DST`: without it wgpu refuses
    /// the clear, and a kernel that wrote nothing would pass on the results
    /// of the kernel before it).
    pub fn output(&self, bytes: u64) -> wgpu::Buffer {
        self.gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Zeroes `buffer` (between kernels, so one cannot pass on another's
    /// results).
    pub fn clear(&self, buffer: &wgpu::Buffer) -> anyhow::Result<()> {
        let scope = self
            .gpu
            .device()
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = self
            .gpu
            .device()
            .create_command_encoder(&Default::default());
        encoder.clear_buffer(buffer, 0, None);
        self.gpu.queue().submit([encoder.finish()]);
        match pollster::block_on(scope.pop()) {
            Some(error) => Err(anyhow::Error::new(error).context("clearing an output buffer")),
            None => Ok(()),
        }
    }

    /// The contents of `buffer` as `f32`s.
    pub fn read_f32(&self, buffer: &wgpu::Buffer) -> anyhow::Result<Vec<f32>> {
        Ok(bytemuck::pod_collect_to_vec(&self.gpu.read_buffer(buffer)?))
    }

    /// The contents of `buffer` as bytes.
    pub fn read_bytes(&self, buffer: &wgpu::Buffer) -> anyhow::Result<Vec<u8>> {
        Ok(self.gpu.read_buffer(buffer)?)
    }

    /// Median GPU time in nanoseconds of `iterations` dispatches of
    /// `kernel`, each in its own compute pass between two timestamps.
    ///
    /// A validation error of wgpu (a binding over the adapter's limits, a
    /// wrong bind group) fails the timing: wgpu would only log it, and the
    /// time of a dispatch that never ran is no time.
    pub fn time(&self, kernel: &Kernel) -> anyhow::Result<f64> {
        let scope = self
            .gpu
            .device()
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let ns = self.time_unchecked(kernel);
        match pollster::block_on(scope.pop()) {
            Some(error) => Err(anyhow::Error::new(error).context(kernel.name)),
            None => ns,
        }
    }

    fn time_unchecked(&self, kernel: &Kernel) -> anyhow::Result<f64> {
        let device = self.gpu.device();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(kernel.name),
            source: wgpu::ShaderSource::Wgsl(kernel.wgsl.as_str().into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(kernel.name),
            layout: None,
            module: &module,
            entry_point: Some(&kernel.entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: &kernel.constants,
                ..Default::default()
            },
            cache: None,
        });
        let uniform = kernel.dispatch.map(|(binding, params)| {
            let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("dispatch"),
                contents: &params.to_bytes(),
                usage: wgpu::BufferUsages::UNIFORM,
            });
            (binding, buffer)
        });
        let entries: Vec<wgpu::BindGroupEntry> = kernel
            .buffers
            .iter()
            .map(|&(binding, buffer)| (binding, buffer))
            .chain(uniform.as_ref().map(|(binding, buffer)| (*binding, buffer)))
            .map(|(binding, buffer)| wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            })
            .collect();
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let [gx, gy, gz] = kernel.groups;
        anyhow::ensure!(
            kernel.groups.iter().all(|&g| g <= 65535),
            "{}: {gx}x{gy}x{gz} workgroups: at most 65535 per dimension",
            kernel.name
        );
        self.median_ns(|pass| {
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(gx, gy, gz);
        })
    }

    /// Records `record` into `iterations` timestamped compute passes of one
    /// submission and returns the median pass time in nanoseconds.
    fn median_ns(&self, record: impl Fn(&mut wgpu::ComputePass)) -> anyhow::Result<f64> {
        self.median_passes(|encoder, queries, i| {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                    query_set: queries,
                    beginning_of_pass_write_index: Some(2 * i),
                    end_of_pass_write_index: Some(2 * i + 1),
                }),
            });
            record(&mut pass);
        })
    }

    /// Records `record` into `iterations` timestamped render passes that
    /// clear and draw into `target`, and returns the median pass time in
    /// nanoseconds.
    pub fn median_render_ns(
        &self,
        target: &wgpu::TextureView,
        record: impl Fn(&mut wgpu::RenderPass),
    ) -> anyhow::Result<f64> {
        self.median_passes(|encoder, queries, i| {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: None,
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: target,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: Some(wgpu::RenderPassTimestampWrites {
                    query_set: queries,
                    beginning_of_pass_write_index: Some(2 * i),
                    end_of_pass_write_index: Some(2 * i + 1),
                }),
                occlusion_query_set: None,
                multiview_mask: None,
            });
            record(&mut pass);
        })
    }

    /// Records `iterations` passes with `pass(encoder, queries, i)`, which
    /// writes timestamps `2i` and `2i + 1`, into one submission and returns
    /// the median difference in nanoseconds.
    ///
    /// The same submission first runs untimed, again and again for at
    /// least [`WARM_UP`]: on NVIDIA the first kernel timed after the GPU
    /// idled (while the CPU computed a reference or filled buffers) ran up
    /// to 3× slower for a whole submission, and an identical module timed
    /// again right after ran at full speed (BENCHMARKS.md, "Warm-up"): the
    /// GPU's state, not the kernel.
    fn median_passes(
        &self,
        pass: impl Fn(&mut wgpu::CommandEncoder, &wgpu::QuerySet, u32),
    ) -> anyhow::Result<f64> {
        let start = std::time::Instant::now();
        while start.elapsed() < WARM_UP {
            self.pass_times(&pass)?;
        }
        let mut times = self.pass_times(&pass)?;
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }

    /// The times in nanoseconds of one submission of `iterations` passes
    /// recorded by `pass` (see [`Self::median_passes`]).
    fn pass_times(
        &self,
        pass: &impl Fn(&mut wgpu::CommandEncoder, &wgpu::QuerySet, u32),
    ) -> anyhow::Result<Vec<f64>> {
        let device = self.gpu.device();
        let count = self.iterations as u32 * 2;
        let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: None,
            ty: wgpu::QueryType::Timestamp,
            count,
        });
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: u64::from(count) * 8,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        for i in 0..self.iterations as u32 {
            pass(&mut encoder, &queries, i);
        }
        encoder.resolve_query_set(&queries, 0..count, &resolve, 0);
        self.gpu.queue().submit([encoder.finish()]);
        let stamps: Vec<u64> = bytemuck::pod_collect_to_vec(&self.gpu.read_buffer(&resolve)?);
        let period = f64::from(self.gpu.queue().get_timestamp_period());
        Ok(stamps
            .chunks_exact(2)
            .map(|p| p[1].saturating_sub(p[0]) as f64 * period)
            .collect())
    }
}

/// One timed kernel's result line.
pub struct Row {
    /// Kernel label.
    pub name: &'static str,
    /// Median GPU time in nanoseconds.
    pub ns: f64,
    /// Work done: bytes (for GB/s) or floating-point operations (GFLOP/s).
    pub work: f64,
}

/// Prints `rows` as `name  time  throughput  ratio`, the ratio being each
/// row's time over that of `rows[reference]` (the hand-written kernel of
/// the same algorithm).
pub fn print_rows(rows: &[Row], unit: &str, reference: usize) {
    let base = rows[reference].ns;
    for (i, row) in rows.iter().enumerate() {
        let mark = if i == reference { " (ref)" } else { "" };
        println!(
            "{:<38} {:>9.1} us {:>8.1} {unit} {:>6.2}x{mark}",
            row.name,
            row.ns / 1e3,
            row.work / row.ns,
            row.ns / base
        );
    }
}

/// Fails when `got` and `want` differ anywhere by more than `tolerance`
/// (absolute), naming the first difference.
pub fn check_f32(name: &str, got: &[f32], want: &[f32], tolerance: f32) -> anyhow::Result<()> {
    anyhow::ensure!(got.len() >= want.len(), "{name}: short output");
    let wrong: Vec<usize> = (0..want.len())
        .filter(|&i| (got[i] - want[i]).abs() > tolerance || got[i].is_nan())
        .collect();
    if let Some(&i) = wrong.first() {
        anyhow::bail!(
            "{name}: {} wrong results; first at {i}: got {}, want {}",
            wrong.len(),
            got[i],
            want[i]
        );
    }
    Ok(())
}

/// Fails when `got` and `want` differ anywhere, naming the first difference.
pub fn check_exact<T: PartialEq + std::fmt::Debug>(
    name: &str,
    got: &[T],
    want: &[T],
) -> anyhow::Result<()> {
    anyhow::ensure!(got.len() >= want.len(), "{name}: short output");
    let wrong = (0..want.len()).filter(|&i| got[i] != want[i]).count();
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        anyhow::bail!(
            "{name}: {wrong} wrong results; first at {i}: got {:?}, want {:?}",
            got[i],
            want[i]
        );
    }
    Ok(())
}
