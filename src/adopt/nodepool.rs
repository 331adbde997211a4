//! What an original NodePool asks for, read from its YAML: the accelerator its pods request, whether it is a CPU
//! pool, the GPU sharing its labels ask for, and the instance types it admits on the catalog.

use serde_json::Value;

use super::requirements::{capacity_types, matches, requirements, zones};
use crate::catalog::{AcceleratorKind, Catalog, CapacityType, InstanceType};
use crate::profile::Sharing;

/// Accelerator resources a NodePool's limits and taints name, with the kind each stands for (a Neuron pool may limit
/// devices or cores: the Neuron device plugin advertises both).
const ACCELERATORS: [(&str, AcceleratorKind); 4] = [
    ("nvidia.com/gpu", AcceleratorKind::Nvidia),
    ("aws.amazon.com/neuron", AcceleratorKind::Neuron),
    ("aws.amazon.com/neuroncore", AcceleratorKind::Neuron),
    ("amd.com/gpu", AcceleratorKind::Amd),
];

/// The accelerator kind of an original NodePool, from every signal in the order that decides: its limits, its
/// taints, its requirements on accelerator labels (GPU name, manufacturer, count, memory; Neuron's accelerator labels;
/// EKS Auto Mode's twins), else the instance types it admits in the catalog (by family, category, type, …): when each
/// has accelerators, the kind most of them have. A pool that admits types without accelerators too (`instance-category
/// In [c, g]`) is a CPU pool, whose adopted profile admits its GPU types as well (`admit "as-required"`).
pub fn kind(np: &Value, catalog: &Catalog) -> AcceleratorKind {
    labelled_kind(np).unwrap_or_else(|| admitted_kind(np, catalog))
}

/// The kind a NodePool's limits, taints or accelerator-label requirements name, if they name one.
fn labelled_kind(np: &Value) -> Option<AcceleratorKind> {
    let spec = &np["spec"]["template"]["spec"];
    let limited = ACCELERATORS.into_iter().find(|(r, _)| !np["spec"]["limits"][*r].is_null());
    let tainted = || ACCELERATORS.into_iter().find(|(r, _)| spec["taints"].as_array().into_iter().flatten().any(|t| t["key"] == *r));
    if let Some((_, kind)) = limited.or_else(tainted) {
        return Some(kind);
    }
    // Only a requirement a type without the label fails says the pool wants the label's accelerator
    // (kubernetes-sigs/karpenter pkg/scheduling/requirement.go: an absent label fails In, Exists, Gt, Gte, Lt and Lte,
    // and passes NotIn and DoesNotExist); the rest is left to the types the pool admits.
    let requires = |r: &&super::requirements::Requirement| !matches!(r.operator.as_str(), "NotIn" | "DoesNotExist");
    let reqs = requirements(np);
    let amd_only = reqs.iter().filter(requires).any(|r| r.key == "karpenter.k8s.aws/instance-gpu-manufacturer" && r.operator == "In" && !r.values.is_empty() && r.values.iter().all(|v| v.eq_ignore_ascii_case("amd")));
    if amd_only {
        Some(AcceleratorKind::Amd)
    } else if reqs.iter().filter(requires).any(|r| r.key.starts_with("karpenter.k8s.aws/instance-gpu-") && !(r.key.ends_with("manufacturer") && r.values.iter().any(|v| v.eq_ignore_ascii_case("amd")))) {
        Some(AcceleratorKind::Nvidia)
    } else if reqs.iter().filter(requires).any(|r| r.key.starts_with("karpenter.k8s.aws/instance-accelerator-")) {
        Some(AcceleratorKind::Neuron)
    } else {
        None
    }
}

