//! A queue's Jobs: arrivals as a Poisson process whose rate follows the queue's pattern (drawn by thinning,
//! Lewis & Shedler 1979: candidates at the pattern's peak rate, each kept with probability rate(t)/peak), each
//! Job's duration fixed or log-normal (median and p90, clamped), all from the queue's own stream.

use rand::rngs::ChaCha8Rng;
use rand::RngExt;
use rand_distr::{Exp, LogNormal};
use serde_json::json;

use super::streams::stream;
use crate::forecast::demand::{JobDuration, QueueDemand};
use crate::forecast::trace::Event;
use crate::simulate::pods::QUEUE_LABEL;
use crate::solve::queue::QueuePlan;
use crate::solve::ClusterPlan;

/// z of the standard normal's 90th percentile.
const Z90: f64 = 1.281_551_565_544_600_4;

/// The queue's `Job` events over the horizon.
pub fn jobs(plan: &ClusterPlan, queue: &QueuePlan, demand: &QueueDemand, seed: u64, horizon: u64, start_weekday: u8) -> Vec<Event> {
    let key = format!("{}/{}", queue.namespace, queue.name);
    let mut rng = stream(seed, &format!("queue/{key}"));
    let pod = job_pod(plan, queue, demand);
    let pods = demand.pods.as_ref().map_or(1, |p| p.value);
    let peak = demand.per_hour * demand.pattern.max() / 3_600.0;
    let mut out = Vec::new();
    let Ok(gap) = Exp::new(peak) else { return out };
    if peak <= 0.0 {
        return out;
    }
    let mut t = 0.0;
    // Candidates, kept or not: the work is theirs (see `demand::budget`, which admits the rate).
    let stop = super::hard_stop();
    for _ in 0..stop {
        t += rng.sample(gap);
        if t >= horizon as f64 {
            return out;
        }
        let at = t as u64;
        let keep = demand.per_hour * demand.pattern.at(at, start_weekday) / 3_600.0 / peak;
        if rng.random::<f64>() >= keep {
            continue;
        }
        let duration_seconds = duration(&demand.duration, &mut rng);
        let name = format!("{}-{}", queue.name, out.len());
        out.push(Event::Job { at, name, queue: key.clone(), pods, duration_seconds, pod: pod.clone() });
    }
    out
}

/// One draw of a Job's duration.
pub fn duration(d: &JobDuration, rng: &mut ChaCha8Rng) -> u64 {
    match *d {
        JobDuration::Fixed(s) => s,
        JobDuration::LogNormal { median, p90, min, max } => {
            let sigma = ((p90 as f64).ln() - (median as f64).ln()) / Z90;
            let Ok(dist) = LogNormal::new((median as f64).ln(), sigma) else { return median };
            (rng.sample(dist).round() as u64).clamp(min, max.max(min))
        }
    }
}

/// A Job's pod: the queue's accelerator per pod (default: the queue's pool's largest node, a whole-node Job) and
/// the LocalQueue label. No nodeSelector or tolerations: Kueue injects the admitting flavor's on admission
/// (`pkg/controller/jobframework` `podset.Merge` of the ResourceFlavor's nodeLabels and tolerations), which the engine
/// applies.
fn job_pod(plan: &ClusterPlan, queue: &QueuePlan, demand: &QueueDemand) -> serde_json::Value {
    let node = queue.flavors.iter().map(|f| f.node).max().unwrap_or(1).max(1);
    let gpus = demand.gpus_per_pod.as_ref().map_or(node, |g| g.value);
    let mut requests = serde_json::Map::new();
    requests.insert(queue.accelerator.resource().to_string(), json!(gpus.to_string()));
    if queue.efa {
        let efa = plan.pools.iter().find(|p| queue.flavors.first().is_some_and(|f| f.flavor == p.name)).map_or(0, |p| crate::solve::workload_placement(&[p], gpus).requests.values().sum::<u32>());
        if efa > 0 {
            requests.insert(crate::catalog::efa::EFA_RESOURCE.to_string(), json!(efa.to_string()));
        }
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": { "name": queue.name, "namespace": queue.namespace, "labels": { QUEUE_LABEL: queue.name } },
        "spec": { "containers": [{ "name": "job", "image": "job:1", "resources": { "requests": requests } }] },
    })
}
