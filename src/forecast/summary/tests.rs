//! `summarize` on timelines built by hand over the examples' ml-prod cluster: billing, prices, budgets, seeds.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::*;
use crate::compile::{compile, CompileOptions};
use crate::forecast::timeline::NodeLife;

fn examples() -> &'static Compilation {
    static C: OnceLock<Compilation> = OnceLock::new();
    C.get_or_init(|| compile(&CompileOptions::default()).expect("the examples compile"))
}

fn trace(horizon_seconds: u64) -> Trace {
    Trace { version: 1, cluster: "ml-prod".into(), seed: 7, horizon_seconds, start_unix: crate::forecast::trace::START_UNIX, workloads: BTreeMap::new(), startup_seconds: BTreeMap::new(), events: Vec::new() }
}

fn node(id: &str, pool: &str, instance_type: &str, capacity_type: &str, life: (u64, Option<u64>)) -> NodeLife {
    NodeLife {
        id: id.into(),
        nodepool: pool.into(),
        instance_type: instance_type.into(),
        capacity_type: capacity_type.into(),
        zone: "us-east-1a".into(),
        launched_at: life.0,
        ready_at: Some(life.0 + 180),
        terminated_at: life.1,
        ended_by: None,
    }
}

fn timeline(horizon_seconds: u64, nodes: Vec<NodeLife>) -> Timeline {
    Timeline { horizon_seconds, nodes, ..Timeline::default() }
}

fn on_demand(instance_type: &str) -> f64 {
    examples().catalogs["us-east-1"].get(instance_type).unwrap().on_demand.as_ref().unwrap().usd_per_hour
}

fn pool<'f>(f: &'f ClusterForecast, name: &str) -> &'f PoolForecast {
    f.pools.iter().find(|p| p.name == name).unwrap()
}

#[test]
fn a_node_is_billed_per_second_from_launch_to_termination() {
    // EC2 per-second billing: half an hour of a g5.xlarge on demand costs half its hourly price.
    let t = timeline(7200, vec![node("a", "llm-inference-on-demand", "g5.xlarge", "on-demand", (0, Some(1800)))]);
    let f = summarize(examples(), "ml-prod", &trace(7200), &[t]);
    let spent = on_demand("g5.xlarge") * 0.5;
    assert_eq!(f.series.usd[0].mean, cents(spent));
    assert_eq!(f.series.usd[1].mean, 0.0);
    assert_eq!(pool(&f, "llm-inference-on-demand").spend.usd_per_day.mean, cents(spent / 2.0 * 24.0), "over a 2-hour horizon");
    assert_eq!(pool(&f, "llm-inference-on-demand").spend.node_hours, vec![NodeHours { instance_type: "g5.xlarge".into(), capacity_type: "on-demand".into(), hours: Spread { mean: 0.5, min: 0.5, max: 0.5 } }]);
}

#[test]
fn a_node_still_running_is_billed_to_the_horizon() {
    let t = timeline(3 * 3600, vec![node("a", "llm-inference-on-demand", "g5.xlarge", "on-demand", (3600, None))]);
    let f = summarize(examples(), "ml-prod", &trace(3 * 3600), &[t]);
    assert_eq!(f.spend.node_hours[0].hours.mean, 2.0);
    assert_eq!(f.spend.usd_per_month.mean, cents(on_demand("g5.xlarge") * 2.0 / 3.0 * HOURS_PER_MONTH));
    assert_eq!(f.series.nodes["llm-inference-on-demand"], vec![0.0, 1.0, 1.0]);
}

#[test]
fn a_spot_node_costs_its_zones_spot_price_marked_as_an_estimate_when_the_catalog_estimates_it() {
    let t = timeline(3600, vec![node("a", "llm-inference-spot", "g5.xlarge", "spot", (0, None))]);
    let f = summarize(examples(), "ml-prod", &trace(3600), &[t]);
    let catalog = &examples().catalogs["us-east-1"];
    let spot = &catalog.get("g5.xlarge").unwrap().spot["us-east-1a"];
    assert_eq!(f.series.usd[0].mean, cents(spot.usd_per_hour));
    assert_eq!(pool(&f, "llm-inference-spot").price_estimate, catalog.is_estimate(spot));
    assert_eq!(f.price_estimate, catalog.is_estimate(spot));
    assert!(!pool(&f, "llm-inference-on-demand").price_estimate, "a pool with no node has no estimated price");
}

