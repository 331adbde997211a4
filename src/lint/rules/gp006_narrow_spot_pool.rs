//! GP006: a spot NodePool with fewer than 15 instance types: more interruptions and insufficient-capacity failures,
//! and spot-to-spot consolidation needs 15.

use crate::catalog::CapacityType;
use crate::diagnostic::Span;
use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::solve::SPOT_MIN_TYPES;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp006,
    name: "narrow-spot-pool",
    summary: "spot NodePool with fewer than 15 instance types (more interruptions and insufficient-capacity failures; spot-to-spot consolidation needs 15)",
    checks_output: true,
    check: Scope::Pool(check),
};

/// GP006: spot pool narrower than Karpenter's spot-to-spot minimum.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    if !ctx.np.capacity_types().contains(&CapacityType::Spot) {
        return;
    }
    let types = ctx.types();
    if types.len() >= SPOT_MIN_TYPES {
        return;
    }
    // The constraint that removed the most types limited the pool the most.
    let mut removals: Vec<_> = ctx.plan.removed.iter().filter(|r| !r.constraint.starts_with("whole accelerators")).collect();
    removals.sort_by(|a, b| b.types.len().cmp(&a.types.len()).then(a.constraint.cmp(&b.constraint)));
    let (span, why) = match removals.first() {
        Some(top) => {
            let others: Vec<String> = removals[1..].iter().take(2).map(|r| format!("`{}` removed {}", r.constraint, r.types.len())).collect();
            (
                constraint_span(ctx, &top.constraint),
                format!(
                    "; `{}` removed the most ({}){}",
                    top.constraint,
                    top.types.len(),
                    if others.is_empty() { String::new() } else { format!(", then {}", others.join(", ")) }
                ),
            )
        }
        None => (ctx.tier.name.span, String::new()),
    };
    out.pool(
        ctx,
        RULE.code,
        span,
        format!(
            "spot NodePool `{}` has {} instance type{}: few spot pools mean more interruptions and insufficient-capacity launch failures (and spot-to-spot consolidation, which also needs the SpotToSpotConsolidation feature gate and WhenEmptyOrUnderutilized, needs at least {SPOT_MIN_TYPES}){why}",
            ctx.plan.name,
            types.len(),
            if types.len() == 1 { "" } else { "s" }
        ),
        format!("relax that constraint ({}) so the pool can find spot capacity; spot pools this narrow are interrupted and not replaced", relaxations(ctx)),
    );
}

/// The profile text behind a solver constraint (as worded in [`crate::solve::Removal::constraint`]).
fn constraint_span(ctx: &PoolCtx, constraint: &str) -> Span {
    let s = &ctx.tier.settings;
    let first = |v: &[crate::diagnostic::Spanned<String>]| v.first().map(|x| x.span);
    let span = if constraint.starts_with("accelerator name in") {
        first(&s.accelerator_names)
    } else if constraint.starts_with("memory per accelerator") {
        s.memory_min_mib.as_ref().map(|m| m.span)
    } else if constraint.starts_with("accelerators per node ≥") {
        s.per_node_min.as_ref().map(|m| m.span)
    } else if constraint.starts_with("accelerators per node ≤") {
        s.per_node_max.as_ref().map(|m| m.span)
    } else if constraint.starts_with("arch in") {
        s.arch.first().map(|a| a.span)
    } else if constraint.starts_with("instance generation") {
        s.generation_min.as_ref().map(|g| g.span)
    } else if constraint.starts_with("family in") {
        first(&s.families)
    } else if constraint.starts_with("family not in") {
        first(&s.exclude_families)
    } else if constraint.starts_with("type in") {
        first(&s.types)
    } else if constraint.starts_with("type not in") {
        first(&s.exclude_types)
    } else if constraint.starts_with("EFA") {
        s.efa.as_ref().map(|e| e.span)
    } else if constraint.starts_with("supports capacity") || constraint.starts_with("has a price") {
        Some(s.capacity.span)
    } else if constraint.starts_with("$/accelerator-hour") {
        Some(s.price_ratio_max.span)
    } else if constraint.starts_with("node accelerators ≤ limit") {
        Some(ctx.limit_span())
    } else {
        None
    };
    span.unwrap_or(ctx.tier.name.span)
}

/// GP006's help: the settings that narrow this kind of pool.
fn relaxations(ctx: &PoolCtx) -> &'static str {
    if ctx.plan.accelerator.is_accelerator() {
        "more GPU names, a lower memory-min, a wider per-node range, a higher price-ratio-max"
    } else {
        "more `types`, a wider `require` range, a higher price-ratio-max"
    }
}
