//! `gpuplan explain [PROFILE]`: the solver's decisions in words and numbers, per cluster, profile and NodePool:
//! the candidate instance types ranked by $/accelerator-hour (with $/accelerator-GiB-hour, accelerators per
//! node, model, memory), what each constraint removed, the limit and why, the weight and why, expected and
//! worst-case $/h against the budget, which numbers are estimates, and the lint findings.
//!
//! Two formats, both deterministic (same inputs, same bytes):
//!
//! * **table**: aligned plain-text columns for a terminal, no colour. Numbers computed from estimated prices
//!   carry a `*`, explained by a footnote quoting the catalog source's description.
//! * **json**: [`Explanation`] serialized with serde_json (pretty). Shape (all money in USD, rounded to 4
//!   decimals; memory in GiB, 1 decimal):
//!
//! ```text
//! { "clusters": [ { "name", "region", "catalog",                     // "us-east-1@<digest>"
//!     "profiles": [ { "name", "source", "priority", "budget_usd_per_hour" (null if none),
//!       "expected_usd_per_hour", "worst_case_usd_per_hour", "expected_is_estimate", "worst_case_is_estimate",
//!       "worst_case_budget_share" (worst/budget, null without budget),
//!       "worst_case_bound" ("guaranteed" | "empirical" | "estimated"),   // the worst case is a steady-state bound
//!       "drain_peak_usd_per_hour", "drain_peak_for" (the longest terminationGracePeriod, null: unbounded),
//!       "unverified_prices" (types whose worst-case price is an estimate),
//!       "findings": [ { "code", "message", "location", "help" } ],   // profile-wide lint findings
//!       "pools": [ { "name" (NodePool), "pool", "tier", "tiers", "resource", "capacity_types", "zones",
//!         "weight", "weight_reason", "weight_explicit", "limit", "limit_reason", "largest_node",
//!         "units_per_accelerator", "expected_usd_per_hour", "worst_case_usd_per_hour",
//!         "expected_is_estimate", "worst_case_is_estimate", "worst_case_bound", "worst_case_basis" (words),
//!         "draining_nodes", "drain_peak_usd_per_hour", "drain_peak_basis" (words, null without draining nodes),
//!         "cpu_limit" (shared pools, else null), "fixed_usd_per_hour" (reservations, else null),
//!         "placement": { "nodeSelector": {…}, "tolerations": [ { "key", "operator", "value"?, "effect" } ] },
//!         "allow", "notes",
//!         "candidates": [ { "rank", "name", "accelerators", "units" (schedulable per node), "accelerator_name",
//!           "memory_gib_per_accelerator",
//!           "usd_per_hour", "usd_per_accelerator_hour", "usd_per_accelerator_gib_hour", "estimate" (expected
//!           prices), "ceiling_usd_per_accelerator_hour" (the worst-case price), "ceiling_estimate",
//!           "estimate_source" (catalog source id or null) } ],
//!         "removed": [ { "constraint", "count", "examples" } ],      // examples: the first 5 types
//!         "findings": [ … ] } ] } ],
//!     "workloads": [ … ],                                               // as `gpuplan simulate` places them
//!     "queues": [ { "name", "namespace", "profile", "cohort", "gang", "resource", "quota" (as written),
//!       "flavors": [ { "flavor" (= its NodePool), "nodepool_limit", "nominal", "borrowing_limit", "lending_limit",
//!         "nominal_usd_per_hour", "with_borrowing_usd_per_hour" } ] } ] } ],   // flavors in Kueue's try order
//!   "estimate_sources": [ { "id", "description", "fetched_at" } ] }  // every estimate source used above
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use crate::catalog::{AcceleratorKind, Catalog, InstanceType};
use crate::compile::Compilation;
use crate::diagnostic::did_you_mean;
use crate::profile::Profile;
use crate::lint::Finding;
use crate::catalog::cost::Bound;
use crate::solve::{ClusterPlan, PoolPlan, ProfileSummary};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ExplainFormat {
    /// Aligned plain-text tables.
    #[default]
    Table,
    /// The [`Explanation`] struct as pretty JSON.
    Json,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExplainError {
    #[error("no profile `{name}` in this compile{}; profiles: {}", .suggestion.as_ref().map(|s| format!(" ({s})")).unwrap_or_default(), .known.join(", "))]
    UnknownProfile { name: String, suggestion: Option<String>, known: Vec<String> },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    pub clusters: Vec<ClusterExplanation>,
    /// The catalog sources of every estimated number in the explanation.
    pub estimate_sources: Vec<EstimateSource>,
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
}

/// One flavor of a queue: the NodePool it stands for, the quota there and its worst-case price.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueFlavorExplanation {
    /// The ResourceFlavor, named after its NodePool.
    pub flavor: String,
    pub nodepool_limit: u32,
    pub nominal: u32,
    pub borrowing_limit: Option<u32>,
    pub lending_limit: Option<u32>,
    /// The NodePool's worst case holding the nominal quota, and nominal + borrowing limit (the budget's price basis).
    pub nominal_usd_per_hour: f64,
    pub with_borrowing_usd_per_hour: f64,
}

