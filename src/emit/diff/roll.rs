//! Part of the emit stage: a drifting NodePool's roll, replayed. The nodes that run when the change merges are
//! brought up by the forecast engine (`forecast::engine`, Karpenter v1.14.1's provisioning and disruption replayed),
//! one pod per node, then drift at the merge; the engine replaces them as Karpenter's drift method does
//! (`pkg/controllers/disruption/drift.go`: one candidate per command, the NodePool's budgets for reason `Drifted`
//! and their schedules at the merge's time, the replacement launched and Ready before the old node drains,
//! `terminationGracePeriod`). What the roll measures: the nodes replaced, the most replaced at once, how long until
//! the last old node is gone, and what the nodes cost during the roll beyond what the old nodes alone would have.
//!
//! The node count comes from what runs (`--cluster-state`: `kubectl get nodeclaims -o json`), else from the limits'
//! worst case: the most nodes the base NodePool's limits allow on its smallest type. Each replayed node is of that
//! type (the smallest the head's NodePool launches) and holds one pod of its own. A NodePool without an accelerator
//! limit, or whose head cannot bring up the nodes the base runs (a limit lowered below them), is not replayed. With a
//! cluster state, the replay runs the drifting nodes alone: a budget's percentage is then of fewer nodes. Not modelled: the workloads' own PodDisruptionBudgets and pods, the types the
//! nodes really run (a larger type takes as long to replace, and costs more during the roll), pods' start-up after
//! binding. Where the replay is not yet Karpenter's (tests/conformance/forecast/roll.rs): with a budget above one
//! node, the engine starts every allowed replacement at once where Karpenter starts a few per poll, so "at once" may
//! be more and the duration less than Karpenter's.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::forecast::engine::{Mode, replay_objects};
use crate::forecast::timeline::{EndedBy, Timeline};
use crate::forecast::trace::{DEFAULT_STARTUP_SECONDS, Event, Trace, VERSION};
use crate::simulate::instances::TypeLabels;

/// The most nodes a roll replays: a larger pool is replayed at this size and said to be.
pub const MAX_NODES: u32 = 200;

/// Where the roll's node count comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeSource {
    /// The NodeClaims the user gave (`--cluster-state`).
    ClusterState,
    /// The most nodes the base NodePool's limits allow on its smallest type.
    Limits,
}

impl NodeSource {
    pub fn words(self) -> &'static str {
        match self {
            NodeSource::ClusterState => "the cluster state given (--cluster-state)",
            NodeSource::Limits => "the limits' worst case (the most nodes the limits allow on the smallest type)",
        }
    }
}

/// One NodePool's roll, replayed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Roll {
    pub source: NodeSource,
    /// The NodePool's nodes when the change merges (the drifting ones and the rest).
    pub running: u32,
    /// The nodes running before the merge that drift (as counted, before any cap).
    pub drifting: u32,
    /// Of them, the nodes the replay ran (`drifting`, or [`MAX_NODES`] when capped).
    pub replayed: u32,
    /// Of those, replaced by the end of the replay.
    pub replaced: u32,
    /// The most replacements in flight together (launched, the old node not yet gone).
    pub at_once: u32,
    /// From the merge until the last old node is gone (or the replay's end when one stays).
    pub duration_seconds: u64,
    /// What the pool's nodes cost during the roll beyond what the old nodes alone would have.
    pub extra_usd: f64,
    /// The replay was capped at [`MAX_NODES`].
    pub capped: bool,
}

impl Roll {
    /// "12 of 40 nodes" (with "at most" from the limits), for the comment and the notes.
    pub fn nodes_words(&self) -> String {
        let bound = if self.source == NodeSource::Limits { "at most " } else { "" };
        format!("{bound}{} of {} nodes", self.drifting, self.running)
    }

