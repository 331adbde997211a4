//! The add-on DaemonSets that make an accelerator node's devices schedulable, as their charts create them, and
//! where each reads its tolerations.
//!
//! A node's GPUs, Neuron devices or EFA interfaces become allocatable only when a device plugin runs on it; until
//! then its NodeClaim never initializes (Karpenter waits for the requested extended resources,
//! kubernetes-sigs/karpenter `pkg/controllers/nodeclaim/lifecycle/initialization.go`), no pod lands there and,
//! on a `expireAfter: Never` pool, nothing ever removes it. For NVIDIA the chain is longer: the Node Feature
//! Discovery worker (a subchart of the GPU Operator) labels the node `feature.node.kubernetes.io/pci-10de.present`,
//! the operator then labels it `nvidia.com/gpu.deploy.*`, and only then do its operands (validator, device plugin,
//! GPU feature discovery, DCGM exporter, MIG manager) start. Every taint a pool puts on its nodes must therefore be
//! tolerated by each of those DaemonSets. Their default tolerations do not include gpuplan's pool taints:
//!
//! - NVIDIA/gpu-operator v26.7.0 `deployments/gpu-operator/values.yaml`: `node-feature-discovery.worker.tolerations`
//!   = control-plane and `nvidia.com/gpu`; `daemonsets.tolerations` (the operands, via the ClusterPolicy the chart
//!   creates) = `nvidia.com/gpu`;
//! - aws-neuron/neuron-helm-charts `charts/neuron-helm-chart/values.yaml`: `devicePlugin.tolerations` =
//!   `CriticalAddonsOnly`, `aws.amazon.com/neuron`;
//! - aws/eks-charts `stable/aws-efa-k8s-device-plugin/values.yaml` (v0.5.31): `tolerations: []`.
//!
//! gpuplan hands each chart its tolerations in a ConfigMap of Helm values (the [`VALUES_KEY`] file), and the GPU
//! Operator's operands read theirs from the ClusterPolicy: [`tolerations`] reads them back from the rendered
//! objects (a `--templates` override included), else the chart's defaults.

use serde_json::{Value, json};

use super::gpu_operator::{DEPLOY_DEVICE_PLUGIN_LABEL, DEPLOY_MIG_MANAGER_LABEL};
use super::instance_types::TypeList;

/// The key of the Helm values file in each values ConfigMap.
pub const VALUES_KEY: &str = "values.yaml";
pub const GPU_OPERATOR_VALUES: &str = "gpuplan-gpu-operator-values";
pub const NEURON_VALUES: &str = "gpuplan-neuron-values";
pub const EFA_VALUES: &str = "gpuplan-efa-device-plugin-values";
/// Where the Neuron and EFA device plugins' charts are installed (their READMEs install into kube-system).
pub const DEVICE_PLUGIN_NAMESPACE: &str = "kube-system";

/// What a node needs an add-on for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Device {
    Nvidia,
    /// NVIDIA with a MIG config: the MIG manager too.
    NvidiaMig,
    Neuron,
    Efa,
}

/// Where a DaemonSet's tolerations come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A path in the Helm values of a chart, handed over in the ConfigMap of this name.
    Values { config_map: &'static str, path: &'static [&'static str] },
    /// The GPU Operator's operands: ClusterPolicy `spec.daemonsets.tolerations` (gpuplan's, or the chart's from its
    /// `daemonsets.tolerations` value).
    ClusterPolicy,
}

/// One DaemonSet an accelerator node needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddOn {
    /// The DaemonSet's name as its chart or operator creates it.
    pub daemonset: &'static str,
    pub chart: &'static str,
    pub needed_for: Device,
    pub source: Source,
    /// The chart's default tolerations, (key, operator, effect), as its values.yaml at the cited version sets them.
    pub defaults: &'static [(&'static str, &'static str, &'static str)],
    /// GPU Operator operands: the node label that selects it (`nvidia.com/gpu.deploy.<operand>`); a node labelled
    /// "false" does not run it and does not need it (NVIDIA/gpu-operator v26.7.0 controllers/state_manager.go).
    pub deploy_label: Option<&'static str>,
    /// The chart's default container requests, (resource, quantity): what the DaemonSet takes from every node it runs
    /// on before any workload does (`gpuplan simulate` counts it: `charts::daemon_sets`).
    pub requests: &'static [(&'static str, &'static str)],
    /// The instance types the chart's required node affinity admits, when it has one.
    pub instance_types: Option<TypeList>,
}

