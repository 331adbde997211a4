//! The fallback order of tiered pools: with every earlier tier out of capacity, a pod of the pool must land on the
//! next tier. A tier that never receives pods is a [`TierGap`]; lint reports it (GP016).

use std::collections::BTreeMap;

use crate::catalog::CapacityType;
use crate::simulate;
use crate::simulate::instances::Unavailable;
use crate::simulate::manifests::{Manifests, NodePool};
use crate::simulate::pods::Pod;
use crate::simulate::requirements::Taint;
use crate::solve::{ClusterPlan, PoolPlan};

use super::context::ClusterCtx;
use super::simulated::pool_pods;

/// The tiers of one pool, in fallback order (highest weight first).
pub(super) fn tiered_pools(cluster: &ClusterPlan) -> BTreeMap<(String, String), Vec<&PoolPlan>> {
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
/// nodeclaim.go `CanAdd`, as [`simulate::scheduler`] makes them). PreferNoSchedule taints are kept: `Relax` may tolerate them.
fn could_receive(pool: &NodePool, pod: &Pod) -> bool {
    let hard: Vec<Taint> = pool.taints.iter().filter(|t| t.effect != "PreferNoSchedule").cloned().collect();
    simulate::scheduler::admits(&hard, &pool.requirements, &pod.node_selector, &pod.tolerations).is_ok()
}

/// Simulates one pod of the pool with the first k tiers unavailable, for each k: tier k must receive it.
pub fn tier_gaps(ctx: &ClusterCtx, manifests: &Manifests) -> Vec<TierGap> {
    let cluster = ctx.cluster;
    let mut out = Vec::new();
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
        let prepared = simulate::prepare(ctx.catalog, ctx.type_labels, manifests, manifests.node_pools.iter().filter(|p| could_receive(p, pod)));
        let mut unavailable = Vec::new();
        for tier in &tiers {
            let placement = simulate::first_placement(&prepared, &pods, &unavailable);
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
