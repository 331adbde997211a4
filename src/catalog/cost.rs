//! The cost model: what an instance type costs a pool, and the bounds on what a NodePool can spend.
//!
//! One module, used by the solver (to size limits), by lint (to re-check the rendered NodePools) and by
//! explain, so that the three never disagree on what "worst case" means.
//!
//! # At limit, cheapest vs worst case
//! * **At limit, cheapest** ([`at_limit`]) is every schedulable unit the pool's limit allows on its cheapest type
//!   at the price the pool is likely to pay: the spot price when the pool may use spot (Karpenter prefers spot when a
//!   NodePool allows it), the on-demand price otherwise. No cluster pays it (a pool runs at its limit only at peak);
//!   it is not what the pool is expected to cost, which `forecast` answers from a demand file. It may be an estimate
//!   (the offline catalog has no spot prices).
//! * **Worst case** is an upper bound, not an estimate. Karpenter sets no spot max price: its CreateFleet
//!   request carries only the allocation strategy in `SpotOptions` (aws/karpenter-provider-aws
//!   pkg/providers/instance/types.go, `CreateFleetInputBuilder.Build`), and EC2's default max price for spot is the on-demand price. So a spot
//!   node is bounded by the on-demand price of its type: that is the default **spot ceiling**. A pool may opt
//!   into `spot-ceiling "observed-max"`: the highest spot price in the catalog's history window. That bound is
//!   empirical (a future price can exceed it), and every place that shows it says so.
//!
//! # Shared GPUs (time-slicing, MIG)
//! Karpenter counts a NodePool's usage against its limits from each instance type's capacity as the cloud
//! provider reports it — physical GPUs from EC2 — for nodes being launched, and from the node's status once it
//! registers, when the device plugin reports slices (kubernetes-sigs/karpenter pkg/controllers/provisioning/
//! scheduling/scheduler.go, `remainingResources`; pkg/controllers/state/cluster.go). A limit written in slices
//! would let a burst launch that many *physical* GPUs. gpuplan therefore emits, per shared pool, a NodeOverlay
//! declaring the sliced capacity (alpha, feature gate `NodeOverlay`), and a `cpu` limit that caps the physical
//! nodes whether or not the gate is on. The worst case is the larger of the two phases' bounds
//! ([`worst_case`]), so it holds with the gate off too.

use crate::catalog::{CapacityType, Catalog, InstanceType, Price};

/// What bounds the price of a spot node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpotCeiling {
    /// The on-demand price of the type: guaranteed (Karpenter sets no spot max price; EC2 caps at on-demand).
    #[default]
    OnDemand,
    /// The highest spot price in the catalog's history window: empirical, not guaranteed.
    ObservedMax,
}

impl SpotCeiling {
    pub const NAMES: [&'static str; 2] = ["on-demand", "observed-max"];

    pub fn parse(name: &str) -> Option<SpotCeiling> {
        match name {
            "on-demand" => Some(SpotCeiling::OnDemand),
            "observed-max" => Some(SpotCeiling::ObservedMax),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SpotCeiling::OnDemand => "on-demand",
            SpotCeiling::ObservedMax => "observed-max",
        }
    }
}

/// Whether a pool's worst case is a guaranteed bound, an empirical one, or one computed from estimated prices
/// (explain's JSON: "guaranteed" / "empirical" / "estimated"). Ordered by how little it promises: a pool or profile
/// takes the weakest of its types'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Guaranteed,
    Empirical,
    /// The ceiling is an on-demand price the catalog marks as an estimate (us-west-2's offline snapshot carries
    /// us-east-1's prices): a bound only as good as the estimate, so never called guaranteed.
    Estimated,
}

impl Bound {
    /// The `gpuplan.dev/worst-case-basis` annotation, explain's and diff's words (for pools that may use spot).
    pub fn describe(self) -> &'static str {
        match self {
            Bound::Guaranteed => "guaranteed: on-demand prices (Karpenter sets no spot max price, so spot is bounded by on-demand)",
            Bound::Empirical => "EMPIRICAL, not guaranteed: spot at the highest price observed in the catalog's history window; a spot price can rise above it (up to on-demand)",
            Bound::Estimated => ESTIMATED_BASIS,
        }
    }
}

/// The basis of a bound computed from estimated on-demand prices, spot or not.
pub const ESTIMATED_BASIS: &str =
    "ESTIMATED, not guaranteed: on-demand prices the catalog marks as estimates (not observed for this region); run `gpuplan catalog refresh` to verify them";

