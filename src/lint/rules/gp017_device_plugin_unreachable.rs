//! GP017: an accelerator NodePool's taints keep an add-on its nodes need (NFD worker, NVIDIA operands, Neuron or EFA
//! device plugin) off them: the devices never become schedulable.

use crate::lint::code::RuleCode;
use crate::lint::context::{find_tier, LintCtx};
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp017,
    name: "device-plugin-unreachable",
    summary: "an accelerator NodePool's taints keep an add-on its nodes need (NFD worker, NVIDIA operands, Neuron or EFA device plugin) off them: the devices never become schedulable",
    checks_output: true,
    check: Scope::Cluster(check),
};

/// GP017: an add-on DaemonSet a pool's nodes need would not tolerate them (`ops::addons`; compile refuses the
/// same as E0184, so this fires on objects edited after compile or read by adopt). Not silenced by `allow`:
/// such a node is never usable.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    let cluster = lint.cluster();
    for u in crate::ops::addons::unreachable(&cluster.pools, lint.manifests) {
        let Some(plan) = cluster.pools.iter().find(|p| p.name == u.nodepool) else { continue };
        let Some(profile) = lint.ctx.profile(&plan.profile) else { continue };
        let Some((_, tier)) = find_tier(profile, &plan.name) else { continue };
        let taint = format!("{}:{}", u.taint.key, u.taint.effect);
        let message = format!("NodePool `{}`: {} not tolerate the node taint {taint}, so the node's devices never become schedulable and its NodeClaims never initialize", u.nodepool, u.subject());
        let help = format!("its tolerations come from {}: add {{key: {}, operator: Exists, effect: {}}} there", u.from, u.taint.key, u.taint.effect);
        out.unsilenced(RULE.code, &profile.name.value, Some(&plan.name), tier.name.span, message, help);
    }
}
