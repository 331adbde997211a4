//! The lint stage: the misconfiguration checks of `gpuplan lint`, also run by `compile` (findings are warnings).
//!
//! Every rule has a stable code ([`RuleCode`]: `GP001`…), points at the profile text that caused the finding, says
//! what to do, and is silenced by `allow "GPxxx"` at the top level of the profile or in the pool/tier (the union is
//! `PoolPlan::allow`; profile-wide rules — the AMI and the budget — only honour the profile's top-level `allow`).
//!
//! Rules about the *output* read each cluster's rendered objects as compile validated them, not the plan: a
//! user's `--templates` override that drops the GPU taint, hard-codes a limit or a weight is caught. Rules about
//! *intent* read the plan and the profile. Prices are always recomputed from the catalog, never taken from the
//! plan's own annotations, so drift between the two is visible (GP011, GP012).
//!
//! How it fits together:
//! * `rules`: one file per rule, each declaring its [`Rule`] (code, name, summary, [`Scope`] and check);
//!   [`RULES`] lists them in code order.
//! * [`cluster_findings`], the driver: builds a [`LintCtx`] for one cluster from compile's [`ClusterCtx`] and the
//!   cluster's rendered objects, then calls every rule's check on each NodePool ([`PoolCtx`]), on the cluster and
//!   on each profile; the checks record into [`Findings`], which applies `allow`.
//! * The whole-cluster simulations some rules report (GP016's tier gaps, GP018's replica fit) are computed by the
//!   check stage ([`crate::check`]), which returns typed values; the rules turn them into [`Finding`]s.

mod code;
mod context;
mod cost;
mod finding;
mod kueue;
mod rendered;
mod rule;
mod rules;

pub use code::RuleCode;
pub use context::{LintCtx, PoolCtx};
pub use finding::{by_pool, sort, Finding, Findings};
pub use rule::{Rule, Scope};
pub use rules::RULES;

use crate::check::ClusterCtx;
use crate::render::Manifest;
use crate::simulate::manifests::Manifests;

/// The rule for a code, if any.
pub fn rule(code: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code.as_str() == code)
}

/// The lint findings of one cluster, on its rendered objects (`manifests`, and their simulator form for GP016 and
/// GP018), unsorted: every NodePool's rules, then the cluster's, then each profile's.
pub fn cluster_findings(ctx: &ClusterCtx, manifests: &[Manifest], simulated: &Manifests) -> Vec<Finding> {
    let rendered = rendered::Rendered::new(manifests);
    let lint = LintCtx::new(ctx, &rendered, manifests, simulated);
    let mut out = Findings::new(ctx.sources, &ctx.cluster.name);
    for pool in &lint.pools {
        for rule in RULES {
            if let Scope::Pool(check) = rule.check {
                check(pool, &mut out);
            }
        }
    }
    for rule in RULES {
        if let Scope::Cluster(check) = rule.check {
            check(&lint, &mut out);
        }
    }
    for profile in &ctx.profiles {
        for rule in RULES {
            if let Scope::Profile(check) = rule.check {
                check(&lint, profile, &mut out);
            }
        }
    }
    out.into_vec()
}

#[cfg(test)]
mod tests {
    use super::{RuleCode, RULES};

    /// `RuleCode` and `RULES` list the same codes in the same order: each code has its rule, each rule its code.
    #[test]
    fn every_code_has_one_rule() {
        let codes: Vec<RuleCode> = RULES.iter().map(|r| r.code).collect();
        assert_eq!(codes, RuleCode::ALL);
    }
}
