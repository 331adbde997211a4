//! The PrometheusRule of one cluster and the ServiceMonitors that feed it.
//!
//! Metric names are the real ones, checked against their sources:
//! - Karpenter v1 (`kubernetes-sigs/karpenter` pkg/controllers/metrics/nodepool): `karpenter_nodepools_usage`
//!   and `karpenter_nodepools_limit`, labels `nodepool` and `resource_type`; the resource type is the
//!   resource name lower-cased with `-` → `_`, so `nvidia.com/gpu` stays `nvidia.com/gpu`.
//!   `karpenter_cloudprovider_errors_total` (labels controller, method, provider, error) counts failed
//!   cloud-provider calls; `method="Create"` is a failed instance launch.
//! - dcgm-exporter: `DCGM_FI_DEV_GPU_UTIL` (percent, per GPU).
//! - kube-state-metrics: `kube_pod_status_phase{phase="Pending"}` and
//!   `kube_pod_container_resource_requests{resource="nvidia_com_gpu"}` (KSM turns `/` and `.` into `_`).

use std::collections::BTreeMap;

use crate::catalog::AcceleratorKind;
use crate::ops::Monitoring;
use crate::solve::{ClusterPlan, PoolPlan};

#[derive(Debug, Clone, PartialEq, Default)]
pub struct AlertsPlan {
    pub groups: Vec<RuleGroup>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RuleGroup {
    pub name: String,
    pub rules: Vec<AlertRule>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AlertRule {
    pub alert: String,
    pub expr: String,
    pub for_: String,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
}

pub const NEAR_LIMIT: &str = "GpuplanNodePoolNearLimit";
pub const OVER_BUDGET: &str = "GpuplanProfileOverBudget";
pub const LOW_UTILIZATION: &str = "GpuplanGPUUtilizationLow";
pub const LAUNCH_FAILURES: &str = "GpuplanKarpenterLaunchFailures";
pub const PODS_PENDING: &str = "GpuplanAcceleratorPodsPending";

/// Karpenter's `resource_type` label value for a resource name.
pub fn karpenter_resource_type(resource: &str) -> String {
    resource.to_ascii_lowercase().replace('-', "_")
}

/// kube-state-metrics' `resource` label value for a resource name.
pub fn ksm_resource(resource: &str) -> String {
    resource.replace(['/', '.', '-'], "_")
}

/// The worst $ per schedulable accelerator-hour of a pool (what its limit was sized with).
pub fn worst_price(pool: &PoolPlan) -> f64 {
    pool.candidates.iter().map(|c| c.usd_per_accelerator_hour).fold(0.0, f64::max)
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn usage_selector(pool: &PoolPlan) -> String {
    format!("nodepool=\"{}\",resource_type=\"{}\"", pool.name, karpenter_resource_type(pool.resource()))
}

pub fn plan(cluster: &ClusterPlan, monitoring: &Monitoring) -> AlertsPlan {
    let mut groups = Vec::new();
    let near = f64::from(monitoring.near_limit_percent) / 100.0;

    // Every NodePool, by its real name.
    let mut pools: Vec<&PoolPlan> = cluster.pools.iter().collect();
    pools.sort_by(|a, b| a.name.cmp(&b.name));
    let pool_rules = pools
        .iter()
        .map(|p| {
            let sel = usage_selector(p);
            AlertRule {
                alert: NEAR_LIMIT.into(),
                expr: format!(
                    "max by (nodepool, resource_type) (karpenter_nodepools_usage{{{sel}}})\n  / on (nodepool, resource_type)\nmax by (nodepool, resource_type) (karpenter_nodepools_limit{{{sel}}})\n  >= {near}\n"
                ),
                for_: "15m".into(),
                labels: labels(&[("severity", "warning"), ("nodepool", &p.name), ("gpuplan_profile", &p.profile), ("gpuplan_cluster", &cluster.name)]),
                annotations: labels(&[
                    ("summary", &format!("NodePool {} is at {{{{ $value | humanizePercentage }}}} of its {} limit ({})", p.name, p.resource(), p.limit)),
                    ("description", &format!(
                        "NodePool {} (profile {}, pool {}) has provisioned {} of its {} {} for 15 minutes; new pods that need it will wait for a lower-weight pool or stay pending.",
                        p.name, p.profile, p.pool, monitoring.near_limit_percent.to_string() + "% or more", p.limit, p.resource()
                    )),
                    ("runbook", &format!(
                        "kubectl get nodepool {0} -o jsonpath='{{.status.resources}}'; if the demand is real, raise max-accelerators or the budget of pool `{1}` in {2} and recompile; otherwise find the workload that grew (kubectl get pods -A -o wide | grep <node>).",
                        p.name, p.pool, p.source
                    )),
                ]),
            }
        })
        .collect();
    groups.push(RuleGroup { name: format!("gpuplan.{}.nodepools", cluster.name), rules: pool_rules });

    // Spend per budgeted profile: usage × the worst $/accelerator-hour the limits were sized with.
    let mut budget_rules = Vec::new();
    for profile in &cluster.profiles {
        let Some(budget) = profile.budget_usd_per_hour else { continue };
        let members: Vec<&&PoolPlan> = pools.iter().filter(|p| p.profile == profile.name).collect();
        if members.is_empty() {
            continue;
        }
        let terms: Vec<String> = members
            .iter()
            .map(|p| format!("(sum(karpenter_nodepools_usage{{{}}}) or vector(0)) * {:.4}", usage_selector(p), worst_price(p)))
            .collect();
        let names: Vec<&str> = members.iter().map(|p| p.name.as_str()).collect();
        budget_rules.push(AlertRule {
            alert: OVER_BUDGET.into(),
            expr: format!("(\n  {}\n) > {budget}\n", terms.join("\n  + ")),
            for_: "15m".into(),
            labels: labels(&[("severity", "critical"), ("gpuplan_profile", &profile.name), ("gpuplan_cluster", &cluster.name)]),
            annotations: labels(&[
                ("summary", &format!("Profile {} spends ${{{{ $value | printf \"%.2f\" }}}}/h, over its budget of ${budget:.2}/h", profile.name)),
                ("description", &format!(
                    "The accelerators provisioned by NodePools {} (profile {}), priced at each pool's worst $/accelerator-hour, cost more than the profile's budget of ${budget:.2}/h. gpuplan sized the limits so this cannot happen while the NodePools are as generated.",
                    names.join(", "), profile.name
                )),
                ("runbook", &format!(
                    "check the NodePools for out-of-band edits (gpuplan compile --check), then kubectl get nodepool {} -o jsonpath='{{.spec.limits}}'; refresh the catalog if prices moved and recompile {}.",
                    names.join(" "), profile.source
                )),
            ]),
        });
    }
    if !budget_rules.is_empty() {
        groups.push(RuleGroup { name: format!("gpuplan.{}.budgets", cluster.name), rules: budget_rules });
    }

    // Cluster-wide.
    let mut cluster_rules = Vec::new();
    let mut resources: Vec<String> = cluster.pools.iter().map(|p| ksm_resource(p.resource())).collect();
    resources.sort();
    resources.dedup();
    if cluster.pools.iter().any(|p| p.accelerator == AcceleratorKind::Nvidia) {
        let low = monitoring.low_utilization_percent;
        cluster_rules.push(AlertRule {
            alert: LOW_UTILIZATION.into(),
            expr: format!("avg(DCGM_FI_DEV_GPU_UTIL) < {low}\n"),
            for_: "1h".into(),
            labels: labels(&[("severity", "warning"), ("gpuplan_cluster", &cluster.name)]),
            annotations: labels(&[
                ("summary", &format!("GPUs in cluster {} average {{{{ $value | printf \"%.0f\" }}}}% utilization", cluster.name)),
                ("description", &format!(
                    "The NVIDIA GPUs of cluster {} (NodePools {}) have averaged under {low}% utilization for an hour: capacity is paid for and idle.",
                    cluster.name,
                    pools.iter().filter(|p| p.accelerator == AcceleratorKind::Nvidia).map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
                )),
                ("runbook", "find idle GPUs: topk(10, 100 - DCGM_FI_DEV_GPU_UTIL); lower workload minReplicas, consider time-slicing or MIG for small models, or a smaller GPU in the profile. MIG devices report DCGM_FI_PROF_GR_ENGINE_ACTIVE instead.".into()),
            ]),
        });
    }
    cluster_rules.push(AlertRule {
        alert: LAUNCH_FAILURES.into(),
        expr: "sum by (controller, method, error) (increase(karpenter_cloudprovider_errors_total{method=\"Create\"}[10m])) > 0\n".into(),
        for_: "15m".into(),
        labels: labels(&[("severity", "warning"), ("gpuplan_cluster", &cluster.name)]),
        annotations: labels(&[
            ("summary", &format!("Karpenter in cluster {} keeps failing to launch nodes ({{{{ $labels.error }}}})", cluster.name)),
            ("description", &format!(
                "Instance launches (CloudProvider Create) have failed for 15 minutes in cluster {}. GPU capacity is scarce: InsufficientCapacity on every allowed type means the pools are too narrow.",
                cluster.name
            )),
            ("runbook", "kubectl logs -n <karpenter namespace> deploy/karpenter | grep -i 'launching nodeclaim\\|insufficient'; kubectl get nodeclaims; widen the pool's GPU list or zones, or add an on-demand fallback tier.".into()),
        ]),
    });
    cluster_rules.push(AlertRule {
        alert: PODS_PENDING.into(),
        expr: format!(
            "max by (namespace, pod) (kube_pod_status_phase{{phase=\"Pending\"}}) == 1\nand on (namespace, pod)\nmax by (namespace, pod) (kube_pod_container_resource_requests{{resource=~\"{}\"}}) > 0\n",
            resources.join("|")
        ),
        for_: monitoring.pending_for.clone(),
        labels: labels(&[("severity", "warning"), ("gpuplan_cluster", &cluster.name)]),
        annotations: labels(&[
            ("summary", &format!("Accelerator pod {{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} has been pending for over {}", monitoring.pending_for)),
            ("description", &format!(
                "A pod requesting {} in cluster {} has been Pending for {}: no NodePool can launch a node for it (limit reached, no capacity, or a toleration/selector no pool matches).",
                resources.join(" or "), cluster.name, monitoring.pending_for
            )),
            ("runbook", "kubectl describe pod -n {{ $labels.namespace }} {{ $labels.pod }} (look for Karpenter's 'incompatible with nodepool' events); check the NodePool limits (GpuplanNodePoolNearLimit) and launch failures.".into()),
        ]),
    });
    groups.push(RuleGroup { name: format!("gpuplan.{}.cluster", cluster.name), rules: cluster_rules });
    AlertsPlan { groups }
}
