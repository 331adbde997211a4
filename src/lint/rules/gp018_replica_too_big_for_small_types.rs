//! GP018: a workload's replica (its `requests` and accelerators) that does not fit some of its pool's instance types:
//! Karpenter silently launches larger, pricier ones.

use crate::check::{replica_fits, FitSummary};
use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::solve::ops::workload::WorkloadPlan;
use crate::solve::ClusterPlan;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp018,
    name: "replica-too-big-for-small-types",
    summary: "a workload's replica (its `requests` and accelerators) does not fit some of its pool's instance types: Karpenter silently launches larger, pricier ones",
    checks_output: false,
    check: Scope::Cluster(check),
};

/// GP018: a workload's replica does not fit some of its pool's types. Karpenter launches the cheapest type the
/// pending pods fit (kubernetes-sigs/karpenter `pkg/controllers/provisioning/scheduling/nodeclaim.go` `CanAdd`
/// filters the types by the pods' requests), so the pool's cheapest $/accelerator-hour is never what it pays.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    let (cluster, profiles) = (lint.cluster(), &lint.ctx.profiles);
    for w in &cluster.ops.workloads {
        let Some(profile) = profiles.iter().find(|p| p.name.value == w.profile) else { continue };
        let Some(spec) = profile.ops.workloads.iter().find(|x| x.name.value == w.name && x.namespace.value == w.namespace) else { continue };
        let allowed = cluster.pools.iter().filter(|p| w.nodepools.contains(&p.name)).any(|p| p.allow.contains(RULE.code.as_str()));
        let Some(fit) = FitSummary::new(replica_fits(cluster, lint.simulated, lint.ctx.catalog, w)) else { continue };
        if allowed || fit.too_small.is_empty() {
            continue;
        }
        let span = spec.requests.values().next().map_or(spec.name.span, |r| r.span);
        let message = format!("one replica of workload `{}/{}` does not fit on {} of pool `{}`: {}", w.namespace, w.name, fit.too_small_text(), w.pool, fit.price_text_per(unit_of(cluster, w)));
        let help = "lower the replica's requests to fit the small types, or exclude them from the pool (`exclude-types`) so its cost figures count what it launches (the add-on DaemonSets the cluster configures are counted; leave room for DaemonSets of your own)";
        out.profile(profile, RULE.code, span, message, help.into());
    }
}

/// The unit a workload's pool is priced in: accelerator-hours, or vCPU-hours on a CPU pool.
fn unit_of(cluster: &ClusterPlan, w: &WorkloadPlan) -> &'static str {
    let cpu = cluster.pools.iter().any(|p| w.nodepools.contains(&p.name) && !p.accelerator.is_accelerator());
    if cpu { "vCPU" } else { "accelerator" }
}
