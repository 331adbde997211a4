//! The add-on DaemonSets that make an accelerator node's devices schedulable, the Helm values gpuplan hands their
//! charts, and the check that every accelerator NodePool's nodes are reachable by them.
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
//! So gpuplan writes, per cluster, one ConfigMap of Helm values per chart the cluster's pools need (the
//! [`VALUES_KEY`] file; a Flux HelmRelease reads it with `valuesFrom`, `helm install -f` reads the extracted file),
//! with tolerations for every pool taint. The GPU Operator's values also say who owns the ClusterPolicy: with
//! `gpu-operator manage=#true` (the default) gpuplan writes it and the values set `clusterPolicy.deployCR: false`,
//! so the chart does not create a second `cluster-policy`; with `manage=#false` the chart creates it from the
//! values' `daemonsets.tolerations`. With `values=#false` gpuplan writes no values and assumes the chart defaults.
//! [`unreachable`] checks the rendered objects (a `--templates` override included) against the nodes each pool
//! launches: a pool whose node would never get its device plugin is a compile error (E0184).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::catalog::AcceleratorKind;
use crate::profile::Sharing;
use crate::render::Manifest;
// The same toleration rules the simulation applies to pods (k8s.io/api core/v1 `ToleratesTaint`).
use crate::simulate::requirements::{Taint, Toleration};
use crate::solve::PoolPlan;

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
    /// on before any workload does (`gpuplan simulate` counts it, [`super::addon_daemonsets`]).
    pub requests: &'static [(&'static str, &'static str)],
    /// The instance types the chart's required node affinity admits, when it has one.
    pub instance_types: Option<super::addon_daemonsets::TypeList>,
}

const GPU_OPERATOR_CHART: &str = "NVIDIA GPU Operator v26.7.0 (deployments/gpu-operator/values.yaml)";
const OPERAND_DEFAULTS: &[(&str, &str, &str)] = &[("nvidia.com/gpu", "Exists", "NoSchedule")];

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
    operand("nvidia-device-plugin-daemonset", Device::Nvidia, crate::solve::DEPLOY_DEVICE_PLUGIN_LABEL),
    operand("gpu-feature-discovery", Device::Nvidia, "nvidia.com/gpu.deploy.gpu-feature-discovery"),
    operand("nvidia-dcgm-exporter", Device::Nvidia, "nvidia.com/gpu.deploy.dcgm-exporter"),
    operand("nvidia-mig-manager", Device::NvidiaMig, crate::solve::DEPLOY_MIG_MANAGER_LABEL),
    AddOn {
        daemonset: "neuron-device-plugin",
        chart: "aws-neuron/neuron-helm-charts neuron-helm-chart (charts/neuron-helm-chart/values.yaml)",
        needed_for: Device::Neuron,
        source: Source::Values { config_map: NEURON_VALUES, path: &["devicePlugin", "tolerations"] },
        defaults: &[("CriticalAddonsOnly", "Exists", ""), ("aws.amazon.com/neuron", "Exists", "NoSchedule")],
        deploy_label: None,
        // templates/device-plugin-daemonset.yaml sets no resources.
        requests: &[],
        instance_types: Some(super::addon_daemonsets::TypeList::NeuronInstances),
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
        instance_types: Some(super::addon_daemonsets::TypeList::EfaSupported),
    },
];

/// The add-on whose chart reads the Helm values in the ConfigMap of this name.
fn values_add_on(config_map: &str) -> Option<&'static AddOn> {
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

/// A toleration as the API spells it, read from a rendered object.
fn toleration_from_json(v: &Value) -> Toleration {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    Toleration { key: s("key"), operator: s("operator"), value: s("value"), effect: s("effect") }
}

/// The API's spelling of a toleration (empty fields left out; an empty operator is `Equal`).
pub fn toleration_json(t: &Toleration) -> Value {
    let mut out = json!({ "operator": if t.operator.is_empty() { "Equal" } else { &t.operator } });
    for (k, v) in [("key", &t.key), ("value", &t.value), ("effect", &t.effect)] {
        if !v.is_empty() {
            out[k] = json!(v);
        }
    }
    out
}

fn toleration(key: &str, operator: &str, effect: &str) -> Toleration {
    Toleration { key: key.into(), operator: operator.into(), value: String::new(), effect: effect.into() }
}

