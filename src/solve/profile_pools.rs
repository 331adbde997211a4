//! Steps 1–4 for one profile: every tier's types selected, its NodePool and node class decided, EFA zones pinned,
//! then the profile's limits sized against its budget ([`plan_profile`]).

use crate::diagnostic::{ProfileDiagnostic, Sources, Span};
use crate::profile::{Profile, Tier};

use super::constraints::unchecked_requires;
use super::efa::pin_efa_zones;
use super::limits::size_limits;
use super::node_class::{class_time_slicing, default_class, host_device_plugin, NodeClassPlan};
use super::node_class_settings::{self, ProfileClasses};
use super::overlays;
use super::plan::ProfileSummary;
use super::pool::PoolPlan;
use super::refusals;
use super::select::{Region, Selections};
use super::tier::{pool_plan, TierAt};
use super::weights::WeightedPool;

/// What one profile adds to its cluster.
pub struct ProfilePools {
    /// Every node class its pools use, kept when sizing fails: E0158 compares all the classes of the cluster.
    pub node_classes: Vec<NodeClassPlan>,
    /// The sized pools (with their explicit weights) and the profile's cost figures; None when sizing failed.
    pub sized: Option<(Vec<WeightedPool>, ProfileSummary)>,
}

/// Plans one profile's pools. Every error is added to `diagnostics` and the planning goes on, so that one compile
/// reports as many as it can: a refused tier is left out, a profile whose limits cannot be sized has no pools.
pub fn plan_profile(profile: &Profile, region: Region, sources: &Sources, selections: &mut Selections, diagnostics: &mut Vec<ProfileDiagnostic>) -> ProfilePools {
    let catalog = region.catalog;
    let source = sources.source_name(profile.file).to_string();
    let zones: Vec<String> = profile.cluster.zones.iter().map(|z| z.value.clone()).collect();
    diagnostics.extend(refusals::unknown_zones(profile, catalog, sources));
    let auto_mode = profile.cluster.auto_mode.value.then_some(profile.cluster.auto_mode.span);
    diagnostics.extend(refusals::default_class_in_auto_mode(profile, auto_mode, sources));
    diagnostics.extend(node_class_settings::auto_mode_refusals(profile, auto_mode, sources));
    diagnostics.extend(refusals::overlays_in_auto_mode(profile, auto_mode, sources));
    diagnostics.extend(node_class_settings::ami_family_refusals(profile, sources));
    let context = ProfileContext { profile, region, sources, source: &source, zones: &zones, auto_mode, host_plugin: host_device_plugin(&profile.cluster.ami.value) };
    let mut classes = ProfileClasses::new(default_class(profile, &source));
    let mut pools = Vec::new();
    for pool in &profile.pools {
        for (index, tier) in pool.tiers.iter().enumerate() {
            let unknown = super::catalog_names::unknown_names(tier, catalog, sources);
            if !unknown.is_empty() {
                diagnostics.extend(unknown);
                continue;
            }
            match context.plan_tier(TierAt { pool, index, tier }, selections, &mut classes) {
                Ok(plan) => pools.push((plan, tier)),
                Err(d) => diagnostics.push(d),
            }
        }
    }
    diagnostics.extend(pin_efa_zones(&mut pools, catalog, &zones, sources));
    let node_classes = classes.finish();
    price_node_storage(&mut pools, &node_classes, catalog);
    if let Err(d) = size_limits(profile, &mut pools, sources) {
        diagnostics.extend(d);
        return ProfilePools { node_classes, sized: None };
    }
    let summary = summary(profile, &source, &pools);
    let pools = pools.into_iter().map(|(plan, tier)| WeightedPool { plan, explicit: tier.settings.weight.clone(), span: tier.name.span }).collect();
    ProfilePools { node_classes, sized: Some((pools, summary)) }
}

/// What every tier of one profile is planned with.
struct ProfileContext<'a> {
    profile: &'a Profile,
    region: Region<'a>,
    sources: &'a Sources,
    source: &'a str,
    zones: &'a [String],
    auto_mode: Option<Span>,
    /// The profile's AMI runs the NVIDIA device plugin on the host (Bottlerocket).
    host_plugin: bool,
}

