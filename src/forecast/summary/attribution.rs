//! Which workload or queue spent what: each NodePool's spend shared among the workloads and Kueue LocalQueues that
//! may run there (a workload's NodePools, a queue's flavors), in proportion to the accelerators their running pods
//! request over time. Nodes are shared and a timeline does not say which pod ran where, so this is an attribution,
//! stated as one; the NodePools' own figures are what the nodes cost.

use super::runs::Run;
use super::{Spread, WorkloadForecast, HOURS_PER_MONTH};
use crate::forecast::timeline::Timeline;
use crate::forecast::trace::{Event, Trace};
use crate::solve::ClusterPlan;

/// The extended resources an accelerator pod requests (`catalog::AcceleratorKind::pod_resources` of every kind).
const ACCELERATOR_RESOURCES: [&str; 4] = ["nvidia.com/gpu", "amd.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore"];

/// A workload or a queue: what it may run on and what its pods did in one run.
struct Consumer {
    name: String,
    kind: &'static str,
    profile: String,
    pools: Vec<String>,
}

/// Per consumer and run: running pod-seconds, accelerator-seconds, pending pod-seconds.
#[derive(Default, Clone, Copy)]
struct Usage {
    running_pod_seconds: f64,
    accelerator_seconds: f64,
    pending_pod_seconds: f64,
}

pub(super) fn workloads(plan: &ClusterPlan, traces: &[&Trace], timelines: &[Timeline], runs: &[Run], horizon_seconds: u64) -> Vec<WorkloadForecast> {
    let consumers = consumers(plan);
    let usage: Vec<Vec<Usage>> = timelines
        .iter()
        .enumerate()
        .map(|(i, timeline)| {
            let trace = traces.get(i).or(traces.first()).copied();
            consumers.iter().map(|c| trace.map_or_else(Usage::default, |t| usage(c, t, timeline, horizon_seconds))).collect()
        })
        .collect();
    let days = horizon_seconds as f64 / 86_400.0;
    consumers
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let spent: Vec<f64> = runs.iter().zip(&usage).map(|(run, u)| share(&consumers, u, ci, run)).collect();
            let per = |v: f64, unit: f64| if days > 0.0 { v / days * unit } else { 0.0 };
            WorkloadForecast {
                name: c.name.clone(),
                kind: c.kind.to_string(),
                profile: c.profile.clone(),
                usd_per_day: Spread::over(spent.iter().map(|s| per(*s, 1.0))),
                usd_per_month: Spread::over(spent.iter().map(|s| per(*s, HOURS_PER_MONTH / 24.0))),
                running_pod_hours: Spread::over(usage.iter().map(|u| u[ci].running_pod_seconds / 3600.0)),
                pending_pod_minutes: Spread::over(usage.iter().map(|u| u[ci].pending_pod_seconds / 60.0)),
            }
        })
        .collect()
}

fn consumers(plan: &ClusterPlan) -> Vec<Consumer> {
    let workloads = plan.ops.workloads.iter().map(|w| Consumer { name: format!("{}/{}", w.namespace, w.name), kind: "workload", profile: w.profile.clone(), pools: w.nodepools.clone() });
    let queues = plan.queues.queues.iter().map(|q| Consumer {
        name: format!("{}/{}", q.namespace, q.name),
        kind: "queue",
        profile: q.profile.clone(),
        pools: q.flavors.iter().map(|f| f.flavor.clone()).collect(),
    });
    workloads.chain(queues).collect()
}

/// Consumer `ci`'s share of the spend of its NodePools in one run.
fn share(consumers: &[Consumer], usage: &[Usage], ci: usize, run: &Run) -> f64 {
    consumers[ci]
        .pools
        .iter()
        .map(|pool| {
            let total: f64 = consumers.iter().zip(usage).filter(|(c, _)| c.pools.contains(pool)).map(|(_, u)| u.accelerator_seconds).sum();
            if total > 0.0 { run.total(pool) * usage[ci].accelerator_seconds / total } else { 0.0 }
        })
        .sum()
}

