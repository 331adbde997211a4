//! KEDA: a `workload` that scales to zero (`scale-to-zero`) or on a demand trigger (`trigger …`) gets a KEDA
//! `keda.sh/v1alpha1` ScaledObject *instead of* its HorizontalPodAutoscaler.
//!
//! KEDA creates and owns an HPA for every ScaledObject (`keda-hpa-<name>`, or `advanced.horizontalPodAutoscalerConfig
//! .name`: kedacore/keda v2.20.2 `scaledobject_webhook.go` `getHpaName`) and feeds it through its own metrics server
//! ("Behind the scenes, KEDA acts to monitor the event source and feed that data to Kubernetes and the HPA",
//! keda.sh/docs, Concepts, "Scaling Deployments, StatefulSets & Custom Resources"); its admission webhook refuses a
//! ScaledObject whose target another HPA already scales ("the workload '%s' of type '%s' is already managed by the hpa
//! '%s'": `apis/keda/v1alpha1/scaledobject_webhook.go` `verifyHpas`). So gpuplan writes one or the other for a target,
//! never both; lint GP024 reports a cluster where both exist.
//!
//! The triggers each workload gets are planned in `solve::ops::keda`.
//!
//! A workload at zero replicas has no pod, hence no GPU utilization series: the prometheus scaler reads an empty
//! result as 0 (`ignoreNullValues` defaults to true: `pkg/scalers/prometheus_scaler.go`) and stays inactive, so a
//! scale-to-zero workload needs a trigger that measures demand without a pod (E0223).

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::render::Manifest;
use crate::validate::Violation;

pub const API_VERSION: &str = "keda.sh/v1alpha1";
pub const KIND: &str = "ScaledObject";
/// The HPA KEDA creates for a ScaledObject without `advanced.horizontalPodAutoscalerConfig.name`
/// (`scaledobject_webhook.go` `getHpaName`).
pub const HPA_NAME_PREFIX: &str = "keda-hpa-";
/// Kubernetes label values (KEDA labels its HPA with the ScaledObject's name): `maxK8sLabelValueLength`.
const MAX_LABEL_VALUE: usize = 63;

use crate::solve::ops::keda::KedaTrigger;

impl KedaTrigger {
    pub fn to_json(&self) -> Value {
        let mut metadata = json!({ "serverAddress": self.server_address, "query": self.query, "threshold": self.threshold });
        if let Some(a) = &self.activation {
            metadata["activationThreshold"] = json!(a);
        }
        json!({ "type": "prometheus", "name": self.name, "metricType": "AverageValue", "metadata": metadata })
    }
}

/// The ClusterQueue of a query [`kueue_query`] wrote, if it is one.
pub fn kueue_queue_of(query: &str) -> Option<&str> {
    let rest = query.strip_prefix("sum(kueue_pending_workloads{cluster_queue=\"")?;
    rest.strip_suffix("\",status=\"active\"})")
}

/// The metric of a query [`gpu_query`] wrote, if it is one.
pub fn gpu_metric_of(query: &str) -> Option<&str> {
    let rest = query.strip_prefix("sum(avg by (namespace, pod) (")?;
    rest.split_once('{').map(|(m, _)| m)
}


