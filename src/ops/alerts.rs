//! The PrometheusRule of one cluster and the ServiceMonitors that feed it.
//!
//! Metric names are the real ones, checked against their sources:
//! - Karpenter v1 (`kubernetes-sigs/karpenter` pkg/controllers/metrics/nodepool): `karpenter_nodepools_usage`
//!   and `karpenter_nodepools_limit`, labels `nodepool` and `resource_type`; the resource type is the
//!   resource name lower-cased with `-` → `_`, so `nvidia.com/gpu` stays `nvidia.com/gpu`.
//!   `karpenter_cloudprovider_errors_total` (labels controller, method, provider, error) counts failed
//!   cloud-provider calls; `method="Create"` is a failed instance launch.
//! - Karpenter ≥ v1.10.0 (kubernetes-sigs/karpenter #2847, pkg/controllers/metrics/nodepool/controller.go):
//!   `karpenter_nodepools_cost_total{nodepool}`, the NodePool's NodeClaims priced at their offerings (on AWS:
//!   $/h, spot at the observed spot price). Reserved offerings are priced at on-demand / 10,000,000
//!   (karpenter-provider-aws pkg/providers/instancetype/offering/reserved_capacity_resolver.go), so a
//!   reservation's fixed cost is added as a constant.
//! - dcgm-exporter: `DCGM_FI_DEV_GPU_UTIL` (percent, per GPU; not reported for MIG devices) and
//!   `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (a 0–1 ratio, reported for MIG devices, which carry `GPU_I_PROFILE`;
//!   internal/pkg/rendermetrics/render_metrics.go). `pod`/`namespace` are the workload's (the exporter's
//!   pod-resources mapping) because the ServiceMonitors honour the exporter's labels.
//! - kube-state-metrics: `kube_pod_status_unschedulable` (the scheduler gave up: no node fits, and Karpenter
//!   could not launch one; unlike phase Pending it excludes pods pulling multi-GB images) and
//!   `kube_pod_container_resource_requests{resource="nvidia_com_gpu"}` (KSM turns `/` and `.` into `_`); a Neuron
//!   pod may request only `aws.amazon.com/neuroncore` (`aws_amazon_com_neuroncore`), so both Neuron resources count.
//!   `kube_node_labels` (docs/metrics/cluster/node-metrics.md) carries a node's labels as `label_<name>` (`.` and `/`
//!   → `_`), but only those allowed by `--metric-labels-allowlist=nodes=[…]` (docs/developer/cli-arguments.md):
//!   the NodePools that outlive their profile are found through it ([`KSM_NODE_LABELS`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::catalog::{AcceleratorKind, CapacityType};
use crate::profile::Sharing;

use crate::ops::workload::{REPLICAS_ANNOTATION, SELECTOR_ANNOTATION};
use crate::solve::ops::workload::WorkloadPlan;
use crate::profile::monitoring::{MetricSources, Monitoring};
use crate::solve::ops::metrics::{threshold, DEFAULT_GPU_METRIC, MIG_GPU_METRIC};
use crate::solve::prerequisites::KSM_NODE_LABELS;
use crate::solve::{round_cents, ClusterPlan, PoolPlan};

/// A cluster's alert rules, derived from its plan when the PrometheusRule renders.
#[derive(Debug, Clone, PartialEq)]
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
pub const WORKLOAD_UNSCHEDULABLE: &str = "GpuplanWorkloadPodsUnschedulable";
pub const WORKLOAD_LOW_UTILIZATION: &str = "GpuplanWorkloadGPUUtilizationLow";
pub const OUTSIDE_PROFILES: &str = "GpuplanNodePoolOutsideProfiles";
/// The first Karpenter release with `karpenter_nodepools_cost_total` (kubernetes-sigs/karpenter v1.10.0).
pub const COST_METRIC_KARPENTER: &str = "v1.10.0";

/// Karpenter's `resource_type` label value for a resource name.
pub fn karpenter_resource_type(resource: &str) -> String {
    resource.to_ascii_lowercase().replace('-', "_")
}

/// kube-state-metrics' `resource` label value for a resource name.
pub fn ksm_resource(resource: &str) -> String {
    resource.replace(['/', '.', '-'], "_")
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn usage_selector(pool: &PoolPlan) -> String {
    format!("nodepool=\"{}\",resource_type=\"{}\"", pool.name, karpenter_resource_type(pool.resource()))
}

/// A PromQL regex matching exactly these names.
fn any_of<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names.into_iter().map(|n| n.replace('.', "\\\\.")).collect::<Vec<_>>().join("|")
}

