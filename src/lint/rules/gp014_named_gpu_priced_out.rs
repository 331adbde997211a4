//! GP014: a GPU named in the pool's `gpu { name … }` that has no instance type left after price-ratio-max.

use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp014,
    name: "named-gpu-priced-out",
    summary: "a GPU named in the pool's `gpu { name … }` has no instance type left after price-ratio-max",
    checks_output: false,
    check: Scope::Pool(check),
};

/// GP014: the user named a GPU, and price-ratio-max removed every type that has it (training names H100;
/// p5 is dropped for being > 1.6 × the cheapest A100 $/GPU-hour): the pool silently never gets that GPU.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    let Some(priced_out) = ctx.plan.removed.iter().find(|r| r.constraint.contains("[price-ratio-max")) else { return };
    for name in &ctx.tier.settings.accelerator_names {
        let has = |t: &str| {
            ctx.catalog.get(t).is_some_and(|t| {
                t.gpus.iter().any(|g| g.name.eq_ignore_ascii_case(&name.value))
                    || t.neuron.as_ref().is_some_and(|n| n.name.eq_ignore_ascii_case(&name.value))
            })
        };
        let kept = ctx.plan.candidates.iter().any(|c| has(&c.name));
        let dropped: Vec<&str> = priced_out.types.iter().filter(|t| has(t)).map(String::as_str).collect();
        if kept || dropped.is_empty() {
            continue;
        }
        out.pool(
            ctx,
            RULE.code,
            name.span,
            format!(
                "NodePool `{}` never gets {}: price-ratio-max {} removed every type that has it ({})",
                ctx.plan.name,
                name.value,
                ctx.tier.settings.price_ratio_max.value,
                dropped.join(", ")
            ),
            format!(
                "raise `price-ratio-max` for this pool (e.g. price-ratio-max {:.1}), give {} its own pool or tier, or remove it from `name`",
                ctx.tier.settings.price_ratio_max.value * 2.0,
                name.value
            ),
        );
    }
}
