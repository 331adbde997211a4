//! The KEDA ScaledObject of a `workload` that scales to zero or on a demand trigger ([`KedaPlan`]): its replica
//! bounds and its triggers (the ScaledObject itself is rendered by `ops::keda`, which says why KEDA replaces the HPA).
//!
//! The triggers:
//! - `autoscale gpu-utilization=N` becomes a `prometheus` trigger on the query prometheus-adapter serves the HPA
//!   (dcgm-exporter's utilization averaged per pod, see `adapter.rs`), summed over the workload's pods. With KEDA's
//!   default `metricType: AverageValue` the HPA KEDA creates runs ⌈sum / threshold⌉ replicas, which is what the
//!   HPA's Pods metric with `averageValue: N` runs (⌈replicas × mean / N⌉).
//! - `trigger "prometheus" query=… threshold=…`: the user's query (a queue backlog, a gateway's request rate).
//! - `trigger "kueue-pending" cluster-queue=…`: Kueue's gauge of a ClusterQueue's pending workloads,
//!   `kueue_pending_workloads{cluster_queue, status}` (kubernetes-sigs/kueue v0.19.2 `pkg/metrics/metrics.go`,
//!   `PendingWorkloads` / `ReportPendingWorkloads`; status `active` = waiting for admission, `inadmissible` = cannot
//!   be admitted as the queue stands; kueue.sigs.k8s.io/docs/reference/metrics).
//!
//! Every trigger reads Prometheus directly (`serverAddress`: `Monitoring::prometheus_url`): KEDA does
//! not go through prometheus-adapter, whose ConfigMap gpuplan writes only for HPAs.

use crate::profile::ops::{ScaleToZero, Trigger};

use super::metrics::threshold;
use super::scaling::ScalingStyle;

/// The name of the trigger `autoscale` becomes (adopt reads it back into `autoscale`).
pub const GPU_TRIGGER: &str = "gpu-utilization";

/// The ScaledObject of one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct KedaPlan {
    /// minReplicaCount (0 with `scale-to-zero`) and maxReplicaCount.
    pub min: u32,
    pub max: u32,
    /// cooldownPeriod and pollingInterval: only for a workload at minReplicaCount 0, the only case where KEDA uses them
    /// (`verifyScaledObjects` warns "CooldownPeriod is configured but is not relevant" otherwise).
    pub scale_to_zero: Option<ScaleToZero>,
    pub triggers: Vec<KedaTrigger>,
    /// The HPA behaviour KEDA's HPA gets (`advanced.horizontalPodAutoscalerConfig.behavior`): the same as gpuplan's HPA.
    pub style: ScalingStyle,
    /// `autoscale`'s metric and target percentage, when there is one (the `gpu-utilization` trigger).
    pub gpu: Option<(String, u32)>,
}

/// One `prometheus` trigger.
#[derive(Debug, Clone, PartialEq)]
pub struct KedaTrigger {
    pub name: String,
    pub query: String,
    /// KEDA parses these as floats: `"70"`, `"0.7"`.
    pub threshold: String,
    pub activation: Option<String>,
    pub server_address: String,
}

/// What [`KedaPlan::new`] needs from the workload and its cluster.
pub struct KedaInputs<'a> {
    pub min: u32,
    pub max: u32,
    pub scale_to_zero: Option<ScaleToZero>,
    pub triggers: &'a [Trigger],
    /// `autoscale`: the pool's metric and the target percentage.
    pub gpu: Option<(&'a str, u32)>,
    /// The PromQL selector of the workload's pods (`WorkloadPlan::pod_selector`).
    pub pod_selector: &'a str,
    pub server_address: &'a str,
    pub style: ScalingStyle,
}

impl KedaPlan {
    pub fn new(k: &KedaInputs) -> KedaPlan {
        let trigger = |name: String, query: String, threshold: String, activation: Option<String>| KedaTrigger { name, query, threshold, activation, server_address: k.server_address.to_string() };
        let mut triggers = Vec::new();
        if let Some((metric, percent)) = k.gpu {
            triggers.push(trigger(GPU_TRIGGER.into(), gpu_query(metric, k.pod_selector), threshold(metric, percent), None));
        }
        let mut queries = 0;
        for t in k.triggers {
            triggers.push(match t {
                Trigger::Prometheus { query, threshold, activation } => {
                    queries += 1;
                    trigger(format!("prometheus-{queries}"), query.clone(), threshold.clone(), activation.clone())
                }
                Trigger::KueuePending { cluster_queue, per_replica } => trigger(kueue_trigger_name(cluster_queue), kueue_query(cluster_queue), per_replica.to_string(), Some("0".into())),
            });
        }
        KedaPlan {
            min: k.min,
            max: k.max,
            scale_to_zero: if k.min == 0 { k.scale_to_zero } else { None },
            triggers,
            style: k.style,
            gpu: k.gpu.map(|(m, p)| (m.to_string(), p)),
        }
    }
}

/// The GPU utilization of a workload's pods, summed: prometheus-adapter's per-pod rule (`adapter::pod_rule`) over
/// the workload's pods, so that KEDA's AverageValue target divides it by the replica count as the HPA does.
pub fn gpu_query(metric: &str, pod_selector: &str) -> String {
    format!("sum(avg by (namespace, pod) ({metric}{{{pod_selector}}}))")
}

/// A ClusterQueue's workloads waiting for admission.
pub fn kueue_query(cluster_queue: &str) -> String {
    format!("sum(kueue_pending_workloads{{cluster_queue=\"{cluster_queue}\",status=\"active\"}})")
}

pub fn kueue_trigger_name(cluster_queue: &str) -> String {
    format!("kueue-pending-{cluster_queue}")
}