/// Whether a pool's GPUs are MIG devices (they report `DCGM_FI_PROF_GR_ENGINE_ACTIVE`, not `…_GPU_UTIL`).
fn is_mig(pool: &PoolPlan) -> bool {
    matches!(pool.sharing, Some(Sharing::Mig { .. }))
}

/// A reservation is billed whether used or not, and Karpenter prices it near zero: its cost is a constant.
fn reserved_only(pool: &PoolPlan) -> bool {
    !pool.capacity_types.is_empty() && pool.capacity_types.iter().all(|c| *c == CapacityType::Reserved)
}

/// The usage ratio at which a NodePool is near its limit: `near`, or lower when its types offer different numbers
/// of units per node (MIG devices per GPU differ by model: 32 on p4d, 56 on p4de for `all-1g.10gb`) and the pool
/// is full — no node of any type fits in what is left — before `near` is reached (64 units: one p4de is 88%).
fn near_limit_threshold(pool: &PoolPlan, near: f64) -> f64 {
    let sizes: BTreeSet<u32> = pool.candidates.iter().map(|c| c.units).collect();
    match (sizes.first(), pool.limit) {
        (Some(&smallest), limit) if sizes.len() > 1 && limit > 0 => {
            let full = f64::from(limit.saturating_sub(smallest) + 1) / f64::from(limit);
            near.min((full * 10_000.0).floor() / 10_000.0)
        }
        _ => near,
    }
}

/// " (4 per GPU on p4d.24xlarge, 7 per GPU on p4de.24xlarge)" for a pool whose types count their GPUs differently
/// (MIG devices depend on the GPU model); empty otherwise.
fn units_per_node(pool: &PoolPlan) -> String {
    let per_gpu: BTreeSet<u32> = pool.candidates.iter().map(|c| c.units_per_accelerator()).collect();
    if per_gpu.len() <= 1 {
        return String::new();
    }
    let mut types: Vec<(u32, &str)> = pool.candidates.iter().map(|c| (c.units_per_accelerator(), c.name.as_str())).collect();
    types.sort();
    format!(" ({})", types.iter().map(|(u, t)| format!("{u} per GPU on {t}")).collect::<Vec<_>>().join(", "))
}

/// The cluster's alert rules, on the metrics its Prometheus can scrape ([`MetricSources`]): in EKS Auto Mode no
/// Karpenter metric (no NodePool-limit, budget or launch-failure alert) and, unless a dcgm-exporter runs elsewhere, no
/// DCGM metric (no GPU-utilization alert). The kube-state-metrics ones (pending pods) are always there.
pub fn plan(cluster: &ClusterPlan, monitoring: &Monitoring, workloads: &[WorkloadPlan]) -> AlertsPlan {
    let sources = MetricSources::of(cluster.auto_mode, monitoring);
    let mut groups = Vec::new();
    let mut pools: Vec<&PoolPlan> = cluster.pools.iter().collect();
    pools.sort_by(|a, b| a.name.cmp(&b.name));
    if sources.karpenter {
        groups.extend(karpenter_groups(cluster, monitoring, &pools));
    }
    groups.push(cluster_group(cluster, monitoring, sources, &pools, workloads));
    let workload_rules: Vec<AlertRule> = workloads.iter().flat_map(|w| workload_rules(cluster, monitoring, sources, w)).collect();
    if !workload_rules.is_empty() {
        groups.push(RuleGroup { name: format!("gpuplan.{}.workloads", cluster.name), rules: workload_rules });
    }
    AlertsPlan { groups }
}

