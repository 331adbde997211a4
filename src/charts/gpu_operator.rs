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

/// Where an object the GPU Operator creates lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// In the operator's own namespace (`n.operatorNamespace`, the chart's release namespace).
    OperatorNamespace,
    /// Cluster-scoped.
    Cluster,
}

/// One object the pinned GPU Operator (chart or operator) creates by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owned {
    pub kind: &'static str,
    pub name: &'static str,
    pub scope: Scope,
    /// The upstream file that creates it (NVIDIA/gpu-operator at v26.7.0).
    pub from: &'static str,
    /// The chart value that keeps the chart from creating it, when gpuplan's values may set it (`clusterPolicy.deployCR`).
    pub unless_value: Option<(&'static str, bool)>,
}

const fn owned(kind: &'static str, name: &'static str, scope: Scope, from: &'static str) -> Owned {
    Owned { kind, name, scope, from, unless_value: None }
}

use Scope::{Cluster, OperatorNamespace};

/// What NVIDIA/gpu-operator v26.7.0 creates by default (read at tag v26.7.0 with the `fetch` tool), so that gpuplan
/// never emits a rival: two writers of one object fight, and the operator wins every reconcile. The operator's
/// objects come from `assets/state-*/` and are written by `controllers/object_controls.go`, which *replaces* an
/// existing object of the same name (`ServiceMonitor`: Get, then `Update` with the asset's fields, dropping every
/// label and field another writer set) and *deletes* it when its state is disabled; the chart's from
/// `deployments/gpu-operator/templates/`. Only the operands gpuplan's ClusterPolicy can enable are listed (no
/// sandbox, vGPU, Kata, CC or OpenShift objects), plus the chart's own objects.
pub const OWNED: &[Owned] = &[
    // v26.7.0 `deployments/gpu-operator/values.yaml` `dcgmExporter.serviceMonitor.enabled: true` (commit 2e241753f,
    // "dcgm-exporter: enable ServiceMonitor by default and skip gracefully when Prometheus CRD is absent").
    owned("ServiceMonitor", "nvidia-dcgm-exporter", OperatorNamespace, "assets/state-dcgm-exporter/0500_service_monitor.yaml"),
    owned("Service", "nvidia-dcgm-exporter", OperatorNamespace, "assets/state-dcgm-exporter/0400_service.yaml"),
    owned("DaemonSet", "nvidia-dcgm-exporter", OperatorNamespace, "assets/state-dcgm-exporter/0800_daemonset.yaml"),
    owned("ServiceMonitor", "gpu-operator", OperatorNamespace, "assets/state-operator-metrics/0300_service_monitor.yaml"),
    owned("Service", "gpu-operator", OperatorNamespace, "assets/state-operator-metrics/0200_service.yaml"),
    owned("ServiceMonitor", "nvidia-node-status-exporter", OperatorNamespace, "assets/state-node-status-exporter/0600_service_monitor.yaml"),
    owned("Service", "nvidia-node-status-exporter", OperatorNamespace, "assets/state-node-status-exporter/0500_service.yaml"),
    owned("DaemonSet", "nvidia-node-status-exporter", OperatorNamespace, "assets/state-node-status-exporter/0700_daemonset.yaml"),
    owned("DaemonSet", "gpu-feature-discovery", OperatorNamespace, "assets/gpu-feature-discovery/0500_daemonset.yaml"),
    owned("DaemonSet", "nvidia-device-plugin-daemonset", OperatorNamespace, "assets/state-device-plugin/0500_daemonset.yaml"),
    owned("ConfigMap", "nvidia-device-plugin-entrypoint", OperatorNamespace, "assets/state-device-plugin/0400_configmap.yaml"),
    owned("DaemonSet", "nvidia-operator-validator", OperatorNamespace, "assets/state-operator-validation/0500_daemonset.yaml"),
    owned("DaemonSet", "nvidia-mig-manager", OperatorNamespace, "assets/state-mig-manager/0600_daemonset.yaml"),
    owned("ConfigMap", MIG_PARTED_CONFIG_MAP, OperatorNamespace, "assets/state-mig-manager/0400_configmap.yaml"),
    owned("ConfigMap", "default-gpu-clients", OperatorNamespace, "assets/state-mig-manager/0410_configmap.yaml"),
    owned("ConfigMap", "nvidia-mig-manager-entrypoint", OperatorNamespace, "assets/state-mig-manager/0420_configmap.yaml"),
    owned("DaemonSet", "nvidia-container-toolkit-daemonset", OperatorNamespace, "assets/state-container-toolkit/0500_daemonset.yaml"),
    owned("ConfigMap", "nvidia-container-toolkit-entrypoint", OperatorNamespace, "assets/state-container-toolkit/0400_configmap.yaml"),
    owned("DaemonSet", "nvidia-driver-daemonset", OperatorNamespace, "assets/state-driver/0500_daemonset.yaml"),
    owned("ConfigMap", "nvidia-driver-startup-probe", OperatorNamespace, "assets/state-driver/0400_configmap.yaml"),
    owned("RuntimeClass", "nvidia", Cluster, "assets/pre-requisites/0200_runtime_class.yaml"),
    owned("Deployment", "gpu-operator", OperatorNamespace, "deployments/gpu-operator/templates/operator.yaml"),
    owned("ServiceAccount", "gpu-operator", OperatorNamespace, "deployments/gpu-operator/templates/serviceaccount.yaml"),
    owned("Role", "gpu-operator", OperatorNamespace, "deployments/gpu-operator/templates/role.yaml"),
    owned("RoleBinding", "gpu-operator", OperatorNamespace, "deployments/gpu-operator/templates/rolebinding.yaml"),
    owned("ClusterRole", "gpu-operator", Cluster, "deployments/gpu-operator/templates/clusterrole.yaml"),
    owned("ClusterRoleBinding", "gpu-operator", Cluster, "deployments/gpu-operator/templates/clusterrolebinding.yaml"),
    // The chart renders it only `{{- if .Values.clusterPolicy.deployCR }}` (default true): gpuplan's own
    // ClusterPolicy goes with values that set it false.
    Owned {
        kind: "ClusterPolicy",
        name: CLUSTER_POLICY_NAME,
        scope: Cluster,
        from: "deployments/gpu-operator/templates/clusterpolicy.yaml",
        unless_value: Some(("/clusterPolicy/deployCR", false)),
    },
];

/// The row of [`OWNED`] for an object of `kind`, `namespace` (None: cluster-scoped) and `name`, when the GPU Operator
/// runs in `operator_namespace`; `values` are the chart values gpuplan writes, which may switch a chart object off
/// (None: the install's values are not gpuplan's, and a row such a value switches off is not reported: the user's
/// values may do it, as `gpu-operator values=#false` says).
pub fn owner(kind: &str, namespace: Option<&str>, name: &str, operator_namespace: &str, values: Option<&serde_json::Value>) -> Option<&'static Owned> {
    OWNED.iter().find(|o| {
        let scoped = match o.scope {
            OperatorNamespace => namespace == Some(operator_namespace),
            Cluster => namespace.is_none(),
        };
        let switched_off = o.unless_value.is_some_and(|(pointer, off)| values.is_none_or(|v| v.pointer(pointer).and_then(serde_json::Value::as_bool) == Some(off)));
        o.kind == kind && o.name == name && scoped && !switched_off
    })
}
