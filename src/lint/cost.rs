//! What a rendered NodePool can cost (GP011, GP012). Prices are always recomputed from the catalog, never taken
//! from the plan's own annotations, so drift between the two is visible.

use crate::catalog::cost::{self, Limits, NodeShape};

use super::context::PoolCtx;

/// What a rendered NodePool can cost, recomputed from the catalog with the same cost model as the solver
/// (`cost`): at-limit and worst-case $/h at its rendered limits, and a few words on how.
pub struct RenderedCost {
    pub at_limit: f64,
    pub worst_case: f64,
    pub how: String,
}

pub fn rendered_cost(ctx: &PoolCtx) -> Option<RenderedCost> {
    let capacity = ctx.np.capacity_types();
    let capacity = if capacity.is_empty() { ctx.plan.capacity_types.clone() } else { capacity };
    let zones = ctx.np.zones();
    let kind = ctx.plan.accelerator;
    let shapes: Vec<NodeShape> = ctx
        .types()
        .iter()
        .filter_map(|name| {
            let t = ctx.catalog.get(name)?;
            let q = cost::quote(t, ctx.catalog, &capacity, &zones, ctx.plan.spot_ceiling)?;
            let mut shape = NodeShape::of(t, kind, crate::solve::units_per_gpu(ctx.plan.sharing.as_ref(), t), &q);
            // A capacity overlay on the accelerator sets a candidate's units (solve's `overlaid_units`): the plan knows them.
            if let Some(c) = ctx.plan.candidates.iter().find(|c| c.name == *name) {
                shape.units = c.units;
            }
            Some(shape)
        })
        .collect();
    let accelerators = u32::try_from(ctx.np.limit(ctx.plan.resource())?).ok()?;
    let cpu = ctx.np.limit("cpu").and_then(|c| u32::try_from(c).ok());
    let memory_mib = ctx.np.limit_value("memory").and_then(|m| m.as_str()).and_then(crate::simulate::yaml::milli).map(|m| u64::try_from((m / 1000 / (1024 * 1024)).max(0)).unwrap_or(u64::MAX));
    let limits = Limits { accelerators, cpu, memory_mib };
    // Every node's volumes, as the node class the NodePool references renders them.
    let class = &ctx.np.spec()["template"]["spec"]["nodeClassRef"];
    let class = class["name"].as_str().and_then(|n| ctx.rendered.get(class["kind"].as_str().unwrap_or("EC2NodeClass"), n));
    let storage = class.map_or(0.0, |c| crate::catalog::ebs::node_usd_per_hour(&crate::catalog::ebs::rendered_volumes(c), &crate::catalog::ebs::catalog_prices(ctx.catalog).0));
    let shapes: Vec<NodeShape> = shapes.into_iter().map(|s| s.with_node_cost(storage)).collect();
    (!shapes.is_empty()).then(|| RenderedCost {
        at_limit: cost::at_limit(&shapes, limits),
        worst_case: cost::worst_case(&shapes, limits),
        how: format!(
            "{accelerators} {}{} on {} type(s)",
            ctx.plan.resource(),
            cpu.map(|c| format!(", cpu {c}")).unwrap_or_default(),
            shapes.len()
        ),
    })
}
