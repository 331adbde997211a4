//! The draw over the examples' own demand file and profiles.

use std::path::Path;
use std::sync::OnceLock;

use super::trace;
use crate::compile::{compile, CompileOptions, Compilation};
use crate::forecast::demand::{self, Demand};
use crate::forecast::trace::{Event, Trace};

/// The examples compiled once for every test of this file.
pub(crate) fn examples() -> &'static (Compilation, Demand) {
    static EXAMPLES: OnceLock<(Compilation, Demand)> = OnceLock::new();
    EXAMPLES.get_or_init(|| {
        let c = compile(&CompileOptions::default()).expect("the examples compile");
        let d = demand::load(Path::new(".")).expect("the examples' demand file reads").expect("the examples ship a demand file");
        (c, d)
    })
}

/// A week of a cluster's demand: what the properties below need, at a quarter of the CPU of the file's month.
const WEEK: u64 = 7 * 86_400;

fn draw(cluster: &str, seed: u64) -> Trace {
    let (c, d) = examples();
    trace(c, cluster, &d.clusters[cluster], seed, WEEK)
}

/// The examples' demand names only what their compile defines, and every cluster draws a trace with events of
/// each kind its demand asks for.
#[test]
fn every_example_cluster_draws_a_trace() {
    let (c, d) = examples();
    let problems = demand::check(d, c);
    assert!(problems.is_empty(), "{}", crate::diagnostic::render_plain(&problems));
    assert_eq!(d.clusters.keys().collect::<Vec<_>>(), ["ml-batch-west", "ml-prod", "ml-research", "ml-vision"]);
    let started = std::time::Instant::now();
    let prod = trace(c, "ml-prod", &d.clusters["ml-prod"], 1, d.horizon_seconds);
    let kinds = |t: &Trace, kind: &str| t.events.iter().filter(|e| serde_json::to_value(e).unwrap()["kind"] == kind).count();
    assert!(kinds(&prod, "replicas") > 50, "{}", kinds(&prod, "replicas"));
    assert!(kinds(&prod, "job") > 30, "{}", kinds(&prod, "job"));
    assert_eq!(kinds(&prod, "shortage"), 1);
    assert_eq!(prod.workloads.keys().collect::<Vec<_>>(), ["inference/llm-batch", "inference/llm-server", "training/trainer"]);
    assert!(prod.events.windows(2).all(|w| w[0].at() <= w[1].at()), "sorted by time");
    let research = trace(c, "ml-research", &d.clusters["ml-research"], 1, d.horizon_seconds);
    assert!(kinds(&research, "job") > 100);
    let west = trace(c, "ml-batch-west", &d.clusters["ml-batch-west"], 1, d.horizon_seconds);
    assert!(kinds(&west, "shortage") > 0);
    assert!(kinds(&trace(c, "ml-vision", &d.clusters["ml-vision"], 1, d.horizon_seconds), "interruption") > 0);
    eprintln!("the four example clusters' 30-day traces drawn in {:?}", started.elapsed());
}

/// Same seed, same bytes; another seed, other draws.
#[test]
fn a_seed_draws_the_same_trace_byte_for_byte() {
    for cluster in ["ml-prod", "ml-research"] {
        let a = serde_json::to_string(&draw(cluster, 7)).unwrap();
        assert_eq!(a, serde_json::to_string(&draw(cluster, 7)).unwrap(), "{cluster}");
        assert_ne!(a, serde_json::to_string(&draw(cluster, 8)).unwrap(), "{cluster}");
    }
}

/// KEDA keeps llm-batch at zero outside its nightly backlog; the HPA keeps llm-server within 2..12 and follows the
/// day.
#[test]
fn the_examples_scale_as_their_autoscalers_decide() {
    let t = draw("ml-prod", 1);
    let series = |w: &str| -> Vec<(u64, u32)> { t.events.iter().filter_map(|e| match e { Event::Replicas { at, workload, replicas } if workload == w => Some((*at, *replicas)), _ => None }).collect() };
    let value_at = |s: &[(u64, u32)], at: u64| s.iter().take_while(|p| p.0 <= at).last().map_or(0, |p| p.1);
    let batch = series("inference/llm-batch");
    assert_eq!(value_at(&batch, 12 * 3_600), 0, "idle at noon");
    assert!(value_at(&batch, 3 * 3_600) >= 3, "busy at 03:00: {batch:?}");
    let server = series("inference/llm-server");
    assert!(server.iter().all(|p| (2..=12).contains(&p.1)));
    assert!(value_at(&server, 14 * 3_600) > value_at(&server, 4 * 3_600), "{server:?}");
    assert_eq!(series("training/trainer"), [(0, 4)], "no demand: its replicas, constant");
}

