//! `gpuplan explain [PATHS|PROFILE]`: the solver's decisions in words and numbers, per cluster, profile and NodePool:
//! the candidate instance types ranked by $/accelerator-hour (with $/accelerator-GiB-hour, accelerators per
//! node, model, memory), what each constraint removed, the limit and why, the weight and why, at-limit and
//! worst-case $/h against the budget, which numbers are estimates, and the lint findings.
//!
//! Three formats, all deterministic (same inputs, same bytes); with `--why-not TYPE`, each prints only the answers
//! ([`why_not`]) in its own way (JSON: the whole explanation and a `why_not` list):
//!
//! * **table**: aligned plain-text columns for a terminal, no colour. Numbers computed from estimated prices
//!   carry a `*`, explained by a footnote quoting the catalog source's description.
//! * **markdown**: the table format's lines and tables under a heading per cluster, profile and NodePool
//!   ([`markdown()`]).
//! * **json**: [`Explanation`] serialized with serde_json (pretty). Its shape is docs/explain.schema.json, checked by
//!   tests/explain_why_not.rs; in short (all money in USD, rounded to 4 decimals; memory in GiB, 1 decimal):
//!
//! ```text
//! { "clusters": [ { "name", "region", "catalog",                     // "us-east-1@<digest>"
//!     "profiles": [ { "name", "source", "priority", "budget_usd_per_hour" (null if none),
//!       "at_limit_usd_per_hour", "worst_case_usd_per_hour", "at_limit_is_estimate", "worst_case_is_estimate",
//!       "worst_case_budget_share" (worst/budget, null without budget),
//!       "worst_case_bound" ("guaranteed" | "empirical" | "estimated"),   // the worst case is a steady-state bound
//!       "drain_peak_usd_per_hour", "drain_peak_for" (the longest terminationGracePeriod, null: unbounded),
//!       "unverified_prices" (types whose worst-case price is an estimate),
//!       "findings": [ { "code", "message", "location", "help" } ],   // profile-wide lint findings
//!       "pools": [ { "name" (NodePool), "pool", "tier", "tiers", "resource", "capacity_types", "zones",
//!         "weight", "weight_reason", "weight_explicit", "limit", "limit_reason", "largest_node",
//!         "units_per_accelerator", "at_limit_usd_per_hour", "worst_case_usd_per_hour",
//!         "at_limit_is_estimate", "worst_case_is_estimate", "worst_case_bound", "worst_case_basis" (words),
//!         "draining_nodes", "drain_peak_usd_per_hour", "drain_peak_basis" (words, null without draining nodes),
//!         "cpu_limit" (shared pools, else null), "fixed_usd_per_hour" (reservations, else null),
//!         "placement": { "nodeSelector": {…}, "tolerations": [ { "key", "operator", "value"?, "effect" } ] },
//!         "allow", "notes",
//!         "candidates": [ { "rank", "name", "accelerators", "units" (schedulable per node), "accelerator_name",
//!           "memory_gib_per_accelerator",
//!           "usd_per_hour", "usd_per_accelerator_hour", "usd_per_accelerator_gib_hour", "estimate" (likely
//!           prices), "ceiling_usd_per_accelerator_hour" (the worst-case price), "ceiling_estimate",
//!           "estimate_source" (catalog source id or null) } ],
//!         "removed": [ { "constraint", "location" (file:line:col, null for the limit), "count",
//!           "types": [ { "name", "figure" } ] } ],                    // every removed type, with what it has
//!         "findings": [ … ] } ] } ],
//!     "workloads": [ … ],                                               // as `gpuplan simulate` places them
//!     "queues": [ { "name", "namespace", "profile", "cohort", "gang", "resource", "quota" (as written),
//!       "flavors": [ { "flavor" (= its NodePool), "nodepool_limit", "non_queued" (held by non-queued workloads),
//!         "nominal", "borrowing_limit", "lending_limit", "nominal_usd_per_hour", "with_borrowing_usd_per_hour" } ],
//!       "full": [ NodePool names the non-queued workloads fill: no flavor ] } ] } ],   // flavors in Kueue's try order
//!   "estimate_sources": [ { "id", "description", "fetched_at" } ],  // every estimate source used above
//!   "why_not": [ { "instance_type", "has", "pools": [ { "cluster", "profile", "nodepool",
//!     "verdict": "candidate" | "removed" | "not-in-region", … } ] } ] }   // only with --why-not
//! ```

