//! What the ops plan refuses: a workload its NodePools cannot hold or scale as asked (E0176, E0307, E0267,
//! E0330, E0331), a workload defined twice in a cluster (E0177), and a reservation no workload can reach (E0186).

use std::collections::BTreeMap;

use crate::diagnostic::ErrorCode;
use crate::diagnostic::{ProfileDiagnostic, Sources};
use crate::profile::monitoring::Monitoring;
use crate::profile::ops::Workload;
use crate::profile::{Profile, Sharing};
use crate::solve::pool::{ClusterPools, PoolPlan};

use super::metrics::{is_dcgm_metric, DEFAULT_GPU_METRIC};
use crate::profile::monitoring::MetricSources;
use super::workload::WorkloadPlan;

/// One workload against the NodePools it runs on (`nodepools`).
pub fn workload_checks(cluster: ClusterPools, monitoring: &Monitoring, w: &Workload, nodepools: &[&PoolPlan], sources: &Sources) -> Vec<ProfileDiagnostic> {
    let mut diagnostics = Vec::new();
    let capacity: u32 = nodepools.iter().map(|p| p.limit).sum();
    let need = w.replicas_max.value.saturating_mul(w.gpus_per_replica.value);
    if !nodepools.is_empty() && need > capacity {
        let resource = nodepools[0].resource();
        diagnostics.push(
            sources
                .error(w.replicas_max.span, ErrorCode::E0176, format!(
                    "workload `{}` needs up to {need} {resource} at max replicas ({} × {}), but pool `{}` can provision at most {capacity}",
                    w.name.value, w.replicas_max.value, w.gpus_per_replica.value, w.pool.value
                ))
                .label(format!("{need} {resource}"))
                .help(match nodepools.iter().any(|p| p.static_pool.is_some()) {
                    // A static pool's capacity is what its replicas hold at least (any admitted type can hold one).
                    true => format!("lower replicas max to {} or raise the static pool's replicas", capacity / w.gpus_per_replica.value.max(1)),
                    false => format!(
                        "lower replicas max to {} or raise the pool's {}/budget",
                        capacity / w.gpus_per_replica.value.max(1),
                        if resource == "cpu" { "max-cpu" } else { "max-accelerators" }
                    ),
                }),
        );
    }
    // Scaling to zero exists to let the nodes go; a static pool keeps and bills them whatever the replicas.
    if let Some(z) = w.scale_to_zero.as_ref().filter(|_| nodepools.iter().any(|p| p.static_pool.is_some())) {
        diagnostics.push(
            sources
                .error(z.span, ErrorCode::E0307, format!("workload `{}` scales to zero on static pool `{}`: its nodes are kept and billed whatever the replicas, so scaling to zero frees nothing", w.name.value, w.pool.value))
                .help("leave out scale-to-zero (replicas min=1 with `autoscale` still scales within the replicas), or run the workload on a dynamic pool, whose nodes go when it scales down"),
        );
    }
    // A CPU pool's nodes have no GPU: the default metric (DCGM's GPU utilisation) never has data there.
    let cpu_pool = nodepools.iter().any(|p| p.accelerator == crate::catalog::AcceleratorKind::Cpu);
    if let Some(a) = w.autoscale.as_ref().filter(|a| cpu_pool && a.value.metric.is_none()) {
        diagnostics.push(
            sources
                .error(a.span, ErrorCode::E0267, format!("workload `{}` autoscales on GPU utilization, but pool `{}` is a CPU pool: DCGM reports nothing there", w.name.value, w.pool.value))
                .help("name the metric to scale on (`autoscale metric=\"…\"`), or leave out `autoscale`"),
        );
    }
    // On a CPU pool E0267 already refuses the GPU-utilization autoscale.
    diagnostics.extend(dcgm_in_auto_mode(cluster, monitoring, w, cpu_pool, sources));
    if w.gpus_per_replica.value > 1 && nodepools.iter().any(|p| matches!(p.sharing, Some(Sharing::TimeSlicing { .. }))) {
        diagnostics.push(
            sources
                .error(w.gpus_per_replica.span, ErrorCode::E0176, format!("workload `{}` asks for {} GPUs per pod on a time-sliced pool", w.name.value, w.gpus_per_replica.value))
                .help("a time-sliced pool hands out slices of one GPU; the device plugin is configured with failRequestsGreaterThanOne and rejects such pods: request 1"),
        );
    }
    diagnostics
}

