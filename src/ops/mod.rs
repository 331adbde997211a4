//! Operations manifests, generated from the same profiles as the pools so that the workload, the alerts and
//! the GPU stack agree with them:
//!
//! - [`workload`]: PodDisruptionBudget and HorizontalPodAutoscaler (or KEDA ScaledObject) per `workload` block;
//! - [`keda`]: the KEDA ScaledObject of a workload that scales to zero or on a trigger, and KEDA's admission rules;
//! - [`alerts`]: one PrometheusRule per cluster (every NodePool by name, every budgeted profile, cluster-wide
//!   GPU alerts) and the ServiceMonitors that feed it;
//! - [`gpu_operator`]: the NVIDIA GPU Operator ClusterPolicy and the device-plugin time-slicing ConfigMap;
//! - [`mig`]: which MIG configuration exists for which GPU (planned in `solve::mig`, with the rest of the ops plan in
//!   `solve::ops`).
//! - [`adapter`]: prometheus-adapter's rules for the HPAs' Pods metrics (a ConfigMap for `rules.existing`);
//! - [`addons`]: the DaemonSets an accelerator node needs (NFD, the device plugins), the Helm values that let them
//!   tolerate every pool taint, and the check that they reach every pool's nodes (E0184);
//! - [`check`]: checks on the rendered objects that a schema cannot express (run by every compile).
//!
//! Profile syntax is parsed in `profile/mod.rs`'s walk (see `ops/intent.rs`, a child module of `profile` so that
//! it shares the parser's spans and did-you-mean helpers). Error codes E0170–E0179, E0182 and E0183 (workload selectors) and E0220–E0229 (KEDA: scale-to-zero, triggers) belong to this module (those found while planning are raised in `solve::ops` and, for MIG, `solve::constraints`); E0180–E0181 to `simulate::check`.

pub mod adapter;
pub mod addon_daemonsets;
pub mod addons;
pub mod alerts;
pub mod check;
pub mod gpu_operator;
pub mod keda;
pub mod mig;
pub mod render;
pub mod workload;

use std::collections::BTreeMap;

use crate::diagnostic::{Span, Spanned};

// MOVED(issue 29): re-export until the merge
pub use crate::solve::ops::metrics::{gpu_metric, is_dcgm_metric, metric_is_ratio, quantity, threshold, MetricSources, DEFAULT_GPU_METRIC, MIG_GPU_METRIC};

/// The operations part of one profile.
#[derive(Debug, Clone, Default)]
pub struct ProfileOps {
    pub workloads: Vec<Workload>,
    pub monitoring: Option<Spanned<Monitoring>>,
}

/// `workload "name" namespace="…" pool="…" { … }`
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: Spanned<String>,
    pub namespace: Spanned<String>,
    /// A pool of the profile (all its tiers) or one tier's NodePool name.
    pub pool: Spanned<String>,
    /// scaleTargetRef kind: Deployment (default) or StatefulSet.
    pub kind: Spanned<String>,
    pub selector: BTreeMap<String, Spanned<String>>,
    pub replicas_min: Spanned<u32>,
    pub replicas_max: Spanned<u32>,
    pub gpus_per_replica: Spanned<u32>,
    /// `requests cpu=… memory=…`: Kubernetes quantities per replica, as written (each parsed once here).
    pub requests: BTreeMap<String, Spanned<String>>,
    pub disruption_budget: Option<Spanned<PdbBudget>>,
    pub autoscale: Option<Spanned<Autoscale>>,
    /// `scale-to-zero`: KEDA may take the workload to 0 replicas (`replicas min=0`).
    pub scale_to_zero: Option<Spanned<ScaleToZero>>,
    /// `trigger …`: KEDA scales on these (besides `autoscale`'s GPU utilization).
    pub triggers: Vec<Spanned<Trigger>>,
    pub span: Span,
}

impl Workload {
    /// KEDA scales this workload (a ScaledObject instead of the HPA): it scales to zero or has a trigger.
    pub fn keda(&self) -> bool {
        self.scale_to_zero.is_some() || !self.triggers.is_empty()
    }
}

/// `scale-to-zero cooldown="15m" polling="30s"`: KEDA's `cooldownPeriod` (how long every trigger stays inactive
/// before the last replica goes) and `pollingInterval` (how often KEDA checks the triggers while at zero), seconds.
/// KEDA's defaults are 300 and 30 (kedacore/keda v2.20.2 `pkg/scaling/executor/scale_executor.go` `defaultCooldownPeriod`,
/// `apis/keda/v1alpha1/withtriggers_types.go` `defaultPollingInterval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScaleToZero {
    pub cooldown_seconds: u32,
    pub polling_seconds: u32,
}

impl Default for ScaleToZero {
    fn default() -> Self {
        ScaleToZero { cooldown_seconds: 300, polling_seconds: 30 }
    }
}

