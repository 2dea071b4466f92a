//! Word views without atomics (lower/metal/whole_word_stores.rs), and
//! aligned vectors loaded a word at a time (word_views.rs): a buffer
//! of 8- or 16-bit data whose kernel stores only whole elements of whole
//! words is `array<u32>` with plain loads and stores; one that takes any
//! part-of-element store keeps `array<atomic<u32>>` and its clear-and-set
//! pairs. Both must give Metal's bytes: every kernel of
//! fixtures/whole_word_stores.metal runs on the GPU against a CPU model of
//! the buffer, over ragged grids, with every byte the kernel does not write
//! left as it was.

// Without the runner the GPU tests are compiled out, and the sources and
// helpers only they use are unused.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use msl2wgsl::{Library, Options};

const SOURCE: &str = include_str!("../fixtures/whole_word_stores.metal");
const NAME: &str = "whole_word_stores.metal";

/// The WGSL of `entry`.
fn wgsl(entry: &str) -> String {
    let options = Options {
        entries: vec![entry.to_string()],
        ..Options::default()
    };
    Library::from_source(NAME, SOURCE, &options)
        .unwrap_or_else(|e| panic!("{entry}: {e}"))
        .wgsl()
        .to_string()
}

#[test]
fn whole_element_stores_use_plain_words() {
    for entry in ["quads", "pixels", "accumulate"] {
        let text = wgsl(entry);
        assert!(!text.contains("atomic"), "{entry}:\n{text}");
        assert!(text.contains("array<u32>"), "{entry}:\n{text}");
    }
}

/// `Pixel p = out[i]` reads its four words once each: an aligned vector
/// whose lanes fill whole words (`uchar4`, `half2`, `short2`) is one load
/// and fixed-position bit fields, not one load per lane.
#[test]
fn aligned_vectors_are_loaded_a_word_at_a_time() {
    let text = wgsl("pixels");
    let loads = text
        .lines()
        .filter(|l| l.trim_start().starts_with("let ") && l.contains("= out["))
        .count();
    assert_eq!(loads, 4, "{text}");
}

#[test]
fn part_of_element_stores_keep_atomic_words() {
    for entry in ["one_component", "through_helper", "through_pointer"] {
        let text = wgsl(entry);
        assert!(text.contains("array<atomic<u32>>"), "{entry}:\n{text}");
    }
}

#[cfg(feature = "runner")]
mod gpu {
    use super::{common, Options, NAME, SOURCE};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;

    /// Runs `entry` over `n` threads (threadgroups of 64: the grid is
    /// ragged unless `n` is a multiple) with `buffers`; `None` without a GPU.
    fn run(entry: &str, n: u32, buffers: BTreeMap<u32, Vec<u8>>) -> Option<Vec<u8>> {
        let gpu = common::gpu()?;
        let dispatch = Dispatch::Threads {
            grid: [n, 1, 1],
            threadgroup: [64, 1, 1],
        };
        let out = run_kernel(
            gpu,
            NAME,
            SOURCE,
            &Options::default(),
            entry,
            &dispatch,
            &buffers,
        )
        .unwrap_or_else(|e| panic!("{entry}: {e}"));
        Some(out[&0].clone())
    }

    /// Bytes that every test starts from: a pattern no kernel writes.
    fn initial(len: usize) -> Vec<u8> {
        (0..len)
            .map(|k| (k as u8).wrapping_mul(29) ^ 0xA5)
            .collect()
    }

    fn check(got: &[u8], want: &[u8], what: &str) {
        assert_eq!(got.len(), want.len(), "{what}: length");
        if let Some(k) = (0..want.len()).find(|&k| got[k] != want[k]) {
            panic!("{what}: byte {k} is {:#04x}, want {:#04x}", got[k], want[k]);
        }
    }

    #[test]
    fn one_uchar4_per_thread() {
        for n in [1000u32, 1024, 67] {
            // Two spare elements past the guard must stay untouched.
            let len = 4 * (n as usize + 2);
            let before = initial(len);
            let buffers = BTreeMap::from([(0, before.clone()), (1, n.to_le_bytes().to_vec())]);
            let Some(got) = run("quads", n + 2, buffers) else {
                return;
            };
            let mut want = before;
            for i in 0..n {
                let at = 4 * i as usize;
                want[at..at + 4].copy_from_slice(&[
                    i as u8,
                    (i * 3) as u8,
                    (i ^ 0x5a) as u8,
                    (255u32.wrapping_sub(i)) as u8,
                ]);
            }
            check(&got, &want, &format!("quads n={n}"));
        }
    }

    /// `Pixel`: `uchar4` at 0, `half2` at 4, `float` at 8, `short2` at 12
    /// (16 bytes, Metal's layout).
    #[test]
    fn structs_of_whole_words() {
        let n = 203u32;
        let len = 16 * (n as usize + 1);
        let before = initial(len);
        let buffers = BTreeMap::from([(0, before.clone()), (1, n.to_le_bytes().to_vec())]);
        let Some(got) = run("pixels", n + 1, buffers) else {
            return;
        };
        let mut want = before;
        for i in 0..n as usize {
            let e = &mut want[16 * i..16 * i + 16];
            for (k, add) in [1u8, 2, 3, 4].into_iter().enumerate() {
                e[k] = e[k].wrapping_add(add);
            }
            let u = half::f16::from_f32(i as f32 * 0.5).to_bits();
            let v = half::f16::from_f32(-(i as f32)).to_bits();
            e[4..6].copy_from_slice(&u.to_le_bytes());
            e[6..8].copy_from_slice(&v.to_le_bytes());
            e[8..12].copy_from_slice(&(i as f32 + 0.25).to_le_bytes());
            e[12..14].copy_from_slice(&(i as i16).to_le_bytes());
            e[14..16].copy_from_slice(&(-(i as i16)).to_le_bytes());
        }
        check(&got, &want, "pixels");
    }

    #[test]
    fn compound_assignment_of_whole_elements() {
        let n = 130u32;
        let before = initial(4 * n as usize);
        let Some(got) = run("accumulate", n, BTreeMap::from([(0, before.clone())])) else {
            return;
        };
        let mut want = before;
        for i in 0..n as usize {
            for (lane, add) in [(0, i as u16), (1, (2 * i) as u16)] {
                let at = 4 * i + 2 * lane;
                let v = u16::from_le_bytes([want[at], want[at + 1]]).wrapping_add(add);
                want[at..at + 2].copy_from_slice(&v.to_le_bytes());
            }
        }
        check(&got, &want, "accumulate");
    }

    /// One byte of each element, written three ways; the other bytes of
    /// every word must be what they were.
    #[test]
    fn parts_of_elements_leave_their_neighbours_alone() {
        let n = 77u32;
        // (kernel, the byte of each element it writes, that byte's value)
        type Case = (&'static str, usize, fn(u32) -> u8);
        let cases: [Case; 3] = [
            ("one_component", 1, |i| (i + 7) as u8),
            ("through_helper", 3, |i| i as u8),
            ("through_pointer", 2, |i| (3 * i) as u8),
        ];
        for (entry, byte, value) in cases {
            let before = initial(4 * n as usize);
            let Some(got) = run(entry, n, BTreeMap::from([(0, before.clone())])) else {
                return;
            };
            let mut want = before;
            for i in 0..n {
                want[4 * i as usize + byte] = value(i);
            }
            check(&got, &want, entry);
        }
    }
}
