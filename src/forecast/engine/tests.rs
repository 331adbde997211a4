//! Small deterministic cases, one per behaviour, each naming the upstream test it mirrors
//! (kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/**/_test.go`), on hand-written NodePools against the
//! committed us-east-1 catalog; plus every example cluster over a day, and the polling mode against the event-driven
//! one over generated traces.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use serde_json::{json, Value};

use super::{replay_objects, Mode};
use crate::catalog::Catalog;
use crate::forecast::timeline::{EndedBy, Timeline};
use crate::forecast::trace::{Event, Trace, VERSION};

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::load(Path::new("catalogs"), "us-east-1").expect("the committed us-east-1 catalog"))
}

const NODE_CLASS: &str = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  amiSelectorTerms:\n  - alias: al2023@latest\n";

/// A NodePool `name` of these instance types and capacity types, with `disruption` (YAML, indented for
/// `spec.disruption`) and `extra` template-spec lines (`expireAfter`, `terminationGracePeriod`).
fn pool(name: &str, types: &[&str], capacity: &[&str], disruption: &str, extra: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\nspec:\n  disruption:\n{disruption}  template:\n    metadata:\n      labels:\n        pool: {name}\n    spec:\n{extra}      expireAfter: Never\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n      requirements:\n      - key: node.kubernetes.io/instance-type\n        operator: In\n        values: [{}]\n      - key: karpenter.sh/capacity-type\n        operator: In\n        values: [{}]\n      - key: topology.kubernetes.io/zone\n        operator: In\n        values: [us-east-1a]\n",
        types.join(", "),
        capacity.join(", ")
    )
}

fn objects(yaml: &[String]) -> Vec<Value> {
    let text = std::iter::once(NODE_CLASS.to_string()).chain(yaml.iter().cloned()).collect::<Vec<_>>().join("---\n");
    crate::simulate::yaml::parse_docs(Path::new("test.yaml"), &text).expect("test manifests parse").into_iter().map(|d| d.value.into_owned()).collect()
}

/// A pod of `cpu` millicores and 1 GiB in namespace `apps`, labelled `app: <name>`, selecting `pool`.
fn pod(name: &str, cpu: u32, pool: &str, annotations: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "apps", "labels": {"app": name}, "annotations": annotations},
        "spec": {"nodeSelector": {"pool": pool}, "containers": [{"name": "c", "resources": {"requests": {"cpu": format!("{cpu}m"), "memory": "1Gi"}}}]},
    })
}

fn trace(horizon: u64, workloads: &[(&str, Value)], events: Vec<Event>) -> Trace {
    Trace {
        version: VERSION,
        cluster: "test".into(),
        seed: 1,
        horizon_seconds: horizon,
        workloads: workloads.iter().map(|(k, v)| (format!("apps/{k}"), v.clone())).collect(),
        startup_seconds: BTreeMap::from([("a".to_string(), 60), ("b".to_string(), 60)]),
        events,
    }
}

fn replicas(at: u64, workload: &str, replicas: u32) -> Event {
    Event::Replicas { at, workload: format!("apps/{workload}"), replicas }
}

/// Both modes, which must agree; the event-driven timeline.
fn run(objects: &[Value], trace: &Trace) -> Timeline {
    let event = replay_objects(catalog(), objects, trace, Mode::EventDriven);
    let polling = replay_objects(catalog(), objects, trace, Mode::Polling);
    assert_eq!(event, polling, "the event-driven replay decides as the 10 s polling loop does");
    event
}

const WHEN_EMPTY_30S: &str = "    consolidationPolicy: WhenEmpty\n    consolidateAfter: 30s\n";

/// provisioning/suite_test.go "should provision nodes" and batcher_test.go (1 s idle window): a pod created at 0
/// opens the batch, which closes at 1 s; the node is Ready after the NodePool's start-up delay and the pod runs then.
/// emptiness_test.go "should delete empty nodes" with consolidateAfter: the node goes once it has been empty for
/// 30 s, at the first 10 s poll after that, plus the 15 s validation.
#[test]
fn an_empty_node_goes_after_consolidate_after() {
    let objects = objects(&[pool("a", &["m5.large", "m5.xlarge"], &["on-demand"], WHEN_EMPTY_30S, "")]);
    let t = trace(7200, &[("web", pod("web", 1500, "a", json!({})))], vec![replicas(0, "web", 1), replicas(3600, "web", 0)]);
    let tl = run(&objects, &t);
    assert_eq!(tl.nodes.len(), 1, "{tl:#?}");
    let n = &tl.nodes[0];
    assert_eq!((n.launched_at, n.ready_at, n.instance_type.as_str()), (1, Some(61), "m5.large"));
    // Empty from 3600, consolidatable at 3630, found by that second's poll (polls every 10 s from the start) and
    // validated 15 s later.
    assert_eq!((n.terminated_at, n.ended_by), (Some(3645), Some(EndedBy::Empty)));
    assert_eq!(tl.pending_pod_seconds["apps/web"], 61);
    assert_eq!(tl.decisions.len(), 1);
}