/// What a pool's node needs: the add-ons for its devices.
pub fn devices(pool: &PoolPlan) -> BTreeSet<Device> {
    let mut out = BTreeSet::new();
    // EKS Auto Mode ships the NVIDIA and Neuron drivers and device plugins ("not visible as a daemon set within your
    // cluster": EKS User Guide, "Deploy an accelerated workload") and runs the EFA device plugin itself: the EFA chart
    // keeps its DaemonSet off Auto Mode nodes (aws/eks-charts `stable/aws-efa-k8s-device-plugin/templates/daemonset.yaml`,
    // `eks.amazonaws.com/compute-type NotIn [auto]`, since 2ce9790). So no add-on is installed and no values written.
    if pool.auto_mode {
        return out;
    }
    match pool.accelerator {
        AcceleratorKind::Nvidia => {
            out.insert(Device::Nvidia);
            if matches!(pool.sharing, Some(Sharing::Mig { .. })) {
                out.insert(Device::NvidiaMig);
            }
        }
        AcceleratorKind::Neuron => {
            out.insert(Device::Neuron);
        }
        _ => {}
    }
    if pool.efa {
        out.insert(Device::Efa);
    }
    out
}

/// The DaemonSet controller adds these to every daemon pod (kubernetes `pkg/controller/daemon/util/daemonset_util.go`
/// `AddOrUpdateDaemonPodTolerations`), so a node carrying them still runs daemons.
fn tolerated_by_every_daemon(taint: &Taint) -> bool {
    const NO_EXECUTE: &[&str] = &["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"];
    const NO_SCHEDULE: &[&str] = &[
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure",
        "node.kubernetes.io/unschedulable",
    ];
    (taint.effect == "NoExecute" && NO_EXECUTE.contains(&taint.key.as_str())) || (taint.effect == "NoSchedule" && NO_SCHEDULE.contains(&taint.key.as_str()))
}

/// The tolerations that cover every taint of `pools` (key Exists, per effect), after `base`.
pub fn tolerations_for(base: &[(&str, &str, &str)], pools: &[&PoolPlan]) -> Vec<Value> {
    let mut out: Vec<Toleration> = base.iter().map(|(k, op, e)| toleration(k, op, e)).collect();
    let taints: BTreeSet<(&str, &str)> = pools.iter().flat_map(|p| p.taints.iter().map(|t| (t.key.as_str(), t.effect.as_str()))).collect();
    for (key, effect) in taints {
        let taint = Taint { key: key.into(), value: String::new(), effect: effect.into() };
        // Exists on the key: a pool taint's value names the pool, and one toleration serves every pool.
        if !out.iter().any(|t| t.operator == "Exists" && t.tolerates(&taint)) {
            out.push(toleration(key, "Exists", effect));
        }
    }
    out.iter().map(toleration_json).collect()
}

/// The Helm values gpuplan hands each chart the cluster's pools need, by ConfigMap name: tolerations for every
/// pool taint, and for the GPU Operator who owns the ClusterPolicy.
pub fn values(pools: &[PoolPlan], manage_cluster_policy: bool, gpu_operator_values: bool) -> BTreeMap<&'static str, Value> {
    let needing = |d: Device| -> Vec<&PoolPlan> { pools.iter().filter(|p| devices(p).contains(&d)).collect() };
    let defaults = |config_map: &str| values_add_on(config_map).map_or(&[][..], |a| a.defaults);
    let mut out = BTreeMap::new();
    let nvidia = needing(Device::Nvidia);
    if !nvidia.is_empty() && gpu_operator_values {
        let mut v = json!({
            "node-feature-discovery": { "worker": { "tolerations": tolerations_for(defaults(GPU_OPERATOR_VALUES), &nvidia) } },
        });
        if manage_cluster_policy {
            // gpuplan's ClusterPolicy is the one the operator reads; the chart must not create its own.
            v["clusterPolicy"] = json!({ "deployCR": false });
        } else {
            v["daemonsets"] = json!({ "tolerations": tolerations_for(OPERAND_DEFAULTS, &nvidia) });
        }
        out.insert(GPU_OPERATOR_VALUES, v);
    }
    let neuron = needing(Device::Neuron);
    if !neuron.is_empty() {
        let mut v = json!({ "devicePlugin": { "tolerations": tolerations_for(defaults(NEURON_VALUES), &neuron) } });
        if let Some(types) = neuron_instances(&neuron) {
            v["neuronInstances"] = json!(types);
        }
        out.insert(NEURON_VALUES, v);
    }
    let efa = needing(Device::Efa);
    if !efa.is_empty() {
        out.insert(EFA_VALUES, json!({ "tolerations": tolerations_for(defaults(EFA_VALUES), &efa) }));
    }
    out
}

/// The Neuron device plugin runs only on the chart's `neuronInstances` (a required node affinity on the instance type),
/// whose default lists no trn2: a Trainium2 node would never get its devices. When a Neuron pool may launch a type the
/// default lacks, the values list the chart's types and then the pools' (None: the default covers every one).
fn neuron_instances(pools: &[&PoolPlan]) -> Option<Vec<String>> {
    let chart = super::addon_daemonsets::TypeList::NeuronInstances.chart_default();
    let missing: BTreeSet<&str> = pools.iter().flat_map(|p| p.candidates.iter().map(|c| c.name.as_str())).filter(|t| !chart.contains(t)).collect();
    (!missing.is_empty()).then(|| chart.into_iter().chain(missing).map(str::to_string).collect())
}

