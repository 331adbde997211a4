//! The profile's `overlay` blocks in the solver: what they change in a pool's ranking and units, and the
//! NodeOverlays they become.
//!
//! **Ranking.** Karpenter orders a NodePool's types by the price of their cheapest compatible offering *after*
//! NodeOverlays (kubernetes-sigs/karpenter v1.14.1 `pkg/cloudprovider/types.go` `OrderByPrice`, over the types the
//! `nodeoverlay` store returns: `InstanceTypeStore.ApplyAll`), and an overlay prices each offering it selects on its
//! own (`store.go` `applyPriceOverlays`). So a candidate's $/accelerator-hour, which ranks it, price ratio included,
//! is that figure ([`ranked_price`]): per offering of the tier (capacity type × zone) the heaviest overlay of the
//! tier that selects it (the type's labels, the tier's node labels, the offering's zone and capacity type) and sets
//! a price, then the cheapest offering — what `simulate` ranks by.
//!
//! **Cost bound.** The worst case stays at *list* prices (on-demand from the catalog): an overlay changes what
//! Karpenter prefers, not what EC2 bills. A price overlay often encodes a discount the bill really has (a savings
//! plan, an EDP rate), but gpuplan cannot know that, and an upper bound must hold under every condition we can name.
//! The at-limit $/h stays at list price too, for the same reason. What the bound does not cover is unchanged: EBS,
//! data transfer and other charges outside the instance-hour price.
//!
//! **Capacity.** A capacity overlay on the pool's accelerator resource sets the type's schedulable units (what
//! time-slicing does with its replicas), so limits, per-unit prices and the cpu backstop count them; other
//! resources are carried to the NodeOverlay only.

use std::collections::BTreeMap;

use crate::diagnostic::ErrorCode;
use crate::catalog::{CapacityType, Catalog, InstanceType};
use crate::diagnostic::{ProfileDiagnostic, Sources};
use crate::profile::{Overlay, OverlayPrice, Settings, Tier};
use crate::simulate::requirements::{Requirement as Wanted, Requirements};

use super::pool::{Candidate, ClusterPools, Requirement};

/// One `overlay` block as rendered: a NodeOverlay scoped to the NodePools that carry the block.
#[derive(Debug, Clone, PartialEq)]
pub struct OverlayPlan {
    pub name: String,
    pub profile: String,
    pub source: String,
    /// The NodePools (tiers) whose settings carry the block: the `karpenter.sh/nodepool In` requirement.
    pub nodepools: Vec<String>,
    pub weight: Option<u32>,
    /// `karpenter.sh/nodepool In [nodepools]` first, then the block's `require` lines as written.
    pub requirements: Vec<Requirement>,
    pub price: Option<OverlayPrice>,
    pub capacity: Vec<(String, String)>,
}

/// The tier's overlays that select `t` for an offering of capacity type `capacity`, heaviest first (Karpenter's
/// `NodeOverlayList.OrderByWeight`: weight descending, then name descending).
fn selecting<'s>(s: &'s Settings, t: &InstanceType, region: &str, capacity: CapacityType) -> Vec<&'s Overlay> {
    if s.overlays.is_empty() {
        return Vec::new();
    }
    let mut labels = crate::simulate::instances::requirements(t, region);
    labels.add("karpenter.sh/capacity-type", Wanted::is_in([capacity.as_str().to_string()]));
    for (k, v) in &s.labels {
        labels.add(k, Wanted::is_in([v.value.clone()]));
    }
    let mut out: Vec<&Overlay> = s.overlays.iter().map(|o| &o.value).filter(|o| labels.intersects(&wanted(o)).is_ok()).collect();
    out.sort_by(|a, b| b.weight.unwrap_or(0).cmp(&a.weight.unwrap_or(0)).then(b.name.value.cmp(&a.name.value)));
    out
}

fn wanted(o: &Overlay) -> Requirements {
    let mut r = Requirements::default();
    for req in &o.requires {
        if let Some(w) = Wanted::new(&req.operator, &req.values) {
            r.add(&req.key, w);
        }
    }
    r
}