/// E0177: a workload name twice in one namespace of the cluster, from two profiles.
pub fn duplicate_workloads(cluster: ClusterPools, profiles: &[&Profile], sources: &Sources) -> Vec<ProfileDiagnostic> {
    let mut diagnostics = Vec::new();
    let mut seen: BTreeMap<(String, String), String> = BTreeMap::new();
    for (w, profile) in profiles.iter().flat_map(|p| p.ops.workloads.iter().map(move |w| (w, p))) {
        if let Some(other) = seen.insert((w.namespace.value.clone(), w.name.value.clone()), profile.name.value.clone())
            && other != profile.name.value {
                diagnostics.push(
                    sources
                        .error(w.name.span, ErrorCode::E0177, format!("workload `{}/{}` is also defined by profile `{other}` in cluster `{}`", w.namespace.value, w.name.value, cluster.name))
                        .help("workload objects are cluster-wide per namespace: rename one"),
                );
            }
    }
    diagnostics
}

/// E0330, E0331: a workload scaled on dcgm-exporter's metrics in an EKS Auto Mode cluster where none runs
/// ([`MetricSources`]): the HPA or KEDA trigger would read no data and never scale.
fn dcgm_in_auto_mode(cluster: ClusterPools, monitoring: &Monitoring, w: &Workload, cpu_pool: bool, sources: &Sources) -> Vec<ProfileDiagnostic> {
    if MetricSources::of(cluster.auto_mode, monitoring).dcgm {
        return Vec::new();
    }
    let help = "Auto Mode installs no GPU Operator, so no dcgm-exporter runs: install one yourself and say so with `monitoring { gpu-operator manage=#false }` (gpuplan then writes its ServiceMonitor), or scale on a metric that exists (`autoscale metric=\"…\"`, or a KEDA `trigger`: for an LLM server, its queue depth, e.g. vLLM's `vllm:num_requests_waiting`)";
    let mut out = Vec::new();
    if let Some(a) = w.autoscale.as_ref().filter(|a| !(cpu_pool && a.value.metric.is_none()) && a.value.metric.as_deref().is_none_or(is_dcgm_metric)) {
        let metric = a.value.metric.as_deref().unwrap_or(DEFAULT_GPU_METRIC);
        out.push(
            sources
                .error(a.span, ErrorCode::E0330, format!("workload `{}` autoscales on {metric}, but cluster `{}` is in EKS Auto Mode, where nothing exports DCGM metrics", w.name.value, cluster.name))
                .help(help),
        );
    }
    for t in &w.triggers {
        if let crate::profile::ops::Trigger::Prometheus { query, .. } = &t.value
            && query.contains("DCGM_") {
                out.push(
                    sources
                        .error(t.span, ErrorCode::E0331, format!("workload `{}`'s prometheus trigger queries a DCGM metric, but cluster `{}` is in EKS Auto Mode, where nothing exports DCGM metrics", w.name.value, cluster.name))
                        .help(help),
                );
            }
    }
    out
}

/// E0186: a reserved NodePool that none of the cluster's declared workloads runs on. A reservation is billed whether
/// used or not, and a pod reaches a NodePool only through its pool's label and taints: a reservation written as a pool
/// of its own next to the pool the workloads select idles at full price while they launch on-demand nodes. Clusters
/// that declare no workload are not judged (their pods are not known).
pub fn unreachable_reservations(cluster: ClusterPools, profiles: &[&Profile], workloads: &[WorkloadPlan], sources: &Sources) -> Vec<ProfileDiagnostic> {
    if workloads.is_empty() {
        return Vec::new();
    }
    let reserved = cluster.pools.iter().filter(|p| p.capacity_types.contains(&crate::catalog::CapacityType::Reserved));
    let unreached = reserved.filter(|p| !workloads.iter().any(|w| w.nodepools.contains(&p.name)));
    let mut out = Vec::new();
    for pool in unreached {
        let tier = profiles.iter().filter(|p| p.name.value == pool.profile).flat_map(|p| &p.pools).flat_map(|p| &p.tiers).find(|t| t.name.value == pool.name);
        let Some(span) = tier.and_then(|t| t.settings.reserved.as_ref().map(|r| r.span)) else { continue };
        let mut served: Vec<&str> = workloads.iter().filter(|w| w.profile == pool.profile).map(|w| w.placement.pool.as_str()).collect();
        served.sort();
        served.dedup();
        let into = if served.is_empty() { "the pool your workload runs on".to_string() } else { format!("pool `{}`", served.join("` or `")) };
        out.push(
            sources
                .error(span, ErrorCode::E0186, format!("no workload of cluster `{}` can reach reserved NodePool `{}`: its reservation would be billed and idle", cluster.name, pool.name))
                .label("reservation here")
                .help(format!("move this `reserved` block into {into}: it becomes that pool's first tier (same label and taints, higher weight), used before on-demand")),
        );
    }
    out
}
