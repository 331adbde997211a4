//! The semantic diff of two trees: per object what was added, removed or changed, the NodePools a change
//! removes, and the per-cluster cost sums.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use super::compare::{cost_details, field_details, nodepool_details, nodepool_overview};
use super::detail::{ClusterCost, CostMeasure, Detail, ObjectChange};
use super::objects::{ObjKey, cost_of, is_nodepool, objects};
use crate::emit::ChangeKind;
use crate::layout::OutputTree;

fn summary_line(
    kind: &str,
    namespace: &Option<String>,
    name: &str,
    change: ChangeKind,
    details: &[Detail],
) -> String {
    let object = match namespace {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    };
    format!("{object}: {}", change_words(change, details))
}

/// "added", "removed (worst case $/h 112.00)" or the joined details, at most 4 field details.
pub(super) fn change_words(change: ChangeKind, details: &[Detail]) -> String {
    const MAX_FIELDS: usize = 4;
    let mut words = Vec::new();
    let mut fields = 0usize;
    for d in details {
        if matches!(d, Detail::Field { .. }) {
            fields += 1;
            if fields > MAX_FIELDS {
                continue;
            }
        }
        words.push(d.to_string());
    }
    if fields > MAX_FIELDS {
        words.push(format!("{} more fields", fields - MAX_FIELDS));
    }
    let joined = words.join(", ");
    match change {
        ChangeKind::Added if joined.is_empty() => "added".into(),
        ChangeKind::Added => format!("added ({joined})"),
        ChangeKind::Removed if joined.is_empty() => "removed".into(),
        ChangeKind::Removed => format!("removed ({joined})"),
        ChangeKind::Modified if joined.is_empty() => "modified".into(),
        ChangeKind::Modified => joined,
    }
}

/// Per object: what was added, removed or changed between `old` and `new`, sorted by cluster, kind, namespace,
/// name. Header lines, comments and formatting are ignored; objects equal as data are not listed.
pub fn semantic_changes(old: &OutputTree, new: &OutputTree) -> Vec<ObjectChange> {
    let (oo, no) = (objects(old), objects(new));
    let keys: BTreeSet<&ObjKey> = oo.keys().chain(no.keys()).collect();
    let mut out = Vec::new();
    for key in keys {
        let (a, b) = (oo.get(key), no.get(key));
        let (change, obj) = match (a, b) {
            (None, Some(b)) => (ChangeKind::Added, b),
            (Some(a), None) => (ChangeKind::Removed, a),
            (Some(a), Some(b)) if a.value != b.value || a.api_version != b.api_version => {
                (ChangeKind::Modified, b)
            }
            _ => continue,
        };
        let nodepool = is_nodepool(&key.kind, &obj.api_version);
        let details = match (change, a.map(|o| &o.value), b.map(|o| &o.value)) {
            (_, Some(Err(e)), _) | (_, _, Some(Err(e))) => {
                let reason = e.split('\u{0}').next().unwrap_or_default();
                vec![Detail::Note {
                    text: format!("not compared as YAML: {reason}"),
                }]
            }
            (ChangeKind::Added, _, Some(Ok(v))) => {
                let mut d = Vec::new();
                if nodepool {
                    let overview = nodepool_overview(v);
                    if !overview.is_empty() {
                        d.push(Detail::Note { text: overview });
                    }
                    d.extend(cost_details(&Value::Null, v));
                }
                d
            }
            (ChangeKind::Removed, Some(Ok(v)), _) => {
                if nodepool {
                    cost_details(v, &Value::Null)
                } else {
                    Vec::new()
                }
            }
            (ChangeKind::Modified, Some(Ok(x)), Some(Ok(y))) => {
                if nodepool {
                    nodepool_details(x, y)
                } else {
                    field_details(x, y)
                }
            }
            _ => Vec::new(),
        };
        let summary = summary_line(&key.kind, &key.namespace, &key.name, change, &details);
        out.push(ObjectChange {
            cluster: key.cluster.clone(),
            api_version: obj.api_version.clone(),
            kind: key.kind.clone(),
            namespace: key.namespace.clone(),
            name: key.name.clone(),
            path: obj.path.clone(),
            change,
            details,
            summary,
            drift: Vec::new(),
        });
    }
    out
}