/// What one instance type costs a pool, per instance-hour.
#[derive(Debug, Clone, PartialEq)]
pub struct Quote {
    /// The likely price: spot when the pool allows spot, else on-demand (reserved: the reservation's rate).
    pub likely: f64,
    pub likely_is_estimate: bool,
    /// The bound: the highest ceiling among the pool's capacity types.
    pub ceiling: f64,
    pub ceiling_is_estimate: bool,
    /// Empirical when the ceiling is an observed spot maximum below the on-demand price; Estimated when the
    /// ceiling's price is an estimate.
    pub bound: Bound,
}

/// Prices one type for a pool's capacity types and zones. None when a price the pool needs is missing.
pub fn quote(t: &InstanceType, catalog: &Catalog, capacity: &[CapacityType], zones: &[String], spot: SpotCeiling) -> Option<Quote> {
    let on_demand = t.on_demand.as_ref()?;
    let likely = if capacity.contains(&CapacityType::Spot) { t.price(CapacityType::Spot, zones)? } else { on_demand };
    let mut ceiling: (&Price, Bound) = (on_demand, Bound::Guaranteed);
    if capacity == [CapacityType::Spot] && spot == SpotCeiling::ObservedMax {
        // Only a spot-only pool can be bounded below on-demand: a pool that may launch on-demand pays it.
        if let Some(max) = t.observed_spot_max(zones).filter(|m| m.usd_per_hour < on_demand.usd_per_hour) {
            ceiling = (max, Bound::Empirical);
        }
    }
    let ceiling_is_estimate = catalog.is_estimate(ceiling.0);
    Some(Quote {
        likely: likely.usd_per_hour,
        likely_is_estimate: catalog.is_estimate(likely),
        ceiling: ceiling.0.usd_per_hour,
        ceiling_is_estimate,
        bound: if ceiling_is_estimate { Bound::Estimated } else { ceiling.1 },
    })
}

/// One instance type as the pool bounds see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeShape {
    /// Physical accelerators (what EC2 reports and Karpenter counts at launch without a NodeOverlay).
    pub accelerators: u32,
    /// Schedulable units on the node (what the device plugin reports): physical × time-slicing replicas, or × the
    /// MIG devices this type's GPU model becomes (the same MIG config gives an A100-80GB 7, an A100-40GB 4).
    pub units: u32,
    pub vcpu: u32,
    /// Memory as Karpenter counts it against a memory limit: the type's capacity after VM overhead
    /// ([`crate::catalog::memory_mib`], karpenter-provider-aws types.go `memory`).
    pub memory_mib: u64,
    /// The likely price ([`Quote::likely`]), with the node's own costs.
    pub likely: f64,
    pub ceiling: f64,
}

impl NodeShape {
    /// A catalog type as a pool of accelerator `kind` sees it, priced by `quote`, each accelerator counting
    /// `units_per_accelerator` schedulable units.
    pub fn of(t: &InstanceType, kind: crate::catalog::AcceleratorKind, units_per_accelerator: u32, quote: &Quote) -> NodeShape {
        let accelerators = t.accelerators(kind).max(1);
        let memory_mib = crate::catalog::memory_mib(t).max(1) as u64;
        NodeShape { accelerators, units: accelerators * units_per_accelerator, vcpu: t.vcpu, memory_mib, likely: quote.likely, ceiling: quote.ceiling }
    }

    /// The shape with a cost every node carries beside its instance (its EBS volumes: `catalog::ebs`) added to both
    /// prices: per schedulable unit it weighs most on the smallest nodes, so the worst case may come from them.
    pub fn with_node_cost(self, usd_per_hour: f64) -> NodeShape {
        NodeShape { likely: self.likely + usd_per_hour, ceiling: self.ceiling + usd_per_hour, ..self }
    }

    /// The node's devices are shared: it offers more schedulable units than physical accelerators.
    fn shared(&self) -> bool {
        self.units > self.accelerators.max(1)
    }
}

/// The limits of one NodePool: accelerators in schedulable units, and the cpu backstop of shared pools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// In schedulable units (each type's [`NodeShape::units`]).
    pub accelerators: u32,
    /// vCPU limit: the backstop of shared pools, or the profile's `limits cpu=` when lower.
    pub cpu: Option<u32>,
    /// MiB limit: the profile's `limits memory=`.
    pub memory_mib: Option<u64>,
}

