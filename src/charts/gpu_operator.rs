//! The names of the NVIDIA GPU Operator's objects and node labels (NVIDIA/gpu-operator v26.7.0).

/// The name of the ClusterPolicy gpuplan writes.
pub const CLUSTER_POLICY_NAME: &str = "cluster-policy";
/// gpuplan's ConfigMap of device-plugin configs, named by the ClusterPolicy's `devicePlugin.config`.
pub const DEVICE_PLUGIN_CONFIG_MAP: &str = "gpuplan-device-plugin-config";
/// The operator's own MIG configs (`migManager.config`), the file gpuplan checks configs against.
pub const MIG_PARTED_CONFIG_MAP: &str = "default-mig-parted-config";

/// GPU Operator operand labels a node may carry to keep that operand off it.
pub const DEPLOY_DEVICE_PLUGIN_LABEL: &str = "nvidia.com/gpu.deploy.device-plugin";
pub const DEPLOY_MIG_MANAGER_LABEL: &str = "nvidia.com/gpu.deploy.mig-manager";

/// The namespace the GPU Operator's chart installs into (its README's `helm install ... -n gpu-operator`).
pub const NAMESPACE: &str = "gpu-operator";
