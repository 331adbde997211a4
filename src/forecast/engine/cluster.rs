//! What a replay reads of one compiled cluster, once: its NodePools prepared for the simulator's scheduler (the
//! same `simulate::prepare` `compile` checks placement with), each NodePool's disruption [`Policy`], the
//! PodDisruptionBudgets, the Kueue objects, and the trace's pods as the scheduler's `Pod`s.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use super::policy::{self, Policy};
use crate::catalog::Catalog;
use crate::compile::Compilation;
use crate::render::Manifest;
use crate::simulate::instances::TypeLabels;
use crate::simulate::kueue::Kueue;
use crate::simulate::pods::Pod;
use crate::simulate::yaml::Doc;
use crate::simulate::{prepare, Prepared};

/// The annotation that keeps Karpenter from disrupting a pod's node voluntarily (`karpenter.sh/do-not-disrupt`).
pub const DO_NOT_DISRUPT: &str = "karpenter.sh/do-not-disrupt";

/// A pod as the replay creates copies of it: the scheduler's view plus what disruption reads.
#[derive(Debug, Clone)]
pub struct Spec {
    pub pod: Pod,
    pub namespace: String,
    pub labels: BTreeMap<String, String>,
    /// `karpenter.sh/do-not-disrupt: "true"`.
    pub do_not_disrupt: bool,
}

/// A PodDisruptionBudget (policy/v1): its namespace, `matchLabels`, and `minAvailable` or `maxUnavailable`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pdb {
    pub namespace: String,
    pub match_labels: BTreeMap<String, String>,
    pub min_available: Option<IntOrPercent>,
    pub max_unavailable: Option<IntOrPercent>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IntOrPercent {
    Int(u64),
    Percent(u64),
}

impl IntOrPercent {
    /// `intstr.GetScaledValueFromIntOrPercent` over `total`, rounded up (the disruption controller's rounding).
    pub fn of(self, total: u64) -> u64 {
        match self {
            IntOrPercent::Int(n) => n,
            IntOrPercent::Percent(p) => (total * p).div_ceil(100),
        }
    }
}

impl Pdb {
    pub fn selects(&self, spec: &Spec) -> bool {
        spec.namespace == self.namespace && !self.match_labels.is_empty() && self.match_labels.iter().all(|(k, v)| spec.labels.get(k) == Some(v))
    }

    /// kubernetes `pkg/controller/disruption/disruption.go` `updatePdbStatus`: how many of the selected pods may go
    /// now, given how many exist (`expected`) and how many run (`healthy`).
    pub fn disruptions_allowed(&self, expected: u64, healthy: u64) -> u64 {
        let desired_healthy = match (self.min_available, self.max_unavailable) {
            (Some(min), _) => min.of(expected),
            (None, Some(max)) => expected.saturating_sub(max.of(expected)),
            (None, None) => 0,
        };
        healthy.saturating_sub(desired_healthy)
    }
}

/// One cluster, read once per replay.
pub struct Cluster<'c> {
    pub prepared: Prepared<'c>,
    /// Per prepared template (weight order), its NodePool's policy.
    pub policies: Vec<Policy>,
    pub pdbs: Vec<Pdb>,
    pub kueue: Kueue,
}

