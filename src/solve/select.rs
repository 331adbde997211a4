//! Steps 1–3 for one tier: filter the catalog by the tier's [`Constraint`]s ([`narrow`]), rank what remains by
//! $/accelerator-hour ([`rank`]), and keep the types within the price ratio ([`admit_by_price`]). [`Selections`]
//! remembers each result, so tiers that select alike share it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::diagnostic::ErrorCode;
use crate::catalog::cost;
use crate::catalog::{AcceleratorKind, CapacityType, Catalog, InstanceType};
use crate::diagnostic::{ProfileDiagnostic, Sources, Span};
use crate::profile::{Settings, Tier};
use crate::simulate::instances::TypeLabels;

use super::constraints::{accelerator_memory_mib, constraints, has_only, Constraint};
use super::overlays;
use super::pool::{units_per_gpu, Candidate, Removal};

/// Karpenter spot-to-spot consolidation wants ≥ 15 candidate types; diversity across families is asked for
/// with `minValues` on the family requirement (2 when at least 2 families qualify).
pub const SPOT_MIN_TYPES: usize = 15;

/// How far above the cheapest $/accelerator-hour a spot pool may reach to get SPOT_MIN_TYPES types.
pub const SPOT_DIVERSITY_RATIO_MAX: f64 = 3.0;

/// A catalog's types by the one kind of accelerator they have (see [`has_only`]), in catalog order: every tier's
/// first filter, worked out once per catalog instead of once per tier over all of its types.
pub struct AcceleratorIndex<'c> {
    by_kind: BTreeMap<AcceleratorKind, Vec<&'c InstanceType>>,
}

impl<'c> AcceleratorIndex<'c> {
    pub fn new(catalog: &'c Catalog) -> AcceleratorIndex<'c> {
        let mut by_kind: BTreeMap<AcceleratorKind, Vec<&InstanceType>> = BTreeMap::new();
        for t in &catalog.instance_types {
            for kind in [AcceleratorKind::Nvidia, AcceleratorKind::Amd, AcceleratorKind::Neuron, AcceleratorKind::Cpu] {
                if has_only(kind, t) {
                    by_kind.entry(kind).or_default().push(t);
                }
            }
        }
        AcceleratorIndex { by_kind }
    }
}

/// The region one cluster's tiers select from: its catalog, the catalog's types by accelerator kind, and their labels
/// (`require` lines read them).
#[derive(Clone, Copy)]
pub struct Region<'c> {
    pub catalog: &'c Catalog,
    pub index: &'c AcceleratorIndex<'c>,
    pub labels: &'c TypeLabels,
}

/// What selection decided for a tier: the candidates ranked cheapest first, and what each constraint removed.
/// The candidates are shared (`Arc`) by every tier that selects the same way.
#[derive(Clone)]
pub struct Selected {
    pub candidates: Arc<Vec<Candidate>>,
    pub removed: Arc<Vec<Removal>>,
}

/// The selections of one cluster's solve, by tier key (the constraints' words and the ranking inputs). A file of
/// 200,000 pools written from one preset selects once instead of 200,000 times (issue 21: 200,000 pools within
/// seconds). Failures are not kept: they carry the failing tier's own location.
#[derive(Default)]
pub struct Selections {
    memo: HashMap<String, Selected>,
}

impl Selections {
    /// Filters and ranks the catalog for one tier. On failure, names the constraint that removed the last types.
    pub fn select(&mut self, tier: &Tier, region: Region, zones: &[String], auto_mode: Option<Span>, sources: &Sources) -> Result<Selected, ProfileDiagnostic> {
        let Region { catalog, index, labels } = region;
        let s = &tier.settings;
        let mut constraints = constraints(tier, catalog, labels, zones, sources)?;
        if let Some(span) = auto_mode {
            // Applied last, so that what it removes is reported as Auto Mode's doing.
            constraints.push(Constraint::new("EKS Auto Mode launches the type (a supported family, > 1 vCPU, not nano/micro/small)", span, crate::catalog::auto_mode::supports));
        }
        let key = memo_key(&constraints, s, zones);
        if let Some(selected) = self.memo.get(&key) {
            return Ok(selected.clone());
        }
        // A CPU pool that admits what its requirements admit (`admit "as-required"`, a mixed pool) starts from every type.
        let as_required_cpu = s.admit.value == crate::profile::Admit::AsRequired && s.accelerator.value == AcceleratorKind::Cpu;
        let start = match index.by_kind.get(&s.accelerator.value).filter(|_| !as_required_cpu) {
            Some(types) => types.clone(),
            // Only the index's types pass the first constraint; without any, it reports on the whole catalog.
            None => catalog.instance_types.iter().collect(),
        };
        let Narrowed { types, mut removed } = narrow(start, &constraints).map_err(|e| e.diagnostic(tier, sources))?;
        let ranked = rank(&types, tier, catalog, zones);
        let (kept, by_price) = admit_by_price(ranked, s);
        removed.extend(by_price);
        let selected = Selected { candidates: Arc::new(kept), removed: Arc::new(removed) };
        self.memo.insert(key, selected.clone());
        Ok(selected)
    }
}

