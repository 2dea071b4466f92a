//! The JavaScript options object of `translate`, read with serde and turned
//! into [`msl2wgsl::Options`].

use msl2wgsl::library::HalfMode;
use msl2wgsl::preprocess::{Options as PreprocessOptions, Platform};
use msl2wgsl::reflect::BindingMap;
use msl2wgsl::{Options, Target, UniformLayout};
use serde::Deserialize;
use std::collections::BTreeMap;

/// `translate`'s second argument, as JavaScript writes it (camelCase keys;
/// every key optional).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JsOptions {
    /// `"webgpu"` (default) or `"wgpu"`.
    #[serde(default)]
    pub target: Option<String>,
    /// Only these functions (all when empty), as `--entry`.
    #[serde(default)]
    pub entries: Vec<String>,
    /// `-D`: either `{"NAME": "VALUE" | number | true | null}` or
    /// `["NAME", "NAME=VALUE"]`.
    #[serde(default)]
    pub defines: Option<Defines>,
    /// `--threadgroup-size`: a number or `[x, y?, z?]`.
    #[serde(default)]
    pub threadgroup_size: Option<ThreadgroupSize>,
    /// `"macos"` (default) or `"ios"`.
    #[serde(default)]
    pub platform: Option<String>,
    /// `--threadgroup-memory`: bytes for each `[[threadgroup(n)]]`, keyed by `n`.
    #[serde(default)]
    pub threadgroup_memory: BTreeMap<u32, u32>,
    /// `--texture-format`: storage texel format for each `[[texture(n)]]`, keyed by `n`.
    #[serde(default)]
    pub texture_formats: BTreeMap<u32, String>,
    /// `--binding-map`, as the JSON object itself.
    #[serde(default)]
    pub binding_map: Option<serde_json::Value>,
    /// `"f16"` (default: WGSL `f16`, needs `shader-f16`) or `"f32"` (`half`
    /// as `f32` rounded to half precision, for adapters without it).
    #[serde(default)]
    pub half: Option<String>,
    /// `--uniform-layout`: `"wgsl"` (default), `"standard"` or `"none"`.
    #[serde(default)]
    pub uniform_layout: Option<String>,
    /// In-memory headers, `{"MyTypes.h": "text"}`: `#include "MyTypes.h"`
    /// in the source reads them (the page's header tab; there is no file
    /// system to search).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The file name diagnostics use (`shader.metal` when not given).
    #[serde(default)]
    pub name: Option<String>,
    /// Also return each function's own WGSL module (`Library::function_wgsl`).
    #[serde(default)]
    pub function_wgsl: bool,
}

/// The two spellings of `defines`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Defines {
    /// `["NAME", "NAME=VALUE"]`, as on the command line.
    List(Vec<String>),
    /// `{"NAME": value}`; `null` or `true` means no value (`1`).
    Map(BTreeMap<String, serde_json::Value>),
}

/// The two spellings of `threadgroupSize`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum ThreadgroupSize {
    /// `64`: `[64, 1, 1]`.
    Scalar(u32),
    /// `[x]`, `[x, y]` or `[x, y, z]`.
    List(Vec<u32>),
}

impl JsOptions {
    /// The translator's options, or a message saying which option is wrong.
    // `Options` gains fields as the translator grows; they keep their defaults.
    #[allow(clippy::needless_update)]
    pub fn to_options(&self) -> Result<Options, String> {
        let target = match self.target.as_deref() {
            None | Some("webgpu") => Target::WebGpu,
            Some("wgpu") => Target::Wgpu,
            Some(other) => {
                return Err(format!(
                    "unknown target '{other}' (expected 'webgpu' or 'wgpu')"
                ))
            }
        };
        let platform = match self.platform.as_deref() {
            None | Some("macos") => Platform::MacOs,
            Some("ios") => Platform::Ios,
            Some(other) => {
                return Err(format!(
                    "unknown platform '{other}' (expected 'macos' or 'ios')"
                ))
            }
        };
        let half = match self.half.as_deref() {
            None | Some("f16") => HalfMode::F16,
            Some("f32") => HalfMode::F32,
            Some(other) => return Err(format!("unknown half '{other}' (expected 'f16' or 'f32')")),
        };
        let uniform_layout = match self.uniform_layout.as_deref() {
            None | Some("wgsl") => UniformLayout::Wgsl,
            Some("standard") => UniformLayout::Standard,
            Some("none") => UniformLayout::None,
            Some(other) => {
                return Err(format!(
                    "unknown uniformLayout '{other}' (expected 'wgsl', 'standard' or 'none')"
                ))
            }
        };
        let defines = match &self.defines {
            None => Vec::new(),
            Some(defines) => defines.to_pairs()?,
        };
        let threadgroup_size = match &self.threadgroup_size {
            None => None,
            Some(size) => Some(size.to_xyz()?),
        };
        let binding_map = match &self.binding_map {
            None => BindingMap::default(),
            Some(map) => BindingMap::from_json(&map.to_string())
                .map_err(|e| format!("bad bindingMap: {e}"))?,
        };
        Ok(Options {
            preprocess: PreprocessOptions {
                defines,
                platform,
                virtual_files: self.headers.clone().into_iter().collect(),
                ..PreprocessOptions::default()
            },
            entries: self.entries.clone(),
            threadgroup_size,
            target,
            threadgroup_memory: self.threadgroup_memory.clone().into_iter().collect(),
            texture_formats: self.texture_formats.clone().into_iter().collect(),
            binding_map,
            half,
            uniform_layout,
            ..Options::default()
        })
    }
}

