//! GP004: a NodePool accelerator limit below the accelerators of its largest instance type: that node never
//! launches.

use crate::catalog::{AcceleratorKind, InstanceType};
use crate::lint::code::RuleCode;
use crate::lint::context::PoolCtx;
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};

pub const RULE: Rule = Rule {
    code: RuleCode::Gp004,
    name: "limit-below-largest-node",
    summary: "NodePool accelerator limit below the accelerators of its largest instance type (that node never launches)",
    checks_output: true,
    check: Scope::Pool(check),
};

/// GP004: rendered limit below the largest node.
pub fn check(ctx: &PoolCtx, out: &mut Findings) {
    let Some(resource) = ctx.limited_resource() else { return };
    let Some(limit) = ctx.np.limit(resource) else { return };
    let largest = ctx
        .types()
        .into_iter()
        .filter_map(|name| ctx.catalog.get(&name).map(|t| (schedulable(t, ctx.plan.accelerator, ctx.plan.sharing.as_ref()), name)))
        .map(|((units, per), name)| (u64::from(units), u64::from(per), name))
        .max_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)));
    if let Some((accelerators, per, name)) = largest.filter(|(a, _, _)| *a > limit) {
        let sharing = match &ctx.plan.sharing {
            Some(crate::profile::Sharing::Mig { .. }) if per > 1 => format!(" ({} × {per} MIG devices per GPU)", accelerators / per),
            _ if per > 1 => format!(" ({} × time-slicing replicas {per})", accelerators / per),
            _ => String::new(),
        };
        out.pool(
            ctx,
            RULE.code,
            ctx.limit_span(),
            format!(
                "NodePool `{}` limits {resource} to {limit}, but its largest instance type {name} has {accelerators}{sharing}: that node can never launch",
                ctx.plan.name
            ),
            format!("raise the limit to at least {accelerators}, or cap node size with `{} {{ per-node max=… }}`", if ctx.plan.accelerator.is_accelerator() { "gpu" } else { "cpu" }),
        );
    }
}

/// Schedulable accelerators of one type in a pool, and per physical accelerator (as the solver counts them: at
/// least 1, × time-slicing replicas or the MIG devices of this type's GPU model).
fn schedulable(t: &InstanceType, kind: AcceleratorKind, sharing: Option<&crate::profile::Sharing>) -> (u32, u32) {
    let per_accelerator = crate::solve::units_per_gpu(sharing, t);
    (t.accelerators(kind).max(1) * per_accelerator, per_accelerator)
}
