//! GP010: reserved capacity without capacityReservationSelectorTerms on its EC2NodeClass: Karpenter finds no
//! reservation to launch into.

use crate::catalog::CapacityType;
use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp010,
    name: "reserved-without-selector",
    summary: "reserved capacity without capacityReservationSelectorTerms on its EC2NodeClass",
    checks_output: true,
    check: Scope::Pool(check),
};

/// GP010: reserved capacity without capacityReservationSelectorTerms on its EC2NodeClass.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    if !ctx.np.capacity_types().contains(&CapacityType::Reserved) {
        return;
    }
    let class = ctx.np.spec()["template"]["spec"]["nodeClassRef"]["name"].as_str().unwrap_or("");
    let terms = ctx.rendered.get("EC2NodeClass", class).or_else(|| ctx.rendered.get("NodeClass", class))
        .and_then(|o| o["spec"]["capacityReservationSelectorTerms"].as_array())
        .is_some_and(|t| !t.is_empty());
    if !terms {
        let s = &ctx.tier.settings;
        let span = s.reserved.as_ref().map_or(s.capacity.span, |r| r.span);
        out.pool(
            ctx,
            RULE.code,
            span,
            format!(
                "NodePool `{}` launches reserved capacity, but its EC2NodeClass `{class}` has no capacityReservationSelectorTerms: Karpenter finds no reservation to launch into",
                ctx.plan.name
            ),
            "name the reservations in the pool: reserved { id \"cr-…\" } or reserved { tag \"key\" \"value\" } (and check the EC2NodeClass template override)".into(),
        );
    }
}
