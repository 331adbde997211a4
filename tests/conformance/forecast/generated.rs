//! Generated forecast cases: a cluster (1–3 NodePools with weights, cpu limits, every consolidation policy including
//! Balanced, consolidateAfter, budgets with and without schedules, expireAfter, spot and on-demand) and a day of
//! demand (1–4 workloads with replica steps, spot interruptions, shortages, start-up delays), from a seed.

use std::collections::BTreeMap;

use gpuplan::forecast::trace::{Event, Trace, VERSION};
use serde_json::json;

use super::super::karpenter::scenarios::Rng;

pub const HORIZON: u64 = 24 * 3600;

pub struct Case {
    pub manifests: String,
    pub trace: Trace,
}

const NODE_CLASS: &str = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  amiSelectorTerms:\n  - alias: al2023@latest\n";
const FAMILIES: [&str; 5] = ["m5", "c5", "r5", "m6i", "c6i"];
const SIZES: [&str; 3] = ["large", "xlarge", "2xlarge"];

struct Pool {
    name: String,
    families: Vec<&'static str>,
    capacity: Vec<&'static str>,
}

fn node_pool(r: &mut Rng, i: usize) -> (Pool, String) {
    let name = format!("p{i}");
    let mut families = r.subset(&FAMILIES, 2);
    if families.is_empty() {
        families.push(r.pick(&FAMILIES));
    }
    let capacity = match r.below(3) {
        0 => vec!["on-demand"],
        1 => vec!["spot"],
        _ => vec!["spot", "on-demand"],
    };
    let policy = r.pick(&["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"]);
    let after = r.pick(&["0s", "30s", "1m", "5m", "15m"]);
    let budgets = r.pick(&[
        "",
        "    budgets:\n    - nodes: \"10%\"\n",
        "    budgets:\n    - nodes: \"1\"\n",
        "    budgets:\n    - nodes: \"1\"\n    - nodes: \"0\"\n      schedule: \"0 9 * * *\"\n      duration: 8h\n",
    ]);
    let expire = r.pick(&["Never", "720h", "6h", "12h"]);
    let weight = if r.chance(40) { format!("  weight: {}\n", 10 * (1 + r.below(5))) } else { String::new() };
    let limits = if r.chance(30) { format!("  limits:\n    cpu: \"{}\"\n", 16 * (1 + r.below(4))) } else { String::new() };
    let yaml = format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\nspec:\n{weight}{limits}  disruption:\n    consolidationPolicy: {policy}\n    consolidateAfter: {after}\n{budgets}  template:\n    metadata:\n      labels:\n        pool: {name}\n    spec:\n      expireAfter: {expire}\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n      requirements:\n      - key: karpenter.k8s.aws/instance-family\n        operator: In\n        values: [{}]\n      - key: karpenter.k8s.aws/instance-size\n        operator: In\n        values: [{}]\n      - key: karpenter.sh/capacity-type\n        operator: In\n        values: [{}]\n      - key: topology.kubernetes.io/zone\n        operator: In\n        values: [us-east-1a]\n",
        families.join(", "),
        SIZES.join(", "),
        capacity.join(", "),
    );
    (Pool { name, families, capacity }, yaml)
}

fn workload(r: &mut Rng, pools: &[Pool], name: &str) -> serde_json::Value {
    let cpu = r.pick(&[250, 500, 1000, 1500]);
    let memory = r.pick(&[1, 2, 4]);
    let selector = if r.chance(50) { json!({"pool": pools[r.below(pools.len())].name}) } else { json!({}) };
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "apps", "labels": {"app": name}},
        "spec": {"nodeSelector": selector, "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": format!("{cpu}m"), "memory": format!("{memory}Gi")}}}]}})
}

/// Case `index` of `seed`.
pub fn case(seed: u64, index: u64) -> Case {
    let mut r = Rng::new(seed.wrapping_mul(1_000_003).wrapping_add(index));
    let mut yaml = vec![NODE_CLASS.to_string()];
    let mut pools = Vec::new();
    for i in 0..1 + r.below(3) {
        let (p, y) = node_pool(&mut r, i);
        pools.push(p);
        yaml.push(y);
    }
    let mut workloads = BTreeMap::new();
    let mut events = Vec::new();
    for w in 0..1 + r.below(4) {
        let key = format!("apps/w{w}");
        workloads.insert(key.clone(), workload(&mut r, &pools, &format!("w{w}")));
        let mut at = 0;
        while at < HORIZON {
            events.push(Event::Replicas { at, workload: key.clone(), replicas: r.below(9) as u32 });
            at += 1800 + 60 * r.below(150) as u64;
        }
    }
    for p in pools.iter().filter(|p| p.capacity.contains(&"spot")) {
        for _ in 0..r.below(3) {
            let instance_type = format!("{}.{}", r.pick(&p.families), r.pick(&SIZES));
            events.push(Event::Interruption { at: r.below(HORIZON as usize) as u64, instance_type, zone: "us-east-1a".into(), share: r.pick(&[0.5, 1.0]) });
        }
    }
    if r.chance(30) {
        let p = &pools[r.below(pools.len())];
        let at = r.below(HORIZON as usize) as u64;
        let instance_type = format!("{}.{}", r.pick(&p.families), r.pick(&SIZES));
        events.push(Event::Shortage { at, until: at + 3600, instance_type, zone: "us-east-1a".into(), capacity_type: r.pick(&p.capacity).into() });
    }
    events.sort_by_key(Event::at);
    let startup_seconds = pools.iter().map(|p| (p.name.clone(), r.pick(&[60, 120, 180]))).collect();
    let trace = Trace { version: VERSION, start_unix: gpuplan::forecast::trace::START_UNIX, cluster: format!("seed-{seed}-{index}"), seed, horizon_seconds: HORIZON, workloads, startup_seconds, events };
    Case { manifests: yaml.join("---\n"), trace }
}
