//! Step 4: each pool's accelerator limit, from `max-accelerators` and the profile's budget ([`size_limits`]), then
//! its requirements and cost figures.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::diagnostic::ErrorCode;
use crate::catalog::cost::{self, round_cents, NodeShape};
use crate::catalog::AcceleratorKind;
use crate::diagnostic::{ProfileDiagnostic, Sources, Spanned};
use crate::profile::{Profile, Sharing, Tier};

use super::pool::{CapUnreached, Candidate, PoolPlan, Removal};
use super::static_pool;
use super::tier::requirements;

/// Sizes each pool's accelerator limit and fills in the cost figures.
///
/// A capacity reservation is billed whether used or not: its pool's limit is the reservation
/// (instances × accelerators) and its full cost is fixed, counted first. The rest of the budget B goes to the
/// usage-based pools p₁…pₙ (caps cᵢ from `max-accelerators`, ∞ when absent): the solver picks the largest
/// common limit L with Σ worstᵢ(min(cᵢ, L)) ≤ B − fixed, where worstᵢ is the pool's bound from
/// [`cost::worst_case`] (spot at its ceiling, shared GPUs counted as Karpenter counts them at launch). Every
/// tier can carry the same number of accelerators, so a fallback tier can take over all the work of the tier
/// above it, and the sum of all worst cases never exceeds the budget. Types with more accelerators than their
/// pool's limit are then dropped and L recomputed (dropping types never raises a pool's bound).
pub fn size_limits(profile: &Profile, pools: &mut [(PoolPlan, &Tier)], sources: &Sources) -> Result<(), Vec<ProfileDiagnostic>> {
    let budget = profile.budget_usd_per_hour.as_ref();
    let diagnostics = unbounded(budget, pools, sources);
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let fixed = Fixed { reserved: size_reservations(pools), statics: static_pool::size(pools) };
    let sizing = Sizing {
        budget: budget.map_or(0.0, |b| b.value),
        usage_budget: usage_budget(profile, pools, &fixed, sources)?,
        fixed,
        usage_pools: pools.iter().filter(|(p, _)| p.fixed_usd_per_hour.is_none()).count(),
    };
    let scale = unit_scale(pools);
    let mut no_node: Vec<Option<NoNode>> = (0..pools.len()).map(|_| None).collect();
    for _round in 0..2 {
        size_usage_pools(pools, &sizing, &scale, &mut no_node);
    }
    let diagnostics = finish_pools(profile, pools, &no_node, sources);
    if diagnostics.is_empty() { Ok(()) } else { Err(diagnostics) }
}

/// E0141: a pool with no limit of its own in a profile without a budget.
fn unbounded(budget: Option<&Spanned<f64>>, pools: &[(PoolPlan, &Tier)], sources: &Sources) -> Vec<ProfileDiagnostic> {
    let mut diagnostics = Vec::new();
    for (plan, tier) in pools.iter() {
        if budget.is_none() && tier.settings.max_units().is_none() && tier.settings.reserved.is_none() && tier.settings.static_pool.is_none() {
            let (keyword, example) = limit_keyword(plan.accelerator);
            diagnostics.push(
                sources
                    .error(tier.name.span, ErrorCode::E0141, format!("pool `{}` is unbounded: it has no {keyword} and the profile has no budget", plan.name))
                    .help(format!("add `{keyword} {example}` to the pool or `budget usd-per-hour=100` to the profile; gpuplan never emits a NodePool without limits")),
            );
        }
    }
    diagnostics
}

/// What a profile's pools cost whether used or not ($/h): capacity reservations and static pools.
struct Fixed {
    reserved: f64,
    statics: f64,
}

impl Fixed {
    fn total(&self) -> f64 {
        self.reserved + self.statics
    }
}