/// The cpu limit of a shared pool: enough vCPU for any fleet that fills `accelerator_limit` units on these types
/// (the most vCPU per unit among them), so it never binds while Karpenter counts slices, and caps the physical
/// nodes when it counts physical GPUs against a limit written in slices.
pub fn cpu_backstop(shapes: &[NodeShape], accelerator_limit: u32) -> u32 {
    shapes
        .iter()
        .map(|s| (u64::from(accelerator_limit) * u64::from(s.vcpu)).div_ceil(u64::from(s.units.max(1))))
        .max()
        .unwrap_or(0)
        .min(u64::from(u32::MAX)) as u32
}

fn max_by(shapes: &[NodeShape], f: impl Fn(&NodeShape) -> f64) -> f64 {
    shapes.iter().map(f).fold(0.0, f64::max)
}

/// The worst case $/h of a NodePool at its limits in steady state: an upper bound on what its *active* nodes can
/// cost at once (nodes being deleted are outside the limit: see [`drain_peak`]).
///
/// Unshared: `limit × max(ceiling / accelerators)`. Shared (some type offers more units than GPUs), the larger of:
/// * Karpenter counting units (NodeOverlay honoured, or nodes registered): `limit × max(ceiling / units)`;
/// * Karpenter counting physical GPUs against the limit (NodeOverlay gate off, nodes still launching): up to
///   `limit` physical accelerators, but never more vCPU than the cpu limit: `min(limit × max(ceiling / acc),
///   cpu × max(ceiling / vcpu))`.
///
/// Every limit caps the active nodes in every phase (Karpenter launches no type whose capacity exceeds what is
/// left of any limit: kubernetes-sigs/karpenter v1.14.1 `scheduler.go` `filterByRemainingResources`), so the bound
/// is also at most `cpu × max(ceiling / vcpu)` and `memory × max(ceiling / memory)`: a cpu or memory limit can only
/// lower it. (The backstop of a shared pool never does: it admits the units' bound by construction.)
pub fn worst_case(shapes: &[NodeShape], limits: Limits) -> f64 {
    let counted_as_units = f64::from(limits.accelerators) * max_by(shapes, |s| s.ceiling / f64::from(s.units.max(1)));
    let per_vcpu = max_by(shapes, |s| s.ceiling / f64::from(s.vcpu.max(1)));
    let bound = if shapes.iter().any(NodeShape::shared) {
        let mut counted_as_physical = f64::from(limits.accelerators) * max_by(shapes, |s| s.ceiling / f64::from(s.accelerators.max(1)));
        if let Some(cpu) = limits.cpu {
            counted_as_physical = counted_as_physical.min(f64::from(cpu) * per_vcpu);
        }
        counted_as_units.max(counted_as_physical)
    } else {
        counted_as_units
    };
    let by_cpu = limits.cpu.map_or(f64::INFINITY, |cpu| f64::from(cpu) * per_vcpu);
    let by_memory = limits.memory_mib.map_or(f64::INFINITY, |mib| mib as f64 * max_by(shapes, |s| s.ceiling / s.memory_mib.max(1) as f64));
    bound.min(by_cpu).min(by_memory)
}

/// What a NodePool can cost while nodes drain: the steady-state bound plus the nodes being deleted.
///
/// Karpenter leaves nodes marked for deletion out of the limit check: the provisioner builds its scheduler from
/// `nodes.Active()` (kubernetes-sigs/karpenter pkg/controllers/provisioning/provisioner.go; `MarkedForDeletion` in
/// pkg/controllers/state/statenode.go), and `limits.nodes` is counted the same way, so it bounds nothing here. A
/// pool at its limit therefore launches the replacements of its draining nodes next to them, for up to the
/// NodePool's `terminationGracePeriod`. `draining` is how many nodes can be deleting at once (every node:
/// [`forceful_drains`]); each is at most the priciest node, and together never more than the steady bound (they
/// were active nodes of the pool).
pub fn drain_peak(shapes: &[NodeShape], limits: Limits, draining: u32) -> f64 {
    let steady = worst_case(shapes, limits);
    steady + (f64::from(draining) * max_by(shapes, |s| s.ceiling)).min(steady)
}

