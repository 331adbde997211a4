//! GP026: an `overlay` block that selects none of its NodePool's instance types (for the capacity types it launches):
//! the NodeOverlay changes nothing there.

use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp026,
    name: "overlay-selects-no-type",
    summary: "an `overlay` block selects none of its NodePool's instance types (for the capacity types it launches): the NodeOverlay changes nothing there",
    checks_output: false,
    check: Scope::Pool(check),
};

/// GP026: an `overlay` block whose `require` lines select none of the NodePool's types (a family the pool does not
/// admit, a capacity type it does not launch): Karpenter applies it nowhere on this NodePool.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    let types: Vec<&crate::catalog::InstanceType> = ctx.plan.candidates.iter().filter_map(|c| ctx.catalog.get(&c.name)).collect();
    for o in crate::solve::idle_overlays(&ctx.tier.settings, &types, &ctx.catalog.region) {
        out.pool(
            ctx,
            RULE.code,
            o.name.span,
            format!("overlay `{}` selects none of NodePool `{}`'s {} instance types: its NodeOverlay changes nothing there", o.name.value, ctx.plan.name, types.len()),
            "check its `require` lines against the pool's types (`gpuplan explain` lists them) and capacity types, or remove the block".into(),
        );
    }
}
