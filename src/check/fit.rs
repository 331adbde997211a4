//! Which instance types of a workload's pool hold one of its replicas (lint GP018, explain): Karpenter launches
//! the cheapest type the pending pods fit, so a replica too big for the pool's cheapest types makes it pay more than
//! the pool's figures say.

use std::collections::BTreeMap;

use crate::catalog::Catalog;
use crate::solve::ops::workload::WorkloadPlan;
use crate::simulate::manifests::Manifests;
use crate::simulate::yaml::Resources;
use crate::simulate::daemons::DaemonOverhead;
use crate::simulate::instances;
use crate::solve::ClusterPlan;

use super::simulated::{replicas, workload_pools};

/// One instance type of a workload's pool, and what keeps one replica off an empty node of it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReplicaFit {
    pub nodepool: String,
    pub instance_type: String,
    /// Each resource the replica requests beyond the node's allocatable: `cpu 4 > 3.92 allocatable`. Empty: it fits.
    pub short: Vec<String>,
    pub usd_per_accelerator_hour: f64,
}

/// Which types of the workload's pool hold one replica: its requests against each type's allocatable as Karpenter
/// computes it (capacity − kube-reserved − eviction threshold, `simulate::instances`) less the requests of the
/// DaemonSets that run there (`simulate::daemons`: the configured add-ons'). Empty when the workload declares no
/// `requests` (accelerators alone always fit: the pool only has types with enough of them).
pub fn replica_fits(cluster: &ClusterPlan, simulated: &Manifests, catalog: &Catalog, w: &WorkloadPlan) -> Vec<ReplicaFit> {
    let Some(pod) = replicas(cluster, w, 1).pop().filter(|_| !w.requests.is_empty()) else { return Vec::new() };
    let mut out = Vec::new();
    for pool in workload_pools(cluster, &w.nodepools) {
        let Some(class) = simulated.node_classes.iter().find(|c| c.name == pool.node_class && c.auto_mode == pool.auto_mode) else { continue };
        for c in pool.candidates.iter() {
            let Some(it) = catalog.get(&c.name) else { continue };
            let capacity = instances::capacity(it, class);
            let allocatable = instances::allocatable(it, class, &capacity);
            let daemons = match simulated.node_pools.iter().find(|p| p.name == pool.name) {
                Some(np) => DaemonOverhead::of(np, &instances::requirements(it, &catalog.region), &simulated.daemon_sets),
                None => Default::default(),
            };
            let short = pod.requests.iter().filter(|(k, _)| *k != "pods").filter_map(|(k, v)| short_of(k, *v, &allocatable, &daemons)).collect();
            out.push(ReplicaFit { nodepool: pool.name.clone(), instance_type: c.name.clone(), short, usd_per_accelerator_hour: c.usd_per_accelerator_hour });
        }
    }
    out
}

/// `cpu 4 > 3.92 allocatable` (with `, 5m of it to DaemonSets` when daemons take some), or None when it fits.
fn short_of(resource: &str, request: i128, allocatable: &Resources, daemons: &DaemonOverhead) -> Option<String> {
    let total = allocatable.get(resource).copied().unwrap_or(0);
    let to_daemons = daemons.requests.get(resource).copied().unwrap_or(0);
    if request <= total - to_daemons {
        return None;
    }
    let note = if to_daemons > 0 { format!(", {} of it to DaemonSets", exact(resource, to_daemons)) } else { String::new() };
    Some(format!("{resource} {} > {} allocatable{note}", quantity(resource, request), quantity(resource, total)))
}

/// A quantity as Kubernetes spells small ones: `5m` cpu, `64Mi` memory (the two-decimal form rounds daemons away).
fn exact(resource: &str, milli: i128) -> String {
    const MI: i128 = 1024 * 1024 * 1000;
    match resource {
        "cpu" if milli % 1000 != 0 => format!("{milli}m"),
        "memory" if milli % MI == 0 => format!("{}Mi", milli / MI),
        _ => crate::simulate::yaml::show(resource, milli),
    }
}

/// What [`replica_fits`] means for a workload: the types that hold one replica, those that do not and why, and what
/// that does to the price per accelerator-hour (by type across the pool's tiers, each at its cheapest tier).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FitSummary {
    pub fits: Vec<String>,
    pub too_small: Vec<ReplicaFit>,
    pub cheapest_usd_per_accelerator_hour: f64,
    /// None: no type of the pool holds a replica.
    pub cheapest_fit_usd_per_accelerator_hour: Option<f64>,
}

impl FitSummary {
    /// None when the workload declares no requests.
    pub fn new(fits: Vec<ReplicaFit>) -> Option<FitSummary> {
        let mut by_type: BTreeMap<String, ReplicaFit> = BTreeMap::new();
        for f in fits {
            let e = by_type.entry(f.instance_type.clone()).or_insert_with(|| f.clone());
            e.usd_per_accelerator_hour = e.usd_per_accelerator_hour.min(f.usd_per_accelerator_hour);
        }
        let mut types: Vec<ReplicaFit> = by_type.into_values().collect();
        types.sort_by(|a, b| a.usd_per_accelerator_hour.total_cmp(&b.usd_per_accelerator_hour).then(a.instance_type.cmp(&b.instance_type)));
        let cheapest = types.first()?.usd_per_accelerator_hour;
        let (fit, too_small): (Vec<ReplicaFit>, Vec<ReplicaFit>) = types.into_iter().partition(|f| f.short.is_empty());
        Some(FitSummary {
            cheapest_fit_usd_per_accelerator_hour: fit.first().map(|f| f.usd_per_accelerator_hour),
            fits: fit.into_iter().map(|f| f.instance_type).collect(),
            too_small,
            cheapest_usd_per_accelerator_hour: cheapest,
        })
    }

    /// `g6.xlarge (cpu 4.00 > 3.92 allocatable), g5.xlarge (…)`.
    pub fn too_small_text(&self) -> String {
        self.too_small.iter().map(|f| format!("{} ({})", f.instance_type, f.short.join(", "))).collect::<Vec<_>>().join(", ")
    }

    /// What the misfits cost: `the cheapest type it fits, g6.2xlarge, costs $0.3910/accelerator-hour, +21% over the pool's cheapest ($0.3219)`.
    pub fn price_text(&self) -> String {
        self.price_text_per("accelerator")
    }

    /// [`FitSummary::price_text`] in the pool's unit: `accelerator`, or `vCPU` for a CPU pool.
    pub fn price_text_per(&self, unit: &str) -> String {
        match (self.fits.first(), self.cheapest_fit_usd_per_accelerator_hour) {
            (Some(t), Some(fit)) => format!(
                "the cheapest type it fits, {t}, costs ${fit:.4}/{unit}-hour, {:+.0}% over the pool's cheapest (${:.4})",
                (fit / self.cheapest_usd_per_accelerator_hour - 1.0) * 100.0,
                self.cheapest_usd_per_accelerator_hour
            ),
            _ => "no type of the pool holds one replica: every replica stays pending".into(),
        }
    }
}

/// A milli-quantity for people: cores with two decimals, memory in GiB.
fn quantity(resource: &str, milli: i128) -> String {
    match resource {
        "memory" => format!("{:.1}Gi", milli as f64 / 1000.0 / 1024f64.powi(3)),
        "cpu" => format!("{:.2}", milli as f64 / 1000.0),
        _ => format!("{}", milli / 1000),
    }
}
