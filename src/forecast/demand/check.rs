//! The demand file's names against one compile: clusters (E0420), workloads (E0421), queues (E0422), pools and
//! NodePools (E0423), KEDA triggers and metrics (E0429), instance types and zones (E0430). Each unknown name gets the
//! profile's did-you-mean and the names it could have been.

use super::{ClusterDemand, Demand, Drive};
use crate::compile::Compilation;
use crate::diagnostic::{did_you_mean_among, ErrorCode, ProfileDiagnostic, Sources, Spanned};
use crate::solve::ops::workload::WorkloadPlan;
use crate::solve::queue::QueuePlan;
use crate::forecast::scaler::Scaler;
use crate::solve::ClusterPlan;

/// Every name of `demand` that `c` does not define, one diagnostic each. (The work a run asks for is checked apart,
/// `run::budget`, against the run's options.)
pub fn check(demand: &Demand, c: &Compilation) -> Vec<ProfileDiagnostic> {
    let mut out = Vec::new();
    let names: Vec<&str> = c.plan.clusters.iter().map(|p| p.name.as_str()).collect();
    for cluster in demand.clusters.values() {
        match c.plan.clusters.iter().find(|p| p.name == cluster.name.value) {
            Some(plan) => check_cluster(&demand.sources, cluster, plan, c, &mut out),
            None => out.push(unknown(&demand.sources, &cluster.name, ErrorCode::E0420, "cluster", &names, "clusters the profiles define")),
        }
    }
    out
}

fn check_cluster(sources: &Sources, cluster: &ClusterDemand, plan: &ClusterPlan, c: &Compilation, out: &mut Vec<ProfileDiagnostic>) {
    for w in &cluster.workloads {
        match workload(plan, &w.name.value) {
            Ok(found) => check_metric(sources, w, found, &crate::forecast::scaler::Scaler::of(c, &plan.name, found), out),
            Err(names) => out.push(unknown(sources, &w.name, ErrorCode::E0421, "workload", &names, &format!("workloads of cluster {}", plan.name))),
        }
    }
    for q in &cluster.queues {
        if let Err(names) = queue(plan, &q.name.value) {
            out.push(unknown(sources, &q.name, ErrorCode::E0422, "queue", &names, &format!("queues of cluster {}", plan.name)));
        }
    }
    let pool_names = pools_and_nodepools(plan);
    for target in cluster.startup.iter().map(|s| &s.target).chain(cluster.drifts.iter().map(|d| &d.nodepool)) {
        if nodepools(plan, &target.value).is_empty() {
            out.push(unknown(sources, target, ErrorCode::E0423, "pool or NodePool", &pool_names, &format!("pools and NodePools of cluster {}", plan.name)));
        }
    }
    // The types the cluster's NodePools may launch: a rule for any other type would never apply.
    let types: Vec<&str> = plan.pools.iter().flat_map(|p| p.candidates.iter().map(|t| t.name.as_str())).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let families: Vec<&str> = types.iter().filter_map(|t| t.split('.').next()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let spot = cluster.spot.overrides.iter().map(|o| (&o.name, if o.family { &families } else { &types }, if o.family { "instance family" } else { "instance type" }));
    let short = cluster.shortages.iter().map(|s| (&s.instance_type, &types, "instance type"));
    for (name, known, what) in spot.chain(short) {
        if !known.contains(&name.value.as_str()) {
            out.push(unknown(sources, name, ErrorCode::E0430, what, known, &format!("{what}s the NodePools of cluster {} may launch", plan.name)));
        }
    }
    let zones: Vec<&str> = plan.pools.iter().flat_map(|p| p.zones.iter().map(String::as_str)).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    for zone in cluster.shortages.iter().filter_map(|s| s.zone.as_ref()) {
        if !zones.contains(&zone.value.as_str()) {
            out.push(unknown(sources, zone, ErrorCode::E0430, "zone", &zones, &format!("zones of cluster {}", plan.name)));
        }
    }
}

/// A metric series needs an autoscaler that reads it, and a `trigger` names one of the ScaledObject's.
fn check_metric(sources: &Sources, w: &super::WorkloadDemand, found: &WorkloadPlan, scaler: &Scaler, out: &mut Vec<ProfileDiagnostic>) {
    let Drive::Metric(metrics) = &w.drive else { return };
    let triggers: Vec<&str> = match scaler {
        Scaler::Keda(k) => k.triggers.iter().map(|t| t.name.as_str()).collect(),
        _ => Vec::new(),
    };
    if matches!(scaler, Scaler::Fixed) {
        let message = format!("workload `{}` has no autoscaler to read a metric", w.name.value);
        let help = "give its replicas instead: replicas { … } (or add `autoscale` or a `trigger` to the workload in its profile)";
        out.push(sources.error(w.name.span, ErrorCode::E0429, message).help(help));
        return;
    }
    for trigger in metrics.iter().filter_map(|m| m.trigger.as_ref()) {
        if !matches!(scaler, Scaler::Keda(_)) {
            let message = format!("workload `{}` is scaled by an HPA, which has no triggers", w.name.value);
            out.push(sources.error(trigger.span, ErrorCode::E0429, message).help("remove trigger=…: the series is the HPA's metric"));
        } else if !triggers.contains(&trigger.value.as_str()) {
            out.push(unknown(sources, trigger, ErrorCode::E0429, "KEDA trigger", &triggers, &format!("triggers of ScaledObject {}", found.name)));
        }
    }
}

fn unknown(sources: &Sources, name: &Spanned<String>, code: ErrorCode, what: &str, known: &[&str], set: &str) -> ProfileDiagnostic {
    let message = format!("unknown {what} `{}`", crate::input::excerpt(&name.value));
    sources.error(name.span, code, message).help(did_you_mean_among(&name.value, known, set))
}

/// The workload a demand names: `name` when one workload of the cluster has it, else `namespace/name`. Err: the
/// names it could have written.
pub fn workload<'p>(plan: &'p ClusterPlan, name: &str) -> Result<&'p WorkloadPlan, Vec<&'p str>> {
    let all = &plan.ops.workloads;
    let by_key = all.iter().find(|w| name.split_once('/').is_some_and(|(ns, n)| w.namespace == ns && w.name == n));
    let by_name: Vec<&WorkloadPlan> = all.iter().filter(|w| w.name == name).collect();
    match (by_key, by_name.as_slice()) {
        (Some(w), _) => Ok(w),
        (None, [w]) => Ok(*w),
        _ => Err(all.iter().map(|w| if all.iter().filter(|o| o.name == w.name).count() > 1 { leak(&w.namespace, &w.name) } else { w.name.as_str() }).collect()),
    }
}

