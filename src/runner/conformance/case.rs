//! The TOML case file: its schema, and turning it into translation options,
//! a dispatch and input buffers. The format is documented for users in
//! `fixtures/cases/README.md`.

use super::data::{ElemType, SplitMix64, Tolerance, Value};
use super::expr::Expr;
use crate::runner::Dispatch;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A case file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CaseFile {
    /// Free text, shown nowhere but in the file.
    #[allow(dead_code)]
    pub description: Option<String>,
    /// The MSL file, relative to the case file (default: same stem, `.metal`).
    pub source: Option<PathBuf>,
    /// The kernel to run.
    pub entry: String,
    /// `-D` definitions: `"NAME"` or `"NAME=VALUE"`.
    #[serde(default)]
    pub defines: Vec<String>,
    /// `-I` folders, relative to the case file.
    #[serde(default)]
    pub include: Vec<PathBuf>,
    /// `"webgpu"` (default) or `"wgpu"`.
    pub target: Option<String>,
    /// The dispatch.
    pub dispatch: DispatchSpec,
    /// Input buffers.
    #[serde(default, rename = "buffer")]
    pub buffers: Vec<BufferSpec>,
    /// Expected outputs.
    #[serde(default, rename = "expect")]
    pub expects: Vec<ExpectSpec>,
}

/// `[dispatch]`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DispatchSpec {
    grid: Option<Vec<u32>>,
    threadgroups: Option<Vec<u32>>,
    threadgroup: Option<Vec<u32>>,
}

/// One `[[buffer]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BufferSpec {
    pub index: u32,
    #[serde(rename = "type")]
    pub ty: ElemType,
    count: Option<usize>,
    values: Option<Vec<toml::Value>>,
    range: Option<RangeSpec>,
    random: Option<RandomSpec>,
    zeros: Option<bool>,
    fill: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeSpec {
    start: toml::Value,
    step: toml::Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RandomSpec {
    seed: u64,
    min: toml::Value,
    max: toml::Value,
}

/// One `[[expect]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ExpectSpec {
    pub index: u32,
    #[serde(rename = "type")]
    pub ty: Option<ElemType>,
    pub count: Option<usize>,
    values: Option<Vec<toml::Value>>,
    formula: Option<String>,
    abs: Option<f64>,
    rel: Option<f64>,
    ulp: Option<u64>,
    pub untouched: Option<UntouchedSpec>,
}

/// `untouched = { from, sentinel }`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UntouchedSpec {
    pub from: usize,
    sentinel: Option<toml::Value>,
}

/// An input buffer, generated.
#[derive(Debug, Clone)]
pub(super) struct InputBuffer {
    pub ty: ElemType,
    pub bytes: Vec<u8>,
}

impl InputBuffer {
    /// Number of whole elements.
    pub fn count(&self) -> usize {
        self.bytes.len() / self.ty.size()
    }
}

/// What an expectation compares against.
#[derive(Debug)]
pub(super) enum Expected {
    /// Inline values, one per element.
    Values(Vec<Value>),
    /// A formula evaluated per element.
    Formula(Expr),
    /// Nothing (only the `untouched` check).
    Nothing,
}

/// A number in a case file.
pub(super) fn number(v: &toml::Value, what: &str) -> Result<Value, String> {
    match v {
        toml::Value::Integer(i) => Ok(Value::Int(*i)),
        toml::Value::Float(f) => Ok(Value::Float(*f)),
        other => Err(format!(
            "{what}: expected a number, found {}",
            other.type_str()
        )),
    }
}

/// Reads and parses a case file.
pub(super) fn load(path: &Path) -> Result<CaseFile, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {}", path.display(), e.to_string().trim_end()))
}

impl CaseFile {
    /// The MSL file.
    pub fn source_path(&self, case: &Path) -> PathBuf {
        let dir = case.parent().unwrap_or(Path::new(""));
        match &self.source {
            Some(source) => dir.join(source),
            None => case.with_extension("metal"),
        }
    }