#[test]
fn hours_over_budget_count_the_hours_a_profile_spends_above_its_budget() {
    let budget = examples().plan.clusters.iter().find(|c| c.name == "ml-prod").unwrap().profiles.iter().find(|p| p.name == "llm-inference").unwrap().budget_usd_per_hour.unwrap();
    let needed = (budget / on_demand("g5.xlarge")).ceil() as usize + 1;
    // Enough nodes for the first hour to go over, one node for the next two.
    let mut nodes: Vec<NodeLife> = (0..needed).map(|i| node(&format!("n{i}"), "llm-inference-on-demand", "g5.xlarge", "on-demand", (0, Some(3600)))).collect();
    nodes.push(node("last", "llm-inference-on-demand", "g5.xlarge", "on-demand", (0, None)));
    let f = summarize(examples(), "ml-prod", &trace(3 * 3600), &[timeline(3 * 3600, nodes)]);
    let profile = f.profiles.iter().find(|p| p.name == "llm-inference").unwrap();
    assert_eq!(profile.spend.budget_usd_per_hour, Some(budget));
    assert_eq!(profile.spend.hours_over_budget.unwrap().mean, 1.0);
    let other = f.profiles.iter().find(|p| p.name != "llm-inference" && p.spend.budget_usd_per_hour.is_some()).unwrap();
    assert_eq!(other.spend.hours_over_budget.unwrap().mean, 0.0, "another profile's nodes are not this one's");
}

#[test]
fn the_bounds_are_the_worst_cases_the_plan_computes() {
    let f = summarize(examples(), "ml-prod", &trace(3600), &[timeline(3600, Vec::new())]);
    let plan = examples().plan.clusters.iter().find(|c| c.name == "ml-prod").unwrap();
    for p in &plan.pools {
        assert_eq!(pool(&f, &p.name).spend.bound_usd_per_hour, cents(p.worst_case_usd_per_hour), "{}", p.name);
    }
    let sum: f64 = plan.profiles.iter().map(|p| p.worst_case_usd_per_hour).sum();
    assert_eq!(f.spend.bound_usd_per_hour, cents(sum));
    assert_eq!(f.spend.usd_per_day.mean, 0.0);
}

#[test]
fn figures_over_seeds_are_the_mean_and_the_range() {
    let short = timeline(3600, vec![node("a", "llm-inference-on-demand", "g5.xlarge", "on-demand", (0, Some(1200)))]);
    let long = timeline(3600, vec![node("a", "llm-inference-on-demand", "g5.xlarge", "on-demand", (0, Some(3600)))]);
    let f = summarize(examples(), "ml-prod", &trace(3600), &[short, long]);
    let day = on_demand("g5.xlarge") * 24.0;
    let s = f.spend.usd_per_day;
    assert_eq!((s.min, s.max), (cents(day / 3.0), cents(day)));
    assert_eq!(s.mean, cents((day / 3.0 + day) / 2.0));
    assert!(s.varies());
    assert_eq!(f.runs, 2);
}

#[test]
fn percentiles_are_nearest_rank() {
    let v: Vec<f64> = (1..=20).map(f64::from).collect();
    assert_eq!(percentile(&v, 50), 10.0);
    assert_eq!(percentile(&v, 95), 19.0);
    assert_eq!(percentile(&[3.0], 95), 3.0);
    assert_eq!(percentile(&[], 50), 0.0);
}

#[test]
fn a_workload_gets_the_share_of_its_pools_its_pods_use() {
    use crate::forecast::trace::Event;
    let mut t = trace(3600);
    t.events = vec![Event::Replicas { at: 0, workload: "inference/llm-server".into(), replicas: 2 }];
    let run = timeline(3600, vec![node("a", "llm-inference-on-demand", "g5.xlarge", "on-demand", (0, None))]);
    let f = summarize(examples(), "ml-prod", &t, &[run]);
    let server = f.workloads.iter().find(|w| w.name == "inference/llm-server").unwrap();
    let batch = f.workloads.iter().find(|w| w.name == "inference/llm-batch").unwrap();
    assert_eq!(server.usd_per_day.mean, cents(on_demand("g5.xlarge") * 24.0), "the only pods on the pool");
    assert_eq!(batch.usd_per_day.mean, 0.0);
    assert_eq!(server.running_pod_hours.mean, 2.0);
}
