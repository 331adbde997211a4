//! GP051: an EFA pool whose nodes launch into no placement group.
//!
//! EFA gives multi-node jobs (NCCL all-reduce) OS-bypass networking, but within one zone nodes may still sit far
//! apart: a cluster placement group packs them "close together inside an Availability Zone … the low-latency
//! network performance necessary for tightly-coupled node-to-node communication that is typical of high-performance
//! computing (HPC) applications" (AWS EC2 User Guide, "Placement strategies for your placement groups"; the EFA
//! guide's "Get started with EFA and NCCL" launches into one). The v1.14.1 EC2NodeClass selects one with
//! `placementGroupSelector` (aws/karpenter-provider-aws `pkg/apis/v1/ec2nodeclass.go`), which gpuplan sets from
//! `placement-group "<name>"`. A risk some accept (jobs of one node, or a group that would run out of capacity), so a
//! warning. Reserved tiers are left out: where a reservation's instances run was decided when it was made.

use std::collections::BTreeMap;

use crate::catalog::CapacityType;
use crate::lint::code::RuleCode;
use crate::lint::context::{LintCtx, PoolCtx};
use crate::lint::finding::Findings;
use crate::lint::rule::{Rule, Scope};
use crate::profile::Profile;

pub const RULE: Rule = Rule {
    code: RuleCode::Gp051,
    name: "efa-without-placement-group",
    summary: "an EFA pool's nodes launch into no cluster placement group (`placement-group`): a multi-node job's nodes may sit far apart in the zone",
    checks_output: true,
    check: Scope::Profile(check),
};

/// GP051 on one profile: one finding per `pool` block with EFA NodePools (not reserved) whose rendered EC2NodeClass
/// selects no placement group, at its `efa` line.
pub fn check(lint: &LintCtx, profile: &Profile, out: &mut Findings) {
    if lint.cluster().auto_mode {
        return;
    }
    let mut by_pool: BTreeMap<&str, Vec<&PoolCtx>> = BTreeMap::new();
    for p in lint.pools_of(profile) {
        let grouped = lint.rendered.get("EC2NodeClass", &p.plan.node_class).is_some_and(|c| !c["spec"]["placementGroupSelector"].is_null());
        if p.plan.efa && !grouped && !p.np.capacity_types().contains(&CapacityType::Reserved) && !p.plan.allow.contains(RULE.code.as_str()) {
            by_pool.entry(p.pool.name.value.as_str()).or_default().push(p);
        }
    }
    for (pool, nodepools) in by_pool {
        let first = nodepools[0];
        let span = first.tier.settings.efa.as_ref().map_or(first.tier.name.span, |e| e.span);
        let zone = first.plan.zones.first().map_or("its zone", String::as_str);
        let names: Vec<&str> = nodepools.iter().map(|p| p.plan.name.as_str()).collect();
        let message = format!(
            "EFA pool `{pool}` (NodePool{} {}) launches into no placement group: a multi-node job's nodes may sit far apart in {zone}, with more latency between them than EFA is for",
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        );
        let help = format!("create a cluster placement group in {zone} and add placement-group \"<its name>\" to the pool (gpuplan sets the EC2NodeClass's placementGroupSelector)");
        out.profile(profile, RULE.code, span, message, help);
    }
}
