//! A cluster's NodePool weights, adopted so that the compiled NodePools keep the order Karpenter tries them in.
//!
//! Karpenter orders NodePools by weight, highest first, an absent weight reading as 0, and breaks ties by name,
//! descending (kubernetes-sigs/karpenter pkg/utils/nodepool/nodepool.go `OrderByWeight`, followed by
//! `simulate::scheduler::order_by_weight`). gpuplan gives every NodePool of a cluster a distinct weight from 1 to 100,
//! assigning the ones a profile leaves out (E0153 when the written ones leave no room). So adopt writes every weight:
//! - a weight no other NodePool of the cluster has is kept as written;
//! - the others (shared weights, absent ones) get distinct weights strictly between the kept weights around them, in
//!   Karpenter's order: each keeps its own weight when it still fits, else takes the next free one below;
//! - when the kept weights leave no room for them, every weight of the cluster is renumbered, 100 down, in that order;
//! - a cluster of more than 100 NodePools has no distinct weights to give: adopt refuses it ([`TooMany`]), since the
//!   ties Karpenter would break by name are E0153 in a profile (each would compile to nothing).

use std::collections::BTreeMap;

/// One NodePool of a cluster: its name and its `spec.weight`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub weight: Option<u64>,
}

/// A weight adopt writes differently from the original (or writes where the original has none), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub weight: u32,
    pub why: String,
}

/// Karpenter's order: weight descending (absent = 0), then name descending.
fn karpenter_order(entries: &[Entry]) -> Vec<&Entry> {
    let mut order: Vec<&Entry> = entries.iter().collect();
    order.sort_by(|a, b| b.weight.unwrap_or(0).cmp(&a.weight.unwrap_or(0)).then_with(|| b.name.cmp(&a.name)));
    order
}

/// The most NodePools one cluster can hold: Karpenter's weights are 1 to 100 (the NodePool CRD's `spec.weight`
/// minimum and maximum) and gpuplan gives each NodePool of a cluster its own.
pub const MAX_NODEPOOLS: usize = 100;

/// A cluster with more NodePools than distinct weights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooMany {
    pub count: usize,
}

/// The weights to write differently, by NodePool name (the rest are kept as written).
pub fn resolve(entries: &[Entry]) -> Result<BTreeMap<String, Resolved>, TooMany> {
    if entries.len() > MAX_NODEPOOLS {
        return Err(TooMany { count: entries.len() });
    }
    let order = karpenter_order(entries);
    let shared = |w: u64| entries.iter().filter(|e| e.weight == Some(w)).count() > 1;
    let kept: Vec<bool> = order.iter().map(|e| e.weight.is_some_and(|w| (1..=100).contains(&w) && !shared(w))).collect();
    Ok(match fill(&order, &kept) {
        Some(weights) => order
            .iter()
            .zip(weights)
            .filter(|(e, w)| e.weight != Some(u64::from(*w)))
            .map(|(e, w)| (e.name.clone(), Resolved { weight: w, why: why(e, entries) }))
            .collect(),
        None => renumber(&order),
    })
}

/// Weights for the pools not kept, between the kept ones, in order; None when they do not fit.
fn fill(order: &[&Entry], kept: &[bool]) -> Option<Vec<u32>> {
    let mut out = Vec::with_capacity(order.len());
    let mut above = 101u32;
    for (i, e) in order.iter().enumerate() {
        if kept[i] {
            let w = e.weight.map(|w| w as u32)?;
            if w >= above {
                return None;
            }
            out.push(w);
            above = w;
            continue;
        }
        // Room below: the next kept weight, and one weight for each pool still to place before it.
        let next_kept = (i + 1..order.len()).find(|&j| kept[j]);
        let floor = next_kept.map_or(0, |j| order[j].weight.unwrap_or(0) as u32);
        let still = next_kept.unwrap_or(order.len()) - i - 1;
        let want = e.weight.map_or(above.saturating_sub(1), |w| (w as u32).min(above.saturating_sub(1)));
        let w = want.max(floor + 1 + still as u32);
        if w >= above || w < 1 {
            return None;
        }
        out.push(w);
        above = w;
    }
    Some(out)
}

