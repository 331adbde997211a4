//! `gpuplan simulate`'s Kueue admission against Kueue's own scheduler (conformance/kueue: sigs.k8s.io/kueue v0.19.2,
//! the version of tests/fixtures/shared/schemas/kueue). Both read the same ResourceFlavors, ClusterQueues, LocalQueues, priority
//! classes and queued Jobs; per Workload they must agree on admitted or not, and on the flavor of each resource.
//! Inputs: the README's example (tests/fixtures/kueue) and generated scenarios (flat cohorts, nominal quotas,
//! borrowing and lending limits, several flavors with taints and nodeLabels, StrictFIFO and BestEffortFIFO,
//! whenCanBorrow, namespaceSelectors, WorkloadPriorityClasses and PriorityClasses, gangs of 1–8 pods, resources the
//! ClusterQueue does not cover). `GPUPLAN_KUEUE_SEED` / `GPUPLAN_KUEUE_CASES` explore other corpora.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use gpuplan::catalog::Catalog;
use gpuplan::simulate;

use super::go;
use super::karpenter::scenarios::Rng;

type Verdicts = BTreeMap<String, (bool, BTreeMap<String, String>)>;

/// Kueue's verdicts for a case (manifests.yaml, pods.yaml in `dir`).
fn kueue(oracle: &Path, dir: &Path) -> Verdicts {
    let out = Command::new(oracle).arg("--manifests").arg(dir.join("manifests.yaml")).arg("--pods").arg(dir.join("pods.yaml")).output().unwrap();
    assert!(out.status.success(), "oracle failed on {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let flavors = w["flavors"].as_object().into_iter().flatten().map(|(r, f)| (r.clone(), f.as_str().unwrap().to_string())).collect();
            (w["name"].as_str().unwrap().to_string(), (w["admitted"].as_bool().unwrap(), flavors))
        })
        .collect()
}

/// gpuplan's verdicts for the same files.
fn gpuplan(catalog: &Catalog, dir: &Path) -> Verdicts {
    let docs = simulate::yaml::read_docs(&[dir.join("manifests.yaml")]).unwrap();
    let m = simulate::manifests::manifests(&docs).unwrap_or_else(|e| panic!("{e}"));
    let pods = simulate::pods::pods(&simulate::yaml::read_docs(&[dir.join("pods.yaml")]).unwrap()).unwrap();
    let report = simulate::run(catalog, &m, &pods, &[]);
    report.admission.map(|a| a.workloads).unwrap_or_default().into_iter().map(|w| (w.name, (w.admitted, w.flavors))).collect()
}

/// The differences between the two, one line each.
fn differences(name: &str, ours: &Verdicts, theirs: &Verdicts) -> String {
    let mut out = String::new();
    for (w, theirs) in theirs {
        match ours.get(w) {
            Some(ours) if ours == theirs => {}
            ours => {
                let _ = writeln!(out, "{name}: {w}: Kueue {theirs:?}, gpuplan {ours:?}");
            }
        }
    }
    out
}

fn oracle() -> Option<PathBuf> {
    go::program("kueue", "oracle")
}

