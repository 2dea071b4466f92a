//! Buffers: checking the user's bytes against an argument, uploading them,
//! and reading them back; plus the error-scope wrapper every wgpu call of
//! the runner goes through.

use super::interface::{BufferBinding, UsedBinding};
use super::{Gpu, RunError};
use crate::reflect::Argument;
use wgpu::util::DeviceExt;

/// Runs `f` with wgpu's validation, out-of-memory and internal errors caught,
/// returning the first one as a [`RunError::Gpu`].
///
/// Error scopes are per thread in wgpu, so several threads may share one
/// [`Gpu`] (tests do).
pub(crate) fn scoped<T>(gpu: &Gpu, f: impl FnOnce() -> T) -> Result<T, RunError> {
    let filters = [
        wgpu::ErrorFilter::Validation,
        wgpu::ErrorFilter::OutOfMemory,
        wgpu::ErrorFilter::Internal,
    ];
    let guards: Vec<_> = filters
        .iter()
        .map(|f| gpu.device.push_error_scope(*f))
        .collect();
    let value = f();
    // Scopes pop in reverse order of pushing.
    let mut first = None;
    for guard in guards.into_iter().rev() {
        if let Some(error) = pollster::block_on(guard.pop()) {
            first.get_or_insert(error);
        }
    }
    match first {
        Some(error) => Err(RunError::Gpu(error.to_string())),
        None => Ok(value),
    }
}

/// Checks the bytes given for a buffer argument: present if the argument is
/// active, and then at least one element (`T*`) or the whole type (`T&`)
/// long. An inactive argument may be given anything, as in Metal.
pub(crate) fn check_argument<'a>(
    arg: &Argument,
    bytes: Option<&'a Vec<u8>>,
) -> Result<Option<&'a Vec<u8>>, RunError> {
    let Some(bytes) = bytes else {
        if arg.active {
            return Err(RunError::MissingBuffer {
                name: arg.name.clone(),
                index: arg.index,
            });
        }
        return Ok(None);
    };
    if let Some(info) = arg.buffer.as_ref().filter(|_| arg.active) {
        if (bytes.len() as u64) < u64::from(info.data_size) {
            return Err(RunError::BufferTooSmall {
                name: arg.name.clone(),
                index: arg.index,
                len: bytes.len(),
                needed: info.data_size.into(),
            });
        }
    }
    Ok(Some(bytes))
}

/// The size of the wgpu buffer for `len` user bytes: a multiple of 4 (wgpu
/// copies and storage bindings need it), at least 4, and at least the
/// binding's minimum size (the tail the user did not give is zero).
pub(crate) fn padded_size(len: usize, min_size: u64) -> u64 {
    (len as u64).max(min_size).max(4).next_multiple_of(4)
}

/// Uploads an argument's bytes into a new buffer usable for `binding`.
pub(crate) fn upload_argument(
    gpu: &Gpu,
    arg: &Argument,
    bytes: &[u8],
    binding: &UsedBinding,
) -> Result<wgpu::Buffer, RunError> {
    let size = padded_size(bytes.len(), binding.min_size);
    let (usage, limit) = match binding.kind {
        BufferBinding::Uniform => (
            wgpu::BufferUsages::UNIFORM,
            gpu.limits.max_uniform_buffer_binding_size,
        ),
        BufferBinding::Storage { .. } => (
            wgpu::BufferUsages::STORAGE,
            gpu.limits.max_storage_buffer_binding_size,
        ),
    };
    let limit = limit.min(gpu.limits.max_buffer_size);
    if size > limit {
        return Err(RunError::BufferTooLarge {
            name: arg.name.clone(),
            index: arg.index,
            len: size,
            limit,
        });
    }
    let mut contents = bytes.to_vec();
    contents.resize(size as usize, 0);
    Ok(gpu
        .device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(&arg.name),
            contents: &contents,
            usage: usage | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        }))
}

/// Creates a uniform buffer holding `bytes`.
pub(crate) fn uniform(gpu: &Gpu, label: &str, bytes: &[u8]) -> wgpu::Buffer {
    gpu.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytes,
            usage: wgpu::BufferUsages::UNIFORM,
        })
}