/// A NodePool that a change removes from out/, with the limits it had.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemovedNodePool {
    pub cluster: String,
    pub name: String,
    /// `spec.limits` of the removed object, as written (`nvidia.com/gpu: "48"`).
    pub limits: BTreeMap<String, String>,
}

impl std::fmt::Display for RemovedNodePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let limits: Vec<String> = self.limits.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let limits = if limits.is_empty() { "no limit".to_string() } else { format!("limit {}", limits.join(", ")) };
        write!(f, "NodePool {} in cluster {} ({limits})", self.name, self.cluster)
    }
}

/// What deleting a NodePool does, for diff and commit: Karpenter deletes its NodeClaims at once, without its
/// disruption budgets (karpenter.sh docs, concepts/disruption "Manual": "deleting a NodePool … all nodes
/// launched by it are deleted"; concepts/nodeclaims). gpuplan's NodePools carry Argo CD `Prune=false` and Flux
/// `prune: disabled`, so a sync leaves the old NodePool in place; deleting it stays a deliberate act.
pub const REMOVAL_WARNING: &str = "deleting a NodePool deletes all its nodes at once, ignoring disruption budgets; its Prune=false / prune: disabled annotations keep Argo CD and Flux from doing it on sync, so delete it by hand when its nodes may go (`gpuplan commit` needs --allow-removal)";

/// Every NodePool of `old` that `new` no longer has (a renamed pool or a changed preset renames NodePools).
pub fn removed_node_pools(old: &OutputTree, new: &OutputTree) -> Vec<RemovedNodePool> {
    let after = objects(new);
    objects(old)
        .into_iter()
        .filter(|(key, obj)| is_nodepool(&key.kind, &obj.api_version) && !after.contains_key(key))
        .map(|(key, obj)| {
            let limits = obj.value.as_ref().ok().and_then(|v| v["spec"]["limits"].as_object().cloned()).unwrap_or_default();
            RemovedNodePool {
                cluster: key.cluster,
                name: key.name,
                limits: limits.into_iter().map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect(),
            }
        })
        .collect()
}

/// Per cluster present in either tree and per cost measure carried by any NodePool: the sum over its NodePools
/// before and after. Sorted by cluster, then measure (expected, worst case, budget).
pub fn cluster_costs(old: &OutputTree, new: &OutputTree) -> Vec<ClusterCost> {
    let sums = |tree: &OutputTree| {
        let mut m: BTreeMap<(String, CostMeasure), f64> = BTreeMap::new();
        // The budget is the profile's, repeated on each of its pools: count it once per profile.
        let mut budgets: BTreeMap<(String, String), f64> = BTreeMap::new();
        for (key, obj) in objects(tree) {
            let Ok(v) = &obj.value else { continue };
            if !is_nodepool(&key.kind, &obj.api_version) {
                continue;
            }
            for measure in CostMeasure::ALL {
                let Some(c) = cost_of(v, measure) else {
                    continue;
                };
                if measure == CostMeasure::Budget {
                    let profile = obj.source.clone().unwrap_or_else(|| key.name.clone());
                    let b = budgets.entry((key.cluster.clone(), profile)).or_default();
                    *b = b.max(c);
                } else {
                    *m.entry((key.cluster.clone(), measure)).or_default() += c;
                }
            }
        }
        for ((cluster, _), b) in budgets {
            *m.entry((cluster, CostMeasure::Budget)).or_default() += b;
        }
        m
    };
    let (a, b) = (sums(old), sums(new));
    let keys: BTreeSet<&(String, CostMeasure)> = a.keys().chain(b.keys()).collect();
    // Round sums to cents so 112.00 + 12.80 is 124.80, not 124.80000000000001.
    let cents = |v: Option<&f64>| v.copied().map(super::pools::cents);
    keys.into_iter()
        .map(|k| ClusterCost {
            cluster: k.0.clone(),
            measure: k.1,
            old: cents(a.get(k)),
            new: cents(b.get(k)),
        })
        .collect()
}
