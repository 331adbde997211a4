//! What a refreshed catalog must look like before it may replace a snapshot.
//!
//! An EC2 endpoint that answers with valid but empty (or truncated) pages is indistinguishable from a region with
//! no instance types, and replacing a snapshot with that makes every profile of the region fail to compile. So the
//! new catalog is compared with what a real region has and with the previous snapshot ([`shrink_problems`]), and
//! refused when it lost too much; `--accept-shrink` accepts a region that really did, except an empty answer.
//!
//! Spot prices are checked one by one against the type's on-demand price ([`drop_implausible_spot`]). EC2 caps
//! a spot price at the on-demand price ("you pay the Spot price … and never more than the On-Demand price", the
//! EC2 Spot pricing page), and real prices sit well above 5% of it; moto answers $0.00001/h for everything. An
//! implausible price is dropped, not refused: the catalog then carries the estimate for that type and zone,
//! labelled as one, which never reaches a worst case (spot worst cases use the on-demand price), whereas refusing
//! would leave the whole region's types and on-demand prices stale over a few bad rows. The refresh says how many
//! it dropped and shows one.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::catalog::{Catalog, SpotPrices};

/// Fewer types than this is no real region: the smallest regions offer several hundred (the committed
/// us-east-1 snapshot has 1,395; moto serves 1,263 everywhere).
pub const MIN_INSTANCE_TYPES: usize = 100;
/// A refresh with fewer types than this share of the previous snapshot is refused.
pub const MIN_SHARE_OF_PREVIOUS: f64 = 0.5;
/// A plausible spot price, as a share of the type's on-demand price.
pub const SPOT_SHARE: std::ops::RangeInclusive<f64> = 0.05..=1.0;

/// Why a refreshed catalog may not replace the snapshot.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// No instance type at all (refused even with `--accept-shrink`).
    Empty,
    BelowFloor { types: usize },
    Shrunk { types: usize, previous: usize },
    /// Accelerated families (GPU or Neuron) the previous snapshot had and the answer lacks, sorted.
    FamiliesMissing(Vec<String>),
}

impl Problem {
    /// Whether `--accept-shrink` accepts it.
    pub fn acceptable(&self) -> bool {
        !matches!(self, Problem::Empty)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Empty => write!(f, "the answer has no instance types at all (an empty answer is never a real region)"),
            Problem::BelowFloor { types } => {
                write!(f, "the answer has {types} instance types, fewer than any real region ({MIN_INSTANCE_TYPES})")
            }
            Problem::Shrunk { types, previous } => write!(
                f,
                "the answer has {types} instance types, less than {:.0}% of the previous snapshot's {previous}",
                MIN_SHARE_OF_PREVIOUS * 100.0
            ),
            Problem::FamiliesMissing(families) => write!(
                f,
                "{} accelerator famil{} of the previous snapshot {} missing: {}",
                families.len(),
                if families.len() == 1 { "y" } else { "ies" },
                if families.len() == 1 { "is" } else { "are" },
                families.join(", ")
            ),
        }
    }
}

/// What is wrong with replacing `previous` (when there is one) with `new`; empty when nothing is.
pub fn shrink_problems(previous: Option<&Catalog>, new: &Catalog) -> Vec<Problem> {
    let types = new.instance_types.len();
    if types == 0 {
        return vec![Problem::Empty];
    }
    let mut problems = Vec::new();
    if types < MIN_INSTANCE_TYPES {
        problems.push(Problem::BelowFloor { types });
    }
    let Some(previous) = previous else { return problems };
    let before = previous.instance_types.len();
    if (types as f64) < before as f64 * MIN_SHARE_OF_PREVIOUS {
        problems.push(Problem::Shrunk { types, previous: before });
    }
    let missing: Vec<String> = accelerated_families(previous).difference(&accelerated_families(new)).cloned().collect();
    if !missing.is_empty() {
        problems.push(Problem::FamiliesMissing(missing));
    }
    problems
}

fn accelerated_families(catalog: &Catalog) -> BTreeSet<String> {
    catalog
        .instance_types
        .iter()
        .filter(|t| !t.gpus.is_empty() || t.neuron.is_some())
        .map(|t| t.family.clone())
        .collect()
}

/// One dropped spot price.
#[derive(Debug, Clone, PartialEq)]
pub struct DroppedSpot {
    pub instance_type: String,
    pub zone: String,
    pub spot: f64,
    pub on_demand: f64,
}

