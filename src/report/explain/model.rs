//! The typed explanation: what `explain` prints in either format, serialized as-is for `--format json`.

use serde::Serialize;

use crate::catalog::cost::Bound;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ExplainFormat {
    /// Aligned plain-text tables.
    #[default]
    Table,
    // Doc comments here are `gpuplan explain --help`'s text: no rustdoc links.
    /// Markdown: headings per cluster, profile and NodePool, tables for candidates and costs (a pull-request comment,
    /// a wiki page).
    Markdown,
    /// The explanation as pretty JSON (its shape: docs/explain.schema.json).
    Json,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExplainError {
    #[error("no profile `{name}` in this compile{}; profiles: {}", .suggestion.as_ref().map(|s| format!(" ({s})")).unwrap_or_default(), .known.join(", "))]
    UnknownProfile { name: String, suggestion: Option<String>, known: Vec<String> },
    #[error("no instance type `{name}` in the catalogs of this compile{}", .suggestion.as_ref().map(|s| format!(" ({s})")).unwrap_or_default())]
    UnknownType { name: String, suggestion: Option<String> },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    pub clusters: Vec<ClusterExplanation>,
    /// The catalog sources of every estimated number in the explanation.
    pub estimate_sources: Vec<EstimateSource>,
    /// `--why-not TYPE`: each type's answer per NodePool (absent without the flag).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub why_not: Vec<super::WhyNot>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct EstimateSource {
    pub id: String,
    pub description: String,
    pub fetched_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterExplanation {
    pub name: String,
    pub region: String,
    /// "<region>@<catalog digest>", as in the provenance annotations.
    pub catalog: String,
    pub profiles: Vec<ProfileExplanation>,
    /// Where each workload's pods go at max replicas, and what that costs (`gpuplan simulate`).
    pub workloads: Vec<crate::check::WorkloadPlacement>,
    /// Kueue queues: queue → flavor → NodePool → $/h.
    pub queues: Vec<QueueExplanation>,
}

/// One Kueue queue and where its quota goes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueExplanation {
    pub name: String,
    pub namespace: String,
    pub profile: String,
    pub cohort: Option<String>,
    pub gang: bool,
    pub resource: String,
    /// As written in the profile.
    pub quota: String,
    /// In the order Kueue tries them (the pool's fallback order).
    pub flavors: Vec<QueueFlavorExplanation>,
    /// The pool's NodePools the non-queued workloads fill at max replicas: not flavors of a share.
    pub full: Vec<String>,
}

/// One flavor of a queue: the NodePool it stands for, the quota there and its worst-case price.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueFlavorExplanation {
    /// The ResourceFlavor, named after its NodePool.
    pub flavor: String,
    pub nodepool_limit: u32,
    /// What non-queued workloads hold of the NodePool at max replicas: a share divides the limit minus this.
    pub non_queued: u32,
    pub nominal: u32,
    pub borrowing_limit: Option<u32>,
    pub lending_limit: Option<u32>,
    /// The NodePool's worst case holding the nominal quota, and nominal + borrowing limit (the budget's price basis).
    pub nominal_usd_per_hour: f64,
    pub with_borrowing_usd_per_hour: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileExplanation {
    pub name: String,
    pub source: String,
    pub priority: i64,
    pub budget_usd_per_hour: Option<f64>,
    pub at_limit_usd_per_hour: f64,
    pub worst_case_usd_per_hour: f64,
    pub at_limit_is_estimate: bool,
    pub worst_case_is_estimate: bool,
    /// worst case ÷ budget (≤ 1 when the budget holds).
    pub worst_case_budget_share: Option<f64>,
    /// "guaranteed" (on-demand prices bound every node), "empirical" (some pool opted into
    /// `spot-ceiling "observed-max"`) or "estimated" (some worst-case price is an estimate). A steady-state bound.
    pub worst_case_bound: Bound,
    /// Every pool's drain peak at once, for up to `drain_peak_for` (None: some pool's drain has no end).
    pub drain_peak_usd_per_hour: f64,
    pub drain_peak_for: Option<String>,
    /// Types whose worst-case price the catalog marks as an estimate: what the budget check could not verify.
    pub unverified_prices: Vec<String>,
    pub pools: Vec<PoolExplanation>,
    /// Profile-wide lint findings (AMI, budget, allow codes).
    pub findings: Vec<FindingExplanation>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolExplanation {
    /// The NodePool name.
    pub name: String,
    /// The profile's `pool` it comes from.
    pub pool: String,
    /// 1-based position in the pool's fallback order.
    pub tier: usize,
    pub tiers: usize,
    pub resource: String,
    pub capacity_types: Vec<String>,
    pub zones: Vec<String>,
    pub weight: u32,
    /// A static NodePool's `spec.replicas` (it then has no weight).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<u32>,
    pub weight_explicit: bool,
    pub weight_reason: String,
    pub limit: u32,
    pub limit_reason: String,
    /// Schedulable accelerators on the largest allowed node.
    pub largest_node: u32,
    pub units_per_accelerator: u32,
    pub at_limit_usd_per_hour: f64,
    pub worst_case_usd_per_hour: f64,
    pub at_limit_is_estimate: bool,
    pub worst_case_is_estimate: bool,
    /// "guaranteed" or "empirical", and what the worst case assumes, in words.
    pub worst_case_bound: Bound,
    pub worst_case_basis: String,
    /// Nodes that can be deleting at once beside their replacements (outside the limits).
    pub draining_nodes: u32,
    pub drain_peak_usd_per_hour: f64,
    pub drain_peak_basis: Option<String>,
    /// On a fallback tier: how its pods return to the tiers above once they have capacity again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub way_back: Option<String>,
    /// The cpu limit that caps physical nodes of a shared (time-sliced/MIG) pool.
    pub cpu_limit: Option<u32>,
    /// A capacity reservation's fixed $/h.
    pub fixed_usd_per_hour: Option<f64>,
    /// What a workload's pod template needs to land on this pool (and only this pool).
    pub placement: crate::solve::PodPlacement,
    pub candidates: Vec<CandidateExplanation>,
    pub removed: Vec<RemovalExplanation>,
    pub allow: Vec<String>,
    pub notes: Vec<String>,
    pub findings: Vec<FindingExplanation>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidateExplanation {
    /// 1 = cheapest $/accelerator-hour.
    pub rank: usize,
    pub name: String,
    /// Physical accelerators per node.
    pub accelerators: u32,
    /// Schedulable units per node (time slices or MIG devices; the accelerators when unshared).
    pub units: u32,
    pub accelerator_name: String,
    pub memory_gib_per_accelerator: f64,
    pub usd_per_hour: f64,
    pub usd_per_accelerator_hour: f64,
    pub usd_per_accelerator_gib_hour: f64,
    pub estimate: bool,
    /// The worst-case price per accelerator-hour (spot at on-demand unless `spot-ceiling "observed-max"`).
    pub ceiling_usd_per_accelerator_hour: f64,
    /// The worst-case price is an estimate.
    pub ceiling_estimate: bool,
    /// The catalog source id of the estimated price.
    pub estimate_source: Option<String>,
    /// The profile's overlay whose price ranks this type (its $/accelerator-hour is then the overlaid price; $/h and
    /// the worst case stay at list price): "overlay g5-edp (price-adjustment -30%)".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlay: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemovalExplanation {
    pub constraint: String,
    /// The profile line that says it (None: the solver's own rule, such as the pool's limit).
    pub location: Option<String>,
    pub count: usize,
    /// Every removed type, in the order the solver recorded them (catalog order; rank order for price).
    pub types: Vec<RemovedType>,
}

/// One type a constraint removed, and what it has that the constraint reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemovedType {
    pub name: String,
    pub figure: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FindingExplanation {
    pub code: String,
    pub message: String,
    pub location: String,
    pub help: Option<String>,
}

/// How many example types a removal lists.
pub(super) const EXAMPLES: usize = 5;