/// KEDA's admission webhook rules that concern one ScaledObject alone (kedacore/keda v2.20.2
/// `apis/keda/v1alpha1/scaledobject_webhook.go` `validateWorkload`): `verifyName` (the ScaledObject's and its HPA's
/// names are label values, ≤ 63 characters), `verifyReplicaCount` (`scaledobject_types.go`
/// `CheckReplicaCountBoundsAreValid`: min ≤ max, idleReplicaCount < min; max defaults to 100) and `verifyTriggers`
/// (`scaletriggers_types.go` `ValidateTriggers`: at least one trigger, names unique).
pub fn check_scaled_object(object: &Value) -> Vec<Violation> {
    let v = |pointer: &str, message: String| Violation { pointer: pointer.into(), message };
    let mut out = Vec::new();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    if name.len() > MAX_LABEL_VALUE {
        out.push(v("/metadata/name", format!("ScaledObject name is {} characters long; KEDA's webhook allows at most {MAX_LABEL_VALUE} (it is a label value)", name.len())));
    }
    let spec = &object["spec"];
    let hpa = spec["advanced"]["horizontalPodAutoscalerConfig"]["name"].as_str().filter(|n| !n.is_empty()).map_or_else(|| format!("{HPA_NAME_PREFIX}{name}"), str::to_string);
    if hpa.len() > MAX_LABEL_VALUE {
        out.push(v("/metadata/name", format!("the HPA KEDA derives, `{hpa}`, is {} characters long; KEDA's webhook allows at most {MAX_LABEL_VALUE}", hpa.len())));
    }
    let min = spec["minReplicaCount"].as_i64().unwrap_or(0);
    let max = spec["maxReplicaCount"].as_i64().unwrap_or(100);
    if min > max {
        out.push(v("/spec/minReplicaCount", format!("MinReplicaCount={min} must be less than MaxReplicaCount={max} (KEDA's webhook)")));
    }
    if let Some(idle) = spec["idleReplicaCount"].as_i64().filter(|i| *i >= min) {
        out.push(v("/spec/idleReplicaCount", format!("IdleReplicaCount={idle} must be less than MinReplicaCount={min} (KEDA's webhook)")));
    }
    let triggers = spec["triggers"].as_array().map(Vec::as_slice).unwrap_or_default();
    if triggers.is_empty() {
        out.push(v("/spec/triggers", "no triggers defined in the ScaledObject (KEDA's webhook)".into()));
    }
    let mut names = BTreeSet::new();
    for (i, t) in triggers.iter().enumerate() {
        if let Some(n) = t["name"].as_str().filter(|n| !n.is_empty())
            && !names.insert(n) {
                out.push(v(&format!("/spec/triggers/{i}/name"), format!("triggerName {n:?} is defined multiple times in the ScaledObject, but it must be unique (KEDA's webhook)")));
            }
    }
    out
}

/// The workload a ScaledObject or HPA scales: (namespace, API group of scaleTargetRef, kind, name). KEDA compares the
/// group and kind its REST mapper resolves, and the name (`verifyHpas`, `verifyScaledObjects`); `apps/v1` and
/// `apps/v1beta1` are one target.
pub fn scale_target(object: &Value) -> Option<(String, String, String, String)> {
    let target = &object["spec"]["scaleTargetRef"];
    let group = target["apiVersion"].as_str().unwrap_or("apps/v1").rsplit_once('/').map_or("", |(g, _)| g).to_string();
    let namespace = object["metadata"]["namespace"].as_str().filter(|n| !n.is_empty()).unwrap_or("default").to_string();
    Some((namespace, group, target["kind"].as_str()?.to_string(), target["name"].as_str()?.to_string()))
}

/// Two owners of one scale target among these objects (one cluster's): an HPA and a ScaledObject (`verifyHpas`:
/// "the workload … is already managed by the hpa …"; the HPA KEDA creates is owned by its ScaledObject and never
/// among gpuplan's objects), or two ScaledObjects (`verifyScaledObjects`). Each clash once, as
/// (the ScaledObject, the other object).
pub fn clashes(manifests: &[Manifest]) -> Vec<(&Manifest, &Manifest)> {
    let scalers: Vec<(&Manifest, _)> = manifests.iter().filter(|m| matches!(m.kind(), KIND | "HorizontalPodAutoscaler")).filter_map(|m| Some((m, scale_target(&m.object)?))).collect();
    let mut out = Vec::new();
    for (i, (a, target)) in scalers.iter().enumerate() {
        let same_object = |b: &Manifest| b.kind() == a.kind() && b.object["metadata"]["name"] == a.object["metadata"]["name"];
        for (b, _) in scalers[i + 1..].iter().filter(|(b, t)| t == target && !same_object(b)) {
            match (a.kind() == KIND, b.kind() == KIND) {
                (true, _) => out.push((*a, *b)),
                (false, true) => out.push((*b, *a)),
                (false, false) => {}
            }
        }
    }
    out
}

/// KEDA's rules across one cluster's objects, for `ops::check` (a compile error): see [`clashes`].
pub fn check_cluster(manifests: &[Manifest]) -> Vec<(std::path::PathBuf, Violation)> {
    clashes(manifests)
        .into_iter()
        .map(|(so, other)| {
            let (ns, _, kind, name) = scale_target(&so.object).unwrap_or_default();
            let message = format!(
                "{kind} {ns}/{name} is also scaled by {} {} ({}): KEDA's webhook refuses a ScaledObject on a target another HPA or ScaledObject scales",
                other.kind(),
                other.object["metadata"]["name"].as_str().unwrap_or_default(),
                other.path.display()
            );
            (so.path.clone(), Violation { pointer: "/spec/scaleTargetRef".into(), message })
        })
        .collect()
}
