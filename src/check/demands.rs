//! Every declared demand of a cluster at once (issue 32): each `workload` at its max replicas, each queue's nominal
//! quota in use by gang jobs of whole nodes, and the add-on DaemonSets on every node, through Kueue admission and
//! Karpenter's scheduler together. A pod that pends is a demand the generated objects cannot hold beside the others:
//! E0340 at the queue's quota or the workload's replicas, a warning on a pool `adopt` wrote
//! (`PoolPlan::whole_cluster_severity`).
//!
//! A queue's quota is filled with one Job per flavor whose pods each request one node of the flavor's NodePool
//! (its largest type's accelerators, and the EFA interfaces gpuplan tells such pods to request): the whole-node
//! jobs a training queue exists for; the rest of the quota is one smaller pod. Kueue admits a Job's pods together (kubernetes-sigs/kueue v0.19.2
//! `pkg/workload/workload.go` `Info.TotalRequests`: one Workload per Job, its pod set's requests × count) and adds its
//! flavor's nodeLabels and tolerations (`pkg/podset/podset.go` `FromAssignment`), so the pods land on that
//! flavor's NodePool or nowhere.

use std::sync::Arc;

use crate::diagnostic::ErrorCode;
use crate::simulate::manifests::Manifests;
use crate::simulate::pods::{Pod, Queued};
use crate::simulate::report::PendingPod;
use crate::simulate::yaml::Resources;
use crate::simulate::{self, Report};
use crate::solve::queue::QueuePlan;
use crate::solve::PoolPlan;

use super::context::{ClusterCtx, PoolDiagnostic};
use super::simulated::workload_pods;
use super::simulated::replica_of;

/// The gang jobs that hold every queue's nominal quota: per queue and flavor, one Job of `nominal ÷ node` whole-node
/// pods, and one pod of the rest. On a time-sliced or MIG pool a job's pod takes one slice or MIG device (as lint
/// GP034 reads such quotas): a pod asking for a whole node's slices is not what runs there, and would need an empty
/// node where the workloads' spread leaves none.
pub fn quota_pods(ctx: &ClusterCtx) -> Vec<Pod> {
    let mut pods = Vec::new();
    for (order, q) in ctx.cluster.queues.queues.iter().enumerate() {
        for f in q.flavors.iter().filter(|f| f.node > 0) {
            let Some(pool) = ctx.cluster.pools.iter().find(|p| p.name == f.flavor) else { continue };
            let job = job_name(q, &f.flavor);
            let pod = pod_units(pool, f.node);
            pods.extend(job_pods(q, pool, &job, order, pod, f.nominal / pod));
            pods.extend(job_pods(q, pool, &format!("{job}-rest"), order, f.nominal % pod, u32::from(f.nominal % pod > 0)));
        }
    }
    pods
}

/// `count` pods of one Job in the queue's LocalQueue, each requesting `units` of the pool's accelerator (and the EFA
/// interfaces such a pod requests on an EFA pool).
fn job_pods(q: &QueuePlan, pool: &PoolPlan, job: &str, order: usize, units: u32, count: u32) -> Vec<Pod> {
    let queued = Arc::new(Queued {
        workload: format!("{}/{job}", q.namespace),
        namespace: q.namespace.clone(),
        queue: q.name.clone(),
        workload_priority_class: None,
        priority_class_name: None,
        created: None,
        order,
    });
    let mut requests = Resources::from([(pool.resource().to_string(), i128::from(units) * 1000), ("pods".to_string(), 1000)]);
    requests.extend(pool.efa_request(units).map(|n| (crate::catalog::efa::EFA_RESOURCE.to_string(), i128::from(n) * 1000)));
    (0..count).map(|i| Pod { key: format!("{}/{job}-{i}", q.namespace), requests: requests.clone(), queued: Some(queued.clone()), ..Pod::default() }).collect()
}

/// The accelerators of one pod of a queue's gang job on `pool`, whose node holds `node`: a whole node, or one slice
/// or MIG device on a shared pool.
fn pod_units(pool: &PoolPlan, node: u32) -> u32 {
    if pool.sharing.is_some() { 1 } else { node.max(1) }
}

fn job_name(q: &QueuePlan, flavor: &str) -> String {
    format!("{}-quota-{flavor}", q.name)
}

