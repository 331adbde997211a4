//! The Helm values gpuplan hands the add-on charts (`charts::add_ons`, which cites what each chart creates and
//! reads), and the check that every accelerator NodePool's nodes are reachable by their DaemonSets.
//!
//! Every taint a pool puts on its nodes must be tolerated by each DaemonSet its devices need, and the charts'
//! default tolerations do not include gpuplan's pool taints. So gpuplan writes, per cluster, one ConfigMap of Helm
//! values per chart the cluster's pools need (the [`crate::charts::add_ons::VALUES_KEY`] file; a Flux HelmRelease
//! reads it with `valuesFrom`, `helm install -f` reads the extracted file),
//! with tolerations for every pool taint. The GPU Operator's values also say who owns the ClusterPolicy: with
//! `gpu-operator manage=#true` (the default) gpuplan writes it and the values set `clusterPolicy.deployCR: false`,
//! so the chart does not create a second `cluster-policy`; with `manage=#false` the chart creates it from the
//! values' `daemonsets.tolerations` and `dcgmExporter.serviceMonitor` (gpuplan never writes an object the operator
//! creates itself: `charts::gpu_operator::OWNED`). With `values=#false` gpuplan writes no values and assumes the chart defaults.
//! [`unreachable`] checks the rendered objects (a `--templates` override included) against the nodes each pool
//! launches: a pool whose node would never get its device plugin is a compile error (E0184).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::catalog::AcceleratorKind;
use crate::charts::add_ons::{AddOn, Device, ADD_ONS, EFA_VALUES, GPU_OPERATOR_VALUES, NEURON_VALUES, OPERAND_DEFAULTS, spell_toleration, values_add_on};
use crate::charts::instance_types::TypeList;
use crate::profile::Sharing;
use crate::render::Manifest;
// The same toleration rules the simulation applies to pods (k8s.io/api core/v1 `ToleratesTaint`).
use crate::simulate::requirements::{Taint, Toleration};
use crate::solve::PoolPlan;


/// A toleration as the API spells it, read from a rendered object.
fn toleration_from_json(v: &Value) -> Toleration {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    Toleration { key: s("key"), operator: s("operator"), value: s("value"), effect: s("effect") }
}

/// The API's spelling of a toleration (empty fields left out; an empty operator is `Equal`).
pub fn toleration_json(t: &Toleration) -> Value {
    spell_toleration(&json!({ "key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect }))
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
pub fn tolerated_by_every_daemon(taint: &Taint) -> bool {
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
/// pool taint, and for the GPU Operator who owns the ClusterPolicy and how its dcgm-exporter ServiceMonitor is
/// labelled (`monitoring_labels`, what Prometheus selects it by).
pub fn values(pools: &[PoolPlan], manage_cluster_policy: bool, gpu_operator_values: bool, monitoring_labels: &BTreeMap<String, String>) -> BTreeMap<&'static str, Value> {
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
            v["dcgmExporter"] = json!({ "serviceMonitor": dcgm_service_monitor(monitoring_labels) });
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

/// The chart's `dcgmExporter.serviceMonitor`, which the chart copies into its ClusterPolicy and the operator turns
/// into ServiceMonitor `nvidia-dcgm-exporter` in its namespace (NVIDIA/gpu-operator v26.7.0
/// `deployments/gpu-operator/templates/clusterpolicy.yaml` `serviceMonitor: {{ toYaml .Values.dcgmExporter.serviceMonitor }}`,
/// `controllers/object_controls.go` `ServiceMonitor`; enabled by default since commit 2e241753f). The operator
/// replaces that object on every reconcile, so gpuplan configures it rather than writing one of its own: the same
/// fields as the managed ClusterPolicy's (`templates/clusterpolicy.yaml.j2`). `honorLabels` keeps dcgm-exporter's
/// `pod`/`namespace` labels (those of the workload using the GPU), which the HPA rules and workload alerts read.
pub fn dcgm_service_monitor(monitoring_labels: &BTreeMap<String, String>) -> Value {
    json!({ "enabled": true, "interval": "30s", "honorLabels": true, "additionalLabels": monitoring_labels })
}

/// The Neuron device plugin runs only on the chart's `neuronInstances` (a required node affinity on the instance type),
/// whose default lists no trn2: a Trainium2 node would never get its devices. When a Neuron pool may launch a type the
/// default lacks, the values list the chart's types and then the pools' (None: the default covers every one).
fn neuron_instances(pools: &[&PoolPlan]) -> Option<Vec<String>> {
    let chart = TypeList::NeuronInstances.chart_default();
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

/// An add-on's tolerations as rendered (in `objects`, the cluster's), or its chart's defaults.
pub fn effective_tolerations(add_on: &AddOn, objects: &[&Value]) -> (Vec<Toleration>, String) {
    let (written, from) = crate::charts::add_ons::tolerations(add_on, objects);
    (written.iter().map(toleration_from_json).collect(), from)
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
