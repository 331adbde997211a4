//! The simulation where it proves something about a compile: every `workload` at its max replicas on the freshly
//! generated manifests (compile: E0180 when a replica cannot schedule within its pool, naming the limit; E0181 when
//! it lands on another pool), the fallback order of tiered pools (lint GP016: a tier that never receives pods), and
//! per-workload placement and cost for `explain`.
//!
//! The pods are what gpuplan tells users to write: the pool's nodeSelector and tolerations
//! (`PoolPlan::pod_placement`) and the workload's accelerators per replica.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::catalog::CapacityType;
use crate::compile::Compilation;
use crate::diagnostic::ProfileDiagnostic;
use crate::render::Manifest;
use crate::ops::workload::WorkloadPlan;
use crate::solve::{ClusterPlan, PoolPlan};

use super::instances::Unavailable;
use super::manifests::{self, Manifests};
use super::pods::Pod;
use super::requirements::{Requirement, Requirements, Toleration};
use super::yaml::{Doc, Resources};
use super::Report;

/// A cluster's generated NodePools, EC2NodeClasses and NodeOverlays (`manifests`, the cluster's objects), and the
/// DaemonSets of the add-ons they configure, as `simulate --manifests out/<cluster>` would read them.
pub fn cluster_manifests(manifests: &[Manifest]) -> Manifests {
    let docs: Vec<Doc> = manifests
        .iter()
        .filter(|m| matches!(m.kind(), "NodePool" | "EC2NodeClass" | "NodeClass" | "NodeOverlay"))
        // The text only locates input errors, which generated (schema-validated) objects do not have.
        .map(|m| Doc { path: PathBuf::from("out").join(&m.path), line: 1, text: String::new(), value: Cow::Borrowed(&m.object) })
        .collect();
    // Generated objects passed schema validation; a parse failure here would be a gpuplan bug.
    let mut out = manifests::manifests(&docs).unwrap_or_default();
    // The add-ons' DaemonSets take their requests from every node they run on, as `simulate` counts them.
    let objects: Vec<&serde_json::Value> = manifests.iter().map(|m| &m.object).collect();
    out.daemon_sets = super::daemons::daemon_pods(&super::daemons::add_ons(&objects, &[]));
    out
}

/// `replicas` pods of `per_replica` accelerators each, placed as gpuplan tells users to place them on `pools`
/// (`solve::workload_placement`: nodeSelector, tolerations, EFA request).
pub fn pool_pods(namespace: &str, name: &str, pools: &[&PoolPlan], per_replica: u32, replicas: u32) -> Vec<Pod> {
    let Some(first) = pools.first() else { return Vec::new() };
    let placement = crate::solve::workload_placement(pools, per_replica);
    let mut node_selector = Requirements::default();
    for (k, v) in &placement.node_selector {
        node_selector.add(k, Requirement::is_in([v.clone()]));
    }
    let tolerations: Vec<Toleration> = placement.tolerations;
    let mut requests = Resources::from([(first.resource().to_string(), per_replica as i128 * 1000), ("pods".to_string(), 1000)]);
    requests.extend(placement.requests.into_iter().map(|(k, v)| (k, v as i128 * 1000)));
    (0..replicas)
        .map(|i| Pod { key: format!("{namespace}/{name}-{i}"), requests: requests.clone(), node_selector: node_selector.clone(), tolerations: tolerations.clone(), ..Pod::default() })
        .collect()
}

fn workload_pools<'a>(cluster: &'a ClusterPlan, nodepools: &[String]) -> Vec<&'a PoolPlan> {
    cluster.pools.iter().filter(|p| nodepools.contains(&p.name)).collect()
}

/// Every workload of the cluster at max replicas, simulated together (they share pools and limits) on the
/// cluster's generated objects (`simulated`, from [`cluster_manifests`]).
pub fn simulate_workloads(c: &Compilation, cluster: &ClusterPlan, simulated: &Manifests) -> Option<Report> {
    let (catalog, labels) = c.simulation_catalog(&cluster.region)?;
    if cluster.ops.workloads.is_empty() {
        return None;
    }
    let pods = workload_pods(cluster);
    Some(super::run_prepared(&super::prepare(catalog, labels, simulated, &simulated.node_pools), &pods, &[]))
}

/// The pods [`simulate_workloads`] simulates: every workload of the cluster at max replicas, placed on its pools
/// (the conformance harness writes them as YAML for Karpenter's scheduler).
pub fn workload_pods(cluster: &ClusterPlan) -> Vec<Pod> {
    cluster
        .ops
        .workloads
        .iter()
        .flat_map(|w| replicas(cluster, w, w.replicas_max))
        .collect()
}

