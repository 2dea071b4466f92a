//! 8- and 16-bit buffer elements that neighbouring threads store at once
//! (fixtures/byte_stores.metal): combined into whole words through quad
//! operations where the translator may (lower/metal/byte_stores.rs), atomic
//! clear-and-set pairs elsewhere. Both paths must give Metal's bytes, byte
//! for byte, and leave every other byte alone; the GPU results are compared
//! with CPU references over ragged grids, whole threadgroups and 2-D grids.

// Without the runner the GPU tests are compiled out, and the sources and
// helpers only they use are unused.
#![cfg_attr(not(feature = "runner"), allow(dead_code, unused_imports))]

mod common;

use msl2wgsl::{ByteStores, Library, Options, SimdGroups, Target};

const SOURCE: &str = include_str!("../fixtures/byte_stores.metal");
const NAME: &str = "byte_stores.metal";

/// What the buffers hold before a kernel runs.
const FILL: u8 = 0xEE;

/// The WGSL of `entry` translated with `options`.
fn wgsl(entry: &str, options: Options) -> String {
    let options = Options {
        entries: vec![entry.to_string()],
        ..options
    };
    Library::from_source(NAME, SOURCE, &options)
        .unwrap_or_else(|e| panic!("{entry}: {e}"))
        .wgsl()
        .to_string()
}

fn subgroups() -> Options {
    Options {
        byte_stores: ByteStores::Subgroups,
        ..Options::default()
    }
}

#[test]
fn the_combined_form_is_chosen_where_a_quad_may_write_whole_words() {
    // Both stores of `pairs_and_signed` (4 quad broadcasts each).
    for (entry, stores) in [
        ("one_byte", 1),
        ("rows", 1),
        ("shifted", 1),
        ("pairs_and_signed", 2),
    ] {
        let text = wgsl(entry, subgroups());
        assert_eq!(
            text.matches("quadBroadcast").count(),
            4 * stores,
            "{entry}:\n{text}"
        );
        assert!(text.contains("subgroupBallot(true)"), "{entry}:\n{text}");
        // The atomic pair stays for quads that do not cover their word.
        assert!(text.contains("atomicOr"), "{entry}:\n{text}");
    }
    for entry in ["strided", "conditional", "after_branch", "read_back"] {
        let text = wgsl(entry, subgroups());
        assert!(!text.contains("quad"), "{entry}:\n{text}");
        assert!(text.contains("atomicOr"), "{entry}:\n{text}");
    }
}

/// The neighbouring-element fixture of tests/layout.rs: its `uchar`,
/// `char`, `ushort` and `bool` stores are combined (`half` is `f16` there,
/// and its word view keeps the pairs).
#[test]
fn the_sub_word_fixture_s_element_stores_are_combined() {
    let source = include_str!("../fixtures/subword_buffers.metal");
    let library = Library::from_source("subword_buffers.metal", source, &subgroups()).unwrap();
    let text = library.wgsl();
    assert_eq!(text.matches("quadBroadcast").count(), 4 * 4, "{text}");
    for buffer in ["bytes", "signed_bytes", "halves", "flags"] {
        assert!(
            text.contains(&format!("atomicStore((&{buffer}[")),
            "{buffer}:\n{text}"
        );
    }
}

#[test]
fn without_subgroups_every_byte_store_stays_atomic() {
    // `Auto` without an adapter: subgroups only where SIMD groups are native.
    for options in [
        Options::default(),
        Options {
            byte_stores: ByteStores::Atomic,
            simd: SimdGroups::Native,
            ..Options::default()
        },
    ] {
        let text = wgsl("one_byte", options);
        assert!(!text.contains("quad"), "{text}");
        assert!(!text.contains("enable subgroups"), "{text}");
    }
    let native = Options {
        simd: SimdGroups::Native,
        ..Options::default()
    };
    assert!(wgsl("one_byte", native).contains("quadBroadcast"));
}

#[test]
fn browsers_are_told_the_module_uses_subgroups() {
    let webgpu = wgsl("one_byte", subgroups());
    assert!(webgpu.starts_with("enable subgroups;"), "{webgpu}");
    let wgpu = wgsl(
        "one_byte",
        Options {
            target: Target::Wgpu,
            ..subgroups()
        },
    );
    assert!(!wgpu.contains("enable subgroups"), "{wgpu}");
}

