//! One forecast from a compile and a demand file: for every cluster the demand file names and every seed, draw the
//! run's events ([`super::draw::trace`]), replay them through Karpenter's provisioning and disruption
//! ([`super::engine::replay`]), and price the runs ([`super::summary`]).
//!
//! The seeds are `seed`, `seed + 1`, … (`seeds` of them), the same for every cluster and for both sides of a pull
//! request, so two compiles forecast on the same seeds differ only by what changed. Runs are independent and go in
//! parallel; results are collected in (cluster, seed) order, so the output does not depend on the schedule.

use rayon::prelude::*;

use super::demand::{ClusterDemand, Demand};
use super::report::Forecast;
use super::summary::{summarize_seeds, ClusterForecast};
use super::timeline::Timeline;
use super::trace::Trace;
use crate::compile::Compilation;

/// What the command line may change of the demand file's run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only this cluster (None: every cluster the demand file names).
    pub cluster: Option<String>,
    pub seed: Option<u64>,
    pub seeds: Option<u32>,
    pub horizon_seconds: Option<u64>,
}

/// Why a forecast cannot be made from these inputs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ForecastError {
    #[error("the demand file names no cluster `{wanted}`; it names {}", if .named.is_empty() { "none".to_string() } else { .named.join(", ") })]
    UnknownCluster { wanted: String, named: Vec<String> },
    #[error("the demand file names no cluster: add a `cluster \"NAME\" {{ … }}` block for each cluster to forecast")]
    NoCluster,
}

/// The seeds of a run: `seed`, `seed + 1`, … (`seeds` of them, at least one).
pub fn seeds(demand: &Demand, opts: &Options) -> Vec<u64> {
    let first = opts.seed.unwrap_or(demand.seed);
    (0..u64::from(opts.seeds.unwrap_or(demand.seeds).max(1))).map(|i| first.wrapping_add(i)).collect()
}

/// The forecast of `c` under `demand` (read from `demand_path`, as the output names it).
pub fn forecast(c: &Compilation, demand: &Demand, demand_path: &str, opts: &Options) -> Result<Forecast, ForecastError> {
    forecast_with(c, demand, demand_path, opts, super::engine::replay)
}

/// [`forecast`] with another replay (the engine, or a stand-in in tests): `replay(c, cluster, trace)`.
pub fn forecast_with(c: &Compilation, demand: &Demand, demand_path: &str, opts: &Options, replay: impl Fn(&Compilation, &str, &Trace) -> Timeline + Sync) -> Result<Forecast, ForecastError> {
    let clusters = clusters(c, demand, opts)?;
    let seeds = seeds(demand, opts);
    let horizon = opts.horizon_seconds.unwrap_or(demand.horizon_seconds);
    let jobs: Vec<(&str, &ClusterDemand, u64)> = clusters.iter().flat_map(|(name, d)| seeds.iter().map(move |s| (*name, *d, *s))).collect();
    let runs: Vec<(Trace, Timeline)> = jobs
        .par_iter()
        .map(|(cluster, d, seed)| {
            let trace = super::draw::trace(c, cluster, d, *seed, horizon);
            let timeline = replay(c, cluster, &trace);
            (trace, timeline)
        })
        .collect();
    let per_cluster: Vec<ClusterForecast> = clusters
        .iter()
        .zip(runs.chunks(seeds.len()))
        .map(|((cluster, _), runs)| {
            let traces: Vec<&Trace> = runs.iter().map(|(t, _)| t).collect();
            let timelines: Vec<Timeline> = runs.iter().map(|(_, t)| t.clone()).collect();
            summarize_seeds(c, cluster, &traces, &timelines)
        })
        .collect();
    Ok(Forecast::new(demand_path.to_string(), horizon, seeds, per_cluster))
}

/// The clusters to forecast: the demand file's that the compile has (in name order), or the one `--cluster` names.
fn clusters<'d>(c: &Compilation, demand: &'d Demand, opts: &Options) -> Result<Vec<(&'d str, &'d ClusterDemand)>, ForecastError> {
    let compiled = |name: &str| c.plan.clusters.iter().any(|p| p.name == name);
    let named: Vec<(&str, &ClusterDemand)> = demand.clusters.iter().filter(|(name, _)| compiled(name)).map(|(n, d)| (n.as_str(), d)).collect();
    match &opts.cluster {
        Some(wanted) => named
            .iter()
            .find(|(n, _)| n == wanted)
            .map(|found| vec![*found])
            .ok_or_else(|| ForecastError::UnknownCluster { wanted: wanted.clone(), named: named.iter().map(|(n, _)| n.to_string()).collect() }),
        None if named.is_empty() => Err(ForecastError::NoCluster),
        None => Ok(named),
    }
}