impl Defines {
    /// `(NAME, VALUE)` pairs in the preprocessor's form.
    fn to_pairs(&self) -> Result<Vec<(String, Option<String>)>, String> {
        let pairs: Vec<(String, Option<String>)> = match self {
            Defines::List(items) => items
                .iter()
                .map(|item| match item.split_once('=') {
                    Some((name, value)) => (name.trim().to_string(), Some(value.to_string())),
                    None => (item.trim().to_string(), None),
                })
                .collect(),
            Defines::Map(map) => map
                .iter()
                .map(|(name, value)| (name.clone(), define_value(value)))
                .collect(),
        };
        match pairs.iter().find(|(name, _)| !is_identifier(name)) {
            Some((name, _)) => Err(format!("bad define name '{name}'")),
            None => Ok(pairs),
        }
    }
}

/// The macro body a JSON value stands for (`null`/`true`: none, i.e. `1`).
fn define_value(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::Null | serde_json::Value::Bool(true) => None,
        serde_json::Value::Bool(false) => Some("0".into()),
        serde_json::Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

impl ThreadgroupSize {
    /// `[x, y, z]`, missing dimensions 1; every dimension at least 1.
    fn to_xyz(&self) -> Result<[u32; 3], String> {
        let dims: &[u32] = match self {
            ThreadgroupSize::Scalar(x) => std::slice::from_ref(x),
            ThreadgroupSize::List(list) => list,
        };
        if dims.is_empty() || dims.len() > 3 || dims.contains(&0) {
            return Err(format!(
                "bad threadgroupSize {dims:?}: one to three dimensions, each at least 1"
            ));
        }
        let mut xyz = [1; 3];
        xyz[..dims.len()].copy_from_slice(dims);
        Ok(xyz)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Options, String> {
        let js: JsOptions = serde_json::from_str(json).map_err(|e| e.to_string())?;
        js.to_options()
    }

    #[test]
    fn defaults_are_the_command_line_defaults() {
        let o = parse("{}").unwrap();
        assert_eq!(o.target, Target::WebGpu);
        assert_eq!(o.preprocess.platform, Platform::MacOs);
        assert!(o.threadgroup_size.is_none());
    }

    #[test]
    fn both_define_spellings() {
        let o = parse(r#"{"defines": ["A", "B=2"]}"#).unwrap();
        assert_eq!(
            o.preprocess.defines,
            vec![("A".into(), None), ("B".into(), Some("2".into()))]
        );
        let o = parse(r#"{"defines": {"A": null, "B": 2, "C": "x"}}"#).unwrap();
        assert_eq!(
            o.preprocess.defines,
            vec![
                ("A".into(), None),
                ("B".into(), Some("2".into())),
                ("C".into(), Some("x".into()))
            ]
        );
        assert!(parse(r#"{"defines": ["1A"]}"#).is_err());
    }

    #[test]
    fn threadgroup_sizes() {
        let o = parse(r#"{"threadgroupSize": 32, "target": "wgpu", "platform": "ios"}"#).unwrap();
        assert_eq!(o.threadgroup_size, Some([32, 1, 1]));
        assert_eq!(o.target, Target::Wgpu);
        assert_eq!(o.preprocess.platform, Platform::Ios);
        let o = parse(r#"{"threadgroupSize": [8, 8], "half": "f32"}"#).unwrap();
        assert_eq!(o.half, HalfMode::F32);
        assert_eq!(o.threadgroup_size, Some([8, 8, 1]));
        assert!(parse(r#"{"threadgroupSize": [0]}"#).is_err());
        assert!(parse(r#"{"threadgroupSize": [1, 2, 3, 4]}"#).is_err());
    }

    #[test]
    fn unknown_values_are_refused() {
        assert!(parse(r#"{"target": "metal"}"#).is_err());
        assert!(parse(r#"{"platform": "tvos"}"#).is_err());
        assert!(parse(r#"{"half": "bf16"}"#).is_err());
        assert!(parse(r#"{"entrys": []}"#).is_err());
    }
}
