//! GP009: `expireAfter: Never` without a `Drifted` disruption budget: drift, the only replacement path, rolls at the
//! general budget's pace.

use serde_json::Value;

use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp009,
    name: "never-expire-without-drift-budget",
    summary: "`expireAfter: Never` without a `Drifted` disruption budget (drift, the only replacement path, rolls at the general budget's pace)",
    checks_output: true,
    check: Scope::Pool(check),
};

/// GP009: expireAfter Never without a Drifted budget.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    if ctx.np.spec()["template"]["spec"]["expireAfter"].as_str() != Some("Never") {
        return;
    }
    let drifted = ctx
        .np
        .budgets()
        .iter()
        .any(|b| b.get("reasons").and_then(Value::as_array).is_some_and(|r| r.iter().any(|x| x == "Drifted")));
    if !drifted {
        out.pool(
            ctx,
            RULE.code,
            ctx.tier.settings.disruption.expire_after.span,
            format!(
                "NodePool `{}` never expires its nodes (expireAfter: Never) but no disruption budget names `Drifted`: drift (a new AMI, a NodeClass change) is their only replacement path, and it then rolls at the general budget's pace, at any hour, restarting the {} on each node",
                ctx.plan.name,
                if ctx.plan.accelerator.is_accelerator() { "GPU work" } else { "work" }
            ),
            "add budget nodes=\"1\" reasons=\"Drifted\" (one at a time), or a maintenance-window (drift held back outside it) to the pool's disruption block".into(),
        );
    }
}
