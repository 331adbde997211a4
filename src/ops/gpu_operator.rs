//! The NVIDIA GPU Operator's ClusterPolicy and the device-plugin sharing ConfigMap for one cluster.
//!
//! - `driver`/`toolkit`: off on EKS accelerated AMIs (the driver and the container toolkit are baked in).
//! - `devicePlugin.config`: names the ConfigMap holding one config per time-slicing setup
//!   (`time-slicing-<R>`, the value of the NodePool label `nvidia.com/device-plugin.config`) plus `default`
//!   (no sharing) for nodes without the label.
//! - `mig.strategy`: `single` when every MIG pool uses a config with one profile per GPU (`all-1g.10gb`): MIG
//!   devices are then advertised as `nvidia.com/gpu`, the resource the NodePool limits, taints, alerts and
//!   workload requests already use. `mixed` only when some config mixes profiles (`all-balanced`), which
//!   `single` cannot serve; workloads then request `nvidia.com/mig-<profile>` resources.
//! - `migManager.config`: the operator's `default-mig-parted-config`, the file gpuplan checks configs against.

use std::collections::{BTreeMap, BTreeSet};

use crate::ops::mig::MigConfigs;

pub const CLUSTER_POLICY_NAME: &str = "cluster-policy";
pub const DEVICE_PLUGIN_CONFIG_MAP: &str = "gpuplan-device-plugin-config";
pub const MIG_PARTED_CONFIG_MAP: &str = "default-mig-parted-config";

#[derive(Debug, Clone, PartialEq)]
pub struct GpuOperatorPlan {
    pub namespace: String,
    /// Driver and toolkit containers (false on EKS accelerated AMIs).
    pub driver_enabled: bool,
    pub toolkit_enabled: bool,
    /// Time-slicing replicas in use, one device-plugin config each.
    pub time_slicing: BTreeSet<u32>,
    /// MIG configs in use (`nvidia.com/mig.config` values) and the strategy.
    pub mig_configs: BTreeSet<String>,
    pub mig_strategy: &'static str,
    /// Labels for the operator-managed dcgm-exporter ServiceMonitor (Prometheus' selector).
    pub service_monitor_labels: BTreeMap<String, String>,
}

impl GpuOperatorPlan {
    pub fn new(
        namespace: &str,
        accelerated_ami: bool,
        time_slicing: BTreeSet<u32>,
        mig_configs: BTreeSet<String>,
        service_monitor_labels: BTreeMap<String, String>,
    ) -> GpuOperatorPlan {
        let configs = MigConfigs::builtin();
        let mig_strategy = if mig_configs.is_empty() {
            "none"
        } else if mig_configs.iter().all(|c| configs.homogeneous(c)) {
            "single"
        } else {
            "mixed"
        };
        GpuOperatorPlan {
            namespace: namespace.to_string(),
            driver_enabled: !accelerated_ami,
            toolkit_enabled: !accelerated_ami,
            time_slicing,
            mig_configs,
            mig_strategy,
            service_monitor_labels,
        }
    }

    /// The device-plugin configs (ConfigMap data), each a k8s-device-plugin `version: v1` config file.
    pub fn device_plugin_configs(&self) -> BTreeMap<String, serde_json::Value> {
        let flags = serde_json::json!({ "migStrategy": self.mig_strategy });
        let mut data = BTreeMap::new();
        data.insert("default".to_string(), serde_json::json!({ "version": "v1", "flags": flags }));
        for r in &self.time_slicing {
            data.insert(
                format!("time-slicing-{r}"),
                serde_json::json!({
                    "version": "v1",
                    "flags": flags,
                    "sharing": { "timeSlicing": {
                        // A request for 2 shared GPUs would get 2 slices of one GPU, not 2 GPUs: refuse it.
                        "failRequestsGreaterThanOne": true,
                        "resources": [{ "name": "nvidia.com/gpu", "replicas": r }],
                    }},
                }),
            );
        }
        data
    }
}
