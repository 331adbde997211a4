//! GP005: overlapping NodePools of one cluster with equal weights: Karpenter breaks the tie by name, silently.

use std::collections::BTreeSet;

use crate::lint::code::RuleCode;
use crate::lint::context::{LintCtx, PoolCtx};
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp005,
    name: "equal-weights",
    summary: "overlapping NodePools of one cluster with equal weights (Karpenter breaks the tie by name, silently)",
    checks_output: true,
    check: Scope::Cluster(check),
};

/// GP005: equal rendered weights among overlapping NodePools of one cluster.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    let mut sorted: Vec<&PoolCtx> = lint.pools.iter().collect();
    sorted.sort_by(|a, b| a.plan.name.cmp(&b.plan.name));
    for (i, later) in sorted.iter().enumerate() {
        let later_types: BTreeSet<String> = later.types().into_iter().collect();
        let tied: Vec<&str> = sorted[..i]
            .iter()
            .filter(|earlier| earlier.np.weight() == later.np.weight())
            .filter(|earlier| {
                earlier.plan.resource() == later.plan.resource() || earlier.types().iter().any(|t| later_types.contains(t))
            })
            .map(|earlier| earlier.plan.name.as_str())
            .collect();
        if tied.is_empty() {
            continue;
        }
        out.pool(
            later,
            RULE.code,
            later.weight_span(),
            format!(
                "NodePool `{}` has weight {} like overlapping NodePool{} `{}` in cluster `{}`: Karpenter breaks the tie by name, silently",
                later.plan.name,
                later.np.weight(),
                if tied.len() == 1 { "" } else { "s" },
                tied.join("`, `"),
                later.cluster.name
            ),
            "give every pool of a cluster a distinct weight (remove explicit `weight`s to let gpuplan assign them), and check --templates overrides of spec.weight".into(),
        );
    }
}
