//! Drift, decided by Karpenter v1.14.1's own code (`oracle drift`, conformance/karpenter/cmd/oracle/drift.go: the CRDs'
//! defaulting, `NewNodeClaimTemplate`, the AWS provider's instance labels, the NodePool and EC2NodeClass hash
//! controllers and the NodeClaim disruption controller) against gpuplan's `emit::diff::drift`.
//!
//! The changes are generated: every NodePool and EC2NodeClass of the examples' out/ and of the adopt corpus
//! (tests/fixtures/adopt-corpus, placeholders filled as its tests fill them; a class is found in its NodePool's
//! directory, and at least 10 of the NodePools must be out/'s), mutated in one to four fields drawn over
//! every field gpuplan emits and then some (the template's labels, annotations, taints, startup taints, durations,
//! node class reference and requirements; the NodePool's limits, weight and disruption; the class's role, tags, block
//! devices, metadata options, kubelet, AMI, subnet, security group, capacity reservation and placement group terms,
//! and the rest of its spec). A change the CRDs reject is drawn again (the API server would refuse it; the count is
//! printed). For each change, up to three of the nodes the base could run (type × zone × capacity type, drawn) are
//! judged on both sides: the reason of the NodeClaim's `Drifted` condition, or none. Every disagreement fails.
//!
//! The seed is drawn when the test runs and printed, unless `GPUPLAN_DRIFT_SEED` names one; `GPUPLAN_DRIFT_CHANGES`
//! sets how many (default 2,000). The last line is `agreement: A/N changes` (what `conformance/run --drift` prints);
//! disagreements' inputs are written under target/conformance/drift-disagreements/seed-<seed>/.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use gpuplan::catalog::Catalog;
use gpuplan::emit::diff::drift::{Comparison, Node, Side, base_nodes};
// A NodePool whose requirements name a label gpuplan's catalog does not carry (`drift::UNCARRIED_LABELS`: the oracle's
// types have it empty, gpuplan's none, real nodes a real value) is judged by neither side: gpuplan reports a
// requirement verdict on one as not proven, and the sources leave such a NodePool out (the count is printed).
use gpuplan::simulate::instances::TypeLabels;
use gpuplan::validate::Validator;
use serde_json::{Value, json};

use super::go;

/// A NodePool with the class it names, from a file gpuplan wrote or one of the corpus.
#[derive(Clone)]
struct Source {
    origin: String,
    region: String,
    pool: Value,
    class: Value,
}

fn sources() -> Vec<Source> {
    let root = go::root();
    let mut docs: Vec<(String, Value)> = Vec::new();
    let mut files = Vec::new();
    collect_yaml(&root.join("out"), &mut files);
    collect_yaml(&root.join("tests/fixtures/adopt-corpus"), &mut files);
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.replace("${CLUSTER_NAME}", "demo").replace("${KARPENTER_NODE_IAM_ROLE_NAME}", "KarpenterNodeRole-demo").replace("${AZ}", "us-east-1a");
        let Ok(values) = serde_saphyr::from_multiple::<Value>(&text) else { continue };
        let origin = path.strip_prefix(&root).unwrap().display().to_string();
        docs.extend(values.into_iter().filter(|v| v.is_object()).map(|v| (origin.clone(), v)));
    }
    let kind = |v: &Value| (v["apiVersion"].as_str().unwrap_or_default().to_owned(), v["kind"].as_str().unwrap_or_default().to_owned());
    let validator = Validator::builtin();
    let mut out = Vec::new();
    for (origin, pool) in &docs {
        if kind(pool) != ("karpenter.sh/v1".into(), "NodePool".into()) || pool.pointer("/spec/replicas").is_some() {
            continue;
        }
        let class_name = pool.pointer("/spec/template/spec/nodeClassRef/name").and_then(Value::as_str);
        // The class beside the NodePool: in the same cluster directory of out/ (one object per file) or the same
        // corpus entry.
        let dir = |o: &str| Path::new(o).parent().map(Path::to_path_buf);
        let class = docs.iter().find(|(o, c)| dir(o) == dir(origin) && kind(c) == ("karpenter.k8s.aws/v1".into(), "EC2NodeClass".into()) && c["metadata"]["name"].as_str() == class_name);
        let Some((_, class)) = class else { continue };
        if !validator.validate(pool).is_empty() || !validator.validate(class).is_empty() || names_uncarried_label(pool) {
            continue;
        }
        let region = pool.pointer("/metadata/annotations/gpuplan.dev~1catalog").and_then(Value::as_str).and_then(|c| c.split('@').next()).unwrap_or("us-east-1").to_owned();
        out.push(Source { origin: origin.clone(), region, pool: pool.clone(), class: class.clone() });
    }
    out
}

