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
use crate::forecast::trace::{Event, Trace, START_UNIX, VERSION};

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::load(Path::new("catalogs"), "us-east-1").expect("the committed us-east-1 catalog"))
}

const NODE_CLASS: &str = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  amiSelectorTerms:\n  - alias: al2023@latest\n";

/// A NodePool `name` of these instance types and capacity types, with `disruption` (YAML, indented for
/// `spec.disruption`) and `extra` template-spec lines (`expireAfter`, `terminationGracePeriod`).
fn pool(name: &str, types: &[&str], capacity: &[&str], disruption: &str, extra: &str) -> String {
    let extra = if extra.contains("expireAfter") { extra.to_string() } else { format!("{extra}      expireAfter: Never\n") };
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\nspec:\n  disruption:\n{disruption}  template:\n    metadata:\n      labels:\n        pool: {name}\n    spec:\n{extra}      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n      requirements:\n      - key: node.kubernetes.io/instance-type\n        operator: In\n        values: [{}]\n      - key: karpenter.sh/capacity-type\n        operator: In\n        values: [{}]\n      - key: topology.kubernetes.io/zone\n        operator: In\n        values: [us-east-1a]\n",
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
    pod_mem(name, cpu, 1, pool, annotations)
}

fn pod_mem(name: &str, cpu: u32, memory_gi: u32, pool: &str, annotations: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "apps", "labels": {"app": name}, "annotations": annotations},
        "spec": {"nodeSelector": {"pool": pool}, "containers": [{"name": "c", "resources": {"requests": {"cpu": format!("{cpu}m"), "memory": format!("{memory_gi}Gi")}}}]},
    })
}