    /// The roll's length, as a person reads it: "25 min", "3.5 h", "2.1 days".
    pub fn duration_words(&self) -> String {
        let s = self.duration_seconds as f64;
        if self.drifting == 0 {
            return "–".into();
        }
        if self.replaced < self.replayed {
            return format!("not finished after {:.1} days of replay ({} of {} replaced)", s / 86_400.0, self.replaced, self.replayed);
        }
        match s {
            s if s < 5_400.0 => format!("{:.0} min", s / 60.0),
            s if s < 172_800.0 => format!("{:.1} h", s / 3_600.0),
            s => format!("{:.1} days", s / 86_400.0),
        }
    }
}

/// The trace of a roll: `nodes` pods of one per node pinned to `nodepool` and to `node`'s type, each asking for all of
/// its accelerators (so that no two share a node and no topology needs solving), tolerating the NodePool's taints,
/// and the NodePool drifting at `drift_at`.
pub fn trace(nodepool: &Value, node: &PerNode, nodes: u32, drift_at: u64, horizon: u64, start_unix: i64) -> Trace {
    let name = nodepool.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    let tolerations: Vec<Value> = nodepool
        .pointer("/spec/template/spec/taints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| json!({"key": t["key"], "operator": "Exists", "effect": t["effect"]}))
        .collect();
    let amount = node.amount.to_string();
    let resources = json!({"requests": { node.resource.as_str(): amount, "cpu": "100m" }, "limits": { node.resource.as_str(): amount }});
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "replica", "namespace": "gpuplan-roll", "labels": {"app": "gpuplan-roll"}},
        "spec": {"nodeSelector": {"karpenter.sh/nodepool": name, "node.kubernetes.io/instance-type": node.instance_type}, "tolerations": tolerations,
            "containers": [{"name": "c", "image": "x", "resources": resources}]}});
    Trace {
        version: VERSION,
        cluster: "roll".into(),
        seed: 0,
        horizon_seconds: horizon,
        start_unix,
        workloads: [("gpuplan-roll/replica".to_string(), pod)].into(),
        startup_seconds: BTreeMap::new(),
        events: vec![Event::Replicas { at: 0, workload: "gpuplan-roll/replica".into(), replicas: nodes }, Event::Drift { at: drift_at, nodepool: name.into() }],
    }
}

/// The node a roll replays: the NodePool's type with the least of its accelerator (the most nodes under a limit).
#[derive(Debug, Clone, PartialEq)]
pub struct PerNode {
    pub instance_type: String,
    pub resource: String,
    /// Whole units of `resource` on one node.
    pub amount: i128,
}

/// When the roll's drift happens in its trace: once every node is Ready (one start-up after launch) and settled.
pub fn drift_at() -> u64 {
    DEFAULT_STARTUP_SECONDS + 600
}

/// The replay's length for `nodes`: one node at a time with its start-up, drain and the polls between, and a day
/// for a budget schedule to open; at most two weeks.
pub fn horizon(nodes: u32) -> u64 {
    (drift_at() + u64::from(nodes) * (DEFAULT_STARTUP_SECONDS + 900) + 86_400).min(14 * 86_400)
}

/// Replays the roll of `nodepool` on `objects` (its cluster's head NodePools and node classes), with `nodes` nodes
/// of `node` running when the change merges at `merge_unix`.
#[allow(clippy::too_many_arguments)]
pub fn replay(catalog: &Catalog, labels: &TypeLabels, objects: &[Value], nodepool: &str, node: &PerNode, (nodes, running): (u32, u32), source: NodeSource, merge_unix: i64) -> Option<Roll> {
    let pool = objects.iter().find(|o| o["kind"] == "NodePool" && o.pointer("/metadata/name").and_then(Value::as_str) == Some(nodepool))?;
    let count = nodes.min(MAX_NODES);
    let at = drift_at();
    let trace = trace(pool, node, count, at, horizon(count), merge_unix - at as i64);
    // One type pinned cannot meet a `minValues` on the types: the replay drops them (they choose among types, which
    // the pin has done; a roll's pace does not depend on them).
    let objects: Vec<Value> = objects.iter().cloned().map(without_min_values).collect();
    let objects = objects.as_slice();
    let timeline = replay_objects(catalog, objects, &trace, Mode::EventDriven);
    let prices = crate::forecast::summary::Prices::of_objects(catalog, labels, objects);
    let measured = measure(&timeline, nodepool, at, &|n| prices.of(n).usd_per_hour);
    // The head could not bring up what runs (a limit lowered below it): the roll is not what this replay shows.
    (measured.replayed == count).then_some(Roll { source, running, drifting: nodes, capped: nodes > MAX_NODES, ..measured })
}