/// Removes every (type, zone) whose newest or highest observed spot price lies outside [`SPOT_SHARE`] of the
/// type's on-demand price (`on_demand`: the new one, else the previous snapshot's), from both maps; returns them
/// sorted. Types without any on-demand price cannot be judged and are kept.
pub fn drop_implausible_spot(spot: &mut SpotPrices, on_demand: &BTreeMap<String, f64>) -> Vec<DroppedSpot> {
    let mut dropped = Vec::new();
    for (name, zones) in spot.newest.iter_mut() {
        let Some(&od) = on_demand.get(name).filter(|od| **od > 0.0) else { continue };
        let highest = spot.highest.get_mut(name);
        let plausible = |usd: f64| SPOT_SHARE.contains(&(usd / od));
        let bad: Vec<(String, f64)> = zones
            .iter()
            .filter(|(zone, usd)| {
                let max = highest.as_ref().and_then(|h| h.get(*zone)).copied().unwrap_or(**usd);
                !plausible(**usd) || !plausible(max)
            })
            .map(|(zone, usd)| (zone.clone(), *usd))
            .collect();
        if let Some(highest) = highest {
            for (zone, _) in &bad {
                highest.remove(zone);
            }
        }
        for (zone, usd) in bad {
            zones.remove(&zone);
            dropped.push(DroppedSpot { instance_type: name.clone(), zone, spot: usd, on_demand: od });
        }
    }
    spot.newest.retain(|_, zones| !zones.is_empty());
    spot.highest.retain(|_, zones| !zones.is_empty());
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed() -> Catalog {
        Catalog::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs"), "us-east-1").unwrap()
    }

    fn keeping(catalog: &Catalog, keep: impl FnMut(&crate::catalog::InstanceType) -> bool) -> Catalog {
        let mut out = catalog.clone();
        out.instance_types.retain(keep);
        out
    }

    #[test]
    fn the_same_snapshot_again_has_no_problem() {
        let previous = committed();
        assert_eq!(shrink_problems(Some(&previous), &previous), []);
        assert_eq!(shrink_problems(None, &previous), []);
    }

    #[test]
    fn an_answer_with_less_than_half_the_previous_types_is_shrunk() {
        let previous = committed();
        let mut n = 0;
        // Every accelerated type and a third of the others.
        let new = keeping(&previous, |t| {
            n += 1;
            n % 3 == 0 || !t.gpus.is_empty() || t.neuron.is_some()
        });
        let problems = shrink_problems(Some(&previous), &new);
        assert_eq!(problems, [Problem::Shrunk { types: new.instance_types.len(), previous: 1395 }]);
        assert!(problems[0].acceptable());
    }

    #[test]
    fn an_answer_below_the_floor_is_refused_without_a_previous_snapshot() {
        let new = keeping(&committed(), |t| t.family == "g5");
        assert_eq!(shrink_problems(None, &new), [Problem::BelowFloor { types: new.instance_types.len() }]);
    }

    #[test]
    fn an_answer_without_a_family_names_it() {
        let previous = committed();
        let new = keeping(&previous, |t| t.family != "p5" && t.family != "inf2");
        assert_eq!(shrink_problems(Some(&previous), &new), [Problem::FamiliesMissing(vec!["inf2".into(), "p5".into()])]);
        assert_eq!(
            Problem::FamiliesMissing(vec!["inf2".into(), "p5".into()]).to_string(),
            "2 accelerator families of the previous snapshot are missing: inf2, p5"
        );
    }

    #[test]
    fn an_empty_answer_is_not_acceptable() {
        let new = keeping(&committed(), |_| false);
        assert_eq!(shrink_problems(Some(&committed()), &new), [Problem::Empty]);
        assert!(!Problem::Empty.acceptable());
    }

    #[test]
    fn spot_prices_outside_5_to_100_percent_of_on_demand_are_dropped_from_both_maps() {
        let zones = |pairs: &[(&str, f64)]| pairs.iter().map(|(z, p)| (z.to_string(), *p)).collect::<BTreeMap<_, _>>();
        let mut spot = SpotPrices {
            newest: BTreeMap::from([
                ("g5.xlarge".to_string(), zones(&[("a", 0.00001), ("b", 0.40), ("c", 1.20)])),
                ("x.large".to_string(), zones(&[("a", 0.00001)])),
            ]),
            highest: BTreeMap::from([
                ("g5.xlarge".to_string(), zones(&[("a", 0.00001), ("b", 0.45), ("c", 1.20)])),
                ("x.large".to_string(), zones(&[("a", 0.00001)])),
            ]),
        };
        let on_demand = BTreeMap::from([("g5.xlarge".to_string(), 1.006)]);
        let dropped = drop_implausible_spot(&mut spot, &on_demand);
        let names: Vec<(&str, &str)> = dropped.iter().map(|d| (d.instance_type.as_str(), d.zone.as_str())).collect();
        assert_eq!(names, [("g5.xlarge", "a"), ("g5.xlarge", "c")]);
        assert_eq!(spot.newest["g5.xlarge"], zones(&[("b", 0.40)]));
        assert_eq!(spot.highest["g5.xlarge"], zones(&[("b", 0.45)]));
        // No on-demand price to judge it by: kept.
        assert_eq!(spot.newest["x.large"], zones(&[("a", 0.00001)]));
    }
}
