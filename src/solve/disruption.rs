//! A NodePool's disruption settings: consolidation and expiry as the tier says them, and the budgets, with a
//! maintenance window turned into scheduled ones ([`disruption_plan`]).

use crate::catalog::CapacityType;
use crate::profile::{DisruptionBudget, MaintenanceWindow, Settings};

use super::pool::DisruptionPlan;

/// The NodePool's `spec.disruption` from the tier's settings.
pub fn disruption_plan(s: &Settings) -> DisruptionPlan {
    DisruptionPlan {
        consolidation_policy: s.disruption.consolidation_policy.value.clone(),
        consolidate_after: consolidate_after(s),
        expire_after: s.disruption.expire_after.value.clone(),
        termination_grace_period: s.disruption.termination_grace_period.as_ref().map(|g| g.value.clone()),
        budgets: budgets(s),
    }
}

/// How long an empty node waits before consolidation removes it: `Never` for a reservation. Its nodes are billed
/// whether they run or not (an ODCR or a Capacity Block costs its hourly rate either way), so removing an empty one
/// saves nothing and costs the next pod a cold start; Karpenter v1.14.1 has no capacity-type exception of its own
/// (pkg/controllers/disruption/emptiness.go and consolidation.go treat a reserved node as any other) and marks a
/// NodeClaim consolidatable only when `consolidateAfter` has a duration
/// (pkg/controllers/nodeclaim/disruption/consolidation.go: `ConsolidateAfter.Duration == nil` → not consolidatable).
/// Drift and expiry still replace reserved nodes, under the budgets.
/// A pool `adopt` wrote (`admit "as-required"`) keeps its original's value: adopting changes no behaviour.
fn consolidate_after(s: &Settings) -> String {
    if s.capacity.value == [CapacityType::Reserved] && s.admit.value != crate::profile::Admit::AsRequired {
        return RESERVED_CONSOLIDATE_AFTER.to_string();
    }
    s.disruption.consolidate_after.value.clone()
}

/// `consolidateAfter` of a reservation's NodePool (see [`consolidate_after`]).
pub const RESERVED_CONSOLIDATE_AFTER: &str = "Never";

/// Disruption budgets. Explicit budgets win, as written.
///
/// A maintenance window becomes a scheduled `nodes: "0"` budget for the rest of the week *scoped to the
/// reasons that hurt running work* (`Drifted`, `Underutilized`), plus an always-on budget with the window's
/// node count. Karpenter applies, per reason, the most restrictive active budget among those that name the
/// reason or name none (kubernetes-sigs/karpenter pkg/apis/v1/nodepool.go, `GetAllowedDisruptionsByReason`), so:
/// empty nodes may go at any time (an idle p5 does not wait for Sunday), drift and consolidation only inside
/// the window, and an inactive schedule never leaves disruption unbounded. Budgets that cannot change the
/// outcome (see [`without_redundant_budgets`]) are left out.
fn budgets(s: &Settings) -> Vec<DisruptionBudget> {
    let d = &s.disruption;
    if !d.budgets.is_empty() {
        return d.budgets.iter().map(|b| b.value.clone()).collect();
    }
    let always = |nodes: &str, reasons: &[&str]| DisruptionBudget {
        nodes: nodes.into(),
        schedule: None,
        duration: None,
        reasons: reasons.iter().map(|r| r.to_string()).collect(),
    };
    let mut budgets = match &d.maintenance_window {
        Some(w) => {
            let (schedule, duration) = outside_window(&w.value);
            vec![
                DisruptionBudget {
                    nodes: "0".into(),
                    schedule: Some(schedule),
                    duration: Some(duration),
                    reasons: PROTECTED_REASONS.iter().map(|r| r.to_string()).collect(),
                },
                always(&w.nodes, &[]),
            ]
        }
        None => vec![always("10%", &[])],
    };
    // Nodes that never expire are replaced only when they drift (an AMI release): one at a time.
    if d.expire_after.value == "Never" {
        budgets.push(always("1", &["Drifted"]));
    }
    without_redundant_budgets(budgets)
}

