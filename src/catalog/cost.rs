//! The cost model: what an instance type costs a pool, and the bounds on what a NodePool can spend.
//!
//! One module, used by the solver (to size limits), by lint (to re-check the rendered NodePools) and by
//! explain, so that the three never disagree on what "worst case" means.
//!
//! # Expected vs worst case
//! * **Expected** $/h is what the pool is likely to pay: the observed spot price when the pool may use spot
//!   (Karpenter prefers spot when a NodePool allows it), the on-demand price otherwise — each at the pool's
//!   limit on its cheapest type. It may be an estimate (the offline catalog has no spot prices).
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

/// Whether a pool's worst case is a guaranteed bound or an empirical one (explain's JSON: "guaranteed" / "empirical").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Guaranteed,
    Empirical,
}

impl Bound {
    /// The `gpuplan.dev/worst-case-basis` annotation, explain's and diff's words.
    pub fn describe(self) -> &'static str {
        match self {
            Bound::Guaranteed => "guaranteed: on-demand prices (Karpenter sets no spot max price, so spot is bounded by on-demand)",
            Bound::Empirical => "EMPIRICAL, not guaranteed: spot at the highest price observed in the catalog's history window; a spot price can rise above it (up to on-demand)",
        }
    }
}

/// What one instance type costs a pool, per instance-hour.
#[derive(Debug, Clone, PartialEq)]
pub struct Quote {
    /// The likely price: spot when the pool allows spot, else on-demand (reserved: the reservation's rate).
    pub expected: f64,
    pub expected_is_estimate: bool,
    /// The bound: the highest ceiling among the pool's capacity types.
    pub ceiling: f64,
    pub ceiling_is_estimate: bool,
    /// Empirical when the ceiling is an observed spot maximum below the on-demand price.
    pub bound: Bound,
}

/// Prices one type for a pool's capacity types and zones. None when a price the pool needs is missing.
pub fn quote(t: &InstanceType, catalog: &Catalog, capacity: &[CapacityType], zones: &[String], spot: SpotCeiling) -> Option<Quote> {
    let on_demand = t.on_demand.as_ref()?;
    let expected = if capacity.contains(&CapacityType::Spot) { t.price(CapacityType::Spot, zones)? } else { on_demand };
    let mut ceiling: (&Price, Bound) = (on_demand, Bound::Guaranteed);
    if capacity == [CapacityType::Spot] && spot == SpotCeiling::ObservedMax {
        // Only a spot-only pool can be bounded below on-demand: a pool that may launch on-demand pays it.
        if let Some(max) = t.observed_spot_max(zones).filter(|m| m.usd_per_hour < on_demand.usd_per_hour) {
            ceiling = (max, Bound::Empirical);
        }
    }
    Some(Quote {
        expected: expected.usd_per_hour,
        expected_is_estimate: catalog.is_estimate(expected),
        ceiling: ceiling.0.usd_per_hour,
        ceiling_is_estimate: catalog.is_estimate(ceiling.0),
        bound: ceiling.1,
    })
}

/// One instance type as the pool bounds see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeShape {
    /// Physical accelerators (what EC2 reports and Karpenter counts at launch without a NodeOverlay).
    pub accelerators: u32,
    pub vcpu: u32,
    pub expected: f64,
    pub ceiling: f64,
}

/// The limits of one NodePool: accelerators in schedulable units, and the cpu backstop of shared pools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// In schedulable units (physical × `units_per_accelerator`).
    pub accelerators: u32,
    /// Schedulable units per physical accelerator: time-slicing replicas or MIG devices per GPU (1: no sharing).
    pub units_per_accelerator: u32,
    /// vCPU limit (shared pools only).
    pub cpu: Option<u32>,
}

impl Limits {
    /// Physical accelerators the limit stands for, rounded up.
    pub fn physical(&self) -> u32 {
        self.accelerators.div_ceil(self.units_per_accelerator.max(1))
    }
}

/// The cpu limit of a shared pool: enough vCPU for any fleet of `physical` accelerators on these types (the
/// most vCPU per accelerator among them), so it never binds while Karpenter counts slices, and caps the
/// physical nodes when it counts physical GPUs against a limit written in slices.
pub fn cpu_backstop(shapes: &[NodeShape], accelerator_limit: u32, units_per_accelerator: u32) -> u32 {
    let physical = u64::from(accelerator_limit.div_ceil(units_per_accelerator.max(1)));
    shapes
        .iter()
        .map(|s| (physical * u64::from(s.vcpu)).div_ceil(u64::from(s.accelerators.max(1))))
        .max()
        .unwrap_or(0)
        .min(u64::from(u32::MAX)) as u32
}