/// Add-ons that would never run on a pool's nodes, kept off by the same taint and configured in the same place
/// (one fix for all of them).
#[derive(Debug, Clone, PartialEq)]
pub struct Unreachable {
    pub nodepool: String,
    /// DaemonSet names, in the order a node needs them.
    pub daemonsets: Vec<&'static str>,
    pub taint: Taint,
    /// Where the add-on's tolerations were read: a rendered object, or the chart's defaults.
    pub from: String,
}

impl Unreachable {
    /// "DaemonSet a does" or "DaemonSets a, b do", for messages.
    pub fn subject(&self) -> String {
        match self.daemonsets.as_slice() {
            [one] => format!("DaemonSet {one} does"),
            many => format!("DaemonSets {} do", many.join(", ")),
        }
    }
}

/// One add-on's DaemonSet as the cluster's rendered objects configure it.
#[derive(Debug, Clone, PartialEq)]
pub struct Daemon {
    pub add_on: AddOn,
    pub tolerations: Vec<Toleration>,
    /// Where the tolerations were read: a rendered object, or the chart's defaults.
    pub from: String,
}

/// What a daemon sees of a node a NodePool launches: its labels and its NoSchedule/NoExecute taints.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeShape {
    pub nodepool: String,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
}

/// The node of a rendered NodePool once registered: the template's labels and `karpenter.sh/nodepool`; on NVIDIA
/// nodes the GPU Operator's `nvidia.com/gpu.deploy.<operand>=true` state labels, unless the template presets them
/// (NVIDIA/gpu-operator v26.7.0 controllers/state_manager.go `addGPUStateLabels`); its taints and startup taints (a
/// daemon that removes a startup taint must tolerate it too).
pub fn node_of(np: &Value) -> NodeShape {
    let name = np["metadata"]["name"].as_str().unwrap_or_default().to_string();
    let template = &np["spec"]["template"];
    let mut labels: BTreeMap<String, String> =
        template["metadata"]["labels"].as_object().into_iter().flatten().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect();
    labels.insert("karpenter.sh/nodepool".into(), name.clone());
    if np["spec"]["limits"].get("nvidia.com/gpu").is_some() {
        for label in ADD_ONS.iter().filter_map(|a| a.deploy_label) {
            labels.entry(label.to_string()).or_insert_with(|| "true".into());
        }
    }
    let taints = ["taints", "startupTaints"]
        .iter()
        .flat_map(|k| template["spec"][*k].as_array().into_iter().flatten())
        .map(|t| Taint {
            key: t["key"].as_str().unwrap_or_default().into(),
            value: t["value"].as_str().unwrap_or_default().into(),
            effect: t["effect"].as_str().unwrap_or_default().into(),
        })
        .collect();
    NodeShape { nodepool: name, labels, taints }
}

impl Daemon {
    /// Whether its nodeSelector picks the node: GPU Operator operands run only where their deploy label is "true".
    pub fn selects(&self, node: &NodeShape) -> bool {
        self.add_on.deploy_label.is_none_or(|l| node.labels.get(l).is_some_and(|v| v == "true"))
    }

    /// The first taint that keeps it off the node, as the DaemonSet controller decides (kubernetes
    /// pkg/controller/daemon `predicates`: only NoSchedule and NoExecute taints count, and every daemon pod also
    /// tolerates the taints `AddOrUpdateDaemonPodTolerations` adds).
    pub fn blocking_taint<'n>(&self, node: &'n NodeShape) -> Option<&'n Taint> {
        node.taints
            .iter()
            .filter(|t| (t.effect == "NoSchedule" || t.effect == "NoExecute") && !tolerated_by_every_daemon(t))
            .find(|t| !self.tolerations.iter().any(|x| x.tolerates(t)))
    }

    /// Whether the DaemonSet controller runs its pod on the node.
    pub fn runs_on(&self, node: &NodeShape) -> bool {
        self.selects(node) && self.blocking_taint(node).is_none()
    }
}

/// Every add-on's DaemonSet with the tolerations the cluster's rendered objects give it (values ConfigMaps,
/// ClusterPolicy), or its chart's defaults where none was rendered.
pub fn daemons(manifests: &[Manifest]) -> Vec<Daemon> {
    let objects: Vec<&Value> = manifests.iter().map(|m| &m.object).collect();
    ADD_ONS
        .iter()
        .map(|add_on| {
            let (tolerations, from) = effective_tolerations(add_on, &objects);
            Daemon { add_on: *add_on, tolerations, from }
        })
        .collect()
}

