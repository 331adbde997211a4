//! What an original NodePool asks for, read from its YAML: the accelerator its pods request, whether it is a CPU
//! pool, the GPU sharing its labels ask for, and the instance types it admits on the catalog.

use serde_json::Value;

use super::requirements::{capacity_types, matches, requirements, zones, Requirement};
use crate::catalog::{Catalog, CapacityType, InstanceType};
use crate::profile::Sharing;

/// Accelerator resources a probe may request, in the order a NodePool's limits, taints and requirements name them.
const ACCELERATORS: [&str; 3] = ["nvidia.com/gpu", "aws.amazon.com/neuron", "amd.com/gpu"];

/// The accelerator resource a NodePool's pods request: the one its limits name, else its taints, else what its
/// requirements select (GPU or Neuron labels); None for a CPU pool.
pub(crate) fn accelerator(np: &Value) -> Option<&'static str> {
    let spec = &np["spec"]["template"]["spec"];
    let limited = ACCELERATORS.into_iter().find(|r| !np["spec"]["limits"][*r].is_null());
    let tainted = || ACCELERATORS.into_iter().find(|r| spec["taints"].as_array().into_iter().flatten().any(|t| t["key"] == *r));
    // EKS Auto Mode's `eks.amazonaws.com/instance-*` labels read as their `karpenter.k8s.aws/` twins.
    let key_of = |r: &Value| r["key"].as_str().map(|k| crate::catalog::auto_mode::karpenter_label(k).unwrap_or_else(|| k.to_string()));
    let keys: Vec<String> = spec["requirements"].as_array().into_iter().flatten().filter_map(key_of).collect();
    let values = |key: &str| spec["requirements"].as_array().into_iter().flatten().filter(|r| key_of(r).as_deref() == Some(key)).flat_map(|r| r["values"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_lowercase)).collect::<Vec<_>>();
    let required = || {
        if values("karpenter.k8s.aws/instance-gpu-manufacturer").iter().any(|v| v == "amd") {
            Some("amd.com/gpu")
        } else if keys.iter().any(|k| k.starts_with("karpenter.k8s.aws/instance-gpu-")) {
            Some("nvidia.com/gpu")
        } else if keys.iter().any(|k| k.starts_with("karpenter.k8s.aws/instance-accelerator-")) || values("karpenter.k8s.aws/instance-family").iter().any(|f| f.starts_with("inf") || f.starts_with("trn")) {
            Some("aws.amazon.com/neuron")
        } else if values("karpenter.k8s.aws/instance-family").iter().any(|f| f.starts_with('g') || f.starts_with('p')) || values("karpenter.k8s.aws/instance-category").iter().any(|c| c == "g" || c == "p") {
            Some("nvidia.com/gpu")
        } else {
            None
        }
    };
    limited.or_else(tainted).or_else(required)
}

/// A CPU NodePool: nothing in it names an accelerator (no accelerator limit, taint or requirement: the probe of
/// `adopt --verify` requests `cpu` for it too), and none of the instance types it names has one.
pub fn is_cpu_pool(np: &Value, reqs: &[Requirement], catalog: &Catalog) -> bool {
    let named = reqs.iter().filter(|r| r.key == "node.kubernetes.io/instance-type" && r.operator == "In").flat_map(|r| &r.values);
    accelerator(np).is_none() && !named.filter_map(|n| catalog.get(n)).any(|t| !t.gpus.is_empty() || t.neuron.is_some())
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

/// The instance types a NodePool admits (the accelerated ones; a CPU pool's, those without accelerators): every requirement gpuplan can evaluate on the catalog
/// (see `requirements::matches`), offered in its zones and capacity types.
pub fn admitted<'c>(np: &Value, catalog: &'c Catalog) -> Vec<&'c InstanceType> {
    let reqs = requirements(np);
    let zones = zones(&reqs);
    let capacity = capacity_types(&reqs);
    // A CPU pool admits the types without accelerators; every other pool, the accelerated ones.
    let cpu = is_cpu_pool(np, &reqs, catalog);
    catalog
        .instance_types
        .iter()
        .filter(|t| (!t.gpus.is_empty() || t.neuron.is_some()) != cpu)
        .filter(|t| reqs.iter().all(|r| matches(t, r).unwrap_or(true)))
        .filter(|t| zones.is_empty() || t.zones.iter().any(|z| zones.contains(z)))
        .filter(|t| capacity.iter().any(|c| t.capacity_types.contains(c) || *c == CapacityType::Reserved))
        .collect()
}