/// The budget left to the usage-based pools once the fixed costs are paid (None: no budget). E0306 when the static
/// pools cost more than the budget, E0143 when the reservations do.
fn usage_budget(profile: &Profile, pools: &[(PoolPlan, &Tier)], fixed: &Fixed, sources: &Sources) -> Result<Option<f64>, Vec<ProfileDiagnostic>> {
    let budget = profile.budget_usd_per_hour.as_ref();
    let (reserved, statics, fixed) = (fixed.reserved, fixed.statics, fixed.total());
    Ok(match budget {
        Some(b) if statics > 0.0 && fixed > b.value + 1e-9 => {
            let span = pools.iter().find_map(|(p, t)| p.static_pool.and(t.settings.static_pool.as_ref()).map(|s| s.span)).unwrap_or(b.span);
            let with = if reserved > 0.0 { format!(" (with ${reserved:.2}/h of reservations)") } else { String::new() };
            return Err(vec![sources
                .error(span, ErrorCode::E0306, format!("the static pools of profile `{}` cost up to ${statics:.2}/h{with}, more than its budget of ${:.2}/h", profile.name.value, b.value))
                .label("billed whether pods run or not")
                .help(format!("a static pool's nodes are billed always, each at most the dearest type it admits: keep fewer replicas, admit cheaper types (`types`, `exclude-types`), or raise the budget to at least ${fixed:.2}/h"))]);
        }
        Some(b) if fixed > b.value + 1e-9 => {
            return Err(vec![sources
                .error(b.span, ErrorCode::E0143, format!("the capacity reservations of profile `{}` cost ${fixed:.2}/h, more than its budget of ${:.2}/h", profile.name.value, b.value))
                .help("a reservation is billed whether used or not: raise the budget to at least the reservations' cost, or reserve fewer instances")]);
        }
        Some(b) => Some(b.value - fixed),
        None => None,
    })
}

/// What sizes a profile's usage-based pools: the budget as written and what the fixed costs leave of it, the fixed
/// costs (named in each limit's reason) and how many pools share the rest.
struct Sizing {
    budget: f64,
    usage_budget: Option<f64>,
    fixed: Fixed,
    usage_pools: usize,
}

/// The pool's own cap in schedulable units (`max-accelerators` × its units per accelerator), if any.
fn cap(tier: &Tier, plan: &PoolPlan) -> Option<u32> {
    tier.settings.max_units().map(|m| m.value * plan.replicas())
}

/// What one round of sizing decides for a usage-based pool with candidates.
struct Sized {
    limit: u32,
    reason: String,
    no_node: Option<NoNode>,
    cap_unreached: Option<CapUnreached>,
}

/// One round of sizing: the common limit the budget allows, then each usage-based pool's limit (its cap when lower),
/// rounded to whole nodes, with the types too big for it dropped (the next round's search sees them gone). A pool
/// whose limit leaves none of its types keeps the limit and [`NoNode`] of the round that emptied it (a later round
/// would size it with no types, so its limit would say nothing about why).
fn size_usage_pools(pools: &mut [(PoolPlan, &Tier)], sizing: &Sizing, scale: &impl Fn(&PoolPlan) -> u32, no_node: &mut [Option<NoNode>]) {
    let sized: Vec<Option<Sized>> = {
        let usage = UsagePools::new(pools.iter().filter(|(p, _)| p.fixed_usd_per_hour.is_none()).map(|(p, t)| (p, cap(t, p), scale(p))));
        let common = sizing.usage_budget.map(|b| usage.common_limit(b));
        pools
            .iter()
            .map(|(plan, tier)| {
                if plan.fixed_usd_per_hour.is_some() || plan.candidates.is_empty() {
                    return None;
                }
                let (limit, reason) = usage_limit(plan, cap(tier, plan), common, scale(plan), sizing);
                let (limit, reason) = round_to_whole_nodes(plan, limit, reason);
                let fails = NoNode::of(plan, tier, limit, common.is_some_and(|l| l * scale(plan) == limit), &usage, sizing, scale(plan));
                Some(Sized { limit, reason, no_node: fails, cap_unreached: cap_unreached(plan, tier, common, &usage, sizing, scale(plan)) })
            })
            .collect()
    };
    for (((plan, _), sized), no_node) in pools.iter_mut().zip(sized).zip(no_node.iter_mut()) {
        let Some(sized) = sized else { continue };
        plan.limit = sized.limit;
        plan.limit_reason = sized.reason;
        plan.cap_unreached = sized.cap_unreached;
        *no_node = sized.no_node;
        drop_nodes_above_limit(plan);
    }
}