/// A GPU buffer to read back after the dispatch: its Metal index, the
/// buffer, and how many bytes the user gave.
pub(crate) struct Readback<'a> {
    /// The Metal index.
    pub index: u32,
    /// The buffer holding the argument.
    pub buffer: &'a wgpu::Buffer,
    /// The user's length (the buffer may be longer).
    pub len: usize,
}

/// Records copies of every buffer in `reads` into mappable staging buffers;
/// returns the staging buffers in the same order.
pub(crate) fn stage_readbacks(
    gpu: &Gpu,
    encoder: &mut wgpu::CommandEncoder,
    reads: &[Readback<'_>],
) -> Vec<wgpu::Buffer> {
    reads
        .iter()
        .map(|read| {
            let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback"),
                size: read.buffer.size(),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            encoder.copy_buffer_to_buffer(read.buffer, 0, &staging, 0, read.buffer.size());
            staging
        })
        .collect()
}

/// Maps every staging buffer (after the submission that filled them) and
/// returns the first `len` bytes of each.
pub(crate) fn map_readbacks(
    gpu: &Gpu,
    staging: &[wgpu::Buffer],
    lens: &[usize],
) -> Result<Vec<Vec<u8>>, RunError> {
    let (sender, receiver) = std::sync::mpsc::channel();
    for (i, buffer) in staging.iter().enumerate() {
        let sender = sender.clone();
        buffer.map_async(wgpu::MapMode::Read, .., move |result| {
            // The receiver outlives every callback: it is only dropped after
            // the poll below has run them all.
            let _ = sender.send((i, result));
        });
    }
    drop(sender);
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| RunError::Gpu(e.to_string()))?;
    // Another thread polling the same device may run these callbacks after
    // our poll returned, so wait for each one rather than only looking.
    for _ in 0..staging.len() {
        let (_, result) = loop {
            match receiver.recv_timeout(std::time::Duration::from_millis(10)) {
                Ok(message) => break message,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    gpu.device
                        .poll(wgpu::PollType::Poll)
                        .map_err(|e| RunError::Gpu(e.to_string()))?;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(RunError::Gpu("a readback buffer was never mapped".into()));
                }
            }
        };
        result.map_err(|e| RunError::Gpu(format!("cannot map a buffer for reading: {e}")))?;
    }
    let mut out = Vec::with_capacity(staging.len());
    for (buffer, &len) in staging.iter().zip(lens) {
        let view = buffer
            .get_mapped_range(..)
            .map_err(|e| RunError::Gpu(format!("cannot read a mapped buffer: {e}")))?;
        out.push(view[..len].to_vec());
        drop(view);
        buffer.unmap();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reflect::{Access, ArgumentKind, BufferInfo};

    fn arg(active: bool, data_size: u32, is_pointer: bool) -> Argument {
        Argument {
            name: "data".into(),
            kind: ArgumentKind::Buffer,
            index: 3,
            access: Access::ReadWrite,
            active,
            binding: None,
            buffer: Some(BufferInfo {
                alignment: 4,
                data_size,
                data_type: "float".into(),
                is_pointer,
            }),
            threadgroup: None,
            texture: None,
            sampler: None,
        }
    }

    #[test]
    fn padding() {
        assert_eq!(padded_size(0, 0), 4);
        assert_eq!(padded_size(5, 4), 8);
        assert_eq!(padded_size(8, 16), 16);
        assert_eq!(padded_size(4002, 4), 4004);
    }

    #[test]
    fn argument_checks() {
        let eight = vec![0u8; 8];
        assert!(matches!(
            check_argument(&arg(true, 4, true), None),
            Err(RunError::MissingBuffer { index: 3, .. })
        ));
        assert!(matches!(
            check_argument(&arg(false, 4, true), None),
            Ok(None)
        ));
        assert!(matches!(
            check_argument(&arg(true, 16, false), Some(&eight)),
            Err(RunError::BufferTooSmall {
                len: 8,
                needed: 16,
                ..
            })
        ));
        assert!(check_argument(&arg(true, 8, true), Some(&eight)).is_ok());
        assert!(check_argument(&arg(false, 16, false), Some(&eight)).is_ok());
    }
}
