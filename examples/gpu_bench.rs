//! GPU time of a translated stream kernel against hand-written WGSL of the
//! same algorithm, measured with wgpu timestamp queries (not wall clock).
//!
//!     cargo run --release --example gpu_bench [-- ELEMENTS [ITERATIONS]]
//!
//! Kernels: Apple's `add_arrays` translated by msl2wgsl (one float per
//! thread, Metal's ragged-grid guard and dispatch uniform included), the
//! same add hand-written in WGSL (one `f32` per thread), and the best
//! hand-written stream add (`vec4<f32>` per thread). Bandwidth counts the
//! bytes the algorithm must move: two reads and one write per element.

use msl2wgsl::reflect::DispatchParams;
use msl2wgsl::runner::Gpu;
use msl2wgsl::{Library, Options, Target};
use wgpu::util::DeviceExt;

const SCALAR_WGSL: &str = "
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = id.x + id.y * n.x * 256u;
    if (i < arrayLength(&c)) { c[i] = a[i] + b[i]; }
}";

const VEC4_WGSL: &str = "
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = id.x + id.y * n.x * 256u;
    if (i < arrayLength(&c)) { c[i] = a[i] + b[i]; }
}";

/// One kernel to time: its WGSL, entry point, threads it covers, and the
/// extra uniform (the translated kernel's dispatch uniform) at its binding.
struct Kernel {
    name: &'static str,
    wgsl: String,
    entry: String,
    threads: u32,
    /// Bindings of a, b, c.
    bindings: [(u32, u32); 3],
    dispatch: Option<(u32, u32)>,
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    // The translated kernel is 1-D: at most 65535 threadgroups of 256.
    let elements: u32 = args.next().map_or(Ok(65535 * 256), |s| s.parse())?;
    let iterations: usize = args.next().map_or(Ok(20), |s| s.parse())?;
    anyhow::ensure!(
        elements.is_multiple_of(4),
        "ELEMENTS must be a multiple of 4"
    );
    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter_line());
    anyhow::ensure!(
        gpu.features().contains(wgpu::Features::TIMESTAMP_QUERY),
        "the adapter has no timestamp queries"
    );
    let options = Options {
        target: Target::Wgpu,
        threadgroup_size: Some([256, 1, 1]),
        ..Options::default()
    };
    let source = include_str!("../fixtures/add_arrays.metal");
    let library = Library::from_source("add_arrays.metal", source, &options)?;
    let f = library
        .function("add_arrays")
        .expect("the fixture's kernel");
    let at = |i: usize| {
        let b = f.arguments[i].binding.expect("buffers are bound");
        (b.group, b.binding)
    };
    let dispatch = f.dispatch_binding.map(|b| (b.group, b.binding));
    let kernels = [
        Kernel {
            name: "translated add_arrays (f32/thread)",
            wgsl: library.wgsl().to_string(),
            entry: f.wgsl_entry_point.clone(),
            threads: elements,
            bindings: [at(0), at(1), at(2)],
            dispatch,
        },
        Kernel {
            name: "hand-written WGSL (f32/thread)",
            wgsl: SCALAR_WGSL.into(),
            entry: "main".into(),
            threads: elements,
            bindings: [(0, 0), (0, 1), (0, 2)],
            dispatch: None,
        },
        Kernel {
            name: "hand-written WGSL (vec4/thread)",
            wgsl: VEC4_WGSL.into(),
            entry: "main".into(),
            threads: elements / 4,
            bindings: [(0, 0), (0, 1), (0, 2)],
            dispatch: None,
        },
    ];
    let bytes = u64::from(elements) * 4;
    let a: Vec<f32> = (0..elements).map(|i| (i % 1024) as f32).collect();
    let input = |data: &[f32]| {
        gpu.device()
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytemuck::cast_slice(data),
                usage: wgpu::BufferUsages::STORAGE,
            })
    };
    let (buf_a, buf_b) = (input(&a), input(&a));
    let buf_c = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("c"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    println!(
        "{elements} elements ({} MiB per buffer), median of {iterations} dispatches",
        bytes >> 20
    );
    for kernel in &kernels {
        let ns = time_kernel(&gpu, kernel, [&buf_a, &buf_b, &buf_c], iterations)?;
        let out = gpu.read_buffer(&buf_c)?;
        let wrong = out
            .chunks_exact(4)
            .enumerate()
            .filter(|(i, c)| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) != 2.0 * a[*i])
            .count();
        anyhow::ensure!(wrong == 0, "{}: {wrong} wrong results", kernel.name);
        let gbs = (3 * bytes) as f64 / ns;
        println!("{:<38} {:>9.1} us {:>8.1} GB/s", kernel.name, ns / 1e3, gbs);
        clear(&gpu, &buf_c);
    }
    Ok(())
}

fn clear(gpu: &Gpu, buffer: &wgpu::Buffer) {
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    encoder.clear_buffer(buffer, 0, None);
    gpu.queue().submit([encoder.finish()]);
}

/// Median GPU time in nanoseconds of `iterations` dispatches of `kernel`.
fn time_kernel(
    gpu: &Gpu,
    kernel: &Kernel,
    buffers: [&wgpu::Buffer; 3],
    iterations: usize,
) -> anyhow::Result<f64> {
    let device = gpu.device();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(kernel.name),
        source: wgpu::ShaderSource::Wgsl(kernel.wgsl.as_str().into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(kernel.name),
        layout: None,
        module: &module,
        entry_point: Some(&kernel.entry),
        compilation_options: Default::default(),
        cache: None,
    });
    // A 2-D grid of 256-thread groups: one dimension holds at most 65535.
    let groups = kernel.threads.div_ceil(256);
    let (gx, gy) = (groups.min(65535), groups.div_ceil(65535));
    let params = DispatchParams {
        grid_size: [kernel.threads.min(gx * 256), gy, 1],
        group_offset: [0; 3],
        threadgroups: [gx, gy, 1],
    };
    anyhow::ensure!(
        kernel.dispatch.is_none() || gy == 1,
        "the translated kernel is 1-D: at most {} elements",
        65535 * 256
    );
    let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("dispatch"),
        contents: &params.to_bytes(),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let mut entries: Vec<(u32, u32, wgpu::BindingResource)> = kernel
        .bindings
        .iter()
        .zip(buffers)
        .map(|(&(g, b), buffer)| (g, b, buffer.as_entire_binding()))
        .collect();
    if let Some((g, b)) = kernel.dispatch {
        entries.push((g, b, uniform.as_entire_binding()));
    }
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries
            .iter()
            .map(|(_, b, r)| wgpu::BindGroupEntry {
                binding: *b,
                resource: r.clone(),
            })
            .collect::<Vec<_>>(),
    });
    let count = iterations as u32 * 2;
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
    for i in 0..iterations as u32 {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: &queries,
                beginning_of_pass_write_index: Some(2 * i),
                end_of_pass_write_index: Some(2 * i + 1),
            }),
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(gx, gy, 1);
    }
    encoder.resolve_query_set(&queries, 0..count, &resolve, 0);
    gpu.queue().submit([encoder.finish()]);
    let stamps: Vec<u64> = gpu
        .read_buffer(&resolve)?
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    let period = f64::from(gpu.queue().get_timestamp_period());
    let mut times: Vec<f64> = stamps
        .chunks_exact(2)
        .map(|p| p[1].saturating_sub(p[0]) as f64 * period)
        .collect();
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}