/// `count` pods of a workload as its pod spec would request: its pool's placement, its accelerators and its
/// `requests` (cpu, memory).
fn replicas(cluster: &ClusterPlan, w: &WorkloadPlan, count: u32) -> Vec<Pod> {
    let mut pods = pool_pods(&w.namespace, &w.name, &workload_pools(cluster, &w.nodepools), w.gpus_per_replica.max(1), count);
    let requests: Resources = w.requests.iter().filter_map(|(k, v)| Some((k.clone(), super::yaml::milli(v)?))).collect();
    for pod in &mut pods {
        pod.requests.extend(requests.clone());
    }
    pods
}

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
pub fn replica_fits(cluster: &ClusterPlan, simulated: &Manifests, catalog: &crate::catalog::Catalog, w: &WorkloadPlan) -> Vec<ReplicaFit> {
    let Some(pod) = replicas(cluster, w, 1).pop().filter(|_| !w.requests.is_empty()) else { return Vec::new() };
    let mut out = Vec::new();
    for pool in workload_pools(cluster, &w.nodepools) {
        let Some(class) = simulated.node_classes.iter().find(|c| c.name == pool.node_class && c.auto_mode == pool.auto_mode) else { continue };
        for c in pool.candidates.iter() {
            let Some(it) = catalog.get(&c.name) else { continue };
            let capacity = super::instances::capacity(it, class);
            let allocatable = super::instances::allocatable(it, class, &capacity);
            let daemons = match simulated.node_pools.iter().find(|p| p.name == pool.name) {
                Some(np) => super::daemons::DaemonOverhead::of(np, &super::instances::requirements(it, &catalog.region), &simulated.daemon_sets),
                None => Default::default(),
            };
            let short = pod.requests.iter().filter(|(k, _)| *k != "pods").filter_map(|(k, v)| short_of(k, *v, &allocatable, &daemons)).collect();
            out.push(ReplicaFit { nodepool: pool.name.clone(), instance_type: c.name.clone(), short, usd_per_accelerator_hour: c.usd_per_accelerator_hour });
        }
    }
    out
}

/// `cpu 4 > 3.92 allocatable` (with `, 5m of it to DaemonSets` when daemons take some), or None when it fits.
fn short_of(resource: &str, request: i128, allocatable: &Resources, daemons: &super::daemons::DaemonOverhead) -> Option<String> {
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
        _ => super::yaml::show(resource, milli),
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

fn replica_of<'r>(key: &'r str, namespace: &str, name: &str) -> bool {
    key.strip_prefix(&format!("{namespace}/{name}-")).is_some_and(|i| i.chars().all(|c| c.is_ascii_digit()))
}

/// compile's check on one cluster: E0180 (a replica stays pending; the reason names the limit) and E0181 (a replica
/// lands on a NodePool that is not the workload's).
pub fn workload_diagnostics(c: &Compilation, cluster: &ClusterPlan, simulated: &Manifests) -> Vec<ProfileDiagnostic> {
    let mut out = Vec::new();
    let Some(report) = simulate_workloads(c, cluster, simulated) else { return out };
    for w in &cluster.ops.workloads {
        let Some(spec) = c.profile(&cluster.name, &w.profile).into_iter().flat_map(|p| &p.ops.workloads).find(|x| x.name.value == w.name && x.namespace.value == w.namespace) else {
            continue;
        };
        let pending: Vec<_> = report.pending.iter().filter(|p| replica_of(&p.pod, &w.namespace, &w.name)).collect();
        if let Some(first) = pending.first() {
            out.push(
                c.sources
                    .error(spec.replicas_max.span, "E0180", format!(
                        "workload `{}/{}` cannot fully schedule at {} replicas: {} of them stay pending in the simulation of the generated NodePools",
                        w.namespace, w.name, w.replicas_max, pending.len()
                    ))
                    .label(format!("{} pending", pending.len()))
                    .help(format!(
                        "{}: {} — lower replicas max, or raise the pool's {}/budget (`gpuplan simulate` shows every pod)",
                        first.pod,
                        first.reason,
                        if workload_pools(cluster, &w.nodepools).iter().any(|p| !p.accelerator.is_accelerator()) { "max-cpu" } else { "max-accelerators" }
                    )),
            );
        }
        let stray: Vec<(&String, &String)> = report
            .nodeclaims
            .iter()
            .flat_map(|nc| nc.pods.iter().map(move |p| (p, &nc.nodepool)))
            .filter(|(p, pool)| replica_of(p, &w.namespace, &w.name) && !w.nodepools.contains(pool))
            .collect();
        if let Some((pod, pool)) = stray.first() {
            out.push(
                c.sources
                    .error(spec.pool.span, "E0181", format!("workload `{}/{}`: {} replica(s) land on NodePool `{pool}`, not on pool `{}` (first: {pod})", w.namespace, w.name, stray.len(), w.pool))
                    .help("another NodePool carries the same label and tolerable taints with a higher weight: give the pools distinct labels"),
            );
        }
    }
    out
}

