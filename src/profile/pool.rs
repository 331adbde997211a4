//! `pool "name" preset="…" { … }`: a pool and the NodePools it becomes. A preset gives the defaults and the
//! fallback chain (`inference-spot`: a spot NodePool, then an on-demand one); a `tiered` pool writes its own chain
//! of `tier`s, each over the pool's settings; a `reserved` block puts the reservation's NodePool first.
//!
//! ```kdl
//! pool "llm" preset="inference-spot" { gpu { name "A10G" "L4" }; max-accelerators 40 }
//! pool "mixed" preset="tiered" {
//!     tier "a10g-spot" capacity="spot" { gpu { name "A10G" } }
//!     tier "a10g-od" capacity="on-demand" { gpu { name "A10G" } }
//! }
//! ```

use std::collections::BTreeMap;

use kdl::KdlNode;

use super::parser::{args, prop, Parser};
use super::{Disruption, MaintenanceWindow, Settings};
use crate::diagnostic::ErrorCode;
use crate::catalog::cost::SpotCeiling;
use crate::catalog::{AcceleratorKind, Arch, CapacityType};
use crate::diagnostic::{Span, Spanned};

/// Lint/solver price-quality knob default: admit a type only if its $/accelerator-hour is at most this
/// multiple of the cheapest candidate's (the book's concepts/budget.md).
pub const DEFAULT_PRICE_RATIO_MAX: f64 = 1.6;

/// The `terminationGracePeriod` of the general, inference and tiered presets.
pub const SERVING_GRACE_PERIOD: &str = "1h";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// One pool allowing spot and on-demand (Karpenter prefers spot within the pool).
    General,
    /// Spot first, on-demand fallback: two NodePools.
    InferenceSpot,
    InferenceOnDemand,
    TrainingOnDemand,
    BatchSpot,
    /// An ordered chain of user-defined `tier`s.
    Tiered,
}