/// The tier's overlays that select none of `types` (the NodePool's instance types) for any capacity type the tier
/// launches: they change nothing on this NodePool (lint GP026).
pub fn idle<'s>(s: &'s Settings, types: &[&InstanceType], region: &str) -> Vec<&'s crate::diagnostic::Spanned<Overlay>> {
    s.overlays
        .iter()
        .filter(|o| {
            !types.iter().any(|t| {
                s.capacity.value.iter().any(|ct| selecting(s, t, region, *ct).iter().any(|x| x.name.value == o.name.value))
            })
        })
        .collect()
}

/// The capacity type a pool's expected price is for (`cost::quote`): spot when the pool allows spot.
fn expected_capacity(s: &Settings) -> CapacityType {
    if s.capacity.value.contains(&CapacityType::Spot) { CapacityType::Spot } else { s.capacity.value.first().copied().unwrap_or(CapacityType::OnDemand) }
}

/// The price Karpenter ranks `t` by in this tier, and the overlay that set it (None: no overlay prices the type's
/// cheapest offering).
///
/// Karpenter's figure: each offering the tier may launch (its capacity types × its zones the type is offered in)
/// at its own price, the heaviest overlay that selects that offering (its zone and capacity type too) applied to it,
/// and the cheapest of them (v1.14.1 `pkg/controllers/nodeoverlay/store.go` `applyPriceOverlays`, per offering;
/// `pkg/cloudprovider/types.go` `OrderByPrice`, cheapest compatible offering) — what simulate ranks by. Without an
/// overlay that prices one of those offerings it is `list`, the tier's expected price: the highest spot price among
/// its zones, which is Karpenter's cheapest offering whenever a type's spot price is one across the zones (every
/// offline catalog: spot estimates are per type). Two approximations stay, neither of which touches the cost bound
/// (each candidate's ceiling is its list price, [`crate::catalog::cost::quote`], whatever it ranks at, and the bound
/// is over the candidates the NodePool lists): a reserved offering ranks at the on-demand price, not Karpenter's
/// near-zero one (the same order among reservations; only an overlay `price` on a reservation ranks differently), and
/// with refreshed per-zone spot prices an overlaid type ranks by its cheapest offering and another by its dearest.
pub fn ranked_price(s: &Settings, t: &InstanceType, region: &str, zones: &[String], list: f64) -> (f64, Option<String>) {
    if !s.overlays.iter().any(|o| o.value.price.is_some()) {
        return (list, None);
    }
    let mut best: Option<(f64, Option<&Overlay>)> = None;
    let mut overlaid = false;
    for &capacity in &s.capacity.value {
        let selecting: Vec<&Overlay> = selecting(s, t, region, capacity).into_iter().filter(|o| o.price.is_some()).collect();
        for zone in t.zones.iter().filter(|z| zones.is_empty() || zones.contains(z)) {
            let base = match capacity {
                CapacityType::Spot => t.spot.get(zone).or(t.on_demand.as_ref()),
                _ => t.on_demand.as_ref(),
            };
            let Some(base) = base else { continue };
            let applied = selecting.iter().copied().find(|o| crate::simulate::requirements::offering_compatible(&wanted(o), zone, capacity.as_str()));
            overlaid |= applied.is_some();
            let price = applied.and_then(|o| o.price.as_ref()).map_or(base.usd_per_hour, |p| p.apply(base.usd_per_hour));
            if best.is_none_or(|(b, _)| price < b) {
                best = Some((price, applied));
            }
        }
    }
    match best.filter(|_| overlaid) {
        Some((price, Some(o))) => (price, o.price.as_ref().map(|p| format!("overlay {} ({})", o.name.value, p.describe()))),
        Some((price, None)) => (price, None),
        None => (list, None),
    }
}

/// Schedulable units a capacity overlay declares for `t` on the pool's accelerator resource, if one does (the
/// heaviest that names it; a fractional quantity counts its whole units).
pub fn overlaid_units(s: &Settings, t: &InstanceType, region: &str) -> Option<u32> {
    let resource = s.accelerator.value.resource();
    let quantity = selecting(s, t, region, expected_capacity(s)).into_iter().find_map(|o| o.capacity.iter().find(|(r, _)| r == resource).map(|(_, q)| q.clone()))?;
    let milli = crate::simulate::yaml::milli(&quantity)?;
    Some(u32::try_from(milli / 1000).unwrap_or(u32::MAX))
}

