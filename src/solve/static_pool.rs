//! What a static pool (`static replicas=…`) costs: its nodes exist whether pods run or not, so its cost is fixed,
//! like a reservation's, and counted against the budget before the usage-based pools are sized.
//!
//! The bound: `replicas` × the dearest worst-case price among the types the NodePool admits. Karpenter's static
//! provisioning creates each NodeClaim from the NodePool's template alone (kubernetes-sigs/karpenter v1.14.1
//! `pkg/controllers/static/provisioning/controller.go`, `Reconcile` → `scheduling.NewNodeClaimTemplate`; its
//! `ToNodeClaim` adds no instance-type list for a static NodeClaim: "For static we let cloudprovider.Create()"), and
//! the provider launches the cheapest available offering among every admitted type
//! (aws/karpenter-provider-aws v1.14.1 `pkg/providers/instance/instance.go`, `Create`, `filterInstanceTypes`,
//! `getCapacityType`: reserved, then spot, then on-demand). Which type that is changes with availability, and
//! every spot interruption or drift replacement launches again: over the pool's life any admitted type can hold
//! any replica. So the worst case takes the dearest for each (spot at its ceiling, on-demand by default), and the
//! expected cost the cheapest.
//!
//! Replacements: Karpenter creates a drifted or expired node's replacement before it deletes the node, within
//! `limits.nodes` (`designs/static-capacity.md`, "Disruption"). With `max-nodes` the nodes above the replicas are
//! at most `max-nodes − replicas`; without it, every replica (forceful drains ignore the disruption budgets:
//! `cost::forceful_drains`). They are the drain peak, as for the other pools.

use super::pool::{Candidate, PoolPlan};
use crate::catalog::cost::round_cents;
use crate::profile::{StaticPool, Tier};

/// The admitted type a replica costs most on (worst-case price; ties by name, so the figure is deterministic).
pub fn dearest(plan: &PoolPlan) -> Option<&Candidate> {
    plan.candidates.iter().max_by(|a, b| a.ceiling_usd_per_hour.total_cmp(&b.ceiling_usd_per_hour).then(b.name.cmp(&a.name)))
}

/// The admitted type Karpenter launches a replica on when every offering is available: the cheapest likely price.
pub fn cheapest(plan: &PoolPlan) -> Option<&Candidate> {
    plan.candidates.iter().min_by(|a, b| a.usd_per_hour.total_cmp(&b.usd_per_hour).then(a.name.cmp(&b.name)))
}

/// Static pools of a profile: the limit gpuplan reports (the units the replicas hold at least: `replicas` of the
/// smallest admitted type, what a Kueue quota may count on; the NodePool itself carries no such limit), the reason,
/// and the fixed cost. Returns the pools' total fixed $/h.
pub(super) fn size(pools: &mut [(PoolPlan, &Tier)]) -> f64 {
    let mut total = 0.0;
    for (plan, _) in pools.iter_mut() {
        let Some(s) = plan.static_pool else { continue };
        let Some(top) = dearest(plan).cloned() else { continue };
        if s.replicas == 0 {
            plan.limit = 0;
            plan.limit_reason = "static, parked: replicas=0 keeps no node and costs nothing (raise replicas to launch them again)".to_string();
            plan.fixed_usd_per_hour = Some(0.0);
            continue;
        }
        let node = top.ceiling_usd_per_hour + plan.node_storage_usd_per_hour;
        let fixed = f64::from(s.replicas) * node;
        plan.limit = s.replicas * plan.candidates.iter().map(|c| c.units).min().unwrap_or(0);
        plan.limit_reason = format!(
            "static: {} replicas kept whatever the pods, billed always; at most ${fixed:.2}/h ({} × the dearest admitted type, {} at ${:.2}/h with its volumes){}",
            s.replicas,
            s.replicas,
            top.name,
            node,
            s.max_nodes.map(|m| format!("; limits.nodes {m} during replacements")).unwrap_or_default(),
        );
        plan.fixed_usd_per_hour = Some(fixed);
        total += fixed;
    }
    total
}

/// At-limit, worst-case and drain-peak figures of a static pool (after [`size`]).
pub(super) fn finish(plan: &mut PoolPlan, s: StaticPool) {
    let worst = plan.fixed_usd_per_hour.unwrap_or(0.0);
    let top = dearest(plan).map_or(0.0, |c| c.ceiling_usd_per_hour + plan.node_storage_usd_per_hour);
    plan.at_limit_usd_per_hour = round_cents(f64::from(s.replicas) * cheapest(plan).map_or(0.0, |c| c.usd_per_hour + plan.node_storage_usd_per_hour));
    plan.worst_case_usd_per_hour = round_cents(worst);
    plan.draining_nodes = match s.max_nodes {
        // A parked pool has no node to replace: max-nodes only caps a later raise.
        _ if s.replicas == 0 => 0,
        Some(m) => m - s.replicas,
        // Forceful drains ignore disruption budgets: every replica can be replaced at once (`cost::forceful_drains`).
        None => s.replicas,
    };
    plan.drain_peak_usd_per_hour = round_cents(worst + f64::from(plan.draining_nodes) * top);
}

/// The `gpuplan.dev/drain-peak-basis` of a static NodePool: the replacements beside the replicas.
pub fn drain_peak_basis(plan: &PoolPlan, s: StaticPool) -> String {
    let n = plan.draining_nodes;
    let why = match s.max_nodes {
        Some(m) => format!("limits.nodes {m} − {} replicas", s.replicas),
        None => format!("no limits.nodes, and forceful drains ignore disruption budgets: {}", plan.forceful_drains()),
    };
    let grace = plan.disruption.termination_grace_period.as_deref().map_or("with no terminationGracePeriod".to_string(), |g| format!("for up to terminationGracePeriod {g}"));
    format!("{n} replacement node(s) launched beside the replicas they replace ({why}), {grace}")
}

/// The `gpuplan.dev/worst-case-basis` of a static NodePool.
pub fn worst_case_basis(plan: &PoolPlan, s: StaticPool) -> String {
    let top = dearest(plan).map(|c| format!("{} at ${:.2}/h", c.name, c.ceiling_usd_per_hour)).unwrap_or_default();
    format!("fixed: a static NodePool of {} nodes billed whether pods run or not, each at most the dearest admitted type ({top}; spot at its ceiling): any admitted type can hold a replica after an interruption or a replacement", s.replicas)
}
