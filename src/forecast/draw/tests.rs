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

fn draw(cluster: &str, seed: u64) -> Trace {
    let (c, d) = examples();
    trace(c, cluster, &d.clusters[cluster], seed, d.horizon_seconds)
}

/// The examples' demand names only what their compile defines, and every cluster draws a trace with events of
/// each kind its demand asks for.
#[test]
fn every_example_cluster_draws_a_trace() {
    let (c, d) = examples();
    let problems = demand::check(d, c);
    assert!(problems.is_empty(), "{}", crate::diagnostic::render_plain(&problems));
    assert_eq!(d.clusters.keys().collect::<Vec<_>>(), ["ml-batch-west", "ml-prod", "ml-research", "ml-vision"]);
    let prod = draw("ml-prod", 1);
    let kinds = |t: &Trace, kind: &str| t.events.iter().filter(|e| serde_json::to_value(e).unwrap()["kind"] == kind).count();
    assert!(kinds(&prod, "replicas") > 50, "{}", kinds(&prod, "replicas"));
    assert!(kinds(&prod, "job") > 30, "{}", kinds(&prod, "job"));
    assert_eq!(kinds(&prod, "shortage"), 1);
    assert_eq!(prod.workloads.keys().collect::<Vec<_>>(), ["inference/llm-batch", "inference/llm-server", "training/trainer"]);
    assert!(prod.events.windows(2).all(|w| w[0].at() <= w[1].at()), "sorted by time");
    assert!(kinds(&draw("ml-research", 1), "job") > 100);
    assert!(kinds(&draw("ml-batch-west", 1), "shortage") > 0);
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
