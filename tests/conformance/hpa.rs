//! gpuplan's HPA port (`src/forecast/draw/hpa.rs`) against Kubernetes v1.37.2's own controller code
//! (`conformance/consumers/cmd/hpa`: the ReplicaCalculator and the HorizontalController's stabilisation, scaling
//! policies and scale-event store, on a synctest fake clock; see its doc for the glue it ports rather than runs).
//! Both replay the same metric series, one sync every 15 s, and must set the same replicas at every sync.
//!
//! The corpus: `GPUPLAN_HPA_CASES` (default 60) traces of 24 h (5,760 syncs each) from `GPUPLAN_HPA_SEED` (default
//! 34): a daily pattern with random trough, peak, hours, ramp and noise; Pods (GPU utilisation per pod) or External
//! (KEDA's AverageValue) metrics, one or two of them; behaviours from the examples' compiled HPAs, autoscaling/v2's
//! defaults, and random policies (Pods/Percent, periods, windows, select Max/Min/Disabled).

use std::io::Write;
use std::process::{Command, Stdio};

use gpuplan::forecast::demand::{Daily, Series, Shape};
use gpuplan::forecast::draw::hpa::{HpaState, MetricKind, Reading, SYNC_SECONDS};
use gpuplan::forecast::draw::streams::stream;
use gpuplan::forecast::draw::workload::Sampled;
use gpuplan::forecast::scaler::{Behavior, Policy, Rules, Select};
use rand::RngExt;
use serde_json::{json, Value};

use super::go;

const DAY: u64 = 86_400;

struct Case {
    min: i32,
    max: i32,
    kind: MetricKind,
    targets_milli: Vec<i64>,
    initial: i32,
    behavior: Behavior,
    totals_milli: Vec<Vec<i64>>,
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().map_or(default, |v| v.trim().parse().unwrap_or_else(|_| panic!("{name}={v:?} is not a number")))
}

fn random_rules(rng: &mut rand::rngs::ChaCha8Rng, window_max: u32) -> Rules {
    let select = [Select::Max, Select::Max, Select::Min, Select::Disabled][rng.random_range(0..4)];
    let policies = (0..rng.random_range(1..=3))
        .map(|_| {
            let pods = rng.random_bool(0.5);
            let value = if pods { rng.random_range(1..=6) } else { rng.random_range(5..=200) };
            Policy { pods, value, period_seconds: [15, 30, 60, 120, 300][rng.random_range(0..5)] }
        })
        .collect();
    Rules { stabilization_seconds: [0, 15, 60, 300, window_max][rng.random_range(0..5)], select, policies }
}

/// One generated case: its parameters from the case's own stream.
fn case(seed: u64, i: u64, examples: &[Behavior]) -> Case {
    let mut rng = stream(seed, &format!("hpa-case/{i}"));
    let kind = if rng.random_bool(0.5) { MetricKind::Pods } else { MetricKind::External };
    let metrics = if kind == MetricKind::External && rng.random_bool(0.3) { 2 } else { 1 };
    let min = rng.random_range(1..=3);
    let max = min + rng.random_range(1..=20);
    let targets_milli: Vec<i64> = (0..metrics).map(|_| [1_000, 600, 20_000, 70_000][rng.random_range(0..4)]).collect();
    let behavior = match rng.random_range(0..3) {
        0 => examples[rng.random_range(0..examples.len())].clone(),
        1 => Behavior::defaults(),
        _ => Behavior { scale_up: random_rules(&mut rng, 120), scale_down: random_rules(&mut rng, 600) },
    };
    let series: Vec<Series> = targets_milli
        .iter()
        .map(|&target| {
            let unit = target as f64 / 1000.0;
            let trough = unit * rng.random_range(0.0..f64::from(max) * 0.5);
            let peak = trough + unit * rng.random_range(0.0..f64::from(max) * 1.3);
            let from = rng.random_range(0..24) * 3_600;
            let daily = Daily { trough, peak, from, to: (from + rng.random_range(1..12) * 3_600) % DAY, ramp: rng.random_range(0..4) * 3_600 };
            Series { shape: Shape::Daily(daily), weekly: [1.0; 7], noise: [0.0, 0.05, 0.2, 0.5][rng.random_range(0..4)] }
        })
        .collect();
    let mut sampled: Vec<Sampled> = series.iter().map(|s| Sampled::new(s, 0)).collect();
    let totals_milli = (1..=DAY / SYNC_SECONDS).map(|k| sampled.iter_mut().map(|s| (s.at(k * SYNC_SECONDS, &mut rng) * 1000.0) as i64).collect()).collect();
    Case { min, max, kind, targets_milli, initial: rng.random_range(min..=max), behavior, totals_milli }
}

