//! Which GPU utilization metric a workload scales on, in what unit its targets are written, and which metric
//! sources a cluster has at all.

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
