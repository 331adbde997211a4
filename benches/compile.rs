//! `cargo bench --bench compile`: compiles 1,000 generated profiles (100 clusters × 10 profiles, a mix of every
//! preset, GPU model, budget and cap) against the full built-in us-east-1 catalog (1,395 types), end to end
//! (parse → solve → render → validate → files), and reports wall time per run and the process's peak RSS.
//!
//! A plain `harness = false` bench rather than criterion: the interesting number is one whole compile of a large
//! repository, repeated a few times, not a micro-benchmark; and it keeps the dev build lighter.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gpuplan::compile::{compile, CompileOptions};

const PROFILES: usize = 1_000;
const PROFILES_PER_CLUSTER: usize = 10;
const RUNS: usize = 5;

fn profile_text(i: usize) -> String {
    let cluster = format!("bench-{:03}", i / PROFILES_PER_CLUSTER);
    let presets = ["inference-spot", "inference-on-demand", "training-on-demand", "batch-spot", "general", "tiered"];
    let preset = presets[i % presets.len()];
    let gpu = match preset {
        "training-on-demand" => ["name \"H100\" \"A100\"", "per-node min=8"].join("; "),
        _ => [
            ["name \"A10G\" \"L4\" \"L40S\"", "memory-min \"22GiB\""].join("; "),
            ["name \"T4\"", "per-node max=1"].join("; "),
            ["memory-min \"16GiB\"", "per-node max=4"].join("; "),
        ][i % 3]
            .to_string(),
    };
    let tiers = if preset == "tiered" {
        "    tier \"first\" capacity=\"spot\" { gpu { name \"A10G\"; } }\n    tier \"second\" capacity=\"spot\" { gpu { name \"T4\"; } }\n    tier \"last\" capacity=\"on-demand\" { gpu { name \"A10G\"; } }\n"
    } else {
        ""
    };
    let gpu_block = if preset == "tiered" { String::new() } else { format!("    gpu {{ {gpu}; }}\n") };
    format!(
        "profile \"p{i:04}\" priority={priority}\ncluster \"{cluster}\" {{\n    region \"us-east-1\"\n    zones \"us-east-1a\" \"us-east-1b\" \"us-east-1c\"\n    ami \"al2023@v20251023\"\n}}\nbudget usd-per-hour={budget}\npool \"pool-{i:04}\" preset=\"{preset}\" {{\n{gpu_block}    max-accelerators {cap}\n{tiers}}}\n",
        priority = i % 100,
        budget = 200 + (i % 7) * 150,
        cap = 8 * (1 + i % 6),
    )
}

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn main() {
    // `cargo test --benches` runs bench binaries with --test... only run the full bench under `cargo bench`.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let profiles: PathBuf = dir.path().join("profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    for i in 0..PROFILES {
        std::fs::write(profiles.join(format!("p{i:04}.kdl")), profile_text(i)).unwrap();
    }
    let options = CompileOptions {
        profiles: vec![profiles.clone()],
        catalogs_dir: dir.path().join("catalogs"), // absent: the built-in us-east-1 catalog is used
        templates_dir: None,
    };

    let mut times: Vec<Duration> = Vec::new();
    let mut files = 0;
    let mut pools = 0;
    for _ in 0..RUNS {
        let start = Instant::now();
        let compiled = match compile(&options) {
            Ok(c) => c,
            Err(gpuplan::compile::CompileError::Profiles { diagnostics }) => {
                eprint!("{}", gpuplan::diagnostic::render_plain(&diagnostics));
                panic!("benchmark profiles must compile");
            }
            Err(e) => panic!("benchmark profiles must compile: {e}"),
        };
        let output = compiled.output_tree().files;
        times.push(start.elapsed());
        files = output.len();
        pools = compiled.plan.clusters.iter().map(|c| c.pools.len()).sum();
    }
    times.sort();
    let median = times[RUNS / 2];
    println!(
        "compile: {PROFILES} profiles, {} clusters, {pools} NodePools, {files} files; {RUNS} runs: min {:.1} ms, median {:.1} ms, max {:.1} ms; peak RSS {:.1} MiB",
        PROFILES / PROFILES_PER_CLUSTER,
        times[0].as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e3,
        times[RUNS - 1].as_secs_f64() * 1e3,
        peak_rss_mib().unwrap_or(f64::NAN),
    );
}