/// What the memo of selections must tell apart: two tiers with the same constraints rank alike only if their
/// overlays (and the labels overlays may select on) are the same.
pub fn memo_key(s: &Settings) -> String {
    if s.overlays.is_empty() {
        return String::new();
    }
    let overlays: Vec<&Overlay> = s.overlays.iter().map(|o| &o.value).collect();
    let labels: BTreeMap<&String, &String> = s.labels.iter().map(|(k, v)| (k, &v.value)).collect();
    format!("\n{overlays:?} {labels:?}")
}

/// The NodeOverlays of a cluster's profiles: one per block, scoped to the NodePools (tiers) that carry it and were
/// planned, sorted by name. E0295 when two profiles of the cluster name an overlay alike (NodeOverlays are
/// cluster-scoped).
pub fn plan_overlays(cluster: ClusterPools, profiles: &[&crate::profile::Profile], sources: &Sources) -> Result<Vec<OverlayPlan>, Vec<ProfileDiagnostic>> {
    let planned: std::collections::BTreeSet<&str> = cluster.pools.iter().map(|p| p.name.as_str()).collect();
    let mut by_name: BTreeMap<String, OverlayPlan> = BTreeMap::new();
    let mut diagnostics = Vec::new();
    for profile in profiles {
        for tier in profile.pools.iter().flat_map(|p| &p.tiers).filter(|t| planned.contains(t.name.value.as_str())) {
            for o in &tier.settings.overlays {
                if let Some(shared) = cluster.pools.iter().find(|p| p.sharing.is_some() && sharing_overlay_name(&p.name, &o.name.value)) {
                    let message = format!("overlay name `{}` is the name of gpuplan's own NodeOverlay for the shared GPUs of NodePool `{}`", o.name.value, shared.name);
                    diagnostics.push(sources.error(o.name.span, ErrorCode::E0295, message).help("rename the overlay (gpuplan names its own `<nodepool>-<n>gpu`)"));
                    continue;
                }
                if let Some(other) = by_name.get(&o.name.value).filter(|p| p.profile != profile.name.value) {
                    let message = format!("overlay `{}` is also defined by profile `{}` in cluster `{}`", o.name.value, other.profile, cluster.name);
                    diagnostics.push(sources.error(o.name.span, ErrorCode::E0295, message).help("NodeOverlay names are cluster-wide: rename the overlay"));
                    continue;
                }
                let plan = by_name.entry(o.name.value.clone()).or_insert_with(|| OverlayPlan {
                    name: o.name.value.clone(),
                    profile: profile.name.value.clone(),
                    source: sources.source_name(profile.file).to_string(),
                    nodepools: Vec::new(),
                    weight: o.weight,
                    requirements: o.requires.iter().map(|r| Requirement { key: r.key.clone(), operator: r.operator.clone(), values: r.values.clone(), min_values: None }).collect(),
                    price: o.price.clone(),
                    capacity: o.capacity.clone(),
                });
                plan.nodepools.push(tier.name.value.clone());
            }
        }
    }
    let mut out: Vec<OverlayPlan> = by_name.into_values().collect();
    for o in &mut out {
        o.nodepools.sort();
        o.nodepools.dedup();
        o.requirements.insert(0, Requirement { key: "karpenter.sh/nodepool".into(), operator: "In".into(), values: o.nodepools.clone(), min_values: None });
    }
    if diagnostics.is_empty() { Ok(out) } else { Err(diagnostics) }
}

/// Whether `name` has the form of gpuplan's own overlay for a shared NodePool (`render::node_overlay_contexts`):
/// `<nodepool>-<n>gpu` or `<nodepool>-<n>gpu-x<k>`.
fn sharing_overlay_name(nodepool: &str, name: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let Some(rest) = name.strip_prefix(nodepool).and_then(|r| r.strip_prefix('-')) else { return false };
    let (gpus, split) = rest.split_once("gpu").unwrap_or(("", "-"));
    digits(gpus) && (split.is_empty() || split.strip_prefix("-x").is_some_and(digits))
}

