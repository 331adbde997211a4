//! GP016: a tier of a tiered pool that receives no pod even when every earlier tier is out of capacity, as the
//! simulator finds it (`check::tier_gaps`).

use crate::check::tier_gaps;
use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp016,
    name: "tier-never-receives-pods",
    summary: "a tier of a tiered pool receives no pod even when every earlier tier is out of capacity (simulated)",
    checks_output: true,
    check: Scope::Cluster(check),
};

/// GP016: each tier gap, at the tier's name in its profile, unless the tier allows the code.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    let cluster = lint.cluster();
    for gap in tier_gaps(lint.ctx, lint.simulated) {
        let Some(plan) = cluster.pools.iter().find(|p| p.name == gap.tier) else { continue };
        if plan.allow.contains(RULE.code.as_str()) {
            continue;
        }
        let Some(tier) = lint.ctx.profile(&gap.profile).into_iter().flat_map(|p| &p.pools).flat_map(|p| &p.tiers).find(|t| t.name.value == gap.tier) else {
            continue;
        };
        let message = format!("tier `{}` of pool `{}` never receives pods: with every earlier tier out of capacity, a pod of the pool goes to {}", gap.tier, gap.pool, gap.instead);
        let help = "check the tier's weight, limits and instance types against the earlier tiers (`gpuplan simulate --unavailable` shows the fallback); silence with `allow \"GP016\"` in the tier";
        out.unsilenced(RULE.code, &gap.profile, Some(&gap.tier), tier.name.span, message, help.into());
    }
}
