//! GP024: a workload scaled by a KEDA ScaledObject and by an HPA (or a second ScaledObject): KEDA's webhook refuses the
//! ScaledObject, and two HPAs fight over the replica count.

use crate::lint::code::RuleCode;
use crate::lint::context::LintCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::ops::keda;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp024,
    name: "scaledobject-and-hpa-on-one-target",
    summary: "a workload scaled by a KEDA ScaledObject and by an HPA (or a second ScaledObject): KEDA's webhook refuses the ScaledObject, and two HPAs fight over the replica count",
    checks_output: true,
    check: Scope::Cluster(check),
};

/// GP024: one workload scaled by a ScaledObject and by an HPA or another ScaledObject, among the cluster's objects
/// (gpuplan writes one or the other: this fires on objects edited or read from the cluster). KEDA's webhook refuses
/// such a ScaledObject (kedacore/keda v2.20.2 `apis/keda/v1alpha1/scaledobject_webhook.go` `verifyHpas`,
/// `verifyScaledObjects`), and if it got in anyway, KEDA's HPA and the other one would both set the replicas.
pub fn check(lint: &LintCtx, out: &mut Findings) {
    for (so, other) in keda::clashes(lint.manifests) {
        let Some((namespace, _, kind, name)) = keda::scale_target(&so.object) else { continue };
        let Some((profile, spec)) = lint.workload(&namespace, &name) else { continue };
        let other_name = other.object["metadata"]["name"].as_str().unwrap_or_default();
        let message = format!(
            "{kind} {namespace}/{name} is scaled by ScaledObject `{}` and by {} `{other_name}`: KEDA's admission webhook refuses the ScaledObject, and two HPAs would fight over its replicas",
            so.object["metadata"]["name"].as_str().unwrap_or_default(),
            other.kind()
        );
        let help = format!("delete {} `{other_name}`: KEDA creates and owns the HPA of its ScaledObject (`keda-hpa-<name>`); or drop `scale-to-zero` and `trigger` from the workload to keep an HPA only", other.kind());
        out.profile(profile, RULE.code, spec.name.span, message, help);
    }
}
