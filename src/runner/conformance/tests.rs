//! The checking half of conformance cases, without a GPU: the shipped
//! fixtures' kernels are simulated on the CPU and their expectations must
//! hold, and broken outputs must be caught.

use super::case::{self, CaseFile, InputBuffer};
use super::check;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> (CaseFile, BTreeMap<u32, InputBuffer>) {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "fixtures/cases", name]
        .iter()
        .collect();
    let case = case::load(&path).unwrap();
    assert!(case.source_path(&path).exists(), "{name}: no MSL file");
    let inputs = case.inputs().unwrap();
    (case, inputs)
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn le<T: Copy, const N: usize>(values: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|v| f(*v)).collect()
}

/// Checks every expectation of `case` against `outputs`.
fn check_all(
    case: &CaseFile,
    inputs: &BTreeMap<u32, InputBuffer>,
    outputs: &BTreeMap<u32, Vec<u8>>,
) -> Result<usize, String> {
    let mut checked = 0;
    for expect in &case.expects {
        checked += check(expect, inputs, outputs)?;
    }
    Ok(checked)
}

#[test]
fn saxpy_fixture() {
    let (case, inputs) = fixture("saxpy.toml");
    let (x, mut y, a) = (
        f32s(&inputs[&0].bytes),
        f32s(&inputs[&1].bytes),
        f32s(&inputs[&2].bytes)[0],
    );
    assert_eq!((x.len(), y.len()), (1000, 1024));
    for i in 0..1000 {
        y[i] = a.mul_add(x[i], y[i]);
    }
    let mut outputs: BTreeMap<u32, Vec<u8>> =
        inputs.iter().map(|(k, b)| (*k, b.bytes.clone())).collect();
    outputs.insert(1, le(&y, f32::to_le_bytes));
    assert_eq!(check_all(&case, &inputs, &outputs), Ok(1024));

    // A thread past the grid that ran is caught, bit for bit.
    let mut ragged = y.clone();
    ragged[1010] += 1.0;
    outputs.insert(1, le(&ragged, f32::to_le_bytes));
    let err = check_all(&case, &inputs, &outputs).unwrap_err();
    assert!(err.contains("[1010]"), "{err}");

    // A wrong element is caught and reported with both values.
    let mut wrong = y.clone();
    wrong[3] += 0.5;
    outputs.insert(1, le(&wrong, f32::to_le_bytes));
    let err = check_all(&case, &inputs, &outputs).unwrap_err();
    assert!(
        err.starts_with("1 Float element(s) differ: [3] got "),
        "{err}"
    );
}

#[test]
fn int_ops_fixture() {
    let (case, inputs) = fixture("int_ops.toml");
    let a = i32s(&inputs[&0].bytes);
    assert!(a.iter().any(|v| *v < 0) && a.iter().any(|v| *v > 0));
    let out: Vec<i32> = a
        .iter()
        .map(|v| v / 3 + v % 5 - if *v > 0 { 1 } else { 2 })
        .collect();
    let hashed: Vec<u32> = a
        .iter()
        .map(|v| (*v as u32).wrapping_mul(40503) % 1000)
        .collect();
    let mut outputs: BTreeMap<u32, Vec<u8>> =
        inputs.iter().map(|(k, b)| (*k, b.bytes.clone())).collect();
    outputs.insert(1, le(&out, i32::to_le_bytes));
    outputs.insert(2, le(&hashed, u32::to_le_bytes));
    assert_eq!(check_all(&case, &inputs, &outputs), Ok(512));
    // Floor division instead of C's truncation is caught.
    let floored: Vec<i32> = a
        .iter()
        .map(|v| v.div_euclid(3) + v % 5 - if *v > 0 { 1 } else { 2 })
        .collect();
    outputs.insert(1, le(&floored, i32::to_le_bytes));
    assert!(check_all(&case, &inputs, &outputs).is_err());
}

#[test]
fn grid2d_fixture() {
    let (case, inputs) = fixture("grid2d.toml");
    let mut out = vec![u32::MAX; 600];
    for y in 0..17 {
        for x in 0..33 {
            out[y * 33 + x] = (y * 1000 + x) as u32;
        }
    }
    let outputs = BTreeMap::from([(0, le(&out, u32::to_le_bytes))]);
    assert_eq!(check_all(&case, &inputs, &outputs), Ok(600));
}

#[test]
fn threadgroups_fixture() {
    let (case, inputs) = fixture("threadgroups.toml");
    let out: Vec<u32> = (0..160)
        .map(|i| (i / 32) * 100 + i % 32 + 5 * 100_000)
        .collect();
    let outputs = BTreeMap::from([(0, le(&out, u32::to_le_bytes))]);
    assert_eq!(check_all(&case, &inputs, &outputs), Ok(160));
}

#[test]
fn every_fixture_parses() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cases");
    for path in super::collect_cases(&[dir]) {
        let case = case::load(&path).unwrap_or_else(|e| panic!("{e}"));
        case.inputs()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for expect in &case.expects {
            expect
                .expected()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        assert!(case.source_path(&path).exists(), "{}", path.display());
    }
}

#[test]
fn expectation_errors() {
    let case: CaseFile = toml::from_str(
        r#"
        entry = "k"
        [dispatch]
        grid = [4]
        [[buffer]]
        index = 0
        type = "uint"
        values = [1, 2, 3, 4]
        [[expect]]
        index = 0
        values = [1, 2, 3]
        [[expect]]
        index = 1
        formula = "0"
        [[expect]]
        index = 0
        count = 9
        formula = "0"
        "#,
    )
    .unwrap();
    let inputs = case.inputs().unwrap();
    let outputs = BTreeMap::from([(0, inputs[&0].bytes.clone())]);
    let errors: Vec<String> = case
        .expects
        .iter()
        .map(|e| check(e, &inputs, &outputs).unwrap_err())
        .collect();
    assert!(
        errors[0].contains("3 expected values for 4 elements"),
        "{}",
        errors[0]
    );
    assert!(errors[1].contains("no [[buffer]]"), "{}", errors[1]);
    assert!(errors[2].contains("buffer holds 4"), "{}", errors[2]);
}
