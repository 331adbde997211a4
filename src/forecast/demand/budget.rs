//! The work one forecast may ask for, checked before anything is drawn or replayed, so that a demand file in a pull
//! request cannot stall or exhaust CI (`arrivals per-hour=1000000` drew 2 GB in 10 s; `shortage per-month=1e12`
//! aborted on a failed allocation; `horizon "3650d"` with `seeds 1000` ran without end):
//!
//! - [`crate::limits::FORECAST_EVENTS`]: the random events one draw (one cluster, one seed) is expected to produce,
//!   from each rate × the horizon (a queue's candidates at its pattern's peak, which its thinning draws; each spot
//!   type×zone the cluster may launch; each zone and capacity type of a shortage rule). The draw's loops also stop at
//!   `draw::hard_stop` events, a safety net a Poisson count reaches with negligible probability once the mean passed.
//! - [`crate::limits::SIMULATED_DAYS`]: clusters × horizon days × seeds, what the replay's time grows with.
//!
//! Here: each rate alone at parse time ([`rates`]), and the figures and diagnostics; `run::budget` checks a run's
//! totals against one compile's plan (its spot type×zone pairs and zones). Each is E0451 at the value that asks for the work (the rate, the horizon; with the command line's `--horizon` or
//! `--seeds`, the demand file's start), naming the limit and its variable.

use super::{ClusterDemand, Demand, ShortageWhen};
use crate::diagnostic::{ErrorCode, ProfileDiagnostic, Sources, Span};
use crate::limits::{Limit, FORECAST_EVENTS, SIMULATED_DAYS};

const DAY: f64 = 86_400.0;

/// One source of random events and how many one draw is expected to produce.
#[derive(Debug, Clone)]
pub struct EventSource {
    pub span: Option<Span>,
    pub what: String,
    pub expected: f64,
}

/// What of a compile's cluster multiplies the rates: the spot type×zone pairs its NodePools may launch (their
/// instance types) and its zones. None at parse time: one pair and one zone.
#[derive(Debug, Clone, Default)]
pub struct Offerings {
    pub spot_types: Vec<String>,
    pub zones: usize,
}

/// The expected random events of one draw of cluster `d` over `horizon` seconds, per source.
pub fn event_sources(plan: Option<&Offerings>, d: &ClusterDemand, horizon: u64) -> Vec<EventSource> {
    let days = horizon as f64 / DAY;
    let mut out: Vec<EventSource> = d
        .queues
        .iter()
        .map(|q| EventSource { span: q.rate_span, what: format!("queue `{}`'s arrivals (per-hour at the pattern's peak)", q.name.value), expected: q.per_hour * q.pattern.max() * 24.0 * days })
        .collect();
    let mean_share = ((d.spot.share.0 + d.spot.share.1) / 2.0).max(1e-9);
    let one = vec![String::new()];
    let pairs: &[String] = plan.map_or(&one, |p| &p.spot_types);
    let spot: f64 = pairs.iter().map(|t| d.spot.rate_for(t) / mean_share * days).sum();
    let spot_span = d.spot.rate_span.or_else(|| d.spot.overrides.first().map(|o| o.rate_span)).unwrap_or(d.name.span);
    out.push(EventSource { span: Some(spot_span), what: format!("spot interruptions over {} type×zone pairs", pairs.len()), expected: spot });
    let all_zones = plan.map_or(1, |p| p.zones);
    for rule in &d.shortages {
        let ShortageWhen::Rate(per_day) = rule.when else { continue };
        let zones = if rule.zone.is_some() { 1 } else { all_zones };
        let kinds = if rule.capacity_type.is_some() { 1 } else { 2 };
        let what = format!("shortages of {} ({zones} zones × {kinds} capacity types)", rule.instance_type.value);
        out.push(EventSource { span: rule.rate_span, what, expected: per_day * days * (zones * kinds) as f64 });
    }
    out
}

/// At parse time (no compile yet): each rate on its own, over the file's horizon, against the event limit.
pub fn rates(demand: &Demand, sources: &Sources) -> Vec<ProfileDiagnostic> {
    let limit = match FORECAST_EVENTS.value() {
        Ok(l) => l,
        Err(e) => return vec![limit_unreadable(sources, &e)],
    };
    // NaN counts as too many: a rate nobody can bound is refused too.
    let too_many = |s: &EventSource| s.expected.is_nan() || s.expected > limit as f64;
    let mut out = Vec::new();
    for cluster in demand.clusters.values() {
        for s in event_sources(None, cluster, demand.horizon_seconds).iter().filter(|s| too_many(s)) {
            out.push(over_events(sources, cluster, s, s.expected, limit, demand.horizon_seconds));
        }
    }
    out
}

pub fn over_events(sources: &Sources, d: &ClusterDemand, worst: &EventSource, total: f64, limit: u64, horizon: u64) -> ProfileDiagnostic {
    let message = format!(
        "cluster `{}` would draw about {} random events per seed over {} days (the most from {}: about {}), more than the {limit} a forecast draw takes",
        d.name.value,
        round(total),
        round(horizon as f64 / DAY),
        worst.what,
        round(worst.expected)
    );
    sources.error(worst.span.unwrap_or(d.name.span), ErrorCode::E0451, message).help(format!("lower the rate or the horizon; {}", FORECAST_EVENTS.how_to_raise()))
}

pub fn over_days(demand: &Demand, horizon_flag: Option<u64>, seeds_flag: Option<u32>, clusters: usize, seeds: u32, days: f64, limit: u64) -> ProfileDiagnostic {
    let (span, from) = match (horizon_flag, seeds_flag) {
        (None, None) => (demand.horizon_span.or(demand.seeds_span), "the demand file's"),
        _ => (None, "the command line's"),
    };
    let horizon_days = horizon_flag.unwrap_or(demand.horizon_seconds) as f64 / DAY;
    let message = format!(
        "{clusters} clusters × {} days ({from} horizon) × {seeds} seeds is {} simulated days, more than the {limit} a forecast replays",
        round(horizon_days),
        round(days)
    );
    let help = format!("shorten the horizon, use fewer seeds or forecast one cluster (--cluster); {}", SIMULATED_DAYS.how_to_raise());
    demand.sources.error(span.unwrap_or(Span { file: 0, offset: 0, len: 0 }), ErrorCode::E0451, message).help(help)
}

pub fn limit_unreadable(sources: &Sources, e: &std::io::Error) -> ProfileDiagnostic {
    let envs: Vec<&str> = [FORECAST_EVENTS, SIMULATED_DAYS].iter().map(|l: &Limit| l.env).collect();
    sources.error(Span { file: 0, offset: 0, len: 0 }, ErrorCode::E0451, format!("a forecast limit cannot be read: {e}")).help(format!("set {} to a positive whole number, or unset it", envs.join(" or ")))
}

/// A figure as a message shows it: whole, or `1e12` past what an integer prints well.
fn round(x: f64) -> String {
    if x.is_finite() && x < 1e15 { format!("{}", x.round() as u64) } else { format!("{x:e}") }
}