fn names_uncarried_label(pool: &Value) -> bool {
    pool.pointer("/spec/template/spec/requirements").and_then(Value::as_array).into_iter().flatten().any(|r| r["key"].as_str().is_some_and(|k| gpuplan::emit::diff::drift::UNCARRIED_LABELS.contains(&k)))
}

fn collect_yaml(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect_yaml(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            out.push(p);
        }
    }
}

/// The conformance tests' generator (reach.rs: xorshift64*), with what these mutations draw.
use super::reach::Rng;

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick_of<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// One mutation of the head NodePool or class; returns what it did.
type Mutation = fn(&mut Rng, &mut Value, &mut Value) -> String;

const DURATIONS: &[&str] = &["Never", "720h", "336h", "168h", "1h30m", "2h", "30m", "90s", "0s"];
const TAINT_KEYS: &[&str] = &["nvidia.com/gpu", "example.com/team", "workload", "aws.amazon.com/neuron"];
const EFFECTS: &[&str] = &["NoSchedule", "NoExecute", "PreferNoSchedule"];

fn template_spec(pool: &mut Value) -> &mut serde_json::Map<String, Value> {
    pool.pointer_mut("/spec/template/spec").and_then(Value::as_object_mut).expect("a NodePool has spec.template.spec")
}

fn map_at<'v>(v: &'v mut Value, path: &[&str]) -> &'v mut serde_json::Map<String, Value> {
    let mut at = v;
    for key in path {
        if !at.get(*key).is_some_and(Value::is_object) {
            at[*key] = json!({});
        }
        at = at.get_mut(*key).unwrap();
    }
    at.as_object_mut().unwrap()
}

fn list_at<'v>(v: &'v mut Value, path: &[&str]) -> &'v mut Vec<Value> {
    let (last, parents) = path.split_last().unwrap();
    let parent = map_at(v, parents);
    if !parent.get(*last).is_some_and(Value::is_array) {
        parent.insert((*last).to_owned(), json!([]));
    }
    parent.get_mut(*last).unwrap().as_array_mut().unwrap()
}

fn edit_map(rng: &mut Rng, map: &mut serde_json::Map<String, Value>, what: &str) -> String {
    let keys: Vec<String> = map.keys().cloned().collect();
    match rng.below(3) {
        0 if !keys.is_empty() => {
            let k = rng.pick_of(&keys).clone();
            map.remove(&k);
            format!("{what}: removed {k}")
        }
        1 if !keys.is_empty() => {
            let k = rng.pick_of(&keys).clone();
            map.insert(k.clone(), json!(format!("v{}", rng.below(3))));
            format!("{what}: {k} changed")
        }
        _ => {
            let k = format!("example.com/k{}", rng.below(3));
            map.insert(k.clone(), json!(format!("v{}", rng.below(3))));
            format!("{what}: set {k}")
        }
    }
}

