//! Part of the emit stage: what would change in out/, as a unified text diff or as a semantic summary a reviewer reads.
//!
//! The semantic diff parses every YAML object of the old and new trees (header comments are not part of the
//! YAML, so they never count), matches objects by cluster (top-level directory), kind, namespace and name (not by
//! file, so a renamed file is not an add + remove), and describes each changed object in words. Karpenter
//! NodePools get the words that matter for capacity and cost (instance types, capacity types, limits, weight,
//! disruption, the `gpuplan.dev/*-usd-per-hour` annotations); every other field, and every other kind, is
//! reported by JSON path.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use similar::TextDiff;

use crate::emit::{ChangeKind, changes};
use crate::layout::{OutputTree, cluster_of, parse_header, strip_header};

/// Output format of [`render_diff`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffFormat {
    /// A git-style unified diff of the files, paths as `a/out/...` / `b/out/...`.
    #[default]
    Unified,
    /// A summary for a pull-request comment: per cluster a table of changed objects and the worst-case $/h delta.
    Markdown,
    /// The [`ObjectChange`] list as JSON.
    Json,
}

pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
pub const CAPACITY_TYPE_LABEL: &str = "karpenter.sh/capacity-type";
pub const EXPECTED_COST_ANNOTATION: &str = "gpuplan.dev/expected-usd-per-hour";
pub const WORST_CASE_COST_ANNOTATION: &str = "gpuplan.dev/worst-case-usd-per-hour";
/// What a NodePool's worst case assumes: "guaranteed: …" or "EMPIRICAL, not guaranteed: …".
pub const WORST_CASE_BASIS_ANNOTATION: &str = "gpuplan.dev/worst-case-basis";
pub const BUDGET_COST_ANNOTATION: &str = "gpuplan.dev/budget-usd-per-hour";

/// Which cost annotation a [`Detail::Cost`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CostMeasure {
    Expected,
    /// The steady-state bound: the active nodes at the limits.
    WorstCase,
    Budget,
    /// The steady-state bound plus the nodes draining beside their replacements (outside the limits).
    DrainPeak,
}

impl CostMeasure {
    pub const ALL: [CostMeasure; 4] = [
        CostMeasure::Expected,
        CostMeasure::WorstCase,
        CostMeasure::Budget,
        CostMeasure::DrainPeak,
    ];

    pub fn annotation(self) -> &'static str {
        match self {
            CostMeasure::Expected => EXPECTED_COST_ANNOTATION,
            CostMeasure::WorstCase => WORST_CASE_COST_ANNOTATION,
            CostMeasure::Budget => BUDGET_COST_ANNOTATION,
            CostMeasure::DrainPeak => crate::render::DRAIN_PEAK_ANNOTATION,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            CostMeasure::Expected => "expected $/h",
            CostMeasure::WorstCase => "worst case (steady state) $/h",
            CostMeasure::Budget => "budget $/h",
            CostMeasure::DrainPeak => "drain peak $/h",
        }
    }
}

/// One thing that changed inside an object. `Display` gives the words used in summaries.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Detail {
    /// NodePool: values of the `node.kubernetes.io/instance-type In` requirement.
    InstanceTypes {
        added: Vec<String>,
        removed: Vec<String>,
    },
    /// NodePool: values of the `karpenter.sh/capacity-type In` requirement.
    CapacityTypes {
        added: Vec<String>,
        removed: Vec<String>,
    },
    /// NodePool: any other requirement (by key and operator), rendered as `Op [values]`.
    Requirement {
        key: String,
        old: Option<String>,
        new: Option<String>,
    },
    /// NodePool: `spec.limits.<resource>`.
    Limit {
        resource: String,
        old: Option<String>,
        new: Option<String>,
    },
    /// NodePool: `spec.weight`.
    Weight {
        old: Option<String>,
        new: Option<String>,
    },
    /// NodePool: `spec.disruption.<field>` (budgets rendered compactly).
    Disruption {
        field: String,
        old: Option<String>,
        new: Option<String>,
    },
    /// NodePool: a `gpuplan.dev/*-usd-per-hour` annotation.
    Cost {
        measure: CostMeasure,
        old: Option<f64>,
        new: Option<f64>,
    },
    /// Any other field, by JSON path (`spec.template.spec.taints[0].effect`).
    Field {
        path: String,
        old: Option<Value>,
        new: Option<Value>,
    },
    /// Free text (e.g. an object that could not be parsed, or the overview of an added NodePool).
    Note { text: String },
}

