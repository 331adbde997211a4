//! One forecast from a compile and a demand file: for every cluster the demand file names and every seed, draw the
//! run's events ([`super::draw::trace`]), replay them through Karpenter's provisioning and disruption
//! ([`super::engine::replay`]), and price the runs ([`super::summary`]).
//!
//! The seeds are `seed`, `seed + 1`, … (`seeds` of them), the same for every cluster and for both sides of a pull
//! request, so two compiles forecast on the same seeds differ only by what changed. Runs are independent and go in
//! parallel; results are collected in (cluster, seed) order, so the output does not depend on the schedule.

use rayon::prelude::*;

use super::demand::{budget, ClusterDemand, Demand};
use super::report::Forecast;
use super::summary::{summarize_seeds, ClusterForecast};
use super::timeline::Timeline;
use super::trace::Trace;
use crate::compile::Compilation;
use crate::diagnostic::ProfileDiagnostic;

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

/// Everything a run of `demand` under `c` is checked for before it starts: the names (`demand::check`), then, when
/// they resolve, the work `opts` asks for against the limits ([`budget`]).
pub fn check_demand(c: &Compilation, demand: &Demand, opts: &Options) -> Vec<ProfileDiagnostic> {
    let mut problems = super::demand::check(demand, c);
    if !problems.iter().any(ProfileDiagnostic::is_error) {
        problems.extend(budget(c, demand, opts));
    }
    problems
}

/// The run `opts` asks of `demand` under `c`, against the forecast's limits (`demand::budget`: the simulated days,
/// and each cluster's expected random events with its own spot type×zone pairs and zones), before anything is drawn:
/// E0451 per cause.
pub fn budget(c: &Compilation, demand: &Demand, opts: &Options) -> Vec<ProfileDiagnostic> {
    use crate::limits::{FORECAST_EVENTS, SIMULATED_DAYS};
    use budget::{event_sources, limit_unreadable, over_days, over_events, Offerings};
    let (events_limit, days_limit) = match (FORECAST_EVENTS.value(), SIMULATED_DAYS.value()) {
        (Ok(e), Ok(d)) => (e, d),
        (Err(e), _) | (_, Err(e)) => return vec![limit_unreadable(&demand.sources, &e)],
    };
    let horizon = opts.horizon_seconds.unwrap_or(demand.horizon_seconds);
    let seeds = opts.seeds.unwrap_or(demand.seeds).max(1);
    let clusters: Vec<(&ClusterDemand, &crate::solve::ClusterPlan)> = demand
        .clusters
        .values()
        .filter(|d| opts.cluster.as_ref().is_none_or(|w| *w == d.name.value))
        .filter_map(|d| c.plan.clusters.iter().find(|p| p.name == d.name.value).map(|p| (d, p)))
        .collect();
    let mut out = Vec::new();
    let days = clusters.len() as f64 * horizon as f64 / 86_400.0 * f64::from(seeds);
    if days > days_limit as f64 {
        out.push(over_days(demand, opts.horizon_seconds, opts.seeds, clusters.len(), seeds, days, days_limit));
    }
    for (d, plan) in clusters {
        let spot_types = super::draw::capacity::spot_offerings(c, plan).into_iter().map(|(t, _)| t).collect();
        let zones = plan.pools.iter().flat_map(|p| p.zones.iter()).collect::<std::collections::BTreeSet<_>>().len();
        let found = event_sources(Some(&Offerings { spot_types, zones }), d, horizon);
        let total: f64 = found.iter().map(|s| s.expected).sum();
        if total.is_nan() || total > events_limit as f64 {
            let worst = found.iter().max_by(|a, b| a.expected.total_cmp(&b.expected)).expect("a cluster has its spot source");
            out.push(over_events(&demand.sources, d, worst, total, events_limit, horizon));
        }
    }
    out
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
