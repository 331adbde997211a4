//! PodDisruptionBudget and HorizontalPodAutoscaler (or KEDA ScaledObject, see `keda.rs`) for one `workload`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::ops::{IntOrPercent, PdbBudget};
use crate::solve::PodPlacement;

#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadPlan {
    pub name: String,
    pub namespace: String,
    pub profile: String,
    pub source: String,
    /// The pool as written and the NodePools it stands for.
    pub pool: String,
    pub nodepools: Vec<String>,
    /// Where the pods must be placed to land on that pool only.
    pub placement: Placement,
    /// The GPU utilization metric of the pool (percent, or a 0–1 ratio on MIG pools).
    pub metric: String,
    /// scaleTargetRef kind.
    pub kind: String,
    pub selector: BTreeMap<String, String>,
    pub pdb: Option<PdbBudget>,
    /// None when KEDA scales the workload: KEDA creates and owns the HPA of its ScaledObject (see `keda.rs`).
    pub hpa: Option<HpaPlan>,
    /// The KEDA ScaledObject, for a workload that scales to zero or on a trigger (never together with `hpa`).
    pub keda: Option<crate::ops::keda::KedaPlan>,
    pub replicas_min: u32,
    pub replicas_max: u32,
    pub gpus_per_replica: u32,
    /// CPU and memory per replica as the profile wrote them (`requests cpu=… memory=…`), Kubernetes quantities.
    pub requests: BTreeMap<String, String>,
}

/// How fast the HPA may move, by the kind of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalingStyle {
    /// Serving: scale up at once (no stabilization, +100% or +4 pods a minute, whichever is more) and down
    /// slowly (10 minutes of stabilization, then one pod or 10% every 2 minutes, whichever is less): a GPU
    /// pod takes minutes to come back (node launch, image pull, model load).
    Inference,
    /// Training/batch, only when asked: both directions slow, so that a short lull never kills a worker.
    Training,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HpaPlan {
    pub min: u32,
    pub max: u32,
    pub metric: String,
    /// The target as the profile wrote it (percent)…
    pub target_utilization: u32,
    /// …and as the HPA's `averageValue`, in the metric's unit (`"70"`, or `"700m"` for a ratio).
    pub target_quantity: String,
    pub style: ScalingStyle,
}

/// Where a workload's pods must go to land on its pool and nowhere else: the pool label (`gpuplan.dev/pool:
/// <pool>` on every tier), a toleration for every taint of the pool's NodePools (the pool taint on pools whose
/// preset is not `general`, the accelerator's, the profile's own such as `workload=training`) and, on EFA pools,
/// the EFA interfaces to request: the same list `explain` prints under "pods need".
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// The profile's pool (a tier name resolves to its pool).
    pub pool: String,
    pub pod: PodPlacement,
}

impl Placement {
    /// One line for annotations and alert texts.
    pub fn describe(&self) -> String {
        self.pod.describe()
    }
}

impl WorkloadPlan {
    /// A PromQL regex for the names of the workload's pods: a Deployment's are `<name>-<pod-template-hash>-<5
    /// chars>` (ReplicaSet name + suffix), a StatefulSet's `<name>-<ordinal>`. Narrow enough that a workload
    /// named `<name>-x` does not match.
    pub fn pod_regex(&self) -> String {
        let name = self.name.replace('.', "\\\\.");
        match self.kind.as_str() {
            "StatefulSet" => format!("{name}-[0-9]+"),
            _ => format!("{name}-[a-z0-9]{{1,10}}-[a-z0-9]{{5}}"),
        }
    }

    /// The PromQL selector of the workload's pods.
    pub fn pod_selector(&self) -> String {
        format!("namespace=\"{}\",pod=~\"{}\"", self.namespace, self.pod_regex())
    }

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

/// Default when the profile gives no `disruption-budget`: one pod at a time, for workloads that can have
/// more than one replica.
///
/// Also the one form a workload that scales to zero gets (E0222 refuses min-available there). The disruption
/// controller counts the expected pods from the target's scale (`spec.replicas`): at 0 replicas there is nothing to
/// evict, and at 1 replica `maxUnavailable: 1` still allows the eviction, whereas `minAvailable: 1` (or any
/// percentage, rounded up) allows none. Kubernetes' "Specifying a Disruption Budget for your Application"
/// (kubernetes.io/docs/tasks/run-application/configure-pdb/): "If you set minAvailable to 100% or the number of
/// replicas … you are requiring zero voluntary evictions. When you set zero voluntary evictions for a workload object
/// such as ReplicaSet, then you cannot successfully drain a Node running one of those Pods." A scale-to-zero workload
/// sits at one replica whenever its trigger wakes it from zero, so min-available would block Karpenter's drains then.
pub fn default_pdb(replicas_max: u32) -> Option<PdbBudget> {
    (replicas_max >= 2).then_some(PdbBudget::MaxUnavailable(IntOrPercent::Int(1)))
}