/// One added, removed or modified object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObjectChange {
    /// Top-level directory of out/ the object lives in ("" for a file directly in out/).
    pub cluster: String,
    pub api_version: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
    /// File relative to out/ (the new one; the old one for a removed object).
    pub path: PathBuf,
    pub change: ChangeKind,
    pub details: Vec<Detail>,
    /// The one-line description: `NodePool gpu-inference-spot: +g6e.xlarge, limit nvidia.com/gpu 40→48, …`.
    pub summary: String,
}

impl ObjectChange {
    /// `Kind name` or `Kind namespace/name`.
    pub fn object(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }

    /// The worst-case $/h change this object contributes (added: +new, removed: −old).
    pub fn worst_case_delta(&self) -> Option<f64> {
        self.details.iter().find_map(|d| match d {
            Detail::Cost {
                measure: CostMeasure::WorstCase,
                old,
                new,
            } => Some(new.unwrap_or(0.0) - old.unwrap_or(0.0)),
            _ => None,
        })
    }
}

/// Sum of a cost annotation over all NodePools of a cluster, before and after (the budget, which every pool of a
/// profile repeats, is counted once per profile).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterCost {
    pub cluster: String,
    pub measure: CostMeasure,
    /// `None` when no NodePool of the cluster carries the annotation.
    pub old: Option<f64>,
    pub new: Option<f64>,
}

fn money(v: f64) -> String {
    format!("{v:.2}")
}

fn signed_money(d: f64) -> String {
    if d < 0.0 {
        format!("-{:.2}", -d)
    } else {
        format!("+{d:.2}")
    }
}

fn opt_str(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("none")
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        Value::Bool(_) | Value::Number(_) => v.to_string(),
        _ => {
            let s = v.to_string();
            if s.chars().count() > 60 {
                format!("{}…", s.chars().take(59).collect::<String>())
            } else {
                s
            }
        }
    }
}

fn scalar_list(v: &Option<Value>) -> Option<Vec<String>> {
    match v {
        Some(Value::Array(items)) if items.iter().all(|i| !i.is_array() && !i.is_object()) => {
            Some(items.iter().map(value_text).collect())
        }
        _ => None,
    }
}

