//! The words of the semantic diff: what changed inside an object ([`Detail`]), the object ([`ObjectChange`]) and
//! the per-cluster cost sums ([`ClusterCost`]), with the annotation and label names NodePools are read by.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use crate::emit::ChangeKind;

pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
pub const CAPACITY_TYPE_LABEL: &str = "karpenter.sh/capacity-type";
pub const AT_LIMIT_COST_ANNOTATION: &str = "gpuplan.dev/at-limit-usd-per-hour";
/// The same figure's name before it was called what it is (out/ written by gpuplan before the forecast): a base
/// revision's NodePools may still carry it.
pub const LEGACY_AT_LIMIT_COST_ANNOTATION: &str = "gpuplan.dev/expected-usd-per-hour";
pub const WORST_CASE_COST_ANNOTATION: &str = "gpuplan.dev/worst-case-usd-per-hour";
/// What a NodePool's worst case assumes: "guaranteed: …" or "EMPIRICAL, not guaranteed: …".
pub const WORST_CASE_BASIS_ANNOTATION: &str = "gpuplan.dev/worst-case-basis";
pub const BUDGET_COST_ANNOTATION: &str = "gpuplan.dev/budget-usd-per-hour";

/// Which cost annotation a [`Detail::Cost`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CostMeasure {
    /// Every pool at its limit on its cheapest type (`cost::at_limit`): a reference, not what a cluster pays (the
    /// forecast's expected cost is that, `forecast`).
    AtLimit,
    /// The steady-state bound: the active nodes at the limits.
    WorstCase,
    Budget,
    /// The steady-state bound plus the nodes draining beside their replacements (outside the limits).
    DrainPeak,
}

impl CostMeasure {
    pub const ALL: [CostMeasure; 4] = [
        CostMeasure::AtLimit,
        CostMeasure::WorstCase,
        CostMeasure::Budget,
        CostMeasure::DrainPeak,
    ];

    pub fn annotation(self) -> &'static str {
        match self {
            CostMeasure::AtLimit => AT_LIMIT_COST_ANNOTATION,
            CostMeasure::WorstCase => WORST_CASE_COST_ANNOTATION,
            CostMeasure::Budget => BUDGET_COST_ANNOTATION,
            CostMeasure::DrainPeak => crate::render::DRAIN_PEAK_ANNOTATION,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            CostMeasure::AtLimit => "at-limit (cheapest type) $/h",
            CostMeasure::WorstCase => "worst case (steady state) $/h",
            CostMeasure::Budget => "budget $/h",
            CostMeasure::DrainPeak => "drain peak $/h",
        }
    }
}

/// What an increase rule measures: a cost figure of the NodePools' annotations, or the forecast.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    Cost(CostMeasure),
    /// What the forecast expects the profile to spend ($/h, the mean over its seeds): only with a demand file.
    Expected,
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
    /// What applying the change does to running nodes (`diff` with a compiled head): on a NodePool its own verdict,
    /// on a node class the verdicts of the NodePools that drift through it alone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<super::drift::PoolDrift>,
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

pub(super) fn money(v: f64) -> String {
    format!("{v:.2}")
}

pub(super) fn signed_money(d: f64) -> String {
    if d < 0.0 {
        format!("-{:.2}", -d)
    } else {
        format!("+{d:.2}")
    }
}

fn opt_str(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("none")
}

pub(super) fn value_text(v: &Value) -> String {
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
