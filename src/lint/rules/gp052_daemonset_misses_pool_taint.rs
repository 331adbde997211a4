//! GP052: a DaemonSet of the cluster's own (logging, monitoring, security agents: given with `lint --manifests`)
//! that selects a NodePool's nodes but does not tolerate its taints, so it never runs there.
//!
//! The DaemonSet controller runs a daemon pod on a node only when its pod template tolerates every NoSchedule and
//! NoExecute taint of the node (kubernetes v1.37.2 `pkg/controller/daemon/daemon_controller.go` `predicates`:
//! `FindMatchingUntoleratedTaint` over the `NoExecute` and `NoSchedule` taints, with the tolerations every daemon pod
//! gets from `AddOrUpdateDaemonPodTolerations`, `ops::addons::tolerated_by_every_daemon`) and its required node
//! affinity matches. gpuplan's pools taint their nodes (`nvidia.com/gpu`, `gpuplan.dev/pool`, the profile's own
//! taints), so an agent that tolerates only `nvidia.com/gpu` silently skips every GPU node of a pool that also has
//! `workload=training:NoSchedule`: no logs, no security scanning there. The add-ons gpuplan configures (GPU Operator,
//! Neuron and EFA device plugins) are GP017's; startup taints are left out (they are removed once the node is
//! ready, and the daemon then starts).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::lint::code::RuleCode;
use crate::lint::context::{LintCtx, PoolCtx};
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::simulate::pods::Pod;
use crate::simulate::requirements::{Requirements, Taint};
use crate::simulate::yaml::Doc;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp052,
    name: "daemonset-misses-pool-taint",
    summary: "a DaemonSet of the cluster's (`lint --manifests`) selects a NodePool's nodes but does not tolerate its NoSchedule/NoExecute taints: it never runs there",
    checks_output: true,
    check: Scope::Cluster(check),
};

/// GP052: one finding per DaemonSet, naming every NodePool it cannot run on and the tolerations to add.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    for daemon in user_daemon_sets(lint) {
        let mut blocked: Vec<&PoolCtx> = Vec::new();
        let mut missing: BTreeSet<(String, String)> = BTreeSet::new();
        for pool in &lint.pools {
            let Some(simulated) = lint.simulated.node_pools.iter().find(|n| n.name == pool.plan.name) else { continue };
            if !selects(&daemon, &simulated.requirements) {
                continue;
            }
            let untolerated: Vec<&Taint> = simulated
                .taints
                .iter()
                .filter(|t| matches!(t.effect.as_str(), "NoSchedule" | "NoExecute") && !crate::ops::addons::tolerated_by_every_daemon(t))
                .filter(|t| !daemon.tolerations.iter().any(|x| x.tolerates(t)))
                .collect();
            if !untolerated.is_empty() {
                missing.extend(untolerated.iter().map(|t| (t.key.clone(), t.effect.clone())));
                blocked.push(pool);
            }
        }
        let Some(first) = blocked.first() else { continue };
        let names: Vec<&str> = blocked.iter().map(|p| p.plan.name.as_str()).collect();
        let message = format!(
            "DaemonSet {} does not tolerate the taints of NodePool{} {}, so it never runs on their nodes (the DaemonSet controller skips a node with a NoSchedule or NoExecute taint its pods do not tolerate)",
            daemon.key,
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        );
        let tolerations: Vec<String> = missing.iter().map(|(key, effect)| format!("{{key: {key}, operator: Exists, effect: {effect}}}")).collect();
        let help = format!("add to its pod template's tolerations: {} (or, if it must stay off these nodes, a nodeSelector or node affinity that says so)", tolerations.join(", "));
        out.profile(first.profile, RULE.code, first.tier.name.span, message, help);
    }
}

/// The DaemonSets among the cluster's objects that are not an add-on gpuplan configures (GP017 judges those), as
/// daemon pods; a DaemonSet the simulator cannot read is left out.
fn user_daemon_sets(lint: &LintCtx) -> Vec<Pod> {
    let add_ons: BTreeSet<&str> = crate::charts::add_ons::ADD_ONS.iter().map(|a| a.daemonset).collect();
    let docs: Vec<Doc> = lint
        .manifests
        .iter()
        .filter(|m| m.kind() == "DaemonSet" && !m.object["metadata"]["name"].as_str().is_some_and(|n| add_ons.contains(n)))
        .map(|m| Doc { path: PathBuf::from(&m.source), line: 1, text: String::new(), value: Cow::Borrowed(&m.object) })
        .collect();
    docs.iter().filter_map(|d| crate::simulate::pods::daemon_sets(std::slice::from_ref(d)).ok()).flatten().collect()
}

/// Whether the daemon's nodeSelector and one of its required node affinity terms fit a NodePool's nodes (Karpenter's
/// `Compatible`, with undefined well-known labels allowed: a node of the pool has them).
fn selects(daemon: &Pod, pool: &Requirements) -> bool {
    if daemon.required_terms.is_empty() {
        return pool.compatible(&daemon.node_selector).is_ok();
    }
    daemon.required_terms.iter().any(|t| pool.compatible(&daemon.node_selector.merged(t)).is_ok())
}