/// Tint (Chromium's WGSL compiler), where installed, takes the combined
/// form as browsers get it: `enable subgroups;`, a `subgroupBallot` with
/// its predicate, quad operations in the kernel's uniform control flow.
#[test]
fn tint_accepts_the_combined_form() {
    let Ok(tint) = which_tint() else {
        eprintln!("note: skipping: no `tint` on PATH");
        return;
    };
    let dir = std::env::temp_dir().join(format!("msl2wgsl-byte-stores-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in ["one_byte", "rows", "pairs_and_signed"] {
        let path = dir.join(format!("{entry}.wgsl"));
        std::fs::write(&path, wgsl(entry, subgroups())).unwrap();
        let out = std::process::Command::new(&tint)
            .args(["--format", "wgsl", "-o"])
            .arg(dir.join(format!("{entry}.tint.wgsl")))
            .arg(&path)
            .output()
            .expect("tint runs");
        let said = String::from_utf8_lossy(&out.stderr).to_string()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && !said.contains("error"),
            "{entry}: {said}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The `tint` executable on `PATH`.
fn which_tint() -> Result<std::path::PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|d| d.join("tint"))
        .find(|p| p.is_file())
        .ok_or(())
}

#[cfg(feature = "runner")]
mod gpu {
    use super::{common, ByteStores, Options, FILL, NAME, SOURCE};
    use msl2wgsl::runner::{run_kernel, Dispatch};
    use std::collections::BTreeMap;

    /// Both ways of storing: the atomic pairs, and whatever the adapter
    /// allows (the combined form where it has subgroups).
    const MODES: [ByteStores; 2] = [ByteStores::Atomic, ByteStores::Auto];

    /// Runs `entry` with output buffers of `sizes` bytes (filled with
    /// [`FILL`]) and `inputs`; `None` without a GPU.
    fn run(
        entry: &str,
        mode: ByteStores,
        dispatch: Dispatch,
        sizes: &[(u32, usize)],
        inputs: &[(u32, Vec<u8>)],
    ) -> Option<BTreeMap<u32, Vec<u8>>> {
        let gpu = common::gpu()?;
        if mode == ByteStores::Auto {
            let translation = gpu
                .translate(NAME, SOURCE, &Options::default(), entry, None)
                .expect("translates");
            eprintln!(
                "{entry}: combined form {}",
                translation.wgsl.contains("quadBroadcast")
            );
        }
        let buffers: BTreeMap<u32, Vec<u8>> = sizes
            .iter()
            .map(|&(b, n)| (b, vec![FILL; n]))
            .chain(inputs.iter().cloned())
            .collect();
        let options = Options {
            byte_stores: mode,
            ..Options::default()
        };
        Some(
            run_kernel(gpu, NAME, SOURCE, &options, entry, &dispatch, &buffers)
                .unwrap_or_else(|e| panic!("{entry} ({mode:?}): {e}")),
        )
    }

    fn threads(grid: [u32; 3], threadgroup: [u32; 3]) -> Dispatch {
        Dispatch::Threads { grid, threadgroup }
    }

    /// The bytes a buffer of `len` bytes holds after `writes` (offset, byte).
    fn expected(len: usize, writes: impl IntoIterator<Item = (usize, u8)>) -> Vec<u8> {
        let mut b = vec![FILL; len];
        for (at, v) in writes {
            b[at] = v;
        }
        b
    }

    fn check(got: &[u8], want: &[u8], what: &str) {
        if let Some(k) = (0..want.len()).find(|&k| got[k] != want[k]) {
            panic!("{what}: byte {k} is {:#04x}, want {:#04x}", got[k], want[k]);
        }
    }

    /// One byte per thread over a ragged 1-D grid and over whole
    /// threadgroups (the runner sets `metal_whole_grid` for those).
    #[test]
    fn one_byte_per_thread() {
        for mode in MODES {
            for (n, tg) in [(1001usize, 64u32), (1024, 64), (67, 32), (4096, 256)] {
                let len = n + 7;
                let Some(out) = run(
                    "one_byte",
                    mode,
                    threads([n as u32, 1, 1], [tg, 1, 1]),
                    &[(0, len)],
                    &[],
                ) else {
                    return;
                };
                let want = expected(len, (0..n).map(|i| (i, (i * 7 + 3) as u8)));
                check(&out[&0], &want, &format!("one_byte n={n} tg={tg} {mode:?}"));
            }
        }
    }

    /// The `gray` pattern on 2-D grids: a row width that is a multiple of
    /// 4 (whole words per quad) and one that is not (words across rows).
    #[test]
    fn rows_of_an_image() {
        for mode in MODES {
            for (w, h, tg) in [
                (64u32, 9u32, [8, 8, 1]),
                (37, 5, [8, 8, 1]),
                (40, 6, [16, 4, 1]),
            ] {
                let len = (w * h) as usize + 5;
                let Some(out) = run(
                    "rows",
                    mode,
                    threads([w, h, 1], tg),
                    &[(0, len)],
                    &[(1, w.to_le_bytes().to_vec())],
                ) else {
                    return;
                };
                let want = expected(
                    len,
                    (0..h).flat_map(|y| {
                        (0..w).map(move |x| ((y * w + x) as usize, (x + 16 * y) as u8))
                    }),
                );
                check(&out[&0], &want, &format!("rows {w}x{h} {tg:?} {mode:?}"));
            }
        }
    }

    /// Stores the translator cannot combine, or whose quads the GPU check
    /// turns down: strided, conditional, after a returning branch, and one
    /// byte off word boundaries.
    #[test]
    fn stores_that_are_not_combined() {
        let n = 203usize;
        let len = 2 * n + 8;
        let cases: [(&str, Vec<(usize, u8)>); 4] = [
            ("strided", (0..n).map(|i| (2 * i, (i + 1) as u8)).collect()),
            (
                "conditional",
                (0..n)
                    .filter(|i| i % 3 != 0)
                    .map(|i| (i, i as u8))
                    .collect(),
            ),
            (
                "after_branch",
                (0..n)
                    .filter(|i| i % 5 != 1)
                    .map(|i| (i, 200u32.wrapping_sub(i as u32) as u8))
                    .collect(),
            ),
            (
                "shifted",
                (0..n).map(|i| (i + 1, (i as u8) ^ 0x5a)).collect(),
            ),
        ];
        for mode in MODES {
            for (entry, writes) in &cases {
                for tg in [64u32, 32] {
                    let Some(out) = run(
                        entry,
                        mode,
                        threads([n as u32, 1, 1], [tg, 1, 1]),
                        &[(0, len)],
                        &[],
                    ) else {
                        return;
                    };
                    let want = expected(len, writes.iter().copied());
                    check(&out[&0], &want, &format!("{entry} tg={tg} {mode:?}"));
                }
            }
        }
    }

    /// `uchar2` elements (two bytes per thread, two threads per word) and
    /// `char` (sign bits kept to the byte).
    #[test]
    fn byte_pairs_and_signed_bytes() {
        for mode in MODES {
            for (n, tg) in [(301usize, 64u32), (512, 128)] {
                let Some(out) = run(
                    "pairs_and_signed",
                    mode,
                    threads([n as u32, 1, 1], [tg, 1, 1]),
                    &[(0, 2 * n + 6), (1, n + 7)],
                    &[],
                ) else {
                    return;
                };
                let pairs = expected(
                    2 * n + 6,
                    (0..n).flat_map(|i| {
                        [
                            (2 * i, i as u8),
                            (2 * i + 1, 255u32.wrapping_sub(i as u32) as u8),
                        ]
                    }),
                );
                let signed = expected(n + 7, (0..n).map(|i| (i, (i as i32 - 100) as i8 as u8)));
                check(&out[&0], &pairs, &format!("uchar2 n={n} {mode:?}"));
                check(&out[&1], &signed, &format!("char n={n} {mode:?}"));
            }
        }
    }

    /// A thread reading its own byte back sees it (the store is not
    /// combined there).
    #[test]
    fn a_thread_reads_its_own_byte_back() {
        let n = 150usize;
        for mode in MODES {
            let Some(out) = run(
                "read_back",
                mode,
                threads([n as u32, 1, 1], [64, 1, 1]),
                &[(0, n + 2), (1, 4 * n)],
                &[],
            ) else {
                return;
            };
            for i in 0..n {
                let b = (i + 9) as u8;
                assert_eq!(out[&0][i], b, "byte {i} {mode:?}");
                let copy = u32::from_le_bytes(out[&1][4 * i..4 * i + 4].try_into().unwrap());
                assert_eq!(copy, u32::from(b), "copy {i} {mode:?}");
            }
        }
    }
}
