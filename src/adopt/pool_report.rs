//! What compiling changes for one original NodePool: its types, limit, weight, worst-case and at-limit $/h, and lint
//! findings before and after, plus adopt's own checks of hand-written NodePools (AD001–AD003).

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::nodepool::{admitted, limit, sharing_of};
use super::read::Doc;
use super::requirements::{capacity_types, requirements, zones};
use crate::catalog::cost::{self, Limits, NodeShape, SpotCeiling};
use crate::catalog::{AcceleratorKind, Catalog, CapacityType, InstanceType};
use crate::profile::DEFAULT_PRICE_RATIO_MAX;
use crate::solve::SPOT_MIN_TYPES;

/// One row of the adopt report: an original NodePool before and after compiling its adopted profile.
#[derive(Debug, Clone, Serialize)]
pub struct PoolReport {
    pub node_pool: String,
    pub file: String,
    pub profile: String,
    pub types_added: Vec<String>,
    pub types_removed: Vec<String>,
    pub types_before: usize,
    pub types_after: usize,
    pub limit_before: Option<String>,
    pub limit_after: Option<String>,
    pub weight_before: Option<u64>,
    pub weight_after: Option<u64>,
    /// None: no limit, so no bound.
    pub worst_case_before: Option<f64>,
    pub worst_case_after: Option<f64>,
    pub at_limit_before: Option<f64>,
    pub at_limit_after: Option<f64>,
    /// `CODE message`, sorted.
    pub findings_before: Vec<String>,
    pub findings_after: Vec<String>,
}

fn costs(np: &Value, types: &[&InstanceType], catalog: &Catalog, kind: AcceleratorKind) -> (Option<f64>, Option<f64>) {
    let reqs = requirements(np);
    let capacity = capacity_types(&reqs);
    let zones = if zones(&reqs).is_empty() { catalog.zones.clone() } else { zones(&reqs) };
    let sharing = sharing_of(np);
    let shapes: Vec<NodeShape> = types
        .iter()
        .filter_map(|t| {
            let q = cost::quote(t, catalog, &capacity, &zones, SpotCeiling::OnDemand)?;
            Some(NodeShape::of(t, kind, crate::solve::units_per_gpu(sharing.as_ref(), t), &q))
        })
        .collect();
    let Some(accelerators) = limit(np, kind.resource()).and_then(|l| l.parse::<u32>().ok()) else { return (None, None) };
    if shapes.is_empty() {
        return (None, None);
    }
    let cpu = limit(np, "cpu").and_then(|c| c.parse().ok());
    let memory_mib = limit(np, "memory").and_then(|m| crate::simulate::yaml::milli(&m)).map(|m| u64::try_from((m / 1000 / (1024 * 1024)).max(0)).unwrap_or(u64::MAX));
    let limits = Limits { accelerators, cpu, memory_mib };
    (Some(cost::round_cents(cost::worst_case(&shapes, limits))), Some(cost::round_cents(cost::at_limit(&shapes, limits))))
}