fn edit_taints(rng: &mut Rng, list: &mut Vec<Value>, what: &str) -> String {
    match rng.below(6) {
        0 if !list.is_empty() => {
            let i = rng.below(list.len());
            list.remove(i);
            format!("{what}: removed #{i}")
        }
        1 if !list.is_empty() => {
            list.reverse();
            format!("{what}: reordered")
        }
        2 if !list.is_empty() => {
            let i = rng.below(list.len());
            let t = list[i].clone();
            list.push(t);
            format!("{what}: #{i} written twice")
        }
        3 if !list.is_empty() => {
            let i = rng.below(list.len());
            list[i]["effect"] = json!(rng.pick_of(EFFECTS));
            format!("{what}: #{i} effect")
        }
        4 if !list.is_empty() => {
            let i = rng.below(list.len());
            list[i]["value"] = json!(format!("v{}", rng.below(2)));
            format!("{what}: #{i} value")
        }
        _ => {
            let mut t = json!({"key": rng.pick_of(TAINT_KEYS), "effect": rng.pick_of(EFFECTS)});
            if rng.below(2) == 0 {
                t["value"] = json!("true");
            }
            list.push(t);
            format!("{what}: added")
        }
    }
}

const POOL_MUTATIONS: &[Mutation] = &[
    |rng, pool, _| edit_map(rng, map_at(pool, &["spec", "template", "metadata", "labels"]), "template labels"),
    |rng, pool, _| edit_map(rng, map_at(pool, &["spec", "template", "metadata", "annotations"]), "template annotations"),
    |rng, pool, _| edit_taints(rng, list_at(pool, &["spec", "template", "spec", "taints"]), "taints"),
    |rng, pool, _| edit_taints(rng, list_at(pool, &["spec", "template", "spec", "startupTaints"]), "startupTaints"),
    |rng, pool, _| duration(rng, template_spec(pool), "expireAfter", true),
    |rng, pool, _| duration(rng, template_spec(pool), "terminationGracePeriod", false),
    |rng, pool, class| {
        let name = format!("{}-v{}", class["metadata"]["name"].as_str().unwrap_or("class"), rng.below(2) + 2);
        pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] = json!(name);
        class["metadata"]["name"] = json!(name);
        "nodeClassRef.name (and the class renamed)".into()
    },
    |rng, pool, _| requirement(rng, list_at(pool, &["spec", "template", "spec", "requirements"])),
    |rng, pool, _| requirement(rng, list_at(pool, &["spec", "template", "spec", "requirements"])),
    |rng, pool, _| requirement(rng, list_at(pool, &["spec", "template", "spec", "requirements"])),
    |rng, pool, _| {
        let limits = map_at(pool, &["spec", "limits"]);
        let k = rng.pick_of(&["nvidia.com/gpu", "cpu", "memory"]).to_string();
        limits.insert(k.clone(), json!(rng.pick_of(&["8", "16", "1000", "4000Gi"])));
        format!("limits.{k}")
    },
    |rng, pool, _| {
        pool["spec"]["weight"] = json!(rng.below(100) + 1);
        "weight".into()
    },
    |rng, pool, _| {
        let d = map_at(pool, &["spec", "disruption"]);
        match rng.below(3) {
            0 => d.insert("consolidateAfter".into(), json!(rng.pick_of(&["Never", "30s", "5m", "1h"]))),
            1 => d.insert("consolidationPolicy".into(), json!(rng.pick_of(&["WhenEmpty", "WhenEmptyOrUnderutilized"]))),
            _ => d.insert("budgets".into(), json!([{"nodes": rng.pick_of(&["10%", "1", "0"])}])),
        };
        "disruption".into()
    },
    |rng, pool, _| edit_map(rng, map_at(pool, &["metadata", "annotations"]), "NodePool annotations"),
];

fn duration(rng: &mut Rng, spec: &mut serde_json::Map<String, Value>, key: &str, never_ok: bool) -> String {
    let choices: Vec<&str> = DURATIONS.iter().copied().filter(|d| never_ok || *d != "Never").collect();
    if rng.below(5) == 0 {
        spec.remove(key);
        return format!("{key} removed (the CRD's default)");
    }
    let d = *rng.pick_of(&choices);
    spec.insert(key.into(), json!(d));
    format!("{key}={d}")
}

