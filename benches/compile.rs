//! `cargo bench --bench compile`: the whole `gpuplan` process (the release binary Cargo builds for this bench),
//! as CI runs it, on repositories of growing size: the bundled examples, then 100, 1,000 and 10,000 generated
//! profiles (10 per cluster, a mix of every preset, GPU model, budget and cap) against the full built-in
//! us-east-1 catalog (1,395 types). For each size it runs `compile` (writes out/) and `compile --check` (on a
//! current out/), `RUNS` times each, and reports the median / min / max wall time and the peak RSS of the child
//! process (from `wait4`'s rusage), plus the growth factor between sizes: time and memory must grow linearly.
//!
//! Environment: `GPUPLAN_BENCH_SIZES` (default `examples,100,1000,10000`), `GPUPLAN_BENCH_RUNS` (default 5).
//!
//! A plain `harness = false` bench rather than criterion: the interesting number is one whole compile of a large
//! repository, repeated a few times, not a micro-benchmark.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "support/profiles.rs"]
mod profiles;
use profiles::profile_text;

/// Runs the command to completion; returns its wall time and peak RSS (MiB). Panics if it fails.
fn run(cmd: &mut Command, expect_success: bool) -> (Duration, f64) {
    // stderr (lint warnings) goes to a file: a pipe nobody reads while we wait would fill up and block the child.
    let log = tempfile::tempfile().expect("stderr file");
    let start = Instant::now();
    let child = cmd.stdout(std::process::Stdio::null()).stderr(log.try_clone().expect("stderr file")).spawn().expect("spawn gpuplan");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, writing into the two locals above.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let elapsed = start.elapsed();
    assert_eq!(waited, pid, "wait4 failed");
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    if ok != expect_success {
        use std::io::{Read, Seek};
        let mut stderr = String::new();
        let mut log = log;
        let _ = log.rewind().and_then(|_| log.read_to_string(&mut stderr));
        panic!("{cmd:?} exited with {status}: {stderr}");
    }
    (elapsed, usage.ru_maxrss as f64 / 1024.0)
}

struct Stats {
    median: Duration,
    min: Duration,
    max: Duration,
    rss: f64,
}

fn measure(runs: usize, mut make: impl FnMut() -> Command) -> Stats {
    let mut times = Vec::new();
    let mut rss: f64 = 0.0;
    for _ in 0..runs {
        let (t, r) = run(&mut make(), true);
        times.push(t);
        rss = rss.max(r);
    }
    times.sort();
    Stats { median: times[runs / 2], min: times[0], max: times[runs - 1], rss }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    // `cargo test --benches` runs bench binaries with --test... only run the full bench under `cargo bench`.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let binary = env!("CARGO_BIN_EXE_gpuplan");
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let sizes = std::env::var("GPUPLAN_BENCH_SIZES").unwrap_or_else(|_| "examples,100,1000,10000".into());
    let runs: usize = std::env::var("GPUPLAN_BENCH_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
    let mut previous: Option<(usize, Stats)> = None;
    for size in sizes.split(',') {
        let dir = tempfile::tempdir().expect("temp dir");
        let (profiles, catalogs, count): (PathBuf, PathBuf, usize) = if size == "examples" {
            (repo.join("profiles"), repo.join("catalogs"), 0)
        } else {
            let n: usize = size.parse().expect("a size is `examples` or a number");
            let profiles = dir.path().join("profiles");
            std::fs::create_dir_all(&profiles).unwrap();
            for i in 0..n {
                std::fs::write(profiles.join(format!("p{i:05}.kdl")), profile_text(i)).unwrap();
            }
            // No catalogs/ directory: the built-in us-east-1 catalog is used.
            (profiles, dir.path().join("catalogs"), n)
        };
        let out = dir.path().join("out");
        let command = |check: bool| {
            let mut c = Command::new(binary);
            c.arg("compile").arg(&profiles).arg("--out").arg(&out).arg("--catalogs").arg(&catalogs).arg("--max-catalog-age-days").arg("100000");
            if check {
                c.arg("--check");
            }
            c
        };
        let write = measure(runs, || command(false));
        let check = measure(runs, || command(true));
        let files = walk(&out);
        println!(
            "{size:>8} profiles, {files:>6} files: compile median {:>8.1} ms (min {:.1}, max {:.1}), peak RSS {:>6.1} MiB | compile --check median {:>8.1} ms (min {:.1}, max {:.1}), peak RSS {:>6.1} MiB",
            ms(write.median),
            ms(write.min),
            ms(write.max),
            write.rss,
            ms(check.median),
            ms(check.min),
            ms(check.max),
            check.rss,
        );
        if let Some((prev_count, prev)) = &previous
            && count > 0
            && *prev_count > 0
        {
            println!(
                "{:>8}  {}× the profiles: {:.2}× the time, {:.2}× the memory (compile --check)",
                "",
                count / prev_count,
                check.median.as_secs_f64() / prev.median.as_secs_f64(),
                check.rss / prev.rss
            );
        }
        previous = Some((count, check));
    }
}

fn walk(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| if e.path().is_dir() { walk(&e.path()) } else { 1 })
                .sum()
        })
        .unwrap_or(0)
}
