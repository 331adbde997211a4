//! The GPU add-ons reach every accelerator node (issue 18, part 3), judged by Kubernetes' DaemonSet controller:
//! `conformance/consumers/cmd/reach` asks k8s.io/kubernetes `pkg/controller/daemon.NodeShouldRunDaemonPod` whether
//! each add-on DaemonSet runs on the node each NodePool launches. gpuplan's own answer (`ops::addons`, which E0184
//! and lint GP017 use) must be the same for every pair:
//!
//! - the examples' NodePools with the DaemonSets as their clusters' rendered objects configure them (and every
//!   add-on a pool needs runs there);
//! - the same NodePools with each add-on at its chart's default tolerations (the defect issue 18 found: the GPU
//!   Operator's NFD worker kept off 10 of 11 NVIDIA pools);
//! - generated pairs from a fixed seed: random taints and startup taints (every effect, with and without values),
//!   random tolerations (Exists/Equal, empty keys and effects), operands a node opts out of by label.
//!
//! The NVIDIA GPU Operator's chart itself cannot be rendered here: github.com/NVIDIA/gpu-operator is not served by
//! the Go module proxy (403 "This module version is not available", see conformance/consumers/README.md), so the
//! DaemonSets' tolerations are gpuplan's reading of its values.yaml (cited in src/ops/addons.rs).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use gpuplan::charts::add_ons::ADD_ONS;
use gpuplan::ops::addons::{self, Daemon, NodeShape};
use gpuplan::simulate::requirements::Toleration;
use serde_json::{json, Value};

use super::go;

/// The DaemonSet controller's verdicts, by (nodepool, daemonset).
fn controller(files: &[&Path]) -> Option<BTreeMap<(String, String), bool>> {
    let program = go::program("consumers", "reach")?;
    let output = Command::new(program).args(files).output().expect("run conformance/consumers reach");
    assert!(output.status.success(), "reach failed: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    Some(
        text.lines()
            .map(|line| {
                let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
                ((v["nodepool"].as_str().unwrap().to_string(), v["daemonset"].as_str().unwrap().to_string()), v["runs"].as_bool().unwrap())
            })
            .collect(),
    )
}

/// An apps/v1 DaemonSet with the daemon's tolerations and, for a GPU Operator operand, its deploy-label selector.
fn daemonset(name: &str, d: &Daemon) -> Value {
    let mut spec = json!({ "tolerations": d.tolerations.iter().map(addons::toleration_json).collect::<Vec<_>>() });
    if let Some(label) = d.add_on.deploy_label {
        spec["nodeSelector"] = json!({ label: "true" });
    }
    json!({ "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": { "name": name }, "spec": { "template": { "spec": spec } } })
}

/// Writes the NodePools and DaemonSets, runs the controller, and returns every pair where gpuplan disagrees.
fn disagreements(dir: &Path, nodepools: &[Value], daemons: &[(String, Daemon)]) -> Option<Vec<String>> {
    let yaml = |docs: Vec<String>| docs.join("---\n");
    let pools_file = dir.join("nodepools.yaml");
    let sets_file = dir.join("daemonsets.yaml");
    std::fs::write(&pools_file, yaml(nodepools.iter().map(|v| serde_saphyr::to_string(v).unwrap()).collect())).unwrap();
    std::fs::write(&sets_file, yaml(daemons.iter().map(|(n, d)| serde_saphyr::to_string(&daemonset(n, d)).unwrap()).collect())).unwrap();
    let verdicts = controller(&[&pools_file, &sets_file])?;
    assert_eq!(verdicts.len(), nodepools.len() * daemons.len(), "one verdict per pair");
    let mut out = Vec::new();
    for np in nodepools {
        let node: NodeShape = addons::node_of(np);
        for (name, d) in daemons {
            let theirs = verdicts[&(node.nodepool.clone(), name.clone())];
            let ours = d.runs_on(&node);
            if theirs != ours {
                out.push(format!("{} × {name}: controller {theirs}, gpuplan {ours}\n  taints {:?}\n  tolerations {:?}", node.nodepool, node.taints, d.tolerations));
            }
        }
    }
    Some(out)
}

fn examples() -> gpuplan::compile::Compilation {
    let root = go::root();
    gpuplan::compile::compile(&gpuplan::compile::CompileOptions { profiles: vec![root.join("profiles")], catalogs_dir: root.join("catalogs"), templates_dir: None })
        .expect("the examples compile")
}

#[test]
fn every_example_nodepool_runs_the_add_ons_it_needs_as_the_daemonset_controller_decides() {
    let c = examples();
    for cluster in &c.plan.clusters {
        let manifests = c.manifests_of(&cluster.name);
        let nodepools: Vec<Value> = manifests.iter().filter(|m| m.kind() == "NodePool").map(|m| m.object.clone()).collect();
        let daemons: Vec<(String, Daemon)> = addons::daemons(&manifests).into_iter().map(|d| (d.add_on.daemonset.to_string(), d)).collect();
        let dir = tempfile::tempdir().unwrap();
        let Some(wrong) = disagreements(dir.path(), &nodepools, &daemons) else { return };
        assert!(wrong.is_empty(), "{}: gpuplan and the DaemonSet controller disagree:\n{}", cluster.name, wrong.join("\n"));
        let unreachable = addons::unreachable(&cluster.pools, &manifests);
        assert!(unreachable.is_empty(), "{}: {unreachable:#?}", cluster.name);
    }
}

