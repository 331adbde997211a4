//! What changed between two snapshots of a region (`catalog refresh` prints it, and reports it per region): types
//! and zones added or removed, price moves of accelerated types, zone offerings.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

use crate::catalog::ebs::EbsPrices;
use crate::catalog::{CapacityType, Catalog, InstanceType};

/// GPU or Neuron: the types whose price moves a refresh reports (and warns about when their spot price is estimated).
pub(crate) fn is_accelerated(t: &InstanceType) -> bool {
    !t.gpus.is_empty() || t.neuron.is_some()
}

/// What changed between two snapshots of a region, in words a reviewer reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CatalogChanges {
    pub region: String,
    /// Instance types only in the new snapshot, sorted.
    pub added: Vec<String>,
    /// Instance types only in the old snapshot, sorted.
    pub removed: Vec<String>,
    pub zones_added: Vec<String>,
    pub zones_removed: Vec<String>,
    /// Price moves of accelerated (GPU / Neuron) types present in both, by type, then on-demand before spot.
    pub price_moves: Vec<PriceMove>,
    /// Zone offerings of types present in both.
    pub offerings: Vec<OfferingChange>,
    /// The gp3 EBS prices, old and new, when they differ (`None`: that side had none, so the cited table priced
    /// its volumes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ebs: Option<(Option<EbsPrices>, Option<EbsPrices>)>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PriceMove {
    pub instance_type: String,
    pub capacity_type: CapacityType,
    /// The zone, for spot prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// USD/hour; `None` when the price was not known on that side.
    pub old: Option<f64>,
    pub new: Option<f64>,
    /// True when that side is an estimate (e.g. spot estimated from on-demand).
    pub old_estimate: bool,
    pub new_estimate: bool,
}

impl PriceMove {
    /// Relative change in percent, when both sides are known and the old one is not zero.
    pub fn percent(&self) -> Option<f64> {
        match (self.old, self.new) {
            (Some(old), Some(new)) if old != 0.0 => Some((new - old) / old * 100.0),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OfferingChange {
    pub instance_type: String,
    pub zones_added: Vec<String>,
    pub zones_removed: Vec<String>,
}

impl CatalogChanges {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.zones_added.is_empty()
            && self.zones_removed.is_empty()
            && self.price_moves.is_empty()
            && self.offerings.is_empty()
            && self.ebs.is_none()
    }
}

/// Compares two snapshots of one region.
pub fn catalog_changes(old: &Catalog, new: &Catalog) -> CatalogChanges {
    let old_types: BTreeMap<&str, &InstanceType> = old.instance_types.iter().map(|t| (t.name.as_str(), t)).collect();
    let new_types: BTreeMap<&str, &InstanceType> = new.instance_types.iter().map(|t| (t.name.as_str(), t)).collect();
    let (added, removed) = set_diff(old_types.keys().copied(), new_types.keys().copied());
    let (zones_added, zones_removed) =
        set_diff(old.zones.iter().map(String::as_str), new.zones.iter().map(String::as_str));

    let mut price_moves = Vec::new();
    let mut offerings = Vec::new();
    for (name, new_t) in &new_types {
        let Some(old_t) = old_types.get(name) else { continue };
        if is_accelerated(old_t) || is_accelerated(new_t) {
            let price = |catalog: &Catalog, p: Option<&crate::catalog::Price>| {
                (p.map(|p| p.usd_per_hour), p.is_some_and(|p| catalog.is_estimate(p)))
            };
            let mut push =
                |capacity_type, zone: Option<&str>, (o, oe): (Option<f64>, bool), (n, ne): (Option<f64>, bool)| {
                    if o != n {
                        price_moves.push(PriceMove {
                            instance_type: name.to_string(),
                            capacity_type,
                            zone: zone.map(str::to_string),
                            old: o,
                            new: n,
                            old_estimate: oe,
                            new_estimate: ne,
                        });
                    }
                };
            push(
                CapacityType::OnDemand,
                None,
                price(old, old_t.on_demand.as_ref()),
                price(new, new_t.on_demand.as_ref()),
            );
            let zones: BTreeSet<&String> = old_t.spot.keys().chain(new_t.spot.keys()).collect();
            for zone in zones {
                push(
                    CapacityType::Spot,
                    Some(zone),
                    price(old, old_t.spot.get(zone)),
                    price(new, new_t.spot.get(zone)),
                );
            }
        }
        let (zones_added, zones_removed) =
            set_diff(old_t.zones.iter().map(String::as_str), new_t.zones.iter().map(String::as_str));
        if !zones_added.is_empty() || !zones_removed.is_empty() {
            offerings.push(OfferingChange { instance_type: name.to_string(), zones_added, zones_removed });
        }
    }
    let ebs = (old.ebs != new.ebs).then_some((old.ebs, new.ebs));
    CatalogChanges { region: new.region.clone(), added, removed, zones_added, zones_removed, price_moves, offerings, ebs }
}

/// (only in `new`, only in `old`), sorted.
fn set_diff<'a>(old: impl Iterator<Item = &'a str>, new: impl Iterator<Item = &'a str>) -> (Vec<String>, Vec<String>) {
    let old: BTreeSet<&str> = old.collect();
    let new: BTreeSet<&str> = new.collect();
    (new.difference(&old).map(|s| s.to_string()).collect(), old.difference(&new).map(|s| s.to_string()).collect())
}

/// "$1.006", "$1.100", "$0.4024": at least three decimals, four when the fourth matters.
pub fn format_usd(usd: f64) -> String {
    let four = format!("{usd:.4}");
    match four.strip_suffix('0') {
        Some(three) => format!("${three}"),
        None => format!("${four}"),
    }
}

impl fmt::Display for PriceMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = |usd: Option<f64>, estimate: bool| match usd {
            Some(usd) if estimate => format!("{} (estimate)", format_usd(usd)),
            Some(usd) => format_usd(usd),
            None => "none".to_string(),
        };
        write!(f, "{} {}", self.instance_type, self.capacity_type.as_str())?;
        if let Some(zone) = &self.zone {
            write!(f, " {zone}")?;
        }
        write!(f, " {}→{}", side(self.old, self.old_estimate), side(self.new, self.new_estimate))?;
        if let Some(pct) = self.percent() {
            write!(f, " ({pct:+.1}%)")?;
        }
        Ok(())
    }
}