fn trace(horizon: u64, workloads: &[(&str, Value)], events: Vec<Event>) -> Trace {
    Trace {
        version: VERSION,
        cluster: "test".into(),
        seed: 1,
        horizon_seconds: horizon,
        start_unix: START_UNIX,
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

fn budget_yaml(budgets: &str) -> String {
    format!("    consolidationPolicy: WhenEmpty\n    consolidateAfter: 30s\n    budgets:\n{budgets}")
}

fn one_pod_for_an_hour() -> Trace {
    trace(2 * 86_400, &[("web", pod("web", 1500, "a", json!({})))], vec![replicas(0, "web", 1), replicas(3600, "web", 0)])
}

/// emptiness_test.go "should not allow emptiness if the budget is fully blocking": `nodes: "0"` keeps the empty
/// node to the horizon.
#[test]
fn a_budget_of_zero_blocks_emptiness() {
    let objects = objects(&[pool("a", &["m5.large"], &["on-demand"], &budget_yaml("    - nodes: \"0\"\n"), "")]);
    let tl = run(&objects, &one_pod_for_an_hour());
    assert_eq!((tl.nodes.len(), tl.nodes[0].terminated_at), (1, None), "{tl:#?}");
    assert!(tl.decisions.is_empty());
}

/// emptiness_test.go "should allow emptiness if the budget is not blocking during a scheduled window" (the
/// budget's `schedule` and `duration`, nodepool_budgets_test.go `IsActive`): a zero budget active 00:00-23:00 UTC
/// lets the node go at 23:00, the first poll of the open hour.
#[test]
fn a_budget_schedule_opens_a_window() {
    let blocking = budget_yaml("    - nodes: \"0\"\n      schedule: \"0 0 * * *\"\n      duration: 23h\n");
    let objects = objects(&[pool("a", &["m5.large"], &["on-demand"], &blocking, "")]);
    let tl = run(&objects, &one_pod_for_an_hour());
    assert_eq!(tl.nodes[0].terminated_at, Some(23 * 3600 + 15), "{tl:#?}");
    // A window written as `@daily` with the same duration is the same schedule.
    let daily = budget_yaml("    - nodes: \"0\"\n      schedule: \"@daily\"\n      duration: 23h\n");
    assert_eq!(run(&objects_of(&daily), &one_pod_for_an_hour()).nodes[0].terminated_at, Some(23 * 3600 + 15));
}

fn objects_of(disruption: &str) -> Vec<Value> {
    objects(&[pool("a", &["m5.large"], &["on-demand"], disruption, "")])
}

const UNDERUTILIZED: &str = "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 0s\n";

/// singlenodeconsolidation_test.go / consolidation_test.go "can replace node" (on-demand, cheaper replacement):
/// three pods packed on an m5.2xlarge, two deleted; the node is replaced by an m5.large, launched first, and drained
/// once the replacement is Ready (queue.go).
#[test]
fn an_underutilized_node_is_replaced_by_a_cheaper_one() {
    let objects = objects(&[pool("a", &["m5.large", "m5.xlarge", "m5.2xlarge"], &["on-demand"], UNDERUTILIZED, "")]);
    let t = trace(7200, &[("web", pod("web", 1500, "a", json!({})))], vec![replicas(0, "web", 3), replicas(1000, "web", 1)]);
    let tl = run(&objects, &t);
    let types: Vec<&str> = tl.nodes.iter().map(|n| n.instance_type.as_str()).collect();
    assert_eq!(types, ["m5.2xlarge", "m5.large"], "{tl:#?}");
    let d = &tl.decisions[0];
    assert_eq!((d.reason, d.nodes.len(), d.replacements.len()), (EndedBy::Underutilized, 1, 1));
    // Decided at the poll at 1000, validated at 1015; the replacement is Ready 60 s later and the old node drains then.
    assert_eq!((tl.nodes[1].launched_at, tl.nodes[0].terminated_at), (1015, Some(1075)));
    assert_eq!(tl.pending_pod_seconds["apps/web"], 3 * 61, "the moved pod binds to the Ready replacement at once");
}

/// multinodeconsolidation_test.go "can merge 3 nodes into 1" in its delete form: three m5.xlarge nodes, each left
/// with one small pod, lose two in one command (the binary search's largest prefix) and the third keeps all pods;
/// under the default 10% budget, single-node consolidation removes them one poll at a time instead.
#[test]
fn two_nodes_are_merged_into_one() {
    // The default budget (10%, rounded up: 1 of 3 nodes) would leave multi-node consolidation one candidate.
    let everything = format!("{UNDERUTILIZED}    budgets:\n    - nodes: 100%\n");
    let objects = objects(&[pool("a", &["m5.xlarge"], &["on-demand"], &everything, "")]);
    let workloads = [("big", pod("big", 2500, "a", json!({}))), ("small", pod("small", 1000, "a", json!({})))];
    let tl = run(&objects, &trace(7200, &workloads, events_again()));
    assert_eq!(tl.nodes.len(), 3, "{tl:#?}");
    assert_eq!(tl.decisions.len(), 1, "{:#?}", tl.decisions);
    let d = &tl.decisions[0];
    assert_eq!((d.reason, d.nodes.len(), d.replacements.len()), (EndedBy::Underutilized, 2, 0));
    assert_eq!(tl.nodes.iter().filter(|n| n.terminated_at.is_none()).count(), 1);
    let one_at_a_time = run(&objects_of_pool(pool("a", &["m5.xlarge"], &["on-demand"], UNDERUTILIZED, "")), &trace(7200, &workloads, events_again()));
    assert_eq!(one_at_a_time.decisions.iter().map(|d| d.nodes.len()).collect::<Vec<_>>(), [1, 1]);
}

fn objects_of_pool(pool: String) -> Vec<Value> {
    objects(&[pool])
}

fn events_again() -> Vec<Event> {
    vec![replicas(0, "big", 1), replicas(100, "big", 2), replicas(200, "big", 3), replicas(300, "small", 3), replicas(1000, "big", 0)]
}

/// balanced_test.go "should reject a move whose savings do not pay for its disruption" against
/// consolidation_test.go "can replace node": an m5.xlarge kept for memory, left with one pod that an c5.xlarge
/// fits. WhenEmptyOrUnderutilized replaces it (any saving); Balanced scores the move at 0.022/0.192 saved over
/// 2/2 disrupted = 0.11 < 1/k = 0.5 and keeps it.
#[test]
fn balanced_rejects_a_move_whenemptyorunderutilized_takes() {
    let t = trace(7200, &[("mem", pod_mem("mem", 500, 6, "a", json!({})))], vec![replicas(0, "mem", 2), replicas(1000, "mem", 1)]);
    let with = |policy: &str| objects(&[pool("a", &["m5.xlarge", "c5.xlarge"], &["on-demand"], &format!("    consolidationPolicy: {policy}\n    consolidateAfter: 0s\n"), "")]);
    let greedy = run(&with("WhenEmptyOrUnderutilized"), &t);
    let types: Vec<&str> = greedy.nodes.iter().map(|n| n.instance_type.as_str()).collect();
    assert_eq!(types, ["m5.xlarge", "c5.xlarge"], "{greedy:#?}");
    let balanced = run(&with("Balanced"), &t);
    assert_eq!((balanced.nodes.len(), balanced.decisions.len()), (1, 0), "{balanced:#?}");
}

/// nodeclaim/expiration/suite_test.go "should delete a NodeClaim after expiry" and termination: the node goes at
/// launch + expireAfter, its pod is evicted, pending again, and provisioning launches its replacement.
#[test]
fn expire_after_replaces_the_node() {
    let objects = objects(&[pool("a", &["m5.large"], &["on-demand"], WHEN_EMPTY_30S, "      expireAfter: 1h\n")]);
    let t = trace(7200, &[("web", pod("web", 1500, "a", json!({})))], vec![replicas(0, "web", 1)]);
    let tl = run(&objects, &t);
    assert_eq!(tl.nodes.len(), 2, "{tl:#?}");
    assert_eq!((tl.nodes[0].terminated_at, tl.nodes[0].ended_by), (Some(3601), Some(EndedBy::Expired)));
    assert_eq!(tl.nodes[1].launched_at, 3602);
    assert_eq!(tl.pending_pod_seconds["apps/web"], 61 + 61);
    assert_eq!(tl.decisions[0].reason, EndedBy::Expired);
}

/// aws provider interruption/suite_test.go "should delete the NodeClaim when a spot interruption warning is
/// received": the interrupted node drains on the notice and its pod is rescheduled on a new node.
#[test]
fn a_spot_interruption_reschedules_pods() {
    let objects = objects(&[pool("a", &["m5.large"], &["spot"], WHEN_EMPTY_30S, "")]);
    let events = vec![replicas(0, "web", 2), Event::Interruption { at: 1000, instance_type: "m5.large".into(), zone: "us-east-1a".into(), share: 0.5 }];
    let tl = run(&objects, &trace(7200, &[("web", pod("web", 1500, "a", json!({})))], events));
    assert_eq!(tl.nodes.len(), 3, "{tl:#?}");
    let interrupted: Vec<&str> = tl.nodes.iter().filter(|n| n.ended_by == Some(EndedBy::Interrupted)).map(|n| n.id.as_str()).collect();
    assert_eq!(interrupted.len(), 1, "share 0.5 of two nodes: the oldest one");
    assert!(tl.nodes.iter().all(|n| n.capacity_type == "spot"));
    // interruption/suite_test.go "should mark the ICE cache for the offering when getting a spot interruption
    // warning" (utils.go `markUnavailableOfferings`, cache.go `UnavailableOfferingsTTL` = 3 min): the pool's only
    // offering is unavailable over [1000, 1180), so the replacement launches when it is back (1 s batch after), ...
    assert_eq!((tl.nodes[2].instance_type.as_str(), tl.nodes[2].launched_at), ("m5.large", 1181));
    // ... and with another type in the pool, at once on that one: the m5.xlarge holding both pods is interrupted,
    // and its pods go to two m5.large.
    let objects = objects_of_pool(pool("a", &["m5.large", "m5.xlarge"], &["spot"], WHEN_EMPTY_30S, ""));
    let events = vec![replicas(0, "web", 2), Event::Interruption { at: 1000, instance_type: "m5.xlarge".into(), zone: "us-east-1a".into(), share: 1.0 }];
    let tl = run(&objects, &trace(7200, &[("web", pod("web", 1500, "a", json!({})))], events));
    let launched: Vec<(&str, u64)> = tl.nodes.iter().map(|n| (n.instance_type.as_str(), n.launched_at)).collect();
    assert_eq!(launched, [("m5.xlarge", 1), ("m5.large", 1001), ("m5.large", 1001)], "{tl:#?}");
}

/// provisioning/suite_test.go "should launch on the next offering when one is unavailable" (the ICE cache,
/// `--unavailable`): m5.large on-demand in us-east-1a has no capacity for an hour, so the pod goes to an m5.xlarge; and
/// with every type of pool `a` short, to the lower-weight pool `b`.
#[test]
fn a_shortage_falls_back_to_the_next_offering_and_pool() {
    let short = |t: &str| Event::Shortage { at: 0, until: 3600, instance_type: t.into(), zone: "us-east-1a".into(), capacity_type: "on-demand".into() };
    let a = pool("a", &["m5.large", "m5.xlarge"], &["on-demand"], WHEN_EMPTY_30S, "").replace("spec:\n  disruption", "spec:\n  weight: 10\n  disruption");
    let b = pool("b", &["c5.xlarge"], &["on-demand"], WHEN_EMPTY_30S, "").replace("pool: b", "pool: a");
    let objects = objects(&[a, b]);
    let w = [("web", pod("web", 1500, "a", json!({})))];
    let tl = run(&objects, &trace(7200, &w, vec![short("m5.large"), replicas(0, "web", 1)]));
    assert_eq!(tl.nodes[0].instance_type, "m5.xlarge", "{tl:#?}");
    let tl = run(&objects, &trace(7200, &w, vec![short("m5.large"), short("m5.xlarge"), replicas(0, "web", 1)]));
    assert_eq!((tl.nodes[0].nodepool.as_str(), tl.nodes[0].instance_type.as_str()), ("b", "c5.xlarge"), "{tl:#?}");
}

/// eviction with a PodDisruptionBudget (termination/suite_test.go "should not evict pods that violate a PDB" and
/// "should delete pods when the terminationGracePeriod is reached"): an expired node whose only pod a
/// `minAvailable: 1` PDB protects drains only when its 10 min grace period ends.
#[test]
fn a_pdb_blocks_eviction_until_the_grace_period() {
    let pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\n  namespace: apps\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels:\n      app: web\n".to_string();
    let a = pool("a", &["m5.large"], &["on-demand"], WHEN_EMPTY_30S, "      expireAfter: 1h\n      terminationGracePeriod: 10m\n");
    let t = trace(7200, &[("web", pod("web", 1500, "a", json!({})))], vec![replicas(0, "web", 1)]);
    let tl = run(&objects(&[a.clone(), pdb]), &t);
    assert_eq!(tl.nodes[0].terminated_at, Some(3601 + 600), "{tl:#?}");
    let unprotected = run(&objects(&[a]), &t);
    assert_eq!(unprotected.nodes[0].terminated_at, Some(3601));
}

/// Kueue (pkg/scheduler/scheduler_test.go "should not admit a workload over quota"): a ClusterQueue of 2 cpu holds
/// the second 1.5-cpu Job until the first ends and its quota returns; its pod then binds to the node the first one
/// leaves, so one node serves both. With 4 cpu both run at once on two nodes.
#[test]
fn kueue_holds_a_job_until_quota_frees() {
    let kueue = |cpu: u32| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: default\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: cq\nspec:\n  namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors:\n    - name: default\n      resources:\n      - name: cpu\n        nominalQuota: \"{cpu}\"\n      - name: memory\n        nominalQuota: 64Gi\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: q\n  namespace: apps\nspec:\n  clusterQueue: cq\n"
        )
    };
    let job = |at: u64, name: &str| Event::Job { at, name: name.into(), queue: "apps/q".into(), pods: 1, duration_seconds: 600, pod: pod(name, 1500, "a", json!({})) };
    let t = trace(7200, &[], vec![job(0, "first"), job(10, "second")]);
    let a = pool("a", &["m5.large"], &["on-demand"], WHEN_EMPTY_30S, "");
    let tl = run(&objects(&[a.clone(), kueue(2)]), &t);
    assert_eq!(tl.nodes.len(), 1, "{tl:#?}");
    // First runs 61..661; second admitted at 661, binds at once, runs to 1261; consolidatable at 1291, found by the
    // poll at 1300, validated at 1315.
    assert_eq!(tl.nodes[0].terminated_at, Some(1315));
    assert_eq!(tl.pending_pod_seconds.get("apps/q/second"), Some(&0));
    let roomy = run(&objects(&[a, kueue(4)]), &t);
    assert_eq!(roomy.nodes.len(), 2, "{roomy:#?}");
}

