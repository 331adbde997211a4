//! What happens to capacity: spot interruptions per type×zone, shortages, drift, and the start-up delays.

use std::collections::{BTreeMap, BTreeSet};

use rand::RngExt;
use rand_distr::Exp;

use super::streams::stream;
use crate::catalog::CapacityType;
use crate::compile::Compilation;
use crate::forecast::demand::{check::nodepools, DriftRule, ShortageRule, ShortageWhen, Spot, Startup};
use crate::forecast::trace::Event;
use crate::solve::ClusterPlan;

const DAY: f64 = 86_400.0;

/// The type×zone pairs the cluster's spot NodePools may launch: each spot tier's instance types (its
/// `requirements`' `node.kubernetes.io/instance-type` values, `PoolPlan::candidates`) in each of its zones that the
/// region's catalog offers the type in, as spot.
pub fn spot_offerings(c: &Compilation, plan: &ClusterPlan) -> BTreeSet<(String, String)> {
    let catalog = c.catalogs.get(&plan.region);
    let offered = |t: &str, zone: &str| catalog.and_then(|cat| cat.get(t)).is_none_or(|it| it.capacity_types.contains(&CapacityType::Spot) && it.zones.iter().any(|z| z == zone));
    plan.pools
        .iter()
        .filter(|p| p.capacity_types.contains(&CapacityType::Spot))
        .flat_map(|p| p.candidates.iter().flat_map(move |t| p.zones.iter().map(move |z| (t.name.clone(), z.clone()))))
        .filter(|(t, z)| offered(t, z))
        .collect()
}

/// Interruption events per spot type×zone: a Poisson process of rate (per-node rate ÷ mean share) per day, each
/// reclaiming a uniform share of the pair's nodes, so that a node's expected reclaims per day is the stated rate.
pub fn interruptions(c: &Compilation, plan: &ClusterPlan, spot: &Spot, seed: u64, horizon: u64) -> Vec<Event> {
    let (lo, hi) = spot.share;
    let mean_share = (lo + hi) / 2.0;
    let mut out = Vec::new();
    let stop = super::hard_stop();
    for (instance_type, zone) in spot_offerings(c, plan) {
        let per_day = spot.rate_for(&instance_type) / mean_share.max(1e-9);
        let Ok(gap) = Exp::new(per_day / DAY) else { continue };
        if per_day <= 0.0 {
            continue;
        }
        let mut rng = stream(seed, &format!("spot/{instance_type}/{zone}"));
        let mut t = 0.0;
        loop {
            t += rng.sample(gap);
            if t >= horizon as f64 || out.len() >= stop {
                break;
            }
            let share = if hi > lo { rng.random_range(lo..=hi) } else { lo };
            out.push(Event::Interruption { at: t as u64, instance_type: instance_type.clone(), zone: zone.clone(), share });
        }
    }
    out
}

/// Shortage events: each rule in each of its zones (all the cluster's when it names none) and capacity types (both
/// when it names none), at its time or as a Poisson process of its rate, from a stream keyed by what the rule says.
pub fn shortages(plan: &ClusterPlan, rules: &[ShortageRule], seed: u64, horizon: u64) -> Vec<Event> {
    let all_zones: BTreeSet<&str> = plan.pools.iter().flat_map(|p| p.zones.iter().map(String::as_str)).collect();
    let mut out = Vec::new();
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    let stop = super::hard_stop();
    for rule in rules {
        let zones: Vec<&str> = rule.zone.as_ref().map_or_else(|| all_zones.iter().copied().collect(), |z| vec![z.value.as_str()]);
        let capacity_types: Vec<&str> = rule.capacity_type.as_ref().map_or_else(|| vec!["spot", "on-demand"], |c| vec![c.value.as_str()]);
        for zone in &zones {
            for capacity_type in &capacity_types {
                let event = |at: u64| Event::Shortage { at, until: (at + rule.for_seconds).min(horizon), instance_type: rule.instance_type.value.clone(), zone: zone.to_string(), capacity_type: capacity_type.to_string() };
                match rule.when {
                    ShortageWhen::At(at) if at < horizon => out.push(event(at)),
                    ShortageWhen::At(_) => {}
                    ShortageWhen::Rate(per_day) => {
                        let key = format!("shortage/{}/{zone}/{capacity_type}/{}", rule.instance_type.value, rule.for_seconds);
                        let n = seen.entry(key.clone()).or_default();
                        *n += 1;
                        let mut rng = stream(seed, &format!("{key}/{n}"));
                        let Ok(gap) = Exp::new(per_day / DAY) else { continue };
                        let mut t = rng.sample(gap);
                        while per_day > 0.0 && t < horizon as f64 && out.len() < stop {
                            out.push(event(t as u64));
                            t += rng.sample(gap);
                        }
                    }
                }
            }
        }
    }
    out
}

/// `Drift` events for the NodePools each rule names (a pool: all of its), within the horizon.
pub fn drifts(plan: &ClusterPlan, rules: &[DriftRule], horizon: u64) -> Vec<Event> {
    rules.iter().filter(|r| r.at < horizon).flat_map(|r| nodepools(plan, &r.nodepool.value).into_iter().map(move |nodepool| Event::Drift { at: r.at, nodepool })).collect()
}

/// Per NodePool, its start-up seconds: an entry naming the NodePool itself wins over one naming its pool.
pub fn startup(plan: &ClusterPlan, entries: &[Startup]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for exact in [false, true] {
        for e in entries {
            let is_nodepool = plan.pools.iter().any(|p| p.name == e.target.value);
            if is_nodepool == exact {
                for nodepool in nodepools(plan, &e.target.value) {
                    out.insert(nodepool, e.seconds);
                }
            }
        }
    }
    out
}
