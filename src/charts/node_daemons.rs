//! The DaemonSets every EKS node runs besides the add-ons gpuplan configures: the VPC CNI (`aws-node`), `kube-proxy`,
//! and usually the EBS CSI node plugin and the Pod Identity agent. Karpenter subtracts their requests, and one pod
//! slot each, from every node it sizes (kubernetes-sigs/karpenter v1.14.1
//! `pkg/controllers/provisioning/scheduling/scheduler.go` `buildDaemonOverheadGroups`), so a fit proof that leaves them
//! out proves too much: a 7.8-CPU replica "fits" a g6.2xlarge it cannot run on.
//!
//! Each is counted as its source installs it (requests; all four tolerate every taint):
//! - `aws-node`: aws/eks-charts `stable/aws-vpc-cni/values.yaml` (chart v1.23.0, the module conformance reads):
//!   `resources.requests.cpu: 25m`, `tolerations: [{operator: Exists}]`; the network-policy agent and init
//!   containers request nothing (`nodeAgent.resources: {}`, `init.resources: {}`).
//! - `kube-proxy`: the EKS kube-proxy add-on's DaemonSet requests `cpu: 100m` and tolerates `operator: Exists`
//!   (EKS user guide, "Manage kube-proxy in Amazon EKS clusters",
//!   <https://docs.aws.amazon.com/eks/latest/userguide/managing-kube-proxy.html>; the DaemonSet EKS installs,
//!   `kubectl -n kube-system get ds kube-proxy -o yaml`).
//! - `ebs-csi-node`: kubernetes-sigs/aws-ebs-csi-driver `charts/aws-ebs-csi-driver/values.yaml`, `node.resources.requests`
//!   `cpu: 10m, memory: 40Mi`, `node.tolerateAllTaints: true`, sidecars `resources: {}`.
//! - `eks-pod-identity-agent`: aws/eks-pod-identity-agent `charts/eks-pod-identity-agent/values.yaml`:
//!   `resources: {}` (a pod slot only), `tolerations: [{operator: Exists}]`.
//!
//! None runs on an EKS Auto Mode node (Auto Mode runs networking and storage in the node itself; the charts' affinity
//! is `eks.amazonaws.com/compute-type NotIn [fargate, hybrid, auto]`), so an Auto Mode cluster counts none by default.
//! `cluster { node-daemons … }` names the ones a cluster runs (`"none"`: none).

use serde_json::{Value, json};

/// One DaemonSet every node of the cluster runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeDaemon {
    pub name: &'static str,
    /// The container requests (`resource`, quantity).
    pub requests: &'static [(&'static str, &'static str)],
}

/// The EKS node DaemonSets, in the order `node-daemons` lists them (requests cited in the module doc).
pub const EKS_NODE_DAEMONS: [NodeDaemon; 4] = [
    NodeDaemon { name: "aws-node", requests: &[("cpu", "25m")] },
    NodeDaemon { name: "kube-proxy", requests: &[("cpu", "100m")] },
    NodeDaemon { name: "ebs-csi-node", requests: &[("cpu", "10m"), ("memory", "40Mi")] },
    NodeDaemon { name: "eks-pod-identity-agent", requests: &[] },
];

/// Where they run.
pub const NAMESPACE: &str = "kube-system";

/// The names every EC2NodeClass cluster counts unless its `node-daemons` line says otherwise.
pub fn default_names(auto_mode: bool) -> Vec<String> {
    if auto_mode { Vec::new() } else { EKS_NODE_DAEMONS.iter().map(|d| d.name.to_string()).collect() }
}

/// The named node DaemonSets as apps/v1 objects (unknown names are skipped: the profile refuses them).
pub fn daemon_set_objects(names: &[String]) -> Vec<Value> {
    EKS_NODE_DAEMONS
        .iter()
        .filter(|d| names.iter().any(|n| n == d.name))
        .map(|d| {
            let requests: serde_json::Map<String, Value> = d.requests.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
            json!({
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": { "name": d.name, "namespace": NAMESPACE },
                "spec": {
                    "selector": { "matchLabels": { "k8s-app": d.name } },
                    "template": {
                        "metadata": { "labels": { "k8s-app": d.name } },
                        "spec": {
                            "tolerations": [{ "operator": "Exists" }],
                            "containers": [{ "name": d.name, "image": d.name, "resources": { "requests": requests } }],
                        },
                    },
                },
            })
        })
        .collect()
}