/// The most nodes a NodePool's limits let be active at once: its accelerator limit in its smallest nodes, counted
/// as Karpenter counts them — schedulable units once nodes register (or with a NodeOverlay), physical accelerators
/// for nodes still launching (so a shared pool's physical phase may hold more nodes, up to what its cpu limit
/// allows) — and never more than the cpu or memory limit allows in the smallest nodes
/// (kubernetes-sigs/karpenter v1.14.1 `scheduler.go` `filterByRemainingResources`).
pub fn max_nodes(shapes: &[NodeShape], limits: Limits) -> u32 {
    let fewest = |f: &dyn Fn(&NodeShape) -> u64| shapes.iter().map(|s| f(s).max(1)).min().unwrap_or(1);
    let accelerators = u64::from(limits.accelerators);
    let mut nodes = accelerators / fewest(&|s| u64::from(s.units));
    if shapes.iter().any(NodeShape::shared) {
        nodes = nodes.max(accelerators / fewest(&|s| u64::from(s.accelerators)));
    }
    if let Some(cpu) = limits.cpu {
        nodes = nodes.min(u64::from(cpu) / fewest(&|s| u64::from(s.vcpu)));
    }
    if let Some(mib) = limits.memory_mib {
        nodes = nodes.min(mib / fewest(&|s| s.memory_mib));
    }
    nodes.min(u64::from(u32::MAX)) as u32
}

/// One NodePool disruption budget as the profile writes it (`karpenter.sh/v1` `spec.disruption.budgets[]`): how many
/// nodes may be disrupted at once, when, and for which reasons. Defined here, with the rest of the cost model's
/// inputs, so the cost model needs nothing above the catalog; `profile` re-exports it.
#[derive(Debug, Clone, PartialEq)]
pub struct DisruptionBudget {
    pub nodes: String,
    pub schedule: Option<String>,
    pub duration: Option<String>,
    pub reasons: Vec<String>,
}

/// The forceful drains that let every node of a pool be deleting at once, beside its replacement (the drain peak
/// counts all of [`max_nodes`]), in the words of the drain-peak basis, for a pool with this `expireAfter` that may
/// or may not launch spot.
///
/// Disruption budgets hold back only Karpenter's voluntary disruption (Drifted, Underutilized, Empty:
/// pkg/controllers/disruption/helpers.go, `BuildDisruptionBudgetMapping`). The forceful ones ignore them
/// (Karpenter v1.14.1 docs, concepts/disruption, "Forceful Methods": "these methods do not respect disruption
/// budgets"), and each can take every node of a pool at once:
/// * expiration: the expiration controller deletes an expired NodeClaim without consulting budgets
///   (sigs.k8s.io/karpenter@v1.14.1 pkg/controllers/nodeclaim/expiration/controller.go), and nodes launched
///   together expire together (only with `expireAfter`; `Never` turns it off);
/// * interruption: a spot reclaim, and scheduled maintenance events and failed status checks, which
///   karpenter-provider-aws v1.14.1 finds by polling DescribeInstanceStatus whether or not the interruption queue is
///   configured (pkg/controllers/interruption/instancestatus_controller.go, registered unconditionally in
///   pkg/controllers/controllers.go); each deletes the NodeClaim (interruption/utils.go `deleteNodeClaim`);
/// * node repair (feature gate `NodeRepair`, off by default): up to 20% of a pool's nodes, rounded up
///   (pkg/controllers/node/health/controller.go `allowedUnhealthyPercent`).
///
/// A node EC2 reclaims (spot) stops billing two minutes after the notice; one drained for a maintenance event runs
/// until its pods leave or `terminationGracePeriod` ends, so the bound takes every node for the whole period.
pub fn forceful_drains(expire_after: &str, spot: bool) -> String {
    let mut causes = Vec::new();
    if expire_after != "Never" {
        causes.push(format!("expiration after {expire_after}"));
    }
    if spot {
        causes.push("spot interruption".to_string());
    }
    causes.push("scheduled maintenance events and failed status checks found by polling DescribeInstanceStatus even without the interruption queue".into());
    causes.push("node repair".into());
    causes.join(", ")
}

/// The $/h of a NodePool at its limit on its cheapest type: every schedulable unit at the cheapest type's likely
/// price. A reference figure, not a forecast (see the module doc).
pub fn at_limit(shapes: &[NodeShape], limits: Limits) -> f64 {
    let cheapest = shapes
        .iter()
        .map(|s| s.likely / f64::from(s.units.max(1)))
        .fold(f64::INFINITY, f64::min);
    // Never above the worst case: a cpu or memory limit may stop the pool before its accelerator limit.
    if cheapest.is_finite() { (cheapest * f64::from(limits.accelerators)).min(worst_case(shapes, limits)) } else { 0.0 }
}

