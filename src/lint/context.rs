//! What the rules read: [`LintCtx`] for a whole cluster, [`PoolCtx`] for one of its NodePools.

use crate::catalog::Catalog;
use crate::check::ClusterCtx;
use crate::diagnostic::Span;
use crate::profile::ops::Workload;
use crate::profile::{Pool, Profile, Tier};
use crate::render::Manifest;
use crate::simulate::manifests::Manifests;
use crate::solve::{ClusterPlan, PoolPlan};

use super::rendered::{NodePool, Rendered};

/// One cluster as its rules see it: compile's [`ClusterCtx`], the cluster's rendered objects (as compile validated
/// them, or as `lint --cluster-objects` and adopt give them) and their simulator form, and a view of each NodePool.
pub struct LintCtx<'a> {
    /// What compile hands the checks of this cluster: sources, plan, profiles (file order), catalog.
    pub ctx: &'a ClusterCtx<'a>,
    pub rendered: &'a Rendered<'a>,
    pub manifests: &'a [Manifest],
    /// The objects in the simulator's form (`check::cluster_manifests`), for GP016 and GP018.
    pub simulated: &'a Manifests,
    /// Each planned NodePool that was rendered, with its profile and tier, in plan order.
    pub pools: Vec<PoolCtx<'a>>,
}

impl<'a> LintCtx<'a> {
    pub fn new(ctx: &'a ClusterCtx<'a>, rendered: &'a Rendered<'a>, manifests: &'a [Manifest], simulated: &'a Manifests) -> LintCtx<'a> {
        let cluster = ctx.cluster;
        let mut pools = Vec::new();
        for plan in &cluster.pools {
            let Some(profile) = ctx.profile(&plan.profile) else { continue };
            let Some((pool, tier)) = find_tier(profile, &plan.name) else { continue };
            let Some(object) = rendered.get("NodePool", &plan.name) else { continue };
            pools.push(PoolCtx { cluster, plan, profile, pool, tier, np: NodePool(object), catalog: ctx.catalog, rendered });
        }
        LintCtx { ctx, rendered, manifests, simulated, pools }
    }

    pub fn cluster(&self) -> &'a ClusterPlan {
        self.ctx.cluster
    }

    /// The NodePools of one profile.
    pub fn pools_of(&self, profile: &Profile) -> Vec<&PoolCtx<'a>> {
        self.pools.iter().filter(|v| v.profile.name.value == profile.name.value).collect()
    }

    /// The profile and `workload` block of one of the cluster's workloads, by namespace and name.
    pub fn workload(&self, namespace: &str, name: &str) -> Option<(&'a Profile, &'a Workload)> {
        self.ctx.profiles.iter().find_map(|p| Some((*p, p.ops.workloads.iter().find(|w| w.namespace.value == namespace && w.name.value == name)?)))
    }
}

/// One rendered NodePool with what it came from: its plan, profile, pool and tier, and the catalog.
pub struct PoolCtx<'a> {
    pub cluster: &'a ClusterPlan,
    pub plan: &'a PoolPlan,
    pub profile: &'a Profile,
    pub pool: &'a Pool,
    pub tier: &'a Tier,
    pub np: NodePool<'a>,
    pub catalog: &'a Catalog,
    /// The cluster's other rendered objects (its EC2NodeClass, for GP010).
    pub rendered: &'a Rendered<'a>,
}

impl PoolCtx<'_> {
    /// The instance types the rendered NodePool may launch (the plan's when the requirement is missing).
    pub fn types(&self) -> Vec<String> {
        match self.np.instance_types() {
            Some(types) => types.into_iter().map(String::from).collect(),
            None => self.plan.candidates.iter().map(|c| c.name.clone()).collect(),
        }
    }

    /// The resource the NodePool's limit is on; None for a static NodePool, which carries no resource limit (the
    /// CRD allows only `nodes`: its size is its replicas).
    pub fn limited_resource(&self) -> Option<&str> {
        self.plan.static_pool.is_none().then(|| self.plan.resource())
    }

    /// Where the pool's limit comes from in the profile: max-accelerators or the budget.
    pub fn limit_span(&self) -> Span {
        let s = &self.tier.settings;
        match (&s.max_accelerators, &self.profile.budget_usd_per_hour) {
            (Some(m), _) if self.plan.limit_reason.starts_with("max-accelerators") => m.span,
            (_, Some(b)) => b.span,
            (Some(m), None) => m.span,
            (None, None) => self.tier.name.span,
        }
    }

    pub fn weight_span(&self) -> Span {
        self.tier.settings.weight.as_ref().map_or(self.tier.name.span, |w| w.span)
    }
}

/// The pool and tier of a profile that a NodePool (tier) of this name comes from.
pub fn find_tier<'p>(profile: &'p Profile, name: &str) -> Option<(&'p Pool, &'p Tier)> {
    profile.pools.iter().find_map(|p| p.tiers.iter().find(|t| t.name.value == name).map(|t| (p, t)))
}