fn requirement(rng: &mut Rng, reqs: &mut Vec<Value>) -> String {
    let keys = ["node.kubernetes.io/instance-type", "karpenter.sh/capacity-type", "topology.kubernetes.io/zone", "karpenter.k8s.aws/instance-family", "kubernetes.io/arch"];
    match rng.below(6) {
        0 if !reqs.is_empty() => {
            let i = rng.below(reqs.len());
            let r = reqs.remove(i);
            format!("requirement {} removed", r["key"])
        }
        1 if !reqs.is_empty() => {
            let i = rng.below(reqs.len());
            if let Some(values) = reqs[i]["values"].as_array_mut().filter(|v| v.len() > 1) {
                let j = rng.below(values.len());
                values.remove(j);
                return format!("requirement {}: a value removed", reqs[i]["key"]);
            }
            reqs[i]["operator"] = json!(if reqs[i]["operator"] == "In" { "NotIn" } else { "In" });
            format!("requirement {}: operator flipped", reqs[i]["key"])
        }
        2 if !reqs.is_empty() => {
            let i = rng.below(reqs.len());
            if let Some(values) = reqs[i]["values"].as_array_mut() {
                values.push(json!(rng.pick_of(&["g6e.xlarge", "spot", "on-demand", "us-east-1b", "p5", "arm64", "p4d.24xlarge"])));
            }
            format!("requirement {}: a value added", reqs[i]["key"])
        }
        3 => {
            let (key, op, values) = *rng.pick_of(&[
                ("karpenter.k8s.aws/instance-generation", "Gt", &["4"][..]),
                ("karpenter.k8s.aws/instance-gpu-count", "Gt", &["0"][..]),
                ("karpenter.k8s.aws/instance-gpu-count", "Lt", &["5"][..]),
                ("example.com/team", "In", &["ml"][..]),
                ("example.com/team", "Exists", &[][..]),
                ("example.com/team", "DoesNotExist", &[][..]),
                ("karpenter.k8s.aws/instance-local-nvme", "Exists", &[][..]),
            ]);
            let mut r = json!({"key": key, "operator": op});
            if !values.is_empty() {
                r["values"] = json!(values);
            }
            reqs.push(r);
            format!("requirement {key} {op} added")
        }
        _ => {
            let key = *rng.pick_of(&keys);
            let options: &[&[&str]] = match key {
                "karpenter.sh/capacity-type" => &[&["spot"], &["on-demand"], &["spot", "on-demand"], &["reserved", "on-demand"]],
                "topology.kubernetes.io/zone" => &[&["us-east-1a"], &["us-east-1b", "us-east-1c"]],
                "kubernetes.io/arch" => &[&["amd64"], &["arm64"]],
                "karpenter.k8s.aws/instance-family" => &[&["g6e"], &["p5", "p4d"], &["g5", "g6", "g6e"]],
                _ => &[&["g6e.xlarge", "g6e.2xlarge"], &["p5.48xlarge"]],
            };
            let values = *rng.pick_of(options);
            reqs.retain(|r| r["key"] != key);
            reqs.push(json!({"key": key, "operator": "In", "values": values}));
            format!("requirement {key} In {values:?}")
        }
    }
}

