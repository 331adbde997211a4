//! The objects of a tree: every YAML document of out/, keyed by cluster, kind, namespace and name.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use super::detail::CostMeasure;
use crate::layout::{OutputTree, cluster_of, parse_header, strip_header};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct ObjKey {
    pub(super) cluster: String,
    pub(super) kind: String,
    pub(super) namespace: Option<String>,
    pub(super) name: String,
}

#[derive(Debug, Clone)]
pub(super) struct Obj {
    pub(super) path: PathBuf,
    /// The `<source>` of the gpuplan header (the profile), if any.
    pub(super) source: Option<String>,
    pub(super) api_version: String,
    /// `Err(message)` when the file did not parse as YAML.
    pub(super) value: Result<Value, String>,
}

pub(super) fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

pub(super) fn objects(tree: &OutputTree) -> BTreeMap<ObjKey, Obj> {
    let mut out = BTreeMap::new();
    for (path, text) in &tree.files {
        let cluster = cluster_of(path).unwrap_or_default();
        let is_yaml = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        );
        let parsed: Result<Vec<Value>, String> = if is_yaml {
            serde_saphyr::from_multiple::<Value>(strip_header(text)).map_err(|e| e.to_string())
        } else {
            Err("not a YAML file".into())
        };
        let docs = match parsed {
            Ok(docs) => docs
                .into_iter()
                .filter(|d| !d.is_null())
                .collect::<Vec<_>>(),
            Err(e) => {
                let key = ObjKey {
                    cluster: cluster.clone(),
                    kind: "File".into(),
                    namespace: None,
                    name: path.to_string_lossy().into_owned(),
                };
                // Compare unparsable files by their text.
                let value = Err(format!("{e}\u{0}{}", strip_header(text)));
                out.insert(
                    key,
                    Obj {
                        path: path.clone(),
                        source: None,
                        api_version: String::new(),
                        value,
                    },
                );
                continue;
            }
        };
        for doc in docs {
            let kind = str_at(&doc, "/kind").unwrap_or("Object").to_owned();
            let name = str_at(&doc, "/metadata/name").map(str::to_owned);
            let namespace = str_at(&doc, "/metadata/namespace").map(str::to_owned);
            let api_version = str_at(&doc, "/apiVersion").unwrap_or_default().to_owned();
            let mut key = ObjKey {
                cluster: cluster.clone(),
                kind,
                namespace,
                name: name.unwrap_or_else(|| path.to_string_lossy().into_owned()),
            };
            if out.contains_key(&key) {
                key.name = format!("{} ({})", key.name, path.display());
            }
            let source = parse_header(text).map(|h| h.source.to_owned());
            out.insert(
                key,
                Obj {
                    path: path.clone(),
                    source,
                    api_version,
                    value: Ok(doc),
                },
            );
        }
    }
    out
}

pub(super) fn is_nodepool(kind: &str, api_version: &str) -> bool {
    kind == "NodePool" && api_version.starts_with("karpenter.sh/")
}

/// A NodePool's cost annotation; the at-limit figure also under its former name (a base revision's out/ written
/// before the rename).
pub(super) fn cost_of(v: &Value, measure: CostMeasure) -> Option<f64> {
    let annotations = v.pointer("/metadata/annotations")?;
    let legacy = (measure == CostMeasure::AtLimit).then_some(super::detail::LEGACY_AT_LIMIT_COST_ANNOTATION);
    let s = annotations.get(measure.annotation()).or_else(|| annotations.get(legacy?))?;
    match s {
        Value::String(s) => s.trim().trim_start_matches('$').parse().ok(),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}
