//! Operations manifests, generated from the same profiles as the pools so that the workload, the alerts and
//! the GPU stack agree with them:
//!
//! - [`workload`]: PodDisruptionBudget and HorizontalPodAutoscaler (or KEDA ScaledObject) per `workload` block;
//! - [`keda`]: the KEDA ScaledObject of a workload that scales to zero or on a trigger, and KEDA's admission rules;
//! - [`alerts`]: one PrometheusRule per cluster (every NodePool by name, every budgeted profile, cluster-wide
//!   GPU alerts) and the ServiceMonitors that feed it;
//! - [`gpu_operator`]: the NVIDIA GPU Operator ClusterPolicy and the device-plugin time-slicing ConfigMap;
//! - [`mig`]: which MIG configuration exists for which GPU (used by the solver's filter too).
//! - [`adapter`]: prometheus-adapter's rules for the HPAs' Pods metrics (a ConfigMap for `rules.existing`);
//! - [`addons`]: the DaemonSets an accelerator node needs (NFD, the device plugins), the Helm values that let them
//!   tolerate every pool taint, and the check that they reach every pool's nodes (E0184);
//! - [`check`]: checks on the rendered objects that a schema cannot express (run by every compile).
//!
//! The intent (`workload` and `monitoring` blocks) is parsed by the profile stage (`profile/ops.rs`,
//! `profile/monitoring.rs`), which owns those types. Error codes E0170–E0179, E0182 and E0183 (workload selectors) and E0220–E0229 (KEDA: scale-to-zero, triggers) belong to this module; E0180–E0181 to `simulate::check`.

pub mod adapter;
pub mod addon_daemonsets;
pub mod addons;
pub mod alerts;
pub mod check;
pub mod gpu_operator;
pub mod keda;
pub mod mig;
pub mod plan;
pub mod render;
pub mod workload;

pub use plan::{plan_cluster, OpsPlan};

// MOVED(issue 29): re-export until the merge
pub use crate::profile::monitoring::{default_prometheus_url, ImageOverride, MetricSources, Monitoring, DEFAULT_MONITORING_LABEL};
// MOVED(issue 29): re-export until the merge
pub use crate::profile::ops::{Autoscale, IntOrPercent, PdbBudget, ProfileOps, ScaleToZero, Trigger, Workload};

/// dcgm-exporter's whole-GPU utilization, in percent (etc/default-counters.csv).
pub const DEFAULT_GPU_METRIC: &str = "DCGM_FI_DEV_GPU_UTIL";
/// The graphics engine's active ratio (0–1), the utilization MIG devices report: `DCGM_FI_DEV_GPU_UTIL` is not
/// supported for MIG instances (NVIDIA/dcgm-exporter#216, #430; etc/dcp-metrics-included.csv enables this one).
pub const MIG_GPU_METRIC: &str = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";

/// The utilization metric of a pool: MIG pools need the profiling metric.
pub fn gpu_metric(mig: bool) -> &'static str {
    if mig {
        MIG_GPU_METRIC
    } else {
        DEFAULT_GPU_METRIC
    }
}

/// Whether a dcgm-exporter metric is a 0–1 ratio (`DCGM_FI_PROF_*`) rather than a percentage: HPA targets and
/// alert thresholds must be written in the metric's own unit.
pub fn metric_is_ratio(metric: &str) -> bool {
    metric.starts_with("DCGM_FI_PROF_")
}

/// A utilization percentage in the metric's unit, as a PromQL number (70 → `70`, or `0.7` for a ratio).
pub fn threshold(metric: &str, percent: u32) -> String {
    if metric_is_ratio(metric) {
        format!("{}", f64::from(percent) / 100.0)
    } else {
        percent.to_string()
    }
}

/// A utilization percentage in the metric's unit, as a canonical Kubernetes quantity (70 → `"70"`, or `"700m"`
/// for a ratio: the API server would rewrite `0.7` to `700m`, a permanent GitOps diff).
pub fn quantity(metric: &str, percent: u32) -> String {
    match (metric_is_ratio(metric), percent % 100) {
        (false, _) => percent.to_string(),
        (true, 0) => (percent / 100).to_string(),
        (true, _) => format!("{}m", percent * 10),
    }
}

/// Whether a metric is one of dcgm-exporter's.
pub fn is_dcgm_metric(metric: &str) -> bool {
    metric.starts_with("DCGM_")
}
