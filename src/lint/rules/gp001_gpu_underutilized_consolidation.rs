//! GP001: a GPU NodePool that consolidates WhenEmptyOrUnderutilized moves running GPU work for a small saving.

use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp001,
    name: "gpu-underutilized-consolidation",
    summary: "GPU NodePool consolidates WhenEmptyOrUnderutilized (moves running GPU work — a model reload, a lost training step — for a small saving)",
    checks_output: true,
    check: Scope::Pool(check),
};

/// GP001: WhenEmptyOrUnderutilized on a GPU pool.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    // GP001 and GP007 are about accelerator nodes: a CPU pool's nodes are meant for ordinary pods (no
    // accelerator taint) and run work that consolidation may move like any other.
    // A static NodePool is not consolidated (Karpenter ignores the policy) and carries no resource limit
    // (the CRD allows only `nodes`): its size is its replicas.
    if !ctx.plan.accelerator.is_accelerator() || ctx.plan.static_pool.is_some() {
        return;
    }
    // Absent, the NodePool CRD's default applies (karpenter.sh_nodepools.yaml: WhenEmptyOrUnderutilized).
    let policy = ctx.np.spec()["disruption"]["consolidationPolicy"].as_str().unwrap_or("WhenEmptyOrUnderutilized");
    if policy == "WhenEmptyOrUnderutilized" {
        out.pool(
            ctx,
            RULE.code,
            ctx.tier.settings.disruption.consolidation_policy.span,
            format!(
                "NodePool `{}` consolidates WhenEmptyOrUnderutilized: Karpenter may delete a node that runs GPU pods whenever their {} requests fit on other or cheaper nodes, restarting long-running GPU work (a model reload, a lost training step) for a small saving",
                ctx.plan.name,
                ctx.plan.resource()
            ),
            advice(ctx),
        );
    }
}

/// The policy GP001 advises: on an on-demand fallback of a spot tier, `Balanced` (the preset default there: pods go
/// back to spot when the saving outweighs the move, `BalancedK = 2` in sigs.k8s.io/karpenter@v1.14.1
/// pkg/apis/v1/nodepool.go); elsewhere `WhenEmpty`, or `Balanced` when cheaper placements should still win.
fn advice(ctx: &PoolCtx) -> String {
    let index = ctx.pool.tiers.iter().position(|t| t.name.value == ctx.tier.name.value);
    if index.is_some_and(|i| crate::profile::on_demand_after_spot(&ctx.pool.tiers, i)) {
        "use `consolidation \"Balanced\"` in the tier's disruption block (the preset default for an on-demand fallback of spot): pods move back to spot when the saving is at least half the disruption (Karpenter's BalancedK = 2), not for a marginal repack".into()
    } else {
        "use `consolidation \"WhenEmpty\"` in the pool's disruption block (the preset default): empty GPU nodes still go, busy ones stay; or `consolidation \"Balanced\"`, which moves busy nodes only when the saving is at least half the disruption (Karpenter's BalancedK = 2)".into()
    }
}