/// Every (pool, add-on) pair whose DaemonSet would not tolerate the pool's node. `pools` are the cluster's plans,
/// used for what each NodePool's node needs; the node itself comes from the rendered NodePool. An operand the node
/// opts out of by label (Bottlerocket's host device plugin) is not needed there.
pub fn unreachable(pools: &[PoolPlan], manifests: &[Manifest]) -> Vec<Unreachable> {
    let daemons = daemons(manifests);
    let mut out: Vec<Unreachable> = Vec::new();
    for np in manifests.iter().filter(|m| m.kind() == "NodePool") {
        let node = node_of(&np.object);
        let Some(pool) = pools.iter().find(|p| p.name == node.nodepool) else { continue };
        let needs = devices(pool);
        for d in daemons.iter().filter(|d| needs.contains(&d.add_on.needed_for) && d.selects(&node)) {
            let Some(taint) = d.blocking_taint(&node) else { continue };
            match out.iter_mut().find(|u| u.nodepool == node.nodepool && u.from == d.from && u.taint == *taint) {
                Some(u) => u.daemonsets.push(d.add_on.daemonset),
                None => out.push(Unreachable { nodepool: node.nodepool.clone(), daemonsets: vec![d.add_on.daemonset], taint: taint.clone(), from: d.from.clone() }),
            }
        }
    }
    out
}

/// The Helm values gpuplan rendered for a chart (the ConfigMap `config_map`'s [`VALUES_KEY`]), if any.
pub fn rendered_values(objects: &[&Value], config_map: &str) -> Option<Value> {
    let m = objects.iter().find(|m| m["kind"] == "ConfigMap" && m["metadata"]["name"] == config_map)?;
    serde_saphyr::from_str(m["data"][VALUES_KEY].as_str()?).ok()
}

/// An add-on's tolerations as rendered (in `objects`, the cluster's), or its chart's defaults.
pub fn effective_tolerations(add_on: &AddOn, objects: &[&Value]) -> (Vec<Toleration>, String) {
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
        Some((list, from)) => (list.as_array().into_iter().flatten().map(toleration_from_json).collect(), from),
        None => (add_on.defaults.iter().map(|(k, op, e)| toleration(k, op, e)).collect(), format!("the chart's default tolerations, {}", add_on.chart)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: &str, effect: &str) -> Taint {
        Taint { key: key.into(), value: value.into(), effect: effect.into() }
    }

    fn tol(key: &str, operator: &str, value: &str, effect: &str) -> Toleration {
        Toleration { key: key.into(), operator: operator.into(), value: value.into(), effect: effect.into() }
    }

    // k8s.io/api core/v1/toleration_test.go `TestTolerationToleratesTaint` cases, one behaviour each.
    #[test]
    fn exists_with_empty_key_tolerates_every_taint() {
        assert!(tol("", "Exists", "", "").tolerates(&taint("gpuplan.dev/pool", "x", "NoSchedule")));
    }

    #[test]
    fn exists_ignores_the_taint_value() {
        assert!(tol("gpuplan.dev/pool", "Exists", "", "NoSchedule").tolerates(&taint("gpuplan.dev/pool", "training", "NoSchedule")));
    }

    #[test]
    fn equal_compares_the_value_and_empty_operator_means_equal() {
        assert!(tol("workload", "Equal", "training", "NoSchedule").tolerates(&taint("workload", "training", "NoSchedule")));
        assert!(!tol("workload", "", "inference", "NoSchedule").tolerates(&taint("workload", "training", "NoSchedule")));
    }

    #[test]
    fn a_different_effect_is_not_tolerated_but_an_empty_one_matches_all() {
        assert!(!tol("nvidia.com/gpu", "Exists", "", "NoSchedule").tolerates(&taint("nvidia.com/gpu", "", "NoExecute")));
        assert!(tol("CriticalAddonsOnly", "Exists", "", "").tolerates(&taint("CriticalAddonsOnly", "", "NoExecute")));
    }

    #[test]
    fn an_unknown_operator_tolerates_nothing() {
        assert!(!tol("workload", "Gt", "1", "NoSchedule").tolerates(&taint("workload", "1", "NoSchedule")));
    }

    #[test]
    fn daemon_pods_tolerate_not_ready_and_unschedulable_nodes() {
        assert!(tolerated_by_every_daemon(&taint("node.kubernetes.io/not-ready", "", "NoExecute")));
        assert!(tolerated_by_every_daemon(&taint("node.kubernetes.io/unschedulable", "", "NoSchedule")));
        assert!(!tolerated_by_every_daemon(&taint("karpenter.sh/disrupted", "", "NoSchedule")));
    }
}
