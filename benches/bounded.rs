//! `cargo bench --bench bounded`: the inputs of issue 21 that used to take quadratic time or unbounded memory, run
//! through the whole `gpuplan` process, with the median wall time and peak RSS of each (from `wait4`'s rusage):
//!
//! - one profile with N pools and a budget (`compile`; it ends in E0153, since one cluster has room for 100 weights,
//!   after solving every pool — the part that was quadratic: 20,000 pools took 51 s);
//! - one profile with 20,000 errors (printing them was quadratic: 10 s);
//! - a malformed profile of 1,000 copies of kdl-rs#177's nested slashdashed blocks (exponential in kdl-rs 6.7.1's
//!   error recovery; linear in the patched copy gpuplan builds with, vendor/kdl);
//! - `adopt` of one NodePool with 10,000 requirements (quadratic: 14 s);
//! - `simulate` of a Deployment with `replicas: 2000000000` (6 GiB before the pod cap);
//!
//! and the largest inputs issue 42's limits allow (`src/limits.rs`), each at its maximum, with the one just past it
//! refused:
//! - a forecast whose queue is expected to draw the event limit's 20,000 Jobs in one run;
//! - a forecast of the simulated-day limit's 1,500 days (one cluster, 300 days × 5 seeds);
//! - a demand file whose CSV series hold the row limit's 2,000,000 rows;
//! - a `--templates` override whose loops burn the whole fuel, one that writes 100 × 100 MB (the rendered-bytes limit)
//!   and one that doubles a string forty times (the memory limit, lowered to 1 GiB);
//! - 20,000 pools (the pool limit) in one compile, and 20,001 refused;
//! - `diff --base` of a base out/ of 256 MiB (the base out/ limit: four files of 64 MiB, the input cap).
//!
//! Environment: `GPUPLAN_BENCH_POOLS` (default `20000,200000`), `GPUPLAN_BENCH_RUNS` (default 3). `cargo test --bench
//! bounded` runs the same program against the debug binary (the figures README.md quotes as debug).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs the command to completion; returns its wall time, peak RSS (MiB) and exit code.
fn run(cmd: &mut Command) -> (Duration, f64, i32) {
    let start = Instant::now();
    let child = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().expect("spawn gpuplan");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, writing into the two locals above.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    (start.elapsed(), usage.ru_maxrss as f64 / 1024.0, libc::WEXITSTATUS(status))
}

/// Median time and largest RSS over `runs`; the exit code must be `expected` every time.
fn measure(name: &str, runs: usize, expected: i32, mut make: impl FnMut() -> Command) {
    let mut times = Vec::new();
    let mut rss: f64 = 0.0;
    for _ in 0..runs {
        let (t, r, code) = run(&mut make());
        assert_eq!(code, expected, "{name}: exit code");
        times.push(t);
        rss = rss.max(r);
    }
    times.sort();
    println!("{name:<48} median {:>8.2} s   peak RSS {rss:>8.1} MiB", times[times.len() / 2].as_secs_f64());
}

const CLUSTER: &str = "profile \"p\"\ncluster \"c\" { region \"us-east-1\"; zones \"us-east-1a\" \"us-east-1b\"; ami \"al2023@v20251023\" }\n";

fn gpuplan() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gpuplan"))
}

