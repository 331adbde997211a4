//! GP006: a spot NodePool with fewer than 15 instance types: more interruptions and insufficient-capacity failures,
//! and spot-to-spot consolidation needs 15.

use crate::catalog::CapacityType;
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
                // The solver records where the profile says each constraint; its own rule (the limit) has no line.
                top.span.unwrap_or_else(|| ctx.limit_span()),
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

/// GP006's help: the settings that narrow this kind of pool.
fn relaxations(ctx: &PoolCtx) -> &'static str {
    if ctx.plan.accelerator.is_accelerator() {
        "more GPU names, a lower memory-min, a wider per-node range, a higher price-ratio-max"
    } else {
        "more `types`, a wider `require` range, a higher price-ratio-max"
    }
}