fn why(e: &Entry, entries: &[Entry]) -> String {
    match e.weight {
        None => "no spec.weight (Karpenter reads 0: tried after every weighted NodePool); gpuplan writes one per NodePool, in Karpenter's order".to_string(),
        Some(w) => {
            let others: Vec<String> = entries.iter().filter(|o| o.weight == Some(w) && o.name != e.name).map(|o| format!("NodePool/{}", o.name)).collect();
            if others.is_empty() {
                format!("spec.weight {w}: moved to keep Karpenter's order between the weights around it")
            } else {
                format!("spec.weight {w}, shared with {} (Karpenter breaks the tie by name, descending): made distinct in that order", others.join(", "))
            }
        }
    }
}

/// Every weight of the cluster, 100 down in Karpenter's order (the kept weights left no room). At most
/// [`MAX_NODEPOOLS`] entries, so the last is at least 1.
fn renumber(order: &[&Entry]) -> BTreeMap<String, Resolved> {
    order
        .iter()
        .enumerate()
        .map(|(i, e)| (100 - i as u32, e))
        .filter(|(w, e)| e.weight != Some(u64::from(*w)))
        .map(|(w, e)| {
            let was = e.weight.map_or("no spec.weight".to_string(), |w| format!("spec.weight {w}"));
            (e.name.clone(), Resolved { weight: w, why: format!("{was}: the cluster's weights leave no room for distinct ones, so all are renumbered 100 down in Karpenter's order") })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &[(&str, Option<u64>)]) -> Vec<Entry> {
        list.iter().map(|(n, w)| Entry { name: n.to_string(), weight: *w }).collect()
    }

    fn weights(list: &[(&str, Option<u64>)]) -> Vec<(String, u32)> {
        resolve(&entries(list)).unwrap().into_iter().map(|(n, r)| (n, r.weight)).collect()
    }

    #[test]
    fn distinct_weights_are_kept_as_written() {
        assert!(weights(&[("a", Some(90)), ("b", Some(10)), ("c", Some(50))]).is_empty());
    }

    #[test]
    fn a_shared_weight_keeps_its_value_for_the_first_by_name_descending_and_the_next_take_the_weights_below() {
        // OrderByWeight: same weight → name descending, so `b` before `a`.
        assert_eq!(weights(&[("a", Some(50)), ("b", Some(50)), ("c", Some(10))]), [("a".to_string(), 49)]);
    }

    #[test]
    fn absent_weights_go_below_every_weighted_nodepool() {
        assert_eq!(weights(&[("gpu", None), ("cpu", None), ("spot", Some(90))]), [("cpu".to_string(), 88), ("gpu".to_string(), 89)]);
    }

    #[test]
    fn no_room_renumbers_the_cluster_in_karpenters_order() {
        let w = weights(&[("a", Some(2)), ("b", Some(1)), ("c", Some(1)), ("d", None)]);
        assert_eq!(w, [("a".to_string(), 100), ("b".to_string(), 98), ("c".to_string(), 99), ("d".to_string(), 97)]);
    }

    #[test]
    fn a_hundred_nodepools_get_a_hundred_distinct_weights_and_a_hundred_and_one_are_refused() {
        let list: Vec<Entry> = (0..100).map(|i| Entry { name: format!("pool-{i:03}"), weight: Some(50) }).collect();
        let resolved = resolve(&list).unwrap();
        let distinct: std::collections::BTreeSet<u32> = list.iter().map(|e| resolved.get(&e.name).map_or(50, |r| r.weight)).collect();
        assert_eq!((distinct.len(), distinct.first(), distinct.last()), (100, Some(&1), Some(&100)));
        let more: Vec<Entry> = (0..101).map(|i| Entry { name: format!("pool-{i:03}"), weight: None }).collect();
        assert_eq!(resolve(&more), Err(TooMany { count: 101 }));
    }
}
