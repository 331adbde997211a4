//! gpuplan's own ClusterQueues → `queue` blocks. The ResourceFlavors and LocalQueues are compiled again from
//! them (flavors from the pool's NodePools, the LocalQueue from the namespace), so they are listed as skipped.
//!
//! What a block says comes from the spec (name, namespace from `namespaceSelector`, `cohortName`, preemption)
//! and from gpuplan's annotations where the spec has lost the intent: `gpuplan.dev/pool` (a pool or one tier),
//! `gpuplan.dev/quota` (a share stays a share) and `gpuplan.dev/gang` (waitForPodsReady is no ClusterQueue field).
//! A hand-edited ClusterQueue's quota is read from its spec instead: the annotation may be stale.

use serde_json::Value;

use super::model::{q, Line, Warning};
use super::read::Doc;
use crate::queue::render::{GANG_ANNOTATION, POOL_ANNOTATION, QUOTA_ANNOTATION};

use crate::catalog::AcceleratorKind;
const ACCELERATORS: [AcceleratorKind; 3] = [AcceleratorKind::Nvidia, AcceleratorKind::Amd, AcceleratorKind::Neuron];

/// One adopted queue, for the profile it belongs to.
#[derive(Debug, Clone)]
pub struct AdoptedQueue {
    pub profile: String,
    pub name: String,
    pub line: Line,
    pub at: String,
}

/// The `queue` blocks of gpuplan's ClusterQueues among `queues`, sorted by name (the order gpuplan renders them in).
pub fn adopt(queues: &[Doc], warnings: &mut Vec<Warning>) -> (Vec<AdoptedQueue>, Vec<String>) {
    let (mut adopted, mut skipped) = (Vec::new(), Vec::new());
    for doc in queues {
        match queue(doc, warnings) {
            Some(a) => adopted.push(a),
            None => skipped.push(format!("{} (no gpuplan.dev/profile annotation, or no namespace in spec.namespaceSelector.matchLabels, or no flavor)", doc.at())),
        }
    }
    adopted.sort_by(|a, b| a.name.cmp(&b.name));
    (adopted, skipped)
}

fn annotation<'d>(doc: &'d Doc, key: &str) -> Option<&'d str> {
    doc.object["metadata"]["annotations"][key].as_str()
}

fn queue(doc: &Doc, warnings: &mut Vec<Warning>) -> Option<AdoptedQueue> {
    let profile = annotation(doc, "gpuplan.dev/profile")?.to_string();
    let spec = &doc.object["spec"];
    let namespace = spec["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"].as_str()?;
    let first = spec["resourceGroups"][0]["flavors"][0].as_object()?;
    let pool = annotation(doc, POOL_ANNOTATION).or_else(|| first.get("name").and_then(Value::as_str))?;
    let mut children = vec![quota(doc, warnings)?];
    if let Some(cohort) = spec["cohortName"].as_str() {
        children.push(Line::new(format!("cohort {}", q(cohort)), format!("{} spec.cohortName", doc.at())));
    }
    if annotation(doc, GANG_ANNOTATION).is_some() {
        children.push(Line::new("gang #true", format!("{} metadata.annotations.{GANG_ANNOTATION}", doc.at())));
    }
    children.extend(preemption(doc));
    if doc.hand_edited {
        let message = "edited after gpuplan generated it: adopted from its spec and gpuplan.dev annotations; compiling rewrites every other field".into();
        warnings.push(Warning { file: doc.file.clone(), object: format!("ClusterQueue/{}", doc.name), field: "(file)".into(), message });
    }
    let kdl = format!("queue {} namespace={} pool={}", q(&doc.name), q(namespace), q(pool));
    let from = format!("{} (namespace from spec.namespaceSelector, pool from metadata.annotations.{POOL_ANNOTATION} or the first flavor)", doc.at());
    Some(AdoptedQueue { profile, name: doc.name.clone(), line: Line::block(kdl, from, children), at: doc.at() })
}

/// The quota line: the annotation as written, unless the file was edited; else the accelerator resource of the
/// first flavor, warning when the other flavors differ (a share of limits that differ, or an edit).
fn quota(doc: &Doc, warnings: &mut Vec<Warning>) -> Option<Line> {
    if let Some(written) = annotation(doc, QUOTA_ANNOTATION).filter(|_| !doc.hand_edited) {
        return Some(Line::new(written, format!("{} metadata.annotations.{QUOTA_ANNOTATION}", doc.at())));
    }
    let group = &doc.object["spec"]["resourceGroups"][0];
    let resource = group["coveredResources"].as_array()?.iter().filter_map(Value::as_str).find(|r| ACCELERATORS.iter().any(|k| k.resource() == *r))?;
    let node = if resource == AcceleratorKind::Neuron.resource() { "neuron-devices" } else { "gpus" };
    let of = |flavor: &Value| flavor["resources"].as_array().and_then(|rs| rs.iter().find(|r| r["name"] == resource)).cloned();
    let flavors: Vec<Value> = group["flavors"].as_array()?.iter().filter_map(of).collect();
    let first = flavors.first()?;
    // Whole accelerators only: a quantity such as `500m` is no count a profile can write.
    let count = |field: &str| first[field].as_str().and_then(|v| v.parse::<u32>().ok());
    let mut kdl = format!("{node} nominal={}", count("nominalQuota")?);
    for (field, prop) in [("borrowingLimit", "borrowing-limit"), ("lendingLimit", "lending-limit")] {
        if let Some(v) = count(field) {
            kdl.push_str(&format!(" {prop}={v}"));
        }
    }
    if flavors.iter().any(|f| f != first) {
        let message = format!("the flavors' {resource} quotas differ; the profile gives every flavor the first one's ({kdl}): use share=\"…%\" for a share of each NodePool's limit");
        warnings.push(Warning { file: doc.file.clone(), object: format!("ClusterQueue/{}", doc.name), field: "spec.resourceGroups[0].flavors".into(), message });
    }
    Some(Line::new(kdl, format!("{} spec.resourceGroups[0].flavors[0] {resource}", doc.at())))
}

/// `preemption …` with the policies that are not Kueue's default (`Never`); None when all are.
fn preemption(doc: &Doc) -> Option<Line> {
    let p = &doc.object["spec"]["preemption"];
    let fields = [("within-cluster-queue", &p["withinClusterQueue"]), ("reclaim-within-cohort", &p["reclaimWithinCohort"]), ("borrow-within-cohort", &p["borrowWithinCohort"]["policy"])];
    let props: Vec<String> = fields.iter().filter_map(|(k, v)| v.as_str().filter(|v| *v != "Never").map(|v| format!("{k}={}", q(v)))).collect();
    (!props.is_empty()).then(|| Line::new(format!("preemption {}", props.join(" ")), format!("{} spec.preemption", doc.at())))
}