    /// Translation options (entries and threadgroup size are set later).
    pub fn options(&self, case: &Path) -> Result<crate::Options, String> {
        let dir = case.parent().unwrap_or(Path::new(""));
        let mut options = crate::Options::default();
        for define in &self.defines {
            let (name, value) = match define.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (define.as_str(), None),
            };
            if name.is_empty() {
                return Err(format!("defines: bad definition `{define}`"));
            }
            options.preprocess.defines.push((name.to_string(), value));
        }
        options.preprocess.include_dirs = self.include.iter().map(|d| dir.join(d)).collect();
        options.target = match self.target.as_deref() {
            None | Some("webgpu") => crate::Target::WebGpu,
            Some("wgpu") => crate::Target::Wgpu,
            Some(other) => return Err(format!("target: `{other}` is neither `webgpu` nor `wgpu`")),
        };
        Ok(options)
    }

    /// The dispatch; `default_threadgroup` gives the kernel's default size
    /// when the case names none.
    pub fn dispatch(
        &self,
        default_threadgroup: impl FnOnce() -> Result<[u32; 3], String>,
    ) -> Result<Dispatch, String> {
        let d = &self.dispatch;
        let threadgroup = match &d.threadgroup {
            Some(t) => dims(t, "dispatch.threadgroup")?,
            None => default_threadgroup()?,
        };
        match (&d.grid, &d.threadgroups) {
            (Some(grid), None) => Ok(Dispatch::Threads {
                grid: dims(grid, "dispatch.grid")?,
                threadgroup,
            }),
            (None, Some(groups)) => Ok(Dispatch::Threadgroups {
                groups: dims(groups, "dispatch.threadgroups")?,
                threadgroup,
            }),
            _ => Err("dispatch: give exactly one of `grid` and `threadgroups`".into()),
        }
    }

    /// Generates every input buffer.
    pub fn inputs(&self) -> Result<BTreeMap<u32, InputBuffer>, String> {
        let mut out = BTreeMap::new();
        for spec in &self.buffers {
            let buffer = spec
                .generate()
                .map_err(|e| format!("buffer {}: {e}", spec.index))?;
            if out.insert(spec.index, buffer).is_some() {
                return Err(format!("buffer {} is given twice", spec.index));
            }
        }
        Ok(out)
    }
}

/// One to three dimensions, the missing ones 1.
fn dims(v: &[u32], what: &str) -> Result<[u32; 3], String> {
    match *v {
        [x] => Ok([x, 1, 1]),
        [x, y] => Ok([x, y, 1]),
        [x, y, z] => Ok([x, y, z]),
        _ => Err(format!("{what}: give 1 to 3 numbers")),
    }
}

impl BufferSpec {
    fn generate(&self) -> Result<InputBuffer, String> {
        let given = [
            self.values.is_some(),
            self.range.is_some(),
            self.random.is_some(),
            self.zeros == Some(true),
            self.fill.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err(
                "give exactly one of `values`, `range`, `random`, `zeros = true`, `fill`".into(),
            );
        }
        let ty = self.ty;
        let values: Vec<Value> = if let Some(values) = &self.values {
            if self.count.is_some_and(|c| c != values.len()) {
                return Err(format!(
                    "`count` is not the number of `values` ({})",
                    values.len()
                ));
            }
            values
                .iter()
                .map(|v| number(v, "values"))
                .collect::<Result<_, _>>()?
        } else {
            let count = self
                .count
                .ok_or("`count` is needed unless `values` is given")?;
            self.generated(count)?
        };
        let mut bytes = Vec::with_capacity(values.len() * ty.size());
        for v in values {
            ty.encode(ty.exact(v)?, &mut bytes);
        }
        Ok(InputBuffer { ty, bytes })
    }

    /// `count` elements of `range`, `random`, `zeros` or `fill`.
    fn generated(&self, count: usize) -> Result<Vec<Value>, String> {
        let ty = self.ty;
        if let Some(range) = &self.range {
            let (start, step) = (
                number(&range.start, "range.start")?,
                number(&range.step, "range.step")?,
            );
            return (0..count)
                .map(|k| match (ty.is_float(), start, step) {
                    (false, Value::Int(a), Value::Int(s)) => Ok(Value::Int(a + s * k as i64)),
                    (true, a, s) => Ok(Value::Float(a.as_f64() + s.as_f64() * k as f64)),
                    _ => Err("an integer range needs integer `start` and `step`".to_string()),
                })
                .collect();
        }
        if let Some(random) = &self.random {
            let (min, max) = (
                number(&random.min, "random.min")?,
                number(&random.max, "random.max")?,
            );
            if min.as_f64() > max.as_f64() {
                return Err("random: `min` is above `max`".into());
            }
            let (min, max) = (ty.exact(min)?, ty.exact(max)?);
            let mut rng = SplitMix64::new(random.seed);
            return Ok((0..count).map(|_| rng.next_in(ty, min, max)).collect());
        }
        let fill = match &self.fill {
            Some(v) => number(v, "fill")?,
            None => Value::Int(0),
        };
        Ok(vec![fill; count])
    }
}

