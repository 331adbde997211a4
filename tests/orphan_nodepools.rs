//! Issue 32 item 13: a NodePool renamed or removed from its profile but kept live (Argo CD `Prune=false`, Flux
//! `prune: disabled`, a failed prune) must not drop out of the cluster's spend. Karpenter's metrics name only the
//! NodePool, so the alerts find gpuplan's NodePools through their nodes' labels in kube-state-metrics'
//! `kube_node_labels`, which the kustomization header lists as a prerequisite. promtool runs the alerts themselves
//! (tests/promtool.rs, `outside_profiles_tests` and the budget's renamed-NodePool cases).
//!
//! Upstream: kubernetes/kube-state-metrics docs/metrics/cluster/node-metrics.md (`kube_node_labels`: `label_<NAME>`
//! "controlled via --metric-labels-allowlist") and docs/developer/cli-arguments.md (`--metric-labels-allowlist`);
//! sigs.k8s.io/karpenter@v1.14.1 pkg/apis/v1/labels.go (`NodePoolLabelKey`) and
//! pkg/controllers/metrics/nodepool/controller.go (`cost_total`, labelled by NodePool only).

use std::path::PathBuf;
use std::process::Command;

use gpuplan::compile::{compile, Compilation, CompileOptions};
use gpuplan::ops::alerts;
use gpuplan::solve::prerequisites::KSM_NODE_LABELS;
use serde_json::Value;

mod common;

fn examples() -> Compilation {
    let root = common::repo();
    compile(&CompileOptions { profiles: vec![root.join("profiles")], catalogs_dir: root.join("catalogs"), templates_dir: None })
        .expect("the example profiles compile")
}

/// kube-state-metrics' label name for a Kubernetes label: `label_` + the name with every character outside
/// `[a-zA-Z0-9_]` turned into `_` (node-metrics.md: `label_NODE_LABEL`).
fn ksm_label(key: &str) -> String {
    format!("label_{}", key.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect::<String>())
}

fn orphan_rules(c: &Compilation, cluster: &str) -> Vec<Value> {
    let rule = c.manifests_of(cluster).into_iter().find(|m| m.kind() == "PrometheusRule").expect("a PrometheusRule");
    rule.object["spec"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_array().unwrap().clone())
        .filter(|r| r["alert"] == alerts::OUTSIDE_PROFILES || r["alert"] == alerts::OVER_BUDGET)
        .collect()
}

/// Every NodePool's nodes carry the label the alerts select gpuplan's NodePools by (its template's
/// `gpuplan.dev/pool`), the allowlist exports exactly that label and Karpenter's, the alerts read them under
/// kube-state-metrics' names, and the orphan alert leaves out every NodePool the cluster has now.
#[test]
fn the_alerts_read_the_node_labels_every_nodepool_template_sets() {
    let c = examples();
    assert!(KSM_NODE_LABELS.contains("--metric-labels-allowlist=nodes=[gpuplan.dev/pool,karpenter.sh/nodepool]"));
    assert!(KSM_NODE_LABELS.contains("kube-state-metrics.metricLabelsAllowlist"));
    for cluster in &c.plan.clusters {
        let manifests = c.manifests_of(&cluster.name);
        let nodepools: Vec<_> = manifests.iter().filter(|m| m.kind() == "NodePool").collect();
        assert_eq!(nodepools.len(), cluster.pools.len());
        for np in &nodepools {
            let name = np.object["metadata"]["name"].as_str().unwrap();
            let pool = &cluster.pools.iter().find(|p| p.name == name).unwrap().pool;
            assert_eq!(np.object["spec"]["template"]["metadata"]["labels"]["gpuplan.dev/pool"], Value::from(pool.as_str()), "NodePool {name}");
        }
        let rules = orphan_rules(&c, &cluster.name);
        let orphan = rules.iter().find(|r| r["alert"] == alerts::OUTSIDE_PROFILES).unwrap_or_else(|| panic!("{}: no {}", cluster.name, alerts::OUTSIDE_PROFILES));
        let expr = orphan["expr"].as_str().unwrap();
        for key in ["gpuplan.dev/pool", "karpenter.sh/nodepool"] {
            assert!(expr.contains(&format!("{}!=\"\"", ksm_label(key))), "{expr}");
        }
        let mut names: Vec<&str> = cluster.pools.iter().map(|p| p.name.as_str()).collect();
        names.sort();
        let excluded = expr.split("label_karpenter_sh_nodepool!~\"").nth(1).unwrap().split('"').next().unwrap();
        let mut listed: Vec<&str> = excluded.split('|').collect();
        listed.sort();
        assert_eq!(listed, names, "the orphan alert leaves out exactly the cluster's NodePools");
        // Every alert that reads the node labels says what it needs.
        for r in &rules {
            assert!(r["annotations"]["requires"].as_str().unwrap().contains(KSM_NODE_LABELS), "{r}");
        }
        let header = String::from_utf8(c.output_tree().files[&PathBuf::from(&cluster.name).join("kustomization.yaml")].clone().into()).unwrap();
        assert!(header.contains(&format!("#   {KSM_NODE_LABELS}: ")), "{header}");
    }
}

/// The labels and the metric the alerts join, as Karpenter v1.14.1 defines them: nodes carry
/// `karpenter.sh/nodepool`, and `karpenter_nodepools_cost_total` has the NodePool's name as its only label, so no
/// Karpenter metric can tell gpuplan's NodePools from anyone else's.
#[test]
fn karpenter_v1_14_1_labels_nodes_by_nodepool_and_prices_each_nodepool_by_name_only() {
    let required = std::env::var("GPUPLAN_CONFORMANCE_REQUIRED").is_ok_and(|v| v == "1");
    let Ok(out) = Command::new("go").current_dir(common::repo().join("conformance/karpenter")).args(["mod", "download", "-json", "sigs.k8s.io/karpenter"]).output() else {
        assert!(!required, "GPUPLAN_CONFORMANCE_REQUIRED=1 but `go` is not on PATH");
        eprintln!("skipped: no Go toolchain on PATH, so sigs.k8s.io/karpenter cannot be read from the module cache");
        return;
    };
    assert!(out.status.success(), "go mod download: {}", String::from_utf8_lossy(&out.stderr));
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["Version"], "v1.14.1");
    let dir = PathBuf::from(info["Dir"].as_str().unwrap());
    let labels = std::fs::read_to_string(dir.join("pkg/apis/v1/labels.go")).unwrap();
    assert!(labels.contains("NodePoolLabelKey            = apis.Group + \"/nodepool\""));
    let controller = std::fs::read_to_string(dir.join("pkg/controllers/metrics/nodepool/controller.go")).unwrap();
    let cost = controller.split("ClusterCost = ").nth(1).expect("the cost gauge");
    let cost = &cost[..cost.find("\n\t)").unwrap()];
    assert!(cost.contains("Name:      \"cost_total\"") && cost.contains("[]string{metrics.NodePoolLabel}"), "{cost}");
}
