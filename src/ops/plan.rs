//! The operations part of a cluster's plan: workloads and the GPU Operator (the alert rules are derived from it when
//! the PrometheusRule is rendered). Built by the solver once the cluster's pools are final, so that every object names
//! real NodePools, limits and prices.

use std::collections::{BTreeMap, BTreeSet};

use crate::catalog::AcceleratorKind;
use crate::diagnostic::{ProfileDiagnostic, Sources};
use crate::profile::{Profile, Sharing};
use crate::ops::gpu_operator::GpuOperatorPlan;
use crate::ops::keda::{KedaInputs, KedaPlan};
use crate::ops::workload::{default_pdb, HpaPlan, Placement, ScalingStyle, WorkloadPlan};
use crate::ops::{gpu_metric, quantity, Monitoring};
use crate::solve::ClusterPlan;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct OpsPlan {
    pub monitoring: Monitoring,
    /// (profile, source file) whose `monitoring` block applies; None: defaults.
    pub monitoring_from: Option<(String, String)>,
    /// Sorted by (namespace, name).
    pub workloads: Vec<WorkloadPlan>,
    /// Present when the cluster has NVIDIA pools and gpuplan manages the operator.
    pub gpu_operator: Option<GpuOperatorPlan>,
    /// gpuplan's own dcgm-exporter ServiceMonitor: only when the operator is managed elsewhere (the managed
    /// ClusterPolicy has the operator create one; two would scrape every GPU twice).
    pub dcgm_service_monitor: bool,
}