impl ExpectSpec {
    /// The comparison's tolerance.
    pub fn tolerance(&self) -> Tolerance {
        Tolerance {
            abs: self.abs,
            rel: self.rel,
            ulp: self.ulp,
        }
    }

    /// Inline values or the parsed formula.
    pub fn expected(&self) -> Result<Expected, String> {
        match (&self.values, &self.formula) {
            (Some(values), None) => Ok(Expected::Values(
                values
                    .iter()
                    .map(|v| number(v, "values"))
                    .collect::<Result<_, _>>()?,
            )),
            (None, Some(formula)) => Ok(Expected::Formula(Expr::parse(formula)?)),
            (None, None) if self.untouched.is_some() => Ok(Expected::Nothing),
            _ => Err("give exactly one of `values` and `formula`".into()),
        }
    }
}

impl UntouchedSpec {
    /// The value every element from `from` on must still hold: the sentinel,
    /// or else element `k` of the input.
    pub fn sentinel(&self) -> Result<Option<Value>, String> {
        self.sentinel
            .as_ref()
            .map(|s| number(s, "untouched.sentinel"))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CASE: &str = r#"
        entry = "add"
        defines = ["N=4", "FAST"]
        [dispatch]
        grid = [10]
        threadgroup = [4]
        [[buffer]]
        index = 0
        type = "float"
        range = { start = 1, step = 0.5 }
        count = 3
        [[buffer]]
        index = 1
        type = "int"
        random = { seed = 1, min = -5, max = 5 }
        count = 4
        [[buffer]]
        index = 2
        type = "uchar"
        values = [1, 2, 255]
        [[buffer]]
        index = 3
        type = "ushort"
        fill = 7
        count = 2
        [[expect]]
        index = 1
        formula = "b0[i] * 2"
        abs = 1e-6
        untouched = { from = 2, sentinel = 0 }
    "#;

    #[test]
    fn parses_and_generates() {
        let case: CaseFile = toml::from_str(CASE).unwrap();
        let path = Path::new("dir/add.toml");
        assert_eq!(case.source_path(path), Path::new("dir/add.metal"));
        let options = case.options(path).unwrap();
        assert_eq!(
            options.preprocess.defines,
            vec![
                ("N".to_string(), Some("4".to_string())),
                ("FAST".to_string(), None)
            ]
        );
        let dispatch = case.dispatch(|| unreachable!()).unwrap();
        assert_eq!(
            dispatch,
            Dispatch::Threads {
                grid: [10, 1, 1],
                threadgroup: [4, 1, 1]
            }
        );
        let inputs = case.inputs().unwrap();
        assert_eq!(
            inputs[&0].bytes,
            [1.0f32, 1.5, 2.0]
                .iter()
                .flat_map(|f| f.to_le_bytes())
                .collect::<Vec<_>>()
        );
        assert_eq!(inputs[&1].count(), 4);
        assert_eq!(inputs[&2].bytes, [1, 2, 255]);
        assert_eq!(inputs[&3].bytes, [7, 0, 7, 0]);
        let ints: Vec<_> = (0..4)
            .map(|k| ElemType::Int.decode(&inputs[&1].bytes, k).unwrap())
            .collect();
        assert!(ints.iter().all(|v| (-5.0..=5.0).contains(&v.as_f64())));
        assert_eq!(case.expects[0].tolerance().abs, Some(1e-6));
    }

    #[test]
    fn rejects_bad_cases() {
        assert!(toml::from_str::<CaseFile>("entry = 1").is_err());
        let bad: CaseFile = toml::from_str(
            "entry = \"k\"\n[dispatch]\ngrid = [1]\nthreadgroups = [1]\n[[buffer]]\nindex = 0\ntype = \"uchar\"\nvalues = [256]",
        )
        .unwrap();
        assert!(bad.dispatch(|| Ok([1, 1, 1])).is_err());
        assert!(bad.inputs().unwrap_err().contains("out of range"));
        assert!(
            toml::from_str::<CaseFile>("entry = \"k\"\nbogus = 1\n[dispatch]\ngrid = [1]").is_err()
        );
    }
}
