//! Deterministic buffer contents from a WGSL type (naga's layout), and the
//! scalar leaves of the type, so that floats can be compared as floats.

use naga::proc::Layouter;
use naga::{ArraySize, Handle, Module, Scalar, ScalarKind, Type, TypeInner};

/// Elements given to every runtime-sized array, at least.
pub const RUNTIME_ELEMENTS: u32 = 8;
/// What padding bytes hold, so that a store into padding shows.
pub const PADDING: u8 = 0xA5;

/// One scalar of a buffer: its byte offset and type.
#[derive(Clone, Copy, Debug)]
pub struct Leaf {
    /// Byte offset in the buffer.
    pub offset: u32,
    /// The scalar type.
    pub scalar: Scalar,
}

/// The runtime-sized tail of a type: where the array starts and its stride.
pub fn runtime_tail(module: &Module, ty: Handle<Type>) -> Option<(u32, u32)> {
    match module.types[ty].inner {
        TypeInner::Array {
            size: ArraySize::Dynamic,
            stride,
            ..
        } => Some((0, stride)),
        TypeInner::Struct { ref members, .. } => {
            let last = members.last()?;
            runtime_tail(module, last.ty).map(|(o, s)| (last.offset + o, s))
        }
        _ => None,
    }
}

/// Bytes of a buffer of type `ty` whose runtime-sized array (if any) has
/// `elements` elements.
pub fn byte_size(module: &Module, layouter: &Layouter, ty: Handle<Type>, elements: u32) -> u32 {
    match runtime_tail(module, ty) {
        Some((offset, stride)) => offset + stride * elements,
        None => layouter[ty].size,
    }
}

/// Every scalar of a value of type `ty` at `base`, in memory order.
pub fn leaves(module: &Module, ty: Handle<Type>, base: u32, runtime: u32, out: &mut Vec<Leaf>) {
    match module.types[ty].inner {
        TypeInner::Scalar(scalar) | TypeInner::Atomic(scalar) => out.push(Leaf {
            offset: base,
            scalar,
        }),
        TypeInner::Vector { size, scalar } => {
            for i in 0..size as u32 {
                out.push(Leaf {
                    offset: base + i * scalar.width as u32,
                    scalar,
                });
            }
        }
        TypeInner::Matrix {
            columns,
            rows,
            scalar,
        } => {
            // Columns are vectors of `rows` aligned as WGSL aligns them.
            let rows_n = rows as u32;
            let stride = scalar.width as u32 * if rows_n == 2 { 2 } else { 4 };
            for c in 0..columns as u32 {
                for r in 0..rows_n {
                    out.push(Leaf {
                        offset: base + c * stride + r * scalar.width as u32,
                        scalar,
                    });
                }
            }
        }
        TypeInner::Array {
            base: elem,
            size,
            stride,
        } => {
            let count = match size {
                ArraySize::Constant(n) => n.get(),
                ArraySize::Dynamic => runtime,
                ArraySize::Pending(_) => 0,
            };
            for i in 0..count {
                leaves(module, elem, base + i * stride, runtime, out);
            }
        }
        TypeInner::Struct { ref members, .. } => {
            for m in members {
                leaves(module, m.ty, base + m.offset, runtime, out);
            }
        }
        _ => {}
    }
}

/// SplitMix64: one step.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a of a name: buffers of the same name get the same contents in
/// every run and on both sides of a comparison.
pub fn name_seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The little-endian bytes of leaf number `i` of a buffer seeded `seed`:
/// small integers (indices stay mostly in range) and short floats (exact in
/// `f16`, so conversions do not round).
fn leaf_bytes(scalar: Scalar, seed: u64, i: u64) -> Vec<u8> {
    let r = mix(seed ^ mix(i));
    let small = (r % 11) as i64 - 3; // -3..=7
    match (scalar.kind, scalar.width) {
        (ScalarKind::Float, 4) => ((r % 41) as f32 * 0.25 - 5.0).to_le_bytes().to_vec(),
        (ScalarKind::Float, 2) => half::f16::from_f32((r % 41) as f32 * 0.25 - 5.0)
            .to_le_bytes()
            .to_vec(),
        (ScalarKind::Float, 8) => ((r % 41) as f64 * 0.25 - 5.0).to_le_bytes().to_vec(),
        (ScalarKind::Sint, w) => small.to_le_bytes()[..w as usize].to_vec(),
        (ScalarKind::Uint, w) => (r % 8).to_le_bytes()[..w as usize].to_vec(),
        (_, w) => vec![0; w as usize],
    }
}

/// Deterministic contents for a buffer `name` of `size` bytes whose scalars
/// are `leaves`; every other byte is [`PADDING`].
pub fn contents(name: &str, size: u32, leaves: &[Leaf]) -> Vec<u8> {
    let mut bytes = vec![PADDING; size as usize];
    let seed = name_seed(name);
    for (i, leaf) in leaves.iter().enumerate() {
        let value = leaf_bytes(leaf.scalar, seed, i as u64);
        let at = leaf.offset as usize;
        if at + value.len() <= bytes.len() {
            bytes[at..at + value.len()].copy_from_slice(&value);
        }
    }
    bytes
}

/// The smallest buffer size `S` at least `prefix + elements * stride` for every `(prefix, stride)` with `S - prefix` a multiple of
/// `stride` for all of them, so one size suits every runtime-sized buffer
/// (Tint passes all buffer sizes in one table; with equal sizes, which
/// entry is whose does not matter). `None` if no such size is near.
pub fn common_size(tails: &[(u32, u32)], elements: u32) -> Option<u32> {
    let least = tails
        .iter()
        .map(|&(p, s)| p + elements * s)
        .max()?
        .next_multiple_of(4);
    (least..least + (1 << 16))
        .step_by(4)
        .find(|&size| tails.iter().all(|&(p, s)| (size - p) % s == 0))
}