const CLASS_MUTATIONS: &[Mutation] = &[
    |rng, _, class| {
        class["spec"]["role"] = json!(format!("KarpenterNodeRole-{}", rng.below(3)));
        class["spec"].as_object_mut().unwrap().remove("instanceProfile");
        "role".into()
    },
    |rng, _, class| edit_map(rng, map_at(class, &["spec", "tags"]), "tags"),
    |rng, _, class| {
        let bdms = list_at(class, &["spec", "blockDeviceMappings"]);
        if bdms.is_empty() {
            bdms.push(json!({"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi", "volumeType": "gp3"}}));
            return "blockDeviceMappings added".into();
        }
        let i = rng.below(bdms.len());
        let ebs = map_at(&mut bdms[i], &["ebs"]);
        let options = [
            ("volumeSize", json!("100Gi")),
            ("volumeSize", json!("500Gi")),
            ("iops", json!(16000)),
            ("throughput", json!(1000)),
            ("volumeType", json!("io2")),
            ("encrypted", json!(false)),
            ("deleteOnTermination", json!(false)),
        ];
        let (k, v) = rng.pick_of(&options);
        ebs.insert((*k).into(), v.clone());
        format!("blockDeviceMappings[{i}].ebs.{k}")
    },
    |rng, _, class| {
        let bdms = list_at(class, &["spec", "blockDeviceMappings"]);
        if let Some(b) = bdms.first_mut() {
            b["rootVolume"] = json!(rng.below(2) == 0);
            return "blockDeviceMappings[0].rootVolume".into();
        }
        "blockDeviceMappings: none to mark".into()
    },
    |rng, _, class| {
        let m = map_at(class, &["spec", "metadataOptions"]);
        match rng.below(3) {
            0 => {
                m.insert("httpPutResponseHopLimit".into(), json!(rng.below(3) + 1));
                "metadataOptions.httpPutResponseHopLimit".into()
            }
            1 => {
                m.insert("httpTokens".into(), json!(rng.pick_of(&["required", "optional"])));
                "metadataOptions.httpTokens".into()
            }
            _ => {
                class["spec"].as_object_mut().unwrap().remove("metadataOptions");
                "metadataOptions removed (the CRD's default)".into()
            }
        }
    },
    |rng, _, class| {
        let k = map_at(class, &["spec", "kubelet"]);
        match rng.below(3) {
            0 => k.insert("maxPods".into(), json!(rng.pick_of(&[58, 110]))),
            1 => k.insert("systemReserved".into(), json!({"cpu": rng.pick_of(&["100m", "200m"])})),
            _ => k.insert("imageGCHighThresholdPercent".into(), json!(85)),
        };
        "kubelet".into()
    },
    |rng, _, class| {
        let alias = *rng.pick_of(&["al2023@latest", "al2023@v20251023", "al2023@v20251111", "bottlerocket@latest", "al2@latest"]);
        class["spec"]["amiSelectorTerms"] = json!([{"alias": alias}]);
        format!("amiSelectorTerms alias {alias}")
    },
    |rng, _, class| {
        class["spec"]["subnetSelectorTerms"] = json!([{"tags": {"karpenter.sh/discovery": format!("c{}", rng.below(2))}}]);
        "subnetSelectorTerms".into()
    },
    |rng, _, class| {
        class["spec"]["securityGroupSelectorTerms"] = json!([{"tags": {"karpenter.sh/discovery": format!("c{}", rng.below(2))}}]);
        "securityGroupSelectorTerms".into()
    },
    |rng, _, class| {
        class["spec"]["capacityReservationSelectorTerms"] = json!([{"id": format!("cr-0123456789abcdef{}", rng.below(2))}]);
        "capacityReservationSelectorTerms".into()
    },
    |rng, _, class| {
        class["spec"]["placementGroupSelector"] = json!({"name": format!("pg-{}", rng.below(2))});
        "placementGroupSelector".into()
    },
    |rng, _, class| {
        let spec = class["spec"].as_object_mut().unwrap();
        let options = [
            ("detailedMonitoring", json!(true)),
            ("associatePublicIPAddress", json!(false)),
            ("instanceStorePolicy", json!("RAID0")),
            ("userData", json!("#!/bin/bash\necho hi\n")),
        ];
        let (k, v) = rng.pick_of(&options);
        if spec.get(*k) == Some(v) {
            spec.remove(*k);
            return format!("{k} removed");
        }
        spec.insert((*k).into(), v.clone());
        format!("{k} set")
    },
    |rng, _, class| edit_map(rng, map_at(class, &["metadata", "labels"]), "class labels"),
];

struct Change {
    id: String,
    source: usize,
    what: Vec<String>,
    pool: Value,
    class: Value,
    nodes: Vec<Node>,
}

