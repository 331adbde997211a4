//! Which offering a planned NodeClaim launches: aws/karpenter-provider-aws `pkg/providers/instance/instance.go`
//! (`filterInstanceTypes`, `getCapacityType`: reserved > spot > on-demand, the first with an available compatible
//! offering) and `pkg/providers/instance/filter/filter.go` (`CompatibleAvailableFilter`; `ExoticInstanceTypeFilter`:
//! GPU, accelerator and metal types are dropped when others remain and no requirement has minValues;
//! `SpotOfferingFilter`: spot offerings dearer than the cheapest on-demand one are dropped when both are allowed), then
//! the 60 cheapest types (`Truncate`).
//!
//! EC2 Fleet then picks within the capacity type: on-demand `lowest-price`, spot `price-capacity-optimized`, which
//! weighs live pool capacity no offline tool knows. The simulation picks the cheapest offering, ties broken by type
//! name then zone, and reports the whole candidate set, so a reader sees what else Fleet could choose.

use crate::catalog::CapacityType;

use super::instances::{Offering, SimType};
use super::requirements::{offering_compatible, Requirements};
use super::yaml::{fits, Resources};

/// aws/karpenter-provider-aws `pkg/providers/instance/instance.go` `maxInstanceTypes`.
pub const MAX_INSTANCE_TYPES: usize = 60;

#[derive(Debug, Clone)]
pub struct Launch {
    pub instance_type: usize,
    pub offering: Offering,
    /// Candidate type names after the launch filters.
    pub candidates: Vec<String>,
}

/// Picks the offering; None when nothing is available (cannot happen after scheduling, which checked offerings).
pub fn launch(types: &[std::sync::Arc<SimType>], candidates: &[usize], reqs: &Requirements, requests: &Resources) -> Option<Launch> {
    let usable = |o: &Offering| o.available && offering_compatible(reqs, &o.zone, o.capacity_type.as_str());
    let mut its: Vec<usize> = candidates.iter().copied().filter(|&i| fits(requests, &types[i].allocatable) && types[i].offerings.iter().any(usable)).collect();
    // filter.go `ReservedOfferingFilter`: when reserved capacity is allowed and some candidate has an available
    // compatible reserved offering, only those types go on, with only their reserved offerings.
    let allows_reserved = reqs.get("karpenter.sh/capacity-type").is_none_or(|r| r.has(CapacityType::Reserved.as_str()));
    let reserved_only = allows_reserved && its.iter().any(|&i| types[i].offerings.iter().any(|o| usable(o) && o.capacity_type == CapacityType::Reserved));
    if reserved_only {
        its.retain(|&i| types[i].offerings.iter().any(|o| usable(o) && o.capacity_type == CapacityType::Reserved));
    }
    let usable = |o: &Offering| usable(o) && (!reserved_only || o.capacity_type == CapacityType::Reserved);
    if !reqs.has_min_values() {
        let generic: Vec<usize> = its.iter().copied().filter(|&i| !types[i].exotic).collect();
        if !generic.is_empty() {
            its = generic;
        }
    }
    let offerings: Vec<(usize, &Offering)> = its.iter().flat_map(|&i| types[i].offerings.iter().filter(|o| usable(o)).map(move |o| (i, o))).collect();
    let cheapest_on_demand = offerings.iter().filter(|(_, o)| o.capacity_type == CapacityType::OnDemand).map(|(_, o)| o.usd_per_hour).fold(None, |m: Option<f64>, p| Some(m.map_or(p, |m| m.min(p))));
    let spot_filter = !reqs.has_min_values() && cheapest_on_demand.is_some();
    let dear = |o: &Offering| spot_filter && o.capacity_type == CapacityType::Spot && o.usd_per_hour > cheapest_on_demand.unwrap_or(f64::MAX);
    // filter.go `SpotOfferingFilter` drops the dear spot offerings, and a type only when that leaves it no offering at
    // all: one with any other offering (even an unavailable or incompatible one) stays a candidate.
    let its: Vec<usize> = its.into_iter().filter(|&i| types[i].offerings.iter().any(|o| !dear(o))).collect();
    let kept: Vec<(usize, &Offering)> = offerings.into_iter().filter(|(_, o)| !dear(o)).collect();
    // instance.go `filterInstanceTypes` ends with `Truncate(maxInstanceTypes = 60)`: the 60 types with the cheapest
    // available compatible offering (cloudprovider `OrderByPrice`; a type without one sorts last; equal prices by name
    // here, where Go's unstable sort has no defined order), and only they are sent to EC2 Fleet.
    let price = |i: usize| kept.iter().filter(|(t, _)| *t == i).map(|(_, o)| o.usd_per_hour).fold(f64::MAX, f64::min);
    let mut ordered: Vec<(usize, f64)> = its.iter().map(|&i| (i, price(i))).collect();
    ordered.sort_by(|a, b| a.1.total_cmp(&b.1).then(types[a.0].name.cmp(&types[b.0].name)));
    ordered.truncate(MAX_INSTANCE_TYPES);
    let kept: Vec<(usize, &Offering)> = kept.into_iter().filter(|(i, _)| ordered.iter().any(|(t, _)| t == i)).collect();
    let capacity_type = [CapacityType::Reserved, CapacityType::Spot].into_iter().find(|ct| kept.iter().any(|(_, o)| o.capacity_type == *ct)).unwrap_or(CapacityType::OnDemand);
    let (i, o) = kept
        .iter()
        .filter(|(_, o)| o.capacity_type == capacity_type)
        .min_by(|a, b| a.1.usd_per_hour.total_cmp(&b.1.usd_per_hour).then(types[a.0].name.cmp(&types[b.0].name)).then(a.1.zone.cmp(&b.1.zone)))?;
    let mut names: Vec<String> = ordered.iter().map(|(i, _)| types[*i].name.clone()).collect();
    names.sort();
    Some(Launch { instance_type: *i, offering: (*o).clone(), candidates: names })
}
