//! GP035: the queues' shares of a flavor add up to all of it, yet their nominal quotas leave accelerators in no
//! queue. A share rounds down (`share="60%"` of 16 is 9, `share="40%"` is 6), and Kueue admits nothing beyond the
//! nominal quotas of a cohort's queues (kubernetes-sigs/kueue v0.19.2 `pkg/cache/scheduler/resource_node.go`:
//! `SubtreeQuota`, "the sum of the node's quota, as well as" its children's, bounds `available`), so the rest of the
//! NodePool's limit is
//! reachable by no queued job. Issue 32: 60/40 of 2 × 8 H100 leaves one GPU in no queue.

use std::collections::BTreeMap;

use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::kueue::queue_finding;
use crate::lint::rule::{Rule, Scope};
use crate::profile::queue::Amount;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp035,
    name: "queue-shares-leave-accelerators-unqueued",
    summary: "the queues' shares of a flavor add up to 100% but, rounded down, leave accelerators in no queue",
    checks_output: false,
    check: Scope::Cluster(check),
};

/// Per flavor: Σ percent of the queues' shares, Σ their nominal quotas, and "queue nominal" for the message.
type Shares<'a> = (u32, u32, u32, Vec<String>, &'a str);

/// GP035 on the cluster's queue plan, at the first queue of the flavor.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    let mut per_flavor: BTreeMap<&str, Shares> = BTreeMap::new();
    for q in &lint.ctx.cluster.queues.queues {
        let declared = lint.ctx.profile(&q.profile).into_iter().flat_map(|p| &p.queues).find(|x| x.name.value == q.name);
        let Some(Amount::Percent(percent)) = declared.map(|d| d.quota.value.nominal.value) else { continue };
        for f in &q.flavors {
            let e = per_flavor.entry(&f.flavor).or_insert((0, 0, f.limit.saturating_sub(f.non_queued), Vec::new(), &q.name));
            e.0 += percent;
            e.1 += f.nominal;
            e.3.push(format!("{} {}", q.name, f.nominal));
        }
    }
    for (flavor, (percent, nominal, room, queues, first)) in per_flavor {
        if percent < 100 || nominal >= room {
            continue;
        }
        let message = format!(
            "the queues' shares of flavor `{flavor}` add up to {percent}% of its {room} accelerators, but round down to {nominal} ({}): {} in no queue",
            queues.join(", "),
            room - nominal
        );
        let help = "write shares that divide the pool into whole nodes (50%/50% of 2 nodes), or nominal counts that add up to what the pool leaves".to_string();
        queue_finding(lint, out, first, RULE.code, message, help);
    }
}
