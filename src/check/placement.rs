//! E0383: a pool that launches into a cluster placement group (`placement-group "<name>"`, its EC2NodeClass's
//! `placementGroupSelector`) must launch in one zone. A cluster placement group is "a logical grouping of instances
//! within a single Availability Zone" (AWS EC2 User Guide, "Placement strategies for your placement groups",
//! Cluster placement groups): once its first instance runs, launches in another zone fail, so a NodePool free to
//! pick among zones cannot do what the profile asks. EFA pools are pinned to one zone already (`solve::efa`).
//!
//! Karpenter v1.14.1 puts every instance of the class into the group (aws/karpenter-provider-aws
//! `pkg/providers/launchtemplate/launchtemplate.go`, the placement group's id in the launch template's `Placement`)
//! and keeps only the types that support the group's strategy (`pkg/providers/instancetype/compatibility`
//! `placementGroupCompatibility`; every GPU and EFA type of DescribeInstanceTypes but vt1.24xlarge supports
//! `cluster`), but adds no zone requirement.

use crate::diagnostic::{ErrorCode, Spanned};
use crate::render::Manifest;
use crate::solve::PoolPlan;

use super::{ClusterCtx, PoolDiagnostic};

/// E0383 per class with a placement group whose NodePools may launch in more than one zone: one diagnostic at the
/// `placement-group` line, naming every such NodePool and its zones. A warning when every one of them was adopted
/// (`PoolPlan::whole_cluster_severity`).
pub fn placement_group_zones(ctx: &ClusterCtx, manifests: &[Manifest]) -> Vec<PoolDiagnostic> {
    let mut out = Vec::new();
    for class in ctx.cluster.node_classes.iter().filter(|c| !c.auto_mode) {
        let Some(group) = &class.placement_group else { continue };
        let mut spread: Vec<(&PoolPlan, Vec<String>)> = Vec::new();
        for plan in ctx.cluster.pools.iter().filter(|p| p.node_class == class.name) {
            let Some(np) = manifests.iter().find(|m| m.kind() == "NodePool" && m.object["metadata"]["name"] == plan.name.as_str()) else { continue };
            let zones = zone_values(&np.object);
            if zones.len() != 1 {
                spread.push((plan, zones));
            }
        }
        let Some(line) = spread.iter().find_map(|(plan, _)| placement_group_line(ctx, plan)) else { continue };
        let pools: Vec<String> = spread
            .iter()
            .map(|(p, zones)| if zones.is_empty() { format!("{} (any zone)", p.name) } else { format!("{} ({})", p.name, zones.join(", ")) })
            .collect();
        let message = format!(
            "EC2NodeClass `{}` launches into placement group `{group}`, a cluster placement group in one Availability Zone, but NodePool{} {} may launch in several: launches outside the group's zone fail",
            class.name,
            if pools.len() == 1 { "" } else { "s" },
            pools.join(", ")
        );
        let d = ctx
            .sources
            .error(line.span, ErrorCode::E0383, message)
            .label("a cluster placement group")
            .help("pin the pool to the group's zone with `efa #true zone=\"<zone>\"` (an EFA pool launches in one zone; other pools launch in every zone of the cluster's `zones`), or leave out `placement-group`");
        let first = spread[0].0;
        let diagnostic = if spread.iter().all(|(p, _)| p.adopted) { first.whole_cluster_severity(d) } else { d };
        out.push(PoolDiagnostic { profile: first.profile.clone(), nodepool: first.name.clone(), span: line.span, diagnostic });
    }
    out
}

/// The values of a NodePool's `topology.kubernetes.io/zone In` requirement; empty when it has none (any zone).
fn zone_values(np: &serde_json::Value) -> Vec<String> {
    let requirements = np["spec"]["template"]["spec"]["requirements"].as_array().into_iter().flatten();
    requirements
        .filter(|r| r["key"] == "topology.kubernetes.io/zone" && r["operator"] == "In")
        .flat_map(|r| r["values"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)))
        .collect()
}

/// The `placement-group` line of a NodePool's tier.
fn placement_group_line<'c>(ctx: &ClusterCtx<'c>, plan: &PoolPlan) -> Option<&'c Spanned<String>> {
    let profile = ctx.profile(&plan.profile)?;
    profile.pools.iter().flat_map(|p| &p.tiers).find(|t| t.name.value == plan.name)?.settings.placement_group.as_ref()
}
