//! One run's concrete events from a cluster's demand: `trace(c, cluster, demand, seed, horizon)` gives the
//! [`Trace`] the engine and the conformance oracle replay.
//!
//! - Every random draw comes from a stream of its own, keyed by (seed, entity): a workload, a queue, a spot
//!   type×zone, a shortage rule ([`streams::stream`]). Adding or changing one entity changes no other's events.
//! - Workloads: the pod their replicas run (built as compile's checks build it, so it lands where the compiled
//!   workload lands) and their replicas over time: the demand's replicas, or the decisions of their HPA
//!   ([`hpa`], Kubernetes' controller ported) or KEDA ScaledObject ([`keda`]) on the demand's metric. A workload the
//!   demand does not name runs at its minimum replicas throughout.
//! - The metric is assumed to be reported by every replica the autoscaler counts: the trace is drawn before
//!   Karpenter's replay, so pods pending for capacity (which report no GPU utilisation, and which the real
//!   controller counts as missing: 0 on a scale-up, the target on a scale-down) are not fed back. Named, not
//!   modelled.
//! - Queues: Jobs arriving as a Poisson process ([`jobs`]); spot interruptions per type×zone, shortages and drift
//!   ([`capacity`]).

use std::collections::BTreeMap;

use crate::compile::Compilation;
use crate::forecast::demand::{self, ClusterDemand};
use crate::forecast::scaler::Scaler;
use crate::forecast::trace::{start_unix_on, Event, Trace, VERSION};

pub mod capacity;
pub mod hpa;
pub mod jobs;
pub mod keda;
pub mod sampled;
pub mod streams;
pub mod workload;

/// The trace of `cluster` (a cluster of `c`) under `demand` for one seed. The demand must have passed
/// [`demand::check`] against `c`: names it does not resolve are skipped.
pub fn trace(c: &Compilation, cluster: &str, demand: &ClusterDemand, seed: u64, horizon_seconds: u64) -> Trace {
    let mut trace = Trace { version: VERSION, cluster: cluster.to_string(), seed, horizon_seconds, start_unix: start_unix_on(demand.start_weekday), workloads: BTreeMap::new(), startup_seconds: BTreeMap::new(), events: Vec::new() };
    let Some(plan) = c.plan.clusters.iter().find(|p| p.name == cluster) else { return trace };
    let mut events: Vec<Event> = Vec::new();
    for w in &plan.ops.workloads {
        let key = format!("{}/{}", w.namespace, w.name);
        let Some(pod) = crate::check::simulated::replicas(plan, w, 1).pop() else { continue };
        let mut object = pod.to_object();
        object["metadata"]["name"] = serde_json::json!(w.name);
        trace.workloads.insert(key.clone(), object);
        let asked = demand.workloads.iter().find(|d| demand::check::workload(plan, &d.name.value).is_ok_and(|found| std::ptr::eq(found, w)));
        let scaler = Scaler::of(c, cluster, w);
        let mut rng = streams::stream(seed, &format!("workload/{key}"));
        events.extend(workload::replicas(&key, w, &scaler, asked.map(|a| &a.drive), &mut rng, horizon_seconds, demand.start_weekday));
    }
    for q in &demand.queues {
        if let Ok(plan_queue) = demand::check::queue(plan, &q.name.value) {
            events.extend(jobs::jobs(plan, plan_queue, q, seed, horizon_seconds, demand.start_weekday));
        }
    }
    events.extend(capacity::interruptions(c, plan, &demand.spot, seed, horizon_seconds));
    events.extend(capacity::shortages(plan, &demand.shortages, seed, horizon_seconds));
    events.extend(capacity::drifts(plan, &demand.drifts, horizon_seconds));
    trace.startup_seconds = capacity::startup(plan, &demand.startup);
    // Stable: events of one second keep the order drawn (workloads, queues, interruptions, shortages, drift).
    events.sort_by_key(Event::at);
    trace.events = events;
    trace
}

/// The most events a draw's loop makes before it stops: far past the event limit's mean (a Poisson count with mean
/// λ passes λ + 10√λ with probability below 10⁻²⁰), so it never cuts an admitted draw short (`demand::budget` admits
/// the rates before anything is drawn).
pub fn hard_stop() -> usize {
    let limit = crate::limits::FORECAST_EVENTS.value_or_default();
    usize::try_from(limit.saturating_mul(2).saturating_add(1_000)).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests;