/// E0160: a pool whose `kubelet` settings leave no room for one pod of one accelerator (or vCPU): `max-pods 0`, a
/// `kube-reserved` above the node's CPU, an eviction threshold above its memory. Each such pool gets a probe pod,
/// simulated alone on the cluster's generated objects (the allocatable is Karpenter's, `instances::allocatable`); a
/// probe that pends is reported at the `kubelet` block with the scheduler's reason. Pools without kubelet settings
/// need no probe: the solver only admits types that hold one unit.
pub fn kubelet_diagnostics(c: &Compilation, cluster: &ClusterPlan, simulated: &Manifests) -> Vec<ProfileDiagnostic> {
    let Some((catalog, labels)) = c.simulation_catalog(&cluster.region) else { return Vec::new() };
    let mut out = Vec::new();
    for pool in &cluster.pools {
        let has_kubelet = cluster.node_classes.iter().any(|k| k.name == pool.node_class && k.kubelet.is_some());
        let Some(kubelet) = c.profile(&cluster.name, &pool.profile).into_iter().flat_map(|p| &p.pools).flat_map(|p| &p.tiers).find(|t| t.name.value == pool.name).and_then(|t| t.settings.kubelet.as_ref()) else { continue };
        if !has_kubelet {
            continue;
        }
        let probe = pool_pods("gpuplan-probe", &pool.name, &[pool], 1, 1);
        let report = super::run_prepared(&super::prepare(catalog, labels, simulated, &simulated.node_pools), &probe, &[]);
        let Some(pending) = report.pending.first() else { continue };
        out.push(
            c.sources
                .error(kubelet.span, "E0160", format!("with these kubelet settings no node of NodePool `{}` takes a pod of one {}: {}", pool.name, pool.resource(), pending.reason))
                .label("kubelet settings")
                .help("leave room for pods: max-pods above the DaemonSets' pods, kube-reserved and system-reserved below the node's cpu and memory, eviction thresholds below its capacity"),
        );
    }
    out
}

/// The tiers of one pool, in fallback order (highest weight first).
fn tiered_pools(cluster: &ClusterPlan) -> BTreeMap<(String, String), Vec<&PoolPlan>> {
    let mut pools: BTreeMap<(String, String), Vec<&PoolPlan>> = BTreeMap::new();
    for p in &cluster.pools {
        pools.entry((p.profile.clone(), p.pool.clone())).or_default().push(p);
    }
    pools.retain(|_, tiers| tiers.len() > 1);
    for tiers in pools.values_mut() {
        tiers.sort_by_key(|t| t.tier_index);
    }
    pools
}

/// Every offering of a NodePool: what "this tier has no capacity" means to `--unavailable`.
fn tier_unavailable(p: &PoolPlan) -> Vec<Unavailable> {
    let cts: Vec<CapacityType> = p.capacity_types.clone();
    p.candidates
        .iter()
        .flat_map(|c| cts.iter().map(move |ct| Unavailable { instance_type: c.name.clone(), zone: "*".into(), capacity_type: ct.as_str().into() }))
        .collect()
}

/// A tier that receives no pod when every earlier tier has no capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct TierGap {
    pub cluster: String,
    pub profile: String,
    pub pool: String,
    /// The tier (NodePool) that never receives pods.
    pub tier: String,
    /// Where the pod went instead ("pending: …" or a NodePool name).
    pub instead: String,
}

/// False when the scheduler could never put the pod on this NodePool, whatever the capacity: a NoSchedule or NoExecute
/// taint it does not tolerate, or a requirement that contradicts its node selector (the first two checks of
/// nodeclaim.go `CanAdd`, as [`super::scheduler`] makes them). PreferNoSchedule taints are kept: `Relax` may tolerate them.
fn could_receive(pool: &manifests::NodePool, pod: &Pod) -> bool {
    let hard: Vec<super::requirements::Taint> = pool.taints.iter().filter(|t| t.effect != "PreferNoSchedule").cloned().collect();
    super::scheduler::admits(&hard, &pool.requirements, &pod.node_selector, &pod.tolerations).is_ok()
}

