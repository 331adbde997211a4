//! The NVIDIA GPU Operator's ClusterPolicy and the device-plugin sharing ConfigMap for one cluster.
//!
//! - `driver`/`toolkit`: off on EKS accelerated AMIs (the driver and the container toolkit are baked in).
//! - `devicePlugin.config`: names the ConfigMap holding one config per time-slicing setup
//!   (`time-slicing-<R>`, the value of the NodePool label `nvidia.com/device-plugin.config`) plus `default`
//!   (no sharing) for nodes without the label.
//! - `mig.strategy`: `single` whenever a pool uses MIG: MIG devices are then advertised as `nvidia.com/gpu`, the
//!   resource the NodePool limits, taints, alerts and workload requests already use. A config that mixes
//!   profiles (`all-balanced`) would need `mixed` (`nvidia.com/mig-<profile>` resources), which no instance type
//!   advertises to Karpenter, so nothing would ever launch: the solver refuses it (E0178, see `mig.rs`).
//! - `migManager.config`: the operator's `default-mig-parted-config`, the file gpuplan checks configs against.
//! - images: every enabled component gets `repository`/`image`/`version`, from [`RELEASES`]. The operator's Helm
//!   chart, installed without its own ClusterPolicy, gives the operator only `DRIVER_MANAGER_IMAGE` and
//!   `VALIDATOR_IMAGE` (deployments/gpu-operator/templates/operator.yaml); any other component without images in
//!   the CR fails with "empty image path provided through both ClusterPolicy CR and ENV"
//!   (api/nvidia/v1/clusterpolicy_types.go `imagePath`). [`check_images`] refuses a rendered ClusterPolicy
//!   (e.g. from a `--templates` override) that leaves an enabled component without them.

use std::collections::BTreeMap;

use serde_json::Value;



use crate::profile::gpu_operator_releases::DEFAULT_RELEASE;

pub use crate::solve::ops::gpu_operator::GpuOperatorPlan;

impl GpuOperatorPlan {
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

/// ClusterPolicy components that take an image, and whether the operator runs them when `enabled` is unset
/// (api/nvidia/v1/clusterpolicy_types.go `IsEnabled`). Left out: `validator` and `nodeStatusExporter` (they fall
/// back to VALIDATOR_IMAGE) and `driver.manager` (DRIVER_MANAGER_IMAGE), the two variables the Helm chart's
/// operator Deployment sets.
const IMAGE_COMPONENTS: &[(&str, bool)] = &[
    ("ccManager", false),
    ("dcgm", false),
    ("dcgmExporter", true),
    ("devicePlugin", true),
    ("driver", true),
    ("gdrcopy", false),
    ("gds", false),
    ("gfd", true),
    ("kataSandboxDevicePlugin", false),
    ("migManager", true),
    ("sandboxDevicePlugin", false),
    ("toolkit", true),
    ("vfioManager", false),
    ("vgpuDeviceManager", false),
    ("vgpuManager", false),
];

/// Every enabled component of a rendered ClusterPolicy without an environment fallback names its image:
/// `repository`, `image` and `version` all set, or `image` alone as a full reference (the operator's
/// `imagePath` accepts both). Returns (JSON pointer, message) pairs; empty when the policy can start.
pub fn check_images(policy: &Value) -> Vec<(String, String)> {
    let spec = &policy["spec"];
    let mut out = Vec::new();
    for (component, default_on) in IMAGE_COMPONENTS {
        let c = &spec[*component];
        if c.get("enabled").and_then(Value::as_bool).unwrap_or(*default_on) {
            check_image(c, &format!("/spec/{component}"), component, &mut out);
        }
    }
    out
}

fn check_image(c: &Value, pointer: &str, component: &str, out: &mut Vec<(String, String)>) {
    let field = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").trim().to_string();
    let (repository, image, version) = (field("repository"), field("image"), field("version"));
    let full_reference = repository.is_empty() && version.is_empty() && image.contains('/');
    if full_reference || ![&repository, &image, &version].iter().any(|v| v.is_empty()) {
        return;
    }
    let missing: Vec<&str> = [("repository", &repository), ("image", &image), ("version", &version)]
        .into_iter()
        .filter(|(_, v)| v.is_empty())
        .map(|(k, _)| k)
        .collect();
    out.push((
        pointer.to_string(),
        format!(
            "{component} is enabled but has no {}: the GPU Operator's Helm chart gives the operator only DRIVER_MANAGER_IMAGE and VALIDATOR_IMAGE, so this component fails with \"empty image path provided through both ClusterPolicy CR and ENV\" (or \"repository, image and version must all be set\"); set repository, image and version (GPU Operator {DEFAULT_RELEASE} values in src/profile/gpu_operator_releases.rs)",
            missing.join(", ")
        ),
    ));
}
