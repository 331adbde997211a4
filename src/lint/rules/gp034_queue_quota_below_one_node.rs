//! GP034: a queue's nominal quota in a flavor is more than nothing but less than one node of the flavor's NodePool.
//! A whole-node job (a training gang's pods take a node each) then never runs on the queue's own quota: Kueue admits
//! a Workload only when its pod set's requests × count fit the flavor's quota plus what it may borrow
//! (kubernetes-sigs/kueue v0.19.2 `pkg/scheduler/flavorassigner/flavorassigner.go` `fitsResourceQuota`), so the team
//! waits for its cohort's idle quota. Issue 32: a 40% share of 2 × 8 H100 is 6 GPUs, and that team never runs an
//! 8-GPU job without borrowing. Shared pools (time-slicing, MIG) are left out: their jobs take slices, not nodes.

use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::kueue::queue_finding;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp034,
    name: "queue-quota-below-one-node",
    summary: "a queue's nominal quota in a flavor is below one node of its NodePool (a whole-node job runs only by borrowing)",
    checks_output: false,
    check: Scope::Cluster(check),
};

/// GP034 on the cluster's queue plan: the first flavor of each queue whose quota is below one whole node.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    let cluster = lint.ctx.cluster;
    for q in &cluster.queues.queues {
        let whole_nodes = |flavor: &str| cluster.pools.iter().find(|p| p.name == flavor).is_some_and(|p| p.replicas() == 1);
        let Some(f) = q.flavors.iter().find(|f| f.nominal > 0 && f.nominal < f.node && whole_nodes(&f.flavor)) else { continue };
        let resource = q.accelerator.resource();
        let message = format!(
            "queue `{}`'s nominal quota in flavor `{}` is {} {resource}, below one node of NodePool `{}` ({} {resource}): a whole-node job runs on it only by borrowing from the cohort",
            q.name, f.flavor, f.nominal, f.flavor, f.node
        );
        let help = format!("give the queue a quota of whole nodes (nominal={}, or a share that is a multiple of {} of what the pool leaves)", f.node, f.node);
        queue_finding(lint, out, &q.name, RULE.code, message, help);
    }
}
