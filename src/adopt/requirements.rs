//! Karpenter NodePool requirements evaluated against the catalog: which instance types a hand-written NodePool
//! admits (the "before" of the adopt report), using the well-known labels karpenter-provider-aws sets on
//! instance types (pkg/apis/v1/labels.go) and the operators of kubernetes-sigs/karpenter's
//! pkg/scheduling/requirement.go: In, NotIn, Exists, DoesNotExist, Gt, Lt, and (Karpenter v1.x) Gte, Lte.

use serde_json::Value;

use crate::catalog::{CapacityType, InstanceType};

/// One requirement as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
    pub min_values: Option<u64>,
}

pub const OPERATORS: [&str; 8] = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"];

pub fn requirements(node_pool: &Value) -> Vec<Requirement> {
    node_pool["spec"]["template"]["spec"]["requirements"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .map(|r| Requirement {
                    // An EKS Auto Mode label reads as its self-managed Karpenter twin (same values:
                    // `catalog::auto_mode`); the profile's `auto-mode` says which domain to compile back to.
                    key: r["key"].as_str().map(|k| crate::catalog::auto_mode::karpenter_label(k).unwrap_or_else(|| k.to_string())).unwrap_or_default(),
                    operator: r["operator"].as_str().unwrap_or("").to_string(),
                    values: r["values"].as_array().map(|v| v.iter().map(scalar).collect()).unwrap_or_default(),
                    min_values: r["minValues"].as_u64(),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn scalar(v: &Value) -> String {
    v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())
}

/// The value of a well-known label on an instance type, as Karpenter sets it (GPU and accelerator names
/// lowercase, GPU memory in MiB per GPU); None when the type has no such label (e.g. no GPU) or the key is not
/// an instance-type label gpuplan knows.
pub fn label(t: &InstanceType, key: &str) -> Option<Option<String>> {
    let gpu = t.gpus.first();
    let value = match key {
        "node.kubernetes.io/instance-type" => Some(t.name.clone()),
        "karpenter.k8s.aws/instance-family" => Some(t.family.clone()),
        "karpenter.k8s.aws/instance-category" => Some(t.category.clone()),
        "karpenter.k8s.aws/instance-generation" => Some(t.generation.to_string()),
        "karpenter.k8s.aws/instance-size" => Some(t.size.clone()),
        "karpenter.k8s.aws/instance-cpu" => Some(t.vcpu.to_string()),
        "karpenter.k8s.aws/instance-memory" => Some(t.memory_mib.to_string()),
        "karpenter.k8s.aws/instance-gpu-name" => gpu.map(|g| g.name.to_lowercase()),
        "karpenter.k8s.aws/instance-gpu-manufacturer" => gpu.map(|g| g.manufacturer.to_lowercase()),
        "karpenter.k8s.aws/instance-gpu-count" => gpu.map(|_| t.gpus.iter().map(|g| g.count).sum::<u32>().to_string()),
        "karpenter.k8s.aws/instance-gpu-memory" => gpu.map(|g| g.memory_mib.to_string()),
        "karpenter.k8s.aws/instance-accelerator-name" => t.neuron.as_ref().map(|n| n.name.to_lowercase()),
        "karpenter.k8s.aws/instance-accelerator-manufacturer" => t.neuron.as_ref().map(|_| "aws".to_string()),
        "karpenter.k8s.aws/instance-accelerator-count" => t.neuron.as_ref().map(|n| n.count.to_string()),
        "kubernetes.io/arch" => return Some(None), // multi-valued: see `matches`
        _ => return None,
    };
    Some(value)
}

/// Whether `t` satisfies `r`, or None when the key is not an instance-type property (zone, capacity type,
/// custom labels: decided elsewhere or not at all).
pub fn matches(t: &InstanceType, r: &Requirement) -> Option<bool> {
    if r.key == "kubernetes.io/arch" {
        let archs: Vec<&str> = t.arch.iter().map(|a| a.as_str()).collect();
        return Some(match r.operator.as_str() {
            "In" => archs.iter().any(|a| r.values.iter().any(|v| v == a)),
            "NotIn" => archs.iter().any(|a| !r.values.iter().any(|v| v == a)),
            "Exists" => true,
            "DoesNotExist" => false,
            _ => false,
        });
    }
    if r.key == "karpenter.sh/capacity-type" {
        return Some(capacity_types(std::slice::from_ref(r)).iter().any(|c| t.capacity_types.contains(c)));
    }
    let value = label(t, &r.key)?;
    Some(operator(&r.operator, value.as_deref(), &r.values))
}

/// Karpenter's operator semantics: NotIn and DoesNotExist match an absent label; Gt/Lt/Gte/Lte compare integers
/// and never match an absent or non-integer label.
pub fn operator(op: &str, value: Option<&str>, values: &[String]) -> bool {
    let bound = || values.first().and_then(|v| v.parse::<i64>().ok());
    let number = || value.and_then(|v| v.parse::<i64>().ok());
    match op {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => value.is_none_or(|v| !values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" => matches!((number(), bound()), (Some(n), Some(b)) if n > b),
        "Lt" => matches!((number(), bound()), (Some(n), Some(b)) if n < b),
        "Gte" => matches!((number(), bound()), (Some(n), Some(b)) if n >= b),
        "Lte" => matches!((number(), bound()), (Some(n), Some(b)) if n <= b),
        _ => false,
    }
}

/// The capacity types the requirements admit. Unconstrained, Karpenter v1 adds no default: the provider takes spot
/// when an available offering allows it, else on-demand (aws/karpenter-provider-aws v1.14.1
/// `pkg/providers/instance/instance.go` `getCapacityType`: a missing requirement `Has` every value; reserved needs
/// a reservation the NodeClass selects, and adopt writes `reserved` only from a requirement that names it).
pub fn capacity_types(reqs: &[Requirement]) -> Vec<CapacityType> {
    let all = [CapacityType::Spot, CapacityType::OnDemand, CapacityType::Reserved];
    let mut admitted: Vec<CapacityType> = all.to_vec();
    let mut constrained = false;
    for r in reqs.iter().filter(|r| r.key == "karpenter.sh/capacity-type") {
        constrained = true;
        admitted.retain(|c| operator(&r.operator, Some(c.as_str()), &r.values));
    }
    if constrained { admitted } else { vec![CapacityType::Spot, CapacityType::OnDemand] }
}

/// Zones the requirements name with `In` (empty: any zone).
pub fn zones(reqs: &[Requirement]) -> Vec<String> {
    reqs.iter().filter(|r| r.key == "topology.kubernetes.io/zone" && r.operator == "In").flat_map(|r| r.values.clone()).collect()
}

/// An integer lower / upper bound a requirement sets on a numeric label, inclusive.
pub fn bounds(r: &Requirement) -> (Option<i64>, Option<i64>) {
    let n = r.values.first().and_then(|v| v.parse::<i64>().ok());
    match r.operator.as_str() {
        "Gt" => (n.map(|n| n + 1), None),
        "Gte" => (n, None),
        "Lt" => (None, n.map(|n| n - 1)),
        "Lte" => (None, n),
        "In" => {
            let all: Vec<i64> = r.values.iter().filter_map(|v| v.parse().ok()).collect();
            (all.iter().min().copied(), all.iter().max().copied())
        }
        _ => (None, None),
    }
}