/// The scratch repository of the limit cases: one cluster, one A10G pool with room for a busy queue, its catalog.
fn limit_repo(dir: &Path, demand: &str) -> std::path::PathBuf {
    let repo = dir.join(format!("repo{}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()));
    std::fs::create_dir_all(repo.join("profiles")).unwrap();
    std::fs::create_dir_all(repo.join("catalogs")).unwrap();
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs/us-east-1.json"), repo.join("catalogs/us-east-1.json")).unwrap();
    let profile = "cluster \"ml-prod\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\" \"us-east-1b\"\n    ami \"al2023@v20251023\"\n}\npool \"llm\" preset=\"inference-on-demand\" {\n    gpu { name \"A10G\"; per-node max=1 }\n    max-accelerators 64\n}\nqueue \"batch\" namespace=\"ml\" pool=\"llm\" {\n    gpus nominal=8\n}\n";
    std::fs::write(repo.join("profiles/ml.kdl"), profile).unwrap();
    std::fs::write(repo.join("gpuplan.demand.kdl"), demand).unwrap();
    let git = |args: &[&str]| assert!(Command::new("git").args(["-c", "user.name=b", "-c", "user.email=b@example.com"]).args(args).current_dir(&repo).status().unwrap().success());
    git(&["init", "-q"]);
    repo
}

fn in_repo(repo: &Path, args: &[&str]) -> Command {
    let mut c = gpuplan();
    c.args(args).current_dir(repo);
    c
}

/// Each limit of issue 42 at its maximum (exit 0), and just past it where that is cheap to show (exit 2).
fn limits(dir: &Path, runs: usize) {
    // 27.7 Jobs an hour × 720 hours = 20,000 expected: the event limit. 28 an hour is past it.
    let events = |rate: &str| format!("horizon \"30d\"\nseeds 1\ncluster \"ml-prod\" {{\n    queue \"batch\" {{\n        arrivals per-hour={rate}\n        gpus-per-pod 1\n        duration \"10m\"\n    }}\n}}\n");
    let repo = limit_repo(dir, &events("27.7"));
    measure("forecast: 20,000 expected Jobs (the event limit)", runs, 0, || in_repo(&repo, &["forecast"]));
    let repo = limit_repo(dir, &events("28"));
    measure("forecast: 20,160 expected Jobs (refused)", runs, 2, || in_repo(&repo, &["forecast"]));

    let days = "horizon \"300d\"\nseeds 5\ncluster \"ml-prod\" {\n    queue \"batch\" {\n        arrivals per-hour=0.5\n        duration \"1h\"\n    }\n}\n";
    let repo = limit_repo(dir, days);
    measure("forecast: 1,500 simulated days (the day limit)", runs, 0, || in_repo(&repo, &["forecast"]));

    let repo = limit_repo(dir, "horizon \"1d\"\nseeds 1\ncluster \"ml-prod\" {\n    queue \"batch\" {\n        arrivals per-hour=0.5 {\n            csv \"big.csv\"\n        }\n    }\n}\n");
    let rows: String = (0..2_000_000u64).map(|i| format!("{},1\n", 1_700_000_000 + i)).collect();
    std::fs::write(repo.join("big.csv"), rows).unwrap();
    measure("forecast: 2,000,000 CSV rows (the row limit)", runs, 0, || in_repo(&repo, &["forecast"]));

    let repo = limit_repo(dir, "cluster \"ml-prod\" {\n}\n");
    std::fs::create_dir_all(repo.join("templates")).unwrap();
    let template = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/nodepool.yaml.j2")).unwrap();
    std::fs::write(repo.join("templates/nodepool.yaml.j2"), format!("{{% for i in range(100000) %}}{{% for j in range(100000) %}}{{% endfor %}}{{% endfor %}}{template}")).unwrap();
    measure("compile: a template loop burning the whole fuel (refused)", runs, 2, || in_repo(&repo, &["compile", "--templates", "templates"]));
    std::fs::write(repo.join("templates/nodepool.yaml.j2"), format!("{{% for i in range(100) %}}{{{{ \"x\" * 100000000 }}}}{{% endfor %}}{template}")).unwrap();
    measure("compile: a template writing 100 × 100 MB (refused at 256 MiB)", runs, 2, || in_repo(&repo, &["compile", "--templates", "templates"]));
    let doubling = "{% set ns = namespace(s=\"x\") %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}";
    std::fs::write(repo.join("templates/nodepool.yaml.j2"), format!("{doubling}{template}")).unwrap();
    measure("compile: a template doubling a string 40 times (memory 1 GiB, refused)", runs, 2, || {
        let mut c = in_repo(&repo, &["compile", "--templates", "templates"]);
        c.env("GPUPLAN_MAX_MEMORY_BYTES", (1u64 << 30).to_string());
        c
    });

    let pools = |n: usize| -> String { (0..n).map(|i| format!("pool \"p{i}\" preset=\"inference-on-demand\" {{ gpu {{ name \"A10G\" }}; max-accelerators 8 }}\n")).collect() };
    let repo = limit_repo(dir, "cluster \"ml-prod\" {\n}\n");
    std::fs::write(repo.join("profiles/pools.kdl"), format!("profile \"many\"\ncluster \"ml-prod\"\n{}", pools(19_999))).unwrap();
    measure("compile: 20,000 pools (the pool limit)", runs, 2, || in_repo(&repo, &["compile", "--check"]));
    std::fs::write(repo.join("profiles/pools.kdl"), format!("profile \"many\"\ncluster \"ml-prod\"\n{}", pools(20_000))).unwrap();
    measure("compile: 20,001 pools (refused)", runs, 2, || in_repo(&repo, &["compile", "--check"]));

    let repo = limit_repo(dir, "cluster \"ml-prod\" {\n}\n");
    std::fs::create_dir_all(repo.join("out/ml-prod")).unwrap();
    for i in 0..4 {
        // 1,024 bytes a line, 65,536 lines: each file exactly the 64 MiB input cap, the four exactly the 256 MiB limit.
        let line = format!("# {}\n", "x".repeat(1021));
        std::fs::write(repo.join(format!("out/ml-prod/big{i}.yaml")), line.repeat(64 << 10)).unwrap();
    }
    let git = |args: &[&str]| assert!(Command::new("git").args(["-c", "user.name=b", "-c", "user.email=b@example.com"]).args(args).current_dir(&repo).status().unwrap().success());
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    measure("diff --base: a 256 MiB base out/ (the base out/ limit)", runs, 0, || in_repo(&repo, &["diff", "--base", "HEAD", "--format", "json"]));
}

fn main() {
    let runs: usize = std::env::var("GPUPLAN_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let dir = tempfile::tempdir().expect("tempdir");
    limits(dir.path(), runs);
    let sizes: Vec<usize> = std::env::var("GPUPLAN_BENCH_POOLS").unwrap_or_else(|_| "20000,200000".into()).split(',').filter_map(|s| s.trim().parse().ok()).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    let catalogs = Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs");

    for n in sizes {
        let pools: String = (0..n).map(|i| format!("pool \"p{i}\" preset=\"batch-spot\" {{ gpu {{ memory-min \"16GiB\" }} }}\n")).collect();
        let file = dir.join(format!("pools{n}.kdl"));
        std::fs::write(&file, format!("{CLUSTER}budget usd-per-hour=10000000\n{pools}")).unwrap();
        measure(&format!("compile: {n} pools with a budget in one file"), runs, 2, || {
            let mut c = gpuplan();
            c.arg("compile").arg(&file).arg("--catalogs").arg(&catalogs).arg("--out").arg(dir.join("out"));
            c
        });
    }

    let errors: String = (0..20_000).map(|i| format!("bogus{i} 1\n")).collect();
    let file = dir.join("errors.kdl");
    std::fs::write(&file, format!("{CLUSTER}pool \"g\" {{ max-accelerators 8 }}\n{errors}")).unwrap();
    measure("compile: 20,000 errors in one file", runs, 2, || {
        let mut c = gpuplan();
        c.arg("compile").arg(&file).arg("--catalogs").arg(&catalogs).arg("--out").arg(dir.join("out"));
        c
    });

    // kdl-rs#177's two shapes at the nesting limit (16), each around a stray `=`: published kdl-rs took about 4 s a
    // copy; gpuplan's patched copy (vendor/kdl) recovers in linear time.
    let nested = |level: &str| format!("{}=\n{}", level.repeat(16), "}\n".repeat(16));
    let malformed = format!("{}{}", nested("a /-{\n"), nested("/- a {\n b\n")).repeat(1000);
    let file = dir.join("malformed.kdl");
    std::fs::write(&file, malformed).unwrap();
    measure("compile: 1,000 copies of kdl-rs#177's malformed nested slashdashes (E0101)", runs, 2, || {
        let mut c = gpuplan();
        c.arg("compile").arg(&file).arg("--catalogs").arg(&catalogs).arg("--out").arg(dir.join("out"));
        c
    });

    let keys = ["karpenter.k8s.aws/instance-family", "karpenter.sh/capacity-type", "karpenter.k8s.aws/instance-gpu-count", "topology.kubernetes.io/zone"];
    let values = ["g5", "on-demand", "1", "us-east-1a"];
    let requirements: String = (0..10_000).map(|i| format!("        - {{key: {}, operator: In, values: [\"{}\"]}}\n", keys[i % 4], values[i % 4])).collect();
    let node_pool = format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: gpu\nspec:\n  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}}\n      requirements:\n{requirements}"
    );
    let file = dir.join("nodepool.yaml");
    std::fs::write(&file, node_pool).unwrap();
    measure("adopt: one NodePool with 10,000 requirements", runs, 0, || {
        let mut c = gpuplan();
        c.arg("adopt").arg(&file).arg("--into").arg(dir.join("adopted")).arg("--catalogs").arg(&catalogs);
        c
    });

    let pods = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w\nspec:\n  replicas: 2000000000\n  template:\n    spec:\n      containers:\n        - name: c\n          resources: {limits: {nvidia.com/gpu: 1}}\n";
    let file = dir.join("pods.yaml");
    std::fs::write(&file, pods).unwrap();
    let manifests = Path::new(env!("CARGO_MANIFEST_DIR")).join("out/ml-prod");
    measure("simulate: replicas: 2000000000 (refused)", runs, 2, || {
        let mut c = gpuplan();
        c.arg("simulate").arg("--pods").arg(&file).arg("--manifests").arg(&manifests).arg("--catalogs").arg(&catalogs);
        c
    });
}