fn explain_queues(cluster: &ClusterPlan, profile: Option<&str>) -> Vec<QueueExplanation> {
    let queues = cluster.queues.queues.iter().filter(|q| profile.is_none_or(|p| p == q.profile));
    queues
        .map(|q| QueueExplanation {
            name: q.name.clone(),
            namespace: q.namespace.clone(),
            profile: q.profile.clone(),
            cohort: q.cohort.clone(),
            gang: q.gang,
            resource: q.accelerator.resource().to_string(),
            quota: q.quota_kdl.clone(),
            flavors: q
                .flavors
                .iter()
                .map(|f| QueueFlavorExplanation {
                    flavor: f.flavor.clone(),
                    nodepool_limit: f.limit,
                    nominal: f.nominal,
                    borrowing_limit: f.borrowing_limit,
                    lending_limit: f.lending_limit,
                    nominal_usd_per_hour: r4(f.nominal_usd_per_hour),
                    with_borrowing_usd_per_hour: r4(f.reach_usd_per_hour),
                })
                .collect(),
        })
        .collect()
}

/// `queue research (namespace ml-research, cohort ml, gang: gpus share="50%")`, then one line per flavor:
/// `→ flavor training-reserved → NodePool training-reserved (limit 16): nominal 8 → $55.04/h; + borrowing 8 → $110.08/h`.
fn write_queues(out: &mut String, queues: &[QueueExplanation]) {
    if queues.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n  queues (Kueue: queue → flavor → NodePool → worst case $/h)");
    for q in queues {
        let mut about = vec![format!("namespace {}", q.namespace)];
        about.extend(q.cohort.as_ref().map(|c| format!("cohort {c}")));
        if q.gang {
            about.push("gang".into());
        }
        let _ = writeln!(out, "    queue {} ({}: {})", q.name, about.join(", "), q.quota);
        for f in &q.flavors {
            let mut line = format!("      → flavor {0} → NodePool {0} (limit {1} {2}): nominal {3} → ${4:.2}/h", f.flavor, f.nodepool_limit, q.resource, f.nominal, f.nominal_usd_per_hour);
            if let Some(b) = f.borrowing_limit {
                let _ = write!(line, "; + borrowing {b} → ${:.2}/h", f.with_borrowing_usd_per_hour);
            }
            if let Some(l) = f.lending_limit {
                let _ = write!(line, "; lends at most {l}");
            }
            let _ = writeln!(out, "{line}");
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileExplanation {
    pub name: String,
    pub source: String,
    pub priority: i64,
    pub budget_usd_per_hour: Option<f64>,
    pub expected_usd_per_hour: f64,
    pub worst_case_usd_per_hour: f64,
    pub expected_is_estimate: bool,
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
    pub expected_usd_per_hour: f64,
    pub worst_case_usd_per_hour: f64,
    pub expected_is_estimate: bool,
    pub worst_case_is_estimate: bool,
    /// "guaranteed" or "empirical", and what the worst case assumes, in words.
    pub worst_case_bound: Bound,
    pub worst_case_basis: String,
    /// Nodes that can be deleting at once beside their replacements (outside the limits).
    pub draining_nodes: u32,
    pub drain_peak_usd_per_hour: f64,
    pub drain_peak_basis: Option<String>,
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
    pub count: usize,
    /// The first few removed types, in the order the solver recorded them (catalog order; rank order for price).
    pub examples: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FindingExplanation {
    pub code: String,
    pub message: String,
    pub location: String,
    pub help: Option<String>,
}

const EXAMPLES: usize = 5;

/// Explains one profile (every profile of that name, in any cluster) or, with `None`, all of them.
pub fn explain(c: &Compilation, profile: Option<&str>, format: ExplainFormat) -> Result<String, ExplainError> {
    let explanation = explanation(c, profile)?;
    Ok(match format {
        ExplainFormat::Json => {
            let mut text = serde_json::to_string_pretty(&explanation).expect("an explanation always serializes");
            text.push('\n');
            text
        }
        ExplainFormat::Table => table(&explanation),
    })
}

/// The typed explanation behind both formats.
pub fn explanation(c: &Compilation, profile: Option<&str>) -> Result<Explanation, ExplainError> {
    if let Some(name) = profile {
        if !c.profiles.iter().any(|p| p.name.value == name) {
            let known: BTreeSet<&str> = c.profiles.iter().map(|p| p.name.value.as_str()).collect();
            return Err(ExplainError::UnknownProfile {
                name: name.to_string(),
                suggestion: did_you_mean(name, known.iter().copied()),
                known: known.into_iter().map(String::from).collect(),
            });
        }
    }
    let findings = &c.findings;
    let mut estimate_sources = BTreeSet::new();
    let mut clusters = Vec::new();
    for cluster in &c.plan.clusters {
        let Some(catalog) = c.catalogs.get(&cluster.region) else { continue };
        let mut profiles = Vec::new();
        for summary in cluster.profiles.iter().filter(|s| profile.is_none_or(|p| p == s.name)) {
            let Some(intent) = c.profile(&cluster.name, &summary.name) else {
                continue;
            };
            profiles.push(explain_profile(c, cluster, catalog, summary, intent, &findings, &mut estimate_sources));
        }
        if !profiles.is_empty() {
            clusters.push(ClusterExplanation {
                name: cluster.name.clone(),
                region: cluster.region.clone(),
                catalog: format!("{}@{}", cluster.region, cluster.catalog_digest),
                profiles,
                workloads: workload_placements(c, cluster).into_iter().filter(|w| profile.is_none_or(|p| p == w.profile)).collect(),
                queues: explain_queues(cluster, profile),
            });
        }
    }
    Ok(Explanation { clusters, estimate_sources: estimate_sources.into_iter().collect() })
}

/// Every workload of the cluster at max replicas, simulated on its generated objects (parsed back only when there
/// are workloads to place).
pub fn workload_placements(c: &Compilation, cluster: &ClusterPlan) -> Vec<crate::check::WorkloadPlacement> {
    if cluster.ops.workloads.is_empty() {
        return Vec::new();
    }
    let simulated = crate::check::cluster_manifests(&c.manifests_of(&cluster.name));
    crate::check::workload_placements(&c.cluster_ctx(cluster), &simulated)
}

fn finding(f: &Finding) -> FindingExplanation {
    FindingExplanation {
        code: f.code.to_string(),
        message: f.diagnostic.message.clone(),
        location: f.diagnostic.location.clone(),
        help: f.diagnostic.help.clone(),
    }
}

fn explain_profile(
    c: &Compilation,
    cluster: &ClusterPlan,
    catalog: &Catalog,
    summary: &ProfileSummary,
    intent: &Profile,
    findings: &[Finding],
    estimate_sources: &mut BTreeSet<EstimateSource>,
) -> ProfileExplanation {
    // Pools in the profile's own order (pool, then tier), not the cluster's weight order.
    let mut plans: Vec<&PoolPlan> = cluster.pools.iter().filter(|p| p.profile == summary.name).collect();
    let order = |name: &str| intent.pools.iter().flat_map(|p| &p.tiers).position(|t| t.name.value == name).unwrap_or(usize::MAX);
    plans.sort_by_key(|p| order(&p.name));
    let pools: Vec<PoolExplanation> =
        plans.iter().map(|plan| explain_pool(c, cluster, catalog, intent, plan, findings, estimate_sources)).collect();
    ProfileExplanation {
        name: summary.name.clone(),
        source: summary.source.clone(),
        priority: intent.priority.value,
        budget_usd_per_hour: summary.budget_usd_per_hour,
        expected_usd_per_hour: r4(summary.expected_usd_per_hour),
        worst_case_usd_per_hour: r4(summary.worst_case_usd_per_hour),
        expected_is_estimate: pools.iter().any(|p| p.expected_is_estimate),
        worst_case_is_estimate: pools.iter().any(|p| p.worst_case_is_estimate),
        worst_case_budget_share: summary.budget_usd_per_hour.map(|b| r4(summary.worst_case_usd_per_hour / b)),
        worst_case_bound: pools.iter().map(|p| p.worst_case_bound).max().unwrap_or(Bound::Guaranteed),
        drain_peak_usd_per_hour: r4(summary.drain_peak_usd_per_hour),
        drain_peak_for: summary.drain_peak_for.clone(),
        unverified_prices: summary.unverified_prices.clone(),
        pools,
        findings: findings
            .iter()
            .filter(|f| f.cluster == cluster.name && f.profile == summary.name && f.pool.is_none())
            .map(finding)
            .collect(),
    }
}

/// The catalog source ids of the estimated prices this type has for the pool's capacity types and of its on-demand
/// price (the worst-case ceiling), first the expected price's.
fn estimate_sources_of(t: &InstanceType, plan: &PoolPlan, catalog: &Catalog) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for price in plan.capacity_types.iter().filter_map(|cap| t.price(*cap, &plan.zones)).chain(t.on_demand.as_ref()) {
        if catalog.is_estimate(price) && !ids.contains(&price.source) {
            ids.push(price.source.clone());
        }
    }
    ids
}

fn explain_pool(
    c: &Compilation,
    cluster: &ClusterPlan,
    catalog: &Catalog,
    intent: &Profile,
    plan: &PoolPlan,
    findings: &[Finding],
    estimate_sources: &mut BTreeSet<EstimateSource>,
) -> PoolExplanation {
    let candidates: Vec<CandidateExplanation> = plan
        .candidates
        .iter()
        .enumerate()
        .map(|(i, cand)| {
            let estimated = cand.estimate || cand.ceiling_estimate;
            let ids = if estimated { catalog.get(&cand.name).map(|t| estimate_sources_of(t, plan, catalog)).unwrap_or_default() } else { Vec::new() };
            for id in &ids {
                let s = &catalog.sources[id];
                estimate_sources.insert(EstimateSource { id: id.clone(), description: s.description.clone(), fetched_at: s.fetched_at.clone() });
            }
            let source = ids.into_iter().next();
            CandidateExplanation {
                rank: i + 1,
                name: cand.name.clone(),
                accelerators: cand.accelerators,
                units: cand.units,
                accelerator_name: cand.accelerator_name.clone(),
                memory_gib_per_accelerator: (cand.memory_mib_per_accelerator as f64 / 1024.0 * 10.0).round() / 10.0,
                usd_per_hour: r4(cand.usd_per_hour),
                usd_per_accelerator_hour: r4(cand.usd_per_accelerator_hour),
                usd_per_accelerator_gib_hour: r4(cand.usd_per_accelerator_gib_hour),
                estimate: cand.estimate,
                ceiling_usd_per_accelerator_hour: r4(cand.ceiling_usd_per_accelerator_hour),
                ceiling_estimate: cand.ceiling_estimate,
                estimate_source: source,
                overlay: cand.overlay.clone(),
            }
        })
        .collect();
    let cheapest = plan.candidates.iter().min_by(|a, b| a.usd_per_accelerator_hour.total_cmp(&b.usd_per_accelerator_hour));
    let worst_is_estimate = plan.candidates.iter().any(|c| c.ceiling_estimate);
    let tier = intent.pools.iter().flat_map(|p| p.tiers.iter().map(move |t| (p, t))).find(|(_, t)| t.name.value == plan.name);
    let tiers = intent.pools.iter().find(|p| p.name.value == plan.pool).map_or(1, |p| p.tiers.len());
    let explicit = tier.and_then(|(_, t)| t.settings.weight.as_ref());
    let weight_reason = match explicit {
        _ if plan.static_pool.is_some() => "none: a static NodePool has no weight and takes no part in dynamic provisioning; its nodes exist whatever the pods".to_string(),
        Some(w) => format!("explicit `weight {}` at {}", w.value, c.sources.location(w.span)),
        None => {
            let mut ranked: Vec<&Profile> = c.profiles.iter().filter(|p| p.cluster.name.value == cluster.name).collect();
            ranked.sort_by(|a, b| b.priority.value.cmp(&a.priority.value).then(a.name.value.cmp(&b.name.value)));
            let rank = ranked.iter().position(|p| p.name.value == intent.name.value).map_or(0, |i| i + 1);
            format!(
                "assigned: profile priority {} ranks {rank} of {} in cluster `{}`, tier {} of {tiers} in fallback order; weights are distinct across the cluster, higher is tried first",
                intent.priority.value,
                ranked.len(),
                cluster.name,
                plan.tier_index + 1
            )
        }
    };
    PoolExplanation {
        name: plan.name.clone(),
        pool: plan.pool.clone(),
        tier: plan.tier_index + 1,
        tiers,
        resource: plan.resource().to_string(),
        capacity_types: plan.capacity_types.iter().map(|c| c.as_str().to_string()).collect(),
        zones: plan.zones.clone(),
        weight: plan.weight,
        replicas: plan.static_pool.map(|s| s.replicas),
        weight_explicit: explicit.is_some(),
        weight_reason,
        limit: plan.limit,
        limit_reason: plan.limit_reason.clone(),
        largest_node: plan.largest_node(),
        units_per_accelerator: plan.replicas(),
        expected_usd_per_hour: r4(plan.expected_usd_per_hour),
        worst_case_usd_per_hour: r4(plan.worst_case_usd_per_hour),
        expected_is_estimate: cheapest.is_some_and(|c| c.estimate),
        worst_case_is_estimate: worst_is_estimate,
        worst_case_bound: plan.worst_case_bound(),
        worst_case_basis: crate::render::worst_case_basis(plan),
        draining_nodes: plan.draining_nodes,
        drain_peak_usd_per_hour: r4(plan.drain_peak_usd_per_hour),
        drain_peak_basis: (plan.draining_nodes > 0).then(|| crate::render::drain_peak_basis(plan)),
        cpu_limit: plan.cpu_limit,
        fixed_usd_per_hour: plan.fixed_usd_per_hour.map(r4),
        placement: plan.pod_placement(plan.largest_node()),
        candidates,
        removed: plan
            .removed
            .iter()
            .map(|r| RemovalExplanation { constraint: r.constraint.clone(), count: r.types.len(), examples: r.types.iter().take(EXAMPLES).cloned().collect() })
            .collect(),
        allow: plan.allow.iter().cloned().collect(),
        notes: plan.notes.clone(),
        findings: findings
            .iter()
            .filter(|f| f.cluster == cluster.name && f.pool.as_deref() == Some(plan.name.as_str()))
            .map(finding)
            .collect(),
    }
}

fn r4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

/// "$12.34/h" with a `*` when estimated (a space otherwise, so columns of them stay aligned).
fn money(v: f64, decimals: usize, estimate: bool) -> String {
    format!("{v:.decimals$}{}", if estimate { "*" } else { " " })
}

/// "$12.34/h", with a `*` when estimated.
/// The profile's steady-state worst case, its drain peak against the budget, and the prices the budget check could
/// not verify.
fn write_profile_bounds(out: &mut String, p: &ProfileExplanation) {
    let bound = match p.worst_case_bound {
        Bound::Empirical => "EMPIRICAL bound, not guaranteed: some spot pools are bounded by observed spot prices",
        Bound::Estimated => "ESTIMATED bound, not guaranteed: some on-demand prices are estimates (see unverified)",
        Bound::Guaranteed => "guaranteed bound: every pool at its limits on its priciest type, spot at the on-demand price",
    };
    let _ = writeln!(out, "  worst case   {}  (steady state; {bound})", per_hour(p.worst_case_usd_per_hour, p.worst_case_is_estimate));
    let over = p.budget_usd_per_hour.filter(|b| p.drain_peak_usd_per_hour > b + 1e-9).map(|b| format!("; over the budget by ${:.2}/h", p.drain_peak_usd_per_hour - b));
    let duration = p.drain_peak_for.as_ref().map_or_else(|| "with no end (a pool has no terminationGracePeriod)".to_string(), |g| format!("for up to {g}"));
    let _ = writeln!(
        out,
        "  drain peak   {}  ({duration} while nodes drain beside their replacements: Karpenter leaves deleting nodes out of the limits{})",
        per_hour(p.drain_peak_usd_per_hour, p.worst_case_is_estimate),
        over.unwrap_or_default()
    );
    if !p.unverified_prices.is_empty() {
        let shown: Vec<&str> = p.unverified_prices.iter().take(EXAMPLES).map(String::as_str).collect();
        let more = p.unverified_prices.len().saturating_sub(shown.len());
        let _ = writeln!(
            out,
            "  unverified   the budget check used estimated on-demand prices for {} type(s): {}{} (see the footnotes)",
            p.unverified_prices.len(),
            shown.join(", "),
            if more > 0 { format!(", … +{more}") } else { String::new() }
        );
    }
}

fn per_hour(v: f64, estimate: bool) -> String {
    format!("${v:.2}/h{}", if estimate { "*" } else { "" })
}

/// Appends an aligned table: `right[i]` right-aligns column i. Trailing spaces are trimmed.
fn write_table(out: &mut String, indent: &str, headers: &[&str], right: &[bool], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let header: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::from(indent);
        for (i, cell) in row.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            if i > 0 {
                line.push_str("  ");
            }
            if right[i] {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

fn write_findings(out: &mut String, indent: &str, findings: &[FindingExplanation]) {
    for f in findings {
        let _ = writeln!(out, "{indent}{} {}: {}", f.code, f.location, f.message);
        if let Some(help) = &f.help {
            let _ = writeln!(out, "{indent}      help: {help}");
        }
    }
}

/// The table format.
pub fn table(e: &Explanation) -> String {
    let mut out = String::new();
    for cluster in &e.clusters {
        let _ = writeln!(out, "cluster {} ({}, catalog {})", cluster.name, cluster.region, cluster.catalog);
        crate::check::write_placements(&mut out, &cluster.workloads);
        write_queues(&mut out, &cluster.queues);
        for p in &cluster.profiles {
            let _ = writeln!(out, "\nprofile {} ({}, priority {})", p.name, p.source, p.priority);
            let budget = match (p.budget_usd_per_hour, p.worst_case_budget_share) {
                (Some(b), Some(share)) => format!(
                    "${b:.2}/h; worst case is {:.0}% of it{}",
                    share * 100.0,
                    if share > 1.0 + 1e-9 { " — OVER BUDGET" } else { "" }
                ),
                _ => "none (limits come from max-accelerators)".into(),
            };
            let _ = writeln!(out, "  budget       {budget}");
            let _ = writeln!(
                out,
                "  expected     {}  (estimate: every pool at its limit on its cheapest type, at expected prices: spot where allowed)",
                per_hour(p.expected_usd_per_hour, p.expected_is_estimate)
            );
            write_profile_bounds(&mut out, p);
            if !p.findings.is_empty() {
                let _ = writeln!(out, "  lint");
                write_findings(&mut out, "    ", &p.findings);
            }
            for pool in &p.pools {
                let _ = writeln!(
                    out,
                    "\n  NodePool {} (pool {}, tier {} of {}; {}; {})",
                    pool.name,
                    pool.pool,
                    pool.tier,
                    pool.tiers,
                    pool.capacity_types.join(", "),
                    pool.replicas.map_or(format!("weight {}", pool.weight), |r| if r == 0 { "static, parked (0 replicas)".to_string() } else { format!("static, {r} replicas") })
                );
                match pool.replicas {
                    Some(0) => {
                        let _ = writeln!(out, "    static     parked: 0 replicas (spec.replicas 0), no node launched, no cost; raise replicas to launch them; weight {}", pool.weight_reason);
                    }
                    Some(r) => {
                        let _ = writeln!(out, "    static     {r} replicas (spec.replicas); weight {}", pool.weight_reason);
                    }
                    None => {
                        let _ = writeln!(out, "    weight     {}: {}", pool.weight, pool.weight_reason);
                    }
                }
                let sharing = if pool.units_per_accelerator > 1 { format!(" ({} per physical accelerator)", pool.units_per_accelerator) } else { String::new() };
                let _ = writeln!(out, "    limit      {} {}{sharing}: {}", pool.limit, pool.resource, pool.limit_reason);
                if let Some(cpu) = pool.cpu_limit {
                    let why = if pool.units_per_accelerator > 1 { "caps the physical nodes while Karpenter counts physical GPUs against a limit in slices" } else { "the profile's `limits cpu`: caps the worst case" };
                    let _ = writeln!(out, "    cpu limit  {cpu}: {why}");
                }
                let _ = writeln!(out, "    largest    {} {} per node", pool.largest_node, pool.resource);
                let _ = writeln!(
                    out,
                    "    cost       expected {}, worst case {} ({})",
                    per_hour(pool.expected_usd_per_hour, pool.expected_is_estimate),
                    per_hour(pool.worst_case_usd_per_hour, pool.worst_case_is_estimate),
                    pool.worst_case_basis
                );
                if let Some(basis) = &pool.drain_peak_basis {
                    let _ = writeln!(out, "    drain peak {}: {basis}", per_hour(pool.drain_peak_usd_per_hour, pool.worst_case_is_estimate));
                }
                let selector: Vec<String> = pool.placement.node_selector.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                let _ = writeln!(out, "    pods need  nodeSelector {{{}}}", selector.join(", "));
                for t in &pool.placement.tolerations {
                    let _ = writeln!(out, "               toleration {t}");
                }
                if !pool.placement.requests.is_empty() {
                    let _ = writeln!(out, "               requests {{{}}} per pod of {} {}", pool.placement.requests_text(), pool.largest_node, pool.resource);
                }
                // A CPU pool's unit is the vCPU: its columns say so.
                let cpu = pool.resource == AcceleratorKind::Cpu.resource();
                let unit = if cpu { "vCPU" } else { "accelerator" };
                let _ = writeln!(out, "    candidates {} type{}, cheapest $/{unit}-hour first:", pool.candidates.len(), if pool.candidates.len() == 1 { "" } else { "s" });
                let rows: Vec<Vec<String>> = pool
                    .candidates
                    .iter()
                    .map(|c| {
                        vec![
                            c.rank.to_string(),
                            c.name.clone(),
                            c.accelerators.to_string(),
                            c.accelerator_name.clone(),
                            format!("{:.1}", c.memory_gib_per_accelerator),
                            money(c.usd_per_hour, 4, c.estimate),
                            money(c.usd_per_accelerator_hour, 4, c.estimate),
                            money(c.usd_per_accelerator_gib_hour, 4, c.estimate),
                            money(c.ceiling_usd_per_accelerator_hour, 4, c.ceiling_estimate),
                        ]
                    })
                    .collect();
                write_table(
                    &mut out,
                    "      ",
                    if cpu {
                        &["#", "type", "vCPU", "model", "GiB/vCPU", "$/h ", "$/vCPU-h ", "$/vCPU-GiB-h ", "worst $/vCPU-h "]
                    } else {
                        &["#", "type", "accel", "model", "GiB/accel", "$/h ", "$/accel-h ", "$/accel-GiB-h ", "worst $/accel-h "]
                    },
                    &[true, false, true, false, true, true, true, true, true],
                    &rows,
                );
                let mut by_overlay: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
                for c in &pool.candidates {
                    if let Some(o) = &c.overlay {
                        by_overlay.entry(o).or_default().push(&c.name);
                    }
                }
                for (overlay, types) in by_overlay {
                    let _ = writeln!(out, "    overlay    {} ranked at the price of {overlay}, as Karpenter ranks them ($/h and worst case at list price)", types.join(", "));
                }
                if !pool.removed.is_empty() {
                    let _ = writeln!(out, "    removed    by constraint, in the order applied:");
                    let rows: Vec<Vec<String>> = pool
                        .removed
                        .iter()
                        .map(|r| {
                            let more = r.count.saturating_sub(r.examples.len());
                            let examples = format!("{}{}", r.examples.join(", "), if more > 0 { format!(", … +{more}") } else { String::new() });
                            vec![r.constraint.clone(), r.count.to_string(), examples]
                        })
                        .collect();
                    write_table(&mut out, "      ", &["constraint", "removed", "examples"], &[false, true, false], &rows);
                }
                if !pool.allow.is_empty() {
                    let _ = writeln!(out, "    allow      {}", pool.allow.join(", "));
                }
                for note in &pool.notes {
                    let _ = writeln!(out, "    note       {note}");
                }
                if !pool.findings.is_empty() {
                    let _ = writeln!(out, "    lint");
                    write_findings(&mut out, "      ", &pool.findings);
                }
            }
        }
        out.push('\n');
    }
    for s in &e.estimate_sources {
        let _ = writeln!(out, "* estimate [{}]: {}", s.id, s.description);
    }
    out
}
