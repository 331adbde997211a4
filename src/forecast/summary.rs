//! What the replayed runs cost: [`summarize`] prices one cluster's [`Timeline`]s (one per seed) and gives, per
//! cluster, profile, NodePool and workload, $/day and $/month, node-hours by instance and capacity type, pending
//! pod-minutes, p50/p95 hourly spend and hours over budget, each over the seeds as a mean and a range (min–max),
//! with the bound each is measured against and the hourly series the picture draws.
//!
//! Prices are the ones `simulate` bills a launch at (`simulate::instances::offerings`, NodeOverlays applied: a spot
//! node at its zone's spot price, observed or estimated as the catalog says, a reservation at the on-demand price),
//! and a node is billed per second from launch to termination, or to the horizon while it runs: EC2's per-second
//! billing of Linux instances (<https://aws.amazon.com/ec2/pricing/on-demand/>, "Per Second Billing"), its one-minute
//! minimum left out (Karpenter keeps a node at least until it is initialized and `consolidateAfter` passed).

mod attribution;
mod prices;
mod runs;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::timeline::Timeline;
use super::trace::Trace;
use crate::compile::Compilation;

pub use prices::Prices;
use runs::Run;

/// A month is 730 hours, as every other gpuplan figure counts it (the diff's `$N/month`, the comment).
pub const HOURS_PER_MONTH: f64 = 730.0;

/// One figure over the seeds: their mean and range.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Spread {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// Over the values of the seeds, each rounded to the cent (or the hundredth of an hour), so that output does not
    /// carry float noise. No value (no seed) is zero.
    pub fn over(values: impl IntoIterator<Item = f64>) -> Spread {
        let values: Vec<f64> = values.into_iter().collect();
        if values.is_empty() {
            return Spread { mean: 0.0, min: 0.0, max: 0.0 };
        }
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Spread { mean: cents(mean), min: cents(min), max: cents(max) }
    }

    /// Whether the seeds disagree (the range is worth showing).
    pub fn varies(&self) -> bool {
        self.max > self.min
    }
}

fn cents(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// What one scope (the cluster, a profile, a NodePool) spends over the horizon.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Spend {
    pub usd_per_day: Spread,
    pub usd_per_month: Spread,
    /// The median and 95th percentile of the hourly spend (nearest rank over the horizon's hours).
    pub p50_usd_per_hour: Spread,
    pub p95_usd_per_hour: Spread,
    /// The worst case gpuplan computes for the scope (every pool at its limits on its priciest types:
    /// `cost::worst_case`, the NodePools' `gpuplan.dev/worst-case-usd-per-hour`): what the forecast stays under.
    pub bound_usd_per_hour: f64,
    /// The profile's `budget usd-per-hour` (a cluster's: the sum, when every profile has one).
    pub budget_usd_per_hour: Option<f64>,
    /// Hours whose spend is above the budget.
    pub hours_over_budget: Option<Spread>,
    /// Node-hours by instance type and capacity type.
    pub node_hours: Vec<NodeHours>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeHours {
    pub instance_type: String,
    pub capacity_type: String,
    pub hours: Spread,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileForecast {
    pub name: String,
    pub spend: Spend,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolForecast {
    pub name: String,
    pub profile: String,
    pub spend: Spend,
    /// Some node of the pool is billed at an estimated (not observed) spot price.
    pub price_estimate: bool,
}

/// A workload (`namespace/name`) or a Kueue LocalQueue (`namespace/name`, its Jobs together).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadForecast {
    pub name: String,
    /// `workload` or `queue`.
    pub kind: String,
    pub profile: String,
    /// Its share of its NodePools' cost: each NodePool's spend divided among the workloads and queues that may run
    /// there by the accelerators their running pods request, over time (an attribution: nodes are shared).
    pub usd_per_day: Spread,
    pub usd_per_month: Spread,
    pub running_pod_hours: Spread,
    pub pending_pod_minutes: Spread,
}

/// Per hour of the horizon, what the picture draws.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Series {
    /// The cluster's spend in each hour ($), over the seeds.
    pub usd: Vec<Spread>,
    /// Per NodePool, the nodes running in each hour (node-seconds / 3600), the mean over the seeds.
    pub nodes: BTreeMap<String, Vec<f64>>,
}

/// One cluster's forecast over its seeds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ClusterForecast {
    pub cluster: String,
    /// The seeds of the traces replayed (one trace may stand for every run).
    pub seeds: Vec<u64>,
    /// How many runs (timelines) the figures are over.
    pub runs: usize,
    pub horizon_seconds: u64,
    pub spend: Spend,
    /// Each run's spend in $/month, in seed order: a pull request's base and head are compared seed by seed.
    #[serde(default)]
    pub runs_usd_per_month: Vec<f64>,
    /// Pod-minutes spent pending, all workloads and Jobs.
    pub pending_pod_minutes: Spread,
    /// Some node is billed at an estimated (not observed) spot price: the figures are estimates.
    pub price_estimate: bool,
    pub profiles: Vec<ProfileForecast>,
    pub pools: Vec<PoolForecast>,
    pub workloads: Vec<WorkloadForecast>,
    pub series: Series,
}