/// Each entity's events, by its key: a workload's replicas, a queue's Jobs, a type×zone's interruptions, a
/// shortage's offering.
fn by_entity(t: &Trace) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut out: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    for e in &t.events {
        let key = match e {
            Event::Replicas { workload, .. } => format!("workload {workload}"),
            Event::Job { queue, .. } => format!("queue {queue}"),
            Event::Interruption { instance_type, zone, .. } => format!("spot {instance_type} {zone}"),
            Event::Shortage { instance_type, zone, capacity_type, .. } => format!("shortage {instance_type} {zone} {capacity_type}"),
            Event::Drift { nodepool, .. } => format!("drift {nodepool}"),
        };
        out.entry(key).or_default().push(serde_json::to_string(e).unwrap());
    }
    out
}

/// Adding one entity's demand (a workload, a queue, a spot override, a shortage rule) changes that entity's events
/// and no other's: every stream is keyed by its entity.
#[test]
fn one_entity_changed_leaves_every_other_entity_byte_identical() {
    let (c, d) = examples();
    let base_demand = d.clusters["ml-prod"].clone();
    let base = by_entity(&trace(c, "ml-prod", &base_demand, 3, WEEK));
    let added = |text: &str| -> crate::forecast::demand::ClusterDemand {
        let extra = demand::parse(Path::new("x.kdl"), &format!("cluster \"ml-prod\" {{ {text} }}")).unwrap();
        let mut changed = base_demand.clone();
        let e = extra.clusters["ml-prod"].clone();
        changed.workloads.retain(|w| !e.workloads.iter().any(|n| n.name.value == w.name.value));
        changed.workloads.extend(e.workloads);
        changed.queues.retain(|q| !e.queues.iter().any(|n| n.name.value == q.name.value));
        changed.queues.extend(e.queues);
        changed.spot.overrides.extend(e.spot.overrides);
        changed.shortages.extend(e.shortages);
        changed
    };
    let cases = [
        ("workload \"llm-server\" { replicas { daily trough=2 peak=6; noise 0.3 } }", "workload inference/llm-server"),
        ("queue \"research\" { arrivals per-hour=3; duration \"1h\" }", "queue ml-research/research"),
        ("spot { type \"g6.xlarge\" rate=\"50%/month\" }", "spot g6.xlarge"),
        ("shortage type=\"g5.xlarge\" zone=\"us-east-1b\" capacity-type=\"spot\" per-day=1 for=\"1h\"", "shortage g5.xlarge us-east-1b spot"),
    ];
    for (text, entity) in cases {
        let changed = by_entity(&trace(c, "ml-prod", &added(text), 3, WEEK));
        let differing: Vec<&String> = base.keys().chain(changed.keys()).filter(|k| base.get(*k) != changed.get(*k)).collect();
        assert!(!differing.is_empty(), "{text}: its own events changed");
        assert!(differing.iter().all(|k| k.starts_with(entity)), "{text}: only {entity}'s events change, not {differing:?}");
    }
}

/// Poisson arrivals: over many seeds the Job count is the rate × the horizon (within 4σ), a weekend factor of 0
/// leaves weekends empty, and the daily pattern's peak hours get peak/trough times the trough hours' Jobs.
#[test]
fn job_arrivals_follow_the_rate_and_its_pattern() {
    let (c, _) = examples();
    let plan = c.plan.clusters.iter().find(|p| p.name == "ml-prod").unwrap();
    let queue = demand::check::queue(plan, "production").unwrap();
    let text = r#"cluster "ml-prod" { queue "production" { arrivals per-hour=2 { daily trough=1 peak=3 from="08:00" to="20:00" ramp="0s"; weekly weekend=0 }; duration "1h" } }"#;
    let d = demand::parse(Path::new("x.kdl"), text).unwrap();
    let q = &d.clusters["ml-prod"].queues[0];
    let (seeds, horizon) = (10u64, 28 * 86_400);
    let mut peak = 0usize;
    let mut trough = 0usize;
    for seed in 0..seeds {
        for e in super::jobs::jobs(plan, queue, q, seed, horizon, 0) {
            let (day, hour) = ((e.at() / 86_400) % 7, (e.at() % 86_400) / 3_600);
            assert!(day < 5, "no Jobs at weekends: day {day}");
            if (8..20).contains(&hour) { peak += 1 } else { trough += 1 }
        }
    }
    // 20 weekdays × (12 h × 6 + 12 h × 2) = 1,920 per seed.
    let (want_peak, want_trough) = (seeds as f64 * 20.0 * 72.0, seeds as f64 * 20.0 * 24.0);
    for (got, want) in [(peak as f64, want_peak), (trough as f64, want_trough)] {
        assert!((got - want).abs() < 4.0 * want.sqrt(), "{got} Jobs, {want} expected");
    }
}

