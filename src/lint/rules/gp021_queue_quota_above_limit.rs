//! GP021: the Kueue ClusterQueues' nominal quotas in a flavor add up to more than its NodePool's limit: admitted jobs
//! wait for nodes Karpenter will not launch.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::kueue::{cluster_flavors, nodepool_of, queue_finding};
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp021,
    name: "queue-quota-above-limit",
    summary: "the Kueue ClusterQueues' nominal quotas in a flavor add up to more than its NodePool's limit (admitted jobs wait for nodes Karpenter will not launch)",
    checks_output: true,
    check: Scope::Cluster(check),
};

/// GP021 on the cluster's rendered ClusterQueues: per NodePool, the quotas of the flavors that stand for it.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    let refs = cluster_flavors(lint.rendered);
    let mut held: BTreeMap<&str, (u64, Vec<String>, &Value)> = BTreeMap::new();
    for r in &refs {
        let Some(np) = nodepool_of(lint.rendered, r) else { continue };
        let resource = np["spec"]["limits"].as_object().and_then(|l| l.keys().find(|k| r.nominal.contains_key(k.as_str()) && *k != "cpu" && *k != "memory"));
        let Some(n) = resource.and_then(|k| r.nominal.get(k.as_str())).and_then(|n| n.parse::<u64>().ok()) else { continue };
        let e = held.entry(np["metadata"]["name"].as_str().unwrap_or_default()).or_insert((0, Vec::new(), np));
        e.0 += n;
        e.1.push(format!("{} {n}", r.queue));
    }
    for (name, (total, queues, np)) in held {
        let limits = np["spec"]["limits"].as_object();
        let Some((resource, limit)) = limits.and_then(|l| l.iter().find(|(k, _)| *k != "cpu" && *k != "memory")).and_then(|(k, v)| Some((k, v.as_str()?.parse::<u64>().ok()?))) else { continue };
        if total <= limit {
            continue;
        }
        let first = queues[0].split(' ').next().unwrap_or_default().to_string();
        let message = format!("the ClusterQueues' nominal quotas in flavor `{name}` add up to {total} {resource}, above NodePool `{name}`'s limit of {limit} ({})", queues.join(", "));
        let help = format!("lower the nominal quotas to {limit} in all, or raise the NodePool's limit: compile derives both from the profile");
        queue_finding(lint, out, &first, RULE.code, message, help);
    }
}