fn set_words(added: &[String], removed: &[String]) -> String {
    added
        .iter()
        .map(|a| format!("+{a}"))
        .chain(removed.iter().map(|r| format!("-{r}")))
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detail::InstanceTypes { added, removed } => f.write_str(&set_words(added, removed)),
            Detail::CapacityTypes { added, removed } => {
                write!(f, "capacity types {}", set_words(added, removed))
            }
            Detail::Requirement { key, old, new } => {
                write!(f, "requirement {key} {}→{}", opt_str(old), opt_str(new))
            }
            Detail::Limit { resource, old, new } => {
                write!(f, "limit {resource} {}→{}", opt_str(old), opt_str(new))
            }
            Detail::Weight { old, new } => write!(f, "weight {}→{}", opt_str(old), opt_str(new)),
            Detail::Disruption { field, old, new } => {
                write!(f, "{field} {}→{}", opt_str(old), opt_str(new))
            }
            Detail::Cost { measure, old, new } => {
                let label = measure.label();
                match (old, new) {
                    (Some(o), Some(n)) => {
                        write!(
                            f,
                            "{label} {}→{} ({})",
                            money(*o),
                            money(*n),
                            signed_money(n - o)
                        )
                    }
                    (None, Some(n)) => write!(f, "{label} {}", money(*n)),
                    (Some(o), None) => write!(f, "{label} {}→none", money(*o)),
                    (None, None) => write!(f, "{label} unchanged"),
                }
            }
            Detail::Field { path, old, new } => {
                if let (Some(o), Some(n)) = (scalar_list(old), scalar_list(new)) {
                    let added: Vec<String> = n.iter().filter(|x| !o.contains(x)).cloned().collect();
                    let removed: Vec<String> =
                        o.iter().filter(|x| !n.contains(x)).cloned().collect();
                    if added.is_empty() && removed.is_empty() {
                        return write!(f, "{path} reordered");
                    }
                    return write!(f, "{path} {}", set_words(&added, &removed));
                }
                // Long values (alert descriptions, PromQL) would drown the line: show that they changed and
                // leave the text to the unified diff.
                let short = |v: &serde_json::Value| {
                    let text = value_text(v);
                    if text.chars().count() > 40 { None } else { Some(text) }
                };
                match (old, new) {
                    (Some(o), Some(n)) => match (short(o), short(n)) {
                        (Some(o), Some(n)) => write!(f, "{path} {o}→{n}"),
                        _ => write!(f, "{path} changed"),
                    },
                    (None, Some(n)) => write!(f, "+{path}{}", short(n).map(|n| format!(" {n}")).unwrap_or_default()),
                    (Some(o), None) => write!(f, "-{path}{}", short(o).map(|o| format!(" (was {o})")).unwrap_or_default()),
                    (None, None) => write!(f, "{path}"),
                }
            }
            Detail::Note { text } => f.write_str(text),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Objects

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ObjKey {
    cluster: String,
    kind: String,
    namespace: Option<String>,
    name: String,
}

#[derive(Debug, Clone)]
struct Obj {
    path: PathBuf,
    /// The `<source>` of the gpuplan header (the profile), if any.
    source: Option<String>,
    api_version: String,
    /// `Err(message)` when the file did not parse as YAML.
    value: Result<Value, String>,
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

fn objects(tree: &OutputTree) -> BTreeMap<ObjKey, Obj> {
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

fn is_nodepool(kind: &str, api_version: &str) -> bool {
    kind == "NodePool" && api_version.starts_with("karpenter.sh/")
}

fn cost_of(v: &Value, measure: CostMeasure) -> Option<f64> {
    let s = v
        .pointer("/metadata/annotations")?
        .get(measure.annotation())?;
    match s {
        Value::String(s) => s.trim().trim_start_matches('$').parse().ok(),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// Requirements of a NodePool by (key, operator) → the requirement minus key and operator; removed from `v`.
fn take_requirements(v: &mut Value) -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    let Some(reqs) = v
        .pointer_mut("/spec/template/spec/requirements")
        .map(Value::take)
    else {
        return out;
    };
    if let Some(obj) = v
        .pointer_mut("/spec/template/spec")
        .and_then(Value::as_object_mut)
    {
        obj.remove("requirements");
    }
    let Value::Array(reqs) = reqs else { return out };
    for (i, mut req) in reqs.into_iter().enumerate() {
        let key = str_at(&req, "/key")
            .map(str::to_owned)
            .unwrap_or_else(|| format!("[{i}]"));
        let op = str_at(&req, "/operator").unwrap_or_default().to_owned();
        if let Some(o) = req.as_object_mut() {
            o.remove("key");
            o.remove("operator");
        }
        out.insert((key, op), req);
    }
    out
}

fn values_of(req: Option<&Value>) -> Vec<String> {
    req.and_then(|r| r.get("values"))
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |a| a.iter().map(value_text).collect())
}

fn requirement_text(op: &str, req: &Value) -> String {
    let mut s = op.to_owned();
    if let Some(values) = req.get("values").and_then(Value::as_array) {
        s.push_str(&format!(
            " [{}]",
            values.iter().map(value_text).collect::<Vec<_>>().join(", ")
        ));
    }
    if let Some(obj) = req.as_object() {
        for (k, v) in obj {
            if k != "values" {
                s.push_str(&format!(" {k}={}", value_text(v)));
            }
        }
    }
    s
}

fn budget_text(b: &Value) -> String {
    let Some(obj) = b.as_object() else {
        return value_text(b);
    };
    let mut parts = Vec::new();
    if let Some(n) = obj.get("nodes") {
        parts.push(format!("nodes {}", value_text(n)));
    }
    if let Some(Value::Array(r)) = obj.get("reasons") {
        parts.push(format!(
            "reasons {}",
            r.iter().map(value_text).collect::<Vec<_>>().join("|")
        ));
    }
    if let Some(s) = obj.get("schedule") {
        parts.push(format!("schedule \"{}\"", value_text(s)));
    }
    if let Some(d) = obj.get("duration") {
        parts.push(format!("for {}", value_text(d)));
    }
    for (k, v) in obj {
        if !matches!(k.as_str(), "nodes" | "reasons" | "schedule" | "duration") {
            parts.push(format!("{k} {}", value_text(v)));
        }
    }
    parts.join(" ")
}

fn budgets_text(v: Option<&Value>) -> Option<String> {
    let v = v?;
    Some(match v {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(budget_text).collect::<Vec<_>>().join("; ")
        ),
        other => value_text(other),
    })
}

fn take_pointer(v: &mut Value, parent: &str, key: &str) -> Option<Value> {
    v.pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .and_then(|o| o.remove(key))
}

fn nodepool_details(old: &Value, new: &Value) -> Vec<Detail> {
    let mut o = old.clone();
    let mut n = new.clone();
    let mut details = Vec::new();

    // Requirements.
    let ro = take_requirements(&mut o);
    let rn = take_requirements(&mut n);
    let keys: BTreeSet<&(String, String)> = ro.keys().chain(rn.keys()).collect();
    let (mut it, mut ct, mut other) = (None, None, Vec::new());
    for k in keys {
        let (a, b) = (ro.get(k), rn.get(k));
        if a == b {
            continue;
        }
        let special = k.1 == "In" && (k.0 == INSTANCE_TYPE_LABEL || k.0 == CAPACITY_TYPE_LABEL);
        if special {
            let (va, vb) = (values_of(a), values_of(b));
            let added: Vec<String> = vb.iter().filter(|x| !va.contains(x)).cloned().collect();
            let removed: Vec<String> = va.iter().filter(|x| !vb.contains(x)).cloned().collect();
            if !added.is_empty() || !removed.is_empty() {
                let d = if k.0 == INSTANCE_TYPE_LABEL {
                    &mut it
                } else {
                    &mut ct
                };
                *d = Some((added, removed));
            }
            // Anything else about the requirement (minValues, order only): say so.
            let strip = |r: Option<&Value>| {
                r.cloned().map(|mut r| {
                    if let Some(o) = r.as_object_mut() {
                        o.remove("values");
                    }
                    r
                })
            };
            let (sa, sb) = (strip(a), strip(b));
            if sa != sb {
                other.push(Detail::Requirement {
                    key: k.0.clone(),
                    old: sa.map(|r| requirement_text(&k.1, &r)),
                    new: sb.map(|r| requirement_text(&k.1, &r)),
                });
            }
        } else {
            other.push(Detail::Requirement {
                key: k.0.clone(),
                old: a.map(|r| requirement_text(&k.1, r)),
                new: b.map(|r| requirement_text(&k.1, r)),
            });
        }
    }
    if let Some((added, removed)) = it {
        details.push(Detail::InstanceTypes { added, removed });
    }
    if let Some((added, removed)) = ct {
        details.push(Detail::CapacityTypes { added, removed });
    }
    details.extend(other);

    // Limits.
    let lo = take_pointer(&mut o, "/spec", "limits");
    let ln = take_pointer(&mut n, "/spec", "limits");
    let empty = serde_json::Map::new();
    let (lo_m, ln_m) = (
        lo.as_ref().and_then(Value::as_object).unwrap_or(&empty),
        ln.as_ref().and_then(Value::as_object).unwrap_or(&empty),
    );
    let resources: BTreeSet<&String> = lo_m.keys().chain(ln_m.keys()).collect();
    for r in resources {
        let (a, b) = (lo_m.get(r).map(value_text), ln_m.get(r).map(value_text));
        if a != b {
            details.push(Detail::Limit {
                resource: r.clone(),
                old: a,
                new: b,
            });
        }
    }

    // Weight.
    let (wo, wn) = (
        take_pointer(&mut o, "/spec", "weight"),
        take_pointer(&mut n, "/spec", "weight"),
    );
    if wo != wn {
        details.push(Detail::Weight {
            old: wo.as_ref().map(value_text),
            new: wn.as_ref().map(value_text),
        });
    }

    // Disruption.
    let dobj = |v: &mut Value| take_pointer(v, "/spec", "disruption").unwrap_or(Value::Null);
    let (mut dob, mut dnb) = (dobj(&mut o), dobj(&mut n));
    for field in ["consolidationPolicy", "consolidateAfter", "budgets"] {
        let a = dob.as_object_mut().and_then(|m| m.remove(field));
        let b = dnb.as_object_mut().and_then(|m| m.remove(field));
        if a != b {
            let render = |v: Option<&Value>| {
                if field == "budgets" {
                    budgets_text(v)
                } else {
                    v.map(value_text)
                }
            };
            details.push(Detail::Disruption {
                field: field.into(),
                old: render(a.as_ref()),
                new: render(b.as_ref()),
            });
        }
    }
    // Other disruption fields fall through to the generic diff.
    for (v, d) in [(&mut o, dob), (&mut n, dnb)] {
        if let (Some(spec), Value::Object(m)) =
            (v.pointer_mut("/spec").and_then(Value::as_object_mut), d)
            && !m.is_empty()
        {
            spec.insert("disruption".into(), Value::Object(m));
        }
    }

    // What the worst case assumes: say plainly when it is only empirical (spot-ceiling "observed-max") or computed
    // from estimated prices. The drain peak's words follow its figure (a Cost detail).
    let basis = |v: &mut Value| take_pointer(v, "/metadata/annotations", WORST_CASE_BASIS_ANNOTATION).and_then(|b| b.as_str().map(String::from));
    let (bo, bn) = (basis(&mut o), basis(&mut n));
    for v in [&mut o, &mut n] {
        take_pointer(v, "/metadata/annotations", crate::render::DRAIN_PEAK_BASIS_ANNOTATION);
    }
    let costs = cost_details(old, new);
    let unguaranteed = bn.as_deref().and_then(|b| {
        if b.contains("EMPIRICAL") {
            Some("worst case is EMPIRICAL, not guaranteed (spot bounded by the highest observed spot price)")
        } else if b.contains("ESTIMATED") {
            Some("worst case is ESTIMATED, not guaranteed (on-demand prices the catalog marks as estimates)")
        } else {
            None
        }
    });
    if let Some(note) = unguaranteed.filter(|_| bo != bn || !costs.is_empty()) {
        details.insert(0, Detail::Note { text: note.into() });
    } else if bo != bn {
        details.push(Detail::Field { path: "worst-case basis".into(), old: bo.map(Value::String), new: bn.map(Value::String) });
    }

    // Costs.
    details.extend(costs);
    for v in [&mut o, &mut n] {
        for m in CostMeasure::ALL {
            take_pointer(v, "/metadata/annotations", m.annotation());
        }
    }

    details.extend(field_details(&o, &n));
    details
}

fn cost_details(old: &Value, new: &Value) -> Vec<Detail> {
    CostMeasure::ALL
        .into_iter()
        .filter_map(|measure| {
            let (a, b) = (cost_of(old, measure), cost_of(new, measure));
            (a != b).then_some(Detail::Cost {
                measure,
                old: a,
                new: b,
            })
        })
        .collect()
}

fn path_key(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{}]", serde_json::to_string(key).expect("string")),
    }
}

