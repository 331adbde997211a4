//! A fallback tier carries the work alone (issue 32, item 2). [`super::tiers`] proves a pod reaches each tier when the
//! tiers above it are dry; this check proves each tier *holds* every workload that may land on it, at max replicas,
//! with no other tier beside it: a spot shortage leaves only the on-demand tier, and the README promises that a
//! fallback tier "can take over all the work of the tier above". The combined check (E0180) passes when the tiers
//! share the replicas between them; this one does not (E0350). `explain` prints what each tier holds alone.

use std::fmt::Write as _;

use crate::catalog::CapacityType;
use crate::diagnostic::ErrorCode;
use crate::simulate;
use crate::simulate::manifests::Manifests;
use crate::solve::ops::workload::WorkloadPlan;
use crate::solve::PoolPlan;

use super::context::{ClusterCtx, PoolDiagnostic};
use super::simulated::{replica_of, replicas};
use super::tiers::tiered_pools;

/// One tier of a pool, simulated alone with every workload that may land on it at max replicas.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TierAlone {
    /// The tier's NodePool.
    pub nodepool: String,
    /// Its limit, in schedulable units of `resource`.
    pub limit: u32,
    pub resource: String,
    /// Per workload, in the cluster's order: its replicas placed on the tier alone.
    pub held: Vec<Held>,
}

/// One workload's replicas on a tier alone.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Held {
    /// `namespace/name`.
    pub workload: String,
    pub replicas: u32,
    pub max_replicas: u32,
}

impl TierAlone {
    /// Whether every replica of every workload found room.
    pub fn carries_all(&self) -> bool {
        self.held.iter().all(|h| h.replicas >= h.max_replicas)
    }

    /// This tier with only `workload`'s share (None when the workload may not land on it).
    pub fn only(&self, workload: &str) -> Option<TierAlone> {
        let held: Vec<_> = self.held.iter().filter(|h| h.workload == workload).cloned().collect();
        (!held.is_empty()).then(|| TierAlone { held, ..self.clone() })
    }

    /// "llm-spot alone holds 6 of 10 replicas of inference/server (limit 6 nvidia.com/gpu)".
    pub fn held_text(&self) -> String {
        let held: Vec<String> = self.held.iter().map(|h| format!("{} of {} replicas of {}", h.replicas, h.max_replicas, h.workload)).collect();
        format!("{} alone holds {} (limit {} {})", self.nodepool, held.join(", "), self.limit, self.resource)
    }
}

/// Every tier of one tiered pool, alone.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolAlone<'a> {
    pub profile: String,
    pub pool: String,
    pub tiers: Vec<(&'a PoolPlan, TierAlone)>,
    pub workloads: Vec<&'a WorkloadPlan>,
}

/// Each tiered pool with workloads on it: each tier simulated alone (only its NodePool prepared, so no other tier or
/// pool takes a replica) with the pool's workloads at max replicas, together (they share the tier's limit).
pub fn tiers_alone<'a>(ctx: &ClusterCtx<'a>, manifests: &Manifests) -> Vec<PoolAlone<'a>> {
    let cluster = ctx.cluster;
    let mut out = Vec::new();
    for ((profile, pool), tiers) in tiered_pools(cluster) {
        let workloads: Vec<&WorkloadPlan> =
            cluster.ops.workloads.iter().filter(|w| tiers.iter().any(|t| w.nodepools.contains(&t.name))).collect();
        if workloads.is_empty() {
            continue;
        }
        let alone = tiers
            .into_iter()
            .map(|tier| {
                let on_tier: Vec<&&WorkloadPlan> = workloads.iter().filter(|w| w.nodepools.contains(&tier.name)).collect();
                let pods: Vec<_> = on_tier.iter().flat_map(|w| replicas(cluster, w, w.replicas_max)).collect();
                let prepared = simulate::prepare(ctx.catalog, ctx.type_labels, manifests, manifests.node_pools.iter().filter(|p| p.name == tier.name));
                let report = simulate::run_prepared(&prepared, &pods, &[]);
                let held = on_tier
                    .iter()
                    .map(|w| {
                        let placed = report.nodeclaims.iter().flat_map(|nc| &nc.pods).filter(|p| replica_of(p, &w.namespace, &w.name)).count();
                        Held { workload: format!("{}/{}", w.namespace, w.name), replicas: placed as u32, max_replicas: w.replicas_max }
                    })
                    .collect();
                (tier, TierAlone { nodepool: tier.name.clone(), limit: tier.limit, resource: tier.resource().to_string(), held })
            })
            .collect();
        out.push(PoolAlone { profile, pool, tiers: alone, workloads });
    }
    out
}

