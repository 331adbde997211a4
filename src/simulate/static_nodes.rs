//! Static NodePools (`spec.replicas`): their nodes exist before any pod asks, and pods land on them.
//!
//! The provisioner leaves static NodePools out of dynamic provisioning (kubernetes-sigs/karpenter v1.14.1
//! `pkg/controllers/provisioning/provisioner.go` `NewScheduler`: `if nodepoolutils.IsStatic(np) { return false }`),
//! so no pod ever makes Karpenter launch one of their nodes. Their nodes come from the static provisioning controller
//! (`pkg/controllers/static/provisioning/controller.go` `Reconcile`): `replicas` NodeClaims (at most `limits.nodes`),
//! each built from the NodePool's template alone (`scheduling.NewNodeClaimTemplate`; `ToNodeClaim` adds no
//! instance-type list for a static NodeClaim), with no pod requests, launched by the provider as any NodeClaim is
//! (aws/karpenter-provider-aws v1.14.1 `pkg/providers/instance/instance.go` `Create`): [`launch::launch`] over every
//! type the NodePool admits. Every replica launches the same choice: the cheapest available offering.
//!
//! The scheduler then sees them as existing nodes pinned to that type, zone and capacity type (scheduler.go `add`:
//! `addToExistingNode` before `addToInflightNode`; `sortExistingNodes`: by node name; existingnode.go `CanAdd`): a pod
//! goes to the first replica that takes it, before any in-flight or new NodeClaim, so replicas fill in launch order
//! (static NodePools in weight order, then replica number; real node names are EC2 DNS names, an order no offline tool
//! knows); a pod that fits none pends or goes to a dynamic NodePool. They count against no NodePool's limits.

use super::launch::{launch, Launch};
use super::instances::Offering;
use super::requirements::{Requirement, Requirements};
use super::scheduler::{min_values, Claim, Template};
use super::yaml::Resources;

/// Why a static NodePool takes no part in dynamic provisioning (the report's `dropped`).
pub fn reason(replicas: i64) -> String {
    format!("a static NodePool (replicas {replicas}): the provisioner plans no NodeClaims for it; its replicas are launched up front")
}

/// The replicas to launch: `spec.replicas`, capped by `limits.nodes` (controller.go `ReserveNodeCount`).
pub fn count(t: &Template) -> usize {
    let Some(replicas) = t.pool.static_replicas else { return 0 };
    let cap = t.pool.limits.get("nodes").map_or(i128::MAX, |n| *n / 1000);
    usize::try_from(i128::from(replicas).min(cap).max(0)).unwrap_or(0)
}

/// The launch of each of a static template's replicas: the provider's choice over every type it admits, with no
/// requests. Its candidates are what the report shows (Create was given them all), not the one type the replica runs.
/// None when nothing launches: no available offering, or (minValuesPolicy Strict) the 60 types sent to EC2 Fleet do
/// not meet a minValues requirement (cloudprovider `types.go` `Truncate` fails the Create; the controller retries,
/// and no replica exists).
pub fn replica_launch(template: &Template) -> Option<Launch> {
    let all: Vec<usize> = (0..template.types.len()).collect();
    let l = launch(&template.types, &all, &template.pool.requirements, &Resources::new())?;
    let sent = template.types.iter().filter(|t| l.candidates.contains(&t.name)).map(|t| &**t);
    min_values(&template.pool.requirements, sent).ok()?;
    Some(l)
}

/// A launched node's requirements: its NodePool's, its type's labels, and the type, zone and capacity type it runs
/// in (what the scheduler matches pods against on an existing node: existingnode.go `NewExistingNode`).
pub fn pinned_requirements(template: &Template, instance_type: usize, offering: &Offering) -> Requirements {
    let ty = &template.types[instance_type];
    let mut requirements = template.pool.requirements.merged(&ty.requirements);
    requirements.add("node.kubernetes.io/instance-type", Requirement::is_in([ty.name.clone()]));
    requirements.add("topology.kubernetes.io/zone", Requirement::is_in([offering.zone.clone()]));
    requirements.add("karpenter.sh/capacity-type", Requirement::is_in([offering.capacity_type.as_str().to_string()]));
    requirements
}

/// The static nodes of every static template, as claims with no pods, pinned to the launched type and offering.
pub fn claims(templates: &[Template]) -> Vec<Claim> {
    let mut out = Vec::new();
    for (t, template) in templates.iter().enumerate() {
        let n = count(template);
        if n == 0 {
            continue;
        }
        let Some(l) = replica_launch(template) else { continue };
        let requirements = pinned_requirements(template, l.instance_type, &l.offering);
        for k in 1..=n {
            out.push(Claim {
                template: t,
                pods: Vec::new(),
                requests: Resources::new(),
                requirements: requirements.clone(),
                types: vec![l.instance_type],
                host_ports: Vec::new(),
                hostname: format!("{}-static-{k:04}", template.pool.name),
                fixed: true,
            });
        }
    }
    out
}