/// Leaf-level differences by JSON path, ignoring the identity fields (kind, metadata.name, metadata.namespace).
fn field_details(old: &Value, new: &Value) -> Vec<Detail> {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("kind");
        }
        take_pointer(&mut v, "/metadata", "name");
        take_pointer(&mut v, "/metadata", "namespace");
        v
    };
    let mut out = Vec::new();
    walk(
        String::new(),
        Some(&strip(old)),
        Some(&strip(new)),
        &mut out,
    );
    out
}

fn walk(path: String, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Detail>) {
    if a == b {
        return;
    }
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                walk(path_key(&path, k), x.get(k), y.get(k), out);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y)))
            if x.len() == y.len() && x.iter().chain(y).any(|v| v.is_object() || v.is_array()) =>
        {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                walk(format!("{path}[{i}]"), Some(p), Some(q), out);
            }
        }
        _ => out.push(Detail::Field {
            path: if path.is_empty() {
                "(document)".into()
            } else {
                path
            },
            old: a.cloned(),
            new: b.cloned(),
        }),
    }
}

/// Words for an added NodePool: how wide, what capacity, how big, what it may cost.
fn nodepool_overview(v: &Value) -> String {
    let mut parts = Vec::new();
    let mut v2 = v.clone();
    let reqs = take_requirements(&mut v2);
    let key = |label: &str| (label.to_owned(), "In".to_owned());
    let types = values_of(reqs.get(&key(INSTANCE_TYPE_LABEL)));
    if !types.is_empty() {
        parts.push(format!(
            "{} instance type{}",
            types.len(),
            if types.len() == 1 { "" } else { "s" }
        ));
    }
    let caps = values_of(reqs.get(&key(CAPACITY_TYPE_LABEL)));
    if !caps.is_empty() {
        parts.push(caps.join("+"));
    }
    if let Some(limits) = v.pointer("/spec/limits").and_then(Value::as_object) {
        for (r, l) in limits {
            parts.push(format!("limit {r} {}", value_text(l)));
        }
    }
    if let Some(w) = v.pointer("/spec/weight") {
        parts.push(format!("weight {}", value_text(w)));
    }
    parts.join(", ")
}