/// Why a pool's limit leaves it no node (E0142): which limit binds, the pool's cheapest smallest node and what it
/// costs, and the smallest budget that launches it, figured as the solver sizes shares.
struct NoNode {
    /// The budget's even share binds (else the pool's `max-accelerators`/`max-cpu`).
    budget_binds: bool,
    /// The budget is split across several usage-based pools.
    shared: bool,
    /// The smallest candidate (fewest units; the cheapest of those), its units and its worst-case $/h.
    node: String,
    units: u32,
    node_usd_per_hour: f64,
    /// The smallest budget (whole cents) whose share fits that node; None when the cap is below it anyway.
    budget_needed: Option<f64>,
}

impl NoNode {
    /// None when some candidate fits `limit`.
    fn of(plan: &PoolPlan, tier: &Tier, limit: u32, budget_binds: bool, usage: &UsagePools, sizing: &Sizing, unit: u32) -> Option<NoNode> {
        if plan.candidates.iter().any(|c| c.units <= limit) {
            return None;
        }
        let smallest = plan.candidates.iter().min_by(|a, b| a.units.cmp(&b.units).then(a.ceiling_usd_per_hour.total_cmp(&b.ceiling_usd_per_hour)))?;
        let shape = [smallest.shape().with_node_cost(plan.node_storage_usd_per_hour)];
        let capped_below = cap(tier, plan).is_some_and(|c| c < smallest.units);
        // The common limit that lets this pool launch its smallest node, and what every usage pool's worst case at
        // that limit comes to, with the fixed costs: the binary search in `common_limit` then reaches it.
        let budget_needed = (sizing.usage_budget.is_some() && !capped_below).then(|| budget_reaching(smallest.units, unit, usage, sizing));
        Some(NoNode {
            budget_binds: budget_binds && !capped_below,
            shared: sizing.usage_pools > 1,
            node: smallest.name.clone(),
            units: smallest.units,
            node_usd_per_hour: plan.worst_case_on(&shape, smallest.units),
            budget_needed,
        })
    }
}

/// The pool's cap when the common limit keeps it below it (GP039), with the budget at which the pool reaches it.
fn cap_unreached(plan: &PoolPlan, tier: &Tier, common: Option<u32>, usage: &UsagePools, sizing: &Sizing, unit: u32) -> Option<CapUnreached> {
    let (units, common, written) = (cap(tier, plan)?, common?, tier.settings.max_units()?);
    (units > common * unit).then(|| CapUnreached { cap: written.clone(), budget_needed: budget_reaching(units, unit, usage, sizing) })
}

/// The smallest budget (whole cents, rounded up so it is enough) with which a pool of `unit` units per step of the
/// common limit gets `units`: every usage pool's worst case at that common limit, with the fixed costs; the binary
/// search in `common_limit` then reaches it.
fn budget_reaching(units: u32, unit: u32, usage: &UsagePools, sizing: &Sizing) -> f64 {
    let needed = usage.worst_case(units.div_ceil(unit)) + sizing.fixed.total();
    (needed * 100.0 - 1e-6).ceil() / 100.0
}

/// A usage-based pool's limit and why: its cap, or the common limit (in the pool's units) when that is lower.
fn usage_limit(plan: &PoolPlan, capped: Option<u32>, common: Option<u32>, unit: u32, sizing: &Sizing) -> (u32, String) {
    let keyword = limit_keyword(plan.accelerator).0;
    let (usage_pools, reserved, statics, fixed) = (sizing.usage_pools, sizing.fixed.reserved, sizing.fixed.statics, sizing.fixed.total());
    match (capped, common) {
        (Some(c), Some(l)) if c <= l * unit => (c, format!("{keyword} {}{}", c / plan.replicas(), replicas_note(plan))),
        (_, Some(l)) => (
            l * unit,
            format!(
                "budget ${:.2}/h{} split evenly across the profile's {usage_pools} usage-based pool(s): Σ worst case ≤ budget{}",
                sizing.budget,
                match (reserved > 0.0, statics > 0.0) {
                    (false, false) => String::new(),
                    (true, false) => format!(" minus ${fixed:.2}/h of reservations"),
                    (false, true) => format!(" minus ${fixed:.2}/h of static pools"),
                    (true, true) => format!(" minus ${fixed:.2}/h of reservations and static pools"),
                },
                if unit > 1 { format!(" ({unit} vCPUs for each accelerator of the GPU/Neuron pools beside it)") } else { String::new() },
            ),
        ),
        (Some(c), None) => (c, format!("{keyword} {}{}", c / plan.replicas(), replicas_note(plan))),
        (None, None) => unreachable!("checked above"),
    }
}

