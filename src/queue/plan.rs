//! The queues of one cluster resolved against its NodePools: now `solve::queue`, planned with the pools.

// MOVED(issue 29): re-export until the merge
pub use crate::solve::queue::{mebibytes, plan_cluster, FlavorPlan, FlavorQuota, KueuePlan, QueuePlan, ResourceQuota, FLAVOR_MAX};
