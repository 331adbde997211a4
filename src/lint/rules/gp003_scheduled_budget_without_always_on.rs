//! GP003: scheduled disruption budgets without an always-on budget: while the schedule is inactive, disruption is
//! unbounded.

use serde_json::Value;

use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp003,
    name: "scheduled-budget-without-always-on",
    summary: "scheduled disruption budgets without an always-on budget (inactive schedule = unbounded disruption)",
    checks_output: true,
    check: Scope::Pool(check),
};

/// GP003: scheduled budgets with some disruption reason not covered by an always-on budget.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    let budgets = ctx.np.budgets();
    if !budgets.iter().any(|b| b.get("schedule").is_some_and(|s| !s.is_null())) {
        return;
    }
    let always: Vec<&&Value> = budgets.iter().filter(|b| b.get("schedule").is_none_or(Value::is_null)).collect();
    let uncovered: Vec<&str> = ["Empty", "Underutilized", "Drifted"]
        .into_iter()
        .filter(|reason| {
            !always.iter().any(|b| match b.get("reasons").and_then(Value::as_array) {
                None => true,
                Some(r) => r.is_empty() || r.iter().any(|x| x == reason),
            })
        })
        .collect();
    if uncovered.is_empty() {
        return;
    }
    let d = &ctx.tier.settings.disruption;
    let span = d
        .budgets
        .iter()
        .find(|b| b.schedule.is_some())
        .map(|b| b.span)
        .or(d.maintenance_window.as_ref().map(|w| w.span))
        .unwrap_or(ctx.pool.preset.span);
    out.pool(
        ctx,
        RULE.code,
        span,
        format!(
            "NodePool `{}` has scheduled disruption budgets but no always-on budget for {}: while the schedule is inactive, that disruption is unbounded",
            ctx.plan.name,
            uncovered.join(", ")
        ),
        "add an always-on budget next to the scheduled one, e.g. budget nodes=\"1\" (no schedule); Karpenter applies the most restrictive active budget".into(),
    );
}