/// The disruption reasons a maintenance window holds back: replacing a node for drift or to repack it restarts
/// the GPU work on it. `Empty` is not among them: an empty node runs nothing.
pub const PROTECTED_REASONS: [&str; 2] = ["Drifted", "Underutilized"];

/// Drops each budget that another makes redundant: an always-on budget that applies to at least the same
/// reasons and allows no more nodes (in the same unit: counts with counts, percentages with percentages) is
/// always at least as restrictive, so the dropped budget could never be the one Karpenter applies.
pub fn without_redundant_budgets(budgets: Vec<DisruptionBudget>) -> Vec<DisruptionBudget> {
    let covers = |a: &DisruptionBudget, b: &DisruptionBudget| {
        a.schedule.is_none() && (a.reasons.is_empty() || (!b.reasons.is_empty() && b.reasons.iter().all(|r| a.reasons.contains(r))))
    };
    let at_most = |a: &str, b: &str| match (a.strip_suffix('%'), b.strip_suffix('%')) {
        (Some(a), Some(b)) => a.parse::<u32>().ok().zip(b.parse::<u32>().ok()).is_some_and(|(a, b)| a <= b),
        (None, None) => a.parse::<u32>().ok().zip(b.parse::<u32>().ok()).is_some_and(|(a, b)| a <= b),
        _ => false,
    };
    let redundant = |i: usize, b: &DisruptionBudget| {
        budgets.iter().enumerate().any(|(j, a)| {
            j != i && covers(a, b) && at_most(&a.nodes, &b.nodes) && !(covers(b, a) && at_most(&b.nodes, &a.nodes) && j > i)
        })
    };
    let keep: Vec<bool> = budgets.iter().enumerate().map(|(i, b)| !redundant(i, b)).collect();
    budgets.into_iter().zip(keep).filter_map(|(b, k)| k.then_some(b)).collect()
}

/// The cron schedule (UTC) and duration of the complement of a weekly window: it starts when the window ends.
pub fn outside_window(w: &MaintenanceWindow) -> (String, String) {
    const WEEK: u32 = 7 * 24 * 60;
    let end = (w.weekday * 24 * 60 + w.start_minute_of_day + w.duration_minutes) % WEEK;
    let (day, minute_of_day) = (end / (24 * 60), end % (24 * 60));
    let schedule = format!("{} {} * * {}", minute_of_day % 60, minute_of_day / 60, day);
    let rest = WEEK - w.duration_minutes;
    let duration = if rest.is_multiple_of(60) { format!("{}h", rest / 60) } else { format!("{}h{}m", rest / 60, rest % 60) };
    (schedule, duration)
}

/// How pods on a fallback tier of a spot tier return to `first` (the pool's first tier) once it has capacity again,
/// as its consolidation policy decides (explain's "way back"). Consolidation simulates every NodePool, so a
/// replacement comes from the highest-weight tier that fits, and only a cheaper one is launched
/// (sigs.k8s.io/karpenter@v1.14.1 pkg/controllers/disruption/consolidation.go: "consolidating a node from OD ->
/// [OD,Spot]"); spot to spot needs the SpotToSpotConsolidation feature gate (off by default,
/// pkg/operator/options/options.go).
pub fn way_back(d: &DisruptionPlan, first: &str, from_on_demand: bool) -> String {
    let after = &d.consolidate_after;
    let gate = if from_on_demand { "" } else { " (spot to spot: only with Karpenter's SpotToSpotConsolidation feature gate)" };
    match d.consolidation_policy.as_str() {
        "Balanced" => format!(
            "Balanced consolidation: {after} after a node's last pod change, Karpenter replaces it by a cheaper node of {first}, its pods with it, when the saving, as a share of this NodePool's cost, is at least half the share of its pods disrupted (BalancedK = 2){gate}"
        ),
        "WhenEmptyOrUnderutilized" => format!("WhenEmptyOrUnderutilized consolidation: {after} after a node's last pod change, any cheaper placement moves its pods (back to {first} when it fits){gate}"),
        _ => format!("none while pods run: WhenEmpty removes only empty nodes, so pods stay here until their node expires ({}) or they scale away; `consolidation \"Balanced\"` brings them back to {first}{gate}", d.expire_after),
    }
}
