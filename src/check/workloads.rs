//! The workloads at their max replicas, simulated together on the cluster's generated NodePools: compile's proof
//! that the limits hold their pods (E0180 when a replica cannot schedule within its pool, naming the limit; E0181
//! when it lands on another pool), and per-workload placement and cost for `explain`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::diagnostic::ErrorCode;
use crate::diagnostic::ProfileDiagnostic;
use crate::simulate::manifests::Manifests;
use crate::simulate::report::{price, NodeClaimReport};
use crate::simulate::{self, Report};

use super::context::ClusterCtx;
use super::fit::{replica_fits, FitSummary};
use super::simulated::{replica_of, workload_pods, workload_pools};
use super::tier_load::{tiers_alone, TierAlone};

/// Every workload of the cluster at max replicas, simulated together (they share pools and limits) on the
/// cluster's generated objects (`simulated`, from `cluster_manifests`).
pub fn simulate_workloads(ctx: &ClusterCtx, simulated: &Manifests) -> Option<Report> {
    let cluster = ctx.cluster;
    if cluster.ops.workloads.is_empty() {
        return None;
    }
    let pods = workload_pods(cluster);
    Some(simulate::run_prepared(&simulate::prepare(ctx.catalog, ctx.type_labels, simulated, &simulated.node_pools), &pods, &[]))
}


/// compile's check on one cluster: E0180 (a replica stays pending; the reason names the limit) and E0181 (a replica
/// lands on a NodePool that is not the workload's).
pub fn workload_diagnostics(ctx: &ClusterCtx, simulated: &Manifests) -> Vec<ProfileDiagnostic> {
    let cluster = ctx.cluster;
    let mut out = Vec::new();
    let Some(report) = simulate_workloads(ctx, simulated) else { return out };
    for w in &cluster.ops.workloads {
        let Some(spec) = ctx.profile(&w.profile).into_iter().flat_map(|p| &p.ops.workloads).find(|x| x.name.value == w.name && x.namespace.value == w.namespace) else {
            continue;
        };
        let pending: Vec<_> = report.pending.iter().filter(|p| replica_of(&p.pod, &w.namespace, &w.name)).collect();
        if let Some(first) = pending.first() {
            out.push(
                ctx.sources
                    .error(spec.replicas_max.span, ErrorCode::E0180, format!(
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
                ctx.sources
                    .error(spec.pool.span, ErrorCode::E0181, format!("workload `{}/{}`: {} replica(s) land on NodePool `{pool}`, not on pool `{}` (first: {pod})", w.namespace, w.name, stray.len(), w.pool))
                    .help("another NodePool carries the same label and tolerable taints with a higher weight: give the pools distinct labels"),
            );
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
    pub nodeclaims: Vec<NodeClaimReport>,
    pub pending: usize,
    pub usd_per_hour: f64,
    pub price_estimate: bool,
    /// Which of the pool's types hold one replica (when the workload declares `requests`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitSummary>,
    /// On a tiered pool: each tier simulated alone with the pool's workloads (`tier_load`), this workload's share.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alone: Vec<TierAlone>,
}

/// Every workload of the cluster at max replicas on its objects (`simulated`, from `cluster_manifests`), for `explain`.
pub fn workload_placements(ctx: &ClusterCtx, simulated: &Manifests) -> Vec<WorkloadPlacement> {
    let cluster = ctx.cluster;
    let Some(report) = simulate_workloads(ctx, simulated) else { return Vec::new() };
    let alone: Vec<TierAlone> = tiers_alone(ctx, simulated).into_iter().flat_map(|p| p.tiers.into_iter().map(|(_, t)| t)).collect();
    cluster
        .ops
        .workloads
        .iter()
        .map(|w| {
            let nodeclaims: Vec<_> = report.nodeclaims.iter().filter(|nc| nc.pods.iter().any(|p| replica_of(p, &w.namespace, &w.name))).cloned().collect();
            WorkloadPlacement {
                fit: FitSummary::new(replica_fits(cluster, simulated, ctx.catalog, w)),
                alone: alone.iter().filter_map(|t| t.only(&format!("{}/{}", w.namespace, w.name))).collect(),
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

/// explain's per-workload section: where the replicas go at max replicas, and what the nodes cost.
pub fn write_placements(out: &mut String, placements: &[WorkloadPlacement]) {
    if placements.is_empty() {
        return;
    }
    out.push_str("\nworkloads at max replicas (simulated as Karpenter schedules them; `gpuplan simulate` for any pods)\n");
    for w in placements {
        let pending = if w.pending > 0 { format!(", {} PENDING", w.pending) } else { String::new() };
        let _ = writeln!(out, "  {}/{} ({} replicas{pending}): {}/h", w.namespace, w.name, w.replicas, price(w.usd_per_hour, w.price_estimate));
        let mut groups: BTreeMap<(String, String, String), (usize, f64, bool)> = BTreeMap::new();
        for n in &w.nodeclaims {
            let g = groups.entry((n.nodepool.clone(), n.instance_type.clone(), n.capacity_type.clone())).or_default();
            g.0 += 1;
            g.1 += n.usd_per_hour;
            g.2 |= n.price_estimate;
        }
        for ((pool, ty, ct), (count, usd, est)) in groups {
            let _ = writeln!(out, "    NodePool {pool}: {count} × {ty} ({ct}) {}/h", price(usd, est));
        }
        if !w.alone.is_empty() {
            // Each tier alone, with the pool's other workloads at max replicas beside this one (they share its limit).
            let tiers: Vec<String> = w.alone.iter().flat_map(|t| t.held.iter().map(move |h| format!("{} {} of {} (limit {})", t.nodepool, h.replicas, h.max_replicas, t.limit))).collect();
            let _ = writeln!(out, "    alone      each tier with the others out of capacity holds: {}", tiers.join(", "));
        }
        if let Some(fit) = w.fit.as_ref().filter(|f| !f.too_small.is_empty()) {
            let _ = writeln!(out, "    too small  one replica does not fit on {}", fit.too_small_text());
            let _ = writeln!(out, "               {}", fit.price_text());
        } else if let Some(fit) = &w.fit {
            let _ = writeln!(out, "    fits       one replica fits on every type of the pool ({})", fit.fits.len());
        }
    }
}