/// E0350, one per pool: a fallback tier (not the first; not a reservation, whose size is bought) that cannot hold the
/// pool's workloads alone. At the pool's line in the profile (the
/// tiers share it; the fix is the pool's or the budget's), a warning on an adopted pool.
pub fn tier_load_diagnostics(ctx: &ClusterCtx, manifests: &Manifests) -> Vec<PoolDiagnostic> {
    let mut out = Vec::new();
    for pool in tiers_alone(ctx, manifests) {
        // The first tier is what the others fall back from (a reservation is smaller by design): the fallbacks must hold it all.
        let Some((short, _)) = pool.tiers.iter().skip(1).find(|(p, t)| p.fixed_usd_per_hour.is_none() && !t.carries_all()) else { continue };
        let Some(spec) = ctx.profile(&pool.profile).into_iter().flat_map(|p| &p.pools).find(|p| p.name.value == pool.pool) else { continue };
        let held: Vec<String> = pool.tiers.iter().map(|(_, t)| t.held_text()).collect();
        let diagnostic = ctx
            .sources
            .error(spec.name.span, ErrorCode::E0350, format!("a tier of pool `{}` cannot carry its workloads alone: {}", pool.pool, held.join("; ")))
            .label(format!("fallback tier {} cannot take over all the work", short.name))
            .help(fix(ctx, &pool, spec.preset.value == crate::profile::Preset::Tiered));
        out.push(PoolDiagnostic { profile: pool.profile.clone(), nodepool: short.name.clone(), span: spec.name.span, diagnostic: short.whole_cluster_severity(diagnostic) });
    }
    out
}

/// What the pool's workloads need per tier (schedulable units at max replicas) and the two real fixes, with figures:
/// the budget that gives every tier that much (each pool's worst case grows with its limit, as the solver's common
/// limit grows them all), and the spot types a tier could keep within today's budget.
fn fix(ctx: &ClusterCtx, pool: &PoolAlone, tiered: bool) -> String {
    let need: u32 = pool.workloads.iter().map(|w| w.replicas_max * w.gpus_per_replica.max(1)).sum();
    let resource = pool.tiers.first().map_or("nvidia.com/gpu", |(p, _)| p.resource());
    let common = pool.tiers.iter().map(|(p, _)| p.limit).min().unwrap_or(0).max(1);
    let per_unit = |p: &PoolPlan| p.worst_case_usd_per_hour / f64::from(p.limit.max(1));
    let profile_pools = || ctx.cluster.pools.iter().filter(|p| p.profile == pool.profile);
    // Pools sized by the budget grow with the common limit; capped and fixed-cost pools stay as they are.
    let budget_needed: f64 = profile_pools()
        .map(|p| match (p.fixed_usd_per_hour, p.limit_reason.starts_with("budget")) {
            (Some(fixed), _) => fixed,
            (None, true) => per_unit(p) * f64::from(need.max(p.limit * need / common)),
            (None, false) => p.worst_case_usd_per_hour,
        })
        .sum();
    let mut help = format!("a fallback tier must take over all the work of the tier above: the workloads need {need} {resource} on each tier; ");
    // A tier below the need that its `max-accelerators` caps (not the budget) grows only when the cap does: a budget
    // figure would not fix it.
    let capped: Vec<&str> = pool.tiers.iter().map(|(p, _)| *p).filter(|p| p.limit < need && p.fixed_usd_per_hour.is_none() && !p.limit_reason.starts_with("budget")).map(|p| p.name.as_str()).collect();
    if !capped.is_empty() {
        let _ = write!(help, "raise max-accelerators to {need} (it caps {})", capped.join(", "));
        help.push_str(", or lower the workloads' replicas max");
        return help;
    }
    let budget = profile_pools().find_map(|p| p.budget_usd_per_hour);
    match budget {
        Some(b) => {
            let _ = write!(help, "raise the budget from ${b:.2}/h to about ${:.2}/h", budget_needed.ceil());
            let slack = b - profile_pools().map(|p| p.worst_case_usd_per_hour).sum::<f64>();
            if let Some(spot) = cheaper_spot(pool, need, slack, tiered) {
                let _ = write!(help, ", or {spot}");
            }
        }
        None => {
            let _ = write!(help, "raise each tier's max-accelerators to {need}");
        }
    }
    help.push_str(", or lower the workloads' replicas max");
    help
}