const GPU_OPERATOR_CHART: &str = "NVIDIA GPU Operator v26.7.0 (deployments/gpu-operator/values.yaml)";
/// The operands' default tolerations (the chart's `daemonsets.tolerations`).
pub const OPERAND_DEFAULTS: &[(&str, &str, &str)] = &[("nvidia.com/gpu", "Exists", "NoSchedule")];

/// A GPU Operator operand: tolerations from the ClusterPolicy, selected by its deploy label.
const fn operand(daemonset: &'static str, needed_for: Device, deploy_label: &'static str) -> AddOn {
    // The operands' `resources` are `{}` in the chart's values (devicePlugin, gfd, dcgmExporter, migManager,
    // validator): no requests.
    AddOn { daemonset, chart: GPU_OPERATOR_CHART, needed_for, source: Source::ClusterPolicy, defaults: OPERAND_DEFAULTS, deploy_label: Some(deploy_label), requests: &[], instance_types: None }
}

/// Every add-on gpuplan knows, in the order a node needs them.
pub const ADD_ONS: &[AddOn] = &[
    AddOn {
        daemonset: "gpu-operator-node-feature-discovery-worker",
        chart: GPU_OPERATOR_CHART,
        needed_for: Device::Nvidia,
        source: Source::Values { config_map: GPU_OPERATOR_VALUES, path: &["node-feature-discovery", "worker", "tolerations"] },
        defaults: &[("node-role.kubernetes.io/control-plane", "Equal", "NoSchedule"), ("nvidia.com/gpu", "Exists", "NoSchedule")],
        deploy_label: None,
        // deployments/gpu-operator/charts/node-feature-discovery/values.yaml `worker.resources.requests` (the
        // subchart the operator's chart bundles, v0.19.0); its limit (memory 512Mi) does not default a request.
        requests: &[("cpu", "5m"), ("memory", "64Mi")],
        instance_types: None,
    },
    operand("nvidia-operator-validator", Device::Nvidia, "nvidia.com/gpu.deploy.operator-validator"),
    operand("nvidia-device-plugin-daemonset", Device::Nvidia, DEPLOY_DEVICE_PLUGIN_LABEL),
    operand("gpu-feature-discovery", Device::Nvidia, "nvidia.com/gpu.deploy.gpu-feature-discovery"),
    operand("nvidia-dcgm-exporter", Device::Nvidia, "nvidia.com/gpu.deploy.dcgm-exporter"),
    operand("nvidia-mig-manager", Device::NvidiaMig, DEPLOY_MIG_MANAGER_LABEL),
    AddOn {
        daemonset: "neuron-device-plugin",
        chart: "aws-neuron/neuron-helm-charts neuron-helm-chart (charts/neuron-helm-chart/values.yaml)",
        needed_for: Device::Neuron,
        source: Source::Values { config_map: NEURON_VALUES, path: &["devicePlugin", "tolerations"] },
        defaults: &[("CriticalAddonsOnly", "Exists", ""), ("aws.amazon.com/neuron", "Exists", "NoSchedule")],
        deploy_label: None,
        // templates/device-plugin-daemonset.yaml sets no resources.
        requests: &[],
        instance_types: Some(TypeList::NeuronInstances),
    },
    AddOn {
        daemonset: "aws-efa-k8s-device-plugin",
        chart: "aws/eks-charts aws-efa-k8s-device-plugin v0.5.31 (stable/aws-efa-k8s-device-plugin/values.yaml)",
        needed_for: Device::Efa,
        source: Source::Values { config_map: EFA_VALUES, path: &["tolerations"] },
        defaults: &[],
        deploy_label: None,
        // values.yaml `resources.requests`.
        requests: &[("cpu", "10m"), ("memory", "20Mi")],
        instance_types: Some(TypeList::EfaSupported),
    },
];