pub fn plan_cluster(cluster: &ClusterPlan, profiles: &[&Profile], sources: &Sources) -> Result<OpsPlan, Vec<ProfileDiagnostic>> {
    let mut diagnostics = Vec::new();

    // One monitoring block per cluster.
    let mut monitoring = Monitoring::default();
    let mut monitoring_from: Option<(String, String, crate::diagnostic::Span)> = None;
    for profile in profiles {
        if let Some(m) = &profile.ops.monitoring {
            if let Some((other, _, first)) = &monitoring_from {
                diagnostics.push(
                    sources
                        .error(m.span, "E0175", format!("cluster `{}` already has a `monitoring` block, in profile `{other}` at {}", cluster.name, sources.location(*first)))
                        .help("monitoring settings are per cluster: keep one block, in one profile of the cluster"),
                );
                continue;
            }
            monitoring = m.value.clone();
            monitoring_from = Some((profile.name.value.clone(), sources.source_name(profile.file).to_string(), m.span));
        }
    }

    // Workloads.
    let mut workloads = Vec::new();
    for profile in profiles {
        let source = sources.source_name(profile.file).to_string();
        for w in &profile.ops.workloads {
            let nodepools: Vec<&crate::solve::PoolPlan> = cluster
                .pools
                .iter()
                .filter(|p| p.profile == profile.name.value && (p.pool == w.pool.value || p.name == w.pool.value))
                .collect();
            let capacity: u32 = nodepools.iter().map(|p| p.limit).sum();
            let need = w.replicas_max.value.saturating_mul(w.gpus_per_replica.value);
            if !nodepools.is_empty() && need > capacity {
                let resource = nodepools[0].resource();
                diagnostics.push(
                    sources
                        .error(w.replicas_max.span, "E0176", format!(
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
                        .error(z.span, "E0307", format!("workload `{}` scales to zero on static pool `{}`: its nodes are kept and billed whatever the replicas, so scaling to zero frees nothing", w.name.value, w.pool.value))
                        .help("leave out scale-to-zero (replicas min=1 with `autoscale` still scales within the replicas), or run the workload on a dynamic pool, whose nodes go when it scales down"),
                );
            }
            // A CPU pool's nodes have no GPU: the default metric (DCGM's GPU utilisation) never has data there.
            let cpu_pool = nodepools.iter().any(|p| p.accelerator == crate::catalog::AcceleratorKind::Cpu);
            if let Some(a) = w.autoscale.as_ref().filter(|a| cpu_pool && a.value.metric.is_none()) {
                diagnostics.push(
                    sources
                        .error(a.span, "E0267", format!("workload `{}` autoscales on GPU utilization, but pool `{}` is a CPU pool: DCGM reports nothing there", w.name.value, w.pool.value))
                        .help("name the metric to scale on (`autoscale metric=\"…\"`), or leave out `autoscale`"),
                );
            }
            // On a CPU pool E0267 already refuses the GPU-utilization autoscale.
            diagnostics.extend(dcgm_in_auto_mode(cluster, &monitoring, w, cpu_pool, sources));
            if w.gpus_per_replica.value > 1 && nodepools.iter().any(|p| matches!(p.sharing, Some(Sharing::TimeSlicing { .. }))) {
                diagnostics.push(
                    sources
                        .error(w.gpus_per_replica.span, "E0176", format!("workload `{}` asks for {} GPUs per pod on a time-sliced pool", w.name.value, w.gpus_per_replica.value))
                        .help("a time-sliced pool hands out slices of one GPU; the device plugin is configured with failRequestsGreaterThanOne and rejects such pods: request 1"),
                );
            }
            let training = crate::profile::is_training_pool(&profile.pools, &w.pool.value);
            let mig = nodepools.iter().any(|p| matches!(p.sharing, Some(Sharing::Mig { .. })));
            let metric = w.autoscale.as_ref().and_then(|a| a.value.metric.clone()).unwrap_or_else(|| gpu_metric(mig).to_string());
            // Only a workload that asks for `autoscale` gets an HPA: scaling down a notebook server or a trainer
            // that never asked for it kills sessions and steps. A workload KEDA scales gets none (KEDA owns the HPA).
            let style = if training { ScalingStyle::Training } else { ScalingStyle::Inference };
            let hpa = w.autoscale.as_ref().filter(|_| !w.keda()).map(|a| HpaPlan {
                min: w.replicas_min.value,
                max: w.replicas_max.value,
                metric: metric.clone(),
                target_utilization: a.value.gpu_utilization,
                target_quantity: quantity(&metric, a.value.gpu_utilization),
                style,
            });
            // As the solver labelled and tainted the workload's NodePools (a tier name resolves to its pool).
            let pool_name = nodepools.first().map_or_else(|| w.pool.value.clone(), |p| p.pool.clone());
            let pod = crate::solve::workload_placement(&nodepools, w.gpus_per_replica.value);
            let mut names: Vec<String> = nodepools.iter().map(|p| p.name.clone()).collect();
            names.sort();
            let mut plan = WorkloadPlan {
                name: w.name.value.clone(),
                namespace: w.namespace.value.clone(),
                profile: profile.name.value.clone(),
                source: source.clone(),
                pool: w.pool.value.clone(),
                nodepools: names,
                placement: Placement { pool: pool_name, pod },
                metric: metric.clone(),
                kind: w.kind.value.clone(),
                selector: w.selector.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect(),
                pdb: w.disruption_budget.as_ref().map(|b| b.value).or_else(|| default_pdb(w.replicas_max.value)),
                hpa,
                keda: None,
                replicas_min: w.replicas_min.value,
                replicas_max: w.replicas_max.value,
                gpus_per_replica: w.gpus_per_replica.value,
                requests: w.requests.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect(),
            };
            if w.keda() {
                let triggers: Vec<crate::ops::Trigger> = w.triggers.iter().map(|t| t.value.clone()).collect();
                plan.keda = Some(KedaPlan::new(&KedaInputs {
                    min: w.replicas_min.value,
                    max: w.replicas_max.value,
                    scale_to_zero: w.scale_to_zero.as_ref().map(|s| s.value),
                    triggers: &triggers,
                    gpu: w.autoscale.as_ref().map(|a| (metric.as_str(), a.value.gpu_utilization)),
                    pod_selector: &plan.pod_selector(),
                    server_address: &monitoring.prometheus_url(),
                    style,
                }));
            }
            workloads.push(plan);
        }
    }
    let mut seen: BTreeMap<(String, String), String> = BTreeMap::new();
    for (w, profile) in profiles.iter().flat_map(|p| p.ops.workloads.iter().map(move |w| (w, p))) {
        if let Some(other) = seen.insert((w.namespace.value.clone(), w.name.value.clone()), profile.name.value.clone()) {
            if other != profile.name.value {
                diagnostics.push(
                    sources
                        .error(w.name.span, "E0177", format!("workload `{}/{}` is also defined by profile `{other}` in cluster `{}`", w.namespace.value, w.name.value, cluster.name))
                        .help("workload objects are cluster-wide per namespace: rename one"),
                );
            }
        }
    }
    workloads.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    diagnostics.extend(unreachable_reservations(cluster, profiles, &workloads, sources));

    // GPU Operator.
    let nvidia = cluster.pools.iter().any(|p| p.accelerator == AcceleratorKind::Nvidia);
    // EKS Auto Mode runs the NVIDIA driver and device plugin itself: no GPU Operator (`ops::addons::devices`).
    let gpu_operator = (nvidia && monitoring.manage_gpu_operator && !cluster.auto_mode).then(|| {
        let mut time_slicing = BTreeSet::new();
        let mut mig = BTreeSet::new();
        // Bottlerocket pools time-slice through their node class's user data, not the device-plugin ConfigMap.
        for p in cluster.pools.iter().filter(|p| !p.host_device_plugin()) {
            match &p.sharing {
                Some(Sharing::TimeSlicing { replicas }) => {
                    time_slicing.insert(*replicas);
                }
                Some(Sharing::Mig { config }) => {
                    mig.insert(config.clone());
                }
                None => {}
            }
        }
        GpuOperatorPlan::new(&monitoring, cluster.accelerated_ami, time_slicing, mig)
    });

    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    Ok(OpsPlan {
        dcgm_service_monitor: nvidia && !monitoring.manage_gpu_operator,
        monitoring,
        monitoring_from: monitoring_from.map(|(p, s, _)| (p, s)),
        workloads,
        gpu_operator,
    })
}

/// E0330, E0331: a workload scaled on dcgm-exporter's metrics in an EKS Auto Mode cluster where none runs
/// ([`crate::ops::MetricSources`]): the HPA or KEDA trigger would read no data and never scale.
fn dcgm_in_auto_mode(cluster: &ClusterPlan, monitoring: &crate::ops::Monitoring, w: &crate::ops::Workload, cpu_pool: bool, sources: &Sources) -> Vec<ProfileDiagnostic> {
    if crate::ops::MetricSources::of(cluster.auto_mode, monitoring).dcgm {
        return Vec::new();
    }
    let help = "Auto Mode installs no GPU Operator, so no dcgm-exporter runs: install one yourself and say so with `monitoring { gpu-operator manage=#false }` (gpuplan then writes its ServiceMonitor), or scale on a metric that exists (`autoscale metric=\"…\"`, or a KEDA `trigger`)";
    let mut out = Vec::new();
    if let Some(a) = w.autoscale.as_ref().filter(|a| !(cpu_pool && a.value.metric.is_none()) && a.value.metric.as_deref().is_none_or(crate::ops::is_dcgm_metric)) {
        let metric = a.value.metric.as_deref().unwrap_or(crate::ops::DEFAULT_GPU_METRIC);
        out.push(
            sources
                .error(a.span, "E0330", format!("workload `{}` autoscales on {metric}, but cluster `{}` is in EKS Auto Mode, where nothing exports DCGM metrics", w.name.value, cluster.name))
                .help(help),
        );
    }
    for t in &w.triggers {
        if let crate::ops::Trigger::Prometheus { query, .. } = &t.value {
            if query.contains("DCGM_") {
                out.push(
                    sources
                        .error(t.span, "E0331", format!("workload `{}`'s prometheus trigger queries a DCGM metric, but cluster `{}` is in EKS Auto Mode, where nothing exports DCGM metrics", w.name.value, cluster.name))
                        .help(help),
                );
            }
        }
    }
    out
}

/// E0186: a reserved NodePool that none of the cluster's declared workloads runs on. A reservation is billed whether
/// used or not, and a pod reaches a NodePool only through its pool's label and taints: a reservation written as a pool
/// of its own next to the pool the workloads select idles at full price while they launch on-demand nodes. Clusters
/// that declare no workload are not judged (their pods are not known).
fn unreachable_reservations(cluster: &ClusterPlan, profiles: &[&Profile], workloads: &[WorkloadPlan], sources: &Sources) -> Vec<ProfileDiagnostic> {
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
                .error(span, "E0186", format!("no workload of cluster `{}` can reach reserved NodePool `{}`: its reservation would be billed and idle", cluster.name, pool.name))
                .label("reservation here")
                .help(format!("move this `reserved` block into {into}: it becomes that pool's first tier (same label and taints, higher weight), used before on-demand")),
        );
    }
    out
}
