//! The blast radius of each workload in a simulated placement (issue 32, item 11): how many of its replicas one
//! node's interruption takes, and one zone's. A spot interruption, a scheduled maintenance event or a node repair
//! ignores disruption budgets, so this is what a workload loses at once, whatever its PodDisruptionBudget says.

use std::collections::BTreeMap;

use serde::Serialize;


/// One workload's replicas and the most of them on one node and in one zone.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BlastRadius {
    /// `namespace/name`: the pods' keys without their `-<ordinal>` suffix.
    pub workload: String,
    /// Its replicas that were placed.
    pub replicas: usize,
    /// The most of them on one NodeClaim, and that NodeClaim.
    pub node_max: usize,
    pub node: String,
    /// The most of them in one zone, and that zone.
    pub zone_max: usize,
    pub zone: String,
}

/// The workload a pod key belongs to: `ns/w-3` → `ns/w` (a Deployment's or StatefulSet's pods, as simulate names
/// them); a key without an ordinal is a workload of its own.
pub fn workload_of(key: &str) -> &str {
    match key.rsplit_once('-') {
        Some((w, i)) if !i.is_empty() && i.chars().all(|c| c.is_ascii_digit()) => w,
        _ => key,
    }
}

/// Per workload with more than one replica placed (one replica has no radius to cap), in name order, from each
/// NodeClaim's (name, zone, pod keys).
pub fn blast_radius<'a>(nodeclaims: impl IntoIterator<Item = (&'a str, &'a str, &'a [String])>) -> Vec<BlastRadius> {
    // workload → (replicas, per node, per zone)
    type Counts = (usize, BTreeMap<String, usize>, BTreeMap<String, usize>);
    let mut by: BTreeMap<&str, Counts> = BTreeMap::new();
    for (name, zone, pods) in nodeclaims {
        for pod in pods {
            let e = by.entry(workload_of(pod)).or_default();
            e.0 += 1;
            *e.1.entry(name.to_string()).or_default() += 1;
            *e.2.entry(zone.to_string()).or_default() += 1;
        }
    }
    let most = |m: &BTreeMap<String, usize>| m.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(k, v)| (k.clone(), *v)).unwrap_or_default();
    by.into_iter()
        .filter(|(_, (n, _, _))| *n > 1)
        .map(|(w, (replicas, nodes, zones))| {
            let ((node, node_max), (zone, zone_max)) = (most(&nodes), most(&zones));
            BlastRadius { workload: w.to_string(), replicas, node_max, node, zone_max, zone }
        })
        .collect()
}

impl BlastRadius {
    /// "inference/llm-server: one node takes 8 of 12 replicas (llm-inference-spot-1), one zone 12 (us-east-1a)".
    pub fn text(&self) -> String {
        format!(
            "{}: one node's interruption takes {} of {} replicas ({}), one zone's {} ({})",
            self.workload, self.node_max, self.replicas, self.node, self.zone_max, self.zone
        )
    }
}
