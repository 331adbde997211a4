//! GP012: NodePool cost annotations that disagree with what its limit and instance types can launch (prices are
//! recomputed from the catalog, never taken from the annotations).

use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::cost::rendered_cost;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::solve::round_cents;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp012,
    name: "cost-annotation-drift",
    summary: "NodePool cost annotations disagree with what its limit and instance types can launch",
    checks_output: true,
    check: Scope::Pool(check),
};

/// GP012: cost annotations vs what the rendered limit and instance types can launch.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    let Some(c) = rendered_cost(ctx) else { return };
    let mut wrong = Vec::new();
    for (key, what, actual) in [
        ("gpuplan.dev/at-limit-usd-per-hour", "at-limit", round_cents(c.at_limit)),
        ("gpuplan.dev/worst-case-usd-per-hour", "worst case", round_cents(c.worst_case)),
    ] {
        let Some(text) = ctx.np.annotation(key) else { continue };
        match text.parse::<f64>() {
            Ok(v) if (v - actual).abs() < 0.006 => {}
            _ => wrong.push(format!("{what} ${text}/h, but at {} it is ${actual:.2}/h", c.how)),
        }
    }
    if !wrong.is_empty() {
        out.pool(
            ctx,
            RULE.code,
            ctx.tier.name.span,
            format!("NodePool `{}` cost annotations disagree with what it can launch: {}", ctx.np.name(), wrong.join("; ")),
            "the annotations, limit or instance types were changed after gpuplan priced them: check --templates overrides; recompile to refresh".into(),
        );
    }
}
