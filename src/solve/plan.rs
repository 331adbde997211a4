//! What the solver hands to the later stages: a [`Plan`] of one [`ClusterPlan`] per cluster.

use super::node_class::NodeClassPlan;
use super::ops::OpsPlan;
use super::overlays::OverlayPlan;
use super::pool::PoolPlan;
use super::queue::KueuePlan;

/// The solver's decisions for every cluster of one compile.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub clusters: Vec<ClusterPlan>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClusterPlan {
    pub name: String,
    pub region: String,
    pub catalog_digest: String,
    pub accelerated_ami: bool,
    /// EKS Auto Mode (`auto-mode #true`): NodeClasses instead of EC2NodeClasses, and no GPU Operator or device-plugin
    /// add-ons (`ops`): Auto Mode ships them.
    pub auto_mode: bool,
    /// The SQS queue Karpenter's interruption handling reads (`interruption-queue`), as the cluster's profiles name it.
    pub interruption_queue: Option<String>,
    /// The EKS node DaemonSets every node runs (`cluster { node-daemons … }`, else `charts::node_daemons::default_names`):
    /// the fit checks count their requests.
    pub node_daemons: Vec<String>,
    /// Argo CD / Flux objects to generate for out/<cluster> (the first profile of the cluster that asks).
    pub gitops: Option<crate::profile::Gitops>,
    pub node_classes: Vec<NodeClassPlan>,
    /// Sorted by weight, highest first.
    pub pools: Vec<PoolPlan>,
    pub profiles: Vec<ProfileSummary>,
    /// Workloads (PDB/HPA), alerts, GPU Operator config: see `ops`.
    pub ops: OpsPlan,
    /// Kueue flavors and queues: see `queue`.
    pub queues: KueuePlan,
    /// The profiles' `overlay` blocks, one NodeOverlay each, sorted by name (see `overlays`).
    pub overlays: Vec<OverlayPlan>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProfileSummary {
    pub name: String,
    pub source: String,
    pub budget_usd_per_hour: Option<f64>,
    pub at_limit_usd_per_hour: f64,
    /// Steady state: every pool at its limits (see `cost::worst_case`).
    pub worst_case_usd_per_hour: f64,
    /// While nodes drain beside their replacements (see `cost::drain_peak`), for up to the longest
    /// `terminationGracePeriod` among the pools (None: some pool has none, so a drain may never end).
    pub drain_peak_usd_per_hour: f64,
    pub drain_peak_for: Option<String>,
    /// Types whose worst-case price is an estimate, with the source's words: what the budget check could not verify.
    pub unverified_prices: Vec<String>,
}
