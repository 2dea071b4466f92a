//! Running a WGSL compute entry point as it is, through raw wgpu: no
//! translator in between. The reference side of every round trip.

use msl2wgsl::runner::Gpu;
use wgpu::util::DeviceExt;

/// One buffer bound to the WGSL.
#[derive(Clone, Debug)]
pub struct Bound {
    /// `@group`.
    pub group: u32,
    /// `@binding`.
    pub binding: u32,
    /// `var<uniform>` (else `var<storage>`).
    pub uniform: bool,
    /// Contents before the dispatch.
    pub bytes: Vec<u8>,
}

/// Runs `entry` of `wgsl` over `groups` workgroups with `buffers` bound
/// (exactly the bindings the entry point uses) and returns each buffer's
/// bytes afterwards, in the order given. Every wgpu error is an `Err`.
pub fn run(
    gpu: &Gpu,
    wgsl: &str,
    entry: &str,
    groups: [u32; 3],
    buffers: &[Bound],
) -> Result<Vec<Vec<u8>>, String> {
    let device = gpu.device();
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("oracle"),
        source: wgpu::ShaderSource::Wgsl(wgsl.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("oracle"),
        layout: None,
        module: &module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    });
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(format!("wgpu rejected the WGSL: {e}"));
    }
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let gpu_buffers: Vec<wgpu::Buffer> = buffers
        .iter()
        .map(|b| {
            let usage = if b.uniform {
                wgpu::BufferUsages::UNIFORM
            } else {
                wgpu::BufferUsages::STORAGE
            };
            let mut contents = b.bytes.clone();
            // wgpu wants sizes in multiples of 4; the tail is never read back.
            contents.resize(b.bytes.len().next_multiple_of(16).max(16), 0);
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: &contents,
                usage: usage | wgpu::BufferUsages::COPY_SRC,
            })
        })
        .collect();
    let max_group = buffers.iter().map(|b| b.group + 1).max().unwrap_or(0);
    let groups_bound: Vec<wgpu::BindGroup> = (0..max_group)
        .map(|g| {
            let entries: Vec<wgpu::BindGroupEntry> = buffers
                .iter()
                .zip(&gpu_buffers)
                .filter(|(b, _)| b.group == g)
                .map(|(b, buffer)| wgpu::BindGroupEntry {
                    binding: b.binding,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer,
                        offset: 0,
                        size: wgpu::BufferSize::new(b.bytes.len() as u64),
                    }),
                })
                .collect();
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(g),
                entries: &entries,
            })
        })
        .collect();
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        for (g, group) in groups_bound.iter().enumerate() {
            pass.set_bind_group(g as u32, group, &[]);
        }
        pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
    }
    gpu.queue().submit([encoder.finish()]);
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(format!("wgpu rejected the dispatch: {e}"));
    }
    gpu_buffers
        .iter()
        .zip(buffers)
        .map(|(buffer, b)| {
            let mut bytes = gpu.read_buffer(buffer).map_err(|e| e.to_string())?;
            bytes.truncate(b.bytes.len());
            Ok(bytes)
        })
        .collect()
}