/// Costs are rounded to cents for the annotations and for comparisons across runs.
pub fn round_cents(usd: f64) -> f64 {
    (usd * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(accelerators: u32, units: u32, vcpu: u32, likely: f64, ceiling: f64) -> NodeShape {
        NodeShape { accelerators, units, vcpu, memory_mib: u64::from(vcpu) * 4096, likely, ceiling }
    }

    #[test]
    fn unshared_worst_case_is_limit_times_priciest_accelerator() {
        let shapes = [shape(1, 1, 4, 0.4, 1.0), shape(4, 4, 48, 2.0, 5.6)];
        let limits = Limits { accelerators: 8, cpu: None, memory_mib: None };
        assert!((worst_case(&shapes, limits) - 8.0 * 1.4).abs() < 1e-9);
        assert!((at_limit(&shapes, limits) - 8.0 * 0.4).abs() < 1e-9);
    }

    #[test]
    fn shared_worst_case_covers_a_burst_counted_in_physical_gpus() {
        // 8 physical 1-GPU nodes, 4 slices each: limit 32 slices.
        let shapes = [shape(1, 4, 4, 0.5, 1.0), shape(1, 4, 8, 0.6, 1.2)];
        let cpu = cpu_backstop(&shapes, 32);
        assert_eq!(cpu, 64, "8 physical GPUs on the most vCPU per GPU (8)");
        let limits = Limits { accelerators: 32, cpu: Some(cpu), memory_mib: None };
        // Gate off: the cpu limit admits 64 vCPU: 16 × 4-vCPU nodes at $1.0 = $16 > 8 × $1.2.
        assert!((worst_case(&shapes, limits) - 16.0).abs() < 1e-9);
        // Without the cpu backstop a burst could launch 32 physical GPUs.
        let uncapped = Limits { cpu: None, ..limits };
        assert!((worst_case(&shapes, uncapped) - 32.0 * 1.2).abs() < 1e-9);
    }

    #[test]
    fn a_cpu_or_memory_limit_only_ever_lowers_the_worst_case() {
        // 4-vCPU 1-GPU nodes at $1.0 and 48-vCPU 4-GPU nodes at $5.6; 8 GPUs: 8 × $1.4 without other limits.
        let shapes = [shape(1, 1, 4, 0.4, 1.0), shape(4, 4, 48, 2.0, 5.6)];
        let gpus = Limits { accelerators: 8, cpu: None, memory_mib: None };
        // 16 vCPU: at most $0.25/vCPU × 16 = $4 (4 small nodes), whatever the GPU limit allows.
        let cpu = Limits { cpu: Some(16), ..gpus };
        assert!((worst_case(&shapes, cpu) - 16.0 * 0.25).abs() < 1e-9);
        // 32 GiB at 16 GiB per $1.0 node (the priciest per MiB) is $2.
        let memory = Limits { memory_mib: Some(32 * 1024), ..gpus };
        assert!((worst_case(&shapes, memory) - 2.0).abs() < 1e-9);
        // A generous limit changes nothing; the at-limit figure never exceeds the bound.
        let generous = Limits { cpu: Some(10_000), memory_mib: Some(1 << 30), ..gpus };
        assert!((worst_case(&shapes, generous) - worst_case(&shapes, gpus)).abs() < 1e-9);
        assert!(at_limit(&shapes, cpu) <= worst_case(&shapes, cpu));
    }

    #[test]
    fn max_nodes_counts_nodes_not_slices() {
        // 1-GPU nodes with 4 slices each, 4 or 8 vCPU: 32 slices are 8 registered nodes, but while Karpenter counts
        // physical GPUs up to 32 nodes launch, as many as the cpu backstop's 64 vCPU allow in 4-vCPU nodes: 16.
        let shapes = [shape(1, 4, 4, 0.5, 1.0), shape(1, 4, 8, 0.6, 1.2)];
        let limits = Limits { accelerators: 32, cpu: Some(64), memory_mib: None };
        assert_eq!(max_nodes(&shapes, limits), 16);
        // Unshared 8-GPU nodes: 16 GPUs are 2 nodes.
        let whole = [shape(8, 8, 96, 30.0, 40.0)];
        assert_eq!(max_nodes(&whole, Limits { accelerators: 16, cpu: None, memory_mib: None }), 2);
        // MIG: 2 nodes of 8 GPUs × 7 devices = 112 units, and a cpu backstop of 192 vCPU.
        let mig = [shape(8, 56, 96, 30.0, 40.0)];
        assert_eq!(max_nodes(&mig, Limits { accelerators: 112, cpu: Some(192), memory_mib: None }), 2);
    }
}