/// Change `i` of a seed: one to four mutations of a source, redrawn until the CRDs accept both objects.
fn change(seed: u64, i: u64, sources: &[Source], nodes_of: &[Vec<Node>], rejected: &mut usize) -> Change {
    let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i + 1).wrapping_mul(0xD1B5_4A32_D192_ED03) | 1);
    for _ in 0..100 {
        let s = rng.below(sources.len());
        let (mut pool, mut class) = (sources[s].pool.clone(), sources[s].class.clone());
        let what: Vec<String> = (0..rng.below(4) + 1)
            .map(|_| {
                let m = if rng.below(2) == 0 { *rng.pick_of(POOL_MUTATIONS) } else { *rng.pick_of(CLASS_MUTATIONS) };
                m(&mut rng, &mut pool, &mut class)
            })
            .collect();
        let v = Validator::builtin();
        if !v.validate(&pool).is_empty() || !v.validate(&class).is_empty() {
            *rejected += 1;
            continue;
        }
        let all = &nodes_of[s];
        let nodes = (0..3.min(all.len())).map(|_| all[rng.below(all.len())].clone()).collect();
        return Change { id: format!("{i:05}"), source: s, what, pool, class, nodes };
    }
    panic!("change {i}: 100 draws the CRDs all rejected");
}