fn summary_line(
    kind: &str,
    namespace: &Option<String>,
    name: &str,
    change: ChangeKind,
    details: &[Detail],
) -> String {
    let object = match namespace {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    };
    format!("{object}: {}", change_words(change, details))
}

/// "added", "removed (worst case $/h 112.00)" or the joined details, at most 4 field details.
fn change_words(change: ChangeKind, details: &[Detail]) -> String {
    const MAX_FIELDS: usize = 4;
    let mut words = Vec::new();
    let mut fields = 0usize;
    for d in details {
        if matches!(d, Detail::Field { .. }) {
            fields += 1;
            if fields > MAX_FIELDS {
                continue;
            }
        }
        words.push(d.to_string());
    }
    if fields > MAX_FIELDS {
        words.push(format!("{} more fields", fields - MAX_FIELDS));
    }
    let joined = words.join(", ");
    match change {
        ChangeKind::Added if joined.is_empty() => "added".into(),
        ChangeKind::Added => format!("added ({joined})"),
        ChangeKind::Removed if joined.is_empty() => "removed".into(),
        ChangeKind::Removed => format!("removed ({joined})"),
        ChangeKind::Modified if joined.is_empty() => "modified".into(),
        ChangeKind::Modified => joined,
    }
}

/// Per object: what was added, removed or changed between `old` and `new`, sorted by cluster, kind, namespace,
/// name. Header lines, comments and formatting are ignored; objects equal as data are not listed.
pub fn semantic_changes(old: &OutputTree, new: &OutputTree) -> Vec<ObjectChange> {
    let (oo, no) = (objects(old), objects(new));
    let keys: BTreeSet<&ObjKey> = oo.keys().chain(no.keys()).collect();
    let mut out = Vec::new();
    for key in keys {
        let (a, b) = (oo.get(key), no.get(key));
        let (change, obj) = match (a, b) {
            (None, Some(b)) => (ChangeKind::Added, b),
            (Some(a), None) => (ChangeKind::Removed, a),
            (Some(a), Some(b)) if a.value != b.value || a.api_version != b.api_version => {
                (ChangeKind::Modified, b)
            }
            _ => continue,
        };
        let nodepool = is_nodepool(&key.kind, &obj.api_version);
        let details = match (change, a.map(|o| &o.value), b.map(|o| &o.value)) {
            (_, Some(Err(e)), _) | (_, _, Some(Err(e))) => {
                let reason = e.split('\u{0}').next().unwrap_or_default();
                vec![Detail::Note {
                    text: format!("not compared as YAML: {reason}"),
                }]
            }
            (ChangeKind::Added, _, Some(Ok(v))) => {
                let mut d = Vec::new();
                if nodepool {
                    let overview = nodepool_overview(v);
                    if !overview.is_empty() {
                        d.push(Detail::Note { text: overview });
                    }
                    d.extend(cost_details(&Value::Null, v));
                }
                d
            }
            (ChangeKind::Removed, Some(Ok(v)), _) => {
                if nodepool {
                    cost_details(v, &Value::Null)
                } else {
                    Vec::new()
                }
            }
            (ChangeKind::Modified, Some(Ok(x)), Some(Ok(y))) => {
                if nodepool {
                    nodepool_details(x, y)
                } else {
                    field_details(x, y)
                }
            }
            _ => Vec::new(),
        };
        let summary = summary_line(&key.kind, &key.namespace, &key.name, change, &details);
        out.push(ObjectChange {
            cluster: key.cluster.clone(),
            api_version: obj.api_version.clone(),
            kind: key.kind.clone(),
            namespace: key.namespace.clone(),
            name: key.name.clone(),
            path: obj.path.clone(),
            change,
            details,
            summary,
        });
    }
    out
}

