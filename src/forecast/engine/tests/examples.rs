//! Every example cluster (the repository's profiles, compiled) over a day: its workloads (the simulate fixtures'
//! pods) on a daily pattern, Jobs on every LocalQueue, a spot interruption; the replay must be deterministic and its
//! timeline consistent.

use std::path::Path;

use serde_json::{json, Value};

use crate::compile::{compile, CompileOptions, Compilation};
use crate::forecast::engine::replay;
use crate::forecast::timeline::Timeline;
use crate::forecast::trace::{Event, Trace, START_UNIX, VERSION};

const DAY: u64 = 86_400;

/// The fixture's workloads as Pod objects (a Deployment's or StatefulSet's template), with their replicas.
fn workloads(cluster: &str) -> Vec<(String, Value, u32)> {
    let path = Path::new("tests/fixtures/simulate").join(format!("{cluster}.yaml"));
    let text = std::fs::read_to_string(&path).expect("the simulate fixture");
    let docs = crate::simulate::yaml::parse_docs(&path, &text).expect("the fixture parses");
    docs.iter()
        .filter_map(|d| {
            let v = &*d.value;
            let name = v.pointer("/metadata/name")?.as_str()?;
            let namespace = v.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("default");
            let (spec, labels, replicas) = match d.kind() {
                "Pod" => (v.get("spec")?, v.pointer("/metadata/labels"), 1),
                _ => (v.pointer("/spec/template/spec")?, v.pointer("/spec/template/metadata/labels"), v.pointer("/spec/replicas").and_then(Value::as_u64).unwrap_or(1) as u32),
            };
            let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels.cloned().unwrap_or(json!({"app": name}))}, "spec": spec});
            Some((format!("{namespace}/{name}"), pod, replicas))
        })
        .collect()
}

/// A day: each workload at its fixture replicas from 08:00 to 20:00 and a third of them (at least one) otherwise,
/// changing hourly; two-pod GPU Jobs on every LocalQueue every four hours; an interruption of half the g5.xlarge spot
/// nodes in us-east-1a at noon.
fn day(c: &Compilation, cluster: &str) -> Trace {
    let workloads = workloads(cluster);
    let mut events = Vec::new();
    for hour in 0..24 {
        for (key, _, replicas) in &workloads {
            let n = if (8..20).contains(&hour) { *replicas } else { (*replicas / 3).max(1) };
            events.push(Event::Replicas { at: hour * 3600, workload: key.clone(), replicas: n });
        }
    }
    let queues: Vec<String> = c
        .manifests_of(cluster)
        .iter()
        .filter(|m| m.kind() == "LocalQueue")
        .filter_map(|m| Some(format!("{}/{}", m.object.pointer("/metadata/namespace")?.as_str()?, m.object.pointer("/metadata/name")?.as_str()?)))
        .collect();
    let job_pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train", "labels": {"app": "train"}}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "4", "memory": "16Gi"}, "limits": {"nvidia.com/gpu": 1}}}]}});
    for (q, queue) in queues.iter().enumerate() {
        for k in 0..5u64 {
            let name = format!("train-{q}-{k}");
            events.push(Event::Job { at: 3600 + k * 4 * 3600, name, queue: queue.clone(), pods: 2, duration_seconds: 2 * 3600, pod: job_pod.clone() });
        }
    }
    events.push(Event::Interruption { at: 12 * 3600, instance_type: "g5.xlarge".into(), zone: "us-east-1a".into(), share: 0.5 });
    events.sort_by_key(Event::at);
    Trace { version: VERSION, cluster: cluster.into(), seed: 1, horizon_seconds: DAY, start_unix: START_UNIX, workloads: workloads.into_iter().map(|(k, v, _)| (k, v)).collect(), startup_seconds: Default::default(), events }
}

/// Every node's life is in order and within the horizon; decisions name nodes that exist and are in time order.
fn consistent(tl: &Timeline) {
    for n in &tl.nodes {
        assert!(n.launched_at < tl.horizon_seconds, "{n:?}");
        assert!(n.ready_at.is_none_or(|r| r >= n.launched_at), "{n:?}");
        assert!(n.terminated_at.is_none_or(|t| t >= n.launched_at && t <= tl.horizon_seconds), "{n:?}");
        assert_eq!(n.terminated_at.is_some(), n.ended_by.is_some(), "{n:?}");
    }
    assert!(tl.decisions.windows(2).all(|w| w[0].at <= w[1].at));
    assert!(tl.decisions.iter().flat_map(|d| d.nodes.iter().chain(&d.replacements)).all(|id| tl.nodes.iter().any(|n| &n.id == id)));
}

#[test]
fn every_example_cluster_replays_a_day() {
    let c = compile(&CompileOptions::default()).expect("the examples compile");
    for cluster in ["ml-prod", "ml-research", "ml-vision", "ml-batch-west"] {
        let trace = day(&c, cluster);
        let start = std::time::Instant::now();
        let tl = replay(&c, cluster, &trace);
        let took = start.elapsed();
        consistent(&tl);
        assert!(!tl.nodes.is_empty(), "{cluster}: the workloads need nodes");
        assert!(tl.nodes.iter().any(|n| n.terminated_at.is_some()), "{cluster}: the night's scale-down frees nodes: {tl:#?}");
        assert_eq!(tl, replay(&c, cluster, &trace), "{cluster}: the same trace gives the same timeline");
        eprintln!("{cluster}: {} nodes, {} decisions, replayed in {took:.2?}", tl.nodes.len(), tl.decisions.len());
    }
}
