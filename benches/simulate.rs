//! `cargo bench --bench simulate`: `gpuplan simulate` end to end (read YAML, load the catalog, schedule, launch,
//! report) on (1) each example cluster's out/ with its pods from tests/fixtures/simulate/, and (2) 1,000 pods on
//! 100 hand-written NodePools (general and GPU families, taints, weights, limits) against the full us-east-1
//! catalog (1,395 types). Reports the best and median wall time of several runs. Targets (issue 10, release
//! build): examples < 100 ms, 1,000 × 100 < 2 s.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gpuplan::simulate::{report, simulate, Format, Options};

const POOLS: usize = 100;
const PODS: usize = 1_000;
const RUNS: usize = 5;

fn pool(i: usize) -> String {
    let families = [("m5", false), ("c6i", false), ("r6i", false), ("g5", true), ("g6", true), ("g4dn", true), ("m7g", false), ("p4d", true)];
    let (family, gpu) = families[i % families.len()];
    let taint = if gpu { "      - key: nvidia.com/gpu\n        effect: NoSchedule\n" } else { "" };
    let limits = if gpu { format!("    nvidia.com/gpu: \"{}\"\n", 16 + i % 5 * 8) } else { format!("    cpu: \"{}\"\n", 200 + i % 7 * 100) };
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: pool-{i:03}\nspec:\n  weight: {w}\n  limits:\n{limits}  template:\n    metadata:\n      labels:\n        team: t{team}\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n      requirements:\n      - key: karpenter.k8s.aws/instance-family\n        operator: In\n        values: [{family}]\n      - key: karpenter.sh/capacity-type\n        operator: In\n        values: [spot, on-demand]\n      taints:\n      - key: team\n        value: t{team}\n        effect: NoSchedule\n{taint}",
        w = i % 10 * 10,
        team = i / 2,
    )
}

fn pod(i: usize) -> String {
    let team = (i * 7) % (POOLS / 2);
    let gpu = [3, 4, 5, 7].contains(&((team * 2) % 8)) && i % 3 == 0;
    let limits = if gpu { "      limits:\n        nvidia.com/gpu: 1\n" } else { "" };
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-{i:04}\n  namespace: bench\nspec:\n  nodeSelector:\n    team: t{team}\n  tolerations:\n  - key: team\n    value: t{team}\n  - key: nvidia.com/gpu\n    operator: Exists\n  containers:\n  - name: c\n    resources:\n      requests:\n        cpu: \"{cpu}m\"\n        memory: {mem}Mi\n{limits}",
        cpu = 250 + (i % 13) * 250,
        mem = 512 + (i % 11) * 1024,
    )
}

fn time(options: &Options) -> (Duration, Duration, String) {
    let mut times = Vec::new();
    let mut summary = String::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let r = simulate(options).expect("simulate");
        let _ = report::render(&r, Format::Json);
        times.push(start.elapsed());
        summary = format!("{} nodeclaims, {} pending, ${:.2}/h", r.nodeclaims.len(), r.pending.len(), r.usd_per_hour);
    }
    times.sort();
    (times[0], times[RUNS / 2], summary)
}

fn options(manifests: PathBuf, pods: PathBuf) -> Options {
    Options { manifests: vec![manifests], pods: vec![pods], region: None, catalogs_dir: PathBuf::from("catalogs"), unavailable: Vec::new() }
}

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    for cluster in ["ml-batch-west", "ml-prod", "ml-research", "ml-vision"] {
        let pods = Path::new("tests/fixtures/simulate").join(format!("{cluster}.yaml"));
        let (best, median, summary) = time(&options(Path::new("out").join(cluster), pods));
        println!("examples out/{cluster}: best {best:.1?}, median {median:.1?} ({summary})");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let manifests = dir.path().join("manifests.yaml");
    let class = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  amiSelectorTerms:\n  - alias: al2023@latest\n";
    let pools: Vec<String> = std::iter::once(class.to_string()).chain((0..POOLS).map(pool)).collect();
    std::fs::write(&manifests, pools.join("---\n")).unwrap();
    let pods = dir.path().join("pods.yaml");
    std::fs::write(&pods, (0..PODS).map(pod).collect::<Vec<_>>().join("---\n")).unwrap();
    let (best, median, summary) = time(&options(manifests, pods));
    println!("{PODS} pods x {POOLS} NodePools: best {best:.1?}, median {median:.1?} ({summary})");
}