/// The kind of the types a NodePool admits in the catalog: the kind most have when every one has accelerators (ties
/// go to NVIDIA), else CPU.
fn admitted_kind(np: &Value, catalog: &Catalog) -> AcceleratorKind {
    let types = matching(np, catalog);
    // A type without accelerators in a category the catalog's accelerated types have (trn2u.48xlarge, whose Neuron
    // devices EC2 does not describe) says nothing about the pool; one in a CPU category (c, m, …) makes it a CPU pool.
    let accelerated = |t: &InstanceType| !t.gpus.is_empty() || t.neuron.is_some();
    let accelerated_categories: std::collections::BTreeSet<&str> = catalog.instance_types.iter().filter(|t| accelerated(t)).map(|t| t.category.as_str()).collect();
    if types.is_empty() || types.iter().any(|t| !accelerated(t) && !accelerated_categories.contains(t.category.as_str())) {
        return AcceleratorKind::Cpu;
    }
    let count = |kind: AcceleratorKind| types.iter().filter(|t| t.accelerators(kind) > 0 || (kind == AcceleratorKind::Nvidia && t.has_partial_gpus())).count();
    [AcceleratorKind::Nvidia, AcceleratorKind::Neuron, AcceleratorKind::Amd].into_iter().max_by_key(|k| (count(*k), *k == AcceleratorKind::Nvidia)).unwrap_or(AcceleratorKind::Nvidia)
}

/// Schedulable units per physical GPU (the fewest among GPU models), from the GPU Operator labels gpuplan sets
/// (the solver's own function).
pub fn units(np: &Value) -> u32 {
    crate::solve::units_per_accelerator(sharing_of(np).as_ref())
}

/// The GPU sharing a NodePool's labels ask the GPU Operator for.
pub fn sharing_of(np: &Value) -> Option<Sharing> {
    let labels = &np["spec"]["template"]["metadata"]["labels"];
    if let Some(r) = labels["nvidia.com/device-plugin.config"].as_str().and_then(|c| c.strip_prefix("time-slicing-")).and_then(|r| r.parse().ok()) {
        Some(Sharing::TimeSlicing { replicas: r })
    } else {
        labels["nvidia.com/mig.config"].as_str().map(|c| Sharing::Mig { config: c.to_string() })
    }
}

/// The instance types a NodePool admits in the catalog: every requirement gpuplan can evaluate on it (see
/// `requirements::matches`), offered in its zones and capacity types.
pub fn matching<'c>(np: &Value, catalog: &'c Catalog) -> Vec<&'c InstanceType> {
    let reqs = requirements(np);
    let zones = zones(&reqs);
    let capacity = capacity_types(&reqs);
    catalog
        .instance_types
        .iter()
        .filter(|t| reqs.iter().all(|r| matches(t, r).unwrap_or(true)))
        // Offered in one of its zones (any zone of the region when it names none): a type without offerings launches nowhere.
        .filter(|t| t.zones.iter().any(|z| zones.is_empty() || zones.contains(z)))
        .filter(|t| capacity.iter().any(|c| t.capacity_types.contains(c) || *c == CapacityType::Reserved))
        .collect()
}

/// The instance types a NodePool admits for its pods: an accelerated pool's, those with its accelerator (a pod
/// requesting it fits no other); a CPU pool's, every type it admits (a mixed pool's GPU types too).
pub fn admitted<'c>(np: &Value, catalog: &'c Catalog) -> Vec<&'c InstanceType> {
    admitted_as(np, catalog, kind(np, catalog))
}

/// [`admitted`] for a NodePool whose [`kind`] the caller has.
pub fn admitted_as<'c>(np: &Value, catalog: &'c Catalog, kind: AcceleratorKind) -> Vec<&'c InstanceType> {
    let mut types = matching(np, catalog);
    if kind != AcceleratorKind::Cpu {
        types.retain(|t| crate::solve::has_only(kind, t));
    }
    types
}

/// A NodePool's `spec.limits.<resource>` as written (a number or a string quantity).
pub fn limit(np: &Value, resource: &str) -> Option<String> {
    match &np["spec"]["limits"][resource] {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
