//! Moved to the check stage ([`crate::check`]): workload fit, kubelet probes, tier gaps.

// MOVED(issue 29): re-export until the merge
pub use crate::check::{cluster_manifests, pool_pods, replica_fits, workload_pods, FitSummary, ReplicaFit, TierGap, WorkloadPlacement};