fn without_min_values(mut object: Value) -> Value {
    if let Some(reqs) = object.pointer_mut("/spec/template/spec/requirements").and_then(Value::as_array_mut) {
        for r in reqs.iter_mut().filter_map(Value::as_object_mut) {
            r.remove("minValues");
        }
    }
    object
}

/// The roll's figures from a timeline whose `nodepool` drifted at `at`.
pub fn measure(timeline: &Timeline, nodepool: &str, at: u64, price: &dyn Fn(&crate::forecast::timeline::NodeLife) -> f64) -> Roll {
    let pool: Vec<_> = timeline.nodes.iter().filter(|n| n.nodepool == nodepool).collect();
    let old: Vec<_> = pool.iter().filter(|n| n.launched_at < at && n.terminated_at.is_none_or(|t| t >= at)).collect();
    let replaced: Vec<_> = old.iter().filter(|n| n.ended_by == Some(EndedBy::Drifted)).collect();
    let end = if replaced.len() == old.len() { replaced.iter().filter_map(|n| n.terminated_at).max().unwrap_or(at) } else { timeline.horizon_seconds };
    let within = |from: u64, to: Option<u64>| to.unwrap_or(timeline.horizon_seconds).min(end).saturating_sub(from.max(at));
    let spent: f64 = pool.iter().map(|n| price(n) * within(n.launched_at, n.terminated_at) as f64 / 3600.0).sum();
    let unchanged: f64 = old.iter().map(|n| price(n) * end.saturating_sub(at) as f64 / 3600.0).sum();
    // In flight: from the command (its decision) until its replacements are Ready (Karpenter then deletes the old
    // node, which drains apart), or until the old node is gone when it has none.
    let mut edges: Vec<(u64, i32)> = Vec::new();
    let node = |id: &String| timeline.nodes.iter().find(|n| &n.id == id);
    for d in timeline.decisions.iter().filter(|d| d.reason == EndedBy::Drifted) {
        let ready = d.replacements.iter().map(|id| node(id).and_then(|n| n.ready_at)).max();
        let gone = d.nodes.iter().map(|id| node(id).and_then(|n| n.terminated_at)).max();
        let until = if d.replacements.is_empty() { gone } else { ready }.flatten().unwrap_or(timeline.horizon_seconds);
        edges.extend([(d.at, 1), (until.max(d.at + 1), -1)]);
    }
    edges.sort();
    let (mut live, mut most) = (0i32, 0i32);
    for (_, step) in edges {
        live += step;
        most = most.max(live);
    }
    Roll {
        source: NodeSource::Limits,
        running: old.len() as u32,
        drifting: old.len() as u32,
        replayed: old.len() as u32,
        replaced: replaced.len() as u32,
        at_once: most as u32,
        duration_seconds: end - at,
        extra_usd: ((spent - unchanged).max(0.0) * 100.0).round() / 100.0,
        capped: false,
    }
}

