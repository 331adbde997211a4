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

use crate::catalog::Catalog;
use crate::catalog::aws::SpotPrices;

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
/// type's on-demand price, from both maps; returns them sorted. Types without an on-demand price cannot be judged
/// and are kept.
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
