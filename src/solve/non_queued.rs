//! What the workloads that no queue admits (every `workload` block: Deployments and StatefulSets scheduled
//! directly) hold of each NodePool at their max replicas, so that queue shares divide what is left (issue 32: in
//! profiles/training.kdl the `trainer` StatefulSet holds 32 of the pool's 64 GPUs, which the two ClusterQueues had
//! shared out in full).
//!
//! Karpenter tries NodePools by weight, highest first, and stops at a NodePool's limit
//! (kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/provisioning/scheduling/scheduler.go`: templates ordered by
//! weight; `nodeclaim.go` "all available instance types exceed limits for nodepool"), so a workload's replicas fill
//! its pool's tiers in that order. The compile-time simulation of every declared demand at once
//! (`check::demands`) proves the result with the scheduler itself.

use std::collections::BTreeMap;

use super::ops::workload::WorkloadPlan;
use super::pool::PoolPlan;

/// Accelerator units per NodePool name that the workloads request at max replicas. `pools` in weight order (the
/// cluster's own order); NodePools no workload uses are absent. Requests, not whole nodes: replicas smaller than a
/// node leave the rest of it to queued jobs, which Kueue's flavor sends to the same NodePool.
pub fn non_queued_use(pools: &[PoolPlan], workloads: &[WorkloadPlan]) -> BTreeMap<String, u32> {
    let mut used: BTreeMap<String, u32> = BTreeMap::new();
    for w in workloads.iter().filter(|w| w.gpus_per_replica > 0) {
        let mut left = w.replicas_max;
        for p in pools.iter().filter(|p| w.nodepools.contains(&p.name)) {
            let held = used.entry(p.name.clone()).or_default();
            let here = left.min(p.limit.saturating_sub(*held) / w.gpus_per_replica);
            *held += here * w.gpus_per_replica;
            left -= here;
        }
    }
    used.retain(|_, n| *n > 0);
    used
}
