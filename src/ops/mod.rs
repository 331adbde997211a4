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
//! - the checks on the rendered objects that a schema cannot express live in the `check` stage (`check::ops`).
//!
//! The intent (`workload` and `monitoring` blocks) is parsed by the profile stage (`profile/ops.rs`,
//! `profile/monitoring.rs`), which owns those types. Error codes E0170–E0179, E0182 and E0183 (workload selectors) and E0220–E0229 (KEDA: scale-to-zero, triggers) belong to this module; E0180–E0181 to `check`. Those found while planning are raised in `solve::ops` and, for MIG, `solve::constraints`.

pub mod adapter;
pub mod addons;
pub mod alerts;
pub mod gpu_operator;
pub mod keda;
pub mod render;
pub mod workload;
