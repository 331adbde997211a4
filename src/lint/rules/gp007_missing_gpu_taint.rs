//! GP007: a GPU NodePool without the accelerator NoSchedule taint: any pod can land on (and keep alive) its nodes.

use crate::catalog::AcceleratorKind;
use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp007,
    name: "missing-gpu-taint",
    summary: "GPU NodePool without the accelerator NoSchedule taint (any pod can land on GPU nodes)",
    checks_output: true,
    check: Scope::Pool(check),
};

/// GP007: GPU NodePool without the accelerator NoSchedule taint.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    // GP001 and GP007 are about accelerator nodes: a CPU pool's nodes are meant for ordinary pods (no
    // accelerator taint) and run work that consolidation may move like any other.
    if !ctx.plan.accelerator.is_accelerator() {
        return;
    }
    let resource = ctx.plan.resource();
    let tainted = ctx.np.taints().iter().any(|(key, effect)| {
        [AcceleratorKind::Nvidia, AcceleratorKind::Amd, AcceleratorKind::Neuron].iter().any(|k| k.resource() == *key)
            && matches!(*effect, "NoSchedule" | "NoExecute")
    });
    let switched_off = !ctx.tier.settings.accelerator_taint.value;
    if !tainted && switched_off {
        out.pool(
            ctx,
            RULE.code,
            ctx.tier.settings.accelerator_taint.span,
            format!("NodePool `{}` has no `{resource}` NoSchedule taint (`accelerator-taint #false`): pods that need no accelerator can land on (and keep alive) its nodes", ctx.plan.name),
            format!("remove `accelerator-taint #false` once the pods meant for these nodes tolerate `{resource}:NoSchedule` (EKS adds the toleration to pods that request {resource}); until then `allow \"GP007\"` says the choice is deliberate"),
        );
    } else if !tainted {
        out.pool(
            ctx,
            RULE.code,
            ctx.tier.settings.accelerator.span,
            format!("NodePool `{}` has no `{resource}` NoSchedule taint: pods that need no accelerator can land on (and keep alive) its nodes", ctx.plan.name),
            format!("keep the `{resource}:NoSchedule` taint gpuplan adds (check the NodePool template override); accelerator pods tolerate it automatically on EKS"),
        );
    }
}
