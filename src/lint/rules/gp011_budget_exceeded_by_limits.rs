//! GP011: the profile's NodePool limits allow a worst case above its $/h budget (prices recomputed from the catalog).

use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::cost::rendered_cost;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::profile::Profile;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp011,
    name: "budget-exceeded-by-limits",
    summary: "the profile's NodePool limits allow a worst case above its $/h budget",
    checks_output: true,
    check: Scope::Profile(check),
};

/// GP011: Σ limit × priciest $/accelerator-hour over the profile's rendered NodePools above the budget.
pub fn check(lint: &LintCtx, profile: &Profile, out: &mut Findings) {
    let Some(budget) = &profile.budget_usd_per_hour else { return };
    let pools = lint.pools_of(profile);
    let mut total = 0.0;
    let mut parts = Vec::new();
    for ctx in pools {
        let Some(c) = rendered_cost(ctx) else { continue };
        total += c.worst_case;
        parts.push(format!("{} ({}) ${:.2}", ctx.plan.name, c.how, c.worst_case));
    }
    if total > budget.value + 0.005 {
        out.profile(
            profile,
            RULE.code,
            budget.span,
            format!(
                "the NodePool limits of profile `{}` allow a worst case of ${total:.2}/h, over its budget of ${:.2}/h: {}",
                profile.name.value,
                budget.value,
                parts.join(" + ")
            ),
            "the rendered limits differ from what gpuplan sized within the budget: check --templates overrides of spec.limits, or raise the budget".into(),
        );
    }
}