/// Prices `timelines` (one per seed, each replayed from a trace of `trace`'s cluster and horizon) with `c`'s catalog
/// and `cluster`'s NodePools, and measures them against the cluster's budgets and bounds. `trace` gives the
/// workloads' pods and the Jobs, which the attribution to workloads reads.
pub fn summarize(c: &Compilation, cluster: &str, trace: &Trace, timelines: &[Timeline]) -> ClusterForecast {
    summarize_seeds(c, cluster, &[trace], timelines)
}

/// [`summarize`] with the trace of each seed (`traces[i]` replayed gives `timelines[i]`; one trace stands for all).
pub fn summarize_seeds(c: &Compilation, cluster: &str, traces: &[&Trace], timelines: &[Timeline]) -> ClusterForecast {
    let plan = c.plan.clusters.iter().find(|p| p.name == cluster);
    let prices = Prices::new(c, cluster);
    let horizon_seconds = timelines.first().map_or_else(|| traces.first().map_or(0, |t| t.horizon_seconds), |t| t.horizon_seconds);
    let runs: Vec<Run> = timelines.iter().map(|t| Run::new(t, &prices, horizon_seconds)).collect();
    let seeds: Vec<u64> = traces.iter().map(|t| t.seed).collect();
    let pools: Vec<(String, String, f64)> = match plan {
        Some(p) => p.pools.iter().map(|pool| (pool.name.clone(), pool.profile.clone(), pool.worst_case_usd_per_hour)).collect(),
        None => Vec::new(),
    };
    let profiles: Vec<(String, Option<f64>, f64)> = match plan {
        Some(p) => p.profiles.iter().map(|s| (s.name.clone(), s.budget_usd_per_hour, s.worst_case_usd_per_hour)).collect(),
        None => Vec::new(),
    };
    let cluster_budget = profiles.iter().map(|p| p.1).sum::<Option<f64>>().filter(|_| !profiles.is_empty());
    let cluster_bound = profiles.iter().map(|p| p.2).sum();
    let all_pools: Vec<&str> = runs.iter().flat_map(|r| r.pool_names()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let pool_forecasts = pools
        .iter()
        .map(|(name, profile, bound)| PoolForecast {
            name: name.clone(),
            profile: profile.clone(),
            spend: spend(&runs, &[name.as_str()], *bound, None, horizon_seconds),
            price_estimate: runs.iter().any(|r| r.estimated(name)),
        })
        .collect();
    let profile_forecasts = profiles
        .iter()
        .map(|(name, budget, bound)| {
            let own: Vec<&str> = pools.iter().filter(|p| &p.1 == name).map(|p| p.0.as_str()).collect();
            ProfileForecast { name: name.clone(), spend: spend(&runs, &own, *bound, *budget, horizon_seconds) }
        })
        .collect();
    let workloads = plan.map(|p| attribution::workloads(p, traces, timelines, &runs, horizon_seconds)).unwrap_or_default();
    ClusterForecast {
        cluster: cluster.to_string(),
        seeds,
        runs: runs.len(),
        horizon_seconds,
        spend: spend(&runs, &all_pools, cluster_bound, cluster_budget, horizon_seconds),
        runs_usd_per_month: runs.iter().map(|r| cents(r.hourly(&all_pools).iter().sum::<f64>() / (horizon_seconds.max(1) as f64 / 3600.0) * HOURS_PER_MONTH)).collect(),
        pending_pod_minutes: Spread::over(timelines.iter().map(|t| t.pending_pod_seconds.values().sum::<u64>() as f64 / 60.0)),
        price_estimate: runs.iter().any(|r| all_pools.iter().any(|p| r.estimated(p))),
        profiles: profile_forecasts,
        pools: pool_forecasts,
        workloads,
        series: series(&runs, &all_pools),
    }
}

/// The figures of the NodePools `pools` together over the runs.
fn spend(runs: &[Run], pools: &[&str], bound: f64, budget: Option<f64>, horizon_seconds: u64) -> Spend {
    let hourly: Vec<Vec<f64>> = runs.iter().map(|r| r.hourly(pools)).collect();
    let hours = horizon_seconds as f64 / 3600.0;
    let total = |h: &Vec<f64>| h.iter().sum::<f64>();
    let per_hour = |h: &Vec<f64>| if hours > 0.0 { total(h) / hours } else { 0.0 };
    let mut by_type: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        for ((pool, instance_type, capacity_type), seconds) in &run.node_seconds {
            if pools.contains(&pool.as_str()) {
                let v = by_type.entry((instance_type.clone(), capacity_type.clone())).or_insert_with(|| vec![0.0; runs.len()]);
                v[i] += seconds / 3600.0;
            }
        }
    }
    Spend {
        usd_per_day: Spread::over(hourly.iter().map(|h| per_hour(h) * 24.0)),
        usd_per_month: Spread::over(hourly.iter().map(|h| per_hour(h) * HOURS_PER_MONTH)),
        p50_usd_per_hour: Spread::over(hourly.iter().map(|h| percentile(h, 50))),
        p95_usd_per_hour: Spread::over(hourly.iter().map(|h| percentile(h, 95))),
        bound_usd_per_hour: cents(bound),
        budget_usd_per_hour: budget,
        hours_over_budget: budget.map(|b| Spread::over(hourly.iter().map(|h| h.iter().filter(|s| **s > b + 1e-9).count() as f64))),
        node_hours: by_type.into_iter().map(|((instance_type, capacity_type), v)| NodeHours { instance_type, capacity_type, hours: Spread::over(v) }).collect(),
    }
}

/// The nearest-rank percentile (the smallest value with at least `p`% of the values at or below it).
pub fn percentile(values: &[f64], p: usize) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

fn series(runs: &[Run], pools: &[&str]) -> Series {
    let hourly: Vec<Vec<f64>> = runs.iter().map(|r| r.hourly(pools)).collect();
    let hours = hourly.iter().map(Vec::len).max().unwrap_or(0);
    let usd = (0..hours).map(|h| Spread::over(hourly.iter().map(|s| s.get(h).copied().unwrap_or(0.0)))).collect();
    let nodes = pools
        .iter()
        .map(|pool| {
            let mean = (0..hours).map(|h| runs.iter().map(|r| r.nodes_in_hour(pool, h)).sum::<f64>() / runs.len().max(1) as f64).map(|v| (v * 100.0).round() / 100.0).collect();
            (pool.to_string(), mean)
        })
        .collect();
    Series { usd, nodes }
}

#[cfg(test)]
mod tests;
