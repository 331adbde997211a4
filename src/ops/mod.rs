//! Operations manifests, generated from the same profiles as the pools so that the workload, the alerts and
//! the GPU stack agree with them:
//!
//! - [`workload`]: PodDisruptionBudget and HorizontalPodAutoscaler per `workload` block;
//! - [`alerts`]: one PrometheusRule per cluster (every NodePool by name, every budgeted profile, cluster-wide
//!   GPU alerts) and the ServiceMonitors that feed it;
//! - [`gpu_operator`]: the NVIDIA GPU Operator ClusterPolicy and the device-plugin time-slicing ConfigMap;
//! - [`mig`]: which MIG configuration exists for which GPU (used by the solver's filter too).
//!
//! Profile syntax is parsed in `intent.rs`'s walk (see `ops/intent.rs`, a child module of `intent` so that
//! it shares the parser's spans and did-you-mean helpers). Error codes E0170–E0179 belong to this module.

pub mod alerts;
pub mod gpu_operator;
pub mod mig;
pub mod plan;
pub mod render;
pub mod workload;

use std::collections::BTreeMap;

use crate::diagnostic::{Span, Spanned};

pub use plan::{plan_cluster, OpsPlan};

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
    pub disruption_budget: Option<Spanned<PdbBudget>>,
    pub autoscale: Option<Spanned<Autoscale>>,
    pub span: Span,
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
    /// Target average GPU utilization per pod, percent.
    pub gpu_utilization: u32,
    /// The per-pod metric prometheus-adapter exposes from dcgm-exporter.
    pub metric: String,
}

pub const DEFAULT_GPU_METRIC: &str = "DCGM_FI_DEV_GPU_UTIL";

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
    /// Namespace the GPU Operator runs in (the time-slicing ConfigMap goes there).
    pub gpu_operator_namespace: String,
    /// Whether gpuplan generates the ClusterPolicy (false: the operator is managed elsewhere; gpuplan then
    /// emits its own dcgm-exporter ServiceMonitor).
    pub manage_gpu_operator: bool,
    /// Alert thresholds.
    pub near_limit_percent: u32,
    pub low_utilization_percent: u32,
    pub pending_for: String,
}

impl Default for Monitoring {
    fn default() -> Self {
        Monitoring {
            namespace: "monitoring".into(),
            labels: BTreeMap::new(),
            karpenter_namespace: "kube-system".into(),
            dcgm_namespace: "gpu-operator".into(),
            gpu_operator_namespace: "gpu-operator".into(),
            manage_gpu_operator: true,
            near_limit_percent: 90,
            low_utilization_percent: 20,
            pending_for: "15m".into(),
        }
    }
}
