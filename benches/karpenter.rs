//! `cargo bench --bench karpenter`: `gpuplan simulate` beside Karpenter v1.14.1's own scheduler (the conformance
//! oracle, `conformance/karpenter/cmd/oracle`, a drop-in with the same arguments and JSON) on the same generated
//! scenarios — 100 NodePools over general and GPU families against the full us-east-1 catalog (1,395 types), with
//! 1,000, 5,000 and 20,000 pods. One run of each program per size, alternated, whole processes (reading YAML,
//! loading the catalog, scheduling, printing JSON). Prints pods per second of each, the ratio (goal: gpuplan ≥ 10×),
//! and whether the outputs agree: per pod, scheduled or pending and the NodePool; the grouping of pods into
//! NodeClaims. Needs Go (the oracle is built into target/conformance/); without it the bench says so and stops.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "support/simulate_input.rs"]
mod input;

const POOLS: usize = 100;
const SIZES: [usize; 3] = [1_000, 5_000, 20_000];


fn oracle() -> Option<PathBuf> {
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/conformance/karpenter-oracle-bench");
    let built = Command::new("go")
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/karpenter"))
        .args(["build", "-mod=readonly", "-trimpath", "-o"])
        .arg(&out)
        .arg("./cmd/oracle")
        .status();
    match built {
        Ok(s) if s.success() => Some(out),
        other => {
            println!("karpenter bench skipped: the oracle did not build ({other:?}); it needs Go 1.26");
            None
        }
    }
}

/// One whole `simulate … --format json` run of a program, its wall time and its JSON.
fn run(program: &Path, manifests: &Path, pods: &Path) -> (Duration, Value) {
    let catalogs = Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs");
    let start = Instant::now();
    let out = Command::new(program)
        .args(["simulate", "--manifests"])
        .arg(manifests)
        .arg("--pods")
        .arg(pods)
        .arg("--catalogs")
        .arg(&catalogs)
        .args(["--format", "json"])
        .output()
        .expect("run simulate");
    let elapsed = start.elapsed();
    assert!(out.status.success(), "{} failed: {}", program.display(), String::from_utf8_lossy(&out.stderr));
    (elapsed, serde_json::from_slice(&out.stdout).expect("simulate prints JSON"))
}

/// What both must agree on: each pod's NodePool (or pending), and the pods of each NodeClaim.
fn decisions(report: &Value) -> (BTreeMap<String, String>, BTreeSet<Vec<String>>) {
    let mut placed = BTreeMap::new();
    let mut groups = BTreeSet::new();
    for nc in report["nodeclaims"].as_array().into_iter().flatten() {
        let pods: Vec<String> = nc["pods"].as_array().into_iter().flatten().filter_map(|p| p.as_str().map(str::to_string)).collect();
        for p in &pods {
            placed.insert(p.clone(), nc["nodepool"].as_str().unwrap_or_default().to_string());
        }
        let mut sorted = pods;
        sorted.sort();
        groups.insert(sorted);
    }
    for p in report["pending"].as_array().into_iter().flatten() {
        placed.insert(p["pod"].as_str().unwrap_or_default().to_string(), "(pending)".into());
    }
    (placed, groups)
}

/// Keeps a disagreement's inputs and both outputs under target/conformance/bench-<n>/ and says where.
fn keep_reproducer(n: usize, manifests: &Path, pods: &Path, ours: &Value, theirs: &Value) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/conformance/bench-{n}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(manifests, dir.join("manifests.yaml")).unwrap();
    std::fs::copy(pods, dir.join("pods.yaml")).unwrap();
    std::fs::write(dir.join("gpuplan.json"), serde_json::to_string_pretty(ours).unwrap()).unwrap();
    std::fs::write(dir.join("karpenter.json"), serde_json::to_string_pretty(theirs).unwrap()).unwrap();
    println!("  outputs differ at {n} pods: inputs and both outputs in {}", dir.display());
}

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let Some(oracle) = oracle() else { return };
    let gpuplan = PathBuf::from(env!("CARGO_BIN_EXE_gpuplan"));
    let dir = tempfile::tempdir().expect("temp dir");
    let manifests = dir.path().join("manifests.yaml");
    std::fs::write(&manifests, input::manifests(POOLS)).unwrap();
    for n in SIZES {
        let pods = dir.path().join(format!("pods-{n}.yaml"));
        std::fs::write(&pods, input::pods(n, POOLS)).unwrap();
        // Alternated: gpuplan, then Karpenter, on the same files.
        let (ours, ours_json) = run(&gpuplan, &manifests, &pods);
        let (theirs, theirs_json) = run(&oracle, &manifests, &pods);
        let rate = |d: Duration| n as f64 / d.as_secs_f64();
        let (a, b) = (decisions(&ours_json), decisions(&theirs_json));
        let placements = a.0.iter().filter(|(pod, pool)| b.0.get(*pod) != Some(pool)).count();
        if a != b {
            keep_reproducer(n, &manifests, &pods, &ours_json, &theirs_json);
        }
        println!(
            "{n} pods × {POOLS} NodePools: gpuplan {ours:.2?} ({:.0} pods/s), Karpenter v1.14.1 {theirs:.2?} ({:.0} pods/s), {:.1}× ; outputs {} ({placements} pod placements differ, NodeClaim groupings {})",
            rate(ours),
            rate(theirs),
            theirs.as_secs_f64() / ours.as_secs_f64(),
            if a == b { "agree" } else { "differ" },
            if a.1 == b.1 { "equal" } else { "differ" },
        );
    }
}