/// A NodePool that a change removes from out/, with the limits it had.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemovedNodePool {
    pub cluster: String,
    pub name: String,
    /// `spec.limits` of the removed object, as written (`nvidia.com/gpu: "48"`).
    pub limits: BTreeMap<String, String>,
}

impl std::fmt::Display for RemovedNodePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let limits: Vec<String> = self.limits.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let limits = if limits.is_empty() { "no limit".to_string() } else { format!("limit {}", limits.join(", ")) };
        write!(f, "NodePool {} in cluster {} ({limits})", self.name, self.cluster)
    }
}

/// What deleting a NodePool does, for diff and commit: Karpenter deletes its NodeClaims at once, without its
/// disruption budgets (karpenter.sh docs, concepts/disruption "Manual": "deleting a NodePool … all nodes
/// launched by it are deleted"; concepts/nodeclaims). gpuplan's NodePools carry Argo CD `Prune=false` and Flux
/// `prune: disabled`, so a sync leaves the old NodePool in place; deleting it stays a deliberate act.
pub const REMOVAL_WARNING: &str = "deleting a NodePool deletes all its nodes at once, ignoring disruption budgets; its Prune=false / prune: disabled annotations keep Argo CD and Flux from doing it on sync, so delete it by hand when its nodes may go (`gpuplan commit` needs --allow-removal)";

