//! One timeline, priced: each NodePool's spend and nodes in every hour of the horizon, and node-seconds by type.

use std::collections::BTreeMap;

use super::prices::Prices;
use crate::forecast::timeline::Timeline;

/// A priced timeline.
pub struct Run {
    hours: usize,
    /// Per NodePool: $ spent in each hour.
    spend: BTreeMap<String, Vec<f64>>,
    /// Per NodePool: node-seconds in each hour.
    nodes: BTreeMap<String, Vec<f64>>,
    /// (NodePool, instance type, capacity type) → node-seconds over the horizon.
    pub node_seconds: BTreeMap<(String, String, String), f64>,
    /// NodePools with a node billed at an estimated price.
    estimated: std::collections::BTreeSet<String>,
}

impl Run {
    /// Bills every node per second from launch to termination, or to the horizon while it runs (EC2 per-second
    /// billing), and spreads the seconds over the hours they fall in.
    pub fn new(timeline: &Timeline, prices: &Prices, horizon_seconds: u64) -> Run {
        let hours = horizon_seconds.div_ceil(3600) as usize;
        let mut run = Run { hours, spend: BTreeMap::new(), nodes: BTreeMap::new(), node_seconds: BTreeMap::new(), estimated: Default::default() };
        for node in &timeline.nodes {
            let price = prices.of(node);
            let start = node.launched_at.min(horizon_seconds);
            let end = node.terminated_at.unwrap_or(horizon_seconds).clamp(start, horizon_seconds);
            if price.estimate {
                run.estimated.insert(node.nodepool.clone());
            }
            *run.node_seconds.entry((node.nodepool.clone(), node.instance_type.clone(), node.capacity_type.clone())).or_default() += (end - start) as f64;
            let spend = run.spend.entry(node.nodepool.clone()).or_insert_with(|| vec![0.0; hours]);
            let nodes = run.nodes.entry(node.nodepool.clone()).or_insert_with(|| vec![0.0; hours]);
            let mut t = start;
            while t < end {
                let hour = (t / 3600) as usize;
                let next = ((t / 3600 + 1) * 3600).min(end);
                let seconds = (next - t) as f64;
                spend[hour] += price.usd_per_hour * seconds / 3600.0;
                nodes[hour] += seconds;
                t = next;
            }
        }
        run
    }

    /// The NodePools that launched a node.
    pub fn pool_names(&self) -> impl Iterator<Item = &str> {
        self.spend.keys().map(String::as_str)
    }

    /// The spend of `pools` together in each hour.
    pub fn hourly(&self, pools: &[&str]) -> Vec<f64> {
        let mut out = vec![0.0; self.hours];
        for series in pools.iter().filter_map(|p| self.spend.get(*p)) {
            for (o, s) in out.iter_mut().zip(series) {
                *o += s;
            }
        }
        out
    }

    /// A NodePool's spend over the horizon.
    pub fn total(&self, pool: &str) -> f64 {
        self.spend.get(pool).map_or(0.0, |s| s.iter().sum())
    }

    /// The nodes of `pool` running in `hour`, on average over the hour.
    pub fn nodes_in_hour(&self, pool: &str, hour: usize) -> f64 {
        self.nodes.get(pool).and_then(|n| n.get(hour)).map_or(0.0, |s| s / 3600.0)
    }

    /// Whether a node of `pool` is billed at an estimated price.
    pub fn estimated(&self, pool: &str) -> bool {
        self.estimated.contains(pool)
    }
}
