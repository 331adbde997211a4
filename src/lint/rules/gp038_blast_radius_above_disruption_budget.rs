//! GP038: one node holds more of a workload's replicas than its PodDisruptionBudget lets go at once. A spot
//! interruption, a scheduled maintenance event or a node repair deletes the node whatever the budget says, so one
//! interruption takes more of the service than the budget was written to allow.

use crate::check::simulate_workloads;
use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::profile::ops::PdbBudget;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp038,
    name: "blast-radius-above-disruption-budget",
    summary: "one node holds more of a workload's replicas than its disruption budget allows to lose at once (a spot interruption or node repair ignores the budget)",
    checks_output: false,
    check: Scope::Cluster(check),
};

/// Evictions the budget allows at `replicas`: the PDB's `disruptionsAllowed` with every pod healthy
/// (k8s.io/kubernetes pkg/controller/disruption/disruption.go `getExpectedPodCount`: both forms round a percentage up).
pub fn allowed(budget: PdbBudget, replicas: u32) -> u32 {
    match budget {
        PdbBudget::MinAvailable(m) => replicas.saturating_sub(m.of(replicas)),
        PdbBudget::MaxUnavailable(m) => m.of(replicas),
    }
}

/// GP038: per workload with a disruption budget, the most of its replicas on one node in compile's simulation at max
/// replicas (the spread gpuplan tells its pods to carry included) against what the budget allows.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    let cluster = lint.cluster();
    let Some(report) = simulate_workloads(lint.ctx, lint.simulated) else { return };
    for w in &cluster.ops.workloads {
        let Some(profile) = lint.ctx.profiles.iter().find(|p| p.name.value == w.profile) else { continue };
        let Some(spec) = profile.ops.workloads.iter().find(|x| x.name.value == w.name && x.namespace.value == w.namespace) else { continue };
        let Some(budget) = &spec.disruption_budget else { continue };
        let key = format!("{}/{}", w.namespace, w.name);
        let Some(blast) = report.blast_radius.iter().find(|b| b.workload == key) else { continue };
        let allowed = allowed(budget.value, w.replicas_max);
        if blast.node_max as u32 <= allowed {
            continue;
        }
        let message = format!(
            "at {} replicas one node holds {} of workload `{key}` ({}), more than its disruption budget lets go at once ({allowed}): a spot interruption, maintenance event or node repair ignores the budget",
            w.replicas_max, blast.node_max, blast.node
        );
        let help = format!("add `max-per-node {}` to the workload (a hard host spread), or give the pods the topologySpreadConstraints `explain` lists under \"pods need\"", allowed.max(1));
        out.profile(profile, RULE.code, budget.span, message, help);
    }
}