/// The node a roll of `nodepool` replays ([`PerNode`]) and the most of them its limits allow (None for the count: no
/// limit bounds it), from `objects` holding the NodePool and node classes; None without an accelerator limit.
pub fn worst_case(catalog: &Catalog, labels: &TypeLabels, objects: &[Value], nodepool: &str) -> Option<(PerNode, Option<u32>)> {
    let own = objects.iter().filter(|o| o["kind"] != "NodePool" || o.pointer("/metadata/name").and_then(Value::as_str) == Some(nodepool));
    let manifests = crate::simulate::manifests::of_objects(own).ok()?;
    let prepared = crate::simulate::prepare(catalog, labels, &manifests, &manifests.node_pools);
    let template = prepared.templates().first()?;
    // One pod per node needs a resource no two pods share a node of: the accelerator the NodePool limits. A NodePool
    // without one is not replayed.
    let resource = template.pool.limits.keys().find(|k| k.contains('/')).cloned()?;
    // In milli-units, as the simulator keeps quantities.
    let smallest = template.types.iter().filter(|t| t.offerings.iter().any(|o| o.available)).filter_map(|t| Some((t.capacity.get(&resource).copied().filter(|c| *c > 0)?, t))).min_by_key(|(c, t)| (*c, t.name.clone()))?;
    let node = PerNode { instance_type: smallest.1.name.clone(), resource: resource.clone(), amount: smallest.0 / 1000 };
    let bound = |key: &str, limit: i128| -> Option<i128> {
        if key == "nodes" {
            return Some(limit / 1000);
        }
        Some(limit / smallest.1.capacity.get(key).copied().filter(|c| *c > 0)?)
    };
    let count = template.pool.limits.iter().filter_map(|(k, v)| bound(k, *v)).min().map(|n| n.clamp(0, i128::from(u32::MAX)) as u32);
    Some((node, count))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forecast::timeline::{Decision, NodeLife};

    fn node(id: &str, launched: u64, ended: Option<(u64, EndedBy)>) -> NodeLife {
        NodeLife {
            id: id.into(),
            nodepool: "p".into(),
            instance_type: "g6.xlarge".into(),
            capacity_type: "on-demand".into(),
            zone: "us-east-1a".into(),
            launched_at: launched,
            ready_at: Some(launched + 180),
            terminated_at: ended.map(|e| e.0),
            ended_by: ended.map(|e| e.1),
        }
    }

    /// Two old nodes replaced one after the other: each replacement runs beside its old node from the command until
    /// the old node is gone, so the extra cost is those overlaps, and at most one is in flight.
    #[test]
    fn a_roll_is_measured_from_the_timeline() {
        let timeline = Timeline {
            horizon_seconds: 10_000,
            nodes: vec![node("a", 0, Some((1_400, EndedBy::Drifted))), node("b", 0, Some((2_000, EndedBy::Drifted))), node("a2", 1_000, None), node("b2", 1_600, None)],
            pending_pod_seconds: BTreeMap::new(),
            decisions: vec![
                Decision { at: 1_000, reason: EndedBy::Drifted, nodes: vec!["a".into()], replacements: vec!["a2".into()] },
                Decision { at: 1_600, reason: EndedBy::Drifted, nodes: vec!["b".into()], replacements: vec!["b2".into()] },
            ],
        };
        let roll = measure(&timeline, "p", 780, &|_| 3.6);
        assert_eq!((roll.drifting, roll.replaced, roll.at_once, roll.duration_seconds), (2, 2, 1, 1_220));
        // a2 beside a from 1000 to 1400, b2 beside b from 1600 to 2000: 800 node-seconds at $3.6/h (after 1400, a2
        // runs in a's place, which is no extra).
        assert_eq!(roll.extra_usd, 0.8);
    }

    #[test]
    fn a_node_that_stays_drifted_runs_the_roll_to_the_end_of_the_replay() {
        let timeline = Timeline { horizon_seconds: 5_000, nodes: vec![node("a", 0, None)], ..Timeline::default() };
        let roll = measure(&timeline, "p", 780, &|_| 1.0);
        assert_eq!((roll.drifting, roll.replaced, roll.duration_seconds), (1, 0, 4_220));
    }
}