fn usage(c: &Consumer, trace: &Trace, timeline: &Timeline, horizon: u64) -> Usage {
    if c.kind == "workload" {
        let pending = timeline.pending_pod_seconds.get(&c.name).copied().unwrap_or(0) as f64;
        let wanted = replica_seconds(trace, &c.name, horizon);
        let running = (wanted - pending).max(0.0);
        let per_pod = trace.workloads.get(&c.name).map_or(1.0, accelerators);
        return Usage { running_pod_seconds: running, accelerator_seconds: running * per_pod, pending_pod_seconds: pending };
    }
    let mut u = Usage::default();
    for event in &trace.events {
        let Event::Job { at, name, queue, pods, duration_seconds, pod } = event else { continue };
        if queue != &c.name {
            continue;
        }
        let pending = timeline.pending_pod_seconds.get(&format!("{queue}/{name}")).copied().unwrap_or(0);
        // The gang starts together once its last pod stops pending.
        let start = at + pending / u64::from((*pods).max(1));
        let running = f64::from(*pods) * horizon.saturating_sub(start).min(*duration_seconds) as f64;
        u.running_pod_seconds += running;
        u.accelerator_seconds += running * accelerators(pod);
        u.pending_pod_seconds += pending as f64;
    }
    u
}

/// The pod-seconds a workload's desired replicas add up to over the horizon (its `Replicas` events, a step function
/// from zero).
fn replica_seconds(trace: &Trace, workload: &str, horizon: u64) -> f64 {
    let mut total = 0.0;
    let (mut since, mut replicas) = (0u64, 0u32);
    for event in &trace.events {
        if let Event::Replicas { at, workload: w, replicas: r } = event
            && w == workload
        {
            let at = (*at).min(horizon);
            total += f64::from(replicas) * (at - since.min(at)) as f64;
            (since, replicas) = (at, *r);
        }
    }
    total + f64::from(replicas) * horizon.saturating_sub(since) as f64
}

/// The accelerators a pod object requests (its containers' requests, or limits where a request is missing, as the
/// API server defaults an extended resource's request to its limit); a pod without any counts as one.
fn accelerators(pod: &serde_json::Value) -> f64 {
    let containers = pod["spec"]["containers"].as_array().map(Vec::as_slice).unwrap_or_default();
    let quantity = |v: &serde_json::Value| v.as_f64().or_else(|| v.as_str().and_then(|s| s.parse().ok())).unwrap_or(0.0);
    let sum: f64 = containers
        .iter()
        .flat_map(|c| ACCELERATOR_RESOURCES.iter().map(move |r| {
            let requests = &c["resources"]["requests"][*r];
            quantity(if requests.is_null() { &c["resources"]["limits"][*r] } else { requests })
        }))
        .sum();
    if sum > 0.0 { sum } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn replica_seconds_integrate_the_step_function_to_the_horizon() {
        let trace = Trace {
            version: 1,
            cluster: "c".into(),
            seed: 1,
            horizon_seconds: 100,
            start_unix: crate::forecast::trace::START_UNIX,
            workloads: BTreeMap::new(),
            startup_seconds: BTreeMap::new(),
            events: vec![
                Event::Replicas { at: 10, workload: "ns/w".into(), replicas: 2 },
                Event::Replicas { at: 40, workload: "ns/other".into(), replicas: 9 },
                Event::Replicas { at: 60, workload: "ns/w".into(), replicas: 1 },
            ],
        };
        assert_eq!(replica_seconds(&trace, "ns/w", 100), 2.0 * 50.0 + 40.0);
        assert_eq!(replica_seconds(&trace, "ns/w", 30), 2.0 * 20.0, "cut at the horizon");
    }

    #[test]
    fn accelerators_read_requests_then_limits_and_count_a_plain_pod_as_one() {
        let pod = serde_json::json!({"spec": {"containers": [{"resources": {"requests": {"nvidia.com/gpu": "2"}}}, {"resources": {"limits": {"nvidia.com/gpu": 1}}}]}});
        assert_eq!(accelerators(&pod), 3.0);
        assert_eq!(accelerators(&serde_json::json!({"spec": {"containers": [{}]}})), 1.0);
    }
}