/// The key tiers that select alike share: the constraints' words and every input of the ranking.
fn memo_key(constraints: &[Constraint], s: &Settings, zones: &[String]) -> String {
    let mut key: String = constraints.iter().map(|c| c.label.as_str()).collect::<Vec<_>>().join("\n");
    key.push_str(&format!("\n{:?} {:?} {:?} {} {:?} {:?} {zones:?}", s.accelerator.value, s.sharing.as_ref().map(|x| &x.value), s.spot_ceiling.value, s.price_ratio_max.value, s.admit.value, s.capacity.value));
    key.push_str(&overlays::memo_key(s));
    key
}

/// A constraint removed the last types: which, what it removed, and what the earlier ones removed.
pub struct Exhausted {
    label: String,
    span: Span,
    dropped: Vec<String>,
    before: Vec<Removal>,
}

impl Exhausted {
    /// E0140, at the constraint that removed the last candidates.
    fn diagnostic(self, tier: &Tier, sources: &Sources) -> ProfileDiagnostic {
        let Exhausted { label, span, dropped, before, .. } = self;
        let examples: Vec<&str> = dropped.iter().take(8).map(String::as_str).collect();
        let more = dropped.len().saturating_sub(examples.len());
        let before: Vec<String> = before.iter().map(|r| format!("{} removed {}", r.constraint, r.types.len())).collect();
        sources
            .error(span, ErrorCode::E0140, format!("no instance type satisfies pool `{}`: `{label}` removed the last {} candidate{}", tier.name.value, dropped.len(), if dropped.len() == 1 { "" } else { "s" }))
            .label(format!("this removed {}{}", examples.join(", "), if more > 0 { format!(" and {more} more") } else { String::new() }))
            .help(if before.is_empty() { "relax this constraint".to_string() } else { format!("relax this constraint; before it: {}", before.join("; ")) })
    }
}

/// The types every constraint kept, and what each removed on the way.
pub struct Narrowed<'c> {
    pub types: Vec<&'c InstanceType>,
    pub removed: Vec<Removal>,
}

/// Applies the constraints in order, recording what each removed (the accelerator-kind filter aside: every
/// other kind's types are not worth listing; see [`Constraint::listed`]).
pub fn narrow<'c>(mut remaining: Vec<&'c InstanceType>, constraints: &[Constraint]) -> Result<Narrowed<'c>, Exhausted> {
    let mut removed = Vec::new();
    for c in constraints {
        let (kept, dropped): (Vec<&InstanceType>, Vec<&InstanceType>) = remaining.iter().partition(|t| (c.keep)(t));
        if kept.is_empty() {
            let dropped = dropped.iter().map(|t| t.name.clone()).collect();
            return Err(Exhausted { label: c.label.clone(), span: c.span, dropped, before: removed });
        }
        if !dropped.is_empty() && c.listed {
            removed.push(Removal::new(c.label.clone(), Some(c.span), dropped.iter().map(|t| (t.name.clone(), c.figure(t)))));
        }
        remaining = kept;
    }
    Ok(Narrowed { types: remaining, removed })
}

