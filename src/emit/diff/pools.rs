//! The cost facts of every NodePool of a tree, grouped by cluster and profile: what the review comment and the
//! policy gates compare before and after. Read from the NodePools' `gpuplan.dev/*` annotations, so the base's
//! committed out/ needs no profiles.

use std::collections::BTreeMap;

use serde_json::Value;

use super::detail::CostMeasure;
use super::objects::{cost_of, is_nodepool, objects, str_at};
use crate::layout::OutputTree;

/// The annotation a NodePool of a reservation or a static pool carries: its cost, billed whatever runs.
const FIXED_ANNOTATION: &str = "gpuplan.dev/fixed-usd-per-hour";
/// The annotation saying the at-limit cost uses estimated (not observed) spot prices.
const ESTIMATE_ANNOTATION: &str = "gpuplan.dev/price-estimate";

/// One NodePool's figures ($/h).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolFigures {
    pub limits: BTreeMap<String, String>,
    pub worst_case: f64,
    pub drain_peak: f64,
    pub at_limit: f64,
    /// Its reservation's or static replicas' cost (already inside `worst_case`).
    pub fixed: f64,
    pub estimated_prices: bool,
}

/// A profile's NodePools and its budget, in one cluster.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProfileFigures {
    pub budget: Option<f64>,
    /// What the forecast expects the profile to spend ($/h, the mean over the seeds), when the repository has a
    /// demand file (`forecast`); the annotations alone never say.
    pub expected: Option<f64>,
    pub pools: BTreeMap<String, PoolFigures>,
}

impl ProfileFigures {
    pub fn total(&self, measure: CostMeasure) -> f64 {
        let sum = |f: fn(&PoolFigures) -> f64| cents(self.pools.values().map(f).sum());
        match measure {
            CostMeasure::WorstCase => sum(|p| p.worst_case),
            CostMeasure::DrainPeak => sum(|p| p.drain_peak),
            CostMeasure::AtLimit => sum(|p| p.at_limit),
            CostMeasure::Budget => self.budget.unwrap_or(0.0),
        }
    }

    /// A policy metric's figure: a cost annotation's total, or the forecast's (zero without one: a rule on it is
    /// refused before, when no demand file exists).
    pub fn metric(&self, metric: super::detail::Metric) -> f64 {
        match metric {
            super::detail::Metric::Cost(measure) => self.total(measure),
            super::detail::Metric::Expected => self.expected.unwrap_or(0.0),
        }
    }

    pub fn fixed(&self) -> f64 {
        cents(self.pools.values().map(|p| p.fixed).sum())
    }
}

/// Per cluster, per profile (the `gpuplan.dev/profile` annotation; a NodePool without one is its own profile).
pub type Figures = BTreeMap<String, BTreeMap<String, ProfileFigures>>;

pub fn figures(tree: &OutputTree) -> Figures {
    let mut out = Figures::new();
    for (key, obj) in objects(tree) {
        let Ok(v) = &obj.value else { continue };
        if !is_nodepool(&key.kind, &obj.api_version) {
            continue;
        }
        // The profile's name; else the header's source (the profile file), as the budget is the profile's.
        let profile = str_at(v, "/metadata/annotations/gpuplan.dev~1profile").map(str::to_string).or_else(|| obj.source.clone()).unwrap_or_else(|| key.name.clone());
        let entry = out.entry(key.cluster.clone()).or_default().entry(profile).or_default();
        if let Some(b) = cost_of(v, CostMeasure::Budget) {
            entry.budget = Some(entry.budget.map_or(b, |x: f64| x.max(b)));
        }
        entry.pools.insert(key.name.clone(), pool(v));
    }
    out
}

fn pool(v: &Value) -> PoolFigures {
    let cost = |m| cost_of(v, m).unwrap_or(0.0);
    let annotation = |name: &str| v.pointer("/metadata/annotations").and_then(|a| a.get(name));
    let limits = v["spec"]["limits"].as_object().map(|l| l.iter().map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect());
    PoolFigures {
        limits: limits.unwrap_or_default(),
        worst_case: cost(CostMeasure::WorstCase),
        drain_peak: cost(CostMeasure::DrainPeak),
        at_limit: cost(CostMeasure::AtLimit),
        fixed: annotation(FIXED_ANNOTATION).and_then(Value::as_str).and_then(|s| s.parse().ok()).unwrap_or(0.0),
        estimated_prices: annotation(ESTIMATE_ANNOTATION).is_some(),
    }
}

/// Rounded to cents, so that 112.00 + 12.80 is 124.80 (and an empty sum, -0.0 in Rust, is 0).
pub fn cents(v: f64) -> f64 {
    (v * 100.0).round() / 100.0 + 0.0
}

/// The accelerator resources a queue's quota is about (the others follow them).
const ACCELERATORS: [&str; 4] = ["nvidia.com/gpu", "amd.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore"];

/// Per cluster, each ClusterQueue's accelerator quotas: (queue, flavor, resource) → nominalQuota as written.
pub type QueueQuotas = BTreeMap<String, BTreeMap<(String, String, String), String>>;

pub fn queue_quotas(tree: &OutputTree) -> QueueQuotas {
    let mut out = QueueQuotas::new();
    for (key, obj) in objects(tree) {
        let Ok(v) = &obj.value else { continue };
        if key.kind != "ClusterQueue" || !obj.api_version.starts_with("kueue.x-k8s.io/") {
            continue;
        }
        let entry = out.entry(key.cluster.clone()).or_default();
        let flavors = v["spec"]["resourceGroups"].as_array().into_iter().flatten().flat_map(|g| g["flavors"].as_array().into_iter().flatten());
        for flavor in flavors {
            for r in flavor["resources"].as_array().into_iter().flatten().filter(|r| r["name"].as_str().is_some_and(|n| ACCELERATORS.contains(&n))) {
                let quota = r["nominalQuota"].as_str().map_or_else(|| r["nominalQuota"].to_string(), str::to_string);
                let name = |v: &Value| v.as_str().unwrap_or_default().to_string();
                entry.insert((key.name.clone(), name(&flavor["name"]), name(&r["name"])), quota);
            }
        }
    }
    out
}
