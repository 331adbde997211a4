//! Kueue queues, compiled from the same profiles as the NodePools so that what a queue may admit never drifts
//! from what its pool may launch:
//!
//! - the intent ([`Queue`]), parsed by `profile/queue.rs`;
//! - [`plan`] (now `solve::queue`, planned with the pools): each queue's quota per flavor (one flavor per NodePool
//!   of its pool, in the pool's fallback order),
//!   and the checks against the NodePools: Σ nominal quota of a flavor ≤ that NodePool's limit (E0210), and
//!   what the queues can admit priced like the budget check (E0211);
//! - [`render`]: the Kueue v1beta2 objects — a `ResourceFlavor` per NodePool a queue uses, a `ClusterQueue` per
//!   queue, a `LocalQueue` in the queue's namespace.
//!
//! The Kueue API is the one `../shared/schemas/kueue` defines (kubernetes-sigs/kueue v0.19.2,
//! `apis/kueue/v1beta2`). Error codes E0200–E0219 belong to queues (parsing in `profile/queue.rs`; E0205 across
//! profiles, E0208 once shares resolve, E0210–E0212 in `solve::queue`); lint codes GP020–GP021 read the rendered objects (`report/lint.rs`).

pub mod plan;
pub mod render;

use crate::diagnostic::{Span, Spanned};

pub use plan::{plan_cluster, FlavorQuota, QueuePlan};

/// The Kueue API group and version gpuplan emits.
pub const API_VERSION: &str = "kueue.x-k8s.io/v1beta2";
/// The label a Job (or any Kueue-managed workload) names its LocalQueue with.
pub const QUEUE_NAME_LABEL: &str = "kueue.x-k8s.io/queue-name";
// MOVED(issue 29): re-export until the merge
pub use crate::solve::NODEPOOL_LABEL;

/// `queue "research" namespace="ml-research" pool="training" { gpus nominal=16 borrowing-limit=8; cohort "ml"; … }`
#[derive(Debug, Clone)]
pub struct Queue {
    pub name: Spanned<String>,
    /// Where its LocalQueue lives (and the only namespace the ClusterQueue admits from).
    pub namespace: Spanned<String>,
    /// A pool of the profile (every tier a flavor, in fallback order) or one tier's NodePool name.
    pub pool: Spanned<String>,
    pub quota: Spanned<Quota>,
    pub cohort: Option<Spanned<String>>,
    /// `gang #true`: all-or-nothing admission, which needs Kueue's `waitForPodsReady` (a Configuration setting).
    pub gang: Option<Spanned<bool>>,
    pub preemption: Preemption,
    pub span: Span,
}

/// The accelerator quota of a queue, per flavor (each NodePool of its pool): Kueue quotas are per flavor.
#[derive(Debug, Clone, PartialEq)]
pub struct Quota {
    /// `gpus` (NVIDIA/AMD pools) or `neuron-devices` (Neuron pools), as written.
    pub node: &'static str,
    pub nominal: Spanned<Amount>,
    pub borrowing_limit: Option<Spanned<Amount>>,
    pub lending_limit: Option<Spanned<Amount>>,
}

/// A number of schedulable accelerators (the resource pods request: time-slices or MIG devices on shared pools),
/// or a share of the flavor's NodePool limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    Count(u32),
    Percent(u32),
}

impl Amount {
    /// Units of a flavor whose NodePool limit is `limit`; a share rounds down (it must fit the limit).
    pub fn of(self, limit: u32) -> u32 {
        match self {
            Amount::Count(n) => n,
            Amount::Percent(p) => (u64::from(p) * u64::from(limit) / 100) as u32,
        }
    }

    /// As written in a profile: `16` or `"50%"`.
    pub fn kdl(self) -> String {
        match self {
            Amount::Count(n) => n.to_string(),
            Amount::Percent(p) => format!("\"{p}%\""),
        }
    }
}

impl std::fmt::Display for Amount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Amount::Count(n) => write!(f, "{n}"),
            Amount::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// ClusterQueue `spec.preemption`; unset fields take Kueue's defaults (all `Never`), which gpuplan writes out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Preemption {
    pub within_cluster_queue: Option<Spanned<String>>,
    pub reclaim_within_cohort: Option<Spanned<String>>,
    pub borrow_within_cohort: Option<Spanned<String>>,
}

/// Kueue's enums for `spec.preemption` (CRD `kueue.x-k8s.io_clusterqueues.yaml`, v1beta2), by profile property.
pub const PREEMPTION_VALUES: [(&str, &[&str]); 3] = [
    ("within-cluster-queue", &["Never", "LowerPriority", "LowerOrNewerEqualPriority"]),
    ("reclaim-within-cohort", &["Never", "LowerPriority", "Any"]),
    ("borrow-within-cohort", &["Never", "LowerPriority"]),
];

impl Preemption {
    pub fn within_cluster_queue(&self) -> &str {
        self.within_cluster_queue.as_ref().map_or("Never", |v| v.as_str())
    }
    pub fn reclaim_within_cohort(&self) -> &str {
        self.reclaim_within_cohort.as_ref().map_or("Never", |v| v.as_str())
    }
    pub fn borrow_within_cohort(&self) -> &str {
        self.borrow_within_cohort.as_ref().map_or("Never", |v| v.as_str())
    }
}