mod markdown;
mod model;
mod table;
mod why_not;

use std::collections::BTreeSet;

use crate::catalog::{Catalog, InstanceType};
use crate::compile::Compilation;
use crate::diagnostic::did_you_mean;
use crate::profile::Profile;
use crate::lint::Finding;
use crate::catalog::cost::Bound;
use crate::solve::{ClusterPlan, PoolPlan, ProfileSummary};

pub use model::{
    CandidateExplanation, ClusterExplanation, EstimateSource, ExplainError, ExplainFormat, Explanation, FindingExplanation,
    PoolExplanation, ProfileExplanation, QueueExplanation, QueueFlavorExplanation, RemovalExplanation, RemovedType,
};
pub use markdown::markdown;
pub use table::table;
pub use crate::layout::write_table;
pub use why_not::{Verdict, WhyNot, WhyNotPool, why_not};

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
                    non_queued: f.non_queued,
                    nominal: f.nominal,
                    borrowing_limit: f.borrowing_limit,
                    lending_limit: f.lending_limit,
                    nominal_usd_per_hour: r4(f.nominal_usd_per_hour),
                    with_borrowing_usd_per_hour: r4(f.reach_usd_per_hour),
                })
                .collect(),
            full: q.full.clone(),
        })
        .collect()
}

/// Explains one profile (every profile of that name, in any cluster) or, with `None`, all of them.
pub fn explain(c: &Compilation, profile: Option<&str>, format: ExplainFormat) -> Result<String, ExplainError> {
    explain_why_not(c, profile, &[], format)
}

/// As [`explain`]; with `why_not` types, only their answers (`explain --why-not TYPE`).
pub fn explain_why_not(c: &Compilation, profile: Option<&str>, why_not_types: &[String], format: ExplainFormat) -> Result<String, ExplainError> {
    let mut explanation = explanation(c, profile)?;
    explanation.why_not = why_not(c, profile, why_not_types)?;
    Ok(match format {
        ExplainFormat::Json => {
            let mut text = serde_json::to_string_pretty(&explanation).expect("an explanation always serializes");
            text.push('\n');
            text
        }
        ExplainFormat::Table if !why_not_types.is_empty() => table::why_not_table(&explanation.why_not),
        ExplainFormat::Markdown if !why_not_types.is_empty() => markdown::why_not_markdown(&explanation.why_not),
        ExplainFormat::Table => table(&explanation),
        ExplainFormat::Markdown => markdown(&explanation),
    })
}