/// Log-normal durations: over many draws the median and the 90th percentile are the stated ones (within 3%), and
/// every draw is within the bounds.
#[test]
fn job_durations_have_the_stated_median_and_p90() {
    let d = crate::forecast::demand::JobDuration::LogNormal { median: 3 * 3_600, p90: 6 * 3_600, min: 60, max: 100 * 3_600 };
    let mut rng = super::streams::stream(1, "durations");
    let mut draws: Vec<u64> = (0..20_000).map(|_| super::jobs::duration(&d, &mut rng)).collect();
    draws.sort();
    let (median, p90) = (draws[10_000] as f64, draws[18_000] as f64);
    assert!((median / 10_800.0 - 1.0).abs() < 0.03, "median {median}");
    assert!((p90 / 21_600.0 - 1.0).abs() < 0.03, "p90 {p90}");
    let bounded = crate::forecast::demand::JobDuration::LogNormal { median: 3 * 3_600, p90: 6 * 3_600, min: 2 * 3_600, max: 4 * 3_600 };
    assert!((0..2_000).map(|_| super::jobs::duration(&bounded, &mut rng)).all(|s| (7_200..=14_400).contains(&s)));
}

/// Spot interruptions: each type×zone's events reclaim, on average, the stated share of its nodes per day (events
/// per day × mean share), shares within the stated bounds, and only for pairs a spot NodePool may launch.
#[test]
fn interruptions_reclaim_the_stated_rate() {
    let (c, _) = examples();
    let plan = c.plan.clusters.iter().find(|p| p.name == "ml-vision").unwrap();
    let pairs = super::capacity::spot_offerings(c, plan);
    assert!(!pairs.is_empty());
    let spot = crate::forecast::demand::Spot { rate_per_day: 0.01, share: (0.2, 0.6), rate_span: None, overrides: Vec::new() };
    let horizon = 365 * 86_400;
    let mut reclaimed = 0.0;
    for seed in 0..10 {
        for e in super::capacity::interruptions(c, plan, &spot, seed, horizon) {
            let Event::Interruption { share, instance_type, zone, .. } = e else { panic!() };
            assert!((0.2..=0.6).contains(&share));
            assert!(pairs.contains(&(instance_type, zone)));
            reclaimed += share;
        }
    }
    let want = 0.01 * 365.0 * 10.0 * pairs.len() as f64;
    assert!((reclaimed / want - 1.0).abs() < 0.15, "{reclaimed} reclaimed, {want} expected over {} pairs", pairs.len());
}

/// The trace's workload pods are the pods compile's checks simulate: read back by `simulate`'s own pod reader, each
/// has the same requests, nodeSelector, tolerations and topology as `check::simulated::replicas` made it.
#[test]
fn a_trace_workload_pod_reads_back_as_the_checked_pod() {
    use crate::simulate::yaml::Doc;
    let (c, _) = examples();
    let mut checked = 0;
    for plan in &c.plan.clusters {
        let t = draw(&plan.name, 1);
        for w in &plan.ops.workloads {
            let pod = crate::check::simulated::replicas(plan, w, 1).remove(0);
            let object = t.workloads[&format!("{}/{}", w.namespace, w.name)].clone();
            let doc = Doc { path: "pod.json".into(), line: 1, text: String::new(), value: std::borrow::Cow::Owned(object) };
            let back = crate::simulate::pods::pods(&[doc]).expect("a Pod object reads").remove(0);
            assert_eq!((&back.requests, &back.node_selector, &back.tolerations), (&pod.requests, &pod.node_selector, &pod.tolerations), "{}", w.name);
            let topology = |p: &crate::simulate::pods::Pod| p.topology.as_ref().map(|t| (t.labels.clone(), t.spread.clone(), t.anti_affinity.clone()));
            assert_eq!(topology(&back), topology(&pod), "{}", w.name);
            checked += 1;
        }
    }
    assert_eq!(checked, 5, "the examples' five workloads");
}