/// Simulates one pod of the pool with the first k tiers unavailable, for each k: tier k must receive it.
pub fn tier_gaps(c: &Compilation, cluster: &ClusterPlan, manifests: &Manifests) -> Vec<TierGap> {
    let mut out = Vec::new();
    let Some((catalog, labels)) = c.simulation_catalog(&cluster.region) else { return out };
    let tiered = tiered_pools(cluster);
    if tiered.is_empty() {
        return out;
    }
    for ((profile, pool), tiers) in tiered {
        let per_pod = 1;
        let pods = pool_pods("fallback-check", &pool, &tiers, per_pod, 1);
        let Some(pod) = pods.first() else { continue };
        // Only the NodePools this pod could ever land on are resolved against the catalog: resolving every pool of
        // the cluster for every tiered pool made this check most of a large compile.
        let prepared = super::prepare(catalog, labels, manifests, manifests.node_pools.iter().filter(|p| could_receive(p, pod)));
        let mut unavailable = Vec::new();
        for tier in &tiers {
            let placement = super::first_placement(&prepared, &pods, &unavailable);
            if placement.nodepool.as_deref() != Some(tier.name.as_str()) {
                let instead = match (placement.nodepool, placement.pending) {
                    (Some(other), _) => format!("NodePool {other}"),
                    (None, Some(reason)) => format!("pending: {reason}"),
                    (None, None) => "nowhere".into(),
                };
                out.push(TierGap { cluster: cluster.name.clone(), profile: profile.clone(), pool: pool.clone(), tier: tier.name.clone(), instead });
            }
            unavailable.extend(tier_unavailable(tier));
        }
    }
    out
}

/// Per workload: its NodeClaims at max replicas and what they cost, for `explain`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorkloadPlacement {
    pub profile: String,
    pub namespace: String,
    pub name: String,
    pub replicas: u32,
    /// The NodeClaims its replicas land on (shared with other workloads' pods when they pack together).
    pub nodeclaims: Vec<super::report::NodeClaimReport>,
    pub pending: usize,
    pub usd_per_hour: f64,
    pub price_estimate: bool,
    /// Which of the pool's types hold one replica (when the workload declares `requests`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitSummary>,
}

pub fn workload_placements(c: &Compilation, cluster: &ClusterPlan) -> Vec<WorkloadPlacement> {
    if cluster.ops.workloads.is_empty() {
        return Vec::new();
    }
    let simulated = cluster_manifests(&c.manifests_of(&cluster.name));
    let Some(report) = simulate_workloads(c, cluster, &simulated) else { return Vec::new() };
    cluster
        .ops
        .workloads
        .iter()
        .map(|w| {
            let nodeclaims: Vec<_> = report.nodeclaims.iter().filter(|nc| nc.pods.iter().any(|p| replica_of(p, &w.namespace, &w.name))).cloned().collect();
            WorkloadPlacement {
                fit: c.simulation_catalog(&cluster.region).and_then(|(catalog, _)| FitSummary::new(replica_fits(cluster, &simulated, catalog, w))),
                profile: w.profile.clone(),
                namespace: w.namespace.clone(),
                name: w.name.clone(),
                replicas: w.replicas_max,
                usd_per_hour: (nodeclaims.iter().map(|n| n.usd_per_hour).sum::<f64>() * 100.0).round() / 100.0,
                price_estimate: nodeclaims.iter().any(|n| n.price_estimate),
                pending: report.pending.iter().filter(|p| replica_of(&p.pod, &w.namespace, &w.name)).count(),
                nodeclaims,
            }
        })
        .collect()
}

/// Lint GP016: a tier of a tiered pool that never receives pods, even with every earlier tier out of capacity.
pub fn tier_findings(c: &Compilation, cluster: &ClusterPlan, simulated: &Manifests) -> Vec<crate::report::lint::Finding> {
    let mut out = Vec::new();
    for gap in tier_gaps(c, cluster, simulated) {
        let Some(plan) = cluster.pools.iter().find(|p| p.name == gap.tier) else { continue };
        if plan.allow.contains("GP016") {
            continue;
        }
        let Some(tier) = c.profile(&cluster.name, &gap.profile).into_iter().flat_map(|p| &p.pools).flat_map(|p| &p.tiers).find(|t| t.name.value == gap.tier) else {
            continue;
        };
        let span = tier.name.span;
        let diagnostic = c
            .sources
            .error(span, "GP016", format!("tier `{}` of pool `{}` never receives pods: with every earlier tier out of capacity, a pod of the pool goes to {}", gap.tier, gap.pool, gap.instead))
            .help("check the tier's weight, limits and instance types against the earlier tiers (`gpuplan simulate --unavailable` shows the fallback); silence with `allow \"GP016\"` in the tier")
            .warning();
        out.push(crate::report::lint::Finding { code: "GP016", cluster: gap.cluster, profile: gap.profile, pool: Some(gap.tier), span, diagnostic });
    }
    out
}