/// The pools' requirements and cost figures once their limits are final; E0142 for a pool the limit left no type.
fn finish_pools(profile: &Profile, pools: &mut [(PoolPlan, &Tier)], no_node: &[Option<NoNode>], sources: &Sources) -> Vec<ProfileDiagnostic> {
    let budget = profile.budget_usd_per_hour.as_ref();
    let mut diagnostics = Vec::new();
    for ((plan, tier), no_node) in pools.iter_mut().zip(no_node) {
        if plan.candidates.is_empty() {
            diagnostics.push(too_small(profile, plan, tier, no_node.as_ref(), sources));
            continue;
        }
        plan.requirements = requirements(&tier.settings, &plan.zones, &plan.candidates, plan.auto_mode);
        let unverified = plan.unverified_prices().len();
        if unverified > 0 && plan.fixed_usd_per_hour.is_none() && budget.is_some() {
            plan.limit_reason.push_str(&format!(
                " (unverified: the on-demand prices of {unverified} of its {} types are catalog estimates)",
                plan.candidates.len()
            ));
        }
        if let Some(s) = plan.static_pool {
            static_pool::finish(plan, s);
            plan.budget_usd_per_hour = profile.budget_usd_per_hour.as_ref().map(|b| b.value);
            continue;
        }
        let shapes = plan.shapes();
        let limits = plan.carried_limits(&shapes, plan.limit);
        plan.cpu_limit = limits.cpu;
        plan.at_limit_usd_per_hour = round_cents(plan.fixed_usd_per_hour.unwrap_or_else(|| cost::at_limit(&shapes, limits)));
        plan.worst_case_usd_per_hour = round_cents(plan.fixed_usd_per_hour.unwrap_or_else(|| cost::worst_case(&shapes, limits)));
        plan.draining_nodes = draining_nodes(plan, &shapes, limits);
        plan.drain_peak_usd_per_hour =
            round_cents(plan.fixed_usd_per_hour.unwrap_or_else(|| cost::drain_peak(&shapes, limits, plan.draining_nodes)));
        plan.budget_usd_per_hour = profile.budget_usd_per_hour.as_ref().map(|b| b.value);
    }
    diagnostics
}

/// The usage-based pools of a profile as the budget's binary search sees them: pools that share their candidates
/// (one `Selections` entry) and their cap cost the same at every limit, so each such group is priced once with its
/// count, and its shapes are built once.
struct UsagePools<'p> {
    groups: Vec<UsageGroup<'p>>,
}

/// Pools that share their candidates, cap and scale: priced once, `count` times.
struct UsageGroup<'p> {
    pool: &'p PoolPlan,
    cap: Option<u32>,
    shapes: Vec<NodeShape>,
    /// How many pools share them.
    count: u32,
    /// The pool's units per step of the common limit.
    scale: u32,
}