/// The rules on Karpenter's own metrics: every NodePool near its limit, and spend per budgeted profile.
fn karpenter_groups(cluster: &ClusterPlan, monitoring: &Monitoring, pools: &[&PoolPlan]) -> Vec<RuleGroup> {
    let mut groups = Vec::new();
    let near = f64::from(monitoring.near_limit_percent) / 100.0;

    // Every NodePool, by its real name.
    // A static NodePool has no limit but `nodes` (and its size is its replicas): there is no usage ratio to watch.
    let pool_rules: Vec<AlertRule> = pools
        .iter()
        .filter(|p| p.static_pool.is_none())
        .map(|p| {
            let sel = usage_selector(p);
            let near = near_limit_threshold(p, near);
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
                        "NodePool {} (profile {}, pool {}) has provisioned {} of its {} {}{} for 15 minutes; new pods that need it will wait for a lower-weight pool or stay pending.",
                        p.name, p.profile, p.pool, monitoring.near_limit_percent.to_string() + "% or more", p.limit, p.resource(), units_per_node(p)
                    )),
                    ("runbook", &format!(
                        "kubectl get nodepool {0} -o jsonpath='{{.status.resources}}'; if the demand is real, raise {3} or the budget of pool `{1}` in {2} and recompile; otherwise find the workload that grew (kubectl get pods -A -o wide | grep <node>).",
                        p.name, p.pool, p.source, if p.accelerator.is_accelerator() { "max-accelerators" } else { "max-cpu" }
                    )),
                ]),
            }
        })
        .collect();
    // A group needs a rule (a cluster of static pools only has none here).
    if !pool_rules.is_empty() {
        groups.push(RuleGroup { name: format!("gpuplan.{}.nodepools", cluster.name), rules: pool_rules });
    }

    // Spend per budgeted profile: Karpenter's own cost of the NodeClaims it launched, plus reservations.
    let mut budget_rules = Vec::new();
    for profile in &cluster.profiles {
        let Some(budget) = profile.budget_usd_per_hour else { continue };
        let members: Vec<&&PoolPlan> = pools.iter().filter(|p| p.profile == profile.name).collect();
        if members.is_empty() {
            continue;
        }
        budget_rules.push(budget_rule(cluster, &profile.name, &profile.source, budget, &members));
    }
    if !budget_rules.is_empty() {
        groups.push(RuleGroup { name: format!("gpuplan.{}.budgets", cluster.name), rules: budget_rules });
    }
    if let Some(rule) = outside_profiles_rule(cluster, pools) {
        groups.push(RuleGroup { name: format!("gpuplan.{}.orphans", cluster.name), rules: vec![rule] });
    }
    groups
}

/// The cluster-wide rules: GPU utilization (on DCGM's metrics), launch failures (on Karpenter's), pending pods.
fn cluster_group(cluster: &ClusterPlan, monitoring: &Monitoring, sources: MetricSources, pools: &[&PoolPlan], workloads: &[WorkloadPlan]) -> RuleGroup {
    let mut cluster_rules = Vec::new();
    let mut resources: Vec<String> = cluster.pools.iter().filter(|p| p.accelerator.is_accelerator()).flat_map(|p| p.accelerator.pod_resources()).map(|r| ksm_resource(r)).collect();
    resources.sort();
    resources.dedup();
    let nvidia: Vec<&&PoolPlan> = pools.iter().filter(|p| sources.dcgm && p.accelerator == AcceleratorKind::Nvidia).collect();
    for mig in [false, true] {
        let members: Vec<&str> = nvidia.iter().filter(|p| is_mig(p) == mig).map(|p| p.name.as_str()).collect();
        if !members.is_empty() {
            cluster_rules.push(low_utilization_rule(cluster, monitoring, mig, &members));
        }
    }
    if sources.karpenter {
        cluster_rules.push(launch_failures_rule(cluster));
    }
    cluster_rules.push(pods_pending_rule(cluster, monitoring, sources, &resources, workloads));
    RuleGroup { name: format!("gpuplan.{}.cluster", cluster.name), rules: cluster_rules }
}

