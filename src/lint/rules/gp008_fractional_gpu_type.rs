//! GP008: a fractional or zero-GPU instance type admitted (g6f, gr6f): EC2 reports a fraction of a GPU, and Karpenter
//! counts no whole `nvidia.com/gpu` on it.

use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp008,
    name: "fractional-gpu-type",
    summary: "fractional or zero-GPU instance type admitted (g6f, gr6f: EC2 reports a fraction of a GPU, Karpenter counts no nvidia.com/gpu)",
    checks_output: true,
    check: Scope::Pool(check),
};

/// GP008: fractional or zero-GPU types in the rendered NodePool.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    // A CPU pool's pods request no GPU: a fractional-GPU type there is a CPU node like any other (a mixed pool adopted
    // with `admit "as-required"` keeps its original's).
    if ctx.plan.accelerator == crate::catalog::AcceleratorKind::Cpu {
        return;
    }
    for name in ctx.types() {
        let Some(t) = ctx.catalog.get(&name).filter(|t| t.has_partial_gpus()) else { continue };
        let gpu = t.gpus.iter().find(|g| g.count == 0 || g.partition_size < 1.0).expect("has_partial_gpus");
        let named = ctx.tier.settings.types.iter().find(|n| n.value == name);
        let span = named.map_or(ctx.tier.settings.accelerator.span, |n| n.span);
        out.pool(
            ctx,
            RULE.code,
            span,
            format!(
                "NodePool `{}` admits {name}, which EC2 reports with a fraction of a GPU ({} of one {}, {} MiB){}: Karpenter derives no whole `{}` from it, so it never launches it for pods that request one",
                ctx.plan.name,
                fraction(gpu.partition_size),
                gpu.name,
                gpu.memory_mib,
                if named.is_some() { ", named in `types`" } else { "" },
                ctx.plan.resource()
            ),
            if named.is_some() {
                "keep it only for workloads built for fractional GPUs; otherwise remove it from `types`".into()
            } else {
                "remove it (gpuplan only admits fractional-GPU types named in `types`; check the NodePool template override)".into()
            },
        );
    }
}

fn fraction(partition: f64) -> String {
    if partition > 0.0 && partition < 1.0 {
        format!("1/{}", (1.0 / partition).round())
    } else {
        format!("{partition}")
    }
}