/// E0297: two overlays of one NodePool at the same weight that both set the price of one offering, or the same
/// capacity resource, of one instance type. Karpenter takes the first by name (descending) and marks the other
/// `ValidationSucceeded=False` ("conflict with another overlay"), applying it nowhere, not even to the NodePools where
/// it was alone (v1.14.1 `pkg/controllers/nodeoverlay/controller.go` `validateAndUpdateInstanceTypeOverrides`,
/// `store.go` `isOfferingUpdateConflicting`, `isCapacityUpdateConflicting`; simulate's `simulate::overlays`). As
/// there, every instance type of the NodeClass counts, not only the pool's candidates (`GetInstanceTypes`), and a
/// price conflicts per offering: overlays that price other zones or capacity types of a type do not. (Karpenter
/// compares a capacity overlay with the last accepted one of its weight only; compile refuses every such pair.)
pub fn conflict(tier: &Tier, candidates: &[Candidate], catalog: &Catalog, zones: &[String], auto_mode: bool, sources: &Sources) -> Option<ProfileDiagnostic> {
    let s = &tier.settings;
    let mut order: Vec<&Overlay> = s.overlays.iter().map(|o| &o.value).collect();
    order.sort_by(|a, b| b.weight.unwrap_or(0).cmp(&a.weight.unwrap_or(0)).then(b.name.value.cmp(&a.name.value)));
    let shared = |a: &Overlay, b: &Overlay| a.capacity.iter().find(|(r, _)| b.capacity.iter().any(|(x, _)| x == r)).map(|(r, _)| r.clone());
    let pairs: Vec<(&Overlay, &Overlay)> = order
        .iter()
        .enumerate()
        .flat_map(|(i, a)| order[i + 1..].iter().map(move |b| (*a, *b)))
        .filter(|(a, b)| a.weight.unwrap_or(0) == b.weight.unwrap_or(0) && ((a.price.is_some() && b.price.is_some()) || shared(a, b).is_some()))
        .collect();
    if pairs.is_empty() {
        return None;
    }
    // The NodeClass's offerings: spot and on-demand in the cluster's zones, reserved where the tier reserves.
    let capacity_types: Vec<CapacityType> = [CapacityType::Spot, CapacityType::OnDemand, CapacityType::Reserved].into_iter().filter(|ct| *ct != CapacityType::Reserved || s.capacity.value.contains(ct)).collect();
    // The pool's candidates first, so that the message names one of its types where it can.
    let listed = |t: &InstanceType| candidates.iter().any(|c| c.name == t.name);
    let others = catalog.instance_types.iter().filter(|t| !listed(t) && (!auto_mode || crate::catalog::auto_mode::supports(t)));
    for t in candidates.iter().filter_map(|c| catalog.get(&c.name)).chain(others) {
        let by_capacity: Vec<(CapacityType, Vec<&Overlay>)> = capacity_types.iter().map(|ct| (*ct, selecting(s, t, &catalog.region, *ct))).collect();
        let offerings: Vec<(&String, CapacityType, &Vec<&Overlay>)> = by_capacity
            .iter()
            .flat_map(|(ct, sel)| t.zones.iter().filter(|z| zones.is_empty() || zones.contains(z)).map(move |z| (z, *ct, sel)))
            .collect();
        let prices = |o: &Overlay, z: &str, ct: CapacityType, sel: &[&Overlay]| sel.iter().any(|x| x.name.value == o.name.value) && crate::simulate::requirements::offering_compatible(&wanted(o), z, ct.as_str());
        for (a, b) in &pairs {
            let both_price = a.price.is_some() && b.price.is_some() && offerings.iter().any(|(z, ct, sel)| prices(a, z, *ct, sel) && prices(b, z, *ct, sel));
            let capacity = shared(a, b).filter(|_| offerings.iter().any(|(z, ct, sel)| prices(a, z, *ct, sel)) && offerings.iter().any(|(z, ct, sel)| prices(b, z, *ct, sel)));
            if !both_price && capacity.is_none() {
                continue;
            }
            let what = if both_price { "a price".to_string() } else { format!("{} capacity", capacity.unwrap_or_default()) };
            let span = s.overlays.iter().find(|o| o.name.value == b.name.value).map_or(b.name.span, |o| o.name.span);
            let unlisted = if listed(t) { "" } else { " (not one of the NodePool's types, but Karpenter checks every type of its NodeClass)" };
            let message = format!("overlays `{}` and `{}` both set {what} for {}{unlisted} in NodePool `{}` at weight {}: Karpenter applies `{}` and ignores `{}` everywhere", a.name.value, b.name.value, t.name, tier.name.value, a.weight.unwrap_or(0), a.name.value, b.name.value);
            return Some(sources.error(span, ErrorCode::E0297, message).help("give one of them a higher weight, or narrow their `require` lines so that they select different types, zones or capacity types"));
        }
    }
    None
}
