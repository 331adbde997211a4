//! Which NodeOverlays Karpenter applies at all: the `nodeoverlay` controller's conflict check, run once over every
//! NodePool before any scheduling (kubernetes-sigs/karpenter v1.14.1 `pkg/controllers/nodeoverlay/controller.go`
//! `Reconcile`, `validateAndUpdateInstanceTypeOverrides`; `store.go` `isOfferingUpdateConflicting`,
//! `isCapacityUpdateConflicting`, `updateInstanceTypeOffering`, `updateInstanceTypeCapacity`).
//!
//! Karpenter takes the overlays heaviest first (weight descending, then name descending: `OrderByWeight`). An overlay
//! conflicts when, on some NodePool and some of its NodeClass's instance types (all of them, not only those the
//! NodePool's requirements admit: `GetInstanceTypes`), an overlay already accepted *at the same weight* set
//! - the price of one of the offerings this one selects (a price and a `priceAdjustment` alike), or
//! - a capacity resource this one sets (compared with the capacity of the last accepted capacity overlay of that
//!   weight on that type only: `lowestWeightCapacityResources` is replaced, not merged).
//!
//! A conflicting overlay is marked `ValidationSucceeded=False` ("conflict with another overlay") and applied nowhere:
//! not on the other NodePools or types where it was alone, and neither its price nor its capacity. The check then
//! goes on with the next overlay, so a third overlay of that weight is compared with the first only.

use std::collections::{BTreeMap, BTreeSet};

use crate::catalog::Catalog;

use super::instances::{self, TypeLabels};
use super::manifests::{prices, selects, Manifests, NodeOverlay};

/// The overlays of `m` that Karpenter applies, in the input's order: all of them but those its controller finds in
/// conflict with a heavier-ordered one of the same weight.
pub fn accepted(catalog: &Catalog, labels: &TypeLabels, m: &Manifests) -> Vec<NodeOverlay> {
    if !may_conflict(&m.overlays) {
        return m.overlays.clone();
    }
    let mut order: Vec<&NodeOverlay> = m.overlays.iter().collect();
    order.sort_by(|a, b| b.weight.cmp(&a.weight).then(b.name.cmp(&a.name)));
    let mut store = Store::default();
    let rejected: BTreeSet<&str> = order.into_iter().filter(|o| !store.accept(catalog, labels, m, o)).map(|o| o.name.as_str()).collect();
    m.overlays.iter().filter(|o| !rejected.contains(o.name.as_str())).cloned().collect()
}

/// Whether two overlays of one weight both set a price or one capacity resource: without such a pair no overlay can
/// conflict, and the per-type walk is skipped.
fn may_conflict(overlays: &[NodeOverlay]) -> bool {
    overlays.iter().enumerate().any(|(i, a)| {
        overlays[i + 1..].iter().filter(|b| b.weight == a.weight).any(|b| (prices(a) && prices(b)) || a.capacity.keys().any(|r| b.capacity.contains_key(r)))
    })
}

/// The controller's temporary store, reduced to what conflicts read: per NodePool, type and offering the weight of
/// the last accepted overlay that priced it; per NodePool and type the weight and resources of the last accepted
/// capacity overlay.
#[derive(Default)]
struct Store {
    price: BTreeMap<(usize, usize, usize), i64>,
    capacity: BTreeMap<(usize, usize), (i64, BTreeSet<String>)>,
}

impl Store {
    /// Checks `o` on every NodePool and type, then records it only if it conflicts nowhere (controller.go validates
    /// everything before storing anything, "to prevent partial application").
    fn accept(&mut self, catalog: &Catalog, labels: &TypeLabels, m: &Manifests, o: &NodeOverlay) -> bool {
        let selected = selected(catalog, labels, m, o);
        let conflict = selected.iter().any(|((pool, ty), offerings)| {
            let price = prices(o) && offerings.iter().any(|of| self.price.get(&(*pool, *ty, *of)) == Some(&o.weight));
            let capacity = self.capacity.get(&(*pool, *ty)).is_some_and(|(w, set)| *w == o.weight && o.capacity.keys().any(|r| set.contains(r)));
            price || capacity
        });
        if conflict {
            return false;
        }
        for ((pool, ty), offerings) in selected {
            if prices(o) {
                offerings.into_iter().for_each(|of| _ = self.price.insert((pool, ty, of), o.weight));
            }
            if !o.capacity.is_empty() {
                self.capacity.insert((pool, ty), (o.weight, o.capacity.keys().cloned().collect()));
            }
        }
        true
    }
}

/// Per NodePool (with its NodeClass) and catalog type that `o` selects, the positions of the offerings it selects
/// (controller.go `getOverlaidOfferings`: a type with none is not selected).
fn selected(catalog: &Catalog, labels: &TypeLabels, m: &Manifests, o: &NodeOverlay) -> Vec<((usize, usize), Vec<usize>)> {
    let mut out = Vec::new();
    for (p, pool) in m.node_pools.iter().enumerate() {
        let Some(class) = m.node_classes.iter().find(|c| c.serves(pool)) else { continue };
        for (i, it) in catalog.instance_types.iter().enumerate() {
            if (class.auto_mode && !crate::catalog::auto_mode::supports(it)) || !selects(labels.get(catalog, i), pool, o) {
                continue;
            }
            let offerings = instances::offerings(catalog, it, class);
            let hit: Vec<usize> = offerings.iter().enumerate().filter(|(_, of)| super::requirements::offering_compatible(&o.requirements, &of.zone, of.capacity_type.as_str())).map(|(k, _)| k).collect();
            if !hit.is_empty() {
                out.push(((p, i), hit));
            }
        }
    }
    out
}
