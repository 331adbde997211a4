//! GP025: a workload that scales to zero with a PodDisruptionBudget minAvailable ≥ 1: at one replica it allows no
//! eviction, so every node drain blocks.

use serde_json::Value;

use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::ops::keda;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp025,
    name: "scale-to-zero-with-min-available",
    summary: "a workload that scales to zero with a PodDisruptionBudget minAvailable ≥ 1: at one replica it allows no eviction, so every node drain blocks",
    checks_output: true,
    check: Scope::Cluster(check),
};

/// GP025: a workload whose ScaledObject may take it to 0 replicas, selected by a PodDisruptionBudget with a
/// minAvailable of one pod or more (or any percentage: rounded up). KEDA wakes it to one replica; at one replica
/// that budget allows no eviction, and Karpenter's drains wait on it (see `ops::workload::default_pdb`).
pub fn check(lint: &LintCtx, out: &mut Findings) {
    let manifests = lint.manifests;
    for w in &lint.cluster().ops.workloads {
        let Some(so) = manifests.iter().find(|m| m.kind() == keda::KIND && keda::scale_target(&m.object).is_some_and(|(ns, _, kind, name)| ns == w.namespace && kind == w.kind && name == w.name)) else { continue };
        if so.object["spec"]["minReplicaCount"].as_u64().unwrap_or(0) != 0 {
            continue;
        }
        let selects = |pdb: &Value| pdb["spec"]["selector"]["matchLabels"].as_object().is_some_and(|l| l.iter().all(|(k, v)| w.selector.get(k).is_some_and(|x| v == x)));
        let blocking = |pdb: &Value| match &pdb["spec"]["minAvailable"] {
            Value::Number(n) => n.as_u64().is_some_and(|n| n >= 1),
            Value::String(s) => s.strip_suffix('%').and_then(|p| p.parse::<u32>().ok()).map_or_else(|| s.parse::<u32>().is_ok_and(|n| n >= 1), |p| p > 0),
            _ => false,
        };
        let pdbs = manifests.iter().map(|m| &m.object).filter(|o| o["kind"] == "PodDisruptionBudget" && o["metadata"]["namespace"] == w.namespace.as_str());
        for pdb in pdbs.filter(|o| selects(o) && blocking(o)) {
            let Some((profile, spec)) = lint.workload(&w.namespace, &w.name) else { continue };
            let span = spec.disruption_budget.as_ref().map_or(spec.name.span, |b| b.span);
            let message = format!(
                "workload `{}/{}` scales to zero, and PodDisruptionBudget `{}` keeps minAvailable {} of its pods: at one replica it allows no eviction, so every node drain blocks",
                w.namespace,
                w.name,
                pdb["metadata"]["name"].as_str().unwrap_or_default(),
                pdb["spec"]["minAvailable"]
            );
            out.profile(profile, RULE.code, span, message, "give the budget maxUnavailable: 1 (what gpuplan writes): it keeps all but one pod up when there are several and lets the last one move".into());
        }
    }
}