/// The queue a demand names, as [`workload`] finds a workload.
pub fn queue<'p>(plan: &'p ClusterPlan, name: &str) -> Result<&'p QueuePlan, Vec<&'p str>> {
    let all = &plan.queues.queues;
    let by_key = all.iter().find(|q| name.split_once('/').is_some_and(|(ns, n)| q.namespace == ns && q.name == n));
    let by_name: Vec<&QueuePlan> = all.iter().filter(|q| q.name == name).collect();
    match (by_key, by_name.as_slice()) {
        (Some(q), _) => Ok(q),
        (None, [q]) => Ok(*q),
        _ => Err(all.iter().map(|q| q.name.as_str()).collect()),
    }
}

/// `namespace/name` for a help text (a few per compile, on the error path only).
fn leak<'a>(namespace: &str, name: &str) -> &'a str {
    Box::leak(format!("{namespace}/{name}").into_boxed_str())
}

/// The NodePools a `pool=`/`nodepool=` names: the pool's tiers, or the one NodePool.
pub fn nodepools(plan: &ClusterPlan, name: &str) -> Vec<String> {
    plan.pools.iter().filter(|p| p.name == name || p.pool == name).map(|p| p.name.clone()).collect()
}

fn pools_and_nodepools(plan: &ClusterPlan) -> Vec<&str> {
    let mut names: Vec<&str> = plan.pools.iter().flat_map(|p| [p.pool.as_str(), p.name.as_str()]).collect();
    names.sort();
    names.dedup();
    names
}