mod examples;
mod generated;

/// drift_test.go "should drift empty nodes before non-empty nodes", "should delete drifted nodes" (the empty one: no
/// replacement), "should replace drifted nodes" (the other: its replacement Ready before it drains), one command per
/// candidate within "should only consider 3 nodes allowed to be disrupted because of budgets" (here one node for
/// reason Drifted), and nodeclaim/disruption drift_test.go (a NodeClaim launched after the change is not drifted: the
/// replacement stays). A budget of 0 for `Drifted` keeps both nodes.
#[test]
fn drifted_nodes_are_replaced_one_at_a_time_empty_first() {
    let drift_budget = |n: &str| format!("    consolidationPolicy: WhenEmpty\n    consolidateAfter: Never\n    budgets:\n    - nodes: \"{n}\"\n      reasons: [Drifted]\n");
    let workloads = [("web", pod("web", 1500, "a", json!({}))), ("api", pod("api", 1500, "a", json!({})))];
    let events = vec![replicas(0, "web", 1), replicas(0, "api", 1), replicas(1800, "api", 0), Event::Drift { at: 3600, nodepool: "a".into() }];
    let t = trace(3 * 3600, &workloads, events);
    let tl = run(&objects(&[pool("a", &["m5.large"], &["on-demand"], &drift_budget("1"), "")]), &t);
    let drifts: Vec<_> = tl.decisions.iter().filter(|d| d.reason == EndedBy::Drifted).collect();
    assert_eq!(drifts.len(), 2, "{tl:#?}");
    assert_eq!((drifts[0].at, drifts[0].replacements.len(), drifts[1].replacements.len()), (3600, 0, 1), "{tl:#?}");
    let life = |id: &str| tl.nodes.iter().find(|n| n.id == id).expect("a node of the timeline");
    let (empty, busy, replacement) = (life(&drifts[0].nodes[0]), life(&drifts[1].nodes[0]), life(&drifts[1].replacements[0]));
    // The budget of one: the second command waits for the first node to be gone.
    assert!(drifts[1].at >= empty.terminated_at.expect("the empty node goes"), "{tl:#?}");
    assert_eq!((empty.ended_by, busy.ended_by, replacement.terminated_at), (Some(EndedBy::Drifted), Some(EndedBy::Drifted), None));
    assert_eq!(replacement.launched_at, drifts[1].at);
    assert_eq!(busy.terminated_at, replacement.ready_at, "the drifted node drains once its replacement is Ready");
    assert_eq!(tl.pending_pod_seconds["apps/web"], 61, "the web pod moves to a Ready replacement at once");
    assert_eq!(tl.nodes.len(), 3);
    let blocked = run(&objects(&[pool("a", &["m5.large"], &["on-demand"], &drift_budget("0"), "")]), &t);
    assert!(blocked.decisions.is_empty() && blocked.nodes.iter().all(|n| n.terminated_at.is_none()), "{blocked:#?}");
}

