//! GP019: an EFA pool whose NodePools admit more than one GPU model: one multi-node job may get both and runs at the
//! slower one's pace.

use std::collections::BTreeSet;

use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp019,
    name: "efa-mixed-gpu-models",
    summary: "an EFA pool whose NodePools admit more than one GPU model: one multi-node job may get both and runs at the slower one's pace",
    checks_output: false,
    check: Scope::Pool(check),
};

/// GP019: an EFA pool whose NodePools (all its tiers) admit more than one GPU model. NCCL collectives run at the
/// pace of the slowest rank, and nothing keeps one job's pods on one model. Reported on the pool's first tier.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    if !ctx.plan.efa || ctx.plan.tier_index != 0 {
        return;
    }
    let tiers = ctx.cluster.pools.iter().filter(|p| p.profile == ctx.plan.profile && p.pool == ctx.plan.pool);
    let models: BTreeSet<&str> = tiers.flat_map(|p| p.candidates.iter().map(|c| c.accelerator_name.as_str())).collect();
    if models.len() < 2 {
        return;
    }
    let span = ctx.tier.settings.efa.as_ref().map_or(ctx.tier.name.span, |e| e.span);
    let list = models.into_iter().collect::<Vec<_>>().join(", ");
    out.pool(
        ctx,
        RULE.code,
        span,
        format!("EFA pool `{}` admits GPU models {list}: one multi-node job may get several and runs at the slowest one's pace", ctx.plan.pool),
        "name one GPU model in the pool's `gpu { name … }`, or give each model its own pool".into(),
    );
}