#[test]
fn drift_verdicts_are_karpenters() {
    let Some(oracle) = go::program("karpenter", "oracle") else { return };
    let seed = std::env::var("GPUPLAN_DRIFT_SEED").ok().map(|s| s.trim().parse::<u64>().expect("GPUPLAN_DRIFT_SEED is a number")).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 % 1_000_000
    });
    let count: u64 = std::env::var("GPUPLAN_DRIFT_CHANGES").ok().map_or(2000, |s| s.trim().parse().expect("GPUPLAN_DRIFT_CHANGES is a number"));
    println!("drift seed {seed} ({count} changes; GPUPLAN_DRIFT_SEED={seed} reproduces them)");
    let root = go::root();
    let started = std::time::Instant::now();
    let sources = sources();
    let mut catalogs: BTreeMap<String, (Catalog, TypeLabels)> = BTreeMap::new();
    for s in &sources {
        catalogs.entry(s.region.clone()).or_insert_with(|| {
            let c = Catalog::load(&root.join("catalogs"), &s.region).unwrap();
            let l = TypeLabels::new(&c);
            (c, l)
        });
    }
    let nodes_of: Vec<Vec<Node>> = sources.iter().map(|s| {
        let (c, l) = &catalogs[&s.region];
        base_nodes(Side { pool: &s.pool, class: Some(&s.class) }, c, l)
    }).collect();
    let usable: Vec<usize> = (0..sources.len()).filter(|&i| !nodes_of[i].is_empty()).collect();
    let (sources, nodes_of): (Vec<Source>, Vec<Vec<Node>>) = usable.iter().map(|&i| (sources[i].clone(), nodes_of[i].clone())).unzip();
    assert!(sources.len() >= 20, "only {} NodePools with nodes to drift", sources.len());
    let of_out = sources.iter().filter(|s| s.origin.starts_with("out/")).count();
    assert!(of_out >= 10, "only {of_out} of gpuplan's own NodePools (out/) among the sources");
    println!("{} NodePools with their EC2NodeClasses, {of_out} of them from out/ ({} nodes they could run)", sources.len(), nodes_of.iter().map(Vec::len).sum::<usize>());

    let mut rejected = 0;
    let changes: Vec<Change> = (0..count).map(|i| change(seed, i, &sources, &nodes_of, &mut rejected)).collect();
    println!("{rejected} drawn change(s) the CRDs rejected were drawn again ({:.1} s)", started.elapsed().as_secs_f64());
    let dir = root.join(format!("target/conformance/drift-seed-{seed}"));
    std::fs::create_dir_all(&dir).unwrap();
    let input: Vec<Value> = changes.iter().map(|c| {
        let s = &sources[c.source];
        json!({
            "id": c.id, "region": s.region,
            "base": {"nodepool": s.pool, "nodeclass": s.class},
            "head": {"nodepool": c.pool, "nodeclass": c.class},
            "nodes": c.nodes.iter().map(|n| json!({"instance_type": n.instance_type, "zone": n.zone, "capacity_type": n.capacity_type, "reservation_id": n.reservation_id})).collect::<Vec<_>>(),
        })
    }).collect();
    let cases_path = dir.join("cases.json");
    std::fs::write(&cases_path, serde_json::to_vec(&input).unwrap()).unwrap();
    let out = Command::new(&oracle)
        .current_dir(&root)
        .args(["drift", "--cases"]).arg(&cases_path)
        .args(["--crds", "src/crds/karpenter", "--catalogs", "catalogs"])
        .output().unwrap();
    assert!(out.status.success(), "oracle drift failed: {}", String::from_utf8_lossy(&out.stderr));
    let verdicts: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    println!("Karpenter's verdicts in ({:.1} s)", started.elapsed().as_secs_f64());
    assert_eq!(verdicts.len(), changes.len());

    let bad_dir = root.join(format!("target/conformance/drift-disagreements/seed-{seed}"));
    let _ = std::fs::remove_dir_all(&bad_dir);
    let (mut agree, mut drifting, mut judged, mut not_judged) = (0, 0, 0, 0);
    let mut by_reason: BTreeMap<String, usize> = BTreeMap::new();
    let mut disagreements = Vec::new();
    for ((c, v), case) in changes.iter().zip(&verdicts).zip(&input) {
        let s = &sources[c.source];
        assert!(v["error"].is_null(), "change {} ({}): the oracle could not judge it: {}", c.id, s.origin, v["error"]);
        let cmp = Comparison::new(Side { pool: &s.pool, class: Some(&s.class) }, Side { pool: &c.pool, class: Some(&c.class) });
        if cmp.uncarried_labels {
            // A change of a requirement whose node value Karpenter drew at random (`Requirement.Any()`): gpuplan
            // says not proven, and the oracle's answer depends on its draw.
            not_judged += 1;
            continue;
        }
        let ours: Vec<&'static str> = c.nodes.iter().map(|n| cmp.rules(n).into_iter().find(|r| r.proven()).map_or("", |r| r.reason())).collect();
        let theirs: Vec<String> = v["reasons"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_owned()).collect();
        judged += c.nodes.len();
        for r in &theirs {
            *by_reason.entry(if r.is_empty() { "(no drift)".into() } else { r.clone() }).or_default() += 1;
        }
        drifting += theirs.iter().filter(|r| !r.is_empty()).count();
        if ours.iter().zip(&theirs).all(|(a, b)| a == b) {
            agree += 1;
            continue;
        }
        let text = format!("change {} of {} [{}]: gpuplan {ours:?}, Karpenter {theirs:?}; gpuplan's fields: pool {:?}, class {:?}, resolved {:?}", c.id, s.origin, c.what.join("; "), cmp.pool_fields, cmp.class_fields, cmp.resolved);
        std::fs::create_dir_all(&bad_dir).unwrap();
        std::fs::write(bad_dir.join(format!("{}.json", c.id)), serde_json::to_vec_pretty(&json!({"why": text, "case": case})).unwrap()).unwrap();
        disagreements.push(text);
    }
    println!("gpuplan's verdicts compared ({:.1} s)", started.elapsed().as_secs_f64());
    println!("{judged} nodes judged, {drifting} drifted by Karpenter: {by_reason:?}");
    for d in disagreements.iter().take(20) {
        println!("disagreement: {d}");
    }
    println!("{not_judged} change(s) of a requirement on a label Karpenter draws a value for: gpuplan says not proven, not compared");
    println!("agreement: {agree}/{} changes", changes.len() - not_judged);
    assert!(disagreements.is_empty(), "{} disagreement(s); inputs under {}", disagreements.len(), bad_dir.display());
}