impl<'p> UsagePools<'p> {
    fn new(pools: impl Iterator<Item = (&'p PoolPlan, Option<u32>, u32)>) -> UsagePools<'p> {
        let mut index: HashMap<(*const Vec<Candidate>, Option<u32>, u32), usize> = HashMap::new();
        let mut groups: Vec<UsageGroup> = Vec::new();
        for (plan, cap, scale) in pools {
            let at = *index.entry((Arc::as_ptr(&plan.candidates), cap, scale)).or_insert_with(|| {
                groups.push(UsageGroup { pool: plan, cap, shapes: plan.shapes(), count: 0, scale });
                groups.len() - 1
            });
            groups[at].count += 1;
        }
        UsagePools { groups }
    }

    /// The largest common limit L whose Σ worst(min(cᵢ, L)) ≤ `budget`; each bound is non-decreasing in L: a binary
    /// search.
    fn common_limit(&self, budget: f64) -> u32 {
        let (mut lo, mut hi) = (0u32, 1_000_000u32);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.worst_case(mid) <= budget + 1e-9 { lo = mid } else { hi = mid - 1 }
        }
        lo
    }

    /// Σ over the pools of the worst case at min(cap, `limit` × the pool's scale).
    fn worst_case(&self, limit: u32) -> f64 {
        self.groups
            .iter()
            .map(|g| {
                let own = limit.saturating_mul(g.scale);
                f64::from(g.count) * g.pool.worst_case_on(&g.shapes, g.cap.map_or(own, |c| c.min(own)))
            })
            .sum()
    }
}

/// vCPUs a CPU pool gets per accelerator the GPU/Neuron pools beside it get, when one budget sizes both. The
/// common limit of [`size_limits`] is a count of units; a vCPU and a GPU are not the same unit, so a CPU pool beside
/// accelerated pools counts its limit in steps of this many vCPUs: about what EC2's accelerated types carry per
/// accelerator (g5.2xlarge, g6e.2xlarge: 8 vCPUs per GPU; p4d.24xlarge: 12; p5.48xlarge: 24; g6.xlarge: 4), so the
/// CPU side of a cluster grows with its accelerated side. A profile of CPU pools only counts single vCPUs.
pub const VCPUS_PER_ACCELERATOR: u32 = 8;

/// Each usage pool's units per step of the common limit (see [`VCPUS_PER_ACCELERATOR`]).
fn unit_scale(pools: &[(PoolPlan, &Tier)]) -> impl Fn(&PoolPlan) -> u32 + 'static {
    let usage = || pools.iter().filter(|(p, _)| p.fixed_usd_per_hour.is_none());
    let mixed = usage().any(|(p, _)| p.accelerator == AcceleratorKind::Cpu) && usage().any(|(p, _)| p.accelerator != AcceleratorKind::Cpu);
    move |p: &PoolPlan| if mixed && p.accelerator == AcceleratorKind::Cpu { VCPUS_PER_ACCELERATOR } else { 1 }
}

/// The profile keyword that limits a pool of this kind, and an example value.
fn limit_keyword(kind: AcceleratorKind) -> (&'static str, u32) {
    if kind == AcceleratorKind::Cpu { ("max-cpu", 64) } else { ("max-accelerators", 16) }
}

/// Nodes of the pool that can be deleting at once, beside their replacements: every node its limits allow
/// (`cost::max_nodes`; forceful drains ignore disruption budgets: `cost::forceful_drains`). A reserved pool has
/// none beside its reservation: a replacement cannot launch into a reservation its draining node still holds, and
/// the reservation is billed in full anyway.
fn draining_nodes(plan: &PoolPlan, shapes: &[NodeShape], limits: cost::Limits) -> u32 {
    if plan.fixed_usd_per_hour.is_some() {
        return 0;
    }
    cost::max_nodes(shapes, limits)
}

/// Reserved pools: the limit is the reservation, the cost its full price. Returns the total fixed $/h.
fn size_reservations(pools: &mut [(PoolPlan, &Tier)]) -> f64 {
    let mut total = 0.0;
    for (plan, tier) in pools.iter_mut() {
        let Some(r) = &tier.settings.reserved else { continue };
        let (Some(instances), Some(candidate)) = (&r.instances, plan.candidates.first()) else { continue };
        let held = format!("{} × {} ({} {} each)", instances.value, candidate.name, candidate.units, plan.resource());
        plan.limit = instances.value * candidate.units;
        let fixed = match r.capacity_block.as_ref().map(|b| &b.value) {
            // A Capacity Block is paid up front for the block: its price over its hours, not the on-demand table.
            Some(block) => match block.usd_per_hour() {
                Some(per_hour) => {
                    plan.limit_reason = format!("Capacity Block: {held}, ${:.2} paid up front for {:.0} h ({} to {}): ${per_hour:.2}/h while it runs, none outside it", block.price_usd.unwrap_or_default(), block.hours.unwrap_or_default(), block.start.as_deref().unwrap_or("?"), block.end.as_deref().unwrap_or("?"));
                    per_hour
                }
                None => {
                    plan.limit_reason = format!("Capacity Block: {held}; its up-front price is NOT in the worst case (give `capacity-block price-usd=… start=… end=…`)");
                    0.0
                }
            },
            None => {
                // The reservation bills the instances; each running node adds its volumes.
                let fixed = f64::from(instances.value) * (candidate.ceiling_usd_per_hour + plan.node_storage_usd_per_hour);
                plan.limit_reason = format!("capacity reservation: {held}, billed ${fixed:.2}/h whether used or not (its nodes' volumes included)");
                fixed
            }
        };
        plan.fixed_usd_per_hour = Some(fixed);
        total += fixed;
    }
    total
}