/// "admit fewer, cheaper spot types …" when the pool's spot tiers, priced at a cheaper dearest type, would leave room
/// for `need` units on every tier within the budget (today's worst cases plus `slack`); None when no such set exists.
fn cheaper_spot(pool: &PoolAlone, need: u32, slack: f64, tiered: bool) -> Option<String> {
    let is_spot = |p: &PoolPlan| p.capacity_types.contains(&CapacityType::Spot);
    let spot: Vec<&PoolPlan> = pool.tiers.iter().map(|(p, _)| *p).filter(|p| is_spot(p)).collect();
    let tier = *spot.first()?;
    // Per unit with each node's volumes, as the worst cases compared here count them.
    let per = |c: &crate::solve::Candidate| (c.ceiling_usd_per_hour + tier.node_storage_usd_per_hour) / f64::from(c.units.max(1));
    let others: f64 = pool.tiers.iter().map(|(p, _)| *p).filter(|p| !is_spot(p)).map(|p| p.worst_case_usd_per_hour / f64::from(p.limit.max(1))).sum();
    let available = pool.tiers.iter().map(|(p, _)| p.worst_case_usd_per_hour).sum::<f64>() + slack.max(0.0);
    // The dearest worst-case $/unit each spot tier may keep.
    let ceiling = (available / f64::from(need) - others) / spot.len() as f64;
    let kept: Vec<&str> = tier.candidates.iter().filter(|c| per(c) <= ceiling + 1e-9).map(|c| c.name.as_str()).collect();
    let dearest = tier.candidates.iter().max_by(|a, b| per(a).total_cmp(&per(b)))?;
    if kept.is_empty() || kept.len() == tier.candidates.len() {
        return None;
    }
    // `types` on the spot tier alone: on the pool it would admit the dearer of them on demand too (named types pass
    // `price-ratio-max`), and without it the spot widening (`solve::select`) adds dearer types back to reach 15.
    let how = if tiered { format!("name them in tier `{}`'s `types`", tier.name) } else { "make the pool `tiered` and name them in its spot tier's `types`".to_string() };
    Some(format!(
        "admit fewer, cheaper spot types: {}'s worst case is priced at its dearest type, {} (${:.4}/{} at the on-demand price); keeping the {} types at most ${ceiling:.4}/{} ({}) leaves room for {need} on every tier ({how}; the spot widening adds dearer types to reach 15 otherwise); fewer spot types share more interruptions, which lint GP006 then names: that trade is the budget's",
        tier.name,
        dearest.name,
        per(dearest),
        tier.resource(),
        kept.len(),
        tier.resource(),
        kept.join(", ")
    ))
}