/// The cluster's workloads at max replicas and its queues' quotas in use, admitted by the cluster's Kueue objects and
/// scheduled together on its NodePools (`simulated`, from `cluster_manifests`, DaemonSets included). None without
/// queues: the workloads alone are `workloads::simulate_workloads`.
pub fn simulate_demands(ctx: &ClusterCtx, simulated: &Manifests) -> Option<Report> {
    if ctx.cluster.queues.queues.is_empty() {
        return None;
    }
    let mut pods = workload_pods(ctx.cluster);
    pods.extend(quota_pods(ctx));
    let prepared = simulate::prepare(ctx.catalog, ctx.type_labels, simulated, &simulated.node_pools);
    Some(simulate::run_admitted(&prepared, &simulated.kueue, &pods, &[]))
}

/// E0340 per queue and per workload with pods pending when every declared demand runs at once.
pub fn demand_diagnostics(ctx: &ClusterCtx, simulated: &Manifests) -> Vec<PoolDiagnostic> {
    let Some(report) = simulate_demands(ctx, simulated) else { return Vec::new() };
    if report.pending.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for q in &ctx.cluster.queues.queues {
        let pending: Vec<&PendingPod> = report.pending.iter().filter(|p| q.flavors.iter().any(|f| p.pod.starts_with(&format!("{}/{}-", q.namespace, job_name(q, &f.flavor))))).collect();
        let Some(spec) = ctx.profile(&q.profile).into_iter().flat_map(|p| &p.queues).find(|x| x.name.value == q.name) else { continue };
        let (Some(first), Some(pool)) = (pending.first(), q.flavors.first().and_then(|f| pool(ctx, &f.flavor))) else { continue };
        let sizes: Vec<(u32, u32)> = q.flavors.iter().filter(|f| f.node > 0).filter_map(|f| Some((f.nominal, pod_units(self::pool(ctx, &f.flavor)?, f.node)))).collect();
        let total: u32 = sizes.iter().map(|(nominal, pod)| nominal.div_ceil(*pod)).sum();
        let pod = sizes.first().map_or(0, |(_, pod)| *pod);
        let d = ctx
            .sources
            .error(spec.quota.value.nominal.span, ErrorCode::E0340, format!(
                "queue `{}`'s nominal quota does not fit beside the cluster's other declared demands: {} of the {total} pods of its gang jobs ({pod} {} each, one pod of the rest) stay pending",
                q.name,
                pending.len(),
                q.accelerator.resource()
            ))
            .label(format!("{} pending", pending.len()))
            .help(format!(
                "{}: {} — lower the quota (a share divides what the pool's non-queued workloads leave) or the workloads' max replicas, or raise the pool's limit",
                first.pod, first.reason
            ));
        let span = spec.quota.value.nominal.span;
        out.push(PoolDiagnostic { profile: q.profile.clone(), nodepool: pool.name.clone(), span, diagnostic: pool.whole_cluster_severity(d) });
    }
    for w in &ctx.cluster.ops.workloads {
        let pending: Vec<&PendingPod> = report.pending.iter().filter(|p| replica_of(&p.pod, &w.namespace, &w.name)).collect();
        let Some(spec) = ctx.profile(&w.profile).into_iter().flat_map(|p| &p.ops.workloads).find(|x| x.name.value == w.name && x.namespace.value == w.namespace) else { continue };
        let (Some(first), Some(pool)) = (pending.first(), w.nodepools.first().and_then(|n| pool(ctx, n))) else { continue };
        let d = ctx
            .sources
            .error(spec.replicas_max.span, ErrorCode::E0340, format!(
                "workload `{}/{}` does not fit beside the queues' quotas in use: {} of its {} replicas stay pending",
                w.namespace,
                w.name,
                pending.len(),
                w.replicas_max
            ))
            .label(format!("{} pending", pending.len()))
            .help(format!("{}: {} — lower the queues' quotas on its pool (a share leaves the workload's replicas room) or its max replicas, or raise the pool's limit", first.pod, first.reason));
        let span = spec.replicas_max.span;
        out.push(PoolDiagnostic { profile: w.profile.clone(), nodepool: pool.name.clone(), span, diagnostic: pool.whole_cluster_severity(d) });
    }
    out
}

fn pool<'a>(ctx: &ClusterCtx<'a>, name: &str) -> Option<&'a PoolPlan> {
    ctx.cluster.pools.iter().find(|p| p.name == name)
}
