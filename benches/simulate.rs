//! `cargo bench --bench simulate`: `gpuplan simulate` end to end (read YAML, load the catalog, schedule, launch,
//! report) on (1) each example cluster's out/ with its pods from tests/fixtures/simulate/, and (2) 1,000 pods on
//! 100 hand-written NodePools (general and GPU families, taints, weights, limits) against the full us-east-1
//! catalog (1,395 types). Reports the best and median wall time of several runs. Targets (issue 10, release
//! build): examples < 100 ms, 1,000 × 100 < 2 s.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gpuplan::simulate::{report, simulate, Format, Options};

#[path = "support/simulate_input.rs"]
mod input;

const POOLS: usize = 100;
const PODS: usize = 1_000;
const RUNS: usize = 5;

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
    Options { manifests: vec![manifests], pods: vec![pods], region: None, catalogs_dir: PathBuf::from("catalogs"), unavailable: Vec::new(), daemonsets: Vec::new(), add_on_daemonsets: true, node_daemons: None }
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
    std::fs::write(&manifests, input::manifests(POOLS)).unwrap();
    let pods = dir.path().join("pods.yaml");
    std::fs::write(&pods, input::pods(PODS, POOLS)).unwrap();
    let (best, median, summary) = time(&options(manifests, pods));
    println!("{PODS} pods x {POOLS} NodePools: best {best:.1?}, median {median:.1?} ({summary})");
}
