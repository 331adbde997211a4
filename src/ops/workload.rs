//! PodDisruptionBudget and HorizontalPodAutoscaler (or KEDA ScaledObject, see `keda.rs`) for one `workload`, as rendered
//! from its plan (`solve::ops::workload`): the HPA's behaviour, the PDB's field, and the records adopt reads back.

use serde_json::{json, Value};

use crate::profile::ops::PdbBudget;

use crate::solve::ops::scaling::{HpaPlan, ScalingStyle};
use crate::solve::ops::workload::WorkloadPlan;

impl WorkloadPlan {
    /// The replica count as recorded for adopt ([`REPLICAS_ANNOTATION`]): `"4"`, or `"1-24"` for min=1 max=24.
    pub fn replicas_record(&self) -> String {
        if self.replicas_min == self.replicas_max {
            self.replicas_min.to_string()
        } else {
            format!("{}-{}", self.replicas_min, self.replicas_max)
        }
    }

    /// The selector as recorded for adopt ([`SELECTOR_ANNOTATION`]), in kubectl's `-l` form: `app=trainer,tier=api`
    /// (Kubernetes label keys and values contain neither `,` nor `=`).
    pub fn selector_record(&self) -> String {
        self.selector.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
    }
}

/// The workload's replica count and selector, recorded on its `GpuplanWorkloadPodsUnschedulable` alert (the one
/// object every workload has: its PDB exists only for max replicas ≥ 2 or a budget, its HPA only with
/// `autoscale`) so that `gpuplan adopt` recovers them. Alert-rule annotation names must be Prometheus label names
/// (promtool: "invalid annotation name"), hence `gpuplan_*` like the rule's labels, not `gpuplan.dev/*`.
pub const REPLICAS_ANNOTATION: &str = "gpuplan_replicas";
pub const SELECTOR_ANNOTATION: &str = "gpuplan_selector";

/// The inverse of [`WorkloadPlan::replicas_record`]: (min, max), or why the record is not one (surrounding
/// spaces are allowed: a hand edit may add them).
pub fn parse_replicas_record(record: &str) -> Result<(u32, u32), String> {
    let (min, max) = record.split_once('-').unwrap_or((record, record));
    let count = |n: &str| match n.trim() {
        "" => Err("a count is missing (want `4`, or `1-24` for min=1 max=24)".to_string()),
        n => n.parse::<u32>().map_err(|_| format!("`{n}` is not a replica count (want `4`, or `1-24` for min=1 max=24)")),
    };
    let (min, max) = (count(min)?, count(max)?);
    // A scale-to-zero workload records `0-4`, but adopt reads its replicas from its ScaledObject: without one,
    // min 0 would not compile (E0220).
    if min < 1 {
        return Err("a workload has at least 1 replica".into());
    }
    if min > max {
        return Err(format!("min {min} is above max {max}"));
    }
    Ok((min, max))
}

/// The inverse of [`WorkloadPlan::selector_record`]: the labels in order, or why the record is not a selector
/// gpuplan could have written (keys and values are trimmed; each must be a Kubernetes label key and value, each
/// key given once, at least one label).
pub fn parse_selector_record(record: &str) -> Result<Vec<(String, String)>, String> {
    if record.trim().is_empty() {
        return Err("it is empty".into());
    }
    let mut labels: Vec<(String, String)> = Vec::new();
    for kv in record.split(',') {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(if kv.trim().is_empty() { "an empty label (a stray comma?)".into() } else { format!("`{}` is not key=value", kv.trim()) });
        };
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() {
            return Err(format!("`{}` has no key", kv.trim()));
        }
        check_label_key(k).map_err(|e| format!("label key `{k}`: {e}"))?;
        check_label_value(v).map_err(|e| format!("label value `{v}` of `{k}`: {e}"))?;
        if labels.iter().any(|(seen, _)| seen == k) {
            return Err(format!("label key `{k}` is given twice"));
        }
        labels.push((k.to_string(), v.to_string()));
    }
    Ok(labels)
}

/// The label rules live with the other naming rules (see `crate::names`).
pub use crate::names::{check_label_key, check_label_value};

impl HpaPlan {
    pub fn behavior(&self) -> Value {
        match self.style {
            ScalingStyle::Inference => json!({
                "scaleUp": {
                    "stabilizationWindowSeconds": 0,
                    "selectPolicy": "Max",
                    "policies": [
                        { "type": "Percent", "value": 100, "periodSeconds": 60 },
                        { "type": "Pods", "value": 4, "periodSeconds": 60 },
                    ],
                },
                "scaleDown": {
                    "stabilizationWindowSeconds": 600,
                    "selectPolicy": "Min",
                    "policies": [
                        { "type": "Pods", "value": 1, "periodSeconds": 120 },
                        { "type": "Percent", "value": 10, "periodSeconds": 120 },
                    ],
                },
            }),
            ScalingStyle::Training => json!({
                "scaleUp": {
                    "stabilizationWindowSeconds": 300,
                    "selectPolicy": "Max",
                    "policies": [{ "type": "Pods", "value": 1, "periodSeconds": 300 }],
                },
                "scaleDown": {
                    "stabilizationWindowSeconds": 3600,
                    "selectPolicy": "Min",
                    "policies": [{ "type": "Pods", "value": 1, "periodSeconds": 600 }],
                },
            }),
        }
    }
}

/// The PDB field and value: ("minAvailable", 1) or ("maxUnavailable", "25%").
pub fn pdb_field(b: PdbBudget) -> (&'static str, Value) {
    match b {
        PdbBudget::MinAvailable(v) => ("minAvailable", v.to_json()),
        PdbBudget::MaxUnavailable(v) => ("maxUnavailable", v.to_json()),
    }
}