impl<'c> Cluster<'c> {
    /// The cluster `name` of a compilation; None when the compilation has no such cluster.
    pub fn read(c: &'c Compilation, name: &str, horizon: u64, start_unix: i64) -> Option<Cluster<'c>> {
        let plan = c.plan.clusters.iter().find(|p| p.name == name)?;
        let (catalog, labels) = c.simulation_catalog(&plan.region)?;
        Some(Cluster::from_manifests(catalog, labels, &c.manifests_of(name), &plan.node_daemons, horizon, start_unix))
    }

    /// A cluster of these objects (NodePools, NodeClasses, Kueue objects, PodDisruptionBudgets) on a catalog, with
    /// the EKS node DaemonSets `node_daemons` (as `check::cluster_manifests` counts them).
    pub fn from_manifests(catalog: &'c Catalog, labels: &TypeLabels, objects: &[Manifest], node_daemons: &[String], horizon: u64, start_unix: i64) -> Cluster<'c> {
        let m = crate::check::cluster_manifests(objects, node_daemons);
        let prepared = prepare(catalog, labels, &m, &m.node_pools);
        let by_name: BTreeMap<&str, &Value> =
            objects.iter().filter(|o| o.kind() == "NodePool").filter_map(|o| Some((o.object.pointer("/metadata/name")?.as_str()?, &o.object))).collect();
        let policies = prepared.templates().iter().map(|t| by_name.get(t.pool.name.as_str()).map_or_else(Policy::default, |o| policy::read(o, horizon, start_unix))).collect();
        let pdbs = objects.iter().filter(|o| o.kind() == "PodDisruptionBudget").filter_map(|o| pdb(&o.object)).collect();
        Cluster { prepared, policies, pdbs, kueue: m.kueue }
    }
}

/// Objects as the manifests `check::cluster_manifests` reads (a path by kind and name, for its messages).
pub fn manifests(objects: &[Value]) -> Vec<Manifest> {
    objects
        .iter()
        .map(|o| {
            let name = o.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("unnamed");
            let kind = o.get("kind").and_then(Value::as_str).unwrap_or("Object").to_lowercase();
            Manifest { path: PathBuf::from(format!("{kind}-{name}.yaml")), source: "forecast".into(), object: o.clone() }
        })
        .collect()
}

fn pdb(o: &Value) -> Option<Pdb> {
    let int_or_percent = |v: &Value| match v {
        Value::String(s) if s.ends_with('%') => s.trim_end_matches('%').parse().ok().map(IntOrPercent::Percent),
        Value::String(s) => s.parse().ok().map(IntOrPercent::Int),
        v => v.as_u64().map(IntOrPercent::Int),
    };
    Some(Pdb {
        namespace: o.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("default").to_string(),
        match_labels: string_map(o.pointer("/spec/selector/matchLabels")),
        min_available: o.pointer("/spec/minAvailable").and_then(int_or_percent),
        max_unavailable: o.pointer("/spec/maxUnavailable").and_then(int_or_percent),
    })
}

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object).map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect()).unwrap_or_default()
}

/// The specs of an object (a Pod, or a Job submitted to a LocalQueue) as `simulate --pods` reads it; None when the
/// object is not one the simulator reads (the trace is then wrong: its pods never exist).
pub fn specs(object: &Value) -> Option<Vec<Spec>> {
    let doc = Doc { path: PathBuf::from("trace"), line: 1, text: String::new(), value: Cow::Borrowed(object) };
    let pods = crate::simulate::pods::pods(std::slice::from_ref(&doc)).ok()?;
    let meta = if object.get("kind").and_then(Value::as_str) == Some("Pod") { object.get("metadata") } else { object.pointer("/spec/template/metadata") };
    let labels = string_map(meta.and_then(|m| m.get("labels")));
    let annotations = string_map(meta.and_then(|m| m.get("annotations")));
    let namespace = object.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("default").to_string();
    let do_not_disrupt = annotations.get(DO_NOT_DISRUPT).is_some_and(|v| v == "true");
    Some(pods.into_iter().map(|pod| Spec { pod, namespace: namespace.clone(), labels: labels.clone(), do_not_disrupt }).collect())
}

/// A trace's Job as the Job object Kueue reads: `pods` pods of `pod`'s spec, labelled with its LocalQueue.
pub fn job_object(name: &str, queue: &str, pods: u32, pod: &Value) -> Value {
    let (namespace, queue_name) = queue.split_once('/').unwrap_or(("default", queue));
    let mut labels = pod.pointer("/metadata/labels").cloned().unwrap_or_else(|| Value::Object(Default::default()));
    if let Some(l) = labels.as_object_mut() {
        l.insert(crate::simulate::pods::QUEUE_LABEL.to_string(), Value::String(queue_name.to_string()));
    }
    serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": labels.clone()},
        "spec": {"parallelism": pods, "completions": pods, "template": {"metadata": {"labels": labels, "annotations": pod.pointer("/metadata/annotations")}, "spec": pod.get("spec")}},
    })
}