/// Where a runbook finds Karpenter's launch errors: its alert and logs, or in EKS Auto Mode (no Karpenter pod) the
/// compute logs Auto Mode delivers once configured.
fn launch_errors(sources: MetricSources, karpenter: &'static str) -> &'static str {
    if sources.karpenter {
        karpenter
    } else {
        "EKS Auto Mode's launch errors (its AUTO_MODE_COMPUTE_LOGS log delivery; Auto Mode exposes no Karpenter metrics)"
    }
}

/// Karpenter's `error` label for a launch that found no capacity (sigs.k8s.io/karpenter@v1.14.1
/// pkg/cloudprovider/metrics/cloudprovider.go, `GetErrorTypeLabelValue`: `InsufficientCapacityError`; every other
/// error is `NodeClassNotReadyError`, `NodeClaimNotFoundError` or empty).
pub const ICE_ERROR: &str = "InsufficientCapacityError";

/// `GpuplanKarpenterLaunchFailures`: CloudProvider Create errors other than insufficient capacity for 15 minutes.
/// Insufficient capacity is how a spot tier hands over to its on-demand fallback (Karpenter marks the offering
/// unavailable and retries the next one), so it is normal on any tiered pool; capacity missing on every tier shows
/// as pods that stay unschedulable, which `GpuplanAcceleratorPodsPending` and the workloads' alerts report.
fn launch_failures_rule(cluster: &ClusterPlan) -> AlertRule {
    AlertRule {
        alert: LAUNCH_FAILURES.into(),
        expr: format!("sum by (controller, method, error) (increase(karpenter_cloudprovider_errors_total{{method=\"Create\",error!=\"{ICE_ERROR}\"}}[10m])) > 0\n"),
        for_: "15m".into(),
        labels: labels(&[("severity", "warning"), ("gpuplan_cluster", &cluster.name)]),
        annotations: labels(&[
            ("summary", &format!("Karpenter in cluster {} keeps failing to launch nodes ({{{{ $labels.error }}}})", cluster.name)),
            ("description", &format!(
                "Instance launches (CloudProvider Create) have failed for 15 minutes in cluster {} for a reason other than insufficient capacity (an empty error is an EC2 or IAM error: launch template, subnet, quota, permissions). {ICE_ERROR} is left out: it is how a spot tier falls back to on-demand; capacity missing on every tier shows as unschedulable pods ({PODS_PENDING}).",
                cluster.name
            )),
            ("runbook", &format!(
                "kubectl logs -n <karpenter namespace> deploy/karpenter | grep -i 'launching nodeclaim\\|error'; kubectl get nodeclaims; kubectl describe ec2nodeclass (its Ready condition names a missing subnet, security group, AMI or instance profile); check the EC2 service quotas of the {} types.",
                if cluster.pools.iter().any(|p| p.accelerator.is_accelerator()) { "GPU" } else { "instance" }
            )),
        ]),
    }
}

/// `GpuplanProfileOverBudget`: Σ `karpenter_nodepools_cost_total` of the profile's NodePools (+ reservations)
/// above its budget. It sees real spend (spot at the observed price, every node of every pool), so it fires on
/// out-of-band edits, price moves and anything gpuplan's bound did not foresee.
fn budget_rule(cluster: &ClusterPlan, profile: &str, source: &str, budget: f64, members: &[&&PoolPlan]) -> AlertRule {
    let names: Vec<&str> = members.iter().map(|p| p.name.as_str()).collect();
    let metered: Vec<&str> = members.iter().filter(|p| !reserved_only(p)).map(|p| p.name.as_str()).collect();
    let fixed: f64 = members.iter().filter(|p| reserved_only(p)).map(|p| round_cents(p.worst_case_usd_per_hour)).sum();
    let mut terms = Vec::new();
    if !metered.is_empty() {
        terms.push(format!("(sum(karpenter_nodepools_cost_total{{nodepool=~\"{}\"}}) or vector(0))", any_of(metered.iter().copied())));
    }
    // The NodePools still labelled with one of this profile's pools but none of the cluster's now (renamed or removed,
    // kept by Prune=false or a failed prune): their nodes run this profile's pools' work, and the budget was set for
    // that work, so their spend counts here. An orphan whose pool is in no profile any more is no profile's budget:
    // GpuplanNodePoolOutsideProfiles names it with its cost.
    let own_pools: BTreeSet<&str> = members.iter().map(|p| p.pool.as_str()).collect();
    terms.push(format!("(sum(karpenter_nodepools_cost_total and on (nodepool) {}) or vector(0))", orphans(cluster, Some(&own_pools))));
    let mut fixed_text = String::new();
    if fixed > 0.0 {
        terms.push(format!("{fixed:.2}"));
        fixed_text = format!(
            " Reserved capacity is billed whether used or not and Karpenter prices it near zero, so the reservations' ${fixed:.2}/h are added as a constant."
        );
    }
    AlertRule {
        alert: OVER_BUDGET.into(),
        expr: format!("(\n  {}\n) > {budget}\n", terms.join("\n  + ")),
        for_: "15m".into(),
        labels: labels(&[("severity", "critical"), ("gpuplan_profile", profile), ("gpuplan_cluster", &cluster.name)]),
        annotations: labels(&[
            ("summary", &format!("Profile {profile} spends ${{{{ $value | printf \"%.2f\" }}}}/h, over its budget of ${budget:.2}/h")),
            ("description", &format!(
                "Karpenter's cost of the nodes of NodePools {} (profile {profile}, karpenter_nodepools_cost_total: each NodeClaim at its offering's price, spot at the observed spot price), and of any NodePool no profile has any more whose nodes are labelled gpuplan.dev/pool={} ({OUTSIDE_PROFILES}), is over the profile's budget of ${budget:.2}/h.{fixed_text}",
                names.join(", "), own_pools.iter().copied().collect::<Vec<_>>().join("|")
            )),
            ("requires", &format!("Karpenter >= {COST_METRIC_KARPENTER} (karpenter_nodepools_cost_total); on older releases the metric is absent and this alert never fires. Renamed or removed NodePools still running count only with {KSM_NODE_LABELS}")),
            ("runbook", &format!(
                "check the NodePools for out-of-band edits (gpuplan compile --check), then kubectl get nodepool {} -o jsonpath='{{.spec.limits}}' and kubectl get nodeclaims -l karpenter.sh/nodepool; refresh the catalog if prices moved and recompile {source}.",
                names.join(" ")
            )),
        ]),
    }
}

/// The nodes' NodePools that carry gpuplan's pool label (of one of `pools`, or any) but are none of the cluster's
/// current NodePools, as `{nodepool, gpuplan_pool}` series of value 1, from kube-state-metrics' `kube_node_labels`.
fn orphans(cluster: &ClusterPlan, pools: Option<&BTreeSet<&str>>) -> String {
    let pool = match pools {
        Some(pools) => format!("label_gpuplan_dev_pool=~\"{}\"", any_of(pools.iter().copied())),
        None => "label_gpuplan_dev_pool!=\"\"".to_string(),
    };
    let current = any_of(cluster.pools.iter().map(|p| p.name.as_str()));
    format!(
        "max by (nodepool, gpuplan_pool) (label_replace(label_replace(kube_node_labels{{{pool},label_karpenter_sh_nodepool!=\"\",label_karpenter_sh_nodepool!~\"{current}\"}}, \"nodepool\", \"$1\", \"label_karpenter_sh_nodepool\", \"(.+)\"), \"gpuplan_pool\", \"$1\", \"label_gpuplan_dev_pool\", \"(.+)\"))"
    )
}

/// How long a NodePool's nodes may outlive it normally: a pruned NodePool's nodes drain for up to the longest
/// terminationGracePeriod (Karpenter deletes its NodeClaims when the NodePool goes), then an hour's margin.
fn orphan_for(cluster: &ClusterPlan) -> String {
    let drain = cluster.pools.iter().filter_map(|p| p.disruption.termination_grace_period.as_deref()).filter_map(crate::profile::duration_minutes).max().unwrap_or(0);
    let minutes = drain + 60;
    if minutes % 60 == 0 { format!("{}h", minutes / 60) } else { format!("{minutes}m") }
}

/// `GpuplanNodePoolOutsideProfiles`: nodes labelled with gpuplan's pool label whose NodePool is none of the cluster's
/// (renamed or removed, kept live by Argo CD `Prune=false`, Flux `prune: disabled` or a failed prune). Its value is
/// the NodePool's cost (0 where Karpenter reports none), which no budget of a profile without that pool sees.
fn outside_profiles_rule(cluster: &ClusterPlan, pools: &[&PoolPlan]) -> Option<AlertRule> {
    if pools.is_empty() {
        return None;
    }
    let orphans = orphans(cluster, None);
    Some(AlertRule {
        alert: OUTSIDE_PROFILES.into(),
        expr: format!("(\n  sum by (nodepool) (karpenter_nodepools_cost_total)\n    * on (nodepool) group_right ()\n  {orphans}\n)\nor\n{orphans} * 0\n"),
        for_: orphan_for(cluster),
        labels: labels(&[("severity", "warning"), ("gpuplan_cluster", &cluster.name)]),
        annotations: labels(&[
            ("summary", &format!("NodePool {{{{ $labels.nodepool }}}} (pool {{{{ $labels.gpuplan_pool }}}}) is in no profile of cluster {} and still has nodes, costing ${{{{ $value | printf \"%.2f\" }}}}/h", cluster.name)),
            ("description", &format!(
                "Nodes labelled gpuplan.dev/pool={{{{ $labels.gpuplan_pool }}}} belong to NodePool {{{{ $labels.nodepool }}}}, which none of cluster {}'s profiles generates any more (renamed or removed, and kept by Argo CD Prune=false, Flux prune: disabled or a failed prune). Their cost counts in the budget alert of the profile that has pool {{{{ $labels.gpuplan_pool }}}}, if any; otherwise no budget sees it.",
                cluster.name
            )),
            ("requires", &format!("{KSM_NODE_LABELS}; without it kube_node_labels has no such labels and this alert never fires. The cost needs Karpenter >= {COST_METRIC_KARPENTER} (karpenter_nodepools_cost_total; 0 without it)")),
            ("runbook", "kubectl get nodes -l karpenter.sh/nodepool={{ $labels.nodepool }}; if its pods have moved to the new NodePool, kubectl delete nodepool {{ $labels.nodepool }} (Karpenter drains and removes its nodes); if the pool is still wanted, add it back to its profile and recompile."),
        ]),
    })
}

/// `GpuplanGPUUtilizationLow` for the cluster's whole GPUs (`DCGM_FI_DEV_GPU_UTIL`, percent) or its MIG devices
/// (`DCGM_FI_PROF_GR_ENGINE_ACTIVE`, a ratio: the threshold is converted). MIG series carry `GPU_I_PROFILE`; the
/// whole-GPU rule leaves them out (they report GPU_UTIL as 0 and would drag the average down).
fn low_utilization_rule(cluster: &ClusterPlan, monitoring: &Monitoring, mig: bool, members: &[&str]) -> AlertRule {
    let low = monitoring.low_utilization_percent;
    let (metric, selector, value) = if mig {
        (MIG_GPU_METRIC, "GPU_I_PROFILE!=\"\"", "{{ $value | humanizePercentage }}")
    } else {
        (DEFAULT_GPU_METRIC, "GPU_I_PROFILE=\"\"", "{{ $value | printf \"%.0f\" }}%")
    };
    let what = if mig { "MIG devices" } else { "NVIDIA GPUs" };
    AlertRule {
        alert: LOW_UTILIZATION.into(),
        expr: format!("avg({metric}{{{selector}}}) < {}\n", threshold(metric, low)),
        for_: "1h".into(),
        labels: labels(&[("severity", "warning"), ("gpuplan_cluster", &cluster.name), ("metric", metric)]),
        annotations: labels(&[
            ("summary", &format!("{what} in cluster {} average {value} utilization", cluster.name)),
            ("description", &format!(
                "The {what} of cluster {} (NodePools {}) have averaged under {low}% utilization ({metric}) for an hour: capacity is paid for and idle.",
                cluster.name,
                members.join(", ")
            )),
            ("runbook", &format!(
                "find idle devices: bottomk(10, {metric}{{{selector}}}); lower workload minReplicas, consider time-slicing or MIG for small models, or a smaller GPU in the profile."
            )),
        ]),
    }
}

/// `GpuplanAcceleratorPodsPending`: unschedulable pods that request an accelerator, other than the pods of
/// declared workloads (their own alert names their pool).
fn pods_pending_rule(cluster: &ClusterPlan, monitoring: &Monitoring, sources: MetricSources, resources: &[String], workloads: &[WorkloadPlan]) -> AlertRule {
    let mut expr = format!(
        "max by (namespace, pod) (kube_pod_status_unschedulable) == 1\nand on (namespace, pod)\nmax by (namespace, pod) (kube_pod_container_resource_requests{{resource=~\"{}\"}}) > 0\n",
        resources.join("|")
    );
    for w in workloads {
        expr.push_str(&format!("unless on (namespace, pod)\nkube_pod_status_unschedulable{{{}}}\n", w.pod_selector()));
    }
    AlertRule {
        alert: PODS_PENDING.into(),
        expr,
        for_: monitoring.pending_for.clone(),
        labels: labels(&[("severity", "warning"), ("gpuplan_cluster", &cluster.name)]),
        annotations: labels(&[
            ("summary", &format!("Accelerator pod {{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} has been unschedulable for over {}", monitoring.pending_for)),
            ("description", &format!(
                "A pod requesting {} in cluster {} has been unschedulable for {}: no node fits it and no NodePool could launch one (limit reached, no capacity, or a toleration/nodeSelector no pool matches).",
                resources.join(" or "), cluster.name, monitoring.pending_for
            )),
            ("runbook", &format!("kubectl describe pod -n {{{{ $labels.namespace }}}} {{{{ $labels.pod }}}} (look for Karpenter's 'incompatible with nodepool' events); check the NodePool limits{} and {}.", if sources.karpenter { " (GpuplanNodePoolNearLimit)" } else { "" }, launch_errors(sources, "launch failures"))),
        ]),
    }
}

/// A workload's own alerts, scoped to its pods (namespace + pod-name pattern) and naming its pool's NodePools.
/// The unschedulable one, which every workload has, also records its replica count and selector for adopt
/// (`gpuplan_replicas`, `gpuplan_selector`: see `workload::REPLICAS_ANNOTATION`).
fn workload_rules(cluster: &ClusterPlan, monitoring: &Monitoring, sources: MetricSources, w: &WorkloadPlan) -> Vec<AlertRule> {
    let nodepools = w.nodepools.join(", ");
    let common = |severity: &str| {
        labels(&[
            ("severity", severity),
            ("gpuplan_cluster", &cluster.name),
            ("gpuplan_profile", &w.profile),
            ("gpuplan_pool", &w.placement.pool),
            ("gpuplan_workload", &format!("{}/{}", w.namespace, w.name)),
        ])
    };
    let mut rules = vec![AlertRule {
        alert: WORKLOAD_UNSCHEDULABLE.into(),
        expr: format!("max by (namespace, pod) (kube_pod_status_unschedulable{{{}}}) == 1\n", w.pod_selector()),
        for_: monitoring.pending_for.clone(),
        labels: common("warning"),
        annotations: labels(&[
            ("summary", &format!("Pod {{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} of {} {} cannot be scheduled on pool {}", w.kind, w.name, w.placement.pool)),
            ("description", &format!(
                "A pod of {} {}/{} has been unschedulable for {}. Its pool `{}` is NodePools {nodepools}; its pods need {}, with {} × {} each.",
                w.kind, w.namespace, w.name, monitoring.pending_for, w.placement.pool, w.placement.describe(), w.gpus_per_replica, cluster.pools.iter().find(|p| w.nodepools.contains(&p.name)).map_or("nvidia.com/gpu", |p| p.resource())
            )),
            ("runbook", &format!(
                "kubectl describe pod -n {{{{ $labels.namespace }}}} {{{{ $labels.pod }}}}; check that the pod spec has the pool's nodeSelector/toleration, then the limits of NodePools {} (kubectl get nodepool {} -o jsonpath='{{.status.resources}}') and {}.",
                nodepools,
                w.nodepools.join(" "),
                launch_errors(sources, "Karpenter's launch errors")
            )),
            (REPLICAS_ANNOTATION, &w.replicas_record()),
            (SELECTOR_ANNOTATION, &w.selector_record()),
        ]),
    }];
    let nvidia = cluster.pools.iter().any(|p| w.nodepools.contains(&p.name) && p.accelerator == AcceleratorKind::Nvidia);
    // A metric named in `autoscale metric=…` that is not dcgm-exporter's is the user's to provide.
    if nvidia && (sources.dcgm || !crate::solve::ops::metrics::is_dcgm_metric(&w.metric)) {
        let low = monitoring.low_utilization_percent;
        let value = if crate::solve::ops::metrics::metric_is_ratio(&w.metric) { "{{ $value | humanizePercentage }}" } else { "{{ $value | printf \"%.0f\" }}%" };
        let mut l = common("warning");
        l.insert("metric".into(), w.metric.clone());
        rules.push(AlertRule {
            alert: WORKLOAD_LOW_UTILIZATION.into(),
            expr: format!("avg({}{{{}}}) < {}\n", w.metric, w.pod_selector(), threshold(&w.metric, low)),
            for_: "1h".into(),
            labels: l,
            annotations: labels(&[
                ("summary", &format!("{} {}/{} averages {value} GPU utilization on pool {}", w.kind, w.namespace, w.name, w.placement.pool)),
                ("description", &format!(
                    "The GPUs of {}/{}'s pods (pool `{}`, NodePools {nodepools}) have averaged under {low}% ({}) for an hour.",
                    w.namespace, w.name, w.placement.pool, w.metric
                )),
                ("runbook", &format!(
                    "lower replicas min of workload `{}` in {} (or let autoscale do it), or move it to a smaller GPU, time-slicing or MIG.",
                    w.name, w.source
                )),
            ]),
        });
    }
    rules
}