fn max_by(shapes: &[NodeShape], f: impl Fn(&NodeShape) -> f64) -> f64 {
    shapes.iter().map(f).fold(0.0, f64::max)
}

/// The worst case $/h of a NodePool at its limits: an upper bound on what it can have running at once.
///
/// Unshared: `limit × max(ceiling / accelerators)`. Shared (units per accelerator r > 1), the larger of:
/// * Karpenter counting slices (NodeOverlay honoured, or nodes registered): `⌈limit / r⌉` physical accelerators;
/// * Karpenter counting physical GPUs against the limit (NodeOverlay gate off, nodes still launching): up to
///   `limit` physical accelerators, but never more vCPU than the cpu limit: `min(limit × max(ceiling / acc),
///   cpu × max(ceiling / vcpu))`.
pub fn worst_case(shapes: &[NodeShape], limits: Limits) -> f64 {
    let per_accelerator = max_by(shapes, |s| s.ceiling / f64::from(s.accelerators.max(1)));
    let counted_as_slices = f64::from(limits.physical()) * per_accelerator;
    if limits.units_per_accelerator <= 1 {
        return f64::from(limits.accelerators) * per_accelerator;
    }
    let mut counted_as_physical = f64::from(limits.accelerators) * per_accelerator;
    if let Some(cpu) = limits.cpu {
        let per_vcpu = max_by(shapes, |s| s.ceiling / f64::from(s.vcpu.max(1)));
        counted_as_physical = counted_as_physical.min(f64::from(cpu) * per_vcpu);
    }
    counted_as_slices.max(counted_as_physical)
}

/// The expected $/h of a NodePool at its limit: every schedulable unit on the cheapest type's expected price.
pub fn expected(shapes: &[NodeShape], limits: Limits) -> f64 {
    let cheapest = shapes
        .iter()
        .map(|s| s.expected / f64::from(s.accelerators.max(1) * limits.units_per_accelerator.max(1)))
        .fold(f64::INFINITY, f64::min);
    if cheapest.is_finite() { cheapest * f64::from(limits.accelerators) } else { 0.0 }
}

/// Costs are rounded to cents for the annotations and for comparisons across runs.
pub fn round_cents(usd: f64) -> f64 {
    (usd * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(accelerators: u32, vcpu: u32, expected: f64, ceiling: f64) -> NodeShape {
        NodeShape { accelerators, vcpu, expected, ceiling }
    }

    #[test]
    fn unshared_worst_case_is_limit_times_priciest_accelerator() {
        let shapes = [shape(1, 4, 0.4, 1.0), shape(4, 48, 2.0, 5.6)];
        let limits = Limits { accelerators: 8, units_per_accelerator: 1, cpu: None };
        assert!((worst_case(&shapes, limits) - 8.0 * 1.4).abs() < 1e-9);
        assert!((expected(&shapes, limits) - 8.0 * 0.4).abs() < 1e-9);
    }

    #[test]
    fn shared_worst_case_covers_a_burst_counted_in_physical_gpus() {
        // 8 physical 1-GPU nodes, 4 slices each: limit 32 slices.
        let shapes = [shape(1, 4, 0.5, 1.0), shape(1, 8, 0.6, 1.2)];
        let cpu = cpu_backstop(&shapes, 32, 4);
        assert_eq!(cpu, 64, "8 physical GPUs on the most vCPU per GPU (8)");
        let limits = Limits { accelerators: 32, units_per_accelerator: 4, cpu: Some(cpu) };
        // Gate off: the cpu limit admits 64 vCPU: 16 × 4-vCPU nodes at $1.0 = $16 > 8 × $1.2.
        assert!((worst_case(&shapes, limits) - 16.0).abs() < 1e-9);
        // Without the cpu backstop a burst could launch 32 physical GPUs.
        let uncapped = Limits { cpu: None, ..limits };
        assert!((worst_case(&shapes, uncapped) - 32.0 * 1.2).abs() < 1e-9);
    }
}