/// nodepool_budgets_test.go `IsActive` on the calendar: a zero budget scheduled Wednesdays 00:00 for 23 h (cron day
/// 3, read in UTC) blocks the empty node of a trace that starts on a Wednesday (`start_unix`, from the demand's start
/// weekday) until 23:00, while the same trace starting on Monday (the default) is not blocked on its first day.
#[test]
fn a_budget_schedule_follows_the_trace_start_weekday() {
    let objects = objects_of(&budget_yaml("    - nodes: \"0\"\n      schedule: \"0 0 * * 3\"\n      duration: 23h\n"));
    let monday = one_pod_for_an_hour();
    assert_eq!(run(&objects, &monday).nodes[0].terminated_at, Some(3645));
    let wednesday = Trace { start_unix: crate::forecast::trace::start_unix_on(2), ..monday };
    assert_eq!(run(&objects, &wednesday).nodes[0].terminated_at, Some(23 * 3600 + 15));
}

/// consolidation.go `computeConsolidation` → `computeSpotToSpotConsolidation` with the SpotToSpotConsolidation gate
/// off (the default; consolidation_test.go "spot to spot consolidation" context): the case of
/// `an_underutilized_node_is_replaced_by_a_cheaper_one` on spot keeps its node. The NodePool names a zone, as every
/// generated pool in the conformance oracle's traces does (the class the zone-blind check missed).
#[test]
fn a_spot_node_is_not_replaced_by_spot() {
    let objects = objects(&[pool("a", &["m5.large", "m5.xlarge", "m5.2xlarge"], &["spot"], UNDERUTILIZED, "")]);
    let t = trace(7200, &[("web", pod("web", 1500, "a", json!({})))], vec![replicas(0, "web", 3), replicas(1000, "web", 1)]);
    let tl = run(&objects, &t);
    assert_eq!(tl.nodes.len(), 1, "{tl:#?}");
    assert!(tl.decisions.is_empty(), "{:#?}", tl.decisions);
}

/// disruption/helpers.go `SimulateScheduling` leaves the candidates out of the cluster state, so scheduler.go
/// `updateRemainingResources` does not count them against the NodePool's limits: a pool at its cpu limit (8, one
/// m5.2xlarge) still replaces that node by an m5.large.
#[test]
fn a_replacement_fits_the_limit_its_candidate_frees() {
    let at_limit = format!("{UNDERUTILIZED}  limits:\n    cpu: \"8\"\n");
    let objects = objects(&[pool("a", &["m5.large", "m5.xlarge", "m5.2xlarge"], &["on-demand"], &at_limit, "")]);
    let t = trace(7200, &[("web", pod("web", 1500, "a", json!({})))], vec![replicas(0, "web", 3), replicas(1000, "web", 1)]);
    let tl = run(&objects, &t);
    let types: Vec<&str> = tl.nodes.iter().map(|n| n.instance_type.as_str()).collect();
    assert_eq!(types, ["m5.2xlarge", "m5.large"], "{tl:#?}");
    assert_eq!(tl.decisions[0].reason, EndedBy::Underutilized);
}