/// gpuplan's replicas after each sync.
fn ported(c: &Case) -> Vec<i32> {
    let mut state = HpaState::default();
    let mut current = c.initial;
    c.totals_milli
        .iter()
        .enumerate()
        .map(|(k, totals)| {
            let readings: Vec<Reading> = totals.iter().zip(&c.targets_milli).map(|(&total_milli, &target_milli)| Reading { kind: c.kind, total_milli, target_milli }).collect();
            current = state.sync(((k as u64 + 1) * SYNC_SECONDS) as i64, current, c.min, c.max, &readings, &c.behavior);
            current
        })
        .collect()
}

/// autoscaling/v2 `HPAScalingRules` JSON.
fn rules_json(r: &Rules) -> Value {
    let select = match r.select {
        Select::Max => "Max",
        Select::Min => "Min",
        Select::Disabled => "Disabled",
    };
    let policies: Vec<Value> = r.policies.iter().map(|p| json!({ "type": if p.pods { "Pods" } else { "Percent" }, "value": p.value, "periodSeconds": p.period_seconds })).collect();
    json!({ "stabilizationWindowSeconds": r.stabilization_seconds, "selectPolicy": select, "policies": policies })
}

fn case_json(c: &Case) -> String {
    let kind = if c.kind == MetricKind::Pods { "pods" } else { "external" };
    let behavior = json!({ "scaleUp": rules_json(&c.behavior.scale_up), "scaleDown": rules_json(&c.behavior.scale_down) });
    json!({ "min": c.min, "max": c.max, "kind": kind, "targets_milli": c.targets_milli, "initial": c.initial, "behavior": behavior, "totals_milli": c.totals_milli }).to_string()
}

/// The examples' compiled HPA and ScaledObject behaviours.
fn example_behaviors() -> Vec<Behavior> {
    let c = gpuplan::compile::compile(&gpuplan::compile::CompileOptions::default()).expect("the examples compile");
    let mut out = Vec::new();
    for cluster in &c.plan.clusters {
        for w in &cluster.ops.workloads {
            match gpuplan::forecast::scaler::Scaler::of(&c, &cluster.name, w) {
                gpuplan::forecast::scaler::Scaler::Hpa(h) => out.push(h.behavior),
                gpuplan::forecast::scaler::Scaler::Keda(k) => out.push(k.behavior),
                gpuplan::forecast::scaler::Scaler::Fixed => {}
            }
        }
    }
    assert!(out.len() >= 3, "the examples scale llm-server, llm-batch and embeddings");
    out
}

// Agreement on every sync of every trace.
#[test]
fn the_hpa_port_sets_the_replicas_the_controller_sets() {
    let Some(oracle) = go::program("consumers", "hpa") else { return };
    let (seed, count) = (env("GPUPLAN_HPA_SEED", 34), env("GPUPLAN_HPA_CASES", 60));
    let examples = example_behaviors();
    let cases: Vec<Case> = (0..count).map(|i| case(seed, i, &examples)).collect();
    let mut child = Command::new(oracle).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let input: String = cases.iter().map(|c| case_json(c) + "\n").collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success(), "the HPA oracle failed: {}", String::from_utf8_lossy(&output.stderr));
    let upstream: Vec<Vec<i32>> = String::from_utf8(output.stdout).unwrap().lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["replicas"].as_array().unwrap().iter().map(|r| r.as_i64().unwrap() as i32).collect()).collect();
    assert_eq!(upstream.len(), cases.len());
    let mut disagreements = Vec::new();
    let mut changes = 0;
    for (i, (c, theirs)) in cases.iter().zip(&upstream).enumerate() {
        let ours = ported(c);
        changes += ours.windows(2).filter(|w| w[0] != w[1]).count();
        if let Some(k) = ours.iter().zip(theirs).position(|(a, b)| a != b) {
            disagreements.push(format!("case {i} (seed {seed}): sync {} at {} s: gpuplan {}, Kubernetes {}", k + 1, (k as u64 + 1) * SYNC_SECONDS, ours[k], theirs[k]));
        }
    }
    eprintln!("agreement: {}/{} traces of 24 h ({changes} replica changes)", cases.len() - disagreements.len(), cases.len());
    assert!(changes > cases.len() * 10, "the corpus scales: {changes} changes");
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}
