//! The check stage: what compile proves about one cluster's rendered objects as a whole, after each object passed
//! its schema. The simulation is where it proves something about a compile.
//!
//! * [`ops`]: what a schema cannot say about the ops objects (ClusterPolicy images, the adapter config, HPA metrics
//!   served, KEDA's webhook): a compile error, nothing is written.
//! * [`kubelet`]: E0160, kubelet settings that leave no room for a pod (a probe pod per pool).
//! * [`workloads`]: every `workload` at its max replicas on the freshly generated manifests (E0180 when a replica
//!   cannot schedule within its pool, naming the limit; E0181 when it lands on another pool), and per-workload
//!   placement and cost for `explain`.
//! * [`demands`]: every declared demand at once, workloads at max replicas beside every queue's quota in use by
//!   whole-node gang jobs (E0340 when a pod pends; a warning on an adopted pool).
//! * [`tier_load`]: E0350, a tier of a tiered pool that cannot hold the pool's workloads alone (a fallback tier must
//!   carry the work of the tier above), and what each tier holds alone for `explain`.
//! * [`fit`]: which types of a workload's pool hold one replica (lint GP018, `explain`).
//! * [`tiers`]: the fallback order of tiered pools, as [`TierGap`]s (lint GP016 reports them: a tier that never
//!   receives pods).
//! * [`placement`]: E0383, a pool in a cluster placement group that may launch in more than one zone.
//! * [`simulated`]: the cluster's objects in the simulator's form and the pods gpuplan tells users to write.
//!
//! A check sees one [`ClusterCtx`], which compile builds (sources, the cluster's plan and profiles, its catalog), and
//! returns diagnostics or typed values; it never builds lint findings.

pub mod context;
pub mod demands;
pub mod fit;
pub mod kubelet;
pub mod ops;
pub mod placement;
pub mod simulated;
pub mod tier_load;
pub mod tiers;
pub mod workloads;

pub use context::{ClusterCtx, PoolDiagnostic};
pub use demands::{demand_diagnostics, simulate_demands};
pub use fit::{replica_fits, FitSummary, ReplicaFit};
pub use kubelet::kubelet_diagnostics;
pub use simulated::{cluster_manifests, pool_pods, workload_pods};
pub use tier_load::{tier_load_diagnostics, tiers_alone, Held, PoolAlone, TierAlone};
pub use tiers::{tier_gaps, TierGap};
pub use workloads::{simulate_workloads, workload_diagnostics, workload_placements, write_placements, WorkloadPlacement};
