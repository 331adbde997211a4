//! What the add-on Helm charts gpuplan configures create and read: the NVIDIA GPU Operator (with its Node Feature
//! Discovery subchart), the Neuron device plugin and the EFA device plugin. Each fact is cited from the chart's own
//! files at the version named beside it.
//!
//! - [`add_ons`]: the [`add_ons::ADD_ONS`] table (one row per DaemonSet an accelerator node needs: chart, default
//!   tolerations, requests, node selector), the values ConfigMaps that configure the charts, and the tolerations
//!   the rendered objects give each DaemonSet;
//! - [`instance_types`]: the instance types the device plugins' charts admit by node affinity;
//! - [`daemon_sets`]: the DaemonSets as their charts create them, which `gpuplan simulate` counts;
//! - [`gpu_operator`]: the names of the GPU Operator's objects and node labels.
//!
//! gpuplan's decisions about the charts (which values to write, the E0184 check that every pool's nodes get their
//! device plugins) are `ops::addons`'. This stage sits above `catalog` and below `simulate` and `render`, which
//! read it; it knows nothing of profiles, plans or pods.

pub mod add_ons;
pub mod daemon_sets;
pub mod gpu_operator;
pub mod instance_types;
pub mod node_daemons;