pub(super) fn pool_report(np: &Doc, rendered: Option<&Value>, profile: &str, catalog: &Catalog, before: &[crate::lint::Finding], after: &[crate::lint::Finding]) -> PoolReport {
    let kind = super::nodepool::kind(&np.object, catalog);
    let types_before = admitted(&np.object, catalog);
    let types_after: Vec<&InstanceType> = rendered.map(|r| admitted(r, catalog)).unwrap_or_default();
    let names = |ts: &[&InstanceType]| ts.iter().map(|t| t.name.clone()).collect::<BTreeSet<String>>();
    let (b, a) = (names(&types_before), names(&types_after));
    let (worst_before, at_limit_before) = costs(&np.object, &types_before, catalog, kind);
    let (worst_after, at_limit_after) = rendered.map(|r| costs(r, &types_after, catalog, kind)).unwrap_or((None, None));
    let select = |fs: &[crate::lint::Finding]| {
        let mut out: Vec<String> = fs
            .iter()
            .filter(|f| f.profile == profile && f.pool.as_deref().is_none_or(|p| p == np.name))
            .map(|f| format!("{} {}", f.code, f.diagnostic.message))
            .collect();
        out.sort();
        out.dedup();
        out
    };
    let mut findings_before = select(before);
    // gpuplan's own NodePools were built under these rules (with the profile's explicit price-ratio-max and
    // allows): only hand-written ones get the adopt checks.
    if !np.is_gpuplans() {
        findings_before.extend(adopt_checks(&np.object, &types_before, catalog, kind));
    }
    findings_before.sort();
    PoolReport {
        node_pool: np.name.clone(),
        file: np.file.clone(),
        profile: profile.to_string(),
        types_added: a.difference(&b).cloned().collect(),
        types_removed: b.difference(&a).cloned().collect(),
        types_before: b.len(),
        types_after: a.len(),
        limit_before: limit(&np.object, kind.resource()),
        limit_after: rendered.and_then(|r| limit(r, kind.resource())),
        weight_before: np.object["spec"]["weight"].as_u64(),
        weight_after: rendered.and_then(|r| r["spec"]["weight"].as_u64()),
        worst_case_before: worst_before,
        worst_case_after: worst_after,
        at_limit_before,
        at_limit_after,
        findings_before,
        findings_after: select(after),
    }
}

/// Defects of hand-written NodePools that need their requirements evaluated on the catalog.
fn adopt_checks(np: &Value, types: &[&InstanceType], catalog: &Catalog, kind: AcceleratorKind) -> Vec<String> {
    let mut out = Vec::new();
    let tainted_nvidia = np["spec"]["template"]["spec"]["taints"].as_array().into_iter().flatten().any(|t| t["key"] == "nvidia.com/gpu");
    // Every type the requirements admit (`types` are those a pod of the pool's accelerator fits): the AMD ones too.
    let amd: Vec<&str> = super::nodepool::matching(np, catalog).into_iter().filter(|t| t.gpus.iter().any(|g| g.manufacturer.eq_ignore_ascii_case("amd"))).map(|t| t.name.as_str()).collect();
    if tainted_nvidia && !amd.is_empty() {
        out.push(format!("AD001 AMD GPU types admitted under the nvidia.com/gpu taint ({}): NVIDIA pods tolerate it and land on GPUs they cannot use; constrain karpenter.k8s.aws/instance-gpu-manufacturer", amd.join(", ")));
    }
    let reqs = requirements(np);
    let capacity = capacity_types(&reqs);
    let zones = if zones(&reqs).is_empty() { catalog.zones.clone() } else { zones(&reqs) };
    let per_accelerator: Vec<(f64, &str)> = types
        .iter()
        .filter_map(|t| Some((cost::quote(t, catalog, &capacity, &zones, SpotCeiling::OnDemand)?.ceiling / f64::from(t.accelerators(kind).max(1)), t.name.as_str())))
        .collect();
    let cheapest = per_accelerator.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    if let Some((priciest, name)) = per_accelerator.iter().copied().max_by(|a, b| a.0.total_cmp(&b.0))
        && cheapest.is_finite() && priciest > cheapest * DEFAULT_PRICE_RATIO_MAX {
            out.push(format!(
                "AD002 $/accelerator-hour spread {:.1}× (up to {name}): Karpenter may launch it at that price (adopt keeps it; `--optimize` keeps types within {DEFAULT_PRICE_RATIO_MAX}× of the cheapest)",
                priciest / cheapest
            ));
        }
    if capacity.contains(&CapacityType::Spot) && types.len() < SPOT_MIN_TYPES {
        out.push(format!("AD003 spot pool over {} instance types (< {SPOT_MIN_TYPES}): more interruptions and insufficient-capacity errors", types.len()));
    }
    out
}
