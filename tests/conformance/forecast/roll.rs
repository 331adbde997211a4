//! The drift roll (`gpuplan::emit::diff::roll`, the review's "roll, replayed") against Karpenter's own disruption
//! controller: the same trace (`roll::trace`: one pod per node of the NodePool's smallest type, the NodePool drifting
//! once every node is Ready) through `oracle forecast` and through the engine, measured by the same `roll::measure`.
//! Per case: the same nodes replaced, the roll's duration within 10% or one disruption poll per replaced node
//! (whichever is larger), and the same verdict on whether it finishes.
//!
//! Not yet compared, and said so in the review's roll (`roll.rs`): a budget of more than one node at a time (Karpenter
//! starts two or three commands per moment where the engine starts every allowed one: a candidate whose pods the
//! simulation puts on a replacement not yet initialized is blocked, helpers.go `SimulateScheduling`, in an order the
//! engine does not follow), PodDisruptionBudgets (the oracle's fake client evicts without the API server's PDB
//! check), and the stuck drifts, which need the NodePool to change during the replay.
//!
//! Upstream: sigs.k8s.io/karpenter v1.14.1 `pkg/controllers/disruption/drift.go` (one candidate per command, budgets
//! for reason `Drifted`, the pods of deleting nodes and pending pods simulated with the candidate's), `disruption/
//! queue.go` (the replacement initialized before the candidate is deleted), `disruption/controller.go` (a command
//! requeues the controller at once), budgets (`nodes` as a count or a percentage, rounded up).

use gpuplan::emit::diff::roll::{self, PerNode, Roll};
use gpuplan::forecast::timeline::Timeline;

use super::{differential, oracle};

const NODES: u32 = 10;

fn node_pool(budget: &str) -> String {
    format!(
        "{}---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 5m
    budgets:
    - nodes: \"{budget}\"
  limits:
    nvidia.com/gpu: \"40\"
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      expireAfter: 720h
      terminationGracePeriod: 1h
      taints:
      - {{key: nvidia.com/gpu, effect: NoSchedule}}
      requirements:
      - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
      - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6]}}
",
        super::NODE_CLASS
    )
}

/// Both sides' rolls of `manifests`, and both timelines (for a failure's message).
fn both(name: &str, manifests: &str) -> Option<(Roll, Roll, Timeline, Timeline)> {
    let docs = gpuplan::simulate::yaml::parse_docs(std::path::Path::new("manifests.yaml"), manifests).unwrap();
    let pool = docs.iter().map(|d| d.value.clone().into_owned()).find(|v| v["kind"] == "NodePool").unwrap();
    let node = PerNode { instance_type: "g5.xlarge".into(), resource: "nvidia.com/gpu".into(), amount: 1 };
    let trace = roll::trace(&pool, &node, NODES, roll::drift_at(), roll::horizon(NODES), gpuplan::forecast::trace::START_UNIX);
    let (karpenter, _) = oracle(&format!("roll-{name}"), manifests, &trace)?;
    let gpuplan = differential::engine(manifests, &trace);
    let dir = super::go::root().join("target/conformance/forecast-cases").join(format!("roll-{name}"));
    std::fs::write(dir.join("gpuplan.json"), serde_json::to_string_pretty(&gpuplan).unwrap()).unwrap();
    let measure = |tl: &Timeline| roll::measure(tl, "gpu", roll::drift_at(), &|_| 1.0);
    Some((measure(&karpenter), measure(&gpuplan), karpenter, gpuplan))
}

/// The rule of every case: the same replaced nodes and verdict, the duration within 10% or a poll per node.
fn agree(name: &str, manifests: &str) -> Option<Roll> {
    let (k, g, kt, gt) = both(name, manifests)?;
    let slack = (k.duration_seconds as f64 * 0.10).max((differential::POLL_SECONDS * u64::from(k.replaced.max(1))) as f64);
    let finished = |r: &Roll| r.replaced == r.drifting;
    let same = k.drifting == g.drifting && k.replaced == g.replaced && finished(&k) == finished(&g) && (k.duration_seconds as f64 - g.duration_seconds as f64).abs() <= slack;
    assert!(
        same,
        "roll {name}: Karpenter {k:?}, gpuplan {g:?} (duration slack {slack:.0} s)\nKarpenter:\n{}\ngpuplan:\n{}",
        differential::summary(&kt),
        differential::summary(&gt)
    );
    Some(k)
}

/// 10 nodes at `nodes: 10%`: ceil(10% × 10) = 1 at a time, so ten replacements one after the other.
#[test]
fn a_ten_node_roll_at_ten_percent_replaces_one_node_at_a_time() {
    let Some(k) = agree("ten-percent", &node_pool("10%")) else { return };
    assert_eq!((k.drifting, k.replaced, k.at_once), (NODES, NODES, 1), "{k:?}");
}

/// `nodes: "1"`: the same pace as 10% of ten.
#[test]
fn a_ten_node_roll_at_one_node_replaces_one_at_a_time() {
    let Some(k) = agree("one-node", &node_pool("1")) else { return };
    assert_eq!((k.replaced, k.at_once), (NODES, 1), "{k:?}");
}