/// Every NodePool of `old` that `new` no longer has (a renamed pool or a changed preset renames NodePools).
pub fn removed_node_pools(old: &OutputTree, new: &OutputTree) -> Vec<RemovedNodePool> {
    let after = objects(new);
    objects(old)
        .into_iter()
        .filter(|(key, obj)| is_nodepool(&key.kind, &obj.api_version) && !after.contains_key(key))
        .map(|(key, obj)| {
            let limits = obj.value.as_ref().ok().and_then(|v| v["spec"]["limits"].as_object().cloned()).unwrap_or_default();
            RemovedNodePool {
                cluster: key.cluster,
                name: key.name,
                limits: limits.into_iter().map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect(),
            }
        })
        .collect()
}

/// Per cluster present in either tree and per cost measure carried by any NodePool: the sum over its NodePools
/// before and after. Sorted by cluster, then measure (expected, worst case, budget).
pub fn cluster_costs(old: &OutputTree, new: &OutputTree) -> Vec<ClusterCost> {
    let sums = |tree: &OutputTree| {
        let mut m: BTreeMap<(String, CostMeasure), f64> = BTreeMap::new();
        // The budget is the profile's, repeated on each of its pools: count it once per profile.
        let mut budgets: BTreeMap<(String, String), f64> = BTreeMap::new();
        for (key, obj) in objects(tree) {
            let Ok(v) = &obj.value else { continue };
            if !is_nodepool(&key.kind, &obj.api_version) {
                continue;
            }
            for measure in CostMeasure::ALL {
                let Some(c) = cost_of(v, measure) else {
                    continue;
                };
                if measure == CostMeasure::Budget {
                    let profile = obj.source.clone().unwrap_or_else(|| key.name.clone());
                    let b = budgets.entry((key.cluster.clone(), profile)).or_default();
                    *b = b.max(c);
                } else {
                    *m.entry((key.cluster.clone(), measure)).or_default() += c;
                }
            }
        }
        for ((cluster, _), b) in budgets {
            *m.entry((cluster, CostMeasure::Budget)).or_default() += b;
        }
        m
    };
    let (a, b) = (sums(old), sums(new));
    let keys: BTreeSet<&(String, CostMeasure)> = a.keys().chain(b.keys()).collect();
    // Round sums to cents so 112.00 + 12.80 is 124.80, not 124.80000000000001.
    let cents = |v: Option<&f64>| v.map(|v| (v * 100.0).round() / 100.0);
    keys.into_iter()
        .map(|k| ClusterCost {
            cluster: k.0.clone(),
            measure: k.1,
            old: cents(a.get(k)),
            new: cents(b.get(k)),
        })
        .collect()
}

/// Renders what changes from `old` to `new` in the given format. Unified diff paths are `a/out/<path>` and
/// `b/out/<path>`; see [`render_unified`] for another out/ name.
pub fn render_diff(old: &OutputTree, new: &OutputTree, format: DiffFormat) -> String {
    match format {
        DiffFormat::Unified => render_unified(old, new, "out"),
        DiffFormat::Markdown => render_markdown(old, new),
        DiffFormat::Json => {
            let mut s =
                serde_json::to_string_pretty(&semantic_changes(old, new)).expect("serializable");
            s.push('\n');
            s
        }
    }
}

/// A git-style unified diff (`diff --git` lines, `new file mode` / `deleted file mode`, 3 lines of context) of
/// every changed file, paths prefixed with `a/<out_label>/` and `b/<out_label>/`. Empty when nothing changes.
pub fn render_unified(old: &OutputTree, new: &OutputTree, out_label: &str) -> String {
    let mut s = String::new();
    for change in changes(old, new) {
        let p = slash(&Path::new(out_label).join(&change.path));
        let (a_text, b_text) = (
            old.files.get(&change.path).map_or("", String::as_str),
            new.files.get(&change.path).map_or("", String::as_str),
        );
        let (a, b) = (format!("a/{p}"), format!("b/{p}"));
        s.push_str(&format!("diff --git {a} {b}\n"));
        let (a, b) = match change.kind {
            ChangeKind::Added => {
                s.push_str("new file mode 100644\n");
                ("/dev/null".to_owned(), b)
            }
            ChangeKind::Removed => {
                s.push_str("deleted file mode 100644\n");
                (a, "/dev/null".to_owned())
            }
            ChangeKind::Modified => (a, b),
        };
        let diff = TextDiff::from_lines(a_text, b_text);
        s.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&a, &b)
                .to_string(),
        );
    }
    s
}