/// A KEDA trigger besides GPU utilization: what wakes a workload at zero replicas, where no pod reports a GPU.
#[derive(Debug, Clone, PartialEq)]
pub enum Trigger {
    /// `trigger "prometheus" query="…" threshold=10 activation=0`: KEDA's prometheus scaler on any query (desired
    /// replicas = ⌈value / threshold⌉; active while value > activation).
    Prometheus { query: String, threshold: String, activation: Option<String> },
    /// `trigger "kueue-pending" cluster-queue="research" per-replica=2`: Kueue's pending workloads of a
    /// ClusterQueue (`kueue_pending_workloads{cluster_queue, status="active"}`), one replica per `per-replica`.
    KueuePending { cluster_queue: String, per_replica: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOrPercent {
    Int(u32),
    Percent(u32),
}

impl IntOrPercent {
    /// Pods this stands for out of `total`, rounded up (as the disruption controller does for PDBs).
    pub fn of(self, total: u32) -> u32 {
        match self {
            IntOrPercent::Int(n) => n,
            IntOrPercent::Percent(p) => (u64::from(p) * u64::from(total)).div_ceil(100) as u32,
        }
    }

    pub fn to_json(self) -> serde_json::Value {
        match self {
            IntOrPercent::Int(n) => serde_json::json!(n),
            IntOrPercent::Percent(p) => serde_json::json!(format!("{p}%")),
        }
    }
}

impl std::fmt::Display for IntOrPercent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IntOrPercent::Int(n) => write!(f, "{n}"),
            IntOrPercent::Percent(p) => write!(f, "{p}%"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PdbBudget {
    MinAvailable(IntOrPercent),
    MaxUnavailable(IntOrPercent),
}

/// `autoscale gpu-utilization=70 metric="DCGM_FI_DEV_GPU_UTIL"`
#[derive(Debug, Clone, PartialEq)]
pub struct Autoscale {
    /// Target average GPU utilization per pod, percent (converted to the metric's unit).
    pub gpu_utilization: u32,
    /// The per-pod metric prometheus-adapter exposes from dcgm-exporter; None: the pool's (see [`gpu_metric`]).
    pub metric: Option<String>,
}

/// The label kube-prometheus-stack's Prometheus selects PrometheusRules and ServiceMonitors by when installed as
/// release `kube-prometheus-stack` (`ruleSelectorNilUsesHelmValues: true` → `matchLabels: {release: <release>}`,
/// charts/kube-prometheus-stack/templates/prometheus/prometheus.yaml).
pub const DEFAULT_MONITORING_LABEL: (&str, &str) = ("release", "kube-prometheus-stack");

/// `gpu-operator { image "<component>" repository=… image=… version=… }`: unset fields keep the release's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageOverride {
    pub repository: Option<String>,
    pub image: Option<String>,
    pub version: Option<String>,
}

/// `monitoring namespace="monitoring" { … }`: where the PrometheusRule and ServiceMonitors go and what
/// Prometheus selects them by. One per cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Monitoring {
    /// Namespace of the PrometheusRule.
    pub namespace: String,
    /// Labels on the PrometheusRule and ServiceMonitors (Prometheus' ruleSelector/serviceMonitorSelector).
    pub labels: BTreeMap<String, String>,
    pub karpenter_namespace: String,
    pub dcgm_namespace: String,
    /// Namespace of prometheus-adapter's release (its config ConfigMap goes there); None: `namespace`.
    pub prometheus_adapter_namespace: Option<String>,
    /// Namespace the GPU Operator runs in (the time-slicing ConfigMap goes there).
    pub gpu_operator_namespace: String,
    /// Whether gpuplan generates the ClusterPolicy (false: the operator is managed elsewhere; gpuplan then
    /// emits its own dcgm-exporter ServiceMonitor).
    pub manage_gpu_operator: bool,
    /// Whether gpuplan writes the Helm values for the GPU Operator chart (`ops::addons`); false: the user's install
    /// runs with values gpuplan does not know, read as the chart's defaults.
    pub gpu_operator_values: bool,
    /// GPU Operator release whose images the ClusterPolicy pins (a version of `gpu_operator::RELEASES`).
    pub gpu_operator_release: String,
    /// Per-component image overrides, by ClusterPolicy spec path (`devicePlugin`, `driver.manager`, …).
    pub gpu_operator_images: BTreeMap<String, ImageOverride>,
    /// `prometheus url=…`: the Prometheus KEDA's prometheus triggers query (their `serverAddress`); None: the
    /// kube-prometheus-stack default in the monitoring namespace (see [`Monitoring::prometheus_url`]).
    pub prometheus_url: Option<String>,
    /// Alert thresholds.
    pub near_limit_percent: u32,
    pub low_utilization_percent: u32,
    pub pending_for: String,
}

impl Monitoring {
    pub fn adapter_namespace(&self) -> &str {
        self.prometheus_adapter_namespace.as_deref().unwrap_or(&self.namespace)
    }

    /// Where KEDA's prometheus triggers read Prometheus: `prometheus url=…`, else the Service kube-prometheus-stack
    /// creates for its Prometheus when installed as release `kube-prometheus-stack` in the monitoring namespace
    /// (charts/kube-prometheus-stack templates/prometheus/service.yaml: `<fullname>-prometheus`, port 9090). KEDA
    /// queries Prometheus itself: prometheus-adapter serves only the HPAs' Pods metrics.
    pub fn prometheus_url(&self) -> String {
        self.prometheus_url.clone().unwrap_or_else(|| default_prometheus_url(&self.namespace))
    }
}

/// kube-prometheus-stack's Prometheus Service in `namespace` (see [`Monitoring::prometheus_url`]).
pub fn default_prometheus_url(namespace: &str) -> String {
    format!("http://kube-prometheus-stack-prometheus.{namespace}.svc:9090")
}

impl Default for Monitoring {
    fn default() -> Self {
        Monitoring {
            namespace: "monitoring".into(),
            labels: BTreeMap::from([(DEFAULT_MONITORING_LABEL.0.to_string(), DEFAULT_MONITORING_LABEL.1.to_string())]),
            karpenter_namespace: "kube-system".into(),
            dcgm_namespace: "gpu-operator".into(),
            prometheus_adapter_namespace: None,
            gpu_operator_namespace: "gpu-operator".into(),
            manage_gpu_operator: true,
            gpu_operator_values: true,
            gpu_operator_release: gpu_operator::DEFAULT_RELEASE.to_string(),
            gpu_operator_images: BTreeMap::new(),
            prometheus_url: None,
            near_limit_percent: 90,
            low_utilization_percent: 20,
            pending_for: "15m".into(),
        }
    }
}
