//! GP028: a static pool whose replicas can each launch on types of very different price.
//!
//! A static NodePool's NodeClaims carry no instance-type list of their own: the provider launches the cheapest
//! available offering among every type the NodePool admits (kubernetes-sigs/karpenter v1.14.1
//! `scheduling/nodeclaimtemplate.go` `ToNodeClaim`, "For static we let cloudprovider.Create()"), and launches again
//! after every spot interruption, drift or expiry. So which type holds a replica changes over the pool's life, and the
//! worst case counts every replica at the dearest admitted type (`solve::static_pool`). A fixed size is usually meant
//! as a fixed shape (the design's example pins `m5.2xlarge` "for predictable capacity"): when the admitted node prices
//! are far apart, the figure is far above what the pool usually costs, and the capacity each replica gives varies.

use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::solve::static_pool::{cheapest, dearest};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp028,
    name: "static-pool-price-spread",
    summary: "a static pool whose replicas can each launch on admitted types of very different price (each launch picks anew; the worst case counts the dearest)",
    checks_output: false,
    check: Scope::Pool(check),
};

/// Above this ratio of the dearest admitted node's worst-case price to the cheapest one's expected price, GP028 fires.
pub const PRICE_SPREAD: f64 = 2.0;

/// GP028 (see the module doc).
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    let (Some(s), Some(span)) = (ctx.plan.static_pool, ctx.tier.settings.static_pool.as_ref().map(|s| s.span)) else { return };
    // A parked pool (replicas=0) launches nothing, at any price.
    if s.replicas == 0 {
        return;
    }
    let (Some(top), Some(low)) = (dearest(ctx.plan), cheapest(ctx.plan)) else { return };
    if top.ceiling_usd_per_hour <= PRICE_SPREAD * low.usd_per_hour {
        return;
    }
    let message = format!(
        "static NodePool `{}` keeps {} replicas that can each launch on any of its {} types, from {} (${:.2}/h) to {} (${:.2}/h): its worst case counts every replica at the dearest, {:.1} × what it usually costs",
        ctx.plan.name,
        s.replicas,
        ctx.plan.candidates.len(),
        low.name,
        low.usd_per_hour,
        top.name,
        top.ceiling_usd_per_hour,
        top.ceiling_usd_per_hour / low.usd_per_hour.max(f64::MIN_POSITIVE),
    );
    let help = "pin the node a replica runs on: name it with `types`, or narrow `gpu { per-node min=… max=… }` (a node kept for good is worth choosing)".to_string();
    out.pool(ctx, RULE.code, span, message, help);
}
