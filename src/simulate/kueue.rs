//! Kueue input: `kueue.x-k8s.io/v1beta2` ResourceFlavor, ClusterQueue, LocalQueue and WorkloadPriorityClass, and
//! `scheduling.k8s.io/v1` PriorityClass (what a pod's `priorityClassName` means to Kueue) and `v1` Namespace (labels
//! for namespaceSelectors), as the CRDs in
//! `tests/fixtures/shared/schemas/kueue` (kubernetes-sigs/kueue v0.19.2) define them. Other versions of Kueue's kinds are an error
//! (a v1beta1 ClusterQueue read as nothing would leave every queued pod "LocalQueue not found"); a Cohort object is an
//! error too: cohorts here are flat, the implicit cohort a `cohortName` creates, with no quota of its own.
//! `admission` decides with what is read here.

use std::collections::BTreeMap;

use serde_json::Value;

use super::requirements::{Taint, Toleration};
use super::yaml::{err, field, integer, list, map, milli, string, Doc, InputError};

/// The Kueue objects of the manifests.
#[derive(Debug, Clone, Default)]
pub struct Kueue {
    pub flavors: BTreeMap<String, Flavor>,
    pub cluster_queues: Vec<ClusterQueue>,
    /// `namespace/name` → ClusterQueue name.
    pub local_queues: BTreeMap<String, String>,
    /// WorkloadPriorityClass name → value.
    pub workload_priority_classes: BTreeMap<String, i64>,
    /// PriorityClass name → (value, globalDefault).
    pub priority_classes: BTreeMap<String, (i64, bool)>,
    /// `v1` Namespace labels, for namespaceSelectors; a namespace not given has only the label the API server puts on
    /// every namespace ([`namespace_labels`](Kueue::namespace_labels)).
    pub namespaces: BTreeMap<String, BTreeMap<String, String>>,
    /// `Kind/name` (`Kind/namespace/name` for a LocalQueue) → where it was read: the API server holds one object per
    /// name, so a second one (a hand-written ClusterQueue beside gpuplan's) is an error, not a silent replacement.
    defined: BTreeMap<String, String>,
}

impl Kueue {
    pub fn is_empty(&self) -> bool {
        self.flavors.is_empty() && self.cluster_queues.is_empty() && self.local_queues.is_empty()
    }

    /// A namespace's labels, with `kubernetes.io/metadata.name` (set by the API server on every namespace).
    pub fn namespace_labels(&self, namespace: &str) -> BTreeMap<String, String> {
        let mut labels = self.namespaces.get(namespace).cloned().unwrap_or_default();
        labels.insert("kubernetes.io/metadata.name".into(), namespace.into());
        labels
    }
}

/// A ResourceFlavor: the labels Kueue injects as nodeSelector, the taints it checks the pods' tolerations against,
/// and the tolerations it injects (pkg/podset/podset.go `FromAssignment`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Flavor {
    pub node_labels: BTreeMap<String, String>,
    pub node_taints: Vec<Taint>,
    pub tolerations: Vec<Toleration>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClusterQueue {
    pub name: String,
    pub cohort: Option<String>,
    /// `queueingStrategy: StrictFIFO` (default BestEffortFIFO).
    pub strict_fifo: bool,
    /// `flavorFungibility.whenCanBorrow: TryNextFlavor` (default MayStopSearch).
    pub try_next_when_borrowing: bool,
    /// `preemption.reclaimWithinCohort: Any` (scheduler.go `CanAlwaysReclaim`): a head waiting for preemption then
    /// holds back no quota.
    pub can_always_reclaim: bool,
    /// `preemption.borrowWithinCohort.policy` other than Never: a head may preempt while borrowing, so one that does
    /// not fit beyond its nominal quota still waits for preemption (flavorassigner.go `canPreemptWhileBorrowing`).
    pub preempt_while_borrowing: bool,
    /// `stopPolicy` other than None: the ClusterQueue admits nothing.
    pub stopped: bool,
    /// `namespaceSelector`: `None` (absent or null) selects no namespace, `{}` every one (the v1beta2 API's doc:
    /// "Defaults to null which is a nothing selector").
    pub namespace_selector: Option<super::pods::Selector>,
    pub groups: Vec<ResourceGroup>,
    pub location: String,
}

/// A resourceGroup: its covered resources, and per flavor (in the order Kueue tries them) each resource's quota.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceGroup {
    pub covered: Vec<String>,
    pub flavors: Vec<(String, BTreeMap<String, Quota>)>,
}

/// A flavor's quota for one resource, in milli-units like every simulated quantity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Quota {
    pub nominal: i128,
    pub borrowing_limit: Option<i128>,
    pub lending_limit: Option<i128>,
}