/// Prices each remaining type for the tier and ranks by $/accelerator-hour, ties by name.
pub fn rank(remaining: &[&InstanceType], tier: &Tier, catalog: &Catalog, zones: &[String]) -> Vec<Candidate> {
    let s = &tier.settings;
    let kind = s.accelerator.value;
    let sharing = s.sharing.as_ref().map(|x| &x.value);
    let mut candidates: Vec<Candidate> = remaining
        .iter()
        .map(|t| {
            let accelerators = t.accelerators(kind).max(1);
            let quote = cost::quote(t, catalog, &s.capacity.value, zones, s.spot_ceiling.value).expect("filtered on having prices");
            let memory = accelerator_memory_mib(t, kind);
            let node_units = overlays::overlaid_units(s, t, &catalog.region).filter(|u| *u > 0).unwrap_or_else(|| accelerators * units_per_gpu(sharing, t));
            let units = f64::from(node_units);
            // Karpenter ranks by the overlaid price; the at-limit and worst-case figures stay at list price.
            let (ranked, overlay) = overlays::ranked_price(s, t, &catalog.region, zones, quote.likely);
            let per_unit = ranked / units;
            Candidate {
                name: t.name.clone(),
                family: t.family.clone(),
                accelerators,
                units: node_units,
                accelerator_name: match kind {
                    AcceleratorKind::Neuron => t.neuron.as_ref().map(|n| n.name.clone()).unwrap_or_default(),
                    _ => t.gpus.iter().map(|g| g.name.clone()).collect::<Vec<_>>().join("+"),
                },
                memory_mib_per_accelerator: memory,
                vcpu: t.vcpu,
                memory_mib: crate::catalog::memory_mib(t).max(1) as u64,
                usd_per_hour: quote.likely,
                usd_per_accelerator_hour: per_unit,
                usd_per_accelerator_gib_hour: if memory > 0 { per_unit / (memory as f64 / 1024.0) } else { 0.0 },
                estimate: quote.likely_is_estimate,
                ceiling_usd_per_hour: quote.ceiling,
                ceiling_usd_per_accelerator_hour: quote.ceiling / units,
                ceiling_estimate: quote.ceiling_is_estimate,
                bound: quote.bound,
                overlay,
            }
        })
        .collect();
    candidates.sort_by(cheapest_first);
    candidates
}

fn cheapest_first(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    a.usd_per_accelerator_hour.total_cmp(&b.usd_per_accelerator_hour).then(a.name.cmp(&b.name))
}

/// Price quality: a 1-GPU 16xlarge costs 4× a 1-GPU xlarge per GPU; keeps only types within `price-ratio-max` of
/// the best $/accelerator-hour, unless the user named them. Spot diversity: spot-to-spot consolidation needs
/// SPOT_MIN_TYPES candidates, so when the ratio leaves fewer, the next cheapest types up to
/// SPOT_DIVERSITY_RATIO_MAX × cheapest are admitted too (a spot pool that can always find capacity is worth a
/// somewhat worse $/accelerator-hour; the worst case still bounds the cost).
pub fn admit_by_price(ranked: Vec<Candidate>, s: &Settings) -> (Vec<Candidate>, Option<Removal>) {
    let cheapest = ranked[0].usd_per_accelerator_hour;
    // `admit "as-required"` keeps every price, as Karpenter does.
    let ratio = if s.admit.value == crate::profile::Admit::AsRequired { f64::INFINITY } else { s.price_ratio_max.value };
    let spot = s.capacity.value.contains(&CapacityType::Spot);
    let (mut kept, mut dropped): (Vec<Candidate>, Vec<Candidate>) = ranked
        .into_iter()
        .partition(|c| ratio.is_infinite() || c.usd_per_accelerator_hour <= cheapest * ratio + 1e-9 || s.types.iter().any(|t| t.value == c.name));
    if spot && kept.len() < SPOT_MIN_TYPES {
        let widen = ratio.max(SPOT_DIVERSITY_RATIO_MAX);
        let admit: Vec<usize> = dropped
            .iter()
            .enumerate()
            .filter(|(_, c)| c.usd_per_accelerator_hour <= cheapest * widen + 1e-9)
            .map(|(i, _)| i)
            .take(SPOT_MIN_TYPES - kept.len())
            .collect();
        for i in admit.into_iter().rev() {
            kept.push(dropped.remove(i));
        }
        kept.sort_by(cheapest_first);
    }
    let unit = if s.accelerator.value == AcceleratorKind::Cpu { "vCPU" } else { "accelerator" };
    let removal = (!dropped.is_empty()).then(|| Removal::new(
        format!(
            "$/{unit}-hour ≤ {ratio} × cheapest (${cheapest:.4}) [price-ratio-max{}]",
            if spot { format!("; spot pools widen to {SPOT_DIVERSITY_RATIO_MAX} × to reach {SPOT_MIN_TYPES} types") } else { String::new() }
        ),
        Some(s.price_ratio_max.span),
        dropped.iter().map(|c| (c.name.clone(), format!("${:.4}/{unit}-hour, {:.2} × cheapest", c.usd_per_accelerator_hour, c.usd_per_accelerator_hour / cheapest))),
    ));
    (kept, removal)
}