fn case_dir(name: &str) -> PathBuf {
    let dir = go::root().join("target/conformance/kueue-cases").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// The README's example: finetune (urgent) and pretrain (borrowing) admitted, eval pending.
#[test]
fn readme_example_admits_as_kueue_admits() {
    let Some(oracle) = oracle() else { return };
    let dir = case_dir("readme");
    std::fs::copy(go::root().join("tests/fixtures/kueue/queues.yaml"), dir.join("manifests.yaml")).unwrap();
    std::fs::copy(go::root().join("tests/fixtures/kueue/jobs.yaml"), dir.join("pods.yaml")).unwrap();
    let catalog = Catalog::load(&go::root().join("catalogs"), "us-east-1").unwrap();
    let (ours, theirs) = (gpuplan(&catalog, &dir), kueue(&oracle, &dir));
    assert_eq!(theirs.values().filter(|v| v.0).count(), 2, "{theirs:?}");
    let diff = differences("readme", &ours, &theirs);
    assert!(diff.is_empty(), "gpuplan simulate and Kueue disagree:\n{diff}");
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().map_or(default, |v| v.trim().parse().unwrap_or_else(|_| panic!("{name}={v:?} is not a number")))
}

// Generated scenarios: every Workload's admission and flavors as Kueue decides them.
#[test]
fn generated_queues_admit_as_kueue_admits() {
    let Some(oracle) = oracle() else { return };
    let (seed, cases) = (env_number("GPUPLAN_KUEUE_SEED", 20), env_number("GPUPLAN_KUEUE_CASES", 60));
    let catalog = Catalog::load(&go::root().join("catalogs"), "us-east-1").unwrap();
    let mut report = String::new();
    let (mut admitted, mut pending) = (0, 0);
    for i in 0..cases {
        let mut r = Rng::new(seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let (manifests, pods) = scenario(&mut r);
        let name = format!("seed-{seed}-case-{i:04}");
        let dir = case_dir(&name);
        std::fs::write(dir.join("manifests.yaml"), manifests).unwrap();
        std::fs::write(dir.join("pods.yaml"), pods).unwrap();
        let (ours, theirs) = (gpuplan(&catalog, &dir), kueue(&oracle, &dir));
        admitted += theirs.values().filter(|v| v.0).count();
        pending += theirs.values().filter(|v| !v.0).count();
        report.push_str(&differences(&name, &ours, &theirs));
    }
    eprintln!("kueue conformance: {cases} cases, {admitted} Workloads admitted and {pending} pending by Kueue");
    assert!(admitted > 0 && pending > 0, "the corpus exercises both outcomes");
    assert!(report.is_empty(), "gpuplan simulate and Kueue disagree (inputs under target/conformance/kueue-cases):\n{report}");
}

const FLAVORS: [&str; 3] = ["f0", "f1", "f2"];

/// One scenario: (manifests, pods) YAML.
fn scenario(r: &mut Rng) -> (String, String) {
    let mut m = String::new();
    let tainted = r.chance(30).then(|| r.pick(&FLAVORS));
    for f in FLAVORS {
        let taint = if Some(f) == tainted { "  nodeTaints:\n  - key: example.com/reserved\n    value: x\n    effect: NoSchedule\n" } else { "" };
        let _ = write!(m, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: {f}\nspec:\n  nodeLabels:\n    example.com/tier: {f}\n{taint}---\n");
    }
    m.push_str("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: high\nvalue: 100\n---\n");
    m.push_str("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: pod-high\nvalue: 50\n---\n");
    let queues = 1 + r.below(3);
    for q in 0..queues {
        m.push_str(&cluster_queue(r, q));
        let _ = write!(m, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: lq\n  namespace: team-{q}\nspec:\n  clusterQueue: cq{q}\n---\n");
    }
    let mut pods = Vec::new();
    for j in 0..(2 + r.below(9)) {
        pods.push(job(r, j, queues));
    }
    (m, pods.join("---\n"))
}

fn cluster_queue(r: &mut Rng, q: usize) -> String {
    let mut s = format!("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: cq{q}\nspec:\n");
    if !r.chance(8) {
        s.push_str("  namespaceSelector: {}\n");
    }
    if r.chance(70) {
        s.push_str("  cohortName: shared\n");
    }
    if r.chance(20) {
        s.push_str("  queueingStrategy: StrictFIFO\n");
    }
    if r.chance(25) {
        s.push_str("  flavorFungibility:\n    whenCanBorrow: TryNextFlavor\n");
    }
    let covered: &[&str] = if r.chance(30) { &["cpu", "nvidia.com/gpu"] } else { &["nvidia.com/gpu"] };
    let _ = write!(s, "  resourceGroups:\n  - coveredResources: [{}]\n    flavors:\n", covered.join(", "));
    for f in r.subset(&FLAVORS, 3) {
        let _ = write!(s, "    - name: {f}\n      resources:\n");
        for res in covered {
            let nominal = r.below(if *res == "cpu" { 40 } else { 17 });
            let _ = write!(s, "      - name: {res}\n        nominalQuota: {nominal}\n");
            if r.chance(40) {
                let _ = writeln!(s, "        borrowingLimit: {}", r.below(9));
            }
            if r.chance(30) {
                let _ = writeln!(s, "        lendingLimit: {}", r.below(nominal + 1));
            }
        }
    }
    s
}

fn job(r: &mut Rng, j: usize, queues: usize) -> String {
    let queue = if r.chance(5) { "missing".to_string() } else { "lq".to_string() };
    let namespace = format!("team-{}", r.below(queues));
    let priority = if r.chance(30) { "    kueue.x-k8s.io/priority-class: high\n" } else { "" };
    let pod_priority = if r.chance(20) { "      priorityClassName: pod-high\n" } else { "" };
    let selector = if r.chance(25) { format!("      nodeSelector:\n        example.com/tier: {}\n", r.pick(&FLAVORS)) } else { String::new() };
    let toleration = if r.chance(40) { "      tolerations:\n      - key: example.com/reserved\n        operator: Exists\n" } else { "" };
    let cpu = if r.chance(30) { format!("          requests:\n            cpu: \"{}\"\n", 1 + r.below(4)) } else { String::new() };
    let (pods, gpus) = (1 + r.below(8), 1 + r.below(2));
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: job-{j}\n  namespace: {namespace}\n  labels:\n    kueue.x-k8s.io/queue-name: {queue}\n{priority}spec:\n  parallelism: {pods}\n  completions: {pods}\n  template:\n    spec:\n      restartPolicy: Never\n{pod_priority}{selector}{toleration}      containers:\n      - name: c\n        resources:\n{cpu}          limits:\n            nvidia.com/gpu: {gpus}\n"
    )
}
