//! GP039: a pool's `max-accelerators` (or `max-cpu`) that the budget never lets its limit reach. The cap reads as
//! "up to 32 GPUs", but the limit the budget sizes is lower, so the profile promises capacity it will not launch:
//! say what the budget buys, or raise it to what the cap needs.

use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp039,
    name: "cap-above-budget",
    summary: "a pool's max-accelerators (max-cpu) is never reached: the budget sizes its limit lower",
    checks_output: false,
    check: Scope::Pool(check),
};

/// GP039: the budget, not the cap, sizes the limit, and the cap is above it.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    let Some(unreached) = &ctx.plan.cap_unreached else { return };
    let Some(budget) = &ctx.profile.budget_usd_per_hour else { return };
    let keyword = if ctx.plan.accelerator.is_accelerator() { "max-accelerators" } else { "max-cpu" };
    let units = ctx.plan.limit / ctx.plan.replicas().max(1);
    out.pool(
        ctx,
        RULE.code,
        unreached.cap.span,
        format!(
            "pool `{}`'s `{keyword} {}` is never reached: the budget ${:.2}/h sizes its limit to {units}",
            ctx.plan.name, unreached.cap.value, budget.value
        ),
        format!(
            "raise the budget to at least ${:.2}/h to reach {}, or write `{keyword} {units}` to say what the budget buys",
            unreached.budget_needed, unreached.cap.value
        ),
    );
}