/// NVIDIA/gpu-operator v26.7.0 `deployments/gpu-operator/values.yaml`: the NFD worker tolerates control-plane and
/// `nvidia.com/gpu` only, so on the pools with a `gpuplan.dev/pool` taint the controller never runs it: the defect
/// the Helm values gpuplan now writes fix. Both sides must see it.
#[test]
fn at_the_charts_defaults_the_nfd_worker_stays_off_every_pool_with_a_pool_taint() {
    let c = examples();
    let manifests = c.manifests_of("ml-prod");
    let nodepools: Vec<Value> = manifests.iter().filter(|m| m.kind() == "NodePool").map(|m| m.object.clone()).collect();
    // No values ConfigMap and no ClusterPolicy: every add-on at its chart's defaults.
    let defaults: Vec<(String, Daemon)> = addons::daemons(&[]).into_iter().map(|d| (d.add_on.daemonset.to_string(), d)).collect();
    let dir = tempfile::tempdir().unwrap();
    let Some(wrong) = disagreements(dir.path(), &nodepools, &defaults) else { return };
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let nfd = &defaults.iter().find(|(n, _)| n == "gpu-operator-node-feature-discovery-worker").unwrap().1;
    let kept_off: std::collections::BTreeSet<String> = nodepools.iter().map(addons::node_of).filter(|n| !nfd.runs_on(n)).map(|n| n.nodepool).collect();
    // (The NFD worker is not needed on the Neuron pool, but it is kept off there too.)
    let expected = ["llm-inference-on-demand", "llm-inference-spot", "neuron-inference", "training", "training-reserved"];
    assert_eq!(kept_off, expected.iter().map(|s| s.to_string()).collect());
}

/// A small deterministic generator (xorshift64*), seeded like the other conformance tests (drift.rs draws with it too).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const KEYS: &[&str] = &["nvidia.com/gpu", "gpuplan.dev/pool", "workload", "aws.amazon.com/neuron", "CriticalAddonsOnly", "node.kubernetes.io/not-ready", "node.kubernetes.io/unschedulable", "example.com/startup"];
const VALUES: &[&str] = &["", "training", "inference"];
const EFFECTS: &[&str] = &["NoSchedule", "NoExecute", "PreferNoSchedule"];

fn random_taints(rng: &mut Rng) -> Vec<Value> {
    (0..rng.next() % 4)
        .map(|_| {
            let mut t = json!({ "key": rng.pick(KEYS), "effect": rng.pick(EFFECTS) });
            let value = rng.pick(VALUES);
            if !value.is_empty() {
                t["value"] = json!(value);
            }
            t
        })
        .collect()
}

fn random_nodepool(rng: &mut Rng, i: usize) -> Value {
    let mut labels = json!({ "gpuplan.dev/pool": format!("p{i}") });
    if rng.chance(20) {
        labels[gpuplan::charts::gpu_operator::DEPLOY_DEVICE_PLUGIN_LABEL] = json!("false");
    }
    let resource = if rng.chance(70) { "nvidia.com/gpu" } else { "aws.amazon.com/neuron" };
    json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": { "name": format!("pool-{i}") },
        "spec": {
            "limits": { resource: "8" },
            "template": { "metadata": { "labels": labels }, "spec": { "taints": random_taints(rng), "startupTaints": random_taints(rng) } },
        },
    })
}

fn random_daemon(rng: &mut Rng) -> Daemon {
    let add_on = ADD_ONS[(rng.next() % ADD_ONS.len() as u64) as usize];
    let tolerations = (0..rng.next() % 4)
        .map(|_| {
            let exists = rng.chance(50);
            Toleration {
                key: if rng.chance(10) { String::new() } else { rng.pick(KEYS).to_string() },
                operator: if exists { "Exists".into() } else if rng.chance(50) { "Equal".into() } else { String::new() },
                value: if exists { String::new() } else { rng.pick(VALUES).to_string() },
                effect: if rng.chance(25) { String::new() } else { rng.pick(EFFECTS).to_string() },
            }
        })
        .collect();
    Daemon { add_on, tolerations, from: "generated".into() }
}

#[test]
fn generated_taints_and_tolerations_get_the_daemonset_controllers_verdict() {
    let seed = std::env::var("GPUPLAN_CONFORMANCE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(18u64);
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let nodepools: Vec<Value> = (0..60).map(|i| random_nodepool(&mut rng, i)).collect();
    let daemons: Vec<(String, Daemon)> = (0..60).map(|i| (format!("ds-{i}"), random_daemon(&mut rng))).collect();
    let dir = tempfile::tempdir().unwrap();
    let Some(wrong) = disagreements(dir.path(), &nodepools, &daemons) else { return };
    assert!(wrong.is_empty(), "{} of 3,600 pairs disagree (seed {seed}):\n{}", wrong.len(), wrong.iter().take(10).cloned().collect::<Vec<_>>().join("\n"));
}
