//! GP020: a ClusterQueue flavor that stands for no NodePool — no ResourceFlavor of that name, or one whose
//! `nodeLabels` no NodePool's nodes carry. Kueue admits the workload and injects the labels into its nodeSelector
//! (`apis/kueue/v1beta2/resourceflavor_types.go`), and the pods stay pending for ever.

use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::kueue::{cluster_flavors, nodepool_of, queue_finding};
use crate::lint::rule::{Rule, Scope};
use crate::solve::NODEPOOL_LABEL;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp020,
    name: "queue-flavor-without-pool",
    summary: "a Kueue ClusterQueue flavor whose ResourceFlavor is missing or whose nodeLabels match no NodePool (admitted pods wait for nodes that never come)",
    checks_output: true,
    check: Scope::Cluster(check),
};

/// GP020 on the cluster's rendered ClusterQueues.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    for r in cluster_flavors(lint.rendered) {
        if nodepool_of(lint.rendered, &r).is_some() {
            continue;
        }
        let message = format!("ClusterQueue `{}` admits to flavor `{}`, which stands for no NodePool of the cluster: its pods would wait for nodes that never come", r.queue, r.flavor);
        let help = format!("the ResourceFlavor `{}` must exist, and its nodeLabels be labels of one NodePool's nodes ({NODEPOOL_LABEL}: <NodePool>); compile writes both from the queue's pool", r.flavor);
        queue_finding(lint, out, r.queue, RULE.code, message, help);
    }
}