fn slash(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn cost_line(c: &ClusterCost) -> String {
    let label = c.measure.label();
    match (c.old, c.new) {
        (Some(o), Some(n)) if money(o) == money(n) => format!("{label}: {} (unchanged)", money(n)),
        (Some(o), Some(n)) => format!(
            "{label}: {} → {} (**{}**)",
            money(o),
            money(n),
            signed_money(n - o)
        ),
        (None, Some(n)) => format!("{label}: none → {} (**{}**)", money(n), signed_money(n)),
        (Some(o), None) => format!("{label}: {} → none (**{}**)", money(o), signed_money(-o)),
        (None, None) => format!("{label}: none"),
    }
}

/// The markdown summary: a heading, per cluster its cost totals (worst case first), a table of changed objects,
/// and the changed files in a collapsed list.
pub fn render_markdown(old: &OutputTree, new: &OutputTree) -> String {
    let files = changes(old, new);
    if files.is_empty() {
        return "## gpuplan: no changes to out/\n".into();
    }
    let objects = semantic_changes(old, new);
    let costs = cluster_costs(old, new);
    let removed = removed_node_pools(old, new);
    let clusters: BTreeSet<String> = files
        .iter()
        .map(|f| cluster_of(&f.path).unwrap_or_default())
        .chain(objects.iter().map(|o| o.cluster.clone()))
        .collect();

    let count = |k: ChangeKind| objects.iter().filter(|o| o.change == k).count();
    let mut s = format!(
        "## gpuplan: changes to out/\n\n{} object(s) changed: {} added, {} modified, {} removed; {} file(s).\n",
        objects.len(),
        count(ChangeKind::Added),
        count(ChangeKind::Modified),
        count(ChangeKind::Removed),
        files.len()
    );
    if !removed.is_empty() {
        s.push_str(&format!("\n> [!WARNING]\n> This change removes {} NodePool(s): {REMOVAL_WARNING}.\n", removed.len()));
        for r in &removed {
            s.push_str(&format!("> - {}\n", md_escape(&r.to_string())));
        }
    }
    for cluster in clusters {
        let title = if cluster.is_empty() {
            "out/".to_owned()
        } else {
            format!("`{cluster}`")
        };
        s.push_str(&format!("\n### {title}\n\n"));
        let mut cluster_costs: Vec<&ClusterCost> =
            costs.iter().filter(|c| c.cluster == cluster).collect();
        cluster_costs.sort_by_key(|c| match c.measure {
            CostMeasure::WorstCase => 0,
            CostMeasure::DrainPeak => 1,
            CostMeasure::Expected => 2,
            CostMeasure::Budget => 3,
        });
        for c in &cluster_costs {
            s.push_str(&format!("- {}\n", cost_line(c)));
        }
        if !cluster_costs.is_empty() {
            s.push('\n');
        }
        let mine: Vec<&ObjectChange> = objects.iter().filter(|o| o.cluster == cluster).collect();
        if mine.is_empty() {
            s.push_str("No object changes (formatting or header only).\n");
        } else {
            s.push_str("| | Object | Change |\n|---|---|---|\n");
            for o in mine {
                let sign = match o.change {
                    ChangeKind::Added => "➕",
                    ChangeKind::Removed => "➖",
                    ChangeKind::Modified => "✏️",
                };
                let object = match &o.namespace {
                    Some(ns) => format!("{} `{ns}/{}`", o.kind, o.name),
                    None => format!("{} `{}`", o.kind, o.name),
                };
                s.push_str(&format!(
                    "| {sign} | {} | {} |\n",
                    md_escape(&object),
                    md_escape(&change_words(o.change, &o.details))
                ));
            }
        }
        let my_files: Vec<_> = files
            .iter()
            .filter(|f| cluster_of(&f.path).unwrap_or_default() == cluster)
            .collect();
        s.push_str(&format!(
            "\n<details><summary>{} file(s)</summary>\n\n",
            my_files.len()
        ));
        for f in my_files {
            let kind = match f.kind {
                ChangeKind::Added => "added",
                ChangeKind::Modified => "modified",
                ChangeKind::Removed => "removed",
            };
            s.push_str(&format!("- {kind} `out/{}`\n", slash(&f.path)));
        }
        s.push_str("\n</details>\n");
    }
    s
}
