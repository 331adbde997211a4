//! The operations part of a cluster's plan: workloads and the GPU Operator (the alert rules are derived from it when
//! the PrometheusRule is rendered). Built by the solver once the cluster's pools are final, so that every object names
//! real NodePools, limits and prices.

use std::collections::BTreeSet;

use crate::diagnostic::ErrorCode;
use crate::catalog::AcceleratorKind;
use crate::diagnostic::{ProfileDiagnostic, Sources, Span};
use crate::profile::monitoring::Monitoring;
use crate::profile::{Profile, Sharing};
use crate::solve::pool::ClusterPools;

use super::checks::{duplicate_workloads, unreachable_reservations, workload_checks};
use super::gpu_operator::GpuOperatorPlan;
use super::workload::{nodepools_of, plan_workload, WorkloadPlan};

#[derive(Debug, Clone, PartialEq, Default)]
pub struct OpsPlan {
    pub monitoring: Monitoring,
    /// (profile, source file) whose `monitoring` block applies; None: defaults.
    pub monitoring_from: Option<(String, String)>,
    /// Sorted by (namespace, name).
    pub workloads: Vec<WorkloadPlan>,
    /// Present when the cluster has NVIDIA pools and gpuplan manages the operator.
    pub gpu_operator: Option<GpuOperatorPlan>,
    /// gpuplan's own dcgm-exporter ServiceMonitor: only for an exporter the user runs on EKS Auto Mode (`manage=#false`
    /// there). Where the GPU Operator runs, it creates ServiceMonitor `nvidia-dcgm-exporter` itself and replaces any
    /// other writer's (`charts::gpu_operator::OWNED`): gpuplan configures it, through the ClusterPolicy
    /// (`manage=#true`) or the chart's values (`manage=#false`).
    pub dcgm_service_monitor: bool,
}

/// The cluster's ops plan, once its pools are final. E0175 for a second `monitoring` block, and the workloads' checks.
pub fn plan_cluster(cluster: ClusterPools, profiles: &[&Profile], sources: &Sources) -> Result<OpsPlan, Vec<ProfileDiagnostic>> {
    let mut diagnostics = Vec::new();
    let (monitoring, monitoring_from) = cluster_monitoring(cluster, profiles, sources, &mut diagnostics);
    let mut workloads = Vec::new();
    for profile in profiles {
        let source = sources.source_name(profile.file).to_string();
        for w in &profile.ops.workloads {
            let nodepools = nodepools_of(cluster.pools, profile, w);
            diagnostics.extend(workload_checks(cluster, &monitoring, w, &nodepools, sources));
            workloads.push(plan_workload(w, profile, &source, &nodepools, &monitoring));
        }
    }
    diagnostics.extend(duplicate_workloads(cluster, profiles, sources));
    workloads.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    diagnostics.extend(unreachable_reservations(cluster, profiles, &workloads, sources));
    let nvidia = cluster.pools.iter().any(|p| p.accelerator == AcceleratorKind::Nvidia);
    let gpu_operator = gpu_operator_plan(cluster, nvidia, &monitoring);
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    Ok(OpsPlan {
        dcgm_service_monitor: nvidia && !monitoring.manage_gpu_operator && cluster.auto_mode,
        monitoring,
        monitoring_from: monitoring_from.map(|(p, s, _)| (p, s)),
        workloads,
        gpu_operator,
    })
}

/// One monitoring block per cluster: the first profile's that has one (its profile, source file and location), or
/// the defaults; E0175 for each other.
fn cluster_monitoring(cluster: ClusterPools, profiles: &[&Profile], sources: &Sources, diagnostics: &mut Vec<ProfileDiagnostic>) -> (Monitoring, Option<(String, String, Span)>) {
    let mut monitoring = Monitoring::default();
    let mut monitoring_from: Option<(String, String, Span)> = None;
    for profile in profiles {
        if let Some(m) = &profile.ops.monitoring {
            if let Some((other, _, first)) = &monitoring_from {
                diagnostics.push(
                    sources
                        .error(m.span, ErrorCode::E0175, format!("cluster `{}` already has a `monitoring` block, in profile `{other}` at {}", cluster.name, sources.location(*first)))
                        .help("monitoring settings are per cluster: keep one block, in one profile of the cluster"),
                );
                continue;
            }
            monitoring = m.value.clone();
            monitoring_from = Some((profile.name.value.clone(), sources.source_name(profile.file).to_string(), m.span));
        }
    }
    (monitoring, monitoring_from)
}

/// The GPU Operator's ClusterPolicy, when the cluster has NVIDIA pools and gpuplan manages the operator.
fn gpu_operator_plan(cluster: ClusterPools, nvidia: bool, monitoring: &Monitoring) -> Option<GpuOperatorPlan> {
    // EKS Auto Mode runs the NVIDIA driver and device plugin itself: no GPU Operator (`ops::addons::devices`).
    (nvidia && monitoring.manage_gpu_operator && !cluster.auto_mode).then(|| {
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
        GpuOperatorPlan::new(monitoring, cluster.accelerated_ami, time_slicing, mig)
    })
}