impl Preset {
    pub const NAMES: [&'static str; 6] =
        ["general", "inference-spot", "inference-on-demand", "training-on-demand", "batch-spot", "tiered"];

    /// The preset's `spread` default: the serving presets tell their workloads' pods to spread over zones and hosts.
    pub fn spreads(self) -> bool {
        matches!(self, Preset::InferenceSpot | Preset::InferenceOnDemand | Preset::Tiered)
    }

    pub fn parse(name: &str) -> Option<Preset> {
        Some(match name {
            "general" => Preset::General,
            "inference-spot" => Preset::InferenceSpot,
            "inference-on-demand" => Preset::InferenceOnDemand,
            "training-on-demand" => Preset::TrainingOnDemand,
            "batch-spot" => Preset::BatchSpot,
            "tiered" => Preset::Tiered,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        Preset::NAMES[self as usize]
    }
}

#[derive(Debug, Clone)]
pub struct Pool {
    pub name: Spanned<String>,
    pub preset: Spanned<Preset>,
    /// In fallback order: the first tier gets the highest weight. Each tier becomes one NodePool.
    pub tiers: Vec<Tier>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Tier {
    /// The NodePool name.
    pub name: Spanned<String>,
    pub settings: Settings,
}

impl Parser<'_> {
    /// [`Self::parse_pool`], noting a pool that failed in [`super::parser::Failed`].
    pub(super) fn parse_pool_or_mark_failed(&mut self, node: &KdlNode) -> Option<Pool> {
        let pool = self.parse_pool(node);
        if pool.is_none() {
            let name = args(node).next().and_then(|e| e.value().as_string()).map(str::to_string);
            self.failed.pools.push(name);
        }
        pool
    }

    /// A `pool` block: its settings over the preset's, then its NodePools (tiers), each checked on its own
    /// (E0130, E0131, …) and together (one kind of node, E0264; a static pool's rules).
    pub(super) fn parse_pool(&mut self, node: &KdlNode) -> Option<Pool> {
        self.check_entries(node, &["preset"], 1);
        let name = args(node).next().and_then(|e| self.expect_string(e, "the pool name"));
        let Some(name) = name else {
            self.error(self.span(node.span()), ErrorCode::E0107, "`pool` needs a name", "write pool \"llm\" preset=\"inference-spot\" { … }");
            return None;
        };
        self.check_name(&name, "pool");
        let preset = self.parse_preset(node, &name)?;
        let mut settings = preset_defaults(preset.value, preset.span);
        let children = node.children().map(|c| c.nodes()).unwrap_or_default();
        self.one_kind(children, "the pool");
        let mut tier_nodes = Vec::new();
        for child in children {
            if child.name().value() == "tier" {
                tier_nodes.push(child);
            } else {
                self.apply_setting(child, &mut settings, "`pool`");
            }
        }
        let tiers = if preset.value == Preset::Tiered {
            self.written_tiers(&name, &preset, &settings, &tier_nodes)
        } else {
            self.preset_tiers(&name, &preset, settings, &tier_nodes)
        };
        for tier in &tiers {
            self.check_settings(&tier.settings);
        }
        self.one_kind_of_tiers(&tiers);
        self.check_static(&preset, &tiers);
        Some(Pool { name, preset, tiers, span: self.span(node.name().span()) })
    }

    /// `preset="…"` (general when absent); None when it is not a string, or not a preset (E0116).
    fn parse_preset(&mut self, node: &KdlNode, name: &Spanned<String>) -> Option<Spanned<Preset>> {
        let Some(entry) = prop(node, "preset") else {
            return Some(Spanned::new(Preset::General, name.span));
        };
        let s = self.expect_string(entry, "preset")?;
        match Preset::parse(&s) {
            Some(p) => Some(Spanned::new(p, s.span)),
            None => {
                let help = crate::diagnostic::did_you_mean_among(&s, &Preset::NAMES, "presets");
                self.error(s.span, ErrorCode::E0116, format!("unknown preset `{}`", s.value), help);
                None
            }
        }
    }

    /// A `tiered` pool's NodePools: its `tier`s in the order written (the fallback order), each over the pool's
    /// settings.
    fn written_tiers(&mut self, name: &Spanned<String>, preset: &Spanned<Preset>, settings: &Settings, tier_nodes: &[&KdlNode]) -> Vec<Tier> {
        if let Some(r) = &settings.reserved {
            self.error(
                r.span,
                ErrorCode::E0133,
                "a `reserved` block at the level of a tiered pool would make every tier reserved",
                "move it into the tier that launches into the reservation: tier \"reserved\" { reserved { … } }",
            );
        }
        if tier_nodes.is_empty() {
            self.error(
                preset.span,
                ErrorCode::E0117,
                "a `tiered` pool needs at least one `tier`",
                "add tier \"a10g-spot\" capacity=\"spot\" { gpu { name \"A10G\" } } in fallback order",
            );
        }
        let mut tiers: Vec<Tier> = tier_nodes.iter().filter_map(|tier_node| self.parse_tier(tier_node, name, settings)).collect();
        way_back_from_fallback(&mut tiers, preset.span);
        tiers
    }

    /// `tier "name" [capacity="…"] { … }`: the NodePool `<pool>-<tier>`; a tier with a `reserved` block launches
    /// into the reservation.
    fn parse_tier(&mut self, tier_node: &KdlNode, name: &Spanned<String>, settings: &Settings) -> Option<Tier> {
        self.check_entries(tier_node, &["capacity"], 1);
        let Some(tier_name) = args(tier_node).next().and_then(|e| self.expect_string(e, "the tier name")) else {
            self.error(self.span(tier_node.span()), ErrorCode::E0107, "`tier` needs a name", "write tier \"t4-spot\" capacity=\"spot\" { … }");
            return None;
        };
        let mut tier_settings = settings.clone();
        if let Some(entry) = prop(tier_node, "capacity")
            && let Some(c) = self.expect_string(entry, "capacity").and_then(|c| self.capacity_type(&c)) {
                tier_settings.capacity = Spanned::new(vec![c.value], c.span);
            }
        let children = tier_node.children().map(|c| c.nodes()).unwrap_or_default();
        self.one_kind(children, "the tier");
        for child in children {
            self.apply_setting(child, &mut tier_settings, "`tier`");
        }
        if let Some(r) = tier_settings.reserved.as_ref().filter(|_| !tier_settings.capacity.contains(&CapacityType::Reserved)) {
            tier_settings.capacity = Spanned::new(vec![CapacityType::Reserved], r.span);
        }
        let full = Spanned::new(format!("{}-{}", name.value, tier_name.value), tier_name.span);
        self.check_name(&full, "tier");
        Some(Tier { name: full, settings: tier_settings })
    }

    /// A preset's NodePools: the reservation's first when the pool has one (see [`reservation_tier`]), then one per
    /// capacity the preset falls back through (inference-spot: `<pool>-spot`, then `<pool>-on-demand`).
    fn preset_tiers(&mut self, name: &Spanned<String>, preset: &Spanned<Preset>, mut settings: Settings, tier_nodes: &[&KdlNode]) -> Vec<Tier> {
        let preset_tiers: Vec<(&str, Vec<CapacityType>)> = match preset.value {
            Preset::InferenceSpot => {
                vec![("spot", vec![CapacityType::Spot]), ("on-demand", vec![CapacityType::OnDemand])]
            }
            _ => vec![("", settings.capacity.value.clone())],
        };
        for tier_node in tier_nodes {
            self.error(
                self.span(tier_node.name().span()),
                ErrorCode::E0117,
                format!("`tier` is only valid in a pool with preset=\"tiered\" (this pool is {})", preset.value.as_str()),
                "use preset=\"tiered\" to write your own fallback chain",
            );
        }
        let mut tiers: Vec<Tier> = reservation_tier(name, &mut settings).into_iter().collect();
        for (suffix, capacity) in preset_tiers {
            let mut tier_settings = settings.clone();
            if !suffix.is_empty() {
                tier_settings.capacity = Spanned::new(capacity, settings.capacity.span);
            }
            let tier_name = if suffix.is_empty() { name.value.clone() } else { format!("{}-{suffix}", name.value) };
            tiers.push(Tier { name: Spanned::new(tier_name, name.span), settings: tier_settings });
        }
        way_back_from_fallback(&mut tiers, preset.span);
        tiers
    }
}

/// How long an on-demand fallback node waits, after its last pod change, before Balanced consolidation may move its
/// pods back to spot: long enough for a spot pool that just recovered to hold, short next to the 720h expiry that
/// was the only way back under `WhenEmpty`.
pub const FALLBACK_CONSOLIDATE_AFTER: &str = "30m";

/// An on-demand tier after a spot tier is where pods go in a spot shortage. Under `WhenEmpty` they stay there until
/// their node expires (720h) at on-demand prices; `Balanced` (Karpenter v1.14.1, sigs.k8s.io/karpenter@v1.14.1
/// pkg/controllers/disruption/balanced.go) replaces such a node by a spot one (consolidation.go: "consolidating a
/// node from OD -> [OD,Spot]") when the saving, as a share of the NodePool's cost, is at least half the share of
/// its pods moved (`BalancedK = 2`, pkg/apis/v1/nodepool.go): the ~60% spot discount passes, a marginal repack does
/// not. Only where the profile left the preset's consolidation (its span is the preset's).
fn way_back_from_fallback(tiers: &mut [Tier], preset: Span) {
    for i in 0..tiers.len() {
        let fallback = on_demand_after_spot(tiers, i);
        let d = &mut tiers[i].settings.disruption;
        if fallback && d.consolidation_policy.span == preset {
            d.consolidation_policy.value = "Balanced".into();
            if d.consolidate_after.span == preset {
                d.consolidate_after.value = FALLBACK_CONSOLIDATE_AFTER.into();
            }
        }
    }
}

/// Whether tier `i` is an on-demand fallback of a spot tier: on-demand only, after a tier that allows spot.
pub fn on_demand_after_spot(tiers: &[Tier], i: usize) -> bool {
    tiers[i].settings.capacity.value.as_slice() == [CapacityType::OnDemand] && tiers[..i].iter().any(|t| t.settings.capacity.contains(&CapacityType::Spot))
}

/// A reservation backs its pool: `<pool>-reserved`, a tier of the pool (same label and taints, the highest weight
/// of the pool), limited to the reservation, in front of the preset's tiers, which then carry no reservation. Pods
/// select the pool, so Karpenter launches into the reservation first and falls back when it is full (a separate
/// pool with its own label would sit idle while its $/h is billed). Only a pool whose capacity is exactly
/// `"reserved"` is the reservation alone.
fn reservation_tier(name: &Spanned<String>, settings: &mut Settings) -> Option<Tier> {
    let reserved = settings.reserved.clone()?;
    if settings.capacity.value == [CapacityType::Reserved] {
        return None;
    }
    let mut tier = settings.clone();
    tier.capacity = Spanned::new(vec![CapacityType::Reserved], reserved.span);
    settings.reserved = None;
    // An explicit weight is the pool's place among the cluster's pools: the reservation's tier (the pool's highest)
    // takes it, and the fallback tiers rank below it (two NodePools of one weight would be E0153).
    settings.weight = None;
    Some(Tier { name: Spanned::new(format!("{}-reserved", name.value), reserved.span), settings: tier })
}

/// The defaults each preset gives; every one can be overridden in the profile. Spans point at the preset.
fn preset_defaults(preset: Preset, span: Span) -> Settings {
    let s = |v: &str| Spanned::new(v.to_string(), span);
    // Every preset ends a drain: Karpenter leaves a deleting node out of the limits, so a drain a
    // PodDisruptionBudget blocks would otherwise keep a GPU node running, beside its replacement, forever
    // (`cost::drain_peak`). An hour lets a model server finish its requests and hand over.
    let serving_grace = || Some(s(SERVING_GRACE_PERIOD));
    let (capacity, consolidate_after, expire_after, grace, window) = match preset {
        Preset::General => (vec![CapacityType::Spot, CapacityType::OnDemand], "5m", "720h", serving_grace(), None),
        Preset::InferenceSpot | Preset::Tiered => (vec![CapacityType::Spot], "5m", "720h", serving_grace(), None),
        Preset::InferenceOnDemand => (vec![CapacityType::OnDemand], "10m", "720h", serving_grace(), None),
        // Training: never expire (a restart loses hours of progress), long grace to checkpoint, and voluntary
        // disruption only inside a weekly window (Sunday 02:00 UTC, 4h, one node at a time).
        Preset::TrainingOnDemand => (
            vec![CapacityType::OnDemand],
            "1h",
            "Never",
            Some(s("2h")),
            Some(MaintenanceWindow { weekday: 0, start_minute_of_day: 120, duration_minutes: 240, nodes: "1".into() }),
        ),
        Preset::BatchSpot => (vec![CapacityType::Spot], "2m", "168h", Some(s("30m")), None),
    };
    Settings {
        accelerator: Spanned::new(AcceleratorKind::Nvidia, span),
        accelerator_names: Vec::new(),
        memory_min_mib: None,
        per_node_min: None,
        per_node_max: None,
        // GPU images are overwhelmingly amd64: arm64 (g5g) only when asked for, so a pod never lands on a node
        // its image cannot run on.
        arch: vec![Spanned::new(Arch::Amd64, span)],
        generation_min: None,
        families: Vec::new(),
        exclude_families: Vec::new(),
        types: Vec::new(),
        exclude_types: Vec::new(),
        efa: None,
        efa_zone: None,
        placement_group: None,
        spread: None,
        capacity: Spanned::new(capacity, span),
        max_accelerators: None,
        max_cpu: None,
        weight: None,
        price_ratio_max: Spanned::new(DEFAULT_PRICE_RATIO_MAX, span),
        admit: Spanned::new(super::settings::Admit::BestValue, span),
        node_class: None,
        family_min_values: None,
        type_min_values: None,
        spot_ceiling: Spanned::new(SpotCeiling::OnDemand, span),
        // Training reads datasets and writes checkpoints locally: p4d/p5 carry 8 TB–30 TB of NVMe.
        instance_store_scratch: Spanned::new(preset == Preset::TrainingOnDemand, span),
        sharing: None,
        reserved: None,
        disruption: Disruption {
            // A node busy on its GPU looks idle to WhenEmptyOrUnderutilized (it judges CPU/memory only).
            consolidation_policy: s("WhenEmpty"),
            consolidate_after: s(consolidate_after),
            expire_after: s(expire_after),
            termination_grace_period: grace,
            maintenance_window: window.map(|w| Spanned::new(w, span)),
            budgets: Vec::new(),
        },
        labels: BTreeMap::new(),
        taints: Vec::new(),
        requires: Vec::new(),
        resource_limits: None,
        static_pool: None,
        accelerator_taint: Spanned::new(true, span),
        allow: Vec::new(),
        kubelet: None,
        raws: Vec::new(),
        overlays: Vec::new(),
    }
}