/// When every allowed node has the same number of accelerators, only multiples of it can ever be in use:
/// round down so the worst case is exact rather than an overestimate.
fn round_to_whole_nodes(plan: &PoolPlan, limit: u32, reason: String) -> (u32, String) {
    let sizes: BTreeSet<u32> = plan.candidates.iter().map(|c| c.units).collect();
    match sizes.iter().next() {
        Some(&size) if sizes.len() == 1 && size > 1 && limit >= size && !limit.is_multiple_of(size) => {
            (limit - limit % size, format!("{reason}; rounded down to whole {size}-accelerator nodes"))
        }
        _ => (limit, reason),
    }
}

/// A node with more accelerators than the limit could never launch: drop it.
fn drop_nodes_above_limit(plan: &mut PoolPlan) {
    let limit = plan.limit;
    let resource = plan.resource();
    let too_big: Vec<(String, String)> = plan
        .candidates
        .iter()
        .filter(|c| c.units > limit)
        .map(|c| (c.name.clone(), format!("{} {resource} per node, ${:.2}/h for one node", c.units, c.ceiling_usd_per_hour)))
        .collect();
    if !too_big.is_empty() {
        Arc::make_mut(&mut plan.candidates).retain(|c| c.units <= limit);
        Arc::make_mut(&mut plan.removed).push(Removal::new(format!("node accelerators ≤ limit {limit}"), None, too_big));
    }
}

/// E0142: the limit leaves no node that fits. It names the limit that binds (the budget's share or the pool's
/// cap), the pool's smallest node and its price, and what would fit it.
fn too_small(profile: &Profile, plan: &PoolPlan, tier: &Tier, no_node: Option<&NoNode>, sources: &Sources) -> ProfileDiagnostic {
    let resource = plan.resource();
    let keyword = limit_keyword(plan.accelerator).0;
    let budget = profile.budget_usd_per_hour.as_ref();
    let cap = tier.settings.max_units();
    let Some(n) = no_node else {
        // Not sized by this module's rounds (no type was left to size): name the pool's limits as written.
        let span = cap.map(|m| m.span).or(budget.map(|b| b.span)).unwrap_or(tier.name.span);
        return sources
            .error(span, ErrorCode::E0142, format!("no node of pool `{}` fits its limit", plan.name))
            .help(format!("raise `{keyword}` or the budget, or allow smaller nodes; `gpuplan explain` lists the pool's removals"));
    };
    let node = format!("{} ({} {resource}, up to ${:.2}/h)", n.node, n.units, n.node_usd_per_hour);
    match (budget, cap) {
        (Some(b), _) if n.budget_binds => {
            let share = if n.shared { "its share of " } else { "" };
            let needed = n.budget_needed.map_or(String::new(), |x| format!("raise the budget to at least ${x:.2}/h (the smallest whose worst case fits one such node beside the profile's other pools), "));
            sources
                .error(b.span, ErrorCode::E0142, format!("{share}the budget ${:.2}/h cannot pay for one node of pool `{}`: its cheapest node is {node}", b.value, plan.name))
                .label(format!("budget ${:.2}/h", b.value))
                .help(format!("{needed}or allow smaller, cheaper nodes (a lower `per-node min`, other GPU models)"))
        }
        (_, Some(m)) => sources
            .error(m.span, ErrorCode::E0142, format!("`{keyword} {}` is smaller than one node of pool `{}`: its smallest node is {node}", m.value, plan.name))
            .label(format!("allows {} {resource}", m.value))
            .help(format!("raise `{keyword}` to at least {} (one node), or allow smaller nodes (a lower `per-node min`)", n.units.div_ceil(plan.replicas()))),
        _ => sources
            .error(tier.name.span, ErrorCode::E0142, format!("no node of pool `{}` fits its limit: its smallest node is {node}", plan.name))
            .help("allow smaller nodes (a lower `per-node min`)"),
    }
}

fn replicas_note(plan: &PoolPlan) -> String {
    match (&plan.sharing, plan.replicas()) {
        (_, 1) => String::new(),
        (Some(Sharing::Mig { config }), r) => format!(" × {r} MIG devices per GPU ({config}; the fewest among the pool's GPU models)"),
        (_, r) => format!(" × time-slicing replicas {r}"),
    }
}