const GROUP: &str = "kueue.x-k8s.io/";
const KINDS: &[&str] = &["ResourceFlavor", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass", "Cohort"];

/// Adds a document to `k` when it is one of the kinds read here.
pub fn read(k: &mut Kueue, doc: &Doc) -> Result<(), InputError> {
    let (version, kind) = (doc.api_version(), doc.kind());
    if version == "v1" && kind == "Namespace" {
        let mut labels = BTreeMap::new();
        for (k, v) in map(doc, field(&doc.value, &["metadata", "labels"]), "metadata.labels")?.into_iter().flatten() {
            labels.insert(k.clone(), string(doc, Some(v), &format!("metadata.labels.{k}"))?.unwrap_or("").to_string());
        }
        k.namespaces.insert(name(doc)?, labels);
        return Ok(());
    }
    if version == "scheduling.k8s.io/v1" && kind == "PriorityClass" {
        let value = integer(doc, doc.value.get("value"), "value", i64::from(i32::MIN)..=1_000_000_000)?.unwrap_or(0);
        let global = doc.value.get("globalDefault").and_then(Value::as_bool).unwrap_or(false);
        k.priority_classes.insert(name(doc)?, (value, global));
        return Ok(());
    }
    if !version.starts_with(GROUP) || !KINDS.contains(&kind) {
        return Ok(());
    }
    if version != "kueue.x-k8s.io/v1beta2" {
        return Err(err(doc.at("apiVersion:"), format!("{version} {kind}: simulate reads Kueue's v1beta2 API (the CRDs of Kueue v0.19): convert it to kueue.x-k8s.io/v1beta2")));
    }
    let namespace = string(doc, field(&doc.value, &["metadata", "namespace"]), "metadata.namespace")?.unwrap_or("default");
    let id = if kind == "LocalQueue" { format!("{kind}/{namespace}/{}", name(doc)?) } else { format!("{kind}/{}", name(doc)?) };
    if let Some(first) = k.defined.insert(id.clone(), doc.at("kind:")) {
        return Err(err(doc.at("name:"), format!("{id} is given twice (first at {first}): the cluster holds one object per name; keep one")));
    }
    match kind {
        "ResourceFlavor" => {
            k.flavors.insert(name(doc)?, flavor(doc)?);
        }
        "ClusterQueue" => k.cluster_queues.push(cluster_queue(doc)?),
        "LocalQueue" => {
            let cq = string(doc, field(&doc.value, &["spec", "clusterQueue"]), "spec.clusterQueue")?.ok_or_else(|| err(doc.at("kind:"), "LocalQueue without spec.clusterQueue: name the ClusterQueue it feeds"))?;
            k.local_queues.insert(format!("{namespace}/{}", name(doc)?), cq.to_string());
        }
        "WorkloadPriorityClass" => {
            let value = integer(doc, doc.value.get("value"), "value", i64::from(i32::MIN)..=i64::from(i32::MAX))?;
            let value = value.ok_or_else(|| err(doc.at("kind:"), "WorkloadPriorityClass without value: give it an integer value"))?;
            k.workload_priority_classes.insert(name(doc)?, value);
        }
        _ => return Err(err(doc.at("kind:"), "Cohort objects (cohort quotas, nested cohorts) are not simulated: remove it; ClusterQueues sharing a cohortName still form a flat cohort")),
    }
    Ok(())
}

fn name(doc: &Doc) -> Result<String, InputError> {
    let meta = map(doc, doc.value.get("metadata"), "metadata")?;
    let name = string(doc, meta.and_then(|m| m.get("name")), "metadata.name")?;
    name.map(str::to_string).ok_or_else(|| err(doc.at("kind:"), format!("{} without metadata.name", doc.kind())))
}

fn flavor(doc: &Doc) -> Result<Flavor, InputError> {
    let spec = map(doc, doc.value.get("spec"), "spec")?;
    let get = |k: &str| spec.and_then(|s| s.get(k));
    let mut node_labels = BTreeMap::new();
    for (k, v) in map(doc, get("nodeLabels"), "spec.nodeLabels")?.into_iter().flatten() {
        node_labels.insert(k.clone(), string(doc, Some(v), &format!("spec.nodeLabels.{k}"))?.unwrap_or("").to_string());
    }
    let mut node_taints = Vec::new();
    for t in list(doc, get("nodeTaints"), "spec.nodeTaints")? {
        let s = |k: &str| text(doc, t, "spec.nodeTaints[]", k);
        node_taints.push(Taint { key: s("key")?, value: s("value")?, effect: s("effect")? });
    }
    let mut tolerations = Vec::new();
    for t in list(doc, get("tolerations"), "spec.tolerations")? {
        let s = |k: &str| text(doc, t, "spec.tolerations[]", k);
        let operator = s("operator")?;
        tolerations.push(Toleration { key: s("key")?, operator: if operator.is_empty() { "Equal".into() } else { operator }, value: s("value")?, effect: s("effect")? });
    }
    Ok(Flavor { node_labels, node_taints, tolerations })
}

/// A string field of a map item (`prefix.key`), "" when absent.
fn text(doc: &Doc, item: &Value, prefix: &str, key: &str) -> Result<String, InputError> {
    map(doc, Some(item), prefix)?;
    Ok(string(doc, item.get(key), &format!("{prefix}.{key}"))?.unwrap_or("").to_string())
}

fn cluster_queue(doc: &Doc) -> Result<ClusterQueue, InputError> {
    let spec = map(doc, doc.value.get("spec"), "spec")?;
    let get = |k: &str| spec.and_then(|s| s.get(k));
    let strategy = string(doc, get("queueingStrategy"), "spec.queueingStrategy")?.unwrap_or("BestEffortFIFO");
    if !["BestEffortFIFO", "StrictFIFO"].contains(&strategy) {
        return Err(err(doc.at("queueingStrategy:"), format!("spec.queueingStrategy must be BestEffortFIFO or StrictFIFO, not {strategy:?}")));
    }
    let fungibility = map(doc, get("flavorFungibility"), "spec.flavorFungibility")?;
    let when_borrow = string(doc, fungibility.and_then(|f| f.get("whenCanBorrow")), "spec.flavorFungibility.whenCanBorrow")?.unwrap_or("MayStopSearch");
    if !["MayStopSearch", "TryNextFlavor"].contains(&when_borrow) {
        return Err(err(doc.at("whenCanBorrow:"), format!("spec.flavorFungibility.whenCanBorrow must be MayStopSearch or TryNextFlavor, not {when_borrow:?}")));
    }
    let groups = list(doc, get("resourceGroups"), "spec.resourceGroups")?.iter().map(|g| resource_group(doc, g)).collect::<Result<Vec<_>, _>>()?;
    Ok(ClusterQueue {
        name: name(doc)?,
        cohort: string(doc, get("cohortName"), "spec.cohortName")?.filter(|c| !c.is_empty()).map(str::to_string),
        strict_fifo: strategy == "StrictFIFO",
        try_next_when_borrowing: when_borrow == "TryNextFlavor",
        stopped: string(doc, get("stopPolicy"), "spec.stopPolicy")?.is_some_and(|p| p != "None"),
        can_always_reclaim: string(doc, field(&doc.value, &["spec", "preemption", "reclaimWithinCohort"]), "spec.preemption.reclaimWithinCohort")? == Some("Any"),
        preempt_while_borrowing: string(doc, field(&doc.value, &["spec", "preemption", "borrowWithinCohort", "policy"]), "spec.preemption.borrowWithinCohort.policy")?.is_some_and(|p| p != "Never"),
        namespace_selector: super::pods::selector(doc, get("namespaceSelector"), "spec.namespaceSelector")?,
        groups,
        location: doc.at(""),
    })
}

/// A resourceGroup; as the CRD's validation requires, every flavor lists the covered resources, in their order.
fn resource_group(doc: &Doc, g: &Value) -> Result<ResourceGroup, InputError> {
    map(doc, Some(g), "spec.resourceGroups[]")?;
    let covered: Vec<String> = list(doc, g.get("coveredResources"), "spec.resourceGroups[].coveredResources")?
        .iter()
        .map(|r| string(doc, Some(r), "spec.resourceGroups[].coveredResources[]").map(|r| r.unwrap_or("").to_string()))
        .collect::<Result<_, _>>()?;
    let mut flavors = Vec::new();
    for f in list(doc, g.get("flavors"), "spec.resourceGroups[].flavors")? {
        let flavor_name = text(doc, f, "spec.resourceGroups[].flavors[]", "name")?;
        let mut quotas = BTreeMap::new();
        for r in list(doc, f.get("resources"), "spec.resourceGroups[].flavors[].resources")? {
            let resource = text(doc, r, "spec.resourceGroups[].flavors[].resources[]", "name")?;
            quotas.insert(resource, quota(doc, r)?);
        }
        let names: Vec<&String> = quotas.keys().collect();
        let mut expected: Vec<&String> = covered.iter().collect();
        expected.sort();
        if names != expected {
            let message = format!("flavor {flavor_name:?} gives quotas for {names:?}, but its resourceGroup covers {covered:?}: every flavor must list exactly the coveredResources");
            return Err(err(doc.at(&format!("name: {flavor_name}")), message));
        }
        flavors.push((flavor_name, quotas));
    }
    Ok(ResourceGroup { covered, flavors })
}

fn quota(doc: &Doc, r: &Value) -> Result<Quota, InputError> {
    let amount = |k: &str| -> Result<Option<i128>, InputError> {
        let path = format!("spec.resourceGroups[].flavors[].resources[].{k}");
        match r.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => {
                let text = v.as_str().map(str::to_string).or_else(|| v.as_u64().map(|n| n.to_string()));
                text.as_deref().and_then(milli).filter(|q| *q >= 0).map(Some).ok_or_else(|| super::yaml::wrong_type(doc, &path, "a non-negative Kubernetes quantity", v))
            }
        }
    };
    let nominal = amount("nominalQuota")?.ok_or_else(|| err(doc.at("resources:"), "a flavor's resource without nominalQuota: give every covered resource a nominalQuota"))?;
    Ok(Quota { nominal, borrowing_limit: amount("borrowingLimit")?, lending_limit: amount("lendingLimit")? })
}