impl ProfileContext<'_> {
    /// Steps 1–3 for one tier, then its NodePool and node class; the first refusal or selection error stops the tier.
    fn plan_tier(&self, at: TierAt, selections: &mut Selections, classes: &mut ProfileClasses) -> Result<PoolPlan, ProfileDiagnostic> {
        let (tier, sources, catalog) = (at.tier, self.sources, self.region.catalog);
        if let Some(d) = refusals::mig_on_host_plugin(tier, self.host_plugin, sources).or_else(|| refusals::sharing_in_auto_mode(tier, self.auto_mode, sources)) {
            return Err(d);
        }
        if let Some(d) = refusals::time_slicing_in_user_data(self.profile, tier, self.host_plugin, sources) {
            return Err(d);
        }
        let selected = selections.select(tier, self.region, self.zones, self.auto_mode, sources)?;
        if let Some(d) = overlays::conflict(tier, &selected.candidates, catalog, self.zones, self.auto_mode.is_some(), sources) {
            return Err(d);
        }
        // Local NVMe as scratch (RAID0) only where the pool asks and its types have any. Auto Mode
        // formats and stripes local NVMe itself (EKS User Guide, Auto Mode managed instances).
        // A pool that names its class gets the policy as asked: pools sharing one named class (as an adopted class's
        // NodePools do) must agree on it, and RAID0 leaves a type without local NVMe as it is (Karpenter docs,
        // EC2NodeClass `instanceStorePolicy`).
        let raid0 = self.auto_mode.is_none()
            && tier.settings.instance_store_scratch.value
            && (tier.settings.node_class.is_some() || selected.candidates.iter().any(|c| catalog.get(&c.name).is_some_and(|t| t.local_nvme_gb.is_some())));
        let node_class = classes.for_tier(tier, raid0, class_time_slicing(tier, self.host_plugin));
        let mut plan = pool_plan(at, self.profile, self.source, node_class, self.zones, selected);
        for key in unchecked_requires(&tier.settings, catalog) {
            plan.notes.push(format!("require {key}: the catalog has no such label, so Karpenter alone applies it (it may launch fewer of the listed types, never others; the cost bound stays an upper bound)"));
        }
        Ok(plan)
    }
}

/// Each pool's per-node EBS cost, from the volumes its node class renders, at the catalog's EBS prices (its
/// Price List refresh's, else the cited table's).
fn price_node_storage(pools: &mut [(PoolPlan, &Tier)], classes: &[NodeClassPlan], catalog: &crate::catalog::Catalog) {
    let (prices, basis) = crate::catalog::ebs::catalog_prices(catalog);
    for (plan, _) in pools.iter_mut() {
        let Some(class) = classes.iter().find(|c| c.name == plan.node_class) else { continue };
        let volumes = class.volumes();
        plan.node_storage_usd_per_hour = crate::catalog::ebs::node_usd_per_hour(&volumes, &prices);
        plan.node_storage_prices = basis.describe();
        plan.node_storage = volumes.iter().map(|v| v.describe()).collect::<Vec<_>>().join(" + ");
    }
}

/// The profile's cost figures: the sums over its sized pools.
fn summary(profile: &Profile, source: &str, pools: &[(PoolPlan, &Tier)]) -> ProfileSummary {
    let mut summary = ProfileSummary {
        name: profile.name.value.clone(),
        source: source.to_string(),
        budget_usd_per_hour: profile.budget_usd_per_hour.as_ref().map(|b| b.value),
        at_limit_usd_per_hour: 0.0,
        worst_case_usd_per_hour: 0.0,
        drain_peak_usd_per_hour: 0.0,
        drain_peak_for: longest_grace_period(pools.iter().map(|(p, _)| p)),
        unverified_prices: Vec::new(),
    };
    for (plan, _) in pools {
        summary.at_limit_usd_per_hour += plan.at_limit_usd_per_hour;
        summary.worst_case_usd_per_hour += plan.worst_case_usd_per_hour;
        summary.drain_peak_usd_per_hour += plan.drain_peak_usd_per_hour;
        summary.unverified_prices.extend(plan.unverified_prices());
    }
    summary.unverified_prices.sort();
    summary.unverified_prices.dedup();
    summary
}

/// The longest `terminationGracePeriod` among pools that can have nodes draining beside their replacements: how long
/// a profile's drain peak can last. None when such a pool has none (its drain can block forever on a PDB).
fn longest_grace_period<'a>(pools: impl Iterator<Item = &'a PoolPlan>) -> Option<String> {
    let mut longest: Option<(u32, String)> = None;
    for pool in pools.filter(|p| p.draining_nodes > 0) {
        let grace = pool.disruption.termination_grace_period.as_ref()?;
        let minutes = crate::profile::duration_minutes(grace).unwrap_or(u32::MAX);
        if longest.as_ref().is_none_or(|(m, _)| minutes > *m) {
            longest = Some((minutes, grace.clone()));
        }
    }
    Some(longest.map_or_else(|| "0s".to_string(), |(_, g)| g))
}