/// The typed explanation behind both formats.
pub fn explanation(c: &Compilation, profile: Option<&str>) -> Result<Explanation, ExplainError> {
    if let Some(name) = profile
        && !c.profiles.iter().any(|p| p.name.value == name) {
            let known: BTreeSet<&str> = c.profiles.iter().map(|p| p.name.value.as_str()).collect();
            return Err(ExplainError::UnknownProfile {
                name: name.to_string(),
                suggestion: did_you_mean(name, known.iter().copied()),
                known: known.into_iter().map(String::from).collect(),
            });
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
            profiles.push(explain_profile(c, cluster, catalog, summary, intent, findings, &mut estimate_sources));
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
    Ok(Explanation { clusters, estimate_sources: estimate_sources.into_iter().collect(), why_not: Vec::new() })
}


/// Every workload of the cluster at max replicas, simulated on its generated objects (parsed back only when there
/// are workloads to place).
pub fn workload_placements(c: &Compilation, cluster: &ClusterPlan) -> Vec<crate::check::WorkloadPlacement> {
    if cluster.ops.workloads.is_empty() {
        return Vec::new();
    }
    let simulated = crate::check::cluster_manifests(&c.manifests_of(&cluster.name), &cluster.node_daemons);
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
    let pools: Vec<PoolExplanation> =
        profile_pools(cluster, &summary.name, intent).into_iter().map(|plan| explain_pool(c, cluster, catalog, intent, plan, findings, estimate_sources)).collect();
    ProfileExplanation {
        name: summary.name.clone(),
        source: summary.source.clone(),
        priority: intent.priority.value,
        budget_usd_per_hour: summary.budget_usd_per_hour,
        at_limit_usd_per_hour: r4(summary.at_limit_usd_per_hour),
        worst_case_usd_per_hour: r4(summary.worst_case_usd_per_hour),
        at_limit_is_estimate: pools.iter().any(|p| p.at_limit_is_estimate),
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

/// A profile's NodePools in the profile's own order (pool, then tier), not the cluster's weight order.
fn profile_pools<'a>(cluster: &'a ClusterPlan, profile: &str, intent: &Profile) -> Vec<&'a PoolPlan> {
    let mut plans: Vec<&PoolPlan> = cluster.pools.iter().filter(|p| p.profile == profile).collect();
    let order = |name: &str| intent.pools.iter().flat_map(|p| &p.tiers).position(|t| t.name.value == name).unwrap_or(usize::MAX);
    plans.sort_by_key(|p| order(&p.name));
    plans
}

/// The catalog source ids of the estimated prices this type has for the pool's capacity types and of its on-demand
/// price (the worst-case ceiling), first the likely price's.
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
    let candidates = explain_candidates(catalog, plan, estimate_sources);
    let cheapest = plan.candidates.iter().min_by(|a, b| a.usd_per_accelerator_hour.total_cmp(&b.usd_per_accelerator_hour));
    let worst_is_estimate = plan.candidates.iter().any(|c| c.ceiling_estimate);
    let tier = intent.pools.iter().flat_map(|p| p.tiers.iter().map(move |t| (p, t))).find(|(_, t)| t.name.value == plan.name);
    let tiers = intent.pools.iter().find(|p| p.name.value == plan.pool).map_or(1, |p| p.tiers.len());
    let explicit = tier.and_then(|(_, t)| t.settings.weight.as_ref());
    let weight_reason = match explicit {
        _ if plan.static_pool.is_some() => "none: a static NodePool has no weight and takes no part in dynamic provisioning; its nodes exist whatever the pods".to_string(),
        Some(w) => format!("explicit `weight {}` at {}", w.value, c.sources.location(w.span)),
        None => assigned_weight_reason(c, cluster, intent, plan, tiers),
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
        at_limit_usd_per_hour: r4(plan.at_limit_usd_per_hour),
        worst_case_usd_per_hour: r4(plan.worst_case_usd_per_hour),
        at_limit_is_estimate: cheapest.is_some_and(|c| c.estimate),
        worst_case_is_estimate: worst_is_estimate,
        worst_case_bound: plan.worst_case_bound(),
        worst_case_basis: crate::render::worst_case_basis(plan),
        draining_nodes: plan.draining_nodes,
        drain_peak_usd_per_hour: r4(plan.drain_peak_usd_per_hour),
        drain_peak_basis: (plan.draining_nodes > 0).then(|| crate::render::drain_peak_basis(plan)),
        way_back: tier.and_then(|(p, t)| {
            let i = p.tiers.iter().position(|x| x.name.value == t.name.value)?;
            let after_spot = p.tiers[..i].iter().any(|t| t.settings.capacity.contains(&crate::catalog::CapacityType::Spot));
            (after_spot && plan.fixed_usd_per_hour.is_none()).then(|| crate::solve::way_back(&plan.disruption, &p.tiers[0].name.value, crate::profile::on_demand_after_spot(&p.tiers, i)))
        }),
        cpu_limit: plan.cpu_limit,
        fixed_usd_per_hour: plan.fixed_usd_per_hour.map(r4),
        placement: plan.pod_placement(plan.largest_node()),
        candidates,
        removed: plan
            .removed
            .iter()
            .map(|r| RemovalExplanation {
                constraint: r.constraint.clone(),
                location: r.span.map(|span| c.sources.location(span)),
                count: r.types.len(),
                types: r.types.iter().zip(&r.figures).map(|(name, figure)| RemovedType { name: name.clone(), figure: figure.clone() }).collect(),
            })
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

/// The pool's candidate types in rank order; the catalog sources of their estimated prices are collected for the
/// footnotes.
fn explain_candidates(catalog: &Catalog, plan: &PoolPlan, estimate_sources: &mut BTreeSet<EstimateSource>) -> Vec<CandidateExplanation> {
    plan.candidates
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
        .collect()
}

/// Why a tier without an explicit weight has the one it has: its profile's rank by priority in the cluster, and
/// the tier's place in the fallback order.
fn assigned_weight_reason(c: &Compilation, cluster: &ClusterPlan, intent: &Profile, plan: &PoolPlan, tiers: usize) -> String {
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

fn r4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}
