//! The add-ons' DaemonSets as their charts create them, for `gpuplan simulate`: Karpenter subtracts the requests of
//! the DaemonSets that would run on a node before it fits pods (kubernetes-sigs/karpenter v1.14.1
//! `pkg/controllers/provisioning/scheduling/scheduler.go` `buildDaemonOverheadGroups`), so a simulation of a cluster
//! with the GPU Operator, the Neuron or the EFA device plugin must see their DaemonSets too.
//!
//! An add-on counts as installed when the cluster's objects configure it: the GPU Operator's when they hold a
//! ClusterPolicy or gpuplan's GPU Operator values ConfigMap, the Neuron and EFA device plugins' when they hold
//! gpuplan's values ConfigMap for that chart. Each DaemonSet carries what Karpenter reads of it, as the chart sets it
//! (the sources are cited at [`super::add_ons::ADD_ONS`]): tolerations (the rendered values' or ClusterPolicy's, else
//! the chart's defaults), the operands' `nvidia.com/gpu.deploy.<operand>` nodeSelector, the device plugins' required
//! node affinity on instance types (the values' list, else the chart's), and the chart's default requests.

use serde_json::{Value, json};

use super::add_ons::{
    ADD_ONS, AddOn, DEVICE_PLUGIN_NAMESPACE, GPU_OPERATOR_VALUES, Source, rendered_values, spell_toleration,
    tolerations,
};
use super::gpu_operator::NAMESPACE as GPU_OPERATOR_NAMESPACE;

/// The ConfigMap of Helm values that configures an add-on's chart.
fn values_config_map(add_on: &AddOn) -> &'static str {
    match add_on.source {
        Source::Values { config_map, .. } => config_map,
        Source::ClusterPolicy => GPU_OPERATOR_VALUES,
    }
}

/// Whether the cluster's objects configure the add-on's chart.
fn installed(add_on: &AddOn, objects: &[&Value]) -> bool {
    let config_map = values_config_map(add_on);
    let has_values = objects
        .iter()
        .any(|o| o["kind"] == "ConfigMap" && o["metadata"]["name"] == config_map);
    has_values
        || (config_map == GPU_OPERATOR_VALUES
            && objects.iter().any(|o| o["kind"] == "ClusterPolicy"))
}

/// The DaemonSets of the add-ons the cluster's objects (`objects`) configure, as apps/v1 objects.
pub fn daemon_set_objects(objects: &[&Value]) -> Vec<Value> {
    ADD_ONS
        .iter()
        .filter(|a| installed(a, objects))
        .map(|a| daemon_set(a, objects))
        .collect()
}

fn daemon_set(add_on: &AddOn, objects: &[&Value]) -> Value {
    let (written, from) = tolerations(add_on, objects);
    let namespace = if values_config_map(add_on) == GPU_OPERATOR_VALUES {
        GPU_OPERATOR_NAMESPACE
    } else {
        DEVICE_PLUGIN_NAMESPACE
    };
    let requests: serde_json::Map<String, Value> = add_on
        .requests
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let mut spec = json!({
        "tolerations": written.iter().map(spell_toleration).collect::<Vec<_>>(),
        "containers": [{ "name": add_on.daemonset, "image": add_on.chart, "resources": { "requests": requests } }],
    });
    if let Some(label) = add_on.deploy_label {
        spec["nodeSelector"] = json!({ label: "true" });
    }
    if let Some(list) = add_on.instance_types {
        let types = list.effective(rendered_values(objects, values_config_map(add_on)).as_ref());
        let term = json!({ "matchExpressions": [{ "key": "node.kubernetes.io/instance-type", "operator": "In", "values": types }] });
        spec["affinity"] = json!({ "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": { "nodeSelectorTerms": [term] } } });
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": { "name": add_on.daemonset, "namespace": namespace, "annotations": { "gpuplan.dev/tolerations-from": from } },
        "spec": {
            "selector": { "matchLabels": { "app.kubernetes.io/name": add_on.daemonset } },
            "template": { "metadata": { "labels": { "app.kubernetes.io/name": add_on.daemonset } }, "spec": spec },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::add_ons::{EFA_VALUES, NEURON_VALUES};
    use crate::charts::instance_types::{NEURON_INSTANCES, TypeList};

    fn config_map(name: &str, values: &str) -> Value {
        json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": name }, "data": { "values.yaml": values } })
    }

    fn names(objects: &[Value]) -> Vec<&str> {
        objects
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn no_add_on_configured_means_no_daemon_sets() {
        assert!(daemon_set_objects(&[&json!({ "kind": "NodePool" })]).is_empty());
    }

    #[test]
    fn a_cluster_policy_installs_the_gpu_operator_daemon_sets_with_its_tolerations() {
        let cp = json!({ "kind": "ClusterPolicy", "spec": { "daemonsets": { "tolerations": [{ "key": "pool", "operator": "Exists" }] } } });
        let out = daemon_set_objects(&[&cp]);
        assert_eq!(
            names(&out),
            [
                "gpu-operator-node-feature-discovery-worker",
                "nvidia-operator-validator",
                "nvidia-device-plugin-daemonset",
                "gpu-feature-discovery",
                "nvidia-dcgm-exporter",
                "nvidia-mig-manager"
            ]
        );
        let plugin = &out[2]["spec"]["template"]["spec"];
        assert_eq!(
            plugin["nodeSelector"],
            json!({ "nvidia.com/gpu.deploy.device-plugin": "true" })
        );
        assert_eq!(
            plugin["tolerations"],
            json!([{ "key": "pool", "operator": "Exists" }])
        );
        // No values ConfigMap: the NFD worker keeps its chart's tolerations and requests.
        let nfd = &out[0]["spec"]["template"]["spec"];
        assert_eq!(nfd["tolerations"].as_array().unwrap().len(), 2);
        assert_eq!(
            nfd["containers"][0]["resources"]["requests"],
            json!({ "cpu": "5m", "memory": "64Mi" })
        );
    }

    #[test]
    fn the_neuron_plugin_runs_on_the_values_list_else_the_charts() {
        let default = daemon_set_objects(&[&config_map(
            NEURON_VALUES,
            "devicePlugin: {tolerations: []}",
        )]);
        let types = |o: &Value| {
            o["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"].clone()
        };
        assert_eq!(
            types(&default[0]).as_array().unwrap().len(),
            NEURON_INSTANCES.len()
        );
        let own = daemon_set_objects(&[&config_map(
            NEURON_VALUES,
            "neuronInstances: [trn2.48xlarge]",
        )]);
        assert_eq!(types(&own[0]), json!(["trn2.48xlarge"]));
    }

    #[test]
    fn the_efa_chart_list_holds_the_efa_gpu_types() {
        let list = TypeList::EfaSupported.chart_default();
        for t in [
            "p4d.24xlarge",
            "p5.48xlarge",
            "p5en.48xlarge",
            "g6e.48xlarge",
            "trn2.48xlarge",
        ] {
            assert!(list.contains(&t), "{t}");
        }
        assert_eq!(
            names(&daemon_set_objects(&[&config_map(
                EFA_VALUES,
                "tolerations: []"
            )])),
            ["aws-efa-k8s-device-plugin"]
        );
    }
}