impl fmt::Display for OfferingChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} zones", self.instance_type)?;
        for zone in &self.zones_added {
            write!(f, " +{zone}")?;
        }
        for zone in &self.zones_removed {
            write!(f, " -{zone}")?;
        }
        Ok(())
    }
}

impl fmt::Display for CatalogChanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return writeln!(f, "{}: no changes", self.region);
        }
        let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        writeln!(
            f,
            "{}: {} added, {} removed, {}, {}",
            self.region,
            plural(self.added.len(), "type", "types"),
            self.removed.len(),
            plural(self.price_moves.len(), "accelerated price move", "accelerated price moves"),
            plural(self.offerings.len(), "offering change", "offering changes"),
        )?;
        if !self.added.is_empty() {
            writeln!(f, "  added: {}", abbreviated(&self.added))?;
        }
        if !self.removed.is_empty() {
            writeln!(f, "  removed: {}", abbreviated(&self.removed))?;
        }
        if !self.zones_added.is_empty() || !self.zones_removed.is_empty() {
            let zones: Vec<String> = self
                .zones_added
                .iter()
                .map(|z| format!("+{z}"))
                .chain(self.zones_removed.iter().map(|z| format!("-{z}")))
                .collect();
            writeln!(f, "  zones: {}", zones.join(" "))?;
        }
        for price_move in &self.price_moves {
            writeln!(f, "  {price_move}")?;
        }
        for offering in &self.offerings {
            writeln!(f, "  {offering}")?;
        }
        if let Some((old, new)) = &self.ebs {
            writeln!(f, "  gp3 EBS $/GB-month, $/IOPS-month, $/MiBps-month: {} → {}", ebs_words(old.as_ref()), ebs_words(new.as_ref()))?;
        }
        Ok(())
    }
}

/// "0.08, 0.005, 0.04", or the table's when the catalog has none.
fn ebs_words(prices: Option<&EbsPrices>) -> String {
    prices.map_or("none (the cited table)".to_string(), |p| {
        format!("{}, {}, {}", p.gp3_per_gib_month, p.gp3_per_iops_month, p.gp3_per_mibps_month)
    })
}

/// At most 25 names, then how many more.
fn abbreviated(names: &[String]) -> String {
    const SHOWN: usize = 25;
    let mut text = names.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" … and {} more", names.len() - SHOWN));
    }
    text
}