/// The add-on whose chart reads the Helm values in the ConfigMap of this name.
pub fn values_add_on(config_map: &str) -> Option<&'static AddOn> {
    ADD_ONS.iter().find(|a| matches!(a.source, Source::Values { config_map: c, .. } if c == config_map))
}

/// Whether a ConfigMap of this name carries gpuplan's Helm values for an add-on chart.
pub fn is_values_config_map(name: &str) -> bool {
    values_add_on(name).is_some()
}

/// The chart a generated values ConfigMap is for, from its out/ path (`<cluster>/configmap-<name>.yaml`).
pub fn chart_of_values_file(path: &std::path::Path) -> Option<&'static str> {
    values_add_on(path.file_stem()?.to_str()?.strip_prefix("configmap-")?).map(|a| a.chart)
}

/// The Helm values gpuplan rendered for a chart (the ConfigMap `config_map`'s [`VALUES_KEY`]), if any.
pub fn rendered_values(objects: &[&Value], config_map: &str) -> Option<Value> {
    let m = objects.iter().find(|m| m["kind"] == "ConfigMap" && m["metadata"]["name"] == config_map)?;
    serde_saphyr::from_str(m["data"][VALUES_KEY].as_str()?).ok()
}

/// An add-on's tolerations as rendered (in `objects`, the cluster's), each as written, or its chart's defaults; and
/// where they were read: a rendered object, or the chart's defaults.
pub fn tolerations(add_on: &AddOn, objects: &[&Value]) -> (Vec<Value>, String) {
    let values_list = |config_map: &str, path: &[&str]| -> Option<(Value, String)> {
        let values = rendered_values(objects, config_map)?;
        let list = path.iter().try_fold(&values, |v, k| v.get(*k))?;
        Some((list.clone(), format!("ConfigMap {config_map} ({VALUES_KEY}: {})", path.join("."))))
    };
    let rendered = match add_on.source {
        Source::Values { config_map, path } => values_list(config_map, path),
        // gpuplan's ClusterPolicy, else the one the chart makes from the values' `daemonsets.tolerations`.
        Source::ClusterPolicy => objects
            .iter()
            .find(|m| m["kind"] == "ClusterPolicy")
            .map(|m| (m["spec"]["daemonsets"]["tolerations"].clone(), "ClusterPolicy spec.daemonsets.tolerations".to_string()))
            .or_else(|| values_list(GPU_OPERATOR_VALUES, &["daemonsets", "tolerations"])),
    };
    match rendered {
        Some((list, from)) => (list.as_array().into_iter().flatten().cloned().collect(), from),
        None => (
            add_on.defaults.iter().map(|(k, op, e)| json!({ "key": k, "operator": op, "effect": e })).collect(),
            format!("the chart's default tolerations, {}", add_on.chart),
        ),
    }
}

/// The API's spelling of a toleration as written (a field that is not a string counts as empty): empty fields
/// left out; an empty operator is `Equal`.
pub fn spell_toleration(written: &Value) -> Value {
    let field = |k: &str| written.get(k).and_then(Value::as_str).unwrap_or("");
    let operator = field("operator");
    let mut out = json!({ "operator": if operator.is_empty() { "Equal" } else { operator } });
    for k in ["key", "value", "effect"] {
        if !field(k).is_empty() {
            out[k] = json!(field(k));
        }
    }
    out
}
